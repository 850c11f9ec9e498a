"""The bug zoo (`partsafe zoo`): every historical flaw of the catalogue found again, and the fixed
design clean at the same scopes.

Each zoo entry of a model (`ModelEntry.zoo`) is a variant that must break its spec at a scope;
the search goes on past other specs' violations until that spec breaks, since a flaw may break
another first. At each scope the entries use, the fixed design must be clean: complete and with
no violation (a reduced scope need not reach every coverage goal). Each flaw of the planner
(hz37-naive-order) must break its spec (PLAN-NO-DECREASE) on a pair where the faithful planner
keeps every spec (000 §3), and the faithful planner must break nothing beyond its known findings
(nothing at all when `strict`). The fixed design's own findings at a zoo scope
(`FIXED_FINDINGS`) are reported the same way.

`run_zoo` returns the `partsafe zoo --json` document; every entry carries the `partsafe check`
command that reproduces it (`check_command`).
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any

from partsafe.checker.engine.bfs import Bounds, Result
from partsafe.checker.engine.model import Model
from partsafe.checker.planner.check import (
    DEFAULT_REPLICAS,
    KNOWN_FINDINGS,
    PlannerCheck,
    check_planner,
    show,
    witness,
)
from partsafe.checker.planner.view import planner_suite
from partsafe.checker.protocols import catalog
from partsafe.checker.report import junit
from partsafe.checker.run import Watcher, run_check
from partsafe.refimpl import profiles
from partsafe.refimpl.planner import VARIANT_TABLE as PLANNER_VARIANTS

#: what the fixed design breaks at a zoo scope, a finding of docs/findings.md each: model -> spec
#: -> finding id. A fixed run whose only violations are these is reported with them and does
#: not fail the zoo (`strict` fails on them, as on the planner's). IGN-18: the design's reentry
#: keeps a restarted member of a rebalance's new configuration stopped until a reduction that
#: waits for that rebalance (`--baseline-changes 1 --max-term 1`, 25 steps).
FIXED_FINDINGS: dict[str, dict[str, str]] = {"ignite-rebalance": {"IGN-PROGRESS": "IGN-18"}}


@dataclass(frozen=True)
class Zoo:
    """What the zoo found: `doc` is the `partsafe zoo --json` document (its ``result`` the
    verdict); the searches and the planner's check are kept for the JUnit report."""

    doc: dict[str, Any]
    runs: list[tuple[Model[Any], Result]]
    planner: PlannerCheck
    strict: bool

    @property
    def verdict(self) -> str:
        return str(self.doc["result"])

    def junit(self) -> str:
        """`partsafe zoo --junit`: a suite per search (without coverage goals, which a reduced
        scope need not reach), and the planner's."""
        return junit(self.runs, goals=False, extra=[planner_suite(self.planner, self.strict)])


def run_zoo(strict: bool = False, watcher: Watcher | None = None) -> Zoo:
    """Run every zoo entry of the catalogue and the fixed design at each scope they use, then
    the planner's entry. Raises what `run_check` raises."""
    started = time.perf_counter()
    variants = []
    fixed = []
    runs = []
    known_fixed: dict[str, list[str]] = {}
    ok = True
    for entry in catalog.MODELS.values():
        scopes_done: set[tuple[tuple[str, int], ...]] = set()
        for variant, (expected, overrides) in entry.zoo.items():
            run = run_check(entry, variant, overrides, bounds=Bounds(), symmetry=True,
                            keep_going=True, until=expected, watcher=watcher)
            r, params = run.result, run.params
            runs.append((run.model, r))
            hit = next((v for v in r.violations if v.spec == expected), None)
            first = r.violations[0] if r.violations else None
            found = hit is not None
            ok &= found
            variants.append({"model": entry.name, "variant": variant, "expected_spec": expected,
                             "found": found, "spec": expected if hit else (
                                 first.spec if first else None),
                             "depth": (hit or first).trace.depth if (hit or first) else None,
                             "first_spec": first.spec if first else None,
                             "seconds": round(r.seconds, 3), "scope": params,
                             "command": check_command(entry.name, variant, overrides, expected)})
            key = tuple(sorted(params.items()))
            if key in scopes_done:
                continue
            scopes_done.add(key)
            findings = {} if strict else FIXED_FINDINGS.get(entry.name, {})
            clean_run = run_check(entry, "fixed", overrides, bounds=Bounds(), symmetry=True,
                                  keep_going=bool(findings), watcher=watcher)
            r2 = clean_run.result
            runs.append((clean_run.model, r2))
            clean, known = judge_fixed(r2, findings)
            ok &= clean
            record = {"model": entry.name, "result": "ok" if clean else r2.result,
                      "scope": params, "distinct_states": r2.distinct_states,
                      "seconds": round(r2.seconds, 3),
                      "goals_reached": [g.name for g in r2.goals if g.reached],
                      "command": check_command(entry.name, "fixed", overrides)}
            if known:
                record["known_findings"] = known
                listed = known_fixed.setdefault(entry.name, [])
                listed += [spec for spec in known if spec not in listed]
            fixed.append(record)
    planner_variants, planner_fixed, planner_ok, planner = planner_zoo(strict)
    variants.extend(planner_variants)
    fixed.append(planner_fixed)
    ok &= planner_ok
    verdict = "ok" if ok else "violation"
    known = [] if strict else planner.known
    doc = {"result": verdict, "strict": strict,
           "known_findings": {"planner": known, **known_fixed},
           "variants": variants, "fixed": fixed,
           "seconds": round(time.perf_counter() - started, 3)}
    return Zoo(doc, runs, planner, strict)


def judge_fixed(result: Result, findings: dict[str, str]) -> tuple[bool, dict[str, str]]:
    """Whether a fixed run at a zoo scope is clean: complete, and breaking no spec but the
    known `findings` (spec -> finding id); and the known findings it broke."""
    broken = {v.spec for v in result.violations}
    known = {spec: findings[spec] for spec in sorted(broken & set(findings))}
    return broken <= set(findings) and result.incomplete_reason is None, known


def planner_zoo(strict: bool) -> tuple[list[dict[str, Any]], dict[str, Any], bool,
                                       PlannerCheck]:
    """The planner's zoo entries and its fixed run (as `run_zoo` records them), whether all are
    as they must be, and the faithful planner's check. Each planner variant that declares a spec
    it breaks (refimpl/planner.py's `VARIANT_TABLE`: hz37-naive-order, PLAN-NO-DECREASE) must
    break it on a pair where the faithful planner keeps every spec (`witness`)."""
    scope = {"replicas": DEFAULT_REPLICAS}
    entries = []
    found_all = True
    for flaw in PLANNER_VARIANTS.values():
        if flaw.breaks is None:
            continue
        run = check_planner(DEFAULT_REPLICAS, flaw.name)
        expected = flaw.breaks
        pair = witness(expected, flaw.name, DEFAULT_REPLICAS)
        found = pair is not None
        found_all &= found
        entries.append({
            "model": "planner", "variant": flaw.name, "expected_spec": expected,
            "found": found, "spec": expected if found else None,
            "depth": pair[2].step if pair else None,
            "seconds": round(run.seconds, 3), "scope": scope,
            "command": check_command("planner", flaw.name, scope),
            "counterexample": (f"{show(pair[0])} -> {show(pair[1])}: {pair[2].message}"
                               if pair else None)})
    fixed = check_planner(DEFAULT_REPLICAS)
    clean = fixed.verdict(strict) == "ok"
    record = {"model": "planner", "result": "ok" if clean else "violation",
              "scope": scope, "distinct_states": fixed.pairs_checked,
              "seconds": round(fixed.seconds, 3),
              "known_findings": {} if strict else {spec: KNOWN_FINDINGS[spec]
                                                   for spec in fixed.known},
              "command": check_command("planner", "fixed", scope)}
    return entries, record, found_all and clean, fixed


def check_command(model: str, variant: str = "fixed", overrides: dict[str, int] | None = None,
                  until: str | None = None, profile: str = "fixed") -> str:
    """The `partsafe check` command line that runs `model` under `profile` at the default scope
    changed by `overrides` (scope parameters by their option names), searching on until `until`
    breaks."""
    words = ["partsafe", "check", model]
    if profile != "fixed":
        words += ["--profile", profile]
    if variant != "fixed":
        words += ["--variant", variant]
    for key, value in (overrides or {}).items():
        words += [f"--{key}", str(value)]
    if until:
        words += ["--until", until]
    return " ".join(words)


def run_profile_zoo(profile: str, bounds: Bounds | None = None, workers: int = 1,
                    watcher: Watcher | None = None) -> dict[str, Any]:
    """`partsafe zoo --profile P`: what release line `profile` breaks (refimpl/profiles.py).

    Each model the profile covers is searched at its default scope under the profile, going on
    past each spec's first violation (`--keep-going`), so the search lists every spec it breaks
    with the depth of its shortest counterexample. The profile declares the findings its
    searches must report (`Profile.findings`, ids of docs/findings.md); a model's search ends
    once every finding declared for it is found (as `--until` does for one spec: the levels up
    to that depth are judged for every spec, the levels beyond it are not searched), and runs to
    its end when none is declared. The verdict is ``ok`` when every search breaks exactly the
    declared specs (and, with none declared, is complete), ``violation`` when a search breaks
    another spec or misses a declared one, ``incomplete`` when a bound ended a search before
    that could be told. The planner has no release rule and is left to `partsafe zoo`.
    Raises what `run_check` raises, and ValueError for an unknown profile.
    """
    chosen = profiles.get(profile)
    started = time.perf_counter()
    models = []
    verdicts = set()
    for entry in catalog.MODELS.values():
        if not chosen.covers(entry.name):
            continue
        declared = dict(chosen.findings.get(entry.name, {}))
        run = run_check(entry, "fixed", {}, bounds=bounds or Bounds(), symmetry=True,
                        keep_going=True, until=frozenset(declared) or None, workers=workers,
                        watcher=watcher, profile=profile)
        r = run.result
        broken = [{"spec": v.spec, "depth": v.trace.depth, "message": v.message,
                   "finding": declared.get(v.spec), "declared": v.spec in declared}
                  for v in r.violations]
        complete = r.incomplete_reason is None
        missing = [{"spec": spec, "finding": finding} for spec, finding in declared.items()
                   if spec not in {b["spec"] for b in broken} and complete]
        gaps = [g.name for g in r.goals if not g.reached] if r.result == "gap" else []
        if any(not b["declared"] for b in broken) or missing or gaps:
            verdict = "violation"
        elif not complete:
            verdict = "incomplete"
        else:
            verdict = "ok"
        verdicts.add(verdict)
        models.append({"model": entry.name, "result": verdict, "search": r.result,
                       "scope": run.params, "distinct_states": r.distinct_states,
                       "transitions": r.transitions, "depth": r.depth,
                       "seconds": round(r.seconds, 3), "broken": broken, "missing": missing,
                       "goals_not_reached": gaps, "incomplete_reason": r.incomplete_reason,
                       "searched_until": sorted(declared) if declared else None,
                       "command": check_command(entry.name, profile=profile) + " --keep-going"})
    verdict = ("violation" if "violation" in verdicts else
               "incomplete" if "incomplete" in verdicts else "ok")
    return {"profile": profile, "title": chosen.title, "result": verdict, "models": models,
            "seconds": round(time.perf_counter() - started, 3)}

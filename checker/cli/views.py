"""The terminal views of the commands whose reports have no home of their own: a search's live
progress, `check`'s report and verdict line, the bug zoo's tables (and a release profile's), a
checkpoint's header, the spec catalogue, the release profiles.

The other views live beside what they show: a search's result and trace in checker/report.py,
the planner's in checker/planner/view.py, the views of logs (validation, parsing, simulation,
their progress bars) in checker/validation/view.py.
"""

from __future__ import annotations

import sys
import textwrap
from collections import Counter
from pathlib import Path
from typing import TYPE_CHECKING, Any, NoReturn

import click
from rich import box
from rich.console import Console
from rich.table import Table
from rich.text import Text

from partsafe.checker.engine.bfs import Progress, Result
from partsafe.checker.engine.checkpoint import describe
from partsafe.checker.planner.view import render_planner_check
from partsafe.checker.protocols import catalog
from partsafe.checker.report import print_verdict, render_result
from partsafe.checker.run import CheckReport
from partsafe.checker.zoo import check_command
from partsafe.refimpl import profiles
from partsafe.refimpl.profiles import Rule
from partsafe.refimpl.variants import Variant
from partsafe.specs.forms import FORMS
from partsafe.specs.registry import Spec

if TYPE_CHECKING:  # the console imports rich.status when a live display starts
    from rich.status import Status


def stdout() -> Console:
    """The console of the reports: no highlighting, long lines kept whole."""
    return Console(highlight=False, soft_wrap=False)


def stderr() -> Console:
    """The console of progress and notes, beside the report."""
    return Console(stderr=True, highlight=False)


# --- check ------------------------------------------------------------------------------------


class ProgressView:
    """A one-line live display of a running search on stderr; on a stderr that is not a
    terminal (a log file), one plain line every `LOG_EVERY` seconds instead. A `run.Watch`,
    and a `run.Watcher` as a class: ``ProgressView(label)`` is the context a search runs in."""

    LOG_EVERY = 30.0

    def __init__(self, label: str) -> None:
        self.label = label
        self.console = stderr()
        self.status: Status | None = None
        self.next_line = 0.0

    def __enter__(self) -> ProgressView:
        if self.console.is_terminal:
            self.status = self.console.status(f"{self.label}: starting")
            self.status.__enter__()
        return self

    def __call__(self, p: Progress) -> None:
        text = (f"{self.label}: {p.distinct_states:,} states, {p.states_per_second:,.0f}/s, "
                f"depth {p.depth}, queue {p.queue:,}, {p.seconds:.0f} s")
        if self.status is not None:
            self.status.update(text)
        elif p.seconds >= self.next_line:
            self.next_line = p.seconds + self.LOG_EVERY
            self.console.print(text, soft_wrap=True)

    def saved(self, progress: dict[str, Any]) -> None:
        """A checkpoint was written: one line, above the live display."""
        self.console.print(f"{self.label}: checkpoint at depth {progress['depth']}, "
                           f"{progress['states']:,} states, {progress['seconds']:.0f} s",
                           soft_wrap=True)

    def __exit__(self, *exc: object) -> None:
        if self.status is not None:
            self.status.__exit__(None, None, None)


def render_check(console: Console, report: CheckReport, seconds: float,
                 verdict: bool = True) -> None:
    """`partsafe check`'s report: each search's result, the planner's check, and the verdict
    line (unless a baseline's gate prints its own)."""
    for run in report.runs:
        render_result(console, run.model, run.result)
    if report.planner is not None:
        render_planner_check(console, report.planner, report.strict)
    if verdict:
        print_verdict(console, check_what(report), report.verdict, seconds,
                      verdict_detail([run.result for run in report.runs], report.known))


def render_gate(console: Console, file: str, comparison: Any, strict: bool) -> None:
    """A baseline's comparison (`partsafe.checker.baseline.Comparison`): the findings the
    baseline does not hold, and the recorded ones no longer seen."""
    console.print(Text(f"baseline {file}: {len(comparison.known)} finding(s) recorded and seen "
                       f"again, {len(comparison.new)} new, {len(comparison.gone)} no longer "
                       "seen"), soft_wrap=True)
    for finding in comparison.new:
        mark = "new, failing" if finding.fails(strict) else "new"
        console.print(Text(f"  {mark}: {finding.line()}"), soft_wrap=True)
    for finding in comparison.gone:
        console.print(Text(f"  no longer seen (drop it with `partsafe baseline update`): "
                           f"{finding.line()}"), soft_wrap=True)


def read_baseline(file: str) -> Any:
    """The findings the baseline `file` records (`baseline.read`), read before a command's work
    begins; exit 2 naming the file when it cannot be read."""
    from partsafe.checker import baseline
    from partsafe.checker.cli.options import fail

    try:
        return baseline.read(file)
    except baseline.BaselineError as exc:
        fail(str(exc))


def gate(file: str, doc: dict[str, Any], comparison: Any, verdict: str, strict: bool,
         as_json: bool, body: Any, what: str, seconds: float) -> NoReturn:
    """`--baseline FILE` on check and validate: the report (`doc` and its own `verdict`) judged
    against the baseline (`comparison`, `baseline.compare`'s). `--json` prints the document
    with a ``baseline`` object; else `body(console)` prints the report without its verdict
    line, then the comparison and the gate's verdict line. Exits with the gate's verdict."""
    from partsafe.checker.report import VERDICT_EXIT, dumps

    judged, detail = gate_verdict(verdict, comparison, strict)
    if as_json:
        click.echo(dumps({**doc, "baseline": {"file": file, "verdict": judged,
                                              **comparison.as_dict(strict)}}))
    else:
        console = stdout()
        body(console)
        render_gate(console, file, comparison, strict)
        print_verdict(console, f"{what}, against the baseline {file}", judged, seconds, detail)
    sys.exit(VERDICT_EXIT[judged])


def gate_verdict(verdict: str, comparison: Any, strict: bool) -> tuple[str, str]:
    """The verdict of a run judged against a baseline, and its detail: incomplete stays
    incomplete (nothing was judged); else a violation exactly when a failing finding is new."""
    if verdict == "incomplete":
        return verdict, "incomplete: nothing judged against the baseline"
    failing = comparison.failing(strict)
    if failing:
        specs = ", ".join(dict.fromkeys(f.spec for f in failing))
        return "violation", f"{len(failing)} new finding(s) not in the baseline: {specs}"
    detail = f"no new finding; {len(comparison.known)} recorded finding(s) seen again"
    if comparison.gone:
        detail += f", {len(comparison.gone)} no longer seen"
    return "ok", detail


def check_what(report: CheckReport) -> str:
    """What a check's verdict line names: the model, its variant and its scope."""
    if report.every_model:
        return f"check of {len(report.runs)} models and the planner at their default scopes"
    run = report.runs[0]
    label = (run.result.variant if run.result.profile == "fixed"
             else f"{run.result.variant}, profile {run.result.profile}")
    return f"check {run.result.model} ({label}) at {scope_words(run.params)}"


def check_verdict_line(report: CheckReport, seconds: float) -> str:
    """The check's verdict line as text (the terminal report's last line)."""
    from partsafe.checker.report import verdict_line

    return verdict_line(check_what(report), report.verdict, seconds,
                        verdict_detail([run.result for run in report.runs], report.known)).plain


def scope_words(scope: dict[str, Any]) -> str:
    return " ".join(f"{k}={v}" for k, v in scope.items())


def verdict_detail(results: list[Result], known: list[str]) -> str:
    """What the verdict line says beside the verdict: the specs broken, the goals missed, the
    bound reached, the known findings."""
    parts = []
    broken = list(dict.fromkeys(v.spec for r in results for v in r.violations))
    if broken:
        parts.append(f"broken: {', '.join(broken)}")
    gaps = [g.name for r in results if r.result == "gap" for g in r.goals if not g.reached]
    if gaps:
        parts.append(f"goals never reached: {', '.join(gaps)}")
    bounds = [r.incomplete_reason for r in results if r.incomplete_reason]
    if bounds:
        parts.append(f"incomplete: {'; '.join(dict.fromkeys(bounds))}")
    if known:
        parts.append(f"known findings of the planner: {', '.join(known)}")
    return "; ".join(parts)


def render_checkpoint(console: Console, info: dict[str, Any], file: Path) -> None:
    """`partsafe checkpoint`: the header of a checkpoint (`run.checkpoint_summary`) as a table."""
    rows = [("search", describe(info)),
            ("saved at", f"depth {info['depth']}, {info['states']:,} states, "
                         f"{info['seconds']:,.0f} s of search"),
            ("written", f"{info['written']}, {info['bytes'] / 2**20:,.1f} MB"
                        + (f", and {info['edge_bytes'] / 2**20:,.1f} MB of edges in "
                           f"{file.name}.edges/" if info["edge_bytes"] else "")),
            ("code", f"{info['code'][:16]} ("
                     + ("this installation's: resumable here" if info["resumable_here"] else
                        "not this installation's: resume with the code that wrote it") + ")"),
            ("hash seed", str(info["hash_seed"]))]
    table = Table(show_header=False, box=None)
    for key, value in rows:
        table.add_row(Text(key, "bold"), Text(value))  # the file's text, never markup
    console.print(table)


# --- zoo --------------------------------------------------------------------------------------


def render_zoo(console: Console, doc: dict[str, Any]) -> None:
    """The zoo's report (the `zoo --json` document) for people: the flaws, the fixed design's
    runs, the command that reproduces each flaw, and the verdict line."""
    variants, fixed = doc["variants"], doc["fixed"]
    known = doc["known_findings"]["planner"]
    table = Table(title="the bug zoo: each variant must break its spec", title_justify="left",
                  box=box.SIMPLE_HEAD, pad_edge=False)
    for col in ("model / variant", "expected spec", "found", "depth", "seconds"):
        # identifiers are never broken across lines (only the "found" column may wrap)
        table.add_column(col, no_wrap=col != "found",
                         justify="right" if col in ("depth", "seconds") else "left")
    model_shown = None
    for v in variants:
        if v["model"] != model_shown:
            model_shown = v["model"]
            table.add_row(Text(model_shown, "bold"))
        table.add_row(f"  {v['variant']}", v["expected_spec"],
                      Text("yes", "green") if v["found"] else Text(f"no ({v['spec']})", "red"),
                      str(v["depth"]), f"{v['seconds']:.2f}")
    console.print(table)
    table = Table(title="the fixed design at the same scopes: each must be clean",
                  title_justify="left", box=box.SIMPLE_HEAD, pad_edge=False)
    table.add_column("model", no_wrap=True)
    table.add_column("scope (the defaults changed)")
    for col in ("result", "distinct states", "seconds"):
        table.add_column(col, justify="left" if col == "result" else "right", no_wrap=True)
    for f in fixed:
        default = catalog.MODELS[f["model"]].scope() if f["model"] in catalog.MODELS else {}
        changed = " ".join(f"{k}={v}" for k, v in f["scope"].items() if default.get(k) != v)
        table.add_row(f["model"], changed or "the default",
                      Text(f["result"], "green" if f["result"] == "ok" else "red"),
                      f"{f['distinct_states']:,}", f"{f['seconds']:.2f}")
    console.print(table)
    console.print(Text("to reproduce an entry:", style="bold"))
    for v in variants:
        console.print(Text(f"  {v['command']}"), soft_wrap=True)
    if known:
        console.print(Text(f"known findings of the faithful planner, which do not fail the run "
                           f"(--strict fails on them): {', '.join(known)}", style="yellow"))
    designs = {m: specs for m, specs in doc["known_findings"].items() if m != "planner" and specs}
    for model, specs in designs.items():
        console.print(Text(f"known findings of the fixed design of {model}, which do not fail "
                           f"the run (--strict fails on them): {', '.join(specs)}",
                           style="yellow"))
    print_verdict(console, *zoo_verdict(doc))


def zoo_verdict(doc: dict[str, Any]) -> tuple[str, str, float, str]:
    """The arguments of the zoo's verdict line (`partsafe.checker.report.verdict_line`)."""
    variants, fixed = doc["variants"], doc["fixed"]
    known = doc["known_findings"]["planner"]
    designs = {m: specs for m, specs in doc["known_findings"].items() if m != "planner" and specs}
    failed = [f"{v['variant']} not found" for v in variants if not v["found"]]
    failed += [f"{f['model']} fixed: {f['result']}" for f in fixed if f["result"] != "ok"]
    found = ([f"of the planner: {', '.join(known)}"] if known else []) + [
        f"of {model}: {', '.join(specs)}" for model, specs in designs.items()]
    detail = "; ".join(failed) if failed else (
        "known findings " + "; ".join(found) if found else "")
    return (f"zoo of {len(variants)} historical flaws and the fixed design at {len(fixed)} "
            "scopes", doc["result"], doc["seconds"], detail)


# --- specs ------------------------------------------------------------------------------------


def render_specs(console: Console, catalogue: list[Spec],
                 where: dict[str, dict[str, Any]]) -> None:
    """`partsafe specs`: a row per spec, its title, statement and design section, and the forms
    that judge it (`partsafe.checker.forms.judged`); the totals per form end the table."""
    table = Table(title="partsafe specs", title_justify="left", show_lines=True)
    table.add_column("id", no_wrap=True)
    table.add_column("kind")
    table.add_column("spec", overflow="fold")
    table.add_column("judged by")
    totals: Counter[str] = Counter()
    for s in catalogue:
        by = where[s.id]["judged_by"]
        totals.update(by)
        table.add_row(s.id, s.kind, Text.assemble((s.title, "bold"), "\n", s.statement, "\n",
                                                  (f"design {s.seed} {s.section}", "dim")),
                      "\n".join(by))
    console.print(table)
    console.print("judged: " + ", ".join(f"{totals[f]} by {f}" for f in FORMS)
                  + f" (of {len(catalogue)}); `partsafe specs --json` gives each spec's evidence "
                  "and why a form does not judge it", markup=False)


def render_spec(console: Console, spec: Spec, breaking: list[dict[str, Any]],
                forms: list[dict[str, Any]] = (),  # type: ignore[assignment]
                where: dict[str, Any] | None = None) -> None:
    """`partsafe explain`: what a spec states, where the design says so, why it exists, and the
    variants the bug zoo expects to break it (`catalog.variants_breaking`), each with the
    command that shows it."""
    console.print(f"[bold]{spec.id}[/]: {spec.title}  [dim]({spec.kind})[/]")
    console.print(f"design {spec.seed}, {spec.design}, {spec.section}", markup=False)
    console.print(spec.statement)
    if spec.rationale:
        console.print(f"\n{spec.rationale}")
    if breaking:
        console.print(Text("\nbroken in the bug zoo by:", style="bold"))
        for v in breaking:
            command = check_command(v["model"], v["variant"], v["zoo_scope"])
            console.print(Text(f"  {command}"), soft_wrap=True)  # one line, to copy
            doc_text = textwrap.fill(v["doc"], width=max(console.width, 40),
                                     break_on_hyphens=False, initial_indent="    ",
                                     subsequent_indent="    ")
            console.print(Text(doc_text, style="dim"), soft_wrap=True)
    for form in forms:
        console.print(Text(f"\nZ3 form ({form['module']}, {form['kind']}):", style="bold"))
        console.print(Text(f"  {form['formula']}"), soft_wrap=True)
        for lemma in form["lemmas"]:
            console.print(Text(f"  lemma {lemma['name']}: {lemma['formula']}"), soft_wrap=True)
            console.print(Text(f"    {lemma['design']}", style="dim"), soft_wrap=True)
        console.print(Text(f"  {form['command']}"), soft_wrap=True)
    if where is not None:
        console.print(Text(f"\njudged by: {', '.join(where['judged_by'])}", style="bold"))
        for form, shown in where["evidence"].items():
            for e in shown:
                console.print(Text(f"  {form}: {e['level']} {e['logger']}: {e['message']}"),
                              soft_wrap=True)
        for form, reason in where["not_judged"].items():
            console.print(Text(f"  not by {form}: {reason}", style="dim"), soft_wrap=True)


# --- release profiles ---------------------------------------------------------------------------


def profiles_json() -> list[dict[str, Any]]:
    """`partsafe profiles --json`: each profile, the models it covers, and for each model the
    rules its code follows with their sources (refimpl/profiles.py)."""
    out = []
    for profile in profiles.PROFILES.values():
        models = {}
        for model in profile.models:
            entry = catalog.MODELS.get(model)
            rules = entry.rules_of(profile.name) if entry is not None else []
            models[model] = {
                "rules": [rule_json(r) for r in rules],
                "scope": dict(profile.scope.get(model, {})),
                "findings": dict(profile.findings.get(model, {}))}
        out.append({"name": profile.name, "title": profile.title, "doc": profile.doc,
                    "models": models})
    return out


def rule_json(rule: Rule | Variant) -> dict[str, Any]:
    """A rule of a profile: a release rule with its sources, or a shipped flaw (a variant)."""
    if isinstance(rule, Rule):
        return {"name": rule.name, "kind": "rule", "doc": rule.doc, "fixed": rule.fixed,
                "sources": [{"repo": s.repo, "ref": s.ref, "path": s.path,
                             "method": s.method} for s in rule.sources]}
    return {"name": rule.name, "kind": "variant", "doc": rule.doc, "breaks": rule.breaks}


def render_profiles(console: Console, doc: list[dict[str, Any]]) -> None:
    """`partsafe profiles`: each profile's models and rules, each rule with its first source."""
    for p in doc:
        console.print(Text.assemble((p["name"], "bold"), f": {p['title']}"))
        console.print(Text(f"  {p['doc']}"), soft_wrap=True)
        for model, m in p["models"].items():
            extra = "".join(f", --{k} {v}" for k, v in m["scope"].items())
            names = ", ".join(r["name"] for r in m["rules"]) or "no rule (as fixed)"
            console.print(Text(f"  {model}{extra}: {names}"), soft_wrap=True)
            for r in m["rules"]:
                where = (f"{r['sources'][0]['repo']}@{r['sources'][0]['ref']} "
                         f"{r['sources'][0]['method']}" if r["kind"] == "rule"
                         else "a shipped flaw (variant)")
                console.print(Text(f"    {r['name']}: {where}"), soft_wrap=True)
            for spec, finding in m["findings"].items():
                console.print(Text(f"    breaks {spec} ({finding})", style="yellow"))
    console.print(Text(f"{len(doc)} profiles; `partsafe check MODEL --profile P` checks one, "
                       "`partsafe zoo --profile P` lists what it breaks"))


def render_profile_zoo(console: Console, doc: dict[str, Any]) -> None:
    """`partsafe zoo --profile P`: every spec each model breaks under the release profile,
    against the findings the profile declares, and the verdict line."""
    table = Table(title=f"what {doc['profile']} ({doc['title']}) breaks at the default scopes",
                  title_justify="left", box=box.SIMPLE_HEAD, pad_edge=False)
    for col in ("model", "spec broken", "finding", "depth", "states", "seconds"):
        table.add_column(col, no_wrap=True,
                         justify="right" if col in ("depth", "states", "seconds") else "left")
    for m in doc["models"]:
        rows: list[tuple[Text, Text, str]] = [
            (Text(b["spec"]), Text(b["finding"] or "not declared",
                                   "yellow" if b["declared"] else "red"), str(b["depth"]))
            for b in m["broken"]]
        rows += [(Text(x["spec"], "red"), Text(f"{x['finding']}: not reached", "red"), "")
                 for x in m["missing"]]
        if not rows:
            rows = [(Text("none", "green"), Text(""), "")]
        for i, (spec, finding, depth) in enumerate(rows):
            table.add_row(Text(m["model"], "bold") if i == 0 else "", spec, finding, depth,
                          f"{m['distinct_states']:,}" if i == 0 else "",
                          f"{m['seconds']:.2f}" if i == 0 else "")
    console.print(table)
    for m in doc["models"]:
        if m.get("searched_until") and not m["missing"] and not m["incomplete_reason"]:
            last = max(b["depth"] for b in m["broken"])
            console.print(Text(f"{m['model']}: searched until the last declared finding broke "
                               f"(depth {last}); the levels beyond are not searched"))
        if m["incomplete_reason"]:
            console.print(Text(f"{m['model']}: incomplete ({m['incomplete_reason']}) at depth "
                               f"{m['depth']}", style="yellow"))
        if m["goals_not_reached"]:
            console.print(Text(f"{m['model']}: coverage goals not reached: "
                               f"{', '.join(m['goals_not_reached'])}", style="red"))
    console.print(Text("to reproduce:", style="bold"))
    for m in doc["models"]:
        console.print(Text(f"  {m['command']}"), soft_wrap=True)
    print_verdict(console, *profile_zoo_verdict(doc))


def profile_zoo_verdict(doc: dict[str, Any]) -> tuple[str, str, float, str]:
    """The verdict line of `partsafe zoo --profile P`: what, verdict, seconds and detail."""
    undeclared = [f"{m['model']} breaks {b['spec']} (not declared)" for m in doc["models"]
                  for b in m["broken"] if not b["declared"]]
    undeclared += [f"{m['model']}: {x['finding']} ({x['spec']}) not reached"
                   for m in doc["models"] for x in m["missing"]]
    found = sum(len(m["broken"]) for m in doc["models"])
    detail = "; ".join(undeclared) if undeclared else (
        f"{found} declared finding(s) found again" if found else "no spec broken")
    return (f"zoo of profile {doc['profile']} ({len(doc['models'])} models)", doc["result"],
            doc["seconds"], detail)

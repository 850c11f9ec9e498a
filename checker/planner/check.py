"""Exhaustive small-scope check of the migration planner against the PLAN-* specs (000 §3).

Every (current, target) pair of replica arrays with 1 to N indices, up to renaming of members
(`planner_space.canonical_pairs`), is planned by the reference planner and the plan judged:
the safety specs on every intermediate array, PLAN-REACHES-TARGET at the end, PLAN-NO-CYCLE on the
cycle-fixed target, PLAN-PRIORITY on the execution order, PLAN-WELL-FORMED on every decision's
arguments. A planner assertion (Hazelcast's own
`AssertionError`s) counts against PLAN-REACHES-TARGET: no plan reached the target.

For each spec the check keeps the number of violating pairs and the smallest counterexample:
fewest indices, then fewest replicas in the pair, then the earliest step.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from partsafe.checker.planner.space import canonical_pairs
from partsafe.refimpl.planner import VARIANT_TABLE, Plan, PlannerAssertion, plan
from partsafe.specs.planner import (
    ARRAY_SPECS,
    Replicas,
    count,
    cycle,
    cycle_fixed,
    malformed,
    priority_breach,
)

#: violations the faithful planner is known to have, each recorded with why (docs/findings.md,
#: HZ-PLAN-1 and HZ-PLAN-2).
#: One rule for every command (`check`, `check planner`, `zoo`, `--junit`): they are reported as
#: known findings and do not fail the run; `--strict` fails on them too. Any other violation fails.
KNOWN_FINDINGS = {
    "PLAN-NO-DECREASE": "Hazelcast applies clears at once and its chain walk may shift a replica "
                        "up over a holder that leaves: a partition can briefly hold fewer "
                        "replicas than before and after (docs/findings.md, HZ-PLAN-1 and "
                        "HZ-PLAN-2)",
    "PLAN-HOTTER-FIRST": "the same plans, seen per prefix of hotter indices",
}

#: the check's scope unless asked otherwise: every pair with 1 to 4 indices (`partsafe check`
#: without a model, `partsafe zoo`); `MAX_REPLICAS` is the most a replica array has
DEFAULT_REPLICAS = 4
MAX_REPLICAS = 7

PLAN_SPECS = ("PLAN-NO-DECREASE", "PLAN-HOTTER-FIRST", "PLAN-REACHES-TARGET", "PLAN-NO-CYCLE",
              "PLAN-PRIORITY", "PLAN-NO-DUPLICATE", "PLAN-OWNER", "PLAN-WELL-FORMED")


@dataclass
class PlanViolation:
    """One pair breaking one spec; `step` indexes `plan.arrays` (0 is the array after clears),
    the migrations for PLAN-PRIORITY, the decisions (clears included) for PLAN-WELL-FORMED."""

    spec: str
    current: Replicas
    target: Replicas
    step: int | None
    message: str
    plan: Plan | None = None

    @property
    def size(self) -> tuple[int, int, int]:
        return (len(self.current), count(self.current) + count(self.target), self.step or 0)


@dataclass
class PlannerCheck:
    """The outcome of one exhaustive planner check."""

    variant: str
    replicas: int
    pairs: dict[int, int] = field(default_factory=dict)
    seconds: float = 0.0
    violating_pairs: dict[str, int] = field(default_factory=dict)
    smallest: dict[str, PlanViolation] = field(default_factory=dict)
    #: the same, restricted to the inputs Hazelcast's planner is given (`in_domain`)
    domain_pairs: int = 0
    domain_violating_pairs: dict[str, int] = field(default_factory=dict)
    domain_smallest: dict[str, PlanViolation] = field(default_factory=dict)
    longest_plan: int = 0

    @property
    def pairs_checked(self) -> int:
        return sum(self.pairs.values())

    @property
    def result(self) -> str:
        return "violation" if self.smallest else "ok"

    @property
    def unexpected(self) -> list[str]:
        """Specs broken beyond the known findings of the faithful planner."""
        known = KNOWN_FINDINGS if self.variant == "fixed" else {}
        return sorted(spec for spec in self.smallest if spec not in known)

    @property
    def known(self) -> list[str]:
        """The known findings of the faithful planner that this check found again."""
        return sorted(set(self.smallest) - set(self.unexpected))

    def verdict(self, strict: bool = False) -> str:
        """``violation`` when a spec broke beyond the known findings (or at all, `strict`),
        else ``ok``: the verdict every command gives the planner (`KNOWN_FINDINGS`)."""
        failing = self.smallest if strict else self.unexpected
        return "violation" if failing else "ok"


def in_domain(current: Replicas, target: Replicas) -> bool:
    """The pairs Hazelcast's planner is given (docs/models.md): the current array after the
    repair task's promotions (an owner whenever any replica is left) and a repartitioned target
    (a non-empty prefix of replicas, then empty indices)."""
    if count(current) and current[0] is None:
        return False
    k = count(target)
    return k > 0 and all(r is not None for r in target[:k])


def arrays_of(p: Plan) -> tuple[Replicas, ...]:
    """The arrays a plan goes through: after the clears, then after each migration."""
    return (p.start, *p.steps)


def judge(current: Replicas, target: Replicas, variant: str = "fixed"
          ) -> tuple[Plan | None, list[PlanViolation]]:
    """Plan one pair and judge the plan against every PLAN-* spec."""
    try:
        p = plan(current, target, variant=variant)
    except PlannerAssertion as exc:
        return None, [PlanViolation("PLAN-REACHES-TARGET", current, target, None,
                                    f"the planner failed: {exc}")]
    return p, judge_plan(p)


def judge_plan(p: Plan) -> list[PlanViolation]:
    """Every PLAN-* spec `p` breaks, each with the first step that breaks it."""
    current, target = p.current, p.target
    # the spec's cycle fix, not the planner's own (`Plan.target_after_cycle_fix`)
    fixed = cycle_fixed(current, target)
    found: list[PlanViolation] = []
    arrays = arrays_of(p)
    for spec, holds in ARRAY_SPECS.items():
        for step, array in enumerate(arrays):
            if not holds(current, fixed, array):
                found.append(PlanViolation(spec, current, target, step,
                                           f"{spec} fails after step {step}: {show(array)}", p))
                break
    if arrays[-1] != fixed:
        found.append(PlanViolation("PLAN-REACHES-TARGET", current, target, len(arrays) - 1,
                                   f"ends at {show(arrays[-1])}, not {show(fixed)}", p))
    # the planner's own cycle fix is what PLAN-NO-CYCLE judges (against the spec's, it could
    # not fail); a fix that cancels too much ends away from the spec's target
    members = cycle(current, p.target_after_cycle_fix)
    if members is not None:
        found.append(PlanViolation("PLAN-NO-CYCLE", current, target, None,
                                   f"{' -> '.join(members)} still pass their indices round", p))
    breach = priority_breach(p.migrations)
    if breach is not None:
        found.append(PlanViolation("PLAN-PRIORITY", current, target, breach,
                                   f"migration {breach + 1} could go before migration {breach}",
                                   p))
    bad = malformed(current, p.decisions)
    if bad is not None:
        found.append(PlanViolation("PLAN-WELL-FORMED", current, target, bad[0],
                                   f"decision {bad[0] + 1}: {bad[1]}", p))
    return found


def check_planner(replicas: int, variant: str = "fixed",
                  progress: Callable[[int, int], None] | None = None) -> PlannerCheck:
    """Judge every pair with 1 to `replicas` indices."""
    result = PlannerCheck(variant, replicas)
    start = time.perf_counter()
    for n in range(1, replicas + 1):
        pairs = 0
        for current, target in canonical_pairs(n):
            pairs += 1
            p, found = judge(current, target, variant)
            if p is not None:
                result.longest_plan = max(result.longest_plan, len(p.migrations))
            domain = in_domain(current, target)
            result.domain_pairs += domain
            for v in found:
                _keep(result.violating_pairs, result.smallest, v)
                if domain:
                    _keep(result.domain_violating_pairs, result.domain_smallest, v)
            if progress is not None and pairs % 20000 == 0:
                progress(n, pairs)
        result.pairs[n] = pairs
    result.seconds = time.perf_counter() - start
    return result


def check_scope(variant: str, replicas: int | None) -> int:
    """The replica count `partsafe check planner --variant VARIANT --replicas N` checks up to
    (`DEFAULT_REPLICAS` when not given); ValueError, naming the option, for a count out of range
    or an unknown variant."""
    n = DEFAULT_REPLICAS if replicas is None else replicas
    if not 1 <= n <= MAX_REPLICAS:
        raise ValueError(f"--replicas must be 1 to {MAX_REPLICAS}, not {n}")
    if variant not in VARIANT_TABLE:
        raise ValueError(f"unknown variant {variant!r} of model planner; known: "
                         f"{', '.join(VARIANT_TABLE)}")
    return n


def witness(spec: str, variant: str, replicas: int
            ) -> tuple[Replicas, Replicas, PlanViolation] | None:
    """The first pair (fewest indices first, each count in `canonical_pairs` order) on which
    `variant` breaks `spec` while the faithful planner keeps every spec: the flaw, shown where
    the fix makes the difference (the zoo's planner entry). None if no pair with 1 to `replicas`
    indices is one."""
    for n in range(1, replicas + 1):
        for current, target in canonical_pairs(n):
            _, bad = judge(current, target, variant)
            hit = next((v for v in bad if v.spec == spec), None)
            if hit is not None and not judge(current, target)[1]:
                return current, target, hit
    return None


def _keep(counts: dict[str, int], smallest: dict[str, PlanViolation], v: PlanViolation) -> None:
    counts[v.spec] = counts.get(v.spec, 0) + 1
    best = smallest.get(v.spec)
    if best is None or v.size < best.size:
        smallest[v.spec] = v


def show(array: Replicas) -> str:
    return "[" + ",".join(r if r is not None else "-" for r in array) + "]"


def check_json(result: PlannerCheck, strict: bool = False) -> dict[str, Any]:
    """`partsafe check planner --json`: the check contract, with the planner's own figures.
    ``result`` is the verdict (`PlannerCheck.verdict`); ``known_findings`` lists the specs
    broken that did not count against it."""
    return {
        "model": "planner",
        "variant": result.variant,
        "scope": {"replicas": result.replicas},
        "result": result.verdict(strict),
        "strict": strict,
        "distinct_states": result.pairs_checked,
        "pairs_checked": result.pairs_checked,
        "pairs_per_replica_count": {str(k): v for k, v in result.pairs.items()},
        "depth": result.longest_plan,
        "seconds": round(result.seconds, 3),
        "violating_pairs": result.violating_pairs,
        "known_findings": [] if strict else result.known,
        "violations": _violations_json(result.smallest),
        "hazelcast_domain": {
            "pairs_checked": result.domain_pairs,
            "violating_pairs": result.domain_violating_pairs,
            "violations": _violations_json(result.domain_smallest),
        },
    }


def _violations_json(smallest: dict[str, PlanViolation]) -> list[dict[str, Any]]:
    return [
        {"spec": v.spec, "message": v.message, "current": show(v.current),
         "target": show(v.target), "step": v.step,
         "trace": plan_json(v.plan) if v.plan is not None else None}
        for v in sorted(smallest.values(), key=lambda v: (v.size, v.spec))
    ]


def plan_json(p: Plan) -> dict[str, Any]:
    """The `partsafe plan --json` document: the arrays, every decision, the migrations in
    execution order, and the array after each."""
    return {
        "current": list(p.current),
        "target": list(p.target),
        "target_after_cycle_fix": list(p.target_after_cycle_fix),
        "decisions": [d.as_dict() for d in p.decisions],
        "migrations": [d.as_dict() for d in p.migrations],
        "steps": [list(s) for s in p.steps],
    }


@dataclass
class CrossCheck:
    """The reference planner against the Z3 oracle over every pair with `n` indices."""

    n: int
    pairs: int = 0
    #: the planner keeps the safety specs / a safe plan exists (oracle), for each combination
    safe_and_exists: int = 0
    unsafe_but_exists: int = 0
    unsafe_and_none: int = 0
    safe_but_none: int = 0
    #: planner migrations minus the fewest possible, over pairs where both plans are safe
    longer_by: dict[int, int] = field(default_factory=dict)
    #: the same, restricted to Hazelcast's inputs
    domain_unsafe_but_exists: int = 0
    first_unsafe_but_exists: tuple[Replicas, Replicas, int] | None = None
    z3_seconds: list[float] = field(default_factory=list)


def cross_check(n: int) -> CrossCheck:
    """Does the reference planner fail where a safe plan exists, and how much longer is it?"""
    from partsafe.models.planner_oracle import shortest_safe_plan

    out = CrossCheck(n)
    for current, target in canonical_pairs(n):
        out.pairs += 1
        p = plan(current, target)
        fixed = cycle_fixed(current, target)
        safe = all(holds(current, fixed, a) for holds in ARRAY_SPECS.values()
                   for a in arrays_of(p))
        oracle = shortest_safe_plan(current, fixed)
        out.z3_seconds.append(oracle.seconds)
        if safe and oracle.exists:
            out.safe_and_exists += 1
            extra = len(p.migrations) - (oracle.migrations or 0)
            out.longer_by[extra] = out.longer_by.get(extra, 0) + 1
        elif oracle.exists:
            out.unsafe_but_exists += 1
            out.domain_unsafe_but_exists += in_domain(current, target)
            if out.first_unsafe_but_exists is None:
                out.first_unsafe_but_exists = (current, target, oracle.migrations or 0)
        elif safe:
            out.safe_but_none += 1
        else:
            out.unsafe_and_none += 1
    return out

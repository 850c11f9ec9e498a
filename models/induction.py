"""Proofs: an inductive invariant for any size.

**For any size** (:func:`prove`). Members, partitions and nodes are uninterpreted sorts, so a
proof holds for every number of them. The invariant is the spec (when it is a state property)
and the lemmas it names (``Property`` → ``System.lemmas``). Three kinds of query, each one
solver call:

* *initiation*: ``Init ⇒ φ`` for every conjunct ``φ`` of the invariant;
* *consecution*: ``Inv ∧ T_a ⇒ φ′`` for every action ``a`` and conjunct ``φ``;
* *step*: ``Inv ∧ T_a ⇒ P(pre, post)`` for a step property ``P`` (an event monitor's judgement).

The lemmas are quantified over the sorts only (∀ members, partitions), and the actions take
their parameters as free constants, so the queries stay in the effectively propositional
fragment over the sorts with linear integer arithmetic over versions: Z3 decides them in
practice, and where it answers "unknown" the verdict says so (never "proved"). A failed query
names the conjunct and the action, so a missing lemma can be found.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field

import z3

from partsafe.models.system import Frame, Lemma, Property, System

Check = dict[str, object]
#: a query's answer (Z3's check results do not hash), as a check reports it
_ANSWERS = {"unsat": "valid", "sat": "counterexample", "unknown": "unknown"}


@dataclass
class ProofResult:
    """The outcome of an inductive proof of one spec."""

    spec: str
    #: "proved", "failed" (a query found a counterexample to induction), or "unknown"
    verdict: str
    seconds: float
    lemmas: list[str] = field(default_factory=list)
    #: one entry per query: what it checks, the answer and its seconds
    checks: list[Check] = field(default_factory=list)
    reason: str = ""
    #: the slowest query's seconds
    slowest: float = 0.0


def _invariant(system: System, prop: Property) -> list[tuple[str, Lemma | Property]]:
    names = prop.lemmas
    found: list[tuple[str, Lemma | Property]] = []
    by_name = {lemma.name: lemma for lemma in system.lemmas}
    for name in names:
        if name not in by_name:
            raise KeyError(f"{system.name}: {prop.spec} names an unknown lemma {name!r}")
        found.append((name, by_name[name]))
    if prop.state is not None and not prop.quiescent:
        found.append((prop.spec, prop))
    return found


def _state(conjunct: Lemma | Property, frame: Frame) -> z3.BoolRef:
    formula = conjunct.state
    assert formula is not None
    return formula(frame)


#: the attempts of a query before the full theory: without the array extensionality axiom, with
#: a few random seeds, each for at most this many milliseconds (and together for no longer than
#: the query's timeout, so a query takes at most twice its timeout)
_PORTFOLIO_SEEDS = (0, 1, 2, 3)
_PORTFOLIO_MS = 5_000


def _check(ctx: z3.Context, hypotheses: list[z3.BoolRef], goal: z3.BoolRef, timeout_ms: int
           ) -> tuple[z3.CheckSatResult, z3.Solver]:
    """Is ``hypotheses ∧ ¬goal`` satisfiable? First without the array extensionality axiom,
    under a few random seeds: a query unsatisfiable without an axiom is unsatisfiable with
    it, and Z3 decides the quantified queries here far faster so, though how fast depends on
    the seed (MIG-ATOMIC on a destination's commit: unknown after 60 s with the axiom, 0.03 to
    11 s without). Any other answer is asked again with the full theory and the whole
    timeout, so a counterexample to induction is a model of the real query."""
    for seed in _PORTFOLIO_SEEDS:
        solver = z3.Solver(ctx=ctx)
        solver.set("timeout", min(_PORTFOLIO_MS, timeout_ms // len(_PORTFOLIO_SEEDS)))
        solver.set("smt.array.extensional", False)
        solver.set("smt.random_seed", seed)
        solver.add(*hypotheses)
        if solver.check(z3.Not(goal)) == z3.unsat:
            return z3.unsat, solver
    solver = z3.Solver(ctx=ctx)
    solver.set("timeout", timeout_ms)
    solver.add(*hypotheses)
    return solver.check(z3.Not(goal)), solver


def prove(system: System, spec: str, timeout_ms: int = 60_000, fail_fast: bool = True
          ) -> ProofResult:
    """Prove ``spec`` for any size with the lemmas it names; with ``fail_fast``, stop at the
    first query that is not valid (the verdict is settled there)."""
    prop = system.property(spec)
    started = time.perf_counter()
    result = ProofResult(spec, "proved", 0.0, list(prop.lemmas))
    if prop.quiescent:
        result.verdict, result.reason = "unknown", "a quiescence check is not an invariant"
        return result
    u = system.universe(None)
    pre, post = system.frame(u, "pre"), system.frame(u, "post")
    conjuncts = _invariant(system, prop)
    inv = [_state(c, pre) for _, c in conjuncts]

    def ask(what: str, hypotheses: list[z3.BoolRef], goal: z3.BoolRef) -> bool:
        if fail_fast and result.verdict != "proved":
            return False
        t0 = time.perf_counter()
        answer, solver = _check(u.ctx, hypotheses, goal, timeout_ms)
        seconds = time.perf_counter() - t0
        result.slowest = max(result.slowest, seconds)
        verdict = _ANSWERS[str(answer)]
        check: Check = {"check": what, "answer": verdict, "seconds": round(seconds, 3)}
        if answer == z3.unknown:
            check["reason"] = solver.reason_unknown()
            if result.verdict == "proved":
                result.verdict = "unknown"
                result.reason = f"{what}: Z3 answered unknown ({solver.reason_unknown()})"
        elif answer == z3.sat:
            result.verdict = "failed"
            result.reason = f"{what} does not hold"
        result.checks.append(check)
        return answer == z3.unsat

    for name, c in conjuncts:
        ask(f"initiation of {name}", [system.init(pre)], _state(c, pre))
    for action in system.actions:
        params = system.param_consts(u, action, "pre")
        step = system.transition(action, pre, post, params)
        for name, c in conjuncts:
            ask(f"{name} after {action.name}", [*inv, step], _state(c, post))
        if prop.step is not None:
            ask(f"{spec} on {action.name}", [*inv, step],
                prop.step(pre, post, action.name, params))
    result.seconds = time.perf_counter() - started
    return result


def k_induction(system: System, spec: str, k: int, timeout_ms: int = 60_000) -> ProofResult:
    """Prove state property ``spec`` (with the lemmas it names) by ``k``-induction for any size:
    every run of fewer than ``k`` steps from an initial state keeps it (the base case, over the
    unbounded universe, so for every size), and ``k`` consecutive states that keep it and are
    joined by steps lead to a state that keeps it. ``k`` = 1 is :func:`prove`'s induction, with
    one query for the whole invariant. Sound: the frames are the unbounded universe's, whose
    arrays over integers are Z3's, never flattened."""
    if k < 1:
        raise ValueError(f"k-induction needs k ≥ 1, not {k}")
    prop = system.property(spec)
    started = time.perf_counter()
    result = ProofResult(spec, "proved", 0.0, list(prop.lemmas))
    if prop.state is None or prop.quiescent:
        result.verdict = "unknown"
        result.reason = "k-induction judges state properties (not step or quiescence checks)"
        return result
    u = system.universe(None)
    frames = [system.frame(u, f"k{i}") for i in range(k + 1)]
    conjuncts = [c for _, c in _invariant(system, prop)]

    def inv(f: Frame) -> z3.BoolRef:
        return z3.And(*[_state(c, f) for c in conjuncts])

    def step(i: int) -> z3.BoolRef:
        pre, post = frames[i], frames[i + 1]
        return z3.Or(*[system.transition(a, pre, post, system.param_consts(u, a, f"k{i}"))
                       for a in system.actions])

    def ask(what: str, hypotheses: list[z3.BoolRef], goal: z3.BoolRef) -> None:
        if result.verdict != "proved":
            return
        t0 = time.perf_counter()
        answer, solver = _check(u.ctx, hypotheses, goal, timeout_ms)
        seconds = time.perf_counter() - t0
        result.slowest = max(result.slowest, seconds)
        result.checks.append({"check": what, "answer": _ANSWERS[str(answer)],
                              "seconds": round(seconds, 3)})
        if answer == z3.unknown:
            result.verdict = "unknown"
            result.reason = f"{what}: Z3 answered unknown ({solver.reason_unknown()})"
        elif answer == z3.sat:
            result.verdict = "failed"
            result.reason = f"{what} does not hold"

    for i in range(k):
        ask(f"base case: {spec} after {i} steps",
            [system.init(frames[0]), *[step(j) for j in range(i)]], inv(frames[i]))
    ask(f"{k}-induction step of {spec}",
        [*[inv(frames[i]) for i in range(k)], *[step(i) for i in range(k)]], inv(frames[k]))
    result.seconds = time.perf_counter() - started
    return result


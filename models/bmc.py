"""Bounded model checking: every run of a symbolic system up to K steps, at a finite size.

The system is unrolled one step at a time on one incremental solver: frames ``F0 .. Fk``, the
initial formula on ``F0``, and for each step an action selector and the parameters of every
action (``System.transition``). At each depth every spec not yet broken is asked for a violation
on the new frame (a state property, with quiescence where the spec is a quiescence check) or on the
new step (a step property). Depths grow by one, so the first violation found is a shortest one,
and its run is read off the model. A run of the explorer orders interleavings; here they are one
formula per step, so the cost grows with the depth and not with the number of interleavings.
"""

from __future__ import annotations

import time
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

import z3

from partsafe.models.system import Frame, Property, System, Universe, value_json


@dataclass
class BmcResult:
    """The outcome of bounded model checking one spec."""

    spec: str
    #: "counterexample", "bounded" (no violation up to `depth`), or "unknown"
    verdict: str
    depth: int
    sizes: dict[str, int]
    seconds: float = 0.0
    #: the initial state, then one entry per step: action, parameters and state after it
    trace: list[dict[str, Any]] = field(default_factory=list)
    reason: str = ""


class Unrolling:
    """A system unrolled step by step on one solver (shared by BMC and k-induction)."""

    def __init__(self, system: System, u: Universe, timeout_ms: int, initial: bool = True
                 ) -> None:
        self.system = system
        self.u = u
        self.solver = z3.SolverFor("QF_AUFLIA", ctx=u.ctx) if u.finite else z3.Solver(ctx=u.ctx)
        self.solver.set("timeout", timeout_ms)
        self.frames: list[Frame] = [system.frame(u, "0")]
        self.selectors: list[z3.ArithRef] = []
        self.params: list[list[dict[str, z3.ExprRef]]] = []
        if initial:
            self.solver.add(system.init(self.frames[0]))

    @property
    def depth(self) -> int:
        return len(self.frames) - 1

    def extend(self) -> None:
        """Add one step: a new frame and the transition into it."""
        t = self.depth
        pre, post = self.frames[t], self.system.frame(self.u, str(t + 1))
        sel = z3.Int(f"action@{t}", self.u.ctx)
        params = [self.system.param_consts(self.u, a, str(t)) for a in self.system.actions]
        self.solver.add(sel >= 0, sel < len(self.system.actions))
        self.solver.add(z3.Or(*[
            z3.And(sel == i, self.system.transition(a, pre, post, params[i]))
            for i, a in enumerate(self.system.actions)]))
        self.frames.append(post)
        self.selectors.append(sel)
        self.params.append(params)

    def holds_at(self, prop: Property, t: int) -> z3.BoolRef:
        """``prop`` on frame ``t`` (a state property) or on step ``t - 1 -> t`` (a step
        property); true on frame 0 for a step property."""
        out: list[z3.BoolRef] = []
        if prop.state is not None:
            frame = self.frames[t]
            ok = prop.state(frame)
            if prop.quiescent:
                ok = z3.Implies(self.system.quiescent(self.u, frame), ok)
            out.append(ok)
        if prop.step is not None and t > 0:
            pre, post, sel = self.frames[t - 1], self.frames[t], self.selectors[t - 1]
            out.extend(z3.Implies(sel == i, prop.step(pre, post, a.name, self.params[t - 1][i]))
                       for i, a in enumerate(self.system.actions))
        return z3.And(*out) if out else z3.BoolVal(True, self.u.ctx)

    def trace(self, model: z3.ModelRef, upto: int) -> list[dict[str, Any]]:
        """The run ``F0 .. F_upto`` in ``model``, as JSON."""
        out: list[dict[str, Any]] = [{"step": 0, "action": "init",
                                      "state": self.describe(model, self.frames[0])}]
        for t in range(upto):
            index = model.eval(self.selectors[t], model_completion=True).as_long()
            action = self.system.actions[index]
            params = {name: value_json(self.u, model, c, c.sort())
                      for name, c in self.params[t][index].items()}
            out.append({"step": t + 1, "action": action.name, "params": params,
                        "state": self.describe(model, self.frames[t + 1])})
        return out

    def describe(self, model: z3.ModelRef, frame: Frame) -> dict[str, Any]:
        if self.system.describe is not None:
            return self.system.describe(frame, model)
        return {v.name: value_json(self.u, model, frame[v.name], frame[v.name].sort())
                for v in self.system.variables if not v.ghost}


def memory_mb(solver: z3.Solver) -> float:
    """The solver's peak memory in MB, as Z3 reports it."""
    stats = solver.statistics()
    return float(stats.get_key_value("max memory")) if "max memory" in stats.keys() else 0.0  # noqa: SIM118


def bmc(system: System, specs: Iterable[str], sizes: Mapping[str, int], depth: int,
        timeout_ms: int = 300_000) -> dict[str, BmcResult]:
    """Bounded model checking of ``specs`` on ``system`` at ``sizes`` up to ``depth`` steps."""
    u = system.universe(sizes)
    unrolled = Unrolling(system, u, timeout_ms)
    open_specs = {s: system.property(s) for s in specs}
    started = time.perf_counter()
    results: dict[str, BmcResult] = {}
    for t in range(depth + 1):
        if t > 0:
            unrolled.extend()
        for spec, prop in list(open_specs.items()):
            goal = z3.Not(unrolled.holds_at(prop, t))
            answer = unrolled.solver.check(goal)
            if answer == z3.unknown and "theory array" in unrolled.solver.reason_unknown():
                # the QF_AUFLIA solver is incomplete for arrays whose elements are arrays
                # indexed by integers over enumerated sorts: ask the general solver
                fallback = z3.Solver(ctx=u.ctx)
                fallback.set("timeout", timeout_ms)
                fallback.add(unrolled.solver.assertions())
                answer = fallback.check(goal)
                if answer != z3.unknown:
                    unrolled.solver = fallback
            if answer == z3.sat:
                results[spec] = BmcResult(spec, "counterexample", t, dict(u.sizes),
                                          time.perf_counter() - started,
                                          unrolled.trace(unrolled.solver.model(), t))
                del open_specs[spec]
            elif answer == z3.unknown:
                results[spec] = BmcResult(spec, "unknown", t, dict(u.sizes),
                                          time.perf_counter() - started,
                                          reason=unrolled.solver.reason_unknown())
                del open_specs[spec]
        if not open_specs:
            break
    for spec in open_specs:
        results[spec] = BmcResult(spec, "bounded", depth, dict(u.sizes),
                                  time.perf_counter() - started)
    return results

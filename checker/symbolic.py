"""The explorer and the Z3 encodings side by side: one protocol, two forms that must agree.

* :func:`differential`: every transition the explorer takes on the reference implementation, over
  the whole state graph of a small scope, satisfies the Z3 transition formulas of the abstract
  actions it is. The model's ``Refinement`` (models/<protocol>.py) maps a reference state onto
  the symbolic variables and a step (its action and the events it emits) onto abstract actions;
  a step that maps to no action must leave every protocol variable as it was. Ghost variables
  (history kept for the specs) are left free.
* :func:`to_artifact`: a bounded-model-checking counterexample becomes a counterexample artifact
  of the explorer (`partsafe replay` takes it): a search of the reference implementation guided
  by the abstract run, each step of which must be matched, in order per member, by the events of
  the reference steps (steps that map to no action, such as message sends and periodic
  publishes, are taken freely, a few at a time), ending where the explorer judges the same spec
  broken.
* :func:`planner_verdict`: `partsafe prove planner`, the planner's specs through the Z3 oracle.
"""

from __future__ import annotations

import time
from collections import deque
from collections.abc import Hashable, Iterable
from dataclasses import dataclass, field
from typing import Any

import z3

from partsafe.checker.actor.faults import CRASHED
from partsafe.checker.artifact import judge
from partsafe.checker.protocols import catalog
from partsafe.checker.report import canonical, event_json
from partsafe.models import prove as symbolic
from partsafe.models.prove import ModelVerdict, SpecVerdict
from partsafe.models.system import System, pin


class SymbolicError(ValueError):
    """A counterexample that does not replay on the reference implementation, or a model the
    comparison does not know."""


def _nodes(model: Any, world: Any) -> tuple[dict[str, Hashable | None], frozenset[str]]:
    states = dict(zip(model.names, world.nodes, strict=True))
    crashed = frozenset(n for n, st in states.items() if st is CRASHED)
    return {n: (None if st is CRASHED else st) for n, st in states.items()}, crashed


def _actions(ref: Any, model: Any, world: Any, action: Any, nxt: Any
             ) -> list[tuple[str, dict[str, int]]]:
    """The abstract actions of one explorer step; a Refinement with ``reads_states`` is also
    given the node states before and after it (a step whose effect no event names, such as a
    raft node's step down to a message's term)."""
    events = model.step_events(world, action, nxt)
    if getattr(ref, "reads_states", False):
        return ref.actions(action, events, _nodes(model, world)[0], _nodes(model, nxt)[0])
    return ref.actions(action, events)


def _key(value: Any) -> Any:
    if isinstance(value, dict):
        return tuple(sorted((k, _key(v)) for k, v in value.items()))
    if isinstance(value, (set, frozenset)):
        return ("set", tuple(sorted(value)))
    return value


# --- differential: the explorer's transitions against the transition formulas ----------------


@dataclass
class Differential:
    """The outcome of :func:`differential`."""

    model: str
    variant: str
    scope: dict[str, int]
    states: int = 0
    transitions: int = 0
    #: distinct (abstract state, actions, abstract state) triples checked with Z3
    checked: int = 0
    #: the steps no transition formula allows, each described
    mismatches: list[str] = field(default_factory=list)
    seconds: float = 0.0
    complete: bool = True


def differential(name: str, variant: str = "fixed", scope: dict[str, int] | None = None,
                 max_states: int | None = None, positions: int = 16) -> Differential:
    """Check every edge of the explorer's state graph of ``name`` at ``scope`` (see the module
    docstring); stops after ``max_states`` states (the result says it is incomplete)."""
    mod = symbolic.module(name)
    if not hasattr(mod, "system_for"):
        raise SymbolicError(f"{name}: no map from explorer scopes to sizes yet")
    entry = catalog.get(name)
    params = entry.scope(scope)
    model = entry.make(variant, params)
    system: System = mod.system_for(variant, params)
    ref = mod.Refinement(model.protocol)
    u = system.universe({})
    u.int_range = range(positions)
    ghosts = {v.name for v in system.variables if v.ghost}
    by_name = {a.name: a for a in system.actions}
    cache: dict[Any, Any] = {}
    out = Differential(name, variant, dict(params))
    started = time.perf_counter()
    seen: set[Any] = set()
    checked: set[Any] = set()
    queue: deque[Any] = deque()
    for world in model.init_states():
        if world not in seen:
            seen.add(world)
            queue.append(world)
    while queue:
        world = queue.popleft()
        out.states += 1
        pre = ref.state(*_nodes(model, world))
        for action, nxt in model.successors(world):
            out.transitions += 1
            if nxt not in seen:
                if max_states is not None and len(seen) >= max_states:
                    out.complete = False
                else:
                    seen.add(nxt)
                    queue.append(nxt)
            acts = _actions(ref, model, world, action, nxt)
            post = ref.state(*_nodes(model, nxt))
            key = (_key(pre), tuple((a, _key(p)) for a, p in acts), _key(post))
            if key in checked:
                continue
            checked.add(key)
            if not _allowed(system, u, by_name, ghosts, pre, acts, post, cache):
                if len(out.mismatches) < 20:
                    out.mismatches.append(
                        f"{model.describe_action(action)[0]}: abstract actions "
                        f"{[a for a, _ in acts] or 'none'} do not lead from {pre} to {post}")
                else:
                    out.mismatches.append("…")
    out.checked = len(checked)
    out.seconds = time.perf_counter() - started
    return out


def _allowed(system: System, u: Any, by_name: dict[str, Any], ghosts: set[str],
             pre: dict[str, Any], acts: list[tuple[str, dict[str, int]]],
             post: dict[str, Any], cache: dict[Any, Any] | None = None) -> bool:
    """Some run of ``acts`` leads from ``pre`` to ``post``; ``cache`` keeps the frames and
    transition formulas of earlier calls (the same terms: only the pins differ)."""
    cache = {} if cache is None else cache
    solver = z3.Solver(ctx=u.ctx)

    def frame(i: int) -> Any:
        if ("frame", i) not in cache:
            cache[("frame", i)] = system.frame(u, f"d{i}")
        return cache[("frame", i)]

    frames = [frame(i) for i in range(len(acts) + 1)]

    def pins(frame: Any, values: dict[str, Any]) -> list[z3.BoolRef]:
        return [pin(u, frame[name], value) for name, value in values.items()
                if name not in ghosts]
    solver.add(*pins(frames[0], pre), *pins(frames[-1], post))
    for i, (name, given) in enumerate(acts):
        action = by_name[name]
        if (name, i) not in cache:
            params = system.param_consts(u, action, f"d{i}")
            cache[(name, i)] = (params, system.transition(action, frames[i], frames[i + 1],
                                                          params))
        params, step = cache[(name, i)]
        for pname, value in given.items():
            solver.add(pin(u, params[pname], value))
        solver.add(step)
    return solver.check() == z3.sat


# --- a bounded counterexample as an explorer artifact -------------------------------------------


def _indices(params: dict[str, Any]) -> dict[str, int]:
    """The finite-sort parameters of an abstract step, as element indices ("m2" -> 2)."""
    out: dict[str, int] = {}
    for name, value in params.items():
        if isinstance(value, str) and value[1:].isdigit():
            out[name] = int(value[1:])
    return out


def to_artifact(name: str, variant: str, spec: str, trace: list[dict[str, Any]],
                hidden: int = 6, max_states: int = 200_000) -> dict[str, Any]:
    """The counterexample ``trace`` of bounded model checking (``spec`` broken) as an artifact
    of the explorer; SymbolicError if the reference implementation cannot follow it."""
    mod = symbolic.module(name)
    if not hasattr(mod, "explorer_scope"):
        raise SymbolicError(f"{name}: no map from its bounded counterexamples to the explorer "
                            "yet (models/prove.py lists the models that have one)")
    entry = catalog.get(name)
    params = entry.scope(mod.explorer_scope(trace))
    model = entry.make(variant, params)
    ref = mod.Refinement(model.protocol)
    #: the parameters a reference step must agree on: those of the sorts the Refinement names
    #: in ``matched_sorts`` (all when it names none): a migration's index, say, is the order
    #: in which a search first met it, which differs between runs
    sorts = getattr(ref, "matched_sorts", None)
    kinds = {a.name: dict(a.params) for a in mod.system(variant).actions}

    def kept(action: str, params: dict[str, int]) -> dict[str, int]:
        return {k: v for k, v in params.items()
                if sorts is None or kinds.get(action, {}).get(k) in sorts}

    wanted = [(step["action"], kept(step["action"], _indices(step.get("params") or {})))
              for step in trace[1:]]
    actors = [set(p.values()) for _, p in wanted]
    #: abstract actions the reference run may take beyond the counterexample's (the delivery of
    #: a table the counterexample does not need, say), as its unmatched steps
    free: frozenset[str] = getattr(ref, "free_actions", frozenset())

    def advance(matched: frozenset[int], acts: list[tuple[str, dict[str, int]]]
                ) -> frozenset[int] | None:
        for act, given in acts:
            for i, (want, wparams) in enumerate(wanted):
                if i in matched or want != act:
                    continue
                if any(wparams.get(k) != v for k, v in given.items() if k in wparams):
                    continue
                if any(j not in matched and actors[j] & actors[i] for j in range(i)):
                    continue
                matched = matched | {i}
                break
            else:
                if act not in free:
                    return None
        return matched

    inits = list(model.init_states())
    start = [(w, frozenset(), 0, i, ()) for i, w in enumerate(inits)]
    queue: deque[Any] = deque(start)
    seen = {(w, m) for w, m, *_ in start}
    while queue:
        world, matched, idle, init_index, path = queue.popleft()
        if len(matched) == len(wanted) and judge(model, world, spec) is not None:
            return _artifact(model, name, variant, params, spec, init_index, inits, path,
                             judge(model, world, spec) or "")
        for action, nxt in model.successors(world):
            acts = _actions(ref, model, world, action, nxt)
            now = advance(matched, acts)
            if now is None:
                continue
            steps = 0 if now != matched else idle + 1
            if steps > hidden or (nxt, now) in seen:
                continue
            if len(seen) >= max_states:
                raise SymbolicError(f"{name} ({variant}): no run of the reference "
                                    f"implementation follows the counterexample of {spec} "
                                    f"within {max_states:,} states")
            seen.add((nxt, now))
            queue.append((nxt, now, steps, init_index, (*path, (world, action, nxt))))
    raise SymbolicError(f"{name} ({variant}): the reference implementation cannot follow the "
                        f"counterexample of {spec} (with at most {hidden} unmatched steps "
                        "between two of its actions)")


def replay_artifact(name: str, variant: str, spec: str, trace: list[dict[str, Any]],
                    sizes: dict[str, int] | None = None, depth: int = 12) -> dict[str, Any]:
    """:func:`to_artifact` of ``trace``; when the reference implementation cannot follow it and
    the model names the runs it can (``replayable``, the model without its over-approximating
    steps), the shortest counterexample of ``spec`` there (up to ``depth`` steps, at ``sizes``
    and then at one more element of each sort, since the reference's planner picks its own
    migrations) that it follows, instead."""
    try:
        return to_artifact(name, variant, spec, trace)
    except SymbolicError as exc:
        mod = symbolic.module(name)
        if not hasattr(mod, "replayable"):
            raise
        from partsafe.models.bmc import bmc
        system = mod.replayable(mod.system(variant))
        base = dict(sizes or system.sizes)
        for grown in [base, *({**base, sort: n + 1} for sort, n in base.items())]:
            found = bmc(system, [spec], grown, depth)[spec]
            if found.verdict != "counterexample":
                continue
            try:
                doc = to_artifact(name, variant, spec, found.trace)
            except SymbolicError:
                continue
            doc["note"] = (f"the shortest symbolic run ({len(trace) - 1} steps) takes a step "
                           "the reference implementation does not; this is the shortest run "
                           f"through the steps it takes ({len(found.trace) - 1}) at sizes "
                           f"{grown}")
            return doc
        raise SymbolicError(f"{exc}; nor does the shortest run of {spec} through the steps "
                            f"it takes (up to {depth} steps)") from None


def _artifact(model: Any, name: str, variant: str, params: dict[str, int], spec: str,
              init_index: int, inits: list[Any], path: Iterable[Any], message: str
              ) -> dict[str, Any]:
    steps = []
    for number, (world, action, nxt) in enumerate(path, start=1):
        text, node = model.describe_action(action)
        steps.append({"step": number, "action": text, "action_id": canonical(action),
                      "node": node,
                      "events": [event_json(e) for e in model.step_events(world, action, nxt)]})
    return {"partsafe": "counterexample", "model": name, "variant": variant,
            "profile": "fixed", "params": params, "spec": spec, "message": message,
            "found_by": "prove", "init": init_index,
            "init_events": [event_json(e) for e in model.init_events(inits[init_index])],
            "steps": steps}


# --- the planner ---------------------------------------------------------------------------------


def planner_verdict(variant: str = "fixed", replicas: int | None = None) -> ModelVerdict:
    """`partsafe prove planner`: every pair of replica arrays with 1 to ``replicas`` indices,
    judged on the planner's plan (checker/planner/); a violation is shown with the Z3 oracle's
    shortest safe plan for the same pair, which proves a safe plan existed."""
    from partsafe.checker.planner.check import KNOWN_FINDINGS, check_planner, check_scope
    from partsafe.models.planner_oracle import shortest_safe_plan
    from partsafe.specs.planner import ARRAY_SPECS

    n = check_scope(variant, replicas)
    started = time.perf_counter()
    result = check_planner(n, variant)
    specs: list[SpecVerdict] = []
    for spec in ARRAY_SPECS:
        v = result.domain_smallest.get(spec)
        if v is None:
            specs.append(SpecVerdict(spec, "bounded", {"replicas": n}, 0,
                                     time.perf_counter() - started,
                                     reason=f"every pair with 1 to {n} indices in "
                                            "Hazelcast's domain"))
            continue
        oracle = shortest_safe_plan(v.current, v.target)
        trace = [{"step": 0, "action": "init",
                  "state": {"current": list(v.current), "target": list(v.target)}},
                 {"step": 1, "action": "plan", "params": {"variant": variant},
                  "state": {"violation": v.message,
                            "safe_plan_exists": oracle.exists,
                            "shortest_safe_plan": list(oracle.plan or ())}}]
        known = variant == "fixed" and spec in KNOWN_FINDINGS
        specs.append(SpecVerdict(spec, "counterexample", {"replicas": len(v.current)}, 1,
                                 time.perf_counter() - started, trace=trace,
                                 reason=("a known finding: " if known else "") + v.message,
                                 known=known))
    return ModelVerdict("planner", variant, specs, {}, {"replicas": n})

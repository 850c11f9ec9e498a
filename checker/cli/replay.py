"""Re-execute a saved counterexample against the reference implementation, step by step.

A counterexample artifact (written by `partsafe check --trace-out FILE`) names the model, variant
and scope, the initial state, and each step's action (by a canonical id) and events. Replay
rebuilds the model, follows the actions, checks that every step is enabled and emits the same
events, and judges the spec on the final state: deterministic, with no search.
"""

from __future__ import annotations

from typing import Any

from partsafe.checker.engine.bfs import DEADLOCK, Trace
from partsafe.checker.engine.model import Model
from partsafe.checker.protocols import catalog
from partsafe.checker.report import canonical, event_json


class ReplayError(ValueError):
    """The artifact is malformed or does not replay; the message says where."""


def _field(doc: dict[str, Any], name: str, kind: type | tuple[type, ...], where: str) -> Any:
    value = doc.get(name)
    if not isinstance(value, kind):
        kind_name = getattr(kind, "__name__", str(kind))
        raise ReplayError(f"{where}: field {name!r} is missing or not a {kind_name}")
    return value


def replay(doc: Any, where: str = "<artifact>") -> tuple[Model[Any], Trace, str | None]:
    """Replay `doc`; returns the model, the trace and the spec's message on the final state
    (None if the spec holds there)."""
    if not isinstance(doc, dict) or doc.get("partsafe") != "counterexample":
        raise ReplayError(f"{where}: not a partsafe counterexample (no \"partsafe\": "
                          "\"counterexample\" field)")
    name = _field(doc, "model", str, where)
    variant = _field(doc, "variant", str, where)
    params = _field(doc, "params", dict, where)
    spec = _field(doc, "spec", str, where)
    init_index = _field(doc, "init", int, where)
    steps = _field(doc, "steps", list, where)
    try:
        model = catalog.get(name).make(variant, params)
    except ValueError as exc:
        raise ReplayError(f"{where}: {exc}") from None
    inits = list(model.init_states())
    if not 0 <= init_index < len(inits):
        raise ReplayError(f"{where}: initial state {init_index} does not exist")
    state = inits[init_index]
    trace = Trace(state, init_index, [])
    for number, step in enumerate(steps, start=1):
        if not isinstance(step, dict) or not isinstance(step.get("action_id"), str):
            raise ReplayError(f"{where}: step {number} has no action_id")
        match = [(a, t) for a, t in model.successors(state) if canonical(a) == step["action_id"]]
        if not match:
            raise ReplayError(f"{where}: step {number} ({step.get('action')}) is not enabled "
                              "in the reference implementation")
        action, nxt = match[0]
        events = [event_json(e) for e in model.step_events(state, action, nxt)]
        if "events" in step and events != step["events"]:
            raise ReplayError(f"{where}: step {number} ({step.get('action')}) emits {events}, "
                              f"the artifact says {step['events']}")
        trace.steps.append((action, nxt))
        state = nxt
    return model, trace, judge(model, state, spec)


def judge(model: Model[Any], state: Any, spec: str) -> str | None:
    """The message of `spec` on `state`, as the explorer would judge it there."""
    successors = model.successors(state)
    if spec == DEADLOCK and not successors and not model.finished(state):
        return "no action is enabled and the protocol has not finished"
    for p in model.properties():
        if p.spec != spec:
            continue
        if p.kind == "quiescence" and not model.quiescent(state, successors):
            continue
        message = p.check(state)
        if message is not None:
            return message
    return None

"""Counterexamples and coverage paths rebuilt after the search: `rebuild`, `goal_step`.

The search keeps no states, only fingerprints with the fingerprint of the state each was first
reached from (checker/engine/fingerprints.py). A trace is rebuilt by following those parents back
to an initial state and re-executing the model forward, at each step taking the successor whose
fingerprint is the next one: with symmetry the trace is then concrete, not a representative's.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable
from typing import Any

from partsafe.checker.engine.fingerprints import FingerprintTable, fingerprint
from partsafe.checker.engine.model import Action, Goal, Model
from partsafe.checker.engine.result import Trace


def fingerprint_of(rep: Callable[[Any], Any] | None, state: Any) -> int:
    """The fingerprint the search gave `state`: its representative's, with symmetry."""
    return fingerprint(rep(state) if rep else state)


def rebuild(model: Model[Any], rep: Callable[[Any], Any] | None, table: FingerprintTable,
            fp: int) -> Trace:
    """Re-execute the model along the parent fingerprints that lead to `fp`."""
    chain = [fp]
    while (parent := table.parent(chain[-1])) != 0:
        chain.append(parent)
    chain.reverse()
    inits = [(i, s) for i, s in enumerate(model.init_states())
             if fingerprint_of(rep, s) == chain[0]]
    if not inits:  # pragma: no cover - the table only holds fingerprints of reached states
        raise RuntimeError("no initial state matches the trace")
    index, init = inits[0]
    trace = Trace(init, index, [])
    state = init
    for target in chain[1:]:
        for a, t in model.successors(state):
            if fingerprint_of(rep, t) == target:
                trace.steps.append((a, t))
                state = t
                break
        else:  # pragma: no cover
            raise RuntimeError("a parent fingerprint has no matching successor")
    return trace


def goal_step(model: Model[Any], rep: Callable[[Any], Any] | None, trace: Trace,
              goal: Goal[Any], action: Action, target: int) -> tuple[Action, Hashable]:
    """The step that reached `goal` from the end of `trace`: `action` itself, or, when the trace
    was rebuilt to another member of the state's symmetry class (a search resumed from a
    checkpoint may keep another member than a rebuild reaches), a step to a state of the same
    class (`target`) that reaches the goal too."""
    state = trace.steps[-1][1] if trace.steps else trace.init
    succ = model.successors(state)
    for a, t in succ:
        if a == action:
            return a, t
    for a, t in succ:
        if fingerprint_of(rep, t) == target and goal.reached(state, a, t):
            return a, t
    raise RuntimeError(f"goal {goal.name} is not reached again while rebuilding its trace")


def depth_of(table: FingerprintTable, fp: int) -> int:
    """The BFS depth of `fp`: the number of parents before an initial state."""
    depth = 0
    while (fp := table.parent(fp)) != 0:
        depth += 1
    return depth

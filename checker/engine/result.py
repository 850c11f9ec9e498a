"""What a search is given and what it gives back: `Bounds`, `Progress`, `Result` with its
`Violation`s and `GoalResult`s, each with a `Trace`; `step_views` shows a trace to people."""

from __future__ import annotations

from collections.abc import Hashable
from dataclasses import dataclass, field
from typing import Any

from partsafe.checker.engine.model import Action, Model, StepView


@dataclass
class Trace:
    """A path from an initial state: the initial state and each (action, state) after it."""

    init: Hashable
    init_index: int
    steps: list[tuple[Action, Hashable]]
    #: for a lasso: the index of the first step of the cycle (the steps from there on return
    #: to the state before it, for ever)
    loop_start: int | None = None

    @property
    def depth(self) -> int:
        return len(self.steps)


@dataclass
class Violation:
    spec: str
    message: str
    trace: Trace


@dataclass
class GoalResult:
    name: str
    description: str
    reached: bool
    trace: Trace | None = None


@dataclass
class Progress:
    distinct_states: int
    transitions: int
    depth: int
    queue: int
    seconds: float

    @property
    def states_per_second(self) -> float:
        return self.distinct_states / self.seconds if self.seconds > 0 else 0.0


@dataclass
class Result:
    """The outcome of one exploration. `result` is ok, violation, gap or incomplete."""

    model: str
    variant: str
    scope: dict[str, Any]
    symmetry: bool
    result: str
    distinct_states: int
    transitions: int
    depth: int
    seconds: float
    fired: dict[str, int]
    never_fired: list[str]
    violations: list[Violation]
    goals: list[GoalResult]
    incomplete_reason: str | None = None
    table_bytes: int = 0
    #: the release profile the model followed (refimpl/profiles.py)
    profile: str = "fixed"
    #: the depth a checkpoint was resumed at, when the search began in an earlier process
    resumed_at: int | None = None
    #: processes that expanded the levels (1: the searching process itself)
    workers: int = 1
    #: per level finished in this process: (depth, frontier, distinct states so far, seconds)
    levels: list[tuple[int, int, int, float]] = field(default_factory=list)
    #: the search ended at a violation before its states were all searched (the first one, or
    #: the one `until` waited for): the coverage goals not reached were never judged
    stopped_at_violation: bool = False

    @property
    def states_per_second(self) -> float:
        return self.distinct_states / self.seconds if self.seconds > 0 else 0.0


@dataclass
class Bounds:
    """Search bounds; reaching one makes the result `incomplete`, never `ok`."""

    max_depth: int | None = None
    max_states: int | None = None
    max_seconds: float | None = None


def step_views(model: Model[Any], trace: Trace) -> list[StepView]:
    """Readable steps of a trace: action, node, events and the state after each step."""
    views = [StepView("init", None, model.init_events(trace.init),
                      model.describe_state(trace.init))]
    prev = trace.init
    for action, state in trace.steps:
        text, node = model.describe_action(action)
        views.append(StepView(text, node, model.step_events(prev, action, state),
                              model.describe_state(state)))
        prev = state
    return views

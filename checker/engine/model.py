"""The model interface the explorer searches, in the spirit of Stateright's `Model` trait.

A model is a transition system plus what to check on it, kept apart from the search:

- `init_states()` and `successors(state)` (or `actions` + `next_state`) define the system;
- `properties()` are what must hold: `always` properties on every reachable state, `quiescence`
  properties on states where nothing but faults can happen (`quiescent`);
- `goals()` are the "sometimes" properties: scenarios that must be reachable for a clean verdict to
  mean anything;
- `lassos()` are the "finitely often" properties: no reachable cycle may contain a marked
  transition (a rebalance that never ends);
- `representative(state)` maps a state to a canonical member of its symmetry class;
- `finished(state)` says a state without successors is a proper end, not a deadlock.

An action is a tuple whose first element is its kind (``("deliver", src, dst, msg)``); the explorer
counts how often each kind fired. States must be immutable and hashable: the explorer stores only
their 64-bit fingerprints and re-executes the model to rebuild a counterexample.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable, Hashable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any, Generic, Literal, TypeVar

from partsafe.traces.events import Event

S = TypeVar("S", bound=Hashable)
Action = tuple[Any, ...]

PropertyKind = Literal["always", "quiescence"]


@dataclass(frozen=True)
class Property(Generic[S]):
    """A property checked on states: `check` returns None when it holds, else a message."""

    spec: str
    kind: PropertyKind
    check: Callable[[S], str | None]


@dataclass(frozen=True)
class Goal(Generic[S]):
    """A "sometimes" property: some transition `prev --action--> next` must satisfy `reached`."""

    name: str
    description: str
    reached: Callable[[S, Action, S], bool]


@dataclass(frozen=True)
class Lasso(Generic[S]):
    """A "finitely often" property: no reachable cycle of the state graph contains a transition
    `prev --action--> next` with `marked` true. A cycle that does is an infinite run that does
    the marked thing for ever, reported as a lasso: a path to the cycle, then the cycle."""

    spec: str
    description: str
    marked: Callable[[S, Action, S], bool]


@dataclass(frozen=True)
class StepView:
    """One step of a counterexample as shown to people and written to JSON."""

    action: str
    node: str | None
    events: tuple[Event, ...]
    state: dict[str, Any]


class Model(ABC, Generic[S]):
    """A finite transition system with the properties to check on it."""

    #: name shown in reports (``membership``, ``twophase``)
    name: str = "model"
    #: the variant of the protocol this model runs (``fixed`` for the current design)
    variant: str = "fixed"
    #: the release profile whose rules the protocol follows (refimpl/profiles.py)
    profile: str = "fixed"
    #: the scope the model was built at, for reports (set by each model's constructor)
    scope: dict[str, Any]
    #: False for one part of a scope split by fault targets (`ActorModel.restrict`): its goals
    #: are reported, but one not reached is no GAP, as the other parts may reach it
    goals_required: bool = True

    @abstractmethod
    def init_states(self) -> Iterable[S]:
        """The initial states."""

    def actions(self, state: S) -> Iterable[Action]:
        """The actions enabled in `state` (used by the default `successors`)."""
        raise NotImplementedError(f"{type(self).__name__} defines no actions")

    def next_state(self, state: S, action: Action) -> S | None:
        """The state after `action`; None if the action changes nothing."""
        raise NotImplementedError(f"{type(self).__name__} defines no next_state")

    def successors(self, state: S) -> list[tuple[Action, S]]:
        """Every enabled action with the state it leads to. The explorer's hot path calls this."""
        out = []
        for action in self.actions(state):
            nxt = self.next_state(state, action)
            if nxt is not None:
                out.append((action, nxt))
        return out

    def init_events(self, state: S) -> tuple[Event, ...]:
        """The events an initial state comes with (the member lists the nodes start with)."""
        return ()

    def properties(self) -> Sequence[Property[S]]:
        return ()

    def goals(self) -> Sequence[Goal[S]]:
        return ()

    def lassos(self) -> Sequence[Lasso[S]]:
        """Properties of the state graph's cycles; the explorer then keeps every edge."""
        return ()

    def representative(self, state: S) -> S:
        """Canonical member of `state`'s symmetry class; identity when the model has no symmetry."""
        return state

    @property
    def has_symmetry(self) -> bool:
        return type(self).representative is not Model.representative

    def restore(self, states: list[S]) -> list[S]:
        """`states` read back from a checkpoint: unpickled, equal but not identical to the objects
        the model made; a model that compares parts of its states by identity restores them."""
        return states

    def finished(self, state: S) -> bool:
        """True if `state` is a proper end (a state without successors is then no deadlock)."""
        return False

    def quiescent(self, state: S, successors: Sequence[tuple[Action, S]]) -> bool:
        """True if nothing but faults can happen in `state`; quiescence properties apply there."""
        return False

    # -- presentation ---------------------------------------------------------------------------

    def describe_action(self, action: Action) -> tuple[str, str | None]:
        """A readable form of `action` and the node it happens at (if any)."""
        return " ".join(str(a) for a in action), None

    def describe_state(self, state: S) -> dict[str, Any]:
        """A JSON-able view of `state`, per node where the model has nodes."""
        return {"state": repr(state)}

    def step_events(self, state: S, action: Action, next_state: S) -> tuple[Event, ...]:
        """The events the step emits (for counterexample display)."""
        return ()

"""Spec monitors: small automata over events, with hashable state and no I/O.

In the spirit of the P language's spec monitors, a monitor observes events and flags a violation;
the explorer carries each monitor's state inside its global state (so it must be small, immutable
and hashable) and the validator runs the same monitor over events parsed from logs. A monitor
treats what it did not see as unknown, never as a violation.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Hashable, Iterable
from typing import Any, ClassVar

from partsafe.traces.events import Event

#: a monitor's map from keys (members, migrations, ...) to values, as a hashable frozenset of pairs,
#: so that the explorer can hash it and rename members in it without re-sorting anything
Pairs = frozenset[tuple[Hashable, Any]]
NO_PAIRS: Pairs = frozenset()


def lookup(pairs: Pairs, key: Hashable, default: Any = None) -> Any:
    for k, v in pairs:
        if k == key:
            return v
    return default


def assign(pairs: Pairs, key: Hashable, value: Any) -> Pairs:
    """`pairs` with `key` set to `value`."""
    return frozenset([(k, v) for k, v in pairs if k != key] + [(key, value)])


class Monitor(ABC):
    """An event monitor for one spec."""

    #: the spec id this monitor is the Python form of
    spec: ClassVar[str]
    #: the event types it observes; others leave its state unchanged
    observes: ClassVar[frozenset[str]]

    @abstractmethod
    def initial(self) -> Hashable:
        """The state before any event."""

    @abstractmethod
    def observe(self, state: Hashable, event: Event) -> tuple[Hashable, str | None]:
        """The state after `event`, and a message if `event` violates the spec."""

    def at_quiescence(self, state: Hashable) -> str | None:
        """A message if the spec is violated once nothing but faults can happen any more."""
        return None


def run(
    monitor: Monitor, events: Iterable[Event], *, quiescent_at_end: bool = False
) -> list[tuple[Event | None, str]]:
    """Run `monitor` over `events`; every violation with the event that raised it.

    With `quiescent_at_end` the quiescence check runs after the last event (reported with event
    None): right for a finished simulation, not for a log that merely stops.
    """
    state = monitor.initial()
    found: list[tuple[Event | None, str]] = []
    for ev in events:
        if ev.TYPE not in monitor.observes:
            continue
        state, message = monitor.observe(state, ev)
        if message is not None:
            found.append((ev, message))
    if quiescent_at_end:
        message = monitor.at_quiescence(state)
        if message is not None:
            found.append((None, message))
    return found

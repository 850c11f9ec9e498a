"""Spec monitors: small automata over events, with hashable state and no I/O.

In the spirit of the P language's spec monitors, a monitor observes events and flags a violation;
the explorer carries each monitor's state inside its global state (so it must be small, immutable
and hashable) and the validator runs the same monitor over events parsed from logs. A monitor
treats what it did not see as unknown, never as a violation, and so it treats an event a log
shows without naming its member (`UNKNOWN_MEMBER`): `Monitor.step`, the one way the validator and
`run` feed a monitor, lets such an event change nothing and raise nothing, for every monitor.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Hashable, Iterable
from typing import Any, ClassVar

from partsafe.traces.events import UNKNOWN_MEMBER, Event

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
    """`pairs` with `key` set to `value`: `pairs` itself when it holds that already, else its
    entry of `key` taken out and the new one put in (set operations on the rest, which is not
    rebuilt). A key has one entry: every `Pairs` is made by `assign`, or from one by a map
    that keeps its keys distinct."""
    for kv in pairs:
        if kv[0] == key:
            if kv[1] == value:
                return pairs
            return pairs.difference((kv,)) | {(key, value)}
    return pairs | {(key, value)}


class Monitor(ABC):
    """An event monitor for one spec."""

    #: the spec id this monitor is the Python form of
    spec: ClassVar[str]
    #: the event types it observes; others leave its state unchanged
    observes: ClassVar[frozenset[str]]
    #: the observed types at which it may raise a violation (None: any it observes); the
    #: others only bring its state up to date, so over events of none of these types it raises
    #: nothing (the validator does not run it on a record that shows none)
    judged_on: ClassVar[frozenset[str] | None] = None

    @abstractmethod
    def initial(self) -> Hashable:
        """The state before any event."""

    @abstractmethod
    def observe(self, state: Hashable, event: Event) -> tuple[Hashable, str | None]:
        """The state after `event`, and a message if `event` violates the spec. Runs on events
        whose member is known (`step` answers for the others)."""

    def step(self, state: Hashable, event: Event) -> tuple[Hashable, str | None]:
        """`observe`, for events read from logs too (the same monitors judge models and logs, and
        what a log does not show is unknown). An event whose member is
        `UNKNOWN_MEMBER` (a member list no record line attributes to a member) leaves `state` as
        it is and raises nothing: every spec judges what a member did, and a violation names
        that member. The explorer always knows the member and calls `observe` directly."""
        if event.member == UNKNOWN_MEMBER:
            return state, None
        return self.observe(state, event)

    def verdict_types(self) -> frozenset[str]:
        """The event types at which it may raise a violation (`judged_on`)."""
        return self.judged_on if self.judged_on is not None else self.observes

    def at_quiescence(self, state: Hashable) -> str | None:
        """A message if the spec is violated once nothing but faults can happen any more."""
        return None

    # -- keys: how the state splits, so that a monitor runs per key (the validator's engines)

    #: the length of a key of this monitor's state (0: the state is one piece)
    key_size: ClassVar[int] = 0

    def key(self, event: Event) -> tuple[Hashable, ...] | None:
        """The part of the state `event` reads and writes, for a monitor whose state is a map
        from keys to independent parts (P's monitors are per machine in the same way):

        - a key of `key_size` components: the event reads and writes that part alone;
        - ``()``, for a member that crashed or restarted: the event makes the parts forget what
          its member did there. It raises nothing, and what it removes is read only by that
          member's later events in a part, or in the part whose key names the member; so it is
          delivered to the parts whose key names its member and to those its member has events
          in before and after it, and to any other part it would change nothing. Nor does it
          change a part in its initial state, or one it made forget its member's events when
          its member has had no event there since (the validator leaves those out);
        - None: the event changes nothing and raises nothing (the validator's `routes`
          gives None for an event whose member is unknown, whatever the key, as `step` does).

        Running the monitor once per key over that key's events, in order, finds exactly what
        one run over all events finds (tests/validation/test_shards.py checks it for every log
        spec)."""
        return ()

    def parts(self) -> tuple[Monitor, ...]:
        """The separately keyed monitors this one is the conjunction of (itself, usually)."""
        return (self,)


class PerMember(Monitor):
    """A monitor whose state is a map from members to what each did (`Pairs`, empty at first):
    every event it observes is keyed by its member."""

    key_size: ClassVar[int] = 1

    def key(self, event: Event) -> tuple[Hashable, ...] | None:
        return (event.member,)

    def initial(self) -> Hashable:
        return NO_PAIRS


class Conjunction(Monitor):
    """One spec that is the conjunction of monitors keyed differently (per member, and per
    master and version, say): its state is the tuple of theirs, and an event is judged by each
    part that observes it; the first message is the spec's."""

    #: the parts, in the order their messages take precedence
    PARTS: ClassVar[tuple[type[Monitor], ...]] = ()

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        cls.observes = frozenset().union(*(p.observes for p in cls.PARTS))

    def __init__(self) -> None:
        self._parts = tuple(p() for p in self.PARTS)

    def parts(self) -> tuple[Monitor, ...]:
        return self._parts

    def key(self, event: Event) -> tuple[Hashable, ...] | None:
        raise TypeError(f"{type(self).__name__} is run by its parts, each with its own key")

    def initial(self) -> Hashable:
        return tuple(p.initial() for p in self._parts)

    def observe(self, state: Hashable, event: Event) -> tuple[Hashable, str | None]:
        states = list(state)  # type: ignore[call-overload]
        first = None
        for i, part in enumerate(self._parts):
            if event.TYPE in part.observes:
                states[i], message = part.observe(states[i], event)
                first = first or message
        return tuple(states), first


def run(
    monitor: Monitor, events: Iterable[Event], *, quiescent_at_end: bool = False
) -> list[tuple[Event | None, str]]:
    """Run `monitor` over `events` (`Monitor.step`: an event whose member is unknown changes
    nothing); every violation with the event that raised it.

    With `quiescent_at_end` the quiescence check runs after the last event (reported with event
    None): right for a finished simulation, not for a log that merely stops.
    """
    state = monitor.initial()
    found: list[tuple[Event | None, str]] = []
    for ev in events:
        if ev.TYPE not in monitor.observes:
            continue
        state, message = monitor.step(state, ev)
        if message is not None:
            found.append((ev, message))
    if quiescent_at_end:
        message = monitor.at_quiescence(state)
        if message is not None:
            found.append((None, message))
    return found

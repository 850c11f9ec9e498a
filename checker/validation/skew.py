"""Verdicts under clock skew: is a cross-member violation in every order the log allows, or in
some?

A log orders each member's own events (its file), and nothing else for certain: the members'
clocks differ, and docker-compose interleaves their lines out of time order. The validator
merges the members' streams by timestamp (`shards.stamped`), and a violation found in that
merge rests, when its shard holds events of several members, on an order between members that
the timestamps only suggest. This module decides it, for one candidate violation at a time:

- The window: the shard's events whose order against the violating event is uncertain, closed
  under "another member's event within the skew bound (plus the 1 ms of a timestamp), or
  without a timestamp"; the events before it are certainly before, those after certainly after.
  Only the window's events go to Z3, never the log.
- What the log proves about their real times, as Z3 integer constraints (microseconds): each
  member's clock is off by some ``o_m`` in ``[0, max_skew]`` (so any two differ by at most the
  bound); an event stamped ``ts`` ms happened in ``[ts, ts + 1)`` ms of its member's clock; each
  member's own events keep its order; and the causal edges the log shows hold (`causal`): a
  member list is installed after its master printed it, a migration's participants start after
  the master started it and commit after starting it, a master commits after its destination
  did and a source after its master, a shutdown request is handled after it was made, a leader
  is elected after the votes it counted.
- The orders: every linear order of the window consistent with those constraints (depth-first,
  each prefix checked with Z3), each run through the monitor's part from the state before the
  window. **Definite**: every consistent order breaks the spec. **Possible**: some order
  breaks it (the timestamps' own order does) and some does not; the report shows the order
  that breaks it, with real times Z3 found for it.

A violation whose window holds one member's events needs no solver: it is definite as found
(per-member verdicts stay as they are).
"""

from __future__ import annotations

import itertools
from collections.abc import Hashable, Sequence
from dataclasses import dataclass

import z3

from partsafe.checker.validation.shards import OrderKey, Part
from partsafe.traces.events import (
    Event,
    MemberListInstalled,
    MigrationCommitted,
    MigrationStarted,
    Quiescent,
    RaftLeader,
    RaftVote,
    ShutdownRequested,
    ShutdownRequestHandled,
    Source,
)

#: the default bound on the difference between two members' clocks, in milliseconds: what NTP
#: keeps hosts of one data centre within, with room to spare
DEFAULT_MAX_SKEW_MS = 100
#: the most events a window may hold, and the most orders' prefixes tried, before the verdict
#: is left at "possible" (undecided, said in its note)
MAX_WINDOW = 16
MAX_TRIES = 20_000

#: one event of a shard, as the engines feed it: order key, event, routed
Step = tuple[OrderKey, Event, bool]


@dataclass(frozen=True)
class Placed:
    """One event of an order a verdict shows: where it is, whose, and its real time in
    microseconds on a common clock (Z3's model)."""

    source: Source | None
    member: str
    type: str
    time_us: int

    def as_dict(self) -> dict[str, object]:
        return {"file": self.source.file if self.source else None,
                "line": self.source.line if self.source else None,
                "member": self.member, "type": self.type, "time_us": self.time_us}


@dataclass(frozen=True)
class Verdict:
    """What the log proves of a candidate violation: ``definite`` or ``possible``, the order
    that breaks the spec (for a possible one, with real times), and how many events and members
    the window held."""

    certainty: str
    order: tuple[Placed, ...] = ()
    window: int = 1
    members: int = 1
    note: str = ""


DEFINITE = Verdict("definite")


def decide(part: Part, steps: Sequence[Step], at: OrderKey, max_skew_ms: int
           ) -> Verdict | None:
    """The verdict on `part`'s violation raised at the event of order key `at`, given the
    shard's events `steps` (in order key order); None when no order the log allows breaks the
    spec (the timestamps suggested an order the log's causal edges rule out)."""
    index = next(i for i, (k, _, _) in enumerate(steps) if k == at)
    lo, hi = _window(steps, index, max_skew_ms)
    window = steps[lo:hi + 1]
    members = {ev.member for _, ev, _ in window}
    if len({_stream(k) for k, _, _ in window}) < 2:
        return DEFINITE
    if len(window) > MAX_WINDOW:
        return Verdict("possible", window=len(window), members=len(members),
                       note=f"{len(window)} events of {len(members)} members in uncertain order:"
                            f" more than the {MAX_WINDOW} decided here")
    state = part.monitor.initial()
    for _, ev, _ in steps[:lo]:
        state, _ = _step(part, state, ev)
    solver, times = _constraints(window, max_skew_ms)
    broken, tries = _order(part, state, window, solver, times, breaks=True)
    if broken is None:
        if tries >= MAX_TRIES:
            return Verdict("possible", window=len(window), members=len(members),
                           note=f"undecided after {MAX_TRIES:,} orders' prefixes")
        return None
    shown = _placed(window, broken, solver, times)
    kept, tries = _order(part, state, window, solver, times, breaks=False)
    if kept is None and tries >= MAX_TRIES:
        return Verdict("possible", shown, len(window), len(members),
                       f"undecided after {MAX_TRIES:,} orders' prefixes")
    return Verdict("definite" if kept is None else "possible", shown, len(window),
                   len(members))


def _step(part: Part, state: Hashable, ev: Event) -> tuple[Hashable, str | None]:
    if isinstance(ev, Quiescent):
        return state, part.monitor.at_quiescence(state)
    return part.monitor.step(state, ev)


def _window(steps: Sequence[Step], index: int, max_skew_ms: int) -> tuple[int, int]:
    """The first and last index of the events whose order against the violating one is
    uncertain, closed under uncertainty: a contiguous run of the merge, grown outwards from the
    violating event. The merge is sorted by timestamp, so the growth stops on each side at the
    first event further than the bound from every event of the run (or once the run is longer
    than `MAX_WINDOW`, which is then left undecided)."""
    lo = hi = index
    bound = max_skew_ms + 2
    grown = True
    while grown and hi - lo < MAX_WINDOW:
        grown = False
        run = steps[lo:hi + 1]
        earliest = min(k[0] for k, _, _ in run)
        latest = max(k[0] for k, _, _ in run)
        for i in range(lo - 1, -1, -1):
            k, ev, _ = steps[i]
            if any(_uncertain(k, ev, kk, e, max_skew_ms) for kk, e, _ in run):
                lo, grown = i, True
            elif ev.order is not None and k[0] < earliest - bound:
                break
        for i in range(hi + 1, len(steps)):
            k, ev, _ = steps[i]
            if any(_uncertain(k, ev, kk, e, max_skew_ms) for kk, e, _ in run):
                hi, grown = i, True
            elif ev.order is not None and k[0] > latest + bound:
                break
    return lo, hi


def _stream(k: OrderKey) -> tuple[int, int]:
    """The stream of an event (its file, where its stream starts in it): a member's events in a
    log, a whole event file; a stream's order is certain."""
    return k[1], k[2]


def _uncertain(ka: OrderKey, a: Event, kb: OrderKey, b: Event, max_skew_ms: int) -> bool:
    """Whether the order of two events of different streams is uncertain: one has no timestamp,
    or they are within the skew bound (within a millisecond for one member's clock)."""
    if _stream(ka) == _stream(kb):
        return False
    if a.order is None or b.order is None:
        return True
    bound = 1 if a.member == b.member else max_skew_ms + 1
    return abs(ka[0] - kb[0]) <= bound


def causal(a: Event, b: Event) -> bool:
    """Whether the log shows that `a` happened before `b` (events of different members)."""
    if isinstance(b, MemberListInstalled) and isinstance(a, MemberListInstalled):
        return (a.member == b.master == a.master and b.member != b.master
                and (a.version, a.members) == (b.version, b.members))
    if isinstance(a, MigrationStarted) and a.role == "master":
        if isinstance(b, MigrationStarted) and b.role != "master":
            return b.migration == a.migration
        return isinstance(b, MigrationCommitted) and b.migration == a.migration
    if isinstance(a, MigrationCommitted) and a.role == "destination":
        # a master's commit is its destination's answer to the commit (a Hazelcast log shows it
        # only as `Migration commit result true from <destination>`), which the destination
        # gives once it committed (`commitMigrationOnDestination` finalizes, then answers)
        return (isinstance(b, MigrationCommitted) and b.role == "master"
                and b.migration == a.migration)
    if isinstance(a, MigrationCommitted) and a.role == "master":
        # the source commits once the master did (000 §2.1: "we commit a migration on MIGRATION
        # SOURCE only when it is committed in MASTER"): it learns of it from the master's
        # completed migrations (``Applying completed migration``, then ``Finalizing``)
        return (isinstance(b, MigrationCommitted) and b.role == "source"
                and b.migration == a.migration)
    if isinstance(a, ShutdownRequested) and isinstance(b, ShutdownRequestHandled):
        return b.requester == a.member
    if isinstance(a, RaftVote) and isinstance(b, RaftLeader):
        return a.candidate == b.member and a.term == b.term and a.member in b.votes
    return False


def _constraints(window: Sequence[Step], max_skew_ms: int
                 ) -> tuple[z3.Solver, list[z3.ArithRef]]:
    """The solver holding what the log proves of the window's real times, and their variables."""
    solver = z3.Solver()
    skew_us = max_skew_ms * 1000
    offsets: dict[str, z3.ArithRef] = {}
    times = [z3.Int(f"t{i}") for i in range(len(window))]
    last: dict[tuple[int, int], int] = {}
    for i, (k, ev, _) in enumerate(window):
        o = offsets.get(ev.member)
        if o is None:
            o = offsets[ev.member] = z3.Int(f"o{len(offsets)}")
            solver.add(o >= 0, o <= skew_us)
        solver.add(times[i] >= k[0] * 1000 - o)
        if ev.order is not None:
            solver.add(times[i] <= k[0] * 1000 + 999 - o)
        stream = _stream(k)
        if stream in last:
            solver.add(times[last[stream]] < times[i])
        last[stream] = i
    for i, (_, a, _) in enumerate(window):
        for j, (_, b, _) in enumerate(window):
            if a.member != b.member and causal(a, b):
                solver.add(times[i] < times[j])
    return solver, times


def _order(part: Part, state: Hashable, window: Sequence[Step], solver: z3.Solver,
           times: list[z3.ArithRef], *, breaks: bool) -> tuple[list[int] | None, int]:
    """An order of the window consistent with the solver in which the part raises a violation
    (`breaks`) or raises none, or None; and the prefixes tried. Each prefix is checked with the
    solver (its last event before every event left), depth first, the timestamps' order first."""
    tries = 0

    def search(state: Hashable, broken: bool, placed: list[int], left: list[int]
               ) -> list[int] | None:
        nonlocal tries
        if not left:
            return placed if broken == breaks else None
        for c in left:
            if tries >= MAX_TRIES:
                return None
            tries += 1
            rest = [r for r in left if r != c]
            solver.push()
            solver.add(*(times[c] < times[r] for r in rest))
            if solver.check() == z3.sat:
                after, now = state, broken
                if not broken:
                    after, message = _step(part, state, window[c][1])
                    now = message is not None
                if not (now and not breaks):  # a broken prefix cannot avoid the violation
                    found = search(after, now, [*placed, c], rest)
                    if found is not None:
                        solver.pop()
                        return found
            solver.pop()
        return None

    return search(state, False, [], list(range(len(window)))), tries


def _placed(window: Sequence[Step], order: list[int], solver: z3.Solver,
            times: list[z3.ArithRef]) -> tuple[Placed, ...]:
    """The window in `order`, with real times from a model of the solver in that order."""
    solver.push()
    solver.add(*(times[a] < times[b] for a, b in itertools.pairwise(order)))
    assert solver.check() == z3.sat
    model = solver.model()
    solver.pop()
    return tuple(Placed(window[i][1].source, window[i][1].member, window[i][1].TYPE,
                        model.eval(times[i], model_completion=True).as_long()) for i in order)

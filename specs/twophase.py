"""TwoPhase's invariant as a monitor: the calibration model's TCConsistent over its events.

The TLA+ specification `TwoPhase` (Lamport, "Consensus on Transaction Commit") states
TCConsistent on states: no resource manager is committed while another is aborted. The explorer
checks it on the model's packed states (checker/protocols/twophase.py, whose distinct-state
counts are TLC's); this monitor judges the same invariant on TwoPhase's events, so that an
exported run or an instrumented two-phase commit is judged on its event file.
"""

from __future__ import annotations

from collections.abc import Hashable

from partsafe.specs.monitor import Monitor
from partsafe.specs.registry import Spec, register
from partsafe.traces.events import Event, RmStateChanged


class Consistent(Monitor):
    """TC-CONSISTENT: no RM commits while another has aborted, nor aborts while another has
    committed. The state is the RMs that committed and those that aborted, as one frozenset of
    (rm, outcome): it grows with the RMs, never with the run."""

    spec = "TC-CONSISTENT"
    observes = frozenset({RmStateChanged.TYPE})

    def initial(self) -> Hashable:
        return frozenset()

    def observe(self, state: Hashable, event: Event) -> tuple[Hashable, str | None]:
        done: frozenset[tuple[str, str]] = state  # type: ignore[assignment]
        assert isinstance(event, RmStateChanged)
        if event.state not in ("committed", "aborted"):
            return done, None
        other = "aborted" if event.state == "committed" else "committed"
        clash = sorted(rm for rm, outcome in done if outcome == other and rm != event.member)
        after = frozenset({*(x for x in done if x[0] != event.member),
                           (event.member, event.state)})
        if clash:
            return after, f"{event.member} {event.state} while {clash[0]} {other}"
        return after, None


register(Spec(
    id="TC-CONSISTENT",
    title="No resource manager commits while another aborts",
    statement="No two resource managers are one committed and the other aborted "
              "(TwoPhase's TCConsistent).",
    seed="TwoPhase",
    section="TCConsistent (Lamport, \"Consensus on Transaction Commit\", TwoPhase.tla)",
    kind="state invariant",
    monitor=Consistent,
    rationale="The calibration model's invariant: the explorer checks it on TwoPhase's states "
              "(whose distinct-state counts pin the explorer's to TLC's), and this monitor on "
              "its events, so that exported runs round-trip through event files.",
))

MONITORS = (Consistent,)

"""The lab's fault schedule: what it injects, into which member, in which order, fixed by a seed.

``--faults`` lists steps, each ``KIND`` or ``KIND:TARGET``, run in the order given:

- ``kill``: kill -9 of a member's JVM; it stays down (a crash, design 002's "member crash");
- ``restart``: kill -9, then the same member started again after `RESTART_AFTER` seconds: a new
  incarnation, with a new UUID, on the same address;
- ``shutdown``: a graceful shutdown (design 004: the member hands its replicas off first);
- ``pause``: SIGSTOP for `PAUSE_FOR` seconds, longer than the lab's heartbeat timeout (8 s), so
  that the others suspect and remove it, then SIGCONT: it comes back and merges (a false
  suspicion, design 002);
- ``join``: a new member starts and joins;
- ``partition``: the member is cut off from all the others and from the client for
  `PARTITION_FOR` seconds (each member then runs in a network namespace of its own, as root:
  checker/lab/cluster.py's `Network`), then the network heals: both sides run as clusters of
  their own, then merge (design 002's split brain).

TARGET is ``master`` (the oldest member of the current member list), a member's number (``2``)
or ``any`` (the default): a member drawn with the seed from those the step can take. A step
that would leave no member up is skipped, and the journal says so.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["KINDS", "PARTITION_FOR", "PAUSE_FOR", "RESTART_AFTER", "FaultError", "Step",
           "parse_faults"]

KINDS = ("kill", "restart", "shutdown", "pause", "join", "partition")
#: a killed member's restart comes this many seconds after its kill
RESTART_AFTER = 10.0
#: a paused member is stopped this long (the lab's members suspect after 8 s without heartbeat)
PAUSE_FOR = 14.0
#: a member cut off by a network partition stays cut this long
PARTITION_FOR = 20.0


class FaultError(ValueError):
    """A --faults value that names no fault the lab injects."""


@dataclass(frozen=True, slots=True)
class Step:
    """One fault of the schedule: its kind and whom it targets (``any``, ``master`` or a member's
    number as text)."""

    kind: str
    target: str = "any"

    def __str__(self) -> str:
        return self.kind if self.target == "any" else f"{self.kind}:{self.target}"


def parse_faults(text: str, members: int) -> tuple[Step, ...]:
    """The steps of a ``--faults`` value (comma-separated; empty: none)."""
    steps: list[Step] = []
    for item in (part.strip() for part in text.split(",")):
        if not item:
            continue
        kind, _colon, target = item.partition(":")
        if kind not in KINDS:
            raise FaultError(f"--faults: {kind!r} is no fault the lab injects; faults: "
                             f"{', '.join(KINDS)}")
        target = target or "any"
        if kind == "join" and target != "any":
            raise FaultError(f"--faults: {item!r}: a join starts a new member and takes no target")
        if target not in ("any", "master") and not (target.isdigit()
                                                    and 1 <= int(target) <= members):
            raise FaultError(f"--faults: {item!r}: a target is master, any or a member's number "
                             f"from 1 to {members}")
        steps.append(Step(kind, target))
    return tuple(steps)

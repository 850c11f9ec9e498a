"""What members log of a walk: the membership and partition walks of one incarnation of the
cluster as scripts of protocol events, and the pool of walks a run draws them from.

A membership walk (design 002) is written as it is, its suspicion reasons in a log's wording and a
new master's claim followed by its partition-table fetch. A partition walk (design 003, with the
graceful shutdown of 004) is reduced to what a log shows of it; the rest (the tables members
apply, the master's queues and shutdown requests) gives the lines derived from the state: the
partition versions applied, the migration statistics, the shutdown requests handled.
"""

from __future__ import annotations

import dataclasses
import random
from dataclasses import dataclass

from partsafe.checker.validation.simulate.walk import MAX_STEPS, Unfinished, Walk
from partsafe.traces import events as ev

#: walks kept per model scope; eras draw from them and rename
POOL = 8
#: the membership model's largest scope (nodes named A..Z)
MAX_MEMBERSHIP_NODES = 26
#: the partition walk's largest scope (members, partitions): kept small, walks get slow beyond
MAX_PARTITION_MEMBERS = 6
MAX_PARTITION_PARTITIONS = 16


@dataclass(frozen=True)
class Script:
    """A walk ready to be written: the events of each step, in the walk's node names."""

    steps: tuple[tuple[ev.Event, ...], ...]
    nodes: tuple[str, ...]


#: how the membership model's suspicion reasons read in a log (docs/validation.md §4)
REASONS = {"crashed": "No connection", "no heartbeat": "No connection",
           "false suspicion": "explicit suspicion"}


def membership_scope(nodes: int) -> dict[str, int]:
    """The membership walk's scope for a cluster of `nodes` (at most 26): a joiner or two, a
    crash, a false suspicion (none of them for two nodes: a walk spends its whole budget, and
    a cluster of one is left)."""
    joiners = 0 if nodes < 3 else min(2, max(1, nodes // 10))
    return {"members": nodes - joiners, "joiners": joiners, "joins": joiners,
            "crashes": 1 if nodes >= 3 else 0,
            "suspicions": 1 if nodes >= 3 else 0, "losses": 0, "duplications": 0,
            "publishes": 0}


def partition_scope(members: int, partitions: int) -> dict[str, int]:
    """The partition walk's scope: no joins or crashes (membership is the membership walk's),
    one backup, graceful shutdowns when there are members to spare."""
    return {"members": members, "joiners": 0, "joins": 0, "crashes": 0,
            "partitions": partitions, "backups": 1 if members > 1 else 0,
            "shutdowns": 0 if members < 3 else 1 if members < 6 else 2,
            "losses": 0, "reorders": 0, "max-parallel": 2}


def membership_script(scope: dict[str, int], rng: random.Random) -> Script:
    """A walk of the membership model (002); a new master's claim is followed by its
    partition-table fetch (docs/validation.md §5, §7)."""
    steps = []
    walk = Walk("membership", scope, rng, MAX_STEPS)
    for _step, events, _world, _next in walk:
        out: list[ev.Event] = []
        for e in events:
            if isinstance(e, ev.MemberSuspected) and e.reason in REASONS:
                e = dataclasses.replace(e, reason=REASONS[e.reason])
            out.append(e)
            if isinstance(e, ev.MastershipClaimed):
                out.extend(ev.PartitionTableFetch(member=e.member, phase=phase)
                           for phase in ("fetching", "determined", "applying"))
        steps.append(tuple(out))
    return Script(tuple(steps), walk.nodes)


@dataclass
class _Rebalance:
    """A master's rebalance in progress: its planned migrations, those done, whether one
    failed."""

    planned: int
    completed: int = 0
    failed: bool = False


def partition_script(scope: dict[str, int], rng: random.Random) -> Script | None:
    """A walk of the parallel partition model (003, 004) reduced to what members log, with the
    lines a log shows of the state (docs/validation.md §8, §9, §11); None for a walk whose master
    shuts down (the membership it would need is not simulated)."""
    from partsafe.refimpl.partition_service import Node

    steps: list[tuple[ev.Event, ...]] = []
    walk = Walk("parallel", scope, rng, MAX_STEPS)
    nodes = walk.nodes
    versions: dict[str, tuple[int, ...]] = {}
    shown: dict[tuple[str, int], int] = {}  # the last version logged per (member, partition)
    open_: dict[str, _Rebalance] = {}
    totals: dict[str, int] = {}

    def close(member: str) -> ev.Event:
        r = open_.pop(member)
        outcome = ("failed" if r.failed else "completed" if r.completed == r.planned
                   else "aborted")
        totals[member] = totals.get(member, 0) + r.completed
        return ev.MigrationsCompleted(member=member, planned=r.planned, completed=r.completed,
                                      remaining=r.planned - r.completed, outcome=outcome,
                                      total_completed=totals[member])

    for step, events, world, nxt in walk:
        out: list[ev.Event] = []
        if step:
            for name, before, after in zip(nodes, world.nodes, nxt.nodes, strict=True):
                if isinstance(before, Node) and isinstance(after, Node):
                    for requester in sorted(after.shutdown_requests - before.shutdown_requests):
                        out.append(ev.ShutdownRequestHandled(member=name, requester=requester))
        for e in events:
            me = e.member
            if isinstance(e, ev.ShutdownRequested) and me == nodes[0]:
                return None
            if isinstance(e, ev.PartitionTableApplied):
                new = e.partition_versions or ()
                old = versions.get(me)
                versions[me] = new
                for p, (a, v) in enumerate(zip(old or (), new, strict=False)):
                    if step and v > a and v > shown.get((me, p), -1):
                        shown[(me, p)] = v
                        out.append(ev.PartitionVersionApplied(member=me, partition=p, version=v))
            elif isinstance(e, ev.Repartitioning):
                if me in open_:
                    out.append(close(me))
                if e.planned:
                    open_[me] = _Rebalance(e.planned)
                out.append(e)
            elif isinstance(e, ev.MigrationStarted):
                if e.role == "master":
                    out.append(e)
            elif isinstance(e, ev.MigrationCommitted | ev.MigrationRolledBack):
                if e.role != "master":
                    continue
                r = open_.get(me)
                if r is not None:
                    r.completed += 1
                if isinstance(e, ev.MigrationRolledBack):
                    if r is not None:
                        r.failed = True
                    out.append(ev.MigrationFailed(member=me, migration=e.migration,
                                                  partition=e.partition,
                                                  reason="migration failed"))
                else:
                    out.append(e)
                if r is not None and r.completed % 4 == 0 and r.completed < r.planned:
                    st = nxt.nodes[nodes.index(me)]
                    tasks = sum(len(q) for q in st.queues) if isinstance(st, Node) else 0
                    if tasks:
                        out.append(ev.MigrationsCompleted(
                            member=me, planned=r.planned, completed=r.completed,
                            remaining=r.planned - r.completed, outcome="progress",
                            total_completed=totals.get(me, 0) + r.completed, tasks=tasks))
            elif isinstance(e, ev.ShutdownRequested | ev.MemberLeft | ev.PartitionLost):
                out.append(e)
        for member in sorted(open_):
            st = nxt.nodes[nodes.index(member)]
            if isinstance(st, Node) and not st.queues and not st.flights:
                out.append(close(member))
        steps.append(tuple(out))
    return Script(tuple(steps), nodes)


class Pools:
    """The walks of a run, made when first needed: `POOL` per scope, each from its own seed."""

    def __init__(self, seed: int) -> None:
        self.seed = seed
        self.scripts: dict[tuple[str, tuple[tuple[str, int], ...], int], Script] = {}

    def get(self, kind: str, scope: dict[str, int], index: int) -> Script:
        """The `index`-th walk of `kind` (``membership`` or ``partition``) at `scope`."""
        key = (kind, tuple(sorted(scope.items())), index)
        script = self.scripts.get(key)
        if script is None:
            for attempt in range(100):
                rng = random.Random(f"partsafe:{self.seed}:{kind}:{key[1]}:{index}:{attempt}")
                try:
                    made = (membership_script(scope, rng) if kind == "membership"
                            else partition_script(scope, rng))
                except Unfinished:
                    continue
                if made is not None:
                    script = made
                    break
            else:  # pragma: no cover - walks end within MAX_STEPS at these scopes
                raise RuntimeError(f"no usable {kind} walk at scope {scope}")
            self.scripts[key] = script
        return script

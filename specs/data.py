"""Replica data and graceful shutdown specs (Hazelcast 3.7, designs 000 and 004), and the
quiescence check that the table reaches a target the master's repartitioning would keep.

These monitors follow what the events say about the cluster:

- which member holds which partition's data: ``replica_synced`` adds a holder, ``replica_cleared``
  removes one, ``member_crashed`` removes a member from every partition;
- the current partition table: the most recent ``partition_table_published`` (3.7: by global
  version; 4.1: partition by partition, by partition version);
- who is alive and who is leaving: ``member_list_installed`` and ``member_joined`` name members
  (in age order), ``member_crashed``, ``member_left`` and ``member_removed`` end them (a removed
  member is out of the cluster, whether it crashed or not; a member's removal of itself is it
  learning so), ``shutdown_requested`` marks them leaving.

A partition no ``replica_synced`` named is unknown and never judged; so is a table that no
publication showed.

One file for the replica data and graceful shutdown specs (000, 004) and PT-TARGET's oracle:
they share the replica bookkeeping the monitors keep per partition.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Hashable, Iterable, Sequence

from partsafe.specs.monitor import NO_PAIRS, Conjunction, Monitor, Pairs, assign, lookup
from partsafe.specs.registry import Spec, register
from partsafe.traces.events import (
    Event,
    MemberCrashed,
    MemberJoined,
    MemberLeft,
    MemberListInstalled,
    MemberRemoved,
    MemberStarted,
    MigrationCommitted,
    MigrationRolledBack,
    MigrationStarted,
    PartitionLost,
    PartitionTablePublished,
    ReplicaCleared,
    ReplicaSynced,
    ShutdownAllowed,
    ShutdownRequested,
    ShutdownRequestHandled,
)

#: one partition's replica array: index 0 the owner, then the backups, ``None`` an empty index
Replicas = tuple[str | None, ...]

#: the current table: per partition ``(version, replicas)``, with the global version for 3.7
Table = tuple[int | None, Pairs]
NO_TABLE: Table = (None, NO_PAIRS)

HOLDER_EVENTS = frozenset({"replica_synced", "replica_cleared", "member_crashed"})
TABLE_EVENTS = frozenset({"partition_table_published"})
MEMBER_EVENTS = frozenset({"member_list_installed", "member_joined", "member_crashed",
                           "member_left", "member_removed", "shutdown_requested"})


# --- the pieces of cluster state the monitors follow ---------------------------------------------


def holders_after(holders: Pairs, event: Event) -> Pairs:
    """Who holds which partition's data after `event` (``replica_synced``, ``replica_cleared``,
    ``member_crashed``; other events leave it as it was)."""
    if isinstance(event, ReplicaSynced):
        return assign(holders, event.partition,
                      lookup(holders, event.partition, frozenset()) | {event.member})
    if isinstance(event, ReplicaCleared):
        had = lookup(holders, event.partition)
        if had is None:
            return holders
        return assign(holders, event.partition, had - {event.member})
    if isinstance(event, MemberCrashed):
        return frozenset((p, h - {event.member}) for p, h in holders)
    return holders


def table_after(table: Table, event: Event) -> Table:
    """The current partition table after a ``partition_table_published``: 3.7 takes a table with
    a global version at least the current one; 4.1 takes each carried partition whose version is
    at least the current one."""
    if not isinstance(event, PartitionTablePublished) or not event.replicas:
        return table
    version, parts = table
    carried: Iterable[int] = (event.partitions if event.partitions is not None
                              else range(len(event.replicas)))
    if event.partition_versions is None:
        if event.version is None or (version is not None and event.version < version):
            return table
        return event.version, frozenset((p, (event.version, arr))
                                        for p, arr in enumerate(event.replicas))
    for p in carried:
        if p >= len(event.replicas) or p >= len(event.partition_versions):
            continue
        v = event.partition_versions[p]
        old = lookup(parts, p)
        if old is None or v >= old[0]:
            parts = assign(parts, p, (v, event.replicas[p]))
    return version, parts


def replicas_of(table: Table) -> dict[int, Replicas]:
    return {p: arr for p, (_, arr) in table[1]}


#: cluster membership as events show it: (members in age order, ended members, leaving members)
Roster = tuple[tuple[str, ...], frozenset[str], frozenset[str]]
NO_ROSTER: Roster = ((), frozenset(), frozenset())


def roster_after(roster: Roster, event: Event) -> Roster:
    members, ended, leaving = roster
    if isinstance(event, MemberListInstalled):
        return (*members, *(m for m in event.members if m not in members)), ended, leaving
    if isinstance(event, MemberJoined):
        if event.joined in members:
            return roster
        return (*members, event.joined), ended, leaving
    if isinstance(event, MemberCrashed | MemberLeft):
        return members, ended | {event.member}, leaving
    if isinstance(event, MemberRemoved):  # put out of the cluster, or learns it was
        return members, ended | {event.removed}, leaving
    if isinstance(event, ShutdownRequested):
        return members, ended, leaving | {event.member}
    return roster


def live(roster: Roster) -> list[str]:
    members, ended, _ = roster
    return [m for m in members if m not in ended]


def _names(arr: Replicas) -> str:
    return "[" + ", ".join(r or "-" for r in arr) + "]"


class BackupsMonitor(Monitor):
    """A monitor whose judgement depends on the backup count of the cluster it watches."""

    def __init__(self, backups: int = 1) -> None:
        if backups < 0:
            raise ValueError(f"backups must be at least 0, not {backups}")
        self.backups = backups


# --- DATA-NO-LOSS --------------------------------------------------------------------------------


class NoLoss(BackupsMonitor):
    """DATA-NO-LOSS: with at most `backups` crashes, every partition keeps a live copy.

    000 (the purpose of the design) and 004: crashes of up to `backups` members and any number of
    graceful shutdowns lose no data. A violation is a partition whose set of live holders becomes
    empty (by a clear or a crash), or a ``partition_lost`` event, while at most `backups`
    members crashed. State: the holders per partition and the number of crashes.
    """

    spec = "DATA-NO-LOSS"
    observes = HOLDER_EVENTS | {"partition_lost"}

    def initial(self) -> Hashable:
        return (NO_PAIRS, 0)

    def observe(self, state: Hashable, event: Event) -> tuple[Hashable, str | None]:
        holders, crashes = state  # type: ignore[misc]
        if isinstance(event, MemberCrashed):
            crashes += 1
        after = holders_after(holders, event)
        message = None
        if crashes <= self.backups:
            if isinstance(event, PartitionLost):
                message = (f"{event.member} reports partition {event.partition} lost after "
                           f"{crashes} crash(es) with {self.backups} backup(s)")
            for p, h in sorted(after, key=repr):
                if not h and lookup(holders, p):
                    who = "crash of" if isinstance(event, MemberCrashed) else "clear at"
                    message = (f"partition {p} has no live copy after the {who} {event.member} "
                               f"({crashes} crash(es), {self.backups} backup(s))")
                    break
        return (after, crashes), message


# --- DATA-REPLICAS -------------------------------------------------------------------------------


class ReplicaCount(BackupsMonitor):
    """DATA-REPLICAS: a migration never lowers a partition's available replica count.

    000 §3.2 (issue 5444): the old replica clears its data only after the new one has it. The
    available replicas of a partition are its live holders, except the destinations of
    migrations that did not hold the partition when the migration started, until they commit
    (a copy in transit is not a replica yet; a rolled back one is not either, until it is
    cleared). A violation is a
    ``replica_cleared`` by a member that is not leaving which lowers the available replicas
    below the number of live members the current table names as replicas of the partition
    (at most backups + 1; a crash lowers both). That the named replicas hold the data once the
    cluster is quiescent is DATA-HELD's. State: holders, undecided destinations, current table,
    roster.
    """

    spec = "DATA-REPLICAS"
    observes = HOLDER_EVENTS | TABLE_EVENTS | MEMBER_EVENTS | {
        "migration_started", "migration_committed", "migration_rolled_back"}

    def initial(self) -> Hashable:
        return (NO_PAIRS, frozenset(), NO_TABLE, NO_ROSTER)

    def observe(self, state: Hashable, event: Event) -> tuple[Hashable, str | None]:
        holders, transit, table, roster = state  # type: ignore[misc]
        if isinstance(event, MigrationStarted | MigrationCommitted | MigrationRolledBack):
            if event.role != "destination" or event.partition is None:
                return state, None
            key = (event.member, event.partition)
            if isinstance(event, MigrationStarted):
                if event.member not in lookup(holders, event.partition, frozenset()):
                    transit = transit | {key}
            elif isinstance(event, MigrationCommitted):
                transit = transit - {key}
            # a rolled back copy stays in transit until it is cleared
            return (holders, transit, table, roster), None
        after = holders_after(holders, event)
        roster = roster_after(roster, event)
        table = table_after(table, event)
        message = None
        if isinstance(event, ReplicaCleared) and event.member not in roster[2]:
            p = event.partition
            ended = roster[1]

            def available(h: frozenset[str] | None) -> set[str]:
                return {m for m in h or () if m not in ended and (m, p) not in transit}

            before, now = available(lookup(holders, p)), available(lookup(after, p))
            named = [r for r in replicas_of(table).get(p, ()) if r is not None
                     and r not in ended]
            want = min(self.backups + 1, len(named))
            if len(now) < len(before) and len(now) < want:
                message = (f"{event.member} clears partition {p} (replica index "
                           f"{event.replica_index}), leaving {len(now)} available copies "
                           f"({', '.join(sorted(now)) or 'none'}) where {want} are required")
        if isinstance(event, MemberCrashed):
            transit = frozenset(k for k in transit if k[0] != event.member)
        elif isinstance(event, ReplicaCleared):
            transit = transit - {(event.member, event.partition)}
        return (after, transit, table, roster), message


# --- DATA-NO-LEAK --------------------------------------------------------------------------------


class NoLeak(Monitor):
    """DATA-NO-LEAK: once the cluster is quiescent, no live member holds data the table does not
    assign to it.

    000 §2.1-2.2: a destination that keeps the data of a migration the master rolled back, or a
    source that keeps it after a commit, holds a copy nobody owns: it is never updated and
    wastes memory. Judged at quiescence: every live holder of a partition is named in the
    current table's replicas of that partition. State: holders, current table, roster.
    """

    spec = "DATA-NO-LEAK"
    observes = HOLDER_EVENTS | TABLE_EVENTS | MEMBER_EVENTS

    def initial(self) -> Hashable:
        return (NO_PAIRS, NO_TABLE, NO_ROSTER)

    def observe(self, state: Hashable, event: Event) -> tuple[Hashable, str | None]:
        holders, table, roster = state  # type: ignore[misc]
        return (holders_after(holders, event), table_after(table, event),
                roster_after(roster, event)), None

    def at_quiescence(self, state: Hashable) -> str | None:
        holders, table, roster = state  # type: ignore[misc]
        replicas = replicas_of(table)
        ended = roster[1]
        for p, have in sorted(holders, key=repr):
            arr = replicas.get(p)
            if arr is None:
                continue
            for m in sorted(have - ended):
                if m not in arr:
                    return (f"{m} holds data of partition {p}, which the table {_names(arr)} "
                            "does not assign to it")
        return None


# --- DATA-HELD ----------------------------------------------------------------------------------


class Held(Monitor):
    """DATA-HELD: once the cluster is quiescent, every live member the table names as a replica
    holds the partition's data.

    000 "API design" (the current / new replica index rule of ``PartitionMigrationEvent``): a
    participant drops its data only where the migration leaves it no replica, the source on
    commit when its new index is -1, the destination on rollback when its current index is -1;
    a shift up or down keeps the data on both sides. DATA-NO-LEAK's converse: judged at
    quiescence, every live member the current table names among a partition's replicas holds
    its data. A partition no ``replica_synced`` named is unknown; a partition that lost every
    copy (a crash took its last live holder, or the master reported it lost) is DATA-NO-LOSS's
    and not judged any more: the owner the master assigns it starts empty. State: holders,
    current table, roster, lost partitions.
    """

    spec = "DATA-HELD"
    observes = HOLDER_EVENTS | TABLE_EVENTS | MEMBER_EVENTS | {"partition_lost"}

    def initial(self) -> Hashable:
        return (NO_PAIRS, NO_TABLE, NO_ROSTER, frozenset())

    def observe(self, state: Hashable, event: Event) -> tuple[Hashable, str | None]:
        holders, table, roster, lost = state  # type: ignore[misc]
        after = holders_after(holders, event)
        if isinstance(event, PartitionLost):
            lost = lost | {event.partition}
        elif isinstance(event, MemberCrashed):
            lost = lost | {p for p, h in holders if h and not lookup(after, p)}
        return (after, table_after(table, event), roster_after(roster, event), lost), None

    def at_quiescence(self, state: Hashable) -> str | None:
        holders, table, roster, lost = state  # type: ignore[misc]
        alive = set(live(roster))
        for p, arr in sorted(replicas_of(table).items()):
            have = lookup(holders, p)
            if have is None or p in lost:
                continue
            for index, r in enumerate(arr):
                if r is not None and r in alive and r not in have:
                    return (f"the table names {r} at replica index {index} of partition {p} "
                            f"{_names(arr)}, but {r} does not hold its data")
        return None


# --- PT-TARGET -----------------------------------------------------------------------------------


def view_after(views: Pairs, event: Event) -> Pairs:
    """Each member's own member list, in age order, as its events show it."""
    me = event.member
    if isinstance(event, MemberListInstalled):
        return assign(views, me, tuple(event.members))
    view = lookup(views, me)
    if view is None:
        return views
    if isinstance(event, MemberJoined) and event.joined not in view:
        return assign(views, me, (*view, event.joined))
    if isinstance(event, MemberRemoved) and event.removed in view:
        return assign(views, me, tuple(m for m in view if m != event.removed))
    return views


def target_breach(current: Sequence[Replicas], eligible: Sequence[str], backups: int) -> str | None:
    """What keeps `current` from being a table the master's repartitioning would keep, or None.

    000 §3.2 step 3 ("Run regular repartitioning algorithm") and 004: the master assigns every
    partition to the members that are not leaving, with backups + 1 replicas where there are
    enough members, spread evenly, and plans migrations toward that until there is nothing left
    to do; migrations that only pass replicas round within a partition are cancelled (000
    §3.2.1), so what the design fixes at the end is, per partition, which members hold it, not
    at which index. Derived from that statement alone, without the repartitioning or the
    planner of the reference implementation, with ``E = len(eligible)``, ``P`` partitions and
    ``r = min(backups + 1, E)``:

    - every replica names an eligible member, and every partition has an owner;
    - no member holds two indices of one partition;
    - every partition names exactly ``r`` members, at the hottest indices ``0 .. r-1``;
    - every eligible member holds ``floor(r*P/E)`` or ``ceil(r*P/E)`` replicas in all.

    The first breach found is described, partition by partition, then member by member in the
    order of `eligible`.
    """
    allowed = set(eligible)
    needed = min(backups + 1, len(eligible))
    for p, arr in enumerate(current):
        gone = [r for r in arr if r is not None and r not in allowed]
        if gone:
            return (f"partition {p} {_names(arr)} still names {', '.join(gone)}, which "
                    "ended, is leaving or is no member of the master's list")
        if not arr or arr[0] is None:
            return f"partition {p} {_names(arr)} has no owner"
        named = [r for r in arr if r is not None]
        twice = sorted(m for m, n in Counter(named).items() if n > 1)
        if twice:
            return (f"partition {p} {_names(arr)} names {', '.join(twice)} at two replica "
                    "indices")
        if len(named) != needed:
            return (f"partition {p} {_names(arr)} has {len(named)} replica(s), where "
                    f"{needed} are required ({backups} backup(s), {len(eligible)} member(s) "
                    "not leaving)")
        gap = next((i for i in range(needed) if arr[i] is None), None)
        if gap is not None:
            return (f"partition {p} {_names(arr)} leaves replica index {gap} empty while a "
                    "colder index holds a replica")
    held = Counter(r for arr in current for r in arr if r is not None)
    low, extra = divmod(needed * len(current), len(eligible))
    high = low + (1 if extra else 0)
    for m in eligible:
        if not low <= held[m] <= high:
            bound = f"{low}" if low == high else f"{low} or {high}"
            return (f"{m} holds {held[m]} replica(s) of the {len(current)} partition(s), where "
                    f"each of the {len(eligible)} member(s) not leaving holds {bound} "
                    f"({needed} replica(s) per partition)")
    return None


class Target(BackupsMonitor):
    """PT-TARGET: once faults stop, the table is one the master's repartitioning keeps.

    000 §3.2 and Hazelcast's ``MigrationManager``: the master repartitions after every change
    until planning finds nothing to do. Judged at quiescence on the current table (the most
    recent one published) and the member list of the master that published it last: over that
    master's live members that are not leaving, the table must have the shape and balance
    :func:`target_breach` states. The expected values come from the design's statement, not
    from the repartitioning and the planner of the reference implementation, so that a
    repartitioning or a planner that stops short (a missing backup, a member left out, an
    uneven spread) breaks this spec rather than agreeing with it. Not judged while that
    master's list is unknown. State: current table, roster, member lists, the last publisher.
    """

    spec = "PT-TARGET"
    observes = TABLE_EVENTS | MEMBER_EVENTS

    def initial(self) -> Hashable:
        return (NO_TABLE, NO_ROSTER, NO_PAIRS, None)

    def observe(self, state: Hashable, event: Event) -> tuple[Hashable, str | None]:
        table, roster, views, publisher = state  # type: ignore[misc]
        if isinstance(event, PartitionTablePublished):
            publisher = event.member
        return (table_after(table, event), roster_after(roster, event),
                view_after(views, event), publisher), None

    def at_quiescence(self, state: Hashable) -> str | None:
        table, roster, views, publisher = state  # type: ignore[misc]
        replicas = replicas_of(table)
        view = lookup(views, publisher)
        if not replicas or sorted(replicas) != list(range(len(replicas))) or view is None:
            return None
        eligible = [m for m in view if m not in roster[1] and m not in roster[2]]
        if not eligible:
            return None
        return target_breach([replicas[p] for p in range(len(replicas))], eligible,
                             self.backups)


# --- SHUT-ONLY-SOURCE, SHUT-LEAVE-EMPTY, SHUT-NO-LOSS --------------------------------------------


class LeavingDestination(Monitor):
    """SHUT-ONLY-SOURCE at the leaving member: a member that requested shutdown (and did not
    crash or restart since) never starts a migration as its destination. State: the members that
    requested shutdown."""

    spec = "SHUT-ONLY-SOURCE"
    observes = frozenset({"shutdown_requested", "migration_started", "member_crashed",
                          "member_started"})
    judged_on = frozenset({"migration_started"})
    key_size = 1

    def key(self, event: Event) -> tuple[Hashable, ...] | None:
        if isinstance(event, MigrationStarted) and event.role != "destination":
            return None
        return (event.member,)

    def initial(self) -> Hashable:
        return frozenset()

    def observe(self, state: Hashable, event: Event) -> tuple[Hashable, str | None]:
        leaving: frozenset[str] = state  # type: ignore[assignment]
        me = event.member
        if isinstance(event, ShutdownRequested):
            return leaving | {me}, None
        if isinstance(event, MemberCrashed | MemberStarted):
            return leaving - {me}, None
        assert isinstance(event, MigrationStarted)
        if event.role == "destination" and me in leaving:
            return state, (f"{me} requested shutdown and starts migration "
                           f"{event.migration} of partition {event.partition} as its "
                           "destination")
        return state, None


class HandledRequest(Monitor):
    """SHUT-ONLY-SOURCE at the master: after handling a member's shutdown request
    (``shutdown_request_handled``), a master never starts a migration with that member as its
    destination, until one of the two crashes or restarts. Keyed per requester. State: the
    (master, requester) pairs of handled requests."""

    spec = "SHUT-ONLY-SOURCE"
    observes = frozenset({"shutdown_request_handled", "migration_started", "member_crashed",
                          "member_started"})
    judged_on = frozenset({"migration_started"})
    key_size = 1

    def key(self, event: Event) -> tuple[Hashable, ...] | None:
        if isinstance(event, ShutdownRequestHandled):
            return (event.requester,)
        if isinstance(event, MigrationStarted):
            return (event.destination,) if event.role == "master" else None
        return ()  # a crashed or restarted member, as master or as requester

    def initial(self) -> Hashable:
        return frozenset()

    def observe(self, state: Hashable, event: Event) -> tuple[Hashable, str | None]:
        handled: frozenset[tuple[str, str | None]] = state  # type: ignore[assignment]
        me = event.member
        if isinstance(event, ShutdownRequestHandled):
            return handled | {(me, event.requester)}, None
        if isinstance(event, MemberCrashed | MemberStarted):
            return frozenset(h for h in handled if me not in h), None
        assert isinstance(event, MigrationStarted)
        if event.role == "master" and (me, event.destination) in handled:
            return state, (f"{me} handled the shutdown request of {event.destination} and then "
                           f"starts migration {event.migration} of partition {event.partition} "
                           "with it as the destination")
        return state, None


class OnlySource(Conjunction):
    """SHUT-ONLY-SOURCE: a member that requested shutdown is never a migration destination.

    004: the master repartitions without the shutdown-requested members, so they only give data
    away; a member that requested shutdown refuses what a master that did not hear of the request
    yet sends it. A violation is a ``migration_started`` of role destination at a member that
    requested shutdown (and did not crash since; `LeavingDestination`), or a master that, after
    handling a member's shutdown request, starts a migration with that member as its destination
    (`HandledRequest`). The master's own starts are not judged before it handled the request, as
    the request may still be on its way. State: the members that requested shutdown, and the
    (master, requester) pairs of handled requests.
    """

    spec = "SHUT-ONLY-SOURCE"
    PARTS = (LeavingDestination, HandledRequest)


class LeaveEmpty(Monitor):
    """SHUT-LEAVE-EMPTY: a member leaves only when the table names it nowhere.

    004: the master answers a shutdown request only once the partition table no longer names
    the member, and the member shuts down only then. A violation is a ``shutdown_allowed`` for a
    member, or a ``member_left``, while the current table names that member. State: the current
    table.
    """

    spec = "SHUT-LEAVE-EMPTY"
    observes = TABLE_EVENTS | {"shutdown_allowed", "member_left"}

    def initial(self) -> Hashable:
        return NO_TABLE

    def observe(self, state: Hashable, event: Event) -> tuple[Hashable, str | None]:
        table: Table = state  # type: ignore[assignment]
        if isinstance(event, PartitionTablePublished):
            return table_after(table, event), None
        who = event.leaving if isinstance(event, ShutdownAllowed) else event.member
        if who is None:
            return state, None
        for p, arr in sorted(replicas_of(table).items()):
            if who in arr:
                what = ("is allowed to leave" if isinstance(event, ShutdownAllowed)
                        else "leaves")
                return state, (f"{who} {what} while the table names it at replica index "
                               f"{arr.index(who)} of partition {p} {_names(arr)}")
        return state, None


class ShutdownNoLoss(Monitor):
    """SHUT-NO-LOSS: a graceful shutdown never takes the last copy of a partition away.

    004: a leaving member's replicas are migrated to the remaining members before it goes. A
    violation is a ``replica_cleared`` by a member that requested shutdown after which the
    partition has no live holder. State: holders, members that requested shutdown.
    """

    spec = "SHUT-NO-LOSS"
    observes = HOLDER_EVENTS | {"shutdown_requested"}

    def initial(self) -> Hashable:
        return (NO_PAIRS, frozenset())

    def observe(self, state: Hashable, event: Event) -> tuple[Hashable, str | None]:
        holders, leaving = state  # type: ignore[misc]
        if isinstance(event, ShutdownRequested):
            return (holders, leaving | {event.member}), None
        after = holders_after(holders, event)
        if isinstance(event, ReplicaCleared) and event.member in leaving \
                and lookup(holders, event.partition) and not lookup(after, event.partition):
            return (after, leaving), (f"{event.member}, shutting down, clears the last copy of "
                                      f"partition {event.partition}")
        return (after, leaving), None


MONITORS: tuple[type[Monitor], ...] = (NoLoss, ReplicaCount, NoLeak, Held, Target, OnlySource,
                                       LeaveEmpty, ShutdownNoLoss)

register(Spec(
    id="DATA-NO-LOSS", title="No data loss with at most backups crashes",
    statement="While at most backup-count members crashed, every partition keeps a live copy "
              "of its data: no clear or crash leaves a partition without holders and no master "
              "reports a partition lost. Graceful shutdowns count as no crash.",
    seed="000", section="Avoid Data Loss on Migration; 004 Graceful Shutdown",
    kind="event monitor", monitor=NoLoss,
    rationale="Backups exist so that backup-count crashes lose nothing; a migration or a "
              "shutdown that clears the last copy turns a tolerated fault into data loss."))
register(Spec(
    id="DATA-REPLICAS", title="Migrations never lower the available replica count",
    statement="No clear by a member that is not leaving lowers a partition's available copies "
              "(live holders, copies in transit excluded) below the number of live replicas the "
              "current table names for it.",
    seed="000", section="§3.2 Migration Planning (issue 5444)", kind="event monitor",
    monitor=ReplicaCount,
    rationale="An old backup that clears before the new one has the data leaves the partition "
              "one crash away from loss; the planner orders migrations so that copies are made "
              "before copies are dropped."))
register(Spec(
    id="DATA-NO-LEAK", title="No copy nobody owns",
    statement="Once nothing but faults can happen, every live member that holds a partition's "
              "data is named among that partition's replicas in the current table.",
    seed="000", section="§2.1 Safe Migration Commit; §2.2", kind="event monitor (quiescence)",
    monitor=NoLeak,
    rationale="A destination that keeps the data of a rolled back migration, or a source that "
              "keeps it after the commit, holds a copy no one updates: stale reads after a "
              "later promotion, and memory that is never given back."))
register(Spec(
    id="DATA-HELD", title="Every named replica holds the data",
    statement="Once nothing but faults can happen, every live member that the current table "
              "names among a partition's replicas holds that partition's data, unless the "
              "partition lost every copy.",
    seed="000", section="API design (current / new replica index); §2.1",
    kind="event monitor (quiescence)", monitor=Held,
    rationale="A participant clears its data only where a migration leaves it no replica: the "
              "source of a commit whose new index is -1, the destination of a rollback whose "
              "current index is -1. A rolled back shift up that clears its destination leaves "
              "the table naming a replica with nothing behind it: reads and promotions go to a "
              "member without the data. A partition that lost every copy is DATA-NO-LOSS's: its "
              "new owner starts empty."))
register(Spec(
    id="PT-TARGET", title="The table reaches the repartitioning's target",
    statement="Once nothing but faults can happen, the current table names only live members "
              "that are not leaving, every partition has an owner and exactly min(backups + 1, "
              "members) distinct replicas at its hottest indices, and every such member holds "
              "floor or ceil of (replicas x partitions / members) replicas in all.",
    seed="000", section="§3.2 Migration Planning; Hazelcast's MigrationManager",
    kind="event monitor (quiescence)", monitor=Target,
    rationale="Planning restarts after every change (stateless); a master that stops before the "
              "target leaves partitions without backups or members without their share."))
register(Spec(
    id="SHUT-ONLY-SOURCE", title="A leaving member only gives data away",
    statement="No member that requested shutdown starts a migration as its destination.",
    seed="004", section="Graceful Shutdown: Design", kind="event monitor", monitor=OnlySource,
    rationale="The master repartitions without the shutdown-requested members; a migration to "
              "one of them moves data to a member about to leave."))
register(Spec(
    id="SHUT-LEAVE-EMPTY", title="A member leaves only when the table names it nowhere",
    statement="No member is allowed to leave, and none leaves, while the current partition "
              "table names it as a replica of some partition.",
    seed="004", section="Graceful Shutdown: Design", kind="event monitor", monitor=LeaveEmpty,
    rationale="3.6 let a member go once its first backups were assigned: its other replicas "
              "left with it (004 Problems)."))
register(Spec(
    id="SHUT-NO-LOSS", title="A graceful shutdown loses no data",
    statement="No member that requested shutdown clears the last live copy of a partition.",
    seed="004", section="Graceful Shutdown: Problems", kind="event monitor",
    monitor=ShutdownNoLoss,
    rationale="Two members holding each other's backups that leave together, or a member "
              "leaving with 0 backups, took the only copies with them under 3.6."))

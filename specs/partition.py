"""Partition table and migration specs (Hazelcast 3.7, design 000; 4.1, design 003).

PT-VERSION and PAR-STAMP judge the tables members apply; MIG-COMMIT-ORDER and MIG-ATOMIC judge
the decisions the master and the two participants take on one migration id; PAR-ONE-PER-PARTITION,
PAR-MAX-PARALLEL, PAR-START and PAR-VERSION judge the master's parallel migration schedule
(003 §2.2; Hazelcast's ``MigrationPlanTask``).

Monitor states are small immutable values: frozensets of ``(key, value)`` pairs read and written
with `lookup` and `assign` of specs/monitor.py, and tuples. A field an event does not carry, or an
event a stream does not show, is unknown and never a violation.

One file for the partition table and migration specs of 000 and 003: their monitors share the
per-member table bookkeeping and the migration keys they are routed by.
"""

from __future__ import annotations

from abc import abstractmethod
from collections.abc import Callable, Hashable
from typing import Any

from partsafe.specs import data
from partsafe.specs.monitor import NO_PAIRS, Conjunction, Monitor, Pairs, PerMember, assign, lookup
from partsafe.specs.registry import Spec, register
from partsafe.specs.rules import StampError, stamp
from partsafe.traces.events import (
    UNKNOWN_MEMBER,
    Event,
    MemberCrashed,
    MemberJoined,
    MemberLeft,
    MemberListInstalled,
    MemberRemoved,
    MigrationCommitted,
    MigrationFailed,
    MigrationFinished,
    MigrationRolledBack,
    MigrationsCompleted,
    MigrationStarted,
    MigrationsWaiting,
    PartitionTableApplied,
    PartitionTableConflict,
    PartitionTablePublished,
    PartitionVersionApplied,
    Repartitioning,
)

#: migration roles in the order 000 §2.1 has them commit: destination, then master, then source
COMMIT_RANK = {"destination": 0, "master": 1, "source": 2}
#: ``hazelcast.partition.max.parallel.migrations`` (003 §2.2), its default
DEFAULT_MAX_PARALLEL = 10


def _without(pairs: Pairs, keep: Callable[[Any], bool]) -> Pairs:
    """`pairs` restricted to the entries whose key satisfies `keep`."""
    return frozenset(kv for kv in pairs if keep(kv[0]))


def _of(migration: str, partition: int | None) -> str:
    return f"migration {migration}" + (f" of partition {partition}" if partition is not None
                                       else "")


# --- PT-VERSION, PAR-STAMP ----------------------------------------------------------------------


class TablesApplied(PerMember):
    """PT-VERSION, per member: the tables a member applies never go back. 3.7 (000 §1.1): the
    global `version` is never smaller than the last one the member applied (equal is a
    republish). 4.1 (003 §1.2): for every partition p, `partition_versions[p]` is never smaller
    than the last the member applied; partitions beyond the shorter of the two tables are not
    compared. State: per member, the last global version and partition versions it applied."""

    spec = "PT-VERSION"
    #: a member's restart, crash or split-brain merge forgets its tables: a member that merges
    #: into another cluster resets its partition service and takes that cluster's table, older
    #: or not (``Node``'s merge reset; a real 3.12 member paused, removed and merged back)
    observes = frozenset({"partition_table_applied", "member_crashed", "member_started",
                          "split_brain_merge"})
    judged_on = frozenset({"partition_table_applied"})

    def observe(self, state: Hashable, event: Event) -> tuple[Hashable, str | None]:
        pairs: Pairs = state  # type: ignore[assignment]
        me = event.member
        if not isinstance(event, PartitionTableApplied):
            return _without(pairs, lambda k: k != me), None
        version, versions = lookup(pairs, me, (None, None))
        message = None
        if event.version is not None:
            if version is not None and event.version < version:
                message = f"{me} applies partition table version {event.version} after {version}"
            version = event.version
        if event.partition_versions is not None:
            if versions is not None and message is None:
                for p, (old, new) in enumerate(zip(versions, event.partition_versions,
                                                   strict=False)):
                    if new < old:
                        message = f"{me} applies version {new} of partition {p} after {old}"
                        break
            versions = event.partition_versions
        return assign(pairs, me, (version, versions)), message


class PartitionVersions(Monitor):
    """PT-VERSION, per member and partition: a log shows single partitions' versions
    (``partition_version_applied``, a completed migration applied); each must exceed the last
    version of that partition the member applied that way. State: per (member, partition), the
    last such version."""

    spec = "PT-VERSION"
    observes = frozenset({"partition_version_applied", "member_crashed", "member_started",
                          "split_brain_merge"})
    judged_on = frozenset({"partition_version_applied"})
    key_size = 2

    def key(self, event: Event) -> tuple[Hashable, ...] | None:
        if isinstance(event, PartitionVersionApplied):
            return (event.member, event.partition)
        return ()

    def initial(self) -> Hashable:
        return NO_PAIRS

    def observe(self, state: Hashable, event: Event) -> tuple[Hashable, str | None]:
        pairs: Pairs = state  # type: ignore[assignment]
        me = event.member
        if not isinstance(event, PartitionVersionApplied):
            return _without(pairs, lambda k: k[0] != me), None
        key = (me, event.partition)
        before = lookup(pairs, key)
        message = None
        if before is not None and event.version <= before:
            message = (f"{me} applies version {event.version} of partition "
                       f"{event.partition} after version {before}")
        return assign(pairs, key, event.version), message


class TableVersion(Conjunction):
    """PT-VERSION: the partition table versions a member applies never go back (000 §1.1, 003
    §1.2): the conjunction of `TablesApplied` (whole tables, per member) and `PartitionVersions`
    (single partitions' versions, per member and partition). A crashed or restarted member is
    forgotten by both (it comes back with nothing)."""

    spec = "PT-VERSION"
    PARTS = (TablesApplied, PartitionVersions)


class Stamp(Monitor):
    """PAR-STAMP: a table's stamp is the 003 §1.3 stamp of its partition versions.

    Judged on every `partition_table_applied` that carries both `partition_versions` and `stamp`:
    the stamp must equal :func:`partsafe.specs.rules.stamp` of the versions (Hazelcast's
    ``HashUtil.MurmurHash3_x64_64``, an early-draft MurmurHash3, of the big-endian versions), the
    number a real member computes and logs. The stamp is a rule of the design, not protocol
    behaviour: the partition table computes it with the same function, which tests pin to a
    real member's numbers; what this spec judges is that the stamp a member applies is that of
    the versions it applies with it. Stateless.
    """

    spec = "PAR-STAMP"
    observes = frozenset({"partition_table_applied"})

    def initial(self) -> Hashable:
        return None

    def observe(self, state: Hashable, event: Event) -> tuple[Hashable, str | None]:
        assert isinstance(event, PartitionTableApplied)
        if event.partition_versions is None or event.stamp is None:
            return state, None
        try:
            expected = stamp(event.partition_versions)
        except StampError as exc:
            return state, (f"{event.member} applies a partition table with stamp "
                           f"{event.stamp}: {exc}")
        if event.stamp != expected:
            return state, (f"{event.member} applies a partition table with stamp {event.stamp}, "
                           f"but the stamp of its {len(event.partition_versions)} partition "
                           f"versions is {expected}")
        return state, None


# --- PT-MASTER-ONLY, PT-MOST-RECENT -------------------------------------------------------------


Table = PartitionTableApplied | PartitionTablePublished


def _slots(event: Table) -> frozenset[tuple[Hashable, tuple[str | None, ...]]]:
    """What a table fixes: 3.7, the whole table under its global version; 4.1, each partition
    under its partition version."""
    if event.partition_versions is None:
        if event.version is None or not event.replicas:
            return frozenset()
        return frozenset({(event.version, event.replicas)})
    return frozenset(((p, v), (arr,)) for p, (v, arr) in
                     enumerate(zip(event.partition_versions, event.replicas, strict=False)))


class MasterOnly(Monitor):
    """PT-MASTER-ONLY: one version, one table, among the live members.

    000 §1.1: only the master changes the partition table, and every change raises the version;
    members take tables from the master and never change them themselves (no local promotion).
    So no two live members hold different tables under one version: 3.7, one global version
    names one replica table; 4.1, one partition version names one replica array of its
    partition. A violation is a table applied or published by a member while another live
    member's current table has the same version (of some partition) with different replicas.
    A crashed or left member is forgotten: a table only a dead master held is gone, and its
    version may name another table later. A log shows no table a member holds, but a new master
    that collects the members' tables (000 §1.2) logs a partition version two of them hold with
    different replicas (``partition_table_conflict``): that is a violation too, the arrays
    compared by address. State: each member's current table, as slots.
    """

    spec = "PT-MASTER-ONLY"
    observes = frozenset({"partition_table_applied", "partition_table_published",
                          "member_crashed", "member_left", "member_removed",
                          "partition_table_conflict"})
    judged_on = frozenset({"partition_table_applied", "partition_table_published",
                           "partition_table_conflict"})

    def initial(self) -> Hashable:
        return NO_PAIRS

    def observe(self, state: Hashable, event: Event) -> tuple[Hashable, str | None]:
        pairs: Pairs = state  # type: ignore[assignment]
        me = event.member
        if isinstance(event, MemberCrashed | MemberLeft) or (
                isinstance(event, MemberRemoved) and event.removed == me):
            return _without(pairs, lambda k: k != me), None
        if isinstance(event, MemberRemoved):
            return state, None
        if isinstance(event, PartitionTableConflict):
            return state, _conflict(event)
        assert isinstance(event, PartitionTableApplied | PartitionTablePublished)
        slots = _slots(event)
        if not slots:
            return state, None
        mine = dict(slots)
        message = None
        for other, theirs in sorted(pairs, key=repr):
            if other == me:
                continue
            for key, replicas in sorted(theirs, key=repr):
                if key in mine and mine[key] != replicas:
                    what = (f"partition {key[0]} version {key[1]}" if isinstance(key, tuple)
                            else f"partition table version {key}")
                    verb = ("applies" if isinstance(event, PartitionTableApplied)
                            else "publishes")
                    message = (f"{me} {verb} {what} as {_table(mine[key])}, but {other} holds "
                               f"it as {_table(replicas)}: a table changed without the master")
                    break
            if message is not None:
                break
        return assign(pairs, me, slots), message


def _table(replicas: tuple[tuple[str | None, ...], ...]) -> str:
    return " ".join("[" + ",".join(r or "-" for r in arr) + "]" for arr in replicas)


def _conflict(event: PartitionTableConflict) -> str | None:
    """PT-MASTER-ONLY's message for two tables a new master collected, if their replica arrays
    differ by address (arrays that differ in UUIDs alone name the same members)."""
    if len(set(event.replicas)) < 2:
        return None
    return (f"master {event.member} collects partition {event.partition} version "
            f"{event.version} from two members as {_table(event.replicas[:2])}: a table changed "
            "without the master")


def _newer(applied: tuple[int | None, tuple[int, ...] | None], event: PartitionTablePublished
           ) -> str | None:
    """How `applied` (a member's last applied global version and partition versions) is more
    recent than the published table, if it is."""
    version, versions = applied
    if event.partition_versions is None:
        if version is not None and event.version is not None and version > event.version:
            return f"version {version} > {event.version}"
        return None
    if versions is None:
        return None
    carried = event.partitions if event.partitions is not None else range(len(versions))
    for p in carried:
        if p < len(versions) and p < len(event.partition_versions) \
                and versions[p] > event.partition_versions[p]:
            return f"partition {p} version {versions[p]} > {event.partition_versions[p]}"
    return None


class MostRecent(Monitor):
    """PT-MOST-RECENT: a master never publishes a table older than a member of its cluster has.

    000 §1.2: a new master first collects the partition tables of every member and takes the
    most recent, so what it publishes is never older than a table a live member applied. A
    violation is a ``partition_table_published`` by M while some live member of M's member list
    (not M) last applied a more recent table: a greater global version (3.7), or a greater
    version of a published partition (4.1). A member list is known from M's
    ``member_list_installed`` and its ``member_joined`` / ``member_removed``; M's publications
    are not judged while its list is unknown. Crashed and left members, and members that learn
    they were removed, are forgotten. State: member lists, last applied versions, ended members.
    """

    spec = "PT-MOST-RECENT"
    observes = frozenset({"partition_table_applied", "partition_table_published",
                          "member_list_installed", "member_joined", "member_removed",
                          "member_crashed", "member_left", "member_started",
                          "split_brain_merge"})
    judged_on = frozenset({"partition_table_published"})

    def initial(self) -> Hashable:
        return (NO_PAIRS, NO_PAIRS, frozenset())

    def observe(self, state: Hashable, event: Event) -> tuple[Hashable, str | None]:
        views, applied, ended = state  # type: ignore[misc]
        me = event.member
        if isinstance(event, MemberListInstalled):
            return (assign(views, me, frozenset(event.members)), applied, ended), None
        if isinstance(event, MemberJoined):
            view = lookup(views, me)
            if view is not None:
                views = assign(views, me, view | {event.joined})
            return (views, applied, ended), None
        if isinstance(event, MemberRemoved):
            if event.removed == me:
                ended = ended | {me}
            view = lookup(views, me)
            if view is not None:
                views = assign(views, me, view - {event.removed})
            return (views, applied, ended), None
        if isinstance(event, MemberCrashed | MemberLeft):
            return (views, _without(applied, lambda k: k != me), ended | {me}), None
        if event.TYPE in ("member_started", "split_brain_merge"):
            # a new incarnation, or a member whose partition service a merge reset: what it
            # applied before is gone
            return (views, _without(applied, lambda k: k != me), ended - {me}), None
        if isinstance(event, PartitionTableApplied):
            return (views, assign(applied, me, (event.version, event.partition_versions)),
                    ended), None
        assert isinstance(event, PartitionTablePublished)
        view = lookup(views, me)
        message = None
        if view is not None:
            for other in sorted(view - ended - {me}):
                got = lookup(applied, other)
                why = _newer(got, event) if got is not None else None
                if why is not None:
                    message = (f"master {me} publishes a partition table older than the one "
                               f"{other} applied ({why})")
                    break
        return (views, applied, ended), message


# --- MIG-COMMIT-ORDER, MIG-ATOMIC -----------------------------------------------------------


Decision = tuple[str, str, str]  # (role, "committed" | "rolled back", member)


def _decision(event: Event) -> tuple[str, Decision, int | None]:
    assert isinstance(event, MigrationCommitted | MigrationRolledBack)
    outcome = "committed" if isinstance(event, MigrationCommitted) else "rolled back"
    return event.migration, (event.role, outcome, event.member), event.partition


class CommitOrder(Monitor):
    """MIG-COMMIT-ORDER: the destination commits first, then the master, then the source.

    000 §2.1: the master commits a migration only once the destination has committed it, and the
    source only once the master has. For one migration id, with roles ranked destination <
    master < source, a violation is seen when
    (1) a commit by a role comes after a commit of the same migration by a higher-ranked role
        (the master after the source, the destination after the master or the source);
    (2) the master commits after the destination rolled the migration back, or the source commits
        after the master rolled it back (the decision the commit waits for went the other way).
    A commit or rollback a stream does not show is unknown: the master committing with no
    destination commit in sight is not judged. Other roles are ignored.
    State: per migration id, the decisions seen (role, outcome, member).
    """

    spec = "MIG-COMMIT-ORDER"
    observes = frozenset({"migration_committed", "migration_rolled_back"})
    judged_on = frozenset({"migration_committed"})

    def __init__(self) -> None:
        #: the state `step` returned last, with its entries by key: what the next step of a
        #: file looks up in it (a file's state holds a migration of each partition)
        self._last: tuple[Pairs, dict[Hashable, Any]] | None = None

    def initial(self) -> Hashable:
        return NO_PAIRS

    def observe(self, state: Hashable, event: Event) -> tuple[Hashable, str | None]:
        pairs: Pairs = state  # type: ignore[assignment]
        migration, decision, partition = _decision(event)
        if decision[0] not in COMMIT_RANK:
            return state, None
        seen: frozenset[Decision] = lookup(pairs, migration, frozenset())
        return (assign(pairs, migration, seen | {decision}),
                _commit_order(seen, migration, decision, partition))

    def step(self, state: Hashable, event: Event) -> tuple[Hashable, str | None]:
        """`observe`, and for events read from a file (they have a `source`) one migration per
        partition is remembered (`_latest_per_partition`); the explorer calls `observe` and keeps
        every decision. (The decisions are looked up by key at once: a log's state holds a
        migration of each partition.)"""
        assert isinstance(event, MigrationCommitted | MigrationRolledBack)
        if event.source is None or event.member == UNKNOWN_MEMBER \
                or event.role not in COMMIT_RANK:
            return super().step(state, event)
        pairs: Pairs = state  # type: ignore[assignment]
        migration, decision, partition = _decision(event)
        # the entries by key (unique in a Pairs), as the last step left them for this state
        last = self._last
        index = last[1] if last is not None and last[0] is pairs else dict(pairs)
        seen: frozenset[Decision] = index.get(migration, frozenset())
        message = _commit_order(seen, migration, decision, partition)
        now = (migration, seen | {decision})
        if partition is None:  # `assign`, which `_latest_per_partition` keeps as it is
            after = pairs - {(migration, index.get(migration))} | {now}
        else:
            # `assign` then `_latest_per_partition`, at once: the partition's migration and
            # this one's decisions replaced by this one's
            slot = ("p", partition)
            gone = {(k, index[k]) for k in (slot, index.get(slot), migration) if k in index}
            after = pairs - gone | {now, (slot, migration)}
            for k, _ in gone:
                del index[k]
            index[slot] = migration
        index[migration] = now[1]
        self._last = (after, index)
        return after, message


def _commit_order(seen: frozenset[Decision], migration: str, decision: Decision,
                  partition: int | None) -> str | None:
    """MIG-COMMIT-ORDER's message for `decision` of `migration`, after the decisions `seen`."""
    role, outcome, me = decision
    if outcome != "committed":
        return None
    for r, o, m in sorted(seen, key=lambda d: (-COMMIT_RANK.get(d[0], -1), d)):
        if o == "committed" and COMMIT_RANK.get(r, -1) > COMMIT_RANK[role]:
            return f"{role} {me} commits {_of(migration, partition)} after {r} {m} committed it"
    waits_for = {"master": "destination", "source": "master"}.get(role)
    for r, o, m in sorted(seen):
        if r == waits_for and o == "rolled back":
            return (f"{role} {me} commits {_of(migration, partition)} after {r} {m} rolled it "
                    "back")
    return None


class Atomic(Monitor):
    """MIG-ATOMIC: the two participants of a migration take the same decision.

    000 §2.1-2.2: never the source committed (its data cleared) while the destination rolled back
    (data loss), nor the destination committed while the source rolled back (data leak). Judged
    on `migration_committed` / `migration_rolled_back` of one migration id with roles source and
    destination at different members, when the second of the two contradicting decisions is seen.
    The one exception is 000 §2.1 step 4: a destination that committed and then crashed or was
    removed from the cluster (seen before the source's rollback, or missing from the source's
    latest member list) must accept the master's table when it returns, so its commit is not a
    leak. State: per migration id, the participants' decisions, and the members seen crashed, or
    removed and not rejoined since, and each member's latest list (a log shows lists; the
    explorer's partition service none).
    """

    spec = "MIG-ATOMIC"
    observes = frozenset({"migration_committed", "migration_rolled_back", "member_crashed",
                          "member_removed", "member_joined", "member_list_installed"})
    judged_on = frozenset({"migration_committed", "migration_rolled_back"})

    def initial(self) -> Hashable:
        return (NO_PAIRS, frozenset(), NO_PAIRS)

    def observe(self, state: Hashable, event: Event) -> tuple[Hashable, str | None]:
        pairs, gone, lists = state  # type: ignore[misc]
        if isinstance(event, MemberListInstalled):
            return (pairs, gone, assign(lists, event.member, frozenset(event.members))), None
        if isinstance(event, MemberRemoved):
            return (pairs, gone | {event.removed}, lists), None
        if isinstance(event, MemberJoined):
            return (pairs, gone - {event.joined}, lists), None
        if not isinstance(event, MigrationCommitted | MigrationRolledBack):  # member_crashed
            # crash-stop: a crashed member never comes back (a restart is a new member, with a
            # new UUID), so a join of it seen later is a stale join request, not a return
            return (pairs, gone | {event.member, ("crashed", event.member)}, lists), None
        migration, (role, outcome, me), partition = _decision(event)
        if role not in ("source", "destination"):
            return state, None
        seen: frozenset[Decision] = lookup(pairs, migration, frozenset())
        message = None
        other = "destination" if role == "source" else "source"
        for r, o, m in sorted(seen):
            if r != other or o == outcome or m == me:
                continue
            source_committed = (role == "source") == (outcome == "committed")
            if source_committed:
                message = (f"data loss: source {me if role == 'source' else m} committed "
                           f"{_of(migration, partition)} and destination "
                           f"{m if role == 'source' else me} rolled it back")
                break
            destination = m if role == "source" else me
            source_list = lookup(lists, me if role == "source" else m)
            if destination in gone or ("crashed", destination) in gone or (
                    source_list is not None and destination not in source_list):
                continue
            message = (f"data leak: destination {destination} committed "
                       f"{_of(migration, partition)} and source "
                       f"{me if role == 'source' else m} rolled it back")
            break
        return (assign(pairs, migration, seen | {(role, outcome, me)}), gone, lists), message

    def step(self, state: Hashable, event: Event) -> tuple[Hashable, str | None]:
        """`observe`, and for events read from a file (they have a `source`; the explorer calls
        `observe` and keeps every decision) a migration is forgotten once both its participants
        decided it, or once another migration of its partition is decided
        (`_latest_per_partition`)."""
        state, message = super().step(state, event)
        if not isinstance(event, MigrationCommitted | MigrationRolledBack) \
                or event.role not in ("source", "destination") or event.member == UNKNOWN_MEMBER \
                or event.source is None:
            return state, message
        pairs, gone, lists = state  # type: ignore[misc]
        seen: frozenset[Decision] = lookup(pairs, event.migration, frozenset())
        done = {r for r, _, _ in seen} >= {"source", "destination"}
        return (_latest_per_partition(pairs, event, done), gone, lists), message


def _latest_per_partition(pairs: Pairs, event: MigrationCommitted | MigrationRolledBack,
                          done: bool = False) -> Pairs:
    """A log's decisions per migration id (`pairs`), after `event`'s: the migrations of its
    partition but its own forgotten, and its own too once `done`. A participant decides a
    migration once and a master runs a partition's migrations one after the other, so what a
    log gives a monitor of decisions stays one migration per partition however long the log
    (the migration of partition p kept under the key ``("p", p)``); a decision forgotten too
    early is unknown, never a violation."""
    if event.partition is None:
        return pairs
    index = dict(pairs)  # the entries by key at once (keys are unique in a Pairs)
    slot = ("p", event.partition)
    earlier = index.get(slot)
    seen = index.get(event.migration)
    pairs = pairs - {(k, index[k]) for k in (slot, earlier, event.migration) if k in index}
    if done or seen is None:
        return pairs
    return pairs | {(event.migration, seen), (slot, event.migration)}


# --- MIG-REJECT-STALE ---------------------------------------------------------------------------


class RejectStale(PerMember):
    """MIG-REJECT-STALE: a participant refuses a migration while it has an undecided one or a
    stale table.

    000 §2.1: a source or destination starts a migration only if it has no
    undecided migration (3.7, `serial`; 4.1: none of the same partition, 003 §1.2) and its table
    has the version the migration was planned on. A violation is a ``migration_started`` of role
    source, owner or destination at member M while M started another migration (of the same
    partition unless `serial`) it has not committed or rolled back, or while the version M last
    applied (3.7: global; 4.1: of the partition) differs from `planned_version`. A crashed or
    restarted member, or one that merges into another cluster (which resets its partition
    service), is forgotten. Keyed per member. State: per member, the last applied versions and
    the undecided migrations. By default the 4.1 rule (`serial` false), which a log of any release
    may be judged by: 3.x runs one migration at a time.
    """

    spec = "MIG-REJECT-STALE"
    observes = frozenset({"partition_table_applied", "migration_started", "migration_committed",
                          "migration_rolled_back", "member_crashed", "member_started",
                          "split_brain_merge"})
    judged_on = frozenset({"migration_started"})

    def __init__(self, serial: bool = False) -> None:
        self.serial = serial

    def initial(self) -> Hashable:
        return (NO_PAIRS, NO_PAIRS, NO_PAIRS)

    def observe(self, state: Hashable, event: Event) -> tuple[Hashable, str | None]:
        applied, undecided, mastered = state  # type: ignore[misc]
        me = event.member
        if isinstance(event, PartitionTableApplied):
            return (assign(applied, me, (event.version, event.partition_versions)),
                    undecided, mastered), None
        if event.TYPE in ("member_crashed", "member_started", "split_brain_merge"):
            return (_without(applied, lambda k: k != me),
                    _without(undecided, lambda k: k != me),
                    _without(mastered, lambda k: k != me)), None
        mine: frozenset[tuple[str, int | None]] = lookup(undecided, me, frozenset())
        own: frozenset[str] = lookup(mastered, me, frozenset())
        if isinstance(event, MigrationCommitted | MigrationRolledBack):
            left = frozenset(u for u in mine if u[0] != event.migration)
            return (applied, assign(undecided, me, left) if left != mine else undecided,
                    assign(mastered, me, own - {event.migration}) if event.migration in own
                    else mastered), None
        assert isinstance(event, MigrationStarted)
        if event.role == "master":
            # the master stamps a migration with its own table's version as it starts it
            # (3.x ``MigrateTask``; 4.x the partition's): as that migration's participant it
            # always has the planned version, though it raises its version on each commit
            # without printing it
            return (applied, undecided, assign(mastered, me, own | {event.migration})), None
        if event.role not in ("source", "owner", "destination"):
            return state, None
        if (event.migration, event.partition) in mine:
            # the same migration's next namespace or fragment (3.12 prints one ``Invoking
            # MigrationOperation`` line per namespace): started once, judged once
            return state, None
        message = None
        for other, partition in sorted(mine, key=repr):
            if other != event.migration and (self.serial or partition == event.partition):
                message = (f"{event.role} {me} starts {_of(event.migration, event.partition)} "
                           f"while its migration {other} is undecided")
                break
        version, versions = lookup(applied, me, (None, None))
        have = (versions[event.partition] if versions is not None and event.partition is not None
                and event.partition < len(versions) else version)
        if message is None and have is not None and event.planned_version is not None \
                and have != event.planned_version and event.migration not in own:
            message = (f"{event.role} {me} starts {_of(event.migration, event.partition)} "
                       f"planned on version {event.planned_version} with version {have}")
        return (applied, assign(undecided, me, mine | {(event.migration, event.partition)}),
                mastered), message


# --- the master's schedule: PAR-ONE-PER-PARTITION, PAR-MAX-PARALLEL, PAR-VERSION ---------------


def source_endpoint(event: MigrationStarted) -> str | None:
    """The member that sends a migration's data (the owner, in Hazelcast's ``MigrationManager``):
    `source_endpoint` when the event shows it, else `source_member` when its current replica
    index is 0; otherwise unknown."""
    if event.source_endpoint is not None:
        return event.source_endpoint
    if event.source_current_index == 0:
        return event.source_member
    return None


class _InFlight(PerMember):
    """The migrations in flight at each master, as the master's own events show them.

    A migration is in flight at master M from M's `migration_started(role="master")` until M's
    `migration_committed` or `migration_rolled_back` of it (role master), or, as a log shows it,
    until M's `migration_failed` or `migration_finished` of it (its operation answered, before
    the commit: a migration seen over too early is seen in flight less, never more). The plan
    task waits for every migration it started before the master plans again
    (``MigrationPlanTask``), so M's `repartitioning` or `migrations_completed` at the end of a
    rebalance (not the statistics while it runs) ends all of M's migrations; so does M's crash
    or restart. Keyed per master. State: pairs ``((master, migration), (partition,
    endpoints))``.
    """

    observes = frozenset({"migration_started", "migration_committed", "migration_rolled_back",
                          "migration_failed", "migration_finished", "repartitioning",
                          "migrations_completed", "member_crashed", "member_started"})
    judged_on = frozenset({"migration_started"})

    @abstractmethod
    def judge(self, flight: Pairs, event: MigrationStarted,
              entry: tuple[int | None, frozenset[str]]) -> str | None:
        """A message if `event` may not start with `flight` (the master's others) in flight."""

    def observe(self, state: Hashable, event: Event) -> tuple[Hashable, str | None]:
        pairs: Pairs = state  # type: ignore[assignment]
        me = event.member
        if isinstance(event, MigrationStarted):
            key = (me, event.migration)
            if event.role != "master" or lookup(pairs, key) is not None:
                return state, None
            endpoints = frozenset(e for e in (event.destination, source_endpoint(event))
                                  if e is not None)
            entry = (event.partition, endpoints)
            mine = frozenset((k, v) for k, v in pairs if k[0] == me)
            return assign(pairs, key, entry), self.judge(mine, event, entry)
        if isinstance(event, MigrationCommitted | MigrationRolledBack):
            if event.role != "master":
                return state, None
            return _without(pairs, lambda k: k != (me, event.migration)), None
        if isinstance(event, MigrationFailed | MigrationFinished):
            return _without(pairs, lambda k: k != (me, event.migration)), None
        if isinstance(event, MigrationsCompleted) and event.outcome == "progress":
            return state, None
        return _without(pairs, lambda k: k[0] != me), None


class OnePerPartition(_InFlight):
    """PAR-ONE-PER-PARTITION: at most one migration of a partition in flight at the master.

    003 §2.2: migrations of one partition run serially. A violation is the master starting a
    migration of partition p while another migration of p it started has not been seen to end
    (see `_InFlight` for when a migration ends). A restart of the same migration id is not a
    second migration; a start without a partition is not judged.
    """

    spec = "PAR-ONE-PER-PARTITION"

    def judge(self, flight: Pairs, event: MigrationStarted,
              entry: tuple[int | None, frozenset[str]]) -> str | None:
        if event.partition is None:
            return None
        for (_, migration), (partition, _) in sorted(flight, key=repr):
            if partition == event.partition:
                return (f"master {event.member} starts migration {event.migration} of partition "
                        f"{partition} while migration {migration} of it is in flight")
        return None


class MaxParallel(_InFlight):
    """PAR-MAX-PARALLEL: at most `max_parallel` migrations in flight per member.

    003 §2.2 and Hazelcast's ``MigrationPlanTask``: the master starts a migration only when its
    destination and its source endpoint each have fewer than `max_parallel` migrations in
    flight. Every migration in flight at the master counts once against each of its endpoints
    that its start event shows: the destination, and the source endpoint (`source_endpoint`, or
    `source_member` when its current replica index is 0; the owner otherwise, which only
    `source_endpoint` can show). A violation is a start after which some endpoint has more than
    `max_parallel` migrations in flight.
    """

    spec = "PAR-MAX-PARALLEL"

    def __init__(self, max_parallel: int = DEFAULT_MAX_PARALLEL) -> None:
        if max_parallel < 1:
            raise ValueError(f"max_parallel must be at least 1, not {max_parallel}")
        self.max_parallel = max_parallel

    def judge(self, flight: Pairs, event: MigrationStarted,
              entry: tuple[int | None, frozenset[str]]) -> str | None:
        for endpoint in sorted(entry[1]):
            n = 1 + sum(1 for _, (_, endpoints) in flight if endpoint in endpoints)
            if n > self.max_parallel:
                what = "destination" if endpoint == event.destination else "source endpoint"
                return (f"master {event.member} starts {_of(event.migration, event.partition)} "
                        f"with {n} migrations in flight at {what} {endpoint} "
                        f"(max {self.max_parallel})")
        return None


class StartQueued(Monitor):
    """PAR-START: the master waits only when no queued migration may start.

    003 §2.2 and Hazelcast's ``MigrationPlanTask`` (``next``, ``next0``, ``select``): the plan
    task starts the migration at the head of a partition's queue as soon as no migration of
    that partition is in flight and its destination and its source endpoint each have fewer
    than `max_parallel` migrations in flight, and waits for one to complete only when no head
    is such. Judged where the master waits (``migrations_waiting``), on what the event shows:
    none of the heads it waits with may be one it could start, given the migrations it has in
    flight, each counted once against its destination and its source endpoint (as
    PAR-MAX-PARALLEL counts them). An unknown source endpoint (a partition without owner) counts
    as no endpoint, as ``select`` counts it. Stateless: the event carries the migrations in
    flight, so a stream that misses a start or a commit misjudges nothing.
    """

    spec = "PAR-START"
    observes = frozenset({"migrations_waiting"})

    def __init__(self, max_parallel: int = DEFAULT_MAX_PARALLEL) -> None:
        if max_parallel < 1:
            raise ValueError(f"max_parallel must be at least 1, not {max_parallel}")
        self.max_parallel = max_parallel

    def initial(self) -> Hashable:
        return None

    def observe(self, state: Hashable, event: Event) -> tuple[Hashable, str | None]:
        assert isinstance(event, MigrationsWaiting)
        busy = {p for p, _, _ in event.in_flight}
        load: dict[str, int] = {}
        for _, destination, endpoint in event.in_flight:
            for e in {destination, endpoint} - {None}:
                load[e] = load.get(e, 0) + 1
        for partition, destination, endpoint in event.waiting:
            if partition in busy:
                continue
            ends = [e for e in dict.fromkeys((destination, endpoint)) if e is not None]
            if all(load.get(e, 0) < self.max_parallel for e in ends):
                runs = ", ".join(
                    f"{'destination' if e == destination else 'source endpoint'} {e} runs "
                    f"{load.get(e, 0)}" for e in ends)
                return state, (f"master {event.member} waits with the migration of partition "
                               f"{partition} to {destination} queued, which it may start: no "
                               f"migration of partition {partition} is in flight, {runs} (max "
                               f"{self.max_parallel})")
        return state, None


class PlannedVersion(Monitor):
    """PAR-VERSION: a migration runs only on the partition version it was planned on.

    003 §1.2: a member executes a migration operation only if its local version of the partition
    equals the version in the ``MigrationInfo``. Judged on every `migration_started` that carries
    both `planned_version` and `partition_version` (any role): they must be equal. Stateless.
    """

    spec = "PAR-VERSION"
    observes = frozenset({"migration_started"})

    def initial(self) -> Hashable:
        return None

    def observe(self, state: Hashable, event: Event) -> tuple[Hashable, str | None]:
        assert isinstance(event, MigrationStarted)
        if event.planned_version is None or event.partition_version is None:
            return state, None
        if event.planned_version != event.partition_version:
            return state, (f"{event.role} {event.member} starts "
                           f"{_of(event.migration, event.partition)} on partition version "
                           f"{event.partition_version}, but it was planned on version "
                           f"{event.planned_version}")
        return state, None


MONITORS: tuple[type[Monitor], ...] = (MasterOnly, TableVersion, MostRecent, Stamp, CommitOrder,
                                       Atomic, RejectStale, OnePerPartition, MaxParallel,
                                       StartQueued, PlannedVersion)

# --- MIG-STATS ------------------------------------------------------------------------------------


class MigrationStats(PerMember):
    """MIG-STATS: the master's migration statistics add up.

    The master's log line ``Repartitioning cluster data. Migration tasks count: N`` starts a
    rebalance of N planned migrations (``MigrationStats.markNewRepartition``), and its end logs
    the statistics: planned = completed + remaining always, and a rebalance that reports all tasks
    completed has nothing remaining; the planned count is the N of the member's last
    repartitioning, when that was seen. State: per member, the planned count of its last
    repartitioning.
    """

    spec = "MIG-STATS"
    observes = frozenset({"repartitioning", "migrations_completed", "member_crashed",
                          "member_started"})
    judged_on = frozenset({"migrations_completed"})

    def observe(self, state: Hashable, event: Event) -> tuple[Hashable, str | None]:
        pairs: Pairs = state  # type: ignore[assignment]
        me = event.member
        if isinstance(event, Repartitioning):
            return (assign(pairs, me, event.planned) if event.planned else pairs), None
        if not isinstance(event, MigrationsCompleted):
            return _without(pairs, lambda k: k != me), None
        e = event
        if e.planned != e.completed + e.remaining:
            return state, (f"{me} reports {e.planned} planned migrations but {e.completed} "
                           f"completed and {e.remaining} remaining ({e.outcome})")
        if e.outcome == "completed" and e.remaining:
            return state, (f"{me} reports all migration tasks completed with {e.remaining} of "
                           f"{e.planned} remaining")
        planned = lookup(pairs, me)
        if planned is not None and e.planned != planned:
            return state, (f"{me} repartitioned with {planned} migration tasks but its "
                           f"statistics ({e.outcome}) count {e.planned} planned")
        return state, None


register(Spec(
    id="PT-VERSION", title="Partition table versions never go back",
    statement="At every member, the global partition table version it applies (3.7) never "
              "decreases, and for every partition the partition version it applies (4.1) never "
              "decreases; equal versions are a republish. A crashed member starts afresh.",
    seed="000", section="§1.1 Reducing Places Where The Partition Table Is Updated; 003 §1.2",
    kind="event monitor", monitor=TableVersion,
    rationale="Members take a table only when its version is bigger than theirs (000 §1.1), "
              "partition by partition in 4.1 (003 §1.2). A member that goes back to an older "
              "table acts on stale ownership: a first backup that clears its data after having "
              "been promoted loses it."))
register(Spec(
    id="PAR-STAMP", title="The stamp is the hash of the partition versions",
    statement="A partition table that carries both partition versions and a stamp has as stamp "
              "Hazelcast's HashUtil.MurmurHash3_x64_64 (an early-draft MurmurHash3, seed "
              "0x01000193) of its versions written big-endian, 4 bytes per partition.",
    seed="003", section="§1.3 Partition Table Stamp", kind="event monitor", monitor=Stamp,
    rationale="The stamp replaces the global version where whole tables are compared (promotion "
              "commit, cluster state transactions, 003 §3.1); a stamp that is not the hash of "
              "the versions makes equal tables look different or different ones look equal."))
register(Spec(
    id="MIG-COMMIT-ORDER", title="Safe migration commit order",
    statement="For one migration, the destination commits before the master and the master "
              "before the source: no commit is seen after a commit of the same migration by a "
              "later role, the master does not commit after the destination rolled back, and the "
              "source does not commit after the master rolled back.",
    seed="000", section="§2.1 Safe Migration Commit", kind="event monitor", monitor=CommitOrder,
    rationale="\"We commit a migration on MASTER only when we make sure that MIGRATION "
              "DESTINATION has received the updated partition table and committed the migration, "
              "and we commit a migration on MIGRATION SOURCE only when it is committed in "
              "MASTER.\" A source that clears its data before the destination has it loses the "
              "data if the destination crashes."))
register(Spec(
    id="MIG-ATOMIC", title="Migration participants agree",
    statement="Never the source of a migration committed while its destination rolled it back "
              "(data loss), nor the destination committed while the source rolled it back (data "
              "leak), unless the destination crashed or left the cluster before the source's "
              "rollback.",
    seed="000", section="§2.1 Safe Migration Commit; §2.2 Recovering Master Crashes During "
                        "Migration",
    kind="event monitor", monitor=Atomic,
    rationale="Participants that finalise on their own take conflicting actions when the master "
              "crashes during finalisation (000 §2.1 Problems). A new master must commit at the "
              "source a migration the destination already committed (000 §2.2)."))
register(Spec(
    id="PAR-ONE-PER-PARTITION", title="One migration per partition at a time",
    statement="The master never starts a migration of a partition while another migration of "
              "that partition it started has not committed or rolled back.",
    seed="003", section="§2.2 Parallel Migrations Mechanism", kind="event monitor",
    monitor=OnePerPartition,
    rationale="Migrations of one partition depend on each other (a later one may move a replica "
              "an earlier one created) and must run serially; only migrations of different "
              "partitions run in parallel."))
register(Spec(
    id="PAR-MAX-PARALLEL", title="At most max.parallel.migrations per member",
    statement="At the master, no member is the destination or the source endpoint (the source "
              "when it is the owner, else the partition owner) of more than "
              "hazelcast.partition.max.parallel.migrations (default 10) migrations in flight.",
    seed="003", section="§2.2 Parallel Migrations Mechanism; Hazelcast's MigrationPlanTask",
    kind="event monitor", monitor=MaxParallel,
    rationale="The limit keeps heap use and network load under control during rebalancing; "
              "backup data is sent by the owner, so the owner is the endpoint of a backup "
              "migration."))
register(Spec(
    id="PAR-START", title="The master starts every migration it may start",
    statement="The master waits for a migration to complete only when no queued migration may "
              "start: the head of no partition's queue has no migration of its partition in "
              "flight and a destination and a source endpoint each with fewer than "
              "hazelcast.partition.max.parallel.migrations migrations in flight.",
    seed="003", section="§2.2 Parallel Migrations Mechanism; Hazelcast's MigrationPlanTask",
    kind="event monitor", monitor=StartQueued,
    rationale="Parallel migrations exist to shorten a rebalance; a master that lets a "
              "migration it may start wait for the next completion keeps the limit "
              "(PAR-MAX-PARALLEL holds) and still finishes, only later, one migration at a "
              "time where the limit allows several."))
register(Spec(
    id="PAR-VERSION", title="A migration runs on the version it was planned on",
    statement="A migration starts at a member only when that member's version of the partition "
              "equals the version the migration was planned on.",
    seed="003", section="§1.2 New Versioning Mechanism", kind="event monitor",
    monitor=PlannedVersion,
    rationale="A member that missed an update of the partition would run the migration on a "
              "stale replica assignment; the version check rejects it instead."))


def partition_monitors(*, backups: int, max_parallel: int, serial: bool) -> list[Monitor]:
    """One instance of every partition service monitor (this module's and specs/data.py's),
    configured for a scope."""
    out: list[Monitor] = []
    for cls in (*MONITORS, *data.MONITORS):
        if cls is MaxParallel or cls is StartQueued:
            out.append(cls(max_parallel))
        elif cls is RejectStale:
            out.append(RejectStale(serial))
        elif issubclass(cls, data.BackupsMonitor):
            out.append(cls(backups))
        else:
            out.append(cls())
    return out


register(Spec(
    id="PT-MASTER-ONLY", title="Only the master changes the partition table",
    statement="A version names one table among the live members: no member applies or "
              "publishes a table whose global version (3.7), or the version of some partition "
              "(4.1), another live member holds with different replicas.",
    seed="000", section="§1.1 Reducing Places Where The Partition Table Is Updated",
    kind="event monitor", monitor=MasterOnly,
    rationale="Every table change is the master's and raises the version; a member that "
              "promotes itself or shifts replicas on its own holds a table no version "
              "describes, and acts on it (000 Problems: the promoted backup that clears its "
              "data when the master's table demotes it)."))
register(Spec(
    id="PT-MOST-RECENT", title="A new master publishes the most recent table",
    statement="No master publishes a table older than one a live member of its member list "
              "applied: a smaller global version (3.7), or a smaller version of a published "
              "partition (4.1).",
    seed="000", section="§1.2 Handling Master Changes", kind="event monitor",
    monitor=MostRecent,
    rationale="A master that crashes mid-publish leaves some members with a newer table; a new "
              "master that publishes its own older table makes them go back or ignore it, and "
              "the migrations the newer table records are undone."))
register(Spec(
    id="MIG-REJECT-STALE", title="Migrations are refused on undecided or stale state",
    statement="No source or destination starts a migration while it has another undecided "
              "migration (3.7; 4.1: of the same partition), or while its table version differs "
              "from the one the migration was planned on.",
    seed="000", section="§2.1 Safe Migration Commit", kind="event monitor",
    monitor=RejectStale,
    rationale="A participant with an undecided migration does not know its own replica indices "
              "yet; one with a stale table acts on replicas that moved. Either corrupts the "
              "replica data the migration is about."))

register(Spec(
    id="MIG-STATS", title="Migration statistics add up",
    statement="At the end of a rebalance (and while it runs) the master's statistics satisfy "
              "planned = completed + remaining; a rebalance reported complete has nothing "
              "remaining, and its planned count is the task count of the repartitioning that "
              "started it.",
    seed="000", section="§3 (repartitioning); Hazelcast's migration statistics log line",
    kind="event monitor",
    monitor=MigrationStats,
    rationale="The statistics are what an operator reads to know whether a rebalance finished; "
              "counts that do not add up mean migrations were lost from the plan or counted "
              "twice."))

"""The table, data and shutdown monitors added for the partition service (specs/partition.py
PT-MASTER-ONLY, PT-MOST-RECENT, MIG-REJECT-STALE; specs/data.py) over hand-written event
streams: each catches its violation and holds on the correct run next to it."""

from __future__ import annotations

from partsafe.specs.data import (
    Held,
    LeaveEmpty,
    NoLeak,
    NoLoss,
    OnlySource,
    ReplicaCount,
    ShutdownNoLoss,
    Target,
)
from partsafe.specs.monitor import Monitor, run
from partsafe.specs.partition import MasterOnly, MostRecent, RejectStale, partition_monitors
from partsafe.specs.registry import get
from partsafe.traces.events import (
    Event,
    MemberCrashed,
    MemberJoined,
    MemberLeft,
    MemberListInstalled,
    MemberRemoved,
    MigrationCommitted,
    MigrationRolledBack,
    MigrationStarted,
    PartitionLost,
    PartitionTableApplied,
    PartitionTablePublished,
    ReplicaCleared,
    ReplicaSynced,
    ShutdownAllowed,
    ShutdownRequested,
)

R = tuple[tuple[str | None, ...], ...]


def messages(monitor: Monitor, events: list[Event], *, quiescent: bool = False) -> list[str]:
    return [m for _, m in run(monitor, events, quiescent_at_end=quiescent)]


def run_state(monitor: Monitor, events: list[Event]) -> object:
    state = monitor.initial()
    for e in events:
        if e.TYPE in monitor.observes:
            state, _ = monitor.observe(state, e)
    return state


def synced(member: str, p: int, index: int = 0) -> ReplicaSynced:
    return ReplicaSynced(member=member, partition=p, replica_index=index)


def cleared(member: str, p: int, index: int = 0) -> ReplicaCleared:
    return ReplicaCleared(member=member, partition=p, replica_index=index)


def published(master: str, version: int, replicas: R) -> PartitionTablePublished:
    return PartitionTablePublished(member=master, version=version, replicas=replicas)


def applied(member: str, version: int, replicas: R, sender: str = "A") -> PartitionTableApplied:
    return PartitionTableApplied(member=member, version=version, replicas=replicas,
                                 sender=sender)


def members(member: str, *names: str) -> MemberListInstalled:
    return MemberListInstalled(member=member, version=None, members=names, master=names[0])


def start(member: str, role: str, migration: str = "m1", partition: int = 0,
          destination: str = "C", planned: int | None = None) -> MigrationStarted:
    return MigrationStarted(member=member, role=role, migration=migration, partition=partition,
                            destination=destination, planned_version=planned)


# --- PT-MASTER-ONLY -------------------------------------------------------------------------


def test_master_only_catches_a_table_changed_under_the_same_version() -> None:
    out = messages(MasterOnly(), [published("A", 3, (("A", "B"),)),
                                  applied("B", 3, (("B", None),), sender="B")])
    assert out == ["B applies partition table version 3 as [B,-], but A holds it as [A,B]: a "
                   "table changed without the master"]


def test_master_only_holds_when_every_version_names_one_table() -> None:
    assert not messages(MasterOnly(), [published("A", 3, (("A", "B"),)),
                                       applied("B", 3, (("A", "B"),)),
                                       published("A", 4, (("B", "A"),)),
                                       applied("B", 4, (("B", "A"),))])


def test_master_only_forgets_the_table_of_a_crashed_master() -> None:
    events: list[Event] = [published("B", 6, (("B", "C"),)), MemberCrashed(member="B"),
                           published("C", 6, (("C", None),))]
    assert not messages(MasterOnly(), events)
    assert messages(MasterOnly(), [events[0], published("C", 6, (("C", None),))])


def test_master_only_compares_partition_versions_partition_by_partition() -> None:
    a = PartitionTablePublished(member="A", partition_versions=(2, 5),
                                replicas=(("A",), ("B",)), partitions=(1,))
    same = PartitionTableApplied(member="C", partition_versions=(7, 5),
                                 replicas=(("C",), ("B",)))
    other = PartitionTableApplied(member="C", partition_versions=(7, 5),
                                  replicas=(("C",), ("C",)))
    assert not messages(MasterOnly(), [a, same])
    assert "partition 1 version 5" in messages(MasterOnly(), [a, other])[0]


# --- PT-MOST-RECENT -------------------------------------------------------------------------


def test_most_recent_catches_a_new_master_publishing_an_older_table() -> None:
    out = messages(MostRecent(), [members("B", "A", "B", "C"), applied("C", 5, (("A",),)),
                                  MemberCrashed(member="A"),
                                  MemberRemoved(member="B", removed="A"),
                                  published("B", 4, (("B",),))])
    assert out == ["master B publishes a partition table older than the one C applied "
                   "(version 5 > 4)"]


def test_most_recent_holds_for_members_outside_the_view_and_ended_members() -> None:
    base: list[Event] = [members("B", "B", "C"), applied("C", 4, (("B",),)),
                         applied("D", 9, (("D",),))]
    assert not messages(MostRecent(), [*base, published("B", 4, (("B",),))])
    # D joins B's view later but left before the publish
    assert not messages(MostRecent(), [*base, MemberJoined(member="B", joined="D"),
                                       MemberLeft(member="D"), published("B", 4, (("B",),))])
    assert messages(MostRecent(), [*base, MemberJoined(member="B", joined="D"),
                                   published("B", 4, (("B",),))])


def test_most_recent_does_not_judge_a_master_whose_member_list_it_never_saw() -> None:
    assert not messages(MostRecent(), [applied("C", 5, (("A",),)), published("B", 4, (("B",),))])


# --- MIG-REJECT-STALE -----------------------------------------------------------------------


def test_reject_stale_catches_a_second_undecided_migration() -> None:
    events: list[Event] = [start("C", "destination", "m1", 0), start("C", "source", "m2", 1)]
    assert "while its migration m1 is undecided" in messages(RejectStale(serial=True), events)[0]
    # 4.1: only migrations of one partition exclude each other
    assert not messages(RejectStale(serial=False), events)
    decided: list[Event] = [events[0], MigrationCommitted(member="C", role="destination",
                                                          migration="m1", partition=0),
                            events[1]]
    assert not messages(RejectStale(serial=True), decided)


def test_reject_stale_catches_a_start_on_a_stale_table() -> None:
    stale: list[Event] = [applied("C", 3, (("A",),)), start("C", "destination", planned=4)]
    assert "planned on version 4 with version 3" in messages(RejectStale(), stale)[0]
    fresh: list[Event] = [applied("C", 4, (("A",),)), start("C", "destination", planned=4)]
    assert not messages(RejectStale(), fresh)


def test_reject_stale_forgets_a_crashed_member() -> None:
    events: list[Event] = [start("C", "destination", "m1"), MemberCrashed(member="C"),
                           start("C", "destination", "m2")]
    assert not messages(RejectStale(), events)


# --- DATA-NO-LOSS ---------------------------------------------------------------------------


def test_no_loss_catches_the_last_copy_cleared() -> None:
    out = messages(NoLoss(backups=1), [synced("A", 0), synced("B", 0, 1), cleared("B", 0, 1),
                                       cleared("A", 0)])
    assert out == ["partition 0 has no live copy after the clear at A (0 crash(es), "
                   "1 backup(s))"]


def test_no_loss_holds_within_the_crash_budget_and_beyond_it_says_nothing() -> None:
    keep: list[Event] = [synced("A", 0), synced("B", 0, 1), MemberCrashed(member="A")]
    assert not messages(NoLoss(backups=1), keep)
    both = [*keep, MemberCrashed(member="B")]
    assert not messages(NoLoss(backups=1), both)  # two crashes with one backup: allowed
    assert messages(NoLoss(backups=2), both)


def test_no_loss_catches_a_partition_lost_report_within_the_budget() -> None:
    lost = PartitionLost(member="A", partition=1)
    assert messages(NoLoss(backups=1), [lost])
    assert not messages(NoLoss(backups=1), [MemberCrashed(member="B"),
                                            MemberCrashed(member="C"), lost])


# --- DATA-REPLICAS --------------------------------------------------------------------------

TABLE2: R = (("A", "B"),)


def test_replicas_catches_an_old_backup_clearing_before_the_new_one_has_the_data() -> None:
    events: list[Event] = [synced("A", 0), synced("B", 0, 1),
                           published("A", 2, (("A", "C"),)), cleared("B", 0, 1)]
    out = messages(ReplicaCount(backups=1), events)
    assert out and "leaving 1 available copies (A) where 2 are required" in out[0]
    # the same clear after C has the data keeps two copies
    ok: list[Event] = [synced("A", 0), synced("B", 0, 1), synced("C", 0, 1),
                       published("A", 2, (("A", "C"),)), cleared("B", 0, 1)]
    assert not messages(ReplicaCount(backups=1), ok)


def test_replicas_does_not_count_a_copy_in_transit_or_blame_a_crash() -> None:
    rollback: list[Event] = [synced("A", 0), published("A", 1, (("A", "B"),)),
                             start("D", "destination", destination="D"), synced("D", 0, 1),
                             MemberCrashed(member="B"),
                             MigrationRolledBack(member="D", role="destination", migration="m1",
                                                 partition=0), cleared("D", 0, 1)]
    assert not messages(ReplicaCount(backups=1), rollback)


def test_replicas_is_not_judged_at_quiescence() -> None:
    events: list[Event] = [members("A", "A", "B"), synced("A", 0), published("A", 1, TABLE2)]
    assert ReplicaCount(backups=1).at_quiescence(run_state(ReplicaCount(backups=1), events)) \
        is None  # a named replica without the data is DATA-HELD's


# --- DATA-NO-LEAK ---------------------------------------------------------------------------


def test_no_leak_catches_a_copy_the_table_does_not_assign() -> None:
    events: list[Event] = [members("A", "A", "B", "C"), synced("A", 0), synced("B", 0, 1),
                           synced("C", 0, 1), published("A", 3, TABLE2)]
    out = messages(NoLeak(), events, quiescent=True)
    assert out == ["C holds data of partition 0, which the table [A, B] does not assign to it"]
    assert not messages(NoLeak(), events)  # only judged at quiescence
    assert not messages(NoLeak(), [*events, cleared("C", 0, 1)], quiescent=True)
    assert not messages(NoLeak(), [*events, MemberCrashed(member="C")], quiescent=True)


# --- DATA-HELD ------------------------------------------------------------------------------


def test_held_wants_every_named_live_replica_to_hold_data() -> None:
    events: list[Event] = [members("A", "A", "B"), synced("A", 0), published("A", 1, TABLE2)]
    assert messages(Held(), events, quiescent=True) == [
        "the table names B at replica index 1 of partition 0 [A, B], but B does not hold its "
        "data"]
    assert not messages(Held(), events)  # only judged at quiescence
    assert not messages(Held(), [*events, synced("B", 0, 1)], quiescent=True)


def test_held_catches_a_rolled_back_shift_up_that_clears_its_destination() -> None:
    # C, backup of [A, C], is the destination of a shift up to index 0; the source A crashes,
    # the migration is rolled back, C clears the copy the table still names it for
    events: list[Event] = [members("A", "A", "B", "C"), synced("A", 0), synced("C", 0, 1),
                           published("A", 1, (("A", "C"),)), MemberCrashed(member="A"),
                           published("B", 2, (("C", "B"),)), synced("B", 0, 1),
                           MigrationRolledBack(member="C", role="destination", migration="m1",
                                               partition=0), cleared("C", 0, 0)]
    assert messages(Held(), events, quiescent=True) == [
        "the table names C at replica index 0 of partition 0 [C, B], but C does not hold its "
        "data"]
    assert not messages(Held(), events[:-1], quiescent=True)


def test_held_judges_only_live_members_and_partitions_with_a_copy_left() -> None:
    named: list[Event] = [members("A", "A", "B", "C"), synced("A", 0), synced("B", 0, 1),
                          published("A", 1, TABLE2)]
    # a crashed replica holds nothing and is not judged
    assert not messages(Held(), [*named, MemberCrashed(member="B")], quiescent=True)
    # more crashes than backups: every copy gone, the new owner starts empty (DATA-NO-LOSS's)
    lost: list[Event] = [*named, MemberCrashed(member="A"), MemberCrashed(member="B"),
                         published("C", 3, (("C", None),))]
    assert not messages(Held(), lost, quiescent=True)
    # a partition the master reports lost is not judged either
    reported: list[Event] = [members("A", "A", "C"), synced("A", 0),
                             published("A", 3, (("C", None),))]
    assert messages(Held(), reported, quiescent=True)
    assert not messages(Held(), [*reported, PartitionLost(member="A", partition=0)],
                        quiescent=True)
    # a partition no replica_synced named is unknown
    assert not messages(Held(), [members("A", "A", "B"), published("A", 1, TABLE2)],
                        quiescent=True)


# --- PT-TARGET ------------------------------------------------------------------------------


def test_target_catches_a_table_short_of_the_planners_target() -> None:
    events: list[Event] = [members("A", "A", "B"), published("A", 1, (("A", None), ("A", None)))]
    out = messages(Target(backups=1), events, quiescent=True)
    assert out == ["partition 0 [A, -] has 1 replica(s), where 2 are required (1 backup(s), 2 "
                   "member(s) not leaving)"]


def test_target_holds_on_a_balanced_table_and_catches_a_leaving_replica() -> None:
    balanced = (("A", "B"), ("B", "A"))
    events: list[Event] = [members("A", "A", "B"), published("A", 1, balanced)]
    assert not messages(Target(backups=1), events, quiescent=True)
    out = messages(Target(backups=1), [*events, ShutdownRequested(member="B")], quiescent=True)
    assert out and "still names B" in out[0]


# --- SHUT-* ---------------------------------------------------------------------------------


def test_only_source_catches_a_leaving_member_taking_data() -> None:
    events: list[Event] = [ShutdownRequested(member="C"), start("C", "destination")]
    assert messages(OnlySource(), events) == [
        "C requested shutdown and starts migration m1 of partition 0 as its destination"]
    assert not messages(OnlySource(), [ShutdownRequested(member="C"), start("C", "source")])
    assert not messages(OnlySource(), [start("C", "destination"), ShutdownRequested(member="C")])


def test_leave_empty_catches_a_member_leaving_while_named() -> None:
    events: list[Event] = [published("A", 1, TABLE2), ShutdownAllowed(member="A", leaving="B")]
    assert messages(LeaveEmpty(), events) == [
        "B is allowed to leave while the table names it at replica index 1 of partition 0 "
        "[A, B]"]
    assert messages(LeaveEmpty(), [published("A", 1, TABLE2), MemberLeft(member="B")])
    moved: list[Event] = [published("A", 1, TABLE2), published("A", 2, (("A", "C"),)),
                          ShutdownAllowed(member="A", leaving="B"), MemberLeft(member="B")]
    assert not messages(LeaveEmpty(), moved)


def test_shutdown_no_loss_catches_a_leaving_member_taking_the_last_copy() -> None:
    events: list[Event] = [synced("A", 0), synced("B", 1), ShutdownRequested(member="A"),
                           ShutdownRequested(member="B"), cleared("A", 0), cleared("B", 1)]
    assert messages(ShutdownNoLoss(), events) == [
        "A, shutting down, clears the last copy of partition 0",
        "B, shutting down, clears the last copy of partition 1"]
    safe: list[Event] = [synced("A", 0), synced("C", 0, 1), ShutdownRequested(member="A"),
                         cleared("A", 0)]
    assert not messages(ShutdownNoLoss(), safe)


# --- catalogue ------------------------------------------------------------------------------


def test_every_partition_service_monitor_is_registered_once() -> None:
    monitors = partition_monitors(backups=1, max_parallel=2, serial=True)
    ids = [m.spec for m in monitors]
    assert len(ids) == len(set(ids)) == 19
    for spec in ids:
        assert get(spec).monitor is type(next(m for m in monitors if m.spec == spec))

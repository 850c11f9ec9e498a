"""The partition table and migration monitors of specs/partition.py over hand-written event
streams, and their catalogue entries."""

from __future__ import annotations

import itertools

import pytest

from partsafe.specs.monitor import Monitor, run
from partsafe.specs.partition import (
    MONITORS,
    Atomic,
    CommitOrder,
    MaxParallel,
    OnePerPartition,
    PlannedVersion,
    Stamp,
    StartQueued,
    TableVersion,
    source_endpoint,
)
from partsafe.specs.registry import DESIGNS, all_specs, get
from partsafe.specs.rules import stamp
from partsafe.traces.events import (
    Event,
    MemberCrashed,
    MemberJoined,
    MemberRemoved,
    MigrationCommitted,
    MigrationRolledBack,
    MigrationsCompleted,
    MigrationStarted,
    MigrationsWaiting,
    PartitionTableApplied,
    Repartitioning,
)


def messages(monitor: Monitor, events: list[Event]) -> list[str]:
    return [m for _, m in run(monitor, events)]


def table(member: str, version: int | None = None, versions: tuple[int, ...] | None = None,
          stamp_: int | None = None) -> PartitionTableApplied:
    return PartitionTableApplied(member=member, version=version, partition_versions=versions,
                                 stamp=stamp_)


def commit(member: str, role: str, migration: str = "m1",
           partition: int | None = 3) -> MigrationCommitted:
    return MigrationCommitted(member=member, role=role, migration=migration, partition=partition)


def rollback(member: str, role: str, migration: str = "m1",
             partition: int | None = 3) -> MigrationRolledBack:
    return MigrationRolledBack(member=member, role=role, migration=migration, partition=partition)


def start(migration: str, partition: int | None, destination: str | None = None,
          source: str | None = None, index: int | None = None, endpoint: str | None = None,
          master: str = "A", role: str = "master") -> MigrationStarted:
    return MigrationStarted(member=master, role=role, migration=migration, partition=partition,
                            destination=destination, source_member=source,
                            source_current_index=index,
                            source_endpoint=endpoint)


def states(monitor: Monitor, events: list[Event]) -> list[object]:
    state = monitor.initial()
    out = [state]
    for ev in events:
        if ev.TYPE in monitor.observes:
            state, _ = monitor.observe(state, ev)
            out.append(state)
    return out


def test_monitors_are_the_eleven_partition_table_and_migration_specs() -> None:
    assert [m.spec for m in MONITORS] == ["PT-MASTER-ONLY", "PT-VERSION", "PT-MOST-RECENT",
                                          "PAR-STAMP", "MIG-COMMIT-ORDER", "MIG-ATOMIC",
                                          "MIG-REJECT-STALE", "PAR-ONE-PER-PARTITION",
                                          "PAR-MAX-PARALLEL", "PAR-START", "PAR-VERSION"]


# --- PT-VERSION -------------------------------------------------------------------------------


def test_table_version_catches_a_global_version_going_back() -> None:
    events = [table("B", 5), table("B", 7), table("B", 7), table("B", 6)]
    found = run(TableVersion(), events)
    assert [(e, m) for e, m in found] == [(events[3], "B applies partition table version 6 "
                                                      "after 7")]


def test_table_version_catches_a_partition_version_going_back() -> None:
    events = [table("B", versions=(1, 2, 3)), table("B", versions=(1, 4, 3)),
              table("B", versions=(2, 3, 3))]
    assert messages(TableVersion(), events) == ["B applies version 3 of partition 1 after 4"]


def test_table_version_holds_per_member_with_republish_and_crash() -> None:
    events = [table("A", 5, (1, 1)), table("B", 3, (0, 1)), table("A", 5, (1, 1)),
              table("B", 5, (1, 1)), MemberCrashed(member="B"), table("B", 1, (0, 0)),
              table("A", 6, (1, 2))]
    assert messages(TableVersion(), events) == []


# --- PAR-STAMP --------------------------------------------------------------------------------


def test_stamp_catches_a_wrong_stamp() -> None:
    right = stamp((3, 1, 4))
    events = [table("C", versions=(3, 1, 4), stamp_=right + 1)]
    assert messages(Stamp(), events) == [
        f"C applies a partition table with stamp {right + 1}, but the stamp of its 3 partition "
        f"versions is {right}"]


def test_stamp_holds_and_ignores_tables_without_stamp_or_versions() -> None:
    events = [table("C", versions=(3, 1, 4), stamp_=stamp((3, 1, 4))),
              table("C", versions=(3, 1, 5)), table("C", version=9, stamp_=12345)]
    assert messages(Stamp(), events) == []


def test_stamp_reports_versions_that_are_not_java_ints() -> None:
    (message,) = messages(Stamp(), [table("C", versions=(0, 2**31), stamp_=1)])
    assert message.startswith("C applies a partition table with stamp 1: version 2147483648 of "
                              "partition 1")


# --- MIG-COMMIT-ORDER -------------------------------------------------------------------------


def test_commit_order_catches_the_source_committing_before_the_master() -> None:
    events = [commit("D", "destination"), commit("S", "source"), commit("A", "master")]
    found = run(CommitOrder(), events)
    assert found == [(events[2], "master A commits migration m1 of partition 3 after source S "
                                 "committed it")]


def test_commit_order_catches_the_destination_committing_last() -> None:
    events = [commit("A", "master"), commit("D", "destination")]
    assert messages(CommitOrder(), events) == [
        "destination D commits migration m1 of partition 3 after master A committed it"]


def test_commit_order_catches_a_commit_after_the_awaited_rollback() -> None:
    assert messages(CommitOrder(), [rollback("D", "destination"), commit("A", "master")]) == [
        "master A commits migration m1 of partition 3 after destination D rolled it back"]
    assert messages(CommitOrder(), [rollback("A", "master", partition=None),
                                    commit("S", "source", partition=None)]) == [
        "source S commits migration m1 after master A rolled it back"]


def test_commit_order_holds_in_the_safe_order_and_per_migration() -> None:
    events = [commit("D", "destination"), commit("S", "source", "m2"), commit("A", "master"),
              commit("S", "source"), commit("D", "destination", "m2")]
    # m2 is out of order (source before destination): only m2 is flagged
    assert messages(CommitOrder(), events) == [
        "destination D commits migration m2 of partition 3 after source S committed it"]
    safe = [commit("D", "destination"), commit("A", "master"), commit("B", "master"),
            commit("S", "source"), rollback("D", "destination", "m3"),
            rollback("A", "master", "m3"), rollback("S", "source", "m3")]
    assert messages(CommitOrder(), safe) == []


def test_commit_order_treats_missing_events_as_unknown() -> None:
    # no destination commit in sight: the master's and the source's commits are not judged
    assert messages(CommitOrder(), [commit("A", "master"), commit("S", "source")]) == []
    assert messages(CommitOrder(), [commit("S", "source")]) == []


# --- MIG-ATOMIC -------------------------------------------------------------------------------


def test_atomic_catches_data_loss() -> None:
    events = [commit("S", "source"), rollback("D", "destination")]
    found = run(Atomic(), events)
    assert found == [(events[1], "data loss: source S committed migration m1 of partition 3 "
                                 "and destination D rolled it back")]
    assert messages(Atomic(), events[::-1]) == [
        "data loss: source S committed migration m1 of partition 3 and destination D rolled it "
        "back"]


def test_atomic_catches_data_leak() -> None:
    events = [commit("D", "destination"), rollback("S", "source")]
    assert messages(Atomic(), events) == [
        "data leak: destination D committed migration m1 of partition 3 and source S rolled it "
        "back"]


def test_atomic_allows_a_leak_of_a_destination_that_left() -> None:
    # 000 §2.1 step 4: the destination committed, then left; the master fails the migration
    events = [commit("D", "destination"), MemberRemoved(member="A", removed="D"),
              rollback("A", "master"), rollback("S", "source")]
    assert messages(Atomic(), events) == []
    crashed = [commit("D", "destination"), MemberCrashed(member="D"), rollback("S", "source")]
    assert messages(Atomic(), crashed) == []
    rejoined = [commit("D", "destination"), MemberRemoved(member="A", removed="D"),
                MemberJoined(member="A", joined="D"), rollback("S", "source")]
    assert len(messages(Atomic(), rejoined)) == 1
    # crash-stop: a join request of a crashed member seen later (sent before the crash) does
    # not bring it back, while a removed member that rejoins is judged again
    stale_join = [commit("D", "destination"), MemberCrashed(member="D"),
                  MemberJoined(member="B", joined="D"), rollback("S", "source")]
    assert messages(Atomic(), stale_join) == []


def test_atomic_holds_when_participants_agree() -> None:
    events = [commit("D", "destination"), commit("A", "master"), commit("S", "source"),
              rollback("D", "destination", "m2"), rollback("S", "source", "m2"),
              rollback("S", "source", "m3"), commit("D", "destination", "m4"),
              rollback("A", "master", "m4")]
    assert messages(Atomic(), events) == []
    # one member in both roles, and decisions of other migrations, are not judged against
    assert messages(Atomic(), [commit("S", "source"), rollback("S", "destination"),
                               rollback("D", "destination", "m9")]) == []


# --- PAR-ONE-PER-PARTITION --------------------------------------------------------------------


def test_one_per_partition_catches_two_migrations_of_a_partition() -> None:
    events = [start("m1", 3), start("m2", 4), start("m3", 3)]
    found = run(OnePerPartition(), events)
    assert found == [(events[2], "master A starts migration m3 of partition 3 while migration "
                                 "m1 of it is in flight")]


def test_one_per_partition_holds_when_migrations_of_a_partition_are_serial() -> None:
    events = [start("m1", 3), start("m1", 3), start("m2", 4),
              start("m1", 3, role="destination", master="D"), commit("A", "master", "m1"),
              start("m3", 3), rollback("A", "master", "m3"), start("m4", 3),
              Repartitioning(member="A", planned=2), start("m5", 3),
              MigrationsCompleted(member="A", planned=1, completed=1, remaining=0),
              start("m6", 3), MemberCrashed(member="A"), start("m7", 3),
              start("m8", 3, master="B"), start("m9", None), start("m10", None)]
    assert messages(OnePerPartition(), events) == []


# --- PAR-MAX-PARALLEL -------------------------------------------------------------------------


def test_max_parallel_catches_a_destination_over_the_limit() -> None:
    events = [start("m1", 1, "D", "S", 0), start("m2", 2, "D", "T", 0),
              start("m3", 3, "D", "U", 0)]
    found = run(MaxParallel(2), events)
    assert found == [(events[2], "master A starts migration m3 of partition 3 with 3 "
                                 "migrations in flight at destination D (max 2)")]


def test_max_parallel_counts_the_owner_as_the_source_endpoint_of_a_backup_migration() -> None:
    # m2 moves a backup (source index 1): the owner O sends the data
    events = [start("m1", 1, "D", "O", 0), start("m2", 2, "E", "S", 1, endpoint="O"),
              start("m3", 3, "F", "S", 2)]
    assert messages(MaxParallel(2), events) == []
    events.append(start("m4", 4, "G", "O", 0))
    assert messages(MaxParallel(2), events) == [
        "master A starts migration m4 of partition 4 with 3 migrations in flight at source "
        "endpoint O (max 2)"]
    assert source_endpoint(events[2]) is None  # a backup source without its owner: unknown


def test_max_parallel_holds_when_migrations_end() -> None:
    events = [start(f"m{i}", i, "D", "S", 0) for i in range(10)]
    # m0 committed at its destination is still in flight at the master
    events += [commit("D", "destination", "m0"), start("m10", 10, "D", "S", 0)]
    assert messages(MaxParallel(), events) == [
        "master A starts migration m10 of partition 10 with 11 migrations in flight at "
        "destination D (max 10)"]
    events.insert(-1, rollback("A", "master", "m0"))
    assert messages(MaxParallel(), events) == []
    with pytest.raises(ValueError):
        MaxParallel(0)


# --- PAR-START --------------------------------------------------------------------------------


def waits(waiting: tuple = (), in_flight: tuple = (), master: str = "A") -> MigrationsWaiting:
    return MigrationsWaiting(member=master, waiting=waiting, in_flight=in_flight)


def test_start_catches_a_master_that_waits_with_a_migration_it_may_start() -> None:
    # the mutant of the triage: p0's migration A->B started, p1's B->C shares B and waits,
    # though B runs 1 of 2
    event = waits(waiting=((1, "C", "B"),), in_flight=((0, "B", "A"),))
    assert messages(StartQueued(2), [event]) == [
        "master A waits with the migration of partition 1 to C queued, which it may start: no "
        "migration of partition 1 is in flight, destination C runs 0, source endpoint B runs 1 "
        "(max 2)"]
    # nothing in flight at all: every head may start
    assert messages(StartQueued(1), [waits(waiting=((4, "D", None),))]) == [
        "master A waits with the migration of partition 4 to D queued, which it may start: no "
        "migration of partition 4 is in flight, destination D runs 0 (max 1)"]


def test_start_holds_where_the_partition_or_an_endpoint_is_busy() -> None:
    busy_partition = waits(waiting=((0, "C", "B"),), in_flight=((0, "B", "A"),))
    full_endpoint = waits(waiting=((1, "C", "B"),), in_flight=((0, "B", "A"),))
    full_destination = waits(waiting=((2, "D", "E"),),
                             in_flight=((0, "D", "A"), (1, "D", "B")))
    assert messages(StartQueued(2), [busy_partition, full_destination]) == []
    assert messages(StartQueued(1), [full_endpoint]) == []
    # a head is judged against what the event shows, whatever came before
    started = start("m1", 1, "C", "B", 0)
    assert messages(StartQueued(2), [started, full_destination]) == []
    with pytest.raises(ValueError):
        StartQueued(0)


# --- PAR-VERSION ------------------------------------------------------------------------------


def test_planned_version_catches_a_migration_on_another_version() -> None:
    ev = MigrationStarted(member="D", role="destination", migration="m1", partition=3,
                          planned_version=4, partition_version=5)
    assert messages(PlannedVersion(), [ev]) == [
        "destination D starts migration m1 of partition 3 on partition version 5, but it was "
        "planned on version 4"]


def test_planned_version_holds_and_ignores_missing_versions() -> None:
    events = [MigrationStarted(member="D", role="destination", migration="m1", partition=3,
                               planned_version=4, partition_version=4),
              MigrationStarted(member="S", role="source", migration="m1", planned_version=4),
              MigrationStarted(member="A", role="master", migration="m1", partition_version=7)]
    assert messages(PlannedVersion(), events) == []


# --- all monitors -----------------------------------------------------------------------------

STREAM: list[Event] = [
    table("A", 3, (1, 2), stamp((1, 2))), table("B", 3, (1, 2)), start("m1", 0, "D", "S", 0),
    MigrationStarted(member="D", role="destination", migration="m1", partition=0,
                     planned_version=1, partition_version=1),
    commit("D", "destination", partition=0), commit("A", "master", partition=0),
    table("A", 4, (3, 2), stamp((3, 2))), commit("S", "source", partition=0),
    MemberRemoved(member="A", removed="E"), MemberJoined(member="A", joined="F"),
    MemberCrashed(member="B"), Repartitioning(member="A", planned=0),
    waits(waiting=((1, "D", "E"),), in_flight=((1, "F", "E"),)),
]


@pytest.mark.parametrize("monitor", MONITORS, ids=lambda m: m.spec)
def test_states_are_hashable_and_a_safe_stream_holds(monitor: type[Monitor]) -> None:
    m = monitor()
    assert messages(m, STREAM) == []
    assert m.at_quiescence(states(m, STREAM)[-1]) is None
    for state in states(m, STREAM):
        hash(state)  # the explorer carries monitor states inside its hashed states


@pytest.mark.parametrize("monitor", MONITORS, ids=lambda m: m.spec)
def test_missing_events_are_never_violations(monitor: type[Monitor]) -> None:
    # every sub-stream of a safe stream holds: an event a log does not show is unknown
    for n in range(len(STREAM) + 1):
        for kept in itertools.combinations(STREAM, n):
            assert messages(monitor(), list(kept)) == [], kept


# --- the catalogue ----------------------------------------------------------------------------

SEEDS = {"PT-VERSION": ("000", DESIGNS["000"], "§1.1"),
         "PAR-STAMP": ("003", DESIGNS["003"], "§1.3"),
         "MIG-COMMIT-ORDER": ("000", DESIGNS["000"], "§2.1"),
         "MIG-ATOMIC": ("000", DESIGNS["000"], "§2.2"),
         "PAR-ONE-PER-PARTITION": ("003", DESIGNS["003"], "§2.2"),
         "PAR-MAX-PARALLEL": ("003", DESIGNS["003"], "§2.2"),
         "PAR-START": ("003", DESIGNS["003"], "§2.2"),
         "PAR-VERSION": ("003", DESIGNS["003"], "§1.2")}


def test_registry_holds_the_partition_specs() -> None:
    specs = {s.id: s for s in all_specs()}
    assert len(specs) == len(list(all_specs()))  # every id once
    for spec_id, (seed, design, section) in SEEDS.items():
        s = specs[spec_id]
        assert (s.seed, s.design, s.kind) == (seed, design, "event monitor")
        assert section in s.section
        assert s.title and s.statement and s.rationale
        assert s.monitor is not None and s.monitor().spec == spec_id
        assert s.as_dict()["design_title"] == design
    assert get("par-max-parallel").monitor is MaxParallel

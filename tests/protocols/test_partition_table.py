"""The partition table value (000 §1, §2.1; 003 §1; Hazelcast's ``InternalPartitionImpl``,
``MigrationManager`` and their tests)."""

from __future__ import annotations

import dataclasses

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from test_rules import java_stamp

from partsafe.refimpl.partition_table import (
    PartitionTable,
    PartitionTableError,
    accept,
    apply_migration,
    assign_lost_owner,
    changed_slots,
    distance,
    fail_migration,
    failure_increment,
    migration_increment,
    promote,
    promotion_index,
    remove_member,
    set_replica,
    set_replicas,
    swap_replicas,
)
from partsafe.refimpl.planner import Decision, apply, parse_replicas, plan
from partsafe.specs.rules import stamp

R = parse_replicas
PT = PartitionTable

# --- the table's stamp (003 §1.3; the rule and its pins are in test_rules.py) ---------------


def test_table_stamp_is_the_stamp_of_its_versions() -> None:
    t = PT.from_assignment(["A,B", "B,A", "A"], replica_count=3)
    assert t.versions == (2, 2, 1)
    assert t.stamp == stamp([2, 2, 1]) == java_stamp([2, 2, 1])
    assert PT.initial(3).stamp == stamp([0, 0, 0])


# --- construction -------------------------------------------------------------------------------


def test_initial_table() -> None:
    t = PT.initial(3)
    assert t.replicas == ((None,) * 7,) * 3
    assert t.versions == (0, 0, 0)
    assert t.version == 0
    assert t.protocol == "4.1"
    assert PT.initial(2, replica_count=3, protocol="3.7").replicas == ((None, None, None),) * 2
    assert PT.initial(0).partition_count == 0


@pytest.mark.parametrize("kwargs", [{"partitions": -1}, {"partitions": 2, "replica_count": 0},
                                    {"partitions": 2, "replica_count": 8},
                                    {"partitions": 2, "protocol": "3.8"}])
def test_initial_rejects_bad_arguments(kwargs: dict[str, object]) -> None:
    with pytest.raises(PartitionTableError):
        PT.initial(**kwargs)  # type: ignore[arg-type]


def test_from_assignment() -> None:
    t = PT.from_assignment(["A,B,C", ("B", None, "A"), ["C"]], replica_count=4, protocol="3.7")
    assert t.replicas == (("A", "B", "C", None), ("B", None, "A", None), ("C", None, None, None))
    assert t.versions == (3, 2, 1)
    assert t.version == 1
    assert t.protocol == "3.7"
    assert PT.from_assignment([(None, None)], replica_count=2).version == 0
    # the same as set_replicas on the initial table, one update per partition
    step = PT.initial(3, replica_count=4, protocol="3.7")
    for p, arr in enumerate(t.replicas):
        step = set_replicas(step, p, arr)
    assert step.replicas == t.replicas and step.versions == t.versions


@pytest.mark.parametrize("assignment", [["A,B,C,D"], ["A,A"], [("A", "")], "A,B"])
def test_from_assignment_rejects_bad_arrays(assignment: object) -> None:
    with pytest.raises(ValueError):
        PT.from_assignment(assignment, replica_count=3)  # type: ignore[arg-type]


@pytest.mark.parametrize("fields", [
    {"replicas": (("A",),), "versions": ()},
    {"replicas": (("A",), ("A", "B")), "versions": (1, 2)},
    {"replicas": (("A", "A"),), "versions": (2,)},
    {"replicas": (("A",),), "versions": (-1,)},
    {"replicas": (("A",),), "versions": (1,), "version": -1},
    {"replicas": (("A",),), "versions": (1,), "protocol": "5.0"},
    {"replicas": [("A",)], "versions": (1,)},
    {"replicas": (["A"],), "versions": (1,)},
    {"replicas": ((),), "versions": (0,)},
])
def test_constructor_validates(fields: dict[str, object]) -> None:
    with pytest.raises(PartitionTableError):
        PT(**fields)  # type: ignore[arg-type]


# --- version arithmetic (InternalPartitionImplTest) ---------------------------------------------


def test_set_replicas_counts_changed_slots() -> None:
    t = PT.initial(1)
    t = set_replicas(t, 0, R("A,-,-,-,-,-,-"))
    assert t.versions == (1,)  # a first assignment of one slot gives 1
    t = set_replicas(t, 0, R("B,C,-,-,-,-,-"))
    assert t.versions == (3,)  # then changing slots 0 and 1 gives 3
    assert t.version == 2
    same = set_replicas(t, 0, R("B,C,-,-,-,-,-"))
    assert same == t and same.versions == (3,) and same.version == 2


def test_set_replica_is_plus_one_per_change() -> None:
    t = PT.initial(2, replica_count=3)
    t = set_replica(t, 1, 0, "A")
    assert t.versions == (0, 1)
    t = set_replica(t, 1, 2, "B")
    assert t.versions == (0, 2)
    assert set_replica(t, 1, 2, "B") == t  # unchanged: +0
    t = set_replica(t, 1, 2, None)
    assert t.versions == (0, 3)
    assert t.replicas[1] == ("A", None, None)
    assert t.version == 3
    with pytest.raises(PartitionTableError):
        set_replica(t, 1, 1, "A")  # A twice in one array
    with pytest.raises(PartitionTableError):
        set_replica(t, 1, 3, "C")
    with pytest.raises(PartitionTableError):
        set_replica(t, 2, 0, "C")


def test_swap_replicas_is_plus_two() -> None:
    t = PT.from_assignment(["A,B,C"], replica_count=3)
    s = swap_replicas(t, 0, 1, 0)
    assert s.replicas == (("B", "A", "C"),)
    assert s.versions == (t.versions[0] + 2,)
    assert s.version == t.version + 1
    with pytest.raises(PartitionTableError):
        swap_replicas(t, 0, 1, 1)


# --- migrations (MigrationInfo.getPartitionVersionIncrement) -------------------------------------


def D(kind: str, source: str | None, sc: int, sn: int, dest: str | None, dc: int,
      dn: int) -> Decision:
    return Decision(kind, source, sc, sn, dest, dc, dn)


# (decision, current, expected after, increment)
MIGRATIONS = [
    (D("MOVE", "A", 0, -1, "D", -1, 0), "A,B,C,-", "D,B,C,-", 1),
    (D("MOVE", "B", 1, -1, "D", -1, 1), "A,B,C,-", "A,D,C,-", 1),
    (D("COPY", None, -1, -1, "D", -1, 3), "A,B,C,-", "A,B,C,D", 1),
    (D("SHIFT_DOWN", "A", 0, 3, "D", -1, 0), "A,B,C,-", "D,B,C,A", 2),
    (D("SHIFT_DOWN", "B", 1, 3, "D", -1, 1), "A,B,C,-", "A,D,C,B", 2),
    (D("SHIFT_UP", None, -1, -1, "C", 2, 1), "A,-,C,-", "A,C,-,-", 2),
    (D("SHIFT_UP", "B", 1, -1, "C", 2, 1), "A,B,C,-", "A,C,-,-", 2),
    (D("SHIFT_UP", "B", 1, 3, "C", 2, 1), "A,B,C,-", "A,C,-,B", 3),
    (D("CLEAR", "C", 2, -1, None, -1, -1), "A,B,C,-", "A,B,-,-", 1),
]


@pytest.mark.parametrize(("decision", "current", "after", "increment"), MIGRATIONS)
def test_migration_increment(decision: Decision, current: str, after: str,
                             increment: int) -> None:
    assert migration_increment(decision) == increment
    assert changed_slots(R(current), R(after)) == increment


@pytest.mark.parametrize(("decision", "current", "after", "increment"), MIGRATIONS)
def test_apply_migration(decision: Decision, current: str, after: str, increment: int) -> None:
    t = PT.from_assignment(["A,B", current], replica_count=4)
    u = apply_migration(t, 1, decision)
    assert u.replicas == (t.replicas[0], R(after))
    assert u.replicas[1] == apply(R(current), decision)
    assert u.versions == (t.versions[0], t.versions[1] + increment)
    assert u.version == t.version + 1
    assert u.stamp != t.stamp
    assert t.replicas[1] == R(current)  # the argument is unchanged


@st.composite
def array_pairs(draw: st.DrawFn) -> tuple[tuple[str | None, ...], tuple[str | None, ...]]:
    n = draw(st.integers(min_value=1, max_value=7))
    def one() -> tuple[str | None, ...]:
        ms = draw(st.lists(st.sampled_from("ABCDEFGHI"), min_size=n, max_size=n, unique=True))
        keep = draw(st.lists(st.booleans(), min_size=n, max_size=n))
        return tuple(m if k else None for m, k in zip(ms, keep, strict=True))
    return one(), one()


@settings(max_examples=200)
@given(array_pairs())
def test_a_plan_raises_the_version_by_its_changed_slots(
        pair: tuple[tuple[str | None, ...], tuple[str | None, ...]]) -> None:
    current, target = pair
    p = plan(current, target)
    t = PT.from_assignment([current], replica_count=len(current))
    start_version = t.version
    for d in p.decisions:
        if d.is_clear:
            t = apply_migration(t, 0, d)
    assert t.replicas[0] == p.start
    for m in p.migrations:
        before = t
        t = apply_migration(t, 0, m)
        assert t.versions[0] - before.versions[0] == changed_slots(before.replicas[0],
                                                                   t.replicas[0])
    assert t.replicas[0] == p.final
    assert t.version == start_version + len(p.decisions)


# --- failed migrations (000 §2.1 step 4; Hazelcast's MigrationManager) ----------------------------


@pytest.mark.parametrize(("decision", "current", "after", "increment"), MIGRATIONS)
@pytest.mark.parametrize("protocol", ["3.7", "4.1"])
def test_fail_migration_rules(decision: Decision, current: str, after: str, increment: int,
                              protocol: str) -> None:
    t = PT.from_assignment(["A,B", current], replica_count=4, protocol=protocol)
    src = fail_migration(t, 1, decision, rule="source")
    assert src.replicas == t.replicas
    assert src.versions == (t.versions[0], t.versions[1] + increment + 1)
    assert src.version == t.version + increment + 1
    des = fail_migration(t, 1, decision, rule="design")
    assert des.replicas == t.replicas
    assert des.versions == (t.versions[0], t.versions[1] + 2)
    assert des.version == t.version + 2
    assert failure_increment(decision, "source") == increment + 1
    assert failure_increment(decision, "design") == 2


@pytest.mark.parametrize(("decision", "current", "after", "increment"), MIGRATIONS)
def test_which_failure_rule_stays_above_a_commit(decision: Decision, current: str, after: str,
                                                 increment: int) -> None:
    t = PT.from_assignment([current], replica_count=4)
    committed = apply_migration(t, 0, decision)  # what the destination may hold
    source = fail_migration(t, 0, decision, rule="source")
    design = fail_migration(t, 0, decision, rule="design")
    # 3.7: the global version, +1 per commit, is exceeded by both rules
    assert source.version > committed.version and design.version > committed.version
    # 4.1: the partition version, +increment per commit, only by the source rule
    assert source.versions[0] > committed.versions[0]
    assert (design.versions[0] > committed.versions[0]) == (increment < 2)


def test_fail_migration_rejects_an_unknown_rule() -> None:
    t = PT.from_assignment(["A,B"], replica_count=2)
    with pytest.raises(PartitionTableError):
        fail_migration(t, 0, D("MOVE", "A", 0, -1, "C", -1, 0), rule="both")


# --- repair: remove, promote, lost owner (000 §1.1; Hazelcast's MigrationManager) ----------------


def test_remove_member_nulls_every_index_it_holds() -> None:
    t = PT.from_assignment(["A,B,C", "B,A,-", "C,B,-", "B,C,A"], replica_count=3)
    u = remove_member(t, "A")
    assert u.replicas == (R("-,B,C"), R("B,-,-"), R("C,B,-"), R("B,C,-"))
    assert u.versions == (t.versions[0] + 1, t.versions[1] + 1, t.versions[2],
                          t.versions[3] + 1)
    assert u.version == t.version + 1
    assert "A" not in u.members()
    assert remove_member(u, "A") == u  # holds nothing: unchanged
    assert remove_member(t, "Z") == t
    with pytest.raises(PartitionTableError):
        remove_member(t, None)  # type: ignore[arg-type]


def test_promote_swaps_the_first_backup_into_the_owner_index() -> None:
    t = remove_member(PT.from_assignment(["A,B,C", "A,-,C", "B,A,-"], replica_count=3), "A")
    assert promotion_index(t, 0) == 1 and promotion_index(t, 1) == 2
    assert promotion_index(t, 2) == -1  # owner present
    u = promote(t, 0)
    assert u.replicas[0] == R("B,-,C")
    assert u.versions[0] == t.versions[0] + 2  # swapReplicas(0, j)
    assert u.version == t.version + 1
    v = promote(u, 1)
    assert v.replicas[1] == R("C,-,-")
    assert v.versions[1] == u.versions[1] + 2
    with pytest.raises(PartitionTableError):
        promote(v, 2)  # has an owner


def test_assign_lost_owner() -> None:
    t = PT.from_assignment(["A,B", "C,B"], replica_count=2)
    t = remove_member(remove_member(t, "A"), "B")
    assert t.replicas[0] == (None, None)
    assert promotion_index(t, 0) == -1
    with pytest.raises(PartitionTableError):
        promote(t, 0)  # nothing to promote: the partition is lost
    u = assign_lost_owner(t, 0, "C")
    assert u.replicas[0] == ("C", None)
    assert u.versions[0] == t.versions[0] + 1
    assert u.version == t.version + 1
    with pytest.raises(PartitionTableError):
        assign_lost_owner(t, 1, "D")  # C is still there
    with pytest.raises(PartitionTableError):
        assign_lost_owner(t, 0, None)  # type: ignore[arg-type]


def test_a_left_owner_costs_one_plus_two() -> None:
    t = PT.from_assignment(["A,B,C"])
    u = promote(remove_member(t, "A"), 0)
    assert u.replicas[0] == R("B,-,C,-,-,-,-")
    assert u.versions[0] == t.versions[0] + 3
    assert u.version == t.version + 2


# --- distance (PartitionTableViewTest) ------------------------------------------------------------


def test_distance_of_identical_tables_is_zero() -> None:
    t = PT.from_assignment(["A,B,C", "B,C,A"])
    assert distance(t, t) == 0
    assert distance(t, fail_migration(t, 0, D("MOVE", "A", 0, -1, "D", -1, 0),
                                      rule="source")) == 0  # versions are not compared


def test_distance_of_swapped_replicas_is_two() -> None:
    t = PT.from_assignment(["A,B,C", "B,C,A"])
    assert distance(t, swap_replicas(t, 1, 0, 1)) == 2
    assert distance(swap_replicas(t, 1, 0, 1), t) == 2


@pytest.mark.parametrize("k", range(0, 8))
def test_distance_of_k_nulled_slots_is_7k(k: int) -> None:
    t = PT.from_assignment(["A,B,C,D,E,F,G", "B,C,A"])
    u = t
    for i in range(k):
        u = set_replica(u, 0, i, None)
    assert distance(t, u) == 7 * k
    assert distance(u, t) == 7 * k


def test_distance_of_moved_and_replaced_members() -> None:
    t = PT.from_assignment(["A,B,C"], replica_count=3)
    assert distance(t, PT.from_assignment(["C,B,A"], replica_count=3)) == 4
    assert distance(t, PT.from_assignment(["D,B,C"], replica_count=3)) == 7
    assert distance(t, PT.from_assignment(["B,C,A"], replica_count=3)) == 1 + 1 + 2
    with pytest.raises(PartitionTableError):
        distance(t, PT.initial(2, replica_count=3))
    with pytest.raises(PartitionTableError):
        distance(t, PT.initial(1, replica_count=4))


# --- receiving a table (000 §1.1; 003 §1.2) -------------------------------------------------------


def test_accept_under_3_7_compares_the_global_version() -> None:
    local = PT.from_assignment(["A,B", "B,A"], replica_count=2, protocol="3.7")
    newer = apply_migration(local, 0, D("MOVE", "B", 1, -1, "C", -1, 1))
    assert accept(local, newer) == newer
    assert accept(newer, local) == newer
    assert accept(local, local) == local


def test_accept_under_4_1_takes_newer_partitions_only() -> None:
    base = PT.from_assignment(["A,B", "B,A"], replica_count=2)
    local = apply_migration(base, 0, D("MOVE", "B", 1, -1, "C", -1, 1))
    master = apply_migration(base, 1, D("MOVE", "A", 1, -1, "D", -1, 1))
    got = accept(local, master)
    assert got.replicas == (R("A,C"), R("B,D"))
    assert got.versions == (local.versions[0], master.versions[1])
    with pytest.raises(PartitionTableError):
        accept(local, PT.initial(2, replica_count=2, protocol="3.7"))


# --- a value: hashable, immutable ----------------------------------------------------------------


def test_tables_are_hashable_values() -> None:
    t = PT.from_assignment(["A,B", "B,A"], replica_count=2)
    same = PT(replicas=(("A", "B"), ("B", "A")), versions=(2, 2), version=1)
    assert t == same and hash(t) == hash(same)
    seen = {t: "first", same: "second"}
    assert len(seen) == 1 and seen[t] == "second"
    other_path = set_replica(set_replica(t, 0, 1, None), 0, 1, "B")
    assert other_path.replicas == t.replicas and other_path != t  # versions differ
    assert len({t, other_path, swap_replicas(t, 0, 0, 1)}) == 3
    assert PT.initial(1, protocol="3.7") != PT.initial(1, protocol="4.1")


def test_operations_return_new_tables_and_leave_their_argument() -> None:
    t = PT.from_assignment(["A,B,C", "B,C,A"], replica_count=3)
    snapshot = (t.replicas, t.versions, t.version, t.protocol)
    results = [
        set_replicas(t, 0, R("D,B,C")), set_replica(t, 1, 2, None), swap_replicas(t, 0, 0, 2),
        apply_migration(t, 0, D("MOVE", "A", 0, -1, "D", -1, 0)),
        fail_migration(t, 0, D("MOVE", "A", 0, -1, "D", -1, 0), rule="design"),
        remove_member(t, "B"), promote(remove_member(t, "A"), 0),
    ]
    assert (t.replicas, t.versions, t.version, t.protocol) == snapshot
    assert all(r is not t and r != t for r in results)
    with pytest.raises(dataclasses.FrozenInstanceError):
        t.version = 5  # type: ignore[misc]
    assert isinstance(t.replicas, tuple) and all(isinstance(a, tuple) for a in t.replicas)


# --- reports ------------------------------------------------------------------------------------


def test_as_dict_and_describe() -> None:
    t = PT.from_assignment(["A,B", "-,A"], replica_count=2, protocol="3.7")
    d = t.as_dict()
    assert d == {"protocol": "3.7", "version": 1, "partition_versions": [2, 1],
                 "replicas": [["A", "B"], [None, "A"]], "stamp": stamp([2, 1])}
    text = t.describe()
    assert text.splitlines()[0].startswith("partition table (3.7): version 1")
    assert "A,B" in text and "-,A" in text
    four = dataclasses.replace(t, protocol="4.1")
    assert f"stamp {stamp([2, 1])}" in four.describe()
    assert t.owner(1) is None and t.replica_index(1, "A") == 1 and t.replica_index(0, "C") == -1

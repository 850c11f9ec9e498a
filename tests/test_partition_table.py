"""The partition table value (000 §1, §2.1; 003 §1; Hazelcast's ``MigrationManager``,
``InternalPartitionImplTest`` and ``PartitionTableViewTest``)."""

from __future__ import annotations

import dataclasses
import struct

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from partsafe.refimpl.partition_table import (
    DEFAULT_MURMUR_SEED,
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
    murmur_hash3_x64_64,
    promote,
    promotion_index,
    remove_member,
    set_replica,
    set_replicas,
    stamp,
    stamp_bytes,
    swap_replicas,
)
from partsafe.refimpl.planner import Decision, apply, parse_replicas, plan

R = parse_replicas
PT = PartitionTable

# --- HashUtil.MurmurHash3_x64_64, transcribed line by line from the Java -------------------------
#
# A second, deliberately literal reading of ``com.hazelcast.internal.util.HashUtil`` (the
# ``byte[]`` overload, ``ByteArrayLoadStrategy``): Java ``long`` arithmetic emulated by wrapping
# every result to a signed 64-bit value, ``>>>`` as an unsigned shift, bytes read as signed Java
# ``byte`` s, the tail ``switch`` with its fall-through written as a loop from the case down.


def _jlong(x: int) -> int:
    """Wrap to a signed Java ``long``."""
    x &= (1 << 64) - 1
    return x - (1 << 64) if x >= 1 << 63 else x


def _ushr(x: int, n: int) -> int:
    """Java ``x >>> n`` on a ``long``."""
    return _jlong((x & ((1 << 64) - 1)) >> n)


def _jbyte(data: bytes, i: int) -> int:
    """``buf[(int) offset]``: a signed Java ``byte``."""
    return data[i] - 256 if data[i] >= 128 else data[i]


def _read_long_l(data: bytes, off: int) -> int:
    """``EndiannessUtil.readLongL``: byte ``off`` is the least significant."""
    return _jlong(sum((_jbyte(data, off + i) & 0xFF) << (8 * i) for i in range(8)))


def _java_fmix(k: int) -> int:
    k ^= _ushr(k, 33)
    k = _jlong(k * _jlong(0xFF51AFD7ED558CCD))
    k ^= _ushr(k, 33)
    k = _jlong(k * _jlong(0xC4CEB9FE1A85EC53))
    k ^= _ushr(k, 33)
    return k


def java_murmur(data: bytes, seed: int) -> int:
    """``MurmurHash3_x64_64(loader, data, 0, len, seed)`` as the Java source reads."""
    length = len(data)
    tail_start = length & ~(16 - 1)
    h1 = _jlong(0x9368E53C2F6AF274) ^ seed
    h2 = _jlong(0x586DCD208F7CD3FD) ^ seed
    c1 = _jlong(0x87C37B91114253D5)
    c2 = _jlong(0x4CF5AD432745937F)

    def bmix(k1: int, k2: int) -> None:
        nonlocal h1, h2
        k1 = _jlong(k1 * c1)
        k1 = _jlong((k1 << 23) | _ushr(k1, 64 - 23))
        k1 = _jlong(k1 * c2)
        h1 ^= k1
        h1 = _jlong(h1 + h2)
        h2 = _jlong((h2 << 41) | _ushr(h2, 64 - 41))
        k2 = _jlong(k2 * c2)
        k2 = _jlong((k2 << 23) | _ushr(k2, 64 - 23))
        k2 = _jlong(k2 * c1)
        h2 ^= k2
        h2 = _jlong(h2 + h1)
        h1 = _jlong(h1 * 3 + 0x52DCE729)
        h2 = _jlong(h2 * 3 + 0x38495AB5)

    for block in range(0, tail_start, 16):
        bmix(_read_long_l(data, block), _read_long_l(data, block + 8))
        c1 = _jlong(c1 * 5 + 0x7B7D159C)
        c2 = _jlong(c2 * 5 + 0x6BCE6396)

    k1 = k2 = 0
    case = length & 15
    for c in range(case, 0, -1):  # case 15 falls through to case 1
        if c >= 9:
            k2 ^= _jlong(_jbyte(data, tail_start + c - 1) << (8 * (c - 9)))
        else:
            k1 ^= _jlong(_jbyte(data, tail_start + c - 1) << (8 * (c - 1)))
    if case:
        bmix(k1, k2)

    h2 ^= length
    h1 = _jlong(h1 + h2)
    h2 = _jlong(h2 + h1)
    h1 = _java_fmix(h1)
    h2 = _java_fmix(h2)
    return _jlong(h1 + h2)


def java_stamp(versions: list[int]) -> int:
    """``PartitionStampUtil.calculateStamp``: ``Bits.writeIntB`` of each version at
    ``partitionId * Integer.BYTES``, then ``HashUtil.MurmurHash3_x64_64(bb, 0, bb.length)``."""
    bb = bytearray(4 * len(versions))
    for p, v in enumerate(versions):
        for i in range(4):
            bb[4 * p + i] = (v >> (24 - 8 * i)) & 0xFF
    return java_murmur(bytes(bb), 0x01000193)


versions_st = st.lists(st.integers(min_value=0, max_value=2**31 - 1), max_size=40)


# --- the stamp (003 §1.3) -------------------------------------------------------------------------


def test_stamp_is_the_stamp_a_real_hazelcast_member_computes() -> None:
    # calculateStamp of an empty table and of versions 1, 2, 3, taken from a real Hazelcast member
    assert stamp([]) == 9168145165656307917
    assert stamp([1, 2, 3]) == -8678199626870256215
    assert java_stamp([]) == 9168145165656307917
    assert java_stamp([1, 2, 3]) == -8678199626870256215


# Computed by the Java of HashUtil.MurmurHash3_x64_64 and Bits.writeIntB (byte[] overload,
# ByteArrayLoadStrategy), compiled and run on Java 17.
JAVA_STAMPS: list[tuple[list[int], int]] = [
    ([0], 8884473748190128367),
    ([-1], 1078075173422733640),
    ([0, 0, 0], 43771932531391253),
    ([2, 2, 1], 982409531139907066),
    ([1, 2, 3, 4], -7864335391781653257),
    ([1, 2, 3, 4, 5], -2807833039833918220),
    ([-(2**31), 2**31 - 1, -7, 0, 9], -2918184683188438940),
    ([0] * 271, -1991270704151068896),
    ([1] * 271, -8661523421455686299),
]


@pytest.mark.parametrize(("versions", "expected"), JAVA_STAMPS)
def test_stamp_pinned_values(versions: list[int], expected: int) -> None:
    assert DEFAULT_MURMUR_SEED == 0x01000193
    assert stamp(versions) == expected
    assert stamp(tuple(versions)) == expected
    assert java_stamp(versions) == expected


# Tails of every kind, bytes with the high bit set (the Java sign-extends them), more than one
# block: HashUtil.MurmurHash3_x64_64 of these bytes with the default seed, run in Java 17.
JAVA_HASHES: list[tuple[str, int]] = [
    ("ff", -7534605271843799917),
    ("80ff7f01feff0001ab", -8908820318483380903),
    ("00112233445566778899aabbccddeeff0102030405060708090a0b0c0d0e0f10fe",
     -6609134864531246941),
]


@pytest.mark.parametrize(("hex_bytes", "expected"), JAVA_HASHES)
def test_hash_pinned_values_with_odd_tails(hex_bytes: str, expected: int) -> None:
    data = bytes.fromhex(hex_bytes)
    assert murmur_hash3_x64_64(data) == expected
    assert java_murmur(data, DEFAULT_MURMUR_SEED) == expected


@settings(max_examples=300)
@given(st.binary(max_size=80), st.integers(min_value=-(2**31), max_value=2**31 - 1))
def test_hash_agrees_with_the_java_transcription(data: bytes, seed: int) -> None:
    assert murmur_hash3_x64_64(data, seed) == java_murmur(data, seed)


def test_hash_rejects_a_seed_that_is_not_a_java_int() -> None:
    with pytest.raises(PartitionTableError, match="seed 2147483648 is not a Java int"):
        murmur_hash3_x64_64(b"", 2**31)
    with pytest.raises(PartitionTableError, match="not a Java int"):
        murmur_hash3_x64_64(b"", True)


@settings(max_examples=400)
@given(versions_st)
def test_stamp_agrees_with_the_java_transcription(versions: list[int]) -> None:
    assert stamp(versions) == java_stamp(versions)


@pytest.mark.parametrize("n", range(0, 13))
def test_stamp_agrees_on_every_tail_length(n: int) -> None:
    # 4 bytes per partition: tails of 0, 4, 8 and 12 bytes, one and more body blocks
    versions = [(7919 * p + 3) % 1000 for p in range(n)]
    assert stamp(versions) == java_stamp(versions)


def test_cached_stamp_still_rejects_what_equals_a_cached_int() -> None:
    assert stamp((1, 1)) == java_stamp([1, 1])
    with pytest.raises(PartitionTableError, match="version of partition 0 is True, not an int"):
        stamp((True, 1))
    with pytest.raises(PartitionTableError, match=r"version of partition 1 is 1\.0, not an int"):
        stamp((1, 1.0))


def test_stamp_bytes_layout() -> None:
    assert stamp_bytes([]) == b""
    assert stamp_bytes([1, 2, 3]).hex() == "000000010000000200000003"
    assert stamp_bytes([0x01020304, 0]) == b"\x01\x02\x03\x04\x00\x00\x00\x00"
    assert stamp_bytes([0, 0, 0x0A0B0C0D])[8:] == b"\x0a\x0b\x0c\x0d"
    assert stamp_bytes([-1]) == b"\xff\xff\xff\xff"
    assert stamp([-1]) == murmur_hash3_x64_64(b"\xff\xff\xff\xff", DEFAULT_MURMUR_SEED)


@pytest.mark.parametrize("versions", [[1], [1, 2, 3], [7, 0, 5], [300, 2, 65536, 9]])
def test_big_endian_layout_matters(versions: list[int]) -> None:
    little = struct.pack(f"<{len(versions)}i", *versions)
    assert little != stamp_bytes(versions)
    assert murmur_hash3_x64_64(little, DEFAULT_MURMUR_SEED) != stamp(versions)


@settings(max_examples=300)
@given(st.lists(st.integers(min_value=0, max_value=10**6), min_size=1, max_size=30),
       st.data())
def test_any_version_change_changes_the_stamp(versions: list[int], data: st.DataObject) -> None:
    p = data.draw(st.integers(min_value=0, max_value=len(versions) - 1))
    delta = data.draw(st.integers(min_value=1, max_value=5))
    changed = list(versions)
    changed[p] += delta
    assert stamp(changed) != stamp(versions)


def test_stamp_rejects_what_is_not_a_java_int() -> None:
    with pytest.raises(PartitionTableError):
        stamp([2**31])
    with pytest.raises(PartitionTableError):
        stamp([-(2**31) - 1])
    with pytest.raises(PartitionTableError):
        stamp([True])


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


# --- version arithmetic (Hazelcast's InternalPartitionImplTest) ----------------------------------


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


# --- migrations (MigrationInfo.getPartitionVersionIncrement, MigrationManager.applyMigration) ----


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


# --- failed migrations (000 §2.1 step 4; MigrationManager: increment + 1) -------------------------


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


# --- repair: remove, promote, lost owner (000 §1.1; MigrationManager.RepairPartitionTableTask) ---


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


# --- distance (Hazelcast's PartitionTableViewTest) -----------------------------------------------


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

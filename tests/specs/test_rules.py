"""The design rules both the reference implementation and the specs use (specs/rules.py), pinned
to the numbers the real systems compute: Hazelcast's partition table stamp (003 §1.3) against a
line-by-line transcription of the Java and values a real member computed; the rendezvous
assignments of the Ignite 3 rebalance (001) against the values the model has always explored."""

from __future__ import annotations

import struct
from collections.abc import Callable

import mmh3
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from partsafe.specs.rules import (
    DEFAULT_MURMUR_SEED,
    StampError,
    calculate_assignments,
    murmur_hash3_x64_64,
    stamp,
    stamp_bytes,
)

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
    with pytest.raises(StampError, match="seed 2147483648 is not a Java int"):
        murmur_hash3_x64_64(b"", 2**31)
    with pytest.raises(StampError, match="not a Java int"):
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
    with pytest.raises(StampError, match="version of partition 0 is True, not an int"):
        stamp((True, 1))
    with pytest.raises(StampError, match=r"version of partition 1 is 1\.0, not an int"):
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
    with pytest.raises(StampError):
        stamp([2**31])
    with pytest.raises(StampError):
        stamp([-(2**31) - 1])
    with pytest.raises(StampError):
        stamp([True])


# --- the calculated assignments (001) -------------------------------------------------------------

#: (data nodes, partition, replicas) and the assignment: the ranking of ``mmh3.hash64`` of
#: ``"node:partition"`` the models have always been explored with (the Ignite model's default
#: scope has data nodes A, B, C and the spare D; its state counts depend on these choices).
ASSIGNMENTS: list[tuple[str, int, int, str]] = [
    ("ABCD", 0, 1, "B"),
    ("ABCD", 0, 2, "AB"),
    ("ABCD", 0, 3, "ABC"),
    ("ABCD", 1, 2, "BD"),
    ("ABCD", 7, 3, "ABD"),
    ("ABCDE", 0, 3, "ABE"),
    ("ABCDE", 7, 3, "BDE"),
]


@pytest.mark.parametrize(("nodes", "partition", "replicas", "expected"), ASSIGNMENTS)
def test_calculated_assignments_pinned_values(nodes: str, partition: int, replicas: int,
                                              expected: str) -> None:
    assert calculate_assignments(nodes, partition, replicas) == frozenset(expected)
    assert calculate_assignments(reversed(nodes), partition, replicas) == frozenset(expected)


@settings(max_examples=200)
@given(st.sets(st.sampled_from("ABCDEFGH"), min_size=1), st.integers(0, 31),
       st.integers(1, 8), st.data())
def test_removing_a_node_moves_only_what_it_held(nodes: set[str], partition: int, replicas: int,
                                                 data: st.DataObject) -> None:
    """Rendezvous hashing: a node that leaves the data nodes takes only its own replicas away;
    its place goes to the next node in the ranking, the others stay."""
    before = calculate_assignments(nodes, partition, replicas)
    gone = data.draw(st.sampled_from(sorted(nodes)))
    after = calculate_assignments(nodes - {gone}, partition, replicas)
    assert before - {gone} <= after
    assert len(after) == min(replicas, len(nodes) - 1)


def _signed(nodes: str, partition: int, replicas: int) -> frozenset[str]:
    """Ranked by the signed hash."""
    return frozenset(sorted(nodes, key=lambda n: (mmh3.hash64(f"{n}:{partition}")[0], n))[
        :replicas])


def _node_only(nodes: str, partition: int, replicas: int) -> frozenset[str]:
    """Ranked by the node alone: every partition on the same nodes."""
    return frozenset(sorted(nodes, key=lambda n: (mmh3.hash64(n, signed=False)[0], n))[
        :replicas])


def _by_name(nodes: str, partition: int, replicas: int) -> frozenset[str]:
    """The first nodes by name: no hashing at all."""
    return frozenset(sorted(nodes)[:replicas])


@pytest.mark.parametrize("wrong", [_signed, _node_only, _by_name])
def test_the_pins_tell_the_rule_from_a_near_miss(wrong: Callable[[str, int, int],
                                                                  frozenset[str]]) -> None:
    """A rule that only ranks differently (and would agree with the rebalance that applies it,
    and so with IGN-CONVERGE) breaks at least one pinned value."""
    assert any(wrong(nodes, p, r) != frozenset(expected) for nodes, p, r, expected in ASSIGNMENTS)


def test_the_stamp_pins_tell_the_rule_from_a_near_miss() -> None:
    """The published MurmurHash3 x64 128 cut to 64 bits, or Hazelcast's hash with seed 0, gives
    other numbers than a real member (and would agree with a partition table that applies it,
    and so with PAR-STAMP)."""
    for versions, expected in JAVA_STAMPS:
        data = stamp_bytes(versions)
        assert mmh3.hash64(data, DEFAULT_MURMUR_SEED)[0] != expected
        assert murmur_hash3_x64_64(data, 0) != expected

"""The design rules both sides must agree on: pure functions of their arguments, no protocol
state, pinned by tests to the numbers the real systems compute.

A spec that judges an implementation should not compute what it expects with the implementation's
own code, or a bug there can never break the spec. Some expected values, though, are not protocol
behaviour but a rule the design defines once and every participant applies: the implementation
must produce it and the spec must expect it, and a second, different copy of the rule would only
be a second place to get it wrong. Those rules live here; the reference implementation
(``partsafe.refimpl``) and the specs import them from this module, and ``tests/specs/test_rules.py``
pins them to the real systems' values:

- :func:`stamp`, Hazelcast 4.1's partition table stamp (003 §1.3 "Partition Table Stamp",
  ``PartitionStampUtil.calculateStamp``): the hash of the partition versions that members compare
  instead of a global version. PAR-STAMP expects it; the partition table computes it.
- :func:`calculate_assignments`, the rendezvous assignment of a partition's replicas over the data
  nodes (001; Ignite 3's ``RendezvousAffinityFunction``, called by the rebalance through
  ``calculateAssignmentForPartition``): what stable must converge to. IGN-CONVERGE expects it;
  the rebalance writes it.

Every other expected value of the specs is computed independently of the implementation
(docs/specs.md lists, spec by spec, what each compares against).
"""

from __future__ import annotations

import struct
from collections.abc import Iterable, Sequence
from functools import lru_cache

import mmh3

__all__ = [
    "DEFAULT_MURMUR_SEED",
    "StampError",
    "calculate_assignments",
    "murmur_hash3_x64_64",
    "stamp",
    "stamp_bytes",
]

#: ``com.hazelcast.internal.util.HashUtil.DEFAULT_MURMUR_SEED``, the seed
#: ``HashUtil.MurmurHash3_x64_64(byte[], int, int)`` hashes with (:func:`murmur_hash3_x64_64`).
DEFAULT_MURMUR_SEED = 0x01000193

_INT_MIN = -(2**31)
_INT_MAX = 2**31 - 1


class StampError(ValueError):
    """A version or a seed that is not a Java ``int``: no real member could hash it."""


# --- the stamp (003 §1.3) ----------------------------------------------------------------------


def stamp_bytes(versions: Sequence[int]) -> bytes:
    """The byte array ``calculateStamp`` hashes (003 §1.3): 4 bytes per partition, the version of
    partition ``p`` written big-endian (``Bits.writeIntB``) at offset ``p * 4``.

    A version is a Java ``int``: values outside ``-2**31 .. 2**31 - 1`` are rejected, negative
    ones are written in two's complement as Java would.
    """
    out = bytearray(4 * len(versions))
    for p, v in enumerate(versions):
        if isinstance(v, bool) or not isinstance(v, int):
            raise StampError(f"version of partition {p} is {v!r}, not an int")
        if not _INT_MIN <= v <= _INT_MAX:
            raise StampError(f"version {v} of partition {p} does not fit a Java int")
        struct.pack_into(">i", out, 4 * p, v)
    return bytes(out)


# ``HashUtil.MurmurHash3_x64_64``'s constants: the start values of h1 and h2 (each XORed with the
# seed), the start values of the mixing constants c1 and c2 and how they move on after each
# 16-byte block, and the per-block additions to h1 and h2.
_M64 = (1 << 64) - 1
_H1_START = 0x9368E53C2F6AF274
_H2_START = 0x586DCD208F7CD3FD
_C1_START = 0x87C37B91114253D5
_C2_START = 0x4CF5AD432745937F
_C1_ADD = 0x7B7D159C
_C2_ADD = 0x6BCE6396
_H1_ADD = 0x52DCE729
_H2_ADD = 0x38495AB5


def _fmix64(k: int) -> int:
    """``HashUtil.MurmurHash3_fmix(long)``, the 64-bit finalisation mix (unsigned arithmetic)."""
    k ^= k >> 33
    k = (k * 0xFF51AFD7ED558CCD) & _M64
    k ^= k >> 33
    k = (k * 0xC4CEB9FE1A85EC53) & _M64
    return k ^ (k >> 33)


def murmur_hash3_x64_64(data: bytes, seed: int = DEFAULT_MURMUR_SEED) -> int:
    """``com.hazelcast.internal.util.HashUtil.MurmurHash3_x64_64`` (``com.hazelcast.util.HashUtil``
    before 4.0) over all of ``data`` with a Java ``int`` seed, as a signed Java ``long``.

    This is not the published MurmurHash3 x64 128 (``mmh3.hash64``) cut to 64 bits: Hazelcast
    kept an early draft of MurmurHash3 ("bmix"). Each 16-byte block is read as two
    little-endian longs (``EndiannessUtil.readLongL``) and mixed as::

        k1 *= c1; k1 = rotl(k1, 23); k1 *= c2; h1 ^= k1; h1 += h2
        h2 = rotl(h2, 41)
        k2 *= c2; k2 = rotl(k2, 23); k2 *= c1; h2 ^= k2; h2 += h1
        h1 = h1 * 3 + 0x52dce729; h2 = h2 * 3 + 0x38495ab5
        c1 = c1 * 5 + 0x7b7d159c; c2 = c2 * 5 + 0x6bce6396

    from ``h1 = 0x9368e53c2f6af274 ^ seed``, ``h2 = 0x586dcd208f7cd3fd ^ seed``,
    ``c1 = 0x87c37b91114253d5``, ``c2 = 0x4cf5ad432745937f``. The 1 to 15 tail bytes are XORed
    into k1 (bytes 0-7) and k2 (bytes 8-14) *sign-extended* (Java ``(long) byte << 8 * i``), then
    mixed once more like a block, without moving c1 and c2 on. The end:
    ``h2 ^= len; h1 += h2; h2 += h1; h1 = fmix(h1); h2 = fmix(h2); return h1 + h2``.
    All arithmetic wraps at 64 bits.
    """
    if isinstance(seed, bool) or not isinstance(seed, int) or not _INT_MIN <= seed <= _INT_MAX:
        raise StampError(f"seed {seed!r} is not a Java int")
    n = len(data)
    s = seed & _M64  # a Java int widened to long: sign-extended
    h1 = _H1_START ^ s
    h2 = _H2_START ^ s
    c1 = _C1_START
    c2 = _C2_START
    body = n & ~15
    words = struct.unpack_from(f"<{body // 8}Q", data)
    for i in range(0, len(words), 2):
        k1 = (words[i] * c1) & _M64
        k1 = (((k1 << 23) | (k1 >> 41)) * c2) & _M64
        h1 = ((h1 ^ k1) + h2) & _M64
        h2 = ((h2 << 41) | (h2 >> 23)) & _M64
        k2 = (words[i + 1] * c2) & _M64
        k2 = (((k2 << 23) | (k2 >> 41)) * c1) & _M64
        h2 = ((h2 ^ k2) + h1) & _M64
        h1 = (h1 * 3 + _H1_ADD) & _M64
        h2 = (h2 * 3 + _H2_ADD) & _M64
        c1 = (c1 * 5 + _C1_ADD) & _M64
        c2 = (c2 * 5 + _C2_ADD) & _M64
    if n & 15:
        k1 = k2 = 0
        for i, b in enumerate(data[body:]):
            widened = ((b - 256 if b & 0x80 else b) << (8 * (i & 7))) & _M64
            if i < 8:
                k1 ^= widened
            else:
                k2 ^= widened
        k1 = (k1 * c1) & _M64
        k1 = (((k1 << 23) | (k1 >> 41)) * c2) & _M64
        h1 = ((h1 ^ k1) + h2) & _M64
        h2 = ((h2 << 41) | (h2 >> 23)) & _M64
        k2 = (k2 * c2) & _M64
        k2 = (((k2 << 23) | (k2 >> 41)) * c1) & _M64
        h2 = ((h2 ^ k2) + h1) & _M64
        h1 = (h1 * 3 + _H1_ADD) & _M64
        h2 = (h2 * 3 + _H2_ADD) & _M64
    h2 ^= n
    h1 = (h1 + h2) & _M64
    h2 = (h2 + h1) & _M64
    h = (_fmix64(h1) + _fmix64(h2)) & _M64
    return h - (1 << 64) if h >> 63 else h


@lru_cache(maxsize=1 << 16)
def _cached_stamp(versions: tuple[int, ...]) -> int:
    return murmur_hash3_x64_64(stamp_bytes(versions), DEFAULT_MURMUR_SEED)


def stamp(versions: Sequence[int]) -> int:
    """``PartitionStampUtil.calculateStamp`` (003 §1.3): Hazelcast's
    ``HashUtil.MurmurHash3_x64_64(byte[], 0, len)`` (:func:`murmur_hash3_x64_64`, seed
    ``HashUtil.DEFAULT_MURMUR_SEED = 0x01000193``) of :func:`stamp_bytes`, a signed Java ``long``.

    The hash is Hazelcast's own early-draft MurmurHash3, not the published x64 128 cut to 64 bits,
    so the numbers are the ones a real member computes and prints. Results are cached by the tuple
    of versions (the explorer asks for the stamp of the same tables again and again); a sequence
    holding anything but plain ``int`` s bypasses the cache, so that ``True`` or ``1.0`` is still
    rejected by :func:`stamp_bytes` rather than found equal to a cached ``1``.
    """
    key = tuple(versions)
    if all(type(v) is int for v in key):
        return _cached_stamp(key)
    return murmur_hash3_x64_64(stamp_bytes(key), DEFAULT_MURMUR_SEED)


# --- the calculated assignments (001) -------------------------------------------------------------


def calculate_assignments(data_nodes: Iterable[str], partition: int,
                          replicas: int) -> frozenset[str]:
    """The assignments of ``partition`` over ``data_nodes``: rendezvous hashing, as Ignite 3's
    ``RendezvousAffinityFunction.assignPartition`` does it (001: the rebalance's target is "the
    calculated assignments" of the data nodes), with the model's own ranking hash.

    Every data node is weighed by a hash of (node, partition), here
    ``mmh3.hash64(f"{node}:{partition}")`` (unsigned, first half), ties broken by name; the
    ``replicas`` lightest are the assignment, all of them when there are fewer. Ignite ranks with
    its own hash of the node's name and the partition, so the nodes picked here for a given set of
    names are the model's, not Ignite's: what the protocol and IGN-CONVERGE depend on is that the
    assignment is a function of the data nodes alone (the order they come in does not count) and
    that removing a node moves only the replicas it held.
    """
    ranked = sorted(data_nodes,
                    key=lambda n: (mmh3.hash64(f"{n}:{partition}", signed=False)[0], n))
    return frozenset(ranked[:replicas])

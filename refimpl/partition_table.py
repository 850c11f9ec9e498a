"""The master's partition table as an immutable value, shared by both protocol versions.

One partition table, two ways of versioning it:

- **3.7** ("Avoid Data Loss on Migration", 000 §1): one global ``version``. Only the master
  changes the table, in three cases (a committed migration, a null written to a left member's
  index, a new owner for a partition whose replicas all left), and "after performing any of these
  3 steps, the Master node increments its partition table version" (000 §1.1). Other members take
  a received table only when its version is bigger than theirs (000 §1.1, :func:`accept`).
- **4.1** ("Parallel Independent Migrations", 003 §1): one version per partition. Receivers
  compare partition by partition and may apply part of a table (003 §1.2); whole tables are
  compared by their *stamp*, Hazelcast's 64-bit ``HashUtil.MurmurHash3_x64_64`` of all partition
  versions (003 §1.3, :func:`stamp`).

:class:`PartitionTable` keeps both counters under either protocol, with the arithmetic of the
current source for the per-partition versions (``MigrationInfo.getPartitionVersionIncrement``,
``InternalPartitionImpl``, pinned by Hazelcast's ``InternalPartitionImplTest``): every changed
replica slot adds 1, a swap of two slots
adds 2, a migration adds :func:`migration_increment`. The global version rises by 1 per applied
table update (000 §1.1, §2.1 step 1). ``protocol`` says which counter members compare
(:func:`accept`).

The master's updates (000 §1.1; Hazelcast's ``MigrationManager``): :func:`apply_migration` for a
committed migration, :func:`fail_migration` for a failed one (000 §2.1 step 4 or the current
source, chosen by ``rule``), :func:`remove_member` for the repair task's nulls, :func:`promote` for
a first backup becoming owner, :func:`assign_lost_owner` for a partition whose replicas all
left. The lower level :func:`set_replicas`, :func:`set_replica` and :func:`swap_replicas` are
``InternalPartitionImpl``'s setters. :func:`distance` is ``PartitionTableView.distanceOf``
(pinned by Hazelcast's ``PartitionTableViewTest``).

A table is a frozen, hashable value of tuples of strings, ``None`` and ints: every operation
returns a table and leaves its argument as it was, so tables can be states of an explored model
and keys of dicts and sets.
"""

from __future__ import annotations

import struct
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from partsafe.refimpl.planner import (
    MAX_REPLICA_COUNT,
    Decision,
    Replicas,
    apply,
    format_replicas,
    parse_replicas,
)

__all__ = [
    "DEFAULT_MURMUR_SEED",
    "FAILURE_RULES",
    "PROTOCOLS",
    "PartitionTable",
    "PartitionTableError",
    "accept",
    "apply_migration",
    "assign_lost_owner",
    "changed_slots",
    "distance",
    "fail_migration",
    "failure_increment",
    "migration_increment",
    "murmur_hash3_x64_64",
    "promote",
    "promotion_index",
    "remove_member",
    "set_replica",
    "set_replicas",
    "stamp",
    "stamp_bytes",
    "swap_replicas",
]

#: The two protocol versions of the model: 3.7 compares the global version (000 §1), 4.1 the
#: per-partition versions and the stamp (003 §1).
PROTOCOLS: tuple[str, ...] = ("3.7", "4.1")

#: How a failed migration or commit raises the version (:func:`fail_migration`): ``"source"`` is
#: the current source (``MigrationManager``: increment + 1), ``"design"`` is 000 §2.1 step 4.
FAILURE_RULES: tuple[str, ...] = ("source", "design")

#: ``com.hazelcast.internal.util.HashUtil.DEFAULT_MURMUR_SEED``, the seed
#: ``HashUtil.MurmurHash3_x64_64(byte[], int, int)`` hashes with (:func:`murmur_hash3_x64_64`).
DEFAULT_MURMUR_SEED = 0x01000193

_INT_MIN = -(2**31)
_INT_MAX = 2**31 - 1


class PartitionTableError(ValueError):
    """A malformed table, an unknown protocol or rule, or an update the master would not make
    (a promotion with an owner present, a lost-owner assignment with a replica left)."""


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
            raise PartitionTableError(f"version of partition {p} is {v!r}, not an int")
        if not _INT_MIN <= v <= _INT_MAX:
            raise PartitionTableError(f"version {v} of partition {p} does not fit a Java int")
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
        raise PartitionTableError(f"seed {seed!r} is not a Java int")
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


# --- validation -----------------------------------------------------------------------------------


def _check_protocol(protocol: str) -> None:
    if protocol not in PROTOCOLS:
        raise PartitionTableError(f"unknown protocol {protocol!r}; expected one of "
                                  f"{', '.join(PROTOCOLS)}")


def _check_version(v: object, what: str) -> int:
    if isinstance(v, bool) or not isinstance(v, int):
        raise PartitionTableError(f"{what} is {v!r}, not an int")
    if not 0 <= v <= _INT_MAX:
        raise PartitionTableError(f"{what} is {v}; a version is 0 .. {_INT_MAX}")
    return v


def _check_member(member: object, what: str) -> str | None:
    if member is None:
        return None
    if not isinstance(member, str) or not member:
        raise PartitionTableError(f"{what} is {member!r}; a member is a non-empty string or "
                                  "None")
    return member


def _check_replicas(replicas: Sequence[str | None], what: str) -> Replicas:
    if isinstance(replicas, str):
        raise PartitionTableError(f"{what} must be a sequence of members, not the string "
                                  f"{replicas!r}")
    arr = tuple(replicas)
    if not 1 <= len(arr) <= MAX_REPLICA_COUNT:
        raise PartitionTableError(f"{what} has {len(arr)} indices; a replica array has 1 to "
                                  f"{MAX_REPLICA_COUNT}")
    seen: dict[str, int] = {}
    for i, r in enumerate(arr):
        m = _check_member(r, f"{what}[{i}]")
        if m is None:
            continue
        if m in seen:
            raise PartitionTableError(f"{what} holds member {m!r} twice, at indices {seen[m]} "
                                      f"and {i}: {format_replicas(arr)}")
        seen[m] = i
    return arr


def _check_count(n: object, what: str, low: int, high: int | None = None) -> int:
    if isinstance(n, bool) or not isinstance(n, int):
        raise PartitionTableError(f"{what} must be an int, got {n!r}")
    if n < low or (high is not None and n > high):
        top = "" if high is None else f" .. {high}"
        raise PartitionTableError(f"{what}={n} is outside {low}{top}")
    return n


# --- the table ----------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class PartitionTable:
    """The master's partition table (000 §1; 003 §1), an immutable, hashable value.

    ``replicas[p]`` is partition ``p``'s replica array (index 0 the owner, ``None`` an empty
    index; 000 §3), all of one length (``MAX_REPLICA_COUNT`` = 7 by default).
    ``versions[p]`` is partition ``p``'s version (003 §1.2), ``version`` the global version
    (000 §1.1). ``protocol`` (``"3.7"`` or ``"4.1"``) says which of the two the members compare;
    both are kept under either.
    """

    replicas: tuple[Replicas, ...]
    versions: tuple[int, ...]
    version: int = 0
    protocol: str = "4.1"

    def __post_init__(self) -> None:
        _check_protocol(self.protocol)
        _check_version(self.version, "version")
        if not isinstance(self.replicas, tuple) or not isinstance(self.versions, tuple):
            raise PartitionTableError("replicas and versions must be tuples (a table is an "
                                      "immutable value); use from_assignment() for lists")
        if len(self.replicas) != len(self.versions):
            raise PartitionTableError(f"{len(self.replicas)} replica arrays but "
                                      f"{len(self.versions)} partition versions")
        length = len(self.replicas[0]) if self.replicas else 0
        for p, arr in enumerate(self.replicas):
            if not isinstance(arr, tuple):
                raise PartitionTableError(f"replicas[{p}] must be a tuple, got {arr!r}")
            _check_replicas(arr, f"replicas[{p}]")
            if len(arr) != length:
                raise PartitionTableError(f"replicas[{p}] has {len(arr)} indices, replicas[0] "
                                          f"{length}; every partition has one array length")
        for p, v in enumerate(self.versions):
            _check_version(v, f"versions[{p}]")

    # -- construction

    @classmethod
    def _unchecked(cls, replicas: tuple[Replicas, ...], versions: tuple[int, ...], version: int,
                   protocol: str) -> PartitionTable:
        """A table from parts already checked (the updates below check what they change)."""
        table = object.__new__(cls)
        object.__setattr__(table, "replicas", replicas)
        object.__setattr__(table, "versions", versions)
        object.__setattr__(table, "version", version)
        object.__setattr__(table, "protocol", protocol)
        return table

    @classmethod
    def initial(cls, partitions: int, replica_count: int = MAX_REPLICA_COUNT,
                protocol: str = "4.1") -> PartitionTable:
        """The table before the first assignment: every index empty, every version 0 (the
        state ``PartitionStateManager`` starts from)."""
        _check_count(partitions, "partitions", 0)
        _check_count(replica_count, "replica_count", 1, MAX_REPLICA_COUNT)
        _check_protocol(protocol)
        empty: Replicas = (None,) * replica_count
        return cls._unchecked((empty,) * partitions, (0,) * partitions, 0, protocol)

    @classmethod
    def from_assignment(cls, assignment: Sequence[Sequence[str | None] | str], *,
                        replica_count: int = MAX_REPLICA_COUNT,
                        protocol: str = "4.1") -> PartitionTable:
        """The table after the master's first assignment of ``assignment`` (one replica array
        per partition, or text ``"A,-,C"`` as :func:`~partsafe.refimpl.planner.parse_replicas`
        reads it; shorter arrays are padded with ``None`` to ``replica_count``).

        It is :meth:`initial` followed by ``setReplicas`` on every partition, so each partition's
        version is its number of non-empty indices (Hazelcast's ``InternalPartitionImplTest``: a
        first assignment of one slot gives 1), and the assignment is one table update: the
        global version is 1, or 0 if nothing was assigned (000 §1.1).
        """
        if isinstance(assignment, str):
            raise PartitionTableError("assignment must be a sequence of replica arrays, not the "
                                      f"string {assignment!r}")
        _check_count(replica_count, "replica_count", 1, MAX_REPLICA_COUNT)
        _check_protocol(protocol)
        arrays: list[Replicas] = []
        for p, item in enumerate(assignment):
            arr = parse_replicas(item) if isinstance(item, str) else tuple(item)
            if len(arr) > replica_count:
                raise PartitionTableError(f"assignment[{p}] has {len(arr)} indices, more than "
                                          f"replica_count={replica_count}")
            arr = arr + (None,) * (replica_count - len(arr))
            arrays.append(_check_replicas(arr, f"assignment[{p}]"))
        versions = tuple(sum(r is not None for r in arr) for arr in arrays)
        version = 1 if any(versions) else 0
        return cls._unchecked(tuple(arrays), versions, version, protocol)

    # -- queries

    @property
    def partition_count(self) -> int:
        """The number of partitions."""
        return len(self.replicas)

    @property
    def stamp(self) -> int:
        """The partition table stamp, :func:`stamp` of ``versions`` (003 §1.3). Defined under
        both protocols; only 4.1 members compare it."""
        return stamp(self.versions)

    def owner(self, partition_id: int) -> str | None:
        """The member at index 0 of the partition, or ``None``."""
        return self.replicas[self._pid(partition_id)][0]

    def replica_index(self, partition_id: int, member: str) -> int:
        """``getReplicaIndex``: the index ``member`` holds in the partition, or -1."""
        arr = self.replicas[self._pid(partition_id)]
        return arr.index(member) if member in arr else -1

    def members(self) -> frozenset[str]:
        """Every member that holds some replica."""
        return frozenset(r for arr in self.replicas for r in arr if r is not None)

    def _pid(self, partition_id: int) -> int:
        if isinstance(partition_id, bool) or not isinstance(partition_id, int):
            raise PartitionTableError(f"partition id {partition_id!r} is not an int")
        if not 0 <= partition_id < len(self.replicas):
            raise PartitionTableError(f"partition id {partition_id} is outside 0 .. "
                                      f"{len(self.replicas) - 1}")
        return partition_id

    # -- reports

    def as_dict(self) -> dict[str, Any]:
        """The table as plain data, with the field names of the ``partition_table_applied``
        event: ``version``, ``partition_versions``, ``replicas``, ``stamp``, plus ``protocol``."""
        return {
            "protocol": self.protocol,
            "version": self.version,
            "partition_versions": list(self.versions),
            "replicas": [list(arr) for arr in self.replicas],
            "stamp": self.stamp,
        }

    def describe(self) -> str:
        """A few lines for a report: the authoritative version first, then one line per
        partition with its version and replicas (``-`` for an empty index)."""
        if self.protocol == "3.7":
            head = (f"partition table (3.7): version {self.version}, "
                    f"{self.partition_count} partitions")
        else:
            head = (f"partition table (4.1): stamp {self.stamp}, {self.partition_count} "
                    f"partitions, global version {self.version}")
        width = len(str(max(self.partition_count - 1, 0)))
        lines = [head]
        for p, (arr, v) in enumerate(zip(self.replicas, self.versions, strict=True)):
            lines.append(f"  {p:>{width}}  v{v:<3} {format_replicas(arr)}")
        return "\n".join(lines)


# --- low-level setters (InternalPartitionImpl; Hazelcast's InternalPartitionImplTest) -----------


def changed_slots(old: Sequence[str | None], new: Sequence[str | None]) -> int:
    """The number of indices where two replica arrays of one length differ."""
    if len(old) != len(new):
        raise PartitionTableError(f"replica arrays of different lengths: {len(old)} and "
                                  f"{len(new)}")
    return sum(a != b for a, b in zip(old, new, strict=True))


def _update(table: PartitionTable, partition_id: int, new: Replicas, increment: int,
            updates: int = 1) -> PartitionTable:
    """Partition ``partition_id`` gets ``new`` and ``increment`` more on its version; the global
    version rises by ``updates`` (one per applied table update, 000 §1.1)."""
    replicas = (*table.replicas[:partition_id], new, *table.replicas[partition_id + 1:])
    versions = list(table.versions)
    versions[partition_id] += increment
    return PartitionTable._unchecked(replicas, tuple(versions), table.version + updates,
                                     table.protocol)


def _same_length(table: PartitionTable, partition_id: int, arr: Replicas, what: str) -> None:
    length = len(table.replicas[partition_id])
    if len(arr) != length:
        raise PartitionTableError(f"{what} has {len(arr)} indices; the table's arrays have "
                                  f"{length}")


def set_replicas(table: PartitionTable, partition_id: int,
                 replicas: Sequence[str | None]) -> PartitionTable:
    """``InternalPartitionImpl.setReplicas``: the partition's version rises by the number of
    changed slots, +0 if none changed (Hazelcast's ``InternalPartitionImplTest``). A change is one
    table update for the global version (000 §1.1)."""
    pid = table._pid(partition_id)
    arr = _check_replicas(replicas, "replicas")
    _same_length(table, pid, arr, "replicas")
    n = changed_slots(table.replicas[pid], arr)
    if n == 0:
        return table
    return _update(table, pid, arr, n)


def set_replica(table: PartitionTable, partition_id: int, index: int,
                member: str | None) -> PartitionTable:
    """``InternalPartitionImpl.setReplica``: +1 if the index changes, +0 if it already holds
    ``member`` (Hazelcast's ``InternalPartitionImplTest``)."""
    pid = table._pid(partition_id)
    old = table.replicas[pid]
    _check_count(index, "index", 0, len(old) - 1)
    new = list(old)
    new[index] = _check_member(member, "member")
    return set_replicas(table, pid, new)


def swap_replicas(table: PartitionTable, partition_id: int, index1: int,
                  index2: int) -> PartitionTable:
    """``InternalPartitionImpl.swapReplicas``: exchange two indices; the version rises by 2
    whatever the indices hold, as in the source (``InternalPartitionImplTest``:
    ``swapReplicas(1,0)`` gives +2; ``MigrationManager.processPromotionCommitResult`` swaps the
    promoted backup with the owner this way)."""
    pid = table._pid(partition_id)
    old = table.replicas[pid]
    _check_count(index1, "index1", 0, len(old) - 1)
    _check_count(index2, "index2", 0, len(old) - 1)
    if index1 == index2:
        raise PartitionTableError(f"swap of index {index1} with itself")
    new = list(old)
    new[index1], new[index2] = old[index2], old[index1]
    return _update(table, pid, tuple(new), 2)


# --- the master's updates (000 §1.1, §2.1; MigrationManager) ------------------------------------


def migration_increment(decision: Decision) -> int:
    """``MigrationInfo.getPartitionVersionIncrement()``: 1, plus 1 if ``source_new_index > -1``,
    plus 1 if ``destination_current_index > -1``; the number of slots the migration changes. A clear
    (``destination is None``) gives 1, as its ``setReplica(index, null)`` does."""
    return (1 + (1 if decision.source_new_index > -1 else 0)
            + (1 if decision.destination_current_index > -1 else 0))


def apply_migration(table: PartitionTable, partition_id: int,
                    decision: Decision) -> PartitionTable:
    """A committed migration (000 §2.1 step 3; ``MigrationManager.applyMigration``): the
    partition's replicas become :func:`partsafe.refimpl.planner.apply` of the decision, its version
    rises by :func:`migration_increment` (``getFinalPartitionVersion() = initial + increment``),
    and the global version by 1 (000 §2.1 step 1 "increases the partition table version by 1").

    Like ``applyMigration`` this does not check that the members sit where the decision says;
    :func:`changed_slots` of the two arrays equals the increment when they do.
    """
    pid = table._pid(partition_id)
    new = _check_replicas(apply(table.replicas[pid], decision), "replicas after the migration")
    return _update(table, pid, new, migration_increment(decision))


def failure_increment(decision: Decision, rule: str) -> int:
    """How much :func:`fail_migration` raises the versions under ``rule``."""
    if rule == "source":
        return migration_increment(decision) + 1
    if rule == "design":
        return 2
    raise PartitionTableError(f"unknown failure rule {rule!r}; expected one of "
                              f"{', '.join(FAILURE_RULES)}")


def fail_migration(table: PartitionTable, partition_id: int, decision: Decision, *,
                   rule: str) -> PartitionTable:
    """A failed migration or commit: the replicas stay, the versions rise.

    - ``rule="source"``, the current source (``MigrationManager`` on a failed migration or
      commit, in ``MigrationPlanTask``; also what a new master's
      ``FetchMostRecentPartitionTableTask`` does to an active migration it marks FAILED): the
      partition's version rises by ``migration_increment(decision) + 1``.
    - ``rule="design"``, 000 §2.1 step 4: "MASTER does not update its partition table but it
      increments its partition table [version] by 2". Under 4.1 the +2 goes to the partition's
      version (the global version became per-partition versions in 003 §1).

    The global version rises by the same amount. Under 3.7 a commit raises the global version
    by 1, so +2 stays above any version a destination that applied the commit can hold. Under
    4.1 a commit raises the partition's version by its increment, up to 3, so only the source
    rule (``increment + 1``) keeps the master's version above the destination's for every
    migration type; with the design rule a migration of increment 2 ties and one of 3 ends lower.
    """
    pid = table._pid(partition_id)
    bump = failure_increment(decision, rule)
    return _update(table, pid, table.replicas[pid], bump, bump)


def remove_member(table: PartitionTable, member: str) -> PartitionTable:
    """The repair task's first step (``MigrationManager.RepairPartitionTableTask``; 000 §1.1
    "assigns NULL to a ... replica index ... when the corresponding node ... has left"): every index
    ``member`` holds becomes ``None``, the owner's included (:func:`promote` fills it later).
    Each nulled slot adds 1 to its partition's version; the removal is one table update for the
    global version. A member that holds nothing leaves the table unchanged."""
    m = _check_member(member, "member")
    if m is None:
        raise PartitionTableError("remove_member needs a member, got None")
    replicas = list(table.replicas)
    versions = list(table.versions)
    changed = False
    for p, arr in enumerate(replicas):
        if m in arr:
            replicas[p] = tuple(None if r == m else r for r in arr)
            versions[p] += 1
            changed = True
    if not changed:
        return table
    return PartitionTable._unchecked(tuple(replicas), tuple(versions), table.version + 1,
                                     table.protocol)


def promotion_index(table: PartitionTable, partition_id: int) -> int:
    """The backup index :func:`promote` would make owner: the first non-empty index after 0,
    or -1 if the owner is present or every index is empty."""
    arr = table.replicas[table._pid(partition_id)]
    if arr[0] is not None:
        return -1
    return next((j for j in range(1, len(arr)) if arr[j] is not None), -1)


def promote(table: PartitionTable, partition_id: int) -> PartitionTable:
    """A promotion (000 §1.1: the first backup "promotes itself as the partition owner only when
    it receives the updated partition table from master"; ``RepairPartitionTableTask`` and
    ``MigrationManager.processPromotionCommitResult``): the partition has
    no owner, and its first non-empty backup index ``j`` is swapped with index 0,
    ``swapReplicas(0, j)``: +2 on the partition's version, +1 on the global version.

    Raises :class:`PartitionTableError` if the owner is present, or if no backup is left (the
    partition is lost: :func:`assign_lost_owner`)."""
    pid = table._pid(partition_id)
    arr = table.replicas[pid]
    if arr[0] is not None:
        raise PartitionTableError(f"partition {pid} has owner {arr[0]!r}; a promotion fills an "
                                  f"empty owner index ({format_replicas(arr)})")
    j = promotion_index(table, pid)
    if j == -1:
        raise PartitionTableError(f"partition {pid} has no replica left to promote; it is lost "
                                  "(assign_lost_owner)")
    return swap_replicas(table, pid, 0, j)


def assign_lost_owner(table: PartitionTable, partition_id: int, member: str) -> PartitionTable:
    """A new owner for a partition whose owner and backups all left (000 §1.1 third case;
    ``MigrationManager.assignLostPartitionOwner``): ``setReplica(0, member)``, +1 on the
    partition's version and on the global version. Raises :class:`PartitionTableError` if some
    index still holds a replica (then the partition is promoted instead)."""
    pid = table._pid(partition_id)
    arr = table.replicas[pid]
    if any(r is not None for r in arr):
        raise PartitionTableError(f"partition {pid} is not lost: {format_replicas(arr)}")
    if _check_member(member, "member") is None:
        raise PartitionTableError("assign_lost_owner needs a member, got None")
    return set_replica(table, pid, 0, member)


# --- comparing tables -----------------------------------------------------------------------------


def _check_comparable(a: PartitionTable, b: PartitionTable) -> None:
    if a.partition_count != b.partition_count:
        raise PartitionTableError(f"tables of {a.partition_count} and {b.partition_count} "
                                  "partitions")
    if a.replicas and len(a.replicas[0]) != len(b.replicas[0]):
        raise PartitionTableError(f"tables with replica arrays of {len(a.replicas[0])} and "
                                  f"{len(b.replicas[0])} indices")


def distance(a: PartitionTable, b: PartitionTable) -> int:
    """``a.distanceOf(b)``, ``PartitionTableView.distanceOf`` (Hazelcast's
    ``PartitionTableViewTest``; ``RedoPartitioningTask`` uses it to pick the nearest persistence
    snapshot).

    Summed over partitions and indices ``i``: 0 where both hold the same (or both are empty);
    ``MAX_REPLICA_COUNT`` (7) where exactly one is empty; where both hold different members,
    ``|j - i|`` if ``a``'s member sits at index ``j`` of ``b``'s array, else 7. So identical
    tables give 0, swapping indices 0 and 1 of one partition gives 2, nulling ``k`` indices of
    one partition gives ``7 * k`` (the cases ``PartitionTableViewTest`` asserts). Versions are not
    compared.
    """
    _check_comparable(a, b)
    total = 0
    for arr_a, arr_b in zip(a.replicas, b.replicas, strict=True):
        for i, (ra, rb) in enumerate(zip(arr_a, arr_b, strict=True)):
            if ra == rb:
                continue
            if ra is None or rb is None:
                total += MAX_REPLICA_COUNT
            elif ra in arr_b:
                total += abs(arr_b.index(ra) - i)
            else:
                total += MAX_REPLICA_COUNT
    return total


def accept(local: PartitionTable, received: PartitionTable) -> PartitionTable:
    """The table a member holds after receiving ``received`` from the master.

    - 3.7 (000 §1.1): the whole table, if its global version is bigger than the local one;
      otherwise the local table stays.
    - 4.1 (003 §1.2): partition by partition, each partition whose received version is bigger
      than the local one; the others stay ("partially apply, partially ignore"). The global
      version becomes the larger of the two.
    """
    if local.protocol != received.protocol:
        raise PartitionTableError(f"a {local.protocol} member received a {received.protocol} "
                                  "table")
    _check_comparable(local, received)
    if local.protocol == "3.7":
        return received if received.version > local.version else local
    take = [rv > lv for lv, rv in zip(local.versions, received.versions, strict=True)]
    if not any(take):
        return local
    replicas = tuple(rr if t else lr
                     for t, lr, rr in zip(take, local.replicas, received.replicas, strict=True))
    versions = tuple(max(lv, rv) for lv, rv in zip(local.versions, received.versions,
                                                     strict=True))
    return PartitionTable._unchecked(replicas, versions, max(local.version, received.version),
                                     local.protocol)

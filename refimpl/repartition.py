"""The repartitioning step the master runs before planning migrations (000 §3.2, step 3 "Run
regular repartitioning algorithm"), with the graceful-shutdown rule of 004.

Hazelcast's partition state generator (member groups, host awareness) is out of scope; this is a
deterministic, balanced stand-in that keeps the current assignments where balance allows, so the
planner (:mod:`partsafe.refimpl.planner`, 000 §3.2.2) gets small, realistic targets:

- **Eligible members** are ``members`` minus ``shutdown_requested``: a member that asked to shut
  down gets no replica, so the migrations planned toward the result can only take data away from
  it (004, "shutdown-requested nodes can be only source of these migrations").
- **Replica count** per partition is ``r = min(backups + 1, len(eligible))``; indices ``0 .. r-1``
  hold distinct eligible members and the rest of the array is ``None``.
- **Balance**, guaranteed for every input: with ``P`` partitions and ``E`` eligible members, at
  every replica index ``0 .. r-1`` each eligible member holds ``floor(P/E)`` or ``ceil(P/E)``
  partitions, and each member's total over all indices is ``floor(rP/E)`` or ``ceil(rP/E)``. So
  both differ by at most 1 across members.
- **Stability**: the per-index quotas favour members that already hold that index, and each
  partition takes, among the assignments that keep the quotas satisfiable, one with the fewest
  changes (a member kept at its index costs 0, kept at another index 1, new 2). A table that
  already has this shape and balance is returned unchanged, so replanning a balanced table plans
  nothing.
- **Determinism**: the result depends only on the arguments, including the order of ``members``:
  among equally good assignments a partition takes, at each index, the member with the most quota
  left there, then the next member in a rotation of ``members`` by partition number, so that an
  empty table is filled round-robin.

How balance is kept satisfiable: the quotas form a members × indices count matrix whose index
columns sum to ``P``; adding ``E - r`` "absent" columns makes every line sum ``P``, and such an
integer matrix is a sum of ``P`` permutation matrices (König), one per partition. Each partition
in turn takes a min-cost permutation of the matrix left over, which keeps that property for the
partitions after it.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence

from partsafe.refimpl.planner import MAX_REPLICA_COUNT, Replicas

__all__ = ["MAX_BACKUP_COUNT", "is_balanced", "repartition"]

#: ``IPartition.MAX_BACKUP_COUNT`` (6: ``InternalPartition.MAX_REPLICA_COUNT`` less the owner).
MAX_BACKUP_COUNT = MAX_REPLICA_COUNT - 1


def _validate(current: Sequence[Sequence[str | None]], members: Sequence[str], backups: int,
              shutdown_requested: Collection[str]) -> tuple[list[Replicas], list[str], int]:
    """Check the arguments; return the arrays, the eligible members and the array length."""
    if isinstance(backups, bool) or not isinstance(backups, int):
        raise ValueError(f"backups must be an int, got {backups!r}")
    if not 0 <= backups <= MAX_BACKUP_COUNT:
        raise ValueError(f"backups={backups} is outside 0..{MAX_BACKUP_COUNT}")
    if isinstance(members, str):
        raise ValueError(f"members must be a sequence of names, not the string {members!r}")
    seen: set[str] = set()
    for m in members:
        if not isinstance(m, str) or not m:
            raise ValueError(f"member {m!r} is not a non-empty string")
        if m in seen:
            raise ValueError(f"member {m!r} is listed twice in members")
        seen.add(m)
    if isinstance(shutdown_requested, str):
        raise ValueError("shutdown_requested must be a collection of names, not the string "
                         f"{shutdown_requested!r}")
    unknown = sorted(set(shutdown_requested) - seen)
    if unknown:
        raise ValueError(f"shutdown_requested names {', '.join(map(repr, unknown))}, not in "
                         "members")
    if isinstance(current, str):
        raise ValueError("current must be a sequence of replica arrays")
    arrays: list[Replicas] = []
    length: int | None = None
    for p, arr in enumerate(current):
        if isinstance(arr, str):
            raise ValueError(f"partition {p}: a replica array is a sequence, not the string "
                             f"{arr!r}")
        row = tuple(arr)
        if len(row) > MAX_REPLICA_COUNT:
            raise ValueError(f"partition {p}: {len(row)} replica indices, at most "
                             f"{MAX_REPLICA_COUNT}")
        held: set[str] = set()
        for i, r in enumerate(row):
            if r is None:
                continue
            if not isinstance(r, str) or not r:
                raise ValueError(f"partition {p}, index {i}: {r!r} is not a member name or None")
            if r in held:
                raise ValueError(f"partition {p}: member {r!r} holds two replica indices")
            held.add(r)
        if row:
            if length is None:
                length = len(row)
            elif len(row) != length:
                raise ValueError(f"partition {p} has {len(row)} replica indices, partition 0.."
                                 f"{p - 1} have {length}; all arrays must have one length")
        arrays.append(row)
    if length is None:
        length = MAX_REPLICA_COUNT
    if backups + 1 > length:
        raise ValueError(f"backups={backups} needs {backups + 1} replica indices, the arrays "
                         f"have {length}")
    shut = set(shutdown_requested)
    eligible = [m for m in members if m not in shut]
    return arrays, eligible, length


def _min_cost_assignment(cost: list[list[int]]) -> tuple[list[int], int]:
    """Hungarian algorithm on a square matrix: ``col_of_row`` and the total cost."""
    n = len(cost)
    inf = (1 + max(max(row) for row in cost)) * (n + 1) * 4
    u = [0] * (n + 1)
    v = [0] * (n + 1)
    row_of_col = [0] * (n + 1)  # 1-based; 0 = unassigned
    way = [0] * (n + 1)
    for row in range(1, n + 1):
        row_of_col[0] = row
        col0 = 0
        minv = [inf] * (n + 1)
        used = [False] * (n + 1)
        while True:
            used[col0] = True
            r0 = row_of_col[col0]
            delta = inf
            col1 = 0
            for col in range(1, n + 1):
                if used[col]:
                    continue
                cur = cost[r0 - 1][col - 1] - u[r0] - v[col]
                if cur < minv[col]:
                    minv[col] = cur
                    way[col] = col0
                if minv[col] < delta:
                    delta = minv[col]
                    col1 = col
            for col in range(n + 1):
                if used[col]:
                    u[row_of_col[col]] += delta
                    v[col] -= delta
                else:
                    minv[col] -= delta
            col0 = col1
            if row_of_col[col0] == 0:
                break
        while True:
            col1 = way[col0]
            row_of_col[col0] = row_of_col[col1]
            col0 = col1
            if col0 == 0:
                break
    col_of_row = [0] * n
    for col in range(1, n + 1):
        col_of_row[row_of_col[col] - 1] = col - 1
    total = sum(cost[r][col_of_row[r]] for r in range(n))
    return col_of_row, total


def _quotas(arrays: Sequence[Replicas], eligible: list[str], r: int) -> list[list[int]]:
    """``quota[m][idx]``: how many partitions member ``m`` holds at index ``idx``.

    Every index gives ``q`` or ``q + 1`` to each member (``P = qE + s``, exactly ``s`` extras per
    index) and every member gets ``F`` or ``F + 1`` extras in total (``F = floor(rs/E)``), so
    both per-index and total counts differ by at most 1. Extras go first to members that already
    hold more partitions, overall and at that index, then to members that can fill vacant
    indices without displacing anyone.
    """
    e = len(eligible)
    pos = {m: k for k, m in enumerate(eligible)}
    p_count = len(arrays)
    q, s = divmod(p_count, e)
    # held[k][idx]: partitions where k already holds idx; free[k][idx]: partitions whose idx is
    # vacant (empty or held by a member that is not eligible) and that k does not hold at all,
    # so k could take idx there without displacing anyone
    held = [[0] * r for _ in range(e)]
    free = [[0] * r for _ in range(e)]
    for row in arrays:
        present = {pos[m] for m in row if m is not None and m in pos}
        for idx in range(r):
            k = pos.get(row[idx]) if idx < len(row) and row[idx] is not None else None
            if k is not None:
                held[k][idx] += 1
            else:
                for other in range(e):
                    if other not in present:
                        free[other][idx] += 1
    f_low, rem = divmod(r * s, e)
    by_total = sorted(range(e), key=lambda k: (-sum(held[k]), -sum(free[k]), k))
    need = [f_low] * e
    for k in by_total[:rem]:
        need[k] = f_low + 1
    quota = [[q] * r for _ in range(e)]
    for idx in range(r):
        left = r - idx  # indices still to give extras, this one included
        forced = [k for k in range(e) if need[k] == left]
        others = sorted((k for k in range(e) if 0 < need[k] < left),
                        key=lambda k: (-min(held[k][idx], q + 1), -free[k][idx], -need[k], k))
        for k in (forced + others)[:s]:
            quota[k][idx] += 1
            need[k] -= 1
    return quota


def repartition(current: Sequence[Sequence[str | None]], members: Sequence[str], backups: int,
                shutdown_requested: Collection[str] = ()) -> tuple[Replicas, ...]:
    """A balanced assignment of replica indices to members for every partition (000 §3.2 step 3;
    004 for ``shutdown_requested``).

    ``current`` holds one replica array per partition (all of one length, 1 to 7; an empty tuple
    is an unassigned partition and the length defaults to 7 when every partition is unassigned).
    Members of ``current`` that are not eligible (departed, or in ``shutdown_requested``) are
    ignored. The result has the same length per array; see the module docstring for the replica
    count, the balance guarantee and the stability rule. Raises ``ValueError`` naming the bad
    argument.
    """
    arrays, eligible, length = _validate(current, members, backups, shutdown_requested)
    e = len(eligible)
    r = min(backups + 1, e)
    empty: Replicas = (None,) * length
    if r == 0 or not arrays:
        return tuple(empty for _ in arrays)
    quota = _quotas(arrays, eligible, r)
    absent = [len(arrays) - sum(quota[k]) for k in range(e)]
    # cost = changes * weight + tie-breaks; the weight makes one change outweigh any tie-break
    weight = (len(arrays) + 2) * e * e + 1
    infinite = weight * (2 * e + 1) * 4
    out: list[Replicas] = []
    for p, row in enumerate(arrays):
        where = {m: i for i, m in enumerate(row) if m is not None}
        cost = [[0] * e for _ in range(e)]
        for k, m in enumerate(eligible):
            for col in range(e):
                if col < r:
                    left = quota[k][col]
                    if left == 0:
                        cost[k][col] = infinite
                        continue
                    changes = 0 if where.get(m) == col else 1 if m in where else 2
                    # ties: the member with the most quota left here, then a rotation by partition
                    tie = (len(arrays) - left) * e + (k - col - p) % e
                else:
                    changes = tie = 0
                    if absent[k] == 0:
                        cost[k][col] = infinite
                        continue
                cost[k][col] = changes * weight + tie
        col_of, total = _min_cost_assignment(cost)
        if total >= infinite:  # pragma: no cover - excluded by the König argument above
            raise RuntimeError("repartition: the quotas left no assignment for a partition")
        new = list(empty)
        for k, col in enumerate(col_of):
            if col < r:
                new[col] = eligible[k]
                quota[k][col] -= 1
            else:
                absent[k] -= 1
        out.append(tuple(new))
    return tuple(out)


def is_balanced(table: Sequence[Sequence[str | None]], members: Sequence[str], backups: int,
                shutdown_requested: Collection[str] = ()) -> bool:
    """Whether ``table`` has the shape and balance :func:`repartition` guarantees: ``r`` distinct
    eligible members at indices ``0 .. r-1`` of every array, ``None`` beyond, and per-index and
    total counts that differ by at most 1 across the eligible members."""
    arrays, eligible, _ = _validate(table, members, backups, shutdown_requested)
    r = min(backups + 1, len(eligible))
    allowed = set(eligible)
    per_index = [dict.fromkeys(eligible, 0) for _ in range(r)]
    for row in arrays:
        if len(row) < r or any(m is not None for m in row[r:]):
            return False
        for idx in range(r):
            member = row[idx]
            if member is None or member not in allowed:
                return False
            per_index[idx][member] += 1
    if r == 0:
        return True
    totals = [sum(per_index[idx][m] for idx in range(r)) for m in eligible]
    spread_ok = all(max(c.values()) - min(c.values()) <= 1 for c in per_index)
    return spread_ok and max(totals) - min(totals) <= 1

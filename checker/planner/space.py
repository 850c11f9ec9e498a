"""The exhaustive small-scope space of the migration planner: every (current, target) pair.

A replica array has `n` indices, each empty or holding a member, no member twice. Pairs are
enumerated up to renaming of members: members are named in order of first appearance, reading the
current array and then the target, so each class of pairs is produced exactly once (its canonical
representative). With `n` indices at most `2 n` names are needed.
"""

from __future__ import annotations

import string
from collections.abc import Iterator

Replicas = tuple[str | None, ...]
NAMES = string.ascii_uppercase


def canonical_pairs(n: int) -> Iterator[tuple[Replicas, Replicas]]:
    """Every (current, target) pair of `n`-index replica arrays, one per renaming class."""
    if not 1 <= n <= 7:
        raise ValueError(f"replica arrays have 1 to 7 indices, not {n}")
    cells: list[str | None] = [None] * (2 * n)

    def fill(pos: int, used: int) -> Iterator[tuple[Replicas, Replicas]]:
        if pos == 2 * n:
            yield tuple(cells[:n]), tuple(cells[n:])
            return
        row_start = 0 if pos < n else n
        taken = set(cells[row_start:pos])
        cells[pos] = None
        yield from fill(pos + 1, used)
        for k in range(used):
            if NAMES[k] not in taken:
                cells[pos] = NAMES[k]
                yield from fill(pos + 1, used)
        cells[pos] = NAMES[used]
        yield from fill(pos + 1, used + 1)
        cells[pos] = None

    yield from fill(0, 0)


def count_pairs(n: int) -> int:
    return sum(1 for _ in canonical_pairs(n))

"""A compact store of visited-state fingerprints with the parent fingerprint of each.

The explorer keeps no states, only 64-bit fingerprints: an open-addressing table (linear probing)
over two `array('Q')` columns, the fingerprint and the fingerprint of the state it was first reached
from (0 for an initial state). 16 bytes per slot; the table doubles at a load of 0.7, rehashed with
numpy in place. A Python `set` of fingerprints would cost about 90 bytes per state; this about 23.

A fingerprint is Python's `hash` of the state multiplied by a 64-bit odd constant (Fibonacci
hashing), so that states which hash to nearby integers (a state packed into one int hashes to
itself) spread over the table: the slot is taken from the product's high bits. `fingerprint` is
the one place that says so: the expansion, initial states, rebuilt traces and lassos all call it.

The search's inner loop (`Expander.expand`, checker/engine/expand.py) probes `keys` directly; the
methods here serve the cold paths: initial states, the merge of a worker's batch, parent look-ups
when a counterexample is rebuilt, growth.
"""

from __future__ import annotations

from array import array

import numpy as np

MASK64 = (1 << 64) - 1
MIX = 0x9E3779B97F4A7C15
MAX_LOAD = 0.7


def fingerprint(state: object) -> int:
    """The 64-bit fingerprint of a (representative) state; never 0, which marks an empty slot."""
    return ((hash(state) * MIX) & MASK64) or 1


def _zeros(capacity: int) -> array:
    return array("Q", [0]) * capacity


class FingerprintTable:
    """Visited fingerprints with parents. `keys[i] == 0` marks an empty slot."""

    __slots__ = ("count", "keys", "limit", "mask", "parents", "shift")

    def __init__(self, bits: int = 16) -> None:
        capacity = 1 << bits
        self.keys = _zeros(capacity)
        self.parents = _zeros(capacity)
        self.mask = capacity - 1
        self.shift = 64 - bits
        self.count = 0
        self.limit = int(capacity * MAX_LOAD)

    def __len__(self) -> int:
        return self.count

    @property
    def capacity(self) -> int:
        return self.mask + 1

    @property
    def nbytes(self) -> int:
        return 16 * self.capacity

    def insert(self, fp: int, parent: int) -> bool:
        """Add `fp` (reached from `parent`); False if it was already there."""
        keys, mask = self.keys, self.mask
        i = fp >> self.shift
        while True:
            k = keys[i]
            if k == 0:
                keys[i] = fp
                self.parents[i] = parent
                self.count += 1
                if self.count > self.limit:
                    self.grow()
                return True
            if k == fp:
                return False
            i = (i + 1) & mask

    def __contains__(self, fp: int) -> bool:
        keys, mask = self.keys, self.mask
        i = fp >> self.shift
        while True:
            k = keys[i]
            if k == fp:
                return True
            if k == 0:
                return False
            i = (i + 1) & mask

    def parent(self, fp: int) -> int:
        """The fingerprint `fp` was first reached from (0 for an initial state)."""
        keys, mask = self.keys, self.mask
        i = fp >> self.shift
        while True:
            k = keys[i]
            if k == fp:
                return self.parents[i]
            if k == 0:
                raise KeyError(fp)
            i = (i + 1) & mask

    def grow(self) -> None:
        """Double the capacity and re-place every entry, vectorised.

        Sorted by home slot, linear probing places entry i at max(home_i, pos_{i-1} + 1), that is
        ``i + cummax(home - i)``; entries pushed past the end wrap to the front with their
        wrapped position as the least slot they may take, and the layout is recomputed.
        """
        old_keys = np.frombuffer(self.keys, dtype=np.uint64)
        old_parents = np.frombuffer(self.parents, dtype=np.uint64)
        used = np.flatnonzero(old_keys)
        keys = old_keys[used]
        parents = old_parents[used]
        del old_keys, old_parents, used
        self.keys = self.parents = array("Q")  # frees the old columns
        capacity = 2 * (self.mask + 1)
        shift = self.shift - 1
        home = (keys >> np.uint64(shift)).astype(np.int64)
        index = np.arange(keys.size, dtype=np.int64)
        while True:
            order = np.argsort(home, kind="stable")
            keys, parents, home = keys[order], parents[order], home[order]
            del order
            pos = index + np.maximum.accumulate(home - index)
            over = pos >= capacity
            if not over.any():
                break
            home[over] = pos[over] - capacity
        self.keys = _zeros(capacity)
        self.parents = _zeros(capacity)
        np.frombuffer(self.keys, dtype=np.uint64)[pos] = keys
        np.frombuffer(self.parents, dtype=np.uint64)[pos] = parents
        self.mask = capacity - 1
        self.shift = shift
        self.limit = int(capacity * MAX_LOAD)

    def slots(self, fps: np.ndarray) -> np.ndarray:
        """The slot of each fingerprint of `fps` (uint64, every one in the table), vectorised:
        each round probes the next slot of the fingerprints not yet found. A slot is a dense
        name for a state, 4 bytes where the table has at most 2**32 slots."""
        keys = np.frombuffer(self.keys, dtype=np.uint64)
        dtype = np.uint32 if self.capacity <= 1 << 32 else np.uint64
        out = np.empty(fps.size, dtype=dtype)
        todo = np.arange(fps.size, dtype=np.int64)
        pos = (fps >> np.uint64(self.shift)).astype(np.int64)
        want = fps
        while todo.size:
            at = keys[pos]
            hit = at == want
            out[todo[hit]] = pos[hit]
            if (at[~hit] == 0).any():
                raise KeyError("a fingerprint that is not in the table")
            miss = ~hit
            todo, want = todo[miss], want[miss]
            pos = (pos[miss] + 1) & self.mask
        return out

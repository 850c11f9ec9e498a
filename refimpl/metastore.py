"""Ignite 3's metastore as the rebalance protocol uses it (001, IGNITE-16668; Ignite 3's
``MetaStorageManager``): a linearizable key-value store with revisions, one atomic conditional
invoke, and watches.

- Every key holds a value and the revision of its last change; a put or remove makes a new
  revision, one per invoke, and the invoke's changes are one watch event at that revision.
- An invoke is an ``iif(condition, success, failure)`` tree evaluated atomically: each branch is a
  list of puts and removes, or a further `Iif`. The conditions are those of the design: `Absent`
  (empty), `Exists`, `RevisionIs` (equal revision; 0 is an absent key's), `Below` (absent, or a
  value less than; the change trigger), `ValueIs` / `ValueIsNot` and their conjunction and
  disjunction.

Revisions are `Rev` values: the protocol only compares them, so a checker may renumber every
revision of a state by rank (the same order, the smallest numbers) without changing what any
handler does.
"""

from __future__ import annotations

from collections.abc import Hashable
from typing import NamedTuple


class Rev(int):
    """A metastore revision (an int that a checker can tell from other ints)."""

    __slots__ = ()

    def __repr__(self) -> str:
        return f"r{int(self)}"


#: the revision of a key that is absent
NO_REV = 0

STABLE = "assignments.stable"
PENDING = "assignments.pending"
PLANNED = "assignments.planned"
REDUCE = "assignments.switch.reduce"
APPEND = "assignments.switch.append"
TRIGGER = "pending.change.trigger"
DATA_NODES = "dataNodes"


class Entry(NamedTuple):
    """A key's value and the revision of its last change; `value` None is a removal (in a watch
    event; a store keeps only present keys)."""

    key: str
    value: Hashable
    rev: int


class Absent(NamedTuple):
    key: str


class Exists(NamedTuple):
    key: str


class RevisionIs(NamedTuple):
    key: str
    rev: int


class Below(NamedTuple):
    """The key is absent or its value is less than `value` (the change trigger guard)."""

    key: str
    value: int


class ValueIs(NamedTuple):
    key: str
    value: Hashable


class ValueIsNot(NamedTuple):
    """The key is present and its value differs."""

    key: str
    value: Hashable


class All(NamedTuple):
    conditions: tuple[Condition, ...]


class AnyOf(NamedTuple):
    conditions: tuple[Condition, ...]


Condition = Absent | Exists | RevisionIs | Below | ValueIs | ValueIsNot | All | AnyOf


class Put(NamedTuple):
    key: str
    value: Hashable


class Remove(NamedTuple):
    key: str


Op = Put | Remove


class Iif(NamedTuple):
    """``iif(condition, success, failure)``: `success` and `failure` are operation lists or a
    nested `Iif`; `label` names the branch taken in reports."""

    condition: Condition
    success: tuple[Op, ...] | Iif
    failure: tuple[Op, ...] | Iif = ()
    label: str = "success"
    failure_label: str = "failure"


class Store(NamedTuple):
    """The metastore: present keys in key order, and the latest revision."""

    entries: tuple[Entry, ...]
    revision: int

    def get(self, key: str) -> Entry | None:
        for e in self.entries:
            if e.key == key:
                return e
        return None

    def value(self, key: str) -> Hashable:
        e = self.get(key)
        return None if e is None else e.value


def holds(store: Store, cond: Condition) -> bool:
    """Whether `cond` holds of `store`."""
    kind = type(cond)
    if kind is All:
        return all(holds(store, c) for c in cond.conditions)  # type: ignore[union-attr]
    if kind is AnyOf:
        return any(holds(store, c) for c in cond.conditions)  # type: ignore[union-attr]
    entry = store.get(cond.key)  # type: ignore[union-attr]
    if kind is Absent:
        return entry is None
    if kind is Exists:
        return entry is not None
    if kind is RevisionIs:
        return (NO_REV if entry is None else entry.rev) == cond.rev  # type: ignore[union-attr]
    if kind is Below:
        return entry is None or entry.value < cond.value  # type: ignore[operator,union-attr]
    if kind is ValueIs:
        return entry is not None and entry.value == cond.value  # type: ignore[union-attr]
    if kind is ValueIsNot:
        return entry is not None and entry.value != cond.value  # type: ignore[union-attr]
    raise TypeError(f"not a metastore condition: {cond!r}")


def invoke(store: Store, iif: Iif) -> tuple[Store, str, tuple[Entry, ...]]:
    """Evaluate `iif` atomically: the new store, the label of the branch taken and the changes
    made (empty if the branch has no operations; then the revision does not move)."""
    node: Iif = iif
    while True:
        ok = holds(store, node.condition)
        branch = node.success if ok else node.failure
        label = node.label if ok else node.failure_label
        if isinstance(branch, Iif):
            node = branch
            continue
        break
    if not branch:
        return store, label, ()
    rev = Rev(store.revision + 1)
    entries = {e.key: e for e in store.entries}
    changes: list[Entry] = []
    for op in branch:
        if type(op) is Put:
            entries[op.key] = Entry(op.key, op.value, rev)
            changes.append(Entry(op.key, op.value, rev))
        elif op.key in entries:
            del entries[op.key]
            changes.append(Entry(op.key, None, rev))
    if not changes:
        return store, label, ()
    return Store(tuple(entries[k] for k in sorted(entries)), rev), label, tuple(changes)

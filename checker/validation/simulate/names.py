"""The simulated cluster's names: its members' addresses, their log files and instance names,
and the renaming of a walk's node names, partitions and migration ids onto the cluster's.
"""

from __future__ import annotations

import dataclasses
import random
import uuid as uuidlib
from collections.abc import Sequence
from typing import Any

from partsafe.traces import events as ev

#: the cluster's name and Hazelcast version, as every member prefix shows them
CLUSTER = "dev"
VERSION = "5.3.0"

ADJECTIVES = ("amazing", "brave", "calm", "dreamy", "eager", "focused", "gifted", "happy",
              "jolly", "keen", "lucid", "modest", "nifty", "optimistic", "priceless", "quirky",
              "relaxed", "serene", "trusting", "vibrant")
SCIENTISTS = ("galileo", "hopper", "lamarr", "turing", "noether", "curie", "darwin", "euler",
              "fermi", "gauss", "hypatia", "kepler", "lovelace", "meitner", "newton", "pascal",
              "ritchie", "shannon", "tesla", "wozniak")


def address(index: int) -> str:
    """The address of the cluster's `index`-th member (``10.0.0.1:5701``, ...)."""
    return f"10.0.{index // 254}.{index % 254 + 1}:5701"


def file_name(member: str) -> str:
    """The log file of a member: ``member-10.0.0.1-5701.log``."""
    return f"member-{member.replace(':', '-')}.log"


def instance_names(rng: random.Random, count: int) -> list[str]:
    """Hazelcast-like instance names (``amazing_galileo``), distinct."""
    names: list[str] = []
    seen: set[str] = set()
    while len(names) < count:
        name = f"{rng.choice(ADJECTIVES)}_{rng.choice(SCIENTISTS)}"
        if name in seen:
            name = f"{name}_{len(names)}"
        seen.add(name)
        names.append(name)
    return names


_NAME_FIELDS = frozenset({"member", "suspect", "sender", "candidate", "removed", "joined",
                          "target", "requester", "leaving", "source_member", "destination",
                          "source_endpoint", "master"})
_TUPLE_FIELDS = frozenset({"members", "suspected"})
_FIELDS: dict[type, tuple[tuple[str, ...], tuple[str, ...], bool, bool]] = {}


def _fields_of(cls: type) -> tuple[tuple[str, ...], tuple[str, ...], bool, bool]:
    """An event class's fields to rename: those naming one member, those naming several, and
    whether it has a partition and a migration id (cached per class)."""
    known = _FIELDS.get(cls)
    if known is None:
        names = [f.name for f in dataclasses.fields(cls)]  # type: ignore[arg-type]
        known = _FIELDS[cls] = (tuple(n for n in names if n in _NAME_FIELDS),
                                tuple(n for n in names if n in _TUPLE_FIELDS),
                                "partition" in names, "migration" in names)
    return known


class Renaming:
    """A walk's node names and partitions as the cluster's, and its migration ids as UUIDs."""

    def __init__(self, names: dict[str, str], partitions: Sequence[int], uuids: dict[str, str],
                 salt: str) -> None:
        self.names = names
        self.partitions = partitions
        self.uuids = uuids
        self.salt = salt
        self.migrations: dict[str, str] = {}

    def __call__(self, e: ev.Event) -> ev.Event:
        single, tuples, partition, migration = _fields_of(type(e))
        changes: dict[str, Any] = {}
        for name in single:
            value = getattr(e, name)
            if value is not None:
                changes[name] = self.names.get(value, value)
        for name in tuples:
            changes[name] = tuple(self.names.get(m, m) for m in getattr(e, name))
        if partition and getattr(e, "partition", None) is not None:
            changes["partition"] = self.partitions[e.partition]  # type: ignore[attr-defined]
        if migration:
            mid = e.migration  # type: ignore[attr-defined]
            uid = self.migrations.get(mid)
            if uid is None:
                uid = self.migrations[mid] = str(uuidlib.uuid5(uuidlib.NAMESPACE_URL,
                                                               f"{self.salt}:{mid}"))
            changes["migration"] = uid
        if isinstance(e, ev.MemberListInstalled):
            changes["uuids"] = tuple(self.uuids[m] for m in changes["members"])
        return dataclasses.replace(e, **changes)

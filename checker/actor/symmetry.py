"""Symmetry of the actor layer: renaming interchangeable names through node states, messages and
monitor states.

A protocol declares sets of names that play the same role (`Protocol.interchangeable`: joiners
that have not started, the followers of a raft group); every renaming within those sets maps
reachable states to reachable states, and the explorer keeps one representative per class
(`ActorModel.representative`). Names are strings wherever they occur, so a renaming replaces
strings through tuples, named tuples, frozensets and frozen dataclasses (`rename`).
"""

from __future__ import annotations

import dataclasses
import itertools
from collections.abc import Hashable, Iterable
from typing import Any

#: the renamed components remembered per renaming (each keeps its component alive): recent ones
#: are what the next states share
RENAMED_LIMIT = 200_000

_LEAF, _STR, _TUPLE, _SET, _NAMED, _DATA = range(6)
#: how `rename` goes through each type of value met so far
_KINDS: dict[type, int] = {}


def _kind(kind: type) -> int:
    if kind is str:
        found = _STR
    elif kind is tuple:
        found = _TUPLE
    elif kind is frozenset:
        found = _SET
    elif issubclass(kind, tuple) and hasattr(kind, "_make"):
        found = _NAMED
    elif dataclasses.is_dataclass(kind):
        found = _DATA
    else:
        found = _LEAF
    _KINDS[kind] = found
    return found


def rename(obj: Any, mapping: dict[str, str]) -> Any:
    """`obj` with every string in `mapping` replaced, through tuples, named tuples, frozensets
    and frozen dataclasses (rebuilt field by field, without running their checks again)."""
    kind = type(obj)
    how = _KINDS.get(kind)
    if how is None:
        how = _kind(kind)
    if how == _LEAF:
        return obj
    if how == _STR:
        return mapping.get(obj, obj)
    if how == _TUPLE:
        return tuple([rename(x, mapping) for x in obj])
    if how == _SET:
        return frozenset([rename(x, mapping) for x in obj])
    if how == _NAMED:
        return kind._make([rename(x, mapping) for x in obj])
    copy = object.__new__(kind)
    for f in dataclasses.fields(obj):
        object.__setattr__(copy, f.name, rename(getattr(obj, f.name), mapping))
    return copy


def permutations(interchangeable: Iterable[frozenset[str]]) -> list[dict[str, str]]:
    """Every renaming that permutes each set of `interchangeable` names within itself, the
    identity first; none at all when no set has two names."""
    groups = [sorted(g) for g in interchangeable if len(g) > 1]
    if not groups:
        return []
    perms: list[dict[str, str]] = []
    for choice in itertools.product(*(itertools.permutations(g) for g in groups)):
        mapping = {}
        for group, image in zip(groups, choice, strict=True):
            mapping.update(zip(group, image, strict=True))
        perms.append(mapping)
    return perms


class Renamer:
    """One renaming of components. Worlds share their components (node states, messages in
    flight, monitor states) with the worlds they came from, so each component is renamed once
    and its image remembered by identity (the component is kept alive with it, so its id cannot
    be reused); at most `RENAMED_LIMIT` of them, then the memory starts afresh (`trim`)."""

    def __init__(self, mapping: dict[str, str]) -> None:
        self.mapping = mapping
        self._memo: dict[int, tuple[Any, Any]] = {}
        memo, get = self._memo, self._memo.get

        def renamed(obj: Any) -> Any:
            hit = get(id(obj))
            if hit is not None and hit[0] is obj:
                return hit[1]
            image = rename(obj, mapping)
            memo[id(obj)] = (obj, image)
            return image

        #: the image of a component
        self.renamed = renamed

    def trim(self) -> None:
        """Forget the images once there are more than `RENAMED_LIMIT`."""
        if len(self._memo) > RENAMED_LIMIT:
            self._memo.clear()


class Symmetry:
    """The renamings of a protocol's interchangeable names, applied to worlds (named tuples of
    node states, in `names` order, messages in flight, budgets left, monitor states and flags)."""

    def __init__(self, interchangeable: Iterable[frozenset[str]], names: tuple[str, ...]) -> None:
        #: every renaming, the identity first; empty: no symmetry reduction
        self.perms = permutations(interchangeable)
        self.names = names
        self.index = {name: i for i, name in enumerate(names)}
        #: per renaming, its images of components remembered by identity
        self.renamers = [Renamer(mapping) for mapping in self.perms]

    def representative(self, world: Any) -> Any:
        """One member of `world`'s symmetry class, the same whatever its members are called: of
        the images of `world` under every renaming of interchangeable nodes, the one whose node
        states hash least; when several tie, the one whose whole state does. (Raw hashes, not
        fingerprints: a minimum of fingerprints would crowd the fingerprint table.) The node
        states decide almost always, and the rest of an image is built only for the one chosen."""
        nodes = world.nodes
        images = [nodes, *(self._nodes(nodes, k) for k in range(1, len(self.perms)))]
        keys = [hash(image) for image in images]
        least = min(keys)
        chosen = [k for k, h in enumerate(keys) if h == least]
        if len(chosen) == 1:
            k = chosen[0]
            return world if k == 0 else self._image(world, k, images[k])
        return min((world if k == 0 else self._image(world, k, images[k]) for k in chosen),
                   key=hash)

    def _nodes(self, nodes: tuple[Hashable, ...], k: int) -> tuple[Hashable, ...]:
        """The node states `nodes` under the k-th renaming."""
        renamer = self.renamers[k]
        renamer.trim()
        mapping, renamed, index = renamer.mapping, renamer.renamed, self.index
        out = list(nodes)
        for name, st in zip(self.names, nodes, strict=True):
            out[index[mapping.get(name, name)]] = renamed(st)
        return tuple(out)

    def _image(self, world: Any, k: int, nodes: tuple[Hashable, ...]) -> Any:
        """`world` under the k-th renaming, its node states `nodes` already renamed."""
        renamed = self.renamers[k].renamed
        return world._replace(nodes=nodes,
                              network=frozenset([renamed(e) for e in world.network]),
                              monitors=tuple([renamed(m) for m in world.monitors]),
                              flags=rename(world.flags, self.perms[k]))

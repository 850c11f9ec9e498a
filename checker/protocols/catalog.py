"""The models `partsafe check` knows, by name (docs/extending.md, "Add a protocol").

Each model's entry sits next to its model: its scope parameters, its coverage goals and how it is
built (checker/protocols/membership.py, partition.py, ignite.py, twophase.py; the entry type is
checker/protocols/entry.py). Its variants, and the spec each historical flaw must break in the bug
zoo, are the protocol's variant table (refimpl/variants.py). The migration planner is checked
by checker/planner/, not by a search, and is not one of `MODELS`; its variant table
(refimpl/planner.py) joins theirs in the texts that list variants (`variant_groups`,
`variants_breaking`).
"""

from __future__ import annotations

from typing import Any

from partsafe.checker.protocols.entry import ModelEntry, Param, Variant
from partsafe.checker.protocols.ignite import IGNITE
from partsafe.checker.protocols.membership import MEMBERSHIP
from partsafe.checker.protocols.partition import MIGRATION, PARALLEL, SHUTDOWN
from partsafe.checker.protocols.twophase import TWOPHASE
from partsafe.refimpl.planner import VARIANT_TABLE as PLANNER_VARIANTS
from partsafe.refimpl.variants import FIXED

__all__ = ["IGNITE", "MEMBERSHIP", "MIGRATION", "MODELS", "PARALLEL", "SHUTDOWN", "TWOPHASE",
           "ModelEntry", "Param", "Variant", "get", "variant_groups", "variants_breaking"]

#: every model, in the order `partsafe check` and `partsafe zoo` run them
MODELS: dict[str, ModelEntry] = {m.name: m for m in (MEMBERSHIP, MIGRATION, SHUTDOWN, PARALLEL,
                                                     IGNITE, TWOPHASE)}


def get(name: str) -> ModelEntry:
    """The entry of model `name`; an unknown name raises, listing the known ones."""
    try:
        return MODELS[name]
    except KeyError:
        raise ValueError(f"unknown model {name!r}; known: {', '.join(MODELS)}") from None


def _offered() -> list[tuple[str, dict[str, Variant]]]:
    """(model, its variants by name) of every model of `partsafe check`, the planner last."""
    out = [(e.name, {n: e.variant_table[n] for n in e.variants}) for e in MODELS.values()]
    return [*out, ("planner", dict(PLANNER_VARIANTS))]


def variant_groups() -> list[tuple[tuple[str, ...], tuple[str, ...]]]:
    """(models, variants) for `partsafe check --help`: the variants each model offers besides
    ``fixed``, from their tables; models that offer the same ones share a group."""
    groups: dict[tuple[str, ...], list[str]] = {}
    for model, variants in _offered():
        groups.setdefault(tuple(n for n in variants if n != FIXED), []).append(model)
    return [(tuple(models), names) for names, models in groups.items()]


def variants_breaking(spec_id: str) -> list[dict[str, Any]]:
    """The variants the bug zoo expects to break spec `spec_id`: model, variant, doc and the
    zoo's scope overrides of each, from the variant tables."""
    return [{"model": model, "variant": name, "doc": v.doc, "zoo_scope": dict(v.zoo_scope)}
            for model, variants in _offered() for name, v in variants.items()
            if v.breaks == spec_id and v.in_zoo_of(model)]

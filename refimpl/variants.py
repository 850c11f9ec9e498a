"""Variants: the design as it is ("fixed") and each historical or mutant version of a protocol,
declared once, in one table per protocol (docs/extending.md, "Add a variant").

Each protocol module keeps its table next to the handlers that branch on it: ``VARIANT_TABLE`` in
refimpl/membership.py, refimpl/partition_service.py, refimpl/ignite.py, refimpl/planner.py, and
checker/protocols/twophase.py. A row gives the variant's name, what it changes (with the design
section or finding it comes from), and, for a flaw the bug zoo (`partsafe zoo`) must find, the spec
it breaks and the scope at which the zoo searches for it. Everything else reads the table: the
protocol's own check of its `variant` argument, the models `partsafe check` offers
(checker/protocols/entry.py, ``ModelEntry.variants`` and ``ModelEntry.zoo``), the zoo, and the
help and error texts that list variants. The behaviour itself stays in the handlers, as
``if "name" in self.rules:`` branches: a protocol's `rules` hold its variant and the rules of the
release profile it follows (refimpl/profiles.py).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType

#: the name of every protocol's current design; the first row of each table
FIXED = "fixed"


@dataclass(frozen=True)
class Variant:
    """One row of a protocol's variant table.

    `breaks` is the spec id the bug zoo expects the variant to break (None: the zoo does not run
    it, as for ``fixed`` and for the design questions that break nothing); `zoo_scope` changes
    the model's default scope for that zoo run, by the command line's option names
    (``{"joins": 0}`` is ``--joins 0``).

    Several models of `partsafe check` may run one protocol (the partition service is `migration`
    and `shutdown` on 3.7 and `parallel` on 4.1): `models` names the models that offer the
    variant when not all of them do, and `zoo_model` the one whose zoo run finds it (None: every
    model that offers it).
    """

    name: str
    doc: str
    breaks: str | None = None
    zoo_scope: Mapping[str, int] = field(default_factory=dict, hash=False)
    zoo_model: str | None = None
    models: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        # a read-only copy in declaration order (the order of `partsafe check`'s options)
        object.__setattr__(self, "zoo_scope", MappingProxyType(dict(self.zoo_scope)))
        where = f"variant {self.name!r}"
        if not self.name or not self.doc:
            raise ValueError(f"{where}: a variant needs a name and a doc string")
        if self.breaks is None and (self.zoo_scope or self.zoo_model):
            raise ValueError(f"{where}: zoo_scope and zoo_model apply only to a variant that "
                             "declares the spec it breaks")
        if self.name == FIXED and self.breaks is not None:
            raise ValueError(f"{where}: the current design breaks no spec")

    def offered_by(self, model: str) -> bool:
        """Whether model `model` of `partsafe check` offers this variant."""
        return not self.models or model in self.models

    def in_zoo_of(self, model: str) -> bool:
        """Whether the zoo run of model `model` must find this variant's broken spec."""
        return (self.breaks is not None and self.offered_by(model)
                and self.zoo_model in (None, model))


def variant_table(*rows: Variant) -> dict[str, Variant]:
    """A protocol's variant table: `rows` by name, in order, ``fixed`` first.

    The table is a plain dict so that a test can add a row for its duration
    (``monkeypatch.setitem(VARIANT_TABLE, name, Variant(...))``); everything that reads it does
    so when it runs, never from a copy taken at import.
    """
    if not rows or rows[0].name != FIXED:
        raise ValueError(f"a variant table starts with {FIXED!r}, the current design")
    table: dict[str, Variant] = {}
    for row in rows:
        if row.name in table:
            raise ValueError(f"variant {row.name!r} is declared twice")
        table[row.name] = row
    return table


def variant_docs(table: Mapping[str, Variant]) -> dict[str, str]:
    """Name -> doc of every row of `table`."""
    return {name: row.doc for name, row in table.items()}

"""What the catalog knows of one model of `partsafe check`: its scope parameters, its variants and
how to build it (docs/extending.md).

A model entry builds a `Model` from a variant and a scope. Scope parameters are named the way the
command line names them (`--members 3 --crashes 1`), with defaults that make up the model's default
scope: the smallest that reaches all its coverage goals within about a minute.

The variants come from the protocol's variant table (refimpl/variants.py), which the entry reads
each time it is asked: the variants the model offers, and the bug zoo's entries (the spec each
flaw must break and the scope of that search).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from partsafe.checker.engine.model import Model
from partsafe.checker.protocols.log_trace import LogTable
from partsafe.refimpl import profiles
from partsafe.refimpl.profiles import Profile, Rule
from partsafe.refimpl.variants import Variant

__all__ = ["ModelEntry", "Param", "Variant"]


@dataclass(frozen=True)
class Param:
    """One scope parameter: its default and what it bounds."""

    default: int
    help: str
    minimum: int = 0


@dataclass(frozen=True)
class ModelEntry:
    """One model of `partsafe check`: `build(variant, scope, rules)` makes its `Model`, where
    `rules` are the release rules of a profile (refimpl/profiles.py)."""

    name: str
    title: str
    seed: str
    params: dict[str, Param]
    #: the protocol's variant table, by name (several models may share one)
    variant_table: Mapping[str, Variant]
    build: Callable[[str, dict[str, int], frozenset[str]], Model[Any]]
    #: action kinds, so that kinds that never fired are reported
    action_kinds: tuple[str, ...] = ()
    #: the protocol's release rules by name (refimpl/profiles.py; none for twophase)
    rule_table: Mapping[str, Rule] = field(default_factory=dict)
    #: how a product's logs show the model's steps (`partsafe conform` on logs), if they do
    log_table: LogTable | None = None

    def rules_of(self, profile: str) -> list[Rule | Variant]:
        """The rules profile `profile` follows in this model, each a `Rule` of the protocol's
        rule table or a `Variant` (a flaw that release shipped), in the profile's order."""
        return [self.rule_table[n] if n in self.rule_table else self.variant_table[n]
                for n in self.profile(profile).rules[self.name]]

    @property
    def variants(self) -> dict[str, str]:
        """Name -> doc of the variants this model offers, ``fixed`` first."""
        return {name: v.doc for name, v in self.variant_table.items() if v.offered_by(self.name)}

    @property
    def zoo(self) -> dict[str, tuple[str, dict[str, int]]]:
        """The bug zoo's entries of this model: variant -> (the spec it must break, the scope
        overrides of that search). A scope override the model does not take raises, naming the
        variant."""
        entries: dict[str, tuple[str, dict[str, int]]] = {}
        for name, v in self.variant_table.items():
            if v.breaks is None or not v.in_zoo_of(self.name):
                continue
            try:
                self.scope(dict(v.zoo_scope))
            except ValueError as exc:
                raise ValueError(f"variant {name!r} of model {self.name}: zoo_scope: {exc}") \
                    from None
            entries[name] = (v.breaks, dict(v.zoo_scope))
        return entries

    def profile(self, name: str) -> Profile:
        """Profile `name`, which must cover this model; ValueError otherwise."""
        profile = profiles.get(name)
        if not profile.covers(self.name):
            raise ValueError(f"profile {name} does not cover model {self.name} (it covers "
                             f"{', '.join(profile.models)})")
        return profile

    def scope(self, overrides: dict[str, int] | None = None,
              profile: str = "fixed") -> dict[str, int]:
        """The default scope, changed by `profile`'s defaults (Hazelcast's cap of 10 parallel
        migrations), with `overrides` applied; unknown or too small values raise."""
        scope = {k: p.default for k, p in self.params.items()}
        scope.update(self.profile(profile).scope_of(self.name))
        for key, value in (overrides or {}).items():
            if key not in self.params:
                known = ", ".join(f"--{k}" for k in self.params)
                raise ValueError(f"--{key} does not apply to model {self.name} (it takes {known})")
            if type(value) is not int:
                raise ValueError(f"--{key} must be a whole number, not {value!r}")
            if value < self.params[key].minimum:
                raise ValueError(f"--{key} must be at least {self.params[key].minimum}")
            scope[key] = value
        return scope

    def make(self, variant: str = "fixed", overrides: dict[str, int] | None = None,
             profile: str = "fixed") -> Model[Any]:
        """The model of `variant` under release profile `profile` (its rules, and then the
        variant's), at the profile's default scope changed by `overrides`."""
        if variant not in self.variants:
            raise ValueError(f"unknown variant {variant!r} of model {self.name}; "
                             f"known: {', '.join(self.variants)}")
        rules = self.profile(profile).rules_of(self.name)
        model = self.build(variant, self.scope(overrides, profile), rules)
        model.profile = profile
        return model

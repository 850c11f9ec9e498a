"""The invariant catalogue: every spec once, with its id, statement, design section and Python form.

A spec's Python form is a `Monitor` (an automaton over events, specs/monitor.py) or a state
predicate; the same monitor runs inside the explorer's global state and over events parsed from
logs. `kind` says when it is judged: on every event or state (`event monitor`, `state invariant`),
or only where nothing but faults can happen (`quiescence check`), or on the state graph as a whole
(`lasso`: no reachable cycle may do what the spec forbids for ever).
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Literal

from partsafe.specs.monitor import Monitor

Kind = Literal["state invariant", "event monitor", "quiescence check", "lasso"]

#: the designs partsafe checks, by the number code and docs cite them with ("002 §3.1")
DESIGNS = {
    "000": 'Hazelcast 3.7 "Avoid Data Loss on Migration"',
    "001": 'Apache Ignite 3 IGNITE-16668 "In-memory raft group reconfiguration on node failure"',
    "002": 'Hazelcast 3.9 "Cluster Service Consistency Improvements"',
    "003": 'Hazelcast 4.1 "Parallel Independent Migrations"',
    "004": 'Hazelcast 3.7 "Graceful Shutdown Improvements"',
    "TwoPhase": 'Gray and Lamport\'s two-phase commit (TLA+ TwoPhase), the calibration model',
}


@dataclass(frozen=True)
class Spec:
    """One invariant of the catalogue."""

    id: str
    title: str
    statement: str
    seed: str
    section: str
    kind: Kind
    #: builds the monitor that is the spec's Python form (None for specs checked elsewhere)
    monitor: Callable[[], Monitor] | None = None
    #: where the Z3 form lives, when there is one
    z3: str | None = None
    #: further explanation for `partsafe explain`
    rationale: str = ""

    @property
    def design(self) -> str:
        """The public name of the design the spec comes from (`seed` is its number)."""
        return DESIGNS.get(self.seed, self.seed)

    def as_dict(self) -> dict[str, str | None]:
        return {
            "id": self.id,
            "title": self.title,
            "statement": self.statement,
            "design": self.seed,
            "design_title": self.design,
            "section": self.section,
            "kind": self.kind,
        }


_SPECS: dict[str, Spec] = {}
#: the module that registered each spec
_MODULE: dict[str, str] = {}
#: the spec modules, in the order the catalogue lists them
MODULES = ("data", "ignite", "membership", "partition", "planner", "twophase")


def register(spec: Spec) -> Spec:
    if spec.id in _SPECS:
        raise ValueError(f"spec {spec.id} registered twice")
    _SPECS[spec.id] = spec
    _MODULE[spec.id] = sys._getframe(1).f_globals["__name__"].rsplit(".", 1)[-1]
    return spec


def _load() -> None:
    # Importing the spec modules registers their specs.
    from partsafe.specs import data, ignite, membership, partition, planner, twophase  # noqa: F401


def all_specs() -> Iterator[Spec]:
    """Every spec, in one order whatever order the spec modules were imported in (`MODULES`,
    then each module's own): processes that number specs alike (the Spark workers and their
    driver) agree."""
    _load()
    rank = {m: i for i, m in enumerate(MODULES)}
    position = {spec_id: i for i, spec_id in enumerate(_SPECS)}
    yield from sorted(_SPECS.values(),
                      key=lambda s: (rank.get(_MODULE[s.id], len(rank)), position[s.id]))


def get(spec_id: str) -> Spec:
    _load()
    try:
        return _SPECS[spec_id.upper()]
    except KeyError:
        raise KeyError(spec_id) from None

"""The 003 parallel migrations as a symbolic system (models/parallel.py): bounded model checking
finds the global-order flaw and replays it on the reference implementation, the fixed design is
clean to the same depth and proved for any size, a proof without its lemma fails, and the
explorer's transitions satisfy the transition formulas (the differential test, both ways)."""

from __future__ import annotations

import dataclasses

import pytest
import z3

from partsafe.checker import artifact
from partsafe.checker.symbolic import differential, to_artifact
from partsafe.models import parallel
from partsafe.models.bmc import bmc
from partsafe.models.induction import prove
from partsafe.models.system import Property, System

HZ40 = "hz40-global-order-parallel"
#: a joiner and three partitions: two copies to it run in parallel (max 2 per member)
SCOPE = {"members": 1, "joiners": 1, "partitions": 3, "crashes": 0, "joins": 1, "shutdowns": 0}


def test_global_order_breaks_master_only_in_four_steps() -> None:
    """A partition updated at the global version v + 1, then a failed migration of the other
    partition published alone at v + 1 + increment: a member that takes only that publication
    holds the master's global version with the older array of the first partition."""
    found = bmc(parallel.system(HZ40), ["PT-MASTER-ONLY"], {}, 4)["PT-MASTER-ONLY"]
    assert found.verdict == "counterexample"
    assert found.depth == 4
    assert found.seconds < 300


def test_fixed_design_is_clean_to_the_same_depth() -> None:
    found = bmc(parallel.system("fixed"), ["PT-MASTER-ONLY"], {}, 4)["PT-MASTER-ONLY"]
    assert found.verdict == "bounded"


def _race(variant: str) -> System:
    """The runs the reference takes without a loss: the master's own graceful shutdown, where
    the flaw is the commit race (`parallel.replayable`)."""
    return parallel.replayable(parallel.system(variant))


def test_two_commits_prepared_on_one_global_version_replay_on_the_reference() -> None:
    """Two migrations of different partitions planned on global version v: each commit carries
    the master's table with its own migration applied at v + 1, and the two destinations hold
    different tables under one version. The run replays on the reference implementation, which
    judges PT-MASTER-ONLY broken."""
    found = bmc(_race(HZ40), ["PT-MASTER-ONLY"], {}, 10)["PT-MASTER-ONLY"]
    assert found.verdict == "counterexample"
    assert found.depth == 10
    actions = [s["action"] for s in found.trace[1:]]
    assert actions.count("destination_commits") == 2
    doc = to_artifact("parallel", HZ40, "PT-MASTER-ONLY", found.trace)
    assert (doc["found_by"], doc["spec"]) == ("prove", "PT-MASTER-ONLY")
    _, trace, message = artifact.replay(doc)
    assert message is not None and "changed without the master" in message
    assert len(trace.steps) >= 5


@pytest.mark.slow
def test_per_partition_versions_stop_the_race() -> None:
    found = bmc(_race("fixed"), ["PT-MASTER-ONLY"], {}, 10)["PT-MASTER-ONLY"]
    assert found.verdict == "bounded"


@pytest.mark.parametrize("spec", parallel.SPECS)
def test_fixed_design_proved_for_any_size(spec: str) -> None:
    result = prove(parallel.system("fixed"), spec, timeout_ms=60_000)
    assert result.verdict == "proved", result.reason
    assert result.slowest < 60


@pytest.mark.parametrize(("spec", "lemma", "where"), [
    # two endpoints that could be one member: a start counts it twice
    ("PAR-MAX-PARALLEL", "migration-info", "PAR-MAX-PARALLEL after start"),
    # without the commit's reserved version, the master's commit may give a partition a
    # version some member already holds with another array
    ("PT-MASTER-ONLY", "commit-reserves", ""),
])
def test_each_proof_needs_its_lemma(spec: str, lemma: str, where: str) -> None:
    system = parallel.system("fixed")
    prop = system.property(spec)
    weaker = dataclasses.replace(prop, lemmas=tuple(n for n in prop.lemmas if n != lemma))
    system.properties = tuple(weaker if p is prop else p for p in system.properties)
    result = prove(system, spec, timeout_ms=2_000)
    assert result.verdict in ("failed", "unknown")
    assert where in result.reason


def test_global_order_cannot_be_proved() -> None:
    result = prove(parallel.system(HZ40), "PT-MASTER-ONLY", timeout_ms=2_000)
    assert result.verdict in ("failed", "unknown")


def test_load_counts_the_flights_at_each_endpoint() -> None:
    """PAR-MAX-PARALLEL judges the counter `load`; at a finite size it is the number of
    migrations in flight with the member as source endpoint or destination."""
    system = parallel.system("fixed")

    def counts(f) -> z3.BoolRef:  # type: ignore[no-untyped-def]
        u = f.u
        return u.forall([parallel.M], lambda x: f.load[x] == z3.Sum(*[
            z3.If(z3.And(f.inflight[m], z3.Or(f.source[m] == x, f.destination[m] == x)), 1, 0)
            for m in u.elements(parallel.G)]))
    system = dataclasses.replace(system, properties=(Property("LOAD", state=counts),))
    assert bmc(system, ["LOAD"], {}, 3)["LOAD"].verdict == "bounded"


@pytest.mark.parametrize("variant", ["fixed", HZ40])
def test_every_explored_transition_satisfies_its_transition_formula(variant: str) -> None:
    result = differential("parallel", variant, SCOPE)
    assert result.complete
    assert result.states > 100
    assert result.mismatches == []


def test_differential_catches_a_transition_formula_that_is_too_strict() -> None:
    """A serial master (3.7's one migration at a time) does not allow 4.1's second start."""
    original = parallel.system_for

    def serial(variant: str, scope):  # type: ignore[no-untyped-def]
        system = original(variant, scope)
        start = next(a for a in system.actions if a.name == "start")
        strict = dataclasses.replace(start, guard=lambda f, a: z3.And(
            start.guard(f, a), f.u.forall([parallel.G], lambda o: z3.Not(f.inflight[o]))))
        return dataclasses.replace(system, actions=tuple(
            strict if a is start else a for a in system.actions))
    try:
        parallel.system_for = serial  # type: ignore[assignment]
        result = differential("parallel", "fixed", SCOPE)
    finally:
        parallel.system_for = original  # type: ignore[assignment]
    assert any("start" in m for m in result.mismatches)

"""The symbolic 000 §1-§2 model (models/migration.py): proofs for any size of the fixed design,
a proof that fails without its lemma, the bounded counterexamples of the variants and of 000 §2.1
step 4's "+1", the fixed design clean to the same depths, the counterexamples replayed on the
reference implementation, and the explorer's transitions against the transition formulas (the
differential test, both ways)."""

from __future__ import annotations

import dataclasses

import pytest
import z3

from partsafe.checker import artifact
from partsafe.checker.symbolic import differential, to_artifact
from partsafe.models import migration as mg
from partsafe.models.bmc import bmc
from partsafe.models.induction import prove

#: the explorer's scope (`partsafe check migration`): members and partitions
SIZES = {"Member": 3, "Partition": 2, "Migration": 2}


@pytest.mark.parametrize("spec", ["PT-VERSION", "MIG-REJECT-STALE", "MIG-COMMIT-ORDER",
                                  "MIG-ATOMIC", "PT-MOST-RECENT", "PT-MASTER-ONLY"])
def test_fixed_proves_for_any_size(spec: str) -> None:
    result = prove(mg.system("fixed"), spec)
    assert result.verdict == "proved", result.reason
    assert result.slowest < 60


@pytest.mark.parametrize(("variant", "spec", "dropped"), [
    ("fixed", "MIG-ATOMIC", "recovery-saw-commits"),
    ("hz37-independent-commit", "MIG-COMMIT-ORDER", None),
])
def test_commit_proofs_need_their_lemmas_and_the_design(variant: str, spec: str,
                                                        dropped: str | None) -> None:
    """Without the lemma that a new master's recovery sees every destination's commit, or
    with the participants committing on their own, the proof is not obtained."""
    system = mg.system(variant)
    prop = system.property(spec)
    weaker = dataclasses.replace(prop, lemmas=tuple(n for n in prop.lemmas if n != dropped))
    system.properties = tuple(weaker if p.spec == spec else p for p in system.properties)
    result = prove(system, spec, timeout_ms=2_000)
    assert result.verdict in ("failed", "unknown")


def test_pt_version_needs_the_failure_lemma() -> None:
    system = mg.system("fixed")
    prop = system.property("PT-VERSION")
    weaker = dataclasses.replace(prop, lemmas=tuple(n for n in prop.lemmas
                                                    if n != "failure-raises"))
    system.properties = tuple(weaker if p.spec == "PT-VERSION" else p
                              for p in system.properties)
    result = prove(system, "PT-VERSION")
    assert result.verdict == "failed"
    assert "on fail" in result.reason


def _found(variant: str, spec: str, sizes: dict[str, int], depth: int) -> list[str]:
    result = bmc(mg.system(variant), [spec], sizes, depth)[spec]
    assert result.verdict == "counterexample", result
    return [s["action"] for s in result.trace]


def _clean(spec: str, sizes: dict[str, int], depth: int) -> None:
    assert bmc(mg.system("fixed"), [spec], sizes, depth)[spec].verdict == "bounded"


def test_local_promotion_breaks_master_only() -> None:
    assert _found("hz37-local-promotion", "PT-MASTER-ONLY", SIZES, 3)[-1] == "local_promotion"
    _clean("PT-MASTER-ONLY", SIZES, 2)


def test_stale_master_table_breaks_most_recent() -> None:
    sizes = {**SIZES, "Partition": 3}
    assert _found("hz37-stale-master-table", "PT-MOST-RECENT", sizes, 5)[-1] == \
        "finish_recovery"
    _clean("PT-MOST-RECENT", sizes, 4)


def test_independent_commit_breaks_commit_order() -> None:
    actions = _found("hz37-independent-commit", "MIG-COMMIT-ORDER", SIZES, 6)
    assert "commit_to_destination" in actions
    _clean("MIG-COMMIT-ORDER", SIZES, 5)


def test_failure_plus_one_breaks_master_only_plus_two_does_not() -> None:
    """000 §2.1 step 4: a destination that took the commit's table and split off holds the
    master's next version with another table when the failure raises the version by 1."""
    small = {"Member": 2, "Partition": 1, "Migration": 1}
    actions = _found("fail-plus-one-split", "PT-MASTER-ONLY", small, 6)
    assert {"destination_commits", "destination_split"} <= set(actions)
    result = bmc(mg.system("fail-plus-two-split"), ["PT-MASTER-ONLY"], small, 6)
    assert result["PT-MASTER-ONLY"].verdict == "bounded"


@pytest.mark.parametrize(("question", "proved"), [
    ("fail-plus-two-split", True),   # 000 §2.1 step 4's +2, a destination that comes back
    ("fail-plus-one", True),         # +1 with crash-stop members: the destination is gone
    ("fail-plus-one-split", False),  # +1 and a destination that comes back
])
def test_section_2_1_question_for_any_size(question: str, proved: bool) -> None:
    """Is +2 needed, or does +1 do? One version names one table (PT-MASTER-ONLY) for any size
    with +2; with +1 only while a failed commit's destination never comes back (the bounded
    counterexample is in test_failure_plus_one_breaks_master_only_plus_two_does_not)."""
    result = prove(mg.system(question), "PT-MASTER-ONLY",
                   timeout_ms=60_000 if proved else 20_000)
    assert (result.verdict == "proved") is proved, result.reason
    if not proved:
        assert "after destination_split" in result.reason


def test_variants_name_the_specs_refimpl_says_they_break() -> None:
    from partsafe.refimpl.partition_service import VARIANT_TABLE
    for name, spec in mg.VARIANTS.items():
        assert VARIANT_TABLE[name].breaks == spec


def test_specs_are_the_properties() -> None:
    assert {p.spec for p in mg.system().properties} == set(mg.SPECS)
    assert mg.system("fixed", members=2).sizes[mg.M] == 2


@pytest.mark.parametrize(("variant", "spec", "depth"), [
    ("hz37-local-promotion", "PT-MASTER-ONLY", 3),
    ("hz37-independent-commit", "MIG-COMMIT-ORDER", 6),
])
def test_bounded_counterexample_replays_on_the_reference_implementation(
        variant: str, spec: str, depth: int) -> None:
    found = bmc(mg.system(variant), [spec], SIZES, depth)[spec]
    doc = to_artifact("migration", variant, spec, found.trace)
    assert (doc["found_by"], doc["spec"]) == ("prove", spec)
    _, trace, message = artifact.replay(doc)
    assert message is not None  # the explorer judges the same spec broken at the end
    assert len(trace.steps) >= 2


def test_stale_master_counterexample_through_a_commit_replays() -> None:
    """The stale-master flaw through a commit: the destination takes the commit's table, the
    master crashes, and the new master publishes its own older table (the zoo's counterexample
    of `partsafe check migration --variant hz37-stale-master-table`). The shortest symbolic run
    changes the table outside a migration (``update_table``), which the reference's master does
    only when membership changes, so no run follows it: bounded model checking is restricted
    here to the steps the reference takes without a membership change."""
    system = mg.system("hz37-stale-master-table")
    system = dataclasses.replace(system, actions=tuple(
        a for a in system.actions if a.name not in ("update_table", "fail")))
    found = bmc(system, ["PT-MOST-RECENT"], {**SIZES, "Partition": 3}, 7)["PT-MOST-RECENT"]
    assert [s["action"] for s in found.trace[1:]] == [
        "start", "source_accepts", "destination_accepts", "commit_to_destination",
        "master_crash", "destination_commits", "finish_recovery"]
    doc = to_artifact("migration", "hz37-stale-master-table", "PT-MOST-RECENT", found.trace)
    _, _, message = artifact.replay(doc)
    assert message is not None and "older than the one" in message


#: the differential scopes: a crash and a shutdown over one partition (migrations of every
#: type, failures, recoveries, repartitioning), and a graceful leave over two partitions
CRASH_SCOPE = {"members": 3, "joiners": 0, "partitions": 1, "backups": 1, "crashes": 1,
               "joins": 0, "shutdowns": 1}
LEAVE_SCOPE = {**CRASH_SCOPE, "partitions": 2, "crashes": 0}


@pytest.mark.parametrize(("variant", "scope"), [
    ("fixed", CRASH_SCOPE),
    ("hz37-independent-commit", LEAVE_SCOPE),
])
def test_every_explored_transition_satisfies_its_transition_formula(
        variant: str, scope: dict[str, int]) -> None:
    result = differential("migration", variant, scope, positions=4)
    assert result.complete
    assert result.states > 100
    assert result.mismatches == []


def test_differential_catches_a_transition_formula_that_is_too_strict() -> None:
    """A destination takes the completed list the source's data carries at its own table
    version (000 §2.1: it finalises what it finds there); a ``receive`` that requires a
    strictly newer table does not allow the reference's step."""
    original = mg.system_for

    def strict(variant: str, scope):  # type: ignore[no-untyped-def]
        system = original(variant, scope)
        receive = next(a for a in system.actions if a.name == "receive")
        tighter = dataclasses.replace(receive, guard=lambda f, a: z3.And(
            receive.guard(f, a),
            f.pub_version[a["sender"]][a["k"]] > f.version[a["member"]]))
        return dataclasses.replace(system, actions=tuple(
            tighter if x is receive else x for x in system.actions))
    try:
        mg.system_for = strict  # type: ignore[assignment]
        result = differential("migration", "fixed", LEAVE_SCOPE, positions=4)
    finally:
        mg.system_for = original  # type: ignore[assignment]
    assert any("receive" in m for m in result.mismatches)

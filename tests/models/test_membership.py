"""The 002 membership protocol as a symbolic system (models/membership.py): bounded model checking
finds the historical flaw and replays it on the reference implementation, the fixed design is
proved for any number of members, a proof without its lemma fails, and the explorer's
transitions satisfy the transition formulas (the differential test, both ways)."""

from __future__ import annotations

import dataclasses

import pytest
import z3

from partsafe.checker import artifact
from partsafe.checker.symbolic import differential, to_artifact
from partsafe.models import membership
from partsafe.models.bmc import bmc
from partsafe.models.induction import prove


def test_unversioned_lists_break_view_order_in_three_steps() -> None:
    system = membership.system("hz38-unordered-members")
    found = bmc(system, ["MEM-VIEW-ORDER"], {}, 4)["MEM-VIEW-ORDER"]
    assert found.verdict == "counterexample"
    assert found.depth == 3
    assert [s["action"] for s in found.trace[1:]] == ["remove", "apply", "apply"]
    # the member applies the older list (position 1) after the newer one (position 2)
    assert found.trace[2]["params"]["k"] > found.trace[3]["params"]["k"]


def test_fixed_design_keeps_view_order_to_the_same_depth() -> None:
    system = membership.system("fixed")
    found = bmc(system, ["MEM-VIEW-ORDER", "MEM-VIEW-INTEGRITY"], {}, 4)
    assert {r.verdict for r in found.values()} == {"bounded"}


def test_bounded_counterexample_replays_on_the_reference_implementation() -> None:
    system = membership.system("hz38-unordered-members")
    found = bmc(system, ["MEM-VIEW-ORDER"], {}, 3)["MEM-VIEW-ORDER"]
    doc = to_artifact("membership", "hz38-unordered-members", "MEM-VIEW-ORDER", found.trace)
    assert (doc["found_by"], doc["spec"]) == ("prove", "MEM-VIEW-ORDER")
    _, trace, message = artifact.replay(doc)
    assert message is not None  # the explorer judges MEM-VIEW-ORDER broken at the end
    assert len(trace.steps) >= 3


@pytest.mark.parametrize("spec", ["MEM-VIEW-ORDER", "MEM-VERSION", "MEM-VIEW-INTEGRITY",
                                  "MEM-MASTER-ONLY"])
def test_fixed_design_proved_for_any_number_of_members(spec: str) -> None:
    result = prove(membership.system("fixed"), spec, timeout_ms=60_000)
    assert result.verdict == "proved", result.reason
    assert result.slowest < 60


def test_view_order_needs_its_lemma_on_applied_versions() -> None:
    system = membership.system("fixed")
    prop = system.property("MEM-VIEW-ORDER")
    weaker = dataclasses.replace(prop, lemmas=tuple(n for n in prop.lemmas
                                                    if n != "applied-version"))
    system.properties = tuple(weaker if p is prop else p for p in system.properties)
    result = prove(system, "MEM-VIEW-ORDER", timeout_ms=2_000)
    # Z3 finds no model of the quantified hypotheses in time: never "proved"
    assert result.verdict in ("failed", "unknown")
    assert "MEM-VIEW-ORDER on apply" in result.reason


def test_unversioned_lists_cannot_be_proved() -> None:
    result = prove(membership.system("hz38-unordered-members"), "MEM-VIEW-ORDER",
                   timeout_ms=2_000)
    assert result.verdict in ("failed", "unknown")


@pytest.mark.parametrize(("variant", "scope"), [
    ("fixed", {"members": 2, "joiners": 1, "crashes": 1, "joins": 1, "suspicions": 0}),
    ("hz38-unordered-members", {"members": 3, "joiners": 0, "crashes": 0, "joins": 0,
                                "suspicions": 1, "publishes": 1}),
    # claims: a suspicion that starts one, a last answer collected as the claimant publishes
    ("hz38-stale-master-list", {"members": 3, "joiners": 0, "crashes": 1, "joins": 0,
                                "suspicions": 1}),
])
def test_every_explored_transition_satisfies_its_transition_formula(
        variant: str, scope: dict[str, int]) -> None:
    result = differential("membership", variant, scope)
    assert result.complete
    assert result.states > 100
    assert result.mismatches == []


def test_differential_catches_a_transition_formula_that_is_too_strict() -> None:
    """A claim answered after the claimant published is a step of the reference
    implementation; an `accept` that requires a claim in progress does not allow it."""
    system = membership.system("fixed")
    accept = next(a for a in system.actions if a.name == "accept")
    strict = dataclasses.replace(accept, guard=lambda f, a: z3.And(
        accept.guard(f, a), f.claiming[a["p"]]))
    original = membership.system_for
    try:
        membership.system_for = lambda variant, scope: dataclasses.replace(  # type: ignore
            original(variant, scope),
            actions=tuple(strict if a.name == "accept" else a for a in system.actions))
        result = differential("membership", "fixed", {"members": 3, "joiners": 0,
                                                      "crashes": 1, "joins": 0,
                                                      "suspicions": 1})
    finally:
        membership.system_for = original
    assert any("accept" in m for m in result.mismatches)


def _without(system, action: str, keep):  # type: ignore[no-untyped-def]
    """`system` with `action`'s guard weakened to `keep(frame, params)`."""
    old = next(a for a in system.actions if a.name == action)
    new = dataclasses.replace(old, guard=keep)
    return dataclasses.replace(system, actions=tuple(new if a is old else a
                                                     for a in system.actions))


@pytest.mark.parametrize(("spec", "action", "guard"), [
    # a list that leaves the member out is applied (the self-check dropped)
    ("MEM-VIEW-INTEGRITY", "apply", lambda f, a: z3.And(
        f.alive[a["p"]], f.pub[a["m"]][a["k"]], a["p"] != a["m"],
        f.pubver[a["m"]][a["k"]] > f.ver[a["p"]])),
    # any list from the master is applied, whatever its version
    ("MEM-VERSION", "apply", lambda f, a: z3.And(
        f.alive[a["p"]], f.pub[a["m"]][a["k"]], a["p"] != a["m"], f.publist[a["m"]][a["k"]][a["p"]],
        z3.Implies(f.joined[a["p"]], f.master[a["p"]] == a["m"]))),
    # a member that is not the master of its list removes another
    ("MEM-MASTER-ONLY", "remove", lambda f, a: z3.And(
        f.alive[a["m"]], f.joined[a["m"]], f.view[a["m"]][a["q"]], a["q"] != a["m"])),
])
def test_each_symbolic_spec_catches_its_violation(spec: str, action: str, guard) -> None:  # type: ignore[no-untyped-def]
    weakened = _without(membership.system("fixed"), action, guard)
    assert bmc(weakened, [spec], {}, 3)[spec].verdict == "counterexample"


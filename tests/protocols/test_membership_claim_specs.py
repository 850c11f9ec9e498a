"""The two specs of the mastership claimant's side (002 Mastership Claim Process): the list a
claim publishes (MEM-CLAIM-RESULT) and the members a claimant asks (MEM-CLAIM-DISCOVER). Each
breaks on a one-token mutant of `Membership._on_claim_response` (the mutants of the mutation
benchmark's triage) and holds on `fixed`; the release rule hz39-claim-latest-view breaks
MEM-CLAIM-RESULT."""

from __future__ import annotations

import inspect
import sys
import textwrap
from collections.abc import Callable
from typing import Any

import pytest

from partsafe.checker.engine.bfs import Result, explore
from partsafe.checker.engine.model import Model
from partsafe.checker.protocols import catalog
from partsafe.refimpl.membership import Membership

MEMBERSHIP = catalog.get("membership")


def check(profile: str = "fixed", **scope: int) -> tuple[Model[Any], Result]:
    model = MEMBERSHIP.make("fixed", scope, profile)
    return model, explore(model, action_kinds=MEMBERSHIP.action_kinds)


def mutant(method: Callable[..., Any], old: str, new: str) -> Callable[..., Any]:
    """`method` with the one occurrence of `old` in its source replaced by `new`."""
    source = textwrap.dedent(inspect.getsource(method))
    assert source.count(old) == 1, old
    namespace = dict(vars(sys.modules[method.__module__]))
    exec(compile("from __future__ import annotations\n" + source.replace(old, new),
                 f"<mutant of {method.__qualname__}>", "exec"), namespace)
    return namespace[method.__name__]  # type: ignore[no-any-return]


def steps_of(model: Model[Any], result: Result, spec: str) -> tuple[list[str], str]:
    (v,) = [v for v in result.violations if v.spec == spec]
    return [model.describe_action(a)[0] for a, _ in v.trace.steps], v.message


def test_the_model_checks_the_two_specs() -> None:
    specs = {(p.spec, p.kind) for p in MEMBERSHIP.make("fixed").properties()}
    assert {("MEM-CLAIM-RESULT", "always"), ("MEM-CLAIM-DISCOVER", "always")} <= specs


# --- MEM-CLAIM-RESULT -----------------------------------------------------------------------

#: A crashes, B claims towards C
RESULT_SCOPE = {"members": 3, "joiners": 0, "crashes": 1, "joins": 0, "suspicions": 0}


def test_claim_result_breaks_when_no_acceptance_is_kept(monkeypatch: pytest.MonkeyPatch) -> None:
    """refimpl/membership.py `claim.accepted | {src}` -> `claim.accepted - {src}`: every claim
    publishes its claimant alone."""
    monkeypatch.setattr(Membership, "_on_claim_response", mutant(
        Membership._on_claim_response, "accepted=claim.accepted | {src}",
        "accepted=claim.accepted - {src}"))
    model, result = check(**RESULT_SCOPE)
    steps, message = steps_of(model, result, "MEM-CLAIM-RESULT")
    assert steps == ["crash A", "suspect: B suspects A", "suspect: C suspects A",
                     "deliver MastershipClaim B→C",
                     "deliver ClaimResponse accepted v=3 [A,B,C] C→B"]
    assert message == ("B publishes {v=4, [B]} at the end of its mastership claim without C, "
                       "whose acceptance it counted")


# --- MEM-CLAIM-DISCOVER ---------------------------------------------------------------------

#: D joins, C learns of it, A crashes before B does: B discovers D in C's answer
DISCOVER_SCOPE = {"suspicions": 0}


def test_claim_discover_breaks_when_a_younger_member_is_not_asked(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """refimpl/membership.py `if m != node and ...` -> `if m <= node and ...`: a claimant asks a
    member it discovers only if it sorts before itself."""
    monkeypatch.setattr(Membership, "_on_claim_response", mutant(
        Membership._on_claim_response, "if m != node and m not in st.suspects:",
        "if m <= node and m not in st.suspects:"))
    model, result = check(**DISCOVER_SCOPE)
    steps, message = steps_of(model, result, "MEM-CLAIM-DISCOVER")
    assert steps == ["join D", "deliver JoinRequest D→A",
                     "deliver MembersUpdate v=4 [A,B,C,D] A→C", "crash A",
                     "suspect: B suspects A", "suspect: C suspects A",
                     "deliver MastershipClaim B→C",
                     "deliver ClaimResponse accepted v=4 [A,B,C,D] C→B"]
    assert message == ("B finishes its mastership claim with {v=5, [B, C]} without asking D, "
                       "which the later list [A, B, C, D] C accepted with names and B does not "
                       "suspect")


# --- both hold on fixed; the released claim ----------------------------------------------------


@pytest.mark.parametrize("scope", [RESULT_SCOPE, {**RESULT_SCOPE, "suspicions": 1},
                                   DISCOVER_SCOPE,
                                   {"members": 4, "joiners": 0, "joins": 0}])
def test_both_hold_on_fixed(scope: dict[str, int]) -> None:
    """The default scope is the slow test of test_membership_model.py; these reach a claim
    that discovers a member (suspicions=0) and one whose answers disagree (4 members)."""
    _, result = check(**scope)
    assert result.violations == [] and result.incomplete_reason is None


def test_the_released_claim_leaves_out_an_acceptor_missing_from_the_latest_view() -> None:
    """hz39-claim-latest-view (3.9 to 5.x, MembershipManager.decideNewMembersView): A removes C
    on a false suspicion at v5, which only D learns; B claims from v4, C accepts with v4, D with
    v5; B publishes the members of the latest view that accepted, without C, which follows it.
    002 puts every member that accepted into the list (fixed: v6 [B, C, D])."""
    model, result = check("hz-3.9", members=4, joiners=0, joins=0)
    steps, message = steps_of(model, result, "MEM-CLAIM-RESULT")
    assert steps == ["false-suspect: A suspects C", "deliver MembersUpdate v=5 [A,B,D] A→D",
                     "suspect: C suspects A", "crash A", "suspect: B suspects A",
                     "deliver MastershipClaim B→C",
                     "deliver ClaimResponse accepted v=4 [A,B,C,D] C→B",
                     "suspect: D suspects A", "deliver MastershipClaim B→D",
                     "deliver ClaimResponse accepted v=5 [A,B,D] D→B"]
    assert message == ("B publishes {v=6, [B, D]} at the end of its mastership claim without C, "
                       "whose acceptance it counted")

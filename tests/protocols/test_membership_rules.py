"""The release rules of the membership protocol (refimpl/membership.py's `RULE_TABLE`): from one
concrete state, the code's rule and `fixed` reach different next states, and the profiles that
name each rule are the release lines whose code has it."""

from __future__ import annotations

import pytest

from partsafe.refimpl import profiles
from partsafe.refimpl.actor import Step
from partsafe.refimpl.membership import (
    RULE_TABLE,
    VARIANT_TABLE,
    Claim,
    ClaimRefused,
    ClaimResponse,
    MastershipClaim,
    Membership,
    MemberState,
    MembersUpdate,
    SplitBrainJoin,
)
from partsafe.traces import events as ev

ABC, ABCD = ("A", "B", "C"), ("A", "B", "C", "D")
LATEST = "hz39-claim-latest-view"
ACCEPTS = "hz39-claim-accepts-suspected"
MERGE = "hz39-split-brain-merge"
VIEW = "hz39-explicit-suspicion-view"


def member(version: int, members: tuple[str, ...], master: str, suspects: str = "",
           claim: Claim | None = None) -> MemberState:
    return MemberState(version=version, members=members, master=master,
                       suspects=frozenset(suspects), claim=claim, joined=True)


def new_state(step: Step) -> MemberState:
    assert isinstance(step.state, MemberState)
    return step.state


def test_every_rule_cites_a_source_and_says_what_fixed_does() -> None:
    assert set(RULE_TABLE) == {LATEST, ACCEPTS, MERGE, VIEW}
    for rule in RULE_TABLE.values():
        assert rule.doc and rule.fixed and rule.sources
        for source in rule.sources:
            assert source.repo == "hazelcast/hazelcast"
            assert source.path.endswith((".java",))
            assert source.method.split(".")[0] in ("MembershipManager", "ClusterServiceImpl",
                                                   "SplitBrainMergeValidationOp",
                                                   "ClusterHeartbeatManager")
    # the claim's rules appear in 3.9: each cites the v3.9 tag; the merge's version check was
    # read at the 4.1 branch point and in 5.x (3.12.2 prints it in the lab's runs)
    for name in (LATEST, ACCEPTS):
        assert any(s.ref == "v3.9" for s in RULE_TABLE[name].sources)


def test_the_release_profiles_name_the_rules_of_their_code() -> None:
    for name in ("hz-3.9", "hz-4.1", "hz-5"):
        assert profiles.get(name).rules_of("membership") == {LATEST, ACCEPTS, MERGE, VIEW}
    # 3.7 and 3.8: no list versions, slaves remove on their own, no claim (002 Background)
    assert profiles.get("hz-3.7").rules_of("membership") == {
        "hz38-unordered-members", "hz38-stale-master-list", "hz38-local-removal"}
    assert profiles.get("hz-3.7").rules_of("membership") <= set(VARIANT_TABLE)
    assert profiles.get("design").rules_of("membership") == frozenset()
    assert profiles.get("fixed").rules_of("membership") == frozenset()


def test_rules_are_off_unless_named() -> None:
    p = Membership()
    assert p.rules == frozenset() and not p.latest_view and not p.accepts_suspected
    q = Membership(rules=(LATEST, ACCEPTS))
    assert q.rules == {LATEST, ACCEPTS} and q.latest_view and q.accepts_suspected
    with pytest.raises(ValueError, match="unknown membership rule 'hz99-x'"):
        Membership(rules=("hz99-x",))


# --- hz39-claim-latest-view: MembershipManager.decideNewMembersView ----------------------------


def claimant_b(p: Membership) -> MemberState:
    """B holds v5 [A, B, C] (A removed D at v5), suspects A and starts its claim: it asks C."""
    b = member(5, ABC, "A")
    step = p.on_suspect("B", b, "A", "crashed")
    assert step.sends == (("C", MastershipClaim()),)
    return new_state(step)


def test_latest_view_learns_members_only_from_a_strictly_later_view() -> None:
    """C lags at v4 [A, B, C, D]: D's removal (v5) has not reached it. fixed learns D from C's
    answer and asks it; the code ignores a view that is not later than B's own v5."""
    fixed, code = Membership(members=4, joiners=0), Membership(members=4, joiners=0,
                                                               rules=(LATEST,))
    answer = ClaimResponse(True, 4, ABCD)
    step = fixed.on_message("B", claimant_b(fixed), "C", answer)
    assert step.sends == (("D", MastershipClaim()),)
    claim = new_state(step).claim
    assert claim is not None and claim.known == ABCD and claim.waiting == {"D"}

    b = claimant_b(code)
    assert b.claim is not None and b.claim.latest == ("B", "C")
    step = code.on_message("B", b, "C", answer)
    # nothing left to ask: B publishes at once, without D
    assert step.sends == (("C", MembersUpdate(6, ("B", "C"))),)
    assert new_state(step).members == ("B", "C")
    assert ev.MastershipClaimed(member="B", version=6, members=("B", "C")) in step.events


def test_latest_view_leaves_out_an_accepter_the_latest_view_removed() -> None:
    """B holds v4 [A, B, C, D]; C has v5 [A, B, C] (A removed D), D still v4. Both accept. fixed
    publishes every accepter, D included; the code publishes the latest view's: B, C."""
    claim = Claim(waiting=frozenset({"C"}), retry=frozenset(), accepted=frozenset({"D"}),
                  known=ABCD, best_version=4, latest=("B", "C", "D"))
    b = member(4, ABCD, "B", "A", claim)
    answer = ClaimResponse(True, 5, ABC)
    fixed = Membership(members=4, joiners=0).on_message("B", b, "C", answer)
    code = Membership(members=4, joiners=0, rules=(LATEST,)).on_message("B", b, "C", answer)
    assert new_state(fixed).members == ("B", "C", "D") and new_state(fixed).version == 6
    assert new_state(code).members == ("B", "C") and new_state(code).version == 6
    assert new_state(fixed) != new_state(code)
    # D accepted, follows B and is left out: B's list never reaches it
    assert ("D", MembersUpdate(6, ("B", "C"))) not in code.sends


def test_latest_view_takes_a_later_view_from_the_claimant_on() -> None:
    """A later answer replaces the latest view by its members from the claimant on (the answer
    is MemberMap.toTailMembersView), and its unasked members are asked."""
    p = Membership(members=4, joiners=0, rules=(LATEST,))
    b = claimant_b(p)
    step = p.on_message("B", b, "C", ClaimResponse(True, 6, ("A", "B", "C", "D")))
    claim = new_state(step).claim
    assert claim is not None
    assert (claim.best_version, claim.latest, claim.waiting) == (6, ("B", "C", "D"), {"D"})
    assert step.sends == (("D", MastershipClaim()),)
    assert Membership(members=4, joiners=0).describe("B", new_state(step))["claim"] == {
        "waiting": ["D"], "retry": [], "accepted": ["C"], "known": ["A", "B", "C", "D"],
        "best_version": 6}
    assert p.describe("B", new_state(step))["claim"]["latest"] == ["B", "C", "D"]  # type: ignore[index]


# --- hz39-claim-accepts-suspected: ClusterServiceImpl.handleMastershipClaim -------------------


def test_accepts_a_suspected_candidate_not_older_than_its_master() -> None:
    """C follows A and suspects A and B. fixed tells B "not yet" (it suspects B); the code lifts
    its suspicion of B and follows it (B is younger than C's master A)."""
    c = member(3, ABC, "A", "AB")
    fixed = Membership(members=3, joiners=0).on_message("C", c, "B", MastershipClaim())
    assert fixed == Step(c, (("B", ClaimResponse(False, 3, ABC)),))
    step = Membership(members=3, joiners=0, rules=(ACCEPTS,)).on_message(
        "C", c, "B", MastershipClaim())
    assert new_state(step) == member(3, ABC, "B", "A")
    assert step.sends == (("B", ClaimResponse(True, 3, ABC)),)
    assert step.events == (ev.SuspicionRemoved(member="C", suspect="B"),
                           ev.MastershipClaimAccepted(member="C", candidate="B", version=3))


def test_refuses_for_good_a_suspected_candidate_older_than_its_master() -> None:
    """D accepted C's claim (it suspects A and B); B's claim reaches it: fixed says "not yet",
    the code refuses for good (clearMemberSuspicion: B is before D's master C)."""
    d = member(4, ABCD, "C", "AB")
    fixed = Membership(members=4, joiners=0).on_message("D", d, "B", MastershipClaim())
    assert fixed == Step(d, (("B", ClaimResponse(False, 4, ABCD)),))
    code = Membership(members=4, joiners=0, rules=(ACCEPTS,))
    assert code.on_message("D", d, "B", MastershipClaim()) == Step(d, (("B", ClaimRefused()),))


def test_accepts_while_following_another_candidate() -> None:
    """D follows candidate B and suspects A and B; C claims. fixed: "not yet" (D follows another
    candidate); the code accepts C: every member older than C is suspected."""
    d = member(4, ABCD, "B", "AB")
    fixed = Membership(members=4, joiners=0).on_message("D", d, "C", MastershipClaim())
    assert fixed.sends == (("C", ClaimResponse(False, 4, ABCD)),)
    step = Membership(members=4, joiners=0, rules=(ACCEPTS,)).on_message(
        "D", d, "C", MastershipClaim())
    assert new_state(step).master == "C"
    assert step.sends == (("C", ClaimResponse(True, 4, ABCD)),)


def test_the_code_says_not_yet_or_refuses_as_handle_mastership_claim() -> None:
    p = Membership(members=4, joiners=0, rules=(ACCEPTS,))
    # an older member not suspected: RetryableHazelcastException, "not yet"
    c = member(4, ABCD, "A", "A")
    assert p.on_message("C", c, "D", MastershipClaim()).sends == (
        ("D", ClaimResponse(False, 4, ABCD)),)
    # a claimant (or the master) refuses: isMaster
    claiming = member(4, ABCD, "C", "AB", Claim(frozenset({"D"}), frozenset(), frozenset(),
                                                 ABCD, 4))
    assert p.on_message("C", claiming, "D", MastershipClaim()).sends == (("D", ClaimRefused()),)
    # a candidate it does not know
    assert p.on_message("C", member(3, ABC, "A", "AB"), "D", MastershipClaim()).sends == (
        ("D", ClaimRefused()),)


def test_a_refused_claimant_stops_waiting_for_that_member() -> None:
    p = Membership(members=3, joiners=0, rules=(ACCEPTS,))
    b = new_state(p.on_suspect("B", member(3, ABC, "A"), "A", "crashed"))
    step = p.on_message("B", b, "C", ClaimRefused())
    assert new_state(step).members == ("B",) and new_state(step).claim is None
    # the new list first, then the claim's line (MembershipManager: updateMembers, then
    # "Mastership is claimed with")
    assert [e.TYPE for e in step.events] == ["member_list_installed", "mastership_claimed"]
    assert step.events[1] == ev.MastershipClaimed(member="B", version=4, members=("B",))
    # a refusal from a member it is not waiting for changes nothing
    assert p.on_message("B", b, "A", ClaimRefused()) == Step(b)
    assert p.describe_message(ClaimRefused()) == "ClaimRefused"


# --- hz39-split-brain-merge: MembershipManager.verifySplitBrainMergeMemberListVersion -----------


def test_a_master_asks_each_address_outside_its_list_whether_to_merge() -> None:
    p = Membership(members=3, joiners=0, rules=(MERGE,), merges=True)
    b = member(4, ("B",), "B")  # B, removed, claimed a cluster of its own
    assert ("split-brain-join", "A") in p.timers("B", b)
    assert ("split-brain-join", "C") in p.timers("B", b)
    assert p.on_timer("B", b, ("split-brain-join", "A")) == \
        Step(b, (("A", SplitBrainJoin(4, 1)),))
    # without the rule (002 runs one cluster) no master looks for another, nor with the search
    # off (the default scope: `merges`)
    assert not any(t[0] == "split-brain-join"
                   for t in Membership(3, 0, merges=True).timers("B", b))
    assert not any(t[0] == "split-brain-join"
                   for t in Membership(3, 0, rules=(MERGE,)).timers("B", b))


def test_the_larger_side_raises_its_version_past_the_merging_side() -> None:
    p = Membership(members=3, joiners=0, rules=(MERGE,))
    a = member(4, ("A", "C"), "A")
    step = p.on_message("A", a, "B", SplitBrainJoin(5, 1))
    assert new_state(step).version == 6 and new_state(step).members == ("A", "C")
    assert step.sends == (("C", MembersUpdate(6, ("A", "C"))),)
    assert step.events == (ev.MemberListInstalled(member="A", version=6, members=("A", "C"),
                                                  master="A"),)
    # a version not behind, a larger asker, or a member that is not the master: nothing
    assert p.on_message("A", a, "B", SplitBrainJoin(4, 1)) == Step(a)
    assert p.on_message("A", a, "B", SplitBrainJoin(5, 3)) == Step(a)
    assert p.on_message("C", member(4, ("A", "C"), "A"), "B", SplitBrainJoin(5, 1)).sends == ()

"""The 002 membership handlers, called directly: each test delivers inputs by hand."""

from __future__ import annotations

import json

import pytest

from partsafe.refimpl.actor import Step
from partsafe.refimpl.membership import (
    VARIANT_DOCS,
    VARIANTS,
    Claim,
    ClaimResponse,
    ExplicitSuspicion,
    ExplicitSuspicionTrigger,
    HeartbeatComplaint,
    JoinRequest,
    MasterAddress,
    MastershipClaim,
    Membership,
    MemberState,
    MembersUpdate,
)
from partsafe.traces import events as ev

ABCD = ("A", "B", "C", "D")
ALL6 = ("A", "B", "C", "D", "E", "F")


def state(proto: Membership, node: str) -> MemberState:
    st = proto.initial(node)
    assert st is not None
    return st


def new_state(step: Step) -> MemberState:
    assert isinstance(step.state, MemberState)
    return step.state


def installed(node: str, version: int | None, members: tuple[str, ...], master: str) -> ev.Event:
    return ev.MemberListInstalled(member=node, version=version, members=members, master=master)


# --- construction ------------------------------------------------------------------------------


def test_nodes_initial_states_and_symmetry() -> None:
    p = Membership(members=3, joiners=2)
    assert p.name == "membership"
    assert p.variant == "fixed"
    assert p.nodes == ("A", "B", "C", "D", "E")
    assert p.interchangeable == (frozenset({"D", "E"}),)
    assert p.initial("B") == MemberState(
        version=3, members=("A", "B", "C"), master="A", suspects=frozenset(), claim=None,
        joined=True,
    )
    assert p.initial("D") is None
    assert Membership(members=3, joiners=1).interchangeable == ()
    assert Membership(members=2, joiners=0).nodes == ("A", "B")
    assert state(Membership(variant="hz38-unordered-members"), "A").version is None


def test_bad_arguments_raise() -> None:
    with pytest.raises(ValueError, match="members must be at least 1"):
        Membership(members=0)
    with pytest.raises(ValueError, match="joiners must not be negative"):
        Membership(joiners=-1)
    with pytest.raises(ValueError, match="unknown membership variant 'hz99'"):
        Membership(variant="hz99")
    with pytest.raises(ValueError, match="at most 26 nodes"):
        Membership(members=20, joiners=7)


def test_variant_catalogue() -> None:
    assert VARIANTS[0] == "fixed"
    assert set(VARIANT_DOCS) == set(VARIANTS)
    assert all("002" in doc for doc in VARIANT_DOCS.values())
    for v in VARIANTS:
        assert Membership(variant=v).variant == v


def test_fieldless_messages_are_distinct() -> None:
    assert JoinRequest() == JoinRequest()
    assert JoinRequest() != MastershipClaim()
    assert MastershipClaim() != ExplicitSuspicion(None)
    assert len({JoinRequest(), MastershipClaim(), ExplicitSuspicion(None), JoinRequest()}) == 3


# --- 002 Mastership Claim Process: the six-member example ---------------------------------------


def test_six_member_example_of_002() -> None:
    p = Membership(members=6, joiners=0)
    a, b, c, d, e, f = (state(p, n) for n in ALL6)
    assert a.version == 6 and c.version == 6 and e.version == 6 and f.version == 6
    b = b._replace(version=4, members=ABCD, suspects=frozenset({"C"}))
    d = d._replace(version=5, members=ALL6[:5])

    # A crashes; D and E notice it first (they must suspect A to accept B's claim)
    d = new_state(p.on_suspect("D", d, "A", "crashed"))
    e = new_state(p.on_suspect("E", e, "A", "crashed"))
    assert d.claim is None and d.master == "A" and e.claim is None

    # B's failure detector suspects A: B claims, but not towards C, which it suspects
    step = p.on_suspect("B", b, "A", "crashed")
    b = new_state(step)
    assert step.events == (
        ev.MemberSuspected(member="B", suspect="A", reason="crashed"),
        ev.MastershipClaimStarted(member="B", suspected=("A",)),
        ev.MastershipClaimSent(member="B", target="D"),
    )
    assert step.sends == (("D", MastershipClaim()),)
    assert b.master == "B"
    assert b.claim == Claim(
        waiting=frozenset({"D"}), retry=frozenset(), accepted=frozenset(), known=ABCD,
        best_version=4,
    )

    # D accepts and answers with {v=5, [A, B, C, D, E]}: B discovers E
    step = p.on_message("D", d, "B", MastershipClaim())
    d = new_state(step)
    assert d.master == "B"
    assert step.sends == (("B", ClaimResponse(True, 5, ALL6[:5])),)
    assert step.events == (ev.MastershipClaimAccepted(member="D", candidate="B", version=5),)
    step = p.on_message("B", b, "D", step.sends[0][1])
    b = new_state(step)
    assert step.sends == (("E", MastershipClaim()),)
    assert step.events == (
        ev.MastershipAcceptanceReceived(member="B", sender="D", version=5, members=ALL6[:5]),
        ev.MastershipClaimSent(member="B", target="E"),
    )
    assert b.claim is not None
    assert b.claim.known == ALL6[:5] and b.claim.best_version == 5
    assert b.claim.waiting == {"E"} and b.claim.accepted == {"D"}

    # E accepts with {v=6, [A..F]}: B discovers F
    step = p.on_message("E", e, "B", MastershipClaim())
    e = new_state(step)
    assert step.sends == (("B", ClaimResponse(True, 6, ALL6)),)
    step = p.on_message("B", b, "E", step.sends[0][1])
    b = new_state(step)
    assert step.sends == (("F", MastershipClaim()),)
    assert step.events == (
        ev.MastershipAcceptanceReceived(member="B", sender="E", version=6, members=ALL6),
        ev.MastershipClaimSent(member="B", target="F"),
    )
    assert b.claim is not None
    assert b.claim.known == ALL6 and b.claim.best_version == 6
    assert b.claim.waiting == {"F"} and b.claim.accepted == {"D", "E"}
    assert "F" in p.monitored("B", b)

    # F never answers; B's failure detector suspects it and B finalizes {v=7, [B, D, E]}
    step = p.on_suspect("B", b, "F", "no-heartbeat")
    b = new_state(step)
    # as MembershipManager prints them: the new list (updateMembers), then the claim's line
    assert step.events == (
        ev.MemberSuspected(member="B", suspect="F", reason="no-heartbeat"),
        installed("B", 7, ("B", "D", "E"), "B"),
        ev.MastershipClaimed(member="B", version=7, members=("B", "D", "E")),
    )
    assert b == MemberState(
        version=7, members=("B", "D", "E"), master="B", suspects=frozenset(), claim=None,
        joined=True,
    )
    update = MembersUpdate(7, ("B", "D", "E"))
    assert step.sends == (("D", update), ("E", update))

    for node, st in (("D", d), ("E", e)):
        step = p.on_message(node, st, "B", update)
        assert step.events == (installed(node, 7, ("B", "D", "E"), "B"),)
        assert step.sends == ()
        got = new_state(step)
        assert (got.version, got.members, got.master) == (7, ("B", "D", "E"), "B")
        assert got.suspects == frozenset()

    # C and F, left out, are told to go their own way when they heartbeat the new master
    assert p.on_heartbeat("B", b, "F").sends == (("F", ExplicitSuspicion(None)),)


# --- joins, removals, updates ------------------------------------------------------------------


def test_join() -> None:
    p = Membership(members=3, joiners=1)
    a, b = state(p, "A"), state(p, "B")
    step = p.on_join("D")
    d = new_state(step)
    assert d == MemberState(0, (), "A", frozenset(), None, False)
    assert step.sends == (("A", JoinRequest()),)
    assert tuple(p.timers("D", d)) == (("join",), ("join-timeout",))
    assert p.on_timer("D", d, ("join",)).sends == (("A", JoinRequest()),)
    assert p.is_timeout(("join-timeout",)) and not p.is_timeout(("join",))
    retarget = p.on_timer("D", d, ("join-timeout",))
    assert retarget.sends == (("B", JoinRequest()),) and new_state(retarget).master == "B"
    assert p.monitored("D", d) == () and p.heartbeat_targets("D", d) == frozenset()

    # a slave answers with its master's address; the joiner asks the master then
    assert p.on_message("B", b, "D", JoinRequest()) == Step(b, (("D", MasterAddress("A")),))
    assert new_state(p.on_message("D", new_state(retarget), "B", MasterAddress("A"))).master == "A"
    # the master accepts at version + 1
    step = p.on_message("A", a, "D", JoinRequest())
    a = new_state(step)
    assert (a.version, a.members) == (4, ABCD)
    assert step.events == (
        ev.MemberJoined(member="A", joined="D", version=4),
        installed("A", 4, ABCD, "A"),
    )
    update = MembersUpdate(4, ABCD)
    assert step.sends == (("B", update), ("C", update), ("D", update))
    # a repeated request from a member is not processed again
    assert p.on_message("A", a, "D", JoinRequest()) == Step(a)

    step = p.on_message("D", d, "A", update)
    d = new_state(step)
    assert d == MemberState(4, ABCD, "A", frozenset(), None, True)
    assert step.events == (installed("D", 4, ABCD, "A"),)
    assert tuple(p.timers("D", d)) == ()
    assert p.heartbeat_targets("D", d) == {"A", "B", "C"}
    b = new_state(p.on_message("B", b, "A", update))
    assert (b.version, b.members) == (4, ABCD)


def test_joiner_rejects_list_from_non_oldest() -> None:
    p = Membership(members=3, joiners=1)
    d = new_state(p.on_join("D"))
    step = p.on_message("D", d, "B", MembersUpdate(4, ("A", "B", "C", "D")))
    assert step.state == d
    assert step.sends == (("B", ExplicitSuspicion(None)),)
    assert step.events == (
        ev.MemberListRejected(member="D", sender="B", version=4, reason="not from master"),
    )


def test_master_removes_suspect_at_once() -> None:
    p = Membership(members=4, joiners=0)
    step = p.on_suspect("A", state(p, "A"), "C", "crashed")
    a = new_state(step)
    assert (a.version, a.members, a.master, a.suspects) == (5, ("A", "B", "D"), "A", frozenset())
    assert step.events == (
        ev.MemberRemoved(member="A", removed="C", version=5),
        installed("A", 5, ("A", "B", "D"), "A"),
    )
    assert not any(isinstance(e, ev.MemberSuspected) for e in step.events)
    update = MembersUpdate(5, ("A", "B", "D"))
    assert step.sends == (("B", update), ("D", update))
    b = new_state(p.on_message("B", state(p, "B"), "A", update))
    assert (b.version, b.members) == (5, ("A", "B", "D"))


def test_periodic_publish() -> None:
    p = Membership(members=3, joiners=0)
    a = state(p, "A")
    assert tuple(p.timers("A", a)) == (("publish",),)
    assert tuple(p.timers("B", state(p, "B"))) == ()
    step = p.on_timer("A", a, ("publish",))
    update = MembersUpdate(3, ("A", "B", "C"))
    assert step == Step(a, (("B", update), ("C", update)))
    # a lagging member catches up; an up-to-date one ignores it
    lagging = state(p, "C")._replace(version=2, members=("A", "C"))
    got = new_state(p.on_message("C", lagging, "A", update))
    assert (got.version, got.members) == (3, ("A", "B", "C"))
    step = p.on_message("B", state(p, "B"), "A", update)
    assert step.state == state(p, "B")
    assert step.events == (
        ev.MemberListRejected(member="B", sender="A", version=3, reason="stale version"),
    )
    # a master alone has nobody to publish to
    assert tuple(p.timers("A", a._replace(members=("A",)))) == ()


def test_stale_version_rejected() -> None:
    p = Membership(members=4, joiners=0)
    b = state(p, "B")._replace(version=6)
    step = p.on_message("B", b, "A", MembersUpdate(5, ABCD))
    assert step.state == b and step.sends == ()
    assert step.events == (
        ev.MemberListRejected(member="B", sender="A", version=5, reason="stale version"),
    )
    step = p.on_message("B", b, "A", MembersUpdate(6, ("A", "B", "C")))
    assert step.state == b
    assert new_state(p.on_message("B", b, "A", MembersUpdate(7, ("A", "B", "C")))).version == 7


def test_non_master_list_rejected_with_explicit_suspicion() -> None:
    p = Membership(members=4, joiners=0)
    b = state(p, "B")
    step = p.on_message("B", b, "C", MembersUpdate(9, ("C", "B")))
    assert step.state == b
    assert step.sends == (("C", ExplicitSuspicion(None)),)
    assert step.events == (
        ev.MemberListRejected(member="B", sender="C", version=9, reason="not from master"),
    )
    # C, a slave, only suspects B (A is not suspected, so no claim)
    step = p.on_message("C", state(p, "C"), "B", ExplicitSuspicion(None))
    c = new_state(step)
    assert c.suspects == {"B"} and c.claim is None and c.master == "A"
    assert step.events == (ev.ExplicitSuspicion(member="C", sender="B"),)
    assert step.sends == ()
    # the master removes the sender instead
    step = p.on_message("A", state(p, "A"), "B", ExplicitSuspicion(None))
    assert new_state(step).members == ("A", "C", "D")
    assert step.events == (
        ev.ExplicitSuspicion(member="A", sender="B"),
        ev.MemberRemoved(member="A", removed="B", version=5),
        installed("A", 5, ("A", "C", "D"), "A"),
    )


def test_list_omitting_receiver_rejected() -> None:
    p = Membership(members=4, joiners=0)
    b = state(p, "B")
    step = p.on_message("B", b, "A", MembersUpdate(5, ("A", "C", "D")))
    assert step.state == b
    assert step.sends == ()
    assert step.events == (
        ev.MemberListRejected(member="B", sender="A", version=5, reason="omits receiver"),
    )


def test_update_from_master_lifts_its_suspicion_and_drops_old_suspects() -> None:
    p = Membership(members=4, joiners=0)
    c = state(p, "C")._replace(suspects=frozenset({"A", "D"}))
    step = p.on_message("C", c, "A", MembersUpdate(5, ("A", "B", "C")))
    assert new_state(step).suspects == frozenset()
    assert step.events == (
        ev.SuspicionRemoved(member="C", suspect="A"),
        installed("C", 5, ("A", "B", "C"), "A"),
    )


# --- failure detection ----------------------------------------------------------------------------


def test_slave_suspects_and_heartbeat_removes_suspicion() -> None:
    p = Membership(members=4, joiners=0)
    step = p.on_suspect("C", state(p, "C"), "B", "no-heartbeat")
    c = new_state(step)
    assert c.suspects == {"B"} and c.members == ABCD and c.version == 4
    assert step.events == (ev.MemberSuspected(member="C", suspect="B", reason="no-heartbeat"),)
    assert step.sends == ()
    assert p.heartbeat_targets("C", c) == {"A", "D"}
    assert tuple(p.monitored("C", c)) == ("A", "D")
    # suspecting again changes nothing
    assert p.on_suspect("C", c, "B", "false") == Step(c)

    step = p.on_heartbeat("C", c, "B")
    assert new_state(step).suspects == frozenset()
    assert step.events == (ev.SuspicionRemoved(member="C", suspect="B"),)
    # a heartbeat from an unsuspected member changes nothing
    assert p.on_heartbeat("C", c, "D") == Step(c)


def test_heartbeat_keeps_suspicion_after_accepting_a_claim() -> None:
    p = Membership(members=4, joiners=0)
    c = state(p, "C")._replace(suspects=frozenset({"A"}))
    c = new_state(p.on_message("C", c, "B", MastershipClaim()))
    assert c.master == "B"
    assert p.on_heartbeat("C", c, "A") == Step(c)


def test_master_answers_heartbeat_from_unknown_with_explicit_suspicion() -> None:
    p = Membership(members=3, joiners=0)
    a = state(p, "A")
    assert p.on_heartbeat("A", a, "X") == Step(a, (("X", ExplicitSuspicion(None)),))
    assert p.on_heartbeat("A", a, "B") == Step(a)


# --- 002 Explicit Suspicion: the heartbeat complaint ------------------------------------------


def test_a_slave_complains_to_its_master_of_a_heartbeat_from_a_non_member() -> None:
    p = Membership(members=3, joiners=0, complaints=True)
    c = state(p, "C")._replace(version=4, members=("A", "C"))  # A removed B at v4
    assert p.on_heartbeat("C", c, "B", ("A", 3)) == \
        Step(c, (("A", HeartbeatComplaint("B", ("A", 3), ("A", 4))),))
    # without complaints (the model's default) a member that is not the master stays silent
    assert Membership(members=3, joiners=0).on_heartbeat("C", c, "B", ("A", 3)) == Step(c)
    assert p.on_heartbeat("C", c, "A") == Step(c)  # a member's heartbeat: no complaint
    # not to a master it suspects (ClusterHeartbeatManager.onInvalidHeartbeat)
    suspecting = c._replace(suspects=frozenset({"A"}))
    assert p.on_heartbeat("C", suspecting, "B", ("A", 3)) == Step(suspecting)


def test_the_master_answers_a_complaint_by_its_own_verification() -> None:
    p = Membership(members=3, joiners=0, complaints=True)
    a = state(p, "A")._replace(version=4, members=("A", "C"))
    b_view, c_view = ("A", 3), ("A", 4)
    # the complainee is no member: suspected by the master, and by the complainer on a trigger
    step = p.on_message("A", a, "C", HeartbeatComplaint("B", b_view, c_view))
    assert step == Step(a, (("B", ExplicitSuspicion(None)),
                            ("C", ExplicitSuspicionTrigger("B", b_view))))
    step = p.on_message("C", state(p, "C"), "A", ExplicitSuspicionTrigger("B", b_view))
    assert step.sends == (("B", ExplicitSuspicion(None)),) and step.events == ()
    # both members following it: both are sent the current list, by the periodic publish
    step = p.on_message("A", state(p, "A"), "C", HeartbeatComplaint("B", b_view, ("A", 3)))
    assert step == Step(state(p, "A"))
    # the complainer is no member: the other way round
    step = p.on_message("A", a, "B", HeartbeatComplaint("C", c_view, b_view))
    assert step.sends == (("B", ExplicitSuspicion(None)),
                          ("C", ExplicitSuspicionTrigger("B", b_view)))
    # neither (a member following another master is not valid either): both, no trigger
    step = p.on_message("A", a, "B", HeartbeatComplaint("C", ("B", 5), b_view))
    assert step.sends == (("C", ExplicitSuspicion(None)), ("B", ExplicitSuspicion(None)))
    # a member that is not the master ignores a complaint
    assert p.on_message("B", state(p, "B"), "C", HeartbeatComplaint("A", b_view, b_view)) == \
        Step(state(p, "B"))


def test_a_request_for_an_older_view_is_observed_and_ignored() -> None:
    """hz39-explicit-suspicion-view: ExplicitSuspicionOp prints "Received suspicion request
    from" before it handles the request, and handleExplicitSuspicion ignores one made for a
    view the member no longer has; 002's requests carry no view and are always handled."""
    p = Membership(members=3, joiners=0, rules=("hz39-explicit-suspicion-view",))
    c = state(p, "C")
    stale = p.on_message("C", c, "B", ExplicitSuspicion(("A", 2)))
    assert stale == Step(c, (), (ev.ExplicitSuspicion(member="C", sender="B"),))
    current = p.on_message("C", c, "B", ExplicitSuspicion(("A", 3)))
    assert new_state(current).suspects == {"B"}
    # already suspected: observed, no change
    again = p.on_message("C", new_state(current), "B", ExplicitSuspicion(("A", 3)))
    assert again.state == new_state(current) and len(again.events) == 1
    # the heartbeat carries the sender's view, and the master's answer names it
    assert p.heartbeat_view("B", c) == ("A", 3)
    a = state(p, "A")._replace(members=("A", "C"), version=4)
    assert p.on_heartbeat("A", a, "B", ("A", 3)).sends == (("B", ExplicitSuspicion(("A", 3))),)
    fixed = Membership(members=3, joiners=0)
    assert fixed.on_heartbeat("A", a, "B", ("A", 3)).sends == (("B", ExplicitSuspicion(None)),)
    assert new_state(fixed.on_message("C", c, "B", ExplicitSuspicion(None))).suspects == {"B"}


def test_lone_candidate_claims_alone() -> None:
    p = Membership(members=2, joiners=0)
    step = p.on_suspect("B", state(p, "B"), "A", "crashed")
    assert new_state(step) == MemberState(3, ("B",), "B", frozenset(), None, True)
    assert step.events == (
        ev.MemberSuspected(member="B", suspect="A", reason="crashed"),
        ev.MastershipClaimStarted(member="B", suspected=("A",)),
        installed("B", 3, ("B",), "B"),
        ev.MastershipClaimed(member="B", version=3, members=("B",)),
    )
    assert step.sends == ()


# --- mastership claims ---------------------------------------------------------------------------


def test_claim_rejected_then_retried() -> None:
    p = Membership(members=4, joiners=0)
    step = p.on_suspect("B", state(p, "B"), "A", "crashed")
    b = new_state(step)
    assert step.sends == (("C", MastershipClaim()), ("D", MastershipClaim()))

    # C still trusts A: not yet
    c = state(p, "C")
    step = p.on_message("C", c, "B", MastershipClaim())
    assert step == Step(c, (("B", ClaimResponse(False, 4, ABCD)),))
    b = new_state(p.on_message("B", b, "C", step.sends[0][1]))
    assert b.claim is not None and b.claim.retry == {"C"} and b.claim.waiting == {"D"}

    d = new_state(p.on_suspect("D", state(p, "D"), "A", "crashed"))
    step = p.on_message("D", d, "B", MastershipClaim())
    step = p.on_message("B", b, "D", step.sends[0][1])
    b = new_state(step)
    # still waiting for C
    assert step.events == (
        ev.MastershipAcceptanceReceived(member="B", sender="D", version=4, members=ABCD),)
    assert b.claim is not None and b.claim.accepted == {"D"}
    assert tuple(p.timers("B", b)) == (("claim-retry", "C"), ("claim-timeout",))

    # the claim timeout would give up on C: B finishes with D alone
    timed_out = p.on_timer("B", b, ("claim-timeout",))
    assert new_state(timed_out).members == ("B", "D")
    assert new_state(timed_out).version == 5

    # C suspects A now; the retry gets an acceptance and B finalizes
    c = new_state(p.on_suspect("C", c, "A", "crashed"))
    step = p.on_timer("B", b, ("claim-retry", "C"))
    b = new_state(step)
    assert step.sends == (("C", MastershipClaim()),)
    assert b.claim is not None and b.claim.waiting == {"C"} and b.claim.retry == frozenset()
    step = p.on_message("C", c, "B", MastershipClaim())
    step = p.on_message("B", b, "C", step.sends[0][1])
    assert new_state(step).members == ("B", "C", "D")
    assert new_state(step).version == 5
    update = MembersUpdate(5, ("B", "C", "D"))
    assert step.sends == (("C", update), ("D", update))


def test_claim_acceptance_conditions() -> None:
    p = Membership(members=4, joiners=0)
    d = state(p, "D")._replace(suspects=frozenset({"A"}))

    def answer(st: MemberState, claimant: str) -> bool:
        (dst, msg), = p.on_message("D", st, claimant, MastershipClaim()).sends
        assert dst == claimant and isinstance(msg, ClaimResponse)
        return msg.accepted

    assert answer(d, "B")
    assert not answer(d, "C")  # B, older than C, is not suspected
    assert not answer(d._replace(suspects=frozenset({"A", "B"})), "B")  # the claimant is suspected
    assert answer(d._replace(suspects=frozenset({"A", "B"})), "C")
    rejected = p.on_message("D", d._replace(suspects=frozenset({"A", "B"})), "B", MastershipClaim())
    assert new_state(rejected).master == "A" and rejected.events == ()
    following_b = new_state(p.on_message("D", d, "B", MastershipClaim()))
    assert following_b.master == "B"
    assert answer(following_b, "B")  # a repeated claim is accepted again
    # D follows B and then suspects it too: C's claim is still not accepted
    assert not answer(following_b._replace(suspects=frozenset({"A", "B"})), "C")
    claiming = d._replace(claim=Claim(frozenset(), frozenset({"E"}), frozenset(), ABCD, 4))
    assert not answer(claiming, "B")


def test_claimant_ignores_responses_it_did_not_wait_for() -> None:
    p = Membership(members=4, joiners=0)
    b = new_state(p.on_suspect("B", state(p, "B"), "A", "crashed"))
    assert p.on_message("B", b, "A", ClaimResponse(True, 9, ABCD)) == Step(b)
    c = state(p, "C")
    assert p.on_message("C", c, "D", ClaimResponse(True, 4, ABCD)) == Step(c)


def test_claimant_drops_accepted_member_it_then_suspects() -> None:
    p = Membership(members=4, joiners=0)
    b = new_state(p.on_suspect("B", state(p, "B"), "A", "crashed"))
    b = new_state(p.on_message("B", b, "C", ClaimResponse(True, 4, ABCD)))
    b = new_state(p.on_suspect("B", b, "C", "crashed"))
    assert b.claim is not None
    assert (b.claim.accepted, b.claim.waiting) == (frozenset(), {"D"})
    step = p.on_message("B", b, "D", ClaimResponse(True, 4, ABCD))
    assert new_state(step).members == ("B", "D")
    assert step.sends == (("D", MembersUpdate(5, ("B", "D"))),)


def test_claimant_rejects_list_from_old_master() -> None:
    p = Membership(members=3, joiners=0)
    b = new_state(p.on_suspect("B", state(p, "B"), "A", "false"))
    step = p.on_message("B", b, "A", MembersUpdate(3, ("A", "B", "C")))
    assert step.state == b
    assert step.sends == (("A", ExplicitSuspicion(None)),)


# --- variants ------------------------------------------------------------------------------------


def test_unordered_members_reapplies_older_list() -> None:
    """002 problem 1: the periodic publish of [A,B,C] overtaken by the removal of B re-adds B."""
    p = Membership(members=3, joiners=0, variant="hz38-unordered-members")
    a = state(p, "A")
    publish = p.on_timer("A", a, ("publish",)).sends
    assert publish == (("B", MembersUpdate(None, ("A", "B", "C"))),
                       ("C", MembersUpdate(None, ("A", "B", "C"))))
    step = p.on_suspect("A", a, "B", "crashed")
    assert step.events == (
        ev.MemberRemoved(member="A", removed="B", version=None),
        installed("A", None, ("A", "C"), "A"),
    )
    removal = dict(step.sends)["C"]
    assert removal == MembersUpdate(None, ("A", "C"))
    c = new_state(p.on_message("C", state(p, "C"), "A", removal))
    assert c.members == ("A", "C")
    step = p.on_message("C", c, "A", publish[1][1])
    assert new_state(step).members == ("A", "B", "C")
    assert step.events == (installed("C", None, ("A", "B", "C"), "A"),)
    # the same list again is no change
    assert p.on_message("C", new_state(step), "A", publish[1][1]) == Step(new_state(step))

    # the fixed design rejects the overtaken publish
    f = Membership(members=3, joiners=0)
    fa = state(f, "A")
    old = MembersUpdate(3, ("A", "B", "C"))
    removal = dict(f.on_suspect("A", fa, "B", "crashed").sends)["C"]
    fc = new_state(f.on_message("C", state(f, "C"), "A", removal))
    assert new_state(f.on_message("C", fc, "A", old)).members == ("A", "C")


def test_unordered_join_has_no_versions() -> None:
    p = Membership(members=2, joiners=1, variant="hz38-unordered-members")
    step = p.on_join("C")
    assert new_state(step).version is None
    step = p.on_message("A", state(p, "A"), "C", JoinRequest())
    assert step.events[0] == ev.MemberJoined(member="A", joined="C", version=None)
    assert new_state(step).version is None


def _example_states(p: Membership) -> tuple[MemberState, MemberState, MemberState]:
    b = state(p, "B")._replace(version=4, members=ABCD, suspects=frozenset({"C"}))
    d = state(p, "D")._replace(version=5, members=ALL6[:5], suspects=frozenset({"A"}))
    e = state(p, "E")._replace(suspects=frozenset({"A"}))
    return b, d, e


def test_stale_master_list_publishes_own_list() -> None:
    """002 problem 3: the new master does not learn newer lists; E and F are left out."""
    p = Membership(members=6, joiners=0, variant="hz38-stale-master-list")
    b, d, _ = _example_states(p)
    b = new_state(p.on_suspect("B", b, "A", "crashed"))
    step = p.on_message("D", d, "B", MastershipClaim())
    d = new_state(step)
    step = p.on_message("B", b, "D", step.sends[0][1])
    assert step.sends == (("D", MembersUpdate(5, ("B", "D"))),)  # no claim to E
    assert new_state(step).members == ("B", "D") and new_state(step).version == 5
    assert step.events[0] == (  # E is in D's answer, but not asked
        ev.MastershipAcceptanceReceived(member="B", sender="D", version=5, members=ALL6[:5]))
    assert step.events[2] == ev.MastershipClaimed(member="B", version=5, members=("B", "D"))
    # D already has a v5 list: the new master's list is stale to it
    step = p.on_message("D", d, "B", step.sends[0][1])
    assert step.state == d
    assert step.events == (
        ev.MemberListRejected(member="D", sender="B", version=5, reason="stale version"),
    )

    # the fixed design asks E, as the example says
    f = Membership(members=6, joiners=0)
    fb, fd, _ = _example_states(f)
    fb = new_state(f.on_suspect("B", fb, "A", "crashed"))
    answer = f.on_message("D", fd, "B", MastershipClaim()).sends[0][1]
    assert f.on_message("B", fb, "D", answer).sends == (("E", MastershipClaim()),)


def test_local_removal_slave_removes_suspect() -> None:
    """002 Member Suspicion & Removal, the previous implementation: slaves remove on their own."""
    p = Membership(members=4, joiners=0, variant="hz38-local-removal")
    step = p.on_suspect("C", state(p, "C"), "B", "no-heartbeat")
    c = new_state(step)
    assert (c.version, c.members, c.master, c.suspects) == (5, ("A", "C", "D"), "A", frozenset())
    assert step.events == (
        ev.MemberSuspected(member="C", suspect="B", reason="no-heartbeat"),
        ev.MemberRemoved(member="C", removed="B", version=5),
        installed("C", 5, ("A", "C", "D"), "A"),
    )
    assert step.sends == ()
    # removing the master makes the next oldest the master, without a claim
    step = p.on_suspect("B", state(p, "B"), "A", "crashed")
    b = new_state(step)
    assert (b.members, b.master, b.claim) == (("B", "C", "D"), "B", None)
    assert step.sends == (("C", MembersUpdate(5, ("B", "C", "D"))),
                          ("D", MembersUpdate(5, ("B", "C", "D"))))
    assert not any(isinstance(e, ev.MastershipClaimStarted) for e in step.events)

    # the fixed design only suspects
    f = Membership(members=4, joiners=0)
    fc = new_state(f.on_suspect("C", state(f, "C"), "B", "no-heartbeat"))
    assert (fc.version, fc.members, fc.suspects) == (4, ABCD, {"B"})


def test_mutant_no_self_check_installs_list_without_itself() -> None:
    p = Membership(members=3, joiners=0, variant="mutant-no-self-check")
    step = p.on_suspect("A", state(p, "A"), "C", "false")
    update = MembersUpdate(4, ("A", "B"))
    assert step.sends == (("B", update), ("C", update))
    step = p.on_message("C", state(p, "C"), "A", update)
    assert new_state(step).members == ("A", "B")
    assert step.events == (installed("C", 4, ("A", "B"), "A"),)

    f = Membership(members=3, joiners=0)
    assert f.on_suspect("A", state(f, "A"), "C", "false").sends == (("B", update),)
    assert f.on_message("C", state(f, "C"), "A", update).state == state(f, "C")


# --- presentation --------------------------------------------------------------------------------


def test_describe() -> None:
    p = Membership(members=3, joiners=1)
    b = new_state(p.on_suspect("B", state(p, "B")._replace(suspects=frozenset({"C"})), "A", "x"))
    view = p.describe("B", b)
    json.dumps(view)
    assert view == {
        "version": 4,
        "members": ["B"],
        "master": "B",
        "suspects": [],
        "joined": True,
        "claim": None,
    }
    claiming = state(p, "B")._replace(
        master="B", suspects=frozenset({"A"}),
        claim=Claim(frozenset({"C"}), frozenset(), frozenset(), ("A", "B", "C"), 3),
    )
    assert p.describe("B", claiming)["claim"] == {
        "waiting": ["C"], "retry": [], "accepted": [], "known": ["A", "B", "C"],
        "best_version": 3,
    }
    assert p.describe("D", None) == {"dormant": True}


def test_describe_message() -> None:
    p = Membership()
    assert p.describe_message(MembersUpdate(5, ("A", "B", "C"))) == "MembersUpdate v=5 [A,B,C]"
    assert p.describe_message(MembersUpdate(None, ("A", "C"))) == "MembersUpdate [A,C]"
    assert p.describe_message(ClaimResponse(False, 4, ("A", "B"))) == (
        "ClaimResponse rejected v=4 [A,B]"
    )
    assert p.describe_message(JoinRequest()) == "JoinRequest"
    assert p.describe_message(MastershipClaim()) == "MastershipClaim"
    assert p.describe_message(ExplicitSuspicion(None)) == "ExplicitSuspicion"


def test_a_joiner_asks_every_configured_address_in_turn() -> None:
    """Hazelcast's TCP-IP joiner asks each address of its member list, not only the members
    that were there first: a joiner whose first target crashed finds the master that joined
    after it, through the member that answers with the master's address (a kill -9 of the
    master while a fourth member joins, `partsafe lab`)."""
    p = Membership(members=1, joiners=2)
    c = new_state(p.on_join("C"))
    assert c.master == "A"
    step = p.on_timer("C", c, ("join-timeout",))
    assert step.sends == (("B", JoinRequest()),) and new_state(step).master == "B"
    step = p.on_timer("C", new_state(step), ("join-timeout",))
    assert step.sends == (("A", JoinRequest()),)  # and round again; never itself
    # B, joined and following its master A, tells C whom to ask
    b = MemberState(2, ("A", "B"), "A", frozenset(), None, True)
    assert p.on_message("B", b, "C", JoinRequest()).sends == (("C", MasterAddress("A")),)

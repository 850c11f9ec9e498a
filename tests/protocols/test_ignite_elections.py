"""Ignite 3 raft elections (JRaft's ``NodeImpl``): election timeouts that fire early
(``--early-timeouts``), the pre-vote as a round of its own (``--pre-vote``), and the election
mutants of refimpl/ignite.py's `VARIANT_TABLE`, each killed by IGN-ONE-VOTE or
IGN-QUORUM-LEADER."""

from __future__ import annotations

from typing import Any, cast

import pytest

from partsafe.checker.engine.bfs import Result, explore
from partsafe.checker.protocols import catalog
from partsafe.refimpl.actor import Suspicion, SystemView
from partsafe.refimpl.failure_detector import FALSE, NO_HEARTBEAT
from partsafe.refimpl.ignite import (
    CANDIDATE,
    FOLLOWER,
    VARIANT_TABLE,
    Conf,
    IgniteRebalance,
    Member,
    PreVote,
    PreVoteReply,
    Raft,
    RequestVote,
    Vote,
)

N = frozenset
LOG = (Conf(0, N("ABC"), None, 0),)
#: the election mutants' scope: no restart, three early election timeouts, three terms
ELECTIONS = {"restarts": 0, "max-term": 3, "early-timeouts": 3}
#: a two-node group that a baseline change reduces to [B], through the joint entry [B]/[A,B]
JOINT = {"nodes": 2, "restarts": 0, "baseline-changes": 1, "max-term": 3, "early-timeouts": 2}
#: persistent storage, two restarts
PERSISTENT = {"restarts": 2, "persistent": 1}


def search(variant: str, scope: dict[str, int], until: str | None = None) -> Result:
    m = catalog.IGNITE.make(variant, scope)
    return explore(m, stop_at_first=until is None, until=until,
                   action_kinds=catalog.IGNITE.action_kinds)


def killed_at(r: Result, spec: str) -> int:
    """The depth of the first violation of `spec` in `r`."""
    hit = next(v for v in r.violations if v.spec == spec)
    return hit.trace.depth


def follower(node: str = "B", leader: str | None = "A", term: int = 1,
             voted: str | None = "A") -> Member:
    return Member(True, Raft(term, voted, FOLLOWER, leader, LOG, 1))


# --- the justified timeouts, and the early ones ---------------------------------------------------


def test_elections_overlap_and_deposed_leaders_live_on_only_with_early_timeouts() -> None:
    """The election timeouts are the heartbeat detector's justified suspicions: a lease ends
    when its leader is gone, a timer fires when nothing is on its way to the node. Without an
    early one, no leader outlives its deposition; three early ones, without a restart, reach
    two candidates in one term and a leader of an older term alive beside a newer one, and the
    fixed design is clean there."""
    assert catalog.IGNITE.params["early-timeouts"].default == 0
    default = {g.name for g in catalog.IGNITE.make("fixed").goals()}
    assert not default & {"split-election", "stale-leader", "vote-lost"}
    r = search("fixed", ELECTIONS)
    assert (r.result, r.distinct_states) == ("ok", 19_870)
    reached = {g.name: g.trace.depth for g in r.goals if g.trace is not None}
    assert reached == {"new-leader": 5, "split-election": 4, "stale-leader": 5,
                       "append-takes-term": 7}
    # with a lost message too, a granted vote is lost on its way (334 states)
    lost = search("fixed", {"restarts": 0, "early-timeouts": 2, "losses": 1})
    assert lost.result == "ok" and all(g.reached for g in lost.goals)
    assert "vote-lost" in {g.name for g in lost.goals}


def test_an_early_timeout_is_a_false_suspicion_of_the_leader_or_of_the_node_itself() -> None:
    m = catalog.IGNITE.make("fixed", {"restarts": 0, "early-timeouts": 1})
    world = next(iter(m.init_states()))
    early = [a for a, _ in m.successors(world) if a[0] == "false-suspect"]
    assert sorted(early) == [("false-suspect", "B", "A"), ("false-suspect", "C", "A")]
    assert not [a for a, _ in m.successors(world) if a[0] == "suspect"]


# --- the pre-vote round ---------------------------------------------------------------------------


def test_a_pre_vote_round_keeps_the_term_until_a_quorum_grants_it() -> None:
    """``handleElectionTimeout`` then ``preVote``: the node asks for the next term and keeps its
    own; ``handlePreVoteResponse``'s quorum makes it stand (``electSelf``)."""
    p = IgniteRebalance(nodes=3, spares=0, pre_vote=True)
    timer = p.on_suspect("B", follower(leader=None), "B", NO_HEARTBEAT)
    b = cast(Member, timer.state)
    assert b.raft == Raft(1, "A", FOLLOWER, None, LOG, 1, prevotes=N("B"))
    assert sorted(timer.sends) == [("A", PreVote(2, 0, 1)), ("C", PreVote(2, 0, 1))]
    assert timer.events == ()
    stood = p.on_message("B", b, "C", PreVoteReply(1, True, 1))
    raft = cast(Member, stood.state).raft
    assert raft is not None and (raft.role, raft.term, raft.voted, raft.prevotes) == (
        CANDIDATE, 2, "B", None)
    assert sorted(stood.sends) == [("A", RequestVote(2, 0, 1)), ("C", RequestVote(2, 0, 1))]
    # a refusal counts nothing; an answer of a newer term makes it step down
    assert p.on_message("B", b, "C", PreVoteReply(1, False, 1)).state == b
    newer = cast(Member, p.on_message("B", b, "C", PreVoteReply(3, False, 1)).state).raft
    assert newer is not None and (newer.term, newer.prevotes, newer.voted) == (3, None, None)
    # an answer to a round of an older term is stale
    assert p.on_message("B", b, "C", PreVoteReply(0, True, 0)).state == b


def test_a_pre_vote_changes_nothing_at_the_voter() -> None:
    """``handlePreVoteRequest``: refused while the voter's leader's lease holds, to a node
    outside its configuration, for a term below its own, or for a shorter log."""
    p = IgniteRebalance(nodes=3, spares=0, pre_vote=True)
    for voter, src, request, granted in (
            (follower("C", leader=None), "B", PreVote(2, 0, 1), True),
            (follower("C"), "B", PreVote(2, 0, 1), False),  # A's lease holds
            (follower("C", leader=None, term=3), "B", PreVote(2, 0, 1), False),
            (follower("C", leader=None), "B", PreVote(2, 0, 0), False),
            (follower("C", leader=None), "D", PreVote(2, 0, 1), False)):
        step = p.on_message("C", voter, src, request)
        assert step.state == voter and step.events == ()
        assert step.sends == ((src, PreVoteReply(voter.raft.term, granted, 1)),)  # type: ignore


def test_after_a_pre_vote_the_vote_has_no_lease_or_configuration_check() -> None:
    """``handleRequestVoteRequest``: a node that refused the pre-vote on its lease grants the
    vote of the round others granted (the one JRaft run the merged request leaves out)."""
    merged = IgniteRebalance(nodes=3, spares=0)
    split = IgniteRebalance(nodes=3, spares=0, pre_vote=True)
    c = follower("C")
    assert merged.on_message("C", c, "B", RequestVote(2, 0, 1)).sends == (("B", Vote(1, False)),)
    granted = split.on_message("C", c, "B", RequestVote(2, 0, 1))
    assert granted.sends == (("B", Vote(2, True)),)
    raft = cast(Member, granted.state).raft
    assert raft is not None and (raft.term, raft.voted, raft.leader) == (2, "B", None)
    # a request of an older term is refused; one from the leader it follows answers its vote
    assert split.on_message("C", follower("C", term=3), "B", RequestVote(2, 0, 1)).sends == (
        ("B", Vote(3, False)),)
    assert split.on_message("C", follower("C", leader="B", term=2, voted="B"), "B",
                            RequestVote(2, 0, 1)).sends == (("B", Vote(2, True)),)


class _View(SystemView):
    """A system view where only the messages of `pending` are in flight."""

    def __init__(self, pending: set[tuple[str, str]]) -> None:
        self.pending = pending

    def state(self, node: str) -> Any:
        return None

    def crashed(self, node: str) -> bool:
        return False

    def in_flight_to(self, node: str) -> bool:
        return any(dst == node for _, dst in self.pending)

    def in_flight_between(self, src: str, dst: str) -> bool:
        return (src, dst) in self.pending

    def call(self, handler: Any, *args: Any) -> Any:
        return handler(*args)


def test_a_pre_vote_round_times_out_again_only_once_its_requests_were_delivered() -> None:
    """Without the rule, rounds refused on a lease would pile pre-votes into the channels."""
    p = IgniteRebalance(nodes=3, spares=0, pre_vote=True)
    asking = cast(Member, p.on_suspect("B", follower(leader=None), "B", NO_HEARTBEAT).state)
    assert list(p.suspicions("B", asking, _View({("B", "C")}))) == [Suspicion("B", FALSE, False)]
    assert list(p.suspicions("B", asking, _View(set()))) == [
        Suspicion("B", NO_HEARTBEAT, True)]
    merged = IgniteRebalance(nodes=3, spares=0)
    assert list(merged.suspicions("B", follower(leader=None), _View({("B", "C")}))) == [
        Suspicion("B", NO_HEARTBEAT, True)]


def test_the_pre_vote_round_leaves_the_fixed_design_and_the_design_hazards_as_they_are() -> None:
    """The default scope with the pre-vote its own round: clean, with every coverage goal; the
    design's restart hazard breaks IGN-RESTART there too, 3 steps later (the pre-vote round)."""
    r = search("fixed", {"pre-vote": 1})
    assert (r.result, r.distinct_states) == ("ok", 41_216)
    assert all(g.reached for g in r.goals)
    hazard = search("ig-restart-keeps-peer", {"pre-vote": 1}, until="IGN-RESTART")
    assert killed_at(hazard, "IGN-RESTART") == 7


def test_at_the_default_scope_a_double_vote_is_reached_only_through_the_merged_request() -> None:
    """The merged request makes a node refused on its peers' leases a candidate of the next
    term, so that after the leader's restart two candidates stand in term 2 and a node that
    votes twice in a term does so at the default scope. JRaft's pre-vote keeps the refused
    node's term: the same mutant breaks nothing there, and needs early timeouts (below)."""
    merged = search("mutant-vote-twice", {}, until="IGN-ONE-VOTE")
    assert killed_at(merged, "IGN-ONE-VOTE") == 9
    assert search("mutant-vote-twice", {"pre-vote": 1}, until="IGN-ONE-VOTE").result == "ok"


# --- the mutants ----------------------------------------------------------------------------------

MUTANTS = {
    # variant: (spec, depth at its zoo scope, scope with --pre-vote 1, depth there)
    "mutant-vote-twice": ("IGN-ONE-VOTE", 5, ELECTIONS, 9),
    "mutant-count-refused-vote": ("IGN-QUORUM-LEADER", 7, ELECTIONS, 11),
    "mutant-accept-stale-append": ("IGN-ONE-VOTE", 20, ELECTIONS, 17),
    "mutant-count-stale-vote": ("IGN-QUORUM-LEADER", 6, ELECTIONS, 14),
    "mutant-joint-new-quorum": ("IGN-QUORUM-LEADER", 7, JOINT, 7),
    "mutant-forget-voted-for": ("IGN-ONE-VOTE", 7, PERSISTENT, 11),
}


def test_the_mutants_are_the_tables_election_rows() -> None:
    rows = {name: (v.breaks, dict(v.zoo_scope)) for name, v in VARIANT_TABLE.items()
            if name.startswith("mutant-")}
    assert rows == {name: (spec, scope) for name, (spec, _, scope, _) in MUTANTS.items()}
    assert {name: catalog.IGNITE.zoo[name] for name in MUTANTS} == rows


@pytest.mark.parametrize("variant", list(MUTANTS))
def test_each_election_mutant_is_killed_at_its_zoo_scope(variant: str) -> None:
    spec, depth, scope, _ = MUTANTS[variant]
    r = search(variant, scope, until=spec)
    assert killed_at(r, spec) == depth


@pytest.mark.parametrize(("scope", "states"), [(JOINT, 7_722), (PERSISTENT, 9_948)])
def test_the_fixed_design_is_clean_at_the_other_mutant_scopes(scope: dict[str, int],
                                                               states: int) -> None:
    r = search("fixed", scope)
    assert (r.result, r.distinct_states) == ("ok", states)


@pytest.mark.parametrize("variant", list(MUTANTS))
def test_each_election_mutant_is_killed_with_the_pre_vote_its_own_round(variant: str) -> None:
    """No kill is an artefact of the merged request: with JRaft's pre-vote (``--pre-vote 1``)
    each mutant breaks the same spec at the same scope."""
    spec, _, scope, depth = MUTANTS[variant]
    r = search(variant, {**scope, "pre-vote": 1}, until=spec)
    assert killed_at(r, spec) == depth


def test_a_node_that_accepts_a_stale_leaders_log_votes_twice_in_a_term() -> None:
    """mutant-accept-stale-append: C, having voted for A in term 3, takes B's log of term 2 from
    a delayed append, goes back to term 2 following B, and, B deposed, stands for term 3
    itself: a second vote in term 3."""
    r = search("mutant-accept-stale-append", ELECTIONS, until="IGN-ONE-VOTE")
    hit = next(v for v in r.violations if v.spec == "IGN-ONE-VOTE")
    assert hit.message == "C granted its vote in term 3 to C, having granted it to A in that term"
    actions = [a for a, _ in hit.trace.steps]
    stale = next(i for i, a in enumerate(actions)
                 if a[:3] == ("deliver", "B", "C") and getattr(a[3], "term", None) == 2
                 and type(a[3]).__name__ == "AppendConf")
    before, after = hit.trace.steps[stale - 1][1], hit.trace.steps[stale][1]
    c_before = cast(Member, before.nodes[2]).raft
    c_after = cast(Member, after.nodes[2]).raft
    assert c_before is not None and (c_before.term, c_before.leader) == (3, "A")
    assert c_after is not None and (c_after.term, c_after.leader) == (2, "B")


# --- a node behind the leader's term ------------------------------------------------------------


def test_a_node_behind_the_leaders_term_takes_it_from_the_append() -> None:
    """The goal append-takes-term: at the default scope the restarted node, at term 0, takes the
    leader's term from its first append (raft: a request of a higher term updates the
    receiver's). A follower that refuses every append of another term, older or newer (the
    stale-term check read as `!=`), never follows the new leader, and the goal says so; no safety
    spec does, since two of three nodes carry the rebalance on."""
    r = search("fixed", {})
    goal = next(g for g in r.goals if g.name == "append-takes-term")
    assert r.result == "ok" and goal.trace is not None and goal.trace.depth == 25

    original = IgniteRebalance._on_append

    def refuse_other_terms(self: IgniteRebalance, out: Any, src: str, msg: Any) -> None:
        raft = out.st.raft
        if raft is not None and msg.term > raft.term:
            return  # the mutant: answered as stale
        original(self, out, src, msg)

    patched = pytest.MonkeyPatch()
    patched.setitem(IgniteRebalance._HANDLERS, "AppendConf", refuse_other_terms)
    try:
        mutant = search("fixed", {})
    finally:
        patched.undo()
    assert mutant.result == "gap"
    assert [g.name for g in mutant.goals if not g.reached] == ["append-takes-term"]
    assert "append-takes-term" not in {
        g.name for g in catalog.IGNITE.make("fixed", {"restarts": 0}).goals()}

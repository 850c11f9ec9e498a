"""The Ignite raft election specs (IGN-ONE-VOTE, IGN-QUORUM-LEADER) on hand-written event runs,
and the first election of the model as they judge it."""

from __future__ import annotations

from dataclasses import replace

from partsafe.checker.protocols import catalog
from partsafe.refimpl.ignite import IgniteRebalance
from partsafe.specs import ignite as specs
from partsafe.specs.monitor import run
from partsafe.specs.registry import get
from partsafe.traces.events import (
    NodeRestarted,
    RaftLeader,
    RaftStarted,
    RaftVote,
    from_dict,
    to_dict,
)


def vote(member: str, term: int, candidate: str) -> RaftVote:
    return RaftVote(member=member, term=term, candidate=candidate)


# --- IGN-ONE-VOTE ---------------------------------------------------------------------------------


def test_one_vote_flags_a_second_candidate_in_a_term() -> None:
    [(event, message)] = run(specs.OneVote(), [vote("C", 2, "C"), vote("C", 2, "C"),
                                               vote("C", 2, "B")])
    assert event == vote("C", 2, "B")
    assert message == "C granted its vote in term 2 to B, having granted it to C in that term"


def test_one_vote_flags_a_vote_in_a_term_older_than_one_voted_in() -> None:
    [(_, message)] = run(specs.OneVote(), [vote("C", 3, "A"), vote("C", 2, "B")])
    assert message.startswith("C granted its vote in term 2 to B after it voted in term 3")
    assert run(specs.OneVote(), [vote("C", 2, "B"), vote("C", 3, "A"), vote("B", 2, "B")]) == []


def test_an_in_memory_restart_starts_the_votes_afresh_and_a_persistent_one_does_not() -> None:
    """The in-memory restart loses the raft meta: the design's problem, which IGN-RESTART and
    IGN-ONE-LEADER judge; persistent storage keeps term and vote as JRaft's meta storage
    does."""
    before = [vote("C", 2, "A")]
    assert run(specs.OneVote(), [*before, NodeRestarted(member="C", in_memory=True),
                                 vote("C", 2, "B")]) == []
    [(_, message)] = run(specs.OneVote(), [*before, NodeRestarted(member="C", in_memory=False),
                                           vote("C", 2, "B")])
    assert "having granted it to A" in message


# --- IGN-QUORUM-LEADER ----------------------------------------------------------------------------


ABC = ("A", "B", "C")


def test_a_leader_counts_only_votes_granted_to_it_in_its_term() -> None:
    ok = [vote("B", 2, "B"), vote("C", 2, "B"), RaftLeader(member="B", term=2, votes=("B", "C"),
                                                           peers=ABC)]
    assert run(specs.QuorumLeader(), ok) == []
    for granted in (vote("C", 2, "A"), vote("C", 1, "B")):  # another candidate, another term
        [(_, message)] = run(specs.QuorumLeader(), [*ok[:1], granted, ok[2]])
        assert message == ("B became leader in term 2 counting the vote of C, who granted it "
                           "no vote in that term")


def test_a_leader_needs_a_majority_of_both_halves_of_a_joint_configuration() -> None:
    votes = [vote("B", 2, "B"), vote("D", 2, "B")]
    new_only = RaftLeader(member="B", term=2, votes=("B", "D"), peers=("A", "B", "D"), old=ABC)
    [(_, message)] = run(specs.QuorumLeader(), [*votes, new_only])
    assert message == ("B became leader in term 2 with the votes of [B,D], no majority of its "
                       "old configuration [A,B,C]")
    [(_, message)] = run(specs.QuorumLeader(), [*votes, replace(new_only, peers=ABC, old=())])
    assert message.endswith("no majority of its configuration [A,B,C]")
    both = [*votes, vote("C", 2, "B"),
            RaftLeader(member="B", term=2, votes=("B", "C", "D"), peers=("A", "B", "D"), old=ABC)]
    assert run(specs.QuorumLeader(), both) == []


def test_a_leader_event_without_its_configuration_is_judged_on_its_votes() -> None:
    assert run(specs.QuorumLeader(), [vote("B", 2, "B"),
                                      RaftLeader(member="B", term=2, votes=("B",))]) == []


def test_a_vote_granted_before_the_voters_restart_still_counts() -> None:
    """The Vote answer of the old incarnation was granted; IGN-RESTART judges whether counting
    it is safe."""
    events = [vote("B", 2, "B"), vote("C", 2, "B"), NodeRestarted(member="C", in_memory=True),
              RaftLeader(member="B", term=2, votes=("B", "C"), peers=ABC)]
    assert run(specs.QuorumLeader(), events) == []


def test_the_votes_of_a_won_term_and_of_a_group_started_again_are_forgotten() -> None:
    m = specs.QuorumLeader()
    state = m.initial()
    for e in [vote("B", 2, "B"), vote("C", 2, "B"), vote("C", 3, "C")]:
        state, _ = m.observe(state, e)
    state, message = m.observe(state, RaftLeader(member="B", term=2, votes=("B", "C"), peers=ABC))
    assert message is None and state == frozenset({("C", 3, "C")})
    state, _ = m.observe(state, RaftStarted(member="A", peers=("A",), reason="full-restart"))
    assert state == frozenset()
    state, _ = m.observe(state, RaftStarted(member="B", peers=ABC, reason="joining"))
    assert state == frozenset()


# --- the catalogue and the model ------------------------------------------------------------------


def test_the_election_specs_are_registered_with_the_sentences_that_justify_them() -> None:
    one, quorum = get("IGN-ONE-VOTE"), get("IGN-QUORUM-LEADER")
    assert one.monitor is specs.OneVote and quorum.monitor is specs.QuorumLeader
    assert "vote for at most one candidate in a given term" in one.rationale
    assert "votedId" in one.rationale and "Node C could vote for Candidate A" in one.rationale
    assert "separate majorities from both the old and new configurations" in quorum.rationale
    assert "voteCtx.init(conf, oldConf)" in quorum.rationale
    assert {type(m) for m in specs.ignite_monitors(3)} == set(specs.MONITORS)


def test_the_leader_event_keeps_its_configuration_through_json() -> None:
    leader = RaftLeader(member="B", term=2, votes=("B", "D"), peers=("A", "B", "D"), old=ABC)
    assert to_dict(leader)["old"] == ["A", "B", "C"]
    assert from_dict(to_dict(leader)) == leader
    # a record written before the configuration was logged reads as unknown
    assert from_dict({"type": "raft_leader", "member": "B", "term": 2, "votes": ["B"]}).peers == ()


def test_the_first_election_of_the_model_is_one_the_specs_accept() -> None:
    """The initial events give every peer's vote before the first leader's win, as its leader
    counted them."""
    p = IgniteRebalance(nodes=3, spares=0)
    events = [e for n in p.nodes for e in p.initial_events(n, p.initial(n))]
    leader = [e for e in events if isinstance(e, RaftLeader)]
    assert leader == [RaftLeader(member="A", term=1, votes=ABC, peers=ABC)]
    assert {(e.member, e.term, e.candidate) for e in events if isinstance(e, RaftVote)} == {
        (n, 1, "A") for n in ABC}
    for monitor in (specs.OneVote(), specs.QuorumLeader(), specs.OneLeader()):
        assert run(monitor, events) == []
    m = catalog.IGNITE.make("fixed")
    assert next(iter(m.init_states())).flags == ()

"""Ignite 3 rebalance (design 001): the metastore, the handlers, the monitors and the model."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, cast

import pytest

from partsafe.checker.actor.faults import BUDGET_NAMES
from partsafe.checker.actor.model import World
from partsafe.checker.actor.network import dead_claim_errors
from partsafe.checker.artifact import ReplayError, judge, replay
from partsafe.checker.engine.bfs import Trace, explore
from partsafe.checker.engine.model import Goal
from partsafe.checker.protocols import catalog
from partsafe.checker.protocols import ignite as ignite_model
from partsafe.checker.protocols.ignite import RevisionRanks, revision_ranks
from partsafe.checker.report import canonical
from partsafe.refimpl.actor import Step
from partsafe.refimpl.ignite import (
    CANDIDATE,
    FOLLOWER,
    LEADER,
    METASTORE,
    REPLICATE,
    AppendConf,
    Appended,
    Conf,
    HasData,
    HasDataReply,
    IgniteRebalance,
    Invoke,
    Member,
    Raft,
    Read,
    ReadReply,
    RequestVote,
    Vote,
    Watch,
    trigger_invoke,
)
from partsafe.refimpl.metastore import (
    APPEND,
    DATA_NODES,
    PENDING,
    PLANNED,
    REDUCE,
    STABLE,
    TRIGGER,
    Absent,
    All,
    AnyOf,
    Below,
    Entry,
    Exists,
    Iif,
    Put,
    Remove,
    Rev,
    RevisionIs,
    Store,
    ValueIs,
    ValueIsNot,
    holds,
    invoke,
)
from partsafe.specs import ignite as specs
from partsafe.specs.monitor import run
from partsafe.specs.rules import calculate_assignments
from partsafe.traces.events import (
    AssignmentsChanged,
    MetastoreInvoke,
    NodeRestarted,
    RaftLeader,
    RaftPeersChanged,
    RaftStarted,
    RaftVote,
    ReductionRequested,
)

N = frozenset


def store(**keys: Any) -> Store:
    """A store whose keys (STABLE=..., given by their constant names) are at revision 1."""
    names = {"stable": STABLE, "pending": PENDING, "planned": PLANNED, "reduce": REDUCE,
             "append": APPEND, "trigger": TRIGGER, "data": DATA_NODES}
    entries = sorted((Entry(names[k], v, Rev(1)) for k, v in keys.items() if v is not None),
                     key=lambda e: e.key)
    return Store(tuple(entries), Rev(1))


# --- the metastore --------------------------------------------------------------------------------


def test_conditions() -> None:
    s = store(stable=N("AB"), trigger=Rev(5))
    assert holds(s, Exists(STABLE)) and holds(s, Absent(PENDING))
    assert not holds(s, Absent(STABLE)) and not holds(s, Exists(PENDING))
    assert holds(s, RevisionIs(STABLE, 1)) and holds(s, RevisionIs(PENDING, 0))
    assert not holds(s, RevisionIs(STABLE, 2))
    assert holds(s, Below(TRIGGER, 6)) and not holds(s, Below(TRIGGER, 5))
    assert holds(s, Below(PLANNED, 1))  # absent counts as below
    assert holds(s, ValueIs(STABLE, N("AB"))) and holds(s, ValueIsNot(STABLE, N("A")))
    assert not holds(s, ValueIsNot(PENDING, N("A")))  # absent is neither equal nor different
    assert holds(s, All(())) and not holds(s, AnyOf(()))
    assert holds(s, AnyOf((Absent(STABLE), Exists(STABLE))))


def test_invoke_makes_one_revision_per_invoke_and_none_for_no_change() -> None:
    s = store(stable=N("AB"))
    after, label, changes = invoke(s, Iif(Exists(STABLE), (Put(PENDING, N("A")),
                                                           Remove(STABLE))))
    assert label == "success" and after.revision == 2
    assert [(c.key, c.value, c.rev) for c in changes] == [(PENDING, N("A"), 2), (STABLE, None, 2)]
    assert after.value(PENDING) == N("A") and after.get(STABLE) is None
    same, label, changes = invoke(s, Iif(Absent(STABLE), (Put(PENDING, N("A")),),
                                         (Remove(PLANNED),), "yes", "no"))
    assert (same, label, changes) == (s, "no", ())


def test_nested_iif_takes_the_first_branch_that_holds() -> None:
    iif = Iif(Absent(STABLE), (Put(PENDING, N("A")),),
              Iif(ValueIs(STABLE, N("AB")), (Put(PLANNED, N("B")),), (), "inner", "none"),
              "outer")
    assert invoke(store(), iif)[1] == "outer"
    assert invoke(store(stable=N("AB")), iif)[1] == "inner"
    assert invoke(store(stable=N("A")), iif)[1] == "none"


def test_calculated_assignments_rank_by_hash() -> None:
    assert calculate_assignments("ABC", 0, 5) == N("ABC")
    three = calculate_assignments("ABCD", 0, 3)
    assert len(three) == 3 and three <= N("ABCD")
    assert calculate_assignments("DCBA", 0, 3) == three  # order of the input does not matter
    assert calculate_assignments("ABCD", 0, 1) <= three


# --- the trigger: Ignite 3's ZoneRebalanceUtilUpdateAssignmentsTest table -------------------------

A = {k: N({f"node{k}"}) for k in range(1, 5)}
_ = None
# (nodes, zoneCfg, stable, pending, planned) -> (stable, pending, planned), as a1..a4 indices
VECTORS = [
    (1, 2, _, _, _, _, 1, _), (1, 1, _, _, _, _, _, _), (1, 2, _, 3, _, _, 3, 1),
    (1, 1, _, 3, _, _, 3, 1), (1, 2, 3, _, _, 3, 1, _), (1, 1, 3, _, _, 3, 1, _),
    (1, 2, 1, _, _, 1, _, _), (1, 1, 1, _, _, 1, _, _), (1, 2, 2, _, _, 2, 1, _),
    (1, 2, 4, 3, _, 4, 3, 1), (1, 1, 3, 2, _, 3, 2, 1), (1, 2, 1, 3, _, 1, 3, 1),
    (1, 2, 2, 3, _, 2, 3, 1), (1, 1, 1, 2, _, 1, 2, 1), (1, 1, 1, 2, 3, 1, 2, 1),
    (1, 4, 1, 2, 1, 1, 2, 1), (2, 2, 1, 2, 1, 1, 2, _), (2, 4, 1, 2, 1, 1, 2, _),
]


@pytest.mark.parametrize("row", range(len(VECTORS)), ids=lambda r: f"row{r + 1}")
def test_trigger_update_vectors(row: int) -> None:
    nodes, zone, stable, pending, planned, *expected = VECTORS[row]

    def a(k: int | None) -> frozenset[str] | None:
        return None if k is None else A[k]

    before = store(stable=a(stable), pending=a(pending), planned=a(planned), trigger=Rev(1))
    after, _, _ = invoke(before, trigger_invoke(A[nodes], Rev(1000), a(zone)))
    assert (after.value(STABLE), after.value(PENDING), after.value(PLANNED)) == tuple(
        a(k) for k in expected)
    assert after.value(TRIGGER) == 1000


def test_a_stale_trigger_changes_nothing_unless_unguarded() -> None:
    before = store(stable=N("AB"), trigger=Rev(7))
    assert invoke(before, trigger_invoke(N("ABC"), Rev(5), N("AB")))[1] == \
        "OUTDATED_UPDATE_RECEIVED"
    after, label, _ = invoke(before, trigger_invoke(N("ABC"), Rev(5), N("AB"), guarded=False))
    assert label == "PENDING_KEY_UPDATED" and after.value(TRIGGER) == 5


# --- handlers ---------------------------------------------------------------------------------


def proto(variant: str = "fixed") -> IgniteRebalance:
    return IgniteRebalance(nodes=3, spares=0, replicas=3, variant=variant)


def read_reply(p: IgniteRebalance, node: str, st: Member, op: str, s: Store) -> Step:
    keys = {"restart": (STABLE, PENDING, DATA_NODES)}.get(
        op, (STABLE, PENDING, PLANNED, REDUCE, APPEND, DATA_NODES))
    return p.on_message(node, st, METASTORE,
                        ReadReply(op, tuple(s.get(k) or Entry(k, None, 0) for k in keys)))


def restarted(p: IgniteRebalance, node: str, answers: dict[str, bool]) -> Step:
    """`node` restarts, reads the metastore, polls its peers and gets `answers`."""
    step = p.on_restart(node, p.initial(node))
    assert step is not None and cast(Member, step.state).raft is None
    assert (METASTORE, Read("restart", (STABLE, PENDING, DATA_NODES))) in step.sends
    step = read_reply(p, node, cast(Member, step.state), "restart", p.initial_store)
    assert {d for d, m in step.sends if m == HasData()} == N("ABC") - {node}
    for peer, has in answers.items():
        step = p.on_message(node, step.state, peer, HasDataReply(has))
    return step


def test_restart_with_a_majority_asks_for_its_removal_and_does_not_start_raft() -> None:
    p = proto()
    step = restarted(p, "C", {"A": True, "B": True})
    st = cast(Member, step.state)
    assert st.raft is None and st.removals == N({("C", "read")})
    assert (METASTORE, Read(("removal", "C"), (REDUCE,))) in step.sends


def test_restart_without_a_majority_does_nothing() -> None:
    step = restarted(proto(), "C", {"A": True, "B": False})
    st = cast(Member, step.state)
    assert st.raft is None and not st.removals and st.poll is None and not step.sends


def test_full_partition_restart_starts_raft() -> None:
    step = restarted(proto(), "C", {"A": False, "B": False})
    st = cast(Member, step.state)
    assert st.raft is not None and st.raft.term == 0
    assert [e.TYPE for e in step.events] == ["raft_started"]


def test_a_poll_that_times_out_counts_missing_answers_as_unknown() -> None:
    p = proto()
    step = restarted(p, "C", {"A": True})
    assert list(p.timers("C", step.state)) == [("has-data-timeout",)]
    after = p.on_timer("C", step.state, ("has-data-timeout",))
    assert cast(Member, after.state).poll is None and not after.sends  # 1 of 3: no majority


def test_restart_keeps_peer_variant_starts_raft_with_its_vote_forgotten() -> None:
    p = proto("ig-restart-keeps-peer")
    step = p.on_restart("C", p.initial("C"))
    assert step is not None
    raft = cast(Member, step.state).raft
    assert raft is not None and raft.voted is None and raft.term == 0
    assert raft.members == N("ABC")


def test_a_node_votes_only_for_a_candidate_in_its_configuration() -> None:
    """JRaft's pre-vote: a node ignores a candidate outside its configuration, either half of a
    joint entry counting ("Node {} ignore PreVoteRequest from {} as it is not in conf <{}>.",
    JRaft's ``NodeImpl``), and keeps its term; a candidate inside gets the vote."""
    p = proto()
    request = RequestVote(2, 1, 2)
    for log, granted in (((Conf(0, N("A"), None, 0),), False),
                         ((Conf(0, N("AC"), None, 0),), False),
                         ((Conf(0, N("AC"), None, 0), Conf(1, N("AC"), N("ABC"), 3)), True),
                         ((Conf(0, N("AB"), None, 0),), True)):
        raft = Raft(1, None, FOLLOWER, None, log, len(log))
        step = p.on_message("A", cast(Member, p.initial("A"))._replace(raft=raft), "B", request)
        after = cast(Member, step.state).raft
        assert after is not None
        assert step.sends == ((("B", Vote(after.term, granted)),))
        assert (after.term, after.voted) == ((2, "B") if granted else (1, None))


def test_a_change_is_done_only_when_the_new_configuration_alone_commits() -> None:
    """STAGE_JOINT, then STAGE_STABLE (JRaft's configuration change): the leader A, leaving
    [A,B,C] for [C], commits the joint entry with A and C, then appends [C] alone; the stable
    switch starts and A steps down only once C holds that entry, so C never needs a vote of the
    old peers again."""
    p = proto()
    c0 = Conf(0, N("ABC"), None, 0)
    joint = Conf(1, N("C"), N("ABC"), 5)
    raft = Raft(1, "A", LEADER, "A", (c0, joint), 1, acks=N({("A", 2)}))
    a = cast(Member, p.initial("A"))._replace(raft=raft)
    step = p.on_message("A", a, "C", Appended(1, 2))
    a = cast(Member, step.state)
    assert a.raft is not None and a.raft.commit == 2 and a.raft.role == LEADER
    assert a.raft.last == Conf(1, N("C"), None, 5) and a.switch is None
    [(dst, msg)] = step.sends
    assert dst == "C" and isinstance(msg, AppendConf)
    # C still holding only the joint entry needs a majority of [A,B,C] as well; with [C] alone
    # its own vote is a majority
    assert not Raft(1, None, FOLLOWER, "A", (c0, joint), 2).quorum(N("C"))
    c = p.on_message("C", cast(Member, p.initial("C")), "A", msg)
    assert cast(Member, c.state).raft.quorum(N("C"))  # type: ignore[union-attr]
    step = p.on_message("A", a, "C", Appended(1, 3))
    a = cast(Member, step.state)
    assert a.raft is not None and a.raft.commit == 3 and a.raft.role == FOLLOWER
    assert a.switch == (N("C"), "read")


def test_a_follower_forgets_its_leader_before_its_election_timer_fires() -> None:
    """Finding IGN-12 (docs/findings.md): the leader's lease ends (the follower forgets its
    leader, and from then on grants votes) and the follower's election timer fires in a later
    step, so one follower stands at term 2 while the other votes for it: the leader changes at
    term 2. A follower still holding its lease refuses the higher term (leader stickiness), and
    no election goes past `max_term`."""
    p = IgniteRebalance(nodes=3, spares=0, replicas=3, max_term=2)
    log = (Conf(0, N("ABC"), None, 0),)
    follower = Member(True, Raft(1, "A", FOLLOWER, "A", log, 1))
    lease_over = p.on_suspect("B", follower, "A", "timeout")
    b = cast(Member, lease_over.state)
    assert b.raft == cast(Raft, follower.raft)._replace(leader=None) and not lease_over.sends
    timer = p.on_suspect("B", b, "A", "timeout")
    b = cast(Member, timer.state)
    assert b.raft is not None and (b.raft.role, b.raft.term) == (CANDIDATE, 2)
    request = dict(timer.sends)["C"]
    assert isinstance(request, RequestVote) and request.term == 2
    refused = p.on_message("C", follower, "B", request)
    assert refused.sends == (("B", Vote(1, False)),)
    c = cast(Member, p.on_suspect("C", follower, "A", "timeout").state)
    granted = p.on_message("C", c, "B", request)
    assert granted.sends == (("B", Vote(2, True)),)
    won = cast(Member, p.on_message("B", b, "C", Vote(2, True)).state).raft
    assert won is not None and (won.role, won.term) == (LEADER, 2)
    for leader in ("C", None):  # at the bound, nothing: no lease ends, no timer fires
        at_bound = Member(True, won._replace(role=FOLLOWER, leader=leader))
        assert p.on_suspect("B", at_bound, "C", "timeout").state == at_bound


def test_a_new_leader_writes_its_configuration_again_in_its_term() -> None:
    """becomeLeader's flush: an uncommitted configuration is appended again in the new term, and
    a committed joint one goes on to the new configuration alone."""
    p = proto()
    c0 = Conf(0, N("ABC"), None, 0)
    joint = Conf(1, N("BC"), N("ABC"), 5)
    for commit, last in ((1, Conf(2, N("BC"), N("ABC"), 5)), (2, Conf(2, N("BC"), None, 5))):
        raft = Raft(2, "B", CANDIDATE, None, (c0, joint), commit, votes=N("B"))
        step = p.on_message("B", cast(Member, p.initial("B"))._replace(raft=raft), "C",
                            Vote(2, True))
        won = cast(Member, step.state).raft
        assert won is not None and won.role == LEADER and won.log == (c0, joint, last)
        assert won.commit == commit  # nothing commits before a majority holds the new entry


def test_the_leaders_replicator_resends_the_log_to_a_peer_that_has_not_acknowledged_it() -> None:
    """JRaft's replicators: C, restarted, lost A's log in flight (a stopped raft node drops it),
    starts raft when pending names it; A's replicator sends the log again to the peers that have
    not acknowledged it, and has nothing to do once all have."""
    p = proto()
    joint = Conf(1, N("ABC"), N("AB"), 4)
    log = (Conf(0, N("AB"), None, 0), joint)
    stopped = Member(False, None)
    step = p.on_message("C", stopped, "A", AppendConf(1, log, 1, True))
    assert step.state == stopped and not step.sends
    a = Member(True, Raft(1, "A", LEADER, "A", log, 1, acks=N({("A", 2), ("B", 2)})))
    assert list(p.timers("A", a)) == [REPLICATE] and not p.is_timeout(REPLICATE)
    again = p.on_timer("A", a, REPLICATE)
    assert again.state == a and list(again.sends) == [("C", AppendConf(1, log, 1, True))]
    acked = a._replace(raft=cast(Raft, a.raft)._replace(acks=N({("A", 2), ("B", 1), ("C", 2)})))
    assert [m for m, _ in p.on_timer("A", acked, REPLICATE).sends] == ["B"]
    done = a._replace(raft=cast(Raft, a.raft)._replace(acks=N({("A", 2), ("B", 2), ("C", 2)})))
    assert list(p.timers("A", done)) == []
    follower = Member(True, Raft(1, "A", FOLLOWER, "A", log, 1))
    assert list(p.timers("B", follower)) == []


def test_a_lost_log_is_sent_again_and_the_rebalance_ends(monkeypatch: pytest.MonkeyPatch) -> None:
    """A baseline change with one lost message: the replicator's resend is what lets the
    configuration change commit; without it a lost AppendConf stalls the rebalance."""
    scope = {"restarts": 0, "baseline-changes": 1, "losses": 1}
    r = explore(catalog.IGNITE.make("fixed", scope), action_kinds=catalog.IGNITE.action_kinds)
    assert r.result == "ok", [v.message for v in r.violations]
    assert (r.distinct_states, r.depth) == (3238, 37)
    assert r.fired.get("drop") and r.fired.get("timer")

    timers = IgniteRebalance.timers
    monkeypatch.setattr(IgniteRebalance, "timers", lambda self, node, state: [
        t for t in timers(self, node, state) if t != REPLICATE])
    r = explore(catalog.IGNITE.make("fixed", scope), stop_at_first=False, until="IGN-CONVERGE")
    assert "IGN-CONVERGE" in {v.spec for v in r.violations}


def switch(p: IgniteRebalance, applied: frozenset[str], s: Store) -> tuple[str, Store]:
    """The leader's stable switch for `applied` on metastore `s`: the branch and the store."""
    st = cast(Member, p.initial("A"))._replace(switch=(applied, "read"))
    step = read_reply(p, "A", st, "switch", s)
    (dst, msg), = step.sends
    assert dst == METASTORE and isinstance(msg, Invoke)
    after, label, _ = invoke(s, msg.iif)
    return label, after


def test_worked_trace_of_a_reentry() -> None:
    """The restart handler (design 001 "On in-memory partition restart"): C restarts; [A,B] is
    applied, then [A,B,C]."""
    for variant, append_left in (("fixed", None), ("ig-source-keeps-append", N("C"))):
        p = proto(variant)
        s = store(stable=N("ABC"), pending=N("AB"), reduce=N("C"), data=N("ABC"))
        label, s = switch(p, N("AB"), s)
        assert label == "SWITCH_APPEND_SUCCESS"
        assert (s.value(STABLE), s.value(PENDING), s.value(REDUCE), s.value(APPEND)) == (
            N("AB"), N("ABC"), None, N("C"))
        label, s = switch(p, N("ABC"), s)
        assert label == "FINISH_REBALANCE_SUCCESS"
        assert (s.value(STABLE), s.value(PENDING), s.value(APPEND)) == (N("ABC"), None,
                                                                         append_left)


def test_the_last_branches_clear_a_finished_reduction_of_a_node_that_left() -> None:
    """B asked for its removal and left the data nodes: once [A,C] is applied nothing is to
    reduce or to add back, and only the fixed design clears switch.reduce (finding IGN-5,
    docs/findings.md)."""
    for variant, reduce_left in (("fixed", None), ("ig-design-keeps-reduce", N("B")),
                                 ("ig-source-keeps-append", N("B"))):
        s = store(stable=N("ABC"), pending=N("AC"), reduce=N("B"), data=N("AC"))
        label, s = switch(proto(variant), N("AC"), s)
        assert label == "FINISH_REBALANCE_SUCCESS"
        assert (s.value(STABLE), s.value(PENDING), s.value(REDUCE)) == (N("AC"), None,
                                                                        reduce_left)


def test_a_switch_read_before_a_baseline_change_is_computed_again() -> None:
    """B's reduction [A,C] is applied; the switch read the data nodes [A,B,C], then B left the
    baseline. The design's preconditions still hold, and B is added back (switch.append); the
    fixed design also guards the data nodes, so the switch reads again (finding IGN-6,
    docs/findings.md)."""
    read = store(stable=N("ABC"), pending=N("AC"), reduce=N("B"), data=N("ABC"))
    later, _, _ = invoke(read, Iif(All(()), (Put(DATA_NODES, N("AC")),), (), "ok", "no"))
    for variant, expected in (("fixed", "REBALANCE_KEYS_CHANGED"),
                              ("ig-switch-ignores-data-nodes", "SWITCH_APPEND_SUCCESS")):
        p = proto(variant)
        st = cast(Member, p.initial("A"))._replace(switch=(N("AC"), "read"))
        step = read_reply(p, "A", st, "switch", read)
        (_, msg), = step.sends
        assert invoke(later, cast(Invoke, msg).iif)[1] == expected


def test_the_switch_moves_planned_to_pending_after_the_switch_keys() -> None:
    p = proto()
    s = store(stable=N("ABC"), pending=N("AB"), reduce=N("C"), planned=N("ABC"), data=N("ABC"))
    assert switch(p, N("AB"), s)[0] == "SWITCH_APPEND_SUCCESS"  # the switch keys come first
    s = store(stable=N("AB"), pending=N("AB"), planned=N("A"), data=N("ABC"))
    label, s = switch(p, N("AB"), s)
    assert label == "SCHEDULE_PENDING_REBALANCE_SUCCESS"
    assert (s.value(PENDING), s.value(PLANNED)) == (N("A"), None)


def test_a_stale_applied_configuration_changes_nothing() -> None:
    p = proto()
    st = cast(Member, p.initial("A"))._replace(switch=(N("AB"), "read"))
    step = read_reply(p, "A", st, "switch", store(stable=N("ABC"), pending=N("AC")))
    assert not step.sends and cast(Member, step.state).switch is None


def _reduce_watch(variant: str) -> Invoke:
    """B's invoke on the switch.reduce watch event of its second removal request: switch.reduce
    = [B] at revision 4, while the reduction the first request started runs (pending [A,C])."""
    p = proto(variant)
    view = Store((Entry(PENDING, N("AC"), Rev(3)), Entry(STABLE, N("ABC"), Rev(1)),
                  Entry(REDUCE, N("B"), Rev(4)), Entry(DATA_NODES, N("ABC"), Rev(1)),
                  Entry(TRIGGER, Rev(2), Rev(3))), Rev(4))
    step = p.on_message("B", p.initial("B"), METASTORE,
                        Watch((Entry(REDUCE, N("B"), Rev(4)),), view))
    ((dst, call),) = step.sends
    assert dst == METASTORE and type(call) is Invoke and not call.answer
    return call


def test_a_reduction_request_acted_on_after_its_reentry_finished_changes_nothing() -> None:
    """Finding IGN-11 (docs/findings.md): the reentry ends through switch.append (stable
    [A,B,C] again, pending and switch.reduce gone) and leaves the trigger at the first
    request's revision; the design's invoke, guarded by the trigger alone, then starts a
    reduction that removes B for good. The fixed invoke needs switch.reduce still at the
    event's revision, and is dead once it has moved."""
    done = Store((Entry(STABLE, N("ABC"), Rev(6)), Entry(DATA_NODES, N("ABC"), Rev(1)),
                  Entry(TRIGGER, Rev(2), Rev(3))), Rev(6))
    stale = _reduce_watch("ig-stale-reduce-event")
    after, label, _ = invoke(done, stale.iif)
    assert label == "REDUCTION_STARTED" and after.value(PENDING) == N("AC")
    assert not proto("ig-stale-reduce-event").is_dead(METASTORE, done, "B", stale)
    fixed = _reduce_watch("fixed")
    assert invoke(done, fixed.iif)[1] == "REDUCTION_NOT_STARTED"
    assert proto().is_dead(METASTORE, done, "B", fixed)
    # while switch.reduce is still at the event's revision, the same invoke acts
    current = Store((Entry(STABLE, N("ABC"), Rev(1)), Entry(REDUCE, N("B"), Rev(4)),
                     Entry(DATA_NODES, N("ABC"), Rev(1)), Entry(TRIGGER, Rev(2), Rev(3))), Rev(4))
    after, label, _ = invoke(current, fixed.iif)
    assert label == "REDUCTION_STARTED" and after.value(PENDING) == N("AC")
    assert not proto().is_dead(METASTORE, current, "B", fixed)


def test_dead_invokes_need_a_condition_that_can_no_longer_hold() -> None:
    p = proto()
    cas = Invoke("reduce", Iif(RevisionIs(REDUCE, Rev(4)), (Put(PENDING, N("AC")),)),
                 answer=False)
    assert p.is_dead(METASTORE, store(reduce=N("B")), "B", cas)  # at revision 1 now
    assert not p.is_dead(METASTORE, Store((Entry(REDUCE, N("B"), Rev(4)),), Rev(4)), "B", cas)
    # an absent key's revision comes back: a condition on it stays alive
    absent = Invoke("reduce", Iif(RevisionIs(APPEND, 0), (Put(PENDING, N("AC")),)),
                    answer=False)
    assert not p.is_dead(METASTORE, store(append=N("B")), "B", absent)
    # a branch that needs nothing keeps an invoke alive; an answered invoke is never dead
    either = Invoke("reduce", Iif(RevisionIs(REDUCE, Rev(4)), (), (Put(PENDING, N("AC")),)),
                    answer=False)
    assert not p.is_dead(METASTORE, store(reduce=N("B")), "B", either)
    assert not p.is_dead(METASTORE, store(reduce=N("B")), "B", cas._replace(answer=True))


def test_dead_trigger_invokes_once_the_trigger_moved_past_them() -> None:
    p = proto()
    call = Invoke("trigger", trigger_invoke(N("AB"), Rev(3), N("ABC")), answer=False)
    assert p.is_dead(METASTORE, store(trigger=Rev(3)), "B", call)
    assert not p.is_dead(METASTORE, store(trigger=Rev(2)), "B", call)
    unguarded = Invoke("trigger", trigger_invoke(N("AB"), Rev(3), N("ABC"), guarded=False),
                       answer=False)
    assert not p.is_dead(METASTORE, store(trigger=Rev(9)), "B", unguarded)


# --- monitors: each catches a violation and holds on a correct run ------------------------------


def ch(key: str, nodes: str, rev: int, removed: bool = False) -> AssignmentsChanged:
    return AssignmentsChanged(member="A", partition=0, key=key, nodes=tuple(nodes),
                              revision=rev, removed=removed)


def test_one_leader() -> None:
    m = specs.OneLeader()
    ok = [RaftLeader(member="A", term=1), RaftLeader(member="B", term=2),
          RaftLeader(member="A", term=1)]
    assert run(m, ok) == []
    [(_, msg)] = run(m, [*ok, RaftLeader(member="C", term=2)])
    assert "C became leader in term 2" in msg
    # a full partition restart starts the group again: its term 2 is a new one
    again = [*ok, RaftStarted(member="C", peers=("A", "C"), reason="full-restart"),
             RaftLeader(member="C", term=2)]
    assert run(m, again) == []
    joining = [*ok, RaftStarted(member="C", peers=("A", "C"), reason="joining"),
               RaftLeader(member="C", term=2)]
    assert len(run(m, joining)) == 1


def test_restart_counts_no_vote_of_a_restarted_node_before_it_is_back() -> None:
    m = specs.Restart()
    restart = [NodeRestarted(member="C", in_memory=True),
               RaftVote(member="C", term=2, candidate="B")]
    bad = [*restart, RaftLeader(member="B", term=2, votes=("B", "C"))]
    [(_, msg)] = run(m, bad)
    assert "counting the vote C granted after its in-memory restart" in msg
    # removed and added back first: fine; a vote from before the restart: fine
    back = [NodeRestarted(member="C", in_memory=True),
            RaftPeersChanged(member="A", peers=("A", "B")),
            RaftPeersChanged(member="A", peers=("A", "B", "C")),
            RaftVote(member="C", term=2, candidate="B"), RaftLeader(member="B", term=2,
                                                                     votes=("B", "C"))]
    assert run(m, back) == []
    before = [RaftVote(member="C", term=2, candidate="B"), NodeRestarted(member="C",
                                                                         in_memory=True),
              RaftLeader(member="B", term=2, votes=("B", "C"))]
    assert run(m, before) == []
    full = [*restart[:1], RaftStarted(member="C", peers=("A", "B", "C"), reason="full-restart"),
            *restart[1:], RaftLeader(member="B", term=2, votes=("B", "C"))]
    assert run(m, full) == []
    # the full restart of one node starts the whole group again: B, restarted before it and
    # started as a joining node, votes in the new group
    other = [NodeRestarted(member="B", in_memory=True),
             RaftStarted(member="B", peers=("C",), reason="joining"),
             RaftStarted(member="C", peers=("A", "B", "C"), reason="full-restart"),
             RaftVote(member="B", term=1, candidate="C"),
             RaftLeader(member="C", term=1, votes=("B", "C"))]
    assert run(m, other) == []
    assert len(run(m, [e for e in other if getattr(e, "reason", "") != "full-restart"])) == 1


def test_a_node_restarted_outside_the_peers_is_back_once_a_configuration_has_it() -> None:
    """Finding IGN-13 (docs/findings.md): B restarts, is removed ([A,C]) and restarts again,
    outside the peers; [B,C] adds it back, and its votes count from then on. A node that
    restarts inside the peers needs a removal first, however it got there."""
    m = specs.Restart()
    start = [RaftStarted(member=n, peers=("A", "B", "C"), reason="start") for n in "ABC"]
    again = [*start, NodeRestarted(member="B", in_memory=True),
             RaftPeersChanged(member="A", peers=("A", "C")),
             NodeRestarted(member="B", in_memory=True),
             RaftPeersChanged(member="A", peers=("B", "C")),
             RaftVote(member="B", term=2, candidate="B"), RaftVote(member="C", term=2,
                                                                    candidate="B"),
             RaftLeader(member="B", term=2, votes=("B", "C"))]
    assert run(m, again) == []
    # a vote granted outside the peers, counted before the node is added back: caught
    early = [*again[:6], RaftVote(member="B", term=2, candidate="C"),
             RaftLeader(member="C", term=2, votes=("B", "C"))]
    [(_, msg)] = run(m, early)
    assert "before it was added back to the peers" in msg
    # a spare D, never a peer, restarts and joins: back once a configuration has it
    spare = [*start, NodeRestarted(member="D", in_memory=True),
             RaftPeersChanged(member="A", peers=("A", "B", "D")),
             RaftVote(member="D", term=2, candidate="B"),
             RaftLeader(member="B", term=2, votes=("B", "D"))]
    assert run(m, spare) == []
    # inside the peers (added back, its raft node started, then restarted again): a removal
    # is needed first
    inside = [*start, NodeRestarted(member="B", in_memory=True),
              RaftPeersChanged(member="A", peers=("A", "C")),
              RaftPeersChanged(member="A", peers=("A", "B", "C")),
              RaftStarted(member="B", peers=("A", "C"), reason="joining"),
              NodeRestarted(member="B", in_memory=True),
              RaftPeersChanged(member="A", peers=("A", "B", "C")),
              RaftVote(member="B", term=2, candidate="C"),
              RaftLeader(member="C", term=2, votes=("B", "C"))]
    [(_, msg)] = run(m, inside)
    assert "before it was removed from the peers" in msg


def test_a_node_restarted_again_before_its_raft_node_started_keeps_its_standing() -> None:
    """Finding IGN-14 (docs/findings.md): B restarts and asks for its removal, is removed
    ([A,C]) and added back ([B,C]) before its raft node starts, and restarts again: it had
    nothing left to forget, so the configuration that added it back still counts. Once its
    raft node has started, a restart needs a removal again."""
    m = specs.Restart()
    start = [RaftStarted(member=n, peers=("A", "B", "C"), reason="start") for n in "ABC"]
    back = [*start, NodeRestarted(member="B", in_memory=True),
            RaftPeersChanged(member="A", peers=("A", "C")),
            RaftPeersChanged(member="A", peers=("B", "C"))]
    elected = [RaftVote(member="B", term=2, candidate="B"),
               RaftVote(member="C", term=2, candidate="B"),
               RaftLeader(member="B", term=2, votes=("B", "C"))]
    again = [*back, NodeRestarted(member="B", in_memory=True),
             RaftStarted(member="B", peers=("A", "C"), reason="joining")]
    assert run(m, [*again, *elected]) == []
    # restarted again after its raft node started: caught
    started = [*back, RaftStarted(member="B", peers=("A", "C"), reason="joining"),
               NodeRestarted(member="B", in_memory=True),
               RaftStarted(member="B", peers=("A", "C"), reason="joining")]
    [(_, msg)] = run(m, [*started, *elected])
    assert "before it was removed from the peers" in msg


def _saved(name: str) -> dict[str, Any]:
    """The counterexample artifact `tests/data/NAME.json`."""
    return cast(dict[str, Any],
                json.loads((Path(__file__).parents[1] / "data" / f"{name}.json").read_text()))


def _replayed(name: str) -> tuple[Any, Trace, str | None]:
    """The run saved in `tests/data/NAME.json`, replayed by its canonical action ids, each step
    emitting the events the search recorded (`checker.artifact.replay`), with its spec judged at its
    end."""
    return replay(_saved(name), name)


def _events(m: Any, start: World, steps: list[tuple[Any, World]]) -> list[tuple[int, Any]]:
    """The events of a run from `start`, each with the number of the step (from 1) that
    emitted it."""
    states = [start, *(w for _, w in steps)]
    return [(i, e) for i, ((a, w), prev) in enumerate(zip(steps, states, strict=False), start=1)
            for e in m.step_events(prev, a, w)]


@pytest.mark.parametrize("name", ["ignite_restart_outside_peers",
                                  "ignite_restart_before_raft_started"])
def test_the_full_scopes_runs_with_a_second_restart_are_clean(name: str) -> None:
    """The runs of items 13 and 14: B's vote for itself in term 2, after its second restart,
    outside the peers (13) or before its raft node started (14), and its return, is counted,
    and IGN-RESTART holds; a monitor that restarted its count at the second restart would
    not."""
    m, trace, message = _replayed(name)
    (_, prev), (taken, last) = trace.steps[-2:]
    assert RaftLeader(member="B", term=2, votes=("B", "C"), peers=("B", "C")) in m.step_events(
        prev, taken, last)
    assert message is None


def test_a_candidate_outside_the_voters_configuration_gets_no_vote() -> None:
    """Finding IGN-15 (docs/findings.md): the run saved from the full scope with one change of
    leader, made before the model checked JRaft's pre-vote. A, alone in stable, restarted in
    memory and started the group again as a full partition restart, configuration [A]; B,
    outside it, stood for term 2. A granted the vote, B led a group that does not name it and
    drove nothing, and IGN-CONVERGE broke at quiescence after 44 steps. Now A refuses (its
    term unchanged), the saved run stops being a run of the model at that delivery, and with
    no fault after it A leads its own group and the rebalance ends with stable [A,C]."""
    doc = _saved("ignite_full_scope_stops_short")
    with pytest.raises(ReplayError, match=r"step 36 \(deliver RequestVote.* B→A\) emits \[\]"):
        replay(doc, "stops-short")
    m, trace, _ = replay(dict(doc, steps=doc["steps"][:35]), "stops-short")
    world = trace.steps[-1][1]
    a = m.names.index("A")
    assert cast(Member, world.nodes[a]).raft == Raft(0, None, FOLLOWER, None,
                                                     (Conf(0, N("A"), None, 0),), 1)
    [(action, refused)] = [(x, w) for x, w in m.successors(world)
                           if canonical(x) == doc["steps"][35]["action_id"]]
    assert m.step_events(world, action, refused) == ()
    assert cast(Member, refused.nodes[a]).raft == cast(Member, world.nodes[a]).raft
    assert ("A", "B", (Vote(0, False),)) in {n[:3] for n in refused.network}
    run = ignite_model.follow(m, refused, 100)
    end = run[-1][1]
    assert [e for _, e in _events(m, refused, run) if isinstance(e, RaftLeader)] == [
        RaftLeader(member="A", term=1, votes=("A",), peers=("A",))]
    assert m.quiescent(end, m.successors(end))
    assert judge(m, end, "IGN-CONVERGE") is None
    store_ = cast(Store, end.nodes[-1])
    assert (store_.value(STABLE), store_.get(PENDING), store_.get(APPEND)) == (N("AC"), None,
                                                                                None)


def test_a_node_restarted_while_being_added_back_rejoins_a_configuration_it_is_committed_in(
) -> None:
    """Finding IGN-16 (docs/findings.md): the 47 steps of the full scope with one change of
    leader. B's reduction runs, the operator removes A from the baseline, and the stable switch
    writes stable [A,C], pending [B,C]; B starts raft as a joining node and takes the joint
    entry [B,C]/[A,C]. B restarts in memory outside stable, so the restart handler (which
    reenters stable members only, the restart rule S2') starts it again as a joining node; its
    acknowledgement from before the restart commits the joint entry first, so B starts inside
    the committed configuration, which S2'(b) rules out. B then leads term 2, and IGN-RESTART
    breaks. The hazard stays latent at three nodes: no vote is counted twice (S2), and B holds
    every committed entry when it votes, caught up from A, because C (the other new peer, whose
    acknowledgement the commit needed too) refuses a candidate with a shorter log."""
    doc = _saved("ignite_restart_while_joining")
    m, trace, message = replay(doc, "ignite_restart_while_joining")
    states = [trace.init, *(t for _, t in trace.steps)]
    events = _events(m, trace.init, trace.steps)
    a, b = m.names.index("A"), m.names.index("B")

    def raft(step: int, node: int) -> Raft:
        r = cast(Member, states[step].nodes[node]).raft
        assert r is not None
        return r

    first, restart = [i for i, e in events if e == NodeRestarted(member="B", in_memory=True)]
    assert first == 1
    assert cast(Store, states[restart - 1].nodes[-1]).value(STABLE) == N("AC")
    before = raft(restart - 1, b)
    joint = len(before.log)  # the joint entry's index, from 1
    assert before.last == Conf(1, N("BC"), N("AC"), before.last.token)
    assert before.term == 1 and before.voted is None
    # the acknowledgement B sent before its restart commits the joint entry after it
    ack = next(i for i in range(restart + 1, len(states))
               if raft(i - 1, a).commit < joint <= raft(i, a).commit)
    assert doc["steps"][ack - 1]["action"] == "deliver Appended(term=1, index=4) B→A"
    # B's raft node starts again, joining, inside the committed configuration
    (again,) = [i for i, e in events if isinstance(e, RaftStarted) and e.member == "B"
                and e.reason == "joining" and i > restart]
    assert ack < again and raft(again, a).commit >= joint
    assert raft(again, a).log[joint - 1].peers == N("BC")
    # S2 holds: one vote per node and term
    votes = {(e.member, e.term, e.candidate) for _, e in events if isinstance(e, RaftVote)}
    assert len({(v, t) for v, t, _ in votes}) == len(votes)
    # when B votes, and when it leads, it holds every committed entry
    (leader,) = [e for _, e in events if isinstance(e, RaftLeader)]
    assert leader == RaftLeader(member="B", term=2, votes=("B", "C"), peers=("B", "C"))
    (vote,) = [i for i, e in events if isinstance(e, RaftVote) and e.member == "B"]
    for i in (vote, len(states) - 1):
        committed = max(raft(j, a).commit for j in range(i + 1))
        assert committed >= joint and raft(i, b).log[:committed] == raft(i, a).log[:committed]
    assert message is not None and "before it was removed from the peers" in message


def test_a_leader_that_committed_its_own_removal_leaves_the_next_election_to_raft() -> None:
    """Finding IGN-17 (docs/findings.md): the 52 steps of the full scope with one change of
    leader after which IGN-CONVERGE broke before the monitor knew that a leader outside the
    latest configuration steps down. A leaves the baseline, B's reduction leaves pending [C],
    and A's change to [C] commits; C restarts in memory and, finding no data, starts the group
    again with [A,B,C]. B, joining, holds the joint entry [C]/[A,B,C], leads term 2 with C's
    vote, commits [C] and steps down. C, the configuration's only peer, would stand for term 3,
    beyond `--max-term 2`: the run ends quiescent with stable [C] and pending [B,C]. With one
    more term the same run, with no fault after it, ends with stable [B,C] and every other key
    empty."""
    doc = _saved("ignite_leader_outside_its_configuration")
    m, trace, message = replay(doc, "ignite_leader_outside_its_configuration")
    assert message is None
    end = trace.steps[-1][1]
    b, c = m.names.index("B"), m.names.index("C")
    assert cast(Member, end.nodes[b]).raft.last.peers == N("C")  # type: ignore[union-attr]
    raft_c = cast(Member, end.nodes[c]).raft
    assert raft_c is not None and raft_c.role == FOLLOWER and raft_c.term == 2
    assert m.quiescent(end, m.successors(end))
    leaders = [e for _, e in _events(m, trace.init, trace.steps) if isinstance(e, RaftLeader)]
    # B counts its votes against the joint entry [C]/[A,B,C]: C, the new half, and B and C of
    # the old
    assert leaders[-1] == RaftLeader(member="B", term=2, votes=("B", "C"), peers=("C",),
                                     old=("A", "B", "C"))
    m3, trace3, _ = replay(dict(doc, params=dict(doc["params"], **{"max-term": 3})), "term 3")
    run_ = ignite_model.follow(m3, trace3.steps[-1][1], 200)
    after = run_[-1][1]
    assert m3.quiescent(after, m3.successors(after))
    assert judge(m3, after, "IGN-CONVERGE") is None
    assert RaftLeader(member="C", term=3, votes=("C",), peers=("C",)) in [
        e for _, e in _events(m3, trace3.steps[-1][1], run_)]
    store_ = cast(Store, after.nodes[-1])
    assert (store_.value(STABLE), store_.get(PENDING), store_.get(APPEND)) == (N("BC"), None,
                                                                                None)


def test_a_member_of_pending_kept_stopped_after_its_restart_stalls_the_rebalance() -> None:
    """Finding IGN-16 (docs/findings.md), the other choice: a restart handler that treated a
    member of pending as it treats a member of stable would find no majority with data among
    the others of [B,C] (C alone) and, as the design does then, leave B's raft node stopped.
    Its stand-in here is the run of IGN-16 with the restart handler's read never answered.
    The change to [B,C] then waits for B's acknowledgement for ever: the run ends quiescent
    with stable [A,C], pending [B,C] and A leading a configuration it cannot commit in, and
    IGN-CONVERGE holds only because the configuration [B,C] has no live majority. IGN-PROGRESS
    flags that stall (finding IGN-18; the table era's handler,
    tests/protocols/test_ignite_profiles.py)."""
    doc = _saved("ignite_restart_while_joining")
    m, trace, _ = replay(dict(doc, steps=doc["steps"][:38]), "kept-stopped")
    world = trace.steps[-1][1]
    (reply,) = [c for c in world.network
                if c[1] == "B" and any(isinstance(x, ReadReply) for x in c[2])]
    start = world._replace(network=world.network - {reply})
    run = ignite_model.follow(m, start, 100)
    end = run[-1][1]
    assert m.quiescent(end, m.successors(end))
    store_ = cast(Store, end.nodes[-1])
    assert (store_.value(STABLE), store_.value(PENDING)) == (N("AC"), N("BC"))
    a, b = (cast(Member, end.nodes[m.names.index(n)]) for n in "AB")
    assert b.raft is None and a.raft is not None and a.raft.role == LEADER
    assert a.raft.last.peers == N("BC") and a.raft.commit < len(a.raft.log)
    assert judge(m, end, "IGN-CONVERGE") is None and judge(m, end, "IGN-RESTART") is None
    assert "pending [B,C] lacks a live majority" in (judge(m, end, "IGN-PROGRESS") or "")


def test_no_lost_reduction() -> None:
    m = specs.NoLostReduction()
    # the single planned key: the reduction [A,B,D] is answered, then the addition overwrites it
    start = [ch(STABLE, "ABC", 1), ch(PENDING, "ABCD", 2), ch(PLANNED, "ABD", 3),
             ReductionRequested(member="C", node="C")]
    [(_, msg)] = run(m, [*start, ch(PLANNED, "ABCD", 4)])
    assert "removal of C is lost" in msg
    kept = [*start, ch(REDUCE, "C", 4), ch(PLANNED, "ABCD", 5), ch(STABLE, "ABD", 6),
            ch(REDUCE, "", 6, removed=True)]
    assert run(m, kept) == []


def test_a_removal_is_watched_from_its_cas_on() -> None:
    """switch.reduce gains C: a later write that drops it, stable still holding C, loses it,
    even before C hears that its CAS went through."""
    m = specs.NoLostReduction()
    cas = [ch(STABLE, "ABC", 1), ch(REDUCE, "C", 2)]
    [(_, msg)] = run(m, [*cas, ch(REDUCE, "", 3, removed=True)])
    assert "removal of C is lost" in msg
    done = [*cas, ch(PENDING, "AB", 3), ch(STABLE, "AB", 4), ch(REDUCE, "", 4, removed=True)]
    assert run(m, done) == []


def test_a_late_answer_after_the_reentry_leaves_no_trace() -> None:
    """C's reduction and its return are over before C hears that its CAS went through: the
    request then records nothing, and the monitor's state is the state without it."""
    m = specs.NoLostReduction()
    reentry = [ch(STABLE, "ABC", 1), ch(REDUCE, "C", 2), ch(PENDING, "AB", 3),
               ch(STABLE, "AB", 4), ch(REDUCE, "", 4, removed=True), ch(APPEND, "C", 4),
               ch(PENDING, "ABC", 5), ch(STABLE, "ABC", 6), ch(PENDING, "", 6, removed=True),
               ch(APPEND, "", 6, removed=True)]
    state = m.initial()
    for e in reentry:
        state, _ = m.observe(state, e)
    after, message = m.observe(state, ReductionRequested(member="C", node="C"))
    assert message is None and after == state


def test_stale_trigger() -> None:
    m = specs.StaleTrigger()

    def trig(v: int) -> AssignmentsChanged:
        return AssignmentsChanged(member="A", partition=0, key=TRIGGER, nodes=(), revision=v,
                                  value=v)

    assert run(m, [trig(2), trig(5)]) == []
    [(_, msg)] = run(m, [trig(2), trig(5), trig(3)])
    assert "from revision 5 to 3" in msg


def test_cas() -> None:
    m = specs.Cas()

    def inv(expected: int) -> MetastoreInvoke:
        return MetastoreInvoke(member="A", keys=(STABLE,), condition="x", ok=True, revision=9,
                               expected=((STABLE, expected),))

    assert run(m, [ch(STABLE, "AB", 3), inv(3)]) == []
    [(_, msg)] = run(m, [ch(STABLE, "AB", 3), ch(STABLE, "A", 4), inv(3)])
    assert "expected revision 3, found 4" in msg


def test_converge() -> None:
    m = specs.Converge(replicas=3)
    base = [ch(DATA_NODES, "ABC", 1), ch(STABLE, "ABC", 1), RaftLeader(member="A", term=1)]
    assert run(m, base, quiescent_at_end=True) == []
    [(_, msg)] = run(m, [*base, ch(APPEND, "C", 2)], quiescent_at_end=True)
    assert "switch.append still holds [C]" in msg
    # no live leader, or a lost majority: nothing is judged
    assert run(m, [*base, ch(APPEND, "C", 2), NodeRestarted(member="A", in_memory=True)],
               quiescent_at_end=True) == []
    # a leader of the latest configuration is judged; one outside it steps down (IGN-17)
    short = [*base, RaftPeersChanged(member="A", peers=("B", "C")), ch(APPEND, "C", 2)]
    assert run(m, [*short, RaftLeader(member="A", term=2)], quiescent_at_end=True) == []
    [(_, msg)] = run(m, [*short, RaftLeader(member="B", term=2)], quiescent_at_end=True)
    assert "switch.append still holds [C]" in msg


# --- the model ------------------------------------------------------------------------------------

SMALL: dict[str, int] = {}  # the default scope: 3 nodes, 1 in-memory restart
#: a restart and a baseline change, without elections after the first
RESTART_AND_BASELINE = {"baseline-changes": 1, "max-term": 1}
TWO_RESTARTS = {"restarts": 2, "max-term": 1}


def test_revision_ranks_keep_order_and_equality() -> None:
    m = catalog.IGNITE.make("fixed", SMALL)
    world = next(iter(m.init_states()))
    s = Store((Entry(STABLE, N("A"), Rev(4)), Entry(TRIGGER, Rev(9), Rev(9))), Rev(9))
    nodes = (*world.nodes[:-1], s)
    ranked = revision_ranks(World(nodes, world.network, world.budget, world.monitors, ()))
    out = cast(Store, ranked.nodes[-1])
    # the monitors hold revision 1 of the initial keys: 4 and 9 become 2 and 3
    assert out == Store((Entry(STABLE, N("A"), Rev(2)), Entry(TRIGGER, Rev(3), Rev(3))), Rev(3))
    assert revision_ranks(ranked) is ranked



def test_revision_ranks_remembered_per_part_give_what_a_fresh_renumbering_gives() -> None:
    """One `RevisionRanks` over the worlds of a search, each sharing parts with the others,
    renumbers every one as a renumbering that knows nothing yet does."""
    m = catalog.IGNITE.make("fixed", SMALL)
    shared = RevisionRanks()
    frontier, seen = list(m.init_states()), 0
    for _ in range(6):
        frontier = [w for s in frontier for _, w in m.successors(s)][:200]
        for w in frontier:
            found: set[int] = set()
            ignite_model._collect((w.nodes, w.network, w.monitors), found)
            spread = {r: Rev(3 * r) for r in found}  # gaps between the ranks
            nodes, network, monitors = ignite_model._remap((w.nodes, w.network, w.monitors),
                                                           spread)
            raw = World(nodes, network, w.budget, monitors, w.flags)
            assert shared(raw) == RevisionRanks()(raw) == revision_ranks(raw) == w
            assert shared(raw) == w  # every part's revisions now come from what it remembered
            assert shared(w) is w
            seen += 1
    assert seen > 100


def test_fixed_design_is_clean_at_the_default_scope() -> None:
    m = catalog.IGNITE.make("fixed", SMALL)
    restart = [type(x).__name__ for x in m.monitors].index("Restart")

    def early_vote(prev: World, action: Any, nxt: World) -> bool:
        before, after = dict(prev.monitors[restart].nodes), dict(nxt.monitors[restart].nodes)
        return any(n in before and after[n][1] != before[n][1] for n in after)

    # finding IGN-1 (docs/findings.md): a restarted node grants a vote before it is back,
    # and no leader counts it (IGN-RESTART holds)
    m._goals = (*m._goals, Goal("early-vote", "a restarted node votes before it is back",
                                early_vote))
    r = explore(m, action_kinds=catalog.IGNITE.action_kinds)
    assert r.result == "ok", [v.message for v in r.violations]
    assert (r.distinct_states, r.depth) == (12_704, 59)
    assert all(g.reached for g in r.goals)
    vote = next(g for g in r.goals if g.name == "early-vote").trace
    assert vote is not None and vote.depth == 34
    # B and C, the followers of the first group, are interchangeable: the same verdict and
    # goals over a state space that has each mirrored pair of states once
    full = explore(catalog.IGNITE.make("fixed", SMALL), symmetry=False,
                   action_kinds=catalog.IGNITE.action_kinds)
    assert r.symmetry and not full.symmetry and full.result == "ok"
    assert (full.distinct_states, full.depth) == (25_338, 59)
    assert [g.reached for g in full.goals] == [g.reached for g in r.goals[:len(full.goals)]]
    assert full.distinct_states / 2 <= r.distinct_states < full.distinct_states * 0.6


def test_the_followers_of_the_first_group_are_interchangeable() -> None:
    assert proto().interchangeable == (N("BC"), frozenset())
    m = catalog.IGNITE.make("fixed", SMALL)
    world = next(iter(m.init_states()))
    restarted = {a[1]: w for a, w in m.successors(world) if a[0] == "restart"}
    assert restarted["B"] != restarted["C"]
    assert m.representative(restarted["B"]) == m.representative(restarted["C"])
    assert m.representative(restarted["A"]) == restarted["A"] != restarted["B"]
    # with more data nodes than replicas the calculated assignments depend on the names
    assert IgniteRebalance(nodes=3, spares=1, replicas=3).interchangeable == ()


@pytest.mark.parametrize(("variant", "spec", "scope"), [
    ("ig-restart-keeps-peer", "IGN-RESTART", SMALL),
    ("ig-no-trigger-guard", "IGN-STALE-TRIGGER", SMALL),
    ("ig-source-keeps-append", "IGN-CONVERGE", SMALL),
    ("ig-single-planned", "IGN-NO-LOST-REDUCTION", RESTART_AND_BASELINE),
    ("ig-design-keeps-reduce", "IGN-CONVERGE", RESTART_AND_BASELINE),
])
def test_each_variant_breaks_its_spec(variant: str, spec: str, scope: dict[str, int]) -> None:
    m = catalog.IGNITE.make(variant, scope)
    r = explore(m, stop_at_first=False, until=spec)
    assert spec in {v.spec for v in r.violations}


def test_a_stable_switch_without_the_data_nodes_guard_stops_convergence() -> None:
    """ig-switch-ignores-data-nodes breaks IGN-CONVERGE (`partsafe check ignite-rebalance
    --variant ig-switch-ignores-data-nodes --baseline-changes 1 --max-term 1 --until
    IGN-CONVERGE --trace-out F`: 184,874 states, so its shortest counterexample is saved and
    replayed here); the fixed design's guard refuses the same run."""
    doc = json.loads((Path(__file__).parents[1] / "data"
                      / "ignite_switch_ignores_data_nodes.json").read_text())
    _, trace, message = replay(doc, "switch")
    assert (doc["variant"], doc["spec"], trace.depth) == (
        "ig-switch-ignores-data-nodes", "IGN-CONVERGE", 46)
    assert message == doc["message"]
    with pytest.raises(ReplayError, match=r"step 30 \(deliver Invoke\(switch\) A→metastore\)"):
        replay(dict(doc, variant="fixed"), "fixed")  # the guarded switch is another invoke


def _second_request_written() -> World:
    """B restarts, and the reduction without it runs (fault-free) until the leader starts its
    stable switch; then B restarts again, and only B's messages move until its second removal
    request rewrites switch.reduce: the state right after that write."""
    m = catalog.IGNITE.make("fixed", TWO_RESTARTS)
    world = next(iter(m.init_states()))
    world = next(w for a, w in m.successors(world) if a == ("restart", "B"))
    world = next(w for _, w in ignite_model.follow(m, world, 200)
                 if cast(Member, w.nodes[0]).switch is not None)
    first = cast(Store, world.nodes[-1]).get(REDUCE)
    assert first is not None and first.value == N("B")
    world = next(w for a, w in m.successors(world) if a == ("restart", "B"))
    while cast(Store, world.nodes[-1]).get(REDUCE) == first:
        _, world = min(((a, w) for a, w in m.successors(world)
                        if a[0] == "deliver" and "B" in a[1:3]), key=lambda s: canonical(s[0]))
    return world


def test_a_stale_reduction_request_removes_a_node_for_good_unless_its_revision_is_checked() -> None:
    """Finding IGN-11 (docs/findings.md), searched from the state of its counterexample where
    the second request is written (the whole search: `partsafe check ignite-rebalance
    --restarts 2 --max-term 1 --variant ig-stale-reduce-event`, 65 steps)."""
    start = _second_request_written()
    runs = {}
    for variant in ("ig-stale-reduce-event", "fixed"):
        m = catalog.IGNITE.make(variant, TWO_RESTARTS)
        m.init_states = lambda: [start]  # type: ignore[method-assign]
        m._goals = ()
        runs[variant] = explore(m, until="IGN-CONVERGE")
    (v,) = runs["ig-stale-reduce-event"].violations
    assert v.spec == "IGN-CONVERGE" and "stable is [A,C]" in v.message
    assert runs["fixed"].result == "ok"
    assert (runs["fixed"].distinct_states, runs["fixed"].depth) == (1228, 27)


def _stable_writes(m: Any, world: World, steps: int) -> list[World]:
    """The states right after each stable write of a fault-free run from `world`."""
    (lasso,) = m.lassos()
    out, prev = [], world
    for action, nxt in ignite_model.follow(m, world, steps):
        if lasso.marked(prev, action, nxt):
            out.append(nxt)
        prev = nxt
    return out


def _then_baseline_change(m: Any, world: World, node: str) -> World:
    """`world` with one baseline change left in its budget, taken: `node` leaves the baseline."""
    budget = list(world.budget)
    budget[BUDGET_NAMES.index("admin")] = 1
    world = world._replace(budget=tuple(budget))
    return next(w for a, w in m.successors(world) if a == ("admin", METASTORE,
                                                          ("baseline-remove", node)))


def test_the_current_sources_switch_append_makes_a_later_rebalance_loop_for_ever() -> None:
    """IGN-FINITE for the current source's branches (finding IGN-7, docs/findings.md): the
    reentry leaves switch.append holding B (or C); the baseline change that follows starts a
    rebalance whose every stable switch takes the switch.append branch again, with the same
    peers, round after round, with no fault. The rounds repeat but for the lengths of the raft
    logs, which is why a search that keeps the logs whole (`--log-window 0`) finds no cycle to
    report; the log window lowers them (tests/protocols/test_ignite_profiles.py)."""
    whole = {**SMALL, "log-window": 0}
    m = catalog.IGNITE.make("ig-source-keeps-append", whole)
    r = explore(m, until="IGN-CONVERGE")
    (v,) = r.violations
    # B or C, whichever of the two mirrored traces the search rebuilt
    assert "switch.append still holds [B]" in v.message or "holds [C]" in v.message
    writes = _stable_writes(m, _then_baseline_change(m, v.trace.steps[-1][1], "A"), 400)
    assert len(writes) >= 20
    # no raft message in flight at a stable write (the channels are FIFO: (src, dst, queue))
    assert not any(type(msg) is AppendConf for w in writes for _, _, queue in w.network
                   for msg in queue)
    # the run is in a cycle but for the logs: a round comes back, and every round after it
    rounds = [revision_ranks(ignite_model.without_log_history(w)) for w in writes]
    first: dict[World, int] = {}
    for i, w in enumerate(rounds):
        first.setdefault(w, i)
    loop, period = next((first[w], i - first[w]) for i, w in enumerate(rounds) if first[w] < i)
    assert all(rounds[i] == rounds[i + period] for i in range(loop, len(rounds) - period))
    (leader,) = [st.raft for st in writes[-1].nodes
                 if type(st) is Member and st.raft is not None and st.raft.role == LEADER]
    assert len(leader.log) > 2 * len(writes)
    # the fixed design, after its reentry finished: the same baseline change ends
    fixed = catalog.IGNITE.make("fixed", whole)
    done = next(g for g in explore(fixed).goals if g.name == "rebalance-finished").trace
    assert done is not None
    ends = _stable_writes(fixed, _then_baseline_change(fixed, done.steps[-1][1], "A"), 400)
    assert len(ends) == 1


def test_dead_claims_hold_over_the_reachable_states() -> None:
    """Trigger invokes past the trigger and inert watch events are dropped as dead: checked over
    the unreduced search of the default scope (`dead_claim_errors`)."""
    assert dead_claim_errors(catalog.IGNITE.make("fixed", {})) == []


def test_inert_watch_events_are_dead_and_others_are_not() -> None:
    p = proto()
    s = store(stable=N("AB"), pending=N("AB"))
    assert p.is_dead("A", p.initial("A"), METASTORE, Watch((Entry(STABLE, N("AB"), Rev(2)),), s))
    # C is in neither stable nor pending: its stable handler stops its replica
    assert not p.is_dead("C", p.initial("C"), METASTORE,
                         Watch((Entry(STABLE, N("AB"), Rev(2)),), store(stable=N("AB"))))
    for key, value in ((PENDING, N("AB")), (REDUCE, N("C")), (DATA_NODES, N("AB"))):
        assert not p.is_dead("A", p.initial("A"), METASTORE, Watch((Entry(key, value, Rev(2)),), s))
    assert p.is_dead("A", p.initial("A"), METASTORE, Watch((Entry(PENDING, None, Rev(2)),), s))


def test_ign_finite_marks_exactly_the_invokes_that_write_stable() -> None:
    """IGN-FINITE's marker: an invoke delivered to the metastore that writes stable; a lasso
    through such a step is a rebalance that never ends (the lasso search itself is tested in
    tests/engine/test_explore.py)."""
    m = catalog.IGNITE.make("fixed", {})
    (lasso,) = m.lassos()
    world = next(iter(m.init_states()))
    writes = Invoke("switch", Iif(All(()), (Put(STABLE, N("AB")),)))
    other = Invoke("switch", Iif(All(()), (Put(PLANNED, N("AB")),)))
    refused = Invoke("switch", Iif(Absent(STABLE), (Put(STABLE, N("AB")),)))
    assert lasso.spec == "IGN-FINITE"
    assert lasso.marked(world, ("deliver", "A", METASTORE, writes), world)
    assert not lasso.marked(world, ("deliver", "A", METASTORE, other), world)
    assert not lasso.marked(world, ("deliver", "A", METASTORE, refused), world)
    assert not lasso.marked(world, ("restart", "A"), world)


def test_a_free_ranking_chooses_assignments_some_ranking_gives_consistently() -> None:
    """`free-ranking`: four data nodes of three replicas may leave out any one node; a choice
    made stands, and a later set's choices are those a ranking giving the earlier ones gives."""
    from partsafe.refimpl.ignite import _targets

    nodes = frozenset("ABCD")
    assert len(_targets(nodes, 3, frozenset(), "ABCD")) == 4
    chosen = frozenset({(nodes, frozenset("ABD"))})
    assert _targets(nodes, 3, chosen, "ABCD") == [frozenset("ABD")]  # the choice stands
    # five nodes, D and E ranked below A, B, C: without C, A and B stay and D or E comes in
    five = frozenset({(frozenset("ABCDE"), frozenset("ABC"))})
    assert _targets(frozenset("ABDE"), 3, five, "ABCDE") == [frozenset("ABD"),
                                                               frozenset("ABE")]

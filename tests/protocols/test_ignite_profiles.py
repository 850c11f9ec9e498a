"""Ignite 3's release profiles (refimpl/profiles.py, the rules of refimpl/ignite.py's
`RULE_TABLE`): each rule against the fixed design from one concrete state, the runs the profiles'
findings rest on (docs/findings.md, IGN-18 to IGN-21), IGN-PROGRESS, and the lassos of a rebalance
that loops, with and without the raft sequence token."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, cast

import pytest

from partsafe.checker.actor.faults import BUDGET_NAMES
from partsafe.checker.actor.model import World
from partsafe.checker.artifact import judge, replay
from partsafe.checker.engine.bfs import Bounds, explore
from partsafe.checker.protocols import catalog
from partsafe.checker.protocols import ignite as ignite_model
from partsafe.checker.protocols.ignite import LogWindow, revision_ranks
from partsafe.checker.report import canonical
from partsafe.refimpl import profiles
from partsafe.refimpl.actor import Step
from partsafe.refimpl.ignite import (
    LEADER,
    METASTORE,
    RULE_TABLE,
    VARIANT_TABLE,
    AppendConf,
    Conf,
    HasData,
    IgniteRebalance,
    Member,
    Raft,
    Read,
    ReadReply,
    Watch,
)
from partsafe.refimpl.metastore import (
    APPEND,
    PENDING,
    REDUCE,
    STABLE,
    Entry,
    Rev,
    Store,
)
from partsafe.specs.ignite import Progress
from partsafe.specs.monitor import run
from partsafe.traces.events import (
    AssignmentsChanged,
    NodeRestarted,
    RaftLeader,
    RaftPeersChanged,
    RaftStarted,
)

N = frozenset
DATA = Path(__file__).parents[1] / "data"


def _saved(name: str) -> dict[str, Any]:
    return cast(dict[str, Any], json.loads((DATA / f"{name}.json").read_text()))


def _node(m: Any, world: World, name: str) -> Member:
    return cast(Member, world.nodes[m.names.index(name)])


def _store(world: World) -> Store:
    return cast(Store, world.nodes[-1])


# --- the profiles -------------------------------------------------------------------------------


def test_the_ignite_profiles_name_rules_and_variants_of_the_rebalance() -> None:
    """Each Ignite profile names only rows of refimpl/ignite.py's tables, and every rule row cites
    apache/ignite-3 at a commit."""
    for name in ("ignite-3-table", "ignite-3-zone"):
        rules = profiles.get(name).rules_of("ignite-rebalance")
        assert rules <= set(RULE_TABLE) | set(VARIANT_TABLE)
        # both eras' stable switch: neither switch key cleared, no data-nodes guard
        assert {"ig-source-keeps-append", "ig-switch-ignores-data-nodes",
                "ig-stale-reduce-event"} <= rules
    assert {"ig-table-reentry", "ig-no-sequence-token"} <= profiles.get(
        "ignite-3-table").rules_of("ignite-rebalance")
    assert "ig-restart-keeps-peer" in profiles.get("ignite-3-zone").rules_of("ignite-rebalance")
    for rule in RULE_TABLE.values():
        assert all(s.repo == "apache/ignite-3" and len(s.ref) >= 11 for s in rule.sources)


# --- ig-table-reentry (IGN-18) ------------------------------------------------------------------


def _before_the_second_restart_read() -> tuple[World, Any]:
    """IGN-16's run (the fixed design, `--restarts 2 --baseline-changes 1`) up to the answer to
    B's second restart read, and that answer's action: stable [A,C], pending [B,C], B outside
    stable, restarted while joining."""
    doc = _saved("ignite_restart_while_joining")
    _, trace, _ = replay(dict(doc, steps=doc["steps"][:38]), "ign-16")
    return trace.steps[-1][1], doc["steps"][38]["action_id"]


def _models(*rules: str) -> Any:
    entry = catalog.IGNITE
    scope = entry.scope(_saved("ignite_restart_while_joining")["params"])
    return entry.build("fixed", scope, frozenset(rules))


def test_the_table_era_polls_the_old_stable_peers_where_fixed_starts_raft() -> None:
    """`ig-table-reentry` (TableManager.handleChangePendingAssignmentEvent on recovery,
    PartitionReplicatorNodeRecovery.performGroupRecovery): B, in pending and not in stable,
    answers its restart read by polling A and C; the fixed design starts its raft node."""
    world, action_id = _before_the_second_restart_read()
    nexts = {}
    for rules in ((), ("ig-table-reentry",)):
        m = _models(*rules)
        (nexts[rules],) = [(m, a, t) for a, t in m.successors(world) if canonical(a) == action_id]
    m, action, fixed = nexts[()]
    b = _node(m, fixed, "B")
    assert b.raft is not None and b.raft.last.peers == N("AC") and b.poll is None
    assert any(e.member == "B" and e.reason == "joining"
               for e in m.step_events(world, action, fixed) if isinstance(e, RaftStarted))
    m, action, table = nexts[("ig-table-reentry",)]
    b = _node(m, table, "B")
    assert b.raft is None and b.poll == (N("AC"), N(), N()) and b.outside
    assert {(n[0], n[1], n[2]) for n in table.network} >= {("B", "A", (HasData(),)),
                                                           ("B", "C", (HasData(),))}
    assert fixed != table


def test_restarted_while_joining_under_the_table_era_the_rebalance_stalls() -> None:
    """The claim of item 6: IGN-16's run diverges at step 39 under `ig-table-reentry` and a
    fault-free run goes quiet 20 steps later (21 after step 38): stable [A,C], pending [B,C],
    switch.reduce [B], A leading [B,C], whose entry cannot commit without B. IGN-PROGRESS breaks
    there, and IGN-CONVERGE and IGN-RESTART hold. From the same state the fixed design (B starts
    raft as a joining node) keeps IGN-PROGRESS: its run ends in IGN-16 instead."""
    world, action_id = _before_the_second_restart_read()
    m = _models("ig-table-reentry")
    (nxt,) = [t for a, t in m.successors(world) if canonical(a) == action_id]
    steps = ignite_model.follow(m, nxt, 100)
    end = steps[-1][1]
    assert len(steps) == 20 and m.quiescent(end, m.successors(end))
    store = _store(end)
    assert (store.value(STABLE), store.value(PENDING), store.value(REDUCE)) == (
        N("AC"), N("BC"), N("B"))
    a, b = _node(m, end, "A"), _node(m, end, "B")
    assert b.raft is None and a.raft is not None and a.raft.role == LEADER
    assert a.raft.last == Conf(1, N("BC"), None, a.raft.last.token)
    assert a.raft.commit < len(a.raft.log)
    message = judge(m, end, "IGN-PROGRESS")
    assert message is not None and "pending [B,C] lacks a live majority ([B] stopped)" in message
    assert judge(m, end, "IGN-CONVERGE") is None and judge(m, end, "IGN-RESTART") is None
    fixed = _models()
    (nxt,) = [t for a, t in fixed.successors(world) if canonical(a) == action_id]
    end = ignite_model.follow(fixed, nxt, 100)[-1][1]
    assert fixed.quiescent(end, fixed.successors(end))
    assert judge(fixed, end, "IGN-PROGRESS") is None
    assert judge(fixed, end, "IGN-RESTART") is not None  # IGN-16


def test_the_table_profile_stalls_the_same_run() -> None:
    """The same 39 steps under the whole ignite-3-table profile (each pending event re-read
    before the change, four more steps), then a fault-free run: the stall of IGN-18, replayed
    from tests/data/ignite_table_restart_while_joining.json."""
    m, trace, message = replay(_saved("ignite_table_restart_while_joining"), "table stall")
    assert m.profile == "ignite-3-table" and trace.depth == 63
    assert message is not None and "pending [B,C] lacks a live majority" in message
    end = trace.steps[-1][1]
    assert _store(end).value(REDUCE) == N("B") and _node(m, end, "B").raft is None


def test_the_designs_reentry_stalls_a_rebalance_that_needs_the_restarted_node() -> None:
    """IGN-18 in the fixed design (`--baseline-changes 1 --max-term 1`, 23 steps): B leaves the
    data nodes, pending [A,C]; A restarts in memory, finds a majority with data, asks for its
    removal and stays stopped; the reduction waits for the rebalance, which needs A."""
    m, trace, message = replay(_saved("ignite_restart_stalls_rebalance"), "design stall")
    assert m.profile == "fixed" and trace.depth == 23
    assert message is not None and "pending [A,C] lacks a live majority ([A] stopped)" in message
    end = trace.steps[-1][1]
    assert (_store(end).value(STABLE), _store(end).value(REDUCE)) == (N("ABC"), N("A"))


@pytest.mark.parametrize(("name", "spec", "depth"), [
    ("ignite_table_keeps_append", "IGN-CONVERGE", 45),
    ("ignite_zone_restart_keeps_peer", "IGN-RESTART", 4),
])
def test_the_profiles_shortest_counterexamples_replay(name: str, spec: str, depth: int) -> None:
    """The default scope's shortest counterexample of each profile (`partsafe check
    ignite-rebalance --profile P --trace-out F`), replayed under its profile."""
    doc = _saved(name)
    m, trace, message = replay(doc, name)
    assert (doc["spec"], trace.depth, m.profile) == (spec, depth, doc["profile"])
    assert message == doc["message"]


# --- ig-no-sequence-token -----------------------------------------------------------------------


def _leader_with(token: int) -> tuple[Member, Store]:
    """A leads the committed configuration [A,B,C] (the change to it carried `token`), and a
    new pending [A,B,C] was written at revision 9."""
    c0 = Conf(0, N("ABC"), None, 0)
    log = (c0, Conf(1, N("ABC"), N("AB"), token), Conf(1, N("ABC"), None, token))
    raft = Raft(1, "A", LEADER, "A", log, 3, acks=N({("A", 3), ("B", 3), ("C", 3)}))
    store = Store((Entry(PENDING, N("ABC"), Rev(9)), Entry(STABLE, N("ABC"), Rev(9)),
                   Entry(APPEND, N("B"), Rev(9))), Rev(9))
    return Member(True, raft), store


def test_without_the_token_equal_peers_are_the_current_configuration() -> None:
    """`ig-no-sequence-token` (NodeImpl.unsafeRegisterConfChange before 55114300509, and
    TableManager.sendChangePeersAndLearnersRequest): the fixed design's leader answers a new
    pending with the same peers by a new change for its token (a joint entry and the
    AppendConf); the table era's re-reads pending, and its change is the current configuration
    again: the stable switch, with no entry appended. A pending written since makes the event
    stale: nothing."""
    watch = Watch((Entry(PENDING, N("ABC"), Rev(9)),), _leader_with(0)[1])
    fixed = IgniteRebalance(nodes=3, spares=0)
    st, _ = _leader_with(5)
    step = fixed.on_message("A", st, METASTORE, watch)
    raft = cast(Member, step.state).raft
    assert raft is not None and raft.last == Conf(1, N("ABC"), N("ABC"), Rev(9))
    assert any(type(msg) is AppendConf for _, msg in step.sends)
    table = IgniteRebalance(nodes=3, spares=0, rules=("ig-no-sequence-token",))
    st, _ = _leader_with(0)
    step = table.on_message("A", st, METASTORE, watch)
    asked = cast(Member, step.state)
    assert asked.raft == st.raft and asked.checks == (Rev(9),)
    assert step.sends == ((METASTORE, Read("pending", (PENDING,))),)
    answered: Step = table.on_message("A", asked, METASTORE, ReadReply(
        "pending", (Entry(PENDING, N("ABC"), Rev(9)),)))
    done = cast(Member, answered.state)
    assert done.raft == st.raft and done.checks == () and done.switch == (N("ABC"), "read")
    stale = table.on_message("A", asked, METASTORE, ReadReply(
        "pending", (Entry(PENDING, N("ABC"), Rev(11)),)))
    assert stale.sends == () and cast(Member, stale.state).switch is None


# --- the loop of switch.append, reported as a lasso --------------------------------------------


def _loop_start(variant: str, profile: str, window: int) -> tuple[Any, World]:
    """The end of the reentry that leaves switch.append holding a node (IGN-3, the default
    scope), one baseline change left and taken: C leaves the data nodes, A keeps leading; the
    model with no election after the first and raft indices kept up to `window`."""
    m = catalog.IGNITE.make(variant, {}, profile)
    (v,) = explore(m, until="IGN-CONVERGE").violations
    world = v.trace.steps[-1][1]
    budget = list(world.budget)
    budget[BUDGET_NAMES.index("admin")] = 1
    world = world._replace(budget=tuple(budget))
    loop = catalog.IGNITE.make(variant, {"baseline-changes": 1, "max-term": 1,
                                         "log-window": window}, profile)
    start = next(w for a, w in loop.successors(loop._canonical(world))
                 if a == ("admin", METASTORE, ("baseline-remove", "C")))
    loop.init_states = lambda: [start]  # type: ignore[method-assign]
    loop._goals = ()
    return loop, start


@pytest.mark.parametrize(("variant", "profile", "window", "cycle"), [
    ("fixed", "ignite-3-table", 0, 9),  # no token: the rounds are one state, logs included
    ("ig-source-keeps-append", "fixed", 2, 11),  # the token: a cycle once logs are lowered
])
def test_a_switch_append_that_is_never_cleared_loops_and_the_search_reports_it(
        variant: str, profile: str, window: int, cycle: int) -> None:
    """IGN-FINITE within a bound (findings IGN-7 and IGN-20): after the reentry of IGN-3, C
    leaves the data nodes and every stable switch takes the switch.append branch again. A
    search bounded by 4,000 states, which a queue of watch events to a node that never takes
    them keeps from ever completing, reports the cycle it explored."""
    m, _ = _loop_start(variant, profile, window)
    r = explore(m, stop_at_first=False, bounds=Bounds(max_states=4000))
    assert r.incomplete_reason == "state bound 4000 reached"
    (v,) = [x for x in r.violations if x.spec == "IGN-FINITE"]
    assert v.trace.loop_start is not None and v.trace.depth - v.trace.loop_start == cycle
    assert v.trace.steps[-1][1] == v.trace.steps[v.trace.loop_start - 1][1]


def test_under_the_token_the_loop_is_a_cycle_only_with_the_log_window() -> None:
    """Under the token every round appends two entries: without the log window the same
    bounded search finds no cycle."""
    m, _ = _loop_start("ig-source-keeps-append", "fixed", 0)
    r = explore(m, stop_at_first=False, bounds=Bounds(max_states=4000))
    assert r.result == "incomplete" and r.violations == []


def test_the_fixed_designs_later_rebalance_ends() -> None:
    """The fixed design, from the end of its own reentry with the same baseline change: a
    complete search, no lasso."""
    m = catalog.IGNITE.make("fixed", {})
    done = next(g for g in explore(m).goals if g.name == "rebalance-finished").trace
    assert done is not None
    world = done.steps[-1][1]
    budget = list(world.budget)
    budget[BUDGET_NAMES.index("admin")] = 1
    world = world._replace(budget=tuple(budget))
    loop = catalog.IGNITE.make("fixed", {"baseline-changes": 1, "max-term": 1,
                                         "log-window": 2})
    start = next(w for a, w in loop.successors(loop._canonical(world))
                 if a == ("admin", METASTORE, ("baseline-remove", "C")))
    loop.init_states = lambda: [start]  # type: ignore[method-assign]
    loop._goals = ()
    r = explore(loop, stop_at_first=False)
    assert r.result == "ok" and r.incomplete_reason is None


# --- the log window -----------------------------------------------------------------------------


def test_the_log_window_keeps_every_future() -> None:
    """`LogWindow` is exact: over the states a search of the looping rebalance meets with the
    logs kept whole, lowering the indices to 1 and then taking a step reaches (lowered) the
    states the step reaches from the state itself."""
    m, start = _loop_start("ig-source-keeps-append", "fixed", 0)
    window = LogWindow(1, m.protocol.nodes)

    def lower(world: World) -> World:  # the revisions of the entries cut leave no gap
        return revision_ranks(window(world))

    seen, queue, checked = {start}, [start], 0
    while queue and len(seen) < 1500:
        world = queue.pop(0)
        succ = m.successors(world)
        image = lower(world)
        if image != world:
            checked += 1
            assert {lower(t) for _, t in succ} == {lower(t) for _, t in m.successors(image)}
        for _, t in succ:
            if t not in seen:
                seen.add(t)
                queue.append(t)
    assert checked > 100


def test_the_log_window_waits_for_the_last_restart() -> None:
    """A world with a restart left keeps its logs whole: a restart can start a group afresh,
    whose indices the window would not have lowered with the others."""
    m = catalog.IGNITE.make("fixed", {"log-window": 1})
    world = next(iter(m.init_states()))
    leader = _node(m, world, "A")
    assert leader.raft is not None
    long_log = leader.raft._replace(log=leader.raft.log * 4, commit=4,
                                    acks=N({("A", 4), ("B", 4), ("C", 4)}))
    nodes = tuple(st._replace(raft=long_log) if type(st) is Member and st.raft is not None
                  else st for st in world.nodes)
    grown = world._replace(nodes=nodes, network=frozenset())
    window = LogWindow(1, m.protocol.nodes)
    assert window(grown) is grown  # the restart of the default scope is still to come
    spent = list(grown.budget)
    spent[BUDGET_NAMES.index("restarts")] = 0
    cut = window(grown._replace(budget=tuple(spent)))
    assert all(len(st.raft.log) == 1 and st.raft.commit == 1 for st in cut.nodes
               if type(st) is Member and st.raft is not None)


# --- IGN-PROGRESS ---------------------------------------------------------------------------------


def _stall_events(joint: bool) -> list[Any]:
    """The monitor's view of IGN-18's table-era stall: stable [A,C], pending [B,C], B restarted
    and stopped; with `joint` the leader appended the joint entry for [B,C] (this model), without
    it JRaft's catch-up stage kept the old configuration."""
    def key(k: str, nodes: str, rev: int) -> AssignmentsChanged:
        return AssignmentsChanged(member="A", partition=0, key=k, nodes=tuple(nodes),
                                  revision=rev, removed=False)
    events: list[Any] = [RaftStarted(member="A", peers=("A", "C"), reason="start"),
                         RaftLeader(member="A", term=1, votes=("A", "C")),
                         key(STABLE, "AC", 1), key("dataNodes", "BC", 2),
                         key(PENDING, "BC", 3), NodeRestarted(member="B", in_memory=True),
                         key(REDUCE, "B", 4)]
    if joint:
        events.insert(5, RaftPeersChanged(member="A", peers=("B", "C"), term=1))
    return events


@pytest.mark.parametrize("joint", [True, False])
def test_progress_flags_the_stall_whether_or_not_the_joint_entry_was_appended(
        joint: bool) -> None:
    """Item 9, JRaft's catch-up stage: the verdict does not depend on it, since IGN-PROGRESS
    reads the target from pending."""
    ((event, message),) = run(Progress(3), _stall_events(joint), quiescent_at_end=True)
    assert event is None and "pending [B,C] lacks a live majority ([B] stopped)" in message


def test_progress_holds_while_pending_keeps_a_live_majority_or_stable_has_none() -> None:
    started = [*_stall_events(True), RaftStarted(member="B", peers=("A", "C"), reason="joining")]
    assert run(Progress(3), started, quiescent_at_end=True) == []  # B runs again
    lost = [*_stall_events(True), NodeRestarted(member="C", in_memory=True)]
    assert run(Progress(3), lost, quiescent_at_end=True) == []  # stable lost C too: data gone


# --- the zoo ------------------------------------------------------------------------------------


def test_the_zoo_reports_the_fixed_designs_known_finding_and_fails_on_any_other() -> None:
    """The fixed design at the zoo's `--baseline-changes 1 --max-term 1` breaks IGN-PROGRESS
    (IGN-18): a known finding, reported and not failing the run; any other violation, or a
    search a bound stopped, fails it."""
    from partsafe.checker.engine.result import Result, Trace, Violation
    from partsafe.checker.zoo import FIXED_FINDINGS, judge_fixed

    findings = FIXED_FINDINGS["ignite-rebalance"]
    assert findings == {"IGN-PROGRESS": "IGN-18"}

    def result(*specs: str, incomplete: str | None = None) -> Result:
        trace = Trace(None, 0, [])
        return cast(Result, type("R", (), {
            "violations": [Violation(s, "m", trace) for s in specs],
            "incomplete_reason": incomplete})())

    assert judge_fixed(result(), findings) == (True, {})
    assert judge_fixed(result("IGN-PROGRESS"), findings) == (True, {"IGN-PROGRESS": "IGN-18"})
    assert judge_fixed(result("IGN-PROGRESS", "IGN-RESTART"), findings)[0] is False
    assert judge_fixed(result(incomplete="time bound 1 s reached"), findings)[0] is False
    assert judge_fixed(result("IGN-PROGRESS"), {}) == (False, {})  # --strict


def test_a_new_leader_of_the_table_era_redrives_pending_without_a_token() -> None:
    """No rule for `onLeaderElected`: the table path's listener does nothing from 52171333851
    (RebalanceRaftGroupEventsListener.onLeaderElected), but the primary replica re-drives the
    rebalance (ReplicaImpl.changePeersAndLearnersAsyncIfPendingExists): a linearizable read of
    pending and changePeersAndLearnersAsync with no token, whose equal configuration is
    JRaft's callback again. The model's new leader does the same under the profile: pending
    equal to its committed configuration, the stable switch; another pending, a change whose
    entries carry no token."""
    table = IgniteRebalance(nodes=3, spares=0, rules=("ig-no-sequence-token",))
    st, _ = _leader_with(0)
    st = st._replace(elected=True)
    same = table.on_message("A", st, METASTORE, ReadReply(
        "elected", (Entry(PENDING, N("ABC"), Rev(9)),)))
    assert cast(Member, same.state).switch == (N("ABC"), "read")
    assert cast(Member, same.state).raft == st.raft
    other = table.on_message("A", st, METASTORE, ReadReply(
        "elected", (Entry(PENDING, N("AB"), Rev(9)),)))
    raft = cast(Member, other.state).raft
    assert raft is not None and raft.last == Conf(1, N("AB"), N("ABC"), 0)

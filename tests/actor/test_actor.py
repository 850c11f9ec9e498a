"""The actor layer on the 002 membership handlers: network, faults, budgets, symmetry."""

from __future__ import annotations

from collections import deque
from collections.abc import Hashable
from typing import Any, NamedTuple

import pytest

from partsafe.checker.actor.faults import (
    CRASH,
    CRASHED,
    DUPLICATION,
    FAULT_KINDS,
    JOIN,
    LOSS,
    PUBLISH,
    SUSPICION,
    Budget,
)
from partsafe.checker.actor.model import ACTION_KINDS, ActorModel, World
from partsafe.checker.actor.network import dead_claim_errors
from partsafe.checker.actor.symmetry import rename
from partsafe.checker.engine.bfs import explore
from partsafe.checker.protocols import catalog
from partsafe.refimpl.actor import Channels, Protocol, Step
from partsafe.refimpl.membership import JoinRequest, MemberState, MembersUpdate
from partsafe.traces.events import MemberCrashed, MemberListInstalled, MemberListRejected

NO_FAULTS = {"crashes": 0, "joins": 0, "suspicions": 0, "losses": 0, "duplications": 0,
             "publishes": 0}
SYMMETRY_SCOPE = {"members": 2, "joiners": 2, "joins": 2, "crashes": 0, "suspicions": 0,
                  "publishes": 0}


def make(variant: str = "fixed", **scope: int) -> ActorModel:
    model = catalog.get("membership").make(variant, {**NO_FAULTS, **scope})
    assert isinstance(model, ActorModel)
    return model


def init(model: ActorModel) -> World:
    (world,) = model.init_states()
    return world


def successors_of(model: ActorModel, world: World, kind: str) -> list[tuple[tuple, World]]:
    return [(a, w) for a, w in model.successors(world) if a[0] == kind]


def reachable(model: ActorModel, limit: int | None = None) -> set[World]:
    """Every state reachable from the initial state (up to `limit` states), plain BFS."""
    seen = set(model.init_states())
    queue = deque(seen)
    while queue and (limit is None or len(seen) < limit):
        s = queue.popleft()
        for _, t in model.successors(s):
            if t not in seen:
                seen.add(t)
                queue.append(t)
    return seen


def swap_nodes(model: ActorModel, world: World, mapping: dict[str, str]) -> World:
    """`world` with nodes renamed by `mapping`: every node state, message and monitor state
    renamed, and node states moved to their new names' slots."""
    nodes: list[Any] = list(world.nodes)
    for i, name in enumerate(model.names):
        nodes[model.index[mapping.get(name, name)]] = rename(world.nodes[i], mapping)
    return World(tuple(nodes), rename(world.network, mapping), world.budget,
                 rename(world.monitors, mapping), rename(world.flags, mapping))


# --- the initial state --------------------------------------------------------------------------


def test_initial_world() -> None:
    model = make(members=2, joiners=1, crashes=1, joins=1)
    world = init(model)
    assert model.names == ("A", "B", "C")
    a, b, c = world.nodes
    assert a == b == MemberState(2, ("A", "B"), "A", frozenset(), None, True)
    assert c is None
    assert world.network == frozenset()
    assert world.budget == (1, 1, 0, 0, 0, 0, 0, 0, 0, 0)
    assert world.flags == ()
    assert len(world.monitors) == 9  # the membership specs' monitors (MEMBERSHIP_MONITORS)
    assert model.scope == {"members": 2, "joiners": 1, "crashes": 1, "joins": 1,
                           "suspicions": 0, "losses": 0, "duplications": 0, "publishes": 0,
                           "shutdowns": 0, "reorders": 0}
    assert ACTION_KINDS == ("deliver", "timer", "suspect", "heartbeat", "admin", "crash",
                            "drop", "duplicate", "false-suspect", "join", "reorder",
                            "restart", "shutdown", "timer-race")
    assert set(catalog.MEMBERSHIP.action_kinds) == set(ACTION_KINDS) - {
        "reorder", "shutdown", "restart", "admin"}


def test_budget_tuple_order() -> None:
    b = Budget(crashes=1, joins=2, suspicions=3, losses=4, duplications=5, publishes=6)
    assert b.as_tuple() == (1, 2, 3, 4, 5, 6, 0, 0, 0, 0)
    assert Budget(shutdowns=7, reorders=8, restarts=9, admin=10).as_tuple() == (
        0, 0, 0, 0, 0, 0, 7, 8, 9, 10)
    assert (CRASH, JOIN, SUSPICION, LOSS, DUPLICATION, PUBLISH) == (0, 1, 2, 3, 4, 5)


# --- crashes and the network ------------------------------------------------------------------


def test_crash_removes_messages_to_the_crashed_node_and_keeps_those_from_it() -> None:
    model = make(members=3, joiners=0, crashes=1)
    world = init(model)
    to_b = ("A", "B", MembersUpdate(4, ("A", "B", "C")), 0)
    to_b_again = ("C", "B", MembersUpdate(5, ("A", "B", "C")), 0)
    from_b = ("B", "A", MembersUpdate(3, ("A", "B")), 0)
    to_c = ("A", "C", MembersUpdate(4, ("A", "B", "C")), 0)
    world = world._replace(network=frozenset({to_b, to_b_again, from_b, to_c}))
    crashes = dict(successors_of(model, world, "crash"))
    assert set(crashes) == {("crash", "A"), ("crash", "B"), ("crash", "C")}
    after = crashes[("crash", "B")]
    assert after.nodes[1] is CRASHED
    assert after.nodes[0] == world.nodes[0] and after.nodes[2] == world.nodes[2]
    assert after.network == frozenset({from_b, to_c})
    assert after.budget == (0,) * 10
    # the monitors saw the crash: M2 now knows B is not alive
    assert model.step_events(world, ("crash", "B"), after) == (MemberCrashed(member="B"),)
    agreement = dict(after.monitors[1])
    assert agreement["B"] == (None, False)
    assert agreement["A"] == ((3, ("A", "B", "C")), True)
    # with the crash budget spent, nobody else may crash
    assert successors_of(model, after, "crash") == []


def test_crashed_node_gets_no_deliveries_and_sends_nothing() -> None:
    model = make(members=3, joiners=0, crashes=1)
    world = dict(successors_of(model, init(model), "crash"))[("crash", "C")]
    assert world.nodes[2] is CRASHED
    for action, _ in model.successors(world):
        assert "C" not in action[1:2] or action[0] == "suspect"
    # the others may now justly suspect C
    suspects = {a for a, _ in successors_of(model, world, "suspect")}
    assert suspects == {("suspect", "A", "C"), ("suspect", "B", "C")}


def test_duplicate_then_deliver_twice() -> None:
    model = make(members=2, joiners=1, duplications=1)
    world = init(model)
    msg = MembersUpdate(3, ("A", "B", "C"))
    world = world._replace(network=frozenset({("A", "B", msg, 0)}))
    dups = successors_of(model, world, "duplicate")
    assert [a for a, _ in dups] == [("duplicate", "A", "B", msg)]
    doubled = dups[0][1]
    assert doubled.network == frozenset({("A", "B", msg, 0), ("A", "B", msg, 1)})
    assert doubled.budget[DUPLICATION] == 0
    assert doubled.nodes == world.nodes
    # the copies are one message to deliver: one deliver action, no second duplication
    delivers = successors_of(model, doubled, "deliver")
    assert [a for a, _ in delivers] == [("deliver", "A", "B", msg)]
    assert successors_of(model, doubled, "duplicate") == []
    once = delivers[0][1]
    assert once.network == frozenset({("A", "B", msg, 0)})
    assert once.nodes[1] == MemberState(3, ("A", "B", "C"), "A", frozenset(), None, True)
    assert model.step_events(doubled, delivers[0][0], once) == (
        MemberListInstalled(member="B", version=3, members=("A", "B", "C"), master="A"),)
    (again,) = successors_of(model, once, "deliver")
    twice = again[1]
    assert twice.network == frozenset()
    assert twice.nodes == once.nodes  # the copy is stale at B
    assert model.step_events(once, again[0], twice) == (
        MemberListRejected(member="B", sender="A", version=3, reason="stale version"),)
    assert twice.flags == ()


def test_drop_removes_one_copy_and_spends_a_loss() -> None:
    model = make(members=2, joiners=1, losses=2)
    world = init(model)
    msg = MembersUpdate(3, ("A", "B", "C"))
    world = world._replace(network=frozenset({("A", "B", msg, 0), ("A", "B", msg, 1)}))
    (drop,) = successors_of(model, world, "drop")
    assert drop[0] == ("drop", "A", "B", msg)
    assert drop[1].network == frozenset({("A", "B", msg, 0)})
    assert drop[1].budget[LOSS] == 1
    assert drop[1].nodes == world.nodes
    (drop2,) = successors_of(model, drop[1], "drop")
    assert drop2[1].network == frozenset()
    assert drop2[1].budget[LOSS] == 0


def test_join_starts_a_dormant_node_and_spends_a_join() -> None:
    model = make(members=2, joiners=1, joins=1)
    world = init(model)
    (join,) = successors_of(model, world, "join")
    assert join[0] == ("join", "C")
    joined = join[1]
    assert joined.budget[JOIN] == 0
    assert joined.nodes[2] == model.protocol.on_join("C").state
    assert joined.nodes[2].joined is False and joined.nodes[2].members == ()
    assert joined.network == frozenset({("C", "A", JoinRequest(), 0)})
    assert successors_of(model, joined, "join") == []


def test_messages_to_a_crashed_node_are_not_sent() -> None:
    model = make(members=3, joiners=1, joins=1)
    world = init(model)
    joiner = model.protocol.on_join("D").state
    world = world._replace(nodes=(world.nodes[0], CRASHED, world.nodes[2], joiner),
                           network=frozenset({("D", "A", JoinRequest(), 0)}))
    ((action, after),) = successors_of(model, world, "deliver")
    assert action == ("deliver", "D", "A", JoinRequest())
    update = MembersUpdate(4, ("A", "B", "C", "D"))
    assert after.nodes[0].members == ("A", "B", "C", "D")
    assert after.network == frozenset({("A", "C", update, 0), ("A", "D", update, 0)})


# --- budgets ----------------------------------------------------------------------------------

SLOT = {"crash": CRASH, "join": JOIN, "false-suspect": SUSPICION, "drop": LOSS,
        "duplicate": DUPLICATION, "timer-race": PUBLISH}


def test_every_fault_spends_its_budget_and_budgets_never_go_negative() -> None:
    model = make(members=2, joiners=1, crashes=1, joins=1, suspicions=1, losses=1,
                 duplications=1, publishes=1)
    # membership has a multiset network and no shutdown requests: those two kinds are the
    # partition service's (tests/protocols/test_partition_service.py)
    assert set(SLOT) == FAULT_KINDS - {"shutdown", "reorder", "restart", "admin"}
    states = reachable(model, limit=4000)
    assert len(states) >= 4000
    spent: dict[str, int] = dict.fromkeys(SLOT, 0)
    for s in states:
        assert all(b >= 0 for b in s.budget)
        kinds = set()
        for action, t in model.successors(s):
            kind = action[0]
            kinds.add(kind)
            assert all(b >= 0 for b in t.budget)
            if kind in SLOT:
                expected = list(s.budget)
                expected[SLOT[kind]] -= 1
                assert list(t.budget) == expected, action
                spent[kind] += 1
            else:
                assert t.budget == s.budget, action
        for kind, slot in SLOT.items():
            if s.budget[slot] == 0:
                assert kind not in kinds
    assert all(n > 0 for n in spent.values()), spent


def test_false_suspicion_needs_budget() -> None:
    model = make(members=2, joiners=0, suspicions=1)
    world = init(model)
    fs = successors_of(model, world, "false-suspect")
    assert {a for a, _ in fs} == {("false-suspect", "A", "B"), ("false-suspect", "B", "A")}
    master_removes = dict(fs)[("false-suspect", "A", "B")]
    assert master_removes.budget[SUSPICION] == 0
    assert master_removes.nodes[0].members == ("A",)
    assert successors_of(model, master_removes, "false-suspect") == []


def test_timer_race_spends_a_publish() -> None:
    model = make(members=2, joiners=0, publishes=1)
    world = init(model)
    # B already holds A's list: the periodic publish takes effect nowhere, so it is only a race
    assert successors_of(model, world, "timer") == []
    (race,) = successors_of(model, world, "timer-race")
    assert race[0] == ("timer-race", "A", ("publish",), "B")
    assert race[1].budget[PUBLISH] == 0
    assert race[1].network == frozenset({("A", "B", MembersUpdate(2, ("A", "B")), 0)})
    assert successors_of(model, race[1], "timer-race") == []


# --- symmetry ---------------------------------------------------------------------------------


def test_symmetry_declared_only_for_two_or_more_joiners() -> None:
    assert make(members=2, joiners=1).has_symmetry is False
    model = make(members=2, joiners=2)
    assert model.has_symmetry is True
    world = init(model)
    assert model.representative(world) == world  # nobody joined: the state is its own image


def test_symmetry_is_sound_and_reduces() -> None:
    model = make(**SYMMETRY_SCOPE)
    full = explore(make(**SYMMETRY_SCOPE), symmetry=False,
                   action_kinds=catalog.MEMBERSHIP.action_kinds)
    sym = explore(model, symmetry=True, action_kinds=catalog.MEMBERSHIP.action_kinds)
    assert full.symmetry is False and sym.symmetry is True
    assert full.result == sym.result == "gap"
    assert full.violations == [] and sym.violations == []
    reached = {g.name for g in full.goals if g.reached}
    assert reached == {"join-completes"}
    assert {g.name for g in sym.goals if g.reached} == reached
    assert full.distinct_states == 84
    assert full.depth == sym.depth == 9
    assert sym.never_fired == full.never_fired
    assert sym.distinct_states < full.distinct_states
    # C and D are interchangeable joiners: the reachable states fall into 43 orbits
    assert sym.distinct_states == 43


def test_reachable_states_come_in_symmetric_pairs() -> None:
    model = make(**SYMMETRY_SCOPE)
    states = reachable(model)
    assert len(states) == 84
    swap = {"C": "D", "D": "C"}
    images = {swap_nodes(model, s, swap) for s in states}
    assert images == states
    orbits = {frozenset({s, swap_nodes(model, s, swap)}) for s in states}
    assert len(orbits) == 43


def test_representative_is_a_reachable_member_of_the_orbit() -> None:
    model = make(**SYMMETRY_SCOPE)
    states = reachable(model)
    swap = {"C": "D", "D": "C"}
    for s in states:
        r = model.representative(s)
        assert r in (s, swap_nodes(model, s, swap))
        assert r in states
        assert model.representative(swap_nodes(model, s, swap)) == r


def test_symmetric_goal_traces_replay() -> None:
    model = make(**SYMMETRY_SCOPE)
    r = explore(model, symmetry=True)
    (goal,) = [g for g in r.goals if g.reached]
    assert goal.trace is not None
    state = goal.trace.init
    for action, nxt in goal.trace.steps:
        assert (action, nxt) in model.successors(state)
        state = nxt
    assert goal.trace.steps[-1][0][0] == "deliver"
    assert goal.trace.depth == 3  # join, request delivered, list delivered


# --- rename -----------------------------------------------------------------------------------


class Pair(NamedTuple):
    left: Any
    right: Any


def test_rename_maps_names_through_nested_values() -> None:
    m = {"C": "D", "D": "C"}
    assert rename("C", m) == "D"
    assert rename("A", m) == "A"
    assert rename(7, m) == 7
    assert rename(None, m) is None
    assert rename(True, m) is True
    value = (("C", 3), frozenset({"D", ("C", 1)}), Pair("C", Pair(frozenset({"D"}), 4)), 5)
    out = rename(value, m)
    assert out == (("D", 3), frozenset({"C", ("D", 1)}), Pair("D", Pair(frozenset({"C"}), 4)), 5)
    assert type(out[2]) is Pair and type(out[2].right) is Pair
    assert type(out[1]) is frozenset
    st = MemberState(4, ("A", "B", "C", "D"), "A", frozenset({"C"}), None, True)
    renamed = rename(st, m)
    assert type(renamed) is MemberState
    assert renamed == MemberState(4, ("A", "B", "D", "C"), "A", frozenset({"D"}), None, True)
    msg = rename(MembersUpdate(4, ("A", "C")), m)
    assert type(msg) is MembersUpdate and msg == MembersUpdate(4, ("A", "D"))


def test_rename_leaves_ints_and_unmapped_values() -> None:
    assert rename((1, 2, (3, frozenset({4}))), {"1": "2"}) == (1, 2, (3, frozenset({4})))
    assert rename("CD", {"C": "D"}) == "CD"  # whole names only
    assert rename((), {"C": "D"}) == ()


@pytest.mark.parametrize("variant", ["fixed", "hz38-unordered-members"])
def test_describe_state_is_json_like(variant: str) -> None:
    model = make(variant, members=2, joiners=1, joins=1)
    view = model.describe_state(init(model))
    assert view["A"]["members"] == ["A", "B"]
    assert view["C"] == "dormant"
    assert view["network"] == []
    assert view["budget left"] == {"crashes": 0, "joins": 1, "suspicions": 0, "losses": 0,
                                   "duplications": 0, "publishes": 0, "shutdowns": 0,
                                       "reorders": 0}


# --- a node stuck mid-protocol is a deadlock -----------------------------------------------------


class _Waiter(Protocol):
    """One node that waits for an answer nobody sends (or, with `answered`, gets it)."""

    name = "waiter"

    def __init__(self, answered: bool) -> None:
        self.nodes = ("A", "B")
        self.answered = answered

    def initial(self, node: str) -> str:
        return "waiting" if node == "A" else "idle"

    def on_message(self, node: str, state: Hashable, src: str, msg: Hashable) -> Step:
        return Step("done")

    def timers(self, node: str, state: Hashable) -> tuple[tuple[str], ...]:
        return (("answer",),) if node == "B" and state == "idle" and self.answered else ()

    def on_timer(self, node: str, state: Hashable, timer: Hashable) -> Step:
        return Step("answered", (("A", "answer"),))


def _waiter_model(answered: bool) -> ActorModel:
    return ActorModel(_Waiter(answered), Budget(), [], busy=lambda n, st: st == "waiting")


def test_a_node_waiting_for_ever_is_a_deadlock() -> None:
    result = explore(_waiter_model(answered=False))
    assert result.result == "violation"
    (v,) = result.violations
    assert v.spec == "DEADLOCK" and v.trace.depth == 0
    assert v.message.startswith("A cannot make progress")


def test_a_node_that_gets_its_answer_is_no_deadlock() -> None:
    result = explore(_waiter_model(answered=True))
    assert result.result == "ok"
    assert result.distinct_states == 3


# --- dead messages are discarded -----------------------------------------------------------------


class _Versions(Protocol):
    """A sends B versions 1 and 2 (a timer each); B keeps the highest. A version at most B's is
    dead at B. Wrong claims: `overclaim` covers the next version too (its delivery is no
    no-op); `forgetful` stops claiming once B reaches 2 (the claim is not kept)."""

    name = "versions"

    def __init__(self, fifo: bool, overclaim: bool = False, forgetful: bool = False) -> None:
        self.nodes = ("A", "B")
        self.channels = Channels(fifo=fifo, dead=self.is_dead)
        self.overclaim = overclaim
        self.forgetful = forgetful

    def initial(self, node: str) -> int:
        return 0

    def on_message(self, node: str, state: Hashable, src: str, msg: Hashable) -> Step:
        return Step(max(state, msg))  # type: ignore[call-overload]

    def is_dead(self, node: str, state: Hashable, src: str, msg: Hashable) -> bool:
        if self.forgetful and state == 2:
            return False
        return msg <= state + (1 if self.overclaim else 0)  # type: ignore[operator]

    def timers(self, node: str, state: Hashable) -> tuple[tuple[str], ...]:
        return (("send",),) if node == "A" and state < 2 else ()  # type: ignore[operator]

    def on_timer(self, node: str, state: Hashable, timer: Hashable) -> Step:
        return Step(state + 1, (("B", state + 1),))  # type: ignore[operator]


def _versions_model(fifo: bool, discard: bool = True, overclaim: bool = False,
                    forgetful: bool = False, **budget: int) -> ActorModel:
    return ActorModel(_Versions(fifo, overclaim, forgetful), Budget(**budget), [],
                      discard_dead=discard)


@pytest.mark.parametrize("fifo", [True, False])
def test_a_message_its_receiver_outgrew_is_discarded(fifo: bool) -> None:
    kept = reachable(_versions_model(fifo, discard=False, reorders=1))
    reduced = reachable(_versions_model(fifo, reorders=1))
    # without discarding, B may hold 2 while version 1 is still in flight; never with it
    stale = [w for w in kept if w.nodes[1] == 2 and w.network]
    assert stale and not [w for w in reduced if w.nodes[1] == 2 and w.network]
    # discarding loses no node state: each state's nodes are reached either way
    assert {w.nodes for w in reduced} == {w.nodes for w in kept}
    assert len(reduced) < len(kept)


@pytest.mark.parametrize("fifo", [True, False])
def test_dead_claims_are_checked_over_the_reachable_states(fifo: bool) -> None:
    assert dead_claim_errors(_versions_model(fifo, reorders=1)) == []
    errors = dead_claim_errors(_versions_model(fifo, overclaim=True, reorders=1))
    assert errors and "claimed dead but its delivery" in errors[0]
    errors = dead_claim_errors(_versions_model(fifo, forgetful=True, duplications=1))
    assert errors and "claimed dead but not after deliver" in errors[0]

"""The breadth-first explorer on hand-written graphs, and its calibration on TwoPhase."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from unittest.mock import patch

import numpy as np
import pytest

from partsafe.checker.engine.bfs import (
    DEADLOCK,
    MODEL_ERROR,
    Bounds,
    explore,
    step_views,
)
from partsafe.checker.engine.edges import EdgeLog
from partsafe.checker.engine.fingerprints import FingerprintTable
from partsafe.checker.engine.lassos import cyclic_core
from partsafe.checker.engine.model import Action, Goal, Lasso, Model, Property
from partsafe.checker.protocols.twophase import TwoPhase

Edges = dict[int, list[tuple[str, int]]]

# 0 -a-> 1 -c-> 3 -e-> 4 -g-> 5        a diamond (0 to 3 two ways), a cycle (3 <-> 4)
# 0 -b-> 2 -d-> 3 <-f- 4               and a longer way to 5: 0 -long-> 10 -> 11 -> 12 -> 13 -> 5
DIAMOND: Edges = {
    0: [("a", 1), ("b", 2), ("long", 10)],
    1: [("c", 3)],
    2: [("d", 3)],
    3: [("e", 4)],
    4: [("f", 3), ("g", 5)],
    10: [("x", 11)],
    11: [("y", 12)],
    12: [("z", 13)],
    13: [("w", 5)],
    5: [("h", 0)],
}
DIAMOND_KINDS = ("a", "b", "c", "d", "e", "f", "g", "h", "long", "w", "x", "y", "z")


class Graph(Model[int]):
    """A model given by its edges; actions are ``(label,)``."""

    name = "graph"

    def __init__(
        self,
        edges: Edges,
        *,
        inits: Iterable[int] = (0,),
        properties: Sequence[Property[int]] = (),
        goals: Sequence[Goal[int]] = (),
        finished: Callable[[int], bool] = lambda s: False,
        quiescent: Callable[[int], bool] = lambda s: False,
    ) -> None:
        self.edges = edges
        self.inits = list(inits)
        self._properties = list(properties)
        self._goals = list(goals)
        self._finished = finished
        self._quiescent = quiescent
        self.scope = {"states": len(edges)}
        self.expanded: list[int] = []

    def init_states(self) -> Iterable[int]:
        return list(self.inits)

    def actions(self, state: int) -> Iterable[Action]:
        return [(label,) for label, _ in self.edges.get(state, [])]

    def next_state(self, state: int, action: Action) -> int | None:
        return dict(self.edges[state])[action[0]]

    def successors(self, state: int) -> list[tuple[Action, int]]:
        self.expanded.append(state)
        return super().successors(state)

    def properties(self) -> Sequence[Property[int]]:
        return self._properties

    def goals(self) -> Sequence[Goal[int]]:
        return self._goals

    def finished(self, state: int) -> bool:
        return self._finished(state)

    def quiescent(self, state: int, successors: Sequence[tuple[Action, int]]) -> bool:
        return self._quiescent(state)


def never(value: int, spec: str = "NOT") -> Property[int]:
    return Property(spec, "always", lambda s: f"reached {s}" if s == value else None)


def labels(trace) -> list[str]:
    return [a[0] for a, _ in trace.steps]


# --- shortest counterexamples -----------------------------------------------------------------


def test_bfs_gives_the_shortest_counterexample() -> None:
    model = Graph(DIAMOND, properties=[never(5, "NOT-FIVE")])
    r = explore(model)
    assert r.result == "violation"
    assert r.model == "graph" and r.variant == "fixed" and r.scope == {"states": 10}
    assert r.symmetry is False  # the model declares no symmetry
    (v,) = r.violations
    assert v.spec == "NOT-FIVE"
    assert v.message == "reached 5"
    assert v.trace.init == 0 and v.trace.init_index == 0
    assert labels(v.trace) == ["a", "c", "e", "g"]
    assert [s for _, s in v.trace.steps] == [1, 3, 4, 5]
    assert v.trace.depth == 4
    views = step_views(model, v.trace)
    assert [view.action for view in views] == ["init", "a", "c", "e", "g"]
    assert views[-1].state == {"state": "5"}


def test_violation_in_an_initial_state_has_an_empty_trace() -> None:
    model = Graph(DIAMOND, inits=[1, 4], properties=[never(4, "NOT-FOUR")])
    r = explore(model)
    assert r.result == "violation"
    (v,) = r.violations
    assert (v.trace.init, v.trace.init_index, v.trace.steps) == (4, 1, [])
    assert r.depth == 0


def test_violation_second_init_state_trace() -> None:
    model = Graph(DIAMOND, inits=[12, 2], properties=[never(4)])
    (v,) = explore(model).violations
    assert v.trace.init_index == 1
    assert labels(v.trace) == ["d", "e"]


def test_clean_graph_is_ok_and_counts_are_exact() -> None:
    model = Graph(DIAMOND, properties=[never(99)])
    r = explore(model, action_kinds=(*DIAMOND_KINDS, "never"))
    assert r.result == "ok"
    assert r.violations == []
    assert r.distinct_states == 10
    assert r.transitions == 13
    # levels: {0} {1,2,10} {3,11} {4,12} {5,13}; 5 and 13 are expanded at depth 4
    assert r.depth == 4
    assert r.incomplete_reason is None
    assert r.fired == {"a": 1, "b": 1, "c": 1, "d": 1, "e": 1, "f": 1, "g": 1, "h": 1,
                       "long": 1, "never": 0, "w": 1, "x": 1, "y": 1, "z": 1}
    assert r.never_fired == ["never"]
    assert list(r.fired) == sorted(r.fired)
    assert sorted(set(model.expanded)) == sorted(DIAMOND)
    assert len(model.expanded) == 10  # each state expanded once


def test_fired_counts_every_transition_and_unknown_kinds() -> None:
    edges: Edges = {0: [("a", 1), ("b", 1)], 1: [("a", 2), ("c", 0)], 2: [("a", 2)]}
    r = explore(Graph(edges), action_kinds=("a", "b", "d", "e"))
    assert r.result == "ok"
    assert (r.distinct_states, r.depth) == (3, 2)
    assert r.fired == {"a": 3, "b": 1, "c": 1, "d": 0, "e": 0}
    assert r.never_fired == ["d", "e"]
    assert r.transitions == 5


# --- bounds -----------------------------------------------------------------------------------


def counter(n: int) -> list[tuple[str, int]]:
    return [("inc", n + 1)]


class Infinite(Model[int]):
    """0 -> 1 -> 2 -> ... for ever (a chain), or a binary tree when `wide`."""

    name = "infinite"

    def __init__(self, wide: bool = False, delay: float = 0.0) -> None:
        self.wide = wide
        self.delay = delay
        self.scope = {}

    def init_states(self) -> Iterable[int]:
        return [0]

    def successors(self, state: int) -> list[tuple[Action, int]]:
        if self.delay:
            time.sleep(self.delay)
        if self.wide:
            return [(("left",), 2 * state + 1), (("right",), 2 * state + 2)]
        return [(("inc",), state + 1)]


def test_depth_bound_is_incomplete() -> None:
    r = explore(Graph(DIAMOND, properties=[never(99)]), bounds=Bounds(max_depth=2))
    assert r.result == "incomplete"
    assert r.incomplete_reason == "depth bound 2 reached"
    assert r.depth == 2
    assert r.distinct_states == 6  # levels 0, 1 and 2


def test_depth_bound_hides_a_deeper_violation_but_never_says_ok() -> None:
    r = explore(Graph(DIAMOND, properties=[never(5)]), bounds=Bounds(max_depth=3))
    assert r.result == "incomplete"
    assert r.violations == []
    r = explore(Graph(DIAMOND, properties=[never(5)]), bounds=Bounds(max_depth=4))
    assert r.result == "violation"


def test_depth_bound_on_an_infinite_model() -> None:
    r = explore(Infinite(), bounds=Bounds(max_depth=50))
    assert (r.result, r.incomplete_reason) == ("incomplete", "depth bound 50 reached")
    assert r.distinct_states == 51


def test_state_bound_is_incomplete() -> None:
    r = explore(Infinite(), bounds=Bounds(max_states=40))
    assert r.result == "incomplete"
    assert r.incomplete_reason == "state bound 40 reached"
    assert r.distinct_states == 40
    r = explore(Infinite(wide=True), bounds=Bounds(max_states=100))
    assert r.result == "incomplete"
    assert r.incomplete_reason == "state bound 100 reached"
    assert 100 <= r.distinct_states <= 101


def test_state_bound_above_the_state_count_is_ok() -> None:
    r = explore(Graph(DIAMOND), bounds=Bounds(max_states=11))
    assert r.result == "ok"
    assert r.distinct_states == 10


def test_time_bound_on_a_wide_model_is_incomplete() -> None:
    r = explore(Infinite(wide=True), bounds=Bounds(max_seconds=0.05))
    assert r.result == "incomplete"
    assert r.incomplete_reason == "time bound 0.05 s reached"
    assert r.seconds < 5
    assert r.violations == []


def test_time_bound_on_a_narrow_model_is_incomplete() -> None:
    # a chain whose levels hold one state each: the time bound must still end the search
    r = explore(Infinite(delay=0.001), bounds=Bounds(max_seconds=0.1, max_depth=1000))
    assert r.result == "incomplete"
    assert r.incomplete_reason == "time bound 0.1 s reached"
    assert r.seconds < 0.6


def test_progress_is_reported() -> None:
    seen = []
    explore(Infinite(wide=True), bounds=Bounds(max_states=20000), progress=seen.append,
            progress_interval=0.0)
    assert seen
    assert all(p.distinct_states > 0 and p.seconds >= 0 for p in seen)
    assert [p.distinct_states for p in seen] == sorted(p.distinct_states for p in seen)


# --- deadlocks, goals, keep going, quiescence ---------------------------------------------------


def test_state_without_successors_is_a_deadlock() -> None:
    edges: Edges = {0: [("a", 1), ("b", 2)], 1: [("c", 3)], 2: [("d", 2)], 3: []}
    r = explore(Graph(edges))
    assert r.result == "violation"
    (v,) = r.violations
    assert v.spec == DEADLOCK == "DEADLOCK"
    assert v.message == "no action is enabled and the protocol has not finished"
    assert labels(v.trace) == ["a", "c"]


class Raising(Graph):
    """The diamond, but expanding state 3 raises, as a handler with a bug would."""

    def successors(self, state: int) -> list[tuple[Action, int]]:
        if state == 3:
            raise ValueError("replicas hold member B twice")
        return super().successors(state)


def test_a_step_that_raises_is_a_model_error_with_its_trace() -> None:
    result = explore(Raising(DIAMOND), action_kinds=DIAMOND_KINDS)
    assert result.result == "violation"
    (v,) = result.violations
    assert v.spec == MODEL_ERROR
    assert v.message == "ValueError: replicas hold member B twice"
    assert [a for a, _ in v.trace.steps] in ([("a",), ("c",)], [("b",), ("d",)])


def test_a_model_error_does_not_stop_a_keep_going_search() -> None:
    result = explore(Raising(DIAMOND), stop_at_first=False, action_kinds=DIAMOND_KINDS)
    assert [v.spec for v in result.violations] == [MODEL_ERROR]
    assert result.distinct_states == len(DIAMOND) - 1  # 4 lies only behind state 3


def test_finished_state_without_successors_is_no_deadlock() -> None:
    edges: Edges = {0: [("a", 1), ("b", 2)], 1: [("c", 3)], 2: [("d", 2)], 3: []}
    r = explore(Graph(edges, finished=lambda s: s == 3))
    assert r.result == "ok"
    assert r.violations == []
    assert (r.distinct_states, r.depth) == (4, 2)
    # finished only matters without successors: a finished state with successors is expanded
    r = explore(Graph(edges, finished=lambda s: True))
    assert r.result == "ok"
    assert (r.distinct_states, r.depth) == (4, 2)


def test_unreachable_goal_is_a_gap() -> None:
    goals = [
        Goal("cycle", "the cycle is taken", lambda s, a, t: a == ("f",)),
        Goal("seven", "state 7 is reached", lambda s, a, t: t == 7),
    ]
    r = explore(Graph(DIAMOND, properties=[never(99)], goals=goals))
    assert r.result == "gap"
    assert r.violations == []
    cycle, seven = r.goals
    assert (cycle.name, cycle.reached, seven.name, seven.reached) == ("cycle", True, "seven", False)
    assert seven.trace is None
    assert seven.description == "state 7 is reached"
    assert cycle.trace is not None
    assert labels(cycle.trace) == ["a", "c", "e", "f"]
    assert [s for _, s in cycle.trace.steps] == [1, 3, 4, 3]


def test_all_goals_reached_is_ok() -> None:
    goals = [Goal("first", "the first step", lambda s, a, t: s == 0),
             Goal("back", "back to 0", lambda s, a, t: t == 0)]
    r = explore(Graph(DIAMOND, goals=goals))
    assert r.result == "ok"
    assert (r.distinct_states, r.depth) == (10, 4)
    first, back = r.goals
    assert labels(first.trace) == ["a"]
    assert labels(back.trace) == ["a", "c", "e", "g", "h"]


def test_violation_beats_gap_and_incomplete_beats_gap() -> None:
    unreachable = [Goal("never", "never", lambda s, a, t: False)]
    assert explore(Graph(DIAMOND, properties=[never(5)], goals=unreachable)).result == "violation"
    r = explore(Graph(DIAMOND, goals=unreachable), bounds=Bounds(max_depth=1))
    assert r.result == "incomplete"


def test_keep_going_finds_violations_of_two_specs() -> None:
    props = [never(4, "NOT-FOUR"), never(12, "NOT-TWELVE"), never(11, "NOT-ELEVEN-ALIAS"),
             never(13, "NOT-FOUR")]
    r = explore(Graph(DIAMOND, properties=props), stop_at_first=False)
    assert r.result == "violation"
    # one violation per spec, the shortest of each, sorted by depth
    assert [(v.spec, v.trace.depth) for v in r.violations] == [
        ("NOT-ELEVEN-ALIAS", 2), ("NOT-FOUR", 3), ("NOT-TWELVE", 3)]
    by_spec = {v.spec: v for v in r.violations}
    assert labels(by_spec["NOT-FOUR"].trace) == ["a", "c", "e"]
    assert labels(by_spec["NOT-TWELVE"].trace) == ["long", "x", "y"]
    assert r.distinct_states == 10  # the whole graph was searched


def test_stop_at_first_reports_only_the_first() -> None:
    props = [never(12, "NOT-TWELVE"), never(5, "NOT-FIVE")]
    r = explore(Graph(DIAMOND, properties=props), stop_at_first=True)
    assert [v.spec for v in r.violations] == ["NOT-TWELVE"]
    assert r.distinct_states < 10


def test_quiescence_property_is_judged_only_on_quiescent_states() -> None:
    # Q fails on 2 and on 4, but only 4 (and 13) are quiescent
    q = Property("Q", "quiescence", lambda s: f"bad {s}" if s in (2, 4) else None)
    model = Graph(DIAMOND, properties=[q], quiescent=lambda s: s in (4, 13))
    r = explore(model)
    assert r.result == "violation"
    (v,) = r.violations
    assert (v.spec, v.message) == ("Q", "bad 4")
    assert labels(v.trace) == ["a", "c", "e"]
    # never judged where nothing is quiescent
    model = Graph(DIAMOND, properties=[q])
    r = explore(model)
    assert (r.result, r.distinct_states, r.depth) == ("ok", 10, 4)


def test_quiescence_property_on_a_terminal_state() -> None:
    q = Property("Q", "quiescence", lambda s: "stuck at 3" if s == 3 else None)
    edges: Edges = {0: [("a", 1), ("b", 3)], 1: [("c", 1)], 3: []}
    model = Graph(edges, properties=[q], finished=lambda s: s == 3,
                  quiescent=lambda s: s == 3)
    (v,) = explore(model).violations
    assert (v.spec, labels(v.trace)) == ("Q", ["b"])


def test_step_views_of_a_trace() -> None:
    model = Graph(DIAMOND, properties=[never(3)])
    (v,) = explore(model).violations
    views = step_views(model, v.trace)
    assert [(x.action, x.node, x.events) for x in views] == [
        ("init", None, ()), ("a", None, ()), ("c", None, ())]
    assert [x.state for x in views] == [{"state": "0"}, {"state": "1"}, {"state": "3"}]


# --- TwoPhase calibration ---------------------------------------------------------------------


@pytest.mark.parametrize(("rms", "states", "reduced", "depth"),
                         [(3, 288, 80, 10), (5, 8832, 314, 16)])
def test_twophase_state_counts(rms: int, states: int, reduced: int, depth: int) -> None:
    full = explore(TwoPhase(rms), symmetry=False)
    assert full.result == "ok"
    assert full.distinct_states == states
    assert full.symmetry is False
    assert full.depth == depth
    assert all(g.reached for g in full.goals)
    sym = explore(TwoPhase(rms), symmetry=True)
    assert sym.result == "ok"
    assert sym.symmetry is True
    assert sym.distinct_states == reduced
    assert sym.distinct_states < full.distinct_states
    assert sym.depth == depth
    assert [g.reached for g in sym.goals] == [True, True]


def test_twophase_one_rm_and_bad_arguments() -> None:
    r = explore(TwoPhase(1), symmetry=False)
    assert r.result == "ok"
    assert (r.distinct_states, r.depth) == (12, 4)
    with pytest.raises(ValueError, match="--rms must be at least 1"):
        TwoPhase(0)
    with pytest.raises(ValueError, match="unknown twophase variant 'nope'"):
        TwoPhase(3, "nope")


@pytest.mark.parametrize("symmetry", [False, True])
def test_twophase_commit_early_breaks_consistency(symmetry: bool) -> None:
    model = TwoPhase(3, "tm-commit-early")
    r = explore(model, symmetry=symmetry)
    assert r.result == "violation"
    assert r.variant == "tm-commit-early"
    (v,) = r.violations
    assert v.spec == "TC-CONSISTENT"
    assert v.trace.depth == 5
    assert [a for a, _ in v.trace.steps] == [
        ("RMPrepare", 0), ("TMRcvPrepared", 0), ("TMCommit",), ("RMRcvCommitMsg", 0),
        ("RMChooseToAbort", 1)]
    assert v.message == "rm0 committed while rm1 aborted"
    final = step_views(model, v.trace)[-1].state
    assert final["rm0"] == "committed" and final["rm1"] == "aborted"
    assert final["TM"] == {"state": "committed", "prepared": ["rm0"]}


@pytest.mark.parametrize("variant", ["fixed", "tm-commit-early"])
def test_twophase_symmetric_traces_are_concrete_paths(variant: str) -> None:
    model = TwoPhase(4, variant)
    r = explore(model, symmetry=True, stop_at_first=False)
    traces = [v.trace for v in r.violations] + [g.trace for g in r.goals if g.trace]
    assert len(traces) == (3 if variant == "tm-commit-early" else 2)
    for trace in traces:
        state = trace.init
        assert state == 0
        for action, nxt in trace.steps:
            assert (action, nxt) in model.successors(state)
            state = nxt
    # commit: every RM prepared and received (or one, committing early), commit, one RM learns it
    assert [g.trace.depth for g in r.goals] == [4 if variant == "tm-commit-early" else 10, 2]


def test_until_stops_at_the_named_spec_and_keeps_the_others() -> None:
    props = [never(11, "NOT-ELEVEN"), never(4, "NOT-FOUR"), never(12, "NOT-TWELVE")]
    r = explore(Graph(DIAMOND, properties=props), stop_at_first=False, until="NOT-FOUR")
    assert [v.spec for v in r.violations] == ["NOT-ELEVEN", "NOT-FOUR"]
    r = explore(Graph(DIAMOND, properties=props), stop_at_first=False, until="NOT-ELEVEN")
    assert [v.spec for v in r.violations] == ["NOT-ELEVEN"]
    assert r.distinct_states < 10


# --- lassos -----------------------------------------------------------------------------------

#: 0 -> 1 -> 2 -> 3 -> 1 (a cycle through 1, 2, 3) and 0 -> 4 -> 4 (a self-loop)
LOOPS: Edges = {0: [("go", 1), ("aside", 4)], 1: [("a", 2)], 2: [("b", 3), ("out", 5)],
                3: [("back", 1)], 4: [("spin", 4)], 5: []}


class Looping(Graph):
    def __init__(self, marked: set[str]) -> None:
        super().__init__(LOOPS, finished=lambda s: True)
        self.marked = marked

    def lassos(self) -> Sequence[Lasso[int]]:
        return [Lasso("FINITE", "a marked step repeats",
                      lambda prev, action, nxt: action[0] in self.marked)]


def test_a_cycle_through_a_marked_edge_is_a_lasso() -> None:
    r = explore(Looping({"b"}))
    assert r.result == "violation"
    (v,) = r.violations
    assert v.spec == "FINITE" and "the last 3 steps" in v.message
    assert labels(v.trace) == ["go", "a", "b", "back", "a"]
    assert v.trace.loop_start == 2  # from state 2: b, back, a lead back to 2


def test_a_marked_self_loop_is_a_lasso() -> None:
    (v,) = explore(Looping({"spin"})).violations
    assert labels(v.trace) == ["aside", "spin"] and v.trace.loop_start == 1


def test_a_search_stopped_by_a_bound_reports_the_lassos_of_the_part_it_explored() -> None:
    """A bounded search is judged on the edges it followed: a cycle among them is a lasso of the
    whole graph (the verdict a violation, the bound still named); none there is no verdict."""
    r = explore(Looping({"b"}), bounds=Bounds(max_states=3))
    assert r.result == "incomplete" and r.violations == []
    r = explore(Looping({"spin"}), bounds=Bounds(max_depth=2))
    assert r.result == "violation" and r.incomplete_reason == "depth bound 2 reached"
    (v,) = r.violations
    assert v.spec == "FINITE" and labels(v.trace) == ["aside", "spin"]


def test_marked_edges_off_every_cycle_are_no_lasso() -> None:
    for marked in ({"go", "out", "aside"}, set()):
        r = explore(Looping(marked))
        assert (r.result, r.distinct_states, r.depth) == ("ok", 6, 3)


class Passing(Model[tuple[str, str]]):
    """A token passed back and forth between two interchangeable holders: (holder, other). Under
    symmetry both states are one class, so the quotient has a self-loop where the concrete
    system needs two passes to come back."""

    name = "passing"

    def __init__(self) -> None:
        self.scope = {}

    def init_states(self) -> Iterable[tuple[str, str]]:
        return [("x", "y")]

    def actions(self, state: tuple[str, str]) -> Iterable[Action]:
        return [("pass",)]

    def next_state(self, state: tuple[str, str], action: Action) -> tuple[str, str]:
        return (state[1], state[0])

    def properties(self) -> Sequence[Property[tuple[str, str]]]:
        return []

    def finished(self, state: tuple[str, str]) -> bool:
        return True

    def representative(self, state: tuple[str, str]) -> tuple[str, str]:
        return ("x", "y")

    def lassos(self) -> Sequence[Lasso[tuple[str, str]]]:
        return [Lasso("FINITE", "the token moves for ever", lambda prev, action, nxt: True)]


def test_a_lasso_found_under_symmetry_is_a_concrete_cycle() -> None:
    r = explore(Passing())
    assert r.symmetry and r.distinct_states == 1
    (v,) = r.violations
    # the quotient's self-loop, followed until the concrete state comes back
    assert v.trace.loop_start == 0 and labels(v.trace) == ["pass", "pass"]
    assert v.trace.steps[-1][1] == v.trace.init and "the last 2 steps" in v.message


def test_only_the_edges_that_may_lie_on_a_cycle_reach_the_graph_search(tmp_path: Path) -> None:
    """The tails into and out of the cycles are peeled off, layer by layer; cycles stay whole.
    The edges are read a chunk at a time (of 2 here), from disk and from memory alike."""
    edges = [(1, 2), (2, 3), (3, 4), (4, 2), (3, 6), (6, 7), (1, 5), (5, 5), (8, 1)]
    table = FingerprintTable(bits=4)
    for fp in range(1, 9):
        table.insert(fp % 3 + 1 << 60 | fp, 0)  # three homes: most are probed past theirs
    fps = [0, *(fp % 3 + 1 << 60 | fp for fp in range(1, 9))]
    log = EdgeLog(tmp_path / "edges", spill=4)
    for mark, (u, v) in enumerate(edges):
        log.src.append(fps[u])
        log.dst.append(fps[v])
        log.marks.append(mark)
        log.maybe_spill()
    assert log.on_disk == 8 and len(log) == 9
    with patch("partsafe.checker.engine.lassos.CHUNK", 2):
        core = set(zip(*cyclic_core(table, log), strict=True))
    assert core == {(fps[2], fps[3], 1), (fps[3], fps[4], 2), (fps[4], fps[2], 3),
                    (fps[5], fps[5], 7)}
    path = EdgeLog()
    path.src.extend([fps[1], fps[2]])
    path.dst.extend([fps[2], fps[3]])
    path.marks.extend([0, 0])
    assert cyclic_core(table, path) == ([], [], [])
    assert cyclic_core(table, EdgeLog()) == ([], [], [])


def test_the_slot_of_a_fingerprint_not_in_the_table_is_an_error() -> None:
    table = FingerprintTable(bits=4)
    table.insert(5, 0)
    assert table.slots(np.array([5], dtype=np.uint64)).tolist() == [0]
    with pytest.raises(KeyError):
        table.slots(np.array([6], dtype=np.uint64))

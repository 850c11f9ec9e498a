"""The one expansion of states (`Expander.expand`) that the search in one process and its worker
processes share: expanded at once into the search's table, or in batches each into a table of its
own and merged as the searching process merges a worker's batch, a level gives the same next
level, the same parents, counts and edges; and whichever way the levels are expanded, the table
holds the fingerprints `fingerprint` gives the reachable states' representatives."""

from __future__ import annotations

from array import array
from collections.abc import Callable
from typing import Any

import pytest

from partsafe.checker.engine.bfs import Bounds, Search
from partsafe.checker.engine.expand import Checks, Expander
from partsafe.checker.engine.fingerprints import FingerprintTable, fingerprint
from partsafe.checker.engine.model import Action, Model
from partsafe.checker.protocols.catalog import get
from partsafe.checker.protocols.twophase import TwoPhase

MODELS: dict[str, Callable[[], Model[Any]]] = {
    "twophase with symmetry": lambda: TwoPhase(4),
    "twophase, a violation": lambda: TwoPhase(3, "tm-commit-early"),
    "ignite, edges kept for lassos": lambda: get("ignite-rebalance").make(
        "fixed", {"restarts": 0, "baseline-changes": 1}),
}


class _Noted:
    """A sink that notes what an expansion finds, and never ends the search."""

    stop = False

    def __init__(self) -> None:
        self.found: list[tuple[Any, ...]] = []

    def state_broke(self, spec: str, message: str, fp: int) -> None:
        self.found.append(("state", spec, fp))

    def new_state_broke(self, index: int, spec: str, message: str, fp: int) -> None:
        self.found.append(("new", spec, fp))

    def goal_reached(self, goal: str, source: int, action: Action, target: int) -> None:
        self.found.append(("goal", goal, source, target))


def _search(model: Model[Any], batch: int | None) -> dict[str, Any]:
    """Every level of `model` expanded with one `Expander`: the whole level at once into the
    search's table (`batch` None, the search in one process), or `batch` states at a time, each
    batch into a table of its own whose candidates are then inserted into the search's table in
    order (as a worker expands and the searching process merges)."""
    rep = model.representative if model.has_symmetry else None
    sink = _Noted()
    expander = Expander(model, rep, Checks.of(model), sink)
    table = FingerprintTable()
    level = list(model.init_states())
    fps = array("Q", [fingerprint(rep(s) if rep else s) for s in level])
    for h in fps:
        table.insert(h, 0)
    levels = [list(fps)]
    while level:
        nxt: list[Any] = []
        nxt_fps = array("Q")
        if batch is None:
            expander.expand(level, fps, 0, len(level), table, nxt, nxt_fps, None, False)
        else:
            for lo in range(0, len(level), batch):
                cands: list[Any] = []
                cand_fps, cand_parents = array("Q"), array("Q")
                expander.expand(level, fps, lo, min(lo + batch, len(level)),
                                FingerprintTable(4), cands, cand_fps, cand_parents, False)
                for t, h, parent in zip(cands, cand_fps, cand_parents, strict=True):
                    if table.insert(h, parent):
                        nxt.append(t)
                        nxt_fps.append(h)
        level, fps = nxt, nxt_fps
        levels.append(list(fps))
    return {"levels": levels, "parents": {k: table.parent(k) for k in table.keys if k},
            "transitions": expander.transitions, "fired": expander.fired,
            "edges": [list(column) for column in expander.edges],
            "goals": sorted({f for f in sink.found if f[0] == "goal"}),
            "broken": sorted({f[1:] for f in sink.found if f[0] != "goal"})}


@pytest.mark.parametrize("make", MODELS.values(), ids=MODELS.keys())
def test_a_level_expanded_at_once_or_in_batches_gives_the_same_next_level(
        make: Callable[[], Model[Any]]) -> None:
    at_once = _search(make(), None)
    assert len(at_once["levels"]) > 3 and at_once["transitions"] > len(at_once["parents"])
    for batch in (1, 7, 512):
        assert _search(make(), batch) == at_once


def _visited(model: Model[Any], workers: int) -> tuple[Any, set[int]]:
    search = Search(model, symmetry=True, bounds=Bounds(), stop_at_first=False, progress=None,
                    progress_interval=0.5, action_kinds=(), until=None, checkpoint=None,
                    workers=workers)
    result = search.run()
    return result, {k for k in search.table.keys if k}


def _reachable(model: Model[Any]) -> set[int]:
    """The fingerprints of the reachable states' representatives, by a plain search of states."""
    rep = model.representative if model.has_symmetry else None
    seen = {rep(s) if rep else s for s in model.init_states()}
    todo = list(seen)
    while todo:
        for _, t in model.successors(todo.pop()):
            r = rep(t) if rep else t
            if r not in seen:
                seen.add(r)
                todo.append(r)
    return {fingerprint(r) for r in seen}


@pytest.mark.parametrize("make", MODELS.values(), ids=MODELS.keys())
def test_one_process_and_two_workers_visit_the_fingerprints_of_the_reachable_states(
        make: Callable[[], Model[Any]]) -> None:
    one, one_fps = _visited(make(), 1)
    two, two_fps = _visited(make(), 2)
    assert one_fps == two_fps == _reachable(make())
    assert (one.distinct_states, one.transitions, one.depth, one.fired) == (
        two.distinct_states, two.transitions, two.depth, two.fired)
    assert [(v.spec, v.trace.depth) for v in one.violations] == [
        (v.spec, v.trace.depth) for v in two.violations]

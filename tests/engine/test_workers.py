"""Searches whose levels are expanded by worker processes (`explore(..., workers=N)`) find what
the search in one process finds: the same states, transitions, goals and verdict, the same
shortest counterexamples and lassos; bounds, checkpoints and signals work as they do there, and a
failing worker is reported, not waited for."""

from __future__ import annotations

import json
import os
import signal
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from searches import same

from partsafe.checker.cli.main import main
from partsafe.checker.engine import checkpoint as ck
from partsafe.checker.engine.bfs import Bounds, explore
from partsafe.checker.engine.checkpoint import Checkpoint
from partsafe.checker.engine.model import Lasso, Model
from partsafe.checker.engine.workers import WorkerError
from partsafe.checker.protocols.catalog import get
from partsafe.checker.protocols.twophase import TwoPhase


@pytest.fixture(autouse=True)
def _seed(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PYTHONHASHSEED", "7")  # for the checkpoints' headers


MODELS: dict[str, Callable[[], Model[Any]]] = {
    "twophase with symmetry": lambda: TwoPhase(6),
    "twophase, a violation": lambda: TwoPhase(4, "tm-commit-early"),
    "migration, goals": lambda: get("migration").make("fixed", {}),
    "ignite, edges kept for lassos": lambda: get("ignite-rebalance").make(
        "fixed", {"restarts": 0, "baseline-changes": 1}),
    "membership, a violation": lambda: get("membership").make(
        "hz38-unordered-members", {"suspicions": 0, "publishes": 1}),
}


#: (distinct states, depth) of the clean searches of MODELS, with any number of workers (a
#: search that stops at a violation counts what its level had expanded by then)
CLEAN = {"twophase with symmetry": (553, 19), "migration, goals": (22_325, 50),
         "ignite, edges kept for lassos": (1255, 35)}


@pytest.mark.parametrize("make", MODELS.values(), ids=MODELS.keys())
def test_workers_find_what_one_process_finds(make: Callable[[], Model[Any]],
                                             request: pytest.FixtureRequest) -> None:
    one = explore(make())
    two = explore(make(), workers=2)
    same(two, one)
    if one.result == "ok":
        assert (one.distinct_states, one.depth) == (two.distinct_states, two.depth) == CLEAN[
            request.node.callspec.id]
    if one.violations:  # the trace is a real one, rebuilt in the searching process
        (v,) = two.violations
        assert v.trace.steps


def test_a_search_cut_short_differs_from_the_whole() -> None:
    """The comparison above can fail: a search cut short by a bound differs from the whole."""
    whole = explore(TwoPhase(4, "tm-commit-early"), workers=2)
    cut = explore(TwoPhase(4, "tm-commit-early"), workers=2, bounds=Bounds(max_depth=1))
    assert whole.result == "violation" and cut.result == "incomplete" and not cut.violations


class _Loop(Model[int]):
    """0 -> 1 -> 2 -> 3 -> 1 and 0 -> 4: a lasso through the marked step 1 -> 2, found from edges
    reported by different workers."""

    name = "loop"

    def __init__(self) -> None:
        self.scope = {}
        self.edges = {0: (1, 4), 1: (2,), 2: (3,), 3: (1,), 4: ()}

    def init_states(self) -> list[int]:
        return [0]

    def successors(self, state: int) -> list[tuple[tuple[str, int], int]]:
        return [(("to", t), t) for t in self.edges[state]]

    def properties(self) -> list[Any]:
        return []

    def finished(self, state: int) -> bool:
        return True

    def lassos(self) -> list[Lasso[int]]:
        return [Lasso("FINITE", "round the loop", lambda prev, action, nxt: action == ("to", 2))]


def test_a_lasso_is_found_from_the_workers_edges() -> None:
    (v,) = explore(_Loop(), workers=2).violations
    assert v.spec == "FINITE" and [a for a, _ in v.trace.steps] == [
        ("to", 1), ("to", 2), ("to", 3), ("to", 1)]


@pytest.mark.parametrize("bounds, reason", [
    (Bounds(max_states=2_000), "state bound"),
    (Bounds(max_depth=5), "depth bound"),
    (Bounds(max_seconds=1e-3), "time bound"),
])
def test_a_bound_ends_the_search_incomplete(bounds: Bounds, reason: str) -> None:
    r = explore(TwoPhase(8), symmetry=False, workers=2, bounds=bounds)
    assert r.result == "incomplete" and reason in str(r.incomplete_reason)
    assert r.distinct_states < 100_000  # of the 1,745,408 states of the whole search
    if bounds.max_depth is not None:
        assert r.depth == 5


def test_a_search_saved_by_workers_resumes_in_one_process_and_back(tmp_path: Path) -> None:
    saved = Checkpoint(tmp_path / "search.ck", every=1e9)
    first = explore(TwoPhase(6), workers=2, bounds=Bounds(max_depth=6), checkpoint=saved)
    assert first.result == "incomplete" and ck.read_header(saved.path)["depth"] == 6
    middle = explore(TwoPhase(6), bounds=Bounds(max_depth=9), checkpoint=saved)
    assert middle.resumed_at == 6 and middle.depth == 9
    again = explore(TwoPhase(6), workers=2, checkpoint=saved)
    assert again.resumed_at == 9
    same(again, explore(TwoPhase(6)))


class _ResumeWatcher(TwoPhase):
    """TwoPhase that notes which process restored states from a checkpoint, and whose workers
    fail if the searching process had restored any before they were forked."""

    def __init__(self, rms: int) -> None:
        super().__init__(rms)
        self.searcher = os.getpid()
        self.restored_here: list[int] = []

    def restore(self, states):  # type: ignore[no-untyped-def]
        self.restored_here.append(os.getpid())
        return super().restore(states)

    def successors(self, state):  # type: ignore[no-untyped-def]
        if os.getpid() != self.searcher and self.searcher in self.restored_here:
            raise RuntimeError("this worker holds a copy of the resumed level")
        return super().successors(state)


def test_a_resumed_search_forks_its_workers_before_it_loads_the_level(tmp_path: Path) -> None:
    """A worker keeps every object its parent held when it was forked: forked after the load, it
    would keep a dead copy of the whole resumed level (gigabytes in a large search)."""
    saved = Checkpoint(tmp_path / "search.ck", every=1e9)
    explore(TwoPhase(5), bounds=Bounds(max_depth=6), checkpoint=saved)
    watcher = _ResumeWatcher(5)
    again = explore(watcher, workers=2, checkpoint=saved)
    assert watcher.searcher in watcher.restored_here  # the level was restored, after the fork
    assert again.resumed_at == 6
    same(again, explore(TwoPhase(5)))


class _SignalsSearcher(TwoPhase):
    """TwoPhase whose workers send the searching process `signum` at their `at`-th expansion."""

    def __init__(self, rms: int, at: int | None, signum: int = signal.SIGTERM) -> None:
        super().__init__(rms)
        self.searcher = os.getpid()
        self.at, self.signum, self.calls = at, signum, 0

    def successors(self, state):  # type: ignore[no-untyped-def]
        self.calls += 1
        if self.calls == self.at and os.getpid() != self.searcher:
            os.kill(self.searcher, self.signum)
        return super().successors(state)


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGINT])
def test_a_signal_saves_the_workers_states_within_the_level(tmp_path: Path, signum: int) -> None:
    saved = Checkpoint(tmp_path / "search.ck", every=1e9)
    one_go = explore(TwoPhase(6), symmetry=False)
    first = explore(_SignalsSearcher(6, 1500, signum), symmetry=False, workers=2,
                    checkpoint=saved)
    assert first.result == "incomplete" and "still to expand" in str(first.incomplete_reason)
    header = ck.read_header(saved.path)
    assert 0 < header["depth"] < one_go.depth and header["states"] == first.distinct_states
    again = explore(TwoPhase(6), symmetry=False, workers=2, checkpoint=saved)
    assert again.resumed_at == header["depth"]
    same(again, one_go)


class _Broken(TwoPhase):
    def finished(self, state):  # type: ignore[no-untyped-def]
        raise RuntimeError("the end-state check broke")


def test_a_failing_worker_is_reported_with_its_traceback() -> None:
    with pytest.raises(WorkerError, match="the end-state check broke"):
        explore(_Broken(3), workers=2)


def test_workers_must_be_at_least_one() -> None:
    with pytest.raises(ValueError, match="workers=0"):
        explore(TwoPhase(3), workers=0)


def test_check_with_workers_reports_the_same_search() -> None:
    def run(*extra: str) -> dict[str, Any]:
        r = CliRunner().invoke(main, ["check", "twophase", "--rms", "6", "--no-symmetry",
                                      "--json", "--no-progress", *extra])
        assert r.exit_code == 0, r.output
        return json.loads(r.stdout)

    one, two = run(), run("--workers", "2")
    assert (one["workers"], two["workers"]) == (1, 2)
    assert (one["distinct_states"], one["transitions"]) == (
        two["distinct_states"], two["transitions"])
    assert (one["result"], one["distinct_states"], one["depth"]) == ("ok", 50_816, 19)


@pytest.mark.parametrize("args, needle", [
    (["check", "twophase", "--workers", "-1"], "--workers must be 0"),
    (["check", "planner", "--workers", "2"], "--workers applies to the searches"),
])
def test_bad_workers_exit_2(args: list[str], needle: str) -> None:
    r = CliRunner().invoke(main, args)
    assert r.exit_code == 2 and needle in r.output


def test_the_progress_queue_counts_what_is_left_of_the_level_and_the_next_so_far() -> None:
    """A worker done with its share of a level holds its share of the next: the queue shown is
    what is left of the level plus the next level found so far, never below zero."""
    seen: list[Any] = []
    # the default scope's last levels shrink, where the sizes alone went below zero
    explore(get("ignite-rebalance").make("fixed", {}), workers=2, progress=seen.append,
            progress_interval=0)
    assert len(seen) > 50 and all(0 <= p.queue <= p.distinct_states for p in seen)

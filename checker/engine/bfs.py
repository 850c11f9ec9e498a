"""Exhaustive breadth-first exploration of a `Model`: the one entry point is `explore`.

The split follows Stateright: a `Model` (checker/engine/model.py) says what a system is (initial
states, successors, a symmetry representative) and what must hold in it (properties, coverage
goals, lasso properties); a checker decides how to search it. This module is the checker: a
`Search` holds one exploration's state and runs it, `explore` makes one and returns its `Result`.

Breadth first, level by level, so every counterexample and every coverage path is a shortest one.
Visited states are kept as 64-bit fingerprints of their symmetry representatives in a
`FingerprintTable` together with the fingerprint of their BFS parent; states themselves live only
in the current and the next level. The engine's parts, one concern each:

- expand.py: the expansion of a state, the search's hot loop (successors, fingerprints, goals,
  `always` properties on new states, quiescence, deadlocks, MODEL-ERROR, edges), the same in
  this process and in a worker;
- this module: the levels (`Search._levels_in_process`, or `Search._levels_in_workers` with the
  workers of workers.py, whose batches `Search._on_batch` merges into the one table), the bounds,
  signals, progress and checkpoints (checkpoint.py) between and within levels, and the verdict;
- rebuild.py: a counterexample rebuilt after the search by following parent fingerprints back to
  an initial state and re-executing the model forward, matching fingerprints (so with symmetry
  the trace is concrete, not a representative's);
- lassos.py: lasso properties, after the search, on the explored graph: a reachable cycle
  through a marked transition is reported as a lasso (every edge is kept for such models only,
  edges.py). A search a bound stopped is judged on the part it explored: a cycle found there
  is a lasso of the whole graph, and none found is no verdict (the result stays incomplete).

On the first violation the search finishes the current level in scan mode (quiescence and deadlock
checks only), so the reported violation is the shortest of all.

A `Checkpoint` saves the search at the end of a level when a save is due (`Checkpoint.due`) and a
search given an existing checkpoint resumes from it (checker/engine/checkpoint.py). With a
checkpoint, a time bound takes effect at the end of the level it falls in, where the search is
saved; SIGTERM or SIGINT saves it where it is, within a level (the states of the level not yet
expanded and the next level so far), and ends it.
"""

from __future__ import annotations

import contextlib
import gc
import signal
import threading
import time
from array import array
from collections.abc import Callable, Iterator
from typing import Any

from partsafe.checker.engine.checkpoint import Checkpoint
from partsafe.checker.engine.edges import EdgeLog
from partsafe.checker.engine.expand import DEADLOCK, MODEL_ERROR, NO_BOUND, Checks, Expander
from partsafe.checker.engine.fingerprints import FingerprintTable, fingerprint
from partsafe.checker.engine.lassos import lasso_violations
from partsafe.checker.engine.model import Action, Goal, Model
from partsafe.checker.engine.rebuild import goal_step, rebuild
from partsafe.checker.engine.result import (
    Bounds,
    GoalResult,
    Progress,
    Result,
    Trace,
    Violation,
    step_views,
)
from partsafe.checker.engine.workers import Batch, Pool, Reply

__all__ = ["DEADLOCK", "MODEL_ERROR", "Bounds", "GoalResult", "Progress", "Result", "Search",
           "Trace", "Violation", "explore", "step_views"]

#: states expanded in this process between two looks at signals, the time bound, progress and
#: the edges kept in memory
STRIDE = 256

#: states of a level with their fingerprints
Level = tuple[list[Any], array]


def explore(
    model: Model[Any],
    *,
    symmetry: bool = True,
    bounds: Bounds | None = None,
    stop_at_first: bool = True,
    progress: Callable[[Progress], None] | None = None,
    progress_interval: float = 0.5,
    action_kinds: tuple[str, ...] = (),
    until: str | frozenset[str] | None = None,
    checkpoint: Checkpoint | None = None,
    workers: int = 1,
    past: frozenset[str] = frozenset(),
) -> Result:
    """Explore `model` breadth first and check its properties and coverage goals.

    `action_kinds` names every kind of action the model has, so that kinds which never fired are
    reported; `stop_at_first` ends the search at the first (shortest) violation; `until` ends it
    at the first violation of that spec (the zoo's: each variant must break its own spec), or,
    given a set of specs, once each of them is broken (`partsafe zoo --profile`); with
    `stop_at_first`, a violation of a spec in `past` does not end the search (a baseline records
    it: `check --baseline` stops at the first violation it does not record);
    `checkpoint` saves the search at level ends and resumes it from an existing file (see the
    module's docstring); `workers` above 1 expands each level in that many forked processes
    (checker/engine/workers.py), with the same states, counts and verdict.
    """
    if workers < 1:
        raise ValueError(f"workers={workers} must be at least 1")
    return Search(model, symmetry=symmetry, bounds=bounds or Bounds(),
                  stop_at_first=stop_at_first, progress=progress,
                  progress_interval=progress_interval, action_kinds=action_kinds, until=until,
                  checkpoint=checkpoint, workers=workers, past=past).run()


@contextlib.contextmanager
def _collector_off() -> Iterator[None]:
    """The cyclic garbage collector off while the search runs (on again after, if it was): the
    search frees what it makes by reference counting, and a collection would walk every state it
    holds."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()


class Search:
    """One breadth-first search of `model` (see the module's docstring); `run` runs it once.

    It is the `Sink` of its own expansion: a violation found is recorded at once and, when it
    ends the search (`stop`), the rest of the level is expanded in scan mode."""

    def __init__(self, model: Model[Any], *, symmetry: bool, bounds: Bounds,
                 stop_at_first: bool, progress: Callable[[Progress], None] | None,
                 progress_interval: float, action_kinds: tuple[str, ...],
                 until: str | frozenset[str] | None,
                 checkpoint: Checkpoint | None, workers: int,
                 past: frozenset[str] = frozenset()) -> None:
        self.model = model
        self.rep = model.representative if (symmetry and model.has_symmetry) else None
        self.checks = Checks.of(model)
        self.bounds = bounds
        self.max_states = bounds.max_states if bounds.max_states is not None else NO_BOUND
        self.stop_at_first = stop_at_first
        self.until = until
        self.progress = progress
        self.progress_interval = progress_interval
        self.checkpoint = checkpoint
        self.workers = workers
        self.signature = {"model": model.name, "variant": model.variant,
                          "profile": model.profile,
                          "scope": dict(model.scope), "symmetry": self.rep is not None,
                          "stop_at_first": stop_at_first,
                          "until": sorted(until) if isinstance(until, frozenset) else until}
        self.past = past
        if past and stop_at_first:  # (only then: the checkpoints of other searches unchanged)
            self.signature["past"] = sorted(past)

        # what the search has seen, found and counted
        self.table = FingerprintTable()
        #: every edge (parent, child, marks), kept only for models with lasso properties
        self.edges = EdgeLog(checkpoint.edges if checkpoint is not None else None)
        self.expander = Expander(model, self.rep, self.checks, self)
        self.expander.fired = dict.fromkeys(action_kinds, 0)
        self.expander.edges = (self.edges.src, self.edges.dst, self.edges.marks)
        #: per goal reached: the fingerprints of the step's source and target, and its action
        self.goal_hits: dict[str, tuple[int, Action, int]] = {}
        #: violations found: (spec, message, fingerprint of the last state, depth of that state)
        self.found: list[tuple[str, str, int, int]] = []
        self.found_specs: set[str] = set()
        #: a violation that ends the search was found: the level is finished in scan mode
        self.stop = False

        # where the search is
        self.depth = 0
        #: per finished level: (depth, frontier, distinct states so far, seconds)
        self.levels: list[tuple[int, int, int, float]] = []
        self.frontier: list[Any] = []
        self.frontier_fps = array("Q")
        #: the states of the next level found before the level was saved within (a resume)
        self.carried: Level | None = None
        self.scan_only = False
        self.incomplete: str | None = None
        self.resumed_at: int | None = None
        #: signals received: save where the search is, and end it
        self.signals: list[int] = []
        self.pool: Pool | None = None

        # time: `before` is what the search ran in earlier processes (resumed from a checkpoint)
        self.start = self.last_report = self.saved_at = 0.0
        self.before = 0.0
        self.saved_depth = -1
        #: the time bound less `before`, judged at level ends with a checkpoint (where the search
        #: is saved) and within levels (`level_seconds`) without one
        self.seconds_left: float | None = None
        self.level_seconds: float | None = None

        # the progress of a level expanded by workers: its states and those of the next level
        # handed to the workers, the states expanded so far, the table's count at its start
        self._queued = self._expanded = self._level_count = 0

    # -- the search, start to end -----------------------------------------------------------------

    def run(self) -> Result:
        """Search from the initial states, or from the checkpoint if it exists, to a verdict or
        a bound; the workers, the signal handlers and the collector are restored on any exit."""
        with contextlib.ExitStack() as stack:
            stack.enter_context(_collector_off())
            self.start = self.last_report = time.perf_counter()
            stack.enter_context(self._signals_noted())
            if self.workers > 1:
                # Forked before a checkpoint is loaded: a worker keeps every object its parent
                # held at the fork for good (it never returns to the frames that hold them), and
                # a resumed level's states would be a dead copy in each worker, 2 KB a state for
                # Ignite's rebalance.
                self.pool = stack.enter_context(contextlib.closing(
                    Pool(self.model, self.rep, self.workers, self.checks)))
            if self.checkpoint is not None and self.checkpoint.exists():
                self._resume()
            else:
                self._begin()
            self.saved_at, self.saved_depth = time.perf_counter(), -1
            max_seconds = self.bounds.max_seconds
            self.seconds_left = None if max_seconds is None else max_seconds - self.before
            self.level_seconds = self.seconds_left if self.checkpoint is None else None
            self.scan_only = self.stop
            if self.pool is not None and self.frontier:
                self._levels_in_workers()
            self._levels_in_process()
            seconds = self._elapsed()
        return self._result(seconds)

    def _begin(self) -> None:
        """Start afresh from the model's initial states (level 0)."""
        self.edges.start()
        rep = self.rep
        for s in self.model.init_states():
            h = fingerprint(rep(s) if rep else s)
            if self.table.insert(h, 0):
                self.frontier.append(s)
                self.frontier_fps.append(h)
                for spec, check in self.checks.always:
                    msg = check(s)
                    if msg is not None:
                        self.record(spec, msg, h, 0)

    def _result(self, seconds: float) -> Result:
        """The verdict, with the traces rebuilt and the lasso properties judged."""
        model, rep, table = self.model, self.rep, self.table
        self.found.sort(key=lambda f: f[3])
        violations = [Violation(spec, msg, rebuild(model, rep, table, fp))
                      for spec, msg, fp, _ in self.found]
        if self.checks.lassos and not self.stop:
            # a bounded search too: its edges are transitions of the model, so a cycle among
            # them is one of the whole graph (a rebalance that loops while a queue to a slow
            # node grows has no complete search, and this is how its lasso is reported)
            violations.extend(lasso_violations(model, rep, table, self.checks.lassos, self.edges))
            seconds = self._elapsed()
        self.edges.close()
        if self.checkpoint is not None and self.incomplete is None:
            self.checkpoint.remove()  # a verdict: nothing left to resume
        goals = [self._goal_result(g) for g in self.checks.goals]
        if violations:
            verdict = "violation"
        elif self.incomplete:
            verdict = "incomplete"
        elif model.goals_required and any(not g.reached for g in goals):
            verdict = "gap"
        else:
            verdict = "ok"
        fired = self.expander.fired
        return Result(
            model=model.name,
            variant=model.variant,
            profile=model.profile,
            scope=dict(model.scope),
            symmetry=rep is not None,
            result=verdict,
            distinct_states=table.count,
            transitions=self.expander.transitions,
            depth=self.depth,
            seconds=seconds,
            fired=dict(sorted(fired.items())),
            never_fired=sorted(k for k, v in fired.items() if v == 0),
            violations=violations,
            goals=goals,
            incomplete_reason=self.incomplete,
            table_bytes=table.nbytes,
            resumed_at=self.resumed_at,
            workers=self.workers,
            levels=list(self.levels),
            stopped_at_violation=bool(self.stop and violations),
        )

    def _goal_result(self, goal: Goal[Any]) -> GoalResult:
        hit = self.goal_hits.get(goal.name)
        trace = None
        if hit is not None:
            trace = rebuild(self.model, self.rep, self.table, hit[0])
            trace.steps.append(goal_step(self.model, self.rep, trace, goal, hit[1], hit[2]))
        return GoalResult(goal.name, goal.description, hit is not None, trace)

    # -- what the expansion finds (the `Sink` of `self.expander`) --------------------------------

    def record(self, spec: str, message: str, fp: int, depth: int) -> None:
        """A violation of `spec` in the state `fp` at `depth`: the first of each spec is kept."""
        if spec not in self.found_specs:
            self.found_specs.add(spec)
            self.found.append((spec, message, fp, depth))
            self.stop = (self.stop or (self.stop_at_first and spec not in self.past)
                         or spec == self.until
                         or (isinstance(self.until, frozenset)
                             and self.until <= self.found_specs))

    def state_broke(self, spec: str, message: str, fp: int) -> None:
        self.record(spec, message, fp, self.depth)

    def new_state_broke(self, index: int, spec: str, message: str, fp: int) -> None:
        self.record(spec, message, fp, self.depth + 1)

    def goal_reached(self, goal: str, source: int, action: Action, target: int) -> None:
        self.goal_hits.setdefault(goal, (source, action, target))

    # -- levels in this process -----------------------------------------------------------------

    def _levels_in_process(self) -> None:
        """Expand level after level in this process until the search ends."""
        while self.frontier:
            if self._at_depth_bound(lambda: (self.frontier, self.frontier_fps)):
                break
            nxt = self._level_in_process()
            if self.incomplete or self.scan_only:
                break
            self.frontier, self.frontier_fps = nxt
            if self.frontier:
                self.depth += 1
                self._level_done(len(self.frontier))
                if not self._level_end(lambda: (self.frontier, self.frontier_fps)):
                    break

    def _level_in_process(self) -> Level:
        """Expand the level into the next, `STRIDE` states at a time; between them, spill the
        edges, answer a signal (save and end), apply the time bound and report progress."""
        frontier, fps = self.frontier, self.frontier_fps
        nxt, nxt_fps = self.carried if self.carried is not None else ([], array("Q"))
        self.carried = None
        expand = self.expander.expand
        for lo in range(0, len(frontier), STRIDE):
            if self.checks.lassos:
                self.edges.maybe_spill()
            if self.signals and not self.scan_only:
                self._save((frontier[lo:], fps[lo:]), (nxt, nxt_fps))
                self.incomplete = self._stopped_by_signal(len(frontier) - lo)
                break
            now = time.perf_counter()
            if (self.level_seconds is not None and now - self.start > self.level_seconds
                    and not self.scan_only):
                self.incomplete = f"time bound {self.bounds.max_seconds:g} s reached"
                break
            if self.progress is not None and now - self.last_report >= self.progress_interval:
                self._report(now, len(frontier) - lo + len(nxt))
            self.scan_only, bounded = expand(frontier, fps, lo, min(lo + STRIDE, len(frontier)),
                                             self.table, nxt, nxt_fps, None, self.scan_only,
                                             self.max_states)
            if bounded:
                self.incomplete = f"state bound {self.max_states} reached"
                break
        return nxt, nxt_fps

    # -- levels in worker processes -------------------------------------------------------------

    def _levels_in_workers(self) -> None:
        """`_levels_in_process`, with the levels expanded by the workers of `self.pool`, which
        hold the states; this process holds the table and merges their batches (`_on_batch`)."""
        pool = self.pool
        assert pool is not None
        pool.add(self.frontier, self.frontier_fps)
        # the queue the progress line shows: the states of the level not yet expanded and those
        # of the next found so far (a worker's share of the level, once it is done, is its share
        # of the next, so the sizes alone will not do)
        self._queued = 0
        if self.carried is not None:
            pool.add(*self.carried, ahead=True)
            self._queued = len(self.carried[1])
        self.frontier, self.frontier_fps, self.carried = [], array("Q"), None
        self._expanded = 0
        self._level_count = self.table.count

        def level() -> Level:
            rest, rest_fps, _, _ = pool.dump()
            return rest, rest_fps

        while sum(pool.sizes):
            if self._at_depth_bound(level):
                break
            pool.balance()
            self._queued += sum(pool.sizes)
            self._expanded = 0
            self._level_count = self.table.count
            if not pool.level(self.depth, self.scan_only, frozenset(self.goal_hits),
                              self._on_batch):
                if self.signals:
                    rest, rest_fps, ahead, ahead_fps = pool.dump()
                    self._save((rest, rest_fps), (ahead, ahead_fps))
                    self.incomplete = self._stopped_by_signal(len(rest))
                break
            if self.scan_only or not sum(pool.sizes):
                break
            self._queued = 0
            self.depth += 1
            self._level_done(sum(pool.sizes))
            if not self._level_end(level):
                break

    def _on_batch(self, msg: Batch) -> Reply:
        """Merge a worker's batch: record its findings and counts, insert its candidates into
        the table (the new ones are the next level's), then say whether to go on."""
        (_, done, moves, kinds, cand_fps, cand_parents, broken, findings, hits,
         batch_edges) = msg
        self._expanded += done
        for spec, message, fp in findings:
            self.record(spec, message, fp, self.depth)
            if spec == MODEL_ERROR:
                self.scan_only = self.scan_only or self.stop
        self.expander.transitions += moves
        fired = self.expander.fired
        for kind, n in kinds.items():
            fired[kind] = fired.get(kind, 0) + n
        for name, hs, action, h in hits:
            self.goal_hits.setdefault(name, (hs, action, h))
        new = bytearray(len(cand_fps))
        if not self.scan_only:
            insert = self.table.insert
            for j, h in enumerate(cand_fps):
                if insert(h, cand_parents[j]):
                    new[j] = 1
            for j, spec, message in broken:
                if new[j]:
                    self.record(spec, message, cand_fps[j], self.depth + 1)
            if batch_edges is not None:
                self.edges.src.extend(batch_edges[0])
                self.edges.dst.extend(batch_edges[1])
                self.edges.marks.extend(batch_edges[2])
                self.edges.maybe_spill()
        self.scan_only = self.scan_only or self.stop
        now = time.perf_counter()
        halt = False
        if not self.scan_only:
            if self.signals:
                halt = True
            elif self.level_seconds is not None and now - self.start > self.level_seconds:
                self.incomplete = f"time bound {self.bounds.max_seconds:g} s reached"
                halt = True
            elif self.table.count >= self.max_states:
                self.incomplete, halt = f"state bound {self.max_states} reached", True
        if self.progress is not None and now - self.last_report >= self.progress_interval:
            self._report(now, self._queued - self._expanded + self.table.count
                         - self._level_count)
        return bytes(new), self.scan_only, frozenset(self.goal_hits), halt

    # -- bounds, signals, progress and checkpoints ------------------------------------------------

    def _at_depth_bound(self, level: Callable[[], Level]) -> bool:
        """Is the depth bound reached before the level at `depth`? It is then saved (`level`
        gives its states), unless it was just saved at its start."""
        max_depth = self.bounds.max_depth
        if max_depth is None or self.depth < max_depth or self.scan_only:
            return False
        self.incomplete = f"depth bound {max_depth} reached"
        if self.checkpoint is not None and self.saved_depth != self.depth:
            self._save(level())
        return True

    def _level_done(self, frontier: int) -> None:
        """Record a finished level: the depth reached, its frontier, the states found so far
        and the seconds (the report's plots of frontier per depth and states per second)."""
        self.levels.append((self.depth, frontier, self.table.count, round(self._elapsed(), 3)))

    def _level_end(self, level: Callable[[], Level]) -> bool:
        """A level is done and `depth` is the next one's: save the search if a save is due or
        the time bound has passed (with a checkpoint, it takes effect here). False if the
        search ends here."""
        if self.checkpoint is None:
            return True
        now = time.perf_counter()
        out_of_time = self.seconds_left is not None and now - self.start > self.seconds_left
        if out_of_time or self.checkpoint.due(now - self.saved_at):
            self._save(level())
            self.saved_at, self.saved_depth = time.perf_counter(), self.depth
        if out_of_time:
            self.incomplete = (f"time bound {self.bounds.max_seconds:g} s reached (saved at "
                               f"depth {self.depth})")
            return False
        return True

    @contextlib.contextmanager
    def _signals_noted(self) -> Iterator[None]:
        """With a checkpoint, SIGTERM and SIGINT are noted (the search saves itself where it is,
        and ends) instead of ending the process; the handlers before are restored after."""
        caught: dict[int, Any] = {}
        if self.checkpoint is not None and threading.current_thread() is threading.main_thread():
            for sig in (signal.SIGTERM, signal.SIGINT):
                caught[sig] = signal.signal(sig, lambda signum, frame: self.signals.append(signum))
        try:
            yield
        finally:
            for sig, handler in caught.items():
                signal.signal(sig, handler)

    def _stopped_by_signal(self, left: int) -> str:
        return (f"stopped by {signal.Signals(self.signals[0]).name}, saved at depth "
                f"{self.depth} with {left:,} of its states still to expand")

    def _elapsed(self) -> float:
        """Seconds the search has run, in this process and the ones it was resumed from."""
        return self.before + time.perf_counter() - self.start

    def _report(self, now: float, queue: int) -> None:
        assert self.progress is not None
        self.last_report = now
        self.progress(Progress(self.table.count, self.expander.transitions, self.depth, queue,
                               self.before + now - self.start))

    def _save(self, level: Level, ahead: Level | None = None) -> None:
        """Save the search with `level`, the states of the level still to expand, and `ahead`,
        the next level found so far (when saved within a level)."""
        assert self.checkpoint is not None
        states, fps = level
        self.checkpoint.save(
            self.signature, {"depth": self.depth, "states": self.table.count,
                             "seconds": self._elapsed()},
            {"table": self.table, "frontier": states, "frontier_fps": fps, "ahead": ahead,
             "depth": self.depth, "transitions": self.expander.transitions,
             "fired": self.expander.fired, "goal_hits": self.goal_hits, "found": self.found,
             "edges": self.edges.saved(), "seconds": self._elapsed()})

    def _resume(self) -> None:
        """Take up the search where the checkpoint saved it."""
        assert self.checkpoint is not None
        saved = self.checkpoint.load(self.signature)
        self.table, self.frontier_fps, self.depth = (saved["table"], saved["frontier_fps"],
                                                     saved["depth"])
        self.frontier = self.model.restore(saved["frontier"])
        self.expander.transitions, self.before = saved["transitions"], saved["seconds"]
        self.expander.fired.update(saved["fired"])
        self.goal_hits.update(saved["goal_hits"])
        self.expander.pending = [g for g in self.expander.pending
                                 if g.name not in self.goal_hits]
        for spec, msg, fp, d in saved["found"]:
            self.record(spec, msg, fp, d)
        self.edges.resume(saved["edges"])
        if saved["ahead"] is not None:
            self.carried = (self.model.restore(saved["ahead"][0]), saved["ahead"][1])
        self.resumed_at = self.depth

"""Exhaustive breadth-first exploration of a `Model`: the one entry point is `explore`.

Breadth first, level by level, so every counterexample and every coverage path is a shortest one.
Visited states are kept as 64-bit fingerprints of their symmetry representatives in a
`FingerprintTable` together with the fingerprint of their BFS parent; states themselves live only
in the current and the next frontier. A counterexample is rebuilt after the search by following
parent fingerprints back to an initial state and re-executing the model forward, matching
fingerprints (so with symmetry the trace is concrete, not a representative's).

What is checked:
- `always` properties on every newly reached state (at insertion);
- `quiescence` properties and deadlocks when a state is expanded (its successors are known then);
- coverage goals on every transition until each is reached;
- MODEL-ERROR: a step of the model raised in the state reached (an inconsistent model, reported
  with its trace instead of ending the run);
- lasso properties, after a complete search, on the explored graph: a reachable cycle through a
  marked transition is reported as a lasso (every edge is kept, 17 bytes each, for such models
  only, on disk beyond 33 million of them: `EdgeLog`; networkx sees only the edges that may lie
  on a cycle, `_cyclic_core`). A search a bound
  stopped skips them: its graph is no verdict.

On the first violation the search finishes the current level in scan mode (quiescence and deadlock
checks only), so the reported violation is the shortest of all.

A `Checkpoint` saves the search at the end of a level when a save is due (`Checkpoint.due`) and a
search given an existing checkpoint resumes from it (engine/checkpoint.py). With a checkpoint, a
time bound takes effect at the end of the level it falls in, where the search is saved; SIGTERM
or SIGINT saves it where it is, within a level (the states of the level not yet expanded and the
next level so far), and ends it.
"""

from __future__ import annotations

import gc
import signal
import threading
import time
from array import array
from collections.abc import Callable, Hashable
from dataclasses import dataclass
from typing import Any

import networkx as nx
import numpy as np

from partsafe.checker.engine.checkpoint import Checkpoint
from partsafe.checker.engine.edges import EdgeLog
from partsafe.checker.engine.fingerprints import MASK64, MIX, FingerprintTable, fingerprint
from partsafe.checker.engine.model import Action, Goal, Lasso, Model, StepView
from partsafe.checker.engine.workers import Batch, Pool, Reply

DEADLOCK = "DEADLOCK"
#: a step of the model raised: the model itself is inconsistent in the state reached
MODEL_ERROR = "MODEL-ERROR"
#: rounds of a lasso's cycle followed until its concrete first state comes back: the order of
#: a renaming of interchangeable nodes, at most 60 for up to 12 nodes in one group
MAX_ROUNDS = 60
#: edges turned into slots at a time by `_cyclic_core`
_CHUNK = 1 << 24


@dataclass
class Trace:
    """A path from an initial state: the initial state and each (action, state) after it."""

    init: Hashable
    init_index: int
    steps: list[tuple[Action, Hashable]]
    #: for a lasso: the index of the first step of the cycle (the steps from there on return
    #: to the state before it, for ever)
    loop_start: int | None = None

    @property
    def depth(self) -> int:
        return len(self.steps)


@dataclass
class Violation:
    spec: str
    message: str
    trace: Trace


@dataclass
class GoalResult:
    name: str
    description: str
    reached: bool
    trace: Trace | None = None


@dataclass
class Progress:
    distinct_states: int
    transitions: int
    depth: int
    queue: int
    seconds: float

    @property
    def states_per_second(self) -> float:
        return self.distinct_states / self.seconds if self.seconds > 0 else 0.0


@dataclass
class Result:
    """The outcome of one exploration. `result` is ok, violation, gap or incomplete."""

    model: str
    variant: str
    scope: dict[str, Any]
    symmetry: bool
    result: str
    distinct_states: int
    transitions: int
    depth: int
    seconds: float
    fired: dict[str, int]
    never_fired: list[str]
    violations: list[Violation]
    goals: list[GoalResult]
    incomplete_reason: str | None = None
    table_bytes: int = 0
    #: the depth a checkpoint was resumed at, when the search began in an earlier process
    resumed_at: int | None = None
    #: processes that expanded the levels (1: the searching process itself)
    workers: int = 1

    @property
    def states_per_second(self) -> float:
        return self.distinct_states / self.seconds if self.seconds > 0 else 0.0


@dataclass
class Bounds:
    """Search bounds; reaching one makes the result `incomplete`, never `ok`."""

    max_depth: int | None = None
    max_states: int | None = None
    max_seconds: float | None = None


def explore(
    model: Model[Any],
    *,
    symmetry: bool = True,
    bounds: Bounds | None = None,
    stop_at_first: bool = True,
    progress: Callable[[Progress], None] | None = None,
    progress_interval: float = 0.5,
    action_kinds: tuple[str, ...] = (),
    until: str | None = None,
    checkpoint: Checkpoint | None = None,
    workers: int = 1,
) -> Result:
    """Explore `model` breadth first and check its properties and coverage goals.

    `action_kinds` names every kind of action the model has, so that kinds which never fired are
    reported; `stop_at_first` ends the search at the first (shortest) violation; `until` ends it
    at the first violation of that spec (the zoo's: each variant must break its own spec);
    `checkpoint` saves the search at level ends and resumes it from an existing file (see the
    module's docstring); `workers` above 1 expands each level in that many forked processes
    (checker/engine/workers.py), with the same states, counts and verdict.
    """
    if workers < 1:
        raise ValueError(f"workers={workers} must be at least 1")
    bounds = bounds or Bounds()
    rep = model.representative if (symmetry and model.has_symmetry) else None
    properties = list(model.properties())
    always = [(p.spec, p.check) for p in properties if p.kind == "always"]
    quiet = [(p.spec, p.check) for p in properties if p.kind == "quiescence"]
    pending_goals = list(model.goals())
    lassos = list(model.lassos())
    # every edge (parent, child, marks), kept only for models with lasso properties
    edges = EdgeLog(checkpoint.edges if checkpoint is not None else None)
    edge_src, edge_dst, edge_marks = edges.src, edges.dst, edges.marks
    #: per goal reached: the fingerprints of the step's source and target, and its action
    goal_hits: dict[str, tuple[int, Action, int]] = {}
    # A violation found: (spec, message, fingerprint of the last state, depth of that state).
    found: list[tuple[str, str, int, int]] = []
    found_specs: set[str] = set()

    successors = model.successors
    finished = model.finished
    quiescent = model.quiescent
    max_depth = bounds.max_depth
    max_states = bounds.max_states if bounds.max_states is not None else 1 << 62
    max_seconds = bounds.max_seconds

    gc_was_enabled = gc.isenabled()
    gc.disable()
    start = time.perf_counter()
    last_report = start
    table = FingerprintTable()
    fired: dict[str, int] = dict.fromkeys(action_kinds, 0)
    frontier: list[Any] = []
    frontier_fps = array("Q")
    transitions = 0
    incomplete: str | None = None
    #: a violation that ends the search was found: finish the level in scan mode
    stop = False

    def record(spec: str, message: str, fp: int, depth: int) -> None:
        nonlocal stop
        if spec not in found_specs:
            found_specs.add(spec)
            found.append((spec, message, fp, depth))
            stop = stop or stop_at_first or spec == until

    depth = 0
    #: seconds the search ran in earlier processes (resumed from a checkpoint)
    before = 0.0
    resumed_at: int | None = None
    signature = {"model": model.name, "variant": model.variant, "scope": dict(model.scope),
                 "symmetry": rep is not None, "stop_at_first": stop_at_first, "until": until}

    #: the states of the next level found before the level was saved within (a resume)
    carried: tuple[list[Any], array] | None = None
    #: signals received: save where the search is, and end it
    signals: list[int] = []

    def save(rest: tuple[list[Any], array] | None = None,
             ahead: tuple[list[Any], array] | None = None) -> None:
        """Save the level (or the `rest` of it still to expand), with the next level so far."""
        states, fps = rest if rest is not None else (frontier, frontier_fps)
        checkpoint.save(signature, {"depth": depth, "states": table.count,  # type: ignore[union-attr]
                                    "seconds": before + time.perf_counter() - start},
                        {"table": table, "frontier": states,
                         "frontier_fps": fps, "ahead": ahead,
                         "depth": depth, "transitions": transitions, "fired": fired,
                         "goal_hits": goal_hits, "found": found,
                         "edges": edges.saved(),
                         "seconds": before + time.perf_counter() - start})

    caught: dict[int, Any] = {}
    if checkpoint is not None and threading.current_thread() is threading.main_thread():
        for sig in (signal.SIGTERM, signal.SIGINT):
            caught[sig] = signal.signal(sig, lambda signum, frame: signals.append(signum))

    # Forked before a checkpoint is loaded: a worker keeps every object its parent held at the
    # fork for good (it never returns to the frames that hold them), and a resumed level's states
    # would be a dead copy in each worker, 2 KB a state for Ignite's rebalance.
    pool = Pool(model, rep, workers, always, quiet, pending_goals, lassos) if workers > 1 else None
    try:
        if checkpoint is not None and checkpoint.exists():
            saved = checkpoint.load(signature)
            table, frontier_fps, depth = saved["table"], saved["frontier_fps"], saved["depth"]
            frontier = model.restore(saved["frontier"])
            transitions, before = saved["transitions"], saved["seconds"]
            fired.update(saved["fired"])
            goal_hits.update(saved["goal_hits"])
            pending_goals = [g for g in pending_goals if g.name not in goal_hits]
            for spec, msg, fp, d in saved["found"]:
                record(spec, msg, fp, d)
            edges.resume(saved["edges"])
            if saved["ahead"] is not None:
                carried = (model.restore(saved["ahead"][0]), saved["ahead"][1])
            resumed_at = depth
            del saved
        else:
            edges.start()
            for s in model.init_states():
                h = fingerprint(rep(s) if rep else s)
                if table.insert(h, 0):
                    frontier.append(s)
                    frontier_fps.append(h)
                    for spec, check in always:
                        msg = check(s)
                        if msg is not None:
                            record(spec, msg, h, 0)
        saved_at, saved_depth = time.perf_counter(), -1
        # with a checkpoint, the time bound is checked at level ends (where the search is saved)
        seconds_left = None if max_seconds is None else max_seconds - before
        level_seconds = seconds_left if checkpoint is None else None

        scan_only = stop

        def search_in_workers() -> None:
            """The level loop below, with the levels expanded by `workers` processes."""
            nonlocal depth, transitions, incomplete, scan_only, saved_at, saved_depth, last_report
            nonlocal frontier, frontier_fps, carried
            assert pool is not None
            pool.add(frontier, frontier_fps)
            # the queue the progress line shows: the states of the level not yet expanded
            # and those of the next found so far (a worker's share of the level, once it
            # is done, is its share of the next, so the sizes alone will not do)
            queued = 0
            if carried is not None:
                pool.add(*carried, ahead=True)
                queued = len(carried[1])
            frontier, frontier_fps, carried = [], array("Q"), None
            expanded = 0
            level_count = table.count

            def on_batch(msg: Batch) -> Reply:
                nonlocal transitions, scan_only, incomplete, last_report, expanded
                (_, done, moves, kinds, cand_fps, cand_parents, broken, findings, hits,
                 batch_edges) = msg
                expanded += done
                for spec, message, fp in findings:
                    record(spec, message, fp, depth)
                    if spec == MODEL_ERROR:
                        scan_only = scan_only or stop
                transitions += moves
                for kind, n in kinds.items():
                    fired[kind] = fired.get(kind, 0) + n
                for name, hs, action, h in hits:
                    goal_hits.setdefault(name, (hs, action, h))
                new = bytearray(len(cand_fps))
                if not scan_only:
                    insert = table.insert
                    for j, h in enumerate(cand_fps):
                        if insert(h, cand_parents[j]):
                            new[j] = 1
                    for j, spec, message in broken:
                        if new[j]:
                            record(spec, message, cand_fps[j], depth + 1)
                    if batch_edges is not None:
                        edge_src.extend(batch_edges[0])
                        edge_dst.extend(batch_edges[1])
                        edge_marks.extend(batch_edges[2])
                        edges.maybe_spill()
                scan_only = scan_only or stop
                now = time.perf_counter()
                halt = False
                if not scan_only:
                    if signals:
                        halt = True
                    elif level_seconds is not None and now - start > level_seconds:
                        incomplete, halt = f"time bound {max_seconds:g} s reached", True
                    elif table.count >= max_states:
                        incomplete, halt = f"state bound {max_states} reached", True
                if progress is not None and now - last_report >= progress_interval:
                    last_report = now
                    progress(Progress(table.count, transitions, depth,
                                      queued - expanded + table.count - level_count,
                                      before + now - start))
                return bytes(new), scan_only, frozenset(goal_hits), halt

            while sum(pool.sizes):
                if max_depth is not None and depth >= max_depth and not scan_only:
                    incomplete = f"depth bound {max_depth} reached"
                    if checkpoint is not None and saved_depth != depth:
                        rest, rest_fps, _, _ = pool.dump()
                        save((rest, rest_fps))
                    break
                pool.balance()
                queued += sum(pool.sizes)
                expanded = 0
                level_count = table.count
                if not pool.level(depth, scan_only, frozenset(goal_hits), on_batch):
                    if signals:
                        rest, rest_fps, ahead, ahead_fps = pool.dump()
                        save((rest, rest_fps), (ahead, ahead_fps))
                        incomplete = (f"stopped by {signal.Signals(signals[0]).name}, saved "
                                      f"at depth {depth} with {len(rest):,} of its states "
                                      f"still to expand")
                    break
                if scan_only or not sum(pool.sizes):
                    break
                queued = 0
                depth += 1
                if checkpoint is not None:
                    now = time.perf_counter()
                    out_of_time = seconds_left is not None and now - start > seconds_left
                    if out_of_time or checkpoint.due(now - saved_at):
                        rest, rest_fps, _, _ = pool.dump()
                        save((rest, rest_fps))
                        del rest, rest_fps
                        saved_at, saved_depth = time.perf_counter(), depth
                    if out_of_time:
                        incomplete = (f"time bound {max_seconds:g} s reached (saved at "
                                      f"depth {depth})")
                        break

        if workers > 1 and frontier:
            search_in_workers()
        while frontier:
            if max_depth is not None and depth >= max_depth and not scan_only:
                incomplete = f"depth bound {max_depth} reached"
                if checkpoint is not None and saved_depth != depth:
                    save()
                break
            next_states: list[Any] = []
            next_fps = array("Q")
            if carried is not None:
                next_states, next_fps = carried
                carried = None
            keys, parents, mask, limit = table.keys, table.parents, table.mask, table.limit
            shift = table.shift
            count = table.count
            fired_get = fired.get
            for idx, s in enumerate(frontier):
                if idx & 255 == 0:
                    if lassos:
                        edges.maybe_spill()
                    if signals and not scan_only:
                        table.count = count
                        save((frontier[idx:], frontier_fps[idx:]), (next_states, next_fps))
                        incomplete = (f"stopped by {signal.Signals(signals[0]).name}, saved at "
                                      f"depth {depth} with {len(frontier) - idx:,} of its "
                                      f"states still to expand")
                        break
                    now = time.perf_counter()
                    if (level_seconds is not None and now - start > level_seconds
                            and not scan_only):
                        incomplete = f"time bound {max_seconds:g} s reached"
                        break
                    if progress is not None and now - last_report >= progress_interval:
                        last_report = now
                        progress(Progress(count, transitions, depth, len(frontier) - idx
                                          + len(next_states), before + now - start))
                hs = frontier_fps[idx]
                try:
                    succ = successors(s)
                except Exception as exc:  # a handler failed: a flaw of the model, with its trace
                    record(MODEL_ERROR, f"{type(exc).__name__}: {exc}", hs, depth)
                    scan_only = scan_only or stop
                    continue
                if quiet and quiescent(s, succ):
                    for spec, check in quiet:
                        msg = check(s)
                        if msg is not None:
                            record(spec, msg, hs, depth)
                if not succ and not finished(s):
                    record(DEADLOCK, "no action is enabled and the protocol has not finished",
                           hs, depth)
                if scan_only:
                    continue
                transitions += len(succ)
                for a, t in succ:
                    kind = a[0]
                    fired[kind] = fired_get(kind, 0) + 1
                    h = ((hash(rep(t) if rep else t) * MIX) & MASK64) or 1
                    if pending_goals:
                        hit = False
                        for g in pending_goals:
                            if g.reached(s, a, t):
                                goal_hits[g.name] = (hs, a, h)
                                hit = True
                        if hit:
                            pending_goals = [g for g in pending_goals if g.name not in goal_hits]
                    i = h >> shift
                    while True:
                        k = keys[i]
                        if k == 0:
                            keys[i] = h
                            parents[i] = hs
                            count += 1
                            next_states.append(t)
                            next_fps.append(h)
                            for spec, check in always:
                                msg = check(t)
                                if msg is not None:
                                    record(spec, msg, h, depth + 1)
                            if count > limit:
                                table.count = count
                                keys = parents = None  # let the old columns go while growing
                                table.grow()
                                keys, parents = table.keys, table.parents
                                mask, limit, shift = table.mask, table.limit, table.shift
                            break
                        if k == h:
                            break
                        i = (i + 1) & mask
                    if lassos:
                        edge_src.append(hs)
                        edge_dst.append(h)
                        edge_marks.append(sum(1 << bit for bit, lasso in enumerate(lassos)
                                              if lasso.marked(s, a, t)))
                    if stop:
                        scan_only = True
                        break
                if count >= max_states and not scan_only:
                    incomplete = f"state bound {max_states} reached"
                    break
            table.count = count
            if incomplete or scan_only:
                break
            frontier, frontier_fps = next_states, next_fps
            if frontier:
                depth += 1
                if checkpoint is not None:
                    now = time.perf_counter()
                    out_of_time = seconds_left is not None and now - start > seconds_left
                    if out_of_time or checkpoint.due(now - saved_at):
                        save()
                        saved_at, saved_depth = time.perf_counter(), depth
                    if out_of_time:
                        incomplete = (f"time bound {max_seconds:g} s reached (saved at depth "
                                      f"{depth})")
                        break
        seconds = before + time.perf_counter() - start
    finally:
        if pool is not None:
            pool.close()
        if gc_was_enabled:
            gc.enable()
        for sig, handler in caught.items():
            signal.signal(sig, handler)

    found.sort(key=lambda f: f[3])
    violations = [
        Violation(spec, msg, _rebuild(model, rep, table, fp)) for spec, msg, fp, _ in found
    ]
    if lassos and not stop and incomplete is None:
        violations.extend(_lassos(model, rep, table, lassos, edges))
        seconds = before + time.perf_counter() - start
    edges.close()
    if checkpoint is not None and incomplete is None:
        checkpoint.remove()  # a verdict: nothing left to resume
    goals = []
    for g in model.goals():
        hit = goal_hits.get(g.name)
        trace = None
        if hit is not None:
            trace = _rebuild(model, rep, table, hit[0])
            trace.steps.append(_goal_step(model, rep, trace, g, hit[1], hit[2]))
        goals.append(GoalResult(g.name, g.description, hit is not None, trace))

    if violations:
        verdict = "violation"
    elif incomplete:
        verdict = "incomplete"
    elif model.goals_required and any(not g.reached for g in goals):
        verdict = "gap"
    else:
        verdict = "ok"
    return Result(
        model=model.name,
        variant=model.variant,
        scope=dict(model.scope),
        symmetry=rep is not None,
        result=verdict,
        distinct_states=table.count,
        transitions=transitions,
        depth=depth,
        seconds=seconds,
        fired=dict(sorted(fired.items())),
        never_fired=sorted(k for k, v in fired.items() if v == 0),
        violations=violations,
        goals=goals,
        incomplete_reason=incomplete,
        table_bytes=table.nbytes,
        resumed_at=resumed_at,
        workers=workers,
    )


def _goal_step(model: Model[Any], rep: Callable[[Any], Any] | None, trace: Trace,
               goal: Goal[Any], action: Action, target: int) -> tuple[Action, Hashable]:
    """The step that reached `goal` from the end of `trace`: `action` itself, or, when the trace
    was rebuilt to another member of the state's symmetry class (a search resumed from a
    checkpoint may keep another member than a rebuild reaches), a step to a state of the same
    class (`target`) that reaches the goal too."""
    state = trace.steps[-1][1] if trace.steps else trace.init
    succ = model.successors(state)
    for a, t in succ:
        if a == action:
            return a, t
    for a, t in succ:
        if fingerprint(rep(t) if rep else t) == target and goal.reached(state, a, t):
            return a, t
    raise RuntimeError(f"goal {goal.name} is not reached again while rebuilding its trace")


def _rebuild(
    model: Model[Any], rep: Callable[[Any], Any] | None, table: FingerprintTable, fp: int
) -> Trace:
    """Re-execute the model along the parent fingerprints that lead to `fp`."""
    chain = [fp]
    while (parent := table.parent(chain[-1])) != 0:
        chain.append(parent)
    chain.reverse()

    def fp_of(s: Any) -> int:
        return fingerprint(rep(s) if rep else s)

    inits = [(i, s) for i, s in enumerate(model.init_states()) if fp_of(s) == chain[0]]
    if not inits:  # pragma: no cover - the table only holds fingerprints of reached states
        raise RuntimeError("no initial state matches the trace")
    index, init = inits[0]
    trace = Trace(init, index, [])
    state = init
    for target in chain[1:]:
        for a, t in model.successors(state):
            if fp_of(t) == target:
                trace.steps.append((a, t))
                state = t
                break
        else:  # pragma: no cover
            raise RuntimeError("a parent fingerprint has no matching successor")
    return trace


def _lassos(model: Model[Any], rep: Callable[[Any], Any] | None, table: FingerprintTable,
            lassos: list[Lasso[Any]], edges: EdgeLog) -> list[Violation]:
    """For each lasso property, the shortest reachable cycle through a marked edge, if any:
    strongly connected components of the explored graph (networkx), then the marked edge whose
    source is closest to an initial state, closed by a shortest path back."""
    src, dst, marks = _cyclic_core(table, edges)
    graph = nx.DiGraph()
    graph.add_edges_from(zip(src, dst, strict=True))
    component: dict[int, int] = {}
    for i, scc in enumerate(nx.strongly_connected_components(graph)):
        if len(scc) > 1:
            component.update(dict.fromkeys(scc, i))
    out: list[Violation] = []
    for bit, lasso in enumerate(lassos):
        candidates = {(u, v) for u, v, m in zip(src, dst, marks, strict=True)
                      if m >> bit & 1 and (u == v or component.get(u, -1) == component.get(v, -2))}
        if not candidates:
            continue
        depth = {u: _depth(table, u) for u, _ in candidates}
        nearest = sorted(candidates, key=lambda e: (depth[e[0]], e))[:64]
        u, v = min(nearest, key=lambda e: (depth[e[0]] + (0 if e[0] == e[1] else
                                           nx.shortest_path_length(graph, e[1], e[0])), e))
        back = [] if u == v else nx.shortest_path(graph, v, u)[1:]
        trace = _rebuild(model, rep, table, u)
        trace.loop_start = len(trace.steps)
        start = trace.steps[-1][1] if trace.steps else trace.init
        # with symmetry the cycle closes on a renaming of its first state: going round again
        # applies the renaming again, and a renaming repeated often enough is the identity
        for _ in range(MAX_ROUNDS):
            _follow(model, rep, trace, [v, *back], lasso)
            if trace.steps[-1][1] == start:
                break
        else:  # pragma: no cover - a representative that is no renaming
            raise RuntimeError(f"a {lasso.spec} cycle does not come back to its first state")
        cycle = len(trace.steps) - trace.loop_start
        out.append(Violation(lasso.spec, f"{lasso.description}: the last {cycle} steps return "
                                         f"to the state before them and repeat for ever",
                             trace))
    return out


def _cyclic_core(table: FingerprintTable,
                 edges: EdgeLog) -> tuple[list[int], list[int], list[int]]:
    """The edges that may lie on a cycle: edges out of a state no edge enters, or into a state no
    edge leaves, are on none, and dropping them may expose more (numpy, a pass per layer). Every
    cycle survives whole, so the strongly connected components with a cycle are the same; what
    reaches networkx is the cyclic part of the graph, not every edge of a large search.

    States are named by their slots in `table` (4 bytes, where a search of hundreds of millions
    of edges could not afford a sort of their fingerprints), read a chunk of edges at a time."""
    n = len(edges)
    dtype = np.uint32 if table.capacity <= 1 << 32 else np.uint64
    si, di = np.empty(n, dtype=dtype), np.empty(n, dtype=dtype)
    m = np.empty(n, dtype=np.uint8)
    at = 0
    for src, dst, marks in edges.chunks(_CHUNK):
        end = at + len(src)
        si[at:end], di[at:end], m[at:end] = table.slots(src), table.slots(dst), marks
        at = end
    while len(si):
        alive = np.zeros(table.capacity, dtype=bool)
        alive[si] = True
        enters = np.zeros(table.capacity, dtype=bool)
        enters[di] = True
        alive &= enters
        del enters
        keep = alive[si]
        keep &= alive[di]
        del alive
        if keep.all():
            break
        si, di, m = si[keep], di[keep], m[keep]
    keys = np.frombuffer(table.keys, dtype=np.uint64)
    return keys[si].tolist(), keys[di].tolist(), m.tolist()


def _depth(table: FingerprintTable, fp: int) -> int:
    depth = 0
    while (fp := table.parent(fp)) != 0:
        depth += 1
    return depth


def _follow(model: Model[Any], rep: Callable[[Any], Any] | None, trace: Trace,
            path: list[int], lasso: Lasso[Any]) -> None:
    """Extend `trace` along the fingerprints `path`, the first step by a marked transition."""
    state = trace.steps[-1][1] if trace.steps else trace.init
    for n, target in enumerate(path):
        for a, t in model.successors(state):
            if fingerprint(rep(t) if rep else t) == target and (n or lasso.marked(state, a, t)):
                trace.steps.append((a, t))
                state = t
                break
        else:  # pragma: no cover - the edges came from these successors
            raise RuntimeError("a cycle edge has no matching successor")


def step_views(model: Model[Any], trace: Trace) -> list[StepView]:
    """Readable steps of a trace: action, node, events and the state after each step."""
    views = [StepView("init", None, model.init_events(trace.init),
                      model.describe_state(trace.init))]
    prev = trace.init
    for action, state in trace.steps:
        text, node = model.describe_action(action)
        views.append(StepView(text, node, model.step_events(prev, action, state),
                              model.describe_state(state)))
        prev = state
    return views

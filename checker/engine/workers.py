"""Worker processes for `explore(..., workers=N)`: the expansion of a level on several cores.

The search stays breadth first and level by level. Its fingerprint table, and with it every
decision about which state is new, stays in the searching process; the states themselves live in
the workers, forked from it (so they share its model, its hash seed and its memo tables as they
were). Each worker expands its share of a level in batches, with the expansion the searching
process runs itself (`Expander`, checker/engine/expand.py), and sends, per batch, only numbers:
the fingerprints of the successors it found (each once per batch) with their parents', what its
`always` checks found on them, the quiescence, deadlock and model-error findings of the states it
expanded, goal hits, action counts and, for models with lasso properties, every edge. The
searching process inserts the fingerprints and answers with one bit per successor: new or not. A
worker keeps its new successors as its share of the next level, so a state crosses between
processes only when the levels are balanced (at a level's end, when one worker's share is more
than a tenth larger than another's), and when a checkpoint is saved or resumed.

Stern and Dill's parallel Murphi partitions states by hash among processes that each keep a part
of the table; here the table is one, so the workers never talk to each other and the verdict, the
states and the counts are those of the search in one process (which state of a level is reported
first may differ when two states of one level reach a goal or break a spec).
"""

from __future__ import annotations

import contextlib
import gc
import multiprocessing
import signal
import traceback
from array import array
from collections.abc import Callable
from multiprocessing.connection import Connection, wait
from typing import Any

from partsafe.checker.engine.expand import Checks, Expander
from partsafe.checker.engine.fingerprints import FingerprintTable
from partsafe.checker.engine.model import Action, Model

#: states a worker expands before it reports: large enough that the round trip costs little, small
#: enough that a halt (a bound, a signal, a violation) takes effect within a fraction of a second
BATCH = 512
#: a batch's table of candidates starts at 2**CANDIDATE_BITS slots (and grows if need be)
CANDIDATE_BITS = 13
#: a level is rebalanced when one worker's share exceeds another's by more than this fraction
IMBALANCE = 0.1

#: what the searching process answers a batch: one byte per successor (1: new), whether the
#: level is to be finished in scan mode, the goals reached so far, whether to stop the level now
Reply = tuple[bytes, bool, frozenset[str], bool]
#: what a worker reports for a batch (see `_level`)
Batch = tuple[Any, ...]


class WorkerError(RuntimeError):
    """A worker process failed: its traceback is the message."""


class Pool:
    """`workers` forked processes, each holding a share of the current and the next level."""

    def __init__(self, model: Model[Any], rep: Callable[[Any], Any] | None, workers: int,
                 checks: Checks) -> None:
        self.model = model
        context = multiprocessing.get_context("fork")
        self.conns: list[Connection] = []
        self.procs: list[Any] = []
        #: states of the current level held by each worker
        self.sizes = [0] * workers
        for _ in range(workers):
            mine, theirs = context.Pipe()
            proc = context.Process(target=_serve, daemon=True,
                                   args=(theirs, model, rep, checks))
            proc.start()
            theirs.close()
            self.conns.append(mine)
            self.procs.append(proc)

    def add(self, states: list[Any], fps: array, ahead: bool = False) -> None:
        """Deal `states` out to the workers, to their current level (or to the next)."""
        n = len(self.conns)
        for k, conn in enumerate(self.conns):
            part = states[k::n]
            conn.send(("add", part, array("Q", fps[k::n]), ahead))
            if not ahead:
                self.sizes[k] += len(part)

    def level(self, depth: int, scan_only: bool, reached: frozenset[str],
              on_batch: Callable[[Batch], Reply]) -> bool:
        """Expand the current level; `on_batch` takes every batch and answers it. True if the
        level was expanded to its end, False if a reply halted it (the unexpanded states and the
        next level so far stay with the workers, for `dump`)."""
        for conn in self.conns:
            conn.send(("level", depth, scan_only, reached))
        active = set(range(len(self.conns)))
        complete = True
        while active:
            for conn in wait([self.conns[k] for k in active]):
                k = self.conns.index(conn)  # type: ignore[arg-type]
                msg = self._recv(k)
                if msg[0] == "batch":
                    self.conns[k].send(on_batch(msg))
                else:  # ("done", size of its share of the next level, whether it was halted)
                    active.discard(k)
                    self.sizes[k] = msg[1]
                    complete = complete and not msg[2]
        return complete

    def balance(self) -> None:
        """Even out the workers' shares of the level about to be expanded."""
        while True:
            big = max(range(len(self.sizes)), key=self.sizes.__getitem__)
            small = min(range(len(self.sizes)), key=self.sizes.__getitem__)
            gap = self.sizes[big] - self.sizes[small]
            if gap <= max(IMBALANCE * self.sizes[big], 64):
                return
            self.conns[big].send(("take", gap // 2))
            states, fps = self._recv(big)
            self.conns[small].send(("add", states, fps, False))
            self.sizes[big] -= len(states)
            self.sizes[small] += len(states)

    def dump(self) -> tuple[list[Any], array, list[Any], array]:
        """Every worker's unexpanded states and next level so far (they keep them)."""
        rest: list[Any] = []
        rest_fps = array("Q")
        ahead: list[Any] = []
        ahead_fps = array("Q")
        for k, conn in enumerate(self.conns):
            conn.send(("dump",))
            states, fps, nxt, nxt_fps = self._recv(k)
            rest.extend(states)
            rest_fps.extend(fps)
            ahead.extend(nxt)
            ahead_fps.extend(nxt_fps)
        return self.model.restore(rest), rest_fps, self.model.restore(ahead), ahead_fps

    def close(self) -> None:
        """End the workers, wherever they are: they hold nothing the search still needs."""
        for proc in self.procs:
            proc.kill()
        for proc in self.procs:
            proc.join()
        for conn in self.conns:
            conn.close()

    def _recv(self, k: int) -> Any:
        try:
            msg = self.conns[k].recv()
        except EOFError:
            raise WorkerError(f"worker {k} ended unexpectedly (exit code "
                              f"{self.procs[k].exitcode})") from None
        if isinstance(msg, tuple) and msg and msg[0] == "error":
            raise WorkerError(msg[1])
        return msg


def _serve(conn: Connection, model: Model[Any], rep: Callable[[Any], Any] | None,
           checks: Checks) -> None:
    """A worker's loop: it answers the searching process's requests until it is killed or the
    searching process is gone. Ctrl-C and SIGTERM are the searching process's to handle (they
    often reach the whole process group), so that it can still save its workers' states."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    gc.disable()
    expander = Expander(model, rep, checks, _Findings())
    frontier: list[Any] = []
    fps = array("Q")
    nxt: list[Any] = []
    nxt_fps = array("Q")
    try:
        while True:
            msg = conn.recv()
            op = msg[0]
            if op == "add":
                states = model.restore(msg[1])
                if msg[3]:
                    nxt.extend(states)
                    nxt_fps.extend(msg[2])
                else:
                    frontier.extend(states)
                    fps.extend(msg[2])
            elif op == "take":
                n = msg[1]
                conn.send((frontier[len(frontier) - n:], fps[len(fps) - n:]))
                del frontier[len(frontier) - n:]
                del fps[len(fps) - n:]
            elif op == "level":
                frontier, fps, nxt, nxt_fps, halted = _level(
                    conn, expander, frontier, fps, nxt, nxt_fps, *msg[1:])
                conn.send(("done", len(frontier), halted))
            else:  # "dump"
                conn.send((frontier, fps, nxt, nxt_fps))
    except (EOFError, BrokenPipeError):
        return  # the searching process has gone
    except Exception:  # reported to the searching process, which raises it
        with contextlib.suppress(BrokenPipeError):
            conn.send(("error", traceback.format_exc()))


class _Findings:
    """What a worker's expansion of one batch found, for its report (the `Sink` of a worker)."""

    #: a worker never ends the search: the searching process answers its batch with scan mode
    stop = False

    def __init__(self) -> None:
        #: (spec, message, fingerprint) of the states expanded, at the level's depth
        self.found_here: list[tuple[str, str, int]] = []
        #: (candidate, spec, message) of `always` properties broken by a candidate
        self.broken: list[tuple[int, str, str]] = []
        #: (goal, source fingerprint, action, target fingerprint)
        self.hits: list[tuple[str, int, Action, int]] = []

    def state_broke(self, spec: str, message: str, fp: int) -> None:
        self.found_here.append((spec, message, fp))

    def new_state_broke(self, index: int, spec: str, message: str, fp: int) -> None:
        self.broken.append((index, spec, message))

    def goal_reached(self, goal: str, source: int, action: Action, target: int) -> None:
        self.hits.append((goal, source, action, target))


def _level(conn: Connection, expander: Expander, frontier: list[Any], fps: array,
           nxt: list[Any], nxt_fps: array, depth: int, scan_only: bool,
           reached: frozenset[str]) -> tuple[list[Any], array, list[Any], array, bool]:
    """Expand `frontier` batch by batch, each into the candidates of its own table (a successor
    once per batch), which the searching process looks up in the search's table. Returns the
    next level (as frontier, with an empty next) or, if halted, the unexpanded rest and the next
    level so far, and whether it was halted."""
    expander.pending = [g for g in expander.checks.goals if g.name not in reached]
    lassos = expander.checks.lassos
    idx = 0
    while idx < len(frontier):
        end = min(idx + BATCH, len(frontier))
        findings = expander.sink = _Findings()
        expander.fired, expander.transitions = {}, 0
        expander.edges = (array("Q"), array("Q"), array("B"))
        cand_states: list[Any] = []
        cand_fps = array("Q")
        cand_parents = array("Q")
        expander.expand(frontier, fps, idx, end, FingerprintTable(CANDIDATE_BITS), cand_states,
                        cand_fps, cand_parents, scan_only)
        conn.send(("batch", end - idx, expander.transitions, expander.fired, cand_fps,
                   cand_parents, findings.broken, findings.found_here, findings.hits,
                   expander.edges if lassos else None))
        new, scan_only, reached, halt = conn.recv()
        expander.pending = [g for g in expander.pending if g.name not in reached]
        for j, bit in enumerate(new):
            if bit:
                nxt.append(cand_states[j])
                nxt_fps.append(cand_fps[j])
        idx = end
        if halt:
            return frontier[idx:], fps[idx:], nxt, nxt_fps, True
    return nxt, nxt_fps, [], array("Q"), False

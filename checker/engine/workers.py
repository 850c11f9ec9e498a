"""Worker processes for `explore(..., workers=N)`: the expansion of a level on several cores.

The search stays breadth first and level by level. Its fingerprint table, and with it every
decision about which state is new, stays in the searching process; the states themselves live in
the workers, forked from it (so they share its model, its hash seed and its memo tables as they
were). Each worker expands its share of a level in batches and sends, per batch, only numbers:
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
from collections.abc import Callable, Sequence
from multiprocessing.connection import Connection, wait
from typing import Any

from partsafe.checker.engine.fingerprints import MASK64, MIX
from partsafe.checker.engine.model import Goal, Lasso, Model

#: states a worker expands before it reports: large enough that the round trip costs little, small
#: enough that a halt (a bound, a signal, a violation) takes effect within a fraction of a second
BATCH = 512
#: a level is rebalanced when one worker's share exceeds another's by more than this fraction
IMBALANCE = 0.1

#: what the searching process answers a batch: one byte per successor (1: new), whether the
#: level is to be finished in scan mode, the goals reached so far, whether to stop the level now
Reply = tuple[bytes, bool, frozenset[str], bool]
#: what a worker reports for a batch (see `_expand`)
Batch = tuple[Any, ...]


class WorkerError(RuntimeError):
    """A worker process failed: its traceback is the message."""


class Pool:
    """`workers` forked processes, each holding a share of the current and the next level."""

    def __init__(self, model: Model[Any], rep: Callable[[Any], Any] | None, workers: int,
                 always: Sequence[tuple[str, Callable[[Any], str | None]]],
                 quiet: Sequence[tuple[str, Callable[[Any], str | None]]],
                 goals: Sequence[Goal[Any]], lassos: Sequence[Lasso[Any]]) -> None:
        self.model = model
        context = multiprocessing.get_context("fork")
        self.conns: list[Connection] = []
        self.procs: list[Any] = []
        #: states of the current level held by each worker
        self.sizes = [0] * workers
        for _ in range(workers):
            mine, theirs = context.Pipe()
            proc = context.Process(target=_serve, daemon=True,
                                   args=(theirs, model, rep, always, quiet, goals, lassos))
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
           always: Sequence[tuple[str, Callable[[Any], str | None]]],
           quiet: Sequence[tuple[str, Callable[[Any], str | None]]],
           goals: Sequence[Goal[Any]], lassos: Sequence[Lasso[Any]]) -> None:
    """A worker's loop: it answers the searching process's requests until it is killed or the
    searching process is gone. Ctrl-C and SIGTERM are the searching process's to handle (they
    often reach the whole process group), so that it can still save its workers' states."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    gc.disable()
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
                    conn, model, rep, always, quiet, goals, lassos, frontier, fps, nxt,
                    nxt_fps, *msg[1:])
                conn.send(("done", len(frontier), halted))
            else:  # "dump"
                conn.send((frontier, fps, nxt, nxt_fps))
    except (EOFError, BrokenPipeError):
        return  # the searching process has gone
    except Exception:  # reported to the searching process, which raises it
        with contextlib.suppress(BrokenPipeError):
            conn.send(("error", traceback.format_exc()))


def _level(conn: Connection, model: Model[Any], rep: Callable[[Any], Any] | None,
           always: Sequence[tuple[str, Callable[[Any], str | None]]],
           quiet: Sequence[tuple[str, Callable[[Any], str | None]]],
           goals: Sequence[Goal[Any]], lassos: Sequence[Lasso[Any]],
           frontier: list[Any], fps: array, nxt: list[Any], nxt_fps: array,
           depth: int, scan_only: bool, reached: frozenset[str]
           ) -> tuple[list[Any], array, list[Any], array, bool]:
    """Expand `frontier` batch by batch. Returns the next level (as frontier, with an empty next)
    or, if halted, the unexpanded rest and the next level so far, and whether it was halted."""
    successors = model.successors
    finished = model.finished
    quiescent = model.quiescent
    pending = [g for g in goals if g.name not in reached]
    idx = 0
    while idx < len(frontier):
        end = min(idx + BATCH, len(frontier))
        cand: dict[int, int] = {}  # fingerprint -> its index among the batch's candidates
        cand_fps = array("Q")
        cand_parents = array("Q")
        cand_states: list[Any] = []
        broken: list[tuple[int, str, str]] = []  # (candidate, spec, message) of `always`
        findings: list[tuple[str, str, int]] = []  # (spec, message, fingerprint) at this depth
        hits: list[tuple[str, int, Any, int]] = []
        fired: dict[str, int] = {}
        edges = (array("Q"), array("Q"), array("B"))
        transitions = 0
        for i in range(idx, end):
            s = frontier[i]
            hs = fps[i]
            try:
                succ = successors(s)
            except Exception as exc:
                findings.append(("MODEL-ERROR", f"{type(exc).__name__}: {exc}", hs))
                continue
            if quiet and quiescent(s, succ):
                for spec, check in quiet:
                    message = check(s)
                    if message is not None:
                        findings.append((spec, message, hs))
            if not succ and not finished(s):
                findings.append(("DEADLOCK", "no action is enabled and the protocol has not "
                                 "finished", hs))
            if scan_only:
                continue
            transitions += len(succ)
            for a, t in succ:
                kind = a[0]
                fired[kind] = fired.get(kind, 0) + 1
                h = ((hash(rep(t) if rep else t) * MIX) & MASK64) or 1
                if pending:
                    for g in pending:
                        if g.reached(s, a, t):
                            hits.append((g.name, hs, a, h))
                    if hits:
                        pending = [g for g in pending if all(h_[0] != g.name for h_ in hits)]
                if lassos:
                    edges[0].append(hs)
                    edges[1].append(h)
                    edges[2].append(sum(1 << bit for bit, lasso in enumerate(lassos)
                                        if lasso.marked(s, a, t)))
                if h in cand:
                    continue
                j = cand[h] = len(cand_states)
                cand_fps.append(h)
                cand_parents.append(hs)
                cand_states.append(t)
                for spec, check in always:
                    message = check(t)
                    if message is not None:
                        broken.append((j, spec, message))
        conn.send(("batch", end - idx, transitions, fired, cand_fps, cand_parents, broken,
                   findings, hits, edges if lassos else None))
        new, scan_only, reached, halt = conn.recv()
        pending = [g for g in pending if g.name not in reached]
        for j, bit in enumerate(new):
            if bit:
                nxt.append(cand_states[j])
                nxt_fps.append(cand_fps[j])
        idx = end
        if halt:
            return frontier[idx:], fps[idx:], nxt, nxt_fps, True
    return nxt, nxt_fps, [], array("Q"), False

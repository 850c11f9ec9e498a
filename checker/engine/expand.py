"""The expansion of states, the one step every search is made of: `Expander.expand`.

To expand a state is to ask the model for its successors and judge what is found there:

- the state itself: a step that raises is a MODEL-ERROR (an inconsistent model, reported with its
  trace instead of ending the run), `quiescence` properties hold where the model is quiescent,
  and a state with no successor that has not finished is a DEADLOCK;
- each transition: its kind is counted, the target's symmetry representative is fingerprinted
  (`fingerprint`, checker/engine/fingerprints.py), goals not yet reached are tried on it, the
  target is looked up in a visited table and, if new, appended to the next level and judged by
  the `always` properties, and for models with lasso properties the edge is kept.

In scan mode (a violation that ends the search was found in this level) only the state itself is
judged: its transitions are neither counted nor followed, so the level ends on the shortest
violation of all.

The searching process (checker/engine/bfs.py) and each worker process (checker/engine/workers.py)
run this same loop; what differs is given to it, never coded twice:

- the visited table: the search's own `FingerprintTable` in the searching process, where a state
  is new once in the whole search; in a worker, a table of one batch, where a state is new once in
  the batch (a candidate the searching process then looks up in the search's table);
- the `Sink` told of what is found: the searching process records a violation at once (and when
  it ends the search, its `stop` turns the rest of the level to scan mode after the transition
  that found it), a worker collects them for its batch report;
- a state bound, which only the searching process, holding the whole count, can judge.
"""

from __future__ import annotations

from array import array
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from partsafe.checker.engine.fingerprints import MASK64, MIX, FingerprintTable
from partsafe.checker.engine.model import Action, Goal, Lasso, Model

DEADLOCK = "DEADLOCK"
#: a step of the model raised: the model itself is inconsistent in the state reached
MODEL_ERROR = "MODEL-ERROR"
#: a state bound that is never reached
NO_BOUND = 1 << 62

#: a property's check: None when it holds in the state, else a message
Check = Callable[[Any], str | None]


@dataclass(frozen=True)
class Checks:
    """What a search judges, read once from the model: its properties by kind, its coverage goals
    and its lasso properties (whose marks are bits of an edge, in this order)."""

    always: tuple[tuple[str, Check], ...]
    quiet: tuple[tuple[str, Check], ...]
    goals: tuple[Goal[Any], ...]
    lassos: tuple[Lasso[Any], ...]

    @classmethod
    def of(cls, model: Model[Any]) -> Checks:
        properties = list(model.properties())
        return cls(always=tuple((p.spec, p.check) for p in properties if p.kind == "always"),
                   quiet=tuple((p.spec, p.check) for p in properties if p.kind == "quiescence"),
                   goals=tuple(model.goals()), lassos=tuple(model.lassos()))


class Sink(Protocol):
    """Told of what an expansion finds (seldom: never on the path of a clean transition)."""

    #: a violation that ends the search was found: the expansion turns to scan mode after the
    #: transition it is at (set by the searching process's sink; a worker's never sets it, the
    #: searching process answers its batch with scan mode instead)
    stop: bool

    def state_broke(self, spec: str, message: str, fp: int) -> None:
        """`spec` broke in the expanded state `fp` (quiescence, deadlock, model error)."""

    def new_state_broke(self, index: int, spec: str, message: str, fp: int) -> None:
        """The `always` property `spec` broke in the new state `fp`, the `index`-th of the
        states appended to the expansion's output."""

    def goal_reached(self, goal: str, source: int, action: Action, target: int) -> None:
        """The transition `source --action--> target` reached `goal`."""


class Expander:
    """Expands the states of a level for one process; counts what it expanded.

    `pending` are the goals not reached yet (a reached goal is dropped at once); `fired` and
    `transitions` count the transitions followed and `edges` (source, target, lasso marks) keeps
    them for models with lasso properties: the owner reads these, and may replace them (a worker
    starts each batch afresh), as it may replace the `sink`."""

    def __init__(self, model: Model[Any], rep: Callable[[Any], Any] | None, checks: Checks,
                 sink: Sink) -> None:
        self.model = model
        self.rep = rep
        self.checks = checks
        self.sink = sink
        self.pending: list[Goal[Any]] = list(checks.goals)
        self.fired: dict[str, int] = {}
        self.transitions = 0
        self.edges: tuple[array, array, array] = (array("Q"), array("Q"), array("B"))

    def expand(self, states: Sequence[Any], fps: array, lo: int, hi: int,
               table: FingerprintTable, out: list[Any], out_fps: array,
               out_parents: array | None, scan_only: bool,
               max_states: int = NO_BOUND) -> tuple[bool, bool]:
        """Expand `states[lo:hi]` (whose fingerprints are `fps[lo:hi]`): successors new to `table`
        go to `table` with their parent and are appended to `out` and `out_fps` (and their
        parent's fingerprint to `out_parents`, if given). Returns whether the level is now in
        scan mode and whether `table` reached `max_states` (the expansion then ends there).

        This is the search's hot loop: the fingerprint is computed inline (as `fingerprint`) and
        the table probed inline (linear probing, as `FingerprintTable.insert`), and everything it
        uses is bound to a local first: a call per transition costs TwoPhase's unreduced search
        about 9% of its time. tests/engine/test_expand.py holds the inline forms to the functions
        (every fingerprint a search visits is `fingerprint` of a reachable state)."""
        successors = self.model.successors
        finished = self.model.finished
        quiescent = self.model.quiescent
        rep = self.rep
        always, quiet, lassos = self.checks.always, self.checks.quiet, self.checks.lassos
        sink = self.sink
        found, broke, reached = sink.state_broke, sink.new_state_broke, sink.goal_reached
        pending = self.pending
        fired = self.fired
        fired_get = fired.get
        edge_src, edge_dst, edge_marks = self.edges
        keys, parents, mask, limit = table.keys, table.parents, table.mask, table.limit
        shift = table.shift
        count = table.count
        transitions = self.transitions
        mix, mask64 = MIX, MASK64
        bounded = False
        for idx in range(lo, hi):
            s = states[idx]
            hs = fps[idx]
            try:
                succ = successors(s)
            except Exception as exc:  # a handler failed: a flaw of the model, with its trace
                found(MODEL_ERROR, f"{type(exc).__name__}: {exc}", hs)
                scan_only = scan_only or sink.stop
                continue
            if quiet and quiescent(s, succ):
                for spec, check in quiet:
                    msg = check(s)
                    if msg is not None:
                        found(spec, msg, hs)
            if not succ and not finished(s):
                found(DEADLOCK, "no action is enabled and the protocol has not finished", hs)
            if scan_only:
                continue
            transitions += len(succ)
            for a, t in succ:
                kind = a[0]
                fired[kind] = fired_get(kind, 0) + 1
                h = ((hash(rep(t) if rep else t) * mix) & mask64) or 1
                if pending:
                    hit: list[str] | None = None
                    for g in pending:
                        if g.reached(s, a, t):
                            reached(g.name, hs, a, h)
                            hit = [g.name] if hit is None else [*hit, g.name]
                    if hit is not None:
                        pending = [g for g in pending if g.name not in hit]
                i = h >> shift
                while True:
                    k = keys[i]
                    if k == 0:
                        keys[i] = h
                        parents[i] = hs
                        count += 1
                        out.append(t)
                        out_fps.append(h)
                        if out_parents is not None:
                            out_parents.append(hs)
                        for spec, check in always:
                            msg = check(t)
                            if msg is not None:
                                broke(len(out_fps) - 1, spec, msg, h)
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
                if sink.stop:
                    scan_only = True
                    break
            if count >= max_states and not scan_only:
                bounded = True
                break
        table.count = count
        self.transitions = transitions
        self.pending = pending
        return scan_only, bounded

"""Conformance: could the model have produced this trace? A depth-first search of the reference
implementation's state space, guided by the trace's records.

Each record must be matched by a step of the model (`TraceMapping.match`) or by a step that changes
nothing and that the design allows (`TraceMapping.stutter`: a TLA+ action whose guard holds and
whose effect the state already has). Where the search stands in the trace is a position the mapping
defines: an index into one file's records, or, for a log of several members, each member's stream's
index with the names and numbers bound so far (`partsafe.checker.protocols.log_trace`). Between two
records at most `max_hidden` steps may run that no record shows (`TraceMapping.hidden` says which
may), since real logs do not print every step. The search memoises (state key, position): a state
reached again at the same record, with no fewer hidden steps left, is not searched again, so a trace
that does not conform is rejected without re-exploring the same partial matches. `TraceMapping.key`
may fold states that no later record can tell apart (the processes the rest of the trace never names
are interchangeable).

The verdict is ``conforms`` with the matched run, ``does-not-conform`` with a diagnosis at the
longest matched prefix (the last matched record, the model state there, every enabled action,
and why each candidate step fails the unmatched record), or ``undecided`` when `max_states`
states were searched first.
"""

from __future__ import annotations

import time
from abc import ABC, abstractmethod
from collections.abc import Hashable, Sequence
from dataclasses import dataclass, field
from itertools import pairwise
from typing import Any, Generic, Literal, TypeVar

from partsafe.checker.engine.fingerprints import fingerprint
from partsafe.checker.engine.model import Action, Model
from partsafe.checker.engine.result import Trace

S = TypeVar("S")
#: where the search stands in a trace: a record's index, or a mapping's own hashable position
#: (never a string: a string is why a step matches no record)
Position = Hashable

#: a node of the search tree: (state, position, hidden steps since the last record, the action
#: that reached it, its parent's index)
Node = tuple[Any, Position, int, Action | None, int]
Verdict = Literal["conforms", "does-not-conform", "undecided"]
#: the action of a record matched by a step that changes nothing
STUTTER: Action = ("stutter",)


class TraceMapping(ABC, Generic[S]):
    """How one trace format's records meet one model's steps: the declarative table beside a
    protocol model, made for one trace."""

    model: Model[S]

    @abstractmethod
    def records(self) -> Sequence[Any]:
        """The trace's records, in order."""

    @abstractmethod
    def where(self, pos: Position) -> str:
        """The place (file:line) of the next record to match at `pos`."""

    def start(self, state: S) -> Sequence[Position] | str:
        """The positions after the records the initial `state` accounts for (the events a
        model's initial state shows), or why it cannot begin the trace; by default the first
        record."""
        return [0]

    def finished(self, pos: Position) -> bool:
        """Has every record been matched at `pos`?"""
        return pos == len(self.records())

    def progress(self, pos: Position) -> int:
        """How many records are matched at `pos`."""
        return pos  # type: ignore[return-value]

    def last(self, pos: Position) -> str | None:
        """The place of the last record matched at `pos` (None before any)."""
        return self.where(pos - 1) if pos else None  # type: ignore[operator]

    def located(self, pos: Position) -> tuple[str, int] | None:
        """The file and line of the next record to match at `pos`, where a report (SARIF) places
        a diagnosis; None at the end of the trace, or for a record no line holds (the default)."""
        return None

    def last_located(self, pos: Position) -> tuple[str, int] | None:
        """The file and line of the last record matched at `pos` (None before any)."""
        return self.located(pos - 1) if pos else None  # type: ignore[operator]

    def consumed(self, before: Position, after: Position) -> str:
        """The place of the records a step matched, moving from `before` to `after`."""
        return self.where(before)

    @abstractmethod
    def match(self, pos: Position, state: S, action: Action, nxt: S) -> Sequence[Position] | str:
        """The positions the step `state` -`action`-> `nxt` can leave the trace at, having
        matched at least one record from `pos` on (several when the trace's names can be bound
        in several ways), or why it matches none."""

    def stutter(self, pos: Position, state: S) -> Position | str:
        """The position after a record matched by a step of the design that changes nothing in
        `state`, or why no such step matches the record at `pos`."""
        return "no step of the design leaves the state as it is"

    def rank(self, pos: Position, state: S, action: Action, nxt: S) -> int:
        """The order in which the steps that match the record at `pos` are searched, lowest first
        (`action` may be `STUTTER`); by default the model's own order."""
        return 0

    def hidden(self, pos: Position, state: S, action: Action, nxt: S) -> bool:
        """May this step run at `pos` without a record showing it?"""
        return True

    def key(self, state: S, pos: Position) -> Hashable:
        """The memo key of `state` at `pos` (states with one key have the same future against
        the records left)."""
        return state

    def action_name(self, action: Action) -> str:
        """`action` in the trace's terms (by default the model's name for it)."""
        return "stutter" if action == STUTTER else self.model.describe_action(action)[0]

    def describe(self, state: S) -> dict[str, Any]:
        """`state` in the trace's terms, for a diagnosis (by default the model's view)."""
        return self.model.describe_state(state)

    def summary(self, pos: Position) -> dict[str, Any]:
        """What the report shows of the trace at `pos`, the end of the matched run or the
        longest matched prefix (a log's names as the model's ids); by default nothing."""
        return {}

    @abstractmethod
    def explain(self, pos: Position, state: S) -> list[str]:
        """Why the record at `pos` matches no step from `state`: one sentence per candidate
        action (a guard that fails, or a field the step makes otherwise than the record says)."""


@dataclass
class Diagnosis:
    """Where a trace leaves the design: the first record no step matched, after the longest
    matched prefix."""

    matched: int
    last_matched: str | None
    unmatched: str
    state: dict[str, Any]
    enabled: list[str]
    reasons: list[str]
    #: the file and line of the unmatched record and of the last matched one, when a line holds
    #: them (`TraceMapping.located`)
    unmatched_at: tuple[str, int] | None = None
    last_matched_at: tuple[str, int] | None = None

    def as_dict(self) -> dict[str, Any]:
        return {"matched_records": self.matched, "last_matched": self.last_matched,
                "unmatched": self.unmatched, "state": self.state, "enabled": self.enabled,
                "reasons": self.reasons,
                "unmatched_at": _located(self.unmatched_at),
                "last_matched_at": _located(self.last_matched_at)}


def _located(at: tuple[str, int] | None) -> dict[str, Any] | None:
    return None if at is None else {"file": at[0], "line": at[1]}


@dataclass
class Conformance:
    """What `conform` decided, and how much it searched."""

    verdict: Verdict
    records: int
    states: int
    seconds: float
    max_hidden: int
    #: the matched run (conforms): (the record's place, None for a hidden step; the action; its
    #: name in the trace's terms)
    run: list[tuple[str | None, Action, str]] = field(default_factory=list)
    init_index: int = 0
    #: the matched run as a path of the model (conforms): its steps but the stuttering ones
    trace: Trace | None = None
    diagnosis: Diagnosis | None = None
    #: the longest matched prefix as a path of the model (does-not-conform, undecided)
    prefix: Trace | None = None
    incomplete_reason: str | None = None
    #: the mapping's `summary` where the search ended (the matched run's end, else the longest
    #: matched prefix)
    context: dict[str, Any] = field(default_factory=dict)

    def as_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"verdict": self.verdict, "records": self.records,
                               "states": self.states, "seconds": round(self.seconds, 3),
                               "max_hidden": self.max_hidden}
        if self.verdict == "conforms":
            out["run"] = [{"record": r, "action": name} for r, _, name in self.run]
        if self.diagnosis is not None:
            out["diagnosis"] = self.diagnosis.as_dict()
        if self.incomplete_reason is not None:
            out["incomplete_reason"] = self.incomplete_reason
        return out | self.context


def conform(mapping: TraceMapping[S], *, max_hidden: int = 0,
            max_states: int = 5_000_000) -> Conformance:
    """Search for a run of `mapping.model` that matches every record of the trace (see the
    module's docstring)."""
    t0 = time.perf_counter()
    model = mapping.model
    n = len(mapping.records())
    # the search tree: (state, position, hidden steps since the last record, action, parent)
    nodes: list[Node] = []
    # memo: the explorer's fingerprint of (key, position) -> the fewest hidden steps it was
    # searched with (a dict: the explorer's FingerprintTable is probed in Python outside its
    # own hot loop, which costs this search a quarter of its time)
    seen: dict[int, int] = {}
    stack: list[int] = []
    inits = list(model.init_states())
    for s in reversed(inits):
        begun = mapping.start(s)
        for pos in ([] if isinstance(begun, str) else reversed(begun)):
            nodes.append((s, pos, 0, None, -1))
            stack.append(len(nodes) - 1)
    if not stack:  # no initial state shows what the trace begins with
        nodes.append((inits[0], 0, 0, None, -1))
        return Conformance("does-not-conform", n, 0, time.perf_counter() - t0, max_hidden,
                           diagnosis=_diagnose(mapping, nodes, 0, str(mapping.start(inits[0]))))
    deepest, most = stack[-1], -1
    expanded = 0
    while stack:
        at = stack.pop()
        state, pos, hidden, _, _ = nodes[at]
        if mapping.finished(pos):
            init_index = _init_of(nodes, at, inits)
            return Conformance("conforms", n, expanded, time.perf_counter() - t0, max_hidden,
                               run=_run(mapping, nodes, at), init_index=init_index,
                               trace=_trace(nodes, at, init_index),
                               context=mapping.summary(pos))
        fp = fingerprint((mapping.key(state, pos), pos))
        before = seen.get(fp)
        if before is not None and before <= hidden:  # searched before with no more hidden steps
            continue
        seen[fp] = hidden
        if expanded >= max_states:
            return Conformance("undecided", n, expanded, time.perf_counter() - t0, max_hidden,
                               diagnosis=_diagnose(mapping, nodes, deepest),
                               prefix=_trace(nodes, deepest, _init_of(nodes, deepest, inits)),
                               incomplete_reason=f"{max_states:,} states searched "
                                                 "(--max-states)",
                               context=mapping.summary(nodes[deepest][1]))
        expanded += 1
        if (done := mapping.progress(pos)) > most:
            deepest, most = at, done
        matched: list[tuple[int, Any, Position, Action]] = []
        unlogged: list[tuple[Any, Position, int, Action]] = []
        for action, nxt in model.successors(state):
            took = mapping.match(pos, state, action, nxt)
            if not isinstance(took, str):
                rank = mapping.rank(pos, state, action, nxt)
                matched.extend((rank, nxt, after, action) for after in took)
            elif hidden < max_hidden and mapping.hidden(pos, state, action, nxt):
                unlogged.append((nxt, pos, hidden + 1, action))
        if not isinstance(after := mapping.stutter(pos, state), str):
            matched.append((mapping.rank(pos, state, STUTTER, state), state, after, STUTTER))
        matched.sort(key=lambda m: m[0])  # stable: the model's order among equal ranks
        children = [(nxt, after, 0, action) for _, nxt, after, action in matched] + unlogged
        for child in reversed(children):  # the best-ranked match first
            nodes.append((*child, at))
            stack.append(len(nodes) - 1)
    return Conformance("does-not-conform", n, expanded, time.perf_counter() - t0, max_hidden,
                       diagnosis=_diagnose(mapping, nodes, deepest),
                       prefix=_trace(nodes, deepest, _init_of(nodes, deepest, inits)),
                       context=mapping.summary(nodes[deepest][1]))


def _path(nodes: list[Node], at: int) -> list[int]:
    out = []
    while at >= 0:
        out.append(at)
        at = nodes[at][4]
    return out[::-1]


def _init_of(nodes: list[Node], at: int,
             inits: list[Any]) -> int:
    first = nodes[_path(nodes, at)[0]][0]
    return next(k for k, s in enumerate(inits) if s == first)


def _trace(nodes: list[Node], at: int, init_index: int
           ) -> Trace:
    path = _path(nodes, at)
    steps = [(action, nodes[k][0]) for k in path[1:]
             if (action := nodes[k][3]) is not None and action != STUTTER]
    return Trace(nodes[path[0]][0], init_index, steps)


def _run(mapping: TraceMapping[Any], nodes: list[Node],
         at: int) -> list[tuple[str | None, Action, str]]:
    out: list[tuple[str | None, Action, str]] = []
    path = _path(nodes, at)
    for prev, cur in pairwise(path):
        _, _, hidden, action, _ = nodes[cur]
        assert action is not None
        record = mapping.consumed(nodes[prev][1], nodes[cur][1]) if not hidden else None
        out.append((record, action, mapping.action_name(action)))
    return out


def _diagnose(mapping: TraceMapping[Any], nodes: list[Node],
              at: int, why: str | None = None) -> Diagnosis:
    model = mapping.model
    state, pos, _, _, _ = nodes[at]
    return Diagnosis(
        matched=mapping.progress(pos),
        last_matched=mapping.last(pos),
        unmatched=mapping.where(pos),
        state=mapping.describe(state),
        enabled=[mapping.action_name(a) for a, _ in model.successors(state)],
        reasons=[f"no initial state of the model shows it: {why}"] if why is not None
        else mapping.explain(pos, state),
        unmatched_at=mapping.located(pos),
        last_matched_at=mapping.last_located(pos),
    )

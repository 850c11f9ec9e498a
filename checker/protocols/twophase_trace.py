"""TwoPhase against traces in TLA+'s NDJSON trace format (`partsafe.traces.tla_ndjson`): the
mapping of the TwoPhase benchmark of Cirstea et al. 2024, and the worked example of bringing a
foreign trace format to `partsafe conform` (docs/conformance.md).

The table below is the whole mapping. A record's ``event`` is one of TwoPhase's actions, named as
in ``TwoPhase.tla`` and as in the model (`ACTIONS`); its ``event_args`` are the resource manager
the action takes, by the name the configuration file gives it (``{"RM": ["rm-0", ...]}``: the
model's RM i is the i-th name). Its variables are ``TwoPhase.tla``'s, seen in a model state as
`variables` shows them (``tmState`` is ``"init"`` or ``"done"``). Each action's guard is there
too, in the spec's words, so that a record no step matches is explained by the guard that fails.

One step of the spec is not a step of the model: ``TMRcvPrepared(r)`` for an ``r`` already in
``tmPrepared`` changes nothing, and the model leaves such self-loops out (its state graph is
TLC's); the benchmark's runs log them, and `stutter` matches them where the spec's guard holds.
And one step of the model is not one the trace spec matches records with: ``RMChooseToAbort``,
which ``TwoPhaseTrace.tla``'s ``TPTraceNext`` leaves out (`TRACED`: the traced implementation's
resource managers never abort on their own).
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Sequence
from dataclasses import dataclass
from typing import Any

from partsafe.checker.engine.conform import STUTTER as STUTTER_ACTION
from partsafe.checker.engine.conform import TraceMapping
from partsafe.checker.engine.model import Action
from partsafe.checker.protocols.twophase import INIT, RM_NAMES, TwoPhase
from partsafe.traces.tla_ndjson import TraceFormatError, TraceLine, apply

#: ``TwoPhase.tla``'s variables and their values in a model state
Variables = dict[str, Hashable]


@dataclass(frozen=True)
class Guard:
    """An action's enabling condition as ``TwoPhase.tla`` writes it, and a test of it on a
    state's `variables` for a resource manager (None for the TM's actions) that gives why it
    fails (None: it holds)."""

    text: str
    fails: Callable[[Variables, str | None, tuple[str, ...]], str | None]


def _is(var: str, want: str) -> Callable[[Variables, str | None, tuple[str, ...]], str | None]:
    """``var = want``, or ``var[r] = want`` for the function-valued ``rmState``."""
    def fails(v: Variables, rm: str | None, rms: tuple[str, ...]) -> str | None:
        at = rm if var == "rmState" else None
        value = dict(v[var])[at] if at is not None else v[var]  # type: ignore[call-overload]
        return None if value == want else f"{var}{f'[{at}]' if at else ''} is {value!r}"
    return fails


def _in_msgs(*record: tuple[str, str]) -> Callable[[Variables, str | None, tuple[str, ...]],
                                                   str | None]:
    def fails(v: Variables, rm: str | None, rms: tuple[str, ...]) -> str | None:
        msg = tuple(sorted((*record, ("rm", rm)) if rm is not None and record[0][1] == "Prepared"
                            else record))
        return None if msg in v["msgs"] else f"msgs has no {_show(msg)}"  # type: ignore[operator]
    return fails


def _all_prepared(v: Variables, rm: str | None, rms: tuple[str, ...]) -> str | None:
    missing = sorted(set(rms) - v["tmPrepared"])  # type: ignore[operator]
    return None if not missing else (
        f"tmPrepared is {_show(v['tmPrepared'])}: {', '.join(missing)} "
        f"{'has' if len(missing) == 1 else 'have'} not prepared")


def _both(*tests: Callable[[Variables, str | None, tuple[str, ...]], str | None]
          ) -> Callable[[Variables, str | None, tuple[str, ...]], str | None]:
    def fails(v: Variables, rm: str | None, rms: tuple[str, ...]) -> str | None:
        return next((m for t in tests if (m := t(v, rm, rms)) is not None), None)
    return fails


#: TwoPhase's actions: whether an RM is their argument, and their guard (``TwoPhase.tla``)
ACTIONS: dict[str, tuple[bool, Guard]] = {
    "TMRcvPrepared": (True, Guard('tmState = "init" /\\ [type |-> "Prepared", rm |-> r] \\in msgs',
                                  _both(_is("tmState", "init"), _in_msgs(("type", "Prepared"))))),
    "TMCommit": (False, Guard('tmState = "init" /\\ tmPrepared = RM',
                              _both(_is("tmState", "init"), _all_prepared))),
    "TMAbort": (False, Guard('tmState = "init"', _is("tmState", "init"))),
    "RMPrepare": (True, Guard('rmState[r] = "working"', _is("rmState", "working"))),
    "RMChooseToAbort": (True, Guard('rmState[r] = "working"', _is("rmState", "working"))),
    "RMRcvCommitMsg": (True, Guard('[type |-> "Commit"] \\in msgs', _in_msgs(("type", "Commit")))),
    "RMRcvAbortMsg": (True, Guard('[type |-> "Abort"] \\in msgs', _in_msgs(("type", "Abort")))),
}


#: the trace spec's event of a step that changes nothing (``TraceSpec.IsStuttering``)
STUTTERING = "Stuttering"


#: the actions the benchmark's trace spec matches records with (``TwoPhaseTrace.tla``'s
#: ``TPTraceNext``): the traced implementation's resource managers never choose to abort
TRACED = frozenset({"TMCommit", "TMAbort", "TMRcvPrepared", "RMPrepare", "RMRcvCommitMsg",
                    "RMRcvAbortMsg"})


def _show(value: Hashable) -> str:
    if isinstance(value, frozenset):
        return "{" + ", ".join(sorted(_show(v) for v in value)) + "}"
    if isinstance(value, tuple) and all(isinstance(p, tuple) and len(p) == 2 for p in value):
        return "[" + ", ".join(f"{k} |-> {_show(x)}" for k, x in value) + "]"
    return f'"{value}"' if isinstance(value, str) else str(value)


class TwoPhaseTrace(TraceMapping[int]):
    """A TwoPhase trace against `model`, whose RMs are named `rms` (the configuration's ``RM``)."""

    def __init__(self, model: TwoPhase, lines: Sequence[TraceLine], rms: Sequence[str]) -> None:
        if len(rms) != model.n:
            raise TraceFormatError(f"the configuration names {len(rms)} RMs; the model has "
                                   f"{model.n}")
        self.model = model
        self.lines = list(lines)
        self.rms = tuple(rms)
        self.index = {name: i for i, name in enumerate(self.rms)}
        for line in self.lines:
            if line.event is not None and line.event not in ACTIONS and line.event != STUTTERING:
                raise TraceFormatError(f"{line.where}: event {line.event!r} is no action of "
                                       f"TwoPhase ({', '.join(ACTIONS)})")
            for var, _ in line.updates:
                if var not in ("rmState", "tmState", "tmPrepared", "msgs"):
                    raise TraceFormatError(f"{line.where}: {var!r} is no variable of TwoPhase")
            args = line.event_args
            if args is not None and line.event is not None:
                want = 1 if ACTIONS[line.event][0] else 0
                if len(args) != want or any(a not in self.index for a in args):
                    takes = f"an RM of {', '.join(self.rms)}" if want else "no argument"
                    raise TraceFormatError(f"{line.where}: {line.event} takes {takes}; the "
                                           f"record gives {list(args)}")
        # the RMs records i and later name (the others are interchangeable there: `key`)
        named: list[frozenset[int]] = [frozenset()] * (len(self.lines) + 1)
        for i in range(len(self.lines) - 1, -1, -1):
            named[i] = named[i + 1] | {self.index[x] for x in self.lines[i].names()
                                       if x in self.index}
        self.named = named
        self._vars: tuple[int, Variables] | None = None

    def records(self) -> Sequence[TraceLine]:
        return self.lines

    def where(self, i: int) -> str:
        return self.lines[i].where

    def located(self, i: int) -> tuple[str, int] | None:
        return (self.lines[i].file, self.lines[i].line) if i < len(self.lines) else None

    def variables(self, s: int) -> Variables:
        """``TwoPhase.tla``'s variables in model state `s`."""
        if self._vars is not None and self._vars[0] == s:
            return self._vars[1]
        rm, tm, tp, msgs = self.model.decode(s)
        sent: set[Hashable] = {(("rm", name), ("type", "Prepared"))
                               for i, name in enumerate(self.rms) if msgs >> i & 1}
        if msgs >> self.model.n & 1:
            sent.add((("type", "Commit"),))
        if msgs >> (self.model.n + 1) & 1:
            sent.add((("type", "Abort"),))
        v: Variables = {
            "rmState": tuple(sorted((name, RM_NAMES[rm[i]]) for i, name in enumerate(self.rms))),
            "tmState": "init" if tm == INIT else "done",
            "tmPrepared": frozenset(name for i, name in enumerate(self.rms) if tp >> i & 1),
            "msgs": frozenset(sent),
        }
        self._vars = (s, v)
        return v

    def action_name(self, action: Action) -> str:
        if action == STUTTER_ACTION:
            return "stutter"
        return f"{action[0]}({self.rms[action[1]]})" if len(action) > 1 else action[0]

    def describe(self, state: int) -> dict[str, Any]:
        """``TwoPhase.tla``'s variables in `state`, written as TLA+ values."""
        return {var: _show(value) for var, value in self.variables(state).items()}

    def _args(self, action: Action) -> tuple[str, ...]:
        return (self.rms[action[1]],) if len(action) > 1 else ()

    def _fields(self, line: TraceLine, before: Variables, after: Variables) -> str | None:
        """Why `after` is not what `line`'s updates make of `before` (None: it is)."""
        for var, ups in line.updates:
            try:
                want = apply(before[var], ups)
            except (KeyError, TypeError) as exc:
                return f"{var}: the record's update does not apply ({exc!r})"
            if want != after[var]:
                return (f"the record makes {var} {_show(want)}; the step makes it "
                        f"{_show(after[var])}")
        return None

    def match(self, i: int, state: int, action: Action, nxt: int) -> list[int] | str:
        line = self.lines[i]
        if line.event is not None and action[0] != line.event:
            return f"the record is {line.event}"  # `Stuttering` too: no step of the model
        if action[0] not in TRACED:
            return f"{action[0]} is no action of the trace spec (TPTraceNext)"
        if line.event_args is not None and self._args(action) != line.event_args:
            return f"the record's arguments are {list(line.event_args)}"
        if not line.updates:
            return [i + 1]
        why = self._fields(line, self.variables(state), self._plain(nxt))
        return [i + 1] if why is None else why

    def _plain(self, s: int) -> Variables:
        keep = self._vars
        v = self.variables(s)
        self._vars = keep
        return v

    def stutter(self, i: int, state: int) -> int | str:
        """A step that changes nothing: the trace spec's ``IsStuttering`` (a record with no
        event, or event ``Stuttering``, whose updates leave every variable as it is), or
        ``TMRcvPrepared(r)`` for an `r` already in tmPrepared."""
        why = self._unchanged(i, state)
        return i + 1 if why is None else why

    def _unchanged(self, i: int, state: int) -> str | None:
        line = self.lines[i]
        if line.event not in (None, STUTTERING, "TMRcvPrepared"):
            return f"{line.event} always changes the state"
        unchanged = (None if not line.updates
                     else self._fields(line, self.variables(state), self.variables(state)))
        if line.event in (None, STUTTERING):
            return unchanged
        _, tm, tp, msgs = self.model.decode(state)
        rms = ([self.index[str(line.event_args[0])]] if line.event_args
               else range(self.model.n))
        if tm == INIT and any(tp >> r & msgs >> r & 1 for r in rms):  # guard, and r received
            return unchanged
        return "no TMRcvPrepared that changes nothing is enabled"

    def rank(self, i: int, state: int, action: Action, nxt: int) -> int:
        """A record that names its action happened as a step: the steps that change the state
        first, then the spec's stuttering ones. A record that names none is explained by its
        updates alone: the steps that change fewest variables it does not log first (a
        stutter none)."""
        line = self.lines[i]
        if line.event is not None:
            return int(action == STUTTER_ACTION)
        if action == STUTTER_ACTION:
            return 0
        logged = {var for var, _ in line.updates}
        before, after = self.variables(state), self._plain(nxt)
        return sum(1 for var in before if var not in logged and before[var] != after[var])

    def key(self, state: int, i: int) -> Hashable:
        """The state with the RMs records i and later never name sorted among themselves."""
        named = self.named[i]
        if len(named) == self.model.n:
            return state
        rm, tm, tp, msgs = self.model.decode(state)
        rows = [(rm[j], tp >> j & 1, msgs >> j & 1) for j in range(self.model.n)]
        return (tm, msgs >> self.model.n, tuple(rows[j] for j in sorted(named)),
                tuple(sorted(rows[j] for j in range(self.model.n) if j not in named)))

    def explain(self, i: int, state: int) -> list[str]:
        line = self.lines[i]
        v = self.variables(state)
        if line.event == STUTTERING:
            return [f"the record is a step that changes nothing, and {self._unchanged(i, state)}"]
        kinds = [line.event] if line.event is not None else sorted(TRACED, key=list(ACTIONS).index)
        steps = self.model.successors(state)
        out = []
        for kind in kinds:
            takes_rm, guard = ACTIONS[kind]
            rms: list[str | None] = ([str(line.event_args[0])] if line.event_args else
                                     list(self.rms)) if takes_rm else [None]
            for rm in rms:
                name = f"{kind}({rm})" if rm is not None else kind
                failed = guard.fails(v, rm, self.rms)
                if failed is not None:
                    out.append(f"{name} is not enabled: it requires {guard.text}, and {failed}")
                    continue
                if kind == "TMRcvPrepared" and rm in v["tmPrepared"]:  # type: ignore[operator]
                    why = self._fields(line, v, v)
                else:
                    action = (kind, self.index[rm]) if rm is not None else (kind,)
                    nxt = next((t for a, t in steps if a == action), None)
                    if nxt is None:
                        out.append(f"{name} is not a step of the model here")
                        continue
                    why = self._fields(line, v, self._plain(nxt))
                if why is not None:
                    out.append(f"{name} is enabled, but {why}")
        return out or ["every candidate step matches; a later record fails after each"]


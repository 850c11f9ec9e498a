"""A protocol model against the logs of a real cluster: Hazelcast's or Apache Ignite 3's, one
stream of records per member, read by the same parsers as `partsafe validate`.

What a log shows of a model's step is one declarative table per protocol (`LogTable`, beside the
protocol's model: `membership.LOG_TABLE`, ...): for each event type a step emits that the
product prints, the message that prints it, whether it is printed every time (`Shown.always`)
and how each field of the record is compared (`Bind`, `Order`, `Ignore`). Steps whose events no
log prints run hidden; event types the product prints and the model has no step for are set
aside, each with the table's reason, and counted in the report (nothing is dropped unsaid).

The search position is where each member's stream stands, with what the log's names and numbers
are bound to so far:

- Names. A log names members by address or UUID, partitions by number, raft groups by name; the
  model by its own symmetric ids. Each is bound on first use, one to one (`Bind`): the search
  tries every binding a record allows, so a log is matched up to a renaming of the model's ids.
- Numbers. A log that starts mid-run shows member list versions (terms, revisions) the model's
  small run numbers differently, and Hazelcast raises a list's version by the members a join
  adds, where the model raises it by one. Such a field is bound monotonically (`Order`): two
  records' versions must compare as the model's do, and one version is one model version.
- Order across members. A member's own records keep their order. Across members only the clock
  bound orders them: a record may be matched while no other member's next record is certainly
  earlier (its timestamp more than `max_skew_ms` plus the 1 ms of a timestamp before). A
  message the table says another thread prints later (`Shown.deferred`: the migration thread's
  repartitioning, 250 ms after the join that triggered it, with the joiner's own list between
  them) is not placed. Causal edges (a list installed after its master printed it) need no rule
  here: the model's own messages enforce them.
- Partial logs. A log is an excerpt: before a member's first record, after its last, and between
  two of its files, its steps are not printed, so a step there may leave out even an event the
  table says is always printed. Such steps, and steps with no printed event, are hidden: at most
  `max_hidden` in a row (the engine's bound).
"""

from __future__ import annotations

import dataclasses
from collections import Counter
from collections.abc import Callable, Hashable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from partsafe.checker.engine.conform import TraceMapping
from partsafe.checker.engine.model import Action, Model
from partsafe.checker.report import event_json
from partsafe.checker.validation.shards import stamped
from partsafe.traces.events import EVENT_TYPES, UNKNOWN_MEMBER, Event, Quiescent
from partsafe.traces.incarnations import predecessor
from partsafe.traces.inputs import expand
from partsafe.traces.scanner import Scanner

# --- the table ----------------------------------------------------------------------------------

#: a stream's record: its order key (timestamp first) and the event
Keyed = tuple[tuple[int, int, int, int], Event]


@dataclass(frozen=True)
class Bind:
    """A field naming things of one kind (`space`: members, partitions, migrations, raft groups):
    the log's name and the model's id are bound one to one. A tuple of names is bound element by
    element (`unordered`: as sets, where the product prints them in its own order)."""

    space: str
    unordered: bool = False


@dataclass(frozen=True)
class Order:
    """A number the log and the model count differently (a member list version, a term): bound
    one to one and in order, within `space`."""

    space: str


@dataclass(frozen=True)
class Ignore:
    """A field the model and the log do not share the meaning of, with `why`."""

    why: str


Role = Bind | Order | Ignore
MEMBER = Bind("member")


@dataclass(frozen=True)
class Shown:
    """How a product's log shows one event type of the model's steps: one row of a `LogTable`.
    `message` is the product's (logger and wording, for the docs and a diagnosis); `always`, that
    it is printed each time the step happens at the level the log is written at (INFO), else it
    may be missing (a lower level, or a branch that does not print it); `fields` the role of each
    field other than `member` (a field not named is compared as it is; a field the log leaves
    unset, None, is not compared)."""

    message: str
    always: bool = True
    fields: Mapping[str, Role] = field(default_factory=dict)
    #: printed later by another thread than the step's (Hazelcast's migration thread runs the
    #: repartitioning a join or a removal triggers): not placed in time against other members'
    #: records
    deferred: bool = False
    #: printed by whichever member ran the step, which the model does not say (Ignite 3's data
    #: nodes, written by the node whose metastore invoke won): the model's event names
    #: `ANYONE`, and any member's next record may show it (its member is bound to nothing)
    anyone: bool = False


#: the member of a model event that a `Shown.anyone` row's member prints
ANYONE = "(any member)"


@dataclass(frozen=True)
class Maybe:
    """An event a table's `LogTable.prints` adds that the product may not print (a list the
    model leaves implicit, which a log written from the model's events lacks)."""

    event: Event


@dataclass(frozen=True)
class LogTable:
    """One protocol's table: how its model's steps show in a product's logs.

    `shown`: event type -> how logs show it. `prints`: the events the product prints for a step,
    from the model's (model, state, action, next state, the step's events; `INIT` and the
    initial state twice for the initial state's events): where the product
    prints what the model leaves implicit (a member's start, the list a partition model's
    member changes), in the order the product prints them; by default the model's events.
    `starts`: the event a member prints as it starts, which an initial member may show before
    the events of the model's initial state (a log that begins with the cluster). `outside`: an
    event type the product logs and the model has no step for -> why. `scope`: the model's
    scope a log needs (its members, its joiners), from the log's records."""

    product: str
    shown: Mapping[str, Shown]
    prints: Callable[[Any, Any, Action, Any, tuple[Event, ...]], tuple[Event | Maybe, ...]] | \
        None = None
    starts: Callable[[str], Event] | None = None
    outside: Mapping[str, str] = field(default_factory=dict)
    scope: Callable[[Sequence[Event]], dict[str, int]] = lambda records: {}
    #: the members' streams (every record, in order) as the protocol ran them, where a log's
    #: names or print order differ (each incarnation of a restarted member apart, a request
    #: printed before the lock it waits for read after: traces/incarnations.py), with the
    #: records it leaves out by (event type, reason); None: as read
    streams: Callable[[dict[str, list[Keyed]]],
                      tuple[dict[str, list[Keyed]], Mapping[tuple[str, str], int]]] | None = None
    #: (model, state, model node or None, record, the model's name of a log's member or
    #: None): does the record show a step of the design that changes nothing in `state` at that
    #: node (a removal of a key the metastore does not hold)
    stutters: Callable[[Any, Any, Any, Event, Callable[[str], Any]], bool] | None = None
    #: the model's nodes that are a product's members, each with a log of its own (not a
    #: service the model runs as a node: Ignite's metastore); None: every node of the model
    members: Callable[[Any], Sequence[Hashable]] | None = None
    #: the unlogged steps in a row a log's search allows by default (`--max-hidden`): as many
    #: as the longest run of steps the product prints nothing of needs
    max_hidden: int = 8

    def __post_init__(self) -> None:
        """A row must name an event type of the vocabulary (`partsafe.traces.events`) and only
        fields that type has; ValueError names the row otherwise."""
        known = EVENT_TYPES
        for etype, shown in self.shown.items():
            if etype not in known:
                raise ValueError(f"the {self.product} log table names {etype!r}, which is no "
                                 f"event type; known: {', '.join(sorted(known))}")
            fields = {f.name for f in dataclasses.fields(known[etype])}
            unknown = sorted(set(shown.fields) - fields)
            if unknown:
                raise ValueError(f"the {self.product} log table's {etype} row names fields "
                                 f"{etype} has not: {', '.join(unknown)}")
        for etype in self.outside:
            if etype not in known:
                raise ValueError(f"the {self.product} log table sets aside {etype!r}, which "
                                 "is no event type")


# --- the records --------------------------------------------------------------------------------


class LogInputError(Exception):
    """A log that cannot be read, or holds nothing the model maps (the message says which)."""


@dataclass
class LogRecords:
    """The records of some log files: per member, in its order (a member's files merged by their
    timestamps), with what was set aside and why."""

    files: list[str]
    lines: int
    streams: dict[str, list[tuple[tuple[int, int, int, int], Event]]]
    set_aside: Counter[tuple[str, str]] = field(default_factory=Counter)

    def records(self) -> list[Event]:
        return [e for stream in self.streams.values() for _, e in stream]


def read_logs(paths: Sequence[str], table: LogTable) -> LogRecords:
    """The records of the logs at `paths` that `table` maps (files, directories, globs; read by
    `partsafe validate`'s scanner); LogInputError names a path that cannot be read."""
    scanner = Scanner("auto")
    candidates = expand(list(paths))
    files: list[str] = []
    streams: dict[str, list[tuple[tuple[int, int, int, int], Event]]] = {}
    everything: dict[str, list[tuple[tuple[int, int, int, int], Event]]] = {}
    aside: Counter[tuple[str, str]] = Counter()
    mapped = set(table.shown)
    for c in candidates:
        if c.skipped is not None:
            aside[("(file)", f"{c.path}: {c.skipped}")] += 1
            continue
        found = list(scanner.scan(Path(c.path), str(c.path), c.explicit))
        tally = scanner.accounting.files[-1]
        if tally.skipped is not None:
            aside[("(file)", f"{c.path}: {tally.skipped}")] += 1
            continue
        for key, e in stamped(len(files), found):
            if isinstance(e, Quiescent):
                continue
            if e.member == UNKNOWN_MEMBER:
                why = "the log does not say which member printed it" if e.type in mapped else \
                    table.outside.get(e.type, f"the {table.product} table maps no step of the "
                                              "model to it")
                aside[(e.type, why)] += 1
            else:
                everything.setdefault(e.member, []).append((key, e))
        files.append(str(c.path))
    for stream in everything.values():
        stream.sort(key=lambda pair: pair[0])
    if table.streams is not None:
        everything, left_out = table.streams(everything)
        aside.update(left_out)
    for member, stream in everything.items():
        for key, e in stream:
            if e.type in mapped:
                streams.setdefault(member, []).append((key, e))
            else:
                aside[(e.type, table.outside.get(e.type, f"the {table.product} table maps no "
                                                         "step of the model to it"))] += 1
    malformed = scanner.accounting.malformed
    for m in malformed:
        aside[("(malformed)", f"{m.file}:{m.line}: {m.reason}")] += 1
    return LogRecords(files, scanner.accounting.lines, streams, aside)


# --- the mapping --------------------------------------------------------------------------------

#: a binding: (kind, space, model value, log value) with kind ``b`` (one to one) or ``o`` (in
#: order), kept sorted so that one set of bindings is one position
Binding = tuple[tuple[str, str, Any, Any], ...]
#: where the search stands: each stream's next record, and the bindings so far
LogPosition = tuple[tuple[int, ...], Binding]
#: an event a step prints, and whether a log that covers the step must show it
Printed = tuple[Event, bool]
#: the action `LogTable.prints` is given for the model's initial state (its events are the
#: initial state's)
INIT: Action = ("init",)


class _Bound:
    """The bindings of one position, as dictionaries, extended while one step is matched."""

    __slots__ = ("ordered", "to_log", "to_model")

    def __init__(self, binding: Binding) -> None:
        self.to_log: dict[tuple[str, Any], Any] = {}
        self.to_model: dict[tuple[str, Any], Any] = {}
        self.ordered: dict[str, list[tuple[Any, Any]]] = {}
        for kind, space, mv, lv in binding:
            self.to_log[(space, mv)] = lv
            self.to_model[(space, lv)] = mv
            if kind == "o":
                self.ordered.setdefault(space, []).append((mv, lv))

    def copy(self) -> _Bound:
        out = _Bound(())
        out.to_log, out.to_model = dict(self.to_log), dict(self.to_model)
        out.ordered = {k: list(v) for k, v in self.ordered.items()}
        return out

    def frozen(self) -> Binding:
        ordered = {(s, mv) for s, pairs in self.ordered.items() for mv, _ in pairs}
        return tuple(sorted((("o" if (space, mv) in ordered else "b"), space, mv, lv)
                            for (space, mv), lv in self.to_log.items()))

    def bind(self, space: str, mv: Any, lv: Any) -> str | None:
        """Bind model value `mv` to log value `lv` one to one, or say why not."""
        had = self.to_log.get((space, mv), _NONE)
        if had is not _NONE:
            return None if had == lv else f"the model's {mv} is the log's {had}, not {lv}"
        other = self.to_model.get((space, lv), _NONE)
        if other is not _NONE:
            return f"the log's {lv} is the model's {other}, not {mv}"
        self.to_log[(space, mv)] = lv
        self.to_model[(space, lv)] = mv
        return None

    def order(self, space: str, mv: Any, lv: Any) -> str | None:
        """Bind `mv` to `lv` one to one and in order with the earlier pairs, or say why not."""
        if (space, mv) in self.to_log:
            return self.bind(space, mv, lv)
        for m2, l2 in self.ordered.get(space, ()):
            if (mv > m2) != (lv > l2):
                must = "exceed" if mv > m2 else "be below"
                return (f"the model requires the {space} to {must} {l2} (its {mv} comes "
                        f"{'after' if mv > m2 else 'before'} its {m2}, the log's {l2}); the "
                        f"log shows {lv}")
        why = self.bind(space, mv, lv)
        if why is None:
            self.ordered.setdefault(space, []).append((mv, lv))
        return why


_NONE = object()
#: how many unlogged steps ahead a diagnosis looks for a step that prints, when none does where
#: the match stopped; the states it looks at, at most; the failed steps it lists, at most
LOOKAHEAD = 4
LOOKAHEAD_STATES = 5_000
EXPLAINED = 12


class LogTrace(TraceMapping[Any]):
    """The records of a real cluster's logs (`read_logs`) against `model`, shown as `table`
    says, the members' streams interleaved within `max_skew_ms` (see the module's docstring)."""

    def __init__(self, model: Model[Any], table: LogTable, logs: LogRecords,
                 max_skew_ms: int) -> None:
        self.model = model
        self.table = table
        self.logs = logs
        self.names = list(logs.streams)
        self.streams = [logs.streams[n] for n in self.names]
        self.stream_of = {n: k for k, n in enumerate(self.names)}
        self.skew = max_skew_ms
        self._roles = {t: self._field_roles(t, s) for t, s in table.shown.items()}
        self._cache: tuple[Any, Action, tuple[Printed, ...]] | None = None
        self._records = logs.records()
        self._bound_of: tuple[Binding, _Bound] | None = None
        #: one member's incarnations (traces/incarnations.py) are one process, one after the
        #: other: stream -> the stream of the incarnation before it, and of the one after
        self._before: dict[int, int] = {}
        self._ended: set[int] = set()
        for k, n in enumerate(self.names):
            p = predecessor(n)
            if p is not None and p in self.stream_of:
                self._before[k] = self.stream_of[p]
                self._ended.add(self.stream_of[p])
        #: the streams that begin with their process's start (`LogTable.starts`): nothing of
        #: that member happened before its first record, which a log begun mid-run cannot say
        started = table.starts("").type if table.starts is not None else None
        self._begun = {k for k, stream in enumerate(self.streams)
                       if stream and stream[0][1].type == started}
        #: the model's nodes, which the streams' members are bound to one each
        self._nodes: tuple[Hashable, ...] = tuple(
            table.members(model) if table.members is not None else getattr(model, "names", ()))

    @staticmethod
    def _field_roles(etype: str, shown: Shown) -> list[tuple[str, Role | None]]:
        names = [f.name for f in dataclasses.fields(EVENT_TYPES[etype])
                 if f.name not in ("order", "source") and not (f.name == "member"
                                                                and shown.anyone)]
        return [(n, MEMBER if n == "member" else shown.fields.get(n)) for n in names]

    # -- the trace

    def records(self) -> list[Event]:
        return self._records

    def _place(self, e: Event) -> str:
        return f"{e.source.file}:{e.source.line}" if e.source is not None else e.type

    def _next(self, pos: LogPosition) -> Event | None:
        """The earliest record no step has matched yet at `pos` (None at the end)."""
        heads = [(self.streams[k][i][0], k) for k, i in enumerate(pos[0])
                 if i < len(self.streams[k])]
        if not heads:
            return None
        _, k = min(heads)
        return self.streams[k][pos[0][k]][1]

    def _latest(self, pos: LogPosition) -> Event | None:
        """The latest record matched at `pos` (None before any)."""
        done = [(self.streams[k][i - 1][0], k, i - 1) for k, i in enumerate(pos[0]) if i]
        if not done:
            return None
        _, k, i = max(done)
        return self.streams[k][i][1]

    def where(self, pos: LogPosition) -> str:
        e = self._next(pos)
        return "the end of the logs" if e is None else self._place(e)

    def located(self, pos: LogPosition) -> tuple[str, int] | None:
        return _line_of(self._next(pos))

    def last_located(self, pos: LogPosition) -> tuple[str, int] | None:
        return _line_of(self._latest(pos))

    def finished(self, pos: LogPosition) -> bool:
        return all(i == len(s) for i, s in zip(pos[0], self.streams, strict=True))

    def progress(self, pos: LogPosition) -> int:
        return sum(pos[0])

    def last(self, pos: LogPosition) -> str | None:
        e = self._latest(pos)
        return None if e is None else self._place(e)

    def consumed(self, before: LogPosition, after: LogPosition) -> str:
        k = next(k for k, (a, b) in enumerate(zip(before[0], after[0], strict=True)) if a != b)
        return self._place(self.streams[k][before[0][k]][1])

    # -- steps

    def _events(self, state: Any, action: Action, nxt: Any) -> tuple[Printed, ...]:
        """The events of a step that the table says a log may print, each with whether a log
        must print it (the table's `Shown.always`, unless `Maybe`)."""
        c = self._cache
        if c is not None and c[0] is state and c[1] == action:
            return c[2]
        events: tuple[Event | Maybe, ...] = self.model.step_events(state, action, nxt)
        if self.table.prints is not None:
            events = self.table.prints(self.model, state, action, nxt, events)  # type: ignore
        found = tuple(self._printed(e) for e in events
                      if (e.event if isinstance(e, Maybe) else e).type in self.table.shown)
        self._cache = (state, action, found)
        return found

    def _printed(self, e: Event | Maybe) -> Printed:
        if isinstance(e, Maybe):
            return e.event, False
        return e, self.table.shown[e.type].always

    def start(self, state: Any) -> list[LogPosition] | str:
        init: tuple[Printed, ...] = ()
        starts, begun = self.table.starts, set()
        events: tuple[Event | Maybe, ...] = self.model.init_events(state)
        if self.table.prints is not None:
            events = self.table.prints(self.model, state, INIT, state, events)  # type: ignore
        shown: tuple[Printed, ...] = ()
        for e in (x.event if isinstance(x, Maybe) else x for x in events):
            if starts is not None and e.member not in begun and e.member != ANYONE:
                begun.add(e.member)
                init += ((starts(e.member), False),)
            if e.type in self.table.shown:
                shown += ((e, False),)
        if starts is not None and self.table.members is not None:
            # the table names the model's members: each runs from the start (Ignite's spares)
            init += tuple((starts(n), False) for n in self._nodes if n not in begun)
        init += shown  # the initial members' processes start before the state they form
        begin: LogPosition = (tuple(0 for _ in self.streams), ())
        # those that match the most of the initial state first: a log that starts with the
        # cluster is searched from its start, not from a binding that leaves it unmatched
        return sorted(self._matches(begin, init, 0, _Bound(()), list(begin[0]), False, True),
                      key=lambda pos: -sum(pos[0]))

    def match(self, pos: LogPosition, state: Any, action: Action, nxt: Any
              ) -> list[LogPosition] | str:
        shown = self._events(state, action, nxt)
        if not shown:
            return "the step prints nothing a log shows"
        found = list(self._matches(pos, shown, 0, self._bound(pos), list(pos[0]), False, False))
        return found or "its events match no next records (`explain` says why)"

    def _bound(self, pos: LogPosition) -> _Bound:
        """The bindings of `pos` (the search asks for one position's many times in a row; a
        match copies them before it binds more)."""
        if self._bound_of is None or self._bound_of[0] is not pos[1]:
            self._bound_of = (pos[1], _Bound(pos[1]))
        return self._bound_of[1]

    def hidden(self, pos: LogPosition, state: Any, action: Action, nxt: Any) -> bool:
        bound = self._bound(pos)
        if action[0] == "crash" and not self._may_end(pos[0], action[1], bound):
            return False
        return all(self._unprinted(pos[0], e, bound) for e in self._events(state, action, nxt))

    def stutter(self, pos: LogPosition, state: Any) -> LogPosition | str:
        """A next record the table says shows a step that changes nothing here
        (`LogTable.stutters`), of a member bound to a model node."""
        check = self.table.stutters
        if check is None:
            return "no step of the design leaves the state as it is"
        bound = self._bound(pos)

        def to_model(name: str) -> Any:
            return bound.to_model.get(("member", name))

        for k, i in enumerate(pos[0]):
            if i == len(self.streams[k]) or not self._in_time(pos[0], k):
                continue
            record = self.streams[k][i][1]
            at = tuple(n + 1 if j == k else n for j, n in enumerate(pos[0]))
            node = to_model(record.member)
            if node is not None or self.table.shown[record.type].anyone:
                if check(self.model, state, node, record, to_model):
                    return (at, pos[1])
                continue
            # a member no record is bound to yet: bound here to the first free node whose
            # state the record shows unchanged (a spare's start)
            for free in self._nodes:
                if ("member", free) not in bound.to_log \
                        and check(self.model, state, free, record, to_model):
                    b = bound.copy()
                    b.bind("member", free, record.member)
                    return (at, b.frozen())
        return "no next record shows a step that leaves the state as it is"

    def _unbound_may_hide(self, bound: _Bound) -> bool:
        """May a member no record is bound to yet print nothing: where it may be a member with
        no log of its own (more such members than logs left to bind), or one whose log begins
        later (a log left to bind that does not begin at its process's start)."""
        if not self._nodes:
            return True
        free_nodes = sum(1 for n in self._nodes if ("member", n) not in bound.to_log)
        free_logs = [k for k, n in enumerate(self.names) if ("member", n) not in bound.to_model]
        return free_nodes > len(free_logs) or any(k not in self._begun for k in free_logs)

    def _may_end(self, at: Sequence[int], node: Hashable, bound: _Bound) -> bool:
        """May `node` crash here: a crashed node prints nothing again, so not while its log
        has records left."""
        name = bound.to_log.get(("member", node), _NONE)
        if name is _NONE or name not in self.stream_of:
            return True
        k = self.stream_of[name]
        return at[k] == len(self.streams[k])

    def _unprinted(self, at: Sequence[int], printed: Printed, bound: _Bound) -> bool:
        """May an event go unprinted at `at`: not one a log must print, or its member's log is
        not there (no file of it, before its first record, after its last, between two of its
        files)?"""
        e, must = printed
        if not must:
            return True
        if e.member == ANYONE:  # whoever printed it: a member whose log is not there
            return self._unbound_may_hide(bound) or any(
                self._absent(at, k) for k in range(len(self.streams)))
        name = bound.to_log.get(("member", e.member), _NONE)
        if name is _NONE:
            return self._unbound_may_hide(bound)
        if name not in self.stream_of:
            return True
        return self._absent(at, self.stream_of[name])

    def _absent(self, at: Sequence[int], k: int) -> bool:
        """Is stream `k`'s log not there at `at` (before its first record, after its last,
        between two of its files)?"""
        i, stream = at[k], self.streams[k]
        if i == len(stream) and k in self._ended:
            return False  # the member ended there: a later incarnation of it printed on
        if i == 0:
            return k not in self._begun  # before its log begins, unless it begins at the start
        return i == len(stream) or stream[i - 1][1].source is None \
            or stream[i][1].source is None \
            or stream[i - 1][1].source.file != stream[i][1].source.file  # type: ignore[union-attr]

    def _matches(self, pos: LogPosition, shown: Sequence[Printed], j: int, bound: _Bound,
                 at: list[int], took: bool, init: bool) -> Iterator[LogPosition]:
        """Every position the events `shown[j:]` can leave the trace at from `at` (each event
        matched to a stream's next record, or left unprinted where it may be)."""
        if j == len(shown):
            if took or init:
                yield (tuple(at), bound.frozen())
            return
        e = shown[j][0]
        placed = not self.table.shown[e.type].deferred
        name = bound.to_log.get(("member", e.member), _NONE)
        if e.member == ANYONE:
            candidates = list(range(len(self.names)))
        elif name is not _NONE:
            candidates = [self.stream_of[name]] if name in self.stream_of else []
        else:
            candidates = [k for k, n in enumerate(self.names)
                          if ("member", n) not in bound.to_model]
        for k in candidates:
            i = at[k]
            # the initial state's events: printed while the cluster started, in no order the
            # model says (a start's other lines may come between them)
            if i == len(self.streams[k]) or (placed and not init and not self._in_time(at, k)):
                continue
            before = self._before.get(k)
            if before is not None and at[before] < len(self.streams[before]):
                continue  # the incarnation before it has records left
            record = self.streams[k][i][1]
            if record.type != e.type:
                continue
            b = bound.copy()
            if self._compare(e, record, b) is None:
                at[k] += 1
                yield from self._matches(pos, shown, j + 1, b, at, True, init)
                at[k] -= 1
        if init or self._unprinted(at, shown[j], bound):
            yield from self._matches(pos, shown, j + 1, bound, at, took, init)

    def _in_time(self, at: Sequence[int], k: int) -> bool:
        """May stream `k`'s next record come now: is no other stream's next record certainly
        earlier (by more than the clock bound and a timestamp's millisecond)?"""
        t = self.streams[k][at[k]][0][0]
        if not t:
            return True
        for k2, i in enumerate(at):
            if k2 != k and i < len(self.streams[k2]):
                t2 = self.streams[k2][i][0][0]
                if t2 and t2 + self.skew + 1 < t:
                    return False
        return True

    def _compare(self, e: Event, record: Event, b: _Bound) -> str | None:
        """Does `record` show model event `e`, binding names and numbers in `b`? None if so,
        else the first field that differs."""
        for name, role in self._roles[e.type]:
            lv = getattr(record, name)
            if lv is None or isinstance(role, Ignore):
                continue
            mv = getattr(e, name)
            why = _compare_field(name, role, mv, lv, b)
            if why is not None:
                return why
        return None

    # -- the diagnosis

    def _why(self, pos: LogPosition, shown: Sequence[Printed]) -> str:
        """Why the events a step prints match no records at `pos`: the first event, in the
        step's order, that a printed log must show and its member's next record does not (the
        ones before it matched as far as they could)."""
        bound, at = _Bound(pos[1]), list(pos[0])
        first = ""
        for printed in shown:
            e = printed[0]
            name = bound.to_log.get(("member", e.member), _NONE)
            k = self.stream_of.get(name) if name is not _NONE else None  # type: ignore[arg-type]
            record = self.streams[k][at[k]][1] if k is not None and at[k] < len(
                self.streams[k]) else None
            why: str | None
            if k is None:
                why = "which no next record shows"
            elif record is None:
                why = f"after {name}'s last record"
            elif record.type != e.type:
                why = f"where {name}'s log shows {_show(record)} ({self._place(record)})"
            elif not self.table.shown[e.type].deferred and not self._in_time(at, k):
                why = (f"but {name}'s next record ({self._place(record)}) is later than another "
                       f"member's next by more than the clock bound ({self.skew} ms)")
            else:
                b = bound.copy()
                why = self._compare(e, record, b)
                if why is None:
                    bound, at[k] = b, at[k] + 1
                    continue
                why = f"where {name}'s log shows {_show(record)} ({self._place(record)}): {why}"
            text = f"it prints {_show(e)} {why}"
            if not self._unprinted(at, printed, bound):
                return text
            first = first or text
        return first or "its events match the records only in part"

    def explain(self, pos: LogPosition, state: Any) -> list[str]:
        """The next record of each stream, then why each step that prints something fails. When
        no enabled step prints anything, the steps that do print after a few unlogged ones
        (`LOOKAHEAD`, breadth-first), each with the unlogged steps before it."""
        heads = [f"{self.names[k]}: {self._place(s[i][1])} {_show(s[i][1])}"
                 for k, (i, s) in enumerate(zip(pos[0], self.streams, strict=True))
                 if i < len(s)]
        out = ["the next records: " + "; ".join(heads)]
        frontier: list[tuple[Any, tuple[str, ...]]] = [(state, ())]
        seen = {state}
        for _ in range(LOOKAHEAD + 1):
            later: list[tuple[Any, tuple[str, ...]]] = []
            for s, before in frontier:
                for action, nxt in self.model.successors(s):
                    name = self.model.describe_action(action)[0]
                    shown = self._events(s, action, nxt)
                    if shown and isinstance(self.match(pos, s, action, nxt), str):
                        after = f" (after {', '.join(before)}, unlogged)" if before else ""
                        out.append(f"{name}{after}: {self._why(pos, shown)}")
                    elif not shown and nxt not in seen and len(seen) < LOOKAHEAD_STATES:
                        seen.add(nxt)
                        later.append((nxt, (*before, name)))
            if len(out) > 1 or not later:
                break
            frontier = later
        if len(out) == 1:
            out.append("no step prints an event a log shows, here or within "
                       f"{LOOKAHEAD} unlogged steps")
        return out[:1 + EXPLAINED]

    def describe(self, state: Any) -> dict[str, Any]:
        return self.model.describe_state(state)

    def summary(self, pos: LogPosition) -> dict[str, Any]:
        """The log's names and numbers as the model's, by space (``member``: each address or
        name the log gives a member, and the model's id for it)."""
        out: dict[str, dict[str, str]] = {}
        for _, space, mv, lv in pos[1]:
            out.setdefault(space, {})[str(lv)] = str(mv)
        return {"bound": out}


def _compare_field(name: str, role: Role | None, mv: Any, lv: Any, b: _Bound) -> str | None:
    if role is None:
        return None if mv == lv else f"{name}: the model's is {mv!r}, the log's {lv!r}"
    if isinstance(role, Order):
        if mv is None:
            return f"{name}: the model numbers none here, the log shows {lv}"
        return b.order(role.space, mv, lv)
    assert isinstance(role, Bind)
    if isinstance(lv, tuple):
        if not isinstance(mv, tuple) or len(mv) != len(lv):
            return f"{name}: the model's is {_names(mv)}, the log's {_names(lv)}"
        if role.unordered:
            return _bind_sets(role.space, name, mv, lv, b)
        for m1, l1 in zip(mv, lv, strict=True):
            why = b.bind(role.space, m1, l1)
            if why is not None:
                return f"{name}: {why}"
        return None
    if mv is None:
        return f"{name}: the model has none, the log shows {lv}"
    why = b.bind(role.space, mv, lv)
    return None if why is None else f"{name}: {why}"


def _bind_sets(space: str, name: str, mv: tuple[Any, ...], lv: tuple[Any, ...],
               b: _Bound) -> str | None:
    """Bind two collections as sets: the bound ones must correspond; the rest are bound in the
    order given (a set's unbound members are interchangeable as far as this record shows)."""
    left = [m for m in mv if (space, m) not in b.to_log]
    rest = list(lv)
    for m in mv:
        if (space, m) in b.to_log:
            if b.to_log[(space, m)] not in rest:
                return f"{name}: the model's {m} is the log's {b.to_log[(space, m)]}, " \
                       f"which the log's {_names(lv)} leaves out"
            rest.remove(b.to_log[(space, m)])
    for m, l1 in zip(left, rest, strict=True):
        why = b.bind(space, m, l1)
        if why is not None:
            return f"{name}: {why}"
    return None


def _names(v: Any) -> str:
    return "[" + ", ".join(map(str, v)) + "]" if isinstance(v, tuple) else str(v)


def _show(e: Event) -> str:
    d = event_json(e)
    d.pop("source", None)
    kind = d.pop("type")
    member = d.pop("member")
    shown = (f"{k}={_names(tuple(v) if isinstance(v, list) else v)}"
             for k, v in d.items() if v not in (None, (), []))
    return f"{kind} at {member} " + ", ".join(shown)


def _line_of(e: Event | None) -> tuple[str, int] | None:
    return None if e is None or e.source is None else (e.source.file, e.source.line)

"""The engine-agnostic core of validation: event order, monitor parts and their keys, shards.

Both engines (`local` in one process, `spark` on Spark, both in this package)
run exactly these functions; they differ only in how events reach them.

Order (docs/validation.md). Each member's own events
keep the order of its log; the members' streams are merged by timestamp. Every event gets an
`OrderKey` from its file alone (`stamped`): the running maximum of its stream's timestamps, the
file's index, where the stream starts in the file, its position in the file. Sorting by that key
is the merge, and any subset of events sorted by it is in merge order, which is what lets one
engine sort the events of one key only.

Keys. A monitor's state is a map from keys to independent parts (`Monitor.key`); a spec whose
state has two differently keyed maps is a `Conjunction` of parts. A `Shard` is one part's state
for one key, fed that key's events in order; what all shards find is what one run of the monitor
over all events finds. A violation names the spec, the event that raised it and the member's
previous event in the same shard (the previous list from that master, the previous version that
member applied), so it reads the same whichever engine found it.
"""

from __future__ import annotations

import dataclasses
import inspect
from collections import Counter
from collections.abc import Collection, Hashable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

from partsafe.specs import forms, registry
from partsafe.specs.monitor import Monitor, PerMember
from partsafe.traces.events import (
    UNKNOWN_MEMBER,
    Event,
    MemberListInstalled,
    MemberStarted,
    MigrationFailed,
    MigrationRolledBack,
    MigrationsCompleted,
    MigrationStarted,
    PartitionLost,
    Quiescent,
    Repartitioning,
    Source,
)

#: the specs a Hazelcast log can show a violation of (`partsafe.specs.forms`)
LOG_SPECS: tuple[str, ...] = forms.specs_judged("hazelcast-log")
#: a rebalance still running this long after it started is worth a warning (milliseconds)
DEFAULT_STUCK_MS = 10 * 60 * 1000

#: (timestamp, file index, the stream's first position in its file, position in the file)
OrderKey = tuple[int, int, int, int]


# --- order ----------------------------------------------------------------------------------------


def stamped(file_index: int, events: Iterable[Event], one_stream: bool = False
            ) -> Iterator[tuple[OrderKey, Event]]:
    """The events of one file (in file order) with their order keys. A stream is a member's
    events in this file (a log's members each write their own), or the whole file when
    `one_stream` (an event file: its order is the order the run took); an event without a
    timestamp, or with one earlier than its stream's latest, takes that latest (a stream's order
    is certain, its clock is not)."""
    first: dict[str, int] = {}
    latest: dict[str, int] = {}
    for position, ev in enumerate(events):
        member = "" if one_stream else ev.member
        start = first.setdefault(member, position)
        when = latest.get(member, 0)
        if ev.order is not None and ev.order > when:
            when = ev.order
        latest[member] = when
        yield (when, file_index, start, position), ev


# --- monitor parts and shards ---------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Part:
    """One separately keyed monitor of a spec; `index` numbers the parts of a validation."""

    index: int
    spec: str
    monitor: Monitor


def parts(specs: Sequence[str] = LOG_SPECS, config: dict[str, Any] | None = None
          ) -> list[Part]:
    """The parts of the monitors of `specs`, numbered; each monitor built for the cluster's
    settings `config` (`configured`)."""
    out: list[Part] = []
    for spec_id in specs:
        build = registry.get(spec_id).monitor
        assert build is not None, spec_id
        for monitor in configured(build, config or {}).parts():
            out.append(Part(len(out), spec_id, monitor))
    return out


def configured(build: Any, config: dict[str, Any]) -> Monitor:
    """A monitor from its builder, given the settings of `config` its constructor takes by name
    (`backups`, `max_parallel`, `serial`, `replicas`: `partsafe.traces.events.CONFIG`); the
    others keep their defaults."""
    if not config or not isinstance(build, type):
        return build()  # type: ignore[no-any-return]
    takes = inspect.signature(build.__init__).parameters
    return build(**{k: v for k, v in config.items() if k in takes})


def evidence_counts(specs: Iterable[str], type_counts: dict[str, int]) -> dict[str, int]:
    """How many of the events read (`type_counts`: events per type) each spec of `specs` could
    raise a violation at (its monitors' `Monitor.verdict_types`): a spec whose count is 0 had
    no evidence in this input, whatever form its files are."""
    out: dict[str, int] = {}
    for spec_id in specs:
        build = registry.get(spec_id).monitor
        if build is None:
            continue
        types = frozenset().union(*(m.verdict_types() for m in build().parts()))
        out[spec_id] = sum(type_counts.get(t, 0) for t in types)
    return out


def judged_specs(present: Iterable[str]) -> tuple[str, ...]:
    """The specs some recorded form of `present` judges (`partsafe.specs.forms`), in catalogue
    order: what a validation of files of those forms runs."""
    kinds = set(present)
    return tuple(s.id for s in registry.all_specs()
                 if any(forms.judges(form, s.id) for form in kinds))


def quiescence_part(part: Part) -> bool:
    """Whether `part` judges something at quiescence (`Monitor.at_quiescence`)."""
    return type(part.monitor).at_quiescence is not Monitor.at_quiescence


def allowed(kind: str, declared: Sequence[str] | None = None) -> frozenset[str]:
    """The specs that judge a file of recorded form `kind` whose header declares its events
    complete for `declared` (None: an instrumented cluster's file, or a log)."""
    judged = frozenset(forms.specs_judged(kind))
    return judged if declared is None else judged & frozenset(declared)


def dispatch(ps: Sequence[Part], judged: frozenset[str]) -> dict[str, list[Part]]:
    """Per event type, the parts an event of that type reaches in a file judged by the specs
    `judged` (`allowed`): the parts of those specs that observe the type. A `Quiescent` record
    reaches the quiescence parts (event files only say so)."""
    table: dict[str, list[Part]] = {}
    for p in ps:
        if p.spec not in judged:
            continue
        for kind in p.monitor.observes:
            table.setdefault(kind, []).append(p)
        if quiescence_part(p):
            table.setdefault(Quiescent.TYPE, []).append(p)
    return table


def dispatchers(ps: Sequence[Part], kinds: Sequence[str],
                declared: Sequence[Sequence[str] | None] | None = None
                ) -> list[dict[str, list[Part]]]:
    """`dispatch` for each file, by index (files of one form and declaration share one)."""
    made: dict[frozenset[str], dict[str, list[Part]]] = {}
    out = []
    for i, kind in enumerate(kinds):
        judged = allowed(kind, declared[i] if declared else None)
        if judged not in made:
            made[judged] = dispatch(ps, judged)
        out.append(made[judged])
    return out


def routes(part: Part, ev: Event) -> tuple[str, bool] | None:
    """Where `ev` goes for `part`: the shard key (its components, each followed by US) and
    whether the event is routed (a crashed or restarted member, `Monitor.key`'s ``()``); None when
    the event changes nothing for the part, as one whose member is unknown. A `Quiescent`
    record goes to the one shard of a quiescence part (whose state is one piece)."""
    if isinstance(ev, Quiescent):
        assert part.monitor.key_size == 0, f"{part.spec}: a keyed quiescence check"
        return ("", False) if quiescence_part(part) else None
    if ev.member == UNKNOWN_MEMBER:  # unknown: changes nothing (`Monitor.step`)
        return None
    key = part.monitor.key(ev)
    if key is None:
        return None
    routed = len(key) < part.monitor.key_size
    assert not key or not routed, f"{part.spec}: partial key {key!r}"
    return "".join(f"{k}\x1f" for k in key), routed


def names(key: str) -> list[str]:
    """The components of a shard key."""
    return key.split("\x1f")[:-1]


@dataclass(frozen=True, slots=True)
class Violation:
    spec: str
    member: str
    sources: tuple[Source, ...]
    message: str
    #: the order key of the event that raised it, and the part: how reports sort violations
    at: OrderKey = (0, 0, 0, 0)
    part: int = 0
    #: the key of the shard that raised it
    key: str = ""
    #: what the log proves (`skew`): ``definite`` (every order the log allows breaks the spec,
    #: or the violation rests on one member's order) or ``possible`` (some order does)
    certainty: str = "definite"
    #: for a violation across members: the events of the window in the order that breaks the
    #: spec, each a dict with its file, line, member, type and real time (`skew.Placed`)
    order: tuple[dict[str, Any], ...] = ()
    #: why a verdict was left at ``possible`` without deciding it, if so
    note: str = ""

    def as_dict(self) -> dict[str, Any]:
        out = {"spec": self.spec, "member": self.member,
               "events": [{"file": s.file, "line": s.line} for s in self.sources],
               "message": self.message, "certainty": self.certainty}
        if self.order:
            out["order"] = list(self.order)
        if self.note:
            out["note"] = self.note
        return out


@dataclass
class Shard:
    """One part's state for one key, fed that key's events in order."""

    part: Part
    key: str = ""
    state: Hashable = None
    #: where each member's previous event this shard saw is (not counting routed ones): what a
    #: violation names besides the event that raised it
    previous: dict[str, Source | None] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.state = self.part.monitor.initial()

    def step(self, at: OrderKey, ev: Event, routed: bool = False) -> Violation | None:
        if isinstance(ev, Quiescent):  # the run is quiescent here: judge, change nothing
            message = self.part.monitor.at_quiescence(self.state)
            if message is None:
                return None
            return Violation(self.part.spec, ev.member, _src(ev),
                             f"at quiescence: {message}", at, self.part.index, self.key)
        self.state, message = self.part.monitor.step(self.state, ev)
        if routed:
            assert message is None, f"{self.part.spec}: a routed event raised {message!r}"
            return None
        before = self.previous.get(ev.member)
        self.previous[ev.member] = ev.source
        if message is None:
            return None
        # one line may give two events (an Ignite line naming two leaders): each line once
        sources = tuple(dict.fromkeys(s for s in (before, ev.source) if s is not None))
        return Violation(self.part.spec, ev.member, sources, message, at, self.part.index,
                         self.key)


def run_shard(part: Part, events: Sequence[tuple[OrderKey, Event, bool]], key: str = "",
              max_skew_ms: int | None = None) -> list[Violation]:
    """Run one shard over its events (order key, event, routed), sorted by order key; with
    `max_skew_ms`, each violation carries what the log proves of it (`skewed`)."""
    shard = Shard(part, key)
    found = []
    for at, ev, routed in events:
        v = shard.step(at, ev, routed)
        if v is not None:
            found.append(v)
    if max_skew_ms is None or not found:
        return found
    return skewed(part, events, found, max_skew_ms)


def skewed(part: Part, steps: Sequence[tuple[OrderKey, Event, bool]],
           found: Sequence[Violation], max_skew_ms: int) -> list[Violation]:
    """`found`, violations of one shard whose events are `steps`, each with its verdict under
    clock skew (`partsafe.checker.validation.skew`: definite, or possible with the order that
    breaks the spec); one that no order the log allows shows is dropped."""
    from partsafe.checker.validation import skew

    out = []
    for v in found:
        verdict = skew.decide(part, steps, v.at, max_skew_ms)
        if verdict is None:
            continue
        out.append(dataclasses.replace(
            v, certainty=verdict.certainty, note=verdict.note,
            order=tuple(p.as_dict() for p in verdict.order) if verdict.members > 1 else ()))
    return out


def judge(events: Iterable[tuple[OrderKey, Event]], kinds: Sequence[str],
          declared: Sequence[Sequence[str] | None] | None = None,
          config: dict[str, Any] | None = None, max_skew_ms: int | None = None,
          present: Collection[str] | None = None) -> list[Violation]:
    """Run every part of the monitors of the specs judged on files of recorded forms `kinds`
    (the form of file i is ``kinds[i]``, what its header declares ``declared[i]``; an event's
    order key names its file), per key, over `events` in order key order: every violation, in
    report order, each monitor built for the cluster's settings `config`. An event reaches the
    parts of the specs its file judges (`dispatchers`). With `max_skew_ms`, each violation
    carries what the log proves of it under that bound on the members' clocks (`skewed`; it
    iterates `events` once more, when there is a violation). A routed event reaches the shards
    that name its member and those its member has had events in (`Monitor.key`; one its member
    has no later events in is not changed in any way that matters, which is why the Spark engine
    may leave it out), but for those it would leave as they are: a shard it made forget its
    member's events, until that member has an event there again, and a shard in its initial
    state (`Monitor.key` says why neither changes). `present`, when given, holds every event
    type of `events`: a part none of whose verdict types is among them
    (`Monitor.judged_on`) would raise nothing, and is not run."""
    ps = parts(judged_specs(kinds), config)
    tables = dispatchers(ps, kinds, declared)
    judges = [_PartJudge(p) for p in ps]
    run = {p.index for p in ps if present is None
           or not p.monitor.verdict_types().isdisjoint(present)
           or (quiescence_part(p) and Quiescent.TYPE in present)}
    # per file, per event type: the parts' judges an event reaches, in part order
    feeds = [{kind: [judges[p.index].feed for p in reached if p.index in run]
              for kind, reached in table.items()} for table in tables]
    found: list[Violation] = []
    for at, ev in events:
        todo = feeds[at[1]].get(ev.TYPE)
        if not todo:
            continue
        if ev.member == UNKNOWN_MEMBER and not isinstance(ev, Quiescent):
            continue  # unknown: changes nothing (`Monitor.step`, `routes`)
        for feed in todo:
            v = feed(at, ev)
            if v is not None:
                found.append(v)
    if max_skew_ms is not None and found:
        found = _skewed_all(ps, tables, events, found, max_skew_ms)
    return sorted(found, key=violation_order)


class _PartJudge:
    """One part's shards in `judge`, and per member the shards a routed event of it reaches:
    those whose key names the member and those it has had events in, less those the routed
    event would leave as they are (see `judge`). `feed` is made for the part's key: one shard
    (`Monitor.key` as it is), a shard per member (`PerMember.key`, never routed), or any key."""

    __slots__ = ("feed", "initial", "involved", "key_size", "keys", "monitor", "part",
                 "quiescence", "shards", "step", "unnamed")

    def __init__(self, part: Part) -> None:
        monitor = part.monitor
        self.part = part
        self.monitor = monitor
        self.key_size = monitor.key_size
        self.initial = monitor.initial()
        self.quiescence = quiescence_part(part)
        self.shards: dict[str, Shard] = {}
        #: a key's components -> the shard key (`routes`' form)
        self.keys: dict[tuple[Hashable, ...], str] = {}
        #: member -> the keys of the shards a routed event of it reaches
        self.involved: dict[str, set[str]] = {}
        #: the shards taken out of the sets of the members their key names (their state was
        #: the initial one): put back at their next event
        self.unnamed: set[str] = set()
        # `Monitor.step` but for the unknown member, which `judge` never feeds
        self.step = monitor.step if type(monitor).step is not Monitor.step else monitor.observe
        key = type(monitor).key
        self.feed = (self._feed_one if key is Monitor.key
                     else self._feed_member if key is PerMember.key and self.key_size == 1
                     else self._feed_keyed)

    def _quiescent(self, at: OrderKey, ev: Event) -> Violation | None:
        if not self.quiescence:
            return None
        assert self.key_size == 0, f"{self.part.spec}: a keyed quiescence check"
        return self._shard("").step(at, ev)

    def _judged(self, shard: Shard, at: OrderKey, ev: Event) -> Violation | None:
        """`Shard.step` for an event that is not routed (inlined: this runs for every event
        and part)."""
        shard.state, message = self.step(shard.state, ev)
        if message is None:
            shard.previous[ev.member] = ev.source
            return None
        return self._violation(shard, at, ev, message)

    def _violation(self, shard: Shard, at: OrderKey, ev: Event, message: str) -> Violation:
        """`ev`'s violation in `shard`, which names the member's previous event there."""
        before = shard.previous.get(ev.member)
        shard.previous[ev.member] = ev.source
        sources = tuple(dict.fromkeys(s for s in (before, ev.source) if s is not None))
        return Violation(self.part.spec, ev.member, sources, message, at, self.part.index,
                         shard.key)

    def _feed_one(self, at: OrderKey, ev: Event) -> Violation | None:
        """`ev` to the one shard of a part whose state is one piece (``Monitor.key``)."""
        if isinstance(ev, Quiescent):
            return self._quiescent(at, ev)
        if self.key_size:  # the key is ``()``: a routed event
            self._routed(at, ev)
            return None
        shard = self.shards.get("")
        return self._judged(shard if shard is not None else self._shard(""), at, ev)

    def _feed_member(self, at: OrderKey, ev: Event) -> Violation | None:
        """`ev` to its member's shard (``PerMember.key``: never routed)."""
        if isinstance(ev, Quiescent):
            return self._quiescent(at, ev)
        shard = self.shards.get(ev.member)  # this part's shards by member
        if shard is None:
            shard = self.shards[ev.member] = Shard(self.part, f"{ev.member}\x1f")
        shard.state, message = self.step(shard.state, ev)  # `_judged`, inlined
        if message is None:
            shard.previous[ev.member] = ev.source
            return None
        return self._violation(shard, at, ev, message)

    def _feed_keyed(self, at: OrderKey, ev: Event) -> Violation | None:
        """`ev` to the shards it reaches, by `Monitor.key`."""
        if isinstance(ev, Quiescent):
            return self._quiescent(at, ev)
        parts = self.monitor.key(ev)
        if parts is None:
            return None
        if len(parts) < self.key_size:
            assert not parts, f"{self.part.spec}: partial key {parts!r}"
            self._routed(at, ev)
            return None
        key = self.keys.get(parts)
        if key is None:
            key = self.keys[parts] = "".join(f"{k}\x1f" for k in parts)
        shard = self.shards.get(key)
        if shard is None:
            shard = self._shard(key)
        elif key in self.unnamed:
            self.unnamed.discard(key)
            for name in names(key):
                self.involved.setdefault(name, set()).add(key)
        mine = self.involved.get(ev.member)
        if mine is None:
            mine = self.involved[ev.member] = set()
        mine.add(key)
        return self._judged(shard, at, ev)

    def _shard(self, key: str) -> Shard:
        shard = self.shards.get(key)
        if shard is None:
            shard = self.shards[key] = Shard(self.part, key)
            for name in names(key):
                self.involved.setdefault(name, set()).add(key)
        return shard

    def _routed(self, at: OrderKey, ev: Event) -> None:
        """A crashed or restarted member's event: each shard it reaches forgets what the member
        did there. Then a shard whose key does not name the member is left out until the member
        has an event there again, and one that does, when it is in its initial state, until its
        next event."""
        mine = self.involved.get(ev.member)
        if not mine:
            return
        for key in list(mine):
            shard = self.shards[key]
            if shard.state != self.initial:
                shard.step(at, ev, routed=True)
            if ev.member not in names(key):
                mine.discard(key)
            elif shard.state == self.initial:
                mine.discard(key)
                self.unnamed.add(key)


def _skewed_all(ps: Sequence[Part], tables: Sequence[dict[str, list[Part]]],
                events: Iterable[tuple[OrderKey, Event]], found: Sequence[Violation],
                max_skew_ms: int) -> list[Violation]:
    """`skewed` for the violations of every shard that raised one: one more pass over the
    events gathers those shards' events (as `judge` routed them), and nothing else."""
    wanted = {(v.part, v.key) for v in found}
    steps: dict[tuple[int, str], list[tuple[OrderKey, Event, bool]]] = {w: [] for w in wanted}
    parts_wanted = {p for p, _ in wanted}
    involved: dict[int, dict[str, set[str]]] = {p: {} for p in parts_wanted}
    for at, ev in events:
        for p in tables[at[1]].get(ev.TYPE, ()):
            if p.index not in parts_wanted:
                continue
            route = routes(p, ev)
            if route is None:
                continue
            key, routed = route
            if routed:
                for k in involved[p.index].get(ev.member, ()):
                    if (p.index, k) in steps:
                        steps[(p.index, k)].append((at, ev, True))
                continue
            for name in names(key):
                involved[p.index].setdefault(name, set()).add(key)
            involved[p.index].setdefault(ev.member, set()).add(key)
            if (p.index, key) in steps:
                steps[(p.index, key)].append((at, ev, False))
    out: list[Violation] = []
    for (index, key), mine in steps.items():
        out += skewed(ps[index], mine, [v for v in found if (v.part, v.key) == (index, key)],
                      max_skew_ms)
    return out


def violation_order(v: Violation) -> tuple[OrderKey, int, str]:
    return v.at, v.part, v.message


# --- warnings, per member -------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Notice:
    """Not a violation: a lost partition, a rebalance that looks stuck, a member list whose
    stated size is wrong, an empty file."""

    kind: str
    member: str
    sources: tuple[Source, ...]
    message: str

    def as_dict(self) -> dict[str, Any]:
        return {"kind": self.kind, "member": self.member,
                "events": [{"file": s.file, "line": s.line} for s in self.sources],
                "message": self.message}


def warnings_of(events: Iterable[tuple[OrderKey, Event]], stuck_ms: int = DEFAULT_STUCK_MS
                ) -> list[tuple[OrderKey, Notice]]:
    """Lost partitions, and rebalances with no end seen although the master's log goes on for
    longer than `stuck_ms` after their start; each with the order key of the event that shows it.
    Everything here is per member, so a member's events alone give its warnings. A lost
    partition is worth a warning whoever reports it, so one with an unknown member
    (`UNKNOWN_MEMBER`) is reported too; a rebalance is followed only at a known member (the
    events of unknown members, from any file, are no one member's log)."""
    out: list[tuple[OrderKey, Notice]] = []
    running: dict[str, Repartitioning] = {}
    warned: set[int] = set()
    for at, ev in events:
        me = ev.member
        if isinstance(ev, PartitionLost):
            count = ("" if ev.lost_backup_count is None
                     else f" (lostBackupCount={ev.lost_backup_count})")
            who = me if me != UNKNOWN_MEMBER else "a member the log does not name"
            out.append((at, Notice(
                "partition-lost", me, _src(ev),
                f"{who} reports partition {ev.partition} lost{count}; whether more members "
                "failed than the backup count allows is not in the log")))
            continue
        if me == UNKNOWN_MEMBER:
            continue
        if isinstance(ev, Repartitioning):
            if ev.planned:
                running[me] = ev
            else:
                running.pop(me, None)
            continue
        if (isinstance(ev, MigrationsCompleted) and ev.outcome != "progress") \
                or isinstance(ev, MemberStarted):
            running.pop(me, None)
            continue
        start = running.get(me)
        if start is None or ev.order is None or start.order is None or id(start) in warned:
            continue
        if ev.order - start.order > stuck_ms:
            warned.add(id(start))
            out.append((at, Notice(
                "migration-stuck", me, _src(start),
                f"{me} started a rebalance of {start.planned} migrations and has not reported "
                f"its end {(ev.order - start.order) // 1000} s later")))
    return out


def _src(ev: Event) -> tuple[Source, ...]:
    return (ev.source,) if ev.source is not None else ()


# --- the summary, per member ----------------------------------------------------------------------


def view_key(ev: MemberListInstalled) -> str:
    """What tells views apart in the summary: the master (its UUID when shown), the version and
    the members."""
    head = ev.uuids[0] if ev.uuids else (ev.members[0] if ev.members else "")
    return f"{head}|{ev.version}|{','.join(ev.members)}"


@dataclass
class Tally:
    """A member's part of the summary: how often it started, the UUIDs it listed itself under,
    its migration counters. Tallies of different members add up."""

    starts: int = 0
    uuids: set[str] = field(default_factory=set)
    migrations: Counter[str] = field(default_factory=Counter)

    def add(self, ev: Event) -> None:
        if isinstance(ev, MemberStarted):
            self.starts += 1
        elif isinstance(ev, MemberListInstalled):
            if ev.uuids and ev.member in ev.members:
                self.uuids.add(ev.uuids[ev.members.index(ev.member)])
        elif isinstance(ev, Repartitioning):
            self.migrations["repartitionings"] += 1
            self.migrations["planned"] += ev.planned
        elif isinstance(ev, MigrationsCompleted) and ev.outcome != "progress":
            self.migrations[f"rebalances_{ev.outcome}"] += 1
            self.migrations["completed"] += ev.completed
        elif isinstance(ev, MigrationStarted) and ev.role == "master":  # one per migration
            self.migrations["started"] += 1
        elif isinstance(ev, MigrationFailed) or (
                isinstance(ev, MigrationRolledBack) and ev.role == "master"):
            self.migrations["failed"] += 1

    @property
    def incarnations(self) -> int:
        return max(1, self.starts, len(self.uuids))

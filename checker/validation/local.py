"""The validator: the spec monitors of `partsafe.specs`, run over the events of real logs.

One set of invariants, three ways to check them: the monitors the explorer carries
in its global state are the ones that judge a log, unchanged. A log shows only some events, and a
monitor treats what it did not see as unknown, so the specs judged here are those whose events a
log shows (`LOG_SPECS`); the others need what Hazelcast does not log (whole partition tables,
every participant's commit, replica holders) and are listed with the reason in `NOT_JUDGED`.

Order. Each member's own events keep their order in its file (a member's log is the one order
that is certain); the members' streams are merged by timestamp, which only decides how
cross-member specs see them interleave (and those are written to be robust to skew: a view is
keyed by its master and version, not by when it was seen). A log that stops is not quiescent, so
quiescence checks are not run.

Unknown members. A record that names no member (a member list with no record line before it and
no ``this`` marker, as in split-brain reports and copied excerpts) gives an event whose member is
`UNKNOWN_MEMBER`. No spec judges it (`Monitor.step`) and no member's summary counts it; the
report counts such events (``events_without_member``), a lost partition it reports is still a
warning, and a member list it shows still counts among the distinct views.

The engine-agnostic core (order keys, monitor parts, shards, warnings, the summary) is
`shards` (this package); this module is the local engine around it, one process reading the
files one after the other. `spark` (this package) is the other engine.
"""

from __future__ import annotations

import dataclasses
import gc
import heapq
import time
from array import array
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

from partsafe.checker.validation import ignite
from partsafe.checker.validation.shards import (
    DEFAULT_STUCK_MS,
    LOG_SPECS,
    Notice,
    OrderKey,
    Tally,
    Violation,
    allowed,
    evidence_counts,
    judge,
    view_key,
    warnings_of,
)
from partsafe.checker.validation.skew import DEFAULT_MAX_SKEW_MS
from partsafe.specs import forms
from partsafe.specs.registry import all_specs
from partsafe.traces.events import (
    UNKNOWN_MEMBER,
    AssignmentsChanged,
    Event,
    MemberListInstalled,
    Quiescent,
    Source,
)
from partsafe.traces.inputs import Candidate
from partsafe.traces.scanner import Accounting, FileTally, InputError, Note, Scanner, expand

#: what `validate` looks for, in the words its reports use
PROTOCOL = "Hazelcast's membership or migration protocol"
#: ... per format of a file read (`partsafe.traces.inputs.Sniff`)
PROTOCOLS = {"log": PROTOCOL, "jsonl": PROTOCOL, "ignite": ignite.PROTOCOL}
#: ... and where the product logs it
WHERE = {"log": "a Hazelcast member logs them at INFO, after its prefix [host]:port [cluster] "
                "[version]", "ignite": ignite.WHERE}
#: a file's status in a report: events were judged; it was read and gave none; it was not read
JUDGED, NOTHING, SKIPPED = "judged", "nothing recognised", "skipped"


@dataclass(frozen=True, slots=True)
class FileStatus:
    """What became of one input file (a run that judged nothing says so):
    its events were judged, or it was read and nothing in it was recognised, or it was skipped
    (`partsafe.traces.inputs`), each with the reason."""

    file: str
    status: str
    reason: str
    lines: int = 0
    events: int = 0
    malformed: int = 0

    def as_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)

    def brief(self) -> str:
        """The file and, in a few words, what it held or why it was skipped."""
        if self.status == SKIPPED:
            return f"{self.file} ({self.reason})"
        events = (f", {self.events:,} event{'' if self.events == 1 else 's'} without a member"
                  if self.events and self.status != JUDGED else "")
        malformed = f", {self.malformed:,} malformed" if self.malformed else ""
        return (f"{self.file} ({self.lines:,} line{'' if self.lines == 1 else 's'}{events}"
                f"{malformed})")


def file_status(tally: FileTally) -> FileStatus:
    """A scanned (or skipped) file's status, from its tally: the one rule both engines use."""
    name = tally.name
    if tally.skipped is not None:
        return FileStatus(name, SKIPPED, tally.skipped)
    if tally.events > tally.without_member:
        without = (f" ({tally.without_member:,} without a member)" if tally.without_member
                   else "")
        return FileStatus(name, JUDGED, f"{tally.events:,} events in {tally.lines:,} lines"
                          f"{without}", tally.lines, tally.events, tally.malformed)
    if tally.events:
        one = tally.events == 1
        reason = (f"its {tally.events:,} event{'' if one else 's'} name{'s' if one else ''} no "
                  "member (no record line or `this` marker does), so no spec judges "
                  f"{'it' if one else 'them'}")
        return FileStatus(name, NOTHING, reason, tally.lines, tally.events, tally.malformed)
    if tally.lines == 0:
        reason = "an empty file"
    elif tally.malformed:
        reason = (f"no event: {tally.malformed:,} of its {tally.lines:,} lines are malformed, "
                  "the others are not of the protocol")
    else:
        reason = f"no line of {PROTOCOLS.get(tally.fmt, PROTOCOL)} in its {tally.lines:,} lines"
    return FileStatus(name, NOTHING, reason, tally.lines, 0, tally.malformed)


def statuses(candidates: Sequence[Candidate], tallies: Sequence[FileTally]) -> list[FileStatus]:
    """The status of every candidate, in order: skipped by name, or from its tally (`tallies`
    holds one for each candidate that was not skipped by name, in order)."""
    scanned = iter(tallies)
    return [FileStatus(str(c.path), SKIPPED, c.skipped) if c.skipped is not None
            else file_status(next(scanned)) for c in candidates]


def _listed(items: Sequence[str], most: int = 3) -> str:
    shown = ", ".join(items[:most])
    return shown + (f" and {len(items) - most:,} more" if len(items) > most else "")


#: the member lists a member's timeline keeps (`Report.timeline`)
TIMELINE_KEPT = 2_000


@dataclass
class Report:
    """What `validate` found, as ``validate --json`` prints it
    (docs/validation.md)."""

    #: the files read (the ones not skipped), as reports name them
    files: list[str]
    accounting: Accounting
    violations: list[Violation] = field(default_factory=list)
    warnings: list[Notice] = field(default_factory=list)
    members: dict[str, int] = field(default_factory=dict)  # member -> incarnations
    views: int = 0
    migrations: dict[str, int] = field(default_factory=dict)
    seconds: float = 0.0
    #: which engine judged: ``local``, or ``spark`` with the Spark master it ran on
    engine: str = "local"
    master: str | None = None
    #: events no member can be named for (`UNKNOWN_MEMBER`): counted, judged by no spec
    events_without_member: int = 0
    #: every input file with its status, in command-line order (skipped ones too)
    inputs: list[FileStatus] = field(default_factory=list)
    #: the recorded form of each file read (`partsafe.specs.forms`), in `files` order
    kinds: list[str] = field(default_factory=list)
    #: the specs each event file's header declares its events complete for (None: all)
    declared: list[tuple[str, ...] | None] = field(default_factory=list)
    #: the cluster's settings the event files' headers give (the monitors are built for them)
    config: dict[str, Any] = field(default_factory=dict)
    #: the bound on the members' clocks the skew verdicts assumed (`skew`)
    max_skew_ms: int = DEFAULT_MAX_SKEW_MS
    #: possible violations fail the run too (`validate --strict`)
    strict: bool = False
    #: per member, the member lists it installed, in order: (timestamp in ms or None, version,
    #: size, file, line), the first `TIMELINE_KEPT` (the HTML report's timeline; the local
    #: engine's only)
    timeline: dict[str, list[tuple[int | None, int | None, int, str, int]]] = field(
        default_factory=dict)
    #: the events read, per type, of a known member (what gives a spec its evidence); None
    #: before they are counted (a report of no run)
    type_counts: dict[str, int] | None = None

    @property
    def definite(self) -> list[Violation]:
        """The violations every order the log allows shows (and those of one member's order)."""
        return [v for v in self.violations if v.certainty == "definite"]

    @property
    def possible(self) -> list[Violation]:
        """The violations some order the log allows shows: findings, unless `strict`."""
        return [v for v in self.violations if v.certainty != "definite"]

    def _present(self) -> list[tuple[str, tuple[str, ...] | None]]:
        kinds = self.kinds or ["hazelcast-log"]
        declared = self.declared or [None] * len(kinds)
        return list(dict.fromkeys(zip(kinds, declared, strict=True)))

    @property
    def judgeable(self) -> tuple[str, ...]:
        """The specs this input's files judge (their forms, their headers), evidence or not."""
        judged = frozenset().union(*(allowed(k, d) for k, d in self._present()))
        return tuple(s.id for s in all_specs() if s.id in judged)

    @property
    def evidence(self) -> dict[str, int]:
        """Per spec its files judge, the events it could raise a violation at
        (`shards.evidence_counts`)."""
        if self.type_counts is None:
            return {}
        return evidence_counts(self.judgeable, self.type_counts)

    @property
    def specs(self) -> tuple[str, ...]:
        """The specs judged on this input: those its files judge (their forms, their headers)
        that it holds evidence for, some event at which the spec could fail."""
        evidence = self.evidence
        return tuple(s for s in self.judgeable
                     if self.type_counts is None or evidence.get(s, 0) > 0)

    @property
    def not_judged(self) -> dict[str, str]:
        """Every other spec of the catalogue, with why this input cannot judge it (per form, when
        the files are of several forms), or, for a spec its files judge, that this run held no
        evidence for it and the messages that would carry it."""
        present = self._present()
        judged = set(self.specs)
        judgeable = set(self.judgeable)
        out = {}
        for spec in all_specs():
            if spec.id in judged:
                continue
            if spec.id in judgeable:
                out[spec.id] = _no_evidence(spec.id, [k for k, _d in present])
                continue
            reasons = list(dict.fromkeys(
                (k, forms.reason_not_judged(k, spec.id) if not forms.judges(k, spec.id) else
                 f"The event file's header declares its events complete for {len(d or ())} "
                 "specs, not this one (the run of a model that abstracts the rest).")
                for k, d in present))
            out[spec.id] = (reasons[0][1] if len(reasons) == 1 else
                            " ".join(f"{forms.FORM_TITLES[k]}: {r}" for k, r in reasons))
        return out

    @property
    def result(self) -> str:
        """``violation``, ``ok``, or ``incomplete`` when no event was judged (a run that judged
        nothing is not clean: exit status 3, like a search that stopped at a bound)."""
        if self.definite or (self.strict and self.possible):
            return "violation"
        return "incomplete" if self.accounting.events == self.events_without_member else "ok"

    @property
    def incomplete_reason(self) -> str | None:
        """Why nothing was judged, naming the files; None when something was."""
        if self.result != "incomplete":
            return None
        skipped = [s.brief() for s in self.inputs if s.status == SKIPPED]
        read = [s.brief() for s in self.inputs if s.status != SKIPPED]
        if not read:
            return (f"every file was skipped, so nothing was judged: {_listed(skipped)}"
                    if skipped else "no file was read, so nothing was judged")
        files = f"{len(read):,} file{'' if len(read) == 1 else 's'}"
        found = self.accounting.events
        if found:
            one = found == 1
            out = (f"the {found:,} event{'' if one else 's'} found in the {files} read "
                   f"name{'s' if one else ''} no member (no record line or `this` marker does), "
                   f"so no spec judged {'it' if one else 'them'}: {_listed(read)}")
        else:
            # what each kind of file read holds when it holds something, in file order
            fmts = dict.fromkeys("ignite" if t.fmt == "ignite" else "log"
                                 for t in self.accounting.files if t.skipped is None)
            what = " or ".join(PROTOCOLS[f] for f in fmts)
            where = "; ".join(WHERE[f] for f in fmts)
            out = f"no event of {what} was found in the {files} read: {_listed(read)} ({where})"
        if skipped:
            out += f"; {len(skipped):,} skipped: {_listed(skipped)}"
        return out

    def as_dict(self) -> dict[str, Any]:
        acc = self.accounting
        return {
            "result": self.result,
            "incomplete_reason": self.incomplete_reason,
            "files": self.files,
            "inputs": [s.as_dict() for s in self.inputs],
            "lines": acc.lines,
            "parsed_lines": acc.parsed_lines,
            "ignored_lines": acc.ignored_lines,
            "malformed": [{"file": m.file, "line": m.line, "reason": m.reason}
                          for m in acc.malformed],
            "events": acc.events,
            "events_without_member": self.events_without_member,
            "members": sorted(self.members),
            "incarnations": dict(sorted(self.members.items())),
            "views": self.views,
            "migrations": self.migrations,
            "specs": list(self.specs),
            "evidence": {s: n for s, n in self.evidence.items() if n},
            "no_evidence": [s for s in self.judgeable if s not in set(self.specs)],
            **({"config": self.config} if self.config else {}),
            "not_judged": self.not_judged,
            "max_skew_ms": self.max_skew_ms,
            "strict": self.strict,
            "violations": [v.as_dict() for v in self.definite],
            "possible_violations": [v.as_dict() for v in self.possible],
            "warnings": [w.as_dict() for w in self.warnings],
            "seconds": round(self.seconds, 3),
            "engine": self.engine,
            **({"spark_master": self.master} if self.master else {}),
        }


def _no_evidence(spec_id: str, kinds: list[str]) -> str:
    """Why a spec its files judge was not judged: no event of this run carries its evidence;
    the messages (and levels) that would, per log form."""
    shown = []
    for kind in dict.fromkeys(kinds):
        if kind in forms.LOG_FORMS and forms.judges(kind, spec_id):
            shown += [f"{e.level} {e.logger}: `{e.message}`"
                      for e in forms.evidence(kind, spec_id)]
    needs = ("; it needs " + "; or ".join(shown)) if shown else ""
    return f"No evidence in this run: no event at which it could fail was found{needs}."


# --- files to a report ----------------------------------------------------------------------------


def validate(paths: Sequence[str], *, fmt: str = "auto", stuck_ms: int = DEFAULT_STUCK_MS,
             max_skew_ms: int = DEFAULT_MAX_SKEW_MS, config: dict[str, Any] | None = None,
             progress: Callable[[int], None] | None = None) -> Report:
    """Scan `paths` (files or directories), order the members' events, run the monitors per key.
    Raises InputError for a path that cannot be read as a log."""
    # the events are kept to the end and hold no reference cycles: once a file is read, the
    # collector need not go through them again (`gc.freeze`), unless the caller froze objects
    # of its own, which unfreezing would let go of
    freeze = gc.get_freeze_count() == 0
    try:
        return _validate(paths, fmt, stuck_ms, max_skew_ms, config, progress, freeze)
    finally:
        if freeze:
            gc.unfreeze()


def _validate(paths: Sequence[str], fmt: str, stuck_ms: int, max_skew_ms: int,
              config: dict[str, Any] | None, progress: Callable[[int], None] | None,
              freeze: bool) -> Report:
    t0 = time.perf_counter()
    candidates = expand(list(paths))
    scanner = Scanner(fmt, progress)
    events = Timeline()
    files: list[str] = []
    kinds: list[str] = []
    declared: list[tuple[str, ...] | None] = []
    for c in candidates:
        if c.skipped is not None:
            continue
        found = list(scanner.scan(c.path, str(c.path), c.explicit))
        tally = scanner.accounting.files[-1]
        if tally.skipped is None:
            events.add(len(files), found, one_stream=tally.fmt == "jsonl")
            files.append(str(c.path))
            kinds.append(forms.form_of(tally.fmt))
            declared.append(declared_specs(tally))
        del found
        if freeze:
            gc.freeze()
    report = Report(files, scanner.accounting, kinds=kinds, declared=declared,
                    config=merged_config(scanner.accounting.files, config),
                    max_skew_ms=max_skew_ms)
    report.inputs = statuses(candidates, scanner.accounting.files)
    order = {f: i for i, f in enumerate(files)}
    report.accounting.malformed.sort(key=lambda m: (order.get(m.file, 0), m.line))
    report.violations = judge(events, kinds, declared, report.config, max_skew_ms,
                              present=events.types)
    report.warnings = notes_as_warnings(scanner.accounting.notes, order)
    rebalances = (ignite.warnings_of(events) if AssignmentsChanged.TYPE in events.types
                  else [])  # what an input without Ignite's assignments gives: none
    report.warnings += [n for _, n in sorted(warnings_of(events, stuck_ms) + rebalances,
                                             key=lambda pair: pair[0])]
    tallies: dict[str, Tally] = {}
    views: set[str] = set()
    lists_seen: set[tuple[Any, ...]] = set()
    type_counts: Counter[str] = Counter()
    for _, ev in events:
        if ev.member != UNKNOWN_MEMBER:
            type_counts[ev.TYPE] += 1
            tally = tallies.get(ev.member)
            if tally is None:
                tally = tallies[ev.member] = Tally()
            tally.add(ev)
        elif not isinstance(ev, Quiescent):  # the run's record: no member's, and not a lack
            report.events_without_member += 1
        if isinstance(ev, MemberListInstalled):  # whoever installed it: a list the log shows
            shown = (ev.uuids[:1], ev.members, ev.version)  # its copies share their tuples
            if shown not in lists_seen:
                lists_seen.add(shown)
                views.add(view_key(ev))
            if ev.member != UNKNOWN_MEMBER and ev.source is not None:
                kept = report.timeline.setdefault(ev.member, [])
                if len(kept) < TIMELINE_KEPT:
                    kept.append((ev.order, ev.version, len(ev.members), ev.source.file,
                                 ev.source.line))
    summarize(report, tallies, len(views))
    report.type_counts = dict(type_counts)
    report.seconds = time.perf_counter() - t0
    return report


class Timeline:
    """The events of the files read, in order key order each time it is iterated: what
    `shards.stamped` and a sort give, kept compact. A file's events are kept per stream (a
    member's events in a log; the whole of an event file), in file order with their positions,
    and a stream's order keys, which grow along it, are made as it is read; the streams are
    merged (`heapq.merge`, on keys that never tie) the first time, which records the stream of
    each event in turn, and later iterations follow that record. So an event costs the event
    itself and a few bytes, not a key and a pair of its own."""

    def __init__(self) -> None:
        #: (file index, the stream's first position in its file, its events, their positions)
        self.streams: list[tuple[int, int, list[Event], array[int]]] = []
        self.count = 0
        #: the event types among them
        self.types: set[str] = set()
        #: the stream of each event in order key order, once merged
        self.order: array[int] | None = None

    def add(self, file_index: int, events: Iterable[Event], one_stream: bool = False) -> None:
        """The events of one file, in file order (`shards.stamped`'s streams)."""
        self.order = None
        streams: dict[str, tuple[int, list[Event], array[int]]] = {}
        for position, ev in enumerate(events):
            member = "" if one_stream else ev.member
            stream = streams.get(member)
            if stream is None:
                stream = streams[member] = (position, [], array("L"))
            stream[1].append(ev)
            stream[2].append(position)
            self.types.add(ev.TYPE)
            self.count += 1
        self.streams += [(file_index, start, evs, at) for start, evs, at in streams.values()]

    def __len__(self) -> int:
        return self.count

    def __iter__(self) -> Iterator[tuple[OrderKey, Event]]:
        if len(self.streams) == 1:
            return _stream(*self.streams[0])
        if self.order is None:
            return self._merged()
        return self._replayed(self.order)

    def _merged(self) -> Iterator[tuple[OrderKey, Event]]:
        index = {(fi, start): i for i, (fi, start, _, _) in enumerate(self.streams)}
        order = array("L")
        for pair in heapq.merge(*(_stream(*s) for s in self.streams)):
            order.append(index[pair[0][1], pair[0][2]])
            yield pair
        self.order = order  # a merge run to its end: later ones follow it

    def _replayed(self, order: array[int]) -> Iterator[tuple[OrderKey, Event]]:
        taken = [_stream(*s).__next__ for s in self.streams]
        for i in order:
            yield taken[i]()


def _stream(file_index: int, start: int, events: list[Event], positions: array[int]
            ) -> Iterator[tuple[OrderKey, Event]]:
    """One stream's events with their order keys (`shards.stamped`)."""
    when = 0
    for position, ev in zip(positions, events, strict=True):
        order = ev.order
        if order is not None and order > when:
            when = order
        yield (when, file_index, start, position), ev


def declared_specs(tally: FileTally) -> tuple[str, ...] | None:
    """The specs an event file's header declares, each checked against the catalogue (an unknown
    id is bad input: InputError, naming the file)."""
    if tally.declared is None:
        return None
    known = {s.id for s in all_specs()}
    unknown = [x for x in tally.declared if x not in known]
    if unknown:
        raise InputError(f"{tally.name}:1: the header declares unknown spec(s) "
                         f"{', '.join(unknown)}; `partsafe specs` lists the catalogue")
    return tally.declared


def merged_config(tallies: Sequence[FileTally], given: dict[str, Any] | None = None
                  ) -> dict[str, Any]:
    """The cluster's settings `given` on the command line (`validate --config`, for logs, which
    do not print them) and those the event files give, as one: sources that disagree on a
    setting are bad input (InputError, naming both)."""
    out: dict[str, Any] = dict(given or {})
    said: dict[str, str] = {key: "--config" for key in out}
    for t in tallies:
        for key, value in t.config.items():
            if key in out and out[key] != value:
                where = "--config" if said[key] == "--config" else f"{said[key]}:1"
                raise InputError(f"{t.name}:1: the header sets {key}={value!r}, but "
                                 f"{where} sets {key}={out[key]!r}; validate files of "
                                 "one cluster together")
            out[key] = value
            said[key] = t.name
    return out


def notes_as_warnings(notes: Sequence[Note], order: dict[str, int]) -> list[Notice]:
    """The scanner's notes as warnings, by file and line."""
    ordered = sorted(notes, key=lambda n: (order.get(n.file, 0), n.line, n.message))
    return [Notice("note", n.member, (Source(n.file, n.line),) if n.line else (),
                   f"{n.file}: {n.message}" if not n.line else n.message) for n in ordered]


def summarize(report: Report, tallies: dict[str, Tally], views: int) -> None:
    """Members with their incarnations, distinct views, migration counts. `views` counts every
    distinct member list the logs show (master, version, members), the lists whose installer is
    unknown too: what a list names does not depend on who logged it."""
    migrations: Counter[str] = Counter()
    for t in tallies.values():
        migrations.update(t.migrations)
    report.members = {m: tallies[m].incarnations for m in sorted(tallies)}
    report.views = views
    report.migrations = {k: v for k, v in sorted(migrations.items()) if v}


__all__ = ["LOG_SPECS", "FileStatus", "InputError", "Notice", "Report", "Violation",
           "validate"]

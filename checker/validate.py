"""The validator: the spec monitors of `partsafe.specs`, run over the events of real logs.

DESIGN.md ("One set of invariants, three ways to check them"): the monitors the explorer carries
in its global state are the ones that judge a log, unchanged. A log shows only some events, and a
monitor treats what it did not see as unknown, so the specs judged here are those whose events a
log shows (`LOG_SPECS`); the others need what Hazelcast does not log (whole partition tables,
every participant's commit, replica holders) and are listed with the reason in `NOT_JUDGED`.

Order. Each member's own events keep their order in its file (a member's log is the one order
that is certain); the members' streams are merged by timestamp, which only decides how
cross-member specs see them interleave (and those are written to be robust to skew: a view is
keyed by its master and version, not by when it was seen). A log that stops is not quiescent, so
quiescence checks are not run.

`judge` is the engine-agnostic core: a pure function of an ordered event sequence, which the
Spark engine runs per key.
"""

from __future__ import annotations

import heapq
from collections import Counter, defaultdict
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

from partsafe.specs import registry
from partsafe.specs.monitor import Monitor
from partsafe.traces.events import (
    Event,
    MemberListInstalled,
    MemberStarted,
    MigrationFailed,
    MigrationsCompleted,
    MigrationStarted,
    PartitionLost,
    Repartitioning,
    Source,
)
from partsafe.traces.scanner import Accounting, InputError, Scanner, expand

#: the specs a log can show a violation of
LOG_SPECS: tuple[str, ...] = (
    "MEM-VIEW-ORDER", "MEM-VIEW-INTEGRITY", "MEM-VERSION", "MEM-MASTER-ONLY",
    "PT-VERSION", "MIG-STATS", "SHUT-ONLY-SOURCE",
)
#: the specs a Hazelcast log cannot show, and why
NOT_JUDGED: dict[str, str] = {
    "MEM-VIEW-AGREEMENT": "judged at quiescence, and a log that stops is not quiescent; the "
                          "agreement a log shows (one version, one list) is MEM-VERSION's",
    "PT-MASTER-ONLY": "needs the tables members apply, which are not logged",
    "PT-MOST-RECENT": "needs the tables the new master collects, which are not logged",
    "MIG-COMMIT-ORDER": "needs every participant's commit, logged at FINEST at most",
    "MIG-ATOMIC": "needs every participant's commit or rollback, logged at FINEST at most",
    "MIG-REJECT-STALE": "needs the participants' table versions, which are not logged",
    "DATA-*": "needs which member holds which replica, which is not logged; lost partitions are "
              "reported as warnings",
    "PAR-*": "needs the partition versions migrations run on, which are not logged",
    "SHUT-LEAVE-EMPTY": "needs the partition table at the moment a member leaves",
}
#: a rebalance still running this long after it started is worth a warning (milliseconds)
DEFAULT_STUCK_MS = 10 * 60 * 1000


@dataclass(frozen=True, slots=True)
class Violation:
    spec: str
    member: str
    sources: tuple[Source, ...]
    message: str

    def as_dict(self) -> dict[str, Any]:
        return {"spec": self.spec, "member": self.member,
                "events": [{"file": s.file, "line": s.line} for s in self.sources],
                "message": self.message}


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


@dataclass
class Report:
    """What `validate` found, in the shape of DESIGN.md's ``validate --json`` contract."""

    files: list[str]
    accounting: Accounting
    violations: list[Violation] = field(default_factory=list)
    warnings: list[Notice] = field(default_factory=list)
    members: dict[str, int] = field(default_factory=dict)  # member -> incarnations
    views: int = 0
    migrations: dict[str, int] = field(default_factory=dict)
    seconds: float = 0.0

    @property
    def result(self) -> str:
        return "violation" if self.violations else "ok"

    def as_dict(self) -> dict[str, Any]:
        acc = self.accounting
        return {
            "result": self.result,
            "files": self.files,
            "lines": acc.lines,
            "parsed_lines": acc.parsed_lines,
            "ignored_lines": acc.ignored_lines,
            "malformed": [{"file": m.file, "line": m.line, "reason": m.reason}
                          for m in acc.malformed],
            "events": acc.events,
            "members": sorted(self.members),
            "incarnations": dict(sorted(self.members.items())),
            "views": self.views,
            "migrations": self.migrations,
            "specs": list(LOG_SPECS),
            "violations": [v.as_dict() for v in self.violations],
            "warnings": [w.as_dict() for w in self.warnings],
            "seconds": round(self.seconds, 3),
        }


# --- the engine-agnostic core ---------------------------------------------------------------------


def monitors(specs: Sequence[str] = LOG_SPECS) -> list[Monitor]:
    out = []
    for spec_id in specs:
        build = registry.get(spec_id).monitor
        assert build is not None, spec_id
        out.append(build())
    return out


def judge(events: Iterable[Event], specs: Sequence[str] = LOG_SPECS) -> list[Violation]:
    """Run the monitors of `specs` over `events` (in order): every violation, naming the event
    that raised it and the member's previous event the monitor saw."""
    ms = monitors(specs)
    states = [m.initial() for m in ms]
    by_type: dict[str, list[int]] = defaultdict(list)
    for i, m in enumerate(ms):
        for kind in m.observes:
            by_type[kind].append(i)
    previous: dict[tuple[int, str], Event] = {}
    found: list[Violation] = []
    for ev in events:
        for i in by_type.get(ev.TYPE, ()):
            states[i], message = ms[i].observe(states[i], ev)
            key = (i, ev.member)
            if message is not None:
                before = previous.get(key)
                sources = tuple(e.source for e in (before, ev)
                                if e is not None and e.source is not None)
                found.append(Violation(ms[i].spec, ev.member, sources, message))
            previous[key] = ev
    return found


def merge(streams: Iterable[Sequence[Event]]) -> Iterator[Event]:
    """One sequence from per-member streams: each stream keeps its order, streams interleave by
    timestamp (an event without one takes its predecessor's)."""

    def keyed(index: int, stream: Sequence[Event]) -> Iterator[tuple[int, int, int, Event]]:
        last = 0
        for pos, ev in enumerate(stream):
            if ev.order is not None:
                last = ev.order
            yield last, index, pos, ev

    for *_, ev in heapq.merge(*(keyed(i, s) for i, s in enumerate(streams))):
        yield ev


def warnings_of(events: Iterable[Event], stuck_ms: int = DEFAULT_STUCK_MS) -> list[Notice]:
    """Lost partitions, and rebalances with no end seen although the master's log goes on for
    longer than `stuck_ms` after their start."""
    out: list[Notice] = []
    running: dict[str, Repartitioning] = {}
    warned: set[int] = set()
    for ev in events:
        me = ev.member
        if isinstance(ev, PartitionLost):
            count = ("" if ev.lost_backup_count is None
                     else f" (lostBackupCount={ev.lost_backup_count})")
            out.append(Notice("partition-lost", me, _src(ev),
                               f"{me} reports partition {ev.partition} lost{count}; whether "
                               "more members failed than the backup count allows is not in "
                               "the log"))
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
            out.append(Notice(
                "migration-stuck", me, _src(start),
                f"{me} started a rebalance of {start.planned} migrations and has not reported "
                f"its end {(ev.order - start.order) // 1000} s later"))
    return out


def _src(ev: Event) -> tuple[Source, ...]:
    return (ev.source,) if ev.source is not None else ()


# --- files to a report ----------------------------------------------------------------------------


def validate(paths: Sequence[str], *, fmt: str = "auto", stuck_ms: int = DEFAULT_STUCK_MS,
             progress: Callable[[int], None] | None = None) -> Report:
    """Scan `paths` (files or directories), merge the members' streams, run the monitors.
    Raises InputError for a path that cannot be read as a log."""
    import time

    t0 = time.perf_counter()
    files = expand(list(paths))
    scanner = Scanner(fmt, progress)
    streams: dict[tuple[int, str], list[Event]] = {}
    for index, path in enumerate(files):
        for ev in scanner.scan(path, str(path)):
            streams.setdefault((index, ev.member), []).append(ev)
    events = list(merge(streams.values()))
    report = Report([str(f) for f in files], scanner.accounting)
    report.violations = judge(events)
    report.warnings = [Notice("note", n.member, (Source(n.file, n.line),) if n.line else (),
                               f"{n.file}: {n.message}" if not n.line else n.message)
                       for n in scanner.accounting.notes]
    report.warnings += warnings_of(events, stuck_ms)
    summarize(report, events)
    report.seconds = time.perf_counter() - t0
    return report


def summarize(report: Report, events: Sequence[Event]) -> None:
    """Members with their incarnations, distinct views, migration counts."""
    starts: Counter[str] = Counter()
    uuids: dict[str, set[str]] = defaultdict(set)
    views = set()
    migrations: Counter[str] = Counter()
    members: set[str] = set()
    for ev in events:
        if ev.member:
            members.add(ev.member)
        if isinstance(ev, MemberStarted):
            starts[ev.member] += 1
        elif isinstance(ev, MemberListInstalled):
            views.add((ev.uuids[:1] or ev.members[:1], ev.version, ev.members))
            if ev.uuids and ev.member in ev.members:
                uuids[ev.member].add(ev.uuids[ev.members.index(ev.member)])
        elif isinstance(ev, Repartitioning):
            migrations["repartitionings"] += 1
            migrations["planned"] += ev.planned
        elif isinstance(ev, MigrationsCompleted) and ev.outcome != "progress":
            migrations[f"rebalances_{ev.outcome}"] += 1
            migrations["completed"] += ev.completed
        elif isinstance(ev, MigrationStarted):
            migrations["started"] += 1
        elif isinstance(ev, MigrationFailed):
            migrations["failed"] += 1
    report.members = {m: max(1, starts[m], len(uuids[m])) for m in sorted(members)}
    report.views = len(views)
    report.migrations = dict(sorted(migrations.items()))


__all__ = ["LOG_SPECS", "NOT_JUDGED", "InputError", "Report", "Violation", "judge", "merge",
           "validate", "warnings_of"]

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

Unknown members. A record that names no member (a member list with no record line before it and
no ``this`` marker, as in split-brain reports and copied excerpts) gives an event whose member is
`UNKNOWN_MEMBER`. No spec judges it (`Monitor.step`) and no member's summary counts it; the
report counts such events (``events_without_member``), a lost partition it reports is still a
warning, and a member list it shows still counts among the distinct views.

The engine-agnostic core (order keys, monitor parts, shards, warnings, the summary) is
`partsafe.checker.shards`; this module is the local engine around it, one process reading the
files one after the other. `partsafe.checker.spark` is the other engine.
"""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from partsafe.checker.shards import (
    DEFAULT_STUCK_MS,
    LOG_SPECS,
    Notice,
    OrderKey,
    Tally,
    Violation,
    judge,
    stamped,
    view_key,
    warnings_of,
)
from partsafe.traces.events import UNKNOWN_MEMBER, Event, MemberListInstalled, Source
from partsafe.traces.scanner import Accounting, InputError, Note, Scanner, expand

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
    #: which engine judged: ``local``, or ``spark`` with the Spark master it ran on
    engine: str = "local"
    master: str | None = None
    #: events no member can be named for (`UNKNOWN_MEMBER`): counted, judged by no spec
    events_without_member: int = 0

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
            "events_without_member": self.events_without_member,
            "members": sorted(self.members),
            "incarnations": dict(sorted(self.members.items())),
            "views": self.views,
            "migrations": self.migrations,
            "specs": list(LOG_SPECS),
            "violations": [v.as_dict() for v in self.violations],
            "warnings": [w.as_dict() for w in self.warnings],
            "seconds": round(self.seconds, 3),
            "engine": self.engine,
            **({"spark_master": self.master} if self.master else {}),
        }


# --- files to a report ----------------------------------------------------------------------------


def validate(paths: Sequence[str], *, fmt: str = "auto", stuck_ms: int = DEFAULT_STUCK_MS,
             progress: Callable[[int], None] | None = None) -> Report:
    """Scan `paths` (files or directories), order the members' events, run the monitors per key.
    Raises InputError for a path that cannot be read as a log."""
    t0 = time.perf_counter()
    files = expand(list(paths))
    scanner = Scanner(fmt, progress)
    events: list[tuple[OrderKey, Event]] = []
    for index, path in enumerate(files):
        events.extend(stamped(index, scanner.scan(path, str(path))))
    events.sort(key=lambda pair: pair[0])
    report = Report([str(f) for f in files], scanner.accounting)
    order = {str(f): i for i, f in enumerate(files)}
    report.accounting.malformed.sort(key=lambda m: (order.get(m.file, 0), m.line))
    report.violations = judge(events)
    report.warnings = notes_as_warnings(scanner.accounting.notes, order)
    report.warnings += [n for _, n in sorted(warnings_of(events, stuck_ms),
                                             key=lambda pair: pair[0])]
    tallies: dict[str, Tally] = {}
    views: set[str] = set()
    for _, ev in events:
        if ev.member != UNKNOWN_MEMBER:
            tallies.setdefault(ev.member, Tally()).add(ev)
        else:
            report.events_without_member += 1
        if isinstance(ev, MemberListInstalled):  # whoever installed it: a list the log shows
            views.add(view_key(ev))
    summarize(report, tallies, len(views))
    report.seconds = time.perf_counter() - t0
    return report


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


__all__ = ["LOG_SPECS", "NOT_JUDGED", "InputError", "Notice", "Report", "Violation",
           "validate"]

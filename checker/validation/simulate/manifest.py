"""What a simulation wrote (`Manifest`): its files, its counts, and each injected violation
with the file and line where `partsafe validate` reports it.

The manifest goes to ``.manifest.json`` in the output directory: `partsafe validate DIR` skips
hidden files (`partsafe.traces.scanner.expand`), so it is never read as a log.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import Any

#: the manifest's file name in the output directory (hidden: the validator does not read it)
MANIFEST_NAME = ".manifest.json"


@dataclass
class FileStats:
    """One member's log file."""

    name: str
    member: str
    lines: int = 0
    bytes: int = 0
    events: int = 0

    def as_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)


@dataclass(frozen=True)
class Record:
    """A written protocol record: the file and the line it starts at."""

    member: str
    file: str
    line: int

    def as_dict(self) -> dict[str, Any]:
        return {"member": self.member, "file": self.file, "line": self.line}


@dataclass(frozen=True)
class Injection:
    """An injected violation of `spec`: `file`:`line` is the record the validator reports (the
    first line of the violating record, for a member list its header line); `records` are every
    record the injection wrote, in order (the violating one last but for trailing context).
    `implied` are the specs the same record breaks of necessity (a plan's array with fewer
    replicas than PLAN-NO-DECREASE allows, or with no owner, has too few replicas in a prefix of
    hotter indices: PLAN-HOTTER-FIRST), reported at the same line."""

    spec: str
    member: str
    file: str
    line: int
    description: str
    records: tuple[Record, ...]
    implied: tuple[str, ...] = ()

    @property
    def specs(self) -> tuple[str, ...]:
        """The specs the validator reports at `line`: `spec` and the `implied` ones."""
        return (self.spec, *self.implied)

    def as_dict(self) -> dict[str, Any]:
        out = {"spec": self.spec, "member": self.member, "file": self.file, "line": self.line,
               "description": self.description, "records": [r.as_dict() for r in self.records]}
        if self.implied:
            out["implied"] = list(self.implied)
        return out


@dataclass
class Manifest:
    """What `simulate` wrote: the files, the counts, and every injected violation."""

    out: str
    seed: int
    members: int
    partitions: int
    requested: dict[str, Any]
    files: list[FileStats] = field(default_factory=list)
    injections: list[Injection] = field(default_factory=list)
    events: int = 0
    lines: int = 0
    bytes: int = 0
    eras: int = 0
    walks: int = 0
    seconds: float = 0.0

    @property
    def mb_per_second(self) -> float:
        return self.bytes / 1e6 / self.seconds if self.seconds > 0 else 0.0

    def as_dict(self, run: bool = True) -> dict[str, Any]:
        """The manifest as JSON; with `run`, also where and how fast this run wrote it (the
        ``.manifest.json`` file leaves those out, so that a run is byte for byte repeatable)."""
        doc: dict[str, Any] = {
            "seed": self.seed, "members": self.members, "partitions": self.partitions,
            "requested": self.requested, "events": self.events, "lines": self.lines,
            "bytes": self.bytes, "eras": self.eras, "walks": self.walks,
            "files": [f.as_dict() for f in self.files],
            "injections": [i.as_dict() for i in self.injections],
        }
        if run:
            doc = {"out": self.out, **doc, "seconds": round(self.seconds, 3),
                   "mb_per_second": round(self.mb_per_second, 1)}
        return doc

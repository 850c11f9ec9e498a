"""The files a Spark run reads: the inputs (as the local engine looks at them), and, on the
driver, the numbering of each input split's lines (stage 1) and each input's status.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any
from urllib.parse import unquote, urlparse

from partsafe.checker.validation.local import SKIPPED, FileStatus, file_status
from partsafe.traces.inputs import GZIP_MAGIC, Candidate, sniff
from partsafe.traces.scanner import FileTally, InputError, expand

_SCHEME = "://"


@dataclass(frozen=True, slots=True)
class Input:
    """One file: how Spark names it, how reports name it, its layout, its size; or why it is
    skipped (`partsafe.traces.inputs`: the local engine skips the same files)."""

    uri: str
    name: str
    fmt: str
    size: int
    skipped: str | None = None


def inputs(paths: Sequence[str], fmt: str = "auto") -> list[Input]:
    """The files of `paths` (files, directories, globs; URIs with a scheme are Spark's to list),
    each looked at as the local engine looks at it (`partsafe.traces.inputs.sniff`: readable,
    text, a log), and compressed only as ``.gz``."""
    out: list[Input] = []
    local: list[str] = []
    for raw in paths:
        if _SCHEME in raw and not raw.startswith("file:"):
            out.append(Input(raw, raw, "log" if fmt == "auto" else fmt, 0))
        else:
            local.append(unquote(urlparse(raw).path) if raw.startswith("file:") else raw)
    for candidate in expand(local):
        out.append(_sniff(candidate, fmt))
    return out


def _sniff(candidate: Candidate, fmt: str) -> Input:
    """A local file as an `Input`: skipped with the local engine's reason, or its layout and
    size; a ``.gz`` name must match gzip content (Spark decompresses by the name)."""
    path = candidate.path
    uri = path.resolve().as_uri()
    if candidate.skipped is not None:
        return Input(uri, str(path), "log", 0, candidate.skipped)
    head = sniff(path, fmt, candidate.explicit)
    if head.skipped is not None:
        return Input(uri, str(path), head.fmt, 0, head.skipped)
    with path.open("rb") as f:
        compressed = f.read(3) == GZIP_MAGIC
    if compressed != path.name.endswith(".gz"):
        raise InputError(
            f"{path}: {'gzip data without' if compressed else 'not gzip data, with'} a .gz name; "
            "Spark decompresses by the name: rename it, or use --engine local")
    return Input(uri, str(path), head.fmt, path.stat().st_size)


def statuses(given: list[Input], tallies: list[FileTally]) -> list[FileStatus]:
    """Every input's status in command-line order, as the local engine gives them: skipped ones
    with their reason, local files from their tallies; files Spark listed itself last."""
    by_name: dict[str, list[int]] = {}
    for n, t in enumerate(tallies):
        by_name.setdefault(t.name, []).append(n)
    used: set[int] = set()
    out: list[FileStatus] = []
    for i in given:
        if i.skipped is not None:
            out.append(FileStatus(i.name, SKIPPED, i.skipped))
        elif i.uri.startswith("file:"):
            n = by_name[i.name].pop(0)
            used.add(n)
            out.append(file_status(tallies[n]))
    return out + [file_status(t) for n, t in enumerate(tallies) if n not in used]


def _norm(uri: str) -> str:
    """A local file's URI or path the way both Spark's rows and `inputs` can be matched on."""
    return re.sub(r"^file:/+", "/", uri)


def number_splits(files: list[Input], counts: Sequence[Any], fmt: str
                  ) -> tuple[list[Input], list[tuple[str, int, int, int]], dict[int, int]]:
    """Stage 1 on the driver: from one (path, block, n, id0) row per input split, each split's
    file index and base (its first line's number minus its first row id), and each file's line
    count. Files Spark listed itself (a remote directory or glob) join `files` in path order."""
    files = [i for i in files if i.uri.startswith("file:")]
    known = {_norm(i.uri): n for n, i in enumerate(files)}
    index: dict[str, int] = {}
    for path in sorted({r["path"] for r in counts}):
        n = known.get(_norm(path))
        if n is None:
            n = len(files)
            files.append(Input(path, path, "log" if fmt == "auto" else fmt, 0))
        index[path] = n
    splits: list[tuple[str, int, int, int]] = []
    totals: dict[int, int] = {}
    for r in sorted(counts, key=lambda r: (index[r["path"]], r["block"])):
        n = index[r["path"]]
        before = totals.get(n, 0)
        splits.append((r["path"], r["block"], n, before + 1 - r["id0"]))
        totals[n] = before + r["n"]
    return files, splits, totals

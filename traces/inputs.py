"""Which files a run reads as logs, which it skips and why, and the one test of binary data.

Logs are untrusted and messy, and one bad file must not refuse a whole run. Both engines and both
commands that read logs (`partsafe validate`, `partsafe parse`) take their files from `expand` and
look at each one through `sniff`, so that the same file is read or skipped, for the same reason,
whichever engine or command reads it:

- `expand` turns the paths of the command line into candidates, and skips by name what a
  directory or a glob holds that is not a log (`NOT_LOGS`);
- `sniff` reads the head of a candidate (the first `WINDOW` bytes of its content, decompressed,
  NUL runs set aside) and skips binary data, and in a directory or a glob text that is not a log.

NUL runs. ``copytruncate`` log rotation truncates a file that its writer keeps open; the writer
goes on at its old offset, and the file starts with a run of NUL bytes as long as what was
rotated away (a hole). A run of at least `HOLE` NUL bytes is such a hole: the binary test sets it
aside, and the scanner skips it and reports it as a malformed line (`nul_reason`) before it reads
the rest of that line.
"""

from __future__ import annotations

import dataclasses
import glob
import gzip
import hashlib
import json
import re
import zlib
from dataclasses import dataclass
from pathlib import Path
from typing import IO

from partsafe.traces import ignite, layout
from partsafe.traces.events import EVENT_TYPES, is_header

#: how much of a file's content the binary test and the format test look at (bytes)
WINDOW = 64 << 10
#: a NUL run at least this long is a hole (what copytruncate leaves), not binary data
HOLE = 16
#: the share of control bytes from which a head is binary data (a NUL run shorter than a hole
#: counts as one, a hole not at all): text logs have none but the odd escape; executables,
#: images, archives, random bytes and UTF-16 have one in ten or more
BINARY_SHARE = 0.01
#: gzip's magic and its one compression method, deflate
GZIP_MAGIC = b"\x1f\x8b\x08"
#: what a directory or a glob may hold that is not a log, by the suffix of its name (before any
#: ``.gz``); a file named on the command line is read whatever its name
NOT_LOGS: dict[str, tuple[str, ...]] = {
    "documentation": (".md", ".markdown", ".rst", ".adoc", ".html", ".htm", ".pdf", ".tex"),
    "source code": (".py", ".pyc", ".pyi", ".java", ".class", ".kt", ".scala", ".go", ".rs",
                    ".c", ".h", ".cpp", ".js", ".ts", ".css", ".sh", ".lark", ".tla", ".cfg"),
    "configuration": (".xml", ".yaml", ".yml", ".properties", ".toml", ".ini", ".conf"),
    "an image": (".png", ".jpg", ".jpeg", ".gif", ".svg", ".ico", ".bmp", ".webp", ".tiff"),
    "an archive": (".zip", ".tar", ".tgz", ".bz2", ".xz", ".zst", ".7z", ".rar", ".jar",
                   ".war", ".whl"),
    "data": (".parquet", ".avro", ".orc", ".db", ".sqlite", ".crc", ".pid", ".lock"),
}
_KIND_OF_SUFFIX = {suffix: kind for kind, suffixes in NOT_LOGS.items() for suffix in suffixes}
#: control bytes that are not text, NUL aside: all but tab, the line ends, form feed and ESC
_CONTROL = re.compile(rb"[\x01-\x08\x0e-\x1a\x1c-\x1f\x7f]")
_HOLES = re.compile(rb"\x00{%d,}" % HOLE)
_NULS = re.compile(rb"\x00+")


class InputError(Exception):
    """An input that cannot be read at all (a path that does not exist, a directory with no
    files): the message names the path."""


@dataclass(frozen=True, slots=True)
class Candidate:
    """A file a run may read: `explicit` when the command line names it (always read unless it
    cannot be), `skipped` with the reason when it is not read."""

    path: Path
    explicit: bool
    skipped: str | None = None


@dataclass(frozen=True, slots=True)
class Sniff:
    """What the head of a file says: its format (``log``, a Hazelcast log in any layout;
    ``ignite``, an Apache Ignite 3 log; ``jsonl``, canonical events), whether it is gzip data,
    and why it is skipped, when it is."""

    fmt: str
    compressed: bool
    skipped: str | None = None


def expand(paths: list[str]) -> list[Candidate]:
    """The candidates of the command line's `paths`, in order. What a log file is:

    - a path that names a file is read, whatever its name (`explicit`);
    - a directory gives every regular file under it, sorted, hidden ones (a name starting with
      ``.``, or under such a directory) left out; a glob (``logs/*/hz-*.log.gz``, ``**`` for any
      depth) gives its matches. Of these, a file whose name says it is not a log (its suffix
      before any ``.gz`` is in `NOT_LOGS`: documentation, source code, configuration, images,
      archives other than ``.gz``, data) is skipped by name; ``.json`` is read only when its
      content is JSON Lines (`sniff`), and any other file only when its content is text that
      looks like a log (`sniff`).

    Raises InputError naming a path that does not exist, a glob with no match, a directory with
    no file in it."""
    out: list[Candidate] = []
    for raw in paths:
        path = Path(raw)
        if not path.exists() and glob.has_magic(raw):
            found = sorted(glob.glob(raw, recursive=True))
            if not found:
                raise InputError(f"{raw}: no file matches")
            for match in found:
                p = Path(match)
                if p.is_dir():
                    out.extend(_walk(p, match))
                elif p.is_file():
                    out.append(_by_name(p))
            continue
        if path.is_dir():
            out.extend(_walk(path, raw))
        elif path.is_file():
            out.append(Candidate(path, explicit=True))
        elif path.exists():
            raise InputError(f"{raw}: not a regular file")
        else:
            raise InputError(f"{raw}: no such file")
    return _without_copies(out)


#: bytes of a file's head and tail that tell copies apart before a whole file is compared
_PROBE = 1 << 20


def _probe(path: Path) -> tuple[int, bytes]:
    """A file's size and a hash of its head and tail: equal for copies, rarely otherwise."""
    size = path.stat().st_size
    digest = hashlib.blake2b(digest_size=16)
    with open(path, "rb") as f:
        digest.update(f.read(_PROBE))
        if size > 2 * _PROBE:
            f.seek(size - _PROBE)
        digest.update(f.read(_PROBE))
    return size, digest.digest()


def _whole(path: Path) -> bytes:
    digest = hashlib.blake2b(digest_size=32)
    with open(path, "rb") as f:
        while chunk := f.read(8 << 20):
            digest.update(chunk)
    return digest.digest()


def _without_copies(candidates: list[Candidate]) -> list[Candidate]:
    """`candidates`, each copy of an earlier file skipped: the same path named twice, or a file
    whose bytes are another's (an incident bundle collected twice). A member's log read twice
    would show each of its records twice, which no member printed (a member list "applied
    after itself"). Non-empty files are compared by size and a hash of their head and tail,
    then, when those agree, by a hash of the whole."""
    seen: dict[tuple[int, bytes], list[Candidate]] = {}
    out: list[Candidate] = []
    for c in candidates:
        if c.skipped is not None:
            out.append(c)
            continue
        try:
            key = _probe(c.path)
        except OSError:
            out.append(c)  # the scanner says what is wrong with it
            continue
        first = None
        if key[0] > 0:
            for earlier in seen.get(key, []):
                same = (earlier.path.resolve() == c.path.resolve()
                        or _whole(earlier.path) == _whole(c.path))
                if same:
                    first = earlier
                    break
        if first is None:
            seen.setdefault(key, []).append(c)
            out.append(c)
        else:
            out.append(dataclasses.replace(c, skipped=(
                f"the same bytes as {first.path}, read already (a member's log read twice "
                "would repeat its records)")))
    return out


def _walk(path: Path, raw: str) -> list[Candidate]:
    found = sorted(p for p in path.rglob("*") if p.is_file()
                   and not any(part.startswith(".") for part in p.relative_to(path).parts))
    if not found:
        raise InputError(f"{raw}: a directory with no files in it")
    return [_by_name(p) for p in found]


def _by_name(path: Path) -> Candidate:
    """A file of a directory or a glob: skipped when its name says it is not a log."""
    suffix = _suffix(path)
    kind = _KIND_OF_SUFFIX.get(suffix)
    if kind is None:
        return Candidate(path, explicit=False)
    return Candidate(path, explicit=False, skipped=f"{kind} by its name ({suffix}), not a log")


def _suffix(path: Path) -> str:
    """The suffix that says what a file holds: the last one, or the one before ``.gz``."""
    name = path.name.lower()
    if name.endswith(".gz"):
        name = name[:-3]
    return Path(name).suffix


_HAZELCAST_RELEASE = re.compile(rb"\[[^\]\s]+\]:\d{1,5} \[[^\]]*\] \[(\d+\.\d+(?:\.\d+)?)[^\]]*\] ")
_IGNITE_RELEASE = re.compile(rb"Apache Ignite ver\. (\d+\.\d+(?:\.\d+)?)")


def read_head(path: Path) -> tuple[bytes, bool]:
    """The first `WINDOW` bytes of `path`'s content, decompressed when it is gzip data, and
    whether it was. Raises OSError, EOFError or zlib.error as reading does."""
    with path.open("rb") as raw:
        compressed = raw.read(3) == GZIP_MAGIC
        raw.seek(0)
        if compressed:
            with gzip.open(raw) as unpacked:
                return _head(unpacked), True  # type: ignore[arg-type]
        return _head(raw), False


def printed_release(path: Path) -> tuple[str, str] | None:
    """The product and release a log prints in its first `WINDOW` bytes: Hazelcast's member
    prefix ``[host]:port [cluster] [3.12.2]`` (``LoggingServiceImpl``), Apache Ignite 3's start
    banner ``Apache Ignite ver. 3.1.0``; None when it prints neither or cannot be read."""
    try:
        head, _compressed = read_head(path)
    except (OSError, EOFError, zlib.error):
        return None
    if (m := _IGNITE_RELEASE.search(head)) is not None:
        return "ignite", m[1].decode()
    if (m := _HAZELCAST_RELEASE.search(head)) is not None:
        return "hazelcast", m[1].decode()
    return None


def sniff(path: Path, fmt: str = "auto", explicit: bool = True) -> Sniff:
    """Look at the head of `path`: the first `WINDOW` bytes of its content (decompressed when it
    is gzip data), NUL holes set aside. It is skipped when it cannot be read, when it is binary
    data (`binary`), and, unless `explicit`, when it is not a log by its content (``.json`` that
    is not JSON Lines; text in which no line looks like a log record). `fmt` ``auto`` picks
    ``jsonl`` for canonical event JSON Lines, ``ignite`` for an Ignite 3 log (`looks_ignite`),
    else ``log``."""
    try:
        head, compressed = read_head(path)
    except OSError as exc:  # unreadable, or gzip data that is not (BadGzipFile is an OSError)
        reason = exc.strerror or str(exc)
        return Sniff("log", False, f"cannot be read ({reason})")
    except (EOFError, zlib.error) as exc:
        return Sniff("log", True, f"cannot be read (gzip data cut short or corrupt: {exc})")
    what = binary(head)
    if what is not None:
        return Sniff("log", compressed, what)
    head = head.replace(b"\x00", b"")
    kind = fmt if fmt != "auto" else ("jsonl" if looks_like_events(head) else
                                      "ignite" if looks_ignite(head) else "log")
    if explicit or fmt != "auto":
        return Sniff(kind, compressed)
    if _suffix(path) == ".json" and not _json_lines(head):
        return Sniff(kind, compressed, "JSON, not JSON Lines (neither events nor a JSON log "
                                       "layout)")
    if kind == "log" and head and not looks_like_log(head):
        return Sniff(kind, compressed, f"text in which no line of its first {WINDOW >> 10} KB "
                                       "looks like a log record")
    return Sniff(kind, compressed)


def _head(f: IO[bytes]) -> bytes:
    """The first `WINDOW` bytes of `f` that are not in a NUL hole (reading on through holes;
    shorter NUL runs stay)."""
    out = bytearray()
    pending = b""  # a NUL run at the end of what was read, which the next read may lengthen
    while len(out) < WINDOW:
        chunk = f.read(WINDOW)
        if not chunk:
            out += pending  # a run shorter than a hole at the very end
            break
        data = pending + chunk
        stripped = data.rstrip(b"\x00")
        pending = data[len(stripped):]
        out += _HOLES.sub(b"", stripped)
    return bytes(out[:WINDOW])


def binary(head: bytes) -> str | None:
    """Why `head` (NUL holes set aside) is binary data, not text, or None: more than
    `BINARY_SHARE` of its bytes are control bytes, a run of NUL bytes counting as one."""
    if not head:
        return None
    controls = len(_CONTROL.findall(head)) + len(_NULS.findall(head))
    if controls <= BINARY_SHARE * len(head):
        return None
    return (f"binary data: {controls:,} of the first {len(head):,} bytes of its content are "
            "control bytes")


def looks_like_events(head: bytes) -> bool:
    """Whether a file is canonical event JSON Lines: its first non-blank line is the format's
    header (whatever version it names: reading it says whether that version is known) or a JSON
    object with a known event ``type`` and a ``member``."""
    obj = _first_json(head)
    return is_header(obj) or (isinstance(obj, dict) and obj.get("type") in EVENT_TYPES
                              and isinstance(obj.get("member"), str))


def _json_lines(head: bytes) -> bool:
    """Whether the first non-blank line of `head` is a JSON object (events, or a JSON log
    layout: one record per line)."""
    return isinstance(_first_json(head), dict)


def _first_json(head: bytes) -> object:
    for raw in head.splitlines():
        if not raw.strip():
            continue
        try:
            return json.loads(raw.decode("utf-8", "replace"))
        except ValueError:
            return None
    return None


def looks_ignite(head: bytes) -> bool:
    """Whether `head` is an Apache Ignite 3 log: a line of it is a record in one of Ignite's
    layouts (`partsafe.traces.ignite.record`: JavaLoggerFormatter's, or log4j2-test.xml's) and no
    line carries a Hazelcast member prefix."""
    found = False
    for raw in head.splitlines()[:2000]:
        text = layout.peel(raw.decode("utf-8", "replace")).text
        if layout.PREFIX.search(text):
            return False
        found = found or ignite.looks_like_ignite(text)
    return found


def looks_like_log(head: bytes) -> bool:
    """Whether a line of `head` looks like a log record: a docker or JSON layout
    (`layout.peel`), a record start (a date, a clock, a level, ...), a timestamp near its start,
    or a Hazelcast member prefix."""
    lines = head.splitlines()
    if len(head) == WINDOW and len(lines) > 1:
        lines.pop()  # cut by the window
    for raw in lines:
        if not raw.strip():
            continue
        p = layout.peel(raw.decode("utf-8", "replace"))
        if p.json or p.stream or p.order is not None:
            return True
        if layout.RECORD_START.match(p.text) or layout.PREFIX.search(p.text) \
                or layout.timestamp(p.text[:80]) is not None:
            return True
    return False


def nul_reason(count: int, longest: int) -> str:
    """The malformed entry of a line with `count` NUL bytes (its longest run `longest`)."""
    what = f"{count:,} NUL byte{'' if count == 1 else 's'}"
    if longest >= HOLE:
        what += " (what copytruncate log rotation leaves)"
    return f"{what}, skipped; the rest of the line is read"


def strip_nuls(line: bytes) -> tuple[bytes, str | None]:
    """A line without its NUL bytes, and its malformed entry's reason when it had any."""
    if b"\x00" not in line:
        return line, None
    runs = [len(m.group(0)) for m in _NULS.finditer(line)]
    return line.replace(b"\x00", b""), nul_reason(sum(runs), max(runs))


class NulSkipper:
    """A binary stream with its NUL bytes taken out (`read`), and where they were: `found` maps
    a line of the stream (1-based) to its NUL count and longest run, counted across reads."""

    def __init__(self, f: IO[bytes], count_lines: bool = True) -> None:
        self.f = f
        #: the line the next byte read belongs to
        self.line = 1
        #: whether `line` follows every read; if not, a read counts its lines only when it needs
        #: them (NUL bytes in it, or lines with NUL bytes not taken yet), and the caller, which
        #: counts them anyway, sets `line` before each read
        self.count_lines = count_lines
        #: bytes read from `f` (for progress)
        self.consumed = 0
        self.found: dict[int, tuple[int, int]] = {}
        self._run = 0  # the length of a NUL run that reached the end of the last read

    def read(self, n: int = -1) -> bytes:
        """Up to `n` bytes that are not NUL; empty only at the end of the stream."""
        while True:
            chunk = self.f.read(n)
            if not chunk:
                return chunk
            self.consumed += len(chunk)
            out = self._strip(chunk)
            if out:
                return out

    def _strip(self, chunk: bytes) -> bytes:
        if b"\x00" not in chunk:
            if self.count_lines or self.found:
                self.line += chunk.count(b"\n")
            self._run = 0
            return chunk
        at, run = 0, 0
        for m in _NULS.finditer(chunk):
            self.line += chunk.count(b"\n", at, m.start())
            at = m.end()
            run = len(m.group(0)) + (self._run if m.start() == 0 else 0)  # one run over reads
            count, longest = self.found.get(self.line, (0, 0))
            self.found[self.line] = (count + len(m.group(0)), max(longest, run))
        self._run = run if at == len(chunk) else 0
        self.line += chunk.count(b"\n", at)
        return chunk.replace(b"\x00", b"")

    def take(self, before: int | None) -> list[tuple[int, str]]:
        """The lines before line `before` (all, when None) that had NUL bytes, with their
        reasons; each line once."""
        done = sorted(n for n in self.found if before is None or n < before)
        return [(n, nul_reason(*self.found.pop(n))) for n in done]

    def close(self) -> None:
        self.f.close()

"""The log scanner: from files to events, with every line accounted for.

The per-line path is the hot one: production logs are gigabytes of lines that say nothing about
membership or partitions. So lines are never split one by one. The scanner reads a file in
blocks, runs one Aho-Corasick search (ahocorasick-rs) for the keywords of every message it models
(`partsafe.traces.payload.KEYWORDS`) over the raw bytes of a block, and touches only the lines
that contain one; the other lines are counted by ``bytes.count`` and are *ignored*. A line with a
keyword has its layout peeled (`partsafe.traces.layout`), its payload found after the member
prefix and parsed by the lark grammar (`partsafe.traces.payload`). Multi-line records are
assembled around it, within its own stream (a docker-compose service):

- a member list (``ClusterServiceImpl.printMemberList``): the prefix line whose message is
  empty, the blank lines, the ``Members`` header, one line per member, the closing bracket;
- a hard-wrapped message: the lines after it that do not start a record, joined back;
- stack traces are lines of their own and are ignored.

Accounting (docs/validation.md, "Accounting"): ``lines = parsed_lines + ignored_lines +
len(malformed)``. A line is *parsed* when it belongs to a record the grammar understood,
*malformed* when it belongs to one of our messages that does not parse (a member list cut off, a
member line with no header), *ignored* otherwise.

One file: the scanner's per-line path (sieve, layout, record joining, accounting) is the
parser's hot loop and is kept together on purpose.
"""

from __future__ import annotations

import dataclasses
import gzip
import json
import re
import sys
import zlib
from collections import deque
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

import ahocorasick_rs

from partsafe.traces import ignite, layout
from partsafe.traces.events import (
    UNKNOWN_MEMBER,
    Event,
    EventFormatError,
    MemberListInstalled,
    Quiescent,
    Source,
    UnknownVersion,
    check_header,
    from_dict,
    is_header,
)
from partsafe.traces.inputs import (
    InputError,
    NulSkipper,
    expand,
    sniff,
    strip_nuls,
)
from partsafe.traces.payload import (
    KEYWORDS,
    Origin,
    PayloadError,
    declared_size,
    parse_member_list,
    parse_payload,
)

__all__ = ["Accounting", "FileTally", "InputError", "Malformed", "Note", "Scanner", "expand"]

#: bytes read at a time; a record longer than SAFETY that straddles a block end is read whole
BLOCK = 8 << 20
#: a line longer than this is reported malformed and skipped
MAX_LINE = 16 << 20
#: how far back a member list's body looks for the prefix line it belongs to (lines)
LOOKBACK = 64
#: longest member list the scanner holds in memory (member lines; nothing in Hazelcast bounds a
#: cluster's size, its member list version is a Java int, so memory is the one limit: about 1 KB
#: a member while its list is parsed) and longest hard-wrapped message (continuation lines)
MAX_MEMBERS = 1_000_000
MAX_WRAP = 40
#: and a member list's lines, to report them when their header is missing
SCANNER_KEYWORDS = ("Members", "\tMember [", "  Member [")
#: which keyword a line has, and how many, does not matter (its first match finds the line):
#: leftmost-first matching finds the same lines, and lets the search skip ahead with a
#: prefilter (several times faster than reporting every match as the automaton meets it)
_MATCHER = ahocorasick_rs.BytesAhoCorasick(
    [k.encode() for k in dict.fromkeys((*KEYWORDS, *SCANNER_KEYWORDS))],
    matchkind=ahocorasick_rs.MATCHKIND_LEFTMOST_FIRST)
#: a stack trace line; it ends a member list or a hard-wrapped message like a new record does
STACK_PATTERN = r"\s*(?:at [\w$.<>/@\-]+\(|Caused by: |Suppressed: |\.\.\. \d+ (?:more|common))"
_STACK = re.compile(STACK_PATTERN, re.ASCII)
#: what stands for the lines between two islands of needed lines (`_LogFile.scan_islands`): a
#: line that starts a record, has no prefix and no keyword
ISLAND_BREAK = "0000-00-00 -"
_MEMBER_LINE = re.compile(r"\s+Member \[")
_SPLITS = re.compile(r"\]:? |: | - | \| ")
_CLOSING = frozenset({"]", "}"})
#: the master's message that prints its current member list again (``MembershipManager``, FINE)
_RESENT = "Sending member list to "
#: a member list's body in its usual shape, the lines after its header: indented member lines
#: (no ``|``, so no docker-compose prefix), then the closing bracket (group 2); what the
#: scanner's line loop reads of such lines, matched at once
_PLAIN_LIST = re.compile(rb"((?:[ \t]+Member[^\n|]*\n)*)[ \t]*([\]}])[ \t\r]*(?:\n|\Z)")


@dataclass(frozen=True, slots=True)
class Malformed:
    file: str
    line: int
    reason: str


@dataclass(frozen=True, slots=True)
class Note:
    """Something a reader should know that is not a violation (a member list whose stated size
    is not the number of members it lists, an empty file)."""

    file: str
    line: int
    member: str
    message: str


@dataclass
class FileTally:
    """One file's part of the accounting (or why it was skipped, unread)."""

    name: str
    lines: int = 0
    events: int = 0
    malformed: int = 0
    skipped: str | None = None
    #: events no member can be named for (judged by no spec)
    without_member: int = 0
    #: how the file was read (`partsafe.traces.inputs.Sniff`): ``jsonl`` (canonical events),
    #: ``ignite`` (an Apache Ignite 3 log) or ``log`` (a Hazelcast log)
    fmt: str = "log"
    #: the specs an event file's header says its events are complete for (None: every spec)
    declared: tuple[str, ...] | None = None
    #: the cluster's settings an event file's header gives (`partsafe.traces.events.CONFIG`)
    config: dict[str, Any] = field(default_factory=dict)


@dataclass
class Accounting:
    """The line accounting of one or more files; `files` has one tally per file scanned, in
    order."""

    lines: int = 0
    parsed_lines: int = 0
    malformed: list[Malformed] = field(default_factory=list)
    notes: list[Note] = field(default_factory=list)
    events: int = 0
    files: list[FileTally] = field(default_factory=list)

    @property
    def ignored_lines(self) -> int:
        return self.lines - self.parsed_lines - len(self.malformed)


# --- files ---------------------------------------------------------------------------------------


def _open(path: Path, compressed: bool) -> IO[bytes]:
    try:
        raw = path.open("rb")
    except OSError as exc:
        raise InputError(f"{path}: cannot be read ({exc.strerror or exc})") from None
    return gzip.open(raw) if compressed else raw  # type: ignore[return-value]


# --- the scanner ---------------------------------------------------------------------------------


class Scanner:
    """Scan files into events; `accounting` adds up across files.

    `fmt` is ``auto`` (canonical event JSON Lines when the first record is one, an Ignite 3 log
    when its lines are in Ignite's layouts, else a Hazelcast log in any layout), ``log``,
    ``ignite`` or ``jsonl``.
    """

    def __init__(self, fmt: str = "auto",
                 progress: Callable[[int], None] | None = None) -> None:
        if fmt not in ("auto", "log", "ignite", "jsonl"):
            raise ValueError(f"unknown format {fmt!r}")
        self.fmt = fmt
        self.accounting = Accounting()
        self._progress = progress
        #: per event file, the specs its header declares its events complete for, and the
        #: cluster's settings it gives
        self.declared: dict[str, tuple[str, ...]] = {}
        self.configs: dict[str, dict[str, Any]] = {}

    def scan(self, path: Path, name: str | None = None, explicit: bool = True
             ) -> Iterator[Event]:
        """The events of one file, in file order; `name` is how reports call the file. A file
        `partsafe.traces.inputs.sniff` skips (binary data; unless `explicit`, text that is not a
        log) gives none, and its tally says why."""
        shown = name or str(path)
        acc = self.accounting
        tally = FileTally(shown)
        acc.files.append(tally)
        head = sniff(path, self.fmt, explicit)
        tally.fmt = head.fmt
        if head.skipped:
            tally.skipped = head.skipped
            return
        lines, events, malformed = acc.lines, acc.events, len(acc.malformed)
        with _open(path, head.compressed) as f:
            try:
                found = (self._scan_events(enumerate(f, start=1), shown) if head.fmt == "jsonl"
                         else self._scan_ignite(f, shown) if head.fmt == "ignite"
                         else _LogFile(self, shown).scan(f))
                for ev in found:
                    if ev.member == UNKNOWN_MEMBER and not isinstance(ev, Quiescent):
                        tally.without_member += 1
                    yield ev
            except (OSError, EOFError, zlib.error) as exc:
                raise InputError(f"{path}: cannot be read ({exc})") from None
        tally.declared = self.declared.get(shown)
        tally.config = self.configs.get(shown, {})
        tally.lines = acc.lines - lines
        tally.events = acc.events - events
        tally.malformed = len(acc.malformed) - malformed

    def _scan_events(self, f: Iterable[tuple[int, bytes]], name: str) -> Iterator[Event]:
        acc = self.accounting
        for number, raw in f:
            acc.lines += 1
            data, nuls = strip_nuls(raw)
            if nuls:  # the line is malformed; what follows the NUL bytes is read all the same
                acc.malformed.append(Malformed(name, number, nuls))
            text = data.decode("utf-8", "replace").rstrip("\r\n")
            if not text.strip():
                continue
            try:
                obj = json.loads(text)
                if is_header(obj):  # the format's header: its version must be one we read
                    check_header(obj, f"{name}:{number}")
                    if obj.get("specs") is not None:
                        self.declared[name] = tuple(obj["specs"])
                    if obj.get("config"):
                        self.configs[name] = dict(obj["config"])
                    acc.parsed_lines += 0 if nuls else 1
                    continue
                ev = from_dict(obj, f"{name}:{number}")
                if ev.source is None:  # where the event is: this file and line
                    ev = dataclasses.replace(ev, source=Source(name, number))
            except UnknownVersion as exc:
                raise InputError(str(exc)) from None
            except EventFormatError as exc:
                if not nuls:
                    acc.malformed.append(Malformed(name, number, exc.reason))
                continue
            except ValueError as exc:
                if not nuls:
                    acc.malformed.append(Malformed(name, number, f"not JSON ({exc})"))
                continue
            acc.parsed_lines += 0 if nuls else 1
            acc.events += 1
            yield ev


    def _scan_ignite(self, f: IO[bytes], name: str) -> Iterator[Event]:
        """An Ignite 3 log (`partsafe.traces.ignite`): one record a line, the lines with a
        keyword read, NUL bytes reported as for any log."""
        reader = NulSkipper(f)
        log = ignite.IgniteFile(name, reader.found)
        yield from log.scan(reader)
        log.finish(reader.take(None))
        self._account(log, whole=True)
        if self._progress:
            self._progress(reader.consumed)

    def _account(self, log: ignite.IgniteFile, whole: bool) -> None:
        """Add an Ignite file's tally to the accounting (its lines too when it was read
        `whole`)."""
        acc, tally = self.accounting, log.tally
        acc.lines += tally.lines
        acc.parsed_lines += tally.parsed
        acc.events += tally.events
        acc.malformed.extend(Malformed(log.name, n, reason) for n, reason in tally.malformed)
        if whole and tally.lines == 0:
            acc.notes.append(Note(log.name, 0, "", "empty file"))

    def scan_needed(self, name: str, lines: Iterable[tuple[int, bytes]],
                    fmt: str = "log") -> Iterator[Event]:
        """The events of one file from the lines it needs (`partsafe.traces.sieve`; all of them
        for event JSON Lines), each its number and its bytes without the newline, in order: what
        `scan` gives for the whole file, except the line count, which the caller knows. Runs of
        consecutive lines are scanned as blocks; ISLAND_BREAK stands for the lines between
        them."""
        if fmt == "jsonl":
            yield from self._scan_events(lines, name)
            return
        if fmt == "ignite":
            found = ignite.IgniteFile(name)
            yield from found.scan_lines(lines)
            self._account(found, whole=False)
            return
        log = _LogFile(self, name)
        for first, data in _islands(log.without_nuls(lines)):
            log.context.clear()
            if first > 1:
                log.context.append((first - 1, ISLAND_BREAK))
            log._block(data, first - 1, final=True, limit=len(data))
            yield from log._flush()
        log.finish()


def _islands(lines: Iterable[tuple[int, bytes]]) -> Iterator[tuple[int, bytes]]:
    """Runs of consecutive lines: the first one's number and the run's bytes."""
    first, last = 0, 0
    run: list[bytes] = []
    for number, data in lines:
        if run and number != last + 1:
            yield first, b"\n".join(run) + b"\n"
            run = []
        if not run:
            first = number
        run.append(data)
        last = number
    if run:
        yield first, b"\n".join(run) + b"\n"


class _LogFile:
    """One log file being scanned (the state the block loop carries)."""

    def __init__(self, scanner: Scanner, name: str) -> None:
        self.acc = scanner.accounting
        self.progress = scanner._progress
        self.name = name
        #: line numbers already parsed or reported (records reach forwards and backwards)
        self.done: set[int] = set()
        #: the last lines before the current block, for look-backs: (number, text)
        self.context: deque[tuple[int, str]] = deque(maxlen=LOOKBACK)
        #: the last member seen in each stream (a line without a prefix belongs to it)
        self.stream_member: dict[str, str] = {}
        self.out: list[Event] = []
        self.block, self.end, self.final = b"", 0, False
        #: the offset in the block up to which a record has read every line (a member list)
        self.resume = 0
        #: an offset at a line start in the block and that line's number, as the block's loop
        #: left them (the lines before it are counted)
        self.counted = (0, 1)
        #: the line being handled: its layout's timestamp, its header, its offset
        self._header: tuple[int | None, str, int] = (None, "", 0)
        #: lines that had NUL bytes: where their malformed entry is in the accounting
        self.nul_at: dict[int, int] = {}
        #: where this file's malformed entries start in the accounting
        self.first_malformed = len(self.acc.malformed)

    # -- blocks

    def scan(self, f: IO[bytes]) -> Iterator[Event]:
        reader = NulSkipper(f, count_lines=False)  # this loop counts the lines
        carry = b""
        first = self.acc.lines  # lines of earlier files
        number = 0  # lines of this file before the current block
        consumed = 0
        while True:
            reader.line = number + carry.count(b"\n") + 1  # the line the next byte read is on
            chunk = reader.read(BLOCK)
            # the lines read to their end that had NUL bytes (every line at the end of the file)
            last_nul = self._nuls(reader.take(None if not chunk else reader.line))
            data = carry + chunk if carry else chunk
            if not chunk:  # the last block: a last line without a newline is a line too
                if data:
                    self._block(data, number, final=True, limit=len(data))
                    number += data.count(b"\n") + (0 if data.endswith(b"\n") else 1)
                number = max(number, last_nul)  # a last line of NUL bytes only
                break
            cut = data.rfind(b"\n") + 1
            if cut == 0:
                carry = data
                if len(data) > MAX_LINE:
                    number += 1
                    self._malformed(number, f"a line longer than {MAX_LINE >> 20} MB")
                    carry = _skip_line(reader)
                continue
            end = self._block(data, number, final=False, limit=cut)
            at, at_line = self.counted  # the lines before `at` were counted by the block's loop
            lines = at_line - 1 - number + data.count(b"\n", at, end)
            self._remember(data, end, number + lines)
            number += lines
            carry = data[end:]
            yield from self._flush()
            if self.progress:
                self.progress(reader.consumed - consumed)
                consumed = reader.consumed
        yield from self._flush()
        self.finish()
        self.acc.lines = first + number
        if number == 0:
            self.acc.notes.append(Note(self.name, 0, "", "empty file"))

    def finish(self) -> None:
        """Put this file's malformed entries in line order (a line with NUL bytes is reported
        when it is read, before the lines of its block are handled)."""
        tail = self.acc.malformed[self.first_malformed:]
        tail.sort(key=lambda m: m.line)
        self.acc.malformed[self.first_malformed:] = tail
        self.nul_at.clear()

    def without_nuls(self, lines: Iterable[tuple[int, bytes]]
                     ) -> Iterator[tuple[int, bytes]]:
        """`lines` (number, bytes) without their NUL bytes, each line that had some reported
        (what `scan` does with a whole file, for `Scanner.scan_needed`)."""
        for number, data in lines:
            clean, reason = strip_nuls(data)
            if reason is not None:
                self._nuls([(number, reason)])
            yield number, clean

    def _nuls(self, found: list[tuple[int, str]]) -> int:
        """Report the lines that had NUL bytes as malformed, before their text is read (a
        record the text belongs to is still parsed; the line stays malformed). The last one."""
        for number, reason in found:
            self.nul_at[number] = len(self.acc.malformed)
            self.acc.malformed.append(Malformed(self.name, number, reason))
        return max((n for n, _ in found), default=0)

    def _flush(self) -> Iterator[Event]:
        out, self.out = self.out, []
        self.acc.events += len(out)
        return iter(out)

    def _remember(self, data: bytes, end: int, upto: int) -> None:
        """Keep the last lines before `end` (line `upto` is the last of them) for the next
        block's look-backs."""
        start = end
        for _ in range(LOOKBACK):
            if start <= 0:
                break
            start = data.rfind(b"\n", 0, start - 1) + 1
        lines = data[start:end].split(b"\n")[:-1]
        base = upto - len(lines)
        for i, raw in enumerate(lines):
            self.context.append((base + i + 1, _decode(raw)))

    def _block(self, block: bytes, before: int, *, final: bool, limit: int) -> int:
        """Scan `block` up to offset `limit`, a line start (its first line is line
        ``before + 1``). Returns the offset up to which every line is accounted; a record running
        past a non-final block's end stops it early."""
        self.block = block
        self.end = limit
        self.final = final
        at, at_line = 0, before + 1  # an offset at a line start, and that line's number
        last_start = -1
        self.resume = 0
        for _kw, start, _end in _MATCHER.find_matches_as_indexes(block):
            if start >= limit:
                break
            if start < self.resume:  # in the lines a record just read
                continue
            ls = block.rfind(b"\n", 0, start) + 1
            if ls == last_start:
                continue
            last_start = ls
            at_line += block.count(b"\n", at, ls)
            at = ls
            if at_line in self.done:
                continue
            le = block.find(b"\n", start, limit)
            if le < 0:
                le = limit
            if not self._line(ls, le, at_line):
                self.counted = (at, at_line)
                return ls  # needs the next block: start it at this line
        self.counted = (at, at_line)
        if len(self.done) > 4 * LOOKBACK:
            self.done = {n for n in self.done if n >= at_line - LOOKBACK}
        if len(self.nul_at) > 4 * LOOKBACK:
            self.nul_at = {n: i for n, i in self.nul_at.items() if n >= at_line - LOOKBACK}
        return limit

    # -- lines

    def _line(self, ls: int, le: int, number: int) -> bool:
        """Handle the line at [ls, le) with a keyword; False when its record needs more data."""
        p = layout.peel(_decode(self.block[ls:le]))
        text = p.text
        m = layout.PREFIX.search(text)
        if m is not None:
            member = sys.intern(layout.address(m)) \
                or self.stream_member.get(p.stream, UNKNOWN_MEMBER)
            if member:
                self.stream_member[p.stream] = member
            payload = text[m.end():]
            self._header = (p.order, text[:m.start()], ls)  # the timestamp, found when needed
            if p.json and "\n" in payload:
                return self._message(payload.strip("\n"), member, number, le, p.stream)
            if not payload.strip():
                return True  # a member list's head: its body is found from the header line
            if payload.startswith("Members"):
                return self._member_list(payload, [number], le, p.stream, member,
                                         self._when())
            return self._message(payload, member, number, le, p.stream)
        self._header = (p.order, "", ls)
        if text.lstrip().startswith("Members"):
            head = self._head(ls, number, p.stream)
            member, order = self.stream_member.get(p.stream, UNKNOWN_MEMBER), p.order
            numbers = [number]
            resent = False
            if head is not None:
                numbers[:0] = head[0]
                member = head[1] or member
                order = head[2] if head[2] is not None else order
                resent = head[3]
            return self._member_list(text, numbers, le, p.stream, member, order, resent)
        if _STACK.match(text):
            return True
        if _MEMBER_LINE.match(text):
            self._malformed(number, "a member line with no `Members` header before it "
                                    "(a member list whose header is missing)")
            return True
        self._no_prefix(text, p, number)
        return True

    def _when(self) -> int | None:
        """The timestamp of the line being handled: its header's, or (java.util.logging's second
        line) the line before's."""
        order, header, ls = self._header
        return order if order is not None else self._order(header, ls)

    def _message(self, payload: str, member: str, number: int, le: int, stream: str) -> bool:
        origin = Origin(member, self.name, number, None, self._header[1])
        try:
            events = parse_payload(payload, origin)
        except PayloadError as exc:
            wrapped = self._unwrap(payload, origin, le, stream)
            if wrapped is None:
                if not self.final and self._near_end(le):
                    return False
                self._malformed(number, exc.reason)
            return True
        if events is not None:
            self._parsed((number,), events)
            if payload.startswith("Members"):
                self._check_size(payload, events, number)
        elif self._continued(le, stream):  # cut by a hard wrap before its wording was complete?
            self._unwrap(payload, origin, le, stream)
        return True

    def _continued(self, le: int, stream: str) -> bool:
        """Whether the next line of `stream` after offset `le` continues a record (not blank, not
        a new record, not a stack trace), its layout peeled off (a docker timestamp, a JSON
        layout's message field), the lines of other streams passed over."""
        pos = le + 1
        for _ in range(MAX_WRAP):
            if pos >= self.end:
                return False
            end = self.block.find(b"\n", pos, self.end)
            end = self.end if end < 0 else end
            q = layout.peel(_decode(self.block[pos:end]))
            pos = end + 1
            if q.stream != stream:
                continue
            nxt = q.text
            return bool(nxt.strip()) and not layout.RECORD_START.match(nxt) \
                and not _STACK.match(nxt) and not nxt.startswith(("java.", "com.", "org."))
        return False

    def _unwrap(self, payload: str, origin: Origin, le: int, stream: str) -> bool | None:
        """A message hard-wrapped over the next lines of its stream, their layout peeled off:
        join them back (without and with a space at each break, the rests as they are or
        without their indentation); True when that parses."""
        parts: list[str] = []
        numbers: list[int] = []
        pos, n = le + 1, origin.line
        while len(parts) < MAX_WRAP and pos < self.end:
            end = self.block.find(b"\n", pos, self.end)
            end = self.end if end < 0 else end
            n += 1
            q = layout.peel(_decode(self.block[pos:end]))
            pos = end + 1
            if q.stream != stream:
                continue
            if not q.text.strip() or layout.RECORD_START.match(q.text) or n in self.done \
                    or _STACK.match(q.text):
                break
            parts.append(q.text)
            numbers.append(n)
            joined = (payload + "".join(parts), payload + " " + " ".join(parts),
                      payload + " " + " ".join(x.strip() for x in parts))  # indented rests
            for text in dict.fromkeys(joined):
                try:
                    events = parse_payload(text, origin)
                except PayloadError:
                    continue
                if events is not None:
                    self._parsed((origin.line, *numbers), events)
                    return True
        return None

    def _no_prefix(self, text: str, p: layout.Peeled, number: int) -> None:
        """A line without the member prefix (``logging.details`` off, a bare message): try the
        message after each usual header separator."""
        starts = [0, *(m.end() for m in _SPLITS.finditer(text, 0, 240))]
        member = self.stream_member.get(p.stream, UNKNOWN_MEMBER)
        origin = Origin(member, self.name, number, p.order)
        for start in starts:
            try:
                events = parse_payload(text[start:], origin)
            except PayloadError:
                continue
            if events is not None:
                self._parsed((number,), events)
                return

    # -- member lists

    def _member_list(self, header: str, numbers: list[int], le: int, stream: str, member: str,
                     order: int | None, resent: bool = False) -> bool:
        """A member list from its ``Members`` header line (`numbers` holds the lines before it
        that belong to it: the prefix line and blank lines): the lines after it up to the closing
        bracket are the members (``ClusterServiceImpl.printMemberList``: one
        ``\tMember [host]:port - uuid[ this][ lite]`` line each). A list `resent` is the one
        the master sends again (``MembershipManager``'s FINE ``Sending member list to …``): its
        lines are parsed and give no event, since no member installs anything there."""
        number = numbers[-1]
        lines = [header.strip()]
        pos, n = le + 1, number
        if not stream:  # the usual shape, read at once: what the loop below reads of it
            body = self._plain_list(pos)
            if body is not None and self.block.count(b"\n", pos, body[0]) <= MAX_MEMBERS:
                raw = self.block[pos:body[0]]  # the member lines, each with its newline
                self.resume = body[2]
                if raw.isascii() and b" \n" not in raw and b"\t\n" not in raw \
                        and b"\r" not in raw:  # its lines as they are: the record in bytes
                    numbers += range(n + 1, n + raw.count(b"\n") + 2)
                    record = b"".join((lines[0].encode(), b"\n", raw, body[1].encode()))
                    return self._list_record(header, record, numbers, member, order,
                                             resent=resent)
                rows = [row.rstrip() for row in raw.decode("utf-8", "replace").split("\n")]
                lines += rows[:-1]
                lines.append(body[1])
                numbers += range(n + 1, n + len(rows) + 1)
                return self._list_record(header, "\n".join(lines), numbers, member, order,
                                         resent=resent)
        closed = False
        members = 0  # member lines; beyond MAX_MEMBERS they are counted, not kept
        while pos < self.end:
            end = self.block.find(b"\n", pos, self.end)
            end = self.end if end < 0 else end
            n += 1
            q = layout.peel(_decode(self.block[pos:end]))
            pos = end + 1
            if q.stream != stream:
                continue
            stripped = q.text.strip()
            if stripped in _CLOSING:
                lines.append(stripped)
                numbers.append(n)
                closed = True
                break
            if (layout.RECORD_START.match(q.text) and not q.text[:1].isspace()) \
                    or _STACK.match(q.text):
                break
            if stripped.startswith("Member") or len(lines) == 1 or not stripped:
                if stripped:
                    members += 1
                    if members <= MAX_MEMBERS:
                        lines.append(q.text.rstrip())
                numbers.append(n)
            else:  # a hard-wrapped member line: its rest
                if members <= MAX_MEMBERS:
                    lines[-1] += stripped
                numbers.append(n)
        if not closed and not self.final and pos >= self.end:
            return False
        if members > MAX_MEMBERS:
            self._too_long(header, numbers, members, closed)
            return True
        return self._list_record(header, "\n".join(lines), numbers, member, order, closed,
                                 resent)

    def _plain_list(self, pos: int) -> tuple[int, str, int] | None:
        """`_PLAIN_LIST` at `pos` (a member list's body: the end of its member lines, its
        closing bracket, the end of its closing line), or None. The commonest shape, tabbed
        member lines and a bare ``]``, is told by counting (no byte is matched twice)."""
        block = self.block
        close = block.find(b"\n]\n", pos - 1, self.end)
        if close >= pos - 1:
            body = block[pos:close + 1]  # the member lines, each with its newline
            if b"|" not in body and body.count(b"\n") \
                    == body.startswith(b"\tMember ") + body.count(b"\n\tMember "):
                return close + 1, "]", close + 3
        plain = _PLAIN_LIST.match(block, pos, self.end)
        if plain is None:
            return None
        return plain.end(1), plain.group(2).decode(), plain.end()

    def _list_record(self, header: str, record: str | bytes, numbers: list[int], member: str,
                     order: int | None, closed: bool = True, resent: bool = False) -> bool:
        """Parse a member list's `record`, its lines joined (the header's, the members', the
        closing bracket's when `closed`; in bytes: stripped UTF-8, `parse_member_list`), which
        are the lines `numbers`."""
        origin = Origin(member, self.name, numbers[0], order)
        try:
            events = (parse_member_list(record, origin) if isinstance(record, bytes)
                      else parse_payload(record, origin))
            if not closed:
                raise PayloadError("a member list cut off before its closing bracket")
        except PayloadError as exc:
            for k in numbers:
                self._malformed(k, exc.reason)
            return True
        if events is None:
            return True
        if resent:
            events = []
        self._parsed(numbers, events)
        self._check_size(header.strip(), events, numbers[0])
        return True

    def _too_long(self, header: str, numbers: list[int], members: int, closed: bool) -> None:
        """A member list longer than the scanner holds: one malformed line (where the list
        starts) that says so, with the size the list states; its other lines are read and not
        judged (ignored)."""
        stated = declared_size(header)
        states = "" if stated is None else f", stating size {stated:,}"
        cut = "" if closed else ", cut off before its closing bracket"
        self._malformed(numbers[0], (
            f"a member list of {members:,} member lines{states}{cut}: longer than the "
            f"{MAX_MEMBERS:,} members the scanner holds in memory; not judged"))
        self.done.update(numbers)

    def _check_size(self, header: str, events: list[Event], number: int) -> None:
        """A note when a member list's `header` states another size than the members it
        lists."""
        stated = declared_size(header)
        for ev in events:
            if isinstance(ev, MemberListInstalled) and stated is not None \
                    and stated != len(ev.members):
                self.acc.notes.append(Note(
                    self.name, number, ev.member,
                    f"member list version {ev.version} states size {stated} but lists "
                    f"{len(ev.members)} members (the listed members are used)"))

    def _head(self, ls: int, number: int, stream: str
              ) -> tuple[list[int], str, int | None, bool] | None:
        """The prefix line a member list belongs to and the blank lines after it: their numbers,
        the member, the timestamp, and whether the prefix line is the master's ``Sending member
        list to the non-master nodes:`` (or ``to member: [h]:p``), which prints its current
        list again (`_member_list`'s `resent`)."""
        blanks: list[int] = []
        if not stream:  # the blank lines before the header, told on their bytes
            while len(blanks) < LOOKBACK and number - 1 not in self.done:
                start = self.block.rfind(b"\n", 0, ls - 1) + 1  # of the line before
                if ls < 2 or self.block[start:ls - 1] not in (b"", b"\r"):
                    break
                ls, number = start, number - 1
                blanks.append(number)
        before = self._before(ls, number, LOOKBACK - len(blanks) + 1)
        for n, text in before:
            q = layout.peel(text)
            if q.stream != stream:
                continue
            if n in self.done and _RESENT not in q.text:  # (the resending line is parsed)
                continue
            if not q.text.strip():
                blanks.append(n)
                continue
            m = layout.PREFIX.search(q.text)
            if m is None:
                return None
            rest = q.text[m.end():].strip()
            resent = rest.startswith(_RESENT)
            if rest and not resent:
                return None
            member = sys.intern(layout.address(m)) \
                or self.stream_member.get(stream, UNKNOWN_MEMBER)
            order = q.order if q.order is not None else layout.timestamp(q.text[:m.start()])
            if order is None and not stream:
                # java.util.logging's two-line record: the time is on the line before
                # (``Dec 02, 2026 12:05:57 AM com.hazelcast.internal.cluster.ClusterService``)
                head = next(before, None)
                if head is not None and layout.JUL_HEAD.match(head[1]):
                    order = layout.timestamp(head[1][:80])
            return [n, *reversed(blanks)], member, order, resent
        return None

    def _before(self, ls: int, number: int, most: int = LOOKBACK
                ) -> Iterator[tuple[int, str]]:
        """The lines before offset `ls` (line `number`), nearest first, up to `most` (from the
        context of the previous block when this one starts)."""
        end = ls - 1
        seen = 0
        while end >= 0 and seen < most:
            start = self.block.rfind(b"\n", 0, end) + 1
            number -= 1
            seen += 1
            yield number, _decode(self.block[start:end])
            end = start - 1
        if seen < most:
            yield from reversed(list(self.context)[-(most - seen):])

    def _order(self, header: str, ls: int) -> int | None:
        """A header's timestamp, or (java.util.logging's second line) the line before's, when
        that is a java.util.logging record's first line."""
        when = layout.timestamp(header) if header else None
        if when is None and ls > 0:
            prev = self.block.rfind(b"\n", 0, ls - 1) + 1
            line = layout.peel(_decode(self.block[prev:ls - 1])).text
            if layout.JUL_HEAD.match(line):
                when = layout.timestamp(line[:80])
        return when

    def _near_end(self, le: int) -> bool:
        return self.end - le < 64 * 1024

    # -- accounting

    def _parsed(self, numbers: tuple[int, ...] | list[int], events: list[Event]) -> None:
        if not self.nul_at and self.done.isdisjoint(numbers):  # lines not yet accounted
            self.done.update(numbers)
            self.acc.parsed_lines += len(numbers)  # a record's lines are distinct
        else:
            for n in numbers:
                if n not in self.done:
                    self.done.add(n)
                    if n not in self.nul_at:  # else malformed already
                        self.acc.parsed_lines += 1
        if events and events[0].order is None:
            when = self._when()
            if when is not None:
                for e in events:  # made from this record just now: no one else holds them
                    object.__setattr__(e, "order", when)
        self.out.extend(events)

    def _malformed(self, number: int, reason: str) -> None:
        if number in self.done:
            return
        self.done.add(number)
        at = self.nul_at.get(number)
        if at is not None:  # one entry a line: the NUL bytes' and this reason
            m = self.acc.malformed[at]
            self.acc.malformed[at] = Malformed(m.file, m.line, f"{m.reason}; {reason}")
            return
        self.acc.malformed.append(Malformed(self.name, number, reason))


def _skip_line(f: NulSkipper) -> bytes:
    """Read past the end of the current line; what follows it."""
    while True:
        chunk = f.read(BLOCK)
        if not chunk:
            return b""
        nl = chunk.find(b"\n")
        if nl >= 0:
            return chunk[nl + 1:]


def _decode(raw: bytes) -> str:
    if raw.endswith(b"\r"):
        raw = raw[:-1]
    return raw.decode("utf-8", "replace")

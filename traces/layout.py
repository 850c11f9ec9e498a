"""Layouts: where a Hazelcast message sits in a log line, whatever wrote the line.

Every Hazelcast member message carries the prefix ``[host]:port [cluster-name] [version] ``
(Hazelcast's ``LoggingServiceImpl``, with ``hazelcast.logging.details.enabled``, the default;
docs/validation.md, "Layouts"), and whatever the logging framework put
before it (log4j and log4j2 patterns, the distribution's ``[%5p] [%t] [%c]:``, Spring Boot's
console line, java.util.logging's two-line records in any locale, test-harness layouts) is the
layout's header. So the prefix anchors the message in every layout at once; what stays
layout-specific is peeled off first and is the same for all of them:

- a docker-compose service prefix ``name  | `` (several members in one file),
- a docker timestamp before everything (``docker logs --timestamps``),
- JSON per line (logstash, ECS, docker's json-file driver): the message is a field.

A header's timestamp, when it has one, becomes the event's order key (milliseconds; only used to
merge the members' streams, never to judge anything).
"""

from __future__ import annotations

import functools
import json
import re
from dataclasses import dataclass
from datetime import UTC, datetime

#: the member prefix ``LoggingServiceImpl`` writes; ``[LOCAL]`` before the member's address is
#: known
PREFIX_PATTERN = (
    r"\[(?P<host>[^\]\s]+)\]:(?P<port>\d{1,5}|<[^>\s]{1,32}>) \[(?P<cluster>[^\]]*)\] "
    r"\[(?P<version>[^\]\s]+)\] ?"
    r"|\[LOCAL\] \[[^\]]*\] \[[^\]\s]+\] ?")
PREFIX = re.compile(PREFIX_PATTERN, re.ASCII)
#: docker-compose's ``service-1  | `` (v2) or ``service_1  | `` (v1)
COMPOSE_PATTERN = r"(?P<service>[A-Za-z0-9][\w.\-]{0,62}?)\s*\| "
COMPOSE = re.compile(COMPOSE_PATTERN, re.ASCII)
#: ``docker logs --timestamps``: RFC 3339 with nanoseconds, before everything else
DOCKER_TS_PATTERN = r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.\d+)?(?:Z|[+-]\d\d:?\d\d) "
DOCKER_TS = re.compile(DOCKER_TS_PATTERN, re.ASCII)
#: the message fields of the usual JSON layouts (ECS, logstash, docker json-file, log4j2 JSON)
JSON_MESSAGE_KEYS = ("message", "msg", "@message", "log", "full_message", "short_message")
JSON_TIME_KEYS = ("@timestamp", "timestamp", "time", "ts", "timeMillis", "instant")

_ISO = re.compile(r"(\d{4})-(\d\d)-(\d\d)[ T](\d\d):(\d\d):(\d\d)(?:[.,](\d{1,9}))?")
_DMY = re.compile(r"(\d\d?)[./](\d\d?)[./](\d{4}),? (\d\d?):(\d\d):(\d\d)(?:[.,](\d{1,3}))?")
_JUL = re.compile(r"([A-Z][a-z]{2})[a-z]*\.? (\d\d?), (\d{4}),? (\d\d?):(\d\d):(\d\d)"
                  r"(?:[.,](\d{1,3}))? ?([AP]M)?")
_CLOCK = re.compile(r"(\d\d):(\d\d):(\d\d)[.,](\d{3})")
_MONTHS = {m: i for i, m in enumerate(
    ("Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"), 1)}
#: how a new record starts in the common layouts: a date (year first, or a day and month then a
#: year and a blank) or a clock, a level, a JSON object (``{"``), a JUL level line (``INFO: ``,
#: also localised words ending in a colon); anything else that follows a record and is not
#: indented member-list text is a hard-wrapped continuation, also the rest of an address
#: (``10.0.0.2]:5701``) or of a Java object (``{version=5, ...``) that a wrap put first
RECORD_START_PATTERN = (
    r"\s{0,4}(?:\d{4}[-/.]\d\d?[-/.]\d|\d\d?[-/.]\d\d?[-/.]\d{2,4}[ ,T]|\d\d:\d\d:\d\d"
    r"|[A-Z][a-z]{2}[a-z]*\.? \d\d?, \d{4}|\{\s*(?:\"|\}|$)"
    r"|\[?(?:TRACE|DEBUG|INFO|WARN|WARNING|ERROR|SEVERE|FINE|FINER|FINEST|FATAL)\b"
    r"|<date>|[A-Z][A-Za-zÀ-ÿ]{2,15}: \[)")
RECORD_START = re.compile(RECORD_START_PATTERN, re.ASCII)
#: the first line of a java.util.logging record (``SimpleFormatter``'s default, any locale): a
#: date and a time, then the source, a class name and a method; the second line, ``LEVEL:
#: message``, takes its timestamp from it
JUL_HEAD_PATTERN = (
    r"\S[^\[\]{}|]{0,40}?\d:\d\d(?::\d\d)?(?:[.,]\d+)?(?: [^\s\[\]]{1,8}){0,2}"
    r" [A-Za-z_$][\w$]*(?:\.[\w$]+)+(?: [\w$<>]+)?\s*$")
JUL_HEAD = re.compile(JUL_HEAD_PATTERN, re.ASCII)


@dataclass(slots=True)
class Peeled:
    """A line with its layout taken apart: the `stream` it belongs to (a docker-compose service,
    or ``""``), the `text` after the docker prefixes (a JSON layout's message field), and the
    header's timestamp in milliseconds, when there is one."""

    stream: str
    text: str
    order: int | None
    json: bool = False


def peel(line: str) -> Peeled:
    """Take off what docker and JSON layouts wrap around a line."""
    stream = ""
    order = None
    text = line
    m = DOCKER_TS.match(text)
    if m:
        order = timestamp(m.group(0))
        text = text[m.end():]
    bar = text.find("| ", 0, 72)
    if bar > 0:
        c = COMPOSE.match(text)
        if c:
            stream = c.group("service")
            text = text[c.end():]
            m = DOCKER_TS.match(text)
            if m:
                order = timestamp(m.group(0))
                text = text[m.end():]
    if text[:1] == "{":
        peeled = _peel_json(text, stream, order)
        if peeled is not None:
            return peeled
    return Peeled(stream, text, order)


def _peel_json(text: str, stream: str, order: int | None) -> Peeled | None:
    try:
        obj = json.loads(text)
    except ValueError:
        return None
    if not isinstance(obj, dict):
        return None
    message = next((obj[k] for k in JSON_MESSAGE_KEYS if isinstance(obj.get(k), str)), None)
    if message is None:
        return None
    when = next((obj[k] for k in JSON_TIME_KEYS if k in obj), None)
    if isinstance(when, int | float):
        order = int(when if when > 1e11 else when * 1000)
    elif isinstance(when, str):
        order = timestamp(when) or order
    elif isinstance(when, dict) and isinstance(when.get("epochSecond"), int):
        order = when["epochSecond"] * 1000 + int(when.get("nanoOfSecond", 0)) // 1_000_000
    if message.endswith("\n"):  # docker json-file keeps the line's newline
        message = message[:-1]
    inner = peel(message) if not stream and (message[:1] == "{" or "| " in message[:72]) \
        else None
    if inner is not None and inner.stream:
        return Peeled(inner.stream, inner.text, inner.order or order, True)
    return Peeled(stream, message, order, True)


def timestamp(text: str) -> int | None:
    """The first date-time in `text` in milliseconds (UTC assumed; a clock alone counts from
    midnight), or None."""
    m = _ISO.search(text)
    if m:
        y, mo, d, h, mi, s, frac = m.groups()
        day = _day_seconds(y, mo, d)
        hours, minutes, seconds = int(h), int(mi), int(s)
        if day is None or hours > 23 or minutes > 59 or seconds > 59:  # what datetime refuses
            return None
        millis = int(frac[:3].ljust(3, "0")) if frac else 0
        return (day + (hours * 60 + minutes) * 60 + seconds) * 1000 + millis
    m = _JUL.search(text)
    if m and m.group(1) in _MONTHS:
        mon, d, y, h, mi, s, frac, ampm = m.groups()
        hour = int(h) % 12 + (12 if ampm == "PM" else 0) if ampm else int(h)
        return _millis(int(y), _MONTHS[mon], int(d), hour, int(mi), int(s), frac)
    m = _DMY.search(text)
    if m:
        d, mo, y, h, mi, s, frac = m.groups()
        return _millis(int(y), int(mo), int(d), int(h), int(mi), int(s), frac)
    m = _CLOCK.search(text)
    if m:
        h, mi, s, ms = (int(g) for g in m.groups())
        return ((h * 60 + mi) * 60 + s) * 1000 + ms
    return None


@functools.lru_cache(maxsize=1024)
def _day_seconds(y: str, mo: str, d: str) -> int | None:
    """The seconds at the start of a day (year, month, day, as written; None when there is no
    such day): records share their day, so it is computed once."""
    millis = _millis(int(y), int(mo), int(d), 0, 0, 0, None)
    return None if millis is None else millis // 1000


def _millis(y: int, mo: int, d: int, h: int, mi: int, s: int, frac: str | None) -> int | None:
    try:
        base = datetime(y, mo, d, h, mi, s, tzinfo=UTC)
    except ValueError:
        return None
    ms = int((frac or "0")[:3].ljust(3, "0"))
    return int(base.timestamp()) * 1000 + ms


def address(match: re.Match[str]) -> str:
    """``host:port`` of a PREFIX match, or ``""`` for ``[LOCAL]``."""
    host = match.group("host")
    return f"{host}:{match.group('port')}" if host is not None else ""

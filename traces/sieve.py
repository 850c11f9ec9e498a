"""Which lines a scan needs: the sieve the Spark engine runs on the JVM, before any Python.

A log is mostly lines the scanner only counts. The scanner (`partsafe.traces.scanner`) reads a
line's text only when the line has a keyword, or when it is next to such a line and might belong
to its record: a member list's head, blank lines and member lines, a closing bracket, the rest of
a hard-wrapped message, the first line of a java.util.logging record. A line it can do without
is one that

- has no keyword and no NUL byte (the scanner reports a line with NUL bytes as malformed),
- starts a new record (a date, a level, ... at its first character; `layout.RECORD_START`) or is
  a stack trace line, so that it ends any record before it,
- and is neither a member list's head (a prefix and nothing after it) nor a java.util.logging
  record's first line (whose timestamp the next line takes).

Between two needed lines such lines all behave alike, so the scanner reads only the needed lines
and puts `scanner.ISLAND_BREAK` where the others were (`Scanner.scan_needed`); the result is the
same as reading every line, which tests/traces/test_sieve.py checks against the full scan and
against
the JVM's own evaluation of `column`.

Two cases are kept whole: lines of docker-compose's multiplexed layout (several members' streams
interleave line by line, so what ends a record depends on the other streams), and JSON lines whose
message the JVM cannot take out plainly (no message field, a message that is JSON or a compose line
itself). Canonical event JSON Lines are needed whole as well (the engine decides that per file).
"""

from __future__ import annotations

import json
import re
from typing import TYPE_CHECKING

from partsafe.traces import ignite, layout
from partsafe.traces.payload import KEYWORDS
from partsafe.traces.scanner import SCANNER_KEYWORDS, STACK_PATTERN

if TYPE_CHECKING:
    from pyspark.sql import Column

#: every keyword the scanner looks for (in Hazelcast logs, and in Ignite 3 logs, whose records
#: are one line each: a line with none of `ignite.KEYWORDS` gives nothing)
ALL_KEYWORDS: tuple[str, ...] = tuple(dict.fromkeys((*KEYWORDS, *SCANNER_KEYWORDS,
                                                     *ignite.KEYWORDS)))
#: the same test with fewer substrings: those that contain another keyword are left out
_MINIMAL_KEYWORDS = tuple(k for k in ALL_KEYWORDS
                          if not any(o != k and o in k for o in ALL_KEYWORDS))
#: Python's str.isspace beyond ASCII (what ``str.strip()`` also takes off)
_SPACE = r"[\s\x1c-\x1f\x85\xa0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000]"
#: the docker wrappers before the message, as `layout.peel` takes them off
_DOCKER = f"^(?:{layout.DOCKER_TS_PATTERN})?"
_COMPOSE = f"^(?=.{{1,70}}\\| )(?:{layout.COMPOSE_PATTERN})"
_HEAD = f"(?:{layout.PREFIX_PATTERN}){_SPACE}*$"
#: a line that ends any record before it: a record start at its first character, or a stack line
_BREAKS = f"^(?:(?!\\s)(?:{layout.RECORD_START_PATTERN})|(?:{STACK_PATTERN}))"
_JUL = f"^(?:{layout.JUL_HEAD_PATTERN})"
#: `needed`'s tests at the text's start as one expression: compose, JUL head, or not a break
_ANCHORED = f"^(?:{_COMPOSE[1:]}|{_JUL[1:]}|(?!{_BREAKS[1:]}))"
#: the line's end and the docker timestamp, the two things `needed` strips first
_STRIPS = f"\\r\\z|^(?:{layout.DOCKER_TS_PATTERN})"
#: the characters of `_SPACE`, for ``rtrim``
_SPACE_CHARS = "".join(c for c in map(chr, range(0x3001)) if re.fullmatch(_SPACE, c))

_RE_DOCKER = re.compile(_DOCKER, re.ASCII)
_RE_COMPOSE = re.compile(_COMPOSE, re.ASCII)
_RE_HEAD = re.compile(_HEAD, re.ASCII)
_RE_BREAKS = re.compile(_BREAKS, re.ASCII)
_RE_JUL = re.compile(_JUL, re.ASCII)


def needed(line: str) -> bool:
    """Whether the scanner needs `line` (Python's statement of what `column` computes)."""
    if "\x00" in line or any(k in line for k in ALL_KEYWORDS):
        return True
    text = line[:-1] if line.endswith("\r") else line
    text = _RE_DOCKER.sub("", text, count=1)
    if _RE_COMPOSE.match(text):
        return True
    if text.startswith("{"):
        message = _json_message(text)
        if message is None:
            return True
        if message.endswith("\n"):
            message = message[:-1]
        if message.startswith("{") or _RE_COMPOSE.match(message):
            return True
        text = message
    if _RE_HEAD.search(text) or _RE_JUL.match(text):
        return True
    return not _RE_BREAKS.match(text)


def _json_message(text: str) -> str | None:
    """The message field as the JVM's ``get_json_object`` gives it: the first of the usual keys
    that is there and not null (a value that is not a string as its JSON text)."""
    try:
        obj = json.loads(text)
    except ValueError:
        return None
    if not isinstance(obj, dict):
        return None
    for key in layout.JSON_MESSAGE_KEYS:
        value = obj.get(key)
        if value is not None:
            return value if isinstance(value, str) else json.dumps(value, separators=(",", ":"))
    return None


def _java(pattern: str) -> str:
    """A Python pattern in Java's dialect (named groups are the one difference used here)."""
    return pattern.replace("(?P<", "(?<")


def column(value: Column) -> Column:
    """`needed` as a Spark column over the raw line `value`: JVM functions only.

    The JVM decodes a line into a Java string for every regular expression it applies, which
    costs more than the match, so the cheap tests go first: the strips run only on lines that
    end in a carriage return or have a docker timestamp's ``T``; the tests at the text's start
    are one expression (`_ANCHORED`); the member list's head is looked for only in lines that
    end in ``]``; the JSON message is taken out only from lines that are JSON."""
    from pyspark.sql import functions as F

    keyword = value.contains("\x00")  # a line with NUL bytes is malformed (reported)
    for k in _MINIMAL_KEYWORDS:
        keyword = keyword | value.contains(k)
    text = F.when(value.endswith("\r") | (F.substring(value, 11, 1) == "T"),
                  F.regexp_replace(value, _java(_STRIPS), "")).otherwise(value)
    is_json = text.startswith("{")
    message = F.regexp_replace(F.coalesce(*(F.get_json_object(text, f"$['{k}']")
                                            for k in layout.JSON_MESSAGE_KEYS)), "\n\\z", "")
    plain = F.when(is_json, message).otherwise(text)
    head = F.rtrim(plain, F.lit(_SPACE_CHARS)).endswith("]") & plain.rlike(_java(_HEAD))
    # a JSON line without a message (`plain` is null) is needed whole
    shaped = plain.startswith("{") | plain.rlike(_java(_ANCHORED)) | head
    return keyword | F.coalesce(shaped, F.lit(True))

"""Events from the message payloads of Hazelcast member log lines (the message families §2-§12
of docs/validation.md, "The messages read"; each handler below names the Hazelcast class that logs
its message).

A payload is the text after the member prefix ``[host]:port [cluster-name] [version] `` (written by
Hazelcast's ``LoggingServiceImpl``, family §0): the caller strips the log layout and the prefix
and joins the lines of a multi-line record (a member list) with ``"\\n"``. :func:`parse_payload`
recognises the message family from its fixed wording with one precompiled regex, reads the simple
fields of one-line messages with a regex built from the grammar's own terminals, and runs the lark
grammar ``hazelcast.lark`` (one LALR parser with several start rules) over the structured parts:
member lists, ``MembersView``/``MemberInfo``, ``MigrationInfo``, ``MigrationStats``,
``PartitionLostEventImpl``, ``ClusterState`` changes. The usual shapes of the three that every
member prints again and again (a versioned member list, a flat ``MigrationInfo``, the
statistics) are read with the grammar's own terminals and token values, what its parser makes
of them, and member lists and ``MigrationInfo``s once per text (`_Recent`).

Addresses are normalised to ``host:port`` (``[10.0.0.1]:5701`` -> ``10.0.0.1:5701``, redacted
``[<ip>]:<portA>`` -> ``<ip>:<portA>``, ``[fe80::1%eth0]:5701`` -> ``fe80::1%eth0:5701``).

One file: the payload of every message family the scanner recognises (docs/validation.md, "The
messages read"), each a short function over the grammar's trees, dispatched from one table; the
per-line path stays in one module on purpose (it is the parser's hot path).
"""

from __future__ import annotations

import re
import sys
from collections.abc import Callable, Hashable
from dataclasses import dataclass
from importlib.resources import files
from typing import Any, NamedTuple

from lark import Lark, Token, Transformer, v_args
from lark.exceptions import LarkError, UnexpectedInput

from partsafe.traces.events import (
    UNKNOWN_MEMBER,
    ClusterStateChanged,
    Event,
    ExplicitSuspicion,
    MastershipAcceptanceReceived,
    MastershipClaimAccepted,
    MastershipClaimed,
    MastershipClaimSent,
    MastershipClaimStarted,
    MemberLeft,
    MemberListInstalled,
    MemberRemoved,
    MemberStarted,
    MemberSuspected,
    MigrationCommitted,
    MigrationFailed,
    MigrationFinished,
    MigrationRolledBack,
    MigrationsCompleted,
    MigrationStarted,
    PartitionLost,
    PartitionTableApplied,
    PartitionTableConflict,
    PartitionTableFetch,
    PartitionTablePublished,
    PartitionVersionApplied,
    PlanDecision,
    PlanOrder,
    PlanStarted,
    PlanState,
    PromotionCommitted,
    Repartitioning,
    ShutdownRequested,
    ShutdownRequestHandled,
    Source,
    SplitBrainMerge,
    SuspicionRemoved,
)

__all__ = ["KEYWORDS", "Origin", "PayloadError", "declared_size", "parse_payload"]


class PayloadError(ValueError):
    """A payload that is recognisably one of ours but does not parse; .reason is one sentence."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


@dataclass(frozen=True, slots=True)
class Origin:
    """Where a payload comes from: the logging member, the file and the record's first line."""

    member: str  # the logging member as "host:port" (no brackets), UNKNOWN_MEMBER if unknown
    file: str
    line: int  # 1-based line where the record starts
    order: int | None = None  # a timestamp-derived order key, or None
    #: what the layout wrote before the member prefix on the record's line (java.util.logging's
    #: ``FINE: ``, log4j's date, level, thread and logger), for the messages whose wording two
    #: loggers share and whose level tells them apart (`_removing`)
    header: str = ""

    @property
    def debug(self) -> bool:
        """Whether the header names a level below INFO (FINE, FINER, FINEST, DEBUG, TRACE)."""
        return _RX_DEBUG_LEVEL.search(self.header) is not None


#: Literal substrings: every payload for which :func:`parse_payload` returns non-None contains one
#: of them (case-sensitive), so a caller may skip any line that has none.
KEYWORDS: tuple[str, ...] = (
    "Members ",  # §2 member lists (versioned and legacy)
    "member list",  # §2 "Sending member list", §6 "Updating local member list version"
    "Removing Member",  # §3 removals
    "suspected to be dead",  # §4 suspicion
    "Suspecting Member",  # §4 heartbeat timeout
    "Shutdown request of",  # §11 shutdown request handled
    "requested to shutdown",  # §11 shutdown request pending
    " is removed",  # §3 "Member ... is removed. Publishing new member list."
    "suspicion",  # §4 "Received suspicion request", "Removed suspicion"
    "astership",  # §5 mastership claim
    "MembersView",  # §5 "Local MembersView{...}"
    " is START",  # §11 lifecycle STARTING / STARTED
    " is SHUT",  # §11 lifecycle SHUTTING_DOWN / SHUTDOWN
    " is MERG",  # §6/§11 lifecycle MERGING / MERGED / MERGE_FAILED
    " is merging ",  # §6 split-brain merge
    "should merge",  # §6 merge decision
    " starting at ",  # §3 start banner
    "ost recent",  # §7 partition-table fetch
    "MigrationInfo{",  # §7-§9 migrations
    "epartition",  # §9 "Repartitioning cluster data", "no need to repartition"
    "-partition",  # §9 3.x "Re-partitioning cluster data", "no need to re-partition cluster data"
    "migration tasks",  # §9 "All migration tasks ...", "Remaining migration tasks"
    "Rebalance process",  # §9
    "partitionId=",  # §10 promotions and partition loss
    "LOST partitions",  # §10
    "latest partition",  # §7 "Issue while determining latest partition..."
    "partition state",  # §8 3.x "Publishing partition state, version", "Applied partition ..."
    "cluster state",  # §12
    "after prioritization",  # §9 the planner's migration order (its other lines: "partitionId=")
)

# --- the grammar ------------------------------------------------------------------------------


class _Ref(NamedTuple):
    """A member, replica or address as the grammar reads it (the ``toString`` forms of family §1:
    ``Address``, ``AbstractMember``, ``PartitionReplica``)."""

    address: str
    uuid: str | None = None
    this: bool = False
    lite: bool = False


class _Obj(NamedTuple):
    """A Java ``Name{key=value, ...}`` toString (family §1: ``MigrationInfo``, ``MembersView``,
    ``PartitionLostEventImpl``, ``ClusterState`` ...)."""

    name: str
    fields: dict[str, Any]


class _MemberList(NamedTuple):
    """A member list (``ClusterServiceImpl.printMemberList``, family §2); `version` is None for the
    legacy format."""

    version: int | None
    size: int
    members: tuple[_Ref, ...]


def _address(token: str) -> str:
    """``[host]:port`` (``Address.toString``; 3.0's ``Address[host]:port``) as ``host:port``."""
    cut = token.rindex("]:")
    return f"{token[token.index('[') + 1 : cut]}:{token[cut + 2 :]}"


#: what a token may carry after its value: the separator that follows it (see hazelcast.lark)
_SEPARATORS = ", \t\r\n"


def _split_member(text: str) -> _Ref:
    """The parts of a MEMBER token ``Member [h]:p[ - uuid][ this][ lite]``, a REPLICA token
    ``[h]:p - uuid`` or an ADDRESS token: the terminal's regex fixed their shape, so splitting at
    blanks is exact (``AbstractMember.toString``, ``PartitionReplica.toString``)."""
    parts = text.removeprefix("Member").rstrip(_SEPARATORS).split()
    uuid = parts[2] if len(parts) > 2 and parts[1] == "-" else None
    flags = parts[3:] if uuid is not None else parts[1:]
    return _Ref(_address(parts[0]), uuid, "this" in flags, "lite" in flags)


class _Tokens(Transformer):
    """Token callbacks: a token becomes its value when the parser shifts it (family §1).
    A simple field token ``key=value`` becomes the pair ``(key, value)``."""

    def ADDRESS(self, tok: Token) -> _Ref:
        return _Ref(_address(tok.rstrip(_SEPARATORS)))

    def REPLICA(self, tok: Token) -> _Ref:
        return _split_member(tok)

    def MEMBER(self, tok: Token) -> _Ref:
        return _split_member(tok)

    def FIELD(self, tok: Token) -> tuple[str, str | None]:
        key, _eq, value = tok.partition("=")
        return key, value.rstrip(_SEPARATORS) or None

    def FIELD_ADDRESS(self, tok: Token) -> tuple[str, _Ref]:
        key, _eq, value = tok.partition("=")
        return key, _Ref(_address(value.rstrip(_SEPARATORS)))

    def FIELD_REPLICA(self, tok: Token) -> tuple[str, _Ref]:
        key, _eq, value = tok.partition("=")
        return key, _split_member(value)

    def KEY_EQ(self, tok: Token) -> str:
        return tok[:-1]

    def SCALAR(self, tok: Token) -> str:
        return str(tok)

    def STATE(self, tok: Token) -> str:
        return str(tok)

    def SIZE(self, tok: Token) -> int:
        return int(tok.rpartition(":")[2])

    VER = SIZE

    def INT(self, tok: Token) -> int:
        return int(tok)

    def STAT(self, tok: Token) -> tuple[str, str]:
        key, _eq, value = tok.partition("=")
        return key, value.strip()

    def TAIL(self, tok: Token) -> str:
        return str(tok)


@v_args(inline=True)
class _ToPython(_Tokens):
    """The grammar's rules as plain Python values, applied while parsing (no tree is built)."""

    def versioned(self, size: int, version: int, *members: _Ref) -> _MemberList:
        return _MemberList(version, size, members)

    def legacy(self, size: int, *members: _Ref) -> _MemberList:
        return _MemberList(None, size, members)

    def object(self, name: str, *fields: tuple[str, Any]) -> _Obj:
        return _Obj(name, dict(fields))

    def map(self, *fields: tuple[str, Any]) -> _Obj:
        return _Obj("", dict(fields))

    def pair(self, key: str, value: Any) -> tuple[str, Any]:
        return key, value

    def list(self, *items: Any) -> tuple[Any, ...]:
        return items

    def lead_object(self, obj: _Obj, tail: str = "") -> tuple[_Obj, str]:
        return obj, tail

    def claim_local(self, view: _Obj, suspected: Any, to_ask: Any) -> tuple[_Obj, Any, Any]:
        return view, suspected, to_ask

    def state_change(self, old: Any, new: Any, _tail: str = "") -> tuple[Any, Any]:
        return old, new

    def stats(self, *stats: tuple[str, str]) -> dict[str, str]:
        return dict(stats)


_PARSER = Lark(
    # a resource, not a path: the package may run from a zip (shipped to Spark executors)
    files(__package__).joinpath("hazelcast.lark").read_text(encoding="utf-8"),
    parser="lalr",
    start=["member_list", "lead_object", "claim_local", "state_change", "stats"],
    transformer=_ToPython(),
    maybe_placeholders=False,
)


def _parse(text: str, start: str, what: str) -> Any:
    """Run the grammar from `start`; lark's errors become a PayloadError naming `what`."""
    try:
        return _PARSER.parse(text, start=start)
    except UnexpectedInput as exc:
        token = getattr(exc, "token", None)
        pos = exc.pos_in_stream
        rest = (
            text[pos:] if isinstance(pos, int) and (token is None or token.type != "$END") else ""
        )
        if not any(closing in rest for closing in "]})"):
            # nothing closes after the point where the text stops making sense: it was cut off
            ends = f"it ends inside {rest[:40]!r}" if rest else "the text ends before it is closed"
            raise PayloadError(f"{what} is truncated: {ends}") from None
        raise PayloadError(f"{what} is malformed at {rest[:40]!r}") from None
    except LarkError as exc:
        raise PayloadError(f"{what} does not parse ({type(exc).__name__})") from None


class _Recent:
    """A bounded cache of parse results, least recently used first out. A cluster logs the same
    structured text again and again: every member prints each member list (each copy differs
    only in which line says ``this``) and each completed migration it applies, and the master's
    and the participants' lines name one ``MigrationInfo``. The values are immutable and shared
    by the events made from them (their member tuples too). Files are read one after the
    other, so a text comes back once per member's file: the bound holds what a few gigabytes
    of a cluster's logs print."""

    def __init__(self, size: int, max_bytes: int | None = None) -> None:
        self.size = size
        #: a bound on the bytes of the keys kept (keys that are bytes: `_LISTS`)
        self.max_bytes = max_bytes
        self.key_bytes = 0
        self.values: dict[Hashable, Any] = {}

    def get(self, key: Hashable) -> Any:
        value = self.values.pop(key, None)
        if value is not None:
            self.values[key] = value  # the most recent last
        return value

    def put(self, key: Hashable, value: Any) -> None:
        values = self.values
        if self.max_bytes is None:
            if len(values) >= self.size:
                del values[next(iter(values))]
        else:
            assert isinstance(key, bytes)
            self.key_bytes += len(key)
            while values and (len(values) >= self.size or self.key_bytes > self.max_bytes):
                oldest = next(iter(values))
                del values[oldest]
                self.key_bytes -= len(oldest)  # type: ignore[arg-type]
        values[key] = value


#: parse results kept: member lists by their text without the ``this`` marker (their bytes:
#: about 60 a member; at most 24 MB of them), ``MigrationInfo`` texts (about 700 bytes each)
_LISTS = _Recent(1 << 15, max_bytes=24 << 20)
_MIGRATIONS = _Recent(1 << 16)


# --- fields of one-line messages ----------------------------------------------------------------

#: the grammar's §1 address terminal, reused by the one-line regexes
_A = _PARSER.get_terminal("ADDRESS").pattern.value
#: a UUID (or an author's placeholder): no blanks, brackets, commas or the period ending a sentence
_U = r"[^\s,.\[\]{}]+"
#: §1 ``Member [host]:port - <uuid>[ this][ lite]``
_MEMBER = rf"Member (?=\[)(?P<addr>{_A})(?:[ \t]+-[ \t]+(?P<uuid>{_U}))?(?:[ \t]+(?:this|lite))*"

_RX_REMOVING = re.compile(rf"Removing {_MEMBER}")
#: a level below INFO in a record's header (java.util.logging's, log4j's, SLF4J's words)
_RX_DEBUG_LEVEL = re.compile(r"(?<![A-Za-z])(?:FINE(?:R|ST)?|DEBUG|TRACE)(?![A-Za-z])")
_RX_MEMBER_VERB = re.compile(
    rf"{_MEMBER}[ \t]+(?P<verb>is suspected to be dead|is removed\.|requested to shutdown)"
)
_RX_REASON = re.compile(r"[ \t]+for reason:[ \t]*(?P<reason>.*)", re.S)
_RX_REMOVED_SUSPICION = re.compile(rf"Removed suspicion of {_MEMBER}")
_RX_EXPLICIT = re.compile(rf"Received suspicion request from:[ \t]*(?P<addr>{_A})")
_RX_SUSPECTING = re.compile(rf"Suspecting {_MEMBER} because it has not sent any heartbeats")
_RX_ACCEPTED = re.compile(rf"Mastership of[ \t]+(?P<addr>{_A})[ \t]+is accepted\. Response:[ \t]*")
_RX_LIFECYCLE = re.compile(
    rf"(?P<addr>{_A}) is "
    r"(?P<state>STARTING|STARTED|SHUTTING_DOWN|SHUTDOWN|MERGING|MERGED|MERGE_FAILED)\s*\Z"
)
_RX_MERGING = re.compile(rf"(?P<this>{_A}) is merging (?:\[[^\]\n]*\] )?to[ \t]+(?P<addr>{_A})")
_RX_SHOULD_MERGE = re.compile(rf"{_A} should merge to us")
_RX_BANNER = re.compile(rf"Hazelcast(?:[ \t]+[^\s()]+)+[ \t]+\([^()\n]*\) starting at [ \t]*{_A}")
_RX_TASKS = re.compile(r"[.\s]*Migration (?:tasks count|queue size):[ \t]*(?P<n>\d+)")
_RX_REMAINING = re.compile(r"Remaining migration tasks(?::| in queue =>)[ \t]*(?P<n>\d+)")
_RX_PARTITION_ID = re.compile(
    r"partitionId=(?P<p>\d+)[ \t]+(?:(?P<lost>is completely lost!)"
    r"|owner is removed\.[ \t]+(?:replicaIndex=(?P<i>\d+) will be shifted up to 0"
    r"|(?P<none>there is no other replica to shift up)))"
)
_RX_REPLICA_LOST = re.compile(
    r"Partition replica is lost![ \t]+partitionId=(?P<p>\d+)[^\n]*?lost replicaIndex=(?P<i>-?\d+)"
)
_RX_SHUTDOWN = re.compile(rf"Shutdown request of {_MEMBER} is handled")
_RX_COMMIT_RESULT = re.compile(
    rf"Migration commit result (?P<result>true|false) from {_A}(?:[ \t]+-[ \t]+{_U})?"
    r"[ \t]+for[ \t]+(?=MigrationInfo\{)")
_RX_TABLE_VERSION = re.compile(
    r"(?:Publishing partition state,|Applied partition state update with"
    r"|Applied completed migrations with partition state) version:[ \t]*"
    r"(?P<v>-?\d+)\s*\Z")
_RX_RECEIVED_FROM = re.compile(rf"\s*is received from[ \t]+(?P<addr>{_A})")
_RX_ASKING = re.compile(rf"Asking MembersView of[ \t]+(?P<addr>{_A})")
#: §1 ``AbstractInternalPartition.toString``: ``Partition {ID: P, Version: V} [`` then a
#: ``\tindex:[h]:p - uuid`` line per replica that is set, then ``]``; the record's lines are
#: joined back (their tab or a blank before each entry)
_PARTITION = (r"Partition \{{ID: (?P<p{n}>\d+), Version: (?P<v{n}>-?\d+)\}} "
              r"\[(?P<r{n}>(?:\s+\d+:{a}(?:[ \t]+-[ \t]+{u})?)*)\s*\]")
_RX_LATEST_PARTITION = re.compile(
    r"\s*Latest:\s*" + _PARTITION.format(n=1, a=_A, u=_U)
    + r",\s*Received:\s*" + _PARTITION.format(n=2, a=_A, u=_U) + r"\s*")
_RX_REPLICA_ENTRY = re.compile(rf"(\d+):({_A})")
_RX_SIZE = re.compile(r"\s*Members[ \t]*(?:\{[ \t]*size[ \t]*:[ \t]*(\d+)|\[[ \t]*(\d+)[ \t]*\])")


def declared_size(text: str) -> int | None:
    """The size a member-list header states (`N` of ``Members {size:N, ...`` or ``Members [N]``),
    or None when `text` is no member list (family §2). The caller may compare it with the
    number of members of the event to warn about a list that does not match its header."""
    m = _RX_SIZE.match(text)
    if m is None:
        return None
    return int(m.group(1) or m.group(2))


# --- mapping structured values to fields --------------------------------------------------------


def _int(value: Any, what: str) -> int | None:
    """An integer field; None when absent, ``null`` or redacted (``<n>``)."""
    if value is None or value == "null" or (isinstance(value, str) and value.startswith("<")):
        return None
    if isinstance(value, str):
        try:
            return int(value)
        except ValueError:
            pass
    raise PayloadError(f"{what} is not an integer: {str(value)[:40]!r}")


def _addr(value: Any, what: str) -> str | None:
    """An address field: a replica ``[h]:p - uuid``, an address, or ``null``."""
    if value is None or value == "null":
        return None
    if isinstance(value, _Ref):
        return value.address
    if isinstance(value, _Obj) and isinstance(value.fields.get("address"), _Ref):
        return value.fields["address"].address
    raise PayloadError(f"{what} is not an address: {str(value)[:40]!r}")


class _Migration(NamedTuple):
    """The fields of a ``MigrationInfo`` the events need (``MigrationInfo.toString``)."""

    uuid: str
    partition: int | None
    source: str | None
    destination: str | None
    source_current_index: int | None
    initial_version: int | None
    increment: int | None
    status: str | None


def _migration(obj: _Obj) -> _Migration:
    """Read a ``MigrationInfo{...}`` of any version: generic key=value, absent fields None
    (``MigrationInfo.toString``; 3.x adds ``sourceUuid=``, ``processing=`` and has no versions)."""
    if not obj.name.endswith("MigrationInfo"):
        raise PayloadError(f"expected a MigrationInfo, found {obj.name[:40]!r}")
    f = obj.fields
    uuid = f.get("uuid")
    if not isinstance(uuid, str) or not uuid:
        raise PayloadError("MigrationInfo has no uuid")
    status = f.get("status")
    source = _addr(f.get("source"), "MigrationInfo source")
    destination = _addr(f.get("destination"), "MigrationInfo destination")
    return _Migration(
        uuid=sys.intern(uuid),
        partition=_int(f.get("partitionId"), "MigrationInfo partitionId"),
        source=sys.intern(source) if source is not None else None,
        destination=sys.intern(destination) if destination is not None else None,
        source_current_index=_int(f.get("sourceCurrentReplicaIndex"), "sourceCurrentReplicaIndex"),
        initial_version=_int(f.get("initialPartitionVersion"), "initialPartitionVersion"),
        increment=_int(f.get("partitionVersionIncrement"), "partitionVersionIncrement"),
        status=status if isinstance(status, str) else None,
    )


#: the tokens of a flat object's fields (``MigrationInfo.toString``: replicas, addresses and
#: plain values), as the grammar's lexer reads them there: its terminals in the order it tries
#: them (priority), the first that matches taken and never backtracked into, each after the
#: separators the grammar ignores
_RX_FIELD_TOKEN = re.compile(
    r"[\s,]*(?>"
    + "|".join(f"(?P<{name}>{_PARSER.get_terminal(name).pattern.to_regexp()})"
               for name in ("FIELD_REPLICA", "FIELD_ADDRESS", "FIELD"))
    + ")")
_RX_OBJECT_END = re.compile(r"[\s,]*\}")
_TOKENS = _Tokens()
#: token values by terminal and text: a log repeats its fields and member lines far more than
#: it has them (values are immutable)
_VALUES = _Recent(1 << 13)


def _value(name: str, token: str) -> Any:
    """The value of a token of terminal `name` (`_Tokens`), made once per text."""
    key = (name, token)
    value = _VALUES.get(key)
    if value is None:
        value = getattr(_TOKENS, name)(token)
        _VALUES.put(key, value)
    return value


def _flat_migration(piece: str) -> tuple[_Obj, str] | None:
    """A ``MigrationInfo{...}`` at the start of `piece` that holds only replica, address and
    plain fields (what ``MigrationInfo.toString`` prints), and the text after it: read with the
    grammar's own terminals and token values (`_Tokens`), it is what the grammar's parser makes
    of it (``lead_object``), without the parser's cost per token. None for anything else (a
    nested value), which the parser reads."""
    if not piece.startswith("MigrationInfo{"):
        return None
    fields = []
    pos = len("MigrationInfo{")
    while (m := _RX_FIELD_TOKEN.match(piece, pos)) is not None:
        name = m.lastgroup
        assert name is not None
        fields.append(_value(name, m[name]))
        pos = m.end()
    end = _RX_OBJECT_END.match(piece, pos)
    if end is None:
        return None
    return _Obj("MigrationInfo", dict(fields)), piece[end.end():]  # the TAIL, if any


def _lead_migration(text: str, at: int) -> tuple[_Migration, str]:
    """The ``MigrationInfo{...}`` starting at `at`, and the text after it (parsed once for
    every line that prints the same text: `_MIGRATIONS`)."""
    piece = text[at:]
    found: tuple[_Migration, str] | None = _MIGRATIONS.get(piece)
    if found is None:
        obj, tail = _flat_migration(piece) or _parse(piece, "lead_object", "MigrationInfo")
        found = _migration(obj), tail
        _MIGRATIONS.put(piece, found)
    return found


def _members_view(obj: Any) -> tuple[int | None, tuple[str, ...]]:
    """Version and member addresses of a ``MembersView{version=V, members=[MemberInfo{...}]}``
    (``MembersView.toString``, in the claim messages of family §5); MemberInfo fields are read
    generically (3.9 has no cpMemberUUID)."""
    if not isinstance(obj, _Obj) or obj.name != "MembersView":
        raise PayloadError("expected a MembersView{version=..., members=[...]}")
    members = obj.fields.get("members", ())
    if not isinstance(members, tuple):
        raise PayloadError("MembersView members is not a list")
    addresses = []
    for info in members:
        address = _addr(info, "MembersView member")
        if address is None:
            raise PayloadError("a MemberInfo of the MembersView has no address")
        addresses.append(address)
    return _int(obj.fields.get("version"), "MembersView version"), tuple(addresses)


_RX_STAT_TOKEN = re.compile(rf"[\s,]*(?>({_PARSER.get_terminal('STAT').pattern.to_regexp()}))")
_RX_STATS_END = re.compile(r"[\s,]*\Z")


def _flat_stats(text: str) -> dict[str, str] | None:
    """``MigrationStats`` text read with the grammar's STAT terminal and its value (``stats``):
    what the grammar's parser makes of it, without its cost per token; None when it is not a
    run of statistics, which the parser reads."""
    stats = []
    pos = 0
    while (m := _RX_STAT_TOKEN.match(text, pos)) is not None:
        stats.append(_TOKENS.STAT(m[1]))
        pos = m.end()
    if not stats or _RX_STATS_END.match(text, pos) is None:
        return None
    return dict(stats)


def _stats_event(
    text: str, at: int, outcome: str, tasks: int | None, origin: Origin
) -> list[Event]:
    """``MigrationsCompleted`` from the ``(MigrationStats)`` after position `at`
    (``MigrationStats.formatToString``, family §9). Only planned/completed/remaining are required; a
    line without any parenthesis (an older release) gives no event, nor do 3.12's statistics,
    which count no planned or remaining migrations (``lastRepartitionTime=…,
    completedMigrations=…, totalCompletedMigrations=…, elapsed…``): the task count of its
    ``Remaining migration tasks in queue => N`` is its queue's, where repair and promotion tasks
    wait beside migrations, so no sum of them is a rebalance's plan."""
    opening = text.find("(", at)
    if opening < 0:
        return []
    closing = text.rfind(")")
    if closing < opening:
        raise PayloadError("MigrationStats text is truncated: no closing parenthesis")
    inside = text[opening + 1 : closing]
    stats = _flat_stats(inside) or _parse(inside, "stats", "MigrationStats text")
    values = {}
    if "plannedMigrations" not in stats and "remainingMigrations" not in stats \
            and "completedMigrations" in stats and "lastRepartitionTime" in stats:
        return []  # 3.12's statistics
    for key in ("plannedMigrations", "completedMigrations", "remainingMigrations"):
        value = _int(stats.get(key), key)
        if value is None:
            raise PayloadError(f"MigrationStats text lacks {key}")
        values[key] = value
    return [
        MigrationsCompleted(
            **_meta(origin),
            planned=values["plannedMigrations"],
            completed=values["completedMigrations"],
            remaining=values["remainingMigrations"],
            outcome=outcome,
            total_completed=_int(stats.get("totalCompletedMigrations"), "totalCompletedMigrations"),
            tasks=tasks,
        )
    ]


def _state_name(value: Any, what: str) -> str | None:
    """The state of a ``ClusterState{state=X, ...}``, a ``ClusterStateChange{..., newState=X}``
    or a bare ``X`` (``CommitClusterStateOp``, family §12); None for a cluster *version* change."""
    if isinstance(value, str):
        return value
    if isinstance(value, _Obj):
        if "Version" in str(value.fields.get("type", "")):
            return None
        state = value.fields.get("state", value.fields.get("newState"))
        if isinstance(state, str) and state:
            return state
    raise PayloadError(f"{what} names no state")


def _meta(origin: Origin) -> dict[str, Any]:
    return {
        "member": origin.member,
        "order": origin.order,
        "source": Source(origin.file, origin.line),
    }


# --- the families ---------------------------------------------------------------------------------
# Each handler gets the stripped payload, the end of the family's fixed wording and the origin; it
# returns the events (possibly none) or None for a look-alike we do not model.

_Handler = Callable[[str, int, Origin], "list[Event] | None"]


class _Listed(NamedTuple):
    """What a member list gives an event: its version, members and their UUIDs (all or none),
    and the index of its ``this`` member (None: no line says ``this``)."""

    version: int | None
    members: tuple[str, ...]
    uuids: tuple[str, ...]
    this: int | None


#: a member line that ends in the ``this`` marker (``AbstractMember.toString``: ``Member
#: [h]:p - uuid this``, then `` lite`` for a lite member), the marker in group 1
_RX_THIS_LINE = re.compile(
    rf"[ \t]*Member[ \t]*{_A}[ \t]+-[ \t]+[^\s,{{}}\[\]=]+([ \t]+this)(?:[ \t]+lite)?[ \t]*")


def _unmarked(raw: bytes) -> tuple[bytes, int | None]:
    """`raw` (a member list in UTF-8, one line per member after its header) without the
    ``this`` marker, and the index of the marker's line among the member lines, when ``this``
    occurs once in `raw`, as a member line's marker; else `raw` and None."""
    if raw.count(b"this") != 1:
        return raw, None
    at = raw.find(b"this")
    start = raw.rfind(b"\n", 0, at) + 1
    if start == 0:  # the header's
        return raw, None
    end = raw.find(b"\n", at)
    marker = _marker(raw[start:end if end >= 0 else len(raw)])
    if marker is None:
        return raw, None
    return raw[:start + marker[0]] + raw[start + marker[1]:], raw.count(b"\n", 0, start) - 1


#: `_marker` by line: a member prints its own line with the marker in every list it prints
_MARKERS = _Recent(1 << 10)


def _marker(line: bytes) -> tuple[int, int] | None:
    """Where the ``this`` marker of a member line is (`_RX_THIS_LINE`), in bytes; None when
    `line` is no member line ending in it."""
    found = _MARKERS.get(line)
    if found is None:
        text = line.decode()
        m = _RX_THIS_LINE.fullmatch(text)
        found = ((len(text[:m.start(1)].encode()), len(text[:m.end(1)].encode())) if m
                 else ())
        _MARKERS.put(line, found)
    return found or None


def _terminal(name: str) -> str:
    """The regex of one of the grammar's terminals."""
    return str(_PARSER.get_terminal(name).pattern.to_regexp())


#: a versioned member list as the grammar's lexer reads it: ``Members`` ``{`` SIZE VER ``}``
#: ``[``, then MEMBER tokens, then ``]`` (each token after the separators the grammar ignores,
#: none backtracked into)
_RX_LIST_HEAD = re.compile(rf"Members[\s,]*\{{[\s,]*(?>({_terminal('SIZE')}))[\s,]*"
                           rf"(?>({_terminal('VER')}))[\s,]*\}}[\s,]*\[")
_RX_MEMBER_TOKEN = re.compile(rf"[\s,]*(?>({_terminal('MEMBER')}))")
_RX_LIST_END = re.compile(r"[\s,]*\][\s,]*\Z")


def _flat_list(text: str) -> _MemberList | None:
    """A versioned member list of member lines (``ClusterServiceImpl.printMemberList``), read
    with the grammar's own terminals and token values: what the grammar's parser makes of it,
    without the parser's cost per token. None for anything else (the legacy form, a broken
    list), which the parser reads."""
    head = _RX_LIST_HEAD.match(text)
    if head is None:
        return None
    members = []
    pos = head.end()
    while (m := _RX_MEMBER_TOKEN.match(text, pos)) is not None:
        members.append(_value("MEMBER", m[1]))
        pos = m.end()
    if _RX_LIST_END.match(text, pos) is None:
        return None
    return _MemberList(_TOKENS.VER(head[2]), _TOKENS.SIZE(head[1]), tuple(members))


def _listed(raw: bytes) -> _Listed:
    """A member list's version, members and ``this`` member, from its text in UTF-8, parsed
    once for all the members' copies of it (`_LISTS`, keyed by its text without the ``this``
    marker: the marker's line is the copy's own)."""
    key, marker = _unmarked(raw)
    found: _Listed | None = _LISTS.get(key)
    if found is not None:
        return found if marker is None else _Listed(found.version, found.members, found.uuids,
                                                    marker)
    text = raw.decode()
    parsed: _MemberList = _flat_list(text) or _parse(text, "member_list", "member list")
    members = tuple(sys.intern(m.address) for m in parsed.members)
    uuids = tuple(sys.intern(m.uuid) for m in parsed.members if m.uuid is not None)
    this = next((i for i, m in enumerate(parsed.members) if m.this), None)
    found = _Listed(parsed.version, members, uuids if len(uuids) == len(members) else (), this)
    # a copy's marker line gives its member only when every member has a line of its own (the
    # key holds no other ``this``: `_unmarked`)
    lines = text.split("\n")
    if marker is None or (this == marker
                          and len(members) == len(lines) - 2
                          and all(line.lstrip().startswith("Member") for line in lines[1:-1])):
        _LISTS.put(key, found._replace(this=None) if marker is not None else found)
    return found


def _member_list(text: str, _end: int, origin: Origin) -> list[Event]:
    """``Members {size:N, ver:V} [`` ... ``]`` and legacy ``Members [N] {`` ... ``}``
    (``ClusterServiceImpl.printMemberList``, family §2)."""
    return _list_events(_listed(text.encode()), origin)


def _list_events(listed: _Listed, origin: Origin) -> list[Event]:
    """The event of a member list (`_member_list`)."""
    members = listed.members
    # the logging member, else the list's ``this`` member, else unknown (a bare list: no spec
    # judges it)
    member = origin.member or (members[listed.this] if listed.this is not None
                               else UNKNOWN_MEMBER)
    return [
        MemberListInstalled(
            **{**_meta(origin), "member": member},
            version=listed.version,
            members=members,
            master=members[0] if members else None,
            uuids=listed.uuids,
        )
    ]


def _recognised(_text: str, _end: int, _origin: Origin) -> list[Event]:
    """A protocol message that carries no event we model: §2 ``Sending member list ...``, §5
    ``Starting mastership claim process...``, §6 merge decisions and version bumps, §10
    ``Assigning new owners for N LOST partitions!``."""
    return []


def _removing(text: str, _end: int, origin: Origin) -> list[Event]:
    """``Removing Member [h]:p - uuid`` (``MembershipManager``, on the master, INFO, family §3);
    with more text (``... because it has disconnected ...``, ``... from members removed in not
    joinable state.``) no event. Hazelcast 3.x's partition service prints the same words at
    FINE on every member as it drops a member that left from its table
    (``InternalPartitionServiceImpl.memberRemoved``; 4.0 and later print ``Removing [Member
    …]``): a record whose header names a level below INFO is that one, and no removal."""
    m = _RX_REMOVING.match(text)
    if m is None:
        raise PayloadError("member removal names no readable member")
    if text[m.end() :].strip() or origin.debug:
        return []
    return [MemberRemoved(**_meta(origin), removed=_address(m["addr"]))]


def _member_verb(text: str, _end: int, origin: Origin) -> list[Event] | None:
    """``Member ... is suspected to be dead[ for reason: r]`` (``MembershipManager``, on a
    non-master, family §4); ``Member ... is removed. Publishing new member list.``
    (``MembershipManager``, §3) and ``Member ... requested to shutdown but still in partition
    table`` (``MigrationManager``, §11) give no event; any other ``Member ...`` sentence is not
    ours."""
    m = _RX_MEMBER_VERB.match(text)
    if m is None:
        return None
    if m["verb"] != "is suspected to be dead":
        return []
    reason = _RX_REASON.match(text, m.end())
    return [
        MemberSuspected(
            **_meta(origin),
            suspect=_address(m["addr"]),
            reason=reason["reason"].strip() if reason else "",
        )
    ]


def _removed_suspicion(text: str, _end: int, origin: Origin) -> list[Event]:
    """``Removed suspicion of Member [h]:p - uuid. Reason: r`` (``MembershipManager``, family
    §4)."""
    m = _RX_REMOVED_SUSPICION.match(text)
    if m is None:
        raise PayloadError("suspicion removal names no readable member")
    return [SuspicionRemoved(**_meta(origin), suspect=_address(m["addr"]))]


def _explicit(text: str, _end: int, origin: Origin) -> list[Event]:
    """``Received suspicion request from: [h]:p`` (``ExplicitSuspicionOp``, family §4: the caller
    asks to be suspected)."""
    m = _RX_EXPLICIT.match(text)
    if m is None:
        raise PayloadError("explicit suspicion request names no readable address")
    return [ExplicitSuspicion(**_meta(origin), sender=_address(m["addr"]))]


def _suspecting(text: str, _end: int, origin: Origin) -> list[Event]:
    """``Suspecting Member ... because it has not sent any heartbeats since ...``
    (``ClusterHeartbeatManager``, family §4)."""
    m = _RX_SUSPECTING.match(text)
    if m is None:
        raise PayloadError("heartbeat suspicion names no readable member")
    return [
        MemberSuspected(**_meta(origin), suspect=_address(m["addr"]), reason="heartbeat timeout")
    ]


def _claim_local(text: str, _end: int, origin: Origin) -> list[Event]:
    """``Local MembersView{...} with suspected members: [...] and initial addresses to ask:
    [...]`` (``MembershipManager``, family §5): the claim starts, from the claimant's list (the
    ``MembersView``) with the members it suspects, in their printed order; then one claim sent
    to each member it asks first (every member of its list it does not suspect, but itself)."""
    view, suspected, to_ask = _parse(text, "claim_local", "mastership claim start")
    _version, members = _members_view(view)
    found: list[tuple[str, ...]] = []
    for what, value in (("suspected member", suspected), ("member to ask", to_ask)):
        if not isinstance(value, tuple):
            raise PayloadError(f"the {what}s of a mastership claim are not a list")
        found.append(tuple(a for a in (_addr(x, what) for x in value) if a))
    return [
        MastershipClaimStarted(**_meta(origin), suspected=found[0], members=members),
        *(MastershipClaimSent(**_meta(origin), target=a) for a in found[1]),
    ]


def _more_recent(text: str, end: int, origin: Origin) -> list[Event]:
    """``A more recent MembersView{...} is received from [h]:p`` (``MembershipManager``, FINE,
    family §5): the claimant counts an accepted answer whose list is later than every list it
    knew (``fetchLatestMembersView``; a later answer no later than that is not logged)."""
    view, tail = _parse(text[end:], "lead_object", "received MembersView")
    version, members = _members_view(view)
    m = _RX_RECEIVED_FROM.match(tail)
    if m is None:
        raise PayloadError("a more recent MembersView names no readable sender")
    return [MastershipAcceptanceReceived(**_meta(origin), sender=_address(m["addr"]),
                                         version=version, members=members)]


def _asking(text: str, _end: int, origin: Origin) -> list[Event]:
    """``Asking MembersView of [h]:p`` (``MembershipManager``, FINE, family §5): the claimant
    asks a member it discovered in a later list (``fetchMembersViewFromNewMembers``)."""
    m = _RX_ASKING.match(text)
    if m is None:
        raise PayloadError("asking a MembersView names no readable address")
    return [MastershipClaimSent(**_meta(origin), target=_address(m["addr"]))]


def _claimed(text: str, end: int, origin: Origin) -> list[Event]:
    """``Mastership is claimed with: MembersView{...}`` (``MembershipManager``, family §5)."""
    view, _tail = _parse(text[end:].lstrip(), "lead_object", "claimed MembersView")
    version, members = _members_view(view)
    return [MastershipClaimed(**_meta(origin), version=version, members=members)]


def _accepted(text: str, _end: int, origin: Origin) -> list[Event]:
    """``Mastership of [h]:p is accepted. Response: MembersView{...}`` (``ClusterServiceImpl``, on
    a member accepting the claim, family §5)."""
    m = _RX_ACCEPTED.match(text)
    if m is None:
        raise PayloadError("mastership acceptance names no readable candidate")
    view, _tail = _parse(text[m.end() :], "lead_object", "accepted MembersView")
    version, _members = _members_view(view)
    return [
        MastershipClaimAccepted(**_meta(origin), candidate=_address(m["addr"]), version=version)
    ]


_LIFECYCLE: dict[str, Callable[[Origin], list[Event]]] = {
    "STARTING": lambda o: [MemberStarted(**_meta(o), uuid=None)],
    "SHUTTING_DOWN": lambda o: [ShutdownRequested(**_meta(o))],
    "SHUTDOWN": lambda o: [MemberLeft(**_meta(o))],
}


def _addressed(text: str, _end: int, origin: Origin) -> list[Event] | None:
    """Sentences that start with the logging member's address: §11 lifecycle ``[h]:p is
    STARTING`` (STARTED, MERGING, MERGED, MERGE_FAILED: no event), §6 ``[h]:p is merging [tcp/ip]
    to [h2]:p2`` (or ``[multicast]``, or ``to [h2]:p2, because: instructed by master ...``) and
    ``[h]:p should merge to us ...`` (no event). When the origin does not know the logging
    member, the address that starts the sentence is it."""
    m = _RX_LIFECYCLE.match(text)
    if m is not None:
        make = _LIFECYCLE.get(m["state"])
        return make(_origin_of(origin, m["addr"])) if make else []
    if " is merging " in text[:200]:
        m = _RX_MERGING.match(text)
        if m is None:
            raise PayloadError("split-brain merge names no readable target address")
        merging = _origin_of(origin, m["this"])
        return [SplitBrainMerge(**_meta(merging), target=_address(m["addr"]))]
    return [] if _RX_SHOULD_MERGE.match(text) else None


def _origin_of(origin: Origin, address: str) -> Origin:
    """`origin`, with the member `address` when the origin does not know its member."""
    if origin.member:
        return origin
    return Origin(_address(address), origin.file, origin.line, origin.order, origin.header)


def _banner(text: str, _end: int, _origin: Origin) -> list[Event] | None:
    """``Hazelcast 3.9.4 (20180420 - b8001d5) starting at [h]:p`` (``DefaultNodeExtension``, family
    §3): no event
    (the ``is STARTING`` line gives it)."""
    return [] if _RX_BANNER.match(text) else None


def _fetch(phase: str) -> _Handler:
    """The new master's partition-table fetch (``MigrationManager``'s
    ``FetchMostRecentPartitionTableTask``, family §7): ``Fetching partition tables from
    cluster ...`` (3.x ``Fetching most recent partition table! ...``), ``Most recent partition
    table is determined.`` (3.x ``Most recent partition table version: V``), ``Applying the most
    recent of partition state...``."""

    def handler(_text: str, _end: int, origin: Origin) -> list[Event]:
        return [PartitionTableFetch(**_meta(origin), phase=phase)]

    handler.__doc__ = _fetch.__doc__
    return handler


def _marking(text: str, end: int, origin: Origin) -> list[Event]:
    """``Marking active migration MigrationInfo{...} as FAILED`` (the new master's
    ``FetchMostRecentPartitionTableTask``, family §7)."""
    mig, _tail = _lead_migration(text, end)
    return [
        MigrationFailed(
            **_meta(origin),
            migration=mig.uuid,
            partition=mig.partition,
            reason="marked FAILED by the new master",
        )
    ]


def _repartitioning(text: str, end: int, origin: Origin) -> list[Event]:
    """``Repartitioning cluster data. Migration tasks count: N`` (``MigrationManager``'s
    ``RedoPartitioningTask``, family §9; 3.x ``Re-partitioning cluster data... Migration queue size:
    N``)."""
    m = _RX_TASKS.match(text, end)
    if m is None:
        raise PayloadError("repartitioning line has no migration task count")
    return [Repartitioning(**_meta(origin), planned=int(m["n"]))]


def _balanced(_text: str, _end: int, origin: Origin) -> list[Event]:
    """``Partition balance is ok, no need to repartition.`` (``MigrationManager``, family §9;
    3.x ``… no need to re-partition cluster data...``): nothing planned."""
    return [Repartitioning(**_meta(origin), planned=0)]


def _all_completed(text: str, end: int, origin: Origin) -> list[Event]:
    """``All migration tasks have been completed. (stats)`` (``MigrationManager``, family §9)."""
    return _stats_event(text, end, "completed", None, origin)


def _rebalance(text: str, end: int, origin: Origin) -> list[Event]:
    """``Rebalance process was failed|aborted. Ignoring remaining migrations. Will recalculate the
    new migration plan. (stats)`` (``MigrationManager``, family §9)."""
    outcome = "failed" if text.startswith("failed", end - 6) else "aborted"
    return _stats_event(text, end, outcome, None, origin)


def _remaining(text: str, end: int, origin: Origin) -> list[Event]:
    """``Remaining migration tasks: N. (stats)`` (``PublishPartitionRuntimeStateTask``, on the
    master, family §9; older releases: ``Remaining migration tasks in queue => N``, with or without
    the statistics; without them no event)."""
    m = _RX_REMAINING.match(text)
    if m is None:
        raise PayloadError("remaining migration tasks line has no task count")
    return _stats_event(text, m.end(), "progress", int(m["n"]), origin)


def _starting_migration(text: str, end: int, origin: Origin) -> list[Event]:
    """``Starting Migration: MigrationInfo{...}`` (``MigrationManager``, on the master, FINE,
    family §9)."""
    mig, _tail = _lead_migration(text, end)
    return [
        MigrationStarted(
            **_meta(origin),
            role="master",
            migration=mig.uuid,
            partition=mig.partition,
            source_member=mig.source,
            destination=mig.destination,
            source_current_index=mig.source_current_index,
            planned_version=mig.initial_version,
        )
    ]


def _finished_migration(text: str, end: int, origin: Origin) -> list[Event]:
    """``Finished Migration: MigrationInfo{... status=SUCCESS|FAILED}`` (``MigrationManager``, on
    the master, FINE, family §9)."""
    mig, _tail = _lead_migration(text, end)
    if mig.status == "SUCCESS":
        return [
            MigrationCommitted(
                **_meta(origin), role="master", migration=mig.uuid, partition=mig.partition
            )
        ]
    if mig.status == "FAILED":
        return [
            MigrationFailed(
                **_meta(origin),
                migration=mig.uuid,
                partition=mig.partition,
                reason="finished with status FAILED",
            )
        ]
    return [MigrationFinished(**_meta(origin), migration=mig.uuid, partition=mig.partition)]


def _task_completed(text: str, end: int, origin: Origin) -> list[Event]:
    """``AsyncMigrationTask completed: MigrationInfo{...}`` (``MigrationManager``'s
    ``MigrationPlanTask``, on the master, FINE, family §9, 4.1+): the migration is over for the
    plan task. Not the master's decision: it took it before (``Migration commit result``,
    ``Migration failed``), and the source may have finalized since."""
    mig, _tail = _lead_migration(text, end)
    return [MigrationFinished(**_meta(origin), migration=mig.uuid, partition=mig.partition)]


def _commit_result(text: str, _end: int, origin: Origin) -> list[Event]:
    """``Migration commit result true|false from [h]:p - uuid for MigrationInfo{...}``
    (``MigrationManager``, on the master, FINE in 5.x, FINEST before): the destination answered
    the commit, and the master commits the migration (``true``: it applies it to its table next)
    or rolls it back (``false``)."""
    m = _RX_COMMIT_RESULT.match(text)
    if m is None:
        raise PayloadError("migration commit result names no readable result or destination")
    mig, _tail = _lead_migration(text, m.end())
    kind = MigrationCommitted if m["result"] == "true" else MigrationRolledBack
    return [kind(**_meta(origin), role="master", migration=mig.uuid, partition=mig.partition)]


def _table_version(kind: str) -> _Handler:
    """The partition table versions of 3.x (one per table, family §8,
    ``InternalPartitionServiceImpl``, FINE): the master publishes its table (``Publishing
    partition state, version: V``) and a member applies the master's (``Applied partition state
    update with version: V``), or the migrations the master completed (3.9 to 3.12, ``Applied
    completed migrations with partition state version: V``, on every member the master included:
    most of a rebalance's versions are learnt this way). 4.x and later print stamps instead
    (``… partition state stamp: S``): no event."""

    def handler(text: str, _end: int, origin: Origin) -> list[Event]:
        m = _RX_TABLE_VERSION.match(text)
        if m is None:
            return []
        version = int(m["v"])
        if kind == "published":
            return [PartitionTablePublished(**_meta(origin), version=version)]
        return [PartitionTableApplied(**_meta(origin), version=version)]

    handler.__doc__ = _table_version.__doc__
    return handler


def _role(mig: _Migration, member: str) -> str | None:
    """The participant `member` is in `mig`: its source or its destination (a member that
    sends a backup migration's data as the partition owner is neither)."""
    if member and member == mig.source:
        return "source"
    if member and member == mig.destination:
        return "destination"
    return None


def _participant_start(role: str) -> _Handler:
    """A participant runs a migration (family §9): its source, the partition owner, sends the
    data (``MigrationRequestOperation``, FINEST: ``Invoking MigrationOperation for namespaces
    [...] and MigrationInfo{...}, firstFragment: b, lastFragment: b``, once per fragment; 3.x
    and 4.0 name no fragment as first); its destination installed it (``MigrationOperation``,
    FINEST: ``ReplicaVersions are set after migration. MigrationInfo{...}, namespace=...,
    replicaVersions=[...]``, once per namespace; older releases print only the partition id:
    no event). Only the member the ``MigrationInfo`` names in that role starts it (the owner
    that sends a backup's data is not its source)."""

    def handler(text: str, _end: int, origin: Origin) -> list[Event]:
        at = text.find("MigrationInfo{")
        if at < 0:
            return []
        mig, _tail = _lead_migration(text, at)
        if _role(mig, origin.member) != role:
            return []
        return [
            MigrationStarted(
                **_meta(origin),
                role=role,
                migration=mig.uuid,
                partition=mig.partition,
                source_member=mig.source,
                destination=mig.destination,
                source_current_index=mig.source_current_index,
                planned_version=mig.initial_version,
            )
        ]

    handler.__doc__ = _participant_start.__doc__
    return handler


def _finalizing(text: str, end: int, origin: Origin) -> list[Event]:
    """``Finalizing MigrationInfo{... status=SUCCESS|FAILED}`` (``MigrationManager``, FINE,
    family §9): the source or the destination commits (``SUCCESS``) or rolls back (``FAILED``)
    its part of the migration (``finalizeMigration``; the destination within the master's
    commit, the source when it learns the master's decision)."""
    mig, _tail = _lead_migration(text, end)
    role = _role(mig, origin.member)
    if role is None or mig.status not in ("SUCCESS", "FAILED"):
        return []
    kind = MigrationCommitted if mig.status == "SUCCESS" else MigrationRolledBack
    return [kind(**_meta(origin), role=role, migration=mig.uuid, partition=mig.partition)]


def _latest_partition(text: str, end: int, origin: Origin) -> list[Event]:
    """``Issue while determining latest partition... Latest: Partition {ID: P, Version: V} [...],
    Received: Partition {ID: P, Version: V} [...]`` (``InternalPartitionServiceImpl``'s
    ``FetchMostRecentPartitionTableTask``, WARNING, family §7): two members' tables hold one
    partition version with different replicas (``AbstractInternalPartition.toString``: one
    ``\tindex:[h]:p - uuid`` line per replica that is set, in the record's later lines)."""
    m = _RX_LATEST_PARTITION.fullmatch(text, end)
    if m is None:
        if "Received:" not in text or not text.rstrip().endswith("]"):
            raise PayloadError("the conflicting partitions are truncated")
        raise PayloadError("the conflicting partitions do not read as Partition {ID, Version}")
    if m["p1"] != m["p2"] or m["v1"] != m["v2"]:
        return []
    arrays = tuple(_replicas(m[body]) for body in ("r1", "r2"))
    return [PartitionTableConflict(**_meta(origin), partition=int(m["p1"]),
                                   version=int(m["v1"]), replicas=arrays)]


def _replicas(body: str) -> tuple[str | None, ...]:
    """The replica array of a ``Partition {...} [...]`` body: address per index, None where the
    partition has no replica at an index below the last one set."""
    found = {int(i): _address(a) for i, a in _RX_REPLICA_ENTRY.findall(body)}
    return tuple(found.get(i) for i in range(max(found, default=-1) + 1))


def _applying_completed(text: str, end: int, origin: Origin) -> list[Event]:
    """``Applying completed migration MigrationInfo{...}`` (``InternalPartitionServiceImpl``, FINE,
    family §8): the partition's version becomes ``initialPartitionVersion +
    partitionVersionIncrement`` (4.1+; older forms: no event)."""
    mig, _tail = _lead_migration(text, end)
    if mig.partition is None or mig.initial_version is None or mig.increment is None:
        return []
    return [
        PartitionVersionApplied(
            **_meta(origin), partition=mig.partition, version=mig.initial_version + mig.increment
        )
    ]


def _failure(reason: str, decides: bool = False) -> _Handler:
    """Migration failures and commit errors (``MigrationManager``, family §9): ``Failed migration
    from {member} for MigrationInfo{...}``, ``Migration failed: ...``, ``Error during ...``,
    ``Cannot commit ...``, ``Migration commit failed for ... since destination ... left the
    cluster`` (or ``since this node is shutting down.``), ``Migration commit to [h]:p failed for
    ...``. ``Migration failed`` (the migration operation failed) and ``Cannot commit`` (the
    destination left before the commit) are the master's decision to roll the migration back
    (`decides`): it marks it FAILED right after them."""

    def handler(text: str, end: int, origin: Origin) -> list[Event] | None:
        at = text.find("MigrationInfo{", end)
        if at < 0:
            return None
        mig, tail = _lead_migration(text, at)
        why = reason
        if reason == "commit failed" and "shutting down" in tail[:80]:
            why = "commit failed: this node is shutting down"
        elif reason == "commit failed" and "left the cluster" in tail[:200]:
            why = "commit failed: destination left the cluster"
        fields = {**_meta(origin), "migration": mig.uuid, "partition": mig.partition}
        if decides:
            return [MigrationRolledBack(**fields, role="master")]
        return [MigrationFailed(**fields, reason=why)]

    handler.__doc__ = _failure.__doc__
    return handler


def _partition_id(text: str, _end: int, origin: Origin) -> list[Event] | None:
    """``partitionId=P is completely lost!`` (``MigrationManager``'s repair task, family §10; lost
    event with lostBackupCount 6, the MAX_BACKUP_COUNT) and ``partitionId=P owner is removed.
    replicaIndex=i will be shifted up to 0. {Partition}`` (``... there is no other replica to shift
    up.``: no event)."""
    m = _RX_PARTITION_ID.match(text)
    if m is None:
        return None
    partition = int(m["p"])
    if m["lost"]:
        return [PartitionLost(**_meta(origin), partition=partition, lost_backup_count=6)]
    if m["none"]:
        return []
    return [PromotionCommitted(**_meta(origin), partition=partition, replica_index=int(m["i"]))]


def _replica_lost(text: str, _end: int, origin: Origin) -> list[Event]:
    """``Partition replica is lost! partitionId=P namespace: ns lost replicaIndex=L ...``
    (``FinalizePromotionOperation``, family §10). The printed index is already ``i - 1`` for a
    promotion from backup index ``i`` and is the lostBackupCount of the lost event fired next, so it
    is taken as printed (promotion from index 1 prints 0)."""
    m = _RX_REPLICA_LOST.match(text)
    if m is None:
        raise PayloadError("lost replica line has no partitionId or lost replicaIndex")
    lost = int(m["i"])
    return [
        PartitionLost(
            **_meta(origin), partition=int(m["p"]), lost_backup_count=lost if lost >= 0 else None
        )
    ]


# --- §9 the migration planner (``MigrationManager``, ``MigrationPlanner``, FINEST) -------------

#: §1 a replica as a planner array prints it: ``PartitionReplica`` ``[h]:p - uuid`` (3.x's
#: ``Address`` ``[h]:p``), or ``null`` for an empty index
_REPLICA = rf"(?:null|{_A}(?:[ \t]+-[ \t]+{_U})?)"
#: ``Arrays.toString`` of a replica array
_ARRAY = rf"\[[ \t]*(?:{_REPLICA}(?:,[ \t]*{_REPLICA})*)?[ \t]*\]"
_RX_ARRAY_ITEM = re.compile(
    rf"(?:\[|,)[ \t]*(?:(?P<null>null)|(?P<addr>{_A})(?:[ \t]+-[ \t]+{_U})?)")
_RX_PLANNING = re.compile(
    rf"Planning migrations for partitionId=(?P<p>\d+)\. Current replicas: (?P<current>{_ARRAY}), "
    rf"New replicas: (?P<target>{_ARRAY})\s*")


def _r(name: str) -> str:
    return f"(?P<{name}>{_REPLICA})"


def _i(name: str) -> str:
    return rf"(?P<{name}>-?\d+)"


#: ``MigrationPlanner.planMigrations``'s FINEST lines after ``partitionId=%d, ``: the wording
#: (its name is the group's) of each state and decision
_PLANNER_LINES = {
    "initial": rf"Initial state: (?P<array>{_ARRAY})",
    "cycle_fixed": rf"Final state \(after cycle fix\): (?P<array>{_ARRAY})",
    "final": rf"Final state: (?P<array>{_ARRAY})",
    "pass": rf"Current index: {_i('i')}, state: (?P<array>{_ARRAY})",
    "clear": rf"New address is null at index: {_i('i')}",
    "copy": rf"COPY {_r('d')} to index: {_i('i')}",
    "shift_up_2": rf"SHIFT UP-2 {_r('d')} from old addresses index: {_i('j')} "
                  rf"to index: {_i('i')}",
    "shift_up": rf"SHIFT UP {_r('d')} from old addresses index: {_i('j')} "
                rf"to index: {_i('i')}(?: (?:and|AND) SHIFT DOWN {_r('s')} to index: "
                rf"{_i('k')}| with source: {_r('w')}(?: will get another MOVE "
                rf"migration to index: {_i('n')})?)?",
    "shift_down": rf"SHIFT DOWN {_r('s')} to index: {_i('k')}, COPY "
                  rf"{_r('d')} to index: {_i('i')}",
    "move_3": rf"MOVE-3 {_r('d')} to index: {_i('i')}",
    "move_2": rf"MOVE-2 {_r('d')}[ \t]+to index: {_i('i')}",
    "move": rf"MOVE {_r('d')} to index: {_i('i')}",
}
_RX_PLANNER = re.compile(r"partitionId=(?P<p>\d+),[ \t]+(?:" + "|".join(
    f"(?P<{name}>{rx.replace('(?P<', f'(?P<{name}_')})" for name, rx in _PLANNER_LINES.items())
    + r")\s*\Z")
#: the fixed wording of each: a line that has it and does not read is malformed, not foreign
_RX_PLANNER_WORDING = re.compile(
    r"partitionId=\d+,[ \t]+(?:Initial state:|Final state|Current index:|New address is null"
    r"|COPY |SHIFT UP|SHIFT DOWN |MOVE )")
_RX_ORDER_ITEM = re.compile(r"(?:\[|,)\s*(?P<n>\d+)-[ \t]+(?=MigrationInfo\{)")


def _replica_array(text: str) -> tuple[str | None, ...]:
    """The members of ``Arrays.toString`` of a replica array (`_ARRAY`), None where it prints
    ``null``."""
    return tuple(None if m["null"] else _address(m["addr"])
                 for m in _RX_ARRAY_ITEM.finditer(text))


def _replica_of(value: str | None) -> str | None:
    """A replica the planner prints (`_REPLICA`): its member's address, None for ``null``."""
    if value is None or value == "null":
        return None
    return _split_member(value).address


def _planning(text: str, _end: int, origin: Origin) -> list[Event]:
    """``Planning migrations for partitionId=P. Current replicas: [...], New replicas: [...]``
    (``MigrationManager``, FINEST, family §9): the master plans a partition's migrations."""
    m = _RX_PLANNING.fullmatch(text)
    if m is None:
        raise PayloadError("the replicas of a partition's planning are truncated or malformed")
    return [PlanStarted(**_meta(origin), partition=int(m["p"]),
                        current=_replica_array(m["current"]),
                        target=_replica_array(m["target"]))]


def _planner(text: str, _end: int, origin: Origin) -> list[Event] | None:
    """``partitionId=P, ...`` (``MigrationPlanner.planMigrations``, FINEST, family §9): the
    planner's initial and final states (``Initial state: [...]``, ``Final state: [...]``,
    ``Final state (after cycle fix): [...]``), each pass of its loop (``Current index: i, state:
    [...]``) and each decision (``New address is null at index: i``, ``COPY``, ``MOVE``,
    ``MOVE-2``, ``MOVE-3``, ``SHIFT DOWN``, ``SHIFT UP``, ``SHIFT UP-2`` ``... to index: i``)."""
    m = _RX_PLANNER.match(text)
    if m is None:
        if _RX_PLANNER_WORDING.match(text):
            raise PayloadError("a line of the migration planner is truncated or malformed")
        return None
    case = next(name for name in _PLANNER_LINES if m[name] is not None)
    g = {k[len(case) + 1:]: v for k, v in m.groupdict().items()
         if v is not None and k.startswith(f"{case}_")}
    partition = int(m["p"])
    fields = {**_meta(origin), "partition": partition}
    if case in ("initial", "final", "cycle_fixed", "pass"):
        return [PlanState(**fields, stage=case.replace("_", "-"),
                          replicas=_replica_array(g["array"]),
                          index=int(g["i"]) if case == "pass" else -1)]
    i = int(g["i"])
    d = _replica_of(g.get("d"))
    if case == "clear":
        call = ("CLEAR", None, i, -1, None, -1, -1)
    elif case == "copy":
        call = ("COPY", None, -1, -1, d, -1, i)
    elif case == "shift_up_2":
        call = ("SHIFT_UP", None, -1, -1, d, int(g["j"]), i)
    elif case == "shift_up":
        source = _replica_of(g.get("s", g.get("w")))
        call = ("SHIFT_UP", source, i, int(g.get("k", -1)), d, int(g["j"]), i)
    elif case == "shift_down":
        call = ("SHIFT_DOWN", _replica_of(g["s"]), i, int(g["k"]), d, -1, i)
    else:  # move, move_2, move_3: the source is the holder of the index
        call = ("MOVE", None, i, -1, d, -1, i)
    kind, source, sc, sn, dst, dc, dn = call
    return [PlanDecision(**fields, kind=kind, source_member=source, source_current_index=sc,
                         source_new_index=sn, destination=dst, destination_current_index=dc,
                         destination_new_index=dn,
                         case={"move_2": "MOVE-2", "move_3": "MOVE-3"}.get(case, ""),
                         returns_to=int(g.get("n", -1)))]


def _migration_args(obj: _Obj) -> tuple[int, tuple[str | None, int, int, str | None, int, int]]:
    """The partition and the six ``migrate`` arguments of a ``MigrationInfo{...}``
    (``MigrationInfo.toString``)."""
    if not obj.name.endswith("MigrationInfo"):
        raise PayloadError(f"expected a MigrationInfo, found {obj.name[:40]!r}")
    f = obj.fields
    numbers = []
    for key in ("partitionId", "sourceCurrentReplicaIndex", "sourceNewReplicaIndex",
                "destinationCurrentReplicaIndex", "destinationNewReplicaIndex"):
        value = _int(f.get(key), key)
        if value is None:
            raise PayloadError(f"MigrationInfo lacks {key}")
        numbers.append(value)
    p, sc, sn, dc, dn = numbers
    return p, (_addr(f.get("source"), "MigrationInfo source"), sc, sn,
               _addr(f.get("destination"), "MigrationInfo destination"), dc, dn)


def _order(text: str, end: int, origin: Origin) -> list[Event]:
    """``Migration order after prioritization: [`` then ``\\n\\t0- MigrationInfo{...},`` a line
    each and ``]`` (``MigrationPlanner.prioritizeCopiesAndShiftUps``, FINEST, family §9, the
    record's lines joined): the migrations of one partition in the order they run. With none,
    ``Migration order after prioritization: ]`` (the builder drops its ``[``): no partition is
    named, no event."""
    rest = text[end:].strip()
    if rest == "]":
        return []
    items = list(_RX_ORDER_ITEM.finditer(rest))
    if not rest.startswith("[") or not items or items[0].start() != 0:
        if not rest.rstrip().endswith("]"):
            raise PayloadError("the migration order is truncated: no closing bracket")
        raise PayloadError("the migration order is not a list of numbered MigrationInfos")
    if not rest.endswith("]"):
        raise PayloadError("the migration order is truncated: no closing bracket")
    partitions: set[int] = set()
    migrations = []
    for k, item in enumerate(items):
        if int(item["n"]) != k:
            raise PayloadError(f"the migration order numbers its entry {k} as {item['n']}")
        stop = items[k + 1].start() if k + 1 < len(items) else len(rest) - 1
        obj, tail = _parse(rest[item.end():stop].rstrip(), "lead_object", "MigrationInfo")
        if tail.strip():
            raise PayloadError(f"text after a MigrationInfo of the order: {tail[:40]!r}")
        partition, args = _migration_args(obj)
        partitions.add(partition)
        migrations.append(args)
    if len(partitions) != 1:
        raise PayloadError("the migration order names several partitions")
    return [PlanOrder(**_meta(origin), partition=partitions.pop(), migrations=tuple(migrations))]


def _lost_event(text: str, at: int, origin: Origin) -> list[Event]:
    """Any text holding ``PartitionLostEventImpl{partitionId=P, lostBackupCount=N,
    eventSource=[h]:p}`` (its ``toString``, families §1 and §10; 3.x
    ``PartitionLostEvent{...}``)."""
    obj, _tail = _parse(text[at:], "lead_object", "PartitionLostEventImpl")
    partition = _int(obj.fields.get("partitionId"), "PartitionLostEventImpl partitionId")
    if partition is None:
        raise PayloadError("PartitionLostEventImpl has no partitionId")
    count = _int(obj.fields.get("lostBackupCount"), "PartitionLostEventImpl lostBackupCount")
    return [PartitionLost(**_meta(origin), partition=partition, lost_backup_count=count)]


def _shutdown_handled(text: str, _end: int, origin: Origin) -> list[Event]:
    """``Shutdown request of Member [h]:p - uuid is handled`` (``MigrationManager``, on the master,
    family §11)."""
    m = _RX_SHUTDOWN.match(text)
    if m is None:
        raise PayloadError("handled shutdown request names no readable member")
    return [ShutdownRequestHandled(**_meta(origin), requester=_address(m["addr"]))]


def _state_change(text: str, end: int, origin: Origin) -> list[Event]:
    """``Changing cluster state from ClusterState{state=X, lock=...} to
    ClusterStateChange{type=..., newState=Y}, initiator: [h]:p, transient: b`` (also bare ``from
    X to Y``) (``CommitClusterStateOp``, family §12); a change of the cluster *version* gives no
    event."""
    old, new = _parse(text[end:], "state_change", "cluster state change")
    old_name, new_name = _state_name(old, "the old cluster state"), _state_name(new, "the change")
    if old_name is None or new_name is None:
        return []
    return [ClusterStateChanged(**_meta(origin), old=old_name, new=new_name)]


#: (family, fixed wording at the start of the payload, handler); the handler gets the end of the
#: wording. Order matters only where one wording is a prefix of another.
_FAMILIES: tuple[tuple[str, str, _Handler], ...] = (
    ("member_list", r"Members (?:\{[ \t]*size[ \t]*:|\[[ \t]*\d)", _member_list),
    ("member_list_sent", r"Sending member list to ", _recognised),
    ("removing", r"Removing Member\b", _removing),
    ("member_verb", r"Member \[", _member_verb),
    ("removed_suspicion", r"Removed suspicion of Member\b", _removed_suspicion),
    ("explicit", r"Received suspicion request from:", _explicit),
    ("suspecting", r"Suspecting Member\b", _suspecting),
    ("claim_begin", r"Starting mastership claim process", _recognised),
    ("claim_local", r"Local MembersView\{", _claim_local),
    ("more_recent", r"A more recent (?=MembersView\{)", _more_recent),
    ("asking", r"Asking MembersView of\b", _asking),
    ("claimed", r"Mastership is claimed with:", _claimed),
    ("accepted", r"Mastership of\b", _accepted),
    ("addressed", rf"{_A}[ \t]", _addressed),
    ("banner", r"Hazelcast[ \t]", _banner),
    ("we_merge", r"We should merge to ", _recognised),
    ("version_bump", r"Updating local member list version:", _recognised),
    (
        "fetching",
        r"Fetching (?:partition tables from cluster to determine the most recent one"
        r"|most recent partition table)",
        _fetch("fetching"),
    ),
    ("determined", r"Most recent partition table (?:is determined|version)", _fetch("determined")),
    ("applying", r"Applying the most recent of partition state", _fetch("applying")),
    ("latest_partition", r"Issue while determining latest partition\.\.\.", _latest_partition),
    ("published_version", r"Publishing partition state, version:", _table_version("published")),
    ("applied_version", r"Applied partition state update with version:",
     _table_version("applied")),
    ("applied_completed", r"Applied completed migrations with partition state version:",
     _table_version("applied")),
    ("marking", r"Marking active migration[ \t]+(?=MigrationInfo\{)", _marking),
    ("repartitioning", r"Re-?partitioning cluster data", _repartitioning),
    ("balanced", r"Partition balance is ok, no need to re-?partition", _balanced),
    ("all_completed", r"All migration tasks have been completed", _all_completed),
    ("rebalance", r"Rebalance process was (?:failed|aborted)", _rebalance),
    ("remaining", r"Remaining migration tasks", _remaining),
    ("starting_migration", r"Starting Migration:[ \t]*(?=MigrationInfo\{)", _starting_migration),
    ("finished_migration", r"Finished Migration:[ \t]*(?=MigrationInfo\{)", _finished_migration),
    ("task_completed", r"AsyncMigrationTask completed:[ \t]*(?=MigrationInfo\{)", _task_completed),
    ("finalizing", r"Finalizing[ \t]+(?=MigrationInfo\{)", _finalizing),
    ("source_start", r"Invoking MigrationOperation for namespaces\b", _participant_start("source")),
    ("destination_start", r"ReplicaVersions are set after migration\.[ \t]+(?=MigrationInfo\{)",
     _participant_start("destination")),
    (
        "applying_completed",
        r"Applying completed migration[ \t]+(?=MigrationInfo\{)",
        _applying_completed,
    ),
    ("failed_from", r"Failed migration from ", _failure("failed migration")),
    ("migration_failed", r"Migration failed:", _failure("migration failed", decides=True)),
    ("error_during", r"Error during ", _failure("error during migration")),
    (
        "cannot_commit",
        r"Cannot commit (?=MigrationInfo\{)",
        _failure("destination is not a member anymore", decides=True),
    ),
    ("commit_failed", r"Migration commit failed for ", _failure("commit failed")),
    ("commit_result", r"Migration commit result (?:true|false) from ", _commit_result),
    (
        "commit_to_failed",
        rf"Migration commit to[ \t]+{_A}[ \t]+failed for ",
        _failure("commit failed"),
    ),
    ("planner", r"partitionId=\d+,[ \t]", _planner),
    ("planning", r"Planning migrations for partitionId=\d", _planning),
    ("planned", r"Planned migration -> partitionId=\d", _recognised),
    ("order", r"Migration order after prioritization:", _order),
    ("prioritizing", r"(?:Trying to prioritize migration:|Skipping non-copy migration:"
                     r"|Cannot prioritize against |Prioritizing migration )", _recognised),
    ("partition_id", r"partitionId=\d", _partition_id),
    ("replica_lost", r"Partition replica is lost!", _replica_lost),
    ("lost_owners", r"Assigning new owners for \d+ LOST partitions", _recognised),
    ("shutdown_handled", r"Shutdown request of Member\b", _shutdown_handled),
    ("state_change", r"Changing cluster state (?:state )?from[ \t]+", _state_change),
)

_FAMILY = re.compile("|".join(f"(?P<{name}>{rx})" for name, rx, _h in _FAMILIES))
_HANDLERS: dict[str, _Handler] = {name: handler for name, _rx, handler in _FAMILIES}
_LOST_EVENT = re.compile(r"PartitionLostEvent(?:Impl)?\{")


#: the start of family §2's text (`_FAMILIES`' first), in bytes
_RX_LIST_FAMILY = re.compile(_FAMILIES[0][1].encode())
assert _FAMILIES[0][0] == "member_list"


def parse_member_list(raw: bytes, origin: Origin) -> list[Event] | None:
    """`parse_payload` of a record in UTF-8 that begins as a member list does (``Members``, with
    no whitespace around it; the scanner's usual shape of family §2): the same events, and
    those of a list another member's copy showed already without decoding it again
    (`_listed`)."""
    if _RX_LIST_FAMILY.match(raw) is None:
        return parse_payload(raw.decode(), origin)
    try:
        return _list_events(_listed(raw), origin)
    except PayloadError:
        raise
    except Exception as exc:  # `parse_payload`'s contract
        raise PayloadError(f"internal error while parsing the payload ({exc!r:.80})") from None


def parse_payload(text: str, origin: Origin) -> list[Event] | None:
    """The events of one Hazelcast log payload (the message families §2-§12 of
    docs/validation.md, "The messages read").

    Returns None when `text` is not a protocol message we model, a list of events (possibly
    empty) when it is, and raises :class:`PayloadError` when it is recognisably one of ours but
    malformed or truncated. Never raises anything else."""
    try:
        text = text.strip()
        m = _FAMILY.match(text)
        if m is not None:
            family = m.lastgroup
            assert family is not None
            return _HANDLERS[family](text, m.end(), origin)
        if "LostEvent" in text:
            lost = _LOST_EVENT.search(text)
            if lost is not None:
                return _lost_event(text, lost.start(), origin)
        return None
    except PayloadError:
        raise
    except Exception as exc:  # a last line of defence: the contract is PayloadError or nothing
        raise PayloadError(f"internal error while parsing the payload ({exc!r:.80})") from None

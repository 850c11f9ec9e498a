"""Apache Ignite 3 logs: their layouts, the rebalance and raft messages, and the events they give
(docs/validation.md, "Ignite 3 logs").

Layouts (`record`). Ignite 3 writes a record on one line, a throwable on the lines after it:

- production, java.util.logging with ``org.apache.ignite.internal.lang.JavaLoggerFormatter``
  (``packaging/db/ignite.java.util.logging.properties``):
  ``yyyy-MM-dd HH:mm:ss:SSS Z [LEVEL][thread][Logger] message``, LEVEL one of TRACE, DEBUG, INFO,
  WARNING, ERROR, the logger's simple name;
- tests, log4j2 (``modules/core/src/testFixtures/resources/log4j2-test.xml``):
  ``[%d{ISO8601}][%-5p][%t][%c{1}]%notEmpty{[%markerSimpleName]} %m`` (the console's
  ``%highlight`` escapes are taken off).

A thread is ``%<node name>%<pool>-<n>`` (``IgniteThread``): the node name is the member of the
line. JRaft's lines name their raft node themselves, ``<groupId/peerId>`` (``NodeId``), its
``PeerId`` ``consistentId[:idx][:priority]``; the member of a raft event is that consistent id.

Messages (`MESSAGES`). Each is recognised by its fixed wording (one regular expression, in the
wording of the class that logs it, every era of docs/validation.md's table), and its structured
values (``Assignments``, ``PeersAndLearners``, ``HybridTimestamp``, Java collections) are read by
the lark grammar ``ignite.lark``. A line is scanned only when it holds one of `KEYWORDS`
(Aho-Corasick over whole blocks, as for Hazelcast logs; `partsafe.traces.scanner`).

Events. What a message shows, and nothing it does not: an assignments write (pending, planned,
stable, switch.reduce, the change trigger's timestamp) where the writing node logs it, a raft
node's start with its term and configuration (a node whose raft node of a group starts again
with term 0 in its old configuration restarted with in-memory storage, as JRaft keeps term and
vote in its meta storage otherwise), a candidate's vote for itself, a leader with its term and
configuration, a configuration a leader put in place (its catch-up phase finished), and the
two-leaders detector of ``NodeImpl``. Revisions are not logged: they are 0.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta, timezone
from importlib.resources import files
from typing import Any, NamedTuple

import ahocorasick_rs
from lark import Lark, Token, Transformer
from lark.exceptions import LarkError

from partsafe.refimpl.metastore import PENDING, PLANNED, REDUCE, STABLE, TRIGGER
from partsafe.traces import layout
from partsafe.traces.events import (
    UNKNOWN_MEMBER,
    AssignmentsChanged,
    DataNodesChanged,
    Event,
    MemberStarted,
    NodeRestarted,
    RaftLeader,
    RaftPeersChanged,
    RaftStarted,
    RaftVote,
    Source,
)

__all__ = ["KEYWORDS", "IgniteError", "IgniteFile", "Record", "looks_like_ignite", "record"]

# --- layouts ---------------------------------------------------------------------------------

#: JavaLoggerFormatter: ``DATE_FORMATTER`` ``yyyy-MM-dd HH:mm:ss:SSS Z``, then
#: ``[LEVEL][thread][logger] ``
JUL_PATTERN = (r"(?P<date>\d{4}-\d\d-\d\d \d\d:\d\d:\d\d):(?P<ms>\d{3}) (?P<zone>[+-]\d{4}) "
               r"\[(?P<level>TRACE|DEBUG|INFO|WARNING|ERROR|ALL|OFF)\]"
               r"\[(?P<thread>[^\]\n]*)\]\[(?P<logger>[^\]\n]*)\] ")
#: log4j2-test.xml: ``[%d{ISO8601}][%-5p][%t][%c{1}]%notEmpty{[%markerSimpleName]} ``
LOG4J_PATTERN = (r"\[(?P<date>\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d),(?P<ms>\d{3})\]"
                 r"\[(?P<level>TRACE|DEBUG|INFO|WARN|ERROR|FATAL) {0,2}\]"
                 r"\[(?P<thread>[^\]\n]*)\]\[(?P<logger>[^\]\n]*)\](?:\[[^\]\n]*\])? ")
_JUL = re.compile(JUL_PATTERN, re.ASCII)
_LOG4J = re.compile(LOG4J_PATTERN, re.ASCII)
#: ANSI escapes (log4j2's ``%highlight`` and ``%style`` on the console)
_ANSI = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")
#: an Ignite thread: ``%<node name>%<pool>-<n>``
_THREAD_NODE = re.compile(r"%([^%]+)%")


class Record(NamedTuple):
    """One log record's header and message."""

    order: int | None  # epoch milliseconds (UTC)
    level: str
    thread: str
    logger: str
    node: str  # the node name of an Ignite thread, else ""
    message: str


def record(text: str) -> Record | None:
    """The header and message of an Ignite 3 log line in either layout, or None."""
    if "\x1b[" in text:
        text = _ANSI.sub("", text)
    m = _JUL.match(text) or _LOG4J.match(text)
    if m is None:
        return None
    zone = m.groupdict().get("zone")
    order = _millis(m.group("date"), m.group("ms"), zone)
    thread = m.group("thread")
    t = _THREAD_NODE.match(thread)
    return Record(order, m.group("level"), thread, m.group("logger"), t.group(1) if t else "",
                  text[m.end():])


def _millis(date: str, ms: str, zone: str | None) -> int | None:
    try:
        when = datetime.strptime(date.replace("T", " "), "%Y-%m-%d %H:%M:%S")
    except ValueError:
        return None
    tz = UTC
    if zone:
        sign = -1 if zone[0] == "-" else 1
        tz = timezone(sign * timedelta(hours=int(zone[1:3]), minutes=int(zone[3:5])))
    return int(when.replace(tzinfo=tz).timestamp()) * 1000 + int(ms)


def looks_like_ignite(line: str) -> bool:
    """Whether a line is an Ignite 3 record in one of its layouts."""
    if "\x1b[" in line:
        line = _ANSI.sub("", line)
    return _JUL.match(line) is not None or _LOG4J.match(line) is not None


# --- values ----------------------------------------------------------------------------------


class JObj(NamedTuple):
    """``Name [k=v, ...]`` (IgniteToStringBuilder), or a collection: `name` and either `fields`
    (pairs) or `items` (bare values)."""

    name: str
    fields: dict[str, Any]
    items: tuple[Any, ...]


class _Values(Transformer):
    def KEY_EQ(self, tok: Token) -> str:
        return str(tok)[:-1]

    def SCALAR(self, tok: Token) -> str:
        return str(tok)

    def NAME(self, tok: Token) -> str:
        return str(tok)

    def pair(self, children: list[Any]) -> tuple[str, Any]:
        return ("=", children[0], children[1] if len(children) > 1 else "")

    def _obj(self, name: str, children: list[Any]) -> JObj:
        fields = {c[1]: c[2] for c in children if isinstance(c, tuple) and c[:1] == ("=",)}
        items = tuple(c for c in children if not (isinstance(c, tuple) and c[:1] == ("=",)))
        return JObj(name, fields, items)

    def named(self, children: list[Any]) -> JObj:
        return self._obj(children[0], children[1:])

    def bare(self, children: list[Any]) -> JObj:
        return self._obj("", children)

    def fields(self, children: list[Any]) -> JObj:
        return self._obj("", children)

    def value(self, children: list[Any]) -> Any:
        return children[0]


_GRAMMAR = Lark((files("partsafe.traces") / "ignite.lark").read_text(), parser="lalr",
                start=["fields", "value"], transformer=_Values(), maybe_placeholders=False)


class IgniteError(ValueError):
    """A message of ours (its wording recognised) whose values do not parse; .reason says why."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


def parse_fields(text: str) -> dict[str, Any]:
    """A bracketed field list ``[k=v, ...]`` as a dict."""
    try:
        return _GRAMMAR.parse(text, start="fields").fields  # type: ignore[no-any-return]
    except LarkError as exc:
        raise IgniteError(f"its field list does not parse ({type(exc).__name__})") from None


def parse_value(text: str) -> Any:
    """One value: an object, a collection, or a scalar."""
    text = text.strip()
    if not text:
        return ""
    try:
        return _GRAMMAR.parse(text, start="value")
    except LarkError as exc:
        raise IgniteError(f"the value {text[:60]!r} does not parse ({type(exc).__name__})"
                          ) from None


#: 2022's PeerId was an endpoint, ``host:port[:idx][:priority]``
_ENDPOINT = re.compile(r"[^:\s]+:\d{4,5}")


def peer_member(peer: str) -> str:
    """The member a JRaft ``PeerId`` names: its consistent id (``consistentId[:idx][:priority]``;
    in 2022, before consistent ids, the endpoint ``host:port``)."""
    peer = peer.strip()
    m = _ENDPOINT.match(peer)
    if m is not None and (m.end() == len(peer) or peer[m.end()] == ":"):
        return m.group(0)
    return peer.split(":", 1)[0]


def node_id(text: str) -> tuple[str, str]:
    """A JRaft ``NodeId`` ``<groupId/peerId>``: (group, member)."""
    group, _, peer = text.strip("<>").rpartition("/")
    return group, peer_member(peer)


def conf_members(text: str) -> tuple[str, ...]:
    """The voting peers of a JRaft ``Configuration`` (``a,b:1,c/learner``; learners left out),
    sorted."""
    out = {peer_member(p) for p in text.split(",") if p.strip() and not p.endswith("/learner")}
    return tuple(sorted(out))


def nodes_of(value: Any) -> tuple[str, ...]:
    """The voting members a logged value names, sorted: ``Assignment [consistentId=X,
    isPeer=true]`` (learners left out), ``Peer [consistentId=X, idx=0]``, 2022's ``ClusterNode
    [id=.., name=X, ...]``, ``Assignments [nodes=...]``, the head of an ``AssignmentsQueue``,
    the peers of ``PeersAndLearners``, any collection of them, a bare PeerId."""
    out: set[str] = set()
    _nodes(value, out)
    return tuple(sorted(out))


def _nodes(value: Any, out: set[str]) -> None:
    if isinstance(value, str):
        if value and value != "null":
            out.add(peer_member(value))
        return
    if not isinstance(value, JObj):
        return
    f = value.fields
    if value.name == "Assignment":
        if str(f.get("isPeer", "true")) != "false":
            out.add(str(f.get("consistentId", "")))
    elif value.name == "Peer":
        out.add(str(f.get("consistentId", "")))
    elif "name" in f and value.name.startswith(("ClusterNode", "LogicalNode")):
        out.add(str(f["name"]))
    elif value.name == "Assignments":
        _nodes(f.get("nodes"), out)
    elif value.name == "AssignmentsQueue":
        queue = f.get("queue")
        if isinstance(queue, JObj) and queue.items:
            _nodes(queue.items[0], out)  # the configuration the group moves to now
    elif value.name == "PeersAndLearners":
        _nodes(f.get("peers"), out)
    elif not f:
        for item in value.items:
            _nodes(item, out)
    out.discard("")


def hlc(value: Any) -> int | None:
    """A ``HybridTimestamp [physical=..., logical=..., composite=N]`` (or a bare long) as its
    long value, which the change trigger holds."""
    if isinstance(value, JObj) and "composite" in value.fields:
        value = value.fields["composite"]
    try:
        return int(str(value))
    except ValueError:
        return None


def group_of(fields: dict[str, Any]) -> str:
    """The raft group (a zone's or a table's partition, ``<id>_part_<n>``) a field list names."""
    for key in ("zonePartitionId", "tablePartitionId", "tablePartitionID", "grp", "group"):
        if key in fields:
            return str(fields[key])
    if "key" in fields:
        return str(fields["key"]).rsplit(".", 1)[-1]
    if "table" in fields and "partition" in fields:
        return f"{fields['table']}_part_{fields['partition']}"
    return ""


def partition_of(group: str) -> int:
    _, _, n = group.rpartition("_part_")
    return int(n) if n.isdigit() else 0


# --- messages --------------------------------------------------------------------------------


@dataclass
class _Context:
    """What a message's handler knows: where the line is, who logged it, and what this file
    showed before (each raft node's starts)."""

    file: str
    line: int = 0
    order: int | None = None
    member: str = UNKNOWN_MEMBER
    #: (member, group) -> how often this file showed its raft node start
    inits: dict[tuple[str, str], int] = field(default_factory=dict)
    #: the node this file is the log of, once a line names it
    node: str = ""

    def source(self) -> Source:
        return Source(self.file, self.line)


Handler = Callable[[re.Match[str], _Context], list[Event]]


def _assignments(ctx: _Context, group: str, key: str, nodes: tuple[str, ...] = (),
                 removed: bool = False, value: int | None = None) -> AssignmentsChanged:
    return AssignmentsChanged(member=ctx.member, partition=partition_of(group), key=key,
                              nodes=nodes, revision=0, removed=removed, value=value,
                              group=group, order=ctx.order, source=ctx.source())


def _pending(m: re.Match[str], ctx: _Context) -> list[Event]:
    """``ZoneRebalanceUtil`` / ``RebalanceUtil``: ``Update metastore pending partitions key
    [key={}, partition={}, zone={}/{}, newVal={}, timestamp={}]`` (the table eras: ``table=``,
    no timestamp), or ``GroupUpdateRequestHandler``'s ``Force update ...``: pending written, and
    with the timestamp the change trigger."""
    f = parse_fields(m.group("fields"))
    group = group_of(f)
    out: list[Event] = [_assignments(ctx, group, PENDING, nodes_of(f.get("newVal")))]
    if "timestamp" in f and not m.group("force"):
        stamp = hlc(f["timestamp"])
        if stamp is None:
            raise IgniteError("its timestamp is not a HybridTimestamp")
        out.append(_assignments(ctx, group, TRIGGER, value=stamp))
    return out


def _pending_2022(m: re.Match[str], ctx: _Context) -> list[Event]:
    """June 2022 ``RebalanceUtil``: ``Update metastore pending partitions key={} for
    partition={}, table={} to {}``."""
    group = m.group("key").rsplit(".", 1)[-1]
    return [_assignments(ctx, group, PENDING, nodes_of(parse_value(m.group("val"))))]


def _planned(m: re.Match[str], ctx: _Context) -> list[Event]:
    """``Update metastore planned partitions key [key={}, partition={}, ..., newVal={}]``."""
    f = parse_fields(m.group("fields"))
    return [_assignments(ctx, group_of(f), PLANNED, nodes_of(f.get("newVal")))]


def _planned_2022(m: re.Match[str], ctx: _Context) -> list[Event]:
    group = m.group("key").rsplit(".", 1)[-1]
    return [_assignments(ctx, group, PLANNED, nodes_of(parse_value(m.group("val"))))]


def _planned_removed(m: re.Match[str], ctx: _Context) -> list[Event]:
    """``Remove planned key because current pending key has the same value [key={}, ...]`` and
    ``... because pending is empty and calculated assignments are equal to current assignments
    [...]`` (June 2022: ``Remove planned key={} for partition={}, table={} due to the fact, that
    current pending key has the same value as planned={}``)."""
    return [_assignments(ctx, group_of(parse_fields(m.group("fields"))), PLANNED, removed=True)]


def _planned_removed_2022(m: re.Match[str], ctx: _Context) -> list[Event]:
    group = m.group("key").rsplit(".", 1)[-1]
    return [_assignments(ctx, group, PLANNED, removed=True)]


def _finished(kind: str) -> Handler:
    """``ZoneRebalanceRaftGroupEventsListener.logSwitchSuccess`` (the table eras'
    ``RebalanceRaftGroupEventsListener``): the stable switch's writes, each as its branch makes
    them (``doStableKeySwitch``). FINISH: stable = appliedPeers, pending removed. The planned
    branch: stable, pending = plannedPeers, planned removed. The reduction branch: stable,
    pending = plannedPeers = appliedPeers less switch.reduce, and switch.reduce = appliedPeers
    less plannedPeers (switch.reduce and appliedPeers in common). The addition branch: stable,
    pending = plannedPeers (switch.reduce and switch.append are written too, their values not
    logged)."""

    def handle(m: re.Match[str], ctx: _Context) -> list[Event]:
        f = parse_fields(m.group("fields"))
        group = group_of(f)
        applied = nodes_of(f.get("appliedPeers"))
        out: list[Event] = [_assignments(ctx, group, STABLE, applied)]
        if kind == "finish":
            out.append(_assignments(ctx, group, PENDING, removed=True))
            return out
        planned = nodes_of(f.get("plannedPeers"))
        out.append(_assignments(ctx, group, PENDING, planned))
        if kind == "planned":
            out.append(_assignments(ctx, group, PLANNED, removed=True))
        elif kind == "reduction":
            out.append(_assignments(ctx, group, REDUCE,
                                    tuple(n for n in applied if n not in planned)))
        return out

    return handle


def _finished_2022(m: re.Match[str], ctx: _Context) -> list[Event]:
    """June 2022 ``RebalanceRaftGroupEventsListener``: ``Finished rebalance of partition={},
    table={} to peers={} and queued new rebalance to peers={}`` / ``... and no new rebalance in
    planned key={} discovered``."""
    group = f"{m.group('table')}_part_{m.group('part')}"
    out: list[Event] = [_assignments(ctx, group, STABLE, nodes_of(parse_value(m.group("peers"))))]
    if m.group("queued") is not None:
        out.append(_assignments(ctx, group, PENDING, nodes_of(parse_value(m.group("queued")))))
        out.append(_assignments(ctx, group, PLANNED, removed=True))
    else:
        out.append(_assignments(ctx, group, PENDING, removed=True))
    return out


def _init(m: re.Match[str], ctx: _Context) -> list[Event]:
    """JRaft ``NodeImpl.init``: ``Node {} init, term={}, lastLogId={}, conf={}, oldConf={}[,
    lastCommittedIndex={}].``: the raft node starts, ``empty`` at term 0. The same raft node
    starting again in this file restarted: with term 0 in a configuration that holds it, its
    meta (term, vote) is gone and it runs in its old group, an in-memory restart; with a term,
    its meta was kept. Started again outside its configuration, it joins as a new member would
    (Ignite starts a joining node with the stable configuration), which is no restart in the
    old group."""
    group, member = node_id(m.group("node"))
    ctx.node = ctx.node or member
    term = int(m.group("term"))
    peers = conf_members(m.group("conf"))
    seen = ctx.inits.get((member, group), 0)
    ctx.inits[(member, group)] = seen + 1
    out: list[Event] = []
    common = {"member": member, "group": group, "order": ctx.order, "source": ctx.source()}
    if seen and (term > 0 or member in peers):
        out.append(NodeRestarted(in_memory=term == 0, **common))
    out.append(RaftStarted(peers=peers, reason="empty" if term == 0 else "start", **common))
    return out


def _vote_self(m: re.Match[str], ctx: _Context) -> list[Event]:
    """JRaft ``NodeImpl.electSelf``: ``Node {} start vote and grant vote self, term={}.``,
    printed before ``this.currTerm++``: the node votes for itself in the term after the one
    the line prints (its leader line, if it wins, prints that term)."""
    group, member = node_id(m.group("node"))
    ctx.node = ctx.node or member
    return [RaftVote(member=member, term=int(m.group("term")) + 1, candidate=member,
                     group=group, order=ctx.order, source=ctx.source())]


def _leader(m: re.Match[str], ctx: _Context) -> list[Event]:
    """JRaft ``NodeImpl.becomeLeader``: ``Node {} become leader of group, term={}, conf={},
    oldConf={}.``: the leader, with its own vote (the one a log shows) and its configuration,
    which a leader put in place (a node elects itself only in a configuration that holds it)."""
    group, member = node_id(m.group("node"))
    ctx.node = ctx.node or member
    term = int(m.group("term"))
    peers, old = conf_members(m.group("conf")), conf_members(m.group("old"))
    common = {"member": member, "group": group, "order": ctx.order, "source": ctx.source()}
    return [RaftPeersChanged(peers=peers, term=term, **common),
            RaftLeader(term=term, votes=(member,), peers=peers, old=old, **common)]


def _two_leaders(m: re.Match[str], ctx: _Context) -> list[Event]:
    """JRaft ``NodeImpl.handleAppendEntriesRequest`` (and ``handleInstallSnapshot``, which names
    the group): ``Another peer {} declares that it is the leader at term {} which was occupied
    by leader {}.``: two leaders of one term, the one the follower knows and the one that sends
    it entries (the message of the append path names no group: ``""``)."""
    group = m.group("group") or ""
    term = int(m.group("term"))
    common = {"group": group, "order": ctx.order, "source": ctx.source()}
    return [RaftLeader(member=peer_member(m.group("leader")), term=term, **common),
            RaftLeader(member=peer_member(m.group("peer")), term=term, **common)]


def _peers_changed(m: re.Match[str], ctx: _Context) -> list[Event]:
    """JRaft ``NodeImpl.ConfigurationCtx.nextStage``: ``Catch up phase to change peers was
    successfully finished [node={}, from={} to={}]`` (3.1.0; later ``from peers={} to peers={},
    …`` and ``fromPeers={}, toPeers={}, …``): the leader puts the new configuration in place
    (its joint entry)."""
    group, member = node_id(m.group("node"))
    peers = nodes_of(parse_value(m.group("to")))
    return [RaftPeersChanged(member=member, peers=peers, group=group, order=ctx.order,
                             source=ctx.source())]


def _set_peers(m: re.Match[str], ctx: _Context) -> list[Event]:
    """JRaft ``NodeImpl.resetPeers``: ``Node {} set peers from {} to {}.`` / ``Node {} set peers
    to {} from empty.``: the node's configuration is reset to these peers."""
    group, member = node_id(m.group("node"))
    return [RaftPeersChanged(member=member, peers=conf_members(m.group("to")), group=group,
                             order=ctx.order, source=ctx.source())]


def _data_nodes(m: re.Match[str], ctx: _Context) -> list[Event]:
    """``DataNodesHistoryMetaStorageOperation.successLogMessage`` (``DataNodesManager``, 3.1):
    ``Updated data nodes on {operation}, added history entry [zoneId={}, currentTimestamp={},
    historyEntryTimestamp={}, nodes={}]…``, printed by the node whose invoke wrote the zone's
    data nodes; and ``DataNodesManager.initZone``'s ``Initialized zone's dataNodes history
    [zoneId = {}, timestamp = {}, dataNodes = {}]``, the zone's first."""
    nodes = nodes_of(parse_value(m.group("nodes")))
    return [DataNodesChanged(member=ctx.member, nodes=nodes, zone=int(m.group("zone")),
                             order=ctx.order, source=ctx.source())]


def _node_starting(m: re.Match[str], ctx: _Context) -> list[Event]:
    """``IgniteImpl.start``: ``Starting node: [name={}, workDir={}, configPath={}]``, the
    process's start (a restart's too: a new incarnation)."""
    name = m.group("name")
    ctx.node = ctx.node or name
    return [MemberStarted(member=name, order=ctx.order, source=ctx.source())]


def _nothing(m: re.Match[str], ctx: _Context) -> list[Event]:
    return []


_NODE = r"<(?P<node>[^<>\s]+)>"
_TABLE_OR_ZONE = r"(?P<fields>\[.*\])\.?$"

#: (keyword, the message's regular expression, handler): every message read, in the wording of
#: the class that logs it (the class and era in each handler's docstring, or the comment)
MESSAGES: tuple[tuple[str, str, Handler], ...] = (
    # the trigger: ZoneRebalanceUtil (zone era), RebalanceUtil (table eras), GroupUpdateRequest
    ("partitions key", r"(?:(?P<force>Force u)|U)pdate metastore pending partitions key "
     + _TABLE_OR_ZONE, _pending),
    ("partitions key", r"Update metastore pending partitions key=(?P<key>\S+) for partition="
     r"\d+, table=.*? to (?P<val>.*)$", _pending_2022),
    ("partitions key", r"Update metastore planned partitions key " + _TABLE_OR_ZONE, _planned),
    ("partitions key", r"Update metastore planned partitions key=(?P<key>\S+) for partition="
     r"\d+, table=.*? to (?P<val>.*)$", _planned_2022),
    ("Remove planned key", r"Remove planned key because (?:current pending key has the same "
     r"value|pending is empty and calculated assignments are equal to current assignments) "
     + _TABLE_OR_ZONE, _planned_removed),
    ("Remove planned key", r"Remove planned key=(?P<key>\S+) for partition=\d+, table=.*? due "
     r"to the fact, that current pending key has the same value as planned=.*$",
     _planned_removed_2022),
    # DEBUG: the trigger guard refused a stale event; nothing was written
    ("rebalance trigger event", r"Received outdated (?:force )?rebalance trigger event", _nothing),
    ("Assignments are not updated", r"Assignments are not updated \[", _nothing),
    # the stable switch: ZoneRebalanceRaftGroupEventsListener, RebalanceRaftGroupEventsListener
    ("Rebalance finished", r"Rebalance finished\. Going to schedule next rebalance with "
     r"addition " + _TABLE_OR_ZONE, _finished("addition")),
    ("Rebalance finished", r"Rebalance finished\. Going to schedule next rebalance with "
     r"reduction " + _TABLE_OR_ZONE, _finished("reduction")),
    ("Rebalance finished", r"Rebalance finished\. Going to schedule next rebalance "
     + _TABLE_OR_ZONE, _finished("planned")),
    ("Rebalance finished", r"Rebalance finished " + _TABLE_OR_ZONE, _finished("finish")),
    ("Finished rebalance of", r"Finished rebalance of partition=(?P<part>\d+), table=(?P<table>"
     r".*?) to peers=(?P<peers>.*) and (?:queued new rebalance to peers=(?P<queued>.*)|no new "
     r"rebalance in planned key=\S+ discovered)$", _finished_2022),
    # the switch's invoke found the keys changed and retries: nothing written
    ("Rebalance keys changed", r"Rebalance keys changed while trying to update rebalance ",
     _nothing),
    ("was changed, while trying", r"Planned key=\S+ was changed, while trying to update "
     r"rebalance information", _nothing),
    # watch listeners and the leader's reaction (PartitionReplicaLifecycleManager, TableManager,
    # the events listeners): what they show is written by the lines above
    ("Received update on pending", r"Received update on pending ", _nothing),
    ("Received update on stable", r"Received update on stable assignments ", _nothing),
    ("Received update for replicas", r"Received update for replicas number ", _nothing),
    ("is the leader of partition raft group", r"Current node=.* is the leader of partition raft "
     r"group=", _nothing),
    ("New leader ", r"New leader (?:elected\. Going to|was elected for the raft group=)",
     _nothing),
    # MetaStorageLeaderElectionListener: the metastorage group's leader, not a partition's
    ("New leader ", r"New leader is elected for Metastorage, leader ", _nothing),
    # the zone's data nodes (DataNodesManager): a write of them, and a write that leaves them
    ("Updated data nodes on", r"Updated data nodes on .+?, added history entry \[zoneId="
     r"(?P<zone>\d+), currentTimestamp=HybridTimestamp \[[^\]]*\], historyEntryTimestamp="
     r"HybridTimestamp \[[^\]]*\], nodes=(?P<nodes>\[[^\]]*\])\]", _data_nodes),
    ("Updated data nodes on", r"Updated data nodes on .+?, history entry not added \[", _nothing),
    ("Initialized zone's dataNodes history", r"Initialized zone's dataNodes history \[zoneId = "
     r"(?P<zone>\d+), timestamp = HybridTimestamp \[[^\]]*\], dataNodes = "
     r"(?P<nodes>\[[^\]]*\])\]$", _data_nodes),
    # the node's process (IgniteImpl)
    ("Starting node: [name=", r"Starting node: \[name=(?P<name>[^,\]]+)[,\]]", _node_starting),
    # raft: Loza, JRaft's NodeImpl
    ("Start new raft node", r"Start new raft node(?:=| for group=)", _nothing),
    ("Stop raft ", r"Stop raft (?:node|group)=", _nothing),
    ("init, term=", rf"Node {_NODE} init, term=(?P<term>\d+), lastLogId=LogId \[[^\]]*\], "
     r"conf=(?P<conf>[^\s\[\]]*), oldConf=(?P<old>[^\s\[\]]*)(?:, lastCommittedIndex=\d+)?\.$",
     _init),
    ("grant vote self", rf"Node {_NODE} start vote and grant vote self, term=(?P<term>\d+)\.$",
     _vote_self),
    ("become leader of group", rf"Node {_NODE} become leader of group, term=(?P<term>\d+), "
     r"conf=(?P<conf>[^\s\[\]]*), oldConf=(?P<old>[^\s\[\]]*)\.$", _leader),
    ("declares that it is the leader", r"Another peer (?P<peer>\S+?)(?: of groupId="
     r"(?P<group>\S+))? declares that it is the leader at term (?P<term>\d+) which was occupied"
     r" by leader (?P<leader>\S+?)\.$", _two_leaders),
    # November 2025 on (IGNITE-26837: the sequence tokens)
    ("Catch up phase", rf"Catch up phase to change peers was successfully finished \[node="
     rf"{_NODE}, fromPeers=(?P<from>\[.*?\]), toPeers=(?P<to>\[.*?\]), fromLearners=.*\]\.$",
     _peers_changed),
    # August 2025 (IGNITE-25899: the group's name, and the learners)
    ("Catch up phase", rf"Catch up phase to change peers was successfully finished \[node="
     rf"{_NODE}, from peers=(?P<from>\[.*?\]) to peers=(?P<to>\[.*?\]), from learners=.*\]\.$",
     _peers_changed),
    # 3.1.0: the node and the peers only
    ("Catch up phase", rf"Catch up phase to change peers was successfully finished \[node="
     rf"{_NODE}, from=(?P<from>\[.*?\]) to=(?P<to>\[.*?\])\]$", _peers_changed),
    # June 2022 to 3.0.0: no node and no group in the message
    ("Catch up phase", r"Catch up phase to change peers from=.* to=.* was successfully "
     r"finished$", _nothing),
    ("set peers ", rf"Node {_NODE} set peers from [^\s\[\]]* to (?P<to>[^\s\[\]]*)\.$",
     _set_peers),
    ("set peers ", rf"Node {_NODE} set peers to (?P<to>[^\s\[\]]*) from empty\.$", _set_peers),
)


#: every keyword a message has: a line without one gives no event
KEYWORDS: tuple[str, ...] = tuple(dict.fromkeys(k for k, _, _ in MESSAGES))
_BY_KEYWORD: dict[str, list[tuple[re.Pattern[str], Handler]]] = {}
for _k, _p, _h in MESSAGES:
    _BY_KEYWORD.setdefault(_k, []).append((re.compile(_p), _h))
_MATCHER = ahocorasick_rs.AhoCorasick(list(KEYWORDS))
_BYTES_MATCHER = ahocorasick_rs.BytesAhoCorasick([k.encode() for k in KEYWORDS])


class UnreadWording(IgniteError):
    """A message with one of our keywords in none of the wordings read (another release's
    wording, say): reported, never dropped unseen."""

    def __init__(self, keyword: str) -> None:
        super().__init__(f"an Ignite 3 message with {keyword!r} in none of the wordings read "
                         "(another release's?)")


def parse_message(message: str, ctx: _Context, record: bool = True) -> list[Event] | None:
    """The events of one message; None when it has none of our keywords. IgniteError when its
    wording is ours and its values do not parse, UnreadWording when a record's message (not a
    throwable's line, `record` false) has a keyword of ours in a wording none of `MESSAGES`
    reads."""
    keywords = dict.fromkeys(_MATCHER.find_matches_as_strings(message))
    for keyword in keywords:
        for pattern, handler in _BY_KEYWORD[keyword]:
            m = pattern.match(message)
            if m is not None:
                return handler(m, ctx)
    if keywords and record:
        raise UnreadWording(next(iter(keywords)))
    return None


# --- files -----------------------------------------------------------------------------------

#: bytes read at a time
BLOCK = 8 << 20
#: a line longer than this is reported malformed and skipped
MAX_LINE = 16 << 20
#: a stack trace line (a throwable's lines after its record are ignored)
_STACK = re.compile(r"\s*(?:at [\w$.<>/@\-]+\(|Caused by: |Suppressed: "
                    r"|\.\.\. \d+ (?:more|common))")


@dataclass
class Tally:
    """What scanning one file adds to the accounting."""

    lines: int = 0
    parsed: int = 0
    malformed: list[tuple[int, str]] = field(default_factory=list)
    events: int = 0


class IgniteFile:
    """One Ignite 3 log file being scanned: its lines accounted for, its events in file order.
    A line is *parsed* when its message is one of `MESSAGES` (with events or without), malformed
    when its wording is ours and its values do not parse, ignored otherwise (application lines,
    throwables)."""

    def __init__(self, name: str, nuls: dict[int, Any] | None = None) -> None:
        self.name = name
        self.ctx = _Context(name)
        self.tally = Tally()
        #: the lines that had NUL bytes (the reader's, filled as it reads): such a line is
        #: malformed (`finish`), what is left of it still read
        self.nuls: dict[int, Any] = nuls if nuls is not None else {}
        #: why a line with NUL bytes is malformed besides them
        self._also: dict[int, str] = {}
        self._parsed_nul: set[int] = set()

    def finish(self, nul_lines: Iterable[tuple[int, str]]) -> None:
        """Report the lines that had NUL bytes (number, reason), each as one malformed entry,
        and put this file's malformed entries in line order."""
        for number, reason in nul_lines:
            also = self._also.pop(number, None)
            self.tally.malformed.append((number, reason if also is None
                                         else f"{reason}; {also}"))
            if number in self._parsed_nul:
                self.tally.parsed -= 1
        self._parsed_nul.clear()
        self.tally.malformed.sort()

    def scan(self, f: Any) -> Iterator[Event]:
        """Every line of `f`, a reader of bytes (NUL bytes already taken out by it: `nuls`)."""
        number = 0
        carry = b""
        while True:
            chunk = f.read(BLOCK)
            data = carry + chunk if carry else chunk
            if not chunk:
                if data:
                    yield from self._block(data, number)
                    number += data.count(b"\n") + (0 if data.endswith(b"\n") else 1)
                break
            cut = data.rfind(b"\n") + 1
            if cut == 0:
                carry = data
                if len(data) > MAX_LINE:
                    number += 1
                    self.tally.malformed.append((number, f"a line longer than "
                                                         f"{MAX_LINE >> 20} MB"))
                    carry = b""
                    while True:  # read past the rest of that line
                        more = f.read(BLOCK)
                        if not more:
                            break
                        nl = more.find(b"\n")
                        if nl >= 0:
                            carry = more[nl + 1:]
                            break
                continue
            yield from self._block(data[:cut], number)
            number += data.count(b"\n", 0, cut)
            carry = data[cut:]
        self.tally.lines = number

    def scan_lines(self, lines: Iterable[tuple[int, bytes]]) -> Iterator[Event]:
        """The events of the given lines (number, bytes without the newline), in order: what
        `scan` gives for the whole file, from the lines with a keyword and any others."""
        from partsafe.traces.inputs import strip_nuls  # inputs sniffs with this module

        found: list[tuple[int, str]] = []
        for number, data in lines:
            data, reason = strip_nuls(data)
            if reason is not None:
                found.append((number, reason))
                self.nuls[number] = reason
            if _BYTES_MATCHER.find_matches_as_indexes(data):
                yield from self._line(_decode(data), number)
        self.finish(found)

    def _block(self, block: bytes, before: int) -> Iterator[Event]:
        at, at_line, last = 0, before + 1, -1
        for _k, start, _e in _BYTES_MATCHER.find_matches_as_indexes(block):
            ls = block.rfind(b"\n", 0, start) + 1
            if ls == last:
                continue
            last = ls
            at_line += block.count(b"\n", at, ls)
            at = ls
            le = block.find(b"\n", start)
            yield from self._line(_decode(block[ls:le if le >= 0 else len(block)]), at_line)

    def _line(self, text: str, number: int) -> Iterator[Event]:
        p = layout.peel(text)
        rec = record(p.text)
        ctx = self.ctx
        ctx.line = number
        if rec is None:
            if _STACK.match(p.text):
                return  # a throwable's line
            message, ctx.order, ctx.member = p.text.strip(), p.order, ctx.node or UNKNOWN_MEMBER
        else:
            message, ctx.order = rec.message, rec.order if rec.order is not None else p.order
            if rec.node:
                ctx.node = ctx.node or rec.node
            ctx.member = rec.node or ctx.node or UNKNOWN_MEMBER
        try:
            events = parse_message(message, ctx, rec is not None)
        except IgniteError as exc:
            reason = (exc.reason if isinstance(exc, UnreadWording)
                      else f"an Ignite 3 message whose wording is read but {exc.reason}")
            if number in self.nuls:
                self._also[number] = reason
            else:
                self.tally.malformed.append((number, reason))
            return
        if events is None:
            return
        self.tally.parsed += 1
        if number in self.nuls:
            self._parsed_nul.add(number)
        self.tally.events += len(events)
        yield from events


def _decode(raw: bytes) -> str:
    if raw.endswith(b"\r"):
        raw = raw[:-1]
    return raw.decode("utf-8", "replace")

"""From Ignite events back to Apache Ignite 3 log text (the inverse of `partsafe.traces.ignite`).

Each event Ignite logs is written in the wording of the class that logs it (the zone era's:
``ZoneRebalanceUtil``, ``ZoneRebalanceRaftGroupEventsListener``, ``Loza``, JRaft's
``NodeImpl``), in the production layout of ``JavaLoggerFormatter``
(``yyyy-MM-dd HH:mm:ss:SSS Z [LEVEL][thread][Logger] message``), with Ignite's thread names
``%<node>%<pool>-<n>``, one file per node. The values render as Ignite renders them:
``Assignments``/``AssignmentsQueue`` and ``PeersAndLearners`` as IgniteToStringBuilder writes
them, a JRaft ``NodeId`` as ``<group/peer>``, a ``Configuration`` as comma-separated peers, the
change trigger as a ``HybridTimestamp`` whose long value is the trigger's.

A metastore invoke is one line, chosen by the keys it changed, as the branch of the code that
logs it: a pending write with the change trigger is the trigger's ``Update metastore pending
partitions key``, a planned write or removal the trigger's planned messages, a write of stable
the stable switch's ``Rebalance finished`` message of its branch. What Ignite does not log is
skipped and counted: a node's restart itself (its raft node's next start shows it), the
switch.reduce union and its answer, votes for another node (written as JRaft's ``received
RequestVoteRequest`` line, which says nothing of the grant), the initial data nodes. A baseline
change is ``DataNodesManager``'s line, in the file of `DATA_NODES_HOST`.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import IO

from partsafe.refimpl.metastore import (
    APPEND,
    DATA_NODES,
    PENDING,
    PLANNED,
    REDUCE,
    STABLE,
    TRIGGER,
)
from partsafe.traces import events as ev

#: the start of the written clock (epoch milliseconds, UTC)
EPOCH_MS = 1_700_000_000_000
#: milliseconds between two written events
STEP_MS = 10
#: the zone the model's partition belongs to: its id and name
ZONE = (0, "Z")
_THREADS = {
    "NodeImpl": "JRaft-Request-Processor-1",
    "Loza": "tableManager-io-1",
    "ZoneRebalanceUtil": "metastorage-watch-executor-2",
    "ZoneRebalanceRaftGroupEventsListener": "rebalance-scheduler-1",
    "DataNodesManager": "JRaft-FSMCaller-Disruptor-metastorage_group_stripe_0-0",
}
#: the node whose file shows the data nodes the model's operator writes (Ignite prints them on
#: the node whose invoke wrote them; conformance reads them from any node's log)
DATA_NODES_HOST = "A"


def jul_time(ms: int) -> str:
    """``JavaLoggerFormatter.DATE_FORMATTER`` (``yyyy-MM-dd HH:mm:ss:SSS Z``), in UTC."""
    second, milli = divmod(ms, 1000)
    return f"{time.strftime('%Y-%m-%d %H:%M:%S', time.gmtime(second))}:{milli:03d} +0000"


def _assignment(node: str) -> str:
    return f"Assignment [consistentId={node}, isPeer=true]"


def assignments_set(nodes: Iterable[str]) -> str:
    """A ``Set<Assignment>`` as Java prints it."""
    return "[" + ", ".join(_assignment(n) for n in nodes) + "]"


def assignments(nodes: Iterable[str], stamp: int) -> str:
    """``Assignments`` (IgniteToStringBuilder)."""
    inner = ", ".join(_assignment(n) for n in nodes)
    return (f"Assignments [nodes=HashSet [{inner}], force=false, timestamp={stamp}, "
            "fromReset=false]")


def assignments_queue(nodes: Iterable[str], stamp: int) -> str:
    return f"AssignmentsQueue [queue=ArrayDeque [{assignments(nodes, stamp)}]]"


def hybrid_timestamp(value: int) -> str:
    """``HybridTimestamp.toString`` of the long `value` (physical in its high bits)."""
    physical = value >> 16
    return (f"HybridTimestamp [physical={jul_time(physical)}, logical={value & 0xFFFF}, "
            f"composite={value}]")


def _raft(e: ev.Event, text: str) -> tuple[str, str, str, str]:
    """A line of JRaft's ``NodeImpl`` on `e`'s node."""
    return e.member, "INFO", "NodeImpl", text


def _peer(node: str) -> str:
    return f"Peer [consistentId={node}, idx=0]"


@dataclass
class IgniteLogWriter:
    """Writes Ignite events as Ignite 3 log lines; remembers what later lines show (each node's
    raft term, each group's configuration, the invoke whose writes are being gathered)."""

    skipped: int = 0
    terms: dict[str, int] = field(default_factory=dict)
    confs: dict[str, tuple[str, ...]] = field(default_factory=dict)
    #: the invoke whose changes are being gathered, and those that came
    _invoke: tuple[ev.MetastoreInvoke, dict[str, ev.AssignmentsChanged]] | None = None
    _n: int = 0

    @staticmethod
    def group(e: ev.Event) -> str:
        group = getattr(e, "group", "")
        return group or f"{ZONE[0]}_part_{getattr(e, 'partition', 0)}"

    def node_id(self, e: ev.Event) -> str:
        return f"<{self.group(e)}/{e.member}>"

    # -- messages

    def messages(self, e: ev.Event) -> list[tuple[str, str, str, str]]:
        """(member, level, logger, message) of each line an event gives, in order; the line of
        an invoke comes with its last change, in the file of the node that ran it."""
        if self._invoke is not None and not isinstance(e, ev.AssignmentsChanged):
            out = self._invoke_lines()  # an invoke whose changes did not all come
            return out + self.messages(e)
        if isinstance(e, ev.MetastoreInvoke):
            self._invoke = (e, {})
            return []
        if isinstance(e, ev.AssignmentsChanged):
            if self._invoke is None or e.member != self._invoke[0].member:
                self.skipped += 1  # written by no node (the initial keys, the data nodes)
                return []
            self._invoke[1][e.key] = e
            if set(self._invoke[1]) >= set(self._invoke[0].keys):
                return self._invoke_lines()
            return []
        if isinstance(e, ev.RaftStarted):
            return self._started(e)
        if isinstance(e, ev.NodeRestarted):
            if e.in_memory:
                self.terms[e.member] = 0  # its raft meta is gone with its storage
            self.skipped += 1
            return []
        if isinstance(e, ev.RaftVote):
            if e.candidate == e.member:
                self.terms[e.member] = e.term
                # electSelf prints its term before raising it to the term it votes in
                return [_raft(e, f"Node {self.node_id(e)} start vote and grant vote "
                                             f"self, term={e.term - 1}.")]
            current = self.terms.get(e.member, 0)
            self.terms[e.member] = max(current, e.term)
            return [_raft(e, f"Node {self.node_id(e)} received RequestVoteRequest "
                                         f"from {e.candidate}, term={e.term}, "
                                         f"currTerm={current}.")]
        if isinstance(e, ev.RaftLeader):
            self.terms[e.member] = max(self.terms.get(e.member, 0), e.term)
            return [_raft(e, f"Node {self.node_id(e)} become leader of group, "
                                         f"term={e.term}, conf={','.join(e.peers)}, "
                                         f"oldConf={','.join(e.old)}.")]
        if isinstance(e, ev.RaftPeersChanged):
            group = self.group(e)
            before = self.confs.get(group, ())
            self.confs[group] = e.peers
            return [_raft(e, f"Catch up phase to change peers was successfully "
                                         f"finished [node={self.node_id(e)}, fromPeers=["
                                         f"{', '.join(before)}], toPeers=[{', '.join(e.peers)}]"
                                         f", fromLearners=[], toLearners=[], oldToken=0, "
                                         f"newToken={e.term or 0}].")]
        self.skipped += 1
        return []

    def _started(self, e: ev.RaftStarted) -> list[tuple[str, str, str, str]]:
        """Loza's start line, then JRaft's init with the node's term: 0 for a node whose meta
        is new or gone, its kept term after a restart with persistent storage."""
        group = self.group(e)
        if e.reason in ("joining", "full-restart"):
            self.terms[e.member] = 0
        term = self.terms.setdefault(e.member, 0)
        self.confs.setdefault(group, e.peers)
        peers = ", ".join(_peer(p) for p in e.peers)
        return [
            (e.member, "INFO", "Loza", f"Start new raft node=RaftNodeId [groupId={group}, peer="
                             f"{_peer(e.member)}] with initial configuration=PeersAndLearners "
                             f"[peers=Set12 [{peers}], learners=SetN []]"),
            _raft(e, f"Node {self.node_id(e)} init, term={term}, lastLogId=LogId "
                                 f"[index=0, term=0], conf={','.join(e.peers)}, oldConf=, "
                                 f"lastCommittedIndex=0."),
        ]

    def _invoke_lines(self) -> list[tuple[str, str, str, str]]:
        """The line of a gathered invoke, chosen by what it changed."""
        assert self._invoke is not None
        call, changes = self._invoke
        self._invoke = None
        if not changes:
            return []
        me = call.member
        if DATA_NODES in changes:  # a baseline change: DataNodesManager's success line
            stamp_text = hybrid_timestamp(EPOCH_MS << 16)
            names = ", ".join(changes[DATA_NODES].nodes)
            return [(DATA_NODES_HOST, "INFO", "DataNodesManager",
                     f"Updated data nodes on scale up timer trigger, added history entry "
                     f"[zoneId={ZONE[0]}, currentTimestamp={stamp_text}, historyEntryTimestamp="
                     f"{stamp_text}, nodes=[{names}]], scaleUpTimer=[empty]].")]
        any_change = next(iter(changes.values()))
        group = self.group(any_change)
        part = any_change.partition
        zone = f"{ZONE[0]}/{ZONE[1]}"

        def nodes(key: str) -> tuple[str, ...]:
            c = changes.get(key)
            return () if c is None or c.removed else c.nodes

        stamp = changes[TRIGGER].value if TRIGGER in changes else None
        stamp = None if stamp is None else int(stamp)  # the model's revisions print as r<n>
        if STABLE in changes:
            applied, planned = nodes(STABLE), nodes(PENDING)
            fields = (f"zonePartitionId={group}, appliedPeers={assignments_set(applied)}")
            if PENDING in changes and changes[PENDING].removed:
                return [(me, "INFO", "ZoneRebalanceRaftGroupEventsListener",
                         f"Rebalance finished [{fields}]")]
            if nodes(APPEND):
                kind = " with addition"
            elif REDUCE in changes and nodes(REDUCE):
                kind = " with reduction"
            else:
                kind = ""
            return [(me, "INFO", "ZoneRebalanceRaftGroupEventsListener",
                     f"Rebalance finished. Going to schedule next rebalance{kind} [{fields}, "
                     f"plannedPeers={assignments_set(planned)}]")]
        if PENDING in changes and not changes[PENDING].removed:
            text = (f"Update metastore pending partitions key [key=zone.assignments.pending."
                    f"{group}, partition={part}, zone={zone}, newVal="
                    f"{assignments_queue(nodes(PENDING), stamp or 0)}")
            if stamp is not None:
                text += f", timestamp={hybrid_timestamp(stamp)}"
            return [(me, "INFO", "ZoneRebalanceUtil", text + "]")]
        if PLANNED in changes:
            if changes[PLANNED].removed:
                return [(me, "INFO", "ZoneRebalanceUtil",
                         f"Remove planned key because current pending key has the same value "
                         f"[key=zone.assignments.planned.{group}, partition={part}, zone="
                         f"{zone}, val={assignments_set(())}]")]
            return [(me, "INFO", "ZoneRebalanceUtil",
                     f"Update metastore planned partitions key [key=zone.assignments.planned."
                     f"{group}, partition={part}, zone={zone}, newVal="
                     f"{assignments_set(nodes(PLANNED))}]")]
        self.skipped += 1  # switch.reduce's union, the data nodes: not logged
        return []

    def flush(self) -> list[tuple[str, str, str, str]]:
        """The line of an invoke whose changes did not all come, at the end of the events."""
        return self._invoke_lines() if self._invoke is not None else []

    # -- lines

    def record(self, member: str, level: str, logger: str, text: str) -> str:
        """One record in JavaLoggerFormatter's layout, on a thread of `member`'s pool."""
        self._n += 1
        return (f"{jul_time(EPOCH_MS + self._n * STEP_MS)} [{level}][%{member}%"
                f"{_THREADS[logger]}][{logger}] {text}\n")

    def write(self, events: Iterable[ev.Event], out: Callable[[str], IO[str]]) -> int:
        """Write each event to the stream `out(member)` gives; returns the lines written."""
        n = 0
        for e in events:
            for line in self.messages(e):
                out(line[0]).write(self.record(*line))
                n += 1
        for line in self.flush():
            out(line[0]).write(self.record(*line))
            n += 1
        return n


def is_ignite(events: Iterable[ev.Event]) -> bool:
    """Whether a trace's events are Ignite's (the Ignite model's)."""
    kinds = (ev.MetastoreInvoke, ev.AssignmentsChanged, ev.RaftVote, ev.RaftLeader,
             ev.RaftPeersChanged, ev.RaftStarted, ev.NodeRestarted, ev.ReductionRequested)
    return any(isinstance(e, kinds) for e in events)

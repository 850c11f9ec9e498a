"""From events back to Hazelcast log text (the inverse of `partsafe.traces.payload`).

Each event that Hazelcast logs is written in the wording of the Hazelcast class that logs it
(the message families of docs/validation.md, "The messages read"), after the member prefix, in the
rolling-file layout of the distribution's ``config/log4j2.properties``
(``%d [%5p] [%t] [%c{.1}]: %m%n``, family §0). Events Hazelcast does not log (a crash writes
nothing, tables are not printed) are skipped and counted. Member names that are not addresses (the
explorer's ``A``, ``B``, ...) become ``10.0.0.N:5701`` and get a fixed UUID, so that a trace
written and read back names the same members. A caller that simulates incarnations sets each
member's current UUID in `uuids` and its instance name in `instances` (threads are then
``hz.<instance>.<thread>``, as Hazelcast names its threads, else ``hz.main``), and may give each
line its time in milliseconds.
"""

from __future__ import annotations

import time
import uuid as uuidlib
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import IO

from partsafe.traces import events as ev

#: the start of the written clock: event ``order`` k is this plus k seconds
EPOCH_MS = 1_700_000_000_000
#: the migrations a writer remembers the start of (a later line of one shows its MigrationInfo)
STARTED_KEPT = 4096
#: the namespace the participants' lines name (a map's, as ``DistributedObjectNamespace``)
NAMESPACE = "DistributedObjectNamespace{service='hz:impl:mapService', objectName='default'}"
#: java.util.logging levels as ``Log4j2Factory`` maps them
LOG4J2_LEVELS = {"WARNING": "WARN", "FINE": "DEBUG", "FINEST": "TRACE", "SEVERE": "ERROR"}
LOGGERS = {
    "cluster": "c.h.i.c.ClusterService",
    "membership": "c.h.i.c.i.MembershipManager",
    "lifecycle": "c.h.c.LifecycleService",
    "migration": "c.h.i.p.i.MigrationManager",
    "planner": "c.h.i.p.i.MigrationPlanner",
    "migration_request": "c.h.i.p.o.MigrationRequestOperation",
    "migration_operation": "c.h.i.p.o.MigrationOperation",
    "partition": "c.h.i.p.InternalPartitionService",
    "heartbeat": "c.h.i.c.i.ClusterHeartbeatManager",
    "join": "c.h.i.c.i.TcpIpJoiner",
    "state": "c.h.i.c.i.o.CommitClusterStateOp",
    "suspicion": "c.h.i.c.i.o.ExplicitSuspicionOp",
}
#: the thread that logs each logger's lines (after ``hz.<instance>.``), when instances are known
THREADS = {
    "cluster": "priority-generic-operation.thread-0",
    "membership": "cached.thread-3",
    "lifecycle": "main",
    "migration": "migration",
    "planner": "migration",
    "migration_request": "partition-operation.thread-1",
    "migration_operation": "partition-operation.thread-2",
    "partition": "cached.thread-7",
    "heartbeat": "cached.thread-1",
    "join": "cached.thread-2",
    "state": "generic-operation.thread-1",
    "suspicion": "priority-generic-operation.thread-0",
}


@dataclass
class LogWriter:
    """Writes events as log lines; remembers each member's last list (a claim's line shows it)."""

    cluster: str = "dev"
    version: str = "5.3.0"
    names: dict[str, str] = field(default_factory=dict)
    views: dict[str, ev.MemberListInstalled] = field(default_factory=dict)
    skipped: int = 0
    #: each member's current UUID (a new incarnation has a new one); others get a fixed UUID
    uuids: dict[str, str] = field(default_factory=dict)
    #: each member's Hazelcast instance name (the ``hz.<instance>`` of its thread names)
    instances: dict[str, str] = field(default_factory=dict)
    #: the migrations started, by id: a migration's later lines show the same MigrationInfo
    #: (the latest `STARTED_KEPT`)
    started: dict[str, ev.MigrationStarted] = field(default_factory=dict)
    #: the last migration started of each partition (a completed migration applied shows it)
    latest: dict[int, ev.MigrationStarted] = field(default_factory=dict)
    #: the members each member suspects (a mastership claim's line shows them)
    suspects: dict[str, set[str]] = field(default_factory=dict)
    #: per claimant, the members its claim asked first and the latest list version it knows
    claims: dict[str, tuple[set[str], int]] = field(default_factory=dict)
    #: how many events the last line written reads back as (a claim's start names the members
    #: it asks first: one more event each)
    carried: int = 1

    # -- members

    def address(self, member: str) -> str:
        """``host:port`` for a member name."""
        if ":" in member:
            return member
        if member not in self.names:
            self.names[member] = f"10.0.0.{len(self.names) + 1}:5701"
        return self.names[member]

    def bracketed(self, member: str) -> str:
        host, _, port = self.address(member).rpartition(":")
        return f"[{host}]:{port}"

    def uuid(self, member: str) -> str:
        """The member's current UUID: the one set in `uuids`, else one fixed by its name."""
        known = self.uuids.get(member)
        if known is not None:
            return known
        return str(uuidlib.uuid5(uuidlib.NAMESPACE_URL, f"partsafe:{member}"))

    def member(self, name: str, uid: str | None = None) -> str:
        return f"Member {self.replica(name, uid)}"

    def replica(self, name: str, uid: str | None = None) -> str:
        """``PartitionReplica.toString``: ``[host]:port - uuid``."""
        return f"{self.bracketed(name)} - {uid or self.uuid(name)}"

    def _infos(self, members: Iterable[str]) -> str:
        return ", ".join(f"MemberInfo{{address={self.bracketed(m)}, uuid={self.uuid(m)}, "
                         f"liteMember=false, memberListJoinVersion=1}}" for m in members)

    def _view(self, version: int | None, members: Iterable[str]) -> str:
        return f"MembersView{{version={version or 0}, members=[{self._infos(members)}]}}"

    def _migration(self, e: ev.Event, status: str, partition: int | None,
                   source: str | None = None, destination: str | None = None,
                   initial: int = 0, increment: int = 1) -> str:
        def replica(m: str | None) -> str:
            return "null" if m is None else self.replica(m)

        migration = getattr(e, "migration", "")
        start = self.started.get(migration) if migration else None
        if isinstance(e, ev.PartitionVersionApplied) and partition is not None:
            start = self.latest.get(partition)  # the migration that made this version, likely
            migration = start.migration if start is not None else ""
        migration = migration or "00000000-0000-0000-0000-000000000000"
        if start is not None and source is None and destination is None:
            source, destination = start.source_member, start.destination
            if not isinstance(e, ev.PartitionVersionApplied):
                initial = start.planned_version or 0
        index = start.source_current_index if start is not None else getattr(
            e, "source_current_index", None)
        view = self.views.get(e.member)
        master = view.members[0] if view is not None and view.members else e.member
        if start is not None and start.role == "master":
            master = start.member
        if isinstance(e, ev.MigrationStarted) and e.role == "master":
            master = e.member
        return (f"MigrationInfo{{uuid={migration}, partitionId={partition or 0}, "
                f"source={replica(source)}, sourceCurrentReplicaIndex={index or 0}, "
                f"sourceNewReplicaIndex=-1, destination={replica(destination)}, "
                f"destinationCurrentReplicaIndex=-1, destinationNewReplicaIndex={index or 0}, "
                f"master={self.bracketed(master)}, initialPartitionVersion={initial}, "
                f"partitionVersionIncrement={increment}, status={status}}}")

    def _start(self, e: ev.MigrationStarted) -> None:
        """Remember a migration's start (the first one seen: the master's, in the explorer)."""
        if e.migration not in self.started:
            self.started[e.migration] = e
            if len(self.started) > STARTED_KEPT:
                del self.started[next(iter(self.started))]
        if e.partition is not None and e.role == "master":
            self.latest[e.partition] = e

    def _partition(self, partition: int, version: int, replicas: tuple[str | None, ...]) -> str:
        """``AbstractInternalPartition.toString``: a line per replica that is set."""
        lines = "".join(f"\t{i}:{self.replica(r)}\n"
                        for i, r in enumerate(replicas) if r is not None)
        return f"Partition {{ID: {partition}, Version: {version}}} [\n{lines}]"

    def _migration_message(self, e: ev.Event) -> tuple[str, str, str] | None:
        """The lines of the migration events (family §9): the master's start and its task's end
        (``MigrationManager``), a participant's start (``MigrationRequestOperation`` on the
        source, ``MigrationOperation`` on the destination, FINEST) and its commit or rollback
        (``MigrationManager.finalizeMigration``, FINE); a partition owner that only sends a
        backup's data logs none of it."""
        if isinstance(e, ev.MigrationStarted):
            self._start(e)
            if e.role == "master":
                return ("FINE", "migration", "Starting Migration: " + self._migration(
                    e, "ACTIVE", e.partition, e.source_member, e.destination,
                    e.planned_version or 0))
            info = self._migration(e, "ACTIVE", e.partition, e.source_member, e.destination,
                                   e.planned_version or 0)
            if e.role == "source":
                return ("FINEST", "migration_request",
                        f"Invoking MigrationOperation for namespaces [{NAMESPACE}] and {info}, "
                        "firstFragment: true, lastFragment: true")
            if e.role == "destination":
                return ("FINEST", "migration_operation",
                        f"ReplicaVersions are set after migration. {info}, namespace="
                        f"{NAMESPACE}, replicaVersions=[1, 0, 0, 0, 0, 0]")
            return None
        if isinstance(e, ev.MigrationCommitted | ev.MigrationRolledBack):
            status = "SUCCESS" if isinstance(e, ev.MigrationCommitted) else "FAILED"
            if e.role == "master" and status == "SUCCESS":
                start = self.started.get(e.migration)
                destination = start.destination if start is not None else None
                to = self.replica(destination) if destination else "null"
                return ("FINE", "migration", f"Migration commit result true from {to} for "
                        + self._migration(e, status, e.partition))
            if e.role == "master":
                return ("WARNING", "migration",
                        "Migration failed: " + self._migration(e, "ACTIVE", e.partition))
            if e.role in ("source", "destination"):
                return "FINE", "migration", "Finalizing " + self._migration(e, status, e.partition)
            return None
        if isinstance(e, ev.MigrationFinished):
            return ("FINE", "migration",
                    "Finished Migration: " + self._migration(e, "ACTIVE", e.partition))
        return None

    def _array(self, replicas: Iterable[str | None]) -> str:
        """``Arrays.toString`` of a replica array (``PartitionReplica.toString``, ``null``)."""
        return "[" + ", ".join("null" if r is None else self.replica(r) for r in replicas) + "]"

    def _planned(self, partition: int, k: int,
                 m: tuple[str | None, int, int, str | None, int, int]) -> str:
        """A queued migration's ``MigrationInfo`` as the planner prints it: no master and no
        initial partition version yet (``MigrationCollector`` makes it), the increment
        ``MigrationInfo.getPartitionVersionIncrement`` computes, ACTIVE."""
        source, sc, sn, destination, dc, dn = m
        uid = uuidlib.uuid5(uuidlib.NAMESPACE_URL, f"partsafe:plan:{partition}:{k}:{m}")
        return (f"MigrationInfo{{uuid={uid}, partitionId={partition}, source="
                f"{'null' if source is None else self.replica(source)}, "
                f"sourceCurrentReplicaIndex={sc}, sourceNewReplicaIndex={sn}, destination="
                f"{'null' if destination is None else self.replica(destination)}, "
                f"destinationCurrentReplicaIndex={dc}, destinationNewReplicaIndex={dn}, "
                f"master=null, initialPartitionVersion=-1, "
                f"partitionVersionIncrement={1 + (sn > -1) + (dc > -1)}, status=ACTIVE}}")

    def _plan_message(self, e: ev.Event) -> tuple[str, str, str] | None:
        """The migration planner's FINEST lines (family §9): ``MigrationManager``'s ``Planning
        migrations for partitionId=...``, and ``MigrationPlanner.planMigrations``'s states and
        decisions and ``prioritizeCopiesAndShiftUps``'s order record, in their wording."""
        if isinstance(e, ev.PlanStarted):
            return ("FINEST", "migration", f"Planning migrations for partitionId={e.partition}. "
                    f"Current replicas: {self._array(e.current)}, New replicas: "
                    f"{self._array(e.target)}")
        if isinstance(e, ev.PlanOrder):
            items = ",".join(f"\n\t{k}- {self._planned(e.partition, k, m)}"
                             for k, m in enumerate(e.migrations))
            return ("FINEST", "planner", "Migration order after prioritization: "
                    + (f"[{items}]" if items else "]"))
        if isinstance(e, ev.PlanState):
            head = {"initial": "Initial state", "final": "Final state",
                    "cycle-fixed": "Final state (after cycle fix)",
                    "pass": f"Current index: {e.index}, state"}.get(e.stage)
            if head is None:
                return None
            return ("FINEST", "planner",
                    f"partitionId={e.partition}, {head}: {self._array(e.replicas)}")
        if not isinstance(e, ev.PlanDecision):
            return None
        s = None if e.source_member is None else self.replica(e.source_member)
        d = None if e.destination is None else self.replica(e.destination)
        sc, sn = e.source_current_index, e.source_new_index
        dc, dn = e.destination_current_index, e.destination_new_index
        if e.kind == "CLEAR":
            text = f"New address is null at index: {sc}"
        elif e.kind == "COPY":
            text = f"COPY {d} to index: {dn}"
        elif e.kind == "SHIFT_DOWN":
            text = f"SHIFT DOWN {s} to index: {sn}, COPY {d} to index: {dn}"
        elif e.kind == "SHIFT_UP" and sc == -1:
            text = f"SHIFT UP-2 {d} from old addresses index: {dc} to index: {dn}"
        elif e.kind == "SHIFT_UP":
            text = f"SHIFT UP {d} from old addresses index: {dc} to index: {dn}"
            if s is not None and sn > -1:
                text += f" and SHIFT DOWN {s} to index: {sn}"
            elif s is not None:
                text += f" with source: {s}" + (
                    f" will get another MOVE migration to index: {e.returns_to}"
                    if e.returns_to > -1 else "")
        elif e.case == "MOVE-2":
            text = f"MOVE-2 {d}  to index: {dn}"
        else:
            text = f"{e.case or 'MOVE'} {d} to index: {dn}"
        return "FINEST", "planner", f"partitionId={e.partition}, {text}"

    def _claim_message(self, e: ev.Event) -> tuple[str, str, str] | None:
        """The claimant's lines (``MembershipManager``, family §5): its claim's start, with
        every member it suspects and those it asks first (every other one), then at FINE each
        member it asks later and each accepted answer later than every list it knew (the only
        ones it logs)."""
        me = e.member
        if isinstance(e, ev.MastershipClaimStarted):
            view = self.views.get(me)
            members = e.members or (view.members if view else ())
            suspected = [m for m in members if m in self.suspects.get(me, set())
                         or m in e.suspected] + [m for m in e.suspected if m not in members]
            ask = [m for m in members if m != me and m not in suspected]
            self.claims[me] = (set(ask), view.version or 0 if view else 0)
            self.carried = 1 + len(ask)
            local = self._view(view.version if view else 0, members)
            return ("INFO", "membership", f"Local {local} with suspected members: ["
                    + ", ".join(self.member(m) for m in suspected)
                    + "] and initial addresses to ask: ["
                    + ", ".join(self.member(m) for m in ask) + "]")
        asked, best = self.claims.get(me, (set(), 0))
        if isinstance(e, ev.MastershipClaimSent):
            if e.target in asked:
                return None
            asked.add(e.target)
            return "FINE", "membership", f"Asking MembersView of {self.bracketed(e.target)}"
        if isinstance(e, ev.MastershipAcceptanceReceived):
            if e.version is None or e.version <= best:
                return None
            self.claims[me] = (asked, e.version)
            return ("FINE", "membership", f"A more recent {self._view(e.version, e.members)} "
                    f"is received from {self.bracketed(e.sender)}")
        return None

    def _suspicions(self, e: ev.Event) -> None:
        """Follow the members each member suspects, as its events show them."""
        mine = self.suspects.setdefault(e.member, set())
        if isinstance(e, ev.MemberSuspected):
            mine.add(e.suspect)
        elif isinstance(e, ev.ExplicitSuspicion):
            mine.add(e.sender)
        elif isinstance(e, ev.SuspicionRemoved):
            mine.discard(e.suspect)
        elif isinstance(e, ev.MemberListInstalled):
            mine.intersection_update(e.members)
            self.claims.pop(e.member, None)
        elif isinstance(e, ev.MemberStarted | ev.MemberCrashed):
            mine.clear()
            self.claims.pop(e.member, None)

    # -- messages

    def message(self, e: ev.Event) -> tuple[str, str, str] | None:
        """(level, logger key, message) for an event, or None when Hazelcast does not log it."""
        me = self.bracketed(e.member)
        self.carried = 1
        self._suspicions(e)
        written = (self._migration_message(e) or self._claim_message(e)
                   or self._plan_message(e))
        if written is not None or isinstance(e, ev.MigrationStarted | ev.MigrationCommitted
                                             | ev.MigrationRolledBack | ev.MastershipClaimSent
                                             | ev.MastershipAcceptanceReceived):
            return written
        if isinstance(e, ev.MemberListInstalled):
            self.views[e.member] = e
            uids = e.uuids if len(e.uuids) == len(e.members) else ()
            lines = [f"\t{self.member(m, uids[i] if uids else None)}"
                     + (" this" if m == e.member else "") for i, m in enumerate(e.members)]
            if e.version is None:
                return "INFO", "cluster", (f"\n\nMembers [{len(e.members)}] {{\n"
                                           + "\n".join(lines) + "\n}\n")
            return "INFO", "cluster", (f"\n\nMembers {{size:{len(e.members)}, ver:{e.version}}}"
                                       " [\n" + "\n".join(lines) + "\n]\n")
        if isinstance(e, ev.MemberStarted):
            return "INFO", "lifecycle", f"{me} is STARTING"
        if isinstance(e, ev.ShutdownRequested):
            return "INFO", "lifecycle", f"{me} is SHUTTING_DOWN"
        if isinstance(e, ev.MemberLeft):
            return "INFO", "lifecycle", f"{me} is SHUTDOWN"
        if isinstance(e, ev.MemberSuspected):
            reason = e.reason or "explicit suspicion"
            return ("WARNING", "membership",
                    f"{self.member(e.suspect)} is suspected to be dead for reason: {reason}")
        if isinstance(e, ev.SuspicionRemoved):
            return ("INFO", "membership",
                    f"Removed suspicion of {self.member(e.suspect)}. Reason: Valid heartbeat")
        if isinstance(e, ev.ExplicitSuspicion):
            return ("INFO", "suspicion",
                    f"Received suspicion request from: {self.bracketed(e.sender)}")
        if isinstance(e, ev.MastershipClaimed):
            return ("INFO", "membership",
                    f"Mastership is claimed with: {self._view(e.version, e.members)}")
        if isinstance(e, ev.MastershipClaimAccepted):
            view = self.views.get(e.member)
            return ("WARNING", "cluster",
                    f"Mastership of {self.bracketed(e.candidate)} is accepted. Response: "
                    f"{self._view(e.version, view.members if view else ())}")
        if isinstance(e, ev.MemberRemoved):
            return "INFO", "membership", f"Removing {self.member(e.removed)}"
        if isinstance(e, ev.SplitBrainMerge):
            return "WARNING", "join", f"{me} is merging [tcp/ip] to {self.bracketed(e.target)}"
        if isinstance(e, ev.ClusterStateChanged):
            return ("INFO", "state",
                    f"Changing cluster state from ClusterState{{state={e.old}, lock=null}} to "
                    f"ClusterStateChange{{type=class com.hazelcast.cluster.ClusterState, "
                    f"newState={e.new}}}, initiator: {me}, transient: false")
        if isinstance(e, ev.PartitionTableFetch):
            text = {"fetching": "Fetching partition tables from cluster to determine the most "
                                "recent one... Local stamp: 0",
                    "determined": "Most recent partition table is determined.",
                    "applying": "Applying the most recent of partition state..."}.get(e.phase)
            return ("INFO", "partition", text) if text else None
        if isinstance(e, ev.Repartitioning):
            if not e.planned:
                return "INFO", "migration", "Partition balance is ok, no need to repartition."
            return ("INFO", "migration",
                    f"Repartitioning cluster data. Migration tasks count: {e.planned}")
        if isinstance(e, ev.MigrationsCompleted):
            stats = (f"repartitionTime={_date(e.order)}, plannedMigrations={e.planned}, "
                     f"completedMigrations={e.completed}, remainingMigrations={e.remaining}, "
                     f"totalCompletedMigrations={e.total_completed or e.completed}")
            head = {"completed": "All migration tasks have been completed.",
                    "failed": "Rebalance process was failed. Ignoring remaining migrations. "
                              "Will recalculate the new migration plan.",
                    "aborted": "Rebalance process was aborted. Ignoring remaining migrations. "
                               "Will recalculate the new migration plan.",
                    "progress": f"Remaining migration tasks: {e.tasks or e.remaining}."
                    }.get(e.outcome)
            return ("INFO", "migration", f"{head} ({stats})") if head else None
        if isinstance(e, ev.MigrationFailed):
            return ("WARNING", "migration",
                    "Migration failed: " + self._migration(e, "ACTIVE", e.partition))
        if isinstance(e, ev.PartitionTablePublished) and e.version is not None \
                and e.partition_versions is None:
            return "FINE", "partition", f"Publishing partition state, version: {e.version}"
        if isinstance(e, ev.PartitionTableApplied) and e.version is not None \
                and e.partition_versions is None and e.sender != e.member:
            return ("FINE", "partition",
                    f"Applied partition state update with version: {e.version}")
        if isinstance(e, ev.PartitionVersionApplied):
            return ("FINE", "partition", "Applying completed migration " + self._migration(
                e, "SUCCESS", e.partition, initial=e.version - 1))
        if isinstance(e, ev.PartitionTableConflict):
            latest, received = (*e.replicas, (), ())[:2]
            return ("WARNING", "partition", "Issue while determining latest partition... Latest: "
                    f"{self._partition(e.partition, e.version, latest)}, Received: "
                    f"{self._partition(e.partition, e.version, received)}")
        if isinstance(e, ev.PartitionLost):
            return "WARNING", "migration", f"partitionId={e.partition} is completely lost!"
        if isinstance(e, ev.ShutdownRequestHandled):
            return ("INFO", "migration",
                    f"Shutdown request of {self.member(e.requester)} is handled")
        return None

    def line(self, e: ev.Event, order: int, *, at_ms: int | None = None) -> str | None:
        """The log record of an event (possibly several lines, ending in a newline), at `order`
        seconds after EPOCH_MS, or at the epoch milliseconds `at_ms` when given."""
        written = self.message(e)
        if written is None:
            self.skipped += 1
            return None
        level, logger, text = written
        when = _date(order, layout=True) if at_ms is None else layout_time(at_ms)
        level = LOG4J2_LEVELS.get(level, level)
        instance = self.instances.get(e.member)
        thread = "hz.main" if instance is None else f"hz.{instance}.{THREADS[logger]}"
        return (f"{when} [{level:>5}] [{thread}] [{LOGGERS[logger]}]: "
                f"{self.bracketed(e.member)} [{self.cluster}] [{self.version}] {text}\n")

    def write(self, events: Iterable[ev.Event], out: Callable[[str], IO[str]]) -> int:
        """Write each event to the stream `out(member)` gives; returns the lines written."""
        n = 0
        for i, e in enumerate(events):
            text = self.line(e, e.order if e.order is not None else i)
            if text is not None:
                out(e.member).write(text)
                n += text.count("\n")
        return n


_SECONDS: dict[int, str] = {}


def layout_time(ms: int) -> str:
    """``yyyy-MM-dd HH:mm:ss,SSS`` (UTC) of epoch milliseconds: log4j2's ``%d``; the
    seconds are formatted once and cached, as simulated logs ask for millions of them."""
    second, milli = divmod(ms, 1000)
    text = _SECONDS.get(second)
    if text is None:
        if len(_SECONDS) > 100_000:
            _SECONDS.clear()
        text = _SECONDS[second] = time.strftime("%Y-%m-%d %H:%M:%S", time.gmtime(second))
    return f"{text},{milli:03d}"


def _date(order: int | None, layout: bool = False) -> str:
    moment = datetime.fromtimestamp((EPOCH_MS + (order or 0) * 1000) / 1000, tz=UTC)
    if layout:
        return moment.strftime("%Y-%m-%d %H:%M:%S,000")
    return moment.strftime("%a %b %d %H:%M:%S UTC %Y")

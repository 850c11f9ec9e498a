"""The event vocabulary shared by the explorer, the Z3 models and the log parsers.

Every event is an immutable, hashable record with the member that observed it, an optional order key
(the logical step in the explorer, a timestamp-derived key in logs) and, for events read from logs,
its `Source` (file and line). The canonical serialisation is one JSON object per line:
``{"type": ..., "member": ..., ...fields, "order": ..., "source": {"file": ..., "line": ...}}``.

Names follow the designs: 002 (membership), 000/003/004 (partition table, migrations, shutdown)
and 001 (Ignite 3 rebalance); the monitors of specs/ read these events and nothing else, from the
explorer and from logs alike (docs/architecture.md).
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from typing import IO, Any, ClassVar

Members = tuple[str, ...]

#: the `member` of an event read from a log record that names no member: a member list with no
#: log-record line before it (no member address) and no ``this`` marker, a bare message in a
#: stream whose member was never named (split-brain reports, copied excerpts). It is the empty
#: string, so it round-trips unchanged through JSON Lines and Arrow rows. Every spec monitor
#: treats such an event as unknown: it changes nothing and raises nothing
#: (`partsafe.specs.monitor.Monitor.step`). The explorer always knows the member.
UNKNOWN_MEMBER = ""


@dataclass(frozen=True, slots=True)
class Source:
    """Where an event came from: a file and a 1-based line number."""

    file: str
    line: int


@dataclass(frozen=True, slots=True, kw_only=True)
class Event:
    """Base of every event: `member` observed it (`UNKNOWN_MEMBER` when a log does not say who);
    `order` and `source` locate it."""

    TYPE: ClassVar[str] = "event"
    member: str
    order: int | None = field(default=None, compare=False)
    source: Source | None = field(default=None, compare=False)

    @property
    def type(self) -> str:
        return self.TYPE


#: a field only logs need (the raft group or partition a log names; the model has one): it is
#: left out of an event's JSON while it has its default, so the model's events read as before
LOG_FIELD = {"omit_default": True}


def group_field() -> Any:
    """The raft group (``0_part_19``, a table partition, the metastore's group) an Ignite log
    names the event in; ``""`` for the model's one partition and for a log line that names none."""
    return field(default="", metadata=LOG_FIELD)


_REGISTRY: dict[str, type[Event]] = {}


def event(name: str):
    """Register an event class under its canonical `type` name."""

    def register(cls: type[Event]) -> type[Event]:
        cls.TYPE = name
        _REGISTRY[name] = cls
        return cls

    return register


def _ev(name: str):
    def wrap(cls: type) -> type[Event]:
        return event(name)(dataclass(frozen=True, slots=True, kw_only=True)(cls))

    return wrap


# --- membership (002) -------------------------------------------------------------------------


@_ev("member_list_installed")
class MemberListInstalled(Event):
    """`member` applied a member list. `version` is None for the legacy (pre-3.9) format."""

    version: int | None
    members: Members
    master: str | None = None
    #: the members' UUIDs in list order, when the log shows them (a restarted member has a new
    #: one: they tell incarnations apart); empty in the explorer
    uuids: tuple[str, ...] = ()


@_ev("member_started")
class MemberStarted(Event):
    """`member` (re)starts: a new incarnation, with a new UUID when known (LifecycleService
    ``STARTING``, or the ``starting at`` banner)."""

    uuid: str | None = None


@_ev("member_suspected")
class MemberSuspected(Event):
    """`member`'s failure detector suspects `suspect` (002 Member Suspicion & Removal)."""

    suspect: str
    reason: str = ""


@_ev("explicit_suspicion")
class ExplicitSuspicion(Event):
    """`member` was asked by `sender` to suspect it (002 Explicit Suspicion)."""

    sender: str
    reason: str = ""


@_ev("suspicion_removed")
class SuspicionRemoved(Event):
    """`member` no longer suspects `suspect` (heartbeat or member list from it)."""

    suspect: str


@_ev("mastership_claim_started")
class MastershipClaimStarted(Event):
    """`member` suspects every older member and claims mastership (002 Mastership Claim).

    `suspected` are members it suspects as the claim starts (in the explorer, the older ones; a
    log shows every member it suspects), and `members` its member list then, when the event shows
    it (``MembershipManager``'s ``Local MembersView{...}``; empty in the explorer).
    """

    suspected: Members = ()
    members: Members = field(default=(), metadata=LOG_FIELD)


@_ev("mastership_claim_accepted")
class MastershipClaimAccepted(Event):
    """`member` accepted `candidate`'s claim and answered with its own member list."""

    candidate: str
    version: int | None = None


@_ev("mastership_claim_sent")
class MastershipClaimSent(Event):
    """`member`, claiming mastership, asks `target` to accept its claim (002 Mastership Claim
    Process): each member younger than itself in its list that it does not suspect when the claim
    starts (the "initial addresses to ask" of ``MembershipManager``), and each member it
    discovers in an accepted answer (``Asking MembersView of ...``, at FINE)."""

    target: str


@_ev("mastership_acceptance_received")
class MastershipAcceptanceReceived(Event):
    """`member`, claiming mastership, counts `sender`'s acceptance of its claim, which carries
    `sender`'s member list `members` at `version` (002 Mastership Claim Process: "as a response
    to mastership claim, members send their member lists"; ``MembershipManager`` logs at FINE
    the answers later than the latest list it knows, ``A more recent MembersView{...} is
    received from ...``)."""

    sender: str
    version: int | None
    members: Members


@_ev("mastership_claimed")
class MastershipClaimed(Event):
    """`member` finished its claim and publishes `members` at `version`."""

    version: int | None
    members: Members


@_ev("member_removed")
class MemberRemoved(Event):
    """Master `member` removed `removed`, producing member list `version`."""

    removed: str
    version: int | None = None


@_ev("member_joined")
class MemberJoined(Event):
    """Master `member` accepted `joined`, producing member list `version`."""

    joined: str
    version: int | None = None


@_ev("split_brain_merge")
class SplitBrainMerge(Event):
    """`member` leaves its side of a split and merges into the cluster of `target` (002)."""

    target: str


@_ev("cluster_state_changed")
class ClusterStateChanged(Event):
    """`member` commits the cluster state change from `old` to `new` (ACTIVE, FROZEN, ...)."""

    old: str
    new: str


@_ev("member_crashed")
class MemberCrashed(Event):
    """`member` crashed (crash-stop)."""


@_ev("member_list_rejected")
class MemberListRejected(Event):
    """`member` ignored a member list from `sender` (stale version, non-master, omits receiver)."""

    sender: str
    version: int | None
    reason: str = ""


# --- partitions (000, 003, 004) ---------------------------------------------------------------


@_ev("partition_table_applied")
class PartitionTableApplied(Event):
    """`member` applied a partition table: one global `version` (3.7) or per-partition versions.

    `sender` is the member the table came from (the master, or `member` itself for a table it
    changed on its own), when known.
    """

    version: int | None = None
    partition_versions: tuple[int, ...] | None = None
    replicas: tuple[tuple[str | None, ...], ...] = ()
    stamp: int | None = None
    sender: str | None = None


@_ev("partition_table_published")
class PartitionTablePublished(Event):
    """Master `member` publishes its partition table (000 §1.1), or only the `partitions` a
    migration changed (003 §1.2; None for the whole table)."""

    version: int | None = None
    partition_versions: tuple[int, ...] | None = None
    replicas: tuple[tuple[str | None, ...], ...] = ()
    partitions: tuple[int, ...] | None = None


@_ev("partition_version_applied")
class PartitionVersionApplied(Event):
    """`member` applied version `version` of one partition (4.1, 003 §1.2), as a log shows it
    for a completed migration (``initialPartitionVersion + partitionVersionIncrement``)."""

    partition: int
    version: int


@_ev("partition_table_conflict")
class PartitionTableConflict(Event):
    """Master `member`, collecting the members' partition tables after a master change (000
    §1.2), received `partition` at one `version` with two different replica arrays
    (`replicas`: the most recent one it held, then the one it received). Hazelcast's
    ``FetchMostRecentPartitionTableTask`` logs it (``Issue while determining latest
    partition...``); the members that held them are not named."""

    partition: int
    version: int
    replicas: tuple[tuple[str | None, ...], ...] = ()


@_ev("partition_table_fetch")
class PartitionTableFetch(Event):
    """A new master's fetch of every member's partition table (000 §1.2): `phase` is
    ``fetching``, ``determined`` or ``applying``."""

    phase: str


@_ev("repartitioning")
class Repartitioning(Event):
    """Master `member` repartitioned and planned `planned` migrations."""

    planned: int


@_ev("migration_started")
class MigrationStarted(Event):
    """A migration began at `member` in `role` (master, source, destination).

    The optional fields are what the master's ``MigrationInfo`` says, when the event shows it:
    the `source_member` (the inherited `source` is where the event was read) and `destination`,
    the source's current replica index, the `source_endpoint` that sends the data (the source
    when it is the owner, else the partition owner, as Hazelcast's ``MigrationPlanTask`` counts
    it), the partition version the
    migration was planned on and the partition version it runs on.
    """

    role: str
    migration: str
    partition: int | None = None
    source_member: str | None = None
    destination: str | None = None
    source_current_index: int | None = None
    source_endpoint: str | None = None
    planned_version: int | None = None
    partition_version: int | None = None


@_ev("migrations_waiting")
class MigrationsWaiting(Event):
    """Master `member`'s plan task waits for a migration to complete with migrations still
    queued (``MigrationPlanTask.next``: ``next0`` found no queued migration it may start;
    003 §2.2). `waiting` has one entry per partition whose queue is not empty, the migration at
    its head; `in_flight` one per migration the master has in flight. Each entry is
    ``(partition, destination, source endpoint)``, the source endpoint as `MigrationStarted`
    has it (None when the partition has no owner).

    Hazelcast logs nothing there; the reference implementation's master emits it after a step
    that changed its state or showed something, while migrations stay queued.
    """

    waiting: tuple[tuple[int, str, str | None], ...] = ()
    in_flight: tuple[tuple[int, str, str | None], ...] = ()


@_ev("migration_finished")
class MigrationFinished(Event):
    """Master `member` is done running `migration`, with no decision shown: its migration
    operation answered (``Finished Migration``, logged before the commit). The master's plan task
    starts no other migration of the partition before (3.x runs one migration at a time), so the
    migration is no longer in flight for the master's schedule."""

    migration: str
    partition: int | None = None


@_ev("migration_failed")
class MigrationFailed(Event):
    """The master `member` gave up on a migration (failed, its commit failed, or it was marked
    FAILED after a master change); `reason` is the log's wording."""

    migration: str
    partition: int | None = None
    reason: str = ""


@_ev("migration_committed")
class MigrationCommitted(Event):
    role: str
    migration: str
    partition: int | None = None


@_ev("migration_rolled_back")
class MigrationRolledBack(Event):
    role: str
    migration: str
    partition: int | None = None


@_ev("replica_cleared")
class ReplicaCleared(Event):
    partition: int
    replica_index: int


@_ev("replica_synced")
class ReplicaSynced(Event):
    partition: int
    replica_index: int


@_ev("promotion_committed")
class PromotionCommitted(Event):
    partition: int
    replica_index: int = 0


@_ev("shutdown_requested")
class ShutdownRequested(Event):
    pass


@_ev("shutdown_request_handled")
class ShutdownRequestHandled(Event):
    """Master `member` handled the shutdown request of `requester` (004): it repartitions
    without it from now on."""

    requester: str


@_ev("shutdown_allowed")
class ShutdownAllowed(Event):
    """Master `member` tells `leaving` that it may shut down (004, ProcessShutdownRequestsTask);
    `leaving` is None when `member` is the one allowed (as a log line of the leaving member
    shows it)."""

    leaving: str | None = None


@_ev("member_left")
class MemberLeft(Event):
    """`member` finished its graceful shutdown and left the cluster (004)."""


@_ev("partition_lost")
class PartitionLost(Event):
    partition: int
    lost_backup_count: int | None = None


# --- the migration planner (000 §3.2) -----------------------------------------------------------
# One partition's replicas: index 0 is the owner, a smaller index is hotter, None an empty index.
# Hazelcast prints arrays of MAX_REPLICA_COUNT (7) indices; a replica is its member's address.


@_ev("plan_started")
class PlanStarted(Event):
    """Master `member` plans the migrations of `partition` from its `current` replicas to the
    `target` repartitioning gave, before cycles are cancelled (000 §3.2; ``MigrationManager``,
    FINEST: ``Planning migrations for partitionId=P. Current replicas: [...], New replicas:
    [...]``)."""

    partition: int
    current: tuple[str | None, ...]
    target: tuple[str | None, ...]


@_ev("plan_state")
class PlanState(Event):
    """A replica array of master `member`'s migration planner for `partition` (000 §3.2;
    ``MigrationPlanner``, FINEST): `stage` ``initial`` (the current replicas, ``Initial
    state``), ``final`` (the target, ``Final state``), ``cycle-fixed`` (the target once its
    cycles are cancelled, ``Final state (after cycle fix)``, logged only when that changed it)
    or ``pass`` (the working array as a pass of the planner's loop starts at replica `index`,
    ``Current index: i, state: [...]``)."""

    partition: int
    stage: str
    replicas: tuple[str | None, ...]
    index: int = -1


@_ev("plan_decision")
class PlanDecision(Event):
    """Master `member`'s migration planner decides one ``migrate`` call for `partition` (000
    §3.1, §3.2.2; ``MigrationPlanner``, FINEST, one line a decision): its `type` (MOVE, COPY,
    SHIFT_UP, SHIFT_DOWN, or CLEAR for "just clear this replica index") and its six arguments,
    ``-1`` for no index (the `source_member`: the inherited `source` is where the event was
    read). A `source_member` of None at a `source_current_index` of 0 or more is the member the
    planner's working array holds there, which the line does not name (``MOVE X to index:
    i``). `case` and `returns_to` say how the line words it beyond its type: ``MOVE-2`` or
    ``MOVE-3``, and the index a SHIFT UP's displaced holder "will get another MOVE migration
    to"."""

    partition: int
    kind: str
    source_member: str | None
    source_current_index: int
    source_new_index: int
    destination: str | None
    destination_current_index: int
    destination_new_index: int
    case: str = field(default="", metadata=LOG_FIELD)
    returns_to: int = field(default=-1, metadata=LOG_FIELD)


@_ev("plan_order")
class PlanOrder(Event):
    """The migrations master `member` queued for `partition`, in the order they run once COPY
    and SHIFT UP migrations are prioritized (000 §3.2.3; ``MigrationPlanner``, FINEST: ``Migration
    order after prioritization: [`` then ``0- MigrationInfo{...},`` a line each, ``]``): each its
    ``(source, source current index, source new index, destination, destination current index,
    destination new index)``. Clears and a lost owner's assignment are applied at once, not
    queued."""

    partition: int
    migrations: tuple[tuple[str | None, int, int, str | None, int, int], ...]


@_ev("migrations_completed")
class MigrationsCompleted(Event):
    """Master `member`'s migration statistics (``MigrationStats``): at the end of a rebalance
    (`outcome` ``completed``, ``failed`` or ``aborted``) or while it runs (``progress``, with
    the queue's `tasks` left)."""

    planned: int
    completed: int
    remaining: int
    outcome: str = "completed"
    total_completed: int | None = None
    tasks: int | None = None


# --- Ignite 3 (001) ---------------------------------------------------------------------------


@_ev("metastore_invoke")
class MetastoreInvoke(Event):
    """An invoke the metastore ran for `member`: the keys it changed (none if `ok` is false), the
    branch taken (`condition`), the revision after it, and the revisions it required (``(key,
    revision)``, 0 for an absent key)."""

    keys: tuple[str, ...]
    condition: str
    ok: bool
    revision: int
    expected: tuple[tuple[str, int], ...] = ()
    group: str = group_field()


@_ev("data_nodes_changed")
class DataNodesChanged(Event):
    """The data nodes of a distribution zone were written: `nodes` from then on (the model's
    baseline change; Ignite 3's ``DataNodesManager``: ``Updated data nodes on …, added history
    entry [zoneId=…, …, nodes=[…]]``, and the zone's first ``Initialized zone's dataNodes
    history``). `zone` is the log's zone id, -1 for the model's one zone."""

    nodes: tuple[str, ...]
    zone: int = field(default=-1, metadata=LOG_FIELD)


@_ev("assignments_changed")
class AssignmentsChanged(Event):
    """A key of a partition's rebalance changed at `revision`: an assignments key to `nodes`
    (`removed` when it was removed), or the change trigger to `value`."""

    partition: int
    key: str
    nodes: tuple[str, ...]
    revision: int
    removed: bool = False
    value: int | None = None
    group: str = group_field()


@_ev("raft_vote")
class RaftVote(Event):
    """`member` grants its vote in `term` to `candidate` (itself, as a candidate)."""

    term: int
    candidate: str
    group: str = group_field()


@_ev("raft_leader")
class RaftLeader(Event):
    """`member` becomes leader in `term`; `votes` are the votes it counted, when known, and
    `peers` the configuration it counted them against (with `old`, the old half of a joint
    configuration), when known: JRaft's ``becomeLeader`` logs "Node {} become leader of group,
    term={}, conf={}, oldConf={}". A log shows no granted vote but the leader's own (JRaft's
    ``electSelf`` grants it), so a leader read from a log counts that one alone: its `votes` are
    a part of those it counted, enough for IGN-RESTART and IGN-ONE-LEADER, not for
    IGN-QUORUM-LEADER, which logs do not judge."""

    term: int
    votes: tuple[str, ...] = ()
    peers: tuple[str, ...] = ()
    #: empty unless the configuration is joint
    old: tuple[str, ...] = ()
    group: str = group_field()


@_ev("raft_peers_changed")
class RaftPeersChanged(Event):
    """The leader `member` puts a configuration of `peers` in place (its joint-consensus entry)."""

    peers: tuple[str, ...]
    term: int | None = None
    group: str = group_field()


@_ev("raft_started")
class RaftStarted(Event):
    """`member` starts its raft node for the partition with configuration `peers`; `reason` is
    ``start`` (storage kept), ``full-restart`` (every peer was empty), ``joining`` (a pending
    rebalance adds it), or, read from a log, ``empty``: the raft node started with no raft meta
    (JRaft's "Node {} init, term=0, ..."), which a log shows without saying why."""

    peers: tuple[str, ...]
    reason: str
    group: str = group_field()


@_ev("node_restarted")
class NodeRestarted(Event):
    in_memory: bool
    group: str = group_field()


@_ev("reduction_requested")
class ReductionRequested(Event):
    """`member` recorded the request that `node` be removed from the partition's group."""

    node: str
    group: str = group_field()


# --- TwoPhase (Gray and Lamport's two-phase commit, the explorer's calibration) ---------------


@_ev("rm_state_changed")
class RmStateChanged(Event):
    """Resource manager `member` moves to `state` (``prepared``, ``committed``, ``aborted``):
    TwoPhase's ``rmState[rm]``."""

    state: str


@_ev("tm_state_changed")
class TmStateChanged(Event):
    """The transaction manager `member` decides: `state` is ``committed`` or ``aborted``
    (TwoPhase's ``tmState``)."""

    state: str


@_ev("tm_prepared_received")
class TmPreparedReceived(Event):
    """The transaction manager `member` receives resource manager `rm`'s ``Prepared`` message
    (TwoPhase's ``tmPrepared``)."""

    rm: str


# --- the run's end ------------------------------------------------------------------------------


@_ev("quiescent")
class Quiescent(Event):
    """The run is quiescent here: nothing but faults can happen any more (the explorer's
    quiescence, or an instrumented cluster that has settled). An event file says so with this
    record, and the quiescence checks of the catalogue are judged at it; a log that merely stops
    never says so. `member` is who declared it (`UNKNOWN_MEMBER` for the run as a whole)."""


EVENT_TYPES: dict[str, type[Event]] = _REGISTRY


# --- JSON Lines -------------------------------------------------------------------------------


#: the canonical event format: its name, the version this partsafe writes, the versions it
#: reads. A file may say which it is in a first line ``{"format": "partsafe-events",
#: "version": 1}`` (`HEADER`); a file without that line is read as the current version. The
#: shape of every event type is `SCHEMA_FILE`, a JSON Schema generated from the classes above
#: (`schema`).
FORMAT = "partsafe-events"
VERSION = 1
KNOWN_VERSIONS = (1,)
SCHEMA_FILE = "events.schema.json"


#: the cluster's settings a header may give, which some monitors need (`CONFIG` names them as
#: the monitors' parameters): Hazelcast's backup count, its parallel migrations per member
#: (``hazelcast.partition.max.parallel.migrations``), whether migrations run one at a time
#: (3.7, before 4.1's parallel migrations), Ignite's partition replica count
CONFIG: dict[str, type] = {"backups": int, "max_parallel": int, "serial": bool, "replicas": int}


def header(specs: Iterable[str] | None = None,
           config: dict[str, Any] | None = None,
           run: dict[str, Any] | None = None) -> dict[str, Any]:
    """The first line of an event file this partsafe writes. `specs`, when given, are the specs
    whose evidence the file is complete for: the run of a model that abstracts part of the
    protocol (the migration model's membership, say) is judged by that model's specs only. A file
    without them (an instrumented cluster's) is judged by every spec with a monitor. `config`
    holds the cluster's settings (`CONFIG`); `run`, for an exported counterexample, the model,
    variant and scope it is a run of (``{"model", "variant", "scope": {param: int}}``), which
    `partsafe conform` takes as the scope to match it at."""
    out: dict[str, Any] = {"format": FORMAT, "version": VERSION}
    if specs is not None:
        out["specs"] = list(specs)
    if config:
        out["config"] = dict(config)
    if run:
        out["run"] = dict(run)
    return out


def is_header(obj: Any) -> bool:
    """Whether a JSON Lines record is a format header (it has ``format`` and no ``type``)."""
    return isinstance(obj, dict) and "format" in obj and "type" not in obj


def check_header(obj: dict[str, Any], where: str) -> None:
    """Raise `UnknownVersion` unless `obj` is a header of a version this partsafe reads."""
    if obj.get("format") != FORMAT:
        raise UnknownVersion(where, f"format {obj.get('format')!r} is not {FORMAT!r}; this "
                                    f"partsafe reads {FORMAT} version "
                                    f"{', '.join(map(str, KNOWN_VERSIONS))}")
    version = obj.get("version")
    if version not in KNOWN_VERSIONS:
        raise UnknownVersion(where, f"{FORMAT} version {version!r} is not one this partsafe "
                                    f"reads ({', '.join(map(str, KNOWN_VERSIONS))}); the "
                                    f"shape of each version is the JSON Schema {SCHEMA_FILE}")
    specs = obj.get("specs")
    if specs is not None and not (isinstance(specs, list)
                                  and all(isinstance(x, str) for x in specs)):
        raise UnknownVersion(where, "the header's 'specs' must be a list of spec ids")
    config = obj.get("config", {})
    if not isinstance(config, dict):
        raise UnknownVersion(where, "the header's 'config' must be an object")
    for key, value in config.items():
        kind = CONFIG.get(key)
        if kind is None:
            raise UnknownVersion(where, f"the header's config has unknown setting {key!r} "
                                        f"(known: {', '.join(CONFIG)})")
        if type(value) is not kind:
            raise UnknownVersion(where, f"the header's config setting {key!r} must be "
                                        f"{'true or false' if kind is bool else 'an integer'}")
    run = obj.get("run", {})
    if not (isinstance(run, dict) and isinstance(run.get("model", ""), str)
            and isinstance(run.get("variant", ""), str)
            and isinstance(run.get("scope", {}), dict)
            and all(isinstance(k, str) and type(v) is int
                    for k, v in run.get("scope", {}).items())):
        raise UnknownVersion(where, "the header's 'run' must be an object with a model, a "
                                    "variant and a scope of integers")
    extra = set(obj) - {"format", "version", "specs", "config", "run"}
    if extra:
        raise UnknownVersion(where, f"the header has unknown field(s) {', '.join(sorted(extra))}"
                                    f" (it holds format, version, specs, config and run)")


class EventFormatError(ValueError):
    """A JSON Lines record that is not a valid event; `where` names file and line."""

    def __init__(self, where: str, reason: str) -> None:
        super().__init__(f"{where}: {reason}")
        self.where = where
        self.reason = reason


class UnknownVersion(EventFormatError):
    """An event file whose header names a format or version this partsafe does not read: the
    whole file cannot be read (bad input), unlike one malformed record."""


def to_dict(ev: Event) -> dict[str, Any]:
    """The canonical JSON object of an event (tuples become lists; `None` source omitted)."""
    out: dict[str, Any] = {"type": ev.TYPE, "member": ev.member}
    for f in dataclasses.fields(ev):
        if f.name in ("member", "order", "source"):
            continue
        value = getattr(ev, f.name)
        if f.metadata.get("omit_default") and value == f.default:
            continue
        if isinstance(value, tuple):
            value = [list(v) if isinstance(v, tuple) else v for v in value]
        out[f.name] = value
    if ev.order is not None:
        out["order"] = ev.order
    if ev.source is not None:
        out["source"] = {"file": ev.source.file, "line": ev.source.line}
    return out


def _freeze(value: Any) -> Any:
    if isinstance(value, list):
        return tuple(_freeze(v) for v in value)
    return value


def from_dict(obj: Any, where: str = "<event>") -> Event:
    """Build an event from its canonical JSON object, with a clear error naming `where`."""
    if not isinstance(obj, dict):
        raise EventFormatError(where, "an event must be a JSON object")
    kind = obj.get("type")
    cls = _REGISTRY.get(kind) if isinstance(kind, str) else None
    if cls is None:
        raise EventFormatError(where, f"unknown event type {kind!r}")
    if not isinstance(obj.get("member"), str):
        raise EventFormatError(where, "field 'member' must be a string")
    names = {f.name: f for f in dataclasses.fields(cls)}
    kwargs: dict[str, Any] = {}
    for key, value in obj.items():
        if key == "type":
            continue
        if key not in names:
            raise EventFormatError(where, f"unknown field {key!r} for event type {kind!r}")
        if key == "source":
            if (
                not isinstance(value, dict)
                or not isinstance(value.get("file"), str)
                or not isinstance(value.get("line"), int)
            ):
                raise EventFormatError(where, "field 'source' must be {file: str, line: int}")
            kwargs[key] = Source(value["file"], value["line"])
        else:
            kwargs[key] = _freeze(value)
    try:
        return cls(**kwargs)
    except TypeError as exc:
        raise EventFormatError(where, f"event type {kind!r}: {exc}") from None


def dumps(ev: Event) -> str:
    """One canonical JSON line (keys in field order, no spaces)."""
    return json.dumps(to_dict(ev), separators=(",", ":"), ensure_ascii=False)


def write_jsonl(events: Iterable[Event], out: IO[str], *, with_header: bool = False,
                specs: Iterable[str] | None = None, config: dict[str, Any] | None = None,
                run: dict[str, Any] | None = None) -> int:
    """Write events as JSON Lines, after the format `header` (declaring `specs` and `config`,
    when given) when `with_header` (an event file should say its version; `partsafe parse`'s
    stream of events does not); returns the count of events written."""
    if with_header:
        out.write(json.dumps(header(specs, config, run), separators=(",", ":")) + "\n")
    n = 0
    for ev in events:
        out.write(dumps(ev))
        out.write("\n")
        n += 1
    return n


def read_jsonl(lines: Iterable[str], file: str = "<stdin>", *, sources: bool = False
               ) -> Iterator[Event]:
    """Read canonical JSON Lines; blank lines are skipped, anything else malformed raises.
    With `sources`, each event's source is its line of `file`."""
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        where = f"{file}:{number}"
        try:
            obj = json.loads(line)
        except json.JSONDecodeError as exc:
            raise EventFormatError(where, f"not JSON ({exc.msg})") from None
        if is_header(obj):
            check_header(obj, where)
            continue
        event = from_dict(obj, where)
        yield dataclasses.replace(event, source=Source(file, number)) if sources else event


# --- the JSON Schema of the format ----------------------------------------------------------------


def _json_type(hint: Any) -> dict[str, Any]:
    """The JSON Schema of one field's type hint."""
    import types
    import typing

    origin = typing.get_origin(hint)
    if origin in (typing.Union, types.UnionType):
        return {"anyOf": [_json_type(a) for a in typing.get_args(hint)]}
    if origin is tuple:
        args = typing.get_args(hint)
        if len(args) == 2 and args[1] is Ellipsis:
            return {"type": "array", "items": _json_type(args[0])}
        return {"type": "array", "prefixItems": [_json_type(a) for a in args],
                "minItems": len(args), "maxItems": len(args)}
    simple = {str: "string", int: "integer", bool: "boolean", type(None): "null"}
    return {"type": simple[hint]}


def schema() -> dict[str, Any]:
    """The JSON Schema (2020-12) of one line of an event file of this `VERSION`: the header, or
    an event of one of `EVENT_TYPES` with exactly its fields (`to_dict`'s shape)."""
    import typing

    source = {"type": "object", "additionalProperties": False, "required": ["file", "line"],
              "properties": {"file": {"type": "string"}, "line": {"type": "integer"}}}
    variants: list[dict[str, Any]] = [{
        "title": "header", "type": "object", "additionalProperties": False,
        "required": ["format", "version"],
        "properties": {"format": {"const": FORMAT}, "version": {"const": VERSION},
                       "specs": {"type": "array", "items": {"type": "string"}},
                       "config": {"type": "object", "additionalProperties": False,
                                  "properties": {k: _json_type(t) for k, t in CONFIG.items()}},
                       "run": {"type": "object", "additionalProperties": False,
                               "properties": {
                                   "model": {"type": "string"},
                                   "variant": {"type": "string"},
                                   "scope": {"type": "object",
                                             "additionalProperties": {"type": "integer"}}}}}}]
    for name, cls in sorted(_REGISTRY.items()):
        hints = typing.get_type_hints(cls)
        props: dict[str, Any] = {"type": {"const": name}, "member": {"type": "string"}}
        required = ["type", "member"]
        for f in dataclasses.fields(cls):
            if f.name in ("member", "order", "source"):
                continue
            props[f.name] = _json_type(hints[f.name])
            if f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING:
                required.append(f.name)
        props["order"] = {"type": "integer"}
        props["source"] = source
        variants.append({"title": name, "description": " ".join((cls.__doc__ or "").split()),
                         "type": "object", "additionalProperties": False,
                         "required": required, "properties": props})
    return {"$schema": "https://json-schema.org/draft/2020-12/schema",
            "$id": f"{FORMAT}-{VERSION}.json",
            "title": f"{FORMAT} version {VERSION}: one line of an event file",
            "oneOf": variants}

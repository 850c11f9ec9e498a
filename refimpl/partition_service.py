"""Hazelcast's partition service under faults, as node handlers (000, 003, 004).

One model, two protocol versions:

- **3.7** (000 "Avoid Data Loss on Migration", 004 "Graceful Shutdown"): one global partition
  table version; the master runs one migration at a time and publishes the whole table.
- **4.1** (003 "Parallel Independent Migrations"): one version per partition and the table stamp;
  the master runs migrations of different partitions in parallel, at most
  ``max_parallel`` per member (the owner counts as the sender of backup data), and publishes only
  the partition a migration changed.

What every member keeps (:class:`Node`): its member list (age order; the head is the master), its
copy of the partition table, the partitions whose data it holds (replica data made explicit, so
that loss and leaks are observable), its active migrations (undecided) and its completed
migrations list. The master also keeps its migration queues, the migrations in flight, the
shutdown requests and, after a master change, the tables it is still collecting.

Membership is abstracted to what the partition service sees of it: a member learns that another
left from a perfect failure detector (the checker's environment), at its own time, and the
master is the oldest member of the local list. A joiner asks the master, which admits it
(``JoinAccepted``) and tells the others (``MemberAdded``); a new master learns the members the old
one admitted from the state it collects, and a member that greets a new master which does not
know it (``MasterHello``) is told it is out (``Removed``) and restarts empty. The 3.9 membership
protocol under this is checked on its own (refimpl/membership.py).

Migration (000 §2.1; Hazelcast's ``MigrationManager``): the master sends ``MigrationRequest`` to
the source endpoint (the partition owner, which sends the data), which checks that the request
comes from its master, that its version is the one the migration was started on and that it has no
undecided migration, and sends the data to the destination (``MigrationData``); the destination
checks the same, installs the data and answers the master. The master prepares a copy of its table
with the migration applied, sends it with ``MigrationCommit`` to the destination (retried until the
destination answers or leaves), and only then applies it, adds it to its completed migrations and
publishes. Members finalise (commit or roll back, with the ``PartitionMigrationEvent`` current /
new replica index rule) when the completed list they receive names a migration they took part in. A
failed migration raises the version (``failure_rule``: the current source's ``increment + 1`` or
000 §2.1 step 4's ``+2``) and planning restarts from scratch (000 §3.2, stateless).

Master crash (000 §1.2, §2.2): the new master asks every member for its table, completed and
active migrations (``Fetch``), waits for each to answer or leave, takes the most recent table (3.7:
the greatest version; 4.1: per partition), completes what some member's completed list says
committed, fails the other active migrations, publishes, and only then repartitions.

Graceful shutdown (004): the member asks the master (retried, idempotent); the master repartitions
without the shutdown-requested members, so they are only migration sources, and tells a member it
may leave once the table no longer names it and no migration involves it.

The historical flaws are variants (:data:`VARIANT_TABLE`). Where a shipped release's code does
something else than the above, a release rule (:data:`RULE_TABLE`, named by the profiles of
refimpl/profiles.py) makes the handlers follow the code: the new master's recovery from the
completed lists alone and its version rules (000 §2.2), 4.1's publications (the periodic stamp
check, completed migrations in batches, migration operations carrying their partition's completed
migrations; 003 §1.2) and the shutdown of 004 without the destination's refusal.

One file, one class of handlers: the partition service is one state machine (000, 003, 004) whose
handlers share the master's bookkeeping (flights, queues, recovery, shutdown requests); read top to
bottom it follows the design's sections, and split by handler each part would need the others.
"""

from __future__ import annotations

import string
from collections.abc import Callable, Hashable, Iterable
from typing import ClassVar, NamedTuple, cast

from partsafe.refimpl import partition_table as pt
from partsafe.refimpl.actor import Channels, NodeId, Send, Step, Timing, message
from partsafe.refimpl.failure_detector import HeartbeatProtocol
from partsafe.refimpl.partition_table import PartitionTable
from partsafe.refimpl.planner import Decision, format_replicas, plan
from partsafe.refimpl.profiles import Rule, Source, check_rules, rule_table
from partsafe.refimpl.repartition import repartition
from partsafe.refimpl.variants import Variant, variant_docs, variant_table
from partsafe.traces import events as ev
from partsafe.traces.events import Event

#: the variants (refimpl/variants.py): the historical flaws of 000, 003 and 004 and two design
#: questions. The 3.7 models (migration, shutdown) and the 4.1 one (parallel) share the table;
#: each flaw is found by the zoo of the model whose design it breaks
VARIANT_TABLE: dict[str, Variant] = variant_table(
    Variant("fixed", "the design: master-only table updates, safe commit, most recent table "
            "after a master change, backup migrations, graceful shutdown through migrations "
            "(000, 003, 004)"),
    Variant("hz37-local-promotion", "a member that notices a leave removes the member from its "
            "own table and shifts the replicas up; a master table that still names it a backup "
            "makes it clear its data and sync from the owner that left (000 Problems)",
            breaks="PT-MASTER-ONLY", zoo_scope={"joins": 0}, zoo_model="migration"),
    Variant("hz37-stale-master-table", "a new master publishes its own table without collecting "
            "the others' (000 Problems, §1.2)",
            breaks="PT-MOST-RECENT", zoo_scope={"joins": 0, "partitions": 3, "shutdowns": 1},
            zoo_model="migration"),
    Variant("hz37-independent-commit", "no commit to the destination first: the master applies "
            "and publishes, participants commit when they see the table and roll back on their "
            "own when the master leaves (000 §2.1 Problems)",
            breaks="MIG-COMMIT-ORDER", zoo_scope={"joins": 0, "shutdowns": 1},
            zoo_model="migration"),
    Variant("hz37-backup-clear-first", "backup changes are applied to the table directly: the "
            "old backup clears its data at once and the new one syncs from the owner later (000 "
            "Problems, issue 5444)",
            breaks="DATA-REPLICAS", zoo_scope={"crashes": 0}, zoo_model="migration"),
    Variant("hz36-shutdown", "a member shuts down once the first backups of its partitions are "
            "assigned, without migrating its replicas (004 Problems)",
            breaks="SHUT-LEAVE-EMPTY", zoo_scope={"crashes": 0}, zoo_model="shutdown"),
    # it runs 4.1's parallel schedule, so only the 4.1 model offers it
    Variant("hz40-global-order-parallel", "parallel migrations publishing one partition at a "
            "time, but compared by one global version (003 §1)",
            breaks="PT-MASTER-ONLY", zoo_scope={"crashes": 0, "joins": 0, "shutdowns": 1},
            models=("parallel",)),
    Variant("fail-plus-two", "design question: a failed migration raises the version by 2 as 000 "
            "§2.1 step 4 says, not by the current source's increment + 1"),
    Variant("no-prioritize", "design question: migrations run in planner order, COPY and SHIFT UP "
            "not moved ahead (000 §3.2.3)"),
)
#: the names and docs of `VARIANT_TABLE` as they were at import
VARIANT_DOCS: dict[str, str] = variant_docs(VARIANT_TABLE)

_REPO = "hazelcast/hazelcast"
_IMPL = "hazelcast/src/main/java/com/hazelcast/internal/partition/impl/"
_OPS = "hazelcast/src/main/java/com/hazelcast/internal/partition/operation/"
_IPSI = _IMPL + "InternalPartitionServiceImpl.java"
_MIGM = _IMPL + "MigrationManager.java"
#: the 4.1 line as read: the 4.1.3 release commit ("version update for 4.1.3 release")
_HZ41 = "ebfdad1d206ecfcabd2abc6928328ae91da46bc8"
#: 5.0-SNAPSHOT (2021-06-18), and the 2025 sources of the same classes
_HZ50 = "9146c0e81528ca3990c664a36057d8c6f2d92ba9"
_HZ5_IPSI = "f7630e4aba588c4f704b658149c2a77ffd774a49"
_HZ5_MIGM = "1be380d00992c4d02cfd57cb045f2f37423ff22d"
_FETCH = "InternalPartitionServiceImpl.FetchMostRecentPartitionTableTask"

#: the rules of the release profiles (refimpl/profiles.py): where the code of a shipped
#: Hazelcast partition service release does something else than `fixed`, each row citing its source
RULE_TABLE: dict[str, Rule] = rule_table(
    Rule("new-master-fails-active",
         "a new master marks every active migration that no collected completed list names as "
         "FAILED, with the increment + 1, and never reads the tables for it "
         "(FetchMostRecentPartitionTableTask.processMigrations); under 4.1 the partition gets "
         "the latest table's replicas with the failed migration's final version, initial + "
         "increment + 1 (processNewState). The 4.1 destination's entry can be gone from every "
         "list: a partition state it applies mid-commit keeps only the master's completed "
         "migrations (retainCompletedMigrations)",
         "the new master also completes a migration the most recent table shows committed: the "
         "destination at its new index with at least the commit's version (000 §2.1 step 2; "
         "HZ-PT-2)",
         (Source(_REPO, "v3.7", _IPSI, f"{_FETCH}.processMigrations"),
          Source(_REPO, "v3.12", _IPSI, f"{_FETCH}.processMigrations"),
          Source(_REPO, _HZ41, _IPSI, f"{_FETCH}.processMigrations"),
          Source(_REPO, _HZ41, _IPSI, f"{_FETCH}.processNewState"),
          Source(_REPO, _HZ41, _IPSI,
                 "InternalPartitionServiceImpl.updatePartitionsAndFinalizeMigrations"),
          Source(_REPO, _HZ41, _MIGM, "MigrationManager.retainCompletedMigrations"),
          Source(_REPO, _HZ50, _IPSI, f"{_FETCH}.processNewState"),
          Source(_REPO, _HZ5_IPSI, _IPSI, f"{_FETCH}.processMigrations"))),
    Rule("publish-when-idle",
         "the periodic task sends nothing while a migration task runs or waits, migrations are "
         "paused or the master is shutting down; otherwise it sends each member the master's "
         "stamp (PartitionStateCheckOperation) and its partition state to those whose stamp "
         "differs (3.12: whose version is lower)",
         "the master publishes its table at any time (000 §1.1): a superset of the code's "
         "publications, so that a clean verdict covers the code's; a counterexample of a "
         "release profile must take a publication its code makes",
         (Source(_REPO, "v3.12", _IMPL + "PublishPartitionRuntimeStateTask.java",
                 "PublishPartitionRuntimeStateTask.run"),
          Source(_REPO, _HZ41, _IMPL + "PublishPartitionRuntimeStateTask.java",
                 "PublishPartitionRuntimeStateTask.run"),
          Source(_REPO, _HZ41, _IPSI,
                 "InternalPartitionServiceImpl.checkClusterPartitionRuntimeStates"),
          Source(_REPO, _HZ41, _MIGM, "MigrationManager.hasOnGoingMigration"),
          Source(_REPO, _HZ41, _OPS + "PartitionStateCheckOperation.java",
                 "PartitionStateCheckOperation.run"))),
    Rule("completed-batch-publish",
         "the master does not publish a decided migration: it publishes its completed "
         "migrations once its MigrationPlanTask has run (PublishCompletedMigrationsTask), or "
         "when ten are waiting (PUBLISH_COMPLETED_MIGRATIONS_BATCH_SIZE), and the partition "
         "state whenever it repartitions (RepartitioningTask); a failed migration's state goes "
         "to the partition owner and the destination only (migrationOperationFailed)",
         "the master publishes the partition after each decided migration (003 §1.2: after "
         "each partition migration, publish that partition only)",
         (Source(_REPO, _HZ41, _MIGM,
                 "MigrationManager.AsyncMigrationTask.migrationOperationSucceeded"),
          Source(_REPO, _HZ41, _MIGM,
                 "MigrationManager.AsyncMigrationTask.migrationOperationFailed"),
          Source(_REPO, _HZ41, _MIGM, "MigrationManager.RepartitioningTask.run"),
          Source(_REPO, _HZ41, _MIGM, "MigrationManager.publishCompletedMigrations"),
          Source(_REPO, _HZ5_MIGM, _IMPL + "MigrationManagerImpl.java",
                 "MigrationManagerImpl.PublishCompletedMigrationsTask.run"))),
    Rule("completed-by-partition",
         "a migration operation carries the master's completed migrations of its partition "
         "only; a participant given a non-empty list applies them to its partition and keeps "
         "only them in its completed list, and fails the operation if they start from another "
         "version; a commit carries the migration only, which the destination adds to its list",
         "a migration operation carries the master's table and completed list, which the "
         "participant takes as a publication (003 §1.1: participants apply the completed "
         "migrations in case they have not seen them), and the commit the prepared table with "
         "the list (000 §2.1 step 1)",
         (Source(_REPO, _HZ41, _MIGM, "MigrationManager.getCompletedMigrations"),
          Source(_REPO, _HZ41, _OPS + "BaseMigrationOperation.java",
                 "BaseMigrationOperation.applyCompletedMigrations"),
          Source(_REPO, _HZ41, _IPSI, "InternalPartitionServiceImpl.applyCompletedMigrations"),
          Source(_REPO, _HZ41, _IPSI, "InternalPartitionServiceImpl.commitMigrationOnDestination"),
          Source(_REPO, _HZ41, _OPS + "MigrationRequestOperation.java",
                 "MigrationRequestOperation.run"))),
    Rule("new-master-plus-one",
         "3.x: the new master takes the table of the greatest version it collected (its own "
         "included) at that version + 1, whether or not it fails a migration; a migration it "
         "marks FAILED raises nothing more (FetchMostRecentPartitionTableTask.processNewState)",
         "the new master raises the version only for the migrations it fails, each by the "
         "failure rule (000 §2.1 step 4, §2.2), so that a failed migration's version is the "
         "same whoever fails it",
         (Source(_REPO, "v3.7", _IPSI, f"{_FETCH}.processNewState"),
          Source(_REPO, "v3.8.2", _IPSI, f"{_FETCH}.processNewState"),
          Source(_REPO, "v3.9", _IPSI, f"{_FETCH}.processNewState"),
          Source(_REPO, "v3.12", _IPSI, f"{_FETCH}.processNewState"))),
    Rule("shutdown-destination-accepts",
         "a member that requested shutdown accepts a migration as its destination: the "
         "migration operations are AllowedDuringPassiveState (MigrationCycleOperation), a "
         "shutting-down node is PASSIVE (Node.setShuttingDown), and no check of "
         "BaseMigrationOperation looks at the node's state",
         "the destination refuses (004: shutdown-requested members are only migration sources): "
         "a migration the master started before it heard of the request would otherwise make "
         "the leaving member a replica again",
         (Source(_REPO, "v3.7", _OPS + "BaseMigrationOperation.java",
                 "BaseMigrationOperation.beforeRun"),
          Source(_REPO, "v3.7", "hazelcast/src/main/java/com/hazelcast/internal/partition/"
                 "MigrationCycleOperation.java", "MigrationCycleOperation"),
          Source(_REPO, "v3.7", "hazelcast/src/main/java/com/hazelcast/instance/Node.java",
                 "Node.setShuttingDown"),
          Source(_REPO, _HZ41, _OPS + "BaseMigrationOperation.java",
                 "BaseMigrationOperation.beforeRun"),
          Source(_REPO, _HZ41, "hazelcast/src/main/java/com/hazelcast/internal/partition/"
                 "MigrationCycleOperation.java", "MigrationCycleOperation"),
          Source(_REPO, _HZ41, "hazelcast/src/main/java/com/hazelcast/instance/impl/Node.java",
                 "Node.setShuttingDown"))),
    Rule("shutdown-all-leave",
         "when every data member has requested shutdown, the master lets them all leave at "
         "once, whatever the table names (ProcessShutdownRequestsTask: the request count equals "
         "the data member count)",
         "a member leaves only once the table names it nowhere (004), so a cluster whose every "
         "member requested shutdown keeps them waiting: no data is dropped by a shutdown",
         (Source(_REPO, "v3.7", _MIGM, "MigrationManager.ProcessShutdownRequestsTask.run"),
          Source(_REPO, _HZ41, _MIGM, "MigrationManager.ProcessShutdownRequestsTask.run"),
          Source(_REPO, _HZ50, _MIGM, "MigrationManager.ProcessShutdownRequestsTask.run"),
          Source(_REPO, _HZ5_MIGM, _IMPL + "MigrationManagerImpl.java",
                 "MigrationManagerImpl.ProcessShutdownRequestsTask.run"))),
)
VARIANTS: tuple[str, ...] = tuple(VARIANT_TABLE)

#: node state `shutdown` values
RUNNING, REQUESTED, LEFT = "", "requested", "left"

#: ``MigrationManager.PUBLISH_COMPLETED_MIGRATIONS_BATCH_SIZE`` (rule ``completed-batch-publish``)
PUBLISH_BATCH = 10


# --- messages and records ---------------------------------------------------------------------


class Migration(NamedTuple):
    """``MigrationInfo`` (000 §2.1): a planner decision for one partition, the
    version it was started on (3.7: the table version; 4.1: the partition version; -1 while
    queued) and the master that started it."""

    partition: int
    source: str | None
    source_current_index: int
    source_new_index: int
    destination: str
    destination_current_index: int
    destination_new_index: int
    version: int = -1
    master: str = ""

    @property
    def decision(self) -> Decision:
        kind = ("COPY" if self.source is None and self.destination_current_index == -1
                else "SHIFT_UP" if self.destination_current_index > -1
                else "SHIFT_DOWN" if self.source_new_index > -1 else "MOVE")
        return Decision(kind, self.source, self.source_current_index, self.source_new_index,
                        self.destination, self.destination_current_index,
                        self.destination_new_index)

    @property
    def id(self) -> str:
        src = self.source or "-"
        return (f"p{self.partition}:{src}{self.source_current_index}>"
                f"{self.destination}{self.destination_new_index}@v{self.version}")


class Completed(NamedTuple):
    """An entry of the completed migrations list (000 §2.1): the migration, its result and (at
    the master) the members that acknowledged a publish carrying it."""

    migration: Migration
    success: bool
    acked: frozenset[str] = frozenset()


class Flight(NamedTuple):
    """A migration in flight at the master: waiting for the data ("request") or for the
    destination's commit ("commit")."""

    migration: Migration
    phase: str


@message
class PartitionState(NamedTuple):
    """The master publishes its table (or, 4.1, the `partitions` a migration changed) with its
    completed migrations list (000 §1.1, §2.1)."""

    replicas: tuple[tuple[str | None, ...], ...]
    versions: tuple[int, ...]
    version: int
    completed: tuple[tuple[Migration, bool], ...]
    partitions: tuple[int, ...] | None = None


@message
class PublishAck(NamedTuple):
    """A member acknowledges the completed migrations it received (eviction, 000 §2.1)."""

    migrations: frozenset[Migration]


@message
class MigrationRequest(NamedTuple):
    """``MigrationRequestOperation`` to the source endpoint, with the master's table and
    completed migrations, which the receiver applies first (003 §1.1)."""

    migration: Migration
    state: PartitionState


@message
class MigrationData(NamedTuple):
    """The source endpoint sends the data to the destination, with the table it has."""

    migration: Migration
    state: PartitionState


@message
class MigrationDone(NamedTuple):
    migration: Migration
    ok: bool


@message
class MigrationCommit(NamedTuple):
    """``MigrationCommitOperation``: the master's prepared table copy (000 §2.1 steps 1-2)."""

    migration: Migration
    replicas: tuple[tuple[str | None, ...], ...]
    versions: tuple[int, ...]
    version: int
    completed: tuple[tuple[Migration, bool], ...]


@message
class CommitAck(NamedTuple):
    migration: Migration


@message
class Fetch(NamedTuple):
    """``FetchPartitionStateOperation`` of a new master (000 §1.2)."""


@message
class FetchReply(NamedTuple):
    """A member's partition state for a new master (000 §1.2), with its member list: the new
    master learns of members that joined through the old master only (002, the claim collects
    the members' lists)."""

    replicas: tuple[tuple[str | None, ...], ...]
    versions: tuple[int, ...]
    version: int
    completed: tuple[tuple[Migration, bool], ...]
    active: tuple[Migration, ...]
    members: tuple[str, ...] = ()
    #: the member asked to shut down: a new master resumes its shutdown (004)
    leaving: bool = False


@message
class JoinRequest(NamedTuple):
    """A dormant node asks the master to join."""


@message
class JoinAccepted(NamedTuple):
    """The master admits a joiner with its member list (002 FinalizeJoin)."""

    members: tuple[str, ...]


@message
class MemberAdded(NamedTuple):
    """The master tells the other members that it admitted `member` (002 MembersUpdate)."""

    member: str


@message
class MasterHello(NamedTuple):
    """A member greets the master that follows the one it lost (the heartbeat of 002): a
    master that does not know it tells it it is out (``Removed``)."""


@message
class ShutdownRequest(NamedTuple):
    pass


@message
class ShutdownResponse(NamedTuple):
    pass


@message
class StateCheck(NamedTuple):
    """``PartitionStateCheckOperation`` (rule ``publish-when-idle``): the master's partition
    versions (4.1: the stamp's input) or global version (3.12)."""

    versions: tuple[int, ...]
    version: int


@message
class StateStale(NamedTuple):
    """A member's answer to `StateCheck` when its table differs: the master sends its state."""


@message
class Removed(NamedTuple):
    """The master tells a member it removed from the cluster that it is out."""


#: operations a member takes only from its master: their handlers ignore any other sender
_FROM_MASTER = frozenset({PartitionState, MigrationCommit, MemberAdded, ShutdownResponse, Removed,
                          StateCheck})


@message
class ReplicaSyncRequest(NamedTuple):
    """A new backup asks the owner for the data (the 3.6 anti-entropy path of the variants)."""

    partition: int


@message
class ReplicaSyncResponse(NamedTuple):
    partition: int


class Recovery(NamedTuple):
    """A new master collecting the members' partition state (000 §1.2, §2.2)."""

    waiting: frozenset[str]
    replicas: tuple[tuple[str | None, ...], ...]
    versions: tuple[int, ...]
    version: int
    completed: frozenset[tuple[Migration, bool]]
    active: frozenset[Migration]


class Node(NamedTuple):
    """The partition service state of one member."""

    members: tuple[str, ...]
    table: PartitionTable
    #: partitions whose data this member holds
    data: frozenset[int]
    #: completed migrations list (the master's carries acknowledgements)
    completed: tuple[Completed, ...]
    #: migrations this member started as source endpoint or destination, not yet decided
    active: tuple[Migration, ...]
    #: master: per partition, the migrations still to start (planner order)
    queues: tuple[tuple[Migration, ...], ...] = ()
    flights: tuple[Flight, ...] = ()
    replan: bool = False
    recovery: Recovery | None = None
    shutdown_requests: frozenset[str] = frozenset()
    allowed: frozenset[str] = frozenset()
    #: RUNNING, REQUESTED or LEFT
    shutdown: str = RUNNING
    #: fetch requests from a member this member does not follow yet
    pending_fetch: frozenset[str] = frozenset()
    #: variants: partitions whose data this member asked the owner for
    syncing: frozenset[int] = frozenset()
    #: master: migrations pause after a failure until the ("resume",) timeout (``MigrationManager``)
    paused: bool = False
    #: members that greeted this one as their master before it knew them (``MasterHello``)
    strangers: frozenset[str] = frozenset()
    #: master, rule ``completed-batch-publish``: decided migrations not published yet
    unpublished: bool = False


def _entries(completed: Iterable[Completed]) -> tuple[tuple[Migration, bool], ...]:
    return tuple((c.migration, c.success) for c in completed)


class PartitionService(HeartbeatProtocol):
    """The partition service of `members` initial members and `joiners` dormant joiners.

    Members learn of departures from a perfect heartbeat failure detector
    (refimpl/failure_detector.py): every live member heartbeats every other
    (`heartbeat_targets`)."""

    name = "partition"
    #: a member that leaves gracefully flushes its connections before the others notice
    messages_are_heartbeats = True

    def __init__(self, members: int = 3, joiners: int = 1, partitions: int = 2, backups: int = 1,
                 protocol: str = "3.7", variant: str = "fixed", *, max_parallel: int = 1,
                 failure_rule: str = "source", rules: Iterable[str] = (),
                 publish_batch: int = PUBLISH_BATCH) -> None:
        if not 1 <= members <= 20 or not 0 <= joiners <= 26 - members:
            raise ValueError(f"members={members}, joiners={joiners}: 1 to 20 members and at most "
                             "26 nodes in all")
        if not 1 <= partitions <= 16:
            raise ValueError(f"partitions={partitions} is outside 1..16")
        if not 0 <= backups <= 6:
            raise ValueError(f"backups={backups} is outside 0..6")
        if protocol not in pt.PROTOCOLS:
            raise ValueError(f"unknown protocol {protocol!r}; known: {', '.join(pt.PROTOCOLS)}")
        if variant not in VARIANT_TABLE:
            raise ValueError(f"unknown partition service variant {variant!r}; known: "
                             f"{', '.join(VARIANT_TABLE)}")
        if failure_rule not in pt.FAILURE_RULES:
            raise ValueError(f"unknown failure rule {failure_rule!r}; known: "
                             f"{', '.join(pt.FAILURE_RULES)}")
        if max_parallel < 1:
            raise ValueError(f"max_parallel={max_parallel} must be at least 1")
        if publish_batch < 1:
            raise ValueError(f"publish_batch={publish_batch} must be at least 1")
        #: rule ``completed-batch-publish``: completed migrations the master publishes at once
        self.publish_batch = publish_batch
        self.variant = variant
        #: the rules this instance follows: a release profile's (`RULE_TABLE`) and the variant
        self.rules = check_rules("partition service", (*rules, variant), RULE_TABLE,
                                 VARIANT_TABLE)
        self.protocol_version = protocol
        self.partitions = partitions
        self.backups = backups
        self.failure_rule = "design" if "fail-plus-two" in self.rules else failure_rule
        self.initial_members = tuple(string.ascii_uppercase[:members])
        self.joiners = tuple(string.ascii_uppercase[members:members + joiners])
        self.nodes = self.initial_members + self.joiners
        self.interchangeable = (frozenset(self.joiners),) if joiners > 1 else ()
        # the global-order variant runs 4.1's parallel schedule on 3.7's global version
        self.global_version = protocol == "3.7" or "hz40-global-order-parallel" in self.rules
        self.parallel = protocol == "4.1" or "hz40-global-order-parallel" in self.rules
        self.max_parallel = max_parallel if self.parallel else 1
        self.table_protocol = "3.7" if self.global_version else "4.1"
        replicas = repartition([()] * partitions, self.initial_members, backups)
        width = min(backups + 1, 7)
        self.start_table = PartitionTable.from_assignment(
            [arr[:width] for arr in replicas], replica_count=width, protocol=self.table_protocol)
        self.empty_table = PartitionTable.initial(partitions, width, self.table_protocol)

    # -- initial states -----------------------------------------------------------------------

    def initial(self, node: NodeId) -> Node | None:
        if node in self.joiners:
            return None
        table = self.start_table
        data = frozenset(p for p, arr in enumerate(table.replicas) if node in arr)
        return Node(members=self.initial_members, table=table, data=data, completed=(),
                    active=())

    def initial_events(self, node: NodeId, state: Hashable) -> tuple[Event, ...]:
        st = cast(Node | None, state)
        if st is None:
            return ()
        out: list[Event] = [ev.MemberListInstalled(member=node, version=None,
                                                   members=st.members, master=st.members[0])]
        if node == self.initial_members[0]:
            out.append(self._published(node, st.table, None))
        out.append(self._applied(node, st.table, self.initial_members[0]))
        out.extend(ev.ReplicaSynced(member=node, partition=p,
                                    replica_index=st.table.replica_index(p, node))
                   for p in sorted(st.data))
        return tuple(out)

    def on_join(self, node: NodeId) -> Step:
        if node not in self.joiners:
            raise ValueError(f"{node!r} is not a joiner of this scope")
        st = Node(members=(), table=self.empty_table, data=frozenset(), completed=(),
                  active=())
        return Step(st, ((self.initial_members[0], JoinRequest()),))

    # -- roles ------------------------------------------------------------------------------

    @staticmethod
    def master_of(st: Node) -> str | None:
        return st.members[0] if st.members else None

    @staticmethod
    def is_master(node: NodeId, st: Node) -> bool:
        return st.shutdown != LEFT and bool(st.members) and st.members[0] == node

    # -- inputs -----------------------------------------------------------------------------

    def is_dead(self, node: NodeId, state: Hashable, src: NodeId, msg: Hashable) -> bool:
        """Operations this member will ignore for ever (see `Channels.dead`):

        - anything, once the member has left (it never comes back);
        - a master's operation from a member that can never be this member's master: itself, or
          a member behind it in its member list or absent from it (members are removed, never
          reordered, and new ones are appended behind this member, so such a sender never moves
          ahead of it);
        - a partition state older than the local table: 3.7 compares the one version, 4.1 each
          carried partition's (none newer and one older); versions never go down (000 §1.1);
        - the master's acknowledgement of completed migrations it has all acknowledged, or
          evicted: the list only gains migrations it starts itself;
        - an answer about a migration its master is done with (`_answer_is_dead`).
        """
        st = cast(Node | None, state)
        if st is None:
            return False
        if st.shutdown == LEFT:
            return True
        kind = type(msg)
        if kind is MigrationDone or kind is CommitAck:
            return self._answer_is_dead(node, st, cast(MigrationDone | CommitAck, msg))
        if kind is PublishAck:
            if not self.is_master(node, st):
                return False
            migrations = cast(PublishAck, msg).migrations
            return all(src in c.acked for c in st.completed if c.migration in migrations)
        if kind not in _FROM_MASTER:
            return False
        members = st.members
        if node not in members:
            return False  # a joiner not admitted yet: its master is still to come
        if src == node or src not in members or members.index(src) > members.index(node):
            return True
        if kind is not PartitionState:
            return False
        state_msg = cast(PartitionState, msg)
        local = st.table
        if self.global_version:
            return state_msg.version < local.version
        carried = (range(len(state_msg.versions)) if state_msg.partitions is None
                   else state_msg.partitions)
        versions = state_msg.versions
        return (all(versions[p] <= local.versions[p] for p in carried)
                and any(versions[p] < local.versions[p] for p in carried))

    def _answer_is_dead(self, node: NodeId, st: Node, msg: MigrationDone | CommitAck) -> bool:
        """An answer about migration `m` to a member that is not the master that started it, or
        to that master once `m` has left the phase the answer is for: a flight moves from
        "request" to "commit" and ends, and the partition's version, raised when it ends,
        never comes back to the version `m` started on."""
        m = msg.migration
        if m.master != node:
            return True
        flight = next((f for f in st.flights if f.migration == m), None)
        if flight is not None:
            return type(msg) is MigrationDone and flight.phase != "request"
        return self._version_of(st.table, m.partition) > m.version

    def on_message(self, node: NodeId, state: Hashable, src: NodeId, msg: Hashable) -> Step:
        st = cast(Node | None, state)
        if st is None or st.shutdown == LEFT:
            return Step(st)
        out = _Out(node, st)
        handler = self._handlers.get(type(msg).__name__)
        if handler is None:
            raise TypeError(f"unknown message {msg!r}")
        handler(self, out, src, msg)
        return out.step(self)

    @property
    def channels(self) -> Channels:  # type: ignore[override]
        """Operations travel over TCP connections (a reordered operation is a fault); the
        operations a member will ignore for ever are dead (`is_dead`)."""
        return Channels(fifo=True, dead=self.is_dead)

    def on_crash(self, node: NodeId, state: Hashable) -> tuple[Event, ...]:
        """`node` crashed (crash-stop), observed as ``MemberCrashed``: the partition monitors
        count its replicas lost and its migrations ended (000 §1.2)."""
        return (ev.MemberCrashed(member=node),)

    def on_suspect(self, node: NodeId, state: Hashable, suspect: NodeId, reason: str) -> Step:
        st = cast(Node, state)
        out = _Out(node, st)
        self._remove_member(out, suspect)
        return out.step(self)

    def monitored(self, node: NodeId, state: Hashable) -> tuple[NodeId, ...]:
        st = cast(Node, state)
        if st.shutdown == LEFT:
            return ()
        return tuple(m for m in st.members if m != node)

    def heartbeat_targets(self, node: NodeId, state: Hashable) -> frozenset[NodeId]:
        """A perfect failure detector: a live member that did not leave is never suspected
        (membership itself is checked in refimpl/membership.py)."""
        st = cast(Node, state)
        if st.shutdown == LEFT or not st.members:
            return frozenset()  # left, or a joiner not admitted yet: it heartbeats nobody
        return frozenset(self.nodes) - {node}

    def timers(self, node: NodeId, state: Hashable) -> tuple[tuple[object, ...], ...]:
        st = cast(Node, state)
        if st.shutdown == LEFT:
            return ()
        out: list[tuple[object, ...]] = []
        if self.is_master(node, st):
            if st.recovery is None and ("publish-when-idle" not in self.rules
                                        or self._idle(st)):
                out.append(("publish",))
            else:
                out.append(("fetch-retry",))
            out.extend(("migration-timeout", f.migration) for f in st.flights)
            if st.paused:
                out.append(("resume",))
        elif st.shutdown == REQUESTED:
            out.append(("shutdown-retry",))
        if st.syncing:
            out.append(("sync-retry",))
        return tuple(out)

    def is_prompt(self, timer: Hashable) -> bool:
        """The shutdown request is resent every ``SAFE_SHUTDOWN_MAX_AWAIT_STEP_MILLIS`` (1 s,
        Hazelcast's shutdown sequence), well inside the 3 to 6 s pause after a failed migration
        (``MigrationManager``)."""
        return cast(tuple[object, ...], timer)[0] == "shutdown-retry"

    def is_timeout(self, timer: Hashable) -> bool:
        return cast(tuple[object, ...], timer)[0] in ("migration-timeout", "fetch-retry",
                                                      "resume")

    @property
    def timing(self) -> Timing:  # type: ignore[override]
        """The master's migration timeout, fetch retry and resume wait for the whole network:
        the relayed data and answers travel through third members, and operation timeouts are
        long next to failure detection; the shutdown request's retry is prompt (`is_prompt`)."""
        return Timing(timeout=self.is_timeout, wait_for_network=True, prompt=self.is_prompt)

    def on_timer(self, node: NodeId, state: Hashable, timer: Hashable) -> Step:
        st = cast(Node, state)
        out = _Out(node, st)
        kind = cast(tuple[object, ...], timer)[0]
        if kind == "publish" and "publish-when-idle" in self.rules:
            # PublishPartitionRuntimeStateTask: checkClusterPartitionRuntimeStates
            out.send_all(StateCheck(st.table.versions, st.table.version))
        elif kind == "publish":
            out.send_all(self._state_message(st, None))
        elif kind == "fetch-retry" and st.recovery is not None:
            out.sends.extend((m, Fetch()) for m in sorted(st.recovery.waiting))
        elif kind == "migration-timeout":
            m = cast(Migration, cast(tuple[object, ...], timer)[1])
            flight = next((f for f in st.flights if f.migration == m), None)
            if flight is not None and flight.phase == "request":
                self._fail(out, m, "the migration timed out")
            elif flight is not None:
                out.sends.append((m.destination, self._commit_message(out.st, m)))
        elif kind == "resume":
            out.st = st._replace(paused=False)
        elif kind == "shutdown-retry" and "hz36-shutdown" in self.rules:
            self._hz36_try_leave(out)
        elif kind == "shutdown-retry":
            master = self.master_of(st)
            if master is not None:
                out.sends.append((master, ShutdownRequest()))
        elif kind == "sync-retry":
            for p in sorted(st.syncing):
                owner = st.table.owner(p)
                if owner is not None and owner != node:
                    out.sends.append((owner, ReplicaSyncRequest(p)))
        return out.step(self)

    def on_shutdown(self, node: NodeId, state: Hashable) -> Step | None:
        st = cast(Node, state)
        if st.shutdown != RUNNING or not st.members:
            return None  # leaving already, or not admitted yet
        out = _Out(node, st)
        out.st = st._replace(shutdown=REQUESTED)
        out.events.append(ev.ShutdownRequested(member=node))
        if "hz36-shutdown" in self.rules:
            self._hz36_try_leave(out)
        elif self.is_master(node, st):
            out.st = out.st._replace(shutdown_requests=out.st.shutdown_requests | {node})
            self._trigger(out)
        else:
            master = self.master_of(st)
            if master is not None:
                out.sends.append((master, ShutdownRequest()))
        return out.step(self)

    # -- message handlers ---------------------------------------------------------------------

    def _on_join(self, out: _Out, src: str, msg: JoinRequest) -> None:
        """The master admits a joiner and tells the others (002); the joiner holds nothing
        yet, so planning restarts with it."""
        st = out.st
        if src in st.members or not self.is_master(out.node, st):
            return
        out.st = st._replace(members=(*st.members, src))
        out.events.append(ev.MemberJoined(member=out.node, joined=src))
        out.sends.extend((m, MemberAdded(src)) for m in st.members if m != out.node)
        out.sends.append((src, JoinAccepted(out.st.members)))
        self._trigger(out)

    def _on_join_accepted(self, out: _Out, src: str, msg: JoinAccepted) -> None:
        if not out.st.members:
            out.st = out.st._replace(members=msg.members)
            out.events.append(ev.MemberListInstalled(member=out.node, version=None,
                                                     members=msg.members, master=src))

    def _on_member_added(self, out: _Out, src: str, msg: MemberAdded) -> None:
        if src == self.master_of(out.st):
            self._add_members(out, (msg.member,))

    @staticmethod
    def _add_members(out: _Out, names: Iterable[str]) -> list[str]:
        """Append the members of `names` this member does not know (age order: newest last);
        the ones added."""
        added = [m for m in names if m not in out.st.members and m != out.node]
        if added:
            out.st = out.st._replace(members=(*out.st.members, *added))
            out.events.extend(ev.MemberJoined(member=out.node, joined=m) for m in added)
        return added

    def _on_hello(self, out: _Out, src: str, msg: MasterHello) -> None:
        """A member that follows this one as its master: one this member does not know once it
        is master and has collected every member's state is out of the cluster."""
        st = out.st
        if src in st.members:
            return
        if self.is_master(out.node, st) and st.recovery is None:
            out.sends.append((src, Removed()))
        else:
            out.st = st._replace(strangers=st.strangers | {src})

    def _on_state(self, out: _Out, src: str, msg: PartitionState) -> None:
        if src != self.master_of(out.st) or src == out.node:
            return
        before = out.st
        if self._receive(out, src, msg.replicas, msg.versions, msg.version, msg.partitions):
            self._learn_completed(out, msg.completed, src)
        if out.st != before and msg.completed:
            out.sends.append((src, PublishAck(frozenset(m for m, _ in msg.completed))))

    def _on_ack(self, out: _Out, src: str, msg: PublishAck) -> None:
        st = out.st
        if not self.is_master(out.node, st):
            return
        completed = tuple(c._replace(acked=c.acked | {src}) if c.migration in msg.migrations
                          and src not in c.acked else c for c in st.completed)
        out.st = st._replace(completed=completed)

    def _on_request(self, out: _Out, src: str, msg: MigrationRequest) -> None:
        """The source endpoint (the owner) starts a migration (000 §2.1, rejection rules)."""
        m = msg.migration
        caught_up = self._catch_up(out, m, msg.state)
        if src == self.master_of(out.st) == m.master:
            # the master vouches for a member whose MemberAdded this member may not have seen
            self._add_members(out, (m.destination,))
        reason = self._reject(out, src, m) if caught_up else "completed migrations not applied"
        if reason is not None:
            out.sends.append((src, MigrationDone(m, False)))
            return
        out.st = out.st._replace(active=(*out.st.active, m))
        role = "source" if out.node == m.source else "owner"
        out.events.append(self._started(out, m, role))
        # completed-by-partition: MigrationOperation carries the request's completed migrations
        data = msg.state if "completed-by-partition" in self.rules else self._state_message(
            out.st, None)
        out.sends.append((m.destination, MigrationData(m, data)))

    def _on_data(self, out: _Out, src: str, msg: MigrationData) -> None:
        """The destination receives the data, installs it and answers the master."""
        m = msg.migration
        caught_up = self._catch_up(out, m, msg.state)
        reason = (self._reject(out, m.master, m) if caught_up
                  else "completed migrations not applied")
        if reason is not None:
            out.sends.append((m.master, MigrationDone(m, False)))
            return
        out.st = out.st._replace(active=(*out.st.active, m))
        out.events.append(self._started(out, m, "destination"))
        self._hold(out, m.partition, m.destination_new_index)
        out.sends.append((m.master, MigrationDone(m, True)))

    def _on_done(self, out: _Out, src: str, msg: MigrationDone) -> None:
        st = out.st
        m = msg.migration
        flight = next((f for f in st.flights if f.migration == m and f.phase == "request"), None)
        if flight is None or not self.is_master(out.node, st):
            return
        if not msg.ok:
            self._fail(out, m, "a participant rejected the migration")
            return
        if "hz37-independent-commit" in self.rules:
            self._commit_on_master(out, m)
            return
        if m.destination == out.node:  # the master is the destination: it commits first
            self._finalize(out, m, True)
            self._commit_on_master(out, m)
            return
        flights = tuple(f._replace(phase="commit") if f.migration == m else f
                        for f in st.flights)
        out.st = st._replace(flights=flights)
        out.sends.append((m.destination, self._commit_message(out.st, m)))

    def _on_commit(self, out: _Out, src: str, msg: MigrationCommit) -> None:
        """The destination commits first (000 §2.1 step 2): it takes the prepared table and the
        completed list, which names the migration as successful."""
        if src != self.master_of(out.st):
            return
        # 4.1: the commit carries the migrating partition only (003 §1.2)
        carried = None if self.global_version else (msg.migration.partition,)
        if self._receive(out, src, msg.replicas, msg.versions, msg.version, carried):
            if "completed-by-partition" in self.rules:
                # commitMigrationOnDestination: the migration joins the list, nothing leaves it
                self._add_completed(out, msg.migration, True)
            else:
                self._learn_completed(out, msg.completed, src)
        out.sends.append((src, CommitAck(msg.migration)))

    def _on_commit_ack(self, out: _Out, src: str, msg: CommitAck) -> None:
        st = out.st
        m = msg.migration
        if any(f.migration == m and f.phase == "commit" for f in st.flights) and \
                self.is_master(out.node, st):
            self._commit_on_master(out, m)

    def _on_fetch(self, out: _Out, src: str, msg: Fetch) -> None:
        if src == self.master_of(out.st):
            out.sends.append((src, self._fetch_reply(out.st)))
        elif src in out.st.members:
            out.st = out.st._replace(pending_fetch=out.st.pending_fetch | {src})

    def _on_fetch_reply(self, out: _Out, src: str, msg: FetchReply) -> None:
        rec = out.st.recovery
        if rec is None or src not in rec.waiting:
            return
        rec = self._merge(rec, msg)._replace(waiting=rec.waiting - {src})
        if msg.leaving and src not in out.st.shutdown_requests:
            out.st = out.st._replace(shutdown_requests=out.st.shutdown_requests | {src})
        # a member the old master admitted may hold committed migrations: collect it too
        unknown = self._add_members(out, msg.members)
        if unknown:
            out.sends.extend((m, Fetch()) for m in unknown)
            rec = rec._replace(waiting=rec.waiting | set(unknown))
            # and the members that follow this master already learn of it (002: the new
            # master's member list), lest one of them take over later without it
            out.sends.extend((m, MemberAdded(u)) for m in out.st.members
                             if m not in rec.waiting and m not in (out.node, src)
                             for u in unknown)
        # a member that answers follows this master: tell it of members it does not know
        out.sends.extend((src, MemberAdded(m)) for m in out.st.members
                         if m not in msg.members and m not in (out.node, src))
        out.st = out.st._replace(recovery=rec)
        self._maybe_recovered(out)

    def _on_shutdown_request(self, out: _Out, src: str, msg: ShutdownRequest) -> None:
        st = out.st
        if not self.is_master(out.node, st) or src not in st.members:
            return
        if src in st.allowed:  # the answer was lost: answer again (004, retried)
            out.sends.append((src, ShutdownResponse()))
            return
        if src in st.shutdown_requests:
            return
        out.st = st._replace(shutdown_requests=st.shutdown_requests | {src})
        self._trigger(out)

    def _on_shutdown_response(self, out: _Out, src: str, msg: ShutdownResponse) -> None:
        if out.st.shutdown == REQUESTED and src == self.master_of(out.st):
            self._leave(out)

    def _on_state_check(self, out: _Out, src: str, msg: StateCheck) -> None:
        """``PartitionStateCheckOperation``: stale when the stamp differs (4.1) or the version
        is lower (3.12)."""
        t = out.st.table
        if src != self.master_of(out.st) or src == out.node:
            return
        stale = t.version < msg.version if self.global_version else t.versions != msg.versions
        if stale:
            out.sends.append((src, StateStale()))

    def _on_state_stale(self, out: _Out, src: str, msg: StateStale) -> None:
        """The master sends its current state to a member whose check failed
        (``InternalPartitionServiceImpl.sendPartitionRuntimeState``)."""
        st = out.st
        if self.is_master(out.node, st) and st.recovery is None and src in st.members:
            out.sends.append((src, self._state_message(st, None)))

    def _on_removed(self, out: _Out, src: str, msg: Removed) -> None:
        """The master does not know this member: it is out of the cluster and restarts with
        nothing (a split-off member, 002)."""
        if src == self.master_of(out.st):
            out.events.append(ev.MemberRemoved(member=out.node, removed=out.node))
            self._leave(out, graceful=False)

    def _on_sync_request(self, out: _Out, src: str, msg: ReplicaSyncRequest) -> None:
        if msg.partition in out.st.data:
            out.sends.append((src, ReplicaSyncResponse(msg.partition)))

    def _on_sync_response(self, out: _Out, src: str, msg: ReplicaSyncResponse) -> None:
        p = msg.partition
        if p in out.st.syncing:
            out.st = out.st._replace(syncing=out.st.syncing - {p})
            index = out.st.table.replica_index(p, out.node)
            if index > 0:
                self._hold(out, p, index)

    _handlers: ClassVar[dict[str, Callable[..., None]]] = {
        "JoinRequest": _on_join,
        "JoinAccepted": _on_join_accepted,
        "MemberAdded": _on_member_added,
        "MasterHello": _on_hello,
        "PartitionState": _on_state,
        "PublishAck": _on_ack,
        "MigrationRequest": _on_request,
        "MigrationData": _on_data,
        "MigrationDone": _on_done,
        "MigrationCommit": _on_commit,
        "CommitAck": _on_commit_ack,
        "Fetch": _on_fetch,
        "FetchReply": _on_fetch_reply,
        "ShutdownRequest": _on_shutdown_request,
        "ShutdownResponse": _on_shutdown_response,
        "Removed": _on_removed,
        "StateCheck": _on_state_check,
        "StateStale": _on_state_stale,
        "ReplicaSyncRequest": _on_sync_request,
        "ReplicaSyncResponse": _on_sync_response,
    }

    # -- members: tables, data, finalisation -------------------------------------------------

    def _catch_up(self, out: _Out, m: Migration, state: PartitionState) -> bool:
        """Apply the table and completed migrations a migration operation carries, as from the
        master (003 §1.1: "members apply these completed migrations in case they haven't seen
        them yet"). False only under ``completed-by-partition``, when the carried migrations do
        not apply to the local partition version."""
        if m.master != self.master_of(out.st) or m.master == out.node:
            return True
        if "completed-by-partition" in self.rules:
            return self._apply_completed(out, m.partition, state.completed)
        if self._receive(out, m.master, state.replicas, state.versions, state.version,
                         state.partitions):
            self._learn_completed(out, state.completed, m.master)
        return True

    def _apply_completed(self, out: _Out, partition: int,
                         carried: tuple[tuple[Migration, bool], ...]) -> bool:
        """Rule ``completed-by-partition`` (``BaseMigrationOperation.applyCompletedMigrations``,
        ``InternalPartitionServiceImpl.applyCompletedMigrations``): nothing if the list is empty;
        else apply each migration not applied yet to the local partition, in order (a commit
        moves the replicas, a failure only raises the version), and keep only the carried
        migrations in the completed list. False if one starts from another version (the
        operation fails: ``PartitionStateVersionMismatchException``)."""
        if not carried:
            return True
        ok = True
        for mig, success in carried:
            cur = out.st.table.versions[partition]
            bump = (pt.migration_increment(mig.decision) if success
                    else pt.failure_increment(mig.decision, self.failure_rule))
            if mig.version + bump <= cur:
                continue
            if mig.version != cur:
                ok = False
                break
            t = out.st.table
            t = (pt.apply_migration(t, partition, mig.decision) if success
                 else self._with_version(t, partition, cur + bump))
            self._set_table(out, t, mig.master)
            self._add_completed(out, mig, success)
        keep = {mig for mig, _ in carried}
        out.st = out.st._replace(completed=tuple(c for c in out.st.completed
                                                 if c.migration in keep))
        return ok

    def _add_completed(self, out: _Out, m: Migration, success: bool) -> None:
        """``MigrationManager.addCompletedMigration`` and the finalisation it schedules."""
        if any(c.migration == m for c in out.st.completed):
            return
        out.st = out.st._replace(completed=(*out.st.completed, Completed(m, success)))
        self._finalize(out, m, success)

    def _version_of(self, table: PartitionTable, partition: int) -> int:
        return table.version if self.global_version else table.versions[partition]

    def _reject(self, out: _Out, master: str, m: Migration) -> str | None:
        """Why a participant refuses migration `m` (000 §2.1; 003 §1.2; the checks of Hazelcast's
        ``MigrationRequestOperation``)."""
        st = out.st
        if master != self.master_of(st) or m.master != master:
            return "not from the master"
        if m.destination not in st.members:
            return "the destination is not a member"  # TargetNotMemberException
        if out.node == m.destination and st.shutdown == REQUESTED \
                and "shutdown-destination-accepts" not in self.rules:
            return "the destination is shutting down"
        if self._version_of(st.table, m.partition) != m.version:
            return "stale partition table"
        busy = st.active if self.global_version and not self.parallel else tuple(
            a for a in st.active if a.partition == m.partition)
        if any(a != m for a in busy):
            return "an undecided migration is active"
        if m in st.active:
            return "already started"
        if any(c.migration == m for c in st.completed):
            # its result came first (the operation was overtaken, or its source crashed with it
            # in flight): starting it now would leave an active migration nobody decides
            return "already decided"
        return None

    def _receive(self, out: _Out, sender: str, replicas: tuple[tuple[str | None, ...], ...],
                 versions: tuple[int, ...], version: int, partitions: tuple[int, ...] | None
                 ) -> bool:
        """Take a table from the master (000 §1.1; 003 §1.2). False if the message is stale
        (older than the local table), so that its completed list is not taken either."""
        local = out.st.table
        if self.global_version:
            newer = version > local.version or (
                "hz37-local-promotion" in self.rules and version == local.version
                and replicas != local.replicas)
            if not newer:
                return version >= local.version
            if partitions is None:
                table = PartitionTable._unchecked(replicas, versions, version, local.protocol)
            else:  # per-partition publication compared by the global version (hz40)
                rep = list(local.replicas)
                ver = list(local.versions)
                for p in partitions:
                    rep[p], ver[p] = replicas[p], versions[p]
                table = PartitionTable._unchecked(tuple(rep), tuple(ver), version,
                                                  local.protocol)
        else:
            carried = range(len(replicas)) if partitions is None else partitions
            rep = list(local.replicas)
            ver = list(local.versions)
            changed = stale = False
            for p in carried:  # partition by partition (003 §1.2)
                if versions[p] > ver[p]:
                    rep[p], ver[p] = replicas[p], versions[p]
                    changed = True
                elif versions[p] < ver[p]:
                    stale = True
            if not changed:
                return not stale
            table = PartitionTable._unchecked(tuple(rep), tuple(ver),
                                              max(version, local.version), local.protocol)
        self._set_table(out, table, sender)
        return True

    def _set_table(self, out: _Out, table: PartitionTable, sender: str) -> None:
        old = out.st.table
        out.st = out.st._replace(table=table)
        out.events.append(self._applied(out.node, table, sender))
        if not self.rules.isdisjoint(("hz37-local-promotion", "hz37-backup-clear-first")):
            self._follow_table(out, old, table)

    def _follow_table(self, out: _Out, old: PartitionTable, new: PartitionTable) -> None:
        """The 3.6 rule of the variants: a member acts on its index in each table it takes.
        A member that is no longer a replica, or was owner and is now a backup, clears its data;
        a backup without data syncs from the owner."""
        node = out.node
        for p in range(new.partition_count):
            was, now = old.replica_index(p, node), new.replica_index(p, node)
            if was == now and (now <= 0 or p in out.st.data or p in out.st.syncing):
                continue
            if p in out.st.data and (now == -1 or (was == 0 and now > 0)) and not any(
                    a.partition == p for a in out.st.active):
                self._drop(out, p, was)
            if now > 0 and p not in out.st.data:
                owner = new.owner(p)
                out.st = out.st._replace(syncing=out.st.syncing | {p})
                if owner is not None:
                    out.sends.append((owner, ReplicaSyncRequest(p)))

    def _hold(self, out: _Out, partition: int, index: int) -> None:
        if partition not in out.st.data:
            out.st = out.st._replace(data=out.st.data | {partition})
            out.events.append(ev.ReplicaSynced(member=out.node, partition=partition,
                                               replica_index=index))

    def _drop(self, out: _Out, partition: int, index: int) -> None:
        if partition in out.st.data:
            out.st = out.st._replace(data=out.st.data - {partition})
            out.events.append(ev.ReplicaCleared(member=out.node, partition=partition,
                                                replica_index=index))

    def _learn_completed(self, out: _Out, completed: tuple[tuple[Migration, bool], ...],
                         sender: str) -> None:
        """Finalise the migrations the completed list decides (000 §2.1: participants finalise
        only when they find the result in the completed list), then keep the list as received."""
        st = out.st
        known = {c.migration for c in st.completed}
        for m, success in completed:
            if m not in known:
                self._finalize(out, m, success)
        if not self.is_master(out.node, out.st):
            out.st = out.st._replace(completed=tuple(Completed(m, s) for m, s in completed))

    def _finalize(self, out: _Out, m: Migration, success: bool) -> None:
        """``commitMigration`` / ``rollbackMigration`` with the ``PartitionMigrationEvent``
        current / new replica index rule (000 "API design"): the source removes its data on
        commit when its new index is -1 (or beyond the backups), the destination on rollback
        when its current index is -1 (or beyond)."""
        node = out.node
        st = out.st
        active = m in st.active
        if active:
            out.st = st._replace(active=tuple(a for a in st.active if a != m))
        role = ("destination" if node == m.destination else "source" if node == m.source
                else "owner" if active else None)
        if role is None or (not active and not (role == "source" and success)):
            return  # not a participant, or never started (a backup source needs no start)
        if success:
            out.events.append(ev.MigrationCommitted(member=node, role=role, migration=m.id,
                                                    partition=m.partition))
            # a completed list may name a commit again after the master evicted it: keep what
            # a later migration made, or is making, this member a replica of
            if role == "source" and not 0 <= m.source_new_index <= self.backups \
                    and out.st.table.replica_index(m.partition, node) == -1 \
                    and not any(a.partition == m.partition for a in out.st.active):
                self._drop(out, m.partition, m.source_current_index)
        else:
            out.events.append(ev.MigrationRolledBack(member=node, role=role, migration=m.id,
                                                     partition=m.partition))
            if role == "destination" and not 0 <= m.destination_current_index <= self.backups:
                self._drop(out, m.partition, m.destination_new_index)

    def _fetch_reply(self, st: Node) -> FetchReply:
        t = st.table
        return FetchReply(t.replicas, t.versions, t.version, _entries(st.completed), st.active,
                          st.members, st.shutdown == REQUESTED)

    def _leave(self, out: _Out, graceful: bool = True) -> None:
        for p in sorted(out.st.data):
            self._drop(out, p, out.st.table.replica_index(p, out.node))
        out.st = out.st._replace(shutdown=LEFT, members=(), active=(), queues=(), flights=(),
                                 recovery=None, syncing=frozenset())
        if graceful:
            out.events.append(ev.MemberLeft(member=out.node))

    def _hz36_try_leave(self, out: _Out) -> None:
        """3.6 shutdown (004 Problems): leave once every partition this member owns has a first
        backup; with 0 backups there is none to check."""
        t = out.st.table
        owned = [p for p in range(t.partition_count) if t.owner(p) == out.node]
        if all(len(t.replicas[p]) < 2 or t.replicas[p][1] is not None for p in owned):
            self._leave(out)

    # -- membership changes --------------------------------------------------------------------

    def _remove_member(self, out: _Out, gone: str) -> None:
        st = out.st
        if gone not in st.members:
            return
        was_master = self.is_master(out.node, st)
        old_master = self.master_of(st)
        out.st = st = st._replace(members=tuple(m for m in st.members if m != gone),
                                  pending_fetch=st.pending_fetch - {gone})
        out.events.append(ev.MemberRemoved(member=out.node, removed=gone))
        if "hz37-local-promotion" in self.rules and not was_master:
            self._local_promotion(out, gone)
        if "hz37-independent-commit" in self.rules and gone == old_master:
            for m in [a for a in out.st.active if a.master == gone]:
                self._finalize(out, m, False)
        if was_master:
            for f in st.flights:
                m = f.migration
                endpoint = self._source_endpoint(st.table, m)
                # once the commit is sent, only the destination matters: it may have the data
                # committed already (000 §2.1 step 4)
                if gone == m.destination or (f.phase == "request" and gone in (endpoint,
                                                                               m.source)):
                    self._fail(out, m, f"{gone} left")
            out.st = out.st._replace(shutdown_requests=out.st.shutdown_requests - {gone},
                                     allowed=out.st.allowed - {gone})
            self._trigger(out)
            rec = out.st.recovery
            if rec is not None:
                out.st = out.st._replace(recovery=rec._replace(waiting=rec.waiting - {gone}))
                self._maybe_recovered(out)
            return
        if self.is_master(out.node, out.st):
            self._become_master(out)
            return
        master = self.master_of(out.st)
        assert master is not None
        if master in out.st.pending_fetch:
            out.st = out.st._replace(pending_fetch=out.st.pending_fetch - {master})
            out.sends.append((master, self._fetch_reply(out.st)))
        elif gone == old_master:
            out.sends.append((master, MasterHello()))
        if gone == old_master and out.st.shutdown == REQUESTED:
            # the request goes to the new master at once (004: retried until answered)
            out.sends.append((master, ShutdownRequest()))

    def _local_promotion(self, out: _Out, gone: str) -> None:
        """hz37-local-promotion: remove `gone` from the local table and shift the replicas after
        it up, without the master (000 Problems)."""
        t = out.st.table
        rep = []
        for arr in t.replicas:
            kept = [r for r in arr if r != gone]
            rep.append(tuple(kept + [None] * (len(arr) - len(kept))))
        if tuple(rep) != t.replicas:
            table = PartitionTable._unchecked(tuple(rep), t.versions, t.version, t.protocol)
            out.st = out.st._replace(table=table)
            out.events.append(self._applied(out.node, table, out.node))

    def _become_master(self, out: _Out) -> None:
        """A new master (000 §1.2): collect every member's table first, unless the variant
        publishes its own."""
        st = out.st
        rec = self._snapshot(st, frozenset(m for m in st.members if m != out.node))
        if "hz37-stale-master-table" in self.rules:
            rec = rec._replace(waiting=frozenset())
        own = frozenset({out.node}) if st.shutdown == REQUESTED else frozenset()
        out.st = st._replace(recovery=rec, replan=False, queues=(), flights=(),
                             shutdown_requests=own, allowed=frozenset(),
                             pending_fetch=frozenset())
        out.sends.extend((m, Fetch()) for m in sorted(rec.waiting))
        self._maybe_recovered(out)

    @staticmethod
    def _snapshot(st: Node, waiting: frozenset[str]) -> Recovery:
        t = st.table
        return Recovery(waiting=waiting, replicas=t.replicas, versions=t.versions,
                        version=t.version,
                        completed=frozenset((c.migration, c.success) for c in st.completed),
                        active=frozenset(st.active))

    def _merge(self, rec: Recovery, reply: FetchReply) -> Recovery:
        """Keep the most recent table: the greater version (3.7), or per partition (4.1)."""
        if self.global_version:
            if reply.version > rec.version:
                rec = rec._replace(replicas=reply.replicas, versions=reply.versions,
                                   version=reply.version)
        else:
            take = [rv > lv for lv, rv in zip(rec.versions, reply.versions, strict=True)]
            if any(take):
                rec = rec._replace(
                    replicas=tuple(r if t else lr for t, lr, r in
                                   zip(take, rec.replicas, reply.replicas, strict=True)),
                    versions=tuple(max(a, b) for a, b in
                                   zip(rec.versions, reply.versions, strict=True)),
                    version=max(rec.version, reply.version))
        return rec._replace(completed=rec.completed | frozenset(reply.completed),
                            active=rec.active | frozenset(reply.active))

    def _maybe_recovered(self, out: _Out) -> None:
        """Every member answered or left: decide the active migrations (000 §2.2), publish the
        most recent table, then repartition."""
        st = out.st
        rec = st.recovery
        if rec is None or rec.waiting:
            return
        t = st.table  # the master's own table may have moved on while it collected
        rec = self._merge(rec, FetchReply(t.replicas, t.versions, t.version,
                                          _entries(st.completed), ()))
        table = PartitionTable._unchecked(rec.replicas, rec.versions, rec.version, t.protocol)
        decided = {m for m, _ in rec.completed}
        acked = {c.migration: c.acked for c in st.completed}
        completed = [Completed(m, s, acked.get(m, frozenset()))
                     for m, s in sorted(rec.completed, key=repr)]
        running = {f.migration for f in st.flights}
        # release rules: the completed lists alone decide (processMigrations), and under 3.x
        # the whole table takes one raise (processNewState)
        lists_only = "new-master-fails-active" in self.rules
        plus_one = "new-master-plus-one" in self.rules and self.global_version
        for m in sorted(rec.active - decided - running, key=repr):
            if not lists_only and self._committed_in(table, m):
                completed.append(Completed(m, True))
                continue
            completed.append(Completed(m, False))
            if plus_one:
                continue
            if lists_only and not self.global_version:
                # the latest replicas at the failed migration's final version
                table = self._with_version(table, m.partition, m.version + pt.failure_increment(
                    m.decision, self.failure_rule))
            else:
                table = pt.fail_migration(table, m.partition, m.decision,
                                          rule=self.failure_rule)
        if plus_one:
            # maxVersion = max(collected, own) + 1, failed migrations or not
            table = PartitionTable._unchecked(table.replicas, table.versions, rec.version + 1,
                                              table.protocol)
        out.st = st._replace(recovery=None, table=table, replan=True)
        if table != st.table:
            out.events.append(self._applied(out.node, table, out.node))
        self._learn_completed(out, tuple((c.migration, c.success) for c in completed), out.node)
        out.st = out.st._replace(completed=tuple(completed))
        out.publish(self, None)
        out.sends.extend((m, Removed()) for m in sorted(out.st.strangers - set(out.st.members)))
        out.st = out.st._replace(strangers=frozenset())

    @staticmethod
    def _with_version(table: PartitionTable, partition: int, version: int) -> PartitionTable:
        """`table` with partition `partition` at `version`, its replicas kept (003 §1.2's
        per-partition versions; 4.1's ``new ReadonlyInternalPartition(replicas, partitionId,
        version)``)."""
        versions = list(table.versions)
        versions[partition] = version
        return PartitionTable._unchecked(table.replicas, tuple(versions), table.version,
                                         table.protocol)

    def _published_partitions(self, m: Migration) -> tuple[int, ...] | None:
        """What the master publishes after deciding `m`: the whole table under 3.7, the
        migration's partition when migrations run in parallel (003 §1.2)."""
        return None if self.global_version and not self.parallel else (m.partition,)

    def _committed_in(self, table: PartitionTable, m: Migration) -> bool:
        """Whether the most recent table shows migration `m` committed: it names the destination
        at its new index with at least the version the commit gives (000 §2.1 step 2: only the
        destination's commit applies the master's prepared table before the master does). A
        destination's entry in a completed list can be gone: under 4.1 a publish of another
        partition replaces the members' lists with the master's, which does not name a
        migration still in its commit phase (003 §1.2)."""
        p = m.partition
        step = 1 if self.global_version else pt.migration_increment(m.decision)
        arr = table.replicas[p]
        return (self._version_of(table, p) >= m.version + step
                and m.destination_new_index < len(arr)
                and arr[m.destination_new_index] == m.destination)

    # -- the master: plan, start, commit, fail ----------------------------------------------

    @staticmethod
    def _trigger(out: _Out) -> None:
        """A membership change or a shutdown request: the remaining plan is cancelled and
        planning restarts once nothing is in flight (000 §3.2, stateless)."""
        out.st = out.st._replace(replan=True, queues=())

    @staticmethod
    def _source_endpoint(table: PartitionTable, m: Migration) -> str | None:
        """Who sends the data (``MigrationManager``): the source when it is the owner, else the
        owner."""
        return m.source if m.source_current_index == 0 else table.owner(m.partition)

    def _commit_message(self, st: Node, m: Migration) -> MigrationCommit:
        """000 §2.1 step 1: a copy of the table with the migration applied and the completed list
        with the migration as successful; the master's own state does not change yet."""
        t = pt.apply_migration(st.table, m.partition, m.decision)
        return MigrationCommit(m, t.replicas, t.versions, t.version,
                               (*_entries(st.completed), (m, True)))

    def _commit_on_master(self, out: _Out, m: Migration) -> None:
        st = out.st
        table = pt.apply_migration(st.table, m.partition, m.decision)
        out.st = st._replace(table=table,
                             flights=tuple(f for f in st.flights if f.migration != m),
                             completed=(*st.completed, Completed(m, True)))
        out.events.append(ev.MigrationCommitted(member=out.node, role="master",
                                                migration=m.id, partition=m.partition))
        out.events.append(self._applied(out.node, table, out.node))
        if "completed-batch-publish" not in self.rules \
                or len(out.st.completed) >= self.publish_batch:
            out.publish(self, self._published_partitions(m))
            out.st = out.st._replace(unpublished=False)
        else:
            # the members learn it at the next publication; the event still marks the master's
            # table, which the specs judge against
            out.st = out.st._replace(unpublished=True)
            out.events.append(self._published(out.node, table, self._published_partitions(m)))
        self._finalize(out, m, True)

    def _fail(self, out: _Out, m: Migration, why: str) -> None:
        st = out.st
        table = pt.fail_migration(st.table, m.partition, m.decision, rule=self.failure_rule)
        out.st = st._replace(table=table,
                             flights=tuple(f for f in st.flights if f.migration != m),
                             completed=(*st.completed, Completed(m, False)), replan=True,
                             queues=(), paused=True)
        out.events.append(ev.MigrationRolledBack(member=out.node, role="master",
                                                 migration=m.id, partition=m.partition))
        out.events.append(self._applied(out.node, table, out.node))
        if "completed-batch-publish" in self.rules:
            # migrationOperationFailed: the state goes to the partition owner and the destination
            state = self._state_message(out.st, None)
            for e in dict.fromkeys((self._source_endpoint(st.table, m), m.destination)):
                if e is not None and e != out.node and e in out.st.members:
                    out.sends.append((e, state))
            out.st = out.st._replace(unpublished=True)
            out.events.append(self._published(out.node, table, self._published_partitions(m)))
        else:
            out.publish(self, self._published_partitions(m))
        self._finalize(out, m, False)

    def drive(self, out: _Out) -> None:
        """What the master does after every input: repair and replan once nothing is in flight,
        start what the limits allow, answer shutdown requests, evict acknowledged migrations."""
        st = out.st
        if not self.is_master(out.node, st) or st.recovery is not None or st.paused:
            return
        if st.replan and not st.flights:
            self._repartition(out)
        elif st.unpublished and not st.flights and not st.queues and not st.replan:
            # PublishCompletedMigrationsTask, queued behind the MigrationPlanTask
            out.publish(self, None)
            out.st = out.st._replace(unpublished=False)
        self._start(out)
        self._waiting(out)
        self._process_shutdowns(out)
        st = out.st
        live = set(st.members) - {out.node}
        keep = tuple(c for c in st.completed if not live <= c.acked)
        if len(keep) != len(st.completed):
            out.st = st._replace(completed=keep)

    def _repartition(self, out: _Out) -> None:
        """RepairPartitionTableTask and RedoPartitioningTask (``MigrationManager``; 000 §3.2)."""
        st = out.st
        table = st.table
        changed = False
        for gone in sorted(table.members() - set(st.members)):
            table = pt.remove_member(table, gone)
            changed = True
        for p in range(table.partition_count):
            if table.owner(p) is not None:
                continue
            if pt.promotion_index(table, p) > 0:
                table = pt.promote(table, p)
                changed = True
            elif any(m not in st.shutdown_requests for m in st.members):
                out.events.append(ev.PartitionLost(member=out.node, partition=p))
                heir = next(m for m in st.members if m not in st.shutdown_requests)
                table = pt.assign_lost_owner(table, p, heir)
                changed = True
        eligible = [m for m in st.members if m not in st.shutdown_requests]
        target = repartition(table.replicas, eligible, self.backups) if eligible else \
            table.replicas
        queues: list[tuple[Migration, ...]] = []
        planned = 0
        for p, (current, goal) in enumerate(zip(table.replicas, target, strict=True)):
            pl = plan(current, goal, partition_id=p)
            for d in pl.clears:
                table = pt.set_replica(table, p, d.source_current_index, None)
                changed = True
            migrations = pl.decisions if "no-prioritize" in self.rules else pl.migrations
            ms = tuple(Migration(p, d.source, d.source_current_index, d.source_new_index,
                                 cast(str, d.destination), d.destination_current_index,
                                 d.destination_new_index, master=out.node)
                       for d in migrations if not d.is_clear)
            if "hz37-backup-clear-first" in self.rules:
                # backup changes go to the table directly, in plan order up to the first owner
                # migration: the plan's later steps assume that one made
                direct = 0
                while direct < len(ms) and ms[direct].destination_new_index > 0:
                    table = pt.apply_migration(table, p, ms[direct].decision)
                    direct += 1
                    changed = True
                ms = ms[direct:]
            planned += len(ms)
            if ms:
                queues.append(ms)
        out.st = st._replace(table=table, queues=tuple(queues), replan=False)
        out.events.append(ev.Repartitioning(member=out.node, planned=planned))
        if changed:
            out.events.append(self._applied(out.node, table, out.node))
            self._follow_own_table(out, st.table, table)
        # completed-batch-publish: RepartitioningTask publishes the state whatever changed
        if changed or "completed-batch-publish" in self.rules:
            out.st = out.st._replace(unpublished=False)
            out.publish(self, None)

    def _follow_own_table(self, out: _Out, old: PartitionTable, new: PartitionTable) -> None:
        if not self.rules.isdisjoint(("hz37-local-promotion", "hz37-backup-clear-first")):
            self._follow_table(out, old, new)

    def _start(self, out: _Out) -> None:
        """Start queue heads (003 §2.2; ``MigrationManager``): one migration per partition, at most
        `max_parallel` per endpoint; serial (one in all) under 3.7."""
        st = out.st
        if not st.queues:
            return
        table = st.table
        flights = list(st.flights)
        queues = list(st.queues)
        load: dict[str, int] = {}
        for f in flights:
            for e in (f.migration.destination, self._source_endpoint(table, f.migration)):
                if e is not None:
                    load[e] = load.get(e, 0) + 1
        busy = {f.migration.partition for f in flights}
        limit = self.max_parallel
        i = 0
        while i < len(queues):
            if not self.parallel and flights:
                break
            q = queues[i]
            m = q[0]
            endpoint = self._source_endpoint(table, m)
            ends = [e for e in (m.destination, endpoint) if e is not None]
            if m.partition in busy or any(load.get(e, 0) >= limit for e in ends):
                i += 1
                continue
            m = m._replace(version=self._version_of(table, m.partition), master=out.node)
            for e in ends:
                load[e] = load.get(e, 0) + 1
            busy.add(m.partition)
            flights.append(Flight(m, "request"))
            out.events.append(self._started(out, m, "master"))
            if endpoint is not None:
                out.sends.append((endpoint, MigrationRequest(m, self._request_state(st, m))))
            if len(q) > 1:
                queues[i] = q[1:]
                i += 1
            else:
                del queues[i]
        out.st = st._replace(flights=tuple(flights), queues=tuple(queues))
        # a request to itself is handled at once
        for dst, msg in list(out.sends):
            if dst == out.node and isinstance(msg, MigrationRequest):
                out.sends.remove((dst, msg))
                self._on_request(out, out.node, msg)

    def _waiting(self, out: _Out) -> None:
        """``MigrationPlanTask.next`` (4.1, 003 §2.2): with migrations still queued after a pass,
        the plan task waits for one to complete. The queue heads it waits with, and the
        migrations in flight, are shown (``migrations_waiting``) after a step that changed the
        master's state or showed something, a step that wakes the plan task; a step that does
        neither shows nothing, so a periodic timer stays a no-op."""
        st = out.st
        if not self.parallel or not st.queues or (st == out.origin and not out.events):
            return

        def entry(m: Migration) -> tuple[int, str, str | None]:
            return m.partition, m.destination, self._source_endpoint(st.table, m)

        out.events.append(ev.MigrationsWaiting(
            member=out.node, waiting=tuple(entry(q[0]) for q in st.queues),
            in_flight=tuple(entry(f.migration) for f in st.flights)))

    def _process_shutdowns(self, out: _Out) -> None:
        """ProcessShutdownRequestsTask (004): a member may leave once the table names it nowhere
        and no migration involves it."""
        st = out.st
        if st.queues or st.replan:
            return
        if "shutdown-all-leave" in self.rules and not st.flights \
                and set(st.members) <= st.shutdown_requests:
            # every data member asked: all are answered, the table is not looked at
            leaving = sorted(st.shutdown_requests - st.allowed)
            out.st = st._replace(allowed=st.allowed | set(leaving))
            for m in leaving:
                out.events.append(ev.ShutdownAllowed(member=out.node, leaving=m))
                if m != out.node:
                    out.sends.append((m, ShutdownResponse()))
            if out.node in leaving:
                self._leave(out)
            return
        names = st.table.members()
        for m in sorted(st.shutdown_requests - st.allowed):
            if m in names or any(m in (f.migration.source, f.migration.destination)
                                 for f in st.flights):
                continue
            out.st = out.st._replace(allowed=out.st.allowed | {m})
            out.events.append(ev.ShutdownAllowed(member=out.node, leaving=m))
            if m == out.node:
                self._leave(out)
                return
            out.sends.append((m, ShutdownResponse()))

    @staticmethod
    def _idle(st: Node) -> bool:
        """Rule ``publish-when-idle`` (the stamp of 003 §1.3):
        ``PublishPartitionRuntimeStateTask`` checks the members' tables only when no migration
        task runs or waits (``MigrationManager.hasOnGoingMigration``: the running
        ``MigrationPlanTask`` counts until its last migration is done), migrations are not
        paused, and the master is not shutting down (``NodeState.ACTIVE``)."""
        return (not st.flights and not st.queues and not st.replan and not st.paused
                and st.shutdown == RUNNING)

    # -- events and messages ---------------------------------------------------------------

    def _state_message(self, st: Node, partitions: tuple[int, ...] | None) -> PartitionState:
        """The table to publish; under 4.1 a whole-table publish leaves out the partitions with
        a migration in flight, whose destination may hold a newer version already (003 §1.2)."""
        t = st.table
        if partitions is None and st.flights and not self.global_version:
            busy = {f.migration.partition for f in st.flights}
            partitions = tuple(p for p in range(t.partition_count) if p not in busy)
        return PartitionState(t.replicas, t.versions, t.version, _entries(st.completed),
                              partitions)

    def _request_state(self, st: Node, m: Migration) -> PartitionState:
        """What a ``MigrationRequest`` carries: the master's state, or under
        ``completed-by-partition`` the completed migrations of `m`'s partition only
        (``MigrationManager.getCompletedMigrations(partitionId)``)."""
        if "completed-by-partition" not in self.rules:
            return self._state_message(st, None)
        t = st.table
        return PartitionState(t.replicas, t.versions, t.version,
                              tuple((c.migration, c.success) for c in st.completed
                                    if c.migration.partition == m.partition), (m.partition,))

    def _applied(self, node: str, t: PartitionTable, sender: str) -> ev.PartitionTableApplied:
        if self.global_version:
            return ev.PartitionTableApplied(member=node, version=t.version, replicas=t.replicas,
                                            sender=sender)
        return ev.PartitionTableApplied(member=node, partition_versions=t.versions,
                                        replicas=t.replicas, stamp=t.stamp, sender=sender)

    def _published(self, node: str, t: PartitionTable,
                   partitions: tuple[int, ...] | None) -> ev.PartitionTablePublished:
        if self.global_version:
            return ev.PartitionTablePublished(member=node, version=t.version,
                                              replicas=t.replicas, partitions=partitions)
        return ev.PartitionTablePublished(member=node, partition_versions=t.versions,
                                          replicas=t.replicas, partitions=partitions)

    def _started(self, out: _Out, m: Migration, role: str) -> ev.MigrationStarted:
        t = out.st.table
        return ev.MigrationStarted(
            member=out.node, role=role, migration=m.id, partition=m.partition,
            source_member=m.source, destination=m.destination,
            source_current_index=m.source_current_index,
            source_endpoint=self._source_endpoint(t, m), planned_version=m.version,
            partition_version=self._version_of(t, m.partition))

    # -- presentation ------------------------------------------------------------------------

    def describe(self, node: NodeId, state: Hashable) -> dict[str, object]:
        st = cast(Node, state)
        t = st.table
        view: dict[str, object] = {
            "members": ",".join(st.members),
            "table": (f"v{t.version} " if self.global_version else "")
            + " ".join(f"p{p}{'' if self.global_version else f'v{t.versions[p]}'}="
                       f"{format_replicas(arr)}" for p, arr in enumerate(t.replicas)),
            "data": sorted(st.data),
        }
        if st.active:
            view["active"] = [m.id for m in st.active]
        if st.completed:
            view["completed"] = [f"{c.migration.id} {'ok' if c.success else 'failed'}"
                                 for c in st.completed]
        if st.flights:
            view["in flight"] = [f"{f.migration.id} ({f.phase})" for f in st.flights]
        if st.queues:
            view["queued"] = [m.id.split("@")[0] for q in st.queues for m in q]
        if st.recovery is not None:
            view["collecting tables from"] = sorted(st.recovery.waiting)
        if st.shutdown_requests:
            view["shutdown requests"] = sorted(st.shutdown_requests)
        if st.shutdown:
            view["shutdown"] = st.shutdown
        return view

    def describe_message(self, msg: Hashable) -> str:
        name = type(msg).__name__
        if isinstance(msg, PartitionState):
            what = "table" if msg.partitions is None else f"partitions {list(msg.partitions)}"
            return f"{name}({what} v{msg.version}, {len(msg.completed)} completed)"
        if isinstance(msg, PublishAck):
            return f"{name}({', '.join(sorted(m.id for m in msg.migrations))})"
        m = getattr(msg, "migration", None)
        if isinstance(m, Migration):
            extra = f", ok={msg.ok}" if isinstance(msg, MigrationDone) else ""
            return f"{name}({m.id}{extra})"
        return repr(msg)


class _Out:
    """The state, sends and events of one handler call being built."""

    __slots__ = ("events", "node", "origin", "sends", "st")

    def __init__(self, node: str, st: Node) -> None:
        self.node = node
        self.st = st
        #: the state the handler started from
        self.origin = st
        self.sends: list[Send] = []
        self.events: list[Event] = []

    def send_all(self, msg: Hashable) -> None:
        self.sends.extend((m, msg) for m in self.st.members if m != self.node)

    def publish(self, proto: PartitionService, partitions: tuple[int, ...] | None) -> None:
        """Publish the table (or the changed partitions) to every member (000 §1.1)."""
        msg = proto._state_message(self.st, partitions)
        self.sends = [(d, m) for d, m in self.sends if not isinstance(m, PartitionState)
                      or m.partitions is not None]
        self.send_all(msg)
        self.events.append(proto._published(self.node, self.st.table, msg.partitions))

    def step(self, proto: PartitionService) -> Step:
        if self.st.shutdown != LEFT:
            proto.drive(self)
        return Step(self.st, tuple(self.sends), tuple(self.events))

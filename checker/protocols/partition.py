"""The partition service models of `partsafe check` (000, 003, 004): `migration` and `shutdown`
run Hazelcast 3.7's protocol, `parallel` 4.1's, all three the handlers of
refimpl/partition_service.py in the actor layer, with the partition monitors and the scenarios a
clean verdict must have reached.

The three share refimpl/partition_service.py's `VARIANT_TABLE` (docs/extending.md): a variant
names the models that offer it when not all of them do, and the model whose zoo finds it.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Sequence
from typing import Any

from partsafe.checker.actor.model import CRASHED, ActorModel, Budget, World
from partsafe.checker.engine.model import Action, Goal, Model
from partsafe.checker.protocols.entry import ModelEntry, Param
from partsafe.checker.protocols.log_trace import Bind, Ignore, LogTable, Maybe, Order, Shown
from partsafe.checker.protocols.membership import MEMBER_ROWS, log_members
from partsafe.refimpl.partition_service import (
    LEFT,
    PUBLISH_BATCH,
    REQUESTED,
    RULE_TABLE,
    VARIANT_TABLE,
    MigrationCommit,
    Node,
    PartitionService,
    ShutdownRequest,
)
from partsafe.specs.partition import partition_monitors
from partsafe.traces import events as ev


def _node(world: World, proto: PartitionService, node: str) -> Node | None:
    st = world.nodes[proto.nodes.index(node)]
    return None if st is None or st is CRASHED else st  # type: ignore[return-value]


def partition_goals(proto: PartitionService) -> tuple[Goal[World], ...]:
    """The scenarios a clean partition service verdict must have reached (000, 003, 004)."""

    def masters(world: World) -> set[str]:
        return {n for n in proto.nodes if (st := _node(world, proto, n)) is not None
                and proto.is_master(n, st)}

    def committed(prev: World, action: Action, nxt: World) -> bool:
        return action[0] == "deliver" and isinstance(action[3], MigrationCommit) and any(
            (st := _node(nxt, proto, n)) is not None and not proto.is_master(n, st)
            and len(st.completed) > len(old.completed)
            for n in proto.nodes if (old := _node(prev, proto, n)) is not None)

    def master_crash_mid_migration(prev: World, action: Action, nxt: World) -> bool:
        return action[0] == "crash" and (st := _node(prev, proto, action[1])) is not None \
            and proto.is_master(action[1], st) and bool(st.flights)

    def recovery_completes(prev: World, action: Action, nxt: World) -> bool:
        return any((old := _node(prev, proto, n)) is not None and old.recovery is not None
                   and (st := _node(nxt, proto, n)) is not None and st.recovery is None
                   for n in masters(nxt) - {proto.initial_members[0]})

    def member_leaves(prev: World, action: Action, nxt: World) -> bool:
        return any((old := _node(prev, proto, n)) is not None and old.shutdown == REQUESTED
                   and (st := _node(nxt, proto, n)) is not None and st.shutdown == LEFT
                   for n in proto.nodes)

    def joiner_receives_data(prev: World, action: Action, nxt: World) -> bool:
        return any((st := _node(nxt, proto, n)) is not None and st.data
                   and (old := _node(prev, proto, n)) is not None and not old.data
                   for n in proto.joiners)

    def parallel_migrations(prev: World, action: Action, nxt: World) -> bool:
        return any((st := _node(nxt, proto, n)) is not None and len(st.flights) > 1
                   for n in masters(nxt))

    goals = [
        Goal("migration-commits", "a destination commits a migration on the master's prepared "
             "table (000 §2.1)", committed),
        Goal("master-crashes-mid-migration", "the master crashes with a migration in flight",
             master_crash_mid_migration),
        Goal("new-master-recovers", "a new master collects the members' tables and publishes "
             "(000 §1.2)", recovery_completes),
    ]
    if proto.joiners:
        goals.append(Goal("joiner-gets-data", "a joiner receives partition data by migration",
                          joiner_receives_data))
    goals.append(Goal("member-leaves", "a shutdown-requested member is allowed to leave (004)",
                      member_leaves))
    if proto.parallel and proto.max_parallel > 1:
        goals.append(Goal("parallel-migrations", "the master has two migrations in flight "
                          "(003 §2.2)", parallel_migrations))
    return tuple(goals)


def _partition_busy(node: str, state: Hashable) -> bool:
    st: Node = state  # type: ignore[assignment]
    return bool(st.queues or st.flights or st.replan or st.recovery is not None
                or st.shutdown == REQUESTED)


def _partition_builder(name: str, protocol: str) -> Callable[[str, dict[str, int]], Model[Any]]:
    """The build function of model `name`, which runs `protocol` ("3.7" or "4.1")."""

    def build(variant: str, scope: dict[str, int],
              rules: frozenset[str] = frozenset()) -> ActorModel:
        proto = PartitionService(scope["members"], scope["joiners"], scope["partitions"],
                                 scope["backups"], protocol, variant,
                                 max_parallel=scope.get("max-parallel", 1), rules=rules,
                                 publish_batch=scope.get("publish-batch", PUBLISH_BATCH))
        budget = Budget(crashes=scope["crashes"], joins=scope["joins"],
                        shutdowns=scope["shutdowns"], losses=scope["losses"],
                        reorders=scope["reorders"])
        goals = partition_goals(proto)
        if not scope["shutdowns"]:
            goals = tuple(g for g in goals if g.name != "member-leaves")
        if not scope["crashes"]:
            goals = tuple(g for g in goals if g.name not in ("master-crashes-mid-migration",
                                                             "new-master-recovers"))
        if not scope["joins"]:
            goals = tuple(g for g in goals if g.name != "joiner-gets-data")
        monitors = partition_monitors(backups=proto.backups, max_parallel=proto.max_parallel,
                                      serial=not proto.parallel)
        model = ActorModel(proto, budget, monitors, goals=goals,
                           scope={k: scope[k] for k in ("members", "joiners", "partitions",
                                                        "backups")},
                           busy=_partition_busy)
        model.name = name
        return model
    return build


def _partition_params(joins: int, shutdowns: int, **extra: Param) -> dict[str, Param]:
    return {
        "members": Param(3, "initial members, oldest first (A is the master)", 1),
        "joiners": Param(1, "dormant nodes that may join"),
        "partitions": Param(2, "partitions", 1),
        "backups": Param(1, "backup count (replicas per partition minus one)"),
        "crashes": Param(1, "crash-stop failures (master, source, destination included)"),
        "joins": Param(joins, "joins of dormant nodes"),
        "shutdowns": Param(shutdowns, "graceful shutdown requests"),
        "losses": Param(0, "lost operations"),
        "reorders": Param(0, "operations that overtake an earlier one on a connection"),
        **extra,
    }


_MEMBER = Bind("member")
_MIGRATION = Bind("migration")
_PARTITION = Bind("partition")
_TABLE_VERSION = Order("partition table version")
_REPLICAS = Ignore("a log prints a table's version, never its replicas")
_FINE = ("(FINE: printed when the partition service logs at FINE, so a log at INFO leaves it "
         "out)")


def _printed(model: ActorModel, world: World, action: Action, nxt: World,
             events: tuple[ev.Event, ...]) -> tuple[ev.Event | Maybe, ...]:
    """What Hazelcast prints for a step of a partition model, which folds membership into the
    partition service: a joiner's start (``is STARTING``); a member's new list whenever its list
    changes (``Members {…}``, after the ``Removing Member`` that changed it; a `Maybe`, since
    the model's own events leave it implicit and a log written from them lacks it); the master's
    ``Shutdown request of Member … is handled`` (MigrationManager, INFO; 004) when a delivered
    ShutdownRequest adds its sender to the master's requests."""
    out: list[ev.Event | Maybe] = []
    if action[0] == "join":
        out.append(ev.MemberStarted(member=action[1]))
    if action[0] == "deliver" and isinstance(action[3], ShutdownRequest):
        _, src, dst, _ = action
        before, after = world.nodes[model.index[dst]], nxt.nodes[model.index[dst]]
        if isinstance(before, Node) and isinstance(after, Node) and \
                src in after.shutdown_requests and src not in before.shutdown_requests:
            out.append(ev.ShutdownRequestHandled(member=dst, requester=src))
    changed = [(name, after.members) for name, before, after in
               zip(model.names, world.nodes, nxt.nodes, strict=True)
               if isinstance(after, Node) and after.members and
               (not isinstance(before, Node) or before.members != after.members)]
    installed = {e.member for e in events if isinstance(e, ev.MemberListInstalled)}
    lists = {name: Maybe(ev.MemberListInstalled(member=name, version=None, members=members,
                                                master=members[0]))
             for name, members in changed if name not in installed}
    for e in events:
        out.append(e)
        if isinstance(e, ev.MemberRemoved | ev.MemberJoined) and e.member in lists:
            out.append(lists.pop(e.member))
    return (*out, *lists.values())


def log_scope(records: Sequence[ev.Event]) -> dict[str, int]:
    """The scope a Hazelcast log needs of a partition model (000, 003, 004): its members and
    joiners (`membership.log_members`), a crash per member removed or suspected, a graceful
    shutdown per member that shuts down; partitions and backups stay the model's own (a log
    of 271 partitions is matched by a run of the model's few: partitions are bound by name). A
    repartitioning that plans migrations moves data between members: a log that names one
    member only gets a joiner it does not name (the members a merge brought, hz_17)."""
    members, joiners, failed = log_members(records)
    if members + joiners == 1 and any(isinstance(e, ev.Repartitioning) and e.planned
                                      for e in records):
        joiners = 1
    leaving = {e.member for e in records if isinstance(e, ev.ShutdownRequested | ev.MemberLeft)
               } | {e.requester for e in records if isinstance(e, ev.ShutdownRequestHandled)}
    return {"members": members, "joiners": joiners, "joins": joiners, "crashes": len(failed),
            "shutdowns": len(leaving)}


#: how a Hazelcast log shows the partition models' steps (000 §2.1, 003, 004; the messages of
#: docs/validation.md, "The messages read", families 7 to 11): at INFO only the member lists,
#: the repartitionings and the lifecycle; the migrations at FINE
LOG_TABLE = LogTable(
    product="Hazelcast",
    shown={
        **MEMBER_ROWS,
        "member_list_installed": Shown(
            MEMBER_ROWS["member_list_installed"].message,
            fields={**MEMBER_ROWS["member_list_installed"].fields,
                    "version": Ignore("the partition models' lists carry no version (the "
                                      "membership model checks versions)")}),
        "partition_table_published": Shown(
            "InternalPartitionService (FINE): Publishing partition state, version: V " + _FINE,
            always=False, fields={"version": _TABLE_VERSION, "replicas": _REPLICAS,
                                  "partition_versions": Ignore("not printed"),
                                  "partitions": Ignore("not printed")}),
        "partition_table_applied": Shown(
            "InternalPartitionService (FINE): Applied partition state update with version: V "
            + _FINE, always=False,
            fields={"version": _TABLE_VERSION, "replicas": _REPLICAS, "sender": _MEMBER,
                    "partition_versions": Ignore("not printed"),
                    "stamp": Ignore("4.1's stamp hashes versions the model numbers otherwise")}),
        "repartitioning": Shown(
            "MigrationManager: Repartitioning cluster data. Migration tasks count: N (or "
            "'Partition balance is ok, no need to repartition.'), on the migration thread",
            deferred=True,
            fields={"planned": Ignore("the log's cluster has more partitions than the model's "
                                      "few")}),
        "migration_started": Shown(
            "MigrationManager (FINE): Starting Migration: MigrationInfo{…} (the master); the "
            "source's and destination's MigrationOperation lines " + _FINE, always=False,
            fields={"migration": _MIGRATION, "partition": _PARTITION, "source_member": _MEMBER,
                    "destination": _MEMBER, "source_endpoint": _MEMBER,
                    "planned_version": _TABLE_VERSION,
                    "partition_version": Order("partition version")}),
        "migration_committed": Shown(
            "MigrationManager (FINE): Finished Migration: MigrationInfo{…, status=SUCCESS} "
            + _FINE, always=False, fields={"migration": _MIGRATION, "partition": _PARTITION}),
        "migration_rolled_back": Shown(
            "MigrationManager (FINE): Finished Migration: MigrationInfo{…, status=FAILED} "
            + _FINE, always=False, fields={"migration": _MIGRATION, "partition": _PARTITION}),
        "partition_lost": Shown(
            "PartitionLostEvent (WARNING): a partition lost with its backups", always=False,
            fields={"partition": _PARTITION,
                    "lost_backup_count": Ignore("counts replica indices, not failures")}),
        "shutdown_requested": Shown("LifecycleService: [h]:p is SHUTTING_DOWN"),
        "shutdown_request_handled": Shown(
            "MigrationManager: Shutdown request of Member [h]:p - uuid is handled (on the "
            "master)", fields={"requester": _MEMBER}),
        "member_left": Shown("LifecycleService: [h]:p is SHUTDOWN"),
    },
    prints=lambda model, state, action, nxt, events: _printed(model, state, action, nxt,
                                                              events),
    starts=lambda member: ev.MemberStarted(member=member),
    outside={t: "a membership message (suspicions, mastership claims): the membership model "
                "has its steps" for t in (
        "member_suspected", "explicit_suspicion", "suspicion_removed",
        "mastership_claim_started", "mastership_claim_accepted", "mastership_claim_sent",
        "mastership_acceptance_received", "mastership_claimed")} | {
        "migrations_completed": "the end of a repartitioning with its counts: the model does "
                                "not count migrations per repartitioning",
        "partition_table_fetch": "a new master's fetch of the most recent table after a merge: "
                                 "the model runs one cluster",
        "split_brain_merge": "a merge of two clusters: the model runs one cluster",
    },
    scope=log_scope,
)


PARTITION_ACTIONS = ("deliver", "timer", "suspect", "crash", "join", "shutdown", "drop",
                     "reorder")
MIGRATION = ModelEntry(
    name="migration",
    title="Hazelcast 3.7 partition migration: safe commit, master crash recovery, backups",
    seed="000",
    params=_partition_params(joins=1, shutdowns=0),
    variant_table=VARIANT_TABLE,
    rule_table=RULE_TABLE,
    log_table=LOG_TABLE,
    build=_partition_builder("migration", "3.7"),
    action_kinds=PARTITION_ACTIONS,
)

SHUTDOWN = ModelEntry(
    name="shutdown",
    title="Hazelcast 3.7 graceful shutdown through migrations",
    seed="004",
    params=_partition_params(joins=0, shutdowns=1),
    variant_table=VARIANT_TABLE,
    rule_table=RULE_TABLE,
    log_table=LOG_TABLE,
    build=_partition_builder("shutdown", "3.7"),
    action_kinds=PARTITION_ACTIONS,
)

PARALLEL = ModelEntry(
    name="parallel",
    title="Hazelcast 4.1 parallel independent migrations with per-partition versions",
    seed="003",
    params=_partition_params(joins=0, shutdowns=1,
                             **{"max-parallel": Param(2, "max.parallel.migrations per member",
                                                      1),
                                "publish-batch": Param(
                                    PUBLISH_BATCH, "completed migrations the master publishes at "
                                    "once under rule completed-batch-publish "
                                    "(PUBLISH_COMPLETED_MIGRATIONS_BATCH_SIZE)", 1)}),
    variant_table=VARIANT_TABLE,
    rule_table=RULE_TABLE,
    log_table=LOG_TABLE,
    build=_partition_builder("parallel", "4.1"),
    action_kinds=PARTITION_ACTIONS,
)

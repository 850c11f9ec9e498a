"""The partition service models of `partsafe check` (000, 003, 004): `migration` and `shutdown`
run Hazelcast 3.7's protocol, `parallel` 4.1's, all three the handlers of
refimpl/partition_service.py in the actor layer, with the partition monitors and the scenarios a
clean verdict must have reached.

The three share refimpl/partition_service.py's `VARIANT_TABLE` (docs/extending.md): a variant
names the models that offer it when not all of them do, and the model whose zoo finds it.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable
from typing import Any

from partsafe.checker.actor.model import CRASHED, ActorModel, Budget, World
from partsafe.checker.engine.model import Action, Goal, Model
from partsafe.checker.protocols.entry import ModelEntry, Param
from partsafe.refimpl.partition_service import (
    LEFT,
    PUBLISH_BATCH,
    REQUESTED,
    RULE_TABLE,
    VARIANT_TABLE,
    MigrationCommit,
    Node,
    PartitionService,
)
from partsafe.specs.partition import partition_monitors


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


PARTITION_ACTIONS = ("deliver", "timer", "suspect", "crash", "join", "shutdown", "drop",
                     "reorder")
MIGRATION = ModelEntry(
    name="migration",
    title="Hazelcast 3.7 partition migration: safe commit, master crash recovery, backups",
    seed="000",
    params=_partition_params(joins=1, shutdowns=0),
    variant_table=VARIANT_TABLE,
    rule_table=RULE_TABLE,
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
    build=_partition_builder("parallel", "4.1"),
    action_kinds=PARTITION_ACTIONS,
)

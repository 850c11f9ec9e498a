"""The models `partsafe check` knows: their scope parameters, variants, coverage goals and the
spec each historical variant is expected to break (the bug zoo).

A model entry builds a `Model` from a variant and a scope. Scope parameters are named the way the
command line names them (`--members 3 --crashes 1`), with defaults that make up the model's default
scope: the smallest that reaches all its coverage goals within about a minute.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable
from dataclasses import dataclass, field
from typing import Any

from partsafe.checker.actor.model import CRASHED, ActorModel, Budget, World
from partsafe.checker.engine.model import Action, Goal, Model
from partsafe.checker.protocols.ignite import build_ignite
from partsafe.checker.protocols.twophase import VARIANTS as TWOPHASE_VARIANTS
from partsafe.checker.protocols.twophase import TwoPhase
from partsafe.refimpl.ignite import VARIANT_DOCS as IGNITE_VARIANTS
from partsafe.refimpl.membership import VARIANT_DOCS as MEMBERSHIP_VARIANTS
from partsafe.refimpl.membership import Membership, MemberState, MembersUpdate
from partsafe.refimpl.partition_service import (
    LEFT,
    REQUESTED,
    MigrationCommit,
    Node,
    PartitionService,
)
from partsafe.refimpl.partition_service import VARIANT_DOCS as PARTITION_VARIANTS
from partsafe.specs.membership import MONITORS as MEMBERSHIP_MONITORS
from partsafe.specs.partition import partition_monitors


@dataclass(frozen=True)
class Param:
    """One scope parameter: its default and what it bounds."""

    default: int
    help: str
    minimum: int = 0


@dataclass(frozen=True)
class ModelEntry:
    name: str
    title: str
    seed: str
    params: dict[str, Param]
    variants: dict[str, str]
    build: Callable[[str, dict[str, int]], Model[Any]]
    #: zoo: variant -> (spec it must break, scope overrides for the zoo run)
    zoo: dict[str, tuple[str, dict[str, int]]] = field(default_factory=dict)
    #: action kinds, so that kinds that never fired are reported
    action_kinds: tuple[str, ...] = ()

    def scope(self, overrides: dict[str, int] | None = None) -> dict[str, int]:
        """The default scope with `overrides` applied; unknown or too small values raise."""
        scope = {k: p.default for k, p in self.params.items()}
        for key, value in (overrides or {}).items():
            if key not in self.params:
                known = ", ".join(f"--{k}" for k in self.params)
                raise ValueError(f"--{key} does not apply to model {self.name} (it takes {known})")
            if type(value) is not int:
                raise ValueError(f"--{key} must be a whole number, not {value!r}")
            if value < self.params[key].minimum:
                raise ValueError(f"--{key} must be at least {self.params[key].minimum}")
            scope[key] = value
        return scope

    def make(self, variant: str = "fixed", overrides: dict[str, int] | None = None) -> Model[Any]:
        if variant not in self.variants:
            raise ValueError(f"unknown variant {variant!r} of model {self.name}; "
                             f"known: {', '.join(self.variants)}")
        return self.build(variant, self.scope(overrides))


# --- membership (002) -------------------------------------------------------------------------


def _member(world: World, proto: Membership, node: str) -> MemberState | None:
    st = world.nodes[proto.nodes.index(node)]
    return None if st is None or st is CRASHED else st  # type: ignore[return-value]


def membership_goals(proto: Membership) -> tuple[Goal[World], ...]:
    """The scenarios a clean membership verdict must have reached (002)."""
    joiners = set(proto.joiners)

    def states(world: World) -> list[tuple[str, MemberState]]:
        return [(n, st) for n, st in zip(proto.nodes, world.nodes, strict=True)
                if st is not None and st is not CRASHED]

    def join_completes(prev: World, action: Action, nxt: World) -> bool:
        if action[0] != "deliver" or action[2] not in joiners:
            return False
        old, new = _member(prev, proto, action[2]), _member(nxt, proto, action[2])
        return new is not None and new.joined and (old is None or not old.joined)

    def claim_completes(prev: World, action: Action, nxt: World) -> bool:
        return any(st.claim is None and st.members and st.members[0] == n
                   and (old := _member(prev, proto, n)) is not None and old.claim is not None
                   for n, st in states(nxt))

    def candidate_crashes(prev: World, action: Action, nxt: World) -> bool:
        return action[0] == "crash" and (st := _member(prev, proto, action[1])) is not None \
            and st.claim is not None

    def publish_races_removal(prev: World, action: Action, nxt: World) -> bool:
        if action[0] != "deliver" or not isinstance(action[3], MembersUpdate):
            return False
        msg: MembersUpdate = action[3]
        st = _member(prev, proto, action[2])
        if st is None or not st.joined or action[1] != st.master:
            return False
        newer = msg.version is None or (st.version is not None and st.version > msg.version)
        return newer and bool(set(msg.members) - set(st.members))

    def claim_discovers(prev: World, action: Action, nxt: World) -> bool:
        if action[0] != "deliver" or (st := _member(nxt, proto, action[2])) is None:
            return False
        old = _member(prev, proto, action[2])
        return (st.claim is not None and old is not None and old.claim is not None
                and len(st.claim.known) > len(old.claim.known))

    def claim_retried(prev: World, action: Action, nxt: World) -> bool:
        return action[0] == "timer" and action[2][0] == "claim-retry"

    def live_member_removed(prev: World, action: Action, nxt: World) -> bool:
        return action[0] == "false-suspect" and (st := _member(prev, proto, action[1])) \
            is not None and Membership.is_master(action[1], st)

    return (
        Goal("join-completes", "a joiner is accepted and installs its first member list",
             join_completes),
        Goal("claim-completes", "a mastership claim finishes and the new master publishes",
             claim_completes),
        Goal("candidate-crashes-mid-claim", "a member crashes while its mastership claim runs",
             candidate_crashes),
        Goal("publish-races-removal", "a member list from the master arrives after a newer list "
             "that removed one of its members", publish_races_removal),
        Goal("master-removes-live-member", "the master falsely suspects a live member and "
             "removes it", live_member_removed),
        Goal("claim-discovers-member", "a claimant learns of a member it did not know from a "
             "claim response (002: B discovers E from D's answer)", claim_discovers),
        Goal("claim-retried", "a member answers a claim with \"not yet\" and is asked again",
             claim_retried),
    )


def _busy(node: str, state: Hashable) -> bool:
    st: MemberState = state  # type: ignore[assignment]
    return st.claim is not None or not st.joined


def build_membership(variant: str, scope: dict[str, int]) -> ActorModel:
    proto = Membership(scope["members"], scope["joiners"], variant)
    budget = Budget(crashes=scope["crashes"], joins=scope["joins"],
                    suspicions=scope["suspicions"], losses=scope["losses"],
                    duplications=scope["duplications"], publishes=scope["publishes"])
    return ActorModel(proto, budget, [m() for m in MEMBERSHIP_MONITORS],
                      goals=membership_goals(proto),
                      scope={"members": scope["members"], "joiners": scope["joiners"]},
                      busy=_busy)


MEMBERSHIP = ModelEntry(
    name="membership",
    title="Hazelcast 3.9 cluster membership",
    seed="002",
    params={
        "members": Param(3, "initial members, oldest first (A is the master)", 1),
        "joiners": Param(1, "dormant nodes that may join"),
        "crashes": Param(1, "crash-stop failures"),
        "joins": Param(1, "joins of dormant nodes"),
        "suspicions": Param(1, "false suspicions of live members"),
        "losses": Param(0, "lost messages"),
        "duplications": Param(0, "duplicated messages"),
        "publishes": Param(0, "periodic member list publishes that race newer updates"),
    },
    variants=MEMBERSHIP_VARIANTS,
    build=build_membership,
    zoo={
        "hz38-unordered-members": ("MEM-VIEW-ORDER", {"suspicions": 0, "publishes": 1}),
        "hz38-stale-master-list": ("MEM-VIEW-AGREEMENT", {"suspicions": 0}),
        "hz38-local-removal": ("MEM-MASTER-ONLY", {"joins": 0}),
        "mutant-no-self-check": ("MEM-VIEW-INTEGRITY", {"joins": 0}),
    },
    action_kinds=("deliver", "timer", "suspect", "heartbeat", "crash", "join", "false-suspect",
                  "drop", "duplicate", "timer-race"),
)

# --- the partition service (000, 003, 004) ------------------------------------------------------


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
    def build(variant: str, scope: dict[str, int]) -> ActorModel:
        proto = PartitionService(scope["members"], scope["joiners"], scope["partitions"],
                                 scope["backups"], protocol, variant,
                                 max_parallel=scope.get("max-parallel", 1))
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
#: the 3.7 models run every variant but the one of the 4.1 schedule
VARIANTS_37 = {k: v for k, v in PARTITION_VARIANTS.items() if k != "hz40-global-order-parallel"}

MIGRATION = ModelEntry(
    name="migration",
    title="Hazelcast 3.7 partition migration: safe commit, master crash recovery, backups",
    seed="000",
    params=_partition_params(joins=1, shutdowns=0),
    variants=VARIANTS_37,
    build=_partition_builder("migration", "3.7"),
    zoo={
        "hz37-local-promotion": ("PT-MASTER-ONLY", {"joins": 0}),
        "hz37-stale-master-table": ("PT-MOST-RECENT", {"joins": 0, "partitions": 3,
                                                      "shutdowns": 1}),
        "hz37-independent-commit": ("MIG-COMMIT-ORDER", {"joins": 0, "shutdowns": 1}),
        "hz37-backup-clear-first": ("DATA-REPLICAS", {"crashes": 0}),
    },
    action_kinds=PARTITION_ACTIONS,
)

SHUTDOWN = ModelEntry(
    name="shutdown",
    title="Hazelcast 3.7 graceful shutdown through migrations",
    seed="004",
    params=_partition_params(joins=0, shutdowns=1),
    variants=VARIANTS_37,
    build=_partition_builder("shutdown", "3.7"),
    zoo={"hz36-shutdown": ("SHUT-LEAVE-EMPTY", {"crashes": 0})},
    action_kinds=PARTITION_ACTIONS,
)

PARALLEL = ModelEntry(
    name="parallel",
    title="Hazelcast 4.1 parallel independent migrations with per-partition versions",
    seed="003",
    params=_partition_params(joins=0, shutdowns=1,
                             **{"max-parallel": Param(2, "max.parallel.migrations per member",
                                                      1)}),
    variants=PARTITION_VARIANTS,
    build=_partition_builder("parallel", "4.1"),
    zoo={"hz40-global-order-parallel": ("PT-MASTER-ONLY", {"crashes": 0, "joins": 0,
                                                            "shutdowns": 1})},
    action_kinds=PARTITION_ACTIONS,
)

# --- TwoPhase (calibration) -------------------------------------------------------------------

TWOPHASE = ModelEntry(
    name="twophase",
    title="Two-phase commit (Gray and Lamport's TwoPhase), the explorer's calibration",
    seed="TwoPhase.tla",
    params={"rms": Param(3, "resource managers", 1)},
    variants={
        "fixed": "TwoPhase as specified: the TM commits once every RM is prepared",
        "tm-commit-early": "not historical: the TM commits once any RM is prepared",
    },
    build=lambda variant, scope: TwoPhase(scope["rms"], variant),
    zoo={"tm-commit-early": ("TC-CONSISTENT", {})},
    action_kinds=("TMRcvPrepared", "TMCommit", "TMAbort", "RMPrepare", "RMChooseToAbort",
                  "RMRcvCommitMsg", "RMRcvAbortMsg"),
)
assert set(TWOPHASE.variants) == set(TWOPHASE_VARIANTS)

# --- Ignite 3 rebalance (001) -----------------------------------------------------------------

IGNITE = ModelEntry(
    name="ignite-rebalance",
    title="Apache Ignite 3 in-memory raft group reconfiguration on node failure",
    seed="001",
    params={
        "nodes": Param(3, "nodes holding the partition at the start (A is its raft leader)", 1),
        "spares": Param(0, "further running nodes a baseline change may add"),
        "replicas": Param(3, "the partition's replica count (calculated assignments)", 1),
        "restarts": Param(1, "node restarts (in-memory storage unless --persistent 1)"),
        "baseline-changes": Param(0, "baseline changes (a node joins or leaves the data nodes)"),
        "losses": Param(0, "lost raft messages (the metastore is reliable)"),
        "reorders": Param(0, "raft messages that overtake an earlier one"),
        "persistent": Param(0, "1: persistent storage (raft meta survives restarts)"),
        "on-disappeared": Param(0, "1: the leader also asks for the removal of a node that "
                                   "disappeared (the design's optimization)"),
        "max-term": Param(2, "raft terms an election may reach (elections stop there; 2 lets "
                             "the leader change once)", 1),
    },
    variants=IGNITE_VARIANTS,
    build=build_ignite,
    # ig-single-planned needs a baseline change as well as a restart; without elections after
    # the first (max-term 1) the fixed design's clean run at that scope takes about 25 s
    zoo={
        "ig-restart-keeps-peer": ("IGN-RESTART", {}),
        "ig-no-trigger-guard": ("IGN-STALE-TRIGGER", {}),
        "ig-single-planned": ("IGN-NO-LOST-REDUCTION", {"baseline-changes": 1, "max-term": 1}),
    },
    action_kinds=("deliver", "suspect", "restart", "admin", "drop", "reorder"),
)

MODELS: dict[str, ModelEntry] = {m.name: m for m in (MEMBERSHIP, MIGRATION, SHUTDOWN, PARALLEL,
                                                     IGNITE, TWOPHASE)}


def get(name: str) -> ModelEntry:
    try:
        return MODELS[name]
    except KeyError:
        raise ValueError(f"unknown model {name!r}; known: {', '.join(MODELS)}") from None

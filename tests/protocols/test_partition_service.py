"""The partition service (refimpl/partition_service.py) on the actor layer: FIFO channels with
reorders on a budget, graceful shutdown requests, and exhaustive runs of the fixed design at the
scopes it is clean at."""

from __future__ import annotations

from collections.abc import Hashable
from typing import Any

import pytest
from click.testing import CliRunner

from partsafe.checker.actor.model import CRASHED, ActorModel, Budget, World
from partsafe.checker.actor.network import dead_claim_errors
from partsafe.checker.cli.main import main
from partsafe.checker.engine.bfs import Bounds, explore
from partsafe.checker.protocols import catalog
from partsafe.refimpl.partition_service import (
    LEFT,
    Completed,
    Fetch,
    FetchReply,
    JoinRequest,
    MemberAdded,
    Migration,
    MigrationData,
    MigrationDone,
    Node,
    PartitionService,
    PartitionState,
    Recovery,
)
from partsafe.specs.partition import MONITORS


def _busy(node: str, state: Hashable) -> bool:
    st: Node = state  # type: ignore[assignment]
    return bool(st.queues or st.flights or st.replan or st.recovery is not None
                or st.shutdown == "requested")


def make(protocol: str = "3.7", variant: str = "fixed", **budget: int) -> ActorModel:
    proto = PartitionService(3, 1, 2, 1, protocol, variant, max_parallel=2)
    return ActorModel(proto, Budget(**budget), [m() for m in MONITORS], busy=_busy)


def test_initial_table_is_balanced_and_every_replica_holds_its_data() -> None:
    model = make()
    world = next(iter(model.init_states()))
    proto = model.protocol
    assert isinstance(proto, PartitionService)
    assert proto.start_table.replicas == (("A", "C"), ("B", "A"))
    for name, st in zip(proto.nodes, world.nodes, strict=True):
        if st is None:
            continue
        assert st.data == frozenset(p for p, arr in enumerate(st.table.replicas) if name in arr)


def test_channels_are_fifo_and_a_reorder_spends_its_budget() -> None:
    model = make(joins=1, reorders=1)
    world = next(iter(model.init_states()))
    net = frozenset({("B", "A", (JoinRequest(), PartitionState((), (), 5, ())))})
    world = world._replace(network=net)
    actions = [act for act, _ in model.successors(world) if act[0] in ("deliver", "reorder")]
    assert ("deliver", "B", "A", JoinRequest()) in actions
    reorders = [act for act in actions if act[0] == "reorder"]
    assert [type(act[3]).__name__ for act in reorders] == ["PartitionState"]
    spent = next(w for act, w in model.successors(world) if act[0] == "reorder")
    assert spent.budget[-1] == 0
    without = make(joins=1)
    world0 = next(iter(without.init_states()))._replace(network=net)
    assert not [act for act, _ in without.successors(world0) if act[0] == "reorder"]


def test_shutdown_is_a_budgeted_request_and_a_left_member_is_done() -> None:
    model = make(shutdowns=1)
    world = next(iter(model.init_states()))
    shutdowns = [(act, w) for act, w in model.successors(world) if act[0] == "shutdown"]
    assert sorted(act[1] for act, _ in shutdowns) == ["A", "B", "C"]
    _, after = next((act, w) for act, w in shutdowns if act[1] == "C")
    c = model.names.index("C")
    assert after.nodes[c].shutdown == "requested"
    assert after.budget[6] == 0
    assert not [act for act, _ in model.successors(after) if act[0] == "shutdown"]


SMALL = {"crashes": 0, "joins": 0, "shutdowns": 0}


SCOPES = [
    ("migration", {"crashes": 1}, 61, 63),
    ("migration", {"joins": 1}, 231, 251),
    ("shutdown", {"shutdowns": 1}, 269, 397),
    ("shutdown", {"crashes": 1, "shutdowns": 1}, 3803, 8252),
    ("parallel", {"crashes": 1}, 224, 239),
    ("parallel", {"joins": 1}, 1401, 1431),
    ("parallel", {"shutdowns": 1}, 8715, 13810),
]


@pytest.mark.parametrize(("model", "budget", "states", "undiscarded"), SCOPES)
def test_fixed_design_is_clean(model: str, budget: dict[str, int], states: int,
                               undiscarded: int) -> None:
    """Every spec of the partition service holds on the fixed design (all 19 monitors, the
    quiescence checks and the deadlock check), exhaustively at these scopes, with dead
    operations discarded (the default) and kept."""
    for discard, count in ((True, states), (False, undiscarded)):
        model_ = catalog.get(model).make("fixed", {**SMALL, **budget})
        assert isinstance(model_, ActorModel)
        model_.discard_dead = discard
        result = explore(model_)
        assert result.result in ("ok", "gap"), [(v.spec, v.message) for v in result.violations]
        assert result.incomplete_reason is None
        assert result.distinct_states == count


@pytest.mark.parametrize(("model", "budget", "variant"), [
    ("migration", {"crashes": 1, "joins": 1}, "fixed"),
    ("shutdown", {"crashes": 1, "shutdowns": 1}, "fixed"),
    ("parallel", {"shutdowns": 1}, "fixed"),
    ("migration", {"losses": 1, "shutdowns": 1}, "fixed"),
    ("parallel", {"reorders": 1, "crashes": 1}, "fixed"),
    ("migration", {"crashes": 1, "shutdowns": 1}, "hz37-independent-commit"),
    ("migration", {"crashes": 1, "shutdowns": 1}, "hz37-local-promotion"),
    ("migration", {"crashes": 1, "shutdowns": 1}, "fail-plus-two"),
])
def test_operations_claimed_dead_are_ignored_for_ever(model: str, budget: dict[str, int],
                                                      variant: str) -> None:
    """`PartitionService.is_dead` over every reachable state (explored without discarding): a
    dead operation is a no-op at its receiver, and stays dead whatever the receiver does."""
    model_ = catalog.get(model).make(variant, {**SMALL, **budget})
    assert isinstance(model_, ActorModel)
    assert dead_claim_errors(model_) == []


def test_discarding_dead_operations_keeps_every_node_state() -> None:
    """The reduction is a stutter reduction: the same member states are reached either way."""
    kept = catalog.get("shutdown").make("fixed", {**SMALL, "crashes": 1, "shutdowns": 1})
    assert isinstance(kept, ActorModel)
    kept.discard_dead = False
    reduced = catalog.get("shutdown").make("fixed", {**SMALL, "crashes": 1, "shutdowns": 1})
    assert {w.nodes for w in reachable(reduced)} == {w.nodes for w in reachable(kept)}


def reachable(model: ActorModel) -> set[World]:
    seen = set(model.init_states())
    frontier = list(seen)
    while frontier:
        frontier = [t for s in frontier for _, t in model.successors(s) if t not in seen
                    and not seen.add(t)]  # type: ignore[func-returns-value]
    return seen


def test_a_graceful_shutdown_ends_with_the_member_gone_and_its_data_moved() -> None:
    model = make(shutdowns=1)
    result = explore(model)
    assert result.result == "ok"
    assert (result.distinct_states, result.depth) == (269, 31)
    # drive one run to the end: C asks to leave and the cluster lets it go
    world = next(iter(model.init_states()))
    world = next(w for act, w in model.successors(world) if act == ("shutdown", "C"))
    c = model.names.index("C")
    for _ in range(200):
        succ = [(act, w) for act, w in model.successors(world) if act[0] not in ("shutdown",)]
        if not succ:
            break
        world = succ[0][1]
    st = world.nodes[c]
    assert st is not None and st is not CRASHED and st.shutdown == LEFT
    assert st.data == frozenset()
    holders = [n for n, s in zip(model.names, world.nodes, strict=True)
               if s not in (None, CRASHED) and s.shutdown != LEFT]
    for p in range(2):
        assert any(p in world.nodes[model.names.index(n)].data for n in holders)


#: (distinct states, depth) of the fixed design at each zoo entry's scope
FIXED_AT_ZOO_SCOPE = {
    "hz37-local-promotion": (61, 16),
    "hz37-stale-master-table": (5246, 29),
    "hz37-independent-commit": (3803, 36),
    "hz37-backup-clear-first": (231, 26),
    "hz36-shutdown": (269, 31),
    "hz40-global-order-parallel": (8715, 32),
}


@pytest.mark.parametrize(("model", "variant"), [
    (entry.name, variant) for entry in (catalog.MIGRATION, catalog.SHUTDOWN, catalog.PARALLEL)
    for variant in entry.zoo])
def test_each_historical_flaw_breaks_its_spec(model: str, variant: str) -> None:
    """The zoo entries of the partition service: the variant's shortest counterexample
    violates the spec the zoo names, and the fixed design is clean at the same scope."""
    entry = catalog.get(model)
    expected, overrides = entry.zoo[variant]
    result = explore(entry.make(variant, overrides))
    assert result.violations and result.violations[0].spec == expected
    fixed = explore(entry.make("fixed", overrides))
    assert not fixed.violations and fixed.incomplete_reason is None
    assert (fixed.distinct_states, fixed.depth) == FIXED_AT_ZOO_SCOPE[variant]


@pytest.mark.parametrize(("overrides", "spec", "fixed_states"), [
    # two members holding each other's backups leave together
    ({"crashes": 0, "shutdowns": 2}, "SHUT-NO-LOSS", (4574, 44)),
    # with 0 backups the only copy leaves with its owner
    ({"crashes": 0, "backups": 0}, "SHUT-NO-LOSS", (99, 21)),
    # with 2 backups the second backups are never checked
    ({"crashes": 0, "backups": 2}, "SHUT-LEAVE-EMPTY", (283, 31)),
])
def test_the_three_hz36_shutdown_flaws(overrides: dict[str, int], spec: str,
                                       fixed_states: tuple[int, int]) -> None:
    """004 Problems: each 3.6 shutdown flaw is found, naming the spec it breaks (all specs
    searched, not only the first violation), and the 3.7 design is clean at the scope."""
    entry = catalog.SHUTDOWN
    # the variant's state space is infinite (its replica syncs retry forever); every
    # counterexample here is at most two steps long
    result = explore(entry.make("hz36-shutdown", overrides), stop_at_first=False,
                     bounds=Bounds(max_depth=10))
    assert spec in {v.spec for v in result.violations}
    fixed = explore(entry.make("fixed", overrides))
    assert not fixed.violations and fixed.incomplete_reason is None
    # (distinct states, depth) of the fixed design at the scope
    assert (fixed.distinct_states, fixed.depth) == fixed_states


def test_max_parallel_is_a_scope_flag_of_the_parallel_model_only() -> None:
    runner = CliRunner()
    out = runner.invoke(main, ["check", "migration", "--max-parallel", "2"])
    assert out.exit_code == 2 and "--max-parallel does not apply to model migration" in out.output
    out = runner.invoke(main, ["check", "parallel", "--max-parallel", "0"])
    assert out.exit_code == 2 and "--max-parallel must be at least 1" in out.output
    out = runner.invoke(main, ["check", "parallel", "--max-parallel", "1", "--crashes", "0",
                               "--joins", "0", "--json"])
    assert out.exit_code == 0, out.output
    assert '"result": "ok"' in out.output


# --- rules found by the full-scope searches -------------------------------------------------------


def test_a_migration_whose_result_came_first_is_rejected() -> None:
    """A destination that already holds the decision of a migration (its source crashed with the
    data in flight, the master failed it) refuses the late data: accepting it would leave an
    active migration nobody decides, and every later migration of the member refused."""
    proto = PartitionService(3, 1, 2, 1, "4.1")
    m = Migration(1, "A", 1, -1, "B", -1, 1, version=2, master="A")
    b = proto.initial("B")
    assert isinstance(b, Node)
    b = b._replace(completed=(Completed(m, False),))
    assert b.table.versions[1] == m.version  # the failure's version raise has not arrived
    data = MigrationData(m, PartitionState(b.table.replicas, b.table.versions, b.table.version,
                                           ((m, False),)))
    step = proto.on_message("B", b, "C", data)
    assert step.sends == (("A", MigrationDone(m, False)),)
    assert step.state.active == ()


def test_a_new_master_tells_an_answering_member_of_members_it_lacks() -> None:
    """002: after the claim the new master's member list reaches every member. A member that
    missed the old master's MemberAdded must learn the joiner before it could take over."""
    proto = PartitionService(3, 1, 2, 1, "4.1")
    b = proto.initial("B")
    assert isinstance(b, Node)
    rec = Recovery(frozenset({"C", "D"}), b.table.replicas, b.table.versions, b.table.version,
                   frozenset(), frozenset())
    b = b._replace(members=("B", "C", "D"), recovery=rec)
    t = b.table
    reply = FetchReply(t.replicas, t.versions, t.version, (), (), members=("B", "C"))
    step = proto.on_message("B", b, "C", reply)
    assert ("C", MemberAdded("D")) in step.sends


def test_a_member_learns_the_joiner_when_the_new_master_hears_of_it_late() -> None:
    proto = PartitionService(3, 1, 2, 1, "4.1")
    b = proto.initial("B")
    assert isinstance(b, Node)
    rec = Recovery(frozenset({"D"}), b.table.replicas, b.table.versions, b.table.version,
                   frozenset(), frozenset())
    b = b._replace(members=("B", "C"), recovery=rec)
    t = b.table
    # D was admitted by the old master; C answered already; D's answer names E too
    reply = FetchReply(t.replicas, t.versions, t.version, (), (), members=("B", "C", "D", "E"))
    step = proto.on_message("B", b, "D", reply)
    assert ("C", MemberAdded("E")) in step.sends and ("E", Fetch()) in step.sends


def test_no_timeout_fires_while_a_shutdown_retry_would_reach_the_master() -> None:
    """A lost shutdown request is resent every second, well inside the migration pause: the
    master's resume waits for it (`is_prompt`), so a member refusing to be a destination
    because it is leaving is not asked again and again for ever."""
    model = catalog.get("shutdown").make("fixed", {"crashes": 0, "shutdowns": 1})
    assert isinstance(model, ActorModel)
    world = next(iter(model.init_states()))
    a, c = model.names.index("A"), model.names.index("C")
    nodes = list(world.nodes)
    nodes[a] = nodes[a]._replace(paused=True)
    nodes[c] = nodes[c]._replace(shutdown="requested")
    actions = [act for act, _ in model.successors(world._replace(nodes=tuple(nodes)))]
    assert ("timer", "C", ("shutdown-retry",)) in actions
    assert ("timer", "A", ("resume",)) not in actions
    nodes[c] = nodes[c]._replace(shutdown="")
    actions = [act for act, _ in model.successors(world._replace(nodes=tuple(nodes)))]
    assert ("timer", "A", ("resume",)) in actions


@pytest.mark.parametrize(("model", "budget", "states", "depth"), [
    ("shutdown", {"crashes": 1, "losses": 1}, 33_023, 44),
    ("migration", {"crashes": 1, "losses": 1, "joins": 0}, 330, 23),
])
def test_lost_operations_with_a_crash_finish_clean(model: str, budget: dict[str, int],
                                                   states: int, depth: int) -> None:
    result = explore(catalog.get(model).make("fixed", budget))
    assert not result.violations and result.incomplete_reason is None
    assert (result.distinct_states, result.depth) == (states, depth)


def test_backup_clear_first_applies_backup_changes_in_plan_order() -> None:
    """With a shutdown the plan moves an owner before its backups; the variant used to apply the
    backup steps first and raise on a table naming a member twice (now a MODEL-ERROR)."""
    result = explore(catalog.get("migration").make(
        "hz37-backup-clear-first", {"crashes": 0, "joins": 0, "shutdowns": 1}))
    assert not result.violations and result.incomplete_reason is None
    assert (result.distinct_states, result.depth) == (271, 31)


# --- PAR-START: a master that starts fewer migrations than it may ---------------------------------

_START = PartitionService._start


def _start_one_per_endpoint(self: PartitionService, out: object) -> None:
    """A mutant pass (the triage's ``load[e] + 2``): a migration it starts counts as the limit
    against its endpoints, so a second one sharing an endpoint waits for the next pass."""
    limit = self.max_parallel
    self.max_parallel = 1
    try:
        _START(self, out)  # type: ignore[arg-type]
    finally:
        self.max_parallel = limit


def test_start_breaks_when_a_pass_leaves_a_migration_it_may_start(
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(PartitionService, "_start", _start_one_per_endpoint)
    model = catalog.get("parallel").make("fixed", {**SMALL, "shutdowns": 1})
    result = explore(model)
    (v,) = [v for v in result.violations if v.spec == "PAR-START"]
    assert [model.describe_action(a)[0] for a, _ in v.trace.steps] == ["shutdown A"]
    assert v.message == ("master A waits with the migration of partition 1 to C queued, which "
                         "it may start: no migration of partition 1 is in flight, destination C "
                         "runs 0, source endpoint B runs 1 (max 2)")


@pytest.mark.slow
def test_start_holds_on_fixed_at_the_default_scope() -> None:
    """The 4.1 master shows the heads it waits with only after a step that changed it or showed
    something: the default scope keeps its states and transitions."""
    result = explore(catalog.get("parallel").make("fixed", {}))
    assert result.violations == [] and result.incomplete_reason is None
    assert (result.distinct_states, result.transitions) == (72_710, 224_329)


# --- DATA-HELD: a replica the table names holds the data ------------------------------------------

_ON_DATA = PartitionService._on_data
_FINALIZE = PartitionService._finalize


def _copy_kept_nowhere(self: PartitionService, out: Any, src: str, msg: MigrationData) -> None:
    """A mutant destination: it answers a COPY (no source) without installing the data."""
    _ON_DATA(self, out, src, msg)
    m = msg.migration
    if m.source is None and m.partition in out.st.data:
        out.st = out.st._replace(data=out.st.data - {m.partition})
        out.events[:] = [e for e in out.events if e.TYPE != "replica_synced"]


def test_held_breaks_when_a_copy_destination_keeps_no_data(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """No clear, so DATA-REPLICAS sees nothing: the copy never arrived."""
    monkeypatch.setitem(PartitionService._handlers, "MigrationData", _copy_kept_nowhere)
    model = catalog.get("migration").make("fixed", {**SMALL, "crashes": 1})
    result = explore(model)
    (v,) = result.violations
    assert v.spec == "DATA-HELD"
    assert v.message == ("the table names B at replica index 1 of partition 0 [A, B], but B "
                         "does not hold its data")


def _finalize_dropping_kept_replicas(self: PartitionService, out: Any, m: Migration,
                                     success: bool) -> None:
    """The mutant of the triage (``0 <= m.destination_current_index > self.backups``): a
    rolled back destination that was a replica already drops the copy it keeps."""
    active = m in out.st.active
    _FINALIZE(self, out, m, success)
    if not success and active and out.node == m.destination \
            and 0 <= m.destination_current_index <= self.backups:
        self._drop(out, m.partition, m.destination_new_index)


def test_a_rolled_back_replica_that_drops_its_copy_breaks_where_a_rollback_reaches_it(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """A shift up is rolled back only after a lost operation: the clear lowers the available
    copies at once (DATA-REPLICAS), before DATA-HELD's quiescence."""
    monkeypatch.setattr(PartitionService, "_finalize", _finalize_dropping_kept_replicas)
    result = explore(catalog.get("shutdown").make("fixed", {"losses": 1}))
    (v,) = result.violations
    assert v.spec == "DATA-REPLICAS"
    assert v.message == ("C clears partition 0 (replica index 0), leaving 1 available copies "
                         "(A) where 2 are required")


def test_no_data_spec_blames_a_partition_lost_to_more_crashes_than_backups() -> None:
    """Two crashes with one backup lose every copy of a partition; the owner the master assigns
    it starts empty. DATA-NO-LOSS does not judge beyond the backups, and DATA-HELD does not judge
    a partition that lost every copy (DATA-REPLICAS' quiescence half used to)."""
    result = explore(catalog.get("shutdown").make("fixed", {"crashes": 2, "shutdowns": 0}),
                     stop_at_first=False)
    assert result.violations == [] and result.incomplete_reason is None
    assert result.distinct_states == 256

"""The release rules of the partition service (refimpl/partition_service.py `RULE_TABLE`) and
the partition blocks of the release profiles (refimpl/profiles.py).

Each rule gets one concrete state from which the code's rule and `fixed` reach different next
states; each profile's search at the model's default scope breaks exactly the specs its
`PARTITION_FINDINGS` name; the shortest counterexamples saved under tests/data replay under their
profile and not under `fixed`."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from partsafe.checker.actor.model import ActorModel
from partsafe.checker.actor.network import dead_claim_errors
from partsafe.checker.artifact import ReplayError, replay
from partsafe.checker.engine.bfs import explore
from partsafe.checker.protocols import catalog
from partsafe.refimpl import partition_table as pt
from partsafe.refimpl import profiles
from partsafe.refimpl.partition_service import (
    LEFT,
    REQUESTED,
    RULE_TABLE,
    VARIANT_TABLE,
    CommitAck,
    Completed,
    FetchReply,
    Flight,
    Migration,
    MigrationData,
    MigrationDone,
    Node,
    PartitionService,
    PartitionState,
    PublishAck,
    Recovery,
    ShutdownResponse,
    StateCheck,
    StateStale,
)
from partsafe.traces import events as ev

DATA = Path(__file__).resolve().parents[1] / "data"

#: p1's owner B moves to C (a MOVE: increment 1), planned at version 2 by master A
MOVE_P1 = Migration(1, "B", 0, -1, "C", -1, 0, version=2, master="A")
#: p0's owner A moves to B
MOVE_P0 = Migration(0, "A", 0, -1, "B", -1, 0, version=2, master="A")


def service(protocol: str, *rules: str, **kw: int) -> PartitionService:
    return PartitionService(3, 1, 2, 1, protocol, rules=rules, **kw)


def node(proto: PartitionService, name: str) -> Node:
    st = proto.initial(name)
    assert isinstance(st, Node)
    return st


def state_of(table: pt.PartitionTable, completed: tuple[tuple[Migration, bool], ...] = (),
             partitions: tuple[int, ...] | None = None) -> PartitionState:
    return PartitionState(table.replicas, table.versions, table.version, completed, partitions)


# --- new-master-fails-active ------------------------------------------------------------------


def test_a_new_master_fails_a_migration_the_latest_table_shows_committed() -> None:
    """4.1: C committed p1 (its table names it owner at version 3) but a publish mid-commit took
    the migration out of its completed list; B, the source and new master, still holds it active.
    `fixed` completes it from the table (the source commits and clears its copy); the code marks
    it FAILED (``processMigrations``) and gives p1 the latest replicas at 2 + 1 + 1
    (``processNewState``): the source rolls back, the destination keeps its commit."""
    results = {}
    for rules in ((), ("new-master-fails-active",)):
        proto = service("4.1", *rules)
        b = node(proto, "B")
        t = b.table
        b = b._replace(members=("B", "C"), active=(MOVE_P1,),
                       recovery=Recovery(frozenset({"C"}), t.replicas, t.versions, t.version,
                                         frozenset(), frozenset({MOVE_P1})))
        committed = pt.apply_migration(t, 1, MOVE_P1.decision)
        reply = FetchReply(committed.replicas, committed.versions, committed.version, (), (),
                           members=("B", "C"))
        step = proto.on_message("B", b, "C", reply)
        results[rules] = step
    fixed, code = results.values()
    assert fixed.state != code.state
    assert [(c.migration, c.success) for c in fixed.state.completed] == [(MOVE_P1, True)]
    assert [(c.migration, c.success) for c in code.state.completed] == [(MOVE_P1, False)]
    first = {k: next(e for e in s.events if isinstance(e, ev.PartitionTablePublished))
             for k, s in results.items()}
    assert first[()].partition_versions == (2, 3)
    assert first[("new-master-fails-active",)].partition_versions == (2, 4)
    # both publish the replicas C's commit made: the code's table names C whose commit stands
    assert first[()].replicas[1] == first[("new-master-fails-active",)].replicas[1] == ("C", "A")
    assert any(isinstance(e, ev.MigrationCommitted) and e.role == "source" for e in fixed.events)
    assert any(isinstance(e, ev.MigrationRolledBack) and e.role == "source" for e in code.events)
    assert 1 not in fixed.state.data and 1 in code.state.data


# --- new-master-plus-one ----------------------------------------------------------------------


def test_a_3x_new_master_raises_the_version_by_one_whatever_it_fails() -> None:
    """3.x ``processNewState``: the greatest version collected + 1, with nothing to fail; `fixed`
    raises the version only for a migration it fails."""
    versions = {}
    for rules in ((), ("new-master-plus-one",)):
        proto = service("3.7", *rules)
        b = node(proto, "B")
        t = b.table
        b = b._replace(members=("B", "C"),
                       recovery=Recovery(frozenset({"C"}), t.replicas, t.versions, t.version,
                                         frozenset(), frozenset()))
        step = proto.on_message("B", b, "C", FetchReply(t.replicas, t.versions, t.version, (),
                                                        (), members=("B", "C")))
        versions[rules] = next(e.version for e in step.events
                               if isinstance(e, ev.PartitionTablePublished))
        start = t.version
    assert versions == {(): start, ("new-master-plus-one",): start + 1}


# --- publish-when-idle ------------------------------------------------------------------------


def test_the_periodic_publication_waits_for_the_migrations_and_checks_stamps() -> None:
    """4.1 ``PublishPartitionRuntimeStateTask``: nothing while a migration task runs; when idle,
    the stamp goes out (``PartitionStateCheckOperation``) and the state only to a member whose
    stamp differs. `fixed` publishes the table at any time."""
    fixed, code = service("4.1"), service("4.1", "publish-when-idle")
    busy = node(fixed, "A")._replace(flights=(Flight(MOVE_P1._replace(version=2), "request"),))
    assert ("publish",) in fixed.timers("A", busy)
    assert ("publish",) not in code.timers("A", busy)
    idle = node(code, "A")
    assert ("publish",) in code.timers("A", idle)
    sent = {type(m) for _, m in fixed.on_timer("A", idle, ("publish",)).sends}
    assert sent == {PartitionState}
    step = code.on_timer("A", idle, ("publish",))
    assert {type(m) for _, m in step.sends} == {StateCheck}
    check = step.sends[0][1]
    c = node(code, "C")
    assert code.on_message("C", c, "A", check).sends == ()
    newer = pt.apply_migration(c.table, 1, MOVE_P1.decision)
    assert code.on_message("C", c._replace(table=newer), "A", check).sends == (
        ("A", StateStale()),)
    answer = code.on_message("A", idle, "C", StateStale()).sends
    assert [(d, type(m)) for d, m in answer] == [("C", PartitionState)]


# --- completed-batch-publish ------------------------------------------------------------------


def _commit_phase(proto: PartitionService) -> Node:
    """Master A: MOVE_P1 in its commit phase, MOVE_P0 still waiting for its data."""
    a = node(proto, "A")
    return a._replace(active=(MOVE_P0,), flights=(Flight(MOVE_P0, "request"),
                                                  Flight(MOVE_P1, "commit")))


def test_a_commit_waits_for_the_batch_and_the_plan_end_publishes() -> None:
    """4.1 ``migrationOperationSucceeded`` publishes nothing before ten completed migrations wait
    (``PUBLISH_COMPLETED_MIGRATIONS_BATCH_SIZE``); the ``PublishCompletedMigrationsTask`` queued
    behind the plan publishes them. `fixed` publishes each decided migration's partition."""
    fixed, code = service("4.1"), service("4.1", "completed-batch-publish")
    after_fixed = fixed.on_message("A", _commit_phase(fixed), "C", CommitAck(MOVE_P1))
    after_code = code.on_message("A", _commit_phase(code), "C", CommitAck(MOVE_P1))
    assert {d for d, m in after_fixed.sends if isinstance(m, PartitionState)} == {"B", "C"}
    assert not any(isinstance(m, PartitionState) for _, m in after_code.sends)
    assert after_code.state.unpublished and not after_fixed.state.unpublished
    # the master's table changed: the event marks it for the specs, as fixed's publication does
    assert any(isinstance(e, ev.PartitionTablePublished) for e in after_code.events)
    # a batch of one is fixed's publication
    one = service("4.1", "completed-batch-publish", publish_batch=1)
    after_one = one.on_message("A", _commit_phase(one), "C", CommitAck(MOVE_P1))
    assert after_one.sends == after_fixed.sends
    # once nothing is in flight, the next input publishes
    done = after_code.state._replace(flights=(), active=())  # MOVE_P0 decided meanwhile
    step = code.on_message("A", done, "B", PublishAck(frozenset()))
    assert {d for d, m in step.sends if isinstance(m, PartitionState)} == {"B", "C"}
    assert not step.state.unpublished


def test_a_failed_migration_goes_to_its_owner_and_destination_only() -> None:
    """``migrationOperationFailed`` sends the partition state to the partition owner and the
    destination; `fixed` publishes the failure to every member."""
    for rules, expected in (((), {"B", "C"}), (("completed-batch-publish",), {"B"})):
        proto = service("4.1", *rules)
        a = node(proto, "A")._replace(active=(MOVE_P0,), flights=(Flight(MOVE_P0, "request"),))
        step = proto.on_message("A", a, "B", MigrationDone(MOVE_P0, False))
        assert {d for d, m in step.sends if isinstance(m, PartitionState)} == expected


# --- completed-by-partition -------------------------------------------------------------------


def test_a_migration_operation_carries_its_partitions_completed_migrations_only() -> None:
    """C committed MOVE_P1 as destination; a request for p0 reaches it. `fixed` takes the
    master's whole list with the request, which does not name MOVE_P1 yet; the code applies
    p0's completed migrations only, and with none keeps its list as it is
    (``BaseMigrationOperation.applyCompletedMigrations``); with one it keeps only that one
    (``retainCompletedMigrations``)."""
    p0_to_c = Migration(0, "A", 0, -1, "C", -1, 0, master="A")
    for rules in ((), ("completed-by-partition",)):
        proto = service("4.1", *rules)
        # the master: MOVE_P1 in its commit phase (fixed leaves p1 out of what it sends)
        a = node(proto, "A")._replace(flights=(Flight(MOVE_P1, "commit"),))
        c = node(proto, "C")
        c = c._replace(table=pt.apply_migration(c.table, 1, MOVE_P1.decision),
                       completed=(Completed(MOVE_P1, True),))
        m = p0_to_c._replace(version=a.table.versions[0])
        step = proto.on_message("C", c, "A", MigrationData(m, proto._request_state(a, m)))
        assert [x.migration for x in step.state.completed] == ([MOVE_P1] if rules else [])
    # a failed migration of p0 in the master's list: the code keeps only it
    proto = service("4.1", "completed-by-partition")
    failed = Migration(0, "A", 0, -1, "B", -1, 0, version=2, master="A")
    a = node(proto, "A")._replace(completed=(Completed(failed, False),))
    m = p0_to_c._replace(version=2)
    step = proto.on_message("C", c, "A", MigrationData(m, proto._request_state(a, m)))
    assert [(x.migration, x.success) for x in step.state.completed] == [(failed, False)]
    assert step.state.table.versions[0] == 2 + 1 + 1
    assert [msg.ok for _, msg in step.sends if isinstance(msg, MigrationDone)] == [False]


def test_a_commit_adds_the_migration_without_dropping_others() -> None:
    """``commitMigrationOnDestination`` adds the migration; `fixed` takes the master's list with
    the prepared table, which drops a commit of another partition the master has not applied."""
    for rules in ((), ("completed-by-partition",)):
        proto = service("4.1", *rules)
        a = node(proto, "A")._replace(active=(MOVE_P0,), flights=(Flight(MOVE_P0, "commit"),))
        b = node(proto, "B")
        # B committed another migration as destination which the master has not applied yet
        other = Migration(1, "C", 1, -1, "B", -1, 1, version=2, master="A")
        b = b._replace(active=(MOVE_P0,), completed=(Completed(other, True),))
        step = proto.on_message("B", b, "A", proto._commit_message(a, MOVE_P0))
        kept = {x.migration for x in step.state.completed}
        assert kept == ({other, MOVE_P0} if rules else {MOVE_P0})


# --- shutdown-destination-accepts, shutdown-all-leave -----------------------------------------


@pytest.mark.parametrize("protocol", ["3.7", "4.1"])
def test_a_member_that_requested_shutdown_accepts_a_migration(protocol: str) -> None:
    """004: `fixed`'s destination refuses once it asked to leave; the code's migration
    operations run during the PASSIVE state (``AllowedDuringPassiveState``)."""
    answers = {}
    for rules in ((), ("shutdown-destination-accepts",)):
        proto = service(protocol, *rules)
        a = node(proto, "A")
        c = node(proto, "C")._replace(shutdown=REQUESTED)
        m = MOVE_P1._replace(version=proto._version_of(a.table, 1))
        step = proto.on_message("C", c, "B", MigrationData(m, state_of(a.table)))
        answers[rules] = step.sends
    assert [(d, type(msg), msg.ok) for d, msg in answers[()]] == [("A", MigrationDone, False)]
    assert [(d, type(msg), msg.ok) for d, msg in answers[("shutdown-destination-accepts",)]] == [
        ("A", MigrationDone, True)]


def test_every_member_asking_to_leave_is_let_go() -> None:
    """``ProcessShutdownRequestsTask``: when the requests number the data members, all are
    answered whatever the table names; `fixed` waits for the table to name them nowhere, which
    it never will."""
    for rules in ((), ("shutdown-all-leave",)):
        proto = service("3.7", *rules)
        a = node(proto, "A")._replace(shutdown=REQUESTED,
                                      shutdown_requests=frozenset({"A", "B", "C"}))
        step = proto.on_message("A", a, "B", PublishAck(frozenset()))
        if rules:
            assert sorted(d for d, m in step.sends if isinstance(m, ShutdownResponse)) == [
                "B", "C"]
            assert step.state.shutdown == LEFT
        else:
            assert not any(isinstance(m, ShutdownResponse) for _, m in step.sends)
            assert step.state.shutdown == REQUESTED and not step.state.allowed


# --- promotions: a one-step abstraction no verdict depends on ----------------------------------


def test_a_promotion_moves_no_data_and_a_new_master_repeats_it() -> None:
    """Hazelcast commits a promotion to the promoted backup first (``PromotionCommitOperation``)
    and the master applies it after, +3 on the partition's version if that fails; partsafe's
    master promotes in its own table in one step. A promotion moves no data: the promoted member
    holds the partition already, and nobody clears or receives anything. If the master crashes
    before anyone else has the promotion, the next master removes the same member from the
    tables it collects and promotes the same backup (`promote` is a function of the table), so
    a window in which only the promoted member holds the promotion (the code's) ends where
    partsafe's window ends; the two differ only in version numbers."""
    for protocol in ("3.7", "4.1"):
        proto = service(protocol)
        a = node(proto, "A")._replace(members=("A", "C"), replan=True)  # B has left
        step = proto.on_message("A", a, "C", PublishAck(frozenset()))
        assert step.state.data == a.data
        assert not any(isinstance(e, ev.ReplicaCleared | ev.ReplicaSynced)
                       for e in step.events)
        promoted = pt.promote(pt.remove_member(a.table, "B"), 1)
        assert promoted.replicas[1] == ("A", None)
        # another master that never saw A's promotion makes the same one
        c = node(proto, "C")
        again = pt.promote(pt.remove_member(c.table, "B"), 1)
        assert again.replicas == promoted.replicas


# --- the profiles' partition blocks -------------------------------------------------------------


def test_every_partition_rule_of_a_profile_is_declared_and_cited() -> None:
    for name, rules in profiles.PARTITION_RULES.items():
        for rule in rules:
            assert rule in RULE_TABLE or rule in VARIANT_TABLE, (name, rule)
    for rule in RULE_TABLE.values():
        assert all(s.repo == "hazelcast/hazelcast" and s.ref and s.path.endswith(".java")
                   for s in rule.sources)
    # each release line's failure rule: 3.7 to 3.11 add 2, 4.1 and later the increment + 1
    assert service("3.7", *profiles.PARTITION_RULES["hz-3.7"]).failure_rule == "design"
    assert service("3.7", *profiles.PARTITION_RULES["hz-3.9"]).failure_rule == "design"
    assert service("4.1", *profiles.PARTITION_RULES["hz-4.1"]).failure_rule == "source"


def test_the_default_cap_of_ten_never_binds_at_two_partitions() -> None:
    """Hazelcast's default ``hazelcast.partition.max.parallel.migrations`` is 10 (the hz-4.1 and
    hz-5 scope); with 2 partitions at most 2 migrations run at once, so a cap of 2 explores the
    same states, and a cap of 1 fewer."""
    entry = catalog.PARALLEL
    assert entry.scope({}, "hz-4.1")["max-parallel"] == 10
    counts = {cap: explore(entry.make("fixed", {"max-parallel": cap}, "hz-4.1"),
                           stop_at_first=False).distinct_states for cap in (1, 2, 10)}
    assert counts[2] == counts[10] != counts[1]


FINDINGS_RUNS = [(name, model) for name in profiles.PARTITION_RULES
                 for model in profiles.get(name).models
                 if model in ("migration", "shutdown", "parallel")]


@pytest.mark.parametrize(("profile", "model"), FINDINGS_RUNS)
def test_each_profile_breaks_exactly_its_findings(profile: str, model: str) -> None:
    """`PARTITION_FINDINGS`: what each profile's search breaks at the model's default scope."""
    result = explore(catalog.get(model).make("fixed", {}, profile), stop_at_first=False)
    assert result.incomplete_reason is None
    expected = profiles.PARTITION_FINDINGS.get(profile, {}).get(model, {})
    assert {v.spec for v in result.violations} == set(expected)


@pytest.mark.parametrize(("model", "profile"), [("parallel", "hz-4.1"), ("shutdown", "hz-3.7")])
def test_operations_claimed_dead_stay_dead_under_the_release_rules(model: str,
                                                                    profile: str) -> None:
    model_ = catalog.get(model).make("fixed", {"crashes": 0, "partitions": 1}, profile)
    assert isinstance(model_, ActorModel)
    assert dead_claim_errors(model_) == []


# --- the counterexamples --------------------------------------------------------------------------

#: artifact -> the profiles it replays under (the spec broken again), the first its own
ARTIFACTS = {
    "hz37_shutdown_destination_accepts.json": ("hz-3.7", "hz-3.9", "design"),
    "hz41_shutdown_destination_accepts.json": ("hz-4.1", "hz-5"),
    "hz41_finalize_failed_mig_atomic.json": ("hz-4.1", "hz-5"),
    "design_parallel_mig_atomic.json": ("design",),
    "hz37_shutdown_all_leave.json": ("hz-3.7", "hz-3.9"),
}


@pytest.mark.parametrize(("name", "profiles_"), list(ARTIFACTS.items()))
def test_a_saved_counterexample_breaks_its_spec_under_its_profile_only(
        name: str, profiles_: tuple[str, ...]) -> None:
    doc = json.loads((DATA / name).read_text())
    assert doc["profile"] == profiles_[0]
    for profile in profiles_:
        _, trace, message = replay(doc, name, profile)
        assert message is not None, (name, profile)
        assert trace.depth == len(doc["steps"])
    try:
        _, _, message = replay(doc, name, "fixed")
    except ReplayError:
        return  # a step fixed does not take, or takes with other events
    assert message is None


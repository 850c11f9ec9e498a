"""The specs judge the reference implementation, not with it (docs/specs.md, "What each spec
compares against").

A spec that computes what it expects with the implementation's own functions agrees with every
bug in them. So each wrong implementation here is put into the reference implementation the way
a bug would be, inside the function the protocol calls, where a spec that shared the function
would share the bug too: PT-TARGET must break on an explored model all the same. The design's
shared rules (the stamp, the calculated assignments) are the other kind: the implementation and
the spec apply the same pure function of specs/rules.py, pinned by tests/specs/test_rules.py, and
the
spec breaks when the implementation applies anything else. Next to each wrong implementation, the
right one holds.
"""

from __future__ import annotations

import subprocess
import sys
import textwrap
from collections.abc import Sequence
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from partsafe.checker.engine.bfs import Result, explore
from partsafe.checker.protocols import catalog
from partsafe.refimpl import ignite, partition_table, planner, repartition
from partsafe.specs import rules
from partsafe.specs.data import Replicas, target_breach

#: the migration model (Hazelcast 3.7: members A, B, C, the joiner D, 2 partitions, 1 backup)
#: with one crash, and with one join instead
CRASH = {"crashes": 1, "joins": 0, "shutdowns": 0}
JOIN = {"crashes": 0, "joins": 1, "shutdowns": 0}


def check(model: str, scope: dict[str, int]) -> Result:
    return explore(catalog.get(model).make("fixed", scope))


def first(result: Result) -> tuple[str, str]:
    assert result.violations, f"no violation: {result.result}, {result.distinct_states} states"
    return result.violations[0].spec, result.violations[0].message


# --- PT-TARGET: an oracle of its own -------------------------------------------------------------


def test_pt_target_reports_a_planner_that_never_fills_a_backup(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """The planner's decisions lose every migration into a backup index: after the crash the
    master plans the new backup, the decision is dropped, and the cluster settles one replica
    short. Planning toward the target with that same planner finds nothing left to do."""
    decide = planner.plan_decisions

    def skip_backups(current: Sequence[str | None], target: Sequence[str | None],
                     **kw: Any) -> tuple[Replicas, tuple[planner.Decision, ...]]:
        fixed, decisions = decide(current, target, **kw)
        return fixed, tuple(d for d in decisions if d.is_clear or d.destination_new_index == 0)

    monkeypatch.setattr(planner, "plan_decisions", skip_backups)
    assert first(check("migration", CRASH)) == (
        "PT-TARGET", "partition 0 [A, -] has 1 replica(s), where 2 are required (1 backup(s), "
                     "2 member(s) not leaving)")


def test_pt_target_reports_a_repartitioning_that_leaves_a_member_out(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """The repartitioning spreads the partitions over every eligible member but the youngest:
    C never gets a replica, and the joiner D none either. The repartitioning of that table
    returns it as it is, so planning toward it would find nothing to do."""
    validate = repartition._validate

    def without_youngest(*args: Any) -> tuple[list[Replicas], list[str], int]:
        arrays, eligible, length = validate(*args)
        return arrays, eligible[:-1] if len(eligible) > 1 else eligible, length

    monkeypatch.setattr(repartition, "_validate", without_youngest)
    assert first(check("migration", JOIN)) == (
        "PT-TARGET", "C holds 0 replica(s) of the 2 partition(s), where each of the 3 member(s) "
                     "not leaving holds 1 or 2 (2 replica(s) per partition)")


@pytest.mark.parametrize("scope", [CRASH, JOIN], ids=["crash", "join"])
def test_pt_target_holds_on_the_reference_planner_and_repartitioning(
        scope: dict[str, int]) -> None:
    result = check("migration", scope)
    assert result.violations == []
    assert result.incomplete_reason is None


@st.composite
def tables(draw: st.DrawFn) -> tuple[list[Replicas], list[str], int]:
    """A table of 1 to 6 partitions over some of the members A to E (arrays of one length, no
    member twice in one), the eligible members in age order, and a backup count."""
    names = "ABCDE"
    backups = draw(st.integers(0, 2))
    width = draw(st.integers(backups + 1, backups + 2))
    arrays = [tuple(draw(st.permutations([*names, *[None] * width]))[:width])
              for _ in range(draw(st.integers(1, 6)))]
    eligible = draw(st.lists(st.sampled_from(names), min_size=1, max_size=5, unique=True))
    return arrays, sorted(eligible), backups


@settings(max_examples=300, deadline=None)
@given(tables())
def test_every_table_the_reference_settles_on_passes_the_oracle(
        case: tuple[list[Replicas], list[str], int]) -> None:
    """No false alarm: the table the master's repartitioning and planner reach from any table
    (the repartitioning's target with the cycles cancelled, 000 §3.2.1, where the planner stops)
    has the shape and balance the oracle asks for. So the oracle accepts every quiescent table
    the reference implementation leaves, as the planner-based check did."""
    current, eligible, backups = case
    target = repartition.repartition(current, eligible, backups)
    settled = [planner.fix_cycle(c, t) for c, t in zip(current, target, strict=True)]
    assert target_breach(settled, eligible, backups) is None


@pytest.mark.parametrize(("table", "message"), [
    ((("A", "B"), ("A", "B"), ("A", "B")),
     "A holds 3 replica(s) of the 3 partition(s), where each of the 3 member(s) not leaving "
     "holds 2 (2 replica(s) per partition)"),
    ((("A", "B"), ("B", "C"), ("A", "A")),
     "partition 2 [A, A] names A at two replica indices"),
    ((("A", None, "B"), ("B", "C", None), ("C", "A", None)),
     "partition 0 [A, -, B] leaves replica index 1 empty while a colder index holds a replica"),
    ((("A", "B"), ("B", "C"), ("C", "A")), None),
    ((("B", "A"), ("B", "C"), ("C", "A")), None),  # a swap the planner cancels as a cycle
], ids=["uneven", "twice", "gap", "even", "cycle-kept"])
def test_the_oracle_on_hand_built_tables(table: tuple[Replicas, ...],
                                         message: str | None) -> None:
    assert target_breach(list(table), ["A", "B", "C"], 1) == message


# --- PAR-STAMP and IGN-CONVERGE: the design's shared rules ---------------------------------------


def test_par_stamp_reports_a_partition_table_that_hashes_anything_else(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """The 4.1 partition table hashes its versions in the wrong order: the first table a member
    applies after the crash carries a stamp that is not the rule's."""
    monkeypatch.setattr(partition_table, "stamp", lambda versions: rules.stamp(versions[::-1]))
    spec, message = first(check("parallel", CRASH))
    assert spec == "PAR-STAMP"
    assert message.startswith("A applies a partition table with stamp ")


def test_par_stamp_holds_on_the_reference_partition_table() -> None:
    assert check("parallel", CRASH).violations == []


IGNITE_SCOPE = {"spares": 1, "replicas": 2, "restarts": 0, "baseline-changes": 1}


def test_ign_converge_reports_a_rebalance_that_calculates_other_assignments(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """The rebalance assigns the replicas to the nodes the rendezvous rule ranks last."""

    def lowest_ranked(nodes: Any, partition: int, replicas: int) -> frozenset[str]:
        chosen = rules.calculate_assignments(nodes, partition, replicas)
        return frozenset(sorted(nodes, key=lambda n: (n in chosen, n))[:replicas])

    monkeypatch.setattr(ignite, "calculate_assignments", lowest_ranked)
    assert first(check("ignite-rebalance", IGNITE_SCOPE)) == (
        "IGN-CONVERGE", "the rebalance stopped short: stable is [A,C], the calculated "
                        "assignments [A,B]")


def test_ign_converge_holds_on_the_reference_rebalance() -> None:
    result = check("ignite-rebalance", IGNITE_SCOPE)
    assert (result.result, result.violations) == ("ok", [])


# --- what the specs import -----------------------------------------------------------------------


def test_the_specs_judge_with_the_implementation_out_of_reach() -> None:
    """With the reference implementation's planner, repartitioning, partition table and Ignite
    rebalance impossible to import, every spec module still imports, and PT-TARGET, PAR-STAMP
    and IGN-CONVERGE still judge: what they expect comes from the design, or from the rules of
    specs/rules.py, never from the code they judge."""
    code = textwrap.dedent("""
        import dataclasses
        import sys
        from importlib.abc import MetaPathFinder

        BLOCKED = {"partsafe.refimpl.planner", "partsafe.refimpl.repartition",
                   "partsafe.refimpl.partition_table", "partsafe.refimpl.ignite"}

        class Block(MetaPathFinder):
            def find_spec(self, name, path, target=None):
                if name in BLOCKED:
                    raise ImportError(f"{name} is out of reach")
                return None

        sys.meta_path.insert(0, Block())
        import importlib, pkgutil
        import partsafe.specs
        for m in pkgutil.iter_modules(partsafe.specs.__path__):
            importlib.import_module(f"partsafe.specs.{m.name}")
        from partsafe.specs.data import Target
        from partsafe.specs.ignite import Converge
        from partsafe.specs.monitor import run
        from partsafe.specs.partition import Stamp
        from partsafe.specs.rules import stamp
        from partsafe.traces.events import (AssignmentsChanged, MemberListInstalled,
                                            PartitionTableApplied, PartitionTablePublished,
                                            RaftLeader)

        def judge(monitor, events):
            return [m for _, m in run(monitor, events, quiescent_at_end=True)]

        view = MemberListInstalled(member="A", version=1, master="A", members=("A", "B", "C"))
        short = PartitionTablePublished(member="A", version=1,
                                        replicas=(("A", None), ("B", "C"), ("C", "A")))
        even = PartitionTablePublished(member="A", version=2,
                                       replicas=(("A", "B"), ("B", "C"), ("C", "A")))
        print(judge(Target(backups=1), [view, short]))
        print(judge(Target(backups=1), [view, even]))
        good = PartitionTableApplied(member="B", version=1, replicas=(("A",), ("B",)),
                                     sender="A", partition_versions=(1, 2),
                                     stamp=stamp([1, 2]))
        print(judge(Stamp(), [good, dataclasses.replace(good, stamp=stamp([2, 1]))]))
        keys = [AssignmentsChanged(member="A", partition=0, key=k, nodes=n, revision=1)
                for k, n in (("dataNodes", ("A", "B", "C", "D")),
                             ("assignments.stable", ("A", "B", "C")))]
        print(judge(Converge(replicas=2), [*keys, RaftLeader(member="A", term=1, votes=("A",))]))
        print(judge(Converge(replicas=3), [*keys, RaftLeader(member="A", term=1, votes=("A",))]))
    """)
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         timeout=120)
    assert out.returncode == 0, out.stderr
    short, even, stamps, wrong, right = out.stdout.splitlines()
    assert short == ("['partition 0 [A, -] has 1 replica(s), where 2 are required (1 backup(s), "
                     "3 member(s) not leaving)']")
    assert even == "[]"
    assert stamps.startswith("['B applies a partition table with stamp ")
    assert wrong == ("['the rebalance stopped short: stable is [A,B,C], the calculated "
                     "assignments [A,B]']")
    assert right == "[]"


# --- PLAN-REACHES-TARGET and the array specs: the spec's own cycle fix (000 §3.2.1) -------------


def test_the_specs_cycle_fix_agrees_with_the_planners_on_every_pair_up_to_four_indices() -> None:
    """No false alarm: the spec's cycle fix is the planner's wherever the planner is right."""
    from partsafe.checker.planner.space import canonical_pairs
    from partsafe.specs.planner import cycle_fixed

    pairs = [(c, t) for n in range(1, 5) for c, t in canonical_pairs(n)]
    assert len(pairs) > 2000
    assert all(cycle_fixed(c, t) == planner.fix_cycle(c, t) for c, t in pairs)


def _cancel_everything(current: Replicas, target: list[str | None]) -> bool:
    """A cycle fix that cancels too much: every migration, cyclic or not."""
    target[:] = current
    return True


def test_plan_reaches_target_reports_a_planner_that_cancels_more_than_its_cycles(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """[A,B,-] -> [B,A,C]: the cycle A<->B is cancelled, the COPY of C is not. A planner whose
    cycle fix also drops the COPY plans nothing, ends where it began, and reaches its own target;
    the spec's target still has C at index 2."""
    from partsafe.checker.planner.check import judge

    current, target = ("A", "B", None), ("B", "A", "C")
    _, found = judge(current, target)
    assert found == []
    monkeypatch.setattr(planner, "_fix_cycle", _cancel_everything)
    p, found = judge(current, target)
    assert p is not None and p.target_after_cycle_fix == current and not p.migrations
    assert [v.spec for v in found] == ["PLAN-REACHES-TARGET"]
    assert "not [A,B,C]" in found[0].message

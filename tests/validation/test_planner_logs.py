"""The PLAN-* specs on Hazelcast logs: a master's FINEST lines of its migration planner
(``MigrationManager``'s ``Planning migrations for partitionId=...``, ``MigrationPlanner``'s states,
passes, decisions and ``Migration order after prioritization``) read back and judged per master
and partition.

The lines are the reference planner's (`partsafe.refimpl.planner.plan_events`, written by
`partsafe.traces.writer` in Hazelcast's wording, tests/traces/test_payload.py pins each template):
the faithful planner's plans validate as the planner's check judges them, the index-order
variant's flaw and Hazelcast's own known findings (docs/findings.md, HZ-PLAN-1 and HZ-PLAN-2) are
violations on their written logs, and a log at INFO judges nothing of them.
"""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from partsafe.checker.cli.main import main
from partsafe.checker.planner.check import judge, witness
from partsafe.checker.planner.space import canonical_pairs
from partsafe.checker.validation.local import validate
from partsafe.refimpl.planner import MAX_REPLICA_COUNT, Replicas, plan_events
from partsafe.specs import registry
from partsafe.specs.monitor import run
from partsafe.specs.planner import Call, PlanMonitor, applied
from partsafe.traces import events as ev
from partsafe.traces.scanner import Scanner
from partsafe.traces.writer import LogWriter

PLAN_SPECS = tuple(s.id for s in registry.all_specs() if s.id.startswith("PLAN-"))
N = None


def monitors() -> list[PlanMonitor]:
    found = [registry.get(spec).monitor() for spec in PLAN_SPECS]  # type: ignore[misc]
    assert all(isinstance(m, PlanMonitor) for m in found)
    return found  # type: ignore[return-value]


def broken(events: list[ev.Event]) -> set[str]:
    """The PLAN-* specs a run of each monitor over `events` finds broken."""
    return {m.spec for m in monitors() if run(m, events)}


def log_text(events: list[ev.Event]) -> str:
    """The master's log of `events`, in the distribution's log4j2 layout."""
    writer = LogWriter()
    return "".join(writer.line(e, e.order or 0) or "" for e in events)


def write(tmp_path: Path, name: str, events: list[ev.Event]) -> Path:
    path = tmp_path / name
    path.write_text(log_text(events))
    return path


def cli(*paths: Path) -> tuple[int, dict]:
    result = CliRunner().invoke(main, ["validate", *map(str, paths), "--json"])
    assert "Traceback" not in result.output, result.output
    return result.exit_code, json.loads(result.stdout)


def order_line(path: Path, partition: int = 0) -> int:
    """The line where `partition`'s ``Migration order after prioritization`` record starts."""
    lines = path.read_text().splitlines()
    starts = [i for i, line in enumerate(lines, 1) if "after prioritization: [" in line]
    return next(i for i in starts if f"partitionId={partition}," in lines[i])


# --- the monitors against the planner's own check -------------------------------------------------


def _lost_owner(current: Replicas, target: Replicas, variant: str) -> bool:
    """Whether the plan copies a member to index 0 with no source: ``MigrationCollector``
    assigns such a lost owner at once, with the clears, where the reference `Plan` queues it
    as its first migration (the check then sees the array between, the log does not)."""
    return current[0] is None and any(
        d.source is None and d.destination_current_index == -1 and d.destination_new_index == 0
        for d in _decisions(current, target, variant))


def _decisions(current: Replicas, target: Replicas, variant: str) -> tuple:
    p, _ = judge(current, target, variant)
    return p.decisions if p is not None else ()


@pytest.mark.parametrize("variant", ["fixed", "hz37-naive-order", "no-prioritize"])
def test_the_monitors_find_on_the_planners_lines_what_its_check_finds(variant: str) -> None:
    """Every pair of arrays with 1 to 3 indices: the specs the monitors find broken on the plan's
    events are those the planner's check finds (`checker/planner/check.py`), but where the
    master assigns a lost owner at once (the check's array before it is then not one the
    partition goes through)."""
    differ = []
    pairs = 0
    for n in range(1, 4):
        for current, target in canonical_pairs(n):
            pairs += 1
            _, found = judge(current, target, variant)
            want = {v.spec for v in found}
            got = broken(plan_events(current, target, variant=variant))
            if want != got:
                assert got < want and _lost_owner(current, target, variant), (current, target)
                differ.append((current, target))
    assert pairs == 325
    assert len(differ) == 12


def test_the_monitors_forget_a_plan_at_its_order_record() -> None:
    """Per master and partition, a plan is held from its start to its order record, and then
    forgotten: the state does not grow with the log."""
    events = plan_events(("A", N, "B"), ("A", "C", N), partition=3, member="M")
    for m in monitors():
        state = m.initial()
        for e in events:
            if e.TYPE in m.observes:
                assert m.key(e) == ("M", 3)
                state, _ = m.step(state, e)
        assert state == frozenset(), m.spec


def test_a_plan_whose_start_the_log_missed_is_not_judged() -> None:
    """A log that starts after the plan's first lines (its ``Initial state``) shows a partial
    plan: unknown, not a violation. PLAN-PRIORITY needs the order record alone."""
    events = plan_events(("A", N, "B"), ("A", "C", N))
    assert broken(events) == {"PLAN-NO-DECREASE", "PLAN-HOTTER-FIRST"}
    assert broken(events[3:]) == set()
    naive = plan_events(("A", "B"), ("B", "C"), variant="hz37-naive-order")
    assert broken(naive[3:]) == {"PLAN-PRIORITY"}


def test_a_decision_whose_source_the_log_cannot_name_is_not_judged(tmp_path: Path) -> None:
    """``MOVE x to index: i`` leaves the source out: the working array of the pass before it
    names it. Without that pass line the plan is not judged."""
    path = write(tmp_path, "member.log", plan_events(("A", "B"), ("A", "C")))
    read = list(Scanner().scan(path))
    move = next(e for e in read if isinstance(e, ev.PlanDecision))
    assert (move.kind, move.source_member, move.source_current_index) == ("MOVE", None, 1)
    assert broken(read) == set()
    # the same decision with the owner as its destination, a member new to the partition in
    # its arguments; the order record still shows the migration as it was, so the log does not
    # show one plan whole and its arrays are not judged
    bad = [dataclasses.replace(e, destination=read[0].member)
           if isinstance(e, ev.PlanDecision) else e for e in read]
    assert broken(bad) == {"PLAN-WELL-FORMED"}
    unnamed = [e for e in bad if not (isinstance(e, ev.PlanState) and e.stage == "pass")]
    assert broken(unnamed) == set()


# --- each spec broken on a log, and the fixed design holding --------------------------------------


def _pad(array: Replicas) -> Replicas:
    return array + (N,) * (MAX_REPLICA_COUNT - len(array))


def crafted(current: Replicas, target: Replicas, decisions: list[Call],
            member: str = "A") -> list[ev.Event]:
    """The lines of a plan no planner of the catalogue makes: the arrays, a pass with the
    working array before each decision, the passes left, the decisions queued in the order
    made."""
    current, target = _pad(current), _pad(target)
    out: list[ev.Event] = [
        ev.PlanStarted(member=member, partition=0, current=current, target=target),
        ev.PlanState(member=member, partition=0, stage="initial", replicas=current),
        ev.PlanState(member=member, partition=0, stage="final", replicas=target)]
    working, index = current, -1
    for d in decisions:
        index = d.source_current_index if d.type == "CLEAR" else d.destination_new_index
        out.append(ev.PlanState(member=member, partition=0, stage="pass", replicas=working,
                                index=index))
        out.append(ev.PlanDecision(
            member=member, partition=0, kind=d.type, source_member=d.source,
            source_current_index=d.source_current_index, source_new_index=d.source_new_index,
            destination=d.destination, destination_current_index=d.destination_current_index,
            destination_new_index=d.destination_new_index))
        working = applied(working, d)
    out += [ev.PlanState(member=member, partition=0, stage="pass", replicas=working, index=i)
            for i in range(index + 1, MAX_REPLICA_COUNT)]
    queued = tuple(d.args for d in decisions if d.type != "CLEAR")
    if queued:
        out.append(ev.PlanOrder(member=member, partition=0, migrations=queued))
    return [dataclasses.replace(e, order=k) for k, e in enumerate(out)]


def _copy(d: str, i: int) -> Call:
    return Call("COPY", N, -1, -1, d, -1, i)


#: spec -> (the plan's events, the specs its log breaks, where: the order record or a line
#: holding this text)
BROKEN = {
    # HZ-PLAN-1: Hazelcast's own planner clears B at once and copies C afterwards
    "PLAN-NO-DECREASE": (plan_events(("A", N, "B"), ("A", "C", N)),
                         {"PLAN-NO-DECREASE", "PLAN-HOTTER-FIRST"}, None),
    # Hazelcast's own planner: indices 0 to 2 hold one replica between two arrays of two
    "PLAN-HOTTER-FIRST": (plan_events(("A", N, "B", "C"), ("A", "C", N, N)),
                          {"PLAN-HOTTER-FIRST"}, None),
    "PLAN-REACHES-TARGET": (crafted(("A", N, N), ("A", "B", "C"), [_copy("B", 1)]),
                            {"PLAN-REACHES-TARGET"}, None),
    # passes towards a target whose cycle was not cancelled (no "after cycle fix" line)
    "PLAN-NO-CYCLE": (crafted(("A", "B", "C"), ("B", "A", "C"), []), {"PLAN-NO-CYCLE"},
                      "Current index: 0, state"),
    # Hazelcast's decisions in the order made: the COPY stays after a MOVE it may go before
    "PLAN-PRIORITY": (plan_events(("A", N), ("B", "C"), variant="no-prioritize"),
                      {"PLAN-PRIORITY"}, None),
    "PLAN-NO-DUPLICATE": (crafted(("A", "B", "A", N), ("A", "B", "A", "C"), [_copy("C", 3)]),
                          {"PLAN-NO-DUPLICATE"}, None),
    "PLAN-OWNER": (crafted(("A", "B", N), ("B", "C", "A"),
                           [Call("SHIFT_UP", "B", 1, 2, "A", 0, 1),
                            Call("SHIFT_UP", N, -1, -1, "B", 2, 0),
                            Call("SHIFT_DOWN", "A", 1, 2, "C", -1, 1)]),
                   {"PLAN-OWNER", "PLAN-HOTTER-FIRST"}, None),
    # the chain walk's branch planMigrations never reaches: a null source at index 1
    "PLAN-WELL-FORMED": (crafted(("A", N, "B"), ("A", "B", N),
                                 [Call("SHIFT_UP", N, 1, -1, "B", 2, 1)]),
                         {"PLAN-WELL-FORMED"}, "from old addresses index: 2 to index: 1"),
}


def test_every_spec_judged_on_logs_has_a_broken_log_here() -> None:
    assert set(BROKEN) == set(PLAN_SPECS)


@pytest.mark.parametrize("spec", PLAN_SPECS)
def test_a_log_breaks_each_spec_at_its_line_and_its_info_form_judges_nothing(
        tmp_path: Path, spec: str) -> None:
    events, specs, where = BROKEN[spec]
    path = write(tmp_path, "member.log", events)
    code, doc = cli(path)
    assert code == 1
    assert {v["spec"] for v in doc["violations"]} == specs
    text = path.read_text().splitlines()
    line = order_line(path) if where is None else next(
        i for i, t in enumerate(text, 1) if where in t)
    for v in doc["violations"]:
        assert v["events"][-1] == {"file": str(path), "line": line}, v
    assert doc["lines"] == doc["parsed_lines"]
    # at INFO the planner logs nothing: nothing of the plan is judged
    info = tmp_path / "info.log"
    info.write_text("".join(r + "\n" for r in text if "[TRACE]" not in r)
                    + "2023-11-14 22:13:40,000 [ INFO] [hz.main] [c.h.i.p.i.MigrationManager]: "
                      "[10.0.0.1]:5701 [dev] [5.3.0] Repartitioning cluster data. Migration "
                      "tasks count: 1\n")
    code, doc = cli(info)
    assert (code, doc["violations"]) == (0, [])
    # the form judges the spec, and this log holds no evidence for it: not judged, saying so
    assert spec not in doc["specs"] and spec in doc["no_evidence"]
    assert doc["not_judged"][spec].startswith("No evidence in this run")
    assert "FINEST" in doc["not_judged"][spec]


@pytest.mark.parametrize("spec", PLAN_SPECS)
def test_a_log_of_the_faithful_planner_holds_each_spec(tmp_path: Path, spec: str) -> None:
    """The faithful planner on a pair of every shape the broken logs have."""
    current, target = {"PLAN-NO-CYCLE": (("A", "B", "C"), ("B", "A", "C")),
                       "PLAN-PRIORITY": (("A", N), ("B", "C")),
                       "PLAN-OWNER": (("A", "B", N), ("B", "C", "A")),
                       "PLAN-WELL-FORMED": (("A", N, "B"), ("A", "B", N))}.get(
                           spec, (("A", N, N), ("A", "B", "C")))
    path = write(tmp_path, "member.log", plan_events(current, target))
    code, doc = cli(path)
    assert (code, doc["violations"]) == (0, []), doc["violations"]
    assert spec in doc["specs"] and doc["lines"] == doc["parsed_lines"]


# --- the fidelity test: the reference planner's plans as Hazelcast text -------------------------


def test_the_faithful_planners_clean_plans_written_as_log_text_validate_clean(
        tmp_path: Path) -> None:
    """Every pair with 1 to 3 indices on which the faithful planner keeps every spec, each a
    partition of one master's log: clean, every line parsed, every plan read."""
    events: list[ev.Event] = []
    partitions = 0
    for n in range(1, 4):
        for current, target in canonical_pairs(n):
            if judge(current, target)[1]:
                continue
            events += plan_events(current, target, partition=partitions, member="M",
                                  order=len(events))
            partitions += 1
    assert partitions > 200
    path = write(tmp_path, "master.log", events)
    report = validate([str(path)])
    assert report.result == "ok", [(v.spec, v.message) for v in report.violations]
    acc = report.accounting
    assert acc.malformed == [] and acc.lines == acc.parsed_lines
    empty = sum(1 for e in events if isinstance(e, ev.PlanOrder) and not e.migrations)
    assert acc.events == len(events) - empty  # an empty order names no partition: no event
    assert set(PLAN_SPECS) <= set(report.specs)


def test_the_index_order_planners_flaw_breaks_no_decrease_on_its_log(tmp_path: Path) -> None:
    """`partsafe check planner --variant hz37-naive-order`'s witness: its plan's log breaks
    PLAN-NO-DECREASE (at the order record), the faithful planner's log of the pair holds."""
    found = witness("PLAN-NO-DECREASE", "hz37-naive-order", 4)
    assert found is not None
    current, target, _ = found
    assert (current, target) == (("A", "B"), ("B", "C"))
    path = write(tmp_path, "naive.log", plan_events(current, target,
                                                     variant="hz37-naive-order"))
    code, doc = cli(path)
    assert code == 1
    hit = [v for v in doc["violations"] if v["spec"] == "PLAN-NO-DECREASE"]
    assert [v["events"][-1]["line"] for v in hit] == [order_line(path)]
    assert "after migration 1 of 2" in hit[0]["message"]
    fixed = write(tmp_path, "fixed.log", plan_events(current, target))
    assert cli(fixed)[0] == 0


@pytest.mark.parametrize(("finding", "current", "target"), [
    ("HZ-PLAN-1", ("A", N, "B"), ("A", "C", N)),
    ("HZ-PLAN-2", ("D", N, "H", N, "J"), ("H", "D", "J", N, N)),
])
def test_hazelcasts_known_findings_are_violations_on_their_logs(
        tmp_path: Path, finding: str, current: Replicas, target: Replicas) -> None:
    """docs/findings.md: the faithful planner's own plans dip below min(current, target)."""
    path = write(tmp_path, f"{finding}.log", plan_events(current, target, member=current[0]))
    code, doc = cli(path)
    assert code == 1
    assert sorted(v["spec"] for v in doc["violations"]) == ["PLAN-HOTTER-FIRST",
                                                           "PLAN-NO-DECREASE"]


def test_plan_exports_a_plan_as_events_and_as_log_text(tmp_path: Path) -> None:
    """`partsafe plan ... --events FILE --log DIR`: the master's plan, which validate judges
    (the index-order variant's flaw, on both)."""
    result = CliRunner().invoke(main, ["plan", "A,B", "B,C", "--variant", "hz37-naive-order",
                                       "--events", str(tmp_path / "plan.jsonl"),
                                       "--log", str(tmp_path / "logs"), "--partition", "9"])
    assert result.exit_code == 0, result.output
    [log] = sorted((tmp_path / "logs").iterdir())
    for path in (tmp_path / "plan.jsonl", log):
        code, doc = cli(path)
        assert code == 1
        assert "PLAN-NO-DECREASE" in {v["spec"] for v in doc["violations"]}
        assert all(v["message"].startswith("partition 9: ") for v in doc["violations"])

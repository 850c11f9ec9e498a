"""PLAN-* specs (000 §3): each catches a violation and holds on a good plan; the exhaustive check
and `partsafe plan` / `partsafe check planner` on the command line."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from partsafe.checker.cli.main import main
from partsafe.checker.planner.check import (
    KNOWN_FINDINGS,
    check_planner,
    in_domain,
    judge,
    judge_plan,
)
from partsafe.refimpl import planner as refplanner
from partsafe.refimpl.planner import Decision, plan, plan_decisions, prioritize
from partsafe.specs.planner import (
    cycle,
    decision_breach,
    hotter_first,
    malformed,
    no_decrease,
    no_duplicate,
    owner_kept,
    priority_breach,
)
from partsafe.specs.registry import get

N = None


def specs_of(current: tuple, target: tuple, variant: str = "fixed") -> set[str]:
    return {v.spec for v in judge(current, target, variant)[1]}


# --- each spec catches and holds ---------------------------------------------------------------


def test_no_decrease() -> None:
    current, target = ("A", "B", "C", "D"), ("A", "C", "D", "E")
    # the shift up 000 §3.2.2 rejects: C from 2 to 1 leaves [A,C,-,D]
    assert not no_decrease(current, target, ("A", "C", N, "D"))
    assert no_decrease(current, target, ("A", "B", "C", "E"))
    assert "PLAN-NO-DECREASE" in specs_of(current, target, "hz37-naive-order")
    assert specs_of(current, target) == set()


def test_hotter_first() -> None:
    current, target = ("A", "B", "C", "D"), ("B", "D", "C", N)
    # 000 §3.2.2 example 6: shifting B up to 0 first empties index 1, which the target keeps
    assert not hotter_first(current, target, ("B", N, "C", "D"))
    assert no_decrease(current, target, ("B", N, "C", "D"))  # the count alone does not see it
    assert hotter_first(current, target, ("A", "D", "C", N))
    assert specs_of(current, target) == set()


def test_no_duplicate() -> None:
    assert not no_duplicate(("A", "B"), ("B", "A"), ("A", "A"))
    assert no_duplicate(("A", "B"), ("B", "A"), ("A", "B"))


def test_owner() -> None:
    assert not owner_kept(("A", "B"), ("B", "C"), (N, "B"))
    assert owner_kept(("A", "B"), ("B", "C"), ("B", N))
    assert owner_kept((N, "B"), ("B", N), (N, N))  # no owner before: nothing to keep


def test_no_cycle() -> None:
    assert cycle(("A", "B"), ("B", "A")) in (["A", "B"], ["B", "A"])
    assert cycle(("A", "B", "C"), ("B", "C", "A")) is not None
    assert cycle(("A", "B", "C", "D"), ("A", "C", "D", "E")) is None
    # the planner cancels the cycle: the cycle-fixed target keeps the ownerships
    p = plan(("A", "B"), ("B", "A"))
    assert p.target_after_cycle_fix == ("A", "B") and p.migrations == ()
    broken = dataclasses.replace(p, target_after_cycle_fix=("B", "A"))
    assert "PLAN-NO-CYCLE" in {v.spec for v in judge_plan(broken)}
    assert "PLAN-NO-CYCLE" not in {v.spec for v in judge_plan(p)}


def test_reaches_target() -> None:
    p = plan(("A", "B", "C"), ("D", "B", "C"))
    assert "PLAN-REACHES-TARGET" not in {v.spec for v in judge_plan(p)}
    short = dataclasses.replace(p, migrations=(), steps=())
    (v,) = [v for v in judge_plan(short) if v.spec == "PLAN-REACHES-TARGET"]
    assert v.message == "ends at [A,B,C], not [D,B,C]"


def test_priority() -> None:
    move = Decision("MOVE", "B", 1, -1, "D", -1, 1)
    copy = Decision("COPY", N, -1, -1, "E", -1, 2)
    assert priority_breach([move, copy]) == 1  # the COPY could go first
    assert priority_breach(list(prioritize([move, copy]))) is None
    conflicting = Decision("COPY", N, -1, -1, "D", -1, 2)
    assert priority_breach([move, conflicting]) is None  # shares D: order kept
    shift_down = Decision("SHIFT_DOWN", "A", 0, 1, "F", -1, 0)
    assert priority_breach([shift_down, copy]) is None  # shift down to index 1 < 2


def test_well_formed_decisions_of_every_type() -> None:
    """The calls of MigrationPlanner.planMigrations, one per type, on the array they are made
    on (000 §3.1)."""
    good = [
        (("A", "B"), Decision("CLEAR", "B", 1, -1, N, -1, -1)),
        (("A", N), Decision("COPY", N, -1, -1, "C", -1, 1)),
        (("A", "B"), Decision("MOVE", "B", 1, -1, "C", -1, 1)),
        (("A", N), Decision("SHIFT_DOWN", "A", 0, 1, "C", -1, 0)),
        ((N, "B"), Decision("SHIFT_UP", N, -1, -1, "B", 1, 0)),
        (("A", "B", N), Decision("SHIFT_UP", "A", 0, -1, "B", 1, 0)),
        (("A", "B", N), Decision("SHIFT_UP", "A", 0, 2, "B", 1, 0)),
        # the chain walk may take a SHIFT UP's destination from a hotter index
        (("A", "B", "C"), Decision("SHIFT_UP", "C", 2, -1, "A", 0, 2)),
    ]
    for array, d in good:
        assert decision_breach(array, d) is None, d


@pytest.mark.parametrize(("array", "decision", "words"), [
    # the two mutants of the planner's clear: an array step that is right, arguments that are not
    (("A", "B"), Decision("CLEAR", "B", 1, -1, N, 0, -1), "a clear has a source, no destination"),
    (("A", "B"), Decision("CLEAR", "B", 1, 1, N, -1, -1), "a clear has a source, no destination"),
    (("A", "B"), Decision("CLEAR", "A", 1, -1, N, -1, -1), "does not hold its current index 1"),
    (("A", N), Decision("COPY", "A", -1, -1, "C", -1, 1), "null exactly when"),
    (("A", "B"), Decision("COPY", N, -1, -1, "C", -1, 1), "fills an empty index"),
    (("A", "B"), Decision("MOVE", "B", 1, -1, "C", -1, 0), "takes the source's index"),
    (("A", "B"), Decision("MOVE", "B", 1, -1, "A", -1, 1), "its current index is -1"),
    (("A", "B"), Decision("MOVE", "B", 1, -1, N, -1, 1), "only a clear has no destination"),
    (("A", "B"), Decision("SHIFT_DOWN", "A", 0, 1, "C", -1, 0), "moves to an empty index"),
    (("A", N), Decision("SHIFT_DOWN", "A", 0, -1, "C", -1, 0), "not the arguments of a SHIFT_DOWN"),
    (("A", N), Decision("MOVE", "A", 0, 1, "C", -1, 0), "not the arguments of a MOVE"),
    ((N, "B"), Decision("SHIFT_UP", N, -1, -1, "B", 0, 0), "does not hold its current index 0"),
    (("A", "B"), Decision("MOVE", "B", 2, -1, "C", -1, 2), "no replica index of a 2-index"),
])
def test_malformed_decisions(array: tuple, decision: Decision, words: str) -> None:
    why = decision_breach(array, decision)
    assert why is not None and words in why, why


def test_well_formed_judges_each_decision_on_the_array_the_ones_before_leave() -> None:
    current, target = ("A", "B", "C"), ("B", "C", "D")
    _, decisions = plan_decisions(current, target)  # MOVE C>D at 2, B>C at 1, A>B at 0
    assert malformed(current, decisions) is None
    # in the other order, B is still a replica when it is to replace A as new to the partition
    assert malformed(current, decisions[::-1]) == (
        0, "MOVE migrate(A, 0, -1, B, -1, 0) on [A,B,C]: the destination holds index 1, but its "
           "current index is -1")
    clear = Decision("CLEAR", "B", 1, -1, N, 0, -1)
    position, why = malformed(("A", "B"), [clear]) or (None, "")
    assert position == 0 and why.startswith("CLEAR migrate(B, 1, -1, null, 0, -1) on [A,B]: ")
    assert "PLAN-WELL-FORMED" not in specs_of(current, target)


def test_well_formed_breaks_on_a_planner_whose_clear_names_a_destination_index(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """The mutant of the triage: the clear's destination_current_index 0 instead of -1. The
    arrays are the same (a clear empties its source's index), so only PLAN-WELL-FORMED sees
    it."""
    migrate = refplanner._Planner._migrate

    def clear_at_zero(self: refplanner._Planner, kind: str, *args: object) -> None:
        s, sc, sn, d, dc, dn = args
        migrate(self, kind, s, sc, sn, d, 0 if kind == "CLEAR" else dc, dn)  # type: ignore[arg-type]

    monkeypatch.setattr(refplanner._Planner, "_migrate", clear_at_zero)
    result = check_planner(3)
    assert result.unexpected == ["PLAN-WELL-FORMED"]
    v = result.smallest["PLAN-WELL-FORMED"]
    assert (v.current, v.target) == (("A",), (N,))
    assert v.message == ("decision 1: CLEAR migrate(A, 0, -1, null, 0, -1) on [A]: a clear has "
                         "a source, no destination, and -1 at every index but the source's "
                         "current one")


def test_well_formed_holds_on_every_variant() -> None:
    for variant in ("fixed", "hz37-naive-order", "keep-cycles", "no-prioritize"):
        assert "PLAN-WELL-FORMED" not in check_planner(4, variant).smallest, variant


def test_specs_registered_with_seed_000() -> None:
    for spec_id in ("PLAN-NO-DECREASE", "PLAN-HOTTER-FIRST", "PLAN-REACHES-TARGET",
                    "PLAN-NO-CYCLE", "PLAN-PRIORITY", "PLAN-NO-DUPLICATE", "PLAN-OWNER",
                    "PLAN-WELL-FORMED"):
        spec = get(spec_id)
        assert spec.design == 'Hazelcast 3.7 "Avoid Data Loss on Migration"'
        assert spec.section.startswith("§3")


# --- the exhaustive check ----------------------------------------------------------------------


def test_exhaustive_check_counts_and_findings() -> None:
    result = check_planner(4)
    assert result.pairs == {1: 5, 2: 34, 3: 286, 4: 2840}
    assert result.domain_pairs == 3 + 17 + 109 + 830
    # the faithful planner keeps every spec but the two recorded findings
    assert set(result.smallest) == set(KNOWN_FINDINGS)
    assert result.unexpected == []
    assert result.violating_pairs == {"PLAN-NO-DECREASE": 781, "PLAN-HOTTER-FIRST": 832}
    assert result.domain_violating_pairs == {"PLAN-NO-DECREASE": 47, "PLAN-HOTTER-FIRST": 51}
    v = result.domain_smallest["PLAN-NO-DECREASE"]
    # Hazelcast clears B at once, before C is copied
    assert (v.current, v.target, v.step) == (("A", N, "B"), ("A", "C", N), 0)


def test_naive_order_breaks_no_decrease_on_a_two_index_pair() -> None:
    result = check_planner(4, "hz37-naive-order")
    # index order with no chain walk, and no prioritization either
    assert result.unexpected == ["PLAN-HOTTER-FIRST", "PLAN-NO-DECREASE", "PLAN-PRIORITY"]
    assert specs_of(("A", "B"), ("B", "C"), "hz37-naive-order") >= {"PLAN-NO-DECREASE"}
    assert specs_of(("A", "B"), ("B", "C")) == set()


def test_domain() -> None:
    assert in_domain(("A", N, "B"), ("A", "C", N))
    assert not in_domain((N, "A"), ("A", N))  # the owner left: promotion comes first
    assert not in_domain(("A", "B"), (N, "A"))  # a repartitioned target has no holes


# --- command line ------------------------------------------------------------------------------

runner = CliRunner()


def test_plan_json_contract() -> None:
    out = runner.invoke(main, ["plan", "A,B,C,D", "A,C,D,E", "--json"])
    assert out.exit_code == 0, out.output
    doc = json.loads(out.stdout)
    assert set(doc) == {"current", "target", "target_after_cycle_fix", "decisions", "migrations",
                        "steps"}
    assert doc["current"] == ["A", "B", "C", "D"]
    assert [(m["type"], m["destination_new_index"]) for m in doc["migrations"]] == [
        ("MOVE", 3), ("MOVE", 2), ("MOVE", 1)]
    assert doc["steps"][-1] == ["A", "C", "D", "E"]
    assert set(doc["decisions"][0]) == {"type", "source", "source_current_index",
                                        "source_new_index", "destination",
                                        "destination_current_index", "destination_new_index"}


def test_plan_clears_are_decisions_not_migrations() -> None:
    doc = json.loads(runner.invoke(main, ["plan", "A,B,C", "A,B,-", "--json"]).stdout)
    assert [d["type"] for d in doc["decisions"]] == ["CLEAR"]
    assert doc["decisions"][0]["destination"] is None
    assert doc["decisions"][0]["destination_new_index"] == -1
    assert doc["migrations"] == [] and doc["steps"] == []


def test_plan_table() -> None:
    out = runner.invoke(main, ["plan", "A,B,C,D", "B,D,C,-"])
    assert out.exit_code == 0
    assert "SHIFT_UP D 3->1, B at 1 leaves" in out.stdout
    assert "[B,D,C,-]" in out.stdout


@pytest.mark.parametrize(("args", "words"), [
    (["A,A", "B,C"], "member 'A' appears twice"),
    (["A,B", "A,B,C"], "CURRENT has 2 indices and TARGET 3"),
    (["A,B,C,D,E,F,G,H", "A,B,C,D,E,F,G,H"], "at most 7"),
    (["A,,B", "A,B,C"], "CURRENT"),
    (["A,B", "A,B", "--variant", "nope"], "unknown planner variant"),
])
def test_plan_bad_input_exits_2(args: list[str], words: str) -> None:
    out = runner.invoke(main, ["plan", *args])
    assert out.exit_code == 2
    assert words in out.output
    assert "Traceback" not in out.output


def test_check_planner_json() -> None:
    out = runner.invoke(main, ["check", "planner", "--replicas", "3", "--json"])
    assert out.exit_code == 0  # the known findings are reported and do not fail the check
    doc = json.loads(out.stdout)
    assert doc["model"] == "planner" and doc["scope"] == {"replicas": 3}
    assert (doc["result"], doc["strict"]) == ("ok", False)
    assert doc["pairs_checked"] == 325
    assert doc["known_findings"] == ["PLAN-HOTTER-FIRST", "PLAN-NO-DECREASE"]
    assert doc["violations"][0]["trace"]["steps"] is not None


def test_check_planner_strict_fails_on_the_known_findings() -> None:
    out = runner.invoke(main, ["check", "planner", "--replicas", "3", "--json", "--strict"])
    assert out.exit_code == 1
    doc = json.loads(out.stdout)
    assert (doc["result"], doc["strict"], doc["known_findings"]) == ("violation", True, [])


@pytest.mark.parametrize(("args", "code", "verdict"), [
    ([], 0, "verdict: OK, check planner (fixed) at replicas 1 to 3; known findings: "
            "PLAN-HOTTER-FIRST, PLAN-NO-DECREASE"),
    (["--strict"], 1, "verdict: VIOLATION, check planner (fixed) at replicas 1 to 3; broken: "
                      "PLAN-HOTTER-FIRST, PLAN-NO-DECREASE"),
    (["--variant", "hz37-naive-order"], 1, "verdict: VIOLATION, check planner "
                                           "(hz37-naive-order) at replicas 1 to 3; broken: "),
])
def test_check_planner_ends_with_a_verdict_line_that_agrees_with_the_exit_status(
        args: list[str], code: int, verdict: str) -> None:
    out = runner.invoke(main, ["check", "planner", "--replicas", "3", *args])
    assert out.exit_code == code
    last = out.stdout.rstrip("\n").splitlines()[-1]
    assert last.startswith(verdict), last
    # the header above agrees too: no VIOLATION over a check that passes
    assert ("VIOLATION" in out.stdout) == (code == 1)


@pytest.mark.parametrize(("args", "failures"), [([], 0), (["--strict"], 2)])
def test_check_planner_junit_follows_the_same_rule(tmp_path: Path, args: list[str],
                                                   failures: int) -> None:
    import xml.etree.ElementTree as ET

    out = tmp_path / "planner.xml"
    r = runner.invoke(main, ["check", "planner", "--replicas", "3", "--junit", str(out), *args])
    assert r.exit_code == (1 if failures else 0)
    suite = ET.parse(out).getroot().find("testsuite")
    assert suite is not None and suite.get("failures") == str(failures)
    known = [c for c in suite.iter("testcase") if c.find("system-out") is not None]
    assert len(known) == 2 - failures


@pytest.mark.parametrize("args", [["--replicas", "0"], ["--replicas", "8"], ["--members", "3"],
                                  ["--variant", "nope"]])
def test_check_planner_bad_scope_exits_2(args: list[str]) -> None:
    out = runner.invoke(main, ["check", "planner", *args])
    assert out.exit_code == 2
    assert "Traceback" not in out.output


# --- the reference planner against the Z3 oracle -------------------------------------------------


def test_cross_check_against_the_oracle() -> None:
    from partsafe.checker.planner.check import cross_check

    c = cross_check(3)
    assert c.pairs == 286
    # the cycle fix leaves a safe plan for every pair; the oracle never contradicts the planner
    assert c.unsafe_and_none == 0 and c.safe_but_none == 0
    assert (c.safe_and_exists, c.unsafe_but_exists, c.domain_unsafe_but_exists) == (233, 53, 3)
    # where the planner's plan is safe it is the shortest, or one migration longer
    assert c.longer_by == {0: 221, 1: 12}
    # the smallest pair where it fails although a safe plan exists
    assert c.first_unsafe_but_exists == ((N, N, "A"), (N, "B", N), 1)

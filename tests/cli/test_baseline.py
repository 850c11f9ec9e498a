"""The CI gate's baseline: `partsafe baseline update` records a report's findings; `check` and
`validate` with --baseline fail on new findings only, and list the recorded ones gone."""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner

from partsafe.checker import baseline
from partsafe.checker.cli.main import main

LOGS = Path(__file__).parent.parent / "data" / "logs"


def _cli(*args: str) -> tuple[int, str]:
    r = CliRunner().invoke(main, list(args))
    return r.exit_code, r.output


def _record(tmp_path: Path, *args: str) -> Path:
    return _recorded(tmp_path, *args)[0]


def _recorded(tmp_path: Path, *args: str) -> tuple[Path, str]:
    """The baseline of the report of `partsafe ARGS --json`, and what `baseline update`
    said."""
    report, file = tmp_path / "report.json", tmp_path / "baseline.json"
    code, text = _cli(*args, "--json")
    report.write_text(text)
    code, text = _cli("baseline", "update", str(file), str(report))
    assert code == 0 and "finding(s) recorded" in text, text
    return file, text


def test_validate_fails_on_a_new_violation_only(tmp_path: Path,
                                                flawed_logs: dict[str, Path]) -> None:
    old, new = str(flawed_logs["hz38-unordered-members"]), str(flawed_logs["hz38-local-removal"])
    file = _record(tmp_path, "validate", old)
    code, out = _cli("validate", old, "--baseline", str(file))
    assert code == 0, out
    assert out.strip().splitlines()[-1].startswith("verdict: OK")
    code, out = _cli("validate", old, new, "--baseline", str(file))
    assert code == 1
    assert "new, failing: violation MEM-MASTER-ONLY" in out
    assert out.strip().splitlines()[-1].startswith("verdict: VIOLATION")
    code, out = _cli("validate", str(LOGS), "--baseline", str(file), "--json")
    doc = json.loads(out)
    assert code == 0 and doc["baseline"]["verdict"] == "ok"
    assert [g["spec"] for g in doc["baseline"]["gone"]] == ["MEM-VIEW-ORDER"]


#: a scope at which hz38-unordered-members's whole search takes 2 s (a gated search goes on
#: past the violations its baseline records)
SMALL = ("--suspicions", "0", "--publishes", "1")


def test_check_fails_on_a_new_broken_spec_only(tmp_path: Path) -> None:
    file = _record(tmp_path, "check", "membership", "--variant", "hz38-unordered-members",
                   *SMALL, "--keep-going")
    code, out = _cli("check", "membership", "--variant", "hz38-unordered-members", *SMALL,
                     "--baseline", str(file))
    assert code == 0 and "no new finding" in out.strip().splitlines()[-1]
    code, out = _cli("check", "membership", "--variant", "hz38-local-removal", *SMALL,
                     "--baseline", str(file))
    assert code == 1 and "MEM-MASTER-ONLY" in out.strip().splitlines()[-1]
    assert "no longer seen" in out


def test_a_recorded_violation_does_not_hide_a_new_one(tmp_path: Path) -> None:
    """hz37-backup-clear-first breaks DATA-REPLICAS first, and DATA-NO-LOSS deeper. A baseline
    that records the first: the gated search goes on past it, and fails on the second."""
    variant = ("migration", "--variant", "hz37-backup-clear-first")
    file, said = _recorded(tmp_path, "check", *variant)
    assert [f.spec for f in baseline.read(str(file))] == ["DATA-REPLICAS"]
    assert "stopped at its first violation" in " ".join(said.split())
    code, out = _cli("check", *variant, "--baseline", str(file), "--json")
    doc = json.loads(out)
    assert code == 1 and [f["spec"] for f in doc["baseline"]["new"]] == ["DATA-NO-LOSS"]
    # recorded whole (--keep-going): every violation, and each scenario the whole search never
    # reached (a gap: the variant's flaw ends runs before it)
    file = _record(tmp_path, "check", *variant, "--keep-going")
    assert sorted((f.kind, f.spec) for f in baseline.read(str(file))) == [
        ("gap", "master-crashes-mid-migration"), ("violation", "DATA-HELD"),
        ("violation", "DATA-NO-LOSS"), ("violation", "DATA-REPLICAS")]
    code, out = _cli("check", *variant, "--baseline", str(file))
    assert code == 0, out


def test_a_missing_or_foreign_baseline_is_bad_input(tmp_path: Path) -> None:
    code, out = _cli("validate", str(LOGS), "--baseline", str(tmp_path / "none.json"))
    assert code == 2 and "no baseline there" in out
    other = tmp_path / "other.json"
    other.write_text('{"findings": []}')
    code, out = _cli("validate", str(LOGS), "--baseline", str(other))
    assert code == 2 and "not a partsafe baseline" in out
    code, out = _cli("baseline", "update", str(tmp_path / "b.json"), str(other))
    assert code == 2 and "not the JSON report" in out


def test_a_possible_violation_fails_only_with_strict() -> None:
    possible = baseline.Finding("validate", "possible", "MEM-VIEW-ORDER", "A", "m")
    comparison = baseline.compare([], [possible])
    assert comparison.failing(strict=False) == []
    assert comparison.failing(strict=True) == [possible]
    recorded = baseline.compare([possible], [possible])
    assert recorded.failing(strict=True) == [] and recorded.known == [possible]


def _failures(junit: Path) -> list[tuple[str, str]]:
    """The failing test cases of a JUnit report: (suite or class, case name)."""
    import xml.etree.ElementTree as ET

    root = ET.parse(junit).getroot()
    return [(case.get("classname", ""), case.get("name", "")) for case in root.iter("testcase")
            if case.find("failure") is not None]


def test_validate_junit_fails_only_the_cases_of_new_findings(
        tmp_path: Path, flawed_logs: dict[str, Path]) -> None:
    old, new = str(flawed_logs["hz38-unordered-members"]), str(flawed_logs["hz38-local-removal"])
    file, junit = _record(tmp_path, "validate", old), tmp_path / "validate.xml"
    code, _ = _cli("validate", old, "--junit", str(junit))
    assert code == 1 and _failures(junit) == [("partsafe.validate", "MEM-VIEW-ORDER")]
    code, _ = _cli("validate", old, "--baseline", str(file), "--junit", str(junit))
    assert code == 0 and _failures(junit) == []
    assert "recorded in the baseline" in junit.read_text()
    code, _ = _cli("validate", old, new, "--baseline", str(file), "--junit", str(junit))
    assert code == 1 and _failures(junit) == [("partsafe.validate", "MEM-MASTER-ONLY")]


def test_check_junit_fails_only_the_cases_of_new_findings(tmp_path: Path) -> None:
    file = _record(tmp_path, "check", "membership", "--variant", "hz38-unordered-members",
                   *SMALL, "--keep-going")
    junit = tmp_path / "check.xml"
    code, _ = _cli("check", "membership", "--variant", "hz38-unordered-members", *SMALL,
                   "--junit", str(junit))
    assert code == 1 and _failures(junit) == [("membership", "MEM-VIEW-ORDER")]
    code, _ = _cli("check", "membership", "--variant", "hz38-unordered-members", *SMALL,
                   "--baseline", str(file), "--junit", str(junit))
    assert code == 0 and _failures(junit) == []
    code, _ = _cli("check", "membership", "--variant", "hz38-local-removal", *SMALL,
                   "--baseline", str(file), "--junit", str(junit))
    assert code == 1 and ("membership", "MEM-MASTER-ONLY") in _failures(junit)


def test_the_planners_known_findings_are_findings_not_violations() -> None:
    """`check --json` lists the planner's known findings among its violations; a baseline
    keeps them as known findings (failing only with --strict), and the planner alone is no
    search a baseline applies to."""
    code, out = _cli("check", "planner", "--json")
    assert code == 0
    found = baseline.findings_of(json.loads(out), "planner")
    assert found and {f.kind for f in found} == {"known"}
    assert baseline.compare([], found).failing(strict=False) == []
    code, out = _cli("check", "planner", "--baseline", "none.json")
    assert code == 2 and "applies to the searches, not to model planner" in out


def test_a_check_stopped_at_a_violation_leaves_its_goals_unjudged_not_failed() -> None:
    """A search that stops at its first violation has not judged the coverage goals it had not
    reached: their JUnit cases are skipped. A search that went on to the end fails them."""
    import dataclasses
    import xml.etree.ElementTree as ET

    from partsafe.checker.engine.bfs import Bounds
    from partsafe.checker.protocols import catalog
    from partsafe.checker.report import junit
    from partsafe.checker.run import run_check

    def goals(run: object, result: object) -> dict[str, str]:
        root = ET.fromstring(junit([(run.model, result)]))  # type: ignore[attr-defined]
        return {c.get("name", ""): c[0].tag if len(c) else "passed"
                for c in root.iter("testcase") if c.get("classname", "").endswith(".coverage")}

    scope = {"suspicions": 0, "publishes": 1}
    entry = catalog.get("membership")
    first = run_check(entry, "hz38-unordered-members", scope, bounds=Bounds(), symmetry=True,
                      keep_going=False)
    whole = run_check(entry, "hz38-unordered-members", scope, bounds=Bounds(), symmetry=True,
                      keep_going=True)
    assert first.result.stopped_at_violation and not whole.result.stopped_at_violation
    unreached = [g.name for g in first.result.goals if not g.reached]
    assert unreached and {goals(first, first.result)[g] for g in unreached} == {"skipped"}
    judged = dataclasses.replace(first.result, stopped_at_violation=False)
    assert {goals(first, judged)[g] for g in unreached} == {"failure"}

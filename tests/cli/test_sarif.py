"""`--sarif FILE` on validate and conform: SARIF 2.1.0 logs that the OASIS schema accepts, each
finding a result at its log file and line, baseline states, and log text kept inert."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import jsonschema
import pytest
from click.testing import CliRunner

from partsafe.checker import sarif
from partsafe.checker.cli.main import main

DATA = Path(__file__).parent.parent / "data"
LOGS = DATA / "logs"
#: the schema of SARIF 2.1.0 Plus Errata 01, as OASIS publishes it (tests/data/sarif/NOTICE.md)
SCHEMA = json.loads((DATA / "sarif" / "sarif-schema-2.1.0.json").read_text())


def _run(*args: str, sarif_file: Path) -> tuple[int, dict[str, Any]]:
    """The command's exit status and its SARIF log, checked against the schema."""
    r = CliRunner().invoke(main, [*args, "--sarif", str(sarif_file)])
    assert r.exit_code in (0, 1, 3), r.output
    doc = json.loads(sarif_file.read_text(encoding="utf-8"))
    jsonschema.Draft4Validator(SCHEMA).validate(doc)
    assert doc["version"] == "2.1.0" and doc["$schema"] == sarif.SCHEMA
    (run,) = doc["runs"]
    assert run["invocations"][0]["exitCode"] == r.exit_code
    return r.exit_code, run


def _place(run: dict[str, Any], location: dict[str, Any]) -> tuple[str, int | None]:
    """A location's file (resolved against the run's base URI) and line."""
    physical = location["physicalLocation"]
    artifact = physical["artifactLocation"]
    uri = artifact["uri"]
    if artifact.get("uriBaseId") == sarif.SRCROOT:
        uri = run["originalUriBaseIds"][sarif.SRCROOT]["uri"] + uri
    assert uri.startswith("file://")
    assert run["artifacts"][artifact["index"]]["location"]["uri"] == artifact["uri"]
    return uri.removeprefix("file://"), physical.get("region", {}).get("startLine")


def test_the_schema_refuses_a_log_it_should() -> None:
    """The schema is the real one: a result without a message is refused."""
    bad = {"version": "2.1.0", "runs": [{"tool": {"driver": {"name": "x"}},
                                         "results": [{"ruleId": "R"}]}]}
    with pytest.raises(jsonschema.ValidationError, match="message"):
        jsonschema.Draft4Validator(SCHEMA).validate(bad)


def test_each_violation_is_an_error_on_its_log_line(tmp_path: Path,
                                                    flawed_logs: dict[str, Path]) -> None:
    logs = flawed_logs["hz38-unordered-members"]
    code, run = _run("validate", str(logs), sarif_file=tmp_path / "out.sarif")
    report = json.loads(CliRunner().invoke(main, ["validate", str(logs), "--json"]).stdout)
    assert code == 1
    (result,) = run["results"]
    (violation,) = report["violations"]
    assert result["ruleId"] == "MEM-VIEW-ORDER" and result["level"] == "error"
    assert run["tool"]["driver"]["rules"][result["ruleIndex"]]["id"] == "MEM-VIEW-ORDER"
    assert violation["message"] in result["message"]["text"]
    raised = violation["events"][-1]  # the event that raised it
    file, line = _place(run, result["locations"][0])
    assert Path(file) == Path(raised["file"]).resolve() and line == raised["line"]
    region = result["locations"][0]["physicalLocation"]["region"]
    shown = Path(raised["file"]).read_text().splitlines()[line - 1]
    assert region["snippet"]["text"] == shown
    related = [_place(run, x) for x in result.get("relatedLocations", [])]
    assert [(Path(f), n) for f, n in related] == [
        (Path(e["file"]).resolve(), e["line"]) for e in violation["events"][:-1]]
    assert result["partialFingerprints"][sarif.FINGERPRINT]
    # every spec judged, and every one not judged, is a rule; the latter is said as a note
    rules = {r["id"] for r in run["tool"]["driver"]["rules"]}
    assert set(report["specs"]) | set(report["not_judged"]) <= rules
    said = run["invocations"][0]["toolConfigurationNotifications"]
    assert {n["associatedRule"]["id"] for n in said} == set(report["not_judged"])


def test_logs_that_hold_have_no_result(tmp_path: Path) -> None:
    code, run = _run("validate", str(LOGS / "hz_04.log"), str(LOGS / "hz_05.log"),
                     sarif_file=tmp_path / "out.sarif")
    assert code == 0 and run["results"] == []
    assert run["invocations"][0]["executionSuccessful"] is True


def test_a_possible_violation_is_a_warning_and_an_error_when_strict(tmp_path: Path) -> None:
    """The master starts a migration to B 50 ms before B's log says it restarted (a clock
    apart): within 200 ms of skew some order breaks SHUT-ONLY-SOURCE, not every order."""
    from test_skew import write_restart_50ms_after

    log = write_restart_50ms_after(tmp_path / "compose.log")
    code, run = _run("validate", str(log), "--max-skew", "200ms", sarif_file=tmp_path / "a")
    (result,) = run["results"]
    assert code == 0 and result["level"] == "warning"
    assert result["properties"]["certainty"] == "possible" and "possible:" in \
        result["message"]["text"]
    # the order that breaks it, a related location per event, in that order
    order = [x for x in result["relatedLocations"] if x["message"]["text"][0].isdigit()]
    assert [(_place(run, x)[1], x["message"]["text"][:2]) for x in order] == [(8, "1."),
                                                                             (7, "2.")]
    code, run = _run("validate", str(log), "--max-skew", "200ms", "--strict",
                     sarif_file=tmp_path / "b")
    assert code == 1 and run["results"][0]["level"] == "error"


def test_with_a_baseline_each_result_says_whether_it_is_new(
        tmp_path: Path, flawed_logs: dict[str, Path]) -> None:
    old, new = str(flawed_logs["hz38-unordered-members"]), str(flawed_logs["hz38-local-removal"])
    report, file = tmp_path / "report.json", tmp_path / "baseline.json"
    report.write_text(CliRunner().invoke(main, ["validate", old, "--json"]).stdout)
    assert CliRunner().invoke(main, ["baseline", "update", str(file), str(report)]).exit_code == 0
    code, run = _run("validate", old, "--baseline", str(file), sarif_file=tmp_path / "a")
    assert code == 0 and [r["baselineState"] for r in run["results"]] == ["unchanged"]
    code, run = _run("validate", old, new, "--baseline", str(file), sarif_file=tmp_path / "b")
    states = {r["ruleId"]: r["baselineState"] for r in run["results"]}
    assert code == 1 and states == {"MEM-VIEW-ORDER": "unchanged", "MEM-MASTER-ONLY": "new"}
    # one finding, one fingerprint, whatever the run it is seen in
    first = _run("validate", old, sarif_file=tmp_path / "c")[1]["results"][0]
    again = next(r for r in run["results"] if r["ruleId"] == "MEM-VIEW-ORDER")
    assert first["partialFingerprints"] == again["partialFingerprints"]


def test_a_log_that_judges_nothing_is_an_unsuccessful_run(tmp_path: Path) -> None:
    empty = tmp_path / "empty.log"
    empty.write_text("")
    code, run = _run("validate", str(empty), sarif_file=tmp_path / "out.sarif")
    assert code == 3 and run["results"] == []
    invocation = run["invocations"][0]
    assert invocation["executionSuccessful"] is False
    assert any("incomplete" in n["message"]["text"]
               for n in invocation["toolExecutionNotifications"])


def test_malformed_lines_are_notifications_at_their_lines(tmp_path: Path) -> None:
    text = (LOGS / "hz_04.log").read_text().replace("Members {size:", "Members {size:x", 1)
    (tmp_path / "cut.log").write_text(text)
    report = json.loads(CliRunner().invoke(main, ["validate", str(tmp_path / "cut.log"),
                                                  "--json"]).stdout)
    assert report["malformed"], "the edit makes a malformed line"
    _, run = _run("validate", str(tmp_path / "cut.log"), sarif_file=tmp_path / "out.sarif")
    notes = [n for n in run["invocations"][0]["toolExecutionNotifications"]
             if n["message"]["text"].startswith("a malformed line")]
    assert [_place(run, n["locations"][0])[1] for n in notes] == \
        [m["line"] for m in report["malformed"]]


def test_paths_are_relative_to_the_working_directory_or_file_uris(tmp_path: Path) -> None:
    log = sarif.SarifLog("validate", root=tmp_path)
    inside = log.artifact(str(tmp_path / "logs" / "a b#1.log"))
    assert inside["uri"] == "logs/a%20b%231.log" and inside["uriBaseId"] == sarif.SRCROOT
    assert log.artifact("logs/c.log")["uri"] == "logs/c.log"
    outside = log.artifact("/var/log/hz.log")
    assert outside == {"uri": "file:///var/log/hz.log", "index": 2}
    assert log.artifact(str(tmp_path / "logs" / "a b#1.log"))["index"] == 0


def test_text_from_a_log_reads_as_text_never_as_a_link() -> None:
    assert sarif.plain("member [10.0.0.1]:5701 left") == "member [10.0.0.1]:5701 left"
    hostile = "host [click](0) \\ <script>\x01"
    assert sarif.plain(hostile) == "host \\[click\\](0) \\\\ <script>\x01"


def test_a_hostile_message_is_inert_and_the_log_stays_valid(
        tmp_path: Path, flawed_logs: dict[str, Path]) -> None:
    """A member name that would be an embedded link, markup and control bytes: the SARIF log
    holds them as escaped text, and the schema still accepts it."""
    doc = json.loads(CliRunner().invoke(
        main, ["validate", str(flawed_logs["hz38-unordered-members"]), "--json"]).stdout)
    doc["violations"][0]["member"] = 'x [y](0) "<script>\x01\x1b'
    doc["violations"][0]["message"] += ' [y](0) "<script>\x01'
    out = sarif.validate_log(doc, 1)
    jsonschema.Draft4Validator(SCHEMA).validate(out)
    text = out["runs"][0]["results"][0]["message"]["text"]
    assert "\\[y\\](0)" in text and "[y](0)" not in text.replace("\\[y\\](0)", "")
    written = tmp_path / "hostile.sarif"
    sarif.write(str(written), out)
    assert json.loads(written.read_text(encoding="utf-8")) == out
    assert "markdown" not in written.read_text()


def test_a_gzip_log_shows_its_lines(tmp_path: Path) -> None:
    import gzip

    with gzip.open(tmp_path / "a.log.gz", "wt") as f:
        f.write("one\ntwo\nthree\n")
    lines = sarif.Lines([(str(tmp_path / "a.log.gz"), 2)])
    region = lines.region(str(tmp_path / "a.log.gz"), 2)
    assert region["region"]["snippet"]["text"] == "two"
    assert region["contextRegion"]["snippet"]["text"] == "one\ntwo\nthree"
    assert sarif.Lines([("/no/such/file", 1)]).region("/no/such/file", 1) == {
        "region": {"startLine": 1}}


# --- conform ----------------------------------------------------------------------------------


def _edited(folder: Path, name: str, old: str, new: str) -> Path:
    text = (LOGS / name).read_text()
    assert old in text
    (folder / name).write_text(text.replace(old, new, 1))
    return folder / name


def test_a_log_that_leaves_the_design_is_an_error_at_the_first_unmatched_record(
        tmp_path: Path) -> None:
    """hz_07 edited: B prints its master's list at version 3 where the master printed 4."""
    b = _edited(tmp_path, "hz_07.log", "Members {size:2, ver:4}", "Members {size:2, ver:3}")
    code, run = _run("conform", "membership", str(LOGS / "hz_06.log"), str(b),
                     sarif_file=tmp_path / "out.sarif")
    assert code == 1
    (result,) = run["results"]
    assert result["ruleId"] == sarif.CONFORMANCE and result["level"] == "error"
    file, line = _place(run, result["locations"][0])
    assert Path(file) == b.resolve() and line == 5
    assert "version" in result["message"]["text"]
    (last,) = result["relatedLocations"]
    assert last["message"]["text"] == "the last record matched"
    assert _place(run, last)[1] is not None


def test_a_tla_trace_that_leaves_the_design_is_an_error_at_its_line(tmp_path: Path) -> None:
    """The TwoPhase benchmark's buggy trace: line 8 commits before rm-3 prepared."""
    trace = DATA / "twophase" / "trace.ndjson.BUG-4RM.VEA"
    code, run = _run("conform", "twophase", str(trace), "--config",
                     str(DATA / "twophase" / "conf.4RM.ndjson"), sarif_file=tmp_path / "a")
    (result,) = run["results"]
    assert code == 1 and _place(run, result["locations"][0]) == (str(trace.resolve()), 8)
    assert "TMCommit is not enabled" in result["message"]["text"]
    assert [_place(run, x)[1] for x in result["relatedLocations"]] == [7]


def test_a_log_that_conforms_has_no_result_and_one_with_nothing_mapped_is_incomplete(
        tmp_path: Path) -> None:
    code, run = _run("conform", "membership", *(str(LOGS / f"hz_0{k}.log") for k in (6, 7, 8)),
                     sarif_file=tmp_path / "a.sarif")
    assert code == 0 and run["results"] == []
    code, run = _run("conform", "membership", str(LOGS / "hz_11.log"),
                     sarif_file=tmp_path / "b.sarif")
    assert code == 3 and run["invocations"][0]["executionSuccessful"] is False


def test_a_variant_that_fits_makes_the_others_notes(tmp_path: Path,
                                                    flawed_logs: dict[str, Path]) -> None:
    """With --variant all, logs that fit one design (the zoo's hz38-local-removal
    counterexample) are no error where the other designs leave them: notes."""
    logs = str(flawed_logs["hz38-local-removal"])
    code, run = _run("conform", "membership", logs, "--max-hidden", "0", "--variant", "all",
                     sarif_file=tmp_path / "a.sarif")
    levels = {r["properties"]["variant"]: r["level"] for r in run["results"]}
    assert code == 0 and run["properties"]["fits"] == ["hz38-local-removal"]
    assert "fixed" in levels and set(levels.values()) == {"note"}
    assert "hz38-local-removal" not in levels
    code, run = _run("conform", "membership", logs, "--max-hidden", "0",
                     sarif_file=tmp_path / "b.sarif")
    assert code == 1 and [r["level"] for r in run["results"]] == ["error"]


def test_an_unwritable_sarif_file_is_bad_input(tmp_path: Path) -> None:
    target = str(tmp_path / "no" / "such" / "dir" / "out.sarif")
    r = CliRunner().invoke(main, ["validate", str(LOGS / "hz_04.log"), "--sarif", target])
    assert r.exit_code == 2 and "--sarif" in r.output and "cannot write" in r.output

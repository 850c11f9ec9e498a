"""The `partsafe` command line: exit statuses, JSON documents, JUnit, trace artifacts, bad input."""

from __future__ import annotations

import functools
import json
import re
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from partsafe.checker.cli.main import main

CHECK_KEYS = {"model", "variant", "scope", "result", "distinct_states", "depth", "seconds",
              "violations"}


def invoke(*args: str, catch: bool = False) -> Result:
    return CliRunner().invoke(main, list(args), catch_exceptions=catch)


def check_json(*args: str) -> tuple[int, dict]:
    r = invoke("check", *args, "--json", "--no-progress")
    return r.exit_code, json.loads(r.stdout)


# --- check ------------------------------------------------------------------------------------


def test_python_m_partsafe_check_twophase_json() -> None:
    proc = subprocess.run([sys.executable, "-m", "partsafe", "check", "twophase", "--json"],
                          capture_output=True, text=True, timeout=120, check=False)
    assert proc.returncode == 0, proc.stderr
    doc = json.loads(proc.stdout)  # exactly one JSON document, nothing else on stdout
    assert isinstance(doc, dict)
    assert set(doc) >= CHECK_KEYS
    assert doc["model"] == "twophase"
    assert doc["variant"] == "fixed"
    assert doc["scope"] == {"rms": 3}
    assert doc["result"] == "ok"
    assert doc["distinct_states"] == 80
    assert doc["depth"] == 10
    assert doc["violations"] == []
    assert isinstance(doc["seconds"], float | int) and doc["seconds"] >= 0


def test_check_twophase_exits_0() -> None:
    r = invoke("check", "twophase", "--no-progress")
    assert r.exit_code == 0
    assert "twophase (fixed) at rms=3: OK" in r.stdout
    assert "80 distinct states" in r.stdout


def test_check_twophase_without_symmetry_json() -> None:
    code, doc = check_json("twophase", "--rms", "4", "--no-symmetry")
    assert code == 0
    assert (doc["result"], doc["scope"], doc["symmetry"]) == ("ok", {"rms": 4}, False)
    assert doc["distinct_states"] == 1568
    assert doc["never_fired"] == []
    assert [g["reached"] for g in doc["goals"]] == [True, True]


def test_check_violation_json() -> None:
    code, doc = check_json("twophase", "--variant", "tm-commit-early")
    assert code == 1
    assert set(doc) >= CHECK_KEYS
    assert doc["result"] == "violation"
    assert doc["variant"] == "tm-commit-early"
    (v,) = doc["violations"]
    assert v["spec"] == "TC-CONSISTENT"
    assert v["message"] == "rm0 committed while rm1 aborted"
    assert v["depth"] == 5
    trace = v["trace"]
    assert len(trace) == 6  # the initial state and five steps
    for step in trace:
        assert {"action", "node", "events", "state"} <= set(step)
        assert isinstance(step["events"], list)
        assert isinstance(step["state"], dict)
    assert [s["action"] for s in trace] == [
        "init", "RMPrepare(rm0)", "TMRcvPrepared(rm0)", "TMCommit", "RMRcvCommitMsg(rm0)",
        "RMChooseToAbort(rm1)"]
    assert [s["node"] for s in trace] == [None, "rm0", "rm0", "TM", "rm0", "rm1"]
    assert trace[-1]["state"]["rm0"] == "committed"
    assert trace[-1]["state"]["rm1"] == "aborted"


def test_check_violation_human_output() -> None:
    r = invoke("check", "twophase", "--variant", "tm-commit-early", "--no-progress")
    assert r.exit_code == 1
    assert "VIOLATION" in r.stdout
    assert "TC-CONSISTENT: rm0 committed while rm1 aborted" in r.stdout


def test_check_junit_has_a_failure_for_the_violation(tmp_path: Path) -> None:
    out = tmp_path / "report.xml"
    r = invoke("check", "twophase", "--variant", "tm-commit-early", "--junit", str(out),
               "--no-progress")
    assert r.exit_code == 1
    root = ET.fromstring(out.read_text())
    assert root.tag == "testsuites"
    (suite,) = root.findall("testsuite")
    assert suite.get("name") == "twophase[tm-commit-early]"
    assert suite.get("failures") == "1"
    assert suite.get("tests") == "3"  # the spec and two coverage goals
    cases = {c.get("name"): c for c in suite.findall("testcase")}
    assert set(cases) == {"TC-CONSISTENT", "commit", "abort-after-prepare"}
    failure = cases["TC-CONSISTENT"].find("failure")
    assert failure is not None
    assert failure.get("message") == "rm0 committed while rm1 aborted"
    assert failure.get("type") == "violation"
    assert "TMCommit" in (failure.text or "")
    assert cases["commit"].find("failure") is None


def test_check_junit_clean(tmp_path: Path) -> None:
    out = tmp_path / "ok.xml"
    assert invoke("check", "twophase", "--junit", str(out), "--no-progress").exit_code == 0
    root = ET.fromstring(out.read_text())
    assert root.findall(".//failure") == []
    assert root.find("testsuite").get("failures") == "0"


def test_check_state_bound_exits_3() -> None:
    code, doc = check_json("twophase", "--max-states", "10")
    assert code == 3
    assert doc["result"] == "incomplete"
    assert doc["incomplete_reason"] == "state bound 10 reached"
    assert doc["violations"] == []


def test_check_depth_bound_exits_3() -> None:
    code, doc = check_json("twophase", "--max-depth", "3")
    assert code == 3
    assert (doc["result"], doc["incomplete_reason"]) == ("incomplete", "depth bound 3 reached")


# --- trace artifacts and replay ---------------------------------------------------------------


@pytest.fixture
def artifact(tmp_path: Path) -> Path:
    out = tmp_path / "cex.json"
    r = invoke("check", "twophase", "--variant", "tm-commit-early", "--trace-out", str(out),
               "--no-progress")
    assert r.exit_code == 1
    return out


def test_trace_out_writes_a_counterexample(artifact: Path) -> None:
    doc = json.loads(artifact.read_text())
    assert doc["partsafe"] == "counterexample"
    assert (doc["model"], doc["variant"], doc["spec"]) == ("twophase", "tm-commit-early",
                                                           "TC-CONSISTENT")
    assert doc["params"] == {"rms": 3}
    assert doc["init"] == 0
    assert [s["action_id"] for s in doc["steps"]] == [
        "('RMPrepare', 0)", "('TMRcvPrepared', 0)", "('TMCommit',)", "('RMRcvCommitMsg', 0)",
        "('RMChooseToAbort', 1)"]


def test_no_trace_out_without_violation(tmp_path: Path) -> None:
    out = tmp_path / "none.json"
    assert invoke("check", "twophase", "--trace-out", str(out), "--no-progress").exit_code == 0
    assert not out.exists()


def test_replay_reproduces(artifact: Path) -> None:
    r = invoke("replay", str(artifact))
    assert r.exit_code == 1
    assert "violation reproduced" in r.stdout
    r = invoke("replay", str(artifact), "--json")
    assert r.exit_code == 1
    doc = json.loads(r.stdout)
    assert doc["reproduced"] is True
    assert doc["spec"] == "TC-CONSISTENT"
    assert doc["message"] == "rm0 committed while rm1 aborted"
    assert doc["depth"] == 5
    assert len(doc["trace"]) == 6


def test_replay_of_a_tampered_artifact_names_the_step(artifact: Path) -> None:
    doc = json.loads(artifact.read_text())
    doc["steps"][2]["action_id"] = "('RMRcvCommitMsg', 2)"
    artifact.write_text(json.dumps(doc))
    r = invoke("replay", str(artifact))
    assert r.exit_code == 2
    assert f"{artifact}: step 3 (TMCommit) is not enabled" in r.output


def test_replay_of_an_artifact_with_other_events_names_the_step(artifact: Path) -> None:
    doc = json.loads(artifact.read_text())
    doc["steps"][0]["events"] = [{"type": "member_crashed", "member": "rm0"}]
    artifact.write_text(json.dumps(doc))
    r = invoke("replay", str(artifact))
    assert r.exit_code == 2
    assert ("step 1 (RMPrepare(rm0)) emits [{'type': 'rm_state_changed', 'member': 'rm0', "
            "'state': 'prepared'}], the artifact says [{'type': 'member_crashed'") in r.output


@pytest.mark.parametrize("params", [{"rms": "3"}, {"rms": 2.5}, {"rms": None}],
                         ids=["str", "float", "null"])
def test_replay_of_an_artifact_with_bad_params_exits_2(artifact: Path, params: dict) -> None:
    doc = json.loads(artifact.read_text())
    doc["params"] = params
    artifact.write_text(json.dumps(doc))
    r = invoke("replay", str(artifact), catch=True)
    assert r.exception is None or isinstance(r.exception, SystemExit), repr(r.exception)
    assert r.exit_code == 2
    assert "rms" in r.output


def test_replay_of_a_prefix_does_not_reproduce(artifact: Path) -> None:
    doc = json.loads(artifact.read_text())
    doc["steps"] = doc["steps"][:4]
    artifact.write_text(json.dumps(doc))
    r = invoke("replay", str(artifact), "--json")
    assert r.exit_code == 0
    assert json.loads(r.stdout)["reproduced"] is False


def test_replay_of_a_non_json_file_exits_2(tmp_path: Path) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text("this is not { json\n")
    r = invoke("replay", str(bad))
    assert r.exit_code == 2
    assert f"{bad}: not JSON" in r.output


def test_replay_of_other_json_exits_2(tmp_path: Path) -> None:
    other = tmp_path / "other.json"
    other.write_text(json.dumps({"model": "twophase"}))
    r = invoke("replay", str(other))
    assert r.exit_code == 2
    assert "not a partsafe counterexample" in r.output
    r = invoke("replay", str(tmp_path / "missing.json"))
    assert r.exit_code == 2
    assert "missing.json" in r.output


# --- bad input --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("args", "needle"),
    [
        (["check", "nope"], "unknown model 'nope'"),
        (["check", "twophase", "--variant", "nope"], "unknown variant 'nope' of model twophase"),
        (["check", "twophase", "--rms", "0"], "--rms must be at least 1"),
        (["check", "twophase", "--members", "3"], "--members does not apply to model twophase"),
        (["check", "twophase", "--max-states", "0"], "--max-states must be positive"),
        (["check", "twophase", "--max-depth", "-1"], "--max-depth must be positive"),
        (["check", "twophase", "--max-seconds", "0"], "--max-seconds must be positive"),
        (["check", "twophase", "--rms", "three"], "--rms"),
        (["check", "--variant", "tm-commit-early"], "--variant"),
        (["check", "twophase", "--until", "MEM-VERSION"],
         "--until MEM-VERSION: not a spec of model twophase (its specs: TC-CONSISTENT)"),
        (["check", "planner", "--until", "PLAN-OWNER"], "--until applies to the searches"),
        (["explain", "NOPE"], "unknown spec 'NOPE'"),
        (["frobnicate"], "frobnicate"),
    ],
    ids=["model", "variant", "rms-0", "members-on-twophase", "max-states-0", "max-depth-neg",
         "max-seconds-0", "rms-not-int", "variant-without-model", "until-other-model",
         "until-planner", "explain", "command"],
)
def test_bad_input_exits_2_and_names_it(args: list[str], needle: str) -> None:
    r = invoke(*args, *(["--no-progress"] if args[0] == "check" else []))
    assert r.exit_code == 2
    assert needle in r.output
    assert r.stdout == ""


def test_bad_input_with_json_prints_no_document() -> None:
    r = invoke("check", "twophase", "--rms", "0", "--json")
    assert r.exit_code == 2
    assert r.stdout == ""
    assert "--rms must be at least 1" in r.stderr


# --- specs and explain --------------------------------------------------------------------------


def test_specs_json() -> None:
    r = invoke("specs", "--json")
    assert r.exit_code == 0
    doc = json.loads(r.stdout)
    assert isinstance(doc, list) and doc
    for s in doc:
        assert set(s) == {"id", "title", "statement", "design", "design_title", "section", "kind",
                          "judged_by", "evidence", "not_judged"}
    ids = [s["id"] for s in doc]
    assert len(ids) == len(set(ids))
    assert {"MEM-VIEW-ORDER", "MEM-VIEW-AGREEMENT", "MEM-VIEW-INTEGRITY", "MEM-VERSION",
            "MEM-MASTER-ONLY"} <= set(ids)
    order = next(s for s in doc if s["id"] == "MEM-VIEW-ORDER")
    assert order["design"] == "002"
    assert order["design_title"] == 'Hazelcast 3.9 "Cluster Service Consistency Improvements"'
    assert order["kind"] == "event monitor"


def test_specs_lists_the_catalogue_in_one_order_whatever_was_imported_first() -> None:
    """The planner's specs, Ignite 3's, membership's, then the partition service's (data first),
    each family in its module's order: in the installed command, and in a process that imported
    the partition service's specs before anything else."""
    families = ["PLAN", "IGN", "MEM", "DATA"]
    orders = []
    for first in ("", "import partsafe.specs.partition; "):
        code = f"{first}from partsafe.checker.cli.main import main; main(['specs', '--json'])"
        proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                              timeout=120, check=False)
        assert proc.returncode == 0, proc.stderr
        ids = [s["id"] for s in json.loads(proc.stdout)]
        assert list(dict.fromkeys(i.split("-")[0] for i in ids))[:4] == families, ids
        orders.append(ids)
    assert orders[0] == orders[1]


def test_specs_table() -> None:
    r = invoke("specs")
    assert r.exit_code == 0
    for spec_id in ("MEM-VIEW-ORDER", "MEM-VIEW-AGREEMENT", "MEM-VIEW-INTEGRITY", "MEM-VERSION",
                    "MEM-MASTER-ONLY"):
        assert spec_id in r.stdout
    assert "quiescence" in r.stdout and "event monitor" in r.stdout


def test_explain() -> None:
    r = invoke("explain", "MEM-VIEW-ORDER")
    assert r.exit_code == 0
    assert "MEM-VIEW-ORDER" in r.stdout and "M1 View Order" in r.stdout
    # the design by its public name: no file outside the repository
    assert 'design 002, Hazelcast 3.9 "Cluster Service Consistency Improvements"' in r.stdout
    assert ".txt" not in r.stdout
    r = invoke("explain", "mem-version", "--json")
    assert r.exit_code == 0
    doc = json.loads(r.stdout)
    assert doc["id"] == "MEM-VERSION"
    assert {"id", "title", "statement", "design", "section", "kind", "rationale", "z3"} <= set(doc)


# --- help ---------------------------------------------------------------------------------------


@pytest.mark.parametrize("command", [[], ["check"], ["zoo"], ["replay"], ["specs"],
                                     ["explain"], ["bench"], ["plan"], ["validate"], ["parse"],
                                     ["export"], ["simulate"], ["checkpoint"], ["profiles"],
                                     ["prove"], ["conform"], ["baseline"],
                                     ["baseline", "update"], ["lab"]],
                         ids=lambda c: " ".join(c) if c else "main")
def test_help(command: list[str]) -> None:
    r = invoke(*command, "--help")
    assert r.exit_code == 0
    assert "Usage:" in r.stdout
    if command:
        assert command[0] in r.stdout


def test_every_subcommand_has_a_help_test() -> None:
    assert set(main.commands) == {"check", "zoo", "replay", "specs", "explain", "bench", "plan",
                                  "validate", "parse", "export", "simulate", "checkpoint",
                                  "profiles", "prove", "conform", "baseline", "lab"}


def test_progress_to_a_log_file_is_plain_lines(monkeypatch: pytest.MonkeyPatch) -> None:
    """A stderr that is not a terminal gets a plain progress line now and then, not a live
    display, and stdout stays the report. (The search reports from its first state here, so
    that a fast machine cannot finish before the first report.)"""
    from partsafe.checker import run

    monkeypatch.setattr(run, "explore", functools.partial(run.explore, progress_interval=0.0))
    r = invoke("check", "shutdown", "--progress")
    assert r.exit_code == 0, r.output
    assert re.search(r"shutdown \(fixed\): [\d,]+ states, [\d,]+/s, depth \d+", r.stderr)
    assert "states" not in r.stdout.splitlines()[0]


# --- verdicts people can believe -------------------------------------------------------------


def test_the_main_job_ends_with_one_verdict_line_that_agrees_with_its_exit_status(
        tmp_path: Path) -> None:
    """`partsafe check`, the README's main job: every model and the planner, whose known
    findings are reported without failing the run, in the report, the exit status and JUnit."""
    out = tmp_path / "check.xml"
    r = invoke("check", "--no-progress", "--junit", str(out))
    assert r.exit_code == 0, r.output
    assert "VIOLATION" not in r.stdout
    last = r.stdout.rstrip("\n").splitlines()[-1]
    assert re.fullmatch(r"verdict: OK, check of 6 models and the planner at their default "
                        r"scopes; known findings of the planner: PLAN-HOTTER-FIRST, "
                        r"PLAN-NO-DECREASE \([\d,.]+ s\)", last), last
    suites = ET.parse(out).getroot().findall("testsuite")
    assert [s.get("name") for s in suites][-1] == "planner[fixed]"
    assert all(s.get("failures") == "0" for s in suites)
    # the membership model's default scope (four members: A, B, C and the joiner D; one crash,
    # one join, one false suspicion) is clean, reaches every coverage goal, and its figures
    # are the explorer's exact ones
    text = " ".join(r.stdout.split())
    block = text[text.index("membership (fixed) at "):text.index("migration (fixed) at ")]
    assert block.startswith("membership (fixed) at members=3 joiners=1 crashes=1 joins=1 "
                            "suspicions=1 "), block[:200]
    assert ": OK 424,404 distinct states" in block and ", depth 36," in block, block[:300]
    goals = re.findall(r"([a-z-]+) │ (yes|GAP) │", block)
    assert {g for g, reached in goals if reached == "yes"} == {
        "join-completes", "claim-completes", "candidate-crashes-mid-claim",
        "publish-races-removal", "master-removes-live-member", "claim-discovers-member",
        "claim-retried"}, goals
    assert "never fired: drop, duplicate, timer-race " in block


def test_a_single_check_ends_with_its_verdict_line() -> None:
    r = invoke("check", "twophase", "--variant", "tm-commit-early", "--no-progress")
    assert r.exit_code == 1
    assert r.stdout.rstrip("\n").splitlines()[-1].startswith(
        "verdict: VIOLATION, check twophase (tm-commit-early) at rms=3; broken: TC-CONSISTENT (")
    r = invoke("check", "twophase", "--max-states", "10", "--no-progress")
    assert r.exit_code == 3
    assert r.stdout.rstrip("\n").splitlines()[-1].startswith(
        "verdict: INCOMPLETE, check twophase (fixed) at rms=3; incomplete: ")


def test_a_violation_headline_is_wrapped_never_cut() -> None:
    """At 80 columns (a terminal's, or a file's) the headline keeps the half that explains."""
    args = ("check", "membership", "--variant", "hz38-stale-master-list", "--suspicions", "0")
    _code, doc = check_json(*args[1:])
    spec, message = doc["violations"][0]["spec"], doc["violations"][0]["message"]
    assert len(message) > 80
    r = invoke(*args, "--no-progress")
    assert r.exit_code == 1
    flat = " ".join(r.stdout.split())
    assert f"{spec}: {' '.join(message.split())}" in flat


def test_trace_out_says_where_the_counterexample_went(tmp_path: Path) -> None:
    out = tmp_path / "ce.json"
    r = invoke("check", "twophase", "--variant", "tm-commit-early", "--trace-out", str(out),
               "--no-progress")
    assert r.exit_code == 1 and out.exists()
    said = " ".join(r.stderr.split())
    assert f"counterexample of TC-CONSISTENT (5 steps) written to {out}" in said
    assert f"partsafe replay {out}" in said
    r = invoke("check", "twophase", "--trace-out", str(out.with_name("none.json")),
               "--no-progress")
    assert r.exit_code == 0 and "no violation, so no counterexample was written" in r.stderr


def test_an_unknown_model_lists_every_model_check_knows() -> None:
    r = invoke("check", "nosuchmodel")
    assert r.exit_code == 2
    assert ("unknown model 'nosuchmodel'; known: membership, migration, shutdown, parallel, "
            "ignite-rebalance, twophase, planner") in r.output


def test_replay_ends_with_its_verdict_line(artifact: Path) -> None:
    r = invoke("replay", str(artifact))
    assert r.exit_code == 1
    assert r.stdout.rstrip("\n").splitlines()[-1].startswith(
        f"verdict: VIOLATION, replay of {artifact} (5 steps); violation reproduced: "
        "TC-CONSISTENT broken again (")


# --- parse ----------------------------------------------------------------------------------------


def test_parse_prints_malformed_lines_as_text(tmp_path: Path) -> None:
    """File names and log text on parse's stderr are data: no markup, no emoji codes, control
    characters as escapes."""
    path = tmp_path / "[bold red]:smile:[link=x]\x1b.log"
    path.write_text("\tMember [10.0.0.1]:5701 - 90b8ae16 :smile: [/] this\n")
    r = CliRunner().invoke(main, ["parse", str(path)], env={"COLUMNS": "400"})
    assert r.exit_code == 0, r.output
    shown = str(path).replace("\x1b", "\\x1b")
    assert f"{shown}:1: malformed: a member line with no `Members` header" in r.stderr
    assert "😄" not in r.stderr and "\x1b" not in r.stderr


def test_every_junit_writer_keeps_the_document_well_formed() -> None:
    """check's, zoo's and the planner's JUnit go through `xml_document`: a message holding
    characters XML forbids still parses, with the characters shown as escapes."""
    from partsafe.checker.report import xml_document

    root = ET.Element("testsuites")
    case = ET.SubElement(ET.SubElement(root, "testsuite", name="m\x00"), "testcase", name="s")
    ET.SubElement(case, "failure", message="host h\x01\x1bb\ud800").text = "step\x08 1"
    parsed = ET.fromstring(xml_document(root).encode())
    failure = parsed.find("testsuite/testcase/failure")
    assert failure is not None
    assert failure.get("message") == "host h\\x01\\x1bb\\ud800"
    assert failure.text == "step\\x08 1"


# --- bench and the package ------------------------------------------------------------------------


def test_bench_prints_each_run_as_it_ends(monkeypatch: pytest.MonkeyPatch) -> None:
    """A long benchmark is never silent on stdout: each run's figures come as it ends, then the
    table, then how long it all took."""
    from partsafe.checker import bench

    tiny = (("twophase rms=2", "twophase", "fixed", {"rms": 2}, False),
            ("twophase rms=2 symmetry", "twophase", "fixed", {"rms": 2}, True))
    real = bench.run_suite
    monkeypatch.setattr(bench, "run_suite", lambda **kw: real(**kw, suite=tiny))
    r = invoke("bench")
    assert r.exit_code == 0, r.output
    lines = r.stdout.splitlines()
    assert re.fullmatch(r"bench 1/2: twophase rms=2: [\d,]+ states in [\d.]+ s "
                        r"\([\d,]+/s, \d+ MB\)", lines[0]), lines[0]
    assert lines[1].startswith("bench 2/2: twophase rms=2 symmetry: ")
    assert re.fullmatch(r"bench: 2 runs in [\d,]+ s", lines[-1])
    help_text = " ".join(invoke("bench", "--help").stdout.split())
    assert "about 4 minutes on a 2-core machine" in help_text


def test_hypothesis_is_a_test_dependency_only() -> None:
    """The tests use hypothesis; partsafe itself does not, so an install without the test extra
    does not carry it."""
    import tomllib

    root = Path(__file__).resolve().parents[2]
    project = tomllib.loads((root / "pyproject.toml").read_text())["project"]
    assert not any(d.startswith("hypothesis") for d in project["dependencies"])
    assert any(d.startswith("hypothesis") for d in project["optional-dependencies"]["test"])
    for folder in ("checker", "models", "refimpl", "specs", "traces"):
        for module in (root / folder).rglob("*.py"):
            assert "import hypothesis" not in module.read_text(), module
            assert "from hypothesis" not in module.read_text(), module

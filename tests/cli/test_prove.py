"""`partsafe prove`: exit statuses, the JSON document, JUnit, the counterexample artifact that
`partsafe replay` takes, bad input, and `partsafe explain`'s Z3 form."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from pathlib import Path

from click.testing import CliRunner, Result

from partsafe.checker.cli.main import main


def invoke(*args: str) -> Result:
    return CliRunner().invoke(main, list(args), catch_exceptions=False)


def test_a_proof_for_any_size_exits_0_and_says_so() -> None:
    r = invoke("prove", "membership", "--spec", "MEM-VIEW-INTEGRITY", "--depth", "2", "--json")
    assert r.exit_code == 0, r.output
    doc = json.loads(r.stdout)
    assert doc["result"] == "ok"
    [model] = doc["models"]
    [spec] = model["specs"]
    assert (spec["spec"], spec["verdict"], spec["size"], spec["depth"]) == \
        ("MEM-VIEW-INTEGRITY", "proved", "any", 2)
    assert spec["lemmas"] == ["dormant"]
    assert spec["proof"]["verdict"] == "proved"
    assert spec["proof"]["method"] == "induction"


def test_a_counterexample_exits_1_and_replays(tmp_path: Path) -> None:
    artifact = tmp_path / "cx.json"
    junit = tmp_path / "prove.xml"
    r = invoke("prove", "membership", "--variant", "hz38-unordered-members", "--spec",
               "MEM-VIEW-ORDER", "--depth", "3", "--trace-out", str(artifact),
               "--junit", str(junit))
    assert r.exit_code == 1, r.output
    assert r.stdout.strip().splitlines()[-1].startswith("verdict: VIOLATION")
    assert "3 steps" in r.stdout
    replayed = invoke("replay", str(artifact), "--json")
    assert replayed.exit_code == 1
    assert json.loads(replayed.stdout)["spec"] == "MEM-VIEW-ORDER"
    suite = ET.parse(junit).getroot().find("testsuite")
    assert suite is not None and suite.get("failures") == "1"


def test_a_run_the_reference_cannot_take_is_replaced_by_one_it_can(tmp_path: Path) -> None:
    """hz40-global-order-parallel's shortest run skips a publication, which the explorer's
    scope spends no loss on; --trace-out saves the shortest run through the steps the reference
    takes (the commit race) and says so."""
    artifact = tmp_path / "cx.json"
    r = invoke("prove", "parallel", "--variant", "hz40-global-order-parallel", "--spec",
               "PT-MASTER-ONLY", "--trace-out", str(artifact))
    assert r.exit_code == 1, r.output
    doc = json.loads(artifact.read_text())
    assert "the steps it takes" in doc["note"]
    replayed = invoke("replay", str(artifact), "--json")
    assert replayed.exit_code == 1
    assert json.loads(replayed.stdout)["spec"] == "PT-MASTER-ONLY"


def test_bounded_only_when_no_proof_is_asked() -> None:
    r = invoke("prove", "membership", "--spec", "MEM-VIEW-ORDER", "--depth", "2", "--no-proof",
               "--json")
    assert r.exit_code == 0
    [spec] = json.loads(r.stdout)["models"][0]["specs"]
    assert spec["verdict"] == "bounded" and spec["size"] == {"Member": 4}


def test_the_planner_through_its_oracle() -> None:
    r = invoke("prove", "planner", "--variant", "hz37-naive-order", "--json")
    assert r.exit_code == 1
    specs = {s["spec"]: s for s in json.loads(r.stdout)["models"][0]["specs"]}
    broken = specs["PLAN-NO-DECREASE"]
    assert broken["verdict"] == "counterexample" and not broken["known_finding"]
    assert broken["trace"][1]["state"]["safe_plan_exists"] is True
    fixed = invoke("prove", "planner", "--json")
    assert fixed.exit_code == 0  # the faithful planner's findings are known ones


def test_bad_input_exits_2_with_a_message() -> None:
    r = CliRunner().invoke(main, ["prove", "nosuchmodel"])
    assert r.exit_code == 2 and "no symbolic model 'nosuchmodel'" in r.output
    r = CliRunner().invoke(main, ["prove", "membership", "--variant", "hz37-independent-commit"])
    assert r.exit_code == 2 and "no symbolic form of variant" in r.output
    r = CliRunner().invoke(main, ["prove", "membership", "--spec", "PT-VERSION"])
    assert r.exit_code == 2 and "no symbolic form of PT-VERSION" in r.output
    r = CliRunner().invoke(main, ["prove", "membership", "--k", "0"])
    assert r.exit_code == 2 and "--k" in r.output
    r = CliRunner().invoke(main, ["prove", "membership", "--budget", "suspicions"])
    assert r.exit_code == 2 and "expected NAME=N" in r.output
    r = CliRunner().invoke(main, ["prove", "membership", "--budget", "losses=1"])
    assert r.exit_code == 2 and "no fault budget 'losses'" in r.output


def test_one_query_and_budgets_reach_bounded_model_checking() -> None:
    """One query for a run of at most --depth steps finds the unordered-members flaw (at most
    3 steps); with no false suspicion to spend, no run of 3 steps breaks it."""
    args = ["prove", "membership", "--variant", "hz38-unordered-members", "--spec",
            "MEM-VIEW-ORDER", "--depth", "3", "--one-query", "--json"]
    found = json.loads(invoke(*args).stdout)["models"][0]["specs"][0]
    assert found["verdict"] == "counterexample" and len(found["trace"]) - 1 <= 3
    r = invoke(*args, "--budget", "suspicions=0", "--no-proof")
    doc = json.loads(r.stdout)
    assert r.exit_code == 0 and doc["models"][0]["specs"][0]["verdict"] == "bounded"
    assert doc["models"][0]["budgets"]["suspicions"] == 0


def test_explain_shows_the_z3_form_and_its_lemmas() -> None:
    doc = json.loads(invoke("explain", "MEM-VERSION", "--json").stdout)
    [form] = doc["z3"]
    assert form["model"] == "membership" and form["kind"] == "state"
    assert "pubver" in form["formula"]
    assert {lemma["name"] for lemma in form["lemmas"]} >= {"versions-grow-with-positions"}
    assert all(lemma["design"].startswith("002 ") for lemma in form["lemmas"])
    text = invoke("explain", "MIG-ATOMIC").stdout
    assert "Z3 form (models/migration.py" in text

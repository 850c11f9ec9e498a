"""Event files: every flaw of the bug zoo round-trips through one, random walks of every fixed
design validate clean, and the format's header, versions and JSON Schema hold."""

from __future__ import annotations

import dataclasses
import itertools
import json
import random
from pathlib import Path
from typing import Any

import jsonschema
import pytest
from click.testing import CliRunner

from partsafe.checker import artifact
from partsafe.checker.cli.main import main
from partsafe.checker.engine.bfs import Bounds
from partsafe.checker.engine.conform import conform
from partsafe.checker.protocols import catalog
from partsafe.checker.protocols.event_trace import EventTrace, read_events
from partsafe.checker.report import artifact as artifact_doc
from partsafe.checker.run import run_check
from partsafe.checker.validation.local import validate
from partsafe.checker.validation.simulate.walk import Walk
from partsafe.traces import events as ev

SCHEMA = json.loads((Path(ev.__file__).parent / ev.SCHEMA_FILE).read_text())

#: every zoo entry of the catalogue's models: (model, variant, spec, scope overrides)
ZOO = [(e.name, v, spec, overrides) for e in catalog.MODELS.values()
       for v, (spec, overrides) in e.zoo.items()]


def _lines(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def _export(doc: dict[str, Any], path: Path) -> None:
    found, specs, config = artifact.exported(doc, str(path))
    artifact.write_events(found, str(path), specs, config)


@pytest.mark.parametrize(("model", "variant", "spec", "overrides"), ZOO,
                         ids=[f"{m}:{v}" for m, v, _, _ in ZOO])
def test_every_zoo_counterexample_exported_as_events_breaks_its_spec(
        tmp_path: Path, model: str, variant: str, spec: str, overrides: dict[str, int]) -> None:
    """The zoo's search (past other specs, until the flaw's spec breaks), its counterexample as
    an event file (`partsafe export --events`), validated: the same spec is broken, the file
    conforms to the JSON Schema, and every event is judged (nothing malformed); and conformance
    (`partsafe conform`) finds it a run of its variant and of no run of the fixed design."""
    run = run_check(catalog.get(model), variant, overrides, bounds=Bounds(), symmetry=True,
                    keep_going=True, until=spec)
    doc = json.loads(json.dumps(artifact_doc(run.model, run.result, run.params, spec)))
    assert doc["spec"] == spec
    path = tmp_path / "ce.jsonl"
    _export(doc, path)
    validator = jsonschema.Draft202012Validator(SCHEMA)
    for line in _lines(path):
        validator.validate(line)
    report = validate([str(path)])
    assert report.result == "violation"
    assert spec in {v.spec for v in report.violations}, [v.message for v in report.violations]
    assert report.accounting.malformed == []
    hit = next(v for v in report.violations if v.spec == spec)
    assert hit.sources and hit.sources[-1].file == str(path)  # located at its line
    # the event file is a run of its own variant, and of no run of the fixed design, whatever
    # steps no event shows (as many in a row as the counterexample has)
    found = read_events(str(path))
    hidden = max((len(list(g)) for silent, g in itertools.groupby(
        not step["events"] for step in doc["steps"]) if silent), default=0)
    for design, verdict in ((variant, "conforms"), ("fixed", "does-not-conform")):
        m = catalog.get(model).make(design, doc["params"], doc.get("profile", "fixed"))
        assert conform(EventTrace(m, found, str(path)), max_hidden=hidden).verdict == verdict


def test_the_planner_flaw_round_trips_through_an_event_file(tmp_path: Path) -> None:
    """The one zoo flaw without a model search (the planner's hz37-naive-order): its witness
    pair's plan, as the master's planner events (`partsafe plan --events`), breaks
    PLAN-NO-DECREASE; the faithful planner's plan of the pair holds every spec."""
    from partsafe.checker.planner.check import witness

    found = witness("PLAN-NO-DECREASE", "hz37-naive-order", 4)
    assert found is not None
    current, target, _ = found
    pair = [",".join("-" if r is None else r for r in a) for a in (current, target)]
    validator = jsonschema.Draft202012Validator(SCHEMA)
    for variant, specs in (("hz37-naive-order", {"PLAN-NO-DECREASE", "PLAN-HOTTER-FIRST",
                                                 "PLAN-PRIORITY"}), ("fixed", set())):
        path = tmp_path / f"{variant}.jsonl"
        result = CliRunner().invoke(main, ["plan", *pair, "--variant", variant,
                                           "--events", str(path)])
        assert result.exit_code == 0, result.output
        for line in _lines(path):
            validator.validate(line)
        report = validate([str(path)])
        assert {v.spec for v in report.violations} == specs
        assert report.accounting.malformed == []


#: the fixed designs walked, each with a few seeds (the walks end where their budgets do)
WALKS = [(name, seed) for name in catalog.MODELS for seed in (1, 2, 3)]


@pytest.mark.parametrize(("model", "seed"), WALKS, ids=[f"{m}:{s}" for m, s in WALKS])
def test_random_walks_of_every_fixed_design_validate_clean(tmp_path: Path, model: str,
                                                          seed: int) -> None:
    walk = Walk(model, {}, random.Random(seed), 300, strict=False)
    found: list[ev.Event] = []
    state = None
    for step, events, _before, after in walk:
        found.extend(dataclasses.replace(e, order=step) for e in events)
        state = after
    m = walk.model
    if m.quiescent(state, m.successors(state)):
        found.append(ev.Quiescent(member=ev.UNKNOWN_MEMBER, order=len(found)))
    path = tmp_path / "walk.jsonl"
    artifact.write_events(found, str(path), artifact.model_specs(m), artifact.model_config(m))
    report = validate([str(path)])
    assert report.result == "ok", [(v.spec, v.message) for v in report.violations]
    assert report.accounting.events == len(found)


def test_a_quiescence_check_is_judged_only_where_the_file_says_the_run_is_quiescent(
        tmp_path: Path) -> None:
    """hz38-stale-master-list breaks MEM-VIEW-AGREEMENT at quiescence: its export ends with a
    `quiescent` record, and without that record (a run that merely stops) it is not judged."""
    run = run_check(catalog.get("membership"), "hz38-stale-master-list", {"suspicions": 0},
                    bounds=Bounds(), symmetry=True, keep_going=True, until="MEM-VIEW-AGREEMENT")
    doc = json.loads(json.dumps(artifact_doc(run.model, run.result, run.params,
                                             "MEM-VIEW-AGREEMENT")))
    path = tmp_path / "ce.jsonl"
    _export(doc, path)
    lines = path.read_text().splitlines()
    assert json.loads(lines[-1])["type"] == "quiescent"
    hit = [v for v in validate([str(path)]).violations if v.spec == "MEM-VIEW-AGREEMENT"]
    assert hit and hit[0].message.startswith("at quiescence: ")
    path.write_text("\n".join(lines[:-1]) + "\n")
    assert "MEM-VIEW-AGREEMENT" not in {v.spec for v in validate([str(path)]).violations}


def test_an_event_file_without_a_header_is_judged_by_every_spec_with_a_monitor(
        tmp_path: Path) -> None:
    path = tmp_path / "e.jsonl"
    path.write_text(ev.dumps(ev.MemberListInstalled(member="A", version=1, members=("B",),
                                                    master="B")) + "\n")
    report = validate([str(path)])
    assert "TC-CONSISTENT" in report.judgeable and "IGN-ONE-LEADER" in report.judgeable
    # judged where the file holds evidence: a member list judges the membership specs alone
    assert "MEM-VIEW-INTEGRITY" in report.specs and "IGN-ONE-LEADER" not in report.specs
    assert report.evidence["MEM-VIEW-INTEGRITY"] == 1 and report.evidence["TC-CONSISTENT"] == 0
    assert [v.spec for v in report.violations] == ["MEM-VIEW-INTEGRITY"]
    assert report.violations[0].sources == (ev.Source(str(path), 1),)
    # what no event file judges, and the rest for want of evidence
    assert {s for s, why in report.not_judged.items()
            if not why.startswith("No evidence in this run")} == {"IGN-FINITE"}


@pytest.mark.parametrize(("header", "says"), [
    ({"format": "partsafe-events", "version": 9}, "version 9 is not one this partsafe reads (1)"),
    ({"format": "other-events", "version": 1}, "format 'other-events' is not 'partsafe-events'"),
    ({"format": "partsafe-events", "version": 1, "config": {"backup": 1}},
     "unknown setting 'backup'"),
    ({"format": "partsafe-events", "version": 1, "config": {"backups": "1"}},
     "'backups' must be an integer"),
    ({"format": "partsafe-events", "version": 1, "specs": ["MEM-NOPE"]},
     "declares unknown spec(s) MEM-NOPE"),
    ({"format": "partsafe-events", "version": 1, "colour": "red"}, "unknown field(s) colour"),
])
def test_a_header_this_partsafe_cannot_read_is_bad_input(
        tmp_path: Path, header: dict[str, Any], says: str) -> None:
    path = tmp_path / "e.jsonl"
    path.write_text(json.dumps(header) + "\n" + ev.dumps(ev.MemberStarted(member="A")) + "\n")
    result = CliRunner().invoke(main, ["validate", str(path)])
    assert result.exit_code == 2, result.output
    assert says in result.output and f"{path}:1" in result.output
    assert "Traceback" not in result.output


def test_event_files_of_one_cluster_must_agree_on_its_settings(tmp_path: Path) -> None:
    for name, backups in (("a.jsonl", 1), ("b.jsonl", 2)):
        (tmp_path / name).write_text(
            json.dumps(ev.header(config={"backups": backups})) + "\n"
            + ev.dumps(ev.MemberStarted(member="A")) + "\n")
    result = CliRunner().invoke(main, ["validate", str(tmp_path)])
    assert result.exit_code == 2 and "sets backups=2" in result.output, result.output


def test_the_settings_build_the_monitors(tmp_path: Path) -> None:
    """PAR-MAX-PARALLEL with the header's max_parallel: three migrations in flight at one
    member break it at 2, not at 3."""
    started = [ev.MigrationStarted(member="A", role="master", migration=f"m{i}", partition=i,
                                   source_member="A", destination="B", source_current_index=0,
                                   source_endpoint="A", planned_version=1, partition_version=1)
               for i in range(3)]
    for most, broken in ((2, True), (3, False)):
        path = tmp_path / f"e{most}.jsonl"
        with path.open("w") as out:
            ev.write_jsonl([ev.Repartitioning(member="A", planned=3), *started], out,
                           with_header=True, specs=["PAR-MAX-PARALLEL"],
                           config={"max_parallel": most})
        found = {v.spec for v in validate([str(path)]).violations}
        assert ("PAR-MAX-PARALLEL" in found) is broken


def test_the_schema_file_is_the_one_the_event_classes_give() -> None:
    """events.schema.json is generated from the classes (`events.schema`); a change of an event
    type must come with it (and, if readers of the old shape break, a new version)."""
    assert ev.schema() == SCHEMA
    titles = {v["title"] for v in SCHEMA["oneOf"]}
    assert titles == {"header", *ev.EVENT_TYPES}


# --- what is judged where ---------------------------------------------------------------------


def test_specs_json_says_where_each_spec_is_judged_and_why_not() -> None:
    result = CliRunner().invoke(main, ["specs", "--json"])
    assert result.exit_code == 0
    doc = json.loads(result.stdout)
    forms = ("explore", "prove", "events", "hazelcast-log", "ignite-log")
    judged = {f: [s["id"] for s in doc if f in s["judged_by"]] for f in forms}
    assert len(judged["events"]) >= 30
    for s in doc:
        assert set(s["judged_by"]) | set(s["not_judged"]) == set(forms), s["id"]
        assert not set(s["judged_by"]) & set(s["not_judged"])
        assert all(reason.endswith(".") for reason in s["not_judged"].values()), s["id"]
        for form, shown in s["evidence"].items():
            assert form in s["judged_by"] and shown
            assert all(set(e) == {"level", "logger", "message"} for e in shown)


def test_the_validation_docs_hold_the_table_specs_gives() -> None:
    """docs/validation.md, "What is judged where", is `checker.forms.markdown_table()`: after a
    change of the catalogue, paste the function's output between the markers."""
    from partsafe.checker.forms import markdown_table

    text = (Path(__file__).parents[2] / "docs" / "validation.md").read_text()
    start = text.index("<!-- judged-table:start -->\n") + len("<!-- judged-table:start -->\n")
    end = text.index("<!-- judged-table:end -->")
    assert text[start:end].strip() == markdown_table().strip()


def test_the_command_line_gives_the_settings_a_log_does_not_print(tmp_path: Path) -> None:
    """`--config max_parallel=2`: three migrations in flight at one member break
    PAR-MAX-PARALLEL; a header that says otherwise is bad input; a bad setting is named."""
    started = [ev.MigrationStarted(member="A", role="master", migration=f"m{i}", partition=i,
                                   source_member="A", destination="B", source_current_index=0,
                                   source_endpoint="A", planned_version=1, partition_version=1)
               for i in range(3)]
    path = tmp_path / "e.jsonl"
    with path.open("w") as out:
        ev.write_jsonl([ev.Repartitioning(member="A", planned=3), *started], out)
    runner = CliRunner()
    for given, broken in ((["--config", "max_parallel=2"], True), ([], False)):
        result = runner.invoke(main, ["validate", str(path), "--json", *given])
        found = {v["spec"] for v in json.loads(result.stdout)["violations"]}
        assert ("PAR-MAX-PARALLEL" in found) is broken, result.stdout
    with path.open("w") as out:
        ev.write_jsonl(started, out, with_header=True, config={"max_parallel": 3})
    result = runner.invoke(main, ["validate", str(path), "--config", "max_parallel=2"])
    assert result.exit_code == 2 and "--config sets max_parallel=2" in result.output
    for bad, says in (("max_parallel", "give KEY=VALUE"), ("backups=two", "a whole number"),
                      ("serial=yes", "true or false"), ("colour=red", "KEY one of backups")):
        result = runner.invoke(main, ["validate", str(path), "--config", bad])
        assert result.exit_code == 2 and says in result.output, result.output


def test_explain_says_where_a_spec_is_judged() -> None:
    result = CliRunner().invoke(main, ["explain", "MEM-VERSION", "--json"])
    doc = json.loads(result.stdout)
    assert {"explore", "prove", "events", "hazelcast-log"} <= set(doc["judged_by"])
    assert "ignite-log" in doc["not_judged"]
    text = CliRunner().invoke(main, ["explain", "MEM-VERSION"]).output
    assert "judged by: explore, prove, events, hazelcast-log" in text
    assert "not by ignite-log: " in text

"""Conformance (checker/engine/conform.py) on the TwoPhase traces of Cirstea et al. 2024: the
paper's verdicts on every file, the diagnosis of the buggy ones, and the trace format's errors."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from partsafe.checker.cli.main import main
from partsafe.checker.engine.conform import conform
from partsafe.checker.protocols.twophase import TwoPhase
from partsafe.checker.protocols.twophase_trace import TwoPhaseTrace
from partsafe.traces.tla_ndjson import TraceFormatError, Update, apply, read_config, read_trace

DATA = Path(__file__).parents[1] / "data" / "twophase"
LEVELS = ("VEA", "V", "VpEA", "EA", "E")


def _mapping(trace: str, rms: int, variant: str = "fixed") -> TwoPhaseTrace:
    config = read_config(DATA / f"conf.{rms}RM.ndjson")
    return TwoPhaseTrace(TwoPhase(rms, variant), read_trace(DATA / trace), config["RM"])


@pytest.mark.parametrize("rms", [4, 8])
@pytest.mark.parametrize("level", LEVELS)
def test_every_accepted_trace_conforms_with_one_state_a_record(rms: int, level: str) -> None:
    """TLC accepts these; the search matches each record at its first try (the steps a record
    names, then the spec's stuttering ones; for a record that names none, the steps that change
    fewest unlogged variables first)."""
    r = conform(_mapping(f"trace.ndjson.{rms}RM.{level}", rms))
    assert r.verdict == "conforms"
    records = 4 * rms + 2
    assert (r.records, r.states, len(r.run)) == (records, records, records)
    assert r.run[0][0] == f"{DATA / f'trace.ndjson.{rms}RM.{level}'}:1"


@pytest.mark.parametrize("level", ["VEA", "EA"])
def test_the_buggy_trace_leaves_the_design_at_its_early_commit(level: str) -> None:
    """Line 8 is a TMCommit while rm-3 has not prepared: the diagnosis names it, the state
    after line 7, what was enabled there, and the guard that fails."""
    r = conform(_mapping(f"trace.ndjson.BUG-4RM.{level}", 4))
    assert r.verdict == "does-not-conform"
    d = r.diagnosis
    assert d is not None
    assert d.unmatched.endswith(f"BUG-4RM.{level}:8") and d.last_matched is not None
    assert d.last_matched.endswith(f"BUG-4RM.{level}:7") and d.matched == 7
    trace = str(DATA / f"trace.ndjson.BUG-4RM.{level}")
    assert (d.unmatched_at, d.last_matched_at) == ((trace, 8), (trace, 7))
    assert d.state["tmPrepared"] == '{"rm-0", "rm-1", "rm-2"}'
    assert d.state["tmState"] == '"init"'
    assert d.enabled == ["TMAbort", "RMPrepare(rm-3)", "RMChooseToAbort(rm-3)"]
    assert d.reasons == ['TMCommit is not enabled: it requires tmState = "init" /\\ tmPrepared '
                         '= RM, and tmPrepared is {"rm-0", "rm-1", "rm-2"}: rm-3 has not '
                         'prepared']


def test_the_buggy_trace_fits_the_variant_that_commits_early() -> None:
    r = conform(_mapping("trace.ndjson.BUG-4RM.VEA", 4, "tm-commit-early"))
    assert r.verdict == "conforms"


def test_a_search_bound_leaves_the_answer_undecided() -> None:
    r = conform(_mapping("trace.ndjson.BUG-4RM.EA", 4), max_states=3)
    assert r.verdict == "undecided" and r.states == 3
    assert r.incomplete_reason == "3 states searched (--max-states)"


def test_a_record_with_updates_that_change_nothing_is_a_stuttering_step(tmp_path: Path) -> None:
    """The trace spec's IsStuttering: a record without an event whose updates leave every
    variable as it is (the benchmark's 16-RM runs begin with one), and not otherwise."""
    init = '{"tmState": [{"op": "Update", "path": [], "args": ["init"]}]}'
    prepare = '{"event": "RMPrepare", "event_args": ["rm-0"]}'
    done = '{"tmState": [{"op": "Update", "path": [], "args": ["done"]}]}'
    for lines, verdict in (([init, prepare], "conforms"), ([done], "conforms"),
                           (['{"event": "Stuttering"}', prepare], "conforms"),
                           (['{"event": "Stuttering", ' + done[1:], prepare],
                            "does-not-conform")):
        trace = tmp_path / "t.ndjson"
        trace.write_text("\n".join(lines))
        mapping = TwoPhaseTrace(TwoPhase(2), read_trace(trace), ["rm-0", "rm-1"])
        assert conform(mapping).verdict == verdict, lines


def test_the_memo_searches_a_state_once_per_record(tmp_path: Path) -> None:
    """Eight anonymous prepares, then an abort no step allows: without the memo the search
    would try each of the 8! orders of the prepares; with it, and the RMs no later record names
    folded together, it searches at most two states a record (rm-0, which the last record
    names, prepared or not)."""
    trace = [{"event": "RMPrepare"}] * 8 + [{"event": "RMRcvAbortMsg", "event_args": ["rm-0"]}]
    path = tmp_path / "t.ndjson"
    path.write_text("\n".join(json.dumps(t) for t in trace))
    config = read_config(DATA / "conf.8RM.ndjson")
    r = conform(TwoPhaseTrace(TwoPhase(8), read_trace(path), config["RM"]))
    assert r.verdict == "does-not-conform"
    assert r.states == 1 + 2 * 7 + 1
    assert r.diagnosis is not None and r.diagnosis.reasons == [
        'RMRcvAbortMsg(rm-0) is not enabled: it requires [type |-> "Abort"] \\in msgs, and '
        'msgs has no [type |-> "Abort"]']


def test_updates_apply_as_the_trace_operators_do() -> None:
    rm_state = (("rm-0", "working"), ("rm-1", "working"))
    assert apply(rm_state, [Update("Update", ("rm-1",), ("prepared",))]) == (
        ("rm-0", "working"), ("rm-1", "prepared"))
    assert apply(frozenset({"a"}), [Update("AddElement", (), ("b",)),
                                    Update("RemoveElement", (), ("a",))]) == frozenset({"b"})
    assert apply(frozenset({"a"}), [Update("Clear", (), ())]) == frozenset()
    assert apply(frozenset(), [Update("AddElements", (), (("x", "y"),))]) == {"x", "y"}
    with pytest.raises(KeyError):
        apply(rm_state, [Update("Update", ("rm-9",), ("prepared",))])


@pytest.mark.parametrize(("text", "message"), [
    ("not json", "t.ndjson:2: not JSON"),
    ("[1]", "t.ndjson:2: a record is a JSON object"),
    ('{"event": 3}', 't.ndjson:2: "event" is not a string'),
    ('{"msgs": [{"op": "Frob", "path": [], "args": []}]}', "t.ndjson:2: update op 'Frob'"),
    ('{"msgs": 1}', "t.ndjson:2: variable 'msgs' holds no list of updates"),
])
def test_a_malformed_record_names_its_line(tmp_path: Path, text: str, message: str) -> None:
    path = tmp_path / "t.ndjson"
    path.write_text('{"event": "TMAbort"}\n' + text)
    with pytest.raises(TraceFormatError, match=message.replace("(", r"\(")):
        read_trace(path)


@pytest.mark.parametrize(("text", "message"), [
    ('{"event": "TMFrob"}', "t.ndjson:1: event 'TMFrob' is no action of TwoPhase"),
    ('{"rmStat": []}', "t.ndjson:1: 'rmStat' is no variable of TwoPhase"),
    ('{"event": "RMPrepare", "event_args": ["rm-7"]}',
     "t.ndjson:1: RMPrepare takes an RM of rm-0, rm-1; the record gives"),
    ('{"event": "TMCommit", "event_args": ["rm-0"]}', "t.ndjson:1: TMCommit takes no argument"),
])
def test_a_record_the_mapping_cannot_read_names_its_line(tmp_path: Path, text: str,
                                                          message: str) -> None:
    path = tmp_path / "t.ndjson"
    path.write_text(text)
    with pytest.raises(TraceFormatError, match=message):
        TwoPhaseTrace(TwoPhase(2), read_trace(path), ["rm-0", "rm-1"])


def _cli(*args: str) -> tuple[int, str]:
    r = CliRunner().invoke(main, ["conform", *args])
    return r.exit_code, r.output


def test_the_command_gives_verdicts_exits_and_json() -> None:
    conf = str(DATA / "conf.4RM.ndjson")
    code, out = _cli("twophase", str(DATA / "trace.ndjson.4RM.E"), "--config", conf)
    assert code == 0 and out.splitlines()[-1].startswith(
        "verdict: OK, conform twophase (fixed) ")
    code, out = _cli("twophase", str(DATA / "trace.ndjson.BUG-4RM.VEA"), "--config", conf)
    assert code == 1 and "rm-3 has not prepared" in out
    assert out.splitlines()[-1].startswith("verdict: VIOLATION, conform twophase (fixed) ")
    code, out = _cli("twophase", str(DATA / "trace.ndjson.BUG-4RM.VEA"), "--config", conf,
                     "--variant", "all", "--json")
    doc = json.loads(out)
    assert code == 0 and doc["fits"] == ["tm-commit-early"]
    assert doc["variants"]["fixed"]["diagnosis"]["unmatched"].endswith(":8")
    code, out = _cli("twophase", str(DATA / "trace.ndjson.BUG-4RM.EA"), "--config", conf,
                     "--max-states", "2")
    assert code == 3 and "verdict: INCOMPLETE" in out.splitlines()[-1]


@pytest.mark.parametrize(("args", "message"), [
    (["frob", "x.log"], "unknown model 'frob'; models: membership"),
    (["twophase", "x.jsonl"], "x.jsonl: cannot be read"),
    (["twophase", "nope.ndjson", "--config", str(DATA / "conf.4RM.ndjson")],
     "nope.ndjson: cannot be read"),
    (["twophase", str(DATA / "trace.ndjson.4RM.E"), "--config", str(DATA / "conf.4RM.ndjson"),
      "--variant", "tm-frob"], "unknown twophase variant 'tm-frob'"),
])
def test_bad_input_is_named_and_exits_2(args: list[str], message: str) -> None:
    code, out = _cli(*args)
    assert code == 2 and message in out


def test_a_conforming_run_is_written_and_replays(tmp_path: Path) -> None:
    """`conform --trace-out`: the matched run, each model step with the record it matched (the
    stuttering records have no step), re-executed by `partsafe replay`."""
    conf = str(DATA / "conf.4RM.ndjson")
    out = tmp_path / "run.json"
    code, _ = _cli("twophase", str(DATA / "trace.ndjson.4RM.V"), "--config", conf,
                   "--trace-out", str(out))
    assert code == 0
    doc = json.loads(out.read_text())
    assert (doc["partsafe"], doc["params"], len(doc["steps"])) == ("run", {"rms": 4}, 13)
    assert doc["steps"][1]["record"].endswith("trace.ndjson.4RM.V:2")
    assert doc["steps"][1]["action"] == "TMRcvPrepared(rm0)"
    r = CliRunner().invoke(main, ["replay", str(out)])
    assert r.exit_code == 0, r.output
    assert r.output.splitlines()[-1].startswith(
        f"verdict: OK, replay of {out} (13 steps); the run replays step by step")
    doc["steps"][4]["action_id"] = doc["steps"][3]["action_id"]  # a step the model refuses
    out.write_text(json.dumps(doc))
    r = CliRunner().invoke(main, ["replay", str(out)])
    assert r.exit_code == 2 and "step 5" in r.output and "is not enabled" in r.output


def test_an_exported_counterexample_fits_its_variant_and_not_the_fixed_design(
        tmp_path: Path) -> None:
    """Any model against an event file (`partsafe export --events`): the steps' own events are
    the mapping (checker/protocols/event_trace.py)."""
    ce, events = tmp_path / "ce.json", tmp_path / "ce.jsonl"
    r = CliRunner().invoke(main, ["check", "membership", "--variant", "hz38-stale-master-list",
                                  "--suspicions", "0", "--trace-out", str(ce), "--no-progress"])
    assert r.exit_code == 1, r.output
    assert CliRunner().invoke(main, ["export", str(ce), "--events", str(events)]).exit_code == 0
    code, out = _cli("membership", str(events), "--suspicions", "0", "--variant", "all",
                     "--json")
    assert code == 0 and json.loads(out)["fits"] == ["hz38-stale-master-list"]
    code, out = _cli("membership", str(events), "--suspicions", "0")
    assert code == 1
    assert f"no step of the design matches {events}:14" in " ".join(out.split())
    assert ("deliver ClaimResponse accepted v=4 [A,B,C,D] C→B shows the next 1 record(s), "
            'then {"member": "B", "target": "D", "type": "mastership_claim_sent"}') in \
        " ".join(out.split())
    code, out = _cli("membership", str(events), "--suspicions", "0", "--max-hidden", "0")
    assert code == 1  # the run has a step no event shows: with none allowed it cannot match
    code, out = _cli("membership", str(events), "--suspicions", "0", "--joins", "0", "--variant",
                     "hz38-stale-master-list")
    assert code == 1  # at a scope without the join the run needs
    code, out = _cli("membership", str(events), "--rms", "3")
    assert code == 2 and "--rms does not apply to model membership" in out
    code, out = _cli("membership", str(events), "--config", str(DATA / "conf.4RM.ndjson"))
    assert code == 2 and "only twophase reads" in out


def test_a_malformed_event_file_is_named_by_line(tmp_path: Path) -> None:
    path = tmp_path / "bad.jsonl"
    path.write_text('{"type": "member_started", "member": "A"}\n{"type": "frob"}\n')
    code, out = _cli("membership", str(path))
    assert code == 2 and f"{path}:2" in " ".join(out.split())
    path.write_text("\n")  # no event, so no event file: logs holding nothing to judge
    code, out = _cli("membership", str(path))
    assert code == 3 and "hold no record the membership model maps" in " ".join(out.split())


def test_the_junit_report_has_a_case_per_design(tmp_path: Path) -> None:
    """One design: its case fails where the trace does not conform, with the diagnosis; with
    --variant all only a trace no design fits fails (here tm-commit-early fits); undecided is
    an error."""
    import xml.etree.ElementTree as ET

    conf, bug = str(DATA / "conf.4RM.ndjson"), str(DATA / "trace.ndjson.BUG-4RM.VEA")
    out = tmp_path / "c.xml"
    code, _ = _cli("twophase", bug, "--config", conf, "--junit", str(out))
    suite = ET.parse(out).getroot().find("testsuite")
    assert code == 1 and suite is not None and suite.get("failures") == "1"
    failure = suite.find("testcase/failure")
    assert failure is not None and failure.text is not None
    assert "rm-3 has not prepared" in failure.text
    code, _ = _cli("twophase", bug, "--config", conf, "--variant", "all", "--junit", str(out))
    suite = ET.parse(out).getroot().find("testsuite")
    assert code == 0 and suite is not None
    assert [c.get("name") for c in suite.iter("testcase")] == ["fixed", "tm-commit-early"]
    assert suite.get("failures") == "0"
    code, _ = _cli("twophase", bug, "--config", conf, "--max-states", "2", "--junit", str(out))
    suite = ET.parse(out).getroot().find("testsuite")
    assert code == 3 and suite is not None and suite.get("errors") == "1"


def test_an_exported_run_is_matched_at_the_scope_it_was_found_at(tmp_path: Path) -> None:
    """A counterexample found at a scope other than the default (an in-flight publish, no
    suspicion) fits its own variant with no scope option: the event file's header carries the
    run's model, variant and scope (`partsafe export --events`), and the options override it."""
    ce, events = tmp_path / "ce.json", tmp_path / "ce.jsonl"
    r = CliRunner().invoke(main, ["check", "membership", "--variant", "hz38-unordered-members",
                                  "--publishes", "1", "--suspicions", "0", "--trace-out",
                                  str(ce), "--no-progress"])
    assert r.exit_code == 1, r.output
    assert CliRunner().invoke(main, ["export", str(ce), "--events", str(events)]).exit_code == 0
    head = json.loads(events.read_text().splitlines()[0])
    assert head["run"]["variant"] == "hz38-unordered-members"
    assert head["run"]["scope"]["publishes"] == 1 and head["run"]["scope"]["suspicions"] == 0
    code, out = _cli("membership", str(events), "--variant", "all", "--json")
    assert code == 0 and json.loads(out)["fits"] == ["hz38-unordered-members"]
    # an option that takes the publish away again: the run no longer fits
    code, out = _cli("membership", str(events), "--variant", "all", "--publishes", "0",
                     "--json")
    assert code == 1 and json.loads(out)["fits"] == []

"""The lab's parts that need no cluster: the fault schedule, the members' configuration, the
release resolution's errors, and the command line's answers to bad input (exit 2)."""

from __future__ import annotations

import dataclasses
import json
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from click.testing import CliRunner

from partsafe.checker.cli.main import main
from partsafe.checker.lab import releases
from partsafe.checker.lab.cluster import logging_config, member_config
from partsafe.checker.lab.faults import FaultError, Step, parse_faults
from partsafe.checker.lab.releases import LabSetupError, Release, resolve
from partsafe.checker.lab.run import LabConfig, LabReport, _conform_summary, judge
from partsafe.checker.lab.workload import main as workload_main


def _release(version: str) -> Release:
    return Release("hazelcast", version, Path("/x.jar"), None, version)


def test_a_schedule_is_its_steps_in_order() -> None:
    assert parse_faults("kill:master, restart,shutdown:2,pause,join", 3) == (
        Step("kill", "master"), Step("restart"), Step("shutdown", "2"), Step("pause"),
        Step("join"))
    assert parse_faults("", 3) == ()
    assert parse_faults("partition:master", 3) == (Step("partition", "master"),)
    assert str(Step("kill", "master")) == "kill:master" and str(Step("join")) == "join"


@pytest.mark.parametrize(("text", "says"), [
    ("explode", "'explode' is no fault the lab injects"),
    ("join:2", "a join starts a new member and takes no target"),
    ("kill:4", "a member's number from 1 to 3"),
    ("kill:oldest", "a target is master, any or a member's number"),
])
def test_a_bad_schedule_says_what_is_wrong(text: str, says: str) -> None:
    with pytest.raises(FaultError, match=says):
        parse_faults(text, 3)


def test_each_major_gets_its_own_configuration() -> None:
    ns = {"h": "http://www.hazelcast.com/schema/config"}
    for version, name in (("3.12.2", "group/h:name"), ("5.5.0", "cluster-name")):
        root = ET.fromstring(member_config(_release(version), 5702, [5701, 5702], 2, 61))
        found = root.find(f"h:{name}", ns)
        assert found is not None and found.text == "lab"
        props = {p.get("name"): p.text for p in root.iterfind("h:properties/h:property", ns)}
        assert props["hazelcast.partition.count"] == "61"
        assert props["hazelcast.shutdownhook.policy"] == "GRACEFUL"
        assert int(props["hazelcast.max.no.heartbeat.seconds"]) < 14  # a pause is suspected
        assert root.find("h:network/h:port", ns).text == "5702"  # type: ignore[union-attr]
        members = [m.text for m in root.iterfind("h:network/h:join/h:tcp-ip/h:member", ns)]
        assert members == ["127.0.0.1:5701", "127.0.0.1:5702"]
        assert root.find("h:map/h:backup-count", ns).text == "2"  # type: ignore[union-attr]
    assert _release("3.12.2").main_class.endswith("StartServer")
    assert _release("4.2.8").main_class.endswith("HazelcastMemberStarter")
    assert (_release("3.12.2").profile, _release("4.2.8").profile,
            _release("5.5.0").profile) == ("hz-3.9", "hz-4.1", "hz-5")


def test_the_level_reaches_the_protocols_packages_only() -> None:
    assert "com.hazelcast" not in logging_config("INFO")
    finest = logging_config("FINEST")
    assert ".level=INFO" in finest
    assert "com.hazelcast.internal.partition.level=FINEST" in finest
    assert "com.hazelcast.internal.cluster.level=FINEST" in finest


def test_a_missing_tool_or_release_is_named(monkeypatch: pytest.MonkeyPatch,
                                            tmp_path: Path) -> None:
    monkeypatch.setattr(releases.shutil, "which", lambda _name: None)
    with pytest.raises(LabSetupError, match="no `java` is on PATH"):
        resolve("hazelcast", "5.5.0", cache=tmp_path)
    monkeypatch.setattr(releases.shutil, "which",
                        lambda name: "/usr/bin/java" if name == "java" else None)
    with pytest.raises(LabSetupError, match="no `mvn` is on PATH"):
        resolve("hazelcast", "5.5.0", cache=tmp_path)
    with pytest.raises(LabSetupError, match=r"--jar .*: no such file"):
        resolve("hazelcast", None, jar=str(tmp_path / "nope.jar"), cache=tmp_path)
    (tmp_path / "member.jar").write_bytes(b"")
    with pytest.raises(LabSetupError, match="its name gives no version"):
        resolve("hazelcast", None, jar=str(tmp_path / "member.jar"), cache=tmp_path)
    for version, says in (("3.9.4", "not 3.9.4"), ("six", "not a release number"),
                          ("2.0.1", "not 2.0.1")):
        with pytest.raises(LabSetupError, match=says):
            resolve("hazelcast", version, cache=tmp_path)
    with pytest.raises(LabSetupError, match="no product 'coherence'"):
        resolve("coherence", None, cache=tmp_path)


def test_the_command_answers_bad_input_with_exit_2(monkeypatch: pytest.MonkeyPatch) -> None:
    runner = CliRunner()
    r = runner.invoke(main, ["lab", "hazelcast", "--faults", "kill,explode"])
    assert r.exit_code == 2 and "'explode' is no fault the lab injects" in r.output
    monkeypatch.setattr(releases.shutil, "which", lambda _name: None)
    r = runner.invoke(main, ["lab", "hazelcast"])
    assert r.exit_code == 2 and "no `java` is on PATH" in r.output
    assert "Traceback" not in r.output
    r = runner.invoke(main, ["lab", "ignite"])
    assert r.exit_code == 2 and "java" in r.output
    r = runner.invoke(main, ["lab", "ignite", "--faults", "partition"])
    assert r.exit_code == 2 and "does not make network namespaces" in r.output
    monkeypatch.setattr("os.geteuid", lambda: 1000)
    r = runner.invoke(main, ["lab", "hazelcast", "--faults", "partition"])
    assert r.exit_code == 2 and "only root can make" in r.output
    r = runner.invoke(main, ["lab", "ignite", "--jar", "x.jar"])
    assert r.exit_code == 2 and "an Ignite run fetches ignite-runner" in r.output


def test_the_workload_refuses_an_unknown_mode() -> None:
    with pytest.raises(SystemExit) as exc:
        workload_main(["read", "--addresses", "127.0.0.1:5701", "--history", "h.jsonl"])
    assert exc.value.code == 2


def test_the_conform_summary_reads_each_verdict() -> None:
    from partsafe.checker.lab.run import JudgeRun

    def run(doc: dict | None, note: str = "") -> JudgeRun:
        return JudgeRun([], 0, doc, 1.0, 10.0, note)

    assert _conform_summary(run({"verdict": "conforms", "records": 5, "states": 9}))[
        "result"] == "ok"
    bad = _conform_summary(run({"verdict": "does-not-conform", "records": 9,
                                "diagnosis": {"unmatched": "b.log:7", "matched_records": 3}}))
    assert bad["result"] == "violation" and "at b.log:7 after 3 of 9" in bad["verdict"]
    assert _conform_summary(run(None, "stopped after 60 s"))["verdict"] == \
        "undecided (stopped after 60 s)"


def test_a_run_is_judged_by_validate_and_the_data_check(tmp_path: Path) -> None:
    """`judge` over logs already written: validate's verdict, and the data check's (a lost
    acknowledged write is a violation where the design promises it, and not judged where more
    members were lost at once than there are backups)."""
    logs = Path(__file__).resolve().parents[1] / "data" / "logs"
    for name in ("hz_06.log", "hz_07.log", "hz_08.log"):
        (tmp_path / name.replace("hz_0", "member-")).write_bytes((logs / name).read_bytes())
    config = LabConfig(_release("3.12.2"), tmp_path, judge_seconds=120)

    def report(**data: object) -> LabReport:
        r = LabReport("hazelcast", "3.12.2", "hz-3.9", "INFO", 3, 0, [], str(tmp_path))
        r.data = dict(data)
        judge(config, r, lambda _m: None)
        return r

    ok = report(acknowledged=10, lost_count=0, lost=[], lost_at_once=1, promised=True)
    assert ok.validate["result"] == "ok" and ok.conform["membership"]["result"] == "ok"
    assert ok.verdict == "ok" and "10 acknowledged writes read back" in ok.detail
    lost = report(acknowledged=10, lost_count=2, lost=["k1", "k2"], lost_at_once=1,
                  promised=True)
    assert lost.verdict == "violation" and "2 of 10 acknowledged writes lost" in lost.detail
    unpromised = report(acknowledged=10, lost_count=2, lost=["k1", "k2"], lost_at_once=2,
                        promised=False)
    assert unpromised.verdict == "ok" and "data not judged" in unpromised.detail
    doc = json.loads((tmp_path / "validate.json").read_text())
    assert doc["files"] == ["member-6.log", "member-7.log", "member-8.log"]
    # logs that leave the design: a violation, whatever the run's faults (the model has steps
    # for each of them)
    text = (tmp_path / "member-8.log").read_text()
    (tmp_path / "member-8.log").write_text(text.replace("ver:5", "ver:1"))
    config = dataclasses.replace(config, faults=(Step("restart"),))
    left = report(acknowledged=10, lost_count=0, lost=[], lost_at_once=1, promised=True)
    assert left.conform["membership"]["result"] == "violation" and left.verdict == "violation"

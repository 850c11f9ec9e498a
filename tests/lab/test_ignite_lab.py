"""The Ignite lab (checker/lab/ignite.py): its parts that need no cluster (the nodes' HOCON and
logging configuration, the pom, the ports, the release resolution's errors, the settle's global
state), and one live run of a real 3-node Ignite 3 cluster under a restart, recorded and judged
(only with PARTSAFE_LIVE=1: it fetches Ignite from Maven Central once and takes about 2 min)."""

from __future__ import annotations

import json
import os
import re
import socket
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from partsafe.checker.lab import ignite
from partsafe.checker.lab.faults import Step
from partsafe.checker.lab.ignite import (
    IgniteCluster,
    IgniteNode,
    IgniteRelease,
    NodePorts,
    _IgniteRun,
    choose_ports,
    global_state,
    judge_ignite,
    logging_config,
    node_config,
    pom,
    resolve_ignite,
)
from partsafe.checker.lab.releases import LabSetupError
from partsafe.checker.lab.run import LabReport

JAVA_SOURCES = Path(ignite.__file__).with_name("java")


def _hocon_values(text: str) -> dict[str, str]:
    """The ``key: value`` lines of the lab's HOCON, by their dotted path (the lab writes one
    setting a line, objects opened with ``{`` at a line's end)."""
    path: list[str] = []
    values: dict[str, str] = {}
    for raw in text.splitlines():
        line = raw.strip()
        if line.endswith("{") and ":" not in line:
            path.append(line[:-1].strip())
        elif line == "}":
            path.pop()
        elif ":" in line and not line.startswith("{"):
            key, _, value = line.partition(":")
            values[".".join([*path, key.strip()])] = value.strip()
    return values


def test_a_node_config_gives_its_ports_its_peers_and_aimem() -> None:
    text = node_config(NodePorts(3345, 10801, 10301), [3344, 3345, 3346])
    assert text.count("{") == text.count("}")
    values = _hocon_values(text)
    assert values["ignite.network.port"] == "3345"
    assert values["ignite.network.listenAddresses"] == '["127.0.0.1"]'
    assert values["ignite.network.nodeFinder.netClusterNodes"] == (
        '["127.0.0.1:3344", "127.0.0.1:3345", "127.0.0.1:3346"]')
    assert values["ignite.clientConnector.port"] == "10801"
    assert values["ignite.clientConnector.listenAddresses"] == '["127.0.0.1"]'
    assert values["ignite.rest.port"] == "10301"
    # a killed node is suspected well within a pause (ScaleCube: multiplier * log2(n) * ping)
    ping = int(values["ignite.network.membership.failurePingIntervalMillis"])
    multiplier = int(values["ignite.network.membership.scaleCube.membershipSuspicionMultiplier"])
    assert multiplier * 2 * ping < ignite.PAUSE_FOR * 1000 / 2
    profile = re.search(r"\{ name: aimem, engine: aimem, initSizeBytes: (\d+), maxSizeBytes: "
                        r"(\d+) \}", text)
    assert profile is not None and int(profile[2]) == ignite.AIMEM_BYTES


def test_the_level_reaches_the_protocols_packages_and_not_jraft_s_chatter() -> None:
    info = logging_config("INFO")
    assert ("java.util.logging.ConsoleHandler.formatter="
            "org.apache.ignite.internal.lang.JavaLoggerFormatter") in info
    assert ".level=INFO" in info and "org.apache.ignite" not in info.replace(
        "org.apache.ignite.internal.lang.JavaLoggerFormatter", "")
    for level in ("FINE", "FINEST"):
        text = logging_config(level)
        lines = set(text.splitlines())
        assert ".level=INFO" in lines
        assert f"org.apache.ignite.raft.jraft.level={level}" in lines
        assert f"org.apache.ignite.internal.distributionzones.level={level}" in lines
        assert "org.apache.ignite.raft.jraft.core.Replicator.level=INFO" in lines
        assert "org.apache.ignite.raft.jraft.core.BallotBox.level=INFO" in lines
        # JUL applies a logger's own level over its parent's, whatever the order of lines
        assert text.index("jraft.level") < text.index("Replicator.level")
    with pytest.raises(ValueError, match="one of INFO, FINE, FINEST"):
        logging_config("DEBUG")


def test_the_pom_asks_for_the_node_and_the_thin_client() -> None:
    root = ET.fromstring(pom("3.1.0"))
    ns = {"m": "http://maven.apache.org/POM/4.0.0"}
    deps = [(d.findtext("m:groupId", namespaces=ns), d.findtext("m:artifactId", namespaces=ns),
             d.findtext("m:version", namespaces=ns))
            for d in root.iterfind("m:dependencies/m:dependency", ns)]
    assert deps == [("org.apache.ignite", "ignite-runner", "3.1.0"),
                    ("org.apache.ignite", "ignite-client", "3.1.0")]
    assert root.findtext("m:packaging", namespaces=ns) == "pom"


def test_the_ports_are_free_distinct_blocks() -> None:
    ports = choose_ports(3)
    assert len(ports) == 3
    flat = [p for n in ports for p in (n.network, n.client, n.rest)]
    assert len(set(flat)) == 9
    assert [n.network for n in ports] == list(range(ports[0].network, ports[0].network + 3))
    assert ports[0].network >= 3344 and ports[0].client >= 10800 and ports[0].rest >= 10300


def test_a_port_someone_listens_on_is_skipped() -> None:
    start = choose_ports(1, (21000, 22000, 23000))[0].network
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as taken:
        taken.bind(("0.0.0.0", start))  # as Ignite's REST binds: every interface
        taken.listen()
        ports = choose_ports(2, (start, 22000, 23000))
        assert start not in {p.network for p in ports}
        assert ports[0].network >= start + 1


def test_a_missing_tool_is_named_with_how_to_get_it(monkeypatch: pytest.MonkeyPatch,
                                                    tmp_path: Path) -> None:
    monkeypatch.setattr(ignite.shutil, "which", lambda _name: None)
    with pytest.raises(LabSetupError, match=r"no `java` is on PATH: install a JDK 17"):
        resolve_ignite(None, cache=tmp_path)
    monkeypatch.setattr(ignite.shutil, "which",
                        lambda name: "/usr/bin/java" if name == "java" else None)
    with pytest.raises(LabSetupError, match=r"no `mvn` is on PATH .*ignite-runner and "
                                            r"ignite-client:3\.1\.0.*apt-get install maven"):
        resolve_ignite(None, cache=tmp_path)
    # jars already fetched, no compiler: the JDK is asked for, not the JRE
    lib = tmp_path / "ignite-3.1.0" / "lib"
    lib.mkdir(parents=True)
    (lib / "ignite-runner-3.1.0.jar").write_bytes(b"")
    (lib / ".complete").write_text("1 jars\n")
    with pytest.raises(LabSetupError, match=r"no `javac`.*install a JDK 17, not only a JRE"):
        resolve_ignite("3.1.0", cache=tmp_path)


@pytest.mark.parametrize(("version", "says"), [
    ("2.16.0", "no Ignite 3 release number"),
    ("three", "no Ignite 3 release number"),
    ("3.0.0", "does not resolve from Maven Central"),
])
def test_a_release_the_lab_cannot_run_is_refused(version: str, says: str,
                                                 tmp_path: Path) -> None:
    with pytest.raises(LabSetupError, match=says):
        resolve_ignite(version, cache=tmp_path)


def test_a_failed_fetch_says_what_was_tried(monkeypatch: pytest.MonkeyPatch,
                                           tmp_path: Path) -> None:
    mvn = tmp_path / "bin" / "mvn"
    mvn.parent.mkdir()
    mvn.write_text("#!/bin/sh\necho '[ERROR] Could not resolve dependencies for project' >&2\n"
                   "exit 1\n")
    mvn.chmod(0o755)
    monkeypatch.setattr(ignite.shutil, "which",
                        lambda name: str(mvn) if name == "mvn" else f"/usr/bin/{name}")
    with pytest.raises(LabSetupError) as error:
        resolve_ignite("3.1.0", cache=tmp_path / "cache")
    text = str(error.value)
    assert "Maven could not fetch org.apache.ignite:ignite-runner:3.1.0" in text
    assert "maven-dependency-plugin:3.6.1:copy-dependencies" in text
    assert "Could not resolve dependencies" in text
    assert (tmp_path / "cache" / "ignite-3.1.0" / "pom.xml").is_file()


def test_the_settled_global_state_follows_ignite_s_formula() -> None:
    assert global_state(3, 3) == "AVAILABLE"
    assert global_state(3, 2) == "DEGRADED"  # two nodes left of three: the zone's settled state
    assert global_state(3, 1) == "READ_ONLY"
    assert global_state(2, 1) == "READ_ONLY"
    assert global_state(1, 1) == "AVAILABLE"
    assert global_state(3, 0) == "UNAVAILABLE"


def test_a_node_runs_with_the_flags_its_config_and_the_launcher(tmp_path: Path) -> None:
    release = IgniteRelease("3.1.0", tmp_path / "lib", tmp_path / "classes")
    cluster = IgniteCluster(release, tmp_path, "FINE", choose_ports(2))
    props = (tmp_path / "members" / "logging.properties").read_text()
    assert "org.apache.ignite.raft.jraft.level=FINE" in props
    node = cluster.nodes[1]
    assert (node.name, node.log, node.work) == (
        "node2", tmp_path / "member-2.log", tmp_path / "members" / "member-2" / "work")
    assert release.classpath == f"{tmp_path / 'classes'}:{tmp_path / 'lib' / '*'}"
    assert "--add-opens" in ignite.JVM_FLAGS and "java.base/sun.nio.ch=ALL-UNNAMED" in \
        ignite.JVM_FLAGS
    names = {p.name for p in JAVA_SOURCES.glob("*.java")}
    assert names == {"LabNode.java", "LabWorkload.java"}


class _Stub:
    """A cluster of `n` nodes, none started, that says which are live (no process at all)."""

    def __init__(self, n: int, down: tuple[int, ...] = ()) -> None:
        self.nodes = [IgniteNode(i + 1, NodePorts(3344 + i, 10800 + i, 10300 + i),
                                 Path(f"/nonexistent/member-{i + 1}")) for i in range(n)]
        self.down = down

    def live(self) -> list[IgniteNode]:
        return [n for n in self.nodes if n.index not in self.down]


def _schedule(n: int, down: tuple[int, ...] = (), seed: int = 0) -> _IgniteRun:
    return _IgniteRun(_Stub(n, down), None, n, min(3, n), seed)  # type: ignore[arg-type]


def test_node_1_keeps_the_metastorage_and_any_other_node_is_drawn_by_the_seed() -> None:
    run = _schedule(4)
    for kind in ("kill", "restart", "shutdown"):
        for target in ("1", "master"):
            node, why = run.target(Step(kind, target))
            assert node is None and "metastorage" in why and kind in why
    node, why = run.target(Step("pause", "master"))
    assert node is not None and node.index == 1 and why == ""
    drawn = [run.target(Step("kill"))[0] for _ in range(30)]
    assert {n.index for n in drawn if n is not None} == {2, 3, 4}
    again = _schedule(4)
    assert [again.target(Step("kill"))[0] for _ in range(30)] == drawn
    node, why = _schedule(3, down=(3,)).target(Step("kill", "3"))
    assert node is None and "node 3 is down" in why
    node, why = _schedule(2, down=(2,)).target(Step("kill"))
    assert node is None and "no node up" in why


def test_the_data_is_promised_while_each_raft_group_keeps_a_majority() -> None:
    run = _schedule(3)
    assert run.group == 3
    run.lose()  # one of three: a majority is left
    assert not run.majority_lost and run.lost_at_once == 1
    run.lose()  # two of three before a settle
    assert run.majority_lost and run.lost_at_once == 2
    shrunk = _schedule(3)
    shrunk.lose()
    shrunk.lost_now, shrunk.group = 0, 2  # settled on the two nodes left: groups of two
    shrunk.lose()
    assert shrunk.majority_lost and shrunk.lost_at_once == 1


def test_a_recorded_run_is_judged_by_validate_and_the_data_check(tmp_path: Path) -> None:
    lines = [
        "2026-12-02 00:05:07:692 +0000 [INFO][%node2%tableManager-io-2][NodeImpl] Node "
        "<20_part_0/node2> init, term=0, lastLogId=LogId [index=0, term=0], "
        "conf=node1,node3,node2, oldConf=.",
        "2026-12-02 00:05:09:060 +0000 [INFO][%node2%JRaft-Response-Processor-4][NodeImpl] "
        "Node <20_part_0/node2> become leader of group, term=1, conf=node1,node3,node2, "
        "oldConf=.",
    ]
    (tmp_path / "member-2.log").write_text("\n".join(lines) + "\n")

    def report(**data: object) -> LabReport:
        r = LabReport("ignite", "3.1.0", "ignite-3-zone", "INFO", 3, 0, [], str(tmp_path))
        r.data = dict(data)
        return judge_ignite(r, seconds=120, models=())

    ok = report(acknowledged=5, lost_count=0, lost=[], lost_at_once=1, promised=True,
                replicas=3)
    assert ok.validate["result"] == "ok" and ok.validate["violation_count"] == 0
    assert ok.verdict == "ok" and "5 acknowledged inserts read back" in ok.detail
    lost = report(acknowledged=5, lost_count=1, lost=[3], lost_at_once=1, promised=True,
                  replicas=3)
    assert lost.verdict == "violation" and "1 of 5 acknowledged inserts lost" in lost.detail
    unpromised = report(acknowledged=5, lost_count=1, lost=[3], lost_at_once=2,
                        promised=False, replicas=3)
    assert unpromised.verdict == "ok" and "data not judged" in unpromised.detail
    assert json.loads((tmp_path / "lab.json").read_text())["verdict"] == "ok"


# --- the live run ------------------------------------------------------------------------------


def _gone(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    # a pid of ours still there would be a zombie only if never waited for; the lab waits
    stat = Path(f"/proc/{pid}/stat")
    return stat.is_file() and stat.read_text().split(") ", 1)[1].startswith("Z")


@pytest.mark.skipif(os.environ.get("PARTSAFE_LIVE") != "1",
                    reason="a live Ignite cluster (Java, Maven Central, about 2 min): run with "
                           "PARTSAFE_LIVE=1, as .ci/run does")
def test_a_live_ignite_cluster_is_recorded(tmp_path: Path) -> None:
    from partsafe.checker.validation.local import validate

    release = resolve_ignite(None, quiet=True)
    assert release.profile == "ignite-3-zone" and release.product == "ignite"
    messages: list[str] = []
    out = tmp_path / "run"
    report = ignite.run_ignite_lab(release, out, 3, (Step("restart"),), seed=1, rows=100,
                                   progress=messages.append)
    logs = sorted(out.glob("member-*.log"))
    assert [p.name for p in logs] == ["member-1.log", "member-2.log", "member-3.log"]
    assert all(p.stat().st_size > 10_000 for p in logs)
    # every line a node wrote is in JavaLoggerFormatter's layout, or a throwable's line after one
    head = logs[0].read_text().splitlines()[0]
    assert re.match(r"\d{4}-\d\d-\d\d \d\d:\d\d:\d\d:\d{3} [+-]\d{4} \[INFO\]\[main\]\[LabNode\]",
                    head)
    result = validate([str(p) for p in logs])
    assert result.violations == []
    assert result.accounting.malformed == []
    assert set(result.members) == {"node1", "node2", "node3"}

    what = [e["what"] for e in report.journal]
    assert what.count("start") == 4  # three nodes, then the restarted one again
    at = what.index("kill")
    kill = report.journal[at]
    assert kill["fault"] == "restart" and kill["member"] != 1  # node 1 holds the metastorage
    assert what[at:at + 3] == ["kill", "left", "start"]
    assert report.journal[at + 2]["member"] == kill["member"]
    assert "settled" in what[at:] and "unsettled" not in what

    data = report.data
    assert data["acknowledged"] >= 100 and data["lost_count"] == 0 and data["lost"] == []
    assert data["promised"] is True and data["lost_at_once"] == 1
    history = [json.loads(line) for line in (out / "history.jsonl").read_text().splitlines()]
    acked = {r["key"] for r in history if r["op"] == "insert" and r["ok"]}
    read = {r["key"] for r in history if r["op"] == "get" and r["ok"]}
    assert len(acked) == data["acknowledged"] and read == acked

    pids = {e["pid"] for e in report.journal if e.get("pid")}
    assert len(pids) >= 7  # four node incarnations, three client JVMs
    assert all(_gone(pid) for pid in pids)
    assert not any((out / "members").glob("member-*/work"))  # the work folders are deleted
    assert json.loads((out / "lab.json").read_text())["data"]["acknowledged"] == \
        data["acknowledged"]
    assert any(m.startswith("settled") for m in messages)

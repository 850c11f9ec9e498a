"""`partsafe lab` for Apache Ignite 3: a real cluster of embedded nodes on loopback under the
seeded fault schedule (checker/lab/faults.py), each node's log in the production layout, a
client workload, and the data check; judged like a Hazelcast run (checker/lab/run.py).

The release (`resolve_ignite`). ``org.apache.ignite:ignite-runner`` (the node) and
``org.apache.ignite:ignite-client`` (the thin client) with all their dependencies, fetched from
Maven Central by ``mvn dependency:copy-dependencies`` over a pom the lab writes into the cache
(`pom`), into ``cache_dir()/ignite-VERSION/lib``; the launcher's sources (checker/lab/java:
``LabNode``, one embedded node, ``IgniteServer.start``; ``LabWorkload``, the thin client's
workload) compiled with ``javac`` into ``cache_dir()/ignite-VERSION/classes``. 3.1.0 is the first
release whose ignite-runner resolves from Central (3.0.0's does not).

The cluster (`IgniteCluster`). Node N is ``nodeN``, its own JVM (`JVM_FLAGS`: the
``--add-opens`` Ignite needs on Java 17), its configuration the HOCON file `node_config` writes
(network port 3344+, client connector 10800+, REST 10300+, each a free port; the static node
finder over every node's address; an in-memory storage profile ``aimem``; ScaleCube's failure
detection shortened so that a killed node leaves the physical topology in about 6 s instead of
about 22 s). Ignite rewrites that file on start, so the lab keeps the text it wrote beside it
(``ignite-config.conf.orig``) and writes the file again before each start. Its work folder is
``out/members/member-N/work`` (the metastorage's and the CMG's RocksDB and raft logs), deleted
at the end of the run. Its log, ``out/member-N.log``, is the JVM's console (java.util.logging's
console handler with Ignite's ``JavaLoggerFormatter``, `logging_config`: the layout of
``packaging/db/ignite.java.util.logging.properties`` that partsafe's Ignite reader reads,
traces/ignite.py), every incarnation appended.

Node 1 initializes the cluster: the metastorage's and the cluster management group's (CMG) raft
groups on node 1 alone. So node 1 is never killed, restarted or shut down (losing their only peer
stops the cluster for good); a fault aimed at it is skipped and the journal says why. A pause may
hit it when named (``pause:1``, ``pause:master``): it comes back.

The faults (checker/lab/faults.py's kinds): ``kill`` is kill -9; ``restart`` a kill -9, then,
once the node is out of the logical topology and `RESTART_AFTER` seconds more, the same node
started again on its work folder (its in-memory partitions come back empty: design 001's
in-memory restart); ``shutdown`` SIGTERM (``IgniteServer.shutdown``); ``pause`` SIGSTOP for
`PAUSE_FOR` seconds, then SIGCONT: the others have removed it by then, and Ignite refuses a
removed node's handshake ("is stale, it should be restarted"), so a resumed node not back in the
logical topology within 20 s is restarted, as Ignite asks; ``join`` a new node.

The zone (design 001, IGNITE-16668: in-memory raft group reconfiguration on node failure).
``LabWorkload setup`` creates zone `ZONE`, storage profile ``aimem``, REPLICAS
``min(3, members)``, `PARTITIONS` partitions, and AUTO SCALE UP and DOWN of `SCALE_SECONDS`: a
node that leaves or joins changes the zone's data nodes that many seconds later, which writes the
partitions' ``zone.assignments.pending`` keys, and each partition's raft group changes its peers
until the stable assignments are the new ones: a real rebalance after every fault. Then the table
`TABLE` in that zone.

The workload (``LabWorkload write``, a thin client in a JVM of its own): `rows` inserts, then one
every 50 ms while the faults run, each acknowledged or not in ``out/history.jsonl``. The data
check (``LabWorkload verify``): every acknowledged row read back once the schedule is over. A raft
group keeps an acknowledged write while a majority of its peers survives: the check is promised
(judged) only while at most ``floor((g - 1) / 2)`` nodes were lost at once without a graceful
shutdown, ``g = min(replicas, nodes)`` the group's size when the fault hit (the zone's data
nodes follow the topology, so a killed node's partitions shrink to the nodes left).

After each fault the lab waits until the cluster settles, through the REST API on loopback: the
logical topology (``/management/v1/cluster/topology/logical``) is the nodes expected, and each
of the zone's partitions (``/management/v1/recovery/zone/state/local`` and ``.../global``) has
``min(replicas, nodes)`` replicas, all HEALTHY, and the global state Ignite computes from that
(`global_state`: AVAILABLE, or DEGRADED with fewer nodes than REPLICAS), unchanged for longer
than the zone's scale timers. Nothing read from a log or a REST answer is evaluated.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import queue
import random
import re
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Iterable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import IO, Any

from partsafe.checker.lab.cluster import signal_process, stop
from partsafe.checker.lab.faults import RESTART_AFTER, Step
from partsafe.checker.lab.releases import LabSetupError, cache_dir
from partsafe.checker.lab.run import Journal, LabReport, judge_logs

__all__ = [
    "DEFAULT_VERSION",
    "IgniteCluster",
    "IgniteNode",
    "IgniteRelease",
    "NodePorts",
    "choose_ports",
    "global_state",
    "judge_ignite",
    "logging_config",
    "node_config",
    "pom",
    "resolve_ignite",
    "run_ignite_lab",
]

DEFAULT_VERSION = "3.1.0"
#: the release profile (``partsafe profiles``) whose rules Ignite 3.1's code follows
PROFILE = "ignite-3-zone"
#: the models a run's logs are conformed to (`judge_ignite`)
CONFORM_MODELS = ("ignite-rebalance",)
#: the artifacts the pom depends on: the node and the thin client
ARTIFACTS = ("ignite-runner", "ignite-client")
JAVA_SOURCES = Path(__file__).with_name("java")
NODE_MAIN = "partsafe.lab.LabNode"
WORKLOAD_MAIN = "partsafe.lab.LabWorkload"

#: the flags Ignite 3 needs on Java 17 (its ``bin/ignite3db`` script's ``--add-opens``); without
#: them the node fails at start (netty, the page memory)
JVM_FLAGS = (
    *(flag for package in ("java.lang", "java.lang.invoke", "java.lang.reflect", "java.io",
                           "java.nio", "java.math", "java.util", "jdk.internal.misc",
                           "sun.nio.ch")
      for flag in ("--add-opens", f"java.base/{package}=ALL-UNNAMED")),
    "-Dio.netty.tryReflectionSetAccessible=true",
    "-Dfile.encoding=UTF-8",
)
NODE_HEAP = ("-Xms256m", "-Xmx512m")
CLIENT_HEAP = ("-Xms32m", "-Xmx192m", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1")

LEVELS = ("INFO", "FINE", "FINEST")
#: the loggers of the protocols the verbose levels reach: JRaft (elections, votes,
#: configuration changes), Ignite's raft integration (Loza, the raft group services), the
#: rebalance (assignments stable, pending, planned; data nodes), the partition replicas, and the
#: logical (CMG) and physical (ScaleCube) topologies
PROTOCOL_PACKAGES = (
    "org.apache.ignite.raft.jraft",
    "org.apache.ignite.internal.raft",
    "org.apache.ignite.internal.distributionzones",
    "org.apache.ignite.internal.partition.replicator",
    "org.apache.ignite.internal.cluster.management",
    "org.apache.ignite.internal.network.scalecube",
)
#: JRaft's per-append and per-heartbeat loggers, kept at INFO: at FINE they are most of a log
QUIET_LOGGERS = ("org.apache.ignite.raft.jraft.core.Replicator",
                 "org.apache.ignite.raft.jraft.core.BallotBox")

CLUSTER_NAME = "lab"
HOST = "127.0.0.1"
ZONE = "LAB"
TABLE = "LAB_ROWS"
PARTITIONS = 4
#: AUTO SCALE UP and AUTO SCALE DOWN of the zone: data nodes follow the topology after this long
SCALE_SECONDS = 5
#: the in-memory storage profile's size (``aimem``'s ``maxSizeBytes``)
AIMEM_BYTES = 64 << 20
#: a paused node is stopped this long, well past ScaleCube's suspicion (about 6 s here)
PAUSE_FOR = 30.0
#: ScaleCube's failure detection: a ping each this many ms, and a member suspected for
#: ``multiplier * ceil(log2(members)) * ping`` ms before it is removed (defaults 2000 and 5)
FAILURE_PING_MS = 1000
SUSPICION_MULTIPLIER = 3
#: the first port of each block: network, client connector, REST (Ignite's defaults)
PORT_STARTS = (3344, 10800, 10300)

_VERSION = re.compile(r"3\.(\d+)\.\d+(?:-[A-Za-z0-9.]+)?")


# --- the release -------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class IgniteRelease:
    """An Ignite 3 release ready to run: its jars' folder and the launcher's classes."""

    version: str
    lib: Path
    classes: Path
    product: str = "ignite"
    profile: str = PROFILE

    @property
    def classpath(self) -> str:
        return f"{self.classes}{os.pathsep}{self.lib / '*'}"


def pom(version: str) -> str:
    """The pom whose dependencies are the node and the thin client of `version`."""
    deps = "\n".join(
        f"    <dependency><groupId>org.apache.ignite</groupId><artifactId>{artifact}</artifactId>"
        f"<version>{version}</version></dependency>" for artifact in ARTIFACTS)
    return f"""<project xmlns="http://maven.apache.org/POM/4.0.0">
  <modelVersion>4.0.0</modelVersion>
  <groupId>partsafe.lab</groupId><artifactId>ignite-{version}</artifactId><version>1</version>
  <packaging>pom</packaging>
  <dependencies>
{deps}
  </dependencies>
</project>
"""


def _tool(name: str, why: str) -> str:
    found = shutil.which(name)
    if found is None:
        raise LabSetupError(why)
    return found


def _java() -> str:
    return _tool("java", "the lab runs Ignite nodes on Java, and no `java` is on PATH: install a "
                         "JDK 17 (Debian: apt-get install openjdk-17-jdk-headless)")


def _check_version(version: str) -> str:
    found = _VERSION.fullmatch(version)
    if found is None:
        raise LabSetupError(f"--version {version!r}: the lab runs Apache Ignite 3 (3.1.0 and "
                            "later), and this is no Ignite 3 release number")
    if int(found[1]) < 1:
        raise LabSetupError(f"Ignite {version}: its ignite-runner does not resolve from Maven "
                            "Central (3.0.0's does not); the lab runs 3.1.0 and later")
    return version


def _fetch(version: str, home: Path, quiet: bool) -> Path:
    """ignite-runner and ignite-client of `version` with every dependency into ``home/lib``
    (done once: ``lib/.complete`` marks a finished fetch)."""
    lib = home / "lib"
    done_mark = lib / ".complete"
    if done_mark.is_file() and any(lib.glob("ignite-runner-*.jar")):
        return lib
    mvn = _tool("mvn", f"Ignite {version}'s jars are not in {lib}, and no `mvn` is on PATH to "
                       f"fetch org.apache.ignite:{' and '.join(ARTIFACTS)}:{version} with their "
                       "dependencies from Maven Central (about 140 MB): install Maven (Debian: "
                       "apt-get install maven)")
    home.mkdir(parents=True, exist_ok=True)
    (home / "pom.xml").write_text(pom(version))
    cmd = [mvn, "-q", "-B", "-f", str(home / "pom.xml"),
           "org.apache.maven.plugins:maven-dependency-plugin:3.6.1:copy-dependencies",
           f"-DoutputDirectory={lib}"]
    if not quiet:
        print(f"lab: fetching org.apache.ignite:ignite-runner:{version} and ignite-client with "
              "their dependencies with Maven (about 140 MB, a minute or two the first time)",
              file=sys.stderr)
    run = subprocess.run(cmd, cwd=home, capture_output=True, text=True, check=False)
    if run.returncode != 0 or not any(lib.glob("ignite-runner-*.jar")):
        tail = (run.stdout + run.stderr).strip().splitlines()[-3:]
        raise LabSetupError(
            f"Maven could not fetch org.apache.ignite:ignite-runner:{version} and ignite-client "
            f"with their dependencies (tried: {' '.join(cmd)}; it said: "
            f"{' / '.join(tail) or f'exit {run.returncode}'}); Maven Central must be reachable, "
            "or the artifacts be in ~/.m2")
    done_mark.write_text(f"{len(list(lib.glob('*.jar')))} jars\n")
    return lib


def _sources() -> list[Path]:
    return sorted(JAVA_SOURCES.glob("*.java"))


def _compile(lib: Path, classes: Path, quiet: bool) -> Path:
    """The launcher's sources compiled into `classes`, again only when they changed (their
    digest is kept in ``classes/.sources``)."""
    sources = _sources()
    digest = hashlib.sha256(b"".join(s.name.encode() + s.read_bytes() for s in sources))
    stamp = classes / ".sources"
    if stamp.is_file() and stamp.read_text().strip() == digest.hexdigest():
        return classes
    javac = _tool("javac", "no `javac` is on PATH to compile the lab's Ignite launcher "
                           f"({JAVA_SOURCES}): install a JDK 17, not only a JRE (Debian: "
                           "apt-get install openjdk-17-jdk-headless)")
    if classes.exists():
        shutil.rmtree(classes)
    classes.mkdir(parents=True)
    if not quiet:
        print(f"lab: compiling {', '.join(s.name for s in sources)}", file=sys.stderr)
    cmd = [javac, "-nowarn", "-d", str(classes), "-cp", str(lib / "*"), *map(str, sources)]
    run = subprocess.run(cmd, capture_output=True, text=True, check=False)
    if run.returncode != 0:
        tail = run.stderr.strip().splitlines()[:3]
        raise LabSetupError(f"javac could not compile the lab's Ignite launcher (tried: javac "
                            f"-d {classes} -cp '{lib}/*' {JAVA_SOURCES}/*.java; it said: "
                            f"{' / '.join(tail) or f'exit {run.returncode}'})")
    stamp.write_text(digest.hexdigest() + "\n")
    return classes


def resolve_ignite(version: str | None, cache: Path | None = None,
                   quiet: bool = False) -> IgniteRelease:
    """The Ignite 3 release to run (default `DEFAULT_VERSION`): its jars fetched into the cache
    when missing, the launcher compiled when its sources changed. Raises `LabSetupError` saying
    what is missing and how to get it."""
    version = _check_version(version or DEFAULT_VERSION)
    _java()
    home = (cache or cache_dir()) / f"ignite-{version}"
    lib = _fetch(version, home, quiet)
    classes = _compile(lib, home / "classes", quiet)
    return IgniteRelease(version, lib.resolve(), classes.resolve())


# --- a node's configuration ----------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class NodePorts:
    """A node's three ports: network (the cluster's messaging), client connector, REST."""

    network: int
    client: int
    rest: int


def _free(port: int) -> bool:
    """Nobody listens on `port`, neither on loopback nor on every interface (Ignite's REST
    binds every interface)."""
    for host in (HOST, "0.0.0.0"):
        with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
            s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            try:
                s.bind((host, port))
            except OSError:
                return False
    return True


def _block(count: int, start: int) -> list[int]:
    port = start
    while port + count < 65000:
        block = list(range(port, port + count))
        if all(_free(p) for p in block):
            return block
        port += count
    raise OSError(f"no {count} consecutive free ports from {start} on {HOST}")


def choose_ports(count: int, starts: tuple[int, int, int] = PORT_STARTS) -> list[NodePorts]:
    """The ports of `count` nodes: three blocks of consecutive free ports (network, client,
    REST), from Ignite's default of each."""
    blocks = [_block(count, start) for start in starts]
    if len({p for block in blocks for p in block}) != 3 * count:
        raise OSError(f"the port blocks from {starts} overlap for {count} nodes")
    return [NodePorts(*ports) for ports in zip(*blocks, strict=True)]


def node_config(ports: NodePorts, peers: Iterable[int], aimem_bytes: int = AIMEM_BYTES) -> str:
    """A node's HOCON configuration (``ignite { ... }``, Ignite 3's node configuration): its
    ports on loopback, the static node finder over `peers` (every node's network port),
    ScaleCube's shortened failure detection, and the in-memory storage profile ``aimem``."""
    finder = ", ".join(f'"{HOST}:{p}"' for p in peers)
    return f"""ignite {{
  network {{
    port: {ports.network}
    listenAddresses: ["{HOST}"]
    nodeFinder.netClusterNodes: [{finder}]
    membership {{
      failurePingIntervalMillis: {FAILURE_PING_MS}
      scaleCube.membershipSuspicionMultiplier: {SUSPICION_MULTIPLIER}
    }}
  }}
  clientConnector {{
    port: {ports.client}
    listenAddresses: ["{HOST}"]
  }}
  rest.port: {ports.rest}
  storage.profiles: [
    {{ name: aimem, engine: aimem, initSizeBytes: {aimem_bytes}, maxSizeBytes: {aimem_bytes} }}
  ]
}}
"""


def logging_config(level: str) -> str:
    """The nodes' java.util.logging configuration: the console handler with Ignite's
    ``JavaLoggerFormatter`` (``packaging/db/ignite.java.util.logging.properties``), the root at
    INFO, and at FINE or FINEST the protocols' packages at that level (Ignite's System.Logger
    bridge maps DEBUG to FINE, TRACE to FINER), JRaft's `QUIET_LOGGERS` kept at INFO."""
    if level not in LEVELS:
        raise ValueError(f"level {level!r}: one of {', '.join(LEVELS)}")
    lines = ["handlers=java.util.logging.ConsoleHandler",
             ".level=INFO",
             "java.util.logging.ConsoleHandler.level=ALL",
             "java.util.logging.ConsoleHandler.formatter="
             "org.apache.ignite.internal.lang.JavaLoggerFormatter"]
    if level != "INFO":
        lines += [f"{package}.level={level}" for package in PROTOCOL_PACKAGES]
        lines += [f"{logger}.level=INFO" for logger in QUIET_LOGGERS]
    return "\n".join(lines) + "\n"


# --- the cluster ---------------------------------------------------------------------------------


@dataclass
class IgniteNode:
    """One node: its number, ports, folder, and the process of its current incarnation."""

    index: int
    ports: NodePorts
    folder: Path
    process: subprocess.Popen[bytes] | None = None
    incarnations: int = 0
    paused: bool = False

    @property
    def name(self) -> str:
        """The node's name (its consistent id: the member of its log lines)."""
        return f"node{self.index}"

    @property
    def address(self) -> str:
        return f"{HOST}:{self.ports.network}"

    @property
    def log(self) -> Path:
        """``member-N.log`` in the run's folder, beside ``members/`` that holds its config."""
        return self.folder.parent.parent / f"member-{self.index}.log"

    @property
    def work(self) -> Path:
        return self.folder / "work"

    @property
    def config(self) -> Path:
        return self.folder / "ignite-config.conf"

    @property
    def up(self) -> bool:
        return self.process is not None and self.process.poll() is None


@dataclass
class IgniteCluster:
    """The nodes of one run and its client processes; a context manager that stops every process
    it started, by its id, however the run ends (an error, Ctrl-C)."""

    release: IgniteRelease
    out: Path
    level: str
    ports: list[NodePorts]
    nodes: list[IgniteNode] = field(default_factory=list)
    clients: list[subprocess.Popen[bytes]] = field(default_factory=list)
    _files: list[IO[bytes]] = field(default_factory=list)

    def __post_init__(self) -> None:
        members = self.out / "members"
        members.mkdir(parents=True, exist_ok=True)
        (members / "logging.properties").write_text(logging_config(self.level))
        self.nodes = [IgniteNode(i + 1, ports, members / f"member-{i + 1}")
                      for i, ports in enumerate(self.ports)]

    def __enter__(self) -> IgniteCluster:
        return self

    def __exit__(self, *exc: object) -> None:
        self.kill_all()

    def _java(self, main: str, heap: tuple[str, ...], args: list[str], log: Path,
              cwd: Path, stdout: int | None = None) -> subprocess.Popen[bytes]:
        out = open(log, "ab")  # noqa: SIM115 (closed by kill_all)
        self._files.append(out)
        cmd = [_java(), *JVM_FLAGS, *heap,
               f"-Djava.util.logging.config.file={self.out / 'members' / 'logging.properties'}",
               "-cp", self.release.classpath, main, *args]
        return subprocess.Popen(cmd, cwd=cwd, stdout=stdout if stdout is not None else out,
                                stderr=out if stdout is not None else subprocess.STDOUT,
                                stdin=subprocess.DEVNULL, start_new_session=True)

    # --- one node ------------------------------------------------------------------------------

    def start(self, node: IgniteNode, init: bool = False) -> None:
        """Start `node`'s JVM (a new incarnation on the same work folder when it ran before),
        its configuration written again from the lab's text; with `init`, it initializes the
        cluster, the metastorage and the CMG on itself."""
        node.folder.mkdir(parents=True, exist_ok=True)
        text = node_config(node.ports, [n.ports.network for n in self.nodes])
        (node.folder / "ignite-config.conf.orig").write_text(text)
        node.config.write_text(text)
        args = [node.name, str(node.config), str(node.work)]
        if init:
            args += ["--init", CLUSTER_NAME, node.name]
        node.process = self._java(NODE_MAIN, NODE_HEAP, args, node.log, node.folder)
        node.incarnations += 1
        node.paused = False

    def kill(self, node: IgniteNode) -> None:
        """kill -9 of the node's JVM."""
        if node.process is not None and node.process.poll() is None:
            if node.paused:
                os.kill(node.process.pid, signal.SIGCONT)
            node.process.kill()
            node.process.wait()
        node.paused = False

    def shutdown(self, node: IgniteNode, timeout: float = 60.0) -> bool:
        """A graceful stop (SIGTERM: LabNode's shutdown hook stops the node); kill -9 if it has
        not ended within `timeout` s. True when it ended by itself."""
        if node.process is None:
            return True
        ended = stop(node.process, timeout)
        node.paused = False
        return ended

    def pause(self, node: IgniteNode) -> None:
        node.paused = signal_process(node.process, signal.SIGSTOP)

    def resume(self, node: IgniteNode) -> None:
        signal_process(node.process, signal.SIGCONT)
        node.paused = False

    def client(self, args: list[str], log: Path) -> subprocess.Popen[bytes]:
        """A `LabWorkload` JVM, its stdout (one JSON document a line) piped, its stderr to
        `log`; stopped by `kill_all` too."""
        process = self._java(WORKLOAD_MAIN, CLIENT_HEAP, args, log, self.out,
                             stdout=subprocess.PIPE)
        self.clients.append(process)
        return process

    def kill_all(self) -> None:
        """Every process the lab started, stopped by its id; the log files closed."""
        for process in self.clients:
            with contextlib.suppress(OSError):
                if process.poll() is None:
                    process.kill()
                    process.wait()
                if process.stdout is not None:
                    process.stdout.close()
        for node in self.nodes:
            with contextlib.suppress(OSError):
                self.kill(node)
        for f in self._files:
            f.close()
        self._files.clear()

    # --- what the REST API says ----------------------------------------------------------------

    def live(self) -> list[IgniteNode]:
        return [n for n in self.nodes if n.up and not n.paused]

    def rest(self, node: IgniteNode, path: str, timeout: float = 5.0) -> Any:
        """GET `path` of `node`'s REST API on loopback, its JSON answer; None when it fails."""
        url = f"http://{HOST}:{node.ports.rest}{path}"
        try:
            with urllib.request.urlopen(url, timeout=timeout) as answer:
                return json.loads(answer.read())
        except (OSError, ValueError, urllib.error.URLError):
            return None

    def _ask(self, path: str) -> Any:
        """`path` asked of the live nodes in order (node 1, the CMG's, first) until one answers."""
        for node in self.live():
            answer = self.rest(node, path)
            if answer is not None:
                return answer
        return None

    def topology(self) -> set[str] | None:
        """The names in the logical topology (the CMG's), or None when no node answers."""
        answer = self._ask("/management/v1/cluster/topology/logical")
        if not isinstance(answer, list):
            return None
        return {str(n.get("name")) for n in answer if isinstance(n, dict)}

    def partitions(self) -> tuple[dict[int, str], dict[int, dict[str, str]]] | None:
        """The zone's partitions: each one's global state, and each one's replicas' local states
        by node; None when no node answers."""
        query = f"?zoneNames={ZONE}"
        glob = self._ask(f"/management/v1/recovery/zone/state/global{query}")
        local = self._ask(f"/management/v1/recovery/zone/state/local{query}")
        if not isinstance(glob, dict) or not isinstance(local, dict):
            return None
        states = {int(s["partitionId"]): str(s["state"]) for s in glob.get("states", [])
                  if s.get("zoneName") == ZONE}
        replicas: dict[int, dict[str, str]] = {}
        for s in local.get("states", []):
            if s.get("zoneName") == ZONE:
                replicas.setdefault(int(s["partitionId"]), {})[str(s["nodeName"])] = \
                    str(s["state"])
        return states, replicas

    def joined(self, node: IgniteNode, timeout: float) -> bool:
        """Wait until `node`'s current incarnation logged LabNode's "joined the cluster"."""
        marker = f"lab: node {node.name} joined the cluster".encode()
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline and node.up:
            with contextlib.suppress(OSError):
                if node.log.read_bytes().count(marker) >= node.incarnations:
                    return True
            time.sleep(0.5)
        return False


# --- the run ---------------------------------------------------------------------------------


def global_state(replicas: int, healthy: int) -> str:
    """A partition's global state as Ignite's disaster recovery computes it from its replicas'
    local states (``DisasterRecoveryManager.calculateGlobalState``): AVAILABLE when `healthy`
    replicas are the zone's REPLICAS, DEGRADED while they are a majority of them, READ_ONLY
    while one is, else UNAVAILABLE. With fewer nodes than REPLICAS, a settled zone is
    DEGRADED."""
    if healthy >= replicas:
        return "AVAILABLE"
    if healthy >= replicas // 2 + 1:
        return "DEGRADED"
    return "READ_ONLY" if healthy > 0 else "UNAVAILABLE"


class _Lines:
    """A process's stdout read on a thread of its own, line by line, each JSON line parsed."""

    def __init__(self, process: subprocess.Popen[bytes]) -> None:
        self.lines: queue.Queue[dict[str, Any] | None] = queue.Queue()
        assert process.stdout is not None
        stream = process.stdout

        def read() -> None:
            for raw in stream:
                with contextlib.suppress(ValueError):
                    doc = json.loads(raw)
                    if isinstance(doc, dict):
                        self.lines.put(doc)
            self.lines.put(None)

        threading.Thread(target=read, daemon=True).start()

    def next(self, timeout: float) -> dict[str, Any] | None:
        """The next JSON line within `timeout` s; None at its end or on timeout."""
        try:
            return self.lines.get(timeout=timeout)
        except queue.Empty:
            return None


def _summary(shown: Any) -> str:
    """What a settle saw last, in a line: the topology, the partitions' global states, and
    their replicas' local states by node."""
    if not isinstance(shown, tuple):
        return str(shown)
    names, states, replicas = shown
    return (f"topology {', '.join(names)}; global "
            f"{', '.join(f'{p}:{s}' for p, s in states)}; local "
            + "; ".join(f"{p}: " + " ".join(f"{n}={s}" for n, s in r) for p, r in replicas))


class _IgniteRun:
    """The schedule's execution against one cluster (checker/lab/run.py's `_Run`, with Ignite's
    settle and the metastorage's node spared)."""

    def __init__(self, cluster: IgniteCluster, journal: Journal, members: int, replicas: int,
                 seed: int, settle_timeout: float = 150.0) -> None:
        self.cluster = cluster
        self.journal = journal
        self.random = random.Random(seed)
        self.replicas = replicas
        self.expected = {n.name for n in cluster.nodes[:members]}
        self.next_spare = members
        self.settle_timeout = settle_timeout
        #: nodes lost without a graceful shutdown since the last settle, the most at once, the
        #: raft groups' size then, and whether a group lost its majority
        self.lost_now = 0
        self.lost_at_once = 0
        self.group = min(replicas, members)
        self.majority_lost = False

    def start(self, node: IgniteNode, init: bool = False, joining: bool = False) -> None:
        self.cluster.start(node, init=init)
        self.journal.write("join" if joining else "start", node, name=node.name)

    def wait_joined(self, nodes: list[IgniteNode], timeout: float = 240.0) -> None:
        for node in nodes:
            if not self.cluster.joined(node, timeout):
                raise RuntimeError(f"node {node.index} ({node.name}, {node.address}) did not "
                                   f"join the cluster within {timeout:.0f} s; its log: "
                                   f"{node.log}")

    def _snapshot(self) -> tuple[bool, Any]:
        """Whether the cluster looks settled now, and what it showed (to see it unchanged)."""
        names = self.cluster.topology()
        parts = self.cluster.partitions()
        if names is None or parts is None:
            return False, "no node's REST API answered"
        states, replicas = parts
        want = min(self.replicas, len(self.expected))
        shown = (sorted(names), sorted(states.items()),
                 sorted((p, sorted(r.items())) for p, r in replicas.items()))
        ok = (names == self.expected and len(states) == PARTITIONS
              and set(states.values()) == {global_state(self.replicas, want)}
              and len(replicas) == PARTITIONS
              and all(len(r) == want and set(r.values()) == {"HEALTHY"} and set(r) <= names
                      for r in replicas.values()))
        return ok, shown

    def settle(self, timeout: float | None = None) -> bool:
        """Wait until the logical topology is the nodes expected and every partition of the zone
        has ``min(replicas, nodes)`` replicas, all HEALTHY, and the global state that gives
        (`global_state`), unchanged for longer than the zone's scale timers: the data nodes
        change that long after the topology does, and only then the rebalance (a replica on a
        node that left is not reported by anyone, so the states alone do not tell the stable
        assignments before a scale down from those after it)."""
        timeout = timeout or self.settle_timeout
        deadline = time.monotonic() + timeout
        quiet = SCALE_SECONDS + 6.0
        since: float | None = None
        last: Any = None
        while time.monotonic() < deadline:
            ok, shown = self._snapshot()
            now = time.monotonic()
            if not ok or shown != last:
                since = now if ok else None
            last = shown
            if since is not None and now - since >= quiet:
                state = global_state(self.replicas, min(self.replicas, len(self.expected)))
                self.journal.write("settled", nodes=len(self.expected),
                                   note=f"{len(self.expected)} nodes, {PARTITIONS} partitions "
                                        f"{state}")
                self.lost_now = 0
                self.group = min(self.replicas, len(self.expected))
                return True
            time.sleep(1.0)
        self.journal.write("unsettled", nodes=len(self.expected),
                           note=f"{len(self.expected)} nodes expected, not settled within "
                                f"{timeout:.0f} s", shown=_summary(last))
        return False

    def left(self, node: IgniteNode, timeout: float = 60.0) -> None:
        """Wait until `node` has left the logical topology."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            names = self.cluster.topology()
            if names is not None and node.name not in names:
                self.journal.write("left", node, note="out of the logical topology")
                return
            time.sleep(1.0)
        self.journal.write("left", node, note=f"still in the logical topology after "
                                              f"{timeout:.0f} s")

    def rejoined(self, node: IgniteNode, timeout: float = 20.0) -> bool:
        """Whether `node`, resumed, is in the logical topology within `timeout` s (it is when the
        pause was shorter than ScaleCube's suspicion)."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            names = self.cluster.topology()
            if names is not None and node.name in names:
                return True
            time.sleep(1.0)
        return False

    def lose(self) -> None:
        self.lost_now += 1
        self.lost_at_once = max(self.lost_at_once, self.lost_now)
        if self.lost_now > (self.group - 1) // 2:
            self.majority_lost = True

    def target(self, step: Step) -> tuple[IgniteNode | None, str]:
        """The node `step` hits, or None and why not."""
        live = self.cluster.live()
        first = self.cluster.nodes[0]
        spares_metastorage = step.kind != "pause"
        if step.target in ("master", "1") and spares_metastorage:
            return None, ("node 1 holds the metastorage and the CMG, their only raft peer: "
                          f"a {step.kind} would stop the cluster for good")
        if len(live) < 2:
            return None, "it would leave no node up"
        if step.target == "master":
            return (first, "") if first in live else (None, "node 1 is down or paused")
        if step.target != "any":
            node = self.cluster.nodes[int(step.target) - 1]
            return (node, "") if node in live else (None, f"node {step.target} is down or "
                                                          "paused")
        candidates = [n for n in live if n is not first]
        if not candidates:
            return None, "no node up but node 1, which holds the metastorage"
        return self.random.choice(candidates), ""

    def fault(self, step: Step) -> None:
        cluster = self.cluster
        if step.kind == "join":
            if self.next_spare >= len(cluster.nodes):
                self.journal.write("skipped", fault=str(step), note="no spare port left")
                return
            node = cluster.nodes[self.next_spare]
            self.next_spare += 1
            self.expected.add(node.name)
            self.start(node, joining=True)
            self.wait_joined([node])
            return
        node, why = self.target(step)
        if node is None:
            self.journal.write("skipped", fault=str(step), note=why)
            return
        journal = self.journal
        if step.kind in ("kill", "restart"):
            journal.write("kill", node, fault=str(step))
            cluster.kill(node)
            self.lose()
            self.expected.discard(node.name)
            if step.kind == "restart":
                self.left(node)
                time.sleep(RESTART_AFTER)
                self.expected.add(node.name)
                self.start(node)
                self.wait_joined([node])
        elif step.kind == "shutdown":
            journal.write("shutdown", node, fault=str(step))
            ended = cluster.shutdown(node)
            journal.write("shut down" if ended else "killed", node,
                          note="graceful shutdown ended" if ended else
                          "graceful shutdown did not end in time: killed")
            self.expected.discard(node.name)
        elif step.kind == "pause":
            journal.write("pause", node, fault=str(step), seconds=PAUSE_FOR)
            cluster.pause(node)
            self.lose()
            time.sleep(PAUSE_FOR)
            cluster.resume(node)
            journal.write("resume", node)
            if not self.rejoined(node):
                # the others removed it while it was stopped, and refuse a removed node's
                # handshake from then on ("... is stale, it should be restarted to be allowed
                # to connect", HandshakeManagerUtils): only a new incarnation joins again
                journal.write("kill", node, fault=str(step),
                              note="stale after its removal: restarted, as Ignite asks")
                cluster.kill(node)
                self.start(node)
                self.wait_joined([node])


def _clean(out: Path, nodes: int) -> None:
    for stale in ("journal.jsonl", "history.jsonl", "client.log", "lab.json",
                  *(f"member-{i}.log" for i in range(1, max(nodes, 63) + 1))):
        (out / stale).unlink(missing_ok=True)
    members = out / "members"
    if members.is_dir():
        for work in members.glob("member-*/work"):
            shutil.rmtree(work, ignore_errors=True)


def run_ignite_lab(release: IgniteRelease, out: Path, members: int = 3,
                   faults: tuple[Step, ...] = (), seed: int = 0, level: str = "INFO",
                   rows: int = 200,
                   progress: Callable[[str], None] = lambda _m: None) -> LabReport:
    """Run an Ignite 3 cluster of `members` nodes, load `rows` rows, inject `faults` (each
    followed by a settle), verify every acknowledged row, stop everything; the run recorded in
    `out` (``member-N.log``, ``journal.jsonl``, ``history.jsonl``, ``client.log``, ``lab.json``).
    The logs are not judged here: `judge_ignite` does that."""
    started = time.perf_counter()
    logging_config(level)  # a bad level fails before anything starts
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    spares = sum(1 for step in faults if step.kind == "join")
    _clean(out, members + spares)
    replicas = min(3, members)
    report = LabReport(release.product, release.version, release.profile, level, members, seed,
                       [str(s) for s in faults], str(out), PARTITIONS)
    cluster = IgniteCluster(release, out, level, choose_ports(members + spares))
    journal = Journal(out / "journal.jsonl", progress)
    stop = out / ".stop-workload"
    stop.unlink(missing_ok=True)
    history = out / "history.jsonl"
    client_log = out / "client.log"
    try:
        with cluster:
            run = _IgniteRun(cluster, journal, members, replicas, seed)
            first = cluster.nodes[:members]
            for node in first[1:]:
                run.start(node)
            run.start(first[0], init=True)
            run.wait_joined(first)
            addresses = ",".join(f"{HOST}:{n.ports.client}" for n in cluster.nodes)
            setup = cluster.client(["setup", addresses, ZONE, TABLE, str(replicas),
                                    str(PARTITIONS), str(SCALE_SECONDS)], client_log)
            journal.write("workload", note="zone and table", pid=setup.pid)
            if setup.wait(180) != 0:
                raise RuntimeError(f"the zone and table could not be created (exit "
                                   f"{setup.returncode}); see {client_log}")
            journal.write("created", note=f"zone {ZONE} (REPLICAS {replicas}, PARTITIONS "
                          f"{PARTITIONS}, AUTO SCALE UP/DOWN {SCALE_SECONDS} s, aimem), "
                          f"table {TABLE}")
            run.settle()
            writer = cluster.client(["write", addresses, TABLE, str(history), str(rows),
                                     str(stop)], client_log)
            journal.write("workload", note=f"{rows} inserts, then one each 50 ms",
                          pid=writer.pid)
            lines = _Lines(writer)
            loaded = lines.next(timeout=max(120.0, rows * 0.5)) or {}
            journal.write("loaded", note=f"{loaded.get('loaded', '?')} of {rows} inserts "
                          "acknowledged", rows=loaded.get("loaded"))
            for step in faults:
                time.sleep(3.0)
                run.fault(step)
                run.settle()
            time.sleep(3.0)
            stop.touch()
            try:
                writer.wait(120)
            except subprocess.TimeoutExpired:
                writer.kill()
            written = lines.next(1.0) or {}
            journal.write("workload stopped", note=f"{written.get('written', '?')} of "
                          f"{written.get('tried', '?')} inserts acknowledged")
            verify_addresses = ",".join(f"{HOST}:{n.ports.client}" for n in cluster.live())
            verifier = cluster.client(["verify", verify_addresses, TABLE, str(history)],
                                      client_log)
            journal.write("workload", note="read back", pid=verifier.pid)
            summary = _Lines(verifier).next(timeout=300.0) or {}
            with contextlib.suppress(subprocess.TimeoutExpired):
                verifier.wait(30)
            promised = not run.majority_lost
            report.data = dict(summary, lost_at_once=run.lost_at_once, promised=promised,
                               replicas=replicas)
            journal.write("verified", note=f"{summary.get('acknowledged', 0)} acknowledged "
                          f"inserts, {summary.get('lost_count', '?')} not read back")
            live = cluster.live()
            for node in live:
                journal.write("stop", node)
                if node.process is not None and node is not cluster.nodes[0]:
                    with contextlib.suppress(ProcessLookupError):
                        node.process.terminate()
            for node in reversed(live):
                if cluster.shutdown(node, timeout=60.0):
                    journal.write("stopped", node)
                else:
                    journal.write("killed", node, note="did not stop within 60 s")
    finally:
        cluster.kill_all()
        stop.unlink(missing_ok=True)
        for node in cluster.nodes:
            shutil.rmtree(node.work, ignore_errors=True)
        journal.close()
    report.journal = journal.entries
    report.seconds = round(time.perf_counter() - started, 1)
    report.detail = "recorded; not judged (judge_ignite)"
    (out / "lab.json").write_text(json.dumps(asdict(report), indent=1) + "\n")
    return report


def judge_ignite(report: LabReport, progress: Callable[[str], None] = lambda _m: None,
                 seconds: float = 300.0, mb: int = 4096,
                 models: tuple[str, ...] = CONFORM_MODELS) -> LabReport:
    """`partsafe validate` and `partsafe conform MODEL` of a recorded run's logs and the data
    check, into one verdict (checker/lab/run.py's `judge_logs`); ``lab.json`` written again."""
    out = Path(report.out)
    judge_logs(report, out, progress, models=models, settings=(), profile=report.profile,
               seconds=seconds, mb=mb, data_text=_data_text)
    (out / "lab.json").write_text(json.dumps(asdict(report), indent=1) + "\n")
    return report


def _data_text(data: dict[str, Any]) -> str:
    if not data["promised"]:
        return (f"data not judged: a fault took a raft group's majority (at most "
                f"{data['lost_at_once']} nodes lost at once, of {data['replicas']} replicas "
                "or fewer nodes)")
    if data.get("lost_count"):
        return f"{data['lost_count']} of {data['acknowledged']} acknowledged inserts lost"
    return f"{data.get('acknowledged', 0)} acknowledged inserts read back"

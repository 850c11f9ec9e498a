"""A real Hazelcast cluster on this machine: each member its own JVM on loopback, its log in the
product's default layout (java.util.logging's two-line records on the console, which the lab
writes to the member's file), and every process the lab starts stopped by its id on exit.

A member's configuration is the one the lab writes (`member_config`): TCP-IP join over the
members' loopback addresses, multicast off, phone-home off, and failure detection and split-brain
merging shortened so that a run of a minute or two shows suspicion, removal and merge:

- ``hazelcast.heartbeat.interval.seconds=1``, ``hazelcast.max.no.heartbeat.seconds=8`` (the
  defaults are 5 and 60): a member paused for 12 s is suspected and removed;
- ``hazelcast.merge.first.run.delay.seconds=10``, ``hazelcast.merge.next.run.delay.seconds=5``
  (defaults 300 and 120): the members that a pause or a partition split off merge back soon;
- ``hazelcast.shutdownhook.policy=GRACEFUL``: SIGTERM is Hazelcast's graceful shutdown, which
  hands the member's replicas off before it leaves (the default, TERMINATE, does not).

The logging configuration (`logging_config`) sets the root logger to INFO and, at FINE or FINEST,
the cluster and partition packages (``com.hazelcast.internal.cluster``,
``com.hazelcast.internal.partition``; 3.x also ``com.hazelcast.cluster``) to that level.
"""

from __future__ import annotations

import contextlib
import os
import re
import signal
import socket
import subprocess
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO

from partsafe.checker.lab.releases import Release, java_binary

__all__ = ["JVM_FLAGS", "LEVELS", "Cluster", "Member", "Network", "free_ports", "signal_process",
           "stop"]

#: the flags Hazelcast's documentation lists for Java 9 and later ("Running in Modular Java")
JVM_FLAGS = (
    "--add-modules", "java.se",
    "--add-exports", "java.base/jdk.internal.ref=ALL-UNNAMED",
    "--add-opens", "java.base/java.lang=ALL-UNNAMED",
    "--add-opens", "java.base/java.nio=ALL-UNNAMED",
    "--add-opens", "java.base/sun.nio.ch=ALL-UNNAMED",
    "--add-opens", "java.management/sun.management=ALL-UNNAMED",
    "--add-opens", "jdk.management/com.sun.management.internal=ALL-UNNAMED",
)
LEVELS = ("INFO", "FINE", "FINEST")
#: the loggers of the protocols: the cluster and partition packages
PROTOCOL_PACKAGES = ("com.hazelcast.internal.cluster", "com.hazelcast.internal.partition",
                     "com.hazelcast.cluster")
CLUSTER_NAME = "lab"
HOST = "127.0.0.1"
#: Hazelcast's default partition count (``hazelcast.partition.count``)
DEFAULT_PARTITIONS = 271

_PROPERTIES = {
    "hazelcast.phone.home.enabled": "false",
    "hazelcast.logging.type": "jdk",
    "hazelcast.heartbeat.interval.seconds": "1",
    "hazelcast.max.no.heartbeat.seconds": "8",
    "hazelcast.merge.first.run.delay.seconds": "10",
    "hazelcast.merge.next.run.delay.seconds": "5",
    "hazelcast.shutdownhook.policy": "GRACEFUL",
    "hazelcast.graceful.shutdown.max.wait": "60",
}


def free_ports(count: int, start: int = 5701) -> list[int]:
    """`count` consecutive ports from `start` on that nobody listens on (loopback)."""
    port = start
    while port < 65000:
        block = list(range(port, port + count))
        if all(_free(p) for p in block):
            return block
        port += count
    raise OSError(f"no {count} consecutive free ports on {HOST}")


def _free(port: int) -> bool:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            s.bind((HOST, port))
        except OSError:
            return False
    return True


def member_config(release: Release, port: int, peers: list[int] | list[str], backups: int,
                  partitions: int = DEFAULT_PARTITIONS, host: str = HOST) -> str:
    """The member's hazelcast.xml (3.x: ``<group>``; 4.0 and later: ``<cluster-name>``);
    `peers` are the members' ports on `host`, or their ``host:port`` addresses."""
    name = (f"<group><name>{CLUSTER_NAME}</name></group>" if release.major == 3
            else f"<cluster-name>{CLUSTER_NAME}</cluster-name>")
    properties = {**_PROPERTIES, "hazelcast.partition.count": str(partitions)}
    props = "\n".join(f'    <property name="{k}">{v}</property>' for k, v in properties.items())
    members = "".join(f"<member>{p if isinstance(p, str) else f'{host}:{p}'}</member>"
                      for p in peers)
    return f"""<?xml version="1.0" encoding="UTF-8"?>
<hazelcast xmlns="http://www.hazelcast.com/schema/config">
  {name}
  <properties>
{props}
  </properties>
  <network>
    <port auto-increment="false">{port}</port>
    <join>
      <multicast enabled="false"/>
      <tcp-ip enabled="true">{members}</tcp-ip>
    </join>
    <interfaces enabled="true"><interface>{host}</interface></interfaces>
  </network>
  <map name="lab"><backup-count>{backups}</backup-count></map>
</hazelcast>
"""


def logging_config(level: str) -> str:
    """A java.util.logging configuration: the console handler and SimpleFormatter of the JDK's
    defaults (the two-line record), the protocols' packages at `level`."""
    lines = ["handlers=java.util.logging.ConsoleHandler",
             "java.util.logging.ConsoleHandler.level=ALL",
             "java.util.logging.ConsoleHandler.formatter=java.util.logging.SimpleFormatter",
             ".level=INFO"]
    if level != "INFO":
        lines += [f"{package}.level={level}" for package in PROTOCOL_PACKAGES]
    return "\n".join(lines) + "\n"


def stop(process: subprocess.Popen[bytes], timeout: float) -> bool:
    """SIGTERM, then SIGKILL after `timeout` s (SIGCONT first: a stopped JVM runs no hook).
    True when it ended by itself."""
    if process.poll() is not None:
        return True
    with contextlib.suppress(ProcessLookupError):
        os.kill(process.pid, signal.SIGCONT)
        process.terminate()
    try:
        process.wait(timeout)
        return True
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()
        return False


def signal_process(process: subprocess.Popen[bytes] | None, signum: int) -> bool:
    """Send `signum` to `process` if it runs; whether it did."""
    if process is None or process.poll() is not None:
        return False
    with contextlib.suppress(ProcessLookupError):
        os.kill(process.pid, signum)
        return True
    return False


@dataclass
class Member:
    """One member: its port, its folder, its log, and the process of its current incarnation."""

    index: int
    port: int
    folder: Path
    process: subprocess.Popen[bytes] | None = None
    incarnations: int = 0
    paused: bool = False
    #: its address's host: loopback, or its network namespace's (`Network`)
    host: str = HOST
    #: its network namespace, when the run has them
    namespace: str | None = None

    @property
    def address(self) -> str:
        return f"{self.host}:{self.port}"

    @property
    def log(self) -> Path:
        """``member-N.log`` in the run's folder, beside ``members/`` that holds its config."""
        return self.folder.parent.parent / f"member-{self.index}.log"

    @property
    def up(self) -> bool:
        return self.process is not None and self.process.poll() is None


@dataclass
class Cluster:
    """The members of one lab run; a context manager that stops every process it started, by its
    id, however the run ends (an error, Ctrl-C)."""

    release: Release
    out: Path
    level: str
    backups: int
    ports: list[int]
    partitions: int = DEFAULT_PARTITIONS
    #: each member in a network namespace of its own (a run with network partitions)
    network: Network | None = None
    members: list[Member] = field(default_factory=list)
    _logs: list[IO[bytes]] = field(default_factory=list)

    def __post_init__(self) -> None:
        (self.out / "members").mkdir(parents=True, exist_ok=True)
        (self.out / "members" / "logging.properties").write_text(logging_config(self.level))
        self.members = [Member(i + 1, port, self.out / "members" / f"member-{i + 1}")
                        for i, port in enumerate(self.ports)]
        if self.network is not None:
            for member in self.members:
                member.host, member.namespace = self.network.join(member.index)

    def _peers(self) -> list[int] | list[str]:
        if self.network is None:
            return self.ports
        return [m.address for m in self.members]

    def __enter__(self) -> Cluster:
        return self

    def __exit__(self, *exc: object) -> None:
        self.kill_all()

    # --- one member ---------------------------------------------------------------------------

    def start(self, member: Member) -> None:
        """Start `member`'s JVM (a new incarnation when it ran before): its log is appended to."""
        member.folder.mkdir(parents=True, exist_ok=True)
        config = member.folder / "hazelcast.xml"
        config.write_text(member_config(self.release, member.port, self._peers(),
                                        self.backups, self.partitions, member.host))
        log = open(member.log, "ab")  # noqa: SIM115 (closed by kill_all)
        self._logs.append(log)
        cmd = [java_binary(), *JVM_FLAGS, "-Xms64m", "-Xmx384m", "-XX:+UseSerialGC",
               f"-Dhazelcast.config={config}",
               f"-Djava.util.logging.config.file={self.out / 'members' / 'logging.properties'}",
               "-cp", str(self.release.jar), self.release.main_class]
        if member.namespace is not None:  # `ip netns exec` execs it: the pid is the JVM's
            cmd = ["ip", "netns", "exec", member.namespace, *cmd]
        member.process = subprocess.Popen(cmd, cwd=member.folder, stdout=log,
                                          stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                          start_new_session=True)
        member.incarnations += 1
        member.paused = False

    def kill(self, member: Member) -> None:
        """kill -9 of the member's JVM."""
        if member.process is not None and member.process.poll() is None:
            if member.paused:
                os.kill(member.process.pid, signal.SIGCONT)
            member.process.kill()
            member.process.wait()
        member.paused = False

    def shutdown(self, member: Member, timeout: float = 90.0) -> bool:
        """A graceful shutdown (SIGTERM; the lab's members shut down gracefully on it); kill -9 if
        it has not ended within `timeout` seconds. True when it ended by itself."""
        if member.process is None:
            return True
        ended = stop(member.process, timeout)
        member.paused = False
        return ended

    def pause(self, member: Member) -> None:
        member.paused = signal_process(member.process, signal.SIGSTOP)

    def resume(self, member: Member) -> None:
        signal_process(member.process, signal.SIGCONT)
        member.paused = False

    def kill_all(self) -> None:
        """Every process the lab started, stopped by its id; the log files closed."""
        for member in self.members:
            with contextlib.suppress(ProcessLookupError, OSError):
                self.kill(member)
        for log in self._logs:
            log.close()
        self._logs.clear()
        if self.network is not None:
            self.network.remove()

    # --- what the logs say ----------------------------------------------------------------------

    def live(self) -> list[Member]:
        return [m for m in self.members if m.up and not m.paused]

    def list_size(self, member: Member) -> int | None:
        """The size of the last member list `member`'s current incarnation printed, if any."""
        size = None
        with contextlib.suppress(OSError), open(member.log, "rb") as log:
            log.seek(max(0, member.log.stat().st_size - (1 << 20)))
            for found in _LIST_HEAD.finditer(log.read()):
                size = int(found[1] or found[2])
        return size

    def wait_for(self, expected: int, timeout: float) -> bool:
        """Wait until every live member's last list has `expected` members; False on timeout."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            live = self.live()
            if live and all(self.list_size(m) == expected for m in live):
                return True
            time.sleep(0.5)
        return False

    def cut(self, member: Member) -> None:
        """Cut `member` off from every other member and the client (a network partition)."""
        assert self.network is not None
        self.network.cut(member.index)

    def heal(self, member: Member) -> None:
        assert self.network is not None
        self.network.heal(member.index)

    def started(self, member: Member, timeout: float) -> bool:
        """Wait until `member`'s current incarnation printed ``[h]:p is STARTED``."""
        marker = f"{member.address.replace(':', ']:', 1)} is STARTED".encode()
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline and member.up:
            with contextlib.suppress(OSError):
                if member.log.read_bytes().count(marker) >= member.incarnations:
                    return True
            time.sleep(0.3)
        return False


_LIST_HEAD = re.compile(rb"Members \{size:(\d+)|Members \[(\d+)\]")


class Network:
    """Each member in a network namespace of its own, for network partitions: a hub namespace
    holds a bridge, and each member's namespace a veth pair's end on it, member N at
    10.203.K.N/24 (K: one run's own subnet), the hub at 10.203.K.254 (where the lab's client
    runs). A partition of member N sets the hub's end of its pair down; the heal sets it up.
    Made with `ip` as root, on addresses of this run's own namespaces only; every namespace is
    deleted at the end of the run (its veths with it)."""

    def __init__(self, members: int, run_id: int | None = None) -> None:
        if os.geteuid() != 0:
            raise PermissionError("a network partition needs each member in a network "
                                  "namespace of its own, which only root can make")
        self.k = run_id if run_id is not None else os.getpid() % 200 + 20
        self.prefix = f"ps{self.k}"
        self.hub = f"{self.prefix}hub"
        self.members: list[str] = []
        for stale in [self.hub, *(f"{self.prefix}m{i}" for i in range(1, members + 1))]:
            with contextlib.suppress(OSError):  # a namespace a killed run left behind
                self._ip("netns", "del", stale)
        self._ip("netns", "add", self.hub)
        self._ip("-n", self.hub, "link", "set", "lo", "up")
        self._ip("-n", self.hub, "link", "add", "br0", "type", "bridge")
        self._ip("-n", self.hub, "addr", "add", f"{self.subnet}.254/24", "dev", "br0")
        self._ip("-n", self.hub, "link", "set", "br0", "up")
        self.size = members

    @property
    def subnet(self) -> str:
        return f"10.203.{self.k}"

    @property
    def client_host(self) -> str:
        return f"{self.subnet}.254"

    @staticmethod
    def _ip(*args: str) -> None:
        done = subprocess.run(["ip", *args], capture_output=True, text=True, check=False)
        if done.returncode != 0:
            raise OSError(f"ip {' '.join(args)}: {done.stderr.strip() or done.returncode}")

    def join(self, index: int) -> tuple[str, str]:
        """Member `index`'s namespace, its end of a veth pair on the hub's bridge: its host and
        namespace."""
        ns = f"{self.prefix}m{index}"
        self._ip("netns", "add", ns)
        self.members.append(ns)
        self._ip("-n", ns, "link", "set", "lo", "up")
        self._ip("-n", self.hub, "link", "add", f"h{index}", "type", "veth", "peer", "name",
                 "eth0", "netns", ns)
        self._ip("-n", self.hub, "link", "set", f"h{index}", "master", "br0")
        self._ip("-n", self.hub, "link", "set", f"h{index}", "up")
        host = f"{self.subnet}.{index}"
        self._ip("-n", ns, "addr", "add", f"{host}/24", "dev", "eth0")
        self._ip("-n", ns, "link", "set", "eth0", "up")
        return host, ns

    def cut(self, index: int) -> None:
        self._ip("-n", self.hub, "link", "set", f"h{index}", "down")

    def heal(self, index: int) -> None:
        self._ip("-n", self.hub, "link", "set", f"h{index}", "up")

    def wrap(self, cmd: list[str]) -> list[str]:
        """`cmd` run in the hub's namespace (the client's)."""
        return ["ip", "netns", "exec", self.hub, *cmd]

    def remove(self) -> None:
        for ns in [*self.members, self.hub]:
            with contextlib.suppress(OSError):
                self._ip("netns", "del", ns)
        self.members.clear()


"""`partsafe lab`: a real cluster run here under a seeded fault schedule, recorded, then judged.

A run writes into its folder (``--out``):

- ``member-N.log``: each member's log, in the product's default layout (all its incarnations);
- ``journal.jsonl``: what the lab did and when: each member's start, each fault, each wait and
  how it ended (`Journal`);
- ``history.jsonl``: the client's operations (checker/lab/workload.py);
- ``validate.json``, ``report.html``: `partsafe validate` of the logs;
- ``conform-MODEL.json``: `partsafe conform` of the logs against the release's profile;
- ``lab.json``: the run's report, and the one verdict: a violation (1) when `validate` finds one,
  when the logs do not conform, or when an acknowledged write is lost where the design promises
  it is kept; incomplete (3) when a judge reached its bound or judged nothing; else ok (0).

The data check: once the cluster has healed, every acknowledged put is read back. Hazelcast's
maps keep `backups` copies beside the owner (design 000 §1, 004), so the design promises the
data only while at most `backups` members are lost at once without a graceful shutdown (a kill,
or a pause long enough to be removed) before the cluster has re-replicated; the lab waits for
the rebalance after each fault, so each fault loses at most one member. Where the schedule lost
more at once, the check is reported, not judged.
"""

from __future__ import annotations

import json
import os
import random
import resource
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, TextIO

from partsafe.checker.lab.cluster import DEFAULT_PARTITIONS, Cluster, Member, Network, free_ports
from partsafe.checker.lab.faults import PARTITION_FOR, PAUSE_FOR, RESTART_AFTER, Step
from partsafe.checker.lab.releases import Release

__all__ = ["LabConfig", "LabReport", "judge", "run_lab"]

#: the models whose designs a Hazelcast run is conformed to (`partsafe conform MODEL`)
CONFORM_MODELS = ("membership",)


@dataclass(frozen=True)
class LabConfig:
    """What one lab run does (``partsafe lab``'s options)."""

    release: Release
    out: Path
    members: int = 3
    faults: tuple[Step, ...] = ()
    seed: int = 0
    level: str = "INFO"
    backups: int = 1
    entries: int = 1000
    #: the partition count (``hazelcast.partition.count``); a FINEST log's size grows with it
    partitions: int = DEFAULT_PARTITIONS
    #: seconds of workload between two faults, once the cluster has settled
    gap: float = 3.0
    #: the longest the lab waits for the cluster to settle after a fault
    settle_timeout: float = 90.0
    #: the longest a judge (`validate`, `conform`) may run, and the memory it may take
    judge_seconds: float = 300.0
    judge_mb: int = 4096
    #: judge the run once recorded (the corpus recorder records only; its tests judge)
    judge: bool = True


@dataclass
class JudgeRun:
    """One judge's outcome: its command, exit status, JSON report, seconds and peak memory."""

    command: list[str]
    status: int
    report: dict[str, Any] | None
    seconds: float
    peak_mb: float
    note: str = ""


@dataclass
class LabReport:
    """A lab run's record (``lab.json``)."""

    release: str
    version: str
    profile: str
    level: str
    members: int
    seed: int
    faults: list[str]
    out: str
    partitions: int = 271
    verdict: str = "incomplete"
    detail: str = ""
    seconds: float = 0.0
    journal: list[dict[str, Any]] = field(default_factory=list)
    data: dict[str, Any] = field(default_factory=dict)
    validate: dict[str, Any] = field(default_factory=dict)
    conform: dict[str, dict[str, Any]] = field(default_factory=dict)


class Journal:
    """``journal.jsonl``: one line per thing the lab does, with its wall-clock time (ms)."""

    def __init__(self, path: Path, progress: Callable[[str], None]) -> None:
        self.file: TextIO = open(path, "a", encoding="utf-8")  # noqa: SIM115
        self.entries: list[dict[str, Any]] = []
        self.progress = progress

    def write(self, what: str, member: Member | None = None, **fields: Any) -> None:
        entry: dict[str, Any] = {"t": int(time.time() * 1000), "what": what}
        if member is not None:
            entry.update(member=member.index, address=member.address,
                         pid=member.process.pid if member.process else None)
        entry.update(fields)
        self.entries.append(entry)
        self.file.write(json.dumps(entry) + "\n")
        self.file.flush()
        who = f" member {member.index} ({member.address})" if member is not None else ""
        note = f": {fields['note']}" if "note" in fields else ""
        self.progress(f"{what}{who}{note}")

    def close(self) -> None:
        self.file.close()


def _master(cluster: Cluster) -> Member | None:
    """The oldest member of the last member list a live member printed: the master."""
    for member in cluster.live():
        with open(member.log, "rb") as log:
            text = log.read()
        at = max(text.rfind(b"Members {size:"), text.rfind(b"Members ["))
        if at < 0:
            continue
        line = text[at:].split(b"\n", 2)[1:2]
        for candidate in cluster.members:
            host, port = candidate.address.rsplit(":", 1)
            if line and f"[{host}]:{port} ".encode() in line[0] + b" ":
                return candidate
    return None


def _rebalanced(cluster: Cluster, timeout: float) -> bool:
    """Wait until the master's log shows no repartitioning after its last completed one."""
    deadline = time.monotonic() + timeout
    time.sleep(2.0)
    while time.monotonic() < deadline:
        master = _master(cluster)
        if master is None:
            return False
        text = master.log.read_bytes()
        started = max(text.rfind(b"epartitioning cluster data"),
                      text.rfind(b"Re-partitioning cluster data"))
        ended = max(text.rfind(b"All migration tasks have been completed"),
                    text.rfind(b"no need to re"))
        if started < 0 or ended > started:
            return True
        time.sleep(0.5)
    return False


class _Run:
    """The schedule's execution against one cluster."""

    def __init__(self, config: LabConfig, cluster: Cluster, journal: Journal) -> None:
        self.config = config
        self.cluster = cluster
        self.journal = journal
        self.random = random.Random(config.seed)
        self.expected = config.members
        self.next_spare = config.members
        #: members lost without a graceful shutdown, and the most lost before a settle
        self.lost_now = 0
        self.lost_at_once = 0

    def start(self, member: Member, joining: bool = False) -> None:
        self.cluster.start(member)
        self.journal.write("join" if joining else "start", member)
        if not self.cluster.started(member, 120.0):
            raise RuntimeError(f"member {member.index} ({member.address}) did not start within "
                               f"120 s; its log: {member.log}")

    def settle(self, longer: float = 1.0) -> None:
        """Wait until every live member lists the members expected and the master's rebalance
        has ended (`longer` times the settle timeout: a paused member's merge back takes the
        split-brain handler's delay and a rejoin)."""
        timeout = self.config.settle_timeout * longer
        ok = self.cluster.wait_for(self.expected, timeout)
        balanced = ok and _rebalanced(self.cluster, timeout)
        self.journal.write("settled" if balanced else "unsettled", members=self.expected,
                           note=f"{self.expected} members" + ("" if balanced else
                                                              ", not within the timeout"))
        if balanced:
            self.lost_now = 0

    def target(self, step: Step) -> Member | None:
        live = self.cluster.live()
        if len(live) < 2:
            return None
        if step.target == "master":
            return _master(self.cluster)
        if step.target != "any":
            member = self.cluster.members[int(step.target) - 1]
            return member if member in live else None
        return self.random.choice(live)

    def lose(self) -> None:
        self.lost_now += 1
        self.lost_at_once = max(self.lost_at_once, self.lost_now)

    def fault(self, step: Step) -> None:
        cluster = self.cluster
        if step.kind == "join":
            if self.next_spare >= len(cluster.members):
                self.journal.write("skipped", fault=str(step), note="no spare port left")
                return
            member = cluster.members[self.next_spare]
            self.next_spare += 1
            self.expected += 1
            self.start(member, joining=True)
            return
        member = self.target(step)
        if member is None:
            self.journal.write("skipped", fault=str(step),
                               note="it would leave no member up, or its target is down")
            return
        if step.kind in ("kill", "restart"):
            self.journal.write("kill", member, fault=str(step))
            cluster.kill(member)
            self.lose()
            self.expected -= 1
            if step.kind == "restart":
                self.settle()
                time.sleep(max(0.0, RESTART_AFTER - self.config.gap))
                self.expected += 1
                self.start(member)
        elif step.kind == "shutdown":
            self.journal.write("shutdown", member, fault=str(step))
            ended = cluster.shutdown(member)
            self.journal.write("shut down" if ended else "killed", member,
                               note="graceful shutdown ended" if ended else
                               "graceful shutdown did not end in time: killed")
            self.expected -= 1
        elif step.kind == "pause":
            self.journal.write("pause", member, fault=str(step), seconds=PAUSE_FOR)
            cluster.pause(member)
            self.lose()
            time.sleep(PAUSE_FOR)
            cluster.resume(member)
            self.journal.write("resume", member)
        elif step.kind == "partition":
            self.journal.write("partition", member, fault=str(step), seconds=PARTITION_FOR,
                               note="cut off from the others")
            cluster.cut(member)
            self.lose()
            time.sleep(PARTITION_FOR)
            cluster.heal(member)
            self.journal.write("heal", member)


def _workload(config: LabConfig, cluster: Cluster, mode: str, stop: Path | None,
              addresses: list[str]) -> subprocess.Popen[bytes]:
    release = config.release
    env = dict(os.environ)
    if release.client_path is not None:
        env["PYTHONPATH"] = os.pathsep.join(
            [str(release.client_path), *filter(None, [env.get("PYTHONPATH")])])
    script = Path(__file__).with_name("workload.py")
    cmd = [sys.executable, "-W", "ignore", str(script), mode, "--addresses", *addresses,
           "--history", str(config.out / "history.jsonl"), "--entries", str(config.entries)]
    if stop is not None:
        cmd += ["--stop", str(stop)]
    if cluster.network is not None:
        cmd = cluster.network.wrap(cmd)
    log = open(config.out / "client.log", "ab")  # noqa: SIM115 (the child holds it)
    return subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=log, env=env,
                            stdin=subprocess.DEVNULL, cwd=config.out)


def _last_json(text: bytes) -> dict[str, Any] | None:
    for line in reversed(text.decode("utf-8", "replace").splitlines()):
        if line.startswith("{"):
            try:
                return json.loads(line)
            except json.JSONDecodeError:
                return None
    return None


def run_lab(config: LabConfig, progress: Callable[[str], None] = lambda _m: None) -> LabReport:
    """Run the cluster, inject the schedule, verify the data, stop everything, then judge."""
    started = time.perf_counter()
    out = config.out
    out.mkdir(parents=True, exist_ok=True)
    for stale in ("journal.jsonl", "history.jsonl", "client.log",
                  *(f"member-{i}.log" for i in range(1, 64))):
        (out / stale).unlink(missing_ok=True)
    spares = sum(1 for step in config.faults if step.kind == "join")
    release = config.release
    report = LabReport(release.product, release.version, release.profile, config.level,
                       config.members, config.seed, [str(s) for s in config.faults], str(out),
                       config.partitions)
    journal = Journal(out / "journal.jsonl", progress)
    stop = out / ".stop-workload"
    stop.unlink(missing_ok=True)
    writer: subprocess.Popen[bytes] | None = None
    network: Network | None = None
    try:
        if any(step.kind == "partition" for step in config.faults):
            network = Network(config.members + spares)
        ports = ([5701] * (config.members + spares) if network is not None
                 else free_ports(config.members + spares))
        with Cluster(release, out, config.level, config.backups, ports, config.partitions,
                     network) as cluster:
            run = _Run(config, cluster, journal)
            for member in cluster.members[: config.members]:
                run.start(member)
            run.settle()
            addresses = [m.address for m in cluster.members]
            writer = _workload(config, cluster, "write", stop, addresses)
            assert writer.stdout is not None
            loaded = _last_json(writer.stdout.readline())
            journal.write("loaded", note=f"{config.entries} entries put",
                          entries=(loaded or {}).get("loaded"))
            for step in config.faults:
                time.sleep(config.gap)
                run.fault(step)
                run.settle(3.0 if step.kind in ("pause", "partition") else 1.0)
            time.sleep(config.gap)
            stop.touch()
            writer.wait(120)
            journal.write("workload stopped")
            verifier = _workload(config, cluster, "verify", None,
                                 [m.address for m in cluster.live()])
            summary = _last_json(verifier.communicate(timeout=300)[0]) or {}
            report.data = dict(summary, lost_at_once=run.lost_at_once,
                               promised=run.lost_at_once <= config.backups)
            journal.write("verified", note=f"{summary.get('acknowledged', 0)} acknowledged "
                          f"writes, {summary.get('lost_count', '?')} not read back")
            for member in reversed(cluster.live()):
                journal.write("stop", member)
                cluster.shutdown(member, timeout=60.0)
    finally:
        if writer is not None and writer.poll() is None:
            writer.kill()
        if network is not None:
            network.remove()
        stop.unlink(missing_ok=True)
        journal.close()
    report.journal = journal.entries
    if config.judge:
        judge(config, report, progress)
    report.seconds = round(time.perf_counter() - started, 1)
    (out / "lab.json").write_text(json.dumps(asdict(report), indent=1) + "\n")
    return report


def _run_judge(args: list[str], out: Path, name: str, seconds: float, mb: int) -> JudgeRun:
    """`partsafe ARGS` in a child process bounded in time and address space; its stdout in
    ``out/NAME``."""
    cmd = [sys.executable, "-m", "partsafe", *args]
    limit = mb << 20

    def bound() -> None:
        resource.setrlimit(resource.RLIMIT_AS, (limit, limit))

    started = time.perf_counter()
    with open(out / name, "wb") as stdout, open(out / f"{name}.stderr", "wb") as stderr:
        process = subprocess.Popen(cmd, stdout=stdout, stderr=stderr, stdin=subprocess.DEVNULL,
                                   preexec_fn=bound, cwd=out)
        timer = threading.Timer(seconds, process.kill)
        timer.start()
        _pid, status, usage = os.wait4(process.pid, 0)
        timer.cancel()
    process.returncode = os.waitstatus_to_exitcode(status)
    elapsed = time.perf_counter() - started
    note = ""
    if process.returncode < 0:
        note = (f"stopped after {seconds:.0f} s" if elapsed >= seconds - 0.5
                else f"ended by signal {-process.returncode}")
    try:
        report = json.loads((out / name).read_text())
    except (OSError, json.JSONDecodeError):
        report = None
        if not note:
            tail = (out / f"{name}.stderr").read_text(errors="replace").strip().splitlines()
            note = tail[-1] if tail else f"exit {process.returncode}"
    return JudgeRun(cmd, process.returncode, report, round(elapsed, 2),
                    round(usage.ru_maxrss / 1024, 1), note)


def judge(config: LabConfig, report: LabReport, progress: Callable[[str], None]) -> None:
    """`validate` and `conform` of a Hazelcast run's logs, and the data check, into one
    verdict."""
    judge_logs(report, config.out, progress, models=CONFORM_MODELS,
               settings=("--config", f"backups={config.backups}"),
               profile=config.release.profile, seconds=config.judge_seconds,
               mb=config.judge_mb, data_text=lambda data: _data_text(data, config.backups))


def _data_text(data: dict[str, Any], backups: int) -> str:
    if not data["promised"]:
        return (f"data not judged: {data['lost_at_once']} members lost at once, more than the "
                f"{backups} backups")
    if data.get("lost_count"):
        return f"{data['lost_count']} of {data['acknowledged']} acknowledged writes lost"
    return f"{data.get('acknowledged', 0)} acknowledged writes read back"


def judge_logs(report: LabReport, out: Path, progress: Callable[[str], None], *,
               models: tuple[str, ...], settings: tuple[str, ...], profile: str,
               seconds: float, mb: int, data_text: Callable[[dict[str, Any]], str]) -> None:
    """`partsafe validate` and `partsafe conform MODEL --profile PROFILE` of the run's logs in
    `out` (`_run_judge`: children bounded by `seconds` and `mb`), and the data check of
    `report.data` (`data_text` words it), into `report`'s one verdict: a violation when any
    judge finds one or an acknowledged write is lost where the design promises it; incomplete
    when a judge did not decide or the data was not checked; else ok."""
    logs = sorted(p.name for p in out.glob("member-*.log"))
    progress("judging: partsafe validate")
    run = _run_judge(["validate", *logs, "--json", "--html", "report.html", *settings], out,
                     "validate.json", seconds, mb)
    report.validate = _validate_summary(run)
    for model in models:
        progress(f"judging: partsafe conform {model}")
        run = _run_judge(["conform", model, *logs, "--json", "--profile", profile], out,
                         f"conform-{model}.json", seconds, mb)
        report.conform[model] = _conform_summary(run)
    verdicts = [report.validate["result"], *(c["result"] for c in report.conform.values())]
    data = report.data
    if not data or "acknowledged" not in data:
        verdicts.append("incomplete")
        text = "data not checked"
    else:
        text = data_text(data)
        if data["promised"] and data.get("lost_count"):
            verdicts.append("violation")
        data["verdict"] = text
    report.verdict = next(w for w in ("violation", "incomplete", "ok")
                          if w in verdicts or w == "ok")
    conform_text = "; ".join(f"conform {m}: {c['verdict']}" for m, c in report.conform.items())
    report.detail = f"validate: {report.validate['detail']}; {conform_text}; {text}"


def _validate_summary(run: JudgeRun) -> dict[str, Any]:
    doc = run.report
    if doc is None:
        return {"result": "incomplete", "detail": f"did not finish ({run.note})",
                "seconds": run.seconds, "peak_mb": run.peak_mb}
    violations = doc.get("violations", [])
    return {
        "result": doc.get("result", "incomplete"),
        "detail": f"{len(violations)} violations, {len(doc.get('malformed', []))} malformed "
                  f"lines, {len(doc.get('specs', []))} specs judged",
        "lines": doc.get("lines"), "events": doc.get("events"),
        "malformed": len(doc.get("malformed", [])), "specs": doc.get("specs", []),
        "violations": [{"spec": v.get("spec"), "member": v.get("member"),
                        "message": v.get("message")} for v in violations[:20]],
        "violation_count": len(violations),
        "seconds": run.seconds, "peak_mb": run.peak_mb,
    }


def _conform_summary(run: JudgeRun) -> dict[str, Any]:
    doc = run.report
    if doc is None:
        return {"result": "incomplete", "verdict": f"undecided ({run.note})",
                "seconds": run.seconds, "peak_mb": run.peak_mb}
    verdict = doc.get("verdict", "undecided")
    result = {"conforms": "ok", "does-not-conform": "violation"}.get(verdict, "incomplete")
    diagnosis = doc.get("diagnosis") or {}
    text = verdict
    if verdict == "does-not-conform":
        text = (f"does not conform at {diagnosis.get('unmatched', '?')} after "
                f"{diagnosis.get('matched_records', '?')} of {doc.get('records', '?')} "
                "records")
    elif verdict == "conforms":
        text = f"conforms ({doc.get('records', 0)} records, {doc.get('states', 0)} states)"
    elif doc.get("incomplete_reason"):
        text = f"undecided: {doc['incomplete_reason']}"
    return {"result": result, "verdict": text, "records": doc.get("records"),
            "states": doc.get("states"), "scope": doc.get("scope"),
            "diagnosis": diagnosis or None, "seconds": run.seconds, "peak_mb": run.peak_mb}

"""`partsafe lab`: a real cluster run here under a seeded fault schedule, then judged
(checker/lab/; docs/lab.md)."""

from __future__ import annotations

import os
import signal
import sys
import time
from dataclasses import asdict
from pathlib import Path

import click
from rich.table import Table
from rich.text import Text

from partsafe.checker.cli.options import fail
from partsafe.checker.cli.views import stderr, stdout
from partsafe.checker.report import VERDICT_EXIT, dumps, print_verdict


class _Terminated(KeyboardInterrupt):
    """SIGTERM, raised where the lab runs so that it stops its members as on Ctrl-C."""

    def __init__(self, signum: int) -> None:
        super().__init__(signum)
        self.signum = signum


@click.command("lab")
@click.argument("product", type=click.Choice(["hazelcast", "ignite"]))
@click.option("--version", "version", default=None,
              help="the release: Hazelcast 3.12.2, 4.2.8, 5.5.0 (Maven Central's) or a line 3, "
                   "4, 5 [default: 5.5.0]; Apache Ignite 3.1.0 [default]")
@click.option("--jar", type=click.Path(dir_okay=False),
              help="Hazelcast: the member jar to run instead of fetching it")
@click.option("--members", type=click.IntRange(1, 9), default=3, show_default=True,
              help="members started at first, each its own JVM on loopback")
@click.option("--faults", default="kill", show_default=True,
              help="the fault schedule, in order: kill, restart, shutdown, pause, join, "
                   "partition, each optionally KIND:master or KIND:N (member N); '' for none")
@click.option("--seed", type=int, default=0, show_default=True,
              help="draws the members that faults without a target hit")
@click.option("--level", type=click.Choice(["INFO", "FINE", "FINEST"]), default="INFO",
              show_default=True,
              help="the level of the cluster and partition packages' loggers")
@click.option("--backups", type=click.IntRange(0, 6), default=1, show_default=True,
              help="Hazelcast: the map's backup count")
@click.option("--entries", type=click.IntRange(0), default=1000, show_default=True,
              help="entries the client puts before the first fault (Ignite: rows inserted)")
@click.option("--partitions", type=click.IntRange(1, 10_000), default=271, show_default=True,
              help="Hazelcast: the partition count (hazelcast.partition.count; a FINEST log "
                   "grows with it)")
@click.option("--out", "out_dir", type=click.Path(file_okay=False), default="lab-run",
              show_default=True, help="the run's folder: logs, journal, history, reports")
@click.option("--judge-seconds", type=click.FloatRange(1), default=300.0, show_default=True,
              help="the longest validate and conform may each run")
@click.option("--json", "as_json", is_flag=True, help="print one JSON document on stdout")
def lab(product: str, version: str | None, jar: str | None, members: int, faults: str,
        seed: int, level: str, backups: int, entries: int, partitions: int, out_dir: str,
        judge_seconds: float, as_json: bool) -> None:
    """Run a real PRODUCT cluster here under a seeded fault schedule, then judge it.

    Each member is a JVM of its own on 127.0.0.1; a client (hazelcast-python-client of the
    server's major) puts --entries entries, then one every 50 ms while the faults run. The run's
    folder gets one log per member in the product's default layout, the journal of what was
    injected and when, and the client's history; then `validate`, `conform` against the
    release's profile and the data check (every acknowledged write read back, where the design
    promises it) give one verdict. Every process the lab starts is stopped on exit, Ctrl-C too.
    Exit 0 all hold, 1 a violation, 2 a missing tool or release, 3 incomplete.
    """
    from partsafe.checker.lab import ignite
    from partsafe.checker.lab.faults import FaultError, parse_faults
    from partsafe.checker.lab.releases import LabSetupError, resolve
    from partsafe.checker.lab.run import LabConfig, LabReport, run_lab

    started = time.perf_counter()
    try:
        steps = parse_faults(faults, members)
    except FaultError as exc:
        fail(str(exc))
    if any(step.kind == "partition" for step in steps):
        if product != "hazelcast":
            fail("--faults partition: the Ignite lab does not make network namespaces yet")
        if os.geteuid() != 0:
            fail("--faults partition: each member runs in a network namespace of its own "
                 "(ip netns, veth), which only root can make")
    if product == "ignite" and jar is not None:
        fail("--jar: an Ignite run fetches ignite-runner and its dependencies with Maven")
    try:
        release = (resolve(product, version, jar, quiet=as_json) if product == "hazelcast"
                   else ignite.resolve_ignite(version, quiet=as_json))
    except LabSetupError as exc:
        fail(str(exc))
    out = Path(out_dir).resolve()
    err = stderr()
    t0 = time.monotonic()

    def progress(message: str) -> None:
        err.print(Text(f"lab {time.monotonic() - t0:6.1f}s  {message}"), soft_wrap=True)

    def run() -> LabReport:
        if isinstance(release, ignite.IgniteRelease):
            recorded = ignite.run_ignite_lab(release, out, members, steps, seed, level,
                                             rows=entries, progress=progress)
            return ignite.judge_ignite(recorded, progress, seconds=judge_seconds)
        return run_lab(LabConfig(release, out, members, steps, seed, level, backups, entries,
                                 partitions=partitions, judge_seconds=judge_seconds), progress)

    def terminated(signum: int, _frame: object) -> None:
        raise _Terminated(signum)

    # SIGTERM (a CI job's timeout, `kill`) stops every member as Ctrl-C does: the members run in
    # sessions of their own, so a signal to the lab reaches only the lab
    signal.signal(signal.SIGTERM, terminated)
    try:
        report = run()
    except KeyboardInterrupt as exc:
        signum = exc.signum if isinstance(exc, _Terminated) else signal.SIGINT
        err.print(f"lab: interrupted ({signal.Signals(signum).name}); every member stopped")
        sys.exit(128 + signum)
    except (OSError, RuntimeError) as exc:
        err.print(Text(f"lab: {exc}"))
        sys.exit(VERDICT_EXIT["incomplete"])
    seconds = time.perf_counter() - started
    if as_json:
        click.echo(dumps(asdict(report)))
    else:
        console = stdout()
        name = "Hazelcast" if product == "hazelcast" else "Apache Ignite"
        table = Table(title=f"{name} {release.version} ({release.profile}), {members} "
                            f"members, {level}, faults {faults or 'none'}, seed {seed}")
        for column in ("judge", "verdict", "seconds", "MB"):
            table.add_column(column)
        v = report.validate
        table.add_row("validate", Text(v["detail"]), f"{v['seconds']:.1f}", f"{v['peak_mb']:.0f}")
        for model, c in report.conform.items():
            table.add_row(f"conform {model}", Text(c["verdict"]), f"{c['seconds']:.1f}",
                          f"{c['peak_mb']:.0f}")
        table.add_row("data", Text(report.data.get("verdict", "not checked")), "", "")
        console.print(table)
        for violation in v.get("violations", [])[:10]:
            console.print(Text(f"  {violation['spec']} at {violation['member']}: "
                               f"{violation['message']}"), soft_wrap=True)
        console.print(Text(f"the run: {report.out} (lab.json, report.html, member-*.log)"))
        print_verdict(console, f"lab {product} {release.version}", report.verdict, seconds,
                      report.detail)
    sys.exit(VERDICT_EXIT[report.verdict])

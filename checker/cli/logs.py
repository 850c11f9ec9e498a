"""The commands that read or write logs: `partsafe validate` (the logs of a real cluster against
the specs), `partsafe parse` (logs to canonical events) and `partsafe simulate` (the logs of a
simulated cluster). `checker/cli/main.py` adds them to the `partsafe` group.

The log scanner compiles its grammar and keyword automaton when imported (about 0.3 s), and the
simulator and both engines import it: each command imports them when it runs, so that the other
commands, and `partsafe --help`, start without that cost.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any, NoReturn

import click

from partsafe.checker.cli.options import (
    baseline_option,
    fail,
    parse_duration_ms,
    parse_size,
    sarif_option,
)
from partsafe.checker.cli.views import read_baseline, stderr, stdout
from partsafe.checker.report import VERDICT_EXIT, dumps
from partsafe.checker.validation.skew import DEFAULT_MAX_SKEW_MS
from partsafe.traces.events import dumps as event_line


@click.command()
@click.argument("paths", nargs=-1, required=True)
@click.option("--engine", type=click.Choice(["local", "spark", "auto"]), default="auto",
              show_default=True,
              help="local: this process; spark: PySpark (embedded local[*] unless --master); "
                   "auto: Spark with --master, --output or under spark-submit; on a cluster "
                   "$SPARK_MASTER, Spark from 512 MB of input; on a local master, Spark only "
                   "with 7 cores or more and from 56 GB of input on 7 cores, 16 GB on 8, "
                   "4.5 GB on 16; else (or without PySpark) local")
@click.option("--master", help="the Spark master (spark://host:7077, yarn, local[4]; default: "
                               "$SPARK_MASTER, spark-submit's, else local[*])")
@click.option("--output", "output_dir", type=click.Path(file_okay=False, writable=True),
              help="write the events and the violations as Parquet here (Spark engine)")
@click.option("--format", "fmt", type=click.Choice(["auto", "log", "jsonl"]), default="auto",
              show_default=True,
              help="log: a Hazelcast log in any layout; jsonl: canonical events")
@click.option("--stuck-after", type=float, default=600.0, show_default=True,
              help="seconds after which a rebalance with no end is reported (a warning)")
@click.option("--max-skew", "max_skew", default=f"{DEFAULT_MAX_SKEW_MS}ms", show_default=True,
              help="the most two members' clocks may differ (0, 200ms, 1.5s): a violation "
                   "across members is definite when every order of events these clocks allow "
                   "breaks the spec, possible when some order does")
@click.option("--config", "settings", multiple=True, metavar="KEY=VALUE",
              help="a setting of the cluster the monitors need and a log does not print: "
                   "backups=N (the backup count), max_parallel=N (parallel migrations per "
                   "member, hazelcast.partition.max.parallel.migrations), serial=true|false "
                   "(migrations one at a time, before 4.1), replicas=N (Ignite's replica "
                   "count); repeatable")
@click.option("--strict", is_flag=True,
              help="fail on possible violations too (by default they are findings: reported, "
                   "exit 0)")
@click.option("--json", "as_json", is_flag=True, help="print one JSON document on stdout")
@click.option("--junit", "junit_file", type=click.Path(dir_okay=False, writable=True),
              help="also write a JUnit XML report to this file")
@click.option("--html", "html_file", type=click.Path(dir_okay=False, writable=True),
              help="write a self-contained HTML report: each violation linked to its line with "
                   "the lines around it, each member's lists over time, the specs judged")
@sarif_option
@baseline_option
@click.option("--progress/--no-progress", default=None,
              help="a progress display on stderr (default: when stderr is a terminal)")
@click.option("--spark-log", is_flag=True, help="show Spark's own logging (quiet by default)")
def validate(paths: tuple[str, ...], engine: str, master: str | None, output_dir: str | None,
             fmt: str, stuck_after: float, max_skew: str, settings: tuple[str, ...],
             strict: bool, as_json: bool, junit_file: str | None, html_file: str | None,
             sarif_file: str | None, baseline_file: str | None, progress: bool | None,
             spark_log: bool) -> None:
    """Check the logs of a real cluster (files, directories, globs, .gz) against the specs.

    Every line is accounted for: parsed into an event, ignored as irrelevant, or reported as
    malformed with file and line; every file is judged, found to hold nothing recognised, or
    skipped with the reason (binary data; in a directory or a glob, a file that is not a log by
    its name or its content). Both engines give the same report. A violation across members
    is definite (every order the members' clocks allow breaks the spec, `--max-skew`) or
    possible (some order does: a finding, reported with that order). Exit status: 0 no definite
    violation, 1 a definite violation (or a possible one with --strict), 2 bad input (a path
    that does not exist), 3 incomplete: no event was judged.
    """
    # imported here for start-up time: the log scanner (see the module's docstring)
    from partsafe.checker.validation.engines import choose_engine, input_bytes
    from partsafe.checker.validation.local import InputError
    from partsafe.checker.validation.local import validate as run_validate
    from partsafe.checker.validation.spark import SparkFailed, SparkUnavailable, validate_spark
    from partsafe.checker.validation.view import byte_progress, render_report, validate_junit

    if stuck_after <= 0:
        fail("--stuck-after must be positive")
    skew_ms = parse_duration_ms(max_skew)
    config = parse_config(settings)
    if engine == "local" and (output_dir or master):
        fail(f"{'--output' if output_dir else '--master'} needs --engine spark")
    recorded = read_baseline(baseline_file) if baseline_file is not None else None
    try:
        if engine == "auto":
            engine = choose_engine(paths, master, output_dir)
        if engine == "spark":
            shown = stderr().is_terminal if progress is None else progress
            report = validate_spark(list(paths), fmt=fmt, stuck_ms=int(stuck_after * 1000),
                                    max_skew_ms=skew_ms, config=config, master=master,
                                    output=output_dir,
                                    progress=shown and not as_json, verbose=spark_log)
        else:
            with byte_progress(stderr(), lambda: input_bytes(paths),
                               progress if not as_json else False) as advance:
                report = run_validate(list(paths), fmt=fmt, stuck_ms=int(stuck_after * 1000),
                                      max_skew_ms=skew_ms, config=config, progress=advance)
    except (InputError, SparkUnavailable, SparkFailed) as exc:
        fail(str(exc))
    report.strict = strict
    comparison = None
    if recorded is not None:
        from partsafe.checker.baseline import compare, validate_findings

        comparison = compare(recorded, validate_findings(report.as_dict()))
    if junit_file:
        from partsafe.checker.report import junit_with_report

        document = validate_junit(report, set(comparison.known) if comparison else ())
        Path(junit_file).write_text(junit_with_report(document, html_file) if html_file
                                    else document)
    if html_file:
        from partsafe.checker.render import html
        from partsafe.checker.report import verdict_line
        from partsafe.checker.validation.view import verdict_of

        try:
            html.write(html_file, html.validate_page(report, verdict_line(*verdict_of(report))
                                                     .plain))
        except OSError as exc:
            fail(f"--html {html_file}: cannot write: {exc.strerror or exc}")
    if sarif_file:
        _write_sarif(sarif_file, report, comparison)
    if baseline_file is not None:
        _gate(baseline_file, report, comparison, as_json)
    if as_json:
        click.echo(dumps(report.as_dict()))
    else:
        render_report(stdout(), report)
    sys.exit(VERDICT_EXIT[report.result])


def _write_sarif(path: str, report: Any, comparison: Any) -> None:
    """`--sarif`: the report as a SARIF log, with the exit status the command ends with (the
    baseline's verdict with --baseline)."""
    from partsafe.checker import sarif
    from partsafe.checker.cli.views import gate_verdict

    verdict = report.result if comparison is None else \
        gate_verdict(report.result, comparison, report.strict)[0]
    try:
        sarif.write(path, sarif.validate_log(report.as_dict(), VERDICT_EXIT[verdict],
                                             comparison))
    except OSError as exc:
        fail(f"--sarif {path}: cannot write: {exc.strerror or exc}")


def _gate(file: str, report: Any, comparison: Any, as_json: bool) -> NoReturn:
    """`validate --baseline`: the report judged against the baseline's findings."""
    from partsafe.checker.cli.views import gate
    from partsafe.checker.validation.view import render_report, verdict_of

    doc = report.as_dict()
    what, _, seconds, _ = verdict_of(report)
    gate(file, doc, comparison, report.result, report.strict, as_json,
         lambda console: render_report(console, report, verdict=False), what, seconds)


def parse_config(settings: tuple[str, ...]) -> dict[str, int | bool]:
    """``--config KEY=VALUE`` settings (`partsafe.traces.events.CONFIG`), typed; a bad one
    exits 2 naming it."""
    from partsafe.traces.events import CONFIG

    out: dict[str, int | bool] = {}
    for item in settings:
        key, eq, value = item.partition("=")
        kind = CONFIG.get(key.strip())
        if not eq or kind is None:
            fail(f"--config {item!r}: give KEY=VALUE with KEY one of {', '.join(CONFIG)}")
        text = value.strip().lower()
        if kind is bool and text in ("true", "false"):
            out[key.strip()] = text == "true"
        elif kind is int and text.isdigit():
            out[key.strip()] = int(text)
        else:
            fail(f"--config {item!r}: {key.strip()} takes "
                 f"{'true or false' if kind is bool else 'a whole number'}")
    return out


@click.command()
@click.argument("paths", nargs=-1, required=True)
@click.option("--format", "fmt", type=click.Choice(["auto", "log", "jsonl"]), default="auto",
              show_default=True,
              help="log: a Hazelcast log in any layout; jsonl: canonical events")
def parse(paths: tuple[str, ...], fmt: str) -> None:
    """Print the events found in logs as canonical JSON Lines (one event a line, file order).

    The line accounting, any malformed lines, and each file that was skipped or in which nothing
    was recognised go to stderr.
    """
    # imported here for start-up time: the log scanner (see the module's docstring)
    from partsafe.checker.validation.view import print_accounting
    from partsafe.traces.scanner import InputError, Scanner, expand

    scanner = Scanner(fmt)
    out = sys.stdout
    try:
        candidates = expand(list(paths))
        for c in candidates:
            if c.skipped is None:
                for ev in scanner.scan(c.path, str(c.path), c.explicit):
                    out.write(event_line(ev))
                    out.write("\n")
    except InputError as exc:
        fail(str(exc))
    print_accounting(stderr(), scanner.accounting, candidates)


@click.command()
@click.option("--members", type=int, required=True, help="cluster members (2 to 1000)")
@click.option("--partitions", type=int, default=271, show_default=True,
              help="partitions (Hazelcast's default count is 271)")
@click.option("--events", type=int, default=10_000, show_default=True,
              help="about this many protocol records (more if injections need them)")
@click.option("--out", "out_dir", type=click.Path(file_okay=False), required=True,
              help="the directory to write one log file per member into")
@click.option("--lines", type=int, help="about this many lines in all, noise included")
@click.option("--size", help="about this many bytes in all, noise included (2G, 500M, 64k)")
@click.option("--inject", multiple=True, metavar="SPEC",
              help="inject a violation of this spec (repeatable; the specs `validate` judges)")
@click.option("--seed", type=int, default=1, show_default=True,
              help="the same seed and options write the same files, byte for byte")
@click.option("--force", is_flag=True,
              help="write into a non-empty directory (an earlier simulation's files there, as "
                   "its manifest lists them, are removed first; other files are kept)")
@click.option("--json", "as_json", is_flag=True, help="print the manifest as one JSON document")
@click.option("--progress/--no-progress", default=None,
              help="a progress bar on stderr (default: when stderr is a terminal)")
def simulate(members: int, partitions: int, events: int, out_dir: str, lines: int | None,
             size: str | None, inject: tuple[str, ...], seed: int, force: bool, as_json: bool,
             progress: bool | None) -> None:
    """Write realistic Hazelcast logs of a simulated cluster, one file per member, with
    optional injected violations.

    Protocol lines come from random walks of the reference implementation (membership, seed
    002; parallel migrations and graceful shutdown, designs 003 and 004), written as the
    distribution's log4j2 layout, among application noise. Each --inject SPEC writes, at a
    random point, lines that break exactly that spec; the manifest (DIR/.manifest.json, which
    `partsafe validate DIR` skips) records their file and line.
    """
    # imported here for start-up time: the simulator imports the log scanner (see the module's
    # docstring)
    from partsafe.checker.validation.local import LOG_SPECS
    from partsafe.checker.validation.simulate import MANIFEST_NAME, MAX_MEMBERS
    from partsafe.checker.validation.simulate import simulate as run_simulate
    from partsafe.checker.validation.view import render_simulation, simulation_progress

    if not 2 <= members <= MAX_MEMBERS:
        fail(f"--members must be 2 to {MAX_MEMBERS}, not {members}")
    if partitions < 1:
        fail(f"--partitions must be at least 1, not {partitions}")
    if events < 1:
        fail(f"--events must be at least 1, not {events}")
    if lines is not None and size is not None:
        fail("give --lines or --size, not both")
    if lines is not None and lines < 0:
        fail(f"--lines must not be negative, not {lines}")
    size_bytes = parse_size(size) if size is not None else None
    specs = []
    for spec in inject:
        if spec.upper() not in LOG_SPECS:
            raise click.BadParameter(f"unknown spec {spec!r}; the specs a log can show are "
                                     f"{', '.join(LOG_SPECS)}", param_hint="--inject")
        specs.append(spec.upper())
    out = Path(out_dir)
    if out.exists() and not out.is_dir():
        fail(f"--out {out_dir}: not a directory")
    if out.is_dir() and any(out.iterdir()):
        if not force:
            fail(f"--out {out_dir}: the directory is not empty (give --force to write into it)")
        _remove_simulation(out, MANIFEST_NAME)
    show = (sys.stderr.isatty() and not as_json) if progress is None else progress
    try:
        with simulation_progress(stderr(), events, show) as report:
            manifest = run_simulate(out, members=members, partitions=partitions, events=events,
                                    lines=lines, size=size_bytes, inject=specs, seed=seed,
                                    progress=report)
    except OSError as exc:
        fail(f"--out {out_dir}: cannot write: {exc.strerror or exc}")
    except ValueError as exc:
        fail(str(exc))
    if as_json:
        click.echo(dumps(manifest.as_dict()))
        return
    render_simulation(stdout(), manifest, out / MANIFEST_NAME)


def _remove_simulation(out: Path, manifest_name: str) -> None:
    """Remove the files an earlier simulation wrote into `out`, as its manifest lists them."""
    try:
        doc = json.loads((out / manifest_name).read_text())
        names = [f["name"] for f in doc["files"]]
    except (OSError, ValueError, KeyError, TypeError):
        return
    for name in names:
        path = out / Path(str(name)).name
        if path.is_file():
            path.unlink()
    (out / manifest_name).unlink()

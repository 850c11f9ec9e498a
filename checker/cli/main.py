"""The `partsafe` command line: the `partsafe` group and its commands. A command parses its
options, calls what does the work, prints the outcome and exits with its status; the work lives
beside what it checks: `check` in checker/run.py (the planner's in checker/planner/check.py),
`zoo` in checker/zoo.py, `replay` and `export` in checker/artifact.py, `checkpoint` in
checker/run.py, `plan` in refimpl/planner.py, `specs` and `explain` in specs/registry.py, `bench`
in checker/bench.py. The commands that read or write logs (`validate`, `parse`, `simulate`) are
in checker/cli/logs.py. Terminal views are in checker/cli/views.py unless their report has its
own (checker/report.py, checker/planner/view.py, checker/validation/view.py).

Exit status everywhere: 0 all hold, 1 a violation (or a coverage gap) was found, 2 the input or the
command was wrong, 3 a search bound was reached before the check was complete. `--json` prints
exactly one JSON document on stdout; people get rich tables, and progress on stderr.
"""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path
from typing import Any, NoReturn

import click
from rich.text import Text

from partsafe.checker import artifact
from partsafe.checker import bench as bench_suite
from partsafe.checker.artifact import ArtifactError
from partsafe.checker.cli.conform import conform_command
from partsafe.checker.cli.lab import lab
from partsafe.checker.cli.logs import parse, simulate, validate
from partsafe.checker.cli.options import (
    STRICT_HELP,
    baseline_option,
    fail,
    parse_only,
    parse_profile,
    profile_option,
    scope_options,
    variants_epilog,
)
from partsafe.checker.cli.prove import prove
from partsafe.checker.cli.views import (
    ProgressView,
    check_verdict_line,
    check_what,
    gate,
    profile_zoo_verdict,
    profiles_json,
    read_baseline,
    render_check,
    render_checkpoint,
    render_profile_zoo,
    render_profiles,
    render_spec,
    render_specs,
    render_zoo,
    stderr,
    stdout,
    zoo_verdict,
)
from partsafe.checker.engine.bfs import Bounds
from partsafe.checker.engine.checkpoint import (
    Checkpoint,
    CheckpointError,
    hash_seed_for,
    read_header,
    rehash_environment,
)
from partsafe.checker.engine.model import Model
from partsafe.checker.engine.result import Trace
from partsafe.checker.forms import judged
from partsafe.checker.planner.check import DEFAULT_REPLICAS as PLANNER_DEFAULT_REPLICAS
from partsafe.checker.planner.check import MAX_REPLICAS as PLANNER_MAX_REPLICAS
from partsafe.checker.planner.check import check_json, check_planner, check_scope, plan_json
from partsafe.checker.planner.view import (
    planner_junit,
    print_planner_verdict,
    render_plan,
    render_planner_check,
)
from partsafe.checker.protocols import catalog
from partsafe.checker.report import (
    EXIT_OK,
    EXIT_VIOLATION,
    VERDICT_EXIT,
    dumps,
    junit_with_report,
    print_verdict,
    render_trace,
    steps_json,
    verdict_line,
)
from partsafe.checker.run import (
    CheckError,
    CheckReport,
    CheckRun,
    Interrupted,
    Watcher,
    check_models,
    checkpoint_summary,
)
from partsafe.checker.zoo import run_profile_zoo, run_zoo
from partsafe.models.prove import z3_forms
from partsafe.refimpl.planner import VARIANT_TABLE as PLANNER_VARIANTS
from partsafe.refimpl.planner import PlannerError, parse_replicas, plan_events
from partsafe.refimpl.planner import plan as make_plan
from partsafe.specs.registry import Spec, all_specs
from partsafe.specs.registry import get as get_spec

#: every model `partsafe check` knows: the searches of the catalogue, and the planner's check
MODEL_NAMES = (*catalog.MODELS, "planner")
#: `partsafe specs` lists these families first, in this order, then the partition service's
#: (data, tables, shutdown, parallel migrations, commits); each family in its module's order
SPEC_FAMILIES = ("PLAN", "IGN", "MEM")


@click.group(context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 100})
@click.version_option(package_name="partsafe")
def main() -> None:
    """partsafe: a formal model and reference checker for the membership, partition-migration and
    rebalance protocols of Hazelcast and Apache Ignite 3."""


for _command in (validate, parse, simulate, prove, conform_command, lab):
    main.add_command(_command)


@main.group("baseline")
def baseline_group() -> None:
    """A CI gate's baseline: today's findings recorded, so that later runs with --baseline fail
    on new findings only (docs/reports.md)."""


@baseline_group.command("update")
@click.argument("file", type=click.Path(dir_okay=False))
@click.argument("report", type=click.Path(dir_okay=False, exists=True))
def baseline_update(file: str, report: str) -> None:
    """Record in FILE the findings of REPORT, the --json output of `partsafe check` or
    `partsafe validate`, replacing what FILE held; say what changed."""
    import json

    from partsafe.checker import baseline

    try:
        doc = json.loads(Path(report).read_text(encoding="utf-8"))
        found = baseline.findings_of(doc, report)
    except (OSError, ValueError) as exc:
        fail(f"{report}: cannot be read as a report ({exc})")
    before: list[baseline.Finding] = []
    if Path(file).exists():
        try:
            before = baseline.read(file)
        except baseline.BaselineError as exc:
            fail(str(exc))
    comparison = baseline.compare(before, found)
    try:
        baseline.write(file, found)
    except OSError as exc:
        fail(f"{file}: cannot write: {exc.strerror or exc}")
    click.echo(f"baseline {file}: {len(found)} finding(s) recorded ({len(comparison.new)} new, "
               f"{len(comparison.gone)} dropped, {len(comparison.known)} kept)")
    early = baseline.stopped_early(doc) if isinstance(doc, dict) and "files" not in doc else []
    if early:
        click.echo(f"note: the search of {', '.join(early)} stopped at its first violation, so "
                   "the baseline holds only what it found by then; a gated check searches on "
                   "past it and fails on what it finds later (record a --keep-going report)")


@main.command(epilog=variants_epilog())
@click.argument("model", required=False)
@click.option("--variant", default="fixed", show_default=True,
              help="protocol variant: a historical flaw or a design question of MODEL (listed "
                   "below), or fixed for the current design; `partsafe explain SPEC` names the "
                   "variants that break SPEC")
@profile_option
@scope_options
@click.option("--max-depth", type=int, help="stop after this BFS depth (result: incomplete)")
@click.option("--max-states", type=int, help="stop after this many distinct states")
@click.option("--max-seconds", type=float, help="stop after this many seconds (with --checkpoint: "
              "at the end of the BFS level, saved)")
@click.option("--checkpoint", "checkpoint_file", type=click.Path(dir_okay=False, path_type=Path),
              help="save the search to this file at BFS level ends, and resume from it if it "
                   "exists (removed once the search has a verdict)")
@click.option("--checkpoint-every", type=float, default=600.0, show_default=True,
              help="seconds between checkpoints (at least 20 times the last save's duration)")
@click.option("--only", "only_targets", multiple=True, metavar="KIND=NODES",
              help="one part of a scope split by fault targets: KIND (crash, join, shutdown, "
                   "restart) strikes only NODES (comma-separated); repeatable. The parts whose "
                   "targets cover every node make up the whole scope")
@click.option("--workers", type=int, default=1, show_default=True,
              help="processes that expand each BFS level, 0 for one per core (the same states "
                   "and verdict; a checkpoint resumes with any number)")
@click.option("--symmetry/--no-symmetry", default=True, show_default=True,
              help="reduce by the symmetries the model declares")
@click.option("--keep-going", is_flag=True,
              help="after a violation, search on for violations of other specs")
@click.option("--until", metavar="SPEC",
              help="search on past other specs' violations until SPEC breaks (as `partsafe zoo` "
                   "does: a flaw may break another spec first)")
@click.option("--strict", is_flag=True, help=STRICT_HELP)
@click.option("--json", "as_json", is_flag=True, help="print one JSON document on stdout")
@click.option("--junit", "junit_file", type=click.Path(dir_okay=False, writable=True),
              help="also write a JUnit XML report to this file")
@click.option("--trace-out", type=click.Path(dir_okay=False, writable=True),
              help="write the shortest counterexample as a replayable JSON artifact")
@click.option("--svg", "svg_file", type=click.Path(dir_okay=False, writable=True),
              help="draw the shortest counterexample as a swim-lane SVG (one lane per member, "
                   "its messages as arrows, the breaking step marked)")
@click.option("--html", "html_file", type=click.Path(dir_okay=False, writable=True),
              help="write a self-contained HTML report: the verdict, scope and statistics, the "
                   "frontier per depth, each counterexample's swim lanes and steps")
@baseline_option
@click.option("--progress/--no-progress", default=None,
              help="live progress on stderr (default: when stderr is a terminal)")
@click.option("--replicas", type=int, default=None,
              help=f"planner: check every pair of arrays with 1 to N indices (default "
                   f"{PLANNER_DEFAULT_REPLICAS}, at most {PLANNER_MAX_REPLICAS}); "
                   f"ignite-rebalance: the partition's replica count (default "
                   f"{catalog.IGNITE.params['replicas'].default})")
def check(model: str | None, variant: str, profile: str, max_depth: int | None,
          max_states: int | None,
          max_seconds: float | None, checkpoint_file: Path | None, checkpoint_every: float,
          only_targets: tuple[str, ...], workers: int, symmetry: bool, keep_going: bool,
          until: str | None, strict: bool, as_json: bool,
          junit_file: str | None, trace_out: str | None, svg_file: str | None,
          html_file: str | None, baseline_file: str | None, progress: bool | None,
          replicas: int | None, **scope: int | None) -> None:
    """Explore MODEL exhaustively at a small scope and check every spec on it.

    Without MODEL, every model is checked at its default scope. Models: membership (Hazelcast 3.9
    cluster membership, design 002), migration and shutdown (3.7, designs 000 and 004), parallel
    (4.1, design 003), ignite-rebalance (Ignite 3, design 001), planner (the migration planner of
    000 §3, every pair of replica arrays) and twophase (two-phase commit, the explorer's
    calibration).

    The known findings of the faithful planner are reported and do not fail the run; --strict
    fails on them. The report ends with one verdict line, and the exit status agrees with it.
    """
    started = time.perf_counter()
    overrides = {k.replace("_", "-"): v for k, v in scope.items() if v is not None}
    if workers < 0:
        fail("--workers must be 0 (one per core) or more")
    only = parse_only(only_targets)
    workers = workers or os.cpu_count() or 1
    if model == "planner":
        if workers > 1:
            fail("--workers applies to the searches; the planner's check is one loop")
        if overrides:
            fail(f"--{next(iter(overrides))} does not apply to model planner (it takes "
                 "--replicas and --variant)")
        if until or trace_out or svg_file or html_file or baseline_file:
            flag = ("--until" if until else "--trace-out" if trace_out else "--svg" if svg_file
                    else "--html" if html_file else "--baseline")
            fail(f"{flag} applies to the searches, not to model planner (`partsafe check` "
                 "without MODEL checks the planner with the searches)")
        _check_planner(variant, replicas, as_json, junit_file, strict)
    if replicas is not None:
        if model != catalog.IGNITE.name:
            fail("--replicas applies to models planner and ignite-rebalance only")
        overrides["replicas"] = replicas
    chosen = parse_profile(profile)
    if model is None:
        if variant != "fixed" or overrides or trace_out or svg_file or checkpoint_file or only \
                or until:
            fail("--variant, scope options, --only, --until, --trace-out, --svg and --checkpoint "
                 "need a MODEL")
        entries = [e for e in catalog.MODELS.values() if chosen.covers(e.name)]
    elif model not in catalog.MODELS:
        fail(f"unknown model {model!r}; known: {', '.join(MODEL_NAMES)}")
    elif not chosen.covers(model):
        fail(f"--profile {profile} does not cover model {model} (it covers "
             f"{', '.join(chosen.models)})")
    else:
        entries = [catalog.get(model)]
    if until is not None:
        until = until.upper()
        keep_going = True
    for name, value in (("--max-depth", max_depth), ("--max-states", max_states),
                        ("--max-seconds", max_seconds)):
        if value is not None and value <= 0:
            fail(f"{name} must be positive")
    if checkpoint_every <= 0:
        fail("--checkpoint-every must be positive")
    bounds = Bounds(max_depth, max_states, max_seconds)
    recorded = read_baseline(baseline_file) if baseline_file is not None else None
    show_progress = sys.stderr.isatty() if progress is None else progress
    checkpoint = None
    if checkpoint_file is not None:
        checkpoint = _checkpoint(checkpoint_file, checkpoint_every, show_progress)
    try:
        report = check_models(entries, variant, overrides,
                              planner=model is None and chosen.covers("planner"), strict=strict,
                              bounds=bounds, symmetry=symmetry, keep_going=keep_going,
                              until=until, checkpoint=checkpoint, workers=workers, only=only,
                              watcher=ProgressView if show_progress else None, profile=profile,
                              recorded=recorded or ())
    except CheckError as exc:
        fail(str(exc))
    except Interrupted as exc:
        _interrupted(exc, checkpoint)
    if trace_out:
        _write_trace(trace_out, report.runs[0], until)
    if svg_file:
        _write_svg(svg_file, report.runs[0], until)
    comparison = None
    if recorded is not None:
        from partsafe.checker.baseline import check_findings, compare

        comparison = compare(recorded, check_findings(report.as_json()))
    if junit_file:
        document = report.junit(set(comparison.known) if comparison is not None else ())
        Path(junit_file).write_text(junit_with_report(document, html_file) if html_file
                                    else document)
    if html_file:
        _write_html(html_file, report, time.perf_counter() - started)
    if baseline_file is not None:
        _gate(baseline_file, report, comparison, as_json, time.perf_counter() - started)
    if as_json:
        click.echo(dumps(report.as_json()))
    else:
        render_check(stdout(), report, time.perf_counter() - started)
    sys.exit(VERDICT_EXIT[report.verdict])


def _gate(file: str, report: CheckReport, comparison: Any, as_json: bool,
          seconds: float) -> NoReturn:
    """`check --baseline`: the report judged against the baseline's findings."""
    gate(file, report.as_json(), comparison, report.verdict, report.strict, as_json,
         lambda console: render_check(console, report, seconds, verdict=False),
         check_what(report), seconds)


def _write_html(path: str, report: CheckReport, seconds: float) -> None:
    """`--html`: the check's report as one self-contained page."""
    from partsafe.checker.render import html

    try:
        html.write(path, html.check_page(report, check_verdict_line(report, seconds)))
    except OSError as exc:
        fail(f"--html {path}: cannot write: {exc.strerror or exc}")


def _interrupted(exc: Interrupted, checkpoint: Checkpoint | None) -> NoReturn:
    """A search was stopped (Ctrl-C): no verdict, and how to go on."""
    resume = (f"; resume from the checkpoint {checkpoint.path}"
              if checkpoint is not None and checkpoint.exists() else
              " (bound the search with --max-seconds or --max-states, or save it with "
              "--checkpoint)")
    stderr().print(Text(f"{exc.model}: interrupted; no verdict{resume}"))
    sys.exit(130)


def _write_trace(path: str, run: CheckRun, until: str | None = None) -> None:
    """`--trace-out`: the shortest counterexample (of the `--until` spec, when it was found) as a
    replayable artifact, and a line on stderr that says where it went (or why nothing was
    written)."""
    if not run.result.violations:
        stderr().print(Text(f"--trace-out {path}: no violation, so no counterexample was "
                            "written"), soft_wrap=True)
        return
    try:
        artifact.write(path, run.model, run.result, run.params, until)
    except OSError as exc:
        fail(f"--trace-out {path}: cannot write: {exc.strerror or exc}")
    v = next((x for x in run.result.violations if x.spec == until), run.result.violations[0])
    stderr().print(Text(f"counterexample of {v.spec} ({v.trace.depth} steps) written to {path}; "
                        f"replay it with: partsafe replay {path}"), soft_wrap=True)


def _write_svg(path: str, run: CheckRun, until: str | None = None) -> None:
    """`--svg`: the swim lanes of the counterexample `--trace-out` writes (nothing, said on
    stderr, when no spec broke)."""
    from partsafe.checker.render import swimlane

    if not run.result.violations:
        stderr().print(Text(f"--svg {path}: no violation, so no diagram was drawn"),
                       soft_wrap=True)
        return
    v = next((x for x in run.result.violations if x.spec == until), run.result.violations[0])
    try:
        swimlane.write(path, run.model, v.trace,
                       title=f"{run.model.name} ({run.model.variant}) breaks {v.spec}",
                       broken=v.trace.depth or None, sentence=f"{v.spec}: {v.message}")
    except OSError as exc:
        fail(f"--svg {path}: cannot write: {exc.strerror or exc}")


def _checkpoint(path: Path, every: float, progress: bool) -> Checkpoint:
    """The checkpoint of a search, in a process that hashes as the checkpoint's did: the
    fingerprints it holds are Python hashes. The command starts itself again under the
    checkpoint's hash seed (a new checkpoint gets a random one), with address randomization off
    where None hashes by address."""
    try:
        seed = hash_seed_for(path)
        header = read_header(path) if path.exists() else None
    except CheckpointError as exc:
        fail(f"--checkpoint: {exc}")
    env = rehash_environment(seed)
    if env is not None:
        sys.stdout.flush()
        os.execve(sys.executable, [sys.executable, *sys.argv], env)
    if header is not None and progress:
        stderr().print(Text(f"resuming {path} at depth {header['depth']} "
                            f"({header['states']:,} states, {header['seconds']:.0f} s, written "
                            f"{header['written']})"))
    return Checkpoint(path, every)


def _check_planner(variant: str, replicas: int | None, as_json: bool,
                   junit_file: str | None, strict: bool) -> NoReturn:
    """`partsafe check planner`: every pair of replica arrays with 1 to `replicas` indices."""
    try:
        n = check_scope(variant, replicas)
    except ValueError as exc:
        fail(str(exc))
    result = check_planner(n, variant)
    if junit_file:
        Path(junit_file).write_text(planner_junit(result, strict))
    if as_json:
        click.echo(dumps(check_json(result, strict)))
    else:
        console = stdout()
        render_planner_check(console, result, strict)
        print_planner_verdict(console, result, strict)
    sys.exit(VERDICT_EXIT[result.verdict(strict)])


@main.command("checkpoint")
@click.argument("file", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@click.option("--json", "as_json", is_flag=True, help="print one JSON document on stdout")
def checkpoint_info(file: Path, as_json: bool) -> None:
    """What a checkpoint of `partsafe check --checkpoint` holds: the search, how far it got, and
    whether this installation can resume it (the same code)."""
    try:
        info = checkpoint_summary(file)
    except CheckpointError as exc:
        fail(str(exc))
    if as_json:
        click.echo(dumps(info))
        return
    render_checkpoint(stdout(), info, file)


@main.command()
@click.option("--profile", default=None, metavar="PROFILE",
              help="list what release profile PROFILE breaks instead: each model it covers "
                   "searched at its default scope, against the findings the profile declares")
@click.option("--max-seconds", type=float,
              help="with --profile: stop each search after this many seconds (incomplete)")
@click.option("--workers", type=int, default=1, show_default=True,
              help="with --profile: processes that expand each BFS level, 0 for one per core")
@click.option("--strict", is_flag=True, help=STRICT_HELP)
@click.option("--json", "as_json", is_flag=True, help="print one JSON document on stdout")
@click.option("--junit", "junit_file", type=click.Path(dir_okay=False, writable=True),
              help="also write a JUnit XML report to this file")
@click.option("--html", "html_file", type=click.Path(dir_okay=False, writable=True),
              help="write a self-contained HTML report: the variants and the fixed designs")
@click.option("--progress/--no-progress", default=None,
              help="live progress on stderr (default: when stderr is a terminal)")
def zoo(profile: str | None, max_seconds: float | None, workers: int, strict: bool,
        as_json: bool, junit_file: str | None, html_file: str | None,
        progress: bool | None) -> None:
    """Find every historical flaw (each a variant that must break its spec) and check that every
    fixed model is clean at the same scope (about 45 s on two cores).

    Each entry comes with the `partsafe check` command that reproduces it. The known findings of
    the faithful planner do not fail the run; --strict fails on them.

    With --profile P, list instead what the release line P breaks: every spec each model it
    covers breaks at its default scope, with the finding id the profile declares for it. Exit 0
    when the searches break exactly the declared findings, 1 when they break another spec or
    miss a declared one, 3 when a bound ended a search first.
    """
    show_progress = sys.stderr.isatty() if progress is None else progress
    watcher = ProgressView if show_progress else None
    if profile is not None:
        _profile_zoo(profile, max_seconds, workers, strict, as_json, junit_file, html_file,
                     watcher)
    if max_seconds is not None or workers != 1:
        fail("--max-seconds and --workers apply with --profile")
    try:
        found = run_zoo(strict, watcher=watcher)
    except CheckError as exc:
        fail(str(exc))
    except Interrupted as exc:
        _interrupted(exc, None)
    if junit_file:
        Path(junit_file).write_text(found.junit())
    if html_file:
        from partsafe.checker.render import html

        try:
            html.write(html_file, html.zoo_page(found.doc,
                                                verdict_line(*zoo_verdict(found.doc)).plain))
        except OSError as exc:
            fail(f"--html {html_file}: cannot write: {exc.strerror or exc}")
    if as_json:
        click.echo(dumps(found.doc))
    else:
        render_zoo(stdout(), found.doc)
    sys.exit(VERDICT_EXIT[found.verdict])


def _profile_zoo(profile: str, max_seconds: float | None, workers: int, strict: bool,
                 as_json: bool, junit_file: str | None, html_file: str | None,
                 watcher: Watcher | None) -> NoReturn:
    """`partsafe zoo --profile P` (`run_profile_zoo`)."""
    parse_profile(profile)
    if strict or junit_file:
        fail(f"{'--strict' if strict else '--junit'} applies to the zoo of variants, not with "
             "--profile")
    if max_seconds is not None and max_seconds <= 0:
        fail("--max-seconds must be positive")
    if workers < 0:
        fail("--workers must be 0 (one per core) or more")
    try:
        doc = run_profile_zoo(profile, Bounds(max_seconds=max_seconds),
                              workers or os.cpu_count() or 1, watcher)
    except CheckError as exc:
        fail(str(exc))
    except Interrupted as exc:
        _interrupted(exc, None)
    if html_file:
        from partsafe.checker.render import html

        try:
            html.write(html_file, html.profile_zoo_page(
                doc, verdict_line(*profile_zoo_verdict(doc)).plain))
        except OSError as exc:
            fail(f"--html {html_file}: cannot write: {exc.strerror or exc}")
    if as_json:
        click.echo(dumps(doc))
    else:
        render_profile_zoo(stdout(), doc)
    sys.exit(VERDICT_EXIT[doc["result"]])


@main.command("profiles")
@click.option("--json", "as_json", is_flag=True, help="print one JSON document on stdout")
def profiles_command(as_json: bool) -> None:
    """The release profiles: for each, the models it covers and the rules its code follows,
    each rule with the source it was read from (repository, tag or commit, method)."""
    doc = profiles_json()
    if as_json:
        click.echo(dumps(doc))
        return
    render_profiles(stdout(), doc)


@main.command()
@click.argument("file", type=click.Path(dir_okay=False))
@click.option("--profile", default=None, metavar="PROFILE",
              help="replay under this release profile (default: the one the artifact was "
                   "found under); `partsafe profiles` lists them")
@click.option("--json", "as_json", is_flag=True, help="print one JSON document on stdout")
@click.option("--svg", "svg_file", type=click.Path(dir_okay=False, writable=True),
              help="draw the run as a swim-lane SVG")
def replay(file: str, profile: str | None, as_json: bool, svg_file: str | None) -> None:
    """Re-execute a counterexample artifact (from `check --trace-out`) step by step.

    Exit status 1 when the violation reproduces, 0 when the spec holds at the end."""
    started = time.perf_counter()
    if profile is not None:
        parse_profile(profile)
    try:
        doc = artifact.read(file)
        model, trace, message = artifact.replay(doc, file, profile)
    except ArtifactError as exc:
        fail(str(exc))
    reproduced = message is not None
    if svg_file:
        from partsafe.checker.render import swimlane

        run = doc["partsafe"] == "run"
        title = (f"a run of {model.name} ({doc['variant']}) that conforms to "
                 f"{doc.get('conforms_to', 'a trace')}" if run
                 else f"{model.name} ({doc['variant']}) breaks {doc['spec']}")
        try:
            swimlane.write(svg_file, model, trace, title=title,
                           broken=trace.depth if reproduced and trace.depth else None,
                           sentence=f"{doc['spec']}: {message}" if reproduced else None)
        except OSError as exc:
            fail(f"--svg {svg_file}: cannot write: {exc.strerror or exc}")
    if doc["partsafe"] == "run":  # a run that conforms to a trace (`conform --trace-out`)
        _replayed_run(file, doc, model, trace, as_json, started)
    if as_json:
        click.echo(dumps({"file": file, "spec": doc["spec"], "profile": model.profile,
                          "reproduced": reproduced,
                          "message": message, "depth": trace.depth,
                          "trace": steps_json(model, trace)}))
    else:
        console = stdout()
        title = f"{doc['spec']}: {message}" if reproduced else f"{doc['spec']} holds at the end"
        render_trace(console, model, trace, title)
        under = "" if model.profile == "fixed" else f", profile {model.profile}"
        print_verdict(console, f"replay of {file} ({trace.depth} steps{under})",
                      "violation" if reproduced else "ok", time.perf_counter() - started,
                      f"violation reproduced: {doc['spec']} broken again" if reproduced
                      else f"{doc['spec']} holds: the violation did not reproduce")
    sys.exit(EXIT_VIOLATION if reproduced else EXIT_OK)


def _replayed_run(file: str, doc: dict[str, Any], model: Model[Any], trace: Trace,
                  as_json: bool, started: float) -> NoReturn:
    """`replay` of a run that conforms to a trace: it re-executes step by step (exit 0), or
    `artifact.replay` said where it does not."""
    of = doc.get("conforms_to", "a trace")
    if as_json:
        click.echo(dumps({"file": file, "run_of": of, "profile": model.profile,
                          "replayed": True, "depth": trace.depth,
                          "trace": steps_json(model, trace)}))
    else:
        console = stdout()
        render_trace(console, model, trace, f"a run of {model.name} that conforms to {of}",
                     shortest=False)
        print_verdict(console, f"replay of {file} ({trace.depth} steps)", "ok",
                      time.perf_counter() - started, "the run replays step by step")
    sys.exit(EXIT_OK)


@main.command()
@click.argument("trace", type=click.Path(dir_okay=False))
@click.option("--events", "events_file", type=click.Path(dir_okay=False, writable=True),
              help="write the trace's events as canonical JSON Lines to this file")
@click.option("--log", "log_dir", type=click.Path(file_okay=False, writable=True),
              help="write the trace as log text, one file per member, in this directory "
                   "(Apache Ignite 3 text for the Ignite model, else Hazelcast text)")
def export(trace: str, events_file: str | None, log_dir: str | None) -> None:
    """Export a counterexample (from `check --trace-out`) as events and as log text, which
    `partsafe validate` reads back."""
    if not events_file and not log_dir:
        fail("give --events FILE, --log DIR or both")
    try:
        doc = artifact.read(trace)
        artifact.events(doc, trace)  # what is wrong in a malformed artifact, said first
        events, specs, config = artifact.exported(doc, trace)
    except ArtifactError as exc:
        fail(str(exc))
    if events_file:
        # the run's model, variant and scope: `conform` matches the file at that scope
        params = doc.get("params")
        run = ({"model": doc["model"], "variant": doc.get("variant", "fixed"),
                "scope": {k: v for k, v in params.items() if type(v) is int}}
               if isinstance(params, dict) and isinstance(doc.get("model"), str) else None)
        artifact.write_events(events, events_file, specs, config, run)
    written = files = 0
    if log_dir:
        written, files = artifact.write_logs(events, Path(log_dir), doc.get("model"))
    click.echo(f"{len(events)} events"
               + (f" -> {events_file}" if events_file else "")
               + (f"; {written} log lines in {files} member file(s) -> {log_dir}"
                  if log_dir else ""))


@main.command()
@click.argument("current")
@click.argument("target")
@click.option("--variant", default="fixed", show_default=True,
              help=f"planner variant: {', '.join(PLANNER_VARIANTS)}")
@click.option("--json", "as_json", is_flag=True, help="print one JSON document on stdout")
@click.option("--events", "events_file", type=click.Path(dir_okay=False, writable=True),
              help="also write the planner's FINEST lines as events (JSON Lines) to this file")
@click.option("--log", "log_dir", type=click.Path(file_okay=False, writable=True),
              help="also write the master's log of the plan (Hazelcast's FINEST lines of "
                   "MigrationManager and MigrationPlanner) in this directory")
@click.option("--partition", default=0, show_default=True, type=click.IntRange(min=0),
              help="the partition id the events and the log name")
def plan(current: str, target: str, variant: str, as_json: bool, events_file: str | None,
         log_dir: str | None, partition: int) -> None:
    """Plan the migrations of one partition from CURRENT to TARGET replicas (000 §3).

    Replicas are comma-separated members, `-` for an empty index, at most 7 indices:
    `partsafe plan A,-,C D,A,C`. With --events or --log the plan is also written as the events
    and the log text of its master (the current owner, else the first member named), which
    `partsafe validate` judges.
    """
    if variant not in PLANNER_VARIANTS:
        fail(f"unknown planner variant {variant!r}; known: {', '.join(PLANNER_VARIANTS)}")
    arrays = []
    for name, text in (("CURRENT", current), ("TARGET", target)):
        try:
            arrays.append(parse_replicas(text))
        except PlannerError as exc:
            fail(f"{name} {text!r}: {exc}")
    if len(arrays[0]) != len(arrays[1]):
        fail(f"CURRENT has {len(arrays[0])} indices and TARGET {len(arrays[1])}: they must have "
             "as many")
    try:
        p = make_plan(arrays[0], arrays[1], variant=variant)
    except PlannerError as exc:
        fail(str(exc))
    if events_file or log_dir:
        master = next((m for m in (*arrays[0], *arrays[1]) if m is not None), "A")
        found = plan_events(arrays[0], arrays[1], variant=variant, partition=partition,
                            member=master)
        if events_file:
            artifact.write_events(found, events_file)
        if log_dir:
            artifact.write_logs(found, Path(log_dir))
    if as_json:
        click.echo(dumps(plan_json(p)))
    else:
        render_plan(stdout(), p)


@main.command()
@click.option("--json", "as_json", is_flag=True, help="print the catalogue as JSON")
def specs(as_json: bool) -> None:
    """The invariant catalogue: id, title, statement, design and section, kind, and where each
    spec is judged (explored, proved, on event files, on Hazelcast and Ignite 3 logs, with the
    messages that carry its evidence), or why not."""
    catalogue = _catalogue()
    where = {s.id: judged(s) for s in catalogue}
    if as_json:
        click.echo(dumps([{**s.as_dict(), **where[s.id]} for s in catalogue]))
        return
    render_specs(stdout(), catalogue, where)


def _catalogue() -> list[Spec]:
    """The spec catalogue in `SPEC_FAMILIES` order: the registry's own order is the order in
    which its modules happened to be imported, which differs from one command to another."""
    rank = {family: i for i, family in enumerate(SPEC_FAMILIES)}
    return sorted(all_specs(), key=lambda s: rank.get(s.id.split("-")[0], len(rank)))


@main.command()
@click.argument("spec_id")
@click.option("--json", "as_json", is_flag=True, help="print one JSON document on stdout")
def explain(spec_id: str, as_json: bool) -> None:
    """What SPEC_ID states, where the design says so, why it exists, the variants the bug zoo
    expects to break it, and where it is judged (with the log messages that carry it)."""
    try:
        spec = get_spec(spec_id)
    except KeyError:
        fail(f"unknown spec {spec_id!r}; `partsafe specs` lists them")
    breaking = catalog.variants_breaking(spec.id)
    forms = z3_forms(spec.id)
    if spec.z3 is not None:  # the planner's oracle
        forms.append({"model": "planner", "module": spec.z3, "kind": "oracle",
                      "formula": "a constraint on every replica array of a plan "
                                 "(models/planner_oracle.py)", "lemmas": [],
                      "command": "partsafe prove planner"})
    where = judged(spec)
    if as_json:
        click.echo(dumps(dict(spec.as_dict(), rationale=spec.rationale, z3=forms or None,
                              zoo_variants=breaking, **where)))
        return
    render_spec(stdout(), spec, breaking, forms, where)


@main.command()
@click.option("--quick", is_flag=True, help="skip TwoPhase with 9 RMs (about a minute)")
@click.option("--json", "as_json", is_flag=True, help="print one JSON document on stdout")
def bench(quick: bool, as_json: bool) -> None:
    """Measure the explorer on this machine: states per second, peak memory, symmetry saving.

    Nine searches, each in a fresh interpreter: about 4 minutes on a 2-core machine (about 2½
    with --quick). Each run's figures are printed as it ends.
    """
    started = time.perf_counter()
    if as_json:
        click.echo(dumps({"runs": bench_suite.run_suite(quick=quick)}))
        return
    console = stdout()
    rows = bench_suite.run_suite(quick=quick,
                                 progress=stderr() if stderr().is_terminal else None,
                                 done=lambda i, n, row: console.print(
                                     bench_suite.row_line(i, n, row)))
    bench_suite.render(console, rows)
    console.print(Text(f"bench: {len(rows)} runs in {time.perf_counter() - started:,.0f} s"))

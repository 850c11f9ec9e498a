"""The `partsafe` command line (README.md, docs/architecture.md).

Exit status everywhere: 0 all hold, 1 a violation (or a coverage gap) was found, 2 the input or the
command was wrong, 3 a search bound was reached before the check was complete. `--json` prints
exactly one JSON document on stdout; people get rich tables, and progress on stderr.
"""

from __future__ import annotations

import json
import os
import sys
import textwrap
import time
from pathlib import Path
from typing import Any, NoReturn

import click
from rich import box
from rich.console import Console
from rich.table import Table
from rich.text import Text

from partsafe.checker.actor.model import ActorModel
from partsafe.checker.engine.bfs import Bounds, Progress, Result, explore
from partsafe.checker.engine.checkpoint import (
    Checkpoint,
    CheckpointError,
    code_digest,
    describe,
    edges_beside,
    hash_seed_for,
    read_header,
    rehash_environment,
)
from partsafe.checker.engine.edges import EdgeLogError
from partsafe.checker.engine.model import Model
from partsafe.checker.planner.check import (
    KNOWN_FINDINGS,
    PlannerCheck,
    check_json,
    check_planner,
    judge,
    plan_json,
    show,
)
from partsafe.checker.planner.space import canonical_pairs
from partsafe.checker.planner.view import (
    planner_junit,
    planner_suite,
    render_plan,
    render_planner_check,
)
from partsafe.checker.protocols import catalog
from partsafe.checker.report import (
    EXIT_OK,
    EXIT_VIOLATION,
    VERDICT_EXIT,
    artifact,
    dumps,
    junit,
    overall,
    print_verdict,
    render_result,
    render_trace,
    result_json,
    steps_json,
)
from partsafe.refimpl.planner import VARIANT_TABLE as PLANNER_VARIANTS

PLANNER_DEFAULT_REPLICAS = 4
#: every model `partsafe check` knows: the searches of the catalogue, and the planner's check
MODEL_NAMES = (*catalog.MODELS, "planner")
STRICT_HELP = ("fail on the known findings of the faithful planner too (by default they are "
               "reported and do not fail the run)")
SCOPE_PARAMS: dict[str, str] = {}
for _entry in catalog.MODELS.values():
    for _name, _param in _entry.params.items():
        if _name == "replicas":
            continue  # its own option: the planner reads it too
        SCOPE_PARAMS.setdefault(_name, f"{_param.help} ({_entry.name}, default {_param.default})")


def _fail(message: str) -> NoReturn:
    raise click.UsageError(message)


def _stdout() -> Console:
    return Console(highlight=False, soft_wrap=False)


def _stderr() -> Console:
    return Console(stderr=True, highlight=False)


@click.group(context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 100})
@click.version_option(package_name="partsafe")
def main() -> None:
    """partsafe: a formal model and reference checker for the membership, partition-migration and
    rebalance protocols of Hazelcast and Apache Ignite 3."""


def _scope_options(func: Any) -> Any:
    for name, help_text in reversed(SCOPE_PARAMS.items()):
        func = click.option(f"--{name}", type=int, default=None, help=help_text)(func)
    return func


class _ProgressView:
    """A one-line live display of a running search on stderr; on a stderr that is not a
    terminal (a log file), one plain line every `LOG_EVERY` seconds instead."""

    LOG_EVERY = 30.0

    def __init__(self, label: str, enabled: bool) -> None:
        self.enabled = enabled
        self.label = label
        self.console = _stderr()
        self.status: Any = None
        self.next_line = 0.0

    def __enter__(self) -> _ProgressView:
        if self.enabled and self.console.is_terminal:
            self.status = self.console.status(f"{self.label}: starting")
            self.status.__enter__()
        return self

    def __call__(self, p: Progress) -> None:
        text = (f"{self.label}: {p.distinct_states:,} states, {p.states_per_second:,.0f}/s, "
                f"depth {p.depth}, queue {p.queue:,}, {p.seconds:.0f} s")
        if self.status is not None:
            self.status.update(text)
        elif self.enabled and p.seconds >= self.next_line:
            self.next_line = p.seconds + self.LOG_EVERY
            self.console.print(text, soft_wrap=True)

    def saved(self, progress: dict[str, Any]) -> None:
        """A checkpoint was written: one line, above the live display."""
        self.console.print(f"{self.label}: checkpoint at depth {progress['depth']}, "
                           f"{progress['states']:,} states, {progress['seconds']:.0f} s",
                           soft_wrap=True)

    def __exit__(self, *exc: object) -> None:
        if self.status is not None:
            self.status.__exit__(None, None, None)


def run_check(entry: catalog.ModelEntry, variant: str, overrides: dict[str, int], *,
              bounds: Bounds, symmetry: bool, keep_going: bool, progress: bool,
              until: str | None = None, checkpoint: Checkpoint | None = None,
              workers: int = 1, only: dict[str, frozenset[str]] | None = None,
              ) -> tuple[Model[Any], Result, dict[str, int]]:
    try:
        params = entry.scope(overrides)
        model = entry.make(variant, overrides)
        if only:
            if not isinstance(model, ActorModel):
                _fail(f"--only applies to the actor models, not {entry.name}")
            if not symmetry:
                model.drop_symmetry()
            model.restrict(only)
    except ValueError as exc:
        _fail(str(exc))
    specs = list(dict.fromkeys(p.spec for p in model.properties()))
    if until is not None and until not in specs:
        _fail(f"--until {until}: not a spec of model {entry.name} (its specs: "
              f"{', '.join(specs)})")
    try:
        with _ProgressView(f"{entry.name} ({variant})", progress) as view:
            if checkpoint is not None and progress:
                checkpoint.notify = view.saved
            result = explore(model, symmetry=symmetry, bounds=bounds,
                             stop_at_first=not keep_going, progress=view if progress else None,
                             action_kinds=entry.action_kinds, until=until,
                             checkpoint=checkpoint, workers=workers)
    except CheckpointError as exc:
        _fail(f"--checkpoint: {exc}")
    except EdgeLogError as exc:
        _fail(str(exc))
    except KeyboardInterrupt:
        resume = (f"; resume from the checkpoint {checkpoint.path}"
                  if checkpoint is not None and checkpoint.exists() else
                  " (bound the search with --max-seconds or --max-states, or save it with "
                  "--checkpoint)")
        _stderr().print(Text(f"{entry.name}: interrupted; no verdict{resume}"))
        sys.exit(130)
    return model, result, params


def _variants_epilog() -> str:
    """The variants of every model, one paragraph that click does not rewrap (the tables of
    refimpl/variants.py, by way of the catalog)."""
    lines = ["\b", "Variants (--variant; fixed is the current design):"]
    for models, names in catalog.variant_groups():
        lines += textwrap.wrap(", ".join(names), width=78, break_on_hyphens=False,
                               initial_indent=f"  {', '.join(models)}: ",
                               subsequent_indent="      ")
    return "\n".join(lines)


@main.command(epilog=_variants_epilog())
@click.argument("model", required=False)
@click.option("--variant", default="fixed", show_default=True,
              help="protocol variant: a historical flaw or a design question of MODEL (listed "
                   "below), or fixed for the current design; `partsafe explain SPEC` names the "
                   "variants that break SPEC")
@_scope_options
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
@click.option("--progress/--no-progress", default=None,
              help="live progress on stderr (default: when stderr is a terminal)")
@click.option("--replicas", type=int, default=None,
              help=f"planner: check every pair of arrays with 1 to N indices (default "
                   f"{PLANNER_DEFAULT_REPLICAS}, at most 7); ignite-rebalance: the partition's "
                   f"replica count (default {catalog.IGNITE.params['replicas'].default})")
def check(model: str | None, variant: str, max_depth: int | None, max_states: int | None,
          max_seconds: float | None, checkpoint_file: Path | None, checkpoint_every: float,
          only_targets: tuple[str, ...], workers: int, symmetry: bool, keep_going: bool,
          until: str | None, strict: bool, as_json: bool,
          junit_file: str | None, trace_out: str | None, progress: bool | None,
          replicas: int | None, **scope: int | None) -> None:
    """Explore MODEL exhaustively at a small scope and check every spec on it.

    Without MODEL, every model is checked at its default scope. Models: membership (Hazelcast 3.9
    cluster membership, seed 002), migration and shutdown (3.7, seeds 000 and 004), parallel
    (4.1, seed 003), ignite-rebalance (Ignite 3, seed 001), planner (the migration planner of
    000 §3, every pair of replica arrays) and twophase (two-phase commit, the explorer's
    calibration).

    The known findings of the faithful planner are reported and do not fail the run; --strict
    fails on them. The report ends with one verdict line, and the exit status agrees with it.
    """
    started = time.perf_counter()
    overrides = {k.replace("_", "-"): v for k, v in scope.items() if v is not None}
    if workers < 0:
        _fail("--workers must be 0 (one per core) or more")
    only = _only(only_targets)
    workers = workers or os.cpu_count() or 1
    if model == "planner":
        if workers > 1:
            _fail("--workers applies to the searches; the planner's check is one loop")
        if overrides:
            _fail(f"--{next(iter(overrides))} does not apply to model planner (it takes "
                  "--replicas and --variant)")
        if until or trace_out:
            _fail(f"{'--until' if until else '--trace-out'} applies to the searches, not to "
                  "model planner")
        _check_planner(variant, replicas, as_json, junit_file, strict)
        return
    if replicas is not None:
        if model != catalog.IGNITE.name:
            _fail("--replicas applies to models planner and ignite-rebalance only")
        overrides["replicas"] = replicas
    if model is None:
        if variant != "fixed" or overrides or trace_out or checkpoint_file or only or until:
            _fail("--variant, scope options, --only, --until, --trace-out and --checkpoint need "
                  "a MODEL")
        entries = list(catalog.MODELS.values())
    elif model not in catalog.MODELS:
        _fail(f"unknown model {model!r}; known: {', '.join(MODEL_NAMES)}")
    else:
        entries = [catalog.get(model)]
    if until is not None:
        until = until.upper()
        keep_going = True
    for name, value in (("--max-depth", max_depth), ("--max-states", max_states),
                        ("--max-seconds", max_seconds)):
        if value is not None and value <= 0:
            _fail(f"{name} must be positive")
    if checkpoint_every <= 0:
        _fail("--checkpoint-every must be positive")
    bounds = Bounds(max_depth, max_states, max_seconds)
    show_progress = sys.stderr.isatty() if progress is None else progress
    checkpoint = None
    if checkpoint_file is not None:
        checkpoint = _checkpoint(checkpoint_file, checkpoint_every, show_progress)
    runs = []
    for entry in entries:
        runs.append(run_check(entry, variant, overrides, bounds=bounds, symmetry=symmetry,
                              keep_going=keep_going, progress=show_progress,
                              checkpoint=checkpoint, workers=workers, only=only, until=until))
    if trace_out:
        _write_trace(trace_out, *runs[0])
    planner = check_planner(PLANNER_DEFAULT_REPLICAS) if model is None else None
    if junit_file:
        extra = [planner_suite(planner, strict)] if planner is not None else []
        Path(junit_file).write_text(junit([(m, r) for m, r, _ in runs], extra=extra))
    verdict = overall([r.result for _, r, _ in runs]
                      + ([planner.verdict(strict)] if planner is not None else []))
    status = VERDICT_EXIT[verdict]
    known = planner.known if planner is not None and not strict else []
    if as_json:
        docs = [result_json(m, r) for m, r, _ in runs]
        if model is None:
            if planner is not None:
                docs.insert(1, check_json(planner, strict))
            click.echo(dumps({"result": verdict, "known_findings": {"planner": known},
                              "strict": strict, "models": docs}))
        else:
            click.echo(dumps(docs[0]))
    else:
        console = _stdout()
        for m, r, _ in runs:
            render_result(console, m, r)
        if planner is not None:
            render_planner_check(console, planner, strict)
        if model is None:
            what = f"check of {len(runs)} models and the planner at their default scopes"
        else:
            _, r, params = runs[0]
            what = f"check {r.model} ({r.variant}) at {_scope_words(params)}"
        print_verdict(console, what, verdict, time.perf_counter() - started,
                      _verdict_detail([r for _, r, _ in runs], known))
    sys.exit(status)


def _scope_words(scope: dict[str, Any]) -> str:
    return " ".join(f"{k}={v}" for k, v in scope.items())


def _verdict_detail(results: list[Result], known: list[str]) -> str:
    """What the verdict line says beside the verdict: the specs broken, the goals missed, the
    bound reached, the known findings."""
    parts = []
    broken = list(dict.fromkeys(v.spec for r in results for v in r.violations))
    if broken:
        parts.append(f"broken: {', '.join(broken)}")
    gaps = [g.name for r in results if r.result == "gap" for g in r.goals if not g.reached]
    if gaps:
        parts.append(f"goals never reached: {', '.join(gaps)}")
    bounds = [r.incomplete_reason for r in results if r.incomplete_reason]
    if bounds:
        parts.append(f"incomplete: {'; '.join(dict.fromkeys(bounds))}")
    if known:
        parts.append(f"known findings of the planner: {', '.join(known)}")
    return "; ".join(parts)


def _write_trace(path: str, model: Model[Any], result: Result, params: dict[str, int]) -> None:
    """`--trace-out`: the shortest counterexample as a replayable artifact, and a line on stderr
    that says where it went (or why nothing was written)."""
    if not result.violations:
        _stderr().print(Text(f"--trace-out {path}: no violation, so no counterexample was "
                             "written"), soft_wrap=True)
        return
    try:
        Path(path).write_text(dumps(artifact(model, result, params)) + "\n")
    except OSError as exc:
        _fail(f"--trace-out {path}: cannot write: {exc.strerror or exc}")
    v = result.violations[0]
    _stderr().print(Text(f"counterexample of {v.spec} ({v.trace.depth} steps) written to {path}; "
                         f"replay it with: partsafe replay {path}"), soft_wrap=True)


def _only(values: tuple[str, ...]) -> dict[str, frozenset[str]]:
    """``--only KIND=NODES`` options as a map from fault kind to nodes."""
    only: dict[str, frozenset[str]] = {}
    for value in values:
        kind, sep, nodes = value.partition("=")
        names = frozenset(n.strip() for n in nodes.split(",") if n.strip())
        if not sep or not kind or not names:
            _fail(f"--only {value}: expected KIND=NODES, such as crash=A or shutdown=B,C")
        if kind in only:
            _fail(f"--only {value}: {kind} is named twice")
        only[kind] = names
    return only


def _checkpoint(path: Path, every: float, progress: bool) -> Checkpoint:
    """The checkpoint of a search, in a process that hashes as the checkpoint's did: the
    fingerprints it holds are Python hashes. The command starts itself again under the
    checkpoint's hash seed (a new checkpoint gets a random one), with address randomization off
    where None hashes by address."""
    try:
        seed = hash_seed_for(path)
        header = read_header(path) if path.exists() else None
    except CheckpointError as exc:
        _fail(f"--checkpoint: {exc}")
    env = rehash_environment(seed)
    if env is not None:
        sys.stdout.flush()
        os.execve(sys.executable, [sys.executable, *sys.argv], env)
    if header is not None and progress:
        _stderr().print(Text(f"resuming {path} at depth {header['depth']} "
                             f"({header['states']:,} states, {header['seconds']:.0f} s, written "
                             f"{header['written']})"))
    return Checkpoint(path, every)


@main.command("checkpoint")
@click.argument("file", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@click.option("--json", "as_json", is_flag=True, help="print one JSON document on stdout")
def checkpoint_info(file: Path, as_json: bool) -> None:
    """What a checkpoint of `partsafe check --checkpoint` holds: the search, how far it got, and
    whether this installation can resume it (the same code)."""
    try:
        header = read_header(file)
    except CheckpointError as exc:
        _fail(str(exc))
    sig = header["signature"]
    doc = {"model": sig["model"], "variant": sig["variant"], "scope": sig["scope"],
           "symmetry": sig["symmetry"], "depth": header["depth"], "states": header["states"],
           "seconds": round(header["seconds"], 1), "written": header["written"],
           "hash_seed": header["hash_seed"], "code": header["code"],
           "resumable_here": header["code"] == code_digest(),
           "bytes": file.stat().st_size, "edge_bytes": _edge_bytes(file)}
    if as_json:
        click.echo(dumps(doc))
        return
    table = Table(show_header=False, box=None)
    rows = [("search", describe(sig)),
            ("saved at", f"depth {header['depth']}, {header['states']:,} states, "
                         f"{header['seconds']:,.0f} s of search"),
            ("written", f"{header['written']}, {doc['bytes'] / 2**20:,.1f} MB"
                        + (f", and {doc['edge_bytes'] / 2**20:,.1f} MB of edges in "
                           f"{file.name}.edges/" if doc["edge_bytes"] else "")),
            ("code", f"{header['code'][:16]} ("
                     + ("this installation's: resumable here" if doc["resumable_here"] else
                        "not this installation's: resume with the code that wrote it") + ")"),
            ("hash seed", str(header["hash_seed"]))]
    for key, value in rows:
        table.add_row(Text(key, "bold"), Text(value))  # the file's text, never markup
    _stdout().print(table)


def _edge_bytes(file: Path) -> int:
    """The size of the edges kept beside the checkpoint `file` (engine/edges.py), 0 if none."""
    edges = edges_beside(file)
    return sum(f.stat().st_size for f in edges.iterdir()) if edges.is_dir() else 0


def _check_planner(variant: str, replicas: int | None, as_json: bool,
                   junit_file: str | None, strict: bool) -> NoReturn:
    n = PLANNER_DEFAULT_REPLICAS if replicas is None else replicas
    if not 1 <= n <= 7:
        _fail(f"--replicas must be 1 to 7, not {n}")
    if variant not in PLANNER_VARIANTS:
        _fail(f"unknown variant {variant!r} of model planner; known: "
              f"{', '.join(PLANNER_VARIANTS)}")
    result = check_planner(n, variant)
    verdict = result.verdict(strict)
    if junit_file:
        Path(junit_file).write_text(planner_junit(result, strict))
    if as_json:
        click.echo(dumps(check_json(result, strict)))
    else:
        console = _stdout()
        render_planner_check(console, result, strict)
        known = [] if strict else result.known
        detail = "; ".join(
            ([f"broken: {', '.join(sorted(result.smallest) if strict else result.unexpected)}"]
             if verdict == "violation" else [])
            + ([f"known findings: {', '.join(known)}"] if known else []))
        print_verdict(console, f"check planner ({variant}) at replicas 1 to {n}", verdict,
                      result.seconds, detail)
    sys.exit(VERDICT_EXIT[verdict])


def check_command(model: str, variant: str = "fixed", overrides: dict[str, int] | None = None,
                  until: str | None = None) -> str:
    """The `partsafe check` command line that runs `model` at the default scope changed by
    `overrides` (scope parameters by their option names), searching on until `until` breaks."""
    words = ["partsafe", "check", model]
    if variant != "fixed":
        words += ["--variant", variant]
    for key, value in (overrides or {}).items():
        words += [f"--{key}", str(value)]
    if until:
        words += ["--until", until]
    return " ".join(words)


@main.command()
@click.option("--strict", is_flag=True, help=STRICT_HELP)
@click.option("--json", "as_json", is_flag=True, help="print one JSON document on stdout")
@click.option("--junit", "junit_file", type=click.Path(dir_okay=False, writable=True),
              help="also write a JUnit XML report to this file")
@click.option("--progress/--no-progress", default=None,
              help="live progress on stderr (default: when stderr is a terminal)")
def zoo(strict: bool, as_json: bool, junit_file: str | None, progress: bool | None) -> None:
    """Find every historical flaw (each a variant that must break its spec) and check that every
    fixed model is clean at the same scope (about 45 s on two cores).

    Each entry comes with the `partsafe check` command that reproduces it. The known findings of
    the faithful planner do not fail the run; --strict fails on them.
    """
    started = time.perf_counter()
    show_progress = sys.stderr.isatty() if progress is None else progress
    variants = []
    fixed = []
    runs = []
    ok = True
    for entry in catalog.MODELS.values():
        scopes_done: set[tuple[tuple[str, int], ...]] = set()
        for variant, (expected, overrides) in entry.zoo.items():
            # search until the variant's own spec breaks: a flaw may break others first
            m, r, params = run_check(entry, variant, overrides, bounds=Bounds(), symmetry=True,
                                     keep_going=True, progress=show_progress, until=expected)
            runs.append((m, r))
            hit = next((v for v in r.violations if v.spec == expected), None)
            first = r.violations[0] if r.violations else None
            found = hit is not None
            ok &= found
            variants.append({"model": entry.name, "variant": variant, "expected_spec": expected,
                             "found": found, "spec": expected if hit else (
                                 first.spec if first else None),
                             "depth": (hit or first).trace.depth if (hit or first) else None,
                             "first_spec": first.spec if first else None,
                             "seconds": round(r.seconds, 3), "scope": params,
                             "command": check_command(entry.name, variant, overrides, expected)})
            key = tuple(sorted(params.items()))
            if key in scopes_done:
                continue
            scopes_done.add(key)
            m2, r2, _ = run_check(entry, "fixed", overrides, bounds=Bounds(), symmetry=True,
                                  keep_going=False, progress=show_progress)
            runs.append((m2, r2))
            # clean: complete and no violation (a reduced scope need not reach every goal)
            clean = not r2.violations and r2.incomplete_reason is None
            ok &= clean
            fixed.append({"model": entry.name, "result": "ok" if clean else r2.result,
                          "scope": params, "distinct_states": r2.distinct_states,
                          "seconds": round(r2.seconds, 3),
                          "goals_reached": [g.name for g in r2.goals if g.reached],
                          "command": check_command(entry.name, "fixed", overrides)})
    planner_zoo, planner_fixed, planner_ok, planner = _planner_zoo(strict)
    variants.extend(planner_zoo)
    fixed.append(planner_fixed)
    ok &= planner_ok
    verdict = "ok" if ok else "violation"
    known = [] if strict else planner.known
    if junit_file:
        Path(junit_file).write_text(junit(runs, goals=False,
                                          extra=[planner_suite(planner, strict)]))
    doc = {"result": verdict, "strict": strict, "known_findings": {"planner": known},
           "variants": variants, "fixed": fixed,
           "seconds": round(time.perf_counter() - started, 3)}
    if as_json:
        click.echo(dumps(doc))
    else:
        render_zoo(_stdout(), doc)
    sys.exit(VERDICT_EXIT[verdict])


def render_zoo(console: Console, doc: dict[str, Any]) -> None:
    """The zoo's report (the `zoo --json` document) for people: the flaws, the fixed design's
    runs, the command that reproduces each flaw, and the verdict line."""
    variants, fixed = doc["variants"], doc["fixed"]
    known = doc["known_findings"]["planner"]
    table = Table(title="the bug zoo: each variant must break its spec", title_justify="left",
                  box=box.SIMPLE_HEAD, pad_edge=False)
    for col in ("model / variant", "expected spec", "found", "depth", "seconds"):
        # identifiers are never broken across lines (only the "found" column may wrap)
        table.add_column(col, no_wrap=col != "found",
                         justify="right" if col in ("depth", "seconds") else "left")
    model_shown = None
    for v in variants:
        if v["model"] != model_shown:
            model_shown = v["model"]
            table.add_row(Text(model_shown, "bold"))
        table.add_row(f"  {v['variant']}", v["expected_spec"],
                      Text("yes", "green") if v["found"] else Text(f"no ({v['spec']})", "red"),
                      str(v["depth"]), f"{v['seconds']:.2f}")
    console.print(table)
    table = Table(title="the fixed design at the same scopes: each must be clean",
                  title_justify="left", box=box.SIMPLE_HEAD, pad_edge=False)
    table.add_column("model", no_wrap=True)
    table.add_column("scope (the defaults changed)")
    for col in ("result", "distinct states", "seconds"):
        table.add_column(col, justify="left" if col == "result" else "right", no_wrap=True)
    for f in fixed:
        default = catalog.MODELS[f["model"]].scope() if f["model"] in catalog.MODELS else {}
        changed = " ".join(f"{k}={v}" for k, v in f["scope"].items() if default.get(k) != v)
        table.add_row(f["model"], changed or "the default",
                      Text(f["result"], "green" if f["result"] == "ok" else "red"),
                      f"{f['distinct_states']:,}", f"{f['seconds']:.2f}")
    console.print(table)
    console.print(Text("to reproduce an entry:", style="bold"))
    for v in variants:
        console.print(Text(f"  {v['command']}"), soft_wrap=True)
    if known:
        console.print(Text(f"known findings of the faithful planner, which do not fail the run "
                           f"(--strict fails on them): {', '.join(known)}", style="yellow"))
    failed = [f"{v['variant']} not found" for v in variants if not v["found"]]
    failed += [f"{f['model']} fixed: {f['result']}" for f in fixed if f["result"] != "ok"]
    detail = "; ".join(failed) if failed else (
        f"known findings of the planner: {', '.join(known)}" if known else "")
    print_verdict(console, f"zoo of {len(variants)} historical flaws and the fixed design at "
                           f"{len(fixed)} scopes", doc["result"], doc["seconds"], detail)


def _planner_zoo(strict: bool) -> tuple[list[dict[str, Any]], dict[str, Any], bool,
                                        PlannerCheck]:
    """Each planner variant that declares a spec it breaks (refimpl/planner.py's
    `VARIANT_TABLE`: hz37-naive-order, PLAN-NO-DECREASE) must break it on a pair where the
    faithful planner keeps every spec; the faithful planner must break nothing beyond its known
    findings (nothing at all when `strict`)."""
    scope = {"replicas": PLANNER_DEFAULT_REPLICAS}
    entries = []
    found_all = True
    for flaw in PLANNER_VARIANTS.values():
        if flaw.breaks is None:
            continue
        run = check_planner(PLANNER_DEFAULT_REPLICAS, flaw.name)
        expected = flaw.breaks
        witness = None
        for n in range(1, PLANNER_DEFAULT_REPLICAS + 1):
            for current, target in canonical_pairs(n):
                _, bad = judge(current, target, flaw.name)
                if any(v.spec == expected for v in bad) and not judge(current, target)[1]:
                    witness = (current, target, next(v for v in bad if v.spec == expected))
                    break
            if witness:
                break
        found = witness is not None
        found_all &= found
        entries.append({
            "model": "planner", "variant": flaw.name, "expected_spec": expected,
            "found": found, "spec": expected if found else None,
            "depth": witness[2].step if witness else None,
            "seconds": round(run.seconds, 3), "scope": scope,
            "command": check_command("planner", flaw.name, scope),
            "counterexample": (f"{show(witness[0])} -> {show(witness[1])}: "
                               f"{witness[2].message}" if witness else None)})
    fixed = check_planner(PLANNER_DEFAULT_REPLICAS)
    clean = fixed.verdict(strict) == "ok"
    record = {"model": "planner", "result": "ok" if clean else "violation",
              "scope": scope, "distinct_states": fixed.pairs_checked,
              "seconds": round(fixed.seconds, 3),
              "known_findings": {} if strict else {spec: KNOWN_FINDINGS[spec]
                                                   for spec in fixed.known},
              "command": check_command("planner", "fixed", scope)}
    return entries, record, found_all and clean, fixed


@main.command()
@click.argument("file", type=click.Path(dir_okay=False))
@click.option("--json", "as_json", is_flag=True, help="print one JSON document on stdout")
def replay(file: str, as_json: bool) -> None:
    """Re-execute a counterexample artifact (from `check --trace-out`) step by step.

    Exit status 1 when the violation reproduces, 0 when the spec holds at the end."""
    started = time.perf_counter()
    from partsafe.checker.cli.replay import ReplayError
    from partsafe.checker.cli.replay import replay as do_replay

    try:
        doc = json.loads(Path(file).read_text())
    except OSError as exc:
        _fail(f"{file}: cannot read: {exc.strerror}")
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        _fail(f"{file}: not JSON: {exc}")
    try:
        model, trace, message = do_replay(doc, file)
    except ReplayError as exc:
        _fail(str(exc))
    reproduced = message is not None
    if as_json:
        click.echo(dumps({"file": file, "spec": doc["spec"], "reproduced": reproduced,
                          "message": message, "depth": trace.depth,
                          "trace": steps_json(model, trace)}))
    else:
        console = _stdout()
        title = f"{doc['spec']}: {message}" if reproduced else f"{doc['spec']} holds at the end"
        render_trace(console, model, trace, title)
        print_verdict(console, f"replay of {file} ({trace.depth} steps)",
                      "violation" if reproduced else "ok", time.perf_counter() - started,
                      f"violation reproduced: {doc['spec']} broken again" if reproduced
                      else f"{doc['spec']} holds: the violation did not reproduce")
    sys.exit(EXIT_VIOLATION if reproduced else EXIT_OK)


def _auto_engine(paths: tuple[str, ...], master: str | None, output_dir: str | None) -> str:
    """`--engine auto`: Spark when a Spark option is given, or where `spark.auto_engine` says
    Spark is the better engine for the input's size; local without PySpark."""
    from importlib.util import find_spec

    from partsafe.checker.validate.spark import auto_engine, inputs

    if find_spec("pyspark") is None:
        return "local"
    if master or output_dir:
        return "spark"
    return auto_engine(sum(i.size for i in inputs(list(paths))), master)


def _byte_progress(paths: tuple[str, ...], enabled: bool | None):
    """A rich progress bar over the input bytes on stderr (for a terminal, or when asked)."""
    from contextlib import nullcontext

    from rich.progress import BarColumn, DownloadColumn, Progress, TimeRemainingColumn

    console = _stderr()
    if enabled is False or (enabled is None and not console.is_terminal):
        return nullcontext(None)
    from partsafe.traces.scanner import InputError, expand

    try:
        total = sum(c.path.stat().st_size for c in expand(list(paths)) if c.skipped is None)
    except (InputError, OSError):
        total = 0
    bar = Progress("[progress.description]{task.description}", BarColumn(), DownloadColumn(),
                   TimeRemainingColumn(), console=console, transient=True)

    class _Bar:
        def __enter__(self):
            bar.__enter__()
            task = bar.add_task("scanning", total=total or None)
            return lambda n: bar.advance(task, n)

        def __exit__(self, *exc: object) -> None:
            bar.__exit__(None, None, None)

    return _Bar()


@main.command()
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
@click.option("--json", "as_json", is_flag=True, help="print one JSON document on stdout")
@click.option("--junit", "junit_file", type=click.Path(dir_okay=False, writable=True),
              help="also write a JUnit XML report to this file")
@click.option("--progress/--no-progress", default=None,
              help="a progress display on stderr (default: when stderr is a terminal)")
@click.option("--spark-log", is_flag=True, help="show Spark's own logging (quiet by default)")
def validate(paths: tuple[str, ...], engine: str, master: str | None, output_dir: str | None,
             fmt: str, stuck_after: float, as_json: bool, junit_file: str | None,
             progress: bool | None, spark_log: bool) -> None:
    """Check the logs of a real cluster (files, directories, globs, .gz) against the specs.

    Every line is accounted for: parsed into an event, ignored as irrelevant, or reported as
    malformed with file and line; every file is judged, found to hold nothing recognised, or
    skipped with the reason (binary data; in a directory or a glob, a file that is not a log by
    its name or its content). Both engines give the same report. Exit status: 0 no violation, 1 a
    violation, 2 bad input (a path that does not exist), 3 incomplete: no event was judged.
    """
    from partsafe.checker.validate.local import InputError
    from partsafe.checker.validate.local import validate as run_validate
    from partsafe.checker.validate.view import render_report, validate_junit

    if stuck_after <= 0:
        _fail("--stuck-after must be positive")
    if engine == "local" and (output_dir or master):
        _fail(f"{'--output' if output_dir else '--master'} needs --engine spark")
    try:
        if engine == "auto":
            engine = _auto_engine(paths, master, output_dir)
        if engine == "spark":
            from partsafe.checker.validate.spark import (
                SparkFailed,
                SparkUnavailable,
                validate_spark,
            )

            shown = _stderr().is_terminal if progress is None else progress
            try:
                report = validate_spark(list(paths), fmt=fmt, stuck_ms=int(stuck_after * 1000),
                                        master=master, output=output_dir,
                                        progress=shown and not as_json, verbose=spark_log)
            except (SparkUnavailable, SparkFailed) as exc:
                _fail(str(exc))
        else:
            with _byte_progress(paths, progress if not as_json else False) as advance:
                report = run_validate(list(paths), fmt=fmt, stuck_ms=int(stuck_after * 1000),
                                      progress=advance)
    except InputError as exc:
        _fail(str(exc))
    if junit_file:
        Path(junit_file).write_text(validate_junit(report))
    if as_json:
        click.echo(dumps(report.as_dict()))
    else:
        render_report(_stdout(), report)
    sys.exit(VERDICT_EXIT[report.result])


@main.command()
@click.argument("paths", nargs=-1, required=True)
@click.option("--format", "fmt", type=click.Choice(["auto", "log", "jsonl"]), default="auto",
              show_default=True,
              help="log: a Hazelcast log in any layout; jsonl: canonical events")
def parse(paths: tuple[str, ...], fmt: str) -> None:
    """Print the events found in logs as canonical JSON Lines (one event a line, file order).

    The line accounting, any malformed lines, and each file that was skipped or in which nothing
    was recognised go to stderr.
    """
    from partsafe.checker.validate.local import JUDGED, statuses
    from partsafe.checker.validate.view import log_text
    from partsafe.traces.events import dumps as event_line
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
        _fail(str(exc))
    acc = scanner.accounting
    err = _stderr()
    order = {t.name: i for i, t in enumerate(acc.files)}
    for m in sorted(acc.malformed, key=lambda m: (order.get(m.file, 0), m.line)):
        err.print(log_text(f"{m.file}:{m.line}: malformed: {m.reason}"), soft_wrap=True)
    for s in statuses(candidates, acc.files):
        if s.status != JUDGED:
            err.print(log_text(f"{s.file}: {s.status}: {s.reason}"), soft_wrap=True)
    err.print(f"lines: {acc.lines:,} = {acc.parsed_lines:,} parsed + {acc.ignored_lines:,} "
              f"ignored + {len(acc.malformed):,} malformed; {acc.events:,} events")


@main.command()
@click.argument("trace", type=click.Path(dir_okay=False))
@click.option("--events", "events_file", type=click.Path(dir_okay=False, writable=True),
              help="write the trace's events as canonical JSON Lines to this file")
@click.option("--log", "log_dir", type=click.Path(file_okay=False, writable=True),
              help="write the trace as Hazelcast log text, one file per member, in this directory")
def export(trace: str, events_file: str | None, log_dir: str | None) -> None:
    """Export a counterexample (from `check --trace-out`) as events and as log text, which
    `partsafe validate` reads back."""
    from partsafe.traces.events import EventFormatError, from_dict, write_jsonl
    from partsafe.traces.writer import LogWriter

    if not events_file and not log_dir:
        _fail("give --events FILE, --log DIR or both")
    try:
        doc = json.loads(Path(trace).read_text())
        steps = doc["steps"]
    except OSError as exc:
        _fail(f"{trace}: cannot read: {exc.strerror}")
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        _fail(f"{trace}: not JSON: {exc}")
    except (KeyError, TypeError):
        _fail(f"{trace}: not a counterexample artifact (no 'steps'); write one with "
              "`partsafe check --trace-out FILE`")
    events = []
    try:
        steps = [{"step": 0, "events": doc.get("init_events", [])}, *steps]
        for step in steps:
            for obj in step.get("events", []):
                events.append(from_dict({**obj, "order": step["step"]},
                                        f"{trace}: step {step.get('step')}"))
    except (EventFormatError, AttributeError, KeyError) as exc:
        _fail(f"{trace}: {exc}")
    if events_file:
        with open(events_file, "w") as out:
            write_jsonl(events, out)
    written = 0
    if log_dir:
        writer = LogWriter()
        folder = Path(log_dir)
        folder.mkdir(parents=True, exist_ok=True)
        streams: dict[str, Any] = {}

        def stream(member: str) -> Any:
            if member not in streams:
                name = writer.address(member).replace(":", "-")
                streams[member] = (folder / f"member-{name}.log").open("w")
            return streams[member]

        try:
            written = writer.write(events, stream)
        finally:
            for f in streams.values():
                f.close()
    click.echo(f"{len(events)} events"
               + (f" -> {events_file}" if events_file else "")
               + (f"; {written} log lines in {len(streams)} member file(s) -> {log_dir}"
                  if log_dir else ""))


@main.command()
@click.argument("current")
@click.argument("target")
@click.option("--variant", default="fixed", show_default=True,
              help=f"planner variant: {', '.join(PLANNER_VARIANTS)}")
@click.option("--json", "as_json", is_flag=True, help="print one JSON document on stdout")
def plan(current: str, target: str, variant: str, as_json: bool) -> None:
    """Plan the migrations of one partition from CURRENT to TARGET replicas (000 §3).

    Replicas are comma-separated members, `-` for an empty index, at most 7 indices:
    `partsafe plan A,-,C D,A,C`.
    """
    from partsafe.refimpl.planner import PlannerError, parse_replicas
    from partsafe.refimpl.planner import plan as make_plan

    if variant not in PLANNER_VARIANTS:
        _fail(f"unknown planner variant {variant!r}; known: {', '.join(PLANNER_VARIANTS)}")
    arrays = []
    for name, text in (("CURRENT", current), ("TARGET", target)):
        try:
            arrays.append(parse_replicas(text))
        except PlannerError as exc:
            _fail(f"{name} {text!r}: {exc}")
    if len(arrays[0]) != len(arrays[1]):
        _fail(f"CURRENT has {len(arrays[0])} indices and TARGET {len(arrays[1])}: they must have "
              "as many")
    try:
        p = make_plan(arrays[0], arrays[1], variant=variant)
    except PlannerError as exc:
        _fail(str(exc))
    if as_json:
        click.echo(dumps(plan_json(p)))
    else:
        render_plan(_stdout(), p)


@main.command()
@click.option("--json", "as_json", is_flag=True, help="print the catalogue as JSON")
def specs(as_json: bool) -> None:
    """The invariant catalogue: id, title, statement, seed and section, kind."""
    from partsafe.specs.registry import all_specs

    catalogue = list(all_specs())
    if as_json:
        click.echo(dumps([s.as_dict() for s in catalogue]))
        return
    table = Table(title="partsafe specs", title_justify="left", show_lines=True)
    table.add_column("id", no_wrap=True)
    table.add_column("kind", no_wrap=True)
    table.add_column("spec", overflow="fold")
    for s in catalogue:
        table.add_row(s.id, s.kind, Text.assemble((s.title, "bold"), "\n", s.statement, "\n",
                                                  (f"design {s.seed} {s.section}", "dim")))
    _stdout().print(table)


@main.command()
@click.argument("spec_id")
@click.option("--json", "as_json", is_flag=True, help="print one JSON document on stdout")
def explain(spec_id: str, as_json: bool) -> None:
    """What SPEC_ID states, where the design says so, why it exists, and the variants the bug zoo
    expects to break it."""
    from partsafe.specs.registry import get

    try:
        spec = get(spec_id)
    except KeyError:
        _fail(f"unknown spec {spec_id!r}; `partsafe specs` lists them")
    breaking = catalog.variants_breaking(spec.id)
    doc = dict(spec.as_dict(), rationale=spec.rationale, z3=spec.z3, zoo_variants=breaking)
    if as_json:
        click.echo(dumps(doc))
        return
    console = _stdout()
    console.print(f"[bold]{spec.id}[/]: {spec.title}  [dim]({spec.kind})[/]")
    console.print(f"design {spec.seed}, {spec.design}, {spec.section}", markup=False)
    console.print(spec.statement)
    if spec.rationale:
        console.print(f"\n{spec.rationale}")
    if breaking:
        console.print(Text("\nbroken in the bug zoo by:", style="bold"))
        for v in breaking:
            command = check_command(v["model"], v["variant"], v["zoo_scope"])
            console.print(Text(f"  {command}"), soft_wrap=True)  # one line, to copy
            doc_text = textwrap.fill(v["doc"], width=max(console.width, 40), break_on_hyphens=False,
                                     initial_indent="    ", subsequent_indent="    ")
            console.print(Text(doc_text, style="dim"), soft_wrap=True)


@main.command()
@click.option("--quick", is_flag=True, help="skip TwoPhase with 9 RMs (about a minute)")
@click.option("--json", "as_json", is_flag=True, help="print one JSON document on stdout")
def bench(quick: bool, as_json: bool) -> None:
    """Measure the explorer on this machine: states per second, peak memory, symmetry saving.

    Nine searches, each in a fresh interpreter: about 4 minutes on a 2-core machine (about 2½
    with --quick). Each run's figures are printed as it ends.
    """
    from partsafe.checker.cli.bench import render, row_line, run_suite

    started = time.perf_counter()
    if as_json:
        click.echo(dumps({"runs": run_suite(quick=quick)}))
        return
    console = _stdout()
    rows = run_suite(quick=quick, progress=_stderr() if _stderr().is_terminal else None,
                     done=lambda i, n, row: console.print(row_line(i, n, row)))
    render(console, rows)
    console.print(Text(f"bench: {len(rows)} runs in {time.perf_counter() - started:,.0f} s"))


_SIZE_UNITS = {"": 1, "B": 1, "K": 1 << 10, "KB": 1 << 10, "KIB": 1 << 10, "M": 1 << 20,
               "MB": 1 << 20, "MIB": 1 << 20, "G": 1 << 30, "GB": 1 << 30, "GIB": 1 << 30,
               "T": 1 << 40, "TB": 1 << 40, "TIB": 1 << 40}


def _parse_size(text: str) -> int:
    """``2G``, ``500M``, ``64k``, ``1.5GB`` or a plain number of bytes (binary units)."""
    import re

    m = re.fullmatch(r"\s*(\d+(?:\.\d+)?)\s*([A-Za-z]*)\s*", text)
    unit = m.group(2).upper() if m else ""
    if m is None or unit not in _SIZE_UNITS:
        raise click.BadParameter(f"{text!r} is not a size: give bytes, or a number with K, M, G "
                                 "or T (2G, 500M, 64k)", param_hint="--size")
    return int(float(m.group(1)) * _SIZE_UNITS[unit])


def _simulation_progress(total: int, enabled: bool):
    """A rich progress bar over the protocol events written, with the bytes so far, on stderr."""
    from contextlib import nullcontext

    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TimeRemainingColumn

    if not enabled:
        return nullcontext(None)
    bar = Progress("[progress.description]{task.description}", BarColumn(), MofNCompleteColumn(),
                   TimeRemainingColumn(), console=_stderr(), transient=True)

    class _Bar:
        def __enter__(self):
            bar.__enter__()
            task = bar.add_task("simulating", total=total)

            def report(events: int, written: int) -> None:
                bar.update(task, completed=min(events, total),
                           description=f"simulating, {written / 1e6:,.0f} MB")

            return report

        def __exit__(self, *exc: object) -> None:
            bar.__exit__(None, None, None)

    return _Bar()


@main.command()
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
    002; parallel migrations and graceful shutdown, seeds 003 and 004), written as the
    distribution's log4j2 layout, among application noise. Each --inject SPEC writes, at a
    random point, lines that break exactly that spec; the manifest (DIR/.manifest.json, which
    `partsafe validate DIR` skips) records their file and line.
    """
    from partsafe.checker.validate.local import LOG_SPECS
    from partsafe.checker.validate.simulate import MANIFEST_NAME, MAX_MEMBERS
    from partsafe.checker.validate.simulate import simulate as run_simulate

    if not 2 <= members <= MAX_MEMBERS:
        _fail(f"--members must be 2 to {MAX_MEMBERS}, not {members}")
    if partitions < 1:
        _fail(f"--partitions must be at least 1, not {partitions}")
    if events < 1:
        _fail(f"--events must be at least 1, not {events}")
    if lines is not None and size is not None:
        _fail("give --lines or --size, not both")
    if lines is not None and lines < 0:
        _fail(f"--lines must not be negative, not {lines}")
    size_bytes = _parse_size(size) if size is not None else None
    specs = []
    for spec in inject:
        if spec.upper() not in LOG_SPECS:
            raise click.BadParameter(f"unknown spec {spec!r}; the specs a log can show are "
                                     f"{', '.join(LOG_SPECS)}", param_hint="--inject")
        specs.append(spec.upper())
    out = Path(out_dir)
    if out.exists() and not out.is_dir():
        _fail(f"--out {out_dir}: not a directory")
    if out.is_dir() and any(out.iterdir()):
        if not force:
            _fail(f"--out {out_dir}: the directory is not empty (give --force to write into it)")
        _remove_simulation(out, MANIFEST_NAME)
    show = (sys.stderr.isatty() and not as_json) if progress is None else progress
    try:
        with _simulation_progress(events, show) as report:
            manifest = run_simulate(out, members=members, partitions=partitions, events=events,
                                    lines=lines, size=size_bytes, inject=specs, seed=seed,
                                    progress=report)
    except OSError as exc:
        _fail(f"--out {out_dir}: cannot write: {exc.strerror or exc}")
    except ValueError as exc:
        _fail(str(exc))
    if as_json:
        click.echo(dumps(manifest.as_dict()))
        return
    _render_simulation(_stdout(), manifest, out / MANIFEST_NAME)


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


def _render_simulation(console: Console, manifest: Any, manifest_path: Path) -> None:
    from rich.filesize import decimal

    console.print(Text.assemble(("simulated", "bold"), f" {manifest.members} members, "
                                f"{manifest.partitions} partitions, seed {manifest.seed} -> "
                                f"{manifest.out}"))
    table = Table(title_justify="left", show_header=False)
    table.add_column("", style="dim")
    table.add_column("", justify="right")
    table.add_row("files", f"{len(manifest.files):,}")
    table.add_row("lines", f"{manifest.lines:,}")
    table.add_row("bytes", f"{manifest.bytes:,} ({decimal(manifest.bytes)})")
    table.add_row("protocol events", f"{manifest.events:,}")
    table.add_row("cluster incarnations", f"{manifest.eras:,}")
    table.add_row("seconds", f"{manifest.seconds:.1f} ({manifest.mb_per_second:,.0f} MB/s)")
    console.print(table)
    if manifest.injections:
        inj = Table(title="injected violations", title_justify="left")
        inj.add_column("spec", no_wrap=True)
        inj.add_column("where (file:line) and what", overflow="fold")
        for i in manifest.injections:
            inj.add_row(i.spec, Text.assemble(f"{i.file}:{i.line}\n", (i.description, "dim")))
        console.print(inj)
    else:
        console.print("no violations injected: `partsafe validate` finds the logs clean")
    console.print(f"manifest: {manifest_path} (hidden: `partsafe validate DIR` skips it)",
                  markup=False)

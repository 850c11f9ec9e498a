"""`partsafe conform`: could the design have produced this trace, and where does it leave it
(checker/engine/conform.py; docs/conformance.md)."""

from __future__ import annotations

import sys
import time
from collections.abc import Callable
from typing import Any, NoReturn

import click
from rich.console import Console
from rich.text import Text

from partsafe.checker.cli.options import fail, parse_duration_ms, sarif_option, scope_options
from partsafe.checker.cli.views import stdout
from partsafe.checker.engine.conform import STUTTER, Conformance, conform
from partsafe.checker.protocols import catalog
from partsafe.checker.protocols.entry import ModelEntry
from partsafe.checker.report import VERDICT_EXIT, dumps, print_verdict
from partsafe.checker.validation.skew import DEFAULT_MAX_SKEW_MS

#: the steps no record shows allowed between two records, by default: none in a TLA+ NDJSON
#: trace (each line one step), and in an event file as many as the zoo's counterexamples have
#: in a row (8, Ignite's rebalance)
DEFAULT_HIDDEN = {"tla-ndjson": 0, "events": 8, "logs": 8}
#: a conformance verdict as a report verdict (`VERDICT_EXIT`)
REPORT_VERDICT = {"conforms": "ok", "does-not-conform": "violation", "undecided": "incomplete"}


@click.command("conform")
@click.argument("model")
@click.argument("traces", nargs=-1, required=True)
@click.option("--variant", default="fixed", show_default=True,
              help="the design to match: fixed, a variant of MODEL, or all (each in turn)")
@click.option("--profile", default=None, metavar="PROFILE",
              help="the release profile whose rules the design follows (`partsafe profiles`) "
                   "[default: for a product's logs, the profile of the release they print "
                   "([3.12.2]: hz-3.9), else fixed]")
@click.option("--config", "config_file", type=click.Path(dir_okay=False),
              help="the trace's configuration (TwoPhase: the file naming RM and TM)")
@click.option("--max-hidden", type=click.IntRange(0, 64), default=None,
              help="steps the model may take between two records that no record shows "
                   "[default: 0 for a TLA+ trace, 8 for an event file and Hazelcast logs, 12 for "
                   "Ignite 3 logs]")
@click.option("--max-skew", "max_skew", default=f"{DEFAULT_MAX_SKEW_MS}ms", show_default=True,
              help="the most two members' clocks may differ (0, 200ms, 1.5s): a log's records "
                   "of different members are matched in any order these clocks allow")
@click.option("--max-states", type=click.IntRange(1), default=5_000_000, show_default=True,
              help="states searched before the answer is undecided (exit 3)")
@click.option("--trace-out", type=click.Path(dir_okay=False, writable=True),
              help="write the matched run (when it conforms) as an artifact `partsafe replay` "
                   "re-executes")
@click.option("--svg", "svg_file", type=click.Path(dir_okay=False, writable=True),
              help="draw the matched run, or the longest matched prefix where the trace leaves "
                   "the design, as a swim-lane SVG (the first design tried)")
@click.option("--json", "as_json", is_flag=True, help="print one JSON document on stdout")
@click.option("--junit", "junit_file", type=click.Path(dir_okay=False, writable=True),
              help="write a JUnit XML report: a test case per design tried")
@sarif_option
@scope_options
def conform_command(model: str, traces: tuple[str, ...], variant: str, profile: str | None,
                    config_file: str | None,
                    max_hidden: int | None, max_skew: str, max_states: int,
                    trace_out: str | None, svg_file: str | None,
                    as_json: bool, junit_file: str | None, sarif_file: str | None,
                    **scope: int | None) -> None:
    """Could MODEL's design have produced TRACES? A depth-first search of the reference
    implementation guided by the trace: each record matched by a step (or by a step that
    changes nothing where the design allows one), at most --max-hidden unlogged steps between
    two records. Exit 0 when it conforms (with the matched run), 1 when it does not (with where
    and why), 3 when undecided within --max-states, 2 for bad input.

    TRACES are the logs of a real cluster (Hazelcast's, Apache Ignite 3's: files, directories,
    globs; a member's stream each, interleaved as --max-skew allows; the model's scope taken
    from them unless the scope options say otherwise), an event file (`partsafe export
    --events`, any model), or for twophase a TLA+ NDJSON trace with --config (the TwoPhase
    benchmark of Cirstea et al. 2024)."""
    started = time.perf_counter()
    if model not in catalog.MODELS:
        fail(f"unknown model {model!r}; models: {', '.join(catalog.MODELS)}")
    entry = catalog.get(model)
    fmt = "tla-ndjson" if model == "twophase" and config_file is not None \
        else _format(traces)
    if config_file is not None and fmt != "tla-ndjson":
        fail("--config is the configuration of a TLA+ NDJSON trace, which only twophase reads")
    skew_ms = parse_duration_ms(max_skew)
    hidden = DEFAULT_HIDDEN[fmt] if max_hidden is None else max_hidden
    if max_hidden is None and fmt == "logs" and entry.log_table is not None:
        hidden = entry.log_table.max_hidden
    overrides = {k.replace("_", "-"): v for k, v in scope.items() if v is not None}
    try:
        entry.scope(overrides)
    except ValueError as exc:
        fail(str(exc))
    if fmt == "tla-ndjson" and overrides:
        fail("a TLA+ trace's configuration gives the scope (its RMs); scope options do not "
             "apply")
    profile, profile_note = _profile(entry, fmt, traces, profile)
    variants = list(entry.variant_table) if variant == "all" else [variant]
    if variant != "all" and variant not in entry.variant_table:
        fail(f"unknown {model} variant {variant!r}; known: {', '.join(entry.variant_table)}, all")
    if len(traces) != 1 and fmt != "logs":
        fail("give one TRACE: a TLA+ trace or an event file is one run")
    run: Callable[[str], Conformance]
    if fmt == "logs":
        try:
            overrides, run = _log_runner(entry, traces, overrides, skew_ms, hidden, max_states,
                                         profile)
        except NothingMapped as exc:
            _nothing_mapped(model, traces, str(exc), sarif_file, as_json)
    elif fmt == "tla-ndjson":
        def run(v: str) -> Conformance:
            return _conform_twophase(traces[0], config_file, v, hidden, max_states)
    else:
        def run(v: str) -> Conformance:
            return _conform_events(model, traces[0], v, hidden, max_states, overrides,
                                   profile)
    results = [(v, run(v)) for v in variants]
    fits = [v for v, r in results if r.verdict == "conforms"]
    if trace_out is not None and fits:
        v, r = next((v, r) for v, r in results if r.verdict == "conforms")
        _write_run(trace_out, model, v, r, " ".join(traces), _params(config_file, overrides),
                   profile)
    if variant == "all":
        verdict = "ok" if fits else ("incomplete" if any(r.verdict == "undecided"
                                                         for _, r in results) else "violation")
    else:
        verdict = REPORT_VERDICT[results[0][1].verdict]
    seconds = time.perf_counter() - started
    if junit_file is not None:
        _junit(junit_file, model, " ".join(traces), results, variant == "all")
    if sarif_file is not None:
        from partsafe.checker import sarif

        try:
            sarif.write(sarif_file, sarif.conform_log(model, traces, results, verdict,
                                                      VERDICT_EXIT[verdict]))
        except OSError as exc:
            fail(f"--sarif {sarif_file}: cannot write: {exc.strerror or exc}")
    if svg_file is not None:
        v, r = next(((v, r) for v, r in results if r.verdict == "conforms"), results[0])
        _write_svg(svg_file, model, v, r, " ".join(traces), _params(config_file, overrides),
                   profile)
    if as_json:
        doc: dict[str, Any] = {"model": model, "trace": traces[0], "traces": list(traces),
                               "config": config_file, "profile": profile,
                               "profile_from": profile_note}
        if variant == "all":
            doc |= {"verdict": "conforms" if fits else results[0][1].verdict, "fits": fits,
                    "variants": {v: r.as_dict() for v, r in results}}
        else:
            doc |= {"variant": variant, **results[0][1].as_dict()}
        click.echo(dumps(doc))
    else:
        console = stdout()
        label = " ".join(traces)
        for v, r in results:
            _render(console, model, v, label, r)
        if profile_note:
            console.print(Text(f"profile {profile}: {profile_note}"), soft_wrap=True)
        shown = variant if profile == "fixed" else f"{variant}, profile {profile}"
        what = f"conform {model} ({shown}) {label}"
        if variant == "all":
            detail = (f"fits {', '.join(fits)}" if fits
                      else "fits no variant of the design")
        else:
            detail = _detail(results[0][1])
        print_verdict(console, what, verdict, seconds, detail)
    sys.exit(VERDICT_EXIT[verdict])


def _nothing_mapped(model: str, traces: tuple[str, ...], reason: str, sarif_file: str | None,
                    as_json: bool) -> NoReturn:
    """The logs hold nothing the model maps: the verdict incomplete (exit 3), said in each form
    asked for."""
    if sarif_file is not None:
        from partsafe.checker import sarif

        try:
            sarif.write(sarif_file, sarif.conform_log(model, traces, [], "incomplete",
                                                      VERDICT_EXIT["incomplete"], reason))
        except OSError as exc:
            fail(f"--sarif {sarif_file}: cannot write: {exc.strerror or exc}")
    if as_json:
        click.echo(dumps({"model": model, "trace": traces[0], "traces": list(traces),
                          "verdict": "undecided", "incomplete_reason": reason}))
    else:
        print_verdict(stdout(), f"conform {model} {' '.join(traces)}", "incomplete", 0.0,
                      reason)
    sys.exit(VERDICT_EXIT["incomplete"])


def _format(traces: tuple[str, ...]) -> str:
    """``events`` when the first input is an event file, else ``logs`` (a product's logs; what
    the scanner makes of them, `read_logs` says)."""
    from pathlib import Path

    from partsafe.traces.inputs import InputError, sniff

    first = Path(traces[0])
    if not first.exists() and not any(c in traces[0] for c in "*?["):
        fail(f"{traces[0]}: cannot be read (no such file or directory)")
    if not first.is_file():
        return "logs"  # a directory or a glob
    try:
        return "events" if sniff(first).fmt == "jsonl" else "logs"
    except (OSError, InputError) as exc:
        fail(f"{traces[0]}: cannot be read ({exc})")


class NothingMapped(Exception):
    """The logs hold no record the model maps: nothing to judge (exit 3)."""


def _profile(entry: ModelEntry, fmt: str, traces: tuple[str, ...], given: str | None
             ) -> tuple[str, str]:
    """The release profile to judge with, and what it was taken from (``""`` when given):
    `given`, else for a product's logs the profile of the release every log prints
    (`profiles.profile_of_release`), else ``fixed``. Exit 2 for an unknown profile, one that
    does not cover the model, or logs that print releases of two profiles."""
    from pathlib import Path

    from partsafe.refimpl.profiles import profile_of_release
    from partsafe.traces.inputs import InputError, expand, printed_release

    if given is not None:
        if fmt == "tla-ndjson" and given != "fixed":
            fail("--profile: a TLA+ trace is judged against its own spec; no release profile "
                 "covers twophase")
        try:
            entry.profile(given)
        except ValueError as exc:
            fail(f"--profile: {exc}")
        return given, ""
    if fmt != "logs":
        return "fixed", ""
    try:
        paths = [c.path for c in expand(list(traces)) if c.skipped is None]
    except InputError:
        return "fixed", ""  # the log reader says what is wrong with the paths
    printed = {r for r in (printed_release(Path(p)) for p in paths) if r is not None}
    found = {profile_of_release(*r): r for r in sorted(printed)}
    if len(found) > 1:
        what = ", ".join(f"{product} {version}: {name or 'no profile'}"
                         for name, (product, version) in found.items())
        fail(f"the logs print releases of several profiles ({what}); say which to judge with "
             "--profile")
    if not found:
        return "fixed", "no log prints its release"
    [(name, (product, version))] = found.items()
    if name is None:
        return "fixed", f"the logs print {product} {version}, which no profile models"
    try:
        entry.profile(name)
    except ValueError:
        return "fixed", f"the logs print {product} {version}, whose profile {name} does not " \
                        f"cover {entry.name}"
    return name, f"the release the logs print, {product} {version}"


def _log_runner(entry: ModelEntry, traces: tuple[str, ...],
                overrides: dict[str, int], skew_ms: int, max_hidden: int, max_states: int,
                profile: str = "fixed") -> tuple[dict[str, int], Callable[[str], Conformance]]:
    """The scope a product's logs need (the protocol's log table's, changed by the scope
    options), and a search of one variant against them. Exit 2 when the model has no log table
    or a path cannot be read; `NothingMapped` when the logs hold no record the model maps."""
    from partsafe.checker.protocols.log_trace import LogTrace, read_logs
    from partsafe.traces.inputs import InputError

    table = entry.log_table
    if table is None:
        with_table = [name for name, e in catalog.MODELS.items() if e.log_table is not None]
        fail(f"model {entry.name} reads no product's logs (its traces are event files); the "
             f"models that do: {', '.join(with_table)}")
    try:
        logs = read_logs(traces, table)
    except (InputError, OSError) as exc:
        fail(str(exc))
    if not logs.streams:
        aside = "; ".join(f"{t}: {why} ({n})" for (t, why), n in logs.set_aside.items())
        raise NothingMapped(f"the logs hold no record the {entry.name} model maps"
                            + (f" (set aside: {aside})" if aside else ""))
    scope = table.scope(logs.records()) | overrides
    try:
        entry.scope(scope, profile)
    except ValueError as exc:
        fail(f"the scope the logs need: {exc}")

    def run(variant: str) -> Conformance:
        r = conform(LogTrace(entry.make(variant, scope, profile), table, logs, skew_ms),
                    max_hidden=max_hidden, max_states=max_states)
        r.context |= {"scope": scope, "files": logs.files, "lines": logs.lines,
                      "set_aside": [{"type": t, "why": why, "records": n}
                                    for (t, why), n in logs.set_aside.items()]}
        return r

    return scope, run


def _conform_events(model: str, trace: str, variant: str, max_hidden: int, max_states: int,
                    overrides: dict[str, int], profile: str = "fixed") -> Conformance:
    """An event file against `model`'s `variant` at the scope the options give (an exported
    run's scope is its artifact's `params`)."""
    from partsafe.checker.protocols.event_trace import EventTrace, read_events
    from partsafe.traces.events import EventFormatError

    try:
        found = read_events(trace)
    except OSError as exc:
        fail(f"{trace}: cannot be read ({exc.strerror})")
    except EventFormatError as exc:
        fail(str(exc))
    if not found:
        fail(f"{trace}: holds no event")
    built = catalog.get(model).make(variant, {**_exported_scope(trace, model), **overrides},
                                    profile)
    return conform(EventTrace(built, found, trace), max_hidden=max_hidden,
                   max_states=max_states)


def _exported_scope(trace: str, model: str) -> dict[str, int]:
    """The scope an exported run was found at, from its event file's header (`partsafe export
    --events` writes it), when it is a run of `model`; the scope options override it."""
    import json

    try:
        with open(trace, encoding="utf-8") as f:
            first = json.loads(f.readline() or "{}")
    except (OSError, ValueError):
        return {}
    run = first.get("run") if isinstance(first, dict) and "format" in first else None
    if not isinstance(run, dict) or run.get("model") != model:
        return {}
    scope = run.get("scope", {})
    return {k: v for k, v in scope.items() if isinstance(k, str) and type(v) is int} \
        if isinstance(scope, dict) else {}


def _conform_twophase(trace: str, config_file: str | None, variant: str, max_hidden: int,
                      max_states: int) -> Conformance:
    from partsafe.checker.protocols.twophase import TwoPhase
    from partsafe.checker.protocols.twophase_trace import TwoPhaseTrace
    from partsafe.traces.tla_ndjson import TraceFormatError, read_config, read_trace

    if config_file is None:
        fail("a TwoPhase trace needs --config, the file that names the RMs "
             "({\"RM\": [\"rm-0\", ...]})")
    try:
        config = read_config(config_file)
        if "RM" not in config:
            fail(f"{config_file}: names no RM (a line {{\"RM\": [\"rm-0\", ...]}})")
        lines = read_trace(trace)
        mapping = TwoPhaseTrace(TwoPhase(len(config["RM"]), variant), lines, config["RM"])
    except TraceFormatError as exc:
        fail(str(exc))
    return conform(mapping, max_hidden=max_hidden, max_states=max_states)


def _write_run(path: str, model: str, variant: str, r: Conformance, trace: str,
               params: dict[str, int], profile: str = "fixed") -> None:
    """The matched run as an artifact (`artifact.replay` reads it): the model's steps, each
    with the record it matched."""
    from pathlib import Path

    from partsafe.checker.report import event_json, steps_json

    assert r.trace is not None
    entry = catalog.get(model)
    built = entry.make(variant, params, profile)
    records = [where for where, action, _ in r.run if action != STUTTER]
    steps = steps_json(built, r.trace)[1:]
    for step, where in zip(steps, records, strict=True):
        step["record"] = where
    doc = {"partsafe": "run", "model": model, "variant": variant, "profile": built.profile,
           "params": entry.scope(params, profile),
           "conforms_to": trace, "init": r.init_index,
           "init_events": [event_json(e) for e in built.init_events(r.trace.init)],
           "steps": steps}
    try:
        Path(path).write_text(dumps(doc) + "\n")
    except OSError as exc:
        fail(f"--trace-out {path}: cannot write: {exc.strerror}")


def _write_svg(path: str, model: str, variant: str, r: Conformance, trace: str,
               params: dict[str, int], profile: str = "fixed") -> None:
    """`--svg`: the swim lanes of the matched run, or of the longest matched prefix with the
    record no step matched below them."""
    from partsafe.checker.render import swimlane

    path_of = r.trace if r.verdict == "conforms" else r.prefix
    if path_of is None:
        return
    built = catalog.get(model).make(variant, params, profile)
    d = r.diagnosis
    try:
        if r.verdict == "conforms":
            swimlane.write(path, built, path_of,
                           title=f"a run of {model} ({variant}) that conforms to {trace}")
        else:
            assert d is not None
            swimlane.write(path, built, path_of,
                           title=f"{model} ({variant}) against {trace}: {r.verdict}",
                           broken=path_of.depth or None,
                           sentence=f"no step of the design matches {d.unmatched}")
    except OSError as exc:
        fail(f"--svg {path}: cannot write: {exc.strerror or exc}")


def _params(config_file: str | None, overrides: dict[str, int]) -> dict[str, int]:
    """The model's scope for the trace (TwoPhase's TLA+ trace: its RMs, as the configuration
    names them; an event file: the scope options)."""
    from partsafe.traces.tla_ndjson import read_config

    if config_file is None:
        return overrides
    return {"rms": len(read_config(config_file)["RM"])}


def _junit(path: str, model: str, trace: str, results: list[tuple[str, Conformance]],
           any_fits: bool) -> None:
    """A test case per design tried: a failure where the trace does not conform (when one
    design was asked for; with --variant all only that none fits fails), an error where it is
    undecided; the diagnosis as the failure's text."""
    import xml.etree.ElementTree as ET
    from pathlib import Path

    from partsafe.checker.report import xml_document

    suites = ET.Element("testsuites")
    suite = ET.SubElement(suites, "testsuite", name=f"conform {model} {trace}")
    failures = errors = 0
    fits = any(r.verdict == "conforms" for _, r in results)
    for v, r in results:
        case = ET.SubElement(suite, "testcase", classname=f"conform.{model}", name=v,
                             time=f"{r.seconds:.3f}")
        d = r.diagnosis
        if r.verdict == "undecided":
            errors += 1
            ET.SubElement(case, "error", type="undecided", message=_detail(r))
        elif r.verdict == "does-not-conform" and not (any_fits and fits):
            failures += 1
            failure = ET.SubElement(case, "failure", type="does-not-conform", message=_detail(r))
            assert d is not None
            failure.text = "\n".join([f"no step of the design matches {d.unmatched}",
                                       *(f"- {reason}" for reason in d.reasons)])
    suite.set("tests", str(len(results)))
    suite.set("failures", str(failures))
    suite.set("errors", str(errors))
    try:
        Path(path).write_text(xml_document(suites))
    except OSError as exc:
        fail(f"--junit {path}: cannot write: {exc.strerror}")


def _detail(r: Conformance) -> str:
    if r.verdict == "conforms":
        return f"conforms: {r.records:,} records matched, {r.states:,} states searched"
    d = r.diagnosis
    assert d is not None
    if r.verdict == "undecided":
        return (f"undecided: {r.incomplete_reason}; {d.matched:,} of {r.records:,} records "
                f"matched at most")
    return (f"does not conform: {d.unmatched} matches no step after {d.matched:,} records "
            f"({r.states:,} states searched)")


#: the most steps of a matched run a report lists (--json and --trace-out give all)
RUN_SHOWN = 40


def _render_logs(line: Callable[[str], None], r: Conformance) -> None:
    """What a report on logs adds: the scope they were matched at, the log's names as the
    model's ids, what was set aside and why, and the matched run, step by step."""
    c = r.context
    if "scope" not in c:
        return
    line("  scope: " + ", ".join(f"{k}={v}" for k, v in c["scope"].items()))
    for space, names in c.get("bound", {}).items():
        line(f"  {space}s: " + ", ".join(f"{lv} = {mv}" for lv, mv in names.items()))
    for aside in c["set_aside"]:
        line(f"  set aside: {aside['records']} {aside['type']}: {aside['why']}")
    if r.verdict != "conforms":
        return
    line("  the matched run:")
    for where, _, name in r.run[:RUN_SHOWN]:
        line(f"    {where or '(not logged)':<32} {name}")
    if len(r.run) > RUN_SHOWN:
        line(f"    … {len(r.run) - RUN_SHOWN} steps more (--json, --trace-out)")


def _render(console: Console, model: str, variant: str, trace: str, r: Conformance) -> None:
    """The report of one design: each line whole (a terminal wraps it for the eye; a file or a
    pipe keeps paths and records in one piece, for grep)."""
    def line(text: str) -> None:
        console.print(Text(text), soft_wrap=True)

    line(f"{model} ({variant}) against {trace}: {r.verdict}, {r.records:,} records, "
         f"{r.states:,} states searched, {r.seconds:.2f} s")
    _render_logs(line, r)
    d = r.diagnosis
    if r.verdict == "conforms" or d is None:
        return
    line(f"  matched {d.matched:,} records; the last: {d.last_matched or '-'}")
    line(f"  no step of the design matches {d.unmatched}")
    line("  the model state there:")
    for key, value in d.state.items():
        line(f"    {key}: {value}")
    line(f"  enabled there: {', '.join(d.enabled) or 'nothing'}")
    line("  why the record matches no step:")
    for reason in d.reasons:
        line(f"    - {reason}")

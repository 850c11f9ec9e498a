"""`partsafe conform`: could the design have produced this trace, and where does it leave it
(checker/engine/conform.py; docs/conformance.md)."""

from __future__ import annotations

import sys
import time
from typing import Any

import click
from rich.console import Console
from rich.text import Text

from partsafe.checker.cli.options import fail, scope_options
from partsafe.checker.cli.views import stdout
from partsafe.checker.engine.conform import STUTTER, Conformance, conform
from partsafe.checker.protocols import catalog
from partsafe.checker.report import VERDICT_EXIT, dumps, print_verdict

#: the steps no record shows allowed between two records, by default: none in a TLA+ NDJSON
#: trace (each line one step), and in an event file as many as the zoo's counterexamples have
#: in a row (8, Ignite's rebalance)
DEFAULT_HIDDEN = {"tla-ndjson": 0, "events": 8}
#: a conformance verdict as a report verdict (`VERDICT_EXIT`)
REPORT_VERDICT = {"conforms": "ok", "does-not-conform": "violation", "undecided": "incomplete"}


@click.command("conform")
@click.argument("model")
@click.argument("traces", nargs=-1, required=True)
@click.option("--variant", default="fixed", show_default=True,
              help="the design to match: fixed, a variant of MODEL, or all (each in turn)")
@click.option("--config", "config_file", type=click.Path(dir_okay=False),
              help="the trace's configuration (TwoPhase: the file naming RM and TM)")
@click.option("--max-hidden", type=click.IntRange(0, 64), default=None,
              help="steps the model may take between two records that no record shows "
                   "[default: 0 for a TLA+ trace, 8 for an event file]")
@click.option("--max-states", type=click.IntRange(1), default=5_000_000, show_default=True,
              help="states searched before the answer is undecided (exit 3)")
@click.option("--trace-out", type=click.Path(dir_okay=False, writable=True),
              help="write the matched run (when it conforms) as an artifact `partsafe replay` "
                   "re-executes")
@click.option("--json", "as_json", is_flag=True, help="print one JSON document on stdout")
@click.option("--junit", "junit_file", type=click.Path(dir_okay=False, writable=True),
              help="write a JUnit XML report: a test case per design tried")
@scope_options
def conform_command(model: str, traces: tuple[str, ...], variant: str, config_file: str | None,
                    max_hidden: int | None, max_states: int, trace_out: str | None,
                    as_json: bool, junit_file: str | None, **scope: int | None) -> None:
    """Could MODEL's design have produced TRACES? A depth-first search of the reference
    implementation guided by the trace: each record matched by a step (or by a step that
    changes nothing where the design allows one), at most --max-hidden unlogged steps between
    two records. Exit 0 when it conforms (with the matched run), 1 when it does not (with where
    and why), 3 when undecided within --max-states, 2 for bad input.

    TRACES are an event file (`partsafe export --events`, any model), or for twophase a TLA+
    NDJSON trace with --config (the TwoPhase benchmark of Cirstea et al. 2024)."""
    started = time.perf_counter()
    if model not in catalog.MODELS:
        fail(f"unknown model {model!r}; models: {', '.join(catalog.MODELS)}")
    entry = catalog.get(model)
    fmt = "tla-ndjson" if model == "twophase" and config_file is not None else "events"
    if config_file is not None and fmt != "tla-ndjson":
        fail("--config is the configuration of a TLA+ NDJSON trace, which only twophase reads")
    hidden = DEFAULT_HIDDEN[fmt] if max_hidden is None else max_hidden
    overrides = {k.replace("_", "-"): v for k, v in scope.items() if v is not None}
    try:
        entry.scope(overrides)
    except ValueError as exc:
        fail(str(exc))
    if fmt == "tla-ndjson" and overrides:
        fail("a TLA+ trace's configuration gives the scope (its RMs); scope options do not "
             "apply")
    variants = list(entry.variant_table) if variant == "all" else [variant]
    if variant != "all" and variant not in entry.variant_table:
        fail(f"unknown {model} variant {variant!r}; known: {', '.join(entry.variant_table)}, all")
    if len(traces) != 1:
        fail("give one TRACE: a TLA+ trace or an event file is one run")
    run = _conform_twophase if fmt == "tla-ndjson" else _conform_events
    results = [(v, run(model, traces[0], config_file, v, hidden, max_states, overrides))
               for v in variants]
    fits = [v for v, r in results if r.verdict == "conforms"]
    if trace_out is not None and fits:
        v, r = next((v, r) for v, r in results if r.verdict == "conforms")
        _write_run(trace_out, model, v, r, traces[0], _params(config_file, overrides))
    if variant == "all":
        verdict = "ok" if fits else ("incomplete" if any(r.verdict == "undecided"
                                                         for _, r in results) else "violation")
    else:
        verdict = REPORT_VERDICT[results[0][1].verdict]
    seconds = time.perf_counter() - started
    if junit_file is not None:
        _junit(junit_file, model, traces[0], results, variant == "all")
    if as_json:
        doc: dict[str, Any] = {"model": model, "trace": traces[0], "config": config_file}
        if variant == "all":
            doc |= {"verdict": "conforms" if fits else results[0][1].verdict, "fits": fits,
                    "variants": {v: r.as_dict() for v, r in results}}
        else:
            doc |= {"variant": variant, **results[0][1].as_dict()}
        click.echo(dumps(doc))
    else:
        console = stdout()
        for v, r in results:
            _render(console, model, v, traces[0], r)
        what = f"conform {model} ({variant}) {traces[0]}"
        if variant == "all":
            detail = (f"fits {', '.join(fits)}" if fits
                      else "fits no variant of the design")
        else:
            detail = _detail(results[0][1])
        print_verdict(console, what, verdict, seconds, detail)
    sys.exit(VERDICT_EXIT[verdict])


def _conform_events(model: str, trace: str, config_file: str | None, variant: str,
                    max_hidden: int, max_states: int, overrides: dict[str, int]
                    ) -> Conformance:
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
    built = catalog.get(model).make(variant, overrides)
    return conform(EventTrace(built, found, trace), max_hidden=max_hidden,
                   max_states=max_states)


def _conform_twophase(model: str, trace: str, config_file: str | None, variant: str,
                      max_hidden: int, max_states: int, overrides: dict[str, int]
                      ) -> Conformance:
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
               params: dict[str, int]) -> None:
    """The matched run as an artifact (`artifact.replay` reads it): the model's steps, each
    with the record it matched."""
    from pathlib import Path

    from partsafe.checker.report import event_json, steps_json

    assert r.trace is not None
    entry = catalog.get(model)
    built = entry.make(variant, params)
    records = [where for where, action, _ in r.run if action != STUTTER]
    steps = steps_json(built, r.trace)[1:]
    for step, where in zip(steps, records, strict=True):
        step["record"] = where
    doc = {"partsafe": "run", "model": model, "variant": variant, "profile": built.profile,
           "params": built.scope, "conforms_to": trace, "init": r.init_index,
           "init_events": [event_json(e) for e in built.init_events(r.trace.init)],
           "steps": steps}
    try:
        Path(path).write_text(dumps(doc) + "\n")
    except OSError as exc:
        fail(f"--trace-out {path}: cannot write: {exc.strerror}")


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


def _render(console: Console, model: str, variant: str, trace: str, r: Conformance) -> None:
    """The report of one design: each line whole (a terminal wraps it for the eye; a file or a
    pipe keeps paths and records in one piece, for grep)."""
    def line(text: str) -> None:
        console.print(Text(text), soft_wrap=True)

    line(f"{model} ({variant}) against {trace}: {r.verdict}, {r.records:,} records, "
         f"{r.states:,} states searched, {r.seconds:.2f} s")
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

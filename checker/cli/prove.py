"""`partsafe prove`: the specs of the symbolic models, by bounded model checking and by proofs for
any size (models/prove.py), and the migration planner through its Z3 oracle.

Exit status: 0 every spec proved or bounded (no violation up to the depth asked), 1 a
counterexample, 2 a wrong command, 3 a solver that answered "unknown" or ran out of time.
"""

from __future__ import annotations

import time
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

import click
from rich.table import Table

from partsafe.checker.cli.options import fail
from partsafe.checker.cli.views import stderr, stdout
from partsafe.checker.report import (
    EXIT_INCOMPLETE,
    EXIT_OK,
    EXIT_VIOLATION,
    dumps,
    print_verdict,
    xml_document,
)
from partsafe.checker.symbolic import SymbolicError, planner_verdict, replay_artifact
from partsafe.models.prove import MODELS, ModelVerdict, prove_model

_STYLE = {"proved": "bold green", "bounded": "green", "counterexample": "bold red",
          "unknown": "bold yellow"}


@click.command("prove")
@click.argument("model", required=False, default="all")
@click.option("--variant", default="fixed", show_default=True,
              help="protocol variant (a historical flaw) to encode instead of the design")
@click.option("--depth", type=click.IntRange(0, 60), default=None,
              help="steps of bounded model checking (default: per model)")
@click.option("--spec", "only_specs", multiple=True, metavar="SPEC",
              help="judge only this spec (repeatable)")
@click.option("--no-proof", is_flag=True,
              help="bounded model checking only: no proof for any size")
@click.option("--timeout", "timeout_s", type=click.FloatRange(1, 3600), default=300.0,
              show_default=True, help="seconds Z3 may take on one bounded query (then: unknown)")
@click.option("--proof-timeout", "proof_timeout_s", type=click.FloatRange(1, 3600),
              default=60.0, show_default=True,
              help="seconds Z3 may take on one query of a proof (then: no proof)")
@click.option("--k", "k", type=click.IntRange(1, 8), default=1, show_default=True,
              help="a state property the induction does not prove is tried by k-induction "
                   "(for any size, as the induction)")
@click.option("--one-query", is_flag=True,
              help="one bounded query for a run of at most --depth steps, not one per depth "
                   "(faster for a long run; the run found need not be a shortest one)")
@click.option("--budget", "budget_args", multiple=True, metavar="NAME=N",
              help="a fault budget of bounded model checking, e.g. suspicions=0 (repeatable)")
@click.option("--json", "as_json", is_flag=True, help="print one JSON document on stdout")
@click.option("--junit", "junit_file", type=click.Path(dir_okay=False, writable=True),
              help="write JUnit XML (a test case per spec) to this file")
@click.option("--trace-out", type=click.Path(dir_okay=False, writable=True),
              help="save the first counterexample as an artifact `partsafe replay` takes")
@click.option("--html", "html_file", type=click.Path(dir_okay=False, writable=True),
              help="write a self-contained HTML report: each spec's verdict per model")
def prove(model: str, variant: str, depth: int | None, only_specs: tuple[str, ...],
          no_proof: bool, timeout_s: float, proof_timeout_s: float, k: int, one_query: bool,
          budget_args: tuple[str, ...], as_json: bool, junit_file: str | None,
          trace_out: str | None, html_file: str | None) -> None:
    """Prove MODEL's specs for any number of members, or check them to a bounded depth with Z3
    (MODEL: membership, migration, parallel, ignite-rebalance, planner, or all; default all). A
    counterexample is a shortest run (with --one-query, a run of at most --depth steps)."""
    names = [*MODELS, "planner"] if model == "all" else [model]
    unknown = [n for n in names if n not in MODELS and n != "planner"]
    if unknown:
        fail(f"no symbolic model {unknown[0]!r}; known: {', '.join([*MODELS, 'planner'])}, all")
    budgets = _budgets(budget_args)
    started = time.perf_counter()
    verdicts: list[ModelVerdict] = []
    for name in names:
        if model == "all" and variant != "fixed" and name != "planner" and \
                variant not in _variants(name):
            continue
        if not as_json:
            stderr().print(f"proving {name} ({variant}) …")
        try:
            if name == "planner":
                verdicts.append(planner_verdict(variant))
            else:
                verdicts.append(prove_model(name, variant, depth, list(only_specs) or None,
                                            proofs=not no_proof, timeout_s=timeout_s,
                                            proof_timeout_s=proof_timeout_s,
                                            one_query=one_query, budgets=budgets, k=k))
        except (ValueError, KeyError) as exc:
            fail(str(exc).strip("'\""))
    seconds = time.perf_counter() - started
    all_specs = [s for v in verdicts for s in v.specs]
    words = {s.verdict for s in all_specs if not s.known}
    result = ("violation" if "counterexample" in words else
              "incomplete" if "unknown" in words else "ok")
    if trace_out is not None:
        _trace_out(trace_out, verdicts)
    if junit_file is not None:
        _junit(junit_file, verdicts)
    counts = {w: sum(s.verdict == w and not s.known for s in all_specs) for w in _STYLE}
    detail = ", ".join(f"{n} {w}" for w, n in counts.items() if n)
    known = [s.spec for s in all_specs if s.known]
    if known:
        detail += f"; known findings: {', '.join(known)}"
    doc = {"result": result, "seconds": round(seconds, 3),
           "models": [v.as_dict() for v in verdicts]}
    if html_file is not None:
        from partsafe.checker.render import html
        from partsafe.checker.report import verdict_line

        line = verdict_line(f"prove {model} ({variant})", result, seconds, detail).plain
        try:
            html.write(html_file, html.prove_page(doc, line))
        except OSError as exc:
            fail(f"--html {html_file}: cannot write: {exc.strerror or exc}")
    if as_json:
        click.echo(dumps(doc))
    else:
        _render(verdicts)
        print_verdict(stdout(), f"prove {model} ({variant})", result, seconds, detail)
    raise SystemExit({"ok": EXIT_OK, "violation": EXIT_VIOLATION}.get(result, EXIT_INCOMPLETE))


def _budgets(args: tuple[str, ...]) -> dict[str, int]:
    """``--budget NAME=N`` options as a dict; a malformed one is a bad command."""
    out: dict[str, int] = {}
    for arg in args:
        name, sep, value = arg.partition("=")
        if not sep or not name or not value.isdigit():
            fail(f"--budget {arg!r}: expected NAME=N with N a count, e.g. suspicions=0")
        out[name] = int(value)
    return out


def _variants(name: str) -> dict[str, Any]:
    from partsafe.models.prove import variants
    return variants(name)


def _render(verdicts: list[ModelVerdict]) -> None:
    table = Table(title="partsafe prove", title_justify="left")
    for col in ("model", "variant", "spec", "verdict", "size", "depth", "seconds", "lemmas"):
        table.add_column(col, justify="right" if col in ("depth", "seconds") else "left",
                         overflow="fold")
    for v in verdicts:
        for s in v.specs:
            size = s.size if isinstance(s.size, str) else \
                " ".join(f"{k}={n}" for k, n in s.size.items())
            table.add_row(v.model, v.variant, s.spec,
                          f"[{_STYLE[s.verdict]}]{s.verdict}[/]", size, str(s.depth),
                          f"{s.seconds:.1f}", str(len(s.lemmas)))
    console = stdout()
    console.print(table)
    for v in verdicts:
        for s in v.specs:
            if s.verdict == "counterexample":
                console.print(f"[bold red]{v.model} ({v.variant}) breaks {s.spec}[/] "
                             f"in {len(s.trace) - 1} steps:")
                for step in s.trace[1:]:
                    params = ", ".join(f"{k}={p}" for k, p in (step.get("params") or {}).items())
                    console.print(f"  {step['step']:>3}. {step['action']}({params})",
                                 markup=False)
            elif s.reason and s.verdict != "proved":
                console.print(f"{v.model} {s.spec}: {s.reason}", markup=False)


def _trace_out(path: str, verdicts: list[ModelVerdict]) -> None:
    for v in verdicts:
        for s in v.specs:
            if s.verdict == "counterexample" and v.model != "planner":
                try:
                    sizes = s.size if isinstance(s.size, dict) else None
                    doc = replay_artifact(v.model, v.variant, s.spec, s.trace, sizes)
                except SymbolicError as exc:
                    fail(f"--trace-out: {exc}")
                Path(path).write_text(dumps(doc) + "\n")
                return
    stderr().print("--trace-out: no counterexample to save")


def _junit(path: str, verdicts: list[ModelVerdict]) -> None:
    suites = ET.Element("testsuites")
    for v in verdicts:
        suite = ET.SubElement(suites, "testsuite", name=f"prove {v.model}[{v.variant}]")
        failures = errors = 0
        for s in v.specs:
            case = ET.SubElement(suite, "testcase", classname=f"prove.{v.model}", name=s.spec,
                                 time=f"{s.seconds:.3f}")
            if s.verdict == "counterexample":
                failures += 1
                failure = ET.SubElement(case, "failure", type="counterexample",
                                        message=f"{s.spec} broken in {len(s.trace) - 1} steps")
                failure.text = "\n".join(f"{t['step']}: {t['action']} {t.get('params') or ''}"
                                         for t in s.trace[1:])
            elif s.verdict == "unknown":
                errors += 1
                ET.SubElement(case, "error", type="unknown", message=s.reason or "unknown")
        suite.set("tests", str(len(v.specs)))
        suite.set("failures", str(failures))
        suite.set("errors", str(errors))
    Path(path).write_text(xml_document(suites))

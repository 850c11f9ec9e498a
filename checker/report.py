"""Reports of explorations: JSON documents, rich terminal views, JUnit XML, trace artifacts."""

from __future__ import annotations

import json
import re
import xml.etree.ElementTree as ET
from collections.abc import Collection, Iterable, Sequence
from typing import Any

from rich.console import Console, Group
from rich.panel import Panel
from rich.table import Table
from rich.text import Text

from partsafe.checker.baseline import Finding, check_subject
from partsafe.checker.engine.bfs import Result, Trace, step_views
from partsafe.checker.engine.model import Model, StepView
from partsafe.traces.events import to_dict

EXIT_OK, EXIT_VIOLATION, EXIT_USAGE, EXIT_INCOMPLETE = 0, 1, 2, 3


def overall(verdicts: Iterable[str]) -> str:
    """The verdict of several checks, the worst of theirs: a violation, then a coverage gap, then
    an incomplete search (never clean), else ok."""
    found = set(verdicts)
    return next((word for word in ("violation", "gap", "incomplete") if word in found), "ok")


def canonical(obj: Any) -> str:
    """A stable text form of an action: frozensets sorted, the same in every process."""
    if isinstance(obj, frozenset):
        return "{" + ", ".join(sorted(canonical(x) for x in obj)) + "}"
    if isinstance(obj, tuple) and hasattr(type(obj), "_fields"):
        inner = ", ".join(f"{f}={canonical(v)}" for f, v in zip(obj._fields, obj, strict=True))
        return f"{type(obj).__name__}({inner})"
    if isinstance(obj, tuple):
        return "(" + ", ".join(canonical(x) for x in obj) + ("," if len(obj) == 1 else "") + ")"
    return repr(obj)


def steps_json(model: Model[Any], trace: Trace) -> list[dict[str, Any]]:
    out = []
    for i, (view, action) in enumerate(zip(step_views(model, trace),
                                           [None, *(a for a, _ in trace.steps)], strict=True)):
        out.append({
            "step": i,
            "action": view.action,
            "action_id": None if action is None else canonical(action),
            "node": view.node,
            "events": [event_json(e) for e in view.events],
            "state": view.state,
        })
    return out


def event_json(event: Any) -> dict[str, Any]:
    d = to_dict(event)
    d.pop("order", None)
    return d


def result_json(model: Model[Any], result: Result) -> dict[str, Any]:
    """The `partsafe check --json` document for one model run (README, exit status)."""
    return {
        "model": result.model,
        "variant": result.variant,
        "profile": result.profile,
        "scope": result.scope,
        "symmetry": result.symmetry,
        "result": result.result,
        "incomplete_reason": result.incomplete_reason,
        "resumed_at_depth": result.resumed_at,
        "stopped_at_violation": result.stopped_at_violation,
        "distinct_states": result.distinct_states,
        "transitions": result.transitions,
        "depth": result.depth,
        "seconds": round(result.seconds, 3),
        "states_per_second": round(result.states_per_second),
        "workers": result.workers,
        "fired": result.fired,
        "never_fired": result.never_fired,
        "violations": [
            {"spec": v.spec, "message": v.message, "depth": v.trace.depth,
             "init": v.trace.init_index, "trace": steps_json(model, v.trace)}
            for v in result.violations
        ],
        "goals": [
            {"name": g.name, "description": g.description, "reached": g.reached,
             "depth": g.trace.depth if g.trace else None,
             "trace": steps_json(model, g.trace) if g.trace else None}
            for g in result.goals
        ],
    }


def artifact(model: Model[Any], result: Result, params: dict[str, int],
             spec: str | None = None) -> dict[str, Any]:
    """The replayable counterexample of the first (shortest) violation, of `spec` when given and
    found (`partsafe check --until SPEC`)."""
    v = next((x for x in result.violations if x.spec == spec), result.violations[0])
    return {
        "partsafe": "counterexample",
        "model": result.model,
        "variant": result.variant,
        "profile": result.profile,
        "params": params,
        "spec": v.spec,
        "message": v.message,
        "init": v.trace.init_index,
        "init_events": [event_json(e) for e in model.init_events(v.trace.init)],
        "steps": steps_json(model, v.trace)[1:],
    }


# --- terminal ---------------------------------------------------------------------------------

_VERDICT_STYLE = {"ok": "bold green", "violation": "bold red", "gap": "bold yellow",
                  "incomplete": "bold yellow"}

#: the exit status of each verdict word a report ends with
VERDICT_EXIT = {"ok": EXIT_OK, "violation": EXIT_VIOLATION, "gap": EXIT_VIOLATION,
                "incomplete": EXIT_INCOMPLETE}


def verdict_line(what: str, verdict: str, seconds: float, detail: str = "") -> Text:
    """The one line that ends every human report: ``verdict: WORD, what was checked, detail
    (seconds)``. `verdict` is a key of `VERDICT_EXIT`, so that the line and the exit status say
    the same; `what` and `detail` are plain text (never markup: they may hold names from a log)."""
    if verdict not in VERDICT_EXIT:
        raise ValueError(f"unknown verdict {verdict!r}")
    return Text.assemble("verdict: ", (verdict.upper(), _VERDICT_STYLE[verdict]), f", {what}",
                         f"; {detail}" if detail else "", f" ({seconds:,.2f} s)")


def print_verdict(console: Console, what: str, verdict: str, seconds: float,
                  detail: str = "") -> None:
    """Print `verdict_line` as one line, whatever the console's width (a terminal wraps it for
    the eye; a file or a pipe keeps it whole, for grep and for CI logs)."""
    console.print(verdict_line(what, verdict, seconds, detail), soft_wrap=True)


def _scope_text(scope: dict[str, Any]) -> str:
    return " ".join(f"{k}={v}" for k, v in scope.items())


def _label(result: Result) -> str:
    """``fixed``, or ``fixed, profile hz-5``: the variant, and the release profile judged."""
    return (result.variant if result.profile == "fixed"
            else f"{result.variant}, profile {result.profile}")


def render_result(console: Console, model: Model[Any], result: Result) -> None:
    verdict = result.result.upper()
    head = Text.assemble(
        (f"{result.model}", "bold"), f" ({_label(result)}) at {_scope_text(result.scope)}: ",
        (verdict, _VERDICT_STYLE.get(result.result, "bold")),
    )
    console.print(head)
    stats = (f"  {result.distinct_states:,} distinct states, {result.transitions:,} transitions, "
             f"depth {result.depth}, {result.seconds:.2f} s "
             f"({result.states_per_second:,.0f} states/s)"
             f"{', symmetry reduction' if result.symmetry else ''}"
             f"{f', {result.workers} workers' if result.workers > 1 else ''}"
             + (f", resumed at depth {result.resumed_at}" if result.resumed_at is not None
                else ""))
    console.print(Text(stats))
    if result.incomplete_reason:
        console.print(Text(f"  incomplete: {result.incomplete_reason}; not a clean verdict",
                           "yellow"))
    if result.goals:
        table = Table(title="coverage goals", title_justify="left", show_edge=False)
        table.add_column("goal", no_wrap=True)  # an identifier: never broken across lines
        table.add_column("reached")
        table.add_column("depth", justify="right")
        table.add_column("scenario")
        for g in result.goals:
            table.add_row(g.name, Text("yes", "green") if g.reached else Text("GAP", "yellow"),
                          str(g.trace.depth) if g.trace else "-", Text(g.description))
        console.print(table)
    fired = ", ".join(f"{k} {v:,}" for k, v in result.fired.items() if v)
    console.print(Text(f"  actions fired: {fired}"))
    if result.never_fired:
        console.print(Text(f"  never fired: {', '.join(result.never_fired)}", "yellow"))
    for v in result.violations:
        render_trace(console, model, v.trace, title=f"{v.spec}: {v.message}")


def render_trace(console: Console, model: Model[Any], trace: Trace, title: str,
                 shortest: bool = True) -> None:
    """A counterexample step by step: action, node, events, and the nodes the step changed
    (`shortest`: it is the shortest one, as the explorer's are; a run that conforms to a trace
    is not)."""
    views = step_views(model, trace)
    table = Table(show_lines=True, expand=False)
    table.add_column("#", justify="right")
    table.add_column("action")
    table.add_column("events")
    table.add_column("changed")
    prev: dict[str, Any] = {}
    for i, view in enumerate(views):
        changed = {k: v for k, v in view.state.items() if prev.get(k) != v}
        prev = view.state
        table.add_row(str(i), Text(view.action), Text(_events_text(view)),
                      Text("\n".join(f"{k}: {_compact(v)}" for k, v in changed.items())))
    final = Table(title=f"every node after step {len(views) - 1}", title_justify="left",
                  show_header=False, show_edge=False)
    final.add_column("node", style="bold", no_wrap=True)
    final.add_column("state")
    for k, v in views[-1].state.items():
        final.add_row(Text(str(k)), Text(_compact(v)))
    steps = f"{trace.depth} step{'' if trace.depth == 1 else 's'}" + (
        " (shortest)" if shortest else "")
    style = "bold red" if shortest else "bold"
    # the headline is a line of its own, wrapped at the console's width: a panel's title is cut
    console.print(Text(title, style=style))
    console.print(Panel(Group(table, final), title=Text(title.partition(":")[0], style=style),
                        title_align="left", subtitle=steps, subtitle_align="left"))


def _events_text(view: StepView) -> str:
    lines = []
    for e in view.events:
        fields = {k: v for k, v in event_json(e).items() if k not in ("type", "member")}
        lines.append(f"{e.member}: {e.TYPE} " + " ".join(
            f"{k}={_compact(v)}" for k, v in fields.items()))
    return "\n".join(lines)


def _compact(value: Any) -> str:
    if isinstance(value, dict):
        return "{" + ", ".join(f"{k}={_compact(v)}" for k, v in value.items()
                               if v not in (None, [], False)) + "}"
    if isinstance(value, list):
        return "[" + ",".join(_compact(v) for v in value) + "]"
    return str(value)


# --- JUnit ------------------------------------------------------------------------------------


def junit(runs: Sequence[tuple[Model[Any], Result]], goals: bool = True,
          extra: Sequence[ET.Element] = (), recorded: Collection[Finding] = frozenset()) -> str:
    """JUnit XML: a test suite per run, a test case per spec (and per coverage goal), then the
    `extra` suites (the planner's, `planner_view.planner_suite`). A broken spec or a gap a
    baseline `recorded` (``--baseline``) does not fail its case: the case's output says so."""
    suites = ET.Element("testsuites")
    for model, result in runs:
        suite = ET.SubElement(suites, "testsuite", name=f"{result.model}[{_label(result)}]",
                              time=f"{result.seconds:.3f}")
        cases = failures = errors = skipped = 0
        found = {v.spec: v for v in result.violations}
        specs = list(dict.fromkeys(p.spec for p in model.properties()))
        specs += [v.spec for v in result.violations if v.spec not in specs]
        subject = check_subject(result.model, result.variant)
        for spec in specs:
            cases += 1
            case = ET.SubElement(suite, "testcase", classname=result.model, name=spec)
            if spec in found:
                v = found[spec]
                steps = "\n".join(f"{s['step']}: {s['action']}"
                                  for s in steps_json(model, v.trace))
                if Finding("check", "violation", spec, subject, v.message) in recorded:
                    out = ET.SubElement(case, "system-out")
                    out.text = f"recorded in the baseline: {v.message}\n{steps}"
                    continue
                failures += 1
                failure = ET.SubElement(case, "failure", message=v.message, type="violation")
                failure.text = steps
            elif result.incomplete_reason:
                errors += 1
                ET.SubElement(case, "error", message=f"incomplete: {result.incomplete_reason}",
                              type="incomplete")
        for g in result.goals if goals else ():
            cases += 1
            case = ET.SubElement(suite, "testcase", classname=f"{result.model}.coverage",
                                 name=g.name)
            if not g.reached and result.stopped_at_violation:
                ET.SubElement(case, "skipped", message="not judged: the search stopped at a "
                              "violation (--keep-going searches on)")
                skipped += 1
            elif not g.reached and not result.incomplete_reason:
                if Finding("check", "gap", g.name, subject, g.description) in recorded:
                    out = ET.SubElement(case, "system-out")
                    out.text = f"recorded in the baseline: never reached: {g.description}"
                    continue
                failures += 1
                ET.SubElement(case, "failure", message=f"GAP: never reached: {g.description}",
                              type="gap")
        suite.set("tests", str(cases))
        suite.set("failures", str(failures))
        suite.set("errors", str(errors))
        suite.set("skipped", str(skipped))
    suites.extend(extra)
    return xml_document(suites)


def dumps(doc: Any) -> str:
    return json.dumps(doc, indent=2, ensure_ascii=False, default=str)


#: the characters XML 1.0 forbids (what its production Char leaves out): the C0 controls but tab,
#: newline and carriage return, lone surrogates, U+FFFE and U+FFFF
_NOT_XML = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\ud800-\udfff\ufffe\uffff]")


def char_escape(char: str) -> str:
    """One character as a visible stand-in, its Python escape: ``\\x1b``, ``\\ud800``."""
    code = ord(char)
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def xml_text(s: str) -> str:
    """`s` as text any XML 1.0 document can hold: each character XML forbids is written as its
    escape (`char_escape`), so a JUnit report stays well-formed whatever bytes a log's host
    names, messages or file names hold. Markup characters (``<``, ``&``) are the XML writer's
    to escape."""
    return _NOT_XML.sub(lambda m: char_escape(m.group()), s)


def junit_with_report(document: str, report: str) -> str:
    """A JUnit document whose every test case names the HTML report written beside it (a
    ``html_report`` property), so that a CI page links each case to its picture."""
    root = ET.fromstring(document.encode("utf-8"))
    for case in root.iter("testcase"):
        properties = ET.Element("properties")
        ET.SubElement(properties, "property", name="html_report", value=report)
        case.insert(0, properties)
    return xml_document(root)


def xml_document(root: ET.Element) -> str:
    """`root` as an XML document, every text and attribute passed through `xml_text` first: the
    one way partsafe writes JUnit XML."""
    for element in root.iter():
        if element.text:
            element.text = xml_text(element.text)
        for key, value in element.attrib.items():
            element.set(key, xml_text(value))
    ET.indent(root)
    return ET.tostring(root, encoding="unicode", xml_declaration=True)

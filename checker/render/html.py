"""HTML reports, one self-contained file each (no network at view time): `check`, `validate`,
`zoo` and `prove` (`--html FILE`). Jinja2 templates (templates/, autoescape on) fill in the
commands' own JSON documents; the pictures are the swim lanes and charts of this package, drawn
as inline SVG. Every string that came from a log, a file or a model is escaped by the template
(or, inside a picture, by drawsvg), so a host name or a message is text, never markup.
"""

from __future__ import annotations

import datetime
import json
from itertools import pairwise
from pathlib import Path
from typing import Any

import jinja2
from markupsafe import Markup

from partsafe import __version__
from partsafe.checker.render import charts, swimlane

ENV = jinja2.Environment(
    loader=jinja2.PackageLoader("partsafe.checker.render", "templates"),
    autoescape=True,
    undefined=jinja2.StrictUndefined,
    trim_blocks=True,
    lstrip_blocks=True,
)


def inline(svg: str) -> Markup:
    """An SVG document of this package (its text escaped by drawsvg) to place in a page."""
    start = svg.find("<svg")
    return Markup(svg[start:] if start >= 0 else svg)


def page(template: str, *, title: str, verdict: str, verdict_line: str, **values: Any) -> str:
    """`template` filled in, with what every page shows: the title and the verdict."""
    written = datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%d %H:%M UTC")
    return ENV.get_template(template).render(title=title, verdict=verdict,
                                             verdict_line=verdict_line, version=__version__,
                                             written=written, **values)


def write(path: str, html: str) -> None:
    """The page at `path` (OSError when it cannot be written)."""
    Path(path).write_text(html, encoding="utf-8")


# --- check ----------------------------------------------------------------------------------


def _event_text(event: dict[str, Any]) -> str:
    e = dict(event)
    kind, member = e.pop("type", "?"), e.pop("member", "")
    fields = ", ".join(f"{k}={json.dumps(v) if not isinstance(v, str) else v}"
                       for k, v in e.items() if v not in (None, [], {}, ""))
    return f"{kind} at {member}: {fields}" if fields else f"{kind} at {member}"


def _steps(doc_trace: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """A counterexample's steps (the `--json` trace) with what changed on each member."""
    out = []
    for before, step in pairwise(doc_trace):
        old, new = before.get("state", {}), step.get("state", {})
        changes = {lane: swimlane.changed(old.get(lane), value) for lane, value in new.items()
                   if lane not in swimlane.NOT_LANES and old.get(lane) != value}
        out.append({"step": step.get("step"), "action": step.get("action", ""),
                    "node": step.get("node"), "changes": changes,
                    "events": [_event_text(e) for e in step.get("events", [])]})
    return out


def check_page(report: Any, verdict_line: str) -> str:
    """`partsafe check --html`: per search its scope and statistics, its frontier per depth
    and states per second, the scenarios reached, and per violation the swim lanes and the
    steps with what each changed."""
    from partsafe.checker.report import result_json

    runs = []
    for run in report.runs:
        doc = result_json(run.model, run.result)
        levels = run.result.levels
        pictures = []
        if levels:
            pictures.append(inline(charts.line_chart(
                [("frontier", [(d, f) for d, f, _, _ in levels])],
                title="frontier per depth", x_label="depth", y_label="states")))
            pictures.append(inline(charts.line_chart(
                [("states found", [(s, n) for _, _, n, s in levels])],
                title="states found over time", x_label="seconds", y_label="distinct states")))
        violations = []
        for v, vdoc in zip(run.result.violations, doc["violations"], strict=True):
            svg = swimlane.to_svg(swimlane.diagram(
                run.model, v.trace, title=f"{run.model.name} ({run.model.variant}) breaks "
                                         f"{v.spec}",
                broken=v.trace.depth or None, sentence=f"{v.spec}: {v.message}"))
            violations.append({"spec": v.spec, "message": v.message, "depth": v.trace.depth,
                               "svg": inline(svg), "steps": _steps(vdoc["trace"])})
        runs.append({"doc": doc, "charts": pictures, "violations": violations})
    if len(report.runs) == 1:
        r = report.runs[0].result
        title = f"partsafe check {r.model} ({r.variant})"
    else:
        title = f"partsafe check: {len(report.runs)} models"
    return page("check.html.j2", title=title, verdict=report.verdict,
                verdict_line=verdict_line, runs=runs)


# --- validate -------------------------------------------------------------------------------

#: the lines shown before and after a violation's line
CONTEXT = 3


def _context(file: str, line: int) -> list[tuple[int, str]]:
    """The lines around `line` of `file` (gzip too), control bytes made visible; none when the
    file cannot be read."""
    import gzip

    opener = gzip.open if file.endswith(".gz") else open
    lo, hi = max(1, line - CONTEXT), line + CONTEXT
    out: list[tuple[int, str]] = []
    try:
        with opener(file, "rb") as f:
            for n, raw in enumerate(f, start=1):
                if n > hi:
                    break
                if n >= lo:
                    out.append((n, swimlane.clean(raw.decode("utf-8", "replace").rstrip("\r\n"))))
    except OSError:
        return []
    return out


def validate_page(report: Any, verdict_line: str) -> str:
    """`partsafe validate --html`: the accounting, each violation (definite or possible) with a
    link to its file and line and the lines around it, each member's member lists over time,
    the migrations, the specs judged and not judged, and the files."""
    doc = report.as_dict()
    violations = []
    for v in doc["violations"] + doc.get("possible_violations", []):
        events = [{"file": e["file"], "line": e["line"],
                   "href": f"{Path(e['file']).resolve().as_uri()}#L{e['line']}",
                   "context": _context(e["file"], e["line"])} for e in v.get("events", [])]
        violations.append({**v, "events": events})
    stamps = [ts for kept in report.timeline.values() for ts, _, _, _, _ in kept]
    # one clock for all: every list stamped, within a day (a log's time-only stamps and
    # another's dated ones are not one clock); else the lists in the order installed
    clock = bool(stamps) and None not in stamps and \
        max(stamps) - min(stamps) < 86_400_000  # type: ignore[type-var,operator]
    origin = min(stamps) if clock else 0  # type: ignore[type-var]
    series = []
    for member, kept in sorted(report.timeline.items()):
        numbered = any(version is not None for _, version, _, _, _ in kept)
        points = [(((ts - origin) / 1000 if clock else float(k)),  # type: ignore[operator]
                   float(version if numbered and version is not None else size))
                  for k, (ts, version, size, _, _) in enumerate(kept)]
        series.append((member, points))
    timeline = None
    if series:
        timeline = inline(charts.line_chart(
            series, title="member lists installed, by member", steps=True,
            x_label="seconds from the first list" if clock else "lists installed, in order",
            y_label="version (or size)"))
    title = f"partsafe validate: {len(doc['files'])} file(s)"
    return page("validate.html.j2", title=title, verdict=report.result,
                verdict_line=verdict_line, doc=doc, violations=violations, timeline=timeline)


# --- zoo and prove --------------------------------------------------------------------------


def zoo_page(doc: dict[str, Any], verdict_line: str) -> str:
    """`partsafe zoo --html`: each historical flaw with the spec it must break and whether it
    did, the fixed designs at the same scopes, the known findings."""
    return page("zoo.html.j2", title="partsafe zoo", verdict=doc["result"],
                verdict_line=verdict_line, doc=doc)


def profile_zoo_page(doc: dict[str, Any], verdict_line: str) -> str:
    """`partsafe zoo --profile P --html`: per model the release line covers, each spec it breaks
    with the finding the profile declares for it, and each declared finding not reached."""
    return page("profile_zoo.html.j2", title=f"partsafe zoo --profile {doc['profile']}",
                verdict=doc["result"], verdict_line=verdict_line, doc=doc)


def prove_page(doc: dict[str, Any], verdict_line: str) -> str:
    """`partsafe prove --html`: per model, each spec's verdict (proved, bounded, counterexample,
    unknown), at which size and depth, in how long, and why."""
    models = ", ".join(f"{m['model']} ({m['variant']})" for m in doc["models"])
    return page("prove.html.j2", title=f"partsafe prove {models}", verdict=doc["result"],
                verdict_line=verdict_line, doc=doc)

"""How a validation report reads in a terminal and in a CI system (JUnit XML)."""

from __future__ import annotations

from xml.sax.saxutils import escape, quoteattr

from rich.console import Console
from rich.markup import escape as plain
from rich.table import Table

from partsafe.checker.validate import LOG_SPECS, Report
from partsafe.traces.events import Source

#: at most this many malformed lines are listed in the terminal (all of them are in --json)
SHOWN_MALFORMED = 20


def _where(sources: tuple[Source, ...]) -> str:
    return ", ".join(f"{s.file}:{s.line}" for s in sources)


def render_report(console: Console, report: Report) -> None:
    acc = report.accounting
    verdict = ("[bold red]violation[/]" if report.violations else "[bold green]ok[/]")
    console.print(f"validate: {verdict}  {len(report.files)} file(s), {acc.lines:,} lines, "
                  f"{acc.events:,} events, {report.seconds:.2f} s, "
                  + (f"Spark ({plain(report.master)})" if report.master
                     else f"{report.engine} engine"))
    console.print(f"lines: {acc.lines:,} = {acc.parsed_lines:,} parsed + "
                  f"{acc.ignored_lines:,} ignored + {len(acc.malformed):,} malformed")
    if report.events_without_member:
        console.print(f"events without a member: {report.events_without_member:,} (no record "
                      "line or `this` marker names the member; judged by no spec)")
    if report.members:
        incarnations = ", ".join(f"{m} ({n})" if n > 1 else m
                                 for m, n in report.members.items())
        console.print(f"members: {len(report.members)}: {incarnations}")
    console.print(f"views: {report.views} distinct member lists"
                  + ("; migrations: " + ", ".join(f"{k} {v}" for k, v in
                                                  report.migrations.items())
                     if report.migrations else ""))
    console.print(f"specs judged: {', '.join(LOG_SPECS)}")
    if report.violations:
        table = Table(title="violations", show_lines=True)
        for col in ("spec", "member", "lines", "what"):
            table.add_column(col, overflow="fold")
        for v in report.violations:
            table.add_row(v.spec, v.member, _where(v.sources), v.message)
        console.print(table)
    if report.warnings:
        table = Table(title="warnings")
        for col in ("kind", "member", "lines", "what"):
            table.add_column(col, overflow="fold")
        for w in report.warnings:
            table.add_row(w.kind, w.member, _where(w.sources), w.message)
        console.print(table)
    if acc.malformed:
        table = Table(title=f"malformed lines ({len(acc.malformed):,})")
        table.add_column("line", overflow="fold")
        table.add_column("reason", overflow="fold")
        for m in acc.malformed[:SHOWN_MALFORMED]:
            table.add_row(f"{m.file}:{m.line}", m.reason)
        if len(acc.malformed) > SHOWN_MALFORMED:
            table.add_row("…", f"{len(acc.malformed) - SHOWN_MALFORMED:,} more (see --json)")
        console.print(table)


def validate_junit(report: Report) -> str:
    """One test case per spec judged; a failure lists that spec's violations."""
    cases = []
    failures = 0
    for spec in LOG_SPECS:
        found = [v for v in report.violations if v.spec == spec]
        body = ""
        if found:
            failures += 1
            text = "\n".join(f"{_where(v.sources)}: {v.member}: {v.message}" for v in found)
            body = (f"<failure message={quoteattr(f'{len(found)} violation(s)')}>"
                    f"{escape(text)}</failure>")
        cases.append(f'  <testcase classname="partsafe.validate" name={quoteattr(spec)}>'
                     f"{body}</testcase>")
    return ('<?xml version="1.0" encoding="UTF-8"?>\n'
            f'<testsuite name="partsafe validate" tests="{len(LOG_SPECS)}" '
            f'failures="{failures}" time="{report.seconds:.3f}">\n'
            + "\n".join(cases) + "\n</testsuite>\n")

"""How a validation report reads in a terminal and in a CI system (JUnit XML).

Text from a log or a file name is data, never markup: it reaches rich as `Text` (`log_text`) and
the XML through `partsafe.checker.report.xml_text`."""

from __future__ import annotations

import re
from xml.sax.saxutils import escape, quoteattr

from rich.console import Console
from rich.markup import escape as plain
from rich.table import Table
from rich.text import Text

from partsafe.checker.report import char_escape, xml_text
from partsafe.checker.validate import LOG_SPECS, Report
from partsafe.traces.events import Source

#: at most this many malformed lines are listed in the terminal (all of them are in --json)
SHOWN_MALFORMED = 20


#: what a terminal would act on rather than show: the C0 controls (tab and newline too: a table
#: cell or a report line is one line of the log's text), DEL, the C1 controls, lone surrogates
_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f\ud800-\udfff]")


def log_text(s: str) -> Text:
    """Text that came from a log or a file name, for a terminal: a rich `Text`, which rich
    prints as it is (no markup: ``[bold red]`` stays; no emoji codes: ``:smile:`` stays, even on
    a console with emoji on), with control characters written as escapes (``\\x1b``), so that
    a log cannot restyle or move the terminal."""
    return Text(_CONTROL.sub(lambda m: char_escape(m.group()), s))


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
        console.print(log_text(f"members: {len(report.members)}: {incarnations}"))
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
            table.add_row(v.spec, log_text(v.member), log_text(_where(v.sources)),
                          log_text(v.message))
        console.print(table)
    if report.warnings:
        table = Table(title="warnings")
        for col in ("kind", "member", "lines", "what"):
            table.add_column(col, overflow="fold")
        for w in report.warnings:
            table.add_row(w.kind, log_text(w.member), log_text(_where(w.sources)),
                          log_text(w.message))
        console.print(table)
    if acc.malformed:
        table = Table(title=f"malformed lines ({len(acc.malformed):,})")
        table.add_column("line", overflow="fold")
        table.add_column("reason", overflow="fold")
        for m in acc.malformed[:SHOWN_MALFORMED]:
            table.add_row(log_text(f"{m.file}:{m.line}"), log_text(m.reason))
        if len(acc.malformed) > SHOWN_MALFORMED:
            table.add_row("…", f"{len(acc.malformed) - SHOWN_MALFORMED:,} more (see --json)")
        console.print(table)


#: a carriage return as a character reference, which an XML parser keeps (a literal one it reads
#: as a newline)
_CR = {"\r": "&#13;"}


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
                    f"{escape(xml_text(text), _CR)}</failure>")
        cases.append(f'  <testcase classname="partsafe.validate" name={quoteattr(spec)}>'
                     f"{body}</testcase>")
    return ('<?xml version="1.0" encoding="UTF-8"?>\n'
            f'<testsuite name="partsafe validate" tests="{len(LOG_SPECS)}" '
            f'failures="{failures}" time="{report.seconds:.3f}">\n'
            + "\n".join(cases) + "\n</testsuite>\n")

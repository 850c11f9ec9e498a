"""How a validation report reads in a terminal and in a CI system (JUnit XML); and the other
views of logs: `partsafe parse`'s notes, the progress bars of `validate` and `simulate`, the
simulator's summary.

Text from a log or a file name is data, never markup: it reaches rich as `Text` (`log_text`) and
the XML through `partsafe.checker.report.xml_text`."""

from __future__ import annotations

import re
from collections.abc import Callable, Collection, Sequence
from contextlib import AbstractContextManager, nullcontext
from pathlib import Path
from typing import Any
from xml.sax.saxutils import escape, quoteattr

from rich.console import Console
from rich.filesize import decimal
from rich.markup import escape as plain
from rich.padding import Padding
from rich.progress import BarColumn, DownloadColumn, MofNCompleteColumn, TimeRemainingColumn
from rich.progress import Progress as ProgressBar
from rich.table import Table
from rich.text import Text

from partsafe.checker.baseline import Finding, validate_finding
from partsafe.checker.report import char_escape, verdict_line, xml_text
from partsafe.checker.validation.local import JUDGED, SKIPPED, Report, statuses
from partsafe.traces.events import Source
from partsafe.traces.inputs import Candidate
from partsafe.traces.scanner import Accounting

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


def render_report(console: Console, report: Report, verdict: bool = True) -> None:
    acc = report.accounting
    console.print(f"validate: {len(report.files)} file(s), {acc.lines:,} lines, "
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
    console.print(f"specs judged ({len(report.specs)}): {', '.join(report.specs)}")
    render_not_judged(console, report)
    # a violation or warning is a block, not a table row: its identifiers and its message get
    # the console's whole width, so that neither is broken in the middle of a name
    skew = (f"under a clock skew of at most {report.max_skew_ms:,} ms: findings"
            + ("" if report.strict else ", failing with --strict"))
    for title, note, style, notices in (("violations", "", "bold red", report.definite),
                                        ("possible violations", skew, "yellow", report.possible),
                                        ("warnings", "", "yellow", report.warnings)):
        if not notices:
            continue
        console.print(Text(f"{title} ({len(notices):,})" + (f", {note}" if note else ""),
                           style="bold"))
        for n in notices:
            kind = getattr(n, "spec", None) or getattr(n, "kind", "")
            who = n.member or ("the run" if n.message.startswith("at quiescence: ")
                               else "member unknown")
            head = Text.assemble((kind, style), "  ", log_text(who))
            where = _where(n.sources)
            if where:
                head.append("  ")
                head.append_text(log_text(where))
            console.print(head)
            console.print(Padding(log_text(n.message), (0, 0, 0, 2)))
            order = getattr(n, "order", ())
            if order:
                console.print(Padding(Text("an order the log allows that breaks it "
                                           "(real times, µs on a common clock):", style="dim"),
                                      (0, 0, 0, 2)))
                for p in order:
                    console.print(Padding(log_text(
                        f"{p['time_us']:>14,}  {p['member']}  {p['type']}  "
                        f"{p['file']}:{p['line']}"), (0, 0, 0, 4)))
            if getattr(n, "note", ""):
                console.print(Padding(log_text(n.note), (0, 0, 0, 2)))
    if acc.malformed:
        table = Table(title=f"malformed lines ({len(acc.malformed):,})")
        table.add_column("line", overflow="fold")
        table.add_column("reason", overflow="fold")
        for m in acc.malformed[:SHOWN_MALFORMED]:
            table.add_row(log_text(f"{m.file}:{m.line}"), log_text(m.reason))
        if len(acc.malformed) > SHOWN_MALFORMED:
            table.add_row("…", f"{len(acc.malformed) - SHOWN_MALFORMED:,} more (see --json)")
        console.print(table)
    render_inputs(console, report)
    if verdict:  # (a baseline's gate prints its own)
        console.print(verdict_line(*verdict_of(report)), soft_wrap=True)  # one line, never folded


def print_accounting(console: Console, acc: Accounting, candidates: Sequence[Candidate]) -> None:
    """`partsafe parse`'s notes (on stderr, beside the events): each malformed line, each file
    skipped or in which nothing was recognised, and the line accounting."""
    order = {t.name: i for i, t in enumerate(acc.files)}
    for m in sorted(acc.malformed, key=lambda m: (order.get(m.file, 0), m.line)):
        console.print(log_text(f"{m.file}:{m.line}: malformed: {m.reason}"), soft_wrap=True)
    for s in statuses(candidates, acc.files):
        if s.status != JUDGED:
            console.print(log_text(f"{s.file}: {s.status}: {s.reason}"), soft_wrap=True)
    console.print(f"lines: {acc.lines:,} = {acc.parsed_lines:,} parsed + {acc.ignored_lines:,} "
                  f"ignored + {len(acc.malformed):,} malformed; {acc.events:,} events")


def render_not_judged(console: Console, report: Report) -> None:
    """The specs this input cannot judge, grouped by the reason (one sentence each)."""
    by_reason: dict[str, list[str]] = {}
    for spec, reason in report.not_judged.items():
        by_reason.setdefault(reason, []).append(spec)
    if not by_reason:
        return
    console.print(f"not judged on this input ({len(report.not_judged)}):")
    for reason, specs in by_reason.items():
        console.print(Padding(Text.assemble((", ".join(specs), "dim"), ": ", reason),
                              (0, 0, 0, 2)))


def render_inputs(console: Console, report: Report) -> None:
    """Each input file's status: one line for a single file whose events were judged, else a
    table (file, status, lines, events, why). Names are log text (`log_text`), never markup."""
    inputs = report.inputs
    if len(inputs) == 1 and inputs[0].status == JUDGED:
        s = inputs[0]
        console.print(log_text(f"file: {s.file}: {s.status}, {s.reason}"))
        return
    if not inputs:
        return
    table = Table(title="files", title_justify="left")
    for col, justify in (("file", "left"), ("status", "left"), ("lines", "right"),
                         ("events", "right"), ("why", "left")):
        table.add_column(col, justify=justify,  # type: ignore[arg-type]
                         overflow="fold", no_wrap=col not in ("file", "why"))
    style = {JUDGED: "green", SKIPPED: "yellow"}
    for s in inputs:
        read = s.status != SKIPPED
        table.add_row(log_text(s.file), Text(s.status, style.get(s.status, "yellow")),
                      f"{s.lines:,}" if read else "-", f"{s.events:,}" if read else "-",
                      log_text("" if s.status == JUDGED else s.reason))
    console.print(table)


def verdict_of(report: Report) -> tuple[str, str, float, str]:
    """The arguments of the report's verdict line (`partsafe.checker.report.verdict_line`):
    what was checked, the verdict (the JSON ``result``, whose exit status the command returns),
    the seconds, the detail."""
    acc = report.accounting
    read = len(report.files)
    what = (f"{len(report.specs)} specs over {read:,} file{'' if read == 1 else 's'}, "
            f"{acc.lines:,} lines, {acc.events:,} events")
    skipped = sum(1 for s in report.inputs if s.status == SKIPPED)
    result = report.result
    if result == "incomplete":
        detail = report.incomplete_reason or ""
    elif result == "violation":
        failing = report.violations if report.strict else report.definite
        specs = list(dict.fromkeys(v.spec for v in failing))
        n = len(failing)
        detail = f"{n:,} violation{'' if n == 1 else 's'} of {', '.join(specs)}"
    else:
        detail = ""
    possible = len(report.possible)
    if possible and not report.strict:
        detail += (f"{'; ' if detail else ''}{possible:,} possible violation"
                   f"{'' if possible == 1 else 's'} under clock skew (findings)")
    if skipped and result != "incomplete":
        detail += f"{'; ' if detail else ''}{skipped:,} file{'' if skipped == 1 else 's'} skipped"
    return what, result, report.seconds, log_text(detail).plain  # file names: escaped


#: a carriage return as a character reference, which an XML parser keeps (a literal one it reads
#: as a newline)
_CR = {"\r": "&#13;"}


def validate_junit(report: Report, recorded: Collection[Finding] = frozenset()) -> str:
    """One test case per spec judged; a failure lists that spec's violations. A run that judged
    no event has every spec in error (incomplete), none passed. A violation a baseline
    `recorded` (``--baseline``) does not fail its case: it is listed in the case's output."""
    cases = []
    failures = 0
    errors = 0
    incomplete = report.incomplete_reason
    # a run that judged nothing: every spec its files judge is in error, none skipped
    judged = report.specs if incomplete is None else report.judgeable
    for spec in judged:
        failing = report.violations if report.strict else report.definite
        mine = [v for v in failing if v.spec == spec]
        found = [v for v in mine if validate_finding(v.as_dict()) not in recorded]
        findings = [v for v in report.possible if v.spec == spec and not report.strict]
        findings = [v for v in mine if v not in found] + findings
        body = ""
        if incomplete is not None:
            errors += 1
            body = (f"<error message={quoteattr('incomplete: nothing judged')} "
                    f'type="incomplete">{escape(xml_text(incomplete), _CR)}</error>')
        elif found:
            failures += 1
            text = "\n".join(f"{_where(v.sources)}: {v.member}: {v.message}" for v in found)
            body = (f"<failure message={quoteattr(f'{len(found)} violation(s)')}>"
                    f"{escape(xml_text(text), _CR)}</failure>")
        elif findings:  # possible or recorded violations: reported, not failing (findings)
            text = "\n".join(f"{_finding_word(v, recorded)}: {_where(v.sources)}: {v.member}: "
                             f"{v.message}" for v in findings)
            body = f"<system-out>{escape(xml_text(text), _CR)}</system-out>"
        cases.append(f'  <testcase classname="partsafe.validate" name={quoteattr(spec)}>'
                     f"{body}</testcase>")
    skipped = {s: r for s, r in report.not_judged.items() if s not in judged}
    for spec, reason in skipped.items():
        cases.append(f'  <testcase classname="partsafe.validate" name={quoteattr(spec)}>'
                     f"<skipped message={quoteattr(f'not judged: {reason}')}/></testcase>")
    return ('<?xml version="1.0" encoding="UTF-8"?>\n'
            f'<testsuite name="partsafe validate" tests="{len(cases)}" '
            f'failures="{failures}" errors="{errors}" skipped="{len(skipped)}" '
            f'time="{report.seconds:.3f}">\n'
            + "\n".join(cases) + "\n</testsuite>\n")


def _finding_word(v: Any, recorded: Collection[Finding]) -> str:
    """What a violation reported without failing is: recorded in the baseline, or possible."""
    if validate_finding(v.as_dict()) in recorded:
        return f"{v.certainty} violation recorded in the baseline"
    return "possible violation"


# --- progress bars, and the simulator's summary ---------------------------------------------


class _Bar:
    """A transient rich progress bar on stderr, as a context that yields the function to report
    to (`report(bar, task, ...)`)."""

    def __init__(self, bar: ProgressBar, description: str, total: int | None,
                 report: Any) -> None:
        self.bar, self.description, self.total, self.report = bar, description, total, report

    def __enter__(self) -> Any:
        self.bar.__enter__()
        task = self.bar.add_task(self.description, total=self.total)
        return lambda *args: self.report(self.bar, task, *args)

    def __exit__(self, *exc: object) -> None:
        self.bar.__exit__(None, None, None)


def byte_progress(console: Console, total: Callable[[], int], enabled: bool | None
                  ) -> AbstractContextManager[Any]:
    """A progress bar over the input bytes (`total()`, 0 if unknown) on `console` (stderr), for
    a terminal or when asked, yielding ``advance(bytes)``; else a context yielding None."""
    if enabled is False or (enabled is None and not console.is_terminal):
        return nullcontext(None)
    bar = ProgressBar("[progress.description]{task.description}", BarColumn(), DownloadColumn(),
                      TimeRemainingColumn(), console=console, transient=True)
    return _Bar(bar, "scanning", total() or None, lambda bar, task, n: bar.advance(task, n))


def simulation_progress(console: Console, total: int, enabled: bool
                        ) -> AbstractContextManager[Any]:
    """A progress bar over the protocol events written, with the bytes so far, on `console`
    (stderr), yielding ``report(events, written)``; else a context yielding None."""
    if not enabled:
        return nullcontext(None)
    bar = ProgressBar("[progress.description]{task.description}", BarColumn(),
                      MofNCompleteColumn(), TimeRemainingColumn(), console=console,
                      transient=True)

    def report(bar: ProgressBar, task: Any, events: int, written: int) -> None:
        bar.update(task, completed=min(events, total),
                   description=f"simulating, {written / 1e6:,.0f} MB")

    return _Bar(bar, "simulating", total, report)


def render_simulation(console: Console, manifest: Any, manifest_path: Path) -> None:
    """`partsafe simulate`: what was written, and where each injected violation is."""
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

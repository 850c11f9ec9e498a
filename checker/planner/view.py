"""Terminal and JUnit views of the planner: one plan, and the exhaustive check."""

from __future__ import annotations

import xml.etree.ElementTree as ET
from collections.abc import Collection

from rich.console import Console
from rich.table import Table
from rich.text import Text

from partsafe.checker.baseline import Finding, check_subject, known_finding
from partsafe.checker.planner.check import PLAN_SPECS, PlannerCheck, show
from partsafe.checker.report import print_verdict, xml_document
from partsafe.refimpl.planner import Decision, Plan
from partsafe.specs.planner import count


def describe(d: Decision) -> str:
    """A migration in words: `SHIFT_UP D 3->1 (B leaves 1)`."""
    if d.destination is None:
        return f"CLEAR index {d.source_current_index} ({d.source})"
    dst = d.destination
    into = d.destination_new_index
    text = f"{d.type} {dst} " + (f"{d.destination_current_index}->{into}"
                                 if d.destination_current_index != -1 else f"to {into}")
    if d.source is not None:
        where = (f"to {d.source_new_index}" if d.source_new_index != -1 else "leaves")
        text += f", {d.source} at {d.source_current_index} {where}"
    return text


def render_plan(console: Console, p: Plan) -> None:
    console.print(Text.assemble(("current ", "bold"), show(p.current), ("   target ", "bold"),
                                show(p.target)))
    if p.target_after_cycle_fix != p.target:
        console.print(Text.assemble(("target after cycle fix ", "bold"),
                                    show(p.target_after_cycle_fix),
                                    " (cyclic migrations are cancelled, 000 §3.2.1)"))
    clears = [d for d in p.decisions if d.is_clear]
    if clears:
        console.print(Text("clears, applied at once: " + "; ".join(describe(d) for d in clears)
                           + f" -> {show(p.start)}"))
    table = Table(title=f"{len(p.migrations)} migration(s), in execution order",
                  title_justify="left")
    table.add_column("#", justify="right")
    table.add_column("migration")
    table.add_column("replicas after")
    table.add_column("count", justify="right")
    floor = min(count(p.current), count(p.target_after_cycle_fix))
    before = count(p.start)
    table.add_row("0", Text("start"), Text(show(p.start)), str(before))
    for i, (d, array) in enumerate(zip(p.migrations, p.steps, strict=True), start=1):
        after = count(array)
        delta = after - before
        style = "red" if after < floor else ("green" if delta > 0 else "")
        table.add_row(str(i), Text(describe(d)), Text(show(array)),
                      Text(f"{after} ({delta:+d})", style=style))
        before = after
    console.print(table)


def render_planner_check(console: Console, result: PlannerCheck, strict: bool = False) -> None:
    """The exhaustive check: its verdict (`PlannerCheck.verdict`), figures, every spec's count
    and smallest counterexample, and the smallest one's plan step by step."""
    verdict = result.verdict(strict)
    known = [] if strict else result.known
    failing = sorted(result.smallest) if strict else result.unexpected
    console.print(Text.assemble(
        ("planner", "bold"), f" ({result.variant}) at replicas 1 to {result.replicas}: ",
        (verdict.upper(), "bold green" if verdict == "ok" else "bold red"),
        (f", with {len(known)} known finding{'s' if len(known) > 1 else ''}" if known else "",
         "yellow")))
    per = ", ".join(f"{n} indices: {k:,}" for n, k in result.pairs.items())
    console.print(Text(f"  {result.pairs_checked:,} pairs up to renaming ({per}), "
                       f"{result.seconds:.2f} s; longest plan {result.longest_plan} migrations"))
    console.print(Text(f"  {result.domain_pairs:,} of them are inputs Hazelcast's planner is "
                       "given (an owner after promotion, a repartitioned target)"))
    if known:
        console.print(Text(f"  known findings of the faithful planner (docs/findings.md, "
                           f"HZ-PLAN-1 and HZ-PLAN-2), which "
                           f"do not fail the check (--strict fails on them): {', '.join(known)}",
                           style="yellow"))
    if failing:
        console.print(Text(f"  broken: {', '.join(failing)}", style="bold red"))
    table = Table(title="specs (violating pairs: all / Hazelcast's inputs)", title_justify="left")
    table.add_column("spec", no_wrap=True)
    table.add_column("violating pairs", no_wrap=True)
    table.add_column("smallest counterexample among Hazelcast's inputs")
    for spec in PLAN_SPECS:
        v = result.domain_smallest.get(spec) or result.smallest.get(spec)
        what = (Text(f"{show(v.current)} -> {show(v.target)}: {v.message}"
                     + (" (a known finding)" if spec in known else ""),
                     style="yellow" if spec in known else "red") if v
                else Text("holds", "green"))
        table.add_row(spec, f"{result.violating_pairs.get(spec, 0):,} / "
                            f"{result.domain_violating_pairs.get(spec, 0):,}", what)
    console.print(table)
    shown = sorted(result.domain_smallest.values(), key=lambda v: v.size) or sorted(
        result.smallest.values(), key=lambda v: v.size)
    for v in shown[:1]:
        if v.plan is not None:
            note = " (a known finding)" if v.spec in known else ""
            console.print(Text(f"smallest counterexample, {v.spec}{note}:",
                               style="yellow" if note else "bold red"))
            render_plan(console, v.plan)


def print_planner_verdict(console: Console, result: PlannerCheck, strict: bool = False) -> None:
    """The verdict line of `partsafe check planner`: the specs broken beyond the known findings
    (every one, `strict`), and the known findings reported."""
    verdict = result.verdict(strict)
    known = [] if strict else result.known
    detail = "; ".join(
        ([f"broken: {', '.join(sorted(result.smallest) if strict else result.unexpected)}"]
         if verdict == "violation" else [])
        + ([f"known findings: {', '.join(known)}"] if known else []))
    print_verdict(console, f"check planner ({result.variant}) at replicas 1 to "
                           f"{result.replicas}", verdict, result.seconds, detail)


def planner_suite(result: PlannerCheck, strict: bool = False,
                  recorded: Collection[Finding] = frozenset()) -> ET.Element:
    """The planner's JUnit test suite: a test case per PLAN-* spec. A spec broken beyond the
    known findings is a failure; a known finding passes with its counterexample in
    ``system-out`` (a failure with `strict`), and so does a finding a baseline `recorded`."""
    subject = check_subject("planner", result.variant)
    known = [spec for spec in result.smallest
             if (spec in result.known and (not strict or known_finding(spec) in recorded))
             or Finding("check", "violation", spec, subject,
                        result.smallest[spec].message) in recorded]
    failing = [spec for spec in PLAN_SPECS if spec in result.smallest and spec not in known]
    suite = ET.Element("testsuite", name=f"planner[{result.variant}]",
                       time=f"{result.seconds:.3f}", tests=str(len(PLAN_SPECS)),
                       failures=str(len(failing)), errors="0")
    for spec in PLAN_SPECS:
        case = ET.SubElement(suite, "testcase", classname="planner", name=spec)
        v = result.smallest.get(spec)
        if v is None:
            continue
        what = f"{show(v.current)} -> {show(v.target)}: {v.message}"
        count = f"{result.violating_pairs[spec]} violating pairs"
        if spec in known:
            out = ET.SubElement(case, "system-out")
            why = ("known finding of the faithful planner (not a failure; --strict fails on "
                   "it)" if spec in result.known and not strict else "recorded in the baseline")
            out.text = f"{why}: {what}; {count}"
        else:
            failure = ET.SubElement(case, "failure", type="violation", message=what)
            failure.text = count
    return suite


def planner_junit(result: PlannerCheck, strict: bool = False) -> str:
    """`partsafe check planner --junit`: the planner's suite alone."""
    suites = ET.Element("testsuites")
    suites.append(planner_suite(result, strict))
    return xml_document(suites)

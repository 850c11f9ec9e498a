"""partsafe's pytest plugin (the ``pytest11`` entry point ``partsafe``): a project that vendors a
variant or a mapping checks it in its own test suite.

    def test_membership(partsafe_check):
        assert partsafe_check("membership").ok

    @pytest.mark.parametrize("variant", ["fixed", "hz38-unordered-members"])
    def test_variants(partsafe_check, variant):
        outcome = partsafe_check("membership", variant, suspicions=0)
        assert outcome.ok, outcome

`partsafe_check(model, variant="fixed", profile="fixed", baseline=None, **scope)` explores the
model at its default scope changed by `scope` (the options' names, ``-`` as ``_``) and returns a
`CheckOutcome`, having written the check's HTML report into the test's temporary directory.
With `baseline` (a file `partsafe baseline update` wrote), the outcome is judged as
``check --baseline`` judges it: ok unless a finding is new, the search going on past the
recorded violations.
When the test fails, its report in pytest's output gets a "partsafe" section: each check's
verdict, its counterexample's headline (the spec, how many steps, its sentence) and the path of
its HTML report. The outcome's `repr`, which a failing assert shows, says the same in short.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest


@dataclass
class CheckOutcome:
    """One check's outcome: `verdict` (ok, violation, gap, incomplete), its headline, and the
    HTML report written for it."""

    model: str
    variant: str
    verdict: str
    headline: str
    report: Path
    result: Any
    #: with a baseline: the failing findings it does not record
    new: list[Any] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        """Did every spec hold, and every scenario get reached, within the bounds?"""
        return self.verdict == "ok"

    def __repr__(self) -> str:
        return f"partsafe check {self.model} ({self.variant}): {self.verdict.upper()}"

    def summary(self) -> str:
        """The verdict, the headline and the report's path, for a failing test's output."""
        return (f"partsafe check {self.model} ({self.variant}): {self.verdict.upper()}\n"
                + (f"  {self.headline}\n" if self.headline else "")
                + f"  HTML report: {self.report}")


#: where a test's checks are kept, for its report's section
OUTCOMES = pytest.StashKey[list[CheckOutcome]]()


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Any:
    """A failing test that checked models gets a "partsafe" section: each check's summary."""
    report = yield
    outcomes = item.stash.get(OUTCOMES, [])
    if outcomes and report.when == "call" and report.failed:
        report.sections.append(("partsafe", "\n".join(o.summary() for o in outcomes)))
    return report


@pytest.fixture
def partsafe_check(tmp_path: Path, request: pytest.FixtureRequest
                   ) -> Callable[..., CheckOutcome]:
    """Check a model of partsafe's catalogue (see the module's docstring)."""
    outcomes = request.node.stash.setdefault(OUTCOMES, [])

    def check(model: str, variant: str = "fixed", profile: str = "fixed",
              baseline: str | Path | None = None, **scope: int) -> CheckOutcome:
        from partsafe.checker import baseline as baselines
        from partsafe.checker.cli.views import check_verdict_line, gate_verdict
        from partsafe.checker.engine.bfs import Bounds
        from partsafe.checker.protocols import catalog
        from partsafe.checker.render import html
        from partsafe.checker.run import CheckReport, run_check

        recorded: list[Any] = []
        if baseline is not None:
            try:
                recorded = baselines.read(str(baseline))
            except baselines.BaselineError as exc:
                pytest.fail(f"partsafe_check: {exc}", pytrace=False)
        overrides = {k.replace("_", "-"): v for k, v in scope.items()}
        run = run_check(catalog.get(model), variant, overrides, bounds=Bounds(),
                        symmetry=True, keep_going=False, profile=profile, recorded=recorded)
        report = CheckReport([run], None, False)
        path = tmp_path / f"partsafe-{model}-{variant}.html"
        html.write(str(path), html.check_page(report, check_verdict_line(report,
                                                                         run.result.seconds)))
        headline = ""
        if run.result.violations:
            v = run.result.violations[0]
            headline = f"{v.spec} broken in {v.trace.depth} steps: {v.message}"
        elif run.result.result == "gap":
            missed = [g.name for g in run.result.goals if not g.reached]
            headline = f"scenarios never reached: {', '.join(missed)}"
        elif run.result.incomplete_reason:
            headline = run.result.incomplete_reason
        verdict, new = report.verdict, []
        if baseline is not None:
            comparison = baselines.compare(recorded,
                                           baselines.check_findings(report.as_json()))
            verdict, detail = gate_verdict(report.verdict, comparison, strict=False)
            new = comparison.failing(strict=False)
            headline = "; ".join(f"new: {f.line()}" for f in new) or f"against {baseline}: {detail}"
        outcome = CheckOutcome(model, variant, verdict, headline, path, run.result, new)
        outcomes.append(outcome)
        return outcome

    return check

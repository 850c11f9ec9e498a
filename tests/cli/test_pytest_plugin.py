"""The pytest plugin: a project's test that checks a model passes when every spec holds, and
fails with the counterexample's headline and its HTML report's path when one breaks."""

from __future__ import annotations

import re

import pytest

pytest_plugins = ["pytester"]

SUITE = '''
import pytest

def test_the_fixed_design(partsafe_check):
    assert partsafe_check("twophase", rms=2).ok

@pytest.mark.parametrize("variant", ["fixed", "tm-commit-early"])
def test_twophase(partsafe_check, variant):
    assert partsafe_check("twophase", variant).ok
'''


def _suite(pytester: pytest.Pytester, source: str, passed: int, failed: int) -> str:
    """Run `source` as a project's test suite in a pytest of its own; its output."""
    pytester.makepyfile(test_project=source)
    result = pytester.runpytest_subprocess("-p", "no:xdist", "-p", "no:cacheprovider")
    result.assert_outcomes(passed=passed, failed=failed)
    return result.stdout.str()


def test_a_project_checks_its_variants_in_its_own_suite(pytester: pytest.Pytester) -> None:
    out = _suite(pytester, SUITE, passed=2, failed=1)
    assert "partsafe check twophase (tm-commit-early): VIOLATION" in out
    assert "TC-CONSISTENT broken in" in out
    report = re.search(r"HTML report: (\S+\.html)", out)
    assert report is not None and "partsafe-twophase-tm-commit-early" in report[1]
    assert "partsafe" in out and out.count("HTML report:") == 1  # the failing test's only


BASELINED = '''
import pytest

@pytest.mark.parametrize("variant", ["hz38-unordered-members", "hz38-local-removal"])
def test_against_the_baseline(partsafe_check, variant):
    outcome = partsafe_check("membership", variant, baseline="baseline.json", suspicions=0,
                             publishes=1)
    assert outcome.ok
'''


def test_with_a_baseline_only_a_new_finding_fails(pytester: pytest.Pytester) -> None:
    """A baseline records hz38-unordered-members's broken spec: that check passes; a variant
    that breaks a spec the baseline does not record fails, naming the new finding."""
    from click.testing import CliRunner

    from partsafe.checker.cli.main import main

    report = pytester.path / "report.json"
    report.write_text(CliRunner().invoke(main, [
        "check", "membership", "--variant", "hz38-unordered-members", "--suspicions", "0",
        "--publishes", "1", "--keep-going", "--json"]).stdout)
    r = CliRunner().invoke(main, ["baseline", "update", str(pytester.path / "baseline.json"),
                                  str(report)])
    assert r.exit_code == 0, r.output
    out = _suite(pytester, BASELINED, passed=1, failed=1)
    assert "partsafe check membership (hz38-local-removal): VIOLATION" in out
    assert "new: violation MEM-MASTER-ONLY" in out

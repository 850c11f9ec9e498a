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


def test_a_project_checks_its_variants_in_its_own_suite(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_project=SUITE)
    result = pytester.runpytest_subprocess("-p", "no:xdist", "-p", "no:cacheprovider")
    result.assert_outcomes(passed=2, failed=1)
    out = result.stdout.str()
    assert "partsafe check twophase (tm-commit-early): VIOLATION" in out
    assert "TC-CONSISTENT broken in" in out
    report = re.search(r"HTML report: (\S+\.html)", out)
    assert report is not None and "partsafe-twophase-tm-commit-early" in report[1]
    assert "partsafe" in out and out.count("HTML report:") == 1  # the failing test's only

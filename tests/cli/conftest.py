"""Fixtures of the CLI tests: logs of clusters that break a spec."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from partsafe.checker.cli.main import main


@pytest.fixture(scope="module")
def flawed_logs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """Two zoo counterexamples exported as Hazelcast logs, a folder each: MEM-VIEW-ORDER
    (``hz38-unordered-members``) and MEM-MASTER-ONLY (``hz38-local-removal``)."""
    out = {}
    for variant in ("hz38-unordered-members", "hz38-local-removal"):
        folder = tmp_path_factory.mktemp(variant)
        r = CliRunner().invoke(main, ["check", "membership", "--variant", variant,
                                      "--trace-out", str(folder / "ce.json")])
        assert r.exit_code == 1, r.output
        r = CliRunner().invoke(main, ["export", str(folder / "ce.json"), "--log",
                                      str(folder / "logs")])
        assert r.exit_code == 0, r.output
        out[variant] = folder / "logs"
    return out

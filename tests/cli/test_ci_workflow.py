"""docs/ci.md's commands, run as written on the shown logs: record the baselines, then the gate
passes, writes its reports, JUnit and SARIF, and fails once a new finding appears, which its
SARIF log places on the line as new."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).parents[2]
DOC = ROOT / "docs" / "ci.md"
LOGS = ROOT / "tests" / "data" / "logs"


def _block(name: str) -> str:
    found = re.search(rf"```sh {name}\n(.*?)```", DOC.read_text(), re.S)
    assert found is not None, f"docs/ci.md has no `sh {name}` block"
    return found[1]


def _run(script: str, cwd: Path, logs: Path) -> subprocess.CompletedProcess[str]:
    partsafe = shutil.which("partsafe", path=os.path.dirname(sys.executable)) or "partsafe"
    env = {**os.environ, "PATH": f"{Path(partsafe).parent}{os.pathsep}{os.environ['PATH']}"}
    return subprocess.run(["bash", "-c", script, "ci", str(logs)], cwd=cwd, env=env,
                          capture_output=True, text=True, timeout=600)


@pytest.mark.skipif(shutil.which("bash") is None, reason="the workflow's script is bash")
def test_the_documented_workflow_records_its_baselines_then_gates(tmp_path: Path) -> None:
    logs = tmp_path / "logs"  # last night's: one cluster's three members (hz_06 to hz_08)
    logs.mkdir()
    for name in ("hz_06.log", "hz_07.log", "hz_08.log"):
        shutil.copy(LOGS / name, logs)
    (tmp_path / "reports" / "sarif").mkdir(parents=True)
    (tmp_path / "baselines").mkdir()
    recorded = _run(_block("ci-baselines"), tmp_path, logs)
    assert recorded.returncode == 0, recorded.stdout + recorded.stderr
    gate = _run(_block("ci-commands"), tmp_path, logs)
    assert gate.returncode == 0, gate.stdout + gate.stderr
    reports = {p.name for p in (tmp_path / "reports").iterdir()}
    assert {"logs.html", "logs.xml", "membership.html", "membership.svg", "membership.xml",
            "conform.xml", "conform.svg"} <= reports
    assert 'name="html_report"' in (tmp_path / "reports" / "logs.xml").read_text()
    for name in ("logs.sarif", "conform.sarif"):
        run = _sarif(tmp_path / "reports" / "sarif" / name)
        assert run["results"] == [] and run["invocations"][0]["exitCode"] == 0
    # a version that goes down in tonight's logs (MEM-VERSION): the gate fails at validate
    hz08 = logs / "hz_08.log"
    hz08.write_text(hz08.read_text().replace("Members {size:1, ver:5}",
                                             "Members {size:1, ver:3}", 1))
    failed = _run(_block("ci-commands"), tmp_path, logs)
    assert failed.returncode == 1
    assert "new, failing" in failed.stdout
    (result,) = _sarif(tmp_path / "reports" / "sarif" / "logs.sarif")["results"]
    where = result["locations"][0]["physicalLocation"]
    assert result["ruleId"] == "MEM-VERSION" and result["baselineState"] == "new"
    assert where["artifactLocation"]["uri"] == "logs/hz_08.log"  # in the checkout: relative
    # the record of the member list, its first line (its members follow it)
    assert where["region"]["startLine"] == 4
    assert "ClusterService" in where["region"]["snippet"]["text"]
    assert "Members {size:1, ver:3}" in where["contextRegion"]["snippet"]["text"]


def _sarif(path: Path) -> dict:
    """The one run of a SARIF log, checked against the OASIS schema."""
    import json

    import jsonschema

    doc = json.loads(path.read_text(encoding="utf-8"))
    schema = json.loads((ROOT / "tests" / "data" / "sarif" / "sarif-schema-2.1.0.json")
                        .read_text())
    jsonschema.Draft4Validator(schema).validate(doc)
    (run,) = doc["runs"]
    return run

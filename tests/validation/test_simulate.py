"""`partsafe simulate`: realistic multi-member logs from random walks, with injected violations.

The simulated logs must validate clean without injections, and each injection must be found by
`partsafe validate` as a violation of its spec, at the file and line the manifest records, and
nothing else. The same arguments write the same bytes.
"""

from __future__ import annotations

import filecmp
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from partsafe.checker.cli.main import main
from partsafe.checker.validation.local import LOG_SPECS, Report, validate
from partsafe.checker.validation.simulate import (
    INJECTORS,
    MANIFEST_NAME,
    Manifest,
    file_name,
    generate,
    simulate,
)

SMALL: dict[str, Any] = {"members": 5, "partitions": 24, "events": 300, "lines": 3000}


def found(report: Report) -> list[tuple[str, str, int]]:
    """(spec, file name, line) of each violation: the event that raised it."""
    return sorted((v.spec, Path(v.sources[-1].file).name, v.sources[-1].line)
                  for v in report.violations)


def recorded(manifest: Manifest) -> list[tuple[str, str, int]]:
    """(spec, file name, line) of each injection, and of each spec it implies."""
    return sorted((spec, i.file, i.line) for i in manifest.injections for spec in i.specs)


def test_the_same_arguments_write_the_same_bytes(tmp_path: Path) -> None:
    """Also in processes whose string hashing differs (sets iterate in another order)."""
    runs = [tmp_path / "a", tmp_path / "b", tmp_path / "c"]
    code = ("import sys; from pathlib import Path;"
            " from partsafe.checker.validation.simulate import simulate;"
            f" simulate(Path(sys.argv[1]), **{SMALL!r}, seed=7,"
            " inject=['MEM-VERSION', 'PT-VERSION'])")
    for out, hashing in zip(runs, ("1", "2"), strict=False):
        subprocess.run([sys.executable, "-c", code, str(out)], check=True,
                       env={**os.environ, "PYTHONHASHSEED": hashing})
    simulate(runs[2], **SMALL, seed=8, inject=["MEM-VERSION", "PT-VERSION"])
    names = sorted(p.name for p in runs[0].iterdir())
    assert MANIFEST_NAME in names and len(names) == SMALL["members"] + 1
    assert names == sorted(p.name for p in runs[1].iterdir())
    assert all(filecmp.cmp(runs[0] / n, runs[1] / n, shallow=False) for n in names)
    assert not filecmp.cmp(runs[0] / names[-1], runs[2] / names[-1], shallow=False)


@pytest.mark.parametrize("members", [2, 6, 27])
def test_without_injections_the_logs_validate_clean(tmp_path: Path, members: int) -> None:
    manifest = simulate(tmp_path, members=members, partitions=271, events=400, lines=8000,
                        seed=members)
    report = validate([str(tmp_path)])
    assert report.result == "ok", [v.message for v in report.violations]
    assert report.accounting.malformed == [] and report.warnings == []
    # every line and every protocol record the manifest counts is one the validator reads
    assert report.accounting.lines == manifest.lines
    assert report.accounting.events == manifest.events >= 400
    assert len(report.files) == len(manifest.files) == members  # the manifest is not read
    assert all(f.lines > 0 for f in manifest.files)
    # members beyond the 26 of an incarnation may log only noise in a short run
    assert {file_name(m) for m in report.members} <= {f.name for f in manifest.files}
    assert len(report.members) >= min(members, 26)
    # the partition walks show repartitioning and migrations once there are members to move
    # replicas between (two members with a backup each hold every partition already)
    if members > 2:
        assert report.migrations["repartitionings"] > 0 and report.migrations["started"] > 0


def test_the_injectors_cover_the_specs_a_log_shows() -> None:
    assert set(INJECTORS) == set(LOG_SPECS)


@pytest.mark.parametrize("spec", LOG_SPECS)
def test_an_injection_is_the_one_violation_at_its_line(tmp_path: Path, spec: str) -> None:
    manifest = simulate(tmp_path, **SMALL, seed=3, inject=[spec])
    [injection] = manifest.injections
    assert injection.spec == spec and injection.records[-1].line >= injection.line
    report = validate([str(tmp_path)])
    assert found(report) == sorted((s, injection.file, injection.line) for s in injection.specs)
    assert report.accounting.malformed == [] and report.warnings == []


def test_every_spec_injected_at_once(tmp_path: Path) -> None:
    manifest = simulate(tmp_path, members=9, partitions=64, events=600, lines=6000, seed=11,
                        inject=[s.lower() for s in LOG_SPECS])
    assert sorted(i.spec for i in manifest.injections) == sorted(LOG_SPECS)
    report = validate([str(tmp_path)])
    assert found(report) == recorded(manifest)
    doc = json.loads((tmp_path / MANIFEST_NAME).read_text())
    assert doc == manifest.as_dict(run=False)
    assert [i["line"] for i in doc["injections"]] == [i.line for i in manifest.injections]


def test_every_spec_injected_twice_in_a_small_cluster(tmp_path: Path) -> None:
    """Two injections of a spec may fall at the end of the same incarnation; in a cluster of
    four, the false suspicion of each walk leaves a removed member heading a list of its own,
    and the master is the head of the larger cluster."""
    manifest = simulate(tmp_path, members=4, partitions=32, events=200, lines=3000, seed=1575,
                        inject=[*LOG_SPECS, *LOG_SPECS])
    assert len(manifest.injections) == 2 * len(LOG_SPECS)
    assert found(validate([str(tmp_path)])) == recorded(manifest)


def test_a_small_cluster_takes_more_incarnations_to_place_its_injections(tmp_path: Path) -> None:
    """Two members have one non-master at most: the membership injections each need one, so
    they go to successive incarnations of the cluster, after the events asked for."""
    specs = ["MEM-VIEW-ORDER", "MEM-VIEW-INTEGRITY", "MEM-VERSION", "MEM-MASTER-ONLY"]
    manifest = simulate(tmp_path, members=2, partitions=4, events=20, lines=500, seed=2,
                        inject=specs)
    assert sorted(i.spec for i in manifest.injections) == sorted(specs)
    assert found(validate([str(tmp_path)])) == recorded(manifest)


@pytest.mark.parametrize(("budget", "measure"), [({"lines": 30_000}, "lines"),
                                                 ({"size": 3_000_000}, "bytes")])
def test_the_noise_fills_the_budget(tmp_path: Path, budget: dict[str, int], measure: str) -> None:
    manifest = simulate(tmp_path, members=4, partitions=16, events=200, seed=5, **budget)
    target = next(iter(budget.values()))
    assert abs(getattr(manifest, measure) - target) / target < 0.05
    assert sum(f.stat().st_size for f in tmp_path.glob("member-*.log")) == manifest.bytes


@pytest.mark.parametrize(("kwargs", "message"), [
    ({"members": 1}, "members must be 2 to 1000"),
    ({"members": 1001}, "members must be 2 to 1000"),
    ({"partitions": 0}, "partitions must be at least 1"),
    ({"events": 0}, "events must be at least 1"),
    ({"lines": 10, "size": 10}, "not both"),
    ({"inject": ["DATA-NO-LOSS"]}, "cannot inject 'DATA-NO-LOSS'"),
])
def test_bad_arguments_are_refused(tmp_path: Path, kwargs: dict[str, Any], message: str) -> None:
    args = {"members": 3, "partitions": 8, "events": 10, **kwargs}
    with pytest.raises(ValueError, match=message):
        simulate(tmp_path / "out", **args)
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize("model", ["membership", "cluster"])
def test_generate_keeps_its_contract(tmp_path: Path, model: str) -> None:
    """The scan benchmark's generator: `relevant` of the lines from walks of the membership
    model alone (or of the whole cluster)."""
    made = generate(tmp_path, lines=5000, model=model, relevant=0.02, seed=4)
    assert made["files"] == 4 and made["events"] >= 100 and made["runs"] >= 1
    assert abs(made["lines"] - 5000) < 100
    report = validate([str(tmp_path)])
    assert report.result == "ok"
    assert bool(report.migrations.get("started")) == (model == "cluster")
    with pytest.raises(ValueError, match="unknown model"):
        generate(tmp_path / "x", lines=10, model="twophase")


# --- the command line -------------------------------------------------------------------------


def invoke(*args: str) -> Any:
    return CliRunner().invoke(main, ["simulate", *args])


def test_cli_json_is_the_manifest_and_validate_finds_the_injection(tmp_path: Path) -> None:
    out = tmp_path / "logs"
    r = invoke("--members", "4", "--partitions", "32", "--events", "200", "--lines", "2000",
               "--out", str(out), "--inject", "mig-stats", "--seed", "5", "--json")
    assert r.exit_code == 0, r.output
    doc = json.loads(r.stdout)
    assert doc["out"] == str(out) and doc["seconds"] >= 0
    assert {k: v for k, v in doc.items() if k not in ("out", "seconds", "mb_per_second")} == \
        json.loads((out / MANIFEST_NAME).read_text())
    [inj] = doc["injections"]
    assert inj["spec"] == "MIG-STATS"
    v = CliRunner().invoke(main, ["validate", str(out), "--json", "--engine", "local"])
    assert v.exit_code == 1, v.output
    [violation] = json.loads(v.stdout)["violations"]
    last = violation["events"][-1]
    assert (violation["spec"], Path(last["file"]).name, last["line"]) == (
        "MIG-STATS", inj["file"], inj["line"])


def test_cli_human_summary(tmp_path: Path) -> None:
    r = invoke("--members", "3", "--partitions", "8", "--events", "100", "--out",
               str(tmp_path / "o"), "--inject", "MEM-MASTER-ONLY", "--no-progress")
    assert r.exit_code == 0, r.output
    manifest = json.loads((tmp_path / "o" / MANIFEST_NAME).read_text())
    [inj] = manifest["injections"]
    assert "injected violations" in r.stdout and "MEM-MASTER-ONLY" in r.stdout
    assert f"{inj['file']}:{inj['line']}" in r.stdout
    r = invoke("--members", "3", "--events", "50", "--out", str(tmp_path / "clean"))
    assert r.exit_code == 0 and "no violations injected" in r.stdout


@pytest.mark.parametrize(("args", "message"), [
    (["--members", "1"], "--members must be 2 to 1000"),
    (["--members", "3", "--partitions", "0"], "--partitions must be at least 1"),
    (["--members", "3", "--events", "0"], "--events must be at least 1"),
    (["--members", "3", "--inject", "NOPE"], "unknown spec 'NOPE'"),
    (["--members", "3", "--size", "12 parsecs"], "is not a size"),
    (["--members", "3", "--size", "1M", "--lines", "9"], "not both"),
    (["--members", "3", "--lines", "-4"], "must not be negative"),
    (["--members", "three"], "is not a valid integer"),
    ([], "Missing option '--members'"),
])
def test_cli_bad_input_exits_2_without_a_traceback(tmp_path: Path, args: list[str],
                                                    message: str) -> None:
    r = invoke(*args, "--out", str(tmp_path / "o"))
    assert r.exit_code == 2, r.output
    assert message in r.output and "Traceback" not in r.output
    assert isinstance(r.exception, SystemExit)
    assert not (tmp_path / "o").exists()


def test_cli_out_must_be_an_empty_directory_unless_forced(tmp_path: Path) -> None:
    out = tmp_path / "o"
    assert invoke("--members", "6", "--events", "60", "--out", str(out)).exit_code == 0
    (out / "notes.txt").write_text("kept\n")
    r = invoke("--members", "3", "--events", "60", "--out", str(out))
    assert r.exit_code == 2 and "not empty" in r.output
    r = invoke("--members", "3", "--events", "60", "--out", str(out), "--force")
    assert r.exit_code == 0, r.output
    # the earlier simulation's six member files are gone, the other file is kept
    assert sorted(p.name for p in out.glob("member-*.log")) == [
        file_name(f"10.0.0.{i}:5701") for i in (1, 2, 3)]
    assert (out / "notes.txt").read_text() == "kept\n"
    (tmp_path / "f").write_text("")
    r = invoke("--members", "3", "--out", str(tmp_path / "f"))
    assert r.exit_code == 2 and "is a file" in r.output

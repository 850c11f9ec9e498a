"""The Spark engine against the local engine: the same report (verdict, violations, warnings,
line accounting) on the shared real logs, on generated logs with and without injected
violations, on every layout, compressed and split into many input splits. One Spark session
(local[2]) serves the whole module."""

from __future__ import annotations

import gzip
import importlib
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from partsafe.checker.cli.main import main
from partsafe.checker.validation import local
from partsafe.checker.validation.shards import LOG_SPECS
from partsafe.checker.validation.simulate import generate, simulate

spark_mod = pytest.importorskip("partsafe.checker.validation.spark")
DATA = Path(__file__).parents[1] / "data" / "logs"
#: an Ignite 3 log: both layouts, the rebalance and raft messages, a throwable, a malformed line
IGNITE_SAMPLE = Path(__file__).parents[1] / "traces" / "ignite_sample.log"


@pytest.fixture(scope="module")
def spark() -> Any:
    s = spark_mod.session("local[2]")
    s.conf.set("spark.sql.shuffle.partitions", "4")
    s.conf.set("spark.sql.files.maxPartitionBytes", str(64 << 10))  # many splits per file
    s.conf.set("spark.sql.files.openCostInBytes", "0")
    return s


def both(paths: list[str], spark: Any) -> tuple[dict[str, Any], dict[str, Any]]:
    a = local.validate(paths).as_dict()
    b = spark_mod.validate_spark(paths, spark=spark).as_dict()
    assert (a.pop("engine"), b.pop("engine"), b.pop("spark_master")) == (
        "local", "spark", spark.sparkContext.master)
    a.pop("seconds")
    b.pop("seconds")
    return a, b


@pytest.fixture(scope="module")
def generated(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("generated")
    generate(out, lines=30_000, relevant=0.05, seed=11)
    return out


def test_the_real_logs_give_the_same_report(spark: Any) -> None:
    paths = [str(p) for p in sorted(DATA.glob("*.log"))]
    a, b = both(paths, spark)
    assert a == b
    assert a["lines"] == 181 and a["events"] > 0


def test_generated_logs_split_many_times_give_the_same_report(spark: Any, generated: Path
                                                              ) -> None:
    assert max(p.stat().st_size for p in generated.glob("*.log")) > 4 * (64 << 10)
    a, b = both([str(generated)], spark)
    assert a == b
    assert a["result"] == "ok" and a["events"] > 500


def sieve_pieces() -> Any:
    """tests/traces/test_sieve.py, whose pieces of logs run on both engines here (tests/ is on the
    path)."""
    return importlib.import_module("test_sieve")


def test_the_jvm_sieve_keeps_exactly_the_lines_the_python_sieve_keeps(spark: Any) -> None:
    from pyspark.sql import functions as F

    from partsafe.traces import sieve

    pieces = sieve_pieces()
    base = [line for p in DATA.glob("*.log") for line in p.read_text().split("\n")]
    base += [line for piece in pieces.PIECES for line in piece.split("\n")]
    base += IGNITE_SAMPLE.read_text().split("\n")
    corpus = set(base)
    for line in base:  # every wrapper and ending the sieve looks through
        corpus |= {line + "\r", line + "\u2003 ", "2023-11-14T10:00:09.5+01:00 " + line,
                   json.dumps({"message": line}), json.dumps({"log": line + "\n"}),
                   json.dumps({"msg": None, "log": line}), json.dumps({"level": line})}
    corpus |= {json.dumps({"message": {"nested": 1}}), "{not json", "[]", "{}", "\x00" * 9,
               "\x00" * 20 + "2023-11-14 10:00:00,000 INFO x", "10.0.0.2]:5701, uuid=x}]}",
               "{version=6, members=[", "{\"a\": 1}", "23-11-14 10:00:00 INFO x"}
    rows = spark.createDataFrame([(line,) for line in sorted(corpus)], "value string")
    jvm = {r["value"]: r["needed"] for r in rows.select(
        "value", sieve.column(F.col("value")).alias("needed")).collect()}
    assert len(jvm) == len(corpus) > 1000
    differ = [line for line in corpus if jvm[line] != sieve.needed(line)]
    assert differ == []
    assert 0 < sum(jvm.values()) < len(corpus)


def test_every_injected_violation_is_found_alike(spark: Any, tmp_path: Path) -> None:
    """Each spec a log shows, injected twice by `partsafe simulate`: both engines find exactly
    the manifest's violations, also in a compressed file and across many input splits."""
    manifest = simulate(tmp_path, members=6, partitions=48, events=900, lines=30_000, seed=5,
                        inject=[*LOG_SPECS, *LOG_SPECS])
    assert sorted({i.spec for i in manifest.injections}) == sorted(LOG_SPECS)
    squeezed = tmp_path / manifest.injections[0].file
    with gzip.open(str(squeezed) + ".gz", "wb") as f:
        f.write(squeezed.read_bytes())
    squeezed.unlink()
    a, b = both([str(tmp_path)], spark)
    assert a == b
    assert a["result"] == "violation"
    found = sorted((v["spec"], Path(v["events"][-1]["file"]).name.removesuffix(".gz"),
                    v["events"][-1]["line"]) for v in a["violations"])
    assert found == sorted((spec, i.file, i.line) for i in manifest.injections
                           for spec in i.specs)


def test_planner_logs_give_the_same_report(spark: Any, tmp_path: Path) -> None:
    """A master's FINEST planner lines (family §9): every plan of the faithful planner up to three
    indices, one partition each (its order records over several lines, split many times), with
    Hazelcast's own HZ-PLAN-1 and the index-order variant's flaw: both engines report the same
    violations, per master and partition."""
    from partsafe.checker.planner.check import judge
    from partsafe.checker.planner.space import canonical_pairs
    from partsafe.refimpl.planner import plan_events
    from partsafe.traces.writer import LogWriter

    found = []
    pairs = [pair for n in range(1, 4) for pair in canonical_pairs(n) if not judge(*pair)[1]]
    for p, (current, target) in enumerate(pairs):
        found += plan_events(current, target, partition=p, member="M", order=len(found))
    found += plan_events(("A", None, "B"), ("A", "C", None), partition=len(pairs), member="M",
                         order=len(found))
    found += plan_events(("A", "B"), ("B", "C"), variant="hz37-naive-order",
                         partition=len(pairs) + 1, member="M", order=len(found))
    writer = LogWriter()
    text = "".join(writer.line(e, e.order or 0) or "" for e in found)
    (tmp_path / "master.log").write_text(text)
    a, b = both([str(tmp_path / "master.log")], spark)
    assert a == b
    assert (tmp_path / "master.log").stat().st_size > 4 * (64 << 10)  # split many times
    assert sorted({v["spec"] for v in a["violations"]}) == [
        "PLAN-HOTTER-FIRST", "PLAN-NO-DECREASE", "PLAN-PRIORITY"]


def test_bytes_that_are_not_utf8_are_read_alike(spark: Any, tmp_path: Path) -> None:
    """Invalid UTF-8 in keyword lines, in a member list and in lines the sieve drops: both
    engines decode with replacement characters and give the same report."""
    source = sorted(DATA.glob("*.log"))
    for n, path in enumerate(source[:3]):
        lines = path.read_bytes().split(b"\n")
        for i in range(n, len(lines), 3):
            lines[i] += b" \xff\xfe caf\xc3"
        lines.insert(1, b"2023-11-14 10:00:00,000 INFO Members \xff{size:2, ver:1} [")
        (tmp_path / path.name).write_bytes(b"\n".join(lines))
    a, b = both([str(tmp_path)], spark)
    assert a == b
    assert a["events"] > 0 and a["malformed"]


def test_ignite_logs_give_the_same_report(spark: Any, tmp_path: Path) -> None:
    """Ignite 3 logs (each file sieved on the JVM and scanned per file): a random walk of the
    fixed design written as Ignite text, one node's log gzip-compressed and split many times, and
    a log with a violation, a malformed line and a throwable, next to a Hazelcast log."""
    import dataclasses
    import random

    from partsafe.checker import artifact
    from partsafe.checker.validation.simulate.walk import Walk

    walk = Walk("ignite-rebalance", {}, random.Random(5), 300, strict=False)
    found = [dataclasses.replace(e, order=step) for step, events, _, _ in walk for e in events]
    artifact.write_ignite_logs(found * 40, tmp_path / "walk")
    first = sorted((tmp_path / "walk").iterdir())[0]
    first.with_suffix(".log.gz").write_bytes(gzip.compress(first.read_bytes()))
    first.unlink()
    (tmp_path / "sample.log").write_text(IGNITE_SAMPLE.read_text())
    paths = [str(tmp_path / "walk"), str(tmp_path / "sample.log"), str(DATA / "hz_05.log")]
    a, b = both(paths, spark)
    assert a == b
    assert a["result"] == "violation" and a["malformed"]
    assert {v["spec"] for v in a["violations"]} >= {"IGN-ONE-LEADER"}


def test_every_layout_gives_the_same_report(spark: Any, tmp_path: Path) -> None:
    pieces = sieve_pieces()
    path = tmp_path / "layouts.log"
    path.write_text("".join(pieces.PIECES * 3) + "".join(reversed(pieces.PIECES)))
    a, b = both([str(path)], spark)
    assert a == b
    assert a["events"] > 10 and a["malformed"]


def test_events_without_a_member_give_the_same_report(spark: Any, tmp_path: Path) -> None:
    """Member lists no record line attributes to a member (versions going back, one version
    naming two lists), a lost partition and a removal in such a stream, next to a member's own
    violation: both engines judge only the known member, count the same events without a
    member and views, and warn of the lost partition alike."""
    uuids = ["90b8ae16-5e66-4b5b-b50f-c8e606103116", "25c4c3f8-ebb3-402b-aaa6-03a011a0e6d5",
             "7fb07cd0-5a46-422d-801d-05e6da0b9a63"]

    def listed(version: int, ports: list[int]) -> str:
        return (f"Members {{size:{len(ports)}, ver:{version}}} [\n"
                + "".join(f"\tMember [127.0.0.1]:{5700 + p} - {uuids[p - 1]}\n" for p in ports)
                + "]\n")

    (tmp_path / "bare.log").write_text(
        listed(9, [1, 2]) + listed(7, [1, 3]) + listed(7, [1])
        + "2023-11-14 10:00:00,000 WARN - partitionId=3 is completely lost!\n"
        + f"2023-11-14 10:00:02,000 INFO - Removing Member [127.0.0.1]:5702 - {uuids[1]}\n")
    prefix = ("2023-11-14 10:00:0{}.000 [ INFO] [hz.main] [c.h.i.c.ClusterService]: "
              "[127.0.0.1]:5701 [dev] [5.3.0] \n\n")
    (tmp_path / "a.log").write_text(prefix.format(1) + listed(5, [1, 2]).replace(
        f"{uuids[0]}\n", f"{uuids[0]} this\n") + "\n" + prefix.format(2)
        + listed(4, [1]).replace(f"{uuids[0]}\n", f"{uuids[0]} this\n"))
    a, b = both([str(tmp_path)], spark)
    assert a == b
    assert [(v["spec"], v["member"]) for v in a["violations"]] == [("MEM-VERSION",
                                                                    "127.0.0.1:5701")]
    assert (a["events_without_member"], a["views"]) == (5, 5)
    assert [(w["kind"], w["member"]) for w in a["warnings"]] == [("partition-lost", "")]


def validate_cases() -> Any:
    """The bad-input and long-record cases of tests/validation/test_validate.py, to run on both
    engines."""
    return importlib.import_module("test_validate")


def test_a_run_that_judges_nothing_is_incomplete_alike(spark: Any, tmp_path: Path) -> None:
    """An Ignite log and a text that is no log: both engines read them, find nothing, and say so
    alike; files that are all skipped (binary data) likewise."""
    cases = validate_cases()
    (tmp_path / "ignite.log").write_text(cases.IGNITE)
    (tmp_path / "passwd").write_text(cases.PASSWD)
    a, b = both([str(tmp_path / "ignite.log"), str(tmp_path / "passwd")], spark)
    assert a == b
    assert a["result"] == "incomplete" and a["incomplete_reason"].startswith("no event of ")
    assert [i["status"] for i in a["inputs"]] == ["nothing recognised"] * 2
    (tmp_path / "bin").mkdir()
    bad = cases.binaries(tmp_path / "bin")
    a, b = both([str(tmp_path / "bin"), str(bad[0])], spark)
    assert a == b
    assert a["result"] == "incomplete" and a["files"] == []
    assert [i["status"] for i in a["inputs"]] == ["skipped"] * 4


def test_holes_binaries_directories_wraps_and_long_lists_alike(spark: Any, tmp_path: Path
                                                               ) -> None:
    """A directory as they come: the excerpts with their README.md and index.json, a log after
    copytruncate, files of binary data, claims hard-wrapped under docker-compose's prefix, a
    member list of 50,000 members; both engines read, skip and judge the same."""
    cases = validate_cases()
    logs = tmp_path / "logs"
    logs.mkdir()
    for p in DATA.iterdir():
        (logs / p.name).write_bytes(p.read_bytes())
    rotated = cases.lists("10:00:00", cases.C, 1, [(cases.C, cases.U[2])]).encode()
    (logs / "rotated.log").write_bytes(cases.hole(100_000) + rotated + cases.hole(20))
    cases.binaries(logs)
    record = cases.log4j("10:00:00", cases.B, cases.claim(),
                         logger="c.h.i.c.i.MembershipManager").rstrip("\n")
    start = record.index("Mastership")
    wrapped = [f"hz2-1  | {record[i:i + width]}" for width in (start + 20, start + 57)
               for i in range(0, len(record), width)]
    (logs / "compose.log").write_text("\n".join(wrapped) + "\n")
    (logs / "big.log").write_text(cases.big_list(50_000))
    a, b = both([str(logs)], spark)
    assert a == b
    assert a["result"] == "ok" and a["events"] > 20
    status = {Path(i["file"]).name: i["status"] for i in a["inputs"]}
    assert [n for n, s in status.items() if s == "skipped"] == [
        "README.md", "hazelcast-node", "heap.dump.gz", "index.json", "member.log.1"]
    assert [n for n, s in status.items() if s != "judged" and s != "skipped"] == []
    assert [(Path(m["file"]).name, m["line"], m["reason"].split(" (")[0])
            for m in a["malformed"]] == [("rotated.log", 1, "100,000 NUL bytes"),
                                         ("rotated.log", rotated.count(b"\n") + 1,
                                          "20 NUL bytes")]


def test_cli_spark_engine_json_output_and_parquet(spark: Any, generated: Path, tmp_path: Path
                                                  ) -> None:
    out = tmp_path / "out"
    res = CliRunner().invoke(main, ["validate", "--engine", "spark", "--json", "--no-progress",
                                    "--output", str(out), str(generated)])
    assert res.exit_code == 0, res.output
    report = json.loads(res.stdout)
    assert report["lines"] == report["parsed_lines"] + report["ignored_lines"] + len(
        report["malformed"])
    events = spark.read.parquet(str(out / "events"))
    assert events.count() == report["events"]
    assert set(events.columns) >= {"file", "line", "member", "type", "event"}
    assert json.loads((out / "report.json").read_text())["result"] == "ok"


def test_auto_picks_spark_where_it_is_the_faster_engine(monkeypatch: pytest.MonkeyPatch
                                                         ) -> None:
    from partsafe.checker.validation.engines import choose_engine as _auto_engine

    auto = spark_mod.auto_engine
    monkeypatch.delenv("SPARK_MASTER", raising=False)
    monkeypatch.delenv("PYSPARK_GATEWAY_PORT", raising=False)
    gb = 10**9
    assert auto(100 * gb, "local[2]") == auto(100 * gb, "local") == "local"  # too few cores
    assert auto(100 * gb, "local[6]") == "local"
    assert auto(15 * gb, "local[8]") == "local" and auto(17 * gb, "local[8]") == "spark"
    assert auto(4 * gb, "local[16, 3]") == "local" and auto(5 * gb, "local[16, 3]") == "spark"
    monkeypatch.setattr(spark_mod.auto.os, "cpu_count", lambda: 16)
    assert auto(5 * gb, "local[*]") == auto(5 * gb) == "spark"
    assert auto(400 << 20, "spark://head:7077") == "local"  # a cluster, from 512 MB
    assert auto(600 << 20, "spark://head:7077") == "spark"
    monkeypatch.setenv("SPARK_MASTER", "yarn")
    assert auto(600 << 20) == "spark"
    monkeypatch.delenv("SPARK_MASTER")
    monkeypatch.setenv("PYSPARK_GATEWAY_PORT", "40000")  # under spark-submit
    assert auto(1) == "spark"
    monkeypatch.delenv("PYSPARK_GATEWAY_PORT")
    assert _auto_engine((str(DATA),), None, None) == "local"
    assert _auto_engine((str(DATA),), "local[2]", None) == "spark"  # asked for by an option
    assert _auto_engine((str(DATA),), None, "out") == "spark"


def test_a_failed_spark_job_is_a_message_and_exit_2(spark: Any, tmp_path: Path) -> None:
    """A gzip file cut short passes the look at its head and fails while Spark reads it: the
    job's reason, with the file, and exit status 2, no traceback."""
    whole = gzip.compress(b"".join(p.read_bytes() for p in sorted(DATA.glob("*.log"))) * 200)
    cut = tmp_path / "member.log.gz"
    cut.write_bytes(whole[: len(whole) // 2])
    res = CliRunner().invoke(main, ["validate", "--engine", "spark", str(cut)])
    assert res.exit_code == 2, res.output
    assert "the Spark engine failed" in res.output and "member.log.gz" in res.output
    assert "Traceback" not in res.output


def test_cli_bad_input_is_exit_2_without_a_traceback(spark: Any, tmp_path: Path) -> None:
    runner = CliRunner()
    res = runner.invoke(main, ["validate", "--engine", "spark", str(tmp_path / "missing.log")])
    assert res.exit_code == 2 and "no such file" in res.output and "Traceback" not in res.output
    hidden = tmp_path / "member.log"
    hidden.write_bytes(gzip.compress(b"2023-11-14 10:00:00,000 INFO hello\n"))
    res = runner.invoke(main, ["validate", "--engine", "spark", str(hidden)])
    assert res.exit_code == 2 and "gzip data without a .gz name" in res.output
    res = runner.invoke(main, ["validate", "--engine", "local", "--output", "x", str(hidden)])
    assert res.exit_code == 2 and "--output needs --engine spark" in res.output


def _free_port() -> int:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def test_a_standalone_cluster_runs_the_shipped_package(tmp_path: Path) -> None:
    """`--master spark://...`: a Spark standalone master and one worker started here (Spark's own
    launcher, its executors separate JVMs); the executors run partsafe from the zip the driver
    ships, and the report, violations included, is the local engine's."""
    import signal
    import time

    import pyspark

    home = Path(pyspark.__file__).parent
    env = os.environ | {"SPARK_HOME": str(home), "SPARK_LOG_DIR": str(tmp_path)}
    port = _free_port()
    url = f"spark://127.0.0.1:{port}"
    daemons = [
        ["org.apache.spark.deploy.master.Master", "--host", "127.0.0.1", "--port", str(port),
         "--webui-port", str(_free_port())],
        ["org.apache.spark.deploy.worker.Worker", "--cores", "1", "--memory", "1g",
         "--webui-port", str(_free_port()), url],
    ]
    logs = [tmp_path / "master.log", tmp_path / "worker.log"]
    procs: list[subprocess.Popen[bytes]] = []
    try:
        for daemon, log in zip(daemons, logs, strict=True):
            procs.append(subprocess.Popen([str(home / "bin" / "spark-class"), *daemon], env=env,
                                          stdout=log.open("wb"), stderr=subprocess.STDOUT,
                                          start_new_session=True))
            time.sleep(1)
        deadline = time.monotonic() + 120
        while "registered with master" not in logs[1].read_text(errors="replace"):
            assert time.monotonic() < deadline and procs[1].poll() is None, logs[1].read_text()
            time.sleep(0.5)
        simulate(tmp_path / "logs", members=4, partitions=16, events=300, lines=5_000, seed=3,
                 inject=["MEM-VERSION", "PT-VERSION"])
        paths = [str(DATA), str(tmp_path / "logs")]
        res = subprocess.run([sys.executable, "-m", "partsafe", "validate", "--engine", "spark",
                              "--master", url, "--json", *paths], capture_output=True,
                             text=True, cwd=tmp_path, timeout=600,
                             env=os.environ | {"PYSPARK_PYTHON": sys.executable})
        assert res.returncode == 1, res.stderr[-2000:]
        report = json.loads(res.stdout)
        assert (report.pop("engine"), report.pop("spark_master")) == ("spark", url)
        expected = local.validate(paths).as_dict()
        expected.pop("engine")
        assert report | {"seconds": 0} == expected | {"seconds": 0}
        assert {v["spec"] for v in report["violations"]} == {"MEM-VERSION", "PT-VERSION"}
    finally:
        for p in procs:
            os.killpg(p.pid, signal.SIGTERM)
            p.wait(timeout=60)


def _elsewhere(tmp_path: Path) -> dict[str, str]:
    """The environment of a shell that has not activated partsafe's environment (a cron job, a
    CI step, an IDE, pipx): no VIRTUAL_ENV, no PYSPARK_* variables, and on PATH a ``python3``
    that cannot import partsafe (this interpreter without its site-packages), then Java and the
    system's directories."""
    import shutil

    shims = tmp_path / "bin"
    shims.mkdir()
    for name in ("python3", "python"):
        shim = shims / name
        shim.write_text(f'#!/bin/sh\nexec "{sys.executable}" -S "$@"\n')
        shim.chmod(0o755)
    java = shutil.which("java")
    dirs = [str(shims), *([str(Path(java).parent)] if java else []), "/usr/bin", "/bin"]
    env = {k: v for k, v in os.environ.items()
           if k != "VIRTUAL_ENV" and not k.startswith("PYSPARK_")}
    env["PATH"] = os.pathsep.join(dirs)
    blind = subprocess.run(["python3", "-c", "import partsafe"], env=env, capture_output=True)
    assert blind.returncode != 0, "the python3 on PATH must not have partsafe"
    return env


def _same_as_local(res: subprocess.CompletedProcess[str], master: str) -> None:
    assert res.returncode == 0, res.stderr[-2000:] or res.stdout[-2000:]
    report = json.loads(res.stdout)
    assert (report.pop("engine"), report.pop("spark_master")) == ("spark", master)
    expected = local.validate([str(DATA)]).as_dict()
    expected.pop("engine")
    assert report | {"seconds": 0} == expected | {"seconds": 0}


@pytest.mark.parametrize("started", ["path", "module"])
def test_the_workers_run_partsafes_python_however_it_is_started(tmp_path: Path, started: str
                                                                ) -> None:
    """partsafe run by its full path or as ``python -m partsafe`` from an environment that is
    not activated, with a python3 on PATH that lacks partsafe: the Python workers of the local
    master run partsafe's own interpreter. A fresh process starts the JVM itself: the report on
    stdout and no line of Spark's or the JVM's on stderr, unless --spark-log (the second way)
    lets Spark's own logging through."""
    script = Path(sys.executable).parent / "partsafe"
    command = ([str(script)] if started == "path" and script.exists()
               else [sys.executable, "-m", "partsafe"])
    loud = ["--spark-log"] if started == "module" else []
    res = subprocess.run([*command, "validate", "--engine", "spark", "--master", "local[1]",
                          *loud, "--json", str(DATA)], capture_output=True, text=True,
                         cwd=tmp_path, timeout=300, env=_elsewhere(tmp_path))
    _same_as_local(res, "local[1]")
    assert ("log4j" in res.stderr) if loud else res.stderr == ""


def test_under_spark_submit_the_workers_run_the_drivers_python(tmp_path: Path) -> None:
    """`spark-submit <partsafe>/__main__.py validate ...`, the driver's Python chosen by
    PYSPARK_DRIVER_PYTHON and a python3 on PATH that lacks partsafe: the JVM is
    spark-submit's, the workers run the driver's interpreter, not PATH's, and the report is the
    one the local engine gives."""
    import pyspark

    import partsafe

    submit = Path(pyspark.__file__).parent / "bin" / "spark-submit"
    main_py = Path(partsafe.__path__[0]) / "__main__.py"
    env = _elsewhere(tmp_path) | {"PYSPARK_DRIVER_PYTHON": sys.executable}
    res = subprocess.run([str(submit), "--master", "local[1]", str(main_py), "validate",
                          "--json", str(DATA)], capture_output=True, text=True, cwd=tmp_path,
                         timeout=300, env=env)
    _same_as_local(res, "local[1]")


def test_the_workers_python_is_partsafes_own_on_a_local_master(spark: Any,
                                                                monkeypatch: pytest.MonkeyPatch
                                                                ) -> None:
    """`pythons_for`: this interpreter for the workers of a local master, Spark's own choice on a
    cluster, this interpreter for the JVM's driver-side Python when partsafe starts the JVM, and
    a variable the user set is kept."""

    assert spark.sparkContext.pythonExec == os.environ.get("PYSPARK_PYTHON", sys.executable)
    for name in ("PYSPARK_PYTHON", "PYSPARK_DRIVER_PYTHON"):
        monkeypatch.delenv(name, raising=False)
    me = sys.executable
    pythons = spark_mod.pythons_for
    for master in ("local", "local[*]", "local[2, 3]", "local-cluster[2, 1, 1024]"):
        assert pythons(master, submitted=False) == {"PYSPARK_PYTHON": me,
                                                    "PYSPARK_DRIVER_PYTHON": me}
        assert pythons(master, submitted=True) == {"PYSPARK_PYTHON": me}
    for master in ("spark://head:7077", "yarn", "k8s://https://head:6443"):
        assert pythons(master, submitted=False) == {"PYSPARK_DRIVER_PYTHON": me}
        assert pythons(master, submitted=True) == {}
    monkeypatch.setenv("PYSPARK_PYTHON", "/opt/cluster/bin/python3")
    assert pythons("local[*]", submitted=False) == {"PYSPARK_DRIVER_PYTHON": me}
    monkeypatch.setenv("PYSPARK_DRIVER_PYTHON", "/opt/cluster/bin/python3")
    assert pythons("local[*]", submitted=False) == {}


def test_auto_engines_help_states_its_rule(monkeypatch: pytest.MonkeyPatch) -> None:
    """`validate --engine`'s help names the numbers `auto_engine` decides by: the cluster
    threshold, the fewest local cores with which Spark outruns the local engine, and the input
    from which it does on 7, 8 and 16 cores, each checked against `auto_engine` itself."""
    import re
    from itertools import count

    monkeypatch.delenv("SPARK_MASTER", raising=False)
    monkeypatch.delenv("PYSPARK_GATEWAY_PORT", raising=False)
    option = next(p for p in main.commands["validate"].params if p.name == "engine")
    text = " ".join(str(option.help).split())
    auto = spark_mod.auto_engine
    mb = spark_mod.CLUSTER_THRESHOLD >> 20
    assert f"from {mb} MB of input" in text
    assert auto(mb << 20, "spark://head:7077") == "spark"
    assert auto((mb << 20) - 1, "spark://head:7077") == "local"
    per_core, local_rate = (spark_mod.SPARK_LINES_PER_SECOND_PER_CORE,
                            spark_mod.LOCAL_LINES_PER_SECOND)
    fewest = next(n for n in count(1) if per_core * n > local_rate)
    assert f"with {fewest} cores or more" in text
    assert auto(10**18, f"local[{fewest - 1}]") == "local"
    for cores in (fewest, 8, 16):
        lines = spark_mod.SPARK_FIXED_SECONDS / (1 / local_rate - 1 / (per_core * cores))
        size = lines * spark_mod.BYTES_PER_LINE
        assert re.search(rf"\b{size / 10**9:.2g} GB (of input )?on {cores}\b", text), (
            cores, text)
        assert auto(int(size * 0.99), f"local[{cores}]") == "local"
        assert auto(int(size * 1.01), f"local[{cores}]") == "spark"


def test_event_files_and_skew_verdicts_are_alike(spark: Any, tmp_path: Path) -> None:
    """Event files (a quiescence check, a header's specs and settings, Ignite's monitors) and
    a docker-compose log whose violation is definite at no skew and possible within 200 ms
    give the same report on both engines, verdicts under skew included."""
    import json as json_mod

    from test_skew import write_restart_50ms_after

    from partsafe.checker import artifact
    from partsafe.checker.engine.bfs import Bounds
    from partsafe.checker.protocols import catalog
    from partsafe.checker.report import artifact as artifact_doc
    from partsafe.checker.run import run_check

    paths = []
    for model, variant, spec, scope in (
            ("membership", "hz38-stale-master-list", "MEM-VIEW-AGREEMENT", {"suspicions": 0}),
            ("parallel", "hz40-global-order-parallel", "PT-MASTER-ONLY",
             {"crashes": 0, "joins": 0, "shutdowns": 1}),
            ("ignite-rebalance", "mutant-vote-twice", "IGN-ONE-VOTE",
             {"restarts": 0, "max-term": 3, "early-timeouts": 3})):
        run = run_check(catalog.get(model), variant, scope, bounds=Bounds(), symmetry=True,
                        keep_going=True, until=spec)
        doc = json_mod.loads(json_mod.dumps(artifact_doc(run.model, run.result, run.params,
                                                         spec)))
        path = tmp_path / f"{variant}.jsonl"
        found, specs, config = artifact.exported(doc, str(path))
        artifact.write_events(found, str(path), specs, config)
        a = local.validate([str(path)]).as_dict()
        b = spark_mod.validate_spark([str(path)], spark=spark).as_dict()
        for d in (a, b):
            for key in ("engine", "seconds", "spark_master"):
                d.pop(key, None)
        assert a == b and spec in {v["spec"] for v in a["violations"]}
        paths.append(str(path))
    log = write_restart_50ms_after(tmp_path / "compose.log")
    for bound, certainty in ((0, "definite"), (200, "possible")):
        a = local.validate([str(log)], max_skew_ms=bound).as_dict()
        b = spark_mod.validate_spark([str(log)], spark=spark, max_skew_ms=bound).as_dict()
        for d in (a, b):
            for key in ("engine", "seconds", "spark_master"):
                d.pop(key, None)
        assert a == b
        found = a["violations"] + a["possible_violations"]
        assert [(v["spec"], v["certainty"]) for v in found] == [("SHUT-ONLY-SOURCE", certainty)]

"""Conformance benchmark: `partsafe conform twophase` on the TwoPhase traces of Cirstea et al.
2024, beside TLC's trace validation of the same files with the paper's trace spec.

Not part of the test suite. It needs a checkout of the paper's repository (its ``BenchMarks/``
traces and configurations, its ``spec/``), and for the TLC column a ``tla2tools.jar``:

    git clone https://github.com/lbinria/TwoPhase /tmp/TwoPhase
    python tests/benchmarks/bench_conform.py --repo /tmp/TwoPhase --tlc tla2tools.jar
    python tests/benchmarks/bench_conform.py --repo /tmp/TwoPhase --only 16RM --json

Each file is checked by partsafe in this process (one core) and by TLC in a fresh JVM, as the
paper runs it: depth-first (``-Dtlc2.tool.queue.IStateQueue=StateDeque``), one worker, ``-note``,
within ``--timeout`` seconds (150 by default: past it the verdict is "undecided"). The trace spec
reads its files through the CommunityModules' ``IOUtils.IOEnv`` and ``SequencesExt.ToSet``; the
benchmark writes two small modules of those names beside a copy of the spec (``IOEnv`` a record
of the two paths, ``ToSet`` its one-line definition), so that ``tla2tools.jar`` alone runs it.

The expected verdicts: the ``BUG-`` files are rejected, the others accepted. For each file: the
RMs, records, partsafe's verdict, states and seconds, TLC's verdict, distinct states and seconds,
and TLC's seconds over partsafe's.
"""

from __future__ import annotations

import argparse
import json
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from rich.console import Console
from rich.table import Table

TRACE = re.compile(r"trace\.ndjson\.(?P<bug>BUG-)?(?P<rms>\d+)RM\.(?P<level>\w+)$")
#: TLC's last word on a trace that matched and on one that did not
TLC_ACCEPT = "Model checking completed. No error has been found."
TLC_REJECT = "Failed matching the trace to (a prefix of) a behavior"
TLC_STATES = re.compile(r"([\d,]+) states generated, ([\d,]+) distinct states found")


def partsafe_run(trace: Path, conf: Path) -> dict[str, object]:
    from partsafe.checker.engine.conform import conform
    from partsafe.checker.protocols.twophase import TwoPhase
    from partsafe.checker.protocols.twophase_trace import TwoPhaseTrace
    from partsafe.traces.tla_ndjson import read_config, read_trace

    t0 = time.perf_counter()
    rms = read_config(conf)["RM"]
    lines = read_trace(trace)
    r = conform(TwoPhaseTrace(TwoPhase(len(rms)), lines, rms))
    seconds = time.perf_counter() - t0
    at = r.diagnosis.unmatched.rsplit(":", 1)[1] if r.diagnosis and r.verdict != "conforms" \
        else None
    return {"records": len(lines), "verdict": r.verdict, "states": r.states,
            "seconds": round(seconds, 3), "rejected_at": at}


def tlc_run(spec: Path, jar: Path, trace: Path, conf: Path, timeout: float
            ) -> dict[str, object]:
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        for f in spec.glob("*.tla"):
            shutil.copy(f, work)
        for f in spec.glob("*.cfg"):
            shutil.copy(f, work)
        (work / "SequencesExt.tla").write_text(
            "---- MODULE SequencesExt ----\nEXTENDS Sequences\n"
            "ToSet(s) == { s[i] : i \\in DOMAIN s }\n====\n")
        (work / "IOUtils.tla").write_text(
            "---- MODULE IOUtils ----\n"
            f"IOEnv == [TRACE_PATH |-> {json.dumps(str(trace.resolve()))}, "
            f"CONFIG_PATH |-> {json.dumps(str(conf.resolve()))}]\n====\n")
        cmd = ["java", "-XX:+UseParallelGC", "-Dtlc2.tool.queue.IStateQueue=StateDeque",
               "-cp", str(jar.resolve()), "tlc2.TLC", "-workers", "1", "-note",
               "-metadir", str(work / "states"), "TwoPhaseTrace.tla"]
        t0 = time.perf_counter()
        try:
            out = subprocess.run(cmd, cwd=work, capture_output=True, text=True,
                                 timeout=timeout).stdout
        except subprocess.TimeoutExpired:
            return {"verdict": "undecided", "states": None, "seconds": round(timeout, 1)}
        seconds = time.perf_counter() - t0
    states = TLC_STATES.findall(out)
    verdict = ("conforms" if TLC_ACCEPT in out else "does-not-conform" if TLC_REJECT in out
               else "error")
    return {"verdict": verdict, "states": int(states[-1][1].replace(",", "")) if states else None,
            "seconds": round(seconds, 2)}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repo", type=Path, required=True,
                        help="a checkout of github.com/lbinria/TwoPhase")
    parser.add_argument("--tlc", type=Path, help="tla2tools.jar (without it: partsafe only)")
    parser.add_argument("--timeout", type=float, default=150.0, help="TLC's seconds per file")
    parser.add_argument("--only", action="append",
                        help="files whose name holds this text (repeatable)")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    bench, spec = args.repo / "BenchMarks", args.repo / "spec"
    if not bench.is_dir() or not spec.is_dir():
        parser.error(f"{args.repo} holds no BenchMarks/ and spec/ (a TwoPhase checkout)")
    if args.tlc is not None and not args.tlc.is_file():
        parser.error(f"--tlc {args.tlc}: no such file")
    files = []
    for path in bench.iterdir():
        m = TRACE.match(path.name)
        if m and (not args.only or any(o in path.name for o in args.only)):
            files.append((int(m["rms"]), m["level"], bool(m["bug"]), path))
    files.sort(key=lambda f: (f[2], f[0], f[1]))
    console = Console(stderr=args.json)
    rows = []
    for rms, level, bug, path in files:
        conf = bench / f"conf.{rms}RM.ndjson"
        ours = partsafe_run(path, conf)
        theirs = tlc_run(spec, args.tlc, path, conf, args.timeout) if args.tlc else None
        expected = "does-not-conform" if bug else "conforms"
        rows.append({"file": path.name, "rms": rms, "level": level, "expected": expected,
                     "partsafe": ours, "tlc": theirs})
        console.print(f"{path.name}: partsafe {ours['verdict']} in {ours['seconds']} s"
                      + (f"; TLC {theirs['verdict']} in {theirs['seconds']} s" if theirs
                         else ""))
    table = Table(title="partsafe conform twophase beside TLC (DFS, 1 worker)")
    for col in ("file", "lines", "paper", "partsafe", "states", "s", "TLC", "distinct",
                "s ", "× "):
        table.add_column(col, justify="right")
    word = {"conforms": "accept", "does-not-conform": "reject", "undecided": "undecided",
            "error": "error"}
    for r in rows:
        ours, theirs = r["partsafe"], r["tlc"] or {}
        ratio = (f"{theirs['seconds'] / max(ours['seconds'], 1e-3):,.0f}×"
                 if theirs.get("seconds") else "")
        if theirs.get("verdict") == "undecided":
            ratio = f">{ratio}"
        table.add_row(r["file"].removeprefix("trace.ndjson."), f"{ours['records']}",
                      word[r["expected"]], word[ours["verdict"]], f"{ours['states']:,}",
                      f"{ours['seconds']:.3f}", word.get(theirs.get("verdict", ""), ""),
                      f"{theirs['states']:,}" if theirs.get("states") else "",
                      f"{theirs['seconds']}" if theirs else "", ratio)
    console.print(table)
    right = all(r["partsafe"]["verdict"] == r["expected"] for r in rows)
    fast = all(r["partsafe"]["seconds"] < 10 for r in rows if r["rms"] >= 12)
    console.print(f"{'met' if right and fast else 'MISSED'}: the paper's verdict on every file, "
                  "each 12- and 16-RM file in under 10 s")
    if args.json:
        print(json.dumps({"runs": rows, "met": right and fast}))
    return 0 if right and fast else 1


if __name__ == "__main__":
    sys.exit(main())

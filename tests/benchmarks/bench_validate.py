"""Validation benchmark: the local engine on one core, event-dense and few-event logs, and a
skew-heavy log whose violations go to Z3, beside grep over the same bytes.

Not part of the test suite. Run it with

    python tests/benchmarks/bench_validate.py                       # 2 GB cases, as in the docs
    python tests/benchmarks/bench_validate.py --size 200M --json    # a quick run
    python tests/benchmarks/bench_validate.py --repeat 5            # the best of 5 runs each

Cases (each validated in a fresh process, so that its peak memory is its own):

- ``event-dense``: `partsafe simulate` logs of 20 members with 200 protocol events per MB
  (400,000 events in 2 GB);
- ``few-event``: the same size with 5 events per MB (the scan's fast path);
- ``skew-heavy``: a docker-compose log of two members whose clocks differ, holding `--skewed`
  candidate violations across members (a master starts a migration to a member 50 ms before that
  member's log says it restarted; the migration then commits), each decided by Z3
  (`partsafe.checker.validation.skew`), among noise lines.

For each: lines, events, seconds, lines per second, peak memory (the child's own high-water mark,
VmHWM; ru_maxrss where /proc is missing) and bytes per event above the start;
and grep's lines per second over the same files (``grep -c -F -f KEYWORDS``: the lines that hold
one of the scanner's keywords, the scanner's own first pass), with the ratio. With
``--repeat N`` each case and grep run N times, one after the other, and the best run of each is
reported (as timeit does: on a shared machine noise only adds time), with the slowest beside it.
The targets:
event-dense at 500,000 lines/s or more and under 300 MB on 2 GB.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from rich.console import Console
from rich.table import Table

TARGET_LINES_PER_S = 500_000
TARGET_PEAK_MB = 300
CASES = ("event-dense", "few-event", "skew-heavy")
#: the file that marks a kept case's logs as completely written (`--data`); validate skips it
DONE = ".written"

#: the child that validates one directory and reports its figures
CHILD = r"""
import json, resource, sys, time
from partsafe.checker.validation.local import validate

def peak_mb():
    # the process's own high-water mark: Linux keeps ru_maxrss across exec, so a child started
    # by a large parent reports the parent's size there; VmHWM belongs to the new image
    try:
        with open("/proc/self/status") as f:
            for line in f:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) / 1024
    except OSError:
        pass
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024

t0 = time.perf_counter()
r = validate([sys.argv[1]], max_skew_ms=int(sys.argv[2]))
s = time.perf_counter() - t0
print(json.dumps({"lines": r.accounting.lines, "events": r.accounting.events, "seconds": s,
                  "result": r.result, "definite": len(r.definite), "possible": len(r.possible),
                  "malformed": len(r.accounting.malformed), "peak_mb": peak_mb()}))
"""


def parse_size(text: str) -> int:
    units = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30}
    return int(float(text[:-1]) * units[text[-1].upper()]) if text[-1].isalpha() else int(text)


def simulated(out: Path, size: int, per_mb: int, seed: int) -> None:
    from partsafe.checker.validation.simulate.run import simulate

    simulate(out, members=20, partitions=271, events=max(1, size * per_mb >> 20), size=size,
             seed=seed)


def skew_heavy(out: Path, candidates: int, noise: int) -> None:
    """A docker-compose log of masters A and member B: `candidates` rounds in which A handles
    B's shutdown request and starts a migration to B 50 ms before B's log says it restarted,
    each round a violation of SHUT-ONLY-SOURCE that is possible under a skew above 50 ms."""
    from partsafe.traces import events as ev
    from partsafe.traces.writer import LogWriter

    writer = LogWriter()
    t = 1_700_000_000_000
    with (out / "compose.log").open("w") as f:
        f.write(_lines(writer, "hz1-1", ev.MemberListInstalled(
            member="A", version=1, members=("A", "B"), master="A"), t))
        for i in range(candidates):
            t += 10_000
            f.write(_lines(writer, "hz1-1",
                           ev.ShutdownRequestHandled(member="A", requester="B"), t))
            f.write(_lines(writer, "hz2-1", ev.MemberStarted(member="B"), t + 1_050))
            f.write(_lines(writer, "hz1-1", ev.MigrationStarted(
                member="A", role="master", migration=f"m{i}", partition=i % 271,
                source_member="A", destination="B", source_current_index=0,
                source_endpoint="A", planned_version=1, partition_version=1), t + 1_000))
            f.write(_lines(writer, "hz1-1", ev.MigrationCommitted(
                member="A", role="master", migration=f"m{i}", partition=i % 271), t + 1_200))
            for j in range(noise):
                f.write(f"hz1-1  | 2023-11-14 22:13:20,000 [ INFO] [main] [com.example.App]: "
                        f"request {i}.{j} served in 3 ms\n")


def _lines(writer: object, service: str, e: object, at_ms: int) -> str:
    text = writer.line(e, 0, at_ms=at_ms)  # type: ignore[attr-defined]
    return "".join(f"{service}  | {line}\n" for line in text.splitlines() if line)


def run_child(folder: Path, skew_ms: int) -> dict[str, float]:
    out = subprocess.run([sys.executable, "-c", CHILD, str(folder), str(skew_ms)],
                         capture_output=True, text=True, check=True)
    return json.loads(out.stdout)


def grep_lines_per_s(folder: Path, lines: int) -> float | None:
    """grep over the same files for the scanner's keywords (one process, like the scanner)."""
    from partsafe.traces.payload import KEYWORDS

    if shutil.which("grep") is None:
        return None
    with tempfile.NamedTemporaryFile("w", suffix=".txt", delete=False) as kw:
        kw.write("\n".join(KEYWORDS) + "\n")
    files = sorted(str(p) for p in folder.iterdir() if not p.name.startswith("."))
    t0 = time.perf_counter()
    subprocess.run(["grep", "-c", "-F", "-f", kw.name, *files], capture_output=True,
                   check=False, env={**os.environ, "LC_ALL": "C"})
    os.unlink(kw.name)
    return lines / (time.perf_counter() - t0)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", default="2G", help="bytes per simulated case (2G, 200M)")
    parser.add_argument("--skewed", type=int, default=2_000,
                        help="candidate violations of the skew-heavy case")
    parser.add_argument("--max-skew-ms", type=int, default=100)
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--data", type=Path, default=None,
                        help="keep the written logs in this directory and reuse them on later "
                             "runs (the same size, the same logs)")
    parser.add_argument("--repeat", type=int, default=1,
                        help="run each case and grep this many times; report the best")
    parser.add_argument("--case", action="append", choices=CASES,
                        help="run this case only (repeatable; default: all three)")
    args = parser.parse_args()
    console = Console(stderr=args.json)
    size = parse_size(args.size)
    rows = []
    makers = {"event-dense": lambda d: simulated(d, size, 200, 5),
              "few-event": lambda d: simulated(d, size, 5, 6),
              "skew-heavy": lambda d: skew_heavy(d, args.skewed, 200)}
    with tempfile.TemporaryDirectory() as tmp:
        empty = Path(tmp) / "empty"
        empty.mkdir()
        (empty / "empty.log").write_text("")
        base_mb = run_child(empty, args.max_skew_ms)["peak_mb"]
        for name in [c for c in CASES if c in (args.case or CASES)]:
            kept = args.data is not None
            folder = (args.data / (f"{name}-{args.skewed}" if name == "skew-heavy"
                                   else f"{name}-{args.size}")) if kept else Path(tmp) / name
            if not (folder / DONE).exists():
                shutil.rmtree(folder, ignore_errors=True)
                folder.mkdir(parents=True)
                t0 = time.perf_counter()
                makers[name](folder)
                (folder / DONE).write_text("")
                console.print(f"{name}: written in {time.perf_counter() - t0:.1f} s")
            runs, greps = [], []
            for _ in range(max(1, args.repeat)):  # validate and grep in turn: the same moments
                runs.append(run_child(folder, args.max_skew_ms))
                greps.append(grep_lines_per_s(folder, int(runs[-1]["lines"])))
            got = {**min(runs, key=lambda r: r["seconds"]),
                   "peak_mb": max(r["peak_mb"] for r in runs)}  # memory: the most any run used
            grep = max((g for g in greps if g), default=None)
            nbytes = sum(p.stat().st_size for p in folder.iterdir())
            lps = got["lines"] / got["seconds"]
            rows.append({"case": name, "bytes": nbytes, "lines": int(got["lines"]),
                         "events": int(got["events"]), "seconds": round(got["seconds"], 2),
                         "lines_per_second": round(lps), "peak_mb": round(got["peak_mb"]),
                         "above_start_mb": round(got["peak_mb"] - base_mb),
                         "bytes_per_event": round((got["peak_mb"] - base_mb) * (1 << 20)
                                                  / max(1, got["events"])),
                         "result": got["result"], "definite": got["definite"],
                         "possible": got["possible"], "malformed": got["malformed"],
                         "grep_lines_per_second": round(grep) if grep else None,
                         "ratio_to_grep": round(lps / grep, 3) if grep else None,
                         "runs": len(runs),
                         "slowest_lines_per_second": round(
                             got["lines"] / max(r["seconds"] for r in runs))})
            if not kept:
                shutil.rmtree(folder)
    table = Table(title=f"partsafe validate, local engine, one core (a process starts at "
                        f"{base_mb:.0f} MB)")
    for col in ("case", "lines", "events", "s", "lines/s", "peak MB", "B/event", "× grep"):
        table.add_column(col, justify="right")
    for r in rows:
        table.add_row(r["case"], f"{r['lines']:,}", f"{r['events']:,}", f"{r['seconds']:.1f}",
                      f"{r['lines_per_second']:,}", f"{r['peak_mb']:,}",
                      f"{r['bytes_per_event']:,}", f"{r['ratio_to_grep'] or 0:.2f}")
    console.print(table)
    for r in rows:
        console.print(f"{r['case']}: {r['bytes'] / 1e6:,.0f} MB, verdict {r['result']} "
                      f"({r['definite']} definite, {r['possible']} possible, {r['malformed']} "
                      f"malformed); grep {r['grep_lines_per_second'] or 0:,} lines/s"
                      + (f"; best of {r['runs']} runs, the slowest at "
                         f"{r['slowest_lines_per_second']:,} lines/s" if r["runs"] > 1 else ""))
    dense = next((r for r in rows if r["case"] == "event-dense"), None)
    met = dense is not None and (dense["lines_per_second"] >= TARGET_LINES_PER_S
                                 and (size < (2 << 30) or dense["peak_mb"] < TARGET_PEAK_MB))
    console.print(f"{'met' if met else 'MISSED'}: event-dense at {TARGET_LINES_PER_S:,} lines/s "
                  f"or more, under {TARGET_PEAK_MB} MB on 2 GB")
    if args.json:
        print(json.dumps({"runs": rows, "start_mb": round(base_mb), "met": met}))
    return 0 if met else 1


if __name__ == "__main__":
    sys.exit(main())

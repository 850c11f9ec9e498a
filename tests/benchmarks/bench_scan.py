"""Log scan benchmark: lines per second of the local engine on one core.

Not part of the test suite. Run it with

    python tests/benchmarks/bench_scan.py                 # 2,000,000 lines
    python tests/benchmarks/bench_scan.py --lines 10000000 --json

It generates multi-member logs from random walks of the membership model (design 002), written in
Hazelcast's wording with mostly irrelevant lines around them as in real logs (application lines,
connection chatter, health reports, stack traces, and Hazelcast lines that mention migrations
without being protocol messages), then measures

- the scan: every line read and accounted for, relevant ones parsed into events
  (`partsafe.traces.scanner.Scanner`), and
- the whole validation (`partsafe validate`: scan, merge, monitors, report),

in lines per second, with the peak memory of the process. The target: the scan at 1,000,000 lines
per second or more.
"""

from __future__ import annotations

import argparse
import json
import resource
import sys
import tempfile
import time
from pathlib import Path

from rich.console import Console
from rich.table import Table

from partsafe.checker.validation.local import validate
from partsafe.checker.validation.simulate import generate
from partsafe.traces.scanner import Scanner, expand

TARGET = 1_000_000


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--lines", type=int, default=2_000_000)
    parser.add_argument("--relevant", type=float, default=0.005,
                        help="share of lines written from simulation events")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    console = Console(stderr=args.json)
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp)
        t0 = time.perf_counter()
        made = generate(out, lines=args.lines, model="membership", relevant=args.relevant)
        gen_s = time.perf_counter() - t0
        size = sum(f.stat().st_size for f in out.iterdir())
        console.print(f"generated {made['lines']:,} lines ({size / 1e6:.0f} MB, "
                      f"{made['files']} members, {made['events']:,} events) in {gen_s:.1f} s")
        scanner = Scanner()
        t0 = time.perf_counter()
        events = sum(1 for f in expand([tmp]) for _ in scanner.scan(f))
        scan_s = time.perf_counter() - t0
        acc = scanner.accounting
        t0 = time.perf_counter()
        report = validate([tmp])
        validate_s = time.perf_counter() - t0
    peak_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    rows = [
        {"stage": "scan", "lines": acc.lines, "events": events, "seconds": round(scan_s, 3),
         "lines_per_second": round(acc.lines / scan_s),
         "mb_per_second": round(size / 1e6 / scan_s)},
        {"stage": "validate", "lines": report.accounting.lines, "events": report.accounting.events,
         "seconds": round(validate_s, 3),
         "lines_per_second": round(report.accounting.lines / validate_s),
         "mb_per_second": round(size / 1e6 / validate_s)},
    ]
    table = Table(title="log scan, one core")
    for col in ("stage", "lines", "events", "seconds", "lines/s", "MB/s"):
        table.add_column(col, justify="right")
    for r in rows:
        table.add_row(r["stage"], f"{r['lines']:,}", f"{r['events']:,}", f"{r['seconds']:.2f}",
                      f"{r['lines_per_second']:,}", f"{r['mb_per_second']:,}")
    console.print(table)
    met = rows[0]["lines_per_second"] >= TARGET
    console.print(f"{'met' if met else 'MISSED'}: scan at {TARGET:,} lines/s or more; "
                  f"verdict {report.result}, {len(acc.malformed)} malformed, "
                  f"peak memory {peak_mb:.0f} MB")
    if args.json:
        print(json.dumps({"runs": rows, "bytes": size, "result": report.result,
                          "malformed": len(acc.malformed), "peak_mb": round(peak_mb),
                          "met": met}))
    return 0 if met and report.result == "ok" else 1


if __name__ == "__main__":
    sys.exit(main())

"""Partition service benchmark: the three models at the full scope of their issue.

Not part of the test suite. Run it with

    python tests/benchmarks/bench_partition.py   # hours on one core (see docs/performance.md)
    python tests/benchmarks/bench_partition.py --json

Each run explores one model (migration, shutdown, parallel) exhaustively at 3 members and a
joiner, 2 partitions, 1 backup, with one crash (the master included), one join and one shutdown
request, without and with symmetry reduction, each in a fresh interpreter; it prints distinct
states, depth, seconds, states per second and peak memory. The target: every run clean (`ok`).
"""

from __future__ import annotations

import sys

from rich.console import Console

from partsafe.checker.bench import PARTITION_SUITE, render, report, run_suite


def main() -> int:
    console = Console(stderr="--json" in sys.argv)
    rows = run_suite(progress=console, suite=PARTITION_SUITE)
    render(console, rows)
    clean = all(r["result"] == "ok" for r in rows)
    return report(console, rows, clean, "every model clean at the full scope", key="clean")


if __name__ == "__main__":
    sys.exit(main())

"""Ignite 3 rebalance benchmark: the figures of docs/performance.md for the Ignite model.

Not part of the test suite. Run it with

    python tests/benchmarks/bench_ignite.py           # about 10 minutes on one core
    python tests/benchmarks/bench_ignite.py --long    # and two scopes with two leader changes
    python tests/benchmarks/bench_ignite.py --json

Each run explores one scope in a fresh interpreter and prints its verdict, distinct states, depth,
seconds, states per second and peak memory: the fixed design at the scopes of the figures, then
each variant at the smallest scope that breaks it. The target: the fixed design clean everywhere,
every variant broken.
"""

from __future__ import annotations

import sys

from rich.console import Console

from partsafe.checker.bench import IGNITE_LONG, IGNITE_SUITE, render, report, run_suite


def main() -> int:
    console = Console(stderr="--json" in sys.argv)
    suite = IGNITE_SUITE + (IGNITE_LONG if "--long" in sys.argv else ())
    rows = run_suite(progress=console, suite=suite)
    render(console, rows)
    for r in rows:
        if r["specs"]:
            console.print(f"{r['label']}: {', '.join(r['specs'])}, a counterexample of "
                          f"{r['counterexample']} steps")
    met = all((r["result"] == "ok") == (r["variant"] == "fixed") for r in rows)
    return report(console, rows, met, "the fixed design clean, every variant broken")


if __name__ == "__main__":
    sys.exit(main())

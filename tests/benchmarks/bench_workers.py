"""Worker processes benchmark: the same searches in one process and with `--workers 2`.

Not part of the test suite. Run it with

    python tests/benchmarks/bench_workers.py           # about 7 minutes on two idle cores
    python tests/benchmarks/bench_workers.py --json

Each search runs in a fresh interpreter, first in one process, then with its levels expanded by
two forked workers (`explore(..., workers=2)`), and prints its distinct states, seconds, states
per second and peak memory (of the searching process, and of the larger worker). The searches
range from TwoPhase, whose states are integers expanded in microseconds, to the partition
service and Ignite, whose states take hundreds. The target: on two cores, two workers find the
same states at least 1.6 times as fast wherever a state costs more than 50 microseconds (fewer
than 20,000 states a second in one process).
"""

from __future__ import annotations

import sys

from rich.console import Console

from partsafe.checker.bench import WORKERS_SUITE, render, report, run_suite

#: the speedup two workers must reach on searches of costly states
TARGET = 1.6


def main() -> int:
    console = Console(stderr="--json" in sys.argv)
    rows = run_suite(progress=console, suite=WORKERS_SUITE)
    render(console, rows)
    met = True
    for one, two in zip(rows[::2], rows[1::2], strict=True):
        speedup = one["seconds"] / max(two["seconds"], 1e-9)
        two["speedup"] = round(speedup, 2)
        same = (one["distinct_states"], one["transitions"]) == (
            two["distinct_states"], two["transitions"])
        costly = one["states_per_second"] < 20_000
        met = met and same and (speedup >= TARGET or not costly)
        console.print(f"{one['label'].rsplit(',', 1)[0]}: {speedup:.2f}x with 2 workers"
                      f"{'' if same else ', DIFFERENT STATES'}; largest worker "
                      f"{two['worker_peak_memory_mb']} MB, searching process "
                      f"{two['peak_memory_mb']} MB")
    return report(console, rows, met, f"the same states, {TARGET}x as fast with 2 workers "
                  "where a state costs over 50 microseconds")


if __name__ == "__main__":
    sys.exit(main())

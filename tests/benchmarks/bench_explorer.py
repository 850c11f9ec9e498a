"""Explorer benchmark: distinct states per second, peak memory, and the symmetry saving.

Not part of the test suite (no timed assertions there). Run it with

    python tests/benchmarks/bench_explorer.py            # the full suite, a few minutes
    python tests/benchmarks/bench_explorer.py --quick    # without TwoPhase at 9 RMs

It prints the table `partsafe bench` prints, then each target of the explorer and whether this
machine met it: at least 100,000 distinct states per second on one core for TwoPhase, and TwoPhase
with 9 resource managers (10,340,352 states) explored without symmetry in under 120 s and 1 GB.
"""

from __future__ import annotations

import json
import sys

from rich.console import Console

from partsafe.checker.bench import render, run_suite


def main() -> int:
    quick = "--quick" in sys.argv
    console = Console()
    rows = run_suite(quick=quick, progress=console)
    render(console, rows)
    by = {r["label"]: r for r in rows}
    targets = []
    for label in ("twophase rms=7", "twophase rms=8", "twophase rms=9"):
        if label in by:
            targets.append((f"{label}: >= 100,000 states/s",
                            by[label]["states_per_second"] >= 100_000))
    if "twophase rms=9" in by:
        r = by["twophase rms=9"]
        targets.append(("twophase rms=9: 10,340,352 states", r["distinct_states"] == 10_340_352))
        targets.append(("twophase rms=9: under 120 s", r["seconds"] < 120))
        targets.append(("twophase rms=9: under 1 GB peak", r["peak_memory_mb"] < 1024))
    for text, met in targets:
        console.print(f"{'met' if met else 'MISSED'}: {text}")
    if "--json" in sys.argv:
        print(json.dumps({"runs": rows, "targets": dict(targets)}))
    return 0 if all(met for _, met in targets) else 1


if __name__ == "__main__":
    sys.exit(main())

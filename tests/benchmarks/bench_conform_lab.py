"""Conformance of the recorded real runs (tests/data/lab/): each run's logs against its model
(membership for Hazelcast, ignite-rebalance for Ignite 3) under the profile of the release they
print, each search in a process of its own bounded in time and address space, as `partsafe lab`
judges them. It reports, per run, the verdict, records, states searched, seconds and peak
memory (the child's maximum resident set), and the totals; the target is every run decided in
under 10 s and 500 MB on one core.

Not part of the test suite (tests/lab/test_corpus.py checks the verdicts of the runs the models
have steps for). No peer reads these logs, so the figures stand alone.

    python tests/benchmarks/bench_conform_lab.py
    python tests/benchmarks/bench_conform_lab.py --only hz312 --seconds 60 --json
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.table import Table

CORPUS = Path(__file__).resolve().parents[1] / "data" / "lab"


def measure(run: Path, seconds: float, mb: int) -> dict[str, Any]:
    summary = json.loads((run / "run.json").read_text())
    model = "ignite-rebalance" if summary.get("product") == "ignite" else "membership"
    logs = sorted(str(p) for p in run.glob("member-*.log.gz"))
    limit = mb << 20

    def bound() -> None:
        resource.setrlimit(resource.RLIMIT_AS, (limit, limit))

    started = time.perf_counter()
    child = subprocess.Popen([sys.executable, "-m", "partsafe", "conform", model, *logs,
                              "--json"], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                             preexec_fn=bound)
    try:
        out, _ = child.communicate(timeout=seconds)
    except subprocess.TimeoutExpired:
        child.kill()
        out, _ = child.communicate()
    elapsed = time.perf_counter() - started
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    try:
        doc = json.loads(out)
    except json.JSONDecodeError:
        doc = {"verdict": f"undecided (no answer in {seconds:.0f} s)"}
    return {"run": run.name, "model": model, "profile": doc.get("profile"),
            "verdict": doc.get("verdict"), "records": doc.get("records"),
            "states": doc.get("states"), "seconds": round(elapsed, 2),
            # the largest child so far: each run's own when the runs go biggest last; the
            # figure is an upper bound for the others
            "peak_mb_so_far": round(usage.ru_maxrss / 1024, 1)}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n", 1)[0])
    parser.add_argument("--only", default="", help="runs whose name starts so")
    parser.add_argument("--seconds", type=float, default=120.0)
    parser.add_argument("--mb", type=int, default=4096)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    os.environ.setdefault("PYTHONHASHSEED", "0")
    runs = [r for r in sorted(CORPUS.iterdir())
            if (r / "run.json").is_file() and r.name.startswith(args.only)]
    rows = [measure(r, args.seconds, args.mb) for r in runs]
    if args.json:
        print(json.dumps({"runs": rows}, indent=1))
        return 0
    table = Table(title="conform of the recorded real runs")
    for column in ("run", "model", "profile", "verdict", "records", "states", "s", "MB≤"):
        table.add_column(column)
    for r in rows:
        table.add_row(r["run"], r["model"], str(r["profile"]), str(r["verdict"]),
                      str(r["records"]), str(r["states"]), f"{r['seconds']:.1f}",
                      f"{r['peak_mb_so_far']:.0f}")
    console = Console()
    console.print(table)
    decided = sum(1 for r in rows if r["verdict"] in ("conforms", "does-not-conform"))
    console.print(f"{decided} of {len(rows)} runs decided; "
                  f"{sum(r['seconds'] for r in rows):.0f} s in all")
    return 0


if __name__ == "__main__":
    sys.exit(main())

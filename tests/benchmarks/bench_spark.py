"""Benchmark: the Spark engine on generated logs of at least 2 GB and 20 members, against the
local engine on the same input, and the driver's memory at two input sizes.

    python tests/benchmarks/bench_spark.py                      # 2 GB, 20 members, local[*]
    python tests/benchmarks/bench_spark.py --size-gb 0.2 --json # a quick run

The logs are written by `checker.validation.simulate.simulate` into --dir (kept between runs: a
directory whose manifest matches is reused). The Spark engine runs twice, on a quarter of the
input and on all of it, each time measuring the Python driver's peak resident memory and the
peak heap of the driver JVM (which, in local mode, also runs the executors' tasks, in a heap of
--driver-memory, 1 GB by default); the driver holds results only, so neither grows with the
input. Not run by the test suite.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import sys
import threading
import time
from pathlib import Path
from typing import Any

from partsafe.checker.validation.local import validate
from partsafe.checker.validation.simulate import simulate
from partsafe.checker.validation.spark import session, validate_spark


def logs(out: Path, size: int, members: int, seed: int) -> Path:
    marker = out / ".bench.json"
    wanted = {"size": size, "members": members, "seed": seed}
    if marker.exists() and json.loads(marker.read_text()) == wanted:
        return out
    shutil.rmtree(out, ignore_errors=True)
    t0 = time.perf_counter()
    simulate(out, members=members, partitions=271, events=max(1000, size // 20_000),
             size=size, seed=seed)
    print(f"generated {size / 1e9:.2f} GB in {time.perf_counter() - t0:.0f} s into {out}",
          file=sys.stderr)
    marker.write_text(json.dumps(wanted))
    return out


class RssPeak:
    """The peak resident memory of this process while the block runs (sampled every 50 ms)."""

    def __init__(self) -> None:
        self.peak = 0
        self._stop = threading.Event()

    def _rss(self) -> int:
        with open("/proc/self/statm") as f:
            return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")

    def _run(self) -> None:
        while not self._stop.wait(0.05):
            self.peak = max(self.peak, self._rss())

    def __enter__(self) -> RssPeak:
        self.peak = self._rss()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()


def jvm_heap_peak(spark: Any, reset: bool = False) -> int:
    pools = spark.sparkContext._jvm.java.lang.management.ManagementFactory \
        .getMemoryPoolMXBeans()
    total = 0
    for pool in pools:
        if str(pool.getType()) == "Heap memory":
            if reset:
                pool.resetPeakUsage()
            else:
                total += pool.getPeakUsage().getUsed()
    return total


def spark_run(spark: Any, path: Path) -> dict[str, Any]:
    jvm_heap_peak(spark, reset=True)
    with RssPeak() as rss:
        t0 = time.perf_counter()
        report = validate_spark([str(path)], spark=spark)
        seconds = time.perf_counter() - t0
    return {"lines": report.accounting.lines, "events": report.accounting.events,
            "result": report.result, "seconds": round(seconds, 1),
            "lines_per_second": round(report.accounting.lines / seconds),
            "driver_python_peak_mb": round(rss.peak / 2**20),
            "driver_jvm_heap_peak_mb": round(jvm_heap_peak(spark) / 2**20),
            "report": report}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--size-gb", type=float, default=2.0)
    ap.add_argument("--members", type=int, default=20)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--dir", type=Path, default=Path("/tmp/partsafe-bench-spark"))
    ap.add_argument("--master", default="local[*]")
    ap.add_argument("--driver-memory", default="1g",
                    help="the driver JVM's heap (in local mode it runs the tasks too)")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    size = int(args.size_gb * 1e9)
    big = logs(args.dir / "full", size, args.members, args.seed)
    small = logs(args.dir / "quarter", size // 4, args.members, args.seed)
    on_disk = sum(p.stat().st_size for p in big.glob("*.log"))

    t0 = time.perf_counter()
    local_report = validate([str(big)])
    local_seconds = time.perf_counter() - t0
    local_rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024

    os.environ["PYSPARK_SUBMIT_ARGS"] = f"--driver-memory {args.driver_memory} pyspark-shell"
    spark = session(args.master)
    quarter = spark_run(spark, small)
    full = spark_run(spark, big)
    apart = {"seconds": 0, "engine": "", "spark_master": ""}
    same = local_report.as_dict() | apart == full["report"].as_dict() | apart
    for run in (quarter, full):
        run.pop("report")
    out = {
        "input": {"bytes": on_disk, "files": len(list(big.glob("*.log"))),
                  "members": args.members, "lines": full["lines"], "events": full["events"]},
        "master": spark.sparkContext.master,
        "driver_memory": args.driver_memory,
        "cores": os.cpu_count(),
        "local": {"seconds": round(local_seconds, 1),
                  "lines_per_second": round(local_report.accounting.lines / local_seconds),
                  "peak_rss_mb": round(local_rss / 2**20)},
        "spark_quarter": quarter,
        "spark_full": full,
        "spark_to_local_speed": round(local_seconds / full["seconds"], 2),
        "same_report": same,
    }
    if args.json:
        print(json.dumps(out, indent=1))
        return
    print(f"input: {on_disk / 1e9:.2f} GB, {out['input']['files']} files, "
          f"{full['lines']:,} lines, {full['events']:,} events")
    print(f"local engine: {local_seconds:.1f} s, {out['local']['lines_per_second']:,} lines/s, "
          f"peak RSS {out['local']['peak_rss_mb']} MB")
    for name, run in (("spark, 1/4 input", quarter), ("spark, full input", full)):
        print(f"{name}: {run['seconds']} s, {run['lines_per_second']:,} lines/s, driver: "
              f"Python peak {run['driver_python_peak_mb']} MB, JVM heap peak "
              f"{run['driver_jvm_heap_peak_mb']} MB")
    print(f"spark/local speed: {out['spark_to_local_speed']}x; same report: {same}")


if __name__ == "__main__":
    main()

"""Conformance on the products' logs: every zoo counterexample of the models with a log table,
written as Hazelcast or Apache Ignite 3 logs (`partsafe export --log`) and read back, against
its own variant and the fixed design at the default K (8 unlogged steps in a row); and the shown
real Hazelcast logs against each Hazelcast design.

Not part of the test suite (which checks the same verdicts at the K each run needs,
tests/engine/test_conform_logs.py); this measures the searches at the default K, where refuting
a log against the fixed Ignite design is the long case. No peer reads these logs, so the figures
stand alone: records, verdict, states searched, seconds and states per second.

    python tests/benchmarks/bench_conform_logs.py
    python tests/benchmarks/bench_conform_logs.py --only ignite-rebalance --json
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path

from rich.console import Console
from rich.table import Table

LOGS = Path(__file__).resolve().parents[1] / "data" / "logs"
#: the shown real logs, as the clusters they come from
CLUSTERS = [("hz_04", "hz_05"), ("hz_06", "hz_07", "hz_08"), ("hz_11",), ("hz_17",), ("hz_28",)]


def run(model: str, variant: str, paths: list[str], scope: dict[str, int] | None,
        max_hidden: int) -> dict[str, object]:
    from partsafe.checker.engine.conform import conform
    from partsafe.checker.protocols import catalog
    from partsafe.checker.protocols.log_trace import LogTrace, read_logs

    entry = catalog.get(model)
    assert entry.log_table is not None
    logs = read_logs(paths, entry.log_table)
    if not logs.streams:
        return {"verdict": "nothing to match", "records": 0, "states": 0, "seconds": 0.0}
    used = scope if scope is not None else entry.log_table.scope(logs.records())
    t0 = time.perf_counter()
    r = conform(LogTrace(entry.make(variant, used), entry.log_table, logs, 100),
                max_hidden=max_hidden)
    seconds = time.perf_counter() - t0
    return {"verdict": r.verdict, "records": r.records, "states": r.states,
            "seconds": round(seconds, 3),
            "states_per_second": round(r.states / seconds) if seconds > 0.01 else None}


def zoo_rows(only: list[str] | None, max_hidden: int) -> list[dict[str, object]]:
    from partsafe.checker import artifact
    from partsafe.checker.engine.bfs import Bounds
    from partsafe.checker.protocols import catalog
    from partsafe.checker.report import artifact as artifact_doc
    from partsafe.checker.run import run_check

    rows: list[dict[str, object]] = []
    for entry in catalog.MODELS.values():
        if entry.log_table is None or (only and entry.name not in only):
            continue
        for variant, (spec, overrides) in entry.zoo.items():
            result = run_check(entry, variant, overrides, bounds=Bounds(), symmetry=True,
                               keep_going=True, until=spec)
            doc = json.loads(json.dumps(artifact_doc(result.model, result.result,
                                                     result.params, spec)))
            found, _, _ = artifact.exported(doc, "ce")
            with tempfile.TemporaryDirectory() as folder:
                artifact.write_logs(found, Path(folder), entry.name)
                for design in (variant, "fixed"):
                    rows.append({"model": entry.name, "log": f"zoo {variant}", "design": design,
                                 **run(entry.name, design, [folder], doc["params"],
                                       max_hidden)})
    return rows


def real_rows(only: list[str] | None, max_hidden: int) -> list[dict[str, object]]:
    rows: list[dict[str, object]] = []
    for model in ("membership", "migration", "shutdown", "parallel"):
        if only and model not in only:
            continue
        for cluster in CLUSTERS:
            paths = [str(LOGS / f"{name}.log") for name in cluster]
            rows.append({"model": model, "log": "+".join(cluster), "design": "fixed",
                         **run(model, "fixed", paths, None, max_hidden)})
    return rows


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", action="append", help="a model (repeatable)")
    parser.add_argument("--max-hidden", type=int, default=8)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    rows = real_rows(args.only, args.max_hidden) + zoo_rows(args.only, args.max_hidden)
    if args.json:
        print(json.dumps({"max_hidden": args.max_hidden, "rows": rows}, indent=2))
        return 0
    table = Table(title=f"partsafe conform on logs, K = {args.max_hidden}")
    for column in ("model", "log", "design", "records", "verdict", "states", "seconds",
                   "states/s"):
        table.add_column(column, justify="right" if column in (
            "records", "states", "seconds", "states/s") else "left")
    for row in rows:
        table.add_row(str(row["model"]), str(row["log"]), str(row["design"]),
                      str(row["records"]), str(row["verdict"]), f"{row['states']:,}",
                      f"{row['seconds']:.2f}", f"{row.get('states_per_second') or '-'}")
    Console().print(table)
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""`partsafe bench`: the explorer's speed and memory on this machine.

Each run happens in a fresh interpreter, so that its peak resident memory is its own. Figures:
distinct states, seconds, distinct states per second (one core) and peak memory, for TwoPhase at
7, 8 and 9 resource managers without symmetry and with it, and for membership at a fixed scope.
"""

from __future__ import annotations

import json
import resource
import subprocess
import sys
from collections.abc import Callable, Sequence
from typing import Any

from rich.console import Console
from rich.table import Table
from rich.text import Text

#: (label, model, variant, params, symmetry)
SUITE: tuple[tuple[str, str, str, dict[str, int], bool], ...] = (
    ("twophase rms=7", "twophase", "fixed", {"rms": 7}, False),
    ("twophase rms=8", "twophase", "fixed", {"rms": 8}, False),
    ("twophase rms=9", "twophase", "fixed", {"rms": 9}, False),
    ("twophase rms=7 symmetry", "twophase", "fixed", {"rms": 7}, True),
    ("twophase rms=8 symmetry", "twophase", "fixed", {"rms": 8}, True),
    ("twophase rms=9 symmetry", "twophase", "fixed", {"rms": 9}, True),
    ("membership 2 joiners", "membership", "fixed",
     {"members": 3, "joiners": 2, "joins": 2, "crashes": 1, "suspicions": 0}, False),
    ("membership 2 joiners symmetry", "membership", "fixed",
     {"members": 3, "joiners": 2, "joins": 2, "crashes": 1, "suspicions": 0}, True),
    ("membership default", "membership", "fixed", {}, True),
)

#: the partition service at the full scope: 3 members, 2 partitions, 1 backup, one crash (the
#: master included), one join and one shutdown request
FULL_SCOPE = {"crashes": 1, "joins": 1, "shutdowns": 1}
PARTITION_SUITE: tuple[tuple[str, str, str, dict[str, int], bool], ...] = tuple(
    (f"{model} full scope{' symmetry' if symmetry else ''}", model, "fixed", FULL_SCOPE, symmetry)
    for model in ("migration", "shutdown", "parallel") for symmetry in (False, True))


#: the Ignite model: the fixed design at the scopes of docs/performance.md, then each variant at the
#: smallest scope that breaks it (its first violation); `IGNITE_LONG`: the two sub-scopes of the
#: design's with two changes of leader (`--max-term 3`), millions of states each
_TERM1 = {"baseline-changes": 1, "max-term": 1}
IGNITE_SUITE: tuple[tuple[str, str, str, dict[str, int], bool], ...] = (
    ("ignite default", "ignite-rebalance", "fixed", {}, True),
    ("ignite default, no symmetry", "ignite-rebalance", "fixed", {}, False),
    ("ignite --max-term 3", "ignite-rebalance", "fixed", {"max-term": 3}, True),
    ("ignite --losses 1", "ignite-rebalance", "fixed", {"losses": 1}, True),
    ("ignite --restarts 0 --baseline-changes 1", "ignite-rebalance", "fixed",
     {"restarts": 0, "baseline-changes": 1}, True),
    ("ignite --restarts 0 --baseline-changes 1 --losses 1", "ignite-rebalance", "fixed",
     {"restarts": 0, "baseline-changes": 1, "losses": 1}, True),
    ("ignite --restarts 0 --baseline-changes 1 --spares 1 --replicas 4", "ignite-rebalance",
     "fixed", {"restarts": 0, "baseline-changes": 1, "spares": 1, "replicas": 4}, True),
    ("ignite --persistent 1", "ignite-rebalance", "fixed", {"persistent": 1}, True),
    ("ignite --on-disappeared 1", "ignite-rebalance", "fixed", {"on-disappeared": 1}, True),
    ("ignite --baseline-changes 1 --max-term 1", "ignite-rebalance", "fixed", _TERM1, True),
    ("ignite --restarts 2 --max-term 1", "ignite-rebalance", "fixed",
     {"restarts": 2, "max-term": 1}, True),
    ("ignite --baseline-changes 1", "ignite-rebalance", "fixed", {"baseline-changes": 1}, True),
    ("ignite --restarts 2", "ignite-rebalance", "fixed", {"restarts": 2}, True),
    *((f"ignite {variant}", "ignite-rebalance", variant, params, True) for variant, params in (
        ("ig-restart-keeps-peer", {}), ("ig-no-trigger-guard", {}),
        ("ig-source-keeps-append", {}), ("ig-single-planned", _TERM1),
        ("ig-design-keeps-reduce", _TERM1), ("ig-switch-ignores-data-nodes", _TERM1),
        ("ig-stale-reduce-event", {"restarts": 2, "max-term": 1}))),
)
IGNITE_LONG: tuple[tuple[str, str, str, dict[str, int], bool], ...] = (
    ("ignite --baseline-changes 1 --max-term 3", "ignite-rebalance", "fixed",
     {"baseline-changes": 1, "max-term": 3}, True),
    ("ignite --restarts 2 --max-term 3", "ignite-rebalance", "fixed",
     {"restarts": 2, "max-term": 3}, True),
)


#: (label, model, variant, params, symmetry, workers): searches whose states cost from 8 to 300
#: microseconds each, in one process and in two workers
_WORKER_RUNS: tuple[tuple[str, str, str, dict[str, int], bool], ...] = (
    ("twophase rms=9", "twophase", "fixed", {"rms": 9}, False),
    ("membership default", "membership", "fixed", {}, True),
    ("parallel --joins 1 --shutdowns 0", "parallel", "fixed", {"joins": 1, "shutdowns": 0}, True),
    ("ignite --restarts 2 --max-term 1", "ignite-rebalance", "fixed",
     {"restarts": 2, "max-term": 1}, True),
)
WORKERS_SUITE: tuple[tuple[str, str, str, dict[str, int], bool, int], ...] = tuple(
    (f"{label}, {workers} worker{'s' if workers > 1 else ''}", model, variant, params, symmetry,
     workers)
    for label, model, variant, params, symmetry in _WORKER_RUNS for workers in (1, 2))


def run_one(model: str, variant: str, params: dict[str, int], symmetry: bool,
            workers: int = 1) -> dict[str, Any]:
    """Explore one model in this process (and `workers` forked ones) and report its figures."""
    from partsafe.checker.engine.bfs import explore
    from partsafe.checker.protocols import catalog

    entry = catalog.get(model)
    result = explore(entry.make(variant, params), symmetry=symmetry,
                     action_kinds=entry.action_kinds, workers=workers)
    peak_kib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    worker_kib = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    return {
        "model": model, "variant": variant, "params": params, "symmetry": symmetry,
        "workers": workers, "worker_peak_memory_mb": round(worker_kib / 1024),
        "result": result.result, "specs": sorted({v.spec for v in result.violations}),
        "counterexample": min((v.trace.depth for v in result.violations), default=None),
        "distinct_states": result.distinct_states,
        "transitions": result.transitions, "depth": result.depth,
        "seconds": round(result.seconds, 2),
        "states_per_second": round(result.states_per_second),
        "peak_memory_mb": round(peak_kib / 1024),
    }


def run_suite(quick: bool = False, progress: Console | None = None,
              suite: Sequence[tuple[Any, ...]] = SUITE,
              done: Callable[[int, int, dict[str, Any]], None] | None = None,
              ) -> list[dict[str, Any]]:
    """Each run of `suite` (label, model, variant, params, symmetry[, workers]) in a fresh
    interpreter. `progress` is told which run starts; `done(index, total, row)` gets each run's
    figures as soon as it ends."""
    runs = [run for run in suite
            if not (quick and run[1] == "twophase" and run[3].get("rms") == 9 and not run[4])]
    rows = []
    for index, (label, model, variant, params, symmetry, *workers) in enumerate(runs, start=1):
        if progress is not None:
            progress.print(Text(f"bench {index}/{len(runs)}: {label} ...", style="dim"))
        arg = json.dumps([model, variant, params, symmetry, *workers])
        out = subprocess.run([sys.executable, "-m", "partsafe.checker.bench", arg],
                             capture_output=True, text=True, check=True)
        row = json.loads(out.stdout)
        row["label"] = label
        rows.append(row)
        if done is not None:
            done(index, len(runs), row)
    return rows


def row_line(index: int, total: int, row: dict[str, Any]) -> Text:
    """One finished run in a line, printed as the suite goes."""
    return Text(f"bench {index}/{total}: {row['label']}: {row['distinct_states']:,} states in "
                f"{row['seconds']:.2f} s ({row['states_per_second']:,}/s, "
                f"{row['peak_memory_mb']} MB)")


def render(console: Console, rows: list[dict[str, Any]]) -> None:
    table = Table(title="partsafe bench (one core)", title_justify="left")
    table.add_column("run", overflow="fold")  # a narrow terminal folds the label, not the figures
    for col in ("result", "states", "depth", "seconds", "states/s", "peak MB"):
        table.add_column(col, justify="left" if col == "result" else "right", no_wrap=True)
    for r in rows:
        table.add_row(r["label"], r["result"], f"{r['distinct_states']:,}", str(r["depth"]),
                      f"{r['seconds']:.2f}", f"{r['states_per_second']:,}",
                      str(r["peak_memory_mb"]))
    console.print(table)
    by_label = {r["label"]: r for r in rows}
    for r in rows:
        plain = r["label"].removesuffix(" symmetry")
        if plain != r["label"] and plain in by_label:
            full = by_label[plain]
            console.print(f"symmetry saving, {full['label']}: {full['distinct_states']:,} -> "
                          f"{r['distinct_states']:,} states "
                          f"({full['distinct_states'] / max(r['distinct_states'], 1):.1f}x fewer)")


def report(console: Console, rows: list[dict[str, Any]], met: bool, target: str,
           key: str = "met") -> int:
    """Tell whether the benchmark met its `target`, print the rows as JSON with ``--json``, and
    give the exit status (0 when met)."""
    console.print(f"{'met' if met else 'MISSED'}: {target}")
    if "--json" in sys.argv:
        print(json.dumps({"runs": rows, key: met}))
    return 0 if met else 1


if __name__ == "__main__":
    print(json.dumps(run_one(*json.loads(sys.argv[1]))))

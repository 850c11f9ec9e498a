"""Checkpoint benchmark: what saving a search at level ends costs, and what resuming costs.

Not part of the test suite. Run it with

    python tests/benchmarks/bench_checkpoint.py            # Ignite, 1 restart, 1 baseline change
    python tests/benchmarks/bench_checkpoint.py --quick    # Ignite at its default scope

Three searches of one scope: without a checkpoint; saving at every level end (the worst case:
`partsafe check --checkpoint` saves every 600 s by default); and stopped at half depth with a
checkpoint, then resumed in the same process. It prints the seconds of each, the largest
checkpoint file and the longest save, and checks that the resumed search is the search in one go
(states, transitions, verdict).
"""

from __future__ import annotations

import json
import os
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.table import Table

from partsafe.checker.engine.bfs import Bounds, explore
from partsafe.checker.engine.checkpoint import Checkpoint
from partsafe.checker.protocols.catalog import get


class _Timed(Checkpoint):
    """A checkpoint that keeps the seconds and bytes of each save (the file and the edges beside
    it)."""

    def __post_init__(self) -> None:
        super().__post_init__()
        self.saves: list[tuple[float, int]] = []

    def save(self, signature: dict[str, Any], progress: dict[str, Any],
             body: dict[str, Any]) -> None:
        start = time.perf_counter()
        super().save(signature, progress, body)
        edges = sum(f.stat().st_size for f in self.edges.iterdir()) if self.edges.is_dir() else 0
        self.saves.append((time.perf_counter() - start, self.path.stat().st_size + edges))


def main() -> int:
    os.environ.setdefault("PYTHONHASHSEED", "1")  # one process: any fixed seed will do
    quick = "--quick" in sys.argv
    scope = {} if quick else {"baseline-changes": 1, "max-term": 1}
    entry = get("ignite-rebalance")
    console = Console(stderr=True)
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        start = time.perf_counter()
        plain = explore(entry.make("fixed", scope))
        rows.append(("no checkpoint", time.perf_counter() - start, 0, 0.0, 0))

        every = _Timed(Path(tmp) / "every.ck", every=0.0)
        start = time.perf_counter()
        saved = explore(entry.make("fixed", scope), checkpoint=every)
        rows.append(("a save at every level end", time.perf_counter() - start, len(every.saves),
                     max(s for s, _ in every.saves), max(b for _, b in every.saves)))

        half = _Timed(Path(tmp) / "half.ck", every=1e9)
        start = time.perf_counter()
        explore(entry.make("fixed", scope), bounds=Bounds(max_depth=plain.depth // 2),
                checkpoint=half)
        first = time.perf_counter() - start
        start = time.perf_counter()
        resumed = explore(entry.make("fixed", scope), checkpoint=half)
        rows.append((f"stopped at depth {plain.depth // 2}, then resumed",
                     first + time.perf_counter() - start, len(half.saves),
                     max(s for s, _ in half.saves), max(b for _, b in half.saves)))

    table = Table(title=f"ignite-rebalance {scope or 'default scope'}: "
                        f"{plain.distinct_states:,} states, depth {plain.depth}")
    for col in ("search", "seconds", "saves", "longest save (s)", "largest (MB, with edges)"):
        table.add_column(col, justify="left" if col == "search" else "right")
    for label, secs, n, longest, size in rows:
        table.add_row(label, f"{secs:.1f}", str(n), f"{longest:.2f}", f"{size / 2**20:.1f}")
    console.print(table)
    same = all((r.distinct_states, r.transitions, r.result) ==
               (plain.distinct_states, plain.transitions, plain.result)
               for r in (saved, resumed))
    console.print(f"{'met' if same else 'MISSED'}: the saved and the resumed searches are the "
                  "search in one go")
    if "--json" in sys.argv:
        print(json.dumps({"states": plain.distinct_states, "runs": [
            {"search": label, "seconds": round(secs, 2), "saves": n,
             "longest_save_seconds": round(longest, 3), "largest_file_bytes": size}
            for label, secs, n, longest, size in rows], "same": same}))
    return 0 if same else 1


if __name__ == "__main__":
    sys.exit(main())

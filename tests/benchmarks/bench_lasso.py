"""Lasso benchmark: the end of a search with lasso properties, on a graph of a large search's size.

Not part of the test suite. Run it with

    python tests/benchmarks/bench_lasso.py                     # 100 levels of 200,000 states
    python tests/benchmarks/bench_lasso.py --levels 50 --width 20000 --json

A search with a lasso property (the Ignite model's IGN-FINITE) keeps every edge, and after a
complete search looks for the cycles among them (`lassos.cyclic_core`): each state named by its
slot in the visited table, then the edges out of states nothing enters and into states nothing
leaves peeled off, a pass per layer. A breadth-first search of a protocol that terminates has an
acyclic graph, and its every edge must be peeled; the passes are as many as half its longest
path. This builds such a graph, levels of states with 4.6 edges a state to the next level (the
Ignite searches' ratio), spills its edges as a search does (`EdgeLog`), and times the visited
table's slots and the peeling, with the process's peak memory. The target: no edge survives, and
the peak is the visited table and at most 32 bytes an edge (the edges of a search of a hundred
million states must fit beside its table).
"""

from __future__ import annotations

import argparse
import json
import resource
import sys
import time

import numpy as np
from rich.console import Console

from partsafe.checker.engine import lassos
from partsafe.checker.engine.edges import EdgeLog
from partsafe.checker.engine.fingerprints import MASK64, MIX, FingerprintTable

#: edges a state, as in the Ignite searches (transitions over distinct states)
OUT = 4.6
#: the memory the end of a search may take an edge, beside the visited table (and 256 MB of
#: interpreter and libraries)
BYTES_PER_EDGE = 32


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--levels", type=int, default=100)
    parser.add_argument("--width", type=int, default=200_000)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    console = Console(stderr=True)
    n = args.levels * args.width
    fps = (np.arange(1, n + 1, dtype=np.uint64) * np.uint64(MIX)) & np.uint64(MASK64)
    fps |= np.uint64(1)  # never 0, the empty slot
    table = FingerprintTable()
    insert = table.insert
    for fp in fps.tolist():
        insert(fp, 1)
    rng = np.random.default_rng(1)
    log = EdgeLog()
    per_level = int(OUT * args.width)
    for level in range(args.levels - 1):
        base = level * args.width
        src = fps[rng.integers(base, base + args.width, per_level)]
        dst = fps[rng.integers(base + args.width, base + 2 * args.width, per_level)]
        log.src.frombytes(src.tobytes())
        log.dst.frombytes(dst.tobytes())
        log.marks.frombytes(bytes(per_level))
        log.maybe_spill()
    edges = len(log)
    console.print(f"{n:,} states, {edges:,} edges ({log.on_disk:,} on disk); peeling ...")
    start = time.perf_counter()
    core = lassos.cyclic_core(table, log)
    seconds = time.perf_counter() - start
    log.close()
    peak_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    met = not core[0] and peak_mb * 2**20 <= table.nbytes + BYTES_PER_EDGE * edges + 2**28
    doc = {"states": n, "edges": edges, "levels": args.levels, "seconds": round(seconds, 1),
           "ns_per_edge": round(seconds / max(edges, 1) * 1e9, 1), "peak_mb": round(peak_mb),
           "cyclic_edges": len(core[0]), "met": met}
    console.print(f"{seconds:.1f} s, {doc['ns_per_edge']} ns an edge, peak {peak_mb:,.0f} MB: "
                  f"{'met' if met else 'MISSED'}: no edge survives, and the peak is the table "
                  f"and at most {BYTES_PER_EDGE} bytes an edge")
    if args.json:
        print(json.dumps(doc))
    return 0 if met else 1


if __name__ == "__main__":
    sys.exit(main())

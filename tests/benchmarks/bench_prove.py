"""`partsafe prove` benchmark: per spec, the verdict, the seconds, the solver's memory, and for
bounded model checking the depth reached; then each flaw's counterexample.

Not part of the test suite. Run it with

    python tests/benchmarks/bench_prove.py                  # every model, fixed, and every variant
    python tests/benchmarks/bench_prove.py --model membership --depth 4

Targets (docs/prove.md): every inductive query under 60 s; each variant's counterexample in
under 5 minutes. Memory is the process's peak resident set after each spec (the Z3 solvers live
in it), so it only grows along the run.
"""

from __future__ import annotations

import argparse
import json
import resource
import sys
import time
from typing import Any

from rich.console import Console
from rich.table import Table

from partsafe.models.prove import MODELS, module, prove_model


def peak_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def run(models: list[str], depth: int | None, variants: bool) -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = []
    for name in models:
        mod = module(name)
        for variant, breaks in mod.VARIANTS.items():
            if variant != "fixed" and not variants:
                continue
            specs = None if breaks is None else [breaks]
            started = time.perf_counter()
            verdict = prove_model(name, variant, depth, specs, proofs=variant == "fixed")
            for s in verdict.specs:
                rows.append({"model": name, "variant": variant, "spec": s.spec,
                             "verdict": s.verdict, "depth": s.depth, "seconds": round(s.seconds, 2),
                             "slowest_query": round(s.slowest, 2), "peak_mb": round(peak_mb())})
            print(f"{name} {variant}: {time.perf_counter() - started:.1f} s", file=sys.stderr)
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", action="append", choices=sorted(MODELS))
    parser.add_argument("--depth", type=int)
    parser.add_argument("--fixed-only", action="store_true")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    rows = run(args.model or list(MODELS), args.depth, not args.fixed_only)
    if args.json:
        print(json.dumps(rows, indent=2))
        return
    table = Table(title="partsafe prove benchmark")
    for col in rows[0] if rows else ():
        table.add_column(col)
    for row in rows:
        table.add_row(*(str(v) for v in row.values()))
    Console().print(table)


if __name__ == "__main__":
    main()

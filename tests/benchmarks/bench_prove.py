"""`partsafe prove` benchmark: per spec, the verdict, the seconds, the solver's memory, and for
bounded model checking the depth reached; then each flaw's counterexample.

Not part of the test suite. Run it with

    python tests/benchmarks/bench_prove.py                  # every model, fixed, and every variant
    python tests/benchmarks/bench_prove.py --model membership --depth 4
    python tests/benchmarks/bench_prove.py --stale-master-list  # 002's third problem, replayed

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

from partsafe.checker import artifact
from partsafe.checker.symbolic import to_artifact
from partsafe.models import membership
from partsafe.models.bmc import bmc
from partsafe.models.induction import prove
from partsafe.models.prove import MODELS, module, prove_model


def peak_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


#: each flaw's bounded search, as tests/models runs it: (model, variant, spec, sizes, depth);
#: hz38-stale-master-list has its own run (`stale_master_list`)
FLAWS: tuple[tuple[str, str, str, dict[str, int], int], ...] = (
    ("membership", "hz38-unordered-members", "MEM-VIEW-ORDER", {}, 3),
    ("migration", "hz37-local-promotion", "PT-MASTER-ONLY", {}, 3),
    ("migration", "hz37-stale-master-table", "PT-MOST-RECENT", {"Partition": 3}, 5),
    ("migration", "hz37-independent-commit", "MIG-COMMIT-ORDER", {}, 6),
    ("migration", "fail-plus-one-split", "PT-MASTER-ONLY",
     {"Member": 2, "Partition": 1, "Migration": 1}, 6),
    ("parallel", "hz40-global-order-parallel", "PT-MASTER-ONLY", {}, 4),
    ("ignite-rebalance", "ig-restart-keeps-peer", "IGN-RESTART", {}, 4),
    ("ignite-rebalance", "ig-restart-keeps-peer", "IGN-ONE-LEADER", {}, 7),
)
#: the design questions proved for any size: (model, question, spec)
QUESTIONS: tuple[tuple[str, str, str], ...] = (
    ("migration", "fail-plus-two-split", "PT-MASTER-ONLY"),
    ("migration", "fail-plus-one", "PT-MASTER-ONLY"),
)


def run(models: list[str], depth: int | None, variants: bool) -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = []
    for name in models:
        started = time.perf_counter()
        verdict = prove_model(name, "fixed", depth)
        for s in verdict.specs:
            rows.append({"model": name, "variant": "fixed", "spec": s.spec,
                         "verdict": s.verdict, "depth": s.depth, "seconds": round(s.seconds, 2),
                         "slowest_query": round(s.slowest, 2), "peak_mb": round(peak_mb())})
        print(f"{name} fixed: {time.perf_counter() - started:.1f} s", file=sys.stderr)
    if not variants:
        return rows
    for name, variant, spec, sizes, flaw_depth in FLAWS:
        if name not in models:
            continue
        system = module(name).system(variant)
        found = bmc(system, [spec], {**system.sizes, **sizes}, flaw_depth)[spec]
        rows.append({"model": name, "variant": variant, "spec": spec, "verdict": found.verdict,
                     "depth": found.depth, "seconds": round(found.seconds, 2),
                     "slowest_query": "", "peak_mb": round(peak_mb())})
        print(f"{name} {variant} {spec}: {found.seconds:.1f} s", file=sys.stderr)
    for name, question, spec in QUESTIONS:
        if name not in models:
            continue
        proof = prove(module(name).system(question), spec)
        rows.append({"model": name, "variant": question, "spec": spec,
                     "verdict": proof.verdict + (" (any size)" if proof.verdict == "proved"
                                                 else ""),
                     "depth": "", "seconds": round(proof.seconds, 2),
                     "slowest_query": round(proof.slowest, 2), "peak_mb": round(peak_mb())})
        print(f"{name} {question} {spec}: {proof.seconds:.1f} s", file=sys.stderr)
    return rows


def stale_master_list() -> dict[str, Any]:
    """hz38-stale-master-list (002 Background, problem 3) at its zoo scope (no false suspicion):
    one bounded query for a quiescent state breaking MEM-VIEW-AGREEMENT in at most 11 steps (a
    join the master published and one member applied, the master's crash, a claim by a member
    that missed the join, published at its own version + 1), replayed on the reference
    implementation. Depth by depth, the 10 shorter depths would each have to be refuted first."""
    variant, spec = "hz38-stale-master-list", "MEM-VIEW-AGREEMENT"
    started = time.perf_counter()
    found = bmc(membership.system(variant), [spec], {}, 11, budgets={"suspicions": 0},
                first=11)[spec]
    assert found.verdict == "counterexample", found
    seconds = time.perf_counter() - started
    _, trace, message = artifact.replay(to_artifact("membership", variant, spec, found.trace))
    assert message is not None, "the run does not break the spec on the reference implementation"
    return {"variant": variant, "spec": spec, "depth": found.depth, "seconds": round(seconds, 1),
            "steps": [s["action"] for s in found.trace[1:]], "explorer_steps": len(trace.steps),
            "replayed": message, "peak_mb": round(peak_mb())}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", action="append", choices=sorted(MODELS))
    parser.add_argument("--depth", type=int)
    parser.add_argument("--fixed-only", action="store_true")
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--stale-master-list", action="store_true",
                        help="only hz38-stale-master-list's counterexample, found and replayed")
    args = parser.parse_args()
    if args.stale_master_list:
        print(json.dumps(stale_master_list(), indent=2))
        return
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

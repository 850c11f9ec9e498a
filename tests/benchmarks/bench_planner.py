"""Planner benchmark: the exhaustive check at 1 to 6 indices and the Z3 cross-check at 4.

Not part of the test suite. Run it with `python tests/benchmarks/bench_planner.py`; it prints
pairs checked, violating pairs, seconds, Z3 seconds per query and the plan-length comparison.
"""

from __future__ import annotations

import statistics
import sys
import time

from partsafe.checker.planner.check import check_planner, cross_check


def main() -> int:
    for n in (4, 5, 6):
        r = check_planner(n)
        print(f"planner, 1 to {n} indices: {r.pairs_checked:,} pairs "
              f"({r.domain_pairs:,} Hazelcast inputs), {r.seconds:.1f} s, "
              f"violating pairs {r.violating_pairs}, among Hazelcast inputs "
              f"{r.domain_violating_pairs}, unexpected {r.unexpected}")
    naive = check_planner(4, "hz37-naive-order")
    print(f"hz37-naive-order, 1 to 4 indices: violating pairs {naive.violating_pairs}")
    for n in (3, 4):
        start = time.perf_counter()
        c = cross_check(n)
        print(f"cross-check, {n} indices: {c.pairs:,} pairs in {time.perf_counter() - start:.1f} s;"
              f" planner safe {c.safe_and_exists:,}, fails where a safe plan exists "
              f"{c.unsafe_but_exists:,} ({c.domain_unsafe_but_exists} Hazelcast inputs), "
              f"no safe plan {c.unsafe_and_none + c.safe_but_none}; planner longer than the "
              f"shortest by {dict(sorted(c.longer_by.items()))}; Z3 per query mean "
              f"{statistics.mean(c.z3_seconds) * 1000:.1f} ms, max "
              f"{max(c.z3_seconds) * 1000:.0f} ms")
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""``--engine auto``: the Spark engine where it is the faster of the two, from the rates
tests/benchmarks/bench_spark.py measured.
"""

from __future__ import annotations

import os
import re

#: `--engine auto` on a Spark cluster: Spark from this many bytes of input
CLUSTER_THRESHOLD = 512 << 20
#: what `--engine auto` on a local master rests on, measured by tests/benchmarks/bench_spark.py
#: (2 GB, 20 members, 13.2 million lines, local[*] on 2 cores): the local engine's lines per
#: second, the Spark engine's per core (from the quarter and the full input, so without its
#: fixed costs), those fixed costs in seconds (20.5 s of stages and Python workers, 5.4 s to
#: start the session), bytes per line
LOCAL_LINES_PER_SECOND = 680_000
SPARK_LINES_PER_SECOND_PER_CORE = 102_000
SPARK_FIXED_SECONDS = 26.0
BYTES_PER_LINE = 150


def auto_engine(size: int, master: str | None = None) -> str:
    """`--engine auto`'s choice for `size` bytes of input: ``"spark"`` or ``"local"``.

    Under ``spark-submit``, Spark. On a cluster (`master`, else ``$SPARK_MASTER``, is not
    ``local``), Spark from `CLUSTER_THRESHOLD`: the executors do the work and the driver's
    memory stays flat. On a local master, Spark where the benchmark's figures say it is the
    faster of the two: its cores must together outrun the local engine, and the input must be
    big enough to repay Spark's fixed costs (from about 56 GB on 7 cores, 16 GB on 8, 4.5 GB
    on 16; never on 6 cores or fewer)."""
    if "PYSPARK_GATEWAY_PORT" in os.environ:  # spark-submit started the JVM for us
        return "spark"
    master = master or os.environ.get("SPARK_MASTER", "local[*]")
    if not master.startswith("local"):
        return "spark" if size >= CLUSTER_THRESHOLD else "local"
    cores = _local_cores(master)
    spark_rate = SPARK_LINES_PER_SECOND_PER_CORE * cores
    if spark_rate <= LOCAL_LINES_PER_SECOND:
        return "local"
    lines = size / BYTES_PER_LINE
    saved = lines / LOCAL_LINES_PER_SECOND - lines / spark_rate
    return "spark" if saved > SPARK_FIXED_SECONDS else "local"


def _local_cores(master: str) -> int:
    """The worker threads of a ``local``, ``local[N]``, ``local[*]`` or ``local[N, F]`` master."""
    m = re.fullmatch(r"local(?:\[(\*|\d+)(?:,\s*\d+)?\])?", master.strip())
    if m is None or m.group(1) == "*":
        return os.cpu_count() or 1
    return int(m.group(1) or 1)

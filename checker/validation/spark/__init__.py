"""The Spark engine: `partsafe validate --engine spark`, the same verdict as the local engine on
logs too big for one process: the same monitors of `specs/`, run per key over shards.

The plan, stage by stage (docs/validation.md, "On Spark"; the local engine is
`partsafe.checker.validation.local`; both run the engine-agnostic core of
`partsafe.checker.validation.shards`):

1. Lines. The files are read as text by Spark (plain or ``.gz``), each line with its file, the
   input split it came from (``_metadata.file_block_start``) and a row id. A JVM aggregation counts
   each split's lines; a split's lines are numbered from the counts of the splits before it, so
   line numbers are exact across splits.
2. The sieve, on the JVM. `partsafe.traces.sieve.column` keeps the lines the scanner needs (those
   with a keyword, and those that may belong to their records); the others are only counted. No
   Python runs before this filter.
3. Scanning, per file. The needed lines of a file go to one Python task, in line order (a shuffle
   of the needed lines only), where `Scanner.scan_needed` assembles multi-line records and parses
   them with the same grammar; a record that straddled two input splits is whole again here. Each
   event gets its order key (`shards.stamped`) and one route per monitor part that observes it.
4. Monitors, per key. Routes are grouped by (part, key): per member and incarnation, per member
   and partition, per master incarnation (views), per master and version, per requester; each
   group runs one `Shard` over its events sorted by order key. A crashed or restarted member's
   routed event reaches the shards of its key and those its member has events in before and
   after it: a join, not a collect.
   Warnings and the summary are per member (a group-by; the events whose member is unknown are
   one group, which gives warnings and no tally); distinct views are counted by Spark.
5. The report. Only results reach the driver: per-file line counts, violations, malformed lines,
   warnings and one tally per member, never the lines or the events. ``--output DIR`` writes the
   events and the violations as Parquet.

The modules:

- `auto`: ``--engine auto``'s choice between the engines, from measured rates;
- `runtime`: the Spark session (its Python interpreters, its quiet JVM), shipping the package to a
  cluster's executors, and Spark's failures as one-line messages;
- `files`: the inputs (files, directories, globs, URIs), and stage 1 on the driver: numbering each
  input split's lines, each input's status in the report;
- `workers`: stages 3 and 4 in Spark's Python workers (scanning, shards, per-member warnings and
  tallies) and the schemas of the rows they write;
- `pipeline`: `validate_spark`, the stages as Spark jobs and the report they give.
"""

from __future__ import annotations

from partsafe.checker.validation.spark.auto import (
    BYTES_PER_LINE,
    CLUSTER_THRESHOLD,
    LOCAL_LINES_PER_SECOND,
    SPARK_FIXED_SECONDS,
    SPARK_LINES_PER_SECOND_PER_CORE,
    auto_engine,
)
from partsafe.checker.validation.spark.files import Input, inputs
from partsafe.checker.validation.spark.pipeline import validate_spark
from partsafe.checker.validation.spark.runtime import (
    SparkFailed,
    SparkUnavailable,
    pythons_for,
    session,
)

__all__ = [
    "BYTES_PER_LINE",
    "CLUSTER_THRESHOLD",
    "LOCAL_LINES_PER_SECOND",
    "SPARK_FIXED_SECONDS",
    "SPARK_LINES_PER_SECOND_PER_CORE",
    "Input",
    "SparkFailed",
    "SparkUnavailable",
    "auto_engine",
    "inputs",
    "pythons_for",
    "session",
    "validate_spark",
]

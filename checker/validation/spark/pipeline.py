"""`validate_spark`: the stages of the Spark engine as Spark jobs, and the report they give
(stage 5: only results reach the driver).
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from partsafe.checker.validation.local import (
    Report,
    declared_specs,
    merged_config,
    notes_as_warnings,
    summarize,
)
from partsafe.checker.validation.shards import (
    DEFAULT_STUCK_MS,
    Notice,
    Tally,
    Violation,
    judged_specs,
)
from partsafe.checker.validation.skew import DEFAULT_MAX_SKEW_MS
from partsafe.checker.validation.spark.files import Input, inputs, number_splits, statuses
from partsafe.checker.validation.spark.runtime import SparkFailed, failure_reason, session
from partsafe.checker.validation.spark.workers import (
    MEMBERS,
    SCANNED,
    VIOLATIONS,
    file_forms,
    run_groups,
    run_members,
    run_shards,
    scan_batches,
)
from partsafe.traces.events import (
    UNKNOWN_MEMBER,
    AssignmentsChanged,
    PartitionLost,
    Quiescent,
    Source,
)
from partsafe.traces.scanner import Accounting, FileTally, Malformed, Note

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession


def validate_spark(paths: Sequence[str], *, fmt: str = "auto",
                   stuck_ms: int = DEFAULT_STUCK_MS, max_skew_ms: int = DEFAULT_MAX_SKEW_MS,
                   config: dict[str, Any] | None = None, master: str | None = None,
                   output: str | None = None, progress: bool = False,
                   spark: SparkSession | None = None, verbose: bool = False) -> Report:
    """Validate `paths` on Spark: the report `validate` gives, computed by the stages of
    `partsafe.checker.validation.spark`. Raises InputError for a path that cannot be read as a
    log, SparkUnavailable when Spark cannot start, SparkFailed when a job fails."""
    t0 = time.perf_counter()
    given = inputs(paths, fmt)
    files = [i for i in given if i.skipped is None]
    spark = spark or session(master, verbose=verbose)
    try:
        report = (_pipeline(spark, files, fmt, stuck_ms, max_skew_ms, config or {}, output,
                             progress) if files
                  else Report([], Accounting(), type_counts={}))
    except Exception as exc:
        reason = failure_reason(exc)
        if reason is None:
            raise
        raise SparkFailed(f"the Spark engine failed: {reason}") from None
    report.inputs = statuses(given, report.accounting.files)
    report.seconds = time.perf_counter() - t0
    report.engine, report.master = "spark", spark.sparkContext.master
    return report


def _pipeline(spark: SparkSession, files: list[Input], fmt: str, stuck_ms: int, max_skew_ms: int,
              config: dict[str, Any],
              output: str | None, progress: bool) -> Report:
    """The stages of the package's docstring, on `spark`."""
    from pyspark.sql import functions as F

    from partsafe.traces import sieve

    with _Progress(spark, progress):
        raw = spark.read.option("lineSep", "\n").text([i.uri for i in files])
        lines = raw.select("value", F.col("_metadata.file_path").alias("path"),
                           F.col("_metadata.file_block_start").alias("block"),
                           F.monotonically_increasing_id().alias("id"))
        # stage 1: each input split's lines and first row id (one small row per split)
        counts = lines.groupBy("path", "block").agg(F.count("*").alias("n"),
                                                    F.min("id").alias("id0")).collect()
        files, splits, totals = number_splits(files, counts, fmt)
        bases = spark.createDataFrame(splits, "path string, block long, file int, base long")
        jsonl = sorted({p for p, _, n, _ in splits if files[n].fmt == "jsonl"})
        # stage 2: the sieve, on the JVM (event JSON Lines are needed whole); a line's number
        # is its split's base plus its row id
        needed = (lines.where(F.col("path").isin(jsonl) | sieve.column(F.col("value")))
                  .join(F.broadcast(bases), ["path", "block"])
                  .select("file", (F.col("id") + F.col("base")).alias("line"),
                          F.col("value").cast("binary").alias("value")))
        # stage 3: scanning, one Python task per file
        names = [(i.name, i.fmt) for i in files]
        scanned = (needed.repartition(max(1, min(len(files), 64)), "file")
                   .sortWithinPartitions("file", "line")
                   .mapInArrow(scan_batches(names), SCANNED)
                   .persist())
        try:
            report = _report(spark, scanned, files, totals, stuck_ms, max_skew_ms, config)
            if output:
                _write(scanned, report, output)
        finally:
            scanned.unpersist()
    return report


def _report(spark: SparkSession, scanned: DataFrame, files: list[Input],
            totals: dict[int, int], stuck_ms: int, max_skew_ms: int,
            config: dict[str, Any]) -> Report:
    """The report from the scanned rows: accounting, violations, warnings, the summary."""
    from pyspark.sql import functions as F

    names = [i.name for i in files]
    acc = Accounting()
    acc.lines = sum(totals.values())
    acc.files = [FileTally(name, totals.get(n, 0), fmt=i.fmt) for n, (name, i)
                 in enumerate(zip(names, files, strict=True))]
    small = scanned.where(F.col("kind").isin("parsed", "malformed", "note", "declared")).collect()
    notes: list[Note] = []
    declared: list[tuple[str, ...] | None] = [None] * len(names)
    for r in small:
        if r["kind"] == "declared":
            head = json.loads(r["json"])
            if head["specs"] is not None:
                declared[r["file"]] = tuple(head["specs"])
            acc.files[r["file"]].config = head["config"] or {}
        elif r["kind"] == "parsed":
            acc.parsed_lines += r["line"]
        elif r["kind"] == "malformed":
            acc.malformed.append(Malformed(names[r["file"]], r["line"], r["text"]))
            acc.files[r["file"]].malformed += 1
        else:
            notes.append(Note(names[r["file"]], r["line"], r["member"] or "", r["text"]))
    for n, name in enumerate(names):
        if totals.get(n, 0) == 0:
            notes.append(Note(name, 0, "", "empty file"))
    order = {name: n for n, name in enumerate(names)}
    acc.malformed.sort(key=lambda m: (order[m.file], m.line))
    acc.notes = notes
    events = scanned.where(F.col("kind") == "event")
    unknown = 0
    type_counts: dict[str, int] = {}
    for r in events.groupBy("file", "type").agg(F.count("*").alias("n"), F.count(
            F.when((F.col("member") == UNKNOWN_MEMBER) & (F.col("type") != Quiescent.TYPE),
                   True)).alias("unknown"), F.count(
            F.when(F.col("member") != UNKNOWN_MEMBER, True)).alias("known")).collect():
        acc.files[r["file"]].events += r["n"]
        acc.files[r["file"]].without_member += r["unknown"]
        unknown += r["unknown"]
        type_counts[r["type"]] = type_counts.get(r["type"], 0) + r["known"]
    acc.events = sum(t.events for t in acc.files)
    kinds = file_forms([(i.name, i.fmt) for i in files])
    for n, tally in enumerate(acc.files):
        tally.declared = declared[n]
    report = Report(names, acc, events_without_member=unknown, kinds=kinds,
                    declared=[declared_specs(t) for t in acc.files],
                    config=merged_config(acc.files, config), max_skew_ms=max_skew_ms)
    report.type_counts = {t: n for t, n in type_counts.items() if n}
    report.violations = _violations(scanned, judged_specs(kinds), report.config, max_skew_ms)
    report.warnings = notes_as_warnings(notes, order)
    tallies: dict[str, Tally] = {}
    found: list[tuple[tuple[int, int, int, int], Notice]] = []
    # of the events no member can be named for, only lost partitions give warnings (`warnings_of`)
    per_member = (events.where((F.col("member") != UNKNOWN_MEMBER)
                               | (F.col("type") == PartitionLost.TYPE))
                  .groupBy("member").applyInArrow(run_members(stuck_ms), MEMBERS))
    # IGN-CONVERGE's warnings, per raft group (`partsafe.checker.validation.ignite`)
    per_group = (events.where(F.col("type") == AssignmentsChanged.TYPE)
                 .withColumn("group", F.coalesce(F.get_json_object("json", "$.group"),
                                                 F.lit("")))
                 .groupBy("group").applyInArrow(run_groups(), MEMBERS))
    for r in [*per_member.collect(), *per_group.collect()]:
        if r["kind"] == "tally":
            t = Tally(r["starts"], set(r["uuids"]))
            t.migrations.update(json.loads(r["migrations"]))
            tallies[r["member"]] = t
        else:
            found.append(((r["t"], r["fi"], r["first"], r["pos"]), Notice(
                r["kind"], r["member"], _sources(r), r["message"])))
    report.warnings += [n for _, n in sorted(found, key=lambda pair: pair[0])]
    views = events.where(F.col("text").isNotNull()).select("text").distinct().count()
    summarize(report, tallies, views)
    return report


def _sources(r: Any) -> tuple[Source, ...]:
    """The sources (file, line) of a VIOLATIONS or MEMBERS row."""
    return tuple(Source(f, n) for f, n in zip(r["files"], r["lines"], strict=True))


def _violations(scanned: DataFrame, specs: Sequence[str], config: dict[str, Any],
                max_skew_ms: int) -> list[Violation]:
    """Stage 4's shards: the routes grouped by (part, key), each group one shard, the
    violations sorted by where they were raised."""
    from pyspark.sql import functions as F

    routed = scanned.where(F.col("kind") == "route")
    keyed = routed.where(~F.col("routed"))
    # a routed event goes to the shards whose key names its member ...
    named = (keyed.select("part", "key", F.explode(F.split("key", "\x1f")).alias("member"))
             .where(F.col("member") != "").distinct())
    # ... and to those its member has events in before and after it
    spans = (keyed.groupBy("part", "key", "member")
             .agg(F.min(F.struct("t", "fi", "first", "pos")).alias("lo"),
                  F.max(F.struct("t", "fi", "first", "pos")).alias("hi")))
    r = routed.where(F.col("routed")).drop("key").alias("r")
    at = F.struct("r.t", "r.fi", "r.first", "r.pos")
    to_named = r.join(named.alias("n"), ["part", "member"]).select("r.*", "n.key")
    to_spans = (r.join(spans.alias("s"), ["part", "member"])
                .where((F.col("s.lo") < at) & (at < F.col("s.hi")))
                .select("r.*", "s.key"))
    delivered = to_named.unionByName(to_spans).dropDuplicates(
        ["part", "key", "fi", "first", "pos"])
    shards = keyed.unionByName(delivered.select(*keyed.columns))
    rows = shards.groupBy("part", "key").applyInArrow(run_shards(specs, config, max_skew_ms),
                                                        VIOLATIONS)
    found = [Violation(x["spec"], x["member"], _sources(x), x["message"],
                       (x["t"], x["fi"], x["first"], x["pos"]), x["part"], x["key"],
                       x["certainty"], tuple(json.loads(x["order"])), x["note"])
             for x in rows.collect()]
    return sorted(found, key=lambda v: (v.at, v.part, v.message))


def _write(scanned: DataFrame, report: Report, output: str) -> None:
    """``--output DIR``: the events and the violations as Parquet, and the report as JSON."""
    from pyspark.sql import functions as F

    out = Path(output)
    names = scanned.sparkSession.createDataFrame(
        [(n, name) for n, name in enumerate(report.files)], "file int, file_name string")
    (scanned.where(F.col("kind") == "event").join(F.broadcast(names), "file")
     .select(F.col("file_name").alias("file"), "line", "member", "type",
             F.col("t").alias("timestamp"), F.col("json").alias("event"))
     .write.mode("overwrite").parquet(str(out / "events")))
    rows = [(v.spec, v.member, v.message, [s.file for s in v.sources],
             [s.line for s in v.sources]) for v in report.violations]
    (scanned.sparkSession.createDataFrame(
        rows, "spec string, member string, message string, files array<string>, "
              "lines array<long>")
     .write.mode("overwrite").parquet(str(out / "violations")))
    (out / "report.json").write_text(json.dumps(report.as_dict(), indent=1))


class _Progress:
    """Spark's stages as a progress line on stderr while the job runs."""

    def __init__(self, spark: SparkSession, enabled: bool) -> None:
        self.tracker = spark.sparkContext.statusTracker()
        self.enabled = enabled
        self.stop = threading.Event()
        self.thread: threading.Thread | None = None

    def __enter__(self) -> _Progress:
        if self.enabled:
            self.thread = threading.Thread(target=self._run, daemon=True)
            self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop.set()
        if self.thread is not None:
            self.thread.join()

    def _run(self) -> None:
        from rich.console import Console
        from rich.live import Live
        from rich.text import Text

        console = Console(stderr=True)
        with Live(Text(""), console=console, transient=True, refresh_per_second=4) as live:
            while not self.stop.wait(0.25):
                parts_: list[str] = []
                for sid in self.tracker.getActiveStageIds():
                    info = self.tracker.getStageInfo(sid)
                    if info is not None:
                        parts_.append(f"stage {sid}: {info.numCompletedTasks}/"
                                      f"{info.numTasks} tasks")
                live.update(Text("spark " + ("; ".join(parts_) or "planning ...")))

"""The Spark engine: `partsafe validate --engine spark`, the same verdict as the local engine on
logs too big for one process (DESIGN.md, "One set of invariants, three ways to check them").

The plan, stage by stage (the local engine is `partsafe.checker.validate.local`; both run the
engine-agnostic core of `partsafe.checker.validate.shards`):

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
"""

from __future__ import annotations

import json
import os
import re
import sys
import tempfile
import threading
import time
import zipfile
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import unquote, urlparse

from partsafe.checker.validate.local import (
    SKIPPED,
    FileStatus,
    Report,
    file_status,
    notes_as_warnings,
    summarize,
)
from partsafe.checker.validate.shards import (
    DEFAULT_STUCK_MS,
    LOG_SPECS,
    Notice,
    Part,
    Tally,
    Violation,
    parts,
    routes,
    run_shard,
    stamped,
    view_key,
    warnings_of,
)
from partsafe.traces.events import (
    UNKNOWN_MEMBER,
    MemberListInstalled,
    PartitionLost,
    Source,
    dumps,
    from_dict,
)
from partsafe.traces.inputs import GZIP_MAGIC, Candidate, sniff
from partsafe.traces.scanner import (
    Accounting,
    FileTally,
    InputError,
    Malformed,
    Note,
    Scanner,
    expand,
)

if TYPE_CHECKING:
    import pyarrow as pa
    from pyspark.sql import DataFrame, SparkSession

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
_SCHEME = "://"


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


class SparkUnavailable(Exception):
    """Spark cannot be started here (no pyspark, no Java): the message says what is missing."""


class SparkFailed(Exception):
    """A Spark job of the pipeline failed (a file that cannot be read to its end, a worker that
    died, ...): the message is Spark's reason, without the stack traces."""


def _reason(exc: BaseException) -> str | None:
    """What a failed Spark job says went wrong, in a line; None if `exc` is not Spark's. A
    Python worker's exception is its traceback's last line; a JVM error is the innermost of
    Spark's own messages (an error class, with the file it was reading) and its root cause."""
    from py4j.protocol import Py4JError, Py4JJavaError
    from pyspark.errors.exceptions.captured import CapturedException, PythonException

    if isinstance(exc, PythonException):
        lines = [x.strip() for x in str(exc).splitlines() if x.strip()]
        return lines[-1] if lines else "a Python worker failed"
    if isinstance(exc, CapturedException | Py4JJavaError):
        chain: list[tuple[str, str]] = []
        java = exc.java_exception if isinstance(exc, Py4JJavaError) else exc._origin
        while java is not None and len(chain) < 32:
            message = str(java.getMessage() or "")
            chain.append((str(java.getClass().getName()), message.split(" SQLSTATE:")[0]))
            java = java.getCause()
        if not chain:
            return (str(exc).splitlines() or ["a Spark job failed"])[0]
        spark_says = [m for _, m in chain if m.startswith("[")]
        root = f"{chain[-1][0]}: {chain[-1][1]}"
        return f"{spark_says[-1].strip()} ({root})" if spark_says else root
    if isinstance(exc, Py4JError):
        return f"the Spark driver stopped answering ({str(exc).splitlines()[0]})"
    return None


# --- the session ----------------------------------------------------------------------------------

#: a Spark conf directory whose log4j2.properties turns Spark's logging off
_QUIET = Path(__file__).with_name("spark-conf")


def session(master: str | None = None, *, verbose: bool = False) -> SparkSession:
    """The Spark session partsafe runs in: the active one (under ``spark-submit``), else a new
    one on `master`, ``$SPARK_MASTER``, or embedded ``local[*]``, on the machine's Java, with
    the Python interpreters `pythons_for` names. Spark's own logging is off (a failed job
    becomes a `SparkFailed` message) unless `verbose`."""
    try:
        from pyspark import SparkConf
        from pyspark.sql import SparkSession
    except ImportError:
        raise SparkUnavailable("the Spark engine needs pyspark and pyarrow: "
                               "pip install 'partsafe[spark]'") from None
    active = SparkSession.getActiveSession()
    if active is not None:
        return active
    submitted = "PYSPARK_GATEWAY_PORT" in os.environ
    if submitted:
        # under spark-submit: its JVM runs, and its settings (master, name, ...) are the JVM's
        # system properties, which SparkConf reads once connected
        from pyspark import SparkContext

        SparkContext._ensure_initialized()
    conf = SparkConf()
    if master:
        conf.setMaster(master)
    elif not conf.contains("spark.master"):
        conf.setMaster(os.environ.get("SPARK_MASTER", "local[*]"))
    defaults = {
        "spark.app.name": "partsafe validate",
        "spark.ui.enabled": "false",
        "spark.ui.showConsoleProgress": "false",
        "spark.sql.shuffle.partitions": "16",
        "spark.sql.adaptive.enabled": "true",
        "spark.driver.memory": "2g",
        "spark.python.worker.reuse": "true",
    }
    for key, value in defaults.items():
        if not conf.contains(key):
            conf.set(key, value)
    pythons = pythons_for(conf.get("spark.master", ""), submitted=submitted)
    try:
        with _quiet_jvm(not verbose), _environment(pythons):
            spark = SparkSession.builder.config(conf=conf).getOrCreate()
    except Exception as exc:  # the JVM did not start: no Java, a wrong master
        raise SparkUnavailable(f"Spark did not start ({str(exc).splitlines()[0]}); it needs "
                               "Java 17 (java on PATH or JAVA_HOME)") from None
    if not submitted:  # spark-submit's logging is its user's
        spark.sparkContext.setLogLevel("INFO" if verbose else "OFF")
    if not spark.sparkContext.master.startswith("local"):
        _ship(spark)
    return spark


def pythons_for(master: str, *, submitted: bool) -> dict[str, str]:
    """The Python interpreters partsafe names for a Spark session on `master`, as the
    environment variables PySpark reads: PySpark 4 takes the Python workers' interpreter from
    ``PYSPARK_PYTHON`` alone, as the SparkContext is made, and ignores the
    ``spark.pyspark.python`` setting (spark-submit turns that setting into the variable before
    its driver starts). A variable already set is the user's and is left as it is; without one,
    Spark runs ``python3`` from PATH, which need not have partsafe (an environment run by its
    full path and not activated: pipx, cron, CI steps, IDEs).

    - ``PYSPARK_PYTHON``, the Python workers: on a local master (``local``, ``local[N]``,
      ``local-cluster[...]``, whose workers run on this machine) this interpreter,
      ``sys.executable``, which has partsafe however partsafe was started: its script by full
      path, ``python -m partsafe``, or spark-submit (the driver is then the Python spark-submit
      chose, and has partsafe since it runs it). On a cluster master (``spark://``, ``yarn``,
      ``k8s://``) Spark's own choice, as `_ship` expects: the executors run on other machines,
      where this interpreter's path need not exist, and the cluster names their Python
      (``PYSPARK_PYTHON``, spark-submit's ``spark.pyspark.python``, else ``python3``).
    - ``PYSPARK_DRIVER_PYTHON``, the Python the JVM itself starts on the driver's machine (to
      find Spark's home, for driver-side Python work): this interpreter when partsafe starts the
      JVM, whatever the master; under spark-submit the JVM runs already, with its environment.
    """
    wanted: dict[str, str] = {}
    if master.startswith("local"):
        wanted["PYSPARK_PYTHON"] = sys.executable
    if not submitted:
        wanted["PYSPARK_DRIVER_PYTHON"] = sys.executable
    return {k: v for k, v in wanted.items() if k not in os.environ}


@contextmanager
def _environment(variables: dict[str, str]) -> Iterator[None]:
    """`variables` in this process's environment while the Spark session is made (PySpark reads
    ``PYSPARK_PYTHON`` then, and the JVM takes its environment as it starts); this process's
    own environment is as it was afterwards."""
    saved = {k: os.environ.get(k) for k in variables}
    os.environ.update(variables)
    try:
        yield
    finally:
        for key, value in saved.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value


#: what the JVM itself says on starting, whatever the logging configuration (Spark's launcher
#: adds the incubating vector module)
_JVM_NOISE = (b"WARNING: Using incubator modules",)


@contextmanager
def _quiet_jvm(quiet: bool) -> Iterator[None]:
    """Start the JVM, when `quiet`, with the logging configuration of `_QUIET` (unless the user
    has a conf directory of their own) and on a stderr that passes its lines on to ours but
    `_JVM_NOISE`. The JVM takes both from this process as it starts: the environment variable
    and the file descriptor are swapped back once it runs."""
    if not quiet:
        yield
        return
    ours = "SPARK_CONF_DIR" not in os.environ
    if ours:
        os.environ["SPARK_CONF_DIR"] = str(_QUIET)
    read, write = os.pipe()
    saved = os.dup(2)
    os.dup2(write, 2)
    os.close(write)

    def forward() -> None:
        with os.fdopen(read, "rb") as lines, os.fdopen(os.dup(saved), "wb", 0) as out:
            for line in lines:
                if not line.startswith(_JVM_NOISE):
                    out.write(line)

    threading.Thread(target=forward, name="jvm-stderr", daemon=True).start()
    try:
        yield
    finally:
        os.dup2(saved, 2)
        os.close(saved)
        if ours:
            del os.environ["SPARK_CONF_DIR"]


def _ship(spark: SparkSession) -> None:
    """Send the partsafe package to the executors of a real cluster (its dependencies must be
    installed there: ``pip install partsafe``, or a packed environment given to spark-submit)."""
    root = Path(__file__).resolve().parents[2]  # the package `partsafe`
    out = Path(tempfile.mkdtemp(prefix="partsafe-")) / "partsafe.zip"
    with zipfile.ZipFile(out, "w") as z:
        for f in root.rglob("*"):
            if f.suffix in (".py", ".lark", ".properties") and "tests" not in f.parts:
                z.write(f, "partsafe/" + str(f.relative_to(root)))
    spark.sparkContext.addPyFile(str(out))


# --- inputs ---------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Input:
    """One file: how Spark names it, how reports name it, its layout, its size; or why it is
    skipped (`partsafe.traces.inputs`: the local engine skips the same files)."""

    uri: str
    name: str
    fmt: str
    size: int
    skipped: str | None = None


def inputs(paths: Sequence[str], fmt: str = "auto") -> list[Input]:
    """The files of `paths` (files, directories, globs; URIs with a scheme are Spark's to list),
    each looked at as the local engine looks at it (`partsafe.traces.inputs.sniff`: readable,
    text, a log), and compressed only as ``.gz``."""
    out: list[Input] = []
    local: list[str] = []
    for raw in paths:
        if _SCHEME in raw and not raw.startswith("file:"):
            out.append(Input(raw, raw, "log" if fmt == "auto" else fmt, 0))
        else:
            local.append(unquote(urlparse(raw).path) if raw.startswith("file:") else raw)
    for candidate in expand(local):
        out.append(_sniff(candidate, fmt))
    return out


def _sniff(candidate: Candidate, fmt: str) -> Input:
    path = candidate.path
    uri = path.resolve().as_uri()
    if candidate.skipped is not None:
        return Input(uri, str(path), "log", 0, candidate.skipped)
    head = sniff(path, fmt, candidate.explicit)
    if head.skipped is not None:
        return Input(uri, str(path), head.fmt, 0, head.skipped)
    with path.open("rb") as f:
        compressed = f.read(3) == GZIP_MAGIC
    if compressed != path.name.endswith(".gz"):
        raise InputError(
            f"{path}: {'gzip data without' if compressed else 'not gzip data, with'} a .gz name; "
            "Spark decompresses by the name: rename it, or use --engine local")
    return Input(uri, str(path), head.fmt, path.stat().st_size)


# --- stage 3: scanning, in the Python workers -------------------------------------------------

#: the rows the scanning stage writes, one schema for every kind of row
SCANNED = ("kind string, file int, line long, member string, type string, t long, fi int, "
           "first long, pos long, part int, key string, routed boolean, json string, "
           "text string")


def _scan_batches(files: list[tuple[str, str]], specs: Sequence[str]
                  ) -> Callable[[Iterator[pa.RecordBatch]], Iterator[pa.RecordBatch]]:
    """The mapInArrow function of stage 3: needed lines (file, line, value), sorted by file and
    line, to scanned rows."""

    def scan(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:

        ps = parts(specs)
        by_type: dict[str, list[Part]] = {}
        for p in ps:
            for kind in p.monitor.observes:
                by_type.setdefault(kind, []).append(p)
        out = _Rows()
        current: int | None = None
        pending: list[tuple[int, bytes]] = []

        def flush(index: int, lines: list[tuple[int, bytes]]) -> Iterator[pa.RecordBatch]:
            name, fmt = files[index]
            scanner = Scanner()
            events = scanner.scan_needed(name, lines, fmt)
            for (t, fi, first, pos), ev in stamped(index, events):
                text = dumps(ev)
                view = view_key(ev) if isinstance(ev, MemberListInstalled) else None
                out.add("event", index, ev.source.line if ev.source else 0, ev.member, ev.TYPE,
                        t, fi, first, pos, None, None, None, text, view)
                for p in by_type.get(ev.TYPE, ()):
                    route = routes(p, ev)
                    if route is not None:
                        out.add("route", index, 0, ev.member, ev.TYPE, t, fi, first, pos,
                                p.index, route[0], route[1], text, None)
                if out.full():
                    yield out.batch()
            acc = scanner.accounting
            out.add("parsed", index, acc.parsed_lines, None, None, None, None, None, None,
                    None, None, None, None, None)
            for m in acc.malformed:
                out.add("malformed", index, m.line, None, None, None, None, None, None, None,
                        None, None, None, m.reason)
            for n in acc.notes:
                out.add("note", index, n.line, n.member, None, None, None, None, None, None,
                        None, None, None, n.message)

        for batch in batches:
            cols = batch.to_pydict()  # values are bytes: a log need not be valid UTF-8
            for index, line, value in zip(cols["file"], cols["line"], cols["value"],
                                          strict=True):
                if index != current:
                    if current is not None:
                        yield from flush(current, pending)
                    current, pending = index, []
                pending.append((line, value))
        if current is not None:
            yield from flush(current, pending)
        if out.rows:
            yield out.batch()

    return scan


class _Rows:
    """Rows of the SCANNED schema, gathered into Arrow batches."""

    def __init__(self) -> None:
        self.rows: list[tuple[Any, ...]] = []

    def add(self, *row: Any) -> None:
        self.rows.append(row)

    def full(self) -> bool:
        return len(self.rows) >= 8192

    def batch(self) -> pa.RecordBatch:
        import pyarrow as pa

        schema = _schema(SCANNED)
        columns = list(zip(*self.rows, strict=True))
        self.rows = []
        return pa.RecordBatch.from_arrays(
            [pa.array(c, type=f.type) for c, f in zip(columns, schema, strict=True)],
            schema=schema)


# --- stage 4: shards, warnings, tallies -------------------------------------------------------

VIOLATIONS = ("spec string, member string, message string, files array<string>, "
              "lines array<long>, t long, fi int, first long, pos long, part int")
MEMBERS = ("member string, kind string, message string, files array<string>, "
           "lines array<long>, t long, fi int, first long, pos long, starts int, "
           "uuids array<string>, migrations string")


def _run_shards(specs: Sequence[str]) -> Callable[[pa.Table], pa.Table]:
    def run(table: pa.Table) -> pa.Table:
        import pyarrow as pa

        ps = parts(specs)
        rows = sorted(zip(table.column("t").to_pylist(), table.column("fi").to_pylist(),
                          table.column("first").to_pylist(), table.column("pos").to_pylist(),
                          table.column("routed").to_pylist(), table.column("json").to_pylist(),
                          table.column("part").to_pylist(), strict=True))
        part = ps[rows[0][6]]
        found = run_shard(part, (((t, fi, first, pos), from_dict(json.loads(text)), routed)
                                 for t, fi, first, pos, routed, text, _ in rows))
        return pa.Table.from_pylist([_violation_row(v) for v in found],
                                    schema=_schema(VIOLATIONS))

    return run


def _violation_row(v: Violation) -> dict[str, Any]:
    t, fi, first, pos = v.at
    return {"spec": v.spec, "member": v.member, "message": v.message,
            "files": [s.file for s in v.sources], "lines": [s.line for s in v.sources],
            "t": t, "fi": fi, "first": first, "pos": pos, "part": v.part}


def _run_members(stuck_ms: int) -> Callable[[pa.Table], pa.Table]:
    def run(table: pa.Table) -> pa.Table:
        import pyarrow as pa

        rows = sorted(zip(table.column("t").to_pylist(), table.column("fi").to_pylist(),
                          table.column("first").to_pylist(), table.column("pos").to_pylist(),
                          table.column("json").to_pylist(), strict=True))
        events = [((t, fi, first, pos), from_dict(json.loads(text)))
                  for t, fi, first, pos, text in rows]
        member = events[0][1].member
        out: list[dict[str, Any]] = []
        if member != UNKNOWN_MEMBER:  # events no member can be named for make no member's tally
            tally = Tally()
            for _, ev in events:
                tally.add(ev)
            out.append({"member": member, "kind": "tally", "starts": tally.starts,
                        "uuids": sorted(tally.uuids),
                        "migrations": json.dumps(tally.migrations)})
        for (t, fi, first, pos), n in warnings_of(events, stuck_ms):
            out.append({"member": n.member, "kind": n.kind, "message": n.message,
                        "files": [s.file for s in n.sources],
                        "lines": [s.line for s in n.sources],
                        "t": t, "fi": fi, "first": first, "pos": pos})
        return pa.Table.from_pylist(out, schema=_schema(MEMBERS))

    return run


def _schema(ddl: str) -> pa.Schema:
    """The Arrow schema of one of the DDL strings above (workers have no Spark session)."""
    import pyarrow as pa

    kinds = {"string": pa.string(), "int": pa.int32(), "long": pa.int64(),
             "boolean": pa.bool_(), "array<string>": pa.list_(pa.string()),
             "array<long>": pa.list_(pa.int64())}
    return pa.schema([(name, kinds[kind]) for name, kind in
                      (c.split(" ", 1) for c in ddl.split(", "))])


# --- the pipeline ---------------------------------------------------------------------------------


def validate_spark(paths: Sequence[str], *, fmt: str = "auto",
                   stuck_ms: int = DEFAULT_STUCK_MS, master: str | None = None,
                   output: str | None = None, progress: bool = False,
                   spark: SparkSession | None = None, verbose: bool = False) -> Report:
    """Validate `paths` on Spark: the report `validate` gives, computed by the stages above.
    Raises InputError for a path that cannot be read as a log, SparkUnavailable when Spark
    cannot start, SparkFailed when a job fails."""
    t0 = time.perf_counter()
    given = inputs(paths, fmt)
    files = [i for i in given if i.skipped is None]
    spark = spark or session(master, verbose=verbose)
    try:
        report = (_pipeline(spark, files, fmt, stuck_ms, output, progress) if files
                  else Report([], Accounting()))
    except Exception as exc:
        reason = _reason(exc)
        if reason is None:
            raise
        raise SparkFailed(f"the Spark engine failed: {reason}") from None
    report.inputs = _statuses(given, report.accounting.files)
    report.seconds = time.perf_counter() - t0
    report.engine, report.master = "spark", spark.sparkContext.master
    return report


def _pipeline(spark: SparkSession, files: list[Input], fmt: str, stuck_ms: int,
              output: str | None, progress: bool) -> Report:
    """The stages of the module's docstring, on `spark`."""
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
        files, splits, totals = _number(files, counts, fmt)
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
                   .mapInArrow(_scan_batches(names, LOG_SPECS), SCANNED)
                   .persist())
        try:
            report = _report(spark, scanned, files, totals, stuck_ms)
            if output:
                _write(scanned, report, output)
        finally:
            scanned.unpersist()
    return report


def _statuses(given: list[Input], tallies: list[FileTally]) -> list[FileStatus]:
    """Every input's status in command-line order, as the local engine gives them: skipped ones
    with their reason, local files from their tallies; files Spark listed itself last."""
    by_name: dict[str, list[int]] = {}
    for n, t in enumerate(tallies):
        by_name.setdefault(t.name, []).append(n)
    used: set[int] = set()
    out: list[FileStatus] = []
    for i in given:
        if i.skipped is not None:
            out.append(FileStatus(i.name, SKIPPED, i.skipped))
        elif i.uri.startswith("file:"):
            n = by_name[i.name].pop(0)
            used.add(n)
            out.append(file_status(tallies[n]))
    return out + [file_status(t) for n, t in enumerate(tallies) if n not in used]


def _norm(uri: str) -> str:
    """A local file's URI or path the way both Spark's rows and `inputs` can be matched on."""
    return re.sub(r"^file:/+", "/", uri)


def _number(files: list[Input], counts: Sequence[Any], fmt: str
            ) -> tuple[list[Input], list[tuple[str, int, int, int]], dict[int, int]]:
    """Stage 1 on the driver: from one (path, block, n, id0) row per input split, each split's
    file index and base (its first line's number minus its first row id), and each file's line
    count. Files Spark listed itself (a remote directory or glob) join `files` in path order."""
    files = [i for i in files if i.uri.startswith("file:")]
    known = {_norm(i.uri): n for n, i in enumerate(files)}
    index: dict[str, int] = {}
    for path in sorted({r["path"] for r in counts}):
        n = known.get(_norm(path))
        if n is None:
            n = len(files)
            files.append(Input(path, path, "log" if fmt == "auto" else fmt, 0))
        index[path] = n
    splits: list[tuple[str, int, int, int]] = []
    totals: dict[int, int] = {}
    for r in sorted(counts, key=lambda r: (index[r["path"]], r["block"])):
        n = index[r["path"]]
        before = totals.get(n, 0)
        splits.append((r["path"], r["block"], n, before + 1 - r["id0"]))
        totals[n] = before + r["n"]
    return files, splits, totals


def _report(spark: SparkSession, scanned: DataFrame, files: list[Input],
            totals: dict[int, int], stuck_ms: int) -> Report:
    from pyspark.sql import functions as F

    names = [i.name for i in files]
    acc = Accounting()
    acc.lines = sum(totals.values())
    acc.files = [FileTally(name, totals.get(n, 0)) for n, name in enumerate(names)]
    small = scanned.where(F.col("kind").isin("parsed", "malformed", "note")).collect()
    notes: list[Note] = []
    for r in small:
        if r["kind"] == "parsed":
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
    for r in events.groupBy("file").agg(F.count("*").alias("n"), F.count(
            F.when(F.col("member") == UNKNOWN_MEMBER, True)).alias("unknown")).collect():
        acc.files[r["file"]].events = r["n"]
        acc.files[r["file"]].without_member = r["unknown"]
        unknown += r["unknown"]
    acc.events = sum(t.events for t in acc.files)
    report = Report(names, acc, events_without_member=unknown)
    report.violations = _violations(scanned)
    report.warnings = notes_as_warnings(notes, order)
    tallies: dict[str, Tally] = {}
    found: list[tuple[tuple[int, int, int, int], Notice]] = []
    # of the events no member can be named for, only lost partitions give warnings (`warnings_of`)
    per_member = (events.where((F.col("member") != UNKNOWN_MEMBER)
                               | (F.col("type") == PartitionLost.TYPE))
                  .groupBy("member").applyInArrow(_run_members(stuck_ms), MEMBERS))
    for r in per_member.collect():
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
    return tuple(Source(f, n) for f, n in zip(r["files"], r["lines"], strict=True))


def _violations(scanned: DataFrame) -> list[Violation]:
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
    rows = shards.groupBy("part", "key").applyInArrow(_run_shards(LOG_SPECS), VIOLATIONS)
    found = [Violation(x["spec"], x["member"], _sources(x), x["message"],
                       (x["t"], x["fi"], x["first"], x["pos"]), x["part"])
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

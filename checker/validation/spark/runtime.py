"""Spark itself: the session partsafe runs in (the Python interpreters its workers run, its JVM
kept quiet), the package shipped to a cluster's executors, and a failed Spark job as one line.
"""

from __future__ import annotations

import os
import sys
import tempfile
import threading
import zipfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from pyspark.sql import SparkSession


class SparkUnavailable(Exception):
    """Spark cannot be started here (no pyspark, no Java): the message says what is missing."""


class SparkFailed(Exception):
    """A Spark job of the pipeline failed (a file that cannot be read to its end, a worker that
    died, ...): the message is Spark's reason, without the stack traces."""


def failure_reason(exc: BaseException) -> str | None:
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
    import partsafe

    root = Path(partsafe.__file__).resolve().parent  # the package's own folder
    out = Path(tempfile.mkdtemp(prefix="partsafe-")) / "partsafe.zip"
    with zipfile.ZipFile(out, "w") as z:
        for f in root.rglob("*"):
            if f.suffix in (".py", ".lark", ".properties") and "tests" not in f.parts:
                z.write(f, "partsafe/" + str(f.relative_to(root)))
    spark.sparkContext.addPyFile(str(out))

"""`partsafe validate --engine auto`: which of the two engines, the local one
(local.py) or Spark (spark/), judges the input; and the size
of the input, for the progress bar of the local one."""

from __future__ import annotations

from collections.abc import Sequence
from importlib.util import find_spec

from partsafe.checker.validation.spark import auto_engine, inputs
from partsafe.traces.scanner import InputError, expand


def choose_engine(paths: Sequence[str], master: str | None, output_dir: str | None) -> str:
    """``"spark"`` when a Spark option is given (`master`, `output_dir`), or where
    `spark.auto_engine` says Spark is the better engine for the input's size; ``"local"``
    without PySpark."""
    if find_spec("pyspark") is None:
        return "local"
    if master or output_dir:
        return "spark"
    return auto_engine(sum(i.size for i in inputs(list(paths))), master)


def input_bytes(paths: Sequence[str]) -> int:
    """The bytes of the files the local engine will scan for `paths` (0 when they cannot be
    listed: the engine itself reports why)."""
    try:
        return sum(c.path.stat().st_size for c in expand(list(paths)) if c.skipped is None)
    except (InputError, OSError):
        return 0

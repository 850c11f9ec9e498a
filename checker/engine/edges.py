"""The transitions a search keeps for its lasso properties: `EdgeLog`.

A lasso property is judged on the explored graph after the search (`lasso_violations`,
checker/engine/lassos.py), so a model with one keeps every transition: source and target
fingerprints and the lasso marks, 17 bytes each, four to five a state. A search of a hundred
million states makes half a billion of them, 8 GB, more than the visited table itself; they are
written once and read once, at the end.
So the latest edges are held in three arrays and, once `spill` of them are there, appended to
three files (`src`, `dst`, `marks`, the arrays' machine layout) in a directory: beside the
checkpoint of a checkpointed search (where a resumed search finds them again), else a temporary
one removed with the log. The arrays are cleared in place, so a search loop may hold them.
"""

from __future__ import annotations

import shutil
import tempfile
from array import array
from collections.abc import Iterator
from pathlib import Path

import numpy as np

from partsafe.checker.engine.checkpoint import CheckpointError

#: edges held in memory before they go to disk (about 570 MB)
SPILL = 1 << 25
_COLUMNS = (("src", np.uint64), ("dst", np.uint64), ("marks", np.uint8))


class EdgeLogError(Exception):
    """The edges could not be written (a full disk, a directory that cannot be made)."""


class EdgeLog:
    """Edges in the order found: `src`, `dst`, `marks` in memory, the earlier `on_disk` of them
    in `directory` (None until the first spill of a log without one: a temporary directory)."""

    __slots__ = ("_temporary", "directory", "dst", "marks", "on_disk", "spill", "src")

    def __init__(self, directory: Path | None = None, spill: int | None = None) -> None:
        self.src, self.dst, self.marks = array("Q"), array("Q"), array("B")
        self.directory = directory
        self.spill = SPILL if spill is None else spill
        self.on_disk = 0
        self._temporary: tempfile.TemporaryDirectory[str] | None = None

    def __len__(self) -> int:
        return self.on_disk + len(self.src)

    def start(self) -> None:
        """Begin afresh: files a search that never saved may have left are emptied."""
        if self.directory is not None and self.directory.exists():
            shutil.rmtree(self.directory)

    def maybe_spill(self) -> None:
        if len(self.src) >= self.spill:
            self.flush()

    def flush(self) -> None:
        """Append the edges in memory to the files and clear the arrays (in place)."""
        if not self.src:
            return
        try:
            if self.directory is None:
                self._temporary = tempfile.TemporaryDirectory(prefix="partsafe-edges-")
                self.directory = Path(self._temporary.name)
            self.directory.mkdir(parents=True, exist_ok=True)
            for (name, _), column in zip(_COLUMNS, (self.src, self.dst, self.marks),
                                         strict=True):
                with (self.directory / name).open("ab") as f:
                    column.tofile(f)
        except OSError as exc:
            raise EdgeLogError(f"cannot write the edges kept for lasso properties to "
                               f"{self.directory or tempfile.gettempdir()} ({exc}); free space "
                               "there, or point TMPDIR elsewhere") from exc
        self.on_disk += len(self.src)
        for column in (self.src, self.dst, self.marks):
            del column[:]

    def saved(self) -> int:
        """Flush, for a checkpoint: the number of edges the files hold from then on."""
        self.flush()
        return self.on_disk

    def resume(self, count: int) -> None:
        """Continue from a checkpoint that saw `count` edges on disk: what a later process
        appended after it is cut off."""
        if count == 0:
            self.start()
            return
        assert self.directory is not None
        for name, dtype in _COLUMNS:
            path = self.directory / name
            size = count * np.dtype(dtype).itemsize
            if not path.exists() or path.stat().st_size < size:
                raise CheckpointError(f"{path}: the edges of this checkpoint are missing or cut "
                                   f"short ({count:,} expected); remove the checkpoint to start "
                                   "again")
            with path.open("r+b") as f:
                f.truncate(size)
        self.on_disk = count

    def chunks(self, size: int) -> Iterator[tuple[np.ndarray, np.ndarray, np.ndarray]]:
        """Every edge, `size` at a time, in the order found: (src, dst, marks) arrays."""
        if self.on_disk:
            assert self.directory is not None
            for start in range(0, self.on_disk, size):
                n = min(size, self.on_disk - start)
                yield tuple(  # type: ignore[misc]
                    np.fromfile(self.directory / name, dtype=dtype, count=n,
                                offset=start * np.dtype(dtype).itemsize)
                    for name, dtype in _COLUMNS)
        for start in range(0, len(self.src), size):
            end = min(start + size, len(self.src))
            yield (np.frombuffer(self.src, dtype=np.uint64)[start:end].copy(),
                   np.frombuffer(self.dst, dtype=np.uint64)[start:end].copy(),
                   np.frombuffer(self.marks, dtype=np.uint8)[start:end].copy())

    def close(self) -> None:
        """Free the arrays and remove a temporary directory (a checkpoint's stays with it)."""
        del self.src[:], self.dst[:], self.marks[:]
        if self._temporary is not None:
            self._temporary.cleanup()
            self._temporary = None
            self.directory = None
            self.on_disk = 0

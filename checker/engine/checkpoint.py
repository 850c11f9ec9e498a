"""A long search saved at level boundaries and resumed from there: `Checkpoint`.

A breadth-first search is fully described, between two levels, by its visited table (fingerprints
and parents), the frontier it is about to expand, and its counters (transitions, fired kinds,
goals reached, the edges kept for lasso properties). The explorer writes these to one file every
`every` seconds at the end of a level, and a search given the same file starts where it was:
a search of hours outlives the process that began it.

What makes a checkpoint valid for a process is checked, never assumed:

- the search is the same: model, variant, scope, symmetry, and how it stops (`signature`);
- the code is the same: a digest of every Python source of the package (`code_digest`), since a
  changed handler changes the states;
- Python hashes alike: fingerprints are Python hashes. String hashes are salted per process
  unless ``PYTHONHASHSEED`` fixes them, and before Python 3.12 ``hash(None)`` is the address of
  None, which moves with address space layout randomization. A search that checkpoints needs
  both fixed; `partsafe check --checkpoint` starts itself again with the seed of the file (or a
  new one) and, where needed, with randomization off (`rehash_environment`). The header keeps
  `hash_probe()`, which a resuming process must reproduce.

The file is written to a temporary name and renamed, so a process killed while writing leaves the
previous checkpoint whole. The header is a pickle of its own, first in the file, so that it is
read without the body. The columns of the search (the visited table and the frontier's
fingerprints, gigabytes in a search of a hundred million states) are written straight from their
memory and read straight into arrays, outside the body's pickle (pickle protocol 5's out-of-band
buffers): a plain pickle would copy each to a bytes object first, and a save or a resume would
need twice the search's memory. The edges kept for lasso properties are files of their own beside
the checkpoint (`edges_beside`, checker/engine/edges.py); the body holds how many of them it saw.
"""

from __future__ import annotations

import ctypes
import hashlib
import io
import os
import pickle
import random
import shutil
import sys
import time
from array import array
from collections.abc import Callable
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

#: the layout of the file; a checkpoint of another layout is refused
FORMAT = 3
#: array items read at a time into a column (a read never holds a whole column twice)
_READ = 1 << 23
#: the installed package `partsafe` (checker/engine/ is two levels below it)
_PACKAGE = Path(__file__).resolve().parents[2]
#: personality(2) flag: no address space layout randomization for the process and its execs
ADDR_NO_RANDOMIZE = 0x0040000
#: set in the environment of the process started again, so that it is started again only once
_RESTARTED = "PARTSAFE_CHECKPOINT_RESTARTED"


class CheckpointError(Exception):
    """A checkpoint that cannot be written or does not belong to this search."""


@cache
def code_digest() -> str:
    """SHA-256 over the package's Python sources (path and content, in path order)."""
    h = hashlib.sha256()
    for path in sorted(_PACKAGE.rglob("*.py")):
        rel = path.relative_to(_PACKAGE)
        if rel.parts[0] in ("tests", "build") or rel.parts[0].startswith("."):
            continue
        h.update(str(rel).encode())
        h.update(path.read_bytes())
    return h.hexdigest()


def _fixed(seed: str | None) -> bool:
    """Does ``PYTHONHASHSEED=seed`` fix string hashing (0 turns the salt off, which is fixed too,
    but a file's seed is a positive one)?"""
    return seed is not None and seed.isdigit() and seed != "0"


def hash_probe() -> int:
    """Python's hash of a value with None, strings and numbers in it: two processes whose probes
    differ give the same states different fingerprints."""
    return hash((None, "partsafe", 1, 2.5, frozenset({"a", "b"}), ("c", None)))


def _address_hashing() -> bool:
    """Does this process hash None by an address that another process would not share?"""
    if sys.version_info >= (3, 12) or not sys.platform.startswith("linux"):
        return False
    try:
        flags = int(Path("/proc/self/personality").read_text(), 16)
    except (OSError, ValueError):
        return True
    return not flags & ADDR_NO_RANDOMIZE


def rehash_environment(seed: str) -> dict[str, str] | None:
    """The environment to start this command again in so that it hashes as the checkpoint
    needs (`seed` as ``PYTHONHASHSEED``; address randomization turned off for the new process
    where None hashes by address), or None if this process already does. Started again once at
    most: a second time, the checkpoint's own check (`hash_probe`) reports what differs."""
    by_address = _address_hashing()
    if os.environ.get("PYTHONHASHSEED") == seed and not by_address:
        return None
    if os.environ.get(_RESTARTED):
        return None
    if by_address:
        libc = ctypes.CDLL(None, use_errno=True)
        current = libc.personality(0xFFFFFFFF)
        if current != -1:
            libc.personality(current | ADDR_NO_RANDOMIZE)
    return {**os.environ, "PYTHONHASHSEED": seed, _RESTARTED: "1"}


def read_header(path: Path) -> dict[str, Any]:
    """The header of the checkpoint at `path` (what search, which code, hash seed, progress)."""
    try:
        with path.open("rb") as f:
            header = pickle.load(f)
    except (OSError, pickle.UnpicklingError, EOFError, AttributeError, ImportError) as exc:
        raise CheckpointError(f"{path}: not a partsafe checkpoint ({exc})") from exc
    if not isinstance(header, dict) or header.get("partsafe") != "checkpoint":
        raise CheckpointError(f"{path}: not a partsafe checkpoint")
    if header.get("format") != FORMAT:
        raise CheckpointError(f"{path}: checkpoint format {header.get('format')}, this partsafe "
                              f"reads format {FORMAT}")
    return header


def edges_beside(path: Path) -> Path:
    """Where the search checkpointed to `path` keeps its edges once they outgrow memory
    (checker/engine/edges.py): a directory beside the file, part of the checkpoint."""
    return path.with_name(path.name + ".edges")


def hash_seed_for(path: Path) -> str:
    """The ``PYTHONHASHSEED`` a search checkpointing to `path` must run under: the file's when
    it exists, else the one set, else a new random one."""
    if path.exists():
        return str(read_header(path)["hash_seed"])
    seed = os.environ.get("PYTHONHASHSEED")
    return seed if _fixed(seed) else str(random.randrange(1, 2**32))


@dataclass
class Checkpoint:
    """Where a search saves itself (`path`) and how often: at the first level end after `every`
    seconds since the last save, and no sooner than a save's own duration divided by `share`
    after it, so that saving takes at most that share of the search's time however large the
    file grows (a save of 200 million states takes minutes)."""

    path: Path
    every: float = 600.0
    #: told of each save, with its progress (depth, states, seconds)
    notify: Callable[[dict[str, Any]], None] | None = None
    #: the largest share of the search's time that saves may take
    share: float = 0.05

    def __post_init__(self) -> None:
        #: the digest of the code this process runs, taken now: the sources may change on disk
        #: while a long search runs
        self.code = code_digest()
        #: how long the last save took, in seconds
        self.last_save = 0.0

    def due(self, since: float) -> bool:
        """Is a save due `since` seconds after the last one?"""
        return since >= max(self.every, self.last_save / self.share)

    def exists(self) -> bool:
        return self.path.exists()

    def save(self, signature: dict[str, Any], progress: dict[str, Any],
             body: dict[str, Any]) -> None:
        """Write `body` (the search's state) atomically, with a header of `signature`, the code
        digest, the hash seed and `progress` (depth, states, seconds: for people)."""
        seed = os.environ.get("PYTHONHASHSEED")
        if not _fixed(seed):
            raise CheckpointError("a checkpointed search needs PYTHONHASHSEED set to a fixed "
                                  "seed (fingerprints are Python hashes); partsafe check "
                                  "--checkpoint sets it")
        header = {"partsafe": "checkpoint", "format": FORMAT, "signature": signature,
                  "code": self.code, "hash_seed": seed, "probe": hash_probe(),
                  "written": time.strftime("%Y-%m-%dT%H:%M:%S%z"), **progress}
        tmp = self.path.with_name(self.path.name + ".partial")
        began = time.perf_counter()
        try:
            columns: list[pickle.PickleBuffer] = []
            pickled = io.BytesIO()
            pickler = _Pickler(pickled, protocol=5, buffer_callback=columns.append)
            pickler.dump(body)
            with tmp.open("wb") as f:
                pickle.dump(header, f, protocol=pickle.HIGHEST_PROTOCOL)
                pickle.dump([(code, len(memoryview(c).cast("B"))) for code, c in
                             zip(pickler.typecodes, columns, strict=True)], f,
                            protocol=pickle.HIGHEST_PROTOCOL)
                for column in columns:
                    f.write(memoryview(column).cast("B"))
                f.write(pickled.getbuffer())
            os.replace(tmp, self.path)
        except OSError as exc:
            raise CheckpointError(f"{self.path}: cannot write the checkpoint ({exc})") from exc
        self.last_save = time.perf_counter() - began
        if self.notify is not None:
            self.notify(progress)

    def load(self, signature: dict[str, Any]) -> dict[str, Any]:
        """The body saved for the search `signature`, after checking that it is this search,
        this code and this hash seed."""
        header = read_header(self.path)
        if header["signature"] != signature:
            raise CheckpointError(f"{self.path}: a checkpoint of another search "
                                  f"({describe(header['signature'])}), not of "
                                  f"{describe(signature)}")
        if header["code"] != code_digest():
            raise CheckpointError(f"{self.path}: written by other partsafe code (the states "
                                  "it holds may differ); remove it to start again")
        seed = os.environ.get("PYTHONHASHSEED")
        if seed != header["hash_seed"]:
            raise CheckpointError(f"{self.path}: written under PYTHONHASHSEED="
                                  f"{header['hash_seed']}, this process has {seed}")
        if header["probe"] != hash_probe():
            raise CheckpointError(f"{self.path}: this process hashes differently from the one "
                                  "that wrote it (Python before 3.12 hashes None by its "
                                  "address: run with address randomization off, as partsafe "
                                  "check --checkpoint does)")
        try:
            with self.path.open("rb") as f:
                pickle.load(f)
                layout: list[tuple[str, int]] = pickle.load(f)
                columns = []
                for code, nbytes in layout:
                    column = array(code)
                    items = nbytes // column.itemsize
                    while len(column) < items:
                        column.fromfile(f, min(_READ, items - len(column)))
                    columns.append(column)
                body: dict[str, Any] = pickle.load(f, buffers=columns)
        except (OSError, EOFError, ValueError, pickle.UnpicklingError) as exc:
            raise CheckpointError(f"{self.path}: the checkpoint is damaged ({exc}); remove it "
                                  "to start again") from exc
        return body

    @property
    def edges(self) -> Path:
        return edges_beside(self.path)

    def remove(self) -> None:
        self.path.unlink(missing_ok=True)
        shutil.rmtree(self.edges, ignore_errors=True)


def _column(typecode: str, buffer: Any) -> array:
    """An array of the search, as `Checkpoint.load` read it (or rebuilt from an in-band copy)."""
    if isinstance(buffer, array):
        return buffer
    column = array(typecode)
    column.frombytes(buffer)
    return column


class _Pickler(pickle.Pickler):
    """A pickler that hands every array to its buffer callback, out of band, with its type code
    in `typecodes` (in the same order)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.typecodes: list[str] = []

    def reducer_override(self, obj: Any) -> Any:
        if type(obj) is array:
            self.typecodes.append(obj.typecode)
            return _column, (obj.typecode, pickle.PickleBuffer(obj))
        return NotImplemented


def describe(signature: dict[str, Any]) -> str:
    """A search's signature for people: model, variant, the scope's non-zero budgets, symmetry."""
    scope = " ".join(f"{k}={v}" for k, v in signature.get("scope", {}).items() if v)
    return (f"{signature.get('model')} ({signature.get('variant')}) at {scope}, symmetry "
            f"{'on' if signature.get('symmetry') else 'off'}")

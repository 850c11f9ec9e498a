"""Traces in the NDJSON format of TLA+ trace validation (Cirstea, Kuppe, Loillier, Merz,
"Validating Traces of Distributed Programs Against TLA+ Specifications", 2024).

One JSON object per line, each exactly one step of the spec; every key is optional:

- ``"event"``: the action's name (absent: any action);
- ``"event_args"``: the action's arguments (absent: chosen existentially);
- one key per logged spec variable, a list of updates ``{"op", "path", "args"}`` applied to the
  variable's value before the step (the benchmark's ``TVOperators.ApplyUpdates``); a variable that
  is not logged is left unconstrained.

A configuration file holds one object per line naming the constants, for TwoPhase
``{"RM": ["rm-0", ...]}`` and ``{"TM": ["tm"]}``.

This module only reads: the records, their constraints as values (`apply`), and clear errors
naming the file and line. What a record means for a model is the mapping's business
(`partsafe.checker.protocols.twophase_trace`).
"""

from __future__ import annotations

import json
from collections.abc import Hashable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

#: the ``TVOperators`` operations `apply` knows (the others are refused by name, with the line)
OPS = frozenset({"Update", "AddElement", "AddElements", "RemoveElement", "Clear", "Unchanged"})


class TraceFormatError(ValueError):
    """A trace or configuration file that is not in the format; the message names file:line."""


@dataclass(frozen=True, slots=True)
class Update:
    """One update of a variable: ``op`` at ``path`` (keys into a function-valued variable) with
    ``args``; values are frozen (`freeze`)."""

    op: str
    path: tuple[Hashable, ...]
    args: tuple[Hashable, ...]


@dataclass(frozen=True, slots=True)
class TraceLine:
    """One record: where it is, the action it names (None: any), its arguments (None: any) and
    the updates of each variable it logs."""

    file: str
    line: int
    event: str | None
    event_args: tuple[Hashable, ...] | None
    updates: tuple[tuple[str, tuple[Update, ...]], ...]

    @property
    def where(self) -> str:
        return f"{self.file}:{self.line}"

    def names(self) -> frozenset[str]:
        """Every string the record holds (arguments, paths and values): the names of the
        processes it speaks of."""
        out: set[str] = set()
        _strings(self.event_args, out)
        for _, ups in self.updates:
            for u in ups:
                _strings(u.path, out)
                _strings(u.args, out)
        return frozenset(out)


def freeze(value: Any) -> Hashable:
    """A JSON value as a hashable one: an object becomes a sorted tuple of its (key, value) pairs,
    a list a tuple."""
    if isinstance(value, dict):
        return tuple(sorted((k, freeze(v)) for k, v in value.items()))
    if isinstance(value, list):
        return tuple(freeze(v) for v in value)
    return value


def _strings(value: Any, out: set[str]) -> None:
    if isinstance(value, str):
        out.add(value)
    elif isinstance(value, tuple):
        for v in value:
            _strings(v, out)


def read_trace(path: str | Path) -> list[TraceLine]:
    """The records of a trace file, in order; TraceFormatError names the first bad line."""
    name, text = str(path), _text(path)
    out = []
    for number, raw in enumerate(text.splitlines(), start=1):
        if raw.strip():
            out.append(_record(_object(raw, name, number), name, number))
    if not out:
        raise TraceFormatError(f"{name}: holds no record")
    return out


def read_config(path: str | Path) -> dict[str, tuple[str, ...]]:
    """The constants of a configuration file: each line ``{"NAME": [values...]}``."""
    name, text = str(path), _text(path)
    out: dict[str, tuple[str, ...]] = {}
    for number, raw in enumerate(text.splitlines(), start=1):
        if not raw.strip():
            continue
        obj = _object(raw, name, number)
        for key, values in obj.items():
            if not isinstance(values, list) or not all(isinstance(v, str) for v in values):
                raise TraceFormatError(f"{name}:{number}: constant {key!r} is not a list of "
                                       "names")
            out[key] = tuple(values)
    return out


def _text(path: str | Path) -> str:
    try:
        return Path(path).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise TraceFormatError(f"{path}: cannot be read ({exc.__class__.__name__}: {exc})"
                               ) from None


def _object(raw: str, name: str, number: int) -> dict[str, Any]:
    try:
        obj = json.loads(raw)
    except ValueError as exc:
        raise TraceFormatError(f"{name}:{number}: not JSON ({exc})") from None
    if not isinstance(obj, dict):
        raise TraceFormatError(f"{name}:{number}: a record is a JSON object")
    return obj


def _record(obj: dict[str, Any], name: str, number: int) -> TraceLine:
    where = f"{name}:{number}"
    event = obj.get("event")
    if event is not None and not isinstance(event, str):
        raise TraceFormatError(f"{where}: \"event\" is not a string")
    args = obj.get("event_args")
    if args is not None and not isinstance(args, list):
        raise TraceFormatError(f"{where}: \"event_args\" is not a list")
    updates = []
    for var, ups in obj.items():
        if var in ("event", "event_args"):
            continue
        if not isinstance(ups, list):
            raise TraceFormatError(f"{where}: variable {var!r} holds no list of updates")
        parsed = []
        for u in ups:
            if not isinstance(u, dict) or not isinstance(u.get("op"), str):
                raise TraceFormatError(f"{where}: an update of {var!r} has no \"op\"")
            if u["op"] not in OPS:
                raise TraceFormatError(f"{where}: update op {u['op']!r} of {var!r} is not one of "
                                       f"{', '.join(sorted(OPS))}")
            path, uargs = u.get("path", []), u.get("args", [])
            if not isinstance(path, list) or not isinstance(uargs, list):
                raise TraceFormatError(f"{where}: an update of {var!r} has a path or args that "
                                       "is not a list")
            parsed.append(Update(u["op"], tuple(freeze(p) for p in path),
                                 tuple(freeze(a) for a in uargs)))
        updates.append((var, tuple(parsed)))
    return TraceLine(name, number, event, tuple(freeze(a) for a in args)
                     if args is not None else None, tuple(updates))


def apply(value: Hashable, updates: Sequence[Update]) -> Hashable:
    """The value `updates` make of a variable's `value` (``TVOperators.ApplyUpdates``): a set is
    a frozenset, a function a dict-like tuple of (key, value) pairs sorted by key. Raises
    KeyError for a path the value does not have."""
    for u in updates:
        value = _at(value, u.path, u)
    return value


def _at(value: Hashable, path: tuple[Hashable, ...], u: Update) -> Hashable:
    if path:
        pairs = dict(value)  # type: ignore[arg-type]
        head = path[0]
        if head not in pairs:
            raise KeyError(head)
        pairs[head] = _at(pairs[head], path[1:], u)
        return tuple(sorted(pairs.items()))
    arg = u.args[0] if u.args else None
    if u.op == "Update":
        return arg
    if u.op == "AddElement":
        return frozenset(value) | {arg}  # type: ignore[arg-type]
    if u.op == "AddElements":
        return frozenset(value) | frozenset(arg)  # type: ignore[arg-type]
    if u.op == "RemoveElement":
        return frozenset(value) - {arg}  # type: ignore[arg-type]
    if u.op == "Clear":
        return frozenset()
    return value  # Unchanged

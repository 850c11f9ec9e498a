"""Any protocol model against an event file (`partsafe.traces.events`: the canonical events a
model's steps emit, as `partsafe export --events` writes them): the mapping is the model's own
`Model.step_events`, so it serves every model.

A record is an event; a step of the model matches the records from `i` on when the events it
emits are those records, in order (a step may emit several). Steps that emit no event (a
heartbeat, a message in flight) are what no record can show: they run hidden, at most
``--max-hidden`` of them between two matched records. The initial state accounts for the
events it shows (`Model.init_events`). A `quiescent` record marks where the run ended with
nothing but faults enabled: it matches no step, and is left out of the records. Names are the
model's own (an exported run's members are the model's).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from partsafe.checker.engine.conform import TraceMapping
from partsafe.checker.engine.model import Action, Model
from partsafe.checker.report import event_json
from partsafe.traces.events import Event, Quiescent, read_jsonl


def read_events(path: str) -> list[Event]:
    """The events of an event file, each with its line as its source (EventFormatError names
    the line of a malformed one; OSError when the file cannot be read)."""
    with open(path, encoding="utf-8") as f:
        return list(read_jsonl(f, path, sources=True))


def _key(event: Event) -> str:
    """An event as the text it is compared by: its fields but where and when it was seen."""
    d = event_json(event)
    d.pop("source", None)
    return json.dumps(d, sort_keys=True, default=str)


class EventTrace(TraceMapping[Any]):
    """The records of one event file `events` (read from `file`) against `model`."""

    def __init__(self, model: Model[Any], events: Sequence[Event], file: str) -> None:
        self.model = model
        self.events = [e for e in events if not isinstance(e, Quiescent)]
        self.keys = [_key(e) for e in self.events]
        self.file = file
        self._emitted: tuple[Any, Action, tuple[str, ...]] | None = None

    def records(self) -> Sequence[Event]:
        return self.events

    def where(self, i: int) -> str:
        if i >= len(self.events):
            return f"{self.file}: the end"
        source = self.events[i].source
        return f"{source.file}:{source.line}" if source is not None else \
            f"{self.file}: record {i + 1}"

    def located(self, i: int) -> tuple[str, int] | None:
        source = self.events[i].source if i < len(self.events) else None
        return None if source is None else (source.file, source.line)

    def _emits(self, state: Any, action: Action, nxt: Any) -> tuple[str, ...]:
        last = self._emitted
        if last is not None and last[0] is state and last[1] == action:
            return last[2]
        keys = tuple(_key(e) for e in self.model.step_events(state, action, nxt))
        self._emitted = (state, action, keys)
        return keys

    def start(self, state: Any) -> list[int] | str:
        shown = tuple(_key(e) for e in self.model.init_events(state))
        if tuple(self.keys[:len(shown)]) == shown:
            return [len(shown)]
        return f"it shows {len(shown)} event(s) first: {', '.join(shown) or 'none'}"

    def match(self, i: int, state: Any, action: Action, nxt: Any) -> list[int] | str:
        shown = self._emits(state, action, nxt)
        if not shown:
            return "the step shows no event"
        if tuple(self.keys[i:i + len(shown)]) == shown:
            return [i + len(shown)]
        return f"it shows {shown[0]}"

    def hidden(self, i: int, state: Any, action: Action, nxt: Any) -> bool:
        return not self._emits(state, action, nxt)

    def explain(self, i: int, state: Any) -> list[str]:
        record = self.keys[i] if i < len(self.keys) else "the end of the file"
        out = [f"the record is {record}"]
        for action, nxt in self.model.successors(state):
            shown = self._emits(state, action, nxt)
            if not shown:
                continue
            name = self.model.describe_action(action)[0]
            k = next((k for k, key in enumerate(shown)
                      if i + k >= len(self.keys) or self.keys[i + k] != key), len(shown))
            if k == 0:
                out.append(f"{name} shows {shown[0]}")
            else:
                there = self.keys[i + k] if i + k < len(self.keys) else "the end of the file"
                out.append(f"{name} shows the next {k} record(s), then {shown[k]} where the "
                           f"file has {there}")
        if len(out) == 1:
            out.append("no enabled step shows an event (the run is over)")
        return out

"""Counterexample artifacts, as `partsafe check --trace-out FILE` writes them (`write`; the
document is `checker.report.artifact`): read one back, replay it, export its events.

An artifact names the model, variant and scope, the initial state, and each step's action (by a
canonical id) and events. Replay (`partsafe replay`) rebuilds the model, follows the actions,
checks that every step is enabled and emits the same events, and judges the spec on the final
state: deterministic, with no search. Export (`partsafe export`) turns the events into canonical
JSON Lines and into log text, one file per member (Hazelcast's, or Apache Ignite 3's for the
Ignite model's events), which `partsafe validate` reads back.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import IO, Any

from partsafe.checker.engine.bfs import DEADLOCK, Result, Trace
from partsafe.checker.engine.model import Model
from partsafe.checker.protocols import catalog
from partsafe.checker.report import artifact, canonical, dumps, event_json
from partsafe.traces.events import (
    CONFIG,
    UNKNOWN_MEMBER,
    Event,
    EventFormatError,
    Quiescent,
    from_dict,
    write_jsonl,
)
from partsafe.traces.ignite_writer import IgniteLogWriter, is_ignite
from partsafe.traces.writer import LogWriter


class ArtifactError(ValueError):
    """A file that is not a readable artifact, or an artifact that does not export; the message
    names the file and where in it."""


class ReplayError(ArtifactError):
    """The artifact is malformed or does not replay; the message says where."""


def write(path: str, model: Model[Any], result: Result, params: dict[str, int],
          spec: str | None = None) -> None:
    """The shortest counterexample of `result` (it has a violation), of `spec` when given and
    found, as an artifact in the file `path`; OSError if it cannot be written."""
    Path(path).write_text(dumps(artifact(model, result, params, spec)) + "\n")


def read(path: str) -> Any:
    """The JSON document in the file `path`."""
    try:
        return json.loads(Path(path).read_text())
    except OSError as exc:
        raise ArtifactError(f"{path}: cannot read: {exc.strerror}") from None
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise ArtifactError(f"{path}: not JSON: {exc}") from None


def _field(doc: dict[str, Any], name: str, kind: type | tuple[type, ...], where: str) -> Any:
    value = doc.get(name)
    if not isinstance(value, kind):
        kind_name = getattr(kind, "__name__", str(kind))
        raise ReplayError(f"{where}: field {name!r} is missing or not a {kind_name}")
    return value


def replay(doc: Any, where: str = "<artifact>",
           profile: str | None = None) -> tuple[Model[Any], Trace, str | None]:
    """Replay `doc` (a counterexample, or a run that conforms to a trace: `partsafe conform
    --trace-out`) under the release profile it was found under, or under `profile`; returns
    the model, the trace and the spec's message on the final state (None if the spec holds
    there, and for a run)."""
    if not isinstance(doc, dict) or doc.get("partsafe") not in ("counterexample", "run"):
        raise ReplayError(f"{where}: not a partsafe counterexample or run (no \"partsafe\": "
                          "\"counterexample\" or \"run\" field)")
    name = _field(doc, "model", str, where)
    variant = _field(doc, "variant", str, where)
    params = _field(doc, "params", dict, where)
    spec = _field(doc, "spec", str, where) if doc["partsafe"] == "counterexample" else None
    init_index = _field(doc, "init", int, where)
    steps = _field(doc, "steps", list, where)
    if profile is None:
        profile = doc.get("profile", "fixed")
        if not isinstance(profile, str):
            raise ReplayError(f"{where}: field 'profile' is not a str")
    try:
        model = catalog.get(name).make(variant, params, profile)
    except ValueError as exc:
        raise ReplayError(f"{where}: {exc}") from None
    inits = list(model.init_states())
    if not 0 <= init_index < len(inits):
        raise ReplayError(f"{where}: initial state {init_index} does not exist")
    state = inits[init_index]
    trace = Trace(state, init_index, [])
    for number, step in enumerate(steps, start=1):
        if not isinstance(step, dict) or not isinstance(step.get("action_id"), str):
            raise ReplayError(f"{where}: step {number} has no action_id")
        match = [(a, t) for a, t in model.successors(state) if canonical(a) == step["action_id"]]
        if not match:
            raise ReplayError(f"{where}: step {number} ({step.get('action')}) is not enabled "
                              "in the reference implementation")
        action, nxt = match[0]
        events = [event_json(e) for e in model.step_events(state, action, nxt)]
        if "events" in step and events != step["events"]:
            raise ReplayError(f"{where}: step {number} ({step.get('action')}) emits {events}, "
                              f"the artifact says {step['events']}")
        trace.steps.append((action, nxt))
        state = nxt
    return model, trace, judge(model, state, spec) if spec is not None else None


def judge(model: Model[Any], state: Any, spec: str) -> str | None:
    """The message of `spec` on `state`, as the explorer would judge it there."""
    successors = model.successors(state)
    if spec == DEADLOCK and not successors and not model.finished(state):
        return "no action is enabled and the protocol has not finished"
    for p in model.properties():
        if p.spec != spec:
            continue
        if p.kind == "quiescence" and not model.quiescent(state, successors):
            continue
        message = p.check(state)
        if message is not None:
            return message
    return None


# --- export -----------------------------------------------------------------------------------


def events(doc: Any, where: str) -> list[Event]:
    """The events of the artifact `doc` (read from `where`), the initial state's first, each
    ordered by the number of its step."""
    try:
        steps = doc["steps"]
    except (KeyError, TypeError):
        raise ArtifactError(f"{where}: not a counterexample artifact (no 'steps'); write one "
                            "with `partsafe check --trace-out FILE`") from None
    if not isinstance(steps, list):
        raise ArtifactError(f"{where}: field 'steps' is not a list")
    found = []
    steps = [{"step": 0, "events": doc.get("init_events", [])}, *steps]
    for number, step in enumerate(steps):
        if not isinstance(step, dict) or not isinstance(step.get("events", []), list):
            raise ArtifactError(f"{where}: step {number} is not an object with a list of events")
        for obj in step.get("events", []):
            if not isinstance(obj, dict):
                raise ArtifactError(f"{where}: step {number}: an event is not an object")
            try:
                found.append(from_dict({**obj, "order": step.get("step", number)},
                                       f"{where}: step {number}"))
            except EventFormatError as exc:
                raise ArtifactError(str(exc)) from None
    return found


def model_specs(model: Model[Any]) -> tuple[str, ...]:
    """The specs `model` judges with a monitor: those its exported events are complete for (an
    event file's header declares them, so that what the model abstracts is not judged)."""
    return tuple(dict.fromkeys(p.spec for p in model.properties() if p.spec != DEADLOCK))


def model_config(model: Model[Any]) -> dict[str, Any]:
    """The cluster's settings `model`'s monitors were built for (`partsafe.traces.events.CONFIG`:
    the backup count, the parallel migrations, serial migrations, the replica count), read from
    the monitors that take them, so that validation builds the same monitors."""
    out: dict[str, Any] = {}
    for monitor in getattr(model, "monitors", ()):
        for key in CONFIG:
            if hasattr(monitor, key):
                out[key] = getattr(monitor, key)
    return out


def exported(doc: Any, where: str) -> tuple[list[Event], tuple[str, ...], dict[str, Any]]:
    """The events of artifact `doc` (`events`), followed by a `Quiescent` record when its run
    ends quiescent (nothing but faults enabled: the quiescence checks then judge the exported
    events as the explorer judged the run), the specs of its model (`model_specs`) and the
    settings of its monitors (`model_config`). The run is replayed to know them."""
    found = events(doc, where)
    model, trace, _ = replay(doc, where)
    state = trace.steps[-1][1] if trace.steps else trace.init
    if model.quiescent(state, model.successors(state)):
        last = max((e.order for e in found if e.order is not None), default=0)
        found.append(Quiescent(member=UNKNOWN_MEMBER, order=last))
    return found, model_specs(model), model_config(model)


def write_events(found: Sequence[Event], path: str, specs: Sequence[str] | None = None,
                 config: dict[str, Any] | None = None,
                 run: dict[str, Any] | None = None) -> None:
    """`found` as an event file in the file `path`: the format's header (declaring `specs`,
    `config` and the `run` it is, when given), then canonical JSON Lines."""
    with open(path, "w") as out:
        write_jsonl(found, out, with_header=True, specs=specs, config=config, run=run)


#: the models whose traces are written as Apache Ignite 3 log text
IGNITE_MODELS = ("ignite-rebalance",)


def write_logs(found: Sequence[Event], folder: Path, model: str | None = None
               ) -> tuple[int, int]:
    """`found` as log text in `folder`: Apache Ignite 3 text, one ``ignite3db-NODE.log`` a node,
    for the Ignite model's trace (`model`, the artifact's; without it, when the events are
    Ignite's: `write_ignite_logs`), else Hazelcast text, one ``member-HOST-PORT.log`` a member;
    the lines and the files written."""
    if model in IGNITE_MODELS or (model is None and is_ignite(found)):
        return write_ignite_logs(found, folder)
    writer = LogWriter()
    return _per_member(found, folder, writer.write,
                       lambda m: f"member-{writer.address(m).replace(':', '-')}.log")


def write_ignite_logs(found: Sequence[Event], folder: Path) -> tuple[int, int]:
    """`found` (the Ignite model's events) as Ignite 3 log text in `folder`, one
    ``ignite3db-NODE.log`` a node; the lines and the files written."""
    return _per_member(found, folder, IgniteLogWriter().write, lambda m: f"ignite3db-{m}.log")


def _per_member(found: Sequence[Event], folder: Path,
                write: Callable[[Sequence[Event], Callable[[str], IO[str]]], int],
                name: Callable[[str], str]) -> tuple[int, int]:
    """`write` `found` into `folder`, one file a member (named by `name`), opened as the writer
    first writes for that member; the lines and the files written."""
    folder.mkdir(parents=True, exist_ok=True)
    streams: dict[str, IO[str]] = {}

    def stream(member: str) -> IO[str]:
        if member not in streams:
            streams[member] = (folder / name(member)).open("w")
        return streams[member]

    try:
        written = write(found, stream)
    finally:
        for f in streams.values():
            f.close()
    return written, len(streams)

"""`partsafe check`'s searches: a model of the catalogue built at a scope, explored, and the runs
judged together, with the planner's check when every model is checked.

The command line (checker/cli/main.py) turns its options into these arguments and prints what
comes back (checker/cli/views.py); the bug zoo (checker/zoo.py) runs the same searches. Nothing
here parses options or prints: a run that cannot start as asked raises `CheckError`, whose
message names the option at fault.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Sequence
from contextlib import AbstractContextManager, nullcontext
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from partsafe.checker.actor.model import ActorModel
from partsafe.checker.baseline import Finding, check_subject
from partsafe.checker.engine.bfs import Bounds, Progress, Result, explore
from partsafe.checker.engine.checkpoint import (
    Checkpoint,
    CheckpointError,
    code_digest,
    edges_beside,
    read_header,
)
from partsafe.checker.engine.edges import EdgeLogError
from partsafe.checker.engine.model import Model
from partsafe.checker.planner.check import (
    DEFAULT_REPLICAS,
    PlannerCheck,
    check_json,
    check_planner,
)
from partsafe.checker.planner.view import planner_suite
from partsafe.checker.protocols.catalog import ModelEntry
from partsafe.checker.report import junit, overall, result_json


class CheckError(ValueError):
    """A search that cannot run as asked: an unknown variant, a scope out of range, an option
    that does not apply to the model, an unreadable checkpoint."""


class Interrupted(Exception):
    """The search of model `model` was interrupted (Ctrl-C, a KeyboardInterrupt): no verdict."""

    def __init__(self, model: str) -> None:
        super().__init__(model)
        self.model = model


class Watch(Protocol):
    """What watches one search: told its progress now and then, and when a checkpoint is
    saved."""

    def __call__(self, progress: Progress) -> None: ...

    def saved(self, progress: dict[str, Any]) -> None: ...


#: given a search's label (``membership (fixed)``), the context the search runs in, which yields
#: the `Watch` to report to (or None: nothing watches)
Watcher = Callable[[str], AbstractContextManager[Watch | None]]


@dataclass(frozen=True)
class CheckRun:
    """One search: the model searched, its result, and the scope it was built at."""

    model: Model[Any]
    result: Result
    params: dict[str, int]


def run_check(entry: ModelEntry, variant: str, overrides: dict[str, int], *,
              bounds: Bounds, symmetry: bool, keep_going: bool,
              until: str | frozenset[str] | None = None,
              checkpoint: Checkpoint | None = None, workers: int = 1,
              only: dict[str, frozenset[str]] | None = None,
              watcher: Watcher | None = None, profile: str = "fixed",
              recorded: Collection[Finding] = ()) -> CheckRun:
    """Build `entry`'s model of `variant` at its default scope changed by `overrides` (scope
    parameters by their option names) and explore it.

    `only` restricts fault targets (an actor model's scope split, ``--only``); `until` searches
    on past other specs' violations until that spec breaks (the zoo's way: a flaw may break
    another spec first); the violations a baseline `recorded` (``--baseline``) do not end the
    search, so that one of them cannot hide a new one. A KeyboardInterrupt ends the search
    without a verdict: `Interrupted`.
    """
    try:
        params = entry.scope(overrides, profile)
        model = entry.make(variant, overrides, profile)
    except ValueError as exc:
        raise CheckError(str(exc)) from None
    if only:
        if not isinstance(model, ActorModel):
            raise CheckError(f"--only applies to the actor models, not {entry.name}")
        try:
            if not symmetry:
                model.drop_symmetry()
            model.restrict(only)
        except ValueError as exc:
            raise CheckError(str(exc)) from None
    specs = list(dict.fromkeys(p.spec for p in model.properties()))
    for name in ([until] if isinstance(until, str) else sorted(until or ())):
        if name in specs:
            continue
        raise CheckError(f"--until {name}: not a spec of model {entry.name} (its specs: "
                         f"{', '.join(specs)})")
    watch_search = watcher if watcher is not None else _unwatched
    try:
        label = variant if profile == "fixed" else f"{variant}, profile {profile}"
        with watch_search(f"{entry.name} ({label})") as watch:
            if checkpoint is not None and watch is not None:
                checkpoint.notify = watch.saved
            result = explore(model, symmetry=symmetry, bounds=bounds,
                             stop_at_first=not keep_going, progress=watch,
                             action_kinds=entry.action_kinds, until=until,
                             checkpoint=checkpoint, workers=workers,
                             past=recorded_specs(recorded, entry.name, variant))
    except CheckpointError as exc:
        raise CheckError(f"--checkpoint: {exc}") from None
    except EdgeLogError as exc:
        raise CheckError(str(exc)) from None
    except KeyboardInterrupt:
        raise Interrupted(entry.name) from None
    return CheckRun(model, result, params)


def _unwatched(label: str) -> AbstractContextManager[None]:
    return nullcontext(None)


@dataclass(frozen=True)
class CheckReport:
    """What `partsafe check` found: its searches, and the planner's check when every model was
    checked (`planner` is None when one model was).

    The verdict is the worst of the runs' (`report.overall`); the faithful planner's known
    findings count against it only when `strict` (`PlannerCheck.verdict`).
    """

    runs: Sequence[CheckRun]
    planner: PlannerCheck | None
    strict: bool

    @property
    def every_model(self) -> bool:
        return self.planner is not None

    @property
    def verdict(self) -> str:
        return overall([run.result.result for run in self.runs]
                       + ([self.planner.verdict(self.strict)] if self.planner is not None else []))

    @property
    def known(self) -> list[str]:
        """The known findings of the faithful planner that were reported, not failed on."""
        return self.planner.known if self.planner is not None and not self.strict else []

    def as_json(self) -> dict[str, Any]:
        """`partsafe check --json`: one model's result, or every model's (the planner second)
        under the overall verdict."""
        docs = [result_json(run.model, run.result) for run in self.runs]
        if self.planner is None:
            return docs[0]
        docs.insert(1, check_json(self.planner, self.strict))
        return {"result": self.verdict, "known_findings": {"planner": self.known},
                "strict": self.strict, "models": docs}

    def junit(self, recorded: Collection[Finding] = frozenset()) -> str:
        """`partsafe check --junit`: a suite per search, and the planner's; the findings a
        baseline `recorded` do not fail their cases."""
        extra = ([planner_suite(self.planner, self.strict, recorded)]
                 if self.planner is not None else [])
        return junit([(run.model, run.result) for run in self.runs], extra=extra,
                     recorded=recorded)


def recorded_specs(recorded: Collection[Finding], model: str, variant: str) -> frozenset[str]:
    """The specs whose violations of `model`'s `variant` a baseline records."""
    subject = check_subject(model, variant)
    return frozenset(f.spec for f in recorded
                     if f.command == "check" and f.kind == "violation" and f.subject == subject)


def check_models(entries: Sequence[ModelEntry], variant: str, overrides: dict[str, int], *,
                 planner: bool, strict: bool, bounds: Bounds, symmetry: bool, keep_going: bool,
                 until: str | None = None, checkpoint: Checkpoint | None = None,
                 workers: int = 1, only: dict[str, frozenset[str]] | None = None,
                 watcher: Watcher | None = None, profile: str = "fixed",
                 recorded: Collection[Finding] = ()) -> CheckReport:
    """`partsafe check`: each of `entries` searched in turn (`run_check`), then, with `planner`,
    the planner's check over every pair with 1 to `DEFAULT_REPLICAS` indices."""
    runs = [run_check(entry, variant, overrides, bounds=bounds, symmetry=symmetry,
                      keep_going=keep_going, until=until, checkpoint=checkpoint,
                      workers=workers, only=only, watcher=watcher, profile=profile,
                      recorded=recorded)
            for entry in entries]
    return CheckReport(runs, check_planner(DEFAULT_REPLICAS) if planner else None, strict)


def checkpoint_summary(file: Path) -> dict[str, Any]:
    """`partsafe checkpoint --json`: the search a checkpoint holds, how far it got, and whether
    this installation can resume it (the same code). Raises `CheckpointError` for a file that is
    not a checkpoint this partsafe reads."""
    header = read_header(file)
    sig = header["signature"]
    return {"model": sig["model"], "variant": sig["variant"], "scope": sig["scope"],
            "symmetry": sig["symmetry"], "depth": header["depth"], "states": header["states"],
            "seconds": round(header["seconds"], 1), "written": header["written"],
            "hash_seed": header["hash_seed"], "code": header["code"],
            "resumable_here": header["code"] == code_digest(),
            "bytes": file.stat().st_size, "edge_bytes": _edge_bytes(file)}


def _edge_bytes(file: Path) -> int:
    """The size of the edges kept beside the checkpoint `file` (engine/edges.py), 0 if none."""
    edges = edges_beside(file)
    return sum(f.stat().st_size for f in edges.iterdir()) if edges.is_dir() else 0

"""Random walks of the catalogue's models: the protocol lines of simulated logs start here.

A walk starts in a random initial state of a model's fixed variant (`catalog.MODELS`) and takes
a random successor at each step, drawn from the successors in a canonical order (`_canonical`),
so that the same seed makes the same walk in every process. `walk` gives a walk's events; `Walk`
also the states before and after each step, from which `.scripts` reads what members log.
"""

from __future__ import annotations

import dataclasses
import random
from collections.abc import Iterator
from typing import Any

from partsafe.checker.protocols import catalog
from partsafe.traces import events as ev

#: longest a random walk may run before it is discarded (they end far sooner: budgets run out)
MAX_STEPS = 20_000


def walk(model_name: str = "membership", *, seed: int | str = 1, max_steps: int = 200,
         overrides: dict[str, int] | None = None) -> Iterator[ev.Event]:
    """One random walk of a model of the catalogue: its events, `order` set to the step."""
    for step, events, _world, _next in Walk(model_name, overrides or {}, random.Random(seed),
                                             max_steps, strict=False):
        for e in events:
            yield dataclasses.replace(e, order=step)


class Walk:
    """A random walk of a model of the catalogue (its fixed variant), step by step: iterating
    gives (step, events, world before, world after); step 0 is the initial state's events (both
    worlds the initial one). It ends where nothing can happen, or after `max_steps` (`strict`:
    raising `Unfinished`). `nodes` are the model's node names, oldest first."""

    def __init__(self, model_name: str, overrides: dict[str, int], rng: random.Random,
                 max_steps: int, strict: bool = True) -> None:
        self.model: Any = catalog.MODELS[model_name].make("fixed", overrides)
        self.nodes: tuple[str, ...] = tuple(getattr(self.model, "names", ()))
        self.rng = rng
        self.max_steps = max_steps
        self.strict = strict
        self._keys: dict[Any, str] = {}

    def _key(self, successor: tuple[Any, Any]) -> str:
        action = successor[0]
        known = self._keys.get(action)
        if known is None:
            known = self._keys[action] = _canonical(action)
        return known

    def __iter__(self) -> Iterator[tuple[int, tuple[ev.Event, ...], Any, Any]]:
        model, rng = self.model, self.rng
        state = rng.choice(list(model.init_states()))
        yield 0, tuple(model.init_events(state)), state, state
        for step in range(1, self.max_steps + 1):
            # in a canonical order: the model lists them as its frozensets iterate, which
            # depends on string hashing (PYTHONHASHSEED), and the same seed must make the same
            # walk
            successors = sorted(model.successors(state), key=self._key)
            if not successors:
                return
            action, nxt = rng.choice(successors)
            yield step, tuple(model.step_events(state, action, nxt)), state, nxt
            state = nxt
        if self.strict:
            raise Unfinished(self.model.name)


def _canonical(obj: Any) -> str:
    """A text of `obj` that does not depend on the order its sets iterate in."""
    if isinstance(obj, frozenset | set):
        return "{" + ",".join(sorted(_canonical(x) for x in obj)) + "}"
    if isinstance(obj, tuple):
        return f"{type(obj).__name__}({','.join(_canonical(x) for x in obj)})"
    if dataclasses.is_dataclass(obj) and not isinstance(obj, type):
        inner = ",".join(_canonical(getattr(obj, f.name)) for f in dataclasses.fields(obj))
        return f"{type(obj).__name__}({inner})"
    return repr(obj)


class Unfinished(Exception):
    """A walk still going at MAX_STEPS: discarded."""

"""The search engine, apart from any protocol (Stateright's split: a `Model` says what a system is
and what must hold in it; the checker decides how to search it).

Public API (each name is loaded on first use): `Model`, `Property`, `Goal`, `Lasso`
(model.py); `explore` (bfs.py), the one entry point, with `Bounds`, `Result`, `Trace`,
`Violation`, `Progress` (result.py); `Checkpoint` (checkpoint.py).

- model.py        the model interface: initial states, actions, next state, properties, goals
- bfs.py          `explore()`: the breadth-first search over levels, bounds, signals, verdict
- expand.py       the one expansion loop, run by the search and by every worker
- workers.py      worker processes that expand a level's share in batches
- fingerprints.py the fingerprint of a state and the visited table
- checkpoint.py, edges.py   a search saved and resumed; the edges kept for lasso properties
- lassos.py, rebuild.py, result.py   lassos judged after a search, traces rebuilt, result types
"""

from partsafe._api import lazy_api

_API = {
    "Model": "model", "Property": "model", "Goal": "model", "Lasso": "model",
    "explore": "bfs",
    "Bounds": "result", "Result": "result", "Trace": "result", "Violation": "result",
    "Progress": "result",
    "Checkpoint": "checkpoint",
}
__all__ = sorted(_API)
__getattr__ = lazy_api(__name__, _API)

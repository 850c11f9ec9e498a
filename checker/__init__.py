"""The checker: the engines that search the models and judge logs, and the command line.

Public API (each name is loaded on first use):

- `explore`, `Model`, `Bounds`, `Result`: the search engine (engine/): one entry point that
  searches a `Model` breadth first and returns its verdict with the shortest counterexample;
- `ActorModel`: a protocol's node handlers with a network and fault budgets, as one `Model`
  (actor/);
- `catalog`: the protocol models `partsafe check` knows, by name (protocols/);
- `run_check`, `run_zoo`: a model checked at a scope, and the bug zoo (run.py, zoo.py);
- `validate`: the logs of a real cluster judged by the spec monitors (validation/).

The folders, by role:

- engine/      the model interface and the search (bfs, the expansion loop, workers, checkpoints)
- actor/       the actor layer: node handlers, network, faults, symmetry
- protocols/   one module per protocol model, and the catalog
- planner/     the migration planner's own exhaustive checker
- validation/  log validation: the local engine, shards, the Spark engine, simulated logs
- cli/         the `partsafe` commands (click), and nothing else
- run.py, zoo.py, artifact.py, bench.py, report.py   what the commands call: a check run, the
  bug zoo, counterexample artifacts, the benchmark suite, the shared report views
"""

from partsafe._api import lazy_api

_API = {
    "explore": "engine.bfs", "Model": "engine.model", "Bounds": "engine.result",
    "Result": "engine.result",
    "ActorModel": "actor.model",
    "catalog": "protocols.catalog",
    "run_check": "run", "run_zoo": "zoo",
    "validate": "validation.local",
}
__all__ = sorted(_API)
__getattr__ = lazy_api(__name__, _API)

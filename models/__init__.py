"""The Z3 encodings.

Public API (each name is loaded on first use): `System`, a protocol as a symbolic transition
system (models/system.py; one per protocol: membership.py, migration.py, ignite.py);
`prove_model`, every spec of a model as `partsafe prove` judges it (bounded model checking in
models/bmc.py, proofs in models/induction.py); `shortest_safe_plan`, `check_plan` and
`OracleResult`, the migration-plan oracle (000 §3).
"""

from partsafe._api import lazy_api

_API = {"shortest_safe_plan": "planner_oracle", "check_plan": "planner_oracle",
        "OracleResult": "planner_oracle", "System": "system", "prove_model": "prove"}
__all__ = sorted(_API)
__getattr__ = lazy_api(__name__, _API)

"""The Z3 encodings.

Public API (each name is loaded on first use): `shortest_safe_plan`, `check_plan` and
`OracleResult`, the migration-plan oracle (000 §3).
"""

from partsafe._api import lazy_api

_API = {"shortest_safe_plan": "planner_oracle", "check_plan": "planner_oracle",
        "OracleResult": "planner_oracle"}
__all__ = sorted(_API)
__getattr__ = lazy_api(__name__, _API)

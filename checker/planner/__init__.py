"""The migration planner's own checker: every (current, target) pair of replica arrays up to a
size, each plan judged by the PLAN-* specs (000 §3).

Public API (each name is loaded on first use): `check_planner`, `PlannerCheck`, `judge`
(check.py); `canonical_pairs` (space.py).

- space.py  the exhaustive small-scope space of (current, target) pairs
- check.py  each plan judged; the result, its JSON, the cross-check with the Z3 oracle; the
            check's scope (`check_scope`) and a flaw's witness pair (`witness`, for the zoo)
- view.py   terminal and JUnit views
"""

from partsafe._api import lazy_api

_API = {"check_planner": "check", "PlannerCheck": "check", "judge": "check",
        "canonical_pairs": "space"}
__all__ = sorted(_API)
__getattr__ = lazy_api(__name__, _API)

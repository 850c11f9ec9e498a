"""The lab: real Hazelcast and Apache Ignite 3 clusters run here under seeded faults,
recorded and judged.

Public API: `run_lab` (a Hazelcast run: checker/lab/run.py), `LabConfig`, `LabReport`,
`resolve` (a Hazelcast release's jar and client: checker/lab/releases.py), `run_ignite_lab`,
`judge_ignite` and `resolve_ignite` (an Ignite 3 run: checker/lab/ignite.py), `parse_faults`
(checker/lab/faults.py).
"""

from partsafe._api import lazy_api

_API = {
    "run_lab": "run", "LabConfig": "run", "LabReport": "run",
    "resolve": "releases", "LabSetupError": "releases",
    "parse_faults": "faults",
    "run_ignite_lab": "ignite", "judge_ignite": "ignite", "resolve_ignite": "ignite",
}
__all__ = sorted(_API)
__getattr__ = lazy_api(__name__, _API)

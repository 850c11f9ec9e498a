"""The lab: real Hazelcast clusters run here under seeded faults, recorded and judged.

Public API: `run_lab` (one run: checker/lab/run.py), `LabConfig`, `LabReport`, `resolve` (a
release's jar and client: checker/lab/releases.py), `parse_faults` (checker/lab/faults.py).
"""

from partsafe._api import lazy_api

_API = {
    "run_lab": "run", "LabConfig": "run", "LabReport": "run",
    "resolve": "releases", "LabSetupError": "releases",
    "parse_faults": "faults",
}
__all__ = sorted(_API)
__getattr__ = lazy_api(__name__, _API)

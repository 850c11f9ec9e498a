"""The invariant catalogue: one monitor per invariant, used by the explorer and by log validation.

Public API (each name is loaded on first use):

- `registry`, `Spec`, `all_specs`, `get`, `DESIGNS`: the catalogue of specs, each with its design
  (by number and public name) and section;
- `Monitor`, `run`: the monitor interface (an automaton over events with hashable state) and a
  run of monitors over a sequence of events;
- `rules`: the designs' shared rules (the partition table stamp, Ignite's calculated
  assignments), pure functions both the reference implementation and the specs use.

This package imports nothing of `partsafe.checker`.
"""

from partsafe._api import lazy_api

_API = {
    "registry": "", "rules": "",
    "Spec": "registry", "all_specs": "registry", "get": "registry", "DESIGNS": "registry",
    "Monitor": "monitor", "run": "monitor",
}
__all__ = sorted(_API)
__getattr__ = lazy_api(__name__, _API)

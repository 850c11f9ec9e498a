"""The protocol models `partsafe check` knows, one module per model, and their catalog.

Public API (each name is loaded on first use): `catalog` (the models by name: `catalog.MODELS`,
`catalog.get`), `ModelEntry`, `Param` (entry.py).

- entry.py       `ModelEntry` (scope parameters, variants, the bug zoo, a builder) and `Param`
- membership.py  Hazelcast 3.9 membership (002): its coverage goals and builder
- partition.py   Hazelcast 3.7 and 4.1 partition service (000, 003, 004): migration, shutdown,
                 parallel
- ignite.py      Apache Ignite 3 rebalance (001)
- twophase.py    TwoPhase, the explorer's calibration model
- catalog.py     every model by name
"""

from partsafe._api import lazy_api

_API = {"catalog": "", "ModelEntry": "entry", "Param": "entry"}
__all__ = sorted(_API)
__getattr__ = lazy_api(__name__, _API)

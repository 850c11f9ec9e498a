"""Log validation: the spec monitors of `partsafe.specs`, unchanged, over the events of real logs.

Public API (each name is loaded on first use): `validate` and its `Report` (local.py), the local
engine; `validate_spark` (spark/), the same verdict on Spark.

- local.py     `validate()`: one process reads the files one after the other
- shards.py    the engine-agnostic core: event order, monitor parts and their keys, shards
- spark/       the Spark engine (session, inputs and splits, the workers' code, the pipeline)
- engines.py   `--engine auto`: which engine judges an input
- view.py      the report in a terminal and as JUnit XML, and the progress bars
- simulate/    realistic multi-member logs from random walks of the models, with injected
               violations and a manifest of where `validate` must report them
"""

from partsafe._api import lazy_api

_API = {"validate": "local", "Report": "local", "validate_spark": "spark.pipeline"}
__all__ = sorted(_API)
__getattr__ = lazy_api(__name__, _API)

"""Each package's public API, loaded on first use (PEP 562).

A package's ``__init__`` lists its API as ``name -> submodule``; ``import partsafe.traces`` then
costs nothing, and ``partsafe.traces.Scanner`` imports the one module that holds it. The CLI's
start-up and the layer rule (a lower package never imports ``partsafe.checker``) stay as they are.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from importlib import import_module
from typing import Any


def lazy_api(package: str, api: Mapping[str, str]) -> Callable[[str], Any]:
    """The ``__getattr__`` of `package`: ``api`` maps each public name to the submodule (relative
    to `package`) that defines it; a name that maps to ``""`` is the submodule itself, as is one
    that maps to a dotted path ending in the name (``"protocols.catalog"`` for ``catalog``)."""

    def __getattr__(name: str) -> Any:
        try:
            where = api[name]
        except KeyError:
            raise AttributeError(f"module {package!r} has no attribute {name!r}") from None
        if not where:
            return import_module(f"{package}.{name}")
        module = import_module(f"{package}.{where}")
        return module if where.endswith(f".{name}") else getattr(module, name)

    return __getattr__

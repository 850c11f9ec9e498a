"""Each package's `__init__` states its public API: every name it lists resolves to the object
the named module defines, importing a package loads none of its modules, and a name it does not
list is an AttributeError."""

from __future__ import annotations

import importlib
import inspect
import json
import subprocess
import sys

import pytest

PACKAGES = ("partsafe.traces", "partsafe.specs", "partsafe.refimpl", "partsafe.models",
            "partsafe.checker", "partsafe.checker.engine", "partsafe.checker.actor",
            "partsafe.checker.protocols", "partsafe.checker.planner",
            "partsafe.checker.validation")


@pytest.mark.parametrize("name", PACKAGES)
def test_every_listed_name_resolves(name: str) -> None:
    package = importlib.import_module(name)
    assert package.__all__, f"{name} states no API"
    for attr in package.__all__:
        value = getattr(package, attr)
        assert value is not None, (name, attr)
        if isinstance(value, type) or callable(value) or inspect.ismodule(value):
            where = value.__name__ if inspect.ismodule(value) else value.__module__
            assert where.startswith("partsafe."), (name, attr, where)
    with pytest.raises(AttributeError, match="no attribute 'nothing_here'"):
        package.nothing_here  # noqa: B018


def test_the_api_is_the_objects_the_modules_define() -> None:
    from partsafe import checker, specs, traces
    from partsafe.checker.engine.bfs import explore
    from partsafe.checker.protocols import catalog
    from partsafe.checker.validation.local import validate
    from partsafe.specs.registry import get
    from partsafe.traces.scanner import Scanner

    assert checker.explore is explore and checker.validate is validate
    assert checker.catalog is catalog and specs.get is get and traces.Scanner is Scanner


def test_importing_the_packages_loads_none_of_their_modules() -> None:
    code = (f"import json, sys\nfor p in {PACKAGES!r}: __import__(p)\n"
            "print(json.dumps(sorted(m for m in sys.modules if m.startswith('partsafe.'))))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True, timeout=60).stdout
    assert json.loads(out) == sorted({"partsafe._api", *PACKAGES})


def test_the_lower_layers_as_a_user_imports_them_bring_no_checker() -> None:
    """``python -c "import partsafe.traces, partsafe.refimpl, partsafe.specs"`` and their APIs."""
    code = ("import sys, partsafe.traces as t, partsafe.refimpl as r, partsafe.specs as s\n"
            "for p in (t, r, s):\n"
            "    for n in p.__all__: getattr(p, n)\n"
            "print([m for m in sys.modules if m.startswith('partsafe.checker')])")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True, timeout=60).stdout
    assert out.strip() == "[]"


def test_the_version_reports_name_is_the_distributions() -> None:
    """`partsafe.__version__`, which the HTML and SARIF reports name, is pyproject's."""
    import tomllib
    from pathlib import Path

    import partsafe

    pyproject = tomllib.loads((Path(__file__).parents[1] / "pyproject.toml").read_text())
    assert partsafe.__version__ == pyproject["project"]["version"]

"""The layers point one way: the reference implementation, the specs and the traces know nothing
of the checker (the engines, the models built from them, the command line)."""

from __future__ import annotations

import subprocess
import sys

LOWER = ("traces", "refimpl", "specs")


def test_the_lower_layers_import_no_checker_module() -> None:
    """Every module of traces/, refimpl/ and specs/, imported in a fresh interpreter, brings no
    `partsafe.checker` module with it (a function-local import counts when its function runs, so
    this also reads each module's text)."""
    code = (
        "import importlib, pkgutil, sys\n"
        f"for pkg in {LOWER!r}:\n"
        "    p = importlib.import_module('partsafe.' + pkg)\n"
        "    for m in pkgutil.iter_modules(p.__path__):\n"
        "        importlib.import_module(f'partsafe.{pkg}.{m.name}')\n"
        "print(sorted(k for k in sys.modules if k.startswith('partsafe.checker')))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True, timeout=120)
    assert out.stdout.strip() == "[]"


def test_no_lower_module_imports_the_checker_even_inside_a_function() -> None:
    """The first test runs no function; this one reads every import statement, function-local
    ones included."""
    import ast
    import importlib
    import pkgutil
    from pathlib import Path

    for pkg in LOWER:
        package = importlib.import_module(f"partsafe.{pkg}")
        for m in pkgutil.iter_modules(package.__path__):
            tree = ast.parse((Path(package.__path__[0]) / f"{m.name}.py").read_text())
            for node in ast.walk(tree):
                names = ([a.name for a in node.names] if isinstance(node, ast.Import) else
                         [node.module or ""] if isinstance(node, ast.ImportFrom) else [])
                assert not any(n.startswith("partsafe.checker") for n in names), (
                    f"partsafe.{pkg}.{m.name}:{node.lineno} imports {names}")

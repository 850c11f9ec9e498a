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


# --- the generic actor layer knows no protocol ----------------------------------------------------

#: the generic actor layer: every module of checker/actor/, and the node-handler interface
ACTOR_PACKAGE = "partsafe.checker.actor"
ACTOR_INTERFACE = "partsafe.refimpl.actor"
#: what the generic actor layer may import of partsafe: the engine's model interface, itself, the
#: node-handler interface, the monitor interface and the event base class
ALLOWED_PREFIXES = ("partsafe.checker.engine.", f"{ACTOR_PACKAGE}.")
ALLOWED_MODULES = {ACTOR_PACKAGE, ACTOR_INTERFACE, "partsafe.specs.monitor",
                   "partsafe.traces.events"}
ALLOWED_EVENT_NAMES = {"Event", "UNKNOWN_MEMBER"}


def _actor_modules() -> list[tuple[str, str]]:
    """(module name, source) of every module of the generic actor layer."""
    import importlib
    import pkgutil
    from pathlib import Path

    package = importlib.import_module(ACTOR_PACKAGE)
    out = [(ACTOR_INTERFACE, Path(importlib.import_module(ACTOR_INTERFACE).__file__ or "")
            .read_text())]
    for m in pkgutil.iter_modules(package.__path__):
        out.append((f"{ACTOR_PACKAGE}.{m.name}",
                    (Path(package.__path__[0]) / f"{m.name}.py").read_text()))
    return out


def _protocol_event_names() -> set[str]:
    """The event classes of partsafe.traces.events: each is something Hazelcast or Ignite logs."""
    from partsafe.traces import events

    return {name for name, obj in vars(events).items()
            if isinstance(obj, type) and issubclass(obj, events.Event) and obj is not events.Event}


def test_the_generic_actor_layer_imports_nothing_protocol_specific() -> None:
    """checker/actor/ and refimpl/actor.py import no protocol (refimpl.membership,
    partition_service, ignite, ...), no protocol's specs or catalogue, and of the event
    vocabulary only the base class; and name no Hazelcast or Ignite event anywhere in their code.
    What a crash or a suspicion means is the protocol's (`Protocol.on_crash`,
    `Protocol.suspicions`)."""
    import ast

    event_names = _protocol_event_names()
    assert {"MemberCrashed", "MemberSuspected", "RaftLeader"} <= event_names
    found: list[str] = []
    for module, source in _actor_modules():
        package = module.rsplit(".", 1)[0]
        for node in ast.walk(ast.parse(source)):
            if isinstance(node, ast.Import):
                imports = [(a.name, None) for a in node.names]
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:  # a relative import, resolved against the module's package
                    parts = package.split(".")
                    base = ".".join(parts[:len(parts) - node.level + 1] + ([base] if base else []))
                imports = [(base, a.name) for a in node.names]
            else:
                used = (node.id if isinstance(node, ast.Name) else
                        node.attr if isinstance(node, ast.Attribute) else None)
                if used in event_names:
                    found.append(f"{module}:{node.lineno} names the event {used}")
                continue
            for name, what in imports:
                if not name.startswith("partsafe"):
                    continue
                if what is not None and f"{name}.{what}".startswith(ALLOWED_PREFIXES):
                    continue  # from partsafe.checker.actor import network
                if name not in ALLOWED_MODULES and not name.startswith(ALLOWED_PREFIXES):
                    found.append(f"{module}:{node.lineno} imports {name}")
                elif name == "partsafe.traces.events" and what not in ALLOWED_EVENT_NAMES:
                    found.append(f"{module}:{node.lineno} imports {what or 'the module'} "
                                 f"of {name}")
    assert not found, "\n".join(found)


def test_importing_the_generic_actor_layer_loads_no_protocol() -> None:
    """Imported in a fresh interpreter, the generic actor layer brings no module of a protocol,
    of the specs but the monitor interface, or of the model catalogue with it."""
    modules = [m for m, _ in _actor_modules()]
    code = (
        "import importlib, sys\n"
        f"for m in {modules!r}:\n"
        "    importlib.import_module(m)\n"
        "print(sorted(k for k in sys.modules if k.startswith(('partsafe.refimpl.', "
        "'partsafe.specs.', 'partsafe.checker.protocols'))))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True, timeout=120)
    assert out.stdout.strip() == repr(sorted([ACTOR_INTERFACE, "partsafe.specs.monitor"]))


def test_no_file_names_a_path_outside_the_repository() -> None:
    """Designs are cited by number and public name, the real systems' sources by class and
    method: no tracked file points at a document that is not in the repository."""
    import re
    from pathlib import Path

    root = Path(__file__).resolve().parents[1]
    names = ("DESIGN", "LOG_FORMATS", "PLANNER", "REBALANCE", "TESTS", "INVARIANTS")
    outside = re.compile("|".join([*(rf"\b{n}\.md\b" for n in names), r"\.\./shared\b",
                                   r"\bfidelity/", r"\b00[0-4]_[0-9a-f]{16}\.txt\b"]))
    listed = subprocess.run(["git", "ls-files"], cwd=root, capture_output=True, text=True,
                            check=True).stdout.split()
    found = [f"{f}:{n}: {line.strip()}" for f in listed
             if f.endswith((".py", ".md", ".toml", ".lark")) and f != "tests/test_layers.py"
             for n, line in enumerate((root / f).read_text().splitlines(), 1)
             if outside.search(line)]
    assert found == []

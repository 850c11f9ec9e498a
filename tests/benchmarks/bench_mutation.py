"""Mutation benchmark: can partsafe's specs fail? The share of mutants of the protocol handlers
(refimpl/) that `partsafe check` kills, per protocol.

Not part of the test suite. It needs cosmic-ray (`pip install -e ".[bench]"`). Run it with

    python tests/benchmarks/bench_mutation.py                      # 20 mutants per protocol
    python tests/benchmarks/bench_mutation.py --per-protocol 25 --seed 1 --protocol ignite
    python tests/benchmarks/bench_mutation.py --rescore mutation-report.json   # after triage

cosmic-ray enumerates the mutants of each protocol's modules (its operators: comparison, binary
and unary operators, and/or, True/False, `not` added to a condition, numbers +1 and -1,
break/continue, exception types, loops that never iterate). The benchmark keeps those in the
handlers' logic (`scope_spans`: no docstrings, signatures, type hints, error messages, input
checks, module-level tables, decorators, presentation, or code only a variant or a profile's
rule runs), draws `--per-protocol` of them by `--seed` (`sample`), applies each to a private copy
of the package and runs the protocol's checks there, one after the other until one kills it, at
most `--jobs` (2) at a time:

- membership (refimpl/membership.py): `partsafe check membership`
- partition service (refimpl/partition_service.py, partition_table.py): `partsafe check
  migration`, `partsafe check parallel`, `parallel --max-parallel 1`, `shutdown --losses 1`,
  `migration --losses 1`
- ignite (refimpl/ignite.py, metastore.py): `partsafe check ignite-rebalance`, then with
  `--spares 1 --baseline-changes 1 --restarts 0`, with `--max-term 3` and with `--pre-vote 1`
- planner (refimpl/planner.py): `partsafe check planner`

A check that exits 1 with a violation or a coverage gap kills the mutant; one that cannot run
(exit 2), whose handler raises (the MODEL-ERROR violation) or that dies with a traceback kills it
"by error"; one that runs past the timeout kills it by timeout; exit 0 on every check: the mutant
survives; exit 3 (a bound reached): undecided (`classify`). The score of a protocol is
killed / (sampled - equivalent), every kind of kill counted, an undecided or untriaged mutant
counted as not killed; the target is 90 %.

tests/benchmarks/mutation_triage.toml classifies survivors by their stable id (module, enclosing
function, operator and a hash of the mutated text: `stable_id`): "equivalent" (with why: no spec
could tell it from the original) or "missed" (with the spec, existing or still to be written,
that should kill it). The report lists every survivor with file:line, operator, diff and its
triage; it is printed, and written as JSON to --out. Exit status: 0 when every protocol meets the
target, 1 when one does not, 2 on bad input (an unknown protocol, a malformed triage file, a
baseline that does not pass), 130 when interrupted.
"""

from __future__ import annotations

import argparse
import ast
import contextlib
import difflib
import hashlib
import json
import os
import queue
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
import tomllib
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor, as_completed
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.markup import escape
from rich.table import Table

#: the repository this file belongs to: its top level is the `partsafe` package
REPO = Path(__file__).resolve().parents[2]
#: the package's parts a check imports (the copy a mutant runs in holds exactly these)
PACKAGE_PARTS = ("__init__.py", "__main__.py", "_api.py", "checker", "models", "refimpl", "specs",
                 "traces")
TRIAGE_FILE = Path(__file__).with_name("mutation_triage.toml")
TARGET = 0.90
MAX_JOBS = 2


@dataclass(frozen=True)
class Protocol:
    """One protocol: the modules mutated and the `partsafe check` models that judge a mutant."""

    name: str
    modules: tuple[str, ...]
    checks: tuple[str, ...]


#: The checks of a protocol: the model's default scope first, then the larger scopes that reach
#: what the default one leaves out (docs/mutation.md, "The checks"): a limit of parallel
#: migrations below the partitions, lost messages, a baseline change that leaves the
#: assignments as they are, a second leader change, and the separate pre-vote round. Each
#: passes on the unmutated code (the self-check makes sure).
PROTOCOLS: dict[str, Protocol] = {p.name: p for p in (
    Protocol("membership", ("refimpl/membership.py",), ("membership",)),
    Protocol("partition", ("refimpl/partition_service.py", "refimpl/partition_table.py"),
             ("migration", "parallel", "parallel --max-parallel 1", "shutdown --losses 1",
              "migration --losses 1")),
    Protocol("ignite", ("refimpl/ignite.py", "refimpl/metastore.py"),
             ("ignite-rebalance", "ignite-rebalance --spares 1 --baseline-changes 1 --restarts 0",
              "ignite-rebalance --max-term 3", "ignite-rebalance --pre-vote 1")),
    Protocol("planner", ("refimpl/planner.py",), ("planner",)),
)}

# --- what is mutated ------------------------------------------------------------------------------

#: cosmic-ray operators left out, with why
SKIPPED_OPERATORS: dict[str, str] = {
    "core/RemoveDecorator": "decorators declare (staticmethod, property, dataclass): not logic",
}
#: functions left out wherever they are (by name), with why
SKIPPED_NAMES: dict[str, str] = {
    "__repr__": "presentation: text form",
    "__str__": "presentation: text form",
    "describe": "presentation: the trace view of a state",
    "describe_message": "presentation: the trace view of a message",
    "as_dict": "presentation: the JSON form",
    "is_dead": "the checker's reduction: messages a member ignores for ever (audited by the "
               "tests' dead_claim_errors, not by a spec)",
    "channels": "the model's environment: which connections are ordered, reliable, dead",
    "is_reliable": "the model's environment: the connections that lose no message",
    "is_timeout": "the model's environment: which timers wait for the network to settle",
    "is_prompt": "the model's environment: which retries fire before any timeout",
    "timing": "the model's environment: the timers' scheduling",
}
#: functions and classes left out per module (by qualified name), with why
SKIPPED_FUNCTIONS: dict[str, dict[str, str]] = {
    "refimpl/membership.py": {
        "_fmt": "presentation: a member list in describe_message",
        "Membership._v": "presentation: a version in describe_message",
    },
    "refimpl/ignite.py": {
        "_show": "presentation: a value in describe",
        "_task": "presentation: an invoke in describe_message",
        "_never_writes": "the checker's reduction: an invoke is_dead claims dead",
        "IgniteRebalance._inert": "the checker's reduction: a watch event is_dead claims dead",
    },
    "refimpl/partition_service.py": {
        "PartitionService._answer_is_dead": "the checker's reduction: an answer is_dead claims "
                                            "dead",
    },
    "refimpl/partition_table.py": {
        "_check_protocol": "input validation: raises on a table the models never build",
        "_check_version": "input validation: raises on a table the models never build",
        "_check_member": "input validation: raises on a table the models never build",
        "_check_replicas": "input validation: raises on a table the models never build",
        "_check_count": "input validation: raises on a table the models never build",
        "_check_comparable": "input validation: raises on a table the models never build",
        "PartitionTable.__post_init__": "input validation: raises on a malformed table",
    },
    "refimpl/planner.py": {
        "_name": "presentation: Java's text of a member",
        "_java": "presentation: Arrays.toString in messages",
        "format_replicas": "presentation: the text form of an array",
        "_Planner._tail": "presentation: the planner's assertion message",
        "_Planner._fail": "presentation: the planner's assertion message",
        "parse_replicas": "input validation: the text of `partsafe plan`",
        "_check_array": "input validation: raises on arrays the check never builds",
        "_check_pair": "input validation: raises on arrays the check never builds",
        "_check_variant": "input validation: an unknown variant name",
        "Decision.__post_init__": "input validation: an unknown decision type",
    },
}
#: operators that turn ``kind is Class`` into ``kind == Class`` (and `is not` into `!=`): the same,
#: as a class equals only itself, so out of scope there (cosmic-ray itself turns ``x is None``
#: only into ``x is not None``)
IS_OPERATORS = frozenset({"core/ReplaceComparisonOperator_Is_Eq",
                          "core/ReplaceComparisonOperator_IsNot_NotEq"})
IS_CLASS = "`is Class` read as `== Class`: a class equals only itself"

Pos = tuple[int, int]  # (line from 1, column from 0, in characters): cosmic-ray's (parso's) form


@dataclass(frozen=True)
class Span:
    """A region of a module left out of the benchmark, and why; `operators` limits it to those
    operators (empty: every operator)."""

    start: Pos
    end: Pos
    reason: str
    operators: frozenset[str] = frozenset()

    def covers(self, start: Pos, end: Pos, operator: str) -> bool:
        return (self.start <= start and end <= self.end
                and (not self.operators or operator in self.operators))


def _char_col(lines: Sequence[str], line: int, byte_col: int) -> int:
    """`ast` counts columns in UTF-8 bytes, cosmic-ray (parso) in characters."""
    return len(lines[line - 1].encode()[:byte_col].decode(errors="replace"))


def _span(lines: Sequence[str], node: ast.AST, reason: str,
          operators: frozenset[str] = frozenset()) -> Span:
    end_line, end_col = node.end_lineno, node.end_col_offset  # type: ignore[attr-defined]
    assert end_line is not None and end_col is not None
    start = (node.lineno, _char_col(lines, node.lineno, node.col_offset))  # type: ignore[attr-defined]
    return Span(start, (end_line, _char_col(lines, end_line, end_col)), reason, operators)


def _definitions(tree: ast.Module) -> Iterator[tuple[str, ast.FunctionDef | ast.AsyncFunctionDef
                                                     | ast.ClassDef]]:
    """Every function and class with its qualified name (``Class.method``, ``f.inner``)."""
    todo: list[tuple[str, ast.AST]] = [("", tree)]
    while todo:
        prefix, node = todo.pop()
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
                name = f"{prefix}{child.name}"
                yield name, child
                todo.append((f"{name}.", child))
            else:
                todo.append((prefix, child))


def scope_spans(source: str, module: str) -> list[Span]:
    """The regions of `module` (its repository path) outside the protocol handlers' logic:
    module-level statements (imports, constants, type aliases, the variant and rule tables),
    docstrings, signatures (parameters, their defaults and hints; cosmic-ray would also turn a
    keyword-only ``*`` into ``+``), type hints (annotations and the type of a ``cast``), ``raise``
    and ``assert`` statements (an error and its message, an internal check), f-strings
    (messages), decorators,
    the functions and classes of `SKIPPED_NAMES` and `SKIPPED_FUNCTIONS`, ``kind is Class`` for
    `IS_OPERATORS`, the condition of an ``if`` that only raises (an input check), a call of a
    function left out (an input check's bounds, a message's parts), and the code only a variant or
    a profile's rule runs (`_gated_spans`)."""
    tree = ast.parse(source)
    lines = source.split("\n")
    spans: list[Span] = []
    for stmt in tree.body:
        if not isinstance(stmt, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            spans.append(_span(lines, stmt, "module level: imports, constants, type aliases, "
                                            "variant and rule tables"))
    skipped = {**SKIPPED_FUNCTIONS.get(module, {})}
    for name, node in _definitions(tree):
        reason = skipped.get(name) or (None if isinstance(node, ast.ClassDef) else
                                       SKIPPED_NAMES.get(name.rsplit(".", 1)[-1]))
        if reason is not None:
            spans.append(_span(lines, node, reason))
        for deco in node.decorator_list:
            spans.append(_span(lines, deco, "decorator"))
        if not isinstance(node, ast.ClassDef):
            head, body = _span(lines, node, ""), _span(lines, node.body[0], "")
            spans.append(Span(head.start, body.start, "signature: parameters, defaults, hints"))
    for node in ast.walk(tree):
        if isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant) \
                and isinstance(node.value.value, str):
            spans.append(_span(lines, node, "docstring"))
        elif isinstance(node, ast.arg) and node.annotation is not None:
            spans.append(_span(lines, node.annotation, "type hint"))
        elif isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and node.returns:
            spans.append(_span(lines, node.returns, "type hint"))
        elif isinstance(node, ast.AnnAssign):
            spans.append(_span(lines, node.annotation, "type hint"))
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Name) \
                and node.func.id == "cast" and node.args:
            spans.append(_span(lines, node.args[0], "type hint"))
        elif isinstance(node, ast.Raise):
            spans.append(_span(lines, node, "raise: an error and its message"))
        elif isinstance(node, ast.If) and not node.orelse \
                and all(isinstance(b, ast.Raise) for b in node.body):
            spans.append(_span(lines, node, "input check: a condition that only raises"))
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Name) \
                and node.func.id in skipped:
            spans.append(_span(lines, node, skipped[node.func.id]))
        elif isinstance(node, ast.Assert):
            spans.append(_span(lines, node, "assert: an internal check"))
        elif isinstance(node, ast.JoinedStr):
            spans.append(_span(lines, node, "message text"))
        elif isinstance(node, ast.Compare) and all(
                isinstance(op, ast.Is | ast.IsNot) for op in node.ops) and all(
                isinstance(c, ast.Name) and c.id[:1].isupper() for c in node.comparators):
            spans.append(_span(lines, node, IS_CLASS, IS_OPERATORS))
    return spans + _gated_spans(tree, lines)


GATED = "variant or profile rule only: `partsafe check MODEL` (fixed) never runs it"


def _is_rules(node: ast.expr) -> bool:
    """``self.rules`` or ``rules``: the rules a protocol instance follows (refimpl/profiles.py)."""
    return (isinstance(node, ast.Attribute) and node.attr == "rules") or (
        isinstance(node, ast.Name) and node.id == "rules")


def _is_variant(node: ast.expr) -> bool:
    return (isinstance(node, ast.Attribute) and node.attr == "variant") or (
        isinstance(node, ast.Name) and node.id == "variant")


def fixed_value(test: ast.expr, flags: dict[str, bool]) -> bool | None:
    """The value of condition `test` when no rule is on (the fixed design, no profile), or None
    when it depends on more: ``"r" in self.rules`` is False, ``"r" not in self.rules`` and
    ``self.rules.isdisjoint(...)`` True, ``variant == "v"`` False for any v but "fixed", a flag of
    `flags` (``self.NAME`` set from such a condition) its value; ``not``, ``and``, ``or`` combine
    them."""
    if isinstance(test, ast.Compare) and len(test.ops) == 1:
        left, op, right = test.left, test.ops[0], test.comparators[0]
        if isinstance(left, ast.Constant) and isinstance(left.value, str) and _is_rules(right) \
                and isinstance(op, ast.In | ast.NotIn):
            return isinstance(op, ast.NotIn)
        for a, b in ((left, right), (right, left)):
            if _is_variant(a) and isinstance(b, ast.Constant) and isinstance(b.value, str) \
                    and b.value != "fixed" and isinstance(op, ast.Eq | ast.NotEq):
                return isinstance(op, ast.NotEq)
        return None
    if isinstance(test, ast.Call) and isinstance(test.func, ast.Attribute) \
            and test.func.attr == "isdisjoint" and _is_rules(test.func.value):
        return True
    if isinstance(test, ast.Attribute) and isinstance(test.value, ast.Name) \
            and test.value.id == "self":
        return flags.get(test.attr)
    if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
        v = fixed_value(test.operand, flags)
        return None if v is None else not v
    if isinstance(test, ast.BoolOp):
        values = [fixed_value(v, flags) for v in test.values]
        absorbing = isinstance(test.op, ast.Or)  # True absorbs an `or`, False an `and`
        if absorbing in values:
            return absorbing
        return (not absorbing) if all(v is not None for v in values) else None
    return None


def _rule_flags(tree: ast.Module) -> dict[str, bool]:
    """Attributes ``self.NAME`` assigned (anywhere, every time) a condition on the rules alone."""
    seen: dict[str, set[bool | None]] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Assign) and len(node.targets) == 1:
            t = node.targets[0]
            if isinstance(t, ast.Attribute) and isinstance(t.value, ast.Name) \
                    and t.value.id == "self":
                seen.setdefault(t.attr, set()).add(fixed_value(node.value, {}))
    return {name: values.pop() for name, values in seen.items()
            if len(values) == 1 and None not in values}


def _gated_spans(tree: ast.Module, lines: Sequence[str]) -> list[Span]:
    """The code only a rule (a variant or a profile's) runs: the branch of an ``if``, a
    conditional expression or an ``and``/``or`` that `fixed_value` rules out, and then every
    function or class referred to only from such code."""
    flags = _rule_flags(tree)
    spans: list[Span] = []

    def between(first: ast.AST, last: ast.AST) -> Span:
        a, b = _span(lines, first, GATED), _span(lines, last, GATED)
        return Span(a.start, b.end, GATED)

    for node in ast.walk(tree):
        if isinstance(node, ast.If):
            v = fixed_value(node.test, flags)
            branch = node.body if v is False else node.orelse if v is True else []
            if branch:
                spans.append(between(branch[0], branch[-1]))
        elif isinstance(node, ast.IfExp):
            v = fixed_value(node.test, flags)
            if v is not None:
                spans.append(_span(lines, node.orelse if v else node.body, GATED))
        elif isinstance(node, ast.BoolOp):
            absorbing = isinstance(node.op, ast.Or)
            for i, value in enumerate(node.values[:-1]):
                if fixed_value(value, flags) is absorbing:  # the rest is never evaluated
                    spans.append(between(node.values[i + 1], node.values[-1]))
                    break
    refs: list[tuple[str, Pos]] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load):
            refs.append((node.id, _span(lines, node, "").start))
        elif isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Load):
            refs.append((node.attr, _span(lines, node, "").end))
    defs = [(name.rsplit(".", 1)[-1], _span(lines, node, GATED)) for name, node in
            _definitions(tree)]
    changed = True
    while changed:
        changed = False
        for name, own in defs:
            if any(s.start <= own.start and own.end <= s.end for s in spans):
                continue
            at = [pos for ref, pos in refs if ref == name and not own.start <= pos <= own.end]
            if at and all(any(s.start <= pos <= s.end for s in spans) for pos in at):
                spans.append(own)
                changed = True
    return spans


def out_of_scope(spans: Iterable[Span], operator: str, start: Pos, end: Pos) -> str | None:
    """Why a mutation of `operator` at `start`..`end` is left out (the innermost region's reason),
    or None when it is in scope."""
    if operator in SKIPPED_OPERATORS:
        return SKIPPED_OPERATORS[operator]
    inner = None
    for span in spans:
        if span.covers(start, end, operator) and (
                inner is None or (span.start, inner.end) >= (inner.start, span.end)):
            inner = span
    return None if inner is None else inner.reason


# --- mutants --------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Mutant:
    """One cosmic-ray work item: `occurrence` of `operator` in `module` (a repository path)."""

    protocol: str
    module: str
    operator: str
    occurrence: int
    start: Pos
    end: Pos
    function: str
    #: the mutated text (the operator, number or condition cosmic-ray changes)
    text: str
    #: the start line's text
    line_text: str
    id: str = ""
    job_id: str = ""

    @property
    def where(self) -> str:
        return f"{self.module}:{self.start[0]}"

    @property
    def operator_short(self) -> str:
        return self.operator.removeprefix("core/")


def _text(lines: Sequence[str], start: Pos, end: Pos) -> str:
    if start[0] == end[0]:
        return lines[start[0] - 1][start[1]:end[1]]
    return "\n".join([lines[start[0] - 1][start[1]:], *lines[start[0]:end[0] - 1],
                      lines[end[0] - 1][:end[1]]])


def stable_id(m: Mutant, ordinal: int) -> str:
    """A survivor's name in the triage file: module, enclosing function, operator and a hash of
    what the mutation changes (the start line's text, stripped, the column in it and the mutated
    text), so that edits elsewhere in the module keep it; `ordinal` numbers mutants equal in all
    of these (cosmic-ray's +1 and -1 of one number), in cosmic-ray's order."""
    line = m.line_text
    indent = len(line) - len(line.lstrip())
    key = f"{line.strip()}\0{m.start[1] - indent}\0{m.text}"
    digest = hashlib.sha256(key.encode()).hexdigest()[:10]
    suffix = f"#{ordinal}" if ordinal else ""
    return f"{m.module}:{m.function}:{m.operator_short}:{digest}{suffix}"


def with_ids(mutants: Iterable[Mutant]) -> list[Mutant]:
    """`mutants` (in cosmic-ray's order) with their stable ids."""
    seen: Counter[str] = Counter()
    out = []
    for m in mutants:
        base = stable_id(m, 0)
        out.append(_replace(m, id=stable_id(m, seen[base])))
        seen[base] += 1
    return out


def _replace(m: Mutant, **changes: Any) -> Mutant:
    return Mutant(**{**asdict(m), **changes})


def rank(m: Mutant, seed: int) -> str:
    """A mutant's place in the draw: a hash of `seed`, its protocol and its stable id."""
    return hashlib.sha256(f"{seed}:{m.protocol}:{m.id}".encode()).hexdigest()


def sample(mutants: Sequence[Mutant], n: int, seed: int) -> list[Mutant]:
    """`n` of a protocol's in-scope `mutants` (all if fewer), sorted by stable id: the `n` that
    rank first (`rank`). The same mutants and `seed` give the same sample whatever their order,
    and a mutant added to or gone from the pool (an edit of the code, a change of scope) changes
    the sample by that mutant at most, so the triage of the others stays useful."""
    if n < 0:
        raise ValueError(f"a sample of {n} mutants")
    return sorted(sorted(mutants, key=lambda m: rank(m, seed))[:n], key=lambda m: m.id)


@dataclass
class Enumeration:
    """A protocol's mutants as cosmic-ray enumerates them, split by the benchmark's scope."""

    in_scope: list[Mutant]
    #: reason -> how many mutants it leaves out
    left_out: Counter[str]


def enumerate_mutants(protocol: Protocol, package: Path, session: Path) -> Enumeration:
    """cosmic-ray's work items for `protocol`'s modules in `package` (a copy of the package),
    recorded in the session database `session` (cosmic-ray's WorkDB: `cr-report` reads it);
    those out of scope are marked skipped there, as cosmic-ray's own filters do."""
    from cosmic_ray.commands.init import init
    from cosmic_ray.work_db import WorkDB, use_db
    from cosmic_ray.work_item import WorkerOutcome, WorkResult

    sources = {m: (package / m).read_text(encoding="utf-8") for m in protocol.modules}
    spans = {m: scope_spans(src, m) for m, src in sources.items()}
    lines = {m: src.split("\n") for m, src in sources.items()}
    tree_names = {m: _NameIndex(src) for m, src in sources.items()}
    kept: list[Mutant] = []
    left_out: Counter[str] = Counter()
    skipped: dict[str, list[str]] = {}
    with use_db(str(session), WorkDB.Mode.create) as db:
        init([package / m for m in protocol.modules], db, {})
        for item in db.work_items:
            (spec,) = item.mutations
            module = Path(spec.module_path).resolve().relative_to(package.resolve()).as_posix()
            start, end = tuple(spec.start_pos), tuple(spec.end_pos)
            reason = out_of_scope(spans[module], spec.operator_name, start, end)
            if reason is not None:
                left_out[reason] += 1
                skipped.setdefault(reason, []).append(item.job_id)
                continue
            text = _text(lines[module], start, end)
            kept.append(Mutant(protocol.name, module, spec.operator_name, spec.occurrence, start,
                               end, tree_names[module].at(start), text,
                               lines[module][start[0] - 1], job_id=item.job_id))
        for reason, jobs in skipped.items():
            db.set_multiple_results(jobs, WorkResult(output=f"out of scope: {reason}",
                                                     worker_outcome=WorkerOutcome.SKIPPED))
    kept.sort(key=lambda m: (m.module, m.operator, m.occurrence))
    return Enumeration(with_ids(kept), left_out)


class _NameIndex:
    """The enclosing function of a position, for many positions of one module."""

    def __init__(self, source: str) -> None:
        lines = source.split("\n")
        self.spans = sorted(((_span(lines, node, name), name)
                             for name, node in _definitions(ast.parse(source))),
                            key=lambda s: s[0].start)

    def at(self, pos: Pos) -> str:
        best = "<module>"
        for span, name in self.spans:
            if span.start > pos:
                break
            if pos <= span.end:
                best = name
        return best


def unified_diff(module: str, before: str, after: str) -> str:
    return "\n".join(difflib.unified_diff(before.split("\n"), after.split("\n"),
                                          f"a/{module}", f"b/{module}", n=1, lineterm=""))


# --- outcomes -------------------------------------------------------------------------------------

KILLED, ERROR, TIMEOUT, SURVIVED, UNDECIDED = ("killed", "killed_by_error", "timeout", "survived",
                                              "undecided")
OUTCOMES = (KILLED, ERROR, TIMEOUT, SURVIVED, UNDECIDED)
KILLS = frozenset({KILLED, ERROR, TIMEOUT})
#: the violation partsafe reports when a handler raises (checker/engine/expand.py)
MODEL_ERROR = "MODEL-ERROR"


@dataclass(frozen=True)
class CheckOutcome:
    """What one `partsafe check MODEL --json` said about a mutant: one of `OUTCOMES`, and what
    decided it (the specs that broke, the coverage goals not reached, the exit status)."""

    outcome: str
    detail: str


def classify(returncode: int | None, stdout: str, stderr: str = "") -> CheckOutcome:
    """The outcome of a check from its exit status (None: it timed out) and its output: 0
    survived; 1 killed, by the specs it names (``gap: GOAL`` for an unreached coverage goal), or
    by error when the violation is MODEL-ERROR (a handler raised) or no report came out (a
    traceback); 2 (the check refused to run) and any other status killed by error; 3 undecided
    (a search bound reached)."""
    if returncode is None:
        return CheckOutcome(TIMEOUT, "timed out")
    if returncode == 0:
        return CheckOutcome(SURVIVED, "exit 0")
    if returncode == 3:
        return CheckOutcome(UNDECIDED, "exit 3: incomplete")
    if returncode != 1:
        return CheckOutcome(ERROR, f"exit {returncode}: {_last_line(stderr)}")
    try:
        report = json.loads(stdout)
    except ValueError:
        return CheckOutcome(ERROR, f"exit 1 without a report: {_last_line(stderr)}")
    if not isinstance(report, dict):
        return CheckOutcome(ERROR, "exit 1 with a report that is not an object")
    known = set(report.get("known_findings") or ())
    specs = sorted({str(v.get("spec")) for v in report.get("violations") or ()
                    if isinstance(v, dict) and v.get("spec") not in known})
    if MODEL_ERROR in specs:
        message = next(str(v.get("message", "")) for v in report["violations"]
                       if isinstance(v, dict) and v.get("spec") == MODEL_ERROR)
        return CheckOutcome(ERROR, f"{MODEL_ERROR}: {message}")
    if report.get("result") == "gap":
        specs += [f"gap: {g.get('name')}" for g in report.get("goals") or ()
                  if isinstance(g, dict) and not g.get("reached")]
    return CheckOutcome(KILLED, ", ".join(specs) or f"result {report.get('result')}")


def _last_line(text: str) -> str:
    lines = [line for line in text.strip().splitlines() if line.strip()]
    return lines[-1].strip()[:300] if lines else "(no output)"


# --- triage ---------------------------------------------------------------------------------------

EQUIVALENT, MISSED = "equivalent", "missed"
_SPEC_ID = re.compile(r"[A-Z][A-Z0-9]*(-[A-Z0-9]+)+")
_TRIAGE_KEYS = frozenset({"verdict", "why", "spec", "where", "change"})


class TriageError(ValueError):
    """A malformed triage file: the message names the file and the entry."""


@dataclass(frozen=True)
class Triage:
    """A survivor's classification: equivalent (no spec could tell it from the original: `why`)
    or missed (`spec`, an existing or proposed spec id, should kill it: `why`)."""

    verdict: str
    why: str
    spec: str | None = None
    where: str | None = None
    change: str | None = None


def parse_triage(text: str, name: str = "triage file") -> dict[str, Triage]:
    """The entries of a triage file: TOML, one table per survivor under ``mutants``, keyed by
    stable id, each with ``verdict`` ("equivalent" or "missed"), ``why``, ``spec`` (missed only:
    the spec id that should kill it) and optionally ``where`` (file:line) and ``change`` (a
    reminder of the mutation), both informational."""
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise TriageError(f"{name}: not valid TOML: {exc}") from None
    unknown = set(data) - {"mutants"}
    if unknown:
        raise TriageError(f"{name}: unknown top-level keys {sorted(unknown)}; entries go under "
                          "[mutants.\"ID\"]")
    entries = data.get("mutants", {})
    if not isinstance(entries, dict):
        raise TriageError(f"{name}: `mutants` must be a table of entries")
    out: dict[str, Triage] = {}
    for key, entry in entries.items():
        where = f"{name}: mutants.{json.dumps(key)}"
        if key.count(":") < 3:
            raise TriageError(f"{where}: not a stable id (module:function:operator:hash)")
        if not isinstance(entry, dict):
            raise TriageError(f"{where}: must be a table with verdict and why")
        extra = set(entry) - _TRIAGE_KEYS
        if extra:
            raise TriageError(f"{where}: unknown keys {sorted(extra)}; known: "
                              f"{', '.join(sorted(_TRIAGE_KEYS))}")
        for k in _TRIAGE_KEYS & set(entry):
            if not isinstance(entry[k], str):
                raise TriageError(f"{where}: {k} must be a string")
        verdict, why, spec = entry.get("verdict"), entry.get("why", "").strip(), entry.get("spec")
        if verdict not in (EQUIVALENT, MISSED):
            raise TriageError(f"{where}: verdict is {verdict!r}; expected \"{EQUIVALENT}\" or "
                              f"\"{MISSED}\"")
        if not why:
            raise TriageError(f"{where}: says {verdict} without why")
        if verdict == MISSED and (spec is None or not _SPEC_ID.fullmatch(spec)):
            raise TriageError(f"{where}: a missed mutant names the spec that should kill it "
                              f"(spec = \"MEM-...\"), got {spec!r}")
        if verdict == EQUIVALENT and spec is not None:
            raise TriageError(f"{where}: an equivalent mutant names no spec")
        out[key] = Triage(verdict, why, spec, entry.get("where"), entry.get("change"))
    return out


def load_triage(path: Path) -> dict[str, Triage]:
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise TriageError(f"{path}: cannot read: {exc.strerror}") from None
    return parse_triage(text, str(path))


# --- runs -----------------------------------------------------------------------------------------


@dataclass
class MutantResult:
    """A sampled mutant and what the checks said."""

    mutant: Mutant
    outcome: str
    detail: str
    check: str
    seconds: float
    diff: str

    def as_json(self) -> dict[str, Any]:
        m = self.mutant
        return {
            "id": m.id, "where": m.where, "function": m.function, "operator": m.operator_short,
            "occurrence": m.occurrence, "outcome": self.outcome, "detail": self.detail,
            "check": self.check, "seconds": round(self.seconds, 2), "diff": self.diff,
        }


@dataclass
class Score:
    """A protocol's figures."""

    sampled: int = 0
    counts: Counter[str] = field(default_factory=Counter)
    equivalent: int = 0
    missed: int = 0
    untriaged: int = 0

    @property
    def killed(self) -> int:
        return sum(self.counts[o] for o in KILLS)

    @property
    def score(self) -> float | None:
        """killed / (sampled - equivalent); None when every sampled mutant is equivalent."""
        judged = self.sampled - self.equivalent
        return self.killed / judged if judged else None

    def as_json(self) -> dict[str, Any]:
        s = self.score
        return {"sampled": self.sampled, **{o: self.counts[o] for o in OUTCOMES},
                "killed_total": self.killed, "equivalent": self.equivalent,
                "missed": self.missed, "untriaged": self.untriaged,
                "score": None if s is None else round(s, 4),
                "meets_target": s is None or s >= TARGET}


def score(results: Iterable[tuple[str, Triage | None]]) -> Score:
    """The figures of one protocol's (outcome, triage) pairs: a survivor counts by its triage
    (equivalent, missed, or untriaged when it has none)."""
    s = Score()
    for outcome, triage in results:
        s.sampled += 1
        s.counts[outcome] += 1
        if outcome == SURVIVED:
            if triage is None:
                s.untriaged += 1
            elif triage.verdict == EQUIVALENT:
                s.equivalent += 1
            else:
                s.missed += 1
    return s


def apply_triage(report: dict[str, Any], triage: dict[str, Triage],
                 registered: Callable[[str], bool], in_scope: set[str]) -> dict[str, Any]:
    """Classify the survivors of `report` (a run's, or one read back) by `triage` and compute
    every protocol's figures, the survivors' list, and the stale triage entries: those for a
    module of the report's protocols that name no mutant of `in_scope` (the ids of the code's
    mutants in scope now)."""
    survivors: list[dict[str, Any]] = []
    for name, p in report["protocols"].items():
        pairs: list[tuple[str, Triage | None]] = []
        for m in p["mutants"]:
            t = triage.get(m["id"]) if m["outcome"] == SURVIVED else None
            m.pop("triage", None)
            if m["outcome"] == SURVIVED:
                m["triage"] = None if t is None else {
                    "verdict": t.verdict, "why": t.why, "spec": t.spec,
                    "spec_registered": None if t.spec is None else registered(t.spec)}
                survivors.append({"protocol": name, **m})
            pairs.append((m["outcome"], t))
        p.update(score(pairs).as_json())
    modules = {m for p in report["protocols"].values() for m in p["modules"]}
    report["survivors"] = survivors
    report["stale_triage"] = sorted(k for k in set(triage) - in_scope
                                    if k.split(":")[0] in modules)
    report["meets_target"] = all(p["meets_target"] for p in report["protocols"].values())
    return report


def check_command(check: str) -> list[str]:
    """The test command: `partsafe check MODEL [SCOPE OPTIONS]` (with `--json`, to tell the kinds
    of kills apart), run as ``python -m partsafe`` so that it imports the copy it runs in."""
    return [sys.executable, "-m", "partsafe", "check", *check.split(), "--json", "--no-progress"]


#: the process groups of the checks running now, and whether the run is being stopped
_RUNNING: set[int] = set()
_STOPPING = threading.Event()


class Stopped(Exception):
    """The run was interrupted: no further check starts."""


def run_command(argv: list[str], root: Path, timeout: float) -> tuple[int | None, str, str, float]:
    """Run `argv` in the copy at `root` (its parent on PYTHONPATH, no bytecode written): exit
    status (None after `timeout` seconds: the process group is killed), stdout, stderr, seconds."""
    if _STOPPING.is_set():
        raise Stopped
    env = {**os.environ, "PYTHONPATH": str(root), "PYTHONDONTWRITEBYTECODE": "1"}
    env.pop("PYTHONSTARTUP", None)
    started = time.perf_counter()
    proc = subprocess.Popen(argv, cwd=root, env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, start_new_session=True)
    _RUNNING.add(proc.pid)
    try:
        out, err = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        _kill_group(proc.pid)
        out, err = proc.communicate()
        return None, out, err, time.perf_counter() - started
    finally:
        _RUNNING.discard(proc.pid)
    return proc.returncode, out, err, time.perf_counter() - started


def _kill_group(pgid: int) -> None:
    with contextlib.suppress(ProcessLookupError):
        os.killpg(pgid, signal.SIGKILL)


def stop_all() -> None:
    """Interrupted (Ctrl-C, SIGTERM): start no further check and kill the running ones."""
    _STOPPING.set()
    for pgid in list(_RUNNING):
        _kill_group(pgid)


def _interrupt(signum: int, frame: object) -> None:
    raise KeyboardInterrupt


class Workspace:
    """Private copies of the package (one per job) that mutants are applied to: cosmic-ray
    writes a mutant into the file and puts the original back, so it never touches the
    repository's files. Each copy is ``ROOT/partsafe`` with ROOT first on the check's path."""

    def __init__(self, source: Path, base: Path, jobs: int) -> None:
        self.source = source
        self.roots: queue.Queue[Path] = queue.Queue()
        self.all: list[Path] = []
        for k in range(jobs):
            root = base / f"copy-{k}"
            _precompile(copy_package(source, root / "partsafe"))
            self.roots.put(root)
            self.all.append(root)

    @contextlib.contextmanager
    def copy(self) -> Iterator[Path]:
        root = self.roots.get()
        try:
            yield root
        finally:
            self.roots.put(root)


def copy_package(source: Path, package: Path) -> Path:
    """Copy the package's parts (`PACKAGE_PARTS`) from the repository `source` to `package`,
    without bytecode."""
    package.mkdir(parents=True)
    for part in PACKAGE_PARTS:
        src = source / part
        if src.is_dir():
            shutil.copytree(src, package / part,
                            ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
        else:
            shutil.copy2(src, package / part)
    return package


def _precompile(package: Path) -> None:
    """Bytecode checked against the source's hash: a mutated module is compiled again (and not
    written back: PYTHONDONTWRITEBYTECODE), the others load at once."""
    import compileall
    import py_compile

    compileall.compile_dir(str(package), quiet=1, workers=1,
                           invalidation_mode=py_compile.PycInvalidationMode.CHECKED_HASH)


@contextlib.contextmanager
def applied(root: Path, m: Mutant) -> Iterator[str]:
    """Mutant `m` written into the copy at `root` for the duration of the block (cosmic-ray's
    `use_mutation`, which restores the file), yielding the diff."""
    from cosmic_ray.mutating import use_mutation
    from cosmic_ray.plugins import get_operator

    path = (root / "partsafe" / m.module).resolve()
    if not path.is_relative_to(root.resolve()) or path.is_relative_to(REPO):
        raise RuntimeError(f"refusing to mutate {path}: not in the benchmark's copy")
    with use_mutation(path, get_operator(m.operator)(), m.occurrence) as (before, after):
        if after is None:
            raise RuntimeError(f"{m.id}: cosmic-ray applies no mutation")
        yield unified_diff(m.module, before, after)


def run_mutant(workspace: Workspace, m: Mutant, checks: Sequence[str],
               timeouts: dict[str, float]) -> MutantResult:
    """Apply `m` to a copy and run `checks` in order until one kills it."""
    with workspace.copy() as root, applied(root, m) as diff:
        total = 0.0
        outcome = CheckOutcome(SURVIVED, "exit 0")
        check = ""
        for model in checks:
            code, out, err, seconds = run_command(check_command(model), root, timeouts[model])
            total += seconds
            outcome, check = classify(code, out, err), model
            if outcome.outcome != SURVIVED:
                break
        return MutantResult(m, outcome.outcome, outcome.detail, check, total, diff)


def self_check(workspace: Workspace, protocol: Protocol) -> dict[str, Any]:
    """Before the sample: the checks pass on the unmutated copy (their seconds give the default
    timeouts), they import the copy and not the repository, and a deliberately broken module of
    the protocol (one that raises on import) registers as a kill."""
    root = workspace.all[0]
    probe = [sys.executable, "-c", "import partsafe; print(partsafe.__file__)"]
    code, out, err, _ = run_command(probe, root, 60)
    imported = Path(out.strip()).resolve() if code == 0 else None
    if imported is None or not imported.is_relative_to(root.resolve()):
        raise SystemExit(f"the check would not import the copy {root}: it imports "
                         f"{imported or _last_line(err)}")
    baseline: dict[str, float] = {}
    for model in protocol.checks:
        code, out, err, seconds = run_command(check_command(model), root, 1800)
        if code != 0:
            raise SystemExit(f"`partsafe check {model}` fails on the unmutated code (exit {code}: "
                             f"{classify(code, out, err).detail}); the benchmark needs a clean "
                             f"baseline")
        baseline[model] = seconds
    module = root / "partsafe" / protocol.modules[0]
    original = module.read_text(encoding="utf-8")
    try:
        module.write_text(original + '\nraise RuntimeError("deliberately broken by the mutation '
                          'benchmark")\n', encoding="utf-8")
        code, out, err, _ = run_command(check_command(protocol.checks[0]), root, 300)
    finally:
        module.write_text(original, encoding="utf-8")
    broken = classify(code, out, err)
    if broken.outcome not in KILLS:
        raise SystemExit(f"a deliberately broken {protocol.modules[0]} is not killed "
                         f"({broken.outcome}: {broken.detail}): the checks do not run the copy")
    return {"imports": str(imported), "baseline_seconds": baseline,
            "broken_module": {"outcome": broken.outcome, "detail": broken.detail}}


# --- the run --------------------------------------------------------------------------------------


def _registered() -> Callable[[str], bool]:
    """Whether a spec id exists: a spec of the catalogue, or a report of the checker's own
    (MODEL-ERROR, DEADLOCK)."""
    from partsafe.specs.registry import all_specs

    ids = {s.id for s in all_specs()} | {MODEL_ERROR, "DEADLOCK"}
    return lambda spec: spec in ids


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--per-protocol", type=int, default=20, metavar="N",
                        help="mutants sampled per protocol (default 20)")
    parser.add_argument("--seed", type=int, default=1, help="sampling seed (default 1)")
    parser.add_argument("--timeout", type=float, metavar="T",
                        help="seconds per check run (default: 8 times the unmutated check's, "
                             "at least 60: a loaded machine must not pass for a slow mutant)")
    parser.add_argument("--protocol", action="append", choices=sorted(PROTOCOLS), metavar="P",
                        help=f"only this protocol (repeatable): {', '.join(PROTOCOLS)}")
    parser.add_argument("--jobs", type=int, default=MAX_JOBS,
                        help=f"mutants run at a time (1 to {MAX_JOBS}, default {MAX_JOBS})")
    parser.add_argument("--triage", type=Path, default=TRIAGE_FILE,
                        help="the survivors' classification (default: mutation_triage.toml "
                             "beside this file)")
    parser.add_argument("--out", type=Path, default=Path("mutation-report.json"),
                        help="where the JSON report goes (default mutation-report.json)")
    parser.add_argument("--session-dir", type=Path,
                        help="keep cosmic-ray's session databases here (`cr-report "
                             "DIR/PROTOCOL.sqlite`)")
    parser.add_argument("--rescore", type=Path, metavar="REPORT",
                        help="run nothing: classify the survivors of an earlier JSON report by "
                             "the triage file as it is now, and give the figures again")
    parser.add_argument("--json", action="store_true", help="also print the JSON report")
    args = parser.parse_args(argv)
    console = Console(stderr=args.json, highlight=False, emoji=False)  # ids hold ":b:"-like text
    if not console.is_terminal:
        console.width = 120  # a log file: the table unfolded
    if args.per_protocol < 1:
        parser.error("--per-protocol must be at least 1")
    if not 1 <= args.jobs <= MAX_JOBS:
        parser.error(f"--jobs must be 1 to {MAX_JOBS}")
    if args.timeout is not None and args.timeout <= 0:
        parser.error("--timeout must be positive")
    signal.signal(signal.SIGTERM, _interrupt)
    try:
        triage = load_triage(args.triage)
        if args.rescore:
            report = rescore(args.rescore)
            in_scope = current_ids([PROTOCOLS[name] for name in report["protocols"]])
        else:
            ran = run(args, console)
            if ran is None:
                return 2
            report, in_scope = ran
    except (TriageError, ReportError) as exc:
        console.print(f"[red]error:[/] {escape(str(exc))}")
        return 2
    except KeyboardInterrupt:
        console.print("interrupted: the running checks were stopped, no report")
        return 130
    apply_triage(report, triage, _registered(), in_scope)
    render(console, report)
    args.out.write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")
    console.print(f"report written to {escape(str(args.out))}")
    if args.json:
        print(json.dumps(report, indent=2))
    return 0 if report["meets_target"] else 1


class ReportError(ValueError):
    """A report given to --rescore that cannot be read: the message names the file."""


def rescore(path: Path) -> dict[str, Any]:
    """An earlier run's JSON report, to classify again."""
    try:
        report = json.loads(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise ReportError(f"{path}: cannot read: {exc.strerror}") from None
    except ValueError as exc:
        raise ReportError(f"{path}: not JSON: {exc}") from None
    if not isinstance(report, dict) or not isinstance(report.get("protocols"), dict) or any(
            name not in PROTOCOLS or not isinstance(p, dict) or "mutants" not in p
            for name, p in report["protocols"].items()):
        raise ReportError(f"{path}: not a report of this benchmark (no protocols with mutants)")
    return report


def current_ids(protocols: Iterable[Protocol]) -> set[str]:
    """The stable ids of `protocols`' mutants in scope in the code as it is now."""
    with tempfile.TemporaryDirectory(prefix="partsafe-mutation-") as tmp:
        package = copy_package(REPO, Path(tmp) / "partsafe")
        return {m.id for p in protocols
                for m in enumerate_mutants(p, package, Path(tmp) / f"{p.name}.sqlite").in_scope}


def run(args: argparse.Namespace, console: Console) -> tuple[dict[str, Any], set[str]] | None:
    """Sample and run the mutants of the chosen protocols: the report without the triage's
    figures (`apply_triage` adds them) and the ids of every mutant in scope; None when a
    protocol's self-check fails."""
    from importlib.metadata import version

    protocols = [PROTOCOLS[p] for p in (args.protocol or PROTOCOLS)]
    started = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="partsafe-mutation-") as tmp:
        base = Path(tmp)
        sessions = args.session_dir or base / "sessions"
        sessions.mkdir(parents=True, exist_ok=True)
        workspace = Workspace(REPO, base, args.jobs)
        pristine = workspace.all[0] / "partsafe"
        plans: dict[str, tuple[Enumeration, list[Mutant], dict[str, Any], dict[str, float]]] = {}
        for p in protocols:
            try:
                checked = self_check(workspace, p)
            except SystemExit as exc:
                console.print(f"[red]error:[/] {p.name}: {escape(str(exc))}")
                return None
            found = enumerate_mutants(p, pristine, sessions / f"{p.name}.sqlite")
            picked = sample(found.in_scope, args.per_protocol, args.seed)
            timeouts = {m: args.timeout or max(60.0, 8 * s)
                        for m, s in checked["baseline_seconds"].items()}
            plans[p.name] = (found, picked, checked, timeouts)
            passing = ", ".join(f"{m} {s:.1f} s" for m, s in checked["baseline_seconds"].items())
            console.print(f"{p.name}: {len(found.in_scope):,} mutants in scope "
                          f"({sum(found.left_out.values()):,} left out), {len(picked)} sampled; "
                          f"checks pass unmutated in {passing}; a broken module: "
                          f"{checked['broken_module']['outcome'].replace('_', ' ')}")
        # the slowest protocols first, so that the two jobs finish together
        order = sorted(((p, m) for p in protocols for m in plans[p.name][1]),
                       key=lambda pm: -sum(plans[pm[0].name][2]["baseline_seconds"].values()))
        results: dict[str, list[MutantResult]] = {p.name: [] for p in protocols}
        with ThreadPoolExecutor(max_workers=args.jobs) as pool:
            try:
                futures = [pool.submit(run_mutant, workspace, m, p.checks, plans[p.name][3])
                           for p, m in order]
                for done, future in enumerate(as_completed(futures), 1):
                    r = future.result()
                    results[r.mutant.protocol].append(r)
                    console.print(f"[{done}/{len(order)}] {r.mutant.protocol} {r.mutant.where} "
                                  f"{r.mutant.operator_short}: {r.outcome.replace('_', ' ')} "
                                  f"({escape(r.detail[:120])}, {r.seconds:.1f} s)")
            except KeyboardInterrupt:
                stop_all()
                pool.shutdown(cancel_futures=True)
                raise
        _record_sessions(sessions, plans, results)
    per: dict[str, Any] = {}
    for p in protocols:
        found, _, checked, timeouts = plans[p.name]
        per[p.name] = {
            "modules": list(p.modules), "checks": list(p.checks),
            "in_scope": len(found.in_scope), "left_out": dict(found.left_out.most_common()),
            "self_check": checked, "timeout_seconds": timeouts,
            "mutants": [r.as_json() for r in sorted(results[p.name], key=lambda r: r.mutant.id)],
        }
    report = {
        "cosmic_ray": version("cosmic-ray"), "seed": args.seed,
        "per_protocol": args.per_protocol, "timeout": args.timeout, "jobs": args.jobs,
        "target": TARGET, "seconds": round(time.perf_counter() - started, 1), "protocols": per,
    }
    return report, {m.id for name in plans for m in plans[name][0].in_scope}


def _record_sessions(sessions: Path, plans: dict[str, Any],
                     results: dict[str, list[MutantResult]]) -> None:
    """Write the outcomes into cosmic-ray's session databases (unsampled mutants: skipped)."""
    from cosmic_ray.work_db import WorkDB, use_db
    from cosmic_ray.work_item import TestOutcome, WorkerOutcome, WorkResult

    for name, rs in results.items():
        found, picked = plans[name][0], plans[name][1]
        with use_db(str(sessions / f"{name}.sqlite"), WorkDB.Mode.open) as db:
            for r in rs:
                test = TestOutcome.SURVIVED if r.outcome in (SURVIVED, UNDECIDED) else \
                    TestOutcome.KILLED
                db.set_result(r.mutant.job_id, WorkResult(
                    worker_outcome=WorkerOutcome.NORMAL, test_outcome=test, diff=r.diff,
                    output=f"{r.outcome}: {r.check}: {r.detail}"))
            sampled = {m.job_id for m in picked}
            rest = [m.job_id for m in found.in_scope if m.job_id not in sampled]
            if rest:
                db.set_multiple_results(rest, WorkResult(output="not sampled",
                                                         worker_outcome=WorkerOutcome.SKIPPED))


def render(console: Console, report: dict[str, Any]) -> None:
    table = Table(title=f"mutation kill score (seed {report['seed']}, "
                        f"{report['per_protocol']} per protocol)", title_justify="left")
    headers = {"protocol": "protocol", "sampled": "sampled", KILLED: "killed", ERROR: "error",
               TIMEOUT: "timeout", SURVIVED: "survived", UNDECIDED: "undecided",
               "equivalent": "equiv.", "missed": "missed", "untriaged": "untriaged"}
    for key, col in headers.items():
        table.add_column(col, justify="left" if key == "protocol" else "right", no_wrap=True)
    table.add_column("score", justify="right", no_wrap=True)
    for name, p in report["protocols"].items():
        s = "-" if p["score"] is None else f"{p['score']:.0%}"
        table.add_row(name, *(str(p[k]) for k in list(headers)[1:]),
                      s if p["meets_target"] else f"[red]{s}[/]")
    console.print(table)
    for s in report["survivors"]:
        t = s["triage"]
        verdict = "[red]untriaged[/]" if t is None else (
            f"equivalent: {escape(t['why'])}" if t["verdict"] == EQUIVALENT else
            f"missed: {t['spec']}{'' if t['spec_registered'] else ' (a new spec)'}: "
            f"{escape(t['why'])}")
        console.print(f"survivor {escape(s['where'])} {s['operator']} [dim]{escape(s['id'])}[/]")
        console.print(s["diff"], markup=False, highlight=False)
        console.print(f"  -> {verdict}")
    missed: dict[str, list[str]] = {}
    for s in report["survivors"]:
        t = s["triage"]
        if t is not None and t["verdict"] == MISSED:
            name = t["spec"] if t["spec_registered"] else f"{t['spec']} (a new spec)"
            missed.setdefault(name, []).append(s["where"])
    for spec, places in sorted(missed.items()):
        console.print(f"missed, {spec} should kill: {escape(', '.join(places))}")
    for stale in report["stale_triage"]:
        console.print(f"stale triage entry (no such mutant in scope): {escape(stale)}")
    console.print(f"{'met' if report['meets_target'] else 'MISSED'}: at least "
                  f"{TARGET:.0%} of the non-equivalent mutants killed per protocol "
                  f"({report['seconds']:.0f} s)")


if __name__ == "__main__":
    sys.exit(main())

"""docs/extending.md's path to add a variant, followed with variants of this test's own: a row in
the protocol's variant table (refimpl/variants.py) and one behaviour branch are all it takes for
`partsafe check --variant`, the bug zoo's entry, and `partsafe explain` to know the variant.

The rows are added with `monkeypatch.setitem` and the branches with `monkeypatch.setattr`, so
nothing outlives a test.
"""

from __future__ import annotations

import ast
import json
import re
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
from click.testing import CliRunner, Result

from partsafe.checker.cli.main import main
from partsafe.checker.protocols import catalog
from partsafe.checker.protocols import twophase as twophase_model
from partsafe.checker.protocols.entry import ModelEntry, Variant
from partsafe.checker.protocols.twophase import INIT, TM_COMMITTED, TwoPhase
from partsafe.refimpl import ignite, membership, partition_service, planner
from partsafe.refimpl.membership import Membership
from partsafe.refimpl.variants import variant_table
from partsafe.specs.registry import all_specs

ROOT = Path(__file__).resolve().parent.parent
GUIDE = ROOT / "docs" / "extending.md"
#: the modules whose `VARIANT_TABLE` the guide names, and the models that read each
TABLES: dict[str, ModuleType] = {
    "refimpl/membership.py": membership,
    "refimpl/partition_service.py": partition_service,
    "refimpl/ignite.py": ignite,
    "refimpl/planner.py": planner,
    "checker/protocols/twophase.py": twophase_model,
}


def invoke(*args: str) -> Result:
    return CliRunner().invoke(main, list(args), catch_exceptions=False)


def options(scope: dict[str, int]) -> list[str]:
    return [word for key, value in scope.items() for word in (f"--{key}", str(value))]


# --- the two variants of this test: a row each, and the branch that is its behaviour ----------


def _tm_commits_at_once(monkeypatch: pytest.MonkeyPatch) -> tuple[ModelEntry, str]:
    """TwoPhase's TM may commit before any RM is prepared: an RM that chose to abort and one
    that receives the commit disagree (TC-CONSISTENT)."""
    name = "tm-commit-at-once"
    monkeypatch.setitem(twophase_model.VARIANT_TABLE, name, Variant(
        name, "not historical: the TM commits before any RM is prepared",
        breaks="TC-CONSISTENT"))
    successors = TwoPhase.successors

    def with_branch(self: TwoPhase, s: int) -> list[tuple[Any, int]]:
        out = successors(self, s)
        # the branch the guide's step 3 writes in TwoPhase.successors
        if self.variant == name and (s >> self.tm_shift) & 3 == INIT \
                and not (s >> self.tp_shift) & self.all:
            out.append((("TMCommit",), s | (TM_COMMITTED << self.tm_shift) | self.commit_msg))
        return out

    monkeypatch.setattr(TwoPhase, "successors", with_branch)
    return catalog.TWOPHASE, name


def _members_keep_foreign_lists(monkeypatch: pytest.MonkeyPatch) -> tuple[ModelEntry, str]:
    """A membership mutant whose members apply lists that omit themselves (M3 View Integrity),
    found in the zoo without joins."""
    name = "mutant-foreign-lists"
    monkeypatch.setitem(membership.VARIANT_TABLE, name, Variant(
        name, "not historical: members apply lists that omit themselves (002 Theory, M3)",
        breaks="MEM-VIEW-INTEGRITY", zoo_scope={"joins": 0}))
    init = Membership.__init__

    def with_branch(self: Membership, *args: Any, **kwargs: Any) -> None:
        init(self, *args, **kwargs)
        # the branch the guide's step 3 writes among Membership's variant flags
        if self.variant == name:
            self.self_check = False

    monkeypatch.setattr(Membership, "__init__", with_branch)
    return catalog.MEMBERSHIP, name


@pytest.fixture(params=[_tm_commits_at_once, _members_keep_foreign_lists],
                ids=["twophase", "membership"])
def toy(request: pytest.FixtureRequest,
        monkeypatch: pytest.MonkeyPatch) -> Iterator[tuple[ModelEntry, str]]:
    yield request.param(monkeypatch)


def test_a_row_and_a_branch_make_a_variant_the_zoo_finds(toy: tuple[ModelEntry, str]) -> None:
    entry, name = toy
    row = entry.variant_table[name]
    assert row.breaks is not None
    # the catalog offers it, and the zoo runs it at its scope until its spec breaks
    assert entry.variants[name] == row.doc
    assert entry.zoo[name] == (row.breaks, dict(row.zoo_scope))
    spec, scope = entry.zoo[name]
    r = invoke("check", entry.name, "--variant", name, *options(scope), "--until", spec,
               "--json", "--no-progress")
    doc = json.loads(r.stdout)
    assert r.exit_code == 1, r.stdout
    assert (doc["variant"], doc["result"]) == (name, "violation")
    assert spec in [v["spec"] for v in doc["violations"]]
    # the zoo's second half: the fixed design at the same scope is clean, a complete search
    # with no violation (a reduced scope need not reach every coverage goal)
    doc = json.loads(invoke("check", entry.name, *options(scope), "--json",
                            "--no-progress").stdout)
    assert (doc["variant"], doc["violations"], doc["incomplete_reason"]) == ("fixed", [], None)
    # `partsafe explain` names it among the variants that break the spec (TwoPhase's
    # TC-CONSISTENT is the calibration model's own, not a spec of the catalogue)
    listed = {"model": entry.name, "variant": name, "doc": row.doc, "zoo_scope": scope}
    assert listed in catalog.variants_breaking(spec)
    if spec in {s.id for s in all_specs()}:
        r = invoke("explain", spec, "--json")
        assert listed in json.loads(r.stdout)["zoo_variants"]
    # and `partsafe check --help` lists it among the model's variants
    assert any(name in names for models, names in catalog.variant_groups()
               if entry.name in models)


def test_the_rows_of_this_test_do_not_outlive_it() -> None:
    assert "tm-commit-at-once" not in catalog.TWOPHASE.variants
    assert "mutant-foreign-lists" not in catalog.MEMBERSHIP.variants
    with pytest.raises(ValueError, match="unknown variant 'tm-commit-at-once' of model twophase"):
        catalog.TWOPHASE.make("tm-commit-at-once")


# --- the guide and the tables agree -----------------------------------------------------------


def test_every_file_the_guide_names_exists() -> None:
    text = GUIDE.read_text()
    named = set(re.findall(r"`((?:refimpl|checker|specs|traces|tests|docs)/[\w/.<>-]+)`", text))
    assert "refimpl/variants.py" in named
    missing = [p for p in named if "<" not in p and not (ROOT / p).exists()]
    assert missing == []


def test_every_table_of_the_guide_is_a_variant_table_starting_with_fixed() -> None:
    text = GUIDE.read_text()
    for path, module in TABLES.items():
        assert f"`{path}`" in text
        table = module.VARIANT_TABLE
        assert next(iter(table)) == "fixed"
        assert all(isinstance(v, Variant) and v.name == k for k, v in table.items())


def _branch_names(tree: ast.AST) -> set[str]:
    """The variant and rule names a module's code branches on: string constants compared with
    `variant` or `self.variant`, tested for membership in `self.rules` (``"name" in
    self.rules``, ``self.rules.isdisjoint(("a", "b"))``), and the keys of a dict looked up by
    `self.variant`."""

    def is_variant(node: ast.AST) -> bool:
        return (isinstance(node, ast.Name) and node.id == "variant") or (
            isinstance(node, ast.Attribute) and node.attr == "variant")

    def is_rules(node: ast.AST) -> bool:
        return isinstance(node, ast.Attribute) and node.attr == "rules"

    def strings(node: ast.AST) -> set[str]:
        return {n.value for n in ast.walk(node)
                if isinstance(n, ast.Constant) and isinstance(n.value, str)}

    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Compare) and is_variant(node.left):
            found |= set().union(*(strings(c) for c in node.comparators))
        elif (isinstance(node, ast.Compare) and isinstance(node.ops[0], ast.In | ast.NotIn)
              and is_rules(node.comparators[0])):
            found |= strings(node.left)
        elif (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
              and node.func.attr == "isdisjoint" and is_rules(node.func.value)):
            found |= set().union(*(strings(a) for a in node.args))
        elif (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
              and node.func.attr == "get" and isinstance(node.func.value, ast.Dict)
              and node.args and is_variant(node.args[0])):
            found |= set().union(*(strings(k) for k in node.func.value.keys if k is not None))
    return found


@pytest.mark.parametrize("path", list(TABLES))
def test_every_branch_names_a_declared_variant_and_every_flaw_has_one(path: str) -> None:
    """Step 3 of the guide: a branch on a name no table declares never fires (a typo), and a
    declared variant or release rule with no branch behaves as `fixed`."""
    module = TABLES[path]
    declared = set(module.VARIANT_TABLE) | set(getattr(module, "RULE_TABLE", {}))
    branched = _branch_names(ast.parse((ROOT / path).read_text()))
    assert branched - declared == set()
    assert declared - branched - {"fixed"} == set()


def test_every_zoo_spec_is_one_its_model_checks() -> None:
    for entry in catalog.MODELS.values():
        model = entry.make("fixed")
        checked = {p.spec for p in model.properties()} | {lasso.spec for lasso in model.lassos()}
        for name, (spec, _) in entry.zoo.items():
            assert spec in checked, f"{entry.name} {name}: {spec}"


# --- bad declarations say what is wrong -------------------------------------------------------


@pytest.mark.parametrize(("rows", "message"), [
    ((Variant("x", "a flaw"),), "starts with 'fixed'"),
    ((Variant("fixed", "the design"), Variant("x", "a"), Variant("x", "b")),
     "'x' is declared twice"),
])
def test_a_malformed_table_is_refused(rows: tuple[Variant, ...], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        variant_table(*rows)


@pytest.mark.parametrize(("kwargs", "message"), [
    ({"name": "x", "doc": "a flaw", "zoo_scope": {"joins": 0}}, "only to a variant that declares"),
    ({"name": "fixed", "doc": "the design", "breaks": "MEM-VERSION"}, "breaks no spec"),
    ({"name": "x", "doc": ""}, "needs a name and a doc"),
])
def test_a_malformed_row_is_refused(kwargs: dict[str, Any], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        Variant(**kwargs)


def test_a_zoo_scope_the_model_does_not_take_names_the_variant(
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(twophase_model.VARIANT_TABLE, "wide", Variant(
        "wide", "a flaw", breaks="TC-CONSISTENT", zoo_scope={"members": 2}))
    with pytest.raises(ValueError, match=r"variant 'wide' of model twophase: zoo_scope: "
                                         r"--members does not apply"):
        _ = catalog.TWOPHASE.zoo

"""A scope split by fault targets (`ActorModel.restrict`, `partsafe check --only`): the parts
whose targets cover every node reach exactly the states of the whole scope, a flaw of the whole
is found in some part, and a part's unreached goals are no GAP."""

from __future__ import annotations

import itertools
import json
from typing import Any

import pytest
from click.testing import CliRunner

from partsafe.checker.actor.model import ActorModel
from partsafe.checker.cli.main import main
from partsafe.checker.engine.bfs import explore
from partsafe.checker.protocols.catalog import get


def reachable(model: ActorModel) -> set[Any]:
    """Every state of `model`, by a plain search of its successors (no symmetry)."""
    seen = set(model.init_states())
    frontier = list(seen)
    while frontier:
        nxt = []
        for state in frontier:
            for _, t in model.successors(state):
                if t not in seen:
                    seen.add(t)
                    nxt.append(t)
        frontier = nxt
    return seen


def part(name: str, variant: str = "fixed", scope: dict[str, int] | None = None,
         **only: str) -> ActorModel:
    model = get(name).make(variant, scope or {})
    assert isinstance(model, ActorModel)
    model.restrict({kind: frozenset(nodes.split(",")) for kind, nodes in only.items()})
    return model


def test_the_parts_make_up_the_whole_scope() -> None:
    """`shutdown` (a crash and a shutdown request), split by who crashes and who leaves."""
    whole = reachable(get("shutdown").make("fixed", {}))  # type: ignore[arg-type]
    parts = [reachable(part("shutdown", crash=c, shutdown=s))
             for c, s in itertools.product("ABC", repeat=2)]
    assert set().union(*parts) == whole
    assert all(len(p) < len(whole) for p in parts)


def test_a_part_that_leaves_a_target_out_misses_states() -> None:
    """The covering matters: without C's crash, states of the whole scope are missing."""
    whole = reachable(get("shutdown").make("fixed", {}))  # type: ignore[arg-type]
    parts = [reachable(part("shutdown", crash=c)) for c in "AB"]
    assert set().union(*parts) < whole


def test_a_flaw_of_the_whole_scope_is_found_in_a_part() -> None:
    whole = explore(get("migration").make("hz37-local-promotion", {}))
    parts = [explore(part("migration", "hz37-local-promotion", crash=c)) for c in "ABCD"]
    found = [r for r in parts if r.result == "violation"]
    assert whole.result == "violation" and found
    assert min(r.violations[0].trace.depth for r in found) == whole.violations[0].trace.depth


def test_a_part_reports_its_goals_but_an_unreached_one_is_no_gap() -> None:
    r = explore(part("migration", crash="D"))  # the joiner crashes: the master never does
    reached = {g.name: g.reached for g in r.goals}
    assert not reached["master-crashes-mid-migration"] and r.result == "ok"
    assert (r.distinct_states, r.depth) == (3122, 41)


@pytest.mark.parametrize("only, needle", [
    ({"crash": "Z"}, "no node named Z"),
    ({"fly": "A"}, "a fault kind is one of"),
    ({"restart": "A"}, "the scope allows no restarts"),
])
def test_a_bad_restriction_is_refused(only: dict[str, str], needle: str) -> None:
    with pytest.raises(ValueError, match=needle):
        part("migration", **only)


def test_a_restriction_must_not_tell_interchangeable_nodes_apart() -> None:
    model = get("ignite-rebalance").make("fixed", {})
    assert isinstance(model, ActorModel) and model.has_symmetry
    with pytest.raises(ValueError, match="interchangeable"):
        model.restrict({"restart": frozenset("B")})
    model.restrict({"restart": frozenset("BC")})  # the whole group: sound
    model.drop_symmetry()
    model.restrict({"restart": frozenset("B")})


def test_check_only_runs_one_part_and_names_it() -> None:
    r = CliRunner().invoke(main, ["check", "migration", "--only", "crash=D", "--json",
                                  "--no-progress"])
    assert r.exit_code == 0, r.output
    doc = json.loads(r.stdout)
    assert doc["scope"]["only"] == "crash=D" and doc["result"] == "ok"
    assert (doc["distinct_states"], doc["depth"]) == (3122, 41)


@pytest.mark.parametrize("args, needle", [
    (["check", "migration", "--only", "crash"], "expected KIND=NODES"),
    (["check", "migration", "--only", "crash=A", "--only", "crash=B"], "named twice"),
    (["check", "--only", "crash=A"], "need a MODEL"),
    (["check", "twophase", "--only", "crash=A"], "applies to the actor models"),
    (["check", "ignite-rebalance", "--only", "restart=B"], "--no-symmetry"),
])
def test_check_with_a_bad_only_exits_2(args: list[str], needle: str) -> None:
    r = CliRunner().invoke(main, args)
    assert r.exit_code == 2 and needle in r.output

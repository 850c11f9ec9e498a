"""Membership (002) explored end to end: the fixed design is clean, each variant breaks its spec."""

from __future__ import annotations

import json
import re
import shlex
from typing import Any

import pytest
from click.testing import CliRunner

from partsafe.checker.artifact import replay
from partsafe.checker.cli.main import main
from partsafe.checker.engine.bfs import Result, explore
from partsafe.checker.engine.model import Model
from partsafe.checker.protocols import catalog
from partsafe.checker.report import artifact

MEMBERSHIP = catalog.get("membership")


def check(variant: str, until: str | None = None, **scope: int) -> tuple[Model[Any], Result]:
    model = MEMBERSHIP.make(variant, scope)
    return model, explore(model, action_kinds=MEMBERSHIP.action_kinds,
                          stop_at_first=until is None, until=until)


def test_fixed_design_clean_with_a_publish_race_and_no_false_suspicion() -> None:
    _, result = check("fixed", suspicions=0, publishes=1)
    assert result.violations == [] and result.incomplete_reason is None
    assert (result.distinct_states, result.depth) == (10_765, 23)
    assert result.fired["timer-race"] > 0


@pytest.mark.parametrize(("variant", "spec", "depth", "fixed_states"), [
    ("hz38-unordered-members", "MEM-VIEW-ORDER", 5, (10_765, 23)),
    ("hz38-stale-master-list", "MEM-VIEW-AGREEMENT", 13, (1925, 22)),
    ("hz38-local-removal", "MEM-MASTER-ONLY", 1, (731, 12)),
    ("mutant-no-self-check", "MEM-VIEW-INTEGRITY", 2, (731, 12)),
])
def test_each_variant_breaks_its_spec_with_a_shortest_counterexample(
        variant: str, spec: str, depth: int, fixed_states: tuple[int, int]) -> None:
    expected, overrides = MEMBERSHIP.zoo[variant]
    assert expected == spec
    _, result = check(variant, until=spec, **overrides)  # as the zoo searches
    assert result.result == "violation"
    first = next(v for v in result.violations if v.spec == spec)
    assert first.trace.depth == depth
    # the fixed design at the very same scope finds nothing
    _, fixed = check("fixed", **overrides)
    assert fixed.violations == [] and fixed.incomplete_reason is None
    # (distinct states, depth) of the fixed design at the variant's scope
    assert (fixed.distinct_states, fixed.depth) == fixed_states


def test_unordered_members_is_002s_first_problem() -> None:
    # 002 Background 1: a periodic publish of [A, B, C] is overtaken by the removal of C, which
    # the publish then re-adds at B
    model, result = check("hz38-unordered-members", suspicions=0, publishes=1)
    trace = result.violations[0].trace
    steps = [model.describe_action(a)[0] for a, _ in trace.steps]
    assert steps == [
        "timer-race publish at A, sent to B only",
        "crash C",
        "suspect: A suspects C",
        "deliver MembersUpdate [A,B] A→B",
        "deliver MembersUpdate [A,B,C] A→B",
    ]
    assert result.violations[0].message == (
        "B installs [A, B, C] after [A, B], but master A installed [A, B, C] before [A, B]")


def test_stale_master_list_is_002s_third_problem() -> None:
    _, result = check("hz38-stale-master-list", until="MEM-VIEW-AGREEMENT", suspicions=0)
    v = next(v for v in result.violations if v.spec == "MEM-VIEW-AGREEMENT")
    assert v.message.startswith("B holds {v=4, [B, C]} but C, a live member of it, holds "
                                "{v=4, [A, B, C, D]}")
    # B claimed with its stale list: it never saw D's join
    kinds = [a[0] for a, _ in v.trace.steps]
    assert "crash" in kinds and "join" in kinds


def test_membership_counterexample_replays() -> None:
    model, result = check("hz38-stale-master-list", suspicions=0)
    params = MEMBERSHIP.scope({"suspicions": 0})
    doc = json.loads(json.dumps(artifact(model, result, params)))
    _, trace, message = replay(doc)
    assert trace.depth == result.violations[0].trace.depth
    assert message == result.violations[0].message


@pytest.fixture(scope="module")
def zoo_run(tmp_path_factory: pytest.TempPathFactory) -> tuple[dict, str]:
    """One run of `partsafe zoo --json --html` for the tests of this module: the JSON document
    and the HTML report."""
    page = tmp_path_factory.mktemp("zoo") / "zoo.html"
    out = CliRunner().invoke(main, ["zoo", "--json", "--html", str(page)])
    assert out.exit_code == 0, out.output
    return json.loads(out.stdout), page.read_text(encoding="utf-8")


@pytest.fixture(scope="module")
def zoo_doc(zoo_run: tuple[dict, str]) -> dict:
    return zoo_run[0]


def test_the_zoo_report_has_a_row_per_flaw_and_per_fixed_scope(zoo_run: tuple[dict, str]
                                                               ) -> None:
    import html

    doc, page = zoo_run
    assert 'id="verdict">verdict: OK, zoo' in page
    rows = re.findall(r'<tr class="(ok|missed)"><td class="mono">([^<]*)</td>'
                      r'<td class="mono">([^<]*)</td>', page)
    assert [(html.unescape(m), html.unescape(v)) for _, m, v in rows] == \
        [(v["model"], v["variant"]) for v in doc["variants"]]
    assert {state for state, _, _ in rows} == {"ok"}
    fixed = page.split('<table id="fixed">', 1)[1].split("</table>", 1)[0]
    assert fixed.count("<tr>") == len(doc["fixed"]) + 1  # the header and a row each


def test_zoo_finds_every_flaw_and_the_fixed_models_clean(zoo_doc: dict) -> None:
    doc = zoo_doc
    assert doc["result"] == "ok"
    found = {(v["model"], v["variant"]): (v["found"], v["spec"]) for v in doc["variants"]}
    assert found == {
        ("membership", "hz38-unordered-members"): (True, "MEM-VIEW-ORDER"),
        ("membership", "hz38-stale-master-list"): (True, "MEM-VIEW-AGREEMENT"),
        ("membership", "hz38-local-removal"): (True, "MEM-MASTER-ONLY"),
        ("membership", "mutant-no-self-check"): (True, "MEM-VIEW-INTEGRITY"),
        ("migration", "hz37-local-promotion"): (True, "PT-MASTER-ONLY"),
        ("migration", "hz37-stale-master-table"): (True, "PT-MOST-RECENT"),
        ("migration", "hz37-independent-commit"): (True, "MIG-COMMIT-ORDER"),
        ("migration", "hz37-backup-clear-first"): (True, "DATA-REPLICAS"),
        ("shutdown", "hz36-shutdown"): (True, "SHUT-LEAVE-EMPTY"),
        ("parallel", "hz40-global-order-parallel"): (True, "PT-MASTER-ONLY"),
        ("ignite-rebalance", "ig-restart-keeps-peer"): (True, "IGN-RESTART"),
        ("ignite-rebalance", "ig-no-trigger-guard"): (True, "IGN-STALE-TRIGGER"),
        ("ignite-rebalance", "ig-single-planned"): (True, "IGN-NO-LOST-REDUCTION"),
        ("ignite-rebalance", "mutant-vote-twice"): (True, "IGN-ONE-VOTE"),
        ("ignite-rebalance", "mutant-count-refused-vote"): (True, "IGN-QUORUM-LEADER"),
        ("ignite-rebalance", "mutant-accept-stale-append"): (True, "IGN-ONE-VOTE"),
        ("ignite-rebalance", "mutant-count-stale-vote"): (True, "IGN-QUORUM-LEADER"),
        ("ignite-rebalance", "mutant-joint-new-quorum"): (True, "IGN-QUORUM-LEADER"),
        ("ignite-rebalance", "mutant-forget-voted-for"): (True, "IGN-ONE-VOTE"),
        ("twophase", "tm-commit-early"): (True, "TC-CONSISTENT"),
        ("planner", "hz37-naive-order"): (True, "PLAN-NO-DECREASE"),
    }
    assert all(f["result"] == "ok" for f in doc["fixed"])
    # the fixed design at each distinct zoo scope, in the order the zoo runs them
    assert [(f["model"], f["distinct_states"]) for f in doc["fixed"]
            if f["model"] != "planner"] == [
        ("membership", 10_765), ("membership", 1925), ("membership", 731),
        ("migration", 61), ("migration", 5246), ("migration", 3803), ("migration", 231),
        ("shutdown", 269), ("parallel", 8715), ("ignite-rebalance", 12_704),
        ("ignite-rebalance", 172_150), ("ignite-rebalance", 19_870), ("ignite-rebalance", 7722),
        ("ignite-rebalance", 9948), ("twophase", 80)]
    (planner,) = [f for f in doc["fixed"] if f["model"] == "planner"]
    assert set(planner["known_findings"]) == {"PLAN-NO-DECREASE", "PLAN-HOTTER-FIRST"}


def test_every_zoo_entry_is_reproduced_by_its_check_command(zoo_doc: dict) -> None:
    """Each flaw's printed command, run as it stands, breaks the same spec at the same depth."""
    for v in zoo_doc["variants"]:
        words = shlex.split(v["command"])
        assert words[:3] == ["partsafe", "check", v["model"]], v["command"]
        out = CliRunner().invoke(main, [*words[1:], "--json", "--no-progress"])
        assert out.exit_code == 1, (v["command"], out.output)
        doc = json.loads(out.stdout)
        if v["model"] == "planner":
            assert v["expected_spec"] in {x["spec"] for x in doc["violations"]}
            continue
        assert doc["variant"] == v["variant"]
        depths = {x["spec"]: x["depth"] for x in doc["violations"]}
        assert depths.get(v["expected_spec"]) == v["depth"], v["command"]


def test_every_fixed_zoo_scope_is_a_scope_check_accepts(zoo_doc: dict) -> None:
    """The fixed runs' commands parse, and give check the scope the zoo ran (run for real in
    test_zoo_finds_every_flaw_and_the_fixed_models_clean: they are the long ones)."""
    from partsafe.checker.cli.main import check

    for f in zoo_doc["fixed"]:
        words = shlex.split(f["command"])
        ctx = check.make_context("check", words[2:])
        scope = {k.replace("_", "-"): v for k, v in ctx.params.items()
                 if v is not None and k.replace("_", "-") in f["scope"]}
        if f["model"] == "planner":
            assert scope == f["scope"]
        else:
            assert catalog.MODELS[f["model"]].scope(scope) == f["scope"]


def test_the_zoo_report_keeps_identifiers_and_commands_whole_at_80_columns(
        zoo_doc: dict) -> None:
    import io

    from rich.console import Console

    from partsafe.checker.cli.views import render_zoo

    buf = io.StringIO()
    render_zoo(Console(file=buf, width=80, highlight=False), zoo_doc)
    lines = buf.getvalue().splitlines()
    for v in zoo_doc["variants"]:
        assert any(re.search(rf"\b{re.escape(v['variant'])}\s+{v['expected_spec']}\s+yes\s",
                             line) for line in lines), v["variant"]
        assert f"  {v['command']}" in lines
    assert lines[-1].startswith("verdict: OK, zoo of 21 historical flaws and the fixed design "
                                "at 16 scopes; known findings of the planner: ")

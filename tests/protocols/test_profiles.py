"""Release profiles (refimpl/profiles.py): every profile builds every model it covers, its rules
reach the protocol, unknown names are refused with a clear message, and `partsafe zoo --profile`
judges a profile's searches against the findings it declares."""

from __future__ import annotations

import json
import re

import pytest
from click.testing import CliRunner

from partsafe.checker.cli.main import main
from partsafe.checker.engine.bfs import Bounds
from partsafe.checker.protocols import catalog
from partsafe.checker.zoo import run_profile_zoo
from partsafe.refimpl import profiles
from partsafe.refimpl.profiles import Profile, Rule, Source, check_rules, rule_table

SOURCE = Source("hazelcast/hazelcast", "v4.1", "Example.java", "Example.method")


@pytest.mark.parametrize("name", list(profiles.PROFILES))
def test_every_profile_builds_every_model_it_covers_with_its_rules(name: str) -> None:
    profile = profiles.get(name)
    for model in profile.models:
        if model == "planner":
            assert profile.rules_of(model) == frozenset()  # MigrationPlanner in every release
            continue
        entry = catalog.get(model)
        built = entry.make("fixed", {}, name)
        assert built.profile == name
        protocol = getattr(built, "protocol", None)
        if protocol is not None:
            assert protocol.rules == profile.rules_of(model)
        for key, value in profile.scope_of(model).items():
            assert entry.scope({}, name)[key] == value


def test_a_variant_adds_its_rule_to_the_profile_s() -> None:
    built = catalog.get("shutdown").make("hz36-shutdown", {}, "design")
    assert "hz36-shutdown" in built.protocol.rules  # type: ignore[attr-defined]
    assert built.profile == "design" and built.variant == "hz36-shutdown"


def test_unknown_names_are_refused_naming_what_is_known() -> None:
    with pytest.raises(ValueError, match=r"unknown profile 'hz-9'; known: fixed, design"):
        profiles.get("hz-9")
    with pytest.raises(ValueError, match=r"profile ignite-3-zone does not cover model "
                                         r"membership \(it covers ignite-rebalance\)"):
        catalog.get("membership").make("fixed", {}, "ignite-3-zone")
    with pytest.raises(ValueError, match=r"unknown membership rule 'no-such-rule'"):
        check_rules("membership", ["no-such-rule"], {"a-rule": None})
    assert check_rules("membership", ["fixed", "a-rule"], {"a-rule": None}) == {"a-rule"}


def test_a_rule_cites_a_source_and_says_what_fixed_does() -> None:
    with pytest.raises(ValueError, match="cites at least one source"):
        Rule("r", "the code does this", "fixed does that", ())
    with pytest.raises(ValueError, match="needs a name, a doc and what fixed does"):
        Rule("r", "the code does this", "", (SOURCE,))
    with pytest.raises(ValueError, match="declared twice"):
        rule_table(Rule("r", "a", "b", (SOURCE,)), Rule("r", "a", "b", (SOURCE,)))
    with pytest.raises(ValueError, match="models it does not cover"):
        Profile("p", "t", "d", {"membership": ()}, scope={"parallel": {"max-parallel": 3}})


def test_every_rule_of_every_protocol_names_its_source_in_full() -> None:
    for entry in catalog.MODELS.values():
        for rule in entry.rule_table.values():
            for source in rule.sources:
                assert re.fullmatch(r"[\w.-]+/[\w.-]+", source.repo), rule.name
                assert source.ref and source.path and source.method, rule.name


def _one_model_profile(monkeypatch: pytest.MonkeyPatch, rules: tuple[str, ...],
                       findings: dict[str, str]) -> None:
    monkeypatch.setitem(profiles.PROFILES, "test-line", Profile(
        "test-line", "a test release line", "shutdown with rules", {"shutdown": rules},
        scope={"shutdown": {"crashes": 0}}, findings={"shutdown": findings}))


def test_the_profile_zoo_passes_when_a_profile_breaks_exactly_its_declared_findings(
        monkeypatch: pytest.MonkeyPatch) -> None:
    # hz36-shutdown, named as a shipped flaw, breaks SHUT-LEAVE-EMPTY at the shutdown scope
    _one_model_profile(monkeypatch, ("hz36-shutdown",), {"SHUT-LEAVE-EMPTY": "HZ-PT-0"})
    doc = run_profile_zoo("test-line", Bounds())
    (model,) = doc["models"]
    assert model["model"] == "shutdown"
    broken = {b["spec"]: b for b in model["broken"]}
    assert broken["SHUT-LEAVE-EMPTY"]["finding"] == "HZ-PT-0"
    undeclared = [b["spec"] for b in model["broken"] if not b["declared"]]
    assert doc["result"] == ("violation" if undeclared else "ok")
    assert model["command"] == ("partsafe check shutdown --profile test-line --keep-going")


def test_the_profile_zoo_fails_on_a_finding_not_reached_and_on_one_not_declared(
        monkeypatch: pytest.MonkeyPatch) -> None:
    _one_model_profile(monkeypatch, (), {"SHUT-LEAVE-EMPTY": "HZ-PT-0"})
    doc = run_profile_zoo("test-line", Bounds())
    assert doc["result"] == "violation"
    assert doc["models"][0]["missing"] == [{"spec": "SHUT-LEAVE-EMPTY", "finding": "HZ-PT-0"}]
    _one_model_profile(monkeypatch, ("hz36-shutdown",), {})
    doc = run_profile_zoo("test-line", Bounds())
    assert doc["result"] == "violation"
    assert any(not b["declared"] for b in doc["models"][0]["broken"])


def test_the_profile_zoo_is_incomplete_when_a_bound_ends_a_search(
        monkeypatch: pytest.MonkeyPatch) -> None:
    _one_model_profile(monkeypatch, (), {})
    doc = run_profile_zoo("test-line", Bounds(max_states=50))
    assert doc["result"] == "incomplete"
    assert doc["models"][0]["incomplete_reason"]


def test_the_cli_reports_the_profile_and_refuses_what_does_not_apply(
        monkeypatch: pytest.MonkeyPatch) -> None:
    runner = CliRunner()
    out = runner.invoke(main, ["check", "twophase", "--profile", "design", "--json"])
    assert out.exit_code == 0 and json.loads(out.output)["profile"] == "design"
    out = runner.invoke(main, ["check", "twophase", "--profile", "design"])
    assert "verdict: OK, check twophase (fixed, profile design)" in out.output
    out = runner.invoke(main, ["check", "twophase", "--profile", "hz-4.1"])
    assert out.exit_code == 2
    assert "--profile hz-4.1 does not cover model twophase" in out.output
    out = runner.invoke(main, ["check", "twophase", "--profile", "hz-0"])
    assert out.exit_code == 2 and "unknown profile 'hz-0'" in out.output
    out = runner.invoke(main, ["zoo", "--profile", "hz-0"])
    assert out.exit_code == 2 and "unknown profile 'hz-0'" in out.output
    out = runner.invoke(main, ["zoo", "--max-seconds", "5"])
    assert out.exit_code == 2 and "apply with --profile" in out.output
    out = runner.invoke(main, ["profiles", "--json"])
    doc = {p["name"]: p for p in json.loads(out.output)}
    assert out.exit_code == 0 and set(doc) == set(profiles.PROFILES)
    assert set(doc["hz-4.1"]["models"]) == set(profiles.get("hz-4.1").models)
    _one_model_profile(monkeypatch, ("hz36-shutdown",), {"SHUT-LEAVE-EMPTY": "HZ-PT-0"})
    out = runner.invoke(main, ["zoo", "--profile", "test-line", "--no-progress"])
    last = out.output.strip().splitlines()[-1]
    assert last.startswith("verdict: ") and "zoo of profile test-line (1 models)" in last


def test_replay_runs_under_the_artifact_s_profile_or_the_one_named(tmp_path) -> None:  # type: ignore[no-untyped-def]
    runner = CliRunner()
    trace = tmp_path / "t.json"
    out = runner.invoke(main, ["check", "shutdown", "--variant", "hz36-shutdown", "--crashes",
                               "0", "--profile", "design", "--trace-out", str(trace)])
    assert out.exit_code == 1, out.output
    assert json.loads(trace.read_text())["profile"] == "design"
    out = runner.invoke(main, ["replay", str(trace), "--json"])
    assert out.exit_code == 1 and json.loads(out.output)["profile"] == "design"
    out = runner.invoke(main, ["replay", str(trace), "--profile", "fixed", "--json"])
    assert json.loads(out.output)["profile"] == "fixed"
    out = runner.invoke(main, ["replay", str(trace), "--profile", "ignite-3-zone"])
    assert out.exit_code == 2 and "does not cover model shutdown" in out.output

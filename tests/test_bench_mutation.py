"""The mutation benchmark's own logic (tests/benchmarks/bench_mutation.py), without running it:
how a check's exit status and report classify a mutant, which code is in scope, the stable ids
and the sample they draw, the score, and the triage file (the repository's own included)."""

from __future__ import annotations

import ast
import json
from pathlib import Path

import bench_mutation as bench
import pytest
from click.testing import CliRunner

from partsafe.checker.cli.main import main
from partsafe.checker.protocols.twophase import TwoPhase
from partsafe.specs.registry import all_specs


def run_check(*args: str) -> bench.CheckOutcome:
    """`partsafe check ARGS --json` in this process, classified as the benchmark does."""
    r = CliRunner().invoke(main, ["check", *args, "--json", "--no-progress"])
    return bench.classify(r.exit_code, r.stdout, r.stderr)


# --- exit statuses ------------------------------------------------------------------------------


def test_a_violation_kills_and_names_the_spec() -> None:
    assert run_check("twophase", "--variant", "tm-commit-early") == bench.CheckOutcome(
        bench.KILLED, "TC-CONSISTENT")


def test_exit_0_survives_and_the_planners_known_findings_do_not_kill() -> None:
    assert run_check("planner", "--replicas", "2").outcome == bench.SURVIVED


def test_a_handler_that_raises_kills_by_error(monkeypatch: pytest.MonkeyPatch) -> None:
    """partsafe reports a handler's exception as the MODEL-ERROR violation (exit 1): a crash of
    the model, not a spec's kill."""
    def broken(self: TwoPhase, s: int) -> list:
        raise ZeroDivisionError("mutated")

    monkeypatch.setattr(TwoPhase, "successors", broken)
    got = run_check("twophase")
    assert got.outcome == bench.ERROR
    assert got.detail.startswith("MODEL-ERROR: ZeroDivisionError: mutated")


def test_a_check_that_cannot_run_kills_by_error() -> None:
    got = run_check("migration", "--variant", "no-such-variant")
    assert got.outcome == bench.ERROR and got.detail.startswith("exit 2: ")
    assert "no-such-variant" in got.detail


def test_a_bound_reached_is_undecided() -> None:
    assert run_check("migration", "--max-states", "5").outcome == bench.UNDECIDED


@pytest.mark.parametrize(("code", "stdout", "outcome", "detail"), [
    (None, "", bench.TIMEOUT, "timed out"),
    (1, "", bench.ERROR, "exit 1 without a report: ImportError: boom"),
    (1, "[]", bench.ERROR, "exit 1 with a report that is not an object"),
    (-9, "", bench.ERROR, "exit -9: ImportError: boom"),
    (1, json.dumps({"result": "gap", "violations": [],
                    "goals": [{"name": "joiner-gets-data", "reached": False},
                              {"name": "migration-commits", "reached": True}]}),
     bench.KILLED, "gap: joiner-gets-data"),
    (1, json.dumps({"result": "violation", "known_findings": ["PLAN-OWNER"],
                    "violations": [{"spec": "PLAN-OWNER"}, {"spec": "PLAN-NO-CYCLE"}]}),
     bench.KILLED, "PLAN-NO-CYCLE"),
])
def test_classify(code: int | None, stdout: str, outcome: str, detail: str) -> None:
    """A traceback (no report), a signal, a coverage gap, the planner's known findings."""
    got = bench.classify(code, stdout, "Traceback (most recent call last):\nImportError: boom\n")
    assert got == bench.CheckOutcome(outcome, detail)


# --- scope --------------------------------------------------------------------------------------

SOURCE = '''\
"""A module."""
from typing import cast

LIMIT = 3


class P:
    """A protocol."""

    def __init__(self, variant: str = "fixed") -> None:
        self.rules = frozenset({variant})
        self.strict = "loose" not in self.rules

    def on_message(self, st: int) -> int:
        """A handler."""
        if st > LIMIT:
            raise ValueError(f"st {st + 1} too big")
        if type(st) is P:
            return 0
        if "lossy" in self.rules:
            st = st - 2
        elif not self.strict:
            st = self._legacy(st)
        assert st >= 0
        return cast(int | None, st + 1)

    def _legacy(self, st: int) -> int:
        return st * 2

    def describe(self, st: int) -> str:
        return str(st + 1)

    def on_timer(self, *, st: int) -> int:
        return _check(st, 0) + 1


def _check(n: int, low: int) -> int:
    return n - low
'''


def where(line: int, text: str, nth: int = 0) -> tuple[tuple[int, int], tuple[int, int]]:
    """The span of the `nth` `text` on `line` of SOURCE."""
    row = SOURCE.split("\n")[line - 1]
    col = -1
    for _ in range(nth + 1):
        col = row.index(text, col + 1)
    return (line, col), (line, col + len(text))


@pytest.mark.parametrize(("line", "text", "operator", "reason"), [
    (4, "3", "core/NumberReplacer", "module level"),
    (8, '"""A protocol."""', "core/NumberReplacer", "docstring"),
    (10, "None", "core/ReplaceBinaryOperator_BitOr_Add", "type hint"),
    (17, "+", "core/ReplaceBinaryOperator_Add_Sub", "message text"),
    (18, "is", "core/ReplaceComparisonOperator_Is_Eq", "`is Class` read as `== Class`"),
    (21, "-", "core/ReplaceBinaryOperator_Sub_Add", "variant or profile rule only"),
    (23, "self._legacy(st)", "core/ReplaceBinaryOperator_Mul_Add",
     "variant or profile rule only"),
    (24, ">=", "core/ReplaceComparisonOperator_GtE_Lt", "assert"),
    (25, "|", "core/ReplaceBinaryOperator_BitOr_BitAnd", "type hint"),
    (28, "*", "core/ReplaceBinaryOperator_Mul_Add", "variant or profile rule only"),
    (31, "+", "core/ReplaceBinaryOperator_Add_Sub", "presentation"),
    (16, ">", "core/ReplaceComparisonOperator_Gt_GtE", "input check"),
    (34, "0", "core/NumberReplacer", "input validation"),
    (34, "+", "core/ReplaceBinaryOperator_Add_Sub", None),
    (38, "-", "core/ReplaceBinaryOperator_Sub_Add", "input validation"),
    (33, "*", "core/ReplaceBinaryOperator_Mul_Add", "signature"),
    (18, "is", "core/ReplaceComparisonOperator_Is_IsNot", None),
    (22, "not self.strict", "core/AddNot", None),
    (25, "+", "core/ReplaceBinaryOperator_Add_Sub", None),
    (12, "not in", "core/ReplaceComparisonOperator_NotEq_Eq", None),
])
def test_scope(line: int, text: str, operator: str, reason: str | None,
               monkeypatch: pytest.MonkeyPatch) -> None:
    """The handler's logic is in scope; a module constant, a docstring, a type hint, a raise and
    its message, the condition of an ``if`` that only raises, ``is Class`` as ``==``, an assert,
    a signature (a keyword-only ``*`` too), presentation, an input check and a call of it, and
    the code only a rule runs (a rule's branch, a flag set from the rules, a method called only
    there) are not."""
    monkeypatch.setitem(bench.SKIPPED_FUNCTIONS, "refimpl/p.py",
                        {"_check": "input validation: a bound"})
    spans = bench.scope_spans(SOURCE, "refimpl/p.py")
    got = bench.out_of_scope(spans, operator, *where(line, text))
    assert (got if got is None else got.split(":")[0]) == reason


def test_fixed_value_reads_rule_conditions() -> None:
    def value(expr: str) -> bool | None:
        return bench.fixed_value(ast.parse(expr, mode="eval").body, {"strict": True})

    assert value('"x" in self.rules') is False
    assert value('"x" not in self.rules and self.strict') is True
    assert value('self.rules.isdisjoint(("a", "b"))') is True
    assert value('variant == "hz37-naive-order"') is False
    assert value('variant == "fixed"') is None
    assert value('protocol == "3.7" or "x" in self.rules') is None
    assert value('"x" in self.rules or not self.strict') is False


# --- stable ids and sampling --------------------------------------------------------------------


def mutant(line: int, text: str, line_text: str, operator: str = "core/NumberReplacer",
           function: str = "P.on_message", col: int = 12) -> bench.Mutant:
    return bench.Mutant("planner", "refimpl/p.py", operator, 0, (line, col),
                        (line, col + len(text)), function, text, line_text)


def test_a_stable_id_survives_edits_elsewhere() -> None:
    """The id does not change when the line moves (code added above) or its indentation
    changes, and does when the mutated text or the function does."""
    a = bench.stable_id(mutant(10, "1", "        x = 1"), 0)
    assert a == bench.stable_id(mutant(42, "1", "        x = 1"), 0)
    assert a == bench.stable_id(mutant(42, "1", "    x = 1", col=8), 0)
    assert a != bench.stable_id(mutant(10, "1", "        x = 1", function="P.other"), 0)
    assert a != bench.stable_id(mutant(10, "1", "        y = 1"), 0)
    assert a.startswith("refimpl/p.py:P.on_message:NumberReplacer:")


def test_equal_mutants_are_numbered_in_cosmic_rays_order() -> None:
    """cosmic-ray's +1 and -1 of one number are the same text at the same place."""
    ids = [m.id for m in bench.with_ids([mutant(10, "1", "        x = 1")] * 2)]
    assert ids[1] == ids[0] + "#1" and "#" not in ids[0]


def pool() -> list[bench.Mutant]:
    return bench.with_ids(mutant(n, str(n), f"        x = {n}") for n in range(1, 101))


def test_the_sample_depends_on_the_seed_not_on_the_order() -> None:
    mutants = pool()
    first = bench.sample(mutants, 20, 7)
    assert len(first) == 20 == len({m.id for m in first})
    assert bench.sample(list(reversed(mutants)), 20, 7) == first
    assert bench.sample(mutants, 20, 8) != first
    assert [m.id for m in first] == sorted(m.id for m in first)
    assert bench.sample(mutants, 200, 7) == sorted(mutants, key=lambda m: m.id)


def test_the_sample_is_drawn_per_protocol() -> None:
    """The same ids in two protocols rank differently."""
    other = [bench._replace(m, protocol="ignite") for m in pool()]
    assert [m.id for m in bench.sample(other, 20, 7)] != [m.id for m in bench.sample(pool(), 20,
                                                                                      7)]


def test_a_change_of_pool_changes_the_sample_by_that_mutant_only() -> None:
    """An edit elsewhere in the code or a change of scope keeps the rest of the sample (and the
    triage of its survivors)."""
    mutants = pool()
    first = bench.sample(mutants, 20, 7)
    without = bench.sample([m for m in mutants if m != first[3]], 20, 7)
    assert len(set(first) - set(without)) == 1 and len(set(without) - set(first)) == 1
    added = bench._replace(mutants[0], id="refimpl/p.py:P.new:AddNot:ffffffffff")
    assert len(set(bench.sample([*mutants, added], 20, 7)) - set(first)) <= 1


# --- score --------------------------------------------------------------------------------------


def pair(outcome: str, verdict: str | None = None) -> tuple[str, bench.Triage | None]:
    return outcome, None if verdict is None else bench.Triage(
        verdict, "why", "MEM-VERSION" if verdict == bench.MISSED else None)


def test_score_is_kills_over_the_non_equivalent() -> None:
    """Every kind of kill counts; an undecided or untriaged mutant counts as not killed."""
    s = bench.score([pair(bench.KILLED), pair(bench.ERROR), pair(bench.TIMEOUT),
                     pair(bench.SURVIVED, bench.EQUIVALENT), pair(bench.SURVIVED, bench.MISSED),
                     pair(bench.SURVIVED), pair(bench.UNDECIDED)])
    assert (s.sampled, s.killed, s.equivalent, s.missed, s.untriaged) == (7, 3, 1, 1, 1)
    assert s.score == 3 / 6
    assert s.as_json()["meets_target"] is False
    assert bench.score([pair(bench.SURVIVED, bench.EQUIVALENT)]).score is None


def test_a_report_read_back_is_classified_by_the_triage_as_it_is_now() -> None:
    """--rescore: the survivors take the current triage, the figures follow, and an entry for a
    mutant no longer in scope is stale (an entry for another protocol's module is not)."""
    def m(i: int, outcome: str) -> dict:
        return {"id": f"refimpl/planner.py:plan:AddNot:{i:010d}", "outcome": outcome}

    report = {"protocols": {"planner": {"modules": ["refimpl/planner.py"], "mutants": [
        m(i, bench.KILLED) for i in range(8)] + [m(8, bench.SURVIVED), m(9, bench.SURVIVED)]}}}
    equivalent = bench.Triage(bench.EQUIVALENT, "sorted already")
    gone = "refimpl/planner.py:plan:AddNot:9999999999"
    other = "refimpl/ignite.py:_elect:AddNot:0000000001"
    bench.apply_triage(report, {m(8, "")["id"]: equivalent, gone: equivalent,
                                other: equivalent}, lambda spec: True,
                       {m(i, "")["id"] for i in range(10)})
    p = report["protocols"]["planner"]
    assert (p["equivalent"], p["untriaged"], p["score"]) == (1, 1, round(8 / 9, 4))
    assert not report["meets_target"]
    assert [s["triage"] and s["triage"]["verdict"] for s in report["survivors"]] == [
        bench.EQUIVALENT, None]
    assert report["stale_triage"] == [gone]
    missed = bench.Triage(bench.MISSED, "w", "PLAN-OWNER")
    bench.apply_triage(report, {m(8, "")["id"]: equivalent, m(9, "")["id"]: missed},
                       lambda spec: spec == "PLAN-OWNER", set())
    assert report["survivors"][1]["triage"]["spec_registered"] is True
    assert report["protocols"]["planner"]["score"] == round(8 / 9, 4)


# --- triage -------------------------------------------------------------------------------------

ID = "refimpl/membership.py:Membership._on_claim:ReplaceComparisonOperator_Eq_NotEq:0123456789"


def test_triage_entries() -> None:
    got = bench.parse_triage(f'''
[mutants."{ID}"]
verdict = "missed"
spec = "MEM-MASTER-ONLY"
why = "a claim from a younger member is accepted"
where = "refimpl/membership.py:331"

[mutants."{ID}#1"]
verdict = "equivalent"
why = "the list is sorted already"
''')
    assert got[ID] == bench.Triage("missed", "a claim from a younger member is accepted",
                                   "MEM-MASTER-ONLY", "refimpl/membership.py:331")
    assert got[f"{ID}#1"].verdict == "equivalent" and got[f"{ID}#1"].spec is None


@pytest.mark.parametrize(("text", "message"), [
    ("[mutants", "t.toml: not valid TOML"),
    ('[other."x"]\nverdict = "missed"', "t.toml: unknown top-level keys ['other']"),
    ('[mutants."a:b"]\nverdict = "missed"', 't.toml: mutants."a:b": not a stable id'),
    (f'[mutants."{ID}"]\nverdict = "dead"\nwhy = "w"', "verdict is 'dead'"),
    (f'[mutants."{ID}"]\nverdict = "equivalent"', "says equivalent without why"),
    (f'[mutants."{ID}"]\nverdict = "missed"\nwhy = "w"', "names the spec that should kill it"),
    (f'[mutants."{ID}"]\nverdict = "missed"\nwhy = "w"\nspec = "mem version"',
     "got 'mem version'"),
    (f'[mutants."{ID}"]\nverdict = "equivalent"\nwhy = "w"\nspec = "MEM-VERSION"',
     "an equivalent mutant names no spec"),
    (f'[mutants."{ID}"]\nverdict = "equivalent"\nwhy = "w"\nreason = "r"',
     "unknown keys ['reason']"),
    (f'[mutants."{ID}"]\nverdict = "equivalent"\nwhy = 3', "why must be a string"),
])
def test_a_malformed_triage_entry_is_named(text: str, message: str) -> None:
    with pytest.raises(bench.TriageError) as err:
        bench.parse_triage(text, "t.toml")
    assert message in str(err.value)
    assert str(err.value).startswith("t.toml: ")


def test_the_repositorys_triage_file_parses_and_names_real_places() -> None:
    """Every entry of tests/benchmarks/mutation_triage.toml is well formed, names a protocol
    module of the benchmark, and a missed one names a spec id (an existing one, a new one still
    to be written, or MODEL-ERROR: the checker's own report of a handler that raises)."""
    triage = bench.load_triage(bench.TRIAGE_FILE)
    assert triage, "the triage file classifies the survivors of the last run"
    modules = {m for p in bench.PROTOCOLS.values() for m in p.modules}
    known = {s.id for s in all_specs()}
    for key, t in triage.items():
        assert key.split(":")[0] in modules, key
        if t.where is not None:
            assert t.where.split(":")[0] == key.split(":")[0], key
        if t.verdict == bench.MISSED:
            assert t.spec is not None
            assert t.spec in known or t.spec == "MODEL-ERROR" or t.spec.split("-")[0] in {
                "MEM", "PT", "MIG", "PAR", "IGN", "PLAN", "DATA", "SHUT"}


def test_an_unreadable_triage_file_is_named(tmp_path: Path) -> None:
    with pytest.raises(bench.TriageError, match="cannot read"):
        bench.load_triage(tmp_path / "missing.toml")

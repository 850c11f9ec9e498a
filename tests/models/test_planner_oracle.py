"""The Z3 planner oracle (models/planner_oracle.py): hand-made pairs from 000 §3.2.2, every pair of
the exhaustive space for n <= 3 against an exact breadth-first search, the spec predicates, and
input validation."""

from __future__ import annotations

import itertools
from collections import deque
from collections.abc import Iterator, Mapping, Sequence

import pytest
import z3

from partsafe.checker.planner.space import canonical_pairs
from partsafe.models import planner_oracle as po
from partsafe.models.planner_oracle import (
    SAFETY_SPECS,
    OracleResult,
    apply_step,
    check_plan,
    replay,
    shortest_safe_plan,
)
from partsafe.specs.planner import hotter_first, no_decrease, no_duplicate, owner_kept

Replicas = tuple[str | None, ...]


def arr(text: str) -> Replicas:
    """``"A.C"`` is ``("A", None, "C")``."""
    return tuple(None if c == "." else c for c in text)


# --- an independent model of the steps and specs (MigrationManager.applyMigration, 000 §3.2) ------


def step_once(s: Replicas, step: Mapping[str, object]) -> Replicas:
    """applyMigration, written again without any validation: the oracle's plans must replay."""
    out: list[str | None] = list(s)
    if step["type"] == "clear":
        out[step["source_current_index"]] = None  # type: ignore[index]
        return tuple(out)
    for key in ("source_current_index", "destination_current_index"):
        if step[key] != -1:
            out[step[key]] = None  # type: ignore[index]
    out[step["destination_new_index"]] = step["destination"]  # type: ignore[index]
    if step["source_new_index"] != -1:
        out[step["source_new_index"]] = step["source"]  # type: ignore[index]
    return tuple(out)


def safe(cur: Replicas, tgt: Replicas, a: Replicas,
         specs: frozenset[str] = SAFETY_SPECS) -> bool:
    def c(x: Sequence[str | None]) -> int:
        return sum(r is not None for r in x)

    members = [r for r in a if r is not None]
    holds = {
        "PLAN-NO-DECREASE": c(a) >= min(c(cur), c(tgt)),
        "PLAN-HOTTER-FIRST": all(c(a[:p]) >= min(c(cur[:p]), c(tgt[:p]))
                                 for p in range(1, len(a) + 1)),
        "PLAN-NO-DUPLICATE": len(members) == len(set(members)),
        "PLAN-OWNER": cur[0] is None or tgt[0] is None or a[0] is not None,
    }
    return all(holds[spec] for spec in specs)


def successors(s: Replicas, members: Sequence[str]) -> Iterator[tuple[int, Replicas]]:
    """(cost, next array): clears cost 0, migrations 1; a source new index must be empty and
    colder than the source's current index."""
    n = len(s)
    for i in range(n):
        if s[i] is not None:
            yield 0, (*s[:i], None, *s[i + 1:])
    for d in members:
        for dst_cur in [i for i in range(n) if s[i] == d] or [-1]:
            for dst_new, src_cur in itertools.product(range(n), range(-1, n)):
                if src_cur > -1 and (s[src_cur] is None or src_cur == dst_cur):
                    continue
                news = [-1] if src_cur == -1 else [
                    -1, *(i for i in range(src_cur + 1, n) if s[i] is None)]
                for src_new in news:
                    out = list(s)
                    for i in (src_cur, dst_cur):
                        if i > -1:
                            out[i] = None
                    out[dst_new] = d
                    if src_new > -1:
                        out[src_new] = s[src_cur]
                    yield 1, tuple(out)


def exact_least_migrations(cur: Replicas, tgt: Replicas,
                           specs: frozenset[str] = SAFETY_SPECS) -> int | None:
    """0-1 breadth-first search over every safe reachable array: no bound on plan length."""
    members = list(dict.fromkeys(r for r in cur + tgt if r is not None))
    dist = {cur: 0}
    queue = deque([cur])
    while queue:
        s = queue.popleft()
        for cost, nxt in successors(s, members):
            if safe(cur, tgt, nxt, specs) and dist.get(nxt, 1 << 30) > dist[s] + cost:
                dist[nxt] = dist[s] + cost
                (queue.appendleft if cost == 0 else queue.append)(nxt)
    return dist.get(tgt)


def assert_valid(cur: Replicas, tgt: Replicas, r: OracleResult,
                 specs: frozenset[str] = SAFETY_SPECS) -> None:
    assert r.exists and r.plan is not None and r.arrays is not None
    arrays = [cur]
    for step in r.plan:
        assert set(step) == {"type", *po.STEP_FIELDS}
        arrays.append(step_once(arrays[-1], step))
    assert tuple(arrays) == r.arrays
    assert arrays[-1] == tgt
    assert replay(cur, tgt, r.plan) == r.arrays
    assert check_plan(cur, tgt, r.arrays, specs) == []
    assert r.migrations == sum(step["type"] == "migration" for step in r.plan)


# --- hand-made pairs (000 §3.2.2) -----------------------------------------------------------------


@pytest.mark.parametrize(("current", "target", "migrations"), [
    ("ABC", "ABC", 0),
    ("ABC", "DBC", 1),   # MOVE index 0 from A to D
    ("A.C", "ADC", 1),   # COPY D to index 1
    ("A.C", "DAC", 1),   # SHIFT DOWN A to index 1, D owner
    ("A.BC", "ABC.", 2),  # two SHIFT UPs
    ("ABCD", "ACDE", 3),  # MOVE 3, MOVE 2, MOVE 1: a SHIFT UP of C leaves [A, C, None, D]
    ("ABCD", "BDC.", 2),  # example 6: SHIFT UP D from 3 to 1, then MOVE index 0 from A to B
])
def test_design_examples(current: str, target: str, migrations: int) -> None:
    cur, tgt = arr(current), arr(target)
    r = shortest_safe_plan(cur, tgt)
    assert r.migrations == migrations
    assert_valid(cur, tgt, r)
    assert r.bound == 2 * len(cur)


def test_shift_up_of_c_would_decrease_the_count() -> None:
    cur, tgt = arr("ABCD"), arr("ACDE")
    shift_up = {"type": "migration", "source": "B", "source_current_index": 1,
                "source_new_index": -1, "destination": "C", "destination_current_index": 2,
                "destination_new_index": 1}
    arrays = replay(cur, tgt, [shift_up])
    assert arrays[1] == arr("AC.D")
    assert check_plan(cur, tgt, arrays) == [("PLAN-NO-DECREASE", 1), ("PLAN-HOTTER-FIRST", 1)]
    assert not shortest_safe_plan(cur, tgt, max_steps=2).exists


def test_cycle_has_no_safe_plan_with_all_four_specs() -> None:
    r = shortest_safe_plan(arr("AB"), arr("BA"))
    assert (r.exists, r.migrations, r.plan, r.arrays, r.bound) == (False, None, None, None, 4)
    assert not shortest_safe_plan(arr("ABC"), arr("BCA")).exists


def test_cycle_is_one_clear_and_one_shift_down_without_the_count_specs() -> None:
    specs = frozenset({"PLAN-NO-DUPLICATE", "PLAN-OWNER"})
    cur, tgt = arr("AB"), arr("BA")
    r = shortest_safe_plan(cur, tgt, specs)
    assert r.migrations == 1
    assert_valid(cur, tgt, r, specs)
    # 000 §3.2.1: clear the colder index first, then A shifts down and B becomes the owner
    assert r.arrays == (arr("AB"), arr("A."), arr("BA"))
    assert [s["type"] for s in r.plan or ()] == ["clear", "migration"]
    assert check_plan(cur, tgt, r.arrays) == [("PLAN-NO-DECREASE", 1), ("PLAN-HOTTER-FIRST", 1)]


def test_loose_shift_down_swaps_or_moves_up() -> None:
    # Without strict_shift_down the six fields allow more than 000 §3.1 / Hazelcast do.
    r = shortest_safe_plan(arr("AB"), arr("BA"), strict_shift_down=False)
    assert r.migrations == 1 and r.arrays == (arr("AB"), arr("BA"))
    assert shortest_safe_plan(arr("ABCD"), arr("ACDE"), strict_shift_down=False).migrations == 2
    assert shortest_safe_plan(arr("ABCD"), arr("BDC."), strict_shift_down=False).migrations == 1
    # ... or move the source up: B from 2 to 1 while C moves from 3 to 2, one migration
    loose = shortest_safe_plan(arr("A.BC"), arr("ABC."), strict_shift_down=False)
    assert loose.migrations == 1 and loose.arrays == (arr("A.BC"), arr("ABC."))


def test_target_without_owner_is_reached_by_clears() -> None:
    # PLAN-OWNER keeps an owner only where the target has one too: a clear of index 0 is the plan
    r = shortest_safe_plan(arr("AB"), arr(".B"))
    assert r.exists and r.migrations == 0 and r.arrays == (arr("AB"), arr(".B"))


def test_owner_kept_where_current_and_target_have_one() -> None:
    # [A,B] -> [B,C] without PLAN-OWNER may empty index 0 on the way; with it, never
    for spec_set in (SAFETY_SPECS, SAFETY_SPECS - {"PLAN-OWNER"}):
        r = shortest_safe_plan(arr("AB"), arr("BC"), spec_set)
        assert r.exists and r.arrays is not None
        if "PLAN-OWNER" in spec_set:
            assert all(a[0] is not None for a in r.arrays)


# --- the exhaustive space -----------------------------------------------------------------------


@pytest.mark.parametrize(("n", "with_plan", "longest"), [(1, 5, 1), (2, 33, 2), (3, 280, 4)])
def test_every_pair_agrees_with_exact_search(n: int, with_plan: int, longest: int) -> None:
    found = 0
    most = 0
    for cur, tgt in canonical_pairs(n):
        r = shortest_safe_plan(cur, tgt)
        exact = exact_least_migrations(cur, tgt)
        assert r.migrations == exact, (cur, tgt)
        if r.exists:
            assert_valid(cur, tgt, r)
            found += 1
            most = max(most, r.migrations or 0)
        else:  # none within the bound 2n, and none at all (the search has no bound)
            assert r.plan is None and r.bound == 2 * n
    assert (found, most) == (with_plan, longest)


@pytest.mark.parametrize("specs", [frozenset(c) for k in range(4)
                                   for c in itertools.combinations(sorted(SAFETY_SPECS), k)])
def test_every_subset_of_specs_agrees_with_exact_search(specs: frozenset[str]) -> None:
    for cur, tgt in canonical_pairs(2):
        r = shortest_safe_plan(cur, tgt, specs)
        assert r.migrations == exact_least_migrations(cur, tgt, specs), (cur, tgt)
        if r.exists:
            assert_valid(cur, tgt, r, specs)


# --- the spec predicates ------------------------------------------------------------------------


def test_no_decrease() -> None:
    cur, tgt = arr("ABC"), arr("AB.")
    assert no_decrease(cur, tgt, arr("A.C"))
    assert not no_decrease(cur, tgt, arr("A.."))


def test_hotter_first() -> None:
    cur, tgt = arr("ABCD"), arr("BDC.")
    assert hotter_first(cur, tgt, arr("ADC."))  # example 6: index 3 gives way
    assert not hotter_first(cur, tgt, arr("B.CD"))  # SHIFT UP B to 0 empties index 1
    assert no_decrease(cur, tgt, arr("B.CD"))


def test_no_duplicate() -> None:
    cur, tgt = arr("AB."), arr("ABC")
    assert no_duplicate(cur, tgt, arr("A.B"))
    assert not no_duplicate(cur, tgt, arr("ABA"))


def test_owner_kept() -> None:
    assert owner_kept(arr("AB"), arr("BA"), arr("B."))
    assert not owner_kept(arr("AB"), arr("BA"), arr(".A"))
    assert owner_kept(arr(".B"), arr("AB"), arr(".B"))


def test_check_plan_reports_spec_and_step() -> None:
    cur, tgt = arr("ABC"), arr("BAC")
    arrays = [cur, arr(".BC"), arr("BBC"), arr("B.C"), tgt]
    assert check_plan(cur, tgt, arrays) == [
        ("PLAN-NO-DECREASE", 1), ("PLAN-HOTTER-FIRST", 1), ("PLAN-OWNER", 1),
        ("PLAN-NO-DUPLICATE", 2),
        ("PLAN-NO-DECREASE", 3), ("PLAN-HOTTER-FIRST", 3)]
    assert check_plan(cur, tgt, arrays, {"PLAN-OWNER"}) == [("PLAN-OWNER", 1)]
    assert check_plan(cur, tgt, [cur, tgt], frozenset()) == []


def test_z3_constraints_are_the_python_predicates() -> None:
    """Each spec definition gives the same answer in Python and, on constant arrays, in Z3."""
    for cur, tgt in canonical_pairs(2):
        names = list(dict.fromkeys(r for r in cur + tgt if r is not None))
        code = {r: k for k, r in enumerate(names, start=1)}
        for a in itertools.product([None, *names], repeat=2):
            terms = [z3.IntVal(code[r] if r is not None else 0) for r in a]
            for spec, definition in po._DEFINITIONS.items():
                symbolic = z3.simplify(definition(po._Z3, cur, tgt, terms))
                assert z3.is_true(symbolic) == po.SPEC_PREDICATES[spec](cur, tgt, a), (
                    spec, cur, tgt, a)


# --- the steps and the inputs -------------------------------------------------------------------


def migration(source: str | None, src_cur: int, src_new: int, destination: str | None,
              dst_cur: int, dst_new: int) -> dict[str, object]:
    return {"type": "migration", "source": source, "source_current_index": src_cur,
            "source_new_index": src_new, "destination": destination,
            "destination_current_index": dst_cur, "destination_new_index": dst_new}


def test_apply_step_follows_apply_migration() -> None:
    assert apply_step(arr("A.C"), migration("A", 0, 1, "D", -1, 0)) == arr("DAC")
    assert apply_step(arr("A.BC"), migration(None, -1, -1, "B", 2, 1)) == arr("AB.C")
    assert apply_step(arr("ABCD"), migration("B", 1, -1, "D", 3, 1)) == arr("ADC.")
    # a destination new index held by someone else drops that holder
    assert apply_step(arr("ABC"), migration(None, -1, -1, "C", 2, 1)) == arr("AC.")
    assert apply_step(arr("ABC"), {**migration(None, -1, -1, None, -1, -1), "type": "clear",
                                   "source": "B", "source_current_index": 1}) == arr("A.C")


@pytest.mark.parametrize(("array", "step", "message"), [
    ("AB", migration("A", 0, 1, "B", 1, 0), "not empty"),
    ("A.", migration("A", 0, 1, "B", 1, 0), "not at index 1"),
    (".AB", migration("A", 1, 0, "C", -1, 1), "hotter than 1"),
    ("AB", migration(None, -1, -1, "B", -1, 0), "already in"),
    ("AB", migration("B", 0, -1, "C", -1, 0), "not at index 0"),
    ("AB", migration("A", 0, -1, "A", 0, 1), "must differ"),
    ("AB", migration(None, -1, 1, "C", -1, 0), "source must be None"),
    ("AB", migration(None, -1, -1, "C", -1, 2), "destination_new_index"),
    ("AB", migration(None, -1, -1, None, -1, 0), "needs a destination"),
    ("A.", {"type": "clear", "source_current_index": 1}, "non-empty"),
    ("AB", {"type": "clear", "source": "A", "source_current_index": 1}, "not at index 1"),
    ("A.", {"type": "swap"}, "step type"),
])
def test_apply_step_rejects(array: str, step: dict[str, object], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        apply_step(arr(array), step)


def test_replay_limits_destinations_to_current_and_target() -> None:
    with pytest.raises(ValueError, match="step 0: destination 'Z'"):
        replay(arr("A."), arr("AB"), [migration(None, -1, -1, "Z", -1, 1)])


@pytest.mark.parametrize(("current", "target", "kwargs", "message"), [
    ((), (), {}, "1 to 7 indices"),
    (tuple("ABCDEFGH"), tuple("ABCDEFGH"), {}, "1 to 7 indices"),
    (("A", "B"), ("A",), {}, "same length"),
    (("A", "A"), ("A", "B"), {}, "appears twice in current"),
    (("A", 3), ("A", "B"), {}, r"current\[1\]"),
    ("AB", ("A", "B"), {}, "not a string"),
    (("A",), ("B",), {"specs": {"PLAN-FAST"}}, "unknown safety specs"),
    (("A",), ("B",), {"max_steps": -1}, "max_steps"),
])
def test_inputs_are_validated(current: object, target: object, kwargs: dict[str, object],
                              message: str) -> None:
    with pytest.raises(ValueError, match=message):
        shortest_safe_plan(current, target, **kwargs)  # type: ignore[arg-type]


def test_check_plan_validates_arrays() -> None:
    with pytest.raises(ValueError, match="arrays\\[1\\] has 1 indices"):
        check_plan(arr("AB"), arr("BA"), [arr("AB"), ("A",)])

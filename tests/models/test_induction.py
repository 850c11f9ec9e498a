"""k-induction for any size (models/induction.py): on a two-counter system, a property that no
1-inductive argument proves without a lemma is 2-inductive, and one a run breaks fails its base
case; `partsafe prove --k` reaches it."""

from __future__ import annotations

import z3

from partsafe.models.induction import k_induction, prove
from partsafe.models.system import Action, Property, System, Var


def _counters(*properties: Property) -> System:
    """x follows y one step behind; y counts up from 0: x ≥ 0 holds, but x ≥ 0 alone does not
    say y ≥ 0, which the next step's x needs."""
    return System(
        name="counters", variant="fixed", sorts=(),
        variables=(Var("x", "Int"), Var("y", "Int")),
        init=lambda f: z3.And(f.x == 0, f.y == 0),
        actions=(Action("tick", (), lambda f, a: z3.BoolVal(True, f.u.ctx),
                        lambda f, a: {"x": f.y, "y": f.y + 1}, ("x", "y"), "x := y; y += 1"),),
        properties=properties)


NONNEG = Property("X-NONNEG", state=lambda f: f.x >= 0, formula="x ≥ 0")
ZERO = Property("X-ZERO", state=lambda f: f.x == 0, formula="x = 0")


def test_a_two_inductive_property_is_proved_by_2_induction_only() -> None:
    system = _counters(NONNEG)
    assert prove(system, "X-NONNEG").verdict == "failed"
    assert k_induction(system, "X-NONNEG", 1).verdict == "failed"
    result = k_induction(system, "X-NONNEG", 2)
    assert result.verdict == "proved", result.reason
    assert [c["check"] for c in result.checks][-1] == "2-induction step of X-NONNEG"


def test_a_run_that_breaks_the_property_fails_the_base_case() -> None:
    result = k_induction(_counters(ZERO), "X-ZERO", 3)
    assert result.verdict == "failed"
    assert result.reason == "base case: X-ZERO after 2 steps does not hold"

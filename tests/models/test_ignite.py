"""The symbolic model of design 001 (models/ignite.py): bounded model checking of the variant
and of the fixed design, and the consecution of IGN-ONE-LEADER from its lemmas at any size."""

from __future__ import annotations

import time

import pytest
import z3

from partsafe.models import bmc, ignite
from partsafe.models.system import System

SIZES = {"Node": 3, "Config": 2, "Quorum": 4}


def test_variants_name_the_spec_they_break() -> None:
    from partsafe.refimpl.ignite import VARIANT_TABLE
    for variant, spec in ignite.VARIANTS.items():
        assert VARIANT_TABLE[variant].breaks == spec


def test_restart_keeps_peer_breaks_ign_restart() -> None:
    result = bmc.bmc(ignite.system("ig-restart-keeps-peer"), ["IGN-RESTART"], SIZES, 4)
    r = result["IGN-RESTART"]
    assert r.verdict == "counterexample"
    actions = [step["action"] for step in r.trace]
    assert "restart" in actions and actions[-1] == "win"


def test_fixed_is_clean_to_the_same_depth() -> None:
    result = bmc.bmc(ignite.system("fixed"), ["IGN-RESTART", "IGN-ONE-LEADER"], SIZES, 4)
    assert {r.verdict for r in result.values()} == {"bounded"}


def _consecution(system: System, spec: str, drop: str = "",
                 sizes: dict[str, int] | None = None) -> dict[str, str]:
    """``Inv ∧ T_a ⇒ spec′`` for every action, Inv the spec and its lemmas (less `drop`), for
    any size (``sizes`` None) or at ``sizes``."""
    u = system.universe(sizes)
    pre, post = system.frame(u, "pre"), system.frame(u, "post")
    prop = system.property(spec)
    assert prop.state is not None
    inv = [lm.state(pre) for lm in system.lemmas if lm.name in prop.lemmas and lm.name != drop]
    inv.append(prop.state(pre))
    out: dict[str, str] = {}
    for action in system.actions:
        solver = z3.Solver(ctx=u.ctx)
        solver.set("timeout", 60_000)
        params = system.param_consts(u, action, "pre")
        solver.add(*inv, system.transition(action, pre, post, params))
        started = time.perf_counter()
        answer = solver.check(z3.Not(prop.state(post)))
        assert time.perf_counter() - started < 60
        out[action.name] = str(answer)
    return out


def test_one_leader_follows_from_its_lemmas_at_any_size() -> None:
    answers = _consecution(ignite.system("fixed"), "IGN-ONE-LEADER")
    assert set(answers.values()) == {"unsat"}, answers


@pytest.mark.parametrize("lemma", ["blockers-candidate"])
def test_one_leader_needs_its_blockers(lemma: str) -> None:
    """Without the lemma, a state with two disjoint quorums of votes in one term is not ruled
    out: a counterexample to induction already at three nodes."""
    answers = _consecution(ignite.system("fixed"), "IGN-ONE-LEADER", drop=lemma, sizes=SIZES)
    assert answers["win"] == "sat"

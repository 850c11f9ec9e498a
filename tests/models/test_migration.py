"""The symbolic 000 §1-§2 model (models/migration.py): proofs for any size of the fixed design,
a proof that fails without its lemma, and the bounded counterexamples of the variants."""

from __future__ import annotations

import dataclasses

import pytest

from partsafe.models import migration as mg
from partsafe.models.bmc import bmc
from partsafe.models.induction import prove


@pytest.mark.parametrize("spec", ["PT-VERSION", "MIG-REJECT-STALE"])
def test_fixed_proves_for_any_size(spec: str) -> None:
    result = prove(mg.system("fixed"), spec)
    assert result.verdict == "proved", result.reason
    assert result.slowest < 60


def test_pt_version_needs_the_failure_lemma() -> None:
    system = mg.system("fixed")
    prop = system.property("PT-VERSION")
    weaker = dataclasses.replace(prop, lemmas=tuple(n for n in prop.lemmas
                                                    if n != "failure-raises"))
    system.properties = tuple(weaker if p.spec == "PT-VERSION" else p
                              for p in system.properties)
    result = prove(system, "PT-VERSION")
    assert result.verdict == "failed"
    assert "on fail" in result.reason


def test_local_promotion_breaks_master_only() -> None:
    result = bmc(mg.system("hz37-local-promotion"), ["PT-MASTER-ONLY"], {}, 3)
    assert result["PT-MASTER-ONLY"].verdict == "counterexample"
    assert result["PT-MASTER-ONLY"].trace[-1]["action"] == "local_promotion"


def test_fixed_keeps_master_only_where_the_variant_breaks_it() -> None:
    result = bmc(mg.system("fixed"), ["PT-MASTER-ONLY"], {}, 2)
    assert result["PT-MASTER-ONLY"].verdict == "bounded"


@pytest.mark.slow
def test_independent_commit_breaks_commit_order() -> None:
    result = bmc(mg.system("hz37-independent-commit"), ["MIG-COMMIT-ORDER"],
                 {"Member": 2, "Migration": 1}, 5)
    found = result["MIG-COMMIT-ORDER"]
    assert found.verdict == "counterexample"
    assert [s["action"] for s in found.trace][-2:] == ["commit_to_destination", "receive"]


def test_variants_name_the_specs_refimpl_says_they_break() -> None:
    from partsafe.refimpl.partition_service import VARIANT_TABLE
    for name, spec in mg.VARIANTS.items():
        assert VARIANT_TABLE[name].breaks == spec or (spec is None and name in (
            "fixed", "fail-plus-two"))

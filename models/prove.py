"""`partsafe prove`: every spec of a symbolic model, by bounded model checking and by proof.

For each spec of the model (``SPECS`` of ``models/<protocol>.py``), in this order:

1. **Bounded model checking** (models/bmc.py) to ``depth`` steps at the model's finite sizes and
   fault budgets (the explorer's default scope): a violation is a ``counterexample`` with its run
   (a shortest one), and the verdict stops there.
2. **A proof for any size** (models/induction.py) with the lemmas the spec names: ``proved``,
   size ``any``. Quiescence checks are not invariants and get no proof.
3. Otherwise the verdict is ``bounded`` (no violation up to ``depth`` at that size), with what the
   proof found (a failed query, or Z3's "unknown").

A query Z3 answers "unknown" (or runs out of time) makes the verdict ``unknown``: never
``proved``.
"""

from __future__ import annotations

import importlib
import time
from dataclasses import dataclass, field
from types import ModuleType
from typing import Any

from partsafe.models.bmc import bmc
from partsafe.models.induction import ProofResult, k_induction, prove

#: the symbolic models, by the name `partsafe check` gives the same protocol
MODELS: dict[str, str] = {
    "membership": "partsafe.models.membership",
    "migration": "partsafe.models.migration",
    "ignite-rebalance": "partsafe.models.ignite",
    "parallel": "partsafe.models.parallel",
}
#: the default depth of bounded model checking, per model
DEFAULT_DEPTH: dict[str, int] = {"membership": 6, "migration": 4, "ignite-rebalance": 5,
                                 "parallel": 4}

VERDICTS = ("proved", "bounded", "counterexample", "unknown")


def module(name: str) -> ModuleType:
    """The module of symbolic model ``name``; an unknown name raises, listing the known ones."""
    if name not in MODELS:
        raise ValueError(f"no symbolic model {name!r}; known: {', '.join(MODELS)}, planner")
    return importlib.import_module(MODELS[name])


def variants(name: str) -> dict[str, str | None]:
    """The variants model ``name`` expresses (each with the spec its flaw breaks) and its design
    questions (the migration model's 000 §2.1 "+1 or +2")."""
    mod = module(name)
    return {**mod.VARIANTS, **getattr(mod, "QUESTIONS", {})}


@dataclass
class SpecVerdict:
    """What `partsafe prove` says of one spec."""

    spec: str
    verdict: str
    #: "any" for a proof for any size, else the sizes bounded model checking used
    size: str | dict[str, int]
    depth: int
    seconds: float
    lemmas: list[str] = field(default_factory=list)
    trace: list[dict[str, Any]] = field(default_factory=list)
    #: the proof's queries (initiation and consecution per action and conjunct)
    proof: dict[str, Any] | None = None
    reason: str = ""
    #: the slowest single solver query of the proof, in seconds
    slowest: float = 0.0
    #: a counterexample of the faithful design that is a known finding (docs/findings.md): it
    #: is reported, and does not fail the run (as `partsafe check` treats it)
    known: bool = False

    def as_dict(self) -> dict[str, Any]:
        return {"spec": self.spec, "verdict": self.verdict, "size": self.size,
                "depth": self.depth, "seconds": round(self.seconds, 3), "lemmas": self.lemmas,
                "trace": self.trace, "proof": self.proof, "reason": self.reason,
                "known_finding": self.known}


@dataclass
class ModelVerdict:
    model: str
    variant: str
    specs: list[SpecVerdict]
    budgets: dict[str, int]
    sizes: dict[str, int]

    def as_dict(self) -> dict[str, Any]:
        return {"model": self.model, "variant": self.variant, "sizes": self.sizes,
                "budgets": self.budgets, "specs": [s.as_dict() for s in self.specs]}


def prove_model(name: str, variant: str = "fixed", depth: int | None = None,
                specs: list[str] | None = None, proofs: bool = True,
                timeout_s: float = 300.0, proof_timeout_s: float = 60.0, one_query: bool = False,
                budgets: dict[str, int] | None = None, k: int = 1) -> ModelVerdict:
    """Every spec of model ``name`` in ``variant`` (see the module docstring). With
    ``one_query``, bounded model checking asks one query for a run of at most ``depth`` steps
    (models.bmc's ``first``) instead of one per depth: faster for a long run, though the run
    it finds need not be a shortest one. ``budgets`` change the model's fault budgets. With
    ``k`` > 1, a state property the induction does not prove is tried by ``k``-induction."""
    mod = module(name)
    known_variants = variants(name)
    if variant not in known_variants:
        raise ValueError(f"{name}: no symbolic form of variant {variant!r}; known: "
                         f"{', '.join(known_variants)}")
    system = mod.system(variant)
    for budget in budgets or {}:
        if budget not in system.budgets:
            raise ValueError(f"{name} has no fault budget {budget!r}; it has "
                             f"{', '.join(system.budgets) or 'none'}")
    depth = DEFAULT_DEPTH.get(name, 6) if depth is None else depth
    wanted = list(specs) if specs else [p.spec for p in system.properties]
    timeout_ms = int(timeout_s * 1000)
    out: list[SpecVerdict] = []
    known = [p.spec for p in system.properties]
    for spec in wanted:
        if spec not in known:
            raise ValueError(f"{name} has no symbolic form of {spec}; it has {', '.join(known)}")
    for spec in wanted:
        started = time.perf_counter()
        found = bmc(system, [spec], {}, depth, timeout_ms, budgets=budgets,
                    first=depth if one_query else 0)[spec]
        prop = system.property(spec)
        verdict = SpecVerdict(spec, found.verdict, dict(found.sizes), found.depth, 0.0,
                              list(prop.lemmas), found.trace, reason=found.reason)
        if found.verdict == "bounded" and proofs and not prop.quiescent:
            proof = prove(system, spec, int(proof_timeout_s * 1000))
            if proof.verdict != "proved" and k > 1 and prop.state is not None:
                deeper = k_induction(system, spec, k, int(proof_timeout_s * 1000))
                if deeper.verdict == "proved":
                    proof = deeper
            verdict.proof = _proof_json(proof)
            verdict.slowest = proof.slowest
            if proof.verdict == "proved":
                verdict.verdict, verdict.size = "proved", "any"
            else:
                verdict.reason = f"no proof for any size: {proof.reason}"
        elif found.verdict == "bounded" and prop.quiescent:
            verdict.reason = "a quiescence check: bounded model checking only"
        verdict.seconds = time.perf_counter() - started
        out.append(verdict)
    return ModelVerdict(name, variant, out, {**system.budgets, **(budgets or {})},
                        dict(system.sizes))


def z3_forms(spec: str) -> list[dict[str, Any]]:
    """The symbolic forms of ``spec`` (`partsafe explain`): per model that encodes it, the
    formula, and the lemmas its proof for any size uses, each with its design sentence."""
    out: list[dict[str, Any]] = []
    for name in MODELS:
        system = module(name).system("fixed")
        for prop in system.properties:
            if prop.spec != spec:
                continue
            lemmas = {lemma.name: lemma for lemma in system.lemmas}
            out.append({
                "model": name, "module": f"models/{name}.py",
                "kind": "quiescence" if prop.quiescent else
                        "step" if prop.step is not None and prop.state is None else "state",
                "formula": prop.formula,
                "lemmas": [{"name": n, "formula": lemmas[n].formula,
                            "design": lemmas[n].design} for n in prop.lemmas if n in lemmas],
                "command": f"partsafe prove {name} --spec {spec}"})
    return out


def _proof_json(proof: ProofResult) -> dict[str, Any]:
    method = next((c["check"].split(" ")[0] for c in proof.checks
                   if c["check"].endswith("-induction step of " + proof.spec)), "induction")
    return {"verdict": proof.verdict, "method": method, "seconds": round(proof.seconds, 3),
            "slowest_query": round(proof.slowest, 3), "checks": proof.checks,
            "reason": proof.reason}

"""What is judged where: for each spec of the catalogue, the forms that judge it (``judged_by``)
and, for every other form, why not (``not_judged``), as `partsafe specs` shows them.

The recorded forms (event files, Hazelcast logs, Ignite 3 logs) and their evidence are
`partsafe.specs.forms`; this module adds the two the checker owns: ``explore`` (a model of
`partsafe check` carries the spec's monitor or property, or its lasso; the planner's check judges
the PLAN-* specs) and ``prove`` (a symbolic model of `partsafe prove` encodes the spec, or the
planner's Z3 oracle does).
"""

from __future__ import annotations

import functools
from typing import Any

from partsafe.checker.protocols import catalog
from partsafe.models.prove import z3_forms
from partsafe.specs import forms
from partsafe.specs.registry import Spec, all_specs

#: why the explorer does not judge a spec (every spec it judges is a property of some model)
EXPLORE_NOT_JUDGED = {
    "MIG-STATS": "Hazelcast's migration statistics (MigrationStats) are counters of its log, "
                 "which no model keeps.",
}

#: why no symbolic model encodes a spec, by spec or family (docs/prove.md)
PROVE_NOT_JUDGED = {
    "MEM-CLAIM-ACCEPT": "The symbolic membership model abstracts the mastership claim's "
                        "bookkeeping (whom it waits for, what each member suspects).",
    "MEM-CLAIM-RESULT": "The symbolic membership model abstracts the mastership claim's "
                        "bookkeeping (whom it waits for, what each member suspects).",
    "MEM-CLAIM-DISCOVER": "The symbolic membership model abstracts the mastership claim's "
                          "bookkeeping (whom it waits for, what each member suspects).",
    "MEM-CRASH-REMOVAL": "A quiescence check of the failure detector, whose timing the symbolic "
                         "membership model abstracts.",
    "DATA-*": "The symbolic models keep partition tables, not the data each replica holds.",
    "SHUT-*": "The symbolic migration model has no graceful shutdown (design 004).",
    "PT-TARGET": "A quiescence check over every member's table, which the symbolic migration "
                 "model leaves to the explorer.",
    "PAR-STAMP": "The symbolic parallel model keeps partition versions, not the partition state "
                 "stamp.",
    "PAR-START": "The symbolic parallel model does not keep the master's migration queue.",
    "MIG-STATS": "Hazelcast's migration statistics are counters of its log, which no model "
                 "keeps.",
    "IGN-ONE-VOTE": "The symbolic Ignite model's votes are a growing set of sent messages "
                    "(a voter may grant more than the reference), so it does not encode one "
                    "vote per term.",
    "IGN-QUORUM-LEADER": "The symbolic Ignite model counts votes as a set of sent messages, "
                         "which the explorer's monitor judges exactly.",
    "IGN-NO-LOST-REDUCTION": "The symbolic Ignite model's metastore is one counter for "
                             "switch.reduce and switch.append.",
    "IGN-STALE-TRIGGER": "The symbolic Ignite model's metastore has no revisions of the "
                         "trigger.",
    "IGN-CAS": "The symbolic Ignite model's metastore has no conditional invokes.",
    "IGN-CONVERGE": "A quiescence check, which the explorer judges over reachable quiet "
                    "states.",
    "IGN-PROGRESS": "A quiescence check, which the explorer judges over reachable quiet "
                    "states.",
    "IGN-FINITE": "A lasso, which the explorer finds as a cycle of the state graph.",
    "TC-CONSISTENT": "TwoPhase is the explorer's calibration model (its state counts are "
                     "TLC's); it has no symbolic model.",
    "PLAN-*": "The planner's Z3 oracle encodes the safety of a plan's replica arrays "
              "(PLAN-NO-DECREASE, PLAN-HOTTER-FIRST, PLAN-NO-DUPLICATE, PLAN-OWNER); the "
              "planner's check judges the shape of the plan.",
}


@functools.cache
def _explored() -> frozenset[str]:
    """Every spec a model of `partsafe check` judges, built at its default scope (building reads
    no state: about a second for all of them), with the planner's PLAN-* specs."""
    found: set[str] = set()
    for entry in catalog.MODELS.values():
        scope = {name: p.default for name, p in entry.params.items()}
        model = entry.build("fixed", scope, frozenset())
        found.update(p.spec for p in model.properties())
        found.update(lasso.spec for lasso in model.lassos())
    found.update(s.id for s in all_specs() if s.id.startswith("PLAN-"))
    return frozenset(found)


@functools.cache
def _proved() -> frozenset[str]:
    """Every spec a symbolic model of `partsafe prove` encodes, and the planner oracle's."""
    return frozenset(s.id for s in all_specs() if z3_forms(s.id) or s.z3 is not None)


def judged(spec: Spec) -> dict[str, Any]:
    """``judged_by`` (the forms in `forms.FORMS` order), the log forms' ``evidence``, and
    ``not_judged``: each other form with one sentence that says why."""
    rec = forms.recorded(spec.id)
    by: list[str] = []
    missing: dict[str, str] = {}
    for form, holds, reasons in (("explore", spec.id in _explored(), EXPLORE_NOT_JUDGED),
                                 ("prove", spec.id in _proved(), PROVE_NOT_JUDGED)):
        if holds:
            by.append(form)
        else:
            reason = reasons.get(spec.id) or reasons.get(spec.id.split("-")[0] + "-*")
            assert reason is not None, f"{form}: {spec.id} is neither judged nor given a reason"
            missing[form] = reason
    return {"judged_by": by + rec["judged_by"], "evidence": rec["evidence"],
            "not_judged": {**missing, **rec["not_judged"]}}


def markdown_table() -> str:
    """docs/validation.md's "What is judged where", from the catalogue (the docs hold exactly
    this text; a test compares them): a matrix of specs and forms, the messages that carry each
    log form's evidence, and why each form does not judge the others, grouped by reason."""
    from partsafe.specs.registry import all_specs as specs

    catalogue = list(specs())
    where = {s.id: judged(s) for s in catalogue}
    totals = {f: sum(f in w["judged_by"] for w in where.values()) for f in forms.FORMS}
    out = ["| spec | " + " | ".join(forms.FORMS) + " |", "|---" * (len(forms.FORMS) + 1) + "|"]
    for spec in catalogue:
        out.append(f"| {spec.id} | " + " | ".join(
            "✓" if f in where[spec.id]["judged_by"] else "·" for f in forms.FORMS) + " |")
    out.append(f"| **{len(catalogue)} specs** | " + " | ".join(
        f"**{totals[f]}**" for f in forms.FORMS) + " |")
    out += ["", "The messages that carry the evidence on logs:", "",
            "| spec | log | level | class | message |", "|---|---|---|---|---|"]
    for spec in catalogue:
        for form, shown in where[spec.id]["evidence"].items():
            for e in shown:
                message = e["message"].replace("|", "\\|")
                out.append(f"| {spec.id} | {form} | {e['level']} | {e['logger']} | "
                           f"`{message}` |")
    out += ["", "Why a form does not judge a spec:", ""]
    for form in forms.FORMS:
        grouped: dict[str, list[str]] = {}
        for spec in catalogue:
            reason = where[spec.id]["not_judged"].get(form)
            if reason is not None:
                grouped.setdefault(reason, []).append(spec.id)
        if grouped:
            out.append(f"- **{form}**:")
            out += [f"  - {', '.join(ids)}: {reason}" for reason, ids in grouped.items()]
    return "\n".join(out)

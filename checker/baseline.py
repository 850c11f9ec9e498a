"""Baselines: the findings of a check or a validation recorded today, so that a CI gate fails on
new findings only, and says which recorded ones no longer occur (the linters' pattern).

A finding is what a report says is wrong or unknown, keyed by what stays the same from one run
to the next: the command, its kind, the spec, its subject (the model and variant, or the
member) and its sentence. Line numbers are left out, since tomorrow's log has other lines.

- `violation`: a broken spec (check), a definite violation (validate): fails unless recorded.
- `possible`: a possible violation under clock skew: fails with ``--strict`` unless recorded.
- `known`: a known finding of the planner or of a fixed design: fails with ``--strict`` unless
  recorded.
- `gap`: a scenario the search never reached: fails unless recorded.
- `not-judged`: a spec the input cannot judge: never fails; recorded so that a spec that stops
  being judged shows as new.

``--baseline FILE`` on `check` and `validate` compares; ``partsafe baseline update FILE
REPORT.json`` writes the file from a ``--json`` report.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

#: the baseline file's format version
VERSION = 1
KINDS = ("violation", "possible", "known", "gap", "not-judged")


class BaselineError(ValueError):
    """A baseline file that cannot be read, or a report that is not one partsafe wrote."""


@dataclass(frozen=True, order=True)
class Finding:
    """One finding, as a baseline records it."""

    command: str
    kind: str
    spec: str
    subject: str
    text: str

    def fails(self, strict: bool) -> bool:
        """Does this finding fail a run when it is not in the baseline?"""
        return self.kind in ("violation", "gap") or (strict and self.kind in ("possible",
                                                                               "known"))

    def line(self) -> str:
        return f"{self.kind} {self.spec} ({self.subject}): {self.text}"


@dataclass
class Comparison:
    """Today's findings against a baseline: the new ones, the recorded ones seen again, and the
    recorded ones no longer seen (the file can shrink by them)."""

    new: list[Finding] = field(default_factory=list)
    known: list[Finding] = field(default_factory=list)
    gone: list[Finding] = field(default_factory=list)

    def failing(self, strict: bool) -> list[Finding]:
        return [f for f in self.new if f.fails(strict)]

    def as_dict(self, strict: bool) -> dict[str, Any]:
        return {"new": [asdict(f) for f in self.new], "gone": [asdict(f) for f in self.gone],
                "known": len(self.known), "failing": len(self.failing(strict))}


def compare(recorded: Iterable[Finding], found: Iterable[Finding]) -> Comparison:
    """`found` against the `recorded` baseline."""
    recorded_set, found_set = set(recorded), set(found)
    return Comparison(new=sorted(found_set - recorded_set),
                      known=sorted(found_set & recorded_set),
                      gone=sorted(recorded_set - found_set))


def check_subject(model: str, variant: str) -> str:
    """What a finding of `check` is about: the model and its variant."""
    return f"{model} ({variant})"


def known_finding(spec: str, owner: str = "planner") -> Finding:
    """A known finding of the faithful planner (reported; fails with ``--strict``)."""
    return Finding("check", "known", spec, owner, "a known finding")


def validate_finding(v: dict[str, Any]) -> Finding:
    """A violation of `validate --json` (definite or possible) as a finding."""
    kind = "possible" if v.get("certainty") == "possible" else "violation"
    return Finding("validate", kind, v["spec"], v.get("member", ""), v["message"])


def stopped_early(doc: dict[str, Any]) -> list[str]:
    """The searches of a `check --json` document that stopped at their first violation: a
    baseline made of it holds only what they found by then."""
    return [check_subject(r["model"], r["variant"]) for r in doc.get("models", [doc])
            if r.get("stopped_at_violation")]


def check_findings(doc: dict[str, Any]) -> list[Finding]:
    """The findings of a `partsafe check --json` document (one model's, or every model's)."""
    runs = doc.get("models", [doc])
    out: list[Finding] = []
    for run in runs:
        subject = check_subject(run["model"], run["variant"])
        known = set(run.get("known_findings", ()))  # the planner's: reported, not failing
        out += [Finding("check", "violation", v["spec"], subject, v["message"])
                for v in run.get("violations", []) if v["spec"] not in known]
        # a goal not reached in a search that went to the end (JUnit fails it too)
        judged = run.get("result") != "incomplete" and not run.get("stopped_at_violation")
        out += [Finding("check", "gap", g["name"], subject, g.get("description", ""))
                for g in run.get("goals", []) if not g.get("reached", True) and judged]
    known_findings = doc.get("known_findings", {})
    if isinstance(known_findings, list):  # `check planner --json`: the planner's own
        known_findings = {"planner": known_findings}
    for owner, specs in known_findings.items():
        out += [known_finding(spec, owner) for spec in specs]
    return sorted(set(out))


def validate_findings(doc: dict[str, Any]) -> list[Finding]:
    """The findings of a `partsafe validate --json` document."""
    out = [validate_finding(v)
           for v in doc.get("violations", []) + doc.get("possible_violations", [])]
    # a spec its files judge but this run held no evidence for is not a finding: evidence comes
    # and goes with what a night's cluster did
    unseen = set(doc.get("no_evidence", ()))
    out += [Finding("validate", "not-judged", spec, "", reason)
            for spec, reason in doc.get("not_judged", {}).items() if spec not in unseen]
    return sorted(set(out))


def findings_of(doc: Any, where: str) -> list[Finding]:
    """The findings of a `check --json` or `validate --json` document; BaselineError names
    `where` when it is neither."""
    if isinstance(doc, dict) and "files" in doc and "lines" in doc:
        return validate_findings(doc)
    if isinstance(doc, dict) and ("models" in doc or ("violations" in doc and "model" in doc)):
        return check_findings(doc)
    raise BaselineError(f"{where}: not the JSON report of `partsafe check --json` or "
                        "`partsafe validate --json`")


def read(path: str) -> list[Finding]:
    """The findings a baseline file records; BaselineError names the file and what is wrong."""
    try:
        doc = json.loads(Path(path).read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise BaselineError(f"{path}: no baseline there; record today's findings with "
                            "`partsafe baseline update FILE REPORT.json` (REPORT.json: the "
                            "command's --json output)") from None
    except (OSError, ValueError) as exc:
        raise BaselineError(f"{path}: cannot be read as a baseline ({exc})") from None
    if not isinstance(doc, dict) or doc.get("partsafe") != "baseline":
        raise BaselineError(f"{path}: not a partsafe baseline (no \"partsafe\": \"baseline\")")
    if doc.get("version") != VERSION:
        raise BaselineError(f"{path}: baseline version {doc.get('version')!r}; this partsafe "
                            f"reads version {VERSION}")
    try:
        return [Finding(**f) for f in doc["findings"]]
    except (KeyError, TypeError) as exc:
        raise BaselineError(f"{path}: a finding is malformed ({exc})") from None


def write(path: str, findings: Iterable[Finding]) -> None:
    """`findings` as the baseline file `path`, sorted, one per line of the JSON."""
    doc = {"partsafe": "baseline", "version": VERSION,
           "findings": [asdict(f) for f in sorted(set(findings))]}
    Path(path).write_text(json.dumps(doc, indent=1, ensure_ascii=False) + "\n",
                          encoding="utf-8")

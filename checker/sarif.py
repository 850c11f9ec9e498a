"""SARIF 2.1.0 output (``--sarif FILE``) for `partsafe validate` and `partsafe conform`: each
finding a result located at its log file and line, so that code-review tools (GitHub code
scanning, the SARIF viewers of editors) show it on the line.

The format is OASIS's *Static Analysis Results Interchange Format (SARIF) Version 2.1.0 Plus
Errata 01*; the sections cited below are its. One log holds one run:

- `tool.driver.rules`: a rule per spec a result breaks (its id, title and statement, the design
  section it comes from), per kind of warning, and ``CONFORMANCE`` for `conform` (§3.49).
- `results` (§3.27): a definite violation is an ``error``; a possible one (some order the
  members' clocks allow breaks the spec) a ``warning``, an ``error`` under ``--strict``; a
  warning of `validate` (a lost partition, a rebalance that looks stuck) a ``warning``, a note a
  ``note``; a trace that leaves the design an ``error`` at the first record no step matches
  (``note`` with ``--variant all`` when another variant fits). The log line is the result's
  region, with its text and the lines around it (`contextRegion`, §3.29.5); the other lines a
  finding rests on (the member's previous event, the order that breaks the spec) are its
  `relatedLocations`.
- `partialFingerprints` (§3.27.17) hold the baseline's key of a finding (spec, member,
  sentence: no line number), so a viewer follows a finding from one night's logs to the next;
  with ``--baseline``, `baselineState` (§3.27.24) says ``new`` or ``unchanged``.
- `invocations` (§3.20): whether the run judged anything, the malformed lines and the skipped
  files (`toolExecutionNotifications`), the specs the input could not judge
  (`toolConfigurationNotifications`).

Paths become URIs relative to the working directory (``uriBaseId`` ``%SRCROOT%``, the checkout
a CI job runs in; §3.4.4), or ``file:`` URIs for files outside it. Text from a log is data:
messages are plain text (never `markdown`), with square brackets escaped where they would read
as an embedded link (§3.11.6).
"""

from __future__ import annotations

import gzip
import hashlib
import json
import re
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any
from urllib.parse import quote

from partsafe import __version__
from partsafe.checker.baseline import Comparison, validate_finding

SCHEMA = ("https://docs.oasis-open.org/sarif/sarif/v2.1.0/errata01/os/schemas/"
          "sarif-schema-2.1.0.json")
VERSION = "2.1.0"
#: the base every relative URI is resolved against: the working directory (a CI job's checkout)
SRCROOT = "%SRCROOT%"
#: the lines shown before and after a result's line (`contextRegion`)
CONTEXT = 3
#: the key of partsafe's partial fingerprint (versioned, §3.27.17)
FINGERPRINT = "partsafeFinding/v1"
#: the rule of a trace that leaves the design (`partsafe conform`)
CONFORMANCE = "CONFORMANCE"

#: the level of each kind of `validate` warning (the others are ``warning``)
WARNING_LEVEL = {"note": "note"}

_LINK = re.compile(r"\]\(")


def plain(text: str) -> str:
    """`text` as a plain-text message that no viewer reads as an embedded link: where a ``](``
    would make one (``[x](0)`` in a host name), every square bracket is escaped with a
    backslash (§3.11.6); otherwise the text is kept as it is."""
    if not _LINK.search(text):
        return text
    return text.replace("\\", "\\\\").replace("[", "\\[").replace("]", "\\]")


def fingerprint(*parts: str) -> str:
    """A stable hash of a finding's key (no line number in it)."""
    return hashlib.sha256("\x1f".join(parts).encode("utf-8")).hexdigest()[:32]


class Lines:
    """The text of the lines results point at, each file read once (gzip too), up to the last
    line wanted."""

    def __init__(self, wanted: Iterable[tuple[str, int]]) -> None:
        by_file: dict[str, set[int]] = {}
        for file, line in wanted:
            by_file.setdefault(file, set()).update(range(max(1, line - CONTEXT),
                                                         line + CONTEXT + 1))
        self.text: dict[tuple[str, int], str] = {}
        for file, lines in by_file.items():
            self._read(file, lines)

    def _read(self, file: str, lines: set[int]) -> None:
        last = max(lines)
        opener: Any = gzip.open if file.endswith(".gz") else open
        try:
            with opener(file, "rb") as f:
                for n, raw in enumerate(f, start=1):
                    if n in lines:
                        self.text[file, n] = raw.decode("utf-8", "replace").rstrip("\r\n")
                    if n >= last:
                        break
        except (OSError, EOFError):
            return  # no text: the result keeps its line

    def region(self, file: str, line: int) -> dict[str, Any]:
        """The region of `line` with its text, and the context region around it (§3.30)."""
        out: dict[str, Any] = {"startLine": line}
        if (file, line) not in self.text:
            return {"region": out}
        out["snippet"] = {"text": self.text[file, line]}
        around = [n for n in range(max(1, line - CONTEXT), line + CONTEXT + 1)
                  if (file, n) in self.text]
        context = {"startLine": around[0], "endLine": around[-1],
                   "snippet": {"text": "\n".join(self.text[file, n] for n in around)}}
        return {"region": out, "contextRegion": context}


class SarifLog:
    """One run of one command as a SARIF log: rules, artifacts and results added as they come,
    each artifact and rule once (results refer to them by index)."""

    def __init__(self, command: str, root: Path | None = None) -> None:
        self.command = command
        self.root = (root or Path.cwd()).resolve()
        #: each rule and artifact with its index, in the order added
        self.rules: dict[str, tuple[int, dict[str, Any]]] = {}
        self.artifacts: dict[str, tuple[int, dict[str, Any]]] = {}
        self.results: list[dict[str, Any]] = []
        self.execution: list[dict[str, Any]] = []
        self.configuration: list[dict[str, Any]] = []
        self.properties: dict[str, Any] = {}

    # -- the parts a result refers to

    def rule(self, rule_id: str, title: str, statement: str, help_text: str = "",
             level: str = "error") -> str:
        """Rule `rule_id`, added the first time (§3.49)."""
        if rule_id not in self.rules:
            rule: dict[str, Any] = {"id": rule_id, "name": _rule_name(title or rule_id),
                                    "shortDescription": {"text": title or rule_id},
                                    "fullDescription": {"text": statement or title or rule_id},
                                    "defaultConfiguration": {"level": level}}
            if help_text:
                rule["help"] = {"text": help_text}
            self.rules[rule_id] = (len(self.rules), rule)
        return rule_id

    def spec_rule(self, spec_id: str) -> str:
        """The rule of a spec of the catalogue (`partsafe explain SPEC` says more)."""
        from partsafe.specs import registry

        try:
            spec = registry.get(spec_id)
        except KeyError:
            return self.rule(spec_id, spec_id, spec_id)
        return self.rule(spec.id, spec.title, spec.statement,
                         f"{spec.statement} ({spec.design} §{spec.section}; "
                         f"`partsafe explain {spec.id}` says more)")

    def artifact(self, file: str) -> dict[str, Any]:
        """The artifact location of `file` (§3.4), the artifact added the first time."""
        if file not in self.artifacts:
            self.artifacts[file] = (len(self.artifacts), {"location": self._uri(file),
                                                          "roles": ["analysisTarget"]})
        index, artifact = self.artifacts[file]
        return {**artifact["location"], "index": index}

    def _uri(self, file: str) -> dict[str, str]:
        path = Path(file)
        if path.is_absolute():
            try:
                path = path.resolve().relative_to(self.root)
            except ValueError:
                return {"uri": path.as_uri()}
        return {"uri": quote(path.as_posix()), "uriBaseId": SRCROOT}

    def location(self, lines: Lines, file: str, line: int | None,
                 message: str | None = None, ident: int | None = None) -> dict[str, Any]:
        """A location at `file`'s `line` (the whole file when None), with the line's text."""
        physical: dict[str, Any] = {"artifactLocation": self.artifact(file)}
        if line is not None and line >= 1:
            physical |= lines.region(file, line)
        out: dict[str, Any] = {"physicalLocation": physical}
        if ident is not None:
            out["id"] = ident
        if message:
            out["message"] = {"text": plain(message)}
        return out

    # -- results and notifications

    def result(self, rule_id: str, level: str, message: str, location: dict[str, Any],
               related: Sequence[dict[str, Any]] = (), key: Sequence[str] = (),
               baseline_state: str | None = None, properties: dict[str, Any] | None = None
               ) -> None:
        out: dict[str, Any] = {"ruleId": rule_id, "ruleIndex": self.rules[rule_id][0],
                               "level": level, "message": {"text": plain(message)},
                               "locations": [location]}
        if related:
            out["relatedLocations"] = [dict(r, id=i) for i, r in enumerate(related, start=1)]
        if key:
            out["partialFingerprints"] = {FINGERPRINT: fingerprint(rule_id, *key)}
        if baseline_state is not None:
            out["baselineState"] = baseline_state
        if properties:
            out["properties"] = properties
        self.results.append(out)

    def notify(self, level: str, message: str, location: dict[str, Any] | None = None,
               rule: str | None = None, configuration: bool = False) -> None:
        """A notification of the invocation (§3.58): of its execution (a malformed line, a
        skipped file), or of its configuration (a spec the input cannot judge)."""
        out: dict[str, Any] = {"level": level, "message": {"text": plain(message)}}
        if location is not None:
            out["locations"] = [location]
        if rule is not None:
            out["associatedRule"] = {"id": rule}
        (self.configuration if configuration else self.execution).append(out)

    def document(self, exit_code: int, successful: bool) -> dict[str, Any]:
        """The SARIF log (§3.13): one run of partsafe."""
        invocation: dict[str, Any] = {"executionSuccessful": successful, "exitCode": exit_code}
        if self.execution:
            invocation["toolExecutionNotifications"] = self.execution
        if self.configuration:
            invocation["toolConfigurationNotifications"] = self.configuration
        run: dict[str, Any] = {
            "tool": {"driver": {"name": "partsafe", "version": __version__,
                                "fullName": f"partsafe {self.command}",
                                "rules": [r for _, r in self.rules.values()]}},
            "automationDetails": {"id": f"partsafe/{self.command}/"},
            "originalUriBaseIds": {SRCROOT: {"uri": self.root.as_uri() + "/"}},
            "artifacts": [a for _, a in self.artifacts.values()],
            "invocations": [invocation],
            "results": self.results,
            "columnKind": "unicodeCodePoints",
        }
        if self.properties:
            run["properties"] = self.properties
        return {"$schema": SCHEMA, "version": VERSION, "runs": [run]}


def _rule_name(title: str) -> str:
    """A rule's name as an identifier (§3.49.7 asks for one): ``M1 View Order`` ->
    ``M1ViewOrder``."""
    return "".join(w[:1].upper() + w[1:] for w in re.findall(r"[A-Za-z0-9]+", title)) or "Rule"


def write(path: str, doc: dict[str, Any]) -> None:
    """The SARIF log at `path` (OSError when it cannot be written)."""
    Path(path).write_text(json.dumps(doc, indent=1, ensure_ascii=False) + "\n",
                          encoding="utf-8")


# --- validate ---------------------------------------------------------------------------------


def validate_log(doc: dict[str, Any], exit_code: int,
                 comparison: Comparison | None = None) -> dict[str, Any]:
    """`partsafe validate --sarif`: the SARIF log of a validation (`doc`, its ``--json``
    document); with `comparison` (``--baseline``), each result's baseline state."""
    log = SarifLog("validate")
    strict = bool(doc.get("strict"))
    violations = doc["violations"] + doc.get("possible_violations", [])
    wanted = [(e["file"], e["line"]) for v in violations + doc.get("warnings", [])
              for e in v.get("events", []) if e.get("line")]
    wanted += [(o["file"], o["line"]) for v in violations for o in v.get("order", [])
               if o.get("file") and o.get("line")]
    lines = Lines(wanted)
    for file in doc["files"]:
        log.artifact(file)
    for spec in [*doc.get("specs", []), *doc.get("not_judged", {})]:
        log.spec_rule(spec)
    state = _states(comparison)
    for v in violations:
        events = v.get("events", [])
        if not events:
            continue
        finding = validate_finding(v)
        possible = finding.kind == "possible"
        rule = log.spec_rule(v["spec"])
        where = events[-1]  # the event that raised it; the member's previous one before it
        related = [log.location(lines, e["file"], e["line"], "the member's previous event there")
                   for e in events[:-1]]
        related += [log.location(lines, o["file"], o["line"],
                                 f"{i}. {o['member']}: {o['type']}"
                                 + (f" at {o['time_us'] / 1e6:.6f} s" if o.get("time_us")
                                    is not None else ""))
                    for i, o in enumerate(v.get("order", []), start=1)
                    if o.get("file") and o.get("line")]
        message = f"{v['spec']}: {v['message']}"
        if possible:
            message += (f" (possible: some order the members' clocks allow, within "
                        f"{doc.get('max_skew_ms')} ms, breaks the spec; not every order does)")
        log.result(rule, "error" if not possible or strict else "warning", message,
                   log.location(lines, where["file"], where["line"]), related,
                   key=(finding.kind, finding.subject, finding.text),
                   baseline_state=state(finding),
                   properties={"certainty": v.get("certainty", "definite"),
                               "member": v.get("member", "")})
    for w in doc.get("warnings", []):
        events = [e for e in w.get("events", []) if e.get("line")]
        level = WARNING_LEVEL.get(w["kind"], "warning")
        if not events:
            log.notify(level, w["message"])
            continue
        rule = log.rule(w["kind"], w["kind"].replace("-", " "),
                        f"a {w['kind'].replace('-', ' ')} in the logs (a warning, not a "
                        "violation)", level=level)
        log.result(rule, level, w["message"],
                   log.location(lines, events[-1]["file"], events[-1]["line"]),
                   [log.location(lines, e["file"], e["line"]) for e in events[:-1]],
                   key=(w.get("member", ""), w["message"]),
                   properties={"member": w.get("member", "")})
    for m in doc.get("malformed", []):
        log.notify("warning", f"a malformed line: {m['reason']}",
                   log.location(lines, m["file"], m["line"]))
    for status in doc.get("inputs", []):
        if status.get("status") == "skipped":
            log.notify("note", f"{status['file']}: skipped ({status.get('reason', '')})")
    for spec, reason in doc.get("not_judged", {}).items():
        log.notify("note", f"{spec} not judged: {reason}", rule=spec, configuration=True)
    if doc.get("incomplete_reason"):
        log.notify("error", f"incomplete: {doc['incomplete_reason']}")
    log.properties = {"specs": doc.get("specs", []), "maxSkewMs": doc.get("max_skew_ms"),
                      "strict": strict, "lines": doc.get("lines"), "events": doc.get("events")}
    return log.document(exit_code, successful=doc["result"] != "incomplete")


def _states(comparison: Comparison | None) -> Any:
    """A finding's baseline state (§3.27.24): None without a baseline."""
    if comparison is None:
        return lambda finding: None
    known = set(comparison.known)
    return lambda finding: "unchanged" if finding in known else "new"


# --- conform ----------------------------------------------------------------------------------


def conform_log(model: str, traces: Sequence[str], results: Sequence[tuple[str, Any]],
                verdict: str, exit_code: int, incomplete: str | None = None) -> dict[str, Any]:
    """`partsafe conform --sarif`: a result per design tried that the trace leaves, at the
    first record no step matches (an ``error``; a ``note`` when another variant tried fits),
    the last matched record related to it. `incomplete`: why nothing was judged."""
    log = SarifLog("conform")
    diagnosed = [(v, r) for v, r in results if r.diagnosis is not None
                 and r.verdict == "does-not-conform"]
    lines = Lines(at for _, r in diagnosed
                  for at in (r.diagnosis.unmatched_at, r.diagnosis.last_matched_at)
                  if at is not None)
    fits = [v for v, r in results if r.verdict == "conforms"]
    for trace in traces:
        if Path(trace).is_file():
            log.artifact(trace)
    for variant, r in diagnosed:
        d = r.diagnosis
        rule = log.rule(CONFORMANCE, "Trace conforms to the design",
                        "Every record of the trace is matched, in an order the members' clocks "
                        "allow, by a step of the design's reference implementation "
                        "(partsafe conform).")
        message = (f"{model} ({variant}): no step of the design matches this record "
                   f"({d.unmatched}), after {d.matched:,} records matched. "
                   + " ".join(f"{reason}." if not reason.endswith(".") else reason
                              for reason in d.reasons))
        at = d.unmatched_at or d.last_matched_at
        if at is not None:
            where = log.location(lines, *at)
        elif Path(traces[0]).is_file():
            where = log.location(lines, traces[0], None)
        else:  # no line to show it on: the invocation says it
            log.notify("error", message)
            continue
        related = [] if d.last_matched_at is None else [
            log.location(lines, *d.last_matched_at, message="the last record matched")]
        log.result(rule, "note" if fits else "error", message, where, related,
                   key=(model, variant, *d.reasons), properties={"model": model,
                                                                 "variant": variant})
    for variant, r in results:
        if r.verdict == "undecided":
            log.notify("error", f"{model} ({variant}): undecided: {r.incomplete_reason}")
    if incomplete is not None:
        log.notify("error", f"incomplete: {incomplete}")
    log.properties = {"model": model, "verdict": verdict, "fits": fits}
    return log.document(exit_code, successful=verdict != "incomplete")

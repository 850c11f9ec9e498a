"""Release profiles: what a shipped release line of Hazelcast or Ignite 3 does, as a set of rules
of the reference implementation (docs/profiles.md).

partsafe's protocols follow the designs, with partsafe's own repairs: that is ``fixed``. A
*rule* is one place where a release line's code does something else; each protocol declares its
rules in a ``RULE_TABLE`` beside its handlers (refimpl/membership.py, refimpl/partition_service.py,
refimpl/ignite.py), each row citing the source it was read from (repository, tag or commit, file
and method). A *profile* names, for each model of `partsafe check` it covers, the rules that
release line's code follows. A protocol's handlers branch on ``"rule-name" in self.rules``, as
they do on a variant: a variant is one more rule (``--variant`` on top of a profile adds it), and
a profile may name a variant where the release line shipped that flaw (Hazelcast 3.7's members
carry no list version: ``hz38-unordered-members``).

Two profiles are not releases: ``fixed`` (no rule: the designs with partsafe's repairs, each
justified where it is made) and ``design`` (the designs' text where partsafe repairs it).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType

__all__ = ["PROFILES", "Profile", "Rule", "Source", "check_rules", "get", "rule_table"]


@dataclass(frozen=True)
class Source:
    """Where a rule was read: `repo` (``hazelcast/hazelcast``), `ref` (a tag or a commit), `path`
    in that repository, and `method` (``InternalPartitionServiceImpl.applyCompletedMigrations``)."""

    repo: str
    ref: str
    path: str
    method: str

    def __str__(self) -> str:
        return f"{self.repo}@{self.ref} {self.path} {self.method}"


@dataclass(frozen=True)
class Rule:
    """One rule a release line's code follows where ``fixed`` does something else.

    `doc` says what the code does, `fixed` what partsafe's design does instead and why, and
    `sources` where the code's rule was read (at least one)."""

    name: str
    doc: str
    fixed: str
    sources: tuple[Source, ...]

    def __post_init__(self) -> None:
        if not self.name or not self.doc or not self.fixed:
            raise ValueError(f"rule {self.name!r}: a rule needs a name, a doc and what fixed does")
        if not self.sources:
            raise ValueError(f"rule {self.name!r}: a rule cites at least one source")


def rule_table(*rows: Rule) -> dict[str, Rule]:
    """A protocol's rule table: `rows` by name, in order (a plain dict, as a variant table)."""
    table: dict[str, Rule] = {}
    for row in rows:
        if row.name in table:
            raise ValueError(f"rule {row.name!r} is declared twice")
        table[row.name] = row
    return table


def check_rules(protocol: str, rules: Iterable[str],
                *tables: Mapping[str, object]) -> frozenset[str]:
    """`rules` as a frozenset, each a name of one of `tables` (the protocol's rule table and
    variant table); raises ValueError naming the first unknown one."""
    names = frozenset(rules) - {"fixed"}
    for name in sorted(names):
        if not any(name in table for table in tables):
            known = ", ".join(n for table in tables for n in table if n != "fixed")
            raise ValueError(f"unknown {protocol} rule {name!r}; known: {known}")
    return names


@dataclass(frozen=True)
class Profile:
    """A release line (or ``design`` / ``fixed``): for each model it covers, the rules its code
    follows, and the scope defaults it changes (Hazelcast's cap of 10 parallel migrations)."""

    name: str
    title: str
    doc: str
    #: model of `partsafe check` -> the rules of its protocol this profile follows
    rules: Mapping[str, tuple[str, ...]]
    #: model -> scope defaults this profile changes, by option name
    scope: Mapping[str, Mapping[str, int]] = field(default_factory=dict)
    #: model -> spec -> finding id: what the profile's search at the model's default scope
    #: breaks (docs/findings.md); `partsafe zoo --profile` expects exactly these
    findings: Mapping[str, Mapping[str, str]] = field(default_factory=dict)

    def __post_init__(self) -> None:
        object.__setattr__(self, "rules", MappingProxyType(
            {m: tuple(r) for m, r in self.rules.items()}))
        object.__setattr__(self, "scope", MappingProxyType(
            {m: MappingProxyType(dict(s)) for m, s in self.scope.items()}))
        object.__setattr__(self, "findings", MappingProxyType(
            {m: MappingProxyType(dict(f)) for m, f in self.findings.items()}))
        extra = (set(self.scope) | set(self.findings)) - set(self.rules)
        if extra:
            raise ValueError(f"profile {self.name!r}: scope or findings for models it does not "
                             "cover: "
                             f"{', '.join(sorted(extra))}")

    @property
    def models(self) -> tuple[str, ...]:
        """The models of `partsafe check` this profile covers."""
        return tuple(self.rules)

    def covers(self, model: str) -> bool:
        return model in self.rules

    def rules_of(self, model: str) -> frozenset[str]:
        """The rules this profile follows in `model`; ValueError if it does not cover it."""
        if model not in self.rules:
            raise ValueError(f"profile {self.name} does not cover model {model} (it covers "
                             f"{', '.join(self.models)})")
        return frozenset(self.rules[model])

    def scope_of(self, model: str) -> dict[str, int]:
        return dict(self.scope.get(model, {}))


_ALL_MODELS = ("membership", "migration", "shutdown", "parallel", "ignite-rebalance",
               "twophase", "planner")
_HAZELCAST = ("hz-3.7", "hz-3.9", "hz-4.1", "hz-5")
_IGNITE = ("ignite-3-table", "ignite-3-zone")

# --- the rules of each profile, by protocol ------------------------------------------------------
# Each block names the rules (RULE_TABLE or VARIANT_TABLE names of its protocol) a profile
# follows, the scope defaults it changes, and the findings its full-scope search must report
# (spec -> finding id of docs/findings.md; `partsafe zoo --profile` fails on any other result).

#: Hazelcast membership (design 002; refimpl/membership.py), model membership
MEMBERSHIP_RULES: dict[str, tuple[str, ...]] = {
    "design": (),
    "hz-3.7": ("hz38-unordered-members", "hz38-stale-master-list", "hz38-local-removal"),
    "hz-3.9": ("hz39-claim-latest-view", "hz39-claim-accepts-suspected",
              "hz39-split-brain-merge", "hz39-explicit-suspicion-view"),
    "hz-4.1": ("hz39-claim-latest-view", "hz39-claim-accepts-suspected",
              "hz39-split-brain-merge", "hz39-explicit-suspicion-view"),
    "hz-5": ("hz39-claim-latest-view", "hz39-claim-accepts-suspected",
            "hz39-split-brain-merge", "hz39-explicit-suspicion-view"),
}
#: hz-3.7's default scope does not finish (8.65 million states at depth 15 in 30 minutes): its
#: findings are what the search breaks by then, both at depth 3 or less; hz-3.9 to hz-5 leave
#: an accepter the latest view omits out of the claim's list (HZ-MEM-5, 13 steps)
MEMBERSHIP_FINDINGS: dict[str, dict[str, str]] = {
    "hz-3.7": {"MEM-MASTER-ONLY": "HZ-MEM-3", "MEM-VIEW-ORDER": "HZ-MEM-4"},
    "hz-3.9": {"MEM-CLAIM-RESULT": "HZ-MEM-5"},
    "hz-4.1": {"MEM-CLAIM-RESULT": "HZ-MEM-5"},
    "hz-5": {"MEM-CLAIM-RESULT": "HZ-MEM-5"},
}

#: Hazelcast partition service (designs 000, 003, 004; refimpl/partition_service.py): models
#: migration and shutdown (3.x's global table version) and parallel (4.1's per-partition versions)
PARTITION_RULES: dict[str, tuple[str, ...]] = {
    # 000 §2.1 step 4's +2, 000 §2.2's recovery from the completed lists alone, 004's only-source
    # property as a property of the plan (no destination refuses)
    "design": ("fail-plus-two", "new-master-fails-active", "shutdown-destination-accepts"),
    # 3.7 to 3.11 raise the version by 2 on a failure (3.12 by the increment + 1, as fixed does)
    "hz-3.7": ("fail-plus-two", "new-master-fails-active", "new-master-plus-one",
               "shutdown-destination-accepts", "shutdown-all-leave"),
    "hz-3.9": ("fail-plus-two", "new-master-fails-active", "new-master-plus-one",
               "shutdown-destination-accepts", "shutdown-all-leave"),
    "hz-4.1": ("new-master-fails-active", "publish-when-idle", "completed-batch-publish",
               "completed-by-partition", "shutdown-destination-accepts", "shutdown-all-leave"),
    "hz-5": ("new-master-fails-active", "publish-when-idle", "completed-batch-publish",
             "completed-by-partition", "shutdown-destination-accepts", "shutdown-all-leave"),
}
#: Hazelcast's default hazelcast.partition.max.parallel.migrations (ClusterProperty, 003 §2.2)
PARTITION_SCOPE: dict[str, dict[str, int]] = {"hz-4.1": {"max-parallel": 10},
                                              "hz-5": {"max-parallel": 10}}
PARTITION_FINDINGS: dict[str, dict[str, dict[str, str]]] = {
    # HZ-PT-2: a destination's commit gone from every completed list; HZ-PT-12: a member that
    # asked to leave accepts an in-flight migration as its destination
    "design": {"shutdown": {"SHUT-ONLY-SOURCE": "HZ-PT-12"},
               "parallel": {"SHUT-ONLY-SOURCE": "HZ-PT-12", "MIG-ATOMIC": "HZ-PT-2"}},
    "hz-3.7": {"shutdown": {"SHUT-ONLY-SOURCE": "HZ-PT-12"}},
    "hz-3.9": {"shutdown": {"SHUT-ONLY-SOURCE": "HZ-PT-12"}},
    "hz-4.1": {"parallel": {"SHUT-ONLY-SOURCE": "HZ-PT-12"}},
    "hz-5": {"parallel": {"SHUT-ONLY-SOURCE": "HZ-PT-12"}},
}

#: Ignite 3's in-memory rebalance (design 001; refimpl/ignite.py), model ignite-rebalance
IGNITE_RULES: dict[str, tuple[str, ...]] = {
    "design": (),
    # read at f02b1122ab5, the last commit before colocation became the default (86a07f62ccc);
    # the re-drive on a new leader is the primary replica's (ReplicaImpl, 89e33bde72e)
    "ignite-3-table": ("ig-table-reentry", "ig-no-sequence-token", "ig-source-keeps-append",
                       "ig-switch-ignores-data-nodes", "ig-stale-reduce-event"),
    # read at d46ac208937 (2026-03): the sequence token (55114300509, 2025-11) and no reentry
    # (TODO IGNITE-22522); from 2025-07 to 2025-11 the zone code ran without the token
    "ignite-3-zone": ("ig-restart-keeps-peer", "ig-source-keeps-append",
                      "ig-switch-ignores-data-nodes", "ig-stale-reduce-event"),
}
IGNITE_SCOPE: dict[str, dict[str, int]] = {}
IGNITE_FINDINGS: dict[str, dict[str, str]] = {
    # the reentry leaves switch.append holding the node it brought back (45 steps)
    "ignite-3-table": {"IGN-CONVERGE": "IGN-3"},
    # no reentry: a node restarted in memory votes again at once (4 steps)
    "ignite-3-zone": {"IGN-RESTART": "IGN-19"},
}


def _models(name: str) -> dict[str, tuple[str, ...]]:
    """Model -> rules of profile `name`, from the blocks above."""
    rules: dict[str, tuple[str, ...]] = {}
    if name in MEMBERSHIP_RULES:
        rules["membership"] = MEMBERSHIP_RULES[name]
    if name in PARTITION_RULES:
        # 3.x ran one global table version (migration, shutdown); 4.1 on per-partition versions
        for model in (("migration", "shutdown") if name in ("design", "hz-3.7", "hz-3.9")
                      else ("parallel",) if name in ("hz-4.1", "hz-5") else ()):
            rules[model] = PARTITION_RULES[name]
        if name == "design":
            rules["parallel"] = PARTITION_RULES[name]
    if name in IGNITE_RULES:
        rules["ignite-rebalance"] = IGNITE_RULES[name]
    if name == "design" or name in _HAZELCAST:
        rules["planner"] = ()  # the planner's decisions are MigrationPlanner's in every release
    if name == "design":
        rules["twophase"] = ()
    return rules


def _findings(name: str) -> dict[str, dict[str, str]]:
    found: dict[str, dict[str, str]] = {}
    if name in MEMBERSHIP_FINDINGS:
        found["membership"] = MEMBERSHIP_FINDINGS[name]
    found.update(PARTITION_FINDINGS.get(name, {}))
    if name in IGNITE_FINDINGS:
        found["ignite-rebalance"] = IGNITE_FINDINGS[name]
    return found


_TITLES = {
    "design": ("the designs' text", "the designs 000-004 where partsafe repairs them: what the "
               "design documents say, taken literally"),
    "hz-3.7": ("Hazelcast 3.7 and 3.8", "the 3.7 partition service (000, 004) with 3.7's member "
               "lists, before the 3.9 membership design"),
    "hz-3.9": ("Hazelcast 3.9 to 3.12", "3.9's versioned member lists (002) with 3.x's partition "
               "service on one global table version"),
    "hz-4.1": ("Hazelcast 4.1 and 4.2", "parallel migrations on per-partition versions (003)"),
    "hz-5": ("Hazelcast 5.x", "the 5.x code (read at 5.0-SNAPSHOT and the 2025 sources)"),
    "ignite-3-table": ("Ignite 3, table-based rebalance (2024-05 to 2025-07)", "the table-era "
                       "metastore keys and restart reentry through switch.reduce, the default "
                       "from 2024-05-16 until colocation (86a07f62ccc, 2025-07-02)"),
    "ignite-3-zone": ("Ignite 3, zone-based rebalance (from 2025-07)", "colocation: zone-based "
                      "rebalance, no restart reentry (IGNITE-22522), the raft sequence token"),
}

#: every profile by name: ``fixed`` and ``design`` first, then the release lines, oldest first.
#: The rule names are those of the protocols' RULE_TABLE and VARIANT_TABLE; a test checks each.
PROFILES: dict[str, Profile] = {
    "fixed": Profile("fixed", "the designs with partsafe's repairs",
                     "the designs 000-004 as partsafe reads them, with the repairs "
                     "docs/deviations.md justifies; every model's default",
                     {m: () for m in _ALL_MODELS}),
    **{name: Profile(name, *_TITLES[name], _models(name),
                     scope={**({m: PARTITION_SCOPE[name] for m in ("parallel",)}
                               if name in PARTITION_SCOPE else {}),
                            **({"ignite-rebalance": IGNITE_SCOPE[name]}
                               if name in IGNITE_SCOPE else {})},
                     findings=_findings(name))
       for name in ("design", *_HAZELCAST, *_IGNITE)},
}


def profile_of_release(product: str, version: str) -> str | None:
    """The profile whose rules a release's code follows, from the version its logs print
    (``[3.12.2]`` in Hazelcast's member prefix, ``Apache Ignite ver. 3.1.0``): Hazelcast 3.7
    and 3.8 ``hz-3.7``, 3.9 to 3.12 ``hz-3.9``, 4.1 and 4.2 ``hz-4.1``, 5.x ``hz-5``; Ignite
    3.1 and later ``ignite-3-zone`` (colocation, zone-based rebalance, is the default from
    3.1), 3.0 ``ignite-3-table``. None for a release no profile models (Hazelcast 4.0, older
    than 3.7)."""
    parts = version.split(".")
    try:
        major, minor = int(parts[0]), int(parts[1]) if len(parts) > 1 else 0
    except ValueError:
        return None
    if product == "ignite":
        return {(3, 0): "ignite-3-table"}.get((major, minor),
                                               "ignite-3-zone" if major == 3 else None)
    if major == 3:
        return "hz-3.7" if minor in (7, 8) else "hz-3.9" if 9 <= minor <= 12 else None
    if major == 4:
        return "hz-4.1" if minor in (1, 2) else None
    return "hz-5" if major == 5 else None


def get(name: str) -> Profile:
    """The profile named `name`; ValueError naming the known ones."""
    try:
        return PROFILES[name]
    except KeyError:
        raise ValueError(f"unknown profile {name!r}; known: {', '.join(PROFILES)}") from None

"""Where each spec is judged on recorded behaviour: event files and the two products' logs.

A spec of the catalogue is judged in up to five forms (``partsafe specs --json``'s
``judged_by``): by the explorer (``explore``), by Z3 (``prove``), on canonical event files
(``events``), on Hazelcast logs (``hazelcast-log``) and on Ignite 3 logs (``ignite-log``). This
module holds the three recorded forms, the ones the validator runs (the checker adds the other
two, which it owns):

- ``events``: every spec with a monitor. An event file is what an instrumented cluster emits, so
  it carries every event a monitor consumes. Quiescence checks run where the file says the run
  ended quiescent (a ``quiescent`` record); lassos are not judged.
- a log form: the specs whose evidence the product prints, each with the messages (level, class,
  template) that carry it (`LOG_EVIDENCE`), and for every other spec one sentence that says why
  the log cannot judge it (`LOG_NOT_JUDGED`). What a log at a given level does not show stays
  unknown, never a violation.

The validator gives every input file its form (`form_of`) and feeds an event only to the
monitors of the specs its file's form judges.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from partsafe.specs import registry

#: every form, in the order reports list them
FORMS = ("explore", "prove", "events", "hazelcast-log", "ignite-log")
#: the forms the validator runs: recorded behaviour
RECORDED = ("events", "hazelcast-log", "ignite-log")
LOG_FORMS = ("hazelcast-log", "ignite-log")
#: the form of an input file, by the scanner's format name
FORMAT_FORMS = {"jsonl": "events", "log": "hazelcast-log", "ignite": "ignite-log"}
#: how reports name each recorded form
FORM_TITLES = {"events": "event files", "hazelcast-log": "Hazelcast logs",
               "ignite-log": "Ignite 3 logs"}


@dataclass(frozen=True)
class Evidence:
    """A message that carries a spec's evidence: the level it is logged at, the class that logs
    it, its template in the product's own wording."""

    level: str
    logger: str
    message: str

    def as_dict(self) -> dict[str, str]:
        return {"level": self.level, "logger": self.logger, "message": self.message}


def _e(level: str, logger: str, message: str) -> Evidence:
    return Evidence(level, logger, message)


_MEMBER_LIST = _e("INFO", "ClusterServiceImpl", "Members {size:N, ver:V} [ Member [h]:p - uuid … ]")
_STARTING = _e("INFO", "LifecycleServiceImpl", "[h]:p is STARTING")
_SUSPECTED = _e("WARNING", "MembershipManager",
                "Member [h]:p - uuid is suspected to be dead for reason: r")
_SUSPICION_REMOVED = _e("INFO", "MembershipManager",
                        "Removed suspicion of Member [h]:p - uuid. Reason: r")
_CLAIM_START = _e("INFO", "MembershipManager",
                  "Local MembersView{version=V, members=[MemberInfo{…}, …]} with suspected "
                  "members: [Member …] and initial addresses to ask: [Member …]")
_CLAIMED = _e("INFO", "MembershipManager", "Mastership is claimed with: MembersView{…}")
_MORE_RECENT = _e("FINE", "MembershipManager",
                  "A more recent MembersView{version=V, members=[…]} is received from [h]:p")
_MASTER_START = _e("FINE", "MigrationManager", "Starting Migration: MigrationInfo{…}")
_MASTER_ENDS = (
    _e("FINE", "MigrationManager", "Finished Migration: MigrationInfo{…}"),
    _e("FINE", "MigrationManager", "AsyncMigrationTask completed: MigrationInfo{…}"),
    _e("FINE", "MigrationManager",
       "Migration commit result true|false from [h]:p - uuid for MigrationInfo{…}"),
    _e("WARNING", "MigrationManager", "Migration failed: MigrationInfo{…}"),
    _e("INFO", "MigrationManager",
       "All migration tasks have been completed. (…) / Rebalance process was failed|aborted. …"),
)
_FINALIZING = _e("FINE", "MigrationManager", "Finalizing MigrationInfo{…, status=SUCCESS|FAILED}")

_PLANNING = _e("FINEST", "MigrationManager",
                "Planning migrations for partitionId=P. Current replicas: [r, …], New replicas: "
                "[r, …]")
_INITIAL = _e("FINEST", "MigrationPlanner", "partitionId=P, Initial state: [r, …]")
_FINAL = _e("FINEST", "MigrationPlanner", "partitionId=P, Final state: [r, …]")
_CYCLE_FIXED = _e("FINEST", "MigrationPlanner",
                  "partitionId=P, Final state (after cycle fix): [r, …]")
_PASS = _e("FINEST", "MigrationPlanner", "partitionId=P, Current index: i, state: [r, …]")
_DECISIONS = _e("FINEST", "MigrationPlanner",
                "partitionId=P, MOVE|MOVE-2|MOVE-3|COPY r to index: i / SHIFT UP[-2] r from old "
                "addresses index: j to index: i[ with source: r| and SHIFT DOWN r to index: k] / "
                "SHIFT DOWN r to index: k, COPY r to index: i / New address is null at index: i")
_ORDER = _e("FINEST", "MigrationPlanner",
            "Migration order after prioritization: [ 0- MigrationInfo{…}, 1- MigrationInfo{…} ]")
#: a plan whole: its arrays, every decision (the clears among them) and the order it runs in
_PLAN = (_PLANNING, _INITIAL, _FINAL, _PASS, _DECISIONS, _ORDER)

_IG_INIT = _e("INFO", "NodeImpl", "Node {} init, term={}, lastLogId={}, conf={}, oldConf={}, "
                                  "lastCommittedIndex={}.")
_IG_VOTE = _e("INFO", "NodeImpl", "Node {} start vote and grant vote self, term={}.")
_IG_LEADER = _e("INFO", "NodeImpl", "Node {} become leader of group, term={}, conf={}, "
                                    "oldConf={}.")
_IG_DETECTOR = _e("ERROR", "NodeImpl", "Another peer {} declares that it is the leader at term "
                                       "{} which was occupied by leader {}.")
_IG_CATCH_UP = _e("INFO", "NodeImpl", "Catch up phase to change peers was successfully finished "
                                      "[node={}, fromPeers={}, toPeers={}, fromLearners={}, "
                                      "toLearners={}, oldToken={}, newToken={}].")
_IG_PENDING = _e("INFO", "ZoneRebalanceUtil", "Update metastore pending partitions key [key={}, "
                                              "partition={}, zone={}/{}, newVal={}, "
                                              "timestamp={}]")
_IG_PLANNED = _e("INFO", "ZoneRebalanceUtil", "Update metastore planned partitions key [key={}, "
                                              "partition={}, zone={}/{}, newVal={}]")
_IG_REMOVE = _e("INFO", "ZoneRebalanceUtil", "Remove planned key because current pending key "
                                             "has the same value [key={}, partition={}, "
                                             "zone={}/{}, val={}]")
_IG_SWITCH = "ZoneRebalanceRaftGroupEventsListener"
_IG_REDUCTION = _e("INFO", _IG_SWITCH, "Rebalance finished. Going to schedule next rebalance "
                                       "with reduction [zonePartitionId={}, appliedPeers={}, "
                                       "plannedPeers={}]")
_IG_FINISHED = _e("INFO", _IG_SWITCH, "Rebalance finished [zonePartitionId={}, appliedPeers={}]")
_IG_NEXT = _e("INFO", _IG_SWITCH, "Rebalance finished. Going to schedule next rebalance "
                                  "[zonePartitionId={}, appliedPeers={}, plannedPeers={}]")

#: form -> spec -> the messages that carry its evidence
LOG_EVIDENCE: dict[str, dict[str, tuple[Evidence, ...]]] = {
    "hazelcast-log": {
        "MEM-VIEW-ORDER": (_MEMBER_LIST, _STARTING),
        "MEM-VIEW-INTEGRITY": (_MEMBER_LIST,),
        "MEM-VERSION": (_MEMBER_LIST, _STARTING),
        "MEM-MASTER-ONLY": (
            _MEMBER_LIST, _e("INFO", "MembershipManager", "Removing Member [h]:p - uuid")),
        "PT-VERSION": (
            _e("FINE", "InternalPartitionServiceImpl",
               "Applying completed migration MigrationInfo{…, partitionId=P, …, "
               "initialPartitionVersion=v, partitionVersionIncrement=n, …}"),),
        "MIG-STATS": (
            _e("INFO", "MigrationManager", "Repartitioning cluster data. Migration tasks count: N"),
            _e("INFO", "MigrationManager",
               "All migration tasks have been completed. (repartitionTime=…, "
               "plannedMigrations=N, completedMigrations=N, remainingMigrations=N, …)")),
        "SHUT-ONLY-SOURCE": (
            _e("INFO", "MigrationManager", "Shutdown request of Member [h]:p - uuid is handled"),
            _MASTER_START,
            _e("INFO", "LifecycleServiceImpl", "[h]:p is SHUTTING_DOWN"),
            _e("FINEST", "MigrationOperation",
               "ReplicaVersions are set after migration. MigrationInfo{…}, namespace=…, "
               "replicaVersions=[…]")),
        "MEM-CLAIM-ACCEPT": (
            _MEMBER_LIST, _STARTING, _SUSPECTED, _SUSPICION_REMOVED,
            _e("WARNING", "ClusterServiceImpl",
               "Mastership of [h]:p is accepted. Response: MembersView{…}")),
        "MEM-CLAIM-RESULT": (_MEMBER_LIST, _SUSPECTED, _CLAIM_START, _MORE_RECENT, _CLAIMED),
        "MEM-CLAIM-DISCOVER": (
            _MEMBER_LIST, _SUSPECTED, _CLAIM_START, _MORE_RECENT,
            _e("FINE", "MembershipManager", "Asking MembersView of [h]:p"), _CLAIMED),
        "PT-MASTER-ONLY": (
            _e("WARNING", "InternalPartitionServiceImpl",
               "Issue while determining latest partition... Latest: Partition {ID: P, Version: "
               "V} [ i:[h]:p - uuid … ], Received: Partition {ID: P, Version: V} [ … ]"),),
        "PT-MOST-RECENT": (
            _MEMBER_LIST, _e("INFO", "MembershipManager", "Removing Member [h]:p - uuid"),
            _e("FINE", "InternalPartitionServiceImpl",
               "Publishing partition state, version: V"),
            _e("FINE", "InternalPartitionServiceImpl",
               "Applied partition state update with version: V")),
        "MIG-COMMIT-ORDER": (
            _FINALIZING,
            _e("FINE", "MigrationManager",
               "Migration commit result true|false from [h]:p - uuid for MigrationInfo{…}"),
            _e("WARNING", "MigrationManager", "Migration failed: MigrationInfo{…}")),
        "MIG-ATOMIC": (
            _FINALIZING, _MEMBER_LIST,
            _e("INFO", "MembershipManager", "Removing Member [h]:p - uuid")),
        "MIG-REJECT-STALE": (
            _e("FINEST", "MigrationRequestOperation",
               "Invoking MigrationOperation for namespaces [...] and MigrationInfo{…}, "
               "firstFragment: b, lastFragment: b"),
            _e("FINEST", "MigrationOperation",
               "ReplicaVersions are set after migration. MigrationInfo{…}, namespace=…, "
               "replicaVersions=[…]"),
            _FINALIZING, _STARTING),
        "PAR-ONE-PER-PARTITION": (_MASTER_START, *_MASTER_ENDS),
        "PAR-MAX-PARALLEL": (_MASTER_START, *_MASTER_ENDS),
        "PLAN-NO-DECREASE": _PLAN,
        "PLAN-HOTTER-FIRST": _PLAN,
        "PLAN-REACHES-TARGET": _PLAN,
        "PLAN-NO-CYCLE": (_PLANNING, _INITIAL, _FINAL, _CYCLE_FIXED, _PASS),
        "PLAN-PRIORITY": (_ORDER,),
        "PLAN-NO-DUPLICATE": _PLAN,
        "PLAN-OWNER": _PLAN,
        "PLAN-WELL-FORMED": (_PLANNING, _INITIAL, _PASS, _DECISIONS),
    },
    "ignite-log": {
        # the zone era's wording; every era's is read (docs/validation.md, "Ignite 3 logs")
        "IGN-ONE-LEADER": (_IG_LEADER, _IG_DETECTOR, _IG_INIT),
        "IGN-RESTART": (_IG_INIT, _IG_VOTE, _IG_LEADER, _IG_CATCH_UP),
        "IGN-NO-LOST-REDUCTION": (_IG_REDUCTION, _IG_PENDING, _IG_PLANNED, _IG_REMOVE,
                                  _IG_FINISHED, _IG_NEXT),
        "IGN-STALE-TRIGGER": (_IG_PENDING,),
        "IGN-CONVERGE": (_IG_PENDING, _IG_PLANNED, _IG_REMOVE, _IG_FINISHED, _IG_NEXT),
    },
}

#: form -> spec -> why that log cannot judge it (specs of the other product are added below)
LOG_NOT_JUDGED: dict[str, dict[str, str]] = {
    "hazelcast-log": {
        "MEM-VIEW-AGREEMENT": "A quiescence check, and a log that stops is not quiescent; the "
                              "agreement a log shows (one version, one list) is MEM-VERSION's.",
        "MEM-CRASH-REMOVAL": "A quiescence check, and a log that stops is not quiescent; nor does "
                             "any member log a crash (the others log a suspicion).",
        "PT-TARGET": "A quiescence check over whole partition tables, which are not logged.",
        "PAR-STAMP": "Needs the partition versions a stamp is computed from: Hazelcast logs "
                     "stamps (`Applied partition state update with stamp: S`), never the "
                     "versions behind them.",
        "PAR-START": "Needs the master's migration queue, which is not logged.",
        "PAR-VERSION": "Needs a participant's own partition version when it runs a migration, "
                       "which it never logs (the master sets initialPartitionVersion from its "
                       "own table as it starts one; a participant whose version differs refuses "
                       "it, logging the PartitionStateVersionMismatchException at INFO).",
        "DATA-NO-LOSS": "Needs how many members failed since a partition was last fully "
                        "replicated and the backup count of its structures: a lost partition's "
                        "lostBackupCount counts the replica indices lost, not the failures, so "
                        "it is reported as a warning.",
        "DATA-REPLICAS": "Needs which member holds which replica, which is not logged.",
        "DATA-NO-LEAK": "Needs which member holds which replica, which is not logged.",
        "DATA-HELD": "Needs which member holds which replica, which is not logged.",
        "SHUT-LEAVE-EMPTY": "Needs the partition table at the moment a member leaves, which is "
                            "not logged.",
        "SHUT-NO-LOSS": "Needs which member holds which replica, which is not logged.",
    },
    "ignite-log": {
        "IGN-CAS": "Needs the revisions an invoke's guards require and the keys' revisions when "
                   "it runs, which no message logs: the stable switch logs only whether its "
                   "invoke succeeded.",
        "IGN-ONE-VOTE": "Needs the votes nodes grant, which JRaft does not log; it logs a "
                        "candidate's vote for itself alone.",
        "IGN-QUORUM-LEADER": "Needs every vote a leader counted, of which JRaft logs only the "
                             "leader's own.",
        "IGN-PROGRESS": "A quiescence check, and a log that stops is not quiescent; nor does a "
                        "log say which nodes stay stopped.",
    },
}

#: why an event file cannot judge a spec, by kind (every spec with a monitor is judged)
EVENTS_NOT_JUDGED = {
    "lasso": "A lasso is an infinite behaviour (a cycle repeated for ever), which a finite "
             "record cannot show.",
}

#: the product each design belongs to, for the reason a log of the other cannot judge a spec
_PRODUCT = {"000": "Hazelcast", "002": "Hazelcast", "003": "Hazelcast", "004": "Hazelcast",
            "001": "Ignite 3"}


def _family(reasons: dict[str, str], spec_id: str) -> str | None:
    if spec_id in reasons:
        return reasons[spec_id]
    return reasons.get(spec_id.split("-")[0] + "-*")


def judges(form: str, spec_id: str) -> bool:
    """Whether recorded `form` judges `spec_id`."""
    spec = registry.get(spec_id)
    if form == "events":
        return spec.monitor is not None
    return spec.id in LOG_EVIDENCE[form]


def specs_judged(form: str) -> tuple[str, ...]:
    """The specs recorded `form` judges, in catalogue order."""
    return tuple(s.id for s in registry.all_specs() if judges(form, s.id))


def evidence(form: str, spec_id: str) -> tuple[Evidence, ...]:
    """The messages of log `form` that carry `spec_id`'s evidence (none for ``events``)."""
    return LOG_EVIDENCE.get(form, {}).get(spec_id, ())


def reason_not_judged(form: str, spec_id: str) -> str:
    """One sentence: why recorded `form` cannot judge `spec_id` (which it does not judge)."""
    spec = registry.get(spec_id)
    if form == "events" or spec.kind == "lasso":
        return EVENTS_NOT_JUDGED[spec.kind]
    product = _PRODUCT.get(spec.seed, "")
    if not product:
        return (f"A rule of {spec.design}, which neither Hazelcast nor Ignite 3 runs; its event "
                "files are judged.")
    if form == "ignite-log" and product == "Hazelcast":
        return (f"A rule of Hazelcast's design {spec.seed}; an Ignite 3 log shows Ignite's "
                "rebalance and raft.")
    if form == "hazelcast-log" and product == "Ignite 3":
        return ("A rule of Ignite 3's rebalance (design 001); a Hazelcast log shows Hazelcast's "
                "membership and migrations.")
    reason = _family(LOG_NOT_JUDGED[form], spec.id)
    assert reason is not None, f"{form}: {spec.id} is neither judged nor given a reason"
    return reason


def form_of(fmt: str) -> str:
    """The recorded form of an input file the scanner read as `fmt`."""
    return FORMAT_FORMS[fmt]


def recorded(spec_id: str) -> dict[str, Any]:
    """The recorded forms of `spec_id`: those that judge it (with each log form's evidence), and
    those that do not, with the reason."""
    judged: list[str] = []
    shown: dict[str, list[dict[str, str]]] = {}
    missing: dict[str, str] = {}
    for form in RECORDED:
        if judges(form, spec_id):
            judged.append(form)
            if form in LOG_FORMS:
                shown[form] = [e.as_dict() for e in evidence(form, spec_id)]
        else:
            missing[form] = reason_not_judged(form, spec_id)
    return {"judged_by": judged, "evidence": shown, "not_judged": missing}


__all__ = ["FORMS", "FORM_TITLES", "LOG_EVIDENCE", "LOG_FORMS", "LOG_NOT_JUDGED", "RECORDED",
           "Evidence", "evidence", "form_of", "judges", "reason_not_judged", "recorded",
           "specs_judged"]

"""Apache Ignite 3 logs in the validator: which Ignite specs a log judges (and on which messages),
which it cannot and why, and IGN-CONVERGE as a warning.

An Ignite 3 log (`partsafe.traces.ignite`) shows a rebalance's writes where the writing node
logs them, and raft as JRaft's ``NodeImpl`` logs it; the monitors of `partsafe.specs.ignite`
judge those events per raft group, unchanged. IGN-CONVERGE is a quiescence check, and a log that
stops is not quiescent: a rebalance that has not finished when the logs end is a warning, never a
violation.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import NamedTuple

from partsafe.checker.validation.shards import Notice, OrderKey
from partsafe.refimpl.metastore import APPEND, PENDING, PLANNED, REDUCE
from partsafe.traces.events import UNKNOWN_MEMBER, AssignmentsChanged, Event

#: what validate looks for in an Ignite 3 log, in the words its reports use
PROTOCOL = "Ignite 3's rebalance or raft messages"
#: where an Ignite 3 node logs them, for a report that found none
WHERE = ("an Ignite 3 node logs them at INFO: ZoneRebalanceUtil's `Update metastore pending "
         "partitions key [...]`, the stable switch's `Rebalance finished [...]`, JRaft's `Node "
         "<group/peer> become leader of group, term=...`")


class Evidence(NamedTuple):
    """A message a log form judges a spec on: its level, the class that logs it, its template
    in the product's wording."""

    level: str
    logger: str
    message: str


_INIT = Evidence("INFO", "NodeImpl", "Node {} init, term={}, lastLogId={}, conf={}, oldConf={}, "
                                     "lastCommittedIndex={}.")
_VOTE = Evidence("INFO", "NodeImpl", "Node {} start vote and grant vote self, term={}.")
_LEADER = Evidence("INFO", "NodeImpl",
                   "Node {} become leader of group, term={}, conf={}, oldConf={}.")
_DETECTOR = Evidence("ERROR", "NodeImpl", "Another peer {} declares that it is the leader at "
                                          "term {} which was occupied by leader {}.")
_CATCH_UP = Evidence("INFO", "NodeImpl", "Catch up phase to change peers was successfully "
                                         "finished [node={}, fromPeers={}, toPeers={}, "
                                         "fromLearners={}, toLearners={}, oldToken={}, "
                                         "newToken={}].")
_PENDING = Evidence("INFO", "ZoneRebalanceUtil", "Update metastore pending partitions key "
                                                 "[key={}, partition={}, zone={}/{}, newVal={}, "
                                                 "timestamp={}]")
_PLANNED = Evidence("INFO", "ZoneRebalanceUtil", "Update metastore planned partitions key "
                                                 "[key={}, partition={}, zone={}/{}, newVal={}]")
_REMOVE = Evidence("INFO", "ZoneRebalanceUtil", "Remove planned key because current pending key "
                                                "has the same value [key={}, partition={}, "
                                                "zone={}/{}, val={}]")
_REDUCTION = Evidence("INFO", "ZoneRebalanceRaftGroupEventsListener",
                      "Rebalance finished. Going to schedule next rebalance with reduction "
                      "[zonePartitionId={}, appliedPeers={}, plannedPeers={}]")
_FINISHED = Evidence("INFO", "ZoneRebalanceRaftGroupEventsListener",
                     "Rebalance finished [zonePartitionId={}, appliedPeers={}]")
_NEXT = Evidence("INFO", "ZoneRebalanceRaftGroupEventsListener",
                 "Rebalance finished. Going to schedule next rebalance [zonePartitionId={}, "
                 "appliedPeers={}, plannedPeers={}]")

#: the Ignite specs an Ignite 3 log judges, each with the messages it is judged on (the zone era's
#: wording; docs/validation.md lists every era's)
LOG_EVIDENCE: dict[str, tuple[Evidence, ...]] = {
    "IGN-ONE-LEADER": (_LEADER, _DETECTOR, _INIT),
    "IGN-RESTART": (_INIT, _VOTE, _LEADER, _CATCH_UP),
    "IGN-NO-LOST-REDUCTION": (_REDUCTION, _PENDING, _PLANNED, _REMOVE, _FINISHED, _NEXT),
    "IGN-STALE-TRIGGER": (_PENDING,),
    "IGN-CONVERGE": (_PENDING, _PLANNED, _REMOVE, _FINISHED, _NEXT),
}
#: the specs judged on an Ignite 3 log
LOG_SPECS: tuple[str, ...] = tuple(LOG_EVIDENCE)

#: the Ignite specs an Ignite 3 log cannot judge, and why
LOG_NOT_JUDGED: dict[str, str] = {
    "IGN-CAS": "needs the revisions an invoke's guards require and the keys' revisions when it "
               "runs, which no message logs (the stable switch logs only whether it succeeded)",
    "IGN-ONE-VOTE": "needs the votes nodes grant, which JRaft does not log (only a candidate's "
                    "vote for itself)",
    "IGN-QUORUM-LEADER": "needs every vote a leader counted, of which JRaft logs only its own",
    "IGN-PROGRESS": "judged at quiescence, and a log that stops is not quiescent; nor does a log "
                    "say which nodes stay stopped",
    "IGN-FINITE": "a property of the state graph (a cycle of stable switches), not of one run",
}


def warnings_of(events: Iterable[tuple[OrderKey, Event]]) -> list[tuple[OrderKey, Notice]]:
    """IGN-CONVERGE as far as a log shows it: per raft group, a rebalance whose pending, planned
    or switch keys still hold a value after the group's last assignments write the logs show.
    A log that stops is not quiescent, so each is a warning (with the order key of that write)."""
    last: dict[str, tuple[OrderKey, AssignmentsChanged, dict[str, tuple[str, ...]]]] = {}
    for at, ev in events:
        if not isinstance(ev, AssignmentsChanged) or ev.member == UNKNOWN_MEMBER:
            continue
        keys = last[ev.group][2] if ev.group in last else {}
        if ev.removed or (ev.key in (REDUCE, APPEND) and not ev.nodes):
            keys.pop(ev.key, None)
        else:
            keys[ev.key] = ev.nodes
        last[ev.group] = (at, ev, keys)
    out: list[tuple[OrderKey, Notice]] = []
    for group, (at, ev, keys) in sorted(last.items(), key=lambda kv: kv[1][0]):
        open_keys = [f"{k} [{','.join(keys[k])}]" for k in (PENDING, PLANNED, REDUCE, APPEND)
                     if k in keys]
        if not open_keys:
            continue
        name = group or "the partition"
        out.append((at, Notice(
            "rebalance-unfinished", ev.member, (ev.source,) if ev.source else (),
            f"IGN-CONVERGE: the rebalance of {name} had not finished when the logs end: "
            f"{'; '.join(open_keys)} (a log that stops is not quiescent, so this is a warning)")))
    return out

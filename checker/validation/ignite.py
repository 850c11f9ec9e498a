"""Apache Ignite 3 logs in the validator: what a report says of them, and IGN-CONVERGE as a
warning (which specs an Ignite 3 log judges, on which messages, is `partsafe.specs.forms`'s
``ignite-log`` form).

An Ignite 3 log (`partsafe.traces.ignite`) shows a rebalance's writes where the writing node
logs them, and raft as JRaft's ``NodeImpl`` logs it; the monitors of `partsafe.specs.ignite`
judge those events per raft group, unchanged. IGN-CONVERGE is a quiescence check, and a log that
stops is not quiescent: a rebalance that has not finished when the logs end is a warning, never a
violation.
"""

from __future__ import annotations

from collections.abc import Iterable

from partsafe.checker.validation.shards import Notice, OrderKey
from partsafe.refimpl.metastore import APPEND, PENDING, PLANNED, REDUCE
from partsafe.traces.events import UNKNOWN_MEMBER, AssignmentsChanged, Event

#: what validate looks for in an Ignite 3 log, in the words its reports use
PROTOCOL = "Ignite 3's rebalance or raft messages"
#: where an Ignite 3 node logs them, for a report that found none
WHERE = ("an Ignite 3 node logs them at INFO: ZoneRebalanceUtil's `Update metastore pending "
         "partitions key [...]`, the stable switch's `Rebalance finished [...]`, JRaft's `Node "
         "<group/peer> become leader of group, term=...`")


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

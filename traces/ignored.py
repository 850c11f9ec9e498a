"""The messages of Hazelcast's protocol loggers that the parser reads as no event, and why.

The cluster and partition packages (``com.hazelcast.internal.cluster``,
``com.hazelcast.internal.partition``, 3.x's ``com.hazelcast.cluster``) print far more than the
protocols' decisions at FINE and FINEST: heartbeats, the join handshake, the transport of a
migration's data, bookkeeping flags, re-deliveries. `parse_payload` gives an event for each
message that carries one (traces/payload.py); every other message of those loggers is one of
`IGNORED`, each family with the reason no spec reads it. `reason_ignored` answers for one
message; the corpus of real runs (tests/lab/test_corpus.py) checks that every line of those
loggers is parsed or has a reason here, so that nothing they print is dropped unexplained.

The wording is the products' own, read in the lab's recordings of Hazelcast 3.12.2, 4.2.8 and
5.3 to 5.7 (`partsafe lab`); a pattern matches at the start of the message (after the member
prefix).
"""

from __future__ import annotations

import re
from typing import NamedTuple

__all__ = ["IGNORED", "Ignored", "reason_ignored"]


class Ignored(NamedTuple):
    """A family of messages read as no event: the patterns of its wording and why."""

    reason: str
    patterns: tuple[str, ...]


_HEARTBEAT = ("Failure detection's own input and bookkeeping: a suspicion it leads to is read "
              "where it is printed (`Suspecting Member`, `is suspected to be dead`, `Received "
              "suspicion request`).")
_JOIN = ("The join handshake before a member is admitted (the joiner's questions, the master's "
         "answers, who is master): the admission is read from the member list that follows.")
_MERGE = ("The split-brain handler's checks before a merge: a merge is read from `is merging … "
          "to` and the member lists around it.")
_TRANSPORT = ("A migration's data transport and a member's local flags (chunks, fragments, the "
              "partition-migrating flag, replica sync permits): no table change or decision.")
_PROGRESS = ("A step of a migration's operation the spec events already cover: its start "
             "(`Starting Migration`, `Invoking MigrationOperation`), its answer (`Finished "
             "Migration`, `Migration commit result`) and its commit (`Finalizing`) are read.")
_AGAIN = ("A re-delivery of an update already applied, or one refused as stale or from a "
          "non-master: it changes nothing at the member.")
_STAMP = ("4.0 and later stamp a partition table instead of versioning it; a stamp is a hash, "
          "not ordered, so no version rule reads it (PAR-STAMP is judged on event files).")
_VERSION_SEEN = ("A 3.x partition table version the same update's `Applied partition state "
                 "update with version` or `Publishing partition state, version` line carries, "
                 "which is read.")
_PROMOTION = ("The promotion of backups once a member left (before and finalize stages): the "
              "table it makes is published and applied, which is read.")
_ANTI_ENTROPY = "Replica anti-entropy (backup version checks): replica data, not the protocols."
_LOCAL = ("The member's local view being set as a step of an event read elsewhere (its member "
          "list, its master, its join version, its tables' initial arrangement).")
_TASKS = ("The master's scheduling of its own tasks (repartitioning, repair, table fetch): "
          "their effects are read.")
_EXCEPTION = ("An operation's exception, printed at FINEST as the operation is answered or "
              "retried: the steps it belongs to are read where they are printed.")
_CLUSTER_STATE = ("Cluster-state transactions' locks: the state change itself is read "
                  "(`Changing cluster state`).")

IGNORED: tuple[Ignored, ...] = (
    Ignored(_HEARTBEAT, (
        r"Received heartbeat from ", r"Ignoring heartbeat ", r"Resetting heartbeat timestamps",
        r"Setting cluster time diff", r"Sending heartbeat complaint", r"Complainee ",
        r"Sending explicit suspicion to ", r"Ignoring explicit suspicion",
        r"Cannot suspect .* since it's not a member", r"Removed connection to ",
        r"Removing suspected address ", r"No need to remove Member ")),
    Ignored(_JOIN, (
        r".* is local\? (?:true|false)", r".* is (?:added to|removed from) the blacklist",
        r"Sending (?:master question|join request|joinRequest) ", r"NOT sending master question",
        r"Handling (?:join from|master response) ", r"Starting join\.\.\.",
        r"Waiting for all connections", r"PostJoin master: ", r"Joining over target member ",
        r"Cannot claim myself as master", r"Claiming myself as master node",
        r"My claim to be master is rejected", r"This node will assume master role",
        r"This node is being set as the master", r"Returning null timeout",
        r"Timeout during join check", r"Not-connected to ", r"Ignoring join request, ",
        r"Join or membership claim is in progress", r"Master address information ",
        r"Node is already joined", r"Cannot send master answer", r"Sending '(?:true|false)' for "
        r"master claim", r"The address .* will be added as a temporary member address",
        r"Received a periodic member update, ignoring", r"Should not accept mastership claim",
        r"Cannot accept mastership claim",
        r".* claims mastership but it is not a member", r"Latest MembersView\{",
        r"Not updating members because caller")),
    Ignored(_MERGE, (
        r"Sending SplitBrainJoinMessage", r"Could not send SplitBrainJoinMessage",
        r"Checking if we should merge to", r"Should not merge to ", r"Returning SplitBrainJoin",
        r"Returning null to ", r"Ignoring join check from ", r".* CANNOT merge to ",
        r"A split-brain merge validation request was received", r"Finished merge tasks",
        r"Removing null, since it thinks it's already split", r"Resetting local member UUID")),
    Ignored(_TRANSPORT, (
        r"Setting partition-migrating flag", r"Clearing partition-migrating flag",
        r"Created chunk supplier", r"Collecting chunk suppliers", r"Current chunk \[",
        r"Last chunk was sent", r"All migration fragments done for ",
        r"Reset replica sync permits", r"Replica versions are set after SHIFT DOWN migration",
        r"ReplicaVersions are set after migration\. partitionId=",
        r"New calculated partition state stamp is", r"PartitionId=\d+ .* is removed from "
        r"replica index", r"Storing snapshot of partition assignments")),
    Ignored(_PROGRESS, (
        r"Committed MigrationInfo\{", r"Scheduled finalization of ",
        r"Migration (?:operation|commit) response received", r"Sending migration commit "
        r"operation to ", r"Shortcutting migration commit", r"Evicting \d+ completed migrations",
        r"Publishing completed migrations", r"Failure while publishing completed migrations",
        r"Member .* rejected completed migrations", r"Trying to prioritize migration",
        r"Successfully promoted \d+ backups")),
    Ignored(_AGAIN, (
        r"Already applied ", r"Rejected new partition state", r"This is the master node and "
        r"received partition table update", r"Received partition table update from an unknown "
        r"member", r"Following unknown addresses are found in partition table",
        r"Not publishing partition runtime state since migration is not allowed",
        r"Ignoring received partition table, startup is not completed yet",
        r"Failure while checking partition state")),
    Ignored(_STAMP, (
        r"Publishing partition state, stamp", r"Applied partition state update with stamp",
        r"Applied new partition state\. Stamp", r"Sending partition state, stamp",
        r"Checking partition state, stamp", r"Applied completed migrations with partition "
        r"state stamp")),
    Ignored(_VERSION_SEEN, (
        r"Applied new partition state\. Version", r"Sending partition state, version",
        r"Checking partition state, version", r"Received partition state version")),
    Ignored(_PROMOTION, (
        r"Submitting (?:BeforePromotionOperation|FinalizePromotionOperation)",
        r"Running (?:before|finalize) promotion for ", r"Remaining before promotion tasks",
        r"All (?:before|finalize) promotion tasks are completed", r"Completed (?:before|finalize) "
        r"stage of ", r"PROMOTE partitionId=", r"Sending promotion commit operation",
        r"Promotion commit result ", r"Promotion commit failed for ",
        r"Cannot commit promotions\.")),
    Ignored(_ANTI_ENTROPY, (
        r"Retained namespaces for partitionId=", r"Sending anti-entropy operation to ")),
    Ignored(_LOCAL, (
        r"Setting master address to ", r"Setting members \[", r"Local member list join version",
        r"Member list join version of ", r"MemberInfo\{.*\} is excluded",
        r"Adding Member ", r"Removing \[Member ", r"Initializing cluster partition table "
        r"arrangement", r"Setting initial cluster state")),
    Ignored(("The master's receipt of a shutdown request: it is read where the master handles "
             "it (`Shutdown request of … is handled`) and where the member asks "
             "(`is SHUTTING_DOWN`)."), (r"Received shutdown request from ",)),
    Ignored(_TASKS, (
        r"Migration queue is cleared and control task is scheduled",
        r"(?:RepairPartitionTableTask|RepartitioningTask|RedoPartitioningTask"
        r"|FetchMostRecentPartitionTableTask) scheduled")),
    Ignored(_CLUSTER_STATE, (r"Locking cluster state\.", r"Extending cluster state lock\.")),
    Ignored(_EXCEPTION, (r"com\.hazelcast\.[\w.]*(?:Exception|Error)\b",)),
)

_RX = [(re.compile("|".join(f"(?:{p})" for p in family.patterns)), family.reason)
       for family in IGNORED]


def reason_ignored(message: str) -> str | None:
    """Why the protocol loggers' `message` (the text after the member prefix) gives no event,
    or None when it is none of `IGNORED`."""
    text = message.lstrip()
    for rx, reason in _RX:
        if rx.match(text):
            return reason
    return None

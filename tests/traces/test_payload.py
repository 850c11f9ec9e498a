"""Tests of traces/payload.py: Hazelcast member log payloads to events (the message families
§2-§12 of docs/validation.md, "The messages read").

Payloads are written in the exact wordings of the Hazelcast classes that log them and of the real
excerpts in tests/data/logs (the member lists of hz_05, hz_06, hz_08 and hz_28 verbatim, with their
tabs, spaces and redacted placeholders). Each family is a table of ``(payload, expected events)``;
all the payloads together feed the KEYWORDS test and the mutation test.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from partsafe.traces import payload
from partsafe.traces.events import (
    UNKNOWN_MEMBER,
    ClusterStateChanged,
    Event,
    ExplicitSuspicion,
    MastershipAcceptanceReceived,
    MastershipClaimAccepted,
    MastershipClaimed,
    MastershipClaimSent,
    MastershipClaimStarted,
    MemberLeft,
    MemberListInstalled,
    MemberRemoved,
    MemberStarted,
    MemberSuspected,
    MigrationCommitted,
    MigrationFailed,
    MigrationFinished,
    MigrationRolledBack,
    MigrationsCompleted,
    MigrationStarted,
    PartitionLost,
    PartitionTableApplied,
    PartitionTableConflict,
    PartitionTableFetch,
    PartitionTablePublished,
    PartitionVersionApplied,
    PlanDecision,
    PlanOrder,
    PlanStarted,
    PlanState,
    PromotionCommitted,
    Repartitioning,
    ShutdownRequested,
    ShutdownRequestHandled,
    Source,
    SplitBrainMerge,
    SuspicionRemoved,
)
from partsafe.traces.payload import KEYWORDS, Origin, PayloadError, declared_size, parse_payload

ME = "10.0.0.1:5701"
ORIGIN = Origin(member=ME, file="member.log", line=42, order=7)
UNKNOWN = Origin(member="", file="member.log", line=42)
LOGS = Path(__file__).resolve().parents[1] / "data" / "logs"

U1 = "ad55fb38-9dd0-47a5-ab5b-504916c9e85f"
U2 = "3f234cd8-050d-4ed2-9615-51b3c2593f26"
U3 = "c7486903-f06c-4d98-872c-530e78307320"
MIG = "5f0b1e1a-2b3c-4d5e-8f90-123456789abc"

Case = tuple[str, "list[Event] | None"]


def at_me(cls: type[Event], **fields: Any) -> Event:
    """An event observed by the logging member of ORIGIN."""
    return cls(member=ME, **fields)


# --- §2 member lists: the real ones, verbatim ---------------------------------------------------

HZ05_LIST = (
    "Members {size:2, ver:4} [\n"
    "\tMember [192.168.1.8]:5701 - ad55fb38-9dd0-47a5-ab5b-504916c9e85f\n"
    "\tMember [192.168.1.8]:5702 - 3f234cd8-050d-4ed2-9615-51b3c2593f26 this\n"
    "]"
)
HZ06_LIST = (
    "Members {size:2, ver:4} [\n"
    "        Member [<ip>]:<portA> - 2f8cbb60-1823-4fba-8d13-2fa9dbf89822 this\n"
    "        Member [<ip>]:<portB> - 7fb07cd0-5a46-422d-801d-05e6da0b9a63\n"
    "]"
)
HZ08_LIST = (
    "Members {size:1, ver:5} [\n"
    "        Member [<ip>]:<portA> - 2f8cbb60-1823-4fba-8d13-2fa9dbf89822 this\n"
    "]"
)
HZ28_LIST = (
    "Members [2] {\n"
    "       \tMember [10.244.37.2]:5701 - a212635b-ffd9-4510-99db-3ef75957dbe8 this\n"
    "       \tMember [10.244.86.3]:5701 - a605bec1-324a-47ea-90d7-a818a5caa418\n"
    "}"
)
PLACEHOLDER_UUIDS = ("2f8cbb60-1823-4fba-8d13-2fa9dbf89822", "7fb07cd0-5a46-422d-801d-05e6da0b9a63")
HZ28_UUIDS = ("a212635b-ffd9-4510-99db-3ef75957dbe8", "a605bec1-324a-47ea-90d7-a818a5caa418")
NO_UUIDS = "Members [2] {\n\tMember [10.0.0.1]:5701 this\n\tMember [10.0.0.2]:5701\n}"
WRONG_SIZE = (
    f"Members {{size:3, ver:5}} [\n\tMember [10.0.0.1]:5701 - {U1}\n"
    f"\tMember [10.0.0.2]:5701 - {U2} this\n]"
)
CP_GROUP = (
    "CP Group Members {groupId: default(1234), size:3, term:1, logIndex:0} [\n"
    "\tCPMember{uuid=d7a9e2b4-1c63-4e3b-9a54-6f2a3b1c0d11, address=[10.0.0.1]:5701} - LEADER\n"
    "\tCPMember{uuid=a1b2c3d4-1c63-4e3b-9a54-6f2a3b1c0d12, address=[10.0.0.2]:5701}\n"
    "\tCPMember{uuid=e5f6a7b8-1c63-4e3b-9a54-6f2a3b1c0d13, address=[10.0.0.3]:5701}\n"
    "]"
)

MEMBER_LISTS: list[Case] = [
    (
        HZ05_LIST,
        [
            at_me(
                MemberListInstalled,
                version=4,
                members=("192.168.1.8:5701", "192.168.1.8:5702"),
                master="192.168.1.8:5701",
                uuids=(U1, U2),
            )
        ],
    ),
    (
        HZ06_LIST,
        [
            at_me(
                MemberListInstalled,
                version=4,
                members=("<ip>:<portA>", "<ip>:<portB>"),
                master="<ip>:<portA>",
                uuids=PLACEHOLDER_UUIDS,
            )
        ],
    ),
    (
        HZ08_LIST,
        [
            at_me(
                MemberListInstalled,
                version=5,
                members=("<ip>:<portA>",),
                master="<ip>:<portA>",
                uuids=PLACEHOLDER_UUIDS[:1],
            )
        ],
    ),
    (
        HZ28_LIST,
        [
            at_me(
                MemberListInstalled,
                version=None,
                members=("10.244.37.2:5701", "10.244.86.3:5701"),
                master="10.244.37.2:5701",
                uuids=HZ28_UUIDS,
            )
        ],
    ),
    # 3.6 and older: no uuids at all
    (
        NO_UUIDS,
        [
            at_me(
                MemberListInstalled,
                version=None,
                members=("10.0.0.1:5701", "10.0.0.2:5701"),
                master="10.0.0.1:5701",
            )
        ],
    ),
    # one member without its uuid: no uuids are given
    (
        f"Members [2] {{\n\tMember [10.0.0.1]:5701 - {U1} this\n\tMember [10.0.0.2]:5701\n}}",
        [
            at_me(
                MemberListInstalled,
                version=None,
                members=("10.0.0.1:5701", "10.0.0.2:5701"),
                master="10.0.0.1:5701",
            )
        ],
    ),
    # IPv6 with a zone, lite members, CRLF line ends
    (
        "Members {size:3, ver:12} [\r\n"
        f"\tMember [fe80::1%eth0]:5701 - {U1}\r\n"
        f"\tMember [10.0.0.2]:5702 - {U2} lite\r\n"
        f"\tMember [10.0.0.3]:5703 - {U3} this lite\r\n"
        "]\r\n",
        [
            at_me(
                MemberListInstalled,
                version=12,
                members=("fe80::1%eth0:5701", "10.0.0.2:5702", "10.0.0.3:5703"),
                master="fe80::1%eth0:5701",
                uuids=(U1, U2, U3),
            )
        ],
    ),
    # a wrong stated size is not an error: the listed members count
    (
        WRONG_SIZE,
        [
            at_me(
                MemberListInstalled,
                version=5,
                members=("10.0.0.1:5701", "10.0.0.2:5701"),
                master="10.0.0.1:5701",
                uuids=(U1, U2),
            )
        ],
    ),
    # FINE: sending a member list is no install
    (f"Sending member list to member: [10.0.0.2]:5701 \n\n{HZ05_LIST}\n", []),
    (f"Sending member list to the non-master nodes: \n\n{HZ05_LIST}\n", []),
    # look-alikes
    (CP_GROUP, None),
    ("Members {groupId: default(1234), size:3, term:1, logIndex:0} [", None),
    ("Members {} are not what you think", None),
    ("Members [of the team] were notified", None),
]

# --- §3 removals, §11 lifecycle, the start banner -------------------------------------------------

REMOVALS_AND_LIFECYCLE: list[Case] = [
    (
        "Removing Member [<ip>]:<portB> - 7fb07cd0-5a46-422d-801d-05e6da0b9a63",
        [at_me(MemberRemoved, removed="<ip>:<portB>")],
    ),
    (f"Member [10.0.0.2]:5701 - {U2} is removed. Publishing new member list.", []),
    (
        f"Removing Member [10.0.0.2]:5701 - {U2} because it has disconnected from some of the "
        "members!",
        [],
    ),
    (
        "Removing connection to endpoint [<ip>]:<portB> Cause => java.net.SocketException "
        "{Connection refused to address /<ip>:<portB>}, Error-Count: 5",
        None,
    ),
    ("[192.168.1.8]:5701 is STARTING", [at_me(MemberStarted, uuid=None)]),
    ("[<ip>]:<portB> is STARTING", [at_me(MemberStarted, uuid=None)]),
    ("[192.168.1.8]:5701 is STARTED", []),
    ("[10.0.0.1]:5701 is MERGING", []),
    ("[10.0.0.1]:5701 is MERGED", []),
    ("[10.0.0.1]:5701 is MERGE_FAILED", []),
    ("[10.0.0.1]:5701 is SHUTTING_DOWN", [at_me(ShutdownRequested)]),
    ("[10.0.0.1]:5701 is SHUTDOWN", [at_me(MemberLeft)]),
    ("Address[10.0.0.1]:5701 is SHUTDOWN", [at_me(MemberLeft)]),
    ("[LOCAL] is STARTING", None),
    ("[10.0.0.1]:5701 is CLIENT_CONNECTED", None),
    ("Hazelcast 3.9.4 (20180420 - b8001d5) starting at [192.168.1.8]:5701", []),
    ("Hazelcast 3.7 (20160817 - 1302600) starting at [10.244.37.2]:5701", []),
    ("Hazelcast Platform 5.3.2 (20230911 - 5f1a6fe) starting at [10.0.0.1]:5701", []),
    ("Hazelcast Community Edition 3.2 (20140325) starting at Address[10.0.0.1]:5701", []),
    ("Hazelcast Shutdown is completed in 34 ms.", None),
    ("Copyright (c) 2008-2018, Hazelcast, Inc. All Rights Reserved.", None),
]

# --- §4 suspicion ---------------------------------------------------------------------------------

HEARTBEATS = (
    "because it has not sent any heartbeats since 2023-10-31 12:00:00.000. Now: "
    "2023-10-31 12:01:00.500, heartbeat timeout: 60000 ms, suspicion level: 1.00"
)

SUSPICION: list[Case] = [
    (
        f"Member [10.0.0.2]:5701 - {U2} is suspected to be dead for reason: No connection",
        [at_me(MemberSuspected, suspect="10.0.0.2:5701", reason="No connection")],
    ),
    (
        f"Member [10.0.0.2]:5701 - {U2} is suspected to be dead",
        [at_me(MemberSuspected, suspect="10.0.0.2:5701", reason="")],
    ),
    (
        f"Member [10.0.0.2]:5701 - {U2} is suspected to be dead for reason: Suspecting "
        f"Member [10.0.0.2]:5701 - {U2} {HEARTBEATS}",
        [
            at_me(
                MemberSuspected,
                suspect="10.0.0.2:5701",
                reason=f"Suspecting Member [10.0.0.2]:5701 - {U2} {HEARTBEATS}",
            )
        ],
    ),
    (
        f"Removed suspicion of Member [10.0.0.2]:5701 - {U2}. Reason: Valid heartbeat",
        [at_me(SuspicionRemoved, suspect="10.0.0.2:5701")],
    ),
    (
        "Received suspicion request from: [10.0.0.3]:5701",
        [at_me(ExplicitSuspicion, sender="10.0.0.3:5701")],
    ),
    (
        f"Suspecting Member [10.0.0.2]:5701 - {U2} {HEARTBEATS}",
        [at_me(MemberSuspected, suspect="10.0.0.2:5701", reason="heartbeat timeout")],
    ),
    (f"Member [10.0.0.2]:5701 - {U2} is promoted to normal member.", None),
]

# --- §5 mastership claim --------------------------------------------------------------------------

M1 = (
    f"MemberInfo{{address=[10.0.0.1]:5701, uuid={U1}, cpMemberUUID=null, liteMember=false, "
    "memberListJoinVersion=1}"
)
M2 = (
    f"MemberInfo{{address=[10.0.0.2]:5701, uuid={U2}, cpMemberUUID=null, liteMember=false, "
    "memberListJoinVersion=2}"
)
M3 = (
    f"MemberInfo{{address=[10.0.0.3]:5701, uuid={U3}, cpMemberUUID=null, liteMember=false, "
    "memberListJoinVersion=3}"
)
#: 3.9: no cpMemberUUID, and (here) fields in another order
OLD_VIEW = (
    f"MembersView{{version=3, members=[MemberInfo{{address=[10.0.0.2]:5701, uuid={U2}, "
    f"liteMember=false}}, MemberInfo{{uuid={U3}, memberListJoinVersion=3, "
    "address=[10.0.0.3]:5701}]}"
)

MASTERSHIP: list[Case] = [
    ("Starting mastership claim process...", []),
    (
        f"Local MembersView{{version=5, members=[{M1}, {M2}, {M3}]}} with suspected members: "
        f"[Member [10.0.0.1]:5701 - {U1}] and initial addresses to ask: "
        f"[Member [10.0.0.3]:5701 - {U3}]",
        [at_me(MastershipClaimStarted, suspected=("10.0.0.1:5701",),
               members=("10.0.0.1:5701", "10.0.0.2:5701", "10.0.0.3:5701")),
         at_me(MastershipClaimSent, target="10.0.0.3:5701")],
    ),
    (
        f"Local {OLD_VIEW} with suspected members: [Member [10.0.0.1]:5701 - {U1}, "
        f"Member [10.0.0.4]:5701 - {U3}] and initial addresses to ask: []",
        [at_me(MastershipClaimStarted, suspected=("10.0.0.1:5701", "10.0.0.4:5701"),
               members=("10.0.0.2:5701", "10.0.0.3:5701"))],
    ),
    # MembershipManager.fetchLatestMembersView and fetchMembersViewFromNewMembers (FINE)
    (
        f"A more recent MembersView{{version=6, members=[{M2}, {M3}]}} is received from "
        "[10.0.0.3]:5701",
        [at_me(MastershipAcceptanceReceived, sender="10.0.0.3:5701", version=6,
               members=("10.0.0.2:5701", "10.0.0.3:5701"))],
    ),
    ("Asking MembersView of [10.0.0.4]:5701", [at_me(MastershipClaimSent, target="10.0.0.4:5701")]),
    (
        f"Mastership is claimed with: MembersView{{version=6, members=[{M2}, {M3}]}}",
        [at_me(MastershipClaimed, version=6, members=("10.0.0.2:5701", "10.0.0.3:5701"))],
    ),
    (
        f"Mastership is claimed with: {OLD_VIEW}",
        [at_me(MastershipClaimed, version=3, members=("10.0.0.2:5701", "10.0.0.3:5701"))],
    ),
    (
        "Mastership of [10.0.0.2]:5701 is accepted. Response: "
        f"MembersView{{version=5, members=[{M1}, {M2}, {M3}]}}",
        [at_me(MastershipClaimAccepted, candidate="10.0.0.2:5701", version=5)],
    ),
]

# --- §6 split brain and merge ---------------------------------------------------------------------

MERGE: list[Case] = [
    (
        "[10.0.0.1]:5701 is merging [tcp/ip] to [10.0.0.5]:5701",
        [at_me(SplitBrainMerge, target="10.0.0.5:5701")],
    ),
    (
        "[10.0.0.1]:5701 is merging [multicast] to [10.0.0.5]:5701",
        [at_me(SplitBrainMerge, target="10.0.0.5:5701")],
    ),
    (
        "[10.0.0.1]:5701 is merging to [10.0.0.5]:5701, because: instructed by master "
        "[10.0.0.4]:5701",
        [at_me(SplitBrainMerge, target="10.0.0.5:5701")],
    ),
    (
        "We should merge to [10.0.0.5]:5701 because their data member count is bigger than ours "
        "[3 > 2]",
        [],
    ),
    ("[10.0.0.5]:5701 should merge to us, both have the same data member count: 2", []),
    (
        "Updating local member list version: 5 to 8 because of split brain merge caller: "
        "[10.0.0.5]:5701 with member list version: 7",
        [],
    ),
    (
        "[10.0.0.1]:5701 CANNOT merge to [10.0.0.5]:5701, because it thinks this-node as its "
        "member.",
        None,
    ),
]

# --- §7 the new master's partition-table fetch ----------------------------------------------------

MIGRATION_INFO = (
    f"MigrationInfo{{uuid={MIG}, partitionId=17, source=[10.0.0.1]:5701 - {U1}, "
    "sourceCurrentReplicaIndex=0, sourceNewReplicaIndex=-1, "
    f"destination=[10.0.0.2]:5701 - {U2}, destinationCurrentReplicaIndex=-1, "
    "destinationNewReplicaIndex=0, master=[10.0.0.1]:5701, initialPartitionVersion=3, "
    "partitionVersionIncrement=2, status=ACTIVE}"
)
SUCCEEDED = MIGRATION_INFO.replace("status=ACTIVE", "status=SUCCESS")
FAILED = MIGRATION_INFO.replace("status=ACTIVE", "status=FAILED")

#: ``AbstractInternalPartition.toString`` of partition 5 at version 3, one line per replica
P5_AB = (f"Partition {{ID: 5, Version: 3}} [\n\t0:[10.0.0.1]:5701 - {U1}\n"
         f"\t1:[10.0.0.2]:5701 - {U2}\n]")
P5_BC = (f"Partition {{ID: 5, Version: 3}} [\n\t0:[10.0.0.2]:5701 - {U2}\n"
         f"\t2:[10.0.0.3]:5701 - {U3}\n]")

FETCH: list[Case] = [
    # InternalPartitionServiceImpl's FetchMostRecentPartitionTableTask (WARNING), its lines
    # joined back as the scanner joins a record's tab-indented rest
    (
        f"Issue while determining latest partition... Latest: {P5_AB}, Received: {P5_BC}",
        [at_me(PartitionTableConflict, partition=5, version=3,
               replicas=(("10.0.0.1:5701", "10.0.0.2:5701"),
                         ("10.0.0.2:5701", None, "10.0.0.3:5701")))],
    ),
    (
        "Fetching partition tables from cluster to determine the most recent one... "
        "Local stamp: -5489131870946612355",
        [at_me(PartitionTableFetch, phase="fetching")],
    ),
    (
        "Most recent partition table is determined.",
        [at_me(PartitionTableFetch, phase="determined")],
    ),
    (
        "Applying the most recent of partition state...",
        [at_me(PartitionTableFetch, phase="applying")],
    ),
    (
        "Fetching most recent partition table! my version: 812",
        [at_me(PartitionTableFetch, phase="fetching")],
    ),
    (
        f"Marking active migration {MIGRATION_INFO} as FAILED",
        [
            at_me(
                MigrationFailed,
                migration=MIG,
                partition=17,
                reason="marked FAILED by the new master",
            )
        ],
    ),
]

# --- §9 repartitioning and statistics -------------------------------------------------------------

STATS = (
    "(repartitionTime=Tue Oct 31 12:00:00 UTC 2023, plannedMigrations=10, completedMigrations=4, "
    "remainingMigrations=6, totalCompletedMigrations=20)"
)

REPARTITIONING: list[Case] = [
    (
        "Repartitioning cluster data. Migration tasks count: 271",
        [at_me(Repartitioning, planned=271)],
    ),
    ("Repartitioning cluster data. Migration tasks count: 90", [at_me(Repartitioning, planned=90)]),
    (
        "Re-partitioning cluster data... Migration queue size: 271",
        [at_me(Repartitioning, planned=271)],
    ),
    ("Partition balance is ok, no need to repartition.", [at_me(Repartitioning, planned=0)]),
    (
        "All migration tasks have been completed. (repartitionTime=<date> 16:49:07 UTC 2020, "
        "plannedMigrations=271, completedMigrations=271, remainingMigrations=0, "
        "totalCompletedMigrations=542, elapsedMigrationTime=332ms, "
        "totalElapsedMigrationTime=332ms)",
        [
            at_me(
                MigrationsCompleted,
                planned=271,
                completed=271,
                remaining=0,
                outcome="completed",
                total_completed=542,
            )
        ],
    ),
    (
        "Rebalance process was failed. Ignoring remaining migrations. Will recalculate the new "
        f"migration plan. {STATS}",
        [
            at_me(
                MigrationsCompleted,
                planned=10,
                completed=4,
                remaining=6,
                outcome="failed",
                total_completed=20,
            )
        ],
    ),
    (
        "Rebalance process was aborted. Ignoring remaining migrations. Will recalculate the new "
        f"migration plan. {STATS}",
        [
            at_me(
                MigrationsCompleted,
                planned=10,
                completed=4,
                remaining=6,
                outcome="aborted",
                total_completed=20,
            )
        ],
    ),
    (
        f"Remaining migration tasks: 6. {STATS}",
        [
            at_me(
                MigrationsCompleted,
                planned=10,
                completed=4,
                remaining=6,
                outcome="progress",
                total_completed=20,
                tasks=6,
            )
        ],
    ),
    # an older form: no totalCompletedMigrations, a date with commas, fields in another order
    (
        "All migration tasks have been completed. (completedMigrations=3, "
        "repartitionTime=Mon, 1 Oct 2018 04:02:48, plannedMigrations=3, remainingMigrations=0)",
        [at_me(MigrationsCompleted, planned=3, completed=3, remaining=0, total_completed=None)],
    ),
    ("All migration tasks have been completed, queues are empty.", []),
    ("Remaining migration tasks in queue => 12", []),
    (
        f"Remaining migration tasks in queue => 6. {STATS}",
        [
            at_me(
                MigrationsCompleted,
                planned=10,
                completed=4,
                remaining=6,
                outcome="progress",
                total_completed=20,
                tasks=6,
            )
        ],
    ),
]

# --- §8/§9 migrations (FINE) ---------------------------------------------------------------------

MIGRATIONS: list[Case] = [
    (
        f"Starting Migration: {MIGRATION_INFO}",
        [
            at_me(
                MigrationStarted,
                role="master",
                migration=MIG,
                partition=17,
                source_member="10.0.0.1:5701",
                destination="10.0.0.2:5701",
                source_current_index=0,
                planned_version=3,
            )
        ],
    ),
    (
        "Starting Migration: "
        + MIGRATION_INFO.replace(
            f"source=[10.0.0.1]:5701 - {U1}, sourceCurrentReplicaIndex=0",
            "source=null, sourceCurrentReplicaIndex=-1",
        ),
        [
            at_me(
                MigrationStarted,
                role="master",
                migration=MIG,
                partition=17,
                source_member=None,
                destination="10.0.0.2:5701",
                source_current_index=-1,
                planned_version=3,
            )
        ],
    ),
    (
        f"Finished Migration: {SUCCEEDED}",
        [at_me(MigrationCommitted, role="master", migration=MIG, partition=17)],
    ),
    (
        f"Finished Migration: {FAILED}",
        [at_me(MigrationFailed, migration=MIG, partition=17, reason="finished with status FAILED")],
    ),
    # what Hazelcast logs: the operation answered, the commit still to come
    (
        f"Finished Migration: {MIGRATION_INFO}",
        [at_me(MigrationFinished, migration=MIG, partition=17)],
    ),
    # MigrationManager's MigrationPlanTask (4.1+, FINE): over for the plan task, whatever the
    # status
    (
        f"AsyncMigrationTask completed: {SUCCEEDED}",
        [at_me(MigrationFinished, migration=MIG, partition=17)],
    ),
    # MigrationManager.commitMigrationToDestinationAsync (FINE; 3.x and 4.x: FINEST, and the
    # destination an Address): the master's decision on the destination's answer
    (
        f"Migration commit result true from [10.0.0.2]:5701 - {U2} for {SUCCEEDED}",
        [at_me(MigrationCommitted, role="master", migration=MIG, partition=17)],
    ),
    (
        f"Migration commit result false from [10.0.0.2]:5701 for {SUCCEEDED}",
        [at_me(MigrationRolledBack, role="master", migration=MIG, partition=17)],
    ),
    # 3.x's table versions (InternalPartitionServiceImpl, FINE); 4.x and later print stamps
    ("Publishing partition state, version: 272", [at_me(PartitionTablePublished, version=272)]),
    ("Applied partition state update with version: 274",
     [at_me(PartitionTableApplied, version=274)]),
    # MigrationManager.finalizeMigration (FINE): ME is the source of MIGRATION_INFO
    (
        f"Finalizing {SUCCEEDED}",
        [at_me(MigrationCommitted, role="source", migration=MIG, partition=17)],
    ),
    (
        f"Finalizing {FAILED}",
        [at_me(MigrationRolledBack, role="source", migration=MIG, partition=17)],
    ),
    # MigrationRequestOperation.invokeMigrationOperation (FINEST), on the source
    (
        "Invoking MigrationOperation for namespaces [DistributedObjectNamespace{service="
        f"'hz:impl:mapService', objectName='default'}}] and {MIGRATION_INFO}, firstFragment: "
        "true, lastFragment: true",
        [
            at_me(
                MigrationStarted,
                role="source",
                migration=MIG,
                partition=17,
                source_member="10.0.0.1:5701",
                destination="10.0.0.2:5701",
                source_current_index=0,
                planned_version=3,
            )
        ],
    ),
    # 4.0: no firstFragment; ME is not the destination: no event
    (
        f"ReplicaVersions are set after migration. {MIGRATION_INFO}, namespace="
        "DistributedObjectNamespace{service='hz:impl:mapService', objectName='default'}, "
        "replicaVersions=[1, 0, 0, 0, 0, 0]",
        [],
    ),
    # older releases print the partition only: not ours
    ("ReplicaVersions are set after migration. partitionId=17 replicaVersions=[1, 0, 0, 0, 0, 0]",
     None),
    (
        f"Applying completed migration {SUCCEEDED}",
        [at_me(PartitionVersionApplied, partition=17, version=5)],
    ),
    # 3.x: the source and destination uuids are fields of their own, no partition versions
    (
        f"Starting Migration: MigrationInfo{{uuid={MIG}, partitionId=12, "
        f"source=[10.0.0.1]:5701, sourceUuid={U1}, sourceCurrentReplicaIndex=0, "
        f"sourceNewReplicaIndex=-1, destination=[10.0.0.2]:5701, destinationUuid={U2}, "
        "destinationCurrentReplicaIndex=-1, destinationNewReplicaIndex=0, "
        "master=[10.0.0.1]:5701, processing=false, status=ACTIVE}",
        [
            at_me(
                MigrationStarted,
                role="master",
                migration=MIG,
                partition=12,
                source_member="10.0.0.1:5701",
                destination="10.0.0.2:5701",
                source_current_index=0,
                planned_version=None,
            )
        ],
    ),
]

# --- §9 migration failures and commit errors ------------------------------------------------------

#: the master's rollback, which a failure logged just before it decides (``Migration failed``,
#: ``Cannot commit``)
ROLLBACK = at_me(MigrationRolledBack, role="master", migration=MIG, partition=17)

FAILURES: list[Case] = [
    (text, [ROLLBACK] if decides else [at_me(MigrationFailed, migration=MIG, partition=17,
                                             reason=reason)])
    for text, reason, decides in [
        (
            f"Failed migration from Member [10.0.0.2]:5701 - {U2} for {MIGRATION_INFO}",
            "failed migration", False,
        ),
        (f"Migration failed: {MIGRATION_INFO}", "migration failed", True),
        (f"Error during {MIGRATION_INFO}", "error during migration", False),
        (
            f"Cannot commit {MIGRATION_INFO}. Destination Member [10.0.0.2]:5701 - {U2} is not a "
            "member anymore",
            "destination is not a member anymore", True,
        ),
        (
            f"Migration commit failed for {MIGRATION_INFO} since destination Member "
            f"[10.0.0.2]:5701 - {U2} left the cluster",
            "commit failed: destination left the cluster", False,
        ),
        (
            f"Migration commit failed for {MIGRATION_INFO} since this node is shutting down.",
            "commit failed: this node is shutting down", False,
        ),
        (
            f"Migration commit to [10.0.0.2]:5701 failed for {MIGRATION_INFO}\n"
            "java.util.concurrent.ExecutionException: boom\n\tat com.hazelcast.Foo.bar(Foo.java:1)",
            "commit failed", False,
        ),
    ]
] + [
    ("Error during join check!", None),
    ("Migration failed: the database schema is out of date", None),
]

# --- §10 promotions and partition loss ------------------------------------------------------------

LOSS_AND_PROMOTION: list[Case] = [
    (
        "partitionId=12 is completely lost!",
        [at_me(PartitionLost, partition=12, lost_backup_count=6)],
    ),
    # the printed index is already i - 1 for a promotion from backup index i (§10)
    (
        "Partition replica is lost! partitionId=5 namespace: DistributedObjectNamespace"
        "{service='hz:impl:mapService', objectName='default'} lost replicaIndex=0 replica versions "
        "before shift up=[0, 0, 0, 0, 0, 0] replica versions after shift up=[0, 0, 0, 0, 0, 0]",
        [at_me(PartitionLost, partition=5, lost_backup_count=0)],
    ),
    (
        "Handling partitionLostEvent failed. Service: class com.example.Listener Event: "
        "com.hazelcast.internal.partition.PartitionLostEventImpl{partitionId=3, lostBackupCount=1, "
        "eventSource=[10.0.0.1]:5701}",
        [at_me(PartitionLost, partition=3, lost_backup_count=1)],
    ),
    ("Assigning new owners for 4 LOST partitions!", []),
    ("Assigning new owners for 4 LOST partitions, when migration is not allowed!", []),
    (
        "partitionId=7 owner is removed. replicaIndex=2 will be shifted up to 0. "
        f"Partition {{ID: 7, Version: 3}} [\n\t2:[10.0.0.3]:5701 - {U3}\n]",
        [at_me(PromotionCommitted, partition=7, replica_index=2)],
    ),
    (
        "partitionId=7 owner is removed. there is no other replica to shift up. "
        "Partition {ID: 7, Version: 3} [\n]",
        [],
    ),
]

# --- §9 the migration planner (FINEST) ----------------------------------------------------------
# MigrationManager.java (RedoPartitioningTask.processNewPartitionState, MigrationCollector.migrate)
# and MigrationPlanner.java (planMigrations, prioritizeCopiesAndShiftUps), hazelcast/src/main/java/
# com/hazelcast/internal/partition/impl/; each line below is its template with values put in.

R1 = f"[10.0.0.1]:5701 - {U1}"
R2 = f"[10.0.0.2]:5701 - {U2}"
R3 = f"[10.0.0.3]:5701 - {U3}"
A1, A2, A3 = "10.0.0.1:5701", "10.0.0.2:5701", "10.0.0.3:5701"
ARRAY_1_2 = f"[{R1}, {R2}, null, null, null, null, null]"
ARRAY_1_3 = f"[{R1}, {R3}, null, null, null, null, null]"
N5 = (None,) * 5


def planned(p: int, source: str, sc: int, sn: int, destination: str, dc: int, dn: int) -> str:
    """``MigrationInfo.toString`` of a migration ``MigrationCollector`` just made: no master,
    no initial version."""
    return (f"MigrationInfo{{uuid={MIG}, partitionId={p}, source={source}, "
            f"sourceCurrentReplicaIndex={sc}, sourceNewReplicaIndex={sn}, "
            f"destination={destination}, destinationCurrentReplicaIndex={dc}, "
            f"destinationNewReplicaIndex={dn}, master=null, initialPartitionVersion=-1, "
            f"partitionVersionIncrement=1, status=ACTIVE}}")


def decision(kind: str, source: str | None, sc: int, sn: int, destination: str | None,
             dc: int, dn: int, case: str = "", returns_to: int = -1) -> Event:
    return at_me(PlanDecision, partition=12, kind=kind, source_member=source,
                 source_current_index=sc, source_new_index=sn, destination=destination,
                 destination_current_index=dc, destination_new_index=dn, case=case,
                 returns_to=returns_to)


PLANNER: list[Case] = [
    # MigrationManager: "Planning migrations for partitionId=" + partitionId + ". Current
    # replicas: " + Arrays.toString(currentReplicas) + ", New replicas: " + ...
    (f"Planning migrations for partitionId=12. Current replicas: {ARRAY_1_2}, New replicas: "
     f"{ARRAY_1_3}",
     [at_me(PlanStarted, partition=12, current=(A1, A2, *N5), target=(A1, A3, *N5))]),
    # 3.x prints Address arrays (its planner's own lines name no partition: not read)
    ("Planning migrations for partitionId=3. Current replicas: [[10.0.0.1]:5701, null], New "
     "replicas: [null, [10.0.0.1]:5701]",
     [at_me(PlanStarted, partition=3, current=(A1, None), target=(None, A1))]),
    # MigrationPlanner: "partitionId=%d, Initial state: %s", "partitionId=%d, Final state: %s",
    # "partitionId=%d, Final state (after cycle fix): %s"
    (f"partitionId=12, Initial state: {ARRAY_1_2}",
     [at_me(PlanState, partition=12, stage="initial", replicas=(A1, A2, *N5))]),
    (f"partitionId=12, Final state: {ARRAY_1_3}",
     [at_me(PlanState, partition=12, stage="final", replicas=(A1, A3, *N5))]),
    (f"partitionId=12, Final state (after cycle fix): {ARRAY_1_2}",
     [at_me(PlanState, partition=12, stage="cycle-fixed", replicas=(A1, A2, *N5))]),
    # "partitionId=%d, Current index: %d, state: %s"
    ("partitionId=7, Initial state: [null, null, null, null, null, null, null]",
     [at_me(PlanState, partition=7, stage="initial", replicas=(None,) * 7)]),
    (f"partitionId=12, Current index: 1, state: {ARRAY_1_2}",
     [at_me(PlanState, partition=12, stage="pass", replicas=(A1, A2, *N5), index=1)]),
    # "partitionId=%d, New address is null at index: %d"
    ("partitionId=12, New address is null at index: 2",
     [decision("CLEAR", None, 2, -1, None, -1, -1)]),
    # "partitionId=%d, COPY %s to index: %d"
    (f"partitionId=12, COPY {R3} to index: 1", [decision("COPY", None, -1, -1, A3, -1, 1)]),
    # "partitionId=%d, SHIFT UP-2 %s from old addresses index: %d to index: %d"
    (f"partitionId=12, SHIFT UP-2 {R3} from old addresses index: 3 to index: 1",
     [decision("SHIFT_UP", None, -1, -1, A3, 3, 1)]),
    # "partitionId=%d, MOVE %s to index: %d", "... MOVE-3 %s to index: %d", "... MOVE-2 %s  to
    # index: %d" (two blanks): the source is the holder of the index, which the line leaves out
    (f"partitionId=12, MOVE {R3} to index: 1", [decision("MOVE", None, 1, -1, A3, -1, 1)]),
    (f"partitionId=12, MOVE-3 {R3} to index: 1",
     [decision("MOVE", None, 1, -1, A3, -1, 1, case="MOVE-3")]),
    (f"partitionId=12, MOVE-2 {R3}  to index: 2",
     [decision("MOVE", None, 2, -1, A3, -1, 2, case="MOVE-2")]),
    # "partitionId=%d, SHIFT DOWN %s to index: %d, COPY %s to index: %d"
    (f"partitionId=12, SHIFT DOWN {R1} to index: 2, COPY {R3} to index: 0",
     [decision("SHIFT_DOWN", A1, 0, 2, A3, -1, 0)]),
    # the chain walk: "partitionId=%d, SHIFT UP %s from old addresses index: %d to index: %d"
    # [" with source: %s"[" will get another MOVE migration to index: %d"]], or "... and SHIFT
    # DOWN %s to index: %d"
    (f"partitionId=12, SHIFT UP {R3} from old addresses index: 3 to index: 1",
     [decision("SHIFT_UP", None, 1, -1, A3, 3, 1)]),
    (f"partitionId=12, SHIFT UP {R3} from old addresses index: 3 to index: 1 with source: {R2}",
     [decision("SHIFT_UP", A2, 1, -1, A3, 3, 1)]),
    (f"partitionId=12, SHIFT UP {R3} from old addresses index: 3 to index: 1 with source: {R2} "
     "will get another MOVE migration to index: 0",
     [decision("SHIFT_UP", A2, 1, -1, A3, 3, 1, returns_to=0)]),
    (f"partitionId=12, SHIFT UP {R3} from old addresses index: 3 to index: 1 and SHIFT DOWN "
     f"{R2} to index: 2", [decision("SHIFT_UP", A2, 1, 2, A3, 3, 1)]),
    # prioritizeCopiesAndShiftUps: "Migration order after prioritization: [" then "\n\t" + ix +
    # "- " + migration + "," each, the last comma deleted, "]"; with no migration the "[" is the
    # character deleted
    (f"Migration order after prioritization: [\n\t0- {planned(12, 'null', -1, -1, R3, -1, 1)},"
     f"\n\t1- {planned(12, R1, 0, -1, R2, -1, 0)}]",
     [at_me(PlanOrder, partition=12, migrations=((None, -1, -1, A3, -1, 1),
                                                  (A1, 0, -1, A2, -1, 0)))]),
    ("Migration order after prioritization: ]", []),
    # MigrationCollector.migrate (FINE) and prioritize's traces: read, nothing judged on them
    (f"Planned migration -> partitionId=12, source=null, sourceCurrentReplicaIndex=-1, "
     f"sourceNewReplicaIndex=-1, destination={R3}, destinationCurrentReplicaIndex=-1, "
     "destinationNewReplicaIndex=1", []),
    (f"Trying to prioritize migration: {planned(12, 'null', -1, -1, R3, -1, 1)}", []),
    (f"Prioritizing migration {planned(12, 'null', -1, -1, R3, -1, 1)} to: 0", []),
    ("partitionId=12, Migration decision algorithm took a nap", None),
]

# --- §11 shutdown ---------------------------------------------------------------------------------

SHUTDOWN: list[Case] = [
    (
        f"Shutdown request of Member [127.0.0.1]:5703 - {U3} is handled",
        [at_me(ShutdownRequestHandled, requester="127.0.0.1:5703")],
    ),
    (f"Member [127.0.0.1]:5703 - {U3} requested to shutdown but still in partition table", []),
]

# --- §12 cluster state ----------------------------------------------------------------------------

CLUSTER_STATE: list[Case] = [
    (
        "Changing cluster state from ClusterState{state=ACTIVE, lock=LockGuard{lockOwner="
        f"[10.0.0.1]:5701, lockOwnerId='{U1}', lockExpiryTime=1698753600000}}}} to "
        "ClusterStateChange{type=class com.hazelcast.cluster.ClusterState, newState=FROZEN}, "
        "initiator: [10.0.0.1]:5701, transient: false",
        [at_me(ClusterStateChanged, old="ACTIVE", new="FROZEN")],
    ),
    (
        "Changing cluster state state from ACTIVE to PASSIVE",
        [at_me(ClusterStateChanged, old="ACTIVE", new="PASSIVE")],
    ),
    # a cluster version change is no state change
    (
        "Changing cluster state from ClusterState{state=ACTIVE, lock=LockGuard{lockOwner=null, "
        "lockOwnerId='null', lockExpiryTime=0}} to ClusterStateChange{type=class "
        "com.hazelcast.version.Version, newState=5.4}, initiator: [10.0.0.1]:5701, "
        "transient: false",
        [],
    ),
]

# --- not ours -------------------------------------------------------------------------------------

PROSE: list[Case] = [
    (text, None)
    for text in (
        "The migration of the partition data is slow today",
        "Starting migration of the database schema",
        "Migration thread is interrupted: sleep interrupted",
        "Accepting socket connection from /192.168.1.8:60047",
        "Committing/rolling-back live transactions of [<ip>]:<portB>, UUID: "
        "7fb07cd0-5a46-422d-801d-05e6da0b9a63",
        "Cluster version set to 3.9",
        "Trying to join to discovered node: [<ip>]:<portA>",
        "",
        "   ",
    )
]

# --- malformed and truncated payloads of our families ---------------------------------------------

CUT_MIGRATION = MIGRATION_INFO[: MIGRATION_INFO.index("destinationCurrent")]

ERRORS: list[tuple[str, str]] = [
    (f"partitionId=12, Current index: 1, state: {ARRAY_1_2[:30]}", r"planner is truncated"),
    (f"Planning migrations for partitionId=12. Current replicas: {ARRAY_1_2}, New rep",
     r"planning are truncated"),
    ("Migration order after prioritization: [", r"order is truncated"),
    (f"Migration order after prioritization: [\n\t0- {planned(12, 'null', -1, -1, R3, -1, 1)},"
     "\n\t1- MigrationInfo{uuid=", r"order is truncated"),
    (f"Migration order after prioritization: [\n\t1- {planned(12, 'null', -1, -1, R3, -1, 1)}]",
     r"numbers its entry 0 as 1"),
    (f"Migration order after prioritization: [\n\t0- {planned(12, 'null', -1, -1, R3, -1, 1)},"
     f"\n\t1- {planned(13, 'null', -1, -1, R2, -1, 2)}]", r"several partitions"),
    ("Members {size:2, ver:4} [", r"member list is truncated"),
    (
        f"Issue while determining latest partition... Latest: {P5_AB[:40]}",
        r"conflicting partitions are truncated",
    ),
    (
        f"Members {{size:2, ver:4}} [\n\tMember [192.168.1.8]:5701 - {U1}",
        r"member list is truncated",
    ),
    (f"Members [2] {{\n\tMember [10.244.37.2]:5701 - {U1} this", r"member list is truncated"),
    ("Members {size:2, ver:4} [\n\tMember [10.0.0.1 - oops\n]", r"member list is malformed"),
    ("Removing Member [10.0.0.2", r"removal"),
    ("Remaining migration tasks: many", r"task count"),
    ("[10.0.0.1]:5701 is merging [tcp/ip] to [10.0", r"merge"),
    (
        f"Mastership is claimed with: MembersView{{version=6, members=[{M2}",
        r"MembersView.*truncated",
    ),
    (f"Starting Migration: {CUT_MIGRATION}", r"MigrationInfo is truncated"),
    (f"Migration failed: {CUT_MIGRATION}", r"MigrationInfo is truncated"),
    (
        f"Starting Migration: {MIGRATION_INFO.replace('partitionId=17', 'partitionId=x')}",
        r"partitionId is not an integer",
    ),
    (
        "All migration tasks have been completed. (repartitionTime=<date>, plannedMig",
        r"MigrationStats text is truncated",
    ),
    (
        "All migration tasks have been completed. (plannedMigrations=1, completedMigrations=1)",
        r"lacks remainingMigrations",
    ),
    (
        "All migration tasks have been completed. (plannedMigrations=many, completedMigrations=1, "
        "remainingMigrations=0)",
        r"plannedMigrations is not an integer",
    ),
    ("Event: PartitionLostEventImpl{partitionId=3, lostBack", r"PartitionLostEventImpl"),
    ("Changing cluster state from ClusterState{state=ACTIVE, lo", r"cluster state change"),
]

FAMILIES: dict[str, list[Case]] = {
    "member lists (§2)": MEMBER_LISTS,
    "removals, lifecycle, banner (§3, §11)": REMOVALS_AND_LIFECYCLE,
    "suspicion (§4)": SUSPICION,
    "mastership claim (§5)": MASTERSHIP,
    "split brain and merge (§6)": MERGE,
    "partition-table fetch (§7)": FETCH,
    "repartitioning and statistics (§9)": REPARTITIONING,
    "migrations (§8, §9)": MIGRATIONS,
    "migration failures (§9)": FAILURES,
    "partition loss and promotions (§10)": LOSS_AND_PROMOTION,
    "migration planner (§9)": PLANNER,
    "shutdown (§11)": SHUTDOWN,
    "cluster state (§12)": CLUSTER_STATE,
    "prose": PROSE,
}

#: every payload of these tests, for the KEYWORDS and the mutation tests
EXAMPLES: list[str] = [text for cases in FAMILIES.values() for text, _ in cases] + [
    text for text, _ in ERRORS
]


def family(name: str) -> Any:
    """Parametrize a test over the payloads of one family (ids are the payloads' beginnings)."""
    cases = FAMILIES[name]
    return pytest.mark.parametrize(
        ("text", "expected"), cases, ids=[repr(text[:50]) for text, _ in cases]
    )


@family("member lists (§2)")
def test_member_lists(text: str, expected: list[Event] | None) -> None:
    assert parse_payload(text, ORIGIN) == expected


@family("removals, lifecycle, banner (§3, §11)")
def test_removals_lifecycle_and_banner(text: str, expected: list[Event] | None) -> None:
    assert parse_payload(text, ORIGIN) == expected


@family("suspicion (§4)")
def test_suspicion(text: str, expected: list[Event] | None) -> None:
    assert parse_payload(text, ORIGIN) == expected


@family("mastership claim (§5)")
def test_mastership_claim(text: str, expected: list[Event] | None) -> None:
    assert parse_payload(text, ORIGIN) == expected


@family("split brain and merge (§6)")
def test_split_brain_and_merge(text: str, expected: list[Event] | None) -> None:
    assert parse_payload(text, ORIGIN) == expected


@family("partition-table fetch (§7)")
def test_partition_table_fetch(text: str, expected: list[Event] | None) -> None:
    assert parse_payload(text, ORIGIN) == expected


@family("repartitioning and statistics (§9)")
def test_repartitioning_and_statistics(text: str, expected: list[Event] | None) -> None:
    assert parse_payload(text, ORIGIN) == expected


@family("migrations (§8, §9)")
def test_migrations(text: str, expected: list[Event] | None) -> None:
    assert parse_payload(text, ORIGIN) == expected


@family("migration failures (§9)")
def test_migration_failures(text: str, expected: list[Event] | None) -> None:
    assert parse_payload(text, ORIGIN) == expected


@family("partition loss and promotions (§10)")
def test_partition_loss_and_promotions(text: str, expected: list[Event] | None) -> None:
    assert parse_payload(text, ORIGIN) == expected


@family("migration planner (§9)")
def test_migration_planner(text: str, expected: list[Event] | None) -> None:
    assert parse_payload(text, ORIGIN) == expected


@family("shutdown (§11)")
def test_shutdown(text: str, expected: list[Event] | None) -> None:
    assert parse_payload(text, ORIGIN) == expected


@family("cluster state (§12)")
def test_cluster_state(text: str, expected: list[Event] | None) -> None:
    assert parse_payload(text, ORIGIN) == expected


@family("prose")
def test_prose_and_other_lines_are_not_ours(text: str, expected: None) -> None:
    assert parse_payload(text, ORIGIN) is expected


@pytest.mark.parametrize(("text", "reason"), ERRORS, ids=[repr(t[:50]) for t, _ in ERRORS])
def test_malformed_and_truncated_payloads_raise_payload_errors(text: str, reason: str) -> None:
    with pytest.raises(PayloadError, match=reason) as caught:
        parse_payload(text, ORIGIN)
    assert caught.value.reason == str(caught.value)


# --- details --------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "block"),
    [
        ("hz_05.log", HZ05_LIST),
        ("hz_06.log", HZ06_LIST),
        ("hz_08.log", HZ08_LIST),
        ("hz_28.log", HZ28_LIST),
    ],
)
def test_the_member_lists_are_verbatim_from_the_logs(name: str, block: str) -> None:
    path = LOGS / name
    assert block in path.read_text(encoding="utf-8")


def test_events_carry_the_origin() -> None:
    [ev] = parse_payload(HZ05_LIST, ORIGIN) or []
    assert (ev.member, ev.source, ev.order) == (ME, Source("member.log", 42), 7)
    [ev] = parse_payload("Partition balance is ok, no need to repartition.", UNKNOWN) or []
    assert (ev.member, ev.source, ev.order) == ("", Source("member.log", 42), None)


def test_an_unknown_logging_member_is_read_from_the_payload() -> None:
    """The ` this` member of a list, the address that starts a lifecycle or merge sentence."""
    assert [ev.member for ev in parse_payload(HZ06_LIST, UNKNOWN) or []] == ["<ip>:<portA>"]
    assert [ev.member for ev in parse_payload(HZ28_LIST, UNKNOWN) or []] == ["10.244.37.2:5701"]
    assert [ev.member for ev in parse_payload(NO_UUIDS, UNKNOWN) or []] == ["10.0.0.1:5701"]
    lifecycle = parse_payload("[<ip>]:<portB> is STARTING", UNKNOWN) or []
    assert [ev.member for ev in lifecycle] == ["<ip>:<portB>"]
    merge = parse_payload("[10.0.0.9]:5701 is merging [tcp/ip] to [10.0.0.5]:5701", UNKNOWN) or []
    assert [ev.member for ev in merge] == ["10.0.0.9:5701"]


def test_a_list_no_member_can_be_named_for_has_the_unknown_member() -> None:
    """No logging member and no ` this` marker: `UNKNOWN_MEMBER`, which no spec judges."""
    bare = f"Members {{size:2, ver:9}} [\n\tMember [10.0.0.1]:5701 - {U1}\n" \
           f"\tMember [10.0.0.2]:5701 - {U2}\n]"
    [ev] = parse_payload(bare, UNKNOWN) or []
    assert isinstance(ev, MemberListInstalled)
    assert (ev.member, ev.version, ev.master) == (UNKNOWN_MEMBER, 9, "10.0.0.1:5701")


def test_declared_size() -> None:
    assert declared_size(HZ05_LIST) == 2
    assert declared_size(HZ28_LIST) == 2
    assert declared_size(WRONG_SIZE) == 3
    assert declared_size("\n\n" + HZ08_LIST) == 1
    assert declared_size(CP_GROUP) is None
    assert declared_size("Repartitioning cluster data. Migration tasks count: 3") is None


def test_real_single_line_records_parse_cleanly() -> None:
    """Every one-line record of the real excerpts gives None or events, never an error."""
    prefix = re.compile(r"(?:\[[^\]\s]+\]:\S+|\[LOCAL\]) \[[^\]]*\] \[[^\]]*\] ?(.*)$")
    seen: list[str] = []
    for path in sorted(LOGS.glob("*.log")):
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            m = prefix.search(line)
            if m is None:
                continue
            events = parse_payload(m[1], Origin("", path.name, number))
            if events is not None:
                assert any(k in m[1] for k in KEYWORDS)
                seen.extend(ev.type for ev in events)
    assert seen.count("member_started") == 4  # hz_04, hz_05, hz_07, hz_28
    assert seen.count("repartitioning") == 4  # hz_06, hz_08 (balance ok), hz_11, hz_17
    assert seen.count("partition_table_fetch") == 2  # hz_17
    assert {"member_removed", "migrations_completed", "shutdown_request_handled"} <= set(seen)


# --- KEYWORDS and robustness ----------------------------------------------------------------------


def test_keywords_are_few_and_selective() -> None:
    assert 0 < len(KEYWORDS) < 30
    assert all(isinstance(k, str) and len(k) >= 5 for k in KEYWORDS)


def test_every_recognised_example_contains_a_keyword() -> None:
    recognised = 0
    for text in EXAMPLES:
        try:
            events = parse_payload(text, ORIGIN)
        except PayloadError:
            continue
        if events is not None:
            recognised += 1
            assert any(k in text for k in KEYWORDS), text
    assert recognised > 80


def _check(text: str) -> None:
    """The contract: None, a list of events, or a PayloadError with a reason (never the internal
    last-resort one); and anything recognised contains a keyword."""
    try:
        events = parse_payload(text, ORIGIN)
    except PayloadError as exc:
        assert exc.reason and "internal error" not in exc.reason, exc.reason
        return
    if events is not None:
        assert all(isinstance(ev, Event) for ev in events)
        assert any(k in text for k in KEYWORDS), text


@settings(max_examples=300, deadline=None)
@given(st.text())
def test_arbitrary_text_never_raises_anything_else(text: str) -> None:
    _check(text)


_EDIT = st.tuples(
    st.sampled_from(["delete", "duplicate", "replace"]),
    st.floats(min_value=0, max_value=1, exclude_max=True),
    st.integers(min_value=1, max_value=12),
    st.text(min_size=1, max_size=3, alphabet=st.sampled_from(list(" ,{}[]=:-\n\tMx0.<>"))),
)


def _mutate(text: str, edits: list[tuple[str, float, int, str]]) -> str:
    """Delete, duplicate or replace a few characters at random positions."""
    for kind, where, length, replacement in edits:
        at = int(where * (len(text) + 1))
        if kind == "delete":
            text = text[:at] + text[at + length :]
        elif kind == "duplicate":
            text = text[:at] + text[at : at + length] + text[at:]
        else:
            text = text[:at] + replacement + text[at + len(replacement) :]
    return text


@settings(max_examples=500, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.sampled_from(EXAMPLES), st.lists(_EDIT, min_size=1, max_size=4))
def test_mutated_examples_never_raise_anything_else(
    text: str, edits: list[tuple[str, float, int, str]]
) -> None:
    _check(_mutate(text, edits))


@pytest.mark.parametrize(
    "text",
    [
        "Members {size:2, ver:4} [" + "\n\tMember [10.0.0.1]:5701 - x" * 20000,
        "Starting Migration: MigrationInfo{" + "{" * 50000,
        "Starting Migration: MigrationInfo{a=" + "[" * 50000,
        "Local MembersView{version=1, members=" + "[" * 20000 + "]" * 20000 + "}",
        "x" * 1_000_000 + "PartitionLostEventImpl{",
        "All migration tasks have been completed. (" + "a=b," * 50000 + ")",
        "\x00\udcff" * 1000,
    ],
    ids=["long list", "braces", "brackets", "nested lists", "long line", "many stats", "binary"],
)
def test_huge_and_unbalanced_input(text: str) -> None:
    _check(text)


def _copy(members: list[tuple[str, str]], this: int | None, flags: str = " this") -> str:
    """A list as member `this` prints it (``ClusterServiceImpl.printMemberList``): its own line
    ends in `` this``."""
    lines = [f"\tMember [{h}]:5701 - {u}{flags if i == this else ''}"
             for i, (h, u) in enumerate(members)]
    return f"Members {{size:{len(members)}, ver:9}} [\n" + "\n".join(lines) + "\n]"


def test_each_copy_of_a_member_list_gives_its_own_member_from_one_parse() -> None:
    """Every member prints each list, with `` this`` on its own line: the copies are parsed
    once, share their member tuples, and each names its own member when the record does not."""
    hosts = [(f"10.1.0.{i}", f"00000000-0000-0000-0000-00000000000{i}") for i in range(1, 5)]
    addresses = tuple(f"{h}:5701" for h, _ in hosts)
    made = []
    for this in (0, 2, 3, None, 1):
        [ev] = parse_payload(_copy(hosts, this), UNKNOWN) or []
        assert isinstance(ev, MemberListInstalled)
        assert ev.member == (addresses[this] if this is not None else "")
        assert (ev.version, ev.members, ev.master) == (9, addresses, addresses[0])
        assert ev.uuids == tuple(u for _, u in hosts)
        made.append(ev)
    assert all(ev.members is made[0].members for ev in made)
    [lite] = parse_payload(_copy(hosts, 2, " this lite"), UNKNOWN) or []
    assert lite.member == addresses[2] and lite.members == addresses
    # ``this`` elsewhere (a host name) or twice: the copy is read on its own, and alike
    named = [("this.example", "u-1"), ("10.1.0.2", "u-2")]
    [ev] = parse_payload(_copy(named, 1), UNKNOWN) or []
    assert (ev.member, ev.members) == ("10.1.0.2:5701", ("this.example:5701", "10.1.0.2:5701"))
    twice = _copy(hosts, 1).replace(f"{hosts[3][1]}\n", f"{hosts[3][1]} this\n")
    assert [e.member for e in parse_payload(twice, UNKNOWN) or []] == [addresses[1]]
    [ev] = parse_payload(_copy(hosts, 3), ORIGIN) or []
    assert ev.member == ME  # the record's member first


def _outcome(parse: Callable[[], list[Event] | None]) -> object:
    try:
        return parse()
    except PayloadError as exc:
        return exc.reason


_LIST_COPIES = [t for t in EXAMPLES if t.startswith("Members")] + [
    _copy([(f"10.1.0.{i}", f"u-{i}") for i in range(3)], this) for this in (0, 2, None)] + [
    _copy([("höst.example", "u-ü"), ("10.1.0.2", "u-2")], this) for this in (0, 1)]


@settings(max_examples=500, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.sampled_from(_LIST_COPIES), st.lists(_EDIT, max_size=4))
def test_a_member_list_in_bytes_is_read_as_its_text_is(
    text: str, edits: list[tuple[str, float, int, str]]
) -> None:
    """The scanner's member lists in bytes (payload.parse_member_list, which decodes a list only
    the first time one of its copies is seen) give what their text gives, a copy's own member
    (its ``this`` line, non-ASCII ones too) and errors included."""
    text = _mutate(text, edits).strip()
    for origin in (ORIGIN, UNKNOWN):
        assert _outcome(lambda o=origin: payload.parse_member_list(text.encode(), o)) \
            == _outcome(lambda o=origin: parse_payload(text, o))


def test_the_copies_of_a_list_with_non_ascii_lines_are_parsed_once() -> None:
    hosts = [("höst.example", "u-ü"), ("10.1.0.2", "u-2"), ("10.1.0.3", "u-3")]
    made = [payload.parse_member_list(_copy(hosts, this).encode(), UNKNOWN) for this in (0, 1)]
    [first], [second] = made[0] or [], made[1] or []
    assert (first.member, second.member) == ("höst.example:5701", "10.1.0.2:5701")
    assert second.members is first.members


def test_the_member_lists_kept_are_bounded_in_bytes() -> None:
    recent = payload._Recent(100, max_bytes=1000)
    for i in range(10):
        recent.put(bytes([i]) * 300, i)
    assert list(recent.values.values()) == [7, 8, 9] and recent.key_bytes == 900
    assert recent.get(bytes([8]) * 300) == 8 and recent.get(b"\x01" * 300) is None


_MIGRATION_INFOS = sorted({t[t.index("MigrationInfo{"):].strip() for t in EXAMPLES
                           if "MigrationInfo{" in t})


@settings(max_examples=500, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.sampled_from(_MIGRATION_INFOS), st.lists(_EDIT, max_size=4))
def test_a_flat_migration_info_is_read_as_the_grammar_reads_it(
    text: str, edits: list[tuple[str, float, int, str]]
) -> None:
    """A ``MigrationInfo{...}`` of plain, address and replica fields is read with the grammar's
    terminals alone (payload._flat_migration): what the parser makes of it, or left to it."""
    text = _mutate(text, edits)
    flat = payload._flat_migration(text)
    if flat is not None:
        assert flat == payload._parse(text, "lead_object", "MigrationInfo")


def test_the_flat_reading_covers_the_usual_migration_infos() -> None:
    flat = [t for t in _MIGRATION_INFOS if payload._flat_migration(t) is not None]
    assert len(flat) >= len(_MIGRATION_INFOS) - 2


_MEMBER_LISTS = [t for t in EXAMPLES if t.startswith("Members")]


@settings(max_examples=500, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.sampled_from(_MEMBER_LISTS), st.lists(_EDIT, max_size=4))
def test_a_versioned_member_list_is_read_as_the_grammar_reads_it(
    text: str, edits: list[tuple[str, float, int, str]]
) -> None:
    """A versioned member list is read with the grammar's terminals alone
    (payload._flat_list): what the parser makes of it, or left to it."""
    text = _mutate(text, edits)
    flat = payload._flat_list(text)
    if flat is not None:
        assert flat == payload._parse(text, "member_list", "member list")


def test_the_flat_reading_covers_every_versioned_member_list_that_parses() -> None:
    for text in _MEMBER_LISTS:
        try:
            payload._parse(text, "member_list", "member list")
        except PayloadError:
            continue
        if text.startswith("Members {size"):
            assert payload._flat_list(text) is not None, text


_STATS = sorted({t[t.index("(") + 1:t.rindex(")")] for t in EXAMPLES
                 if "plannedMigrations" in t and ")" in t})


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.sampled_from(_STATS), st.lists(_EDIT, max_size=4))
def test_migration_statistics_are_read_as_the_grammar_reads_them(
    text: str, edits: list[tuple[str, float, int, str]]
) -> None:
    """``MigrationStats`` text is read with the grammar's STAT terminal alone
    (payload._flat_stats): what the parser makes of it, or left to it."""
    text = _mutate(text, edits)
    flat = payload._flat_stats(text)
    if flat is not None:
        assert flat == payload._parse(text, "stats", "MigrationStats text")
    assert _STATS and all(payload._flat_stats(t) is not None for t in _STATS)

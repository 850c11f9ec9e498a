"""What real clusters' logs taught the parser and the monitors (`partsafe lab` runs of Hazelcast
3.12.2, 4.2.8 and 5.5.0): each misreading, with a test where the real wording is read right
and one where the rule it touches still catches its violation.

The records below are the shape Hazelcast 3.12.2 printed in the lab (java.util.logging's
two-line record, the level on the second line), addresses and UUIDs shortened.
"""

from __future__ import annotations

import json
from pathlib import Path

from partsafe.checker.validation.local import validate
from partsafe.traces.scanner import Scanner

A, B, C = "127.0.0.1:5701", "127.0.0.1:5702", "127.0.0.1:5703"
UUID = {A: "1753f331-78ae-4a7f-95e0-90f72254fd08", B: "10a23ebe-8438-4b79-81b5-868257468b79",
        C: "8e117be8-95da-409d-92d7-70c7cc071dab"}


def _b(address: str) -> str:
    host, port = address.rsplit(":", 1)
    return f"[{host}]:{port}"


def jul(second: int, logger: str, level: str, member: str, message: str) -> str:
    """One java.util.logging record as Hazelcast writes it (SimpleFormatter's default)."""
    return (f"Dec 02, 2026 12:05:{second:02d} AM com.hazelcast.{logger}\n"
            f"{level}: {_b(member)} [lab] [3.12.2] {message}\n")


def member_list(second: int, member: str, version: int, members: list[str],
                lead: str = "") -> str:
    """A member list as ``ClusterService`` prints it; `lead`, the message before it on the record
    line (``Sending member list to …``, FINE, on ``MembershipManager``)."""
    lines = "".join(f"\tMember {_b(m)} - {UUID[m]}{' this' if m == member else ''}\n"
                    for m in members)
    logger = ("internal.cluster.impl.MembershipManager" if lead
              else "internal.cluster.ClusterService")
    level = "FINE" if lead else "INFO"
    return (f"Dec 02, 2026 12:05:{second:02d} AM com.hazelcast.{logger}\n"
            f"{level}: {_b(member)} [lab] [3.12.2] {lead}\n\n"
            f"Members {{size:{len(members)}, ver:{version}}} [\n{lines}]\n\n")


def _report(tmp_path: Path, files: dict[str, str]) -> dict:
    for name, text in files.items():
        (tmp_path / name).write_text(text)
    return validate([str(tmp_path / n) for n in files]).as_dict()


def _specs(doc: dict) -> list[str]:
    return sorted({v["spec"] for v in doc["violations"]})


# --- 1. the partition service's removal -----------------------------------------------------------


def test_the_partition_services_fine_removal_is_no_removal(tmp_path: Path) -> None:
    """3.x's ``InternalPartitionServiceImpl.memberRemoved`` prints ``Removing Member …`` at FINE
    on every member; only ``MembershipManager``'s INFO line is the master's decision."""
    text = (member_list(1, B, 3, [A, B, C])
            + jul(5, "internal.partition.InternalPartitionService", "FINE", B,
                  f"Removing Member {_b(A)} - {UUID[A]}"))
    doc = _report(tmp_path, {"b.log": text})
    assert doc["result"] == "ok" and doc["malformed"] == []
    assert doc["lines"] == doc["parsed_lines"] + doc["ignored_lines"]
    # the same words at INFO, on a member that is not the master: MEM-MASTER-ONLY
    text = (member_list(1, B, 3, [A, B, C])
            + jul(5, "internal.cluster.impl.MembershipManager", "INFO", B,
                  f"Removing Member {_b(C)} - {UUID[C]}"))
    assert _specs(_report(tmp_path, {"b.log": text})) == ["MEM-MASTER-ONLY"]


# --- 2. the master's re-sent member list ----------------------------------------------------------


def test_a_member_list_sent_again_is_no_second_install(tmp_path: Path) -> None:
    text = (member_list(1, B, 4, [B, C])
            + member_list(2, B, 4, [B, C], lead="Sending member list to the non-master nodes: ")
            + member_list(3, B, 4, [B, C], lead=f"Sending member list to member: {_b(C)} "))
    doc = _report(tmp_path, {"b.log": text})
    assert doc["result"] == "ok" and doc["malformed"] == []
    assert doc["lines"] == doc["parsed_lines"] + doc["ignored_lines"]
    events = list(Scanner().scan(tmp_path / "b.log"))
    assert [e.TYPE for e in events] == ["member_list_installed"]
    # a second list installed under the same version: MEM-VERSION still
    text = member_list(1, B, 4, [B, C]) + member_list(2, B, 4, [B, C])
    assert _specs(_report(tmp_path, {"b.log": text})) == ["MEM-VERSION"]


def test_a_member_list_of_a_two_line_record_takes_the_time_of_its_first_line(
        tmp_path: Path) -> None:
    (tmp_path / "b.log").write_text(member_list(7, B, 4, [B, C]))
    [event] = Scanner().scan(tmp_path / "b.log")
    assert event.order is not None and event.order % 60_000 == 7_000


# --- 3. the table versions of applied completed migrations ----------------------------------------


def _migration(partition: int, source: str, destination: str, planned: int,
               uuid: str = "6c26cac2-69c6-4539-8329-920701c9f8fe") -> str:
    return (f"MigrationInfo{{uuid={uuid}, partitionId={partition}, source={_b(source)} - "
            f"{UUID[source]}, sourceCurrentReplicaIndex=0, sourceNewReplicaIndex=1, "
            f"destination={_b(destination)} - {UUID[destination]}, "
            "destinationCurrentReplicaIndex=-1, destinationNewReplicaIndex=0, "
            f"master={_b(A)}, initialPartitionVersion={planned}, partitionVersionIncrement=2, "
            "processing=true, status=ACTIVE}")


def _source_start(second: int, member: str, info: str, namespace: str) -> str:
    return jul(second, "internal.partition.impl.MigrationManager", "FINEST", member,
               f"Invoking MigrationOperation for namespaces [{namespace}] and {info}, "
               "lastFragment: false")


def test_applied_completed_migrations_carry_the_table_version(tmp_path: Path) -> None:
    """A source learns most table versions from ``Applied completed migrations with partition
    state version: V`` (3.9 to 3.12); one migration is started once, whatever its namespaces."""
    info = _migration(1, B, C, 2177)
    base = (member_list(1, B, 3, [A, B, C])
            + jul(2, "internal.partition.InternalPartitionService", "FINE", B,
                  "Applied partition state update with version: 2175"))
    text = (base + jul(3, "internal.partition.InternalPartitionService", "FINE", B,
                       "Applied completed migrations with partition state version: 2177")
            + _source_start(4, B, info, "NonFragmentedServiceNamespace")
            + _source_start(4, B, info, "DefaultObjectNamespace{service='hz:impl:mapService', "
                                        "objectName=lab}"))
    doc = _report(tmp_path, {"b.log": text})
    assert doc["result"] == "ok" and doc["malformed"] == []
    assert "MIG-REJECT-STALE" in doc["specs"]
    # without the completed migrations the source's table is stale: one violation, not one a
    # namespace
    text = (base + _source_start(4, B, info, "NonFragmentedServiceNamespace")
            + _source_start(4, B, info, "DefaultObjectNamespace{service='hz:impl:mapService', "
                                        "objectName=lab}"))
    doc = _report(tmp_path, {"b.log": text})
    assert [v["spec"] for v in doc["violations"]] == ["MIG-REJECT-STALE"]
    assert "planned on version 2177 with version 2175" in doc["violations"][0]["message"]


def test_the_master_as_source_has_the_version_it_stamps(tmp_path: Path) -> None:
    """The master stamps a migration with its own version as it starts it, and raises its
    version on each commit without printing it: as the migration's source it is never stale."""
    info = _migration(1, A, C, 2177)
    text = (member_list(1, A, 3, [A, B, C])
            + jul(2, "internal.partition.InternalPartitionService", "FINE", A,
                  "Publishing partition state, version: 2175")
            + jul(2, "internal.partition.InternalPartitionService", "FINE", A,
                  "Applied completed migrations with partition state version: 2175")
            + jul(3, "internal.partition.impl.MigrationManager", "FINE", A,
                  f"Starting Migration: {info}")
            + _source_start(3, A, info, "NonFragmentedServiceNamespace"))
    assert _report(tmp_path, {"a.log": text})["violations"] == []


# --- 4, 5. 3.12's statistics and its balance wording --------------------------------------------


def test_the_312_statistics_and_balance_lines_are_read(tmp_path: Path) -> None:
    text = (member_list(1, B, 2, [B, C])
            + jul(2, "internal.partition.impl.MigrationManager", "INFO", B,
                  "Partition balance is ok, no need to re-partition cluster data... ")
            + jul(3, "internal.partition.impl.MigrationThread", "INFO", B,
                  "All migration tasks have been completed. (lastRepartitionTime=Wed Dec 02 "
                  "00:05:57 UTC 2026, completedMigrations=180, totalCompletedMigrations=180, "
                  "elapsedMigrationOperationTime=1059ms, totalElapsedMigrationOperationTime="
                  "1059ms, elapsedDestinationCommitTime=119ms, totalElapsedDestinationCommit"
                  "Time=119ms, elapsedMigrationTime=1224ms, totalElapsedMigrationTime=1224ms)")
            + jul(4, "internal.partition.InternalPartitionService", "INFO", B,
                  "Remaining migration tasks in queue => 169. (lastRepartitionTime=Wed Dec 02 "
                  "00:05:57 UTC 2026, completedMigrations=34, totalCompletedMigrations=34, "
                  "elapsedMigrationOperationTime=10ms, totalElapsedMigrationOperationTime=10ms,"
                  " elapsedDestinationCommitTime=1ms, totalElapsedDestinationCommitTime=1ms, "
                  "elapsedMigrationTime=12ms, totalElapsedMigrationTime=12ms)"))
    doc = _report(tmp_path, {"b.log": text})
    assert doc["malformed"] == [] and doc["result"] == "ok"
    assert doc["lines"] == doc["parsed_lines"] + doc["ignored_lines"]
    events = [e.TYPE for e in Scanner().scan(tmp_path / "b.log")]
    assert events == ["member_list_installed", "repartitioning"]
    # 3.12 counts no planned migrations: MIG-STATS has no evidence, and says what it needs
    assert "MIG-STATS" in doc["no_evidence"] and "MIG-STATS" not in doc["specs"]
    assert "plannedMigrations" in doc["not_judged"]["MIG-STATS"] or \
        "Repartitioning" in doc["not_judged"]["MIG-STATS"]


def test_later_statistics_still_judge_mig_stats(tmp_path: Path) -> None:
    text = (member_list(1, B, 2, [B, C])
            + jul(3, "internal.partition.impl.MigrationManager", "INFO", B,
                  "All migration tasks have been completed. (repartitionTime=Wed Dec 02 "
                  "00:05:57 UTC 2026, plannedMigrations=10, completedMigrations=9, "
                  "remainingMigrations=0, totalCompletedMigrations=9)"))
    assert _specs(_report(tmp_path, {"b.log": text})) == ["MIG-STATS"]


# --- 10. one member's log twice ----------------------------------------------------------------


def test_a_log_read_twice_is_read_once(tmp_path: Path) -> None:
    text = member_list(1, B, 3, [A, B, C]) + member_list(2, B, 4, [B, C])
    (tmp_path / "bundle").mkdir()
    (tmp_path / "bundle" / "b.log").write_text(text)
    (tmp_path / "bundle" / "b-copy.log").write_text(text)
    doc = validate([str(tmp_path / "bundle")]).as_dict()
    assert doc["result"] == "ok", json.dumps(doc["violations"])
    skipped = [i for i in doc["inputs"] if i["status"] == "skipped"]
    assert len(skipped) == 1 and "the same bytes as" in skipped[0]["reason"]
    # a different log of the same member that goes back in version is still a violation
    (tmp_path / "bundle" / "b-copy.log").write_text(member_list(3, B, 2, [B, C]))
    assert _specs(validate([str(tmp_path / "bundle")]).as_dict()) == ["MEM-VERSION"]

"""The specs judged on Hazelcast logs from their participants' and the claimant's lines: for each,
a log that breaks it (`partsafe validate` exits 1 naming the spec at the line that shows it), one
that holds, and the same log at INFO (its FINE and FINEST lines absent), which judges nothing of
it; then the explorer's counterexamples exported as log text, where a log can express them.

Every line is written in the distribution's log4j2 layout (``%d [%5p] [%t] [%c{.1}]: %m%n``,
java.util.logging's FINE as DEBUG and FINEST as TRACE, as ``Log4j2Factory`` maps them), in the
wording of the Hazelcast class named in a comment above it.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from partsafe.checker.cli.main import main
from partsafe.specs import forms

A, B, C, D, E = (f"10.0.0.{i}:5701" for i in range(1, 6))
U = {A: "ad55fb38-9dd0-47a5-ab5b-504916c9e85f", B: "3f234cd8-050d-4ed2-9615-51b3c2593f26",
     C: "7fb07cd0-5a46-422d-801d-05e6da0b9a63", D: "2f8cbb60-1823-4fba-8d13-2fa9dbf89822",
     E: "c7486903-f06c-4d98-872c-530e78307320"}
LEVELS = {"FINE": "DEBUG", "FINEST": "TRACE", "WARNING": "WARN"}
LOGGERS = {"MigrationManager": "c.h.i.p.i.MigrationManager",
           "InternalPartitionService": "c.h.i.p.InternalPartitionService",
           "MigrationRequestOperation": "c.h.i.p.o.MigrationRequestOperation",
           "MigrationOperation": "c.h.i.p.o.MigrationOperation",
           "MembershipManager": "c.h.i.c.i.MembershipManager",
           "ClusterService": "c.h.i.c.ClusterService",
           "LifecycleService": "c.h.c.LifecycleService"}


def at(ts: str, me: str, level: str, logger: str, message: str) -> str:
    """One record in the distribution's rolling-file layout, after the member prefix."""
    host, port = me.rsplit(":", 1)
    return (f"2023-11-14 {ts} [{LEVELS.get(level, level):>5}] [hz.node.{logger.lower()}] "
            f"[{LOGGERS[logger]}]: [{host}]:{port} [dev] [5.3.0] {message}\n")


def replica(m: str) -> str:
    """``PartitionReplica.toString``."""
    host, port = m.rsplit(":", 1)
    return f"[{host}]:{port} - {U[m]}"


def member(m: str) -> str:
    return f"Member {replica(m)}"


def info(uid: str, partition: int, source: str, destination: str, status: str = "ACTIVE",
         initial: int = 3, master: str = A) -> str:
    """``MigrationInfo.toString`` (5.x) of a migration of the owner `source` to `destination`."""
    host, port = master.rsplit(":", 1)
    return (f"MigrationInfo{{uuid={uid}, partitionId={partition}, source={replica(source)}, "
            "sourceCurrentReplicaIndex=0, sourceNewReplicaIndex=-1, "
            f"destination={replica(destination)}, destinationCurrentReplicaIndex=-1, "
            f"destinationNewReplicaIndex=0, master=[{host}]:{port}, initialPartitionVersion="
            f"{initial}, partitionVersionIncrement=2, status={status}}}")


def members(ts: str, me: str, version: int, listed: list[str]) -> str:
    """``ClusterServiceImpl.printMemberList``: the prefix line, then the list."""
    rows = "".join(f"\t{member(m)}{' this' if m == me else ''}\n" for m in listed)
    return at(ts, me, "INFO", "ClusterService",
              f"\n\nMembers {{size:{len(listed)}, ver:{version}}} [\n{rows}]\n")


def view(version: int, listed: list[str]) -> str:
    """``MembersView.toString``."""
    infos = ", ".join(f"MemberInfo{{address=[{m.rsplit(':', 1)[0]}]:5701, uuid={U[m]}, "
                      f"cpMemberUUID=null, liteMember=false, memberListJoinVersion={i + 1}}}"
                      for i, m in enumerate(listed))
    return f"MembersView{{version={version}, members=[{infos}]}}"


# MigrationManager (FINE): the master starts a migration, its operation answers, the destination
# answers the commit, the plan task is done with it
def starting(ts: str, uid: str, p: int, dst: str) -> str:
    return at(ts, A, "FINE", "MigrationManager", f"Starting Migration: {info(uid, p, A, dst)}")


def done(ts: str, uid: str, p: int, dst: str) -> str:
    return at(ts, A, "FINE", "MigrationManager",
              f"AsyncMigrationTask completed: {info(uid, p, A, dst, 'SUCCESS')}")


def commit_result(ts: str, uid: str, p: int, dst: str, result: str = "true") -> str:
    return at(ts, A, "FINE", "MigrationManager", f"Migration commit result {result} from "
              f"{replica(dst)} for {info(uid, p, A, dst, 'SUCCESS')}")


# MigrationManager.finalizeMigration (FINE), on the source or the destination
def finalizing(ts: str, me: str, uid: str, p: int, src: str, dst: str, status: str) -> str:
    return at(ts, me, "FINE", "MigrationManager",
              f"Finalizing {info(uid, p, src, dst, status)}")


# MigrationRequestOperation (FINEST), on the source
def invoking(ts: str, me: str, uid: str, p: int, dst: str) -> str:
    return at(ts, me, "FINEST", "MigrationRequestOperation",
              "Invoking MigrationOperation for namespaces [DistributedObjectNamespace{service="
              f"'hz:impl:mapService', objectName='default'}}] and {info(uid, p, me, dst)}, "
              "firstFragment: true, lastFragment: true")


# MigrationOperation (FINEST), on the destination
def installed(ts: str, me: str, uid: str, p: int, src: str) -> str:
    return at(ts, me, "FINEST", "MigrationOperation",
              f"ReplicaVersions are set after migration. {info(uid, p, src, me)}, namespace="
              "DistributedObjectNamespace{service='hz:impl:mapService', objectName='default'}, "
              "replicaVersions=[1, 0, 0, 0, 0, 0]")


def at_info(text: str) -> str:
    """The same log at INFO: its DEBUG (FINE) and TRACE (FINEST) records left out."""
    return "".join(r for r in text.splitlines(keepends=True)
                   if "[DEBUG]" not in r and "[TRACE]" not in r)


def validate(tmp_path: Path, files: dict[str, str], name: str) -> tuple[int, dict]:
    folder = tmp_path / name
    folder.mkdir(parents=True)
    for file, text in files.items():
        (folder / file).write_text(text)
    result = CliRunner().invoke(main, ["validate", str(folder), "--json"])
    assert "Traceback" not in result.output, result.output
    doc = json.loads(result.stdout)
    assert doc["malformed"] == [], doc["malformed"]
    return result.exit_code, doc


def line_of(text: str, shown: str) -> int:
    """The number of the last line of `text` that holds `shown`."""
    return max(i for i, line in enumerate(text.splitlines(), 1) if shown in line)


def breaks(tmp_path: Path, spec: str, files: dict[str, str], where: tuple[str, str],
           fine: bool = True) -> None:
    """The log breaks `spec` (exit 1) at the last line of file `where[0]` that shows `where[1]`,
    and, when its evidence is at FINE or FINEST (`fine`), its INFO form judges nothing (exit 0:
    its other specs hold, or 3: nothing is judged at all)."""
    code, doc = validate(tmp_path, files, "broken")
    assert code == 1, doc
    found = [v for v in doc["violations"] if v["spec"] == spec]
    assert found, doc["violations"]
    last = found[0]["events"][-1]
    file, shown = where
    assert (Path(last["file"]).name, last["line"]) == (file, line_of(files[file], shown))
    if fine:
        code, doc = validate(tmp_path, {f: at_info(t) for f, t in files.items()}, "info")
        assert code in (0, 3) and not doc["violations"] and not doc["possible_violations"], doc


def holds(tmp_path: Path, files: dict[str, str]) -> None:
    code, doc = validate(tmp_path, files, "held")
    assert code == 0 and doc["result"] == "ok", doc
    assert not doc["possible_violations"], doc["possible_violations"]


# --- the master's schedule: PAR-ONE-PER-PARTITION, PAR-MAX-PARALLEL --------------------------


def test_one_migration_per_partition(tmp_path: Path) -> None:
    first = starting("10:00:00,000", "m1", 7, B)
    second = starting("10:00:01,000", "m2", 7, C)
    breaks(tmp_path, "PAR-ONE-PER-PARTITION", {"a.log": first + second},
           ("a.log", "m2"))
    holds(tmp_path, {"a.log": first + commit_result("10:00:00,500", "m1", 7, B)
                     + done("10:00:00,600", "m1", 7, B) + starting("10:00:01,000", "m2", 7, C)})


def test_at_most_max_parallel_migrations_per_member(tmp_path: Path) -> None:
    ten = "".join(starting(f"10:00:00,{p:03d}", f"m{p}", p, B) for p in range(10))
    breaks(tmp_path, "PAR-MAX-PARALLEL", {"a.log": ten + starting("10:00:01,000", "m10", 10, B)},
           ("a.log", "uuid=m10,"))
    holds(tmp_path, {"a.log": ten + done("10:00:00,500", "m3", 3, B)
                     + starting("10:00:01,000", "m10", 10, B)})


def test_a_failed_migration_leaves_the_masters_schedule(tmp_path: Path) -> None:
    # MigrationManager (WARNING): the operation failed, the master rolls the migration back
    failed = at("10:00:00,500", A, "WARNING", "MigrationManager",
                f"Migration failed: {info('m1', 7, A, B)}")
    holds(tmp_path, {"a.log": starting("10:00:00,000", "m1", 7, B) + failed
                     + starting("10:00:01,000", "m2", 7, C)})


# --- the participants: MIG-REJECT-STALE, MIG-ATOMIC, MIG-COMMIT-ORDER -----------------------


def test_a_source_refuses_a_migration_while_one_of_its_partition_is_undecided(
        tmp_path: Path) -> None:
    first = invoking("10:00:00,000", A, "m1", 7, B)
    breaks(tmp_path, "MIG-REJECT-STALE", {"a.log": first + invoking("10:00:01,000", A, "m2", 7, C)},
           ("a.log", "uuid=m2,"))
    decided = finalizing("10:00:00,500", A, "m1", 7, A, B, "SUCCESS")
    holds(tmp_path, {"a.log": first + decided + invoking("10:00:01,000", A, "m2", 7, C)})
    # 4.1: migrations of other partitions run in parallel
    holds(tmp_path / "x", {"a.log": first + invoking("10:00:01,000", A, "m2", 8, C)})


def test_a_destination_refuses_too(tmp_path: Path) -> None:
    first = installed("10:00:00,000", B, "m1", 7, A)
    second = installed("10:00:01,000", B, "m2", 7, C)
    breaks(tmp_path, "MIG-REJECT-STALE", {"b.log": first + second},
           ("b.log", "uuid=m2,"))


def test_the_participants_decide_alike(tmp_path: Path) -> None:
    source = finalizing("10:00:00,000", A, "m1", 7, A, B, "SUCCESS")
    loss = {"a.log": source, "b.log": finalizing("10:00:05,000", B, "m1", 7, A, B, "FAILED")}
    breaks(tmp_path, "MIG-ATOMIC", loss, ("b.log", "Finalizing"))
    holds(tmp_path, {"a.log": source,
                     "b.log": finalizing("09:59:55,000", B, "m1", 7, A, B, "SUCCESS")})


def test_a_destination_that_left_may_keep_its_commit(tmp_path: Path) -> None:
    """000 §2.1 step 4: the destination committed, then left (the master removes it, and the
    source's own list no longer names it) before the source rolled back: not a leak."""
    committed = finalizing("10:00:00,000", B, "m1", 7, C, B, "SUCCESS")
    rollback = finalizing("10:00:09,000", C, "m1", 7, C, B, "FAILED")
    leak = {"b.log": committed, "c.log": members("10:00:00,000", C, 3, [A, B, C]) + rollback}
    breaks(tmp_path, "MIG-ATOMIC", leak, ("c.log", "Finalizing"))
    removed = at("10:00:05,000", A, "INFO", "MembershipManager", f"Removing {member(B)}")
    holds(tmp_path, {"a.log": removed, "b.log": committed, "c.log": rollback})
    gone = members("10:00:06,000", C, 4, [A, C])
    holds(tmp_path / "x", {"b.log": committed, "c.log": gone + rollback})


def test_a_source_commits_after_its_master(tmp_path: Path) -> None:
    source = finalizing("10:00:01,000", A, "m1", 7, A, B, "SUCCESS")
    early = {"a.log": source + commit_result("10:00:02,000", "m1", 7, B)}
    breaks(tmp_path, "MIG-COMMIT-ORDER", early, ("a.log", "commit result"))
    holds(tmp_path, {"a.log": commit_result("10:00:01,000", "m1", 7, B) + source,
                     "b.log": finalizing("10:00:00,500", B, "m1", 7, A, B, "SUCCESS")})


def test_a_destination_commits_before_its_master(tmp_path: Path) -> None:
    late = {"a.log": commit_result("10:00:01,000", "m1", 7, B),
            "b.log": finalizing("10:00:05,000", B, "m1", 7, A, B, "SUCCESS")}
    breaks(tmp_path, "MIG-COMMIT-ORDER", late, ("b.log", "Finalizing"))


def test_a_destination_and_its_master_within_the_skew_bound_are_in_order(
        tmp_path: Path) -> None:
    """Stamped in one millisecond, the destination's commit and the master's may merge in either
    order; the master's line is the destination's answer, so the log proves the order."""
    holds(tmp_path, {"a.log": commit_result("10:00:01,000", "m1", 7, B),
                     "b.log": finalizing("10:00:01,000", B, "m1", 7, A, B, "SUCCESS")})


# --- the claims: MEM-CLAIM-ACCEPT, MEM-CLAIM-RESULT, MEM-CLAIM-DISCOVER -----------------------


def started(ts: str, me: str) -> str:
    host, port = me.rsplit(":", 1)
    return at(ts, me, "INFO", "LifecycleService", f"[{host}]:{port} is STARTING")


def suspected(ts: str, me: str, other: str) -> str:
    # MembershipManager (WARNING), on a member that is not the master
    return at(ts, me, "WARNING", "MembershipManager",
              f"{member(other)} is suspected to be dead for reason: No connection")


def accepted(ts: str, me: str, candidate: str, response: str) -> str:
    # ClusterServiceImpl.handleMastershipClaim (WARNING), on the accepting member
    host, port = candidate.rsplit(":", 1)
    return at(ts, me, "WARNING", "ClusterService",
              f"Mastership of [{host}]:{port} is accepted. Response: {response}")


def test_a_claim_is_accepted_only_past_every_older_member(tmp_path: Path) -> None:
    before = (started("10:00:00,000", D) + members("10:00:01,000", D, 5, [A, B, C, D])
              + suspected("10:00:02,000", D, A))
    accept = accepted("10:00:03,000", D, C, view(5, [C, D]))
    breaks(tmp_path, "MEM-CLAIM-ACCEPT", {"d.log": before + accept}, ("d.log", "is accepted"),
           fine=False)
    holds(tmp_path, {"d.log": before + suspected("10:00:02,500", D, B) + accept})


def test_an_acceptance_is_not_judged_before_the_members_start_is_seen(tmp_path: Path) -> None:
    """A log that starts mid-run may have missed a suspicion: without the member's ``is
    STARTING``, its acceptance is unknown."""
    holds(tmp_path, {"d.log": members("10:00:01,000", D, 5, [A, B, C, D])
                      + suspected("10:00:02,000", D, A)
                      + accepted("10:00:03,000", D, C, view(5, [C, D]))})


def claim(ts: str, me: str, local: str, suspects: list[str], ask: list[str]) -> str:
    # MembershipManager (INFO): the claim's start
    return at(ts, me, "INFO", "MembershipManager",
              f"Local {local} with suspected members: [{', '.join(map(member, suspects))}] and "
              f"initial addresses to ask: [{', '.join(map(member, ask))}]")


def more_recent(ts: str, me: str, sender: str, answer: str) -> str:
    # MembershipManager.fetchLatestMembersView (FINE)
    host, port = sender.rsplit(":", 1)
    return at(ts, me, "FINE", "MembershipManager",
              f"A more recent {answer} is received from [{host}]:{port}")


def claimed(ts: str, me: str, result: str) -> str:
    # MembershipManager (INFO)
    return at(ts, me, "INFO", "MembershipManager", f"Mastership is claimed with: {result}")


def test_a_claim_publishes_the_members_that_accepted_it(tmp_path: Path) -> None:
    start = (members("10:00:00,000", B, 4, [A, B, C, D]) + suspected("10:00:01,000", B, A)
             + claim("10:00:01,100", B, view(4, [A, B, C, D]), [A], [C, D])
             + more_recent("10:00:01,200", B, C, view(5, [A, B, C, D])))
    breaks(tmp_path, "MEM-CLAIM-RESULT",
           {"b.log": start + claimed("10:00:02,000", B, view(6, [B, D]))},
           ("b.log", "is claimed"))
    holds(tmp_path, {"b.log": start + claimed("10:00:02,000", B, view(6, [B, C, D]))})


def test_a_claim_asks_every_member_it_discovers(tmp_path: Path) -> None:
    start = (members("10:00:00,000", B, 4, [A, B, C]) + suspected("10:00:01,000", B, A)
             + claim("10:00:01,100", B, view(4, [A, B, C]), [A], [C])
             + more_recent("10:00:01,200", B, C, view(5, [A, B, C, E])))
    end = claimed("10:00:02,000", B, view(6, [B, C]))
    breaks(tmp_path, "MEM-CLAIM-DISCOVER", {"b.log": start + end}, ("b.log", "is claimed"))
    # MembershipManager.fetchMembersViewFromNewMembers (FINE)
    asked = at("10:00:01,300", B, "FINE", "MembershipManager",
               "Asking MembersView of [10.0.0.5]:5701")
    holds(tmp_path, {"b.log": start + asked + end})


# --- the partition tables: PT-MASTER-ONLY, PT-MOST-RECENT, PT-VERSION ------------------------


def partition(p: int, version: int, replicas: list[str | None]) -> str:
    """``AbstractInternalPartition.toString``: a line per replica that is set."""
    rows = "".join(f"\t{i}:{replica(r)}\n" for i, r in enumerate(replicas) if r is not None)
    return f"Partition {{ID: {p}, Version: {version}}} [\n{rows}]"


def test_one_partition_version_names_one_replica_array(tmp_path: Path) -> None:
    """The new master collects its members' tables (``FetchMostRecentPartitionTableTask``,
    WARNING, so at INFO too) and finds one partition version with two replica arrays."""
    def issue(received: str) -> str:
        return (at("10:00:00,000", B, "INFO", "InternalPartitionService",
                   "Fetching partition tables from cluster to determine the most recent one... "
                   "Local stamp: -5489131870946612355")
                + at("10:00:00,100", B, "WARNING", "InternalPartitionService",
                     "Issue while determining latest partition... Latest: "
                     f"{partition(5, 3, [A, B])}, Received: {received}"))

    code, doc = validate(tmp_path, {"b.log": issue(partition(5, 3, [B, C]))}, "broken")
    assert code == 1 and [(v["spec"], v["events"][-1]["line"]) for v in doc["violations"]] == [
        ("PT-MASTER-ONLY", 2)]
    # the same members under other UUIDs (a member that restarted): the same array by address
    other = partition(5, 3, [A, B]).replace(U[A], U[E])
    holds(tmp_path, {"b.log": issue(other)})


def test_a_master_publishes_the_most_recent_table(tmp_path: Path) -> None:
    """3.x (``InternalPartitionServiceImpl``, FINE): the master's table versions as it publishes
    them, a member's as it applies them."""
    def applied(ts: str, me: str, v: int) -> str:
        return at(ts, me, "FINE", "InternalPartitionService",
                  f"Applied partition state update with version: {v}")

    def published(ts: str, v: int) -> str:
        return at(ts, B, "FINE", "InternalPartitionService",
                  f"Publishing partition state, version: {v}")

    c = applied("10:00:00,000", C, 7)
    b = members("10:00:01,000", B, 6, [B, C])
    breaks(tmp_path, "PT-MOST-RECENT", {"b.log": b + published("10:00:05,000", 6), "c.log": c},
           ("b.log", "Publishing"))
    holds(tmp_path, {"b.log": b + published("10:00:05,000", 8), "c.log": c})
    code, doc = validate(tmp_path, {"c.log": c + applied("10:00:01,000", C, 5)}, "back")
    assert code == 1 and [v["spec"] for v in doc["violations"]] == ["PT-VERSION"]


# --- SHUT-ONLY-SOURCE at the destination ---------------------------------------------------


def test_a_member_that_requested_shutdown_is_no_destination(tmp_path: Path) -> None:
    host, port = C.rsplit(":", 1)
    leaving = at("10:00:00,000", C, "INFO", "LifecycleService",
                 f"[{host}]:{port} is SHUTTING_DOWN")
    joined = leaving + installed("10:00:01,000", C, "m1", 3, A)
    breaks(tmp_path, "SHUT-ONLY-SOURCE", {"c.log": joined}, ("c.log", "ReplicaVersions"))
    holds(tmp_path, {"c.log": installed("10:00:00,000", C, "m1", 3, A)
                     + finalizing("10:00:00,500", C, "m1", 3, A, C, "SUCCESS") + leaving})


# --- every judged spec has its evidence ------------------------------------------------------


def test_the_specs_judged_on_hazelcast_logs() -> None:
    judged = forms.specs_judged("hazelcast-log")
    assert set(judged) >= {
        "MEM-VIEW-ORDER", "MEM-VIEW-INTEGRITY", "MEM-VERSION", "MEM-MASTER-ONLY",
        "MEM-CLAIM-ACCEPT", "MEM-CLAIM-RESULT", "MEM-CLAIM-DISCOVER", "PT-VERSION",
        "PT-MASTER-ONLY", "PT-MOST-RECENT", "MIG-STATS", "MIG-COMMIT-ORDER", "MIG-ATOMIC",
        "MIG-REJECT-STALE", "PAR-ONE-PER-PARTITION", "PAR-MAX-PARALLEL", "SHUT-ONLY-SOURCE"}
    assert all(forms.evidence("hazelcast-log", s) for s in judged)


# --- the explorer's counterexamples as log text ----------------------------------------------

#: the migration models' flaws: (model, variant, scope, spec, why a log cannot show it or None)
ZOO = [
    ("migration", "hz37-independent-commit", ["--joins", "0", "--shutdowns", "1"],
     "MIG-COMMIT-ORDER", None),
    ("migration", "hz37-stale-master-table",
     ["--joins", "0", "--partitions", "3", "--shutdowns", "1"], "PT-MOST-RECENT", None),
    ("migration", "hz37-local-promotion", ["--joins", "0"], "PT-MASTER-ONLY",
     "the tables members hold are not logged; a new master logs two tables of one version only "
     "when it collects them, which this counterexample's master does not"),
    ("parallel", "hz40-global-order-parallel", ["--crashes", "0", "--joins", "0", "--shutdowns",
                                                "1"], "PT-MASTER-ONLY",
     "the tables members hold are not logged, and no new master collects them here"),
    ("migration", "hz37-backup-clear-first", ["--crashes", "0"], "DATA-REPLICAS",
     "which member holds which replica is not logged"),
    ("shutdown", "hz36-shutdown", ["--crashes", "0"], "SHUT-LEAVE-EMPTY",
     "the partition table at the moment a member leaves is not logged"),
]


@pytest.mark.parametrize(("model", "variant", "scope", "spec", "why"), ZOO,
                         ids=[z[1] for z in ZOO])
def test_migration_counterexamples_exported_as_log_text(
        tmp_path: Path, model: str, variant: str, scope: list[str], spec: str,
        why: str | None) -> None:
    runner = CliRunner()
    trace = tmp_path / "t.json"
    result = runner.invoke(main, ["check", model, "--variant", variant, *scope, "--trace-out",
                                  str(trace), "--no-progress"])
    assert result.exit_code == 1 and json.loads(trace.read_text())["spec"] == spec
    result = runner.invoke(main, ["export", str(trace), "--log", str(tmp_path / "d")])
    assert result.exit_code == 0, result.output
    result = runner.invoke(main, ["validate", str(tmp_path / "d"), "--json"])
    doc = json.loads(result.stdout)
    assert doc["malformed"] == []
    found = {v["spec"] for v in doc["violations"]}
    if why is None:
        assert result.exit_code == 1 and spec in found, doc
    else:  # the log cannot express it: the spec is not judged, or judges nothing here
        assert (spec not in found and not forms.judges("hazelcast-log", spec)) or spec not in found

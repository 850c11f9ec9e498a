"""Apache Ignite 3 logs read (traces/ignite.py): both layouts, the rebalance and raft messages of
every era, the events each gives, and every line accounted for. Each test line is a template of
the class named beside it (apache/ignite-3), its placeholders filled."""

from __future__ import annotations

import gzip
from pathlib import Path

import pytest

from partsafe.refimpl.metastore import PENDING, PLANNED, REDUCE, STABLE, TRIGGER
from partsafe.traces import events as ev
from partsafe.traces import ignite
from partsafe.traces.inputs import sniff
from partsafe.traces.scanner import Scanner

#: JavaLoggerFormatter (packaging/db/ignite.java.util.logging.properties)
JUL = "2024-09-13 21:52:25:381 +0300 [INFO][%node1%{pool}-2][{logger}] {message}"
#: log4j2-test.xml: [%d{ISO8601}][%-5p][%t][%c{1}] %m
LOG4J = "[2024-09-13T21:52:25,381][INFO ][%node1%{pool}-2][{logger}] {message}"

QUEUE = ("AssignmentsQueue [queue=ArrayDeque [Assignments [nodes=HashSet [Assignment "
         "[consistentId=node1, isPeer=true], Assignment [consistentId=node2, isPeer=true], "
         "Assignment [consistentId=node4, isPeer=false]], force=false, timestamp=1125, "
         "fromReset=false]]]")
HLC = ("HybridTimestamp [physical=2024-09-13 21:52:25:381 +0000, logical=3, "
       "composite=113249389772324867]")
SET = ("[Assignment [consistentId=node1, isPeer=true], Assignment [consistentId=node2, "
       "isPeer=true], Assignment [consistentId=node3, isPeer=true]]")
SET12 = ("[Assignment [consistentId=node1, isPeer=true], Assignment [consistentId=node2, "
         "isPeer=true]]")


def read(tmp_path: Path, lines: list[str], name: str = "ignite3db-0.log"
         ) -> tuple[list[ev.Event], Scanner]:
    path = tmp_path / name
    path.write_text("".join(line + "\n" for line in lines))
    scanner = Scanner()
    found = list(scanner.scan(path, name))
    return found, scanner


def one(tmp_path: Path, logger: str, message: str, layout: str = JUL,
        pool: str = "metastorage-watch-executor") -> list[ev.Event]:
    found, scanner = read(tmp_path, [layout.format(pool=pool, logger=logger, message=message)])
    acc = scanner.accounting
    assert acc.files[0].fmt == "ignite"
    assert (acc.lines, acc.parsed_lines, acc.malformed) == (1, 1, []), acc.malformed
    return found


def changes(found: list[ev.Event]) -> list[tuple[str, str, tuple[str, ...], bool, int | None]]:
    return [(e.group, e.key, e.nodes, e.removed, e.value) for e in found
            if isinstance(e, ev.AssignmentsChanged)]


# --- layouts ---------------------------------------------------------------------------------


def test_both_layouts_give_the_node_and_the_time(tmp_path: Path) -> None:
    # ZoneRebalanceUtil.updatePendingAssignmentsKeys (HEAD)
    message = (f"Update metastore pending partitions key [key=zone.assignments.pending.0_part_19,"
               f" partition=19, zone=0/ZONE1, newVal={QUEUE}, timestamp={HLC}]")
    jul = one(tmp_path, "ZoneRebalanceUtil", message)
    log4j = one(tmp_path, "ZoneRebalanceUtil", message, LOG4J)
    assert [e.member for e in jul] == [e.member for e in log4j] == ["node1", "node1"]
    # +0300: three hours before the same wall clock in UTC
    assert jul[0].order is not None and log4j[0].order is not None
    assert log4j[0].order - jul[0].order == 3 * 3600 * 1000
    assert jul[0].source == ev.Source("ignite3db-0.log", 1)


def test_the_console_s_highlight_escapes_and_a_marker_are_taken_off(tmp_path: Path) -> None:
    # log4j2-test.xml's console: %highlight{[%-5p]} %style{[%t]}, and %notEmpty{[%marker]}
    line = ("[2024-09-13T21:52:25,381]\x1b[32m[INFO ]\x1b[m\x1b[35m[%node1%JRaft-1]\x1b[m"
            "\x1b[36m[NodeImpl]\x1b[m[CompatRunner] Node <0_part_1/node1> start vote and grant "
            "vote self, term=4.")
    found, _ = read(tmp_path, [line])
    # (electSelf prints the term before it raises it: the vote is for term 5)
    assert [(e.TYPE, e.member, e.term) for e in found] == [("raft_vote", "node1", 5)]


def test_sniff_tells_an_ignite_log_from_a_hazelcast_one(tmp_path: Path) -> None:
    ig = tmp_path / "ignite3db-0.log"
    ig.write_text(JUL.format(pool="main", logger="IgniteImpl", message="Apache Ignite started")
                  + "\n")
    hz = tmp_path / "hz.log"
    hz.write_text("2024-01-01 10:00:00,000 [ INFO] [main] [c.h.c.LifecycleService]: "
                  "[10.0.0.1]:5701 [dev] [5.3.0] [10.0.0.1]:5701 is STARTING\n")
    assert sniff(ig).fmt == "ignite" and sniff(hz).fmt == "log"
    gz = tmp_path / "ignite3db-1.log.gz"
    gz.write_bytes(gzip.compress(ig.read_bytes()))
    assert sniff(gz).fmt == "ignite"


# --- the trigger, every era -------------------------------------------------------------------


def test_the_zone_era_s_trigger_writes(tmp_path: Path) -> None:
    # ZoneRebalanceUtil (HEAD): the pending write carries the change trigger's timestamp
    found = one(tmp_path, "ZoneRebalanceUtil",
                f"Update metastore pending partitions key [key=zone.assignments.pending.0_part_19,"
                f" partition=19, zone=0/ZONE1, newVal={QUEUE}, timestamp={HLC}]")
    assert changes(found) == [("0_part_19", PENDING, ("node1", "node2"), False, None),
                              ("0_part_19", TRIGGER, (), False, 113249389772324867)]
    assert found[0].partition == 19
    found = one(tmp_path, "ZoneRebalanceUtil",
                "Update metastore planned partitions key [key=zone.assignments.planned.0_part_19,"
                f" partition=19, zone=0/ZONE1, newVal={SET}]")
    assert changes(found) == [("0_part_19", PLANNED, ("node1", "node2", "node3"), False, None)]
    for why in ("current pending key has the same value",
                "pending is empty and calculated assignments are equal to current assignments"):
        found = one(tmp_path, "ZoneRebalanceUtil",
                    f"Remove planned key because {why} [key=zone.assignments.planned.0_part_19, "
                    f"partition=19, zone=0/ZONE1, val={SET}]")
        assert changes(found) == [("0_part_19", PLANNED, (), True, None)]
    # DEBUG: the guard refused a stale event; GroupUpdateRequestHandler's forced write has no
    # trigger timestamp
    assert one(tmp_path, "ZoneRebalanceUtil", "Received outdated rebalance trigger event "
               "[revision=3302, partition=19, zone=0/ZONE1]") == []
    found = one(tmp_path, "GroupUpdateRequestHandler",
                "Force update metastore pending partitions key [key=zone.assignments.pending."
                f"0_part_19, partition=19, zone=0, newVal={QUEUE}]")
    assert changes(found) == [("0_part_19", PENDING, ("node1", "node2"), False, None)]


def test_the_table_eras_trigger_writes(tmp_path: Path) -> None:
    # RebalanceUtil (era B, 2025): table={}/{}, no timestamp
    found = one(tmp_path, "RebalanceUtil",
                "Update metastore pending partitions key [key=assignments.pending.12_part_3, "
                f"partition=3, table=12/PERSON, newVal={QUEUE}]")
    assert changes(found) == [("12_part_3", PENDING, ("node1", "node2"), False, None)]
    # RebalanceUtil (era A, 2022): 2022's assignments were ClusterNode lists
    nodes = ("[ClusterNode [id=8f4e, name=node1, address=127.0.0.1:3344, nodeMetadata=null], "
             "ClusterNode [id=9a1c, name=node2, address=127.0.0.1:3345, nodeMetadata=null]]")
    found = one(tmp_path, "RebalanceUtil",
                "Update metastore planned partitions key [key=assignments.planned.4b2f_part_0, "
                f"partition=0, table=PERSON, newVal={nodes}]", pool="Thread")
    assert changes(found) == [("4b2f_part_0", PLANNED, ("node1", "node2"), False, None)]


def test_the_june_2022_wording(tmp_path: Path) -> None:
    """IGNITE-16955's messages, before IGNITE-17242 reworded them."""
    nodes = "[ClusterNode [id=8f4e, name=node1, address=127.0.0.1:3344, nodeMetadata=null]]"
    lines = [
        # RebalanceUtil
        f"Update metastore pending partitions key=assignments.pending.4b2f_part_0 for "
        f"partition=0, table=PERSON to {nodes}",
        f"Update metastore planned partitions key=assignments.planned.4b2f_part_0 for "
        f"partition=0, table=PERSON to {nodes}",
        f"Remove planned key=assignments.planned.4b2f_part_0 for partition=0, table=PERSON due "
        f"to the fact, that current pending key has the same value as planned={nodes}",
        "Received outdated rebalance trigger event with revision=12 for partition=0, "
        "table=PERSON",
        # RebalanceRaftGroupEventsListener
        f"Finished rebalance of partition=0, table=PERSON to peers={nodes} and queued new "
        f"rebalance to peers={nodes}",
        f"Finished rebalance of partition=0, table=PERSON to peers={nodes} and no new rebalance "
        "in planned key=assignments.planned.4b2f_part_0 discovered",
        "Planned key=assignments.planned.4b2f_part_0 was changed, while trying to update "
        f"rebalance information about partition=0, table=PERSON to peers={nodes}, another "
        "attempt will be made",
        # TableManager, Loza, NodeImpl
        "Received update for replicas number for table=PERSON from replicas=1 to replicas=2",
        "Start new raft node for group=4b2f_part_0 with initial peers=[127.0.0.1:3344]",
        "Catch up phase to change peers from=[127.0.0.1:3344] to=[127.0.0.1:3344, "
        "127.0.0.1:3345] was successfully finished",
    ]
    found, scanner = read(tmp_path, [f"2022-06-23 13:18:27:798 +0300 [INFO][Thread-242]"
                                     f"[TableManager] {m}" for m in lines])
    acc = scanner.accounting
    assert (acc.lines, acc.parsed_lines, acc.malformed) == (len(lines), len(lines), [])
    assert [(e.key, e.nodes, e.removed) for e in found] == [
        (PENDING, ("node1",), False), (PLANNED, ("node1",), False), (PLANNED, (), True),
        (STABLE, ("node1",), False), (PENDING, ("node1",), False), (PLANNED, (), True),
        (STABLE, ("node1",), False), (PENDING, (), True)]
    assert {e.group for e in found} == {"4b2f_part_0", "PERSON_part_0"}


# --- the stable switch ------------------------------------------------------------------------


@pytest.mark.parametrize(("head", "expected"), [
    ("Rebalance finished", [(STABLE, ("node1", "node2", "node3"), False), (PENDING, (), True)]),
    ("Rebalance finished. Going to schedule next rebalance",
     [(STABLE, ("node1", "node2", "node3"), False), (PENDING, ("node1", "node2"), False),
      (PLANNED, (), True)]),
    ("Rebalance finished. Going to schedule next rebalance with reduction",
     [(STABLE, ("node1", "node2", "node3"), False), (PENDING, ("node1", "node2"), False),
      (REDUCE, ("node3",), False)]),
    ("Rebalance finished. Going to schedule next rebalance with addition",
     [(STABLE, ("node1", "node2", "node3"), False), (PENDING, ("node1", "node2"), False)]),
])
def test_the_stable_switch_s_branches(tmp_path: Path, head: str,
                                      expected: list[tuple[str, tuple[str, ...], bool]]) -> None:
    # ZoneRebalanceRaftGroupEventsListener.logSwitchSuccess (HEAD) and the table era's
    # RebalanceRaftGroupEventsListener (tablePartitionId)
    planned = "" if head == "Rebalance finished" else f", plannedPeers={SET12}"
    for ids in ("zonePartitionId=0_part_7", "tablePartitionId=12_part_7"):
        found = one(tmp_path, "ZoneRebalanceRaftGroupEventsListener",
                    f"{head} [{ids}, appliedPeers={SET}{planned}]", pool="rebalance-scheduler")
        assert [(e.key, e.nodes, e.removed) for e in found] == expected
        assert {e.group for e in found} == {ids.split("=")[1]}
    # era A: [partition={}, table={}, appliedPeers={}...]
    found = one(tmp_path, "RebalanceRaftGroupEventsListener",
                f"{head} [partition=7, table=PERSON, appliedPeers={SET}{planned}]")
    assert [(e.key, e.nodes, e.removed) for e in found] == expected


def test_a_switch_that_retries_writes_nothing(tmp_path: Path) -> None:
    # logSwitchFailure (HEAD), and era B's spelling tablePartitionID
    for what in ("pending addition information", "pending reduce information", "information"):
        assert one(tmp_path, "ZoneRebalanceRaftGroupEventsListener",
                   f"Rebalance keys changed while trying to update rebalance {what}. Going to "
                   f"retry [tablePartitionID=12_part_7, appliedPeers={SET}]") == []


# --- raft -------------------------------------------------------------------------------------


def test_jraft_s_election_lines(tmp_path: Path) -> None:
    """NodeImpl: init, electSelf, becomeLeader; the group and the member from the NodeId.
    electSelf prints the node's term before it raises it (``this.currTerm++`` after the line):
    term=0, then the leader of term 1."""
    raft = "JRaft"
    found, scanner = read(tmp_path, [JUL.format(pool=raft, logger="NodeImpl", message=m) for m in (
        "Node <0_part_19/node1> init, term=0, lastLogId=LogId [index=0, term=0], "
        "conf=node1,node2:1,node3::2,node4/learner, oldConf=, lastCommittedIndex=0.",
        "Node <0_part_19/node1> start vote and grant vote self, term=0.",
        "Node <0_part_19/node1> become leader of group, term=1, conf=node1,node2,node3, "
        "oldConf=node1,node2.",
        "Node <0_part_19/node2> received RequestVoteRequest from node1, term=1, currTerm=0.")])
    assert scanner.accounting.parsed_lines == 3
    started, vote, peers, leader = found
    assert isinstance(started, ev.RaftStarted) and started.reason == "empty"
    assert started.peers == ("node1", "node2", "node3") and started.group == "0_part_19"
    assert (vote.member, vote.term, vote.candidate) == ("node1", 1, "node1")
    assert isinstance(peers, ev.RaftPeersChanged) and peers.peers == ("node1", "node2", "node3")
    assert isinstance(leader, ev.RaftLeader)
    assert (leader.term, leader.votes, leader.old) == (1, ("node1",), ("node1", "node2"))


def test_a_raft_node_started_again_in_one_file(tmp_path: Path) -> None:
    """Term 0 again in a configuration that holds it: an in-memory restart; with its term
    kept: a restart with persistent storage; outside its configuration: a joining node."""
    init = ("Node <0_part_1/node1> init, term={term}, lastLogId=LogId [index=0, term=0], "
            "conf={conf}, oldConf=, lastCommittedIndex=0.")
    lines = [JUL.format(pool="JRaft", logger="NodeImpl", message=init.format(term=t, conf=c))
             for t, c in ((0, "node1,node2"), (0, "node1,node2"), (3, "node1,node2"),
                          (0, "node2,node3"))]
    found, _ = read(tmp_path, lines)
    assert [(e.TYPE, getattr(e, "in_memory", None), getattr(e, "reason", None))
            for e in found] == [
        ("raft_started", None, "empty"),
        ("node_restarted", True, None), ("raft_started", None, "empty"),
        ("node_restarted", False, None), ("raft_started", None, "start"),
        ("raft_started", None, "empty")]


def test_the_two_leaders_detector(tmp_path: Path) -> None:
    # NodeImpl.handleAppendEntriesRequest (no group) and handleInstallSnapshot (its group)
    found = one(tmp_path, "NodeImpl", "Another peer node2:0:1 declares that it is the leader at "
                "term 5 which was occupied by leader node1.", pool="JRaft")
    assert [(e.member, e.term, e.group) for e in found] == [("node1", 5, ""), ("node2", 5, "")]
    found = one(tmp_path, "NodeImpl", "Another peer node2 of groupId=0_part_3 declares that it "
                "is the leader at term 5 which was occupied by leader node1.", pool="JRaft")
    assert [(e.member, e.group) for e in found] == [("node1", "0_part_3"), ("node2", "0_part_3")]


def test_a_configuration_put_in_place(tmp_path: Path) -> None:
    # NodeImpl.ConfigurationCtx.nextStage (HEAD), NodeImpl.resetPeers
    found = one(tmp_path, "NodeImpl", "Catch up phase to change peers was successfully finished "
                "[node=<0_part_1/node1>, fromPeers=[node1, node2, node3], toPeers=[node1, "
                "node3], fromLearners=[], toLearners=[], oldToken=4, newToken=9].", pool="JRaft")
    assert [(e.TYPE, e.member, e.peers) for e in found] == [
        ("raft_peers_changed", "node1", ("node1", "node3"))]
    # the same line in 3.1.0 (a real run's: tests/data/lab) and in August 2025's wording
    for fields in ("from=[node1, node2, node3] to=[node1, node3]]",
                   "from peers=[node1, node2, node3] to peers=[node3, node1], from learners=[], "
                   "to learners=[]]."):
        found = one(tmp_path, "NodeImpl", "Catch up phase to change peers was successfully "
                    f"finished [node=<20_part_0/node3>, {fields}", pool="JRaft")
        assert [(e.TYPE, e.member, e.group, e.peers) for e in found] == [
            ("raft_peers_changed", "node3", "20_part_0", ("node1", "node3"))]
    found = one(tmp_path, "NodeImpl", "Node <0_part_1/node1> set peers from node1,node2 to "
                "node1.", pool="JRaft")
    assert [e.peers for e in found] == [("node1",)]
    # Loza: the start line carries what JRaft's init line says: no event of its own
    assert one(tmp_path, "Loza", "Start new raft node=RaftNodeId [groupId=0_part_1, peer=Peer "
               "[consistentId=node1, idx=0]] with initial configuration=PeersAndLearners "
               "[peers=Set12 [Peer [consistentId=node1, idx=0]], learners=SetN []]",
               pool="tableManager-io") == []


def test_a_2022_peer_is_an_endpoint() -> None:
    assert ignite.peer_member("127.0.0.1:3344:1:2") == "127.0.0.1:3344"
    assert ignite.peer_member("node1:1:2") == "node1"
    assert ignite.peer_member("node1::2") == "node1"
    assert ignite.node_id("<0_part_1/127.0.0.1:3344>") == ("0_part_1", "127.0.0.1:3344")


# --- accounting -------------------------------------------------------------------------------


def test_every_line_is_parsed_ignored_or_malformed(tmp_path: Path) -> None:
    lines = [
        JUL.format(pool="JRaft", logger="NodeImpl", message="Node <0_part_1/node1> start vote "
                   "and grant vote self, term=2."),
        # a throwable after its record: ignored, keywords and all
        JUL.format(pool="rebalance-scheduler", logger="ZoneRebalanceRaftGroupEventsListener",
                   message="Unable to commit partition configuration to metastore: 0_part_1"),
        "java.lang.IllegalStateException: Rebalance finished [zonePartitionId=0_part_1",
        "\tat org.apache.ignite.internal.X.y(X.java:10)",
        # our wording, values that do not parse: malformed
        JUL.format(pool="rebalance-scheduler", logger="ZoneRebalanceRaftGroupEventsListener",
                   message="Rebalance finished [zonePartitionId=0_part_1, appliedPeers=[[]]"),
        JUL.format(pool="main", logger="IgniteImpl", message="Apache Ignite started"),
        # a keyword of ours in a wording no release read prints: reported, not dropped
        JUL.format(pool="JRaft", logger="NodeImpl", message="Catch up phase to change peers "
                   "was successfully finished [node=<0_part_1/node1>, to=[node1]]"),
    ]
    found, scanner = read(tmp_path, lines)
    acc = scanner.accounting
    assert [e.TYPE for e in found] == ["raft_vote"]
    assert (acc.lines, acc.parsed_lines, acc.ignored_lines) == (7, 1, 4)
    assert [(m.line, m.reason[:40]) for m in acc.malformed] == [
        (5, "an Ignite 3 message whose wording is rea"),
        (7, "an Ignite 3 message with 'Catch up phase")]


def test_nul_bytes_and_block_boundaries(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    vote = JUL.format(pool="JRaft", logger="NodeImpl",
                      message="Node <0_part_1/node1> start vote and grant vote self, term={}.")
    text = "".join(vote.format(t) + "\n" for t in range(1, 40))
    path = tmp_path / "a.log"
    path.write_bytes(b"\0" * 64 + text.encode())
    whole = list(Scanner().scan(path))
    monkeypatch.setattr(ignite, "BLOCK", 97)
    scanner = Scanner()
    small = list(scanner.scan(path))
    assert [e.term for e in small] == [e.term for e in whole] == list(range(2, 41))
    acc = scanner.accounting
    assert (acc.lines, acc.parsed_lines, len(acc.malformed)) == (39, 38, 1)
    assert acc.malformed[0].line == 1 and "NUL" in acc.malformed[0].reason


def test_the_needed_lines_give_what_the_whole_file_gives(tmp_path: Path) -> None:
    """`Scanner.scan_needed` (the Spark engine's scan) over the lines the sieve keeps."""
    from partsafe.traces import sieve

    lines = (Path(__file__).parent / "ignite_sample.log").read_text().splitlines()
    found, scanner = read(tmp_path, lines)
    kept = [(n, line.encode()) for n, line in enumerate(lines, 1) if sieve.needed(line)]
    again = Scanner()
    needed = list(again.scan_needed("ignite3db-0.log", kept, "ignite"))
    assert [ev.dumps(e) for e in needed] == [ev.dumps(e) for e in found]
    assert again.accounting.parsed_lines == scanner.accounting.parsed_lines
    assert again.accounting.malformed == scanner.accounting.malformed

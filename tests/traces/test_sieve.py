"""The sieve (traces/sieve.py): scanning only the needed lines gives what scanning every line
gives, on the shared real logs, on generated logs and on every layout the scanner knows."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from partsafe.checker.validation.simulate import generate
from partsafe.traces import sieve
from partsafe.traces.scanner import Scanner

DATA = Path(__file__).parents[1] / "data" / "logs"
U = ("0b7a3e8c-1f5c-4a5e-9a51-3b8c2f7d6e01", "5d2f9a0b-7c41-4e3a-8b6d-2a9e1c0f4b72")
P1, P2 = "[10.0.0.1]:5701 [dev] [5.3.0]", "[10.0.0.2]:5701 [dev] [5.3.0]"
#: lines of every layout and record shape the scanner handles, to be mixed at random
PIECES = (
    f"2023-11-14 10:00:01,000 [ INFO] [main] [c.h.i.c.ClusterService]: {P1} \n\n"
    f"Members {{size:2, ver:3}} [\n\tMember [10.0.0.1]:5701 - {U[0]} this\n"
    f"\tMember [10.0.0.2]:5701 - {U[1]}\n]\n",
    f"2023-11-14 10:00:02,000 [ WARN] [hz.x] [c.h.i.c.i.MembershipManager]: {P1} Member "
    f"[10.0.0.2]:5701 - {U[1]} is suspected to be dead for reason: No connection\n",
    f"2023-11-14 10:00:03,000 [ INFO] [hz.x] [c.h.i.p.i.MigrationManager]: {P1} Repartitioning "
    "cluster data. Migration tasks count: 7\n",
    f"2023-11-14 10:00:04,000 [ INFO] [hz.x] [c.h.i.p.i.MigrationManager]: {P1} All migration "
    "tasks have been completed. (repartitionTime=Tue Nov 14 10:00:03 UTC 2023, plannedMigrations="
    "7, completedMigrations=7, remainingMigrations=0, totalCompletedMigrations=7)\n",
    "2023-11-14 10:00:05,000 [ INFO] [http-1] [c.e.Shop]: GET /orders 200\n",
    "2023-11-14 10:00:06,000 [ WARN] [hz.x] [c.h.Conn]: boom\njava.net.SocketException: reset\n"
    "\tat java.base/sun.nio.ch.SocketChannelImpl.read(SocketChannelImpl.java:434)\n\t... 3 more\n",
    "Nov 14, 2023 10:00:07 AM com.hazelcast.internal.cluster.ClusterService\n"
    f"INFO: {P2} \n\nMembers {{size:1, ver:1}} [\n\tMember [10.0.0.2]:5701 - {U[1]} this\n]\n\n",
    f"member-1  | 2023-11-14 10:00:08,000 INFO {P1} \nmember-2  | 2023-11-14 10:00:08,000 INFO "
    f"{P2} \nmember-1  | \nmember-1  | Members {{size:1, ver:4}} [\nmember-2  | noise\n"
    f"member-1  | \tMember [10.0.0.1]:5701 - {U[0]} this\nmember-1  | ]\n",
    '{"@timestamp":"2023-11-14T10:00:09.000Z","message":"' + P1 + ' Member [10.0.0.2]:5701 - '
    + U[1] + ' is suspected to be dead for reason: x"}\n',
    '{"log":"2023-11-14 10:00:10,000 INFO ' + P2 + ' \\n","time":"2023-11-14T10:00:10Z"}\n'
    '{"log":"Members {size:1, ver:2} [\\n","time":"2023-11-14T10:00:10Z"}\n'
    '{"log":"\\tMember [10.0.0.2]:5701 - ' + U[1] + ' this\\n","time":"2023-11-14T10:00:10Z"}\n'
    '{"log":"]\\n","time":"2023-11-14T10:00:10Z"}\n',
    f"2023-11-14T10:00:11.123456789Z 2023-11-14 10:00:11,000 INFO {P1} Shutdown request of "
    f"Member [10.0.0.2]:5701 - {U[1]} is handled\n",
    f"2023-11-14 10:00:12,000 INFO {P1} Member [10.0.0.2]:5701 - {U[1]} is suspected to be\n"
    "dead for reason: wrapped\n",
    "\tMember [10.0.0.9]:5701 - 00000000-0000-0000-0000-000000000009\n",
    "]\n", "\n", "  2023-11-14 indented record start\n",
    # what copytruncate leaves before a line, and NUL bytes in a line the sieve would drop
    "\x00" * 40 + f"2023-11-14 10:00:13,000 INFO {P1} Member [10.0.0.2]:5701 - {U[1]} is "
    "suspected to be dead for reason: after a hole\n",
    "2023-11-14 10:00:14,000 [ INFO] [http-1] [c.e.Shop]: GET" + "\x00" * 20 + " /orders\n",
    # hard-wrapped claims: under docker's timestamps, and cut before a brace and in an address
    f"2023-11-14T10:00:15.000Z 2023-11-14 10:00:15,000 INFO {P2} Mastership is cla\n"
    f"2023-11-14T10:00:15.000Z imed with: MembersView{{version=6, members=[MemberInfo{{"
    f"address=[10.0.0.2]:5701, uuid={U[1]}, liteMember=false}}]}}\n",
    f"2023-11-14 10:00:16,000 INFO {P2} Mastership is claimed with: MembersView\n"
    f"{{version=7, members=[MemberInfo{{address=[\n10.0.0.2]:5701, uuid={U[1]}}}]}}\n",
    # a record over several lines: two partitions' tables (InternalPartitionServiceImpl)
    f"2023-11-14 10:00:17,000 [ WARN] [hz.x] [c.h.i.p.InternalPartitionService]: {P2} Issue "
    "while determining latest partition... Latest: Partition {ID: 5, Version: 3} [\n"
    f"\t0:[10.0.0.1]:5701 - {U[0]}\n\t1:[10.0.0.2]:5701 - {U[1]}\n"
    "], Received: Partition {ID: 5, Version: 3} [\n"
    f"\t0:[10.0.0.2]:5701 - {U[1]}\n]\n",
    # a migration's participant (MigrationManager.finalizeMigration, FINE)
    f"2023-11-14 10:00:18,000 [DEBUG] [hz.x] [c.h.i.p.i.MigrationManager]: {P2} Finalizing "
    f"MigrationInfo{{uuid=m1, partitionId=5, source=[10.0.0.1]:5701 - {U[0]}, "
    "sourceCurrentReplicaIndex=0, sourceNewReplicaIndex=-1, destination=[10.0.0.2]:5701 - "
    f"{U[1]}, destinationCurrentReplicaIndex=-1, destinationNewReplicaIndex=0, "
    "master=[10.0.0.1]:5701, initialPartitionVersion=3, partitionVersionIncrement=2, "
    "status=SUCCESS}\n",
    # the master's planner (MigrationPlanner, FINEST): a pass, a decision and the order record
    # over three lines, its entries' lines indented with a tab
    f"2023-11-14 10:00:19,000 [TRACE] [hz.x] [c.h.i.p.i.MigrationPlanner]: {P1} partitionId=5, "
    f"Current index: 1, state: [[10.0.0.1]:5701 - {U[0]}, null, null, null, null, null, null]\n"
    f"2023-11-14 10:00:19,001 [TRACE] [hz.x] [c.h.i.p.i.MigrationPlanner]: {P1} partitionId=5, "
    f"COPY [10.0.0.2]:5701 - {U[1]} to index: 1\n"
    f"2023-11-14 10:00:19,002 [TRACE] [hz.x] [c.h.i.p.i.MigrationPlanner]: {P1} Migration order "
    "after prioritization: [\n\t0- MigrationInfo{uuid=m2, partitionId=5, source=null, "
    "sourceCurrentReplicaIndex=-1, sourceNewReplicaIndex=-1, destination=[10.0.0.2]:5701 - "
    f"{U[1]}, destinationCurrentReplicaIndex=-1, destinationNewReplicaIndex=1, master=null, "
    "initialPartitionVersion=-1, partitionVersionIncrement=1, status=ACTIVE},\n\t1- "
    f"MigrationInfo{{uuid=m3, partitionId=5, source=[10.0.0.1]:5701 - {U[0]}, "
    "sourceCurrentReplicaIndex=0, sourceNewReplicaIndex=1, destination=[10.0.0.2]:5701 - "
    f"{U[1]}, destinationCurrentReplicaIndex=-1, destinationNewReplicaIndex=0, master=null, "
    "initialPartitionVersion=-1, partitionVersionIncrement=2, status=ACTIVE}]\n",
    f"2023-11-14 10:00:19,003 [TRACE] [hz.x] [c.h.i.p.i.MigrationPlanner]: {P1} Migration order "
    "after prioritization: ]\n",
)


def full_and_needed(path: Path) -> tuple[tuple, tuple]:
    full = Scanner()
    a = list(full.scan(path, "f"))
    lines = path.read_bytes().split(b"\n")
    if lines and lines[-1] == b"":
        lines.pop()
    part = Scanner()
    b = list(part.scan_needed("f", [(i, raw) for i, raw in enumerate(lines, 1)
                                    if sieve.needed(raw.decode("utf-8", "replace"))]))

    def seen(events: list, acc: object) -> tuple:
        return ([(e, e.source, e.order) for e in events], acc.parsed_lines,  # type: ignore
                acc.malformed, acc.notes)  # type: ignore[attr-defined]

    return seen(a, full.accounting), seen(b, part.accounting)


@pytest.mark.parametrize("name", sorted(p.name for p in DATA.glob("*.log")))
def test_needed_lines_scan_like_all_lines_on_the_real_logs(name: str) -> None:
    a, b = full_and_needed(DATA / name)
    assert a == b


def test_needed_lines_scan_like_all_lines_on_generated_logs(tmp_path: Path) -> None:
    generate(tmp_path, lines=6000, relevant=0.05, seed=5)
    for path in sorted(tmp_path.glob("*.log")):
        a, b = full_and_needed(path)
        assert a == b and a[0]


@settings(max_examples=60, deadline=None)
@given(st.lists(st.sampled_from(PIECES), min_size=1, max_size=25))
def test_needed_lines_scan_like_all_lines_on_any_mix_of_layouts(pieces: list[str]) -> None:
    import tempfile

    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "mix.log"
        path.write_text("".join(pieces))
        a, b = full_and_needed(path)
        assert a == b


def test_needed_lines_scan_like_all_lines_on_a_list_of_50000_members(tmp_path: Path) -> None:
    rows = "".join(f"\tMember [10.1.{i >> 8 & 255}.{i & 255}]:5701 - {i:08x}-0000-4000-8000-"
                   f"000000000000{' this' if i == 0 else ''}\n" for i in range(50_000))
    path = tmp_path / "big.log"
    path.write_text(f"2023-11-14 10:00:01,000 INFO {P1} \n\nMembers {{size:50000, ver:9}} [\n"
                    f"{rows}]\n\n2023-11-14 10:00:05,000 [ INFO] [http-1] [c.e.Shop]: GET\n")
    a, b = full_and_needed(path)
    assert a == b and len(a[0][0][0].members) == 50_000 and a[2] == []


def test_the_sieve_drops_ordinary_records_and_stack_lines() -> None:
    assert not sieve.needed("2023-11-14 10:00:05,000 [ INFO] [http-1] [c.e.Shop]: GET /orders")
    assert not sieve.needed("\tat java.base/sun.nio.ch.SocketChannelImpl.read(X.java:434)")
    assert sieve.needed(f"2023-11-14 10:00:01,000 INFO {P1} ")  # a member list's head
    assert sieve.needed("]") and sieve.needed("") and sieve.needed("\tMember [10.0.0.1]:5701")
    assert sieve.needed("Nov 14, 2023 10:00:07 AM com.hazelcast.Foo bar")  # JUL's first line
    assert sieve.needed("2023-11-14 10:00:05,000 [ INFO] [http-1] [c.e.Shop]: GET\x00 /orders")
    assert sieve.needed("10.0.0.2]:5701, uuid=x}]}")  # the rest of a wrapped address

"""The log scanner and the validator: layouts, multi-line records, accounting, bad input, every
spec judged on logs (caught and holding), the real excerpts, the round trip from the explorer."""

from __future__ import annotations

import gzip
import importlib
import io
import json
import random
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from click.testing import CliRunner
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from rich.console import Console

from partsafe.checker.cli.main import main
from partsafe.checker.report import xml_text
from partsafe.checker.validation import local as v
from partsafe.checker.validation.shards import Notice
from partsafe.checker.validation.view import render_report, validate_junit
from partsafe.specs import forms
from partsafe.specs.registry import all_specs
from partsafe.traces import events as ev
from partsafe.traces.scanner import Accounting, InputError, Malformed, Scanner

LOGS = Path(__file__).parents[1] / "data" / "logs"
#: how many specs a Hazelcast log judges
JUDGED = len(forms.specs_judged("hazelcast-log"))
U = ["ad55fb38-9dd0-47a5-ab5b-504916c9e85f", "3f234cd8-050d-4ed2-9615-51b3c2593f26",
     "7fb07cd0-5a46-422d-801d-05e6da0b9a63", "2f8cbb60-1823-4fba-8d13-2fa9dbf89822"]


def scan(tmp_path: Path, text: str | bytes, name: str = "m.log", fmt: str = "auto"):
    path = tmp_path / name
    path.write_bytes(text.encode() if isinstance(text, str) else text)
    scanner = Scanner(fmt)
    events = list(scanner.scan(path, name))
    acc = scanner.accounting
    assert acc.lines == acc.parsed_lines + acc.ignored_lines + len(acc.malformed)
    assert acc.ignored_lines >= 0
    return events, acc


def check(tmp_path: Path, files: dict[str, str]) -> v.Report:
    for name, text in files.items():
        (tmp_path / name).write_text(text)
    report = v.validate([str(tmp_path / n) for n in files])
    acc = report.accounting
    assert acc.lines == acc.parsed_lines + acc.ignored_lines + len(acc.malformed)
    return report


def log4j(ts: str, me: str, message: str, level: str = "INFO",
          logger: str = "c.h.i.c.ClusterService") -> str:
    """The distribution's rolling-file layout: ``%d [%5p] [%t] [%c{.1}]: %m%n``."""
    host, port = me.rsplit(":", 1)
    return (f"2023-11-14 {ts},000 [{level:>5}] [hz.main] [{logger}]: [{host}]:{port} [dev] "
            f"[5.3.0] {message}\n")


def members(version: int, me: str, listed: list[tuple[str, str]]) -> str:
    lines = "".join(f"\tMember [{a.split(':')[0]}]:{a.split(':')[1]} - {u}"
                    f"{' this' if a == me else ''}\n" for a, u in listed)
    return f"\n\nMembers {{size:{len(listed)}, ver:{version}}} [\n{lines}]\n\n"


A, B, C = "10.0.0.1:5701", "10.0.0.2:5701", "10.0.0.3:5701"


def lists(ts: str, me: str, version: int, listed: list[tuple[str, str]]) -> str:
    return log4j(ts, me, members(version, me, listed))


# --- layouts --------------------------------------------------------------------------------------


def test_spring_boot_real_logs_give_their_member_lists() -> None:
    events = list(Scanner().scan(LOGS / "hz_05.log"))
    (installed,) = [e for e in events if isinstance(e, ev.MemberListInstalled)]
    assert installed.member == "192.168.1.8:5702"
    assert (installed.version, installed.members) == (4, ("192.168.1.8:5701", "192.168.1.8:5702"))
    assert installed.uuids == ("ad55fb38-9dd0-47a5-ab5b-504916c9e85f",
                               "3f234cd8-050d-4ed2-9615-51b3c2593f26")
    assert installed.source == ev.Source(str(LOGS / "hz_05.log"), 37)


def test_legacy_member_lists_with_mixed_indentation() -> None:
    events = [e for e in Scanner().scan(LOGS / "hz_28.log")
              if isinstance(e, ev.MemberListInstalled)]
    assert [(e.version, len(e.members)) for e in events] == [(None, 1), (None, 2)]
    assert events[1].members == ("10.244.37.2:5701", "10.244.86.3:5701")


def test_redacted_placeholders_are_members_too() -> None:
    events = list(Scanner().scan(LOGS / "hz_08.log"))
    kinds = [e.TYPE for e in events]
    assert kinds == ["member_removed", "member_list_installed", "repartitioning"]
    assert events[0].member == "<ip>:<portA>" and events[0].removed == "<ip>:<portB>"


def test_test_harness_layout_with_brackets_in_the_test_name() -> None:
    events = list(Scanner().scan(LOGS / "hz_11.log"))
    assert [e.TYPE for e in events] == ["shutdown_request_handled", "repartitioning"]
    assert events[0].member == "127.0.0.1:5701"
    assert events[0].requester == "127.0.0.1:5703"


def test_log4j2_distribution_layout(tmp_path: Path) -> None:
    text = (log4j("10:00:00", A, "[10.0.0.1]:5701 is STARTING", logger="c.h.c.LifecycleService")
            + lists("10:00:01", A, 1, [(A, U[0])])
            + log4j("10:00:02", A, "Repartitioning cluster data. Migration tasks count: 3",
                    logger="c.h.i.p.i.MigrationManager"))
    events, acc = scan(tmp_path, text)
    assert [e.TYPE for e in events] == ["member_started", "member_list_installed",
                                        "repartitioning"]
    assert events[1].source.line == 2 and events[1].order is not None
    assert acc.parsed_lines == 1 + 5 + 1  # the record: prefix line, blank, header, 1, closing


def test_java_util_logging_two_line_records_in_other_locales(tmp_path: Path) -> None:
    text = ("Nov 14, 2023 10:00:01 AM com.hazelcast.internal.cluster.ClusterService\n"
            "INFO: [10.0.0.1]:5701 [dev] [5.3.0] \n\nMembers {size:1, ver:1} [\n"
            f"\tMember [10.0.0.1]:5701 - {U[0]} this\n]\n\n"
            "14.11.2023 10:00:02 com.hazelcast.internal.cluster.impl.MembershipManager\n"
            f"WARNUNG: [10.0.0.1]:5701 [dev] [5.3.0] Member [10.0.0.2]:5701 - {U[1]} is "
            "suspected to be dead for reason: No connection\n")
    events, _ = scan(tmp_path, text)
    assert [e.TYPE for e in events] == ["member_list_installed", "member_suspected"]
    assert events[0].member == A and events[1].suspect == B


def test_docker_compose_interleaved_members_out_of_time_order(tmp_path: Path) -> None:
    text = ("hz1-1  | 2023-11-14 10:00:02,000 [ INFO] [hz.main] [c.h.i.c.ClusterService]: "
            "[10.0.0.1]:5701 [dev] [5.3.0] \n"
            "hz2-1  | 2023-11-14 10:00:01,000 [ INFO] [hz.main] [c.h.i.c.ClusterService]: "
            "[10.0.0.2]:5701 [dev] [5.3.0] \n"
            "hz1-1  | \nhz2-1  | \nhz1-1  | Members {size:2, ver:2} [\n"
            "hz2-1  | Members {size:2, ver:2} [\n"
            f"hz1-1  | \tMember [10.0.0.1]:5701 - {U[0]} this\n"
            f"hz2-1  | \tMember [10.0.0.1]:5701 - {U[0]}\n"
            f"hz2-1  | \tMember [10.0.0.2]:5701 - {U[1]} this\n"
            f"hz1-1  | \tMember [10.0.0.2]:5701 - {U[1]}\n"
            "hz2-1  | ]\nhz1-1  | ]\n")
    events, acc = scan(tmp_path, text)
    got = sorted((e.member, e.members) for e in events)
    assert got == [(A, (A, B)), (B, (A, B))]
    assert acc.parsed_lines == 12 and acc.malformed == []


def test_docker_timestamps_before_everything(tmp_path: Path) -> None:
    line = log4j("10:00:00", A, "Removing Member [10.0.0.2]:5701 - " + U[1],
                 logger="c.h.i.c.i.MembershipManager")
    events, _ = scan(tmp_path, "2023-11-14T10:00:00.123456789Z " + line)
    assert events[0].TYPE == "member_removed" and events[0].removed == B


def test_json_per_line_with_the_member_list_in_one_message(tmp_path: Path) -> None:
    message = f"[10.0.0.1]:5701 [dev] [5.3.0] {members(3, A, [(A, U[0]), (B, U[1])])}"
    lines = [json.dumps({"@timestamp": "2023-11-14T10:00:00.000Z", "log.level": "INFO",
                         "message": message, "log.logger": "com.hazelcast.internal.cluster"}),
             json.dumps({"log": "2023-11-14 10:00:01,000 [ INFO] [hz.main] [c.h.i.p.i.Migra"
                                "tionManager]: [10.0.0.1]:5701 [dev] [5.3.0] Partition balance "
                                "is ok, no need to repartition.\n", "stream": "stdout",
                         "time": "2023-11-14T10:00:01Z"})]
    events, acc = scan(tmp_path, "\n".join(lines) + "\n")
    assert [e.TYPE for e in events] == ["member_list_installed", "repartitioning"]
    assert events[0].members == (A, B) and acc.parsed_lines == 2


def test_hard_wrapped_lines_are_joined_back(tmp_path: Path) -> None:
    message = ("Mastership is claimed with: MembersView{version=5, members=[MemberInfo{"
               f"address=[10.0.0.2]:5701, uuid={U[1]}, liteMember=false, "
               "memberListJoinVersion=2}]}")
    line = log4j("10:00:00", B, message, logger="c.h.i.c.i.MembershipManager")
    wrapped = "\n".join(line[i:i + 120] for i in range(0, len(line), 120))
    events, acc = scan(tmp_path, wrapped)
    assert [e.TYPE for e in events] == ["mastership_claimed"]
    assert events[0].version == 5 and events[0].members == (B,)
    assert acc.malformed == [] and acc.parsed_lines == acc.lines == 3


def test_stack_traces_are_ignored(tmp_path: Path) -> None:
    text = (log4j("10:00:00", A, "Migration failed: boom", level="WARN")
            + "java.lang.IllegalStateException: partition migration failed\n"
            "\tat com.hazelcast.internal.partition.impl.MigrationManager.run(MigrationManager"
            ".java:10)\n\t... 3 more\n")
    _, acc = scan(tmp_path, text)
    assert acc.malformed == [] and acc.lines == 4


# --- member lists: the messy ones -----------------------------------------------------------------


def test_a_member_list_with_a_wrong_stated_size_is_used_with_a_note(tmp_path: Path) -> None:
    text = log4j("10:00:00", A, members(3, A, [(A, U[0]), (B, U[1])]).replace("size:2", "size:3"))
    (path := tmp_path / "m.log").write_text(text)
    report = v.validate([str(path)])
    assert report.result == "ok"
    assert any("states size 3 but lists 2" in w.message for w in report.warnings)


def test_member_lines_without_their_header_are_malformed(tmp_path: Path) -> None:
    text = f"\tMember [10.0.0.1]:5701 - {U[0]} this\n\tMember [10.0.0.2]:5701 - {U[1]}\n]\n"
    events, acc = scan(tmp_path, text)
    assert events == []
    assert [m.line for m in acc.malformed] == [1, 2]
    assert "header is missing" in acc.malformed[0].reason


def test_a_member_list_cut_off_at_the_end_of_the_file_is_malformed(tmp_path: Path) -> None:
    text = log4j("10:00:00", A, f"\n\nMembers {{size:2, ver:2}} [\n\tMember [10.0.0.1]:5701 - "
                 f"{U[0]} this")
    events, acc = scan(tmp_path, text.rstrip("\n"))
    assert events == []
    assert [m.line for m in acc.malformed] == [1, 2, 3, 4]


def test_cp_group_lists_are_not_member_lists(tmp_path: Path) -> None:
    text = log4j("10:00:00", A, "\n\nCP Group Members {groupId: default(1234), size:2, term:1, "
                 "logIndex:0} [\n\tCPMember{uuid=" + U[0] + ", address=[10.0.0.1]:5701}\n"
                 "\tCPMember{uuid=" + U[1] + ", address=[10.0.0.2]:5701}\n]\n",
                 logger="c.h.c.i.RaftService")
    events, acc = scan(tmp_path, text)
    assert events == [] and acc.malformed == []


# --- bad input ------------------------------------------------------------------------------------


def test_bad_inputs_get_a_clear_message(tmp_path: Path) -> None:
    (tmp_path / "empty").mkdir()
    for path, words in ((tmp_path / "nope", "no such file"), (tmp_path / "empty", "no files")):
        with pytest.raises(InputError, match=words):
            v.validate([str(path)])
        result = CliRunner().invoke(main, ["validate", str(path)])
        assert result.exit_code == 2, result.output
        assert words in result.output and "Traceback" not in result.output
    # binary data is not refused: it is skipped, and a run with nothing else judges nothing
    (tmp_path / "bin").write_bytes(bytes(range(256)) * 400)
    result = CliRunner().invoke(main, ["validate", str(tmp_path / "bin")])
    assert result.exit_code == 3, result.output
    assert "binary data" in result.output and "Traceback" not in result.output


def test_non_utf8_bytes_and_an_empty_file(tmp_path: Path) -> None:
    text = log4j("10:00:00", A, "Removing Member [10.0.0.2]:5701 - " + U[1]).encode()
    events, acc = scan(tmp_path, b"\xff\xfe garbage \xc3\x28\n" + text)
    assert [e.TYPE for e in events] == ["member_removed"] and acc.lines == 2
    (tmp_path / "e.log").write_bytes(b"")
    report = v.validate([str(tmp_path / "e.log")])
    assert report.accounting.lines == 0 and "empty file" in report.warnings[0].message


def test_gzip_and_directories(tmp_path: Path) -> None:
    (tmp_path / "logs").mkdir()
    (tmp_path / "logs" / "a.log.gz").write_bytes(gzip.compress((LOGS / "hz_05.log").read_bytes()))
    report = v.validate([str(tmp_path / "logs")])
    assert report.accounting.lines == 55 and report.members == {"192.168.1.8:5702": 1}


@settings(max_examples=60, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(st.sampled_from((LOGS / "hz_05.log").read_bytes().splitlines()
                                + (LOGS / "hz_28.log").read_bytes().splitlines()), max_size=40),
       st.data())
def test_mutated_real_lines_never_break_the_accounting(tmp_path: Path, lines: list[bytes],
                                                       data: st.DataObject) -> None:
    mutated = []
    for line in lines:
        if line and data.draw(st.booleans()):
            i = data.draw(st.integers(0, len(line) - 1))
            line = line[:i] + data.draw(st.binary(max_size=4)) + line[i + 1:]
        mutated.append(line)
    try:
        scan(tmp_path, b"\n".join(mutated) + data.draw(st.sampled_from([b"", b"\n"])))
    except InputError as exc:  # a mutation that made the file start like a gzip stream
        assert "cannot be read" in str(exc)


@settings(max_examples=60, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.binary(max_size=3000))
def test_random_bytes_never_break_the_accounting(tmp_path: Path, blob: bytes) -> None:
    try:
        scan(tmp_path, blob)
    except InputError as exc:  # binary data, or a gzip header with no stream after it
        assert "binary data" in str(exc) or "cannot be read" in str(exc)


# --- specs on logs: caught and holding ------------------------------------------------------------


def specs_of(report: v.Report) -> list[str]:
    return [x.spec for x in report.violations]


def test_mem_version_caught_within_one_incarnation(tmp_path: Path) -> None:
    text = lists("10:00:00", A, 5, [(A, U[0]), (B, U[1])]) + lists("10:00:01", A, 4, [(A, U[0])])
    report = check(tmp_path, {"a.log": text})
    assert specs_of(report) == ["MEM-VERSION"]
    assert [s.line for s in report.violations[0].sources] == [1, 9]


def test_mem_version_holds_across_a_restart(tmp_path: Path) -> None:
    text = (lists("10:00:00", A, 5, [(A, U[0]), (B, U[1])])
            + log4j("10:01:00", A, "[10.0.0.1]:5701 is STARTING")
            + lists("10:01:01", A, 1, [(A, U[2])]))
    report = check(tmp_path, {"a.log": text})
    assert report.result == "ok" and report.members == {A: 2}


def test_one_version_names_one_list_across_members(tmp_path: Path) -> None:
    good = {"a.log": lists("10:00:00", A, 2, [(A, U[0]), (B, U[1])]),
            "b.log": lists("10:00:00", B, 2, [(A, U[0]), (B, U[1])])}
    assert check(tmp_path, good).result == "ok"
    bad = {"a2.log": lists("10:00:00", A, 3, [(A, U[0]), (B, U[1])]),
           "c.log": lists("10:00:00", C, 3, [(A, U[0]), (C, U[2])])}
    assert "MEM-VERSION" in specs_of(check(tmp_path, bad))


def test_view_integrity(tmp_path: Path) -> None:
    assert specs_of(check(tmp_path, {"a.log": lists("10:00:00", A, 2, [(B, U[1])])})) == [
        "MEM-VIEW-INTEGRITY"]
    assert check(tmp_path, {"b.log": lists("10:00:00", A, 2, [(A, U[0])])}).result == "ok"


def test_view_order(tmp_path: Path) -> None:
    ab, abc = [(A, U[0]), (B, U[1])], [(A, U[0]), (B, U[1]), (C, U[2])]
    master = lists("10:00:00", A, 2, ab) + lists("10:00:02", A, 3, abc)
    bad = lists("10:00:03", B, 3, abc) + lists("10:00:04", B, 2, ab)
    assert "MEM-VIEW-ORDER" in specs_of(check(tmp_path, {"a.log": master, "b.log": bad}))
    good = lists("10:00:01", B, 2, ab) + lists("10:00:03", B, 3, abc)
    assert check(tmp_path, {"a.log": master, "b.log": good}).result == "ok"


def test_master_only_removal(tmp_path: Path) -> None:
    ab = [(A, U[0]), (B, U[1])]
    remove = log4j("10:00:01", B, "Removing Member [10.0.0.1]:5701 - " + U[0])
    assert specs_of(check(tmp_path, {"b.log": lists("10:00:00", B, 2, ab) + remove})) == [
        "MEM-MASTER-ONLY"]
    remove = log4j("10:00:01", A, "Removing Member [10.0.0.2]:5701 - " + U[1])
    assert check(tmp_path, {"a.log": lists("10:00:00", A, 2, ab) + remove}).result == "ok"


def test_migration_statistics(tmp_path: Path) -> None:
    def run(tasks: int, planned: int, completed: int, remaining: int) -> str:
        return (log4j("10:00:00", A, f"Repartitioning cluster data. Migration tasks count: {tasks}")
                + log4j("10:00:01", A, "All migration tasks have been completed. (repartitionTime"
                        f"=Tue Nov 14 10:00:00 UTC 2023, plannedMigrations={planned}, "
                        f"completedMigrations={completed}, remainingMigrations={remaining}, "
                        f"totalCompletedMigrations={completed})"))

    assert check(tmp_path, {"a.log": run(4, 4, 4, 0)}).result == "ok"
    assert specs_of(check(tmp_path, {"b.log": run(4, 4, 3, 0)})) == ["MIG-STATS"]
    assert specs_of(check(tmp_path, {"c.log": run(5, 4, 4, 0)})) == ["MIG-STATS"]


def migration(uid: str, partition: int, destination: str, initial: int, status: str) -> str:
    host, port = destination.split(":")
    return (f"MigrationInfo{{uuid={uid}, partitionId={partition}, source=[10.0.0.1]:5701 - "
            f"{U[0]}, sourceCurrentReplicaIndex=0, sourceNewReplicaIndex=-1, destination=["
            f"{host}]:{port} - {U[1]}, destinationCurrentReplicaIndex=-1, "
            "destinationNewReplicaIndex=0, master=[10.0.0.1]:5701, initialPartitionVersion="
            f"{initial}, partitionVersionIncrement=2, status={status}}}")


def test_partition_versions_where_logged(tmp_path: Path) -> None:
    def applied(initial: int) -> str:
        return log4j("10:00:00", B, "Applying completed migration "
                     + migration(U[3], 7, B, initial, "SUCCESS"), level="DEBUG")

    assert check(tmp_path, {"a.log": applied(1) + applied(3)}).result == "ok"
    assert specs_of(check(tmp_path, {"b.log": applied(3) + applied(1)})) == ["PT-VERSION"]


def test_shutdown_requester_is_never_a_destination(tmp_path: Path) -> None:
    handled = log4j("10:00:00", A, f"Shutdown request of Member [10.0.0.2]:5701 - {U[1]} is "
                    "handled", logger="c.h.i.p.i.MigrationManager")
    start = log4j("10:00:01", A, "Starting Migration: " + migration(U[3], 1, B, 1, "ACTIVE"),
                  level="DEBUG")
    assert specs_of(check(tmp_path, {"a.log": handled + start})) == ["SHUT-ONLY-SOURCE"]
    assert check(tmp_path, {"b.log": start + handled}).result == "ok"


def test_lost_partitions_and_stuck_rebalances_are_warnings(tmp_path: Path) -> None:
    text = (log4j("10:00:00", A, "Repartitioning cluster data. Migration tasks count: 9")
            + log4j("10:00:01", A, "partitionId=3 is completely lost!", level="WARN")
            + log4j("10:30:00", A, "Removing Member [10.0.0.2]:5701 - " + U[1]))
    report = check(tmp_path, {"a.log": text})
    assert report.result == "ok"
    assert sorted(w.kind for w in report.warnings) == ["migration-stuck", "partition-lost"]


# --- events no member can be named for ------------------------------------------------------------


def bare(version: int, listed: list[tuple[str, str]]) -> str:
    """A member list with no record line before it and no ``this`` marker (a split-brain report,
    an excerpt copied into a ticket): no member can be named for it."""
    lines = "".join(f"\tMember [{a.split(':')[0]}]:{a.split(':')[1]} - {u}\n" for a, u in listed)
    return f"Members {{size:{len(listed)}, ver:{version}}} [\n{lines}]\n"


#: bare lists that go back (9, then 7) and name two lists at one version (7), a lost partition
#: and a removal in a stream no record line names a member for
BARE = (bare(9, [(A, U[0]), (B, U[1])]) + bare(7, [(A, U[0]), (C, U[2])]) + bare(7, [(A, U[0])])
        + "2023-11-14 10:00:00,000 WARN - partitionId=3 is completely lost!\n"
        + f"2023-11-14 10:00:02,000 INFO - Removing Member [10.0.0.2]:5701 - {U[1]}\n")


def test_a_member_list_no_member_can_be_named_for_is_not_a_violation(tmp_path: Path) -> None:
    events, _ = scan(tmp_path, bare(9, [(A, U[0]), (B, U[1])]))
    assert [e.member for e in events] == [ev.UNKNOWN_MEMBER]
    report = check(tmp_path, {"bare.log": bare(9, [(A, U[0]), (B, U[1])])})
    # no violation; and with no event a spec judges, the run is incomplete, not clean
    assert report.result == "incomplete" and report.violations == []
    assert report.events_without_member == 1 and report.members == {}
    assert report.views == 1  # a list the log shows, whoever installed it


def test_unknown_members_lists_that_go_back_or_differ_are_not_violations(tmp_path: Path) -> None:
    report = check(tmp_path, {"bare.log": BARE})
    assert report.violations == [] and report.result == "incomplete"  # nothing judged
    assert report.events_without_member == 5 and report.members == {}
    assert report.views == 3
    [lost] = report.warnings  # a lost partition is worth a warning whoever reports it
    assert (lost.kind, lost.member) == ("partition-lost", ev.UNKNOWN_MEMBER)
    assert lost.message.startswith("a member the log does not name reports partition 3 lost")


def test_unknown_members_neither_hide_nor_raise_a_known_members_violation(tmp_path: Path
                                                                         ) -> None:
    known = lists("10:00:00", A, 5, [(A, U[0]), (B, U[1])]) + lists("10:00:01", A, 4, [(A, U[0])])
    report = check(tmp_path, {"a.log": known, "bare.log": BARE})
    assert [(x.spec, x.member) for x in report.violations] == [("MEM-VERSION", A)]
    assert report.events_without_member == 5 and report.members == {A: 1}


def test_event_lines_with_an_unknown_member_are_judged_by_no_spec(tmp_path: Path) -> None:
    unknown = [ev.MemberListInstalled(member=ev.UNKNOWN_MEMBER, version=v, members=m,
                                      master=m[0], source=ev.Source("x.log", n))
               for n, (v, m) in enumerate([(9, (A, B)), (7, (A, C)), (7, (A,))], start=1)]
    unknown.append(ev.MemberRemoved(member=ev.UNKNOWN_MEMBER, removed=B))
    with open(tmp_path / "e.jsonl", "w") as out:
        ev.write_jsonl(unknown, out)
    assert list(Scanner().scan(tmp_path / "e.jsonl")) == unknown
    report = v.validate([str(tmp_path / "e.jsonl")])
    assert report.result == "incomplete" and report.events_without_member == 4


def test_validate_reports_how_many_events_had_no_member(tmp_path: Path) -> None:
    (tmp_path / "bare.log").write_text(BARE)
    (tmp_path / "a.log").write_text(lists("10:00:00", A, 2, [(A, U[0]), (B, U[1])]))
    runner = CliRunner()
    result = runner.invoke(main, ["validate", str(tmp_path / "bare.log"), "--json"])
    assert result.exit_code == 3, result.output  # no event a spec judges: incomplete
    doc = json.loads(result.stdout)
    assert (doc["events_without_member"], doc["violations"], doc["views"]) == (5, [], 3)
    result = runner.invoke(main, ["validate", str(tmp_path / "bare.log")],
                           env={"COLUMNS": "200"})
    assert result.exit_code == 3, result.output
    assert "events without a member: 5 " in result.stdout
    result = runner.invoke(main, ["validate", str(tmp_path / "a.log")])
    assert result.exit_code == 0 and "without a member" not in result.stdout
    result = runner.invoke(main, ["validate", str(tmp_path / "a.log"), "--json"])
    assert json.loads(result.stdout)["events_without_member"] == 0


# --- the report: text from a log is data, never markup --------------------------------------------

#: pieces of hostile text: rich markup, links, escapes, emoji codes, control characters
HOSTILE_PIECES = ["[", "]", "[/]", "[bold red]", "[link=x]", "[/link]", "\\", "\\[b]", ":smile:",
                  ":", "\x00", "\x01", "\x1b[31m", "\x07", "\x08", "\t", "\n", "\r", "\x0b",
                  "\x7f", "\x9b", "\ud800", "\ufffe", "\uffff", "a", " ", "é", "&", "<x>",
                  "]]>", "'\""]
HOSTILE = st.lists(st.sampled_from(HOSTILE_PIECES) | st.characters(), min_size=1, max_size=4
                   ).map("".join)


def shown(text: str) -> str:
    """How a terminal report shows log text: as it is, control characters (C0, DEL, C1) and
    lone surrogates as their escapes."""
    return "".join(f"\\x{ord(c):02x}" if ord(c) < 0x20 or 0x7f <= ord(c) <= 0x9f
                   else f"\\u{ord(c):04x}" if 0xd800 <= ord(c) <= 0xdfff else c for c in text)


def in_xml(text: str) -> str:
    """How JUnit XML holds log text: as it is, each character XML 1.0 forbids as its escape."""
    return "".join(f"\\x{ord(c):02x}" if ord(c) < 0x20 and c not in "\t\n\r"
                   else f"\\u{ord(c):04x}" if 0xd800 <= ord(c) <= 0xdfff or c in "\ufffe\uffff"
                   else c for c in text)


def hostile_report(field: str, text: str) -> v.Report:
    """A report with `text` in one place log text reaches: a member's name, a file name, a
    violation's or a warning's message, a malformed line's reason."""
    member = text if field == "member" else A
    file = text if field == "file" else "m.log"
    message = text if field == "message" else "x"
    acc = Accounting(lines=3, parsed_lines=1)
    acc.malformed.append(Malformed(file, 3, text if field == "reason" else "y"))
    return v.Report(
        [file], acc, members={member: 1},
        violations=[v.Violation("MEM-VERSION", member, (ev.Source(file, 1),), message)],
        warnings=[Notice("partition-lost", member, (ev.Source(file, 2),), message)])


@settings(max_examples=300, deadline=None)
@given(st.sampled_from(["member", "file", "message", "reason"]), HOSTILE)
def test_log_text_reaches_the_terminal_as_it_is(field: str, text: str) -> None:
    console = Console(file=io.StringIO(), width=100)  # emoji and markup on, as by default
    render_report(console, hostile_report(field, text))
    out = console.file.getvalue()  # type: ignore[attr-defined]
    assert shown(text) in out
    assert "\x1b" not in out and "\x00" not in out


@settings(max_examples=300, deadline=None)
@given(st.sampled_from(["member", "file", "message"]), HOSTILE)
def test_junit_is_well_formed_whatever_the_log_holds(field: str, text: str) -> None:
    root = ET.fromstring(validate_junit(hostile_report(field, text)))
    [failure] = root.iter("failure")
    assert in_xml(text) in (failure.text or "")


def test_xml_text_replaces_what_xml_forbids_with_visible_escapes() -> None:
    assert xml_text("a\x00b\x1b\tc\n\r\ud800\ufffe\uffff\x7f😄 é<&") == (
        "a\\x00b\\x1b\tc\n\r\\ud800\\ufffe\\uffff\x7f😄 é<&")


def write_member_list(path: Path, hosts: list[str], me: str = "hz-a") -> None:
    """A log of member `me` that installs a list of `hosts` (without itself: a violation whose
    message names every host)."""
    listed = "".join(f"\tMember [{h}]:5701 - {U[i]}\n" for i, h in enumerate(hosts))
    path.write_text(f"2023-11-14 10:00:00,000 [ INFO] [hz.main] [c.h.i.c.ClusterService]: "
                    f"[{me}]:5701 [dev] [5.3.0] \n\nMembers {{size:{len(hosts)}, ver:2}} [\n"
                    f"{listed}]\n\n")


def test_host_names_are_not_markup_in_the_terminal_report(tmp_path: Path) -> None:
    write_member_list(tmp_path / "hosts.log", ["hz-b", "hz-c"])
    result = CliRunner().invoke(main, ["validate", str(tmp_path / "hosts.log")],
                                env={"COLUMNS": "200"})
    assert result.exit_code == 1, result.output
    assert "hz-a:5701 installs {v=2, [hz-b:5701, hz-c:5701]}, which omits itself" in (
        result.stdout)


def test_a_markup_closing_tag_in_a_log_is_shown_not_a_crash(tmp_path: Path) -> None:
    path = tmp_path / "markup.log"
    write_member_list(path, ["hz-a", "hz-b"])
    path.write_text(path.read_text().replace(f"{U[0]}\n", f"{U[0]} this [/] [bold red]\n"))
    result = CliRunner().invoke(main, ["validate", str(path)], env={"COLUMNS": "200"})
    assert result.exit_code == 3, result.output  # malformed lines, nothing judged
    assert "malformed at '[/] [bold red]" in result.stdout


def test_emoji_codes_in_a_log_stay_text(tmp_path: Path) -> None:
    write_member_list(tmp_path / "emoji.log", [":smile:", "hz-b"])
    result = CliRunner().invoke(main, ["validate", str(tmp_path / "emoji.log")],
                                env={"COLUMNS": "200"})
    assert result.exit_code == 1, result.output
    assert "[:smile::5701, hz-b:5701]" in result.stdout and "😄" not in result.stdout


def test_control_characters_in_host_names_keep_the_junit_report_well_formed(tmp_path: Path
                                                                            ) -> None:
    write_member_list(tmp_path / "ctl.log", ["h\x01\x1bb", "hz\x08c"])
    junit = tmp_path / "report.xml"
    result = CliRunner().invoke(main, ["validate", str(tmp_path / "ctl.log"), "--junit",
                                       str(junit)], env={"COLUMNS": "200"})
    assert result.exit_code == 1, result.output
    [failure] = ET.parse(junit).getroot().iter("failure")
    assert "installs {v=2, [h\\x01\\x1bb:5701, hz\\x08c:5701]}" in (failure.text or "")
    assert "[h\\x01\\x1bb:5701, hz\\x08c:5701]" in result.stdout and "\x1b" not in result.stdout


# --- the real excerpts, the command line, the round trip ------------------------------------------


def test_every_real_excerpt_validates_clean_with_every_line_accounted_for() -> None:
    index = {e["file"]: e for e in json.loads((LOGS / "index.json").read_text())}
    for name, entry in index.items():
        report = v.validate([str(LOGS / name)])
        acc = report.accounting
        assert report.result == "ok", (name, report.violations)
        assert acc.lines == entry["line_count"], name
        assert acc.malformed == [], (name, acc.malformed)
        assert acc.events > 0, name
    together = v.validate([str(LOGS / n) for n in ("hz_06.log", "hz_07.log", "hz_08.log")])
    assert together.result == "ok" and set(together.members) == {"<ip>:<portA>", "<ip>:<portB>"}


def test_validate_json_follows_the_contract() -> None:
    result = CliRunner().invoke(main, ["validate", *map(str, sorted(LOGS.glob("*.log"))),
                                       "--json"])
    assert result.exit_code == 0, result.output
    doc = json.loads(result.output)
    for key in ("lines", "parsed_lines", "ignored_lines", "malformed", "events", "members",
                "violations", "result"):
        assert key in doc
    assert doc["lines"] == doc["parsed_lines"] + doc["ignored_lines"] + len(doc["malformed"])
    assert doc["lines"] == 181 and doc["result"] == "ok"


def test_parse_prints_canonical_json_lines() -> None:
    result = CliRunner().invoke(main, ["parse", str(LOGS / "hz_06.log")])
    assert result.exit_code == 0
    docs = [json.loads(line) for line in result.stdout.splitlines()]
    assert docs[0] == {"type": "member_list_installed", "member": "<ip>:<portA>", "version": 4,
                       "members": ["<ip>:<portA>", "<ip>:<portB>"], "master": "<ip>:<portA>",
                       "uuids": [U[3], U[2]], "order": docs[0]["order"],
                       "source": {"file": str(LOGS / "hz_06.log"), "line": 2}}
    assert [d["type"] for d in docs] == ["member_list_installed", "repartitioning",
                                         "migrations_completed"]


def test_events_round_trip_through_json_lines(tmp_path: Path) -> None:
    events = list(Scanner().scan(LOGS / "hz_06.log"))
    with open(tmp_path / "e.jsonl", "w") as out:
        ev.write_jsonl(events, out)
    again = list(Scanner().scan(tmp_path / "e.jsonl"))
    assert again == events and [e.source for e in again] == [e.source for e in events]


@pytest.mark.parametrize(("variant", "spec", "scope"), [
    ("hz38-unordered-members", "MEM-VIEW-ORDER", ["--suspicions", "0", "--publishes", "1"]),
    ("hz38-local-removal", "MEM-MASTER-ONLY", ["--joins", "0"]),
    ("mutant-no-self-check", "MEM-VIEW-INTEGRITY", ["--joins", "0"]),
])
def test_counterexamples_exported_as_events_and_log_text_break_the_same_spec(
        tmp_path: Path, variant: str, spec: str, scope: list[str]) -> None:
    runner = CliRunner()
    trace = tmp_path / "trace.json"
    result = runner.invoke(main, ["check", "membership", "--variant", variant, *scope,
                                  "--trace-out", str(trace), "--no-progress"])
    assert result.exit_code == 1, result.output
    assert json.loads(trace.read_text())["spec"] == spec
    result = runner.invoke(main, ["export", str(trace), "--events", str(tmp_path / "t.jsonl"),
                                  "--log", str(tmp_path / "logs")])
    assert result.exit_code == 0, result.output
    for target in (tmp_path / "t.jsonl", tmp_path / "logs"):
        result = runner.invoke(main, ["validate", str(target), "--json"])
        assert result.exit_code == 1, result.output
        doc = json.loads(result.output)
        assert spec in {x["spec"] for x in doc["violations"]}
        assert doc["malformed"] == []


@pytest.mark.parametrize(("doc", "says"), [
    ({"steps": 3}, "field 'steps' is not a list"),
    ({"steps": [7]}, "step 1 is not an object with a list of events"),
    ({"steps": [{"step": 1, "events": 5}]}, "step 1 is not an object with a list of events"),
    ({"steps": [{"step": 1, "events": ["x"]}]}, "step 1: an event is not an object"),
    ({"steps": [{"step": 1, "events": [{"type": "nope"}]}]}, "step 1"),
    ({"init_events": 4, "steps": []}, "step 0 is not an object with a list of events"),
])
def test_export_names_what_is_wrong_in_a_malformed_artifact(
        tmp_path: Path, doc: dict[str, object], says: str) -> None:
    trace = tmp_path / "trace.json"
    trace.write_text(json.dumps(doc))
    result = CliRunner().invoke(main, ["export", str(trace), "--events",
                                       str(tmp_path / "t.jsonl")])
    assert result.exit_code == 2, result.output
    assert says in result.output and "Traceback" not in result.output
    assert result.exception is None or isinstance(result.exception, SystemExit)


def test_a_violation_in_the_terminal_report_is_never_cut(tmp_path: Path) -> None:
    """At 80 columns a violation keeps its spec and member whole on its first line and its
    whole message below it, wrapped at spaces."""
    runner = CliRunner()
    trace = tmp_path / "trace.json"
    runner.invoke(main, ["check", "membership", "--variant", "hz38-unordered-members",
                         "--suspicions", "0", "--publishes", "1", "--trace-out", str(trace),
                         "--no-progress"])
    runner.invoke(main, ["export", str(trace), "--log", str(tmp_path / "logs")])
    doc = json.loads(runner.invoke(main, ["validate", str(tmp_path / "logs"), "--json"]).stdout)
    (v,) = doc["violations"]
    assert len(v["message"]) > 80
    result = runner.invoke(main, ["validate", str(tmp_path / "logs")])
    assert result.exit_code == 1
    lines = result.stdout.splitlines()
    assert any(line.startswith(f"MEM-VIEW-ORDER  {v['member']}  ") for line in lines)
    assert " ".join(v["message"].split()) in " ".join(result.stdout.split())
    assert lines[-1].startswith("verdict: VIOLATION, ")


@pytest.mark.parametrize("block", [64, 300, 4096])
def test_block_boundaries_change_nothing(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                         block: int) -> None:
    from partsafe.traces import scanner

    text = "".join((LOGS / n).read_text() for n in ("hz_05.log", "hz_28.log", "hz_06.log"))
    whole, acc = scan(tmp_path, text)
    monkeypatch.setattr(scanner, "BLOCK", block)
    small, acc_small = scan(tmp_path, text, name="m2.log")
    assert [(e.TYPE, e.source.line) for e in small] == [(e.TYPE, e.source.line) for e in whole]
    assert (acc_small.lines, acc_small.parsed_lines, acc_small.malformed) == (
        acc.lines, acc.parsed_lines, acc.malformed)


# --- what a run reads, and a run that judges nothing ----------------------------------------------

#: an Ignite 3 log (JavaLoggerFormatter's layout) with no rebalance or raft message: the node's
#: start (IgniteImpl) and a table created (TableManager)
IGNITE = ("2022-06-23 13:18:27:798 +0300 [INFO][main][IgniteImpl] Apache Ignite started "
          "successfully!\n"
          "2022-06-23 13:18:28:011 +0300 [INFO][%node1%tableManager-io-2][TableManager] "
          "Table created [name=T1]\n")
IGNITE_SPECS = ["IGN-ONE-LEADER", "IGN-RESTART", "IGN-NO-LOST-REDUCTION", "IGN-STALE-TRIGGER",
                "IGN-CONVERGE"]
PASSWD = "root:x:0:0:root:/root:/bin/bash\ndaemon:x:1:1:daemon:/usr/sbin:/usr/sbin/nologin\n"


def run(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(main, list(args))
    assert "Traceback" not in result.output, result.output
    return result.exit_code, result.stdout, result.stderr


def test_a_run_that_judges_nothing_is_incomplete_not_clean(tmp_path: Path) -> None:
    """An Ignite 3 log without rebalance or raft lines and a text that is no log, named on the
    command line: both are read (the second as a Hazelcast log), no event is found, and the run
    says so, naming what each kind of file was searched for: exit 3, result incomplete, each
    file's status, JUnit errors instead of passes, a human report that ends with the one verdict
    line."""
    (tmp_path / "ignite.log").write_text(IGNITE)
    (tmp_path / "passwd").write_text(PASSWD)
    paths = [str(tmp_path / "ignite.log"), str(tmp_path / "passwd")]
    code, out, _ = run("validate", "--json", "--junit", str(tmp_path / "j.xml"), *paths)
    doc = json.loads(out)
    assert code == 3 and doc["result"] == "incomplete" and doc["events"] == 0
    assert doc["files"] == paths
    assert doc["incomplete_reason"].startswith(
        "no event of Ignite 3's rebalance or raft messages or Hazelcast's membership or "
        f"migration protocol was found in the 2 files read: {paths[0]} (2 lines), {paths[1]} "
        "(2 lines) (an Ignite 3 node logs them at INFO")
    assert [(i["file"], i["status"], i["lines"], i["events"]) for i in doc["inputs"]] == [
        (paths[0], "nothing recognised", 2, 0), (paths[1], "nothing recognised", 2, 0)]
    suite = ET.parse(tmp_path / "j.xml").getroot()
    # no event: no spec had evidence, and each spec these files judge is in error in JUnit
    assert doc["specs"] == [] and doc["evidence"] == {}
    assert doc["no_evidence"] == [s.id for s in all_specs()
                                  if s.id in {*v.LOG_SPECS, *IGNITE_SPECS}]
    assert all(doc["not_judged"][s].startswith("No evidence in this run")
               for s in doc["no_evidence"])
    assert suite.get("errors") == str(len(doc["no_evidence"])) and suite.get("failures") == "0"
    judged = [c for c in suite.iter("testcase") if c.find("skipped") is None]
    assert [c.get("name") for c in judged] == doc["no_evidence"]
    assert all(c.find("error") is not None
               and c.find("error").get("message") == "incomplete: nothing judged"
               for c in judged)
    code, out, _ = run("validate", *paths)
    assert code == 3
    verdict = out.rstrip().splitlines()[-1]
    assert verdict.startswith(f"verdict: INCOMPLETE, {len(doc['specs'])} specs over 2 files")
    assert "nothing recognised" in out and out.count("verdict:") == 1
    _, _, err = run("parse", *paths)
    assert f"{paths[0]}: nothing recognised" in err and f"{paths[1]}: nothing recognised" in err


def test_events_that_name_no_member_are_not_a_judged_file(tmp_path: Path) -> None:
    (tmp_path / "bare.log").write_text(bare(9, [(A, U[0]), (B, U[1])]))
    (tmp_path / "a.log").write_text(lists("10:00:00", A, 2, [(A, U[0]), (B, U[1])]) + BARE)
    report = v.validate([str(tmp_path / "bare.log")])
    [status] = report.inputs
    assert (status.status, status.events) == ("nothing recognised", 1)
    assert status.reason.startswith("its 1 event names no member")
    assert report.incomplete_reason is not None
    assert report.incomplete_reason.startswith("the 1 event found in the 1 file read names no "
                                               "member")
    report = v.validate([str(tmp_path / "a.log")])
    assert report.result == "ok" and report.inputs[0].status == "judged"
    assert report.inputs[0].reason == "6 events in 21 lines (5 without a member)"


def test_the_verdict_line_ends_the_report_and_agrees_with_the_exit_status(tmp_path: Path
                                                                        ) -> None:
    code, out, _ = run("validate", str(LOGS / "hz_05.log"))
    verdict = out.rstrip().splitlines()[-1]
    # the specs with evidence in this excerpt: its two member lists judge a few of the form's
    judged = json.loads(run("validate", "--json", str(LOGS / "hz_05.log"))[1])["specs"]
    assert 0 < len(judged) < JUDGED
    assert code == 0 and verdict.startswith(f"verdict: OK, {len(judged)} specs over 1 ")
    assert f"file: {LOGS / 'hz_05.log'}: judged, 2 events in 55 lines" in out
    text = lists("10:00:00", A, 5, [(A, U[0]), (B, U[1])]) + lists("10:00:01", A, 4, [(A, U[0])])
    (tmp_path / "a.log").write_text(text)
    code, out, _ = run("validate", str(tmp_path / "a.log"))
    last = out.rstrip().splitlines()[-1]
    assert code == 1 and last.startswith("verdict: VIOLATION") and "of MEM-VERSION" in last
    code, out, _ = run("validate", "--junit", str(tmp_path / "j.xml"), str(LOGS / "hz_05.log"))
    suite = ET.parse(tmp_path / "j.xml").getroot()
    assert code == 0 and suite.get("errors") == "0" and suite.get("failures") == "0"


def hole(size: int = 4096) -> bytes:
    """What copytruncate leaves where the rotated-away log was: NUL bytes."""
    return b"\x00" * size


def test_a_copytruncate_hole_is_one_malformed_line_and_the_rest_is_read(tmp_path: Path) -> None:
    log = (LOGS / "hz_05.log").read_bytes()
    (tmp_path / "plain.log").write_bytes(log)
    (tmp_path / "rotated.log").write_bytes(hole() + log)
    plain = v.validate([str(tmp_path / "plain.log")])
    rotated = v.validate([str(tmp_path / "rotated.log")])
    assert rotated.result == "ok" and rotated.accounting.events == plain.accounting.events == 2
    assert rotated.accounting.lines == plain.accounting.lines == 55
    assert [(m.line, m.reason) for m in rotated.accounting.malformed] == [
        (1, "4,096 NUL bytes (what copytruncate log rotation leaves), skipped; the rest of the "
            "line is read")]
    # a hole before a message of ours: the message is read, the line stays malformed
    removal = log4j("10:00:00", A, "Removing Member [10.0.0.2]:5701 - " + U[1]).encode()
    events, acc = scan(tmp_path, hole(10) + removal.rstrip() + hole(3) + b"\n" + removal, "r.log")
    assert [e.TYPE for e in events] == ["member_removed", "member_removed"]
    assert [(m.line, m.reason) for m in acc.malformed] == [
        (1, "13 NUL bytes, skipped; the rest of the line is read")]
    assert acc.parsed_lines == 1 and acc.lines == 2
    code, out, err = run("parse", str(tmp_path / "rotated.log"))
    assert code == 0 and len(out.splitlines()) == 2 and "4,096 NUL bytes" in err


@pytest.mark.parametrize("block", [4096, 1 << 20])
def test_a_hole_longer_than_the_head_and_the_blocks_is_one_line(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, block: int) -> None:
    from partsafe.traces import scanner

    monkeypatch.setattr(scanner, "BLOCK", block)
    log = (LOGS / "hz_06.log").read_bytes()
    events, acc = scan(tmp_path, log + hole(200_000) + log + hole(5))
    assert len(events) == 6 and acc.lines == 2 * log.count(b"\n") + 1
    assert [(m.line, m.reason.removesuffix(", skipped; the rest of the line is read"))
            for m in acc.malformed] == [
        (11, "200,000 NUL bytes (what copytruncate log rotation leaves)"), (21, "5 NUL bytes")]


@pytest.mark.parametrize("seed", range(6))
def test_holes_anywhere_are_their_lines_malformed_and_the_rest_as_without_them(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, seed: int) -> None:
    """NUL runs of any length in random lines, across blocks of any size: each such line is
    one malformed entry with its count, and the events and the line count are the log's."""
    from partsafe.traces import scanner

    rng = random.Random(seed)
    monkeypatch.setattr(scanner, "BLOCK", rng.choice([512, 4096, 1 << 16]))
    lines = ((LOGS / "hz_06.log").read_bytes() * 6).split(b"\n")
    holes: dict[int, int] = {}  # line -> its NUL bytes
    out = []
    for number, line in enumerate(lines, start=1):
        if rng.random() < 0.15 and number < len(lines):
            for run in [rng.choice([1, 7, 300, 5000]) for _ in range(rng.randint(1, 2))]:
                at = rng.randint(0, len(line))
                line = line[:at] + b"\x00" * run + line[at:]
            holes[number] = line.count(b"\x00")
        out.append(line)
    clean, clean_acc = scan(tmp_path, b"\n".join(lines), "clean.log")
    events, acc = scan(tmp_path, b"\n".join(out), "holes.log")
    assert [(e.TYPE, e.member) for e in events] == [(e.TYPE, e.member) for e in clean]
    assert acc.lines == clean_acc.lines and not clean_acc.malformed
    assert [(m.line, m.reason.split(" NUL")[0]) for m in acc.malformed] == [
        (n, f"{count:,}") for n, count in sorted(holes.items())]


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from([
    "\tMember [10.0.0.1]:5701 - u1", "\tMember [10.0.0.2]:5701 - u2 this", "  Member [h]:1 - u",
    "\tMember [a]:1 | x", "\tMember [a]:1 - u\r", "", "]", "}", "  ]", "]\r", "2023-11-14 x",
    "\tMembers", "\tMember"]), max_size=8), st.booleans())
def test_a_member_list_body_is_told_by_counting_as_by_its_regex(rows: list[str],
                                                                 end: bool) -> None:
    """The scanner's count of a usual member list body is what its regex reads."""
    from partsafe.traces import scanner

    block = ("Members {size:2, ver:3} [\n" + "\n".join(rows) + ("\n" if end else "")).encode()
    log = scanner._LogFile(scanner.Scanner(), "m.log")
    log.block, log.end = block, len(block)
    pos = block.index(b"\n") + 1
    plain = scanner._PLAIN_LIST.match(block, pos, len(block))
    assert log._plain_list(pos) == (None if plain is None else (
        plain.end(1), plain.group(2).decode(), plain.end()))


def binaries(where: Path) -> list[Path]:
    """Files that are not logs, whatever their names: a gzip of random bytes, an ELF, random
    bytes."""
    rng = random.Random(7)
    (where / "heap.dump.gz").write_bytes(gzip.compress(rng.randbytes(50_000)))
    (where / "hazelcast-node").write_bytes(b"\x7fELF\x02\x01\x01" + bytes(9)
                                            + b"\x02\x00\x3e\x00" + rng.randbytes(30_000))
    (where / "member.log.1").write_bytes(rng.randbytes(3_000))
    return [where / "heap.dump.gz", where / "hazelcast-node", where / "member.log.1"]


def test_one_binary_file_does_not_refuse_the_run(tmp_path: Path) -> None:
    for name in ("hz_04.log", "hz_05.log"):
        (tmp_path / name).write_bytes((LOGS / name).read_bytes())
    bad = binaries(tmp_path)
    code, out, _ = run("validate", "--json", str(tmp_path))
    doc = json.loads(out)
    assert code == 0 and doc["result"] == "ok" and doc["events"] == 4
    status = {Path(i["file"]).name: (i["status"], i["reason"]) for i in doc["inputs"]}
    assert {n: s for n, (s, _) in status.items()} == {
        "hazelcast-node": "skipped", "heap.dump.gz": "skipped", "hz_04.log": "judged",
        "hz_05.log": "judged", "member.log.1": "skipped"}
    assert all(status[p.name][1].startswith("binary data: ") for p in bad)
    assert [Path(f).name for f in doc["files"]] == ["hz_04.log", "hz_05.log"]
    code, out, err = run("parse", str(tmp_path))
    assert code == 0 and len(out.splitlines()) == 4
    assert all(f"{p}: skipped: binary data" in err.replace("\n", " ") for p in bad)
    # every file skipped, also one named on the command line: nothing judged
    code, out, _ = run("validate", "--json", *map(str, bad))
    doc = json.loads(out)
    assert code == 3 and doc["result"] == "incomplete" and doc["files"] == []
    assert doc["incomplete_reason"].startswith("every file was skipped, so nothing was judged: ")
    assert run("validate", str(tmp_path / "nope.log"))[0] == 2


def test_a_directory_reads_its_logs_and_skips_what_is_not_a_log(tmp_path: Path) -> None:
    """The excerpts' directory holds a README.md and an index.json: skipped by name and by
    content, with the reason; so is source code and text that is not a log, while event JSON
    Lines and a JSON log layout named ``.json`` are read. A file named on the command line is
    read whatever its name."""
    logs = tmp_path / "logs"
    logs.mkdir()
    for p in LOGS.iterdir():
        (logs / p.name).write_bytes(p.read_bytes())
    (tmp_path / "c.log").write_text(lists("10:00:00", C, 1, [(C, U[2])]))
    with open(logs / "events.json", "w") as out:
        ev.write_jsonl(list(Scanner().scan(tmp_path / "c.log")), out)
    (logs / "ecs.json").write_text(json.dumps({
        "@timestamp": "2023-11-14T10:00:00.000Z",
        "message": "[10.0.0.9]:5701 [dev] [5.3.0] [10.0.0.9]:5701 is STARTING"})
        + "\n")
    (logs / "collect.py").write_text("print('hello')\n")
    (logs / "notes.txt").write_text("Things to look at after the incident.\nThe second node.\n")
    report = v.validate([str(logs)])
    status = {Path(s.file).name: (s.status, s.reason) for s in report.inputs}
    assert status["README.md"] == ("skipped", "documentation by its name (.md), not a log")
    assert status["collect.py"] == ("skipped", "source code by its name (.py), not a log")
    assert status["index.json"] == (
        "skipped", "JSON, not JSON Lines (neither events nor a JSON log layout)")
    assert status["notes.txt"] == (
        "skipped", "text in which no line of its first 64 KB looks like a log record")
    assert status["events.json"][0] == status["ecs.json"][0] == "judged"
    assert {n for n, (s, _) in status.items() if s == "judged"} == {
        p.name for p in LOGS.glob("*.log")} | {"events.json", "ecs.json"}
    assert report.accounting.lines == 181 + 1 + 1 and report.result == "ok"
    named = v.validate([str(logs / "README.md")])
    assert [s.status for s in named.inputs] == ["nothing recognised"]
    assert named.result == "incomplete"


# --- hard-wrapped messages under a layout's prefix ------------------------------------------------


def claim() -> str:
    """The §5 mastership claim of tests/traces/test_payload.py (two MemberInfo of 5.x)."""
    cases = importlib.import_module("test_payload")
    return next(t for t, _ in cases.MASTERSHIP if t.startswith("Mastership is claimed with"))


LAYOUTS = {
    "compose": lambda line: f"hz2-1  | {line}",
    "compose --timestamps": lambda line: f"hz2-1  | 2023-11-14T10:00:00.123456789Z {line}",
    "docker --timestamps": lambda line: f"2023-11-14T10:00:00.123456789Z {line}",
    "docker json-file": lambda line: json.dumps({"log": line + "\n", "stream": "stdout",
                                                 "time": "2023-11-14T10:00:00Z"}),
}


@pytest.mark.parametrize("name", LAYOUTS)
def test_a_hard_wrapped_claim_under_a_layout_prefix_is_joined_back(tmp_path: Path,
                                                                   name: str) -> None:
    """The claim's record hard-wrapped anywhere after its member prefix, at every cut into two
    lines and at widths that cut it into several, each line with the layout's prefix (another
    member's lines in between under compose): always the one claim, no malformed line."""
    wrap = LAYOUTS[name]
    record = log4j("10:00:00", B, claim(), logger="c.h.i.c.i.MembershipManager").rstrip("\n")
    start = record.index("Mastership")
    noise = ["hz1-1  | 2023-11-14 10:00:00,001 [ INFO] [hz.main] [c.e.Shop]: GET /orders"]
    cuts = [[record[:i], record[i:]] for i in range(start + 1, len(record))]
    cuts += [[record[i:i + width] for i in range(0, len(record), width)]
             for width in range(start + 1, len(record), 7)]
    wrong = []
    for k, pieces in enumerate(cuts):
        lines = [wrap(p) for p in pieces]
        if name.startswith("compose"):
            lines[1:1] = noise
        events, acc = scan(tmp_path, "\n".join(lines) + "\n", f"w{k}.log")
        if [(e.TYPE, e.members) for e in events] != [
                ("mastership_claimed", ("10.0.0.2:5701", "10.0.0.3:5701"))] or acc.malformed:
            wrong.append(pieces)
    assert wrong == []


# --- long member lists ----------------------------------------------------------------------------


def big_list(n: int) -> str:
    """A member list of `n` members, as a master of a cluster that large logs it."""
    rows = "".join(f"\tMember [10.{i >> 16 & 255}.{i >> 8 & 255}.{i & 255}]:5701 - "
                   f"{i:08x}-0000-4000-8000-000000000000{' this' if i == 0 else ''}\n"
                   for i in range(n))
    return (log4j("10:00:00", "10.0.0.0:5701", "") + f"\nMembers {{size:{n}, ver:{n + 1}}} [\n"
            + rows + "]\n\n")


def test_a_member_list_of_50000_members_is_read_whole(tmp_path: Path) -> None:
    events, acc = scan(tmp_path, big_list(50_000))
    [installed] = events
    assert len(installed.members) == 50_000 and installed.version == 50_001
    assert installed.members[-1] == "10.0.195.79:5701"
    assert acc.malformed == [] and acc.parsed_lines == 50_000 + 4


def test_a_member_list_beyond_the_cap_says_what_happened(tmp_path: Path,
                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    from partsafe.traces import scanner

    monkeypatch.setattr(scanner, "MAX_MEMBERS", 1_000)
    events, acc = scan(tmp_path, big_list(2_500) + log4j("10:00:01", A, "Removing Member "
                                                         "[10.0.0.2]:5701 - " + U[1]))
    assert [e.TYPE for e in events] == ["member_removed"]
    assert [(m.line, m.reason) for m in acc.malformed] == [(1, (
        "a member list of 2,500 member lines, stating size 2,500: longer than the 1,000 members "
        "the scanner holds in memory; not judged"))]
    assert acc.parsed_lines == 1 and acc.lines == 2_500 + 6

"""Verdicts under clock skew: a violation across members is definite when every order the log
allows breaks the spec, possible when some does (`partsafe.checker.validation.skew`)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from partsafe.checker.cli.main import main
from partsafe.checker.validation import shards, skew
from partsafe.traces import events as ev
from partsafe.traces.writer import LogWriter

T = 1_700_000_000_000  # 2023-11-14 22:13:20 UTC


def compose(lines: list[tuple[str, ev.Event, int]]) -> str:
    """Hazelcast lines in the distribution's layout, each after its docker-compose service
    prefix, in the given order (docker-compose interleaves services out of time order)."""
    writer = LogWriter()
    out = []
    for service, e, at_ms in lines:
        text = writer.line(e, 0, at_ms=at_ms)
        assert text is not None
        out += [f"{service}  | {line}" for line in text.splitlines() if line]
    return "\n".join(out) + "\n"


def migration_to(destination: str) -> ev.MigrationStarted:
    return ev.MigrationStarted(member="A", role="master", migration="m1", partition=3,
                               source_member="A", destination=destination,
                               source_current_index=0, source_endpoint="A", planned_version=1,
                               partition_version=1)


def write_restart_50ms_after(path: Path) -> Path:
    """The master A handles B's shutdown request, then starts a migration to B 950 ms later;
    B's log says it restarted (a new incarnation, which may receive data again) 50 ms after
    that migration started, by B's clock. docker-compose wrote B's line first. SHUT-ONLY-SOURCE
    is broken definitely at no skew, possibly within 200 ms."""
    path.write_text(compose([
        ("hz1-1", ev.MemberListInstalled(member="A", version=3, members=("A", "B"),
                                         master="A"), T),
        ("hz1-1", ev.ShutdownRequestHandled(member="A", requester="B"), T + 100),
        ("hz2-1", ev.MemberStarted(member="B"), T + 1_100),
        ("hz1-1", migration_to("B"), T + 1_050),
    ]))
    return path


@pytest.fixture
def restart_50ms_after(tmp_path: Path) -> Path:
    """`write_restart_50ms_after`'s log."""
    return write_restart_50ms_after(tmp_path / "compose.log")


def run(*args: str) -> tuple[int, dict]:
    result = CliRunner().invoke(main, ["validate", *args, "--json"])
    return result.exit_code, json.loads(result.stdout)


def test_at_no_skew_the_timestamps_order_is_the_order_and_the_violation_is_definite(
        restart_50ms_after: Path) -> None:
    code, doc = run(str(restart_50ms_after), "--max-skew", "0")
    assert code == 1, doc
    (v,) = doc["violations"]
    assert v["spec"] == "SHUT-ONLY-SOURCE" and v["certainty"] == "definite"
    assert doc["possible_violations"] == [] and doc["max_skew_ms"] == 0


def test_within_the_skew_bound_the_violation_is_possible_and_shown_in_an_order_that_breaks_it(
        restart_50ms_after: Path) -> None:
    code, doc = run(str(restart_50ms_after), "--max-skew", "200ms")
    assert code == 0, doc
    assert doc["result"] == "ok" and doc["violations"] == []
    (v,) = doc["possible_violations"]
    assert v["spec"] == "SHUT-ONLY-SOURCE" and v["certainty"] == "possible"
    shown = [(p["member"], p["type"]) for p in v["order"]]
    start = shown.index(("10.0.0.1:5701", "migration_started"))
    restart = shown.index(("10.0.0.2:5701", "member_started"))
    assert start < restart  # the order that breaks it: the migration before B's restart
    times = [p["time_us"] for p in v["order"]]
    assert times == sorted(times) and len(set(times)) == len(times)
    # B's restart is line 7 of the file (after the member list's 5 lines and the shutdown's),
    # the migration line 8
    assert [(p["line"], p["type"]) for p in v["order"]] == [
        (8, "migration_started"), (7, "member_started")]


def test_strict_fails_on_a_possible_violation(restart_50ms_after: Path) -> None:
    code, doc = run(str(restart_50ms_after), "--max-skew", "200ms", "--strict")
    assert code == 1 and doc["result"] == "violation" and doc["strict"] is True


def test_the_default_bound_is_stated_and_used(restart_50ms_after: Path) -> None:
    code, doc = run(str(restart_50ms_after))
    assert doc["max_skew_ms"] == skew.DEFAULT_MAX_SKEW_MS == 100
    assert code == 0 and len(doc["possible_violations"]) == 1


def test_the_terminal_report_says_possible_and_shows_the_order(restart_50ms_after: Path) -> None:
    result = CliRunner().invoke(main, ["validate", str(restart_50ms_after), "--max-skew",
                                       "200ms"])
    assert result.exit_code == 0
    out = result.output
    assert "possible violations (1), under a clock skew of at most 200 ms" in out
    assert "an order the log allows that breaks it" in out
    assert out.rstrip().splitlines()[-1].startswith("verdict: OK")
    assert "1 possible violation under clock skew (findings)" in out


def test_a_violation_no_order_avoids_is_definite_whatever_the_skew(tmp_path: Path) -> None:
    """Two lists with one version of one master, 50 ms apart on two members: every order shows
    both, so MEM-VERSION is broken in all of them."""
    path = tmp_path / "compose.log"
    path.write_text(compose([
        ("hz1-1", ev.MemberListInstalled(member="A", version=3, members=("A", "B"),
                                         master="A"), T),
        ("hz2-1", ev.MemberListInstalled(member="B", version=3, members=("A", "B", "C"),
                                         master="A"), T + 50),
    ]))
    for bound in ("0", "200ms", "10s"):
        code, doc = run(str(path), "--max-skew", bound)
        assert code == 1, (bound, doc)
        assert {(v["spec"], v["certainty"]) for v in doc["violations"]} == {
            ("MEM-VERSION", "definite")}


def test_a_violation_of_one_member_needs_no_solver(tmp_path: Path) -> None:
    path = tmp_path / "a.log"
    path.write_text(compose([
        ("hz1-1", ev.MemberListInstalled(member="A", version=4, members=("A", "B"),
                                         master="A"), T),
        ("hz1-1", ev.MemberListInstalled(member="A", version=3, members=("A", "B"),
                                         master="A"), T + 50),
    ]))
    code, doc = run(str(path), "--max-skew", "10s")
    assert code == 1
    assert [(v["spec"], v["certainty"], "order" in v) for v in doc["violations"]] == [
        ("MEM-VERSION", "definite", False)]


# --- the decision itself, on hand-made shards -------------------------------------------------


def _part(spec: str, name: str) -> shards.Part:
    return next(p for p in shards.parts([spec]) if type(p.monitor).__name__ == name)


def _steps(*timed: tuple[ev.Event, int, int]) -> list[skew.Step]:
    """(event, file index, ms): each file one member's stream, merged by time."""
    keyed = [((ms, fi, 0, i), dataclasses_replace(e, ms), False)
             for i, (e, fi, ms) in enumerate(timed)]
    return sorted(keyed, key=lambda s: s[0])


def dataclasses_replace(e: ev.Event, ms: int) -> ev.Event:
    import dataclasses

    return dataclasses.replace(e, order=ms)


def test_a_causal_edge_rules_out_an_order_the_clocks_allow() -> None:
    """A shutdown request is handled after it was made: with a huge skew the handled line may
    come before B's request by the clocks, yet the request is still first, and B's restart
    after the request's handling keeps the migration clean in every order but one."""
    part = _part("SHUT-ONLY-SOURCE", "HandledRequest")
    steps = _steps((ev.ShutdownRequestHandled(member="A", requester="B"), 0, 1_000),
                   (migration_to("B"), 0, 2_000),
                   (ev.MemberStarted(member="B"), 1, 2_010))
    at = steps[1][0]
    assert skew.decide(part, steps, at, 0).certainty == "definite"
    assert skew.decide(part, steps, at, 50).certainty == "possible"
    assert skew.causal(ev.ShutdownRequested(member="B"),
                       ev.ShutdownRequestHandled(member="A", requester="B"))
    assert skew.causal(ev.RaftVote(member="B", term=2, candidate="A"),
                       ev.RaftLeader(member="A", term=2, votes=("A", "B")))
    assert not skew.causal(ev.RaftVote(member="C", term=2, candidate="A"),
                           ev.RaftLeader(member="A", term=2, votes=("A", "B")))
    # a migration commits at its destination, then at its master, then at its source
    dest, master, source = (ev.MigrationCommitted(member=m, role=r, migration="m1")
                            for m, r in (("B", "destination"), ("A", "master"), ("C", "source")))
    assert skew.causal(dest, master) and skew.causal(master, source)
    assert not skew.causal(source, master)
    assert not skew.causal(master, ev.MigrationCommitted(member="C", role="source",
                                                         migration="m2"))


def test_a_window_too_wide_to_decide_is_left_possible_with_a_note() -> None:
    part = _part("SHUT-ONLY-SOURCE", "HandledRequest")
    noise = [(ev.MemberCrashed(member=f"N{i}"), i + 2, 1_500 + i) for i in range(20)]
    steps = _steps((ev.ShutdownRequestHandled(member="A", requester="B"), 0, 1_000),
                   (migration_to("B"), 0, 2_000), (ev.MemberStarted(member="B"), 1, 2_010),
                   *noise)
    at = next(k for k, e, _ in steps if isinstance(e, ev.MigrationStarted))
    verdict = skew.decide(part, steps, at, 10_000)
    assert verdict.certainty == "possible" and "more than the 16 decided here" in verdict.note

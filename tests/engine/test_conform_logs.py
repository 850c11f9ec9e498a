"""`partsafe conform` on the logs of real clusters: the shown Hazelcast logs against the 3.9
membership design (002), logs edited to leave it, the clock bound across members, and the
input contract."""

from __future__ import annotations

import dataclasses
import json
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

from partsafe.checker.cli.main import main
from partsafe.checker.engine.conform import conform
from partsafe.checker.protocols import catalog
from partsafe.checker.protocols.log_trace import LogTrace, read_logs
from partsafe.traces import events as ev
from partsafe.traces.writer import LogWriter

LOGS = Path(__file__).parent.parent / "data" / "logs"
#: the shown logs that print membership, as the clusters they come from (hz_04 + hz_05: one
#: cluster of 3.9.4; hz_06 to hz_08: one of 4.0.1; hz_28: 3.7) and one file at a time
CLUSTERS = [("hz_04", "hz_05"), ("hz_06", "hz_07", "hz_08"), ("hz_28",), ("hz_04",),
            ("hz_05",), ("hz_06",), ("hz_07",), ("hz_08",)]


def _cli(*args: str) -> tuple[int, str]:
    r = CliRunner().invoke(main, ["conform", *args])
    return r.exit_code, r.output


def _run(paths: list[Path], variant: str = "fixed", skew_ms: int = 100, max_hidden: int = 8):
    entry = catalog.get("membership")
    assert entry.log_table is not None
    logs = read_logs([str(p) for p in paths], entry.log_table)
    model = entry.make(variant, entry.log_table.scope(logs.records()))
    return conform(LogTrace(model, entry.log_table, logs, skew_ms), max_hidden=max_hidden)


@pytest.mark.parametrize("files", CLUSTERS, ids=["+".join(c) for c in CLUSTERS])
def test_the_shown_hazelcast_logs_conform_to_the_membership_design(files: tuple[str, ...]
                                                                    ) -> None:
    """Every membership record of the shown logs is matched by a run of the 3.9 design: each
    member list, start and removal, with the log's addresses bound to the model's members."""
    r = _run([LOGS / f"{f}.log" for f in files])
    assert r.verdict == "conforms", r.diagnosis
    assert r.records > 0
    names = r.context["bound"]["member"]
    assert len(set(names.values())) == len(names)  # one to one


#: the shown logs that print the partition service (repartitionings, shutdown requests) and
#: membership, as clusters
PARTITION_CLUSTERS = [("hz_04", "hz_05"), ("hz_06", "hz_07", "hz_08"), ("hz_11",), ("hz_17",),
                      ("hz_28",)]
PARTITION_CASES = [(m, c) for m in ("migration", "shutdown", "parallel")
                   for c in PARTITION_CLUSTERS]


@pytest.mark.parametrize(("model", "files"), PARTITION_CASES,
                         ids=[f"{m}:{'+'.join(c)}" for m, c in PARTITION_CASES])
def test_the_shown_hazelcast_logs_conform_to_the_partition_designs(
        model: str, files: tuple[str, ...]) -> None:
    """The 3.7 partition service (000, 004) and 4.1's parallel migrations (003) print member
    lists, starts, removals, repartitionings and handled shutdown requests at INFO: every such
    record of the shown logs is matched by a run of each design, at the scope the log needs."""
    code, out = _cli(model, *(str(LOGS / f"{f}.log") for f in files), "--json")
    doc = json.loads(out)
    assert code == 0 and doc["verdict"] == "conforms", doc.get("diagnosis")
    assert doc["records"] > 0


def test_a_cluster_report_names_its_members_versions_and_what_it_set_aside() -> None:
    code, out = _cli("membership", *(str(LOGS / f"hz_0{k}.log") for k in (6, 7, 8)), "--json")
    doc = json.loads(out)
    assert code == 0 and doc["verdict"] == "conforms"
    assert doc["bound"]["member"] == {"<ip>:<portA>": "A", "<ip>:<portB>": "B"}
    assert doc["bound"]["member list version"] == {"4": "2", "5": "3"}
    assert doc["scope"]["members"] == 1 and doc["scope"]["joiners"] == 1
    assert {a["type"] for a in doc["set_aside"]} == {"repartitioning", "migrations_completed"}
    # the master's list after the removal is matched by the same step as the removal
    assert [s["record"].split("/")[-1] for s in doc["run"] if s["record"]] == \
        ["hz_07.log:1", "hz_06.log:2", "hz_07.log:5", "hz_08.log:3"]


def _edited(tmp_path: Path, name: str, old: str, new: str) -> Path:
    text = (LOGS / name).read_text()
    assert old in text
    path = tmp_path / name
    path.write_text(text.replace(old, new, 1))
    return path


def test_a_member_installing_its_masters_list_at_another_version_does_not_conform(
        tmp_path: Path) -> None:
    """hz_07 edited: B prints the master's list {size:2} at version 3 where the master printed
    4. One list of the design is one version everywhere: the diagnosis names B's line and the
    binding it breaks."""
    b = _edited(tmp_path, "hz_07.log", "Members {size:2, ver:4}", "Members {size:2, ver:3}")
    r = _run([LOGS / "hz_06.log", b])
    assert r.verdict == "does-not-conform"
    d = r.diagnosis
    assert d is not None and d.unmatched.endswith("hz_07.log:5")
    assert any("version" in reason and "4" in reason and "3" in reason for reason in d.reasons)


def test_a_master_printing_an_older_version_after_a_removal_does_not_conform(
        tmp_path: Path) -> None:
    """hz_08 edited: after removing B the master prints version 3, older than the 4 it printed
    with B: the design only raises a version."""
    a = _edited(tmp_path, "hz_08.log", "Members {size:1, ver:5}", "Members {size:1, ver:3}")
    r = _run([LOGS / "hz_06.log", LOGS / "hz_07.log", a])
    assert r.verdict == "does-not-conform"
    assert r.diagnosis is not None and r.diagnosis.unmatched.endswith("hz_08.log:3")
    assert any("log shows member_list_installed" in x and "to exceed 4" in x
               for x in r.diagnosis.reasons), r.diagnosis.reasons
    assert r.diagnosis.last_matched is not None and \
        r.diagnosis.last_matched.endswith("hz_07.log:5")


def _two_member_logs(folder: Path, slave_first_by: int) -> list[Path]:
    """A joins B: B's start, A's list with B, B's copy of it; B's lines `slave_first_by`
    seconds before A's list (a clock that far behind)."""
    a, b = "10.0.0.1:5701", "10.0.0.2:5701"
    events = [
        ev.MemberListInstalled(member=a, version=1, members=(a,), master=a, order=0),
        ev.MemberStarted(member=b, order=10 - slave_first_by),
        ev.MemberListInstalled(member=a, version=2, members=(a, b), master=a, order=10),
        ev.MemberListInstalled(member=b, version=2, members=(a, b), master=a,
                               order=10 - slave_first_by),
    ]
    folder.mkdir()
    files = {m: (folder / f"{m.replace(':', '-')}.log").open("w") for m in (a, b)}
    LogWriter().write(events, lambda m: files[m])
    for f in files.values():
        f.close()
    return sorted(folder.iterdir())


def test_members_are_interleaved_only_as_the_clock_bound_allows(tmp_path: Path) -> None:
    """B's copy of the list stamped 5 s before its master printed it: within 100 ms of skew no
    order of the design has it (the master publishes first); with 10 s of skew, one does."""
    logs = _two_member_logs(tmp_path / "skewed", 5)
    far = _run(logs, skew_ms=100)
    assert far.verdict == "does-not-conform"
    assert far.diagnosis is not None
    assert any("clock bound" in reason for reason in far.diagnosis.reasons)
    assert _run(logs, skew_ms=10_000).verdict == "conforms"
    assert _run(_two_member_logs(tmp_path / "on-time", 0), skew_ms=100).verdict == "conforms"


def test_unlogged_steps_are_bounded_by_max_hidden() -> None:
    """hz_08 alone: B's crash and A's suspicion print nothing before A's removal (a false
    suspicion matches at once); the removal and the list are one step. With no hidden step
    allowed it still conforms; a log that needs more hidden steps than allowed does not."""
    assert _run([LOGS / "hz_08.log"], max_hidden=0).verdict == "conforms"
    # hz_05 alone: B's list needs the master's unlogged acceptance of the join first
    assert _run([LOGS / "hz_05.log"], max_hidden=1).verdict == "conforms"
    assert _run([LOGS / "hz_05.log"], max_hidden=0).verdict == "does-not-conform"


def test_logs_with_no_membership_record_are_incomplete_and_say_why() -> None:
    code, out = _cli("membership", str(LOGS / "hz_11.log"), str(LOGS / "hz_17.log"))
    flat = " ".join(out.split())
    assert code == 3 and "hold no record the membership model maps" in flat
    assert "repartitioning" in flat and "partition service" in flat


def test_a_model_without_a_log_table_is_named(tmp_path: Path) -> None:
    code, out = _cli("twophase", str(LOGS / "hz_06.log"))
    assert code == 2 and "reads no product's logs" in out


def test_a_directory_of_logs_is_read_whole(tmp_path: Path) -> None:
    folder = tmp_path / "cluster"
    folder.mkdir()
    for k in (6, 7, 8):
        shutil.copy(LOGS / f"hz_0{k}.log", folder)
    code, out = _cli("membership", str(folder))
    assert code == 0, out
    assert "verdict: OK" in out and "the matched run:" in out


# --- the bug zoo through the products' logs ------------------------------------------------------

#: every zoo entry of the models with a log table: (model, variant, spec, scope overrides)
LOG_ZOO = [(e.name, v, spec, overrides) for e in catalog.MODELS.values()
           if e.log_table is not None for v, (spec, overrides) in e.zoo.items()]
#: the counterexamples whose logs a run of the fixed design prints too: the flaw changes only
#: what the product does not log (docs/conformance.md, "What a log cannot tell apart")
INVISIBLE = {
    ("migration", "hz37-local-promotion"):
        "a backup promotes itself: which member holds which replica is never printed",
    ("ignite-rebalance", "mutant-vote-twice"):
        "a vote for another node is JRaft's RequestVoteRequest line, which says nothing of the "
        "grant",
    ("ignite-rebalance", "mutant-forget-voted-for"):
        "a vote for another node is JRaft's RequestVoteRequest line, which says nothing of the "
        "grant",
    ("ignite-rebalance", "mutant-accept-stale-append"):
        "an append a follower accepts prints nothing",
}


@pytest.mark.parametrize(("model", "variant", "spec", "overrides"), LOG_ZOO,
                         ids=[f"{m}:{v}" for m, v, _, _ in LOG_ZOO])
def test_every_zoo_counterexample_written_as_a_products_log_fits_its_own_design(
        tmp_path: Path, model: str, variant: str, spec: str, overrides: dict[str, int]
        ) -> None:
    """The zoo's counterexample written as the product's logs (`partsafe export --log`: one
    file per member, in the product's wording) and read back by the parsers: a run of its own
    variant with at most the default K unlogged steps in a row; and, with as many unlogged steps
    in a row as its own run needs, no run of the fixed design prints it, unless the flaw only
    changes what the product never prints (`INVISIBLE`: there the fixed design fits, and the
    test says so, so that a finer log is noticed)."""
    from partsafe.checker import artifact
    from partsafe.checker.engine.bfs import Bounds
    from partsafe.checker.report import artifact as artifact_doc
    from partsafe.checker.run import run_check

    entry = catalog.get(model)
    assert entry.log_table is not None
    run = run_check(entry, variant, overrides, bounds=Bounds(), symmetry=True, keep_going=True,
                    until=spec)
    doc = json.loads(json.dumps(artifact_doc(run.model, run.result, run.params, spec)))
    found, _, _ = artifact.exported(doc, "ce")
    artifact.write_logs(found, tmp_path, model)
    logs = read_logs([str(tmp_path)], entry.log_table)
    assert logs.records()

    def fits(design: str, k: int) -> str:
        m = entry.make(design, doc["params"], doc.get("profile", "fixed"))
        assert entry.log_table is not None
        return conform(LogTrace(m, entry.log_table, logs, 100), max_hidden=k).verdict

    if (model, variant) in INVISIBLE:  # the fixed design fits even with the default K
        assert fits(variant, 8) == fits("fixed", 8) == "conforms"
        return
    k = next((k for k in range(9) if fits(variant, k) == "conforms"), None)
    assert k is not None, f"{variant}'s own run needs more than 8 unlogged steps in a row"
    assert fits("fixed", k) == "does-not-conform"


def test_a_run_matched_to_logs_replays_and_a_junit_report_names_the_logs(tmp_path: Path
                                                                          ) -> None:
    logs = [str(LOGS / f"hz_0{k}.log") for k in (6, 7, 8)]
    run, junit = tmp_path / "run.json", tmp_path / "conform.xml"
    code, out = _cli("membership", *logs, "--trace-out", str(run), "--junit", str(junit))
    assert code == 0, out
    doc = json.loads(run.read_text())
    assert doc["partsafe"] == "run" and doc["params"]["members"] == 1
    assert [s["record"].split("/")[-1] for s in doc["steps"] if s.get("record")] == \
        ["hz_07.log:1", "hz_06.log:2", "hz_07.log:5", "hz_08.log:3"]
    replayed = CliRunner().invoke(main, ["replay", str(run)])
    assert replayed.exit_code == 0, replayed.output
    assert "hz_08.log" in junit.read_text() and 'failures="0"' in junit.read_text()


def _table_markdown() -> str:
    """The protocols' log tables as docs/conformance.md shows them."""
    from partsafe.checker.protocols.log_trace import Bind, Order

    out: list[str] = []
    seen: set[int] = set()
    for e in catalog.MODELS.values():
        t = e.log_table
        if t is None or id(t) in seen:
            continue
        seen.add(id(t))
        users = [n for n, x in catalog.MODELS.items() if x.log_table is t]
        out += [f"**{', '.join(users)}** ({t.product} logs):", "",
                "| event | the product's message | must print | fields |", "|---|---|---|---|"]
        for etype, shown in t.shown.items():
            roles = []
            for name, role in shown.fields.items():
                if isinstance(role, Bind):
                    roles.append(f"`{name}` bound ({role.space}"
                                 f"{', as a set' if role.unordered else ''})")
                elif isinstance(role, Order):
                    roles.append(f"`{name}` in order ({role.space})")
                else:
                    roles.append(f"`{name}` not compared")
            must = ("yes" if shown.always else "no") + (", placed apart" if shown.deferred
                                                        else "") \
                + (", by any member" if shown.anyone else "")
            message = shown.message.replace("|", "\\|")
            out.append(f"| `{etype}` | {message} | {must} | "
                       f"{'; '.join(roles) or 'all compared'} |")
        out.append("")
    return "\n".join(out)


def test_the_docs_show_each_protocols_log_table_as_it_is() -> None:
    docs = (Path(__file__).parents[2] / "docs" / "conformance.md").read_text()
    assert _table_markdown() in docs


def test_a_log_table_that_names_an_unknown_event_or_field_is_refused() -> None:
    from partsafe.checker.protocols.log_trace import LogTable, Order, Shown

    with pytest.raises(ValueError, match="'member_list_frobbed', which is no event type"):
        LogTable("Hazelcast", {"member_list_frobbed": Shown("Members …")})
    with pytest.raises(ValueError, match="member_removed row names fields member_removed has "
                                         "not: versoin"):
        LogTable("Hazelcast", {"member_removed": Shown("Removing …",
                                                       fields={"versoin": Order("v")})})


# --- Apache Ignite 3 ------------------------------------------------------------------------


def _ignite_logs(folder: Path, second_leader_term: int) -> Path:
    """Three nodes' Ignite 3 logs: n1 elected in term 1, then n3 elected in
    `second_leader_term` (written in Ignite's wording by the Ignite writer)."""
    from partsafe.checker.artifact import write_ignite_logs

    peers = ("n1", "n2", "n3")
    found: list[ev.Event] = [ev.RaftStarted(member=n, peers=peers, reason="start", order=k)
                             for k, n in enumerate(peers)]
    found += [ev.RaftVote(member="n1", term=1, candidate="n1", order=3),
              ev.RaftLeader(member="n1", term=1, votes=("n1", "n2"), peers=peers, old=(),
                            order=4),
              ev.RaftVote(member="n3", term=second_leader_term, candidate="n3", order=5),
              ev.RaftLeader(member="n3", term=second_leader_term, votes=("n1", "n3"),
                            peers=peers, old=(), order=6)]
    folder.mkdir()
    write_ignite_logs(found, folder)
    return folder


def test_an_ignite_log_with_a_second_election_conforms_and_one_with_two_leaders_of_a_term_does_not(
        tmp_path: Path) -> None:
    """Ignite 3 logs (JRaft's init, vote and leader lines, in its JUL layout): n3 elected after
    n1 in a later term is a run of the rebalance design (n3's election timeout and n2's lease
    end early, while n1 lives); n3 elected
    in n1's term is none, and the diagnosis names n3's lines and the term."""
    later = _ignite_logs(tmp_path / "later", 2)
    code, out = _cli("ignite-rebalance", str(later), "--json")
    doc = json.loads(out)
    assert code == 0 and doc["verdict"] == "conforms", doc.get("diagnosis")
    assert doc["scope"]["early-timeouts"] == 2
    assert doc["bound"]["member"] == {"n1": "A", "n2": "B", "n3": "C"}
    same = _ignite_logs(tmp_path / "same", 1)
    code, out = _cli("ignite-rebalance", str(same), "--json")
    doc = json.loads(out)
    assert code == 1 and doc["verdict"] == "does-not-conform"
    d = doc["diagnosis"]
    assert "ignite3db-n3.log" in d["unmatched"]
    assert any("requires the term to exceed 1" in reason and "the log shows 1" in reason
               for reason in d["reasons"]), d["reasons"]


# --- hidden steps no log could follow ----------------------------------------------------------


def _join_logs(folder: Path, b_starts: bool) -> LogTrace:
    """A founds the cluster and B joins it, each log from its member's start (B's start cut off
    unless `b_starts`: a log collected mid-run)."""
    a, b = "10.0.0.1:5701", "10.0.0.2:5701"
    events = [
        ev.MemberStarted(member=a, order=0),
        ev.MemberListInstalled(member=a, version=1, members=(a,), master=a, order=1000),
        *([ev.MemberStarted(member=b, order=5000)] if b_starts else []),
        ev.MemberListInstalled(member=a, version=2, members=(a, b), master=a, order=10_000),
        ev.MemberListInstalled(member=b, version=2, members=(a, b), master=a, order=10_000),
    ]
    folder.mkdir()
    files = {m: (folder / f"{m.replace(':', '-')}.log").open("w") for m in (a, b)}
    LogWriter().write(events, lambda m: files[m])
    for f in files.values():
        f.close()
    entry = catalog.get("membership")
    assert entry.log_table is not None
    logs = read_logs([str(p) for p in sorted(folder.iterdir())], entry.log_table)
    # (a crash the logs do not need, to try where one may be unlogged)
    model = entry.make("fixed", entry.log_table.scope(logs.records()) | {"crashes": 1})
    return LogTrace(model, entry.log_table, logs, 100)


def _step(model: object, state: object, kind: str, node: str) -> tuple[tuple, object]:
    for action, nxt in model.successors(state):  # type: ignore[attr-defined]
        if action[:2] == (kind, node):
            return action, nxt
    raise AssertionError(f"no {kind} step of {node}")


def _bound_start(trace: LogTrace) -> tuple[object, tuple]:
    (state,) = trace.model.init_states()
    starts = trace.start(state)
    assert not isinstance(starts, str)
    return state, next(p for p in starts if ("member", "A") in trace._bound(p).to_log)


@pytest.mark.parametrize("b_starts", [True, False], ids=["from-its-start", "cut"])
def test_a_join_is_unlogged_only_where_the_joiners_log_may_begin_later(
        tmp_path: Path, b_starts: bool) -> None:
    """B's log begins with its start: B cannot join unlogged before that record (nothing of a
    member happens before its process starts). Cut off, B's log may begin after its join."""
    trace = _join_logs(tmp_path / "logs", b_starts)
    state, pos = _bound_start(trace)
    action, nxt = _step(trace.model, state, "join", "B")
    assert trace.hidden(pos, state, action, nxt) is not b_starts
    assert _run(sorted((tmp_path / "logs").iterdir())).verdict == "conforms"


def test_a_crashed_member_prints_nothing_again(tmp_path: Path) -> None:
    """Once B's start is matched its log has a record left (its list): a crash of B there is
    no unlogged step, since B would print nothing again; at the end of B's log it is one."""
    trace = _join_logs(tmp_path / "logs", True)
    state, pos = _bound_start(trace)
    action, nxt = _step(trace.model, state, "join", "B")
    matched = trace.match(pos, state, action, nxt)
    assert not isinstance(matched, str)
    after = matched[0]
    crash, crashed = _step(trace.model, nxt, "crash", "B")
    assert not trace.hidden(after, nxt, crash, crashed)
    k = trace.stream_of[trace._bound(after).to_log[("member", "B")]]
    at_end = (tuple(len(trace.streams[k]) if i == k else n for i, n in enumerate(after[0])),
              after[1])
    assert trace.hidden(at_end, nxt, crash, crashed)


def test_a_member_that_lived_on_after_its_removal_needs_no_crash() -> None:
    """A paused B is removed by A at 10 s and prints on at 20 s: a false suspicion, no crash;
    C is removed at 10 s and prints nothing after: a crash (a kill, a stop); so is A, which B's
    own list leaves out at 20 s and which prints nothing after 10 s."""
    import dataclasses

    from partsafe.checker.protocols.membership import lived_on, log_scope

    a, b, c = "10.0.0.1:5701", "10.0.0.2:5701", "10.0.0.3:5701"
    records = [
        ev.MemberListInstalled(member=a, version=3, members=(a, b, c), master=a, order=0),
        ev.MemberListInstalled(member=b, version=3, members=(a, b, c), master=a, order=0),
        ev.MemberListInstalled(member=c, version=3, members=(a, b, c), master=a, order=0),
        ev.MemberRemoved(member=a, removed=b, version=4, order=10_000),
        ev.MemberListInstalled(member=a, version=4, members=(a, c), master=a, order=10_000),
        ev.MemberRemoved(member=a, removed=c, version=5, order=10_000),
        ev.MemberListInstalled(member=a, version=5, members=(a,), master=a, order=10_000),
        ev.MemberListInstalled(member=b, version=4, members=(b,), master=b, order=20_000),
    ]
    assert lived_on(records) == {b}
    scope = log_scope(records)
    assert scope["crashes"] == 2 and scope["suspicions"] == 1  # A and C; A's suspicion of B
    # B's log ending in the second of its removal: no sign that it lived on
    assert lived_on([*records[:-1], dataclasses.replace(records[-1], order=10_500)]) == set()


def test_a_real_ignite_run_is_conformed_on_one_partition_group() -> None:
    """A real Ignite node runs the CMG's, the metastorage's and every partition's raft group;
    the one-partition model is given the partition group with the most records, and every
    record of the others is set aside, counted, with its reason."""
    from partsafe.checker.protocols.ignite import OTHER_GROUP

    run = Path(__file__).resolve().parents[1] / "data" / "lab" / "ig31-info-restart-join"
    entry = catalog.get("ignite-rebalance")
    assert entry.log_table is not None
    logs = read_logs([str(p) for p in sorted(run.glob("member-*.log.gz"))], entry.log_table)
    groups = {getattr(e, "group", None) for e in logs.records()} - {None}
    assert groups == {"20_part_0"}
    aside = {t: n for (t, why), n in logs.set_aside.items() if why == OTHER_GROUP}
    assert aside["raft_started"] > 0 and aside["assignments_changed"] > 0
    scope = entry.log_table.scope(logs.records())
    assert (scope["nodes"], scope["spares"]) == (3, 1)  # the zone's three, and the joiner


def test_a_record_of_a_step_that_changes_nothing_is_a_stutter() -> None:
    """ZoneRebalanceUtil's "Remove planned key because pending is empty …", printed as a zone's
    partitions are created: a stutter of the design where the metastore holds no planned key,
    and no stutter where it holds one (that removal is a step of its own). DataNodesManager's
    history entry of the data nodes there already (a scale timer started) and a node's start
    where the model's node holds nothing (a spare, a node after its restart) are stutters; a
    start of a raft member is not."""
    from partsafe.checker.protocols.ignite import LOG_TABLE, _changes_nothing
    from partsafe.refimpl.metastore import PLANNED, Entry

    entry = catalog.get("ignite-rebalance")
    model = entry.make("fixed", {"spares": 1})
    (world,) = model.init_states()

    def same(name: str) -> str:
        return name

    removal = ev.AssignmentsChanged(member="A", partition=0, key=PLANNED, nodes=(), revision=0,
                                    removed=True)
    assert LOG_TABLE.stutters is _changes_nothing
    assert _changes_nothing(model, world, "A", removal, same)
    assert not _changes_nothing(model, world, "A",
                                dataclasses.replace(removal, removed=False), same)
    i = model.index["metastore"]
    store = world.nodes[i]
    held = store._replace(entries=(*store.entries, Entry(PLANNED, ("A",), 2)))
    planned = world._replace(nodes=(*world.nodes[:i], held, *world.nodes[i + 1:]))
    assert not _changes_nothing(model, planned, "A", removal, same)
    data = ev.DataNodesChanged(member="A", nodes=("A", "B", "C"), zone=20)
    assert _changes_nothing(model, world, None, data, same)
    assert not _changes_nothing(model, world, None,
                                dataclasses.replace(data, nodes=("A", "C")), same)
    assert not _changes_nothing(model, world, None, data, lambda name: None)  # unbound names
    assert _changes_nothing(model, world, "D", ev.MemberStarted(member="D"), same)
    assert not _changes_nothing(model, world, "B", ev.MemberStarted(member="B"), same)


def test_an_ignite_cluster_s_raft_nodes_all_start_before_the_first_election() -> None:
    """The initial state's events as Ignite prints them: every raft node's init, then the
    first election's vote and leader lines."""
    from partsafe.checker.protocols.ignite import LOG_TABLE
    from partsafe.checker.protocols.log_trace import INIT

    model = catalog.get("ignite-rebalance").make("fixed", {})
    (world,) = model.init_states()
    assert LOG_TABLE.prints is not None
    printed = LOG_TABLE.prints(model, world, INIT, world, model.init_events(world))
    kinds = [(e.event if hasattr(e, "event") else e).type for e in printed]
    starts = [k for k, t in enumerate(kinds) if t == "raft_started"]
    assert len(starts) == 3 and max(starts) < kinds.index("raft_leader")


def test_a_bound_member_prints_everything_from_the_start_its_log_begins_with(
        tmp_path: Path) -> None:
    """B bound to its log while that log is still at its first record: where the log begins
    with B's start, an event B must print cannot go unprinted there; where it does not (a log
    begun mid-run), it may."""
    trace = _join_logs(tmp_path / "logs", True)
    state, pos = _bound_start(trace)
    action, nxt = _step(trace.model, state, "join", "B")
    matched = trace.match(pos, state, action, nxt)
    assert not isinstance(matched, str)
    after = matched[0]
    bound = trace._bound(after)
    k = trace.stream_of[bound.to_log[("member", "B")]]
    at_start = tuple(0 if j == k else n for j, n in enumerate(after[0]))
    listed = ev.MemberListInstalled(member="B", version=2, members=("A", "B"), master="A")
    assert not trace._unprinted(at_start, (listed, True), bound)
    trace._begun.discard(k)
    assert trace._unprinted(at_start, (listed, True), bound)

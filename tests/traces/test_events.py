"""The event vocabulary and its JSON Lines form: round trips and malformed records."""

from __future__ import annotations

import dataclasses
import io
import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from partsafe.traces import events as ev
from partsafe.traces.events import (
    EVENT_TYPES,
    Event,
    EventFormatError,
    MemberListInstalled,
    Source,
    read_jsonl,
    to_dict,
    write_jsonl,
)

# One plausible instance of every event type, with every field set to a non-default value.
SAMPLES: list[Event] = [
    ev.MemberListInstalled(member="10.0.0.1:5701", version=7,
                           members=("10.0.0.1:5701", "10.0.0.2:5701"), master="10.0.0.1:5701",
                           uuids=("u-1", "u-2")),
    ev.MemberStarted(member="10.0.0.3:5701", uuid="u-3"),
    ev.SplitBrainMerge(member="C", target="A"),
    ev.ClusterStateChanged(member="A", old="ACTIVE", new="FROZEN"),
    ev.PartitionVersionApplied(member="B", partition=7, version=12),
    ev.PartitionTableFetch(member="C", phase="determined"),
    ev.MigrationFailed(member="A", migration="m-19", partition=4, reason="commit failed"),
    ev.MigrationFinished(member="A", migration="m-20", partition=4),
    ev.PartitionTableConflict(member="C", partition=5, version=3,
                              replicas=(("A", "B"), ("B", None, "C"))),
    ev.ShutdownRequestHandled(member="A", requester="D"),
    ev.MemberSuspected(member="B", suspect="A", reason="no heartbeat"),
    ev.ExplicitSuspicion(member="C", sender="A", reason="not a member"),
    ev.SuspicionRemoved(member="B", suspect="A"),
    ev.MastershipClaimStarted(member="C", suspected=("A", "B"), members=("A", "B", "C", "D")),
    ev.MastershipClaimAccepted(member="D", candidate="C", version=5),
    ev.MastershipClaimSent(member="C", target="E"),
    ev.MastershipAcceptanceReceived(member="C", sender="D", version=5,
                                    members=("A", "B", "C", "D", "E")),
    ev.MastershipClaimed(member="C", version=6, members=("C", "D")),
    ev.MemberRemoved(member="A", removed="B", version=4),
    ev.MemberJoined(member="A", joined="E", version=5),
    ev.MemberCrashed(member="B"),
    ev.MemberListRejected(member="B", sender="C", version=3, reason="stale version"),
    ev.PartitionTableApplied(member="A", version=None, partition_versions=(3, 1, 4),
                             replicas=(("A", "B", None), ("B", None, "C")), stamp=12345,
                             sender="A"),
    ev.PartitionTablePublished(member="A", version=7, replicas=(("A", "B"), ("B", "C")),
                               partitions=(1,)),
    ev.Repartitioning(member="A", planned=11),
    ev.MigrationStarted(member="B", role="source", migration="m-17", partition=3),
    ev.MigrationsWaiting(member="A", waiting=((0, "C", "A"), (2, "D", None)),
                         in_flight=((1, "C", "B"),)),
    ev.MigrationCommitted(member="C", role="destination", migration="m-17", partition=3),
    ev.MigrationRolledBack(member="A", role="master", migration="m-18", partition=9),
    ev.ReplicaCleared(member="B", partition=2, replica_index=1),
    ev.ReplicaSynced(member="C", partition=2, replica_index=2),
    ev.PromotionCommitted(member="C", partition=5, replica_index=1),
    ev.ShutdownRequested(member="D"),
    ev.ShutdownAllowed(member="A", leaving="D"),
    ev.MemberLeft(member="D"),
    ev.PartitionLost(member="A", partition=8, lost_backup_count=1),
    ev.MigrationsCompleted(member="A", planned=10, completed=7, remaining=3, outcome="progress",
                           total_completed=20, tasks=3),
    ev.PlanStarted(member="A", partition=6, current=("A", None, "B"), target=("C", "A", None)),
    ev.PlanState(member="A", partition=6, stage="pass", replicas=("A", "C", None), index=2),
    ev.PlanDecision(member="A", partition=6, kind="SHIFT_UP", source_member="B",
                    source_current_index=1, source_new_index=-1, destination="C",
                    destination_current_index=2, destination_new_index=1, case="MOVE-2",
                    returns_to=0),
    ev.PlanOrder(member="A", partition=6, migrations=((None, -1, -1, "C", -1, 1),
                                                      ("A", 0, 1, "C", -1, 0))),
    ev.MetastoreInvoke(member="n1", keys=("stable.assignments", "planned.assignments"),
                       condition="revision(pending) < 42", ok=True, revision=43),
    ev.DataNodesChanged(member="n1", nodes=("n1", "n2"), zone=20),
    ev.AssignmentsChanged(member="n1", partition=0, key="pending.assignments",
                          nodes=("n1", "n2"), revision=44),
    ev.RaftVote(member="n2", term=3, candidate="n1"),
    ev.RaftLeader(member="n1", term=3),
    ev.RaftPeersChanged(member="n1", peers=("n1", "n2", "n3")),
    ev.NodeRestarted(member="n3", in_memory=True),
    ev.RaftStarted(member="n3", peers=("n1", "n2"), reason="joining"),
    ev.ReductionRequested(member="n3", node="n3"),
    ev.Quiescent(member=""),
    ev.RmStateChanged(member="rm0", state="prepared"),
    ev.TmStateChanged(member="tm", state="committed"),
    ev.TmPreparedReceived(member="tm", rm="rm0"),
]


def _with_location(e: Event, i: int) -> Event:
    return dataclasses.replace(e, order=100 + i, source=Source(f"logs/node-{i}.log", 10 * i + 1))


def _round_trip(events: list[Event], file: str = "events.jsonl") -> list[Event]:
    buf = io.StringIO()
    assert write_jsonl(events, buf) == len(events)
    text = buf.getvalue()
    assert text.count("\n") == len(events)
    return list(read_jsonl(io.StringIO(text), file))


def test_samples_cover_every_event_type() -> None:
    assert sorted(type(e).TYPE for e in SAMPLES) == sorted(EVENT_TYPES)
    assert len(SAMPLES) == len(EVENT_TYPES) == 54
    for name, cls in EVENT_TYPES.items():
        assert name == cls.TYPE


@pytest.mark.parametrize("sample", SAMPLES, ids=lambda e: e.TYPE)
def test_round_trip_of_every_event_type(sample: Event) -> None:
    located = _with_location(sample, 3)
    (back,) = _round_trip([located])
    assert type(back) is type(sample)
    assert back == sample
    assert back.source == Source("logs/node-3.log", 31)
    assert back.order == 103
    assert to_dict(back) == to_dict(located)
    # the canonical line starts with type and member
    obj = json.loads(ev.dumps(located))
    assert list(obj)[:2] == ["type", "member"]
    assert obj["type"] == sample.TYPE
    assert obj["source"] == {"file": "logs/node-3.log", "line": 31}


def test_round_trip_of_all_events_in_one_stream() -> None:
    located = [_with_location(e, i) for i, e in enumerate(SAMPLES)]
    back = _round_trip(located)
    assert back == located
    assert [e.source for e in back] == [e.source for e in located]
    assert [e.order for e in back] == [e.order for e in located]


def test_an_unknown_member_round_trips_as_the_empty_string() -> None:
    """`UNKNOWN_MEMBER` (a log record that names no member) is written and read back as is."""
    assert ev.UNKNOWN_MEMBER == ""
    unknown = [dataclasses.replace(_with_location(e, i), member=ev.UNKNOWN_MEMBER)
               for i, e in enumerate(SAMPLES)]
    back = _round_trip(unknown)
    assert back == unknown and all(e.member == ev.UNKNOWN_MEMBER for e in back)
    assert all(json.loads(ev.dumps(e))["member"] == "" for e in unknown)


def test_round_trip_without_source_keeps_none() -> None:
    back = _round_trip(SAMPLES)
    assert back == SAMPLES
    assert all(e.source is None and e.order is None for e in back)
    assert "source" not in ev.dumps(SAMPLES[0])


def test_nested_tuples_come_back_as_tuples() -> None:
    (back,) = _round_trip([next(e for e in SAMPLES if isinstance(e, ev.PartitionTableApplied))])
    assert isinstance(back, ev.PartitionTableApplied)
    assert back.replicas == (("A", "B", None), ("B", None, "C"))
    assert isinstance(back.replicas[0], tuple)
    assert back.partition_versions == (3, 1, 4)
    hash(back)  # events stay hashable after a round trip


def test_blank_lines_are_skipped_and_lines_counted() -> None:
    text = "\n" + ev.dumps(SAMPLES[1]) + "\n   \n" + '{"type": "nope", "member": "A"}\n'
    it = read_jsonl(io.StringIO(text), "f.jsonl")
    assert next(it) == SAMPLES[1]
    with pytest.raises(EventFormatError) as err:
        next(it)
    assert err.value.where == "f.jsonl:4"


MEMBER_NAMES = st.text(min_size=1, max_size=12)


@given(
    member=MEMBER_NAMES,
    members=st.lists(MEMBER_NAMES, max_size=6).map(tuple),
    version=st.one_of(st.none(), st.integers(min_value=-(2**63), max_value=2**63)),
    master=st.one_of(st.none(), MEMBER_NAMES),
    source=st.one_of(
        st.none(),
        st.builds(Source, st.text(max_size=20), st.integers(min_value=1, max_value=10**9)),
    ),
)
def test_member_list_installed_round_trip(
    member: str, members: tuple[str, ...], version: int | None, master: str | None,
    source: Source | None,
) -> None:
    e = MemberListInstalled(member=member, version=version, members=members, master=master,
                            source=source)
    (back,) = _round_trip([e], "prop.jsonl")
    assert back == e
    assert back.source == source
    assert back.members == members and isinstance(back.members, tuple)
    assert back.version == version


def test_non_ascii_member_names_are_written_as_is() -> None:
    e = MemberListInstalled(member="nœud-1", version=2, members=("nœud-1", "ノード2", "🦀"))
    line = ev.dumps(e)
    assert "ノード2" in line and "\\u" not in line
    (back,) = _round_trip([e])
    assert back == e


# --- malformed records ------------------------------------------------------------------------

GOOD = '{"type": "member_crashed", "member": "A"}'


@pytest.mark.parametrize(
    ("bad", "reason"),
    [
        ('{"type": "member_exploded", "member": "A"}', "unknown event type 'member_exploded'"),
        ('{"member": "A"}', "unknown event type None"),
        ('{"type": "member_crashed"}', "field 'member' must be a string"),
        ('{"type": "member_crashed", "member": 5}', "field 'member' must be a string"),
        ('{"type": "member_crashed", "member": "A", "colour": "red"}',
         "unknown field 'colour' for event type 'member_crashed'"),
        ('{"type": "member_crashed", "member": "A", "source": "x.log:3"}',
         "field 'source' must be {file: str, line: int}"),
        ('{"type": "member_crashed", "member": "A", "source": {"file": "x.log"}}',
         "field 'source' must be {file: str, line: int}"),
        ('{"type": "member_crashed", "member": "A", "source": {"file": 1, "line": 2}}',
         "field 'source' must be {file: str, line: int}"),
        ('{"type": "member_list_installed", "member": "A", "version": 1}',
         "event type 'member_list_installed'"),
        ('{"type": "member_crashed", "member": "A"', "not JSON"),
        ("member_crashed A", "not JSON"),
        ("[1, 2]", "an event must be a JSON object"),
    ],
    ids=["unknown-type", "no-type", "missing-member", "member-not-str", "unknown-field",
         "source-not-object", "source-no-line", "source-file-not-str", "missing-field",
         "truncated-json", "not-json", "not-object"],
)
def test_malformed_line_names_file_and_line(bad: str, reason: str) -> None:
    text = "\n".join([GOOD, GOOD, bad, GOOD]) + "\n"
    it = read_jsonl(io.StringIO(text), "cluster/events.jsonl")
    assert next(it) == ev.MemberCrashed(member="A")
    assert next(it) == ev.MemberCrashed(member="A")
    with pytest.raises(EventFormatError) as err:
        next(it)
    assert err.value.where == "cluster/events.jsonl:3"
    assert str(err.value).startswith("cluster/events.jsonl:3: ")
    assert reason in str(err.value)
    assert isinstance(err.value, ValueError)


def test_missing_required_field_is_named() -> None:
    with pytest.raises(EventFormatError) as err:
        list(read_jsonl(['{"type": "raft_vote", "member": "n1", "term": 2}'], "r.jsonl"))
    assert err.value.where == "r.jsonl:1"
    assert "candidate" in str(err.value)


def test_default_file_name_is_stdin() -> None:
    with pytest.raises(EventFormatError, match=r"^<stdin>:1: not JSON"):
        list(read_jsonl(["{"]))

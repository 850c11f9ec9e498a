"""Monitors per key (validate/shards.py): running each monitor part once per key over that key's
events finds exactly what one run over all events finds, for every spec judged on logs; the
order keys are the merge of the members' streams."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from partsafe.checker.validation import shards
from partsafe.refimpl.planner import plan_events
from partsafe.specs.monitor import run
from partsafe.traces import events as ev

M = ("A", "B", "C")
member = st.sampled_from(M)
lists = st.lists(member, min_size=1, max_size=3, unique=True).map(tuple)
#: a partition's replica array: three indices, no member twice
arrays = st.permutations((*M, None, None, None)).map(lambda r: tuple(r[:3]))
PLANNER_VARIANTS = ("fixed", "hz37-naive-order", "no-prioritize")
uuid = st.sampled_from(("u1", "u2"))
migration = st.sampled_from(("x", "y", "z"))
part = st.integers(0, 1)

EVENTS = st.one_of(
    st.builds(lambda m, v, ms, u: ev.MemberListInstalled(
        member=m, version=v, members=ms, uuids=tuple(f"{x}-{u}" for x in ms) if u else ()),
        member, st.integers(1, 4) | st.none(), lists, uuid | st.none()),
    st.builds(lambda m, u: ev.MemberStarted(member=m, uuid=u), member, uuid),
    st.builds(lambda m: ev.MemberCrashed(member=m), member),
    st.builds(lambda m, o: ev.MemberJoined(member=m, joined=o), member, member),
    st.builds(lambda m, o: ev.MemberRemoved(member=m, removed=o), member, member),
    st.builds(lambda m, o: ev.MemberSuspected(member=m, suspect=o, reason="x"), member, member),
    st.builds(lambda m: ev.MastershipClaimStarted(member=m, suspected=()), member),
    st.builds(lambda m, p, v: ev.PartitionVersionApplied(member=m, partition=p, version=v),
              member, st.integers(0, 2), st.integers(1, 4)),
    st.builds(lambda m, n: ev.Repartitioning(member=m, planned=n), member, st.integers(0, 3)),
    st.builds(lambda m, p, c, r: ev.MigrationsCompleted(
        member=m, planned=p, completed=c, remaining=r, outcome="completed"),
        member, st.integers(0, 3), st.integers(0, 3), st.integers(0, 1)),
    st.builds(lambda m: ev.ShutdownRequested(member=m), member),
    st.builds(lambda m, r: ev.ShutdownRequestHandled(member=m, requester=r), member, member),
    st.builds(lambda m, role, d, x, p: ev.MigrationStarted(
        member=m, role=role, migration=x, partition=p, destination=d, source_member=m,
        source_current_index=0),
        member, st.sampled_from(("master", "source", "destination")), member, migration, part),
    st.builds(lambda m, kind, role, x, p: kind(member=m, role=role, migration=x, partition=p),
              member, st.sampled_from((ev.MigrationCommitted, ev.MigrationRolledBack)),
              st.sampled_from(("master", "source", "destination")), migration, part),
    st.builds(lambda m, kind, x, p: kind(member=m, migration=x, partition=p), member,
              st.sampled_from((ev.MigrationFailed, ev.MigrationFinished)), migration, part),
    st.builds(lambda m, t: ev.SplitBrainMerge(member=m, target=t), member, member),
    st.builds(lambda m, a, b: ev.PartitionTableConflict(member=m, partition=0, version=3,
                                                        replicas=(a, b)), member, lists, lists),
    st.builds(lambda m, v: ev.PartitionTableApplied(member=m, version=v), member,
              st.integers(1, 4)),
    st.builds(lambda m, v: ev.PartitionTablePublished(member=m, version=v), member,
              st.integers(1, 4)),
    st.builds(lambda m, s, ms: ev.MastershipClaimStarted(member=m, suspected=s, members=ms),
              member, lists, lists | st.just(())),
    st.builds(lambda m, t: ev.MastershipClaimSent(member=m, target=t), member, member),
    st.builds(lambda m, o, v, ms: ev.MastershipAcceptanceReceived(
        member=m, sender=o, version=v, members=ms), member, member, st.integers(1, 5), lists),
    st.builds(lambda m, o: ev.MastershipClaimAccepted(member=m, candidate=o), member, member),
    st.builds(lambda m, v, ms: ev.MastershipClaimed(member=m, version=v, members=ms),
              member, st.integers(1, 5), lists),
    # the migration planner's lines (PLAN-*, per master and partition): whole plans of the
    # planner and its variants, some cut short, and stray lines of plans
    st.builds(lambda m, p, c, t, v, cut: plan_events(c, t, variant=v, partition=p,
                                                     member=m)[cut:],
              member, part, arrays, arrays, st.sampled_from(PLANNER_VARIANTS),
              st.integers(0, 4)),
    st.builds(lambda m, p, stage, r, i: ev.PlanState(member=m, partition=p, stage=stage,
                                                     replicas=r, index=i),
              member, part, st.sampled_from(("initial", "final", "cycle-fixed", "pass")),
              arrays, st.integers(-1, 2)),
    st.builds(lambda m, p, kind, s, d, i: ev.PlanDecision(
        member=m, partition=p, kind=kind, source_member=s, source_current_index=i,
        source_new_index=-1, destination=d, destination_current_index=-1,
        destination_new_index=max(i, 0)),
        member, part, st.sampled_from(("MOVE", "COPY", "CLEAR")), member | st.none(),
        member | st.none(), st.integers(-1, 2)),
    st.builds(lambda m, p, d: ev.PlanOrder(member=m, partition=p,
                                           migrations=((None, -1, -1, d, -1, 1),)),
              member, part, member),
)


def _flat(items: list[ev.Event | list[ev.Event]]) -> list[ev.Event]:
    """The events drawn, a plan's lines in a row."""
    return [e for item in items for e in (item if isinstance(item, list) else [item])]


def keyed(events: list[ev.Event]) -> list[tuple[shards.OrderKey, ev.Event]]:
    return [((i, 0, 0, i), e) for i, e in enumerate(events)]


@settings(max_examples=400, deadline=None)
@given(st.lists(EVENTS, max_size=30).map(_flat), st.sampled_from(["hazelcast-log", "events"]))
def test_monitors_per_key_find_what_one_run_finds(events: list[ev.Event], kind: str) -> None:
    """For the specs of Hazelcast logs, and of event files (every monitor)."""
    found = shards.judge(keyed(events), [kind])
    for part in shards.parts(shards.judged_specs([kind])):
        whole = [(id(e), message) for e, message in run(part.monitor, events) if e is not None]
        per_key = [(id(events[v.at[0]]), v.message) for v in found if v.part == part.index]
        assert sorted(per_key) == sorted(whole), part.spec


@settings(max_examples=400, deadline=None)
@given(st.lists(EVENTS, max_size=30).map(_flat), st.sampled_from(["hazelcast-log", "events"]))
def test_monitors_raise_only_at_their_verdict_types(events: list[ev.Event], kind: str) -> None:
    """`Monitor.judged_on`: the other types only bring a monitor's state up to date, so a run
    of the parts that can raise at the types present finds what a run of every part finds."""
    for part in shards.parts(shards.judged_specs([kind])):
        for e, _message in run(part.monitor, events):
            assert e is not None and e.TYPE in part.monitor.verdict_types(), part.spec
    present = {e.TYPE for e in events}
    assert shards.judge(keyed(events), [kind], present=present) == shards.judge(keyed(events),
                                                                               [kind])


def test_a_conjunction_is_judged_by_each_part() -> None:
    spec_parts = [p for p in shards.parts() if p.spec == "MEM-VERSION"]
    assert [type(p.monitor).__name__ for p in spec_parts] == ["VersionIncrease", "VersionNames"]
    events = [ev.MemberListInstalled(member="A", version=2, members=("A", "B")),
              ev.MemberListInstalled(member="B", version=2, members=("A", "B")),
              ev.MemberListInstalled(member="B", version=2, members=("A", "B", "C"))]
    found = shards.judge(keyed(events), ["events"], [("MEM-VERSION",)])
    assert [v.message for v in found] == [
        "B applies version 2 after version 2",
        "version 2 of master A names two lists: [A, B] and [A, B, C]"]


def test_order_keys_keep_each_stream_in_order_and_merge_by_time() -> None:
    a = [ev.MemberCrashed(member="A", order=t) for t in (5, 3, None, 9)]
    b = [ev.MemberCrashed(member="B", order=t) for t in (4, 8)]
    keys = [k for k, _ in shards.stamped(0, a)] + [k for k, _ in shards.stamped(1, b)]
    assert [k[0] for k in keys] == [5, 5, 5, 9, 4, 8]
    merged = [e for _, e in sorted(zip(keys, a + b, strict=True), key=lambda p: p[0])]
    assert [e.order for e in merged] == [4, 5, 3, None, 8, 9]

"""Hazelcast members' streams as the membership protocol ran them (traces/incarnations.py):
restarted and merged members told apart, suspicion requests read where they were handled."""

from __future__ import annotations

from partsafe.traces import events as ev
from partsafe.traces.incarnations import (
    in_lock_order,
    membership_streams,
    predecessor,
    split_incarnations,
    without_repeats,
)

A, B, C = "127.0.0.1:5701", "127.0.0.1:5702", "127.0.0.1:5703"


def keyed(events: list[ev.Event]) -> list[tuple[tuple[int, int, int, int], ev.Event]]:
    return [((e.order or 0, 0, 0, i), e) for i, e in enumerate(events)]


def listed(member: str, version: int, members: tuple[str, ...], uuids: tuple[str, ...],
           at: int) -> ev.MemberListInstalled:
    return ev.MemberListInstalled(member=member, version=version, members=members,
                                  master=members[0], uuids=uuids, order=at)


def test_a_restart_is_a_new_member_named_in_every_record() -> None:
    streams = {
        A: keyed([ev.MemberStarted(member=A, order=0), listed(A, 1, (A,), ("a1",), 1),
                  ev.MemberStarted(member=A, order=50),
                  listed(A, 5, (B, A), ("b1", "a2"), 60)]),
        B: keyed([listed(B, 2, (A, B), ("a1", "b1"), 10),
                  ev.MemberRemoved(member=B, removed=A, version=4, order=40),
                  listed(B, 5, (B, A), ("b1", "a2"), 60)]),
    }
    out = split_incarnations(streams)
    assert set(out) == {A, f"{A}#2", B}
    assert [e.type for _, e in out[f"{A}#2"]] == ["member_started", "member_list_installed"]
    b = [e for _, e in out[B]]
    assert b[0].members == (A, B)                    # by UUID: the first incarnation
    assert b[1].removed == A                         # by time: before the restart
    assert b[2].members == (B, f"{A}#2") and b[2].master == B
    assert predecessor(f"{A}#2") == A and predecessor(A) is None
    # no restart: the streams as they were
    assert split_incarnations({B: streams[B]}) == {B: streams[B]}


def test_a_merge_starts_a_new_incarnation_where_the_merge_began() -> None:
    merge = ev.SplitBrainMerge(member=B, target=A, order=30)
    streams = {B: keyed([listed(B, 4, (B,), ("b1",), 20), merge,
                         listed(B, 5, (A, B), ("a1", "b2"), 31)])}
    out = split_incarnations(streams)
    assert [e.type for _, e in out[B]] == ["member_list_installed"]
    second = [e for _, e in out[f"{B}#2"]]
    assert [e.type for e in second] == ["member_started", "split_brain_merge",
                                        "member_list_installed"]
    assert second[0].member == f"{B}#2" and second[2].members == (A, f"{B}#2")


def test_a_request_is_read_where_it_was_handled() -> None:
    """ExplicitSuspicionOp prints before it takes the lock the removal holds."""
    e_c = ev.ExplicitSuspicion(member=A, sender=C, order=1)
    e_b = ev.ExplicitSuspicion(member=A, sender=B, order=1)
    removed = ev.MemberRemoved(member=A, removed=C, version=4, order=1)
    new_list = listed(A, 4, (A, B), ("a", "b"), 2)
    out = in_lock_order({A: keyed([e_c, e_b, removed, new_list])})
    assert [e for _, e in out[A]] == [e_c, removed, new_list, e_b]
    # printed between the removal and its list
    out = in_lock_order({A: keyed([removed, e_b, new_list])})
    assert [e for _, e in out[A]] == [removed, new_list, e_b]
    # nothing to wait for: as printed
    assert [e for _, e in in_lock_order({A: keyed([e_b, new_list])})[A]] == [e_b, new_list]


def test_repeated_requests_are_read_as_their_last_and_counted() -> None:
    e1, e2 = (ev.ExplicitSuspicion(member=A, sender=B, order=t) for t in (1, 2))
    other = ev.ExplicitSuspicion(member=A, sender=C, order=3)
    kept, dropped = without_repeats({A: keyed([e1, e2, other])})
    assert [e.order for _, e in kept[A]] == [2, 3] and dropped == 1
    _, aside = membership_streams({A: keyed([e1, e2])})
    assert sum(aside.values()) == 1 and "changes nothing" in next(iter(aside))[1]

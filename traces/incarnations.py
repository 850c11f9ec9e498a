"""Hazelcast members' streams as its membership protocol ran them: each incarnation of a
member apart (`split_incarnations`), and the requests a member prints before it takes the
cluster-service lock read where it handled them (`in_lock_order`); `membership_streams` does
both.

A restarted or merged Hazelcast member is a new member: its incarnations, told apart.

Hazelcast identifies a member by its address and its UUID (``MemberImpl``): a member started
again on the same address (`partsafe lab`'s restart), or one that leaves its side of a split
brain and joins the other (``LifecycleService`` ``MERGING``, then ``ClusterService``'s
"Resetting local member UUID. Previous: u1, new: u2"), comes back under a new UUID and joins as
a new member. A log names the two by one address; the membership model, which has no restarts,
has a crashed member and a joiner. `split_incarnations` gives every incarnation after an
address's first a name of its own, ``ADDRESS#K`` (the K-th incarnation), in every record that
names it:

- in the member's own stream, by position: a new incarnation begins at a ``member_started``
  record after the stream's first record, or where a split-brain merge gives the member a new
  UUID (its first member list under that UUID, after the ``split_brain_merge`` record that
  precedes it: the merge restarts the member's services, so a ``member_started`` record is put
  there, at that record's line, for the model's join to match);
- in a member list that shows UUIDs, by UUID;
- in any other record (a removal, a suspicion, a claim), by time: the incarnation of that
  address that had begun when the record was printed.
"""

from __future__ import annotations

import bisect
import dataclasses
from typing import Any

from partsafe.traces import events as ev

#: a stream's record: its order key (timestamp first) and the event
Keyed = tuple[tuple[int, int, int, int], ev.Event]

#: the fields of the membership events that name members (one name, or a tuple of names)
_NAME_FIELDS = ("members", "master", "removed", "suspect", "candidate", "sender", "target",
                "joined", "suspected", "requester")


def incarnation_name(address: str, k: int) -> str:
    """The name of `address`'s `k`-th incarnation (1: the address itself)."""
    return address if k == 1 else f"{address}#{k}"


def predecessor(name: str) -> str | None:
    """The name of the incarnation before `name` (None for an address's first)."""
    address, sep, k = name.rpartition("#")
    if not sep or not k.isdigit() or int(k) < 2:
        return None
    return incarnation_name(address, int(k) - 1)


def _own_uuid(e: ev.Event) -> str | None:
    if isinstance(e, ev.MemberListInstalled) and e.uuids and e.member in e.members:
        i = e.members.index(e.member)
        return e.uuids[i] if i < len(e.uuids) else None
    return None


def _boundaries(stream: list[Keyed]) -> list[int]:
    """The positions in one member's stream where each incarnation after the first begins."""
    out: list[int] = []
    uuid: str | None = None
    merge_at: int | None = None
    for i, (_, e) in enumerate(stream):
        if isinstance(e, ev.MemberStarted):
            if i > 0:
                out.append(i)
            uuid, merge_at = None, None
        elif isinstance(e, ev.SplitBrainMerge):
            if merge_at is None:
                merge_at = i
        elif (own := _own_uuid(e)) is not None:
            if uuid is not None and own != uuid:
                out.append(merge_at if merge_at is not None else i)
            uuid, merge_at = own, None
    return out


def split_incarnations(streams: dict[str, list[Keyed]]) -> dict[str, list[Keyed]]:
    """`streams` (each member's records, in order) with each incarnation of a member its own
    stream and its own name (see the module's docstring); unchanged where no member restarted."""
    cuts = {m: _boundaries(s) for m, s in streams.items()}
    if not any(cuts.values()):
        return streams
    # each address's incarnations: their names, begin times and UUIDs
    begins: dict[str, list[int]] = {}
    by_uuid: dict[tuple[str, str], str] = {}
    out: dict[str, list[Keyed]] = {}
    for member, stream in streams.items():
        starts = [0, *cuts[member]]
        begins[member] = [stream[i][0][0] if i else -1 for i in starts]
        for k, (lo, hi) in enumerate(zip(starts, [*starts[1:], len(stream)], strict=True), 1):
            name = incarnation_name(member, k)
            part = stream[lo:hi]
            for _, e in part:
                if (own := _own_uuid(e)) is not None:
                    by_uuid[(member, own)] = name
            if k > 1 and not isinstance(part[0][1], ev.MemberStarted):
                key, first = part[0]
                part = [(key, ev.MemberStarted(member=name, order=first.order,
                                               source=first.source)), *part]
            out[name] = part
    several = {m for m, c in cuts.items() if c}

    def at(address: str, when: int) -> str:
        times = begins[address]
        return incarnation_name(address, max(1, bisect.bisect_right(times, when)))

    def rename(e: ev.Event, when: int, own: str) -> ev.Event:
        changes: dict[str, Any] = {}
        if e.member in several:
            changes["member"] = own
        uuids = e.uuids if isinstance(e, ev.MemberListInstalled) else ()
        for f in _NAME_FIELDS:
            v = getattr(e, f, None)
            if isinstance(v, str) and v in several:
                changes[f] = at(v, when)
            elif isinstance(v, tuple) and any(x in several for x in v):
                changes[f] = tuple(
                    (by_uuid.get((x, uuids[i]), at(x, when)) if i < len(uuids)
                     else at(x, when)) if x in several else x
                    for i, x in enumerate(v))
        if isinstance(e, ev.MemberListInstalled) and "master" in changes and e.members:
            changes["master"] = changes.get("members", e.members)[0] \
                if e.master == e.members[0] else changes["master"]
        return dataclasses.replace(e, **changes) if changes else e

    return {name: [(key, rename(e, key[0], name)) for key, e in part]
            for name, part in out.items()}


def in_lock_order(streams: dict[str, list[Keyed]]) -> dict[str, list[Keyed]]:
    """`streams` with each explicit suspicion request read where the member handled it.

    ``ExplicitSuspicionOp`` prints "Received suspicion request from" on its own thread before
    it takes the cluster-service lock (``ClusterServiceImpl.handleExplicitSuspicion``): requests
    that arrive together print together, and one that arrives while the master removes a member
    ("Removing Member", then the new list, under the lock) prints between the two. Each is
    handled, and its effect printed, one at a time under the lock. So a request is read just
    before the removal or the suspicion of its sender that it caused, and the others once that
    removal's list is printed; each moved record takes its new neighbour's place in time."""
    out: dict[str, list[Keyed]] = {}
    for member, stream in streams.items():
        moved: list[Keyed] = []
        pending: list[Keyed] = []  # requests printed, not yet handled
        inside = False  # between a removal and its list
        for key, e in stream:
            if isinstance(e, ev.ExplicitSuspicion):
                pending.append((key, e))
                continue
            target = e.removed if isinstance(e, ev.MemberRemoved) else \
                e.suspect if isinstance(e, ev.MemberSuspected) \
                and e.reason == "explicit suspicion" else None
            cause = next((i for i, (_, p) in enumerate(pending)
                          if target is not None and p.sender == target), None)
            if cause is not None:
                moved.append((key, pending.pop(cause)[1]))
            elif not inside:
                moved.extend(pending)
                pending = []
            moved.append((key, e))
            if isinstance(e, ev.MemberRemoved):
                inside = True
            elif isinstance(e, ev.MemberListInstalled) and inside:
                inside = False
                moved.extend((key, p) for _, p in pending)
                pending = []
        moved.extend(pending)
        out[member] = moved
    return out


#: why `without_repeats` leaves a record out
REPEATED = ("a suspicion request repeated by its sender before anything else at the member: "
            "it finds the member as the one before it left it, and changes nothing")


def without_repeats(streams: dict[str, list[Keyed]]) -> tuple[dict[str, list[Keyed]], int]:
    """`streams` with each run of explicit suspicion requests from one sender, printed one
    after the other, read as its last (the ones before changed nothing: a request that
    changes something is followed by its effect, `in_lock_order`), and how many were left
    out. A member a split brain leaves outside hears one each heartbeat, from every side."""
    out: dict[str, list[Keyed]] = {}
    dropped = 0
    for member, stream in streams.items():
        kept: list[Keyed] = []
        for key, e in stream:
            if isinstance(e, ev.ExplicitSuspicion) and kept \
                    and isinstance(prev := kept[-1][1], ev.ExplicitSuspicion) \
                    and prev.sender == e.sender:
                kept[-1] = (key, e)
                dropped += 1
                continue
            kept.append((key, e))
        out[member] = kept
    return out, dropped


def membership_streams(streams: dict[str, list[Keyed]]
                       ) -> tuple[dict[str, list[Keyed]], dict[tuple[str, str], int]]:
    """`streams` as the membership protocol ran them (`split_incarnations`, `in_lock_order`,
    `without_repeats`), and the records left out, by (event type, reason)."""
    kept, dropped = without_repeats(in_lock_order(split_incarnations(streams)))
    return kept, ({("explicit_suspicion", REPEATED): dropped} if dropped else {})

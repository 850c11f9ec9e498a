"""Membership specs (Hazelcast 3.9, design 002): the view properties M1-M3, versions, master-only.

A view is a member list as installed: ``(version, members)`` with members oldest first (the first
is the master of that list); the legacy pre-3.9 format has version None and is identified by its
members alone. Monitor states are frozensets of ``(member, value)`` pairs, so that the explorer can
hash them and rename members (symmetry) without re-sorting anything.
"""

from __future__ import annotations

from abc import abstractmethod
from collections.abc import Hashable
from typing import Any, NamedTuple

from partsafe.specs.monitor import NO_PAIRS, Conjunction, Monitor, Pairs, PerMember, assign, lookup
from partsafe.specs.registry import Spec, register
from partsafe.traces.events import (
    UNKNOWN_MEMBER,
    Event,
    MastershipAcceptanceReceived,
    MastershipClaimAccepted,
    MastershipClaimed,
    MastershipClaimSent,
    MastershipClaimStarted,
    MemberListInstalled,
)

View = tuple[int | None, tuple[str, ...]]


def view_of(ev: MemberListInstalled) -> View:
    return (ev.version, ev.members)


def incarnation(ev: MemberListInstalled, master: str) -> str:
    """`master` of a list, told apart from its other incarnations by its UUID when the list shows
    UUIDs (a cluster restart starts versions again under new UUIDs)."""
    return f"{master}/{ev.uuids[0]}" if ev.uuids else master


def show(view: View | None) -> str:
    if view is None:
        return "no view"
    version, members = view
    return f"{{v={version}, [{', '.join(members)}]}}" if version is not None else (
        f"[{', '.join(members)}]")


class ViewOrder(Monitor):
    """M1 View Order, in Hazelcast's terms: every member applies member lists in the same order.

    002 Theory: "each Hazelcast member should apply the member list updates in the same order".
    The master of a list is its first member, and the order is the one the master installed its
    lists in: a member's sequence of lists from one master must be a subsequence of that master's
    own sequence. This needs no version (the legacy format has none), and a list that legitimately
    comes back (a member joins, then leaves) is simply a later element of the master's sequence.
    State: each master's sequence of installed lists, and each member's position in it.
    """

    spec = "MEM-VIEW-ORDER"
    observes = frozenset({"member_list_installed", "member_started"})
    judged_on = frozenset({"member_list_installed"})
    key_size = 1

    def key(self, event: Event) -> tuple[Hashable, ...] | None:
        """Per master incarnation; a (re)started member is forgotten by every master's part."""
        if not isinstance(event, MemberListInstalled):
            return ()
        return (incarnation(event, event.members[0]),) if event.members else None

    def initial(self) -> Hashable:
        return (NO_PAIRS, NO_PAIRS)

    def observe(self, state: Hashable, event: Event) -> tuple[Hashable, str | None]:
        sequences, positions = state  # type: ignore[misc]
        p = event.member
        if not isinstance(event, MemberListInstalled):  # a new incarnation starts afresh
            return (sequences, frozenset(kv for kv in positions if kv[0][0] != p)), None
        w = view_of(event)
        if not w[1]:
            return state, None
        master = incarnation(event, w[1][0])
        published: tuple[View, ...] = lookup(sequences, master, ())
        if p == w[1][0]:
            if published and published[-1] == w:
                return state, None
            published = (*published, w)
            return (assign(sequences, master, published),
                    assign(positions, (p, master), len(published) - 1)), None
        start: int = lookup(positions, (p, master), -1)
        for j in range(start + 1, len(published)):
            if published[j] == w:
                return (sequences, assign(positions, (p, master), j)), None
        if start >= 0 and w in published[: start + 1]:
            return state, (f"{p} installs {show(w)} after {show(published[start])}, but master "
                           f"{master} installed {show(w)} before {show(published[start])}")
        return state, None  # a list its master was not seen installing: unknown


class ViewAgreement(Monitor):
    """M2 View Agreement, judged at quiescence: every live member of a live member's view holds it.

    002 allows a member to miss intermediate lists ("a lagging node eventually learns the latest
    member list"), so only the final view is judged: once nothing but faults can happen, for every
    live p and every live q in p's view, q's view is p's view. Members never seen are unknown.
    State: each member's current view and whether it crashed.
    """

    spec = "MEM-VIEW-AGREEMENT"
    observes = frozenset({"member_list_installed", "member_crashed"})

    def initial(self) -> Hashable:
        return NO_PAIRS

    def observe(self, state: Hashable, event: Event) -> tuple[Hashable, str | None]:
        pairs: Pairs = state  # type: ignore[assignment]
        if isinstance(event, MemberListInstalled):
            return assign(pairs, event.member, (view_of(event), True)), None
        return assign(pairs, event.member, (None, False)), None

    def at_quiescence(self, state: Hashable) -> str | None:
        pairs: Pairs = state  # type: ignore[assignment]
        for p, (view, alive) in sorted(pairs):
            if not alive or view is None:
                continue
            for q in view[1]:
                if q == p:
                    continue
                entry = lookup(pairs, q)
                if entry is None or not entry[1]:
                    continue
                if entry[0] != view:
                    return (f"{p} holds {show(view)} but {q}, a live member of it, holds "
                            f"{show(entry[0])}, and nothing but faults can happen")
        return None


class ViewIntegrity(PerMember):
    """M3 View Integrity: every view a member installs includes itself."""

    spec = "MEM-VIEW-INTEGRITY"
    observes = frozenset({"member_list_installed"})

    def initial(self) -> Hashable:
        return None

    def observe(self, state: Hashable, event: Event) -> tuple[Hashable, str | None]:
        assert isinstance(event, MemberListInstalled)
        if event.member not in event.members:
            return state, f"{event.member} installs {show(view_of(event))}, which omits itself"
        return state, None


class VersionIncrease(PerMember):
    """MEM-VERSION, per member: a member applies a list only with a greater version than the
    last it applied (a crashed or restarted member is a new incarnation whose versions start
    again; legacy lists carry no version and are not judged). State: last version per member."""

    spec = "MEM-VERSION"
    observes = frozenset({"member_list_installed", "member_crashed", "member_started"})
    judged_on = frozenset({"member_list_installed"})

    def observe(self, state: Hashable, event: Event) -> tuple[Hashable, str | None]:
        last: Pairs = state  # type: ignore[assignment]
        if not isinstance(event, MemberListInstalled):
            return frozenset(kv for kv in last if kv[0] != event.member), None
        version = event.version
        if version is None:
            return state, None
        before = lookup(last, event.member)
        message = None
        if before is not None and version <= before:
            message = f"{event.member} applies version {version} after version {before}"
        return assign(last, event.member, version), message


class VersionNames(Monitor):
    """MEM-VERSION, per master and version: a version published by one master names one list,
    so two members holding the same version from the same master hold the same members. A master
    is told apart from its other incarnations by its UUID when the lists show UUIDs. State: the
    list of each (master, version) seen."""

    spec = "MEM-VERSION"
    observes = frozenset({"member_list_installed"})
    key_size = 1

    def key(self, event: Event) -> tuple[Hashable, ...] | None:
        assert isinstance(event, MemberListInstalled)
        return (_version_key(event),) if event.version is not None else None

    def initial(self) -> Hashable:
        return NO_PAIRS

    def observe(self, state: Hashable, event: Event) -> tuple[Hashable, str | None]:
        lists: Pairs = state  # type: ignore[assignment]
        assert isinstance(event, MemberListInstalled)
        if event.version is None:
            return state, None
        key = _version_key(event)
        known = lookup(lists, key)
        if known is None:
            return assign(lists, key, event.members), None
        if known != event.members:
            master = key.rsplit("@", 1)[0]
            return state, (f"version {event.version} of master {master} names two lists: "
                           f"[{', '.join(known)}] and [{', '.join(event.members)}]")
        return state, None


def _version_key(event: MemberListInstalled) -> str:
    master = incarnation(event, event.master or (event.members[0] if event.members else ""))
    return f"{master}@{event.version}"


class VersionOrder(Conjunction):
    """MEM-VERSION: a member applies a list only with a greater version; one version, one list.

    The conjunction of `VersionIncrease` (keyed per member) and `VersionNames` (keyed per master
    and version). State: last version per member, and the list of each (master, version) seen.
    """

    spec = "MEM-VERSION"
    PARTS = (VersionIncrease, VersionNames)


#: the events by which a member's suspicions change (002 Member Suspicion & Removal, Explicit
#: Suspicion, Removing Suspicion)
_SUSPICION_EVENTS = frozenset({"member_suspected", "explicit_suspicion", "suspicion_removed"})


class _ListAndSuspicions(PerMember):
    """Per member, its current list and the members it suspects, from its own events: what
    MEM-MASTER-ONLY and MEM-CLAIM-ACCEPT judge a member's step against. A crashed or restarted
    member is forgotten (judged no more). State: member -> (list, suspects)."""

    def track(self, state: Hashable, event: Event) -> tuple[Pairs, tuple[str, ...],
                                                            frozenset[str]] | None:
        """The state after `event` if `event` changes it (None otherwise), and the member's
        list and suspects before it."""
        pairs: Pairs = state  # type: ignore[assignment]
        me = event.member
        kind = event.TYPE
        members, suspects = lookup(pairs, me, ((), frozenset()))
        if kind in ("member_crashed", "member_started"):  # a crashed member is judged no more
            return frozenset(kv for kv in pairs if kv[0] != me), members, suspects
        if kind == "member_list_installed":
            assert isinstance(event, MemberListInstalled)
            return (assign(pairs, me, (event.members, suspects & set(event.members))),
                    members, suspects)
        if kind in _SUSPICION_EVENTS:
            other = getattr(event, "suspect", None) or getattr(event, "sender", "")
            new = suspects - {other} if kind == "suspicion_removed" else suspects | {other}
            return assign(pairs, me, (members, new)), members, suspects
        return None

    def of(self, state: Hashable, member: str) -> tuple[tuple[str, ...], frozenset[str]]:
        """`member`'s list and suspects in `state` (empty if never seen)."""
        return lookup(state, member, ((), frozenset()))  # type: ignore[arg-type]

    def claiming(self, state: Hashable, event: MastershipClaimStarted
                 ) -> tuple[Pairs, tuple[str, ...], frozenset[str]]:
        """The state once `event`'s claimant starts its claim, and its list and suspects then:
        a log's claim line shows both (``MembershipManager``'s ``Local MembersView{...} with
        suspected members: [...]``), which a log that starts mid-run may not have shown before;
        the explorer's shows no list, and the older members as `suspected`, which its own
        suspicions decide."""
        pairs: Pairs = state  # type: ignore[assignment]
        members, suspects = self.of(pairs, event.member)
        if event.members:
            members = event.members
            suspects = frozenset(s for s in suspects if s in members) | set(event.suspected)
        if (members, suspects) != self.of(pairs, event.member):
            pairs = assign(pairs, event.member, (members, suspects))
        return pairs, members, suspects


class MasterOnly(_ListAndSuspicions):
    """MEM-MASTER-ONLY: only the master adds or removes members; a claim starts only when every
    older member is suspected.

    State per member: its current list and the members it suspects (from suspicion events).
    """

    spec = "MEM-MASTER-ONLY"
    observes = frozenset({"member_list_installed", "member_joined", "member_removed",
                          *_SUSPICION_EVENTS, "mastership_claim_started", "member_crashed",
                          "member_started"})
    judged_on = frozenset({"member_joined", "member_removed", "mastership_claim_started"})

    def observe(self, state: Hashable, event: Event) -> tuple[Hashable, str | None]:
        tracked = self.track(state, event)
        if tracked is not None:
            return tracked[0], None
        me = event.member
        kind = event.TYPE
        members, suspects = self.of(state, me)
        if kind in ("member_joined", "member_removed"):
            if members and members[0] != me:
                verb = "adds" if kind == "member_joined" else "removes"
                other = getattr(event, "joined", None) or getattr(event, "removed", "")
                return state, (f"{me} {verb} {other} but is not the master of its list "
                               f"[{', '.join(members)}]")
            return state, None
        assert isinstance(event, MastershipClaimStarted)
        state, members, suspects = self.claiming(state, event)
        if me in members:
            older = members[: members.index(me)]
            missing = [m for m in older if m not in suspects]
            if missing:
                return state, (f"{me} claims mastership while not suspecting older "
                               f"{', '.join(missing)}")
        return state, None


class ClaimAcceptance(_ListAndSuspicions):
    """MEM-CLAIM-ACCEPT: a member accepts a mastership claim only while it suspects every member
    older than the candidate in its own list (002 Mastership Claim Process: "D accepts the
    mastership claim of C only if it also suspects A and B").

    A candidate the member's list does not name is not judged (its older members are unknown).
    State per member: its current list and the members it suspects, as MEM-MASTER-ONLY's.
    On a log (`step`, events with a `source`), a member's suspicions are known only from its
    start on (its ``is STARTING`` line): before it, a log that starts mid-run may have missed
    one.
    """

    spec = "MEM-CLAIM-ACCEPT"
    observes = frozenset({"member_list_installed", *_SUSPICION_EVENTS,
                          "mastership_claim_accepted", "member_crashed", "member_started"})
    judged_on = frozenset({"mastership_claim_accepted"})

    def observe(self, state: Hashable, event: Event) -> tuple[Hashable, str | None]:
        tracked = self.track(state, event)
        if tracked is not None:
            return tracked[0], None
        assert isinstance(event, MastershipClaimAccepted)
        members, suspects = self.of(state, event.member)
        if event.candidate not in members:
            return state, None
        missing = [m for m in members[: members.index(event.candidate)] if m not in suspects]
        if missing:
            return state, (f"{event.member} accepts the mastership claim of {event.candidate} "
                           f"while not suspecting older {', '.join(missing)} of its list "
                           f"[{', '.join(members)}]")
        return state, None

    def step(self, state: Hashable, event: Event) -> tuple[Hashable, str | None]:
        """`observe`; an acceptance read from a file (it has a `source`) is judged only once the
        member's start was seen (kept under the key ``("started", member)``), since a log that
        starts mid-run may have missed a suspicion; the explorer sees every member from its
        start."""
        if event.member == UNKNOWN_MEMBER:
            return state, None
        pairs: Pairs = state  # type: ignore[assignment]
        started = ("started", event.member)
        if isinstance(event, MastershipClaimAccepted) and event.source is not None \
                and lookup(pairs, started) is None:
            return state, None
        state, message = self.observe(state, event)
        if event.TYPE == "member_started":
            state = assign(state, started, True)  # type: ignore[arg-type]
        return state, message


class _OwnList(NamedTuple):
    """A claim whose claimant printed its new list: the list is applied once the claim's line
    that follows it is judged (`_Claims.observe`)."""

    claim: Any
    list: MemberListInstalled


class _Claims(_ListAndSuspicions):
    """`_ListAndSuspicions` and the version of each member's list, and per member that claims
    mastership what its claim did so far (`ClaimResult`, `ClaimDiscovery`), from the
    claimant's own events: a claim is followed from its ``mastership_claim_started`` to its
    ``mastership_claimed`` (or to the claimant's next list, crash or restart); a claim whose
    start was not seen is not judged. State: (member -> (list, suspects), member -> version,
    claimant -> what its claim did)."""

    #: the events every claim monitor observes: a claim's start and end, and the claimant's
    #: lists, suspicions, crash and restart
    CLAIM_EVENTS = frozenset({"mastership_claim_started", "mastership_claimed",
                              "member_list_installed", *_SUSPICION_EVENTS, "member_crashed",
                              "member_started"})

    def initial(self) -> Hashable:
        return (NO_PAIRS, NO_PAIRS, NO_PAIRS)

    def observe(self, state: Hashable, event: Event) -> tuple[Hashable, str | None]:
        lists, versions, claims = state  # type: ignore[misc]
        me = event.member
        claim = lookup(claims, me)
        if isinstance(claim, _OwnList):
            # the claimant printed its new list; Hazelcast prints the claim's line right after
            # it (MembershipManager: ``updateMembers``, then ``Mastership is claimed with``)
            if isinstance(event, MastershipClaimed) and event.version == claim.list.version \
                    and tuple(event.members) == tuple(claim.list.members):
                members, suspects = self.of(lists, me)
                message = self.judge(me, claim.claim, event, members, suspects)
                after, _ = self._plain((lists, versions, claims), claim.list)
                return after, message
            state, _ = self._plain((lists, versions, claims), claim.list)
            return self.observe(state, event)
        if isinstance(event, MemberListInstalled) and claim is not None and event.master == me:
            # its own list at the end of its claim: judged with the claim's line that follows,
            # which shows the same view (any other next record: the list ended the claim)
            return (lists, versions, assign(claims, me, _OwnList(claim, event))), None
        return self._plain(state, event)

    def _plain(self, state: Hashable, event: Event) -> tuple[Hashable, str | None]:
        """`observe` without the claimant's own list held back."""
        lists, versions, claims = state  # type: ignore[misc]
        me = event.member
        claim = lookup(claims, me)
        if isinstance(claim, _OwnList):
            claim = claim.claim
        tracked = self.track(lists, event)
        if tracked is not None:
            lists = tracked[0]
            if isinstance(event, MemberListInstalled):
                versions = assign(versions, me, event.version)
            elif event.TYPE in ("member_crashed", "member_started"):
                versions = frozenset(kv for kv in versions if kv[0] != me)
            if claim is not None and event.TYPE in _SUSPICION_EVENTS:
                if event.TYPE != "suspicion_removed":
                    other = getattr(event, "suspect", None) or getattr(event, "sender", "")
                    claims = assign(claims, me, self.suspected(claim, other))
            elif claim is not None:  # a list (the claim ended), a crash or a restart
                claims = frozenset(kv for kv in claims if kv[0] != me)
            return (lists, versions, claims), None
        if isinstance(event, MastershipClaimStarted):
            lists, members, suspects = self.claiming(lists, event)
            claim = self.started(me, members, lookup(versions, me), suspects)
            return (lists, versions, assign(claims, me, claim)), None
        if claim is None:  # a claim whose start was not seen: unknown
            return state, None
        if isinstance(event, MastershipClaimed):
            members, suspects = self.of(lists, me)
            message = self.judge(me, claim, event, members, suspects)
            return (lists, versions, frozenset(kv for kv in claims if kv[0] != me)), message
        _, suspects = self.of(lists, me)
        return (lists, versions, assign(claims, me, self.advance(me, claim, event, suspects))), None

    # -- what each monitor keeps of a claim

    @abstractmethod
    def started(self, me: str, members: tuple[str, ...], version: int | None,
                suspects: frozenset[str]) -> Any:
        """The claim just started by `me`, whose list is `members` at `version` (None: not
        seen, or a list without a version)."""

    @abstractmethod
    def suspected(self, claim: Any, other: str) -> Any:
        """The claim once its claimant suspects `other`."""

    @abstractmethod
    def advance(self, me: str, claim: Any, event: Event, suspects: frozenset[str]) -> Any:
        """The claim after another event of the claimant's."""

    @abstractmethod
    def judge(self, me: str, claim: Any, event: MastershipClaimed, members: tuple[str, ...],
              suspects: frozenset[str]) -> str | None:
        """A message if the list `event` publishes breaks the spec; `members` is the claimant's
        list, the one it claimed from, and `suspects` the members it suspects."""


class ClaimResult(_Claims):
    """MEM-CLAIM-RESULT: the list a mastership claim publishes holds the claimant first and
    every member whose acceptance it counted and does not suspect, in age order (002 Mastership
    Claim Process: "It puts the members who accepted its mastership claim into the final member
    list"; the example's B publishes ``{v=7, [B, D, E]}``, D and E having accepted).

    Judged at the claimant's ``mastership_claimed``, against the acceptances the claimant itself
    counted (``mastership_acceptance_received``), less the members it suspected since or
    suspects when it publishes. An acceptance only its acceptor shows
    (``mastership_claim_accepted``) is not judged: its answer may be lost, still on its way when
    the claim timeout ends the claim, or come from a member the claimant suspects by then, and
    002 leaves out a member whose answer it does not know.
    That the list holds no member that did not accept is not judged either (an acceptance a log
    does not show is unknown). Age order is the order of the claimant's own list for the members
    it names; members it learned of in answers are not ordered. State per member: its list,
    suspects and version; per claimant, the members whose acceptance it counted.
    """

    spec = "MEM-CLAIM-RESULT"
    observes = frozenset({*_Claims.CLAIM_EVENTS, "mastership_acceptance_received"})
    judged_on = frozenset({"mastership_claimed"})

    def started(self, me: str, members: tuple[str, ...], version: int | None,
                suspects: frozenset[str]) -> Any:
        return frozenset()

    def suspected(self, claim: Any, other: str) -> Any:
        return claim - {other}

    def advance(self, me: str, claim: Any, event: Event, suspects: frozenset[str]) -> Any:
        assert isinstance(event, MastershipAcceptanceReceived)
        return claim | {event.sender}

    def judge(self, me: str, claim: Any, event: MastershipClaimed, members: tuple[str, ...],
              suspects: frozenset[str]) -> str | None:
        published = event.members
        shown = show((event.version, published))
        if not published or published[0] != me:
            return (f"{me} publishes {shown} at the end of its mastership claim, not headed "
                    "by itself")
        missing = sorted(m for m in claim if m not in published and m not in suspects)
        if missing:
            return (f"{me} publishes {shown} at the end of its mastership claim without "
                    f"{', '.join(missing)}, whose acceptance it counted")
        mine = [m for m in published if m in members]
        if mine != [m for m in members if m in published]:
            return (f"{me} publishes {shown} at the end of its mastership claim out of the "
                    f"order of its list [{', '.join(members)}]")
        return None


class ClaimDiscovery(_Claims):
    """MEM-CLAIM-DISCOVER: before it finishes, a mastership claimant asks every member it knows
    of and does not suspect: the members younger than itself in its own list, and every member
    it discovers in an accepted answer whose list is later than every list it knew (002
    Mastership Claim Process: "it sends a mastership claim operation to each of non-suspected
    member in its member list, younger than itself"; D answers ``{v=5, [A, B, C, D, E]}`` to B,
    which held v=4: "it discovers that there is new member: E in the received member list. B
    sends a mastership claim to E"; "B notices that it has asked every other it already knows
    about").

    From the claimant's own events: the claim's start (with the claimant's list) and each
    accepted answer it counts (``mastership_acceptance_received``) with a version greater than
    its own list's and every answer's before name the members it owes a claim; a
    ``mastership_claim_sent`` to one, or a suspicion of it, settles it; a member still owed at
    the claimant's ``mastership_claimed`` is a violation. Not judged: a member only an answer no
    later than a list the claimant knew names (a later list left it out: it was removed, not
    discovered; 002 asks it, Hazelcast's MembershipManager.fetchLatestMembersView does not), lists
    without versions, and whether the claimant waited for the answers of the members it asked
    (the claim timeout, ``hazelcast.mastership.claim.timeout.seconds``, may end the wait and
    shows no event). State per member: its list, suspects and version; per claimant, the members
    it asked and does not suspect, the greatest version it knows, and the members it owes a
    claim with the list that named them (none between steps: a claimant asks in the step that
    names them).
    """

    spec = "MEM-CLAIM-DISCOVER"
    observes = frozenset({*_Claims.CLAIM_EVENTS, "mastership_claim_sent",
                          "mastership_acceptance_received"})
    judged_on = frozenset({"mastership_claimed"})

    def started(self, me: str, members: tuple[str, ...], version: int | None,
                suspects: frozenset[str]) -> Any:
        own = (None, members)
        younger = members[members.index(me) + 1:] if me in members else ()
        return (frozenset(), frozenset((m, own) for m in younger if m not in suspects), version)

    def suspected(self, claim: Any, other: str) -> Any:
        asked, owed, best = claim
        return (asked - {other}, frozenset(kv for kv in owed if kv[0] != other), best)

    def advance(self, me: str, claim: Any, event: Event, suspects: frozenset[str]) -> Any:
        asked, owed, best = claim
        if isinstance(event, MastershipClaimSent):
            return (asked | {event.target}, frozenset(kv for kv in owed if kv[0] != event.target),
                    best)
        assert isinstance(event, MastershipAcceptanceReceived)
        if best is None or event.version is None:
            return claim  # which list is later is unknown
        if event.version <= best:
            return claim
        named = (event.sender, event.members)
        new = [m for m in event.members if m != me and m not in suspects and m not in asked
               and lookup(owed, m) is None]
        return (asked, owed | {(m, named) for m in new}, event.version)

    def judge(self, me: str, claim: Any, event: MastershipClaimed, members: tuple[str, ...],
              suspects: frozenset[str]) -> str | None:
        _, owed, _ = claim
        if not owed:
            return None
        m, (sender, named) = min(owed)
        where = (f"its own list [{', '.join(named)}]" if sender is None
                 else f"the later list [{', '.join(named)}] {sender} accepted with")
        return (f"{me} finishes its mastership claim with {show((event.version, event.members))} "
                f"without asking {m}, which {where} names and {me} does not suspect")


class CrashRemoval(Monitor):
    """MEM-CRASH-REMOVAL, judged at quiescence: a live master's list names no crashed member.

    002 Member Suspicion & Removal: "on master node, the failed member is removed immediately
    and a new member list update is published". Once nothing but faults can happen, the
    master's failure detector has reported every crashed member of its list, so none is left
    in it. A member heading the list it installed last is that list's master; a member never
    seen installing a list is unknown. State: each member's current list and whether it
    crashed.
    """

    spec = "MEM-CRASH-REMOVAL"
    observes = frozenset({"member_list_installed", "member_crashed"})

    def initial(self) -> Hashable:
        return NO_PAIRS

    def observe(self, state: Hashable, event: Event) -> tuple[Hashable, str | None]:
        pairs: Pairs = state  # type: ignore[assignment]
        if isinstance(event, MemberListInstalled):
            return assign(pairs, event.member, (event.members, True)), None
        return assign(pairs, event.member, ((), False)), None

    def at_quiescence(self, state: Hashable) -> str | None:
        pairs: Pairs = state  # type: ignore[assignment]
        for p, (members, alive) in sorted(pairs):
            if not alive or not members or members[0] != p:
                continue
            for q in members:
                entry = lookup(pairs, q)
                if entry is not None and not entry[1]:
                    return (f"master {p} still lists crashed {q} in [{', '.join(members)}], and "
                            "nothing but faults can happen")
        return None


MONITORS: tuple[type[Monitor], ...] = (ViewOrder, ViewAgreement, ViewIntegrity, VersionOrder,
                                       MasterOnly, ClaimAcceptance, CrashRemoval, ClaimResult,
                                       ClaimDiscovery)

register(Spec(
    id="MEM-VIEW-ORDER", title="M1 View Order",
    statement="Every member applies the member lists of a master in the order that master "
              "installed them: a member's sequence of lists from one master (the first member of "
              "a list) is a subsequence of the master's own sequence.",
    seed="002", section="Technical Design / Theory (M1)", kind="event monitor", monitor=ViewOrder,
    rationale="Member lists carry a monotonic version and slaves apply only greater versions, so "
              "all members apply updates in one order. Without versions (hz38-unordered-members) "
              "a periodic publish overtaken by a removal re-adds the removed member."))
register(Spec(
    id="MEM-VIEW-AGREEMENT", title="M2 View Agreement",
    statement="Once nothing but faults can happen, every live member q of a live member p's "
              "current view holds that same view (version and members).",
    seed="002", section="Technical Design / Theory (M2)", kind="quiescence check",
    monitor=ViewAgreement,
    rationale="The paper's M2: q eventually installs v, or p installs a successor without q. 002 "
              "lets a lagging member skip intermediate lists, so only the final view is judged. "
              "A new master that publishes its stale list (hz38-stale-master-list) leaves members "
              "that accepted it holding a newer list it never reconciles."))
register(Spec(
    id="MEM-VIEW-INTEGRITY", title="M3 View Integrity",
    statement="Every view a member installs includes that member.",
    seed="002", section="Technical Design / Theory (M3)", kind="event monitor",
    monitor=ViewIntegrity,
    rationale="Hazelcast rejects a member list update that omits the receiver."))
register(Spec(
    id="MEM-VERSION", title="Member list versions",
    statement="A member applies a member list only with a greater version than it holds; a "
              "version published by one master names one member list.",
    seed="002", section="Membership Update Process", kind="event monitor", monitor=VersionOrder,
    rationale="The version orders updates that arrive out of order or repeat (periodic publish)."))
register(Spec(
    id="MEM-MASTER-ONLY", title="Only the master changes membership",
    statement="Only the master of a member's current list adds or removes members; a member "
              "starts a mastership claim only when it suspects every member older than itself.",
    seed="002", section="Member Suspicion & Removal; Mastership Claim Process",
    kind="event monitor", monitor=MasterOnly,
    rationale="Slaves removing suspected members on their own (the pre-3.9 behaviour, "
              "hz38-local-removal) makes member lists diverge."))
register(Spec(
    id="MEM-CLAIM-ACCEPT", title="A claim is accepted only past every older member",
    statement="A member accepts a mastership claim only while it suspects every member older "
              "than the candidate in its own member list.",
    seed="002", section="Mastership Claim Process", kind="event monitor",
    monitor=ClaimAcceptance,
    rationale="002: 'D accepts the mastership claim of C only if it also suspects A and B. "
              "Otherwise, it makes C retry its mastership claim request to D.' A member that "
              "follows a younger candidate while an older member it still trusts is alive splits "
              "the cluster in two. MEM-MASTER-ONLY judges the claimant's side, this the "
              "acceptor's; Hazelcast's ClusterServiceImpl.shouldAcceptMastership is the check."))
register(Spec(
    id="MEM-CRASH-REMOVAL", title="The master removes crashed members",
    statement="Once nothing but faults can happen, no live master's member list (the list it "
              "installed last, which it heads) names a crashed member.",
    seed="002", section="Member Suspicion & Removal", kind="quiescence check",
    monitor=CrashRemoval,
    rationale="002: 'on master node, the failed member is removed immediately and a new member "
              "list update is published'. Judged where nothing but faults can happen, so a "
              "failure detector that has not reported the crash yet, or a claim still running, "
              "is not a violation: a master that never removes a crashed member is."))
register(Spec(
    id="MEM-CLAIM-RESULT", title="A claim publishes the members that accepted it",
    statement="The member list a mastership claim publishes is headed by the claimant and holds "
              "every member whose acceptance the claimant counted and does not suspect, in the "
              "order of the claimant's list.",
    seed="002", section="Mastership Claim Process", kind="event monitor", monitor=ClaimResult,
    rationale="002: 'It puts the members who accepted its mastership claim into the final "
              "member list'. A member that accepted follows the claimant; left out of its list, "
              "it is told it is out and claims on its own, and the cluster splits. Judged "
              "against the acceptances the claimant counted: an acceptance whose answer it never "
              "received is unknown (MembershipManager.decideNewMembersView leaves such a member "
              "out)."))
register(Spec(
    id="MEM-CLAIM-DISCOVER", title="A claimant asks every member it knows of",
    statement="Before it finishes, a mastership claimant asks every member it knows of and does "
              "not suspect: the members younger than itself in its list, and every member it "
              "discovers in the member list of an accepted answer later than every list it "
              "knew.",
    seed="002", section="Mastership Claim Process", kind="event monitor",
    monitor=ClaimDiscovery,
    rationale="002's example: D answers B with a later list, 'it discovers that there is new "
              "member: E in the received member list. B sends a mastership claim to E'; 'B "
              "notices that it has asked every other it already knows about'. A member the "
              "claimant never asks is left out of the new list though it may be alive and "
              "willing. A claimant discovers members it missed: an update still on its way "
              "when the master crashed or was suspected. A member only a stale answer names "
              "was removed by a later list, not discovered; whether the claimant waits for the "
              "answers is not judged (the claim timeout may end the wait)."))

"""Hazelcast 3.9 membership (002 "Cluster Service Consistency Improvements") as node handlers.

The master orders every change of the member list with a version (002 Membership Update Process);
slaves only suspect, the master removes (002 Member Suspicion & Removal); a slave that suspects
every older member claims mastership, collects the member lists of those that accept and publishes
the accepted members at the latest known version + 1 (002 Mastership Claim Process). Members that
see a diverged view ask to be suspected (002 Explicit Suspicion), and a heartbeat or a list from a
suspected member lifts the suspicion (002 Removing Suspicion).

Nodes are named "A", "B", ... in age order: the initial members first, then the joiners, which are
dormant until `on_join`. The historical flaws of 002 are variants, switched by flags inside the
handlers (`VARIANT_TABLE`).

One file, one class of handlers: the membership protocol of 002 (member lists, suspicion, the
mastership claim) is one state machine whose handlers share the member state.
"""

from __future__ import annotations

import string
from collections.abc import Hashable, Iterable
from typing import NamedTuple, cast

from partsafe.refimpl.actor import Channels, NodeId, Send, Step, Timing, message
from partsafe.refimpl.failure_detector import HeartbeatProtocol
from partsafe.refimpl.profiles import Rule, Source, check_rules, rule_table
from partsafe.refimpl.variants import Variant, variant_docs, variant_table
from partsafe.traces import events as ev
from partsafe.traces.events import Event

#: the variants (refimpl/variants.py): each flaw of 002's Background as a flag in the handlers
VARIANT_TABLE: dict[str, Variant] = variant_table(
    Variant("fixed", "the 3.9 design: versioned lists applied only from the master, slaves only "
            "suspect, claims discover newer lists (002 Technical Design)"),
    Variant("hz38-unordered-members", "member lists carry no version, so a periodic publish "
            "overtaken by a removal re-adds the removed member (002 Background, problem 1)",
            breaks="MEM-VIEW-ORDER", zoo_scope={"suspicions": 0, "publishes": 1}),
    Variant("hz38-stale-master-list", "a new master publishes its own, possibly stale, list at "
            "its own version + 1 without discovering newer lists (002 Background, problem 3)",
            breaks="MEM-VIEW-AGREEMENT", zoo_scope={"suspicions": 0}),
    Variant("hz38-local-removal", "a slave removes a member it suspects from its own list at "
            "once (002 Member Suspicion & Removal, \"In the previous implementation...\")",
            breaks="MEM-MASTER-ONLY", zoo_scope={"joins": 0}),
    Variant("mutant-no-self-check", "not historical: the removed member is sent the list "
            "without it and members apply lists that omit themselves (breaks 002 Theory, M3 View "
            "Integrity)", breaks="MEM-VIEW-INTEGRITY", zoo_scope={"joins": 0}),
)
#: the names and docs of `VARIANT_TABLE` as they were at import
VARIANTS: tuple[str, ...] = tuple(VARIANT_TABLE)
VARIANT_DOCS: dict[str, str] = variant_docs(VARIANT_TABLE)

_HZ = "hazelcast/hazelcast"
_CLUSTER = "hazelcast/src/main/java/com/hazelcast/internal/cluster/impl/"
_MM = _CLUSTER + "MembershipManager.java"
_CSI = _CLUSTER + "ClusterServiceImpl.java"
#: master at the 4.1 branch point ("prepare for next development cycle", 4.1-SNAPSHOT to
#: 4.2-SNAPSHOT, 2020-10-26); the claim methods are the same from the 3.12 branch point
#: (d8f516a9) to 5.0-SNAPSHOT (9146c0e8), but for types and logging
_HZ41 = "91e02636da33f9500636d790f58b6a7111f18d48"
#: the stored 5.x copies of MembershipManager.java and ClusterServiceImpl.java
_HZ5_MM = "1cc9f204d7acd1b58ad78dacb36b314ecf73147a"
_HZ5_CSI = "01370696abaeccde563f54905742b7fa075567f2"

#: the rules of the release profiles (refimpl/profiles.py): where the code of a shipped
#: Hazelcast membership release does something else than `fixed`, each row citing its source
RULE_TABLE: dict[str, Rule] = rule_table(
    Rule("hz39-claim-latest-view",
         "the claimant keeps one 'latest' view: its own list from itself on, replaced by an "
         "accepted answer only when that answer's version is strictly greater; it asks the "
         "members it had not asked only from such a strictly later view, and publishes the "
         "members of the latest view that accepted, in that view's order, at its version + 1 "
         "(002 Mastership Claim Process, as 3.9 to 5.x implement it)",
         "the claimant learns members from every accepted answer and publishes every member "
         "it learned of that accepted (002's text: 'It puts the members who accepted its "
         "mastership claim into the final member list'); a member that accepted but is "
         "missing from the latest view still follows the claimant, so partsafe keeps it",
         (Source(_HZ, "v3.9", _MM, "MembershipManager.decideNewMembersView"),
          Source(_HZ, "v3.9", _MM, "MembershipManager.fetchLatestMembersView"),
          Source(_HZ, "v3.9", _MM, "MembershipManager.fetchMembersViewFromNewMembers"),
          Source(_HZ, _HZ41, _MM, "MembershipManager.decideNewMembersView"),
          Source(_HZ, _HZ5_MM, _MM, "MembershipManager.fetchLatestMembersView"))),
    Rule("hz39-claim-accepts-suspected",
         "a member answers a claim as ClusterServiceImpl.handleMastershipClaim does: it "
         "refuses for good (IllegalStateException, the claimant drops it) when it is not "
         "joined, is a master or a claimant itself, or does not know the candidate; it says "
         "'not yet' (RetryableHazelcastException) while it does not suspect every member "
         "older than the candidate; it refuses for good a candidate it suspects that is older "
         "than the master it follows (MembershipManager.clearMemberSuspicion); otherwise it "
         "accepts, lifting its suspicion of the candidate, whomever it followed. 3.9.x also "
         "refuses a claim from the master it already follows (removed in 3.10 by 'Make "
         "mastership claim idempotent'); the model sends a claim twice only with duplications",
         "a member accepts only a candidate it does not suspect, and only while it follows "
         "that candidate or the head of its list (which it suspects); any other answer is "
         "'not yet': 'D accepts the mastership claim of C only if it also suspects A and B. "
         "Otherwise, it makes C retry' (002), read as 'accept only a claim I would make in "
         "its place'",
         (Source(_HZ, "v3.9", _CSI, "ClusterServiceImpl.handleMastershipClaim"),
          Source(_HZ, "v3.9", _MM, "MembershipManager.clearMemberSuspicion"),
          Source(_HZ, _HZ41, _CSI, "ClusterServiceImpl.handleMastershipClaim"),
          Source(_HZ, _HZ41, _MM, "MembershipManager.clearMemberSuspicion"),
          Source(_HZ, _HZ5_CSI, _CSI, "ClusterServiceImpl.handleMastershipClaim"))),
    Rule("hz39-explicit-suspicion-view",
         "an explicit suspicion request carries the receiver's view as the sender saw it (the "
         "MembersViewMetadata of the heartbeat, list or complaint it answers: the master it "
         "follows and its list's version), and the receiver ignores one whose view is not its "
         "own any more (MembershipManager.handleExplicitSuspicion: \"Ignoring explicit "
         "suspicion of …\"): a request made before the receiver's list changed is stale",
         "002 gives a request no view: the receiver always suspects the sender; the same "
         "request sent again adds nothing, so fixed explores fewer states",
         (Source(_HZ, _HZ41, _MM, "MembershipManager.handleExplicitSuspicion"),
          Source(_HZ, _HZ41, _CLUSTER + "ClusterHeartbeatManager.java",
                 "ClusterHeartbeatManager.handleHeartbeatComplaint"),
          Source(_HZ, _HZ5_MM, _MM, "MembershipManager.handleExplicitSuspicion"))),
    Rule("hz39-split-brain-merge",
         "a master asks each configured address that is not its member whether to merge "
         "(SplitBrainJoinMessage, answered by SplitBrainMergeValidationOp); a master that finds "
         "the asker's side should merge into its own (its member count the larger: "
         "ClusterJoinManager.shouldMerge) and whose list's version is below the asker's raises "
         "its version to the asker's + 1 and publishes its list unchanged "
         "(MembershipManager.verifySplitBrainMergeMemberListVersion), so that the members that "
         "merge in, each restarted under a new UUID, never see a version go back; the members "
         "of the merging side then leave their cluster (the model: they crash) and join the "
         "other as new members (the model: joiners)",
         "002 runs one cluster and says nothing of merging two: the model has no split-brain "
         "merge, and a member removed by the master stays out (its sides never meet again)",
         (Source(_HZ, _HZ41, _MM, "MembershipManager.verifySplitBrainMergeMemberListVersion"),
          Source(_HZ, _HZ41, _CLUSTER + "operations/SplitBrainMergeValidationOp.java",
                 "SplitBrainMergeValidationOp.run"),
          Source(_HZ, _HZ5_MM, _MM, "MembershipManager.verifySplitBrainMergeMemberListVersion"))),
)


# --- node state -------------------------------------------------------------------------------


class Claim(NamedTuple):
    """A mastership claim in progress at the claimant (002 Mastership Claim Process)."""

    #: claim sent, no answer yet
    waiting: frozenset[str]
    #: answered "not yet", to be asked again by the ("claim-retry", q) timer
    retry: frozenset[str]
    #: accepted the claim
    accepted: frozenset[str]
    #: every member the claimant knows, age-ordered: its own list, then members discovered in
    #: the responses, in the order first seen
    known: tuple[str, ...]
    #: the greatest member list version seen: the claimant's own and every accepted response's
    best_version: int | None
    #: hz39-claim-latest-view: the members of the latest view (at `best_version`), from the
    #: claimant on, in that view's order; empty otherwise
    latest: tuple[str, ...] = ()


class MemberState(NamedTuple):
    """The membership state of one node."""

    #: member list version (number of joins and removals); None in hz38-unordered-members
    version: int | None
    #: the member list, oldest first; members[0] is the master of this list
    members: tuple[str, ...]
    #: whom this node follows now; differs from members[0] while a claim runs or was accepted;
    #: for a joiner not yet joined, the member it sends its join request to
    master: str | None
    #: members this node suspects (never populated on a master: it removes instead)
    suspects: frozenset[str]
    #: the node's own mastership claim, if it is claiming
    claim: Claim | None
    #: False for a started joiner until it receives its first member list
    joined: bool


# --- messages ---------------------------------------------------------------------------------
#
# Messages are named tuples made to compare by class as well as by fields (`message`), so that a
# JoinRequest() and a MastershipClaim() in flight between the same nodes are two messages.

@message
class MembersUpdate(NamedTuple):
    """The master publishes a member list; also how a joiner learns it joined (FinalizeJoin)."""

    version: int | None
    members: tuple[str, ...]


@message
class JoinRequest(NamedTuple):
    """A joiner asks to join the cluster."""


@message
class MastershipClaim(NamedTuple):
    """The sender claims mastership (002 Mastership Claim Process)."""


@message
class MasterAddress(NamedTuple):
    """A member that is not the master tells a joiner whom to ask instead."""

    master: str


@message
class ClaimResponse(NamedTuple):
    """The answer to a claim, carrying the responder's member list."""

    accepted: bool
    version: int | None
    members: tuple[str, ...]


@message
class ClaimRefused(NamedTuple):
    """hz39-claim-accepts-suspected: a claim refused for good (the IllegalStateException or
    IllegalArgumentException of ClusterServiceImpl.handleMastershipClaim), not to be retried."""


#: a member's view as a request names it (Hazelcast's ``MembersViewMetadata``): the master it
#: follows and its list's version
View = tuple[str | None, int | None]


@message
class ExplicitSuspicion(NamedTuple):
    """Asks the receiver to suspect the sender and go its own way (002 Explicit Suspicion).
    hz39-explicit-suspicion-view: `expected` is the receiver's view as the sender saw it (in
    the heartbeat or the list it answers), and a receiver whose view has changed since ignores
    the request (``MembershipManager.handleExplicitSuspicion``); None otherwise."""

    expected: View | None


@message
class HeartbeatComplaint(NamedTuple):
    """A member that is not the master heard a heartbeat from `complainee`, which is not in its
    list, and tells its master (002 Explicit Suspicion, last paragraph: "it sends a complaint
    message to master")."""

    complainee: str
    #: the complainee's view, from its heartbeat, and the complainer's own
    complainee_view: View
    complainer_view: View


@message
class ExplicitSuspicionTrigger(NamedTuple):
    """The master asks the receiver to send `target` an explicit suspicion (002 Explicit
    Suspicion: the master answers a complaint with explicit suspicions "to either of one or both
    of complainee and complainer"; ``ClusterServiceImpl.sendExplicitSuspicionTrigger``)."""

    target: str
    #: the target's view, from the complaint
    expected: View


@message
class SplitBrainJoin(NamedTuple):
    """hz39-split-brain-merge: the master of one side of a split brain asks a master it does
    not count among its members whether to merge (``SplitBrainMergeValidationOp``), with its
    list's version and its member count."""

    version: int | None
    size: int


Message = (MembersUpdate | JoinRequest | MasterAddress | MastershipClaim | ClaimResponse
           | ClaimRefused | ExplicitSuspicion | HeartbeatComplaint | ExplicitSuspicionTrigger
           | SplitBrainJoin)

_NOT_FROM_MASTER = "not from master"
_STALE = "stale version"
_OMITS_RECEIVER = "omits receiver"


def _requests(msg: Hashable) -> bool:
    """The messages a copy of which in flight makes another one add nothing."""
    return isinstance(msg, ExplicitSuspicion | HeartbeatComplaint | ExplicitSuspicionTrigger
                      | SplitBrainJoin)


def _view(st: MemberState) -> View:
    """`st`'s view as a request names it: its master and its list's version."""
    return (st.master, st.version)


def _fmt_view(view: View) -> str:
    return f"{view[0]}" + ("" if view[1] is None else f" v={view[1]}")


def _fmt(members: Iterable[str]) -> str:
    return "[" + ",".join(members) + "]"


def _older(members: tuple[str, ...], node: str) -> tuple[str, ...]:
    """The members before `node` in `members` (all of them if `node` is not in it)."""
    return members[: members.index(node)] if node in members else members


def _younger(members: tuple[str, ...], node: str) -> tuple[str, ...]:
    return members[members.index(node) + 1 :] if node in members else ()


def _tail(members: tuple[str, ...], node: str) -> tuple[str, ...]:
    """`node` and the members after it (MemberMap.toTailMembersView(node, true)); empty if
    `node` is not in `members`."""
    return members[members.index(node) :] if node in members else ()


def _before(members: tuple[str, ...], a: str, b: str | None) -> bool:
    """`a` comes before `b` in `members`, both in it (MemberMap.isBeforeThan)."""
    return (b is not None and a != b and a in members and b in members
            and members.index(a) < members.index(b))


class Membership(HeartbeatProtocol):
    """The 002 membership protocol with `members` initial members and `joiners` dormant joiners.

    Members watch each other with the heartbeat failure detector (refimpl/failure_detector.py):
    `monitored` and `heartbeat_targets` below."""

    name = "membership"

    def __init__(self, members: int = 4, joiners: int = 1, variant: str = "fixed",
                 rules: Iterable[str] = (), complaints: bool = False,
                 merges: bool = False) -> None:
        if members < 1:
            raise ValueError(f"members must be at least 1, got {members}")
        if joiners < 0:
            raise ValueError(f"joiners must not be negative, got {joiners}")
        if members + joiners > len(string.ascii_uppercase):
            raise ValueError(
                f"at most {len(string.ascii_uppercase)} nodes (members + joiners), "
                f"got {members + joiners}"
            )
        if variant not in VARIANT_TABLE:
            raise ValueError(
                f"unknown membership variant {variant!r}; known: {', '.join(VARIANT_TABLE)}"
            )
        self.variant = variant
        #: the rules this instance follows: a release profile's (`RULE_TABLE`) and the variant
        self.rules = check_rules("membership", (*rules, variant), RULE_TABLE, VARIANT_TABLE)
        self.initial_members: tuple[str, ...] = tuple(string.ascii_uppercase[:members])
        self.joiners: tuple[str, ...] = tuple(
            string.ascii_uppercase[members : members + joiners]
        )
        self.nodes = self.initial_members + self.joiners
        self.interchangeable = (frozenset(self.joiners),) if joiners > 1 else ()
        # variant flags
        self.versioned = "hz38-unordered-members" not in self.rules
        self.discover = "hz38-stale-master-list" not in self.rules
        self.local_removal = "hz38-local-removal" in self.rules
        self.self_check = "mutant-no-self-check" not in self.rules
        # release rules (RULE_TABLE)
        self.latest_view = "hz39-claim-latest-view" in self.rules
        self.accepts_suspected = "hz39-claim-accepts-suspected" in self.rules
        self.split_brain_merge = "hz39-split-brain-merge" in self.rules
        self.view_check = "hz39-explicit-suspicion-view" in self.rules
        #: members complain to their master of heartbeats from non-members (002 Explicit
        #: Suspicion, last paragraph). Off by default, an abstraction: in a model run the
        #: members the master removes hear of it from the master itself (its answer to their
        #: heartbeats), and every stale list would otherwise send a complaint that changes
        #: nothing (the default scope's states grow tenfold); on where a log shows a member
        #: left outside that only the complaint's trigger makes suspect the others
        self.complaints = complaints
        #: hz39-split-brain-merge's search for other clusters runs (the masters' split-brain
        #: join timer). Off by default, an abstraction like `complaints`: only a false suspicion
        #: splits a model cluster, and at the default scope the search's messages to every node
        #: outside a list (dormant joiners, crashed members) multiply the states past what a
        #: default search finishes; on where a log shows a false suspicion or a merge
        self.merges = merges

    # -- initial states and joins --------------------------------------------------------------

    def initial(self, node: NodeId) -> MemberState | None:
        if node in self.joiners:
            return None
        if node not in self.initial_members:
            raise ValueError(f"unknown node {node!r}")
        return MemberState(
            version=len(self.initial_members) if self.versioned else None,
            members=self.initial_members,
            master=self.initial_members[0],
            suspects=frozenset(),
            claim=None,
            joined=True,
        )

    def initial_events(self, node: NodeId, state: Hashable) -> tuple[Event, ...]:
        """An initial member has installed the initial member list."""
        st = cast(MemberState | None, state)
        return () if st is None else (self._installed(node, st),)

    def on_join(self, node: NodeId) -> Step:
        """A dormant joiner starts and sends a join request to the oldest initial member."""
        if node not in self.joiners:
            raise ValueError(f"{node!r} is not a joiner of this scope")
        st = MemberState(
            version=0 if self.versioned else None,
            members=(),
            master=self.initial_members[0],
            suspects=frozenset(),
            claim=None,
            joined=False,
        )
        return Step(st, ((self.initial_members[0], JoinRequest()),))

    # -- roles ---------------------------------------------------------------------------------

    @staticmethod
    def is_master(node: NodeId, st: MemberState) -> bool:
        """`node` runs the cluster: it heads its own list, follows itself and is not claiming."""
        return (
            st.joined and st.claim is None and st.master == node
            and bool(st.members) and st.members[0] == node
        )

    # -- messages ------------------------------------------------------------------------------

    def on_message(self, node: NodeId, state: Hashable, src: NodeId, msg: Hashable) -> Step:
        st = cast(MemberState | None, state)
        if st is None:
            return Step(st)
        if isinstance(msg, MembersUpdate):
            return self._on_members_update(node, st, src, msg)
        if isinstance(msg, JoinRequest):
            return self._on_join_request(node, st, src)
        if isinstance(msg, MasterAddress):
            if st.joined or msg.master == st.master:
                return Step(st)
            return Step(st._replace(master=msg.master))
        if isinstance(msg, MastershipClaim):
            return self._on_claim(node, st, src)
        if isinstance(msg, ClaimResponse):
            return self._on_claim_response(node, st, src, msg)
        if isinstance(msg, ClaimRefused):
            return self._on_claim_refused(node, st, src)
        if isinstance(msg, ExplicitSuspicion):
            return self._on_explicit_suspicion(node, st, src, msg.expected)
        if isinstance(msg, HeartbeatComplaint):
            return self._on_heartbeat_complaint(node, st, src, msg)
        if isinstance(msg, ExplicitSuspicionTrigger):
            if not st.joined or msg.target == node:
                return Step(st)
            return Step(st, ((msg.target, ExplicitSuspicion(self._expect(msg.expected))),))
        if isinstance(msg, SplitBrainJoin):
            return self._on_split_brain_join(node, st, msg)
        raise TypeError(f"membership: unknown message {msg!r}")

    def _on_members_update(
        self, node: NodeId, st: MemberState, src: NodeId, msg: MembersUpdate
    ) -> Step:
        """002 Membership Update Process: apply a newer list from the master, ignore the rest.

        A list from a node that is not this node's master is rejected and answered with an explicit
        suspicion (002 Explicit Suspicion, third and fourth case). An applied list lifts the
        suspicion of the master (002 Removing Suspicion). hz38-unordered-members: any list that
        differs from the current one is applied; the same list again is no change.
        """
        master = st.master if st.joined else (msg.members[0] if msg.members else None)
        if not st.joined and node not in msg.members:
            return Step(st)  # a publish that raced the join; the joiner is not a member yet
        if src != master:
            return Step(
                st,
                ((src, ExplicitSuspicion(self._expect((src, msg.version)))),),
                (self._rejected(node, src, msg, _NOT_FROM_MASTER),),
            )
        if self.versioned:
            assert st.version is not None and msg.version is not None
            if msg.version <= st.version:
                return Step(st, (), (self._rejected(node, src, msg, _STALE),))
        elif msg.members == st.members:
            return Step(st)
        if self.self_check and node not in msg.members:
            return Step(st, (), (self._rejected(node, src, msg, _OMITS_RECEIVER),))
        events: list[Event] = []
        if src in st.suspects:
            events.append(ev.SuspicionRemoved(member=node, suspect=src))
        new = st._replace(
            version=msg.version,
            members=msg.members,
            master=msg.members[0],
            suspects=(st.suspects & frozenset(msg.members)) - {src},
            joined=True,
        )
        events.append(self._installed(node, new))
        return Step(new, (), tuple(events))

    def _on_join_request(self, node: NodeId, st: MemberState, joiner: NodeId) -> Step:
        """002 Membership Update Process: only the master accepts a join, at version + 1; a member
        that follows another master tells the joiner whom to ask."""
        if joiner in st.members or not st.joined:
            return Step(st)
        if not self.is_master(node, st):
            if st.master is None or st.master == node:
                return Step(st)
            return Step(st, ((joiner, MasterAddress(st.master)),))
        new = st._replace(version=self._bump(st.version), members=(*st.members, joiner))
        return Step(
            new,
            self._publish(node, new),
            (
                ev.MemberJoined(member=node, joined=joiner, version=new.version),
                self._installed(node, new),
            ),
        )

    def _on_claim(self, node: NodeId, st: MemberState, claimant: NodeId) -> Step:
        """002 Mastership Claim Process: accept a claim only if I would claim in its place.

        The claimant must be a member I do not suspect, every member older than it must be
        suspected, I must not follow another claimant and must not be claiming myself.
        hz39-claim-accepts-suspected: the released rule instead (`_on_claim_released`).
        """
        if self.accepts_suspected:
            return self._on_claim_released(node, st, claimant)
        accept = (
            st.joined
            and st.claim is None
            and claimant in st.members
            and claimant not in st.suspects
            and all(m in st.suspects for m in _older(st.members, claimant))
            and (
                st.master == claimant
                or (st.master == st.members[0] and st.members[0] in st.suspects)
            )
        )
        reply = ClaimResponse(accept, st.version, st.members)
        if not accept:
            return Step(st, ((claimant, reply),))
        new = st._replace(master=claimant)
        return Step(
            new,
            ((claimant, reply),),
            (ev.MastershipClaimAccepted(member=node, candidate=claimant, version=st.version),),
        )

    def _on_claim_released(self, node: NodeId, st: MemberState, claimant: NodeId) -> Step:
        """hz39-claim-accepts-suspected: ClusterServiceImpl.handleMastershipClaim (3.10 to 5.x).

        Refused for good if I am not joined, follow myself (a master or a claimant: isMaster),
        or do not know the claimant; "not yet" while a member older than the claimant is not
        suspected (shouldAcceptMastership); refused for good if I suspect the claimant and it
        is older than the master I follow (clearMemberSuspicion); otherwise accepted: I lift my
        suspicion of the claimant and follow it, whomever I followed before.
        """
        if not st.joined or st.master == node or claimant not in st.members:
            return Step(st, ((claimant, ClaimRefused()),))
        if not all(m in st.suspects for m in _older(st.members, claimant)):
            return Step(st, ((claimant, ClaimResponse(False, st.version, st.members)),))
        events: list[Event] = []
        if claimant in st.suspects:
            if _before(st.members, claimant, st.master):
                return Step(st, ((claimant, ClaimRefused()),))
            events.append(ev.SuspicionRemoved(member=node, suspect=claimant))
        new = st._replace(master=claimant, suspects=st.suspects - {claimant})
        events.append(
            ev.MastershipClaimAccepted(member=node, candidate=claimant, version=st.version))
        return Step(new, ((claimant, ClaimResponse(True, st.version, st.members)),),
                    tuple(events))

    def _on_claim_refused(self, node: NodeId, st: MemberState, src: NodeId) -> Step:
        """hz39-claim-accepts-suspected: a member refused the claim for good; the claimant asks
        it no more (its future failed: decideNewMembersView leaves it out)."""
        claim = st.claim
        if claim is None or src not in claim.waiting:
            return Step(st)
        claim = claim._replace(waiting=claim.waiting - {src})
        return self._try_finalize(node, st._replace(claim=claim))

    def _on_claim_response(
        self, node: NodeId, st: MemberState, src: NodeId, msg: ClaimResponse
    ) -> Step:
        """002 Mastership Claim Process: collect an answer, discover members in accepted lists.

        An accepted answer is observed as ``MastershipAcceptanceReceived``, and each member it
        makes the claimant ask as ``MastershipClaimSent`` (MEM-CLAIM-RESULT, MEM-CLAIM-DISCOVER).

        hz39-claim-latest-view: an accepted answer counts only if its list is strictly later
        than the latest view (MembershipManager.fetchLatestMembersView): then its members from
        the claimant on become the latest view, and the members in it not asked yet are asked
        (fetchMembersViewFromNewMembers).
        """
        claim = st.claim
        if claim is None or src not in claim.waiting:
            return Step(st)
        waiting = claim.waiting - {src}
        if not msg.accepted:
            claim = claim._replace(waiting=waiting, retry=claim.retry | {src})
            return self._try_finalize(node, st._replace(claim=claim))
        if self.latest_view and self.discover:
            return self._on_claim_response_latest(node, st, src, msg)
        best = claim.best_version
        if best is not None and msg.version is not None:
            best = max(best, msg.version)
        known = claim.known
        sends: list[Send] = []
        events: list[Event] = [self._received(node, src, msg)]
        if self.discover:
            for m in msg.members:
                if m in known:
                    continue
                known = (*known, m)
                if m != node and m not in st.suspects:
                    sends.append((m, MastershipClaim()))
                    events.append(ev.MastershipClaimSent(member=node, target=m))
                    waiting = waiting | {m}
        claim = claim._replace(
            waiting=waiting, accepted=claim.accepted | {src}, known=known, best_version=best
        )
        done = self._try_finalize(node, st._replace(claim=claim))
        return Step(done.state, (*sends, *done.sends), (*events, *done.events))

    def _on_claim_response_latest(
        self, node: NodeId, st: MemberState, src: NodeId, msg: ClaimResponse
    ) -> Step:
        """hz39-claim-latest-view: an accepted answer; see `_on_claim_response`."""
        claim = st.claim
        assert claim is not None
        waiting = claim.waiting - {src}
        known, latest, best = claim.known, claim.latest, claim.best_version
        sends: list[Send] = []
        events: list[Event] = [self._received(node, src, msg)]
        if best is not None and msg.version is not None and msg.version > best:
            best, latest = msg.version, _tail(msg.members, node)
            for m in latest:
                if m in known:
                    continue
                known = (*known, m)
                if m != node and m not in st.suspects:
                    sends.append((m, MastershipClaim()))
                    events.append(ev.MastershipClaimSent(member=node, target=m))
                    waiting = waiting | {m}
        claim = claim._replace(waiting=waiting, accepted=claim.accepted | {src}, known=known,
                               best_version=best, latest=latest)
        done = self._try_finalize(node, st._replace(claim=claim))
        return Step(done.state, (*sends, *done.sends), (*events, *done.events))

    def _try_finalize(self, node: NodeId, st: MemberState) -> Step:
        """Finish the claim once nobody is left to ask: publish the accepted members.

        002 Mastership Claim Process: the new list holds the claimant and the members that accepted
        (in age order), at the latest known version + 1 (hz38-stale-master-list: the claimant's own
        list and version; hz39-claim-latest-view: the members of the latest view that accepted,
        in its order, as MembershipManager.decideNewMembersView).
        """
        claim = st.claim
        if claim is None or claim.waiting or claim.retry:
            return Step(st)
        order = (claim.latest if self.latest_view else claim.known) if self.discover \
            else st.members
        members = (
            node,
            *(m for m in order if m in claim.accepted and m not in st.suspects and m != node),
        )
        version = self._bump(claim.best_version if self.discover else st.version)
        new = st._replace(
            version=version,
            members=members,
            master=node,
            suspects=st.suspects & frozenset(members),
            claim=None,
        )
        # Hazelcast's order (MembershipManager's claim task, 3.9 to 5.x): ``updateMembers``
        # prints the new list, ``sendMemberListToOthers`` publishes it, then ``Mastership is
        # claimed with: MembersView{…}``
        return Step(
            new,
            self._publish(node, new),
            (
                self._installed(node, new),
                ev.MastershipClaimed(member=node, version=version, members=members),
            ),
        )

    # -- explicit suspicion and split brains ---------------------------------------------------

    def _on_explicit_suspicion(self, node: NodeId, st: MemberState, src: NodeId,
                               expected: View | None) -> Step:
        """002 Explicit Suspicion: suspect the sender, which asked for it, if the request was
        made for this member's view as it is (``MembershipManager.handleExplicitSuspicion``).
        Under hz39-explicit-suspicion-view the request is observed as the code prints it
        (``ExplicitSuspicionOp``: "Received suspicion request from"), whether or not it changes
        anything: one made for an older view, or from a member already suspected, changes
        nothing."""
        if not st.joined or src == node:
            return Step(st)
        current = expected is None or _view(st) == expected
        step = self._suspect(node, st, src, explicit=True, reason="") if current else Step(st)
        if step.events or not self.view_check:
            return step
        return Step(step.state, step.sends, (ev.ExplicitSuspicion(member=node, sender=src),))

    def _on_heartbeat_complaint(self, node: NodeId, st: MemberState, complainer: NodeId,
                                msg: HeartbeatComplaint) -> Step:
        """002 Explicit Suspicion: the master answers a complaint according to its own
        verification (``ClusterHeartbeatManager.handleHeartbeatComplaint``): a side that is not
        its member following it (``validateMembersViewMetadata``) is sent an explicit suspicion
        by the master, and by the other side on the master's trigger; where both are, both are
        sent the current list (here: by the periodic publish)."""
        complainee = msg.complainee
        if not self.is_master(node, st) or complainer == complainee:
            return Step(st)
        ours = (complainee in st.members and msg.complainee_view[0] == node,
                complainer in st.members and msg.complainer_view[0] == node)
        if ours == (True, True):
            # both are sent the current list: the list the periodic publish sends them, which
            # the model leaves to that publish (its sends are gated on none being in flight)
            return Step(st)
        sends: list[Send] = []
        for outsider, view, ok, other in (
                (complainee, msg.complainee_view, ours[0], complainer),
                (complainer, msg.complainer_view, ours[1], complainee)):
            if not ok:
                sends.append((outsider, ExplicitSuspicion(self._expect(view))))
                if ours[0] != ours[1]:
                    sends.append((other, ExplicitSuspicionTrigger(outsider, view)))
        return Step(st, tuple((d, m) for d, m in sends if d != node))

    def _on_split_brain_join(self, node: NodeId, st: MemberState, msg: SplitBrainJoin) -> Step:
        """hz39-split-brain-merge: another side's master asks; where that side should merge into
        this one and its version is ahead, raise this list's version past it and publish
        (``MembershipManager.verifySplitBrainMergeMemberListVersion``)."""
        if not self.is_master(node, st) or len(st.members) < msg.size:
            return Step(st)
        if st.version is None or msg.version is None or st.version >= msg.version:
            return Step(st)
        new = st._replace(version=msg.version + 1)
        return Step(new, self._publish(node, new), (self._installed(node, new),))

    # -- failure detection ---------------------------------------------------------------------

    def on_crash(self, node: NodeId, state: Hashable) -> tuple[Event, ...]:
        """`node` crashed (crash-stop), observed as ``MemberCrashed`` (002 Member Suspicion &
        Removal): the membership monitors judge its view no more."""
        return (ev.MemberCrashed(member=node),)

    def on_suspect(self, node: NodeId, state: Hashable, suspect: NodeId, reason: str) -> Step:
        """002 Member Suspicion & Removal: the master removes `suspect`, a slave suspects it."""
        st = cast(MemberState | None, state)
        if st is None:
            return Step(st)
        return self._suspect(node, st, suspect, explicit=False, reason=reason)

    def _suspect(
        self, node: NodeId, st: MemberState, q: NodeId, *, explicit: bool, reason: str
    ) -> Step:
        """Suspect `q`: from the failure detector, or on request (002 Explicit Suspicion).

        The master removes `q` at once and publishes (it never merely suspects). A slave or a
        claimant marks `q` suspected; a slave that then suspects every older member claims
        mastership (002 Mastership Claim Process), asking each younger member it does not suspect
        (``MastershipClaimSent``). hz38-local-removal: a slave removes `q` from its own list
        instead.
        """
        claim = st.claim
        known = claim.known if claim is not None else st.members
        if not st.joined or q == node or q in st.suspects or q not in known:
            return Step(st)
        noticed: Event = (
            ev.ExplicitSuspicion(member=node, sender=q)
            if explicit
            else ev.MemberSuspected(member=node, suspect=q, reason=reason)
        )
        if self.is_master(node, st):
            return self._remove(node, st, q, (noticed,) if explicit else ())
        if self.local_removal and claim is None:
            return self._remove(node, st, q, (noticed,))
        events: list[Event] = [noticed]
        sends: list[Send] = []
        suspects = st.suspects | {q}
        if claim is not None:
            st = st._replace(
                suspects=suspects,
                claim=claim._replace(
                    waiting=claim.waiting - {q},
                    retry=claim.retry - {q},
                    accepted=claim.accepted - {q},
                ),
            )
        else:
            st = st._replace(suspects=suspects)
            older = _older(st.members, node)
            if node in st.members and all(m in suspects for m in older):
                waiting = tuple(m for m in _younger(st.members, node) if m not in suspects)
                st = st._replace(
                    master=node,
                    claim=Claim(
                        waiting=frozenset(waiting),
                        retry=frozenset(),
                        accepted=frozenset(),
                        known=st.members,
                        best_version=st.version,
                        latest=_tail(st.members, node) if self.latest_view else (),
                    ),
                )
                events.append(ev.MastershipClaimStarted(member=node, suspected=older))
                events.extend(ev.MastershipClaimSent(member=node, target=m) for m in waiting)
                sends.extend((m, MastershipClaim()) for m in waiting)
        done = self._try_finalize(node, st)
        return Step(done.state, (*sends, *done.sends), (*events, *done.events))

    def _remove(
        self, node: NodeId, st: MemberState, q: NodeId, prefix: tuple[Event, ...]
    ) -> Step:
        """Remove `q` from `node`'s own list at version + 1 and publish the result."""
        if q not in st.members:
            return Step(st, (), prefix)
        members = tuple(m for m in st.members if m != q)
        new = st._replace(
            version=self._bump(st.version),
            members=members,
            master=members[0] if st.master == q else st.master,
            suspects=st.suspects - {q},
        )
        # a master publishes the result; a slave removing on its own (hz38-local-removal) keeps it
        # to itself unless it heads the new list
        sends = self._publish(node, new) if new.master == node else ()
        if sends and not self.self_check:
            sends = (*sends, (q, MembersUpdate(new.version, new.members)))
        removed = ev.MemberRemoved(member=node, removed=q, version=new.version)
        return Step(new, sends, (*prefix, removed, self._installed(node, new)))

    def heartbeat_view(self, node: NodeId, state: Hashable) -> Hashable:
        """A heartbeat carries its sender's view (``MembersViewMetadata``)."""
        st = cast(MemberState | None, state)
        return None if st is None or not st.joined else _view(st)

    def on_heartbeat(self, node: NodeId, state: Hashable, sender: NodeId,
                     view: Hashable = None) -> Step:
        """A heartbeat from `sender`.

        A master answers a heartbeat from a non-member with an explicit suspicion (002 Explicit
        Suspicion, first two cases); another member complains of it to its master (the last
        paragraph). A member still following the head of its list stops
        suspecting a member it hears from (002 Removing Suspicion).
        """
        st = cast(MemberState | None, state)
        if st is None or not st.joined:
            return Step(st)
        if self.is_master(node, st):
            if sender not in st.members:
                return Step(st, ((sender, ExplicitSuspicion(self._expect(cast(View, view)))),))
            return Step(st)
        if sender not in st.members and self.complaints:
            # 002 Explicit Suspicion: a complaint to the master, unless it suspects the master
            # (``ClusterHeartbeatManager.onInvalidHeartbeat``); a claimant follows itself
            if st.master is None or st.master == node or st.master in st.suspects:
                return Step(st)
            return Step(st, ((st.master, HeartbeatComplaint(sender, cast(View, view),
                                                            _view(st))),))
        if (
            sender in st.suspects
            and sender in st.members
            and st.claim is None
            and st.master == st.members[0]
        ):
            new = st._replace(suspects=st.suspects - {sender})
            return Step(new, (), (ev.SuspicionRemoved(member=node, suspect=sender),))
        return Step(st)

    def monitored(self, node: NodeId, state: Hashable) -> tuple[NodeId, ...]:
        """Members my failure detector watches: my list (a claimant: all it knows), unsuspected."""
        st = cast(MemberState | None, state)
        if st is None or not st.joined:
            return ()
        pool = st.members
        if st.claim is not None:
            pool = pool + tuple(m for m in st.claim.known if m not in st.members)
        return tuple(m for m in pool if m != node and m not in st.suspects)

    def heartbeat_targets(self, node: NodeId, state: Hashable) -> frozenset[NodeId]:
        """My list minus me and the suspected (002: no heartbeats to a suspected member)."""
        st = cast(MemberState | None, state)
        if st is None or not st.joined:
            return frozenset()
        return frozenset(m for m in st.members if m != node and m not in st.suspects)

    # -- timers --------------------------------------------------------------------------------

    def timers(self, node: NodeId, state: Hashable) -> tuple[tuple[str, ...], ...]:
        """("publish",) on a master with others to tell, ("claim-retry", q) for each member that
        answered a claim with "not yet", ("claim-timeout",) while anyone has not accepted, and
        ("join",) and ("join-timeout",) on a joiner: ask its join target again, or give up on it
        and ask the next initial member."""
        st = cast(MemberState | None, state)
        if st is None:
            return ()
        if not st.joined:
            return (("join",), ("join-timeout",))
        out: list[tuple[str, ...]] = []
        if self.is_master(node, st) and len(st.members) > 1:
            out.append(("publish",))
        if self.split_brain_merge and self.merges and self.is_master(node, st):
            out.extend(("split-brain-join", q) for q in self.nodes
                       if q not in st.members and q != node)
        if st.claim is not None:
            out.extend(("claim-retry", q) for q in sorted(st.claim.retry))
            if st.claim.retry or st.claim.waiting:
                out.append(("claim-timeout",))
        return tuple(out)

    def on_timer(self, node: NodeId, state: Hashable, timer: Hashable) -> Step:
        st = cast(MemberState | None, state)
        if not isinstance(timer, tuple) or not timer:
            raise ValueError(f"membership: unknown timer {timer!r}")
        kind = timer[0]
        if kind == "publish":
            # 002 Membership Update Process: the periodic member list publish
            if st is None or not self.is_master(node, st):
                return Step(st)
            return Step(st, self._publish(node, st))
        if kind == "split-brain-join":
            # hz39-split-brain-merge: the periodic search for other clusters at the configured
            # addresses (``SplitBrainHandler``); a merge check changes nothing here
            if st is None or not self.is_master(node, st):
                return Step(st)
            return Step(st, ((timer[1], SplitBrainJoin(st.version, len(st.members))),))
        if kind == "claim-retry":
            q = timer[1]
            if st is None or st.claim is None or q not in st.claim.retry:
                return Step(st)
            claim = st.claim._replace(retry=st.claim.retry - {q}, waiting=st.claim.waiting | {q})
            return Step(st._replace(claim=claim), ((q, MastershipClaim()),))
        if kind == "claim-timeout":
            # 002 User Interaction, hazelcast.mastership.claim.timeout.seconds: the candidate gives
            # up on the members that did not answer or keep answering "not yet", and finishes
            # without them
            if st is None or st.claim is None or not (st.claim.waiting or st.claim.retry):
                return Step(st)
            claim = st.claim._replace(waiting=frozenset(), retry=frozenset())
            return self._try_finalize(node, st._replace(claim=claim))
        if kind in ("join", "join-timeout"):
            if st is None or st.joined or st.master is None:
                return Step(st)
            if kind == "join-timeout":
                # the target did not answer: the next configured address. Hazelcast's TCP-IP
                # joiner asks every address of its member list (``TcpIpJoiner
                # .getPossibleAddresses``), and a member that is not the master answers with the
                # master's address (`MasterAddress`): every other node of the scope, initial
                # members first, so that a joiner finds a master that joined after it was
                # configured (with one joiner, the initial members, as before)
                seeds = tuple(n for n in self.nodes if n != node)
                target = seeds[(seeds.index(st.master) + 1) % len(seeds)] \
                    if st.master in seeds else seeds[0]
                st = st._replace(master=target)
            return Step(st, ((st.master, JoinRequest()),))
        raise ValueError(f"membership: unknown timer {timer!r}")

    @property
    def channels(self) -> Channels:  # type: ignore[override]
        """Requests sent again each heartbeat or each merge check (a suspicion request, its
        trigger, a complaint, a merge check) are acted on once, whatever the copies in flight."""
        return Channels(idempotent=_requests)

    def is_timeout(self, timer: Hashable) -> bool:
        """The claim and join timeouts are timeouts; publish, retry and join are periodic."""
        return isinstance(timer, tuple) and timer[:1] in (("claim-timeout",), ("join-timeout",))

    @property
    def timing(self) -> Timing:  # type: ignore[override]
        """The claim and join timeouts (002 User Interaction) wait for their node's messages."""
        return Timing(timeout=self.is_timeout)

    # -- presentation --------------------------------------------------------------------------

    def describe(self, node: NodeId, state: Hashable) -> dict[str, object]:
        st = cast(MemberState | None, state)
        if st is None:
            return {"dormant": True}
        out: dict[str, object] = {
            "version": st.version,
            "members": list(st.members),
            "master": st.master,
            "suspects": sorted(st.suspects),
        }
        out["joined"] = st.joined
        out["claim"] = None
        if st.claim is not None:
            c = st.claim
            claim: dict[str, object] = {
                "waiting": sorted(c.waiting),
                "retry": sorted(c.retry),
                "accepted": sorted(c.accepted),
                "known": list(c.known),
                "best_version": c.best_version,
            }
            if self.latest_view:
                claim["latest"] = list(c.latest)
            out["claim"] = claim
        return out

    def describe_message(self, msg: Hashable) -> str:
        if isinstance(msg, MembersUpdate):
            return f"MembersUpdate{self._v(msg.version)} {_fmt(msg.members)}"
        if isinstance(msg, ClaimResponse):
            verdict = "accepted" if msg.accepted else "rejected"
            return f"ClaimResponse {verdict}{self._v(msg.version)} {_fmt(msg.members)}"
        if isinstance(msg, MasterAddress):
            return f"MasterAddress {msg.master}"
        if isinstance(msg, ExplicitSuspicion):
            if msg.expected is None:
                return "ExplicitSuspicion"
            return f"ExplicitSuspicion for {_fmt_view(msg.expected)}"
        if isinstance(msg, HeartbeatComplaint):
            return f"HeartbeatComplaint of {msg.complainee}"
        if isinstance(msg, ExplicitSuspicionTrigger):
            return f"ExplicitSuspicionTrigger for {msg.target}"
        if isinstance(msg, SplitBrainJoin):
            return f"SplitBrainJoin{self._v(msg.version)} size={msg.size}"
        if isinstance(msg, JoinRequest | MastershipClaim | ClaimRefused):
            return type(msg).__name__
        return repr(msg)

    # -- helpers -------------------------------------------------------------------------------

    def _expect(self, view: View) -> View | None:
        """What an explicit suspicion request names of its receiver's view: `view` under
        hz39-explicit-suspicion-view, else nothing (002 gives a request no view)."""
        return view if self.view_check else None

    @staticmethod
    def _v(version: int | None) -> str:
        return "" if version is None else f" v={version}"

    def _bump(self, version: int | None) -> int | None:
        return version + 1 if self.versioned and version is not None else None

    @staticmethod
    def _publish(node: NodeId, st: MemberState) -> tuple[Send, ...]:
        msg = MembersUpdate(st.version, st.members)
        return tuple((m, msg) for m in st.members if m != node)

    @staticmethod
    def _installed(node: NodeId, st: MemberState) -> ev.MemberListInstalled:
        return ev.MemberListInstalled(
            member=node, version=st.version, members=st.members, master=st.master
        )

    @staticmethod
    def _received(node: NodeId, src: NodeId, msg: ClaimResponse) -> Event:
        return ev.MastershipAcceptanceReceived(member=node, sender=src, version=msg.version,
                                               members=msg.members)

    @staticmethod
    def _rejected(node: NodeId, src: NodeId, msg: MembersUpdate, reason: str) -> Event:
        return ev.MemberListRejected(member=node, sender=src, version=msg.version, reason=reason)

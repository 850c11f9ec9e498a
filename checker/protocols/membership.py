"""The membership model of `partsafe check` (002 "Cluster Service Consistency Improvements"):
the handlers of refimpl/membership.py in the actor layer, with the membership monitors and the
scenarios a clean verdict must have reached.

Its variants are refimpl/membership.py's `VARIANT_TABLE` (docs/extending.md), and the rules the
release profiles name (refimpl/profiles.py: hz-3.7's flaws of 002's Background, 3.9 to 5.x's
mastership claim) its `RULE_TABLE`.
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence

from partsafe.checker.actor.model import CRASHED, ActorModel, Budget, World
from partsafe.checker.engine.model import Action, Goal
from partsafe.checker.protocols.entry import ModelEntry, Param
from partsafe.checker.protocols.log_trace import Bind, Ignore, LogTable, Order, Shown
from partsafe.refimpl.failure_detector import FALSE as FALSE_SUSPICION
from partsafe.refimpl.membership import (
    RULE_TABLE,
    VARIANT_TABLE,
    Membership,
    MemberState,
    MembersUpdate,
)
from partsafe.specs.membership import MONITORS as MEMBERSHIP_MONITORS
from partsafe.traces import events as ev
from partsafe.traces.incarnations import incarnation_name, membership_streams


def _member(world: World, proto: Membership, node: str) -> MemberState | None:
    st = world.nodes[proto.nodes.index(node)]
    return None if st is None or st is CRASHED else st  # type: ignore[return-value]


def membership_goals(proto: Membership) -> tuple[Goal[World], ...]:
    """The scenarios a clean membership verdict must have reached (002)."""
    joiners = set(proto.joiners)

    def states(world: World) -> list[tuple[str, MemberState]]:
        return [(n, st) for n, st in zip(proto.nodes, world.nodes, strict=True)
                if st is not None and st is not CRASHED]

    def join_completes(prev: World, action: Action, nxt: World) -> bool:
        if action[0] != "deliver" or action[2] not in joiners:
            return False
        old, new = _member(prev, proto, action[2]), _member(nxt, proto, action[2])
        return new is not None and new.joined and (old is None or not old.joined)

    def claim_completes(prev: World, action: Action, nxt: World) -> bool:
        return any(st.claim is None and st.members and st.members[0] == n
                   and (old := _member(prev, proto, n)) is not None and old.claim is not None
                   for n, st in states(nxt))

    def candidate_crashes(prev: World, action: Action, nxt: World) -> bool:
        return action[0] == "crash" and (st := _member(prev, proto, action[1])) is not None \
            and st.claim is not None

    def publish_races_removal(prev: World, action: Action, nxt: World) -> bool:
        if action[0] != "deliver" or not isinstance(action[3], MembersUpdate):
            return False
        msg: MembersUpdate = action[3]
        st = _member(prev, proto, action[2])
        if st is None or not st.joined or action[1] != st.master:
            return False
        newer = msg.version is None or (st.version is not None and st.version > msg.version)
        return newer and bool(set(msg.members) - set(st.members))

    def claim_discovers(prev: World, action: Action, nxt: World) -> bool:
        if action[0] != "deliver" or (st := _member(nxt, proto, action[2])) is None:
            return False
        old = _member(prev, proto, action[2])
        return (st.claim is not None and old is not None and old.claim is not None
                and len(st.claim.known) > len(old.claim.known))

    def claim_retried(prev: World, action: Action, nxt: World) -> bool:
        return action[0] == "timer" and action[2][0] == "claim-retry"

    def live_member_removed(prev: World, action: Action, nxt: World) -> bool:
        return action[0] == "false-suspect" and (st := _member(prev, proto, action[1])) \
            is not None and Membership.is_master(action[1], st)

    return (
        Goal("join-completes", "a joiner is accepted and installs its first member list",
             join_completes),
        Goal("claim-completes", "a mastership claim finishes and the new master publishes",
             claim_completes),
        Goal("candidate-crashes-mid-claim", "a member crashes while its mastership claim runs",
             candidate_crashes),
        Goal("publish-races-removal", "a member list from the master arrives after a newer list "
             "that removed one of its members", publish_races_removal),
        Goal("master-removes-live-member", "the master falsely suspects a live member and "
             "removes it", live_member_removed),
        Goal("claim-discovers-member", "a claimant learns of a member it did not know from a "
             "claim response (002: B discovers E from D's answer)", claim_discovers),
        Goal("claim-retried", "a member answers a claim with \"not yet\" and is asked again",
             claim_retried),
    )


def _busy(node: str, state: Hashable) -> bool:
    st: MemberState = state  # type: ignore[assignment]
    return st.claim is not None or not st.joined


def build_membership(variant: str, scope: dict[str, int],
                     rules: frozenset[str] = frozenset()) -> ActorModel:
    """The membership model of `variant` at `scope` (the entry's parameters), following the
    release `rules` (refimpl/profiles.py)."""
    proto = Membership(scope["members"], scope["joiners"], variant, rules,
                       complaints=bool(scope.get("complaints", 0)),
                       merges=bool(scope.get("merges", 0)))
    budget = Budget(crashes=scope["crashes"], joins=scope["joins"],
                    suspicions=scope["suspicions"], losses=scope["losses"],
                    duplications=scope["duplications"], publishes=scope["publishes"])
    return ActorModel(proto, budget, [m() for m in MEMBERSHIP_MONITORS],
                      goals=membership_goals(proto),
                      scope={"members": scope["members"], "joiners": scope["joiners"]},
                      busy=_busy)


_MEMBER = Bind("member")
_VERSION = Order("member list version")
_PARTITION_SERVICE = ("a partition service message: the partition models (migration, shutdown, "
                      "parallel) have its steps")


def log_members(records: Sequence[ev.Event]) -> tuple[int, int, set[str]]:
    """How many initial members and joiners a Hazelcast log needs, and the members it shows
    suspected or removed (or left out of a later list). The initial members are the members
    of the earliest member list it shows, with every member named before that list (a member
    removed as the log begins), but the ones whose start the log shows first (they join), bar
    the list's master (which founded the cluster); every other member it names is a joiner."""
    ordered = sorted(records, key=lambda e: (e.order or 0))
    first = next((e for e in ordered if isinstance(e, ev.MemberListInstalled)), None)
    before = ordered[:ordered.index(first)] if first is not None else ordered
    started = {e.member for e in before if isinstance(e, ev.MemberStarted)}
    initial: list[str] = []
    if first is not None:
        initial = [m for m in first.members if m not in started or m == first.master]
    for e in before:
        for name in _named(e):
            if name not in initial and name not in started:
                initial.append(name)
    named = {n for e in records for n in _named(e)}
    # a member is failed when removed, suspected by a failure detector, or left out of a later
    # list (`_failures`), or followed by an incarnation of its own
    failed = {q for _, q, _, _ in _failures(records)} | _ended(named)
    return max(1, len(initial)), len(named - set(initial)), failed


#: how a record tells of a member's failure (`_failures`)
REMOVED, LEFT_OUT = "removed or suspected", "left out of a later list"


def _failures(records: Sequence[ev.Event]) -> list[tuple[str, str, int | None, str]]:
    """(member, the member it took for failed, when, how) for each removal and failure
    detector's suspicion (an explicit suspicion is a message of the protocol, not a fault:
    `REMOVED`), and each member a list leaves out that the member's list before held (its
    removal printed nowhere, a log that ends first: `LEFT_OUT`)."""
    out: list[tuple[str, str, int | None, str]] = []
    seen: dict[str, ev.MemberListInstalled] = {}
    for e in sorted(records, key=lambda e: e.order or 0):
        if isinstance(e, ev.MemberRemoved):
            out.append((e.member, e.removed, e.order, REMOVED))
        elif isinstance(e, ev.MemberSuspected) and e.reason != EXPLICIT_REASON:
            out.append((e.member, e.suspect, e.order, REMOVED))
        elif isinstance(e, ev.MemberListInstalled):
            before = seen.get(e.member)
            if before is not None:
                out.extend((e.member, q, e.order, LEFT_OUT)
                           for q in sorted(set(before.members) - set(e.members)))
            seen[e.member] = e
    return out


def _ended(named: set[str]) -> set[str]:
    """The incarnations a later one of the same address followed (traces/incarnations.py)."""
    return {incarnation_name(address, k - 1) for address, k in map(_incarnation, named) if k > 1}


def _last_records(records: Sequence[ev.Event]) -> dict[str, int]:
    """Each member's last record's time."""
    last: dict[str, int] = {}
    for e in records:
        if e.order is not None:
            last[e.member] = max(last.get(e.member, e.order), e.order)
    return last


def _later_second(t: int, than: int) -> bool:
    """Is `t` certainly after `than`: a later second, a timestamp's precision."""
    return t // 1000 > than // 1000


def log_scope(records: Sequence[ev.Event]) -> dict[str, int]:
    """The scope a Hazelcast log needs of the membership model (002): its members and joiners
    (`log_members`). A member suspected or removed needs a crash, unless it lived on after
    (`lived_on`); it needs a false suspicion from each member that suspected it while it lived
    (`false_suspicions`). Hazelcast's master republishes its list periodically, so one such
    publish may race a newer list. Where a suspicion was false, the member left outside hears
    from every side: the members' heartbeat complaints are on; and the masters' search for
    other clusters (a split-brain merge), as where a log prints a merge."""
    members, joiners, failed = log_members(records)
    wrong = false_suspicions(records)
    split = bool(wrong) or any(isinstance(e, ev.SplitBrainMerge) for e in records)
    return {"members": members, "joiners": joiners, "joins": joiners,
            "crashes": len(failed - lived_on(records)), "suspicions": len(wrong),
            "publishes": 1, "complaints": int(bool(wrong)), "merges": int(split)}


def false_suspicions(records: Sequence[ev.Event]) -> set[tuple[str, str]]:
    """The (member, suspect) pairs of the failure detectors' suspicions and removals that were
    false: the suspect's own log goes on after it (by a later second, a timestamp's precision;
    a pause, a partition), or no log of the suspect was given (nothing says it stopped). A
    suspect whose log ends before needs a crash only (a kill, a stop); an explicit suspicion
    is a message of the protocol, not a fault. A log that says so (the reason a model's
    false suspicion gives: `partsafe export` of a counterexample) is taken at its word."""
    said = {(e.member, e.suspect) for e in records
            if isinstance(e, ev.MemberSuspected) and e.reason == FALSE_SUSPICION}
    first: dict[tuple[str, str], int] = {}
    for n, q, t, how in _failures(records):
        if how == REMOVED and t is not None:
            first[(n, q)] = min(first.get((n, q), t), t)
    last = _last_records(records)
    return said | {(n, q) for (n, q), t in first.items()
                   if q not in last or _later_second(last[q], t)}


def lived_on(records: Sequence[ev.Event]) -> set[str]:
    """The members whose own log goes on past every suspicion, removal and list that left them
    out (by a later second, a timestamp's precision): a pause, a partition, a false suspicion.
    None of them needs a crash, but an incarnation a later one of the same address followed
    (its end is a kill, a stop or a merge's restart)."""
    latest: dict[str, int] = {}
    for _, q, t, _ in _failures(records):
        if t is not None:
            latest[q] = max(latest.get(q, t), t)
    last = _last_records(records)
    ended = _ended({n for e in records for n in _named(e)})
    return {q for q, t in latest.items()
            if q in last and q not in ended and _later_second(last[q], t)}


#: the reason a member printing "Member … is suspected to be dead for reason: …" gives when an
#: explicit suspicion asked it to (``MembershipManager.handleExplicitSuspicion``)
EXPLICIT_REASON = "explicit suspicion"
#: the reason the parser gives the failure detector's "Suspecting Member … because it has not
#: sent any heartbeats" (traces/payload.py)
HEARTBEAT_REASON = "heartbeat timeout"


def _incarnation(name: str) -> tuple[str, int]:
    address, _, k = name.partition("#")
    return address, int(k) if k.isdigit() else 1


def _named(e: ev.Event) -> list[str]:
    out = [e.member]
    for name in ("members", "removed", "suspect", "candidate", "master", "requester"):
        v = getattr(e, name, None)
        out.extend(v if isinstance(v, tuple) else [v] if isinstance(v, str) else [])
    return out


def _prints(model: ActorModel, state: World, action: Action, nxt: World,
            events: tuple[ev.Event, ...]) -> tuple[ev.Event, ...]:
    """What Hazelcast prints for a membership step: a joiner's start first (LifecycleService
    ``STARTING``), and after an explicit suspicion that makes a member that is not the master
    suspect the sender, the suspicion itself; before a failure detector's suspicion, its own
    line (``MembershipManager.suspectMember`` prints
    "Member … is suspected to be dead for reason: explicit suspicion")."""
    if action[0] == "join":
        return (ev.MemberStarted(member=action[1]), *events)
    if action[0] in ("suspect", "false-suspect"):
        # the failure detector's own line, on the master too: "Suspecting Member … because it
        # has not sent any heartbeats since …" (ClusterHeartbeatManager; not printed where a
        # closed connection suspects instead: the row is not always printed)
        events = (ev.MemberSuspected(member=action[1], suspect=action[2],
                                     reason=HEARTBEAT_REASON), *events)
    if not any(isinstance(e, ev.ExplicitSuspicion) for e in events):
        return events
    proto: Membership = model.protocol  # type: ignore[assignment]
    out: list[ev.Event] = []
    for e in events:
        out.append(e)
        if isinstance(e, ev.ExplicitSuspicion):
            before = _member(state, proto, e.member)
            if before is not None and before.joined and e.sender not in before.suspects \
                    and not Membership.is_master(e.member, before) \
                    and e.sender in (before.claim.known if before.claim else before.members):
                out.append(ev.MemberSuspected(member=e.member, suspect=e.sender,
                                              reason=EXPLICIT_REASON))
    return tuple(out)


#: how a Hazelcast log shows a member's start, a member list and a removal (the partition
#: models' tables have these rows too)
MEMBER_ROWS = {
    "member_started": Shown("LifecycleService: [h]:p is STARTING (a dormant node joins)",
                            fields={"uuid": Ignore("the model's members have no UUIDs")}),
    "member_list_installed": Shown(
        "ClusterService: Members {size:N, ver:V} [ Member [h]:p - uuid … ] (every list a "
        "member applies)",
        fields={"members": _MEMBER, "master": _MEMBER, "version": _VERSION,
                "uuids": Ignore("the model's members have no UUIDs")}),
    "member_removed": Shown(
        "MembershipManager: Removing Member [h]:p - uuid (on the master; the model also "
        "lets a member remove a crashed master on its own, which Hazelcast does not print)",
        always=False, fields={"removed": _MEMBER, "version": _VERSION}),
}

#: how a Hazelcast log (at INFO) shows the membership model's steps (002; the messages of
#: docs/validation.md, "The messages read", families 2 to 5 and 11)
LOG_TABLE = LogTable(
    product="Hazelcast",
    shown={
        **MEMBER_ROWS,
        "member_suspected": Shown(
            "MembershipManager (WARNING): Member [h]:p - uuid is suspected to be dead for "
            "reason: r (on a member that is not the master; the master removes at once)",
            always=False, fields={"suspect": _MEMBER,
                                  "reason": Ignore("the product's wording, not the model's")}),
        "explicit_suspicion": Shown(
            "ExplicitSuspicionOp: Received suspicion request from: [h]:p", always=False,
            fields={"sender": _MEMBER, "reason": Ignore("the product's wording")}),
        "suspicion_removed": Shown(
            "MembershipManager: Removed suspicion of Member [h]:p - uuid. Reason: r",
            always=False, fields={"suspect": _MEMBER}),
        "mastership_claim_started": Shown(
            "MembershipManager: Local MembersView{…} with suspected members: […] and initial "
            "addresses to ask: […]",
            fields={"suspected": Ignore("the log shows every member suspected, the model the "
                                        "older ones"),
                    "members": Ignore("the model's event does not carry the list")}),
        "mastership_claimed": Shown(
            "MembershipManager: Mastership is claimed with: MembersView{…}",
            fields={"members": _MEMBER, "version": _VERSION}),
        "mastership_claim_accepted": Shown(
            "ClusterServiceImpl (WARNING): Mastership of [h]:p is accepted. Response: "
            "MembersView{…}", fields={"candidate": _MEMBER, "version": _VERSION}),
        "mastership_claim_sent": Shown(
            "MembershipManager (FINE): Asking MembersView of [h]:p", always=False,
            fields={"target": _MEMBER}),
        "mastership_acceptance_received": Shown(
            "MembershipManager (FINE): A more recent MembersView{…} is received from [h]:p",
            always=False, fields={"sender": _MEMBER, "version": _VERSION, "members": _MEMBER}),
    },
    prints=lambda model, state, action, nxt, events: _prints(model, state, action, nxt, events),
    starts=lambda member: ev.MemberStarted(member=member),
    outside={t: _PARTITION_SERVICE for t in (
        "repartitioning", "migrations_completed", "migration_started", "migration_finished",
        "migration_failed", "migration_committed", "migration_rolled_back", "migrations_waiting",
        "partition_table_applied", "partition_table_published", "partition_version_applied",
        "partition_table_conflict", "partition_table_fetch", "partition_lost",
        "shutdown_requested", "shutdown_request_handled", "shutdown_allowed", "member_left",
        "promotion_committed", "replica_cleared", "replica_synced", "plan_started",
        "plan_state", "plan_decision", "plan_order")} | {
        "split_brain_merge": "a merge of two clusters: the model runs one cluster",
        "cluster_state_changed": "the cluster state (ACTIVE, FROZEN, …) is not modelled",
    },
    scope=log_scope,
    streams=membership_streams,
)


MEMBERSHIP = ModelEntry(
    name="membership",
    title="Hazelcast 3.9 cluster membership",
    seed="002",
    params={
        "members": Param(3, "initial members, oldest first (A is the master)", 1),
        "joiners": Param(1, "dormant nodes that may join"),
        "crashes": Param(1, "crash-stop failures"),
        "joins": Param(1, "joins of dormant nodes"),
        "suspicions": Param(1, "false suspicions of live members"),
        "losses": Param(0, "lost messages"),
        "duplications": Param(0, "duplicated messages"),
        "publishes": Param(0, "periodic member list publishes that race newer updates"),
        "complaints": Param(0, "1: members complain to the master of heartbeats from "
                               "non-members (002 Explicit Suspicion; off: an abstraction, "
                               "docs/models.md)"),
        "merges": Param(0, "1: masters look for other clusters and merge with them "
                           "(hz39-split-brain-merge; off: an abstraction, docs/models.md)"),
    },
    variant_table=VARIANT_TABLE,
    rule_table=RULE_TABLE,
    log_table=LOG_TABLE,
    build=build_membership,
    action_kinds=("deliver", "timer", "suspect", "heartbeat", "crash", "join", "false-suspect",
                  "drop", "duplicate", "timer-race"),
)

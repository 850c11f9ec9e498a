"""The membership model of `partsafe check` (002 "Cluster Service Consistency Improvements"):
the handlers of refimpl/membership.py in the actor layer, with the membership monitors and the
scenarios a clean verdict must have reached.

Its variants are refimpl/membership.py's `VARIANT_TABLE` (docs/extending.md), and the rules the
release profiles name (refimpl/profiles.py: hz-3.7's flaws of 002's Background, 3.9 to 5.x's
mastership claim) its `RULE_TABLE`.
"""

from __future__ import annotations

from collections.abc import Hashable

from partsafe.checker.actor.model import CRASHED, ActorModel, Budget, World
from partsafe.checker.engine.model import Action, Goal
from partsafe.checker.protocols.entry import ModelEntry, Param
from partsafe.refimpl.membership import (
    RULE_TABLE,
    VARIANT_TABLE,
    Membership,
    MemberState,
    MembersUpdate,
)
from partsafe.specs.membership import MONITORS as MEMBERSHIP_MONITORS


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
    proto = Membership(scope["members"], scope["joiners"], variant, rules)
    budget = Budget(crashes=scope["crashes"], joins=scope["joins"],
                    suspicions=scope["suspicions"], losses=scope["losses"],
                    duplications=scope["duplications"], publishes=scope["publishes"])
    return ActorModel(proto, budget, [m() for m in MEMBERSHIP_MONITORS],
                      goals=membership_goals(proto),
                      scope={"members": scope["members"], "joiners": scope["joiners"]},
                      busy=_busy)


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
    },
    variant_table=VARIANT_TABLE,
    rule_table=RULE_TABLE,
    build=build_membership,
    action_kinds=("deliver", "timer", "suspect", "heartbeat", "crash", "join", "false-suspect",
                  "drop", "duplicate", "timer-race"),
)

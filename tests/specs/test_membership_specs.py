"""The membership monitors of specs/membership.py over hand-written event streams, and the
invariant catalogue."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from partsafe.specs.membership import (
    MONITORS,
    ClaimAcceptance,
    ClaimDiscovery,
    ClaimResult,
    CrashRemoval,
    MasterOnly,
    VersionOrder,
    ViewAgreement,
    ViewIntegrity,
    ViewOrder,
)
from partsafe.specs.monitor import Monitor, run
from partsafe.specs.registry import all_specs, get
from partsafe.traces.events import (
    EVENT_TYPES,
    UNKNOWN_MEMBER,
    Event,
    ExplicitSuspicion,
    MastershipAcceptanceReceived,
    MastershipClaimAccepted,
    MastershipClaimed,
    MastershipClaimSent,
    MastershipClaimStarted,
    MemberCrashed,
    MemberJoined,
    MemberListInstalled,
    MemberRemoved,
    MemberSuspected,
    SuspicionRemoved,
)

AB, ABC, ABCD, BCD = ("A", "B"), ("A", "B", "C"), ("A", "B", "C", "D"), ("B", "C", "D")


def inst(member: str, version: int | None, members: tuple[str, ...],
         master: str | None = None) -> MemberListInstalled:
    return MemberListInstalled(member=member, version=version, members=members,
                               master=master if master is not None else members[0])


def messages(monitor: Monitor, events: list[Event], **kw: bool) -> list[str]:
    return [m for _, m in run(monitor, events, **kw)]


def test_monitors_are_the_nine_membership_specs() -> None:
    assert [m.spec for m in MONITORS] == ["MEM-VIEW-ORDER", "MEM-VIEW-AGREEMENT",
                                          "MEM-VIEW-INTEGRITY", "MEM-VERSION", "MEM-MASTER-ONLY",
                                          "MEM-CLAIM-ACCEPT", "MEM-CRASH-REMOVAL",
                                          "MEM-CLAIM-RESULT", "MEM-CLAIM-DISCOVER"]
    for m in MONITORS:
        hash(m().initial())  # the explorer carries monitor states inside its hashed states


# --- MEM-VIEW-ORDER ---------------------------------------------------------------------------


def test_view_order_catches_two_members_installing_in_opposite_orders() -> None:
    events = [inst("A", 2, AB), inst("A", 3, ABC), inst("B", 3, ABC), inst("B", 2, AB)]
    found = run(ViewOrder(), events)
    assert len(found) == 1
    event, message = found[0]
    assert event == events[3]
    assert message == ("B installs {v=2, [A, B]} after {v=3, [A, B, C]}, but master A installed "
                       "{v=2, [A, B]} before {v=3, [A, B, C]}")


def test_view_order_catches_a_member_going_back_to_an_old_view() -> None:
    # the legacy format: a periodic publish re-adds a removed member (hz38-unordered-members)
    events = [inst("A", None, ABC), inst("B", None, ABC), inst("A", None, AB),
              inst("B", None, AB), inst("B", None, ABC)]
    (message,) = messages(ViewOrder(), events)
    assert message == ("B installs [A, B, C] after [A, B], but master A installed [A, B, C] "
                       "before [A, B]")


def test_view_order_holds_when_a_list_comes_back() -> None:
    # legacy format: D joins and leaves again, so [A, B, C] is installed twice by its master
    events = [inst("A", None, ABC), inst("B", None, ABC), inst("A", None, ABCD),
              inst("A", None, ABC), inst("B", None, ABCD), inst("B", None, ABC)]
    assert run(ViewOrder(), events) == []


def test_view_order_treats_an_unseen_master_list_as_unknown() -> None:
    # B's log shows a list its master's log does not: unknown, not a violation
    events = [inst("A", 2, AB), inst("B", 3, ABC), inst("B", 2, AB)]
    assert run(ViewOrder(), events) == []


def test_view_order_holds() -> None:
    events = [
        inst("A", 2, AB), inst("B", 2, AB),
        inst("A", 3, ABC), inst("A", 3, ABC),  # the same view again is no new installation
        inst("A", 4, ABCD),
        inst("B", 4, ABCD),  # B skipped version 3: allowed
        inst("C", 3, ABC), inst("C", 4, ABCD),
        inst("D", 4, ABCD),
    ]
    assert run(ViewOrder(), events) == []
    assert run(ViewOrder(), events, quiescent_at_end=True) == []


def test_view_order_ignores_other_events() -> None:
    assert ViewOrder.observes == frozenset({"member_list_installed", "member_started"})
    events = [inst("A", 2, AB), MemberCrashed(member="A"), inst("B", 3, ABC), inst("B", 2, AB)]
    assert messages(ViewOrder(), events) == []


# --- MEM-VIEW-AGREEMENT -----------------------------------------------------------------------


def test_view_agreement_catches_a_live_member_with_another_view() -> None:
    events = [inst("A", 3, ABC), inst("B", 2, AB), inst("C", 3, ABC)]
    assert run(ViewAgreement(), events) == []  # judged only at quiescence
    found = run(ViewAgreement(), events, quiescent_at_end=True)
    assert len(found) == 1
    event, message = found[0]
    assert event is None
    assert message == ("A holds {v=3, [A, B, C]} but B, a live member of it, holds "
                       "{v=2, [A, B]}, and nothing but faults can happen")


def test_view_agreement_catches_a_stale_new_master() -> None:
    # hz38-stale-master-list: B publishes its old list after A crashed; C keeps the newer one
    events = [inst("A", 4, ABCD), inst("B", 3, ABC), inst("C", 4, ABCD), inst("D", 4, ABCD),
              MemberCrashed(member="A"), inst("B", 4, BCD), inst("D", 4, BCD)]
    (message,) = messages(ViewAgreement(), events, quiescent_at_end=True)
    assert message.startswith("B holds {v=4, [B, C, D]} but C, a live member of it, holds "
                              "{v=4, [A, B, C, D]}")


def test_view_agreement_holds() -> None:
    events = [
        inst("A", 2, AB), inst("B", 2, AB),
        inst("A", 3, ABC), inst("B", 3, ABC), inst("C", 3, ABC),
        inst("D", 1, ("D",)),  # D is in no one else's view and holds its own
        MemberCrashed(member="C"),
        inst("A", 4, AB),  # A removed C
        inst("B", 4, AB),
    ]
    assert messages(ViewAgreement(), events, quiescent_at_end=True) == []


def test_view_agreement_ignores_crashed_and_unseen_members() -> None:
    # B crashed holding an old view; E was never seen: neither is a disagreement
    events = [inst("A", 3, ("A", "B", "E")), inst("B", 2, AB), MemberCrashed(member="B")]
    assert messages(ViewAgreement(), events, quiescent_at_end=True) == []
    # a crashed member's own view is not judged either
    events = [inst("A", 3, ABC), inst("B", 3, ABC), inst("C", 2, AB), MemberCrashed(member="A"),
              MemberCrashed(member="C")]
    assert messages(ViewAgreement(), events, quiescent_at_end=True) == []


# --- MEM-VIEW-INTEGRITY -----------------------------------------------------------------------


def test_view_integrity_catches_a_view_without_its_member() -> None:
    events = [inst("A", 3, ABC), inst("C", 4, AB)]
    found = run(ViewIntegrity(), events)
    assert found == [(events[1], "C installs {v=4, [A, B]}, which omits itself")]
    (legacy,) = messages(ViewIntegrity(), [inst("D", None, ABC)])
    assert legacy == "D installs [A, B, C], which omits itself"


def test_view_integrity_holds() -> None:
    events = [inst("A", 3, ABC), inst("B", 3, ABC), inst("C", None, ABC), inst("B", 4, AB)]
    assert run(ViewIntegrity(), events, quiescent_at_end=True) == []


# --- MEM-VERSION ------------------------------------------------------------------------------


def test_version_catches_a_version_applied_twice() -> None:
    events = [inst("B", 3, ABC), inst("B", 3, ABC)]
    assert messages(VersionOrder(), events) == ["B applies version 3 after version 3"]


def test_version_catches_a_version_going_back() -> None:
    events = [inst("B", 2, AB), inst("B", 4, ABCD), inst("B", 3, ABC)]
    found = run(VersionOrder(), events)
    assert found == [(events[2], "B applies version 3 after version 4")]


def test_version_catches_one_version_naming_two_lists() -> None:
    events = [inst("A", 4, ABCD), inst("C", 4, ("A", "B", "C", "E"), master="A")]
    (message,) = messages(VersionOrder(), events)
    assert message == "version 4 of master A names two lists: [A, B, C, D] and [A, B, C, E]"


def test_version_holds() -> None:
    events = [
        inst("A", 2, AB), inst("B", 2, AB),
        inst("A", 3, ABC), inst("B", 5, (*ABC, "E", "F")),  # skips are fine
        inst("A", 5, (*ABC, "E", "F")),
        inst("C", None, ABC), inst("C", None, ABC),  # legacy lists are not judged
        inst("B", 5, BCD, master="B"),  # another master's version 5 may name another list
    ]
    assert messages(VersionOrder(), events[:7]) == []
    # B applying 5 again is a repeat of its own version, whoever the master
    assert messages(VersionOrder(), events) == ["B applies version 5 after version 5"]


def test_version_forgets_a_crashed_member() -> None:
    events = [inst("B", 4, ABCD), MemberCrashed(member="B"), inst("B", 2, AB)]
    assert messages(VersionOrder(), events) == []


# --- MEM-MASTER-ONLY --------------------------------------------------------------------------


def test_master_only_catches_a_slave_removing_a_member() -> None:
    events = [inst("B", 3, ABC), MemberSuspected(member="B", suspect="C"),
              MemberRemoved(member="B", removed="C", version=4)]
    found = run(MasterOnly(), events)
    assert found == [(events[2], "B removes C but is not the master of its list [A, B, C]")]


def test_master_only_catches_a_slave_adding_a_member() -> None:
    events = [inst("C", 3, ABC), MemberJoined(member="C", joined="D", version=4)]
    (message,) = messages(MasterOnly(), events)
    assert message == "C adds D but is not the master of its list [A, B, C]"


def test_master_only_catches_an_early_claim() -> None:
    events = [inst("C", 4, ABCD), MemberSuspected(member="C", suspect="A"),
              MastershipClaimStarted(member="C", suspected=("A",))]
    (message,) = messages(MasterOnly(), events)
    assert message == "C claims mastership while not suspecting older B"


def test_master_only_lifted_suspicion_counts_as_not_suspected() -> None:
    events = [inst("C", 4, ABCD), MemberSuspected(member="C", suspect="A"),
              MemberSuspected(member="C", suspect="B"), SuspicionRemoved(member="C", suspect="A"),
              MastershipClaimStarted(member="C", suspected=("A", "B"))]
    (message,) = messages(MasterOnly(), events)
    assert message == "C claims mastership while not suspecting older A"


def test_master_only_holds() -> None:
    events = [
        inst("A", 3, ABC), inst("B", 3, ABC), inst("C", 3, ABC),
        MemberJoined(member="A", joined="D", version=4), inst("A", 4, ABCD),
        MemberRemoved(member="A", removed="D", version=5), inst("A", 5, ABC),
        MemberSuspected(member="C", suspect="A"),
        ExplicitSuspicion(member="C", sender="B"),  # B asked C to suspect it
        MastershipClaimStarted(member="C", suspected=("A", "B")),
        MemberCrashed(member="B"),
        MemberRemoved(member="B", removed="C", version=9),  # after its crash: not judged
    ]
    assert messages(MasterOnly(), events) == []
    # the oldest member claims with nobody to suspect; a new master removes the old one
    events = [inst("A", 2, AB), MastershipClaimStarted(member="A", suspected=()),
              inst("B", 2, AB), MemberSuspected(member="B", suspect="A"),
              MastershipClaimStarted(member="B", suspected=("A",)), inst("B", 3, ("B",)),
              MemberRemoved(member="B", removed="A", version=3)]
    assert messages(MasterOnly(), events) == []


# --- MEM-CLAIM-ACCEPT -------------------------------------------------------------------------


def accepted(member: str, candidate: str, version: int = 4) -> MastershipClaimAccepted:
    return MastershipClaimAccepted(member=member, candidate=candidate, version=version)


def test_claim_accept_catches_an_acceptance_past_an_older_member_not_suspected() -> None:
    events = [inst("D", 4, ABCD), MemberSuspected(member="D", suspect="A"), accepted("D", "C")]
    found = run(ClaimAcceptance(), events)
    assert found == [(events[2], "D accepts the mastership claim of C while not suspecting "
                                 "older B of its list [A, B, C, D]")]


def test_claim_accept_lifted_suspicion_counts_as_not_suspected() -> None:
    events = [inst("D", 4, ABCD), MemberSuspected(member="D", suspect="A"),
              ExplicitSuspicion(member="D", sender="B"), SuspicionRemoved(member="D", suspect="A"),
              accepted("D", "C")]
    (message,) = messages(ClaimAcceptance(), events)
    assert message.startswith("D accepts the mastership claim of C while not suspecting older A ")


def test_claim_accept_holds() -> None:
    events = [
        inst("C", 4, ABCD), inst("D", 4, ABCD),
        MemberSuspected(member="D", suspect="A"), MemberSuspected(member="D", suspect="B"),
        accepted("D", "C"),
        # the candidate itself suspected, and lifted on acceptance (the released rule)
        MemberSuspected(member="C", suspect="A"), MemberSuspected(member="C", suspect="B"),
        SuspicionRemoved(member="C", suspect="B"), accepted("C", "B"),
        # the oldest member's claim needs nobody suspected
        accepted("B", "A"),
        # a candidate the list does not name is not judged
        accepted("C", "E"),
        # a crashed member is judged no more
        MemberCrashed(member="D"), accepted("D", "C"),
    ]
    assert messages(ClaimAcceptance(), events) == []
    # a new list that drops a suspected member drops the suspicion
    events = [inst("D", 4, ABCD), MemberSuspected(member="D", suspect="A"),
              MemberSuspected(member="D", suspect="B"), inst("D", 5, ("A", "C", "D")),
              inst("D", 6, ABCD), accepted("D", "C")]
    (message,) = messages(ClaimAcceptance(), events)
    assert "not suspecting older B " in message


# --- MEM-CRASH-REMOVAL ------------------------------------------------------------------------


def test_crash_removal_catches_a_master_that_keeps_a_crashed_member() -> None:
    events = [inst("A", 3, ABC), inst("B", 3, ABC), MemberCrashed(member="C")]
    assert messages(CrashRemoval(), events) == []  # judged at quiescence only
    (message,) = messages(CrashRemoval(), events, quiescent_at_end=True)
    assert message == ("master A still lists crashed C in [A, B, C], and nothing but faults "
                       "can happen")
    # a crashed joiner that never installed a list counts too
    events = [inst("A", 4, ABCD), MemberCrashed(member="D")]
    assert messages(CrashRemoval(), events, quiescent_at_end=True) != []


def test_crash_removal_holds() -> None:
    # the master removed the crashed member
    events = [inst("A", 3, ABC), MemberCrashed(member="C"), inst("A", 4, AB)]
    assert messages(CrashRemoval(), events, quiescent_at_end=True) == []
    # a slave's list may still name it: the slave is not its list's master
    events = [inst("A", 3, ABC), inst("B", 3, ABC), MemberCrashed(member="C"), inst("A", 4, AB)]
    assert messages(CrashRemoval(), events, quiescent_at_end=True) == []
    # a crashed master is nobody's master; a member never seen is unknown
    events = [inst("A", 3, ABC), MemberCrashed(member="A"), inst("B", 3, ABC),
              inst("C", 5, ("C", "E"))]
    assert messages(CrashRemoval(), events, quiescent_at_end=True) == []
    # a new master that claimed without the crashed member
    events = [inst("A", 3, ABC), MemberCrashed(member="A"), inst("B", 4, ("B", "C"))]
    assert messages(CrashRemoval(), events, quiescent_at_end=True) == []


# --- MEM-CLAIM-RESULT and MEM-CLAIM-DISCOVER: 002's six-member example, B's own events ------

ABCDE, ALL6 = ("A", "B", "C", "D", "E"), ("A", "B", "C", "D", "E", "F")


def sent(target: str) -> MastershipClaimSent:
    return MastershipClaimSent(member="B", target=target)


def received(sender: str, version: int | None,
             members: tuple[str, ...]) -> MastershipAcceptanceReceived:
    return MastershipAcceptanceReceived(member="B", sender=sender, version=version,
                                        members=members)


def claimed(version: int | None, members: tuple[str, ...]) -> MastershipClaimed:
    return MastershipClaimed(member="B", version=version, members=members)


def example(*, published: tuple[str, ...] = ("B", "D", "E"), ask_f: bool = True) -> list[Event]:
    """B holds v=4 [A, B, C, D] and suspects C; A crashes; D answers v=5 (B discovers E), E
    answers v=6 (B discovers F); F never answers and B suspects it; B publishes v=7."""
    return [
        inst("B", 4, ABCD), MemberSuspected(member="B", suspect="C"),
        MemberSuspected(member="B", suspect="A"),
        MastershipClaimStarted(member="B", suspected=("A",)), sent("D"),
        received("D", 5, ABCDE), sent("E"),
        received("E", 6, ALL6), *([sent("F")] if ask_f else []),
        MemberSuspected(member="B", suspect="F"),
        claimed(7, published), inst("B", 7, published),
    ]


def test_the_example_holds_both() -> None:
    for monitor in (ClaimResult(), ClaimDiscovery()):
        assert messages(monitor, example()) == [], monitor.spec


def test_claim_result_catches_a_list_without_a_member_whose_acceptance_was_counted() -> None:
    events = example(published=("B", "D"))
    found = run(ClaimResult(), events)
    assert found == [(events[-2], "B publishes {v=7, [B, D]} at the end of its mastership claim "
                                  "without E, whose acceptance it counted")]
    # the claimant alone: no acceptance kept
    (message,) = messages(ClaimResult(), example(published=("B",)))
    assert message.endswith("without D, E, whose acceptance it counted")


def test_claim_result_catches_a_list_not_headed_by_the_claimant_or_out_of_order() -> None:
    (message,) = messages(ClaimResult(), example(published=("D", "B", "E")))
    assert message == ("B publishes {v=7, [D, B, E]} at the end of its mastership claim, not "
                       "headed by itself")
    events = [inst("B", 4, ABCD), MemberSuspected(member="B", suspect="A"),
              MastershipClaimStarted(member="B", suspected=("A",)), received("D", 4, ABCD),
              received("C", 4, ABCD), claimed(5, ("B", "D", "C"))]
    (message,) = messages(ClaimResult(), events)
    assert message == ("B publishes {v=5, [B, D, C]} at the end of its mastership claim out of "
                       "the order of its list [A, B, C, D]")


def test_claim_result_holds_where_the_acceptance_is_not_certain() -> None:
    start = [inst("B", 4, ABCD), MemberSuspected(member="B", suspect="A"),
             MastershipClaimStarted(member="B", suspected=("A",))]
    cases = [
        # an acceptance only its acceptor shows: the answer may never have come
        [*start, accepted("C", "B"), claimed(5, ("B", "D"))],
        # an acceptance, then a suspicion of the acceptor: left out (002: "already suspected")
        [*start, received("C", 4, ABCD), MemberSuspected(member="B", suspect="C"),
         claimed(5, ("B",))],
        [*start, received("C", 4, ABCD), ExplicitSuspicion(member="B", sender="C"),
         claimed(5, ("B",))],
        # an answer counted from a member already suspected (a log's interleaving)
        [*start, MemberSuspected(member="B", suspect="C"), received("C", 4, ABCD),
         claimed(5, ("B",))],
        # a claim whose start was not seen
        [inst("B", 4, ABCD), received("C", 4, ABCD), claimed(5, ("B",))],
        # the claimant crashed: a new incarnation's claim starts afresh
        [*start, received("C", 4, ABCD), MemberCrashed(member="B"), *start,
         claimed(5, ("B",))],
        # a list ends the claim (a log that misses the claimed line)
        [*start, received("C", 4, ABCD), inst("B", 5, ("B", "C")), claimed(6, ("B",))],
        # a member that did not accept may be named (an acceptance a log does not show)
        [*start, received("C", 4, ABCD), claimed(5, ("B", "C", "D"))],
    ]
    for events in cases:
        assert messages(ClaimResult(), events) == [], events


def test_claim_discover_catches_a_member_of_a_later_list_never_asked() -> None:
    events = [*example(ask_f=False)[:-3], claimed(7, ("B", "D", "E"))]
    found = run(ClaimDiscovery(), events)
    assert found == [(events[-1], "B finishes its mastership claim with {v=7, [B, D, E]} without "
                                  "asking F, which the later list [A, B, C, D, E, F] E accepted "
                                  "with names and B does not suspect")]
    # a younger member of its own list, not suspected and never asked
    events = [inst("B", 4, ABCD), MemberSuspected(member="B", suspect="A"),
              MastershipClaimStarted(member="B", suspected=("A",)), sent("D"),
              received("D", 4, ABCD), claimed(5, ("B", "D"))]
    (message,) = messages(ClaimDiscovery(), events)
    assert message == ("B finishes its mastership claim with {v=5, [B, D]} without asking C, "
                       "which its own list [A, B, C, D] names and B does not suspect")


def test_claim_discover_holds() -> None:
    start = [inst("B", 4, ABCD), MemberSuspected(member="B", suspect="A"),
             MastershipClaimStarted(member="B", suspected=("A",)), sent("C"), sent("D")]
    cases = [
        # F discovered and not asked, but suspected by the time the claim ends: settled
        example(ask_f=False),
        # E only in a list no later than one B knew: removed, not discovered (Hazelcast's
        # fetchLatestMembersView asks it not)
        [*start, received("D", 5, ABCDE), sent("E"), received("C", 4, ("A", "B", "C", "D", "F")),
         claimed(6, ("B", "C", "D"))],
        [*start, received("C", 4, ("A", "B", "C", "D", "E")), claimed(5, ("B", "C"))],
        # lists without versions: which one is later is unknown
        [inst("B", None, ABCD), MemberSuspected(member="B", suspect="A"),
         MastershipClaimStarted(member="B", suspected=("A",)), sent("C"), sent("D"),
         received("D", None, ABCDE), claimed(None, ("B", "D"))],
        # a claim whose start was not seen; a claimant that crashed
        [inst("B", 4, ABCD), received("D", 5, ABCDE), claimed(6, ("B", "D"))],
        [*start, received("D", 5, ABCDE), MemberCrashed(member="B")],
        # members it suspected before the claim are not asked
        [inst("B", 4, ABCD), MemberSuspected(member="B", suspect="C"),
         MemberSuspected(member="B", suspect="A"),
         MastershipClaimStarted(member="B", suspected=("A",)), sent("D"),
         received("D", 5, ABCDE), sent("E"), claimed(6, ("B", "D"))],
    ]
    for events in cases:
        assert messages(ClaimDiscovery(), events) == [], events


# --- events whose member is unknown -----------------------------------------------------------


def unknown(version: int | None, members: tuple[str, ...]) -> MemberListInstalled:
    """A list a log shows with no member to attribute it to (`UNKNOWN_MEMBER`)."""
    return inst(UNKNOWN_MEMBER, version, members)


def test_lists_no_member_installed_are_unknown_to_the_membership_monitors() -> None:
    """Lists that omit '' , go back (9, then 7) and name two lists at version 7, then a removal
    by '' while its list's master is A: unknown, so nothing."""
    events: list[Event] = [unknown(9, AB), unknown(7, ("A", "C")), unknown(7, ("A",)),
                           MemberRemoved(member=UNKNOWN_MEMBER, removed="B"),
                           MastershipClaimStarted(member=UNKNOWN_MEMBER)]
    for monitor in MONITORS:
        assert run(monitor(), events, quiescent_at_end=True) == [], monitor.__name__


def test_lists_no_member_installed_change_nothing_for_the_known_members() -> None:
    """Between B's own lists, an unknown member's lists neither raise nor hide B's violation."""
    events: list[Event] = [inst("B", 4, ABC), unknown(5, ABCD), unknown(4, AB),
                           inst("B", 3, AB)]
    assert messages(VersionOrder(), events) == ["B applies version 3 after version 4"]
    events = [inst("A", 2, AB), inst("A", 3, ABC), inst("B", 3, ABC), unknown(2, AB),
              inst("B", 2, AB)]
    assert messages(ViewOrder(), events) == [
        "B installs {v=2, [A, B]} after {v=3, [A, B, C]}, but master A installed {v=2, [A, B]} "
        "before {v=3, [A, B, C]}"]


def monitors_of_every_spec() -> list[Monitor]:
    """Every monitor of the catalogue and, for a conjunction, each of its parts."""
    out: list[Monitor] = []
    for spec in all_specs():
        if spec.monitor is not None:
            whole = spec.monitor()
            out += [whole, *(p for p in whole.parts() if p is not whole)]
    return out


@settings(max_examples=200, deadline=None)
@given(st.data())
def test_no_monitor_judges_an_event_whose_member_is_unknown(data: st.DataObject) -> None:
    """For every monitor of every spec and every event type it observes: an event whose member
    is unknown leaves the state as it is and raises nothing, and no engine routes it."""
    from partsafe.checker.validation.shards import Part, routes

    monitor = data.draw(st.sampled_from(monitors_of_every_spec()), label="monitor")
    kind = data.draw(st.sampled_from(sorted(monitor.observes)), label="type")
    event = data.draw(st.builds(EVENT_TYPES[kind], member=st.just(UNKNOWN_MEMBER)), label="event")
    state = monitor.initial()
    assert monitor.step(state, event) == (state, None)
    assert run(monitor, [event], quiescent_at_end=True) == []
    assert routes(Part(0, monitor.spec, monitor), event) is None


# --- the catalogue ----------------------------------------------------------------------------

MEMBERSHIP_IDS = ["MEM-VIEW-ORDER", "MEM-VIEW-AGREEMENT", "MEM-VIEW-INTEGRITY", "MEM-VERSION",
                  "MEM-MASTER-ONLY", "MEM-CLAIM-ACCEPT", "MEM-CRASH-REMOVAL", "MEM-CLAIM-RESULT",
                  "MEM-CLAIM-DISCOVER"]


def test_registry_holds_the_membership_specs() -> None:
    specs = {s.id: s for s in all_specs()}
    assert set(MEMBERSHIP_IDS) <= set(specs)
    assert len(specs) == len(list(all_specs()))  # every id once
    for spec_id in MEMBERSHIP_IDS:
        s = specs[spec_id]
        assert s.seed == "002"
        assert s.design == 'Hazelcast 3.9 "Cluster Service Consistency Improvements"'
        assert s.section
        assert s.title and s.statement
        assert s.kind in ("state invariant", "event monitor", "quiescence check")
        assert s.monitor is not None and s.monitor().spec == spec_id
        d = s.as_dict()
        assert list(d) == ["id", "title", "statement", "design", "design_title", "section",
                           "kind"]
        assert d["design"] == "002"
    assert specs["MEM-VIEW-AGREEMENT"].kind == "quiescence check"
    assert specs["MEM-CRASH-REMOVAL"].kind == "quiescence check"
    assert specs["MEM-CLAIM-ACCEPT"].kind == "event monitor"
    assert specs["MEM-CLAIM-RESULT"].kind == "event monitor"
    assert specs["MEM-CLAIM-DISCOVER"].kind == "event monitor"
    assert specs["MEM-VIEW-ORDER"].kind == "event monitor"
    assert "M1" in specs["MEM-VIEW-ORDER"].section


def test_registry_lookup() -> None:
    assert get("mem-version").id == "MEM-VERSION"
    assert get("Mem-View-Order") is get("MEM-VIEW-ORDER")
    with pytest.raises(KeyError):
        get("MEM-NOPE")
    with pytest.raises(KeyError):
        get("")

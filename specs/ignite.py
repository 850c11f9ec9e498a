"""Ignite 3 rebalance specs (design 001, IGNITE-16668; the invariants S1 to S8 and L1 to L3).

Each monitor watches the events of the metastore (`metastore_invoke`, `assignments_changed`) and of
raft (`raft_vote`, `raft_leader`, `raft_peers_changed`, `raft_started`, `node_restarted`). Besides
the design's invariants, IGN-ONE-VOTE and IGN-QUORUM-LEADER are raft's own election rules, on
which IGN-ONE-LEADER rests. Monitor states are small immutable values (frozensets of pairs);
revisions kept in them are compared only by order, as the protocol compares them. IGN-FINITE is
a property of the state graph, not of one run: the explorer checks it as a lasso
(checker/protocols/ignite.py).
"""

from __future__ import annotations

from collections.abc import Hashable
from typing import NamedTuple, cast

from partsafe.refimpl.metastore import (
    APPEND,
    DATA_NODES,
    PENDING,
    PLANNED,
    REDUCE,
    STABLE,
    TRIGGER,
)
from partsafe.specs.monitor import NO_PAIRS, Monitor, Pairs, assign, lookup
from partsafe.specs.registry import Spec, register
from partsafe.specs.rules import calculate_assignments
from partsafe.traces.events import (
    AssignmentsChanged,
    Event,
    MetastoreInvoke,
    NodeRestarted,
    RaftLeader,
    RaftPeersChanged,
    RaftStarted,
    RaftVote,
    ReductionRequested,
)


def _mirror(keys: Pairs, e: AssignmentsChanged) -> Pairs:
    """The assignments keys after `e` (absent keys are not in the pairs)."""
    if e.removed:
        return frozenset(kv for kv in keys if kv[0] != e.key)
    return assign(keys, e.key, frozenset(e.nodes))


class PerGroup(Monitor):
    """A monitor whose state is one raft group's, or one partition's (the model has one; a real
    log has many, named by the events' `group`): keyed by the group, so that the validator runs
    one shard of it per group. The explorer runs it whole, on its one group. (The quiescence
    checks stay one piece: an event file's `Quiescent` record reaches their one shard.)"""

    key_size = 1

    def key(self, event: Event) -> tuple[Hashable, ...] | None:
        return (event.group,)  # type: ignore[attr-defined]


# --- IGN-ONE-LEADER -------------------------------------------------------------------------------


class _Leaders(NamedTuple):
    #: term -> its leader
    leaders: Pairs
    #: nodes whose raft node a log shows starting empty (``RaftStarted`` ``empty``) since the
    #: group's latest leader was elected (always empty in the explorer)
    empties: frozenset[str]


class OneLeader(PerGroup):
    """IGN-ONE-LEADER (invariant S1): at most one raft leader per term. A full partition
    restart (every peer of stable restarted in memory and reports EMPTY, design 001) starts the
    group again from term 0 with nothing of the old one left, so it forgets the old leaders.

    A log shows a full restart as JRaft shows it: every node of the new leader's configuration
    started its raft node empty (term 0) after the group's latest leader was elected; then the
    group starts again as well."""

    spec = "IGN-ONE-LEADER"
    observes = frozenset({RaftLeader.TYPE, RaftStarted.TYPE})

    def initial(self) -> Hashable:
        return _Leaders(NO_PAIRS, frozenset())

    def observe(self, state: Hashable, event: Event) -> tuple[Hashable, str | None]:
        st = cast(_Leaders, state)
        if isinstance(event, RaftStarted):
            if event.reason == "full-restart":
                return _Leaders(NO_PAIRS, st.empties), None
            if event.reason == "empty":
                return st._replace(empties=st.empties | {event.member}), None
            return st, None
        assert isinstance(event, RaftLeader)
        leaders = st.leaders
        if event.peers and st.empties.issuperset(event.peers):  # a log's full restart
            return _Leaders(frozenset({(event.term, event.member)}), frozenset()), None
        other = lookup(leaders, event.term)
        if other is None:
            return _Leaders(assign(leaders, event.term, event.member), frozenset()), None
        if other != event.member:
            return _Leaders(leaders, frozenset()), (
                f"{event.member} became leader in term {event.term}, in which {other} is "
                "leader already")
        return _Leaders(leaders, frozenset()), None


# --- IGN-ONE-VOTE ---------------------------------------------------------------------------------


class OneVote(PerGroup):
    """IGN-ONE-VOTE: a raft node grants at most one vote per term, and never one in a term older
    than a term it voted in: Raft's ``votedFor`` is the vote of the current term, and the
    current term only grows (Raft, Figure 2), so one vote per term needs both.

    A node's own candidacy is its vote for itself. What a node voted is forgotten when it
    restarts with in-memory storage, whose raft meta is gone: that is the design's problem
    (design 001, "Problem"), which IGN-RESTART and IGN-ONE-LEADER judge. A node with
    persistent storage keeps its votes across a restart, as JRaft's meta storage keeps term and
    ``votedFor``.

    The state is each node's latest vote, (term, candidate): with the second clause, that is
    all one vote per term needs remembered, and it is what the node itself keeps (its term and
    ``votedFor``), so the monitor tells apart no states the protocol does not."""

    spec = "IGN-ONE-VOTE"
    observes = frozenset({RaftVote.TYPE, NodeRestarted.TYPE})

    def initial(self) -> Hashable:
        return NO_PAIRS

    def observe(self, state: Hashable, event: Event) -> tuple[Hashable, str | None]:
        votes: Pairs = state  # type: ignore[assignment]
        if isinstance(event, NodeRestarted):
            if not event.in_memory:
                return votes, None
            return frozenset(kv for kv in votes if kv[0] != event.member), None
        assert isinstance(event, RaftVote)
        last = lookup(votes, event.member)
        now = assign(votes, event.member, (event.term, event.candidate))
        if last is None:
            return now, None
        term, candidate = last
        if event.term == term and event.candidate != candidate:
            return now, (f"{event.member} granted its vote in term {event.term} to "
                         f"{event.candidate}, having granted it to {candidate} in that term")
        if event.term < term:
            return now, (f"{event.member} granted its vote in term {event.term} to "
                         f"{event.candidate} after it voted in term {term}: its term went back, "
                         f"and a node that goes back may vote twice in a term")
        return now, None


# --- IGN-QUORUM-LEADER ----------------------------------------------------------------------------


class QuorumLeader(PerGroup):
    """IGN-QUORUM-LEADER: a node becomes leader of a term only with votes granted to it in that
    term, and only if they make a majority of its configuration, of both halves of a joint one
    (Raft §5.2 and §6; JRaft's ``electSelf`` initialises its ballot with the configuration and
    the old one, and ``handleRequestVoteResponse`` counts granted answers of the current term).

    The leader reports the votes it counted and the configuration it counted them against
    (``becomeLeader`` logs both); a leader event that names no configuration is judged on its
    votes alone. A vote granted by a node that then restarted in memory still counts: the
    answer of its old incarnation was granted. The votes granted to a node for a term are
    forgotten once it wins that term (it counts no vote after), and every vote once the group
    starts again from term 0 (a full partition restart, design 001)."""

    spec = "IGN-QUORUM-LEADER"
    observes = frozenset({RaftVote.TYPE, RaftLeader.TYPE, RaftStarted.TYPE})

    def initial(self) -> Hashable:
        return frozenset()

    def observe(self, state: Hashable, event: Event) -> tuple[Hashable, str | None]:
        granted: frozenset[tuple[str, int, str]] = state  # type: ignore[assignment]
        if isinstance(event, RaftVote):
            return granted | {(event.member, event.term, event.candidate)}, None
        if isinstance(event, RaftStarted):
            return (frozenset() if event.reason == "full-restart" else granted), None
        assert isinstance(event, RaftLeader)
        term, leader = event.term, event.member
        rest = frozenset(v for v in granted if v[1:] != (term, leader))
        refused = [v for v in event.votes if (v, term, leader) not in granted]
        if refused:
            return rest, (f"{leader} became leader in term {term} counting the vote of "
                          f"{', '.join(refused)}, who granted it no vote in that term")
        votes = frozenset(event.votes)
        for half, peers in (("", event.peers), (" old", event.old)):
            if peers and len(votes & set(peers)) * 2 <= len(peers):
                return rest, (f"{leader} became leader in term {term} with the votes of "
                              f"[{','.join(sorted(votes))}], no majority of its{half} "
                              f"configuration [{','.join(peers)}]")
        return rest, None


# --- IGN-RESTART ----------------------------------------------------------------------------------

#: a restarted in-memory node: removed from the peers yet (1), removed and not yet back (2)
RESTARTED, REMOVED = 1, 2


class Restart(PerGroup):
    """IGN-RESTART (invariant S2): no leader counts a vote that a node restarted with
    in-memory storage granted after its restart, until a configuration without it and then one
    with it were put in place. A node that restarts outside the peers (the latest configuration
    put in place leaves it out: removed for an earlier restart, or never a peer) has the first
    of the two already, and is back once a configuration with it is put in place (finding
    IGN-13, docs/findings.md). A node restarted again before its raft node started (it asked for its
    removal, or waits to be added) had nothing left to forget: that restart changes nothing
    (IGN-14). A full partition restart (every peer of stable reported no data)
    starts the group again from term 0 with no log left anywhere: what any node did before it
    no longer counts (as for IGN-ONE-LEADER). The node may grant votes
    before that, to a candidate whose configuration still lists it: the joint quorum keeps such
    a vote from electing anyone, and this monitor checks that it never does. A vote granted
    before the restart and delivered after it is the old incarnation's, and counts.

    A log shows a full restart as JRaft shows it: every node of the new leader's configuration
    restarted in memory and started its raft node empty (``RaftStarted`` ``empty``, which only
    logs give) since; that leader's election then counts no vote of before."""

    spec = "IGN-RESTART"
    observes = frozenset({NodeRestarted.TYPE, RaftPeersChanged.TYPE, RaftLeader.TYPE,
                          RaftStarted.TYPE, RaftVote.TYPE})

    def initial(self) -> Hashable:
        return _Restarts(None, NO_PAIRS, frozenset(), frozenset())

    def observe(self, state: Hashable, event: Event) -> tuple[Hashable, str | None]:
        # the latest configuration put in place, node -> (phase, votes (term, candidate) it
        # granted since its restart), and the nodes restarted whose raft node has not started
        st = cast(_Restarts, state)
        peers, nodes, idle, fresh = st
        if isinstance(event, NodeRestarted):
            if not event.in_memory or event.member in idle:
                return state, None
            outside = peers is not None and event.member not in peers
            phase = REMOVED if outside else RESTARTED
            return _Restarts(peers, assign(nodes, event.member, (phase, frozenset())),
                             idle | {event.member}, fresh - {event.member}), None
        if isinstance(event, RaftStarted):
            if event.reason == "full-restart":
                return _Restarts(frozenset(event.peers), NO_PAIRS, idle - {event.member},
                                 fresh), None
            if event.reason == "empty" and event.member in idle:
                fresh = fresh | {event.member}
            if event.reason in ("start", "empty") and peers is None:
                return _Restarts(frozenset(event.peers), nodes, idle - {event.member},
                                 fresh), None
            if event.member in idle:
                return _Restarts(peers, nodes, idle - {event.member}, fresh), None
            return state, None
        if isinstance(event, RaftVote):
            entry = lookup(nodes, event.member)
            if entry is None:
                return state, None
            phase, votes = entry
            return st._replace(nodes=assign(nodes, event.member,
                                            (phase, votes | {(event.term, event.candidate)}))
                               ), None
        if isinstance(event, RaftPeersChanged):
            now = frozenset(event.peers)
            out = []
            for node, (phase, votes) in nodes:
                if phase == RESTARTED and node not in now:
                    out.append((node, (REMOVED, votes)))
                elif phase == REMOVED and node in now:
                    continue  # added back
                else:
                    out.append((node, (phase, votes)))
            return _Restarts(now, frozenset(out), idle, fresh & {n for n, _ in out}), None
        assert isinstance(event, RaftLeader)
        if event.peers and fresh.issuperset(event.peers):
            # a log's full restart: every peer restarted in memory and started empty
            return _Restarts(frozenset(event.peers), NO_PAIRS, idle, frozenset()), None
        for voter in event.votes:
            entry = lookup(nodes, voter)
            if entry is None or (event.term, event.member) not in entry[1]:
                continue
            when = ("before it was removed from the peers" if entry[0] == RESTARTED
                    else "before it was added back to the peers")
            return state, (f"{event.member} became leader in term {event.term} counting the "
                           f"vote {voter} granted after its in-memory restart, {when}")
        return state, None


class _Restarts(NamedTuple):
    #: the latest configuration put in place (None before the group started)
    peers: frozenset[str] | None
    nodes: Pairs
    #: nodes restarted in memory whose raft node has not started since
    idle: frozenset[str]
    #: nodes restarted in memory whose raft node a log shows starting empty since (always empty
    #: in the explorer)
    fresh: frozenset[str]


# --- IGN-NO-LOST-REDUCTION ------------------------------------------------------------------------


class _Reductions(NamedTuple):
    keys: Pairs
    #: nodes whose removal was requested and not yet done
    outstanding: frozenset[str]


def _carried(keys: Pairs, node: str) -> bool:
    """Is the removal of `node` still recorded: in switch.reduce, or as a pending or planned
    assignment without it?"""
    reduce = lookup(keys, REDUCE) or frozenset()
    pending, planned = lookup(keys, PENDING), lookup(keys, PLANNED)
    return (node in reduce or (pending is not None and node not in pending)
            or (planned is not None and node not in planned))


class NoLostReduction(PerGroup):
    """IGN-NO-LOST-REDUCTION (invariant S8): once a node's removal is requested, it stays
    recorded (in switch.reduce, or in a pending or planned assignment without the node) until a
    stable assignment without the node is written; no write may drop it.

    A request is known from the metastore, when switch.reduce gains the node (the removal's CAS),
    and from the requester, whose `reduction_requested` follows the write that records it (the
    answer to its invoke). That one may come late: after the reduction was done and the node
    added back, when nothing records a removal any more. It is then no request to watch: it was
    watched from the CAS, or (a reduction through pending or planned) it is already over. So a
    late request leaves no trace in the monitor's state, which would otherwise tell apart states
    of the protocol that are the same."""

    spec = "IGN-NO-LOST-REDUCTION"
    observes = frozenset({AssignmentsChanged.TYPE, ReductionRequested.TYPE})

    def initial(self) -> Hashable:
        return _Reductions(NO_PAIRS, frozenset())

    def observe(self, state: Hashable, event: Event) -> tuple[Hashable, str | None]:
        st: _Reductions = state  # type: ignore[assignment]
        if isinstance(event, ReductionRequested):
            stable = lookup(st.keys, STABLE)
            if stable is not None and event.node not in stable:
                return st, None  # already done
            if not _carried(st.keys, event.node):
                return st, None  # done and undone before the answer came
            return st._replace(outstanding=st.outstanding | {event.node}), None
        assert isinstance(event, AssignmentsChanged)
        if event.key not in (STABLE, PENDING, PLANNED, REDUCE):
            return st, None
        keys = _mirror(st.keys, event)
        outstanding = st.outstanding
        if event.key == REDUCE and not event.removed:
            # the removal's CAS: switch.reduce gains the node
            outstanding = outstanding | (frozenset(event.nodes)
                                         - (lookup(st.keys, REDUCE) or frozenset()))
        if event.key == STABLE and not event.removed:
            outstanding = frozenset(n for n in outstanding if n in event.nodes)
            return _Reductions(keys, outstanding), None
        lost = sorted(n for n in outstanding if _carried(st.keys, n) and not _carried(keys, n))
        if lost:
            return (_Reductions(keys, outstanding - set(lost)),
                    f"the requested removal of {', '.join(lost)} is lost: {event.key} was set "
                    f"to [{','.join(event.nodes)}] at revision {event.revision} while no key "
                    f"records it any more and stable still holds it")
        return _Reductions(keys, outstanding), None


# --- IGN-STALE-TRIGGER ----------------------------------------------------------------------------


class StaleTrigger(PerGroup):
    """IGN-STALE-TRIGGER (invariant S5): every write of the change trigger is strictly
    greater than its previous value: a stale trigger event never writes."""

    spec = "IGN-STALE-TRIGGER"
    observes = frozenset({AssignmentsChanged.TYPE})

    def initial(self) -> Hashable:
        return None

    def observe(self, state: Hashable, event: Event) -> tuple[Hashable, str | None]:
        assert isinstance(event, AssignmentsChanged)
        if event.key != TRIGGER or event.value is None:
            return state, None
        old = state
        if old is not None and event.value <= old:  # type: ignore[operator]
            return event.value, (f"the change trigger went from revision {old} to "
                                 f"{event.value}: a stale trigger event wrote assignments")
        return event.value, None


# --- IGN-CAS --------------------------------------------------------------------------------------


class Cas(PerGroup):
    """IGN-CAS: an invoke whose revision guards do not hold (a key changed since it was read)
    changes nothing."""

    spec = "IGN-CAS"
    observes = frozenset({AssignmentsChanged.TYPE, MetastoreInvoke.TYPE})

    def initial(self) -> Hashable:
        return NO_PAIRS

    def observe(self, state: Hashable, event: Event) -> tuple[Hashable, str | None]:
        revisions: Pairs = state  # type: ignore[assignment]
        if isinstance(event, AssignmentsChanged):
            if event.removed:
                return frozenset(kv for kv in revisions if kv[0] != event.key), None
            return assign(revisions, event.key, event.revision), None
        assert isinstance(event, MetastoreInvoke)
        if not event.ok:
            return revisions, None
        stale = [f"{key} (expected revision {rev}, found {lookup(revisions, key, 0)})"
                 for key, rev in event.expected if lookup(revisions, key, 0) != rev]
        if stale:
            return revisions, (f"an invoke for {event.member} changed {', '.join(event.keys)} "
                               f"although {', '.join(stale)} changed since it was read")
        return revisions, None


# --- IGN-CONVERGE ---------------------------------------------------------------------------------


class _Converge(NamedTuple):
    keys: Pairs
    #: the latest term seen, and the leader of that term (None: no live leader known)
    term: int
    leader: str | None
    #: the latest configuration put in place, and the nodes restarted in memory that have not
    #: started raft again
    peers: frozenset[str]
    down: frozenset[str]


class Converge(Monitor):
    """IGN-CONVERGE (invariant L1): once faults stop, while a live leader of the latest
    configuration exists and the configuration keeps a live majority, stable equals the
    calculated assignments of the data nodes, and pending, planned and both switch keys are
    empty.

    The calculated assignments are a rule of the design, not protocol behaviour:
    :func:`partsafe.specs.rules.calculate_assignments` (rendezvous hashing over the data nodes),
    which the rebalance applies too and tests pin. This spec takes the data nodes from the
    metastore's own events and judges the stable key the rebalance left there against the rule,
    so a rebalance that writes any other target, or stops short of it, breaks it."""

    spec = "IGN-CONVERGE"
    observes = frozenset({AssignmentsChanged.TYPE, RaftLeader.TYPE, RaftVote.TYPE,
                          NodeRestarted.TYPE, RaftStarted.TYPE, RaftPeersChanged.TYPE})

    def __init__(self, replicas: int = 1 << 30, partition: int = 0) -> None:
        self.replicas = replicas
        self.partition = partition

    def initial(self) -> Hashable:
        return _Converge(NO_PAIRS, 0, None, frozenset(), frozenset())

    def observe(self, state: Hashable, event: Event) -> tuple[Hashable, str | None]:
        st: _Converge = state  # type: ignore[assignment]
        if isinstance(event, AssignmentsChanged):
            if event.key == TRIGGER:
                return st, None
            keys = _mirror(st.keys, event)
            peers = st.peers or (frozenset(event.nodes) if event.key == STABLE else st.peers)
            return st._replace(keys=keys, peers=peers), None
        if isinstance(event, RaftLeader):
            if event.term >= st.term:
                return st._replace(term=event.term, leader=event.member), None
            return st, None
        if isinstance(event, RaftVote):
            if event.term > st.term:
                return st._replace(term=event.term, leader=None), None
            return st, None
        if isinstance(event, NodeRestarted):
            down = st.down | {event.member} if event.in_memory else st.down
            leader = None if event.member == st.leader else st.leader
            return st._replace(down=down, leader=leader), None
        if isinstance(event, RaftStarted):
            return st._replace(down=st.down - {event.member}), None
        assert isinstance(event, RaftPeersChanged)
        peers = frozenset(event.peers)
        leader = st.leader if st.leader in peers else None
        return st._replace(peers=peers, leader=leader), None

    def at_quiescence(self, state: Hashable) -> str | None:
        st: _Converge = state  # type: ignore[assignment]
        if st.leader is None or st.leader in st.down:
            return None  # no live leader: nothing can move (raft's liveness, not this spec)
        if st.peers and st.leader not in st.peers:
            # a leader outside the latest configuration steps down once that configuration
            # commits (JRaft's leader removed from the peers): the next leader's election is
            # raft's liveness too (finding IGN-17, docs/findings.md)
            return None
        stable = lookup(st.keys, STABLE)
        for peers in (st.peers, stable):  # the latest configuration, and the committed one
            if not peers or len(peers - st.down) * 2 <= len(peers):
                return None  # the group lost its majority: in-memory data is gone

        data = lookup(st.keys, DATA_NODES)
        if data is None:
            return None
        calc = calculate_assignments(data, self.partition, self.replicas)
        problems = []
        if stable != calc:
            problems.append(f"stable is {_show(stable)}, the calculated assignments "
                            f"{_show(calc)}")
        for key in (PENDING, PLANNED, REDUCE, APPEND):
            value = lookup(st.keys, key)
            if value:
                problems.append(f"{key} still holds {_show(value)}")
        if problems:
            return "the rebalance stopped short: " + "; ".join(problems)
        return None


def _show(nodes: frozenset[str] | None) -> str:
    return "-" if nodes is None else "[" + ",".join(sorted(nodes)) + "]"


def _live_majority(peers: frozenset[str], down: frozenset[str]) -> bool:
    return len(peers - down) * 2 > len(peers)


# --- IGN-PROGRESS ---------------------------------------------------------------------------------


class Progress(Converge):
    """IGN-PROGRESS (invariant L1, the stall IGN-CONVERGE excuses): once faults stop, while
    stable keeps a live majority, pending, when there is one, keeps a live majority too.

    IGN-CONVERGE asks for convergence only while the latest configuration keeps a live majority,
    since a group that lost one has lost its in-memory data. A rebalance whose target lacks one
    while stable, the configuration the group last committed and switched to, keeps it has
    lost nothing: it waits for a member that stays stopped (a restarted node waiting in
    switch.reduce for a reduction that cannot start while the rebalance runs, finding IGN-18 in
    docs/findings.md), and the group no longer moves. The spec reads the target from pending,
    not from the raft configuration, so that its verdict does not depend on when the leader
    appends the joint entry: JRaft appends none until the new peers have caught up (``NodeImpl``'s
    catch-up stage, retried without limit on ECATCHUP) and keeps the old configuration as the
    latest, this model appends it at once; both are the same stall here. Nor does it ask for a
    live leader: JRaft's leader steps down when its configuration has no live quorum
    (``NodeImpl.checkDeadNodes``, "Majority of the group dies"), which this model leaves out,
    and no election can then succeed; with or without it, the partition no longer moves.

    Its state is IGN-CONVERGE's (the same events), so it tells no states apart that IGN-CONVERGE
    does not."""

    spec = "IGN-PROGRESS"

    def at_quiescence(self, state: Hashable) -> str | None:
        st: _Converge = state  # type: ignore[assignment]
        stable = lookup(st.keys, STABLE)
        if not stable or not _live_majority(stable, st.down):
            return None  # the group lost its majority: in-memory data is gone
        pending = lookup(st.keys, PENDING)
        if not pending or _live_majority(pending, st.down):
            return None  # no rebalance, or one that can end: IGN-CONVERGE judges the rest
        return (f"the rebalance can no longer progress: pending {_show(pending)} lacks a live "
                f"majority ({_show(pending & st.down)} stopped) while stable {_show(stable)} "
                f"keeps one; switch.reduce {_show(lookup(st.keys, REDUCE))}")


def ignite_monitors(replicas: int) -> list[Monitor]:
    return [OneLeader(), Restart(), NoLostReduction(), StaleTrigger(), Cas(),
            Converge(replicas), Progress(replicas), OneVote(), QuorumLeader()]


MONITORS: tuple[type[Monitor], ...] = (OneLeader, Restart, NoLostReduction, StaleTrigger, Cas,
                                      Converge, Progress, OneVote, QuorumLeader)

register(Spec(
    id="IGN-ONE-LEADER", title="At most one raft leader per term",
    statement="For the partition's raft group and every term, at most one node becomes leader, "
              "restarts of in-memory nodes included; a full partition restart (every peer "
              "restarted empty) starts the group again from term 0.",
    seed="001", section="Problem (Upd 1); invariant S1", kind="event monitor",
    monitor=OneLeader,
    rationale="Raft persists term and votedFor so that a node votes once per term. An in-memory "
              "raft node forgets both on restart: it can vote for A in term t, restart, and vote "
              "for B in term t, and two leaders are elected."))
register(Spec(
    id="IGN-ONE-VOTE", title="A raft node votes at most once per term",
    statement="A raft node grants at most one vote per term (its candidacy is a vote for "
              "itself), and never votes in a term older than one it voted in; an in-memory "
              "restart, which loses the raft meta, starts its votes afresh (IGN-RESTART judges "
              "those).",
    seed="001", section="Problem (Upd 1): the vote raft persists", kind="event monitor",
    monitor=OneVote,
    rationale="Raft §5.2: \"Each server will vote for at most one candidate in a given term, "
              "on a first-come-first-served basis\"; Figure 2: currentTerm \"increases "
              "monotonically\" and votedFor is the \"candidateId that received vote in current "
              "term\". JRaft's handleRequestVoteRequest grants only while votedId is empty and "
              "persists it (setVotedFor). Design 001: \"raft has several persisted segments, "
              "e.g. raft meta\"; forgetting them, \"Node C could vote for Candidate A before "
              "self-restart and vote then for Candidate B after one.\""))
register(Spec(
    id="IGN-QUORUM-LEADER", title="A leader is elected by a quorum of granted votes",
    statement="A node becomes leader of a term only counting votes granted to it in that term, "
              "and only if they make a majority of its configuration, and of the old "
              "configuration too while it is joint.",
    seed="001", section="Problem (Upd 1): two leaders; raft's election", kind="event monitor",
    monitor=QuorumLeader,
    rationale="Raft §5.2: \"A candidate wins an election if it receives votes from a majority "
              "of the servers in the full cluster for the same term.\" §6: \"Agreement (for "
              "elections and entry commitment) requires separate majorities from both the old "
              "and new configurations.\" JRaft's electSelf: voteCtx.init(conf, oldConf); "
              "handleRequestVoteResponse drops an answer whose term is not the current one and "
              "grants the ballot only on response.granted(). One leader per term (IGN-ONE-LEADER) "
              "rests on this and on IGN-ONE-VOTE: two quorums of one configuration meet."))
register(Spec(
    id="IGN-RESTART", title="A restarted in-memory node votes only after leaving and rejoining",
    statement="No leader counts the vote of a node restarted with in-memory storage until a "
              "configuration without it and then one with it were put in place by a leader; a "
              "full partition restart (every peer empty) is exempt.",
    seed="001", section="Solution; invariants S2, S2'", kind="event monitor",
    monitor=Restart,
    rationale="\"It's possible to remove and then return back the restarting node from the peers "
              "of the corresponding raft group. The peer-removal process should be finished "
              "before the restarting of the corresponding raft server node.\""))
register(Spec(
    id="IGN-NO-LOST-REDUCTION", title="A needed reduction is never overwritten",
    statement="Once a node's removal is requested, it stays recorded (in switch.reduce, or as a "
              "pending or planned assignment without the node) until a stable assignment "
              "without the node is written.",
    seed="001", section="the assignments.planned example; invariant S8",
    kind="event monitor", monitor=NoLostReduction,
    rationale="With a single planned key, the addition [A,B,C,D] overwrites the reduction "
              "[A,B,D] and no raft reconfiguration takes place: the restarted node stays a "
              "stale voter. switch.reduce is written only by union-CAS and by the revision-"
              "guarded stable switch."))
register(Spec(
    id="IGN-STALE-TRIGGER", title="A stale trigger never overwrites newer assignments",
    statement="Every write of the change trigger revision is strictly greater than its previous "
              "value: an event older than one already handled writes nothing.",
    seed="001", section="On assignments.switch.reduce change; invariant S5",
    kind="event monitor", monitor=StaleTrigger,
    rationale="Every node handles every watch event; the trigger guard lets the first act and "
              "turns a late or replayed event into OUTDATED_UPDATE_RECEIVED."))
register(Spec(
    id="IGN-CAS", title="A stale invoke changes nothing",
    statement="An invoke whose revision guards no longer hold (a key it read changed since) "
              "changes no key.",
    seed="001", section="On rebalance done (retryPreconditions); invariants S6, S7",
    kind="event monitor", monitor=Cas,
    rationale="The stable switch and the peer removal are read-compute-write loops; only the "
              "revision guards keep a concurrent writer's change from being overwritten."))
register(Spec(
    id="IGN-CONVERGE", title="The rebalance converges",
    statement="Once faults stop, while a live leader of the latest configuration exists and "
              "both the latest and the stable configuration keep a live majority, stable "
              "equals the calculated assignments of the data nodes and pending, planned, "
              "switch.reduce and switch.append are empty.",
    seed="001", section="the design's convergence claim; invariant L1",
    kind="quiescence check", monitor=Converge,
    rationale="Every trigger must end in a stable switch to its target; keys left behind start "
              "spurious rebalances later."))
register(Spec(
    id="IGN-PROGRESS", title="A rebalance never waits for a member that stays stopped",
    statement="Once faults stop, while the stable configuration keeps a live majority, "
              "pending, when there is one, keeps a live majority too.",
    seed="001", section="On rebalance done; invariant L1", kind="quiescence check",
    monitor=Progress,
    rationale="\"onRebalanceDone will always consider switch as a higher priority action in "
              "comparison to planned rebalance\": a restarted node's reduction is picked up by "
              "the stable switch of the rebalance that runs, so that rebalance must be able to "
              "end. One whose new configuration needs the restarted node, which stays stopped "
              "until its reduction, never does."))
register(Spec(
    id="IGN-FINITE", title="Each trigger leads to finitely many stable switches",
    statement="No reachable cycle of the state graph writes stable: a lasso is a rebalance that "
              "never ends.",
    seed="001", section="On rebalance done; invariant L3", kind="lasso",
    rationale="A switch.append that the final branch never clears would select the append "
              "branch at every later stable switch, with the same peers, for ever "
              "(Ignite 3's doStableKeySwitch)."))

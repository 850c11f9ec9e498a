"""The Ignite 3 rebalance model (design 001) for the explorer: the protocol of refimpl/ignite.py in
the actor layer, its monitors, coverage goals, IGN-FINITE as a lasso, and the canonical form that
keeps metastore revisions as ranks.

Revisions only ever meet in comparisons (equal revision guards, the trigger's "less than"), and a
new one is always greater than every revision in the system: renumbering all revisions of a
state by rank (1, 2, 3, ... in the same order) maps reachable states to states with the same
futures. Without it, a rebalance that loops would make new states for ever; with it, the loop is
a cycle of the state graph, which IGN-FINITE reports as a lasso.

Past the search: `follow` runs a state forward with no fault, serving the nodes in turn, and
`without_log_history` cuts the raft logs to their last entries, so that the rounds of a rebalance
that loops while only lengthening the logs (the current source's switch.append, finding IGN-7
in docs/findings.md) compare equal.

`IGNITE` is the model's entry in the catalog of `partsafe check`; its variants are
refimpl/ignite.py's `VARIANT_TABLE` (docs/extending.md).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Hashable, Sequence
from itertools import pairwise
from typing import Any, cast

from partsafe.checker.actor.faults import RESTART
from partsafe.checker.actor.model import ActorModel, Budget, World
from partsafe.checker.engine.model import Action, Goal, Lasso
from partsafe.checker.protocols.entry import ModelEntry, Param
from partsafe.checker.protocols.log_trace import (
    ANYONE,
    INIT,
    Bind,
    Ignore,
    Keyed,
    LogTable,
    Maybe,
    Order,
    Shown,
)
from partsafe.checker.report import canonical
from partsafe.refimpl.ignite import (
    CANDIDATE,
    LEADER,
    METASTORE,
    RULE_TABLE,
    VARIANT_TABLE,
    AppendConf,
    Appended,
    IgniteRebalance,
    Invoke,
    Member,
    Raft,
    RequestVote,
    Vote,
)
from partsafe.refimpl.metastore import (
    DATA_NODES,
    PENDING,
    PLANNED,
    STABLE,
    TRIGGER,
    Rev,
    Store,
    invoke,
)
from partsafe.specs.ignite import ignite_monitors
from partsafe.traces import events as ev

#: parts whose revisions `RevisionRanks` remembers at most (as the actor layer's RENAMED_LIMIT)
REVISIONS_LIMIT = 200_000


def _collect(obj: Any, out: set[int]) -> None:
    kind = type(obj)
    if kind is Rev:
        out.add(obj)
    elif kind is frozenset or isinstance(obj, tuple):
        for x in obj:
            if type(x) not in (str, int, bool) and x is not None:
                _collect(x, out)


def _remap(obj: Any, ranks: dict[int, Rev]) -> Any:
    kind = type(obj)
    if kind is Rev:
        return ranks[obj]
    if kind is tuple:
        return tuple(_remap(x, ranks) for x in obj)
    if kind is frozenset:
        return frozenset(_remap(x, ranks) for x in obj)
    if isinstance(obj, tuple):  # a named tuple
        return kind._make(_remap(x, ranks) for x in obj)
    return obj


class RevisionRanks:
    """The canonical form: `world` with every metastore revision replaced by its rank among
    them.

    Worlds share their parts (node states, messages in flight, monitor states) with the worlds
    they came from, so the revisions of each part are collected once and kept with the part
    (by identity: the part is kept alive with them, so its id cannot be reused); a world's
    revisions are the union of its parts'. Renumbering is needed only when the ranks have gaps,
    and only the parts holding a revision whose rank differs from it are renumbered; their images
    are remembered too, so the many worlds sharing a part share its image. Both memories are
    bounded (`REVISIONS_LIMIT` parts, then they start again): kept for ever, they would keep
    every part of every state searched alive.
    """

    def __init__(self) -> None:
        self._revisions: dict[int, tuple[Any, frozenset[int]]] = {}
        self._images: dict[int, tuple[Any, dict[tuple[tuple[int, Rev], ...], Any]]] = {}

    def _of(self, part: Any) -> frozenset[int]:
        known = self._revisions.get(id(part))
        if known is not None and known[0] is part:
            return known[1]
        if len(self._revisions) > REVISIONS_LIMIT:
            self._revisions.clear()
        found: set[int] = set()
        _collect(part, found)
        revisions = frozenset(found)
        self._revisions[id(part)] = (part, revisions)
        return revisions

    def __call__(self, world: World) -> World:
        of = self._of
        monitor_revs = of(world.monitors)  # often the parent's monitors, unchanged
        node_revs = [of(part) for part in world.nodes]
        message_revs = [(part, of(part)) for part in world.network]
        revs = set(monitor_revs).union(*node_revs, *(r for _, r in message_revs))
        if not revs or (min(revs) == 1 and max(revs) == len(revs)):
            return world
        ranks = {r: Rev(i) for i, r in enumerate(sorted(revs), 1)}
        moved = {r: rank for r, rank in ranks.items() if r != rank}
        remap = self._remap_part
        return World(tuple([p if r.isdisjoint(moved) else remap(p, r, ranks, moved)
                            for p, r in zip(world.nodes, node_revs, strict=True)]),
                     frozenset([p if r.isdisjoint(moved) else remap(p, r, ranks, moved)
                                for p, r in message_revs]),
                     world.budget,
                     world.monitors if monitor_revs.isdisjoint(moved)
                     else remap(world.monitors, monitor_revs, ranks, moved),
                     world.flags)

    def _remap_part(self, part: Any, part_revs: frozenset[int], ranks: dict[int, Rev],
                    moved: dict[int, Rev]) -> Any:
        """`part` renumbered by `ranks` (some of its revisions are among the `moved` ones): its
        image, remembered by the part's identity and the moves of its own revisions. Many worlds
        share a part and renumber it alike, and the same image keeps what is remembered of it by
        identity (its renamings) valid; a part none of whose revisions moves stays as it is."""
        moves = tuple(sorted([(r, moved[r]) for r in part_revs if r in moved]))
        known = self._images.get(id(part))
        if known is None or known[0] is not part:
            if len(self._images) > REVISIONS_LIMIT:
                self._images.clear()
            known = (part, {})
            self._images[id(part)] = known
        image = known[1].get(moves)
        if image is None:
            image = known[1][moves] = _remap(part, ranks)
        return image


class LogWindow:
    """The canonical form's second part: once every raft index of a world exceeds `window`, all
    of them lowered together to it, the logs cut at the front to match.

    Raft logs and the indices that count into them (the commit index, the leader's
    acknowledgements, the indices in AppendConf, Appended and RequestVote) are read only through
    comparisons with one another, the last entry, and appends of one: the handlers never look
    at an entry before the last. Lowering all of them by one amount keeps every such comparison
    and every append, so the world and its image have the same futures, with one exception: a
    raft node started afresh (a log of one term-0 entry, commit 1) holds indices that are not
    lowered. A joining node, outside its own configuration, never stands, gets the leader's log
    with its first AppendConf (its commit then the leader's, above 1 on both sides), and a
    RequestVote compares its term-0 entry with a later term before any index; so its indices
    stay as they are, and it does not hold the window back. A node started afresh inside its
    configuration (a full partition restart, a group started again by a restart) can lead with
    its one entry and append after it, starting indices of its own beside the lowered ones: the
    form therefore applies only once a world has no restart left in its budget, no restart
    decision in progress (a restart poll or its read), and no such node; before that the logs
    are kept whole, and a restart is the only way to start one.

    It closes the loop of a rebalance whose rounds only lengthen the logs (the current
    source's switch.append under the raft sequence token, finding IGN-7 in docs/findings.md):
    the rounds then return to the same state, a cycle IGN-FINITE reports as a lasso. `window`
    0 turns it off; below the window nothing changes, so a search whose logs stay shorter is the
    search without it."""

    def __init__(self, window: int, names: tuple[str, ...]) -> None:
        self.window = window
        self.names = names

    def __call__(self, world: World) -> World:
        window = self.window
        if window <= 0 or world.budget[RESTART]:
            return world
        low: int | None = None
        for name, st in zip(self.names, world.nodes, strict=True):
            if type(st) is not Member:
                continue
            if st.poll is not None:
                return world
            raft = st.raft
            if raft is None or _joining(name, raft):
                continue
            least = min(len(raft.log), raft.commit, *(i for _, i in raft.acks))
            if least <= window:
                return world
            low = least if low is None else min(low, least)
        if low is None:
            return world
        for _, _, msgs in world.network:
            for msg in msgs:
                least = _least_index(msg)
                if least is None:
                    continue
                if least <= window:
                    return world
                low = min(low, least)
        cut = low - window
        nodes = tuple(st._replace(raft=_cut_raft(st.raft, cut))
                      if type(st) is Member and st.raft is not None
                      and not _joining(name, st.raft) else st
                      for name, st in zip(self.names, world.nodes, strict=True))
        network = frozenset((src, dst, tuple(_cut_message(m, cut) for m in msgs))
                            for src, dst, msgs in world.network)
        return world._replace(nodes=nodes, network=network)


def _joining(name: str, raft: Raft) -> bool:
    """A raft node started afresh outside its own configuration (a joining node)."""
    return raft.log[-1].term == 0 and name not in raft.members


def _least_index(msg: Any) -> int | None:
    kind = type(msg)
    if kind is AppendConf:
        return min(len(msg.log), msg.commit)
    if kind is Appended:
        return msg.index if msg.index >= 0 else None  # -1: a refusal, no index
    if kind is RequestVote:
        return cast(int, msg.last_index)
    return None


def _cut_raft(raft: Raft, cut: int) -> Raft:
    return raft._replace(log=raft.log[cut:], commit=raft.commit - cut,
                         acks=frozenset((m, i - cut) for m, i in raft.acks))


def _cut_message(msg: Any, cut: int) -> Any:
    kind = type(msg)
    if kind is AppendConf:
        return msg._replace(log=msg.log[cut:], commit=msg.commit - cut)
    if kind is Appended and msg.index >= 0:
        return msg._replace(index=msg.index - cut)
    if kind is RequestVote:
        return msg._replace(last_index=msg.last_index - cut)
    return msg


class IgniteCanonical:
    """The model's canonical form: raft indices lowered past a window (`LogWindow`), then
    revisions by rank (`RevisionRanks`), so that the revisions of the entries the window cut
    leave no gap."""

    def __init__(self, window: int, names: tuple[str, ...]) -> None:
        self.logs = LogWindow(window, names)
        self.ranks = RevisionRanks()

    def __call__(self, world: World) -> World:
        return self.ranks(self.logs(world))


def revision_ranks(world: World) -> World:
    """`world` with every metastore revision replaced by its rank among them (one world alone:
    models use a `RevisionRanks`, which keeps what it learnt about the parts)."""
    return RevisionRanks()(world)


def _invoke_label(proto: IgniteRebalance, prev: World, action: Action) -> tuple[str, bool] | None:
    """The branch an invoke delivered to the metastore takes, and whether it writes stable."""
    if action[0] != "deliver" or action[2] != METASTORE or type(action[3]) is not Invoke:
        return None
    store = cast(Store, prev.nodes[proto.nodes.index(METASTORE)])
    _, label, changes = invoke(store, cast(Invoke, action[3]).iif)
    return label, any(c.key == STABLE for c in changes)


def ignite_goals(proto: IgniteRebalance) -> tuple[Goal[World], ...]:
    def branch(label: str) -> Any:
        def reached(prev: World, action: Action, nxt: World) -> bool:
            taken = _invoke_label(proto, prev, action)
            return taken is not None and taken[0] == label
        return reached

    def rejoins(prev: World, action: Action, nxt: World) -> bool:
        if action[0] != "deliver" or action[2] == METASTORE:
            return False
        i = proto.nodes.index(action[2])
        before, after = cast(Member, prev.nodes[i]), cast(Member, nxt.nodes[i])
        return (before.raft is None and after.raft is not None
                and action[2] in proto.initial_stable)

    def new_leader(prev: World, action: Action, nxt: World) -> bool:
        return any(st is not None and type(st) is Member and st.raft is not None
                   and st.raft.role == "leader" and st.raft.term > 1 for st in nxt.nodes)

    def terms_of(role: str, world: World) -> list[int]:
        return [st.raft.term for st in world.nodes
                if type(st) is Member and st.raft is not None and st.raft.role == role]

    def split_election(prev: World, action: Action, nxt: World) -> bool:
        terms = terms_of(CANDIDATE, nxt)
        return len(set(terms)) < len(terms)

    def stale_leader(prev: World, action: Action, nxt: World) -> bool:
        return len(set(terms_of(LEADER, nxt))) > 1

    def vote_lost(prev: World, action: Action, nxt: World) -> bool:
        return action[0] == "drop" and type(action[3]) is Vote and action[3].granted

    def append_takes_term(prev: World, action: Action, nxt: World) -> bool:
        if action[0] != "deliver" or type(action[3]) is not AppendConf:
            return False
        i = proto.nodes.index(action[2])
        before, after = cast(Member, prev.nodes[i]).raft, cast(Member, nxt.nodes[i]).raft
        term = cast(AppendConf, action[3]).term
        return (before is not None and before.term < term and after is not None
                and after.term == term and after.leader == action[1])

    return (
        Goal("new-leader", "a leader is elected after the first one (a restart or timeout)",
             new_leader),
        Goal("reduction-started", "the switch.reduce watch starts a rebalance without the "
             "restarted node", branch("REDUCTION_STARTED")),
        Goal("switch-append", "the stable switch takes the switch.append branch",
             branch("SWITCH_APPEND_SUCCESS")),
        Goal("rebalance-finished", "a rebalance ends (FINISH_REBALANCE_SUCCESS)",
             branch("FINISH_REBALANCE_SUCCESS")),
        Goal("restarted-node-rejoins", "a restarted node of the first group runs raft again",
             rejoins),
        Goal("split-election", "two candidates stand in one term at once", split_election),
        Goal("stale-leader", "a leader lives on while a leader of a newer term leads",
             stale_leader),
        Goal("vote-lost", "a granted vote is lost on its way to the candidate", vote_lost),
        Goal("append-takes-term", "a node behind the leader's term (restarted, or not asked for "
             "its vote) takes the term from the leader's append (raft: a request of a higher term "
             "updates the receiver's)", append_takes_term),
    )


def _busy(node: str, state: Hashable) -> bool:
    if node == METASTORE:
        return False
    st = cast(Member, state)
    return bool(st.switch or st.removals or st.elected or st.planned_reentry)


class IgniteModel(ActorModel):
    """The actor model with IGN-FINITE: no reachable cycle writes stable."""

    def lassos(self) -> list[Lasso[World]]:
        proto = cast(IgniteRebalance, self.protocol)

        def writes_stable(prev: World, action: Action, nxt: World) -> bool:
            taken = _invoke_label(proto, prev, action)
            return taken is not None and taken[1]

        return [Lasso("IGN-FINITE", "a cycle of the state graph writes stable",
                      writes_stable)]


def build_ignite(variant: str, scope: dict[str, int],
                 rules: frozenset[str] = frozenset()) -> IgniteModel:
    proto = IgniteRebalance(nodes=scope["nodes"], spares=scope["spares"],
                            replicas=scope["replicas"], variant=variant, rules=rules,
                            persistent=bool(scope["persistent"]),
                            on_disappeared=bool(scope["on-disappeared"]),
                            max_term=scope["max-term"], pre_vote=bool(scope["pre-vote"]),
                            free_ranking=bool(scope["free-ranking"]),
                            spare_data_nodes=scope["spare-data-nodes"])
    # an election timeout that fires early is a false suspicion of the failure detector the
    # election timers are (refimpl/failure_detector.py)
    budget = Budget(restarts=scope["restarts"], admin=scope["baseline-changes"],
                    losses=scope["losses"], reorders=scope["reorders"],
                    suspicions=scope["early-timeouts"])
    goals = ignite_goals(proto)
    if not scope["restarts"] or scope["persistent"]:  # no reentry without in-memory restarts
        goals = tuple(g for g in goals if g.name not in ("reduction-started", "switch-append",
                                                         "restarted-node-rejoins"))
        if not scope["baseline-changes"]:  # and then no rebalance at all
            goals = tuple(g for g in goals if g.name != "rebalance-finished")
    if scope["max-term"] <= 1:  # no election after the first
        goals = tuple(g for g in goals if g.name != "new-leader")
    # the election timeouts fire only once nothing is in flight to their node (the failure
    # detector's justified suspicions) unless some fire early: only then do two candidates
    # stand in one term and does a deposed leader live on (refimpl/ignite.py, `on_suspect`)
    if not scope["early-timeouts"] or scope["max-term"] <= 1:
        goals = tuple(g for g in goals if g.name not in ("split-election", "stale-leader"))
    if not scope["losses"] or scope["max-term"] <= 1:
        goals = tuple(g for g in goals if g.name != "vote-lost")
    # a node is behind the leader's term only after a restart, or after an election it was not
    # asked in (two of three nodes elect)
    if not scope["restarts"] and (not scope["early-timeouts"] or scope["nodes"] < 3
                                  or scope["max-term"] <= 1):
        goals = tuple(g for g in goals if g.name != "append-takes-term")
    model = IgniteModel(proto, budget, ignite_monitors(scope["replicas"]), goals=goals,
                        scope={k: scope[k] for k in ("nodes", "spares", "replicas",
                                                     "baseline-changes", "persistent",
                                                     "on-disappeared", "max-term",
                                                     "early-timeouts", "pre-vote",
                                                     "free-ranking", "spare-data-nodes")},
                        busy=_busy, canonical=IgniteCanonical(scope["log-window"], proto.nodes))
    model.name = "ignite-rebalance"
    return model


# --- runs past the search ---------------------------------------------------------------------


def follow(model: ActorModel, world: World, steps: int) -> list[tuple[Action, World]]:
    """`world` run forward for up to `steps` steps with no fault: a delivery or a timer when one
    is enabled, an election timeout only when nothing else can happen, each time at the node
    served least recently (so that no node's messages wait for ever and some election
    succeeds). One run out of the many the search covers, chosen to show where a scenario goes
    when nothing more goes wrong. The same run in every process."""
    run: list[tuple[Action, World]] = []
    served: dict[Any, int] = {}
    for step in range(steps):
        succ = model.successors(world)
        moves = [(a, w) for a, w in succ if a[0] in ("deliver", "timer")]
        if not moves:
            moves = [(a, w) for a, w in succ if a[0] == "suspect"]
            if not moves:
                break
        # fair: the node (the receiver of a delivery) served least recently goes first; among
        # its moves, the first in a canonical order (successors come in the order of the
        # network's frozenset, which depends on the process's string hashing)
        action, world = min(moves, key=lambda m: (served.get(_where(m[0]), -1), canonical(m[0])))
        served[_where(action)] = step
        run.append((action, world))
    return run


def _where(action: Action) -> Any:
    return action[2] if action[0] == "deliver" else action[1]


def without_log_history(world: World) -> World:
    """`world` with every raft log cut to its last configuration entry and the indices that count
    into a log (commit, acknowledgements) made relative to its end. A rebalance that runs round
    after round with the same peers changes nothing else: each round's configuration change
    appends its entries (JRaft appends them for every new sequence token). Messages in flight
    are kept as they are, so compare states in which no raft message is in flight (as after a
    stable write, when only metastore answers and watch events are); two such states equal here
    (and under `revision_ranks`) have the same futures but for the lengths of the logs."""
    nodes = []
    for st in world.nodes:
        if type(st) is Member and st.raft is not None:
            raft = st.raft
            size = len(raft.log)
            st = st._replace(raft=raft._replace(
                log=raft.log[-1:], commit=raft.commit - size,
                acks=frozenset((m, i - size) for m, i in raft.acks)))
        nodes.append(st)
    return world._replace(nodes=tuple(nodes))


_NODE = Bind("member")
_NODES = Bind("member", unordered=True)
_TERM = Order("term")
_GROUP = Bind("raft group")
#: the metastore keys whose writes Ignite's rebalance lines print
_PRINTED_KEYS = frozenset({STABLE, PENDING, TRIGGER, PLANNED})


def _printed(model: ActorModel, world: World, action: Action, nxt: World,
             events: tuple[ev.Event, ...]) -> tuple[ev.Event | Maybe, ...]:
    """What Apache Ignite 3 prints for a step of the rebalance model (001): JRaft's ``become
    leader of group, term=T, conf=…`` line is read as the leader's configuration and its
    election (a ``raft_peers_changed`` before the ``raft_leader``); a vote for another node is
    JRaft's ``received RequestVoteRequest`` line, which says nothing of the grant (a `Maybe`);
    the metastore's own writes and the operator's data nodes are no node's line, and of the
    keys a node writes only stable, pending (with its trigger) and planned are printed (not
    the switch's reduce and append). The initial state's events: every raft node's start
    first, then the first election (the nodes start together; the election follows)."""
    out: list[ev.Event | Maybe] = []
    nodes = set(model.protocol.members)  # not the metastore: a service, no member's log
    if action == INIT:
        events = (*(e for e in events if _data_nodes(e)),
                  *(e for e in events if isinstance(e, ev.RaftStarted)),
                  *(e for e in events if not isinstance(e, ev.RaftStarted) and not _data_nodes(e)))
    for e in events:
        if _data_nodes(e):
            assert isinstance(e, ev.AssignmentsChanged)
            out.append(ev.DataNodesChanged(member=ANYONE, nodes=e.nodes))
            continue
        if e.member not in nodes or (isinstance(e, ev.AssignmentsChanged)
                                     and e.key not in _PRINTED_KEYS):
            continue
        if isinstance(e, ev.RaftLeader):
            out.append(ev.RaftPeersChanged(member=e.member, peers=e.peers, term=e.term,
                                           group=e.group))
        out.append(Maybe(e) if isinstance(e, ev.RaftVote) and e.candidate != e.member else e)
    return tuple(out)


def _data_nodes(e: ev.Event) -> bool:
    """A write of the data nodes (the operator's baseline change, the initial store's)."""
    return isinstance(e, ev.AssignmentsChanged) and e.key == DATA_NODES


def log_scope(records: Sequence[ev.Event]) -> dict[str, int]:
    """The scope an Ignite 3 log needs of the rebalance model: the nodes of the first raft
    configuration it shows (else every node it names) hold the partition; every other node is
    a spare; a restart per restart it shows (a raft node's start after its first); a baseline
    change per change of the data nodes it shows (else per change trigger, each rebalance a
    data-nodes change starts writing its revision to pending.change.trigger, and at least one
    where it shows a rebalance: assignments.pending or .planned written); as many raft
    terms as it shows, and per election after the first that no restart accounts for, two early
    election timeouts (the candidate's, and a voter's leader lease ending while its leader
    lives). The rendezvous ranking is free (`free-ranking`): Ignite's hash ranks the log's
    names, not the model's; the first data nodes it shows beyond the holders are spares that
    are data nodes from the start."""
    ordered = sorted(records, key=lambda e: e.order or 0)
    first = next((e for e in ordered if isinstance(e, ev.RaftStarted | ev.RaftLeader)), None)
    named = {e.member for e in records}
    holders = set(first.peers) if first is not None else named
    pending = any(isinstance(e, ev.AssignmentsChanged) and e.key != STABLE for e in records)
    starts = [e.member for e in records if isinstance(e, ev.RaftStarted)]
    restarts = max(sum(isinstance(e, ev.NodeRestarted) for e in records),
                   len(starts) - len(set(starts)))
    terms = {e.term for e in records
             if isinstance(e, ev.RaftVote | ev.RaftLeader | ev.RaftPeersChanged) and e.term}
    triggers = {e.value for e in records if isinstance(e, ev.AssignmentsChanged)
                and e.key == TRIGGER and e.value is not None}
    data = [frozenset(e.nodes) for e in ordered if isinstance(e, ev.DataNodesChanged)]
    changes = sum(a != b for a, b in pairwise(data))
    spare_data = len(set(data[0]) - holders) if data else 0
    scope = {"nodes": max(1, len(holders)), "spares": len(named - holders),
             "restarts": restarts, "free-ranking": 1, "spare-data-nodes": spare_data,
             "baseline-changes": changes if data else max(len(triggers), int(pending))}
    if len(terms) > IGNITE.params["max-term"].default:
        scope["max-term"] = len(terms)
    elections = sum(isinstance(e, ev.RaftVote) and e.candidate == e.member for e in records)
    if elections - 1 - restarts > 0:
        scope["early-timeouts"] = 2 * (elections - 1 - restarts)
    return scope


def _changes_nothing(model: ActorModel, world: World, node: Hashable | None, e: ev.Event,
                     to_model: Callable[[str], Any]) -> bool:
    """A record of a step of the design that leaves the state as it is:

    - a node's removal of assignments.planned where the metastore holds none: the rebalance's
      recalculation found pending empty and the calculated assignments equal to the current
      ("Remove planned key because pending is empty …", ZoneRebalanceUtil; a zone's
      partitions print it as they are created);
    - a history entry of the data nodes that are the data nodes already (``DataNodesManager``
      adds one when it starts a scale-up or scale-down timer);
    - a node's start where the model's node holds no data and runs no raft node (a spare the
      model runs from the start, or a node after its restart: the model's restart is its
      stop and its start in one step)."""
    store = world.nodes[model.index[METASTORE]]
    if isinstance(e, ev.AssignmentsChanged) and e.key == PLANNED and e.removed:
        return isinstance(store, Store) and store.get(PLANNED) is None
    if isinstance(e, ev.DataNodesChanged):
        names = {to_model(n) for n in e.nodes}
        return None not in names and isinstance(store, Store) \
            and names == set(cast(frozenset[str], store.value(DATA_NODES)))
    if isinstance(e, ev.MemberStarted) and node is not None:
        st = world.nodes[model.index[node]]
        return isinstance(st, Member) and st.raft is None and not st.data
    return False


#: why a record of another raft group is set aside (`one_group`)
OTHER_GROUP = ("another raft group: the model runs one partition's group (of a real cluster's "
               "many, the partition group with the most records)")
#: why another zone's data nodes are set aside
OTHER_ZONE = "another zone's data nodes: the model runs one partition of one zone"


def one_group(streams: dict[str, list[Keyed]]
              ) -> tuple[dict[str, list[Keyed]], dict[tuple[str, str], int]]:
    """The records of one partition's raft group, where a log holds several: a real node runs
    the cluster-management and metastorage groups and a group per partition of every zone, and
    the model runs one partition (001). The group with the most records is the one a run tells
    most of; records that name no group (the metastore's) are kept."""
    counts = Counter(g for stream in streams.values() for _, e in stream
                     if "_part_" in (g := getattr(e, "group", None) or ""))
    groups = {getattr(e, "group", None) for stream in streams.values() for _, e in stream} - {None}
    if len(groups) <= 1 or not counts:
        return streams, {}
    chosen = max(counts, key=lambda g: (counts[g], g))
    zone = chosen.split("_part_")[0]
    kept: dict[str, list[Keyed]] = {}
    dropped: Counter[tuple[str, str]] = Counter()
    for member, stream in streams.items():
        for key, e in stream:
            if isinstance(e, ev.DataNodesChanged):
                if str(e.zone) == zone:
                    kept.setdefault(member, []).append((key, e))
                else:
                    dropped[(e.type, OTHER_ZONE)] += 1
            elif getattr(e, "group", None) in (None, chosen):
                kept.setdefault(member, []).append((key, e))
            else:
                dropped[(e.type, OTHER_GROUP)] += 1
    return kept, dict(dropped)


#: how Apache Ignite 3's logs show the rebalance model's steps (001; the messages of
#: docs/validation.md, "Apache Ignite 3 logs"): JRaft's elections and configurations, the
#: rebalance's writes of pending, planned and stable
LOG_TABLE = LogTable(
    product="Apache Ignite 3",
    shown={
        "raft_started": Shown(
            "NodeImpl: Node <group/peer> init, term=T, lastLogId=…, conf=…",
            fields={"peers": _NODES, "group": _GROUP,
                    "reason": Ignore("the log's reason is read from the node's raft log (empty "
                                     "or not), the model's from its action")}),
        "raft_vote": Shown(
            "NodeImpl: Node <group/peer> start vote and grant vote self, term=T",
            fields={"term": _TERM, "candidate": _NODE, "group": _GROUP}),
        "raft_leader": Shown(
            "NodeImpl: Node <group/peer> become leader of group, term=T, conf=…, oldConf=…",
            fields={"term": _TERM, "peers": _NODES, "old": _NODES, "group": _GROUP,
                    "votes": Ignore("the leader's line names no voter")}),
        "raft_peers_changed": Shown(
            "NodeImpl: Catch up phase to change peers was successfully finished [… toPeers=…] "
            "(and the configuration of a leader's line)",
            fields={"peers": _NODES, "term": _TERM, "group": _GROUP}),
        "node_restarted": Shown(
            "the raft node's next init with an empty log (a restart prints nothing of its own; "
            "a node restarted before its raft group started shows nothing)", always=False,
            fields={"group": _GROUP}),
        "member_started": Shown(
            "IgniteImpl: Starting node: [name=…, …] (a node's process starts; the model's "
            "restart is its stop and its start in one step, a spare runs from the start)",
            fields={"uuid": Ignore("Ignite's start line names no node id")}),
        "data_nodes_changed": Shown(
            "DataNodesManager: Updated data nodes on …, added history entry [zoneId=…, …, "
            "nodes=[…]] (by the node whose invoke wrote them), Initialized zone's dataNodes "
            "history […]", anyone=True,
            fields={"nodes": _NODES, "zone": Ignore("the model runs one zone")}),
        "assignments_changed": Shown(
            "ZoneRebalanceUtil: Update metastore pending|planned partitions key […], "
            "ZoneRebalanceRaftGroupEventsListener: Rebalance finished […]",
            fields={"partition": Bind("partition"), "nodes": _NODES, "group": _GROUP,
                    "revision": Ignore("the lines print no metastore revision"),
                    "value": Order("change trigger")}),
    },
    prints=_printed,
    outside={"metastore_invoke": "a metastore invoke is read as the keys it wrote",
             "reduction_requested": "the switch's reduction is not printed"},
    scope=log_scope,
    streams=one_group,
    starts=lambda member: ev.MemberStarted(member=member),
    stutters=_changes_nothing,
    members=lambda model: model.protocol.members,
    # a configuration change prints its catch-up and its stable switch, and nothing of the
    # joint entry, the new configuration's entry, their appends and acknowledgements and the
    # switch's read in between: about 12 steps with three peers
    max_hidden=12,
)


IGNITE = ModelEntry(
    name="ignite-rebalance",
    title="Apache Ignite 3 in-memory raft group reconfiguration on node failure",
    seed="001",
    params={
        "nodes": Param(3, "nodes holding the partition at the start (A is its raft leader)", 1),
        "spares": Param(0, "further running nodes a baseline change may add"),
        "replicas": Param(3, "the partition's replica count (calculated assignments)", 1),
        "restarts": Param(1, "node restarts (in-memory storage unless --persistent 1)"),
        "baseline-changes": Param(0, "baseline changes (a node joins or leaves the data nodes)"),
        "losses": Param(0, "lost raft messages (the metastore is reliable)"),
        "reorders": Param(0, "raft messages that overtake an earlier one"),
        "persistent": Param(0, "1: persistent storage (raft meta survives restarts)"),
        "on-disappeared": Param(0, "1: the leader also asks for the removal of a node that "
                                   "disappeared (the design's optimization)"),
        "max-term": Param(2, "raft terms an election may reach (elections stop there; 2 lets "
                             "the leader change once)", 1),
        "early-timeouts": Param(0, "election timeouts that fire early: a follower's leader "
                                   "lease ends while its leader lives, or a node stands for "
                                   "election while messages to it are in flight"),
        "pre-vote": Param(0, "1: JRaft's pre-vote as a round of its own (a node keeps its term "
                             "until a quorum grants it), not merged into the vote"),
        "free-ranking": Param(0, "1: a baseline change chooses the calculated assignments of "
                                 "its data nodes among those a ranking of the nodes gives, as a "
                                 "log's names rank in Ignite (0: the model's own hash ranks "
                                 "them)"),
        "spare-data-nodes": Param(0, "spares that are data nodes from the start, ranked after "
                                     "the partition's holders (needs --free-ranking 1)"),
        "log-window": Param(12, "raft indices kept as they are up to this; once every index of "
                                "a state is past it and no restart is left, all are lowered "
                                "together to it (the same futures; 0: never)"),
    },
    variant_table=VARIANT_TABLE,
    rule_table=RULE_TABLE,
    log_table=LOG_TABLE,
    build=build_ignite,
    action_kinds=("deliver", "suspect", "restart", "admin", "drop", "reorder", "false-suspect"),
)

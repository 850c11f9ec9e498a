"""Apache Ignite 3: in-memory raft group reconfiguration on node failure (design 001, IGNITE-16668),
as node handlers over a metastore node, for one partition.

What each piece implements (design 001, and the Ignite 3 source by the names of its methods):

- the metastore (refimpl/metastore.py) is one node, `METASTORE`, reached over reliable channels:
  it runs invokes atomically, answers linearizable reads, and sends every change to every node as
  a watch event, in revision order;
- the trigger (`updatePendingAssignmentsKeys`): every node handles a data-nodes change with
  one nested invoke guarded by the change trigger; the first writes pending or planned, the
  others find the trigger taken;
- the pending handler: a node of the pending set that is not in stable starts its raft node
  with the old stable configuration; the leader asks raft to change peers, with the pending's
  revision as sequence token;
- raft (JRaft's `NodeImpl`): terms, RequestVote with `votedFor` persisted only for persistent
  storage, leader election (the pre-vote merged into the vote, or with `pre_vote` a round of
  its own: `on_suspect`), and configuration changes in JRaft's stages: a joint entry that
  needs majorities of the old and the new peers, then the new configuration alone, after which
  the change is done; a new leader writes its configuration again in its term and re-drives the
  pending rebalance (`onLeaderElected`); the leader's replicators send the log again to a peer
  that has not acknowledged it (one whose restart lost it in flight, once its raft node runs
  again);
- rebalance done (`doStableKeySwitch`, design 001 "On rebalance done"): read every key, then
  one invoke guarded by the revisions read (the data nodes' too), in the design's priority order:
  switch.append, then switch.reduce, then planned, then finish (which also clear switch.reduce);
  retried on a failed guard;
- the restart handler (design 001 "On in-memory partition restart"): a node restarted with
  in-memory storage asks the stable peers whether they have data; with a majority it adds itself
  to switch.reduce in the retry loop and does not start raft; when every peer is empty it starts
  normally (full partition restart); otherwise it does nothing;
- the switch.reduce watch (`handleReduceChanged`) and the stable watch;
- optionally the `onDisappeared` removal (design 001: "only an optimization"): the leader asks for
  the removal of a member that disappeared.

The variants are the design's hazards (design 001) and the current source's finish branch
(`doStableKeySwitch`): see `VARIANT_TABLE`.

One file: the rebalance is one protocol over one metastore, and its handlers (trigger, pending,
raft, stable switch, restart) read and write the same keys in the design's order; split apart,
each would need the others' key rules.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Iterable, Iterator, Sequence
from itertools import permutations
from typing import ClassVar, NamedTuple, cast

from partsafe.refimpl.actor import (
    Channels,
    NodeId,
    Step,
    Suspicion,
    SystemView,
    Timing,
    message,
)
from partsafe.refimpl.failure_detector import FALSE, HeartbeatProtocol
from partsafe.refimpl.metastore import (
    APPEND,
    DATA_NODES,
    NO_REV,
    PENDING,
    PLANNED,
    REDUCE,
    STABLE,
    TRIGGER,
    Absent,
    All,
    AnyOf,
    Below,
    Condition,
    Entry,
    Exists,
    Iif,
    Op,
    Put,
    Remove,
    Rev,
    RevisionIs,
    Store,
    ValueIs,
    ValueIsNot,
    invoke,
)
from partsafe.refimpl.profiles import Rule, Source, check_rules, rule_table
from partsafe.refimpl.variants import Variant, variant_docs, variant_table
from partsafe.specs.rules import calculate_assignments
from partsafe.traces import events as ev
from partsafe.traces.events import Event

METASTORE = "metastore"
PARTITION = 0
#: the restart handler's poll timeout, and the leader's replicators
HAS_DATA_TIMEOUT = ("has-data-timeout",)
REPLICATE = ("replicate",)
Nodes = frozenset[str]

#: the model's record of the calculated assignments a baseline change chose where the ranking is
#: free (`IgniteRebalance.free_ranking`): (data nodes, assignments) pairs; no Ignite key, never
#: printed, read with every read of the metastore
CHOSEN = "(calculated assignments)"

#: the scope of the election mutants: no restart, three early election timeouts, three terms
_ELECTIONS = {"restarts": 0, "max-term": 3, "early-timeouts": 3}

#: the variants (refimpl/variants.py): the design's hazards first (the zoo's three), then the
#: current source's and the design's branches that this model found wanting (docs/findings.md)
VARIANT_TABLE: dict[str, Variant] = variant_table(
    Variant("fixed", "the design of IGNITE-16668: reentry through switch.reduce and "
            "switch.append"),
    Variant("ig-restart-keeps-peer", "a restarted in-memory node starts raft at once in its old "
            "group, with its vote forgotten (design 001 \"Problem\")", breaks="IGN-RESTART"),
    Variant("ig-no-trigger-guard", "trigger invokes without the change trigger revision guard "
            "(the design's, with no other): a stale watch event replays an old rebalance (the "
            "hazard IGN-STALE-TRIGGER guards against)", breaks="IGN-STALE-TRIGGER"),
    # it needs a baseline change as well as a restart; without elections after the first
    # (max-term 1) the fixed design's clean run at that scope takes about 25 s
    Variant("ig-single-planned", "the reduction goes through the single planned key, so the "
            "addition that returns the node overwrites it (design 001, the [A,B,D] example)",
            breaks="IGN-NO-LOST-REDUCTION", zoo_scope={"baseline-changes": 1, "max-term": 1}),
    Variant("ig-source-keeps-append", "the current source's planned and finish branches write "
            "neither switch key (Ignite 3's `doStableKeySwitch`): a node that is to come back "
            "stays in switch.append"),
    Variant("ig-design-keeps-reduce", "the design's planned and finish branches write "
            "switch.append but not switch.reduce (design 001 \"On rebalance done\"): a finished "
            "reduction of a node that also left the data nodes stays behind"),
    Variant("ig-stale-reduce-event", "the switch.reduce watch's invoke guarded by the change "
            "trigger and an empty pending alone, as in the design and the source (design 001, "
            "Ignite 3's `handleReduceChanged`): a reduction request acted on after the reentry it "
            "asked for finished removes the node again (finding IGN-11, docs/findings.md)"),
    Variant("ig-switch-ignores-data-nodes", "the stable switch's retry preconditions leave out "
            "the data nodes (design 001 \"On rebalance done\"): a switch computed before a "
            "baseline change adds back a node that just left"),
    # raft mutants, not historical: each leaves out one check of JRaft's `NodeImpl` that the
    # election specs exist for. Their scopes lift the justified-timeout rule (`on_suspect`) a
    # few times (`--early-timeouts`), so that elections overlap and deposed leaders live on;
    # each is killed there with `--pre-vote 1` too (tests/protocols/test_ignite_elections.py)
    Variant("mutant-vote-twice", "not historical: a node grants its vote in a term it has "
            "voted in already (`handleRequestVoteRequest` without its votedId check)",
            breaks="IGN-ONE-VOTE", zoo_scope=_ELECTIONS),
    Variant("mutant-count-refused-vote", "not historical: a candidate counts every answer of "
            "its term, refused votes too (`handleRequestVoteResponse` without its granted check)",
            breaks="IGN-QUORUM-LEADER", zoo_scope=_ELECTIONS),
    Variant("mutant-accept-stale-append", "not historical: a node takes the log of a leader of "
            "an older term and goes back to that term (`handleAppendEntriesRequest` without its "
            "stale-term check)", breaks="IGN-ONE-VOTE", zoo_scope=_ELECTIONS),
    Variant("mutant-count-stale-vote", "not historical: a candidate counts a vote granted to "
            "its candidacy of an earlier term (`handleRequestVoteResponse` without its "
            "stale-term check)", breaks="IGN-QUORUM-LEADER", zoo_scope=_ELECTIONS),
    Variant("mutant-joint-new-quorum", "not historical: the ballot of a node of a joint "
            "configuration (its pre-votes and votes) counts against the new peers only (JRaft's "
            "`Ballot.init(conf, oldConf)` counts both halves)", breaks="IGN-QUORUM-LEADER",
            zoo_scope={"nodes": 2, "restarts": 0, "baseline-changes": 1, "max-term": 3,
                       "early-timeouts": 2}),
    Variant("mutant-forget-voted-for", "not historical: persistent storage keeps a node's term "
            "but not its vote across a restart (JRaft's `RaftMetaStorage` keeps both)",
            breaks="IGN-ONE-VOTE", zoo_scope={"restarts": 2, "persistent": 1}),
)
#: the names and docs of `VARIANT_TABLE` as they were at import
VARIANT_DOCS: dict[str, str] = variant_docs(VARIANT_TABLE)

_IGNITE = "apache/ignite-3"
#: the table era's last commit before colocation became the default (86a07f62ccc, 2025-07-02)
_TABLE_ERA = "f02b1122ab5"
#: the zone era as read (HEAD, 2026-03-27)
_ZONE_ERA = "d46ac208937"
_TABLE_MANAGER = ("modules/table/src/main/java/org/apache/ignite/internal/table/distributed/"
                  "TableManager.java")
_NODE_IMPL = "modules/raft/src/main/java/org/apache/ignite/raft/jraft/core/NodeImpl.java"

#: the rules of the release profiles (refimpl/profiles.py): where the code of a shipped
#: Ignite 3 release does something else than `fixed`, each row citing its source
RULE_TABLE: dict[str, Rule] = rule_table(
    Rule("ig-table-reentry",
         "a node restarted in memory that pending names and stable does not (a node being added "
         "back, or joining) runs the reentry of a member of stable against the old stable "
         "peers, itself not among them: every peer empty starts it with stable's "
         "configuration, a majority with data puts it in switch.reduce and leaves its raft node "
         "stopped, anything else leaves it stopped (the node's recovery handles the pending it "
         "finds and starts the partition through the reentry check, with stable as the new "
         "configuration)",
         "starts the node's raft node at once, as a joining node (design 001 \"On in-memory "
         "partition restart\" reenters the members of stable only): the rule's node waits in "
         "switch.reduce for a reduction that cannot start while its own addition is pending, "
         "and the rebalance stalls (finding IGN-18, docs/findings.md)",
         (Source(_IGNITE, _TABLE_ERA, _TABLE_MANAGER,
                 "TableManager.handleChangePendingAssignmentEvent"),
          Source(_IGNITE, _TABLE_ERA, _TABLE_MANAGER, "TableManager.startPartitionAndStartClient"),
          Source(_IGNITE, _TABLE_ERA,
                 "modules/table/src/main/java/org/apache/ignite/internal/table/distributed/"
                 "PartitionReplicatorNodeRecovery.java",
                 "PartitionReplicatorNodeRecovery.performGroupRecovery"),
          Source(_IGNITE, "97c531227eb", _TABLE_MANAGER,
                 "TableManager.handleChangePendingAssignmentEvent"))),
    Rule("ig-no-sequence-token",
         "before the raft sequence token (55114300509, 2025-11): changePeersAndLearnersAsync "
         "carries no token, so nothing is ESTALE and a configuration with the same peers is "
         "the current one whatever revision asked for it (the callback fires again, no entry "
         "is appended); a stale pending event is told by a linearizable read of pending "
         "before the change (\"Do not change peers of the raft group if this is a stale "
         "event\")",
         "the sequence token of the current source (JRaft's Configuration with "
         "sequenceToken): the pending's revision rides on the change, a lower one is ESTALE, "
         "and equal peers with a new token are a new change",
         (Source(_IGNITE, _TABLE_ERA, _NODE_IMPL, "NodeImpl.changePeersAndLearnersAsync"),
          Source(_IGNITE, _TABLE_ERA, _NODE_IMPL, "NodeImpl.unsafeRegisterConfChange"),
          Source(_IGNITE, _TABLE_ERA, _TABLE_MANAGER,
                 "TableManager.sendChangePeersAndLearnersRequest"),
          Source(_IGNITE, _ZONE_ERA, _NODE_IMPL, "NodeImpl.changePeersAndLearnersAsync"))),
)

FOLLOWER, CANDIDATE, LEADER = "follower", "candidate", "leader"

#: what a metastore request is for: "restart", "elected", "switch", "reentry", or
#: ("removal", node) for the removal of `node` (a pair, so that renaming nodes renames it)
Task = str | tuple[str, str]


# --- messages ------------------------------------------------------------------------------------


@message
class Invoke(NamedTuple):
    op: Task
    iif: Iif
    #: False for a fire-and-forget invoke (the trigger): its result is not awaited
    answer: bool = True


@message
class Invoked(NamedTuple):
    op: Task
    label: str
    changed: bool


@message
class Read(NamedTuple):
    op: Task
    keys: tuple[str, ...]


@message
class ReadReply(NamedTuple):
    op: Task
    entries: tuple[Entry, ...]


@message
class Watch(NamedTuple):
    """The changes of one revision, to every node in revision order, with the store at that
    revision: the node's local copy of the metastore when it handles the event ("read stable
    locally at the event revision", as the pending handler does)."""

    changes: tuple[Entry, ...]
    store: Store


@message
class RequestVote(NamedTuple):
    term: int
    last_term: int
    last_index: int


@message
class Vote(NamedTuple):
    term: int
    granted: bool


@message
class PreVote(NamedTuple):
    """JRaft's pre-vote request (``preVote``): the term the node would stand for, its term
    left as it is."""

    term: int
    last_term: int
    last_index: int


@message
class PreVoteReply(NamedTuple):
    """The answer to a pre-vote: the voter's term, and the term of the node that asked."""

    term: int
    granted: bool
    asked: int


@message
class AppendConf(NamedTuple):
    """The leader's log (configuration entries only) and commit index."""

    term: int
    log: tuple[Conf, ...]
    commit: int
    #: the leader holds the partition's data (a catch-up brings it to the follower)
    data: bool


@message
class Appended(NamedTuple):
    term: int
    index: int


@message
class HasData(NamedTuple):
    """``HasDataRequest`` of the restart poll."""


@message
class HasDataReply(NamedTuple):
    has_data: bool


@message
class Disappeared(NamedTuple):
    """The physical topology reports that `node` left (``onDisappeared``)."""

    node: str


# --- states -------------------------------------------------------------------------------------


class Conf(NamedTuple):
    """A configuration entry of the raft log: `peers`, with `old` while it is a joint entry, and
    the sequence token of the change (the pending's revision)."""

    term: int
    peers: Nodes
    old: Nodes | None
    token: int


class Raft(NamedTuple):
    term: int
    voted: str | None
    role: str
    leader: str | None
    log: tuple[Conf, ...]
    commit: int
    votes: Nodes = frozenset()
    #: the leader's acknowledgements: (member, log length it holds)
    acks: frozenset[tuple[str, int]] = frozenset()
    #: a change asked for while another ran (EBUSY, retried): (peers, token)
    want: tuple[Nodes, int] | None = None
    #: the pre-vote round of a follower whose election timer fired (with `pre_vote`): the
    #: nodes that granted it, itself included; None outside a round
    prevotes: Nodes | None = None

    @property
    def last(self) -> Conf:
        return self.log[-1]

    def quorum(self, voters: Nodes) -> bool:
        """Do `voters` make a majority of the latest configuration (of both halves of a joint
        entry, committed or not: JRaft's configuration is the last one in the log)?"""
        conf = self.last
        return _majority(voters, conf.peers) and (conf.old is None
                                                  or _majority(voters, conf.old))

    @property
    def members(self) -> Nodes:
        """The peers of the latest configuration, and of its old half while it is joint."""
        conf = self.last
        return conf.peers if conf.old is None else conf.peers | conf.old


class Member(NamedTuple):
    """A node of the cluster, for the one partition."""

    data: bool
    raft: Raft | None
    #: the restart handler: None, "read", or the poll (asked, answered with data, answered empty)
    poll: tuple[Nodes, Nodes, Nodes] | str | None = None
    #: ``startPeerRemoval`` loops in progress: (node to remove, "read" | "invoke")
    removals: frozenset[tuple[str, str]] = frozenset()
    #: ``doStableKeySwitch`` in progress: (applied peers, "read" | "invoke")
    switch: tuple[Nodes, str] | None = None
    #: the new leader's read of pending (``onLeaderElected``)
    elected: bool = False
    #: the single-planned variant's reentry: the assignments still to plan
    planned_reentry: tuple[Nodes, ...] = ()
    #: the restart poll is that of a member of pending outside stable (``ig-table-reentry``):
    #: the peers it counts are stable's alone
    outside: bool = False
    #: ``ig-no-sequence-token``: the revisions of the pending events whose linearizable
    #: re-read of pending is on its way, oldest first
    checks: tuple[int, ...] = ()


def _majority(voters: Nodes, peers: Nodes) -> bool:
    return len(voters & peers) * 2 > len(peers)


def _sorted(nodes: Iterable[str]) -> tuple[str, ...]:
    return tuple(sorted(nodes))


class _Out:
    """What one handler call does: the state it leaves, messages, events."""

    __slots__ = ("events", "node", "sends", "st")

    def __init__(self, node: str, st: Member) -> None:
        self.node = node
        self.st = st
        self.sends: list[tuple[str, Hashable]] = []
        self.events: list[Event] = []

    def step(self) -> Step:
        return Step(self.st, tuple(self.sends), tuple(self.events))

    def raft(self, **changes: object) -> None:
        assert self.st.raft is not None
        self.st = self.st._replace(raft=self.st.raft._replace(**changes))


class IgniteRebalance(HeartbeatProtocol):
    """One partition of an in-memory table on `nodes` members (all of them data nodes and peers
    at the start, the first one leader), `spares` further running nodes, and the metastore.

    Raft's election timeouts are the heartbeat failure detector (refimpl/failure_detector.py):
    a follower watches its leader (`monitored`), a leader heartbeats every node."""

    name = "ignite-rebalance"

    def __init__(self, nodes: int = 3, spares: int = 1, replicas: int = 3,
                 variant: str = "fixed", persistent: bool = False,
                 on_disappeared: bool = False, max_term: int = 4,
                 rules: Iterable[str] = (), pre_vote: bool = False,
                 free_ranking: bool = False, spare_data_nodes: int = 0) -> None:
        if variant not in VARIANT_TABLE:
            raise ValueError(f"unknown variant {variant!r}")
        self.variant = variant
        #: the rules this instance follows: a release profile's (`RULE_TABLE`) and the variant
        self.rules = check_rules("ignite", (*rules, variant), RULE_TABLE, VARIANT_TABLE)
        self.members = tuple(chr(ord("A") + i) for i in range(nodes + spares))
        if spare_data_nodes and not (free_ranking and spare_data_nodes <= spares
                                     and nodes == replicas):
            raise ValueError("spare data nodes need the free ranking, as many spares, and as "
                             "many nodes as replicas (the ranking puts the nodes first)")
        #: the data nodes at the start: the partition's holders, and `spare_data_nodes` spares
        #: a ranking puts after them (a zone of more nodes than replicas)
        self.initial_data_nodes = frozenset(self.members[:nodes + spare_data_nodes])
        self.nodes = (*self.members, METASTORE)
        self.replicas = replicas
        self.persistent = persistent
        self.on_disappeared = on_disappeared
        self.max_term = max_term
        #: JRaft's pre-vote as a round of its own, not merged into RequestVote (`on_suspect`)
        self.pre_vote = pre_vote
        #: the rendezvous ranking left free: Ignite ranks the nodes by a hash of their names,
        #: which a log's names and the model's do not share, so a baseline change chooses the
        #: calculated assignments of its new data nodes among those some ranking of the nodes
        #: gives, consistently with its earlier choices (`admin_requests`), where the model's
        #: own hash (`calculate_assignments`) fixes them otherwise
        self.free_ranking = free_ranking
        stable = calculate_assignments(self.initial_data_nodes, PARTITION, replicas)
        entries = (Entry(DATA_NODES, self.initial_data_nodes, Rev(1)),)
        if spare_data_nodes:
            stable = frozenset(self.members[:nodes])
            entries += (Entry(CHOSEN, frozenset({(self.initial_data_nodes, stable)}), Rev(1)),)
        self.initial_store = Store((*entries, Entry(STABLE, stable, Rev(1))), Rev(1))
        self.initial_stable = stable
        self.leader0 = min(stable)
        if replicas >= len(self.members):
            # every data node is assigned whatever its name: the followers of the first group
            # play the same role, and so do the spares
            self.interchangeable = (stable - {self.leader0},
                                    frozenset(self.members) - self.initial_data_nodes)

    # -- initial states -----------------------------------------------------------------------

    def initial(self, node: NodeId) -> Hashable | None:
        if node == METASTORE:
            return self.initial_store
        stable = self.initial_stable
        raft = None
        if node in stable:
            leader = self.leader0
            raft = Raft(1, leader, LEADER if node == leader else FOLLOWER, leader,
                        (Conf(0, stable, None, 0),), 1,
                        acks=frozenset((m, 1) for m in stable) if node == leader else frozenset())
        return Member(node in stable, raft)

    def initial_events(self, node: NodeId, state: Hashable) -> tuple[Event, ...]:
        if node == METASTORE:
            return tuple(self._changed(METASTORE, e) for e in self.initial_store.entries
                         if e.key != CHOSEN)
        st = cast(Member, state)
        if st.raft is None:
            return ()
        peers = _sorted(self.initial_stable)
        out: list[Event] = [ev.RaftStarted(member=node, peers=peers, reason="start")]
        if node == self.leader0:
            # the first election, as its leader saw it: every peer's vote, then its win
            out.extend(ev.RaftVote(member=m, term=1, candidate=node) for m in peers)
            out.append(ev.RaftLeader(member=node, term=1, votes=peers, peers=peers))
        return tuple(out)

    @property
    def channels(self) -> Channels:  # type: ignore[override]
        """Raft's messages travel over ordered connections (a reordered one is a fault); the
        metastore's are reliable (`is_reliable`); some invokes and watch events are dead
        (`is_dead`)."""
        return Channels(fifo=True, reliable=self.is_reliable, dead=self.is_dead)

    def is_reliable(self, src: NodeId, dst: NodeId, msg: Hashable) -> bool:
        """The metastore, a replicated service abstracted as one linearizable node."""
        return src == METASTORE or dst == METASTORE

    def is_dead(self, node: NodeId, state: Hashable, src: NodeId, msg: Hashable) -> bool:
        """A fire-and-forget invoke that can never write (`_never_writes`: every branch needs
        the change trigger below a revision it has reached, or a key at a revision it has left),
        whose answer nobody awaits. A watch event no handler of the node reacts to, whatever
        the node's state (`_inert`)."""
        if type(msg) is Watch:
            return node != METASTORE and self._inert(node, cast(Watch, msg))
        if node != METASTORE or type(msg) is not Invoke:
            return False
        call = cast(Invoke, msg)
        if call.answer:
            return False
        return _never_writes(call.iif, cast(Store, state))

    # -- the metastore ------------------------------------------------------------------------

    def _metastore(self, store: Store, src: str, msg: Hashable) -> Step:
        if type(msg) is Read:
            read = cast(Read, msg)
            entries = tuple(store.get(k) or Entry(k, None, 0) for k in read.keys)
            chosen = store.get(CHOSEN)
            if chosen is not None:
                entries += (chosen,)
            return Step(store, ((src, ReadReply(read.op, entries)),))
        if type(msg) is not Invoke:
            return Step(store)
        call = cast(Invoke, msg)
        after, label, changes = invoke(store, call.iif)
        sends: list[tuple[str, Hashable]] = []
        if call.answer:
            sends.append((src, Invoked(call.op, label, bool(changes))))
        if not changes:
            return Step(store, tuple(sends))
        shown = tuple(c for c in changes if c.key != CHOSEN)
        events: list[Event] = [ev.MetastoreInvoke(
            member=src, keys=tuple(c.key for c in shown), condition=label, ok=True,
            revision=after.revision, expected=tuple(sorted(_revision_guards(call.iif))))]
        events.extend(self._changed(src, c) for c in shown)
        sends.extend((m, Watch(changes, after)) for m in self.members)
        return Step(after, tuple(sends), tuple(events))

    @staticmethod
    def _changed(member: str, e: Entry) -> ev.AssignmentsChanged:
        if e.key == TRIGGER:
            return ev.AssignmentsChanged(member=member, partition=PARTITION, key=e.key, nodes=(),
                                         revision=e.rev, removed=e.value is None,
                                         value=cast(int | None, e.value))
        return ev.AssignmentsChanged(member=member, partition=PARTITION, key=e.key,
                                     nodes=_sorted(cast(Nodes, e.value or ())),
                                     revision=e.rev, removed=e.value is None)

    def admin_requests(self, node: NodeId, state: Hashable) -> Iterable[Hashable]:
        """Baseline changes, made at the metastore: a running node joins the data nodes or one
        leaves them (never the last)."""
        if node != METASTORE:
            return ()
        store = cast(Store, state)
        data = cast(Nodes, store.value(DATA_NODES))
        out: list[Hashable] = [("baseline-add", m) for m in self.members if m not in data]
        if len(data) > 1:
            out.extend(("baseline-remove", m) for m in sorted(data))
        if not self.free_ranking:
            return out
        chosen = cast(frozenset[tuple[Nodes, Nodes]], store.value(CHOSEN) or frozenset())
        free: list[Hashable] = []
        for kind, who in cast(list[tuple[str, str]], out):
            new = data | {who} if kind == "baseline-add" else data - {who}
            if len(new) <= self.replicas or any(nodes == new for nodes, _ in chosen):
                free.append((kind, who))
                continue
            free.extend((kind, who, target) for target in _targets(new, self.replicas, chosen,
                                                                    self.members))
        return free

    def on_admin(self, node: NodeId, state: Hashable, request: Hashable) -> Step:
        store = cast(Store, state)
        kind, who = cast(tuple[str, str], request[:2])  # type: ignore[index]
        data = cast(Nodes, store.value(DATA_NODES))
        new = data | {who} if kind == "baseline-add" else data - {who}
        puts: tuple[Op, ...] = (Put(DATA_NODES, new),)
        if len(cast(tuple[str, ...], request)) == 3:  # the assignments it chose (free ranking)
            chosen = cast(frozenset[tuple[Nodes, Nodes]], store.value(CHOSEN) or frozenset())
            target = cast(tuple[str, str, Nodes], request)[2]
            puts += (Put(CHOSEN, chosen | {(new, target)}),)
        step = self._metastore(store, "operator", Invoke("baseline", Iif(All(()), puts)))
        return Step(step.state, step.sends[1:], step.events)  # no answer to the operator

    # -- inputs -------------------------------------------------------------------------------

    def on_message(self, node: NodeId, state: Hashable, src: NodeId, msg: Hashable) -> Step:
        if node == METASTORE:
            return self._metastore(cast(Store, state), src, msg)
        out = _Out(node, cast(Member, state))
        handler = self._HANDLERS.get(type(msg).__name__)
        if handler is not None:
            handler(self, out, src, msg)
        return out.step()

    def on_restart(self, node: NodeId, state: Hashable) -> Step | None:
        """The node stops and starts again. In-memory storage loses the data and the raft
        meta (term, vote, log); persistent storage keeps both and starts raft normally."""
        if node == METASTORE:
            return None
        st = cast(Member, state)
        out = _Out(node, st._replace(poll=None, removals=frozenset(), switch=None, elected=False,
                                     planned_reentry=(), outside=False, checks=()))
        out.events.append(ev.NodeRestarted(member=node, in_memory=not self.persistent))
        if self.persistent:
            if st.raft is not None:
                out.raft(role=FOLLOWER, leader=None, votes=frozenset(), acks=frozenset(),
                         want=None, prevotes=None)
                if "mutant-forget-voted-for" in self.rules:
                    out.raft(voted=None)
                out.events.append(ev.RaftStarted(member=node, peers=_sorted(st.raft.members),
                                                 reason="start"))
            return out.step()
        out.st = out.st._replace(data=False, raft=None)
        if "ig-restart-keeps-peer" in self.rules and st.raft is not None:
            self._start_raft(out, st.raft.last.peers, "start")  # its group, its vote forgotten
            return out.step()
        out.st = out.st._replace(poll="read")
        out.sends.append((METASTORE, Read("restart", (STABLE, PENDING, DATA_NODES))))
        if self.on_disappeared:
            out.sends.extend((m, Disappeared(node)) for m in self.members if m != node)
        return out.step()

    # -- failure detection: election timeouts ---------------------------------------------------

    def monitored(self, node: NodeId, state: Hashable) -> Iterable[NodeId]:
        """A follower watches its leader; a node without a leader (or a candidate) times out on
        its own, while its term may still grow within the scope."""
        if node == METASTORE:
            return ()
        raft = cast(Member, state).raft
        if raft is None or raft.role == LEADER or raft.term >= self.max_term:
            return ()
        if node not in raft.members:
            return ()
        if raft.role == FOLLOWER and raft.leader is not None and raft.leader != node:
            return (raft.leader,)
        return (node,)

    def suspicions(self, node: NodeId, state: Hashable,
                   system: SystemView) -> Iterator[Suspicion]:
        """The heartbeat detector's (refimpl/failure_detector.py), and with `pre_vote` one rule
        more: a node's election timer is long next to message delays, so during a pre-vote
        round it fires again only once no message of the node to a peer is in flight (its
        pre-votes among them); earlier, it fires early (a false suspicion). Without it, rounds
        refused by a leader's lease would fill the channels for ever."""
        for verdict in super().suspicions(node, state, system):
            if self.pre_vote and verdict.justified and verdict.suspect == node:
                raft = cast(Member, state).raft
                if raft is not None and raft.prevotes is not None and any(
                        system.in_flight_between(node, m) for m in raft.members if m != node):
                    yield Suspicion(node, FALSE, False)
                    continue
            yield verdict

    def heartbeat_targets(self, node: NodeId, state: Hashable) -> frozenset[NodeId]:
        """A leader keeps every node's election timer from firing: JRaft's pre-vote and leader
        stickiness stop a node that was removed without hearing of it (and so gets no more
        heartbeats) from disrupting the group, which this abstracts."""
        if node == METASTORE:
            return frozenset()
        raft = cast(Member, state).raft
        if raft is None or raft.role != LEADER:
            return frozenset()
        return frozenset(self.members) - {node}

    def on_suspect(self, node: NodeId, state: Hashable, suspect: NodeId, reason: str) -> Step:
        """A follower stops hearing from its leader: the leader's lease ends, and the follower
        forgets it (it grants votes from then on, see `_on_request_vote`). Its own election
        timer, randomized in JRaft, fires in a later step: a new term, a vote for itself,
        RequestVote to the peers. The two are steps of their own because the followers' leases
        end together (the leader's last heartbeat) while their timers do not: one follower
        stands for election while the other, its lease over, votes for it, and the leader
        changes at the next term (one step for both would leave only the split vote).

        Both fire, as the failure detector's justified suspicions, only once nothing is in flight
        to the node's leader or to the node itself (refimpl/failure_detector.py): a lease ends
        only when its leader is gone, and a timer fires only when no answer is on its way. So
        two candidates stand in one term only when one refused the other on a lease that ended
        since, and no deposed leader lives on. Each false suspicion (the `suspicions` budget,
        ``--early-timeouts``) lifts that once: a lease that ends while its leader lives, a
        timer that fires while messages to the node are in flight.

        The merged request (RequestVote, `_on_request_vote`) makes the node a candidate of the
        next term at once; JRaft (``handleElectionTimeout``, ``preVote``) keeps its term until
        a quorum granted the pre-vote. With `pre_vote`, so does the node here
        (`_start_pre_vote`)."""
        out = _Out(node, cast(Member, state))
        raft = out.st.raft
        if raft is None or raft.role == LEADER or raft.term >= self.max_term:
            return out.step()
        if raft.role == FOLLOWER and raft.leader is not None and raft.leader != node:
            out.raft(leader=None)
            return out.step()
        if self.pre_vote:
            self._start_pre_vote(out)
        else:
            self._elect(out)
        return out.step()

    def _start_pre_vote(self, out: _Out) -> None:
        """``handleElectionTimeout`` then ``preVote`` (a candidate's ``handleVoteTimeout``
        steps down first, in its term, as JRaft's default ``stepDownWhenVoteTimedout``): ask
        the peers whether they would vote for the next term, the node's own term unchanged."""
        raft = cast(Raft, out.st.raft)
        node = out.node
        out.raft(role=FOLLOWER, leader=None, votes=frozenset(), acks=frozenset(), want=None,
                 prevotes=frozenset({node}))
        request = PreVote(raft.term + 1, raft.last.term, len(raft.log))
        out.sends.extend((m, request) for m in sorted(raft.members - {node}))
        self._maybe_stand(out)

    def _maybe_stand(self, out: _Out) -> None:
        """``handlePreVoteResponse``: a quorum of pre-votes (of both halves of a joint
        configuration, as the vote's) and the node stands (``electSelf``)."""
        raft = cast(Raft, out.st.raft)
        if raft.prevotes is not None and self._ballot(raft, raft.prevotes):
            self._elect(out)

    def _on_pre_vote(self, out: _Out, src: str, msg: PreVote) -> None:
        """``handlePreVoteRequest``: granted to a candidate of the voter's configuration, while
        no leader's lease holds at the voter, for a term not below its own, with a log at
        least as up to date; the voter changes nothing."""
        raft = out.st.raft
        if raft is None:
            return
        granted = (src in raft.members and raft.leader is None and msg.term >= raft.term
                   and (msg.last_term, msg.last_index) >= (raft.last.term, len(raft.log)))
        out.sends.append((src, PreVoteReply(raft.term, granted, msg.term - 1)))

    def _on_pre_vote_reply(self, out: _Out, src: str, msg: PreVoteReply) -> None:
        raft = out.st.raft
        if (raft is None or raft.role != FOLLOWER or raft.prevotes is None
                or msg.asked != raft.term):
            return
        if msg.term > raft.term:
            self._step_down(out, msg.term)
            return
        if msg.granted:
            out.raft(prevotes=raft.prevotes | {src})
            self._maybe_stand(out)

    def _elect(self, out: _Out) -> None:
        raft = cast(Raft, out.st.raft)
        node = out.node
        term = raft.term + 1
        out.raft(term=term, voted=node, role=CANDIDATE, leader=None, votes=frozenset({node}),
                 acks=frozenset(), want=None, prevotes=None)
        out.events.append(ev.RaftVote(member=node, term=term, candidate=node))
        last = len(raft.log)
        request = RequestVote(term, raft.last.term, last)
        out.sends.extend((m, request) for m in sorted(raft.members - {node}))
        self._maybe_win(out)

    # -- raft -------------------------------------------------------------------------------------

    def _start_raft(self, out: _Out, peers: Nodes, reason: str) -> None:
        """Start a raft node with empty meta and `peers` as its configuration."""
        out.st = out.st._replace(raft=Raft(0, None, FOLLOWER, None, (Conf(0, peers, None, 0),), 1),
                                 poll=None)
        out.events.append(ev.RaftStarted(member=out.node, peers=_sorted(peers), reason=reason))

    def _on_request_vote(self, out: _Out, src: str, msg: RequestVote) -> None:
        """RequestVote, standing for JRaft's pre-vote and vote together: a node refuses a
        candidate outside its configuration (either half of a joint entry), which is
        ``handlePreVoteRequest``'s first check ("Node {} ignore PreVoteRequest from {} as it is
        not in conf <{}>.", JRaft's `NodeImpl`), and one whose leader's lease holds, then grants
        one vote per term to a candidate whose log is at least as up to date as its own. The one
        JRaft run the merge leaves out: a node that refused the pre-vote grants the vote after
        it, in place of a node that granted the pre-vote and then refuses the vote.

        The merge also makes the candidate take the next term before any node granted it
        anything, where JRaft's ``preVote`` leaves the term as it is until a quorum did: a node
        refused on its peers' leases here holds a term above theirs, and with it two candidates
        can stand in one term after a restart (at the default scope) and a live leader is
        deposed by one early timeout. With `pre_vote` the two are separate rounds
        (`_start_pre_vote`, `_on_pre_vote`, `_on_vote_request`); which verdicts depend on the
        merge, tests/protocols/test_ignite_elections.py says."""
        raft = out.st.raft
        if raft is None:
            return
        if self.pre_vote:
            self._on_vote_request(out, src, msg)
            return
        if src not in raft.members or (msg.term > raft.term and raft.leader is not None):
            # the pre-vote's refusals, the voter's term unchanged: a candidate outside its
            # configuration, or a higher term while its leader's lease holds (leader
            # stickiness: a removed peer that never heard of its removal cannot disrupt)
            out.sends.append((src, Vote(raft.term, False)))
            return
        if msg.term > raft.term:
            self._step_down(out, msg.term)
            raft = cast(Raft, out.st.raft)
        grant = (msg.term == raft.term
                 and (raft.voted in (None, src) or "mutant-vote-twice" in self.rules)
                 and (msg.last_term, msg.last_index) >= (raft.last.term, len(raft.log)))
        if grant:
            out.raft(voted=src)
            out.events.append(ev.RaftVote(member=out.node, term=msg.term, candidate=src))
        out.sends.append((src, Vote(raft.term, grant)))

    def _on_vote_request(self, out: _Out, src: str, msg: RequestVote) -> None:
        """``handleRequestVoteRequest``, the vote after a pre-vote round (`pre_vote`): no
        configuration or lease check (the pre-vote made them); a request of an older term is
        refused, a newer term is taken (``stepDown``), and the vote goes to the first candidate
        of the term whose log is at least as up to date; a node already following the candidate
        in the term answers with what it voted."""
        raft = cast(Raft, out.st.raft)
        if msg.term < raft.term:
            out.sends.append((src, Vote(raft.term, False)))
            return
        if msg.term > raft.term:
            self._step_down(out, msg.term)
        elif src == raft.leader:
            out.sends.append((src, Vote(raft.term, raft.voted == src)))
            return
        raft = cast(Raft, out.st.raft)
        grant = ((raft.voted in (None, src) or "mutant-vote-twice" in self.rules)
                 and (msg.last_term, msg.last_index) >= (raft.last.term, len(raft.log)))
        if grant:
            out.raft(voted=src)
            out.events.append(ev.RaftVote(member=out.node, term=msg.term, candidate=src))
        out.sends.append((src, Vote(raft.term, grant)))

    def _answered(self, out: _Out, term: int, role: str) -> Raft | None:
        """The node's raft if an answer from `term` is for its current term and `role`; an
        answer from a newer term makes it step down."""
        raft = out.st.raft
        if raft is None:
            return None
        if term > raft.term:
            self._step_down(out, term)
            return None
        return raft if raft.role == role and term == raft.term else None

    def _on_vote(self, out: _Out, src: str, msg: Vote) -> None:
        """``handleRequestVoteResponse``: a candidate counts a granted vote of its own term; an
        answer of a newer term makes it step down, one of an older term is stale."""
        raft = out.st.raft
        if ("mutant-count-stale-vote" in self.rules and raft is not None
                and raft.role == CANDIDATE and msg.term < raft.term):
            pass  # the mutant: a grant to its earlier candidacy counts in this one
        else:
            raft = self._answered(out, msg.term, CANDIDATE)
        if raft is None or not (msg.granted or "mutant-count-refused-vote" in self.rules):
            return
        out.raft(votes=raft.votes | {src})
        self._maybe_win(out)

    def _maybe_win(self, out: _Out) -> None:
        """``becomeLeader`` once the votes make a quorum of the candidate's configuration, of
        both halves of a joint one (JRaft's ``voteCtx.init(conf, oldConf)``)."""
        raft = cast(Raft, out.st.raft)
        if raft.role != CANDIDATE or not self._ballot(raft, raft.votes):
            return
        node = out.node
        conf = raft.last
        out.raft(role=LEADER, leader=node, acks=frozenset({(node, len(raft.log))}))
        out.events.append(ev.RaftLeader(member=node, term=raft.term, votes=_sorted(raft.votes),
                                        peers=_sorted(conf.peers),
                                        old=_sorted(conf.old or ())))
        if raft.commit < len(raft.log):
            # becomeLeader's ConfigurationCtx.flush: the configuration again, in the new term,
            # so that nothing of an older term commits by counting replicas alone
            log = (*raft.log, conf._replace(term=raft.term))
            out.raft(log=log, acks=frozenset({(node, len(log))}))
            self._broadcast(out)
            self._maybe_commit(out)
        elif conf.old is not None:
            self._stage_stable(out)  # a committed joint configuration goes on to STAGE_STABLE
        else:
            self._broadcast(out)
        # onLeaderElected: a linearizable read of pending re-drives the rebalance
        out.st = out.st._replace(elected=True)
        out.sends.append((METASTORE, Read("elected", (PENDING,))))

    def _ballot(self, raft: Raft, voters: Nodes) -> bool:
        """Is a ballot of `voters` (votes or pre-votes) granted: a majority of the node's
        configuration, and of its old half while it is joint (JRaft's ``Ballot.init(conf,
        oldConf)``)?"""
        if "mutant-joint-new-quorum" in self.rules:
            return _majority(voters, raft.last.peers)
        return raft.quorum(voters)

    def _step_down(self, out: _Out, term: int) -> None:
        out.raft(term=term, voted=None, role=FOLLOWER, leader=None, votes=frozenset(),
                 acks=frozenset(), want=None, prevotes=None)

    def _broadcast(self, out: _Out) -> None:
        raft = cast(Raft, out.st.raft)
        msg = AppendConf(raft.term, raft.log, raft.commit, out.st.data)
        out.sends.extend((m, msg) for m in sorted(raft.members - {out.node}))

    def _on_append(self, out: _Out, src: str, msg: AppendConf) -> None:
        raft = out.st.raft
        if raft is None:  # no raft node for the group: the leader's replicator will retry
            return
        if msg.term < raft.term and "mutant-accept-stale-append" not in self.rules:
            out.sends.append((src, Appended(raft.term, -1)))  # a stale leader
            return
        voted = raft.voted if msg.term == raft.term else None
        out.raft(term=msg.term, voted=voted, role=FOLLOWER, leader=src, votes=frozenset(),
                 acks=frozenset(), want=None, prevotes=None, log=msg.log,
                 commit=min(len(msg.log), max(raft.commit, msg.commit)))
        if msg.data and not out.st.data:
            out.st = out.st._replace(data=True)
        out.sends.append((src, Appended(msg.term, len(msg.log))))

    def _on_appended(self, out: _Out, src: str, msg: Appended) -> None:
        raft = self._answered(out, msg.term, LEADER)
        if raft is None or msg.index < 0:
            return
        acks = frozenset((m, i) for m, i in raft.acks if m != src) | {(src, msg.index)}
        out.raft(acks=acks)
        self._maybe_commit(out)

    def _maybe_commit(self, out: _Out) -> None:
        raft = cast(Raft, out.st.raft)
        last = len(raft.log)
        if raft.commit >= last:
            return
        holders = frozenset(m for m, i in raft.acks if i >= last)
        conf = raft.last
        if not (_majority(holders, conf.peers) and (conf.old is None
                                                     or _majority(holders, conf.old))):
            return
        out.raft(commit=last)
        if conf.old is not None:
            self._stage_stable(out)
            return
        # STAGE_STABLE done, onNewPeersConfigurationApplied: the stable switch; a leader
        # that is no longer a peer steps down
        self._start_switch(out, conf.peers)
        if out.node not in conf.peers:
            out.raft(role=FOLLOWER, leader=None, acks=frozenset())
            return
        want = raft.want
        if want is not None:
            out.raft(want=None)
            self._change_peers(out, *want)

    def _stage_stable(self, out: _Out) -> None:
        """The joint entry is committed (``STAGE_JOINT`` done): the leader appends the new
        configuration alone (``STAGE_STABLE``), which commits on a majority of the new peers;
        only then is the change done."""
        raft = cast(Raft, out.st.raft)
        conf = raft.last
        log = (*raft.log, Conf(raft.term, conf.peers, None, conf.token))
        out.raft(log=log, acks=frozenset({(out.node, len(log))}))
        self._broadcast(out)
        self._maybe_commit(out)

    def _change_peers(self, out: _Out, peers: Nodes, token: int) -> None:
        """``changePeersAndLearnersAsync(peers, term, token)`` at the leader. Without the
        sequence token (``ig-no-sequence-token``) there is no ESTALE, and a configuration with
        the same peers is the same configuration whatever the token: every entry carries 0."""
        raft = out.st.raft
        if raft is None or raft.role != LEADER:
            return  # EPERM: not the leader
        conf = raft.last
        if "ig-no-sequence-token" in self.rules:
            token = 0
        elif token < conf.token:
            return  # ESTALE
        if raft.commit < len(raft.log):
            out.raft(want=(peers, token))  # EBUSY: retried once the running change ends
            return
        if conf.peers == peers and conf.token == token and conf.old is None:
            self._start_switch(out, peers)  # the same configuration: the callback again
            return
        log = (*raft.log, Conf(raft.term, peers, conf.peers, token))
        out.raft(log=log, acks=frozenset({(out.node, len(log))}))
        out.events.append(ev.RaftPeersChanged(member=out.node, peers=_sorted(peers),
                                              term=raft.term))
        self._broadcast(out)
        self._maybe_commit(out)

    # -- watches -------------------------------------------------------------------------------

    def _on_watch(self, out: _Out, src: str, msg: Watch) -> None:
        view = msg.store
        for c in msg.changes:
            if c.key == DATA_NODES:
                self._trigger(out, view, cast(Nodes, c.value), c.rev)
            elif c.key == REDUCE and c.value:
                self._reduce_changed(out, view, cast(Nodes, c.value), c.rev)
            elif c.key == PENDING and c.value is not None:
                self._pending_changed(out, view, cast(Nodes, c.value), c.rev)
            elif c.key == STABLE and c.value is not None:
                self._stable_changed(out, view, cast(Nodes, c.value))

    @staticmethod
    def _inert(node: str, msg: Watch) -> bool:
        """No change of the event can make a handler act at `node`: only stable sets that name
        it (or whose pending at that revision names it), pending removals, and keys no watch
        handler reads. Data-node, switch.reduce and pending changes always may."""
        pending = cast(Nodes | None, msg.store.value(PENDING)) or frozenset()
        for c in msg.changes:
            if c.key in (DATA_NODES, REDUCE) and c.value:
                return False
            if c.key == PENDING and c.value is not None:
                return False
            if c.key == STABLE and c.value is not None and node not in cast(Nodes, c.value) \
                    and node not in pending:
                return False
        return True

    def _calc(self, view: Store) -> Nodes:
        return self._assign(cast(Nodes, view.value(DATA_NODES) or ()), view.value(CHOSEN))

    def _assign(self, data_nodes: Nodes, chosen: Hashable) -> Nodes:
        """The calculated assignments of `data_nodes`: as a baseline change chose them
        (`chosen`, the metastore's `CHOSEN`), else by the model's hash."""
        for nodes, target in cast(frozenset[tuple[Nodes, Nodes]], chosen or ()):
            if nodes == data_nodes:
                return target
        return calculate_assignments(data_nodes, PARTITION, self.replicas)

    def _guard(self, rev: int) -> Below | All:
        return All(()) if "ig-no-trigger-guard" in self.rules else Below(TRIGGER, rev)

    def _trigger(self, out: _Out, view: Store, data_nodes: Nodes, rev: int) -> None:
        """``updatePendingAssignmentsKeys``: one nested invoke guarded by the trigger."""
        target = self._assign(data_nodes, view.value(CHOSEN))
        iif = trigger_invoke(target, rev, cast(Nodes | None, view.value(STABLE)),
                             guarded="ig-no-trigger-guard" not in self.rules)
        out.sends.append((METASTORE, Invoke("trigger", iif, answer=False)))

    def _reduce_changed(self, out: _Out, view: Store, reduce: Nodes, rev: int) -> None:
        """``handleReduceChanged`` (design 001 "On assignments.switch.reduce change"), on
        every node as in the source. The invoke acts only while switch.reduce is still at the
        event's revision: the trigger alone lets a request whose reentry has finished (through
        switch.append, which leaves the trigger where it was) remove the node again (finding
        IGN-11, docs/findings.md; `ig-stale-reduce-event`)."""
        calc = self._calc(view)
        guard: Condition = self._guard(rev)
        # only the request of this event (the design's invoke in the variants of its hazards)
        if self.rules.isdisjoint(("ig-stale-reduce-event", "ig-no-trigger-guard")):
            guard = All((guard, RevisionIs(REDUCE, rev)))
        iif = Iif(All((guard, Absent(PENDING), Absent(STABLE))),
                  (Put(PENDING, calc - reduce), Put(STABLE, calc), Put(TRIGGER, rev)),
                  Iif(All((guard, Absent(PENDING))),
                      (Put(PENDING, calc - reduce), Put(TRIGGER, rev)), (),
                      "REDUCTION_STARTED", "REDUCTION_NOT_STARTED"),
                  "REDUCTION_STARTED_WITH_STABLE")
        out.sends.append((METASTORE, Invoke("reduce", iif, answer=False)))

    def _pending_changed(self, out: _Out, view: Store, pending: Nodes, rev: int) -> None:
        """The pending handler: start raft if joining; the leader changes peers."""
        st = out.st
        stable = cast(Nodes | None, view.value(STABLE)) or frozenset()
        if out.node in pending and out.node not in stable and st.raft is None:
            self._start_raft(out, stable, "joining")
            return
        if st.raft is not None and st.raft.role == LEADER:
            if "ig-no-sequence-token" in self.rules:
                # the table era's stale-event check: a linearizable read of pending, and the
                # change only if no newer pending was written since (no token to refuse it)
                out.st = out.st._replace(checks=(*st.checks, rev))
                out.sends.append((METASTORE, Read("pending", (PENDING,))))
                return
            self._change_peers(out, pending, rev)

    def _stable_changed(self, out: _Out, view: Store, stable: Nodes) -> None:
        """The stable handler: a node in neither stable nor pending stops its replica."""
        pending = cast(Nodes | None, view.value(PENDING)) or frozenset()
        if out.node not in stable and out.node not in pending and out.st.raft is not None:
            out.st = out.st._replace(raft=None, data=False)

    # -- metastore answers --------------------------------------------------------------------

    def _on_read_reply(self, out: _Out, src: str, msg: ReadReply) -> None:
        values = {e.key: e for e in msg.entries}
        op = msg.op
        if op == "restart" and out.st.poll == "read":
            self._restart_read(out, values)
        elif op == "elected" and out.st.elected:
            out.st = out.st._replace(elected=False)
            raft = out.st.raft
            pending = values[PENDING]
            if raft is None or raft.role != LEADER or pending.value is None:
                return
            peers = cast(Nodes, pending.value)
            if (raft.last.peers == peers and raft.last.old is None
                    and raft.commit >= len(raft.log)):
                self._start_switch(out, peers)
            else:
                self._change_peers(out, peers, pending.rev)
        elif type(op) is tuple:  # ("removal", node)
            who = op[1]
            if (who, "read") in out.st.removals:
                self._removal_invoke(out, who, values[REDUCE])
        elif op == "switch" and out.st.switch is not None and out.st.switch[1] == "read":
            self._switch_invoke(out, values)
        elif op == "pending" and out.st.checks:
            rev, rest = out.st.checks[0], out.st.checks[1:]
            out.st = out.st._replace(checks=rest)
            latest = values[PENDING]
            # "Do not change peers of the raft group if this is a stale event": the event's
            # revision below the latest pending's (a removed pending is newer still)
            if latest.value is not None and latest.rev == rev:
                self._change_peers(out, cast(Nodes, latest.value), rev)

    def _on_invoked(self, out: _Out, src: str, msg: Invoked) -> None:
        op = msg.op
        if type(op) is tuple:  # ("removal", node)
            who = op[1]
            if (who, "invoke") not in out.st.removals:
                return
            removals = out.st.removals - {(who, "invoke")}
            if msg.changed:
                out.st = out.st._replace(removals=removals)
                out.events.append(ev.ReductionRequested(member=out.node, node=who))
            else:  # another writer came first: read again (the retry loop)
                out.st = out.st._replace(removals=removals | {(who, "read")})
                out.sends.append((METASTORE, Read(op, (REDUCE,))))
        elif op == "switch" and out.st.switch is not None and out.st.switch[1] == "invoke":
            peers = out.st.switch[0]
            if msg.changed:
                out.st = out.st._replace(switch=None)
            else:  # "Rebalance keys changed": read again and recompute
                out.st = out.st._replace(switch=(peers, "read"))
                out.sends.append((METASTORE, Read("switch", _SWITCH_KEYS)))
        elif op == "reentry" and out.st.planned_reentry:
            # the reduction is on record (planned or pending without the node), as a removal
            # is once its switch.reduce CAS is answered: now the addition
            out.events.append(ev.ReductionRequested(member=out.node, node=out.node))
            self._planned_reentry_next(out)

    # -- the restart handler -------------------------------------------------------------------

    def _restart_read(self, out: _Out, values: dict[str, Entry]) -> None:
        """The restart handler's decision on the keys it read: a member of
        stable polls the other members of stable for data (or, alone in it, starts a full
        partition restart); any other node starts raft as a joining node if pending names it,
        and does nothing otherwise. Membership is the stable key's, which lags the raft
        configuration until the stable switch: a member of pending restarted after its
        acknowledgement was counted rejoins as well (finding IGN-16, docs/findings.md)."""
        node = out.node
        stable = cast(Nodes | None, values[STABLE].value) or frozenset()
        pending = cast(Nodes | None, values[PENDING].value) or frozenset()
        calc = self._assign(cast(Nodes | None, values[DATA_NODES].value) or frozenset(),
                            values[CHOSEN].value if CHOSEN in values else None)
        if node not in stable:
            out.st = out.st._replace(poll=None)
            if node in pending and "ig-table-reentry" in self.rules and stable:
                # the table era: the node's recovery starts the partition it finds in pending
                # with the old stable configuration, whose peers it polls as a member would
                out.st = out.st._replace(poll=(stable, frozenset(), frozenset()), outside=True)
                out.sends.extend((m, HasData()) for m in sorted(stable))
            elif node in pending:
                self._start_raft(out, stable, "joining")
            return
        others = stable - {node}
        if not others:
            self._start_raft(out, stable, "full-restart")
            return
        out.st = out.st._replace(poll=(others, frozenset(), frozenset()))
        if "ig-single-planned" in self.rules:
            out.st = out.st._replace(planned_reentry=(calc - {node}, calc))
        out.sends.extend((m, HasData()) for m in sorted(others))

    def _on_has_data(self, out: _Out, src: str, msg: HasData) -> None:
        out.sends.append((src, HasDataReply(out.st.data)))

    def _on_has_data_reply(self, out: _Out, src: str, msg: HasDataReply) -> None:
        poll = out.st.poll
        if not isinstance(poll, tuple) or src not in poll[0]:
            return
        asked, full, empty = poll
        full, empty = (full | {src}, empty) if msg.has_data else (full, empty | {src})
        out.st = out.st._replace(poll=(asked, full, empty))
        if full | empty == asked:
            self._poll_decide(out)

    def timers(self, node: NodeId, state: Hashable) -> Iterable[Hashable]:
        if node == METASTORE:
            return ()
        st = cast(Member, state)
        if isinstance(st.poll, tuple):
            return (HAS_DATA_TIMEOUT,)
        if st.raft is not None and st.raft.role == LEADER and self._unacked(st.raft):
            return (REPLICATE,)
        return ()

    def is_timeout(self, timer: Hashable) -> bool:
        return timer == HAS_DATA_TIMEOUT

    @property
    def timing(self) -> Timing:  # type: ignore[override]
        """The restart poll's 3 s timeout (design 001 "On in-memory partition restart") waits for
        its node's messages; the leader's replicators are periodic."""
        return Timing(timeout=self.is_timeout)

    def on_timer(self, node: NodeId, state: Hashable, timer: Hashable) -> Step:
        """The poll's 3 s timeout: peers that did not answer count as UNKNOWN. The
        leader's replicators: JRaft keeps one per peer, which sends the log again until the peer
        answers; a periodic task here, which the explorer fires when a resend would take effect
        (a peer that lost the log in flight to its restart and has started raft since)."""
        out = _Out(node, cast(Member, state))
        if timer == HAS_DATA_TIMEOUT and isinstance(out.st.poll, tuple):
            self._poll_decide(out)
        elif timer == REPLICATE and out.st.raft is not None and out.st.raft.role == LEADER:
            raft = out.st.raft
            msg = AppendConf(raft.term, raft.log, raft.commit, out.st.data)
            out.sends.extend((m, msg) for m in sorted(self._unacked(raft)))
        return out.step()

    @staticmethod
    def _unacked(raft: Raft) -> Nodes:
        """The leader's peers that have not acknowledged its whole log."""
        last = len(raft.log)
        done = {m for m, i in raft.acks if i >= last}
        return raft.members - done

    def _poll_decide(self, out: _Out) -> None:
        asked, full, empty = cast(tuple[Nodes, Nodes, Nodes], out.st.poll)
        outside = out.st.outside  # a member of pending outside stable: stable's peers alone
        peers = asked if outside else asked | {out.node}
        plans = out.st.planned_reentry
        out.st = out.st._replace(poll=None, planned_reentry=(), outside=False)
        if empty == asked:  # every peer is empty: a full partition restart
            # (outside stable, the node starts with stable's configuration, as it joins)
            self._start_raft(out, peers, "joining" if outside else "full-restart")
        elif len(full) >= len(peers) // 2 + 1:  # a majority has the data: leave, come back
            if "ig-single-planned" in self.rules:
                out.st = out.st._replace(planned_reentry=plans)
                self._planned_reentry_next(out)
            else:
                self._start_removal(out, out.node)
        # otherwise: no majority, nothing to do (design 001: "Do nothing")

    def _on_disappeared(self, out: _Out, src: str, msg: Disappeared) -> None:
        """``onDisappeared``: the leader asks for the removal of a peer that left."""
        raft = out.st.raft
        if raft is not None and raft.role == LEADER and msg.node in raft.members:
            self._start_removal(out, msg.node)

    def _start_removal(self, out: _Out, who: str) -> None:
        """``startPeerRemoval``: add `who` to switch.reduce in a read / CAS retry loop."""
        if any(w == who for w, _ in out.st.removals):
            return
        out.st = out.st._replace(removals=out.st.removals | {(who, "read")})
        out.sends.append((METASTORE, Read(("removal", who), (REDUCE,))))

    def _removal_invoke(self, out: _Out, who: str, reduce: Entry) -> None:
        out.st = out.st._replace(removals=(out.st.removals - {(who, "read")}) | {(who, "invoke")})
        if reduce.value is None:
            iif = Iif(Absent(REDUCE), (Put(REDUCE, frozenset({who})),))
        else:
            iif = Iif(RevisionIs(REDUCE, reduce.rev),
                      (Put(REDUCE, cast(Nodes, reduce.value) | {who}),))
        out.sends.append((METASTORE, Invoke(("removal", who), iif)))

    def _planned_reentry_next(self, out: _Out) -> None:
        """The single-planned variant: the reduction, then the addition that returns the node,
        each through the one planned key (pending when no rebalance runs)."""
        todo = out.st.planned_reentry
        if not todo:
            return
        out.st = out.st._replace(planned_reentry=todo[1:])
        iif = Iif(Exists(PENDING), (Put(PLANNED, todo[0]),), (Put(PENDING, todo[0]),),
                  "PLANNED_KEY_UPDATED", "PENDING_KEY_UPDATED")
        out.sends.append((METASTORE, Invoke("reentry", iif)))

    # -- rebalance done ------------------------------------------------------------------------

    def _start_switch(self, out: _Out, peers: Nodes) -> None:
        out.st = out.st._replace(switch=(peers, "read"))
        out.sends.append((METASTORE, Read("switch", _SWITCH_KEYS)))

    def _switch_invoke(self, out: _Out, values: dict[str, Entry]) -> None:
        """``doStableKeySwitch`` (design 001 "On rebalance done"): the design's set arithmetic
        and branches, guarded by the revisions read."""
        applied = cast(tuple[Nodes, str], out.st.switch)[0]
        pending = values[PENDING]
        if pending.value != applied:
            out.st = out.st._replace(switch=None)  # stale or foreign configuration
            return
        def nodes(key: str) -> Nodes:
            return cast(Nodes | None, values[key].value) or frozenset()
        stable, reduce, append = nodes(STABLE), nodes(REDUCE), nodes(APPEND)
        calc = self._assign(nodes(DATA_NODES), values[CHOSEN].value if CHOSEN in values else None)
        reduced = reduce - applied
        added = applied - stable
        new_reduce = reduce - reduced
        new_append = ((append | reduced) - added) & calc
        pending_reduction = applied - reduce
        pending_addition = (applied | reduced) & calc
        guarded = (STABLE, PENDING, REDUCE, APPEND)
        if "ig-switch-ignores-data-nodes" not in self.rules:
            guarded = (*guarded, DATA_NODES)  # calc must be current (docs/findings.md, IGN-6)
        guards: tuple[RevisionIs | Absent, ...] = tuple(
            RevisionIs(k, values[k].rev) for k in guarded)

        def put(key: str, value: Nodes) -> Op:
            return Put(key, value) if value else Remove(key)

        switch_keys = (put(REDUCE, new_reduce), put(APPEND, new_append))
        # the planned and finish branches: new_reduce and new_append are empty there; the design
        # clears switch.append, the fixed design switch.reduce as well (docs/findings.md, IGN-5)
        if "ig-source-keeps-append" in self.rules:
            last_keys: tuple[Op, ...] = ()
        elif "ig-design-keeps-reduce" in self.rules:
            last_keys = (put(APPEND, new_append),)
        else:
            last_keys = switch_keys
        if new_append:
            ops: tuple[Op, ...] = (Put(STABLE, applied), Put(PENDING, pending_addition),
                                   *switch_keys)
            label = "SWITCH_APPEND_SUCCESS"
        elif new_reduce:
            ops = (Put(STABLE, applied), Put(PENDING, pending_reduction), *switch_keys)
            label = "SWITCH_REDUCE_SUCCESS"
        elif values[PLANNED].value is not None:
            guards = (*guards, RevisionIs(PLANNED, values[PLANNED].rev))
            ops = (Put(STABLE, applied), Put(PENDING, nodes(PLANNED)), Remove(PLANNED),
                   *last_keys)
            label = "SCHEDULE_PENDING_REBALANCE_SUCCESS"
        else:
            guards = (*guards, Absent(PLANNED))
            ops = (Put(STABLE, applied), Remove(PENDING), *last_keys)
            label = "FINISH_REBALANCE_SUCCESS"
        out.st = out.st._replace(switch=(applied, "invoke"))
        out.sends.append((METASTORE, Invoke("switch", Iif(All(guards), ops, (), label,
                                                          "REBALANCE_KEYS_CHANGED"))))

    _HANDLERS: ClassVar[dict[str, Callable[..., None]]] = {
        "RequestVote": _on_request_vote,
        "Vote": _on_vote,
        "PreVote": _on_pre_vote,
        "PreVoteReply": _on_pre_vote_reply,
        "AppendConf": _on_append,
        "Appended": _on_appended,
        "Watch": _on_watch,
        "ReadReply": _on_read_reply,
        "Invoked": _on_invoked,
        "HasData": _on_has_data,
        "HasDataReply": _on_has_data_reply,
        "Disappeared": _on_disappeared,
    }

    # -- presentation --------------------------------------------------------------------------

    def describe(self, node: NodeId, state: Hashable) -> object:
        if node == METASTORE:
            store = cast(Store, state)
            return {e.key: _show(e.value) + f" @{int(e.rev)}" for e in store.entries} | {
                "revision": int(store.revision)}
        st = cast(Member, state)
        view: dict[str, object] = {"data": st.data}
        raft = st.raft
        if raft is None:
            view["raft"] = "stopped"
        else:
            conf = raft.last
            view["raft"] = (f"{raft.role} term {raft.term}"
                            + (f", voted {raft.voted}" if raft.voted else "")
                            + (f", leader {raft.leader}" if raft.leader else "")
                            + (f", pre-votes {_show(raft.prevotes)}"
                               if raft.prevotes is not None else ""))
            view["peers"] = _show(conf.peers) + (f" (joint with {_show(conf.old)})"
                                                 if conf.old is not None else "")
        for key in ("poll", "removals", "switch"):
            value = getattr(st, key)
            if value:
                view[key] = repr(value)
        return view

    def describe_message(self, msg: Hashable) -> str:
        kind = type(msg).__name__
        if kind == "Invoke":
            return f"Invoke({_task(cast(Invoke, msg).op)})"
        if kind == "Watch":
            return "Watch(" + ", ".join(f"{c.key}={_show(c.value)}@{int(c.rev)}"
                                        for c in cast(Watch, msg).changes) + ")"
        if kind == "AppendConf":
            m = cast(AppendConf, msg)
            return f"AppendConf(term {m.term}, peers {_show(m.log[-1].peers)}, commit {m.commit})"
        return repr(msg)


_SWITCH_KEYS = (STABLE, PENDING, PLANNED, REDUCE, APPEND, DATA_NODES)


def _targets(data_nodes: Nodes, replicas: int, chosen: frozenset[tuple[Nodes, Nodes]],
             members: Sequence[str]) -> list[Nodes]:
    """The calculated assignments `data_nodes` may have: the `replicas` best of them by some
    ranking of `members` that gives every earlier choice in `chosen` too (rendezvous hashing
    ranks every node once per partition)."""
    out: set[Nodes] = set()
    for ranking in permutations(members):
        def top(nodes: Nodes, rank: tuple[str, ...] = ranking) -> Nodes:
            return frozenset(sorted(nodes, key=rank.index)[:replicas])
        if all(top(nodes) == target for nodes, target in chosen):
            out.add(top(data_nodes))
    return sorted(out, key=sorted)


def trigger_invoke(target: Nodes, rev: int, zone_stable: Nodes | None,
                   guarded: bool = True) -> Iif:
    """The invoke of ``updatePendingAssignmentsKeys`` for an event at `rev`
    whose calculated assignments are `target`; `zone_stable` is the stable set the caller
    knows (the zone configuration's), which decides when the metastore has no stable key."""
    stamp = Put(TRIGGER, rev)
    is_new = zone_stable != target
    new = AnyOf((All((Exists(STABLE), ValueIsNot(STABLE, target))),
                 All((Absent(STABLE),)) if is_new else AnyOf(())))
    return Iif(Below(TRIGGER, rev) if guarded else All(()), Iif(
        All((Absent(PENDING), new)),
        (Put(PENDING, target), stamp),
        Iif(All((Exists(PENDING), ValueIsNot(PENDING, target))),
            (Put(PLANNED, target), stamp),
            Iif(ValueIs(PENDING, target), (Remove(PLANNED), stamp),
                Iif(Absent(PENDING), (Remove(PLANNED), stamp), (),
                    "PLANNED_KEY_REMOVED_EMPTY_PENDING", "ASSIGNMENT_NOT_UPDATED"),
                "PLANNED_KEY_REMOVED_EQUALS_PENDING"),
            "PLANNED_KEY_UPDATED"),
        "PENDING_KEY_UPDATED"), (), "triggered", "OUTDATED_UPDATE_RECEIVED")


def _task(op: Task) -> str:
    return op if isinstance(op, str) else ":".join(op)


def _show(value: object) -> str:
    if isinstance(value, frozenset) and all(type(v) is tuple for v in value):  # CHOSEN
        return "{" + ", ".join(sorted(f"{_show(s)}: {_show(t)}" for s, t in value)) + "}"
    if isinstance(value, frozenset):
        return "[" + ",".join(sorted(value)) + "]"
    return "-" if value is None else str(value)


def _never_writes(iif: Iif, store: Store) -> bool:
    """Can `iif` never write, whatever `store` becomes? True when every branch that writes
    requires a condition that can no longer hold: ``Below(TRIGGER, r)`` with the trigger at r or
    above (it never goes down: every writer of it is guarded so), or ``RevisionIs(key, r)`` for a
    key written at r that has changed since (removed, or written again at a later revision: it
    never comes back to r; the revision of an absent key, `NO_REV`, can come back)."""

    def dead(cond: object) -> bool:
        if isinstance(cond, Below) and cond.key == TRIGGER:
            trigger = store.value(TRIGGER)
            return trigger is not None and cast(int, trigger) >= cond.value
        if isinstance(cond, RevisionIs) and cond.rev != NO_REV:
            entry = store.get(cond.key)
            return entry is None or entry.rev != cond.rev
        if isinstance(cond, All):
            return any(dead(c) for c in cond.conditions)
        return False

    def writes(node: Iif | tuple[Op, ...]) -> bool:
        if not isinstance(node, Iif):
            return bool(node)
        return (not dead(node.condition) and writes(node.success)) or writes(node.failure)

    return not writes(iif)


def _revision_guards(iif: Iif) -> list[tuple[str, int]]:
    """The revision equalities an invoke requires (its CAS guards), for the IGN-CAS monitor."""
    out: list[tuple[str, int]] = []

    def walk(cond: object) -> None:
        if isinstance(cond, RevisionIs):
            out.append((cond.key, int(cond.rev)))
        elif isinstance(cond, All):
            for c in cond.conditions:
                walk(c)

    walk(iif.condition)
    return out

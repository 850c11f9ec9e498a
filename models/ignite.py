"""Apache Ignite 3, design 001 (IGNITE-16668, "In-memory raft group reconfiguration on node
failure"): one partition's raft group of in-memory nodes, as a symbolic transition system.

What the model keeps (design 001 "Problem" and "Solution"; refimpl/ignite.py):

* **terms and votes**: each running raft node has a term, a vote of its current term
  (``votedFor``) and a role; a candidate stands in the next term with the latest configuration
  entry of its log (its term ``logterm`` and index ``logidx``) and wins once the votes granted to
  it in that term make a quorum of the configuration it stood with (``_maybe_win``,
  ``_ballot``); a voter grants one vote per term to a candidate whose log is at least as up to
  date (``_on_request_vote``);
* **the configuration** ``conf`` (raft's peers) and the configuration changes a leader puts in
  place: the leader's entry reaches a quorum of the old and a quorum of the new peers, which take
  its term and its log (joint consensus, ``_change_peers``, ``_stage_stable``);
* **restarts of in-memory nodes**, which lose term, vote and log (``on_restart``), and the
  design's removal-before-restart rule: a restarted member keeps its raft node stopped
  (``await`` 1) until a configuration without it was put in place (``await`` 2) and then one
  with it (design 001 "Solution": "remove and then return back the restarting node from the
  peers ... The peer-removal process should be finished before the restarting of the
  corresponding raft server node"); every peer restarted empty is a full partition restart,
  which starts the group again from term 0 (design 001, ``onParitionStart``'s
  ``fullParitionRestart``);
* **faults**: restart (the ``restarts`` budget), crash (the node stays down; ``crashes``, 0 by
  default as the refimpl has none), and the network: vote requests and votes are a monotone set
  of sent messages, so any of them may arrive late, twice or never, except that a restart loses
  the messages in flight to the node (refimpl/actor.py ``on_restart``: its connections are
  gone): a request reaches a raft node only if it was sent since that raft node started
  (``rts``, ``since``, the network's ``clock``).

The initial state is the refimpl's: every peer in term 1 with the first configuration in its
log, the first peer its leader, elected by every peer's vote (``IgniteRebalance.initial``).

Abstractions (each a place where this model and refimpl/ignite.py differ):

* the metastore and the rebalance (switch.reduce, switch.append, pending, the stable switch)
  are abstracted to "some leader puts a configuration in place": ``await`` stands for a
  restarted node's reduction and return, and ``reconfigure`` for the pending rebalance it
  drives;
* a configuration change is one step: the joint entry appended, replicated to and acknowledged
  by a quorum of the old and of the new peers, committed, and the new configuration alone
  (STAGE_STABLE); a leader changes peers only with the latest configuration in its log;
* replication (``append``) is one step reading the leader's current log: the refimpl's raft
  connections are ordered, and a reordered append (a fault there) is not modelled; vote
  requests and votes are messages (any order, any loss);
* a node stands for election only with the latest configuration put in place in its log (a
  node with an older one is refused by the quorum that acknowledged the newer one: raft's
  up-to-date check, which the model keeps, but such a candidacy is not modelled); leader
  stickiness (a follower refuses a higher term while its leader's lease holds) and the refusal
  of a candidate outside the voter's configuration are not modelled: the model grants more
  votes than the refimpl, so the variant's shortest run to two leaders (the term-1 leader
  votes for a candidate of term 2, restarts and votes again) is not a run of the refimpl,
  whose leader refuses a higher term while it leads;
* a node learns a higher term (``step_down``) from a message of any term a candidate stood in
  (a vote request, a vote, an append carries the term its sender held when it was sent);
* a node returning to the peers starts its raft node once the configuration with it is in
  place (``rejoin``), where the refimpl's pending handler starts it first, so it may
  acknowledge that configuration: the model's returning node acknowledges only the next one;
* a full partition restart is one step for all peers, and starts the group afresh: the
  messages of the old incarnations are dropped, as the monitors forget their leaders and votes
  (specs/ignite.py ``OneLeader``, ``Restart``).

The differential test (checker/symbolic.py, tests/models/test_ignite.py) checks every
transition of the explorer's complete graph against these formulas for elections (terms,
votes, roles, step downs, appends: no restart, the leader deposed by early timeouts, up to term
4) and for the restart variant (a restarted peer that runs again at once). The configuration
(``conf``, its index and term), the network and the logs' positions are left free there; the
fixed design's reentry (the metastore's switch.reduce, the joint and stable entries, the
removed node's wait) is not yet mapped: its steps are not checked.

**IGN-RESTART** is proved for any number of nodes from three lemmas (``restart-phases``,
``restarted-stays-stopped``, ``restarted-grants-nothing``): a restarted peer keeps its raft node
stopped, and grants nothing, until a configuration without it and then one with it were put in
place.

**IGN-ONE-LEADER** is proved for any number of nodes (``_lemmas``), from the history raft's
argument needs, kept in ghosts as Ivy keeps it: the configuration put in place at each index,
its leader's term and the quorum of the old peers that acknowledged it; each vote request by
its stamp (candidate, term, the index it stood with); the index at which each raft node
started; and the request and quorum each leader won with. A vote answers the request of one
stamp (a candidate counts the votes to its own request: a vote sent to an earlier raft node of
the candidate is lost with it). Two leaders of one term ``t`` stood with indices ``k`` and
``k'``:

* ``k = k'``: their quorums of that configuration share a node that granted both. One raft
  node votes once per term (``current-vote``); a node that forgot a vote runs again only in a
  configuration put in place after index ``k`` (``earlier-vote``, ``stopped-vote``: it was
  removed and added back, design 001 "Solution"), and a request it receives then stands with a
  later index (``later-request``): ``one-vote``;
* ``k < k'``: the configuration at ``k + 1`` was put in place by a leader of a term below
  ``t`` (the later candidate's log holds it); the quorum of the old peers that acknowledged it
  holds a newer log than a request that stood with ``k`` and refuses it
  (``stale-request``), and had not granted it (their terms were below ``t``), so the earlier
  candidate cannot win after it; and it cannot have won before it, as that quorum meets its
  voters (``latest``).

Were a request delivered to the node's next raft node (a network that keeps it across the
restart), five peers and two restarts elect two leaders in term 2 (16 steps,
tests/models/test_ignite.py ``_TWO_RESTARTS``): ``n1`` stands in term 2; ``n2`` votes for it
and restarts; the term-1 leader ``n0`` removes and returns ``n2`` and then ``n3`` (restarted
in turn), each time with a quorum of ``n0``, ``n4`` and the other one; ``n3``'s new raft node
grants ``n1``'s request and ``n1`` wins with ``n1``, ``n2``'s old vote and ``n3``; ``n4``
stands in term 2 and wins with ``n0`` and ``n2``'s new raft node. With one restart, five
peers cannot: ``c``'s votes before the removal and the removal's quorum of the old peers are
two disjoint majorities.

Nodes, configurations and quorums are uninterpreted sorts for proofs (``member``, ``qm`` and
``quorum`` are rigid relations, with the quorum-intersection axiom as Ivy states it); terms and
log indices are integers. In a finite universe the quorums are the majorities.
"""

from __future__ import annotations

from collections.abc import Hashable, Mapping, Sequence
from typing import Any

import z3

from partsafe.models.system import (
    Action,
    Frame,
    Lemma,
    Params,
    Property,
    System,
    Var,
    eq,
    ite,
    store,
    value_json,
)

NODE, CONFIG, QUORUM = "Node", "Config", "Quorum"
SETN = (NODE, "Bool")

#: ``await_``: running or never restarted (0); restarted, a configuration without it not yet
#: put in place (1); removed, waiting for a configuration with it (2); crashed for good (3)
RUNNING, RESTARTED, REMOVED, DOWN = 0, 1, 2, 3

#: refimpl variants this encoding expresses -> the spec each one's flaw breaks
VARIANTS: dict[str, str | None] = {
    "fixed": None,
    "ig-restart-keeps-peer": "IGN-RESTART",
}
#: the specs of the catalogue this model judges
SPECS = ("IGN-ONE-LEADER", "IGN-RESTART")
#: the default scope of bounded model checking: the explorer's (3 peers, no spare)
DEFAULT_SIZES = {"nodes": 3, "spares": 0}
#: its fault budgets, as the explorer's default scope (`partsafe check ignite-rebalance --help`:
#: one restart; the refimpl has no crash-stop failure)
DEFAULT_BUDGETS = {"restarts": 1, "crashes": 0}

DESIGN = "001 (IGNITE-16668) Problem (Upd 1), Solution"


def _variables() -> tuple[Var, ...]:
    return (
        # rigid: what configurations and quorums are
        Var("member", (CONFIG, SETN), "the peers of a configuration"),
        Var("qm", (QUORUM, SETN), "the nodes of a quorum"),
        Var("quorum", (QUORUM, (CONFIG, "Bool")), "q is a quorum (a majority) of c"),
        # the configuration put in place
        Var("conf", CONFIG, "the latest configuration put in place by a leader"),
        Var("cver", "Int", "its index: how many configurations were put in place"),
        Var("cterm", "Int", "the term of the leader that put it in place"),
        # raft nodes
        Var("running", SETN, "the node's raft node runs"),
        Var("term", (NODE, "Int"), "currentTerm"),
        Var("voted", SETN, "votedFor is set in the current term"),
        Var("vfor", (NODE, NODE), "votedFor"),
        Var("cand", SETN, "role candidate"),
        Var("lead", SETN, "role leader"),
        Var("logterm", (NODE, "Int"), "the term of the log's latest configuration entry"),
        Var("logidx", (NODE, "Int"), "the index of the log's latest configuration"),
        Var("ccfg", (NODE, CONFIG), "the configuration a candidate stood with"),
        Var("await_", (NODE, "Int"), "the reentry: 0 running, 1 restarted, 2 removed, 3 down"),
        # the network: vote requests (candidate, term) with their log's position, and votes
        Var("req", (NODE, ("Int", "Bool")), "RequestVote(term) sent by the candidate"),
        Var("rlt", (NODE, ("Int", "Int")), "the request's last log term"),
        Var("rix", (NODE, ("Int", "Int")), "the request's last log index"),
        Var("clock", "Int", "the network's clock: how many vote requests were sent"),
        Var("rts", (NODE, ("Int", "Int")),
            "when the request was sent (the clock): its stamp, which names it"),
        Var("granted", (NODE, ("Int", "Bool")),
            "Vote(granted) sent by the voter to the request of that stamp"),
        Var("since", (NODE, "Int"),
            "when the node's raft node last started: a restart loses the messages in flight "
            "to it, so only a request sent since reaches it"),
        # ghosts: the monitors' history
        Var("lby", (NODE, ("Int", "Bool")), "n became leader in term t", ghost=True),
        Var("two", "Bool", "a second leader was elected in some term", ghost=True),
        Var("phase", (NODE, "Int"), "IGN-RESTART's phase: 0, 1 restarted, 2 removed",
            ghost=True),
        Var("rvote", (NODE, ("Int", SETN)), "votes granted since the node's restart",
            ghost=True),
        # ghosts of the proof of IGN-ONE-LEADER: the history of configurations and requests
        Var("cfgh", ("Int", CONFIG), "the configuration put in place at each index",
            ghost=True),
        Var("cth", ("Int", "Int"), "the term of the leader that put each index in place",
            ghost=True),
        Var("cby", ("Int", NODE), "the leader that put each index in place", ghost=True),
        Var("ack1h", ("Int", QUORUM),
            "the quorum of the configuration at index k that acknowledged index k + 1",
            ghost=True),
        Var("sreq", ("Int", "Bool"), "a request of that stamp was sent", ghost=True),
        Var("sc", ("Int", NODE), "the candidate of the request of a stamp", ghost=True),
        Var("st", ("Int", "Int"), "the term of the request of a stamp", ghost=True),
        Var("sx", ("Int", "Int"), "the configuration index the request stood with",
            ghost=True),
        Var("sver", (NODE, "Int"), "the configuration index when the raft node started",
            ghost=True),
        Var("ws", (NODE, ("Int", "Int")), "the stamp of the request a leader won with",
            ghost=True),
        Var("wq", (NODE, ("Int", QUORUM)), "the quorum that elected it", ghost=True),
    )


FRESH = ("running", "term", "voted", "cand", "lead", "logterm", "logidx")
#: what a configuration change sets on every node
RECONF_NODES = ("term", "voted", "cand", "lead", "logterm", "logidx", "await_", "phase")


class _Builder:
    """The formulas of one variant at a finite size (``nodes`` peers at the start and
    ``spares``) or at any size."""

    def __init__(self, variant: str, nodes: int) -> None:
        if variant not in VARIANTS:
            raise ValueError(f"ignite: no symbolic form of variant {variant!r}; known: "
                             f"{', '.join(VARIANTS)}")
        self.keeps_peer = variant == "ig-restart-keeps-peer"
        self.nodes = nodes

    # -- quorum relations ----------------------------------------------------------------------

    @staticmethod
    def is_quorum(f: Frame, q: z3.ExprRef, c: z3.ExprRef) -> z3.BoolRef:
        return f.quorum[q][c]

    @staticmethod
    def in_q(f: Frame, q: z3.ExprRef, n: z3.ExprRef) -> z3.BoolRef:
        return f.qm[q][n]

    @staticmethod
    def mem(f: Frame, c: z3.ExprRef, n: z3.ExprRef) -> z3.BoolRef:
        return f.member[c][n]

    def quorum_members(self, f: Frame) -> z3.BoolRef:
        return f.u.forall([QUORUM, CONFIG, NODE], lambda q, c, n: z3.Implies(
            z3.And(self.is_quorum(f, q, c), self.in_q(f, q, n)), self.mem(f, c, n)))

    def quorum_intersection(self, f: Frame) -> z3.BoolRef:
        u = f.u
        return u.forall([CONFIG, QUORUM, QUORUM], lambda c, q1, q2: z3.Implies(
            z3.And(self.is_quorum(f, q1, c), self.is_quorum(f, q2, c)),
            u.exists([NODE], lambda n: z3.And(self.in_q(f, q1, n), self.in_q(f, q2, n)))))

    def majorities(self, f: Frame) -> z3.BoolRef:
        """Finite universes: the quorums of a configuration are its majorities."""
        u = f.u
        nodes = u.elements(NODE)

        def size(s: Any) -> z3.ArithRef:
            return z3.Sum([z3.If(s(n), 1, 0) for n in nodes])
        return u.forall([QUORUM, CONFIG], lambda q, c: self.is_quorum(f, q, c) == z3.And(
            *[z3.Implies(self.in_q(f, q, n), self.mem(f, c, n)) for n in nodes],
            2 * size(lambda n: self.in_q(f, q, n)) > size(lambda n: self.mem(f, c, n))))

    # -- the initial state ---------------------------------------------------------------------

    def init(self, f: Frame) -> z3.BoolRef:
        """The refimpl's initial state: the group on its peers, every peer in term 1 with the
        first configuration (term 0, index 0) in its log, and the first peer its leader, elected
        by every peer's vote (``IgniteRebalance.initial``). At any size the peers are the
        nodes of ``conf`` and the leader is some peer ``l0``."""
        u = f.u
        ff, tt = z3.BoolVal(False, u.ctx), z3.BoolVal(True, u.ctx)
        zero, one = z3.IntVal(0, u.ctx), z3.IntVal(1, u.ctx)
        if u.finite:
            els = u.elements(NODE)
            l0 = els[0]
            rigid = [self.majorities(f), u.forall([NODE], lambda n: self.mem(f, f.conf, n) == z3.Or(
                *[n == e for e in els[: self.nodes]]))]
        else:
            l0 = z3.Const("l0", u[NODE])
            rigid = [self.mem(f, f.conf, l0)]

        def peer(n: z3.ExprRef) -> z3.BoolRef:
            return self.mem(f, f.conf, n)
        no_votes = u.const(("Int", SETN), u.const(SETN, ff))
        no_terms = u.const(("Int", "Bool"), ff)
        # the first election's request is stamp 1, granted by every peer
        votes = u.set_where(NODE, lambda n: store(no_terms, 1, peer(n)), "vn")
        return z3.And(
            *rigid, self.quorum_members(f), self.quorum_intersection(f),
            f.cver == 0, f.cterm == 0,
            u.forall([NODE], lambda n: z3.And(
                f.running[n] == peer(n), f.term[n] == ite(peer(n), one, zero),
                f.voted[n] == peer(n), f.vfor[n] == l0, f.cand[n] == ff,
                f.lead[n] == (n == l0), f.logterm[n] == 0, f.logidx[n] == 0,
                f.await_[n] == RUNNING, f.phase[n] == 0, f.ccfg[n] == f.conf)),
            eq(f.req, store(u.const((NODE, ("Int", "Bool")), no_terms), l0,
                            store(no_terms, 1, tt))),
            f.rlt[l0][1] == 0, f.rix[l0][1] == 0, f.rts[l0][1] == 1, f.clock == 1,
            u.forall([NODE], lambda n: f.since[n] == 0),
            eq(f.granted, votes),
            eq(f.rvote, u.const((NODE, ("Int", SETN)), no_votes)),
            eq(f.lby, store(u.const((NODE, ("Int", "Bool")), no_terms), l0,
                            store(no_terms, 1, tt))),
            z3.Not(f.two),
            # the proof's history: index 0 is the first configuration, stamp 1 the first
            # request, won by l0 with a quorum of the peers
            f.cfgh[0] == f.conf, f.cth[0] == 0,
            eq(f.sreq, store(no_terms, 1, tt)), f.sc[1] == l0, f.st[1] == 1, f.sx[1] == 0,
            u.forall([NODE], lambda n: f.sver[n] == 0),
            f.ws[l0][1] == 1, self.is_quorum(f, f.wq[l0][1], f.conf))

    # -- actions -------------------------------------------------------------------------------

    def fresh(self, pre: Frame, n: z3.ExprRef, running: bool) -> dict[str, Any]:
        """The node's raft node with empty meta and log (``_start_raft``; in-memory restart)."""
        return {"running": store(pre.running, n, running), "term": store(pre.term, n, 0),
                "voted": store(pre.voted, n, False), "cand": store(pre.cand, n, False),
                "lead": store(pre.lead, n, False), "logterm": store(pre.logterm, n, 0),
                "logidx": store(pre.logidx, n, 0)}

    def actions(self) -> tuple[Action, ...]:
        mem, in_q, is_quorum = self.mem, self.in_q, self.is_quorum

        def timeout_g(f: Frame, a: Params) -> z3.BoolRef:
            n = a["n"]
            return z3.And(f.running[n], mem(f, f.conf, n), z3.Not(f.lead[n]),
                          f.logidx[n] == f.cver)

        def timeout_e(pre: Frame, a: Params) -> dict[str, Any]:
            n = a["n"]
            t = pre.term[n] + 1
            s = pre.clock + 1
            return {
                "term": store(pre.term, n, t), "voted": store(pre.voted, n, True),
                "vfor": store(pre.vfor, n, n), "cand": store(pre.cand, n, True),
                "ccfg": store(pre.ccfg, n, pre.conf),
                "req": store(pre.req, n, store(pre.req[n], t, True)),
                "rlt": store(pre.rlt, n, store(pre.rlt[n], t, pre.logterm[n])),
                "rix": store(pre.rix, n, store(pre.rix[n], t, pre.logidx[n])),
                "clock": s, "rts": store(pre.rts, n, store(pre.rts[n], t, s)),
                "granted": store(pre.granted, n, store(pre.granted[n], s, True)),
                "sreq": store(pre.sreq, s, True), "sc": store(pre.sc, s, n),
                "st": store(pre.st, s, t), "sx": store(pre.sx, s, pre.cver),
                "rvote": ite(pre.phase[n] != 0, store(pre.rvote, n, store(pre.rvote[n], t, store(
                    pre.rvote[n][t], n, True))), pre.rvote)}

        def vote_g(f: Frame, a: Params) -> z3.BoolRef:
            v, c, t = a["v"], a["c"], a["t"]
            lt, ix = f.rlt[c][t], f.rix[c][t]
            return z3.And(
                f.running[v], v != c, f.req[c][t], f.rts[c][t] > f.since[v], t >= f.term[v],
                z3.Or(t > f.term[v], z3.Not(f.voted[v]), f.vfor[v] == c),
                z3.Or(lt > f.logterm[v], z3.And(lt == f.logterm[v], ix >= f.logidx[v])))

        def vote_e(pre: Frame, a: Params) -> dict[str, Any]:
            v, c, t = a["v"], a["c"], a["t"]
            return {
                "term": store(pre.term, v, t), "voted": store(pre.voted, v, True),
                "vfor": store(pre.vfor, v, c), "cand": store(pre.cand, v, False),
                "lead": store(pre.lead, v, False),
                "granted": store(pre.granted, v, store(pre.granted[v], pre.rts[c][t], True)),
                "rvote": ite(pre.phase[v] != 0, store(pre.rvote, v, store(pre.rvote[v], t, store(
                    pre.rvote[v][t], c, True))), pre.rvote)}

        def step_down_g(f: Frame, a: Params) -> z3.BoolRef:
            n, m, t = a["n"], a["m"], a["t"]
            return z3.And(f.running[n], t > f.term[n], f.req[m][t])

        def step_down_e(pre: Frame, a: Params) -> dict[str, Any]:
            n, t = a["n"], a["t"]
            return {"term": store(pre.term, n, t), "voted": store(pre.voted, n, False),
                    "cand": store(pre.cand, n, False), "lead": store(pre.lead, n, False)}

        def win_g(f: Frame, a: Params) -> z3.BoolRef:
            c, q = a["c"], a["q"]
            t = f.term[c]
            s = f.rts[c][t]
            return z3.And(f.running[c], f.cand[c], is_quorum(f, q, f.ccfg[c]),
                          f.u.forall([NODE], lambda n: z3.Implies(in_q(f, q, n),
                                                                  f.granted[n][s])))

        def win_e(pre: Frame, a: Params) -> dict[str, Any]:
            c = a["c"]
            t = pre.term[c]
            other = pre.u.exists([NODE], lambda n: z3.And(n != c, pre.lby[n][t]))
            return {"cand": store(pre.cand, c, False), "lead": store(pre.lead, c, True),
                    "lby": store(pre.lby, c, store(pre.lby[c], t, True)),
                    "two": z3.Or(pre.two, other),
                    "ws": store(pre.ws, c, store(pre.ws[c], t, pre.rts[c][t])),
                    "wq": store(pre.wq, c, store(pre.wq[c], t, a["q"]))}

        def append_g(f: Frame, a: Params) -> z3.BoolRef:
            ld, n = a["l"], a["n"]
            return z3.And(f.running[ld], f.lead[ld], f.running[n], n != ld,
                          f.term[ld] >= f.term[n])

        def append_e(pre: Frame, a: Params) -> dict[str, Any]:
            ld, n = a["l"], a["n"]
            same = pre.term[n] == pre.term[ld]
            return {"term": store(pre.term, n, pre.term[ld]),
                    "voted": store(pre.voted, n, z3.And(same, pre.voted[n])),
                    "cand": store(pre.cand, n, False), "lead": store(pre.lead, n, False),
                    "logterm": store(pre.logterm, n, pre.logterm[ld]),
                    "logidx": store(pre.logidx, n, pre.logidx[ld])}

        def reconf_g(f: Frame, a: Params) -> z3.BoolRef:
            ld, c, q1, q2 = a["l"], a["c"], a["q1"], a["q2"]
            return z3.And(
                f.running[ld], f.lead[ld], f.logidx[ld] == f.cver,
                is_quorum(f, q1, f.conf), is_quorum(f, q2, c),
                f.u.forall([NODE], lambda n: z3.Implies(
                    z3.Or(in_q(f, q1, n), in_q(f, q2, n)),
                    z3.And(f.running[n], f.term[n] <= f.term[ld]))))

        def reconf_nodes(pre: Frame, a: Params, n: z3.ExprRef) -> dict[str, z3.ExprRef]:
            """Each node's new values: the acknowledging quorums and the leader take the
            leader's term and its log; the restarted nodes the new peers leave out are
            removed."""
            ld, c, q1, q2 = a["l"], a["c"], a["q1"], a["q2"]
            tl = pre.term[ld]
            acked = z3.Or(in_q(pre, q1, n), in_q(pre, q2, n), n == ld)
            inside = mem(pre, c, n)
            return {
                "term": z3.If(acked, tl, pre.term[n]),
                "voted": z3.And(pre.voted[n], z3.Or(z3.Not(acked), pre.term[n] == tl)),
                "cand": z3.And(pre.cand[n], z3.Not(acked)),
                "lead": z3.If(n == ld, mem(pre, c, ld), z3.And(pre.lead[n], z3.Not(acked))),
                "logterm": z3.If(acked, tl, pre.logterm[n]),
                "logidx": z3.If(acked, pre.cver + 1, pre.logidx[n]),
                "await_": z3.If(z3.And(pre.await_[n] == RESTARTED, z3.Not(inside)), REMOVED,
                                pre.await_[n]),
                "phase": z3.If(z3.And(pre.phase[n] == 1, z3.Not(inside)), 2,
                               z3.If(z3.And(pre.phase[n] == 2, inside), 0, pre.phase[n]))}

        def reconf_e(pre: Frame, a: Params) -> dict[str, Any]:
            u = pre.u
            k = pre.cver + 1
            out = {"conf": a["c"], "cver": k, "cterm": pre.term[a["l"]],
                   "cfgh": store(pre.cfgh, k, a["c"]), "cth": store(pre.cth, k, pre.term[a["l"]]),
                   "cby": store(pre.cby, k, a["l"]), "ack1h": store(pre.ack1h, pre.cver, a["q1"])}
            if u.finite:
                # flat: one term per node
                per = {e: reconf_nodes(pre, a, e) for e in u.elements(NODE)}
                for name in RECONF_NODES:
                    out[name] = u.set_where(NODE, lambda n, name=name: per[n][name])
            return out

        def reconf_r(pre: Frame, post: Frame, a: Params) -> z3.BoolRef:
            """At any size, the per-node values as one quantified equation each (a lambda
            would make the solver reason about array terms it need not)."""
            u = pre.u
            if u.finite:
                return z3.BoolVal(True, u.ctx)
            return u.forall([NODE], lambda n: z3.And(*[
                post[name][n] == value for name, value in reconf_nodes(pre, a, n).items()]))

        def running_g(f: Frame, a: Params) -> z3.BoolRef:
            return f.running[a["n"]]

        def restart_e(pre: Frame, a: Params) -> dict[str, Any]:
            n, u = a["n"], pre.u
            member_now = mem(pre, pre.conf, n)
            out = self.fresh(pre, n, self.keeps_peer)
            out["phase"] = store(pre.phase, n, z3.If(member_now, 1, 2))
            out["since"] = store(pre.since, n, pre.clock)
            out["sver"] = store(pre.sver, n, pre.cver)
            out["rvote"] = store(pre.rvote, n, u.const(("Int", SETN),
                                                       u.const(SETN, z3.BoolVal(False, u.ctx))))
            if not self.keeps_peer:
                out["await_"] = store(pre.await_, n, z3.If(member_now, RESTARTED, RUNNING))
            return out

        def crash_e(pre: Frame, a: Params) -> dict[str, Any]:
            n = a["n"]
            return {"running": store(pre.running, n, False), "cand": store(pre.cand, n, False),
                    "lead": store(pre.lead, n, False), "await_": store(pre.await_, n, DOWN)}

        def stop_g(f: Frame, a: Params) -> z3.BoolRef:
            n = a["n"]
            return z3.And(f.running[n], z3.Not(mem(f, f.conf, n)), z3.Not(f.lead[n]))

        def stop_e(pre: Frame, a: Params) -> dict[str, Any]:
            n = a["n"]
            return {"running": store(pre.running, n, False), "cand": store(pre.cand, n, False)}

        def rejoin_g(f: Frame, a: Params) -> z3.BoolRef:
            n = a["n"]
            return z3.And(z3.Not(f.running[n]), mem(f, f.conf, n),
                          z3.Or(f.await_[n] == RUNNING, f.await_[n] == REMOVED))

        def rejoin_e(pre: Frame, a: Params) -> dict[str, Any]:
            n = a["n"]
            out = {**self.fresh(pre, n, True), "await_": store(pre.await_, n, RUNNING),
                   "since": store(pre.since, n, pre.clock),
                   "sver": store(pre.sver, n, pre.cver)}
            return out

        def full_g(f: Frame, a: Params) -> z3.BoolRef:
            return f.u.forall([NODE], lambda n: z3.And(
                z3.Not(f.running[n]),
                z3.Implies(mem(f, f.conf, n), f.await_[n] == RESTARTED)))

        def full_e(pre: Frame, a: Params) -> dict[str, Any]:
            u = pre.u
            ff = z3.BoolVal(False, u.ctx)
            zero = z3.IntVal(0, u.ctx)
            none = u.const(SETN, ff)
            no_stamps = u.const(("Int", "Bool"), ff)
            no_terms = u.const((NODE, ("Int", "Bool")), no_stamps)
            no_votes = u.const((NODE, ("Int", SETN)), u.const(("Int", SETN), none))
            return {
                "running": u.set_where(NODE, lambda n: mem(pre, pre.conf, n), "fr"),
                "term": u.const((NODE, "Int"), zero), "voted": none, "cand": none,
                "lead": none, "logterm": u.const((NODE, "Int"), zero),
                "logidx": u.const((NODE, "Int"), zero), "cver": zero, "cterm": zero,
                "ccfg": u.const((NODE, CONFIG), pre.conf),
                "await_": u.set_where(NODE, lambda n: z3.If(
                    mem(pre, pre.conf, n), RUNNING, pre.await_[n]), "fa"),
                "req": no_terms, "granted": no_terms, "lby": no_terms, "two": ff,
                "phase": u.const((NODE, "Int"), zero), "rvote": no_votes,
                "cfgh": store(pre.cfgh, 0, pre.conf), "cth": store(pre.cth, 0, 0),
                "sreq": no_stamps, "sver": u.const((NODE, "Int"), zero)}

        restart_mod = ((*FRESH, "phase", "rvote", "since", "sver")
                       + (() if self.keeps_peer else ("await_",)))
        return (
            Action("timeout", (("n", NODE),), timeout_g, timeout_e,
                   ("term", "voted", "vfor", "cand", "ccfg", "req", "rlt", "rix", "granted",
                    "rvote", "clock", "rts", "sreq", "sc", "st", "sx"),
                   "raft election timeout: a new term, a vote for itself, RequestVote (_elect)"),
            Action("vote", (("v", NODE), ("c", NODE), ("t", "Int")), vote_g, vote_e,
                   ("term", "voted", "vfor", "cand", "lead", "granted", "rvote"),
                   "one vote per term to an up-to-date candidate (_on_request_vote)"),
            Action("step_down", (("n", NODE), ("m", NODE), ("t", "Int")), step_down_g,
                   step_down_e, ("term", "voted", "cand", "lead"),
                   "a higher term seen in a message (_step_down): a term some candidate m "
                   "stood in"),
            Action("win", (("c", NODE), ("q", QUORUM)), win_g, win_e,
                   ("cand", "lead", "lby", "two", "ws", "wq"),
                   "a quorum of the candidate's configuration voted for it (_maybe_win, "
                   "_ballot)"),
            Action("append", (("l", NODE), ("n", NODE)), append_g, append_e,
                   ("term", "voted", "cand", "lead", "logterm", "logidx"),
                   "a follower takes the leader's term and log (_on_append)"),
            Action("reconfigure", (("l", NODE), ("c", CONFIG), ("q1", QUORUM), ("q2", QUORUM)),
                   reconf_g, reconf_e,
                   ("conf", "cver", "cterm", "cfgh", "cth", "cby", "ack1h", "term", "voted",
                    "cand", "lead", "logterm", "logidx", "await_", "phase"),
                   "001 On rebalance done: a leader puts a configuration in place (joint "
                   "consensus: _change_peers, _stage_stable, _maybe_commit)",
                   relation=reconf_r),
            Action("restart", (("n", NODE),), running_g, restart_e, restart_mod,
                   "001 On in-memory partition restart (on_restart): term, vote and log lost",
                   fault=True, budget="restarts"),
            Action("crash", (("n", NODE),), running_g, crash_e,
                   ("running", "cand", "lead", "await_"), "the node stops for good",
                   fault=True, budget="crashes"),
            Action("stop", (("n", NODE),), stop_g, stop_e, ("running", "cand"),
                   "the stable watch stops a node outside the peers (_stable_changed)"),
            Action("rejoin", (("n", NODE),), rejoin_g, rejoin_e,
                   (*FRESH, "await_", "since", "sver"),
                   "001 Solution: a node back in the peers starts raft afresh "
                   "(_pending_changed)"),
            Action("full_restart", (), full_g, full_e,
                   ("running", "term", "voted", "cand", "lead", "logterm", "logidx", "cver",
                    "cterm", "ccfg", "await_", "req", "granted", "lby", "two", "phase", "rvote",
                    "cfgh", "cth", "sreq", "sver"),
                   "001 onParitionStart: every peer empty, the group starts again from term 0"),
        )

    # -- properties ----------------------------------------------------------------------------

    def restart_lemmas(self) -> tuple[Lemma, ...]:
        """IGN-RESTART's strengthening: a node restarted in memory stays stopped, and grants
        nothing, until it is back in the peers."""

        def phases(f: Frame) -> z3.BoolRef:
            return f.u.forall([NODE], lambda n: z3.And(
                f.phase[n] >= 0, f.phase[n] <= 2,
                z3.Implies(f.phase[n] == 1, z3.And(self.mem(f, f.conf, n),
                                                   f.await_[n] == RESTARTED)),
                z3.Implies(f.phase[n] == 2, z3.Not(self.mem(f, f.conf, n)))))

        def stopped(f: Frame) -> z3.BoolRef:
            return f.u.forall([NODE], lambda n: z3.Implies(f.phase[n] != 0,
                                                           z3.Not(f.running[n])))

        def granted_nothing(f: Frame) -> z3.BoolRef:
            u = f.u
            # one quantifier over both nodes: nested ones over a sort would share a name
            return u.forall([NODE, NODE], lambda n, c: z3.Implies(
                f.phase[n] != 0, u.forall_int(1, lambda t: z3.Not(f.rvote[n][t][c]), "rt")))

        return (
            Lemma("restart-phases", phases,
                  "∀n. phase(n) ∈ {0,1,2} ∧ (phase(n) = 1 → n ∈ conf ∧ await(n) = restarted) ∧ "
                  "(phase(n) = 2 → n ∉ conf)",
                  "001 Solution: \"remove and then return back the restarting node from the "
                  "peers\": a restarted peer is removed by the next configuration without it, "
                  "and back with the next one with it"),
            Lemma("restarted-stays-stopped", stopped, "∀n. phase(n) ≠ 0 → ¬running(n)",
                  "001 Solution: \"The peer-removal process should be finished before the "
                  "restarting of the corresponding raft server node\""),
            Lemma("restarted-grants-nothing", granted_nothing,
                  "∀n c t. phase(n) ≠ 0 → ¬rvote(n, t, c)",
                  "001 Solution: a raft node that is stopped grants no vote"),
        )

    def properties(self, lemmas: Sequence[str]) -> tuple[Property, ...]:
        def one_leader(f: Frame) -> z3.BoolRef:
            return z3.Not(f.two)

        def restart_step(pre: Frame, post: Frame, action: str, a: Params) -> z3.BoolRef:
            if action != "win":
                return z3.BoolVal(True, pre.u.ctx)
            c, q = a["c"], a["q"]
            t = pre.term[c]
            return pre.u.forall([NODE], lambda n: z3.Implies(
                self.in_q(pre, q, n), z3.Not(z3.And(pre.phase[n] != 0, pre.rvote[n][t][c]))))

        return (
            Property("IGN-ONE-LEADER", state=one_leader,
                     formula="¬two, where win(c) in term t sets two if lby(n, t) for some n ≠ "
                             "c (lby: the monitor's term -> leader map); full_restart clears "
                             "lby, as the monitor forgets its leaders",
                     lemmas=tuple(lemmas)),
            Property("IGN-RESTART", step=restart_step,
                     formula="win(c,q): ∀n∈q. ¬(phase(n) ≠ 0 ∧ rvote(n, term(c), c)); phase: "
                             "1 at an in-memory restart, 2 once a configuration without n is "
                             "put in place, 0 once one with n is; rvote (votes granted while "
                             "phase ≠ 0) is cleared at each restart",
                     lemmas=("restart-phases", "restarted-stays-stopped",
                             "restarted-grants-nothing")),
        )


PROBLEM = "001 Problem (Upd 1)"
SOLUTION = "001 Solution"


def _lemmas(b: _Builder) -> tuple[Lemma, ...]:
    """The strengthening of IGN-ONE-LEADER, each lemma with the design sentence it rests on.

    The ghosts are the history raft's safety argument needs (as Ivy states raft's): the
    configuration put in place at each index with its leader's term (``cfgh``, ``cth``,
    ``cby``) and the quorum of the old peers that acknowledged the next one (``ack1h``); each
    vote request by its stamp (``sreq``, ``sc``, ``st``, ``sx``: candidate, term, the index it
    stood with); the index when a raft node started (``sver``); and the request and quorum
    each leader won with (``ws``, ``wq``). A vote belongs to the raft node that granted it:
    one granted since the node's start (``s > since``) is its current one, an older one was
    granted by an earlier raft node of the same node."""
    in_q, is_quorum, mem = b.in_q, b.is_quorum, b.mem

    def ints(f: Frame, k: int, body: Any, tag: str) -> z3.BoolRef:
        return f.u.forall_int(k, body, tag)

    def nodes(f: Frame, k: int, body: Any) -> z3.BoolRef:
        return f.u.forall([NODE] * k, body)

    def between(f: Frame, v: z3.ArithRef, low: int = 0) -> z3.BoolRef:
        return z3.And(v >= low, v <= f.cver)

    def history(f: Frame) -> z3.BoolRef:
        return z3.And(
            f.cver >= 0, f.cfgh[f.cver] == f.conf, f.cth[0] == 0, f.cterm == f.cth[f.cver],
            ints(f, 2, lambda v, w: z3.Implies(z3.And(v >= 0, v <= w, w <= f.cver),
                                               z3.And(f.cth[v] <= f.cth[w], f.cth[v] >= 0)),
                 "hv"))

    def removal_quorums(f: Frame) -> z3.BoolRef:
        return ints(f, 1, lambda k: z3.Implies(
            z3.And(k >= 0, k < f.cver), is_quorum(f, f.ack1h[k], f.cfgh[k])), "hq")

    def logs(f: Frame) -> z3.BoolRef:
        return nodes(f, 1, lambda n: z3.And(
            between(f, f.logidx[n]), f.logterm[n] == f.cth[f.logidx[n]],
            f.logterm[n] <= f.term[n], f.since[n] >= 0, f.since[n] <= f.clock,
            f.sver[n] >= 0, f.sver[n] <= f.cver))

    def requests(f: Frame) -> z3.BoolRef:
        def sent(c: z3.ExprRef, t: z3.ArithRef) -> z3.BoolRef:
            s = f.rts[c][t]
            return z3.Implies(f.req[c][t], z3.And(
                f.sreq[s], f.sc[s] == c, f.st[s] == t, f.sx[s] == f.rix[c][t],
                f.rlt[c][t] == f.cth[f.rix[c][t]]))

        def stamp(s: z3.ArithRef) -> z3.BoolRef:
            return z3.Implies(f.sreq[s], z3.And(
                s >= 1, s <= f.clock, between(f, f.sx[s]), f.cth[f.sx[s]] < f.st[s]))
        return z3.And(nodes(f, 1, lambda c: ints(f, 1, lambda t: sent(c, t), "rq")),
                      ints(f, 1, stamp, "rs"),
                      nodes(f, 1, lambda n: ints(f, 1, lambda s: z3.Implies(
                          f.granted[n][s], f.sreq[s]), "rg")))

    def current_vote(f: Frame) -> z3.BoolRef:
        return nodes(f, 1, lambda n: ints(f, 1, lambda s: z3.Implies(
            z3.And(f.running[n], f.granted[n][s], s > f.since[n]),
            z3.And(f.term[n] >= f.st[s], z3.Implies(
                f.term[n] == f.st[s], z3.And(f.voted[n], f.vfor[n] == f.sc[s])))), "cv"))

    def earlier_vote(f: Frame) -> z3.BoolRef:
        return nodes(f, 1, lambda n: ints(f, 1, lambda s: z3.Implies(
            z3.And(f.running[n], f.granted[n][s], s <= f.since[n]),
            f.sver[n] > f.sx[s]), "ev"))

    def stopped_vote(f: Frame) -> z3.BoolRef:
        return nodes(f, 1, lambda n: ints(f, 1, lambda s: z3.Implies(
            z3.And(z3.Not(f.running[n]), f.granted[n][s], mem(f, f.conf, n),
                   z3.Or(f.await_[n] == RUNNING, f.await_[n] == REMOVED)),
            f.cver > f.sx[s]), "sv"))

    def later_request(f: Frame) -> z3.BoolRef:
        return nodes(f, 1, lambda n: ints(f, 1, lambda s: z3.Implies(
            z3.And(f.running[n], f.sreq[s], s > f.since[n]), f.sx[s] >= f.sver[n]), "lr"))

    def one_vote(f: Frame) -> z3.BoolRef:
        return nodes(f, 1, lambda n: ints(f, 2, lambda s1, s2: z3.Implies(
            z3.And(f.granted[n][s1], f.granted[n][s2], f.st[s1] == f.st[s2],
                   f.sx[s1] == f.sx[s2]), f.sc[s1] == f.sc[s2]), "ov"))

    def candidate(f: Frame) -> z3.BoolRef:
        def cand(c: z3.ExprRef) -> z3.BoolRef:
            t = f.term[c]
            s = f.rts[c][t]
            k1 = f.rix[c][t] + 1
            return z3.Implies(z3.And(f.running[c], f.cand[c]), z3.And(
                f.req[c][t], f.ccfg[c] == f.cfgh[f.rix[c][t]], f.logidx[c] == f.rix[c][t],
                f.granted[c][s], s > f.since[c], z3.Not(f.lead[c]), z3.Not(f.lby[c][t]),
                # the index after the candidate's was put in place by a leader of its term
                z3.Implies(f.rix[c][t] < f.cver, f.lby[f.cby[k1]][f.cth[k1]])))
        return nodes(f, 1, cand)

    def leader(f: Frame) -> z3.BoolRef:
        def lead(ld: z3.ExprRef) -> z3.BoolRef:
            t = f.term[ld]
            return z3.Implies(z3.And(f.running[ld], f.lead[ld]), z3.And(
                f.lby[ld][t], f.logidx[ld] >= f.sx[f.ws[ld][t]],
                z3.Implies(z3.Not(f.two), ints(f, 1, lambda v: z3.Implies(
                    z3.And(between(f, v, 1), f.cth[v] == t), f.logidx[ld] >= v), "lp"))))
        return nodes(f, 1, lead)

    def won(f: Frame) -> z3.BoolRef:
        def w(ld: z3.ExprRef, t: z3.ArithRef) -> z3.BoolRef:
            s, q = f.ws[ld][t], f.wq[ld][t]
            return z3.Implies(f.lby[ld][t], z3.And(
                f.sreq[s], f.sc[s] == ld, f.st[s] == t, f.granted[ld][s],
                is_quorum(f, q, f.cfgh[f.sx[s]]),
                f.u.forall([NODE], lambda n: z3.Implies(in_q(f, q, n), f.granted[n][s])),
                z3.Implies(z3.And(f.running[ld], s > f.since[ld]), f.term[ld] >= t)))
        return nodes(f, 1, lambda ld: ints(f, 1, lambda t: w(ld, t), "wn"))

    def latest(f: Frame) -> z3.BoolRef:
        def w(ld: z3.ExprRef, t: z3.ArithRef) -> z3.BoolRef:
            k = f.sx[f.ws[ld][t]]
            return z3.Implies(z3.And(f.lby[ld][t], k < f.cver), f.cth[k + 1] >= t)
        return nodes(f, 1, lambda ld: ints(f, 1, lambda t: w(ld, t), "lt"))

    def unique(f: Frame) -> z3.BoolRef:
        return nodes(f, 2, lambda x, y: ints(f, 1, lambda t: z3.Implies(
            z3.And(f.lby[x][t], f.lby[y][t], x != y), f.two), "un"))

    def stale(f: Frame) -> z3.BoolRef:
        def blocked(n: z3.ExprRef, s: z3.ArithRef) -> z3.BoolRef:
            k = f.sx[s]
            return z3.Implies(
                z3.And(f.sreq[s], k < f.cver, f.cth[k + 1] < f.st[s], in_q(f, f.ack1h[k], n)),
                z3.And(z3.Not(f.granted[n][s]), z3.Implies(
                    z3.And(f.running[n], s > f.since[n]), f.logidx[n] > k)))
        return nodes(f, 1, lambda n: ints(f, 1, lambda s: blocked(n, s), "st"))

    def log_order(f: Frame) -> z3.BoolRef:
        return z3.Implies(z3.Not(f.two), nodes(f, 2, lambda ld, n: z3.Implies(
            z3.And(f.running[ld], f.lead[ld], f.running[n], f.term[n] <= f.term[ld]),
            f.logidx[n] <= f.logidx[ld])))

    return (
        Lemma("quorum-members", b.quorum_members,
              "∀q c n. quorum(q,c) ∧ qm(q,n) → member(c,n)",
              f"{PROBLEM}: a raft group elects with the votes of its peers (a majority of the "
              "configuration)"),
        Lemma("quorum-intersection", b.quorum_intersection,
              "∀c q1 q2. quorum(q1,c) ∧ quorum(q2,c) → ∃n. qm(q1,n) ∧ qm(q2,n)",
              f"{PROBLEM}: \"two leaders will be elected which is illegal\": two majorities "
              "of one configuration share a node"),
        Lemma("conf-history", history,
              "cfgh(cver) = conf ∧ cth(0) = 0 ∧ cterm = cth(cver) ∧ ∀v ≤ w ≤ cver. "
              "0 ≤ cth(v) ≤ cth(w)",
              "001 On rebalance done: each configuration is put in place by a leader, in its "
              "term; a leader's term is at least that of the configuration it holds"),
        Lemma("removal-quorums", removal_quorums,
              "∀k < cver. quorum(ack1h(k), cfgh(k))",
              f"{SOLUTION}: \"remove and then return back the restarting node from the peers\": "
              "a configuration change is acknowledged by a majority of the old peers (joint "
              "consensus)"),
        Lemma("log-history", logs,
              "∀n. 0 ≤ logidx(n) ≤ cver ∧ logterm(n) = cth(logidx(n)) ≤ term(n) ∧ "
              "0 ≤ since(n) ≤ clock ∧ 0 ≤ sver(n) ≤ cver",
              f"{PROBLEM}: \"raft meta (term/committedIndex) and stable raft log\": a node's "
              "log holds configurations put in place, each of a term not above its own"),
        Lemma("request-history", requests,
              "∀c t. req(c,t) → sreq(s) ∧ sc(s) = c ∧ st(s) = t ∧ sx(s) = rix(c,t) ∧ "
              "rlt(c,t) = cth(rix(c,t)) where s = rts(c,t); ∀s. sreq(s) → 1 ≤ s ≤ clock ∧ "
              "sx(s) ≤ cver ∧ cth(sx(s)) < st(s); ∀n s. granted(n,s) → sreq(s)",
              f"{PROBLEM}: a candidate stands in a term above its log's, with its latest "
              "configuration (raft's RequestVote)"),
        Lemma("current-vote", current_vote,
              "∀n s. running(n) ∧ granted(n,s) ∧ s > since(n) → term(n) ≥ st(s) ∧ "
              "(term(n) = st(s) → voted(n) ∧ vfor(n) = sc(s))",
              f"{PROBLEM}: a raft node votes at most once per term (votedFor of its term)"),
        Lemma("earlier-vote", earlier_vote,
              "∀n s. running(n) ∧ granted(n,s) ∧ s ≤ since(n) → sver(n) > sx(s)",
              f"{SOLUTION}: \"The peer-removal process should be finished before the "
              "restarting of the corresponding raft server node\": a node that forgot a vote "
              "runs again only in a configuration put in place after the one the vote's "
              "request stood with"),
        Lemma("stopped-vote", stopped_vote,
              "∀n s. ¬running(n) ∧ granted(n,s) ∧ n ∈ conf ∧ await(n) ∈ {0, 2} → cver > sx(s)",
              f"{SOLUTION}: a restarted peer awaits its removal; a stopped node is outside "
              "the peers, so its return is a later configuration"),
        Lemma("later-request", later_request,
              "∀n s. running(n) ∧ sreq(s) ∧ s > since(n) → sx(s) ≥ sver(n)",
              f"{PROBLEM}: a request reaches only the raft node running when it was sent; "
              "it stands with the latest configuration"),
        Lemma("one-vote", one_vote,
              "∀n s1 s2. granted(n,s1) ∧ granted(n,s2) ∧ st(s1) = st(s2) ∧ sx(s1) = sx(s2) "
              "→ sc(s1) = sc(s2)",
              f"{SOLUTION}: a restarted node that forgot its vote is out of the configuration "
              "until it is added back, so it cannot vote twice in a term for candidates of "
              "the same configuration (\"Node C could vote for Candidate A before self-restart "
              "and vote then for Candidate B after one\", {PROBLEM})"),
        Lemma("candidate", candidate,
              "∀c. running ∧ cand(c) → req(c,t) ∧ ccfg(c) = cfgh(rix(c,t)) ∧ logidx(c) = "
              "rix(c,t) ∧ granted(c, rts(c,t)) ∧ rts(c,t) > since(c) ∧ ¬lead(c) ∧ ¬lby(c,t) ∧ "
              "(rix(c,t) < cver → lby(cby(k), cth(k))), t = term(c), k = rix(c,t) + 1",
              f"{PROBLEM}: a candidate votes for itself and stands with its configuration; "
              "001 On rebalance done: a later configuration is put in place by a leader"),
        Lemma("leader", leader,
              "∀l. running ∧ lead(l) → lby(l,t) ∧ logidx(l) ≥ sx(ws(l,t)) ∧ (¬two → ∀v ∈ "
              "1..cver. cth(v) = t → logidx(l) ≥ v), t = term(l)",
              f"{PROBLEM}: a leader was elected in its term and holds what it put in place"),
        Lemma("won", won,
              "∀l t. lby(l,t) → the request s = ws(l,t) is l's of term t, and granted by l and "
              "by the quorum wq(l,t) of cfgh(sx(s)); running(l) ∧ s > since(l) → term(l) ≥ t",
              f"{PROBLEM}: a leader is elected by a majority of its configuration"),
        Lemma("latest", latest,
              "∀l t. lby(l,t) ∧ sx(ws(l,t)) < cver → cth(sx(ws(l,t)) + 1) ≥ t",
              "001 On rebalance done (joint consensus): after a leader of term t is elected, "
              "the next configuration is put in place by a leader of term t or later (the "
              "old peers' majority that acknowledges it meets its voters)"),
        Lemma("second-leader", unique, "∀x y t. lby(x,t) ∧ lby(y,t) ∧ x ≠ y → two",
              f"{PROBLEM}: \"two leaders will be elected which is illegal\": the monitor "
              "records a second leader of a term (with ¬two, one leader per term)"),
        Lemma("stale-request", stale,
              "∀n s. sreq(s) ∧ k < cver ∧ cth(k+1) < st(s) ∧ n ∈ ack1h(k) → ¬granted(n,s) ∧ "
              "(running(n) ∧ s > since(n) → logidx(n) > k), k = sx(s)",
              "001 On rebalance done: the old peers' majority that acknowledged the next "
              "configuration holds a newer log than a request that stood with the old one, and "
              "refuses it (raft's up-to-date check)"),
        Lemma("log-order", log_order,
              "¬two → ∀l n. running(l) ∧ lead(l) ∧ running(n) ∧ term(n) ≤ term(l) → "
              "logidx(n) ≤ logidx(l)",
              f"{PROBLEM}: a leader's log holds every configuration put in place in its term "
              "or before (raft's leader completeness)"),
    )


def system(variant: str = "fixed", nodes: int = DEFAULT_SIZES["nodes"],
           spares: int = DEFAULT_SIZES["spares"], configs: int = 2,
           quorums: int | None = None) -> System:
    """The raft group of design 001 with in-memory nodes, in ``variant`` (a key of
    `VARIANTS`); a finite universe has ``nodes`` peers at the start and ``spares`` further
    nodes, ``configs`` configurations and ``quorums`` quorums (by default enough for the
    majorities a run of a few steps names); the unbounded one any number of each."""
    b = _Builder(variant, nodes)
    lemmas = (*_lemmas(b), *b.restart_lemmas())
    n = nodes + spares
    return System(
        name="ignite", variant=variant, sorts=(NODE, CONFIG, QUORUM), variables=_variables(),
        init=b.init, actions=b.actions(),
        properties=b.properties([lm.name for lm in _lemmas(b)]),
        lemmas=lemmas, sizes={NODE: n, CONFIG: configs, QUORUM: quorums or n + 1},
        budgets=dict(DEFAULT_BUDGETS), describe=describe, design=DESIGN,
        abstractions=(
            "metastore rebalance -> some leader puts a configuration in place (reconfigure)",
            "joint consensus, replication to quorums and commit merged into one step",
            "append reads the leader's current log (ordered raft connections)",
            "a candidate stands with the latest configuration; no leader stickiness, no "
            "refusal of a candidate outside the voter's configuration",
            "a node learns a higher term from any node that holds it",
            "a restart loses the vote requests in flight to the node (refimpl/actor.py)",
            "a returning node starts raft once the configuration with it is in place",
            "a full partition restart is one step and drops the old incarnations' messages",
        ))


def system_for(variant: str, scope: Mapping[str, int]) -> System:
    """The system at the size of an explorer scope (`partsafe check ignite-rebalance`'s
    parameters: its peers and spares)."""
    return system(variant, nodes=scope["nodes"], spares=scope["spares"])


def explorer_scope(trace: Sequence[Mapping[str, Any]]) -> dict[str, int]:
    """The explorer scope a bounded counterexample needs: its peers, a restart budget for its
    restarts, the terms it reaches, and an early election timeout for each of its timeouts (a
    node stands while its leader lives, or while messages to it are in flight)."""
    steps = [t["action"] for t in trace[1:]]
    terms = [v.get("term", 0) for t in trace for v in t["state"].values()
             if isinstance(v, dict)]
    return {**DEFAULT_SIZES, "restarts": steps.count("restart"),
            "max-term": max([2, *terms]), "early-timeouts": steps.count("timeout")}


def describe(f: Frame, model: z3.ModelRef) -> dict[str, Any]:
    """A state of a finite universe as JSON: the configuration and each node's raft."""
    u = f.u
    nodes = u.elements(NODE)

    def ev(term: Any) -> Any:
        return value_json(model, term)

    out: dict[str, Any] = {
        "peers": [str(n) for n in nodes if ev(b_mem(f, n))],
        "cver": ev(f.cver), "cterm": ev(f.cterm)}
    for n in nodes:
        if not ev(f.running[n]):
            out[str(n)] = {"raft": "stopped", "await": ev(f.await_[n])}
            continue
        role = ("leader" if ev(f.lead[n]) else "candidate" if ev(f.cand[n]) else "follower")
        out[str(n)] = {"raft": role, "term": ev(f.term[n]),
                       "voted": ev(f.vfor[n]) if ev(f.voted[n]) else None,
                       "log": [ev(f.logterm[n]), ev(f.logidx[n])]}
    return out


def b_mem(f: Frame, n: z3.ExprRef) -> z3.BoolRef:
    return f.member[f.conf][n]


# --- the map from the reference implementation ---------------------------------------------


class Refinement:
    """Maps refimpl/ignite.py states (``Member``, ``Raft``) and events to this model.

    Node names in `protocol.members` order are the ``Node`` elements 0..n-1. The metastore is
    not part of the model (abstracted to ``reconfigure``). A node's ``logterm``/``logidx`` is
    its log's latest configuration entry: its term, and the index of that configuration among
    the configurations put in place (the log's length less one, as the refimpl's log holds
    configuration entries only). Configurations and quorums are not pinned (they are rigid
    relations whose elements the driver's finite universe chooses); ``conf`` neither."""

    #: `actions` reads the receiver's raft before and after a delivery (checker/symbolic.py)
    reads_states = True

    def __init__(self, protocol: Any) -> None:
        self.protocol = protocol
        self.names: tuple[str, ...] = tuple(protocol.members)
        self.index = {name: i for i, name in enumerate(self.names)}
        self.persistent = bool(getattr(protocol, "persistent", False))

    def state(self, nodes: Mapping[str, Hashable | None],
              crashed: frozenset[str]) -> dict[str, Any]:
        running: set[int] = set()
        term: dict[int, int] = {}
        voted: set[int] = set()
        vfor: dict[int, int] = {}
        cand: set[int] = set()
        lead: set[int] = set()
        logterm: dict[int, int] = {}
        logidx: dict[int, int] = {}
        await_: dict[int, int] = {}
        for name in self.names:
            i = self.index[name]
            st: Any = nodes.get(name)
            if name in crashed:
                await_[i] = DOWN
                continue
            raft = getattr(st, "raft", None)
            if raft is None:
                await_[i] = RESTARTED if getattr(st, "poll", None) is not None or getattr(
                    st, "removals", None) else REMOVED
                continue
            running.add(i)
            await_[i] = RUNNING
            term[i] = raft.term
            if raft.voted is not None:
                voted.add(i)
                vfor[i] = self.index[raft.voted]
            if raft.role == "candidate":
                cand.add(i)
            elif raft.role == "leader":
                lead.add(i)
            logterm[i] = raft.last.term
            logidx[i] = len(raft.log) - 1
        return {"running": running, "term": term, "voted": voted, "vfor": vfor, "cand": cand,
                "lead": lead, "logterm": logterm, "logidx": logidx, "await_": await_}

    def actions(self, action: tuple[Any, ...], events: Sequence[Any],
                before: Mapping[str, Hashable | None] | None = None,
                after: Mapping[str, Hashable | None] | None = None
                ) -> list[tuple[str, dict[str, int]]]:
        """The abstract actions of one explorer step, from its events and, for a delivered raft
        message, from the receiver's raft before and after it (a step down to the message's
        term, and the append of a leader's log, emit no event)."""
        out: list[tuple[str, dict[str, int]]] = []
        if action and action[0] == "deliver" and before is not None and after is not None:
            out.extend(self._delivered(action, events, before, after))
        for e in events:
            kind = type(e).__name__
            who = self.index.get(getattr(e, "member", ""), -1)
            if who < 0:
                continue
            if kind == "RaftVote":
                cand = self.index[e.candidate]
                if cand == who:
                    out.append(("timeout", {"n": who}))
                else:
                    out.append(("vote", {"v": who, "c": cand, "t": e.term}))
            elif kind == "RaftLeader":
                out.append(("win", {"c": who}))
            elif kind == "RaftPeersChanged":
                out.append(("reconfigure", {"l": who}))
            elif kind == "NodeRestarted":
                out.append(("restart", {"n": who}))
            elif kind == "RaftStarted":
                if e.reason == "full-restart":
                    if not out or out[-1][0] != "full_restart":
                        out.append(("full_restart", {}))
                elif e.reason == "joining":
                    out.append(("rejoin", {"n": who}))
        return out

    def _delivered(self, action: tuple[Any, ...], events: Sequence[Any],
                   before: Mapping[str, Hashable | None], after: Mapping[str, Hashable | None]
                   ) -> list[tuple[str, dict[str, int]]]:
        src, dst, msg = action[1], action[2], action[3]
        if dst not in self.index:
            return []
        pre: Any = getattr(before.get(dst), "raft", None)
        post: Any = getattr(after.get(dst), "raft", None)
        if pre is None or post is None:
            return []
        if type(msg).__name__ == "AppendConf" and msg.term >= pre.term and src in self.index:
            return [("append", {"l": self.index[src], "n": self.index[dst]})]
        voted = any(type(e).__name__ == "RaftVote" for e in events)
        if post.term > pre.term and not voted:
            return [("step_down", {"n": self.index[dst], "t": post.term})]
        return []

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
* **faults**: restart, crash (the node stays down), and the network: vote requests and votes
  are a monotone set of sent messages, so any of them may arrive late, twice or never.

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
  stickiness (a follower refuses a higher term while its leader's lease holds) is not modelled:
  the model grants more votes than the refimpl;
* a node learns any higher term (``step_down``): from any message of that term;
* a full partition restart is one step for all peers, and starts the group afresh: the
  messages of the old incarnations are dropped, as the monitors forget their leaders and votes
  (specs/ignite.py ``OneLeader``, ``Restart``).

Proof status of IGN-ONE-LEADER for any size: the spec's own consecution follows from the
lemmas for every action (tests/models/test_ignite.py); the consecution of the two blockers
lemmas is not established (Z3 answers unknown within 30 s per query). They may not be
inductive as the design reads: a node whose vote of term t is still in flight to its candidate
can be removed and re-added by a leader of a term below t when the removal's quorum of the old
peers avoids both the node and that candidate (five peers or more), after which its new
incarnation can vote again in term t. At three or four peers every quorum of the old peers
without the node holds the candidate.

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
    Universe,
    Var,
)

NODE, CONFIG, QUORUM = "Node", "Config", "Quorum"

#: ``await``: running or never restarted (0); restarted, a configuration without it not yet put
#: in place (1); removed, waiting for a configuration with it (2); crashed for good (3)
RUNNING, RESTARTED, REMOVED, DOWN = 0, 1, 2, 3

#: refimpl variants this encoding expresses -> the spec each one's flaw breaks
VARIANTS: dict[str, str | None] = {
    "fixed": None,
    "ig-restart-keeps-peer": "IGN-RESTART",
}

DESIGN = "001 (IGNITE-16668) Problem (Upd 1), Solution"


def _sel(a: z3.ExprRef, *idx: z3.ExprRef) -> z3.ExprRef:
    for i in idx:
        a = z3.Select(a, i)
    return a


def _set(u: Universe, sort: str) -> z3.SortRef:
    return z3.ArraySort(u[sort], u.bool)


def _fn(u: Universe, *sorts: str | z3.SortRef) -> z3.SortRef:
    """An array sort ``s1 -> s2 -> ... -> last``; names are sorts of the universe, "Int" ints."""
    def sort_of(s: str | z3.SortRef) -> z3.SortRef:
        if isinstance(s, z3.SortRef):
            return s
        return u.int if s == "Int" else (u.bool if s == "Bool" else u[s])
    out = sort_of(sorts[-1])
    for s in reversed(sorts[:-1]):
        out = z3.ArraySort(sort_of(s), out)
    return out


def _variables() -> tuple[Var, ...]:
    def v(name: str, *sorts: str, doc: str = "", ghost: bool = False) -> Var:
        if len(sorts) == 1:
            s = sorts[0]
            return Var(name, lambda u: _fn(u, s), doc, ghost)
        return Var(name, lambda u: _fn(u, *sorts), doc, ghost)

    return (
        # rigid: what configurations and quorums are
        v("member", CONFIG, NODE, "Bool", doc="the peers of a configuration"),
        v("qm", QUORUM, NODE, "Bool", doc="the nodes of a quorum"),
        v("quorum", QUORUM, CONFIG, "Bool", doc="q is a quorum (a majority) of c"),
        # the configuration put in place
        v("conf", CONFIG, doc="the latest configuration put in place by a leader"),
        v("cver", "Int", doc="its index: how many configurations were put in place"),
        v("cterm", "Int", doc="the term of the leader that put it in place"),
        # raft nodes
        v("running", NODE, "Bool", doc="the node's raft node runs"),
        v("term", NODE, "Int", doc="currentTerm"),
        v("voted", NODE, "Bool", doc="votedFor is set in the current term"),
        v("vfor", NODE, NODE, doc="votedFor"),
        v("cand", NODE, "Bool", doc="role candidate"),
        v("lead", NODE, "Bool", doc="role leader"),
        v("logterm", NODE, "Int", doc="the term of the log's latest configuration entry"),
        v("logidx", NODE, "Int", doc="the index of the log's latest configuration"),
        v("ccfg", NODE, CONFIG, doc="the configuration a candidate stood with"),
        v("await_", NODE, "Int", doc="the reentry: 0 running, 1 restarted, 2 removed, 3 down"),
        # the network: vote requests (candidate, term) with their log's position, and votes
        v("req", NODE, "Int", "Bool", doc="RequestVote(term) sent by the candidate"),
        v("rlt", NODE, "Int", "Int", doc="the request's last log term"),
        v("rix", NODE, "Int", "Int", doc="the request's last log index"),
        v("vmsg", NODE, "Int", NODE, "Bool", doc="Vote(term, granted) sent by the voter"),
        # ghosts: the monitors' history
        v("lby", NODE, "Int", "Bool", doc="n became leader in term t", ghost=True),
        v("two", "Bool", doc="a second leader was elected in some term", ghost=True),
        v("phase", NODE, "Int", doc="IGN-RESTART's phase: 0, 1 restarted, 2 removed",
          ghost=True),
        v("rvote", NODE, "Int", NODE, "Bool", doc="votes granted since the node's restart",
          ghost=True),
        v("ackq", QUORUM, doc="the quorum of conf that acknowledged it (proof ghost)",
          ghost=True),
    )


def _lam(u: Universe, sort: str, body: Any) -> z3.ArrayRef:
    """The array ``x -> body(x)``: a lambda, or in a finite universe one store per element
    (quantifier-free, for bounded model checking)."""
    if u.finite:
        elements = u.elements(sort)
        out = z3.K(u[sort], body(elements[0]))
        for e in elements[1:]:
            out = z3.Store(out, e, body(e))
        return out
    x = z3.Const(f"lam_{sort}", u[sort])
    return z3.Lambda([x], body(x))


def system(variant: str = "fixed") -> System:
    """The raft group of design 001 with in-memory nodes; ``variant`` a key of `VARIANTS`."""
    if variant not in VARIANTS:
        raise ValueError(f"unknown variant {variant!r}")
    keeps_peer = variant == "ig-restart-keeps-peer"
    variables = _variables()

    def u_of(f: Frame) -> Universe:
        return f.u

    # --- quorum relations --------------------------------------------------------------

    def is_quorum(f: Frame, q: z3.ExprRef, c: z3.ExprRef) -> z3.BoolRef:
        return z3.Select(z3.Select(f.quorum, q), c)

    def in_q(f: Frame, q: z3.ExprRef, n: z3.ExprRef) -> z3.BoolRef:
        return _sel(f.qm, q, n)

    def mem(f: Frame, c: z3.ExprRef, n: z3.ExprRef) -> z3.BoolRef:
        return _sel(f.member, c, n)

    def quorum_members(f: Frame) -> z3.BoolRef:
        u = u_of(f)
        return u.forall([QUORUM, CONFIG, NODE], lambda q, c, n: z3.Implies(
            z3.And(is_quorum(f, q, c), in_q(f, q, n)), mem(f, c, n)))

    def quorum_intersection(f: Frame) -> z3.BoolRef:
        u = u_of(f)
        return u.forall([CONFIG, QUORUM, QUORUM], lambda c, q1, q2: z3.Implies(
            z3.And(is_quorum(f, q1, c), is_quorum(f, q2, c)),
            u.exists([NODE], lambda n: z3.And(in_q(f, q1, n), in_q(f, q2, n)))))

    def majorities(f: Frame) -> z3.BoolRef:
        """Finite universes: the quorums of a configuration are its majorities."""
        u = u_of(f)
        nodes = u.elements(NODE)

        def size(s: Any) -> z3.ArithRef:
            return z3.Sum([z3.If(s(n), 1, 0) for n in nodes])
        return u.forall([QUORUM, CONFIG], lambda q, c: is_quorum(f, q, c) == z3.And(
            *[z3.Implies(in_q(f, q, n), mem(f, c, n)) for n in nodes],
            2 * size(lambda n: in_q(f, q, n)) > size(lambda n: mem(f, c, n))))

    # --- initial state ------------------------------------------------------------------

    def init(f: Frame) -> z3.BoolRef:
        u = u_of(f)
        rigid = [majorities(f)] if u.finite else []
        return z3.And(
            *rigid, quorum_members(f), quorum_intersection(f),
            f.cver == 0, f.cterm == 0, is_quorum(f, f.ackq, f.conf),
            # finite universes: the group starts on every node (the refimpl's stable set)
            *([u.forall([NODE], lambda n: mem(f, f.conf, n))] if u.finite else []),
            u.forall([NODE], lambda n: z3.And(
                _sel(f.running, n) == mem(f, f.conf, n),
                _sel(f.term, n) == 0, z3.Not(_sel(f.voted, n)), z3.Not(_sel(f.cand, n)),
                z3.Not(_sel(f.lead, n)), _sel(f.logterm, n) == 0, _sel(f.logidx, n) == 0,
                _sel(f.await_, n) == RUNNING, _sel(f.phase, n) == 0,
                _sel(f.ccfg, n) == f.conf)),
            f.req == z3.K(u[NODE], z3.K(u.int, z3.BoolVal(False, u.ctx))),
            f.vmsg == z3.K(u[NODE], z3.K(u.int, z3.K(u[NODE], z3.BoolVal(False, u.ctx)))),
            f.rvote == z3.K(u[NODE], z3.K(u.int, z3.K(u[NODE], z3.BoolVal(False, u.ctx)))),
            f.lby == z3.K(u[NODE], z3.K(u.int, z3.BoolVal(False, u.ctx))), z3.Not(f.two),
        )

    # --- helpers for effects -----------------------------------------------------------

    def upd(a: z3.ExprRef, n: z3.ExprRef, value: z3.ExprRef) -> z3.ArrayRef:
        return z3.Store(a, n, value)

    def upd2(a: z3.ExprRef, n: z3.ExprRef, t: z3.ExprRef, value: z3.ExprRef) -> z3.ArrayRef:
        return z3.Store(a, n, z3.Store(z3.Select(a, n), t, value))

    def upd3(a: z3.ExprRef, n: z3.ExprRef, t: z3.ExprRef, c: z3.ExprRef,
             value: z3.ExprRef) -> z3.ArrayRef:
        inner = z3.Select(a, n)
        return z3.Store(a, n, z3.Store(inner, t, z3.Store(z3.Select(inner, t), c, value)))

    def fresh(pre: Frame, post: Frame, n: z3.ExprRef, running: z3.BoolRef) -> list[z3.BoolRef]:
        """The node's raft node with empty meta and log (``_start_raft``; in-memory restart)."""
        return [post.running == upd(pre.running, n, running),
                post.term == upd(pre.term, n, z3.IntVal(0, pre.u.ctx)),
                post.voted == upd(pre.voted, n, z3.BoolVal(False, pre.u.ctx)),
                post.cand == upd(pre.cand, n, z3.BoolVal(False, pre.u.ctx)),
                post.lead == upd(pre.lead, n, z3.BoolVal(False, pre.u.ctx)),
                post.logterm == upd(pre.logterm, n, z3.IntVal(0, pre.u.ctx)),
                post.logidx == upd(pre.logidx, n, z3.IntVal(0, pre.u.ctx))]

    fresh_vars = ("running", "term", "voted", "cand", "lead", "logterm", "logidx")

    def T(f: Frame, n: z3.ExprRef) -> z3.ArithRef:
        return _sel(f.term, n)

    # --- actions -----------------------------------------------------------------------

    def timeout_guard(pre: Frame, p: Params) -> z3.BoolRef:
        n = p["n"]
        return z3.And(_sel(pre.running, n), mem(pre, pre.conf, n), z3.Not(_sel(pre.lead, n)),
                      _sel(pre.logidx, n) == pre.cver)

    def timeout_effect(pre: Frame, post: Frame, p: Params) -> z3.BoolRef:
        n = p["n"]
        t = T(pre, n) + 1
        tt = z3.BoolVal(True, pre.u.ctx)
        return z3.And(
            post.term == upd(pre.term, n, t), post.voted == upd(pre.voted, n, tt),
            post.vfor == upd(pre.vfor, n, n), post.cand == upd(pre.cand, n, tt),
            post.ccfg == upd(pre.ccfg, n, pre.conf),
            post.req == upd2(pre.req, n, t, tt),
            post.rlt == upd2(pre.rlt, n, t, _sel(pre.logterm, n)),
            post.rix == upd2(pre.rix, n, t, _sel(pre.logidx, n)),
            post.vmsg == upd3(pre.vmsg, n, t, n, tt),
            post.rvote == upd3(pre.rvote, n, t, n,
                               z3.Or(_sel(pre.rvote, n, t, n), _sel(pre.phase, n) != 0)))

    def vote_guard(pre: Frame, p: Params) -> z3.BoolRef:
        v, c, t = p["v"], p["c"], p["t"]
        lt, ix = _sel(pre.rlt, c, t), _sel(pre.rix, c, t)
        return z3.And(
            _sel(pre.running, v), v != c, _sel(pre.req, c, t), t >= T(pre, v),
            z3.Or(t > T(pre, v), z3.Not(_sel(pre.voted, v)), _sel(pre.vfor, v) == c),
            z3.Or(lt > _sel(pre.logterm, v),
                  z3.And(lt == _sel(pre.logterm, v), ix >= _sel(pre.logidx, v))))

    def vote_effect(pre: Frame, post: Frame, p: Params) -> z3.BoolRef:
        v, c, t = p["v"], p["c"], p["t"]
        tt, ff = z3.BoolVal(True, pre.u.ctx), z3.BoolVal(False, pre.u.ctx)
        return z3.And(
            post.term == upd(pre.term, v, t), post.voted == upd(pre.voted, v, tt),
            post.vfor == upd(pre.vfor, v, c), post.cand == upd(pre.cand, v, ff),
            post.lead == upd(pre.lead, v, ff), post.vmsg == upd3(pre.vmsg, v, t, c, tt),
            post.rvote == upd3(pre.rvote, v, t, c,
                               z3.Or(_sel(pre.rvote, v, t, c), _sel(pre.phase, v) != 0)))

    def step_down_guard(pre: Frame, p: Params) -> z3.BoolRef:
        return z3.And(_sel(pre.running, p["n"]), p["t"] > T(pre, p["n"]))

    def step_down_effect(pre: Frame, post: Frame, p: Params) -> z3.BoolRef:
        n = p["n"]
        ff = z3.BoolVal(False, pre.u.ctx)
        return z3.And(post.term == upd(pre.term, n, p["t"]),
                      post.voted == upd(pre.voted, n, ff), post.cand == upd(pre.cand, n, ff),
                      post.lead == upd(pre.lead, n, ff))

    def win_guard(pre: Frame, p: Params) -> z3.BoolRef:
        c, q = p["c"], p["q"]
        u = pre.u
        return z3.And(_sel(pre.running, c), _sel(pre.cand, c),
                      is_quorum(pre, q, _sel(pre.ccfg, c)),
                      u.forall([NODE], lambda n: z3.Implies(
                          in_q(pre, q, n), _sel(pre.vmsg, n, T(pre, c), c))))

    def win_effect(pre: Frame, post: Frame, p: Params) -> z3.BoolRef:
        c = p["c"]
        tt, ff = z3.BoolVal(True, pre.u.ctx), z3.BoolVal(False, pre.u.ctx)
        t = T(pre, c)
        other = pre.u.exists([NODE], lambda n: z3.And(n != c, _sel(pre.lby, n, t)))
        return z3.And(post.cand == upd(pre.cand, c, ff), post.lead == upd(pre.lead, c, tt),
                      post.lby == upd2(pre.lby, c, t, tt), post.two == z3.Or(pre.two, other))

    def append_guard(pre: Frame, p: Params) -> z3.BoolRef:
        ld, n = p["l"], p["n"]
        return z3.And(_sel(pre.running, ld), _sel(pre.lead, ld), _sel(pre.running, n), n != ld,
                      T(pre, ld) >= T(pre, n))

    def append_effect(pre: Frame, post: Frame, p: Params) -> z3.BoolRef:
        ld, n = p["l"], p["n"]
        ff = z3.BoolVal(False, pre.u.ctx)
        same = T(pre, n) == T(pre, ld)
        return z3.And(
            post.term == upd(pre.term, n, T(pre, ld)),
            post.voted == upd(pre.voted, n, z3.And(same, _sel(pre.voted, n))),
            post.cand == upd(pre.cand, n, ff), post.lead == upd(pre.lead, n, ff),
            post.logterm == upd(pre.logterm, n, _sel(pre.logterm, ld)),
            post.logidx == upd(pre.logidx, n, _sel(pre.logidx, ld)))

    def reconf_guard(pre: Frame, p: Params) -> z3.BoolRef:
        ld, c, q1, q2 = p["l"], p["c"], p["q1"], p["q2"]
        return z3.And(
            _sel(pre.running, ld), _sel(pre.lead, ld), _sel(pre.logidx, ld) == pre.cver,
            is_quorum(pre, q1, pre.conf), is_quorum(pre, q2, c),
            pre.u.forall([NODE], lambda n: z3.Implies(
                z3.Or(in_q(pre, q1, n), in_q(pre, q2, n)),
                z3.And(_sel(pre.running, n), T(pre, n) <= T(pre, ld)))))

    def reconf_effect(pre: Frame, post: Frame, p: Params) -> z3.BoolRef:
        ld, c, q1, q2 = p["l"], p["c"], p["q1"], p["q2"]
        u = pre.u
        tl = T(pre, ld)
        ver = pre.cver + 1

        def acked(n: z3.ExprRef) -> z3.BoolRef:
            return z3.Or(in_q(pre, q1, n), in_q(pre, q2, n), n == ld)
        return z3.And(
            post.conf == c, post.cver == ver, post.cterm == tl, post.ackq == q2,
            post.term == _lam(u, NODE, lambda n: z3.If(acked(n), tl, T(pre, n))),
            post.voted == _lam(u, NODE, lambda n: z3.And(
                _sel(pre.voted, n), z3.Or(z3.Not(acked(n)), T(pre, n) == tl))),
            post.cand == _lam(u, NODE, lambda n: z3.And(_sel(pre.cand, n), z3.Not(acked(n)))),
            post.lead == _lam(u, NODE, lambda n: z3.If(
                n == ld, mem(pre, c, ld), z3.And(_sel(pre.lead, n), z3.Not(acked(n))))),
            post.logterm == _lam(u, NODE, lambda n: z3.If(acked(n), tl, _sel(pre.logterm, n))),
            post.logidx == _lam(u, NODE, lambda n: z3.If(acked(n), ver, _sel(pre.logidx, n))),
            post.await_ == _lam(u, NODE, lambda n: z3.If(
                z3.And(_sel(pre.await_, n) == RESTARTED, z3.Not(mem(pre, c, n))), REMOVED,
                _sel(pre.await_, n))),
            post.phase == _lam(u, NODE, lambda n: z3.If(
                z3.And(_sel(pre.phase, n) == 1, z3.Not(mem(pre, c, n))), 2,
                z3.If(z3.And(_sel(pre.phase, n) == 2, mem(pre, c, n)), 0,
                      _sel(pre.phase, n)))))

    def restart_guard(pre: Frame, p: Params) -> z3.BoolRef:
        return _sel(pre.running, p["n"])

    def restart_effect(pre: Frame, post: Frame, p: Params) -> z3.BoolRef:
        n = p["n"]
        u = pre.u
        member_now = mem(pre, pre.conf, n)
        out = fresh(pre, post, n, z3.BoolVal(keeps_peer, u.ctx))
        out += [post.phase == upd(pre.phase, n, z3.If(member_now, 1, 2)),
                post.rvote == upd(pre.rvote, n,
                                  z3.K(u.int, z3.K(u[NODE], z3.BoolVal(False, u.ctx))))]
        if keeps_peer:
            out.append(post.await_ == pre.await_)
        else:
            out.append(post.await_ == upd(pre.await_, n, z3.If(member_now, RESTARTED, RUNNING)))
        return z3.And(*out)

    def crash_effect(pre: Frame, post: Frame, p: Params) -> z3.BoolRef:
        n = p["n"]
        ff = z3.BoolVal(False, pre.u.ctx)
        return z3.And(post.running == upd(pre.running, n, ff),
                      post.cand == upd(pre.cand, n, ff), post.lead == upd(pre.lead, n, ff),
                      post.await_ == upd(pre.await_, n, z3.IntVal(DOWN, pre.u.ctx)))

    def stop_guard(pre: Frame, p: Params) -> z3.BoolRef:
        n = p["n"]
        return z3.And(_sel(pre.running, n), z3.Not(mem(pre, pre.conf, n)),
                      z3.Not(_sel(pre.lead, n)))

    def stop_effect(pre: Frame, post: Frame, p: Params) -> z3.BoolRef:
        n = p["n"]
        ff = z3.BoolVal(False, pre.u.ctx)
        return z3.And(post.running == upd(pre.running, n, ff), post.cand == upd(pre.cand, n, ff))

    def rejoin_guard(pre: Frame, p: Params) -> z3.BoolRef:
        n = p["n"]
        return z3.And(z3.Not(_sel(pre.running, n)), mem(pre, pre.conf, n),
                      z3.Or(_sel(pre.await_, n) == RUNNING, _sel(pre.await_, n) == REMOVED))

    def rejoin_effect(pre: Frame, post: Frame, p: Params) -> z3.BoolRef:
        n = p["n"]
        return z3.And(*fresh(pre, post, n, z3.BoolVal(True, pre.u.ctx)),
                      post.await_ == upd(pre.await_, n, z3.IntVal(RUNNING, pre.u.ctx)))

    def full_guard(pre: Frame, p: Params) -> z3.BoolRef:
        u = pre.u
        return u.forall([NODE], lambda n: z3.And(
            z3.Not(_sel(pre.running, n)),
            z3.Implies(mem(pre, pre.conf, n), _sel(pre.await_, n) == RESTARTED)))

    def full_effect(pre: Frame, post: Frame, p: Params) -> z3.BoolRef:
        u = pre.u
        ff = z3.BoolVal(False, u.ctx)
        zero = z3.IntVal(0, u.ctx)
        return z3.And(
            post.running == _lam(u, NODE, lambda n: mem(pre, pre.conf, n)),
            post.term == z3.K(u[NODE], zero), post.voted == z3.K(u[NODE], ff),
            post.cand == z3.K(u[NODE], ff), post.lead == z3.K(u[NODE], ff),
            post.logterm == z3.K(u[NODE], zero), post.logidx == z3.K(u[NODE], zero),
            post.cver == 0, post.cterm == 0,
            post.ccfg == z3.K(u[NODE], pre.conf),
            post.await_ == _lam(u, NODE, lambda n: z3.If(
                mem(pre, pre.conf, n), RUNNING, _sel(pre.await_, n))),
            post.req == z3.K(u[NODE], z3.K(u.int, ff)),
            post.vmsg == z3.K(u[NODE], z3.K(u.int, z3.K(u[NODE], ff))),
            post.lby == z3.K(u[NODE], z3.K(u.int, ff)), z3.Not(post.two),
            post.phase == z3.K(u[NODE], zero),
            post.rvote == z3.K(u[NODE], z3.K(u.int, z3.K(u[NODE], ff))))

    actions = (
        Action("timeout", (("n", NODE),), timeout_guard, timeout_effect,
               ("term", "voted", "vfor", "cand", "ccfg", "req", "rlt", "rix", "vmsg", "rvote"),
               "raft election timeout: a new term, a vote for itself, RequestVote (_elect)"),
        Action("vote", (("v", NODE), ("c", NODE), ("t", "Int")), vote_guard, vote_effect,
               ("term", "voted", "vfor", "cand", "lead", "vmsg", "rvote"),
               "one vote per term to an up-to-date candidate (_on_request_vote)"),
        Action("step_down", (("n", NODE), ("t", "Int")), step_down_guard, step_down_effect,
               ("term", "voted", "cand", "lead"), "a higher term seen (_step_down)"),
        Action("win", (("c", NODE), ("q", QUORUM)), win_guard, win_effect,
               ("cand", "lead", "lby", "two"),
               "a quorum of the candidate's configuration voted for it (_maybe_win, _ballot)"),
        Action("append", (("l", NODE), ("n", NODE)), append_guard, append_effect,
               ("term", "voted", "cand", "lead", "logterm", "logidx"),
               "a follower takes the leader's term and log (_on_append)"),
        Action("reconfigure", (("l", NODE), ("c", CONFIG), ("q1", QUORUM), ("q2", QUORUM)),
               reconf_guard, reconf_effect,
               ("conf", "cver", "cterm", "ackq", "term", "voted", "cand", "lead", "logterm",
                "logidx", "await_", "phase"),
               "001 On rebalance done: a leader puts a configuration in place (joint "
               "consensus: _change_peers, _stage_stable, _maybe_commit)"),
        Action("restart", (("n", NODE),), restart_guard, restart_effect,
               (*fresh_vars, "await_", "phase", "rvote"),
               "001 On in-memory partition restart (on_restart): term, vote and log lost",
               fault=True),
        Action("crash", (("n", NODE),), restart_guard, crash_effect,
               ("running", "cand", "lead", "await_"), "the node stops for good", fault=True),
        Action("stop", (("n", NODE),), stop_guard, stop_effect, ("running", "cand"),
               "the stable watch stops a node outside the peers (_stable_changed)"),
        Action("rejoin", (("n", NODE),), rejoin_guard, rejoin_effect,
               (*fresh_vars, "await_"),
               "001 Solution: a node back in the peers starts raft afresh (_pending_changed)"),
        Action("full_restart", (), full_guard, full_effect,
               ("running", "term", "voted", "cand", "lead", "logterm", "logidx", "cver",
                "cterm", "ccfg", "await_", "req", "vmsg", "lby", "two", "phase", "rvote"),
               "001 onParitionStart: every peer empty, the group starts again from term 0",
               fault=True),
    )

    # --- properties ---------------------------------------------------------------------

    def one_leader(f: Frame) -> z3.BoolRef:
        return z3.Not(f.two)

    def restart_step(pre: Frame, post: Frame, action: str, p: Params) -> z3.BoolRef:
        if action != "win":
            return z3.BoolVal(True, pre.u.ctx)
        c, q = p["c"], p["q"]
        t = T(pre, c)
        return pre.u.forall([NODE], lambda n: z3.Implies(
            in_q(pre, q, n), z3.Not(z3.And(_sel(pre.phase, n) != 0,
                                           _sel(pre.rvote, n, t, c)))))

    lemmas = _lemmas(is_quorum, in_q, mem, quorum_members, quorum_intersection)
    properties = (
        Property("IGN-ONE-LEADER", state=one_leader,
                 formula="¬two, where win(c) in term t sets two if lby(n, t) for some n ≠ c "
                         "(lby: the monitor's term -> leader map); full_restart clears lby, "
                         "as the monitor forgets its leaders",
                 lemmas=tuple(lm.name for lm in lemmas)),
        Property("IGN-RESTART", step=restart_step,
                 formula="win(c,q): ∀n∈q. ¬(phase(n) ≠ 0 ∧ rvote(n, term(c), c)); phase: "
                         "1 at an in-memory restart, 2 once a configuration without n is put "
                         "in place, 0 once one with n is; rvote (votes granted while phase ≠ 0) "
                         "is cleared at each restart"),
    )
    return System(
        name="ignite", variant=variant, sorts=(NODE, CONFIG, QUORUM), variables=variables,
        init=init, actions=actions, properties=properties, lemmas=lemmas,
        sizes={NODE: 3, CONFIG: 2, QUORUM: 4}, design=DESIGN, describe=describe,
        abstractions=(
            "metastore rebalance -> some leader puts a configuration in place (reconfigure)",
            "joint consensus, replication to quorums and commit merged into one step",
            "append reads the leader's current log (ordered raft connections)",
            "a candidate stands with the latest configuration; no leader stickiness",
            "a full partition restart is one step and drops the old incarnations' messages",
        ))


def _lemmas(is_quorum: Any, in_q: Any, mem: Any, quorum_members: Any,
            quorum_intersection: Any) -> tuple[Lemma, ...]:
    """The strengthening of IGN-ONE-LEADER, each lemma with the design sentence it rests on."""

    def leads(f: Frame, n: z3.ExprRef, t: z3.ArithRef) -> z3.BoolRef:
        return _sel(f.lby, n, t)

    def ints(f: Frame, *names: str) -> list[z3.ArithRef]:
        return [z3.Int(f"lm_{n}", f.u.ctx) for n in names]

    def G(f: Frame, n: z3.ExprRef, t: z3.ArithRef, ld: z3.ExprRef) -> z3.BoolRef:
        """n never grants a vote in term t to another candidate than ld: stopped until removed
        (or down), or past t, or voted for ld in t, or holding an entry of term t (a candidate
        of t holds none)."""
        running = _sel(f.running, n)
        term = _sel(f.term, n)
        return z3.Or(
            z3.And(z3.Not(running), z3.Or(_sel(f.await_, n) == RESTARTED,
                                          _sel(f.await_, n) == DOWN)),
            z3.And(running, z3.Or(
                term > t,
                z3.And(term == t, _sel(f.voted, n), _sel(f.vfor, n) == ld),
                z3.And(term == t, _sel(f.logterm, n) == t))))

    def lt_le_term(f: Frame) -> z3.BoolRef:
        return f.u.forall([NODE], lambda n: z3.And(
            _sel(f.logterm, n) <= _sel(f.term, n), _sel(f.logterm, n) >= 0,
            _sel(f.logidx, n) <= f.cver, _sel(f.logidx, n) >= 0, f.cterm >= 0))

    def conf_entry(f: Frame) -> z3.BoolRef:
        """A node holding the latest configuration holds its entry: logterm = cterm."""
        return f.u.forall([NODE], lambda n: z3.Implies(
            _sel(f.logidx, n) == f.cver, _sel(f.logterm, n) == f.cterm))

    def requests(f: Frame) -> z3.BoolRef:
        (t,) = ints(f, "t")
        return f.u.forall([NODE], lambda c: z3.ForAll([t], z3.Implies(
            _sel(f.req, c, t), z3.And(_sel(f.rlt, c, t) < t, _sel(f.rix, c, t) <= f.cver))))

    def self_vote(f: Frame) -> z3.BoolRef:
        return f.u.forall([NODE], lambda n: z3.And(
            z3.Implies(z3.And(_sel(f.running, n), z3.Or(_sel(f.cand, n), _sel(f.lead, n))),
                       z3.And(_sel(f.voted, n), _sel(f.vfor, n) == n)),
            z3.Not(z3.And(_sel(f.cand, n), _sel(f.lead, n)))))

    def leader_ghost(f: Frame) -> z3.BoolRef:
        return f.u.forall([NODE], lambda n: z3.Implies(
            z3.And(_sel(f.running, n), _sel(f.lead, n)), leads(f, n, _sel(f.term, n))))

    def vote_sent(f: Frame) -> z3.BoolRef:
        return f.u.forall([NODE], lambda n: z3.Implies(
            z3.And(_sel(f.running, n), _sel(f.voted, n)),
            _sel(f.vmsg, n, _sel(f.term, n), _sel(f.vfor, n))))

    def blockers_conf(f: Frame) -> z3.BoolRef:
        (t,) = ints(f, "t")
        return f.u.forall([NODE, NODE, QUORUM], lambda ld, c, q: z3.ForAll([t], z3.Implies(
            z3.And(leads(f, ld, t), t > f.cterm, c != ld, is_quorum(f, q, f.conf)),
            f.u.exists([NODE], lambda n: z3.And(
                in_q(f, q, n), z3.Not(_sel(f.vmsg, n, t, c)), G(f, n, t, ld))))))

    def blockers_candidate(f: Frame) -> z3.BoolRef:
        return f.u.forall([NODE, NODE, QUORUM], lambda ld, c, q: z3.Implies(
            z3.And(leads(f, ld, _sel(f.term, c)), _sel(f.running, c), _sel(f.cand, c),
                   c != ld, is_quorum(f, q, _sel(f.ccfg, c))),
            f.u.exists([NODE], lambda n: z3.And(
                in_q(f, q, n), z3.Not(_sel(f.vmsg, n, _sel(f.term, c), c)),
                G(f, n, _sel(f.term, c), ld)))))

    def acknowledged(f: Frame) -> z3.BoolRef:
        """The quorum that acknowledged the configuration holds its entry or is past it."""
        return z3.And(is_quorum(f, f.ackq, f.conf), f.u.forall([NODE], lambda n: z3.Implies(
            in_q(f, f.ackq, n), z3.Or(
                z3.And(z3.Not(_sel(f.running, n)),
                       z3.Or(_sel(f.await_, n) == RESTARTED, _sel(f.await_, n) == DOWN)),
                z3.And(_sel(f.running, n), _sel(f.term, n) >= f.cterm)))))

    return (
        Lemma("quorum-members", quorum_members,
              "∀q c n. quorum(q,c) ∧ qm(q,n) → member(c,n)",
              "001 Problem: a raft group elects with the votes of its peers (a majority of the "
              "configuration)"),
        Lemma("quorum-intersection", quorum_intersection,
              "∀c q1 q2. quorum(q1,c) ∧ quorum(q2,c) → ∃n. qm(q1,n) ∧ qm(q2,n)",
              "001 Problem: \"two leaders will be elected which is illegal\": two majorities "
              "of one configuration share a node"),
        Lemma("log-below-term", lt_le_term, "∀n. 0 ≤ logterm(n) ≤ term(n) ∧ logidx(n) ≤ cver",
              "001 Problem: raft meta (term) and the stable raft log; an entry is written in "
              "its leader's term"),
        Lemma("latest-conf-entry", conf_entry, "∀n. logidx(n) = cver → logterm(n) = cterm",
              "001 On rebalance done: the configuration is put in place by a leader, in its "
              "term"),
        Lemma("request-log", requests, "∀c t. req(c,t) → rlt(c,t) < t ∧ rix(c,t) ≤ cver",
              "001 Problem: a candidate stands in a term above every entry of its log"),
        Lemma("self-vote", self_vote,
              "∀n. running ∧ (cand ∨ lead) → voted ∧ vfor = n; ¬(cand ∧ lead)",
              "001 Problem: a candidate votes for itself (raft's votedFor)"),
        Lemma("leader-ghost", leader_ghost, "∀n. running ∧ lead(n) → lby(n, term(n))",
              "001 Problem: a leader was elected in its term"),
        Lemma("vote-sent", vote_sent, "∀n. running ∧ voted(n) → vmsg(n, term(n), vfor(n))",
              "001 Problem: \"Node C could vote for Candidate A\": votedFor is the vote sent"),
        Lemma("acknowledged", acknowledged,
              "quorum(ackq, conf) ∧ ∀n∈ackq. stopped until removed ∨ term(n) ≥ cterm",
              "001 Solution: the configuration without (then with) the node is put in place by "
              "a leader, acknowledged by a quorum of it"),
        Lemma("blockers-conf", blockers_conf,
              "∀l c q t. leader(l,t) ∧ t > cterm ∧ c ≠ l ∧ quorum(q,conf) → ∃n∈q. "
              "¬vmsg(n,t,c) ∧ G(n,t,l)",
              "001 Solution: \"The peer-removal process should be finished before the "
              "restarting of the corresponding raft server node\": a node that forgot its vote "
              "stays out of every quorum until it is removed"),
        Lemma("blockers-candidate", blockers_candidate,
              "∀l c q. leader(l,term(c)) ∧ cand(c) ∧ c ≠ l ∧ quorum(q,ccfg(c)) → ∃n∈q. "
              "¬vmsg(n,term(c),c) ∧ G(n,term(c),l)",
              "001 Problem: two leaders in a term need two disjoint majorities"),
    )


def describe(f: Frame, model: z3.ModelRef) -> dict[str, Any]:
    """A state of a finite universe as JSON: the configuration and each node's raft."""
    u = f.u
    nodes = u.elements(NODE)

    def ev(term: z3.ExprRef) -> Any:
        value = model.eval(term, model_completion=True)
        if z3.is_int_value(value):
            return value.as_long()
        if z3.is_true(value) or z3.is_false(value):
            return z3.is_true(value)
        return str(value)

    conf = model.eval(f.conf, model_completion=True)
    out: dict[str, Any] = {
        "peers": [str(n) for n in nodes if ev(_sel(f.member, conf, n))],
        "cver": ev(f.cver), "cterm": ev(f.cterm)}
    for n in nodes:
        if not ev(_sel(f.running, n)):
            out[str(n)] = {"raft": "stopped", "await": ev(_sel(f.await_, n))}
            continue
        role = ("leader" if ev(_sel(f.lead, n)) else
                "candidate" if ev(_sel(f.cand, n)) else "follower")
        out[str(n)] = {"raft": role, "term": ev(_sel(f.term, n)),
                       "voted": ev(_sel(f.vfor, n)) if ev(_sel(f.voted, n)) else None,
                       "log": [ev(_sel(f.logterm, n)), ev(_sel(f.logidx, n))]}
    return out


# --- the map from the reference implementation ---------------------------------------------


class Refinement:
    """Maps refimpl/ignite.py states (``Member``, ``Raft``) and events to this model.

    Node names in `protocol.members` order are the ``Node`` elements 0..n-1. The metastore is
    not part of the model (abstracted to ``reconfigure``). A node's ``logterm``/``logidx`` is
    its log's latest configuration entry: its term, and the index of that configuration among
    the configurations put in place (the log's length less one, as the refimpl's log holds
    configuration entries only). Configurations and quorums are not pinned (they are rigid
    relations whose elements the driver's finite universe chooses); ``conf`` neither."""

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

    def actions(self, action: tuple[Any, ...], events: Sequence[Any]
                ) -> list[tuple[str, dict[str, int]]]:
        out: list[tuple[str, dict[str, int]]] = []
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

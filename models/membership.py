"""Hazelcast 3.9 membership (002 "Cluster Service Consistency Improvements") as a symbolic
transition system.

State (one Z3 array per variable, over the sort ``Member``):

* ``started``, ``alive``, ``joined``: a member has a state (an initial member, or a joiner that
  started), has not crashed, has installed a member list;
* ``ver``, ``view``, ``head``: its member list version, its member list (a set; the list's order
  is the members' ``age``, fixed, the initial members oldest), and the list's first member (the
  master of that list);
* ``master``: whom it follows (itself while it claims mastership), ``susp``: whom it suspects;
* ``claiming``, ``accepted``, ``best``: a mastership claim in progress, the members whose
  acceptance the claimant collected, and the greatest version it saw (its own and theirs);
* the network, as a monotone history of what was sent (never consumed, so delivery may be lost,
  repeated or reordered at will): ``pub``, ``publist``, ``pubver`` hold the ``k``-th list each
  master installed and published (its *position* ``k`` in that master's sequence of lists),
  ``npub`` how many it has; ``answered`` and ``respver`` the acceptances of claims and the versions
  they carried;
* ghost: ``last[p][m]``, the position of the latest list ``p`` applied from master ``m`` (the
  history MEM-VIEW-ORDER's monitor keeps).

Actions (002's sections): ``start`` a joiner (fault) and ``admit`` it at the master, version + 1
(Membership Update Process); ``remove`` a suspected member at the master, version + 1 (Member
Suspicion & Removal; the master never merely suspects); ``suspect`` (a slave, fault: the
failure detector or an explicit suspicion; a suspicion that leaves a slave suspecting every older
member of its list starts its mastership claim in the same step, as the reference implementation
does) and ``unsuspect`` (a heartbeat from a suspected member, which heartbeats the members of its
list it does not suspect: Removing Suspicion); ``accept``, ``collect`` and ``finalize``
(Mastership Claim Process: the claimant publishes itself and the members that accepted at the
greatest version it saw + 1); ``apply`` a published list (only from the master one follows,
only a greater version, only a list that holds oneself); ``crash`` (fault).

Variants: ``hz38-unordered-members`` (lists carry no version: a member applies any list that
differs from its own) and ``hz38-stale-master-list`` (a new master publishes its own list, less
the members that did not accept, at its own version + 1).

Abstractions, each checked edge by edge against the reference implementation
(``tests/models/test_membership.py``, the differential test):

* the network is the history of sent messages: a message in flight, lost or delivered twice is a
  message that may be delivered at any later step; a periodic publish sends a list that is already
  in the history, so it changes nothing;
* a claim's bookkeeping of whom it still waits for, retries and timeouts is not kept: the
  claimant may finalize at any time (a timeout gives up on those who did not answer), and a
  member's acceptance may be collected at any time while the claimant claims; ``finalize(p, q)``
  may collect ``q``'s answer in the same step (the last awaited answer; ``q = p``: none), a
  merged step that adds no state (``collect`` then ``finalize`` reaches the same one);
* the join request's route (a member that is not the master redirects the joiner) is one
  ``admit`` at the master, for a started joiner that has not joined;
* the members' order is a fixed ``age``: joiners are younger than the initial members (the
  differential scope has one joiner, so the order of joins cannot differ from the ages).
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
    member_set,
    store,
)
from partsafe.traces import events as ev
from partsafe.traces.events import Event

M = "Member"
#: the variants the encoding expresses, and the spec each flaw breaks (refimpl/membership.py)
VARIANTS: dict[str, str | None] = {
    "fixed": None,
    "hz38-unordered-members": "MEM-VIEW-ORDER",
    "hz38-stale-master-list": "MEM-VIEW-AGREEMENT",
}
#: the specs of the catalogue this model judges
SPECS = ("MEM-VIEW-ORDER", "MEM-VIEW-INTEGRITY", "MEM-VERSION", "MEM-MASTER-ONLY",
         "MEM-VIEW-AGREEMENT")
#: the default scope of bounded model checking: the explorer's default, 3 members and a joiner
DEFAULT_SIZES = {"members": 3, "joiners": 1}
#: its fault budgets, as the explorer's default scope (`partsafe check membership --help`)
DEFAULT_BUDGETS = {"crashes": 1, "joins": 1, "suspicions": 1}


SET = (M, "Bool")


def _variables() -> tuple[Var, ...]:
    return (
        Var("started", SET, "has a state: an initial member or a joiner that started"),
        Var("alive", SET, "started and not crashed"),
        Var("joined", SET, "has installed a member list"),
        Var("age", (M, "Int"), "the members' age order (smaller is older); fixed"),
        Var("ver", (M, "Int"), "the member list version"),
        Var("view", (M, SET), "the member list"),
        Var("head", (M, M), "the first member of the member list"),
        Var("master", (M, M), "the member it follows"),
        Var("susp", (M, SET), "the members it suspects"),
        Var("claiming", SET, "runs a mastership claim"),
        Var("accepted", (M, SET), "a claimant's collected acceptances"),
        Var("best", (M, "Int"), "a claimant's greatest version seen"),
        Var("npub", (M, "Int"), "how many lists a member installed as master", ghost=True),
        Var("pub", (M, ("Int", "Bool")), "the positions of a master's published lists",
            ghost=True),
        Var("publist", (M, ("Int", SET)), "the list a master published at a position",
            ghost=True),
        Var("pubver", (M, ("Int", "Int")), "its version", ghost=True),
        Var("claimed", SET, "started a mastership claim, at some time", ghost=True),
        Var("answered", (M, SET), "members that accepted a claimant's claim", ghost=True),
        Var("respver", (M, (M, "Int")), "the version an acceptance carried", ghost=True),
        Var("last", (M, (M, "Int")),
            "the position of the latest list a member applied from each master", ghost=True),
    )


class _Builder:
    """The formulas of one variant; `u` is set per frame (a frame knows its universe)."""

    def __init__(self, variant: str, members: int) -> None:
        if variant not in VARIANTS:
            raise ValueError(f"membership: no symbolic form of variant {variant!r}; known: "
                             f"{', '.join(VARIANTS)}")
        self.versioned = variant != "hz38-unordered-members"
        self.discover = variant != "hz38-stale-master-list"
        self.members = members

    # -- helpers over one frame ----------------------------------------------------------------

    @staticmethod
    def has(s: Any, x: z3.ExprRef) -> z3.BoolRef:
        return s[x]

    def is_master(self, f: Frame, m: z3.ExprRef) -> z3.BoolRef:
        return z3.And(self.has(f.alive, m), self.has(f.joined, m),
                      z3.Not(self.has(f.claiming, m)), f.master[m] == m, f.head[m] == m,
                      self.has(f.view[m], m))

    def older_suspected(self, f: Frame, p: z3.ExprRef, of: z3.ExprRef,
                        susp: Any = None) -> z3.BoolRef:
        """``p`` suspects (``susp``: its suspects, by default ``susp[p]``) every member of its
        list older than ``of``."""
        row = f.susp[p] if susp is None else susp
        return f.u.forall([M], lambda x: z3.Implies(
            z3.And(self.has(f.view[p], x), f.age[x] < f.age[of]), self.has(row, x)))

    def claims(self, f: Frame, p: z3.ExprRef, susp: Any) -> z3.BoolRef:
        """A suspicion that leaves ``p`` (not claiming, in its own list) suspecting ``susp``,
        every member of its list older than itself, starts ``p``'s mastership claim (002
        Mastership Claim Process: "If a slave suspects all members older than itself in the
        member list, it starts the mastership claim process")."""
        return z3.And(z3.Not(self.has(f.claiming, p)), self.has(f.view[p], p),
                      self.older_suspected(f, p, p, susp))

    def publish(self, pre: Frame, m: z3.ExprRef, view: z3.ArrayRef, version: z3.ArithRef
                ) -> dict[str, z3.ExprRef]:
        """``m`` installs ``view`` at ``version`` as master, and publishes it."""
        k = pre.npub[m] + 1
        return {
            "view": store(pre.view, m, view),
            "ver": store(pre.ver, m, version),
            "head": store(pre.head, m, m),
            "master": store(pre.master, m, m),
            "npub": store(pre.npub, m, k),
            "pub": store(pre.pub, m, store(pre.pub[m], k, True)),
            "publist": store(pre.publist, m, store(pre.publist[m], k, view)),
            "pubver": store(pre.pubver, m, store(pre.pubver[m], k, version)),
            "last": store(pre.last, m, store(pre.last[m], m, k))}

    PUBLISH = ("view", "ver", "head", "master", "npub", "pub", "publist", "pubver", "last")

    # -- init ----------------------------------------------------------------------------------

    def init(self, f: Frame) -> z3.BoolRef:
        """The initial members all hold the initial list, at one version, from its oldest
        member; joiners have not started (refimpl: version = number of initial members)."""
        u = f.u
        if u.finite:
            els = u.elements(M)
            initial = els[: self.members]
            iset = member_set(u, initial)
            h = initial[0]
            v0 = z3.IntVal(len(initial), u.ctx)
            ages = z3.And(*[f.age[x] == i for i, x in enumerate(els)])
        else:
            iset = u.var("initial", SET)
            h = z3.Const("oldest", u[M])
            v0 = z3.Int("v0", u.ctx)
            ages = z3.And(
                u.forall([M, M], lambda x, y: z3.Implies(x != y, f.age[x] != f.age[y])),
                u.forall([M, M], lambda x, y: z3.Implies(
                    z3.And(self.has(iset, x), z3.Not(self.has(iset, y))), f.age[x] < f.age[y])),
                u.forall([M], lambda x: z3.Implies(self.has(iset, x), f.age[h] <= f.age[x])))
        # pointwise (no array equality under a quantifier), so that a proof's initiation
        # queries stay in the fragment Z3 decides
        def member(x: z3.ExprRef) -> z3.BoolRef:
            ini = self.has(iset, x)
            return z3.And(
                self.has(f.started, x) == ini, self.has(f.alive, x) == ini,
                self.has(f.joined, x) == ini, z3.Not(self.has(f.claiming, x)),
                z3.Implies(ini, z3.And(f.ver[x] == v0, f.head[x] == h, f.master[x] == h)),
                z3.Not(self.has(f.claimed, x)),
                f.npub[x] == z3.If(x == h, 1, 0))

        def pair(x: z3.ExprRef, y: z3.ExprRef) -> z3.BoolRef:
            ini = self.has(iset, x)
            return z3.And(
                z3.Implies(ini, f.view[x][y] == iset[y]),
                z3.Not(f.susp[x][y]), z3.Not(f.answered[x][y]),
                f.last[x][y] == z3.If(z3.And(ini, y == h), 1, 0))

        published = u.forall([M], lambda x: u.forall_int(1, lambda k: f.pub[x][k] == z3.And(
            x == h, k == 1), prefix="ik"))
        first = u.forall([M], lambda y: f.publist[h][1][y] == iset[y])
        return z3.And(self.has(iset, h), v0 >= 0, ages, u.forall([M], member),
                      u.forall([M, M], pair), published, first, f.pubver[h][1] == v0)

    # -- actions -------------------------------------------------------------------------------

    def actions(self) -> tuple[Action, ...]:
        has = self.has

        def start_g(f: Frame, a: Params) -> z3.BoolRef:
            return z3.Not(has(f.started, a["j"]))

        def start_e(pre: Frame, a: Params) -> dict[str, z3.ExprRef]:
            j, u = a["j"], pre.u
            return {"started": store(pre.started, j, True),
                    "alive": store(pre.alive, j, True),
                    "ver": store(pre.ver, j, 0),
                    "view": store(pre.view, j, u.const(SET, z3.BoolVal(False, u.ctx)))}

        def admit_g(f: Frame, a: Params) -> z3.BoolRef:
            m, j = a["m"], a["j"]
            return z3.And(self.is_master(f, m), has(f.started, j), z3.Not(has(f.joined, j)),
                          z3.Not(has(f.view[m], j)))

        def admit_e(pre: Frame, a: Params) -> dict[str, z3.ExprRef]:
            m, j = a["m"], a["j"]
            return self.publish(pre, m, store(pre.view[m], j, True), pre.ver[m] + 1)

        def remove_g(f: Frame, a: Params) -> z3.BoolRef:
            m, q = a["m"], a["q"]
            return z3.And(self.is_master(f, m), has(f.view[m], q), q != m)

        def remove_e(pre: Frame, a: Params) -> dict[str, z3.ExprRef]:
            m, q = a["m"], a["q"]
            return {**self.publish(pre, m, store(pre.view[m], q, False), pre.ver[m] + 1),
                    "susp": store(pre.susp, m, store(pre.susp[m], q, False))}

        def suspect_g(f: Frame, a: Params) -> z3.BoolRef:
            p, q = a["p"], a["q"]
            return z3.And(has(f.alive, p), has(f.joined, p), z3.Not(self.is_master(f, p)),
                          p != q, z3.Not(has(f.susp[p], q)))

        def suspect_e(pre: Frame, a: Params) -> dict[str, z3.ExprRef]:
            p, q, u = a["p"], a["q"], pre.u
            susp = store(pre.susp[p], q, True)
            claims = self.claims(pre, p, susp)
            none = u.const(SET, z3.BoolVal(False, u.ctx))
            return {"susp": store(pre.susp, p, susp),
                    "accepted": store(pre.accepted, p, ite(
                        claims, none, store(pre.accepted[p], q, False))),
                    "claiming": store(pre.claiming, p, z3.Or(pre.claiming[p], claims)),
                    "claimed": store(pre.claimed, p, z3.Or(pre.claimed[p], claims)),
                    "master": store(pre.master, p, z3.If(claims, p, pre.master[p])),
                    "answered": store(pre.answered, p, ite(claims, none, pre.answered[p])),
                    "best": store(pre.best, p, z3.If(claims, pre.ver[p], pre.best[p]))}

        def unsuspect_g(f: Frame, a: Params) -> z3.BoolRef:
            p, q = a["p"], a["q"]
            # q heartbeats the members of its list it does not suspect (002 Member Suspicion
            # & Removal: "heartbeat ... messages are not sent to that member")
            return z3.And(has(f.alive, p), has(f.alive, q), has(f.susp[p], q),
                          has(f.view[p], q), z3.Not(has(f.claiming, p)),
                          f.master[p] == f.head[p], has(f.joined, q), has(f.view[q], p),
                          z3.Not(has(f.susp[q], p)))

        def unsuspect_e(pre: Frame, a: Params) -> dict[str, z3.ExprRef]:
            p, q = a["p"], a["q"]
            return {"susp": store(pre.susp, p, store(pre.susp[p], q, False))}

        def accept_g(f: Frame, a: Params) -> z3.BoolRef:
            q, p = a["q"], a["p"]
            # the claim may be answered after the claimant gave up waiting and published
            return z3.And(
                has(f.claimed, p), z3.Not(has(f.answered[p], q)), q != p,
                has(f.alive, q), has(f.joined, q), z3.Not(has(f.claiming, q)),
                has(f.view[q], p), z3.Not(has(f.susp[q], p)), self.older_suspected(f, q, p),
                z3.Or(f.master[q] == p,
                      z3.And(f.master[q] == f.head[q], has(f.susp[q], f.head[q]))))

        def accept_e(pre: Frame, a: Params) -> dict[str, z3.ExprRef]:
            q, p = a["q"], a["p"]
            return {
                "master": store(pre.master, q, p),
                "answered": store(pre.answered, p, store(pre.answered[p], q, True)),
                "respver": store(pre.respver, p, store(pre.respver[p], q, pre.ver[q]))}

        def collect_g(f: Frame, a: Params) -> z3.BoolRef:
            p, q = a["p"], a["q"]
            return z3.And(has(f.alive, p), has(f.claiming, p), has(f.answered[p], q),
                          z3.Not(has(f.accepted[p], q)), z3.Not(has(f.susp[p], q)))

        def collected(pre: Frame, p: z3.ExprRef, q: z3.ExprRef, when: z3.BoolRef
                      ) -> tuple[Any, z3.ArithRef]:
            """``p``'s acceptances and greatest version seen after it collects ``q``'s answer
            where ``when`` holds."""
            seen = pre.respver[p][q]
            return (store(pre.accepted[p], q, z3.Or(pre.accepted[p][q], when)),
                    z3.If(z3.And(when, seen > pre.best[p]), seen, pre.best[p]))

        def collect_e(pre: Frame, a: Params) -> dict[str, z3.ExprRef]:
            p, q = a["p"], a["q"]
            acc, best = collected(pre, p, q, z3.BoolVal(True, pre.u.ctx))
            return {"accepted": store(pre.accepted, p, acc), "best": store(pre.best, p, best)}

        def finalize_g(f: Frame, a: Params) -> z3.BoolRef:
            return z3.And(has(f.alive, a["p"]), has(f.claiming, a["p"]))

        def finalize_e(pre: Frame, a: Params) -> dict[str, z3.ExprRef]:
            # the answer of `q` that the claimant collects in the same step, where `collect`
            # is enabled (the last awaited answer; `q` = `p`: none)
            p, q, u = a["p"], a["q"], pre.u
            acc, best = collected(pre, p, q, collect_g(pre, {"p": p, "q": q}))
            sus = pre.susp[p]
            if self.discover:
                view = u.set_where(M, lambda x: z3.Or(
                    x == p, z3.And(has(acc, x), z3.Not(has(sus, x)))), "fx")
                version = best + 1
            else:
                old = pre.view[p]
                view = u.set_where(M, lambda x: z3.Or(
                    x == p, z3.And(has(old, x), has(acc, x), z3.Not(has(sus, x)))), "fx")
                version = pre.ver[p] + 1
            kept = u.set_where(M, lambda y: z3.And(has(sus, y), has(view, y)), "fy")
            return {**self.publish(pre, p, view, version),
                    "claiming": store(pre.claiming, p, False),
                    "susp": store(pre.susp, p, kept),
                    "accepted": store(pre.accepted, p, acc), "best": store(pre.best, p, best)}

        def apply_g(f: Frame, a: Params) -> z3.BoolRef:
            p, m, k = a["p"], a["m"], a["k"]
            lst = f.publist[m][k]
            fresh = (f.pubver[m][k] > f.ver[p] if self.versioned
                     else z3.Not(eq(lst, f.view[p])))
            return z3.And(has(f.alive, p), f.pub[m][k], p != m, has(lst, p), fresh,
                          z3.Implies(has(f.joined, p), f.master[p] == m))

        def apply_e(pre: Frame, a: Params) -> dict[str, z3.ExprRef]:
            p, m, k, u = a["p"], a["m"], a["k"], pre.u
            lst = pre.publist[m][k]
            kept = u.set_where(M, lambda y: z3.And(has(pre.susp[p], y), has(lst, y), y != m),
                               "ay")
            return {"view": store(pre.view, p, lst),
                    "ver": store(pre.ver, p, pre.pubver[m][k]),
                    "head": store(pre.head, p, m),
                    "master": store(pre.master, p, m),
                    "joined": store(pre.joined, p, True),
                    "susp": store(pre.susp, p, kept),
                    "last": store(pre.last, p, store(pre.last[p], m, k))}

        def false_suspicion(f: Frame, a: Params) -> z3.BoolRef:
            """A suspicion is the protocol's own (not a fault) where the failure detector or a
            heartbeat answered with an explicit suspicion must raise it: ``q`` is in ``p``'s
            list and has crashed, or sends ``p`` no heartbeats (it has not joined, its list
            leaves ``p`` out, or it suspects ``p``: 002 Member Suspicion & Removal, Explicit
            Suspicion; the reference's detector also waits for the messages in flight to ``q``,
            none in a quiescent state)."""
            p, q = a["p"], a["q"]
            return z3.Not(z3.And(has(f.view[p], q), z3.Or(
                z3.Not(has(f.alive, q)), z3.Not(has(f.joined, q)),
                z3.Not(has(f.view[q], p)), has(f.susp[q], p))))

        def false_removal(f: Frame, a: Params) -> z3.BoolRef:
            """A removal is the master's own (not a fault) where its failure detector or an
            explicit suspicion must raise it: ``q`` crashed, or is a master whose list leaves
            ``m`` out (it answers ``m``'s heartbeat), or follows another master (it answers
            ``m``'s periodic publish; 002 Explicit Suspicion)."""
            m, q = a["m"], a["q"]
            return z3.Not(z3.Or(z3.Not(has(f.alive, q)),
                                z3.And(self.is_master(f, q), z3.Not(has(f.view[q], m))),
                                z3.And(has(f.joined, q), f.master[q] != m)))

        def lost_joiner(f: Frame, a: Params) -> z3.BoolRef:
            return z3.Not(has(f.alive, a["j"]))

        def crash_g(f: Frame, a: Params) -> z3.BoolRef:
            return has(f.alive, a["p"])

        def crash_e(pre: Frame, a: Params) -> dict[str, z3.ExprRef]:
            return {"alive": store(pre.alive, a["p"], False)}

        sec = "002 "
        return (
            Action("start", (("j", M),), start_g, start_e, ("started", "alive", "ver", "view"),
                   sec + "Membership Update Process (a joiner starts)", fault=True,
                   budget="joins"),
            Action("admit", (("m", M), ("j", M)), admit_g, admit_e, self.PUBLISH,
                   sec + "Membership Update Process", fault=lost_joiner),
            Action("remove", (("m", M), ("q", M)), remove_g, remove_e, (*self.PUBLISH, "susp"),
                   sec + "Member Suspicion & Removal", fault=false_removal,
                   budget="suspicions"),
            Action("suspect", (("p", M), ("q", M)), suspect_g, suspect_e,
                   ("susp", "accepted", "claiming", "claimed", "master", "answered", "best"),
                   sec + "Member Suspicion & Removal; Explicit Suspicion; Mastership Claim "
                   "Process", fault=false_suspicion, budget="suspicions"),
            Action("unsuspect", (("p", M), ("q", M)), unsuspect_g, unsuspect_e, ("susp",),
                   sec + "Removing Suspicion"),
            Action("accept", (("q", M), ("p", M)), accept_g, accept_e,
                   ("master", "answered", "respver"), sec + "Mastership Claim Process"),
            Action("collect", (("p", M), ("q", M)), collect_g, collect_e, ("accepted", "best"),
                   sec + "Mastership Claim Process"),
            Action("finalize", (("p", M), ("q", M)), finalize_g, finalize_e,
                   (*self.PUBLISH, "claiming", "susp", "accepted", "best"),
                   sec + "Mastership Claim Process"),
            Action("apply", (("p", M), ("m", M), ("k", "Int")), apply_g, apply_e,
                   ("view", "ver", "head", "master", "joined", "susp", "last"),
                   sec + "Membership Update Process"),
            Action("crash", (("p", M),), crash_g, crash_e, ("alive",),
                   sec + "Member Suspicion & Removal", fault=True, budget="crashes"),
        )

    # -- properties and lemmas -----------------------------------------------------------------

    def properties(self) -> tuple[Property, ...]:
        has = self.has

        def order(pre: Frame, post: Frame, action: str, a: Params) -> z3.BoolRef:
            if action != "apply":
                return z3.BoolVal(True, pre.u.ctx)
            return a["k"] > pre.last[a["p"]][a["m"]]

        def version(pre: Frame, post: Frame, action: str, a: Params) -> z3.BoolRef:
            if action != "apply":
                return z3.BoolVal(True, pre.u.ctx)
            return pre.pubver[a["m"]][a["k"]] > pre.ver[a["p"]]

        def one_list(f: Frame) -> z3.BoolRef:
            return f.u.forall([M, M], lambda m, y: f.u.forall_int(2, lambda k1, k2: z3.Implies(
                z3.And(f.pub[m][k1], f.pub[m][k2], f.pubver[m][k1] == f.pubver[m][k2]),
                f.publist[m][k1][y] == f.publist[m][k2][y])))

        def integrity(f: Frame) -> z3.BoolRef:
            return f.u.forall([M], lambda p: z3.Implies(
                z3.And(has(f.alive, p), has(f.joined, p)), has(f.view[p], p)))

        def master_only(pre: Frame, post: Frame, action: str, a: Params) -> z3.BoolRef:
            if action in ("admit", "remove"):
                return pre.head[a["m"]] == a["m"]
            if action == "suspect":  # the claim it may start
                return z3.Implies(post.claiming[a["p"]] != pre.claiming[a["p"]],
                                  self.older_suspected(post, a["p"], a["p"]))
            return z3.BoolVal(True, pre.u.ctx)

        def agreement(f: Frame) -> z3.BoolRef:
            def same(p: z3.ExprRef, q: z3.ExprRef) -> z3.BoolRef:
                equal = eq(f.view[q], f.view[p])
                if self.versioned:
                    equal = z3.And(equal, f.ver[q] == f.ver[p])
                return z3.Implies(
                    z3.And(has(f.alive, p), has(f.joined, p), has(f.alive, q),
                           has(f.view[p], q)),
                    z3.And(has(f.joined, q), equal))
            return f.u.forall([M, M], same)

        out = [
            Property("MEM-VIEW-ORDER", step=order,
                     formula="apply(p, m, k) ⇒ k > last[p][m]: the position of a list in its "
                             "master's sequence grows along each member's applied lists",
                     lemmas=("dormant", "claimant-follows-itself", "versions-grow-with-positions",
                             "applied-version", "master-version", "positions",
                             "claim-version")),
            Property("MEM-VIEW-INTEGRITY", state=integrity,
                     formula="∀p. alive(p) ∧ joined(p) ⇒ p ∈ view(p)", lemmas=("dormant",)),
            Property("MEM-MASTER-ONLY", step=master_only,
                     formula="admit(m, _) ∨ remove(m, _) ⇒ head(m) = m; a suspect(p, _) "
                             "that starts p's claim ⇒ p suspects every member of its list older "
                             "than itself"),
            Property("MEM-VIEW-AGREEMENT", state=agreement, quiescent=True,
                     formula="quiescent ⇒ ∀p, q alive. joined(p) ∧ q ∈ view(p) ⇒ joined(q) ∧ "
                             "view(q) = view(p) ∧ ver(q) = ver(p)"),
        ]
        if self.versioned:
            out.insert(2, Property(
                "MEM-VERSION", step=version, state=one_list,
                formula="apply(p, m, k) ⇒ pubver[m][k] > ver(p); ∀m, k1, k2. pub[m][k1] ∧ "
                        "pub[m][k2] ∧ pubver[m][k1] = pubver[m][k2] ⇒ publist[m][k1] = "
                        "publist[m][k2]",
                lemmas=("dormant", "claimant-follows-itself", "versions-grow-with-positions",
                        "master-version", "positions", "claim-version")))
        return tuple(out)

    def lemmas(self) -> tuple[Lemma, ...]:
        has = self.has

        def grow(f: Frame) -> z3.BoolRef:
            return f.u.forall([M], lambda m: f.u.forall_int(2, lambda k1, k2: z3.Implies(
                z3.And(f.pub[m][k1], f.pub[m][k2], k1 < k2),
                f.pubver[m][k1] < f.pubver[m][k2])))

        def positions(f: Frame) -> z3.BoolRef:
            return f.u.forall([M], lambda m: z3.And(f.npub[m] >= 0, f.u.forall_int(
                1, lambda k: z3.Implies(f.pub[m][k], z3.And(
                    k >= 1, k <= f.npub[m], f.pubver[m][k] <= f.ver[m])))))

        def master_version(f: Frame) -> z3.BoolRef:
            return f.u.forall([M], lambda m: z3.Implies(
                f.npub[m] >= 1, z3.And(f.pub[m][f.npub[m]], f.pubver[m][f.npub[m]] <= f.ver[m])))

        def applied(f: Frame) -> z3.BoolRef:
            return f.u.forall([M, M], lambda p, m: z3.And(
                f.last[p][m] >= 0, f.last[p][m] <= f.npub[m],
                z3.Implies(f.last[p][m] >= 1, z3.And(
                    f.pub[m][f.last[p][m]], f.pubver[m][f.last[p][m]] <= f.ver[p]))))

        def claim_version(f: Frame) -> z3.BoolRef:
            return f.u.forall([M], lambda p: z3.Implies(
                has(f.claiming, p), f.best[p] >= f.ver[p]))

        def dormant(f: Frame) -> z3.BoolRef:
            return z3.And(
                f.u.forall([M], lambda x: z3.And(
                    z3.Implies(z3.Or(has(f.alive, x), has(f.joined, x), has(f.claiming, x)),
                               has(f.started, x)),
                    z3.Implies(z3.Not(has(f.started, x)), f.npub[x] == 0))),
                f.u.forall([M, M], lambda x, m: z3.Implies(
                    z3.Not(has(f.started, x)), f.last[x][m] == 0)))

        def claimant(f: Frame) -> z3.BoolRef:
            return f.u.forall([M], lambda p: z3.Implies(
                has(f.claiming, p), z3.And(f.master[p] == p, has(f.joined, p))))

        return (
            Lemma("dormant", dormant,
                  "∀x. alive(x) ∨ joined(x) ∨ claiming(x) ⇒ started(x); ¬started(x) ⇒ "
                  "npub(x) = 0 ∧ ∀m. last[x][m] = 0",
                  "002 Membership Update Process: a joiner takes part only once it started and "
                  "sent its join request"),
            Lemma("claimant-follows-itself", claimant,
                  "∀p. claiming(p) ⇒ master(p) = p ∧ joined(p)",
                  "002 Mastership Claim Process: a member that suspects every older member "
                  "claims mastership and follows itself until it publishes its final list"),
            Lemma("versions-grow-with-positions", grow,
                  "∀m, k1 < k2 published by m: pubver[m][k1] < pubver[m][k2]",
                  "002 Membership Update Process: a join or a removal publishes the new list "
                  "'with incremented member list version'; a new master publishes its final "
                  "list 'by incrementing the version' it collected (Mastership Claim Process)"),
            Lemma("positions", positions,
                  "∀m, k. pub[m][k] ⇒ 1 ≤ k ≤ npub(m) ∧ pubver[m][k] ≤ ver(m)",
                  "002 Membership Update Process: the member list version is 'a monotonic "
                  "version number', so a master holds a version at least that of every list "
                  "it published"),
            Lemma("master-version", master_version,
                  "∀m. npub(m) ≥ 1 ⇒ pub[m][npub(m)] ∧ pubver[m][npub(m)] ≤ ver(m)",
                  "002 Membership Update Process: the master's own list is the last it "
                  "published"),
            Lemma("applied-version", applied,
                  "∀p, m. 0 ≤ last[p][m] ≤ npub(m) ∧ (last[p][m] ≥ 1 ⇒ pub[m][last[p][m]] ∧ "
                  "pubver[m][last[p][m]] ≤ ver(p))",
                  "002 Membership Update Process: members 'apply the new member list if "
                  "incoming version is greater than the locally known version', so a member's "
                  "version is at least that of every list it applied"),
            Lemma("claim-version", claim_version,
                  "∀p. claiming(p) ⇒ best(p) ≥ ver(p)",
                  "002 Mastership Claim Process: the candidate completes the claim 'by "
                  "incrementing the version' of the latest list it knows: its own or one it "
                  "collected"),
        )


def system(variant: str = "fixed", members: int = DEFAULT_SIZES["members"],
           joiners: int = DEFAULT_SIZES["joiners"]) -> System:
    """The 002 membership protocol, in ``variant``; a finite universe has ``members`` initial
    members and ``joiners`` joiners (the unbounded one any number of each)."""
    b = _Builder(variant, members)
    return System(
        name="membership", variant=variant, sorts=(M,), variables=_variables(), init=b.init,
        actions=b.actions(), properties=b.properties(), lemmas=b.lemmas(),
        sizes={M: members + joiners}, budgets=dict(DEFAULT_BUDGETS), design="002",
        abstractions=tuple(line.strip() for line in __doc__.split("* ")[-4:]))


def system_for(variant: str, scope: Mapping[str, int]) -> System:
    """The system at the size of an explorer scope (`partsafe check membership`'s parameters)."""
    return system(variant, members=scope["members"], joiners=scope["joiners"])


def explorer_scope(trace: Sequence[Mapping[str, Any]]) -> dict[str, int]:
    """The explorer scope a bounded counterexample needs: its size, and a fault budget for each
    fault it takes (a suspicion of a live member is the one kind the explorer counts; a
    periodic publish may be needed to deliver a list again)."""
    steps = [t["action"] for t in trace[1:]]
    return {**DEFAULT_SIZES,
            "crashes": steps.count("crash"), "joins": steps.count("start"),
            "suspicions": steps.count("suspect") + steps.count("remove"),
            "publishes": 1 + steps.count("apply")}


# --- the map from the reference implementation ----------------------------------------------------


class Refinement:
    """Maps the reference implementation (refimpl/membership.py) onto the symbolic state: node
    ``i`` of the protocol is member ``m<i>``."""

    def __init__(self, protocol: Any) -> None:
        self.names: tuple[str, ...] = tuple(protocol.nodes)
        self.index = {n: i for i, n in enumerate(self.names)}

    def state(self, nodes: Mapping[str, Hashable | None], crashed: frozenset[str]
              ) -> dict[str, Any]:
        ix = self.index
        started = {ix[n] for n, st in nodes.items() if st is not None or n in crashed}
        alive = {ix[n] for n, st in nodes.items() if st is not None and n not in crashed}
        out: dict[str, Any] = {"started": started, "alive": alive,
                               "age": {i: i for i in range(len(self.names))}}
        joined, claiming = set(), set()
        ver: dict[int, int | None] = {}
        view: dict[int, set[int]] = {}
        head, master, susp, accepted, best = {}, {}, {}, {}, {}
        for n, st in nodes.items():
            if st is None or n in crashed:
                continue
            i = ix[n]
            s: Any = st
            if s.joined:
                joined.add(i)
            ver[i] = s.version
            view[i] = {ix[m] for m in s.members}
            if s.members:
                head[i] = ix[s.members[0]]
            if s.master is not None and s.joined:  # a joiner's is only where it sends requests
                master[i] = ix[s.master]
            susp[i] = {ix[m] for m in s.suspects}
            if s.claim is not None:
                claiming.add(i)
                accepted[i] = {ix[m] for m in s.claim.accepted}
                best[i] = s.claim.best_version
        live = {ix[n] for n, st in nodes.items() if st is not None and n not in crashed}
        out.update(joined=_on(joined, live), claiming=_on(claiming, live), ver=ver, view=view,
                   head=head, master=master, susp=susp, accepted=accepted, best=best)
        return out

    def actions(self, action: tuple[Any, ...], events: Sequence[Event]
                ) -> list[tuple[str, dict[str, int]]]:
        """The abstract actions one explorer step is, from the events it emits."""
        ix = self.index
        out: list[tuple[str, dict[str, int]]] = []
        if action and action[0] == "join":
            out.append(("start", {"j": ix[action[1]]}))
        installs_own = False
        for i, e in enumerate(events):
            if isinstance(e, ev.MemberListInstalled) and i + 1 < len(events) \
                    and isinstance(events[i + 1], ev.MastershipClaimed) \
                    and events[i + 1].member == e.member:
                continue  # the claimant's new list, printed before its claim's line: finalize
            if isinstance(e, ev.MemberJoined):
                out.append(("admit", {"m": ix[e.member], "j": ix[e.joined]}))
                installs_own = True
            elif isinstance(e, ev.MemberRemoved):
                out = [x for x in out if not (x[0] == "suspect" and x[1]["p"] == ix[e.member])]
                out.append(("remove", {"m": ix[e.member], "q": ix[e.removed]}))
                installs_own = True
            elif isinstance(e, ev.MemberSuspected | ev.ExplicitSuspicion):
                q = e.suspect if isinstance(e, ev.MemberSuspected) else e.sender
                out.append(("suspect", {"p": ix[e.member], "q": ix[q]}))
            elif isinstance(e, ev.SuspicionRemoved):
                out.append(("unsuspect", {"p": ix[e.member], "q": ix[e.suspect]}))
            elif isinstance(e, ev.MastershipClaimStarted):
                continue  # part of the suspicion just before it
            elif isinstance(e, ev.MastershipClaimAccepted):
                out.append(("accept", {"q": ix[e.member], "p": ix[e.candidate]}))
            elif isinstance(e, ev.MastershipAcceptanceReceived):
                out.append(("collect", {"p": ix[e.member], "q": ix[e.sender]}))
            elif isinstance(e, ev.MastershipClaimed):
                # the last awaited answer and the final list are one step
                p, q = ix[e.member], ix[e.member]
                if out and out[-1][0] == "collect" and out[-1][1]["p"] == p:
                    q = out.pop()[1]["q"]
                out.append(("finalize", {"p": p, "q": q}))
                installs_own = True
            elif isinstance(e, ev.MemberListInstalled):
                if installs_own:
                    installs_own = False
                    continue
                # a list applied from its master: the suspicion of the master it lifts is part
                # of the apply
                out = [x for x in out if not (x[0] == "unsuspect"
                                              and x[1]["p"] == ix[e.member])]
                out.append(("apply", {"p": ix[e.member], "m": ix[e.members[0]]}))
            elif isinstance(e, ev.MemberCrashed):
                out.append(("crash", {"p": ix[e.member]}))
        return out


def _on(members: set[int], live: set[int]) -> dict[int, bool]:
    """A set known only on the live members (a crashed member's state is gone)."""
    return {i: i in members for i in live}

"""Hazelcast 3.7's migration commit and master crash recovery (000 §1, §2) as a symbolic system.

**What is modelled.** Members (sort ``Member``) hold a copy of the partition table (per
``Partition``, the set of its replica owners), the table version, a completed migrations list
(the migrations it knows committed, ``completed_ok``, and failed, ``completed_failed``) and its
active migrations (000 Terminology "Active Migration State"). One member is the master
(``master``); every member follows one master (``follows``). A migration (sort ``Migration``)
has a partition, a migration source and a migration destination; the master that starts it
and the table version it starts on are fixed when it starts (``started_by``,
``started_on``). The master runs one migration at a time:

* ``start``: the master sends ``MigrationRequest`` (its table names the source, not the
  destination as replicas of the partition);
* ``source_accepts`` / ``destination_accepts``: each participant checks that the request
  comes from its master, that its table version is the one the migration started on and that
  it has no undecided migration, then makes it active (000 §2.1, last paragraph);
* ``commit_to_destination``: 000 §2.1 steps 1-2, the master sends ``MigrationCommitOperation``
  with a copy of its table with the migration applied, version + 1, and its completed list
  with the migration as successful; its own state does not change;
* ``destination_commits``: the destination takes the copy (when its version is not older) and
  finalises; it acknowledges in any case (``CommitAck``);
* ``master_commits``: step 3, the master applies the migration, version + 1, adds it to its
  completed list and publishes;
* ``fail``: step 4, a migration in its request phase (a participant refused or the request
  timed out) or in its commit phase with a destination that crashed: the table stays, the
  version rises by the failure increment, the migration is completed as failed and published;
* ``publish`` / ``receive``: the master publishes its table with its completed list; a member
  takes a table only from its master and only with a greater version, and finalises every
  migration of the list it did not know (000 §1.1, §2.1);
* ``update_table``: the master's other table updates of 000 §1.1 (a left member's replica set
  to NULL, a promotion, a lost owner reassigned, repartitioning's clears): any table, the
  version raised by one per update (``raise``), published once;
* ``master_crash`` (fault): the master crashes, a live member becomes master and collects
  (``collect``) every live member's table, completed list and active migrations once that
  member follows it; ``finish_recovery`` (every live member collected) takes the most recent
  table, completes the migrations some completed list names, fails the other active ones
  (version raised) and publishes (000 §1.2, §2.2);
* ``crash`` (fault) of another member, ``follow_new_master`` (a member notices its master's
  crash and follows the new one).

**Abstractions** (what the differential test checks against refimpl/partition_service.py):

* the network is a monotone set of sent messages: every operation stays deliverable for ever
  (loss is never delivering it, reordering and duplication are delivering in any order, any
  number of times); a publication is named by its sender and version, a commit by its
  migration, each with its payload;
* a replica index is abstracted to replica ownership: a migration's partition gets the
  migration's ``target`` owners (fixed when it is planned: a MOVE's source leaves, a COPY's or
  a SHIFT's stays, the destination joins, 000 §3.1); the source is the source endpoint (the
  member that sends the data, the owner for a backup's migration);
* the master is never a migration destination; the new master is the oldest live member
  (``age``, fixed: member ``i`` of a finite universe is the explorer's ``i``-th node), and it
  is master from the crash on, which its members learn from a perfect failure detector;
* a member's completed list only grows (no eviction, 000 §2.1: eviction removes only
  migrations every member acknowledged, which no handler reads again);
* the new master's ``Fetch`` and the member's reply are one step: a member answers only once
  it follows the new master, and from then on takes nothing from anyone else, who does not
  publish before its recovery ends, so its state is the same when the reply arrives;
* the differential test's map (``Refinement``) leaves the network free and reads a member's
  completed list as a lower bound of the model's (the reference evicts entries every member
  acknowledged); a departed master stays the model's master until the oldest live member
  notices it (``master_crash``), so a member that notices it first acts on it only then
  (hz37-local-promotion's and hz37-independent-commit's own steps on that notice are not
  expressed), and a new master's collection is left free while the answer of a member that
  crashed after answering may be in flight (``collect`` takes live members);
* the failure increment is a per-migration integer ``failure_increment``: the current source's
  increment + 1 (at least 2) in ``fixed``, 000 §2.1 step 4's 2 in ``fail-plus-two`` and 1 in
  ``fail-plus-one`` (the design question of §2.1: is +2 needed?).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Hashable, Mapping, Sequence
from typing import Any

import z3

from partsafe.models.system import (
    Action,
    Flat,
    Frame,
    Lemma,
    Params,
    Property,
    System,
    Universe,
    Var,
    eq,
    ite,
    store,
    value_json,
)

M, P, G = "Member", "Partition", "Migration"

#: variants -> the spec their flaw breaks (refimpl VARIANT_TABLE's `breaks`); `fail-plus-two`
#: is 000 §2.1 step 4's +2 (a design question of the table, breaking nothing)
VARIANTS: dict[str, str | None] = {
    "fixed": None,
    "hz37-independent-commit": "MIG-COMMIT-ORDER",
    "hz37-stale-master-table": "PT-MOST-RECENT",
    "hz37-local-promotion": "PT-MASTER-ONLY",
    "fail-plus-two": None,
}

#: the design question of 000 §2.1 step 4 ("+2 or +1"): +1 with crash-stop members (a commit
#: fails only when its destination crashed), and +1 and +2 with a destination that splits off
#: during the commit and comes back (not a refimpl variant: its failure detector is perfect)
QUESTIONS: dict[str, str | None] = {
    "fail-plus-one": None,
    "fail-plus-one-split": "PT-MASTER-ONLY",
    "fail-plus-two-split": None,
}

#: the specs of the catalogue this model judges
SPECS = ("MIG-COMMIT-ORDER", "MIG-ATOMIC", "PT-VERSION", "PT-MOST-RECENT", "PT-MASTER-ONLY",
         "MIG-REJECT-STALE")
#: the default scope of bounded model checking: the explorer's members and partitions (`partsafe
#: check migration --help`), and two migrations (a failed one and the next)
DEFAULT_SIZES = {"members": 3, "partitions": 2, "migrations": 2}
#: its fault budgets, as the explorer's default scope (joins and shutdowns are not modelled);
#: `splits` is the destination split of the 000 §2.1 step 4 question
DEFAULT_BUDGETS = {"crashes": 1, "splits": 1}

SET_M = (M, "Bool")
SET_G = (G, "Bool")
TABLE = (P, SET_M)


VARIABLES: tuple[Var, ...] = (
    # the migrations' fixed attributes (never modified)
    Var("partition", (G, P), "the partition a migration moves"),
    Var("source", (G, M), "the migration source (the source endpoint)"),
    Var("destination", (G, M), "the migration destination"),
    Var("target", (G, SET_M), "the partition's replica owners once the migration is applied"),
    Var("failure_increment", (G, "Int"), "how much a failure of it raises the version"),
    # members
    Var("age", (M, "Int"), "the members' age order (smaller is older); fixed"),
    Var("alive", SET_M, "not crashed (crash-stop)"),
    Var("follows", (M, M), "the master whose operations a member takes"),
    Var("master", M, "the master"),
    Var("table", (M, TABLE), "a member's partition table: the replica owners per partition"),
    Var("version", (M, "Int"), "a member's partition table version"),
    Var("completed_ok", (M, SET_G), "completed migrations list: the successful ones"),
    Var("completed_failed", (M, SET_G), "completed migrations list: the failed ones"),
    Var("active", (M, SET_G), "active migration state of a participant"),
    # the master's migration in flight
    Var("started_by", (G, M), "the master that started a migration"),
    Var("started_on", (G, "Int"), "the table version a migration started on"),
    Var("requesting", SET_G, "in flight at its master, waiting for the data"),
    Var("committing", SET_G, "in flight at its master, commit sent to the destination"),
    # the new master's recovery (000 §1.2, §2.2)
    Var("recovering", "Bool", "the master is collecting the members' partition state"),
    Var("collected", SET_M, "members whose state the new master collected"),
    Var("best_version", "Int", "the greatest table version collected"),
    Var("best_table", TABLE, "the table of that version"),
    Var("rec_ok", SET_G, "migrations some collected completed list names successful"),
    Var("rec_failed", SET_G, "migrations some collected completed list names failed"),
    Var("rec_active", SET_G, "migrations some collected member has active"),
    # the network: monotone sets of sent operations, with their payloads
    Var("sent_request", SET_G, "MigrationRequest sent (a migration starts once)"),
    Var("sent_data", SET_G, "the source sent the data to the destination"),
    Var("sent_done", SET_G, "the destination answered the master"),
    Var("sent_commit", SET_G, "MigrationCommitOperation sent"),
    Var("commit_table", (G, TABLE), "the commit's prepared table"),
    Var("commit_version", (G, "Int"), "the commit's version"),
    Var("commit_ok", (G, SET_G), "the commit's completed list: successful"),
    Var("commit_failed", (G, SET_G), "the commit's completed list: failed"),
    Var("sent_ack", SET_G, "CommitAck sent"),
    Var("npub", (M, "Int"), "how many PartitionStates a member sent as master"),
    Var("published", (M, ("Int", "Bool")), "the positions of a master's PartitionStates"),
    Var("pub_version", (M, ("Int", "Int")), "the version of the PartitionState at a position"),
    Var("pub_table", (M, ("Int", TABLE)), "its table"),
    Var("pub_ok", (M, ("Int", SET_G)), "its completed list: successful"),
    Var("pub_failed", (M, ("Int", SET_G)), "its completed list: failed"),
    # ghosts: the events the monitors judge, as history
    Var("dest_committed", SET_G, "the destination committed (MigrationCommitted)", ghost=True),
    Var("dest_rolled_back", SET_G, "the destination rolled back", ghost=True),
    Var("master_committed", SET_G, "a master committed", ghost=True),
    Var("master_rolled_back", SET_G, "a master rolled back (failed it)", ghost=True),
    Var("source_committed", SET_G, "the source committed", ghost=True),
    Var("source_rolled_back_live", SET_G, "the source rolled back while the destination was "
        "alive and not split off", ghost=True),
    Var("dest_split", SET_G, "the master removed the live destination during the commit",
        ghost=True),
    Var("recovery_failed", SET_G, "a new master's recovery failed it (000 §2.2)", ghost=True),
    Var("given", ("Int", TABLE), "the table the master last gave each version", ghost=True),
)


# --- helpers -----------------------------------------------------------------------------------


def _map(u: Universe, sort: str, value: Callable[[z3.ExprRef], Any], tag: str) -> Any:
    """The array over ``sort`` that maps each element ``e`` to ``value(e)``: flat when finite,
    a lambda when unbounded."""
    if u.finite:
        keys = u.elements(sort)
        return Flat(keys, tuple(value(e) for e in keys))
    x = z3.Const(f"{tag}_{sort}", u[sort])
    return z3.Lambda([x], value(x))


def _apply(f: Frame, t: Any, m: z3.ExprRef) -> Any:
    """The table ``t`` with migration ``m`` applied: its partition's replica owners become the
    migration's ``target`` (a MOVE's source leaves, a COPY's or a SHIFT's stays; the
    destination joins, 000 §3.1)."""
    return store(t, f.partition[m], f.target[m])


def _add(s: Any, x: z3.ExprRef, member: z3.BoolRef | bool = True) -> Any:
    return store(s, x, member)


def _learn(pre: Frame, x: z3.ExprRef, ok: Any, failed: Any) -> dict[str, Any]:
    """Member ``x`` takes a completed list (``ok``, ``failed``): it finalises every migration it
    did not know (000 §2.1: participants finalise only when they find the result in the
    completed list; the ``PartitionMigrationEvent`` rule of 000 "API design") and keeps their
    results; a migration it knows keeps the result it knows (it finalises once)."""
    u = pre.u
    known_ok, known_failed, act = pre.completed_ok[x], pre.completed_failed[x], pre.active[x]

    def new(m: z3.ExprRef) -> z3.BoolRef:
        return z3.And(z3.Not(known_ok[m]), z3.Not(known_failed[m]), z3.Or(ok[m], failed[m]))

    def ok_new(m: z3.ExprRef) -> z3.BoolRef:
        return z3.And(new(m), ok[m])

    def fail_new(m: z3.ExprRef) -> z3.BoolRef:
        return z3.And(new(m), z3.Not(ok[m]), failed[m])

    return {
        "completed_ok": store(pre.completed_ok, x, u.set_where(
            G, lambda m: z3.Or(known_ok[m], ok_new(m)), "lo")),
        "completed_failed": store(pre.completed_failed, x, u.set_where(
            G, lambda m: z3.Or(known_failed[m], fail_new(m)), "lf")),
        "active": store(pre.active, x, u.set_where(
            G, lambda m: z3.And(act[m], z3.Not(new(m))), "la")),
        "dest_committed": u.set_where(G, lambda m: z3.Or(
            pre.dest_committed[m], z3.And(ok_new(m), x == pre.destination[m], act[m])), "ldc"),
        "dest_rolled_back": u.set_where(G, lambda m: z3.Or(
            pre.dest_rolled_back[m], z3.And(fail_new(m), x == pre.destination[m], act[m])),
            "ldr"),
        "source_committed": u.set_where(G, lambda m: z3.Or(
            pre.source_committed[m], z3.And(ok_new(m), x == pre.source[m])), "lsc"),
        "source_rolled_back_live": u.set_where(G, lambda m: z3.Or(
            pre.source_rolled_back_live[m],
            z3.And(fail_new(m), x == pre.source[m], act[m],
                   pre.alive[pre.destination[m]], z3.Not(pre.dest_split[m]))), "lsr"),
    }


_LEARNS = ("completed_ok", "completed_failed", "active", "dest_committed", "dest_rolled_back",
           "source_committed", "source_rolled_back_live")


def _publish(pre: Frame, who: z3.ExprRef, v: Any, table: Any, ok: Any, failed: Any
             ) -> dict[str, Any]:
    """The master sends a ``PartitionState`` of version ``v`` (000 §1.1), at its next
    position."""
    k = pre.npub[who] + 1
    return {
        "npub": store(pre.npub, who, k),
        "published": store(pre.published, who, store(pre.published[who], k, True)),
        "pub_version": store(pre.pub_version, who, store(pre.pub_version[who], k, v)),
        "pub_table": store(pre.pub_table, who, store(pre.pub_table[who], k, table)),
        "pub_ok": store(pre.pub_ok, who, store(pre.pub_ok[who], k, ok)),
        "pub_failed": store(pre.pub_failed, who, store(pre.pub_failed[who], k, failed)),
    }


_PUBLISHES = ("npub", "published", "pub_version", "pub_table", "pub_ok", "pub_failed")


def _active_master(f: Frame, who: z3.ExprRef) -> z3.BoolRef:
    return z3.And(who == f.master, f.alive[who], z3.Not(f.recovering))


def _idle(f: Frame) -> z3.BoolRef:
    return f.u.forall([G], lambda m: z3.And(z3.Not(f.requesting[m]), z3.Not(f.committing[m])))


def _none(u: Universe, t: Any = SET_G) -> Any:
    return u.const(t, z3.BoolVal(False, u.ctx))


# --- the system --------------------------------------------------------------------------------


def system(variant: str = "fixed", members: int = DEFAULT_SIZES["members"],
           partitions: int = DEFAULT_SIZES["partitions"],
           migrations: int = DEFAULT_SIZES["migrations"]) -> System:
    """000 §1-§2 under ``variant`` (a key of :data:`VARIANTS` or :data:`QUESTIONS`); a finite
    universe has ``members`` members, ``partitions`` partitions and ``migrations`` migrations
    (the unbounded one any number of each)."""
    if variant not in VARIANTS and variant not in QUESTIONS:
        raise ValueError(f"unknown migration variant {variant!r}; known: "
                         f"{', '.join([*VARIANTS, *QUESTIONS])}")
    split = variant.endswith("-split")
    minimum = 1 if variant.startswith("fail-plus-one") else 2
    independent = variant == "hz37-independent-commit"
    stale_master = variant == "hz37-stale-master-table"

    def increment_ok(f: Frame, m: z3.ExprRef) -> z3.BoolRef:
        inc = f.failure_increment[m]
        if variant in ("fail-plus-two", "fail-plus-two-split"):
            return inc == 2
        if variant.startswith("fail-plus-one"):
            return inc == 1
        return inc >= 2

    def ages(f: Frame) -> z3.BoolRef:
        """Member ``i`` of a finite universe is the ``i``-th oldest, as the explorer's nodes."""
        u = f.u
        if u.finite:
            return z3.And(*[f.age[x] == i for i, x in enumerate(u.elements(M))])
        return u.forall([M, M], lambda x, y: z3.Implies(x != y, f.age[x] != f.age[y]))

    def init(f: Frame) -> z3.BoolRef:
        u = f.u
        no = z3.BoolVal(False, u.ctx)
        return z3.And(
            u.forall([G], lambda m: z3.And(
                f.source[m] != f.destination[m], increment_ok(f, m),
                *[z3.Not(f[n][m]) for n in (
                    "requesting", "committing", "sent_request", "sent_data", "sent_done",
                    "sent_commit", "sent_ack", "dest_committed", "dest_rolled_back",
                    "master_committed", "master_rolled_back", "source_committed",
                    "source_rolled_back_live", "dest_split", "recovery_failed")])),
            ages(f), u.forall([M], lambda x: f.age[f.master] <= f.age[x]),
            eq(f.given[0], f.table[f.master]),
            f.alive[f.master], z3.Not(f.recovering),
            eq(f.rec_ok, _none(u)), eq(f.rec_failed, _none(u)), eq(f.rec_active, _none(u)),
            u.forall([M], lambda x: z3.And(
                f.alive[x], f.follows[x] == f.master, eq(f.table[x], f.table[f.master]),
                f.version[x] == 0, f.npub[x] == 0,
                eq(f.published[x], u.const(("Int", "Bool"), no)),
                u.forall([G], lambda m: z3.And(z3.Not(f.completed_ok[x][m]),
                                               z3.Not(f.completed_failed[x][m]),
                                               z3.Not(f.active[x][m]))))))

    actions: list[Action] = []

    def act(name: str, params: tuple[tuple[str, str], ...],
            guard: Callable[[Frame, Params], z3.BoolRef],
            effect: Callable[[Frame, Params], dict[str, Any]], modifies: Sequence[str],
            design: str, fault: bool = False, budget: str | None = None,
            relation: Any = None) -> None:
        actions.append(Action(name, params, guard, effect, tuple(modifies), design, fault,
                              relation, budget))

    # -- start, accept -------------------------------------------------------------------------

    def g_start(f: Frame, a: Params) -> z3.BoolRef:
        w, m = a["master"], a["m"]
        row, after = f.table[w][f.partition[m]], f.target[m]
        return z3.And(_active_master(f, w), _idle(f), z3.Not(f.sent_request[m]),
                      row[f.source[m]], after[f.destination[m]], f.destination[m] != w,
                      f.u.forall([M], lambda x: z3.Implies(after[x], z3.Or(
                          row[x], x == f.destination[m]))))

    act("start", (("master", M), ("m", G)), g_start,
        lambda pre, a: {
            "sent_request": _add(pre.sent_request, a["m"]),
            "requesting": _add(pre.requesting, a["m"]),
            "started_by": store(pre.started_by, a["m"], a["master"]),
            "started_on": store(pre.started_on, a["m"], pre.version[a["master"]])},
        ("sent_request", "requesting", "started_by", "started_on"),
        "000 §2.1: the master sends MigrationRequest to the source, with its table version")

    def may_accept(f: Frame, x: z3.ExprRef, m: z3.ExprRef) -> z3.BoolRef:
        return z3.And(f.alive[x], f.follows[x] == f.started_by[m],
                      f.version[x] == f.started_on[m],
                      f.u.forall([G], lambda o: z3.Not(f.active[x][o])),
                      z3.Not(f.completed_ok[x][m]), z3.Not(f.completed_failed[x][m]))

    def activate(pre: Frame, x: z3.ExprRef, m: z3.ExprRef) -> Any:
        return store(pre.active, x, _add(pre.active[x], m))

    act("source_accepts", (("m", G),),
        lambda f, a: z3.And(f.sent_request[a["m"]], may_accept(f, f.source[a["m"]], a["m"])),
        lambda pre, a: {"active": activate(pre, pre.source[a["m"]], a["m"]),
                        "sent_data": _add(pre.sent_data, a["m"])},
        ("active", "sent_data"),
        "000 §2.1: a source rejects a migration while it has an undecided one or its table "
        "version is not the one the migration started on")

    act("destination_accepts", (("m", G),),
        lambda f, a: z3.And(f.sent_data[a["m"]], f.destination[a["m"]] != f.master,
                            may_accept(f, f.destination[a["m"]], a["m"])),
        lambda pre, a: {"active": activate(pre, pre.destination[a["m"]], a["m"]),
                        "sent_done": _add(pre.sent_done, a["m"])},
        ("active", "sent_done"),
        "000 §2.1: the destination checks the same, installs the data and answers the master")

    # -- commit ------------------------------------------------------------------------------

    def master_commit(pre: Frame, w: z3.ExprRef, m: z3.ExprRef) -> dict[str, Any]:
        """000 §2.1 step 3: apply, version + 1, completed, publish; the master's own source
        role finalises (its ``commitMigration``)."""
        table = _apply(pre, pre.table[w], m)
        v = pre.version[w] + 1
        ok = _add(pre.completed_ok[w], m)
        return {
            "requesting": _add(pre.requesting, m, False),
            "committing": _add(pre.committing, m, False),
            "table": store(pre.table, w, table),
            "version": store(pre.version, w, v),
            "completed_ok": store(pre.completed_ok, w, ok),
            "given": store(pre.given, v, table),
            "master_committed": _add(pre.master_committed, m),
            "active": store(pre.active, w, _add(pre.active[w], m, False)),
            "source_committed": _add(pre.source_committed, m,
                                     z3.Or(pre.source_committed[m], w == pre.source[m])),
            **_publish(pre, w, v, table, ok, pre.completed_failed[w]),
        }

    commit_mods = ("requesting", "committing", "table", "version", "completed_ok", "given",
                   "master_committed", "active", "source_committed", *_PUBLISHES)

    def g_done(f: Frame, a: Params) -> z3.BoolRef:
        return z3.And(_active_master(f, a["master"]), f.requesting[a["m"]],
                      f.started_by[a["m"]] == a["master"], f.sent_done[a["m"]])

    if independent:
        act("commit_to_destination", (("master", M), ("m", G)), g_done,
            lambda pre, a: master_commit(pre, a["master"], a["m"]), commit_mods,
            "hz37-independent-commit (000 §2.1 Problems): the master applies and publishes "
            "at once; the participants commit when they see the table")
    else:
        def e_commit(pre: Frame, a: Params) -> dict[str, Any]:
            w, m = a["master"], a["m"]
            return {
                "requesting": _add(pre.requesting, m, False),
                "committing": _add(pre.committing, m),
                "sent_commit": _add(pre.sent_commit, m),
                "commit_table": store(pre.commit_table, m, _apply(pre, pre.table[w], m)),
                "commit_version": store(pre.commit_version, m, pre.version[w] + 1),
                "given": store(pre.given, pre.version[w] + 1, _apply(pre, pre.table[w], m)),
                "commit_ok": store(pre.commit_ok, m, _add(pre.completed_ok[w], m)),
                "commit_failed": store(pre.commit_failed, m, pre.completed_failed[w])}

        act("commit_to_destination", (("master", M), ("m", G)), g_done, e_commit,
            ("requesting", "committing", "sent_commit", "commit_table", "commit_version",
             "commit_ok", "commit_failed", "given"),
            "000 §2.1 steps 1-2: a copy of the table with the migration applied, version + 1, "
            "and the completed list with it successful, sent with MigrationCommitOperation")

    def e_dest_commit(pre: Frame, a: Params) -> dict[str, Any]:
        m = a["m"]
        d = pre.destination[m]
        v = pre.commit_version[m]
        newer = v > pre.version[d]
        taken = v >= pre.version[d]
        learned = _learn(pre, d, pre.commit_ok[m], pre.commit_failed[m])
        return {
            "table": ite(newer, store(pre.table, d, pre.commit_table[m]), pre.table),
            "version": ite(newer, store(pre.version, d, v), pre.version),
            **{n: ite(taken, learned[n], pre[n]) for n in _LEARNS},
            "sent_ack": _add(pre.sent_ack, m)}

    act("destination_commits", (("m", G),),
        lambda f, a: z3.And(f.sent_commit[a["m"]], f.alive[f.destination[a["m"]]],
                            f.destination[a["m"]] != f.master,
                            f.follows[f.destination[a["m"]]] == f.started_by[a["m"]]),
        e_dest_commit, ("table", "version", "sent_ack", *_LEARNS),
        "000 §2.1 step 2: the destination takes the prepared table (when not older), finalises "
        "the migration the completed list names successful, and acknowledges")

    if not independent:
        act("master_commits", (("master", M), ("m", G)),
            lambda f, a: z3.And(_active_master(f, a["master"]), f.committing[a["m"]],
                                f.started_by[a["m"]] == a["master"], f.sent_ack[a["m"]]),
            lambda pre, a: master_commit(pre, a["master"], a["m"]), commit_mods,
            "000 §2.1 step 3: MigrationCommitOperation returned: the master applies the "
            "migration, version + 1, completes it and publishes")

    def fail_effect(pre: Frame, w: z3.ExprRef, m: z3.ExprRef, split_off: bool
                    ) -> dict[str, Any]:
        v = pre.version[w] + pre.failure_increment[m]
        failed = _add(pre.completed_failed[w], m)
        own = z3.And(w == pre.source[m], pre.active[w][m])
        live = z3.And(pre.alive[pre.destination[m]], z3.Not(pre.dest_split[m]),
                      z3.BoolVal(not split_off, pre.u.ctx))
        out = {
            "requesting": _add(pre.requesting, m, False),
            "committing": _add(pre.committing, m, False),
            "version": store(pre.version, w, v),
            "completed_failed": store(pre.completed_failed, w, failed),
            "given": store(pre.given, v, pre.table[w]),
            "master_rolled_back": _add(pre.master_rolled_back, m),
            "active": store(pre.active, w, _add(pre.active[w], m, False)),
            "source_rolled_back_live": _add(pre.source_rolled_back_live, m,
                                            z3.Or(pre.source_rolled_back_live[m],
                                                  z3.And(own, live))),
            **_publish(pre, w, v, pre.table[w], pre.completed_ok[w], failed)}
        if split_off:
            out["dest_split"] = _add(pre.dest_split, m)
        return out

    fail_mods = ("requesting", "committing", "version", "completed_failed", "given",
                 "master_rolled_back", "active", "source_rolled_back_live", *_PUBLISHES)

    act("fail", (("master", M), ("m", G)),
        lambda f, a: z3.And(_active_master(f, a["master"]), f.started_by[a["m"]] == a["master"],
                            z3.Or(f.requesting[a["m"]],
                                  z3.And(f.committing[a["m"]],
                                         z3.Not(f.alive[f.destination[a["m"]]])))),
        lambda pre, a: fail_effect(pre, a["master"], a["m"], False), fail_mods,
        "000 §2.1 step 4: a refused or timed-out request, or a commit whose destination "
        "crashed: the table stays, the version rises by the failure increment, published")

    if split:
        act("destination_split", (("master", M), ("m", G)),
            lambda f, a: z3.And(_active_master(f, a["master"]), f.committing[a["m"]],
                                f.started_by[a["m"]] == a["master"],
                                f.alive[f.destination[a["m"]]]),
            lambda pre, a: fail_effect(pre, a["master"], a["m"], True),
            (*fail_mods, "dest_split"),
            "000 §2.1 step 4: the destination split from the cluster during the commit; the "
            "master fails the commit and the destination, back, must accept its table",
            fault=True, budget="splits")

    # -- publications ---------------------------------------------------------------------------

    act("publish", (("master", M),),
        lambda f, a: z3.And(_active_master(f, a["master"]),
                            f.u.forall([G], lambda m: z3.Not(f.committing[m]))),
        lambda pre, a: _publish(
            pre, a["master"], pre.version[a["master"]], pre.table[a["master"]],
            pre.completed_ok[a["master"]], pre.completed_failed[a["master"]]),
        _PUBLISHES,
        "000 §1.1: the master publishes its table (a republish during a commit is older than "
        "the destination's table, which ignores it)")

    def e_receive(pre: Frame, a: Params) -> dict[str, Any]:
        x, w, k = a["member"], a["sender"], a["k"]
        v = pre.pub_version[w][k]
        newer = v > pre.version[x]
        return {"table": ite(newer, store(pre.table, x, pre.pub_table[w][k]), pre.table),
                "version": ite(newer, store(pre.version, x, v), pre.version),
                **_learn(pre, x, pre.pub_ok[w][k], pre.pub_failed[w][k])}

    act("receive", (("member", M), ("sender", M), ("k", "Int")),
        lambda f, a: z3.And(f.alive[a["member"]], a["member"] != a["sender"],
                            f.follows[a["member"]] == a["sender"],
                            f.published[a["sender"]][a["k"]],
                            f.pub_version[a["sender"]][a["k"]] >= f.version[a["member"]]),
        e_receive, ("table", "version", *_LEARNS),
        "000 §1.1: a member updates its table only from its master, with a greater version; "
        "§2.1: it finalises the migrations of the completed list it did not know")

    def e_update(pre: Frame, a: Params) -> dict[str, Any]:
        w = a["master"]
        v = pre.version[w] + a["raise"]
        published = _publish(pre, w, v, pre.table[w], pre.completed_ok[w],
                             pre.completed_failed[w])
        del published["pub_table"]
        return {"version": store(pre.version, w, v), **published}

    def r_update(pre: Frame, post: Frame, a: Params) -> z3.BoolRef:
        """Any new table at the master: the publication carries it, the version is given it."""
        w = a["master"]
        k = pre.npub[w] + 1
        v = pre.version[w] + a["raise"]
        return z3.And(eq(post.table, store(pre.table, w, post.table[w])),
                      eq(post.given, store(pre.given, v, post.table[w])),
                      eq(post.pub_table, store(pre.pub_table, w,
                                               store(pre.pub_table[w], k, post.table[w]))))

    act("update_table", (("master", M), ("raise", "Int")),
        lambda f, a: z3.And(_active_master(f, a["master"]), _idle(f), a["raise"] >= 1),
        e_update, ("table", "version", "given", *_PUBLISHES),
        "000 §1.1: the master's other updates (a left replica set to NULL, a lost owner "
        "reassigned, a promotion, repartitioning's clears) give any table, raise the version "
        "(by one per update) and are published", relation=r_update)

    # -- faults and master change ---------------------------------------------------------------

    act("crash", (("member", M),),
        lambda f, a: z3.And(f.alive[a["member"]], a["member"] != f.master),
        lambda pre, a: {"alive": _add(pre.alive, a["member"], False)},
        ("alive",), "a member crashes (crash-stop)", fault=True, budget="crashes")

    def e_master_crash(pre: Frame, a: Params) -> dict[str, Any]:
        w, n = a["master"], a["heir"]
        u = pre.u
        return {
            "alive": _add(pre.alive, w, False), "master": n,
            "recovering": z3.BoolVal(True, u.ctx), "collected": _none(u, SET_M),
            "best_version": pre.version[n], "best_table": pre.table[n],
            "rec_ok": pre.completed_ok[n], "rec_failed": pre.completed_failed[n],
            "rec_active": pre.active[n], "requesting": _none(u), "committing": _none(u),
            "follows": store(pre.follows, n, n)}

    act("master_crash", (("master", M), ("heir", M)),
        lambda f, a: z3.And(a["master"] == f.master, f.alive[a["master"]], f.alive[a["heir"]],
                            a["heir"] != a["master"], f.u.forall([M], lambda y: z3.Implies(
                                z3.And(f.alive[y], y != a["master"]),
                                f.age[a["heir"]] <= f.age[y]))),
        e_master_crash,
        ("alive", "master", "recovering", "collected", "best_version", "best_table", "rec_ok",
         "rec_failed", "rec_active", "requesting", "committing", "follows"),
        "000 §1.2: the master crashes; the oldest live member becomes master and starts from "
        "its own partition state", fault=True, budget="crashes")

    def e_follow(pre: Frame, a: Params) -> dict[str, Any]:
        x = a["member"]
        out: dict[str, Any] = {"follows": store(pre.follows, x, pre.master)}
        if not independent:
            return out
        # hz37-independent-commit: a participant rolls back on its own when its master leaves
        old = pre.follows[x]
        u = pre.u

        def mine(m: z3.ExprRef) -> z3.BoolRef:
            return z3.And(pre.active[x][m], pre.started_by[m] == old)
        out.update({
            "active": store(pre.active, x, u.set_where(
                G, lambda m: z3.And(pre.active[x][m], z3.Not(mine(m))), "fa")),
            "dest_rolled_back": u.set_where(G, lambda m: z3.Or(
                pre.dest_rolled_back[m], z3.And(mine(m), x == pre.destination[m])), "fd"),
            "source_rolled_back_live": u.set_where(G, lambda m: z3.Or(
                pre.source_rolled_back_live[m],
                z3.And(mine(m), x == pre.source[m], pre.alive[pre.destination[m]],
                       z3.Not(pre.dest_split[m]))), "fs")})
        return out

    act("follow_new_master", (("member", M),),
        lambda f, a: z3.And(f.alive[a["member"]], a["member"] != f.master,
                            z3.Not(f.alive[f.follows[a["member"]]])),
        e_follow, ("follows", "active", "dest_rolled_back", "source_rolled_back_live")
        if independent else ("follows",),
        "000 §1.2: a member notices its master's crash and follows the new master")

    if variant == "hz37-local-promotion":
        def e_promote(pre: Frame, a: Params) -> dict[str, Any]:
            x, y = a["member"], a["gone"]
            t = pre.table[x]
            return {"table": store(pre.table, x, _map(
                pre.u, P, lambda p: store(t[p], y, False), "lp"))}

        act("local_promotion", (("member", M), ("gone", M)),
            lambda f, a: z3.And(f.alive[a["member"]], a["member"] != f.master,
                                z3.Not(f.alive[a["gone"]])),
            e_promote, ("table",),
            "hz37-local-promotion (000 Problems): a member removes a left member from its own "
            "table and shifts the replicas up, without the master")

    def g_collect(f: Frame, a: Params) -> z3.BoolRef:
        y = a["member"]
        return z3.And(f.recovering, f.alive[f.master], f.alive[y], y != f.master,
                      f.follows[y] == f.master, z3.Not(f.collected[y]))

    def e_collect(pre: Frame, a: Params) -> dict[str, Any]:
        y = a["member"]
        u = pre.u
        newer = pre.version[y] > pre.best_version
        return {
            "collected": _add(pre.collected, y),
            "best_version": z3.If(newer, pre.version[y], pre.best_version),
            "best_table": ite(newer, pre.table[y], pre.best_table),
            "rec_ok": u.set_where(G, lambda m: z3.Or(pre.rec_ok[m], pre.completed_ok[y][m]),
                                  "co"),
            "rec_failed": u.set_where(G, lambda m: z3.Or(pre.rec_failed[m],
                                                         pre.completed_failed[y][m]), "cf"),
            "rec_active": u.set_where(G, lambda m: z3.Or(pre.rec_active[m],
                                                         pre.active[y][m]), "ca")}

    if not stale_master:
        act("collect", (("member", M),), g_collect, e_collect,
            ("collected", "best_version", "best_table", "rec_ok", "rec_failed", "rec_active"),
            "000 §1.2, §2.2: the new master fetches a member's table, completed migrations and "
            "active migration state, keeping the most recent table")

    def g_finish(f: Frame, a: Params) -> z3.BoolRef:
        base = z3.And(f.recovering, f.alive[f.master], a["raise"] >= 1)
        if stale_master:
            return base
        return z3.And(base, f.u.forall([M], lambda y: z3.Or(
            y == f.master, z3.Not(f.alive[y]), f.collected[y])))

    def e_finish(pre: Frame, a: Params) -> dict[str, Any]:
        w = pre.master
        u = pre.u

        def undecided(m: z3.ExprRef) -> z3.BoolRef:
            return z3.And(pre.rec_active[m], z3.Not(pre.rec_ok[m]), z3.Not(pre.rec_failed[m]))

        failed = u.set_where(G, lambda m: z3.Or(pre.rec_failed[m], undecided(m)), "ff")
        v = pre.best_version + z3.If(u.exists([G], undecided), a["raise"], 0)
        learned = _learn(pre, w, pre.rec_ok, failed)
        return {
            **learned,
            "recovering": z3.BoolVal(False, u.ctx), "rec_failed": failed,
            "recovery_failed": u.set_where(G, lambda m: z3.Or(pre.recovery_failed[m],
                                                              undecided(m)), "rf"),
            "version": store(pre.version, w, v), "table": store(pre.table, w, pre.best_table),
            "given": store(pre.given, v, pre.best_table),
            **_publish(pre, w, v, pre.best_table, pre.rec_ok, failed)}

    act("finish_recovery", (("raise", "Int"),), g_finish, e_finish,
        ("recovering", "version", "table", "rec_failed", "recovery_failed", "given", *_LEARNS,
         *_PUBLISHES),
        "000 §1.2: every member answered or left: the most recent table; §2.2: a migration a "
        "completed list names is completed, the other active ones fail (version raised by "
        "`raise`); published, then repartitioning may start")

    return System(
        name="migration", variant=variant, sorts=(M, P, G), variables=VARIABLES, init=init,
        actions=tuple(actions), properties=_properties(), lemmas=_lemmas(minimum, split),
        sizes={M: members, P: partitions, G: migrations}, budgets=dict(DEFAULT_BUDGETS),
        describe=describe,
        design="000 §1 (the partition table: master-only updates, the most recent table after a "
               "master change) and §2 (safe migration commit, recovery of master crashes)",
        abstractions=(
            "network: monotone sets of sent operations (loss, reorder, duplication)",
            "replica indices: replica ownership per partition; the source is the source "
            "endpoint",
            "the master is never a destination",
            "completed lists only grow (no eviction)",
            "Fetch and its reply are one step",
            "a migration's table change is its target replica owners",
            "the master's other table updates give any table, published once",
        ))


def describe(f: Frame, model: z3.ModelRef) -> dict[str, Any]:
    """A frame's protocol state as JSON (the network's payloads left out)."""
    return {v.name: value_json(model, f[v.name]) for v in VARIABLES
            if not v.ghost and not v.name.startswith(("pub_", "commit_", "published"))}


# --- specs ----------------------------------------------------------------------------------------

_PUBLISHING = {"master_commits": "master", "fail": "master", "publish": "master",
               "update_table": "master", "destination_split": "master"}


def _properties() -> tuple[Property, ...]:
    def version_step(pre: Frame, post: Frame, name: str, a: Params) -> z3.BoolRef:
        return pre.u.forall([M], lambda x: z3.Implies(
            z3.And(pre.alive[x], post.alive[x]), post.version[x] >= pre.version[x]))

    def order_step(pre: Frame, post: Frame, name: str, a: Params) -> z3.BoolRef:
        def body(m: z3.ExprRef) -> z3.BoolRef:
            return z3.And(
                z3.Implies(z3.And(post.dest_committed[m], z3.Not(pre.dest_committed[m])),
                           z3.And(z3.Not(pre.master_committed[m]),
                                  z3.Not(pre.source_committed[m]))),
                z3.Implies(z3.And(post.master_committed[m], z3.Not(pre.master_committed[m])),
                           z3.And(z3.Not(pre.source_committed[m]),
                                  z3.Not(pre.dest_rolled_back[m]))),
                z3.Implies(z3.And(post.source_committed[m], z3.Not(pre.source_committed[m])),
                           z3.Not(pre.master_rolled_back[m])))
        return pre.u.forall([G], body)

    def atomic(f: Frame) -> z3.BoolRef:
        return f.u.forall([G], lambda m: z3.And(
            z3.Not(z3.And(f.source_committed[m], f.dest_rolled_back[m])),
            z3.Not(z3.And(f.dest_committed[m], f.source_rolled_back_live[m]))))

    def master_only(f: Frame) -> z3.BoolRef:
        return f.u.forall([M, M], lambda x, y: z3.Implies(
            z3.And(f.alive[x], f.alive[y], f.version[x] == f.version[y]),
            eq(f.table[x], f.table[y])))

    def most_recent(pre: Frame, post: Frame, name: str, a: Params) -> z3.BoolRef:
        if name == "finish_recovery":
            w = pre.master
        elif name in _PUBLISHING:
            w = a["master"]
        else:
            return z3.BoolVal(True, pre.u.ctx)
        return pre.u.forall([M], lambda y: z3.Implies(
            z3.And(pre.alive[y], y != w), pre.version[y] <= post.version[w]))

    def reject_stale(pre: Frame, post: Frame, name: str, a: Params) -> z3.BoolRef:
        if name not in ("source_accepts", "destination_accepts"):
            return z3.BoolVal(True, pre.u.ctx)
        m = a["m"]
        x = pre.source[m] if name == "source_accepts" else pre.destination[m]
        return z3.And(pre.version[x] == pre.started_on[m], pre.u.forall(
            [G], lambda o: z3.Or(o == m, z3.Not(pre.active[x][o]))))

    return (
        Property("PT-VERSION", step=version_step,
                 formula="∀x. alive(x) ∧ alive'(x) → version'(x) ≥ version(x)",
                 lemmas=("failure-raises", "recovery-not-older", "master-follows-itself")),
        Property("MIG-COMMIT-ORDER", step=order_step,
                 formula="∀m. a new destination commit sees no master or source commit; a new "
                         "master commit no source commit or destination rollback; a new source "
                         "commit no master rollback",
                 lemmas=_ORDER_LEMMAS),
        Property("MIG-ATOMIC", state=atomic,
                 formula="∀m. ¬(source_committed ∧ dest_rolled_back) ∧ ¬(dest_committed ∧ "
                         "source rolled back while the destination was alive and not split off)",
                 lemmas=_ORDER_LEMMAS),
        Property("PT-MOST-RECENT", step=most_recent,
                 formula="a publication by master w: ∀y ≠ w alive. version(y) ≤ version'(w)",
                 lemmas=_ORDER_LEMMAS),
        Property("PT-MASTER-ONLY", state=master_only,
                 formula="∀x, y alive. version(x) = version(y) → table(x) = table(y)",
                 lemmas=(*_ORDER_LEMMAS, "commit-table", "given-tables")),
        Property("MIG-REJECT-STALE", step=reject_stale,
                 formula="a participant accepting m: version = started_on(m) and no other "
                         "active migration"),
    )


_ORDER_LEMMAS: tuple[str, ...] = (
    "two-endpoints", "splits", "failure-raises", "master-follows-itself", "followers",
    "old-masters-dead", "commit-carries-it", "flight-ends", "followers-settled",
    "collected-followers", "publications-not-newer", "followers-not-newer", "publishers",
    "recovery-not-older", "commits-not-newer", "failures-decided", "recovered-abandoned",
    "recovery-collects", "recovery-saw-commits", "master-alive", "flight-of-master",
    "one-flight", "unstarted", "request-phase", "commit-phase", "destination-first",
    "decided-once", "ok-lists-after-destination", "rolled-back-stays-failed",
    "commit-not-older")


def _lemmas(minimum: int, split: bool) -> tuple[Lemma, ...]:
    out: list[Lemma] = []

    def lem(name: str, formula: str, design: str, sorts: Sequence[str],
            body: Callable[..., z3.BoolRef]) -> None:
        def state(f: Frame) -> z3.BoolRef:
            if not sorts:
                return body(f)
            return f.u.forall(sorts, lambda *xs: body(f, *xs))
        out.append(Lemma(name, state, formula, design))

    lem("failure-raises", f"∀m. failure_increment(m) ≥ {minimum}",
        "000 §2.1 step 4: on a failed commit the master does not update its table but "
        "increments its version (by 2)", [G],
        lambda f, m: f.failure_increment[m] >= minimum)
    lem("recovery-not-older", "recovering → version(master) ≤ best_version",
        "000 §1.2: the new master looks for the most recent partition table, its own included",
        [], lambda f: z3.Implies(f.recovering, f.version[f.master] <= f.best_version))
    lem("master-follows-itself", "follows(master) = master",
        "000 §1.1: only the master updates the table; it takes no table from another member",
        [], lambda f: f.follows[f.master] == f.master)
    lem("two-endpoints", "source(m) ≠ destination(m)",
        "000 §2.1: a migration moves a replica from its migration source to its migration "
        "destination, two members", [G], lambda f, m: f.source[m] != f.destination[m])
    lem("followers", "follows(x) = master ∨ ¬alive(follows(x))",
        "000 §1.2: a member follows the master until it notices its crash", [M],
        lambda f, x: z3.Or(f.follows[x] == f.master, z3.Not(f.alive[f.follows[x]])))
    lem("old-masters-dead", "sent_request(m) → (started_by(m) = master ∧ ¬recovering) ∨ "
        "¬alive(started_by(m))",
        "000 §1.2: the master changes only when it crashes; a new master starts no migration "
        "before its recovery ends", [G],
        lambda f, m: z3.Implies(f.sent_request[m], z3.Or(
            z3.And(f.started_by[m] == f.master, z3.Not(f.recovering)),
            z3.Not(f.alive[f.started_by[m]]))))
    lem("commit-carries-it", "sent_commit(m) → commit_ok(m)(m) ∧ ¬commit_failed(m)(m)",
        "000 §2.1 step 1: the commit carries the completed list with the migration successful",
        [G], lambda f, m: z3.Implies(f.sent_commit[m], z3.And(
            f.commit_ok[m][m], z3.Not(f.commit_failed[m][m]))))
    lem("flight-ends", "sent_request(m) ∧ started_by(m) = master ∧ not in flight → "
        "master_committed(m) ∨ master_rolled_back(m)",
        "000 §2.1: the master completes every migration it starts, as successful (step 3) or "
        "failed (step 4)", [G],
        lambda f, m: z3.Implies(
            z3.And(f.sent_request[m], f.started_by[m] == f.master, z3.Not(f.requesting[m]),
                   z3.Not(f.committing[m])),
            z3.Or(f.master_committed[m], f.master_rolled_back[m])))
    lem("followers-settled", "¬recovering ∧ alive(x) → follows(x) = master",
        "000 §1.2: the new master's recovery ends when every live member answered its fetch "
        "(and follows it)", [M],
        lambda f, x: z3.Implies(z3.And(z3.Not(f.recovering), f.alive[x]),
                                f.follows[x] == f.master))
    lem("collected-followers", "recovering ∧ collected(y) → follows(y) = master ∧ version(y) ≤ "
        "best_version",
        "000 §1.2: the new master keeps the most recent table of those it collected", [M],
        lambda f, y: z3.Implies(z3.And(f.recovering, f.collected[y]), z3.And(
            f.follows[y] == f.master, f.version[y] <= f.best_version)))
    lem("publications-not-newer", "published(w, k) → pub_version(w, k) ≤ version(w)",
        "000 §1.1: the master publishes its own table; its version only grows", [M],
        lambda f, w: f.u.forall_int(1, lambda k: z3.Implies(
            f.published[w][k], f.pub_version[w][k] <= f.version[w])))
    lem("followers-not-newer", "¬recovering ∧ alive(x) ∧ x ≠ master → version(x) ≤ "
        "version(master) ∨ (∃m. committing(m) ∧ destination(m) = x ∧ version(x) = "
        "version(master) + 1)",
        "000 §1.1: a member takes its master's tables; §2.1 step 2: the destination is one "
        "version ahead while the master waits for its commit", [M],
        lambda f, x: z3.Implies(
            z3.And(z3.Not(f.recovering), f.alive[x], x != f.master),
            z3.Or(f.version[x] <= f.version[f.master],
                  f.u.exists([G], lambda m: z3.And(
                      f.committing[m], f.destination[m] == x,
                      f.version[x] == f.version[f.master] + 1)))))
    lem("publishers", "published(w, k) → (w = master ∧ ¬recovering) ∨ ¬alive(w)",
        "000 §1.1: only the master publishes the partition table; §1.2: a new master "
        "publishes once its recovery ends", [M],
        lambda f, w: f.u.forall_int(1, lambda k: z3.Implies(f.published[w][k], z3.Or(
            z3.And(w == f.master, z3.Not(f.recovering)), z3.Not(f.alive[w])))))
    lem("commits-not-newer", "sent_commit(m) ∧ ¬committing(m) ∧ alive(started_by(m)) → "
        "commit_version(m) ≤ version(started_by(m))",
        "000 §2.1 steps 3-4: the master ends the commit with version + 1 (committed) or more "
        "(failed)", [G],
        lambda f, m: z3.Implies(
            z3.And(f.sent_commit[m], z3.Not(f.committing[m]), f.alive[f.started_by[m]]),
            f.commit_version[m] <= f.version[f.started_by[m]]))
    lem("failures-decided", "m failed in any completed list, publication, commit or "
        "recovery, or rolled back → master_rolled_back(m) ∨ recovery_failed(m)",
        "000 §2.1 step 4 and §2.2: a migration is completed as failed by its master or by a "
        "new master's recovery", [G],
        lambda f, m: z3.Implies(z3.Not(z3.Or(f.master_rolled_back[m], f.recovery_failed[m])),
                                z3.And(no_failed(f, m), z3.Not(f.dest_rolled_back[m]),
                                       z3.Not(f.source_rolled_back_live[m]))))
    lem("recovered-abandoned", "recovery_failed(m) → ¬alive(started_by(m)) ∧ no live member "
        "follows started_by(m)",
        "000 §1.2, §2.2: the new master fails the active migrations of the master that crashed, "
        "once every live member follows it", [G, M],
        lambda f, m, x: z3.Implies(f.recovery_failed[m], z3.And(
            z3.Not(f.alive[f.started_by[m]]),
            z3.Implies(f.alive[x], f.follows[x] != f.started_by[m]))))
    lem("recovery-collects", "recovering → completed_ok(master) ⊆ rec_ok ∧ ∀ collected y: "
        "completed_ok(y) ⊆ rec_ok",
        "000 §2.2: the new master collects the completed migrations of every member, its own "
        "included", [M, G],
        lambda f, y, m: z3.Implies(f.recovering, z3.And(
            z3.Implies(f.completed_ok[f.master][m], f.rec_ok[m]),
            z3.Implies(z3.And(f.collected[y], f.completed_ok[y][m]), f.rec_ok[m]))))
    lem("recovery-saw-commits", "recovery_failed(m) ∧ alive(destination(m)) → "
        "¬dest_committed(m)",
        "000 §2.2: a migration some member has in its completed list is completed as "
        "successful; the new master fails only the others", [G],
        lambda f, m: z3.Implies(z3.And(f.recovery_failed[m], f.alive[f.destination[m]]),
                                z3.Not(f.dest_committed[m])))
    lem("commit-table", "committing(m) → commit_table(m) = table(master) with m applied",
        "000 §2.1 steps 1-2: the commit carries a copy of the master's table with the "
        "migration applied; the master's own table does not change while it waits", [G],
        lambda f, m: z3.Implies(f.committing[m],
                                eq(f.commit_table[m], _apply(f, f.table[f.master], m))))

    def given(f: Frame, v: z3.ArithRef, t: Any) -> z3.BoolRef:
        return eq(t, f.given[v])

    lem("given-tables", "every table a live member holds or can still take (a publication of "
        "the master it follows, a commit to it from that master, the recovery's best) is the "
        "table the master last gave its version",
        "000 §1.1: only the master updates the partition table, and every update raises its "
        "version; §2.1 step 4: a failed commit raises the version past the commit's", [M, M, G],
        lambda f, x, w, m: z3.And(
            z3.Implies(f.alive[x], given(f, f.version[x], f.table[x])),
            f.u.forall_int(1, lambda k: z3.Implies(
                z3.And(f.published[w][k], f.alive[x], f.follows[x] == w, x != w),
                given(f, f.pub_version[w][k], f.pub_table[w][k]))),
            z3.Implies(z3.And(f.sent_commit[m], f.alive[f.destination[m]],
                              f.follows[f.destination[m]] == f.started_by[m]),
                       given(f, f.commit_version[m], f.commit_table[m])),
            z3.Implies(f.recovering, given(f, f.best_version, f.best_table))))
    if split:
        lem("splits", "dest_split(m) → master_rolled_back(m) ∧ sent_commit(m)",
            "000 §2.1 step 4: the master fails a commit whose destination left during it", [G],
            lambda f, m: z3.Implies(f.dest_split[m], z3.And(f.master_rolled_back[m],
                                                            f.sent_commit[m])))
    else:
        lem("splits", "¬dest_split(m)",
            "crash-stop members: a destination leaves a commit only by crashing", [G],
            lambda f, m: z3.Not(f.dest_split[m]))
    lem("master-alive", "alive(master)",
        "000 §1.2: a crashed master is replaced by a live member", [],
        lambda f: f.alive[f.master])
    def inflight(f: Frame, m: z3.ExprRef) -> z3.BoolRef:
        return z3.Or(f.requesting[m], f.committing[m])

    def no_ok_elsewhere(f: Frame, m: z3.ExprRef) -> z3.BoolRef:
        """``m`` is in no successful list but the destination's own and its commit's."""
        u = f.u
        return z3.And(
            u.forall([M], lambda x: z3.Or(x == f.destination[m], z3.Not(f.completed_ok[x][m]))),
            u.forall([M], lambda w: u.forall_int(1, lambda k: z3.Implies(
                f.published[w][k], z3.Not(f.pub_ok[w][k][m])))),
            z3.Not(f.rec_ok[m]),
            u.forall([G], lambda o: z3.Implies(z3.And(o != m, f.sent_commit[o]),
                                               z3.Not(f.commit_ok[o][m]))))

    def no_failed(f: Frame, m: z3.ExprRef) -> z3.BoolRef:
        u = f.u
        return z3.And(
            u.forall([M], lambda x: z3.Not(f.completed_failed[x][m])),
            u.forall([M], lambda w: u.forall_int(1, lambda k: z3.Implies(
                f.published[w][k], z3.Not(f.pub_failed[w][k][m])))),
            z3.Not(f.rec_failed[m]),
            u.forall([G], lambda o: z3.Implies(f.sent_commit[o], z3.Not(f.commit_failed[o][m]))))

    def no_ghost(f: Frame, m: z3.ExprRef) -> z3.BoolRef:
        return z3.And(*[z3.Not(f[n][m]) for n in (
            "dest_committed", "dest_rolled_back", "master_committed", "master_rolled_back",
            "source_committed", "source_rolled_back_live", "recovery_failed")])

    lem("flight-of-master", "requesting(m) ∨ committing(m) → started_by(m) = master ∧ "
        "¬recovering ∧ sent_request(m) ∧ ¬(requesting(m) ∧ committing(m))",
        "000 §2.1: the master runs one migration; a new master has none in flight", [G],
        lambda f, m: z3.Implies(inflight(f, m), z3.And(
            f.started_by[m] == f.master, z3.Not(f.recovering), f.sent_request[m],
            f.destination[m] != f.master, z3.Not(z3.And(f.requesting[m], f.committing[m])))))
    lem("one-flight", "in flight(m) ∧ in flight(o) → m = o",
        "000 §2.1: the master runs one migration at a time", [G, G],
        lambda f, m, o: z3.Implies(z3.And(inflight(f, m), inflight(f, o)), m == o))
    lem("unstarted", "¬sent_request(m) → m is in no list, no operation, no event",
        "000 §2.1: a migration starts with the master's MigrationRequest", [G],
        lambda f, m: z3.Implies(z3.Not(f.sent_request[m]), z3.And(
            z3.Not(inflight(f, m)), z3.Not(f.sent_data[m]), z3.Not(f.sent_done[m]),
            z3.Not(f.sent_commit[m]), z3.Not(f.sent_ack[m]), no_ghost(f, m),
            f.u.forall([M], lambda x: z3.Not(f.active[x][m])), z3.Not(f.rec_active[m]),
            z3.Not(f.completed_ok[f.destination[m]][m]), no_ok_elsewhere(f, m),
            no_failed(f, m))))
    lem("request-phase", "requesting(m) → no commit, no event, m in no completed list",
        "000 §2.1: no commit before the destination has the data", [G],
        lambda f, m: z3.Implies(f.requesting[m], z3.And(
            z3.Not(f.sent_commit[m]), z3.Not(f.sent_ack[m]), no_ghost(f, m),
            z3.Not(f.completed_ok[f.destination[m]][m]), no_ok_elsewhere(f, m),
            no_failed(f, m))))
    lem("commit-phase", "committing(m) → sent_commit(m) ∧ commit_ok(m)(m) ∧ commit_version(m) = "
        "version(master) + 1 ∧ no master or source event ∧ m successful only at the "
        "destination and in its commit, failed nowhere",
        "000 §2.1 steps 1-2: the master's own state does not change while it waits", [G],
        lambda f, m: z3.Implies(f.committing[m], z3.And(
            f.sent_commit[m], f.sent_done[m], f.commit_ok[m][m],
            f.commit_version[m] == f.version[f.master] + 1,
            z3.Not(f.master_committed[m]), z3.Not(f.master_rolled_back[m]),
            z3.Not(f.source_committed[m]), z3.Not(f.dest_rolled_back[m]),
            z3.Not(f.source_rolled_back_live[m]), no_ok_elsewhere(f, m), no_failed(f, m))))
    lem("destination-first", "(sent_ack(m) ∧ committing(m)) ∨ master_committed(m) ∨ "
        "source_committed(m) → dest_committed(m); dest_committed(m) → sent_commit(m); "
        "sent_commit(m) → sent_done(m)",
        "000 §2.1: we commit a migration on MASTER only when MIGRATION DESTINATION committed, "
        "and on MIGRATION SOURCE only when it is committed in MASTER", [G],
        lambda f, m: z3.And(
            z3.Implies(z3.Or(z3.And(f.sent_ack[m], f.committing[m]), f.master_committed[m],
                             f.source_committed[m]), f.dest_committed[m]),
            z3.Implies(f.dest_committed[m], f.sent_commit[m]),
            z3.Implies(f.sent_commit[m], f.sent_done[m])))
    lem("decided-once", "a member's result of m is one; the destination's events are its "
        "result; sent_done(m) → the destination has m active or decided",
        "000 §2.1: participants finalise only when they find the result in the completed list",
        [M, G], lambda f, x, m: z3.And(
            z3.Not(z3.And(f.completed_ok[x][m], f.completed_failed[x][m])),
            z3.Implies(f.active[x][m], z3.And(z3.Not(f.completed_ok[x][m]),
                                              z3.Not(f.completed_failed[x][m]))),
            z3.Implies(x == f.destination[m], z3.And(
                z3.Implies(f.dest_committed[m], f.completed_ok[x][m]),
                z3.Implies(f.dest_rolled_back[m], f.completed_failed[x][m]),
                z3.Implies(f.sent_done[m], z3.Or(f.active[x][m], f.completed_ok[x][m],
                                                 f.completed_failed[x][m]))))))
    lem("ok-lists-after-destination", "m successful in any completed list, publication, "
        "commit or recovery → dest_committed(m)",
        "000 §2.1: a migration is completed successful only once the destination committed",
        [G], lambda f, m: z3.Implies(z3.Not(f.dest_committed[m]), z3.And(
            no_ok_elsewhere(f, m), z3.Not(f.completed_ok[f.destination[m]][m]))))
    lem("rolled-back-stays-failed", "master_rolled_back(m) → ¬master_committed(m) ∧ not in "
        "flight ∧ (dest_split(m) ∨ m successful nowhere but at a crashed destination)",
        "000 §2.1 step 4: a failed migration is completed as failed; the destination that may "
        "have committed it has crashed", [G],
        lambda f, m: z3.Implies(f.master_rolled_back[m], z3.And(
            z3.Not(f.master_committed[m]), z3.Not(inflight(f, m)),
            z3.Or(f.dest_split[m], z3.And(
                no_ok_elsewhere(f, m),
                z3.Implies(z3.Or(f.sent_commit[m], f.completed_ok[f.destination[m]][m]),
                           z3.Not(f.alive[f.destination[m]])))))))
    lem("commit-not-older", "sent_commit(m) ∧ ¬dest_committed(m) ∧ alive(dst) ∧ "
        "¬dest_split(m) → its master's "
        "publications and other commits are older than the commit, and so is dst's table "
        "while it follows it",
        "000 §2.1 steps 1-2: the commit carries version + 1 and the master publishes nothing "
        "while it waits; the destination takes it unless it has a newer table", [G, G],
        lambda f, m, o: z3.Implies(
            z3.And(f.sent_commit[m], z3.Not(f.dest_committed[m]), f.alive[f.destination[m]],
                   z3.Not(f.dest_split[m])),
            z3.And(f.u.forall_int(1, lambda k: z3.Implies(
                f.published[f.started_by[m]][k],
                f.pub_version[f.started_by[m]][k] < f.commit_version[m])),
                   z3.Implies(z3.And(o != m, f.sent_commit[o],
                                     f.started_by[o] == f.started_by[m]),
                              f.commit_version[o] < f.commit_version[m]),
                   z3.Implies(f.follows[f.destination[m]] == f.started_by[m],
                              f.version[f.destination[m]] < f.commit_version[m]))))
    return tuple(out)


#: the migrations (an id and the master that starts it) the explorer's whole graph names at
#: the scopes of the differential test, keyed by (members, joiners, partitions, backups,
#: crashes, joins, shutdowns): measured, since the Refinement numbers each one it meets
MIGRATIONS_MET: dict[tuple[int, ...], int] = {
    (3, 0, 2, 1, 0, 0, 1): 5,
    (3, 0, 1, 1, 1, 0, 1): 12,
}


def replayable(system: System) -> System:
    """``system`` without the steps that over-approximate the reference implementation's
    (`update_table` outside a membership change, and `fail` of a request the reference only
    fails when a participant leaves): a shortest counterexample through them does not replay,
    one of this system does (hz37-stale-master-table's, through a commit)."""
    return dataclasses.replace(system, actions=tuple(
        a for a in system.actions if a.name not in ("update_table", "fail")))


def system_for(variant: str, scope: Mapping[str, int]) -> System:
    """The system at the size of an explorer scope (`partsafe check migration`'s parameters),
    with as many migrations as ``scope`` names (``migrations``), or as the explorer's graph
    names (:data:`MIGRATIONS_MET`), or eight per partition and fault."""
    key = tuple(scope.get(k, 0) for k in ("members", "joiners", "partitions", "backups",
                                           "crashes", "joins", "shutdowns"))
    faults = scope.get("crashes", 0) + scope.get("joins", 0) + scope.get("shutdowns", 0)
    count = scope.get("migrations") or MIGRATIONS_MET.get(key) or \
        8 * scope["partitions"] * max(1, faults)
    return system(variant, members=scope["members"] + scope.get("joiners", 0),
                  partitions=scope["partitions"], migrations=count)


def explorer_scope(trace: Sequence[Mapping[str, Any]]) -> dict[str, int]:
    """The explorer scope a bounded counterexample needs: its members and partitions, no joins,
    and a crash budget for each crash it takes."""
    steps = [t["action"] for t in trace[1:]]
    init = trace[0].get("state", {})
    return {"members": len(init.get("age", {})) or DEFAULT_SIZES["members"], "joiners": 0,
            "partitions": len(init.get("best_table", {})) or DEFAULT_SIZES["partitions"],
            "joins": 0,
            "crashes": steps.count("crash") + steps.count("master_crash"),
            # a graceful shutdown makes the master plan the migrations a run starts
            "shutdowns": 1 if "start" in steps else 0}


# --- the map from the reference implementation ------------------------------------------------

class Refinement:
    """refimpl/partition_service.py's 3.7 states and steps as this system's variables and
    actions (the differential test's map). Members are the protocol's nodes in order, partitions
    its partition ids; a migration (its id and the master that started it) gets the next
    ``Migration`` index the first time a state or an event names it, and its partition, source
    endpoint, destination, target replica owners and failure increment are read from the
    master's table when it starts. A node's table is its replica sets (the replica index
    abstracted), a completed list a lower bound of the model's (the reference evicts entries
    every member acknowledged), the master the live member at the head of its own list.

    A crashed or departed master stays the model's master until the oldest live member notices
    it (its failure detector): that step is ``master_crash`` (000 §1.2: the new master is the
    one that finds itself oldest), so the old master's operations still in flight reach the
    members that have not noticed it yet as they do in the model. Members that noticed it
    before the new master follow the old one in the model and ``follow_new_master`` in that
    step. With two departures ahead of the oldest live member its list no longer says which
    of them was master: the master and the recovery are then left free."""

    def __init__(self, protocol: Any) -> None:
        from partsafe.refimpl import partition_table as pt

        self.pt = pt
        self.protocol = protocol
        self.nodes: tuple[str, ...] = tuple(protocol.nodes)
        self.index = {n: i for i, n in enumerate(self.nodes)}
        self.migrations: dict[tuple[str, str], int] = {}
        #: per migration index: partition, source endpoint, destination, target owners,
        #: failure increment, started by, started on
        self.info: dict[int, tuple[int, int, int, frozenset[int], int, int, int]] = {}
        self.independent = "hz37-independent-commit" in getattr(protocol, "rules", ())

    # -- migrations --------------------------------------------------------------------------

    def migration(self, m: Any, table: Any = None) -> int:
        """The index of migration ``m``; ``table`` is the master's table it starts on."""
        key = (m.id, m.master)
        if key not in self.migrations:
            self.migrations[key] = len(self.migrations)
        i = self.migrations[key]
        if i not in self.info and table is not None:
            pt = self.pt
            endpoint = self.protocol._source_endpoint(table, m)
            after = pt.apply_migration(table, m.partition, m.decision).replicas[m.partition]
            self.info[i] = (m.partition, self.index.get(endpoint or "", 0),
                            self.index[m.destination],
                            frozenset(self.index[r] for r in after if r is not None),
                            pt.failure_increment(m.decision, self.protocol.failure_rule),
                            self.index.get(m.master, 0), m.version)
        return i

    @staticmethod
    def _live(nodes: Mapping[str, Hashable | None]) -> dict[str, Any]:
        return {n: st for n, st in nodes.items()
                if st is not None and getattr(st, "shutdown", "") != "left"}

    def roles(self, nodes: Mapping[str, Hashable | None]) -> tuple[str | None, bool]:
        """The model's master and whether it is a departed one the oldest live member has not
        noticed yet (None: not known, two departed members ahead of the oldest)."""
        live = self._live(nodes)
        for n, st in live.items():
            if st.members and st.members[0] == n:
                return n, False
        heir = next((n for n in self.nodes if n in live), None)
        if heir is None:
            return None, False
        members = live[heir].members
        ahead = members[:members.index(heir)] if heir in members else ()
        older = self.nodes[:self.nodes.index(heir)]
        # one departed member older than the heir: the master, unless the heir noticed it
        return (ahead[0], True) if len(ahead) == 1 and len(older) == 1 else (None, False)

    def _follows(self, name: str, st: Any, master: str | None, window: bool) -> str | None:
        head = st.members[0] if st.members else None
        if master is None:
            return None
        if name == master:
            return name
        if window and head != master:
            return master  # it noticed the old master before the new master did
        return head

    # -- states ----------------------------------------------------------------------------

    def state(self, nodes: Mapping[str, Hashable | None], crashed: frozenset[str]
              ) -> dict[str, Any]:
        nodes = {n: (None if n in crashed else st) for n, st in nodes.items()}
        live = self._live(nodes)
        master, window = self.roles(nodes)
        ms: Any = live.get(master) if master is not None else None
        if ms is not None:
            for f in ms.flights:
                self.migration(f.migration, ms.table)
        out: dict[str, Any] = {"alive": {}, "follows": {}, "table": {}, "version": {},
                               "completed_ok": {}, "completed_failed": {}, "active": {},
                               "age": {i: i for i in range(len(self.nodes))}}
        for name in self.nodes:
            i = self.index[name]
            if name in live:
                out["alive"][i] = True
            elif master is not None:
                out["alive"][i] = window and name == master
            st: Any = live.get(name)
            if st is None:
                continue
            follows = self._follows(name, st, master, window)
            if follows is not None:
                out["follows"][i] = self.index[follows]
            t = st.table
            out["table"][i] = {p: {self.index[r] for r in arr if r is not None}
                               for p, arr in enumerate(t.replicas)}
            out["version"][i] = t.version
            out["completed_ok"][i] = {self.migration(c.migration, t): True
                                      for c in st.completed if c.success}
            out["completed_failed"][i] = {self.migration(c.migration, t): True
                                          for c in st.completed if not c.success}
            out["active"][i] = {self.migration(m, t) for m in st.active}
        if master is not None:
            out["master"] = self.index[master]
        if ms is not None:
            out["requesting"] = {self.migration(f.migration) for f in ms.flights
                                 if f.phase == "request"}
            out["committing"] = {self.migration(f.migration) for f in ms.flights
                                 if f.phase == "commit"}
            rec = ms.recovery
            out["recovering"] = rec is not None
            # a crashed member's answer may still be in flight: the collection is left free
            if rec is not None and rec.waiting <= set(live):
                out["collected"] = {self.index[y]: y not in rec.waiting for y in live
                                    if y != master}
                out["best_version"] = rec.version
                out["best_table"] = {p: {self.index[r] for r in arr if r is not None}
                                     for p, arr in enumerate(rec.replicas)}
                out["rec_ok"] = {self.migration(m, ms.table): True
                                 for m, ok in rec.completed if ok}
                out["rec_failed"] = {self.migration(m, ms.table): True
                                     for m, ok in rec.completed if not ok}
                out["rec_active"] = {self.migration(m, ms.table) for m in rec.active}
        for n, name in enumerate(("partition", "source", "destination", "target",
                                  "failure_increment", "started_by", "started_on")):
            out[name] = {i: info[n] for i, info in self.info.items()}
        return out

    # -- steps -------------------------------------------------------------------------------

    #: the Refinement is given the nodes' states before and after a step
    reads_states = True
    #: a reference run follows a bounded counterexample when it takes the counterexample's
    #: actions in order (per member), with the same members; it may take other actions between
    #: them (the planner's other migrations, deliveries the counterexample does not need)
    free_actions = frozenset({"start", "source_accepts", "destination_accepts",
                              "commit_to_destination", "master_commits", "fail", "receive",
                              "crash", "master_crash", "local_promotion", "finish_recovery",
                              "destination_commits", "collect", "follow_new_master",
                              "update_table"})
    matched_sorts = frozenset({M})

    def _find(self, states: Sequence[Mapping[str, Hashable | None]], key: str,
              master: str | None = None, holder: str | None = None) -> Any:
        """The migration of id ``key`` the states name: started by ``master``, or active at
        ``holder``, or any."""
        found: list[Any] = []
        for nodes in states:
            for name, st in nodes.items():
                if st is None:
                    continue
                s: Any = st
                ms = [f.migration for f in s.flights] + list(s.active)
                if holder is None or name == holder:
                    found.extend(m for m in ms if m.id == key)
                found.extend(c.migration for c in s.completed if c.migration.id == key)
        for m in found:
            if master is not None and m.master == master:
                return m
        return found[0] if found else None

    def actions(self, action: tuple[Any, ...], events: Sequence[Any],
                before: Mapping[str, Hashable | None] | None = None,
                after: Mapping[str, Hashable | None] | None = None
                ) -> list[tuple[str, dict[str, int]]]:
        """The abstract actions of one explorer step, in order, from its action, its events
        (``migration_started``, ``migration_committed`` and ``migration_rolled_back`` of the
        master, ``repartitioning`` and the table it applies, ``member_left``,
        ``member_removed`` and a member's own table change after it: the hz37-local-promotion
        variant) and the nodes' states before and after it (a table or a completed list taken
        from the master, the master's commit phase, a recovery's collected members)."""
        before = {n: st for n, st in (before or {}).items()}
        after = {n: st for n, st in (after or {}).items()}
        live_b, live_a = self._live(before), self._live(after)
        master_b, _ = self.roles(before)
        out: list[tuple[str, dict[str, int]]] = []
        idx = self.index
        kind = action[0]

        def mig(key: str, master: str | None = None, holder: str | None = None) -> int:
            m = self._find((before, after), key, master, holder)
            if m is None:  # a migration no node's state names any more: no index (-1)
                return -1
            st: Any = live_a.get(m.master) or live_b.get(m.master)
            return self.migration(m, st.table if st is not None else None)

        def head(nodes: Mapping[str, Any], n: str) -> str | None:
            st = nodes.get(n)
            return st.members[0] if st is not None and st.members else None

        recovering = {n for n, st in live_b.items()
                      if st.recovery is not None or (st.members and st.members[0] != n)}
        if kind == "crash":
            n = action[1]
            if n in live_b and n != master_b:
                out.append(("crash", {"member": idx[n]}))
            return out
        if kind == "suspect":
            n, q = action[1], action[2]
            if head(before, n) != n and head(after, n) == n:
                out.append(("master_crash", {"master": idx[q], "heir": idx[n]}))
                out.extend(("follow_new_master", {"member": idx[y]}) for y in live_a
                           if y != n and head(before, y) == n)
            elif head(before, n) == q and q != master_b and head(after, n) != n:
                out.append(("follow_new_master", {"member": idx[n]}))
        if kind == "deliver":
            src, dst, msg = action[1], action[2], action[3]
            name = type(msg).__name__
            was: Any = live_b.get(dst)
            now: Any = after.get(dst)
            if was is not None and now is not None:
                if name == "FetchReply" and was.recovery is not None \
                        and src in was.recovery.waiting and src in live_b:
                    out.append(("collect", {"member": idx[src]}))
                elif name == "MigrationCommit" and src == head(before, dst) \
                        and not self.independent:
                    out.append(("destination_commits",
                                {"m": self.migration(msg.migration)}))
                elif name in ("PartitionState", "MigrationRequest", "MigrationData") \
                        and head(before, dst) != dst:
                    gained = set(now.completed) - set(was.completed)
                    finalised = any(e.TYPE in ("migration_committed", "migration_rolled_back")
                                    and e.role != "master" for e in events)
                    if now.table != was.table or gained or finalised:
                        sender = msg.migration.master if name == "MigrationData" else src
                        out.append(("receive", {"member": idx[dst], "sender": idx[sender]}))
                if not self.independent and dst in live_a:
                    old = {f.migration for f in was.flights if f.phase == "commit"}
                    for f in now.flights:
                        if f.phase == "commit" and f.migration not in old:
                            out.append(("commit_to_destination",
                                        {"master": idx[dst], "m": self.migration(f.migration)}))
        version = {n: st.table.version for n, st in live_b.items()}
        repartitioned: set[str] = set()
        finished: set[str] = set()
        removed = {e.member: e.removed for e in events if e.TYPE == "member_removed"}
        for e in events:
            t = e.TYPE
            me = idx.get(getattr(e, "member", ""), -1)
            if t == "member_left":
                if e.member != master_b and e.member in live_b:
                    out.append(("crash", {"member": me}))
            elif t == "repartitioning":
                repartitioned.add(e.member)
            elif t == "partition_table_applied" and e.sender == e.member:
                if e.member in repartitioned:
                    out.append(("update_table", {"master": me,
                                                 "raise": e.version - version[e.member]}))
                    repartitioned.discard(e.member)
                elif e.member in removed and head(after, e.member) != e.member:
                    out.append(("local_promotion",
                                {"member": me, "gone": idx[removed[e.member]]}))
                version[e.member] = e.version
            elif t == "partition_table_applied":
                version[e.member] = e.version
            elif t == "partition_table_published" and e.member in recovering \
                    and e.member not in finished:
                finished.add(e.member)
                out.append(("finish_recovery", {}))
            elif t == "migration_started":
                if e.role == "master":
                    m = mig(e.migration, master=e.member)
                    out.append(("start", {"master": me, "m": m}))
                else:
                    m = mig(e.migration, holder=e.member)
                    out.append(("destination_accepts" if e.role == "destination"
                                else "source_accepts", {"m": m}))
            elif t == "migration_committed" and e.role == "master":
                name = "commit_to_destination" if self.independent else "master_commits"
                out.append((name, {"master": me, "m": mig(e.migration, master=e.member)}))
            elif t == "migration_rolled_back" and e.role == "master":
                out.append(("fail", {"master": me, "m": mig(e.migration, master=e.member)}))
        return out

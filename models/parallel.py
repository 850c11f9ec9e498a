"""Hazelcast 4.1's parallel independent migrations (003 §1-§2) as a symbolic system.

**What is modelled.** Members (sort ``Member``) hold a copy of the partition table: per
``Partition`` its replica array (``table``) and, 003 §1.2, its own partition version
(``version``); the variant ``hz40-global-order-parallel`` compares one global version per member
instead (``gversion``, 003 §1.1). Each member has its active migrations (``active``). One member,
the master (``master``), plans: a migration (sort ``Migration``) has a partition, a source
endpoint (the member that sends the data: the source when it is the owner, else the owner) and a
destination, and the ``MigrationInfo`` it starts with carries the partition version it is
planned on (``planned``). The master runs migrations of different partitions in parallel, one
per partition at a time, and at most ``max_parallel`` per member, counted at the source endpoint
and at the destination (``load``; 003 §2.2 ``hazelcast.partition.max.parallel.migrations``):

* ``start``: the master starts a migration whose partition has none in flight (``busy``), when
  neither endpoint has ``max_parallel`` in flight, planned on its version of the partition
  (003 §2.2, §1.2);
* ``source_accepts`` / ``destination_accepts``: a participant executes the migration only if its
  version of the partition equals the planned version and it has no other active migration of
  the partition (003 §1.2: "If they are equal operation will be executed, otherwise it will be
  rejected"); the source sends its table with the data, which the destination takes as a
  publication first (``receive_data``, 003 §1.1 "members apply these completed migrations in
  case they haven't seen them yet");
* ``commit_to_destination``: 000 §2.1 steps 1-2 with 003 §1.2's versions: the master sends a
  copy of its table with the migration applied, the partition's version raised by the
  migration's increment (the global version by 1 in the variant); its own state does not change;
* ``destination_commits``: the destination takes the copy's partition when it is newer (the
  whole copy under a greater global version in the variant), finalises, and acknowledges;
* ``master_commits``: the master applies the migration, raises the partition's version, and
  publishes that partition only (003 §1.2 "after each partition migration, we can just publish
  that partition info only"); a master that is the destination commits first itself;
* ``fail``: a migration in its request phase is refused or times out: the replicas stay, the
  partition's version rises by the failure increment, published;
* ``finalize``: a participant learns the result from a completed migrations list;
* ``publish`` / ``receive``: the master publishes its table; a member applies a partition of a
  publication only when it carries a greater version of that partition (003 §1.2: "they can
  partially apply, partially ignore the received partition table"); in the variant, the whole
  publication when its global version is greater;
* ``update``: the master's other table updates (repair, repartitioning), with no migration in
  flight: a partition's replicas change and its version rises;
* ``join`` (fault): a member starts with the empty table (version 0 everywhere).

**Abstractions** (the differential test checks them against refimpl/partition_service.py):

* no crash and no master change: the specs judged here (the master's parallel schedule, the
  planned version, one table per version) are about one master's run, and the flaw of
  ``hz40-global-order-parallel`` needs none (its zoo scope has no crash); the new master's
  recovery of 003 is 000 §1.2's per partition (models/migration.py has 3.7's);
* a partition's replica array is an opaque value (an integer naming the array), and a
  migration's outcome is fixed by its ``MigrationInfo`` (``target``: the decision applied to the
  array of the planned version, which is the one array the master holds while the migration is
  in flight); ``EMPTY`` (0) is the array of a member that has not received the partition;
* the network is monotone: every operation stays deliverable for ever; a publication is named by
  its position in the master's sequence, an operation by its migration; a whole-table publish
  carries every partition (the reference leaves out the ones in flight, whose master array is
  the planned one, older than anything a destination holds: a superset);
* ``max_parallel`` is a parameter: any value of at least 1 in proofs, the scope's in bounded
  model checking; ``load`` counts the migrations in flight per endpoint, the count the
  reference's ``MigrationPlanTask`` computes from its flights (pinned from them by the
  differential test);
* participants may receive from the master before they know it (a joiner), and a migration's
  refusal is the master's ``fail`` at any time of its request phase (a refusal, a timeout);
* the master's update changes one partition per step; migration queues (the plan order) are not
  kept: the master may start any migration the limits allow (a superset of the plan).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Hashable, Mapping, Sequence
from typing import Any

import z3

from partsafe.models.migration import _add, _map, _none
from partsafe.models.system import (
    Action,
    Frame,
    Lemma,
    Params,
    Property,
    System,
    Universe,
    Var,
    eq,
    store,
    value_json,
)

M, P, G = "Member", "Partition", "Migration"

#: variants -> the spec their flaw breaks (refimpl VARIANT_TABLE's `breaks`)
VARIANTS: dict[str, str | None] = {
    "fixed": None,
    "hz40-global-order-parallel": "PT-MASTER-ONLY",
}
#: the specs of the catalogue this model judges
SPECS = ("PAR-VERSION", "PAR-ONE-PER-PARTITION", "PAR-MAX-PARALLEL", "PT-MASTER-ONLY")
#: the default scope of bounded model checking: the explorer's members and partitions, two
#: migrations (two partitions in flight at once) and its max.parallel.migrations
DEFAULT_SIZES = {"members": 3, "partitions": 2, "migrations": 2}
DEFAULT_MAX_PARALLEL = 2
#: fault budgets: joins (the explorer's `parallel` scope has none by default)
DEFAULT_BUDGETS = {"joins": 0}
#: the array of a partition a member has not received (the joiner's empty table)
EMPTY = 0

SET_M = (M, "Bool")
SET_G = (G, "Bool")
SET_P = (P, "Bool")
ROWS = (P, "Int")

VARIABLES: tuple[Var, ...] = (
    # the migrations' MigrationInfo (never modified) and the master
    Var("partition", (G, P), "the partition a migration belongs to"),
    Var("source", (G, M), "the source endpoint: the member that sends the data"),
    Var("destination", (G, M), "the migration destination"),
    Var("target", (G, "Int"), "the partition's replica array once the migration is applied"),
    Var("inc_ok", (G, "Int"), "the partition version increment of a commit"),
    Var("inc_fail", (G, "Int"), "the partition version increment of a failure"),
    Var("master", M, "the master"),
    Var("max_parallel", "Int", "hazelcast.partition.max.parallel.migrations"),
    # members
    Var("alive", SET_M, "a member of the cluster"),
    Var("table", (M, ROWS), "a member's partition table: the replica array per partition"),
    Var("version", (M, ROWS), "a member's partition versions (003 §1.2)"),
    Var("gversion", (M, "Int"), "a member's global table version (003 §1.1; the variant)"),
    Var("active", (M, SET_G), "active migrations of a participant"),
    # the master's migrations
    Var("started", SET_G, "the master started it (MigrationRequest sent)"),
    Var("inflight", SET_G, "in flight at the master"),
    Var("committing", SET_G, "in flight, commit sent to the destination"),
    Var("busy", SET_P, "partitions with a migration in flight"),
    Var("planned", (G, "Int"), "the partition version in the MigrationInfo"),
    Var("load", (M, "Int"), "migrations in flight with the member as an endpoint"),
    Var("decided", SET_G, "the master committed or failed it (in its completed list)"),
    # the network: monotone sets of sent operations, with their payloads
    Var("sent_data", SET_G, "the source sent the data, with its table"),
    Var("data_rows", (G, ROWS), "the source's table sent with the data"),
    Var("data_versions", (G, ROWS), "its partition versions"),
    Var("data_gversion", (G, "Int"), "its global version"),
    Var("sent_done", SET_G, "the destination answered the master"),
    Var("sent_commit", SET_G, "MigrationCommitOperation sent"),
    Var("commit_rows", (G, ROWS), "the commit's prepared table"),
    Var("commit_versions", (G, ROWS), "its partition versions"),
    Var("commit_gversion", (G, "Int"), "its global version"),
    Var("sent_ack", SET_G, "the destination acknowledged the commit"),
    Var("npub", "Int", "how many partition states the master sent"),
    Var("published", ("Int", "Bool"), "the positions of the master's partition states"),
    Var("pub_rows", ("Int", ROWS), "the table of the partition state at a position"),
    Var("pub_versions", ("Int", ROWS), "its partition versions"),
    Var("pub_gversion", ("Int", "Int"), "its global version"),
    Var("pub_carries", ("Int", SET_P), "the partitions it carries"),
    # ghosts for the proof of PT-MASTER-ONLY per partition
    Var("hist", (P, ("Int", "Int")), "the array the master gave a partition at each version",
        ghost=True),
    Var("top", (P, "Int"), "the greatest version the master gave a partition", ghost=True),
    Var("pending", SET_P, "a partition with a commit sent and not applied by the master",
        ghost=True),
    Var("pending_migration", (P, G), "that commit's migration", ghost=True),
)

#: the network's variables (and the master's bookkeeping of what it sent): not protocol state a
#: member holds, left out of traces and free in the differential test
NETWORK = ("started", "decided", "sent_data", "data_rows", "data_versions", "data_gversion",
           "sent_done", "sent_commit", "commit_rows", "commit_versions", "commit_gversion",
           "sent_ack", "npub", "published", "pub_rows", "pub_versions", "pub_gversion",
           "pub_carries")


def _all(u: Universe, sort: str = P) -> Any:
    return u.const((sort, "Bool"), z3.BoolVal(True, u.ctx))


# --- the system --------------------------------------------------------------------------------


def system(variant: str = "fixed", members: int = DEFAULT_SIZES["members"],
           partitions: int = DEFAULT_SIZES["partitions"],
           migrations: int = DEFAULT_SIZES["migrations"],
           max_parallel: int = DEFAULT_MAX_PARALLEL) -> System:
    """003 §1-§2 under ``variant`` (a key of :data:`VARIANTS`); a finite universe has
    ``members`` members, ``partitions`` partitions, ``migrations`` migrations and the limit
    ``max_parallel`` (the unbounded one any number of each, and any limit of at least 1)."""
    if variant not in VARIANTS:
        raise ValueError(f"unknown parallel variant {variant!r}; known: {', '.join(VARIANTS)}")
    glob = variant == "hz40-global-order-parallel"

    def ver(f: Frame, x: z3.ExprRef, p: z3.ExprRef) -> z3.ArithRef:
        """The version a member compares for partition ``p``: the partition's (003 §1.2), or
        the global one (the variant)."""
        return f.gversion[x] if glob else f.version[x][p]

    def bump(pre: Frame, w: z3.ExprRef, p: z3.ExprRef, inc: Any, ginc: Any,
             row: Any) -> dict[str, Any]:
        """The master gives partition ``p`` the array ``row`` and raises its version by ``inc``
        (the global version by ``ginc`` in the variant); the ghosts record the array at the new
        version."""
        out: dict[str, Any] = {"table": store(pre.table, w, store(pre.table[w], p, row))}
        v = pre.version[w][p] + inc
        if glob:
            out["gversion"] = store(pre.gversion, w, pre.gversion[w] + ginc)
        else:
            out["version"] = store(pre.version, w, store(pre.version[w], p, v))
        out["hist"] = store(pre.hist, p, store(pre.hist[p], v, row))
        out["top"] = store(pre.top, p, v)
        return out

    def take(pre: Frame, x: z3.ExprRef, rows: Any, versions: Any, gv: Any,
             carries: Any) -> dict[str, Any]:
        """Member ``x`` applies a received table: each carried partition with a greater version
        (003 §1.2), or every carried partition under a greater global version (the variant)."""
        u = pre.u
        old, oldv = pre.table[x], pre.version[x]
        if glob:
            newer = gv > pre.gversion[x]
            return {"table": store(pre.table, x, _map(
                        u, P, lambda p: z3.If(z3.And(newer, carries[p]), rows[p], old[p]), "tr")),
                    "gversion": store(pre.gversion, x, z3.If(newer, gv, pre.gversion[x]))}

        def newer_p(p: z3.ExprRef) -> z3.BoolRef:
            return z3.And(carries[p], versions[p] > oldv[p])
        return {"table": store(pre.table, x, _map(
                    u, P, lambda p: z3.If(newer_p(p), rows[p], old[p]), "tr")),
                "version": store(pre.version, x, _map(
                    u, P, lambda p: z3.If(newer_p(p), versions[p], oldv[p]), "tv"))}

    taken = ("table", "gversion") if glob else ("table", "version")
    bumped = ("table", "gversion", "hist", "top") if glob else ("table", "version", "hist",
                                                                  "top")

    def publish(pre: Frame, rows: Any, versions: Any, gv: Any, carries: Any) -> dict[str, Any]:
        """The master sends a partition state at its next position (000 §1.1, 003 §1.2)."""
        k = pre.npub + 1
        return {"npub": k, "published": store(pre.published, k, True),
                "pub_rows": store(pre.pub_rows, k, rows),
                "pub_versions": store(pre.pub_versions, k, versions),
                "pub_gversion": store(pre.pub_gversion, k, gv),
                "pub_carries": store(pre.pub_carries, k, carries)}

    published = ("npub", "published", "pub_rows", "pub_versions", "pub_gversion", "pub_carries")

    def only(u: Universe, p: z3.ExprRef) -> Any:
        return u.set_where(P, lambda q: q == p, "only")

    def end_flight(pre: Frame, m: z3.ExprRef) -> dict[str, Any]:
        s, d = pre.source[m], pre.destination[m]
        load = store(pre.load, s, pre.load[s] - 1)
        return {"inflight": _add(pre.inflight, m, False),
                "busy": _add(pre.busy, pre.partition[m], False),
                "committing": _add(pre.committing, m, False),
                "load": store(load, d, load[d] - 1), "decided": _add(pre.decided, m)}

    flight_mods = ("inflight", "busy", "committing", "load", "decided")

    def init(f: Frame) -> z3.BoolRef:
        u = f.u
        w = f.master
        no = z3.BoolVal(False, u.ctx)
        limit = (f.max_parallel >= 1) if not u.finite else (f.max_parallel == max_parallel)
        return z3.And(
            limit, f.alive[w], f.npub == 0,
            eq(f.published, u.const(("Int", "Bool"), no)), eq(f.pending, _none(u, SET_P)),
            eq(f.busy, _none(u, SET_P)),
            f.gversion[w] >= 1,
            u.forall([G], lambda m: z3.And(
                f.source[m] != f.destination[m], f.inc_ok[m] >= 1, f.inc_ok[m] <= 3,
                f.inc_fail[m] == f.inc_ok[m] + 1,
                *[z3.Not(f[n][m]) for n in ("started", "inflight", "committing", "decided",
                                            "sent_data", "sent_done", "sent_commit",
                                            "sent_ack")])),
            u.forall([P], lambda p: z3.And(
                f.version[w][p] >= 1, f.hist[p][0] == EMPTY,
                f.hist[p][f.version[w][p]] == f.table[w][p], f.top[p] == f.version[w][p])),
            u.forall([M], lambda x: z3.And(
                f.load[x] == 0,
                z3.Implies(f.alive[x], z3.And(
                    eq(f.table[x], f.table[w]), eq(f.version[x], f.version[w]),
                    f.gversion[x] == f.gversion[w], eq(f.active[x], _none(u)))))))

    actions: list[Action] = []

    def act(name: str, params: tuple[tuple[str, str], ...],
            guard: Callable[[Frame, Params], z3.BoolRef],
            effect: Callable[[Frame, Params], dict[str, Any]], modifies: Sequence[str],
            design: str, fault: bool = False, budget: str | None = None) -> None:
        actions.append(Action(name, params, guard, effect, tuple(modifies), design, fault,
                              None, budget))

    # -- start and accept ------------------------------------------------------------------------

    def g_start(f: Frame, a: Params) -> z3.BoolRef:
        m = a["m"]
        return z3.And(
            z3.Not(f.started[m]), z3.Not(f.busy[f.partition[m]]),
            f.load[f.source[m]] < f.max_parallel, f.load[f.destination[m]] < f.max_parallel)

    def e_start(pre: Frame, a: Params) -> dict[str, Any]:
        m = a["m"]
        s, d = pre.source[m], pre.destination[m]
        load = store(pre.load, s, pre.load[s] + 1)
        return {"started": _add(pre.started, m), "inflight": _add(pre.inflight, m),
                "busy": _add(pre.busy, pre.partition[m]),
                "planned": store(pre.planned, m, ver(pre, pre.master, pre.partition[m])),
                "load": store(load, d, load[d] + 1)}

    act("start", (("m", G),), g_start, e_start,
        ("started", "inflight", "busy", "planned", "load"),
        "003 §2.2: MigrationPlanTask parallelises only migrations of different partitions, at "
        "most max.parallel.migrations per member (source or destination); §1.2: the "
        "MigrationInfo carries the partition version it is planned on")

    def may_execute(f: Frame, x: z3.ExprRef, m: z3.ExprRef) -> z3.BoolRef:
        p = f.partition[m]
        return z3.And(f.alive[x], ver(f, x, p) == f.planned[m],
                      f.u.forall([G], lambda o: z3.Implies(f.active[x][o],
                                                           f.partition[o] != p)))

    def e_source(pre: Frame, a: Params) -> dict[str, Any]:
        m = a["m"]
        s = pre.source[m]
        return {"active": store(pre.active, s, _add(pre.active[s], m)),
                "sent_data": _add(pre.sent_data, m),
                "data_rows": store(pre.data_rows, m, pre.table[s]),
                "data_versions": store(pre.data_versions, m, pre.version[s]),
                "data_gversion": store(pre.data_gversion, m, pre.gversion[s])}

    act("source_accepts", (("m", G),),
        lambda f, a: z3.And(f.started[a["m"]], may_execute(f, f.source[a["m"]], a["m"])),
        e_source, ("active", "sent_data", "data_rows", "data_versions", "data_gversion"),
        "003 §1.2: the migration operation checks the local version against the version in "
        "MigrationInfo; if they are equal it is executed, otherwise rejected (and no other "
        "migration of the partition may be active)")

    act("receive_data", (("m", G),),
        lambda f, a: z3.And(f.sent_data[a["m"]], f.alive[f.destination[a["m"]]],
                            f.destination[a["m"]] != f.master),
        lambda pre, a: take(pre, pre.destination[a["m"]], pre.data_rows[a["m"]],
                            pre.data_versions[a["m"]], pre.data_gversion[a["m"]],
                            _all(pre.u)),
        taken,
        "003 §1.1-§1.2: before executing, a participant applies what the operation carries, "
        "as from the master, partition by partition (the master has its own table)")

    def e_destination(pre: Frame, a: Params) -> dict[str, Any]:
        m = a["m"]
        d = pre.destination[m]
        return {"active": store(pre.active, d, _add(pre.active[d], m)),
                "sent_done": _add(pre.sent_done, m)}

    act("destination_accepts", (("m", G),),
        lambda f, a: z3.And(f.sent_data[a["m"]], may_execute(f, f.destination[a["m"]], a["m"])),
        e_destination, ("active", "sent_done"),
        "003 §1.2: the destination checks the same, installs the data and answers the master")

    # -- commit ------------------------------------------------------------------------------

    def e_commit(pre: Frame, a: Params) -> dict[str, Any]:
        m = a["m"]
        w, p = pre.master, pre.partition[m]
        v = pre.version[w][p] + pre.inc_ok[m]
        return {"committing": _add(pre.committing, m), "sent_commit": _add(pre.sent_commit, m),
                "commit_rows": store(pre.commit_rows, m, store(pre.table[w], p, pre.target[m])),
                "commit_versions": store(pre.commit_versions, m, store(pre.version[w], p, v)),
                "commit_gversion": store(pre.commit_gversion, m, pre.gversion[w] + 1),
                "hist": store(pre.hist, p, store(pre.hist[p], v, pre.target[m])),
                "top": store(pre.top, p, v), "pending": _add(pre.pending, p),
                "pending_migration": store(pre.pending_migration, p, m)}

    act("commit_to_destination", (("m", G),),
        lambda f, a: z3.And(f.inflight[a["m"]], z3.Not(f.committing[a["m"]]),
                            f.sent_done[a["m"]], f.destination[a["m"]] != f.master),
        e_commit, ("committing", "sent_commit", "commit_rows", "commit_versions",
                   "commit_gversion", "hist", "top", "pending", "pending_migration"),
        "000 §2.1 steps 1-2: a copy of the table with the migration applied, sent with "
        "MigrationCommitOperation; 003 §1.2: the partition's version rises by the migration's "
        "increment (the global version by 1 in the variant)")

    def e_dest_commit(pre: Frame, a: Params) -> dict[str, Any]:
        m = a["m"]
        d = pre.destination[m]
        carries = _all(pre.u) if glob else only(pre.u, pre.partition[m])
        out = take(pre, d, pre.commit_rows[m], pre.commit_versions[m], pre.commit_gversion[m],
                   carries)
        # the commit is taken unless the destination holds a newer table (it then ignores it)
        p = pre.partition[m]
        kept = (pre.commit_gversion[m] >= pre.gversion[d] if glob
                else pre.commit_versions[m][p] >= pre.version[d][p])
        out["active"] = store(pre.active, d, _add(pre.active[d], m,
                                                  z3.And(pre.active[d][m], z3.Not(kept))))
        out["sent_ack"] = _add(pre.sent_ack, m)
        return out

    act("destination_commits", (("m", G),),
        lambda f, a: z3.And(f.sent_commit[a["m"]], f.alive[f.destination[a["m"]]]),
        e_dest_commit, (*taken, "active", "sent_ack"),
        "000 §2.1 step 2: the destination takes the prepared table (003 §1.2: the migration's "
        "partition, when newer), finalises the migration and acknowledges")

    def g_master_commit(f: Frame, a: Params) -> z3.BoolRef:
        m = a["m"]
        return z3.And(f.inflight[m], z3.Or(
            z3.And(f.committing[m], f.sent_ack[m]),
            z3.And(f.destination[m] == f.master, f.sent_done[m])))

    def publish_partition(pre: Frame, out: dict[str, Any], w: z3.ExprRef, p: z3.ExprRef
                          ) -> dict[str, Any]:
        """003 §1.2: the master publishes partition ``p`` only, with the versions the step
        left it (the global version under hz40-global-order-parallel)."""
        if glob:
            rows, versions, gv = out["table"][w], pre.version[w], out["gversion"][w]
        else:
            rows, versions, gv = out["table"][w], out["version"][w], pre.gversion[w]
        return publish(pre, rows, versions, gv, only(pre.u, p))

    def e_master_commit(pre: Frame, a: Params) -> dict[str, Any]:
        m = a["m"]
        w, p = pre.master, pre.partition[m]
        out = bump(pre, w, p, pre.inc_ok[m], 1, pre.target[m])
        out.update(end_flight(pre, m))
        out["pending"] = _add(pre.pending, p, False)
        out.update(publish_partition(pre, out, w, p))
        return out

    act("master_commits", (("m", G),), g_master_commit, e_master_commit,
        (*bumped, *flight_mods, "pending", *published),
        "000 §2.1 step 3: the master applies the migration once the destination committed (or "
        "first, when it is the destination); 003 §1.2: it raises the partition's version and "
        "publishes that partition only")

    def e_fail(pre: Frame, a: Params) -> dict[str, Any]:
        m = a["m"]
        w, p = pre.master, pre.partition[m]
        out = bump(pre, w, p, pre.inc_fail[m], pre.inc_fail[m], pre.table[w][p])
        out.update(end_flight(pre, m))
        out.update(publish_partition(pre, out, w, p))
        return out

    act("fail", (("m", G),),
        lambda f, a: z3.And(f.inflight[a["m"]], z3.Not(f.committing[a["m"]])),
        e_fail, (*bumped, *flight_mods, *published),
        "000 §2.1 step 4 with 003 §1.2: a refused or timed-out migration: the replicas stay, the "
        "partition's version rises by the failure increment, published")

    act("finalize", (("member", M), ("m", G)),
        lambda f, a: z3.And(f.alive[a["member"]], z3.Or(
            f.decided[a["m"]],
            z3.And(f.sent_commit[a["m"]], a["member"] == f.destination[a["m"]]))),
        lambda pre, a: {"active": store(pre.active, a["member"],
                                        _add(pre.active[a["member"]], a["m"], False))},
        ("active",),
        "000 §2.1: participants finalise only when they find the result in a completed "
        "migrations list (the master's, or the commit's)")

    # -- publications and the master's other updates --------------------------------------------

    act("publish", (),
        lambda f, a: z3.BoolVal(True, f.u.ctx),
        lambda pre, a: publish(pre, pre.table[pre.master], pre.version[pre.master],
                               pre.gversion[pre.master], _all(pre.u)),
        published, "000 §1.1: the master publishes its partition table")

    def g_receive(f: Frame, a: Params) -> z3.BoolRef:
        x, k = a["member"], a["k"]
        return z3.And(f.alive[x], x != f.master, f.published[k])

    act("receive", (("member", M), ("k", "Int")), g_receive,
        lambda pre, a: take(pre, a["member"], pre.pub_rows[a["k"]], pre.pub_versions[a["k"]],
                            pre.pub_gversion[a["k"]], pre.pub_carries[a["k"]]),
        taken,
        "003 §1.2: on partition table broadcast, receiving members compare versions of "
        "individual partitions, so they can partially apply, partially ignore the table")

    act("update", (("p", P), ("row", "Int"), ("raise", "Int")),
        lambda f, a: z3.And(a["raise"] >= 1,
                            f.u.forall([G], lambda o: z3.Not(f.inflight[o]))),
        lambda pre, a: bump(pre, pre.master, a["p"], a["raise"], a["raise"], a["row"]),
        bumped,
        "000 §1.1, 003 §1.2: the master's other table updates (repair, repartitioning), with "
        "no migration running, raise the partition's version")

    def e_join(pre: Frame, a: Params) -> dict[str, Any]:
        u, x = pre.u, a["member"]
        return {"alive": _add(pre.alive, x),
                "table": store(pre.table, x, u.const(ROWS, z3.IntVal(EMPTY, u.ctx))),
                "version": store(pre.version, x, u.const(ROWS, z3.IntVal(0, u.ctx))),
                "gversion": store(pre.gversion, x, 0),
                "active": store(pre.active, x, _none(u))}

    act("join", (("member", M),), lambda f, a: z3.Not(f.alive[a["member"]]), e_join,
        ("alive", "table", "version", "gversion", "active"),
        "a member joins with the empty partition table (every version 0)", fault=True,
        budget="joins")

    return System(
        name="parallel", variant=variant, sorts=(M, P, G), variables=VARIABLES, init=init,
        actions=tuple(actions), properties=_properties(glob), lemmas=_lemmas(),
        sizes={M: members, P: partitions, G: migrations}, budgets=dict(DEFAULT_BUDGETS),
        describe=describe,
        design="003 §1 (per-partition versions) and §2 (parallel migrations), on 000 §2.1's "
               "migration commit",
        abstractions=(
            "no crash and no master change (one master's schedule)",
            "replica arrays as opaque values; a migration's outcome fixed by its MigrationInfo",
            "network: monotone sets of sent operations; whole-table publishes carry every "
            "partition",
            "max_parallel a parameter; load counts the flights per endpoint",
            "the master's other table updates change one partition per step; no plan order",
        ))


def describe(f: Frame, model: z3.ModelRef) -> dict[str, Any]:
    """A frame's protocol state as JSON (the network's payloads left out)."""
    return {v.name: value_json(model, f[v.name]) for v in VARIABLES
            if not v.ghost and v.name not in NETWORK}


def replayable(system: System) -> System:
    """``system`` restricted to the runs the reference implementation takes without a loss or
    a membership change: only the migration steps, and the master never a destination (the plan
    of the master's own graceful shutdown, the global-order variant's zoo scope). A shortest
    counterexample that skips a publication does not replay; the one of this system does."""
    keep = {"start", "source_accepts", "destination_accepts", "commit_to_destination",
            "destination_commits"}
    init = system.init
    return dataclasses.replace(
        system, actions=tuple(a for a in system.actions if a.name in keep),
        init=lambda f: z3.And(init(f), f.u.forall([G], lambda m: f.destination[m] != f.master)))


def system_for(variant: str, scope: Mapping[str, int]) -> System:
    """The system at the size of an explorer scope (`partsafe check parallel`'s parameters):
    its initial members and joiners, partitions, and room for every migration id its graph
    starts (a few per partition)."""
    return system(variant, members=scope["members"] + scope["joiners"],
                  partitions=scope["partitions"], migrations=2 * scope["partitions"],
                  max_parallel=scope.get("max-parallel", DEFAULT_MAX_PARALLEL))


def explorer_scope(trace: Sequence[Mapping[str, Any]]) -> dict[str, int]:
    """The explorer scope a bounded counterexample needs: the zoo scope of
    ``hz40-global-order-parallel`` (the master's graceful shutdown request makes it plan the
    migrations; no crash, no join), at the trace's size."""
    first = trace[0]["state"]
    members = len(first.get("alive", [])) or DEFAULT_SIZES["members"]
    steps = [t["action"] for t in trace[1:]]
    return {"members": members, "joiners": steps.count("join"),
            "partitions": DEFAULT_SIZES["partitions"], "crashes": 0,
            "joins": steps.count("join"), "shutdowns": 1,
            "max-parallel": DEFAULT_MAX_PARALLEL}


# --- specs -----------------------------------------------------------------------------------


def _properties(glob: bool) -> tuple[Property, ...]:
    def version_step(pre: Frame, post: Frame, name: str, a: Params) -> z3.BoolRef:
        true = z3.BoolVal(True, pre.u.ctx)
        if name not in ("start", "source_accepts", "destination_accepts"):
            return true
        m = a["m"]
        p = pre.partition[m]

        def ver(f: Frame, x: z3.ExprRef) -> z3.ArithRef:
            return f.gversion[x] if glob else f.version[x][p]
        if name == "start":
            return post.planned[m] == ver(pre, pre.master)
        x = pre.source[m] if name == "source_accepts" else pre.destination[m]
        return ver(pre, x) == pre.planned[m]

    def one_per_partition(f: Frame) -> z3.BoolRef:
        return f.u.forall([G, G], lambda m, o: z3.Implies(
            z3.And(f.inflight[m], f.inflight[o], m != o), f.partition[m] != f.partition[o]))

    def max_parallel(f: Frame) -> z3.BoolRef:
        return f.u.forall([M], lambda x: f.load[x] <= f.max_parallel)

    def master_only(f: Frame) -> z3.BoolRef:
        if glob:
            return f.u.forall([M, M], lambda x, y: z3.Implies(
                z3.And(f.alive[x], f.alive[y], f.gversion[x] == f.gversion[y]),
                eq(f.table[x], f.table[y])))
        return f.u.forall([M, M, P], lambda x, y, p: z3.Implies(
            z3.And(f.alive[x], f.alive[y], f.version[x][p] == f.version[y][p]),
            f.table[x][p] == f.table[y][p]))

    return (
        Property("PAR-VERSION", step=version_step,
                 formula="a start of m: planned'(m) = version(master, p(m)); a source or "
                         "destination executing m: version(x, p(m)) = planned(m)"),
        Property("PAR-ONE-PER-PARTITION", state=one_per_partition,
                 formula="∀m ≠ o. inflight(m) ∧ inflight(o) → partition(m) ≠ partition(o)",
                 lemmas=("unstarted", "busy-of-flight")),
        Property("PAR-MAX-PARALLEL", state=max_parallel,
                 formula="∀x. load(x) ≤ max_parallel (load: the migrations in flight with x "
                         "as destination or source endpoint)",
                 lemmas=("migration-info",)),
        Property("PT-MASTER-ONLY", state=master_only,
                 formula=("∀x, y alive. gversion(x) = gversion(y) → table(x) = table(y)" if glob
                          else "∀x, y alive, p. version(x, p) = version(y, p) → "
                               "table(x, p) = table(y, p)"),
                 lemmas=_MASTER_ONLY_LEMMAS),
    )


_MASTER_ONLY_LEMMAS = (
    "migration-info", "unstarted", "commit-not-to-master", "busy-of-flight", "one-per-partition",
    "master-alive", "flight-on-planned", "commit-reserves", "pending-of-commit", "master-at-top",
    "empty-at-zero", "tables-from-master", "publications-from-master", "data-from-master",
    "commits-from-master")


def _lemmas() -> tuple[Lemma, ...]:
    out: list[Lemma] = []

    def lem(name: str, formula: str, design: str, sorts: Sequence[str],
            body: Callable[..., z3.BoolRef]) -> None:
        def state(f: Frame) -> z3.BoolRef:
            if not sorts:
                return body(f)
            return f.u.forall(sorts, lambda *xs: body(f, *xs))
        out.append(Lemma(name, state, formula, design))

    def held(f: Frame, p: z3.ExprRef, v: Any, row: Any) -> z3.BoolRef:
        """The array ``row`` at version ``v`` of ``p`` is the one the master gave it."""
        return z3.And(v <= f.top[p], row == f.hist[p][v])

    lem("migration-info", "∀m. source(m) ≠ destination(m) ∧ inc_ok(m) ≥ 1 ∧ inc_fail(m) ≥ 1",
        "000 §2.1, 003 §2.2: a migration moves data from its source endpoint to another member, "
        "and a commit or a failure raises the partition's version", [G],
        lambda f, m: z3.And(f.source[m] != f.destination[m], f.inc_ok[m] >= 1,
                            f.inc_fail[m] >= 1))
    lem("unstarted", "¬started(m) → m not in flight, no operation sent",
        "003 §2.2: MigrationPlanTask submits a migration once; it is in flight from then on",
        [G], lambda f, m: z3.Implies(z3.Not(f.started[m]), z3.And(
            z3.Not(f.inflight[m]), z3.Not(f.committing[m]), z3.Not(f.sent_commit[m]),
            z3.Not(f.decided[m]))))
    lem("commit-not-to-master", "sent_commit(m) → destination(m) ≠ master",
        "000 §2.1 step 1: the commit goes to the destination; a master that is the destination "
        "commits first itself", [G],
        lambda f, m: z3.Implies(f.sent_commit[m], f.destination[m] != f.master))
    lem("busy-of-flight", "inflight(m) → busy(partition(m))",
        "003 §2.2: MigrationPlanTask keeps track of started and completed tasks: a partition "
        "with a migration in flight is busy", [G],
        lambda f, m: z3.Implies(f.inflight[m], f.busy[f.partition[m]]))
    lem("one-per-partition", "∀m ≠ o in flight. partition(m) ≠ partition(o); committing(m) → "
        "inflight(m)",
        "003 §2.2: migrations belonging to the same partition are executed serially", [G, G],
        lambda f, m, o: z3.And(
            z3.Implies(f.committing[m], f.inflight[m]),
            z3.Implies(z3.And(f.inflight[m], f.inflight[o], m != o),
                       f.partition[m] != f.partition[o])))
    lem("master-alive", "alive(master)",
        "000 §1.1: the master updates and publishes the table (no master change here)", [],
        lambda f: f.alive[f.master])
    lem("flight-on-planned", "inflight(m) → version(master, p(m)) = planned(m)",
        "003 §1.2, §2.2: the MigrationInfo carries the partition version it is planned on, and "
        "no other change of the partition happens while it is in flight", [G],
        lambda f, m: z3.Implies(f.inflight[m],
                                f.version[f.master][f.partition[m]] == f.planned[m]))
    lem("commit-reserves", "committing(m) → the commit carries target(m) at planned(m) + "
        "inc_ok(m) = top(p(m)), pending(p(m)) with m",
        "000 §2.1 step 1: the master's own state does not change while the commit is out; "
        "003 §1.2: the commit's partition version is the one the master will apply", [G],
        lambda f, m: z3.Implies(f.committing[m], z3.And(
            f.sent_commit[m],
            f.commit_rows[m][f.partition[m]] == f.target[m],
            f.commit_versions[m][f.partition[m]] == f.planned[m] + f.inc_ok[m],
            f.top[f.partition[m]] == f.planned[m] + f.inc_ok[m],
            f.pending[f.partition[m]], f.pending_migration[f.partition[m]] == m)))
    lem("pending-of-commit", "pending(p) → committing(pending_migration(p)) of partition p",
        "000 §2.1 steps 1-3: a prepared version is the master's once the commit returns", [P],
        lambda f, p: z3.Implies(f.pending[p], z3.And(
            f.committing[f.pending_migration[p]],
            f.partition[f.pending_migration[p]] == p)))
    lem("master-at-top", "¬pending(p) → version(master, p) = top(p)",
        "000 §1.1: only the master raises a version; 003 §1.2 per partition", [P],
        lambda f, p: z3.Implies(z3.Not(f.pending[p]), f.version[f.master][p] == f.top[p]))
    lem("empty-at-zero", "hist(p, 0) = EMPTY ∧ top(p) ≥ 1",
        "a joiner's empty table has version 0; the master's first assignment is version ≥ 1",
        [P], lambda f, p: z3.And(f.hist[p][0] == EMPTY, f.top[p] >= 1))
    lem("tables-from-master", "∀x alive, p. version(x, p) ≤ top(p) ∧ table(x, p) = "
        "hist(p, version(x, p))",
        "000 §1.1: members take tables only from the master, which changes them only with a "
        "new version; 003 §1.2 per partition", [M, P],
        lambda f, x, p: z3.Implies(f.alive[x], held(f, p, f.version[x][p], f.table[x][p])))
    lem("publications-from-master", "every published table holds the master's arrays at their "
        "versions", "000 §1.1: the master publishes its own table", [P],
        lambda f, p: f.u.forall_int(1, lambda k: z3.Implies(
            f.published[k], held(f, p, f.pub_versions[k][p], f.pub_rows[k][p]))))
    lem("data-from-master", "the table sent with the data holds the master's arrays",
        "003 §1.1: the source's table, sent with the data, is one it took from the master",
        [G, P], lambda f, m, p: z3.Implies(
            f.sent_data[m], held(f, p, f.data_versions[m][p], f.data_rows[m][p])))
    lem("commits-from-master", "the commit's prepared table holds the master's arrays",
        "000 §2.1 step 1: the prepared table is the master's with the migration applied", [G, P],
        lambda f, m, p: z3.Implies(
            f.sent_commit[m], held(f, p, f.commit_versions[m][p], f.commit_rows[m][p])))
    return tuple(out)


# --- the map from the reference implementation ----------------------------------------------------


class Refinement:
    """refimpl/partition_service.py's 4.1 states and steps (and the variant's) as this system's
    variables and actions. Members are the protocol's nodes in order (the first is the master),
    partitions its partition ids; a replica array gets an integer the first time it is seen
    (the empty one is ``EMPTY``), a migration the next ``Migration`` index the first time a
    state or an event names it (its id fixes its MigrationInfo). A migration's source endpoint
    and outcome are read from the master's table while it is in flight."""

    def __init__(self, protocol: Any) -> None:
        from partsafe.refimpl import partition_table as pt

        self.pt = pt
        self.protocol = protocol
        self.nodes: tuple[str, ...] = tuple(protocol.nodes)
        self.index = {n: i for i, n in enumerate(self.nodes)}
        self.glob = bool(protocol.global_version)
        width = len(protocol.start_table.replicas[0])
        self.rows: dict[tuple[str | None, ...], int] = {(None,) * width: EMPTY}
        self.migrations: dict[str, int] = {}
        #: per migration index: partition, source, destination, target, inc_ok, inc_fail,
        #: planned
        self.info: dict[int, tuple[int, int, int, int, int, int, int]] = {}

    def row(self, arr: tuple[str | None, ...]) -> int:
        if arr not in self.rows:
            self.rows[arr] = len(self.rows)
        return self.rows[arr]

    def migration(self, key: str) -> int:
        if key not in self.migrations:
            self.migrations[key] = len(self.migrations)
        return self.migrations[key]

    def _learn(self, m: Any, table: Any) -> int:
        i = self.migration(m.id)
        if i not in self.info:
            pt = self.pt
            endpoint = self.protocol._source_endpoint(table, m)
            after = pt.apply_migration(table, m.partition, m.decision)
            inc = pt.migration_increment(m.decision)
            self.info[i] = (m.partition, self.index.get(endpoint, 0),
                            self.index[m.destination], self.row(after.replicas[m.partition]),
                            inc, pt.failure_increment(m.decision, self.protocol.failure_rule),
                            m.version)
        return i

    def state(self, nodes: Mapping[str, Hashable | None], crashed: frozenset[str]
              ) -> dict[str, Any]:
        out: dict[str, Any] = {"alive": set(), "table": {}, "active": {}, "master": 0,
                               "max_parallel": self.protocol.max_parallel,
                               "gversion" if self.glob else "version": {}}
        master: Any = nodes.get(self.nodes[0])
        if master is not None and self.protocol.is_master(self.nodes[0], master):
            flights = {self._learn(f.migration, master.table): f.phase for f in master.flights}
            out["inflight"] = set(flights)
            out["busy"] = {f.migration.partition for f in master.flights}
            out["committing"] = {i for i, phase in flights.items() if phase == "commit"}
            load = dict.fromkeys(range(len(self.nodes)), 0)
            for i in flights:
                _, s, d, *_ = self.info[i]
                load[s] += 1
                load[d] += 1
            out["load"] = load
        for name in self.nodes:
            st: Any = nodes.get(name)
            if st is None or name in crashed or st.shutdown == "left":
                continue
            i = self.index[name]
            out["alive"].add(i)
            t = st.table
            out["table"][i] = {p: self.row(arr) for p, arr in enumerate(t.replicas)}
            if self.glob:
                out["gversion"][i] = t.version
            else:
                out["version"][i] = dict(enumerate(t.versions))
            out["active"][i] = {self._learn(m, master.table if master is not None else t)
                                for m in st.active}
        for name, values in zip(("partition", "source", "destination", "target", "inc_ok",
                                 "inc_fail", "planned"), zip(*self.info.values(), strict=True),
                                strict=False):
            out[name] = dict(zip(self.info, values, strict=True))
        return out

    def actions(self, action: tuple[Any, ...], events: Sequence[Any]
                ) -> list[tuple[str, dict[str, int]]]:
        """The abstract actions of one explorer step, from its action and events, in order.
        Migrations and members are left to the states (a bounded counterexample names its own
        indices)."""
        from partsafe.traces import events as ev

        kind = action[0]
        out: list[tuple[str, dict[str, int]]] = []
        if kind == "join":
            return [("join", {})]
        msg = action[3] if kind in ("deliver", "reorder") else None
        msg_type = type(msg).__name__
        master = self.nodes[0]
        committed_here = {e.migration for e in events
                          if isinstance(e, ev.MigrationCommitted) and e.role == "destination"
                          and msg_type == "MigrationCommit" and e.migration == msg.migration.id}
        if msg_type == "MigrationDone" and msg.ok and action[2] == master and \
                msg.migration.destination != master:
            out.append(("commit_to_destination", {}))
        if msg_type == "MigrationCommit":
            out.append(("destination_commits", {}))
        for e in events:
            if isinstance(e, ev.PartitionTableApplied) and e.member != master:
                if msg_type == "MigrationCommit":
                    continue  # part of destination_commits
                out.append(("receive_data" if msg_type == "MigrationData" else "receive", {}))
            elif isinstance(e, ev.PartitionTableApplied) and e.sender == master and \
                    not any(isinstance(o, ev.MigrationCommitted | ev.MigrationRolledBack)
                            and o.role == "master" for o in events):
                out.append(("update", {}))
            elif isinstance(e, ev.MigrationStarted):
                out.append({"master": ("start", {}), "source": ("source_accepts", {}),
                            "owner": ("source_accepts", {}),
                            "destination": ("destination_accepts", {})}[e.role])
            elif isinstance(e, ev.MigrationCommitted | ev.MigrationRolledBack):
                if e.role == "master":
                    out.append(("master_commits" if isinstance(e, ev.MigrationCommitted)
                                else "fail", {}))
                elif e.migration not in committed_here:
                    out.append(("finalize", {}))
        return out

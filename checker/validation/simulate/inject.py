"""Injected violations, one injector per spec a log can show (`INJECTORS`).

An injection is written at the end of an era (after its last protocol line, before the next era
restarts the members), on members whose state at that point (`Simulation.shadow`) makes the
lines break exactly their spec: the violation is judged at the recorded line and nothing else
breaks. An injector returns None when no member is in the state it needs; the run tries again
after a later era.
"""

from __future__ import annotations

import uuid as uuidlib
from collections.abc import Callable

from partsafe.checker.validation.simulate.cluster import Simulation
from partsafe.checker.validation.simulate.manifest import Injection, Record
from partsafe.checker.validation.simulate.names import address
from partsafe.traces import events as ev

Injector = Callable[[Simulation, set[str]], Injection | None]


def _non_masters(sim: Simulation, used: set[str], master: str | None = None) -> list[str]:
    """Live members with a versioned list they are in but do not head (of `master`'s list when
    given), not used by another injection at this point, in cluster order."""
    sh = sim.shadow
    out = []
    for m in sim.cluster:
        lst = sh.lists.get(m)
        if m in used or m not in sh.alive or lst is None or m not in lst.members \
                or lst.members[0] == m:
            continue
        if master is not None and (lst.members[0] != master
                                   or m not in sh.lists[master].members):
            continue
        out.append(m)
    return out


def _pick(sim: Simulation, candidates: list[str]) -> str | None:
    """One of `candidates` at random, None when there is none."""
    return sim.rng.choice(candidates) if candidates else None


def _injection(sim: Simulation, spec: str, records: list[Record | None], violating: int,
               description: str) -> Injection:
    """The injection of `spec` that wrote `records` (None for a line not logged), judged at
    `records[violating]`."""
    written = [r for r in records if r is not None]
    hit = records[violating]
    assert hit is not None, spec
    return Injection(spec, hit.member, hit.file, hit.line, description, tuple(written))


def _list(sim: Simulation, member: str, version: int | None, members: tuple[str, ...]
          ) -> Record | None:
    """`member` installs the list `members` at `version` (None: the legacy format)."""
    sim.tick(200, 2000)
    return sim.record(ev.MemberListInstalled(
        member=member, version=version, members=members, master=members[0] if members else None,
        uuids=tuple(sim.uuids.get(m) or sim.new_uuid() for m in members)))


def inject_view_order(sim: Simulation, used: set[str]) -> Injection | None:
    """MEM-VIEW-ORDER (002 Theory, M1): the master installs two lists, a member installs them in
    the opposite order. The lists are in the legacy format (no version, as a 3.8 member prints
    them, docs/validation.md §2), so that no version goes back (that would be MEM-VERSION)."""
    sh = sim.shadow
    master = sh.master()
    # once per master and incarnation: a second pair of lists could repeat the first, and a
    # member installing a list again after it is no violation
    if master is None or f"view-order:{master}" in used:
        return None
    x = _pick(sim, _non_masters(sim, used, master))
    if x is None:
        return None
    used.add(f"view-order:{master}")
    first = sh.lists[master].members
    others = [m for m in first if m not in (master, x)]
    if others:
        gone = sim.rng.choice(others)
        second = tuple(m for m in first if m != gone)
    else:  # a list of two: the second adds a member from outside the cluster
        extra = address(sim.n + 1)
        sim.uuids.setdefault(extra, sim.new_uuid())
        second = (*first, extra)
    used.add(x)
    records = [_list(sim, master, None, first), _list(sim, master, None, second),
               _list(sim, x, None, second), _list(sim, x, None, first)]
    return _injection(sim, "MEM-VIEW-ORDER", records, 3,
                      f"{x} installs master {master}'s lists in the opposite order")


def inject_view_integrity(sim: Simulation, used: set[str]) -> Injection | None:
    """MEM-VIEW-INTEGRITY (002 Theory, M3): a member installs the next list of its master, which
    omits it."""
    sh = sim.shadow
    x = _pick(sim, _non_masters(sim, used))
    if x is None:
        return None
    used.add(x)
    current = sh.lists[x]
    head = current.members[0]
    version = max(sh.versions[head]) + 1
    members = tuple(m for m in current.members if m != x)
    record = _list(sim, x, version, members)
    return _injection(sim, "MEM-VIEW-INTEGRITY", [record], 0,
                      f"{x} installs version {version} of {head}, which omits it")


def inject_version(sim: Simulation, used: set[str]) -> Injection | None:
    """MEM-VERSION (002 Membership Update Process): a member installs its list again at a lower
    version than it holds (one its master never published, so that only the version is wrong)."""
    sh = sim.shadow
    candidates = [m for m in _non_masters(sim, used)
                  if min(sh.versions[sh.lists[m].members[0]]) > 1]
    x = _pick(sim, candidates)
    if x is None:
        return None
    used.add(x)
    current = sh.lists[x]
    version = min(sh.versions[current.members[0]]) - 1
    record = _list(sim, x, version, current.members)
    return _injection(sim, "MEM-VERSION", [record], 0,
                      f"{x} installs version {version} after version {current.version}")


def inject_master_only(sim: Simulation, used: set[str]) -> Injection | None:
    """MEM-MASTER-ONLY (002 Member Suspicion & Removal): a member that is not the master of its
    list removes a member (as a pre-3.9 member did, hz38-local-removal)."""
    sh = sim.shadow
    x = _pick(sim, _non_masters(sim, used))
    if x is None:
        return None
    used.add(x)
    victim = sim.rng.choice([m for m in sh.lists[x].members if m != x])
    sim.tick(200, 2000)
    record = sim.record(ev.MemberRemoved(member=x, removed=victim))
    return _injection(sim, "MEM-MASTER-ONLY", [record], 0,
                      f"{x} removes {victim} but {sh.lists[x].members[0]} is its master")


def inject_partition_version(sim: Simulation, used: set[str]) -> Injection | None:
    """PT-VERSION (000 §1.1, 003 §1.2): a member applies a completed migration of a partition,
    then one with a lower version of the same partition."""
    sh = sim.shadow
    live = [m for m in sim.cluster if m in sh.alive and m not in used]
    x = _pick(sim, live)
    if x is None:
        return None
    used.add(x)
    p = sim.rng.randrange(sim.partitions)
    high = sh.applied.get((x, p), 0) + 3
    records = []
    for version in (high, high - 2):
        sim.tick(100, 1500)
        records.append(sim.record(ev.PartitionVersionApplied(member=x, partition=p,
                                                             version=version)))
    return _injection(sim, "PT-VERSION", records, 1,
                      f"{x} applies version {high - 2} of partition {p} after version {high}")


def inject_stats(sim: Simulation, used: set[str]) -> Injection | None:
    """MIG-STATS (docs/validation.md §9): the master repartitions, then reports all migrations
    completed with one fewer completed than planned."""
    master = sim.shadow.master()
    if master is None:
        return None
    planned = sim.rng.randrange(4, 40)
    sim.tick(500, 3000)
    records = [sim.record(ev.Repartitioning(member=master, planned=planned))]
    sim.tick(5000, 60_000)
    records.append(sim.record(ev.MigrationsCompleted(
        member=master, planned=planned, completed=planned - 1, remaining=0,
        outcome="completed", total_completed=planned - 1)))
    return _injection(sim, "MIG-STATS", records, 1,
                      f"{master} reports {planned} planned migrations but {planned - 1} "
                      "completed and 0 remaining")


def inject_only_source(sim: Simulation, used: set[str]) -> Injection | None:
    """SHUT-ONLY-SOURCE (004): a member requests shutdown, the master handles the request and
    then starts a migration with that member as its destination. (A log shows migrations only
    at the master, ``Starting Migration``, docs/validation.md §9: the destination's side is not
    logged.)"""
    sh = sim.shadow
    master = sh.master()
    if master is None:
        return None
    y = _pick(sim, _non_masters(sim, used, master))
    if y is None:
        return None
    used.add(y)
    p = sim.rng.randrange(sim.partitions)
    migration = str(uuidlib.uuid5(uuidlib.NAMESPACE_URL, f"{sim.seed}:{sim.eras}:inject:{p}"))
    version = sh.applied.get((master, p), 0) + 1
    records = []
    sim.tick(200, 2000)
    records.append(sim.record(ev.ShutdownRequested(member=y)))
    sim.tick(20, 400)
    records.append(sim.record(ev.ShutdownRequestHandled(member=master, requester=y)))
    sim.tick(20, 400)
    records.append(sim.record(ev.Repartitioning(member=master, planned=1)))
    sim.tick(5, 100)
    records.append(sim.record(ev.MigrationStarted(
        member=master, role="master", migration=migration, partition=p, source_member=master,
        destination=y, source_current_index=0, planned_version=version)))
    sim.tick(50, 2000)
    records.append(sim.record(ev.MigrationCommitted(member=master, role="master",
                                                    migration=migration, partition=p)))
    sim.tick(5, 100)
    records.append(sim.record(ev.MigrationsCompleted(
        member=master, planned=1, completed=1, remaining=0, outcome="completed",
        total_completed=1)))
    return _injection(sim, "SHUT-ONLY-SOURCE", records, 3,
                      f"{master} handled the shutdown request of {y} and then starts migration "
                      f"of partition {p} to it")


#: spec id -> how to inject a violation of it
INJECTORS: dict[str, Injector] = {
    "MEM-VIEW-ORDER": inject_view_order,
    "MEM-VIEW-INTEGRITY": inject_view_integrity,
    "MEM-VERSION": inject_version,
    "MEM-MASTER-ONLY": inject_master_only,
    "PT-VERSION": inject_partition_version,
    "MIG-STATS": inject_stats,
    "SHUT-ONLY-SOURCE": inject_only_source,
}

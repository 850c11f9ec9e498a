"""Injected violations, one injector per spec a Hazelcast log judges (`INJECTORS`).

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
from partsafe.refimpl.planner import MAX_REPLICA_COUNT, plan_events
from partsafe.specs.planner import Call, applied
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
               description: str, implied: tuple[str, ...] = ()) -> Injection:
    """The injection of `spec` that wrote `records` (None for a line not logged), judged at
    `records[violating]` (with the `implied` specs)."""
    written = [r for r in records if r is not None]
    hit = records[violating]
    assert hit is not None, spec
    return Injection(spec, hit.member, hit.file, hit.line, description, tuple(written), implied)


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


# --- the master's schedule, the participants, the tables (FINE and FINEST lines) --------------


def _migration_id(sim: Simulation, what: str, n: int = 0) -> str:
    """A fresh migration UUID for an injection."""
    name = f"{sim.seed}:{sim.eras}:{sim.clock}:{what}:{n}"
    return str(uuidlib.uuid5(uuidlib.NAMESPACE_URL, name))


def _free_partitions(sim: Simulation, master: str, k: int) -> list[int]:
    """`k` partitions none of `master`'s migrations in flight moves, at random."""
    busy = {p for p, _ in sim.shadow.flights.get(master, {}).values()}
    free = [p for p in range(sim.partitions) if p not in busy]
    return sim.rng.sample(free, k) if len(free) >= k else []


def _load(sim: Simulation, master: str, member: str) -> int:
    """How many of `master`'s migrations in flight `member` is the destination or the source
    endpoint of (as PAR-MAX-PARALLEL counts them)."""
    return sum(member in ends for _, ends in sim.shadow.flights.get(master, {}).values())


def _start(sim: Simulation, master: str, migration: str, p: int, source: str,
           destination: str) -> Record | None:
    sim.tick(5, 60)
    return sim.record(ev.MigrationStarted(
        member=master, role="master", migration=migration, partition=p, source_member=source,
        destination=destination, source_current_index=0,
        planned_version=sim.shadow.applied.get((master, p), 0) + 1))


def _schedule_ends(sim: Simulation, master: str, started: list[tuple[str, int]]
                   ) -> list[Record | None]:
    """The injected migrations' operations answer (``Finished Migration``), so that they leave
    the master's schedule as they entered it."""
    out = []
    for migration, p in started:
        sim.tick(5, 60)
        out.append(sim.record(ev.MigrationFinished(member=master, migration=migration,
                                                   partition=p)))
    return out


def _schedule_members(sim: Simulation, used: set[str]) -> tuple[str, str] | None:
    """The master and one of its followers that is not leaving and not used (a migration to a
    member that requested shutdown would break SHUT-ONLY-SOURCE): the master sends the
    follower the data of partitions it owns. The follower logs nothing of it."""
    sh = sim.shadow
    master = sh.master()
    if master is None or f"schedule:{master}" in used:
        return None
    y = _pick(sim, [m for m in sh.followers(master) if m not in sh.leaving and m not in used])
    if y is None:
        return None
    used.add(f"schedule:{master}")
    return master, y


def inject_one_per_partition(sim: Simulation, used: set[str]) -> Injection | None:
    """PAR-ONE-PER-PARTITION (003 §2.2): the master starts a migration of a partition while
    another of it is in flight (``Starting Migration``, FINE)."""
    found = _schedule_members(sim, used)
    if found is None:
        return None
    master, y = found
    [p] = _free_partitions(sim, master, 1) or [None]
    if p is None:
        return None
    ids = [_migration_id(sim, "one-per-partition", i) for i in range(2)]
    records = [_start(sim, master, m, p, master, y) for m in ids]
    records += _schedule_ends(sim, master, [(ids[0], p), (ids[1], p)])
    return _injection(sim, "PAR-ONE-PER-PARTITION", records, 1,
                      f"{master} starts a second migration of partition {p} while one is in "
                      "flight")


def inject_max_parallel(sim: Simulation, used: set[str]) -> Injection | None:
    """PAR-MAX-PARALLEL (003 §2.2): the master starts an 11th migration to one destination while
    10 are in flight (``hazelcast.partition.max.parallel.migrations``, default 10)."""
    found = _schedule_members(sim, used)
    if found is None:
        return None
    master, y = found
    limit = 10
    k = limit - max(_load(sim, master, y), _load(sim, master, master))
    ps = _free_partitions(sim, master, k + 1) if k >= 0 else []
    if not ps:
        return None
    ids = [_migration_id(sim, "max-parallel", i) for i in range(k + 1)]
    records = [_start(sim, master, m, p, master, y) for m, p in zip(ids, ps, strict=True)]
    records += _schedule_ends(sim, master, list(zip(ids, ps, strict=True)))
    return _injection(sim, "PAR-MAX-PARALLEL", records, k,
                      f"{master} starts migration {k + 1} to {y} with {limit} in flight there")


def _participants(sim: Simulation, used: set[str], k: int) -> list[str] | None:
    """`k` live members not used by another injection, at random."""
    sh = sim.shadow
    live = [m for m in sim.cluster if m in sh.alive and m not in used and m in sh.started]
    if len(live) < k:
        return None
    picked = sim.rng.sample(live, k)
    used.update(picked)
    return picked


def inject_reject_stale(sim: Simulation, used: set[str]) -> Injection | None:
    """MIG-REJECT-STALE (000 §2.1, 003 §1.2): a source starts a migration of a partition while
    its migration of that partition is undecided (``Invoking MigrationOperation``, FINEST)."""
    picked = _participants(sim, used, 3)
    if picked is None:
        return None
    x, y1, y2 = picked
    p = sim.rng.randrange(sim.partitions)
    records = []
    for i, y in enumerate((y1, y2)):
        sim.tick(5, 200)
        records.append(sim.record(ev.MigrationStarted(
            member=x, role="source", migration=_migration_id(sim, "reject-stale", i),
            partition=p, source_member=x, destination=y, source_current_index=0)))
    return _injection(sim, "MIG-REJECT-STALE", records, 1,
                      f"{x} sends partition {p} again while its first migration is undecided")


def inject_atomic(sim: Simulation, used: set[str]) -> Injection | None:
    """MIG-ATOMIC (000 §2.1): the source commits a migration, its destination rolls it back
    (``Finalizing MigrationInfo{...}``, FINE, on each)."""
    picked = _participants(sim, used, 2)
    if picked is None:
        return None
    source, destination = picked
    p = sim.rng.randrange(sim.partitions)
    migration = _migration_id(sim, "atomic")
    sim.tick(5, 60)
    start = ev.MigrationStarted(member=source, role="master", migration=migration, partition=p,
                                source_member=source, destination=destination,
                                source_current_index=0)
    sim.writer.started[migration] = start  # the MigrationInfo the participants' lines show
    records = [sim.record(ev.MigrationCommitted(member=source, role="source",
                                                migration=migration, partition=p))]
    sim.tick(5, 60)
    records.append(sim.record(ev.MigrationRolledBack(member=destination, role="destination",
                                                     migration=migration, partition=p)))
    return _injection(sim, "MIG-ATOMIC", records, 1,
                      f"source {source} commits migration of partition {p} and destination "
                      f"{destination} rolls it back")


def inject_commit_order(sim: Simulation, used: set[str]) -> Injection | None:
    """MIG-COMMIT-ORDER (000 §2.1): the master, the migration's source, finalizes it as the
    source (``Finalizing``) before its own commit (``Migration commit result true``, FINE)."""
    sh = sim.shadow
    master = sh.master()
    if master is None or master in used:
        return None
    others = [m for m in sh.followers(master) if m not in used]
    if not others:
        return None
    used.add(master)
    destination = sim.rng.choice(others)
    p = sim.rng.randrange(sim.partitions)
    migration = _migration_id(sim, "commit-order")
    sim.writer.started[migration] = ev.MigrationStarted(
        member=master, role="master", migration=migration, partition=p, source_member=master,
        destination=destination, source_current_index=0)
    sim.tick(5, 60)
    records = [sim.record(ev.MigrationCommitted(member=master, role="source",
                                                migration=migration, partition=p))]
    sim.tick(5, 60)
    records.append(sim.record(ev.MigrationCommitted(member=master, role="master",
                                                    migration=migration, partition=p)))
    return _injection(sim, "MIG-COMMIT-ORDER", records, 1,
                      f"master {master} commits the migration of partition {p} after it "
                      "committed it as its source")


def inject_master_table(sim: Simulation, used: set[str]) -> Injection | None:
    """PT-MASTER-ONLY (000 §1.1): collecting the members' tables, a member finds one partition
    version with two replica arrays (``Issue while determining latest partition...``,
    WARNING)."""
    picked = _participants(sim, used, 1)
    live = [m for m in sim.cluster if m in sim.shadow.alive]
    if picked is None or len(live) < 3:
        return None
    x = picked[0]
    a, b, c = sim.rng.sample(live, 3)
    p = sim.rng.randrange(sim.partitions)
    sim.tick(200, 2000)
    record = sim.record(ev.PartitionTableConflict(member=x, partition=p, version=7,
                                                  replicas=((a, b), (b, c))))
    return _injection(sim, "PT-MASTER-ONLY", [record], 0,
                      f"{x} collects partition {p} version 7 as [{a},{b}] and [{b},{c}]")


def inject_most_recent(sim: Simulation, used: set[str]) -> Injection | None:
    """PT-MOST-RECENT (000 §1.2): a member of the master's list applies a table version
    (``Applied partition state update with version``, FINE, 3.x), and the master then publishes
    an older one (``Publishing partition state, version``)."""
    sh = sim.shadow
    master = sh.master()
    if master is None:
        return None
    x = _pick(sim, [m for m in sh.followers(master) if m not in used])
    if x is None:
        return None
    used.add(x)
    version = 1_000_000 + sim.clock  # above every table version injected before
    sim.tick(200, 2000)
    records = [sim.record(ev.PartitionTableApplied(member=x, version=version, sender=master))]
    sim.tick(200, 2000)
    records.append(sim.record(ev.PartitionTablePublished(member=master, version=version - 1)))
    return _injection(sim, "PT-MOST-RECENT", records, 1,
                      f"master {master} publishes table version {version - 1} after {x} "
                      f"applied {version}")


# --- mastership claims (002) ---------------------------------------------------------------


def _with_younger(sim: Simulation, used: set[str]) -> list[str]:
    """Live members this era started, not used, whose last list is versioned and names them
    before a member they do not suspect; those that do not head their list first."""
    sh = sim.shadow
    out = []
    for m in sim.cluster:
        lst = sh.lists.get(m)
        if m in used or m not in sh.alive or m not in sh.started or lst is None \
                or m not in lst.members or m in sh.legacy:
            continue
        younger = lst.members[lst.members.index(m) + 1:]
        if any(y not in sh.suspects.get(m, set()) for y in younger):
            out.append(m)
    return sorted(out, key=lambda m: sh.lists[m].members[0] == m)


def inject_claim_accept(sim: Simulation, used: set[str]) -> Injection | None:
    """MEM-CLAIM-ACCEPT (002 Mastership Claim Process): a member accepts the claim of a member
    younger than itself in its list (``Mastership of ... is accepted``, WARNING): it does not
    suspect itself, older than the candidate."""
    sh = sim.shadow
    found = _with_younger(sim, used)
    if not found:
        return None
    d = found[0]
    used.add(d)
    members = sh.lists[d].members
    candidate = members[-1]
    sim.tick(200, 2000)
    record = sim.record(ev.MastershipClaimAccepted(member=d, candidate=candidate,
                                                   version=sh.lists[d].version))
    return _injection(sim, "MEM-CLAIM-ACCEPT", [record], 0,
                      f"{d} accepts the claim of {candidate}, younger than itself")


def _claimant(sim: Simulation, used: set[str]
              ) -> tuple[str, ev.MemberListInstalled, tuple[str, ...]] | None:
    """A member with a younger member in its versioned list that it does not suspect, which
    claims next; and its younger members, that one first."""
    found = _with_younger(sim, used)
    if not found:
        return None
    b = found[0]
    used.add(b)
    lst = sim.shadow.lists[b]
    younger = lst.members[lst.members.index(b) + 1:]
    first = next(y for y in younger if y not in sim.shadow.suspects.get(b, set()))
    return b, lst, (first, *(y for y in younger if y != first))


def _claim(sim: Simulation, b: str, lst: ev.MemberListInstalled, accepter: str,
           answer: tuple[str, ...]) -> list[Record | None]:
    """`b` claims mastership (it suspects its older members, asks the others) and counts the
    answer of `accepter`, a list `answer` later than its own."""
    older = lst.members[: lst.members.index(b)]
    sim.tick(200, 2000)
    records = [sim.record(ev.MastershipClaimStarted(member=b, suspected=older,
                                                    members=lst.members))]
    sim.tick(5, 200)
    records.append(sim.record(ev.MastershipAcceptanceReceived(
        member=b, sender=accepter, version=(lst.version or 0) + 1, members=answer)))
    return records


def inject_claim_result(sim: Simulation, used: set[str]) -> Injection | None:
    """MEM-CLAIM-RESULT (002 Mastership Claim Process): the claimant publishes a list without a
    member whose acceptance it counted (``A more recent MembersView ... is received``, FINE)."""
    found = _claimant(sim, used)
    if found is None:
        return None
    b, lst, younger = found
    records = _claim(sim, b, lst, younger[0], lst.members)
    sim.tick(5, 200)
    records.append(sim.record(ev.MastershipClaimed(member=b, version=(lst.version or 0) + 2,
                                                   members=(b, *younger[1:]))))
    return _injection(sim, "MEM-CLAIM-RESULT", records, 2,
                      f"{b} publishes its claim's list without {younger[0]}, which accepted")


def inject_claim_discover(sim: Simulation, used: set[str]) -> Injection | None:
    """MEM-CLAIM-DISCOVER (002 Mastership Claim Process): an answer names a member the claimant
    never asks (``Asking MembersView of``, FINE, is missing)."""
    found = _claimant(sim, used)
    if found is None:
        return None
    b, lst, younger = found
    extra = address(sim.n + 1)
    sim.uuids.setdefault(extra, sim.new_uuid())
    records = _claim(sim, b, lst, younger[0], (*lst.members, extra))
    sim.tick(5, 200)
    records.append(sim.record(ev.MastershipClaimed(member=b, version=(lst.version or 0) + 2,
                                                   members=(b, *younger))))
    return _injection(sim, "MEM-CLAIM-DISCOVER", records, 2,
                      f"{b} finishes its claim without asking {extra}, which an answer named")


# --- the migration planner (000 §3.2): a plan's FINEST lines on the master -----------------------

Replicas = tuple[str | None, ...]


def _planner(sim: Simulation, k: int) -> tuple[str, list[str], int] | None:
    """The master, `k` live members of its cluster in random order (the replicas of a plan),
    and a partition; None without a master or with fewer members."""
    master = sim.shadow.master()
    live = [m for m in sim.cluster if m in sim.shadow.alive]
    if master is None or len(live) < k:
        return None
    return master, sim.rng.sample(live, k), sim.rng.randrange(sim.partitions)


def _pad(array: Replicas) -> Replicas:
    return array + (None,) * (MAX_REPLICA_COUNT - len(array))


def _crafted(master: str, p: int, current: Replicas, target: Replicas,
             decisions: list[Call], fixed: bool = False) -> list[ev.Event]:
    """The planner's events of a plan no planner of the catalogue makes: the partition's arrays,
    a pass showing the working array before each decision, the passes left, and the decisions
    queued in the order made (all but the clears); with `fixed`, the target is logged as the
    one after the cycle fix."""
    current, target = _pad(current), _pad(target)
    out: list[ev.Event] = [
        ev.PlanStarted(member=master, partition=p, current=current, target=target),
        ev.PlanState(member=master, partition=p, stage="initial", replicas=current),
        ev.PlanState(member=master, partition=p, stage="final", replicas=target)]
    if fixed:
        out.append(ev.PlanState(member=master, partition=p, stage="cycle-fixed",
                                replicas=target))
    working, index = current, -1
    for d in decisions:
        index = d.source_current_index if d.type == "CLEAR" else d.destination_new_index
        out.append(ev.PlanState(member=master, partition=p, stage="pass", replicas=working,
                                index=index))
        out.append(ev.PlanDecision(
            member=master, partition=p, kind=d.type, source_member=d.source,
            source_current_index=d.source_current_index, source_new_index=d.source_new_index,
            destination=d.destination, destination_current_index=d.destination_current_index,
            destination_new_index=d.destination_new_index))
        working = applied(working, d)
    out += [ev.PlanState(member=master, partition=p, stage="pass", replicas=working, index=i)
            for i in range(index + 1, MAX_REPLICA_COUNT)]
    queued = tuple(d.args for d in decisions if d.type != "CLEAR")
    if queued:
        out.append(ev.PlanOrder(member=master, partition=p, migrations=queued))
    return out


def _plan_written(sim: Simulation, spec: str, planned: list[ev.Event], violating: type[ev.Event],
                  description: str, implied: tuple[str, ...] = ()) -> Injection:
    """Write a plan's events on its master; the violation is at the first event of type
    `violating` (a plan_order record, a pass, a decision)."""
    sim.tick(200, 2000)
    records = [sim.record(e) for e in planned]
    at = next(i for i, e in enumerate(planned) if type(e) is violating and (
        not isinstance(e, ev.PlanState) or e.stage == "pass"))
    return _injection(sim, spec, records, at, description, implied)


def _copy(d: str, i: int) -> Call:
    return Call("COPY", None, -1, -1, d, -1, i)


def inject_plan_no_decrease(sim: Simulation, used: set[str]) -> Injection | None:
    """PLAN-NO-DECREASE (000 §3.2), HZ-PLAN-1 of Hazelcast's own planner: from ``[a,-,b]`` to
    ``[a,c,-]`` the master clears b at once (``MigrationCollector``) and copies c afterwards, so
    the partition holds one replica in between. The lines are those of the faithful planner."""
    picked = _planner(sim, 3)
    if picked is None:
        return None
    master, (a, b, c), p = picked
    planned = plan_events((a, None, b), (a, c, None), partition=p, member=master)
    return _plan_written(sim, "PLAN-NO-DECREASE", planned, ev.PlanOrder,
                         f"{master} plans partition {p} from [{a},-,{b}] to [{a},{c},-]: "
                         f"{b} is cleared before {c} is copied", ("PLAN-HOTTER-FIRST",))


def inject_plan_hotter_first(sim: Simulation, used: set[str]) -> Injection | None:
    """PLAN-HOTTER-FIRST (000 §3.2) alone, by Hazelcast's own planner: from ``[a,-,b,c]`` to
    ``[a,c,-,-]`` the clear of b at index 2 comes at once and c reaches index 1 after, so
    indices 0 to 2 hold one replica where both arrays hold two."""
    picked = _planner(sim, 3)
    if picked is None:
        return None
    master, (a, b, c), p = picked
    planned = plan_events((a, None, b, c), (a, c, None, None), partition=p, member=master)
    return _plan_written(sim, "PLAN-HOTTER-FIRST", planned, ev.PlanOrder,
                         f"{master} plans partition {p} from [{a},-,{b},{c}] to [{a},{c},-,-]")


def inject_plan_reaches_target(sim: Simulation, used: set[str]) -> Injection | None:
    """PLAN-REACHES-TARGET (000 §3.2.2): the planner copies b to index 1 and stops, short of
    its target ``[a,b,c]``."""
    picked = _planner(sim, 3)
    if picked is None:
        return None
    master, (a, b, c), p = picked
    planned = _crafted(master, p, (a, None, None), (a, b, c), [_copy(b, 1)])
    return _plan_written(sim, "PLAN-REACHES-TARGET", planned, ev.PlanOrder,
                         f"{master} plans partition {p} from [{a},-,-] to [{a},{b},{c}] and "
                         f"never copies {c}")


def inject_plan_no_cycle(sim: Simulation, used: set[str]) -> Injection | None:
    """PLAN-NO-CYCLE (000 §3.2.1): the planner starts its passes towards ``[b,a,c]`` from
    ``[a,b,c]`` without cancelling the cycle (no ``Final state (after cycle fix)``), and queues
    nothing."""
    picked = _planner(sim, 3)
    if picked is None:
        return None
    master, (a, b, c), p = picked
    planned = _crafted(master, p, (a, b, c), (b, a, c), [])
    return _plan_written(sim, "PLAN-NO-CYCLE", planned, ev.PlanState,
                         f"{master} plans partition {p} from [{a},{b},{c}] towards "
                         f"[{b},{a},{c}], a cycle it did not cancel")


def inject_plan_priority(sim: Simulation, used: set[str]) -> Injection | None:
    """PLAN-PRIORITY (000 §3.2.3): from ``[a,-]`` to ``[b,c]`` the COPY of c stays after the
    MOVE of a to b (the decisions of Hazelcast's planner, the order of ``no-prioritize``)."""
    picked = _planner(sim, 3)
    if picked is None:
        return None
    master, (a, b, c), p = picked
    planned = plan_events((a, None), (b, c), variant="no-prioritize", partition=p,
                          member=master)
    return _plan_written(sim, "PLAN-PRIORITY", planned, ev.PlanOrder,
                         f"{master} runs the COPY of {c} to partition {p} after a MOVE it "
                         "shares no member with")


def inject_plan_no_duplicate(sim: Simulation, used: set[str]) -> Injection | None:
    """PLAN-NO-DUPLICATE (000 §3.2.2): the master's partition holds a at indices 0 and 2 when it
    plans the COPY of c to index 3 (and its target keeps both)."""
    picked = _planner(sim, 3)
    if picked is None:
        return None
    master, (a, b, c), p = picked
    planned = _crafted(master, p, (a, b, a, None), (a, b, a, c), [_copy(c, 3)])
    return _plan_written(sim, "PLAN-NO-DUPLICATE", planned, ev.PlanOrder,
                         f"{master} plans partition {p} with {a} at indices 0 and 2")


def inject_plan_owner(sim: Simulation, used: set[str]) -> Injection | None:
    """PLAN-OWNER (000 §3.2): from ``[a,b,-]`` to ``[b,c,a]`` the owner a is shifted up to index
    1 (b down to 2) before b comes back to index 0: no owner in between."""
    picked = _planner(sim, 3)
    if picked is None:
        return None
    master, (a, b, c), p = picked
    decisions = [Call("SHIFT_UP", b, 1, 2, a, 0, 1), Call("SHIFT_UP", None, -1, -1, b, 2, 0),
                 Call("SHIFT_DOWN", a, 1, 2, c, -1, 1)]
    planned = _crafted(master, p, (a, b, None), (b, c, a), decisions)
    return _plan_written(sim, "PLAN-OWNER", planned, ev.PlanOrder,
                         f"{master} leaves partition {p} without an owner between two "
                         "migrations", ("PLAN-HOTTER-FIRST",))


def inject_plan_well_formed(sim: Simulation, used: set[str]) -> Injection | None:
    """PLAN-WELL-FORMED (000 §3.1): the planner's chain walk takes the branch the source
    never reaches (``SHIFT UP b from old addresses index: 2 to index: 1`` with index 1 empty):
    ``migrate(null, 1, -1, b, 2, 1)``, a null source at index 1."""
    picked = _planner(sim, 2)
    if picked is None:
        return None
    master, (a, b), p = picked
    planned = _crafted(master, p, (a, None, b), (a, b, None),
                       [Call("SHIFT_UP", None, 1, -1, b, 2, 1)])
    return _plan_written(sim, "PLAN-WELL-FORMED", planned, ev.PlanDecision,
                         f"{master} shifts {b} up to index 1 of partition {p} with a null "
                         "source at index 1")


#: spec id -> how to inject a violation of it
INJECTORS: dict[str, Injector] = {
    "MEM-VIEW-ORDER": inject_view_order,
    "MEM-VIEW-INTEGRITY": inject_view_integrity,
    "MEM-VERSION": inject_version,
    "MEM-MASTER-ONLY": inject_master_only,
    "PT-VERSION": inject_partition_version,
    "MIG-STATS": inject_stats,
    "SHUT-ONLY-SOURCE": inject_only_source,
    "MEM-CLAIM-ACCEPT": inject_claim_accept,
    "MEM-CLAIM-RESULT": inject_claim_result,
    "MEM-CLAIM-DISCOVER": inject_claim_discover,
    "PT-MASTER-ONLY": inject_master_table,
    "PT-MOST-RECENT": inject_most_recent,
    "MIG-COMMIT-ORDER": inject_commit_order,
    "MIG-ATOMIC": inject_atomic,
    "MIG-REJECT-STALE": inject_reject_stale,
    "PAR-ONE-PER-PARTITION": inject_one_per_partition,
    "PAR-MAX-PARALLEL": inject_max_parallel,
    "PLAN-NO-DECREASE": inject_plan_no_decrease,
    "PLAN-HOTTER-FIRST": inject_plan_hotter_first,
    "PLAN-REACHES-TARGET": inject_plan_reaches_target,
    "PLAN-NO-CYCLE": inject_plan_no_cycle,
    "PLAN-PRIORITY": inject_plan_priority,
    "PLAN-NO-DUPLICATE": inject_plan_no_duplicate,
    "PLAN-OWNER": inject_plan_owner,
    "PLAN-WELL-FORMED": inject_plan_well_formed,
}

"""Realistic multi-member Hazelcast logs from random walks of the reference implementation.

`simulate` writes one log file per member, in the rolling-file layout of the distribution
(``%d [%5p] [%t] [%c{.1}]: %m%n``, LOG_FORMATS.md §0) through `partsafe.traces.writer`, with the
lines real logs are mostly made of between the protocol lines: application requests, connection
chatter, health reports, heartbeats, stack traces, and near misses (lines with a keyword of the
scanner that are no protocol message). It can also inject, at random points, short sequences of
protocol lines that break one spec of `partsafe.checker.validate.local.LOG_SPECS` each, and records
where (the manifest).

How the protocol lines are made. The catalogue's models stop at 26 nodes (membership) and at 20
members and 16 partitions (the partition service), and a random walk costs about 2 ms a step at
those scopes, so a cluster of 20-30 members over hundreds of partitions and millions of events is
*composed*:

- The cluster's life is a sequence of **eras**. An era is one incarnation of the cluster: every
  member it involves logs ``is STARTING`` before its first line of the era and has a new UUID, so
  that each era is judged on its own (the monitors forget a restarted member; a master is told
  apart from its other incarnations by its UUID, seed 002).
- An era starts with a walk of the **membership** model (seed 002, versioned member lists, joins,
  a crash, a false suspicion, mastership claims) at up to 26 nodes, its node names ``A``, ``B``,
  ... renamed onto a random permutation of the cluster's members (a random subset of 26 when the
  cluster is larger; the others only log noise in that era). A new master's claim is followed by
  its partition-table fetch (§7).
- Then a walk of the **parallel** partition model (seed 003: 4.1 parallel migrations with
  per-partition versions, graceful shutdown of 004) on the members that hold the master's final
  list: the master and up to 5 others, at up to 16 partitions renamed onto a random sample of the
  cluster's partitions. Its membership is the abstraction of the partition service (legacy lists,
  every member removing on its own) and is not written; what a log shows of it is: repartitioning
  (§9), the master's ``Starting/Finished Migration`` (§9), completed migrations applied with their
  partition versions (§8, derived from the tables members apply), shutdown requests handled by
  the master (§11, derived from its state), the migration statistics at the end of each rebalance
  and while it runs (§9, derived from the master's queues), ``is SHUTTING_DOWN`` / ``is
  SHUTDOWN`` (§11). A member that leaves is removed by the master, which publishes the next
  member list to the others (§11 step 7).
- Walks are drawn from a small pool per scope (`POOL` walks, each seeded from the run's seed), and
  every era renames afresh; so a long run costs a few seconds of walking whatever its length.
- Every line gets its own millisecond: the order the walk made is the order the validator merges.

Injections (`INJECTORS`) are written at the end of an era (after its last protocol line, before the
next era restarts the members), on members whose state at that point makes the lines break exactly
their spec: the violation is judged at the recorded line and nothing else breaks.

Noise is fast: each member has a pool of pre-rendered, pre-encoded lines; a gap takes a slice of
it, lines come in short bursts that share a timestamp (one `partsafe.traces.writer.layout_time`
and one ``bytes.join`` per burst), and files are written in binary with large buffers. The noise
is spread over the members in proportion to the protocol events written, to reach the requested
total lines or bytes. `migrations=False` leaves the partition walks out (membership lines only:
the mix of the scan benchmark, ``generate(model="membership")``).

The manifest goes to ``.manifest.json`` in the output directory: `partsafe validate DIR` skips
hidden files (`partsafe.traces.scanner.expand`), so it is never read as a log.
"""

from __future__ import annotations

import bisect
import dataclasses
import json
import random
import time
import uuid as uuidlib
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

from partsafe.checker.protocols import catalog
from partsafe.checker.validate.local import LOG_SPECS
from partsafe.traces import events as ev
from partsafe.traces.writer import EPOCH_MS, LogWriter, layout_time

#: the manifest's file name in the output directory (hidden: the validator does not read it)
MANIFEST_NAME = ".manifest.json"
#: walks kept per model scope; eras draw from them and rename
POOL = 8
#: the membership model's largest scope (nodes named A..Z)
MAX_MEMBERSHIP_NODES = 26
#: the partition walk's largest scope (members, partitions): kept small, walks get slow beyond
MAX_PARTITION_MEMBERS = 6
MAX_PARTITION_PARTITIONS = 16
#: noise lines written per protocol event when neither `lines` nor `size` is given
DEFAULT_NOISE_PER_EVENT = 50
#: longest a random walk may run before it is discarded (they end far sooner: budgets run out)
MAX_STEPS = 20_000
#: the most members a run writes (one open file and one noise pool each)
MAX_MEMBERS = 1000
#: the width of a layout timestamp (``2023-11-14 22:13:20,000``)
TS_WIDTH = 23

CLUSTER = "dev"
VERSION = "5.3.0"

# --- noise ------------------------------------------------------------------------------------
# Each template is what follows the timestamp; {me} is the member's prefix (§0), {inst} its
# instance name, {peer}/{puuid} another member, {n} a digit, {k} a number, {t} a clock.

APP_NOISE: tuple[str, ...] = (
    " [ INFO] [http-nio-8080-exec-{n}] [c.e.shop.OrderController]: GET /orders/{k} 200 in {n} ms",
    " [ INFO] [http-nio-8080-exec-{n}] [c.e.shop.CartService]: cart {k} updated with {n} items",
    " [ INFO] [http-nio-8080-exec-{n}] [c.e.shop.PaymentClient]: payment {k} authorised in "
    "{n}{n} ms",
    " [DEBUG] [http-nio-8080-exec-{n}] [o.h.SQL]: select o1_0.id,o1_0.status,o1_0.total from "
    "orders o1_0 where o1_0.customer_id=?",
    " [DEBUG] [scheduling-1] [o.s.s.a.ScheduledAnnotationBeanPostProcessor]: task {k} ran",
    " [ WARN] [hikari-housekeeper] [c.z.h.p.HikariPool]: HikariPool-1 - Thread starvation or "
    "clock leap detected (housekeeper delta={n}s)",
    " [ INFO] [kafka-consumer-{n}] [o.a.k.c.c.i.ConsumerCoordinator]: [Consumer "
    "clientId=shop-{n}, groupId=orders] Setting offset for partition orders-{n} to the committed "
    "offset FetchPosition{{offset={k}, offsetEpoch=Optional.empty}}",
    " [ INFO] [http-nio-8080-exec-{n}] [c.e.shop.CatalogController]: GET /products?page={n} 200 "
    "in {n}{n} ms",
    " [DEBUG] [http-nio-8080-exec-{n}] [o.s.w.s.DispatcherServlet]: Completed 200 OK",
    " [ INFO] [main] [o.s.b.w.e.t.TomcatWebServer]: Tomcat started on port(s): 8080 (http)",
    " [ WARN] [http-nio-8080-exec-{n}] [c.e.shop.StockService]: stock of item {k} below "
    "threshold ({n} left)",
)
HZ_NOISE: tuple[str, ...] = (
    " [ INFO] [hz.{inst}.IO.thread-in-{n}] [c.h.i.s.t.TcpServerConnection]: {me} Initialized new "
    "cluster connection between /{host}:5701 and /{phost}:4{k}",
    " [ INFO] [hz.{inst}.HealthMonitor] [c.h.i.d.HealthMonitor]: {me} processors=8, "
    "physical.memory.total=31.1G, physical.memory.free=12.{n}G, swap.space.total=0, "
    "heap.memory.used={k}M, load.process=0.{n}%, load.system=1.{n}%, thread.count={n}{n}",
    " [DEBUG] [hz.{inst}.cached.thread-{n}] [c.h.i.c.i.ClusterHeartbeatManager]: {me} Received "
    "heartbeat from Member {peer} - {puuid} (now: 2023-11-14 {t}, timestamp: 2023-11-14 {t})",
    " [ INFO] [hz.{inst}.InvocationMonitorThread] [c.h.s.i.o.i.InvocationMonitor]: {me} "
    "Invocations:{n} timeouts:0 backup-timeouts:{n}",
    " [DEBUG] [hz.{inst}.generic-operation.thread-{n}] [c.h.m.i.MapService]: {me} map 'orders' "
    "partition container of {k} entries loaded",
)
#: with a keyword the scanner looks for, but no protocol message (its slow path's rejections)
NEAR_MISSES: tuple[str, ...] = (
    " [ INFO] [hz.{inst}.migration] [c.h.i.p.i.MigrationManager]: {me} Migration listener "
    "registered for partition service {k}",
    " [DEBUG] [hz.{inst}.cached.thread-{n}] [c.h.i.p.InternalPartitionService]: {me} Checking "
    "partition state, stamp: -{k}",
    " [ INFO] [report-{n}] [c.e.shop.ReportJob]: repartitioning report data into {n} buckets",
    " [ INFO] [main] [o.f.c.i.c.DbMigrate]: Schema `shop` is up to date, {n} migration tasks "
    "skipped",
    " [ INFO] [http-nio-8080-exec-{n}] [c.e.shop.FraudFilter]: suspicion score of session {k} "
    "is 0.{n}",
)
STACKS: tuple[str, ...] = (
    " [ WARN] [hz.{inst}.IO.thread-in-{n}] [c.h.i.s.t.TcpServerConnectionErrorHandler]: {me} An "
    "error occurred on connection to {peer} Cause => java.net.SocketException {{Connection "
    "reset}}, Error-Count: {n}\n"
    "java.net.SocketException: Connection reset\n"
    "\tat java.base/sun.nio.ch.SocketChannelImpl.throwConnectionReset(SocketChannelImpl.java:401)\n"
    "\tat java.base/sun.nio.ch.SocketChannelImpl.read(SocketChannelImpl.java:434)\n"
    "\tat com.hazelcast.internal.networking.nio.NioInboundPipeline.process("
    "NioInboundPipeline.java:119)\n"
    "\t... {n} more",
    " [ERROR] [http-nio-8080-exec-{n}] [o.a.c.c.C.[.[.[.[dispatcherServlet]]: Servlet.service() "
    "for servlet [dispatcherServlet] threw exception\n"
    "java.lang.IllegalStateException: order {k} is already paid\n"
    "\tat com.example.shop.OrderService.pay(OrderService.java:{k})\n"
    "\tat com.example.shop.OrderController.pay(OrderController.java:88)\n"
    "\tat java.base/jdk.internal.reflect.DirectMethodHandleAccessor.invoke("
    "DirectMethodHandleAccessor.java:103)\n"
    "Caused by: com.hazelcast.core.OperationTimeoutException: Operation timed out\n"
    "\tat com.hazelcast.spi.impl.operationservice.impl.Invocation.get(Invocation.java:{k})\n"
    "\t... {n}{n} more",
)
#: noise pool size per member (smaller for large clusters: at most NOISE_POOL_TOTAL lines in
#: all) and the share of each kind (app, Hazelcast, near miss, stack)
NOISE_POOL = 2048
NOISE_POOL_TOTAL = 1 << 18
NOISE_MIX = (0.68, 0.305, 0.005, 0.01)

ADJECTIVES = ("amazing", "brave", "calm", "dreamy", "eager", "focused", "gifted", "happy",
              "jolly", "keen", "lucid", "modest", "nifty", "optimistic", "priceless", "quirky",
              "relaxed", "serene", "trusting", "vibrant")
SCIENTISTS = ("galileo", "hopper", "lamarr", "turing", "noether", "curie", "darwin", "euler",
              "fermi", "gauss", "hypatia", "kepler", "lovelace", "meitner", "newton", "pascal",
              "ritchie", "shannon", "tesla", "wozniak")


def address(index: int) -> str:
    """The address of the cluster's `index`-th member (``10.0.0.1:5701``, ...)."""
    return f"10.0.{index // 254}.{index % 254 + 1}:5701"


def file_name(member: str) -> str:
    """The log file of a member: ``member-10.0.0.1-5701.log``."""
    return f"member-{member.replace(':', '-')}.log"


# --- walks ------------------------------------------------------------------------------------


def walk(model_name: str = "membership", *, seed: int | str = 1, max_steps: int = 200,
         overrides: dict[str, int] | None = None) -> Iterator[ev.Event]:
    """One random walk of a model of the catalogue: its events, `order` set to the step."""
    for step, events, _world, _next in _Walk(model_name, overrides or {}, random.Random(seed),
                                              max_steps, strict=False):
        for e in events:
            yield dataclasses.replace(e, order=step)


class _Walk:
    """A random walk of a model of the catalogue (its fixed variant), step by step: iterating
    gives (step, events, world before, world after); step 0 is the initial state's events (both
    worlds the initial one). It ends where nothing can happen, or after `max_steps` (`strict`:
    raising `_Unfinished`). `nodes` are the model's node names, oldest first."""

    def __init__(self, model_name: str, overrides: dict[str, int], rng: random.Random,
                 max_steps: int, strict: bool = True) -> None:
        self.model: Any = catalog.MODELS[model_name].make("fixed", overrides)
        self.nodes: tuple[str, ...] = tuple(self.model.names)
        self.rng = rng
        self.max_steps = max_steps
        self.strict = strict
        self._keys: dict[Any, str] = {}

    def _key(self, successor: tuple[Any, Any]) -> str:
        action = successor[0]
        known = self._keys.get(action)
        if known is None:
            known = self._keys[action] = _canonical(action)
        return known

    def __iter__(self) -> Iterator[tuple[int, tuple[ev.Event, ...], Any, Any]]:
        model, rng = self.model, self.rng
        state = rng.choice(list(model.init_states()))
        yield 0, tuple(model.init_events(state)), state, state
        for step in range(1, self.max_steps + 1):
            # in a canonical order: the model lists them as its frozensets iterate, which
            # depends on string hashing (PYTHONHASHSEED), and the same seed must make the same
            # walk
            successors = sorted(model.successors(state), key=self._key)
            if not successors:
                return
            action, nxt = rng.choice(successors)
            yield step, tuple(model.step_events(state, action, nxt)), state, nxt
            state = nxt
        if self.strict:
            raise _Unfinished(self.model.name)


def _canonical(obj: Any) -> str:
    """A text of `obj` that does not depend on the order its sets iterate in."""
    if isinstance(obj, frozenset | set):
        return "{" + ",".join(sorted(_canonical(x) for x in obj)) + "}"
    if isinstance(obj, tuple):
        return f"{type(obj).__name__}({','.join(_canonical(x) for x in obj)})"
    if dataclasses.is_dataclass(obj) and not isinstance(obj, type):
        inner = ",".join(_canonical(getattr(obj, f.name)) for f in dataclasses.fields(obj))
        return f"{type(obj).__name__}({inner})"
    return repr(obj)


class _Unfinished(Exception):
    """A walk still going at MAX_STEPS: discarded."""


@dataclass(frozen=True)
class _Script:
    """A walk ready to be written: the events of each step, in the walk's node names."""

    steps: tuple[tuple[ev.Event, ...], ...]
    nodes: tuple[str, ...]


#: how the membership model's suspicion reasons read in a log (LOG_FORMATS.md §4)
REASONS = {"crashed": "No connection", "no heartbeat": "No connection",
           "false suspicion": "explicit suspicion"}


def membership_scope(nodes: int) -> dict[str, int]:
    """The membership walk's scope for a cluster of `nodes` (at most 26): a joiner or two, a
    crash, a false suspicion (none of them for two nodes: a walk spends its whole budget, and
    a cluster of one is left)."""
    joiners = 0 if nodes < 3 else min(2, max(1, nodes // 10))
    return {"members": nodes - joiners, "joiners": joiners, "joins": joiners,
            "crashes": 1 if nodes >= 3 else 0,
            "suspicions": 1 if nodes >= 3 else 0, "losses": 0, "duplications": 0,
            "publishes": 0}


def partition_scope(members: int, partitions: int) -> dict[str, int]:
    """The partition walk's scope: no joins or crashes (membership is the membership walk's),
    one backup, graceful shutdowns when there are members to spare."""
    return {"members": members, "joiners": 0, "joins": 0, "crashes": 0,
            "partitions": partitions, "backups": 1 if members > 1 else 0,
            "shutdowns": 0 if members < 3 else 1 if members < 6 else 2,
            "losses": 0, "reorders": 0, "max-parallel": 2}


def membership_script(scope: dict[str, int], rng: random.Random) -> _Script:
    """A walk of the membership model (002); a new master's claim is followed by its
    partition-table fetch (LOG_FORMATS.md §5, §7)."""
    steps = []
    walk = _Walk("membership", scope, rng, MAX_STEPS)
    for _step, events, _world, _next in walk:
        out: list[ev.Event] = []
        for e in events:
            if isinstance(e, ev.MemberSuspected) and e.reason in REASONS:
                e = dataclasses.replace(e, reason=REASONS[e.reason])
            out.append(e)
            if isinstance(e, ev.MastershipClaimed):
                out.extend(ev.PartitionTableFetch(member=e.member, phase=phase)
                           for phase in ("fetching", "determined", "applying"))
        steps.append(tuple(out))
    return _Script(tuple(steps), walk.nodes)


@dataclass
class _Rebalance:
    planned: int
    completed: int = 0
    failed: bool = False


def partition_script(scope: dict[str, int], rng: random.Random) -> _Script | None:
    """A walk of the parallel partition model (003, 004) reduced to what members log, with the
    lines a log shows of the state (LOG_FORMATS.md §8, §9, §11); None for a walk whose master
    shuts down (the membership it would need is not simulated)."""
    from partsafe.refimpl.partition_service import Node

    steps: list[tuple[ev.Event, ...]] = []
    walk = _Walk("parallel", scope, rng, MAX_STEPS)
    nodes = walk.nodes
    versions: dict[str, tuple[int, ...]] = {}
    shown: dict[tuple[str, int], int] = {}  # the last version logged per (member, partition)
    open_: dict[str, _Rebalance] = {}
    totals: dict[str, int] = {}

    def close(member: str) -> ev.Event:
        r = open_.pop(member)
        outcome = ("failed" if r.failed else "completed" if r.completed == r.planned
                   else "aborted")
        totals[member] = totals.get(member, 0) + r.completed
        return ev.MigrationsCompleted(member=member, planned=r.planned, completed=r.completed,
                                      remaining=r.planned - r.completed, outcome=outcome,
                                      total_completed=totals[member])

    for step, events, world, nxt in walk:
        out: list[ev.Event] = []
        if step:
            for name, before, after in zip(nodes, world.nodes, nxt.nodes, strict=True):
                if isinstance(before, Node) and isinstance(after, Node):
                    for requester in sorted(after.shutdown_requests - before.shutdown_requests):
                        out.append(ev.ShutdownRequestHandled(member=name, requester=requester))
        for e in events:
            me = e.member
            if isinstance(e, ev.ShutdownRequested) and me == nodes[0]:
                return None
            if isinstance(e, ev.PartitionTableApplied):
                new = e.partition_versions or ()
                old = versions.get(me)
                versions[me] = new
                for p, (a, v) in enumerate(zip(old or (), new, strict=False)):
                    if step and v > a and v > shown.get((me, p), -1):
                        shown[(me, p)] = v
                        out.append(ev.PartitionVersionApplied(member=me, partition=p, version=v))
            elif isinstance(e, ev.Repartitioning):
                if me in open_:
                    out.append(close(me))
                if e.planned:
                    open_[me] = _Rebalance(e.planned)
                out.append(e)
            elif isinstance(e, ev.MigrationStarted):
                if e.role == "master":
                    out.append(e)
            elif isinstance(e, ev.MigrationCommitted | ev.MigrationRolledBack):
                if e.role != "master":
                    continue
                r = open_.get(me)
                if r is not None:
                    r.completed += 1
                if isinstance(e, ev.MigrationRolledBack):
                    if r is not None:
                        r.failed = True
                    out.append(ev.MigrationFailed(member=me, migration=e.migration,
                                                  partition=e.partition,
                                                  reason="migration failed"))
                else:
                    out.append(e)
                if r is not None and r.completed % 4 == 0 and r.completed < r.planned:
                    st = nxt.nodes[nodes.index(me)]
                    tasks = sum(len(q) for q in st.queues) if isinstance(st, Node) else 0
                    if tasks:
                        out.append(ev.MigrationsCompleted(
                            member=me, planned=r.planned, completed=r.completed,
                            remaining=r.planned - r.completed, outcome="progress",
                            total_completed=totals.get(me, 0) + r.completed, tasks=tasks))
            elif isinstance(e, ev.ShutdownRequested | ev.MemberLeft | ev.PartitionLost):
                out.append(e)
        for member in sorted(open_):
            st = nxt.nodes[nodes.index(member)]
            if isinstance(st, Node) and not st.queues and not st.flights:
                out.append(close(member))
        steps.append(tuple(out))
    return _Script(tuple(steps), nodes)


class _Pools:
    """The walks of a run, made when first needed: `POOL` per scope, each from its own seed."""

    def __init__(self, seed: int) -> None:
        self.seed = seed
        self.scripts: dict[tuple[str, tuple[tuple[str, int], ...], int], _Script] = {}

    def get(self, kind: str, scope: dict[str, int], index: int) -> _Script:
        key = (kind, tuple(sorted(scope.items())), index)
        script = self.scripts.get(key)
        if script is None:
            for attempt in range(100):
                rng = random.Random(f"partsafe:{self.seed}:{kind}:{key[1]}:{index}:{attempt}")
                try:
                    made = (membership_script(scope, rng) if kind == "membership"
                            else partition_script(scope, rng))
                except _Unfinished:
                    continue
                if made is not None:
                    script = made
                    break
            else:  # pragma: no cover - walks end within MAX_STEPS at these scopes
                raise RuntimeError(f"no usable {kind} walk at scope {scope}")
            self.scripts[key] = script
        return script


# --- renaming ---------------------------------------------------------------------------------

_NAME_FIELDS = frozenset({"member", "suspect", "sender", "candidate", "removed", "joined",
                          "target", "requester", "leaving", "source_member", "destination",
                          "source_endpoint", "master"})
_TUPLE_FIELDS = frozenset({"members", "suspected"})
_FIELDS: dict[type, tuple[tuple[str, ...], tuple[str, ...], bool, bool]] = {}


def _fields_of(cls: type) -> tuple[tuple[str, ...], tuple[str, ...], bool, bool]:
    known = _FIELDS.get(cls)
    if known is None:
        names = [f.name for f in dataclasses.fields(cls)]  # type: ignore[arg-type]
        known = _FIELDS[cls] = (tuple(n for n in names if n in _NAME_FIELDS),
                                tuple(n for n in names if n in _TUPLE_FIELDS),
                                "partition" in names, "migration" in names)
    return known


class _Renaming:
    """A walk's node names and partitions as the cluster's, and its migration ids as UUIDs."""

    def __init__(self, names: dict[str, str], partitions: Sequence[int], uuids: dict[str, str],
                 salt: str) -> None:
        self.names = names
        self.partitions = partitions
        self.uuids = uuids
        self.salt = salt
        self.migrations: dict[str, str] = {}

    def __call__(self, e: ev.Event) -> ev.Event:
        single, tuples, partition, migration = _fields_of(type(e))
        changes: dict[str, Any] = {}
        for name in single:
            value = getattr(e, name)
            if value is not None:
                changes[name] = self.names.get(value, value)
        for name in tuples:
            changes[name] = tuple(self.names.get(m, m) for m in getattr(e, name))
        if partition and getattr(e, "partition", None) is not None:
            changes["partition"] = self.partitions[e.partition]  # type: ignore[attr-defined]
        if migration:
            mid = e.migration  # type: ignore[attr-defined]
            uid = self.migrations.get(mid)
            if uid is None:
                uid = self.migrations[mid] = str(uuidlib.uuid5(uuidlib.NAMESPACE_URL,
                                                               f"{self.salt}:{mid}"))
            changes["migration"] = uid
        if isinstance(e, ev.MemberListInstalled):
            changes["uuids"] = tuple(self.uuids[m] for m in changes["members"])
        return dataclasses.replace(e, **changes)


# --- the files and the noise ----------------------------------------------------------------------


class _Noise:
    """A member's pre-rendered noise lines, and the prefix sums of their lines and bytes over the
    pool laid out twice (a slice may wrap around)."""

    def __init__(self, rng: random.Random, member: str, instance: str, peers: Sequence[str],
                 peer_uuids: Sequence[str], size: int = NOISE_POOL) -> None:
        host = member.rpartition(":")[0]
        me = f"[{host}]:{member.rpartition(':')[2]} [{CLUSTER}] [{VERSION}]"
        kinds = (APP_NOISE, HZ_NOISE, NEAR_MISSES, STACKS)
        weights = NOISE_MIX
        bodies: list[str] = []
        for _ in range(size):
            template = rng.choice(rng.choices(kinds, weights)[0])
            i = rng.randrange(len(peers))
            peer = peers[i]
            text = template.format(
                me=me, inst=instance, host=host, phost=peer.rpartition(":")[0],
                peer=f"[{peer.rpartition(':')[0]}]:5701", puuid=peer_uuids[i],
                n=rng.randrange(1, 10), k=rng.randrange(10, 100_000),
                t=f"22:{rng.randrange(60):02d}:{rng.randrange(60):02d}.{rng.randrange(1000):03d}")
            bodies.append((text + "\n").encode())
        self.bodies = bodies + bodies
        self.count = len(bodies)
        self.lines = [0]
        self.bytes = [0]
        for body in self.bodies:
            self.lines.append(self.lines[-1] + body.count(b"\n"))
            self.bytes.append(self.bytes[-1] + len(body) + TS_WIDTH)

    def take(self, rng: random.Random, amount: float, in_bytes: bool) -> list[bytes]:
        """Bodies from a random place of the pool adding up to at least `amount` lines (or
        bytes)."""
        sums = self.bytes if in_bytes else self.lines
        cycle = sums[self.count]
        whole, rest = divmod(int(amount), cycle)
        start = rng.randrange(self.count)
        end = bisect.bisect_left(sums, sums[start] + rest, start)
        return self.bodies[: self.count] * whole + self.bodies[start:end]


@dataclass
class FileStats:
    """One member's log file."""

    name: str
    member: str
    lines: int = 0
    bytes: int = 0
    events: int = 0

    def as_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)


class _File:
    """A member's open log file: buffered writes, line and byte counts, its noise."""

    BUFFER = 1 << 20

    def __init__(self, path: Path, member: str, noise: _Noise) -> None:
        self.stream: IO[bytes] = path.open("wb", buffering=self.BUFFER)
        self.stats = FileStats(path.name, member)
        self.noise = noise
        self.paid = 0.0  # the noise quota this file has written (see _Sim.quota)
        self.clock = 0  # the time of its last line (ms)

    def write(self, data: bytes, lines: int) -> int:
        """Write `data` (`lines` lines); the number of its first line."""
        first = self.stats.lines + 1
        self.stream.write(data)
        self.stats.lines += lines
        self.stats.bytes += len(data)
        return first


# --- the manifest -------------------------------------------------------------------------------


@dataclass(frozen=True)
class Record:
    """A written protocol record: the file and the line it starts at."""

    member: str
    file: str
    line: int

    def as_dict(self) -> dict[str, Any]:
        return {"member": self.member, "file": self.file, "line": self.line}


@dataclass(frozen=True)
class Injection:
    """An injected violation of `spec`: `file`:`line` is the record the validator reports (the
    first line of the violating record, for a member list its header line); `records` are every
    record the injection wrote, in order (the violating one last but for trailing context)."""

    spec: str
    member: str
    file: str
    line: int
    description: str
    records: tuple[Record, ...]

    def as_dict(self) -> dict[str, Any]:
        return {"spec": self.spec, "member": self.member, "file": self.file, "line": self.line,
                "description": self.description, "records": [r.as_dict() for r in self.records]}


@dataclass
class Manifest:
    """What `simulate` wrote: the files, the counts, and every injected violation."""

    out: str
    seed: int
    members: int
    partitions: int
    requested: dict[str, Any]
    files: list[FileStats] = field(default_factory=list)
    injections: list[Injection] = field(default_factory=list)
    events: int = 0
    lines: int = 0
    bytes: int = 0
    eras: int = 0
    walks: int = 0
    seconds: float = 0.0

    @property
    def mb_per_second(self) -> float:
        return self.bytes / 1e6 / self.seconds if self.seconds > 0 else 0.0

    def as_dict(self, run: bool = True) -> dict[str, Any]:
        """The manifest as JSON; with `run`, also where and how fast this run wrote it (the
        ``.manifest.json`` file leaves those out, so that a run is byte for byte repeatable)."""
        doc: dict[str, Any] = {
            "seed": self.seed, "members": self.members, "partitions": self.partitions,
            "requested": self.requested, "events": self.events, "lines": self.lines,
            "bytes": self.bytes, "eras": self.eras, "walks": self.walks,
            "files": [f.as_dict() for f in self.files],
            "injections": [i.as_dict() for i in self.injections],
        }
        if run:
            doc = {"out": self.out, **doc, "seconds": round(self.seconds, 3),
                   "mb_per_second": round(self.mb_per_second, 1)}
        return doc


# --- the simulation ----------------------------------------------------------------------------


@dataclass
class _Shadow:
    """What the members of the current era have logged, as far as injections and the
    membership updates after a leave need it."""

    started: set[str] = field(default_factory=set)
    alive: set[str] = field(default_factory=set)
    #: each member's last versioned member list
    lists: dict[str, ev.MemberListInstalled] = field(default_factory=dict)
    #: the versions each master published (member lists name their master first)
    versions: dict[str, set[int]] = field(default_factory=dict)
    #: (member, partition) -> the last partition version it applied
    applied: dict[tuple[str, int], int] = field(default_factory=dict)

    def master(self) -> str | None:
        """The live member that heads its own list and has the most live followers (a member
        removed while alive heads a list of its own, 002), None when there is none."""
        heads = sorted(m for m in self.alive
                       if (lst := self.lists.get(m)) is not None and lst.members[:1] == (m,))
        return max(heads, key=lambda m: len(self.followers(m)), default=None)

    def followers(self, master: str) -> list[str]:
        """Live members other than `master` whose list is headed by it and includes them, in
        list order."""
        lst = self.lists[master]
        return [m for m in lst.members if m != master and m in self.alive
                and (own := self.lists.get(m)) is not None and own.members[:1] == (master,)
                and m in own.members]


class _Sim:
    """One run of `simulate`."""

    #: noise is written in pieces of at most this many lines or bytes
    CHUNK_LINES = 50_000
    CHUNK_BYTES = 8 << 20
    #: every this many events, a file owed more than a chunk of noise gets it
    FLUSH_EVERY = 256
    #: noise lines share a timestamp in bursts of about this many (busy loggers do)
    BURST = 6
    #: the noise a file without protocol lines gets at least
    MIN_NOISE = 20
    MIN_NOISE_BYTES = 4096

    def __init__(self, out: Path, members: int, partitions: int, events: int,
                 budget: tuple[int, bool] | None, seed: int,
                 progress: Callable[[int, int], None] | None, migrations: bool = True) -> None:
        self.migrations = migrations
        self.n = members
        self.partitions = partitions
        self.target = events
        self.seed = seed
        self.rng = random.Random(seed)
        self.progress = progress
        self.cluster = [address(i) for i in range(members)]
        self.pools = _Pools(seed)
        self.writer = LogWriter(cluster=CLUSTER, version=VERSION)
        instances = _instances(self.rng, members)
        self.writer.instances = dict(zip(self.cluster, instances, strict=True))
        self.uuids: dict[str, str] = {m: self._uuid() for m in self.cluster}
        self.writer.uuids = self.uuids
        self.files: dict[str, _File] = {}
        for member, instance in zip(self.cluster, instances, strict=True):
            peers = [p for p in self.cluster if p != member] or [member]
            noise = _Noise(random.Random(f"partsafe:{seed}:noise:{member}"), member, instance,
                           peers, [self.uuids[p] for p in peers],
                           max(256, min(NOISE_POOL, NOISE_POOL_TOTAL // members)))
            self.files[member] = _File(out / file_name(member), member, noise)
        self.clock = EPOCH_MS
        for f in self.files.values():
            f.clock = self.clock
        self.events = 0
        self.eras = 0
        self.shadow = _Shadow()
        # noise: `budget` is (amount, in bytes?) for the whole run; `quota` is the noise each
        # file is owed so far (the same for every file), `paid` what a file has written of it
        if budget is None:
            budget = (events * (DEFAULT_NOISE_PER_EVENT + 2), False)
        self.budget, self.in_bytes = budget
        self.quota = 0.0
        self.protocol = 0  # protocol lines (or bytes) written
        self.noise_total = 0
        self.next_report = 0.0

    # -- primitives

    def _uuid(self) -> str:
        return str(uuidlib.UUID(int=self.rng.getrandbits(128), version=4))

    def tick(self, low: int, high: int) -> int:
        self.clock += self.rng.randint(low, high)
        return self.clock

    def _pay(self, f: _File, until: int) -> None:
        """Write the noise `f` is owed, timestamped evenly after its last line up to `until`
        (in chunks of at most CHUNK lines or bytes)."""
        owed = self.quota - f.paid
        if owed < 1:
            return
        chunk = self.CHUNK_BYTES if self.in_bytes else self.CHUNK_LINES
        start, span = f.clock, max(0, until - f.clock)
        done = 0.0
        while owed - done >= 1:
            bodies = f.noise.take(self.rng, min(owed - done, chunk), self.in_bytes)
            if not bodies:
                break
            # timestamps spread over the span in proportion to what is written, one per burst
            t0 = start + int(span * done / owed)
            t1 = start + int(span * min(owed, done + chunk) / owed)
            k = len(bodies)
            bursts = max(1, min(k // self.BURST, t1 - t0))
            parts = []
            for b in range(bursts):
                stamp = layout_time(t0 + (t1 - t0) * (b + 1) // (bursts + 1)).encode()
                parts.append(stamp)
                parts.append(stamp.join(bodies[k * b // bursts: k * (b + 1) // bursts]))
            data = b"".join(parts)
            lines = data.count(b"\n")
            f.write(data, lines)
            amount = len(data) if self.in_bytes else lines
            done += amount
            f.paid += amount
            self.noise_total += amount
        f.clock = until

    def record(self, e: ev.Event, at: int | None = None) -> Record | None:
        """Write one event at its member's file (a first event of the era is preceded by
        ``is STARTING``); update the shadow. None when Hazelcast does not log the event."""
        sh = self.shadow
        me = e.member
        if me not in sh.started and not isinstance(e, ev.MemberStarted):
            sh.started.add(me)
            sh.alive.add(me)
            self.record(ev.MemberStarted(member=me, uuid=self.uuids[me]))
        when = self.tick(1, 15) if at is None else at
        f = self.files[me]
        text = self.writer.line(e, 0, at_ms=when)
        written = None
        if text is not None:
            self._pay(f, when)
            data = text.encode()
            lines = text.count("\n")
            written = Record(me, f.stats.name, f.write(data, lines))
            f.stats.events += 1
            f.clock = when
            self.events += 1
            self.protocol += len(data) if self.in_bytes else lines
            self._owe()
        self._observe(e)
        return written

    def _owe(self) -> None:
        """After each protocol event: raise every file's noise quota so that the run ends near
        its budget (what remains, less the protocol lines the remaining events will take, over
        the remaining events and the files)."""
        left = max(1, self.target - self.events)
        per_event = self.protocol / self.events
        remaining = self.budget - self.protocol - self._committed() - per_event * left
        if remaining > 0:
            self.quota += remaining / left / len(self.files)
        if self.events % self.FLUSH_EVERY == 0:
            chunk = self.CHUNK_BYTES if self.in_bytes else self.CHUNK_LINES
            for f in self.files.values():
                if self.quota - f.paid > chunk:
                    self._pay(f, self.clock)
        if self.progress is not None and self.events % 64 == 0:
            now = time.perf_counter()
            if now >= self.next_report:
                self.next_report = now + 0.2
                self.progress(self.events, self.bytes())

    def _committed(self) -> float:
        """The noise written or owed so far (a file may have written a little more than owed:
        a slice of the pool ends at a whole line)."""
        return max(self.noise_total, self.quota * len(self.files))

    def bytes(self) -> int:
        return sum(f.stats.bytes for f in self.files.values())

    def _observe(self, e: ev.Event) -> None:
        sh = self.shadow
        if isinstance(e, ev.MemberCrashed | ev.MemberLeft):
            sh.alive.discard(e.member)
        elif isinstance(e, ev.MemberListInstalled) and e.version is not None and e.members:
            sh.lists[e.member] = e
            sh.versions.setdefault(e.members[0], set()).add(e.version)
        elif isinstance(e, ev.PartitionVersionApplied):
            sh.applied[(e.member, e.partition)] = e.version

    def done(self) -> bool:
        return self.events >= self.target

    # -- eras

    def era(self, stop: Callable[[], bool]) -> None:
        """One incarnation of the cluster: a membership walk, then a partition walk on the
        members that hold the master's list. Returns early once `stop()` holds."""
        self.eras += 1
        self.shadow = _Shadow()
        rng = self.rng
        self.tick(20_000, 60_000)
        nodes = min(self.n, MAX_MEMBERSHIP_NODES)
        era_members = self.cluster if self.n <= nodes else sorted(
            rng.sample(self.cluster, nodes), key=self.cluster.index)
        for m in era_members:
            self.uuids[m] = self._uuid()
        order = rng.sample(era_members, len(era_members))
        scope = membership_scope(nodes)
        script = self.pools.get("membership", scope, rng.randrange(POOL))
        rename = _Renaming(dict(zip(script.nodes, order, strict=True)), range(self.partitions),
                           self.uuids, f"{self.seed}:{self.eras}")
        if self._play(script, rename, stop) or not self.migrations:
            return
        master = self.shadow.master()
        if master is None:
            return
        followers = self.shadow.followers(master)
        size = min(1 + len(followers), MAX_PARTITION_MEMBERS)
        chosen = [master, *sorted(rng.sample(followers, size - 1),
                                  key=self.shadow.lists[master].members.index)]
        k = min(self.partitions, MAX_PARTITION_PARTITIONS)
        script = self.pools.get("partition", partition_scope(size, k), rng.randrange(POOL))
        rename = _Renaming(dict(zip(script.nodes, chosen, strict=True)),
                           rng.sample(range(self.partitions), k), self.uuids,
                           f"{self.seed}:{self.eras}")
        self._play(script, rename, stop)

    def _play(self, script: _Script, rename: _Renaming, stop: Callable[[], bool]) -> bool:
        """Write a script's steps; True when `stop()` ended it early."""
        for step in script.steps:
            self.tick(20, 1500)
            for raw in step:
                e = rename(raw)
                self.record(e)
                if isinstance(e, ev.MemberLeft):
                    self._removed(e.member)
                if stop():
                    return True
        return False

    def _removed(self, gone: str) -> None:
        """The master removes a member that left and publishes the next list (§11 step 7)."""
        sh = self.shadow
        master = sh.master()
        if master is None or gone not in sh.lists[master].members:
            return
        followers = [m for m in sh.followers(master) if m != gone]
        current = sh.lists[master]
        members = tuple(m for m in current.members if m != gone)
        version = max(sh.versions[master]) + 1
        self.tick(500, 3000)
        self.record(ev.MemberRemoved(member=master, removed=gone, version=version))
        for m in (master, *followers):
            self.tick(1, 40)
            self.record(ev.MemberListInstalled(
                member=m, version=version, members=members, master=master,
                uuids=tuple(self.uuids[x] for x in members)))

    # -- the end

    def finish(self) -> None:
        """The remaining noise, after the last protocol line, and the files closed."""
        end = self.tick(1000, 5000)
        left = self.budget - self.protocol - self._committed()
        if left > 0:
            self.quota += left / len(self.files)
        for f in self.files.values():
            if f.paid + f.stats.events == 0:  # never an empty file (the validator notes those)
                f.paid = self.quota - (self.MIN_NOISE_BYTES if self.in_bytes else self.MIN_NOISE)
            self._pay(f, end)
            f.stream.close()
        if self.progress is not None:
            self.progress(self.events, self.bytes())


def _instances(rng: random.Random, count: int) -> list[str]:
    """Hazelcast-like instance names (``amazing_galileo``), distinct."""
    names: list[str] = []
    seen: set[str] = set()
    while len(names) < count:
        name = f"{rng.choice(ADJECTIVES)}_{rng.choice(SCIENTISTS)}"
        if name in seen:
            name = f"{name}_{len(names)}"
        seen.add(name)
        names.append(name)
    return names


# --- injections ---------------------------------------------------------------------------------

_Injector = Callable[[_Sim, set[str]], "Injection | None"]


def _non_masters(sim: _Sim, used: set[str], master: str | None = None) -> list[str]:
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


def _pick(sim: _Sim, candidates: list[str]) -> str | None:
    return sim.rng.choice(candidates) if candidates else None


def _injection(sim: _Sim, spec: str, records: list[Record | None], violating: int,
               description: str) -> Injection:
    written = [r for r in records if r is not None]
    hit = records[violating]
    assert hit is not None, spec
    return Injection(spec, hit.member, hit.file, hit.line, description, tuple(written))


def _list(sim: _Sim, member: str, version: int | None, members: tuple[str, ...]) -> Record | None:
    sim.tick(200, 2000)
    return sim.record(ev.MemberListInstalled(
        member=member, version=version, members=members, master=members[0] if members else None,
        uuids=tuple(sim.uuids.get(m) or sim._uuid() for m in members)))


def inject_view_order(sim: _Sim, used: set[str]) -> Injection | None:
    """MEM-VIEW-ORDER (002 Theory, M1): the master installs two lists, a member installs them in
    the opposite order. The lists are in the legacy format (no version, as a 3.8 member prints
    them, LOG_FORMATS.md §2), so that no version goes back (that would be MEM-VERSION)."""
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
        sim.uuids.setdefault(extra, sim._uuid())
        second = (*first, extra)
    used.add(x)
    records = [_list(sim, master, None, first), _list(sim, master, None, second),
               _list(sim, x, None, second), _list(sim, x, None, first)]
    return _injection(sim, "MEM-VIEW-ORDER", records, 3,
                      f"{x} installs master {master}'s lists in the opposite order")


def inject_view_integrity(sim: _Sim, used: set[str]) -> Injection | None:
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


def inject_version(sim: _Sim, used: set[str]) -> Injection | None:
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


def inject_master_only(sim: _Sim, used: set[str]) -> Injection | None:
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


def inject_partition_version(sim: _Sim, used: set[str]) -> Injection | None:
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


def inject_stats(sim: _Sim, used: set[str]) -> Injection | None:
    """MIG-STATS (LOG_FORMATS.md §9): the master repartitions, then reports all migrations
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


def inject_only_source(sim: _Sim, used: set[str]) -> Injection | None:
    """SHUT-ONLY-SOURCE (004): a member requests shutdown, the master handles the request and
    then starts a migration with that member as its destination. (A log shows migrations only
    at the master, ``Starting Migration``, §9: the destination's side is not logged.)"""
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
INJECTORS: dict[str, _Injector] = {
    "MEM-VIEW-ORDER": inject_view_order,
    "MEM-VIEW-INTEGRITY": inject_view_integrity,
    "MEM-VERSION": inject_version,
    "MEM-MASTER-ONLY": inject_master_only,
    "PT-VERSION": inject_partition_version,
    "MIG-STATS": inject_stats,
    "SHUT-ONLY-SOURCE": inject_only_source,
}


# --- the entry point ----------------------------------------------------------------------------


def simulate(out: Path, *, members: int, partitions: int, events: int,
             lines: int | None = None, size: int | None = None, inject: Sequence[str] = (),
             seed: int = 1, progress: Callable[[int, int], None] | None = None,
             migrations: bool = True) -> Manifest:
    """Write the logs of a simulated cluster into `out`, one file per member, and its manifest
    (``.manifest.json``, also returned).

    `members` members (at least 2) and `partitions` partitions (at least 1); about `events`
    protocol records (more when injections need further eras to find members in the state they
    need); about `lines` lines in all, or about `size` bytes, the rest noise (default: about
    `DEFAULT_NOISE_PER_EVENT` noise lines per event). `inject` lists spec ids of
    `partsafe.checker.validate.local.LOG_SPECS`; each is injected once, after a random point, and
    recorded in the manifest. The same arguments give byte-identical files. `progress` is
    called now and then with the events and bytes written so far. Files of the same names in
    `out` are overwritten; nothing else there is touched. `migrations=False` leaves out the
    partition walks (membership lines only, but for injected ones).
    """
    if not 2 <= members <= MAX_MEMBERS:
        raise ValueError(f"members must be 2 to {MAX_MEMBERS}, not {members}")
    if partitions < 1:
        raise ValueError(f"partitions must be at least 1, not {partitions}")
    if events < 1:
        raise ValueError(f"events must be at least 1, not {events}")
    if lines is not None and size is not None:
        raise ValueError("give lines or size, not both")
    for name, value in (("lines", lines), ("size", size)):
        if value is not None and value < 0:
            raise ValueError(f"{name} must not be negative, not {value}")
    specs = [s.upper() for s in inject]
    for spec in specs:
        if spec not in LOG_SPECS or spec not in INJECTORS:
            raise ValueError(f"cannot inject {spec!r}: the specs a log can show are "
                             f"{', '.join(LOG_SPECS)}")
    started = time.perf_counter()
    out.mkdir(parents=True, exist_ok=True)
    budget = (size, True) if size is not None else (lines, False) if lines is not None else None
    sim = _Sim(out, members, partitions, events, budget, seed, progress, migrations)
    # each injection is due after a random number of events, and is written at the end of the
    # first era after that in which its members can be found
    pending = sorted((sim.rng.randrange(events), i, spec) for i, spec in enumerate(specs))
    placed: dict[int, Injection] = {}
    late = 0  # eras after the events were reached, for the injections still to place
    try:
        while not (sim.done() and not pending):
            sim.era(lambda: sim.done() and not pending)
            used: set[str] = set()
            for item in list(pending):
                due, i, spec = item
                if due > sim.events:
                    break
                made = INJECTORS[spec](sim, used)
                if made is not None:
                    placed[i] = made
                    pending.remove(item)
            late += sim.done()
            if late > 100 + 10 * len(specs):  # pragma: no cover - members are found far sooner
                raise RuntimeError(f"could not inject {', '.join(s for *_, s in pending)}")
    finally:
        sim.finish()
    manifest = Manifest(
        out=str(out), seed=seed, members=members, partitions=partitions,
        requested={"events": events, "lines": lines, "size": size, "inject": specs,
                   "migrations": migrations},
        files=[f.stats for f in sim.files.values()],
        injections=[placed[i] for i in sorted(placed)],
        events=sim.events, eras=sim.eras, walks=len(sim.pools.scripts))
    manifest.lines = sum(f.lines for f in manifest.files)
    manifest.bytes = sum(f.bytes for f in manifest.files)
    (out / MANIFEST_NAME).write_text(json.dumps(manifest.as_dict(run=False), indent=1) + "\n")
    manifest.seconds = time.perf_counter() - started
    return manifest


def generate(out: Path, *, lines: int, model: str = "cluster", relevant: float = 0.02,
             seed: int = 1, members: int = 4) -> dict[str, int]:
    """About `lines` lines of logs of `members` members into `out`, about `relevant` of them
    protocol records from walks of `model`: ``cluster`` (membership and partition service, as
    `simulate`) or ``membership`` (seed 002 alone: the scan benchmark's mix). Returns the counts
    (lines, events, files, runs: the cluster's incarnations)."""
    if model not in ("membership", "cluster"):
        raise ValueError(f"unknown model {model!r} for generate: membership or cluster")
    made = simulate(out, members=members, partitions=271,
                    events=max(1, round(lines * relevant)), lines=lines, seed=seed,
                    migrations=model == "cluster")
    return {"lines": made.lines, "events": made.events, "files": len(made.files),
            "runs": made.eras}

"""Realistic logs from simulations of the reference implementation.

A random walk through a model of `partsafe.checker.catalog` (the membership protocol of seed 002
by default) is one life of a cluster: its steps' events are what the members would log. Each
walk is a new incarnation of every member (``is STARTING``, new UUIDs), its events are written by
`partsafe.traces.writer` in Hazelcast's wording, and between them go the lines real logs are made
of: application requests, connection chatter, health reports, stack traces, and Hazelcast lines
that mention migrations or partitions without being protocol messages. Used by the tests at small
size and by the scan benchmark at large size.
"""

from __future__ import annotations

import dataclasses
import random
import uuid as uuidlib
from collections.abc import Iterator
from pathlib import Path

from partsafe.traces import events as ev
from partsafe.traces.writer import LogWriter, _date

NOISE = (
    "{ts} [ INFO] [http-nio-8080-exec-{n}] [c.e.shop.OrderController]: GET /orders/{k} 200 "
    "in {n} ms",
    "{ts} [ INFO] [http-nio-8080-exec-{n}] [c.e.shop.CartService]: cart {k} updated with {n} "
    "items",
    "{ts} [DEBUG] [scheduling-1] [o.s.s.a.ScheduledAnnotationBeanPostProcessor]: task {k} ran",
    "{ts} [ INFO] [hz.{name}.IO.thread-in-{n}] [c.h.i.s.t.TcpServerConnection]: {me} [dev] "
    "[5.3.0] Initialized new cluster connection between /10.0.0.{n}:5701 and "
    "/10.0.0.{n}:4{k}",
    "{ts} [ INFO] [hz.{name}.HealthMonitor] [c.h.i.d.HealthMonitor]: {me} [dev] [5.3.0] "
    "processors=8, physical.memory.total=31.1G, physical.memory.free=12.{n}G, "
    "swap.space.total=0, heap.memory.used={k}M, load.process=0.{n}%, load.system=1.{n}%",
    "{ts} [ WARN] [hikari-housekeeper] [c.z.h.p.HikariPool]: HikariPool-1 - Thread starvation "
    "or clock leap detected (housekeeper delta={n}s)",
    "{ts} [ INFO] [main] [o.s.b.w.e.t.TomcatWebServer]: Tomcat started on port(s): 8080 (http)",
    "{ts} [DEBUG] [hz.{name}.cached.thread-{n}] [c.h.i.c.i.ClusterHeartbeatManager]: {me} [dev] "
    "[5.3.0] Received heartbeat from Member [10.0.0.{n}]:5701 - {uuid} (now: 2023-11-14 "
    "22:13:20.{k}, timestamp: 2023-11-14 22:13:20.{k})",
)
#: Hazelcast lines with a keyword that are not protocol messages (the slow path's rejections)
NEAR_MISSES = (
    "{ts} [ INFO] [hz.{name}.migration] [c.h.i.p.i.MigrationManager]: {me} [dev] [5.3.0] "
    "Migration listener registered for partition service {k}",
    "{ts} [DEBUG] [hz.{name}.cached.thread-{n}] [c.h.i.p.InternalPartitionService]: {me} [dev] "
    "[5.3.0] Checking partition state, stamp: -{k}",
)
STACK = (
    "{ts} [ WARN] [hz.{name}.cached.thread-{n}] [c.h.i.s.t.TcpServerConnectionErrorHandler]: "
    "{me} [dev] [5.3.0] An error occurred on connection to [10.0.0.{n}]:5701 Cause => "
    "java.net.SocketException {{Connection reset}}, Error-Count: {n}\n"
    "java.net.SocketException: Connection reset\n"
    "\tat java.base/sun.nio.ch.SocketChannelImpl.throwConnectionReset(SocketChannelImpl.java:401)\n"
    "\tat java.base/sun.nio.ch.SocketChannelImpl.read(SocketChannelImpl.java:434)\n"
    "\tat com.hazelcast.internal.networking.nio.NioInboundPipeline.process("
    "NioInboundPipeline.java:119)\n"
    "\t... {n} more"
)


def walk(model_name: str = "membership", *, seed: int = 1, max_steps: int = 200,
         overrides: dict[str, int] | None = None) -> Iterator[ev.Event]:
    """One random walk of a model of the catalogue: its events, `order` set to the step."""
    from partsafe.checker import catalog

    model = catalog.MODELS[model_name].make("fixed", overrides or {})
    rng = random.Random(seed)
    state = rng.choice(list(model.init_states()))
    for e in model.init_events(state):
        yield dataclasses.replace(e, order=0)
    for step in range(1, max_steps + 1):
        successors = model.successors(state)
        if not successors:
            return
        action, nxt = rng.choice(successors)
        for e in model.step_events(state, action, nxt):  # type: ignore[attr-defined]
            yield dataclasses.replace(e, order=step)
        state = nxt


def incarnation(events: Iterator[ev.Event], run: int) -> Iterator[ev.Event]:
    """A walk as one incarnation of its cluster: every member starts, and lists show UUIDs that
    are new with each run."""

    def uid(member: str) -> str:
        return str(uuidlib.uuid5(uuidlib.NAMESPACE_URL, f"partsafe:{run}:{member}"))

    started: set[str] = set()
    for e in events:
        if e.member not in started:
            started.add(e.member)
            yield ev.MemberStarted(member=e.member, uuid=uid(e.member), order=e.order)
        if isinstance(e, ev.MemberListInstalled):
            e = dataclasses.replace(e, uuids=tuple(uid(m) for m in e.members))
        yield e


def generate(out: Path, *, lines: int, model: str = "membership", relevant: float = 0.02,
             seed: int = 1) -> dict[str, int]:
    """Write about `lines` lines of logs, one file per member, into `out`; about `relevant` of
    them from simulations, the rest noise. Returns counts (lines, events, files)."""
    rng = random.Random(seed)
    out.mkdir(parents=True, exist_ok=True)
    writer = LogWriter()
    files: dict[str, object] = {}
    written = {"lines": 0, "events": 0}
    clock = 0

    def stream(member: str):
        if member not in files:
            name = writer.address(member).replace(":", "-")
            files[member] = (out / f"member-{name}.log").open("w")
        return files[member]

    def noise(member: str, count: int) -> None:
        f = stream(member)
        me = writer.bracketed(member)
        for _ in range(count):
            r = rng.random()
            template = (STACK if r < 0.01 else rng.choice(NEAR_MISSES) if r < 0.03
                        else rng.choice(NOISE))
            text = template.format(ts=_date(clock, layout=True), n=rng.randrange(1, 9),
                                   k=rng.randrange(10_000), me=me, name=member,
                                   uuid=writer.uuid(member))
            f.write(text + "\n")  # type: ignore[attr-defined]
            written["lines"] += text.count("\n") + 1

    run = 0
    per_event = max(1, round(1 / relevant))
    try:
        while written["lines"] < lines:
            run += 1
            for e in incarnation(walk(model, seed=seed * 1000 + run), run):
                clock += 1
                e = dataclasses.replace(e, order=clock)
                noise(e.member, rng.randrange(per_event * 2))
                text = writer.line(e, clock)
                if text is not None:
                    stream(e.member).write(text)  # type: ignore[attr-defined]
                    written["lines"] += text.count("\n")
                    written["events"] += 1
    finally:
        for f in files.values():
            f.close()  # type: ignore[attr-defined]
    written["files"] = len(files)
    written["runs"] = run
    return written

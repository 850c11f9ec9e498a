"""The lines real logs are mostly made of, between the protocol lines: application requests,
connection chatter, health reports, heartbeats, stack traces, and near misses (lines with a
keyword of the scanner that are no protocol message).

Each member has a pool of pre-rendered, pre-encoded lines (`Noise`); a gap between protocol lines
takes a slice of it, so noise costs little more than the bytes written.
"""

from __future__ import annotations

import bisect
import random
from collections.abc import Sequence

from partsafe.checker.validation.simulate.names import CLUSTER, VERSION

#: noise lines written per protocol event when neither `lines` nor `size` is given
DEFAULT_NOISE_PER_EVENT = 50
#: the width of a layout timestamp (``2023-11-14 22:13:20,000``)
TS_WIDTH = 23

# Each template is what follows the timestamp; {me} is the member's prefix (docs/validation.md
# §0), {inst} its instance name, {peer}/{puuid} another member, {n} a digit, {k} a number, {t} a
# clock.

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


class Noise:
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

"""One run of `simulate` (`Simulation`): the cluster's clock, its members' files, the eras
played from the pool of walks, the noise spread between the protocol lines, and the shadow of
what the members have logged, which the injections and the updates after a leave read.
"""

from __future__ import annotations

import random
import time
import uuid as uuidlib
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO

from partsafe.checker.validation.simulate.manifest import FileStats, Record
from partsafe.checker.validation.simulate.names import (
    CLUSTER,
    VERSION,
    Renaming,
    address,
    file_name,
    instance_names,
)
from partsafe.checker.validation.simulate.noise import (
    DEFAULT_NOISE_PER_EVENT,
    NOISE_POOL,
    NOISE_POOL_TOTAL,
    Noise,
)
from partsafe.checker.validation.simulate.scripts import (
    MAX_MEMBERSHIP_NODES,
    MAX_PARTITION_MEMBERS,
    MAX_PARTITION_PARTITIONS,
    POOL,
    Pools,
    Script,
    membership_scope,
    partition_scope,
)
from partsafe.traces import events as ev
from partsafe.traces.writer import EPOCH_MS, LogWriter, layout_time


class LogFile:
    """A member's open log file: buffered writes, line and byte counts, its noise."""

    BUFFER = 1 << 20

    def __init__(self, path: Path, member: str, noise: Noise) -> None:
        self.stream: IO[bytes] = path.open("wb", buffering=self.BUFFER)
        self.stats = FileStats(path.name, member)
        self.noise = noise
        self.paid = 0.0  # the noise quota this file has written (see Simulation.quota)
        self.clock = 0  # the time of its last line (ms)

    def write(self, data: bytes, lines: int) -> int:
        """Write `data` (`lines` lines); the number of its first line."""
        first = self.stats.lines + 1
        self.stream.write(data)
        self.stats.lines += lines
        self.stats.bytes += len(data)
        return first


@dataclass
class Shadow:
    """What the members of the current era have logged, as far as injections and the
    membership updates after a leave need it."""

    started: set[str] = field(default_factory=set)
    alive: set[str] = field(default_factory=set)
    #: each member's last versioned member list
    lists: dict[str, ev.MemberListInstalled] = field(default_factory=dict)
    #: the members whose last list is in the legacy format (no version)
    legacy: set[str] = field(default_factory=set)
    #: the versions each master published (member lists name their master first)
    versions: dict[str, set[int]] = field(default_factory=dict)
    #: (member, partition) -> the last partition version it applied
    applied: dict[tuple[str, int], int] = field(default_factory=dict)
    #: the members each member suspects
    suspects: dict[str, set[str]] = field(default_factory=dict)
    #: the members that requested shutdown, or whose request a master handled
    leaving: set[str] = field(default_factory=set)
    #: per master, its migrations in flight: id -> (partition, destination and source endpoint)
    flights: dict[str, dict[str, tuple[int | None, frozenset[str]]]] = field(
        default_factory=dict)

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


class Simulation:
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
        self.pools = Pools(seed)
        self.writer = LogWriter(cluster=CLUSTER, version=VERSION)
        instances = instance_names(self.rng, members)
        self.writer.instances = dict(zip(self.cluster, instances, strict=True))
        self.uuids: dict[str, str] = {m: self.new_uuid() for m in self.cluster}
        self.writer.uuids = self.uuids
        self.files: dict[str, LogFile] = {}
        for member, instance in zip(self.cluster, instances, strict=True):
            peers = [p for p in self.cluster if p != member] or [member]
            noise = Noise(random.Random(f"partsafe:{seed}:noise:{member}"), member, instance,
                          peers, [self.uuids[p] for p in peers],
                          max(256, min(NOISE_POOL, NOISE_POOL_TOTAL // members)))
            self.files[member] = LogFile(out / file_name(member), member, noise)
        self.clock = EPOCH_MS
        for f in self.files.values():
            f.clock = self.clock
        self.events = 0
        self.eras = 0
        self.shadow = Shadow()
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

    def new_uuid(self) -> str:
        """A member UUID drawn from the run's random numbers."""
        return str(uuidlib.UUID(int=self.rng.getrandbits(128), version=4))

    def tick(self, low: int, high: int) -> int:
        """Advance the clock by `low` to `high` ms; the new time."""
        self.clock += self.rng.randint(low, high)
        return self.clock

    def _pay(self, f: LogFile, until: int) -> None:
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
            f.stats.events += self.writer.carried
            f.clock = when
            self.events += self.writer.carried
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
        """The bytes written so far, in all files."""
        return sum(f.stats.bytes for f in self.files.values())

    def _observe(self, e: ev.Event) -> None:
        """Keep the shadow up to date with an event just written (or not logged)."""
        sh = self.shadow
        if isinstance(e, ev.MemberCrashed | ev.MemberLeft):
            sh.alive.discard(e.member)
        elif isinstance(e, ev.MemberListInstalled) and e.version is not None and e.members:
            sh.lists[e.member] = e
            sh.versions.setdefault(e.members[0], set()).add(e.version)
            sh.legacy.discard(e.member)
        elif isinstance(e, ev.MemberListInstalled):
            sh.legacy.add(e.member)
        elif isinstance(e, ev.PartitionVersionApplied):
            sh.applied[(e.member, e.partition)] = e.version
        mine = sh.suspects.setdefault(e.member, set())
        if isinstance(e, ev.MemberSuspected):
            mine.add(e.suspect)
        elif isinstance(e, ev.ExplicitSuspicion):
            mine.add(e.sender)
        elif isinstance(e, ev.SuspicionRemoved):
            mine.discard(e.suspect)
        elif isinstance(e, ev.MemberListInstalled):
            mine.intersection_update(e.members)
        elif isinstance(e, ev.ShutdownRequested):
            sh.leaving.add(e.member)
        elif isinstance(e, ev.ShutdownRequestHandled):
            sh.leaving.add(e.requester)
        flights = sh.flights.setdefault(e.member, {})
        if isinstance(e, ev.MigrationStarted) and e.role == "master":
            source = e.source_endpoint or (e.source_member if e.source_current_index == 0
                                           else None)
            flights[e.migration] = (e.partition, frozenset(
                m for m in (e.destination, source) if m is not None))
        elif isinstance(e, ev.MigrationFailed | ev.MigrationFinished) or (
                isinstance(e, ev.MigrationCommitted | ev.MigrationRolledBack)
                and e.role == "master"):
            flights.pop(e.migration, None)
        elif isinstance(e, ev.Repartitioning | ev.MemberStarted) or (
                isinstance(e, ev.MigrationsCompleted) and e.outcome != "progress"):
            flights.clear()

    def done(self) -> bool:
        """Whether the requested protocol events are written."""
        return self.events >= self.target

    # -- eras

    def era(self, stop: Callable[[], bool]) -> None:
        """One incarnation of the cluster: a membership walk, then a partition walk on the
        members that hold the master's list. Returns early once `stop()` holds."""
        self.eras += 1
        self.shadow = Shadow()
        rng = self.rng
        self.tick(20_000, 60_000)
        nodes = min(self.n, MAX_MEMBERSHIP_NODES)
        era_members = self.cluster if self.n <= nodes else sorted(
            rng.sample(self.cluster, nodes), key=self.cluster.index)
        for m in era_members:
            self.uuids[m] = self.new_uuid()
        order = rng.sample(era_members, len(era_members))
        scope = membership_scope(nodes)
        script = self.pools.get("membership", scope, rng.randrange(POOL))
        rename = Renaming(dict(zip(script.nodes, order, strict=True)), range(self.partitions),
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
        rename = Renaming(dict(zip(script.nodes, chosen, strict=True)),
                          rng.sample(range(self.partitions), k), self.uuids,
                          f"{self.seed}:{self.eras}")
        self._play(script, rename, stop)

    def _play(self, script: Script, rename: Renaming, stop: Callable[[], bool]) -> bool:
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
        """The master removes a member that left and publishes the next list (002 Membership
        Update Process)."""
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

"""Realistic multi-member Hazelcast logs from random walks of the reference implementation.

`simulate` writes one log file per member, in the rolling-file layout of the distribution
(``%d [%5p] [%t] [%c{.1}]: %m%n``, §0; the §N here are the message families of
docs/validation.md, "The messages read") through `partsafe.traces.writer`, with the lines real
logs are mostly made of between the protocol lines: application requests, connection chatter,
health reports, heartbeats, stack traces, and near misses (lines with a keyword of the scanner
that are no protocol message). It can also inject, at random points, short sequences of protocol
lines that break one spec of `partsafe.checker.validation.local.LOG_SPECS` each, and records where
(the manifest).

How the protocol lines are made. The catalogue's models stop at 26 nodes (membership) and at 20
members and 16 partitions (the partition service), and a random walk costs about 2 ms a step at
those scopes, so a cluster of 20-30 members over hundreds of partitions and millions of events is
*composed*:

- The cluster's life is a sequence of **eras**. An era is one incarnation of the cluster: every
  member it involves logs ``is STARTING`` before its first line of the era and has a new UUID, so
  that each era is judged on its own (the monitors forget a restarted member; a master is told
  apart from its other incarnations by its UUID, design 002).
- An era starts with a walk of the **membership** model (design 002, versioned member lists, joins,
  a crash, a false suspicion, mastership claims) at up to 26 nodes, its node names ``A``, ``B``,
  ... renamed onto a random permutation of the cluster's members (a random subset of 26 when the
  cluster is larger; the others only log noise in that era). A new master's claim is followed by
  its partition-table fetch (§7).
- Then a walk of the **parallel** partition model (design 003: 4.1 parallel migrations with
  per-partition versions, graceful shutdown of 004) on the members that hold the master's final
  list: the master and up to 5 others, at up to 16 partitions renamed onto a random sample of the
  cluster's partitions. Its membership is the abstraction of the partition service (legacy lists,
  every member removing on its own) and is not written; what a log shows of it is: repartitioning
  (§9), the master's ``Starting/Finished Migration`` (§9), completed migrations applied with their
  partition versions (§8, derived from the tables members apply), shutdown requests handled by
  the master (§11, derived from its state), the migration statistics at the end of each rebalance
  and while it runs (§9, derived from the master's queues), ``is SHUTTING_DOWN`` / ``is
  SHUTDOWN`` (§11). A member that leaves is removed by the master, which publishes the next
  member list to the others (002 Membership Update Process).
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

The modules, in the order a run uses them:

- `walk`: random walks of a model of the catalogue, in a canonical order of successors;
- `scripts`: what members log of a membership or partition walk, and the pool of walks;
- `names`: member addresses, file and instance names, the renaming of a walk onto the cluster;
- `noise`: the non-protocol lines, pre-rendered per member;
- `cluster`: one run (`Simulation`): eras, files, clock, noise budget, the shadow state;
- `inject`: the injectors, one per spec a log can show (`INJECTORS`);
- `manifest`: what a run wrote (`Manifest`, ``.manifest.json``);
- `run`: the entry points `simulate` and `generate`.
"""

from __future__ import annotations

from partsafe.checker.validation.simulate.inject import INJECTORS, Injector
from partsafe.checker.validation.simulate.manifest import (
    MANIFEST_NAME,
    FileStats,
    Injection,
    Manifest,
    Record,
)
from partsafe.checker.validation.simulate.names import address, file_name
from partsafe.checker.validation.simulate.run import MAX_MEMBERS, generate, simulate
from partsafe.checker.validation.simulate.scripts import POOL, membership_scope, partition_scope
from partsafe.checker.validation.simulate.walk import walk

__all__ = [
    "INJECTORS",
    "MANIFEST_NAME",
    "MAX_MEMBERS",
    "POOL",
    "FileStats",
    "Injection",
    "Injector",
    "Manifest",
    "Record",
    "address",
    "file_name",
    "generate",
    "membership_scope",
    "partition_scope",
    "simulate",
    "walk",
]

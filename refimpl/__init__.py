"""The reference implementation: each protocol as deterministic node handlers,
``(node state, input) -> Step(node state', messages sent, events)``.

Public API (each name is loaded on first use):

- `Protocol`, `Step`, `message`: the handler interface every protocol implements; `Channels`
  and `Timing`: what a protocol declares of its network and its timers' lengths; `Suspicion`,
  `SystemView`: a failure detector's verdicts and what it sees; `HeartbeatProtocol`: the heartbeat
  failure detector of 002 the protocols share;
- `Variant`: one row of a protocol's ``VARIANT_TABLE`` (a historical flaw or a mutant);
- `Membership` (Hazelcast 3.9, design 002), `PartitionService` (Hazelcast 3.7 and 4.1, designs
  000, 003, 004), `IgniteRebalance` (Apache Ignite 3, design 001): the protocols;
- `plan`, `Plan`, `Decision`: Hazelcast's migration planner (000 §3);
- `PartitionTable`: the master's partition table (000 §1, 003 §1); `repartition`: the target table.

This package imports nothing of `partsafe.checker`.
"""

from partsafe._api import lazy_api

_API = {
    "Protocol": "actor", "Step": "actor", "message": "actor", "Channels": "actor",
    "Timing": "actor", "Suspicion": "actor", "SystemView": "actor",
    "HeartbeatProtocol": "failure_detector",
    "Variant": "variants",
    "Membership": "membership", "PartitionService": "partition_service",
    "IgniteRebalance": "ignite",
    "plan": "planner", "Plan": "planner", "Decision": "planner",
    "PartitionTable": "partition_table", "repartition": "repartition",
}
__all__ = sorted(_API)
__getattr__ = lazy_api(__name__, _API)

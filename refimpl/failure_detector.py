"""The heartbeat failure detector the protocols run under (002 "Member Suspicion & Removal").

Each node watches some members (`HeartbeatProtocol.monitored`) and sends heartbeats to some
(`Protocol.heartbeat_targets`). The detector is part of the environment, and its rule is a
statement about time that the small-scope models make explicit: a node may suspect a watched
member at any time

- if that member crashed, or
- if that member sends the node no heartbeats (it is dormant, or does not count the node among its
  heartbeat targets) although no message to it is in flight: heartbeat timeouts are long next to
  message delays, so a member that is about to learn of the node is not yet suspected. Where a
  node's messages count as heartbeats (`messages_are_heartbeats`), a member with a message to
  the node in flight is not suspected either.

Such a suspicion is justified (progress); any other suspicion of a watched member is a false one,
drawn from the `suspicions` fault budget.

Hazelcast's membership (002) suspects and removes members this way; its partition service sees a
perfect detector (every live member heartbeats every other); Ignite 3's raft nodes time out on a
leader that stops sending (JRaft's election timeout, 001).
"""

from __future__ import annotations

from collections.abc import Hashable, Iterable, Iterator
from functools import cache

from partsafe.refimpl.actor import NodeId, Protocol, Suspicion, SystemView

CRASHED = "crashed"
NO_HEARTBEAT = "no heartbeat"
FALSE = "false suspicion"
#: one `Suspicion` object per (suspect, reason, justified): a search asks for them millions of
#: times, and there are only three for each node
_verdict = cache(Suspicion)


class HeartbeatProtocol(Protocol):
    """A protocol whose nodes watch each other through heartbeats: `suspicions` by the rule of
    this module, from `monitored` and `heartbeat_targets`."""

    #: True if a node's messages count as heartbeats: no node suspects q for missing heartbeats
    #: while q's messages to it are in flight (a member that leaves gracefully flushes its
    #: connections first)
    messages_are_heartbeats: bool = False

    def monitored(self, node: NodeId, state: Hashable) -> Iterable[NodeId]:
        """Members whose failure `node`'s failure detector may report now (not yet suspected)."""
        return ()

    def suspicions(self, node: NodeId, state: Hashable,
                   system: SystemView) -> Iterator[Suspicion]:
        """One suspicion of each member `node` watches, in `monitored` order: justified if it
        crashed or sends `node` no heartbeats while no message to it is in flight, else false."""
        call = system.call
        targets = self.heartbeat_targets
        for q in call(self.monitored, node, state):
            if system.crashed(q):
                yield _verdict(q, CRASHED, True)
            elif not system.in_flight_to(q) and not (
                    self.messages_are_heartbeats and system.in_flight_between(q, node)) and (
                    (qst := system.state(q)) is None or node not in call(targets, q, qst)):
                yield _verdict(q, NO_HEARTBEAT, True)
            else:
                yield _verdict(q, FALSE, False)

"""The network of the actor layer: the messages in flight, and what may become of them.

Two semantics, as Stateright's networks, chosen by the protocol (`Channels.fifo`):

- `Unordered`: a multiset of messages, stored as a frozenset of ``(src, dst, msg, copy)`` (copy 0,
  1, ... numbers equal messages in flight between the same nodes), so every delivery order is
  explored;
- `Fifo`: ordered channels (TCP connections), a frozenset of ``(src, dst, messages)`` with one
  entry per pair of nodes that has a message in flight. The head of a channel is delivered; a
  later message overtaking it is a fault, a reorder.

Both offer the same operations: whether a message is in flight, sending one, the messages in
flight, losing those to a node (a crash or restart: messages to the node vanish with it, messages
from it stay in flight), discarding those a receiver will ignore for ever (`Channels.dead`), and
`moves`: what the network may do next, a delivery (progress) or a loss, a duplication or a
reorder (faults, which the caller draws from their budgets). A message the protocol declares
reliable (`Channels.reliable`) is only ever delivered, and in order.

States share their networks; every operation returns a new frozenset and changes none.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Iterator
from typing import TYPE_CHECKING, Any

from partsafe.checker.actor.faults import CRASHED

if TYPE_CHECKING:
    from partsafe.checker.actor.model import ActorModel, World

NodeId = str
#: the messages in flight, in the representation of one of the semantics below
Network = frozenset[Any]
#: what the network may do next: (kind, src, dst, msg, the network after), kind one of these
DELIVER, DROP, DUPLICATE, REORDER = "deliver", "drop", "duplicate", "reorder"
Move = tuple[str, NodeId, NodeId, Hashable, Network]
#: reliable(src, dst, msg), or None when no message is reliable
Reliable = Callable[[NodeId, NodeId, Hashable], bool] | None


def without_messages_to(network: Network, node: NodeId) -> Network:
    """`network` without the messages to `node` (in both semantics an entry's second field is its
    receiver)."""
    return frozenset(e for e in network if e[1] != node)


class Unordered:
    """A multiset of messages: any message in flight may be delivered next."""

    fifo = False

    @staticmethod
    def in_flight(network: Network, src: NodeId, dst: NodeId, msg: Hashable) -> bool:
        return (src, dst, msg, 0) in network

    @staticmethod
    def add(network: Network, src: NodeId, dst: NodeId, msg: Hashable) -> Network:
        """`network` with one more copy of `msg`."""
        copy = 0
        while (src, dst, msg, copy) in network:
            copy += 1
        return network | {(src, dst, msg, copy)}

    @staticmethod
    def remove(network: Network, src: NodeId, dst: NodeId, msg: Hashable) -> Network:
        """`network` with one copy of `msg` fewer (the last one, so copies stay numbered 0..)."""
        copy = 0
        while (src, dst, msg, copy + 1) in network:
            copy += 1
        return network - {(src, dst, msg, copy)}

    @staticmethod
    def messages(network: Network) -> Iterator[tuple[NodeId, NodeId, Hashable]]:
        """Every message in flight (each copy)."""
        return ((src, dst, m) for src, dst, m, _ in network)

    @staticmethod
    def discard(network: Network, node: NodeId,
                dead: Callable[[NodeId, Hashable], bool]) -> Network:
        """`network` without the messages to `node` that `dead(src, msg)` claims."""
        gone = [e for e in network if e[1] == node and dead(e[0], e[2])]
        return network.difference(gone) if gone else network

    @staticmethod
    def moves(network: Network, reliable: Reliable, losses: bool, duplications: bool,
              reorders: bool) -> Iterator[Move]:
        """For each message (one of equal copies): its delivery, then, unless it is reliable,
        its loss and its duplication if their budgets allow. (Every message is deliverable, so
        nothing is a reorder.)"""
        remove, add = Unordered.remove, Unordered.add
        for src, dst, msg, copy in network:
            if copy:
                continue
            rest = remove(network, src, dst, msg)
            yield DELIVER, src, dst, msg, rest
            if reliable is not None and reliable(src, dst, msg):
                continue
            if losses:
                yield DROP, src, dst, msg, rest
            if duplications:
                yield DUPLICATE, src, dst, msg, add(network, src, dst, msg)

    @staticmethod
    def describe(network: Network, describe: Callable[[Hashable], str]) -> list[str]:
        return sorted(f"{describe(m)} {s}→{d}" for s, d, m, _ in network)


class Fifo:
    """Ordered channels: the head of each channel may be delivered next; a later message only as
    a reorder."""

    fifo = True

    @staticmethod
    def in_flight(network: Network, src: NodeId, dst: NodeId, msg: Hashable) -> bool:
        return any(s == src and d == dst and msg in msgs for s, d, msgs in network)

    @staticmethod
    def add(network: Network, src: NodeId, dst: NodeId, msg: Hashable) -> Network:
        """`network` with `msg` appended to the channel from `src` to `dst`."""
        for entry in network:
            if entry[0] == src and entry[1] == dst:
                return (network - {entry}) | {(src, dst, (*entry[2], msg))}
        return network | {(src, dst, (msg,))}

    @staticmethod
    def take(network: Network, entry: tuple[NodeId, NodeId, tuple[Hashable, ...]],
             i: int) -> Network:
        """`network` without the `i`-th message of its channel `entry`."""
        src, dst, msgs = entry
        left = msgs[:i] + msgs[i + 1:]
        rest = network - {entry}
        return rest | {(src, dst, left)} if left else rest

    @staticmethod
    def messages(network: Network) -> Iterator[tuple[NodeId, NodeId, Hashable]]:
        """Every message in flight, each channel's in order."""
        return ((src, dst, m) for src, dst, msgs in network for m in msgs)

    @staticmethod
    def discard(network: Network, node: NodeId,
                dead: Callable[[NodeId, Hashable], bool]) -> Network:
        """`network` without the messages to `node` that `dead(src, msg)` claims."""
        for entry in [e for e in network if e[1] == node]:
            src = entry[0]
            kept = tuple(m for m in entry[2] if not dead(src, m))
            if len(kept) != len(entry[2]):
                network = network - {entry}
                if kept:
                    network = network | {(src, node, kept)}
        return network

    @staticmethod
    def moves(network: Network, reliable: Reliable, losses: bool, duplications: bool,
              reorders: bool) -> Iterator[Move]:
        """For each channel, for each message in it (the first of equal ones): its delivery if it
        is the head, or its reorder if the budget allows; then, unless the channel is reliable,
        its loss and its duplication (appended) if their budgets allow. A reliable channel
        delivers its head only."""
        take, add = Fifo.take, Fifo.add
        for entry in network:
            src, dst, msgs = entry
            safe = reliable is not None and reliable(src, dst, msgs[0])
            for i, msg in enumerate(msgs):
                if msg in msgs[:i]:
                    continue  # the same message earlier in the channel: the same moves
                if safe and i:
                    break
                if i == 0 or reorders:
                    yield DELIVER if i == 0 else REORDER, src, dst, msg, take(network, entry, i)
                if safe:
                    continue
                if losses:
                    yield DROP, src, dst, msg, take(network, entry, i)
                if duplications:
                    yield DUPLICATE, src, dst, msg, add(network, src, dst, msg)

    @staticmethod
    def describe(network: Network, describe: Callable[[Hashable], str]) -> list[str]:
        return sorted(f"{s}→{d}: " + ", ".join(describe(m) for m in msgs)
                      for s, d, msgs in network)


Semantics = type[Unordered] | type[Fifo]


def semantics(fifo: bool) -> Semantics:
    """The network of a protocol whose `Channels.fifo` is `fifo`."""
    return Fifo if fifo else Unordered


def receivers(network: Network) -> set[NodeId]:
    """The nodes some message in flight is addressed to."""
    return {e[1] for e in network}


def senders_and_receivers(network: Network) -> set[NodeId]:
    """The nodes some message in flight is from or to."""
    return {e[1] for e in network} | {e[0] for e in network}


def channels(network: Network) -> set[tuple[NodeId, NodeId]]:
    """The (src, dst) pairs with a message in flight."""
    return {(e[0], e[1]) for e in network}


def dead_claim_errors(model: ActorModel, limit: int = 10) -> list[str]:
    """Check the protocol's `Channels.dead` claims, which `discard` relies on, over every
    reachable state of `model` explored without discarding: each message claimed dead must be a
    no-op at its receiver, and stay claimed after every change of the receiver's state. Up to
    `limit` counterexamples, described."""
    p = model.protocol
    dead = p.channels.dead
    if dead is None:
        return []  # nothing is claimed
    full = model.keeping_every_message()
    errors: list[str] = []
    seen = set(full.init_states())
    frontier = list(seen)
    while frontier and len(errors) < limit:
        nxt: list[World] = []
        for world in frontier:
            succ = full.successors(world)
            for src, dst, msg in full.net.messages(world.network):
                st = world.nodes[full.index[dst]]
                if st is None or st is CRASHED or not dead(dst, st, src, msg):
                    continue
                step = p.on_message(dst, st, src, msg)
                if step.state != st or step.sends or step.events:
                    errors.append(f"{p.describe_message(msg)} {src}→{dst} is claimed dead but "
                                  f"its delivery {step}")
                for action, after in succ:
                    st2 = after.nodes[full.index[dst]]
                    if st2 is not CRASHED and st2 != st and not dead(dst, st2, src, msg):
                        errors.append(f"{p.describe_message(msg)} {src}→{dst} is claimed dead "
                                      f"but not after {action[0]} {action[1:]}")
            for _, after in succ:
                if after not in seen:
                    seen.add(after)
                    nxt.append(after)
        frontier = nxt
    return errors[:limit]

"""Node handlers: how a protocol of the reference implementation is written.

A protocol is a set of deterministic, side-effect-free handlers over immutable node states
(DESIGN.md, refimpl/): ``(node state, input) -> Step(node state', messages sent, events)``. Inputs
are messages, timers and the environment's inputs: a join starting a dormant node, the failure
detector suspecting a member, a heartbeat arriving. No threads, no clocks, no randomness, and no
knowledge of how the handlers are composed: the checker's actor layer turns a `Protocol` plus a
network and fault budgets into a transition system, and a test can call the handlers directly.

Node identities are the node names (`Protocol.nodes`, in age order), so renaming them can be a
symmetry; messages and node
states must be hashable. Failure detection follows 002 ("Member Suspicion & Removal"): a node
watches some members (`monitored`) and sends heartbeats to some (`heartbeat_targets`); the
environment may deliver a suspicion of a watched member, and heartbeats from members that send them.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Hashable, Iterable
from dataclasses import dataclass

from partsafe.traces.events import Event

NodeId = str
Send = tuple[NodeId, Hashable]


@dataclass(frozen=True, slots=True)
class Step:
    """The outcome of one handler call: the new node state, messages to send, events observed."""

    state: Hashable
    sends: tuple[Send, ...] = ()
    events: tuple[Event, ...] = ()


class Protocol(ABC):
    """A protocol as node handlers. Subclasses set `name`, `variant` and `nodes`."""

    name: str
    variant: str = "fixed"
    #: every node, oldest first; dormant nodes (joiners) last
    nodes: tuple[NodeId, ...]
    #: sets of names that play the same role (joiners that have not started; any identity written
    #: as a string, such as a partition id "P0"): renaming within one set maps reachable states to
    #: reachable states, a symmetry the checker may use
    interchangeable: tuple[frozenset[NodeId], ...] = ()

    @abstractmethod
    def initial(self, node: NodeId) -> Hashable | None:
        """The initial state of `node`, or None if it is dormant until a join starts it."""

    def initial_events(self, node: NodeId, state: Hashable) -> tuple[Event, ...]:
        """What `node` has observed before the first step (the member list it starts with), so
        that monitors start from the same knowledge as the nodes."""
        return ()

    def on_join(self, node: NodeId) -> Step:
        """A dormant node starts and asks to join."""
        raise NotImplementedError(f"{self.name} has no joins")

    @abstractmethod
    def on_message(self, node: NodeId, state: Hashable, src: NodeId, msg: Hashable) -> Step:
        """`node` handles `msg` from `src`."""

    def timers(self, node: NodeId, state: Hashable) -> Iterable[Hashable]:
        """The timers that may fire in `state` (periodic tasks, retries)."""
        return ()

    def on_timer(self, node: NodeId, state: Hashable, timer: Hashable) -> Step:
        raise NotImplementedError(f"{self.name} has no timers")

    def is_timeout(self, timer: Hashable) -> bool:
        """True for a timer that fires when an answer is overdue (not a periodic task): it is
        long next to message delays, so it fires only once no message to or from its node is in
        flight."""
        return False

    # -- failure detection ----------------------------------------------------------------------

    def monitored(self, node: NodeId, state: Hashable) -> Iterable[NodeId]:
        """Members whose failure `node`'s failure detector may report now (not yet suspected)."""
        return ()

    def heartbeat_targets(self, node: NodeId, state: Hashable) -> frozenset[NodeId]:
        """Members `node` sends heartbeats to; a member that gets none may justly be suspected."""
        return frozenset()

    def on_suspect(self, node: NodeId, state: Hashable, suspect: NodeId, reason: str) -> Step:
        """`node`'s failure detector suspects `suspect` (reason: crashed, no-heartbeat, false)."""
        raise NotImplementedError(f"{self.name} has no failure detector")

    def on_heartbeat(self, node: NodeId, state: Hashable, sender: NodeId) -> Step:
        """A heartbeat from `sender` reaches `node`."""
        return Step(state)

    # -- presentation ---------------------------------------------------------------------------

    def describe(self, node: NodeId, state: Hashable) -> object:
        """A JSON-able view of a node state."""
        return repr(state)

    def describe_message(self, msg: Hashable) -> str:
        return repr(msg)

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
from typing import TypeVar

from partsafe.traces.events import Event

NodeId = str
Send = tuple[NodeId, Hashable]
M = TypeVar("M", bound=type)


def message(cls: M) -> M:
    """Make a NamedTuple message class compare and hash by its class as well as its fields.

    Tuples of equal fields are equal whatever their class: without this, two different messages
    with no fields (or equal ones) in flight between the same nodes would be one message to the
    network.
    """

    def __eq__(self: tuple[object, ...], other: object) -> bool:
        return type(self) is type(other) and tuple.__eq__(self, other)  # type: ignore[arg-type]

    def __ne__(self: tuple[object, ...], other: object) -> bool:
        return not __eq__(self, other)

    def __hash__(self: tuple[object, ...]) -> int:
        return hash((cls.__name__, tuple.__hash__(self)))

    cls.__eq__ = __eq__  # type: ignore[method-assign]
    cls.__ne__ = __ne__  # type: ignore[method-assign]
    cls.__hash__ = __hash__  # type: ignore[method-assign]
    return cls


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

    def is_dead(self, node: NodeId, state: Hashable, src: NodeId, msg: Hashable) -> bool:
        """True if `msg` from `src` can never again make a difference at `node`: delivered now,
        or in any state `node` reaches later, it changes nothing, sends nothing and emits no
        event. The claim must hold of `state` and of every later state of `node` (a test checks
        both over the reachable states of the checked scopes). A network may then discard the
        message at once: its delivery would be a stutter step. The default claims nothing."""
        return False

    def timers(self, node: NodeId, state: Hashable) -> Iterable[Hashable]:
        """The timers that may fire in `state` (periodic tasks, retries)."""
        return ()

    def on_timer(self, node: NodeId, state: Hashable, timer: Hashable) -> Step:
        raise NotImplementedError(f"{self.name} has no timers")

    #: True if messages between two nodes arrive in the order sent (TCP connections); a message
    #: overtaking another is then a fault on a budget
    fifo: bool = False
    #: True if a timeout waits until no message at all is in flight, not only none to or from
    #: its node, and until no failure detector has a justified suspicion left to report: for
    #: answers that travel through third nodes (a request relayed to another member) and
    #: operation timeouts longer than failure detection
    timeouts_wait_for_network: bool = False
    #: True if a node's messages count as heartbeats: no node suspects q for missing heartbeats
    #: while q's messages to it are in flight (a member that leaves gracefully flushes its
    #: connections first)
    messages_are_heartbeats: bool = False

    def is_prompt(self, timer: Hashable) -> bool:
        """True for a periodic retry whose period is short next to every timeout (Hazelcast's
        shutdown request, resent every second, against a migration pause of 3 to 6 s): under
        `timeouts_wait_for_network`, no timeout fires while such a retry would take effect."""
        return False

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

    # -- user requests --------------------------------------------------------------------------

    def on_shutdown(self, node: NodeId, state: Hashable) -> Step | None:
        """A user asks `node` to shut down gracefully (004); None if it cannot be asked now."""
        return None

    # -- restarts and administrative requests -----------------------------------------------------

    def on_restart(self, node: NodeId, state: Hashable) -> Step | None:
        """`node` stops and starts again at once, losing what it keeps in memory (its connections
        too: messages in flight to it are lost); None if it cannot restart."""
        return None

    def admin_requests(self, node: NodeId, state: Hashable) -> Iterable[Hashable]:
        """Administrative requests an operator may make at `node` now (a baseline change)."""
        return ()

    def on_admin(self, node: NodeId, state: Hashable, request: Hashable) -> Step:
        """The step of `request`, one of `admin_requests`; only a protocol that offers requests
        is ever asked, so the default (which offers none) refuses."""
        raise NotImplementedError(f"{self.name} has no administrative requests")

    def is_reliable(self, src: NodeId, dst: NodeId, msg: Hashable) -> bool:
        """True for a message the network never loses, duplicates or reorders (a replicated
        service's own protocol, abstracted as one linearizable node)."""
        return False

    # -- presentation ---------------------------------------------------------------------------

    def describe(self, node: NodeId, state: Hashable) -> object:
        """A JSON-able view of a node state."""
        return repr(state)

    def describe_message(self, msg: Hashable) -> str:
        return repr(msg)

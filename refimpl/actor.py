"""Node handlers: how a protocol of the reference implementation is written.

A protocol is a set of deterministic, side-effect-free handlers over immutable node states:
``(node state, input) -> Step(node state', messages sent, events)``. Inputs are messages, timers
and the environment's inputs: a join starting a dormant node, a crash, a graceful shutdown or
restart request, an operator's request, the failure detector suspecting a member, a heartbeat
arriving. No threads, no clocks, no randomness, and no knowledge of how the handlers are composed:
the checker's actor layer (`partsafe.checker.actor`) turns a `Protocol` plus a network and fault
budgets into a transition system, and a test can call the handlers directly.

Node identities are the node names (`Protocol.nodes`, in age order), so renaming them can be a
symmetry; messages and node states must be hashable.

What is not behaviour is declared apart, with defaults, so that a protocol states only what
differs: how the network carries its messages (`Channels`: ordered or not, reliable or not,
which messages are dead) and how long its timers are next to message delays (`Timing`). Failure
detection is the protocol's own rule (`Protocol.suspicions`), written over a `SystemView` of the
whole system; refimpl/failure_detector.py holds the heartbeat detector the Hazelcast and Ignite
protocols share.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable, Hashable, Iterable
from dataclasses import dataclass
from typing import Any, NamedTuple, TypeVar

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


# --- what is not behaviour: the network and the timers' lengths ---------------------------------


@dataclass(frozen=True)
class Channels:
    """How the network carries a protocol's messages (the actor layer's checker/actor/network.py).
    None of it changes what a node does with a message it receives."""

    #: messages between two nodes arrive in the order sent (TCP connections); a message
    #: overtaking another is then a fault on the `reorders` budget. False: every order is explored
    fifo: bool = False
    #: ``reliable(src, dst, msg)``: the network never loses, duplicates or reorders this message (a
    #: replicated service's own protocol, abstracted as one linearizable node); None: none is
    reliable: Callable[[NodeId, NodeId, Hashable], bool] | None = None
    #: ``dead(node, state, src, msg)``: True if `msg` from `src` can never again make a difference
    #: at `node`: delivered now, or in any state `node` reaches later, it changes nothing, sends
    #: nothing and emits no event. The claim must hold of `state` and of every later state of
    #: `node` (`dead_claim_errors` of the actor layer checks both over the reachable states of a
    #: search). The network then discards the message at once: its delivery would be a stutter
    #: step. None: no message is claimed dead
    dead: Callable[[NodeId, Hashable, NodeId, Hashable], bool] | None = None
    #: ``idempotent(msg)``: a copy of `msg` sent while one is already in flight between the same
    #: nodes adds nothing (the receiver acts once on what it asks, whatever the copies): the
    #: network keeps one. A request sent again each heartbeat while the first is on its way
    #: would otherwise fill the network for ever. None: every copy counts
    idempotent: Callable[[Hashable], bool] | None = None


@dataclass(frozen=True)
class Timing:
    """How long a protocol's timers are next to message delays and failure detection: the
    interleavings in which a timer fires too early to be real are left out (the actor layer's
    timer rule, checker/actor/model.py). None of it changes what a timer does when it fires."""

    #: ``timeout(timer)``: a timer that fires when an answer is overdue (not a periodic task): it
    #: is long next to message delays, so it fires only once no message to or from its node is
    #: in flight; an earlier one is the same as a false suspicion, which the budget covers.
    #: None: no timer is a timeout
    timeout: Callable[[Hashable], bool] | None = None
    #: True if a timeout waits until no message at all is in flight, not only none to or from its
    #: node, and until no failure detector has a justified suspicion left to report: for answers
    #: that travel through third nodes (a request relayed to another member) and operation
    #: timeouts longer than failure detection
    wait_for_network: bool = False
    #: ``prompt(timer)``: a periodic retry whose period is short next to every timeout (Hazelcast's
    #: shutdown request, resent every second, against a migration pause of 3 to 6 s): under
    #: `wait_for_network`, no timeout fires while such a retry would take effect. None: none is
    prompt: Callable[[Hashable], bool] | None = None


# --- failure detection ---------------------------------------------------------------------------


class Suspicion(NamedTuple):
    """A failure detector's verdict that a node could report now (`Protocol.suspicions`)."""

    suspect: NodeId
    #: passed to `Protocol.on_suspect` (and so into the events it emits)
    reason: str
    #: True: the environment would report it (progress); False: a false suspicion, drawn from the
    #: `suspicions` fault budget
    justified: bool


class SystemView(ABC):
    """What a failure detector sees of the whole system in one global state: the other nodes'
    states and the messages in flight. The actor layer gives one to `Protocol.suspicions`."""

    __slots__ = ()

    @abstractmethod
    def state(self, node: NodeId) -> Hashable | None:
        """`node`'s state; None if it is dormant or crashed."""

    @abstractmethod
    def crashed(self, node: NodeId) -> bool:
        """True if `node` crashed."""

    @abstractmethod
    def in_flight_to(self, node: NodeId) -> bool:
        """True if some message to `node` is in flight."""

    @abstractmethod
    def in_flight_between(self, src: NodeId, dst: NodeId) -> bool:
        """True if some message from `src` to `dst` is in flight."""

    @abstractmethod
    def call(self, handler: Callable[..., Any], *args: Any) -> Any:
        """``handler(*args)`` for a pure handler of the protocol, computed once and shared with
        the other global states that ask (the memo is keyed by the handler's name)."""


# --- the protocol ---------------------------------------------------------------------------------


class Protocol(ABC):
    """A protocol as node handlers. Subclasses set `name`, `variant` and `nodes`, and implement
    `initial` and `on_message`; every other hook has a default meaning "the protocol has none"."""

    name: str
    variant: str = "fixed"
    #: every node, oldest first; dormant nodes (joiners) last
    nodes: tuple[NodeId, ...]
    #: sets of names that play the same role (joiners that have not started; any identity written
    #: as a string, such as a partition id "P0"): renaming within one set maps reachable states to
    #: reachable states, a symmetry the checker may use
    interchangeable: tuple[frozenset[NodeId], ...] = ()
    #: how the network carries the messages (default: unordered, none reliable, none dead)
    channels: Channels = Channels()
    #: how long the timers are (default: none is a timeout)
    timing: Timing = Timing()

    # -- node handlers --------------------------------------------------------------------------

    @abstractmethod
    def initial(self, node: NodeId) -> Hashable | None:
        """The initial state of `node`, or None if it is dormant until a join starts it."""

    def initial_events(self, node: NodeId, state: Hashable) -> tuple[Event, ...]:
        """What `node` has observed before the first step (the member list it starts with), so
        that monitors start from the same knowledge as the nodes."""
        return ()

    @abstractmethod
    def on_message(self, node: NodeId, state: Hashable, src: NodeId, msg: Hashable) -> Step:
        """`node` handles `msg` from `src`."""

    def timers(self, node: NodeId, state: Hashable) -> Iterable[Hashable]:
        """The timers that may fire in `state` (periodic tasks, retries, timeouts: `timing`)."""
        return ()

    def on_timer(self, node: NodeId, state: Hashable, timer: Hashable) -> Step:
        """`timer`, one of `timers`, fires at `node`."""
        raise NotImplementedError(f"{self.name} has no timers")

    # -- the environment's inputs, each drawn from its fault budget ---------------------------

    def on_join(self, node: NodeId) -> Step:
        """A dormant node starts and asks to join (002 Membership Update Process)."""
        raise NotImplementedError(f"{self.name} has no joins")

    def on_crash(self, node: NodeId, state: Hashable) -> tuple[Event, ...]:
        """What is observed when `node`, in `state`, crashes (crash-stop: it does nothing more,
        and the messages in flight to it are lost), for the monitors: Hazelcast's members see
        a member crash (002 Member Suspicion & Removal). The default: nothing."""
        return ()

    def on_shutdown(self, node: NodeId, state: Hashable) -> Step | None:
        """A user asks `node` to shut down gracefully (004); None if it cannot be asked now."""
        return None

    def on_restart(self, node: NodeId, state: Hashable) -> Step | None:
        """`node` stops and starts again at once, losing what it keeps in memory (its connections
        too: messages in flight to it are lost); None if it cannot restart (001 "On in-memory
        partition restart")."""
        return None

    def admin_requests(self, node: NodeId, state: Hashable) -> Iterable[Hashable]:
        """Administrative requests an operator may make at `node` now (001: a baseline
        change)."""
        return ()

    def on_admin(self, node: NodeId, state: Hashable, request: Hashable) -> Step:
        """The step of `request`, one of `admin_requests`; only a protocol that offers requests
        is ever asked, so the default (which offers none) refuses."""
        raise NotImplementedError(f"{self.name} has no administrative requests")

    # -- failure detection ----------------------------------------------------------------------

    def suspicions(self, node: NodeId, state: Hashable,
                   system: SystemView) -> Iterable[Suspicion]:
        """The suspicions `node`'s failure detector could report now, in the global state
        `system` shows, each justified or false (002 Member Suspicion & Removal; the heartbeat
        detector of refimpl/failure_detector.py). The default: no failure detector."""
        return ()

    def on_suspect(self, node: NodeId, state: Hashable, suspect: NodeId, reason: str) -> Step:
        """`node`'s failure detector suspects `suspect`, for `reason` (one of `suspicions`)."""
        raise NotImplementedError(f"{self.name} has no failure detector")

    def heartbeat_targets(self, node: NodeId, state: Hashable) -> frozenset[NodeId]:
        """Members `node` sends heartbeats to (002 Member Suspicion & Removal); a heartbeat
        reaches one whenever it would change something there (`on_heartbeat`)."""
        return frozenset()

    def heartbeat_view(self, node: NodeId, state: Hashable) -> Hashable:
        """What a heartbeat from `node` in `state` carries besides its sender (Hazelcast's
        ``MembersViewMetadata``: the sender's master and list version); None by default."""
        return None

    def on_heartbeat(self, node: NodeId, state: Hashable, sender: NodeId,
                     view: Hashable = None) -> Step:
        """A heartbeat from `sender` reaches `node` (002 Removing Suspicion), carrying `view`
        (`heartbeat_view` of the sender)."""
        return Step(state)

    # -- presentation ---------------------------------------------------------------------------

    def describe(self, node: NodeId, state: Hashable) -> object:
        """A JSON-able view of a node state."""
        return repr(state)

    def describe_message(self, msg: Hashable) -> str:
        """A message as shown in a trace."""
        return repr(msg)

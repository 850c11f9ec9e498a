"""The actor layer: a protocol's node handlers, a network and fault budgets, as one `Model`.

A `refimpl.actor.Protocol` gives deterministic node handlers; this layer composes them into a
global transition system the explorer can search, in the manner of Stateright's actor models. It
knows nodes, messages, timers, the network and fault budgets, and nothing of any protocol:

- a global state (`World`) is the node states (None: dormant, `CRASHED`: crashed), the messages in
  flight (network.py: a multiset, or FIFO channels under `Channels.fifo`), the budgets left
  (faults.py), the monitor states and the violations raised so far;
- the environment acts within the budgets: crashes (what they show the monitors is the
  protocol's `on_crash`), joins, false suspicions, message losses, duplications and reorders,
  extra firings of periodic timers (see below), shutdown requests, restarts, operator requests;
- failure detection is the protocol's rule (`Protocol.suspicions`, over a `SystemView` of the
  global state): a suspicion it offers is progress if justified, a fault on the `suspicions`
  budget if not. A heartbeat reaches a node whenever it would change something there;
- spec monitors run inside the global state: every event a step emits is fed to them, and a
  violation they raise is a property violation of the state reached;
- interchangeable names are a symmetry (symmetry.py).

A timeout (`Timing.timeout`) fires only once no message to or from its node is in flight (or,
under `Timing.wait_for_network`, once no message at all is in flight, no failure detector has a
justified suspicion left to report, and no prompt retry (`Timing.prompt`) would take effect):
an early timeout is the same as a false suspicion, which the budget covers.

A message its receiver will ignore for ever (`Channels.dead`) is discarded when it is sent or
when its receiver changes: its delivery would be a stutter step (`network.dead_claim_errors`
checks the claims over a search that keeps every message).

A periodic timer that changes nothing at its node (the periodic member-list publish) is progress
only for the messages that would take effect at their receiver right now (change its state or make
it send): those are sent, the others are not (as if lost: none of them would do anything on
arrival unless the receiver changed meanwhile). A periodic message sent to take effect later, a
race with newer updates, is sent to one receiver at a time and draws on the `publishes` budget.
Without these rules such timers would fill the network for ever.

Action kinds: deliver, timer, suspect, heartbeat (progress) and crash, join, false-suspect, drop,
duplicate, timer-race, shutdown, reorder, restart, admin (faults). A state is quiescent when only
faults are enabled.
"""
from __future__ import annotations

from collections.abc import Callable, Hashable, Iterable, Sequence
from copy import copy as shallow_copy
from dataclasses import asdict
from typing import Any, NamedTuple

from partsafe.checker.actor import network as net
from partsafe.checker.actor.faults import (
    ADMIN,
    CRASH,
    CRASHED,
    DUPLICATION,
    FAULT_KINDS,
    JOIN,
    LOSS,
    OPTIONAL,
    PUBLISH,
    REORDER,
    RESTART,
    SHUTDOWN,
    SUSPICION,
    Budget,
    check_targets,
    left,
    spend,
)
from partsafe.checker.actor.symmetry import Symmetry
from partsafe.checker.engine.model import Action, Goal, Model, Property
from partsafe.refimpl.actor import NodeId, Protocol, Step, SystemView
from partsafe.specs.monitor import Monitor
from partsafe.traces.events import Event

ACTION_KINDS = ("deliver", "timer", "suspect", "heartbeat", *sorted(FAULT_KINDS))
DEADLOCK = "DEADLOCK"
#: entries a memo table may hold before it starts afresh: the memos, not the visited states, are
#: what a long search keeps in memory (each entry keeps node states and messages alive), and the
#: states of the next levels share mostly recent entries (Ignite, 2 restarts, to depth 24: 2M
#: entries 858 MB, 200k entries 736 MB at 2% more time, 50k 360 MB at 10% more)
MEMO_LIMIT = 200_000


class World(NamedTuple):
    """The global state: node states, in-flight messages, budgets left, monitor states, flags."""

    nodes: tuple[Hashable, ...]
    #: in the representation of the protocol's network semantics (checker/actor/network.py)
    network: frozenset[Any]
    budget: tuple[int, ...]
    monitors: tuple[Hashable, ...]
    #: violations raised by monitors so far: (spec, message)
    flags: tuple[tuple[str, str], ...]


class _View(SystemView):
    """A `SystemView` of one world, for the protocol's failure detector."""

    __slots__ = ("_call", "_index", "_network", "_nodes", "_pairs", "_receivers")

    def __init__(self, model: ActorModel, world: World) -> None:
        self._nodes = world.nodes
        self._network = world.network
        self._index = model.index
        self._call = model._call
        self._receivers: set[NodeId] | None = None
        self._pairs: set[tuple[NodeId, NodeId]] | None = None

    def state(self, node: NodeId) -> Hashable | None:
        st = self._nodes[self._index[node]]
        return None if st is CRASHED else st

    def crashed(self, node: NodeId) -> bool:
        return self._nodes[self._index[node]] is CRASHED

    def in_flight_to(self, node: NodeId) -> bool:
        if self._receivers is None:
            self._receivers = net.receivers(self._network)
        return node in self._receivers

    def in_flight_between(self, src: NodeId, dst: NodeId) -> bool:
        if self._pairs is None:
            self._pairs = net.channels(self._network)
        return (src, dst) in self._pairs

    def call(self, handler: Callable[..., Any], *args: Any) -> Any:
        return self._call(handler, *args)


class ActorModel(Model[World]):
    """A protocol's node handlers composed with a network, budgets and spec monitors."""

    def __init__(
        self,
        protocol: Protocol,
        budget: Budget,
        monitors: Sequence[Monitor],
        goals: Sequence[Goal[World]] = (),
        scope: dict[str, Any] | None = None,
        busy: Callable[[NodeId, Hashable], bool] | None = None,
        discard_dead: bool = True,
        canonical: Callable[[World], World] | None = None,
    ) -> None:
        self.protocol = protocol
        self.name = protocol.name
        self.variant = protocol.variant
        self.budget = budget
        self.monitors = tuple(monitors)
        self._goals = tuple(goals)
        # restarts and administrative requests show only in the scopes of models that have them
        self.scope = dict(scope or {}, **{k: v for k, v in asdict(budget).items()
                                          if v or k not in OPTIONAL})
        self._busy = busy
        #: discard a message once its receiver can never be changed by it (`Channels.dead`)
        self.discard_dead = discard_dead
        #: a world's canonical form, applied to every state the model makes: an abstraction the
        #: protocol is indifferent to (revision numbers compared only by order, kept as ranks)
        self._canonical = canonical
        self.names = protocol.nodes
        channels, timing = protocol.channels, protocol.timing
        #: the network semantics: FIFO channels or a multiset
        self.net = net.semantics(channels.fifo)
        self._in_flight = self.net.in_flight
        self._add = self.net.add
        self._reliable = channels.reliable
        self._dead = channels.dead
        self._idempotent = channels.idempotent
        self._timeout = timing.timeout
        self._prompt = timing.prompt
        self._wait_for_network = timing.wait_for_network
        self.index = {name: i for i, name in enumerate(self.names)}
        #: renamings of interchangeable names, for `representative`
        self._symmetry = Symmetry(protocol.interchangeable, self.names)
        #: hash-consing of state components: equal node states, networks and monitor states are
        #: stored once, so that a wide frontier costs pointers, not copies
        self._shared: dict[Hashable, Hashable] = {}
        self._observed: dict[tuple[int, Hashable, Event], tuple[Hashable, str | None]] = {}
        self._handled: dict[tuple[Any, ...], Any] = {}
        #: (monitor states, events) by identity -> (both, the monitor states after, flags raised):
        #: shared monitor states meet the events of memoised steps, the same objects, again and
        #: again, and comparing identities spares hashing either
        self._observed_by_id: dict[tuple[int, int], tuple[Any, Any, Any, Any]] = {}
        self._watchers: dict[str, list[tuple[int, Monitor]]] = {}
        #: per targeted fault kind, the nodes it may strike (`restrict`); absent: any node
        self.only: dict[str, frozenset[NodeId]] = {}
        #: does a heartbeat ever do anything? (the default handler changes nothing)
        self._heartbeats_act = type(protocol).on_heartbeat is not Protocol.on_heartbeat
        for i, m in enumerate(self.monitors):
            for kind in m.observes:
                self._watchers.setdefault(kind, []).append((i, m))

    def restrict(self, only: dict[str, frozenset[NodeId]]) -> None:
        """Let each fault kind of `only` (crash, join, shutdown, restart) strike only the nodes
        named for it: one part of a scope split into smaller searches.

        A run whose crash strikes node x and whose shutdown request comes from node y is a run
        of the part that allows x to crash and y to leave, so the parts whose targets cover
        every node together reach every state of the whole scope, and find every violation and
        lasso of it (a cycle spends no budget, so it lies within one part). Each part re-explores
        what comes before its faults, which costs less the later the faults come. A part reports
        the coverage goals it reached; the whole scope's goals are those of all its parts.
        Symmetry reduction stays sound only if every part's targets are closed under it."""
        check_targets(only, self.budget, self.names,
                      self.protocol.interchangeable if self._symmetry.perms else ())
        self.only = {kind: frozenset(nodes) for kind, nodes in only.items()}
        self.goals_required = not only
        self.scope = {**self.scope, "only": " ".join(
            f"{kind}={','.join(sorted(nodes))}" for kind, nodes in sorted(only.items()))}

    def _struck(self, kind: str, nodes: Iterable[tuple[NodeId, Hashable]]
                ) -> Iterable[tuple[NodeId, Hashable]]:
        """The (node, state) pairs of `nodes` that a fault of `kind` may strike (`restrict`)."""
        allowed = self.only.get(kind)
        return nodes if allowed is None else [(n, st) for n, st in nodes if n in allowed]

    def keeping_every_message(self) -> ActorModel:
        """This model without discarding dead messages, and without the canonical form (a
        renumbering would give the same message other numbers in the next state): the search
        that `network.dead_claim_errors` checks the dead claims over."""
        full = shallow_copy(self)
        full.discard_dead = False
        full._canonical = None
        return full

    def drop_symmetry(self) -> None:
        """No symmetry reduction (for `restrict` with targets that tell interchangeable nodes
        apart)."""
        self._symmetry = Symmetry((), self.names)

    # -- model interface -------------------------------------------------------------------------

    def init_states(self) -> Iterable[World]:
        p = self.protocol
        nodes = tuple(p.initial(n) for n in self.names)
        world = World(nodes, frozenset(), self.budget.as_tuple(),
                      tuple(m.initial() for m in self.monitors), ())
        events = [e for n, st in zip(self.names, nodes, strict=True)
                  for e in p.initial_events(n, st)]
        world = self._observe(world, events)
        return [self._canonical(world) if self._canonical else world]

    def restore(self, states: list[World]) -> list[World]:
        """A crashed node's state is `CRASHED` itself (compared by identity): unpickled, it is an
        equal string only."""
        out = []
        for world in states:
            if CRASHED in world.nodes:
                world = world._replace(nodes=tuple(CRASHED if st == CRASHED else st
                                                   for st in world.nodes))
            out.append(world)
        return out

    def init_events(self, world: World) -> tuple[Event, ...]:
        p = self.protocol
        return tuple(e for n, st in zip(self.names, world.nodes, strict=True)
                     if st is not None and st is not CRASHED for e in p.initial_events(n, st))

    def successors(self, world: World) -> list[tuple[Action, World]]:
        out: list[tuple[Action, World]] = []
        p = self.protocol
        call = self._call
        index = self.index
        nodes, network, budget = world.nodes, world.network, world.budget
        live = [(n, st) for n, st in zip(self.names, nodes, strict=True)
                if st is not None and st is not CRASHED]
        view = _View(self, world)
        # the network: deliveries (progress); losses, duplications, reorders (faults)
        for kind, src, dst, msg, rest in self.net.moves(
                network, self._reliable, bool(budget[LOSS]), bool(budget[DUPLICATION]),
                bool(budget[REORDER])):
            if kind == net.DROP:
                nxt = world._replace(network=rest, budget=spend(budget, LOSS))
            elif kind == net.DUPLICATE:
                nxt = world._replace(network=rest, budget=spend(budget, DUPLICATION))
            else:
                step = call(p.on_message, dst, nodes[index[dst]], src, msg)
                nxt = self._apply(world, dst, step, rest)
                if kind == net.REORDER:
                    nxt = nxt._replace(budget=spend(nxt.budget, REORDER))
            out.append(((kind, src, dst, msg), nxt))
        # timers
        unsettled = net.senders_and_receivers(network)
        timeout, wait = self._timeout, self._wait_for_network
        # for protocols whose timeouts wait for the whole system: computed once per state
        blocked = wait and bool(
            network or self._detector_pending(view, live) or self._retry_pending(world, live))
        for n, st in live:
            for timer in call(p.timers, n, st):
                if timeout is not None and timeout(timer) and (blocked if wait
                                                               else n in unsettled):
                    continue
                step = call(p.on_timer, n, st, timer)
                if step.state != st or step.events:
                    out.append((("timer", n, timer), self._apply(world, n, step, network)))
                    continue
                # a periodic timer (it changes nothing at its node): its sends that take effect now
                # are progress; one that would only take effect later is a race, on the budget
                fresh = [(d, m) for d, m in step.sends
                         if self._alive(nodes, d) and not self._in_flight(network, n, d, m)]
                effective = tuple(sm for sm in fresh if self._takes_effect(world, n, *sm))
                if effective:
                    out.append((("timer", n, timer),
                                self._apply(world, n, Step(st, effective), network)))
                if budget[PUBLISH]:
                    spent = world._replace(budget=spend(budget, PUBLISH))
                    for d, m in fresh:
                        if (d, m) not in effective:
                            out.append((("timer-race", n, timer, d),
                                        self._apply(spent, n, Step(st, ((d, m),)), network)))
        # failure detection: the protocol's suspicions, and heartbeats
        for n, st in live:
            for q, reason, justified in p.suspicions(n, st, view):
                if justified:
                    kind = "suspect"
                elif budget[SUSPICION]:
                    kind = "false-suspect"
                else:
                    continue
                nxt = self._apply(world, n, call(p.on_suspect, n, st, q, reason), network)
                if not justified:
                    nxt = nxt._replace(budget=spend(nxt.budget, SUSPICION))
                out.append(((kind, n, q), nxt))
        targets = p.heartbeat_targets
        for sender, sst in live if self._heartbeats_act else ():
            for n in sorted(call(targets, sender, sst)):
                st = nodes[index[n]]
                if st is None or st is CRASHED:
                    continue
                step = call(p.on_heartbeat, n, st, sender, call(p.heartbeat_view, sender, sst))
                if step.state != st or step.events or any(
                        not self._in_flight(network, n, d, m) for d, m in step.sends):
                    out.append((("heartbeat", sender, n), self._apply(world, n, step, network)))
        # faults that strike a node
        if budget[CRASH]:
            for n, st in self._struck("crash", live):
                nxt = world._replace(nodes=_put(nodes, index[n], CRASHED),
                                     network=net.without_messages_to(network, n),
                                     budget=spend(budget, CRASH))
                events = call(p.on_crash, n, st)
                out.append((("crash", n), self._observe(nxt, events) if events else nxt))
        if budget[JOIN]:
            for n, st in self._struck("join", zip(self.names, nodes, strict=True)):
                if st is None:
                    w = world._replace(budget=spend(budget, JOIN))
                    out.append((("join", n), self._apply(w, n, p.on_join(n), network)))
        if budget[SHUTDOWN]:
            for n, st in self._struck("shutdown", live):
                step = call(p.on_shutdown, n, st)
                if step is not None:
                    w = world._replace(budget=spend(budget, SHUTDOWN))
                    out.append((("shutdown", n), self._apply(w, n, step, network)))
        if budget[RESTART]:
            for n, st in self._struck("restart", live):
                step = call(p.on_restart, n, st)
                if step is not None:
                    w = world._replace(budget=spend(budget, RESTART))
                    rest = net.without_messages_to(network, n)
                    out.append((("restart", n), self._apply(w, n, step, rest)))
        if budget[ADMIN]:
            for n, st in live:
                for request in call(p.admin_requests, n, st):
                    w = world._replace(budget=spend(budget, ADMIN))
                    step = call(p.on_admin, n, st, request)
                    out.append((("admin", n, request), self._apply(w, n, step, network)))
        canonical = self._canonical
        if canonical is not None:
            return [(a, canonical(w)) for a, w in out]
        return out

    def properties(self) -> Sequence[Property[World]]:
        props: list[Property[World]] = []
        for i, m in enumerate(self.monitors):
            props.append(Property(m.spec, "always", _flag_check(m.spec)))
            if type(m).at_quiescence is not Monitor.at_quiescence:
                props.append(Property(m.spec, "quiescence", _quiet_check(m, i)))
        if self._busy is not None:
            props.append(Property(DEADLOCK, "quiescence", self._stuck))
        return props

    def goals(self) -> Sequence[Goal[World]]:
        return self._goals

    def finished(self, world: World) -> bool:
        return self._stuck(world) is None

    def quiescent(self, world: World, successors: Sequence[tuple[Action, World]]) -> bool:
        return all(a[0] in FAULT_KINDS for a, _ in successors)

    def representative(self, world: World) -> World:
        """One member of `world`'s symmetry class (`Symmetry.representative`)."""
        return self._symmetry.representative(world) if self._symmetry.perms else world

    @property
    def has_symmetry(self) -> bool:
        return bool(self._symmetry.perms)

    # -- presentation ---------------------------------------------------------------------------

    def describe_action(self, action: Action) -> tuple[str, str | None]:
        kind = action[0]
        describe = self.protocol.describe_message
        if kind in ("deliver", "drop", "duplicate", "reorder"):
            _, src, dst, msg = action
            return f"{kind} {describe(msg)} {src}→{dst}", dst
        if kind == "timer":
            return f"timer {' '.join(map(str, action[2]))} at {action[1]}", action[1]
        if kind == "timer-race":
            return (f"timer-race {' '.join(map(str, action[2]))} at {action[1]}, "
                    f"sent to {action[3]} only", action[1])
        if kind in ("suspect", "false-suspect"):
            return f"{kind}: {action[1]} suspects {action[2]}", action[1]
        if kind == "heartbeat":
            return f"heartbeat {action[1]}→{action[2]}", action[2]
        if kind == "admin":
            return f"admin at {action[1]}: {describe(action[2])}", action[1]
        return f"{kind} {action[1]}", action[1]

    def describe_state(self, world: World) -> dict[str, Any]:
        view: dict[str, Any] = {}
        for n, st in zip(self.names, world.nodes, strict=True):
            if st is None:
                view[n] = "dormant"
            elif st is CRASHED:
                view[n] = "crashed"
            else:
                view[n] = self.protocol.describe(n, st)
        view["network"] = self.net.describe(world.network, self.protocol.describe_message)
        view["budget left"] = left(self.budget, world.budget)
        return view

    def step_events(self, world: World, action: Action, nxt: World) -> tuple[Event, ...]:
        kind = action[0]
        p = self.protocol
        call = self._call  # the handlers' results `successors` computed, from its memo
        nodes = world.nodes
        step: Step | None = None
        if kind in ("deliver", "reorder"):
            _, src, dst, msg = action
            step = call(p.on_message, dst, nodes[self.index[dst]], src, msg)
        elif kind in ("timer", "timer-race"):
            step = call(p.on_timer, action[1], nodes[self.index[action[1]]], action[2])
            return step.events
        elif kind in ("suspect", "false-suspect"):
            n, q = action[1], action[2]
            st = nodes[self.index[n]]
            step = call(p.on_suspect, n, st, q, self._reason(world, n, st, q))
        elif kind == "heartbeat":
            sender = action[1]
            view = call(p.heartbeat_view, sender, nodes[self.index[sender]])
            step = call(p.on_heartbeat, action[2], nodes[self.index[action[2]]], sender, view)
        elif kind == "join":
            step = p.on_join(action[1])
        elif kind == "shutdown":
            step = p.on_shutdown(action[1], nodes[self.index[action[1]]])
        elif kind == "crash":
            return p.on_crash(action[1], nodes[self.index[action[1]]])
        elif kind == "restart":
            step = p.on_restart(action[1], nodes[self.index[action[1]]])
        elif kind == "admin":
            step = p.on_admin(action[1], nodes[self.index[action[1]]], action[2])
        return step.events if step is not None else ()

    # -- internals ------------------------------------------------------------------------------

    def _reason(self, world: World, n: NodeId, st: Hashable, q: NodeId) -> str:
        """Why `n`'s failure detector may suspect `q` in `world` (`Protocol.suspicions`)."""
        for suspicion in self.protocol.suspicions(n, st, _View(self, world)):
            if suspicion.suspect == q:
                return suspicion.reason
        raise ValueError(f"{n} cannot suspect {q} in this state of {self.name}")

    def _detector_pending(self, view: _View, live: list[tuple[NodeId, Hashable]]) -> bool:
        """Has some live node's failure detector a justified suspicion still to report?"""
        suspicions = self.protocol.suspicions
        return any(s.justified for n, st in live for s in suspicions(n, st, view))

    def _retry_pending(self, world: World, live: list[tuple[NodeId, Hashable]]) -> bool:
        """Would some live node's prompt retry (`Timing.prompt`) take effect now?"""
        call, p, prompt = self._call, self.protocol, self._prompt
        if prompt is None:
            return False
        for n, st in live:
            for timer in call(p.timers, n, st):
                if not prompt(timer):
                    continue
                step = call(p.on_timer, n, st, timer)
                if step.state != st or step.events or any(
                        self._takes_effect(world, n, d, m) for d, m in step.sends
                        if self._alive(world.nodes, d)):
                    return True
        return False

    def _alive(self, nodes: tuple[Hashable, ...], n: NodeId) -> bool:
        st = nodes[self.index[n]]
        return st is not None and st is not CRASHED

    def _takes_effect(self, world: World, src: NodeId, dst: NodeId, msg: Hashable) -> bool:
        """Delivered now, would `msg` change its receiver's state or make it send a message that
        is not in flight already?"""
        st = world.nodes[self.index[dst]]
        step = self._call(self.protocol.on_message, dst, st, src, msg)
        return step.state != st or any(
            not self._in_flight(world.network, dst, d, m) for d, m in step.sends)

    def _apply(self, world: World, node: NodeId, step: Step, network: frozenset[Any]) -> World:
        """`world` after `step` at `node`, with `network` as the messages in flight before its
        sends: the node's new state, its sends added (unless to a dormant or crashed node, or
        dead), the messages to it that its new state makes dead discarded, its events observed."""
        nodes = world.nodes
        state = step.state
        dead = self._dead if self.discard_dead else None
        call = self._call
        if dead is not None and state is not None and state is not CRASHED:
            before = nodes[self.index[node]]
            if state is not before and state != before:
                network = self.net.discard(network, node,
                                           lambda src, m: call(dead, node, state, src, m))
        once = self._idempotent
        for dst, msg in step.sends:
            receiver = state if dst == node else nodes[self.index[dst]]
            if receiver is None or receiver is CRASHED or (
                    dead is not None and call(dead, dst, receiver, node, msg)):
                continue
            if once is not None and once(msg) and self._in_flight(network, node, dst, msg):
                continue
            network = self._add(network, node, dst, msg)
        share = self._share
        nxt = World(share(_put(nodes, self.index[node], share(step.state))), share(network),
                    world.budget, world.monitors, world.flags)
        return self._observe(nxt, step.events) if step.events else nxt

    def _observe(self, world: World, events: Iterable[Event]) -> World:
        """Feed `events` to the monitors. Monitors are pure, so each (monitor, state, event) is
        computed once: the memo also makes equal monitor states one shared object."""
        before = world.monitors
        fast = self._observed_by_id
        ids = (id(before), id(events))
        seen = fast.get(ids)
        if seen is not None and seen[0] is before and seen[1] is events:
            monitors, raised = seen[2], seen[3]
        else:
            states = list(before)
            found: list[tuple[str, str]] = []
            memo = self._observed
            for ev in events:
                for i, m in self._watchers.get(ev.TYPE, ()):
                    key = (i, states[i], ev)
                    hit = memo.get(key)
                    if hit is None:
                        if len(memo) > MEMO_LIMIT:
                            memo.clear()
                        hit = memo[key] = m.observe(states[i], ev)
                    states[i], message = hit
                    if message is not None:
                        found.append((m.spec, message))
            monitors, raised = self._share(tuple(states)), tuple(found)
            if len(fast) > MEMO_LIMIT:
                fast.clear()
            fast[ids] = (before, events, monitors, raised)
        flags = (*world.flags, *raised) if raised else world.flags
        return World(world.nodes, world.network, world.budget, monitors, flags)

    def _call(self, handler: Callable[..., Any], *args: Any) -> Any:
        """`handler(*args)`, computed once per argument tuple: handlers are pure functions of
        (node, node state, input), and their results are shared between global states. The memo
        is keyed by the handler's name."""
        key = (handler.__name__, *args)
        memo = self._handled
        hit = memo.get(key, memo)
        if hit is memo:
            if len(memo) > MEMO_LIMIT:
                memo.clear()
            hit = memo[key] = handler(*args)
        return hit

    def _share(self, obj: Hashable) -> Hashable:
        shared = self._shared
        if len(shared) > MEMO_LIMIT:  # a bound on the table itself; sharing restarts
            shared.clear()
        return shared.setdefault(obj, obj)

    def _stuck(self, world: World) -> str | None:
        if self._busy is None:
            return None
        stuck = [n for n, st in zip(self.names, world.nodes, strict=True)
                 if st is not None and st is not CRASHED and self._busy(n, st)]
        if stuck:
            return f"{', '.join(stuck)} cannot make progress: nothing but faults can happen"
        return None



def _flag_check(spec: str) -> Callable[[World], str | None]:
    def check(world: World) -> str | None:
        for s, message in world.flags:
            if s == spec:
                return message
        return None

    return check


def _quiet_check(monitor: Monitor, i: int) -> Callable[[World], str | None]:
    def check(world: World) -> str | None:
        return monitor.at_quiescence(world.monitors[i])

    return check


def _put(nodes: tuple[Hashable, ...], i: int, state: Hashable) -> tuple[Hashable, ...]:
    return (*nodes[:i], state, *nodes[i + 1:])

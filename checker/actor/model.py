"""The actor layer: node handlers plus a network and fault budgets, as one `Model`.

A `refimpl.actor.Protocol` gives deterministic node handlers; this layer composes them into a
global transition system the explorer can search, in the manner of Stateright's actor models:

- the network holds in-flight messages as a multiset (a frozenset of ``(src, dst, msg, copy)``), so
  every delivery order is explored; or, for a protocol over ordered connections (TCP), as FIFO
  channels (a frozenset of ``(src, dst, messages)``), where a message overtaking an earlier one on
  its channel is a fault on the `reorders` budget; messages to a crashed node vanish with it,
  messages from it stay in flight;
- the environment acts within budgets set on the command line: crashes (crash-stop), joins of
  dormant nodes, false suspicions, message losses and duplications, extra firings of periodic
  timers (see below), and graceful shutdown requests (a user asks a member to shut down);
- the failure detector of 002 is part of the environment: a node may suspect a watched member at any
  time if that member crashed, or if it sends the node no heartbeats although no message to it is
  in flight (a justified suspicion, not a fault: heartbeat timeouts are long next to message
  delays, so a member that is about to learn of the node is not yet suspected); any other
  suspicion is a false one, within the budget. A heartbeat reaches a node whenever it would change
  something there;
- spec monitors run inside the global state: every event a step emits is fed to them, and a
  violation they raise is a property violation of the state reached.

A timeout (a timer the protocol marks as one) fires only once no message to or from its node is in
flight (or, for a protocol whose answers travel through third nodes, once no message at all is in
flight and no failure detector has a justified suspicion left to report: operation timeouts and
retry pauses are long next to failure detection, and once no prompt retry (`Protocol.is_prompt`)
would take effect): an early timeout is the same as a false suspicion, which the budget covers.

A message its receiver will ignore for ever (`Protocol.is_dead`) is discarded when it is sent or
when its receiver changes: its delivery would be a stutter step. `dead_claim_errors` checks such
claims over the reachable states of a search that keeps every message.

A periodic timer that changes nothing at its node (the periodic member-list publish) is progress
only for the messages that would take effect at their receiver right now (change its state or make
it send): those are sent, the others are not (as if lost: none of them would do anything on
arrival unless the receiver changed meanwhile). A periodic message sent to take effect later, a
race with newer updates, is sent to one receiver at a time and draws on the `publishes` budget.
Without these rules such timers would fill the network for ever.

Action kinds: deliver, timer, suspect, heartbeat (progress) and crash, join, false-suspect, drop,
duplicate, timer-race, shutdown, reorder (faults). A state is quiescent when only faults are
enabled.
"""

from __future__ import annotations

import dataclasses
import itertools
from collections.abc import Callable, Hashable, Iterable, Sequence
from copy import copy as shallow_copy
from dataclasses import asdict, dataclass
from typing import Any, NamedTuple

from partsafe.checker.engine.model import Action, Goal, Model, Property
from partsafe.refimpl.actor import NodeId, Protocol, Step
from partsafe.specs.monitor import Monitor
from partsafe.traces.events import Event, MemberCrashed

CRASHED = "crashed"
FAULT_KINDS = frozenset({"crash", "join", "false-suspect", "drop", "duplicate", "timer-race",
                         "shutdown", "reorder", "restart", "admin"})
ACTION_KINDS = ("deliver", "timer", "suspect", "heartbeat", *sorted(FAULT_KINDS))
DEADLOCK = "DEADLOCK"
#: entries a memo table may hold before it starts afresh: the memos, not the visited states, are
#: what a long search keeps in memory (each entry keeps node states and messages alive), and the
#: states of the next levels share mostly recent entries (Ignite, 2 restarts, to depth 24: 2M
#: entries 858 MB, 200k entries 736 MB at 2% more time, 50k 360 MB at 10% more)
MEMO_LIMIT = 200_000
#: the renamed components remembered per renaming (each keeps its component alive): recent ones
#: are what the next states share
RENAMED_LIMIT = 200_000


@dataclass(frozen=True)
class Budget:
    """How many of each environment action one run may take."""

    crashes: int = 0
    joins: int = 0
    suspicions: int = 0
    losses: int = 0
    duplications: int = 0
    publishes: int = 0
    shutdowns: int = 0
    reorders: int = 0
    restarts: int = 0
    admin: int = 0

    def as_tuple(self) -> tuple[int, ...]:
        return (self.crashes, self.joins, self.suspicions, self.losses, self.duplications,
                self.publishes, self.shutdowns, self.reorders, self.restarts, self.admin)


(CRASH, JOIN, SUSPICION, LOSS, DUPLICATION, PUBLISH, SHUTDOWN, REORDER, RESTART,
 ADMIN) = range(10)
BUDGET_NAMES = ("crashes", "joins", "suspicions", "losses", "duplications", "publishes",
                "shutdowns", "reorders", "restarts", "admin")
#: the faults that strike one node, with their budgets: `ActorModel.restrict` may confine them
TARGETED = {"crash": "crashes", "join": "joins", "shutdown": "shutdowns", "restart": "restarts"}


class World(NamedTuple):
    """The global state: node states, in-flight messages, budgets left, monitor states, flags."""

    nodes: tuple[Hashable, ...]
    network: frozenset[tuple[NodeId, NodeId, Hashable, int]]
    budget: tuple[int, ...]
    monitors: tuple[Hashable, ...]
    #: violations raised by monitors so far: (spec, message)
    flags: tuple[tuple[str, str], ...]


_LEAF, _STR, _TUPLE, _SET, _NAMED, _DATA = range(6)
#: how `rename` goes through each type of value met so far
_KINDS: dict[type, int] = {}


def _kind(kind: type) -> int:
    if kind is str:
        found = _STR
    elif kind is tuple:
        found = _TUPLE
    elif kind is frozenset:
        found = _SET
    elif issubclass(kind, tuple) and hasattr(kind, "_make"):
        found = _NAMED
    elif dataclasses.is_dataclass(kind):
        found = _DATA
    else:
        found = _LEAF
    _KINDS[kind] = found
    return found


def rename(obj: Any, mapping: dict[str, str]) -> Any:
    """`obj` with every string in `mapping` replaced, through tuples, named tuples, frozensets
    and frozen dataclasses (rebuilt field by field, without running their checks again)."""
    kind = type(obj)
    how = _KINDS.get(kind)
    if how is None:
        how = _kind(kind)
    if how == _LEAF:
        return obj
    if how == _STR:
        return mapping.get(obj, obj)
    if how == _TUPLE:
        return tuple([rename(x, mapping) for x in obj])
    if how == _SET:
        return frozenset([rename(x, mapping) for x in obj])
    if how == _NAMED:
        return kind._make([rename(x, mapping) for x in obj])
    copy = object.__new__(kind)
    for f in dataclasses.fields(obj):
        object.__setattr__(copy, f.name, rename(getattr(obj, f.name), mapping))
    return copy


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
                                          if v or k not in ("restarts", "admin")})
        self._busy = busy
        #: discard a message once its receiver can never be changed by it (`Protocol.is_dead`)
        self.discard_dead = discard_dead
        #: a world's canonical form, applied to every state the model makes: an abstraction the
        #: protocol is indifferent to (revision numbers compared only by order, kept as ranks)
        self._canonical = canonical
        self.names = protocol.nodes
        #: FIFO channels (a frozenset of ``(src, dst, messages)``) instead of a multiset
        self.fifo = protocol.fifo
        self._in_flight = _fifo_in_flight if self.fifo else _in_flight
        self._add = _fifo_add if self.fifo else _add
        self.index = {name: i for i, name in enumerate(self.names)}
        self._perms = self._permutations()
        #: hash-consing of state components: equal node states, networks and monitor states are
        #: stored once, so that a wide frontier costs pointers, not copies
        self._shared: dict[Hashable, Hashable] = {}
        self._observed: dict[tuple[int, Hashable, Event], tuple[Hashable, str | None]] = {}
        self._handled: dict[tuple[Any, ...], Any] = {}
        #: (monitor states, events) by identity -> (both, the monitor states after, flags raised):
        #: shared monitor states meet the events of memoised steps, the same objects, again and
        #: again, and comparing identities spares hashing either
        self._observed_by_id: dict[tuple[int, int], tuple[Any, Any, Any, Any]] = {}
        #: per renaming: id of a component -> (the component, its image)
        self._renamed: list[dict[int, tuple[Any, Any]]] = [{} for _ in self._perms]
        self._renamers = [self._renamer(k) for k in range(len(self._perms))]
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
        for kind, nodes in only.items():
            if kind not in TARGETED:
                raise ValueError(f"--only {kind}=...: a fault kind is one of "
                                 f"{', '.join(TARGETED)}")
            unknown = sorted(set(nodes) - set(self.names))
            if unknown or not nodes:
                what = f"no node named {', '.join(unknown)}" if unknown else "no node"
                raise ValueError(f"--only {kind}={','.join(sorted(nodes))}: {what} (nodes: "
                                 f"{', '.join(self.names)})")
            budget = getattr(self.budget, TARGETED[kind])
            if not budget:
                raise ValueError(f"--only {kind}=...: the scope allows no {TARGETED[kind]}")
            for group in self.protocol.interchangeable if self._perms else ():
                if len(group) > 1 and group & nodes and not group <= nodes:
                    raise ValueError(
                        f"--only {kind}={','.join(sorted(nodes))} tells apart "
                        f"{', '.join(sorted(group))}, which the symmetry reduction takes as "
                        "interchangeable: name all of them or none, or add --no-symmetry")
        self.only = {kind: frozenset(nodes) for kind, nodes in only.items()}
        self.goals_required = not only
        self.scope = {**self.scope, "only": " ".join(
            f"{kind}={','.join(sorted(nodes))}" for kind, nodes in sorted(only.items()))}

    def _struck(self, kind: str, nodes: Iterable[tuple[NodeId, Hashable]]
                ) -> Iterable[tuple[NodeId, Hashable]]:
        """The (node, state) pairs of `nodes` that a fault of `kind` may strike (`restrict`)."""
        allowed = self.only.get(kind)
        return nodes if allowed is None else [(n, st) for n, st in nodes if n in allowed]

    def drop_symmetry(self) -> None:
        """No symmetry reduction (for `restrict` with targets that tell interchangeable nodes
        apart)."""
        self._perms = []

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
        nodes, network, budget = world.nodes, world.network, world.budget
        live = [(n, st) for n, st in zip(self.names, nodes, strict=True)
                if st is not None and st is not CRASHED]
        # deliveries, losses, duplications
        if self.fifo:
            self._fifo_deliveries(world, out)
        for src, dst, msg, copy in (() if self.fifo else network):
            if copy:
                continue
            rest = _remove(network, src, dst, msg)
            step = call(p.on_message, dst, nodes[self.index[dst]], src, msg)
            out.append((("deliver", src, dst, msg), self._apply(world, dst, step, rest)))
            if p.is_reliable(src, dst, msg):
                continue
            if budget[LOSS]:
                out.append((("drop", src, dst, msg),
                            world._replace(network=rest, budget=_spend(budget, LOSS))))
            if budget[DUPLICATION]:
                out.append((("duplicate", src, dst, msg),
                            world._replace(network=_add(network, src, dst, msg),
                                           budget=_spend(budget, DUPLICATION))))
        # timers
        unsettled = {e[1] for e in network} | {e[0] for e in network}
        # for protocols whose timeouts wait for the whole system: computed once per state
        blocked = p.timeouts_wait_for_network and bool(
            network or self._detector_pending(nodes, live) or self._retry_pending(world, live))
        for n, st in live:
            for timer in call(p.timers, n, st):
                if p.is_timeout(timer) and (blocked if p.timeouts_wait_for_network
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
                    spent = world._replace(budget=_spend(budget, PUBLISH))
                    for d, m in fresh:
                        if (d, m) not in effective:
                            out.append((("timer-race", n, timer, d),
                                        self._apply(spent, n, Step(st, ((d, m),)), network)))
        # failure detector: suspicions and heartbeats
        unsettled = {e[1] for e in network}  # a node with messages coming is not settled
        # with messages as heartbeats, n hears from q while q's messages to n are in flight
        talking = {(e[0], e[1]) for e in network} if p.messages_are_heartbeats else set()
        targets = p.heartbeat_targets
        for n, st in live:
            for q in call(p.monitored, n, st):
                qst = nodes[self.index[q]]
                if qst is CRASHED:
                    kind, reason = "suspect", "crashed"
                elif q not in unsettled and (q, n) not in talking and (
                        qst is None or n not in call(targets, q, qst)):
                    kind, reason = "suspect", "no heartbeat"
                elif budget[SUSPICION]:
                    kind, reason = "false-suspect", "false suspicion"
                else:
                    continue
                nxt = self._apply(world, n, call(p.on_suspect, n, st, q, reason), network)
                if kind == "false-suspect":
                    nxt = nxt._replace(budget=_spend(nxt.budget, SUSPICION))
                out.append(((kind, n, q), nxt))
        for sender, sst in live if self._heartbeats_act else ():
            for n in sorted(call(targets, sender, sst)):
                st = nodes[self.index[n]]
                if st is None or st is CRASHED:
                    continue
                step = call(p.on_heartbeat, n, st, sender)
                if step.state != st or step.events or any(
                        not self._in_flight(network, n, d, m) for d, m in step.sends):
                    out.append((("heartbeat", sender, n), self._apply(world, n, step, network)))
        # crashes and joins
        if budget[CRASH]:
            for n, _ in self._struck("crash", live):
                i = self.index[n]
                rest = frozenset(e for e in network if e[1] != n)
                nxt = world._replace(nodes=_put(nodes, i, CRASHED), network=rest,
                                     budget=_spend(budget, CRASH))
                out.append((("crash", n), self._observe(nxt, (MemberCrashed(member=n),))))
        if budget[JOIN]:
            for n, st in self._struck("join", zip(self.names, nodes, strict=True)):
                if st is None:
                    w = world._replace(budget=_spend(budget, JOIN))
                    out.append((("join", n), self._apply(w, n, p.on_join(n), network)))
        if budget[SHUTDOWN]:
            for n, st in self._struck("shutdown", live):
                step = call(p.on_shutdown, n, st)
                if step is not None:
                    w = world._replace(budget=_spend(budget, SHUTDOWN))
                    out.append((("shutdown", n), self._apply(w, n, step, network)))
        if budget[RESTART]:
            for n, st in self._struck("restart", live):
                step = call(p.on_restart, n, st)
                if step is not None:
                    w = world._replace(budget=_spend(budget, RESTART))
                    rest = frozenset(e for e in network if e[1] != n)
                    out.append((("restart", n), self._apply(w, n, step, rest)))
        if budget[ADMIN]:
            for n, st in live:
                for request in call(p.admin_requests, n, st):
                    w = world._replace(budget=_spend(budget, ADMIN))
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
        """One member of `world`'s symmetry class, the same whatever its members are called: of
        the images of `world` under every renaming of interchangeable nodes, the one whose node
        states hash least; when several tie, the one whose whole state does. (Raw hashes, not
        fingerprints: a minimum of fingerprints would crowd the fingerprint table.) The node
        states decide almost always, and the rest of an image is built only for the one chosen."""
        perms = self._perms
        if not perms:
            return world
        images = [world.nodes, *(self._permute_nodes(world, k) for k in range(1, len(perms)))]
        keys = [hash(nodes) for nodes in images]
        least = min(keys)
        chosen = [k for k, h in enumerate(keys) if h == least]
        if len(chosen) == 1:
            k = chosen[0]
            return world if k == 0 else self._permute(world, k, images[k])
        return min((world if k == 0 else self._permute(world, k, images[k]) for k in chosen),
                   key=hash)

    @property
    def has_symmetry(self) -> bool:
        return bool(self._perms)

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
        describe = self.protocol.describe_message
        if self.fifo:
            view["network"] = sorted(f"{s}→{d}: " + ", ".join(describe(m) for m in msgs)
                                     for s, d, msgs in world.network)
        else:
            view["network"] = sorted(f"{describe(m)} {s}→{d}" for s, d, m, _ in world.network)
        initial = self.budget.as_tuple()
        view["budget left"] = {name: left for name, left, first in
                               zip(BUDGET_NAMES, world.budget, initial, strict=True)
                               if first or name not in ("restarts", "admin")}
        return view

    def step_events(self, world: World, action: Action, nxt: World) -> tuple[Event, ...]:
        kind = action[0]
        p = self.protocol
        nodes = world.nodes
        step: Step | None = None
        if kind in ("deliver", "reorder"):
            _, src, dst, msg = action
            step = p.on_message(dst, nodes[self.index[dst]], src, msg)
        elif kind in ("timer", "timer-race"):
            step = p.on_timer(action[1], nodes[self.index[action[1]]], action[2])
            return step.events
        elif kind in ("suspect", "false-suspect"):
            n, q = action[1], action[2]
            reason = "false suspicion" if kind == "false-suspect" else (
                "crashed" if nodes[self.index[q]] is CRASHED else "no heartbeat")
            step = p.on_suspect(n, nodes[self.index[n]], q, reason)
        elif kind == "heartbeat":
            step = p.on_heartbeat(action[2], nodes[self.index[action[2]]], action[1])
        elif kind == "join":
            step = p.on_join(action[1])
        elif kind == "shutdown":
            step = p.on_shutdown(action[1], nodes[self.index[action[1]]])
        elif kind == "crash":
            return (MemberCrashed(member=action[1]),)
        elif kind == "restart":
            step = p.on_restart(action[1], nodes[self.index[action[1]]])
        elif kind == "admin":
            step = p.on_admin(action[1], nodes[self.index[action[1]]], action[2])
        return step.events if step is not None else ()

    # -- internals ------------------------------------------------------------------------------

    def _fifo_deliveries(self, world: World, out: list[tuple[Action, World]]) -> None:
        """Deliveries from FIFO channels: the head of each channel is progress; a later message
        overtaking it (reorder), a loss and a duplicate (appended) are faults on the budgets."""
        p = self.protocol
        nodes, network, budget = world.nodes, world.network, world.budget
        for entry in network:
            src, dst, msgs = entry
            st = nodes[self.index[dst]]
            reliable = p.is_reliable(src, dst, msgs[0])
            for i, msg in enumerate(msgs):
                if msg in msgs[:i]:
                    continue  # the same message earlier in the channel: the same moves
                if reliable and i:
                    break
                if i == 0 or budget[REORDER]:
                    rest = _fifo_take(network, entry, i)
                    step = self._call(p.on_message, dst, st, src, msg)
                    nxt = self._apply(world, dst, step, rest)
                    if i:
                        nxt = nxt._replace(budget=_spend(nxt.budget, REORDER))
                    out.append((("deliver" if i == 0 else "reorder", src, dst, msg), nxt))
                if reliable:
                    continue
                if budget[LOSS]:
                    out.append((("drop", src, dst, msg),
                                world._replace(network=_fifo_take(network, entry, i),
                                               budget=_spend(budget, LOSS))))
                if budget[DUPLICATION]:
                    out.append((("duplicate", src, dst, msg),
                                world._replace(network=_fifo_add(network, src, dst, msg),
                                               budget=_spend(budget, DUPLICATION))))

    def _detector_pending(self, nodes: tuple[Hashable, ...],
                          live: list[tuple[NodeId, Hashable]]) -> bool:
        """Has some live node's failure detector a justified suspicion still to report (a
        watched member crashed, or sends it no heartbeats)?"""
        call, p = self._call, self.protocol
        for n, st in live:
            for q in call(p.monitored, n, st):
                qst = nodes[self.index[q]]
                if qst is CRASHED or qst is None or n not in call(p.heartbeat_targets, q, qst):
                    return True
        return False

    def _retry_pending(self, world: World, live: list[tuple[NodeId, Hashable]]) -> bool:
        """Would some live node's prompt retry (`Protocol.is_prompt`) take effect now?"""
        call, p = self._call, self.protocol
        for n, st in live:
            for timer in call(p.timers, n, st):
                if not p.is_prompt(timer):
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

    def _apply(self, world: World, node: NodeId, step: Step,
               network: frozenset[tuple[NodeId, NodeId, Hashable, int]]) -> World:
        nodes = world.nodes
        state = step.state
        discard = self.discard_dead
        if discard and state is not None and state is not CRASHED:
            before = nodes[self.index[node]]
            if state is not before and state != before:
                network = self._discard_dead(network, node, state)
        for dst, msg in step.sends:
            receiver = state if dst == node else nodes[self.index[dst]]
            if receiver is None or receiver is CRASHED or (
                    discard and self._call(self.protocol.is_dead, dst, receiver, node, msg)):
                continue
            network = self._add(network, node, dst, msg)
        share = self._share
        nxt = World(share(_put(nodes, self.index[node], share(step.state))), share(network),
                    world.budget, world.monitors, world.flags)
        return self._observe(nxt, step.events) if step.events else nxt

    def _discard_dead(self, network: frozenset[Any], node: NodeId,
                      state: Hashable) -> frozenset[Any]:
        """`network` without the messages to `node` that its new `state` makes dead."""
        dead = self.protocol.is_dead
        call = self._call
        if self.fifo:
            for entry in [e for e in network if e[1] == node]:
                src = entry[0]
                kept = tuple(m for m in entry[2] if not call(dead, node, state, src, m))
                if len(kept) != len(entry[2]):
                    network = network - {entry}
                    if kept:
                        network = network | {(src, node, kept)}
            return network
        gone = [e for e in network if e[1] == node and call(dead, node, state, e[0], e[2])]
        return network.difference(gone) if gone else network

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
        (node, node state, input), and their results are shared between global states."""
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

    def _permutations(self) -> list[dict[str, str]]:
        groups = [sorted(g) for g in self.protocol.interchangeable if len(g) > 1]
        if not groups:
            return []
        perms: list[dict[str, str]] = []
        for choice in itertools.product(*(itertools.permutations(g) for g in groups)):
            mapping = {}
            for group, image in zip(groups, choice, strict=True):
                mapping.update(zip(group, image, strict=True))
            perms.append(mapping)
        return perms

    def _renamer(self, k: int) -> Callable[[Any], Any]:
        """The k-th renaming of a component. Worlds share their components (node states,
        messages in flight, monitor states) with the worlds they came from, so each component is
        renamed once and its image remembered by identity (the component is kept alive with it,
        so its id cannot be reused)."""
        mapping = self._perms[k]
        memo = self._renamed[k]
        get = memo.get

        def renamed(obj: Any) -> Any:
            hit = get(id(obj))
            if hit is not None and hit[0] is obj:
                return hit[1]
            image = rename(obj, mapping)
            memo[id(obj)] = (obj, image)
            return image

        return renamed

    def _permute_nodes(self, world: World, k: int) -> tuple[Hashable, ...]:
        """The node states of `world` under the k-th renaming."""
        if len(self._renamed[k]) > RENAMED_LIMIT:
            self._renamed[k].clear()
        mapping, renamed, index = self._perms[k], self._renamers[k], self.index
        nodes = list(world.nodes)
        for name, st in zip(self.names, world.nodes, strict=True):
            nodes[index[mapping.get(name, name)]] = renamed(st)
        return tuple(nodes)

    def _permute(self, world: World, k: int, nodes: tuple[Hashable, ...] | None = None) -> World:
        """`world` under the k-th renaming (`nodes`: its node states, if already renamed)."""
        if nodes is None:
            nodes = self._permute_nodes(world, k)
        renamed = self._renamers[k]
        return World(nodes, frozenset([renamed(e) for e in world.network]), world.budget,
                     tuple([renamed(m) for m in world.monitors]),
                     rename(world.flags, self._perms[k]))


def dead_claim_errors(model: ActorModel, limit: int = 10) -> list[str]:
    """Check `Protocol.is_dead` over every reachable state of `model` explored without
    discarding: each message claimed dead must be a no-op at its receiver, and stay claimed
    after every change of the receiver's state. Up to `limit` counterexamples, described."""
    full = shallow_copy(model)
    full.discard_dead = False
    # without the canonical form: a renumbering would give the same message other numbers in the
    # next state (the scopes checked here end without it)
    full._canonical = None
    p = model.protocol
    errors: list[str] = []
    seen = set(full.init_states())
    frontier = list(seen)
    while frontier and len(errors) < limit:
        nxt: list[World] = []
        for world in frontier:
            succ = full.successors(world)
            for src, dst, msg in _messages(world.network, full.fifo):
                st = world.nodes[full.index[dst]]
                if st is None or st is CRASHED or not p.is_dead(dst, st, src, msg):
                    continue
                step = p.on_message(dst, st, src, msg)
                if step.state != st or step.sends or step.events:
                    errors.append(f"{p.describe_message(msg)} {src}→{dst} is claimed dead but "
                                  f"its delivery {step}")
                for action, after in succ:
                    st2 = after.nodes[full.index[dst]]
                    if st2 is not CRASHED and st2 != st and not p.is_dead(dst, st2, src, msg):
                        errors.append(f"{p.describe_message(msg)} {src}→{dst} is claimed dead "
                                      f"but not after {action[0]} {action[1:]}")
            for _, after in succ:
                if after not in seen:
                    seen.add(after)
                    nxt.append(after)
        frontier = nxt
    return errors[:limit]


def _messages(network: frozenset[Any], fifo: bool) -> Iterable[tuple[NodeId, NodeId, Hashable]]:
    if fifo:
        return ((src, dst, m) for src, dst, msgs in network for m in msgs)
    return ((src, dst, m) for src, dst, m, _ in network)


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


def _spend(budget: tuple[int, ...], i: int) -> tuple[int, ...]:
    return (*budget[:i], budget[i] - 1, *budget[i + 1:])


def _fifo_in_flight(network: frozenset[Any], src: NodeId, dst: NodeId, msg: Hashable) -> bool:
    return any(s == src and d == dst and msg in msgs for s, d, msgs in network)


def _fifo_add(network: frozenset[Any], src: NodeId, dst: NodeId, msg: Hashable) -> frozenset[Any]:
    for entry in network:
        if entry[0] == src and entry[1] == dst:
            return (network - {entry}) | {(src, dst, (*entry[2], msg))}
    return network | {(src, dst, (msg,))}


def _fifo_take(network: frozenset[Any], entry: tuple[Any, Any, tuple[Any, ...]],
               i: int) -> frozenset[Any]:
    src, dst, msgs = entry
    left = msgs[:i] + msgs[i + 1:]
    rest = network - {entry}
    return rest | {(src, dst, left)} if left else rest


def _in_flight(network: frozenset[Any], src: NodeId, dst: NodeId, msg: Hashable) -> bool:
    return (src, dst, msg, 0) in network


def _add(network: frozenset[Any], src: NodeId, dst: NodeId, msg: Hashable) -> frozenset[Any]:
    copy = 0
    while (src, dst, msg, copy) in network:
        copy += 1
    return network | {(src, dst, msg, copy)}


def _remove(network: frozenset[Any], src: NodeId, dst: NodeId, msg: Hashable) -> frozenset[Any]:
    copy = 0
    while (src, dst, msg, copy + 1) in network:
        copy += 1
    return network - {(src, dst, msg, copy)}

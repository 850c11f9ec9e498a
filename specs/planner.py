"""Migration planner specs (Hazelcast 3.7, design 000 §3): what a safe migration plan must keep.

A plan for one partition goes from the `current` replica array to the cycle-fixed `target`
through `arrays`: the current array with the clears applied (Hazelcast applies them at once),
then the array after each migration, in execution order. Index 0 is the owner; a smaller index is
hotter; `count` is the number of non-empty indices.

The array predicates here are the Python form of the specs for both the reference planner's
exhaustive check and the Z3 oracle (models/planner_oracle.py encodes the same definitions). The
decision predicates judge each decision's six ``migrate`` arguments against the working array the
decisions before it leave (PLAN-WELL-FORMED), clears included.

The monitors at the end (`PlanMonitor`) judge the same predicates on a plan as its master's log
shows it (``MigrationManager`` and ``MigrationPlanner`` at FINEST: the `plan_*` events), per
master and partition.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Hashable, Sequence
from typing import ClassVar, NamedTuple, Protocol

import networkx as nx

from partsafe.specs.monitor import NO_PAIRS, Monitor, Pairs, assign, lookup
from partsafe.specs.registry import Spec, register
from partsafe.traces.events import Event, PlanDecision, PlanOrder, PlanStarted, PlanState

Replicas = tuple[str | None, ...]


class Migration(Protocol):
    """The fields of a planner decision the specs read (Hazelcast's MigrationInfo)."""

    source: str | None
    source_current_index: int
    source_new_index: int
    destination: str | None
    destination_new_index: int


class Decision(Migration, Protocol):
    """A planner decision as ``MigrationDecisionCallback.migrate`` receives it: its six arguments
    and the case that made it (MOVE, COPY, SHIFT_UP, SHIFT_DOWN, or CLEAR for a call without a
    destination)."""

    type: str
    destination_current_index: int


def count(array: Sequence[str | None]) -> int:
    return sum(1 for r in array if r is not None)


# --- array predicates (judged on every intermediate array) -----------------------------------


def no_decrease(current: Replicas, target: Replicas, array: Replicas) -> bool:
    """PLAN-NO-DECREASE: at least min(count(current), count(target)) replicas."""
    return count(array) >= min(count(current), count(target))


def hotter_first(current: Replicas, target: Replicas, array: Replicas) -> bool:
    """PLAN-HOTTER-FIRST: every prefix of hotter indices keeps min(current, target) replicas."""
    return all(count(array[:p]) >= min(count(current[:p]), count(target[:p]))
               for p in range(1, len(array) + 1))


def no_duplicate(current: Replicas, target: Replicas, array: Replicas) -> bool:
    """PLAN-NO-DUPLICATE: no member holds two indices of one partition."""
    members = [r for r in array if r is not None]
    return len(members) == len(set(members))


def owner_kept(current: Replicas, target: Replicas, array: Replicas) -> bool:
    """PLAN-OWNER: an owner index that is not empty before and after is never empty between."""
    return current[0] is None or target[0] is None or array[0] is not None


ARRAY_SPECS = {
    "PLAN-NO-DECREASE": no_decrease,
    "PLAN-HOTTER-FIRST": hotter_first,
    "PLAN-NO-DUPLICATE": no_duplicate,
    "PLAN-OWNER": owner_kept,
}
SAFETY_SPECS = frozenset(ARRAY_SPECS)


def judge_arrays(current: Replicas, target: Replicas, arrays: Sequence[Replicas],
                 specs: frozenset[str] = SAFETY_SPECS) -> list[tuple[str, int]]:
    """Every (spec, step) where an array breaks a safety spec; step 0 is `arrays[0]`."""
    return [(spec, step) for step, array in enumerate(arrays)
            for spec, holds in ARRAY_SPECS.items()
            if spec in specs and not holds(current, target, array)]


# --- plan predicates -----------------------------------------------------------------------


def migration_graph(current: Replicas, target: Replicas) -> nx.DiGraph:
    """An edge from the current holder of each index to its new holder (both present, different)."""
    graph = nx.DiGraph()
    for c, t in zip(current, target, strict=True):
        if c is not None and t is not None and c != t:
            graph.add_edge(c, t)
    return graph


def cycle(current: Replicas, target: Replicas) -> list[str] | None:
    """PLAN-NO-CYCLE's witness: members that would pass their indices round in a cycle."""
    try:
        edges = nx.find_cycle(migration_graph(current, target))
    except nx.NetworkXNoCycle:
        return None
    return [u for u, _ in edges]


def cycle_fixed(current: Replicas, target: Replicas) -> Replicas:
    """The target with its cyclic migrations cancelled (000 §3.2.1 "we cancel out cyclic
    migrations"): an index whose current and target holders lie on one cycle of the migration
    graph keeps its current holder; every other index keeps its target.

    PLAN-REACHES-TARGET and the array specs judge a plan against this, not against the planner's
    own cycle fix: a planner that cancels too much, or too little, then fails them. Each member
    holds one index, so the migration graph has at most one edge out of a member, and its cycles
    are its strongly connected components of more than one member.
    """
    graph = migration_graph(current, target)
    cyclic = {m for part in nx.strongly_connected_components(graph) if len(part) > 1
              for m in part}
    return tuple(c if c in cyclic and t in cyclic else t
                 for c, t in zip(current, target, strict=True))


def priority_breach(migrations: Sequence[Migration]) -> int | None:
    """PLAN-PRIORITY: the position of a COPY or SHIFT UP into an empty index (no source index)
    that could still move ahead of the migration before it, or None.

    000 §3.2.3 as Hazelcast implements it (``MigrationPlanner.prioritizeCopiesAndShiftUps``):
    such a migration goes ahead of every
    earlier migration until one that has no source index either, one that shares a participant
    with it, or a shift down to an index hotter than its destination.
    """
    for i in range(1, len(migrations)):
        m = migrations[i]
        if m.source_current_index != -1:
            continue
        o = migrations[i - 1]
        stops = (o.source_current_index == -1
                 or m.destination in (o.source, o.destination)
                 or (o.source_new_index != -1
                     and o.source_new_index < m.destination_new_index))
        if not stops:
            return i
    return None


# --- decision predicates ---------------------------------------------------------------------

#: the decision types of 000 §3.1, and CLEAR: a ``migrate`` call without a destination ("just
#: clear this replica index")
DECISION_TYPES = frozenset({"MOVE", "COPY", "SHIFT_UP", "SHIFT_DOWN", "CLEAR"})


def _call(d: Decision) -> str:
    def name(m: str | None) -> str:
        return "null" if m is None else m

    return (f"{d.type} migrate({name(d.source)}, {d.source_current_index}, "
            f"{d.source_new_index}, {name(d.destination)}, {d.destination_current_index}, "
            f"{d.destination_new_index})")


def decision_breach(array: Replicas, d: Decision) -> str | None:
    """PLAN-WELL-FORMED on one decision: why its six arguments break the contract of
    ``MigrationDecisionCallback.migrate`` on `array`, the planner's working array before it, or
    None.

    000 §3.1 and ``MigrationPlanner.planMigrations`` (its calls, case by case; ``-1`` is "not a
    replica" as a current index and "no replica any more" as a new one). With ``S`` the source,
    ``D`` the destination and ``i`` the index the decision is about:

    ======================  ============================  ==========================================
    type                    migrate(...)                  on the working array
    ======================  ============================  ==========================================
    CLEAR                   (S, i, -1, null, -1, -1)      S holds i
    COPY                    (null, -1, -1, D, -1, i)      i empty, D no replica
    MOVE                    (S, i, -1, D, -1, i)          S holds i, D no replica
    SHIFT_DOWN              (S, i, k, D, -1, i)           S holds i, k > i empty, D no replica
    SHIFT_UP (empty index)  (null, -1, -1, D, j, i)       i empty, D holds j
    SHIFT_UP (over S)       (S, i, -1 or k, D, j, i)      S holds i, D holds j, k empty
    ======================  ============================  ==========================================

    So no other call has a null destination or a destination new index of -1; a source is
    null exactly when both its indices are -1; a destination with a current index holds it, one
    without holds no index; a destination that replaces a source takes the source's index. (A
    SHIFT UP's destination may come from a hotter index than ``i``: the chain walk of
    ``planMigrations`` lets it.) The partition service counts a migration's partition version
    increment and its participants' replica data from these arguments (000 "API design").
    """
    s, sc, sn = d.source, d.source_current_index, d.source_new_index
    dst, dc, dn = d.destination, d.destination_current_index, d.destination_new_index
    n = len(array)

    def bad(why: str) -> str:
        return f"{_call(d)} on {_show(array)}: {why}"

    if d.type not in DECISION_TYPES:
        return bad(f"{d.type!r} is not a decision type ({', '.join(sorted(DECISION_TYPES))})")
    for what, index in (("source_current_index", sc), ("source_new_index", sn),
                        ("destination_current_index", dc), ("destination_new_index", dn)):
        if not -1 <= index < n:
            return bad(f"{what} {index} is no replica index of a {n}-index array, nor -1")
    if (s is None) != (sc == -1):
        return bad("a source is null exactly when its current index is -1")
    if s is not None and array[sc] != s:
        return bad(f"the source does not hold its current index {sc}")
    if s is None and sn != -1:
        return bad("a null source has -1 as its new index")
    if d.type == "CLEAR":
        if s is None or sn != -1 or dst is not None or dc != -1 or dn != -1:
            return bad("a clear has a source, no destination, and -1 at every index but the "
                       "source's current one")
        return None
    if dst is None or dn == -1:
        return bad("only a clear has no destination (a null destination, or -1 as its new "
                   "index)")
    if dc == -1 and dst in array:
        return bad(f"the destination holds index {array.index(dst)}, but its current index "
                   "is -1")
    if dc != -1 and (dc == dn or array[dc] != dst):
        return bad(f"the destination does not hold its current index {dc}, or stays there")
    if s is None and array[dn] is not None:
        return bad(f"without a source the destination fills an empty index, and {dn} holds "
                   f"{array[dn]}")
    if s is not None and dn != sc:
        return bad("the destination takes the source's index")
    if sn != -1 and (sn == sc or array[sn] is not None):
        return bad(f"the source moves to an empty index other than its own, and {sn} is not one")
    shape = {
        "COPY": s is None and dc == -1,
        "MOVE": s is not None and sn == -1 and dc == -1,
        "SHIFT_DOWN": s is not None and sn > sc and dc == -1,
        "SHIFT_UP": dc != -1,
    }
    if not shape[d.type]:
        return bad(f"not the arguments of a {d.type}")
    return None


def applied(array: Replicas, d: Decision) -> Replicas:
    """The working array after `d`: its source's and destination's current indices emptied, the
    destination at its new index and the source at its new one (000 §3.1)."""
    out = list(array)
    for index in (d.source_current_index, d.destination_current_index):
        if 0 <= index < len(out):
            out[index] = None
    if d.destination is not None and 0 <= d.destination_new_index < len(out):
        out[d.destination_new_index] = d.destination
    if d.source is not None and 0 <= d.source_new_index < len(out):
        out[d.source_new_index] = d.source
    return tuple(out)


def malformed(current: Replicas, decisions: Sequence[Decision]) -> tuple[int, str] | None:
    """PLAN-WELL-FORMED: the position of the first decision, in the order the planner makes
    them (clears included), whose arguments break the callback's contract on the working array
    the decisions before it leave (`decision_breach`), with why; or None."""
    array = tuple(current)
    for k, d in enumerate(decisions):
        why = decision_breach(array, d)
        if why is not None:
            return k, why
        array = applied(array, d)
    return None


def _show(array: Sequence[str | None]) -> str:
    return "[" + ",".join("-" if r is None else r for r in array) + "]"


# --- monitors: a plan as the master's log shows it -----------------------------------------------


class Call(NamedTuple):
    """A ``migrate`` call read from a log: a decision (its `type`) or a queued migration (type
    ``""``: the order record does not say)."""

    type: str
    source: str | None
    source_current_index: int
    source_new_index: int
    destination: str | None
    destination_current_index: int
    destination_new_index: int

    @property
    def args(self) -> tuple[str | None, int, int, str | None, int, int]:
        return (self.source, self.source_current_index, self.source_new_index,
                self.destination, self.destination_current_index, self.destination_new_index)


def _lost_owner(c: Call) -> bool:
    """``MigrationCollector``'s lost owner assignment (a COPY to index 0): applied at once."""
    return (c.type != "CLEAR" and c.source is None and c.destination_current_index == -1
            and c.destination_new_index == 0)


class Seen(NamedTuple):
    """One plan of one partition on one master, as far as its log shows it: the `current`
    replicas, the `target` (before the cycle fix), the planner's own cycle-fixed target when it
    logged one, whether a pass of its loop was seen and the working array of the last one, the
    array the decisions so far leave (`array`), the array once the clears and a lost owner are
    applied (`start`: the master applies those at once), the decisions it queued in the order
    made, and how many decisions it made. `whole` is False once a decision could not be read
    whole (a source at an index of a working array the log did not show); `reported` once this
    monitor reported on the plan (one report a plan)."""

    current: Replicas
    target: Replicas | None = None
    fixed: Replicas | None = None
    passes: bool = False
    working: Replicas | None = None
    array: Replicas = ()
    start: Replicas = ()
    queued: tuple[Call, ...] = ()
    made: int = 0
    whole: bool = True
    reported: bool = False


def _begin(current: Replicas, target: Replicas | None = None) -> Seen:
    return Seen(current=current, target=target, array=current, start=current)


def _read_call(e: PlanDecision, working: Replicas | None) -> Call | None:
    """The decision's six arguments: a source the line does not name is the member the working
    array holds at its current index (None when the log showed no working array)."""
    source = e.source_member
    if source is None and e.source_current_index >= 0:
        if working is None:
            return None
        index = e.source_current_index
        source = working[index] if index < len(working) else None
    return Call(e.kind, source, e.source_current_index, e.source_new_index, e.destination,
                e.destination_current_index, e.destination_new_index)


class PlanMonitor(Monitor):
    """A PLAN-* spec on the `plan_*` events (000 §3.2), per master and partition: the plan is
    rebuilt from its events, judged, and forgotten at its order record (`PlanOrder`), which ends
    it; a new plan of the partition (``Planning migrations``, ``Initial state``) starts afresh.
    What the log did not show (a plan whose start it missed, a source it cannot name) is not
    judged, nor is a plan whose arrays differ in length (not one partition's). Subclasses judge
    at three points: the planner's cycle-fixed target is known (its first pass starts), a
    decision, the order record."""

    key_size = 2
    observes: ClassVar[frozenset[str]] = frozenset(
        {"plan_started", "plan_state", "plan_decision", "plan_order"})
    #: whether the order record is judged only with the plan it ends (PLAN-PRIORITY needs none)
    needs_plan: ClassVar[bool] = True

    def key(self, event: Event) -> tuple[Hashable, ...] | None:
        return (event.member, event.partition)  # type: ignore[attr-defined]

    def initial(self) -> Hashable:
        return NO_PAIRS

    def observe(self, state: Hashable, event: Event) -> tuple[Hashable, str | None]:
        pairs: Pairs = state  # type: ignore[assignment]
        partition: int = event.partition  # type: ignore[attr-defined]
        key = (event.member, partition)
        seen: Seen | None = lookup(pairs, key)
        message = None
        if isinstance(event, PlanOrder):
            if seen is not None or not self.needs_plan:
                message = self.ordered(partition, seen,
                                       tuple(Call("", *m) for m in event.migrations))
            return frozenset(kv for kv in pairs if kv[0] != key), message
        forget = frozenset(kv for kv in pairs if kv[0] != key)
        if isinstance(event, PlanStarted):
            if len(event.current) != len(event.target):
                return forget, None  # not arrays of one partition: no plan to follow
            seen = _begin(event.current, event.target)
        elif isinstance(event, PlanState) and event.stage == "initial":
            seen = _begin(event.replicas)
        elif seen is None:
            return pairs, None
        elif isinstance(event, PlanState) and len(event.replicas) != len(seen.current):
            return forget, None  # an array of another length: not the plan followed
        elif isinstance(event, PlanState):
            if event.stage == "final":
                seen = seen._replace(target=event.replicas)
            elif event.stage == "cycle-fixed":
                seen = seen._replace(fixed=event.replicas)
            elif event.stage == "pass":
                if not seen.passes and seen.target is not None:
                    message = self.fixed(partition, seen, seen.fixed or seen.target)
                seen = seen._replace(passes=True, working=event.replicas)
        elif isinstance(event, PlanDecision):
            call = _read_call(event, seen.working)
            if call is None or not seen.whole:
                seen = seen._replace(whole=False)
            else:
                if not seen.reported:
                    message = self.decided(partition, seen, call)
                at_once = call.type == "CLEAR" or _lost_owner(call)
                seen = seen._replace(
                    array=applied(seen.array, call), made=seen.made + 1,
                    start=applied(seen.start, call) if at_once else seen.start,
                    queued=seen.queued if at_once else (*seen.queued, call))
        if message is not None:
            seen = seen._replace(reported=True)
        return assign(pairs, key, seen), message

    def fixed(self, partition: int, seen: Seen, fixed: Replicas) -> str | None:
        """The planner's target after its cycle fix is `fixed` (its first pass starts)."""
        return None

    def decided(self, partition: int, seen: Seen, call: Call) -> str | None:
        """The planner decides `call` on `seen.array`, the array the decisions before it
        leave."""
        return None

    def ordered(self, partition: int, seen: Seen | None, queued: tuple[Call, ...]
                ) -> str | None:
        """The plan ends: `queued` are its migrations in the order they run."""
        return None


def _arrays(seen: Seen | None, queued: tuple[Call, ...]) -> tuple[Replicas, ...] | None:
    """The arrays the partition goes through (the clears and a lost owner applied at once, then
    each migration in order), when the log showed the whole plan: its current and target arrays
    and every decision, those it queued being the order record's migrations."""
    if seen is None or seen.target is None or not seen.whole or \
            Counter(c.args for c in seen.queued) != Counter(c.args for c in queued):
        return None
    out = [seen.start]
    for m in queued:
        out.append(applied(out[-1], m))
    return tuple(out)


def _replicas(n: int) -> str:
    return f"{n} replica" + ("" if n == 1 else "s")


def _when(step: int, steps: int) -> str:
    return "after the clears" if step == 0 else f"after migration {step} of {steps}"


def _width(*arrays: Sequence[str | None]) -> int:
    """The indices worth showing: up to the last one any of `arrays` holds (a log's arrays have
    seven)."""
    return max([1] + [i + 1 for a in arrays for i, r in enumerate(a) if r is not None])


class _ArraySpec(PlanMonitor):
    """PLAN-NO-DECREASE, PLAN-HOTTER-FIRST, PLAN-NO-DUPLICATE, PLAN-OWNER on a logged plan: the
    array spec on each array the partition goes through, against the spec's cycle-fixed target
    (`cycle_fixed`), judged at the order record."""

    holds: ClassVar[Callable[[Replicas, Replicas, Replicas], bool]]

    def ordered(self, partition: int, seen: Seen | None, queued: tuple[Call, ...]
                ) -> str | None:
        arrays = _arrays(seen, queued)
        if seen is None or seen.target is None or arrays is None:
            return None
        target = cycle_fixed(seen.current, seen.target)
        for step, array in enumerate(arrays):
            if not type(self).holds(seen.current, target, array):
                w = _width(seen.current, seen.target, *arrays)
                return (f"partition {partition}: {_show(array[:w])} {_when(step, len(queued))}"
                        f", {self.why(seen.current, target, array)}, in the plan from "
                        f"{_show(seen.current[:w])} to {_show(target[:w])}")
        return None

    def why(self, current: Replicas, target: Replicas, array: Replicas) -> str:
        raise NotImplementedError


class NoDecreaseOnLog(_ArraySpec):
    """PLAN-NO-DECREASE on the plans a master's log shows."""

    spec = "PLAN-NO-DECREASE"
    holds = staticmethod(no_decrease)

    def why(self, current: Replicas, target: Replicas, array: Replicas) -> str:
        return (f"{_replicas(count(array))} where current and target hold {count(current)} "
                f"and {count(target)}")


class HotterFirstOnLog(_ArraySpec):
    """PLAN-HOTTER-FIRST on the plans a master's log shows."""

    spec = "PLAN-HOTTER-FIRST"
    holds = staticmethod(hotter_first)

    def why(self, current: Replicas, target: Replicas, array: Replicas) -> str:
        p = next(p for p in range(1, len(array) + 1)
                 if count(array[:p]) < min(count(current[:p]), count(target[:p])))
        return (f"{_replicas(count(array[:p]))} at indices 0 to {p - 1} where current and "
                f"target hold {count(current[:p])} and {count(target[:p])}")


class NoDuplicateOnLog(_ArraySpec):
    """PLAN-NO-DUPLICATE on the plans a master's log shows."""

    spec = "PLAN-NO-DUPLICATE"
    holds = staticmethod(no_duplicate)

    def why(self, current: Replicas, target: Replicas, array: Replicas) -> str:
        twice = next(r for r in array if r is not None and array.count(r) > 1)
        return f"{twice} holds two indices"


class OwnerOnLog(_ArraySpec):
    """PLAN-OWNER on the plans a master's log shows."""

    spec = "PLAN-OWNER"
    holds = staticmethod(owner_kept)

    def why(self, current: Replicas, target: Replicas, array: Replicas) -> str:
        return "no owner where current and target have one"


class ReachesTargetOnLog(PlanMonitor):
    """PLAN-REACHES-TARGET on the plans a master's log shows: once every migration of the order
    record has run, the partition holds the spec's cycle-fixed target (`cycle_fixed`)."""

    spec = "PLAN-REACHES-TARGET"

    def ordered(self, partition: int, seen: Seen | None, queued: tuple[Call, ...]
                ) -> str | None:
        arrays = _arrays(seen, queued)
        if seen is None or seen.target is None or arrays is None:
            return None
        target = cycle_fixed(seen.current, seen.target)
        if arrays[-1] == target:
            return None
        w = _width(seen.current, seen.target, *arrays)
        return (f"partition {partition}: the plan from {_show(seen.current[:w])} ends at "
                f"{_show(arrays[-1][:w])}, not {_show(target[:w])}")


class NoCycleOnLog(PlanMonitor):
    """PLAN-NO-CYCLE on the plans a master's log shows: the target the planner works towards
    (its ``Final state (after cycle fix)``, or its ``Final state`` when it logged no fix) passes
    no indices round in a cycle; judged as its first pass starts."""

    spec = "PLAN-NO-CYCLE"
    observes: ClassVar[frozenset[str]] = frozenset({"plan_started", "plan_state", "plan_order"})

    def fixed(self, partition: int, seen: Seen, fixed: Replicas) -> str | None:
        members = cycle(seen.current, fixed)
        if members is None:
            return None
        w = _width(seen.current, fixed)
        return (f"partition {partition}: {' -> '.join(members)} still pass their indices round "
                f"from {_show(seen.current[:w])} to the planner's target {_show(fixed[:w])}")


class PriorityOnLog(PlanMonitor):
    """PLAN-PRIORITY on the order a master's log shows a partition's migrations run in
    (``Migration order after prioritization``): the record alone is enough."""

    spec = "PLAN-PRIORITY"
    observes: ClassVar[frozenset[str]] = frozenset({"plan_order"})
    needs_plan = False

    def ordered(self, partition: int, seen: Seen | None, queued: tuple[Call, ...]
                ) -> str | None:
        breach = priority_breach(queued)
        if breach is None:
            return None
        m = queued[breach]
        return (f"partition {partition}: migration {breach + 1} of {len(queued)} ({m.destination}"
                f" to index {m.destination_new_index}, no source index) could go before "
                f"migration {breach}")


class WellFormedOnLog(PlanMonitor):
    """PLAN-WELL-FORMED on the decisions a master's log shows, each against the array the
    decisions before it leave from the current replicas (`decision_breach`); the first that
    breaks the contract of ``migrate`` is reported, once a plan."""

    spec = "PLAN-WELL-FORMED"
    observes: ClassVar[frozenset[str]] = frozenset(
        {"plan_started", "plan_state", "plan_decision", "plan_order"})

    def decided(self, partition: int, seen: Seen, call: Call) -> str | None:
        why = decision_breach(seen.array, call)
        return None if why is None else f"partition {partition}: decision {seen.made + 1}: {why}"


register(Spec(
    id="PLAN-NO-DECREASE", title="Never decrease the available replica count",
    statement="No intermediate replica array of a partition's plan (after the clears, after each "
              "migration) has fewer replicas than min(count(current), count(target)).",
    seed="000", section="§3.2 Performing Migrations With Maintaining Data Safety",
    kind="state invariant", z3="models/planner_oracle.py",
    monitor=NoDecreaseOnLog))
register(Spec(
    id="PLAN-HOTTER-FIRST", title="Hotter replicas are available earlier",
    statement="For every prefix of indices 0..p, no intermediate array holds fewer replicas there "
              "than min(current, target) do: a colder index gives way before a hotter one.",
    seed="000", section="§3.2 principles; §3.2.2 example 6", kind="state invariant",
    z3="models/planner_oracle.py",
    rationale="Example 6 prefers emptying index 3 (SHIFT UP D from 3 to 1) to emptying index 1 "
              "(SHIFT UP B from 1 to 0): the target already gives up index 3.",
    monitor=HotterFirstOnLog))
register(Spec(
    id="PLAN-REACHES-TARGET", title="The plan reaches the cycle-fixed target",
    statement="Applying the clears and then every migration in execution order to the current "
              "array gives exactly the target after cycle fixing.",
    seed="000", section="§3.2.2 Ordering Migrations", kind="quiescence check",
    monitor=ReachesTargetOnLog))
register(Spec(
    id="PLAN-NO-CYCLE", title="Cyclic migrations are cancelled",
    statement="In the cycle-fixed target no members pass their indices round in a cycle (the "
              "graph from each index's current holder to its new holder is acyclic).",
    seed="000", section="§3.2.1 Cycle Detection", kind="state invariant",
    monitor=NoCycleOnLog))
register(Spec(
    id="PLAN-PRIORITY", title="COPY and SHIFT UP migrations go first",
    statement="No COPY or SHIFT UP into an empty index follows a migration it may be moved ahead "
              "of: one with a source index, sharing no participant with it, and not a shift down "
              "to an index hotter than its destination.",
    seed="000", section="§3.2.3 Prioritization of COPY and SHIFT UP Migrations",
    kind="state invariant",
    rationale="Hazelcast's rule (MigrationPlanner.prioritizeCopiesAndShiftUps) is narrower "
              "than the design text: it compares "
              "indices only against shift downs, not against MOVEs.",
    monitor=PriorityOnLog))
register(Spec(
    id="PLAN-NO-DUPLICATE", title="No member twice in one partition",
    statement="No intermediate replica array holds one member at two indices.",
    seed="000", section="§3.2.2 (MigrationPlanner.assertNoDuplicate)", kind="state invariant",
    z3="models/planner_oracle.py",
    monitor=NoDuplicateOnLog))
register(Spec(
    id="PLAN-OWNER", title="The owner index never goes empty",
    statement="If the current and the target array both have an owner (index 0), every "
              "intermediate array has one.",
    seed="000", section="§3.2 principles", kind="state invariant",
    z3="models/planner_oracle.py",
    monitor=OwnerOnLog))
register(Spec(
    id="PLAN-WELL-FORMED", title="Decisions follow the migrate callback's contract",
    statement="Every planner decision's six arguments (source, its current and new index, "
              "destination, its current and new index) are those its type has in "
              "MigrationPlanner.planMigrations, on the array the decisions before it leave: a "
              "CLEAR has a source at its current index, no destination and -1 at every other "
              "index; a COPY no source and a destination new to the partition that fills an "
              "empty index; a MOVE, SHIFT DOWN or SHIFT UP over a source gives the destination "
              "the source's index, the source leaving (-1) or moving to an empty index; a "
              "SHIFT UP's destination leaves the index it holds.",
    seed="000", section="§3.1 (MigrationPlanner.MigrationDecisionCallback)", kind="state invariant",
    rationale="The master applies a CLEAR from its source's current index alone, but the "
              "partition service reads the other arguments too: the partition version "
              "increment, who clears its data on commit and on rollback (the current / new "
              "replica index rule, 000 \"API design\"). A decision whose array step is right "
              "and whose arguments are not passes every array spec.",
    monitor=WellFormedOnLog))


"""Migration planner specs (Hazelcast 3.7, design 000 §3): what a safe migration plan must keep.

A plan for one partition goes from the `current` replica array to the cycle-fixed `target`
through `arrays`: the current array with the clears applied (Hazelcast applies them at once),
then the array after each migration, in execution order. Index 0 is the owner; a smaller index is
hotter; `count` is the number of non-empty indices.

The array predicates here are the Python form of the specs for both the reference planner's
exhaustive check and the Z3 oracle (models/planner_oracle.py encodes the same definitions). The
decision predicates judge each decision's six ``migrate`` arguments against the working array the
decisions before it leave (PLAN-WELL-FORMED), clears included.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

import networkx as nx

from partsafe.specs.registry import Spec, register

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


register(Spec(
    id="PLAN-NO-DECREASE", title="Never decrease the available replica count",
    statement="No intermediate replica array of a partition's plan (after the clears, after each "
              "migration) has fewer replicas than min(count(current), count(target)).",
    seed="000", section="§3.2 Performing Migrations With Maintaining Data Safety",
    kind="state invariant", z3="models/planner_oracle.py"))
register(Spec(
    id="PLAN-HOTTER-FIRST", title="Hotter replicas are available earlier",
    statement="For every prefix of indices 0..p, no intermediate array holds fewer replicas there "
              "than min(current, target) do: a colder index gives way before a hotter one.",
    seed="000", section="§3.2 principles; §3.2.2 example 6", kind="state invariant",
    z3="models/planner_oracle.py",
    rationale="Example 6 prefers emptying index 3 (SHIFT UP D from 3 to 1) to emptying index 1 "
              "(SHIFT UP B from 1 to 0): the target already gives up index 3."))
register(Spec(
    id="PLAN-REACHES-TARGET", title="The plan reaches the cycle-fixed target",
    statement="Applying the clears and then every migration in execution order to the current "
              "array gives exactly the target after cycle fixing.",
    seed="000", section="§3.2.2 Ordering Migrations", kind="quiescence check"))
register(Spec(
    id="PLAN-NO-CYCLE", title="Cyclic migrations are cancelled",
    statement="In the cycle-fixed target no members pass their indices round in a cycle (the "
              "graph from each index's current holder to its new holder is acyclic).",
    seed="000", section="§3.2.1 Cycle Detection", kind="state invariant"))
register(Spec(
    id="PLAN-PRIORITY", title="COPY and SHIFT UP migrations go first",
    statement="No COPY or SHIFT UP into an empty index follows a migration it may be moved ahead "
              "of: one with a source index, sharing no participant with it, and not a shift down "
              "to an index hotter than its destination.",
    seed="000", section="§3.2.3 Prioritization of COPY and SHIFT UP Migrations",
    kind="state invariant",
    rationale="Hazelcast's rule (MigrationPlanner.prioritizeCopiesAndShiftUps) is narrower "
              "than the design text: it compares "
              "indices only against shift downs, not against MOVEs."))
register(Spec(
    id="PLAN-NO-DUPLICATE", title="No member twice in one partition",
    statement="No intermediate replica array holds one member at two indices.",
    seed="000", section="§3.2.2 (MigrationPlanner.assertNoDuplicate)", kind="state invariant",
    z3="models/planner_oracle.py"))
register(Spec(
    id="PLAN-OWNER", title="The owner index never goes empty",
    statement="If the current and the target array both have an owner (index 0), every "
              "intermediate array has one.",
    seed="000", section="§3.2 principles", kind="state invariant",
    z3="models/planner_oracle.py"))
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
              "and whose arguments are not passes every array spec."))


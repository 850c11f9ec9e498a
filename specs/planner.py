"""Migration planner specs (Hazelcast 3.7, design 000 §3): what a safe migration plan must keep.

A plan for one partition goes from the `current` replica array to the cycle-fixed `target`
through `arrays`: the current array with the clears applied (Hazelcast applies them at once),
then the array after each migration, in execution order. Index 0 is the owner; a smaller index is
hotter; `count` is the number of non-empty indices.

The array predicates here are the Python form of the specs for both the reference planner's
exhaustive check and the Z3 oracle (models/planner_oracle.py encodes the same definitions).
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

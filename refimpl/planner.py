"""The migration planner of one partition (000 §3.2 "Performing Migrations With Maintaining Data
Safety"), as Hazelcast's ``MigrationPlanner`` implements it.

A partition's replicas are a tuple indexed by replica index: index 0 is the owner, indices 1 to 6
are backups, and a smaller index is *hotter* (000 §3; Hazelcast's ``InternalPartition``).
``None`` is an empty index.

Given the current replicas and the target produced by repartitioning (000 §3.2 step 3), the planner

1. cancels cyclic migrations, writing the current owner back into every position of a cycle
   (000 §3.2.1; ``isCyclic``, ``fixCycle``: :func:`is_cyclic`, :func:`is_cyclic_at`,
   :func:`fix_cycle`);
2. walks the replica indices from hot to cold and emits one decision per step, the six arguments
   of ``MigrationDecisionCallback.migrate`` (000 §3.2.2 "Migration ordering algorithm";
   ``planMigrations``, cases (a) to (f) and the chain helper): :func:`plan_decisions`;
3. moves COPY and SHIFT UP-into-an-empty-slot migrations ahead of non-conflicting ones
   (000 §3.2.3, narrowed by ``prioritizeCopiesAndShiftUps``): :func:`prioritize`.

The master applies a clear at once and queues every other decision as a migration; each committed
migration changes the table as :func:`apply` says (``MigrationManager.applyMigration``).
:func:`plan` puts these together as a :class:`Plan`.

The variant ``"hz37-naive-order"`` is the flaw 000 §3 opens with: migrations decided in index
order without looking for a colder migration first, so that a SHIFT UP drops the displaced holder
and the available replica count decreases (000 §3 "Case 1 of Shift Up Migration", §3.2.2 fifth
example).

Where the source reads an array of length 7 (``MAX_REPLICA_COUNT``) while the input is shorter,
this module works on the input length; the two are the same once both arrays are padded with
``None`` to length 7.

One file: `MigrationPlanner.planMigrations` is one algorithm (cycle fix, the ordering loop, the
prioritisation, the variants), ported method by method so it reads beside the source.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from partsafe.refimpl.variants import Variant, variant_table
from partsafe.traces import events as ev

__all__ = [
    "DECISION_TYPES",
    "MAX_REPLICA_COUNT",
    "VARIANTS",
    "VARIANT_TABLE",
    "Decision",
    "Plan",
    "PlannerAssertion",
    "PlannerError",
    "Replicas",
    "apply",
    "fix_cycle",
    "format_replicas",
    "is_cyclic",
    "is_cyclic_at",
    "parse_replicas",
    "plan",
    "plan_decisions",
    "plan_events",
    "prioritize",
    "replica_count",
]

#: One partition's replica array: index 0 is the owner, a hotter index is a smaller one, ``None``
#: is an empty index (Hazelcast's ``InternalPartition``).
Replicas = tuple[str | None, ...]

#: ``InternalPartition.MAX_REPLICA_COUNT`` = ``MAX_BACKUP_COUNT + 1``.
MAX_REPLICA_COUNT = 7

#: the variants (refimpl/variants.py): the current planner, the flaw 000 §3 opens with, and two
#: design questions
VARIANT_TABLE: dict[str, Variant] = variant_table(
    Variant("fixed", "the current planner, Hazelcast's MigrationPlanner"),
    Variant("hz37-naive-order", "the index-order planner whose flaw 000 §3 and §3.2.2 (fifth "
            "example) describe: index order, no chain walk", breaks="PLAN-NO-DECREASE"),
    Variant("keep-cycles", "design question of 000 §3.2.1: the current planner run on a target "
            "whose cycles are not cancelled"),
    Variant("no-prioritize", "design question of 000 §3.2.3: the current decisions, run in the "
            "order made, COPY and SHIFT UP not moved ahead"),
)
#: the names of `VARIANT_TABLE` as they were at import
VARIANTS: tuple[str, ...] = tuple(VARIANT_TABLE)

#: The decision types (000 §3.1), plus CLEAR for "just clear this replica index" (a ``migrate``
#: call with no destination).
DECISION_TYPES: tuple[str, ...] = ("MOVE", "COPY", "SHIFT_UP", "SHIFT_DOWN", "CLEAR")


class PlannerError(ValueError):
    """Bad input to the planner: arrays of different lengths, a length of 0 or more than
    ``MAX_REPLICA_COUNT``, a member twice in one array, an unknown variant, a malformed text."""


class PlannerAssertion(PlannerError):
    """One of the planner's own assertions failed (an ``assert`` of ``MigrationPlanner``);
    ``str()`` is the message Hazelcast would log with the ``AssertionError``."""


# --- decisions ---------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Decision:
    """One call of ``MigrationDecisionCallback.migrate``, with its type.

    ``-1`` as a current index means "not a replica before", as a new index "not a replica after".
    A clear has ``destination is None`` and every index but ``source_current_index`` at ``-1``.
    ``type`` is named after the case of :meth:`_Planner.step` that emitted the decision (000 §3.1).
    ``case`` and ``returns_to`` are how the planner's FINEST line words it beyond its type (they
    take no part in comparisons): ``MOVE-2`` (the chain walk's MOVE at a colder index) and
    ``MOVE-3`` (a MOVE whose holder comes back at a colder index later), and the index ``k`` of a
    SHIFT UP whose displaced holder "will get another MOVE migration to index: k".
    """

    type: str
    source: str | None
    source_current_index: int
    source_new_index: int
    destination: str | None
    destination_current_index: int
    destination_new_index: int
    case: str = field(default="", compare=False)
    returns_to: int = field(default=-1, compare=False)

    def __post_init__(self) -> None:
        if self.type not in DECISION_TYPES:
            raise PlannerError(f"unknown decision type {self.type!r}; expected one of "
                               f"{', '.join(DECISION_TYPES)}")

    @property
    def is_clear(self) -> bool:
        """A "just clear this replica index" call: no destination."""
        return self.destination is None

    @property
    def args(self) -> tuple[str | None, int, int, str | None, int, int]:
        """The six arguments of ``migrate``, in their order."""
        return (self.source, self.source_current_index, self.source_new_index,
                self.destination, self.destination_current_index, self.destination_new_index)

    def as_dict(self) -> dict[str, Any]:
        """The decision as plain data (type plus the six ``migrate`` arguments)."""
        return {
            "type": self.type,
            "source": self.source,
            "source_current_index": self.source_current_index,
            "source_new_index": self.source_new_index,
            "destination": self.destination,
            "destination_current_index": self.destination_current_index,
            "destination_new_index": self.destination_new_index,
        }

    def __str__(self) -> str:
        s, sc, sn, d, dc, dn = self.args
        return f"{self.type} migrate({_name(s)}, {sc}, {sn}, {_name(d)}, {dc}, {dn})"


def _clear(source: str, index: int) -> Decision:
    return Decision("CLEAR", source, index, -1, None, -1, -1)


# --- helpers -------------------------------------------------------------------------------------


def _name(member: str | None) -> str:
    return "null" if member is None else member


def _java(replicas: Sequence[str | None]) -> str:
    """``Arrays.toString`` of a replica array, as in the planner's messages."""
    return "[" + ", ".join(_name(r) for r in replicas) + "]"


def _index(replicas: Sequence[str | None], member: str | None) -> int:
    """``getReplicaIndex``: -1 for ``None`` or an absent member, else the first index holding it."""
    if member is None:
        return -1
    for i, r in enumerate(replicas):
        if r == member:
            return i
    return -1


def replica_count(replicas: Sequence[str | None]) -> int:
    """The available replica count: the number of non-empty indices (000 §3.2)."""
    return sum(r is not None for r in replicas)


def _check_array(replicas: Sequence[str | None], what: str) -> Replicas:
    if isinstance(replicas, str):
        raise PlannerError(f"{what} must be a sequence of members, not the string {replicas!r}; "
                           "use parse_replicas() for text")
    arr = tuple(replicas)
    if not 1 <= len(arr) <= MAX_REPLICA_COUNT:
        raise PlannerError(f"{what} has length {len(arr)}; a replica array has 1 to "
                           f"{MAX_REPLICA_COUNT} indices")
    seen: dict[str, int] = {}
    for i, r in enumerate(arr):
        if r is None:
            continue
        if not isinstance(r, str) or not r:
            raise PlannerError(f"{what}[{i}] is {r!r}; a member is a non-empty string or None")
        if r in seen:
            raise PlannerError(f"{what} holds member {r!r} twice, at indices {seen[r]} and {i}: "
                               f"{_java(arr)}")
        seen[r] = i
    return arr


def _check_pair(current: Sequence[str | None],
                target: Sequence[str | None]) -> tuple[Replicas, Replicas]:
    cur = _check_array(current, "current")
    tgt = _check_array(target, "target")
    if len(cur) != len(tgt):
        raise PlannerError(f"Replica addresses with different lengths! Old: {_java(cur)}, "
                           f"New: {_java(tgt)} (current has {len(cur)} indices, target "
                           f"{len(tgt)})")
    return cur, tgt


def parse_replicas(text: str) -> Replicas:
    """Parse ``"A,-,C"`` into ``("A", None, "C")``: comma-separated members, ``-`` for an empty
    index, whitespace around items ignored (at most ``MAX_REPLICA_COUNT`` indices, no member
    twice)."""
    items = [item.strip() for item in text.split(",")]
    if len(items) > MAX_REPLICA_COUNT:
        raise PlannerError(f"{text!r} has {len(items)} indices; a replica array has at most "
                           f"{MAX_REPLICA_COUNT}")
    out: list[str | None] = []
    seen: dict[str, int] = {}
    for i, item in enumerate(items):
        if not item:
            raise PlannerError(f"{text!r}: empty item at index {i}; write '-' for an empty "
                               "replica index")
        if item == "-":
            out.append(None)
            continue
        if item in seen:
            raise PlannerError(f"{text!r}: member {item!r} appears twice, at indices "
                               f"{seen[item]} and {i}")
        seen[item] = i
        out.append(item)
    return tuple(out)


def format_replicas(replicas: Sequence[str | None]) -> str:
    """The inverse of :func:`parse_replicas`: ``("A", None, "C")`` becomes ``"A,-,C"``."""
    return ",".join("-" if r is None else r for r in replicas)


# --- cycles (000 §3.2.1; ``isCyclic``, ``fixCycle``) ---------------------------------------------


def is_cyclic_at(current: Sequence[str | None], target: Sequence[str | None], i: int) -> bool:
    """``isCyclic(current, target, i)``: follow "where does the holder of f go" from ``i`` and
    report whether it comes back to ``i``. ``target[i]`` must be non-null."""
    new_owner = target[i]
    if new_owner is None:
        raise PlannerError(f"is_cyclic_at: target[{i}] is empty; the cycle walk starts at an "
                           "index whose target is a member")
    f = i
    # the walk follows an injective map, so it ends within len(current) steps
    for _ in range(len(current) + 1):
        nxt = _index(target, current[f])
        if nxt == -1 or nxt == f:
            return False
        if new_owner == current[nxt]:
            return True
        f = nxt
    raise PlannerAssertion(f"cycle walk from index {i} did not end: CURRENT: {_java(current)}, "
                           f"TARGET: {_java(target)}")


def _cycle_starts(current: Replicas, target: Sequence[str | None]) -> list[int]:
    return [i for i, (c, t) in enumerate(zip(current, target, strict=True))
            if c is not None and t is not None and c != t]


def is_cyclic(current: Sequence[str | None], target: Sequence[str | None]) -> bool:
    """``isCyclic(current, target)``: some index whose current and target members are both
    non-null and differ lies on a cycle of migrations (000 §3.2.1)."""
    cur, tgt = _check_pair(current, target)
    return any(is_cyclic_at(cur, tgt, i) for i in _cycle_starts(cur, tgt))


def _fix_cycle(current: Replicas, target: list[str | None]) -> bool:
    """``fixCycle`` in place on ``target``; True if a cycle was fixed."""
    fixed = False
    for i in range(len(current)):
        c, t = current[i], target[i]
        if c is None or t is None or c == t:
            continue
        if is_cyclic_at(current, target, i):
            idx = i
            while True:
                nxt = _index(target, current[idx])
                target[idx] = current[idx]
                if nxt == -1:
                    break
                idx = nxt
            fixed = True
    return fixed


def fix_cycle(current: Sequence[str | None], target: Sequence[str | None]) -> Replicas:
    """The target with every cycle cancelled: the current owner is written back into each
    position of a cycle, while the other positions keep their new targets (000 §3.2.1 "we
    cancel out cyclic migrations"). Unlike ``fixCycle``, returns a new tuple."""
    cur, tgt = _check_pair(current, target)
    out = list(tgt)
    _fix_cycle(cur, out)
    return tuple(out)


# --- the planner (000 §3.2.2; ``planMigrations``) ------------------------------------------------


class _Planner:
    """``MigrationPlanner.planMigrations`` on one partition, with its working array ``state``.

    The decisions are collected in ``decisions`` in the order the callback would see them.
    """

    def __init__(self, initial: Replicas, target: Replicas, partition_id: int = 0) -> None:
        self.initial = initial
        self.target = target
        self.state: list[str | None] = list(initial)
        self.partition_id = partition_id
        self.decisions: list[Decision] = []
        #: each pass of the main loop: its index, the working array as it starts (the planner's
        #: ``Current index: %d, state: %s`` line) and how many decisions came before it
        self.passes: list[tuple[int, Replicas, int]] = []

    # -- messages and assertions (worded as the source's)

    def _tail(self) -> str:
        return (f"INITIAL: {_java(self.initial)}, CURRENT: {_java(self.state)}, "
                f"FINAL: {_java(self.target)}")

    def _fail(self, what: str) -> PlannerAssertion:
        return PlannerAssertion(f"partitionId={self.partition_id}, {what} {self._tail()}")

    def assert_no_duplicate(self) -> None:
        """``assertNoDuplicate``: no member twice in ``state``."""
        seen: set[str] = set()
        for r in self.state:
            if r is None:
                continue
            if r in seen:
                raise self._fail("Migration decision algorithm failed! DUPLICATE REPLICA "
                                 "ADDRESSES!")
            seen.add(r)

    def _migrate(self, kind: str, source: str | None, source_current: int, source_new: int,
                 destination: str | None, destination_current: int, destination_new: int) -> None:
        self.decisions.append(Decision(kind, source, source_current, source_new, destination,
                                       destination_current, destination_new))

    def _worded(self, case: str = "", returns_to: int = -1) -> None:
        """Give the decision just made the wording of its FINEST line (`Decision.case`)."""
        self.decisions[-1] = dataclasses.replace(self.decisions[-1], case=case,
                                                 returns_to=returns_to)

    def _pass(self, i: int) -> None:
        """A pass of the main loop starts at index ``i``."""
        self.passes.append((i, tuple(self.state), len(self.decisions)))

    # -- the main loop

    def run(self) -> None:
        """The main loop of ``planMigrations``, then its final check."""
        state, target = self.state, self.target
        n = len(target)
        i = 0
        # every pass either advances i or fills an index with its target member; the bound only
        # turns a (never observed) endless loop into an error
        budget = 4 * n * n + 16
        while i < n:
            budget -= 1
            if budget < 0:
                raise self._fail("Migration decision algorithm did not terminate!")
            self._pass(i)
            self.assert_no_duplicate()
            i = self.step(i)
        if state != list(target):
            raise PlannerAssertion(f"partitionId={self.partition_id}, Migration decisions "
                                   f"failed! INITIAL: {_java(self.initial)} CURRENT: "
                                   f"{_java(state)}, FINAL: {_java(target)}")

    def step(self, i: int) -> int:
        """One pass of the main loop at index ``i``: the first matching case (a) to (f) of
        ``planMigrations``. Returns the next index to examine."""
        state, target = self.state, self.target
        want = target[i]
        have = state[i]
        # (a) target slot empty: clear it ("New address is null at index")
        if want is None:
            if have is not None:
                self._migrate("CLEAR", have, i, -1, None, -1, -1)
                state[i] = None
            return i + 1
        # (b) current slot empty: COPY, or SHIFT UP into the empty slot ("SHIFT UP-2")
        if have is None:
            j = _index(state, want)
            if j == -1:
                self._migrate("COPY", None, -1, -1, want, -1, i)
                state[i] = want
                return i + 1
            if j > i:
                self._migrate("SHIFT_UP", None, -1, -1, state[j], j, i)
                state[i] = state[j]
                state[j] = None
                return i
            raise self._fail("Migration decision algorithm failed during SHIFT UP!")
        # (c) no change
        if have == want:
            return i + 1
        # (d) MOVE: the holder leaves the partition, the new member is new to it
        if _index(target, have) == -1 and _index(state, want) == -1:
            self._migrate("MOVE", have, i, -1, want, -1, i)
            state[i] = want
            return i + 1
        # (e) the new member is new to the partition, the holder goes to a colder index k
        if _index(state, want) == -1:
            k = _index(target, have)
            if not k > i:
                raise self._fail("Migration decision algorithm failed during SHIFT DOWN!")
            if state[k] is None:
                self._migrate("SHIFT_DOWN", have, i, k, want, -1, i)
                state[k] = have
            else:
                # "MOVE-3": the holder comes back to k through a later migration
                self._migrate("MOVE", have, i, -1, want, -1, i)
                self._worded("MOVE-3")
            state[i] = want
            return i + 1
        # (f) the new member already sits elsewhere: walk the chain toward colder indices
        self.chain(i)
        return i

    def chain(self, cur: int) -> None:
        """The chain helper, ``planMigrations(…, currentIndex)``:
        follow who-goes-where toward colder indices until a slot can be freed by a SHIFT UP or
        filled by a MOVE ("MOVE-2")."""
        state, target = self.state, self.target
        visited: set[int] = set()
        while True:
            if cur in visited:
                raise self._fail(f"Migration algorithm chain walk revisited index {cur}!")
            visited.add(cur)
            t = _index(state, target[cur])
            if t == -1:
                raise PlannerAssertion(
                    f"partitionId={self.partition_id}, Migration algorithm failed during SHIFT "
                    f"UP! {_name(target[cur])} is not present in {_java(state)}. INITIAL: "
                    f"{_java(self.initial)}, FINAL: {_java(target)}")
            if target[t] is None:
                holder = state[cur]
                if holder is None:
                    # unreachable from planMigrations: kept as in the source
                    self._migrate("SHIFT_UP", None, cur, -1, state[t], t, cur)
                    state[cur] = state[t]
                else:
                    n = _index(target, holder)
                    if n == -1:
                        # the displaced holder is no longer a replica
                        self._migrate("SHIFT_UP", holder, cur, -1, state[t], t, cur)
                        state[cur] = state[t]
                    elif state[n] is None:
                        # SHIFT UP and SHIFT DOWN together, atomically
                        self._migrate("SHIFT_UP", holder, cur, n, state[t], t, cur)
                        state[n] = holder
                        state[cur] = state[t]
                    else:
                        # SHIFT UP only: the holder will get another MOVE migration
                        self._migrate("SHIFT_UP", holder, cur, -1, state[t], t, cur)
                        self._worded(returns_to=n)
                        state[cur] = state[t]
                state[t] = None
                return
            if _index(state, target[t]) == -1:
                # "MOVE-2": a MOVE at the colder index t first
                self._migrate("MOVE", state[t], t, -1, target[t], -1, t)
                self._worded("MOVE-2")
                state[t] = target[t]
                return
            cur = t


class _NaivePlanner(_Planner):
    """The ``"hz37-naive-order"`` variant: each index in order, no chain walk (000 §3, §3.2.2
    fifth example). A member wanted at ``i`` that sits at a colder ``j`` is shifted up at once,
    dropping the holder of ``i``; the target is still reached."""

    def run(self) -> None:
        state, target = self.state, self.target
        for i, want in enumerate(target):
            self._pass(i)
            self.assert_no_duplicate()
            have = state[i]
            if want is None:
                if have is not None:
                    self._migrate("CLEAR", have, i, -1, None, -1, -1)
                    state[i] = None
                continue
            if have == want:
                continue
            j = _index(state, want)
            if j != -1:
                if not j > i:
                    raise self._fail("Migration decision algorithm failed during SHIFT UP!")
                self._migrate("SHIFT_UP", have, -1 if have is None else i, -1, want, j, i)
                if have is not None:
                    self._worded(returns_to=_index(target, have))
                state[j] = None
            elif have is None:
                self._migrate("COPY", None, -1, -1, want, -1, i)
            else:
                self._migrate("MOVE", have, i, -1, want, -1, i)
            state[i] = want
        if state != list(target):
            raise PlannerAssertion(f"partitionId={self.partition_id}, Migration decisions "
                                   f"failed! INITIAL: {_java(self.initial)} CURRENT: "
                                   f"{_java(state)}, FINAL: {_java(target)}")


def _check_variant(variant: str) -> None:
    if variant not in VARIANT_TABLE:
        raise PlannerError(f"unknown planner variant {variant!r}; expected one of "
                           f"{', '.join(VARIANT_TABLE)}")


def plan_decisions(current: Sequence[str | None], target: Sequence[str | None], *,
                   variant: str = "fixed", partition_id: int = 0,
                   passes: list[tuple[int, Replicas, tuple[Decision, ...]]] | None = None
                   ) -> tuple[Replicas, tuple[Decision, ...]]:
    """``planMigrations(partitionId, current, target, callback)`` (000 §3.2.2).

    Returns the cycle-fixed target and every decision in the order the callback receives them,
    clears included. ``partition_id`` only appears in assertion messages, as in the source.
    `passes`, when given, receives each pass of the main loop: its index, the working array as
    it starts and the decisions it made (`Plan.passes`). Raises :class:`PlannerError` for bad
    input and :class:`PlannerAssertion` when one of the planner's own assertions fails.
    """
    _check_variant(variant)
    cur, tgt = _check_pair(current, target)
    fixed = list(tgt)
    if variant != "keep-cycles":
        _fix_cycle(cur, fixed)
    planner_cls = _NaivePlanner if variant == "hz37-naive-order" else _Planner
    planner = planner_cls(cur, tuple(fixed), partition_id)
    planner.assert_no_duplicate()
    planner.run()
    if passes is not None:
        bounds = [k for _i, _w, k in planner.passes] + [len(planner.decisions)]
        passes += [(i, working, tuple(planner.decisions[bounds[n]:bounds[n + 1]]))
                   for n, (i, working, _k) in enumerate(planner.passes)]
    return planner.target, tuple(planner.decisions)


# --- applying a decision (``MigrationManager.applyMigration``) -----------------------------------


def apply(replicas: Sequence[str | None], decision: Decision) -> Replicas:
    """``MigrationManager.applyMigration``: clear the source's and the
    destination's current slots, put the destination at its new index and the source at its new
    index, in that order. A clear sets ``source_current_index`` to ``None`` as
    ``MigrationCollector`` does. Like the source, this does not check that the
    members are where the decision says they are."""
    slots = list(replicas)
    n = len(slots)

    def check(index: int, what: str, allow_missing: bool) -> None:
        if (index == -1 and allow_missing) or 0 <= index < n:
            return
        raise PlannerError(f"{decision}: {what} {index} is outside the replica array "
                           f"{_java(slots)}")

    if decision.is_clear:
        check(decision.source_current_index, "source_current_index", False)
        slots[decision.source_current_index] = None
        return tuple(slots)
    check(decision.source_current_index, "source_current_index", True)
    check(decision.source_new_index, "source_new_index", True)
    check(decision.destination_current_index, "destination_current_index", True)
    check(decision.destination_new_index, "destination_new_index", False)
    if decision.source_current_index > -1:
        slots[decision.source_current_index] = None
    if decision.destination_current_index > -1:
        slots[decision.destination_current_index] = None
    slots[decision.destination_new_index] = decision.destination
    if decision.source_new_index > -1:
        slots[decision.source_new_index] = decision.source
    return tuple(slots)


# --- prioritization (000 §3.2.3; ``prioritizeCopiesAndShiftUps``) --------------------------------


def _blocks(m: Decision, other: Decision) -> bool:
    """Whether the earlier ``other`` stops candidate ``m`` from moving ahead of it."""
    if other.source_current_index == -1:
        return True  # another COPY or shift-up into an empty slot
    if m.destination in (other.source, other.destination):
        return True  # a common participant: the two conflict
    # a shift-down to a hotter index than m's target
    return -1 < other.source_new_index < m.destination_new_index


def prioritize(migrations: Sequence[Decision]) -> tuple[Decision, ...]:
    """``prioritizeCopiesAndShiftUps`` (000 §3.2.3 as the source narrows it).

    Each migration with ``source_current_index == -1`` (a COPY or a SHIFT UP into an empty slot)
    moves ahead of the earlier migrations until the first that is itself such a migration, shares
    a participant with it, or shifts a source down to a hotter index than its target. The code
    does not compare indices against MOVEs: the candidate jumps any non-conflicting MOVE.
    Clears never reach this step (the master applies them at once) and are rejected.
    """
    out = list(migrations)
    for d in out:
        if d.is_clear:
            raise PlannerError(f"prioritize() takes queued migrations only; {d} is a clear, "
                               "which the master applies at once")
    for i in range(len(out)):
        m = out[i]
        if m.source_current_index != -1:
            continue
        k = i - 1
        while k >= 0 and not _blocks(m, out[k]):
            k -= 1
        if k + 1 != i:
            del out[i]
            out.insert(k + 1, m)
    return tuple(out)


# --- the whole plan -------------------------------------------------------------------------------


@dataclass(frozen=True)
class Plan:
    """What the master does for one partition once it is planned (``RedoPartitioningTask``).

    ``decisions`` are all callbacks in the order made; the clears among them are applied at once
    (``start``), the rest are queued, prioritized, as ``migrations``; ``steps[k]`` is the replica
    array after ``migrations[k]`` commits, so ``len(steps) == len(migrations)``. The
    ``"hz37-naive-order"`` variant queues its migrations in index order, unprioritized.
    """

    current: Replicas
    target: Replicas
    target_after_cycle_fix: Replicas
    decisions: tuple[Decision, ...]
    migrations: tuple[Decision, ...]
    steps: tuple[Replicas, ...]
    start: Replicas
    variant: str = "fixed"
    #: each pass of the planner's main loop: its index, the working array as it starts and the
    #: decisions it made (none or one), as the planner's FINEST lines show them (`plan_events`)
    passes: tuple[tuple[int, Replicas, tuple[Decision, ...]], ...] = ()

    @property
    def final(self) -> Replicas:
        """The array once every migration has committed."""
        return self.steps[-1] if self.steps else self.start

    @property
    def clears(self) -> tuple[Decision, ...]:
        """The clear decisions, in the order made."""
        return tuple(d for d in self.decisions if d.is_clear)

    @property
    def cycle_fixed(self) -> bool:
        """Whether the cycle fix changed the target (000 §3.2.1)."""
        return self.target != self.target_after_cycle_fix

    def min_replica_count(self) -> int:
        """The lowest available replica count from ``current`` through every step."""
        return min(replica_count(r) for r in (self.current, self.start, *self.steps))

    def as_dict(self) -> dict[str, Any]:
        """The plan as plain data."""
        return {
            "variant": self.variant,
            "current": list(self.current),
            "target": list(self.target),
            "target_after_cycle_fix": list(self.target_after_cycle_fix),
            "decisions": [d.as_dict() for d in self.decisions],
            "start": list(self.start),
            "migrations": [d.as_dict() for d in self.migrations],
            "steps": [list(s) for s in self.steps],
        }


def plan(current: Sequence[str | None], target: Sequence[str | None], *,
         variant: str = "fixed", partition_id: int = 0) -> Plan:
    """Plan one partition: fix cycles, decide (:func:`plan_decisions`), apply the clears at once,
    queue the rest prioritized (:func:`prioritize`; the naive variant keeps index order) and
    apply them one by one (:func:`apply`) (000 §3.2)."""
    _check_variant(variant)
    cur, tgt = _check_pair(current, target)
    recorded: list[tuple[int, Replicas, tuple[Decision, ...]]] = []
    fixed, decisions = plan_decisions(cur, tgt, variant=variant, partition_id=partition_id,
                                      passes=recorded)
    kept = {id(d) for d in decisions}
    passes = tuple((i, working, tuple(d for d in made if id(d) in kept))
                   for i, working, made in recorded)
    start = cur
    for d in decisions:
        if d.is_clear:
            start = apply(start, d)
    queued = tuple(d for d in decisions if not d.is_clear)
    migrations = (queued if variant in ("hz37-naive-order", "no-prioritize")
                  else prioritize(queued))
    steps: list[Replicas] = []
    state = start
    for m in migrations:
        state = apply(state, m)
        steps.append(state)
    return Plan(current=cur, target=tgt, target_after_cycle_fix=fixed, decisions=decisions,
                migrations=migrations, steps=tuple(steps), start=start, variant=variant,
                passes=passes)


# --- the planner's log (``MigrationManager`` and ``MigrationPlanner`` at FINEST) ---------------


def _lost_owner(d: Decision) -> bool:
    """``MigrationCollector``'s lost owner assignment: a COPY to index 0, applied at once."""
    return d.source is None and d.destination_current_index == -1 \
        and d.destination_new_index == 0


def plan_events(current: Sequence[str | None], target: Sequence[str | None], *,
                variant: str = "fixed", partition: int = 0, member: str = "A",
                order: int = 0) -> list[ev.Event]:
    """The events of master `member` planning `partition` from `current` to `target`, one for each
    FINEST line Hazelcast logs about it: ``MigrationManager``'s ``Planning migrations for
    partitionId=...``, then ``MigrationPlanner``'s initial and final states, the target after the
    cycle fix when it changed, each pass of the main loop with the decision it made, and the
    migrations in the order they run (``Migration order after prioritization``), without the
    clears and a lost owner's assignment, which ``MigrationCollector`` applies at once. The
    arrays are padded to ``MAX_REPLICA_COUNT`` indices, as Hazelcast's are; `order` numbers the
    events from there."""
    cur, tgt = _check_pair(current, target)
    pad = (None,) * (MAX_REPLICA_COUNT - len(cur))
    p = plan(cur + pad, tgt + pad, variant=variant, partition_id=partition)
    out: list[ev.Event] = [
        ev.PlanStarted(member=member, partition=partition, current=p.current, target=p.target),
        ev.PlanState(member=member, partition=partition, stage="initial", replicas=p.current),
        ev.PlanState(member=member, partition=partition, stage="final", replicas=p.target)]
    if p.cycle_fixed:
        out.append(ev.PlanState(member=member, partition=partition, stage="cycle-fixed",
                                replicas=p.target_after_cycle_fix))
    for index, working, made in p.passes:
        out.append(ev.PlanState(member=member, partition=partition, stage="pass",
                                replicas=working, index=index))
        out += [ev.PlanDecision(member=member, partition=partition, kind=d.type,
                                source_member=d.source,
                                source_current_index=d.source_current_index,
                                source_new_index=d.source_new_index, destination=d.destination,
                                destination_current_index=d.destination_current_index,
                                destination_new_index=d.destination_new_index, case=d.case,
                                returns_to=d.returns_to) for d in made]
    out.append(ev.PlanOrder(member=member, partition=partition, migrations=tuple(
        m.args for m in p.migrations if not _lost_owner(m))))
    return [dataclasses.replace(e, order=order + k) for k, e in enumerate(out)]

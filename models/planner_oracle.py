"""A Z3 oracle for the migration planner: the least number of migrations of a safe plan.

For one partition, given the `current` replica array and the `target` array (index 0 is the
owner, a smaller index is *hotter*, ``None`` is an empty index; 000 §3), the oracle
answers whether *some* sequence of migrations and clears turns `current` into `target` while every
intermediate array keeps the PLAN safety specs (000 §3.2 "Performing Migrations With Maintaining
Data Safety"), and what the least number of migrations of such a plan is. It is independent of
Hazelcast's ``MigrationPlanner``: it searches all plans, so it can tell whether the planner's
cycle cancelling (000 §3.2.1) and ordering (000 §3.2.2) are ever more conservative or longer than
necessary.

Steps (how one planner callback changes the partition table: Hazelcast's
``MigrationManager.applyMigration``), over an array ``S`` of ``n`` indices:

* A **migration** has the six fields of ``MigrationDecisionCallback.migrate``:
  ``(source, source_current_index, source_new_index, destination, destination_current_index,
  destination_new_index)``. The destination is a member of ``current`` or ``target`` and
  ``0 <= destination_new_index < n``; if ``destination_current_index > -1`` the destination sits
  there in ``S``, otherwise it is not in ``S``. If ``source_current_index > -1`` the source is the
  (non-empty) holder of that index, which differs from ``destination_current_index``; otherwise
  the source is ``None`` and ``source_new_index == -1``. The next array: clear the source's and
  the destination's current indices, put the destination at its new index, then the source at
  its new index (if any). A destination new index that holds someone else drops that holder; the
  specs judge whether that is safe.
* With ``strict_shift_down`` (the default) a source new index must be an **empty** index of
  ``S``, **colder** than the source's current index. That is the only shift down of the design
  and of Hazelcast: 000 §3.1.3 shifts the old holder *down* ("shifted down in the replica
  indices"), atomically only into an empty index (§3.1.3.1), while §3.1.3.2 (the index is
  occupied) is done as two MOVEs; ``MigrationPlanner`` passes a source new index only where
  ``state[k] == null``, with ``k > i`` asserted in case (e); in the chain helper
  (``planMigrations(…, currentIndex)``) it can only do so at ``cur == i``, where every hotter
  index already matches the target, so there too the new index is colder. Without it one
  migration may swap two replicas (``[A, B] -> [B, A]`` in one step), which 000 §3.2.1 rules out
  ("we can not perform them without decreasing the available replica count"), or move the source
  up to a hotter index.
* A **clear** empties one non-empty index. Hazelcast applies clears at once (``MigrationManager``'s
  ``MigrationCollector``: ``partition.setReplica(index, null)``); they are not migrations and do
  not count toward a plan's length.

Safety specs, judged on every array ``S_0 = current, S_1, ..., S_k = target`` (one array per
step, so after every clear too):

* ``PLAN-NO-DECREASE``: ``count(S_j) >= min(count(current), count(target))`` (000 §3.2, first
  principle).
* ``PLAN-HOTTER-FIRST``: for every prefix length ``p`` in ``1..n``,
  ``count(S_j[:p]) >= min(count(current[:p]), count(target[:p]))`` (000 §3.2, second principle;
  §3.2.2 example 6). ``p = n`` is NO-DECREASE.
* ``PLAN-NO-DUPLICATE``: no member twice in ``S_j`` (``MigrationPlanner.assertNoDuplicate``).
* ``PLAN-OWNER``: if ``current[0]`` and ``target[0]`` are both set, so is ``S_j[0]``.

The Python form of each spec is the catalogue's (``specs/planner.py``, used by :func:`check_plan`);
here each is written as Z3 constraints over symbolic arrays (:class:`_Z3Logic`), and
``tests/models/test_planner_oracle.py`` keeps the two forms in agreement on every array of small
scopes.

Encoding. Members are numbered ``1..U`` (``0`` is empty) in order of first appearance in
``current`` then ``target``; arrays are Z3 ``Int`` terms per (step, index). The plan is unrolled in
*macro steps*: step ``t`` has one Boolean per index (clear it or not), giving ``C_t``, then one
migration with the six fields as ``Int`` variables, giving ``S_{t+1}``; both arrays are judged. A
plan with ``m`` migrations is ``m`` macro steps and then the clears of the indices that ``target``
leaves empty, so it is found at depth ``m`` and the clears need no step budget of their own. Only
the last array of a run of clears needs a constraint: a spec that holds on the arrays before and
after a run of clears holds on every array in between (counts and prefix counts only fall as
replicas go, a cleared owner index stays empty, and a subset of a duplicate-free array has no
duplicate). In the returned plan each run of clears is spelled out, one clear per index.

Search. One incremental solver; macro steps are added as the search deepens, and ``goal_m``
(``S_m`` agrees with ``target`` on its non-empty indices) is an assumption literal. ``m`` runs up
from ``ceil(d / 2)``, where ``d`` counts the indices ``i`` with ``target[i]`` set and
``!= current[i]`` (a migration writes a member to at most two indices, a clear to none), to the
bound ``K``; the first ``m`` that is satisfiable is the least number of migrations. If ``target``
itself breaks a chosen spec (PLAN-OWNER when ``current`` has an owner and ``target`` none), no plan
exists and Z3 is not called.

Bound. ``K`` (``max_steps``, default :func:`default_bound` ``= 2 n``) caps the number of
migrations; ``exists=False`` means "no safe plan with at most ``K`` migrations". An exact search
over all reachable arrays (breadth-first, no step bound) over the exhaustive pair space
(``checker/planner/space.py``), with all four specs, finds that the longest shortest safe plan
has 1, 2, 4 and 5 migrations for ``n`` = 1, 2, 3, 4 and that the oracle with ``K = 2 n`` agrees
with it on every pair, so ``2 n`` is complete there with room to spare
(``tests/models/test_planner_oracle.py`` repeats the comparison for ``n <= 3``). For ``n >= 5``
it is a
generous bound, not a proof (random pairs at ``n = 7`` needed up to 9 migrations).
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass

import z3

from partsafe.specs.planner import ARRAY_SPECS, count

Replicas = tuple[str | None, ...]
Step = dict[str, object]

#: Replica arrays have 1 to ``InternalPartition.MAX_REPLICA_COUNT`` = 7 indices.
MAX_REPLICAS = 7

NO_DECREASE = "PLAN-NO-DECREASE"
HOTTER_FIRST = "PLAN-HOTTER-FIRST"
NO_DUPLICATE = "PLAN-NO-DUPLICATE"
OWNER = "PLAN-OWNER"
#: The four array specs, in the order :func:`check_plan` reports them.
SPEC_ORDER: tuple[str, ...] = (NO_DECREASE, HOTTER_FIRST, NO_DUPLICATE, OWNER)
SAFETY_SPECS = frozenset({"PLAN-NO-DECREASE", "PLAN-HOTTER-FIRST", "PLAN-NO-DUPLICATE",
                          "PLAN-OWNER"})

MIGRATION = "migration"
CLEAR = "clear"
#: The keys of a step dict (the fields of Hazelcast's ``MigrationDecisionCallback.migrate``).
STEP_FIELDS: tuple[str, ...] = ("source", "source_current_index", "source_new_index",
                                "destination", "destination_current_index",
                                "destination_new_index")


# --- the specs, once, over a boolean algebra -----------------------------------------------------

class _Z3Logic:
    """The operations the spec definitions use, as Z3 terms (0 is an empty index)."""

    def occupied(self, v: z3.ArithRef) -> z3.BoolRef:
        return v != 0

    def at_least(self, bits: Sequence[z3.BoolRef], k: int) -> z3.BoolRef:
        return z3.BoolVal(True) if k <= 0 else z3.AtLeast(*bits, k)

    def empty_or_differ(self, a: z3.ArithRef, b: z3.ArithRef) -> z3.BoolRef:
        return z3.Or(a == 0, a != b)

    def all_of(self, bits: Sequence[z3.BoolRef]) -> z3.BoolRef:
        return z3.And(*bits) if bits else z3.BoolVal(True)


_Z3 = _Z3Logic()


def prefix_floors(current: Replicas, target: Replicas) -> tuple[int, ...]:
    """``min(count(current[:p]), count(target[:p]))`` for ``p = 1..n``: what PLAN-HOTTER-FIRST
    keeps in every prefix (000 §3.2, "hotter replicas will be available earlier")."""
    return tuple(min(count(current[:p]), count(target[:p])) for p in range(1, len(current) + 1))


def _no_decrease(lg: _Z3Logic, current: Replicas, target: Replicas,
                 array: Sequence[z3.ArithRef]) -> z3.BoolRef:
    return lg.at_least([lg.occupied(v) for v in array], min(count(current), count(target)))


def _hotter_first(lg: _Z3Logic, current: Replicas, target: Replicas,
                  array: Sequence[z3.ArithRef]) -> z3.BoolRef:
    occupied = [lg.occupied(v) for v in array]
    return lg.all_of([lg.at_least(occupied[:p], floor)
                      for p, floor in enumerate(prefix_floors(current, target), start=1)])


def _no_duplicate(lg: _Z3Logic, current: Replicas, target: Replicas,
                  array: Sequence[z3.ArithRef]) -> z3.BoolRef:
    return lg.all_of([lg.empty_or_differ(array[i], array[j])
                      for i in range(len(array)) for j in range(i + 1, len(array))])


def _owner_kept(lg: _Z3Logic, current: Replicas, target: Replicas,
                array: Sequence[z3.ArithRef]) -> z3.BoolRef:
    kept = current[0] is None or target[0] is None
    return lg.all_of([] if kept else [lg.occupied(array[0])])


_DEFINITIONS: dict[str, Callable[..., object]] = {
    NO_DECREASE: _no_decrease,
    HOTTER_FIRST: _hotter_first,
    NO_DUPLICATE: _no_duplicate,
    OWNER: _owner_kept,
}


#: The Python form of each safety spec, ``(current, target, array) -> bool``: the catalogue's own
#: (specs/planner.py); `tests/models/test_planner_oracle.py` keeps the Z3 form above in agreement
#: with it.
SPEC_PREDICATES: Mapping[str, Callable[[Replicas, Replicas, Replicas], bool]] = ARRAY_SPECS


# --- input validation ---------------------------------------------------------------------------


def _array(name: str, array: Iterable[object], *, distinct: bool = True) -> Replicas:
    if isinstance(array, str):
        raise ValueError(f"{name} must be a sequence of member names or None, not a string")
    try:
        items = tuple(array)
    except TypeError:
        raise ValueError(f"{name} must be a sequence of member names or None, "
                         f"not {type(array).__name__}") from None
    if not 1 <= len(items) <= MAX_REPLICAS:
        raise ValueError(f"{name} must have 1 to {MAX_REPLICAS} indices, not {len(items)}")
    for i, r in enumerate(items):
        if r is not None and not (isinstance(r, str) and r):
            raise ValueError(f"{name}[{i}] must be a non-empty member name or None, not {r!r}")
    if distinct:
        members = [r for r in items if r is not None]
        for r in members:
            if members.count(r) > 1:
                raise ValueError(f"member {r!r} appears twice in {name} {list(items)}")
    return items  # type: ignore[return-value]


def _pair(current: Iterable[object], target: Iterable[object]) -> tuple[Replicas, Replicas]:
    cur, tgt = _array("current", current), _array("target", target)
    if len(cur) != len(tgt):
        raise ValueError(f"current and target must have the same length, not {len(cur)} and "
                         f"{len(tgt)}")
    return cur, tgt


def _specs(specs: Iterable[str]) -> frozenset[str]:
    if isinstance(specs, str):
        raise ValueError("specs must be a collection of spec ids, not a string")
    chosen = frozenset(specs)
    unknown = chosen - SAFETY_SPECS
    if unknown:
        raise ValueError(f"unknown safety specs {sorted(unknown)}; known: {list(SPEC_ORDER)}")
    return chosen


def default_bound(n: int) -> int:
    """The default cap ``K = 2 n`` on a plan's migrations (see the module docstring, "Bound")."""
    return 2 * n


def _members(current: Replicas, target: Replicas) -> tuple[str, ...]:
    return tuple(dict.fromkeys(r for r in (*current, *target) if r is not None))


# --- the judge and the step semantics in plain Python -------------------------------------------


def check_plan(current: Sequence[str | None], target: Sequence[str | None],
               arrays: Sequence[Sequence[str | None]],
               specs: Iterable[str] = SAFETY_SPECS) -> list[tuple[str, int]]:
    """Every ``(spec, j)`` such that ``arrays[j]`` breaks a chosen safety spec, ordered by ``j``
    then :data:`SPEC_ORDER`; ``[]`` if the plan is safe.

    ``arrays`` is ``S_0 .. S_k`` (``S_0`` should be ``current`` and ``S_k`` ``target``; that is not
    judged here, see :func:`replay`). Arrays may hold a member twice (PLAN-NO-DUPLICATE reports
    it). The same definitions are the Z3 constraints of :func:`shortest_safe_plan`.
    """
    cur, tgt = _pair(current, target)
    chosen = _specs(specs)
    checked = []
    for j, array in enumerate(arrays):
        a = _array(f"arrays[{j}]", array, distinct=False)
        if len(a) != len(cur):
            raise ValueError(f"arrays[{j}] has {len(a)} indices, current has {len(cur)}")
        checked.append(a)
    return [(spec, j) for j, a in enumerate(checked) for spec in SPEC_ORDER
            if spec in chosen and not SPEC_PREDICATES[spec](cur, tgt, a)]


def _index(step: Mapping[str, object], key: str, low: int, n: int) -> int:
    value = step.get(key, -1)
    if not isinstance(value, int) or isinstance(value, bool) or not low <= value < n:
        raise ValueError(f"{key} must be an int in {low}..{n - 1}, not {value!r}")
    return value


def apply_step(array: Sequence[str | None], step: Mapping[str, object],
               members: Iterable[str] | None = None, *,
               strict_shift_down: bool = True) -> Replicas:
    """The array after one step (``MigrationManager.applyMigration``; a clear
    empties ``source_current_index``). Raises ``ValueError`` if the step is not allowed on
    ``array``; ``members``, if given, are the allowed destinations."""
    s = _array("array", array, distinct=False)
    n = len(s)
    kind = step.get("type")
    src_cur = _index(step, "source_current_index", -1, n)
    if kind == CLEAR:
        if src_cur == -1 or s[src_cur] is None:
            raise ValueError(f"a clear needs a non-empty source_current_index, not {src_cur}")
        if step.get("source") not in (None, s[src_cur]):
            raise ValueError(f"source {step.get('source')!r} is not at index {src_cur} of "
                             f"{list(s)}")
        out = list(s)
        out[src_cur] = None
        return tuple(out)
    if kind != MIGRATION:
        raise ValueError(f"step type must be {MIGRATION!r} or {CLEAR!r}, not {kind!r}")
    src_new = _index(step, "source_new_index", -1, n)
    dst_cur = _index(step, "destination_current_index", -1, n)
    dst_new = _index(step, "destination_new_index", 0, n)
    source, destination = step.get("source"), step.get("destination")
    if not isinstance(destination, str) or not destination:
        raise ValueError(f"a migration needs a destination, not {destination!r}")
    if members is not None and destination not in set(members):
        raise ValueError(f"destination {destination!r} is neither in current nor in target")
    if dst_cur > -1 and s[dst_cur] != destination:
        raise ValueError(f"destination {destination!r} is not at index {dst_cur} of {list(s)}")
    if dst_cur == -1 and destination in s:
        raise ValueError(f"destination {destination!r} is already in {list(s)}; "
                         f"destination_current_index must say where")
    if src_cur > -1:
        if s[src_cur] is None or source != s[src_cur]:
            raise ValueError(f"source {source!r} is not at index {src_cur} of {list(s)}")
        if src_cur == dst_cur:
            raise ValueError("source and destination current indices must differ")
        if strict_shift_down and src_new > -1 and s[src_new] is not None:
            raise ValueError(f"source new index {src_new} is not empty in {list(s)}")
        if strict_shift_down and -1 < src_new < src_cur:
            raise ValueError(f"source new index {src_new} is hotter than {src_cur}: a shift "
                             f"down goes to a colder index")
    elif source is not None or src_new != -1:
        raise ValueError("without a source current index the source must be None and "
                         "source_new_index -1")
    out = list(s)
    if src_cur > -1:
        out[src_cur] = None
    if dst_cur > -1:
        out[dst_cur] = None
    out[dst_new] = destination
    if src_new > -1:
        out[src_new] = source  # type: ignore[assignment]
    return tuple(out)


def replay(current: Sequence[str | None], target: Sequence[str | None],
           steps: Iterable[Mapping[str, object]], *,
           strict_shift_down: bool = True) -> tuple[Replicas, ...]:
    """The arrays ``S_0 = current, S_1, ...`` after each of ``steps``, with destinations limited
    to the members of ``current`` and ``target``; raises ``ValueError`` on a step not allowed."""
    cur, tgt = _pair(current, target)
    members = _members(cur, tgt)
    arrays = [cur]
    for k, step in enumerate(steps):
        try:
            arrays.append(apply_step(arrays[-1], step, members,
                                     strict_shift_down=strict_shift_down))
        except ValueError as e:
            raise ValueError(f"step {k}: {e}") from None
    return tuple(arrays)


# --- the Z3 encoding ----------------------------------------------------------------------------


@dataclass(frozen=True)
class OracleResult:
    """The oracle's answer for one (current, target) pair.

    ``exists`` is whether a safe plan with at most ``bound`` migrations exists; ``migrations`` is
    the least number of migrations of one (clears not counted); ``plan`` is the steps of one such
    plan as dicts with ``"type"`` and :data:`STEP_FIELDS` (member names as in the input, ``None``
    or ``-1`` where there is none); ``arrays`` is ``S_0 .. S_k``; ``seconds`` is the wall-clock
    time of the search (encoding and solving).
    """

    exists: bool
    migrations: int | None
    plan: tuple[Step, ...] | None
    arrays: tuple[Replicas, ...] | None
    bound: int
    seconds: float


class _Unrolled:
    """The macro steps of a plan from ``current`` to ``target``, unrolled one at a time.

    Macro step ``t`` empties any set of indices of ``S_t`` (the clears, giving ``C_t``) and then
    applies one migration (giving ``S_{t+1}``); both arrays are judged. A plan with ``m``
    migrations is ``m`` macro steps followed by the clears of the indices that ``target`` leaves
    empty. Only the last array of a run of clears needs judging: a spec that holds before and
    after a run of clears holds in between (see the module docstring, "Encoding")."""

    def __init__(self, current: Replicas, target: Replicas, specs: frozenset[str],
                 strict_shift_down: bool) -> None:
        self.current, self.target, self.specs = current, target, specs
        self.strict_shift_down = strict_shift_down
        self.names: tuple[str, ...] = _members(current, target)
        self.code = {name: k for k, name in enumerate(self.names, start=1)}
        self.solver = z3.Solver()
        #: ``S_0 .. S_t``; ``S_0`` is ``current`` (0 is an empty index).
        self.arrays: list[list[z3.ArithRef]] = [[z3.IntVal(self._encode(r)) for r in current]]
        #: per macro step: the clear flags and the six migration fields
        self.clears: list[list[z3.BoolRef]] = []
        self.fields: list[tuple[z3.ArithRef, ...]] = []
        self.goals: list[z3.BoolRef] = []
        self._add_goal()

    def _encode(self, r: str | None) -> int:
        return self.code[r] if r is not None else 0

    def _judge(self, array: Sequence[z3.ArithRef]) -> None:
        for spec in SPEC_ORDER:
            if spec in self.specs:
                self.solver.add(_DEFINITIONS[spec](_Z3, self.current, self.target, array))

    def _add_goal(self) -> None:
        """``goal_t``: after clearing the indices ``target`` leaves empty, ``S_t`` is ``target``."""
        s, t = self.arrays[-1], len(self.arrays) - 1
        goal = z3.Bool(f"goal_{t}")
        self.solver.add(goal == z3.And(*[s[j] == self._encode(r)
                                         for j, r in enumerate(self.target) if r is not None]))
        self.goals.append(goal)

    def extend(self) -> None:
        """Unroll one more macro step: clears, then one migration (``applyMigration``)."""
        s, t, n, add = self.arrays[-1], len(self.clears), len(self.current), self.solver.add
        flags = [z3.Bool(f"clear_{t}_{j}") for j in range(n)]
        for j in range(n):
            add(z3.Implies(flags[j], s[j] != 0))
        c = [z3.If(flags[j], z3.IntVal(0), s[j]) for j in range(n)]
        self._judge(c)
        src, src_cur, src_new, dst, dst_cur, dst_new = (
            z3.Int(f"{name}_{t}")
            for name in ("src", "src_cur", "src_new", "dst", "dst_cur", "dst_new"))
        add(dst >= 1, dst <= len(self.names), dst_new >= 0, dst_new < n,
            dst_cur >= -1, dst_cur < n, src_cur >= -1, src_cur < n, src_new >= -1, src_new < n)
        # the destination sits at its current index, or is not in the array without one
        add(z3.Implies(dst_cur == -1, z3.And(*[c[i] != dst for i in range(n)])))
        for i in range(n):
            add(z3.Implies(dst_cur == i, c[i] == dst))
        # the source is the holder of its current index, or None without one
        add(z3.Implies(src_cur == -1, z3.And(src == 0, src_new == -1)))
        add(z3.Or(src_cur == -1, src_cur != dst_cur))
        for i in range(n):
            add(z3.Implies(src_cur == i, z3.And(src == c[i], c[i] != 0)))
            if self.strict_shift_down:
                add(z3.Implies(src_new == i, z3.And(c[i] == 0, src_cur < i)))
        nxt = [z3.If(src_new == j, src, z3.If(dst_new == j, dst, z3.If(
            z3.Or(src_cur == j, dst_cur == j), 0, c[j]))) for j in range(n)]
        self._judge(nxt)
        self.clears.append(flags)
        self.fields.append((src, src_cur, src_new, dst, dst_cur, dst_new))
        self.arrays.append(nxt)
        self._add_goal()

    def solve(self, m: int) -> tuple[Step, ...] | None:
        """The steps of a safe plan with exactly ``m`` migrations, or None if there is none."""
        while len(self.clears) < m:
            self.extend()
        if self.solver.check(self.goals[m]) != z3.sat:
            return None
        model = self.solver.model()

        def val(term: z3.ExprRef) -> int:
            return model.eval(term, model_completion=True).as_long()

        def name(code: int) -> str | None:
            return self.names[code - 1] if code else None

        steps: list[Step] = []
        for t in range(m):
            s = [val(v) for v in self.arrays[t]]
            steps.extend(_clear(name(s[j]), j) for j in range(len(s))
                         if s[j] and z3.is_true(model.eval(self.clears[t][j],
                                                           model_completion=True)))
            src, src_cur, src_new, dst, dst_cur, dst_new = (val(f) for f in self.fields[t])
            steps.append({"type": MIGRATION, "source": name(src), "source_current_index": src_cur,
                          "source_new_index": src_new, "destination": name(dst),
                          "destination_current_index": dst_cur,
                          "destination_new_index": dst_new})
        last = [val(v) for v in self.arrays[m]]
        steps.extend(_clear(name(last[j]), j) for j in range(len(last))
                     if last[j] and self.target[j] is None)
        return tuple(steps)


def _clear(source: str | None, index: int) -> Step:
    """A "just clear this replica index" step (the planner's callback
    ``migrate(source, i, -1, null, -1, -1)``)."""
    return {"type": CLEAR, "source": source, "source_current_index": index,
            "source_new_index": -1, "destination": None, "destination_current_index": -1,
            "destination_new_index": -1}


def _lower_bound(current: Replicas, target: Replicas) -> int:
    """``ceil(d / 2)``: a migration writes a member to at most two indices, a clear to none."""
    d = sum(1 for c, t in zip(current, target, strict=True) if t is not None and c != t)
    return math.ceil(d / 2)


def _migrations(plan: Sequence[Step]) -> int:
    return sum(1 for step in plan if step["type"] == MIGRATION)


def shortest_safe_plan(current: Sequence[str | None], target: Sequence[str | None],
                       specs: Iterable[str] = SAFETY_SPECS, max_steps: int | None = None, *,
                       strict_shift_down: bool = True) -> OracleResult:
    """A safe plan from ``current`` to ``target`` with the least number of migrations, if one
    with at most ``max_steps`` migrations (default :func:`default_bound`) exists.

    ``specs`` selects the safety specs judged on every array (000 §3.2; default all four);
    ``strict_shift_down`` requires a source new index to be empty and colder than the source's
    current index (see the module docstring).
    Every plan returned is replayed (:func:`replay`) and judged (:func:`check_plan`) in Python.
    """
    cur, tgt = _pair(current, target)
    chosen = _specs(specs)
    if max_steps is None:
        bound = default_bound(len(cur))
    elif isinstance(max_steps, int) and not isinstance(max_steps, bool) and max_steps >= 0:
        bound = max_steps
    else:
        raise ValueError(f"max_steps must be a non-negative int or None, not {max_steps!r}")
    started = time.perf_counter()
    plan: tuple[Step, ...] | None = None
    if not check_plan(cur, tgt, [tgt], chosen):  # the target is the last array of every plan
        unrolled = _Unrolled(cur, tgt, chosen, strict_shift_down)
        for m in range(_lower_bound(cur, tgt), bound + 1):
            plan = unrolled.solve(m)
            if plan is not None:
                break
    seconds = time.perf_counter() - started
    if plan is None:
        return OracleResult(exists=False, migrations=None, plan=None, arrays=None, bound=bound,
                            seconds=seconds)
    arrays = replay(cur, tgt, plan, strict_shift_down=strict_shift_down)
    broken = check_plan(cur, tgt, arrays, chosen)
    if arrays[-1] != tgt or broken:  # a defect of the encoding, never expected
        raise RuntimeError(f"decoded plan {plan} gives {arrays}, breaking {broken}")
    return OracleResult(exists=True, migrations=_migrations(plan), plan=plan, arrays=arrays,
                        bound=bound, seconds=seconds)

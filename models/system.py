"""Symbolic transition systems: a protocol's state, actions and specs as Z3 formulas.

A :class:`System` is the symbolic form of one protocol of the catalogue (``models/membership.py``
and its neighbours), written once and read by every engine (``models/bmc.py``,
``models/induction.py``). It has

* **sorts**: the kinds of things the protocol ranges over (``Member``, ``Partition``), each an
  uninterpreted sort for proofs at any size, or a finite enumeration for bounded model checking;
* **state variables**: each a Z3 constant of an array sort (``view: Member -> Set(Member)``), an
  integer or a Boolean. A state is one copy of all of them (a :class:`Frame`); arrays make
  "everything else is unchanged" one equality per variable, with no quantifier;
* **actions**: a guard over the current frame and an effect relating it to the next, with
  parameters (the acting member, the message's version); faults (crash, suspicion) are actions
  too;
* **properties**: the catalogue's specs, each a state formula (``Property.state``) or a step
  formula over a transition (``Property.step``), the symbolic form of an event monitor: the event
  the monitor judges is the step, and the monitor's history is carried by ghost variables;
* **lemmas**: the strengthening invariants a proof for any size needs, each named and justified
  by the design sentence it follows from.

A :class:`Universe` instantiates the sorts. ``Universe.finite({"Member": 3})`` enumerates them,
and its quantifiers expand into conjunctions, so bounded model checking stays quantifier-free over
members. ``Universe.unbounded()`` leaves the sorts uninterpreted and quantifies with
``ForAll``: a formula proved there holds for every number of members.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import z3

#: a sort's name, as a system declares it ("Member")
SortName = str
Params = Mapping[str, z3.ExprRef]
#: numbers the variables of each quantifier apart
_BOUND = itertools.count()


#: a variable's type: "Bool", "Int", a sort's name, or (domain, range) for an array (a set of
#: members is ("Member", "Bool"), a member's list per member ("Member", ("Member", "Bool")))
Type = str | tuple[Any, Any]


class Flat:
    """An array over a finite domain as one term per index: how a finite universe represents
    arrays, so bounded model checking is over Booleans and integers, without the array theory.
    Reading or writing at a symbolic index is an if-then-else over the indices."""

    __slots__ = ("items", "keys")

    def __init__(self, keys: tuple[Any, ...], items: tuple[Any, ...]) -> None:
        self.keys = keys
        self.items = items

    def _index(self, i: Any) -> int | None:
        if isinstance(i, int):
            return self.keys.index(i) if i in self.keys else None
        if z3.is_int_value(i):
            n = i.as_long()
            return self.keys.index(n) if n in self.keys else None
        for n, k in enumerate(self.keys):
            if isinstance(k, z3.ExprRef) and i.eq(k):
                return n
        return None

    def _match(self, i: Any, n: int) -> z3.BoolRef:
        return i == self.keys[n]

    def __getitem__(self, i: Any) -> Any:
        n = self._index(i)
        if n is not None:
            return self.items[n]
        out = self.items[-1]
        for n in range(len(self.items) - 2, -1, -1):
            out = ite(self._match(i, n), self.items[n], out)
        return out

    def store(self, i: Any, value: Any) -> Flat:
        n = self._index(i)
        if n is not None:
            return Flat(self.keys, (*self.items[:n], value, *self.items[n + 1:]))
        return Flat(self.keys, tuple(ite(self._match(i, n), value, item)
                                     for n, item in enumerate(self.items)))

    __hash__ = None  # type: ignore[assignment]


def _ctx(a: Any) -> z3.Context:
    while isinstance(a, Flat):
        a = a.items[0]
    return a.ctx


def store(a: Any, i: Any, value: Any) -> Any:
    """``a`` with ``value`` at ``i``: a flat array's update, or Z3's ``Store``; a Python bool or
    int is taken as the Z3 value."""
    if isinstance(value, bool):
        value = z3.BoolVal(value, _ctx(a))
    elif isinstance(value, int):
        value = z3.IntVal(value, _ctx(a))
    return a.store(i, value) if isinstance(a, Flat) else z3.Store(a, i, value)


def ite(c: z3.BoolRef, a: Any, b: Any) -> Any:
    """``If(c, a, b)``, element by element for flat arrays."""
    if isinstance(a, Flat):
        return Flat(a.keys, tuple(ite(c, x, y) for x, y in zip(a.items, b.items, strict=True)))
    return z3.If(c, a, b)


def eq(a: Any, b: Any) -> z3.BoolRef:
    """``a == b``, element by element for flat arrays."""
    if isinstance(a, Flat):
        return z3.And(*[eq(x, y) for x, y in zip(a.items, b.items, strict=True)])
    return a == b


class Universe:
    """The sorts a system's formulas range over, finite (each of a given size) or unbounded."""

    def __init__(self, sorts: Sequence[SortName], sizes: Mapping[SortName, int] | None,
                 ctx: z3.Context | None = None) -> None:
        self.ctx = ctx or z3.main_ctx()
        self.finite = sizes is not None
        self.sizes: dict[SortName, int] = dict(sizes or {})
        self.sorts: dict[SortName, z3.SortRef] = {}
        self._elements: dict[SortName, tuple[z3.ExprRef, ...]] = {}
        for name in sorts:
            if sizes is None:
                self.sorts[name] = z3.DeclareSort(name, self.ctx)
                continue
            n = sizes.get(name)
            if n is None or n < 1:
                raise ValueError(f"sort {name}: a finite universe needs a size of at least 1")
            sort, consts = z3.EnumSort(f"{name}{n}", [f"{name[0].lower()}{i}" for i in range(n)],
                                       ctx=self.ctx)
            self.sorts[name] = sort
            self._elements[name] = tuple(consts)
        self.int = z3.IntSort(self.ctx)
        self.bool = z3.BoolSort(self.ctx)
        #: in a finite universe, the integers an array over integers and a quantifier over
        #: positions range over (bounded model checking sets it from its depth: a run of k
        #: steps publishes at most k + 1 positions); None: integer quantifiers stay quantifiers
        self.int_range: range | None = None

    @classmethod
    def finite_of(cls, sorts: Sequence[SortName], sizes: Mapping[SortName, int]) -> Universe:
        return cls(sorts, sizes, z3.Context())

    @classmethod
    def unbounded(cls, sorts: Sequence[SortName]) -> Universe:
        return cls(sorts, None, z3.Context())

    def __getitem__(self, name: SortName) -> z3.SortRef:
        return self.sorts[name]

    def elements(self, name: SortName) -> tuple[z3.ExprRef, ...]:
        """The elements of a finite sort, in order (m0, m1, ...)."""
        if not self.finite:
            raise ValueError(f"sort {name} is unbounded: it has no list of elements")
        return self._elements[name]

    # -- terms of a type -----------------------------------------------------------------------

    def sort_of(self, t: Type) -> z3.SortRef:
        if isinstance(t, tuple):
            return z3.ArraySort(self.sort_of(t[0]), self.sort_of(t[1]))
        if t == "Bool":
            return self.bool
        if t == "Int":
            return self.int
        return self.sorts[t]

    def _keys(self, domain: str) -> tuple[Any, ...]:
        if domain == "Int":
            if self.int_range is None:
                raise ValueError("a finite universe needs int_range for arrays over integers")
            return tuple(self.int_range)
        return self._elements[domain]

    def _key_names(self, domain: str) -> tuple[str, ...]:
        """The names of ``_keys(domain)``, printed once (Z3's printer is slow)."""
        cache: dict[Any, tuple[str, ...]] = self.__dict__.setdefault("_names", {})
        key = (domain, self.int_range if domain == "Int" else None)
        if key not in cache:
            cache[key] = tuple(str(k) for k in self._keys(domain))
        return cache[key]

    def var(self, name: str, t: Type) -> Any:
        """A fresh unknown of type ``t``: a Z3 constant, or a flat array of them."""
        if self.finite and isinstance(t, tuple):
            keys = self._keys(t[0])
            return Flat(keys, tuple(self.var(f"{name}[{k}]", t[1])
                                    for k in self._key_names(t[0])))
        return z3.Const(name, self.sort_of(t))

    def const(self, t: Type, value: Any) -> Any:
        """The array of type ``t`` that holds ``value`` everywhere (Z3's ``K``)."""
        if self.finite:
            keys = self._keys(t[0])
            return Flat(keys, tuple(value for _ in keys))
        return z3.K(self.sort_of(t[0]), value)


    # -- quantifiers ---------------------------------------------------------------------------

    def _bind_ints(self, count: int, body: Callable[..., z3.BoolRef],
                   quantifier: Callable[..., z3.BoolRef], join: Callable[..., z3.BoolRef],
                   prefix: str) -> z3.BoolRef:
        if self.int_range is not None:
            return join(*[body(*(z3.IntVal(i, self.ctx) for i in combo))
                          for combo in itertools.product(self.int_range, repeat=count)])
        n = next(_BOUND)
        bound = [z3.Int(f"{prefix}{n}.{i}", self.ctx) for i in range(count)]
        return quantifier(bound, body(*bound))

    def forall_int(self, count: int, body: Callable[..., z3.BoolRef],
                   prefix: str = "k") -> z3.BoolRef:
        """``body`` for every tuple of ``count`` integers: over ``int_range`` when it is set."""
        return self._bind_ints(count, body, z3.ForAll, z3.And, prefix)

    def exists_int(self, count: int, body: Callable[..., z3.BoolRef],
                   prefix: str = "k") -> z3.BoolRef:
        """``body`` for some tuple of ``count`` integers: over ``int_range`` when it is set."""
        return self._bind_ints(count, body, z3.Exists, z3.Or, prefix)

    def set_where(self, name: SortName, member: Callable[[z3.ExprRef], z3.BoolRef],
                  tag: str = "x") -> Any:
        """The set of the elements of ``name`` for which ``member`` holds: one term per
        element when finite, a lambda when unbounded."""
        if self.finite:
            keys = self._elements[name]
            return Flat(keys, tuple(member(e) for e in keys))
        x = z3.Const(f"{tag}_{name}", self.sorts[name])
        return z3.Lambda([x], member(x))

    def _bind(self, sorts: Sequence[SortName], quantifier: Callable[..., z3.BoolRef],
              join: Callable[..., z3.BoolRef], body: Callable[..., z3.BoolRef],
              prefix: str) -> z3.BoolRef:
        if self.finite:
            cases = [body(*combo) for combo in
                     itertools.product(*(self._elements[s] for s in sorts))]
            return join(*cases) if cases else z3.BoolVal(join is z3.And, self.ctx)
        # a fresh name per quantifier: a quantifier nested in another over the same sort must
        # not capture the outer one's variable
        n = next(_BOUND)
        bound = [z3.Const(f"{prefix}{n}.{i}_{s}", self.sorts[s]) for i, s in enumerate(sorts)]
        return quantifier(bound, body(*bound))

    def forall(self, sorts: Sequence[SortName], body: Callable[..., z3.BoolRef]) -> z3.BoolRef:
        """``body`` for every tuple of elements of ``sorts``: a conjunction when finite."""
        return self._bind(sorts, z3.ForAll, z3.And, body, "all")

    def exists(self, sorts: Sequence[SortName], body: Callable[..., z3.BoolRef]) -> z3.BoolRef:
        """``body`` for some tuple of elements of ``sorts``: a disjunction when finite."""
        return self._bind(sorts, z3.Exists, z3.Or, body, "some")


@dataclass(frozen=True)
class Var:
    """A state variable: a name and its type."""

    name: str
    type: Type
    #: what the variable means, in the design's words
    doc: str = ""
    #: a ghost variable records history for a property; it is not protocol state
    ghost: bool = False


class Frame:
    """One copy of every state variable: the state at one step of a run."""

    def __init__(self, u: Universe, variables: Sequence[Var], tag: str,
                 values: Mapping[str, z3.ExprRef] | None = None) -> None:
        self.u = u
        self.tag = tag
        self.vars: dict[str, Any] = dict(values) if values is not None else {
            v.name: u.var(f"{v.name}@{tag}", v.type) for v in variables}

    def __getattr__(self, name: str) -> Any:
        try:
            return self.__dict__["vars"][name]
        except KeyError:
            raise AttributeError(name) from None

    def __getitem__(self, name: str) -> Any:
        return self.vars[name]


Guard = Callable[[Frame, Params], z3.BoolRef]
#: the new values of the variables an action sets, as terms over the current frame
Effect = Callable[[Frame, Params], Mapping[str, z3.ExprRef]]
#: a constraint relating the current frame to the next, for what a function cannot say
Relation = Callable[[Frame, Frame, Params], z3.BoolRef]


@dataclass(frozen=True)
class Action:
    """One protocol action (or fault): enabled where ``guard`` holds, it sets the variables
    ``effect`` gives new values, lets the other variables of ``modifies`` take any values that
    satisfy ``relation``, and leaves every other variable as it was.

    Effects are functions of the current frame, so bounded model checking defines each next
    variable by one if-then-else over the actions and Z3 eliminates the frames."""

    name: str
    #: parameter name -> sort name (or "Int")
    params: tuple[tuple[str, SortName], ...]
    guard: Guard
    effect: Effect
    modifies: tuple[str, ...]
    #: the design section the action follows
    design: str
    #: a fault (crash, suspicion, join): not counted when judging quiescence; a guard says
    #: when a step of the action is a fault (a suspicion of a live member) and when it is the
    #: protocol's own (the failure detector's suspicion of a crashed one)
    fault: bool | Guard = False
    #: constrains the variables of ``modifies`` that ``effect`` leaves out
    relation: Relation | None = None
    #: the fault budget its fault steps spend in bounded model checking (``System.budgets``)
    budget: str | None = None


@dataclass(frozen=True)
class Property:
    """A spec of the catalogue in symbolic form: a state formula or a step formula."""

    spec: str
    #: holds on every reachable state
    state: Callable[[Frame], z3.BoolRef] | None = None
    #: holds on every transition (pre, post, the action's name and parameters): an event
    #: monitor's judgement of the events that transition emits
    step: Callable[[Frame, Frame, str, Params], z3.BoolRef] | None = None
    #: judged only on states where no action but a fault is enabled (a quiescence check)
    quiescent: bool = False
    #: the symbolic form, in words, for `partsafe explain`
    formula: str = ""
    #: the lemmas (``System.lemmas`` by name) its proof for any size needs
    lemmas: tuple[str, ...] = ()


@dataclass(frozen=True)
class Lemma:
    """A strengthening invariant a proof for any size needs, with the design sentence it
    follows from."""

    name: str
    state: Callable[[Frame], z3.BoolRef]
    formula: str
    design: str


@dataclass
class System:
    """A protocol as a symbolic transition system (see the module docstring)."""

    name: str
    variant: str
    sorts: tuple[SortName, ...]
    variables: tuple[Var, ...]
    init: Callable[[Frame], z3.BoolRef]
    actions: tuple[Action, ...]
    properties: tuple[Property, ...]
    lemmas: tuple[Lemma, ...] = ()
    #: the smallest sizes at which bounded model checking is meaningful
    sizes: dict[SortName, int] = field(default_factory=dict)
    #: bounded model checking's default fault budgets (the explorer's scope parameters: how
    #: many fault steps of each kind a run may take); proofs take no budget
    budgets: dict[str, int] = field(default_factory=dict)
    #: renders a frame's values from a model as JSON (finite universes); None: every variable
    describe: Callable[[Frame, z3.ModelRef], dict[str, Any]] | None = None
    #: the design section the model follows, and what it leaves out
    design: str = ""
    abstractions: tuple[str, ...] = ()

    def universe(self, sizes: Mapping[SortName, int] | None) -> Universe:
        if sizes is None:
            return Universe.unbounded(self.sorts)
        return Universe.finite_of(self.sorts, {**self.sizes, **sizes})

    def frame(self, u: Universe, tag: str) -> Frame:
        return Frame(u, self.variables, tag)

    def property(self, spec: str) -> Property:
        for p in self.properties:
            if p.spec == spec:
                return p
        raise KeyError(spec)

    def param_consts(self, u: Universe, action: Action, tag: str) -> dict[str, z3.ExprRef]:
        """The parameters of ``action`` at step ``tag``: a parameter is named by its name and
        sort, so the actions of one step share them (fewer unknowns for bounded model
        checking: only one action is taken per step)."""
        return {name: z3.Const(f"{name}.{sort}@{tag}", u.int if sort == "Int" else u[sort])
                for name, sort in action.params}

    def transition(self, action: Action, pre: Frame, post: Frame,
                   params: Params) -> z3.BoolRef:
        """``action`` taken from ``pre`` to ``post``: its guard, its effect, and every
        variable it does not modify unchanged."""
        values = self.effect(action, pre, params)
        parts = [action.guard(pre, params)]
        for v in self.variables:
            if v.name in values:
                parts.append(eq(post[v.name], values[v.name]))
            elif v.name not in action.modifies:
                parts.append(eq(post[v.name], pre[v.name]))
        if action.relation is not None:
            parts.append(action.relation(pre, post, params))
        return z3.And(*parts)

    def effect(self, action: Action, pre: Frame, params: Params) -> dict[str, z3.ExprRef]:
        """The new values ``action`` gives, checked against its ``modifies``."""
        values = dict(action.effect(pre, params))
        stray = set(values) - set(action.modifies)
        if stray:
            raise ValueError(f"{self.name}: action {action.name} sets {sorted(stray)} but does "
                             "not declare them in `modifies`")
        return values

    def enabled(self, u: Universe, pre: Frame, action: Action,
                progress: bool = False) -> z3.BoolRef:
        """``action`` is enabled at ``pre`` for some parameters (its guard; effects are total);
        with ``progress``, for some parameters where the step is not a fault."""
        guard_of: Guard = action.guard
        if progress and callable(action.fault):
            fault = action.fault

            def guard_of(f: Frame, a: Params) -> z3.BoolRef:
                return z3.And(action.guard(f, a), z3.Not(fault(f, a)))
        finite = [s for _, s in action.params if s != "Int"]
        ints = [name for name, s in action.params if s == "Int"]
        names = [n for n, s in action.params if s != "Int"]

        def body(*values: z3.ExprRef) -> z3.BoolRef:
            params: dict[str, z3.ExprRef] = dict(zip(names, values, strict=True))
            if not ints:
                return guard_of(pre, params)

            def guard(*numbers: z3.ExprRef) -> z3.BoolRef:
                return guard_of(pre, {**params, **dict(zip(ints, numbers, strict=True))})
            return u.exists_int(len(ints), guard, prefix=f"en.{action.name}.")
        return u.exists(finite, body) if finite else body()

    def is_fault(self, action: Action, pre: Frame, params: Params) -> z3.BoolRef:
        """A step of ``action`` from ``pre`` with ``params`` is a fault."""
        if callable(action.fault):
            return action.fault(pre, params)
        return z3.BoolVal(action.fault, pre.u.ctx)

    def quiescent(self, u: Universe, pre: Frame) -> z3.BoolRef:
        """No action but a fault is enabled at ``pre``."""
        return z3.And(*[z3.Not(self.enabled(u, pre, a, progress=True))
                        for a in self.actions if a.fault is not True])


def member_set(u: Universe, elements: Sequence[z3.ExprRef], sort: SortName = "Member") -> Any:
    """The set of ``elements`` (of a finite sort)."""
    out = u.const((sort, "Bool"), z3.BoolVal(False, u.ctx))
    for e in elements:
        out = store(out, e, True)
    return out


def value_json(model: z3.ModelRef, term: Any) -> Any:
    """A term's value in ``model`` as JSON: a set as the sorted names of its elements, another
    array as an object by index."""
    if isinstance(term, Flat):
        values = [value_json(model, item) for item in term.items]
        if all(isinstance(v, bool) for v in values) and not isinstance(term.keys[0], int):
            return [str(k) for k, v in zip(term.keys, values, strict=True) if v]
        return {str(k): v for k, v in zip(term.keys, values, strict=True)}
    value = model.eval(term, model_completion=True)
    if z3.is_int_value(value):
        return value.as_long()
    if z3.is_true(value) or z3.is_false(value):
        return z3.is_true(value)
    return str(value)


def pin(u: Universe, term: Any, value: Any) -> z3.BoolRef:
    """``term`` equals the Python ``value``, in a finite universe: elements of a finite sort are
    given by index (``0`` is ``m0``), a set as a set of indices, an array as a dict from index
    (or integer) to value; a key a dict leaves out is left unconstrained, and ``None`` constrains
    nothing. The differential tests use it to state a reference-implementation state."""
    if value is None:
        return z3.BoolVal(True, u.ctx)
    if isinstance(term, Flat):
        ints = isinstance(term.keys[0], int)
        if isinstance(value, (set, frozenset)):
            return z3.And(*[item == z3.BoolVal((k if ints else n) in value, u.ctx)
                            for n, (k, item) in enumerate(zip(term.keys, term.items,
                                                              strict=True))])
        if not isinstance(value, dict):
            raise TypeError(f"expected a dict or a set, got {value!r}")
        return z3.And(z3.BoolVal(True, u.ctx), *[pin(u, term[key if ints else term.keys[key]], v)
                                                 for key, v in value.items()])
    sort = term.sort()
    if sort.kind() == z3.Z3_DATATYPE_SORT:
        return term == u.elements(str(sort).rstrip("0123456789"))[value]
    if z3.is_bool(term):
        return term == z3.BoolVal(bool(value), u.ctx)
    return term == z3.IntVal(int(value), u.ctx)

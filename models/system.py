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

    def set_of(self, name: SortName) -> z3.ArraySortRef:
        return z3.ArraySort(self.sorts[name], self.bool)

    def _bind(self, sorts: Sequence[SortName], quantifier: Callable[..., z3.BoolRef],
              join: Callable[..., z3.BoolRef], body: Callable[..., z3.BoolRef],
              prefix: str) -> z3.BoolRef:
        if self.finite:
            cases = [body(*combo) for combo in
                     itertools.product(*(self._elements[s] for s in sorts))]
            return join(*cases) if cases else z3.BoolVal(join is z3.And, self.ctx)
        bound = [z3.Const(f"{prefix}{i}_{s}", self.sorts[s]) for i, s in enumerate(sorts)]
        return quantifier(bound, body(*bound))

    def forall(self, sorts: Sequence[SortName], body: Callable[..., z3.BoolRef]) -> z3.BoolRef:
        """``body`` for every tuple of elements of ``sorts``: a conjunction when finite."""
        return self._bind(sorts, z3.ForAll, z3.And, body, "all")

    def exists(self, sorts: Sequence[SortName], body: Callable[..., z3.BoolRef]) -> z3.BoolRef:
        """``body`` for some tuple of elements of ``sorts``: a disjunction when finite."""
        return self._bind(sorts, z3.Exists, z3.Or, body, "some")


@dataclass(frozen=True)
class Var:
    """A state variable: a name and a function from the universe to its Z3 sort."""

    name: str
    sort: Callable[[Universe], z3.SortRef]
    #: what the variable means, in the design's words
    doc: str = ""
    #: a ghost variable records history for a property; it is not protocol state
    ghost: bool = False


class Frame:
    """One copy of every state variable: the state at one step of a run."""

    def __init__(self, u: Universe, variables: Sequence[Var], tag: str) -> None:
        self.u = u
        self.tag = tag
        self.vars: dict[str, z3.ExprRef] = {
            v.name: z3.Const(f"{v.name}@{tag}", v.sort(u)) for v in variables}

    def __getattr__(self, name: str) -> z3.ExprRef:
        try:
            return self.__dict__["vars"][name]
        except KeyError:
            raise AttributeError(name) from None

    def __getitem__(self, name: str) -> z3.ExprRef:
        return self.vars[name]


Guard = Callable[[Frame, Params], z3.BoolRef]
Effect = Callable[[Frame, Frame, Params], z3.BoolRef]


@dataclass(frozen=True)
class Action:
    """One protocol action (or fault): enabled where ``guard`` holds, it changes the variables
    in ``modifies`` as ``effect`` says and leaves every other variable as it was."""

    name: str
    #: parameter name -> sort name (or "Int")
    params: tuple[tuple[str, SortName], ...]
    guard: Guard
    effect: Effect
    modifies: tuple[str, ...]
    #: the design section the action follows
    design: str
    #: a fault (crash, suspicion, join): not counted when judging quiescence
    fault: bool = False


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
        return {name: z3.Const(f"{action.name}.{name}@{tag}",
                               u.int if sort == "Int" else u[sort])
                for name, sort in action.params}

    def transition(self, action: Action, pre: Frame, post: Frame,
                   params: Params) -> z3.BoolRef:
        """``action`` taken from ``pre`` to ``post``: its guard, its effect, and every
        variable it does not modify unchanged."""
        frame = [post[v.name] == pre[v.name] for v in self.variables
                 if v.name not in action.modifies]
        return z3.And(action.guard(pre, params), action.effect(pre, post, params), *frame)

    def enabled(self, u: Universe, pre: Frame, action: Action) -> z3.BoolRef:
        """``action`` is enabled at ``pre`` for some parameters (its guard; effects are total)."""
        finite = [s for _, s in action.params if s != "Int"]
        ints = [name for name, s in action.params if s == "Int"]
        names = [n for n, s in action.params if s != "Int"]

        def body(*values: z3.ExprRef) -> z3.BoolRef:
            params: dict[str, z3.ExprRef] = dict(zip(names, values, strict=True))
            if not ints:
                return action.guard(pre, params)
            bound = [z3.Int(f"en.{action.name}.{n}", u.ctx) for n in ints]
            params.update(zip(ints, bound, strict=True))
            return z3.Exists(bound, action.guard(pre, params))
        return u.exists(finite, body) if finite else body()

    def quiescent(self, u: Universe, pre: Frame) -> z3.BoolRef:
        """No action but a fault is enabled at ``pre``."""
        return z3.And(*[z3.Not(self.enabled(u, pre, a)) for a in self.actions if not a.fault])


def member_set(u: Universe, elements: Sequence[z3.ExprRef], sort: SortName = "Member"
               ) -> z3.ArrayRef:
    """The set of ``elements`` as a Z3 array to Bool."""
    s = z3.K(u[sort], z3.BoolVal(False, u.ctx))
    for e in elements:
        s = z3.Store(s, e, z3.BoolVal(True, u.ctx))
    return s


def value_json(u: Universe, model: z3.ModelRef, term: z3.ExprRef, sort: z3.SortRef) -> Any:
    """A term's value in ``model`` as JSON: arrays over finite sorts as lists or objects, sets
    as sorted lists of element names."""
    if isinstance(sort, z3.ArraySortRef):
        domain, rng = sort.domain(), sort.range()
        if domain.kind() != z3.Z3_DATATYPE_SORT:
            return None
        elements = [domain.constructor(i)() for i in range(domain.num_constructors())]
        if rng == z3.BoolSort(u.ctx):
            return [str(e) for e in elements
                    if z3.is_true(model.eval(z3.Select(term, e), model_completion=True))]
        return {str(e): value_json(u, model, z3.Select(term, e), rng) for e in elements}
    value = model.eval(term, model_completion=True)
    if z3.is_int_value(value):
        return value.as_long()
    if z3.is_true(value) or z3.is_false(value):
        return z3.is_true(value)
    return str(value)


def pin(u: Universe, term: z3.ExprRef, value: Any) -> z3.BoolRef:
    """``term`` equals the Python ``value``, in a finite universe: elements of a finite sort are
    given by index (``0`` is ``m0``), a set as a set of indices, an array as a dict from index
    (or integer) to value; a key a dict leaves out is left unconstrained, and ``None`` constrains
    nothing. The differential tests use it to state a reference-implementation state."""
    if value is None:
        return z3.BoolVal(True, u.ctx)
    sort = term.sort()
    if z3.is_array_sort(sort):
        domain = sort.domain()
        if isinstance(value, (set, frozenset)):
            elements = _elements_of(domain)
            return z3.And(*[z3.Select(term, e) == z3.BoolVal(i in value, u.ctx)
                            for i, e in enumerate(elements)])
        if not isinstance(value, dict):
            raise TypeError(f"{term}: expected a dict or a set, got {value!r}")
        return z3.And(*[pin(u, z3.Select(term, _key(u, domain, k)), v) for k, v in value.items()])
    if sort.kind() == z3.Z3_DATATYPE_SORT:
        return term == _elements_of(sort)[value]
    if z3.is_bool(term):
        return term == z3.BoolVal(bool(value), u.ctx)
    return term == z3.IntVal(int(value), u.ctx)


def _elements_of(sort: z3.SortRef) -> list[z3.ExprRef]:
    assert isinstance(sort, z3.DatatypeSortRef)
    return [sort.constructor(i)() for i in range(sort.num_constructors())]


def _key(u: Universe, domain: z3.SortRef, key: Any) -> z3.ExprRef:
    if domain.kind() == z3.Z3_DATATYPE_SORT:
        return _elements_of(domain)[key]
    return z3.IntVal(int(key), u.ctx)

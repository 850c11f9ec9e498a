"""Lasso properties judged on the explored graph after a search: `lasso_violations`.

A lasso property ("finitely often") forbids a reachable cycle through a marked transition (a
rebalance that never ends). The search keeps every edge of such a model (`EdgeLog`, 17 bytes each,
checker/engine/edges.py); afterwards numpy drops the edges that lie on no cycle
(`cyclic_core`), networkx finds the strongly connected components of the rest, and each property
broken is reported as a lasso: the shortest path to the marked edge nearest an initial state,
then the cycle back. A search a bound stopped is judged on the part it explored: its edges are
transitions of the model, so a cycle among them is a lasso of the whole graph; finding none there
is no verdict.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import networkx as nx
import numpy as np

from partsafe.checker.engine.edges import EdgeLog
from partsafe.checker.engine.fingerprints import FingerprintTable
from partsafe.checker.engine.model import Lasso, Model
from partsafe.checker.engine.rebuild import depth_of, fingerprint_of, rebuild
from partsafe.checker.engine.result import Trace, Violation

#: rounds of a lasso's cycle followed until its concrete first state comes back: the order of
#: a renaming of interchangeable nodes, at most 60 for up to 12 nodes in one group
MAX_ROUNDS = 60
#: edges turned into slots at a time by `cyclic_core`
CHUNK = 1 << 24


def lasso_violations(model: Model[Any], rep: Callable[[Any], Any] | None,
                     table: FingerprintTable, lassos: tuple[Lasso[Any], ...],
                     edges: EdgeLog) -> list[Violation]:
    """For each lasso property, the shortest reachable cycle through a marked edge, if any:
    strongly connected components of the explored graph (networkx), then the marked edge whose
    source is closest to an initial state, closed by a shortest path back."""
    src, dst, marks = cyclic_core(table, edges)
    graph = nx.DiGraph()
    graph.add_edges_from(zip(src, dst, strict=True))
    component: dict[int, int] = {}
    for i, scc in enumerate(nx.strongly_connected_components(graph)):
        if len(scc) > 1:
            component.update(dict.fromkeys(scc, i))
    out: list[Violation] = []
    for bit, lasso in enumerate(lassos):
        candidates = {(u, v) for u, v, m in zip(src, dst, marks, strict=True)
                      if m >> bit & 1 and (u == v or component.get(u, -1) == component.get(v, -2))}
        if not candidates:
            continue
        depth = {u: depth_of(table, u) for u, _ in candidates}
        nearest = sorted(candidates, key=lambda e: (depth[e[0]], e))[:64]
        u, v = min(nearest, key=lambda e: (depth[e[0]] + (0 if e[0] == e[1] else
                                           nx.shortest_path_length(graph, e[1], e[0])), e))
        back = [] if u == v else nx.shortest_path(graph, v, u)[1:]
        trace = rebuild(model, rep, table, u)
        trace.loop_start = len(trace.steps)
        start = trace.steps[-1][1] if trace.steps else trace.init
        # with symmetry the cycle closes on a renaming of its first state: going round again
        # applies the renaming again, and a renaming repeated often enough is the identity
        for _ in range(MAX_ROUNDS):
            _follow(model, rep, trace, [v, *back], lasso)
            if trace.steps[-1][1] == start:
                break
        else:  # pragma: no cover - a representative that is no renaming
            raise RuntimeError(f"a {lasso.spec} cycle does not come back to its first state")
        cycle = len(trace.steps) - trace.loop_start
        out.append(Violation(lasso.spec, f"{lasso.description}: the last {cycle} steps return "
                                         f"to the state before them and repeat for ever",
                             trace))
    return out


def cyclic_core(table: FingerprintTable,
                edges: EdgeLog) -> tuple[list[int], list[int], list[int]]:
    """The edges that may lie on a cycle: edges out of a state no edge enters, or into a state no
    edge leaves, are on none, and dropping them may expose more (numpy, a pass per layer). Every
    cycle survives whole, so the strongly connected components with a cycle are the same; what
    reaches networkx is the cyclic part of the graph, not every edge of a large search.

    States are named by their slots in `table` (4 bytes, where a search of hundreds of millions
    of edges could not afford a sort of their fingerprints), read `CHUNK` edges at a time."""
    n = len(edges)
    dtype = np.uint32 if table.capacity <= 1 << 32 else np.uint64
    si, di = np.empty(n, dtype=dtype), np.empty(n, dtype=dtype)
    m = np.empty(n, dtype=np.uint8)
    at = 0
    for src, dst, marks in edges.chunks(CHUNK):
        end = at + len(src)
        si[at:end], di[at:end], m[at:end] = table.slots(src), table.slots(dst), marks
        at = end
    while len(si):
        alive = np.zeros(table.capacity, dtype=bool)
        alive[si] = True
        enters = np.zeros(table.capacity, dtype=bool)
        enters[di] = True
        alive &= enters
        del enters
        keep = alive[si]
        keep &= alive[di]
        del alive
        if keep.all():
            break
        si, di, m = si[keep], di[keep], m[keep]
    keys = np.frombuffer(table.keys, dtype=np.uint64)
    return keys[si].tolist(), keys[di].tolist(), m.tolist()


def _follow(model: Model[Any], rep: Callable[[Any], Any] | None, trace: Trace,
            path: list[int], lasso: Lasso[Any]) -> None:
    """Extend `trace` along the fingerprints `path`, the first step by a marked transition."""
    state = trace.steps[-1][1] if trace.steps else trace.init
    for n, target in enumerate(path):
        for a, t in model.successors(state):
            if fingerprint_of(rep, t) == target and (n or lasso.marked(state, a, t)):
                trace.steps.append((a, t))
                state = t
                break
        else:  # pragma: no cover - the edges came from these successors
            raise RuntimeError("a cycle edge has no matching successor")

"""Helpers shared by the tests of searches run in more than one way."""

from __future__ import annotations

from partsafe.checker.engine.bfs import Result


def same(a: Result, b: Result) -> None:
    """The same search. After a violation the level it is in is finished in scan mode, so the
    states counted and the one trace reported of those of that length depend on the order the
    level is expanded in, which a set's iteration order can change once unpickled: then the
    verdict, the depth and the specs with their trace lengths are the same."""
    assert (a.result, a.depth) == (b.result, b.depth)
    assert [(v.spec, v.trace.depth) for v in a.violations] == [
        (v.spec, v.trace.depth) for v in b.violations]
    if a.violations:
        return
    assert (a.distinct_states, a.transitions, a.fired, a.never_fired) == (
        b.distinct_states, b.transitions, b.fired, b.never_fired)
    assert [(g.name, g.reached, g.trace and g.trace.depth) for g in a.goals] == [
        (g.name, g.reached, g.trace and g.trace.depth) for g in b.goals]

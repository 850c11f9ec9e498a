"""Fault budgets: how many of each thing the environment may do wrong (or do at all) in one run.

The budgets are set on the command line (`--crashes 1 --losses 1`) and kept in every global state
as a tuple of what is left, in `BUDGET_NAMES` order; an action that draws on one spends one unit,
and none is enabled once its budget is spent. The faults:

- crash (crash-stop: the node does nothing more; messages in flight to it are lost, those from it
  stay in flight), join (a dormant node starts), shutdown (a user asks a node to leave
  gracefully), restart (a node stops and starts at once, losing what it keeps in memory), admin
  (an operator's request), each striking one node;
- false suspicions (a failure detector reports a member that is fine);
- losses, duplications and reorders of messages in flight (checker/actor/network.py);
- publishes: a periodic timer's message sent to take effect later, a race with newer updates.

A state is quiescent when only faults (`FAULT_KINDS`) are enabled.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

#: a crashed node's state, compared by identity
CRASHED = "crashed"

FAULT_KINDS = frozenset({"crash", "join", "false-suspect", "drop", "duplicate", "timer-race",
                         "shutdown", "reorder", "restart", "admin"})


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


#: positions in a state's budget tuple
(CRASH, JOIN, SUSPICION, LOSS, DUPLICATION, PUBLISH, SHUTDOWN, REORDER, RESTART,
 ADMIN) = range(10)
BUDGET_NAMES = ("crashes", "joins", "suspicions", "losses", "duplications", "publishes",
                "shutdowns", "reorders", "restarts", "admin")
#: budgets shown only in the scopes of models that have them
OPTIONAL = ("restarts", "admin")
#: the faults that strike one node, with their budgets: `ActorModel.restrict` may confine them
TARGETED = {"crash": "crashes", "join": "joins", "shutdown": "shutdowns", "restart": "restarts"}


def spend(budget: tuple[int, ...], i: int) -> tuple[int, ...]:
    """`budget` with one unit of budget `i` spent."""
    return (*budget[:i], budget[i] - 1, *budget[i + 1:])


def left(budget: Budget, remaining: tuple[int, ...]) -> dict[str, int]:
    """What is left of each budget, by name (the optional ones only if the scope has them)."""
    return {name: n for name, n, first in zip(BUDGET_NAMES, remaining, budget.as_tuple(),
                                              strict=True)
            if first or name not in OPTIONAL}


def check_targets(only: dict[str, frozenset[str]], budget: Budget, names: tuple[str, ...],
                  interchangeable: Iterable[frozenset[str]]) -> None:
    """Raise ValueError, naming the option, if `only` (fault kind -> the nodes it may strike)
    names an unknown kind or node, a fault the scope has no budget for, or tells apart nodes of
    one `interchangeable` group (pass none when there is no symmetry reduction)."""
    for kind, nodes in only.items():
        if kind not in TARGETED:
            raise ValueError(f"--only {kind}=...: a fault kind is one of {', '.join(TARGETED)}")
        unknown = sorted(set(nodes) - set(names))
        if unknown or not nodes:
            what = f"no node named {', '.join(unknown)}" if unknown else "no node"
            raise ValueError(f"--only {kind}={','.join(sorted(nodes))}: {what} (nodes: "
                             f"{', '.join(names)})")
        if not getattr(budget, TARGETED[kind]):
            raise ValueError(f"--only {kind}=...: the scope allows no {TARGETED[kind]}")
        for group in interchangeable:
            if len(group) > 1 and group & nodes and not group <= nodes:
                raise ValueError(
                    f"--only {kind}={','.join(sorted(nodes))} tells apart "
                    f"{', '.join(sorted(group))}, which the symmetry reduction takes as "
                    "interchangeable: name all of them or none, or add --no-symmetry")

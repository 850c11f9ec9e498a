"""The actor layer: a protocol's node handlers (`partsafe.refimpl.actor.Protocol`) with a network
and fault budgets, as one `Model` the explorer searches, in the manner of Stateright's actor
models. It knows nodes, messages, timers, the network and fault budgets, and no protocol.

- model.py     `ActorModel` and its global state `World`: the successors of a state, the monitors
               fed with each step's events, the timer rules, presentation
- network.py   the messages in flight: a multiset or FIFO channels, and what may become of them
               (deliver, drop, duplicate, reorder, discard the dead)
- faults.py    the fault budgets and the faults that strike one node
- symmetry.py  renaming interchangeable names, and one representative per symmetry class

Public API (each name is loaded on first use): `ActorModel`, `World` (model.py), `Budget`
(faults.py).
"""

from partsafe._api import lazy_api

_API = {"ActorModel": "model", "World": "model", "Budget": "faults"}
__all__ = sorted(_API)
__getattr__ = lazy_api(__name__, _API)

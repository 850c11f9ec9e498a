"""TwoPhase: Gray and Lamport's two-phase commit, the calibration model of the explorer.

The TLA+ specification `TwoPhase` (Lamport, "Consensus on Transaction Commit"): one transaction
manager (TM) and N resource managers (RMs); messages form a set that only grows. TLC's
distinct-state counts (288 for 3 RMs, 8,832 for 5, 10,340,352 for 9) pin the explorer's counting.

A state is one int, so that the frontier of a 10-million-state run stays small. From the low bits:
two bits of `rmState` per RM (WORKING, PREPARED, COMMITTED, ABORTED), two bits of `tmState` (INIT,
COMMITTED, ABORTED), N bits of `tmPrepared`, then `msgs`: N bits of ``Prepared(rm)`` and one bit
each for ``Commit`` and ``Abort``. Invariant TCConsistent: no RM committed while another aborted.

Variant `tm-commit-early`: the TM commits once any RM is prepared, which breaks TCConsistent
(`VARIANT_TABLE`; docs/extending.md follows this model's path to add a variant).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from partsafe.checker.engine.model import Action, Goal, Model, Property
from partsafe.checker.protocols.entry import ModelEntry, Param
from partsafe.refimpl.profiles import check_rules
from partsafe.refimpl.variants import Variant, variant_table
from partsafe.traces.events import Event, RmStateChanged, TmPreparedReceived, TmStateChanged

WORKING, PREPARED, COMMITTED, ABORTED = 0, 1, 2, 3  # rmState
INIT, TM_COMMITTED, TM_ABORTED = 0, 1, 2  # tmState
RM_NAMES = ("working", "prepared", "committed", "aborted")
TM_NAMES = ("init", "committed", "aborted")
ACTION_KINDS = ("TMRcvPrepared", "TMCommit", "TMAbort", "RMPrepare", "RMChooseToAbort",
                "RMRcvCommitMsg", "RMRcvAbortMsg")
#: the variants (refimpl/variants.py)
VARIANT_TABLE: dict[str, Variant] = variant_table(
    Variant("fixed", "TwoPhase as specified: the TM commits once every RM is prepared"),
    Variant("tm-commit-early", "not historical: the TM commits once any RM is prepared",
            breaks="TC-CONSISTENT"),
)
#: the names of `VARIANT_TABLE` as they were at import
VARIANTS: tuple[str, ...] = tuple(VARIANT_TABLE)


class TwoPhase(Model[int]):
    """TwoPhase with `rms` resource managers; they are symmetric (the representative sorts them)."""

    name = "twophase"

    def __init__(self, rms: int = 3, variant: str = "fixed", rules: Iterable[str] = ()) -> None:
        if rms < 1:
            raise ValueError("--rms must be at least 1")
        if variant not in VARIANT_TABLE:
            raise ValueError(f"unknown twophase variant {variant!r}; known: "
                             f"{', '.join(VARIANT_TABLE)}")
        # TwoPhase is no shipped protocol: it has no release rules (refimpl/profiles.py)
        check_rules("twophase", rules, {})
        n = rms
        self.n = n
        self.variant = variant
        self.scope = {"rms": rms}
        self.all = (1 << n) - 1
        self.tm_shift = 2 * n
        self.tp_shift = 2 * n + 2
        self.msg_shift = 3 * n + 2
        self.rm_mask = (1 << 2 * n) - 1
        self.low_bits = int("01" * n, 2) if n else 0
        self.commit_msg = 1 << (self.msg_shift + n)
        self.abort_msg = 1 << (self.msg_shift + n + 1)
        self._act = {k: tuple((k, i) for i in range(n)) for k in ACTION_KINDS}

    def init_states(self) -> Iterable[int]:
        return [0]

    def decode(self, s: int) -> tuple[tuple[int, ...], int, int, int]:
        """(rm states, tm state, tmPrepared bitmask, msgs bitmask) of a packed state."""
        rm = tuple((s >> 2 * i) & 3 for i in range(self.n))
        return rm, (s >> self.tm_shift) & 3, (s >> self.tp_shift) & self.all, s >> self.msg_shift

    def successors(self, s: int) -> list[tuple[Action, int]]:
        out: list[tuple[Action, int]] = []
        append = out.append
        act = self._act
        if (s >> self.tm_shift) & 3 == INIT:
            tp = (s >> self.tp_shift) & self.all
            fresh = (s >> self.msg_shift) & self.all & ~tp
            rcv = act["TMRcvPrepared"]
            while fresh:
                low = fresh & -fresh
                append((rcv[low.bit_length() - 1], s | (low << self.tp_shift)))
                fresh ^= low
            if tp == self.all or (self.variant == "tm-commit-early" and tp):
                append((("TMCommit",), s | (TM_COMMITTED << self.tm_shift) | self.commit_msg))
            append((("TMAbort",), s | (TM_ABORTED << self.tm_shift) | self.abort_msg))
        commit = s & self.commit_msg
        abort = s & self.abort_msg
        prepare, choose_abort = act["RMPrepare"], act["RMChooseToAbort"]
        rcv_commit, rcv_abort = act["RMRcvCommitMsg"], act["RMRcvAbortMsg"]
        msg_shift = self.msg_shift
        for i in range(self.n):
            shift = 2 * i
            st = (s >> shift) & 3
            base = s & ~(3 << shift)
            if st == WORKING:
                append((prepare[i], base | (PREPARED << shift) | (1 << (msg_shift + i))))
                append((choose_abort[i], base | (ABORTED << shift)))
            if commit and st != COMMITTED:
                append((rcv_commit[i], base | (COMMITTED << shift)))
            if abort and st != ABORTED:
                append((rcv_abort[i], base | (ABORTED << shift)))
        return out

    def properties(self) -> Sequence[Property[int]]:
        low = self.low_bits

        def consistent(s: int) -> str | None:
            rm = s & self.rm_mask
            hi, lo = (rm >> 1) & low, rm & low
            committed, aborted = hi & ~lo, hi & lo
            if committed and aborted:
                c = (committed.bit_length() - 1) // 2
                a = (aborted.bit_length() - 1) // 2
                return f"rm{c} committed while rm{a} aborted"
            return None

        return [Property("TC-CONSISTENT", "always", consistent)]

    def goals(self) -> Sequence[Goal[int]]:
        return (
            Goal("commit", "an RM commits", lambda s, a, t: a[0] == "RMRcvCommitMsg"),
            Goal("abort-after-prepare", "the TM aborts after an RM prepared",
                 lambda s, a, t: a[0] == "TMAbort" and bool((s >> self.msg_shift) & self.all)),
        )

    def finished(self, s: int) -> bool:
        rm = s & self.rm_mask
        return (rm >> 1) & self.low_bits == self.low_bits  # every RM committed or aborted

    def representative(self, s: int) -> int:
        rm, tm, tp, msgs = self.decode(s)
        rows = sorted((rm[i], (tp >> i) & 1, (msgs >> i) & 1) for i in range(self.n))
        out = (msgs >> self.n) << (self.msg_shift + self.n) | tm << self.tm_shift
        for i, (st, p, m) in enumerate(rows):
            out |= st << 2 * i | p << (self.tp_shift + i) | m << (self.msg_shift + i)
        return out

    def step_events(self, s: int, action: Action, t: int) -> tuple[Event, ...]:
        """TwoPhase's variables a step changes, as events (`partsafe.traces.events`): an RM's
        state, the TM's decision, the TM's receipt of a Prepared message."""
        kind = action[0]
        if kind in ("TMCommit", "TMAbort"):
            return (TmStateChanged(member="tm", state=TM_NAMES[(t >> self.tm_shift) & 3]),)
        rm = f"rm{action[1]}"
        if kind == "TMRcvPrepared":
            return (TmPreparedReceived(member="tm", rm=rm),)
        return (RmStateChanged(member=rm, state=RM_NAMES[(t >> 2 * action[1]) & 3]),)

    def describe_action(self, action: Action) -> tuple[str, str | None]:
        if len(action) == 1:
            return action[0], "TM"
        return f"{action[0]}(rm{action[1]})", f"rm{action[1]}"

    def describe_state(self, s: int) -> dict[str, Any]:
        rm, tm, tp, msgs = self.decode(s)
        sent = [f"Prepared(rm{i})" for i in range(self.n) if msgs >> i & 1]
        if s & self.commit_msg:
            sent.append("Commit")
        if s & self.abort_msg:
            sent.append("Abort")
        view: dict[str, Any] = {
            "TM": {"state": TM_NAMES[tm],
                   "prepared": [f"rm{i}" for i in range(self.n) if tp >> i & 1]},
        }
        for i, st in enumerate(rm):
            view[f"rm{i}"] = RM_NAMES[st]
        view["msgs"] = sent
        return view


TWOPHASE = ModelEntry(
    name="twophase",
    title="Two-phase commit (Gray and Lamport's TwoPhase), the explorer's calibration",
    seed="TwoPhase.tla",
    params={"rms": Param(3, "resource managers", 1)},
    variant_table=VARIANT_TABLE,
    build=lambda variant, scope, rules: TwoPhase(scope["rms"], variant, rules),
    action_kinds=ACTION_KINDS,
)

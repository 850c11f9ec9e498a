"""The fingerprint table: an open-addressing set of 64-bit fingerprints with their parents."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from partsafe.checker.engine.fingerprints import MASK64, MAX_LOAD, FingerprintTable, fingerprint

FP = st.integers(min_value=1, max_value=MASK64)
# fingerprints whose high bits are all set: their home slots are the last few of the table, so a
# run of them wraps around to the front, before and after every growth
HIGH = st.integers(min_value=0, max_value=(1 << 20) - 1).map(lambda low: MASK64 - low)
# a few home slots shared by many fingerprints: long probe runs
CLUSTERED = st.builds(lambda top, low: (top << 56) | low,
                      st.sampled_from([0x00, 0x7F, 0x80, 0xFF]),
                      st.integers(min_value=1, max_value=(1 << 56) - 1))


def _check_table(table: FingerprintTable, expected: dict[int, int], absent: list[int]) -> None:
    assert len(table) == len(expected)
    assert table.count == len(expected)
    assert table.count <= table.limit
    assert table.limit == int(table.capacity * MAX_LOAD)
    assert sum(1 for k in table.keys if k) == len(expected)
    assert table.nbytes == 16 * table.capacity
    for fp, parent in expected.items():
        assert fp in table
        assert table.parent(fp) == parent
    for fp in absent:
        if fp not in expected:
            assert fp not in table
            with pytest.raises(KeyError):
                table.parent(fp)


@settings(max_examples=150, deadline=None)
@given(
    fps=st.lists(st.one_of(FP, HIGH, CLUSTERED), max_size=400),
    bits=st.integers(min_value=1, max_value=6),
    absent=st.lists(st.one_of(FP, HIGH, CLUSTERED), max_size=20),
)
def test_insert_contains_parent_across_growths(fps: list[int], bits: int,
                                               absent: list[int]) -> None:
    table = FingerprintTable(bits=bits)
    expected: dict[int, int] = {}
    for i, fp in enumerate(fps):
        parent = fps[i - 1] if i else 0
        fresh = fp not in expected
        assert table.insert(fp, parent) is fresh
        if fresh:
            expected[fp] = parent
        # every entry stays findable after each insertion (and each growth it triggers)
        if i % 37 == 0:
            _check_table(table, expected, [])
    _check_table(table, expected, absent)


@settings(max_examples=60, deadline=None)
@given(fps=st.lists(HIGH, min_size=1, max_size=300, unique=True))
def test_entries_that_wrap_around_survive_growth(fps: list[int]) -> None:
    table = FingerprintTable(bits=2)
    for fp in fps:
        assert table.insert(fp, fp ^ 1)
    assert len(table) == len(fps)
    for fp in fps:
        assert fp in table
        assert table.parent(fp) == fp ^ 1
        assert not table.insert(fp, 7)  # a duplicate is refused and keeps its first parent
        assert table.parent(fp) == fp ^ 1
    assert len(table) == len(fps)


def test_wraparound_before_growth_is_laid_out_at_the_front() -> None:
    table = FingerprintTable(bits=4)  # 16 slots, grows past 11 entries
    top = [MASK64 - i for i in range(5)]  # all home at slot 15
    for fp in top:
        assert table.insert(fp, 0)
    assert table.capacity == 16
    assert table.keys[15] == top[0]
    assert list(table.keys[:4]) == top[1:]  # the run wrapped to the front
    low = [(1 << 60) | 1, (1 << 60) | 2]  # home slot 1, inside the wrapped run
    for fp in low:
        assert table.insert(fp, 99)
    assert list(table.keys[4:6]) == low
    for i in range(20):  # force two growths
        table.insert((i + 3) << 58 | 12345, i + 1)
    assert table.capacity == 64
    assert len(table) == 27
    for fp in top:
        assert fp in table and table.parent(fp) == 0
    for fp in low:
        assert fp in table and table.parent(fp) == 99
    for i in range(20):
        assert table.parent((i + 3) << 58 | 12345) == i + 1


def test_growth_doubles_capacity_at_load_limit() -> None:
    table = FingerprintTable(bits=3)
    assert (table.capacity, table.limit) == (8, 5)
    for fp in range(1, 6):
        table.insert(fp * 0x1234567 << 30, 0)
    assert table.capacity == 8
    table.insert(6 * 0x1234567 << 30, 0)
    assert (table.capacity, table.limit, len(table)) == (16, 11, 6)


def test_default_table() -> None:
    table = FingerprintTable()
    assert table.capacity == 1 << 16
    assert len(table) == 0
    assert 12345 not in table
    with pytest.raises(KeyError):
        table.parent(12345)


def test_many_growths_from_one_slot_pair() -> None:
    table = FingerprintTable(bits=1)
    fps = [fingerprint(i) for i in range(5000)]
    assert len(set(fps)) == 5000
    for i, fp in enumerate(fps):
        assert table.insert(fp, fps[i - 1] if i else 0)
    assert table.capacity == 8192
    assert len(table) == 5000
    assert all(table.parent(fp) == (fps[i - 1] if i else 0) for i, fp in enumerate(fps))
    assert not table.insert(fps[1234], 1)
    assert len(table) == 5000


@given(st.one_of(st.integers(), st.text(), st.tuples(st.integers(), st.text()),
                 st.frozensets(st.integers())))
def test_fingerprint_is_a_nonzero_64_bit_int(obj: object) -> None:
    fp = fingerprint(obj)
    assert 1 <= fp <= MASK64
    assert fp == fingerprint(obj)


def test_fingerprint_of_zero_hash_is_one() -> None:
    assert hash(0) == 0
    assert fingerprint(0) == 1
    assert fingerprint(()) == fingerprint(())
    # the inverse of the odd multiplier maps to hash 1 -> fingerprint of x is x * MIX mod 2^64
    assert fingerprint(1) == 0x9E3779B97F4A7C15
    assert fingerprint(-1 & ((1 << 61) - 1)) != 0

"""gtune.space.solve.minimal_conflict (QuickXplain) against an oracle whose conflicts
are known: a subset admits nothing when it holds one of the given conflict sets."""

from __future__ import annotations

import math

from hypothesis import given, settings
from hypothesis import strategies as st

from gtune.space.solve import minimal_conflict


@st.composite
def problems(draw: st.DrawFn) -> tuple[int, list[frozenset[int]]]:
    n = draw(st.integers(min_value=1, max_value=40))
    item = st.integers(min_value=0, max_value=n - 1)
    sets = draw(st.lists(st.frozensets(item, min_size=1, max_size=4), min_size=1, max_size=4))
    return n, sets


@given(problems())
@settings(max_examples=300, deadline=None)
def test_the_conflict_found_admits_nothing_and_no_item_can_be_left_out(
    problem: tuple[int, list[frozenset[int]]],
) -> None:
    n, conflicts = problem
    asked: list[list[int]] = []

    def holds(some: list[int]) -> bool:
        asked.append(some)
        return not any(c <= set(some) for c in conflicts)

    core = minimal_conflict(list(range(n)), holds)
    assert not holds(core)  # a conflict
    for x in core:  # irreducible
        assert holds([y for y in core if y != x])
    assert len(set(core)) == len(core)
    k = len(core)
    # QuickXplain's bound: about 2k·log2(n/k) + 2k questions, against n for dropping
    # each item in turn
    assert len(asked) - 1 - k <= 2 * k * math.log2(2 * n / k) + 2 * k


def test_one_item_among_many_takes_about_log_n_questions() -> None:
    asked = []

    def holds(some: list[int]) -> bool:
        asked.append(some)
        return 29 not in some

    assert minimal_conflict(list(range(64)), holds) == [29]
    assert len(asked) <= 2 * 6 + 2


def test_nothing_to_explain() -> None:
    assert minimal_conflict([], lambda some: False) == []

"""Problem data drawn a slice at a time: the values one draw of the whole array gives."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from gtune.measure import problem


@given(
    shape=st.lists(st.integers(1, 7), min_size=1, max_size=3).map(tuple),
    draw=st.integers(1, 50),
    dtype=st.sampled_from(["float32", "float64", "float16"]),
    seed=st.integers(0, 2**32 - 1),
)
def test_uniform_in_slices_is_one_draw(
    shape: tuple[int, ...], draw: int, dtype: str, seed: int
) -> None:
    want = np.random.default_rng(seed).random(shape, dtype=np.float64).astype(dtype)
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(problem, "_DRAW", draw)
        got = problem._uniform(np.random.default_rng(seed), shape, np.dtype(dtype))
    assert got.dtype == want.dtype and got.shape == want.shape
    assert got.tobytes() == want.tobytes()


def test_later_arrays_continue_the_same_stream() -> None:
    """Two arrays drawn one after the other, the first in many slices: the second has
    the values it had when the first was drawn whole."""
    rng = np.random.default_rng(9)
    first = rng.random((5, 9)).astype(np.float32)
    second = rng.random((3, 4)).astype(np.float32)
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(problem, "_DRAW", 4)
        gen = np.random.default_rng(9)
        a = problem._uniform(gen, (5, 9), np.dtype(np.float32))
        b = problem._uniform(gen, (3, 4), np.dtype(np.float32))
    assert a.tobytes() == first.tobytes() and b.tobytes() == second.tobytes()

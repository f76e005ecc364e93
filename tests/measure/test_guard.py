"""The verification guard: vacuous references are named, sound ones pass."""

from __future__ import annotations

import numpy as np
from hypothesis import given
from hypothesis import strategies as st

from gtune.measure.guard import failed_reference, reference_problems


def test_sound_reference_passes():
    rng = np.random.default_rng(0)
    init = rng.random((8, 8), dtype=np.float32)
    ref = init.copy()
    ref[1:-1, 1:-1] = rng.random((6, 6), dtype=np.float32)
    assert reference_problems({"out": init}, {"out": ref}) == []


def test_vacuous_references_are_named():
    init = np.arange(16, dtype=np.float32).reshape(4, 4)
    assert "wrote nothing" in reference_problems({"out": init}, {"out": init.copy()})[0]
    assert "constant" in reference_problems({"out": init}, {"out": np.zeros_like(init)})[0]
    part = init.copy()
    part[0, :] += 1
    assert "75%" in reference_problems({"out": init}, {"out": part})[0]
    assert reference_problems({"out": init}, {"out": part}, unchanged_limit=1.0) == []
    assert "nothing to compare" in reference_problems({"in": init}, {})[0]
    nan = init.copy()
    nan[0, 0] = np.nan
    assert "NaN" in reference_problems({"out": init}, {"out": nan})[0]
    assert "timeout" in failed_reference("timeout", "no answer\nmore")


@given(st.integers(2, 200), st.integers(0, 2**31 - 1))
def test_unchanged_reference_is_always_refused(n: int, seed: int):
    init = np.random.default_rng(seed).integers(0, 100, n).astype(np.int32)
    assert reference_problems({"b": init}, {"b": init.copy()})

"""The verification guard: vacuous references are named, sound ones pass."""

from __future__ import annotations

import numpy as np
from hypothesis import given
from hypothesis import strategies as st

from gtune.measure.guard import (
    array_checks,
    describe_checks,
    failed_reference,
    reference_problems,
)


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


def test_checks_act_per_array():
    init = np.arange(16, dtype=np.float32).reshape(4, 4)
    part = init.copy()
    part[0, :] += 1
    checks = {
        c.name: c
        for c in array_checks(
            {"out": init, "aux": init, "part": init},
            {"out": init + 1, "aux": init.copy(), "part": part},
        )
    }
    assert checks["out"].compared and checks["out"].sound
    assert not checks["aux"].compared  # left as initialised: no other array is switched off
    assert checks["part"].compared and not checks["part"].sound
    text = describe_checks(list(checks.values()), "the default configuration's output")
    assert text.startswith("verified against the default configuration's output: out;")
    assert "not checked: aux, left as initialised" in text
    assert "part (the reference left 75% of it as initialised)" in text
    nan = init.copy()
    nan[0, 0] = np.nan
    past = array_checks({"out": init}, {"out": nan}, reads_past={"out": "reads past 'in'"})
    assert past[0].compared and not past[0].sound  # every configuration reading past fails
    assert not array_checks({"out": init}, {"out": nan})[0].compared
    assert describe_checks([], "x") == "nothing to verify: no array is written"


def test_a_transposed_launch_is_recognised_by_what_it_writes() -> None:
    """A row-first kernel at --global NX,NY writes x up to NY; a centred write (either
    boundary) is a stencil's own and gets no hint, square arrays included."""
    from gtune.measure.guard import transposed_launch_hint

    init = np.zeros((20, 64), np.float32)
    clamp = init.copy()
    clamp[:, :20] = 1.0  # rows 0..19 of 20, columns 0..19 of 64
    assert "give --global NY,NX" in transposed_launch_hint(init, clamp)
    interior = init.copy()
    interior[1:19, 1:19] = 1.0  # radius 1: x 1..18, would end at 19 + 1 = NY
    assert "x up to 19 of 64" in transposed_launch_hint(init, interior)
    for written in (np.s_[:, :], np.s_[1:19, 1:63], np.s_[2:18, 2:62]):
        fine = init.copy()
        fine[written] = 1.0
        assert transposed_launch_hint(init, fine) == ""
    square = np.zeros((24, 25), np.float32)
    centred = square.copy()
    centred[1:23, 1:24] = 1.0  # x 1..23 of 25: ends at 24 = NY, but its margins are equal
    assert transposed_launch_hint(square, centred) == ""
    three = np.zeros((10, 12, 16), np.float32)
    wrote = three.copy()
    wrote[1:9, 1:11, 1:9] = 1.0  # x ends at 9 + 1 = NZ
    assert "give --global NZ,NY,NX" in transposed_launch_hint(three, wrote)
    assert transposed_launch_hint(three, three) == ""

"""The shipped specs' time-steps-per-launch step against real recorded timings.

``tests/data/recording_jacobi2d_steps4.json`` holds every configuration (CX, CY <= 2) of
the global and temporal (tile) techniques of jacobi2d with 4 time steps at 64x32
(``tests/data/temporal/jacobi2d_steps4.stencil.yaml``), measured on PoCL by
benchmarks/compare/record.py; the tiles are the technique ``temporal-tile`` (2D arrays
stream along y with TB time levels in ``temporal``). The engine's visits must equal
the grouped search written out directly, with the TB step in its place.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

import pytest

from gtune.kernel import canonical_config

from .conftest import Recorded
from .test_grouped import (
    RefStep,
    dim_step,
    pow2,
    run_spec,
    simulate,
    tile_shape_step,
    x_step,
)

ROOT = Path(__file__).resolve().parents[2]
RECORDING = ROOT / "tests" / "data" / "recording_jacobi2d_steps4.json"


@pytest.fixture(scope="module")
def recorded() -> Recorded:
    if not RECORDING.exists():
        pytest.fail(f"{RECORDING} is missing; run benchmarks/compare/record.py (see its doc)")
    return Recorded(RECORDING)


def tb_step() -> RefStep:
    return RefStep(["TB"], lambda c, b: True)


def shape_2d(n: Mapping[str, int]) -> RefStep:
    return RefStep(
        ["WX", "WY"],
        lambda c, b: (
            c["WX"] in pow2(1, n["NX"])
            and c["WY"] in pow2(1, n["NY"])
            and c["WX"] * c["WY"] == b["WX"] * b["WY"]
        ),
    )


def merge_step(n: Mapping[str, int]) -> RefStep:
    """hybrid's x merge: BX against CX, their product kept."""
    return RefStep(
        ["BX", "CX"],
        lambda c, b: (
            c["BX"] in pow2(1, n["NX"] // c["WX"])
            and c["CX"] in pow2(1, n["NX"] // (c["WX"] * c["BX"]))
            and c["BX"] * c["CX"] == b["BX"] * b["CX"]
        ),
    )


def steps_of(name: str, n: Mapping[str, int]) -> list[RefStep]:
    y = dim_step("WY", "CY", n["NY"])
    if name == "hybrid":
        return [x_step(n), merge_step(n), y, tb_step(), shape_2d(n), tile_shape_step(n)]
    return [x_step(n), y, tb_step()]  # group-by-dimension


@pytest.mark.parametrize("technique", ["temporal-tile", "global"])
@pytest.mark.parametrize("name", ["hybrid", "group-by-dimension"])
def test_spec_with_time_steps_visits_what_the_steps_say(
    recorded: Recorded, name: str, technique: str
) -> None:
    outcome, evaluator, space = run_spec(recorded, name, technique)
    valid = list(space.enumerate())
    start = {"WY": 1, "CY": 1}
    expected = simulate(
        recorded, valid, start, steps_of(name, recorded.sizes), 3, recorded.objective
    )
    assert evaluator.calls == expected
    tbs = {c["TB"] for c in expected}
    if technique == "temporal-tile":
        assert tbs == {2, 4}  # the TB step tried both for the tile found
    else:
        assert tbs == {1}  # one point: the step costs nothing elsewhere
    ok = [c for c in expected if recorded.by_key[canonical_config(c)].ok]
    assert outcome.best_config == min(ok, key=recorded.objective)

"""Issue 49's candidate ``benchmarks/candidates/zreg_ahead.patch``: ``temporal-zreg``'s
vector walk (``ZREG=2``) with each plane's loads issued two plane steps ahead
(``ZD=2``), into two register sets the walk alternates (unrolled by 2, no register
copied while its load is in flight). Measured on the H200 and not kept: a copy through
the walk gains 7.4 %, heat3d loses 2.3 % where its work-groups per SM stay
(benchmarks/results/h200-limit/temporal-8/walk-bound/).

Its steps must give the bits of the package's single steps, whatever the parity of
the walk's length, and the walk with ``ZD=1`` the package's own.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.stencils import test_int_words as words
from tests.stencils.test_tile_rows import _steps_equal
from tests.stencils.test_zreg_rows_candidate import HEAT, ROOT

pytestmark = pytest.mark.candidate  # a candidate template: run with --candidates

PATCH = "zreg_ahead.patch"
LAPLACIAN = ROOT / "stencils" / "laplacian4.stencil.yaml"
ZV = {"STREAM": 1, "ZREG": 2, "LOCAL": 0, "VX": 4, "BX": 4}


@pytest.mark.opencl
@pytest.mark.parametrize(
    ("source", "steps", "cfg"),
    [
        (HEAT, 4, {"TB": 2, "WX": 4, "WY": 4, "CY": 2, "ZC": 8, "ZS": 1, "ZD": 2}),
        (HEAT, 4, {"TB": 2, "WX": 4, "WY": 4, "ZC": 1, "ZS": 1, "ZD": 2}),  # an odd walk
        (HEAT, 4, {"TB": 2, "WX": 4, "WY": 4, "CX": 2, "ZC": 16, "ZU": 1, "ZD": 2}),
        (HEAT, 8, {"TB": 4, "WX": 4, "WY": 2, "CY": 4, "ZC": 16, "ZU": 1, "ZD": 2}),
        (LAPLACIAN, 4, {"TB": 2, "WX": 4, "WY": 4, "CY": 2, "ZC": 8, "ZS": 1, "ZD": 2}),
        (HEAT, 4, {"TB": 2, "WX": 4, "WY": 4, "CY": 2, "ZC": 8, "ZS": 1}),  # ZD 1
    ],
)
def test_the_walk_ahead_gives_the_single_steps_bits(
    source: Path, steps: int, cfg: dict[str, int], tmp_path: Path
) -> None:
    assert _steps_equal(source, steps, {**ZV, **cfg}, tmp_path, words._variant(PATCH))


@pytest.mark.opencl
def test_a_mutant_of_the_alternation_is_caught(tmp_path: Path) -> None:
    """The second half-step enters the plane it has just issued, not the one before."""
    text = words._variant(PATCH)
    line = "            AHEAD_STEP(p + 1, nv2, ns2, nv, ns)"
    assert line in text
    mutant = text.replace(line, "            AHEAD_STEP(p + 1, nv, ns, nv, ns)")
    cfg = {**ZV, "TB": 2, "WX": 4, "WY": 4, "CY": 2, "ZC": 8, "ZS": 1, "ZD": 2}
    assert not _steps_equal(HEAT, 4, cfg, tmp_path, mutant)

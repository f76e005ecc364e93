"""``temporal-zreg``'s vector walk shared evenly (``ZW > 0``): (32 + ZW)/32 times as many
work-groups as blocks and chunks, each walking a run of (block, plane) pairs that may
end one block's column and begin the next. On the H200 one chunk of heat3d's 64x32
blocks at 512^3 is 128 work-groups for 132 SMs; ``ZW = 1`` launches 132.

S steps of the shared walk against S single steps of the global technique, bit for
bit (each output plane is computed by one run, with the same terms in the same order),
at shapes whose runs cross block boundaries mid-column, and mutants of the runs caught.
"""

from __future__ import annotations

import math
import re
from pathlib import Path

import pytest

from gtune.exceptions import GtuneError
from gtune.stencils.render import template_source
from tests.stencils.test_tile_rows import _kernels, _steps_equal
from tests.stencils.test_zreg_rows_candidate import HEAT, ROOT

# evaluators share the session's worker processes (tests/conftest.py)
pytestmark = pytest.mark.usefixtures("shared_workers")

LAPLACIAN = ROOT / "stencils" / "laplacian4.stencil.yaml"
ZV = {"STREAM": 1, "ZREG": 2, "LOCAL": 0, "VX": 4, "BX": 4}


def _runs(blocks: int, nz: int, groups: int) -> list[list[tuple[int, int, int]]]:
    """Each work-group's runs (block, first plane, end plane) as the kernel walks them."""
    pairs = blocks * nz
    out = []
    for g in range(groups):
        q, end, runs = pairs * g // groups, pairs * (g + 1) // groups, []
        while q < end:
            b, z0 = divmod(q, nz)
            z1 = min(nz, z0 + end - q)
            runs.append((b, z0, z1))
            q += z1 - z0
        out.append(runs)
    return out


@pytest.mark.parametrize(
    ("blocks", "nz", "zc", "zw"),
    [(4, 32, 8, 1), (4, 32, 32, 1), (128, 512, 512, 1), (6, 40, 40, 8)],
)
def test_the_runs_cover_every_pair_once_and_cross_at_most_one_column(
    blocks: int, nz: int, zc: int, zw: int
) -> None:
    groups = (blocks * (nz // zc) * (32 + zw) + 31) // 32
    runs = _runs(blocks, nz, groups)
    walked = sorted((b, z) for group in runs for b, z0, z1 in group for z in range(z0, z1))
    assert walked == [(b, z) for b in range(blocks) for z in range(nz)]
    longest = max(sum(z1 - z0 for _, z0, z1 in group) for group in runs)
    assert longest == math.ceil(blocks * nz / groups)
    if longest <= nz:  # a run no longer than a column crosses at most one boundary
        assert max(len(group) for group in runs) <= 2


def test_the_launch_has_the_shared_walks_work_groups(tmp_path: Path) -> None:
    _, kernel = _kernels(HEAT, 8, tmp_path, template_source())
    base = {**ZV, "TB": 2, "WX": 8, "WY": 4, "CY": 2, "ZC": 8, "ZS": 0, "ZU": 0}
    glob, loc = kernel.launch_sizes(kernel.with_defaults({**base, "ZW": 1}))
    # 32^3: blocks of 32 x 8 (one in x, four in y), four chunks of 8 planes: 16 groups
    assert loc == (8, 4, 1)
    assert glob == (8, 4, (16 * 33 + 31) // 32)
    assert kernel.launch_sizes(kernel.with_defaults({**base, "ZW": 0}))[0] == (8, 16, 4)


@pytest.mark.opencl
@pytest.mark.parametrize(
    ("source", "steps", "cfg"),
    [
        # 4 blocks, one chunk of 32 planes: 5 work-groups of 25-26 planes, every one
        # but the first starting mid-column
        (HEAT, 8, {"TB": 2, "WX": 8, "WY": 4, "CY": 2, "ZC": 32, "ZW": 1}),
        (HEAT, 8, {"TB": 2, "WX": 4, "WY": 4, "CX": 2, "ZC": 8, "ZU": 1, "ZS": 1, "ZW": 8}),
        (HEAT, 8, {"TB": 4, "WX": 4, "WY": 2, "CY": 4, "ZC": 32, "ZU": 1, "ZS": 1, "ZW": 2}),
        (LAPLACIAN, 4, {"TB": 2, "WX": 4, "WY": 4, "CY": 2, "ZC": 32, "ZS": 1, "ZW": 4}),
    ],
)
def test_the_shared_walk_gives_the_single_steps_bits(
    source: Path, steps: int, cfg: dict[str, int], tmp_path: Path
) -> None:
    assert _steps_equal(source, steps, {**ZV, **cfg}, tmp_path, template_source())


@pytest.mark.opencl
@pytest.mark.parametrize(
    ("old", "new"),
    [
        # the second run begun a block too far
        (
            "const long q = run == 0 ? q0 : (q0 / NZ + run) * NZ;",
            "const long q = run == 0 ? q0 : (q0 / NZ + run + 1) * NZ;",
        ),
        # the run's block placed by the wrong count of blocks in a row
        (
            "const int ty0 = (b / nbx) * SBY - HY;",
            "const int ty0 = (b / (nbx + 1)) * SBY - HY;",
        ),
    ],
)
def test_a_mutant_of_the_runs_is_caught(old: str, new: str, tmp_path: Path) -> None:
    text = template_source()
    assert old in text
    cfg = {**ZV, "TB": 2, "WX": 8, "WY": 4, "CY": 2, "ZC": 32, "ZW": 1}
    assert not _steps_equal(HEAT, 8, cfg, tmp_path, text.replace(old, new))


@pytest.mark.opencl
def test_the_shared_walk_without_vectors_stops_the_build(tmp_path: Path) -> None:
    cfg = {"STREAM": 1, "ZREG": 2, "TB": 2, "WX": 4, "WY": 4, "CY": 2, "ZC": 8, "ZW": 1}
    with pytest.raises(GtuneError, match=re.escape("ZW (the walk shared evenly) applies")):
        _steps_equal(HEAT, 4, cfg, tmp_path, template_source())

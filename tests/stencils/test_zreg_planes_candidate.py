"""Issue 49's candidate ``benchmarks/candidates/zreg_planes.patch``: temporal streaming
with the z-neighbours in registers, block first (``ZREG=2``), reads and writes a
work-item's block points through one pointer per plane (``ZP=1``: constant offsets of
the work-item's first point) and tests a plane's place in the array once per plane,
where the package computes an index and tests the plane per point. clang's PTX of
heat3d 512³'s TB 2 winners: integer arithmetic per point and step 4.71 -> 2.08.

The candidate must leave the package's code as it was where it is off (every float
kernel preprocesses to the same text; ``ZP`` left out is 0) and give the bits of the
package's single steps where it is on: the same values read and written, the same
terms in the same order.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from tests.stencils import test_int_words as words
from tests.stencils.test_tile_rows import _steps_equal
from tests.stencils.test_zreg_rows_candidate import CORPUS, HEAT, zreg_text_unchanged

pytestmark = pytest.mark.candidate  # a candidate template: run with --candidates

PATCH = "zreg_planes.patch"


@pytest.mark.skipif(shutil.which("cpp") is None, reason="needs the C preprocessor")
def test_float_kernels_preprocess_as_with_the_package_template(tmp_path: Path) -> None:
    words.test_float_kernels_preprocess_as_with_the_package_template(PATCH, tmp_path)


@pytest.mark.skipif(shutil.which("cpp") is None, reason="needs the C preprocessor")
@pytest.mark.parametrize("name", ["star3d_c", "thermal3d"])
def test_zreg_kernels_without_zp_preprocess_as_the_packages(name: str, tmp_path: Path) -> None:
    zreg_text_unchanged(PATCH, "ZP", "ZP (plane pointers of the z-walk)", name, tmp_path)


ZP = {"STREAM": 1, "ZREG": 2, "ZP": 1, "LOCAL": 0, "VX": 1, "BX": 1}


@pytest.mark.opencl
@pytest.mark.parametrize(
    ("source", "steps", "cfg"),
    [
        (HEAT, 8, {"TB": 2, "WX": 8, "WY": 4, "CX": 2, "CY": 2, "ZC": 8}),
        (HEAT, 8, {"TB": 2, "WX": 16, "WY": 2, "CX": 1, "CY": 4, "ZC": 32, "ZU": 1}),
        (HEAT, 8, {"TB": 4, "WX": 8, "WY": 2, "CX": 1, "CY": 4, "ZC": 16, "ZU": 1}),
        (CORPUS / "thermal3d.stencil.yaml", 4, {"TB": 2, "WX": 8, "WY": 4, "CY": 2, "ZC": 8}),
        (CORPUS / "star3d_c.stencil.yaml", 4, {"TB": 2, "WX": 8, "WY": 2, "CY": 4, "ZC": 8}),
    ],
)
def test_the_plane_pointers_give_the_single_steps_bits(
    source: Path, steps: int, cfg: dict[str, int], tmp_path: Path
) -> None:
    assert _steps_equal(source, steps, {**ZP, **cfg}, tmp_path, words._variant(PATCH))


@pytest.mark.opencl
@pytest.mark.parametrize(
    ("old", "new"),
    [
        # a block point read one row too low
        (
            "#define SOFF(k) (SIDX(0, ((k) / CX) * WY, ((k) % CX) * WX) - SIDX(0, 0, 0))",
            "#define SOFF(k) (SIDX(0, ((k) / CX) * WY + 1, ((k) % CX) * WX) - SIDX(0, 0, 0))",
        ),
        # the array's last plane taken for one beyond it (zeros)
        ("    if ((pp) >= 0 && (pp) < NZ) {", "    if ((pp) >= 0 && (pp) < NZ - 1) {"),
    ],
)
def test_a_mutant_of_the_plane_pointers_is_caught(old: str, new: str, tmp_path: Path) -> None:
    text = words._variant(PATCH)
    assert old in text
    cfg = {**ZP, "TB": 2, "WX": 8, "WY": 4, "CX": 2, "CY": 2, "ZC": 8}
    assert not _steps_equal(HEAT, 8, cfg, tmp_path, text.replace(old, new))

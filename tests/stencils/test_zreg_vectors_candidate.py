"""Issue 49's candidate ``benchmarks/candidates/zreg_vectors.patch``: temporal streaming
with the z-neighbours in registers, block first (``ZREG=2``), with vectors: ``VX = BX``
of 2 or 4 makes each of a work-item's block points a vector of adjacent points in x,
loaded, queued, shared in local memory and stored whole (the halo's points stay
scalars). Its options: ``ZS=1`` stores every level's centre plane at the start of a
plane step and meets one barrier per step (not one per level), ``ZE=1`` stores each
vector's edge lanes apart (x-neighbours without bank conflicts), ``ZY=1`` makes a
work-item's rows adjacent (y-neighbours from its own queues), ``ZD=2`` issues each
plane's loads two steps ahead.

The candidate must leave the package's code as it was where it is off (every float
kernel, and the ``ZREG`` kernels with ``VX=1``, preprocess to the same text) and give
the bits of the package's single steps where it is on: each lane's terms are the scalar
kernel's, in the same order.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from gtune.exceptions import GtuneError
from tests.stencils import test_int_words as words
from tests.stencils.test_tile_rows import _steps_equal
from tests.stencils.test_zreg_rows_candidate import CORPUS, HEAT, ROOT, zreg_text_unchanged

pytestmark = pytest.mark.candidate  # a candidate template: run with --candidates

PATCH = "zreg_vectors.patch"
LAPLACIAN = ROOT / "stencils" / "laplacian4.stencil.yaml"


@pytest.mark.skipif(shutil.which("cpp") is None, reason="needs the C preprocessor")
def test_float_kernels_preprocess_as_with_the_package_template(tmp_path: Path) -> None:
    words.test_float_kernels_preprocess_as_with_the_package_template(PATCH, tmp_path)


@pytest.mark.skipif(shutil.which("cpp") is None, reason="needs the C preprocessor")
@pytest.mark.parametrize("name", ["star3d_c", "thermal3d"])
def test_zreg_kernels_without_vectors_preprocess_as_the_packages(name: str, tmp_path: Path) -> None:
    zreg_text_unchanged(
        PATCH, "ZS", "ZS (one barrier per plane step) applies to ZREG=2", name, tmp_path
    )


def _interior_thermal(tmp: Path) -> Path:
    """thermal3d (a second field, a constant that is a product) with the interior
    boundary, the one the vectors take."""
    text = (CORPUS / "thermal3d.stencil.yaml").read_text()
    assert "boundary: clamp" in text
    path = tmp / "thermal3d_interior.stencil.yaml"
    path.write_text(text.replace("boundary: clamp", "boundary: interior"))
    return path


ZV = {"STREAM": 1, "ZREG": 2, "LOCAL": 0, "VX": 4, "BX": 4}
CASES = [
    (HEAT, 8, {"TB": 2, "WX": 8, "WY": 4, "CY": 2, "ZC": 8}),
    (HEAT, 8, {"TB": 2, "WX": 4, "WY": 4, "CX": 2, "ZC": 32, "ZU": 1}),
    (HEAT, 8, {"TB": 4, "WX": 4, "WY": 2, "CY": 4, "ZC": 16, "ZU": 1}),
    (HEAT, 8, {"TB": 2, "WX": 8, "WY": 4, "CY": 2, "ZC": 8, "ZE": 1, "ZY": 1}),
    (HEAT, 8, {"TB": 2, "WX": 8, "WY": 4, "CY": 2, "ZC": 8, "ZS": 1}),
    (HEAT, 8, {"TB": 4, "WX": 4, "WY": 2, "CY": 4, "ZC": 16, "ZS": 1, "ZE": 1, "ZY": 1}),
    (HEAT, 8, {"TB": 2, "WX": 4, "WY": 4, "CX": 2, "ZC": 32, "ZD": 2, "ZS": 1}),
    (HEAT, 8, {"TB": 4, "WX": 4, "WY": 2, "CY": 4, "ZC": 16, "ZU": 1, "ZD": 2}),
    (LAPLACIAN, 4, {"TB": 2, "WX": 4, "WY": 4, "CY": 2, "ZC": 16, "ZE": 1, "ZS": 1}),
    (LAPLACIAN, 4, {"TB": 2, "WX": 8, "WY": 4, "CY": 2, "ZC": 16, "VX": 2, "BX": 2, "ZE": 1}),
    (CORPUS / "star3d_c.stencil.yaml", 4, {"TB": 2, "WX": 4, "WY": 2, "CY": 4, "ZC": 8}),
    (CORPUS / "star3d_f64.stencil.yaml", 4, {"TB": 2, "WX": 4, "WY": 4, "CX": 2, "ZC": 8}),
]


@pytest.mark.opencl
@pytest.mark.parametrize(("source", "steps", "cfg"), CASES)
def test_the_vectors_give_the_single_steps_bits(
    source: Path, steps: int, cfg: dict[str, int], tmp_path: Path
) -> None:
    assert _steps_equal(source, steps, {**ZV, **cfg}, tmp_path, words._variant(PATCH))


SCALAR = {"STREAM": 1, "ZREG": 2, "LOCAL": 0, "ZS": 1}


@pytest.mark.opencl
@pytest.mark.parametrize(
    ("source", "steps", "cfg"),
    [
        (HEAT, 8, {"TB": 2, "WX": 8, "WY": 4, "CX": 2, "CY": 2, "ZC": 8}),
        (HEAT, 8, {"TB": 4, "WX": 8, "WY": 2, "CY": 4, "ZC": 16, "ZU": 1}),
        (LAPLACIAN, 4, {"TB": 2, "WX": 8, "WY": 4, "CY": 2, "ZC": 16}),
        (CORPUS / "thermal3d.stencil.yaml", 4, {"TB": 2, "WX": 8, "WY": 4, "CY": 2, "ZC": 8}),
    ],
)
def test_one_barrier_per_plane_step_gives_the_single_steps_bits(
    source: Path, steps: int, cfg: dict[str, int], tmp_path: Path
) -> None:
    """ZS=1 in the scalar kernel (VX=1), the clamp boundary (thermal3d) included."""
    assert _steps_equal(source, steps, {**SCALAR, **cfg}, tmp_path, words._variant(PATCH))


@pytest.mark.opencl
def test_a_second_field_and_a_product_constant_give_the_same_bits(tmp_path: Path) -> None:
    """The constant ``ct*amb`` is added lane by lane, so each lane contracts it into its
    sum as the scalar kernel does (added to the vector, it rounds once more)."""
    cfg = {**ZV, "TB": 2, "WX": 4, "WY": 4, "CY": 2, "ZC": 8, "ZS": 1}
    assert _steps_equal(_interior_thermal(tmp_path), 4, cfg, tmp_path, words._variant(PATCH))


@pytest.mark.opencl
@pytest.mark.parametrize(
    ("old", "new", "extra"),
    [
        # ZS: every level's plane taken from the queue's centre before the step's push
        ("#define QSTORE(s) ((s) == 1 ? RZ : RZ + 1)", "#define QSTORE(s) RZ", {"ZS": 1}),
        # the x rim's lanes computed as if written
        (
            "a_[i] = x0 + i >= LOX && x0 + i < HIX ? a_[i] : c_[i];",
            "a_[i] = x0 + i >= 0 && x0 + i < HIX ? a_[i] : c_[i];",
            {},
        ),
        # ZE: a vector's last lane taken for the neighbour's first
        (
            "     : (j) > 0  ? FROM_FIRST(efirst[EPOS(k) + (dy) * EP + 1])",
            "     : (j) > 0  ? FROM_FIRST(efirst[EPOS(k) + (dy) * EP])",
            {"ZE": 1},
        ),
    ],
)
def test_a_mutant_of_the_vectors_is_caught(
    old: str, new: str, extra: dict[str, int], tmp_path: Path
) -> None:
    text = words._variant(PATCH)
    assert old in text
    cfg = {**ZV, "TB": 2, "WX": 8, "WY": 4, "CY": 2, "ZC": 8, **extra}
    assert not _steps_equal(HEAT, 8, cfg, tmp_path, text.replace(old, new))


@pytest.mark.opencl
def test_the_clamp_boundary_stops_the_build(tmp_path: Path) -> None:
    cfg = {**ZV, "TB": 2, "WX": 4, "WY": 4, "CY": 2, "ZC": 8}
    with pytest.raises(GtuneError, match="supports the interior boundary only"):
        _steps_equal(CORPUS / "thermal3d.stencil.yaml", 4, cfg, tmp_path, words._variant(PATCH))

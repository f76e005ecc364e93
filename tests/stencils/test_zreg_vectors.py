"""``temporal-zreg`` with vectors (``ZREG=2``, ``VX = BX`` of 2 or 4, the interior
boundary): each of a work-item's block points a vector of adjacent points in x, loaded,
queued, shared in local memory and stored whole; ``ZS=1`` stores every level's centre
plane at the start of a plane step and meets one barrier per step. Measured on the H200
(heat3d 512^3, 8 steps; benchmarks/results/h200-limit/temporal-8/zreg-vectors/): 3.3-3.7 %
faster than the scalar kernel's best at a 128x16 block with ``ZS=1``.

S steps of the vector kernel against S single steps of the global technique, bit for
bit: each lane's terms are the scalar kernel's, in the same order.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from gtune.exceptions import GtuneError
from gtune.stencils.render import template_source
from tests.stencils.test_tile_rows import _steps_equal
from tests.stencils.test_zreg_rows_candidate import CORPUS, HEAT, ROOT

# evaluators share the session's worker processes (tests/conftest.py)
pytestmark = pytest.mark.usefixtures("shared_workers")

LAPLACIAN = ROOT / "stencils" / "laplacian4.stencil.yaml"
ZV = {"STREAM": 1, "ZREG": 2, "LOCAL": 0, "VX": 4, "BX": 4}


def _interior_thermal(tmp: Path) -> Path:
    """thermal3d (a second field, a constant that is a product) with the interior
    boundary, the one the vectors take."""
    text = (CORPUS / "thermal3d.stencil.yaml").read_text()
    assert "boundary: clamp" in text
    path = tmp / "thermal3d_interior.stencil.yaml"
    path.write_text(text.replace("boundary: clamp", "boundary: interior"))
    return path


@pytest.mark.opencl
@pytest.mark.parametrize(
    ("source", "steps", "cfg"),
    [
        (HEAT, 8, {"TB": 2, "WX": 8, "WY": 4, "CY": 2, "ZC": 8}),
        (HEAT, 8, {"TB": 2, "WX": 4, "WY": 4, "CX": 2, "ZC": 32, "ZU": 1, "ZS": 1}),
        (HEAT, 8, {"TB": 4, "WX": 4, "WY": 2, "CY": 4, "ZC": 16, "ZU": 1}),
        (LAPLACIAN, 4, {"TB": 2, "WX": 4, "WY": 4, "CY": 2, "ZC": 16, "ZS": 1}),
        (LAPLACIAN, 4, {"TB": 2, "WX": 8, "WY": 4, "CY": 2, "ZC": 16, "VX": 2, "BX": 2}),
        (CORPUS / "star3d_f64.stencil.yaml", 4, {"TB": 2, "WX": 4, "WY": 4, "CX": 2, "ZC": 8}),
    ],
)
def test_the_vectors_give_the_single_steps_bits(
    source: Path, steps: int, cfg: dict[str, int], tmp_path: Path
) -> None:
    assert _steps_equal(source, steps, {**ZV, **cfg}, tmp_path, template_source())


@pytest.mark.opencl
def test_a_second_field_and_a_product_constant_give_the_same_bits(tmp_path: Path) -> None:
    """The constant ``ct*amb`` is added lane by lane, so each lane contracts it into its
    sum as the scalar kernel does (added to the vector, it rounds once more)."""
    cfg = {**ZV, "TB": 2, "WX": 4, "WY": 4, "CY": 2, "ZC": 8, "ZS": 1}
    assert _steps_equal(_interior_thermal(tmp_path), 4, cfg, tmp_path, template_source())


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
    ],
)
def test_a_mutant_of_the_vectors_is_caught(
    old: str, new: str, extra: dict[str, int], tmp_path: Path
) -> None:
    text = template_source()
    assert old in text
    cfg = {**ZV, "TB": 2, "WX": 8, "WY": 4, "CY": 2, "ZC": 8, **extra}
    assert not _steps_equal(HEAT, 8, cfg, tmp_path, text.replace(old, new))


@pytest.mark.opencl
@pytest.mark.parametrize(
    ("source", "cfg", "refusal"),
    [
        (CORPUS / "thermal3d.stencil.yaml", ZV, "supports the interior boundary only"),
        (HEAT, {"STREAM": 1, "ZREG": 2, "ZS": 1}, "ZS (one barrier per plane step) applies"),
    ],
)
def test_what_the_vectors_do_not_take_stops_the_build(
    source: Path, cfg: dict[str, int], refusal: str, tmp_path: Path
) -> None:
    full = {**cfg, "TB": 2, "WX": 4, "WY": 4, "CY": 2, "ZC": 8}
    with pytest.raises(GtuneError, match=re.escape(refusal)):
        _steps_equal(source, 4, full, tmp_path, template_source())

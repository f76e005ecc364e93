"""Issue 49's candidate ``benchmarks/candidates/zreg_rows.patch``: temporal streaming
with the z-neighbours in registers, block first (``ZREG=2``), gives a work-item's CY
block points adjacent rows of one column (``ZY=1``; rows WY apart without it), so a
point's y-neighbours inside the column come from the work-item's own registers (the
value it stored into the shared plane) instead of local memory: the rows-per-work-item
idea of temporal tiles' ``TR`` for heat3d's ``temporal-zreg`` (TB 2 on the H200:
1.46x copy, bound by its work per point).

The candidate must leave the package's code as it was where it is off (every float
kernel preprocesses to the same text; ``ZY`` left out is 0) and give the bits of the
package's single steps where it is on: each point's terms in the same order, the
neighbour's value the one the plane holds.
"""

from __future__ import annotations

import dataclasses
import shutil
from pathlib import Path

import pytest

from gtune.stencils.definition import load_definition
from gtune.stencils.render import render_source
from tests.stencils import test_int_words as words
from tests.stencils.template_snapshot import cpp, sizes_of
from tests.stencils.test_tile_rows import _steps_equal

pytestmark = pytest.mark.candidate  # a candidate template: run with --candidates

PATCH = "zreg_rows.patch"
ROOT = Path(__file__).resolve().parents[2]
CORPUS = ROOT / "tests" / "data" / "definitions"
HEAT = ROOT / "stencils" / "heat3d.stencil.yaml"


@pytest.mark.skipif(shutil.which("cpp") is None, reason="needs the C preprocessor")
def test_float_kernels_preprocess_as_with_the_package_template(tmp_path: Path) -> None:
    words.test_float_kernels_preprocess_as_with_the_package_template(PATCH, tmp_path)


ZREG = ["-DTB=2 -DSTREAM=1 -DZC=4 -DZREG=2", "-DTB=4 -DSTREAM=1 -DZC=4 -DZREG=2 -DZU=1 -DCY=2"]


def zreg_text_unchanged(patch: str, param: str, refusal: str, name: str, tmp_path: Path) -> None:
    """Temporal streaming with the z-neighbours in registers, ``param`` left out: the
    package's text from the candidate ``patch``; ``param`` where it does not apply (ZREG
    1) stops the build with ``refusal`` (shared with test_zreg_planes_candidate.py)."""
    d = dataclasses.replace(load_definition(CORPUS / f"{name}.stencil.yaml"), steps=4)
    package = render_source(d)
    with words.template_ab.rendering_from(words._variant(patch)):
        candidate = render_source(d)
    assert candidate != package
    for cfg in ZREG:
        flags = [*sizes_of(package), "-DWX=8", "-DWY=4", *cfg.split()]
        want = cpp(package, flags, tmp_path)
        assert want[0] == 0, (name, cfg, want[1][-300:])
        assert cpp(candidate, flags, tmp_path) == want, (name, cfg)
    flags = [*sizes_of(package), "-DWX=8", "-DWY=4", "-DTB=2", "-DSTREAM=1", "-DZC=4"]
    status, text = cpp(candidate, [*flags, "-DZREG=1", f"-D{param}=1"], tmp_path)
    assert status != 0 and refusal in text


@pytest.mark.skipif(shutil.which("cpp") is None, reason="needs the C preprocessor")
@pytest.mark.parametrize("name", ["star3d_c", "thermal3d"])
def test_zreg_kernels_without_zy_preprocess_as_the_packages(name: str, tmp_path: Path) -> None:
    zreg_text_unchanged(PATCH, "ZY", "ZY (a work-item's block points", name, tmp_path)


ZY = {"STREAM": 1, "ZREG": 2, "ZY": 1, "LOCAL": 0, "VX": 1, "BX": 1}


@pytest.mark.opencl
@pytest.mark.parametrize(
    ("source", "steps", "cfg"),
    [
        (HEAT, 8, {"TB": 2, "WX": 8, "WY": 4, "CX": 2, "CY": 2, "ZC": 8}),
        (HEAT, 8, {"TB": 4, "WX": 8, "WY": 2, "CX": 1, "CY": 4, "ZC": 16, "ZU": 1}),
        (HEAT, 4, {"TB": 2, "WX": 16, "WY": 2, "CX": 1, "CY": 8, "ZC": 32}),  # one block high
        (CORPUS / "thermal3d.stencil.yaml", 4, {"TB": 2, "WX": 8, "WY": 4, "CY": 2, "ZC": 8}),
        (CORPUS / "star3d_c.stencil.yaml", 4, {"TB": 2, "WX": 8, "WY": 2, "CY": 4, "ZC": 8}),
    ],
)
def test_the_columns_give_the_single_steps_bits(
    source: Path, steps: int, cfg: dict[str, int], tmp_path: Path
) -> None:
    assert _steps_equal(source, steps, {**ZY, **cfg}, tmp_path, words._variant(PATCH))


@pytest.mark.opencl
def test_a_mutant_of_the_columns_is_caught(tmp_path: Path) -> None:
    """A y-neighbour read from the next column's point instead: wrong bits."""
    text = words._variant(PATCH)
    line = "#define COLUMN_AT(k, dy) q[s - 1][min(max((k) + (dy) * CX, 0), PTS - 1)][RZ]"
    assert line in text
    mutant = text.replace(line, line.replace("(k) + (dy) * CX", "(k) + (dy) * CX + 1"))
    cfg = {**ZY, "TB": 2, "WX": 8, "WY": 4, "CX": 2, "CY": 2, "ZC": 8}
    assert not _steps_equal(HEAT, 8, cfg, tmp_path, mutant)

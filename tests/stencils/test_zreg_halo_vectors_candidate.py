"""Issue 49's candidate ``benchmarks/candidates/zreg_halo_vectors.patch``:
``temporal-zreg``'s vector walk (``ZREG=2``, ``VX = BX = 4``) with its halo as aligned
vectors (``HV=1``): the rows above and below the block and one vector on each side of
each row, loaded, queued, stored in the plane and computed lane by lane as the block's
vectors are, frame by frame outwards. Measured on the H200 and not kept: it needs more
registers than the scalar halo (72 against 64 at TB 2, spills at TB 4) and loses
11-24 % (benchmarks/results/h200-limit/temporal-8/halo/).

Without ``HV`` the candidate must leave the package's code as it was; with it, give the
bits of the package's single steps (a side vector's lanes beyond a level's region are
computed and never read).
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
from tests.stencils.test_zreg_rows_candidate import CORPUS, HEAT, ROOT
from tests.stencils.test_zreg_vectors import _interior_thermal

pytestmark = pytest.mark.candidate  # a candidate template: run with --candidates

PATCH = "zreg_halo_vectors.patch"
LAPLACIAN = ROOT / "stencils" / "laplacian4.stencil.yaml"
ZV = {"STREAM": 1, "ZREG": 2, "LOCAL": 0, "VX": 4, "BX": 4}
VECTOR_WALK = ["-DTB=2 -DZC=4 -DZS=1", "-DTB=4 -DZC=4 -DZU=1"]


@pytest.mark.skipif(shutil.which("cpp") is None, reason="needs the C preprocessor")
def test_float_kernels_preprocess_as_with_the_package_template(tmp_path: Path) -> None:
    words.test_float_kernels_preprocess_as_with_the_package_template(PATCH, tmp_path)


def walk_as_the_packages(patch: str, tmp_path: Path) -> tuple[str, list[str]]:
    """heat3d's vector walk at TB 2 and 4 rendered from ``patch``, its own options left
    out, preprocesses to the package's text; the candidate's source and the options of
    that walk back."""
    d = dataclasses.replace(load_definition(HEAT), steps=4)
    package = render_source(d)
    with words.template_ab.rendering_from(words._variant(patch)):
        candidate = render_source(d)
    assert candidate != package
    base = [*sizes_of(package), "-DWX=4", "-DWY=4", "-DSTREAM=1", "-DZREG=2", "-DVX=4", "-DBX=4"]
    for cfg in VECTOR_WALK:
        want = cpp(package, [*base, *cfg.split()], tmp_path)
        assert want[0] == 0, (cfg, want[1][-300:])
        assert cpp(candidate, [*base, *cfg.split()], tmp_path) == want, cfg
    return candidate, base


@pytest.mark.skipif(shutil.which("cpp") is None, reason="needs the C preprocessor")
def test_the_vector_walk_without_hv_preprocesses_as_the_packages(tmp_path: Path) -> None:
    """heat3d's vector walk at TB 2 and 4, ``HV`` left out: the package's text; ``HV=1``
    where the side vectors cannot hold the x halo (TB*RX > VX) stops the build."""
    candidate, base = walk_as_the_packages(PATCH, tmp_path)
    status, text = cpp(candidate, [*base, "-DTB=8", "-DZC=4", "-DHV=1"], tmp_path)
    assert status != 0 and "HV=1: the halo's side vectors hold the x halo" in text


@pytest.mark.opencl
@pytest.mark.parametrize(
    ("source", "steps", "cfg"),
    [
        (HEAT, 4, {"TB": 2, "WX": 4, "WY": 4, "ZC": 8, "ZS": 1}),
        (HEAT, 4, {"TB": 2, "WX": 4, "WY": 2, "CY": 2, "ZC": 16}),
        (HEAT, 8, {"TB": 4, "WX": 4, "WY": 8, "ZC": 16, "ZU": 1}),
        (HEAT, 8, {"TB": 4, "WX": 2, "WY": 4, "CX": 2, "CY": 2, "ZC": 8}),
        (LAPLACIAN, 4, {"TB": 2, "WX": 4, "WY": 4, "ZC": 8, "ZS": 1}),  # radius 2: HX = VX
        (CORPUS / "star3d_f64.stencil.yaml", 4, {"TB": 2, "WX": 4, "WY": 4, "ZC": 8}),
    ],
)
def test_the_halo_vectors_give_the_single_steps_bits(
    source: Path, steps: int, cfg: dict[str, int], tmp_path: Path
) -> None:
    assert _steps_equal(source, steps, {**ZV, **cfg, "HV": 1}, tmp_path, words._variant(PATCH))


@pytest.mark.opencl
def test_a_second_field_and_a_product_constant_give_the_bits(tmp_path: Path) -> None:
    """thermal3d with the interior boundary: its power field's terms read lane by lane
    at each halo vector's place, its constant added lane by lane."""
    cfg = {**ZV, "TB": 2, "WX": 4, "WY": 4, "ZC": 8, "ZS": 1, "HV": 1}
    source = _interior_thermal(tmp_path)
    assert _steps_equal(source, 4, cfg, tmp_path, words._variant(PATCH))


@pytest.mark.opencl
def test_a_mutant_that_skips_a_levels_outer_frame_is_caught(tmp_path: Path) -> None:
    """Level s computes the halo's vectors of frames 1 .. TB - s; a walk that stops one
    frame short leaves the next level's neighbours stale."""
    text = words._variant(PATCH)
    line = "if (s < TB && IN_FRAMES_V(m, TB - s)) {"
    assert text.count(line) == 1
    mutant = text.replace(line, "if (s < TB && IN_FRAMES_V(m, TB - s - 1)) {")
    cfg = {**ZV, "TB": 2, "WX": 4, "WY": 4, "ZC": 8, "ZS": 1, "HV": 1}
    assert not _steps_equal(HEAT, 4, cfg, tmp_path, mutant)

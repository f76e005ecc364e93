"""Issue 49's candidate ``benchmarks/candidates/zreg_halo_lq.patch``: the halo vectors
of ``zreg_halo_vectors.patch`` (``HV=1``) with their z-queues in local memory
(``HL=1``). Of each halo vector's queue only the newest plane stays in a register; the
older ones lie in slots of the work-item's own (indexed by its halo vector, so no
barrier guards them), in rings advanced once per plane step. Measured on the H200 and
not kept: TB 4 at 115 registers without spills, but at 0.78x the speed of the package's
scalar halo, and slower than HV's register queues where they barely spill
(benchmarks/results/h200-limit/temporal-8/halo-lq/).

Without ``HV`` the candidate must leave the package's code as it was; with ``HV=1``
and ``HL`` 0 or 1, give the bits of the package's single steps (each lane's terms are
HV's, in the same order).
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from tests.stencils import test_int_words as words
from tests.stencils.template_snapshot import cpp
from tests.stencils.test_tile_rows import _steps_equal
from tests.stencils.test_zreg_halo_vectors_candidate import walk_as_the_packages
from tests.stencils.test_zreg_rows_candidate import CORPUS, HEAT, ROOT
from tests.stencils.test_zreg_vectors import _interior_thermal

pytestmark = pytest.mark.candidate  # a candidate template: run with --candidates

PATCH = "zreg_halo_lq.patch"
LAPLACIAN = ROOT / "stencils" / "laplacian4.stencil.yaml"
ZV = {"STREAM": 1, "ZREG": 2, "LOCAL": 0, "VX": 4, "BX": 4}
TB2 = {"TB": 2, "WX": 4, "WY": 4, "ZC": 8, "ZS": 1, "HV": 1, "HL": 1}


@pytest.mark.skipif(shutil.which("cpp") is None, reason="needs the C preprocessor")
def test_float_kernels_preprocess_as_with_the_package_template(tmp_path: Path) -> None:
    words.test_float_kernels_preprocess_as_with_the_package_template(PATCH, tmp_path)


@pytest.mark.skipif(shutil.which("cpp") is None, reason="needs the C preprocessor")
def test_the_vector_walk_without_hv_preprocesses_as_the_packages(tmp_path: Path) -> None:
    """heat3d's vector walk at TB 2 and 4, ``HV`` and ``HL`` left out: the package's
    text; ``HL=1`` without ``HV=1`` stops the build."""
    candidate, base = walk_as_the_packages(PATCH, tmp_path)
    status, text = cpp(candidate, [*base, "-DTB=2", "-DZC=4", "-DHL=1"], tmp_path)
    assert status != 0 and "HL=1 keeps the queues of HV=1's halo vectors" in text


@pytest.mark.opencl
@pytest.mark.parametrize(
    ("source", "steps", "cfg"),
    [
        (HEAT, 4, TB2),
        (HEAT, 4, {"TB": 2, "WX": 4, "WY": 2, "CY": 2, "ZC": 16, "HV": 1, "HL": 1}),
        (HEAT, 8, {"TB": 4, "WX": 4, "WY": 8, "ZC": 16, "ZU": 1, "HV": 1, "HL": 1}),
        (HEAT, 8, {"TB": 4, "WX": 4, "WY": 8, "ZC": 16, "ZS": 1, "HV": 1, "HL": 1}),
        (HEAT, 8, {"TB": 4, "WX": 4, "WY": 8, "ZC": 8, "ZS": 1, "ZU": 1, "HV": 1, "HL": 1}),
        # 8 work-items, 64 halo vectors: eight a work-item
        (HEAT, 8, {"TB": 4, "WX": 2, "WY": 4, "CX": 2, "CY": 2, "ZC": 8, "HV": 1, "HL": 1}),
        (HEAT, 8, {"TB": 4, "WX": 4, "WY": 8, "ZC": 16, "ZU": 1, "HV": 1}),  # HL 0: HV's
        (LAPLACIAN, 4, TB2),  # radius 2: rings of 4 and 2 (1 with ZS) planes
        (LAPLACIAN, 4, {"TB": 2, "WX": 4, "WY": 4, "ZC": 8, "ZU": 1, "HV": 1, "HL": 1}),
        (CORPUS / "star3d_f64.stencil.yaml", 4, {**TB2, "ZS": 0}),
    ],
)
def test_the_local_queues_give_the_single_steps_bits(
    source: Path, steps: int, cfg: dict[str, int], tmp_path: Path
) -> None:
    assert _steps_equal(source, steps, {**ZV, **cfg}, tmp_path, words._variant(PATCH))


@pytest.mark.opencl
def test_a_second_field_and_a_product_constant_give_the_bits(tmp_path: Path) -> None:
    """thermal3d with the interior boundary: its power field's terms read lane by lane
    at each halo vector's place, its constant added lane by lane."""
    source = _interior_thermal(tmp_path)
    assert _steps_equal(source, 4, {**ZV, **TB2}, tmp_path, words._variant(PATCH))


@pytest.mark.opencl
@pytest.mark.parametrize(
    ("line", "wrong"),
    [
        # level s computes frames 1 .. TB - s: one frame short leaves stale neighbours
        ("if (s < TB && IN_FRAMES_V(m, TB - s)) {", "if (s < TB && IN_FRAMES_V(m, TB - s - 1)) {"),
        # a level's push from this step's ring state overwrites a plane still read
        ("QH_PUSH(s, m, hqc - 1, v)", "QH_PUSH(s, m, hqc, v)"),
        # the ring not advanced: every plane step drops the same slot
        ("            ++hqc;\n", "\n"),
    ],
)
def test_mutants_of_the_frames_and_the_rings_are_caught(
    line: str, wrong: str, tmp_path: Path
) -> None:
    text = words._variant(PATCH)
    assert text.count(line) == 1
    cfg = {**ZV, "TB": 4, "WX": 4, "WY": 8, "ZC": 16, "ZU": 1, "HV": 1, "HL": 1}
    assert not _steps_equal(HEAT, 8, cfg, tmp_path, text.replace(line, wrong))

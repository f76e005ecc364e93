"""Issue 49's candidate ``benchmarks/candidates/zreg_onestep.patch``: ``temporal-zreg``'s
walk (``ZREG=2`` with vectors) at TB 1, a one-step technique that reads each input
vector once and takes its z-neighbours from registers. Measured on the H200 and not
kept: its best was 12-13 % slower than vec on heat3d and laplacian4
(benchmarks/results/h200-limit/temporal-8/walk-bound/).

The candidate must leave the package's code as it was (every float kernel preprocesses
to the same text) and give the package's bits at TB 1: each lane's terms are the scalar
kernel's, in the same order.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import numpy as np
import pytest
import yaml

from gtune.measure.once import run_plain
from tests.stencils import test_int_words as words
from tests.stencils.test_tile_rows import SINGLE, _kernels, _steps_equal
from tests.stencils.test_zreg_rows_candidate import HEAT, ROOT

pytestmark = pytest.mark.candidate  # a candidate template: run with --candidates

PATCH = "zreg_onestep.patch"
LAPLACIAN = ROOT / "stencils" / "laplacian4.stencil.yaml"
COPY = ROOT / "benchmarks" / "results" / "onestep" / "copy-through-template" / "copy3d.stencil.yaml"
WALK = {"STREAM": 1, "ZREG": 2, "LOCAL": 0, "VX": 4, "BX": 4, "TB": 1}


@pytest.mark.skipif(shutil.which("cpp") is None, reason="needs the C preprocessor")
def test_float_kernels_preprocess_as_with_the_package_template(tmp_path: Path) -> None:
    words.test_float_kernels_preprocess_as_with_the_package_template(PATCH, tmp_path)


def _one_step_equal(source: Path, cfg: dict[str, int], tmp: Path, text: str) -> bool:
    """One step of ``text``'s walk at ``cfg`` against one step of the package's global
    technique, on the same arrays (the output's kept rim the same in both)."""
    package, variant = _kernels(source, 1, tmp, text)
    arrays = words.template_exact.inputs(package, seed=7)
    out = str(yaml.safe_load(source.read_text())["output"])
    want = run_plain(
        package, arrays, package.with_defaults({**SINGLE, "WX": 8, "WY": 4}), device="pthread"
    )[out]
    got = run_plain(variant, arrays, variant.with_defaults(cfg), device="pthread")[out]
    assert np.isfinite(want).all()
    return bool(words.template_exact.same_bits(want, got))


@pytest.mark.opencl
@pytest.mark.parametrize(
    ("source", "cfg"),
    [
        (HEAT, {"WX": 4, "WY": 4, "CY": 2, "ZC": 8}),
        (LAPLACIAN, {"WX": 4, "WY": 4, "ZC": 8}),  # radius 2: two halo frames
        (COPY, {"WX": 8, "WY": 2, "ZC": 32}),  # radius 0: no halo, a queue of one
    ],
)
def test_the_walk_at_tb_1_gives_one_steps_bits(
    source: Path, cfg: dict[str, int], tmp_path: Path
) -> None:
    assert _one_step_equal(source, {**WALK, **cfg}, tmp_path, words._variant(PATCH))


@pytest.mark.opencl
def test_steps_launched_one_by_one_give_the_single_steps_bits(tmp_path: Path) -> None:
    cfg = {**WALK, "WX": 2, "WY": 4, "CX": 2, "ZC": 16, "ZU": 1}
    assert _steps_equal(HEAT, 2, cfg, tmp_path, words._variant(PATCH))


@pytest.mark.opencl
def test_a_mutant_of_the_walk_is_caught(tmp_path: Path) -> None:
    """The z-neighbour below read from the centre's queue entry: wrong bits."""
    text = words._variant(PATCH)
    line = "    const VT v_ = ((dx) == 0 && (dy) == 0) ? qv[s - 1][k][RZ + (dz)]"
    assert line in text
    mutant = text.replace(line, line.replace("RZ + (dz)", "RZ + max((dz), 0)"))
    assert not _one_step_equal(HEAT, {**WALK, "WX": 4, "WY": 4, "ZC": 8}, tmp_path, mutant)

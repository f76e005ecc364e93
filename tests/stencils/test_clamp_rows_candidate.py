"""Issue 48's candidate ``benchmarks/candidates/clamp_rows.patch``: row blocks (``BY``,
``BZ``) in the vec technique without whole rim vectors, for the clamp-boundary 8-bit
kernels that convert 3.4 input lanes per output (benchmarks/results/lift/int_words.md,
"Row blocks for the clamp boundary"), with ``clamp_rows.py``'s launch of ``BY`` rows
per work-item.

A candidate must leave every float kernel's code as it was where it is off, and give
the package's bits where it is on: on PoCL, ``BY`` 2 to 8 against the package's one row
of the same configuration, on a 64 x 64 array whose blocks straddle every edge (the
first and last rows clamped, the x-edge vectors lane by lane), uint8 clamped and padded,
int8 in 3D with the zero boundary (``BZ``); a row block that clamps its last row wrong
is caught.
"""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

import pytest

from gtune.description import load_kernel
from tests.conftest import load_script
from tests.stencils import test_int_words as words

pytestmark = pytest.mark.candidate  # a candidate template: run with --candidates

PATCH = "clamp_rows.patch"
ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "benchmarks"))  # clamp_rows.py imports its tools from there
clamp_rows = load_script(ROOT / "benchmarks" / "candidates" / "clamp_rows.py")


@pytest.mark.skipif(shutil.which("cpp") is None, reason="needs the C preprocessor")
def test_float_kernels_preprocess_as_with_the_package_template(tmp_path: Path) -> None:
    words.test_float_kernels_preprocess_as_with_the_package_template(PATCH, tmp_path)


def _check(
    path: Path, variant: str, configs: list[str], vset: dict[str, int], size: int = 4
) -> tuple[int, ...]:
    """template_exact's check inside ``row_blocks``: (same bits, different, skipped); 2D
    arrays 16 * ``size`` square, 3D ``size`` cubed."""
    base = "LOCAL=0,STREAM=0,ZC=1,CX=1,CY=1"
    cfgs = [words.template_exact.parse_config(f"{base},{c}") for c in configs]
    with clamp_rows.row_blocks():
        result: tuple[int, ...] = words.template_exact.check(
            str(path), variant, size, cfgs, "pthread", vset
        )
    return result


@pytest.mark.opencl
@pytest.mark.parametrize(
    ("case", "configs", "vset"),
    [
        ("u8-2d-clamp", ["WX=2,WY=2,BX=16,VX=16,CY=2", "WX=4,WY=4,BX=4,VX=4"], {"BY": 8}),
        ("u8-2d-padded", ["WX=4,WY=2,BX=8,VX=8,CX=2"], {"BY": 4}),
        ("s8-3d-zero", ["WX=2,WY=2,WZ=1,BX=4,VX=4"], {"BY": 2, "BZ": 2}),
    ],
)
def test_row_blocks_give_the_package_templates_bits(
    case: str, configs: list[str], vset: dict[str, int], tmp_path: Path
) -> None:
    path = tmp_path / "k.stencil.yaml"
    path.write_text(words._definition(case).to_yaml())
    variant = words._variant(PATCH)
    size = 16 if words.CASES[case][0] == 3 else 4
    assert _check(path, variant, configs, vset, size) == (len(configs), 0, 0)


def test_the_launch_takes_by_rows_per_work_item(tmp_path: Path) -> None:
    """Inside ``row_blocks`` a zero-boundary kernel launches NY / (BY*CY) rows of
    work-items and has BY; outside, the package's NY / CY and no BY. (The package's
    clamp kernels have BY, with RIM=1: whole rim vectors serve the clamp boundary.)"""
    path = tmp_path / "k.stencil.yaml"
    path.write_text(words._definition("s8-3d-zero").to_yaml())
    cfg = {"WX": 4, "WY": 2, "WZ": 1, "BX": 4, "VX": 4, "CX": 1, "CY": 2, "CZ": 1, "ZC": 1}
    sizes = {"NX": 64, "NY": 16, "NZ": 16}
    package = load_kernel(path).with_sizes(sizes)
    assert "BY" not in package.parameter_names
    assert package.launch_sizes(cfg)[0] == (16, 8, 16)
    with clamp_rows.row_blocks():
        blocks = load_kernel(path).with_sizes(sizes)
    assert "BY" in blocks.parameter_names
    assert blocks.launch_sizes({**cfg, "BY": 4, "BZ": 2})[0] == (16, 2, 8)
    assert "BY" not in load_kernel(path).parameter_names  # the renderer restored


@pytest.mark.opencl
def test_a_last_row_clamped_wrong_is_caught(tmp_path: Path) -> None:
    path = tmp_path / "k.stencil.yaml"
    path.write_text(words._definition("u8-2d-clamp").to_yaml())
    right = "#define BLOCK_ROW(zz, yy) VROW(SRC, VRZ(zz), VRY(yy))"
    wrong = "#define BLOCK_ROW(zz, yy) VROW(SRC, VRZ(zz), min(max((yy), 0), NY - 2))"
    variant = words._variant(PATCH)
    assert variant.count(right) == 1
    mutant = variant.replace(right, wrong)
    assert _check(path, mutant, ["WX=2,WY=2,BX=16,VX=16"], {"BY": 4}) == (0, 1, 0)


def test_the_runner_refuses_an_unknown_tool(capsys: pytest.CaptureFixture[str]) -> None:
    assert clamp_rows.main(["bench"]) == 2
    assert "give ab, exact or ptx" in capsys.readouterr().err

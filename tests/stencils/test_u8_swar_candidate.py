"""Issue 48's candidate ``benchmarks/candidates/u8_swar.patch``: the vector technique's
8-bit sums computed in integers, two 16-bit lanes a 32-bit word, where every weight is
an integer multiple of 2^-K (the package's float sums are then exact, so the integer
sum, converted once, is the package's float), for the H200's 8-bit kernels, which issue
about 21 instructions an output (benchmarks/results/lift/u8_math/README.md).

A candidate must leave every float kernel's code as it was and give the package's bits:
on PoCL, the five lifted integer kernels of issue 48 (``stencils/plain/``: the box blur
keeps the package's code, its weights 1/9 are no multiple of a power of two), and a
signed kernel with negative weights whose sums reach the 16-bit lanes' bound, inputs
random with stretches of each type's extremes; a bias off by one is caught.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from gtune.description import load_kernel
from gtune.kernel import TunableKernel
from gtune.stencils.definition import load_definition, parse_definition
from tests.conftest import run_gtune
from tests.stencils import test_int_words as words

pytestmark = pytest.mark.candidate  # a candidate template: run with --candidates

PATCH = "u8_swar.patch"
ROOT = Path(__file__).resolve().parents[2]
PATCH_PATH = ROOT / "benchmarks" / "candidates" / PATCH

# (kernel, its x and y scalars), as benchmarks/results/lift/no_cvt/run_no_cvt.sh lifts them
LIFTED = {
    "blur_u8": ("width", "height"),
    "gauss_u8_rte": ("cols", "rows"),
    "smooth_s8": ("nx", "ny"),
    "binomial_u16": ("w", "h"),
    "prewitt_u8_s16": ("w", "h"),
}
SIZES = {"NX": 64, "NY": 12}
# VX 16 and 8 (with cyclic merging), the vec winners' widths; the edge cases VX 4 too:
# each width's words (one, two, four a vector) and compositions of a row's vectors
CHANGES: list[dict[str, int]] = [
    {"VX": 16, "BX": 16, "WX": 4},
    {"VX": 8, "BX": 8, "WX": 4, "CX": 2},
]
EDGE_CHANGES = [*CHANGES, {"VX": 4, "BX": 4, "WX": 4}]
# the kernels whose code the candidate keeps (weights 1/9; 16-bit lanes): one width
KEPT = ("blur_u8", "binomial_u16")


def _lift(name: str, out: Path) -> Path:
    x, y = LIFTED[name]
    path = out / f"{name}.stencil.yaml"
    plain = str(ROOT / "stencils" / "plain" / f"{name}.cl")
    flags = ["--scalar", f"{x}=NX", "--scalar", f"{y}=NY", "--default", "WX=16,WY=8"]
    done = run_gtune("lift", plain, "--size", "32x24", *flags, "-o", str(path))
    assert done.returncode == 0, done.stderr
    return path


def _arrays(kernel: TunableKernel) -> dict[str, np.ndarray]:
    """words' random inputs over the type's whole range, with rows 2-4 at its maximum and
    rows 7-8 at its minimum (the sums' extremes, the lanes' bounds)."""
    arrays = words._arrays(kernel, seed=7)
    for a in kernel.arguments:
        if a.kind == "buffer" and a.role == "input" and arrays[a.name].dtype.kind in "iu":
            info = np.iinfo(arrays[a.name].dtype)
            rows = arrays[a.name].reshape(SIZES["NY"], SIZES["NX"])
            rows[2:5] = info.max
            rows[7:9] = info.min
            rows[5, ::3] = info.max
    return arrays


def same_bits(path: Path, variant: str, changes: list[dict[str, int]] = CHANGES) -> int:
    """Configurations whose outputs from ``variant`` are the package template's bits and
    the numpy reference's; fails at the first that is not."""
    definition = load_definition(path)
    package = load_kernel(path).with_sizes(SIZES)
    with words.template_ab.rendering_from(variant):
        other = load_kernel(path).with_sizes(SIZES)
    arrays = _arrays(package)
    out = definition.output
    want = definition.reference({f: arrays[f] for f in definition.fields}, arrays[out])
    checked = 0
    for cfg in words.allowed(package, changes):
        a = words._outputs(package, arrays, cfg)[out]
        b = words._outputs(other, arrays, cfg)[out]
        assert b.tobytes() == a.tobytes(), (path.name, cfg, "not the package's bits")
        assert b.tobytes() == want.tobytes(), (path.name, cfg, "not the reference's bits")
        checked += 1
    return checked


def _edge_definition(tmp_path: Path, storage: str, boundary: str, output: str | None) -> Path:
    """Weights k/256 with negative ones, offsets -3 to 4 in x (each class of x + dx mod
    4, and words beyond the next), sum of |W| 256: the lanes' sums span 255 * 256 =
    65280 of the 65535 they hold."""
    w = {(-1, -1): -41, (0, -1): 25, (1, -1): -7, (-1, 0): 23, (0, 0): 41, (1, 0): -15}
    w |= {(-1, 1): 7, (0, 1): -23, (1, 1): 9, (-3, 0): 15, (-2, 0): -9, (2, 0): 7}
    w |= {(3, 0): -17, (4, 0): 17}
    assert sum(abs(c) for c in w.values()) == 256
    terms: list[dict[str, Any]] = [
        {"field": "src", "offset": [dx, dy], "coefficient": f"{c}/256"} for (dx, dy), c in w.items()
    ]
    data: dict[str, Any] = {"name": "k", "dims": 2, "dtype": "float32", "boundary": boundary}
    data |= {"fields": ["src"], "output": "dst", "storage": storage, "terms": terms}
    if output is None:
        data["convert"] = "rte_sat"
    else:
        data["output_storage"] = output
    path = tmp_path / f"edge_{storage}.stencil.yaml"
    path.write_text(parse_definition(data, path.name).to_yaml())
    return path


def test_float_kernels_preprocess_as_with_the_package_template(tmp_path: Path) -> None:
    words.test_float_kernels_preprocess_as_with_the_package_template(PATCH, tmp_path)


@pytest.mark.opencl
@pytest.mark.usefixtures("shared_workers")
def test_the_lifted_integer_kernels_give_the_package_templates_bits(tmp_path: Path) -> None:
    variant = words._variant(PATCH)
    for name in LIFTED:
        changes = CHANGES[:1] if name in KEPT else CHANGES
        assert same_bits(_lift(name, tmp_path), variant, changes) == len(changes), name
    for storage, boundary, output in (("int8", "zero", None), ("uint8", "clamp", "float32")):
        path = _edge_definition(tmp_path, storage, boundary, output)
        assert same_bits(path, variant, EDGE_CHANGES) == len(EDGE_CHANGES), path.name


@pytest.mark.opencl
@pytest.mark.usefixtures("shared_workers")
def test_a_bias_off_by_one_is_caught(tmp_path: Path) -> None:
    """The candidate with the end's subtraction one short: the bits of the dyadic
    kernels (the Gaussian, the signed edge case) differ, so the integer sums are what
    compute them; the box blur's do not (its weights keep the package's code)."""
    variant = words._variant(PATCH)
    exact = "(-(float)swc_ * SW_SCALE)"
    assert variant.count(exact) == 1
    broken = variant.replace(exact, "(-(float)(swc_ - 1) * SW_SCALE)")
    for path in (_lift("gauss_u8_rte", tmp_path), _edge_definition(tmp_path, "int8", "zero", None)):
        with pytest.raises(AssertionError, match="not the package's bits"):
            same_bits(path, broken)
    assert same_bits(_lift("blur_u8", tmp_path), broken, CHANGES[:1]) == 1


def _breakdown(definition: Path, *args: str) -> subprocess.CompletedProcess[str]:
    script = ROOT / "benchmarks" / "ptx_breakdown.py"
    cmd = [sys.executable, str(script), str(definition), *args]
    return subprocess.run(cmd, capture_output=True, text=True, timeout=300, cwd=ROOT)


@pytest.mark.skipif(shutil.which("clang-15") is None, reason="clang-15 compiles the PTX")
def test_the_candidate_converts_once_an_output_in_the_gaussians_ptx(tmp_path: Path) -> None:
    """benchmarks/ptx_breakdown.py on the lifted Gaussian at VX 16: the package's sums
    are 9 fma an output and its inputs' conversions (3.4 an output) bound; the
    candidate's are one conversion and one float operation (2^-K) an output, and the
    integer pipe bounds."""
    gauss = _lift("gauss_u8_rte", tmp_path)
    cfg = ["--config", "WX=8,WY=4,BX=16,VX=16,CX=2", "--top", "60"]
    rows = {}
    for name, extra in (("package", []), ("u8_swar", ["--template", str(PATCH_PATH)])):
        done = _breakdown(gauss, *cfg, *extra)
        assert done.returncode == 0, done.stderr[-2000:]
        table = [r.split("|") for r in done.stdout.splitlines() if r.startswith("| `")]
        rows[name] = {c[1].strip(" `"): float(c[2]) for c in table}
        assert ("bound: conversion" if name == "package" else "bound: integer") in done.stdout
    assert rows["package"]["fma.rn.f32"] == 9.0 and rows["package"]["cvt.rn.f32.u32"] > 3
    mine = rows["u8_swar"]
    arithmetic = ("fma", "mul", "add", "sub")
    floats = [n for op, n in mine.items() if op.endswith(".f32") and op[:3] in arithmetic]
    assert sum(floats) == 1.0 and mine["cvt.rn.f32.u32"] == 1.0


def test_ptx_breakdown_names_bad_input(tmp_path: Path) -> None:
    missing = tmp_path / "none.stencil.yaml"
    done = _breakdown(missing, "--config", "VX=4")
    assert done.returncode == 2 and str(missing) in done.stderr
    assert "Traceback" not in done.stderr

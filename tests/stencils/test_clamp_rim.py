"""Whole rim vectors for the clamp boundary: the vector technique's ``RIM=1``, and with it
row blocks (``BY``, ``BZ``), the interior path (``RIN``) and separable weights summed row
by row (``SEP``), for clamp kernels (issue 48; the H200's A/B:
benchmarks/results/lift/clamp_rim/).

A vector that touches an x edge builds each shifted vector from its lanes' clamped
elements (``XGATHER``); rows beyond a y or z edge read the edge row; every point is
written. On PoCL, at sizes whose rows hold a few vectors: a separable 2D clamp blur (5x5
binomial), a separable 3D one (5x3x3) with a second field, a run-time coefficient and a
constant, an 8-bit clamp kernel and a padded one (VX 2, 4 and 16, SEP 0 and 1, BY 2 and
4, BZ 2, RIN 0 and 1, cyclic merging): every output within the definition's
tolerance of the numpy reference and of the same kernel's output without whole rim
vectors (RIM 0). A template broken twice is caught both ways: edge vectors composed as
interior ones (no per-lane clamp) and the last row left unwritten.

``tests/data/stencil_before_clamp_rim.cl.gz`` is the template before this change: the
interior boundary's kernels (RIM, RIN, row blocks, SEP) and the clamp kernels without
RIM preprocess to its text. When the template's vector code changes on purpose later,
this snapshot (and the test that reads it) retires.
"""

from __future__ import annotations

import gzip
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from gtune.description import load_kernel
from gtune.device import LIMIT_NAMES
from gtune.kernel import TunableKernel
from gtune.stencils.definition import StencilDefinition, load_definition, parse_definition
from gtune.stencils.real import REAL
from gtune.stencils.render import describe, render_source, template_source
from tests.conftest import load_script
from tests.stencils.template_snapshot import cpp, sizes_of

ROOT = Path(__file__).resolve().parents[2]
CORPUS = ROOT / "tests" / "data" / "definitions"
BEFORE = ROOT / "tests" / "data" / "stencil_before_clamp_rim.cl.gz"
template_ab = load_script(ROOT / "benchmarks" / "template_ab.py")
template_exact = load_script(ROOT / "benchmarks" / "template_exact.py")

SIZES_2D = {"NX": 40, "NY": 12}  # rows of 10 (VX 4) or 20 (VX 2) vectors
SIZES_3D = {"NX": 24, "NY": 12, "NZ": 6}
SIZES_U8 = {"NX": 64, "NY": 12}  # rows of 4 vectors of 16 lanes

A2 = {"WX": 2, "WY": 2, "BX": 4, "VX": 4}
B2 = {"WX": 2, "WY": 1, "BX": 2, "VX": 2, "CX": 2}  # cyclic merging in x
A3 = {"WX": 2, "WY": 2, "WZ": 1, "BX": 4, "VX": 4}
# each path of the vector technique once: the interior path (RIN 1: a block inside
# reads its rows through one pointer, a block at a y or z edge computes its rows one at
# a time; 2D, 3D, SEP, a second field, a padded primary field whose edge vectors are
# read from its pad) and the block's clamped rows (RIN 0; SEP, 8-bit lanes read as words)
CONFIGS: dict[str, list[dict[str, int]]] = {
    "blur2d": [
        {**A2, "RIM": 1, "SEP": 1, "BY": 2, "RIN": 1},
        {**B2, "RIM": 1, "SEP": 1, "BY": 4, "RIN": 0},
    ],
    "blur3d": [{**A3, "RIM": 1, "SEP": 1, "BY": 2, "BZ": 2, "RIN": 1}],
    "u8": [{"WX": 2, "WY": 2, "BX": 16, "VX": 16, "RIM": 1, "BY": 2, "RIN": 0}],
    "u8-padded": [{"WX": 2, "WY": 2, "BX": 16, "VX": 16, "RIM": 1, "BY": 2, "RIN": 1}],
}
RIM_OFF = {"RIM": 0, "RIN": 0, "BY": 1, "BZ": 1, "SEP": 0}


def _binomial(dims: int) -> StencilDefinition:
    """A clamp blur: 5x5 binomial (2D); 5x3x3 binomial plus a second field's right
    neighbour times a run-time coefficient, and a constant (3D)."""
    wx, w = {-2: 1, -1: 4, 0: 6, 1: 4, 2: 1}, {-1: 1, 0: 2, 1: 1}
    wy, wz = (wx, {0: 1}) if dims == 2 else (w, w)  # the weights sum to 256
    terms: list[dict[str, Any]] = [
        {
            "field": "src",
            "offset": [dx, dy, dz][:dims],
            "coefficient": f"{wx[dx] * wy[dy] * wz[dz]}/256",
        }
        for dz in wz
        for dy in wy
        for dx in wx
    ]
    data: dict[str, Any] = {"name": "k", "dims": dims, "dtype": "float32", "boundary": "clamp"}
    data |= {"fields": ["src"], "output": "dst", "terms": terms}
    if dims == 3:
        data["fields"] = ["src", "aux"]
        terms.append({"field": "aux", "offset": [1, 0, 0], "coefficient": "k"})
        data |= {"coefficients": ["k"], "values": {"k": 0.25}, "constant": "k/2"}
    return parse_definition(data, "k.stencil.yaml")


def _u8(**more: Any) -> StencilDefinition:
    """8-bit, clamp: a 3x3 of weights no product is exact with, and a sharpening term two
    columns right (an x radius of 2 one way)."""
    weights = [0.113, -0.041, 0.207, 0.089, 0.352, -0.118, 0.071, 0.164, 0.035]
    offsets = [(dx, dy) for dy in (-1, 0, 1) for dx in (-1, 0, 1)]
    terms: list[dict[str, Any]] = [
        {"field": "src", "offset": [dx, dy], "coefficient": w}
        for (dx, dy), w in zip(offsets, weights, strict=True)
    ]
    terms.append({"field": "src", "offset": [2, 0], "coefficient": "-1/8"})
    data: dict[str, Any] = {"name": "k", "dims": 2, "dtype": "float32", "boundary": "clamp"}
    data |= {"fields": ["src"], "output": "dst", "terms": terms, "storage": "uint8"}
    data |= {"convert": "rte_sat", **more}
    return parse_definition(data, "k.stencil.yaml")


def _definition(case: str) -> StencilDefinition:
    if case == "u8":
        return _u8()
    if case == "u8-padded":  # the pad holds the neighbours beyond the edge
        return _u8(pad={"src": [8, 2]})
    return _binomial(3 if case == "blur3d" else 2)


def _sizes(case: str) -> dict[str, int]:
    return SIZES_U8 if case.startswith("u8") else SIZES_3D if "3" in case else SIZES_2D


def _kernel(definition: StencilDefinition, sizes: dict[str, int], tmp: Path) -> TunableKernel:
    path = tmp / "k.stencil.yaml"
    path.write_text(definition.to_yaml())
    return load_kernel(path).with_sizes(sizes)


def _allowed(kernel: TunableKernel, changes: list[dict[str, int]]) -> list[dict[str, int]]:
    """The kernel's default configuration with each change (of the parameters it has);
    each must lie in the space (the device's limits taken as large) and be vec's."""
    default = dict(kernel.default_config() or {})
    limits = dict.fromkeys(LIMIT_NAMES, 1 << 20)
    out = []
    for change in changes:
        cfg = {**default, **{k: v for k, v in change.items() if k in kernel.parameter_names}}
        env = {**limits, **kernel.env(cfg)}
        broken = [c.text for c in kernel.constraints if not c.evaluate(env)]
        assert not broken, (cfg, broken)
        assert all(t.evaluate(env) for t in kernel.techniques["vec"]), cfg
        out.append(cfg)
    return out


def _outputs(
    kernel: TunableKernel, arrays: dict[str, np.ndarray], configs: list[dict[str, int]]
) -> list[np.ndarray]:
    """The output of one launch at each configuration, each on fresh buffers (the output
    a sentinel), in one evaluator."""
    from gtune.measure import OpenCLEvaluator

    (out,) = [a.name for a in kernel.arguments if a.role == "output"]
    ev = OpenCLEvaluator(kernel, runs=1, verify=False, arrays=arrays, compile_workers=0)
    try:
        return [ev.run_once(cfg, arrays)[out].astype(np.float64) for cfg in configs]
    finally:
        ev.close()


def _reference(
    definition: StencilDefinition, kernel: TunableKernel
) -> tuple[dict[str, np.ndarray], np.ndarray, float]:
    """Random inputs (the output a sentinel), the numpy reference's output and the
    definition's tolerance."""
    arrays: dict[str, np.ndarray] = template_exact.inputs(kernel, sum(kernel.sizes.values()), 93)
    fields = {f: arrays[f] for f in definition.fields}
    want = definition.reference(fields, arrays[definition.output]).astype(np.float64)
    tol = definition.tolerance(max(float(np.abs(a).max()) for a in fields.values()))
    return arrays, want, tol


def check(
    definition: StencilDefinition, changes: list[dict[str, int]], sizes: dict[str, int], tmp: Path
) -> int:
    """Each configuration (the default with ``changes``): its output within the
    definition's tolerance of the numpy reference and of the kernel's at the first one's
    shape without whole rim vectors (RIM 0, no SEP, no row blocks); fails at the first
    that is not."""
    kernel = _kernel(definition, sizes, tmp)
    assert {"RIM", "RIN", "BY"} <= set(kernel.parameter_names), kernel.parameter_names
    configs = _allowed(kernel, changes)
    rim_off = {**configs[0], **{k: v for k, v in RIM_OFF.items() if k in configs[0]}}
    configs += _allowed(kernel, [rim_off])
    arrays, want, tol = _reference(definition, kernel)
    outs = _outputs(kernel, arrays, configs)
    for cfg, out in zip(configs, outs, strict=True):
        bad = np.argwhere(np.abs(out - want) > tol)
        assert bad.size == 0, (cfg, "not the reference's", bad[:4].tolist())
    for cfg, out in zip(configs[:-1], outs[:-1], strict=True):
        assert np.abs(out - outs[-1]).max() <= tol, (cfg, "not RIM 0's")
    return len(configs) - 1


def test_clamp_kernels_offer_whole_rim_vectors() -> None:
    """The clamp boundary has RIM, RIN and row blocks (the launch divides the rows by
    BY, the planes by BZ), SEP with RIM, and the other techniques fix them at rest; the
    zero boundary has none of them."""
    for case, sizes in (("blur2d", SIZES_2D), ("blur3d", SIZES_3D)):
        desc = describe(_definition(case), sizes, source="k.cl")
        dims3 = "NZ" in sizes
        assert {"RIM", "RIN", "BY", "SEP"} | ({"BZ"} if dims3 else set()) <= set(desc["parameters"])
        sep = "SEP == 0 or RIM == 1" if dims3 else "SEP == 0 or STREAM == 1 or RIM == 1"
        assert sep in desc["constraints"], case
        assert "RIN == 0 or RIM == 1" in desc["constraints"]
        assert "BY" in desc["launch"]["global"][1], desc["launch"]
        assert not dims3 or desc["launch"]["global"][2].startswith("NZ / (BZ*")
        for technique, cons in desc["techniques"].items():
            assert ("RIM == 0" in cons) == (technique != "vec"), (case, technique)
    zero = describe(load_definition(CORPUS / "star3d_zero.stencil.yaml"), SIZES_3D, source="z.cl")
    assert not {"RIM", "RIN", "BY", "BZ"} & set(zero["parameters"])


@pytest.mark.opencl
@pytest.mark.usefixtures("shared_workers")
@pytest.mark.parametrize("case", list(CONFIGS))
def test_clamp_kernels_with_whole_rim_vectors_compute_the_clamp_boundary(
    case: str, tmp_path: Path
) -> None:
    changes = CONFIGS[case]
    assert check(_definition(case), changes, _sizes(case), tmp_path) == len(changes)


@pytest.mark.opencl
@pytest.mark.usefixtures("shared_workers")
def test_broken_clamp_rims_are_caught(tmp_path: Path) -> None:
    """The template broken twice: every edge vector read as an interior one (two vectors
    composed, their index clamped into the row, no per-lane clamp), and rows written up
    to NY - 1 only (as the interior boundary stops short of the edge). The blur's
    output differs from the reference at the x edges of its rows (the first) and in its
    last row, which keeps the output's prior contents (the second), and nowhere else."""
    template = template_source()
    mutations = [
        ("if (xe_) {  ", "if (0) {  ", 2),
        ("#define HIY NY\n", "#define HIY (NY - 1)\n", 1),
    ]
    for old, new, count in mutations:
        assert template.count(old) == count, old
        template = template.replace(old, new)
    definition = _definition("blur2d")
    with template_ab.rendering_from(template):
        kernel = _kernel(definition, SIZES_2D, tmp_path)
    arrays, want, tol = _reference(definition, kernel)
    (cfg,) = _allowed(kernel, CONFIGS["blur2d"][:1])  # RIN 1: both paths' edge vectors
    (out,) = _outputs(kernel, arrays, [cfg])
    bad = np.abs(out - want) > tol
    nx = SIZES_2D["NX"]
    edges = np.zeros_like(bad)
    edges[:, :2] = edges[:, nx - 2 :] = True  # the columns within the radius of an edge
    assert bad[:-1, 0].all() and bad[:-1, -1].all(), "edge vectors composed: not caught"
    assert bad[-1, 2 : nx - 2].all(), "the last row unwritten: not caught"
    assert not (bad[:-1] & ~edges[:-1]).any()


def _flags(block: str) -> Iterator[list[str]]:
    """The vector technique's switches: with the interior boundary whole rim vectors,
    row blocks, the interior path and SEP; with the clamp boundary without RIM."""
    dims3 = "#define ARRAY_DIMS 3" in block
    yield from (["-DVX=4", "-DBX=4"], ["-DVX=2", "-DBX=4", "-DCX=2"])
    if "#define CLAMP" not in block:
        rim = ["-DVX=4", "-DBX=4", "-DRIM=1", "-DBY=2"] + (["-DBZ=2"] if dims3 else [])
        sep = ["-DSEP=1"] if "SEP_X_TERMS" in block else []
        yield from (rim + sep, [*rim, *sep, "-DRIN=1"])


@pytest.mark.skipif(shutil.which("cpp") is None, reason="needs the C preprocessor")
def test_kernels_without_clamped_rim_vectors_preprocess_as_before(tmp_path: Path) -> None:
    """The interior boundary's real stencils (RIM, RIN, row blocks, SEP) and the clamp
    kernels without RIM: the template's text after the C preprocessor is the text of
    the template before whole rim vectors for the clamp boundary."""
    before = gzip.decompress(BEFORE.read_bytes()).decode()
    stencils: list[Any] = [REAL[n]() for n in ("blur5", "heat3d", "box27")]
    stencils += [_definition(n) for n in ("blur2d", "blur3d", "u8-padded")]
    for stencil in stencils:
        now = render_source(stencil)
        with template_ab.rendering_from(before):
            then = render_source(stencil)
        assert then != now
        for switches in _flags(now):
            flags = sizes_of(now) + switches
            want = cpp(then, flags, tmp_path)
            assert want[0] == 0, (stencil, flags, want[1][-300:])
            assert cpp(now, flags, tmp_path) == want, (stencil, flags)

"""A written rim (``rim: copy`` or a constant) with the vector technique's whole rim
vectors (``RIM=1``, float elements): each written row's first and last points are stored
by the vector that holds them, its rim lanes taking their rim value, and ``RIM_WRITE``
writes only the rim's first and last RZ planes and RY rows apart (``RIM_X_IN_VECTORS``,
``RIM_XS``). On the H200 this made heat3d with ``rim: copy`` 10 to 12 % faster than
with each row's ends written apart point by point
(``benchmarks/results/h200-limit/x-rim/rim-vectors/``).

On PoCL, with every output point first set to a sentinel: heat3d with ``rim: copy``, a
2D copied rim with two fields reaching 2 in x (whole vectors in the rim at ``VX=2``) and
a 2D constant rim (0), in vector tiles whose blocks straddle every edge (``VX`` 2 and 4,
rows merged in y and z, ``RIN`` 0 and 1), give bit for bit the global technique's output
(scalar code, the rim written apart). A template whose rim vectors store only their
interior lanes, or whose rim lanes take another point's value, is caught. Kernels whose
rim is kept, integer elements and ``RIM=0`` preprocess to the text they had before.
"""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from gtune.description import load_kernel
from gtune.kernel import TunableKernel
from gtune.measure.once import run_plain
from gtune.stencils.definition import RIM_KEEP, StencilDefinition, load_definition, parse_definition
from gtune.stencils.real import REAL
from gtune.stencils.render import render_source, template_source
from tests.conftest import load_script
from tests.stencils.template_snapshot import cpp, sizes_of, without_rim_vectors

ROOT = Path(__file__).resolve().parents[2]
CORPUS = ROOT / "tests" / "data" / "definitions"
template_ab = load_script(ROOT / "benchmarks" / "template_ab.py")
template_exact = load_script(ROOT / "benchmarks" / "template_exact.py")

HEAT3D = ROOT / "benchmarks/results/h200-limit/x-rim/defs/heat3d_rimcopy.stencil.yaml"
SOBEL = CORPUS / "sobel2d_rim_copy.stencil.yaml"
ZERO_RIM = ROOT / "benchmarks/predict/corpus/lifted_zero_rim.stencil.yaml"
SIZES_3D = {"NX": 32, "NY": 12, "NZ": 12}  # rows of 8 (VX 4) or 16 (VX 2) vectors
SIZES_2D = {"NX": 32, "NY": 16}

VEC = {"RIM": 1, "LOCAL": 0, "IMAGE": 0, "STREAM": 0, "WX": 4, "WY": 2}
# each path of the vector technique that stores rim vectors: the interior path (RIN 1,
# a block inside and one at a y or z rim computing its rows one at a time) and the
# block's clamped rows (RIN 0); cyclic merging; whole vectors in the x rim (VX 2, RX 2)
CONFIGS: dict[Path, list[dict[str, int]]] = {
    HEAT3D: [
        {**VEC, "WZ": 1, "BX": 2, "VX": 2, "BY": 2, "BZ": 2, "RIN": 1},
        {**VEC, "WZ": 1, "BX": 4, "VX": 4, "BY": 1, "BZ": 2, "CZ": 2, "RIN": 0},
        {**VEC, "WZ": 1, "BX": 4, "VX": 4, "BY": 2, "BZ": 1, "RIN": 1},
    ],
    SOBEL: [
        {**VEC, "BX": 2, "VX": 2, "BY": 2, "RIN": 1},
        {**VEC, "BX": 4, "VX": 4, "BY": 1, "CY": 2, "RIN": 0},
    ],
    ZERO_RIM: [{**VEC, "BX": 4, "VX": 4, "BY": 2, "RIN": 1}],
}
GLOBAL = {"RIM": 0, "RIN": 0, "VX": 1, "BX": 1, "BY": 1, "BZ": 1, "LOCAL": 0, "IMAGE": 0}
GLOBAL |= {"STREAM": 0, "WX": 8, "WY": 2}


def _kernel(path: Path, template: str | None = None) -> TunableKernel:
    with template_ab.rendering_from(template):
        kernel = load_kernel(path)
    return kernel.with_sizes(SIZES_3D if "NZ" in kernel.sizes else SIZES_2D)


def _run(kernel: TunableKernel, cfg: dict[str, int], arrays: dict[str, Any]) -> dict[str, Any]:
    full = kernel.with_defaults({k: v for k, v in cfg.items() if k in kernel.parameter_names})
    out: dict[str, Any] = run_plain(kernel, arrays, full, device="pthread")
    return out


def _outputs(kernel: TunableKernel) -> list[str]:
    return [a.name for a in kernel.arguments if a.kind == "buffer" and a.role != "input"]


_GLOBAL: dict[Path, dict[str, Any]] = {}


def _global(path: Path) -> tuple[dict[str, Any], dict[str, Any]]:
    """The definition's inputs (random, outputs the sentinel) and the global technique's
    outputs from them: once per definition."""
    if path not in _GLOBAL:
        kernel = _kernel(path)
        arrays = template_exact.inputs(kernel, seed=3)
        got = _run(kernel, GLOBAL, arrays)
        outs = {n: got[n] for n in _outputs(kernel)}
        for a in outs.values():  # every point written: the rim and the interior
            assert not np.any(a == template_exact.SENTINEL) and np.isfinite(a).all()
        _GLOBAL[path] = {"arrays": arrays, "outs": outs}
    return _GLOBAL[path]["arrays"], _GLOBAL[path]["outs"]


def _different(path: Path, cfg: dict[str, int], template: str | None = None) -> list[str]:
    """The outputs of ``cfg`` (from ``template``, else the package's) whose bits are not
    the global technique's."""
    arrays, want = _global(path)
    got = _run(_kernel(path, template), cfg, arrays)
    return [n for n in want if not template_exact.same_bits(want[n], got[n])]


@pytest.mark.opencl
@pytest.mark.usefixtures("shared_workers")
@pytest.mark.parametrize("path", list(CONFIGS), ids=lambda p: p.name.split(".")[0])
def test_written_rims_give_the_global_techniques_bits(path: Path) -> None:
    for cfg in CONFIGS[path]:
        assert _different(path, cfg) == [], cfg


@pytest.mark.opencl
@pytest.mark.usefixtures("shared_workers")
def test_rim_vectors_with_unwritten_or_wrong_rim_lanes_are_caught() -> None:
    """The rim vectors stored as before (their interior lanes) while ``RIM_WRITE`` no
    longer writes the rows' x rim: those points keep the sentinel. Each rim lane given
    the rim value of its vector's first point: a copied rim's points take their
    neighbours' values."""
    text = template_source()
    old = "#else\n#define STORE_X_RIM(d, v, zz, yy, x) STORE_LANES(d, v, x)\n#endif"
    new = "#endif\n#undef STORE_X_RIM\n#define STORE_X_RIM(d, v, zz, yy, x) STORE_LANES(d, v, x)"
    assert text.count(old) == 1
    unwritten = text.replace(old, new)
    assert _different(SOBEL, CONFIGS[SOBEL][0], unwritten) == ["dx"]
    assert _different(ZERO_RIM, CONFIGS[ZERO_RIM][0], unwritten) == ["lap"]
    lane = "(w).c = (REAL)RIM_VALUE(zz, yy, (x) + (i));"
    assert text.count(lane) == 1
    wrong = text.replace(lane, "(w).c = (REAL)RIM_VALUE(zz, yy, (x));")
    assert _different(SOBEL, CONFIGS[SOBEL][1], wrong) == ["dx"]


def _u8_rim_copy() -> StencilDefinition:
    """8-bit elements, the rim a copy: a 3x3 box of 1/9."""
    terms = [
        {"field": "src", "offset": [dx, dy], "coefficient": "1/9"}
        for dy in (-1, 0, 1)
        for dx in (-1, 0, 1)
    ]
    data = {"name": "k", "dims": 2, "dtype": "float32", "rim": "copy", "fields": ["src"]}
    data |= {"output": "dst", "terms": terms, "storage": "uint8", "convert": "rte_sat"}
    return parse_definition(data, "k.stencil.yaml")


@pytest.mark.skipif(shutil.which("cpp") is None, reason="needs the C preprocessor")
def test_only_a_written_rim_with_rim_vectors_changes(tmp_path: Path) -> None:
    """Every real stencil (a kept rim), a written rim and a written rim of integer
    elements preprocess with rim vectors as without them, but for the written float rim
    with ``RIM=1``."""
    stencils: list[Any] = [REAL[n]() for n in sorted(REAL)]
    stencils += [load_definition(SOBEL), load_definition(CORPUS / "star3d_rim_const.stencil.yaml")]
    stencils.append(_u8_rim_copy())
    for stencil in stencils:
        new = render_source(stencil)
        old = without_rim_vectors(new)
        lines = new.splitlines()
        rim_written = {"#define RIM_WRITE 1", "#define RIM_WRITE 2"} & set(lines) != set()
        assert rim_written == (getattr(stencil, "rim", RIM_KEEP) != RIM_KEEP)
        written = rim_written and "#define ELEM uchar" not in lines
        dims3 = "#define ARRAY_DIMS 3" in new
        rim = "-DVX=4 -DBX=4 -DRIM=1 -DBY=2" + (" -DBZ=2" if dims3 else "")
        for cfg in ["", "-DVX=4 -DBX=4", rim, rim + " -DRIN=1"]:
            flags = sizes_of(new) + cfg.split()
            want = cpp(old, flags, tmp_path)
            assert want[0] == 0, (stencil.name, cfg, want[1][-300:])
            same = cpp(new, flags, tmp_path) == want
            assert same != (written and "RIM=1" in cfg), (stencil.name, cfg)

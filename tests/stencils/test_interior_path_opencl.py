"""The vec technique's interior path (RIN=1) on real OpenCL (PoCL in CI).

With RIN=1 a work-item whose BY x BZ rows and their neighbour rows lie inside reads
through one pointer per field plus compile-time row offsets, and one at a y or z rim
computes its rows one at a time. At the small sizes here every configuration has
work-items of both kinds (and vectors at the x rim), so each must match the numpy
reference: every real stencil of the template (2D and 3D, box27 and blur5 separable,
with SEP 0 and 1), hotspot (two fields), a 2D definition with a written rim and two
fields, a 3D box with a second field read at x + 1 and a constant in float64, and a
rim written as a constant; vector widths 2 and 4, rows merged in y and z.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from gtune.description import load_kernel
from gtune.kernel import TunableKernel
from gtune.measure import OpenCLEvaluator, Status, select_device
from gtune.stencils.definition import parse_definition

pytestmark = [pytest.mark.opencl, pytest.mark.usefixtures("shared_workers")]

ROOT = Path(__file__).resolve().parents[2]
STENCILS = ROOT / "stencils"
CORPUS = ROOT / "tests" / "data" / "definitions"


def _box_two_fields(tmp: Path) -> Path:
    """The 27-point box in float64 with a second field at x + 1 and at the point, and a
    constant: the interior path reads the second field through its own pointer."""
    terms: list[dict[str, Any]] = [
        {"field": "u", "offset": [dx, dy, dz], "coefficient": 0.0625 * (1 + dx + 2 * dy + 3 * dz)}
        for dz in (-1, 0, 1)
        for dy in (-1, 0, 1)
        for dx in (-1, 0, 1)
    ]
    terms += [{"field": "p", "offset": [1, 0, 0], "coefficient": "b"}]
    terms += [{"field": "p", "coefficient": 0.25}]
    data = {
        "name": "box27p",
        "dims": 3,
        "dtype": "float64",
        "fields": ["u", "p"],
        "output": "out",
        "terms": terms,
        "coefficients": ["b"],
        "values": {"b": 0.75},
        "constant": "0.125*b",
    }
    path = tmp / "box27p.stencil.yaml"
    path.write_text(parse_definition(data, path.name).to_yaml())
    return path


KERNELS = {
    "heat3d": STENCILS / "heat3d.yaml",
    "box27": STENCILS / "box27.yaml",
    "laplacian4": STENCILS / "laplacian4.yaml",
    "jacobi2d": STENCILS / "jacobi2d.yaml",
    "blur5": STENCILS / "blur5.yaml",
    "hotspot": STENCILS / "hotspot.stencil.yaml",
    "sobel2d_rim_copy": CORPUS / "sobel2d_rim_copy.stencil.yaml",
    "star3d_rim_const": CORPUS / "star3d_rim_const.stencil.yaml",
    "box27p": None,  # written by the test (_box_two_fields)
}
# box27 (3D, separable) and hotspot (2D, two fields) run in the opencl tier; the rest
# (a few seconds each on PoCL before its build cache holds them) with the slow tests
QUICK = ("box27", "hotspot")


def _configs(kernel: TunableKernel) -> list[dict[str, int]]:
    """RIN=1 configurations of the vec technique: VX 2 and 4, rows merged in y (and z),
    SEP 0 and 1 where the stencil is separable; the work-groups small enough that the
    arrays hold interior and rim blocks in y and z."""
    default = kernel.default_config()
    assert default is not None
    dims3 = "NZ" in kernel.sizes
    separable = "SEP" in kernel.parameter_names
    base = {**default, "RIM": 1, "RIN": 1, "LOCAL": 0, "STREAM": 0}
    shapes = (
        [(2, 2, 2, 4, 2, 2, 0), (4, 1, 4, 4, 2, 1, 1), (4, 4, 1, 2, 2, 1, 1)]
        if dims3
        else [(2, 2, 1, 4, 2, 1, 0), (4, 4, 1, 2, 2, 1, 1)]
    )
    configs = []
    for vx, by, bz, wx, wy, wz, sep in shapes:
        cfg = {**base, "VX": vx, "BX": vx, "BY": by, "WX": wx, "WY": wy}
        if dims3:
            cfg |= {"BZ": bz, "WZ": wz}
        if separable:
            cfg["SEP"] = sep
        configs.append(cfg)
    return configs


@pytest.mark.parametrize(
    "name", [pytest.param(n, marks=() if n in QUICK else (pytest.mark.slow,)) for n in KERNELS]
)
def test_the_interior_path_matches_the_reference(tmp_path: Path, name: str) -> None:
    path = KERNELS[name] or _box_two_fields(tmp_path)
    kernel = load_kernel(path)
    sizes = {"NX": 32, "NY": 16, "NZ": 16} if "NZ" in kernel.sizes else {"NX": 32, "NY": 32}
    kernel = kernel.with_sizes(sizes)
    limits = select_device(None).limit_values()
    evaluator = OpenCLEvaluator(kernel, runs=1)
    try:
        for cfg in _configs(kernel):
            env = {**kernel.env(cfg), **limits}
            broken = [c.text for c in kernel.constraints if not c.evaluate(env)]
            assert not broken, (cfg, broken)
            assert all(t.evaluate(env) for t in kernel.techniques["vec"]), cfg
            result = evaluator.evaluate(cfg)
            assert result.status is Status.OK, (name, cfg, result.message)
    finally:
        evaluator.close()

"""The vector technique's row loads on real OpenCL (PoCL in CI).

The vec technique (VX > 1, one step, no streaming) reads each term's VX inputs through
aligned vector loads of its row at the work-item's vector index plus a constant, the
shifted ones composed from two neighbouring vectors. These cases cover what that
arithmetic can get wrong: negative and positive shifts that are and are not multiples of
VX (radius 1, 2 and 3 with VX 2, 4 and 8), the rim where a vector falls back to lane by
lane, another field read at an x offset, a constant, both boundaries and both element
types; each must match the numpy reference as the scalar technique does.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from gtune.description import load_kernel
from gtune.measure import OpenCLEvaluator, Status, select_device
from gtune.stencils.definition import parse_definition

pytestmark = [pytest.mark.opencl, pytest.mark.usefixtures("shared_workers")]

SIZES = {"NX": 32, "NY": 8, "NZ": 8}


def _star(radius: int) -> list[dict[str, Any]]:
    """A 3D star of the given radius, weights distinct per offset."""
    terms: list[dict[str, Any]] = [{"field": "u", "offset": [0, 0, 0], "coefficient": 0.5}]
    for axis in range(3):
        for d in range(1, radius + 1):
            for sign in (-1, 1):
                off = [0, 0, 0]
                off[axis] = sign * d
                w = round(0.03125 * (axis + 1) * d * (1.5 if sign > 0 else 1.0), 6)
                terms.append({"field": "u", "offset": off, "coefficient": w})
    return terms


def _box() -> list[dict[str, Any]]:
    """The 27-point box with a second field at x + 1 and at the point itself."""
    terms: list[dict[str, Any]] = []
    for dz in (-1, 0, 1):
        for dy in (-1, 0, 1):
            for dx in (-1, 0, 1):
                w = 0.0625 * (1 + abs(dx) + 2 * abs(dy) + 3 * abs(dz))
                terms.append({"field": "u", "offset": [dx, dy, dz], "coefficient": w})
    terms.append({"field": "p", "offset": [1, 0, 0], "coefficient": "b"})
    terms.append({"field": "p", "coefficient": 0.25})
    return terms


def _kernel(tmp: Path, name: str, terms: list[dict[str, Any]], dtype: str, boundary: str) -> Any:
    fields = sorted({t["field"] for t in terms}, key=lambda f: f != "u")
    data: dict[str, Any] = {
        "name": name,
        "dims": 3,
        "dtype": dtype,
        "boundary": boundary,
        "fields": fields,
        "output": "out",
        "terms": terms,
    }
    if "p" in fields:
        data["coefficients"] = ["b"]
        data["values"] = {"b": 0.75}
        data["constant"] = "0.125*b"
    d = parse_definition(data, f"{name}.stencil.yaml")
    path = tmp / f"{name}.stencil.yaml"
    path.write_text(d.to_yaml())
    return load_kernel(path).with_sizes(SIZES)


CASES = [
    ("star1", _star(1)),
    ("star2", _star(2)),  # laplacian4's shape: shifts of 1 and 2
    ("star3", _star(3)),  # a radius no vector width divides
    ("box27p", _box()),
]


# Each shape runs with both boundaries and both element types, paired by turns: star1
# and star3 interior in float32 and clamp in float64, star2 and box27p interior in
# float64 and clamp in float32; every pairing of the boundary with the element type
# runs on two shapes. (The boundary, rendered as the rim's fallback, and the element
# type, as the vector type, are rendered independently of each other and of the
# shifts; a shape's other two pairings ran that same code.)
PAIRS = (
    (("interior", "float32"), ("clamp", "float64")),
    (("interior", "float64"), ("clamp", "float32")),
)
# laplacian4's shape with the clamp boundary in float32 runs in the opencl tier; the rest
# (a few seconds each on PoCL before its build cache holds them) with the slow tests
QUICK = ("star2", "clamp", "float32")
PARAMS = [
    pytest.param(
        name,
        terms,
        boundary,
        dtype,
        id=f"{name}-{boundary}-{dtype}",
        marks=() if (name, boundary, dtype) == QUICK else (pytest.mark.slow,),
    )
    for i, (name, terms) in enumerate(CASES)
    for boundary, dtype in PAIRS[i % 2]
]


@pytest.mark.parametrize(("name", "terms", "boundary", "dtype"), PARAMS)
def test_vector_rows_match_the_reference(
    tmp_path: Path, name: str, terms: list[dict[str, Any]], boundary: str, dtype: str
) -> None:
    kernel = _kernel(tmp_path, name, terms, dtype, boundary)
    limits = select_device(None).limit_values()
    default = kernel.default_config()
    assert default is not None
    configs = [
        # one vector per work-item; merged in x, y and z (the merges' rows and rims)
        {**default, "VX": vx, "BX": vx, "WX": wx, "WY": 2, "WZ": 2, "CX": cx, "CY": 2, "CZ": 2}
        for vx, wx, cx in ((2, 8, 2), (4, 4, 2), (4, 8, 1), (8, 2, 2))
    ]
    evaluator = OpenCLEvaluator(kernel, runs=1)
    try:
        for cfg in configs:
            env = {**kernel.env(cfg), **limits}
            broken = [c.text for c in kernel.constraints if not c.evaluate(env)]
            assert not broken, (cfg, broken)
            assert all(t.evaluate(env) for t in kernel.techniques["vec"]), cfg
            result = evaluator.evaluate(cfg)
            assert result.status is Status.OK, (name, boundary, dtype, cfg, result.message)
    finally:
        evaluator.close()

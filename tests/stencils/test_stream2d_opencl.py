"""Streaming along y (2D arrays, STREAM=1) on real OpenCL (PoCL in CI).

Each case renders a 2D definition into the template and runs a streaming configuration
through :class:`OpenCLEvaluator`, which checks the output against the numpy reference
(every point: the interior boundary's rim must keep its prior contents).
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest

from gtune.kernel import TunableKernel
from gtune.measure import OpenCLEvaluator, Status, select_device
from gtune.stencils.definition import parse_definition
from gtune.stencils.render import definition_kernel_of

pytestmark = [pytest.mark.opencl, pytest.mark.usefixtures("shared_workers")]


@pytest.fixture(scope="module")
def limits() -> dict[str, int]:
    return select_device(None).limit_values()


def _offsets(kind: str, rx: int, ry: int) -> list[tuple[int, int]]:
    if kind == "star":
        return sorted(
            {(dx, 0) for dx in range(-rx, rx + 1)} | {(0, dy) for dy in range(-ry, ry + 1)}
        )
    if kind == "dense":
        return [(dx, dy) for dy in range(-ry, ry + 1) for dx in range(-rx, rx + 1)]
    # asymmetric: a one-sided upwind-like pattern (more terms below than above)
    return [(0, 0), (-rx, 0), (0, -ry), (1 if rx else 0, -ry), (0, min(1, ry))]


def _definition(
    kind: str,
    rx: int,
    ry: int,
    *,
    boundary: str = "interior",
    dtype: str = "float32",
    extra: bool = False,
    runtime: bool = False,
) -> Any:
    terms: list[dict[str, Any]] = []
    for i, (dx, dy) in enumerate(_offsets(kind, rx, ry)):
        w = round(0.05 + 0.07 * ((i * 5) % 11), 3)
        coef: Any = f"{w}*a" if runtime and i % 2 else w
        terms.append({"field": "u", "offset": [dx, dy], "coefficient": coef})
    data: dict[str, Any] = {
        "dims": 2,
        "dtype": dtype,
        "boundary": boundary,
        "fields": ["u"],
        "output": "out",
        "terms": terms,
    }
    if runtime or extra:
        data["coefficients"] = ["a", "b"]
        data["values"] = {"a": 1.5, "b": 0.25}
    if extra:
        data["fields"] = ["u", "p"]
        terms.append({"field": "p", "coefficient": "b"})
        terms.append({"field": "p", "offset": [1, -1], "coefficient": 0.5})
        data["constant"] = "0.125*b"
    return parse_definition(data, f"{kind}.stencil.yaml")


def _run(kernel: TunableKernel, cfgs: list[dict[str, int]], limits: Mapping[str, int]) -> None:
    default = kernel.default_config()
    assert default is not None
    evaluator = OpenCLEvaluator(kernel, runs=1)
    try:
        for change in cfgs:
            cfg = {**default, "STREAM": 1, **change}
            env = {**kernel.env(cfg), **limits}
            broken = [c.text for c in kernel.constraints if not c.evaluate(env)]
            assert not broken, (cfg, broken)
            assert all(t.evaluate(env) for t in kernel.techniques["stream"]), cfg
            result = evaluator.evaluate(cfg)
            assert result.status is Status.OK, (kernel.label, cfg, result.message)
    finally:
        evaluator.close()


# (WX, WY, BX, CX, ZC): ZC = 1 and long chunks, BX > 1, CX > 1, a chunk that does not
# divide NY (NY = 40 here, ZC = 16 and 32 leave a partial chunk and idle work-items).
CONFIGS = [
    {"WX": 8, "WY": 2, "BX": 1, "CX": 1, "ZC": 1},
    {"WX": 8, "WY": 2, "BX": 2, "CX": 1, "ZC": 4},
    {"WX": 4, "WY": 4, "BX": 4, "CX": 2, "ZC": 16},
    {"WX": 16, "WY": 1, "BX": 1, "CX": 1, "ZC": 32},
]
SIZES = {"NX": 64, "NY": 40}
# Vector loads and stores (VX > 1): the segment's halo rounded up to whole vectors (RX 1-3
# against VX 2-16), segments inside the array (vector path) and across either edge
# (value by value), with and without merging, a partial chunk.
VECTOR_CONFIGS = [
    {"WX": 8, "WY": 2, "BX": 2, "VX": 2, "CX": 1, "ZC": 4},
    {"WX": 4, "WY": 2, "BX": 4, "VX": 4, "CX": 2, "ZC": 16},
    {"WX": 4, "WY": 1, "BX": 8, "VX": 4, "CX": 1, "ZC": 8},
    {"WX": 2, "WY": 4, "BX": 8, "VX": 8, "CX": 2, "ZC": 32},
    {"WX": 2, "WY": 2, "BX": 16, "VX": 16, "CX": 1, "ZC": 8},
]


# (the dense 5x5 streams in test_streaming_2d_vectors_extra_fields_and_constant, with
# both boundaries; asym's x-radius 2 and star's 3 take the scalar configurations)
SHAPES = [("star", 1, 1), ("dense", 1, 1), ("star", 3, 3), ("asym", 2, 3)]
BOUNDARIES = ["interior", "clamp"]


@pytest.mark.parametrize("boundary", BOUNDARIES)
@pytest.mark.parametrize(("kind", "rx", "ry"), SHAPES)
def test_streaming_2d_matches_the_reference(
    kind: str, rx: int, ry: int, boundary: str, limits: dict[str, int]
) -> None:
    """Every shape streams in every configuration (of CONFIGS and VECTOR_CONFIGS), each
    configuration with one boundary, the boundaries by turns: the shape's two cases
    share the configurations out, and the next shape takes them the other way round.
    Every pair of a shape and a configuration runs, and each configuration with either
    boundary on two shapes, at half the builds of every configuration with both."""
    d = _definition(kind, rx, ry, boundary=boundary)
    kernel = definition_kernel_of(d, SIZES)
    phase = (SHAPES.index((kind, rx, ry)) + BOUNDARIES.index(boundary)) % 2
    configs = CONFIGS + VECTOR_CONFIGS
    _run(kernel, [c for i, c in enumerate(configs) if i % 2 == phase], limits)


@pytest.mark.parametrize("boundary", ["interior", "clamp"])
def test_streaming_2d_float64_extra_fields_runtime_coefficients(
    boundary: str, limits: dict[str, int]
) -> None:
    """Another field's terms, a constant, run-time coefficients and doubles."""
    d = _definition("dense", 1, 2, boundary=boundary, dtype="float64", extra=True, runtime=True)
    kernel = definition_kernel_of(d, SIZES)
    _run(kernel, CONFIGS[1:3] + VECTOR_CONFIGS[1:4], limits)


@pytest.mark.parametrize("boundary", ["interior", "clamp"])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_streaming_2d_vectors_extra_fields_and_constant(
    boundary: str, dtype: str, limits: dict[str, int]
) -> None:
    """Vector loads and stores with another field's terms and a constant (the stored
    vector holds the full sums), a 5x5 box as blur kernels have. Each vector
    configuration runs in both element types and with both boundaries, by turns: the
    four cases share them out so that every pair of a configuration with an element
    type, and of a configuration with a boundary, runs once."""
    d = _definition("dense", 2, 2, boundary=boundary, dtype=dtype, extra=True, runtime=True)
    kernel = definition_kernel_of(d, SIZES)
    phase = (BOUNDARIES.index(boundary) + ["float32", "float64"].index(dtype)) % 2
    _run(kernel, [c for i, c in enumerate(VECTOR_CONFIGS) if i % 2 == phase], limits)


def test_streaming_2d_one_row_radius_zero_in_y(limits: dict[str, int]) -> None:
    """A stencil along x only (RY = 0): the queue is one sum long."""
    d = _definition("star", 2, 0, boundary="clamp", extra=True)
    kernel = definition_kernel_of(d, {"NX": 32, "NY": 24})
    _run(kernel, [{"WX": 8, "WY": 2, "BX": 2, "CX": 1, "ZC": 8}], limits)


@pytest.mark.parametrize(
    ("right", "wrong", "change"),
    [
        # a queue advanced one row early
        ("q[cx][b][RY - (dy)] +=", "q[cx][b][RY + (dy)] +=", CONFIGS[1]),
        # the vectors of a segment loaded in reverse order
        ("row)[xs0 / VX + i]", "row)[xs0 / VX + (SEG / VX - 1 - i)]", VECTOR_CONFIGS[2]),
        # a block's output vectors stored in reverse order
        ("[x0 / VX + v]", "[x0 / VX + (BX / VX - 1 - v)]", VECTOR_CONFIGS[2]),
    ],
)
def test_a_wrong_streaming_kernel_is_caught(
    right: str, wrong: str, change: dict[str, int], limits: dict[str, int]
) -> None:
    """The verification has teeth: a wrong queue, vector load or vector store is rejected."""
    from dataclasses import replace

    kernel = definition_kernel_of(_definition("dense", 1, 1), SIZES)
    bad_source = kernel.source.replace(right, wrong)
    assert bad_source != kernel.source
    bad = replace(kernel, source=bad_source)
    default = kernel.default_config()
    assert default is not None
    evaluator = OpenCLEvaluator(bad, runs=1)
    try:
        cfg = {**default, "STREAM": 1, **change}
        assert evaluator.evaluate(cfg).status is Status.WRONG_RESULT
    finally:
        evaluator.close()


@pytest.mark.slow
def test_gtune_run_streams_a_2d_definition(tmp_path: Path) -> None:
    """``gtune run X.stencil.yaml --technique stream`` on a 2D definition: the chunk step
    is kept (not dropped as a z-only step), every configuration streams and verifies."""
    import json

    from tests.conftest import ROOT, run_gtune

    report = tmp_path / "report.json"
    done = run_gtune(
        "run",
        str(ROOT / "tests" / "data" / "definitions" / "thermal2d.stencil.yaml"),
        "--size",
        "64x40",
        "--technique",
        "stream",
        "--budget",
        "8",
        "--runs",
        "3",
        "--no-confirm",
        "--json",
        str(report),
        db=tmp_path / "r.db",
    )
    assert done.returncode == 0, done.stderr
    dropped = [n for n in done.stderr.split("note: ") if "only parameters this kernel" in n]
    assert not any("'chunk'" in n for n in dropped)
    data = json.loads(report.read_text())
    results = [e for r in data["runs"] for e in r["outcome"]["trace"]]
    assert results and all(r["status"] == "ok" for r in results), results
    assert all(r["config"]["STREAM"] == 1 for r in results)
    assert len({r["config"]["ZC"] for r in results}) > 1  # the chunk step ran


def _separable_definition(
    u: list[float], v: list[float], *, boundary: str, dtype: str = "float32"
) -> Any:
    """Weights u(dx) * v(dy) on the box [-len(u)//2, ...] x [-len(v)//2, ...]."""
    rx, ry = len(u) // 2, len(v) // 2
    terms = [
        {"field": "u", "offset": [dx - rx, dy - ry], "coefficient": u[dx] * v[dy]}
        for dy in range(len(v))
        for dx in range(len(u))
    ]
    data = {
        "dims": 2,
        "dtype": dtype,
        "boundary": boundary,
        "fields": ["u"],
        "output": "out",
        "terms": terms,
    }
    return parse_definition(data, "separable.stencil.yaml")


# a binomial blur (factors exact) and a lopsided 3x5 one (factors rounded, v asymmetric)
SEPARABLE = {
    "binomial5": ([1 / 16, 4 / 16, 6 / 16, 4 / 16, 1 / 16],) * 2,
    "lopsided": ([0.3, -0.7, 1.1], [0.2, 0.9, -0.45, 0.6, 0.05]),
}


@pytest.mark.parametrize(
    ("weights", "dtype", "boundary"),
    [
        ("binomial5", "float32", "clamp"),
        ("lopsided", "float64", "interior"),
        ("lopsided", "float32", "clamp"),
    ],
)
def test_separable_streaming_matches_the_reference(
    weights: str, dtype: str, boundary: str, limits: dict[str, int]
) -> None:
    """SEP = 1: each row's x-terms summed once and fed to the y-queue, scalar and vector
    loads, merging, partial chunks; every configuration verified at every point."""
    u, v = SEPARABLE[weights]
    kernel = definition_kernel_of(
        _separable_definition(u, v, boundary=boundary, dtype=dtype), SIZES
    )
    assert "SEP" in kernel.parameter_names
    configs = [{**c, "SEP": 1} for c in CONFIGS[1:3] + VECTOR_CONFIGS[:3]]
    _run(kernel, configs, limits)


def test_a_wrong_separable_kernel_is_caught(limits: dict[str, int]) -> None:
    """A row sum fed to the queue one row off is rejected."""
    from dataclasses import replace

    u, v = SEPARABLE["lopsided"]
    kernel = definition_kernel_of(_separable_definition(u, v, boundary="clamp"), SIZES)
    right = "q[cx][b][RY - (dy)] += (w) * h_;"
    bad = replace(kernel, source=kernel.source.replace(right, right.replace("- (dy)", "+ (dy)")))
    assert bad.source != kernel.source
    default = kernel.default_config()
    assert default is not None
    evaluator = OpenCLEvaluator(bad, runs=1)
    try:
        cfg = {**default, "STREAM": 1, "SEP": 1, **CONFIGS[1]}
        assert evaluator.evaluate(cfg).status is Status.WRONG_RESULT
    finally:
        evaluator.close()

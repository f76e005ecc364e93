"""Property tests of the optimizing template on real OpenCL (PoCL in CI).

Hypothesis draws a stencil (pattern, dimensionality, orientation, radius, intensity),
an array shape and, for every data-loading technique, a random valid configuration;
each runs through :class:`OpenCLEvaluator` and must match the numpy reference.
"""

from __future__ import annotations

import tempfile
from collections.abc import Mapping
from pathlib import Path

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from gtune.description import load_kernel
from gtune.kernel import TunableKernel
from gtune.measure import OpenCLEvaluator, Status, select_device
from gtune.stencils import ORIENTATIONS, PATTERNS, StencilShape, generate

pytestmark = [pytest.mark.opencl, pytest.mark.usefixtures("shared_workers")]

MAX_GROUP = 256  # keep PoCL work-groups small: fast, and legal on every device
MAX_POINTS = 130  # bounds compile time on PoCL (a 3D dense radius-5 takes seconds)


@st.composite
def shapes(draw: st.DrawFn, min_radius: int = 0) -> StencilShape:
    pattern = draw(st.sampled_from(PATTERNS))
    dims = 3 if pattern == "thumbtack" else draw(st.sampled_from((1, 2, 3)))
    axes = ORIENTATIONS[1] if pattern == "thumbtack" else ORIENTATIONS[dims]
    radius = draw(st.integers(min_radius, 5))
    shape = StencilShape(pattern, dims, draw(st.sampled_from(axes)), radius)
    assume(shape.size <= MAX_POINTS)
    return shape


def _pow2_dividing(n: int, limit: int) -> list[int]:
    out, v = [], 1
    while v <= min(n, limit):
        if n % v == 0:
            out.append(v)
        v *= 2
    return out


def draw_config(
    data: st.DataObject, kernel: TunableKernel, technique: str, limits: Mapping[str, int]
) -> dict[str, int]:
    """A random configuration using ``technique`` that satisfies every constraint."""
    nx, ny, nz = (kernel.sizes[n] for n in ("NX", "NY", "NZ"))
    vx = 1
    if technique == "vec":
        vx = data.draw(st.sampled_from([v for v in (2, 4, 8, 16) if nx % v == 0]), "VX")
    cfg = {"VX": vx, "BX": vx, "LOCAL": int(technique == "local")}
    if "RIM" in kernel.parameter_names:  # whole rim vectors (vec only), or lanes
        cfg["RIM"] = data.draw(st.sampled_from((0, 1)), "RIM") if technique == "vec" else 0
        # with whole rim vectors, rows merged in y and z (their neighbours' rows clamped
        # into the array where the block crosses an edge)
        for name in ("BY", "BZ"):
            if name in kernel.parameter_names:
                cfg[name] = data.draw(st.sampled_from((1, 2, 4)), name) if cfg["RIM"] else 1
        if "RIN" in kernel.parameter_names:  # the interior path: whole rim vectors' choice
            cfg["RIN"] = data.draw(st.sampled_from((0, 1)), "RIN") if cfg["RIM"] else 0
    cfg["IMAGE"] = int(technique == "image")
    cfg["STREAM"], cfg["ZC"] = 0, 1
    group = min(MAX_GROUP, limits["MAX_WORK_GROUP_SIZE"])
    rest = nx // vx
    cfg["WX"] = data.draw(st.sampled_from(_pow2_dividing(rest, group)), "WX")
    cfg["CX"] = data.draw(st.sampled_from(_pow2_dividing(rest // cfg["WX"], rest)), "CX")
    group //= cfg["WX"]
    cfg["WY"] = data.draw(st.sampled_from(_pow2_dividing(ny, group)), "WY")
    cfg["CY"] = data.draw(st.sampled_from(_pow2_dividing(ny // cfg["WY"], ny)), "CY")
    group //= cfg["WY"]
    cfg["WZ"] = data.draw(st.sampled_from(_pow2_dividing(nz, group)), "WZ")
    cfg["CZ"] = data.draw(st.sampled_from(_pow2_dividing(nz // cfg["WZ"], nz)), "CZ")
    env = {**kernel.env(cfg), **limits}
    broken = [c.text for c in kernel.constraints if not c.evaluate(env)]
    assume(not broken)
    assert all(t.evaluate(env) for t in kernel.techniques[technique])
    return cfg


@pytest.fixture(scope="module")
def limits() -> dict[str, int]:
    return select_device(None).limit_values()


@settings(
    max_examples=5,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(
    shape=shapes(),
    size=st.tuples(*[st.sampled_from((16, 24, 32))] * 3),
    intensity=st.sampled_from((1, 1, 2)),
    data=st.data(),
)
def test_every_technique_matches_the_reference(
    limits: dict[str, int],
    shape: StencilShape,
    size: tuple[int, int, int],
    intensity: int,
    data: st.DataObject,
) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        (g,) = generate(
            [shape], Path(tmp), seed=data.draw(st.integers(0, 99)), size=size, intensity=intensity
        )
        kernel = load_kernel(g.description)
        configs = [
            draw_config(data, kernel, t, limits) for t in ("global", "vec", "local", "image")
        ]
        evaluator = OpenCLEvaluator(kernel, runs=1)
        try:
            for cfg in configs:
                result = evaluator.evaluate(cfg)
                assert result.status is Status.OK, (shape.name, size, cfg, result.message)
        finally:
            evaluator.close()


def draw_stream_config(
    data: st.DataObject, kernel: TunableKernel, limits: Mapping[str, int]
) -> dict[str, int]:
    """A random valid configuration of the streaming technique (WZ = CZ = 1, any ZC)."""
    nx, ny, nz = (kernel.sizes[n] for n in ("NX", "NY", "NZ"))
    cfg = {"VX": 1, "LOCAL": 0, "IMAGE": 0, "STREAM": 1, "WZ": 1, "CZ": 1}
    for name in ("RIM", "RIN", "BY", "BZ"):  # the vector technique's; here at rest
        if name in kernel.parameter_names:
            cfg[name] = 1 if name in ("BY", "BZ") else 0
    group = min(MAX_GROUP, limits["MAX_WORK_GROUP_SIZE"])
    cfg["WX"] = data.draw(st.sampled_from(_pow2_dividing(nx, group)), "WX")
    cfg["BX"] = data.draw(st.sampled_from(_pow2_dividing(nx // cfg["WX"], 4)), "BX")
    cfg["CX"] = data.draw(st.sampled_from(_pow2_dividing(nx // (cfg["WX"] * cfg["BX"]), 4)), "CX")
    cfg["WY"] = data.draw(st.sampled_from(_pow2_dividing(ny, group // cfg["WX"])), "WY")
    cfg["CY"] = data.draw(st.sampled_from(_pow2_dividing(ny // cfg["WY"], 4)), "CY")
    cfg["ZC"] = data.draw(st.sampled_from(_pow2_dividing(nz, nz)), "ZC")
    env = {**kernel.env(cfg), **limits}
    broken = [c.text for c in kernel.constraints if not c.evaluate(env)]
    assume(not broken)
    assert all(t.evaluate(env) for t in kernel.techniques["stream"])
    return cfg


@settings(
    max_examples=4,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(
    shape=shapes(min_radius=1),
    size=st.sampled_from(((16, 16, 16), (24, 20, 18))),
    intensity=st.sampled_from((1, 2)),
    data=st.data(),
)
def test_streaming_matches_the_reference(
    limits: dict[str, int],
    shape: StencilShape,
    size: tuple[int, int, int],
    intensity: int,
    data: st.DataObject,
) -> None:
    """Streaming along z verifies for every pattern, radius 1-5 and awkward sizes."""
    with tempfile.TemporaryDirectory() as tmp:
        (g,) = generate([shape], Path(tmp), seed=0, size=size, intensity=intensity)
        kernel = load_kernel(g.description)
        cfg = draw_stream_config(data, kernel, limits)
        evaluator = OpenCLEvaluator(kernel, runs=1)
        try:
            result = evaluator.evaluate(cfg)
            assert result.status is Status.OK, (shape.name, size, cfg, result.message)
        finally:
            evaluator.close()


def test_a_wrong_weight_is_caught(tmp_path: Path) -> None:
    """The verification the property test relies on does reject a wrong output."""
    (g,) = generate([StencilShape("star", 2, "xy", 1)], tmp_path, size=(32, 16, 16))
    text = g.description.read_text()
    head, _, tail = text.partition("weights: [")
    g.description.write_text(head + "weights: [2.5, " + tail.split(", ", 1)[1])
    kernel = load_kernel(g.description)
    evaluator = OpenCLEvaluator(kernel, runs=1)
    try:
        default = kernel.default_config()
        assert default is not None
        for cfg in (default, {**default, "VX": 4, "BX": 4, "WX": 2}):
            assert evaluator.evaluate(cfg).status is Status.WRONG_RESULT
    finally:
        evaluator.close()

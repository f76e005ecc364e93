"""Stencil definitions rendered into the template, run on real OpenCL (PoCL in CI).

Every corpus definition (``tests/data/definitions``) and every converted real stencil
(``stencils/*.stencil.yaml``) verifies against its numpy reference in one configuration
of each technique; random definitions (offsets up to radius 4, random weights and
coefficients, the three boundaries, both element types, a second field) do the same.
"""

from __future__ import annotations

import itertools
import math
import tempfile
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from gtune.description import load_kernel
from gtune.kernel import TunableKernel
from gtune.measure import OpenCLEvaluator, Status, select_device
from gtune.stencils.definition import MAPPED_BOUNDARIES, parse_definition
from gtune.stencils.render import VEC_OUTS_MAX

pytestmark = pytest.mark.opencl

ROOT = Path(__file__).resolve().parents[2]
CORPUS_DIR = ROOT / "tests" / "data" / "definitions"
CORPUS = sorted(CORPUS_DIR.glob("*.stencil.yaml"))
# The real stencils (stencils/*.stencil.yaml) less jacobi2d and heat3d: the corpus's
# star2d_c and star3d_c with numbers for weights, as blur5, box27 and laplacian4 have
# (test_real_stencils.py runs every real stencil's default and a tuned configuration).
SAME_AS_CORPUS = ("jacobi2d", "heat3d")
REAL = sorted(
    p
    for p in (ROOT / "stencils").glob("*.stencil.yaml")
    if p.name.removesuffix(".stencil.yaml") not in SAME_AS_CORPUS
)


SEPARABLE = ("vec separable", "vec separable rows")
"""The two SEP configurations of the vector technique: rows merged in y (and z), and
single rows."""


@pytest.fixture(scope="module")
def limits() -> dict[str, int]:
    return select_device(None).limit_values()


def technique_configs(
    kernel: TunableKernel, limits: Mapping[str, int], separable: tuple[str, ...] = SEPARABLE
) -> dict[str, dict[str, int]]:
    """One valid configuration per technique: the defaults with that technique on (and
    the vector technique once more with whole rim vectors, and with them rows merged in y
    and z, where the kernel has RIM; a separable stencil's also with its weights applied
    axis by axis, SEP: those of ``separable``, with the rows merged and without)."""
    default = kernel.default_config()
    assert default is not None
    vec = {"VX": 4, "BX": 4, "WX": 4}
    wanted: dict[str, tuple[str, dict[str, int]]] = {
        "global": ("global", {}),
        "vec": ("vec", vec),
        "local": ("local", {"LOCAL": 1, "WX": 8}),
        "image": ("image", {"IMAGE": 1}),
        "stream": ("stream", {"STREAM": 1, "ZC": 4, "WZ": 1, "BX": 2, "WX": 8, "WY": 2}),
    }
    if "RIM" in kernel.parameter_names:
        wanted["vec rim"] = ("vec", {**vec, "RIM": 1})
        blocks: dict[str, int] = {n: 2 for n in ("BY", "BZ") if n in kernel.parameter_names}
        wanted["vec blocks"] = ("vec", {**vec, "RIM": 1, **blocks})
        fixed = {c.text for c in kernel.constraints}  # (integer elements: SEP == 0)
        if "SEP" in kernel.parameter_names and "SEP == 0" not in fixed:
            # a separable stencil's weights axis by axis
            if "vec separable" in separable:
                wanted["vec separable"] = ("vec", {**vec, "RIM": 1, **blocks, "SEP": 1})
            if "vec separable rows" in separable:
                wanted["vec separable rows"] = ("vec", {**vec, "RIM": 1, "SEP": 1})
    out: dict[str, dict[str, int]] = {}
    for name, (technique, change) in wanted.items():
        if technique not in kernel.techniques:
            continue
        cfg = {**default, **change}
        env = {**kernel.env(cfg), **limits}
        broken = [c.text for c in kernel.constraints if not c.evaluate(env)]
        assert not broken, (name, cfg, broken)
        assert all(t.evaluate(env) for t in kernel.techniques[technique]), name
        out[name] = cfg
    return out


def verify_all(
    kernel: TunableKernel, limits: Mapping[str, int], separable: tuple[str, ...] = SEPARABLE
) -> list[str]:
    configs = technique_configs(kernel, limits, separable)
    verify(kernel, configs)
    return list(configs)


def verify(kernel: TunableKernel, configs: Mapping[str, Mapping[str, int]]) -> None:
    """Each of ``configs`` (by name) verifies against the kernel's reference."""
    evaluator = OpenCLEvaluator(kernel, runs=1)
    try:
        for name, cfg in configs.items():
            result = evaluator.evaluate(cfg)
            assert result.status is Status.OK, (kernel.label, name, cfg, result.message)
    finally:
        evaluator.close()


STEPS_TURN = ("zero_steps", "rim_steps")
"""Kernels of several one-step launches (``steps``, TB == 1) take the one-step
techniques by turns: what the steps add to one step, verified in every technique by
test_definition_verifies_in_every_technique (the zero boundary: conv2d_zero and
star3d_zero; the copied rim: sobel2d_rim_copy), is the host's loop of launches with the
buffers swapped, the same for every technique's kernel."""


def verify_by_turns(
    kernel: TunableKernel, limits: Mapping[str, int], name: str, expected: set[str]
) -> None:
    """The kernel's one-step techniques are ``expected``; the ``name``-th turn of
    STEPS_TURN of them verifies."""
    configs = technique_configs(kernel, limits)
    assert set(configs) == expected
    turn = STEPS_TURN.index(name)
    verify(kernel, dict(list(configs.items())[turn :: len(STEPS_TURN)]))


def small(kernel: TunableKernel) -> dict[str, int]:
    return {"NX": 32, "NY": 16, "NZ": 16} if "NZ" in kernel.sizes else {"NX": 32, "NY": 16}


# thermal3d_f64 is thermal3d (3D, clamp, a second field, a constant), verified here in
# every technique, in doubles: the element type's code (loads, stores, sums, no images)
# is verified in 3D by star3d_f64 and with clamping by jacobi2d_clamp_f64, here too.
# thermal3d_f64 still tunes (test_corpus_definition_tunes_briefly) and is built as a
# bundle (test_bundle_opencl).
SAME_AS_VERIFIED = ("thermal3d_f64",)
VERIFIED = [
    p for p in CORPUS + REAL if p.name.removesuffix(".stencil.yaml") not in SAME_AS_VERIFIED
]
# The separable definitions take the two SEP configurations by turns, each in 2D and
# 3D: these run the single rows, the others (box2d, sep3d_r2, box27) rows merged.
SEPARABLE_ROWS = ("box3d_c", "blur5")


@pytest.mark.usefixtures("shared_workers")
@pytest.mark.parametrize("path", VERIFIED, ids=lambda p: p.name)
def test_definition_verifies_in_every_technique(path: Path, limits: dict[str, int]) -> None:
    kernel = load_kernel(path)
    kernel = kernel.with_sizes(small(kernel))
    rows = path.name.removesuffix(".stencil.yaml") in SEPARABLE_ROWS
    separable = SEPARABLE[rows : rows + 1]
    assert not rows or "SEP" in kernel.parameter_names, path.name
    done = verify_all(kernel, limits, separable)
    expected = {"global", "vec", "local", "stream"}  # streaming along z (3D) or y (2D)
    boundary = kernel.features.get("boundary")
    if "float64" not in kernel.features.get("dtype", "") and boundary not in MAPPED_BOUNDARIES:
        expected.add("image")  # (a sampler wraps and mirrors normalised coordinates only)
    if boundary != "zero":  # whole rim vectors too
        expected |= {"vec rim", "vec blocks"}
        if "SEP" in kernel.parameter_names:  # and the weights applied axis by axis
            expected |= set(separable)
    assert set(done) == expected


@pytest.mark.usefixtures("shared_workers")
def test_a_wrong_kernel_is_caught(tmp_path: Path) -> None:
    """A rendered kernel that differs from its definition fails verification, in each
    technique. (The vector technique's whole rim vectors and merged rows, "vec rim" and
    "vec blocks", load the rim otherwise and compute the same terms as "vec": they are
    left out.)"""
    text = (ROOT / "tests" / "data" / "definitions" / "thermal2d.stencil.yaml").read_text()
    path = tmp_path / "t.stencil.yaml"
    path.write_text(text)
    kernel = load_kernel(path).with_sizes({"NX": 32, "NY": 16})
    from dataclasses import replace

    # the same kernel, but its source computes the power term twice
    bad = replace(
        kernel,
        source=kernel.source.replace(
            "E(power, 0, 0, 0, (step_div_cap))", "E(power, 0, 0, 0, ((REAL)2*step_div_cap))"
        ),
    )
    assert bad.source != kernel.source
    evaluator = OpenCLEvaluator(bad, runs=1)
    try:
        default = kernel.default_config()
        assert default is not None
        configs = technique_configs(kernel, select_device(None).limit_values())
        assert {"global", "vec", "local", "image", "stream"} <= set(configs)
        for name, cfg in configs.items():
            if name not in ("vec rim", "vec blocks"):
                assert evaluator.evaluate(cfg).status is Status.WRONG_RESULT, name
    finally:
        evaluator.close()


@pytest.mark.usefixtures("shared_workers")
@pytest.mark.parametrize("name", ["conv2d_zero", "star3d_zero"])
def test_zero_boundary_reads_zero_not_the_edge(name: str, limits: dict[str, int]) -> None:
    """The zero boundary's kernels rendered without ZERO (so clamping their neighbours,
    every point still written) fail verification in every technique: the corpus' zero
    definitions test what a neighbour beyond an edge reads. The two take the techniques
    by turns (2D: global, local, stream; 3D: vec, image), each technique's teeth once."""
    from dataclasses import replace

    kernel = load_kernel(ROOT / "tests" / "data" / "definitions" / f"{name}.stencil.yaml")
    kernel = kernel.with_sizes(small(kernel))
    assert "#define ZERO 1" in kernel.source
    clamped = replace(kernel, source=kernel.source.replace("#define ZERO 1", ""))
    evaluator = OpenCLEvaluator(clamped, runs=1)
    try:
        configs = technique_configs(kernel, limits)
        assert set(configs) == {"global", "vec", "local", "image", "stream"}
        turn = ["conv2d_zero", "star3d_zero"].index(name)
        for technique, cfg in list(configs.items())[turn::2]:
            assert evaluator.evaluate(cfg).status is Status.WRONG_RESULT, technique
    finally:
        evaluator.close()


MAPPED = ("wrap3d_r2", "reflect2d_conv", "symmetric3d_box")


@pytest.mark.usefixtures("shared_workers")
@pytest.mark.parametrize("name", MAPPED)
def test_mapped_boundaries_read_the_mapped_point_not_the_edge(
    name: str, limits: dict[str, int]
) -> None:
    """The wrap, reflect and symmetric definitions rendered without BORDER (so clamping
    their neighbours, every point still written) fail verification: the corpus' mapped
    definitions test where a neighbour beyond an edge is read. The three take the
    techniques by turns, each technique's (and the whole rim vectors') teeth once."""
    from dataclasses import replace

    kernel = load_kernel(ROOT / "tests" / "data" / "definitions" / f"{name}.stencil.yaml")
    kernel = kernel.with_sizes(small(kernel))
    border = f"#define BORDER {MAPPED_BOUNDARIES[kernel.features['boundary']]}"
    assert border in kernel.source
    clamped = replace(kernel, source=kernel.source.replace(border, ""))
    evaluator = OpenCLEvaluator(clamped, runs=1)
    try:
        configs = list(technique_configs(kernel, limits, separable=()).items())
        assert {"global", "vec", "local", "stream", "vec rim"} <= {n for n, _ in configs}
        for technique, cfg in configs[MAPPED.index(name) :: len(MAPPED)]:
            assert evaluator.evaluate(cfg).status is Status.WRONG_RESULT, technique
    finally:
        evaluator.close()


@pytest.mark.usefixtures("shared_workers")
def test_zero_boundary_time_steps_verify_without_temporal_blocking(
    tmp_path: Path, limits: dict[str, int]
) -> None:
    """Four steps with the zero boundary (each step reads 0 beyond the edges) verify in
    the one-step techniques (by turns with the copied rim's steps: STEPS_TURN); temporal
    blocking is left out (TB == 1) and the template refuses it with the reason."""
    data = parse_definition(
        {**_yaml(CORPUS_DIR / "star2d_c.stencil.yaml"), "boundary": "zero", "steps": 4},
        "zero_steps.stencil.yaml",
    )
    path = tmp_path / "zero_steps.stencil.yaml"
    path.write_text(data.to_yaml())
    kernel = load_kernel(path).with_sizes({"NX": 32, "NY": 16})
    assert "TB == 1" in [c.text for c in kernel.constraints]
    assert not any(t.startswith("temporal") for t in kernel.techniques)
    verify_by_turns(kernel, limits, "zero_steps", {"global", "vec", "local", "stream"})
    evaluator = OpenCLEvaluator(kernel, runs=1)
    try:
        default = kernel.default_config()
        assert default is not None
        result = evaluator.evaluate({**default, "TB": 2, "STREAM": 1})
        assert result.status is Status.BUILD_FAILED
        assert "zero boundary is not supported by temporal blocking" in result.message
    finally:
        evaluator.close()


@pytest.mark.usefixtures("shared_workers")
@pytest.mark.parametrize(
    ("name", "line"),
    [("sobel2d_rim_copy", "#define RIM_WRITE 1"), ("star3d_rim_const", "#define RIM_WRITE 2")],
)
def test_a_written_rim_is_written_in_every_technique(
    name: str, line: str, limits: dict[str, int]
) -> None:
    """The interior kernels whose rim is written (a copy of the input, a constant)
    rendered without RIM_WRITE (so keeping the rim) fail verification in every
    technique: the corpus' rim definitions test what the rim holds. The two take the
    techniques by turns, each technique's teeth once."""
    from dataclasses import replace

    kernel = load_kernel(CORPUS_DIR / f"{name}.stencil.yaml")
    kernel = kernel.with_sizes(small(kernel))
    assert line in kernel.source
    kept = replace(kernel, source=kernel.source.replace(line, ""))
    evaluator = OpenCLEvaluator(kept, runs=1)
    try:
        configs = technique_configs(kernel, limits)
        assert {"global", "vec", "local", "image", "stream"} <= set(configs)
        turn = ["sobel2d_rim_copy", "star3d_rim_const"].index(name)
        for technique, cfg in list(configs.items())[turn::2]:
            assert evaluator.evaluate(cfg).status is Status.WRONG_RESULT, technique
    finally:
        evaluator.close()


@pytest.mark.usefixtures("shared_workers")
def test_a_copied_rim_over_time_steps_verifies_without_temporal_blocking(
    tmp_path: Path, limits: dict[str, int]
) -> None:
    """Three steps, each copying its input's rim, verify in the one-step techniques (by
    turns with the zero boundary's steps: STEPS_TURN); temporal blocking is left out
    (TB == 1) and the template refuses it with the reason."""
    data = parse_definition(
        {**_yaml(CORPUS_DIR / "star2d_c.stencil.yaml"), "rim": "copy", "steps": 3},
        "rim_steps.stencil.yaml",
    )
    path = tmp_path / "rim_steps.stencil.yaml"
    path.write_text(data.to_yaml())
    kernel = load_kernel(path).with_sizes({"NX": 32, "NY": 16})
    assert "TB == 1" in [c.text for c in kernel.constraints]
    assert not any(t.startswith("temporal") for t in kernel.techniques)
    techniques = {"global", "vec", "local", "stream", "vec rim", "vec blocks"}
    verify_by_turns(kernel, limits, "rim_steps", techniques)
    evaluator = OpenCLEvaluator(kernel, runs=1)
    try:
        default = kernel.default_config()
        assert default is not None
        result = evaluator.evaluate({**default, "TB": 3, "STREAM": 1})
        assert result.status is Status.BUILD_FAILED
        assert "written rim is not supported by temporal blocking" in result.message
    finally:
        evaluator.close()


ONE_SIDED = {
    # upwind in x and y (taps x-1, y-1): written from x = 1, y = 1 up to the far edges
    "2d": (2, [[-1, 0], [0, 0], [0, -1]], {"NX": 32, "NY": 32}),
    # x-2 .. x, y .. y+1 and z-2 .. z (its off-plane taps on the z axis: ZREG serves it)
    "3d": (3, [[-2, 0, 0], [-1, 0, 0], [0, 0, 0], [0, 1, 0], [0, 0, -1], [0, 0, -2]], {}),
}


@pytest.mark.usefixtures("shared_workers")
@pytest.mark.parametrize("case", sorted(ONE_SIDED))
def test_band_reach_verifies_in_every_technique(case: str, limits: dict[str, int]) -> None:
    """A one-sided stencil with ``band: reach`` (written where its taps lie inside the
    array, up to the edge it does not read beyond) over four steps verifies in every
    technique: one-step ones and temporal blocking, tiles and streaming (3D: its
    z-neighbours in registers too). The template's halos stay the radius; only the
    points written move (RX_LO ... RZ_HI), and without them the kernels fail."""
    from dataclasses import replace

    dims, offsets, sizes = ONE_SIDED[case]
    terms = [
        {"field": "u", "offset": o, "coefficient": 0.125 * (i + 1)} for i, o in enumerate(offsets)
    ]
    data = {"dims": dims, "fields": ["u"], "output": "v", "band": "reach", "terms": terms}
    d = parse_definition({**data, "name": f"one_sided_{case}", "steps": 4}, "one_sided")
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / f"{d.name}.stencil.yaml"
        path.write_text(d.to_yaml())
        kernel = load_kernel(path)
    kernel = kernel.with_sizes(sizes or small(kernel))
    default = kernel.default_config()
    assert default is not None
    configs = technique_configs(kernel, limits)
    temporal = {"temporal": {"STREAM": 1}, "temporal-tile": {}}
    if dims == 3:
        temporal["temporal-zreg"] = {"STREAM": 1, "ZREG": 2, "ZU": 1}
    assert set(temporal) == {t for t in kernel.techniques if t.startswith("temporal")}
    configs.update({t: {**default, **c, "TB": 2} for t, c in temporal.items()})
    sided = replace(kernel, source=kernel.source.replace("#define RX_HI 0", ""))
    evaluators = OpenCLEvaluator(kernel, runs=1), OpenCLEvaluator(sided, runs=1)
    try:
        for technique, cfg in configs.items():
            assert evaluators[0].evaluate(cfg).status is Status.OK, (case, technique)
        for technique in ("global", "temporal"):  # the symmetric band misses a column
            assert evaluators[1].evaluate(configs[technique]).status is Status.WRONG_RESULT
    finally:
        for e in evaluators:
            e.close()


def _yaml(path: Path) -> dict[str, Any]:
    import yaml

    data: dict[str, Any] = yaml.safe_load(path.read_text())
    return data


@st.composite
def definitions(
    draw: st.DrawFn, boundaries: tuple[str, ...] = ("interior", "clamp", "zero")
) -> dict[str, Any]:
    dims = draw(st.sampled_from((2, 3)))
    radius = draw(st.integers(1, 4))
    coord = st.integers(-radius, radius)
    offsets = draw(st.lists(st.tuples(*[coord] * dims), min_size=1, max_size=8, unique=True))
    weight = st.floats(-1, 1, allow_nan=False).map(lambda w: round(w, 3)).filter(lambda w: w != 0)
    terms: list[dict[str, Any]] = []
    for o in offsets:
        coef: Any = draw(weight)
        if draw(st.booleans()):
            coef = f"{coef}*a"
        terms.append({"field": "u", "offset": list(o), "coefficient": coef})
    fields = ["u"]
    if draw(st.booleans()):
        fields.append("p")
        terms.append({"field": "p", "coefficient": "b"})
        if draw(st.booleans()):
            terms.append({"field": "p", "offset": [1] + [0] * (dims - 1), "coefficient": 0.5})
    data: dict[str, Any] = {
        "dims": dims,
        "dtype": draw(st.sampled_from(("float32", "float64"))),
        "boundary": draw(st.sampled_from(boundaries)),
        "fields": fields,
        "output": "out",
        "coefficients": ["a", "b"],
        "values": {"a": draw(st.sampled_from((0.5, 1.5))), "b": draw(weight)},
        "terms": terms,
    }
    if draw(st.booleans()):
        data["constant"] = "0.25*b"
    if data["boundary"] == "interior":  # the rim kept, copied or set; or the tight band
        edge = draw(st.sampled_from(("keep", "copy", "number", "reach")))
        if edge in ("copy", "number"):
            data["rim"] = "copy" if edge == "copy" else 0.5
        elif edge == "reach":
            data["band"] = "reach"
    return data


@pytest.mark.slow
@pytest.mark.usefixtures("shared_workers")
@settings(
    max_examples=2,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(data=definitions())
def test_random_definitions_verify(data: dict[str, Any], limits: dict[str, int]) -> None:
    d = parse_definition(data, "random.stencil.yaml")
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "random.stencil.yaml"
        path.write_text(d.to_yaml())
        kernel = load_kernel(path)
        sizes = {"NX": 32, "NY": 16}
        if d.dims == 3:
            sizes["NZ"] = 16
        verify_all(kernel.with_sizes(sizes), limits)


@st.composite
def separable_definitions(draw: st.DrawFn) -> dict[str, Any]:
    """Random outer products of per-axis factors (radius 1-2 each, random weights), 2D
    or 3D, either element type, sometimes with a second field and a constant: the
    weights the vector technique may apply axis by axis (SEP)."""
    dims = draw(st.sampled_from((2, 3)))
    weight = st.floats(0.05, 1, allow_nan=False).map(lambda w: round(w, 3))
    factors = []
    for _ in range(dims):
        r = draw(st.integers(1, 2))
        factors.append({o: draw(weight) * draw(st.sampled_from((1, -1))) for o in range(-r, r + 1)})
    terms: list[dict[str, Any]] = []
    for key in itertools.product(*(sorted(f) for f in factors)):
        w = math.prod(f[o] for f, o in zip(factors, key, strict=True))
        terms.append({"field": "u", "offset": list(key), "coefficient": w})
    fields = ["u"]
    if draw(st.booleans()):
        fields.append("p")
        terms.append({"field": "p", "coefficient": 0.5})
    data: dict[str, Any] = {
        "dims": dims,
        "dtype": draw(st.sampled_from(("float32", "float64"))),
        "boundary": "interior",
        "fields": fields,
        "output": "out",
        "terms": terms,
    }
    if draw(st.booleans()):
        data["constant"] = 0.25
    return data


@pytest.mark.usefixtures("shared_workers")
@settings(
    max_examples=2,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(data=separable_definitions(), choice=st.data())
def test_separable_weights_axis_by_axis_verify(
    data: dict[str, Any], choice: st.DataObject, limits: dict[str, int]
) -> None:
    """SEP=1 (each input row's x-terms summed once, the sums combined in y, then z) with
    random row blocks and vector widths computes what the definition says."""
    d = parse_definition(data, "separable.stencil.yaml")
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "separable.stencil.yaml"
        path.write_text(d.to_yaml())
        sizes = {"NX": 32, "NY": 16, "NZ": 16} if d.dims == 3 else {"NX": 32, "NY": 16}
        kernel = load_kernel(path).with_sizes(sizes)
        assert "SEP" in kernel.parameter_names
        default = kernel.default_config()
        assert default is not None
        vx = choice.draw(st.sampled_from((2, 4, 8)), "VX")
        cfg = {**default, "VX": vx, "BX": vx, "WX": 2, "WY": 2, "RIM": 1, "SEP": 1}
        outs = vx  # outputs per work-item: BX*BY*BZ <= VEC_OUTS_MAX (the registers)
        for name in ("BY", "BZ"):
            if name in kernel.parameter_names:
                fits = [b for b in (1, 2, 4) if outs * b <= VEC_OUTS_MAX]
                cfg[name] = choice.draw(st.sampled_from(fits), name)
                outs *= cfg[name]
        env = {**kernel.env(cfg), **limits}
        broken = [c.text for c in kernel.constraints if not c.evaluate(env)]
        assert not broken, (cfg, broken)
        evaluator = OpenCLEvaluator(kernel, runs=1)
        try:
            result = evaluator.evaluate(cfg)
            assert result.status is Status.OK, (cfg, result.message)
        finally:
            evaluator.close()


def test_reference_is_not_trivial() -> None:
    """The corpus' references change the output (the verification has teeth)."""
    for path in CORPUS:
        kernel = load_kernel(path)
        d = parse_definition(kernel.reference.args["definition"], str(path))
        shape = (8, 8, 8)[: d.dims]
        rng = np.random.default_rng(0)
        out0 = rng.random(shape)
        out = d.reference({f: rng.random(shape) for f in d.fields}, out0)
        assert not np.array_equal(out, out0.astype(out.dtype)), path.name


# One corpus definition per shape of the tuning space (its parameters and techniques
# follow from the dimensions, the boundary, a separable stencil's SEP and doubles'
# lack of images): box3d_c tunes the space sep3d_r2 does (3D, interior, floats,
# separable: its weights are numbers times one scalar, s) and
# thermal3d the one star3d_r2_clamp does (3D, clamp, floats), and the zero boundary's
# conv2d_zero and star3d_zero those of thermal2d and star3d_r2_clamp, and the written
# rims' sobel2d_rim_copy and star3d_rim_const those of thermal2d and star3d_c (the
# interior's, no temporal blocking in one step). Every definition's
# kernels verify in every technique in test_definition_verifies_in_every_technique.
SAME_SPACE = (
    "box3d_c",
    "thermal3d",
    "conv2d_zero",
    "star3d_zero",
    "sobel2d_rim_copy",
    "star3d_rim_const",
)
TUNED = [p for p in CORPUS if p.name.removesuffix(".stencil.yaml") not in SAME_SPACE]


@pytest.mark.slow
@pytest.mark.usefixtures("shared_workers")
@pytest.mark.parametrize("path", TUNED, ids=lambda p: p.name)
def test_corpus_definition_tunes_briefly(path: Path, tmp_path: Path) -> None:
    """A corpus definition of each space shape (``TUNED``) tunes like a generated
    kernel (the space of every technique solved, a budget of 3: the search, its choice
    and the check of its best at the least cost) and its best configuration is
    verified against the definition (test_definition_verifies_in_every_technique runs
    each technique)."""
    import gtune

    kernel = load_kernel(path)
    report = gtune.tune(
        kernel.with_sizes(small(kernel)),
        technique="all",
        budget=3,
        store=tmp_path / "results.db",
        confirm=None,
        timeout_s=120,
    )
    best = report.best_result
    assert best is not None and best.status is Status.OK, report
    assert "unverified" not in (best.extra or {}), best.extra
    assert report.measured >= 2


def _separable_kernel(data: dict[str, Any], path: Path) -> tuple[Any, dict[str, int]]:
    """The 2D definition ``data`` written to ``path`` and loaded at 32 x 16, with SEP
    among its parameters; the kernel and its default configuration."""
    path.write_text(parse_definition(data, str(path)).to_yaml())
    kernel = load_kernel(path).with_sizes({"NX": 32, "NY": 16})
    assert "SEP" in kernel.parameter_names
    default = kernel.default_config()
    assert default is not None
    return kernel, default


@pytest.mark.usefixtures("shared_workers")
@pytest.mark.parametrize("boundary", ["interior", "clamp"])
def test_a_scaled_separable_stencil_verifies_axis_by_axis(
    boundary: str, limits: dict[str, int], tmp_path: Path
) -> None:
    """A 5x5 binomial written as ``0.00390625*gain``, ``0.015625*gain`` ... (a number
    times one scalar, as the lifted tile_local's): SEP=1, its scalar multiplied into
    the y factor's weights, computes what the definition says with 2D streaming and
    (interior) the vector technique's row sums; a kernel that leaves the scalar out of
    one y weight is caught."""
    binomial = {-2: 1, -1: 4, 0: 6, 1: 4, 2: 1}
    terms = [
        {"field": "u", "offset": [dx, dy], "coefficient": f"{wx * wy / 256!r}*gain"}
        for dy, wy in binomial.items()
        for dx, wx in binomial.items()
    ]
    data = {
        "dims": 2,
        "boundary": boundary,
        "fields": ["u"],
        "output": "out",
        "coefficients": ["gain"],
        "values": {"gain": 1.5},
        "terms": terms,
    }
    kernel, default = _separable_kernel(data, tmp_path / "scaled.stencil.yaml")
    stream = {"STREAM": 1, "ZC": 4, "WZ": 1, "BX": 2, "WX": 8, "WY": 2}
    configs = [{**default, **stream, "SEP": 1}]
    if boundary == "interior":
        configs.append({**default, "VX": 4, "BX": 4, "WX": 4, "RIM": 1, "BY": 2, "SEP": 1})
    for cfg in configs:
        env = {**kernel.env(cfg), **limits}
        assert all(c.evaluate(env) for c in kernel.constraints), cfg
    from dataclasses import replace

    centre = "T(0, ((REAL)0.375*gain))"  # the y factor's centre weight times the scalar
    assert kernel.source.count(centre) == 1
    bad = replace(kernel, source=kernel.source.replace(centre, "T(0, ((REAL)0.375))"))
    # the wrong kernel caught in one configuration a boundary: streaming (clamp), the
    # vector technique's row sums (interior)
    for k, status, tried in (
        (kernel, Status.OK, configs),
        (bad, Status.WRONG_RESULT, configs[-1:]),
    ):
        evaluator = OpenCLEvaluator(k, runs=1)
        try:
            for cfg in tried:
                result = evaluator.evaluate(cfg)
                assert result.status is status, (cfg, result.message)
        finally:
            evaluator.close()


@pytest.mark.usefixtures("shared_workers")
def test_fixed_weights_separable_verifies_axis_by_axis(
    limits: dict[str, int], tmp_path: Path
) -> None:
    """``w[i]*w[j]`` from a fixed weights array (``weights_fixed``): the entries count
    as numbers, so SEP is offered, and SEP=1 verifies with 2D streaming and the vector
    technique's row sums."""
    terms = [
        {"field": "u", "offset": [dx, dy], "coefficient": f"w[{dx + 1}]*w[{dy + 1}]"}
        for dy in (-1, 0, 1)
        for dx in (-1, 0, 1)
    ]
    data = {
        "dims": 2,
        "fields": ["u"],
        "output": "out",
        "terms": terms,
        "weights": {"w": [0.3, 0.5, -0.2]},
        "weights_fixed": True,
    }
    kernel, default = _separable_kernel(data, tmp_path / "fixed.stencil.yaml")
    configs = [
        {**default, "STREAM": 1, "ZC": 4, "WZ": 1, "BX": 2, "WX": 8, "WY": 2, "SEP": 1},
        {**default, "VX": 4, "BX": 4, "WX": 4, "RIM": 1, "BY": 2, "SEP": 1},
    ]
    evaluator = OpenCLEvaluator(kernel, runs=1)
    try:
        for cfg in configs:
            env = {**kernel.env(cfg), **limits}
            assert all(c.evaluate(env) for c in kernel.constraints), cfg
            result = evaluator.evaluate(cfg)
            assert result.status is Status.OK, (cfg, result.message)
    finally:
        evaluator.close()

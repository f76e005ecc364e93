"""Lifting: the probing algorithm on numpy stencils (fast), and real kernels on OpenCL.

The fast tests run the algorithm against a definition's own reference as the "kernel",
so that what it recovers can be compared with what was put in; the OpenCL tests lift
the plain-kernel corpus (stencils/plain) and random generated kernels, and check the
lifted definition's reference against the original kernel's output on fresh inputs.
"""

from __future__ import annotations

import json
import math
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from gtune.exceptions import InputError
from gtune.stencils.definition import (
    StencilDefinition,
    load_definition,
    parse_definition,
    weight_entries,
)
from gtune.stencils.lift import (
    Interface,
    NotAStencil,
    ScalarArg,
    interface,
    lift_with,
    nice_number,
)
from tests.conftest import ROOT, run_tuned_example
from tests.inprocess import Cli

# evaluators share the session's worker processes (tests/conftest.py)
pytestmark = pytest.mark.usefixtures("shared_workers")

PLAIN = ROOT / "stencils" / "plain"
MANIFEST = yaml.safe_load((PLAIN / "manifest.yaml").read_text())["kernels"]
# (`ci: none`: left to benchmarks/lift_corpus.py --small; `ci: lift`: not tuned here)
CHECKED = {n: e for n, e in MANIFEST.items() if e.get("ci") != "none"}
LIFTED = sorted(n for n, e in CHECKED.items() if e.get("expect", "lift") == "lift")
# Tuned against its original here: one kernel of each kind of original that the check
# serves (doubles; integer elements, 16 and 32 bits, and an output type of their own; a
# vector launch; the zero boundary; a copied rim; a one-sided band; two steps a launch).
# The manifest's other float kernels tune as these do, and star7, hotspot3d and
# rows_first are tuned against their originals by the commands' tests below (the
# padded convolution in test_padded_vec.py, 8-bit ones in test_lift_integer.py).
TUNE_KINDS = (
    "conv_zero_pad",
    "jacobi2d_f64",
    "jacobi_2steps_rim",
    "prewitt_u8_s16",
    "sharpen_s16",
    "smooth_float4",
    "smooth_i32",
    "sobel_x",
    "upwind2_y",
)
TUNED = sorted(n for n in LIFTED if CHECKED[n].get("ci") != "lift" and n in TUNE_KINDS)
REFUSED = sorted(n for n, e in CHECKED.items() if e.get("expect") == "refuse")


# ---------------------------------------------------------------------------------
# Numbers


@pytest.mark.parametrize(
    ("value", "want"),
    [
        (float(np.float32(0.2)), 0.2),
        (float(np.float32(1 / 3)), 1 / 3),
        (float(np.float32(-0.9)), -0.9),
        (0.12345678, 0.1234568),  # float32 cannot tell them apart
        (2.0000001, 2.0),
    ],
)
def test_nice_number_reads_literals_back(value: float, want: float) -> None:
    assert nice_number(value, 4 * 1.2e-7 * abs(value)) == pytest.approx(want, rel=1e-15)


def test_nice_number_keeps_what_rounding_cannot_explain() -> None:
    assert nice_number(0.2001, 1e-7) == 0.2001
    assert nice_number(0.12345678, 1e-15) == 0.12345678
    assert nice_number(1e-9, 1e-8) == 0.0


# ---------------------------------------------------------------------------------
# The algorithm, with a definition's reference as the kernel


def _face(defn: StencilDefinition, shape: tuple[int, ...], extra_ints: int = 0) -> Interface:
    scalars = [ScalarArg(c, defn.dtype, defn.values[c]) for c in defn.coefficients]
    axes = ("x", "y", "z")[: len(shape)]
    sizes = [ScalarArg(f"n{a}", "int32", n, a) for a, n in zip(axes, reversed(shape), strict=True)]
    return Interface(
        label="numpy.cl",
        kernel_name="k",
        shape=shape,
        dtype=defn.dtype,
        fields=defn.fields,
        output=defn.output,
        order=(*defn.fields, defn.output, *defn.coefficients, *(s.name for s in sizes)),
        scalars=(*scalars, *sizes),
    )


def _as_probe(defn: StencilDefinition) -> Any:
    def probe(
        inputs: Mapping[str, np.ndarray], out: np.ndarray, scalars: Mapping[str, float | int]
    ) -> np.ndarray:
        vals = {c: float(scalars[c]) for c in defn.coefficients}
        return defn.reference(dict(inputs), out, vals)

    return probe


def _weights(defn: StencilDefinition, values: Mapping[str, float]) -> dict[Any, float]:
    out: dict[Any, float] = {}
    for t in defn.terms:
        key = (t.field, t.offset)
        out[key] = out.get(key, 0.0) + t.coefficient.value(values)
    return {k: v for k, v in out.items() if v != 0.0}


def _same_stencil(a: StencilDefinition, b: StencilDefinition) -> None:
    vals = dict(a.values)
    wa, wb = _weights(a, vals), _weights(b, vals)
    assert set(wa) == set(wb)
    eps = 1e-5 if a.dtype == "float32" else 1e-12
    for k, v in wa.items():
        assert wb[k] == pytest.approx(v, rel=eps, abs=eps)
    assert b.constant.value(vals) == pytest.approx(a.constant.value(vals), rel=eps, abs=eps)
    if any(a.radius):  # with radius 0 both conventions write every point alike
        assert a.boundary == b.boundary


@st.composite
def definitions(draw: Any) -> tuple[StencilDefinition, tuple[int, ...]]:
    dims = draw(st.sampled_from([2, 3]))
    radius = draw(st.integers(0, 4))
    offsets = draw(
        st.lists(
            st.tuples(*[st.integers(-radius, radius)] * dims), min_size=1, max_size=8, unique=True
        )
    )
    coefs = ["c0", "c1"]
    terms = []
    for off in offsets:
        weight = draw(st.integers(-40, 40).filter(bool)) / 8
        named = draw(st.sampled_from([None, "c0", "c1"]))
        coef: Any = weight if named is None else f"{weight}*{named}"
        terms.append({"field": "src", "offset": list(off), "coefficient": coef})
    if draw(st.booleans()):
        terms.append({"field": "aux", "coefficient": draw(st.sampled_from([0.5, "c1", "-2*c0"]))})
        fields = ["src", "aux"]
    else:
        fields = ["src"]
    data = {
        "name": "rand",
        "dims": dims,
        "dtype": draw(st.sampled_from(["float32", "float64"])),
        "boundary": draw(st.sampled_from(["interior", "clamp"])),
        "fields": fields,
        "output": "dst",
        "coefficients": coefs,
        "terms": terms,
        "constant": draw(st.sampled_from([0, 0.75, "c1", "3*c0"])),
        "values": {"c0": 0.3, "c1": -1.7},
    }
    defn = parse_definition(data, "<random>")
    r = max(defn.radius)
    n = max(12, 4 * r + 5)
    shape = (n, n) if dims == 2 else (max(6, 4 * defn.radius[2] + 5), n, n)
    return defn, shape


@settings(max_examples=40, deadline=None)
@given(definitions())
def test_lifting_a_definition_gives_it_back(case: tuple[StencilDefinition, tuple[int, ...]]):
    defn, shape = case
    lifted, launches = lift_with(_face(defn, shape), _as_probe(defn), name="rand")
    _same_stencil(defn, lifted)
    assert launches < 80


def test_lifted_coefficients_name_the_scalars() -> None:
    defn = parse_definition(
        {
            "dims": 2,
            "fields": ["t", "p"],
            "output": "o",
            "boundary": "clamp",
            "coefficients": ["cc", "ce", "sdc", "amb"],
            "terms": [
                {"field": "t", "coefficient": "cc"},
                {"field": "t", "offset": [1, 0], "coefficient": "ce"},
                {"field": "t", "offset": [-1, 0], "coefficient": "0.5*ce"},
                {"field": "p", "coefficient": "sdc"},
            ],
            "constant": "80*amb*cc",
            "values": {"cc": 0.4, "ce": 0.1, "sdc": 0.3, "amb": 0.2},
        },
        "hot.stencil.yaml",
    )
    lifted, _ = lift_with(_face(defn, (16, 16)), _as_probe(defn), name="hot")
    texts = {(t.field, t.offset): str(t.coefficient) for t in lifted.terms}
    assert texts[("t", (0, 0, 0))] == "cc"
    assert texts[("t", (-1, 0, 0))] == "0.5*ce"
    assert texts[("p", (0, 0, 0))] == "sdc"
    assert lifted.constant.names == ("amb", "cc") and lifted.constant.factor == 80
    assert set(lifted.coefficients) == {"cc", "ce", "sdc", "amb"}


def _numpy_kernel(fn: Any) -> Any:
    def probe(
        inputs: Mapping[str, np.ndarray], out: np.ndarray, scalars: Mapping[str, float | int]
    ) -> np.ndarray:
        a = inputs["src"]
        res = out.copy()
        with np.errstate(divide="ignore", invalid="ignore"):
            res[1:-1, 1:-1] = fn(a, scalars)
        return res

    return probe


def _face_plain(shape: tuple[int, int], scalars: tuple[ScalarArg, ...] = ()) -> Interface:
    order = ("src", "dst", *(s.name for s in scalars))
    return Interface("numpy.cl", "k", shape, "float32", ("src",), "dst", order, scalars)


def _nbrs(a: np.ndarray) -> list[np.ndarray]:
    return [
        a[1 + dy : a.shape[0] - 1 + dy, 1 + dx : a.shape[1] - 1 + dx]
        for dy, dx in [(0, 0), (0, 1), (0, -1), (1, 0), (-1, 0)]
    ]


@pytest.mark.parametrize(
    ("fn", "why"),
    [
        (lambda a, s: np.maximum.reduce(_nbrs(a)), "not linear"),
        (lambda a, s: _nbrs(a)[0] * _nbrs(a)[1], "not linear"),
        (lambda a, s: np.where(_nbrs(a)[0] > 0, _nbrs(a)[1], _nbrs(a)[2]), "not linear"),
        (lambda a, s: _nbrs(a)[1] + _nbrs(a)[3] + (1 + s["c"]), "constant is one product"),
        (lambda a, s: np.sqrt(s["c"]) * _nbrs(a)[1] + _nbrs(a)[3], "integer powers"),
        (lambda a, s: s["c"] ** 3 * _nbrs(a)[1] + _nbrs(a)[3], "integer powers"),
    ],
)
def test_what_is_not_a_stencil_is_refused(fn: Any, why: str) -> None:
    scalars = (ScalarArg("c", "float32", 0.5),)
    with pytest.raises(NotAStencil, match=why) as info:
        lift_with(_face_plain((16, 16), scalars), _numpy_kernel(fn), name="k")
    assert info.value.source == "numpy.cl"


_F32 = np.float32


@pytest.mark.parametrize(
    ("fn", "want"),
    [
        (lambda a, s: _nbrs(a)[1] / s["c"] + _nbrs(a)[3], {(1, 0, 0): ["1/c"]}),
        (lambda a, s: s["c"] * s["c"] * _nbrs(a)[1] + _nbrs(a)[3], {(1, 0, 0): ["c*c"]}),
        (
            lambda a, s: (
                _nbrs(a)[0]
                + _F32(s["d"])
                * _F32(s["c"])
                / (_F32(s["h"]) * _F32(s["h"]))
                * (_nbrs(a)[1] + _nbrs(a)[2] + _nbrs(a)[3] + _nbrs(a)[4] - 4 * _nbrs(a)[0])
            ),
            {(1, 0, 0): ["c*d/(h*h)"], (0, 0, 0): [1, "-4.0*c*d/(h*h)"]},
        ),
        (
            lambda a, s: _nbrs(a)[3] + _F32(s["d"]) / _F32(s["c"]) * (_nbrs(a)[1] + 1.5),
            {(1, 0, 0): ["d/c"], "constant": "1.5*d/c"},
        ),
    ],
)
def test_quotients_and_powers_of_scalars_are_found_exactly(fn: Any, want: Any) -> None:
    """Weights that are products of scalars to powers from -2 to 2 (a scalar divides,
    enters squared) are fitted at several values, snapped and checked at fresh ones."""
    scalars = tuple(ScalarArg(n, "float32", v) for n, v in (("c", 0.5), ("d", 0.3), ("h", 0.1)))
    defn, _ = lift_with(_face_plain((16, 16), scalars), _numpy_kernel(fn), name="k")
    for offset, coefs in want.items():
        if offset == "constant":
            assert defn.constant.text() == coefs
            continue
        got = [t.coefficient.text() for t in defn.terms if t.offset == offset]
        assert sorted(map(str, got)) == sorted(map(str, coefs))
    again = parse_definition(yaml.safe_load(defn.to_yaml()), "k.stencil.yaml")
    assert again == defn
    rng = np.random.default_rng(5)
    a = rng.uniform(-1, 1, (16, 16)).astype(np.float32)
    vals = {"c": 0.7, "d": 1.3, "h": 0.2}
    out = np.zeros_like(a)
    ref = defn.reference({"src": a}, out, {n: vals[n] for n in defn.coefficients})
    np.testing.assert_allclose(ref[1:-1, 1:-1], fn(a, vals), rtol=2e-5, atol=2e-5)


def test_a_weight_that_is_a_sum_of_products_lifts_as_separate_terms() -> None:
    scalars = (ScalarArg("c", "float32", 0.5),)

    def fn(a: np.ndarray, s: Any) -> np.ndarray:
        return (1 + s["c"]) * _nbrs(a)[0] + _nbrs(a)[1] + _nbrs(a)[3]

    defn, _ = lift_with(_face_plain((16, 16), scalars), _numpy_kernel(fn), name="k")
    centre = sorted((t.coefficient.factor, t.coefficient.names) for t in defn.terms if t.is_centre)
    assert centre == [(1.0, ()), (1.0, ("c",))]
    a = np.random.default_rng(3).random((16, 16), dtype=np.float32)
    out = np.zeros_like(a)
    want = out.copy()
    want[1:-1, 1:-1] = fn(a, {"c": np.float32(0.25)})
    got = defn.reference({"src": a}, out, {"c": 0.25})
    np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-6)


def test_position_dependent_output_is_refused() -> None:
    def probe(inputs: Any, out: np.ndarray, scalars: Any) -> np.ndarray:
        res = out.copy()
        a = inputs["src"]
        res[1:-1, 1:-1] = a[1:-1, 1:-1] + np.arange(14, dtype=np.float32)[None, :]
        return res

    with pytest.raises(NotAStencil, match="depends on the position"):
        lift_with(_face_plain((16, 16)), probe, name="k")


def test_an_off_centre_band_is_refused() -> None:
    def probe(inputs: Any, out: np.ndarray, scalars: Any) -> np.ndarray:
        res = out.copy()
        res[1:-1, 1:] = inputs["src"][1:-1, :-1]
        return res

    with pytest.raises(NotAStencil, match="off-centre band"):
        lift_with(_face_plain((16, 16)), probe, name="k")


# ---------------------------------------------------------------------------------
# The kernel's interface (plain-mode descriptions; needs cpp, not OpenCL)


def _plain(tmp_path: Path, body: str, size: list[int], **kw: Any) -> Any:
    from gtune.plain import plain_kernel

    path = tmp_path / "k.cl"
    path.write_text(body)
    return plain_kernel(path, sizes=size, **kw)


@pytest.mark.parametrize(
    ("source", "kw", "why"),
    [
        (
            "__kernel void k(__global float* a) { int i = get_global_id(0); a[i] += 1.0f; }",
            {},
            "read and written",
        ),
        (
            "__kernel void k(__global const float* a, __global float* b, __global float* c)"
            " { int i = get_global_id(0); b[i] = a[i]; c[i] = a[i]; }",
            {},
            "writes 2",
        ),
        (
            "__kernel void k(__global const float* a, __global float* b)"
            " { int i = get_global_id(0); b[i] = a[i + 1]; }",
            {"arrays": {"a": ["NX+1", "NY"]}},
            "padded alike on both sides",
        ),
        (
            "__kernel void k(__global const long* a, __global long* b)"
            " { int i = get_global_id(0); b[i] = a[i]; }",
            {},
            "int64",
        ),
        (
            "__kernel void k(__global const float* a, __global uchar* b)"
            " { int i = get_global_id(0); b[i] = convert_uchar_sat(a[i]); }",
            {},
            "for integer inputs",
        ),
    ],
)
def test_interfaces_a_definition_cannot_express(
    tmp_path: Path, source: str, kw: dict[str, Any], why: str
) -> None:
    kernel = _plain(tmp_path, source, [16, 8], **kw)
    with pytest.raises(InputError, match=why) as info:
        interface(kernel)
    assert "k.cl" in str(info.value.source)


def test_size_scalars_are_size_arguments(tmp_path: Path) -> None:
    kernel = _plain(
        tmp_path,
        "__kernel void k(__global const float* a, __global float* b, int nx, int n, float w)"
        " { int i = get_global_id(0); b[i] = w * a[i]; }",
        [16, 8],
        scalars={"n": "NY", "w": "1/4"},
    )
    face = interface(kernel)
    by = {s.name: s for s in face.scalars}
    assert by["nx"].axis == "x" and by["n"].axis == "y" and by["w"].axis is None
    assert by["w"].value == 0.25 and face.fields == ("a",) and face.output == "b"


# ---------------------------------------------------------------------------------
# Real kernels on OpenCL


def _sizes(text: str) -> list[int]:
    return [int(v) for v in text.split("x")]


def _open_plain(name: str, source: str | None = None) -> Any:
    from gtune.plain import plain_kernel

    entry = MANIFEST[name]
    flags = list(entry["flags"])
    kw: dict[str, Any] = {"scalars": {}, "defines": {}, "arrays": {}}
    while flags:
        flag, value = flags.pop(0), flags.pop(0)
        if flag == "--global":
            kw["global_size"] = [v.strip() for v in _split(value)]
        elif flag == "--default":
            kw["default"] = {k: int(v) for k, v in (p.split("=") for p in value.split(","))}
        elif flag == "--scalar":
            k, v = value.split("=", 1)
            kw["scalars"][k] = v
        elif flag == "--define":
            k, v = value.split("=", 1)
            kw["defines"][k] = v
        elif flag == "--array":  # a shape, x first
            k, v = value.split("=", 1)
            kw["arrays"][k] = v.split(",")
        elif flag == "--kernel-name":  # the file has several kernels
            kw["kernel_name"] = value
        elif flag == "--local":
            kw["local_size"] = [v.strip() for v in _split(value)]
        elif flag == "--param":  # tied to another parameter (BLOCK_X=WX) or its values
            k, v = value.split("=", 1)
            values = [int(p) for p in v.split(",")] if v.replace(",", "").isdigit() else v
            kw.setdefault("params", {})[k] = values
        else:
            raise AssertionError(flag)
    return plain_kernel(PLAIN / (source or entry["source"]), sizes=_sizes(entry["size"]), **kw)


def _pairs(flags: list[str]) -> list[tuple[str, str]]:
    return sorted(zip(flags[::2], flags[1::2], strict=True))


def _split(text: str) -> list[str]:
    parts, depth, cur = [], 0, ""
    for ch in text:
        depth += (ch == "(") - (ch == ")")
        if ch == "," and depth == 0:
            parts.append(cur)
            cur = ""
        else:
            cur += ch
    return [*parts, cur]


@pytest.fixture(scope="module")
def device() -> Any:
    from gtune.measure import select_device

    return select_device(None)


def _original_matches_exactly(
    kernel: Any, defn: StencilDefinition, device: Any, rng: np.random.Generator
) -> None:
    from gtune.measure.lifting import plane_of, run_planes
    from gtune.measure.opencl_evaluator import OpenCLEvaluator

    face = interface(kernel)
    info = np.iinfo(np.dtype(defn.storage))
    inputs = {
        f: rng.integers(info.min, int(info.max) + 1, face.field_shape(f)).astype(defn.storage)
        for f in defn.fields
    }
    if defn.out_integer:  # (the output's own type: short gradients of uchar pixels)
        out_info = np.iinfo(np.dtype(defn.out_storage))
        out0 = rng.integers(out_info.min, int(out_info.max) + 1, face.shape)
    else:  # a float output of integer fields
        out0 = rng.uniform(-300, 300, face.shape)
    out0 = out0.astype(defn.out_storage)
    with OpenCLEvaluator(kernel, device, verify=False, compile_workers=0) as ev:
        plane = plane_of(defn, kernel.sizes)
        got = run_planes(
            ev, kernel.default_config() or {}, {**inputs, defn.output: out0}, None, plane
        )
    assert np.array_equal(got[defn.output], defn.reference(inputs, out0))


def _original_matches(kernel: Any, defn: StencilDefinition, device: Any, seed: int) -> None:
    """The definition's reference against the original kernel on fresh random inputs."""
    from gtune.kernel import scalar_values
    from gtune.measure.lifting import plane_of, run_planes
    from gtune.measure.opencl_evaluator import OpenCLEvaluator

    rng = np.random.default_rng(seed)
    face = interface(kernel)
    t = np.float32 if defn.dtype == "float32" else np.float64
    if defn.storage:  # integer elements: any values of the type, compared bit for bit
        return _original_matches_exactly(kernel, defn, device, rng)
    inputs = {f: rng.uniform(-2, 2, face.field_shape(f)).astype(t) for f in defn.fields}
    weights = {w: rng.uniform(-1, 1, n).astype(t) for w, n in face.weights.items()}
    inputs.update(weights)  # the weights arrays the kernel reads (random, as the tuning's)
    out0 = rng.uniform(-2, 2, face.shape).astype(t)
    if defn.steps > 1:  # the two buffers start alike, as the tuning starts them (copy:)
        out0 = inputs[defn.primary_field].copy()
    cfg = kernel.default_config() or {}
    with OpenCLEvaluator(kernel, device, verify=False, compile_workers=0) as ev:
        plane = plane_of(defn, kernel.sizes)  # launched once per plane?
        got = run_planes(ev, cfg, {**inputs, defn.output: out0}, None, plane)[defn.output]
    values = {c: float(v) for c, v in scalar_values(kernel).items() if c in defn.coefficients}
    values.update(weight_entries(weights))
    ref = defn.reference_steps(inputs, out0, values)  # a launch may be several steps
    tol = defn.tolerance(2.0, values)
    np.testing.assert_allclose(got, ref, rtol=0, atol=tol)
    if defn.boundary == "interior" and defn.rim == "keep":
        below, above = (reversed(m[: face.dims]) for m in defn.margins)  # band: reach too
        edge = np.ones(face.shape, bool)
        inner = tuple(slice(lo, n - hi) for lo, hi, n in zip(below, above, face.shape, strict=True))
        edge[inner] = False
        assert np.array_equal(got[edge], out0[edge])  # the boundary was left alone
    # (a written rim, a copy or a constant, is compared above with the reference's)


@pytest.fixture(scope="module")
def lifted(device: Any, tmp_path_factory: pytest.TempPathFactory) -> Any:
    """``lifted(name)``: the corpus kernel ``name`` lifted (once in the module, by
    whichever test asks first) and its definition written: (definition, path)."""
    from gtune.measure.lifting import lift_kernel

    folder = tmp_path_factory.mktemp("lifted")
    done: dict[str, tuple[StencilDefinition, Path]] = {}

    def lift(name: str) -> tuple[StencilDefinition, Path]:
        if name not in done:
            out = folder / f"{name}.stencil.yaml"
            defn, _ = lift_kernel(
                _open_plain(name),
                device=device,
                output=out,
                flags=MANIFEST[name]["flags"],
                plane_index=MANIFEST[name].get("plane_index"),
                fixed=MANIFEST[name].get("fixed", ()),
            )
            out.write_text(defn.to_yaml())
            done[name] = (defn, out)
        return done[name]

    return lift


@pytest.mark.opencl
@pytest.mark.parametrize("name", LIFTED)
def test_corpus_kernel_lifts_and_matches_its_original(name: str, device: Any, lifted: Any):
    kernel = _open_plain(name)
    defn, out = lifted(name)
    again = load_definition(out)  # what is written reads back as the same stencil
    assert again == defn
    assert again.kernel_name == kernel.name
    assert [a.name for a in again.arguments] == [a.name for a in kernel.arguments]
    assert again.original is not None and _pairs(again.original["flags"]) == _pairs(
        MANIFEST[name]["flags"]
    )
    assert (out.parent / again.original["source"]).resolve() == (
        PLAIN / MANIFEST[name]["source"]
    ).resolve()
    _original_matches(kernel, again, device, seed=7)


@pytest.mark.opencl
@pytest.mark.slow
@pytest.mark.parametrize("name", TUNED)
def test_corpus_kernel_tunes_against_its_original(
    name: str, device: Any, lifted: Any, tmp_path: Path
):
    from gtune import tune
    from gtune.budget import Budget
    from gtune.description import load_kernel
    from gtune.measure import Status
    from gtune.measure.lifting import against_original

    original = _open_plain(name)
    _, out = lifted(name)
    template = load_kernel(out, dict(original.sizes))
    checked = against_original(template, load_definition(out), original, device, tmp_path)
    recorded = tmp_path / Path(str(checked.reference.args["file"])).name
    assert recorded.is_file() and recorded.name.startswith("gtune-original-")
    assert checked.reference.target == "gtune.stencils.reference:recorded_output"
    report = tune(
        checked,
        device=device,
        technique="global",
        # one configuration checked against the original's recorded output: the
        # plumbing (the template's configurations in every technique against a
        # definition's numpy reference: test_definition_opencl.py; this definition's
        # reference against the original: test_corpus_kernel_lifts_and_matches_its_original)
        budget=Budget.parse("1"),
        store="sqlite://",
        compile_workers=0,
        runs=1,
    )
    results = [e.result for run in report.runs for e in run.outcome.trace]
    assert report.best_result is not None and results
    assert all(r.status is Status.OK for r in results), [r.message for r in results]
    assert not any(r.extra.get("unverified") for r in results)


WRONG = sorted(n for n, e in CHECKED.items() if "wrong" in e)


@pytest.mark.opencl
@pytest.mark.parametrize("name", WRONG)
def test_a_wrong_variant_of_a_corpus_kernel_is_caught(
    name: str, device: Any, lifted: Any, tmp_path: Path
):
    """The definition lifted from the right kernel does not accept the wrong variant's
    output as its reference (what tuning against the original checks first)."""
    from gtune.description import load_kernel
    from gtune.measure.lifting import against_original

    wrong = _open_plain(name, MANIFEST[name]["wrong"])
    _, out = lifted(name)
    template = load_kernel(out, dict(wrong.sizes))
    with pytest.raises(InputError, match="does not compute this definition"):
        against_original(template, load_definition(out), wrong, device, tmp_path)


@pytest.mark.opencl
@pytest.mark.parametrize("name", REFUSED)
def test_corpus_kernel_is_refused(name: str, device: Any, tmp_path: Path):
    from gtune.measure.lifting import lift_kernel

    # (an interface lift cannot read at all is an InputError, NotAStencil's base)
    with pytest.raises(InputError, match=MANIFEST[name].get("why", "not linear")) as info:
        lift_kernel(_open_plain(name), device=device, output=tmp_path / "x.stencil.yaml")
    assert str(info.value.source).endswith(MANIFEST[name]["source"])


@pytest.fixture(scope="module")
def hot_cli(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """hotspot3d lifted by ``gtune lift`` (once in the module): the definition's path."""
    out = tmp_path_factory.mktemp("hot_cli") / "hot.stencil.yaml"
    _lift_cli("hotspot3d", out)
    return out


@pytest.mark.opencl
def test_lift_command(hot_cli: Path, tmp_path: Path, gtune_here: Cli) -> None:
    entry = MANIFEST["hotspot3d"]
    defn = load_definition(hot_cli)
    assert defn.boundary == "clamp" and defn.fields == ("power", "temp_in")
    assert defn.constant.names == ("ct",) and defn.constant.factor == 80
    assert defn.original is not None
    assert _pairs(defn.original["flags"]) == _pairs(entry["flags"])  # every plain flag given
    life = MANIFEST["life"]
    done = gtune_here(
        "lift",
        str(PLAIN / life["source"]),
        "--size",
        life["size"],
        *life["flags"],
        "-o",
        str(tmp_path / "life.stencil.yaml"),
    )
    assert done.returncode == 2
    assert "life.cl" in done.stderr and "not linear" in done.stderr
    assert "Traceback" not in done.stderr and len(done.stderr.strip().splitlines()) == 1
    assert not (tmp_path / "life.stencil.yaml").exists()


ROWS_FIRST_3D = """
__kernel void k(__global const float *u, __global float *v, int nx, int ny, int nz)
{
    int i = get_global_id(0), j = get_global_id(1), l = get_global_id(2);
    if (i < 1 || j < 1 || l < 1 || i >= nz - 1 || j >= ny - 1 || l >= nx - 1) return;
    int c = (i * ny + j) * nx + l;
    v[c] = 0.25f * u[c]
         + 0.125f * (u[c - nx * ny] + u[c + nx * ny] + u[c - nx] + u[c + nx] + u[c - 1] + u[c + 1]);
}
"""

OFF_CENTRE = """
__kernel void k(__global const float *u, __global float *v, int nx, int ny)
{
    int x = get_global_id(0), y = get_global_id(1);
    if (x < nx / 2 && y < ny) v[y * nx + x] = u[y * nx + x];
}
"""


@pytest.mark.opencl
def test_lift_turns_a_launch_whose_dimension_0_is_the_row(tmp_path: Path, gtune_here: Cli) -> None:
    """A kernel ported from a C loop nest (get_global_id(0) the slowest axis) writes an
    off-centre box at the default launch; without --global, lift tries the reversed
    launch, says so, and records it in the definition's flags. A kernel that writes an
    off-centre box either way keeps its refusal, with the hint."""
    import subprocess
    import sys

    entry = MANIFEST["rows_first"]
    out = tmp_path / "rows.stencil.yaml"
    done = gtune_here(
        "lift",
        str(PLAIN / entry["source"]),
        "--size",
        entry["size"],
        "--scalar",
        "w=0.2",
        "-o",
        str(out),
    )
    assert done.returncode == 0, done.stderr
    assert "launched --global NX,NY, it writes an off-centre band" in done.stderr
    defn = load_definition(out)
    assert defn.original is not None and defn.original["global"] == ["NY", "NX"]
    assert ("--global", "NY,NX") in _pairs(defn.original["flags"])
    assert defn.boundary == "clamp" and len(defn.terms) == 6
    # the recorded flags run the original again: tuned against it at another size
    ran = gtune_here("run", str(out), "--size", "48x40", "--budget", "2", db=tmp_path / "r.db")
    assert ran.returncode == 0, ran.stderr
    assert "over the original" in ran.stdout + ran.stderr
    # the drop-in kernel against the original (launched as recorded, with no --default:
    # its first configuration) in the documented example
    exported = gtune_here(
        "export", str(out), "--size", "48x40", "-o", str(tmp_path / "t"), db=tmp_path / "r.db"
    )
    assert exported.returncode == 0, exported.stderr
    example = subprocess.run(
        [
            sys.executable,
            str(ROOT / "examples" / "use_tuned_kernel.py"),
            str(tmp_path / "t" / "rows_tuned.json"),
            "--original",
            str(out),
        ],
        capture_output=True,
        text=True,
        env=dict(os.environ, PYTHONPATH=str(ROOT)),
        timeout=300,
    )
    assert example.returncode == 0, example.stdout + example.stderr
    assert "dst: max |tuned - original|" in example.stdout and "(ok)" in example.stdout

    three = tmp_path / "rows3d.cl"
    three.write_text(ROWS_FIRST_3D)
    out3 = tmp_path / "rows3d.stencil.yaml"
    done = gtune_here("lift", str(three), "--size", "16x12x10", "-o", str(out3))
    assert done.returncode == 0, done.stderr
    defn3 = load_definition(out3)
    assert defn3.original is not None and defn3.original["global"] == ["NZ", "NY", "NX"]
    assert defn3.boundary == "interior" and len(defn3.terms) == 7

    off = tmp_path / "off.cl"
    off.write_text(OFF_CENTRE)
    done = gtune_here("lift", str(off), "--size", "16x12", "-o", str(tmp_path / "o.stencil.yaml"))
    assert done.returncode == 2
    assert "off-centre band" in done.stderr and "give --global NY,NX" in done.stderr
    assert "Traceback" not in done.stderr and not (tmp_path / "o.stencil.yaml").exists()
    # tuned as a plain kernel at that launch, the results are unverified, with the hint
    plain = gtune_here(
        "run",
        str(PLAIN / entry["source"]),
        "--size",
        entry["size"],
        "--scalar",
        "w=0.2",
        "--budget",
        "1",  # one result says it: each is unverified
        db=tmp_path / "plain.db",
    )
    assert plain.returncode == 0, plain.stderr
    said = " ".join((plain.stdout + plain.stderr).split())
    assert "UNVERIFIED" in said and "give --global NY,NX" in said
    # a launch the user gave is not second-guessed
    done = gtune_here(
        "lift",
        str(PLAIN / entry["source"]),
        "--size",
        entry["size"],
        "--global",
        "NX,NY",
        "--scalar",
        "w=0.2",
        "-o",
        str(tmp_path / "given.stencil.yaml"),
    )
    assert done.returncode == 2 and "off-centre band" in done.stderr
    assert "give --global" not in done.stderr


# -- random generated kernels -----------------------------------------------------


def _generated_source(
    rng: np.random.Generator, dims: int, dtype: str, boundary: str
) -> tuple[str, dict[Any, float], dict[str, float], bool]:
    """A plain kernel for a random stencil, and the weights it computes (at the scalar
    values returned)."""
    real = "float" if dtype == "float32" else "double"
    suffix = "f" if dtype == "float32" else ""
    radius = [int(rng.integers(0, 5)) for _ in range(dims)]
    n_terms = int(rng.integers(1, 9))
    offsets = {tuple(int(rng.integers(-r, r + 1)) for r in radius) for _ in range(n_terms)}
    scalars = {"c0": 0.375, "c1": -1.25}
    march = dims == 3 and bool(rng.integers(0, 2))
    axes = ["x", "y", "z"][:dims]
    sizes = ["nx", "ny", "nz"][:dims]

    def at(off: tuple[int, ...]) -> str:
        idx = []
        for a, o, n in zip(axes, off, sizes, strict=True):
            e = f"{a} + ({o})"
            idx.append(f"clamp({e}, 0, {n} - 1)" if boundary == "clamp" else f"({e})")
        if dims == 2:
            read = f"src[{idx[1]} * nx + {idx[0]}]"
        else:
            read = f"src[({idx[2]} * ny + {idx[1]}) * nx + {idx[0]}]"
        if boundary != "zero":
            return read
        inside = " && ".join(f"{i} >= 0 && {i} < {n}" for i, n in zip(idx, sizes, strict=True))
        return f"({inside} ? {read} : ({real})0)"  # a tap beyond the edge skipped

    weights: dict[Any, float] = {}
    parts = []
    for off in sorted(offsets):
        w = float(rng.integers(-40, 41) or 1) / 16
        name = ["", "c0", "c1"][int(rng.integers(0, 3))]
        parts.append(f"({real}){w!r}{suffix}" + (f" * {name}" if name else "") + f" * {at(off)}")
        weights[off] = w * (scalars[name] if name else 1.0)
    body = " + ".join(parts)
    centre = "y * nx + x" if dims == 2 else "(z * ny + y) * nx + x"
    if boundary == "interior":
        guard = " || ".join(
            f"{a} < {r} || {a} >= {n} - {r}"
            for a, r, n in zip(axes, [abs(v) for v in _reach(offsets, dims)], sizes, strict=True)
        )
    else:
        guard = " || ".join(f"{a} >= {n}" for a, n in zip(axes, sizes, strict=True))
    args = (
        f"__global const {real}* src, __global {real}* dst, {real} c0, {real} c1, int nx, int ny"
        + (", int nz" if dims == 3 else "")
    )
    if march:
        head = (
            "const int x = get_global_id(0), y = get_global_id(1);\n"
            "    for (int z = 0; z < nz; ++z) {\n"
        )
        tail = "    }\n"
        step = f"        if ({guard}) continue;\n        dst[{centre}] = {body};\n"
    else:
        ids = ", ".join(f"{a} = get_global_id({i})" for i, a in enumerate(axes))
        head = f"const int {ids};\n"
        tail = ""
        step = f"    if ({guard}) return;\n    dst[{centre}] = {body};\n"
    fp64 = "#pragma OPENCL EXTENSION cl_khr_fp64 : enable\n" if dtype == "float64" else ""
    source = f"{fp64}__kernel void gen({args})\n{{\n    {head}{step}{tail}}}\n"
    return source, weights, scalars, march


def _reach(offsets: set[tuple[int, ...]], dims: int) -> list[int]:
    return [max(abs(o[d]) for o in offsets) for d in range(dims)]


@pytest.mark.opencl
@pytest.mark.slow
# Six of the ten seeds the pattern below spans: each boundary in 2D and 3D, each of the
# four pairs of dimensions and element type, a kernel marching along z (seed 9; seeds 1,
# 2, 4 and 7 repeat these pairs).
@pytest.mark.parametrize("seed", [0, 3, 5, 6, 8, 9])
def test_random_generated_kernels_lift(seed: int, device: Any, tmp_path: Path) -> None:
    from gtune.measure.lifting import lift_kernel
    from gtune.plain import plain_kernel

    rng = np.random.default_rng(1000 + seed)
    dims = 2 + seed % 2
    dtype = ["float32", "float64"][(seed // 2) % 2]
    boundary = ["interior", "clamp", "zero"][seed // 4]  # zero: seeds 8, 9
    source, weights, scalars, march = _generated_source(rng, dims, dtype, boundary)
    path = tmp_path / "gen.cl"
    path.write_text(source)
    reach = _reach(set(weights), dims)
    size = [-(-max(12 if d < 2 else 8, 4 * r + 5) // 4) * 4 for d, r in enumerate(reach)]
    kernel = plain_kernel(
        path,
        sizes=size,
        scalars={k: repr(v) for k, v in scalars.items()},
        global_size=["NX", "NY"] if march else None,
        default={"WX": 4, "WY": 2} if not march else {"WX": 4, "WY": 1},
    )
    defn, _ = lift_kernel(kernel, device=device, output=tmp_path / "gen.stencil.yaml")
    got = {t.offset[:dims]: t.coefficient.value(defn.values) for t in defn.terms}
    want = {k: v for k, v in weights.items() if v != 0.0}
    assert set(got) == set(want), source
    for k, v in want.items():
        assert math.isclose(got[k], v, rel_tol=1e-6, abs_tol=1e-7), (k, got[k], v)
    expected = boundary if boundary != "interior" else ("interior" if any(reach) else "clamp")
    if not any(reach):  # the centre alone: every boundary is clamp's
        expected = "clamp"
    assert defn.boundary == expected
    _original_matches(kernel, defn, device, seed=seed)


# -- tuning a lifted definition ---------------------------------------------------


def _lift_cli(name: str, out: Path) -> None:
    """``gtune lift`` in this process (what it says is in the captured output)."""
    from gtune.cli import main

    entry = MANIFEST[name]
    args = ["lift", str(PLAIN / entry["source"]), "--size", entry["size"], *entry["flags"]]
    assert main([*args, "-o", str(out)]) == 0


@pytest.mark.opencl
@pytest.mark.slow
def test_run_on_a_lifted_definition_uses_the_original(
    lifted: Any, tmp_path: Path, gtune_here: Cli
) -> None:
    _, out = lifted("star7")  # (test_lift_command lifts with the command)
    report = tmp_path / "report.json"
    done = gtune_here(
        "run",
        str(out),
        "--size",
        "32x16x16",
        "--budget",
        "2",
        "--technique",
        "global",
        "--runs",
        "3",
        "--json",
        str(report),
        db=tmp_path / "r.db",
    )
    assert done.returncode == 0, done.stderr
    assert "output of the original kernel star7" in done.stderr
    assert "over the original" in done.stdout
    data = json.loads(report.read_text())
    assert data["unverified"] is None
    original = data["original"]
    assert original["original"] == "star7" and original["original_config"] == {"WX": 256, "WY": 1}
    assert original["original_s"] > 0 and original["tuned_s"] > 0
    assert original["speedup"] == pytest.approx(original["original_s"] / original["tuned_s"])
    results = [e for r in data["runs"] for e in r["outcome"]["trace"]]
    assert results and all(r["status"] == "ok" for r in results)


@pytest.mark.opencl
def test_an_edited_lifted_definition_no_longer_matches_its_original(
    lifted: Any, tmp_path: Path, gtune_here: Cli
) -> None:
    _, lifted_path = lifted("jacobi2d")
    out = lifted_path.with_name("jacobi.stencil.yaml")  # beside it: its original's path holds
    data = yaml.safe_load(lifted_path.read_text())
    data["terms"][0]["coefficient"] = 0.3
    out.write_text(yaml.safe_dump(data, sort_keys=False))
    done = gtune_here("run", str(out), "--size", "32x32", "--budget", "2", db=tmp_path / "r.db")
    assert done.returncode == 2
    assert (
        "jacobi.stencil.yaml" in done.stderr and "does not compute this definition" in done.stderr
    )
    assert "Traceback" not in done.stderr


def test_original_flags_are_checked(tmp_path: Path) -> None:
    from gtune.commands._plain import original_kernel

    data = {
        "dims": 2,
        "fields": ["A"],
        "output": "B",
        "terms": [{"field": "A", "coefficient": 1}],
        "original": {"source": "nowhere.cl", "kernel": "k", "flags": ["--bogus", "1"]},
    }
    defn = parse_definition(data, str(tmp_path / "k.stencil.yaml"))
    with pytest.raises(InputError, match=r"original\.flags: not a plain-kernel flag: --bogus"):
        original_kernel(defn, {"NX": 8, "NY": 8})
    data["original"]["flags"] = []
    defn = parse_definition(data, str(tmp_path / "k.stencil.yaml"))
    with pytest.raises(InputError, match="file not found"):
        original_kernel(defn, {"NX": 8, "NY": 8})


@pytest.mark.opencl
def test_lift_without_a_shipped_launch_uses_the_first_configuration(
    device: Any, tmp_path: Path
) -> None:
    from gtune.measure.lifting import lift_kernel
    from gtune.plain import plain_kernel

    blur = ROOT / "tests" / "data" / "plain_blur.cl"
    kernel = plain_kernel(blur, sizes=[32, 16], scalars={"scale": "1/9"})
    defn, _ = lift_kernel(kernel, device=device, output=tmp_path / "blur.stencil.yaml")
    assert defn.original is not None and defn.original["local"] == [1, 1]
    assert len(defn.terms) == 9 and defn.coefficients == ("scale",)
    assert all(str(t.coefficient) == "scale" for t in defn.terms)


@pytest.mark.opencl
@pytest.mark.slow
def test_plain_kernel_to_drop_in_tuned_kernel(
    hot_cli: Path, tmp_path: Path, gtune_here: Cli
) -> None:
    """lift -> run -> export -> the documented example, which checks the exported kernel
    against the original plain kernel on fresh data, at the tuned size and a larger one."""

    out = hot_cli  # lifted by the command
    db = tmp_path / "r.db"
    size = "64x16x8"
    ran = gtune_here("run", str(out), "--size", size, "--budget", "2", "--runs", "3", db=db)
    assert ran.returncode == 0, ran.stderr
    exported = gtune_here("export", str(out), "--size", size, "-o", str(tmp_path / "t"), db=db)
    assert exported.returncode == 0, exported.stderr
    tuned = tmp_path / "t" / "hot_tuned.json"
    assert json.loads(tuned.read_text())["kernel"] == "hotspot3d"
    for extra in ([], ["--size", "128x32x16"]):
        done = run_tuned_example(tuned, "--original", str(out), *extra)
        assert done.returncode == 0, done.stdout + done.stderr
        assert "temp_out: max |tuned - original|" in done.stdout and "(ok)" in done.stdout

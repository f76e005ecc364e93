"""Lifting kernels whose interface is written as image and PDE codes write it: an input
read through a pointer declared from it (``__global const float *p = in + ...``), a
padded input whose row pitch is an argument (``in_pitch = NX+2``), a pitch aligned to
16 (refused: its pad is not constant), 8-bit pixels with a float mask or a fixed-point
``short`` mask the host fills, and the refusals that say what a definition takes
instead (an output's shape, a weights array's, a struct)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from gtune.clsource import array_uses
from gtune.exceptions import InputError
from gtune.stencils.definition import StencilDefinition, load_definition
from gtune.stencils.lift import Interface, interface, with_weights
from tests.inprocess import Cli
from tests.stencils.plain_helpers import PLAIN, open_corpus, plain_from_text

# evaluators share the session's worker processes (tests/conftest.py)
pytestmark = pytest.mark.usefixtures("shared_workers")

PITCH_FLAGS = (
    "--array", "in=NX+2,NY+2", "--scalar", "width=NX", "--scalar", "height=NY",
    "--scalar", "in_pitch=NX+2", "--scalar", "inv_h2=4.0", "--default", "WX=8,WY=4",
)  # fmt: skip
MASK_FLAGS = ("--array", "mask=9", "--scalar", "w=NX", "--scalar", "h=NY", "--default", "WX=8,WY=4")
BINOMIAL = "0.0625,0.125,0.0625,0.125,0.25,0.125,0.0625,0.125,0.0625"


def _face(source: str, size: str, *flags: str) -> Interface:
    """The lifting interface of a corpus kernel, from the command line's flags."""
    return interface(open_corpus(source, size, *flags))


# ---------------------------------------------------------------------------------
# How the body uses a pointer (no preprocessor, no OpenCL)


@pytest.mark.parametrize(
    ("body", "name", "read", "written"),
    [
        # a row pointer declared from the input: its declarator is no write
        ("__global const float *p = in + y * nx + x; out[0] = p[-1] + p[1];", "in", True, False),
        ("__global float *p = in + y * nx; out[0] = p[1];", "in", True, False),
        ("__global float * const p = &in[off]; x = p[2];", "in", True, False),
        ("for (__global float *p = a; p < e; p++) s += *p;", "a", True, False),
        # written through such a pointer: written
        ("__global float *q = out + y * nx; q[x] = 1.0f;", "out", False, True),
        # later declarators of one declaration, each followed on its own
        ("__global float *p = out + 1, *q = in + 2; *p = q[0];", "in", True, False),
        ("__global float *p = out + 1, *q = in + 2; *p = q[0];", "out", False, True),
        # a store through a pointer is no declaration: what it stores is read
        ("*out = in[0];", "in", True, False),
        ("*out = in[0];", "out", False, True),
        ("float v = c * in[i];", "in", True, False),
        # a byte buffer dereferenced through a cast (OpenCV's loadpix and storepix)
        ("*(__global float *)(dst + mad24(y, step, x * 4)) = v;", "dst", False, True),
        ("float v = *(__global const float *)(src + y * step);", "src", True, False),
        ("*(__global float *)(dst + o) += v;", "dst", True, True),
    ],
)
def test_a_pointer_declared_from_an_array_is_followed_not_written(
    body: str, name: str, read: bool, written: bool
) -> None:
    use = array_uses(body, name)
    assert (use.read, use.written) == (read, written), use.evidence


def test_a_pointer_to_const_is_an_input_whatever_the_body_seems_to_do(tmp_path: Path) -> None:
    """An array handed to a function plain mode cannot see into may be written; one
    declared ``const`` cannot be (without a cast): it is an input, saying why."""
    body = "{ int i = get_global_id(0); out[i] = ext_read(in, i); }"
    kernel = plain_from_text(
        tmp_path, f"__kernel void k(__global const float *in, __global float *out) {body}", [16, 8]
    )
    roles = {a.name: a.role for a in kernel.arguments}
    assert roles == {"in": "input", "out": "output"}
    assert any("in: input" in n and "a pointer to const data" in n for n in kernel.inferred)
    loose = plain_from_text(
        tmp_path, f"__kernel void k(__global float *in, __global float *out) {body}", [16, 8]
    )
    assert {a.name: a.role for a in loose.arguments}["in"] == "inout"


@pytest.mark.parametrize(
    ("param", "says"),
    [
        # (a __local buffer lifts with its length: tests/stencils/test_lift_local_args.py)
        ("const params_t p", "gtune passes no structs"),
    ],
)
def test_what_lift_cannot_take_is_said_with_what_to_do(
    tmp_path: Path, param: str, says: str
) -> None:
    source = (
        "typedef struct { float dt; float dx; } params_t;\n"
        f"__kernel void k(__global const float *in, __global float *out, {param})"
        " { int i = get_global_id(0); out[i] = in[i]; }"
    )
    with pytest.raises(InputError, match=says) as info:
        plain_from_text(tmp_path, source, [16, 8])
    text = info.value.render()
    assert "k.cl" in text and "description" in text and "lift a copy" in text


# ---------------------------------------------------------------------------------
# The lifting interface (the preprocessor, no OpenCL)


def test_weights_arrays_keep_their_own_element_type() -> None:
    """uchar pixels with a float mask, or with a short one: the fields are uint8, each
    weights array keeps its type apart (no "mix element types")."""
    for source, wtype in (("conv_u8_fmask.cl", "float32"), ("conv_u8_fixed.cl", "int16")):
        face = _face(source, "24x16", *MASK_FLAGS)
        assert (face.dtype, face.fields, face.output) == ("uint8", ("src",), "dst")
        assert face.weights == {"mask": 9} and face.weight_types == {"mask": wtype}
        entries = [s for s in face.scalars if s.entry_of == "mask"]
        assert len(entries) == 9 and all(float(s.value) > 0 for s in entries)


def test_integer_weights_take_whole_numbers() -> None:
    face = _face("conv_u8_fixed.cl", "24x16", *MASK_FLAGS)
    with pytest.raises(InputError, match="mask is an array of short: its values are whole"):
        with_weights(face, {"mask": [0.5] * 9})
    fixed = with_weights(face, {"mask": [1, 2, 1, 2, 4, 2, 1, 2, 1]})
    assert [s.value for s in fixed.scalars if s.entry_of][4] == 4


def test_a_pitch_that_is_the_padded_row_is_recognised() -> None:
    """``in_pitch = NX+2`` with ``--array in=NX+2,NY+2`` is in's stored row at every
    size: a pitch, held at it (no --fixed), and the definition's doc will say so."""
    face = _face("laplace_halo_pitch.cl", "16x12", *PITCH_FLAGS)
    assert face.pads == {"in": (1, 1)}
    pitch = next(s for s in face.scalars if s.name == "in_pitch")
    assert pitch.pitch == "the padded row length of in, NX+2" and pitch.value == 18
    other = list(PITCH_FLAGS)
    other[other.index("in_pitch=NX+2")] = "in_pitch=NX+4"  # no row of in: not a pitch
    assert not next(s for s in _face("laplace_halo_pitch.cl", "16x12", *other).scalars
                    if s.name == "in_pitch").pitch  # fmt: skip


SHAPE_SOURCE = (
    "__kernel void k(__global const float *in, __constant float *mask, __global float *out,"
    " int nx) { int x = get_global_id(0), y = get_global_id(1);"
    " out[y * nx + x] = mask[0] * in[y * nx + x]; }"
)
SHORT_MASK = SHAPE_SOURCE.replace("__constant float *mask", "__constant short *mask")


@pytest.mark.parametrize(
    ("source", "arrays", "says", "not_says"),
    [
        (  # an output of another shape: no pad is suggested
            SHAPE_SOURCE,
            {"mask": ["9"], "out": ["NX+2", "NY+2"]},
            "a definition's output is an array of the problem's shape (--array out=NX,NY",
            "pad",
        ),
        (  # a filter given in two dimensions
            SHAPE_SOURCE,
            {"mask": ["3", "3"]},
            "a weights array is one-dimensional: --array mask=9",
            None,
        ),
        (  # a pitch aligned to 16: at 14x12 it is NX+2, at 15x15 NX+17
            SHAPE_SOURCE,
            {"mask": ["9"], "in": ["(NX+2+15)/16*16", "NY+2"]},
            "the shape of in, (NX+2+15)/16*16, is not the size plus a constant pad",
            None,
        ),
        (  # float fields with an integer filter
            SHORT_MASK,
            {"mask": ["9"]},
            "an integer weights array is lifted with integer fields",
            None,
        ),
    ],
)
def test_shapes_and_types_a_definition_cannot_take_are_refused_saying_what_fits(
    tmp_path: Path, source: str, arrays: dict[str, list[str]], says: str, not_says: str | None
) -> None:
    kernel = plain_from_text(tmp_path, source, [14, 12], arrays=arrays, scalars={"nx": "NX"})
    with pytest.raises(InputError) as info:
        interface(kernel)
    assert says in info.value.message and "k.cl" in str(info.value.source)
    if not_says:
        assert not_says not in info.value.message


def test_a_padded_array_read_and_written_is_refused_for_that(tmp_path: Path) -> None:
    """Read and written: the reason, not its shape (a pad is an input's)."""
    source = (
        "__kernel void k(__global float *u, __global float *v, int nx)"
        " { int i = get_global_id(0); u[i] += 1.0f; v[i] = u[i + 1]; }"
    )
    kernel = plain_from_text(
        tmp_path, source, [14, 12], arrays={"u": ["NX+2", "NY+2"]}, scalars={"nx": "NX"}
    )
    with pytest.raises(InputError, match="array u is read and written"):
        interface(kernel)


# ---------------------------------------------------------------------------------
# Real lifts on OpenCL


def _matches_original(path: Path, size: list[int], seed: int = 3) -> None:
    """The definition's reference against its original, run at ``size`` from the
    definition's ``original:`` (as ``gtune run`` runs it), on fresh random data."""
    from gtune.commands._plain import original_kernel
    from gtune.measure import select_device
    from gtune.measure.opencl_evaluator import OpenCLEvaluator

    defn: StencilDefinition = load_definition(path)
    kernel = original_kernel(defn, dict(zip(("NX", "NY", "NZ"), size, strict=False)))
    face = interface(kernel)
    rng = np.random.default_rng(seed)
    inputs: dict[str, np.ndarray] = {}
    for f in defn.fields:
        if defn.storage:  # any value of the type
            top = int(np.iinfo(np.dtype(defn.storage)).max)
            inputs[f] = rng.integers(0, top + 1, face.field_shape(f)).astype(defn.storage)
        else:
            inputs[f] = rng.uniform(-2, 2, face.field_shape(f)).astype(defn.dtype)
    weights = {w: np.array(v, np.float64) for w, v in defn.weights.items()}  # the recorded
    out0 = np.zeros(face.shape, defn.out_storage)
    ev = OpenCLEvaluator(kernel, select_device(None), verify=False, compile_workers=0)
    try:
        got = ev.run_once(kernel.default_config() or {}, {**inputs, **weights, defn.output: out0})
    finally:
        ev.close()
    want = defn.reference(inputs, out0)
    if defn.storage:
        assert np.array_equal(got[defn.output], want)
    else:
        np.testing.assert_allclose(got[defn.output], want, rtol=1e-5, atol=1e-4)


@pytest.mark.opencl
def test_a_padded_input_read_through_a_row_pointer_lifts(tmp_path: Path, gtune_here: Cli) -> None:
    """No --role, no --fixed: the input is read only, padded by 1, its pitch a size
    expression the doc names; the original at another size (its pitch NX+2 there)
    matches the definition."""
    out = tmp_path / "halo.stencil.yaml"
    kernel = str(PLAIN / "laplace_halo_pitch.cl")
    done = gtune_here("lift", kernel, "--size", "16x12", *PITCH_FLAGS, "-o", str(out))
    assert done.returncode == 0, done.stderr
    defn = load_definition(out)
    assert defn.pads["in"][:2] == (1, 1) and len(defn.terms) == 5
    pitch = next(a for a in defn.arguments if a.name == "in_pitch")
    assert pitch.kind == "ignored"
    assert "in_pitch is the padded row length of in, NX+2" in defn.doc
    assert defn.original is not None and "fixed" not in defn.original
    _matches_original(out, [24, 16])


@pytest.mark.opencl
def test_an_aligned_pitch_is_refused_where_it_looks_padded(tmp_path: Path, gtune_here: Cli) -> None:
    """At 14x12 the aligned row (NX+2+15)/16*16 is NX+2, a pad of 1 at that size only:
    refused, naming the expression, not lifted as a pad it does not keep."""
    flags = list(PITCH_FLAGS)
    flags[flags.index("in=NX+2,NY+2")] = "in=(NX+2+15)/16*16,NY+2"
    flags[flags.index("in_pitch=NX+2")] = "in_pitch=(NX+2+15)/16*16"
    flags[flags.index("WX=8,WY=4")] = "WX=2,WY=4"
    out = tmp_path / "aligned.stencil.yaml"
    kernel = str(PLAIN / "laplace_halo_pitch.cl")
    done = gtune_here("lift", kernel, "--size", "14x12", *flags, "-o", str(out))
    assert done.returncode == 2 and "Traceback" not in done.stderr and not out.exists()
    assert "(NX+2+15)/16*16, is not the size plus a constant pad" in done.stderr
    assert "depends on alignment is not supported" in done.stderr


@pytest.mark.opencl
def test_8bit_pixels_with_a_float_mask_lift(tmp_path: Path, gtune_here: Cli) -> None:
    """uchar pixels, a float mask given and fixed: each weight is the mask's entry."""
    out = tmp_path / "fmask.stencil.yaml"
    kernel = str(PLAIN / "conv_u8_fmask.cl")
    args = ("--weights", f"mask={BINOMIAL}", "--weights-fixed")
    done = gtune_here("lift", kernel, "--size", "24x16", *MASK_FLAGS, *args, "-o", str(out))
    assert done.returncode == 0, done.stderr
    defn = load_definition(out)
    assert (defn.storage, defn.convert, defn.weights_fixed) == ("uint8", "rte_sat", True)
    assert [t.coefficient.names for t in defn.terms] == [(f"mask[{i}]",) for i in range(9)]
    assert {t.coefficient.factor for t in defn.terms} == {1.0}
    _matches_original(out, [40, 12])


@pytest.mark.opencl
def test_8bit_pixels_with_a_short_mask_lift_with_the_mask_baked_in(
    tmp_path: Path, gtune_here: Cli
) -> None:
    """(sum of mask[k] * pixel + 8) >> 4 with a short mask: each weight is 1/16 of its
    entry, rounded half up; the template reads weights as float, so the short mask's
    values are baked in (weights_fixed) even without --weights-fixed, and the doc says
    why."""
    out = tmp_path / "fixed.stencil.yaml"
    kernel = str(PLAIN / "conv_u8_fixed.cl")
    args = ("--weights", "mask=1,2,1,2,4,2,1,2,1")
    done = gtune_here("lift", kernel, "--size", "24x16", *MASK_FLAGS, *args, "-o", str(out))
    assert done.returncode == 0, done.stderr
    defn = load_definition(out)
    assert (defn.storage, defn.convert, defn.weights_fixed) == ("uint8", "half_up_sat", True)
    assert {t.coefficient.factor for t in defn.terms} == {0.0625}
    assert defn.weights == {"mask": (1.0, 2.0, 1.0, 2.0, 4.0, 2.0, 1.0, 2.0, 1.0)}
    assert "holds short" in defn.doc and "weights_fixed" in defn.doc
    _matches_original(out, [40, 12])

"""``uint`` (uint32) elements and vector scalar arguments (``uint2 inputDimensions``), as
the AMD APP SDK's image samples write them: plain mode reads a vector's lanes from
``--scalar dims=NX,NY``, lift recognises lanes that are sizes (``size: [x, y]``) and holds
the others (``--fixed``), and the tuned kernel keeps the original's signature. The corpus
kernels are ``stencils/plain/conv_u32_mask.cl`` and ``conv_u32_dims.cl``."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import yaml

from gtune.exceptions import InputError
from gtune.kernel import scalar_values
from gtune.stencils.definition import parse_definition
from gtune.stencils.elements import store_macro, to_storage
from gtune.stencils.lift import Interface, NotAStencil, ScalarArg, interface, lift_with
from tests.conftest import run_tuned_example
from tests.inprocess import Cli
from tests.stencils.plain_helpers import lift_run_export, plain_from_text

# evaluators share the session's worker processes (tests/conftest.py)
pytestmark = pytest.mark.usefixtures("shared_workers")

DIMS = """
__kernel void k(__global uint *out, __global const uint *in, const uint2 dims, const int2 m)
{
    const uint tid = get_global_id(0);
    if (tid < dims.x * dims.y)
        out[tid] = in[tid] + (uint)m.x;
}
"""
BOX = [{"field": "src", "offset": [dx, 0], "coefficient": 0.25} for dx in (-1, 1)] + [
    {"field": "src", "coefficient": 0.5}
]


def _face(shape: tuple[int, int] = (20, 24)) -> Interface:
    sizes = (ScalarArg("nx", "uint32", shape[1], "x"), ScalarArg("ny", "uint32", shape[0], "y"))
    order = ("src", "dst", "nx", "ny")
    return Interface("numpy.cl", "k", shape, "uint32", ("src",), "dst", order, sizes)


def _definition(convert: str, terms: Any) -> Any:
    data = {
        "name": "k",
        "dims": 2,
        "dtype": "float32",
        "boundary": "clamp",
        "fields": ["src"],
        "output": "dst",
        "storage": "uint32",
        "convert": convert,
        "terms": terms,
    }
    return parse_definition(data, "k.stencil.yaml")


# ---------------------------------------------------------------------------------
# uint32 elements (numpy kernels)


def test_uint32_conversions_round_and_saturate_as_opencl_does() -> None:
    acc = np.array([-3.0, 0.5, 1.5, 2.0**20 + 0.5, 5e9], np.float32)
    assert to_storage(acc, "uint32", "half_up_sat").tolist() == [0, 1, 2, 2**20 + 1, 2**32 - 1]
    assert to_storage(acc, "uint32", "rte_sat").tolist() == [0, 0, 2, 2**20, 2**32 - 1]
    assert store_macro("uint32", "half_up_sat", "float") == (
        "#define STORE(v) convert_uint_sat((v) + 0.5f)"
    )


@pytest.mark.parametrize("convert", ["half_up_sat", "rte_sat", "rtz_sat"])
def test_a_uint32_kernel_lifts_to_its_weights_and_rounding(convert: str) -> None:
    kernel = _definition(convert, BOX)

    def probe(inputs: Any, out: np.ndarray, scalars: Any) -> np.ndarray:
        return np.asarray(kernel.reference(dict(inputs), out))

    lifted, _ = lift_with(_face(), probe, name="k")
    assert (lifted.storage, lifted.convert) == ("uint32", convert)
    assert sorted((t.offset, t.coefficient.factor) for t in lifted.terms) == sorted(
        (t.offset, t.coefficient.factor) for t in kernel.terms
    )


def test_a_negative_weight_stored_as_uint_without_saturation_is_refused() -> None:
    """``(uint)(sum + 0.5f)`` of a negative sum is undefined in OpenCL C (it wraps on
    CPUs): refused, naming the negative weight and the clamp that makes it lift."""
    sharpen = [{"field": "src", "coefficient": 1.5}] + [
        {"field": "src", "offset": o, "coefficient": -0.25} for o in ([1, 0], [-1, 0])
    ]
    kernel = _definition("half_up_sat", sharpen)

    def wraps(inputs: Any, out: np.ndarray, scalars: Any) -> np.ndarray:
        a = np.pad(inputs["src"].astype(np.float32), ((0, 0), (1, 1)), mode="edge")
        s = np.float32(1.5) * a[:, 1:-1] - np.float32(0.25) * (a[:, 2:] + a[:, :-2])
        return np.trunc(s + np.float32(0.5)).astype(np.int64).astype(np.uint32)

    assert kernel.storage == "uint32"
    with pytest.raises(NotAStencil) as info:
        lift_with(_face(), wraps, name="k")
    assert "a negative float to an unsigned type" in info.value.message
    assert "convert_uint_sat" in info.value.message


# ---------------------------------------------------------------------------------
# Vector scalars: plain mode, the interface, the definition (no OpenCL)


def test_a_vector_scalar_takes_its_lanes_from_scalar(tmp_path: Path) -> None:
    kernel = plain_from_text(
        tmp_path, DIMS, [32, 24], global_size=["NX*NY"], scalars={"dims": "NX,NY", "m": "3,-1"}
    )
    dims, m = kernel.arguments[2], kernel.arguments[3]
    assert (dims.dtype, [e.text for e in dims.lanes], dims.value) == ("uint32", ["NX", "NY"], None)
    assert (m.dtype, [e.text for e in m.lanes]) == ("int32", ["3", "-1"])
    values = scalar_values(kernel)
    assert {k: values[k] for k in ("dims.x", "dims.y", "m.x", "m.y")} == {
        "dims.x": 32,
        "dims.y": 24,
        "m.x": 3,
        "m.y": -1,
    }
    face = interface(kernel)
    lanes = {s.name: (s.axis, s.lane_of) for s in face.scalars}
    assert lanes["dims.x"] == ("x", "dims") and lanes["dims.y"] == ("y", "dims")
    assert lanes["m.x"] == (None, "m")


@pytest.mark.parametrize(
    ("scalars", "why"),
    [
        ({"m": "3,3"}, r"'dims' \(uint2\).*give its 2 lanes.*--scalar dims=NX,NY"),
        ({"dims": "NX", "m": "3,3"}, r"dims is a uint2: give its 2 lanes.*got 1"),
    ],
)
def test_a_vector_scalar_without_its_lanes_names_the_flag(
    tmp_path: Path, scalars: dict[str, str], why: str
) -> None:
    with pytest.raises(InputError, match=why):
        plain_from_text(tmp_path, DIMS, [32, 24], global_size=["NX*NY"], scalars=scalars)


def test_vector_arguments_of_a_definition_round_trip() -> None:
    data = _definition("half_up_sat", BOX).to_dict()
    data["kernel"] = {
        "name": "k",
        "arguments": [
            "dst",
            "src",
            {"name": "dims", "type": "uint2", "size": ["x", "y"]},
            {"name": "m", "type": "uint2", "ignored": True, "value": [3, 3]},
        ],
    }
    d = parse_definition(data, "k.stencil.yaml")
    assert d.arguments[2].size_value == ["NX", "NY"] and d.arguments[3].value == (3, 3)
    assert parse_definition(d.to_dict(), "k.stencil.yaml").arguments == d.arguments
    data["kernel"]["arguments"][2]["size"] = "x"
    with pytest.raises(InputError, match=r"a uint2 takes a list of 2 axes"):
        parse_definition(data, "k.stencil.yaml")


# ---------------------------------------------------------------------------------
# On PoCL: lift -> run -> export -> the exported kernel against the original


@pytest.mark.opencl
@pytest.mark.slow
def test_a_uint32_convolution_to_a_drop_in_tuned_kernel_bit_for_bit(
    tmp_path: Path, gtune_here: Cli
) -> None:
    out, tuned = lift_run_export("conv_u32_mask", tmp_path, gtune_here)
    d = yaml.safe_load(out.read_text())
    assert (d["storage"], d["convert"], d["boundary"]) == ("uint32", "half_up_sat", "zero")
    check = run_tuned_example(tuned, "--original", str(out))
    assert check.returncode == 0, check.stdout + check.stderr
    assert "max |tuned - original| = 0 (ok)" in check.stdout


@pytest.mark.opencl
@pytest.mark.slow
def test_uint2_size_arguments_keep_the_originals_signature(tmp_path: Path, gtune_here: Cli) -> None:
    """The AMD SDK style: sizes as ``uint2 inputDimensions`` (lanes NX, NY: a vector of
    sizes) and ``uint2 maskDimensions`` (held at 3x3); the exported kernel takes both,
    launched with the original's arguments, bit for bit."""
    out, tuned = lift_run_export("conv_u32_dims", tmp_path, gtune_here)
    arguments = yaml.safe_load(out.read_text())["kernel"]["arguments"]
    assert arguments[3:] == [
        {"name": "inputDimensions", "type": "uint2", "size": ["x", "y"]},
        {"name": "maskDimensions", "type": "uint2", "ignored": True, "value": [3, 3]},
    ]
    exported = json.loads(tuned.read_text())
    assert "const uint2 inputDimensions" in exported["source"]
    assert [a["value"] for a in exported["arguments"][3:]] == [["NX", "NY"], ["3", "3"]]
    for extra in ([], ["--size", "128x40"]):  # another size: the lanes follow it
        check = run_tuned_example(tuned, "--original", str(out), *extra)
        assert check.returncode == 0, check.stdout + check.stderr
        assert "max |tuned - original| = 0 (ok)" in check.stdout

"""Lift's refusals and steps where the weights are run-time scalars: a launch of several
time steps of a stencil whose weights are scalars (``r``, ``1 - 4*r``) lifts with
``steps: k`` and keeps its scalars; one that cannot (two fields, too many products of
scalars) says so; and an integer kernel whose sum at the type's extremes is neither
clamped nor wrapped is refused as no linear stencil, not as a wrapping conversion."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest
import yaml

from gtune.stencils.definition import parse_definition
from gtune.stencils.lift import Interface, NotAStencil, ScalarArg, lift_with
from gtune.stencils.lift_steps import kth_root, power
from tests.conftest import ROOT
from tests.inprocess import Cli

# evaluators share the session's worker processes (tests/conftest.py)
pytestmark = pytest.mark.usefixtures("shared_workers")

EPS32 = float(np.finfo(np.float32).eps)
PLAIN = ROOT / "stencils" / "plain"
AROUND = ([1, 0], [-1, 0], [0, 1], [0, -1])


def _heat(steps: int, boundary: str) -> Any:
    """u' = u + r (sum of the four neighbours - 4 u): ``1`` and ``-4*r`` at the centre."""
    data = {
        "name": "k",
        "dims": 2,
        "dtype": "float32",
        "boundary": boundary,
        "fields": ["u"],
        "output": "v",
        "coefficients": ["r"],
        "values": {"r": 0.2},
        "steps": steps,
        "terms": [
            {"field": "u", "coefficient": 1},
            {"field": "u", "coefficient": "-4*r"},
            *({"field": "u", "offset": o, "coefficient": "r"} for o in AROUND),
        ],
    }
    return parse_definition(data, "k.stencil.yaml")


def _face(fields: tuple[str, ...], floats: dict[str, float], shape: tuple[int, int]) -> Interface:
    sizes = (ScalarArg("nx", "int32", shape[1], "x"), ScalarArg("ny", "int32", shape[0], "y"))
    scalars = sizes + tuple(ScalarArg(n, "float32", v) for n, v in floats.items())
    order = (*fields, "v", "nx", "ny", *floats)
    return Interface("numpy.cl", "k", shape, "float32", fields, "v", order, scalars)


def _terms(definition: Any) -> list[tuple[Any, ...]]:
    return sorted(
        (t.offset, t.coefficient.factor, t.coefficient.names, t.coefficient.divisors)
        for t in definition.terms
    )


def test_the_kth_root_of_a_stencil_whose_weights_are_products_of_scalars() -> None:
    """Keys (y, x, power of r, power of c): the one-step heat stencil with a weight
    ``c/r`` at one neighbour, squared and cubed, gives itself back."""
    s: dict[tuple[int, ...], float] = {(0, 0, 0, 0): 1.0, (0, 0, 1, 0): -4.0}
    s |= {(0, 1, 1, 0): 1.0, (0, -1, 1, 0): 1.0, (1, 0, 1, 0): 1.0, (-1, 0, -1, 1): 0.5}
    for k in (2, 3):
        assert kth_root(power(s, k), k, EPS32, spatial=2) == s
    # a composite whose scalar powers are odd is no square
    assert kth_root({(0, 0, 1): 1.0, (0, 1, 1): 0.5, (0, 2, 1): 0.25}, 2, EPS32, spatial=2) is None


def _heat_probe(kernel: Any) -> Any:
    def probe(inputs: Any, out: np.ndarray, scalars: Any) -> np.ndarray:
        return np.asarray(kernel.reference_steps(dict(inputs), out, {"r": scalars["r"]}))

    return probe


def test_clamped_steps_of_a_scalar_stencil_lift_with_steps_and_keep_the_scalar() -> None:
    kernel = _heat(2, "clamp")
    got, _ = lift_with(_face(("u",), {"r": 0.2}, (24, 28)), _heat_probe(kernel), name="k")
    assert got.steps == 2 and got.coefficients == ("r",)
    assert _terms(got) == _terms(kernel)


def test_three_steps_of_a_scalar_stencil_say_what_lifts() -> None:
    """Three steps: r enters the composite cubed, beyond the powers lift reads; the
    refusal says the launch looks like three steps, and that it lifts with r a number."""
    face = _face(("u",), {"r": 0.2}, (24, 28))
    with pytest.raises(NotAStencil) as info:
        lift_with(face, _heat_probe(_heat(3, "clamp")), name="k")
    why = str(info.value)
    assert "one launch looks like 3 time steps of a 5-point stencil" in why
    assert "weights of the scalar r become sums of more products, or of higher powers" in why
    assert "written as numbers in the kernel" in why and "(steps: 3)" in why


def test_steps_with_a_fixed_rim_and_a_scalar_lift_as_interior_steps() -> None:
    """Two heat steps fused as a C loop over two buffers writes them: the first step
    recomputed at the neighbours (the rim the input's), the second written inside."""
    one = _heat(1, "interior")

    def probe(inputs: Any, out: np.ndarray, scalars: Any) -> np.ndarray:
        u, vals = np.asarray(inputs["u"]), {"r": scalars["r"]}
        first = one.reference({"u": u}, u.copy(), vals)
        return np.asarray(one.reference({"u": first}, out, vals))

    got, _ = lift_with(_face(("u",), {"r": 0.2}, (24, 28)), probe, name="k")
    assert got.steps == 2 and got.boundary == "interior"
    assert _terms(got) == _terms(one)


def test_a_scalar_composite_clamped_once_stays_one_step() -> None:
    """The square of the heat stencil applied once (clamped once, not at every step):
    a 13-point stencil of one step, its weights sums of powers of r."""
    two = _heat(2, "clamp")
    once = parse_definition({**two.to_dict(), "steps": 1, "terms": _squared(two)}, "k.yaml")

    def probe(inputs: Any, out: np.ndarray, scalars: Any) -> np.ndarray:
        return np.asarray(once.reference(dict(inputs), out, {"r": scalars["r"]}))

    got, _ = lift_with(_face(("u",), {"r": 0.2}, (24, 28)), probe, name="k")
    assert got.steps == 1 and len({t.offset for t in got.terms}) == 13


def _squared(definition: Any) -> list[dict[str, Any]]:
    """The terms of ``definition``'s stencil squared, each a product of r's."""
    s: dict[tuple[int, ...], float] = {}
    for t in definition.terms:
        key = (t.offset[1], t.offset[0], len(t.coefficient.names))
        s[key] = s.get(key, 0.0) + t.coefficient.factor
    terms = []
    for (y, x, e), w in sorted(power(s, 2).items()):  # keys (y, x, power of r)
        if w != 0.0:
            coefficient = "*".join([repr(w), *(["r"] * e)])
            terms.append({"field": "u", "offset": [x, y], "coefficient": coefficient})
    return terms


def _hotspot(steps: int) -> Any:
    """Rodinia's HotSpot step: the temperature's neighbours weighed step/(Cap*Rx),
    step/(Cap*Ry), its centre 1 minus those and step/(Cap*Rz), the power step/Cap."""
    data = {
        "name": "hotspot",
        "dims": 2,
        "dtype": "float32",
        "boundary": "clamp",
        "fields": ["power", "temp"],
        "output": "v",
        "coefficients": ["Cap", "Rx", "Ry", "Rz", "step"],
        "values": {"Cap": 0.5, "Rx": 2.5, "Ry": 2.0, "Rz": 40.0, "step": 0.01},
        "steps": steps,
        "terms": [
            {"field": "power", "coefficient": "step/Cap"},
            {"field": "temp", "coefficient": 1},
            {"field": "temp", "coefficient": "-2*step/(Cap*Rx)"},
            {"field": "temp", "coefficient": "-2*step/(Cap*Ry)"},
            {"field": "temp", "coefficient": "-1*step/(Cap*Rz)"},
            *(
                {"field": "temp", "offset": o, "coefficient": f"step/(Cap*{r})"}
                for o, r in (([1, 0], "Rx"), ([-1, 0], "Rx"), ([0, 1], "Ry"), ([0, -1], "Ry"))
            ),
        ],
    }
    return parse_definition(data, "hotspot.stencil.yaml")


def test_steps_over_two_fields_with_many_scalars_say_what_lifts() -> None:
    """Rodinia's HotSpot with two steps per launch: the refusal says the launch looks
    like two steps, what keeps them from lifting (products of five scalars composed,
    two fields) and what lifts (one step per launch)."""
    kernel = _hotspot(2)
    values = dict(kernel.values)

    def probe(inputs: Any, out: np.ndarray, scalars: Any) -> np.ndarray:
        vals = {n: scalars[n] for n in values}
        with np.errstate(all="ignore"):  # lift sets scalars to 0: a divisor too, as a kernel
            return np.asarray(kernel.reference_steps(dict(inputs), out, vals))

    face = _face(("power", "temp"), values, (20, 24))
    with pytest.raises(NotAStencil) as info:
        lift_with(face, probe, name="k")
    why = str(info.value)
    assert "one launch looks like 2 time steps of a 5-point stencil" in why
    assert "weights of 5 scalars (Cap, Rx, Ry, Rz, step)" in why
    assert "over 2 fields (power, temp)" in why and "one step per launch" in why
    assert "\n" not in why


def test_a_fixed_rim_that_is_no_steps_says_so() -> None:
    """A kernel that writes a margin of 1 but reads 2 away, with weights that are no
    square (r at x and y +-2): refused for its band, and as no steps with a fixed rim."""
    data = _heat(1, "clamp").to_dict()
    data["terms"] = [{"field": "u", "coefficient": 0.5}] + [
        {"field": "u", "offset": [2 * x, 2 * y], "coefficient": "r"} for x, y in AROUND
    ]
    wide = parse_definition(data, "k.stencil.yaml")

    def probe(inputs: Any, out: np.ndarray, scalars: Any) -> np.ndarray:
        full = wide.reference(dict(inputs), out, {"r": scalars["r"]})
        res = out.copy()
        res[1:-1, 1:-1] = full[1:-1, 1:-1]  # a margin of 1, a reach of 2
        return res

    with pytest.raises(NotAStencil) as info:
        lift_with(_face(("u",), {"r": 0.2}, (24, 28)), probe, name="k")
    why = str(info.value)
    assert "it writes x 1..26, y 1..22 but its stencil reaches x 2, y 2" in why
    assert "nor is it several time steps per launch with a fixed rim" in why


# -- real kernels ---------------------------------------------------------------------
HEAT_FLAGS = ["--scalar", "nx=NX", "--scalar", "ny=NY", "--scalar", "r=0.2"]


@pytest.mark.opencl
def test_a_heat_kernel_of_two_steps_with_a_scalar_lifts_and_tunes(
    tmp_path: Path, gtune_here: Cli
) -> None:
    """``heat_2steps_scalar.cl`` (r an argument, a fixed rim) lifts with steps: 2 and
    r kept; tuned against its original, the template's two steps of r's stencil
    reproduce it (a temporal configuration among them)."""
    out = tmp_path / "heat2.stencil.yaml"
    plain = str(PLAIN / "heat_2steps_scalar.cl")
    flags = [*HEAT_FLAGS, "--default", "WX=8,WY=4"]
    done = gtune_here("lift", plain, "--size", "32x24", *flags, "-o", str(out))
    assert done.returncode == 0, done.stderr
    assert "is 2 time steps of this" in done.stderr
    data = yaml.safe_load(out.read_text())
    assert data["steps"] == 2 and data["coefficients"] == ["r"] and data["values"] == {"r": 0.2}
    assert {"field": "u", "coefficient": "-4.0*r"} in data["terms"]
    ran = gtune_here("run", str(out), "--size", "48x32", "--budget", "3", db=tmp_path / "r.db")
    assert ran.returncode == 0, ran.stderr
    assert "speedup" in ran.stdout and "over the original" in ran.stdout


@pytest.mark.opencl
def test_clamped_steps_with_two_scalar_weights_lift(tmp_path: Path, gtune_here: Cli) -> None:
    out = tmp_path / "smooth2.stencil.yaml"
    plain = str(PLAIN / "smooth_2steps_scalar.cl")
    flags = ["--scalar", "nx=NX", "--scalar", "ny=NY", "--default", "WX=16,WY=8"]
    flags += ["--scalar", "c0=0.5", "--scalar", "c1=0.125"]
    done = gtune_here("lift", plain, "--size", "32x24", *flags, "-o", str(out))
    assert done.returncode == 0, done.stderr
    data = yaml.safe_load(out.read_text())
    assert data["steps"] == 2 and data["boundary"] == "clamp"
    assert sorted(str(t["coefficient"]) for t in data["terms"]) == ["c0"] + ["c1"] * 4


# -- integer elements: saturation -----------------------------------------------------
def _u8_face(shape: tuple[int, int] = (20, 24)) -> Interface:
    sizes = (ScalarArg("nx", "int32", shape[1], "x"), ScalarArg("ny", "int32", shape[0], "y"))
    return Interface(
        "numpy.cl", "k", shape, "uint8", ("src",), "dst", ("src", "dst", "nx", "ny"), sizes
    )


def _pair_sum(inputs: Any, out: np.ndarray, rule: Any) -> np.ndarray:
    """``rule(left, right)`` of each point's x neighbours, written inside a rim of 1."""
    a = np.asarray(inputs["src"]).astype(np.float32)
    res = out.copy()
    res[:, 1:-1] = rule(a[:, :-2], a[:, 2:])
    return res


def test_a_sum_that_wraps_is_refused_as_wrapping() -> None:
    def wraps(inputs: Any, out: np.ndarray, scalars: Any) -> np.ndarray:
        return _pair_sum(inputs, out, lambda a, b: (a + b).astype(np.int64).astype(np.uint8))

    with pytest.raises(NotAStencil, match=r"stored as 254 \(wrapped modulo 256\), not clamped"):
        lift_with(_u8_face(), wraps, name="k")


def test_a_nonlinear_kernel_is_not_called_a_wrapping_conversion() -> None:
    """|a - b|, saturated: each value alone gives a staircase of weight 1, both at 255
    give 0, neither 255 (clamped) nor 254 (wrapped)."""

    def absdiff(inputs: Any, out: np.ndarray, scalars: Any) -> np.ndarray:
        return _pair_sum(inputs, out, lambda a, b: np.clip(np.abs(a - b), 0, 255).astype(np.uint8))

    with pytest.raises(NotAStencil) as info:
        lift_with(_u8_face(), absdiff, name="k")
    why = str(info.value)
    assert "stores 0, neither clamped to 255 nor wrapped to 254" in why
    assert "not a linear stencil on integers" in why and "without saturation" not in why


@pytest.mark.opencl
def test_a_saturated_absolute_gradient_is_refused_as_nonlinear(
    tmp_path: Path, gtune_here: Cli
) -> None:
    kernel = tmp_path / "absgrad.cl"
    kernel.write_text(
        "__kernel void absgrad(__global const uchar *in, __global uchar *out, int w, int h)\n"
        "{\n"
        "    int x = get_global_id(0), y = get_global_id(1);\n"
        "    if (x < 1 || x >= w - 1 || y >= h)\n"
        "        return;\n"
        "    out[y * w + x] = convert_uchar_sat(\n"
        "        fabs((float)in[y * w + x + 1] - (float)in[y * w + x - 1]));\n"
        "}\n"
    )
    flags = ["--default", "WX=8,WY=4", "--scalar", "w=NX", "--scalar", "h=NY"]
    out = tmp_path / "absgrad.stencil.yaml"
    done = gtune_here("lift", str(kernel), "--size", "32x24", *flags, "-o", str(out))
    assert done.returncode == 2 and not out.exists()
    assert "neither clamped to 255 nor wrapped to 254" in done.stderr
    assert "Traceback" not in done.stderr

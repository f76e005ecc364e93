"""A kernel that adds a literal constant term lifts at every size: Rodinia HotSpot's
``amb_temp = 80.0f`` in ``(amb_temp - t) / Rz`` makes the constant ``80*step/(Cap*Rz)``,
hundreds of times the weights at the scalar values lift probes with, and each weight is
measured beside it (``gtune/stencils/lift.py``: the impulses are raised above the
constant, and the fit's noise floors count it). Also: a coefficient's numbers read back
correctly rounded (``7/10`` is the double nearest 0.7)."""

from __future__ import annotations

import math
from collections.abc import Mapping
from decimal import Decimal
from fractions import Fraction
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gtune.stencils.definition import (
    Coefficient,
    StencilDefinition,
    load_definition,
    parse_coefficient,
)
from gtune.stencils.lift import Interface, ScalarArg, lift_with
from tests.conftest import ROOT
from tests.inprocess import Cli

PLAIN = ROOT / "stencils" / "plain"
SCALARS = {"Cap": 0.5, "Rx": 2.5, "Ry": 2.0, "Rz": 40.0, "step": 0.01}
NAMES = tuple(SCALARS)
_F32 = np.float32


def _hotspot_stencil(power: str, temp: str, ambient: str) -> dict[Any, list[Coefficient]]:
    """HotSpot's step ``t + step/Cap*(p + (tS + tN - 2t)/Ry + (tE + tW - 2t)/Rx +
    (amb - t)/Rz)`` as a definition holds it: per (field, x-first offset), the
    coefficients; ``"constant"``: the constant term."""

    def c(text: str) -> Coefficient:
        return parse_coefficient(text, "k", NAMES)

    x, y = c("step/(Cap*Rx)"), c("step/(Cap*Ry)")
    centre = [c("1"), c("-2*step/(Cap*Rx)"), c("-2*step/(Cap*Ry)"), c("-step/(Cap*Rz)")]
    return {
        (power, (0, 0, 0)): [c("step/Cap")],
        (temp, (1, 0, 0)): [x],
        (temp, (-1, 0, 0)): [x],
        (temp, (0, 1, 0)): [y],
        (temp, (0, -1, 0)): [y],
        (temp, (0, 0, 0)): centre,
        "constant": [c(f"{ambient}*step/(Cap*Rz)")],
    }


def _as_found(defn: StencilDefinition) -> dict[Any, list[Coefficient]]:
    found: dict[Any, list[Coefficient]] = {"constant": [defn.constant]}
    for t in defn.terms:
        found.setdefault((t.field, t.offset), []).append(t.coefficient)
    return found


def _same(a: Mapping[Any, list[Coefficient]], b: Mapping[Any, list[Coefficient]]) -> None:
    assert {k: sorted(map(repr, v)) for k, v in a.items()} == {
        k: sorted(map(repr, v)) for k, v in b.items()
    }


# ---------------------------------------------------------------------------------
# The algorithm, with a numpy HotSpot in float32 as the kernel (fast)


def _numpy_hotspot(ambient: float) -> Any:
    """HotSpot's step computed in float32 on the interior, the constant a literal."""

    def probe(
        inputs: Mapping[str, np.ndarray], out: np.ndarray, scalars: Mapping[str, float | int]
    ) -> np.ndarray:
        t, p = inputs["temp"], inputs["power"]
        cap, rx, ry, rz, step = (_F32(scalars[n]) for n in NAMES)
        c = t[1:-1, 1:-1]
        res = out.copy()
        with np.errstate(divide="ignore", invalid="ignore"):
            res[1:-1, 1:-1] = c + step / cap * (
                p[1:-1, 1:-1]
                + (t[2:, 1:-1] + t[:-2, 1:-1] - _F32(2) * c) / ry
                + (t[1:-1, 2:] + t[1:-1, :-2] - _F32(2) * c) / rx
                + (_F32(ambient) - c) / rz
            )
        return res

    return probe


@pytest.mark.parametrize("shape", [(12, 16), (24, 32)])
@pytest.mark.parametrize("ambient", ["80.0", "-273.15", "2500", "1e5"])
def test_a_literal_constant_of_any_size_lifts(ambient: str, shape: tuple[int, int]) -> None:
    scalars = tuple(ScalarArg(n, "float32", v) for n, v in SCALARS.items())
    order = ("power", "temp", "dst", *NAMES)
    face = Interface("numpy.cl", "k", shape, "float32", ("power", "temp"), "dst", order, scalars)
    defn, _ = lift_with(face, _numpy_hotspot(float(ambient)), name="k")
    _same(_as_found(defn), _hotspot_stencil("power", "temp", ambient))


# ---------------------------------------------------------------------------------
# Real kernels on OpenCL: Rodinia's tiled kernel and a flat port, lifted by the command

TILED = [
    "--global", "(NX+13)/14*16,(NY+13)/14*16", "--local", "16,16",
    "--scalar", "iteration=1", "--scalar", "border_cols=1", "--scalar", "border_rows=1",
    "--fixed", "iteration", "--fixed", "border_cols", "--fixed", "border_rows",
    "--scalar", "grid_cols=NX", "--scalar", "grid_rows=NY",
]  # fmt: skip
FLAT = ["--default", "WX=4,WY=4", "--scalar", "cols=NX", "--scalar", "rows=NY"]
OTHER = {"Cap": 1.5, "Rx": 0.75, "Ry": 3.0, "Rz": 7.0, "step": 0.05}  # checked at these too


def _matches_original(defn: StencilDefinition, sizes: Mapping[str, int], device: Any) -> None:
    """The definition's reference against its original (from ``original:``) at another
    size, on fresh inputs, at the lifted scalar values and at others."""
    from gtune.commands._plain import original_kernel
    from gtune.measure.lifting import run_planes
    from gtune.measure.opencl_evaluator import OpenCLEvaluator
    from gtune.stencils.lift import interface, shipped_config

    kernel = original_kernel(defn, sizes)
    face = interface(kernel)
    rng = np.random.default_rng(11)
    ev = OpenCLEvaluator(kernel, device, verify=False, compile_workers=0)
    try:
        for values in (dict(defn.values), OTHER):
            inputs = {f: rng.uniform(-2, 2, face.field_shape(f)).astype(_F32) for f in defn.fields}
            out0 = rng.uniform(-2, 2, face.shape).astype(_F32)
            arrays = {**inputs, defn.output: out0}
            got = run_planes(ev, shipped_config(kernel), arrays, values, None)[defn.output]
            ref = defn.reference(inputs, out0, values)
            np.testing.assert_allclose(got, ref, rtol=0, atol=defn.tolerance(2.0, values))
    finally:
        ev.close()


@pytest.fixture(scope="module")
def device() -> Any:
    from gtune.measure import select_device

    return select_device(None)


@pytest.mark.opencl
@pytest.mark.usefixtures("shared_workers")
@pytest.mark.parametrize(
    ("source", "flags", "fields", "ambient", "size", "check"),
    [
        ("hotspot_rodinia_amb.cl", TILED, ("power", "temp_src"), "80.0", "28x28", (44, 30)),
        ("hotspot_rodinia_amb.cl", TILED, ("power", "temp_src"), "80.0", "40x36", (30, 20)),
        ("hotspot_amb_flat.cl", FLAT, ("power", "temp"), "80.0", "32x24", (20, 16)),
        ("hotspot_amb_flat.cl", FLAT, ("power", "temp"), "-273.15", "20x16", (36, 28)),
    ],
    ids=["rodinia-28x28", "rodinia-40x36", "flat-32x24", "flat-kelvin-20x16"],
)
def test_a_kernel_with_a_literal_constant_lifts_at_every_size(
    source: str,
    flags: list[str],
    fields: tuple[str, str],
    ambient: str,
    size: str,
    check: tuple[int, int],
    tmp_path: Path,
    gtune_here: Cli,
    device: Any,
) -> None:
    text = (PLAIN / source).read_text()
    assert "amb_temp = 80.0f;" in text
    kernel = tmp_path / source  # the corpus kernel, its ambient literal as the case says
    kernel.write_text(text.replace("amb_temp = 80.0f;", f"amb_temp = {ambient}f;"))
    out = tmp_path / "hot.stencil.yaml"
    scalars = [a for n, v in SCALARS.items() for a in ("--scalar", f"{n}={v}")]
    done = gtune_here("lift", str(kernel), "--size", size, *flags, *scalars, "-o", str(out))
    assert done.returncode == 0, done.stderr
    defn = load_definition(out)
    _same(_as_found(defn), _hotspot_stencil(*fields, ambient))
    _matches_original(defn, {"NX": check[0], "NY": check[1]}, device)


# ---------------------------------------------------------------------------------
# Numbers in a coefficient: computed exactly, rounded once


@pytest.mark.parametrize(
    ("quotient", "decimal"),
    [("7/10", "0.7"), ("1/10*3", "0.3"), ("7*a/10", "0.7*a"), ("-a*3/(b*10)", "-0.3*a/b"),
     ("0.7*0.1", "0.07"), ("2.5e-3/7*7", "0.0025"), ("1/(3*0.1)", "10/3")],
)  # fmt: skip
def test_a_quotient_reads_as_the_number_it_writes(quotient: str, decimal: str) -> None:
    assert parse_coefficient(quotient, "k", ["a", "b"]) == parse_coefficient(
        decimal, "k", ["a", "b"]
    )


_DECIMALS = st.decimals(
    min_value=Decimal("-1e6"), max_value=Decimal("1e6"), places=6, allow_nan=False
).filter(lambda d: d != 0)


@settings(max_examples=200, deadline=None)
@given(st.lists(_DECIMALS, min_size=1, max_size=3), st.lists(_DECIMALS, max_size=3))
def test_a_coefficient_is_its_numbers_correctly_rounded(
    above: list[Decimal], below: list[Decimal]
) -> None:
    """Any product and quotient of decimals is the double nearest its exact value."""
    text = "*".join(map(str, above)) + "*c"
    if below:
        text += "/(" + "*".join(map(str, below)) + ")"
    exact = math.prod(map(Fraction, above)) / math.prod(map(Fraction, below))
    got = parse_coefficient(text, "k", ["c"])
    assert got == Coefficient(float(exact), ("c",), ())

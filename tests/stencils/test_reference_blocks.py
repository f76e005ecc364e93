"""The numpy references computed block by block on every core: the same bits as one pass.

A definition's reference (and a generated kernel's ``weighted_sum``) cuts the output
into blocks of about ``reference._BLOCK`` points and sums each on a thread of its own.
Cut into blocks of a few points, every definition of the repository (clamp, zero and
interior boundaries, padded fields, integer elements, several steps, 2D and 3D) must
give the bits it gives as one block.
"""

from __future__ import annotations

import itertools
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from gtune.stencils import reference
from gtune.stencils.definition import StencilDefinition, load_definition, parse_definition
from tests.conftest import ROOT

DEFINITIONS = sorted(
    [
        *(ROOT / "tests" / "data" / "definitions").glob("*.stencil.yaml"),
        *(ROOT / "tests" / "data" / "temporal").glob("*.stencil.yaml"),
        *(ROOT / "stencils").glob("*.stencil.yaml"),
        *(ROOT / "benchmarks" / "predict" / "corpus").glob("*.stencil.yaml"),
        *(ROOT / "examples").glob("*.stencil.yaml"),
    ]
)


@given(
    shape=st.tuples(st.integers(0, 9), st.integers(0, 9), st.integers(0, 9)),
    points=st.integers(1, 200),
)
def test_blocks_cover_every_point_once(shape: tuple[int, int, int], points: int) -> None:
    seen = np.zeros(shape, dtype=int)
    for zs, ys in reference.blocks(shape, points):
        seen[zs, ys] += 1
        assert seen[zs, ys].size <= max(points, shape[2])  # at least a row, else at most points
    assert (seen == 1).all()


def _padded() -> StencilDefinition:
    terms = [
        {"field": "src", "offset": list(o), "coefficient": round(0.1 * (i % 7) - 0.3, 3)}
        for i, o in enumerate(itertools.product(range(-2, 3), repeat=2))
    ]
    data: dict[str, Any] = {
        "dims": 2,
        "boundary": "clamp",
        "fields": ["src"],
        "output": "dst",
        "terms": terms,
        "pad": {"src": [2, 2]},
    }
    return parse_definition(data, "padded.stencil.yaml")


def _inputs(d: StencilDefinition, seed: int) -> tuple[dict[str, np.ndarray], np.ndarray]:
    rng = np.random.default_rng(seed)
    out_shape = (23, 17) if d.dims == 2 else (11, 9, 13)
    inputs: dict[str, np.ndarray] = {}
    for f in d.fields:
        px, py, pz = d.pad_of(f)
        pads = (pz, py, px)[3 - d.dims :]
        shape = tuple(n + 2 * p for n, p in zip(out_shape, pads, strict=True))
        if d.storage:
            inputs[f] = rng.integers(0, 200, shape).astype(np.float32)
        else:
            inputs[f] = rng.uniform(-1, 1, shape)
    out = rng.uniform(-1, 1, out_shape)
    if d.storage:
        out = rng.integers(0, 200, out_shape).astype(np.float32)
    return inputs, out


@pytest.mark.parametrize(
    "definition", [*DEFINITIONS, None], ids=[p.name for p in DEFINITIONS] + ["padded"]
)
def test_a_reference_in_small_blocks_is_the_same_bits(
    definition: Path | None, monkeypatch: pytest.MonkeyPatch
) -> None:
    d = _padded() if definition is None else load_definition(definition)
    inputs, out = _inputs(d, 3)
    monkeypatch.setattr(reference, "_BLOCK", 1 << 30)
    whole = d.reference_steps(inputs, out)
    for points in (1, 7, 40):
        monkeypatch.setattr(reference, "_BLOCK", points)
        got = d.reference_steps(inputs, out)
        assert got.dtype == whole.dtype and got.tobytes() == whole.tobytes(), points


def test_weighted_sum_in_small_blocks_is_the_same_bits(monkeypatch: pytest.MonkeyPatch) -> None:
    rng = np.random.default_rng(5)
    offsets = [o for o in itertools.product((-1, 0, 1), repeat=3) if sum(map(abs, o)) <= 2]
    weights = [float(w) for w in rng.uniform(-1, 1, len(offsets))]
    for shape in ((9, 11, 13), (1, 21, 19)):
        arrays = {"a": rng.uniform(-1, 1, shape).astype(np.float32)}
        arrays["b"] = np.zeros_like(arrays["a"])
        args: dict[str, Any] = {"input": "a", "output": "b", "offsets": offsets}
        if shape[0] == 1:  # a 2D array: offsets in x and y only
            args["offsets"] = [o for o in offsets if o[2] == 0]
            arrays = {k: v[0] for k, v in arrays.items()}
        args["weights"] = weights[: len(args["offsets"])]
        monkeypatch.setattr(reference, "_BLOCK", 1 << 30)
        whole = reference.weighted_sum(arrays, {}, {}, **args)["b"]
        for points in (1, 5, 60):
            monkeypatch.setattr(reference, "_BLOCK", points)
            got = reference.weighted_sum(arrays, {}, {}, **args)["b"]
            assert got.tobytes() == whole.tobytes(), (shape, points)


def _exact_fma32(w: float, v: float, a: float) -> np.float32:
    """fma(w, v, a) rounded once to float32 (ties to even), in exact arithmetic."""
    from fractions import Fraction

    exact = Fraction(float(w)) * Fraction(float(v)) + Fraction(float(a))
    lo = np.float32(float(exact))  # a candidate; step to the two float32 around exact
    while Fraction(float(lo)) > exact:
        lo = np.nextafter(lo, np.float32(-np.inf))
    while Fraction(float(np.nextafter(lo, np.float32(np.inf)))) <= exact:
        lo = np.nextafter(lo, np.float32(np.inf))
    hi = np.nextafter(lo, np.float32(np.inf))
    d_lo, d_hi = exact - Fraction(float(lo)), Fraction(float(hi)) - exact
    if d_lo != d_hi:
        return lo if d_lo < d_hi else hi
    return lo if int(lo.view(np.uint32)) % 2 == 0 else hi


_f32 = st.floats(width=32, allow_nan=False, allow_infinity=False, min_value=-1e6, max_value=1e6)


@given(w=_f32, v=_f32, a=_f32)
def test_fma32_rounds_once(w: float, v: float, a: float) -> None:
    out = np.empty(1, np.float32)
    reference.fma32(np.float32(w), np.array([v], np.float32), np.array([a], np.float32), out)
    assert out[0] == _exact_fma32(w, v, a)


def test_fma32_where_the_float64_sum_is_a_float32_tie() -> None:
    """The sum rounded to float64 lands exactly halfway between two float32 values while
    the exact sum lies below it: the exact side decides, not ties-to-even. a = 1 + 2^-23
    (odd), w * v = 2^-24 (1 - 2^-46): the exact sum is 2^-70 short of the tie between
    1 + 2^-23 and 1 + 2^-22, which float64 cannot hold."""
    a = np.float32(1.0 + 2.0**-23)
    w = np.float32(2.0**-24 * (1.0 + 2.0**-23))
    v = np.float32(1.0 - 2.0**-23)
    assert float(w) * float(v) + float(a) == 1.0 + 2.0**-23 + 2.0**-24  # a tie in float64
    out = np.empty(1, np.float32)
    reference.fma32(w, np.array([v]), np.array([a]), out)
    assert out[0] == _exact_fma32(float(w), float(v), float(a)) == a
    assert np.float32(float(w) * float(v) + float(a)) != a  # what one rounding of s gives


def test_fma32_on_arrays_of_ties_subnormals_and_plain_points() -> None:
    """Whole arrays mix points that take the tie path (float64 ties, float32 subnormal
    sums) with ordinary ones: each point is the exactly rounded fma."""
    rng = np.random.default_rng(3)
    w = np.float32(2.0**-24 * (1.0 + 2.0**-23))
    v = rng.uniform(-2, 2, 64).astype(np.float32)
    a = rng.uniform(-2, 2, 64).astype(np.float32)
    v[::8] = np.float32(1.0 - 2.0**-23)  # the tie of the test above, every eighth point
    a[::8] = np.float32(1.0 + 2.0**-23)
    a[3::8] = np.float32(3e-39)  # subnormal float32 sums
    v[3::8] = np.float32(1e-32)
    a[5::8] = np.float32(0.0)
    v[5::8] = np.float32(0.0)
    out = np.empty(64, np.float32)
    reference.fma32(w, v, a, out)
    want = [_exact_fma32(float(w), float(x), float(y)) for x, y in zip(v, a, strict=True)]
    assert out.tobytes() == np.array(want, np.float32).tobytes()
    assert out[0] == a[0]  # the tie went the exact sum's way

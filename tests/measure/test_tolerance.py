"""Verification tolerances come from the computation; a typed-in number cannot widen
them until a wrong kernel passes, and a tolerance that accepts doing nothing is named."""

from __future__ import annotations

import numpy as np
import pytest

from gtune.description import load_kernel
from gtune.measure.guard import tolerance_problems
from gtune.measure.problem import MAX_TOLERANCE_TERMS, summed_terms, tolerances
from gtune.measure.result import Status
from tests.conftest import ROOT

GOOD = {"WX": 8, "WY": 4, "WZ": 1}


def _naive7(kernel_copy, features: str | None = None, extra: str = "", reference: str = ""):
    def edit(text: str) -> str:
        if features is not None:
            text = text.replace("features: {size: 7, radius: 1, dimensionality: 3}", features)
        if reference:
            text = text.replace('reference: {python: "naive7_ref.py:reference"}', reference)
        return text + extra

    return load_kernel(kernel_copy("naive7", edit))


@pytest.mark.parametrize(
    ("features", "terms"),
    [
        ("features: {size: 1.0e+308}", MAX_TOLERANCE_TERMS),
        ("features: {size: 1e308}", 27),  # a string to YAML 1.1, not a number
        ("features: {size: 1000000}", MAX_TOLERANCE_TERMS),
        ("features: {size: -5}", 1),
        ("features: {size: .nan}", 27),
        ("features: {size: many}", 27),
        ("features: {size: 7}", 7),
        ("features: {}", 27),
    ],
)
def test_typed_in_sizes_are_held_within_bounds(kernel_copy, features: str, terms: int) -> None:
    kernel = _naive7(kernel_copy, features)
    assert summed_terms(kernel) == terms
    rtol, atol = tolerances(kernel, {"out": np.ones(8, np.float32)})
    assert rtol <= 5e-4 and atol <= 1e-3


def test_terms_are_counted_from_the_reference_offsets() -> None:
    kernel = load_kernel(ROOT / "stencils" / "heat3d.cl")
    offsets = kernel.reference.args["offsets"]
    assert summed_terms(kernel) == len({tuple(o) for o in offsets})


def test_a_tolerance_that_accepts_the_initial_output_is_named() -> None:
    rng = np.random.default_rng(1)
    initial = rng.random(1000).astype(np.float32)
    ref = initial * 1.5
    assert tolerance_problems({"out": initial}, {"out": ref}, 1e-4, 1e-6) == []
    (why,) = tolerance_problems({"out": initial}, {"out": ref}, 0.5, 0.0)
    assert "'out'" in why and "computes nothing" in why


@pytest.mark.opencl
def test_a_huge_size_does_not_let_a_wrong_kernel_pass(kernel_copy) -> None:
    from gtune.measure import OpenCLEvaluator

    kernel = _naive7(kernel_copy, "features: {size: 1.0e+308}", "build_options: [-DWRONG]\n")
    with OpenCLEvaluator(kernel, compile_workers=0) as ev:
        r = ev.evaluate(GOOD)
    assert r.status is Status.WRONG_RESULT, r.message


@pytest.mark.opencl
def test_a_tolerance_written_wide_open_makes_results_unverified(kernel_copy) -> None:
    from gtune.measure import OpenCLEvaluator

    ref = 'reference: {python: "naive7_ref.py:reference", rtol: 1.0e+30}'
    kernel = _naive7(kernel_copy, extra="build_options: [-DWRONG]\n", reference=ref)
    with OpenCLEvaluator(kernel, compile_workers=0) as ev:
        r = ev.evaluate(GOOD)
    assert "computes nothing" in str(r.extra.get("unverified")), r.extra

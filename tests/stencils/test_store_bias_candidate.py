"""Issue 48's candidate ``benchmarks/candidates/store_bias.patch``: results converted to
8- and 16-bit elements with round to nearest even and saturation (``convert_T_sat_rte``)
by a clamp and an exponent bias instead of a conversion instruction, for the H200's
8-bit kernels, which convert more than they load (benchmarks/results/lift/int_words.md).

A candidate must leave every float kernel's code as it was and give the package's bits:
on PoCL, unsigned and signed 8- and 16-bit results of float sums that saturate both
ways and round ties (weights of eighths), scalar and vector stores (VX 2 to 16).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from gtune.stencils.definition import parse_definition
from tests.stencils import test_int_words as words

pytestmark = pytest.mark.candidate  # a candidate template: run with --candidates

PATCH = "store_bias.patch"


def test_float_kernels_preprocess_as_with_the_package_template(tmp_path: Path) -> None:
    words.test_float_kernels_preprocess_as_with_the_package_template(PATCH, tmp_path)


def _signed_8bit_rte(path: Path) -> None:
    """int8 fields, rte_sat: sums of eighths (ties to even) past both ends of the range."""
    terms: list[dict[str, Any]] = [
        {"field": "src", "offset": [dx, dy], "coefficient": f"{w}/8"}
        for (dx, dy), w in zip(
            [(0, -1), (-1, 0), (0, 0), (1, 0), (0, 1)], [3, -5, 12, -5, 3], strict=True
        )
    ]
    data = {
        "name": "k",
        "dims": 2,
        "dtype": "float32",
        "boundary": "interior",
        "fields": ["src"],
        "output": "dst",
        "storage": "int8",
        "convert": "rte_sat",
        "terms": terms,
    }
    path.write_text(parse_definition(data, "k.stencil.yaml").to_yaml())


@pytest.mark.opencl
@pytest.mark.usefixtures("shared_workers")
@pytest.mark.parametrize("case", ["u8-2d-clamp", "s16-3d-interior", "u16-2d-interior", "s8-rte"])
def test_the_candidate_gives_the_package_templates_bits(case: str, tmp_path: Path) -> None:
    path = tmp_path / "k.stencil.yaml"
    if case == "s8-rte":
        _signed_8bit_rte(path)
        dims = 2
    else:
        path.write_text(words._definition(case).to_yaml())
        dims = words.CASES[case][0]
    assert words.same_bits(path, words._variant(PATCH), words._sizes(dims)) >= 5


def test_the_candidate_overrides_exactly_the_rounding_saturating_conversions() -> None:
    """Every ``convert_T[N]_sat_rte`` of the four 8- and 16-bit types and widths 1 to 16
    is redirected, and nothing else: a float sum's other conversions keep OpenCL's."""
    text = words._variant(PATCH)
    names = [
        f"convert_{t}{n}_sat_rte"
        for t in ("uchar", "char", "ushort", "short")
        for n in ("", "2", "4", "8", "16")
    ]
    for name in names:
        assert text.count(f"#define {name}(v) gt_{name.removeprefix('convert_')}(v)") == 1
    assert text.count("#define convert_") == len(names)

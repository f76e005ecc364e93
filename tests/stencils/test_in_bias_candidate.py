"""Issue 48's candidate ``benchmarks/candidates/in_bias.patch``: 8- and 16-bit inputs
loaded as 32-bit words and converted to float without a conversion instruction (the
lane's bits put in the mantissa of 2^23, and 2^23 subtracted; signed lanes first made
unsigned by flipping their sign bit), for the H200's 8-bit kernels, which convert
3-4 input lanes per output at a quarter of an addition's rate
(benchmarks/results/lift/int_words.md).

A candidate must leave every float kernel's code as it was and give the package's bits:
on PoCL, inputs random over the whole range of each type (its extremes included),
unsigned and signed, 8 and 16 bits, 2D and 3D, every vector width the words path takes
(VX 2 to 16), an integer output and a float output.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.stencils import test_int_words as words

pytestmark = pytest.mark.candidate  # a candidate template: run with --candidates

PATCH = "in_bias.patch"
BOTH = "no_cvt.patch"  # in_bias and store_bias.patch together: no conversion instruction left


def test_float_kernels_preprocess_as_with_the_package_template(tmp_path: Path) -> None:
    words.test_float_kernels_preprocess_as_with_the_package_template(PATCH, tmp_path)


def test_both_candidates_together_leave_float_kernels_alone(tmp_path: Path) -> None:
    words.test_float_kernels_preprocess_as_with_the_package_template(BOTH, tmp_path)


@pytest.mark.opencl
@pytest.mark.usefixtures("shared_workers")
@pytest.mark.parametrize(
    ("patch", "case"),
    [
        (PATCH, "u8-2d-clamp"),
        (PATCH, "s8-3d-zero"),
        (PATCH, "u16-2d-interior"),
        (PATCH, "s8-f32-2d-interior"),
        (BOTH, "u8-2d-clamp"),
        (BOTH, "s16-2d-clamp"),
    ],
)
def test_the_candidate_gives_the_package_templates_bits(
    case: str, patch: str, tmp_path: Path
) -> None:
    path = tmp_path / "k.stencil.yaml"
    path.write_text(words._definition(case).to_yaml())
    dims = words.CASES[case][0]
    assert words.same_bits(path, words._variant(patch), words._sizes(dims)) >= 5


def test_the_candidate_converts_words_alone() -> None:
    """Only the words path's lane conversion changes, and only where REAL is float: a
    double kernel (REAL double) keeps ``convert_``."""
    text = words._variant(PATCH)
    assert text.count("#define WPART_(w, b)") == 3  # unsigned, signed, the REAL double case
    assert "0x4B000000u" in text and "#define WPART_(w, b) CAT(convert_, WT)" in text

"""Issue 49's candidate ``benchmarks/candidates/rim_prefetch.patch`` (measured and lost,
benchmarks/results/h200-limit/x-rim/prefetch/): with the rim kept, a work-item of the
vec technique's interior path whose vector holds a row's first or last points asks the
L2 for its rows' output vectors before its loads (``RIM_PREFETCH``: 1 NVIDIA's
``prefetch.global.L2``, 2 OpenCL's ``prefetch``), so that the partial store finds them.

Off, it leaves the package's code as it was (every float kernel preprocesses to the
same text); on, the package's bits: a prefetch changes no value. On PoCL only OpenCL's
prefetch (2) builds; NVIDIA's (1) is PTX.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from tests.stencils import test_int_words as words

pytestmark = pytest.mark.candidate  # a candidate template: run with --candidates

PATCH = "rim_prefetch.patch"


@pytest.mark.skipif(shutil.which("cpp") is None, reason="needs the C preprocessor")
def test_float_kernels_preprocess_as_with_the_package_template(tmp_path: Path) -> None:
    words.test_float_kernels_preprocess_as_with_the_package_template(PATCH, tmp_path)


BASE = "RIM=1,RIN=1,LOCAL=0,IMAGE=0,STREAM=0,ZC=1"
CASES = [
    ("heat3d", "WX=8,WY=8,WZ=1,BX=4,VX=4,CZ=4"),  # heat3d's winner's shape
    ("laplacian4", "WX=8,WY=2,WZ=2,BX=4,VX=4,CY=2,CZ=2"),  # radius 2, merged rows
    ("box27", "WX=8,WY=2,WZ=2,BX=4,VX=4,BY=4,BZ=4,SEP=1"),  # a block of 16 rows
]


@pytest.mark.opencl
@pytest.mark.parametrize(("name", "config"), CASES)
def test_the_prefetch_gives_the_packages_bits(name: str, config: str) -> None:
    on = {"RIM_PREFETCH": 2}
    assert words.bits(words._variant(PATCH), name, f"{BASE},{config}", on) == (1, 0, 0)


@pytest.mark.opencl
def test_a_prefetch_that_stores_is_caught() -> None:
    """A mutant whose 'prefetch' writes the vector it names gives other bits with the
    prefetch on, the package's with it off."""
    text = words._variant(PATCH)
    old = "#define RIM_L2_PREFETCH(p) prefetch((p), 1)"
    assert text.count(old) == 1
    mutant = text.replace(old, "#define RIM_L2_PREFETCH(p) (*(p) = (VO)0)")
    config = f"{BASE},WX=8,WY=8,WZ=1,BX=4,VX=4,CZ=4"
    assert words.bits(mutant, "heat3d", config, {"RIM_PREFETCH": 2})[:2] == (0, 1)
    assert words.bits(mutant, "heat3d", config)[:2] == (1, 0)

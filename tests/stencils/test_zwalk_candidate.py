"""Issue 49's candidate ``benchmarks/candidates/vec_zwalk.patch``: the vec technique's
interior block walks its BZ planes (``RIN=2`` rolled, ``RIN=3`` unrolled), the planes an
output reads queued in registers (y-sums of a separable stencil, centre vectors of a
z-star), for the H200's box27 and laplacian4 (benchmarks/results/h200-limit/).

A candidate must leave the package's code as it was where it is off (every float kernel
with ``RIN`` 0 and 1 preprocesses to the same text) and give the package's bits where it
is on: on PoCL, the walk against ``RIN=1`` on blocks that straddle every edge.
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

from gtune.stencils.definition import parse_definition
from tests.stencils import test_int_words as words
from tests.stencils.test_h200_limit_tools import exact

pytestmark = pytest.mark.candidate  # a candidate template: run with --candidates

PATCH = "vec_zwalk.patch"


@pytest.mark.skipif(shutil.which("cpp") is None, reason="needs the C preprocessor")
def test_float_kernels_preprocess_as_with_the_package_template(tmp_path: Path) -> None:
    words.test_float_kernels_preprocess_as_with_the_package_template(PATCH, tmp_path)


@pytest.mark.opencl
@pytest.mark.parametrize("rin", [2, 3])
@pytest.mark.parametrize(
    ("name", "config"),
    [
        ("laplacian4", "WX=8,WY=2,BX=4,VX=4,BY=2,BZ=8"),  # z-star, radius 2, BY rows queued
        ("heat3d", "WX=8,WY=2,BX=2,VX=2,BY=1,BZ=4,CZ=2"),  # z-star, radius 1, cycled
        ("box27", "WX=8,WY=2,BX=4,VX=4,BY=4,BZ=8,SEP=1"),  # separable: y-sums queued
        ("box27", "WX=8,WY=2,BX=4,VX=4,BY=2,BZ=4,SEP=0"),  # neither: RIN=1's code
    ],
)
def test_the_walk_gives_the_interior_paths_bits(name: str, config: str, rin: int) -> None:
    base = "RIM=1,RIN=1,LOCAL=0,IMAGE=0,STREAM=0,ZC=1,WZ=1"
    assert words.bits(words._variant(PATCH), name, f"{base},{config}", {"RIN": rin}) == (1, 0, 0)


ROOT = Path(__file__).resolve().parents[2]
CORPUS = ROOT / "tests" / "data" / "definitions"


def _two_fields(path: Path) -> None:
    """A radius-2 z-star of ``u`` (asymmetric weights) with a second field ``m`` read
    off the output's plane and column, and a constant: the walk reads other fields
    through the package's loads, plane by plane."""
    star = [(0, 0, 0, "1/2"), (-1, 0, 0, "1/8"), (2, 0, 0, "-1/16"), (0, -2, 0, "3/32")]
    star += [(0, 1, 0, "1/8"), (0, 0, -2, "-3/64"), (0, 0, -1, "5/32"), (0, 0, 1, "1/16")]
    terms: list[dict[str, Any]] = [
        {"field": "u", "offset": [dx, dy, dz], "coefficient": c} for dx, dy, dz, c in star
    ]
    terms += [
        {"field": "m", "offset": [0, 0, -1], "coefficient": "-1/4"},
        {"field": "m", "offset": [1, -1, 2], "coefficient": "3/8"},
    ]
    data = {
        "name": "k",
        "dims": 3,
        "dtype": "float32",
        "boundary": "interior",
        "fields": ["u", "m"],
        "output": "v",
        "constant": "1/32",
        "terms": terms,
    }
    path.write_text(parse_definition(data, "k.stencil.yaml").to_yaml())


@pytest.mark.opencl
@pytest.mark.parametrize("rin", [2, 3])
@pytest.mark.parametrize(
    ("definition", "config"),
    [
        ("two-fields", "BX=4,VX=4,BY=2,BZ=4"),
        ("sep3d_r2", "BX=4,VX=4,BY=2,BZ=4,SEP=1"),  # separable, radius 2 in x
        ("star3d_f64", "BX=2,VX=2,BY=2,BZ=4"),  # float64
        ("star3d_rim_const", "BX=4,VX=4,BY=1,BZ=4"),  # the rim written, a constant
        ("box3d_c", "BX=4,VX=4,BY=2,BZ=2"),  # neither: RIN=1's code
    ],
)
def test_the_walk_gives_the_bits_of_definitions(
    definition: str, config: str, rin: int, tmp_path: Path
) -> None:
    path = tmp_path / "k.stencil.yaml"
    if definition == "two-fields":
        _two_fields(path)
    else:
        path.write_text((CORPUS / f"{definition}.stencil.yaml").read_text())
    base = "RIM=1,RIN=1,LOCAL=0,IMAGE=0,STREAM=0,ZC=1,WX=8,WY=2,WZ=1"
    variant = words._variant(PATCH)
    assert words.bits(variant, str(path), f"{base},{config}", {"RIN": rin}) == (1, 0, 0)


def _exact(variant: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return exact(variant, *args, size=32)


@pytest.mark.opencl
def test_template_exact_sets_the_variants_values_and_reads_definitions(tmp_path: Path) -> None:
    """``--variant-set RIN=2`` runs the candidate's side with the walk on (against the
    package's ``RIN=0``), a definition given by its path: the candidate gives the same
    bits, a mutant whose walk reads every z-neighbour from the queue's centre differs,
    and without the option (the walk off) the mutant too gives the package's bits."""
    star = str(CORPUS / "star3d_c.stencil.yaml")
    config = ["--kernels", star, "--config", f"{star}:WX=8,WY=2,BX=4,VX=4,BY=2,BZ=4,RIM=1"]
    same = _exact(ROOT / "benchmarks" / "candidates" / PATCH, *config, "--variant-set", "RIN=2")
    assert same.returncode == 0, same.stdout + same.stderr[-2000:]
    assert "same bits: 1, different: 0, skipped: 0" in same.stdout
    mutant = tmp_path / "mutant.cl"
    queued = "acc += (w) * F(q_[RZ + (dz)][oy_]);"
    text = words._variant(PATCH)
    assert queued in text
    mutant.write_text(text.replace(queued, "acc += (w) * F(q_[RZ][oy_]);"))
    caught = _exact(mutant, *config, "--variant-set", "RIN=2")
    assert caught.returncode == 1, caught.stdout + caught.stderr[-2000:]
    assert "DIFFERENT (anext)" in caught.stdout  # the definition's output
    off = _exact(mutant, *config)
    assert off.returncode == 0, off.stdout + off.stderr[-2000:]


def test_template_exact_names_a_kernel_it_cannot_find() -> None:
    r = _exact(ROOT / "benchmarks" / "candidates" / PATCH, "--kernels", "no_such.stencil.yaml")
    assert r.returncode == 2
    assert "not a real stencil nor a .stencil.yaml file: no_such.stencil.yaml" in r.stderr
    assert "Traceback" not in r.stderr

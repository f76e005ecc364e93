"""Issue 49's candidate ``benchmarks/candidates/vec_row_base.patch``: the vec technique's
interior path (``RIN=1``), for a work-item whose blocks all lie inside, runs a loop of its
own (``RB=1``): no block tests its rows, and a block's row base is the one before it
a constant number of vectors further, not a row index multiplied and widened per block
(benchmarks/results/h200-limit/row_base/).

A candidate must leave the package's code as it was where it is off (every float kernel
with ``RIN`` 0 and 1, the global, local and stream techniques, preprocesses to the same
text) and give the package's bits where it is on: on PoCL, ``RB=1`` against ``RIN=1`` on
blocks that straddle every edge.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from gtune.stencils.definition import load_definition, parse_definition
from gtune.stencils.render import render_source
from tests.stencils import test_int_words as words
from tests.stencils.template_snapshot import cpp, sizes_of
from tests.stencils.test_padded_vec import _binomial, _with_power
from tests.stencils.test_zwalk_candidate import _two_fields

pytestmark = pytest.mark.candidate  # a candidate template: run with --candidates

PATCH = "vec_row_base.patch"
ROOT = Path(__file__).resolve().parents[2]
CORPUS = ROOT / "tests" / "data" / "definitions"


@pytest.mark.skipif(shutil.which("cpp") is None, reason="needs the C preprocessor")
def test_float_kernels_preprocess_as_with_the_package_template(tmp_path: Path) -> None:
    words.test_float_kernels_preprocess_as_with_the_package_template(PATCH, tmp_path)


STREAM = ["-DSTREAM=1 -DZC=4", "-DSTREAM=1 -DZC=4 -DCY=2", "-DTB=2 -DSTREAM=1 -DZC=4"]
STREAM_2D = ["-DSTREAM=1", "-DSTREAM=1 -DVX=4 -DBX=4", "-DSTREAM=1 -DVX=4 -DBX=4 -DSEP=1"]


@pytest.mark.skipif(shutil.which("cpp") is None, reason="needs the C preprocessor")
@pytest.mark.parametrize("name", ["star3d_c", "box3d_c", "box2d"])
def test_stream_kernels_preprocess_as_the_packages(name: str, tmp_path: Path) -> None:
    """Streaming (one step and temporal; 2D with vectors) with RB left out: the
    package's text; RB without the interior path stops the build with its reason."""
    d = load_definition(CORPUS / f"{name}.stencil.yaml")
    package = render_source(d)
    with words.template_ab.rendering_from(words._variant(PATCH)):
        candidate = render_source(d)
    assert candidate != package
    for cfg in STREAM if d.dims == 3 else STREAM_2D:
        flags = [*sizes_of(package), "-DWX=8", "-DWY=4", *cfg.split()]
        want = cpp(package, flags, tmp_path)
        assert want[0] == 0, (name, cfg, want[1][-300:])
        assert cpp(candidate, flags, tmp_path) == want, (name, cfg)
    flags = [*sizes_of(package), "-DWX=8", "-DWY=4", "-DVX=4", "-DBX=4", "-DRIM=1", "-DRB=1"]
    status, text = cpp(candidate, flags, tmp_path)
    assert status != 0 and "RB (the interior path's row bases" in text


BASE = "RIM=1,RIN=1,LOCAL=0,IMAGE=0,STREAM=0,ZC=1"
CASES = [
    ("laplacian4", "WX=8,WY=2,WZ=2,BX=4,VX=4,CY=2,CZ=2"),  # the defaults' winner's shape
    ("laplacian4", "WX=8,WY=4,WZ=1,BX=4,VX=4,BZ=2,CZ=4"),  # radius 2, two rows in z
    ("heat3d", "WX=8,WY=8,WZ=1,BX=4,VX=4,CZ=4"),  # heat3d's winner's shape
    ("heat3d", "WX=8,WY=2,WZ=2,BX=2,VX=2,BY=2,BZ=2,CY=2,CX=2"),  # VX 2, every loop
    ("box27", "WX=8,WY=2,WZ=2,BX=4,VX=4,BY=4,BZ=4,SEP=1"),  # box27's winner's shape
]


@pytest.mark.opencl
@pytest.mark.parametrize(("name", "config"), CASES)
def test_the_row_base_gives_the_interior_paths_bits(name: str, config: str) -> None:
    assert words.bits(words._variant(PATCH), name, f"{BASE},{config}", {"RB": 1}) == (1, 0, 0)


@pytest.mark.opencl
@pytest.mark.parametrize(
    ("definition", "config"),
    [
        ("two-fields", "WX=8,WY=2,WZ=1,BX=4,VX=4,BY=2,BZ=2,CZ=2"),  # a second field, a constant
        ("padded", "WX=8,WY=2,BX=4,VX=4,BY=2,CY=2,SEP=1"),  # 2D, padded src, a second field
    ],
)
def test_the_row_base_gives_the_bits_of_definitions(
    definition: str, config: str, tmp_path: Path
) -> None:
    path = tmp_path / "k.stencil.yaml"
    if definition == "two-fields":
        _two_fields(path)
    else:
        data = {"name": "k", "dtype": "float32", **_with_power(_binomial(2))}
        path.write_text(parse_definition(data, "k.stencil.yaml").to_yaml())
    variant = words._variant(PATCH)
    assert words.bits(variant, str(path), f"{BASE},{config}", {"RB": 1}) == (1, 0, 0)


MUTANTS = {
    "a block's rows one row too far in y": (
        "sy_ += RB_SRC_ROWS(TILE_Y);",
        "sy_ += RB_SRC_ROWS(TILE_Y + 1);",
    ),
    "a work-item one row past the interior taken in": (
        "#define RB_YSPAN (HIY - BY - (CY - 1) * TILE_Y - LOY)",
        "#define RB_YSPAN (HIY - BY - (CY - 1) * TILE_Y - LOY + 1)",
    ),
}


@pytest.mark.opencl
@pytest.mark.parametrize("mutant", sorted(MUTANTS))
def test_a_mutant_of_the_row_base_is_caught(mutant: str) -> None:
    """The mutant gives other bits with RB on, and the package's with RB off."""
    old, new = MUTANTS[mutant]
    text = words._variant(PATCH)
    assert text.count(old) == 1
    config = f"{BASE},WX=8,WY=4,WZ=1,BX=4,VX=4,CY=2,CZ=2"
    assert words.bits(text.replace(old, new), "heat3d", config, {"RB": 1})[:2] == (0, 1)
    assert words.bits(text.replace(old, new), "heat3d", config)[:2] == (1, 0)

"""Issue 48's candidate ``benchmarks/candidates/clamp_rim.patch``: the vector technique's
whole-vector path (``RIM=1``) for the clamp boundary, so row blocks (``BY``, ``BZ``),
the interior path (``RIN``) and separable weights summed row by row (``SEP``) apply to
clamp kernels (the lifted ``blur_clamp``'s best on the H200 is 2D streaming; the same
blur with the interior boundary is faster with vec, RIM and SEP).

A vector that touches an x edge builds each shifted vector from its lanes' clamped
elements; rows beyond a y or z edge read the edge row (the row clamps RIM already
has); every point is written. Rendered with ``benchmarks/candidates/clamp_rim.py``'s
``clamp_rims`` (the render side: RIM, RIN, BY, BZ and SEP offered to clamp kernels). On
PoCL: the lifted ``blur_clamp`` (2D, 5x5, separable), the lifted ``hotspot3d`` (3D,
a 7-point star with a second field) and a separable 3D clamp blur, at sizes whose rows
hold a few vectors, VX 2 and 4, SEP 0 and 1, BY 1, 2, 4, BZ 1 and 2, RIN 0 and 1: every
output within the definition's tolerance of the numpy reference and of the package's
output (the vector technique, RIM=0). Two broken candidates are caught: edge vectors
built as interior ones (no per-lane clamp) and the last row left unwritten. The
candidate leaves the C preprocessor's output of interior kernels, and of clamp kernels
without RIM, as the package's template gives it.
"""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from gtune.description import load_kernel
from gtune.stencils.definition import load_definition, parse_definition
from gtune.stencils.real import REAL
from gtune.stencils.render import render_source
from tests.conftest import load_script, run_gtune
from tests.stencils import test_int_words as words
from tests.stencils.template_snapshot import cpp, sizes_of

pytestmark = pytest.mark.candidate  # a candidate template: run with --candidates

PATCH = "clamp_rim.patch"
ROOT = Path(__file__).resolve().parents[2]
render_side = load_script(ROOT / "benchmarks" / "candidates" / "clamp_rim.py")

# as stencils/plain/manifest.yaml lifts them (benchmarks/lift_corpus.py)
HOTSPOT = ["--global", "NX,NY", "--default", "WX=64,WY=4"]
for _c in ("sdc=0.3", "ce=0.1", "cw=0.1", "cn=0.1", "cs=0.1", "ct=0.05", "cb=0.05", "cc=0.45"):
    HOTSPOT += ["--scalar", _c]
LIFTED = {
    "blur_clamp": ("32x16", ["--default", "WX=16,WY=16"]),
    "hotspot3d": ("64x20x12", HOTSPOT),
}
SIZES_2D = {"NX": 40, "NY": 12}  # rows of 10 (VX 4) or 20 (VX 2) vectors
SIZES_3D = {"NX": 24, "NY": 12, "NZ": 6}

A2 = {"WX": 2, "WY": 2, "BX": 4, "VX": 4}
B2 = {"WX": 2, "WY": 1, "BX": 2, "VX": 2, "CX": 2}  # cyclic merging in x
A3 = {"WX": 2, "WY": 2, "WZ": 1, "BX": 4, "VX": 4}
B3 = {"WX": 4, "WY": 1, "WZ": 2, "BX": 2, "VX": 2}
RIM: dict[str, int] = {"RIM": 1}
BLUR = [
    {**A2, **RIM, "SEP": 0, "BY": 1, "RIN": 0},
    {**A2, **RIM, "SEP": 1, "BY": 2, "RIN": 1},
    {**B2, **RIM, "SEP": 1, "BY": 4, "RIN": 0},
    {**B2, **RIM, "SEP": 0, "BY": 4, "RIN": 1},
]
STAR = [
    {**A3, **RIM, "BY": 2, "BZ": 2, "RIN": 1},
    {**B3, **RIM, "BY": 4, "BZ": 1, "RIN": 0},
]
SEPARABLE_3D = [
    {**A3, **RIM, "SEP": 1, "BY": 2, "BZ": 2, "RIN": 1},
    {**A3, **RIM, "SEP": 0, "BY": 1, "BZ": 2, "RIN": 0},
    {**B3, **RIM, "SEP": 1, "BY": 4, "BZ": 1, "RIN": 1},
]
RIM_NAMES = ("RIM", "RIN", "BY", "BZ", "SEP")


@pytest.fixture(scope="module")
def lifted(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    out = tmp_path_factory.mktemp("lifted")
    paths = {}
    for name, (size, flags) in LIFTED.items():
        path = out / f"{name}.stencil.yaml"
        plain = str(ROOT / "stencils" / "plain" / f"{name}.cl")
        done = run_gtune("lift", plain, "--size", size, *flags, "-o", str(path))
        assert done.returncode == 0, done.stderr
        paths[name] = path
    # a separable 3D blur, clamp boundary: binomial 5 x 3 x 3
    wx, w = {-2: 1, -1: 4, 0: 6, 1: 4, 2: 1}, {-1: 1, 0: 2, 1: 1}
    terms: list[dict[str, Any]] = [
        {"field": "src", "offset": [dx, dy, dz], "coefficient": f"{wx[dx] * w[dy] * w[dz]}/256"}
        for dz in w
        for dy in w
        for dx in wx
    ]
    data: dict[str, Any] = {"name": "bin3", "dims": 3, "dtype": "float32", "boundary": "clamp"}
    data |= {"fields": ["src"], "output": "dst", "terms": terms}
    paths["bin3"] = out / "bin3.stencil.yaml"
    paths["bin3"].write_text(parse_definition(data, "bin3.stencil.yaml").to_yaml())
    return paths


def check(path: Path, variant: str, changes: list[dict[str, int]], sizes: dict[str, int]) -> int:
    """Each configuration of the candidate (the package's default with ``changes``, every
    one the space allows): its outputs within the definition's tolerance of the numpy
    reference and of the package's (the same configuration without RIM, SEP and row
    blocks); fails at the first that is not."""
    definition = load_definition(path)
    package = load_kernel(path).with_sizes(sizes)
    with render_side.clamp_rims(), words.template_ab.rendering_from(variant):
        other = load_kernel(path).with_sizes(sizes)
    assert set(RIM_NAMES[:3]) <= set(other.parameter_names), other.parameter_names
    configs = list(words.allowed(other, changes))
    assert len(configs) == len(changes), "a configuration the candidate's space refuses"
    arrays = words._arrays(package, seed=sum(sizes.values()))
    out = definition.output
    fields = {f: arrays[f] for f in definition.fields}
    want = definition.reference(fields, arrays[out])
    tol = definition.tolerance(max(float(np.abs(a).max()) for a in fields.values()))
    theirs: dict[str, np.ndarray] = {}  # the package's outputs, by configuration
    for cfg in configs:
        b = words._outputs(other, arrays, cfg)[out].astype(np.float64)
        bad = np.argwhere(np.abs(b - want) > tol)
        assert bad.size == 0, (path.name, cfg, "not the reference's", bad[:4].tolist())
        base = {k: v for k, v in cfg.items() if k in package.parameter_names}
        base |= {k: 0 for k in ("SEP",) if k in base}
        key = repr(sorted(base.items()))
        if key not in theirs:
            assert list(words.allowed(package, [base])), (path.name, base)
            theirs[key] = words._outputs(package, arrays, base)[out].astype(np.float64)
        assert np.abs(b - theirs[key]).max() <= tol, (path.name, cfg, "not the package's")
    return len(configs)


@pytest.mark.opencl
@pytest.mark.usefixtures("shared_workers")
def test_clamp_kernels_with_whole_rim_vectors_compute_the_clamp_boundary(
    lifted: dict[str, Path],
) -> None:
    variant = words._variant(PATCH)
    assert check(lifted["blur_clamp"], variant, BLUR, SIZES_2D) == len(BLUR)
    assert check(lifted["hotspot3d"], variant, STAR, SIZES_3D) == len(STAR)
    assert check(lifted["bin3"], variant, SEPARABLE_3D, SIZES_3D) == len(SEPARABLE_3D)


@pytest.mark.opencl
@pytest.mark.usefixtures("shared_workers")
@pytest.mark.parametrize("case", ["u8-2d-clamp", "u8-2d-padded"])
def test_integer_clamp_kernels_with_whole_rim_vectors(case: str, tmp_path: Path) -> None:
    """8-bit fields read as words (test_int_words.py's definitions, 16 lanes), one of
    them padded (its pad holds the neighbours beyond the edge: the primary field's edge
    vectors read it, the candidate's gather is for unpadded fields)."""
    path = tmp_path / "k.stencil.yaml"
    path.write_text(words._definition(case).to_yaml())
    changes = [{"WX": 2, "WY": 2, "BX": 16, "VX": 16, "RIM": 1, "BY": 2, "RIN": 1}]
    assert check(path, words._variant(PATCH), changes, {"NX": 64, "NY": 12}) == 1


def _broken(variant: str, old: str, new: str, count: int) -> str:
    assert variant.count(old) == count, old
    return variant.replace(old, new)


@pytest.mark.opencl
@pytest.mark.usefixtures("shared_workers")
def test_edge_vectors_composed_as_interior_ones_are_caught(lifted: dict[str, Path]) -> None:
    """The candidate with every edge vector read as an interior one (two vectors
    composed, their index clamped into the row, no per-lane clamp): the blur's first
    and last columns differ from the reference."""
    broken = _broken(words._variant(PATCH), "if (xe_) {  ", "if (0) {  ", 2)
    with pytest.raises(AssertionError, match="not the reference's"):
        check(lifted["blur_clamp"], broken, BLUR[1:2], SIZES_2D)


@pytest.mark.opencl
@pytest.mark.usefixtures("shared_workers")
def test_a_last_row_left_unwritten_is_caught(lifted: dict[str, Path]) -> None:
    """The candidate writing rows up to NY - 1 only (as the interior boundary stops
    short of the edge): the last row keeps the output's prior contents."""
    broken = _broken(words._variant(PATCH), "#define HIY NY\n", "#define HIY (NY - 1)\n", 1)
    with pytest.raises(AssertionError, match="not the reference's"):
        check(lifted["blur_clamp"], broken, BLUR[2:3], SIZES_2D)


def _flags(block: str) -> Iterator[list[str]]:
    """The vector technique's switches: with the interior boundary whole rim vectors,
    row blocks, the interior path and SEP; with the clamp boundary without RIM."""
    dims3 = "#define ARRAY_DIMS 3" in block
    yield from (["-DVX=4", "-DBX=4"], ["-DVX=2", "-DBX=4", "-DCX=2"])
    if "#define CLAMP" not in block:
        rim = ["-DVX=4", "-DBX=4", "-DRIM=1", "-DBY=2"] + (["-DBZ=2"] if dims3 else [])
        sep = ["-DSEP=1"] if "SEP_X_TERMS" in block else []
        yield from (rim + sep, [*rim, *sep, "-DRIN=1"])


@pytest.mark.skipif(shutil.which("cpp") is None, reason="needs the C preprocessor")
def test_kernels_without_clamped_rim_vectors_preprocess_as_with_the_package_template(
    lifted: dict[str, Path], tmp_path: Path
) -> None:
    """The interior boundary's real stencils (RIM, RIN, row blocks, SEP) and the clamp
    kernels without RIM: the candidate's text after the C preprocessor is the
    package's."""
    variant = words._variant(PATCH)
    stencils: list[Any] = [REAL[n]() for n in ("blur5", "heat3d", "box27")]
    stencils += [load_definition(lifted[n]) for n in ("blur_clamp", "hotspot3d")]
    for stencil in stencils:
        package = render_source(stencil)
        with words.template_ab.rendering_from(variant):
            candidate = render_source(stencil)
        assert candidate != package
        for switches in _flags(package):
            flags = sizes_of(package) + switches
            want = cpp(package, flags, tmp_path)
            assert want[0] == 0, (stencil, flags, want[1][-300:])
            assert cpp(candidate, flags, tmp_path) == want, (stencil, flags)

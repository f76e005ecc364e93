"""The vec technique's interior path (``RIN``): declared for the vector technique with
whole rim vectors only, fixed at 0 everywhere else, and at 0 the template's code before
it (no OpenCL; the kernels themselves verify in test_interior_path_opencl.py).

``tests/data/stencil_before_rin.cl.gz`` is the template as it was before ``RIN`` (commit
e1859c5): the code it gives is the code ``RIN=0`` must give. When the template's vector
code changes on purpose later, this snapshot (and the test that reads it) retires.
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from gtune.description import load_kernel
from gtune.space.build import build_space, technique_space
from gtune.stencils.definition import load_definition
from gtune.stencils.real import REAL
from gtune.stencils.render import render_source
from tests.space.space_helpers import h100_limits
from tests.stencils.template_snapshot import beside_snapshot, cpp, sizes_of

ROOT = Path(__file__).resolve().parents[2]
STENCILS = ROOT / "stencils"
CORPUS = ROOT / "tests" / "data" / "definitions"
BEFORE = ROOT / "tests" / "data" / "stencil_before_rin.cl.gz"


@pytest.mark.parametrize("name", sorted(REAL))
def test_rin_belongs_to_the_vector_technique_with_whole_rim_vectors(name: str) -> None:
    """Declared {0, 1}, default 0; RIN = 1 needs RIM = 1, and every technique but vec
    fixes it at 0, so specs that do not tune it fit every technique."""
    kernel = load_kernel(STENCILS / f"{name}.yaml")
    rin = kernel.parameter("RIN")
    assert rin.default == 0 and list(rin.domain.values(kernel.sizes)) == [0, 1]
    assert "RIN == 0 or RIM == 1" in [c.text for c in kernel.constraints]
    for technique, cons in kernel.techniques.items():
        texts = [c.text for c in cons]
        assert ("RIN == 0" in texts) == (technique != "vec"), technique


def test_a_boundary_without_whole_rim_vectors_has_no_rin() -> None:
    """The zero boundary has no RIM (its vectors read 0 beyond an edge), so no RIN
    either: its space is what it was. The clamp boundary has both (test_clamp_rim.py)."""
    kernel = load_kernel(CORPUS / "star3d_zero.stencil.yaml")
    assert not {"RIM", "RIN", "BY", "BZ"} & set(kernel.parameter_names)
    for name in ("thermal3d", "jacobi2d_clamp_f64"):
        kernel = load_kernel(CORPUS / f"{name}.stencil.yaml")
        assert {"RIM", "RIN", "BY"} <= set(kernel.parameter_names), name


@pytest.mark.parametrize("name", ["jacobi2d", "box27"])
def test_the_space_grows_only_where_rim_is_1(name: str) -> None:
    """Every configuration with RIN = 1 is a vec one with RIM = 1, and it has exactly
    one twin with RIN = 0: the space gains only the RIM = 1 configurations once more,
    and the other techniques' spaces hold RIN = 0 alone."""
    kernel = load_kernel(STENCILS / f"{name}.yaml")
    kernel = kernel.with_sizes({n: 32 if n == "NX" else 16 for n in kernel.sizes})
    space = build_space(kernel, h100_limits())
    configs = [dict(c) for c in space.enumerate()]
    on = [c for c in configs if c["RIN"] == 1]
    assert on and all(c["RIM"] == 1 and c["VX"] > 1 for c in on)
    assert all(c["STREAM"] == 0 and c["LOCAL"] == 0 for c in on)
    rim = {tuple(sorted(c.items())) for c in configs if c["RIM"] == 1 and c["RIN"] == 0}
    assert {tuple(sorted({**c, "RIN": 0}.items())) for c in on} == rim
    assert len(on) == len(rim)
    for technique in kernel.techniques:
        if technique != "vec":
            sub = technique_space(space, kernel, technique)
            assert all(c["RIN"] == 0 for c in sub.enumerate()), technique


def _configs(dims3: bool, separable: bool) -> list[str]:
    """The techniques' switches, and the vector technique's whole rim vectors with row
    blocks and (separable stencils) SEP."""
    configs = ["", "-DLOCAL=1", "-DSTREAM=1 -DZC=4 -DBX=2", "-DVX=4 -DBX=4"]
    for vx, by, bz in ((2, 2, 2), (4, 1, 4), (4, 4, 1)):
        rim = f"-DVX={vx} -DBX={vx} -DRIM=1 -DBY={by}" + (f" -DBZ={bz}" if dims3 else "")
        configs += [rim] + ([rim + " -DSEP=1"] if separable else [])
    return configs


@pytest.mark.skipif(shutil.which("cpp") is None, reason="needs the C preprocessor")
def test_rin_0_gives_the_code_of_the_template_before_it(tmp_path: Path) -> None:
    """Every real stencil and a multi-field definition (2D, a written rim), rendered,
    preprocess with RIN left out and with RIN=0 to the same text as the template before
    RIN rendered with the same stencil; with RIN=1 (RIM=1) to other code."""
    stencils = [REAL[n]() for n in sorted(REAL)]
    stencils.append(load_definition(CORPUS / "sobel2d_rim_copy.stencil.yaml"))
    for block, new, old in beside_snapshot(BEFORE, stencils):
        dims3 = "#define ARRAY_DIMS 3" in block
        for cfg in _configs(dims3, "SEP_X_TERMS" in block):
            flags = sizes_of(block) + cfg.split()
            want = cpp(old, flags, tmp_path)
            assert want[0] == 0, (block[:80], cfg)
            for rin in ([], ["-DRIN=0"]):
                assert cpp(new, flags + rin, tmp_path) == want, (block[:80], cfg, rin)
            if "RIM=1" in cfg:
                assert cpp(new, [*flags, "-DRIN=1"], tmp_path)[1] != want[1]


@pytest.mark.skipif(shutil.which("cpp") is None, reason="needs the C preprocessor")
def test_rin_without_whole_rim_vectors_is_an_error(tmp_path: Path) -> None:
    source = render_source(REAL["heat3d"]())
    flags = ["-DNX=64", "-DNY=32", "-DNZ=16", "-DVX=4", "-DBX=4", "-DRIN=1"]
    assert cpp(source, [*flags, "-DRIM=1"], tmp_path)[0] == 0
    src = tmp_path / "k.cl"
    src.write_text(source)
    pre = subprocess.run(["cpp", "-P", "-undef", *flags, str(src)], capture_output=True, text=True)
    assert pre.returncode != 0 and "RIN (the interior path) applies" in pre.stderr

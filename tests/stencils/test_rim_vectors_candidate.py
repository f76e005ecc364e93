"""Issue 49's candidate ``benchmarks/candidates/rim_vectors.patch``: a definition whose
interior boundary writes its rim (``rim: copy`` or a constant) has each written row's
first and last points stored by the vector that holds them (the rim lanes take their
rim value, the vector is stored whole), not written apart point by point. On the H200
the rim written apart made heat3d 15 % slower than heat3d with its rim kept
(``benchmarks/results/h200-limit/x-rim/``): each row's first and last 32-byte sectors
were written in part twice.

The candidate must leave every kernel whose rim is kept as it was (the same text after
the preprocessor) and give the package's bits where a rim is written.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from gtune.stencils.real import REAL
from gtune.stencils.render import render_source
from tests.stencils import test_int_words as words
from tests.stencils.template_snapshot import cpp, sizes_of

pytestmark = pytest.mark.candidate  # a candidate template: run with --candidates

ROOT = Path(__file__).resolve().parents[2]
PATCH = "rim_vectors.patch"
WRITTEN_RIMS = [
    ROOT / "benchmarks/results/h200-limit/x-rim/defs/heat3d_rimcopy.stencil.yaml",
    ROOT / "tests/data/definitions/sobel2d_rim_copy.stencil.yaml",
    ROOT / "benchmarks/predict/corpus/lifted_zero_rim.stencil.yaml",
]


@pytest.mark.skipif(shutil.which("cpp") is None, reason="needs the C preprocessor")
def test_kept_rims_preprocess_as_with_the_package_template(tmp_path: Path) -> None:
    variant = words._variant(PATCH)
    for name in sorted(REAL):
        new = render_source(REAL[name]())
        with words.template_ab.rendering_from(variant):
            old = render_source(REAL[name]())
        assert old != new  # the other template, not the package's
        for cfg in words._float_configs(new):
            flags = sizes_of(new) + cfg.split()
            want = cpp(new, flags, tmp_path)
            assert want[0] == 0, (name, cfg, want[1][-300:])
            assert cpp(old, flags, tmp_path) == want, (name, cfg)


def exact(variant: Path, kernels: list[Path]) -> subprocess.CompletedProcess[str]:
    """``benchmarks/template_exact.py`` on PoCL: written-rim definitions, the package's
    template against ``variant``, on its grid of small vector tiles."""
    cmd = [sys.executable, str(ROOT / "benchmarks" / "template_exact.py")]
    cmd += ["--variant", str(variant), "--size", "32", "--kernels", *map(str, kernels)]
    return subprocess.run(cmd, capture_output=True, text=True, timeout=900, cwd=ROOT)


@pytest.mark.opencl
def test_written_rims_give_the_packages_bits_and_a_skipped_lane_is_caught(
    tmp_path: Path,
) -> None:
    """Every configuration of the grid (`RIM` 0 and 1, `RIN` 0 and 1, row blocks) the
    same bits; a variant whose rim vectors store only their interior lanes (the rim
    points of written rows then written by no one) is caught."""
    good = exact(ROOT / "benchmarks" / "candidates" / PATCH, WRITTEN_RIMS)
    assert good.returncode == 0, good.stdout[-2000:] + good.stderr[-2000:]
    assert ", different: 0, skipped: 0" in good.stdout
    text = words._variant(PATCH)
    mutant = text.replace(
        "#else\n#define STORE_X_RIM(d, v, zz, yy, x) STORE_LANES(d, v, x)\n#endif",
        "#endif\n#undef STORE_X_RIM\n#define STORE_X_RIM(d, v, zz, yy, x) STORE_LANES(d, v, x)",
    )
    assert mutant != text
    (tmp_path / "bad.cl").write_text(mutant)
    bad = exact(tmp_path / "bad.cl", WRITTEN_RIMS[1:])  # the 2D ones: a copy and a constant
    assert bad.returncode == 1, bad.stdout[-2000:] + bad.stderr[-2000:]
    assert "DIFFERENT" in bad.stdout

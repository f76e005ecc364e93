"""Periodic and mirrored boundaries, as PDE codes on a torus and image filters write
them: ``(x + 1) % nx`` or ``x == 0 ? nx - 1 : x - 1`` (``boundary: wrap``), a tap at -1
read at 1 (OpenCV's default ``BORDER_REFLECT_101``: ``boundary: reflect``) or at 0
(``BORDER_REFLECT``: ``boundary: symmetric``). Lift tells them apart by the output on
random inputs once clamp and zero padding miss it; the impulses that read the weights lie
twice the radius inside, where no mirror folds a tap back onto them. The template maps
the indices where clamp clamps them (``BORDER``), so a lifted kernel tunes, verifies
against its original and exports a drop-in kernel. The corpus kernels are
``stencils/plain/mirror_*.cl`` and ``periodic_*.cl``."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from gtune.stencils.definition import load_definition
from tests.inprocess import Cli
from tests.stencils.plain_helpers import PLAIN, lift_run_export
from tests.stencils.test_lift_local_args import _drop_in_matches

pytestmark = [pytest.mark.opencl, pytest.mark.usefixtures("shared_workers")]

MANIFEST = yaml.safe_load((PLAIN / "manifest.yaml").read_text())["kernels"]

# a 2D filter of radius 2 in x and 1 in y whose taps beyond an edge are mapped by MAP
FILTER = """
int map(int i, int n) { MAP }
__kernel void f(__global const T *src, __global float *dst, int w, int h)
{
    const int x = get_global_id(0), y = get_global_id(1);
    if (x >= w || y >= h) return;
    float s = 0.0f;
    for (int j = -1; j <= 1; ++j)
        for (int i = -2; i <= 2; ++i)
            s += (float)(3 + i + 2 * j) * src[map(y + j, h) * w + map(x + i, w)];
    dst[y * w + x] = s / 16.0f;
}
"""
MAPS = {
    "wrap": "return i < 0 ? i + n : (i >= n ? i - n : i);",
    "reflect": "return i < 0 ? -i : (i >= n ? 2 * n - 2 - i : i);",
    "symmetric": "return i < 0 ? -1 - i : (i >= n ? 2 * n - 1 - i : i);",
    "clamp": "return clamp(i, 0, n - 1);",
}

# 3D heat on a torus: the neighbours' indices as a periodic code computes them
TORUS = """
__kernel void heat(__global const float *u, __global float *v, int nx, int ny, int nz,
                   float a)
{
    const int x = get_global_id(0), y = get_global_id(1), z = get_global_id(2);
    const int xm = x == 0 ? nx - 1 : x - 1, xp = x == nx - 1 ? 0 : x + 1;
    const int ym = (y + ny - 1) % ny, yp = (y + 1) % ny;
    const int zm = (z + nz - 1) % nz, zp = (z + 1) % nz;
    const int c = (z * ny + y) * nx + x;
    v[c] = u[c] + a * (u[(z * ny + y) * nx + xm] + u[(z * ny + y) * nx + xp]
                       + u[(z * ny + ym) * nx + x] + u[(z * ny + yp) * nx + x]
                       + u[(zm * ny + y) * nx + x] + u[(zp * ny + y) * nx + x] - 6.0f * u[c]);
}
"""


def _lift(tmp_path: Path, gtune_here: Cli, source: str, *flags: str) -> tuple[int, str, Path]:
    path = tmp_path / "k.cl"
    path.write_text(source)
    out = tmp_path / "k.stencil.yaml"
    done = gtune_here("lift", str(path), *flags, "-o", str(out))
    return done.returncode, " ".join(done.stderr.split()), out


@pytest.mark.parametrize(
    ("mapping", "element"),
    [("wrap", "float"), ("reflect", "float"), ("symmetric", "float"), ("reflect", "uchar")],
)
def test_a_filter_lifts_with_the_boundary_its_taps_beyond_the_edge_have(
    tmp_path: Path, gtune_here: Cli, mapping: str, element: str
) -> None:
    """The same filter with each mapping of its taps (float and uchar pixels): the
    definition's boundary is that mapping, checked by lift against the kernel at every
    point (the uchar one bit for bit)."""
    source = FILTER.replace("MAP", MAPS[mapping]).replace("T *src", f"{element} *src")
    rc, said, out = _lift(
        tmp_path, gtune_here, source, "--size", "32x24", "--scalar", "w=NX", "--scalar", "h=NY"
    )
    assert rc == 0, said
    assert f"boundary {mapping}" in said
    defn = load_definition(out)
    assert defn.boundary == mapping and defn.radius[:2] == (2, 1)
    assert defn.storage == ("uint8" if element == "uchar" else "")


def test_a_symmetric_mirror_of_radius_one_reads_what_clamp_reads(
    tmp_path: Path, gtune_here: Cli
) -> None:
    """With the edge repeated, a tap one point beyond it reads the edge: clamp, which
    lift finds first, is the same boundary."""
    source = FILTER.replace("MAP", MAPS["symmetric"]).replace("T *src", "float *src")
    source = source.replace("i = -2; i <= 2", "i = -1; i <= 1")
    rc, said, out = _lift(
        tmp_path, gtune_here, source, "--size", "32x24", "--scalar", "w=NX", "--scalar", "h=NY"
    )
    assert rc == 0, said
    assert load_definition(out).boundary == "clamp"


def test_a_boundary_that_differs_from_axis_to_axis_is_refused(
    tmp_path: Path, gtune_here: Cli
) -> None:
    """Wrapped in x, clamped in y: no one boundary of a definition reproduces it."""
    source = FILTER.replace("MAP", MAPS["wrap"]).replace("T *src", "float *src")
    source = source.replace("map(y + j, h)", "clamp(y + j, 0, h - 1)")
    rc, said, out = _lift(
        tmp_path, gtune_here, source, "--size", "32x24", "--scalar", "w=NX", "--scalar", "h=NY"
    )
    assert rc == 2 and not out.exists()
    assert "wrapped (periodic) or mirrored neighbours" in said
    assert "a boundary that differs from axis to axis" in said


def test_a_3d_step_on_a_torus_lifts_tunes_and_verifies(tmp_path: Path, gtune_here: Cli) -> None:
    """Each neighbour index computed as a periodic code computes it, in 3D: boundary
    wrap; the tuned kernel at another size verifies against the original's output."""
    rc, said, out = _lift(
        tmp_path,
        gtune_here,
        TORUS,
        "--size",
        "16x12x10",
        *("--scalar", "nx=NX", "--scalar", "ny=NY", "--scalar", "nz=NZ", "--scalar", "a=0.1"),
    )
    assert rc == 0, said
    assert load_definition(out).boundary == "wrap"
    ran = gtune_here("run", str(out), "--size", "32x16x12", "--budget", "2", db=tmp_path / "r.db")
    assert ran.returncode == 0, ran.stderr
    said = " ".join((ran.stdout + ran.stderr).split())
    assert "verified against the original kernel's output" in said
    assert "wrong_result" not in said


def test_opencvs_filter2d_with_its_default_border_lifts_tunes_and_drops_in(
    tmp_path: Path, gtune_here: Cli
) -> None:
    """OpenCV's filter2D form (bytes, EXTRAPOLATE, BORDER_REFLECT_101 by a define): lift
    -> run (checked against the original) -> export -> the exported kernel, launched
    with the original's host arguments, gives the original's output. (Every
    ``mirror_*``/``periodic_*`` kernel of the corpus lifts in ``benchmarks/lift_corpus.py
    --small``; its entries say ``ci: none``.)"""
    name = "mirror_filter2d_r101"
    assert "BORDER_REFLECT_101=" in MANIFEST[name]["flags"]
    out, tuned = lift_run_export(name, tmp_path, gtune_here)
    defn = load_definition(out)
    assert defn.boundary == "reflect"
    _drop_in_matches(tuned, defn, {"NX": 64, "NY": 32})


# OpenCV's 8-bit filters take a float scale and offset (boxFilter's alpha, filter2D's
# delta) that a definition of integer elements cannot read at run time: held with --fixed
SCALED_U8 = """
int r101(int i, int n) { return i < 0 ? -i : (i >= n ? 2 * n - 2 - i : i); }
__kernel void box(__global const uchar *src, __global uchar *dst, int w, int h,
                  float alpha, float delta)
{
    const int x = get_global_id(0), y = get_global_id(1);
    if (x >= w || y >= h) return;
    int s = 0;
    for (int j = -1; j <= 1; ++j)
        for (int i = -1; i <= 1; ++i)
            s += src[r101(y + j, h) * w + r101(x + i, w)];
    dst[y * w + x] = convert_uchar_sat_rte(alpha * (float)s + delta);
}
"""


def test_a_float_scale_of_an_integer_kernel_is_held_with_fixed(
    tmp_path: Path, gtune_here: Cli
) -> None:
    """Without --fixed the scale is refused with the hint to hold it; held, the
    definition takes the kernel at that value (alpha in the weights, bit for bit) and
    records the argument as one the tuned kernel ignores. A float weight of a float
    kernel is a coefficient: --fixed refuses it."""
    flags = ("--size", "32x24", "--scalar", "w=NX", "--scalar", "h=NY")
    values = ("--scalar", "alpha=1/9", "--scalar", "delta=0")
    rc, said, out = _lift(tmp_path, gtune_here, SCALED_U8, *flags, *values)
    assert rc == 2 and "--fixed alpha" in said
    rc, said, out = _lift(
        tmp_path, gtune_here, SCALED_U8, *flags, *values, "--fixed", "alpha", "--fixed", "delta"
    )
    assert rc == 0, said
    defn = load_definition(out)
    assert defn.boundary == "reflect" and defn.storage == "uint8" and len(defn.terms) == 9
    assert {t.coefficient.factor for t in defn.terms} == {1 / 9}
    ignored = {a.name: a.value for a in defn.arguments if a.kind == "ignored"}
    assert ignored == {"alpha": pytest.approx(1 / 9), "delta": 0.0}
    floats = FILTER.replace("MAP", MAPS["wrap"]).replace("T *src", "float *src")
    floats = floats.replace("int w, int h)", "int w, int h, float k)").replace("/ 16.0f", "* k")
    out.unlink()
    rc, said, _ = _lift(tmp_path, gtune_here, floats, *flags, "--scalar", "k=0.5", "--fixed", "k")
    assert rc == 2 and "a float scalar of a float kernel" in said

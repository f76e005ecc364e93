"""Lifting the idioms of image and exercise codes (issue 48, "Lift wider"), on numpy
kernels: a rim copied or zeroed (lifted with ``rim: copy`` or ``rim: 0``), two steps
per launch with a fixed rim (lifted with ``steps: 2``), one-sided stencils written
where their taps lie inside (lifted with ``band: reach``), pixels clamped whole (refused,
saying so), and a launch that fails at ``--global NX,NY`` but runs transposed (the
command retries it)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest
import yaml

from gtune.stencils.lift import EDGE_MISMATCH, Interface, NotAStencil, ScalarArg, lift_with
from tests.conftest import ROOT
from tests.inprocess import Cli

# evaluators share the session's worker processes (tests/conftest.py)
pytestmark = pytest.mark.usefixtures("shared_workers")

SHAPE = (20, 24)


def _face(dtype: str = "float32") -> Interface:
    sizes = (ScalarArg("nx", "int32", SHAPE[1], "x"), ScalarArg("ny", "int32", SHAPE[0], "y"))
    return Interface("numpy.cl", "k", SHAPE, dtype, ("u",), "v", ("u", "v", "nx", "ny"), sizes)


def _relax(a: np.ndarray) -> np.ndarray:
    """The mean of the four neighbours, inside a rim of one."""
    return 0.25 * (a[1:-1, :-2] + a[1:-1, 2:] + a[:-2, 1:-1] + a[2:, 1:-1])


@pytest.mark.parametrize(("rim", "want"), [("copy", "copy"), (0.0, "0.0")])
def test_a_rim_copied_or_zeroed_lifts_to_a_written_rim(rim: Any, want: str) -> None:
    """``out = in`` (or 0) at the edges, the stencil inside: the interior boundary with
    ``rim: copy`` (or ``rim: 0``), whose reference reproduces the kernel everywhere."""

    def probe(inputs: Any, out: np.ndarray, scalars: Any) -> np.ndarray:
        a = inputs["u"]
        res = a.copy() if rim == "copy" else np.full_like(a, rim)
        res[1:-1, 1:-1] = _relax(a) - a[1:-1, 1:-1]
        return res

    definition, _ = lift_with(_face(), probe, name="k")
    assert (definition.boundary, definition.rim) == ("interior", want)
    u = np.random.default_rng(5).uniform(-1, 1, SHAPE).astype(np.float32)
    out = np.full(SHAPE, 9.0, np.float32)
    got = definition.reference({"u": u}, out)
    assert np.allclose(got, probe({"u": u}, out, {}), rtol=0, atol=1e-6)


def test_a_rim_wider_than_the_stencil_is_refused() -> None:
    """A copied rim two points wide around a stencil that reaches one: no definition
    writes it (the rim is as wide as the radius), refused as not shift-invariant."""

    def probe(inputs: Any, out: np.ndarray, scalars: Any) -> np.ndarray:
        a = inputs["u"]
        res = a.copy()
        res[2:-2, 2:-2] = _relax(a)[1:-1, 1:-1]
        return res

    with pytest.raises(NotAStencil, match="changes with the position of the impulse"):
        lift_with(_face(), probe, name="k")


def test_a_rim_copied_from_another_field_is_refused_saying_so() -> None:
    """The rim a copy of the second field (read only at the centre), not the primary
    one: no rim a definition writes; the refusal names what the rim holds."""
    sizes = (ScalarArg("nx", "int32", SHAPE[1], "x"), ScalarArg("ny", "int32", SHAPE[0], "y"))
    face = Interface(
        "numpy.cl", "k", SHAPE, "float32", ("u", "s"), "v", ("u", "s", "v", "nx", "ny"), sizes
    )

    def probe(inputs: Any, out: np.ndarray, scalars: Any) -> np.ndarray:
        res = inputs["s"].copy()
        res[1:-1, 1:-1] = _relax(inputs["u"]) + inputs["s"][1:-1, 1:-1]
        return res

    with pytest.raises(NotAStencil, match="a copy of s on its rim") as info:
        lift_with(face, probe, name="k")
    assert "x 1, y 1 wide" in info.value.why


def test_two_steps_with_a_fixed_rim_lift_with_steps() -> None:
    """Each step writes inside a rim of one that keeps the input's values: one launch
    writes the points one from the edges, its composite stencil reaches two. Lifted as
    two steps of the one-step stencil (the definition's reference_steps with the
    output starting as a copy of the input)."""

    def probe(inputs: Any, out: np.ndarray, scalars: Any) -> np.ndarray:
        a = inputs["u"]
        first = a.copy()
        first[1:-1, 1:-1] = _relax(a)
        res = out.copy()
        res[1:-1, 1:-1] = _relax(first)
        return res

    got, _ = lift_with(_face(), probe, name="k")
    assert got.steps == 2 and got.boundary == "interior"
    assert sorted(t.offset[:2] for t in got.terms) == [(-1, 0), (0, -1), (0, 1), (1, 0)]
    assert all(t.coefficient.factor == 0.25 for t in got.terms)


def test_writing_less_than_the_reach_without_being_steps_is_refused() -> None:
    """One from the edges written, reads two away, and no power of a smaller stencil."""

    def probe(inputs: Any, out: np.ndarray, scalars: Any) -> np.ndarray:
        a = np.pad(inputs["u"], 2, mode="edge")
        res = out.copy()
        c = a[2:-2, 2:-2]
        inner = 0.5 * c + 0.25 * a[2:-2, :-4] + 0.3 * a[2:-2, 4:]
        res[1:-1, 1:-1] = inner[1:-1, 1:-1]
        return res

    with pytest.raises(NotAStencil, match="but its stencil reaches x 2"):
        lift_with(_face(), probe, name="k")


def _one_sided(a: np.ndarray) -> np.ndarray:
    """Upwind in x (taps x-2, x-1), forward in y (y+1) and the centre: written where
    every tap lies inside, x from 2 and y up to the last row but one."""
    return 0.5 * a[:-1, 2:] - 0.25 * a[:-1, 1:-1] + 0.125 * a[:-1, :-2] + 0.0625 * a[1:, 2:]


def test_a_one_sided_stencil_lifts_with_band_reach() -> None:
    """A kernel writing every point whose taps lie inside the array (up to the edges
    it does not read beyond) lifts to the interior boundary with ``band: reach``, whose
    reference reproduces the kernel, the unwritten points kept, everywhere."""

    def probe(inputs: Any, out: np.ndarray, scalars: Any) -> np.ndarray:
        res = out.copy()
        res[:-1, 2:] = _one_sided(inputs["u"])
        return res

    definition, _ = lift_with(_face(), probe, name="k")
    assert (definition.boundary, definition.band, definition.rim) == ("interior", "reach", "keep")
    assert definition.margins == ((2, 0, 0), (0, 1, 0))
    u = np.random.default_rng(9).uniform(-1, 1, SHAPE).astype(np.float32)
    out = np.full(SHAPE, 9.0, np.float32)
    got = definition.reference({"u": u}, out)
    assert np.allclose(got, probe({"u": u}, out, {}), rtol=0, atol=1e-6)


def test_an_off_centre_band_other_than_the_reach_is_refused_naming_the_reach() -> None:
    """The same stencil written from x = 3 (one column short of its reach): no band a
    definition writes; the reason gives the band and where the taps lie inside."""

    def probe(inputs: Any, out: np.ndarray, scalars: Any) -> np.ndarray:
        res = out.copy()
        res[:-1, 3:] = _one_sided(inputs["u"])[:, 1:]
        return res

    with pytest.raises(NotAStencil, match="off-centre band along y") as info:
        lift_with(_face(), probe, name="k")
    assert (
        "(x 3..23, y 0..18), not the points whose taps all lie inside the array (x 2..23, y 0..18)"
        in info.value.why
    )


def test_pixels_clamped_whole_are_refused_saying_so() -> None:
    """uchar2 pixels as a row of bytes: x neighbours two bytes away, clamped to the
    edge pixel's own channel; the refusal says the edges differ, not the rounding."""

    def probe(inputs: Any, out: np.ndarray, scalars: Any) -> np.ndarray:
        a = inputs["u"].astype(np.float32)
        x = np.arange(SHAPE[1])
        left = np.where(x - 2 < 0, x, x - 2)
        right = np.where(x + 2 >= SHAPE[1], x, x + 2)
        s = (a[:, left] + a + a[:, right]) * np.float32(1 / 3)
        return np.clip(np.rint(s), 0, 255).astype(np.uint8)

    with pytest.raises(NotAStencil, match="pixels of vector elements") as info:
        lift_with(_face("uint8"), probe, name="k")
    assert EDGE_MISMATCH in info.value.why


def _sized_face() -> Interface:
    sizes = (ScalarArg("nx", "int32", SHAPE[1], "x"), ScalarArg("ny", "int32", SHAPE[0], "y"))
    return Interface(
        "numpy.cl",
        "k",
        SHAPE,
        "float32",
        ("u",),
        "v",
        ("u", "v", "c", "nx", "ny"),
        (ScalarArg("c", "float32", 0.5), *sizes),
    )


def test_zero_padding_with_scalar_weights_lifts_to_the_zero_boundary() -> None:
    """Taps outside the array skipped (zero padding), the weights scalars: the kernel
    writes every point and reads 0 beyond the edges, ``boundary: zero``, whose reference
    reproduces it at other scalar values too."""

    def probe(inputs: Any, out: np.ndarray, scalars: Any) -> np.ndarray:
        a = np.pad(inputs["u"], 1)  # zeros around
        c = np.float32(scalars["c"])
        return (c * (a[1:-1, :-2] + a[2:, 1:-1]) + a[1:-1, 1:-1]).astype(np.float32)

    definition, _ = lift_with(_sized_face(), probe, name="k")
    assert definition.boundary == "zero"
    rng = np.random.default_rng(3)
    u = rng.uniform(-1, 1, SHAPE).astype(np.float32)
    out = np.zeros(SHAPE, np.float32)
    want = probe({"u": u}, out, {"c": 1.75})
    got = definition.reference({"u": u}, out, {"c": 1.75})
    assert np.allclose(got, want, rtol=0, atol=definition.tolerance(1.0, {"c": 1.75}))
    assert got[0, 0] != np.float32(1.75) * (u[0, 0] + u[1, 0]) + u[0, 0]  # not clamped


def test_zero_padding_in_x_only_is_refused_once() -> None:
    """Zeros beyond the x edges, clamped rows in y: no boundary of a definition. The edge
    refusal is given once, not again after the reading with powers (which cannot mend a
    boundary)."""

    def probe(inputs: Any, out: np.ndarray, scalars: Any) -> np.ndarray:
        a = np.pad(np.pad(inputs["u"], ((1, 1), (0, 0)), mode="edge"), ((0, 0), (1, 1)))
        c = np.float32(scalars["c"])
        return (c * (a[1:-1, :-2] + a[2:, 1:-1]) + a[1:-1, 1:-1]).astype(np.float32)

    with pytest.raises(NotAStencil, match="zero padding") as info:
        lift_with(_sized_face(), probe, name="k")
    assert EDGE_MISMATCH in info.value.why
    assert "read with powers" not in info.value.why


def test_an_integer_division_is_refused_with_the_reason() -> None:
    """``s / 9`` in integers is exact; the definition's float32 sum of 1/9-weighted
    terms lands below the whole quotients now and then: refused, saying why."""

    def probe(inputs: Any, out: np.ndarray, scalars: Any) -> np.ndarray:
        a = inputs["u"].astype(np.int64)
        res = out.copy()
        s = sum(
            a[1 + j : SHAPE[0] - 1 + j, 1 + i : SHAPE[1] - 1 + i]
            for j in (-1, 0, 1)
            for i in (-1, 0, 1)
        )
        res[1:-1, 1:-1] = (s // 9).astype(np.uint8)
        return res

    with pytest.raises(NotAStencil, match="not bit for bit") as info:
        lift_with(_face("uint8"), probe, name="k")
    assert "s / 9 in integers" in info.value.why


def test_a_quotient_of_weights_entries_lifts() -> None:
    """A parameter block in a __constant array (alpha, dt, h): the weight
    ``p[0]*p[1]/(p[2]*p[2])`` is a quotient of its entries, recorded so, and the
    definition's reference follows other values of the array."""
    from gtune.stencils.definition import parse_definition, weight_entries

    sizes = (ScalarArg("nx", "int32", SHAPE[1], "x"), ScalarArg("ny", "int32", SHAPE[0], "y"))
    entries = tuple(
        ScalarArg(f"p[{i}]", "float32", v, entry_of="p") for i, v in enumerate((0.5, 0.1, 0.5))
    )
    face = Interface(
        "numpy.cl",
        "k",
        SHAPE,
        "float32",
        ("u",),
        "v",
        ("u", "v", "p", "nx", "ny"),
        (*entries, *sizes),
        weights={"p": 3},
    )

    def probe(inputs: Any, out: np.ndarray, scalars: Any) -> np.ndarray:
        a, p = inputs["u"], inputs["p"]
        with np.errstate(divide="ignore", invalid="ignore"):  # (lift tries p[2] = 0)
            r = np.float32(p[0] * p[1] / (p[2] * p[2]))
        res = out.copy()
        res[1:-1, 1:-1] = a[1:-1, 1:-1] + r * (4 * _relax(a) - 4 * a[1:-1, 1:-1])
        return res

    got, _ = lift_with(face, probe, name="k")
    texts = {str(t.coefficient) for t in got.terms if t.offset[:2] == (1, 0)}
    assert texts == {"p[0]*p[1]/(p[2]*p[2])"}
    again = parse_definition(yaml.safe_load(got.to_yaml()), "k.stencil.yaml")
    assert again == got
    rng = np.random.default_rng(2)
    a = rng.uniform(-1, 1, SHAPE).astype(np.float32)
    p = np.array([0.3, 0.2, 0.7], np.float32)
    want = probe({"u": a, "p": p}, np.zeros_like(a), {})
    ref = again.reference({"u": a}, np.zeros_like(a), weight_entries({"p": p}))
    np.testing.assert_allclose(ref, want, rtol=1e-5, atol=1e-5)


@pytest.mark.opencl
def test_a_launch_that_fails_untransposed_is_lifted_transposed(
    tmp_path: Path, gtune_here: Cli
) -> None:
    """A double-precision blur with dimension 0 the row and 4x16 work-groups (rows x
    columns): at --global NX,NY (32 x 20) it cannot launch; lift tries NY,NX, says so
    and records it."""
    entry = yaml.safe_load((ROOT / "stencils/plain/manifest.yaml").read_text())["kernels"][
        "blur_f64_rows"
    ]
    flags = list(entry["flags"])
    at = flags.index("--global")
    del flags[at : at + 2]  # as a user would first try it
    out = tmp_path / "rows.stencil.yaml"
    plain = str(ROOT / "stencils/plain" / entry["source"])
    done = gtune_here("lift", plain, "--size", entry["size"], *flags, "-o", str(out))
    assert done.returncode == 0, done.stderr
    assert "INVALID_WORK_GROUP_SIZE" in done.stderr and "launched --global NY,NX" in done.stderr
    defn = yaml.safe_load(out.read_text())
    assert defn["dtype"] == "float64" and defn["original"]["global"] == ["NY", "NX"]


@pytest.mark.opencl
def test_a_pointer_to_pixels_is_explained_when_it_fails(tmp_path: Path, gtune_here: Cli) -> None:
    """An RGBA uchar4 blur lifted with its width as NX (not NX/4): the probes write
    past the array; the command first says how plain mode reads a uchar4 pointer."""
    plain = str(ROOT / "stencils/plain/blur_rgba.cl")
    out = tmp_path / "rgba.stencil.yaml"
    args = ("--scalar", "width=NX", "--scalar", "height=NY", "--default", "WX=16,WY=8")
    done = gtune_here("lift", plain, "--size", "32x24", *args, "-o", str(out))
    assert done.returncode == 2 and "Traceback" not in done.stderr and not out.exists()
    assert "dst: a uchar4 pointer: the array is given in uchars" in done.stderr
    assert "writes past the end of 'dst'" in done.stderr


@pytest.mark.opencl
@pytest.mark.slow
def test_a_one_sided_kernel_exports_a_drop_in_kernel(tmp_path: Path, gtune_here: Cli) -> None:
    """upwind_linear.cl lifted with band: reach, tuned with the vector technique and
    exported: the documented example runs the tuned kernel and the original on fresh
    data and finds the same output (the last column, which the symmetric interior would
    leave, included), at the tuned size and a larger one."""
    from tests.conftest import run_tuned_example

    entry = yaml.safe_load((ROOT / "stencils/plain/manifest.yaml").read_text())["kernels"][
        "upwind_linear"
    ]
    out = tmp_path / "upwind.stencil.yaml"
    plain = str(ROOT / "stencils/plain" / entry["source"])
    done = gtune_here("lift", plain, "--size", entry["size"], *entry["flags"], "-o", str(out))
    assert done.returncode == 0, done.stderr
    assert "band reach" in done.stderr and yaml.safe_load(out.read_text())["band"] == "reach"
    db, size = tmp_path / "r.db", "64x16"
    ran = gtune_here("run", str(out), "--size", size, "--technique", "vec", "--budget", "3", db=db)
    assert ran.returncode == 0, ran.stderr
    exported = gtune_here("export", str(out), "--size", size, "-o", str(tmp_path / "t"), db=db)
    assert exported.returncode == 0, exported.stderr
    tuned = tmp_path / "t" / "upwind_tuned.json"
    assert "#define RX_HI 0" in (tmp_path / "t" / "upwind_tuned.cl").read_text()
    for extra in ([], ["--size", "128x32"]):
        done = run_tuned_example(tuned, "--original", str(out), *extra)
        assert done.returncode == 0, done.stdout + done.stderr
        assert "un: max |tuned - original|" in done.stdout and "(ok)" in done.stdout

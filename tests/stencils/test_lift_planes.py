"""Lifting a kernel launched once per plane (the plane index a scalar argument): it is
lifted as a 3D stencil, tuned against the original run plane by plane, and exported as
one whole-array kernel with a note on the host loop it replaces."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
import yaml

from gtune.stencils.definition import load_definition
from tests.conftest import ROOT, run_tuned_example
from tests.inprocess import Cli

# evaluators share the session's worker processes (tests/conftest.py)
pytestmark = pytest.mark.usefixtures("shared_workers")

PLAIN = ROOT / "stencils" / "plain"
ENTRY = yaml.safe_load((PLAIN / "manifest.yaml").read_text())["kernels"]["heat_planes"]


def _lift(gtune_here: Cli, out: Path, *extra: str) -> subprocess.CompletedProcess[str]:
    args = ["lift", str(PLAIN / ENTRY["source"]), "--size", ENTRY["size"], *ENTRY["flags"]]
    return gtune_here(*args, *extra, "-o", str(out))


@pytest.mark.opencl
def test_the_plane_index_is_inferred_and_recorded(tmp_path: Path, gtune_here: Cli) -> None:
    """Without --plane-index the kernel writes one plane (or none) per launch; its
    integer argument k that is no size is tried as the plane index, with a note."""
    out = tmp_path / "planes.stencil.yaml"
    done = _lift(gtune_here, out)
    assert done.returncode == 0, done.stderr
    assert "lifted as --plane-index k=z" in done.stderr
    defn = load_definition(out)
    assert defn.dims == 3 and len(defn.terms) == 7 and defn.boundary == "interior"
    assert defn.original is not None and defn.original["plane_index"] == "k=z"
    k = next(a for a in defn.arguments if a.name == "k")
    assert k.kind == "ignored"  # the drop-in kernel keeps the argument, and ignores it


@pytest.mark.opencl
@pytest.mark.parametrize(
    ("flag", "why"),
    [("k", "expected SCALAR=AXIS"), ("c0=z", "no integer argument c0"), ("q=z", "no integer")],
)
def test_a_wrong_plane_index_is_an_error(
    tmp_path: Path, flag: str, why: str, gtune_here: Cli
) -> None:
    done = _lift(gtune_here, tmp_path / "p.stencil.yaml", "--plane-index", flag)
    assert done.returncode == 2
    assert why in done.stderr and "--plane-index" in done.stderr
    assert "Traceback" not in done.stderr


@pytest.mark.opencl
@pytest.mark.slow
def test_plane_kernel_tunes_and_exports_a_whole_array_kernel(
    tmp_path: Path, gtune_here: Cli
) -> None:
    out = tmp_path / "planes.stencil.yaml"
    assert _lift(gtune_here, out, "--plane-index", "k=z").returncode == 0
    db = tmp_path / "r.db"
    size = "32x16x10"
    ran = gtune_here("run", str(out), "--size", size, "--budget", "3", "--runs", "3", db=db)
    assert ran.returncode == 0, ran.stderr
    assert "writes one plane per launch" in ran.stdout + ran.stderr
    exported = gtune_here("export", str(out), "--size", size, "-o", str(tmp_path / "t"), db=db)
    assert exported.returncode == 0, exported.stderr
    assert "replace the loop `for (k = 0; k < nz; k++)" in exported.stderr
    tuned = tmp_path / "t" / "planes_tuned.json"
    for extra in ([], ["--size", "64x32x20"]):  # the original looped over the planes
        done = run_tuned_example(tuned, "--original", str(out), *extra)
        assert done.returncode == 0, done.stdout + done.stderr
        assert "out: max |tuned - original|" in done.stdout and "(ok)" in done.stdout

"""The C host example on PoCL: heat3d tuned for real at two tiny sizes, exported as a
bundle (``gtune export --sizes``), the example compiled with ``cc`` against its header
and run at a tuned size, an untuned size and a size nothing tuned fits; it must choose
as the bundle's Python lookup does and compute what a plain C loop computes."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from gtune.tuned import read_bundle
from tests.conftest import ROOT
from tests.inprocess import Cli

pytestmark = [
    pytest.mark.opencl,
    pytest.mark.slow,
    pytest.mark.skipif(
        shutil.which("cc") is None or not Path("/usr/include/CL/cl.h").exists(),
        reason="needs a C compiler and the OpenCL headers (bootstrap.sh installs them)",
    ),
]

HEAT = str(ROOT / "stencils" / "heat3d.cl")
EXAMPLE = ROOT / "examples" / "c_host" / "heat3d_host.c"
SIZES = ("16x8x8", "32x16x8")
CHOICE = re.compile(r"choice: (\w+) config (\d+) \((\S+)\) on (.+) at (\d+)x(\d+)x(\d+):")


@pytest.fixture(scope="module")
def tuned_store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """heat3d tuned at SIZES by ``gtune run`` in this process (what it says is in the
    captured output)."""
    from gtune.cli import main

    db = tmp_path_factory.mktemp("store") / "r.db"
    for size in SIZES:
        args = ["run", HEAT, "--size", size, "--technique", "global", "--budget", "6"]
        assert main(["--db", str(db), *args]) == 0
    return db


def _build(bundle_dir: Path, tmp_path: Path) -> Path:
    exe = tmp_path / "heat3d_host"
    flags = ["-std=c99", "-O2", "-Wall", "-Wextra", "-Werror", "-Wno-unused-function"]
    built = subprocess.run(
        ["cc", *flags, "-I", str(bundle_dir), "-o", str(exe), str(EXAMPLE), "-lOpenCL", "-lm"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert built.returncode == 0, built.stderr
    return exe


def test_the_c_host_chooses_as_the_bundle_says_and_computes_heat3d(
    tuned_store: Path, tmp_path: Path, gtune_here: Cli
) -> None:
    out = tmp_path / "tuned"
    exported = gtune_here("export", HEAT, "--sizes", "all", "-o", str(out), db=tuned_store)
    assert exported.returncode == 0, exported.stderr
    bundle = read_bundle(out / "heat3d_bundle.json")
    assert sorted("x".join(map(str, e.sizes.values())) for e in bundle.entries) == sorted(SIZES)
    # each entry is the best configuration `gtune results --best 1` names for its size
    for size in SIZES:
        best = gtune_here(
            "results", "-k", "heat3d", "--best", "1", "--format", "json", db=tuned_store
        )  # fmt: skip
        rows = [r for r in json.loads(best.stdout)["results"] if r["size"] == size]
        entry = next(e for e in bundle.entries if "x".join(map(str, e.sizes.values())) == size)
        assert rows and bundle.configurations[entry.config_index].configuration == rows[0]["config"]
    exe = _build(out, tmp_path)

    def run(nx: int, ny: int, nz: int) -> tuple[subprocess.CompletedProcess[str], str, str]:
        ran = subprocess.run(
            [str(exe), str(out), str(nx), str(ny), str(nz), "3"],
            capture_output=True,
            text=True,
            timeout=300,
        )
        m = CHOICE.search(ran.stdout)
        assert m is not None, ran.stdout + ran.stderr
        chosen = bundle.select(m[4], {"NX": nx, "NY": ny, "NZ": nz})
        # the C lookup chose what the Python one chooses for this device and size
        assert (m[1], int(m[2]), m[3]) == (
            chosen.how,
            chosen.configuration.index,
            chosen.configuration.source_file,
        )
        return ran, chosen.how, m[4]

    for size in SIZES:
        nx, ny, nz = (int(v) for v in size.split("x"))
        ran, how, device = run(nx, ny, nz)
        assert how == "exact" and ran.returncode == 0, ran.stdout + ran.stderr
        assert "(ok)" in ran.stdout
    # an untuned size on this device: a tuned configuration legal there, else the default
    ran, how, _ = run(64, 32, 16)
    assert how in ("nearest", "default") and ran.returncode == 0, ran.stdout + ran.stderr
    assert "(ok)" in ran.stdout
    if how == "nearest":
        assert bundle.select(device, {"NX": 64, "NY": 32, "NZ": 16}).entry is not None
    # a device the bundle never saw gets the default configuration
    other = bundle.select("Some Other Device", {"NX": 64, "NY": 32, "NZ": 16})
    assert other.how == "default" and other.configuration.index == bundle.default_index


def test_export_sizes_names_what_the_store_has(
    tuned_store: Path, tmp_path: Path, gtune_here: Cli
) -> None:
    out = tmp_path / "listed"
    listed = gtune_here("export", HEAT, "--sizes", SIZES[0], "-o", str(out), db=tuned_store)
    assert listed.returncode == 0, listed.stderr
    bundle = read_bundle(out / "heat3d_bundle.json")
    assert [e.sizes for e in bundle.entries] == [{"NX": 16, "NY": 8, "NZ": 8}]
    # written again: the files are kept without --force, replaced with it
    again = gtune_here("export", HEAT, "--sizes", SIZES[0], "-o", str(out), db=tuned_store)
    assert again.returncode == 2 and "--force" in again.stderr
    forced = gtune_here(
        "export", HEAT, "--sizes", SIZES[0], "-o", str(out), "--force", db=tuned_store
    )  # fmt: skip
    assert forced.returncode == 0, forced.stderr
    missing = gtune_here("export", HEAT, "--sizes", "64x64x64", "-o", str(out), db=tuned_store)
    assert missing.returncode == 2 and "Traceback" not in missing.stderr
    assert "64x64x64" in missing.stderr and all(s in missing.stderr for s in SIZES)
    both = gtune_here("export", HEAT, "--size", SIZES[0], "--sizes", "all", db=tuned_store)
    assert both.returncode == 2 and "--sizes" in both.stderr
    t4 = gtune_here("export", "--sizes", "all", db=tuned_store)
    assert t4.returncode == 2 and "--sizes" in t4.stderr

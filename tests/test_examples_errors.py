"""The runtime examples answer a newcomer's slips (a size of the wrong shape, a
``--tuned`` folder holding other kernels' exports) with one line and exit status 2,
never a traceback."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import ROOT

pytestmark = [pytest.mark.opencl]

EXAMPLES = ROOT / "examples"


def _run(example: str, *args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, str(EXAMPLES / example), *args],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=cwd,
    )


def _foreign_export(folder: Path) -> None:
    """An export of another kernel, as ``gtune export`` writes it (only what the
    runtime reads to tell whose it is matters here)."""
    from gtune.description import load_kernel
    from gtune.tuned import tuned_kernel, write_tuned

    kernel = load_kernel(ROOT / "stencils" / "jacobi2d.cl", {"NX": 64, "NY": 48})
    config = kernel.default_config()
    assert config is not None
    write_tuned(tuned_kernel(kernel, config, device_identity="dev-12345678"), folder)
    assert json.loads((folder / "jacobi2d.json").read_text())["name"] == kernel.store_name


@pytest.mark.parametrize(
    ("example", "size", "shape"),
    [("heat_solver.py", "32x32", "NXxNYxNZ"), ("image_filter.py", "64x48x4", "WIDTHxHEIGHT")],
)
def test_a_size_of_the_wrong_shape_is_one_line(
    example: str, size: str, shape: str, tmp_path: Path
) -> None:
    done = _run(example, "--size", size, "--no-tune", cwd=tmp_path)
    assert done.returncode == 2, done.stderr
    assert "Traceback" not in done.stderr
    assert f"--size: expected {shape}" in done.stderr and repr(size) in done.stderr


@pytest.mark.parametrize("example", ["heat_solver.py", "image_filter.py"])
def test_a_tuned_folder_of_other_kernels_is_one_line(example: str, tmp_path: Path) -> None:
    tuned = tmp_path / "tuned"
    tuned.mkdir()
    _foreign_export(tuned)
    done = _run(example, "--tuned", str(tuned), "--no-tune", cwd=tmp_path)
    assert done.returncode == 2, done.stderr
    assert "Traceback" not in done.stderr
    assert "no tuned result of" in done.stderr and "jacobi2d:stencil" in done.stderr

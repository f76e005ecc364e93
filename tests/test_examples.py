"""Every example runs, at a tiny size on the default device (PoCL in CI)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import ROOT

EXAMPLES = ROOT / "examples"
TINY = ["--size", "16x16x16"]
ARGS = {
    "tune_one_kernel.py": [*TINY, "--budget", "6", "--plot", "c.png"],
    "campaign_2d_and_3d.py": [*TINY, "--budget", "4"],
    "logging_and_stopping.py": [*TINY, "--seconds", "4"],
}
# examples that need files another test makes first, and the test that runs them
ELSEWHERE = {
    # an exported kernel: run_tuned_example, used by test_export.py and the lift tests
    "use_tuned_kernel.py": ROOT / "tests" / "conftest.py",
    "heat_solver.py": ROOT / "tests" / "test_runtime.py",  # with gtune.runtime's tests
    "image_filter.py": ROOT / "tests" / "test_runtime_image_filter.py",  # images it checks
}

pytestmark = [pytest.mark.opencl, pytest.mark.slow]


def _env() -> dict[str, str]:
    return dict(os.environ, PYTHONPATH=str(ROOT), MPLBACKEND="Agg", COLUMNS="100")


def test_every_example_is_run_here() -> None:
    scripts = {p.name for p in EXAMPLES.glob("*.py")}
    assert scripts == set(ARGS) | set(ELSEWHERE)
    for name, test in ELSEWHERE.items():
        assert f'"examples" / "{name}"' in test.read_text(), (name, test)
    assert (EXAMPLES / "tutorial.ipynb").exists()


@pytest.mark.parametrize("name", sorted(ARGS))
def test_example_runs(name: str, tmp_path: Path) -> None:
    proc = subprocess.run(
        [sys.executable, str(EXAMPLES / name), *ARGS[name]],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=300,
        env=_env(),
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    if name == "tune_one_kernel.py":
        assert "best configuration:" in proc.stdout
        assert (tmp_path / "c.png").read_bytes()[:4] == b"\x89PNG"
    elif name == "campaign_2d_and_3d.py":
        rows = [ln for ln in proc.stdout.splitlines() if " µs " in ln]
        assert len(rows) == 4  # 2 kernels x 2 strategies
        assert any(ln.startswith("jacobi2d 16x16") for ln in rows)
    else:
        assert "gtune.tuning: tuning stencil" in proc.stderr
        assert "configurations; best" in proc.stdout


RUN_NOTEBOOK = """
import json, sys
nb = json.load(open(sys.argv[1]))
scope = {"__name__": "__main__"}
for i, cell in enumerate(nb["cells"]):
    if cell["cell_type"] == "code":
        exec(compile("".join(cell["source"]), f"cell {i}", "exec"), scope)
print("cells run:", sum(c["cell_type"] == "code" for c in nb["cells"]))
"""


def test_tutorial_notebook_runs(tmp_path: Path) -> None:
    nb = json.loads((EXAMPLES / "tutorial.ipynb").read_text())
    assert nb["nbformat"] == 4 and any(c["cell_type"] == "markdown" for c in nb["cells"])
    env = dict(
        _env(), GTUNE_ROOT=str(ROOT), GTUNE_EXAMPLE_SIZE="16x16x16", GTUNE_EXAMPLE_BUDGET="6"
    )
    proc = subprocess.run(
        [sys.executable, "-c", RUN_NOTEBOOK, str(EXAMPLES / "tutorial.ipynb")],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=300,
        env=env,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    code_cells = sum(c["cell_type"] == "code" for c in nb["cells"])
    assert f"cells run: {code_cells}" in proc.stdout
    assert "speedup:" in proc.stdout


@pytest.mark.parametrize("content", [None, "{}"])
def test_use_tuned_kernel_says_in_one_line_what_it_cannot_read(
    content: str | None, tmp_path: Path
) -> None:
    """A missing or foreign .json: the example's one line and exit status 2, no
    traceback."""
    path = tmp_path / "tuned.json"
    if content is not None:
        path.write_text(content)
    done = subprocess.run(
        [sys.executable, str(EXAMPLES / "use_tuned_kernel.py"), str(path)],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=tmp_path,
    )
    assert done.returncode == 2
    assert "Traceback" not in done.stderr
    assert done.stderr.startswith(f"use_tuned_kernel: {path}: ")
    assert len(done.stderr.strip().splitlines()) == 1

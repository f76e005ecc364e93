"""Nothing gtune starts imports a module from the directory it was started in."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from gtune.processes import PACKAGE_PARENT, child_env, python_command
from tests.conftest import ROOT

HEAT = str(ROOT / "stencils" / "heat3d.cl")
PLANTED = ("numpy", "pyopencl", "yaml", "rich")


def _plant(folder: Path) -> Path:
    """Modules that shadow what gtune imports, each leaving a mark when imported."""
    mark = folder / "MARK"
    for name in PLANTED:
        (folder / f"{name}.py").write_text(
            f"open({str(mark)!r}, 'a').write({name!r} + '\\n')\nraise SystemExit('planted')\n"
        )
    return mark


def _gtune(cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ, PYTHONPATH=str(ROOT), COLUMNS="200")
    return subprocess.run(
        [sys.executable, "-m", "gtune", *args],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )


@pytest.mark.opencl
def test_modules_in_the_working_directory_never_run(tmp_path: Path) -> None:
    cwd = tmp_path / "here"
    cwd.mkdir()
    mark = _plant(cwd)
    devices = _gtune(cwd, "devices")
    assert devices.returncode == 0, devices.stderr
    measured = _gtune(
        cwd,
        "--db",
        str(tmp_path / "r.db"),
        "measure",
        HEAT,
        "--size",
        "16x8x8",
        "--config",
        "WX=8,WY=4,WZ=1",
    )
    assert measured.returncode == 0, measured.stderr
    assert "ok" in measured.stdout
    assert not mark.exists(), mark.read_text()


def test_children_keep_pythonpath_without_empty_entries(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PYTHONPATH", f"{os.pathsep}/site-a{os.pathsep}{os.pathsep}/site-b")
    env = child_env({"EXTRA": "1"})
    assert env["PYTHONPATH"].split(os.pathsep) == [PACKAGE_PARENT, "/site-a", "/site-b"]
    assert env["PYTHONSAFEPATH"] == "1" and env["EXTRA"] == "1"


def test_a_child_imports_the_gtune_its_parent_runs(tmp_path: Path) -> None:
    """With no installed gtune to fall back on (``-S``: no site-packages), a child finds
    the package through ``PYTHONPATH`` alone, the folder that holds it."""
    import gtune

    assert (Path(PACKAGE_PARENT) / "gtune" / "__init__.py").resolve() == Path(
        gtune.__file__
    ).resolve()
    done = subprocess.run(
        [sys.executable, "-S", "-P", "-c", "import gtune.processes as p; print(p.__file__)"],
        cwd=tmp_path, env=child_env(), capture_output=True, text=True,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert Path(done.stdout.strip()).resolve() == (Path(PACKAGE_PARENT) / "gtune" / "processes.py")


def test_a_child_does_not_find_modules_in_the_working_directory(tmp_path: Path) -> None:
    mark = _plant(tmp_path)
    (tmp_path / "probe.py").write_text("import numpy\n")
    done = subprocess.run(
        python_command("probe"), cwd=tmp_path, env=child_env(), capture_output=True, text=True
    )
    assert done.returncode != 0 and "No module named probe" in done.stderr
    assert not mark.exists()

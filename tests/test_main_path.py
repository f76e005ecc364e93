"""The gtune command's own process imports nothing from its working directory
(gtune/__init__.py), however it is started and whatever empty entries PYTHONPATH holds."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import ROOT

BLUR = str(ROOT / "tests" / "data" / "plain_blur.cl")
PLANTED = ("numpy", "yaml", "rich", "logging", "typing", "argparse")
CONSOLE_SCRIPT = Path(sys.executable).parent / "gtune"


def _plant(folder: Path) -> Path:
    """Modules that shadow what gtune imports, each leaving a mark when imported."""
    mark = folder / "MARK"
    for name in PLANTED:
        (folder / f"{name}.py").write_text(
            f"open({str(mark)!r}, 'a').write({name!r} + '\\n')\nraise SystemExit('planted')\n"
        )
    return mark


def _commands() -> list[list[str]]:
    found = [[sys.executable, "-m", "gtune"]]
    if CONSOLE_SCRIPT.exists():
        found.append([str(CONSOLE_SCRIPT)])
    return found


@pytest.mark.parametrize(
    "command", _commands(), ids=lambda c: "python-m" if len(c) > 1 else "console-script"
)
@pytest.mark.parametrize("pythonpath", [":", f"{os.pathsep}{ROOT}{os.pathsep}", ".", ""])
def test_a_planted_module_never_runs_in_the_main_process(
    tmp_path: Path, command: list[str], pythonpath: str
) -> None:
    mark = _plant(tmp_path)
    env = dict(os.environ, PYTHONPATH=pythonpath, COLUMNS="200")
    done = subprocess.run(
        [*command, "describe", BLUR, "--size", "64x64", "--scalar", "scale=1"],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert not mark.exists(), f"imported from the working directory: {mark.read_text()}"
    assert done.returncode == 0, done.stderr
    assert "planted" not in done.stderr


def test_an_absolute_entry_naming_the_working_directory_is_kept(tmp_path: Path) -> None:
    """The user wrote the folder out: a module of theirs there is found (a strategy
    plugin, a trusted reference module)."""
    (tmp_path / "mine.py").write_text("VALUE = 7\n")
    probe = "import gtune, sys, mine; print(mine.VALUE)"
    env = dict(os.environ, PYTHONPATH=f"{tmp_path}{os.pathsep}{ROOT}")
    done = subprocess.run(
        [sys.executable, "-c", probe], cwd=tmp_path, env=env, capture_output=True, text=True
    )
    assert done.stdout.strip() == "7", done.stderr


def test_a_program_importing_gtune_keeps_its_path(tmp_path: Path) -> None:
    """``import gtune`` in a user's program changes nothing on its sys.path."""
    probe = "import sys; before = list(sys.path); import gtune; print(sys.path == before)"
    env = dict(os.environ, PYTHONPATH=f"{os.pathsep}{ROOT}")
    done = subprocess.run(
        [sys.executable, "-c", probe], cwd=tmp_path, env=env, capture_output=True, text=True
    )
    assert done.stdout.strip() == "True", done.stderr

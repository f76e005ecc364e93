"""File names and values holding control characters are refused before anything runs
(gtune/cli.py, gtune/escape.py): a newline in a kernel's name once reached the MiniZinc
model as code, an escape sequence the terminal."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from gtune.description import load_kernel
from gtune.exceptions import InputError
from tests.conftest import ROOT
from tests.inprocess import Cli

NAMES = ["k\nconstraint WX = 2;\n%.cl", "k\x1b[31mred.cl", "k\x1b]0;title\x07.cl"]


@pytest.mark.parametrize("name", NAMES, ids=["newline", "csi", "osc"])
@pytest.mark.parametrize("command", ["run", "space", "describe", "measure"])
def test_a_kernel_named_with_control_characters_is_refused(
    tmp_path: Path, name: str, command: str, gtune_here: Cli
) -> None:
    kernel = tmp_path / name
    shutil.copy(ROOT / "tests" / "data" / "plain_blur.cl", kernel)
    done = gtune_here(command, str(kernel), "--size", "64x64", db=tmp_path / "r.db")
    assert done.returncode == 2, done.stderr
    assert "control character" in done.stderr and "Traceback" not in done.stderr
    assert "\x1b" not in done.stderr and "\x07" not in done.stderr
    assert len(done.stderr.strip().splitlines()) == 1  # one line, the newline shown as \n


def test_the_library_refuses_them_too(tmp_path: Path) -> None:
    kernel = tmp_path / NAMES[0]
    shutil.copy(ROOT / "tests" / "data" / "naive7.cl", kernel)
    shutil.copy(ROOT / "tests" / "data" / "naive7.yaml", kernel.with_suffix(".yaml"))
    with pytest.raises(InputError, match="control character"):
        load_kernel(kernel)

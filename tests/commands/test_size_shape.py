"""``--size`` in the ``x`` form gives every size of a kernel with a description:
``32x32`` for a 3D kernel once tuned 32x32x256 (the description's NZ) without a word."""

from __future__ import annotations

from pathlib import Path

import pytest

from gtune.commands._common import parse_size
from gtune.description import load_kernel
from gtune.exceptions import InputError
from tests.conftest import ROOT
from tests.inprocess import Cli

HEAT = ROOT / "stencils" / "heat3d.cl"


def test_fewer_sizes_than_the_kernel_has_are_refused_with_the_fix() -> None:
    kernel = load_kernel(HEAT)
    with pytest.raises(InputError) as short:
        parse_size("32x32", kernel, whole=True)
    message = short.value.message
    assert "2 sizes given but the kernel has 3 (NX, NY, NZ)" in message
    assert "256x256x256" in message and "NX=32" in message
    with pytest.raises(InputError, match="1 size given"):
        parse_size("32", kernel, whole=True)
    assert parse_size("NX=32", kernel, whole=True) == {"NX": 32}  # by name: some only
    assert parse_size("32x16x8", kernel, whole=True) == {"NX": 32, "NY": 16, "NZ": 8}
    assert parse_size("32x32", kernel) == {"NX": 32, "NY": 32}  # the bundle lists' reading


@pytest.mark.parametrize("command", ["run", "measure", "export"])
def test_the_commands_refuse_a_short_size_before_any_work(
    command: str, tmp_path: Path, gtune_here: Cli, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    done = gtune_here(command, str(HEAT), "--size", "32x32", db=tmp_path / "r.db")
    assert done.returncode == 2
    assert "Traceback" not in done.stderr
    assert "--size: 2 sizes given but the kernel has 3" in done.stderr
    assert not (tmp_path / "r.db").exists()

"""The runtime reads a folder of exports as a user fills it: several kernels' exports
side by side (pure: nothing is built or launched)."""

from __future__ import annotations

from pathlib import Path

import pytest

from gtune.description import load_kernel
from gtune.exceptions import InputError
from gtune.kernel import TunableKernel
from gtune.runtime.sources import read_sources
from gtune.tuned import tuned_kernel, write_tuned
from tests.conftest import ROOT

STENCILS = ROOT / "stencils"


def _export(kernel: TunableKernel, out: Path) -> None:
    config = kernel.default_config()
    assert config is not None
    write_tuned(tuned_kernel(kernel, config, device_identity="dev-12345678", time_s=1e-5), out)


def test_a_folder_of_several_kernels_exports_gives_each_kernel_its_own(tmp_path: Path) -> None:
    """heat3d (3D) and jacobi2d (2D) exported at the same size into one folder: the
    runtime for heat3d reads only heat3d's (jacobi2d's once stood in for it, or broke
    the nearest-size lookup on its missing NZ); without a kernel, or with a kernel the
    folder has nothing of, it says which kernels the folder holds."""
    heat = load_kernel(STENCILS / "heat3d.cl", {"NX": 32, "NY": 32, "NZ": 16})
    jacobi = load_kernel(STENCILS / "jacobi2d.cl", {"NX": 32, "NY": 32})
    _export(heat, tmp_path)
    _export(jacobi, tmp_path)

    entries = read_sources([tmp_path], heat)
    assert [e.tuned.name for e in entries if e.tuned] == [heat.store_name]
    assert [dict(e.sizes) for e in entries] == [{"NX": 32, "NY": 32, "NZ": 16}]
    assert [e.tuned.name for e in read_sources([tmp_path], jacobi) if e.tuned] == [
        jacobi.store_name
    ]

    with pytest.raises(InputError) as mixed:
        read_sources([tmp_path], None)
    assert heat.store_name in mixed.value.message and jacobi.store_name in mixed.value.message
    assert "kernel=" in mixed.value.message

    box = load_kernel(STENCILS / "box27.cl", {"NX": 32, "NY": 32, "NZ": 16})
    with pytest.raises(InputError) as none:
        read_sources([tmp_path], box)
    assert f"no tuned result of {box.store_name}" in none.value.message
    assert str(tmp_path) in str(none.value)

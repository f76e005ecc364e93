"""The split's geometry on real descriptions: dimension, work-group extent, halo, slabs."""

from __future__ import annotations

from pathlib import Path

import pytest

from gtune.description import load_kernel
from gtune.exceptions import InputError
from gtune.split.geometry import block_of, halo_of, slab_for, split_axis

STENCILS = Path(__file__).resolve().parents[2] / "stencils"
CFG = {"WX": 8, "WY": 2, "WZ": 2, "BX": 2, "VX": 1, "CX": 2, "CY": 1, "CZ": 4}
CFG.update({"LOCAL": 0, "IMAGE": 0, "STREAM": 0, "ZC": 1, "RIM": 0, "BY": 1, "BZ": 1})


def test_dimensions_blocks_and_halo_of_heat3d() -> None:
    k = load_kernel(STENCILS / "heat3d.cl", {"NX": 64, "NY": 32, "NZ": 48})
    z = split_axis(k, CFG, None)  # outermost by default
    assert (z.letter, z.size_name, z.size) == ("z", "NZ", 48)
    assert z.arg_axes == {"src": 0, "dst": 0}
    assert block_of(k, CFG, z) == 2 * 4  # WZ * CZ points per work-group
    y = split_axis(k, CFG, "y")
    assert (y.size_name, y.arg_axes["dst"], block_of(k, CFG, y)) == ("NY", 1, 2)
    x = split_axis(k, CFG, "x")
    assert (x.size_name, x.arg_axes["src"], block_of(k, CFG, x)) == ("NX", 2, 8 * 2 * 2)
    assert halo_of(k, z) == 1 and halo_of(k, z, 3) == 3


def test_two_dimensional_kernel_has_no_z() -> None:
    k = load_kernel(STENCILS / "jacobi2d.cl")
    cfg = k.default_config()
    assert cfg is not None
    assert split_axis(k, cfg, None).letter == "y"
    with pytest.raises(InputError, match="no z dimension"):
        split_axis(k, cfg, "z")
    with pytest.raises(InputError, match="use x, y or z"):
        split_axis(k, cfg, "w")


def test_slab_padding_stays_inside_and_covers_the_halo() -> None:
    s = slab_for(0, 8, 16, 32, 2, 8)  # rows 6..18 needed, widened to 16 rows upwards
    assert (s.lo, s.hi) == (6, 22)
    s = slab_for(1, 28, 32, 32, 2, 8)  # at the top edge: widened downwards
    assert (s.lo, s.hi) == (24, 32)
    s = slab_for(1, 1, 31, 32, 2, 8)  # more than the array: the whole of it
    assert (s.lo, s.hi) == (0, 32)
    with pytest.raises(InputError):
        slab_for(0, 0, 10, 30, 1, 8)  # 30 rows cannot be tiled by 8
    with pytest.raises(InputError):
        slab_for(0, 5, 5, 32, 1, 1)

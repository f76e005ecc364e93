"""Pattern definitions, static features and the garvey104 suite (seed 001 Table 2)."""

from __future__ import annotations

import itertools
from collections import Counter

import pytest

from gtune.exceptions import InputError
from gtune.stencils import ORIENTATIONS, PATTERNS, StencilShape, garvey104

RADII = range(0, 6)


def _diamond_3d(r: int) -> int:
    return sum((2 * (r - abs(z)) + 1) ** 2 // 2 + 1 for z in range(-r, r + 1))


def _closed_form(pattern: str, dims: int, r: int) -> int:
    """Point counts derived independently of the implementation."""
    if r == 0:
        return 1
    side = 2 * r + 1
    if dims == 1:
        return side
    return {
        "dense": side**dims,
        "star": 2 * dims * r + 1,
        "diamond": 2 * r * r + 2 * r + 1 if dims == 2 else _diamond_3d(r),
        "no-corners": side**dims - 2**dims,
        "thumbtack": side * side + 2 * r,
    }[pattern]


@pytest.mark.parametrize("pattern", PATTERNS)
@pytest.mark.parametrize("r", RADII)
def test_point_counts(pattern: str, r: int) -> None:
    dims_list = (3,) if pattern == "thumbtack" else (1, 2, 3)
    for dims in dims_list:
        for orientation in ORIENTATIONS[1] if pattern == "thumbtack" else ORIENTATIONS[dims]:
            shape = StencilShape(pattern, dims, orientation, r)
            assert shape.size == _closed_form(pattern, dims, r), shape.name
            assert len(set(shape.offsets)) == shape.size
            assert (0, 0, 0) in shape.offsets


def test_3d_diamond_is_l1_ball() -> None:
    shape = StencilShape("diamond", 3, "xyz", 3)
    expected = {o for o in itertools.product(range(-3, 4), repeat=3) if sum(abs(c) for c in o) <= 3}
    assert set(shape.offsets) == expected


@pytest.mark.parametrize("orientation", ["x", "y", "z", "xy", "xz", "yz"])
def test_orientation_puts_offsets_on_its_axes_only(orientation: str) -> None:
    dims = len(orientation)
    shape = StencilShape("dense", dims, orientation, 2)
    for i, axis in enumerate("xyz"):
        spread = {o[i] for o in shape.offsets}
        assert spread == (set(range(-2, 3)) if axis in orientation else {0})
        assert shape.extent[axis] == (2 if axis in orientation else 0)


def test_no_corners_removes_exactly_the_box_corners() -> None:
    for dims, orientation in ((2, "xz"), (3, "xyz")):
        box = set(StencilShape("dense", dims, orientation, 2).offsets)
        removed = box - set(StencilShape("no-corners", dims, orientation, 2).offsets)
        assert len(removed) == 2**dims
        assert all(sum(1 for c in o if abs(c) == 2) == dims for o in removed)


def test_thumbtack_is_head_plus_spike() -> None:
    shape = StencilShape("thumbtack", 3, "y", 2)
    head = {o for o in shape.offsets if o[1] == 0}
    spike = {o for o in shape.offsets if o[1] != 0}
    assert len(head) == 25 and all(abs(o[0]) <= 2 and abs(o[2]) <= 2 for o in head)
    assert spike == {(0, d, 0) for d in (-2, -1, 1, 2)}
    assert shape.unique_dim == "y"


def test_radius_one_diamond_and_2d_no_corners_equal_the_star() -> None:
    """Why Table 2 has no radius-1 diamonds or 2D no-corners, but a 3D no-corners."""
    star2 = set(StencilShape("star", 2, "xy", 1).offsets)
    assert set(StencilShape("diamond", 2, "xy", 1).offsets) == star2
    assert set(StencilShape("no-corners", 2, "xy", 1).offsets) == star2
    star3 = set(StencilShape("star", 3, "xyz", 1).offsets)
    assert set(StencilShape("diamond", 3, "xyz", 1).offsets) == star3
    assert set(StencilShape("no-corners", 3, "xyz", 1).offsets) != star3


def test_features() -> None:
    assert StencilShape("dense", 1, "y", 3).unique_dim == "y"
    assert StencilShape("star", 2, "xz", 1).unique_dim == "y"
    assert StencilShape("star", 3, "xyz", 1).unique_dim == "none"
    assert StencilShape("dense", 1, "x", 0).unique_dim == "none"
    assert StencilShape("dense", 2, "yz", 4).density == 1.0
    assert StencilShape("star", 3, "xyz", 1).density == pytest.approx(7 / 27)


@pytest.mark.parametrize(
    ("args", "fragment"),
    [
        (("spiral", 2, "xy", 1), "unknown pattern"),
        (("star", 4, "xy", 1), "dimensionality"),
        (("star", 2, "xyz", 1), "does not fit"),
        (("star", 2, "xy", 6), "radius"),
        (("thumbtack", 2, "x", 1), "3D"),
        (("thumbtack", 3, "xy", 1), "spike axis"),
    ],
)
def test_bad_shapes_are_rejected(args: tuple[str, int, str, int], fragment: str) -> None:
    with pytest.raises(InputError, match=fragment):
        StencilShape(*args)


# Seed 001 Table 2: kernels by pattern and dimensionality, and by pattern and radius.
TABLE2_DIMS = {
    "star": (0, 15, 5),
    "thumbtack": (0, 0, 15),
    "diamond": (0, 12, 4),
    "no-corners": (0, 12, 5),
    "dense": (16, 15, 5),
}
TABLE2_RADII = {
    "star": (0, 4, 4, 4, 4, 4),
    "thumbtack": (0, 3, 3, 3, 3, 3),
    "diamond": (0, 0, 4, 4, 4, 4),
    "no-corners": (0, 1, 4, 4, 4, 4),
    "dense": (1, 7, 7, 7, 7, 7),
}


def test_garvey104_matches_table_2() -> None:
    shapes = garvey104()
    assert len(shapes) == 104
    assert len({s.name for s in shapes}) == 104
    by_dims = Counter((s.pattern, s.dims) for s in shapes)
    by_radius = Counter((s.pattern, s.radius) for s in shapes)
    for pattern in PATTERNS:
        assert tuple(by_dims[(pattern, d)] for d in (1, 2, 3)) == TABLE2_DIMS[pattern]
        assert tuple(by_radius[(pattern, r)] for r in RADII) == TABLE2_RADII[pattern]


def test_garvey104_spreads_orientations_evenly() -> None:
    """Every 1D/2D (pattern, radius) appears in all three orientations; thumbtacks with
    all three spike axes."""
    groups: dict[tuple[str, int, int], set[str]] = {}
    for s in garvey104():
        if s.radius and (s.dims < 3 or s.pattern == "thumbtack"):
            groups.setdefault((s.pattern, s.dims, s.radius), set()).add(s.unique_dim)
    assert groups and all(v == {"x", "y", "z"} for v in groups.values())

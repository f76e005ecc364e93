"""Stencil features as a typed record computed from the stencil's shape."""

from __future__ import annotations

from pathlib import Path

import pytest

from gtune.description import load_kernel
from gtune.exceptions import InputError
from gtune.features import StencilFeatures, from_offsets, kernel_features
from gtune.stencils.generate import garvey104
from gtune.stencils.patterns import StencilShape

ROOT = Path(__file__).resolve().parents[1]


def test_features_from_offsets_match_the_pattern_definitions() -> None:
    for shape in garvey104():
        f = from_offsets(shape.offsets, pattern=shape.pattern, orientation=shape.orientation)
        assert f.size == shape.size
        assert f.density == pytest.approx(shape.density)
        assert f.unique_dim == shape.unique_dim, shape.name
        assert f.dims == shape.dims or shape.radius == 0
        assert f.extent == tuple(shape.extent[a] for a in "xyz")
        assert f.flops_per_point == 2 * f.size


def test_thumbtack_spike_is_the_unique_dimension() -> None:
    for axis in "xyz":
        shape = StencilShape("thumbtack", 3, axis, 2)
        assert from_offsets(shape.offsets).unique_dim == axis


def test_round_trip_through_a_mapping() -> None:
    f = from_offsets([(0, 0, 0), (1, 0, 0), (-1, 0, 0), (0, 1, 0), (0, -1, 0)], shape=(64, 64))
    assert f.dims == 2 and f.unique_dim == "z" and f.orientation == "xy"
    again = StencilFeatures.from_dict(f.to_dict())
    assert again == f


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"size": 0}, "size must be at least 1"),
        ({"size": "7"}, "size must be an integer"),
        ({"density": 1.5}, r"density must be in \(0, 1\]"),
        ({"unique_dim": "w"}, "unique_dim must be one of x, y, z, none"),
        ({"extent": [1, 1]}, "extent must be a list of 3"),
        ({"radius": 2}, "radius 2 is not the largest extent"),
        ({"size": 30}, "size 30 exceeds the 27 points"),
        ({"dims": 4}, r"dims must be in 1..3"),
    ],
)
def test_features_mapping_is_validated(change: dict[str, object], message: str) -> None:
    good = from_offsets(StencilShape("star", 3, "xyz", 1).offsets).to_dict()
    with pytest.raises(InputError, match=f"k.yaml: features: {message}"):
        StencilFeatures.from_dict({**good, **change}, "k.yaml: features")


def test_missing_features_are_listed() -> None:
    with pytest.raises(InputError, match="missing density, unique_dim"):
        StencilFeatures.from_dict({"size": 7, "radius": 1, "dimensionality": 3})


@pytest.mark.parametrize("name", ["heat3d", "box27", "laplacian4", "jacobi2d", "blur5"])
def test_shipped_stencils_features_come_from_their_offsets(name: str) -> None:
    kernel = load_kernel(ROOT / "stencils" / f"{name}.yaml")
    f = kernel_features(kernel)
    assert f.size == kernel.features["size"]
    assert f.unique_dim == kernel.features["unique_dim"]
    assert f.density == pytest.approx(kernel.features["density"])
    assert f.dtype == "float32" and len(f.shape) in (2, 3)
    assert f.shape == tuple(kernel.sizes[n] for n in ("NZ", "NY", "NX") if n in kernel.sizes)

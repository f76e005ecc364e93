"""Synthetic stencil generation: one shape plus random weights, or a whole suite.

Weights are drawn once, at generation time, from a generator seeded by the suite seed
and the kernel's name, so a kernel is the same whatever else is generated with it.
They are multiples of 2**-12 in [0.1, 1): exact in float32, non-zero, and positive so
that sums do not cancel and verification stays tight.
"""

from __future__ import annotations

import zlib
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from gtune.exceptions import InputError
from gtune.features import from_offsets
from gtune.stencils.patterns import ORIENTATIONS, StencilShape
from gtune.stencils.render import WeightedStencil, sizes_for, write_stencil

SUITES = ("garvey104",)
DEFAULT_SIZE = (256, 256, 256)
WEIGHT_STEP = 2.0**-12


def random_weights(count: int, seed: int, name: str) -> tuple[float, ...]:
    rng = np.random.default_rng([seed, zlib.crc32(name.encode())])
    steps = rng.integers(round(0.1 / WEIGHT_STEP), round(1.0 / WEIGHT_STEP), size=count)
    return tuple(float(s) * WEIGHT_STEP for s in steps)


def synthetic(shape: StencilShape, *, seed: int = 0, intensity: int = 1) -> WeightedStencil:
    """The shape with random compile-time weights and its static features."""
    name = shape.name + (f"_i{intensity}" if intensity != 1 else "")
    f = from_offsets(shape.offsets, pattern=shape.pattern, orientation=shape.orientation)
    features = {
        "pattern": f.pattern,
        "dims": f.dims,
        "orientation": f.orientation,
        "unique_dim": f.unique_dim,
        "density": round(f.density, 6),
    }
    return WeightedStencil(
        name=name,
        offsets=shape.offsets,
        weights=random_weights(shape.size, seed, name),
        intensity=intensity,
        features=features,
        doc=(
            f"Synthetic {shape.dims}D {shape.pattern} stencil, radius {shape.radius}, "
            f"orientation {shape.orientation}: a weighted sum of {shape.size} inputs "
            f"(seed {seed})."
        ),
    )


def garvey104() -> list[StencilShape]:
    """The 104 kernels of seed 001 Table 2.

    1D and 2D stencils appear in each of the three orientations (a 2D stencil's
    unique dimension is the axis across its plane); 3D stencils once; thumbtacks with
    each spike axis. Diamond and 2D no-corners start at radius 2 because at radius 1
    they equal the star; 3D no-corners at radius 1 (27 - 8 points) is distinct.
    """
    shapes: list[StencilShape] = [StencilShape("dense", 1, "x", 0)]
    for r in range(1, 6):
        shapes += [StencilShape("dense", 1, o, r) for o in ORIENTATIONS[1]]
        shapes += [StencilShape("dense", 2, o, r) for o in ORIENTATIONS[2]]
        shapes.append(StencilShape("dense", 3, "xyz", r))
        shapes += [StencilShape("star", 2, o, r) for o in ORIENTATIONS[2]]
        shapes.append(StencilShape("star", 3, "xyz", r))
        shapes += [StencilShape("thumbtack", 3, o, r) for o in ORIENTATIONS[1]]
        if r >= 2:
            shapes += [StencilShape("diamond", 2, o, r) for o in ORIENTATIONS[2]]
            shapes.append(StencilShape("diamond", 3, "xyz", r))
            shapes += [StencilShape("no-corners", 2, o, r) for o in ORIENTATIONS[2]]
        shapes.append(StencilShape("no-corners", 3, "xyz", r))
    return shapes


def suite(name: str) -> list[StencilShape]:
    if name == "garvey104":
        return garvey104()
    raise InputError(f"unknown suite {name!r}; available: {', '.join(SUITES)}")


def parse_size(text: str, array_dims: int = 3) -> tuple[int, int, int]:
    """``NXxNYxNZ`` (or one number for a cube) into three positive integers."""
    parts = text.lower().split("x")
    try:
        values = [int(p) for p in parts]
    except ValueError:
        raise InputError(f"size must look like 256x256x256, got {text!r}") from None
    if len(values) == 1:
        values = values * 3
    if len(values) != 3 or any(v <= 0 for v in values):
        raise InputError(f"size needs three positive integers NXxNYxNZ, got {text!r}")
    return values[0], values[1], values[2]


@dataclass(frozen=True)
class Generated:
    stencil: WeightedStencil
    source: Path
    description: Path


def generate(
    shapes: Sequence[StencilShape],
    directory: Path,
    *,
    seed: int = 0,
    intensity: int = 1,
    size: Sequence[int] = DEFAULT_SIZE,
    progress: Callable[[int, int, Generated], None] | None = None,
    force: bool = True,
) -> list[Generated]:
    """Write every shape's kernel and description into ``directory`` (files there
    replaced only with ``force``)."""
    rx_max = max((max(s.extent.values()) for s in shapes), default=0)
    if any(n <= 2 * rx_max for n in size):
        raise InputError(
            f"size {'x'.join(map(str, size))} leaves no interior for radius {rx_max}; "
            f"each dimension must exceed {2 * rx_max}"
        )
    out: list[Generated] = []
    for i, g in enumerate(_iter(shapes, directory, seed, intensity, size, force)):
        out.append(g)
        if progress is not None:
            progress(i + 1, len(shapes), g)
    return out


def _iter(
    shapes: Sequence[StencilShape],
    directory: Path,
    seed: int,
    intensity: int,
    size: Sequence[int],
    force: bool,
) -> Iterator[Generated]:
    for shape in shapes:
        stencil = synthetic(shape, seed=seed, intensity=intensity)
        cl, yml = write_stencil(stencil, directory, sizes_for(3, size), force=force)
        yield Generated(stencil, cl, yml)

"""Real stencils expressed as weighted sums, rendered from the same template.

``stencils/`` at the top of the repository holds their rendered ``.cl``/``.yaml``
(written by :func:`write_real`); Game of Life and the hotspot thermal step are not
weighted sums and are written by hand there.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable
from pathlib import Path

from gtune.stencils.render import Offset, WeightedStencil, write_stencil

SIZE_3D = {"NX": 256, "NY": 256, "NZ": 256}
SIZE_2D = {"NX": 4096, "NY": 4096}


def _axes(radius: int, coefficients: list[float], center: float) -> dict[Offset, float]:
    """A 3D star: ``coefficients[d-1]`` at distance ``d`` on each axis."""
    weights: dict[Offset, float] = {(0, 0, 0): center}
    for axis in range(3):
        for d in range(1, radius + 1):
            for sign in (-1, 1):
                o = [0, 0, 0]
                o[axis] = sign * d
                weights[(o[0], o[1], o[2])] = coefficients[d - 1]
    return weights


def _ordered(name: str, weights: dict[Offset, float], **kw: object) -> WeightedStencil:
    offsets = tuple(sorted(weights, key=lambda o: (o[2], o[1], o[0])))
    return WeightedStencil(
        name=name,
        offsets=offsets,
        weights=tuple(weights[o] for o in offsets),
        **kw,  # type: ignore[arg-type]
    )


def heat3d() -> WeightedStencil:
    """One explicit step of the 3D heat equation, alpha = 1/8: 7-point star."""
    alpha = 0.125
    return _ordered(
        "heat3d",
        _axes(1, [alpha], 1 - 6 * alpha),
        features={
            "pattern": "star",
            "dims": 3,
            "orientation": "xyz",
            "unique_dim": "none",
            "density": 7 / 27,
        },
        doc="One explicit time step of the 3D heat equation (7-point star, alpha = 1/8): "
        "u' = u + alpha * (sum of the 6 neighbours - 6u).",
    )


def box27() -> WeightedStencil:
    """3D binomial smoothing: the tensor product of [1, 2, 1]/4 (27-point dense)."""
    a = {-1: 1, 0: 2, 1: 1}
    weights = {
        (x, y, z): a[x] * a[y] * a[z] / 64.0 for x, y, z in itertools.product((-1, 0, 1), repeat=3)
    }
    return _ordered(
        "box27",
        weights,
        features={
            "pattern": "dense",
            "dims": 3,
            "orientation": "xyz",
            "unique_dim": "none",
            "density": 1.0,
        },
        doc="27-point 3D smoothing, the tensor product of the binomial filter [1, 2, 1]/4.",
    )


def laplacian4() -> WeightedStencil:
    """Fourth-order 3D Laplacian inside an explicit diffusion step: 13-point star."""
    c = 1.0 / 16
    weights = _axes(2, [c * 4 / 3, -c / 12], 1 + c * 3 * (-5 / 2))
    return _ordered(
        "laplacian4",
        weights,
        features={
            "pattern": "star",
            "dims": 3,
            "orientation": "xyz",
            "unique_dim": "none",
            "density": 13 / 125,
        },
        doc="u' = u + c * L4(u), c = 1/16, with the fourth-order 13-point Laplacian "
        "(-1/12, 4/3, -5/2, 4/3, -1/12 on each axis).",
    )


def jacobi2d() -> WeightedStencil:
    """The 2D Jacobi sweep of PolyBench: 0.2 times the 5-point star, on a 2D array."""
    weights = {(0, 0, 0): 0.2, (-1, 0, 0): 0.2, (1, 0, 0): 0.2, (0, -1, 0): 0.2, (0, 1, 0): 0.2}
    return _ordered(
        "jacobi2d",
        weights,
        array_dims=2,
        features={
            "pattern": "star",
            "dims": 2,
            "orientation": "xy",
            "unique_dim": "z",
            "density": 5 / 9,
        },
        doc="2D Jacobi sweep: b[i][j] = 0.2 * (a[i][j] + its 4 neighbours), on a 2D array.",
    )


def blur5() -> WeightedStencil:
    """5x5 Gaussian blur (binomial [1, 4, 6, 4, 1]/16 in each direction) on a 2D image."""
    a = {-2: 1, -1: 4, 0: 6, 1: 4, 2: 1}
    weights = {(x, y, 0): a[x] * a[y] / 256.0 for x, y in itertools.product(range(-2, 3), repeat=2)}
    return _ordered(
        "blur5",
        weights,
        array_dims=2,
        features={
            "pattern": "dense",
            "dims": 2,
            "orientation": "xy",
            "unique_dim": "z",
            "density": 1.0,
        },
        doc="5x5 Gaussian blur of a 2D image (binomial weights [1, 4, 6, 4, 1]/16 squared).",
    )


REAL: dict[str, Callable[[], WeightedStencil]] = {
    "heat3d": heat3d,
    "box27": box27,
    "laplacian4": laplacian4,
    "jacobi2d": jacobi2d,
    "blur5": blur5,
}


def write_real(directory: Path) -> list[Path]:
    """(Re)write the rendered real stencils into ``directory``."""
    written: list[Path] = []
    for make in REAL.values():
        stencil = make()
        sizes = SIZE_3D if stencil.array_dims == 3 else SIZE_2D
        written += list(write_stencil(stencil, directory, sizes))
    return written

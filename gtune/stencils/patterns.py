"""Stencil shapes: which input offsets each output point reads.

A stencil of dimensionality ``k`` (1, 2 or 3) is defined on a ``k``-dimensional cube of
side ``2r + 1`` and then laid along ``k`` of the array's axes (its *orientation*), so 1D
and 2D stencils act on 3D arrays in every direction. Definitions (``u`` is an offset
in the stencil's own ``k`` coordinates, ``r`` the radius):

``dense``       every ``u`` with ``max |u_i| <= r`` (the full box)
``star``        the axes only: at most one ``u_i`` is non-zero
``diamond``     ``sum |u_i| <= r`` (L1 ball)
``no-corners``  the box without its ``2^k`` corners (points where *every* ``|u_i| == r``)
``thumbtack``   3D only: a dense square head in the plane across the spike axis, plus a
                spike of ``2r`` points along that axis (both directions)

In 1D all patterns are the line of ``2r + 1`` points. Radius 0 is the single centre
point. See ``docs/stencils.md`` for pictures.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cached_property

from gtune.exceptions import InputError

PATTERNS = ("dense", "star", "diamond", "no-corners", "thumbtack")
AXES = "xyz"
ORIENTATIONS = {1: ("x", "y", "z"), 2: ("xy", "xz", "yz"), 3: ("xyz",)}
MAX_RADIUS = 5

Offset = tuple[int, int, int]


@dataclass(frozen=True)
class StencilShape:
    """A pattern, its dimensionality, orientation and radius: the set of offsets.

    ``orientation`` names the array axes the stencil spans (``"x"``, ``"yz"``,
    ``"xyz"``); for a thumbtack it names the spike axis.
    """

    pattern: str
    dims: int
    orientation: str
    radius: int

    def __post_init__(self) -> None:
        if self.pattern not in PATTERNS:
            raise InputError(
                f"unknown pattern {self.pattern!r}; choose one of {', '.join(PATTERNS)}"
            )
        if self.dims not in (1, 2, 3):
            raise InputError(f"dimensionality must be 1, 2 or 3, got {self.dims}")
        if not 0 <= self.radius <= MAX_RADIUS:
            raise InputError(f"radius must be in 0..{MAX_RADIUS}, got {self.radius}")
        if self.pattern == "thumbtack":
            if self.dims != 3:
                raise InputError("a thumbtack stencil is 3D (a 2D head and a 1D spike)")
            if self.orientation not in ORIENTATIONS[1]:
                raise InputError(
                    f"a thumbtack's orientation is its spike axis (x, y or z), "
                    f"got {self.orientation!r}"
                )
        elif self.orientation not in ORIENTATIONS[self.dims]:
            raise InputError(
                f"orientation {self.orientation!r} does not fit a {self.dims}D stencil; "
                f"choose one of {', '.join(ORIENTATIONS[self.dims])}"
            )

    @property
    def name(self) -> str:
        return f"{self.pattern.replace('-', '')}_{self.dims}d_{self.orientation}_r{self.radius}"

    @property
    def axes(self) -> str:
        """The array axes the stencil extends along."""
        return "xyz" if self.pattern == "thumbtack" else self.orientation

    @cached_property
    def offsets(self) -> tuple[Offset, ...]:
        """Offsets ``(dx, dy, dz)`` in a fixed order: z slowest, then y, then x."""
        r = self.radius
        local = [u for u in itertools.product(range(-r, r + 1), repeat=len(self.axes))]
        keep = [u for u in local if self._contains(u)]
        out: list[Offset] = []
        for u in keep:
            d = dict(zip(self.axes, u, strict=True))
            out.append((d.get("x", 0), d.get("y", 0), d.get("z", 0)))
        return tuple(sorted(set(out), key=lambda o: (o[2], o[1], o[0])))

    def _contains(self, u: Sequence[int]) -> bool:
        r = self.radius
        if r == 0:
            return all(c == 0 for c in u)
        a = [abs(c) for c in u]
        if len(u) == 1:
            return True
        if self.pattern == "dense":
            return True
        if self.pattern == "star":
            return sum(1 for c in a if c) <= 1
        if self.pattern == "diamond":
            return sum(a) <= r
        if self.pattern == "no-corners":
            return not all(c == r for c in a)
        # thumbtack: the spike axis is self.orientation within "xyz"
        spike = AXES.index(self.orientation)
        head = a[spike] == 0
        pin = all(c == 0 for i, c in enumerate(a) if i != spike)
        return head or pin

    # -- static features (seed 001 §3 and §6.1) --------------------------------------
    @property
    def size(self) -> int:
        """Input elements read per output element."""
        return len(self.offsets)

    @property
    def extent(self) -> dict[str, int]:
        """The stencil's radius along each array axis (its halo)."""
        return {axis: max(abs(o[i]) for o in self.offsets) for i, axis in enumerate(AXES)}

    @property
    def density(self) -> float:
        """Size over the volume of the smallest box that holds the stencil."""
        volume = 1
        for i in range(3):
            values = [o[i] for o in self.offsets]
            volume *= max(values) - min(values) + 1
        return self.size / volume

    @property
    def unique_dim(self) -> str:
        """The axis that differs from the others (seed 001 §6.1), or ``none``."""
        if self.radius == 0:
            return "none"
        if self.pattern == "thumbtack":
            return self.orientation
        if self.dims == 1:
            return self.orientation
        if self.dims == 2:
            return next(a for a in AXES if a not in self.orientation)
        return "none"


def parse_orientation(pattern: str, dims: int, orientation: str | None) -> str:
    """The orientation to use: the given one, or the first that fits."""
    if orientation:
        return orientation
    if pattern == "thumbtack":
        return "z"
    return ORIENTATIONS[dims][0]

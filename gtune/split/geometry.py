"""From a kernel and a share of points to what one device runs: its sub-problem.

A device computes its slab by running the kernel on a *sub-problem*: the rows it owns
along the split dimension plus the stencil's halo (its radius along that dimension) on
either side, with the problem size along that dimension set to the sub-problem's
length. Nothing in the kernel changes: kernels that index with ``get_group_id`` (the
optimizing template does) work as well as those using ``get_global_id``, where a global
work offset would not.

This relies on the usual stencil boundary convention: a point within the radius of
an edge is handled as a boundary point (the template leaves it as its initial value),
every other point depends only on inputs within the radius. A sub-problem's edge
either coincides with the whole problem's edge, or lies at least the radius away from
every point the device owns; so every owned point is computed exactly as in the
whole problem. The gathered output is verified against a single-device run anyway.

The sub-problem's length must be a multiple of the device's work-group extent along
the dimension (its *block*, e.g. ``WZ * CZ`` points for the template along z): it is
widened with real rows, upwards first, then downwards, which is always possible since
the whole size is such a multiple for a configuration valid on the whole problem.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from gtune.exceptions import InputError
from gtune.kernel import TunableKernel

DIMS = ("x", "y", "z")


@dataclass(frozen=True)
class SplitAxis:
    """The dimension a kernel is split along.

    ``dim`` indexes the launch's global size (0 is x); ``size_name`` is the problem size
    that sets it; ``arg_axes`` gives, for every buffer argument, the array axis that
    runs along it (``None``: the argument does not depend on it and goes whole).
    """

    dim: int
    size_name: str
    size: int
    arg_axes: Mapping[str, int | None]

    @property
    def letter(self) -> str:
        return DIMS[self.dim]

    def to_dict(self) -> dict[str, Any]:
        return {
            "dim": self.letter,
            "size_name": self.size_name,
            "size": self.size,
            "arg_axes": dict(self.arg_axes),
        }


def split_axis(kernel: TunableKernel, config: Mapping[str, int], dim: str | None) -> SplitAxis:
    """The split dimension (``x``, ``y`` or ``z``; default the outermost of the launch)."""
    if kernel.steps is not None:
        raise InputError(
            f"a kernel with time steps ({kernel.steps.count}) cannot be split: each step "
            "reads its neighbours' previous step across the cut",
            source=kernel.label,
        )
    ndims = len(kernel.launch.global_size)
    if dim is None:
        d = ndims - 1
    else:
        if dim not in DIMS:
            raise InputError(f"unknown dimension {dim!r}; use x, y or z", source="dim")
        d = DIMS.index(dim)
        if d >= ndims:
            raise InputError(
                f"the kernel launches a {ndims}D range; it has no {dim} dimension",
                source="dim",
            )
    glob, _ = kernel.launch_sizes(config)
    candidates = []
    for name in kernel.sizes:
        bigger = dict(kernel.sizes)
        bigger[name] = kernel.sizes[name] * 2
        env: dict[str, Any] = {**bigger, **config}
        if kernel.launch.sizes(env)[0][d] != glob[d]:
            candidates.append(name)
    if len(candidates) != 1:
        what = "no problem size" if not candidates else f"sizes {', '.join(candidates)}"
        raise InputError(
            f"the launch's {DIMS[d]} dimension depends on {what}; a split needs exactly one",
            source=kernel.label,
        )
    name = candidates[0]
    axes: dict[str, int | None] = {}
    env0 = dict(kernel.sizes)
    env1 = {**env0, name: env0[name] + 1}
    for arg in kernel.arguments:
        if arg.kind != "buffer":
            continue
        a, b = arg.shape_for(env0), arg.shape_for(env1)
        changed = [i for i, (p, q) in enumerate(zip(a, b, strict=True)) if p != q]
        if not changed:
            axes[arg.name] = None
            continue
        if len(changed) > 1 or a[changed[0]] != env0[name] or b[changed[0]] != env1[name]:
            raise InputError(
                f"argument {arg.name} does not have one axis of length {name}; "
                "it cannot be cut into slabs",
                source=kernel.label,
            )
        axes[arg.name] = changed[0]
    return SplitAxis(d, name, int(kernel.sizes[name]), axes)


def block_of(kernel: TunableKernel, config: Mapping[str, int], axis: SplitAxis) -> int:
    """Points one work-group covers along the split dimension (``wg_i`` of eq. 5)."""
    glob, loc = kernel.launch_sizes(config)
    if loc is None:
        raise InputError(
            "the description gives no local size: a split needs each device's work-group size",
            source=f"{kernel.label}: launch.local",
        )
    g, w = glob[axis.dim], loc[axis.dim]
    if w <= 0 or g % w:
        raise InputError(
            f"global size {g} is not a multiple of the local size {w} along {axis.letter} "
            f"for {config}",
            source=kernel.label,
        )
    groups = g // w
    if groups == 0 or axis.size % groups:
        raise InputError(
            f"{groups} work-groups do not tile {axis.size_name}={axis.size} evenly",
            source=kernel.label,
        )
    return axis.size // groups


_RADIUS_DEFINE = re.compile(r"^\s*#\s*define\s+R([XYZ])\s+(\d+)\s*$", re.MULTILINE)


def halo_of(kernel: TunableKernel, axis: SplitAxis, halo: int | None = None) -> int:
    """The stencil's radius along the split dimension: ``halo`` if given, else the
    description's ``features.extent`` (x, y, z), its ``features.radius``, or the
    template's ``#define RX/RY/RZ``."""
    if halo is not None:
        if halo < 0:
            raise InputError(f"the halo must be non-negative, got {halo}", source="halo")
        return halo
    extent = kernel.features.get("extent")
    if isinstance(extent, list | tuple) and len(extent) > axis.dim:
        value = extent[axis.dim]
        if isinstance(value, int) and value >= 0:
            return value
    radius = kernel.features.get("radius")
    if isinstance(radius, int) and radius >= 0:
        return radius
    defines = {m.group(1).lower(): int(m.group(2)) for m in _RADIUS_DEFINE.finditer(kernel.source)}
    if axis.letter in defines:
        return defines[axis.letter]
    raise InputError(
        "cannot tell the stencil's radius along the split dimension",
        source=kernel.label,
        hint="give features.extent or features.radius in the description, or --halo N",
    )


@dataclass(frozen=True)
class Slab:
    """What one device runs: rows ``[lo, hi)`` of the whole problem as its sub-problem;
    it writes rows ``[own_lo, own_hi)`` of the output."""

    device: int
    lo: int
    hi: int
    own_lo: int
    own_hi: int
    block: int

    @property
    def length(self) -> int:
        return self.hi - self.lo

    @property
    def owned(self) -> int:
        return self.own_hi - self.own_lo

    def to_dict(self) -> dict[str, int]:
        return {
            "device": self.device,
            "lo": self.lo,
            "hi": self.hi,
            "own_lo": self.own_lo,
            "own_hi": self.own_hi,
            "block": self.block,
        }


def slab_for(device: int, own_lo: int, own_hi: int, size: int, halo: int, block: int) -> Slab:
    """The sub-problem that lets a device compute rows ``[own_lo, own_hi)``."""
    if not 0 <= own_lo < own_hi <= size:
        raise InputError(f"rows [{own_lo}, {own_hi}) are not inside [0, {size})")
    if block < 1 or size % block:
        raise InputError(
            f"the problem size {size} along the split dimension is not a multiple of the "
            f"device's work-group extent {block}"
        )
    lo = max(0, own_lo - halo)
    hi = min(size, own_hi + halo)
    length = min(size, math.ceil((hi - lo) / block) * block)
    lo = min(lo, size - length)
    return Slab(device, lo, lo + length, own_lo, own_hi, block)


def sub_kernel(kernel: TunableKernel, axis: SplitAxis, length: int) -> TunableKernel:
    """The kernel on a sub-problem of ``length`` points along the split dimension."""
    return kernel.with_sizes({axis.size_name: length})


__all__ = [
    "DIMS",
    "Slab",
    "SplitAxis",
    "block_of",
    "halo_of",
    "slab_for",
    "split_axis",
    "sub_kernel",
]

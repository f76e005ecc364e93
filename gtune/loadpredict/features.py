"""Static features of a stencil kernel (and optionally of a device) for prediction.

The paper's four (seed 001 §6.1: stencil size, dimensionality, density, unique
dimension) plus what else is known before any run: radius per dimension, pattern,
arithmetic intensity, element size and the problem's shape. Everything comes from the
kernel's description (``features:`` and the problem size); nothing is measured.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, fields
from typing import Any

from gtune.device import DeviceLimits
from gtune.exceptions import InputError
from gtune.kernel import TunableKernel

PATTERNS = ("dense", "star", "diamond", "no-corners", "thumbtack", "other")
UNIQUE_DIMS = ("none", "x", "y", "z")


@dataclass(frozen=True)
class StencilTraits:
    """What the model sees of a kernel: numbers and categories, all static."""

    points: int  # stencil size: input elements read per output point
    dims: int  # dimensionality of the stencil's extent (1-3)
    density: float  # points / volume of the bounding box
    unique_dim: str  # the one axis that differs from the others ("none" if none)
    radius_x: int
    radius_y: int
    radius_z: int
    pattern: str
    intensity: float  # arithmetic intensity multiplier (seed 001 §8.3.8)
    itemsize: int  # bytes per element
    log2_nx: float
    log2_ny: float
    log2_nz: float

    @classmethod
    def names(cls) -> list[str]:
        return [f.name for f in fields(cls)]

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> StencilTraits:
        try:
            return cls(
                points=int(data["points"]),
                dims=int(data["dims"]),
                density=float(data["density"]),
                unique_dim=str(data["unique_dim"]),
                radius_x=int(data["radius_x"]),
                radius_y=int(data["radius_y"]),
                radius_z=int(data["radius_z"]),
                pattern=str(data["pattern"]),
                intensity=float(data["intensity"]),
                itemsize=int(data["itemsize"]),
                log2_nx=float(data["log2_nx"]),
                log2_ny=float(data["log2_ny"]),
                log2_nz=float(data["log2_nz"]),
            )
        except (KeyError, TypeError, ValueError) as exc:
            raise InputError(f"malformed feature record: {exc}") from None

    def vector(self) -> list[float]:
        """Numeric encoding: numbers as they are, categories one-hot."""
        out = [
            float(self.points),
            float(self.dims),
            self.density,
            float(self.radius_x),
            float(self.radius_y),
            float(self.radius_z),
            self.intensity,
            float(self.itemsize),
            self.log2_nx,
            self.log2_ny,
            self.log2_nz,
        ]
        out += [1.0 if self.unique_dim == u else 0.0 for u in UNIQUE_DIMS]
        out += [1.0 if self.pattern == p else 0.0 for p in PATTERNS]
        return out

    @staticmethod
    def vector_names() -> list[str]:
        base = [
            "points",
            "dims",
            "density",
            "radius_x",
            "radius_y",
            "radius_z",
            "intensity",
            "itemsize",
            "log2_nx",
            "log2_ny",
            "log2_nz",
        ]
        return base + [f"unique_dim={u}" for u in UNIQUE_DIMS] + [f"pattern={p}" for p in PATTERNS]


@dataclass(frozen=True)
class DeviceTraits:
    """Device figures for a model meant to predict across devices."""

    is_gpu: int
    compute_units: int
    log2_local_mem: float
    log2_max_work_group: float
    clock_mhz: int
    log2_global_mem: float
    image_support: int

    @classmethod
    def of(cls, device: DeviceLimits) -> DeviceTraits:
        return cls(
            is_gpu=int(device.type.upper() == "GPU"),
            compute_units=device.compute_units,
            log2_local_mem=math.log2(max(1, device.local_mem_size)),
            log2_max_work_group=math.log2(max(1, device.max_work_group_size)),
            clock_mhz=device.max_clock_mhz,
            log2_global_mem=math.log2(max(1, device.global_mem_size)),
            image_support=int(device.image_support),
        )

    @classmethod
    def names(cls) -> list[str]:
        return [f"device_{f.name}" for f in fields(cls)]

    def vector(self) -> list[float]:
        return [float(v) for v in asdict(self).values()]

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> DeviceTraits:
        try:
            return cls(
                is_gpu=int(float(data["is_gpu"])),
                compute_units=int(float(data["compute_units"])),
                log2_local_mem=float(data["log2_local_mem"]),
                log2_max_work_group=float(data["log2_max_work_group"]),
                clock_mhz=int(float(data["clock_mhz"])),
                log2_global_mem=float(data["log2_global_mem"]),
                image_support=int(float(data["image_support"])),
            )
        except (KeyError, TypeError, ValueError) as exc:
            raise InputError(f"malformed device feature record: {exc}") from None


class FeaturesUnavailable(InputError):
    """A kernel whose description does not say enough for a prediction."""


def _radii(extent: Any, radius: int, dims: int, orientation: str) -> tuple[int, int, int]:
    if isinstance(extent, Sequence) and not isinstance(extent, str) and len(extent) == 3:
        rx, ry, rz = (int(e) for e in extent)
        return rx, ry, rz
    axes = orientation if orientation else "xyz"[:dims]
    return tuple(radius if a in axes else 0 for a in "xyz")  # type: ignore[return-value]


def traits_of(kernel: TunableKernel) -> StencilTraits:
    """The static traits of ``kernel`` from its description's ``features:``, or where
    those are missing, derived from the offsets its reference reads
    (``reference.args.offsets``: what each output point reads of the input).

    Raises :class:`FeaturesUnavailable` naming what is missing for kernels whose
    description says neither (plain ``.cl`` files, whose reads gtune does not analyse
    into a stencil shape).
    """
    f = dict(kernel.features)
    missing = [k for k in ("size", "dims") if k not in f]
    if missing:
        offsets = (
            kernel.reference.args.get("offsets") if kernel.reference.kind == "python" else None
        )
        if not offsets:
            raise FeaturesUnavailable(
                "the description has no stencil features ("
                + ", ".join(missing)
                + " missing under features:, and no reference.args.offsets to derive them"
                " from); the technique cannot be predicted",
                source=kernel.label,
            )
        from gtune.features import kernel_features

        f = {**kernel_features(kernel).to_dict(), **f}
    try:
        points = int(f["size"])
        dims = int(f["dims"])
        radius = int(f.get("radius", 1))
        orientation = str(f.get("orientation", "")).lower()
        rx, ry, rz = _radii(f.get("extent"), radius, dims, orientation)
        box = (2 * rx + 1) * (2 * ry + 1) * (2 * rz + 1)
        density = float(f.get("density", points / box if box else 1.0))
        pattern = str(f.get("pattern", "other")).lower()
        unique = str(f.get("unique_dim", "none")).lower()
        intensity = float(f.get("intensity", 1))
    except (TypeError, ValueError) as exc:
        raise FeaturesUnavailable(f"malformed features: {exc}", source=kernel.label) from None
    itemsize = 4
    for arg in kernel.arguments:
        if arg.kind == "buffer" and arg.role == "input":
            itemsize = int(_itemsize(arg.dtype))
            break
    sizes = dict(kernel.sizes)

    def lg(name: str) -> float:
        return math.log2(max(1, int(sizes.get(name, 1))))

    return StencilTraits(
        points=points,
        dims=dims,
        density=density,
        unique_dim=unique if unique in UNIQUE_DIMS else "none",
        radius_x=rx,
        radius_y=ry,
        radius_z=rz,
        pattern=pattern if pattern in PATTERNS else "other",
        intensity=intensity,
        itemsize=itemsize,
        log2_nx=lg("NX"),
        log2_ny=lg("NY"),
        log2_nz=lg("NZ"),
    )


def _itemsize(dtype: str) -> int:
    import numpy as np

    try:
        return int(np.dtype(dtype).itemsize)
    except TypeError:
        return 4

"""Static stencil features as a typed record, computed from the stencil's shape.

The data-loading predictor (seed 001 §6.1) reads four features of a stencil: its size
(points read per output point), dimensionality, density and unique dimension. They
follow from the set of offsets the stencil reads, so they are computed from it rather
than written by hand; a description without offsets gives them in its ``features:``
mapping, which is then validated. :class:`StencilFeatures` also carries the radius per
axis, the pattern name, the arithmetic intensity, the element type and the array shape.

``TunableKernel.features`` stays a plain mapping (``StencilFeatures.to_dict()`` is one);
:func:`kernel_features` gives the typed record of a kernel.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from gtune.exceptions import InputError

if TYPE_CHECKING:
    from gtune.kernel import TunableKernel

AXES = ("x", "y", "z")
UNIQUE_DIMS = ("x", "y", "z", "none")
Offset = tuple[int, int, int]

_KNOWN = frozenset(
    [
        "size",
        "dims",
        "dimensionality",
        "density",
        "unique_dim",
        "radius",
        "extent",
        "pattern",
        "orientation",
        "intensity",
        "flops_per_point",
        "dtype",
        "shape",
    ]
)


@dataclass(frozen=True)
class StencilFeatures:
    """What a stencil is, for prediction and reports (all derived from its offsets).

    ``size``: input points read per output point. ``dims``: axes the stencil spans (at
    least 1). ``density``: size over the volume of the smallest box holding the stencil.
    ``unique_dim``: the axis that differs from the other two (a 1D stencil's axis, the
    axis across a 2D stencil's plane, a thumbtack's spike), ``none`` when none does.
    ``extent``: radius along x, y, z. ``intensity``: arithmetic intensity (1 or more).
    ``shape``: the array shape, slowest axis first, where known.
    """

    size: int
    dims: int
    density: float
    unique_dim: str
    extent: tuple[int, int, int]
    pattern: str = "custom"
    orientation: str = ""
    intensity: int = 1
    flops_per_point: int = 0
    dtype: str = "float32"
    shape: tuple[int, ...] = ()
    extra: Mapping[str, Any] = field(default_factory=dict, compare=False)

    @property
    def radius(self) -> int:
        return max(self.extent)

    def to_dict(self) -> dict[str, Any]:
        """The ``features:`` mapping of a description (plain YAML/JSON types)."""
        out: dict[str, Any] = {
            "size": self.size,
            "radius": self.radius,
            "extent": list(self.extent),
            "intensity": self.intensity,
            "flops_per_point": self.flops_per_point,
            "pattern": self.pattern,
            "dims": self.dims,
            "orientation": self.orientation,
            "unique_dim": self.unique_dim,
            "density": self.density,
            "dtype": self.dtype,
        }
        if self.shape:
            out["shape"] = list(self.shape)
        out.update({k: v for k, v in self.extra.items() if k not in out})
        return out

    @classmethod
    def from_dict(cls, data: Mapping[str, Any], source: str = "features") -> StencilFeatures:
        """A validated record from a ``features:`` mapping; errors name ``source`` and key."""
        if not isinstance(data, Mapping):
            raise InputError("must be a mapping of feature names to values", source=source)
        missing = [k for k in ("size", "density", "unique_dim") if k not in data]
        if "dims" not in data and "dimensionality" not in data:
            missing.append("dims")
        if "extent" not in data and "radius" not in data:
            missing.append("extent")
        if missing:
            raise InputError(
                f"missing {', '.join(missing)} (or give the stencil's offsets)", source=source
            )
        size = _int(data, "size", source, low=1)
        dims = _int(data, "dims" if "dims" in data else "dimensionality", source, low=1, high=3)
        density = data["density"]
        if isinstance(density, bool) or not isinstance(density, int | float):
            raise InputError(f"density must be a number, got {density!r}", source=source)
        if not 0 < float(density) <= 1:
            raise InputError(f"density must be in (0, 1], got {density!r}", source=source)
        unique = data["unique_dim"]
        if unique not in UNIQUE_DIMS:
            raise InputError(
                f"unique_dim must be one of {', '.join(UNIQUE_DIMS)}, got {unique!r}",
                source=source,
            )
        if "extent" in data:
            extent = _int_tuple(data["extent"], "extent", source, length=3)
            if "radius" in data and _int(data, "radius", source, low=0) != max(extent):
                raise InputError(
                    f"radius {data['radius']!r} is not the largest extent {list(extent)}",
                    source=source,
                )
        else:
            r = _int(data, "radius", source, low=0)
            extent = (r, r if dims >= 2 else 0, r if dims >= 3 else 0)
        box = 1
        for e in extent:
            box *= 2 * e + 1
        if size > box:
            raise InputError(
                f"size {size} exceeds the {box} points within extent {list(extent)}",
                source=source,
            )
        intensity = _int(data, "intensity", source, low=1) if "intensity" in data else 1
        flops = (
            _int(data, "flops_per_point", source, low=0)
            if "flops_per_point" in data
            else 2 * intensity * size
        )
        shape = _int_tuple(data["shape"], "shape", source) if "shape" in data else ()
        return cls(
            size=size,
            dims=dims,
            density=float(density),
            unique_dim=str(unique),
            extent=(extent[0], extent[1], extent[2]),
            pattern=str(data.get("pattern", "custom")),
            orientation=str(data.get("orientation", "")),
            intensity=intensity,
            flops_per_point=flops,
            dtype=str(data.get("dtype", "float32")),
            shape=shape,
            extra={k: v for k, v in data.items() if k not in _KNOWN},
        )


def from_offsets(
    offsets: Iterable[Sequence[int]],
    *,
    pattern: str = "custom",
    orientation: str = "",
    intensity: int = 1,
    dtype: str = "float32",
    shape: Sequence[int] = (),
) -> StencilFeatures:
    """The features of the stencil reading ``offsets`` (``(dx, dy, dz)``, or fewer axes)."""
    points = {_offset(o) for o in offsets}
    if not points:
        raise InputError("a stencil reads at least one point")
    if intensity < 1:
        raise InputError(f"arithmetic intensity must be at least 1, got {intensity}")
    extent = tuple(max(abs(p[i]) for p in points) for i in range(3))
    volume = 1
    for i in range(3):
        values = [p[i] for p in points]
        volume *= max(values) - min(values) + 1
    spanned = [AXES[i] for i in range(3) if extent[i] > 0]
    return StencilFeatures(
        size=len(points),
        dims=max(1, len(spanned)),
        density=len(points) / volume,
        unique_dim=_unique_dim(points, extent),
        extent=(extent[0], extent[1], extent[2]),
        pattern=pattern,
        orientation=orientation or "".join(spanned),
        intensity=intensity,
        flops_per_point=2 * intensity * len(points),
        dtype=dtype,
        shape=tuple(int(n) for n in shape),
    )


def kernel_features(kernel: TunableKernel) -> StencilFeatures:
    """The kernel's features: from the offsets its reference reads where the description
    gives them (generated and shipped stencils), else from its validated ``features:``."""
    given = dict(kernel.features)
    source = f"{kernel.label}: features"
    arrays = [a for a in kernel.arguments if a.kind == "buffer"]
    first = next((a for a in arrays if a.role == "input"), arrays[0] if arrays else None)
    dtype = first.dtype if first is not None else str(given.get("dtype", "float32"))
    shape: tuple[int, ...] = ()
    if first is not None and first.shape:
        shape = first.shape_for(dict(kernel.sizes))
    offsets = kernel.reference.args.get("offsets") if kernel.reference.kind == "python" else None
    if offsets:
        try:
            points = [tuple(int(v) for v in o) for o in offsets]
        except (TypeError, ValueError):
            raise InputError(
                "reference.args.offsets must be lists of integers", source=kernel.label
            ) from None
        intensity = kernel.reference.args.get("intensity", given.get("intensity", 1))
        return from_offsets(
            points,
            pattern=str(given.get("pattern", "custom")),
            orientation=str(given.get("orientation", "")),
            intensity=int(intensity),
            dtype=dtype,
            shape=shape,
        )
    record = StencilFeatures.from_dict({"dtype": dtype, **given}, source)
    if shape and not record.shape:
        record = StencilFeatures(**{**record.__dict__, "shape": shape})
    return record


def _unique_dim(points: set[Offset], extent: Sequence[int]) -> str:
    """The axis whose (reach, points off its zero plane) differs from the other two."""
    if max(extent) == 0:
        return "none"
    signature = [(extent[i], sum(1 for p in points if p[i] != 0)) for i in range(3)]
    for i in range(3):
        others = [signature[j] for j in range(3) if j != i]
        if others[0] == others[1] != signature[i]:
            return AXES[i]
    return "none"


def _offset(o: Sequence[int]) -> Offset:
    values = [int(v) for v in o]
    if not 1 <= len(values) <= 3:
        raise InputError(f"an offset has 1 to 3 coordinates, got {list(o)}")
    values += [0] * (3 - len(values))
    return values[0], values[1], values[2]


def _int(
    data: Mapping[str, Any], key: str, source: str, low: int = 0, high: int | None = None
) -> int:
    value = data[key]
    if isinstance(value, bool) or not isinstance(value, int):
        raise InputError(f"{key} must be an integer, got {value!r}", source=source)
    if value < low or (high is not None and value > high):
        bound = f"at least {low}" if high is None else f"in {low}..{high}"
        raise InputError(f"{key} must be {bound}, got {value}", source=source)
    return value


def _int_tuple(value: Any, key: str, source: str, length: int | None = None) -> tuple[int, ...]:
    ok = isinstance(value, list | tuple) and all(
        isinstance(v, int) and not isinstance(v, bool) and v >= 0 for v in value
    )
    if not ok or (length is not None and len(value) != length):
        want = f"{length} " if length else ""
        raise InputError(
            f"{key} must be a list of {want}non-negative integers, got {value!r}", source=source
        )
    return tuple(value)

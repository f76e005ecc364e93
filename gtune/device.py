"""What gtune knows about an OpenCL device, as plain data.

The OpenCL backend fills :class:`DeviceLimits` from ``clGetDeviceInfo``; the space,
heuristics and splitter read it without touching OpenCL. Limits can also be loaded
from JSON (``gtune devices --json``), so spaces for a device can be built on another
machine.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

# Names a kernel's constraints may use for the device's limits.
LIMIT_NAMES = (
    "MAX_WORK_GROUP_SIZE",
    "MAX_WORK_ITEM_SIZE_0",
    "MAX_WORK_ITEM_SIZE_1",
    "MAX_WORK_ITEM_SIZE_2",
    "LOCAL_MEM_SIZE",
    "LOCAL_MEM_STATIC",
    "COMPUTE_UNITS",
    "MAX_MEM_ALLOC",
    "IMAGE2D_MAX_WIDTH",
    "IMAGE2D_MAX_HEIGHT",
    "IMAGE3D_MAX_WIDTH",
    "IMAGE3D_MAX_HEIGHT",
    "IMAGE3D_MAX_DEPTH",
    "IMAGE_SUPPORT",
    "PREFERRED_VECTOR_WIDTH_FLOAT",
    "DOUBLE_SUPPORT",
)


@dataclass(frozen=True)
class DeviceLimits:
    """What one OpenCL device allows a kernel, as queried from the driver: limits on
    work-group sizes, local and global memory, images, vector widths; ``identity`` keys
    it in the store, ``selector`` names it for ``--device``."""

    platform: str
    name: str
    vendor: str
    type: str  # "GPU", "CPU", "ACCELERATOR", ...
    driver_version: str
    opencl_version: str
    opencl_c_version: str
    compute_units: int
    max_work_group_size: int
    max_work_item_sizes: tuple[int, ...]
    local_mem_size: int
    local_mem_type: str
    max_mem_alloc_size: int
    global_mem_size: int
    max_clock_mhz: int
    image_support: bool
    image2d_max: tuple[int, int]
    image3d_max: tuple[int, int, int]
    preferred_vector_width_float: int
    native_vector_width_float: int
    extensions: tuple[str, ...] = field(default_factory=tuple)
    # the most local memory a kernel's own __local arrays (sized when it is built) may
    # take, as measured by launching one (0: not measured, the driver's local_mem_size);
    # NVIDIA's driver gives them more than CL_DEVICE_LOCAL_MEM_SIZE, which is what it
    # lets __local arguments take
    local_mem_static: int = 0
    platform_index: int = 0
    device_index: int = 0

    @property
    def identity(self) -> str:
        """Stable key for this device across processes and runs (store key)."""
        text = "|".join(
            [self.platform, self.vendor, self.name, self.driver_version, str(self.compute_units)]
        )
        return f"{name_slug(self.name)}-{hashlib.sha256(text.encode()).hexdigest()[:8]}"

    @property
    def selector(self) -> str:
        """Short ``platform:device`` index accepted by ``--device``."""
        return f"{self.platform_index}:{self.device_index}"

    def has_extension(self, name: str) -> bool:
        return name in self.extensions

    def limit_values(self) -> dict[str, int]:
        """The values of :data:`LIMIT_NAMES`, for constraints."""
        wi = list(self.max_work_item_sizes) + [1] * (3 - len(self.max_work_item_sizes))
        return {
            "MAX_WORK_GROUP_SIZE": self.max_work_group_size,
            "MAX_WORK_ITEM_SIZE_0": wi[0],
            "MAX_WORK_ITEM_SIZE_1": wi[1],
            "MAX_WORK_ITEM_SIZE_2": wi[2],
            "LOCAL_MEM_SIZE": self.local_mem_size,
            "LOCAL_MEM_STATIC": max(self.local_mem_static, self.local_mem_size),
            "COMPUTE_UNITS": self.compute_units,
            "MAX_MEM_ALLOC": self.max_mem_alloc_size,
            "IMAGE2D_MAX_WIDTH": self.image2d_max[0],
            "IMAGE2D_MAX_HEIGHT": self.image2d_max[1],
            "IMAGE3D_MAX_WIDTH": self.image3d_max[0],
            "IMAGE3D_MAX_HEIGHT": self.image3d_max[1],
            "IMAGE3D_MAX_DEPTH": self.image3d_max[2],
            "IMAGE_SUPPORT": int(self.image_support),
            "PREFERRED_VECTOR_WIDTH_FLOAT": self.preferred_vector_width_float,
            "DOUBLE_SUPPORT": int(self.has_extension("cl_khr_fp64")),
        }

    def to_dict(self) -> dict[str, Any]:
        data = asdict(self)
        data["identity"] = self.identity
        data["selector"] = self.selector
        return data

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> DeviceLimits:
        fields = {f for f in cls.__dataclass_fields__}
        kwargs = {k: v for k, v in data.items() if k in fields}
        for key in ("max_work_item_sizes", "image2d_max", "image3d_max", "extensions"):
            if key in kwargs:
                kwargs[key] = tuple(kwargs[key])
        return cls(**kwargs)


TUNING_EXTENSIONS = (
    "cl_khr_image2d_from_buffer",
    "cl_khr_fp64",
    "cl_khr_fp16",
    "cl_khr_subgroups",
    "cl_intel_subgroups",
    "cl_khr_3d_image_writes",
    "cl_nv_device_attribute_query",
)


def name_slug(name: str) -> str:
    """A device name as the readable part of its identity: ``nvidia-h100-80gb-hbm3``."""
    slug = "".join(c if c.isalnum() else "-" for c in name.lower()).strip("-")
    return "-".join(filter(None, slug.split("-")))[:32]


#: Names people call a platform by, matched like a substring of its full name.
PLATFORM_ALIASES = {"pocl": "portable computing language"}


def choose_device(devices: list[DeviceLimits], selector: str | None = None) -> DeviceLimits:
    """Pick a device by ``P:D`` index, identity, or name/platform/type substring
    (case-insensitive; ``pocl`` names PoCL's platform); default: ``$GTUNE_DEVICE``, else
    the first GPU, else the first device."""
    import os

    from gtune.exceptions import InputError

    if not devices:
        raise InputError("no OpenCL device to choose from", source="device")
    origin = "device" if selector else "$GTUNE_DEVICE"
    selector = selector or os.environ.get("GTUNE_DEVICE") or None
    if selector is None:
        gpus = [d for d in devices if "GPU" in d.type]
        return (gpus or devices)[0]
    for d in devices:
        if selector in (d.selector, d.identity):
            return d
    low = selector.lower()
    platform = PLATFORM_ALIASES.get(low, low)
    matches = [
        d
        for d in devices
        if low in d.name.lower() or platform in d.platform.lower() or low == d.type.lower()
    ]
    if not matches:
        names = "; ".join(f"{d.selector} {d.name} ({d.platform})" for d in devices)
        raise InputError(f"no OpenCL device matches {selector!r}; devices: {names}", source=origin)
    return matches[0]


def same_device(listed: Sequence[DeviceLimits], wanted: DeviceLimits) -> int | None:
    """Which of ``listed`` (a process's own listing, in order) is the device ``wanted``
    describes: the one of its identity at its index (``P:D``: two identical GPUs have
    one identity and differ only there), else the first of its identity (a process
    that enumerates the devices otherwise); None if none has it."""
    first = None
    for i, d in enumerate(listed):
        if d.identity != wanted.identity:
            continue
        if d.selector == wanted.selector:
            return i
        if first is None:
            first = i
    return first

"""Device limits and descriptions shared by the space tests."""

from __future__ import annotations

from pathlib import Path

from gtune.description import load_kernel
from gtune.device import DeviceLimits
from gtune.kernel import TunableKernel

DATA = Path(__file__).parent / "data"


def h100_limits(**changes: object) -> DeviceLimits:
    """The H100's OpenCL limits as DESIGN.md records them (image sizes: NVIDIA's)."""
    facts: dict[str, object] = dict(
        platform="NVIDIA CUDA",
        name="NVIDIA H100 80GB HBM3",
        vendor="NVIDIA Corporation",
        type="GPU",
        driver_version="580",
        opencl_version="OpenCL 3.0 CUDA",
        opencl_c_version="OpenCL C 1.2",
        compute_units=132,
        max_work_group_size=1024,
        max_work_item_sizes=(1024, 1024, 64),
        local_mem_size=48 * 1024,
        local_mem_type="local",
        max_mem_alloc_size=20 * 2**30,
        global_mem_size=80 * 2**30,
        max_clock_mhz=1980,
        image_support=True,
        image2d_max=(32768, 32768),
        image3d_max=(16384, 16384, 16384),
        preferred_vector_width_float=1,
        native_vector_width_float=1,
    )
    facts.update(changes)
    return DeviceLimits(**facts)  # type: ignore[arg-type]


def small_gpu_limits(**changes: object) -> DeviceLimits:
    """A small GPU of no real vendor: 8 compute units, work-groups of up to 256."""
    facts: dict[str, object] = dict(
        platform="Acme OpenCL",
        name="Test GPU",
        vendor="Acme",
        driver_version="1.0",
        compute_units=8,
        max_work_group_size=256,
        max_work_item_sizes=(256, 256, 64),
        max_mem_alloc_size=1 << 30,
        global_mem_size=1 << 32,
        max_clock_mhz=1000,
        image2d_max=(16384, 16384),
        image3d_max=(2048, 2048, 2048),
    )
    facts.update(changes)
    return h100_limits(**facts)


def stencil(size: int = 16) -> TunableKernel:
    return load_kernel(DATA / "stencil3d.yaml", {"NX": size, "NY": size, "NZ": size})

"""Tuned kernels inside the application: ``gtune.runtime``.

Open tuned results once (exports, bundles, result stores), then ask for a kernel for a
pyopencl context's device and a problem size; it comes with its configuration chosen
(tuned here, else tuned for the nearest legal size on this device, else the kernel's
default) and is called with the original kernel's arguments. With ``tune_missing``, a
device or size with no tuned result is tuned in the background and later calls switch
to what was found once the confirmation round says it is faster.

    import gtune.runtime
    lib = gtune.runtime.open_tuned("tuned/", kernel="stencils/heat3d.cl", tune_missing=50)
    step = lib.kernel_for(ctx, {"NX": 128, "NY": 128, "NZ": 64})
    step(queue, src, dst)   # step.choice: tuned, nearest or default

This package imports pyopencl in the application's process (``runtime/opencl.py``),
the one place outside gtune's measuring workers that does (docs/runtime.md).
"""

from gtune.runtime.choose import DEFAULT, NEAREST, TUNED, Choice, choose, violation
from gtune.runtime.library import RuntimeKernel, TunedLibrary, open_tuned
from gtune.runtime.sources import TunedEntry, read_sources

__all__ = [
    "DEFAULT",
    "NEAREST",
    "TUNED",
    "Choice",
    "RuntimeKernel",
    "TunedEntry",
    "TunedLibrary",
    "choose",
    "open_tuned",
    "read_sources",
    "violation",
]

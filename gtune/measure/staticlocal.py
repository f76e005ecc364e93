"""How much local memory a kernel's own ``__local`` arrays may take on a device.

``CL_DEVICE_LOCAL_MEM_SIZE`` is what a device promises a work-group. NVIDIA's driver
reports 48 KiB, the most that ``__local`` *arguments* may take, yet it launches a
kernel whose own arrays (sized when it is built) take up to what the SM holds: on the
H200, a temporal kernel with 95 KiB of them ran and gave the reference's bits, at
1.7x the copy where 48 KiB allowed 1.51x (``benchmarks/results/h200-limit/temporal-8/
zs-large-local/``). No query says how much, so it is measured: a kernel with a static
array of N bytes, which writes and reads every element, is built and launched for N
between the reported size and a ceiling, and the largest N that launches and reads
back right is the limit (``DeviceLimits.local_mem_static``, ``LOCAL_MEM_STATIC``).

Only NVIDIA's GPUs are measured (elsewhere the driver's number is the limit, and
PoCL's is already its whole memory). This module is pure (the kernel's text and the
bisection); ``gtune.measure._opencl.static_local_limit`` builds and launches, once per
device and process.
"""

from __future__ import annotations

from collections.abc import Callable

#: The largest size tried: above any GPU's local memory per work-group today (Hopper's
#: SM gives one work-group at most 227 KiB).
CEILING = 256 * 1024
STEP = 1024  # the measured limit is a multiple of 1 KiB

#: The probe: a work-group of 64 fills a static array of N ints and counts, into
#: ``out``, the elements it reads back right (N where the launch worked).
SOURCE = """
__kernel void static_local_(__global int *out)
{
    __local int a[N];
    const int i = (int)get_local_id(0);
    for (int j = i; j < N; j += (int)get_local_size(0)) {
        a[j] = j;
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    int s = 0;
    for (int j = i; j < N; j += (int)get_local_size(0)) {
        s += a[N - 1 - j] == N - 1 - j;
    }
    atomic_add(out, s);
}
"""


def largest_fitting(low: int, high: int, fits: Callable[[int], bool], step: int = STEP) -> int:
    """The largest multiple of ``step`` in [``low``, ``high``] for which ``fits`` holds,
    by bisection, given that ``fits`` holds at ``low`` and, once false, stays false
    above; ``low`` where it holds nowhere above."""
    lo, hi = low // step, high // step  # in steps; lo * step fits
    best = low
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if fits(mid * step):
            best, lo = mid * step, mid
        else:
            hi = mid - 1
    return best

#!/usr/bin/env python3
"""Whether the DRAM serves a copy more slowly when its work-groups read and write many
places of the arrays at once (issue 49).

The H200's one-step stencils move the minimum DRAM bytes but keep the DRAM busy 72–77 %
of the time against the float4 copy's 87 % (``results/h200-limit/ncu/``), and the link
between the L2's partitions is not what holds them (``results/h200-limit/homes/``).
One difference left is where their concurrent accesses fall: the copy's resident
work-groups read and write one contiguous stretch of each array (about a megabyte), a
3D stencil's work-groups read 10–20 planes a megabyte apart, and longer blocks per
work-group (``results/h200-limit/extents/``) run slower still.

This probe times the float4 copy with its work-groups' chunks taken from ``K``
interleaved streams: work-group ``g`` (128 work-items, 2 KiB) copies chunk
``(g % K) * (G / K) + g / K``, so that the resident work-groups work on ``K`` places of
the arrays ``size³ / K`` floats apart, each advancing in order. ``K = 1`` is the float4
copy itself. Every variant's output is checked bit for bit (a wrong one stops the
probe); then all run in alternating rounds (median of ``--reps`` launches per round,
median over rounds).

    python3 benchmarks/window_probe.py OUT --device NVIDIA --size 512 --rounds 7
"""

from __future__ import annotations

import functools
import json
import statistics
import sys
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

GROUP = 128
STREAMS = (1, 2, 8, 32, 128, 512, 2048, 8192)

SOURCE = r"""
__kernel __attribute__((reqd_work_group_size(GROUP, 1, 1)))
void scopy_(__global const float4 *restrict a, __global float4 *restrict b, const int k)
{
    const int g = (int)get_group_id(0), G = (int)get_num_groups(0);
    const size_t c = (size_t)(g % k) * (size_t)(G / k) + (size_t)(g / k);
    const size_t i = c * GROUP + get_local_id(0);
    b[i] = a[i];
}
"""


def chunk_order(groups: int, k: int) -> np.ndarray:
    """The chunk each work-group copies (the kernel's formula, for the tests)."""
    g = np.arange(groups)
    return (g % k) * (groups // k) + g // k


def main(argv: list[str] | None = None) -> int:
    import pyopencl as cl
    import xhalo_probe

    args = xhalo_probe.probe_parser(__doc__, size_help="cube side: the copy's floats").parse_args(
        argv
    )
    device, context, queue = xhalo_probe.open_device(args.device)
    n = args.size**3
    groups = n // 4 // GROUP
    ks = [k for k in STREAMS if groups % k == 0]
    mf = cl.mem_flags
    host = np.random.default_rng(1).random(n, dtype=np.float32)
    a = cl.Buffer(context, mf.READ_ONLY | mf.COPY_HOST_PTR, hostbuf=host)
    b = cl.Buffer(context, mf.READ_WRITE, size=n * 4)
    prog = cl.Program(context, SOURCE).build(options=[f"-DGROUP={GROUP}"])
    kern = cl.Kernel(prog, "scopy_")

    def launch(k: int) -> Any:
        return kern(queue, (groups * GROUP,), (GROUP,), a, b, np.int32(k))

    out = np.empty(n, dtype=np.float32)
    checks = {}
    for k in ks:
        cl.enqueue_fill_buffer(queue, b, np.int32(-1), 0, n * 4)
        launch(k).wait()
        cl.enqueue_copy(queue, out, b).wait()
        checks[str(k)] = bool(np.array_equal(out.view(np.int32), host.view(np.int32)))
    print("checks", checks, flush=True)
    wrong = [k for k, ok in checks.items() if not ok]
    if wrong:
        raise SystemExit(f"window_probe: the copy is wrong with K = {', '.join(wrong)}")
    launches = {str(k): functools.partial(launch, k) for k in ks}
    rounds = xhalo_probe.alternating_rounds(launches, args.rounds, args.reps, warmup=1)
    times = {k: rounds[str(k)] for k in ks}
    base = statistics.median(times[1])
    rows = [
        {
            "streams": k,
            "apart_MB": round(n * 4 / k / 1e6, 3),
            "us": round(statistics.median(v) * 1e6, 2),
            "vs_copy": round(statistics.median(v) / base, 4),
            "gbs": round(2 * n * 4 / statistics.median(v) / 1e9, 1),
            "rounds_us": [round(x * 1e6, 2) for x in v],
        }
        for k, v in times.items()
    ]
    data = {"device": device.name, "size": args.size, "checks": checks, "rows": rows}
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "window.json").write_text(json.dumps(data, indent=1) + "\n")
    for r in rows:
        print(r["streams"], r["apart_MB"], r["us"], r["vs_copy"], r["gbs"], flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())

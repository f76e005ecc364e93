#!/usr/bin/env python3
"""Whether the kept rim costs a 3D block's copy more than a row's, and whether writing
the rim's vectors apart, in the rows' order, buys the difference back (issue 49).

With the interior boundary, each row's first and last point keep the output's contents,
so the row's first and last 32-byte sectors are written in part, and the memory reads
each such sector before it writes it. A 1D copy that writes whole rows in order pays
6.5 % of the copy for it (``results/h200-limit/x-rim/``, ``copy4i``); the template's
copy with an x halo pays 9 % at laplacian4's winning shape (``copy3d_x2`` against
``copy3d``, ``results/h200-limit/ncu/halo-shape/``). Its blocks are 128 floats × 8 rows
× 8 planes, so each work-group writes the ends of 64 rows in 8 planes at once.

Every kernel here copies ``size³`` floats as float4 vectors. A block kernel's
work-group covers ``XV`` vectors of ``RY`` rows, each work-item loading its vector in
``PLANES`` planes before it stores them (the template's register blocks), the blocks in
the launch's order x, y, z; ``SHAPES`` lists the (``XV``, ``RY``, ``PLANES``) measured,
the first laplacian4's winner's (32 × 8 × 8). The kernels:

- ``copy4``: the float4 copy (the yardstick);
- ``rowi``: the 1D copy with each row's first and last point kept (``copy4i``);
- ``blk`` (at every shape): the block copy, every point written;
- ``blki`` (at every shape): the block copy with the rim kept (a rim vector's other
  lanes stored one by one, as the template stores them);
- ``blks``: ``blki`` whose blocks leave the rim vectors out; after each slab's blocks
  (``PLANES`` planes) come work-groups that store the slab's rim vectors (the same
  lanes) in the order of the rows, each work-item one vector;
- ``blkf``: the same with each slab's rim work-groups before its blocks;
- ``blke``: the same with every slab's rim work-groups after all the blocks

(the last three at the first shape only).

Every kernel's output is compared with the input bit for bit, the kept points with the
sentinel the destination held (a wrong one stops the probe); then all run in
alternating rounds (median of ``--reps`` launches per round, median over rounds).

    python3 benchmarks/rim_order_probe.py OUT --device NVIDIA --size 512 --rounds 9
"""

from __future__ import annotations

import functools
import json
import statistics
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

# block shapes: (vectors along x, rows) of a work-group, planes per work-item; the
# first is laplacian4's winner's (128 floats x 8 rows x 8 planes)
SHAPES = (
    (32, 8, 8),
    (128, 2, 8),
    (32, 8, 1),
    (128, 2, 1),
    (32, 8, 4),
    (64, 4, 8),
    (64, 8, 4),
    (32, 2, 8),
    (128, 8, 1),
)
KEPT = ("rowi", "blki", "blks", "blkf", "blke")

SOURCE = r"""
#define NXV (N / 4)
#define WG (XV * RY)
#define NBX (NXV / XV)
#define NBY (N / RY)
#define SLAB (NBX * NBY)          /* block work-groups per slab of PLANES planes */
#define RIMG (2 * PLANES * N / WG) /* rim work-groups per slab */

/* vector v (index xv in its row) stored, the row's first and last point left */
inline void store_kept(__global float4 *d, size_t v, int xv, float4 c)
{
    __global float *e = (__global float *)(d + v);
    if (xv == 0) {
        e[1] = c.y; e[2] = c.z; e[3] = c.w;
    } else if (xv == NXV - 1) {
        e[0] = c.x; e[1] = c.y; e[2] = c.z;
    } else {
        d[v] = c;
    }
}

/* block g (x fastest, then y, then z): keep 0 stores every vector, 1 keeps the rim's
   points, 2 leaves the rim vectors to the rim work-groups */
inline void block_(__global const float4 *s, __global float4 *d, int g, int keep)
{
    const int l = (int)get_local_id(0);
    const int xv = g % NBX * XV + l % XV, y = g / NBX % NBY * RY + l / XV;
    const int z0 = g / SLAB * PLANES;
    float4 c[PLANES];
    for (int k = 0; k < PLANES; ++k)
        c[k] = s[((size_t)(z0 + k) * N + y) * NXV + xv];
    for (int k = 0; k < PLANES; ++k) {
        const size_t v = ((size_t)(z0 + k) * N + y) * NXV + xv;
        if (keep == 0)
            d[v] = c[k];
        else if (keep == 1)
            store_kept(d, v, xv, c[k]);
        else if (xv != 0 && xv != NXV - 1)
            d[v] = c[k];
    }
}

/* rim work-group r of slab z: the rim vectors of the slab's rows in their order, each
   row's first then last */
inline void rim_(__global const float4 *s, __global float4 *d, int z, int r)
{
    const int q = r * WG + (int)get_local_id(0);
    const size_t row = (size_t)z * PLANES * N + q / 2;
    const int xv = q % 2 ? NXV - 1 : 0;
    const size_t v = row * NXV + xv;
    store_kept(d, v, xv, s[v]);
}

__kernel void copy4(__global const float4 *restrict s, __global float4 *restrict d)
{
    d[get_global_id(0)] = s[get_global_id(0)];
}
__kernel void rowi(__global const float4 *restrict s, __global float4 *restrict d)
{
    const size_t v = get_global_id(0);
    store_kept(d, v, (int)(v % NXV), s[v]);
}
__kernel void blk(__global const float4 *restrict s, __global float4 *restrict d)
{
    block_(s, d, (int)get_group_id(0), 0);
}
__kernel void blki(__global const float4 *restrict s, __global float4 *restrict d)
{
    block_(s, d, (int)get_group_id(0), 1);
}
/* each slab's rim work-groups after (AFTER 1) or before (0) its blocks */
inline void slab_(__global const float4 *s, __global float4 *d, int after)
{
    const int g = (int)get_group_id(0), z = g / (SLAB + RIMG), j = g % (SLAB + RIMG);
    const int b = after ? j : j - RIMG;
    if (b >= 0 && b < SLAB)
        block_(s, d, z * SLAB + b, 2);
    else
        rim_(s, d, z, after ? j - SLAB : j);
}
__kernel void blks(__global const float4 *restrict s, __global float4 *restrict d)
{
    slab_(s, d, 1);
}
__kernel void blkf(__global const float4 *restrict s, __global float4 *restrict d)
{
    slab_(s, d, 0);
}
__kernel void blke(__global const float4 *restrict s, __global float4 *restrict d)
{
    const int g = (int)get_group_id(0), blocks = SLAB * (N / PLANES);
    if (g < blocks)
        block_(s, d, g, 2);
    else
        rim_(s, d, (g - blocks) / RIMG, (g - blocks) % RIMG);
}
"""


def groups(name: str, n: int, shape: tuple[int, int, int]) -> tuple[int, int]:
    """(work-groups, work-items per group) of a kernel's launch at size n and a block
    shape (vectors along x, rows, planes)."""
    xv, ry, pz = shape
    nxv, wg = n // 4, xv * ry
    slabs, slab = n // pz, (nxv // xv) * (n // ry)
    rim = 2 * pz * n // wg
    if name in ("copy4", "rowi"):
        return n * n * nxv // 128, 128
    if name in ("blk", "blki"):
        return slabs * slab, wg
    return slabs * (slab + rim), wg


def label(name: str, shape: tuple[int, int, int]) -> str:
    return name if name in ("copy4", "rowi") else f"{name}@{'x'.join(map(str, shape))}"


def expected(host: np.ndarray, n: int, name: str, sentinel: float) -> np.ndarray:
    if name not in KEPT:
        return host
    rows = host.reshape(-1, n).copy()
    rows[:, 0] = rows[:, -1] = sentinel
    return rows.reshape(-1)


def main(argv: list[str] | None = None) -> int:
    import pyopencl as cl
    import xhalo_probe

    p = xhalo_probe.probe_parser(__doc__, size_help="cube side (a multiple of 128)")
    args = p.parse_args(argv)
    n = args.size
    if n % 128:
        p.error("--size must be a multiple of 128")
    device, context, queue = xhalo_probe.open_device(args.device)
    mf = cl.mem_flags
    host = np.random.default_rng(3).random(n**3, dtype=np.float32)
    a = cl.Buffer(context, mf.READ_ONLY | mf.COPY_HOST_PTR, hostbuf=host)
    b = cl.Buffer(context, mf.READ_WRITE, size=host.nbytes)
    kernels: dict[str, tuple[Any, str, tuple[int, int, int]]] = {}
    # the shapes whose blocks divide a row
    for i, shape in enumerate(s for s in SHAPES if (n // 4) % s[0] == 0):
        xv, ry, pz = shape
        opts = [f"-DN={n}", f"-DXV={xv}", f"-DRY={ry}", f"-DPLANES={pz}"]
        prog = cl.Program(context, SOURCE).build(options=opts)
        # the row copies once; the rim written apart at the first shape only
        names = ["copy4", "rowi"] if i == 0 else []
        names += ["blk", "blki"] + (["blks", "blkf", "blke"] if i == 0 else [])
        for k in names:
            kernels[label(k, shape)] = (cl.Kernel(prog, k), k, shape)

    def launch(key: str) -> Any:
        kernel, name, shape = kernels[key]
        count, size = groups(name, n, shape)
        return kernel(queue, (count * size,), (size,), a, b)

    out = np.empty_like(host)
    checks = {}
    for k in kernels:
        cl.enqueue_fill_buffer(queue, b, np.float32(-1.0), 0, host.nbytes).wait()
        launch(k).wait()
        cl.enqueue_copy(queue, out, b).wait()
        want = expected(host, n, kernels[k][1], -1.0)
        checks[k] = bool(np.array_equal(out.view(np.int32), want.view(np.int32)))
    print("checks", checks, flush=True)
    wrong = [k for k, ok in checks.items() if not ok]
    if wrong:
        raise SystemExit(f"rim_order_probe: wrong output from {', '.join(wrong)}")
    launches: dict[str, Callable[[], Any]] = {k: functools.partial(launch, k) for k in kernels}
    rounds = xhalo_probe.alternating_rounds(launches, args.rounds, args.reps, warmup=1)
    copy = statistics.median(rounds["copy4"])
    blk = {kernels[k][2]: statistics.median(v) for k, v in rounds.items() if kernels[k][1] == "blk"}
    rows = [
        {
            "kernel": k,
            "us": round(statistics.median(v) * 1e6, 2),
            "of_copy": round(copy / statistics.median(v), 4),
            "vs_blk": round(statistics.median(v) / blk[kernels[k][2]], 4),
            "rounds_us": [round(x * 1e6, 2) for x in v],
        }
        for k, v in rounds.items()
    ]
    data = {"device": device.name, "size": n, "checks": checks, "rows": rows}
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "rim_order.json").write_text(json.dumps(data, indent=1) + "\n")
    for r in rows:
        print(r["kernel"], r["us"], r["of_copy"], r["vs_blk"], flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())

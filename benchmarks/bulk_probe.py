#!/usr/bin/env python3
"""A copy through tiles that Hopper's bulk asynchronous copies stage in local memory.

box27's one-step winner (``results/h200-limit/ncu/box27-shape/``) runs below every
ceiling measured on the H200; what a work-item keeps in flight is what its 128
registers hold (``regcap/above-128/``). Hopper's bulk copies (PTX ``cp.async.bulk``,
completed on an ``mbarrier``) move a whole row from global to local memory in one
instruction and hold no register while in flight, so a work-group could have its whole
tile, halo included, in flight at once. Before such a stencil is written, this asks
what the staging itself costs: a float copy of NX³ whose work-groups each stage a 3D
tile of rows in local memory with bulk copies, wait on the ``mbarrier``, and write the
tile's interior out as float4 stores, against the float4 copy. If the staged copy is
much slower than the copy, a staged stencil cannot beat the package's registers.

Kernels (each work-group: 32 work-items along x by ``WY`` by ``WZ``, writing 128 × TY ×
TZ floats; ``--shape TYxTZ/WYxWZ``, repeated, names the tiles):

- ``copy4``: the float4 copy (the yardstick);
- ``bulkH``: tiles of (128 + 8) × (TY + 2) × (TZ + 2) floats (box27's halo of one
  point, rounded to a float4 either side), one bulk copy per row of 544 bytes, issued
  by the first warp;
- ``bulk0``: tiles of exactly 128 × TY × TZ (no halo), one bulk copy per row of 512
  bytes: the staging's cost without the halo's;
- ``keepH``: ``bulkH`` storing only the interior's points (the interior boundary kept,
  as box27 keeps it): a staged box27's bound if its arithmetic were free;
- ``ldH``: ``bulkH``'s tile staged by ordinary float4 loads and local stores (every
  work-item a share of the rows), then a barrier: the same tile through registers;
- ``boxB``, ``boxL``: box27 (``stencils/box27.stencil.yaml``: the tensor product of
  [1, 2, 1] / 4, the interior boundary kept) from ``bulkH``'s and ``ldH``'s tiles, each
  work-item a float4 of each row it takes, the rim's vectors stored point by point;
- ``package``: the package's box27 at ``--config`` (the defaults' winner), the kernel
  the staged ones would have to beat.

Every kernel's output is checked before it is timed (the copies against their input bit
for bit; box27's against a float64 reference within float rounding, its kept boundary
bit for bit); the kernels run in alternating rounds, each round the median of ``--reps``
launches' event times. NVIDIA only for the bulk copies (inline PTX); elsewhere the
``bulk`` and ``boxB`` kernels stage with ordinary loads, which checks the tiles'
bookkeeping (tests run it on PoCL).

    python3 benchmarks/bulk_probe.py OUT --device NVIDIA --size 512 --shape 8x8/2x2
"""

from __future__ import annotations

import re
import statistics
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))


SOURCE = r"""
#define TXV (32 + 2 * HV)        /* float4 per staged row: the tile's 32 and HV either side */
#define SY (TY + 2 * H)          /* staged rows per plane */
#define SZ (TZ + 2 * H)          /* staged planes */
#define NXV (NX / 4)

#if BULK
inline void bar_init_(__local ulong *b)
{
    asm volatile("mbarrier.init.shared.b64 [%0], 1;" ::"l"(b) : "memory");
    asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
}
inline void bar_expect_(__local ulong *b, uint bytes)
{
    asm volatile("mbarrier.arrive.expect_tx.shared.b64 _, [%0], %1;" ::"l"(b), "r"(bytes)
                 : "memory");
}
inline void bulk_(__local float4 *dst, __global const float4 *src, uint bytes,
                  __local ulong *b)
{
    asm volatile(
        "cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];"
        ::"l"(dst), "l"(src), "r"(bytes), "l"(b) : "memory");
}
inline void bar_wait_(__local ulong *b)
{
    uint done = 0;
    while (!done)
        asm volatile("{ .reg .pred p; mbarrier.try_wait.parity.shared.b64 p, [%1], 0; "
                     "selp.u32 %0, 1, 0, p; }"
                     : "=r"(done) : "l"(b) : "memory");
}
#endif

/* staged row r of the tile: plane r / SY, row r % SY; its first float4 xs (clamped into
   the row, so that the 32 interior vectors sit at xo within it) */
__kernel __attribute__((reqd_work_group_size(32, WY, WZ)))
void staged(__global const float4 *restrict in, __global float4 *restrict out)
{
    __local float4 tile[SZ * SY * TXV];
    const int lid = ((int)get_local_id(2) * WY + (int)get_local_id(1)) * 32 + (int)get_local_id(0);
    const int xv0 = (int)get_group_id(0) * 32;
    const int y0 = (int)get_group_id(1) * TY, z0 = (int)get_group_id(2) * TZ;
    const int xs = clamp(xv0 - HV, 0, NXV - TXV), xo = xv0 - xs;
#if BULK
    __local ulong bar;
    if (lid == 0)
        bar_init_(&bar);
    barrier(CLK_LOCAL_MEM_FENCE);
    if (lid == 0) { /* the bytes of the rows inside the array; the tx-count may run
                       below zero until this arrives, so the warp need not wait for it */
        const int ny = min(y0 - H + SY, NY) - max(y0 - H, 0);
        const int nz = min(z0 - H + SZ, NZ) - max(z0 - H, 0);
        bar_expect_(&bar, (uint)(ny * nz * TXV * 16));
    }
    if (lid < 32) {
        for (int r = lid; r < SZ * SY; r += 32) {
            const int y = y0 - H + r % SY, z = z0 - H + r / SY;
            if (y >= 0 && y < NY && z >= 0 && z < NZ)
                bulk_(tile + r * TXV, in + ((size_t)z * NY + y) * NXV + xs, TXV * 16, &bar);
        }
    }
    bar_wait_(&bar);
#else
    for (int i = lid; i < SZ * SY * TXV; i += 32 * WY * WZ) {
        const int r = i / TXV, v = i % TXV;
        const int y = y0 - H + r % SY, z = z0 - H + r / SY;
        if (y >= 0 && y < NY && z >= 0 && z < NZ)
            tile[i] = in[((size_t)z * NY + y) * NXV + xs + v];
    }
    barrier(CLK_LOCAL_MEM_FENCE);
#endif
    const int v = (int)get_local_id(0), xi = xo + v, xv = xv0 + v;
    /* the interior: TZ x TY rows of 32 float4, each work-item a float4 of each row it takes */
    for (int r = (int)get_local_id(2) * WY + (int)get_local_id(1); r < TZ * TY; r += WY * WZ) {
        const int y = r % TY, z = r / TY;
        const size_t o = ((size_t)(z0 + z) * NY + (y0 + y)) * NXV + xv;
#if BOX || KEEP /* the interior boundary's points are kept (not written) */
        if (y0 + y == 0 || y0 + y == NY - 1 || z0 + z == 0 || z0 + z == NZ - 1)
            continue;
#endif
#if BOX
        /* box27, the tensor product of [1, 2, 1] / 4: each staged row's x-sums, then
           y and z */
        float4 acc = (float4)(0.0f);
        for (int dz = 0; dz < 3; ++dz)
            for (int dy = 0; dy < 3; ++dy) {
                __local const float4 *row = tile + ((z + dz) * SY + (y + dy)) * TXV;
                const float4 c = row[xi];
                const float l = row[max(xi - 1, 0)].w, rt = row[min(xi + 1, TXV - 1)].x;
                const float4 s4 =
                    (float4)(l, c.x, c.y, c.z) + 2.0f * c + (float4)(c.y, c.z, c.w, rt);
                acc += (float)((1 + (dy & 1)) * (1 + (dz & 1))) * s4;
            }
        acc *= (1.0f / 64.0f);
#else
        const float4 acc = tile[((z + H) * SY + (y + H)) * TXV + xi];
#endif
#if BOX || KEEP
        if (xv > 0 && xv < NXV - 1) {
            out[o] = acc;
        } else { /* a row's first and last vectors: their inner points one by one */
            __global float *p = (__global float *)(out + o);
            if (xv > 0) p[0] = acc.x;
            p[1] = acc.y;
            p[2] = acc.z;
            if (xv < NXV - 1) p[3] = acc.w;
        }
#else
        out[o] = acc;
#endif
    }
}

__kernel void copy4(__global const float4 *restrict a, __global float4 *restrict b)
{
    const size_t i = get_global_id(0);
    b[i] = a[i];
}
"""

VARIANTS = {  # name: (BULK, H: halo rows, HV: halo float4 either side, BOX, KEEP)
    "bulkH": (1, 1, 1, 0, 0),
    "bulk0": (1, 0, 0, 0, 0),
    "keepH": (1, 1, 1, 0, 1),
    "ldH": (0, 1, 1, 0, 0),
    "boxB": (1, 1, 1, 1, 1),
    "boxL": (0, 1, 1, 1, 1),
}
BOX27 = "WX=32,WY=2,WZ=2,BX=4,VX=4,BY=4,BZ=4,SEP=1,RIM=1,RIN=1"  # the defaults' winner


def build(context: Any, n: int, shape: tuple[int, int, int, int], nvidia: bool) -> dict[str, Any]:
    """Each variant's kernel at one tile shape (the bulk ones with ordinary loads off
    NVIDIA)."""
    import pyopencl as cl

    ty, tz, wy, wz = shape
    sizes = dict(NX=n, NY=n, NZ=n, TY=ty, TZ=tz, WY=wy, WZ=wz)
    kernels: dict[str, Any] = {}
    for name, (bulk, h, hv, box, keep) in VARIANTS.items():
        opts = [f"-D{k}={v}" for k, v in sizes.items()]
        opts += [f"-DBULK={bulk if nvidia else 0}", f"-DH={h}", f"-DHV={hv}", f"-DBOX={box}"]
        opts += [f"-DKEEP={keep}"]
        opts += ["-cl-nv-verbose"] if nvidia else []
        try:
            prog = cl.Program(context, SOURCE).build(options=opts)
        except cl.RuntimeError as exc:  # the driver's PTX assembler may refuse bulk copies
            print(f"bulk_probe: {name} did not build: {str(exc)[:600]}", file=sys.stderr)
            continue
        kernels[name] = prog.staged
        log = prog.get_build_info(context.devices[0], cl.program_build_info.LOG)
        used = re.findall(r"Used \d+ registers[^\n]*", log)
        if used:
            print(f"bulk_probe: {name} {ty}x{tz}/{wy}x{wz}: {used[-1]}", flush=True)
    return kernels


def float4_copy(context: Any, n: int) -> Any:
    """The float4 copy (the yardstick), from the same source."""
    import pyopencl as cl

    sizes = dict(NX=n, NY=n, NZ=n, TY=1, TZ=1, WY=1, WZ=1, BULK=0, H=0, HV=0, BOX=0, KEEP=0)
    opts = [f"-D{k}={v}" for k, v in sizes.items()]
    return cl.Program(context, SOURCE).build(options=opts).copy4


def package_box27(context: Any, n: int, config: str) -> tuple[Any, Any]:
    """The package's box27 at ``config`` on n³: its kernel and its global and local sizes."""
    import partition_probe
    import pyopencl as cl

    from gtune.commands._common import parse_config

    kernel = partition_probe.load("box27", n)
    full = kernel.with_defaults(parse_config(config))
    glob, loc = kernel.launch_sizes(full)
    prog = cl.Program(context, kernel.source).build(options=list(kernel.defines(full)))
    return prog.stencil, (glob, loc)


def reference(a: np.ndarray, n: int, fill: float) -> np.ndarray:
    """box27 of the n³ array ``a`` in float64, ``fill`` on the interior boundary."""
    c = a.reshape(n, n, n).astype(np.float64)
    out = np.full_like(c, fill)
    w = (1.0, 2.0, 1.0)
    acc = np.zeros((n - 2,) * 3)
    for dz in range(3):
        for dy in range(3):
            for dx in range(3):
                acc += w[dz] * w[dy] * w[dx] * c[dz : dz + n - 2, dy : dy + n - 2, dx : dx + n - 2]
    out[1:-1, 1:-1, 1:-1] = acc / 64.0
    return out.ravel()


def checked(queue: Any, launches: dict[str, Any], dst: Any, host: np.ndarray) -> dict[str, bool]:
    """Each launch's output from a destination filled with -1: the copies equal to the
    input bit for bit, box27's within float rounding of the reference, its kept
    boundary -1 bit for bit."""
    import pyopencl as cl

    n = round(host.size ** (1 / 3))
    want_box = reference(host, n, -1.0)
    kept = want_box == -1.0
    checks = {}
    for name, go in launches.items():
        cl.enqueue_fill_buffer(queue, dst, np.float32(-1), 0, host.nbytes).wait()
        go().wait()
        out = np.empty_like(host)
        cl.enqueue_copy(queue, out, dst).wait()
        if name.startswith("keep"):
            ok = bool(np.array_equal(out, np.where(kept, np.float32(-1), host)))
        elif name.startswith(("box", "package")):
            ok = bool(np.array_equal(out[kept], want_box[kept].astype(np.float32)))
            ok = ok and bool(np.allclose(out[~kept], want_box[~kept], rtol=1e-5, atol=1e-6))
        else:
            ok = bool(np.array_equal(out, host))
        checks[name] = ok
        if not ok:
            raise SystemExit(f"bulk_probe: wrong output from {name}")
    return checks


def run(args: Any) -> dict[str, Any]:
    import pyopencl as cl
    import xhalo_probe

    device, context, queue = xhalo_probe.open_device(args.device)
    nvidia = "NVIDIA" in device.platform.name.upper()
    n = args.size
    host = np.random.default_rng(7).random(n**3, dtype=np.float32)
    mf = cl.mem_flags
    src = cl.Buffer(context, mf.READ_ONLY | mf.COPY_HOST_PTR, hostbuf=host)
    dst = cl.Buffer(context, mf.READ_WRITE, size=host.nbytes)
    package, (glob, loc) = package_box27(context, n, args.config)
    launches: dict[str, Any] = {"package": lambda: package(queue, glob, loc, src, dst)}
    for shape_text in args.shape:
        ty, tz, wy, wz = parse_shape(shape_text, n)
        kernels = build(context, n, (ty, tz, wy, wz), nvidia)
        grid = (n // 4, n // ty * wy, n // tz * wz)
        for name, k in kernels.items():
            key = f"{name} {ty}x{tz}/{wy}x{wz}"
            launches[key] = lambda k=k, grid=grid, wy=wy, wz=wz: k(
                queue, grid, (32, wy, wz), src, dst
            )
    copy = float4_copy(context, n)
    launches["copy4"] = lambda: copy(queue, (n**3 // 4,), (128,), src, dst)
    checks = checked(queue, launches, dst, host)
    rounds = xhalo_probe.alternating_rounds(launches, args.rounds, args.reps)
    t_copy = statistics.median(rounds["copy4"])
    rows = [
        {
            "kernel": name,
            "median_s": statistics.median(r),
            "gbs": 2 * host.nbytes / statistics.median(r) / 1e9,
            "of_copy": t_copy / statistics.median(r),
            "rounds_s": r,
        }
        for name, r in rounds.items()
    ]
    return {
        "device": device.name,
        "size": n,
        "package_config": args.config,
        "bulk": nvidia,
        "checks": checks,
        "rows": rows,
    }


def parse_shape(text: str, n: int) -> tuple[int, int, int, int]:
    """``TYxTZ/WYxWZ``: rows × planes a work-group writes, and its work-items along y, z."""
    try:
        tile, group = text.split("/")
        ty, tz = (int(v) for v in tile.split("x"))
        wy, wz = (int(v) for v in group.split("x"))
    except ValueError:
        raise SystemExit(f"bulk_probe: --shape {text!r} is not TYxTZ/WYxWZ") from None
    if n % 128 or n < 256 or n % ty or n % tz or min(ty, tz, wy, wz) < 1:
        raise SystemExit(
            f"bulk_probe: --size {n} must be a multiple of 128 (at least 256) and of {text}"
        )
    return ty, tz, wy, wz


def markdown(data: dict[str, Any]) -> str:
    lines = [
        f"# Tiles staged by bulk copies on {data['device']}",
        "",
        f"{data['size']}³ floats; kernels named `variant TYxTZ/WYxWZ` (rows × planes a "
        "work-group writes / its work-items along y × z, 32 along x); bulk copies: "
        f"{'yes' if data['bulk'] else 'no (ordinary loads)'}; `package`: the package's "
        f"box27 at `{data['package_config']}`. Every output checked before timing.",
        "",
        "| kernel | time | GB/s | of copy |",
        "| --- | ---: | ---: | ---: |",
    ]
    for r in data["rows"]:
        t, share = r["median_s"] * 1e6, 100 * r["of_copy"]
        lines.append(f"| {r['kernel']} | {t:.1f} µs | {r['gbs']:.0f} | {share:.1f} % |")
    return "\n".join(lines) + "\n"


def main(argv: Sequence[str] | None = None) -> int:
    import xhalo_probe

    p = xhalo_probe.probe_parser(__doc__, rounds=7, reps=10)
    p.add_argument(
        "--shape",
        action="append",
        default=[],
        metavar="TYxTZ/WYxWZ",
        help="a tile shape to stage (repeat; default 8x8/2x2)",
    )
    p.add_argument("--config", default=BOX27, help="the package's box27 configuration")
    args = p.parse_args(argv)
    args.shape = args.shape or ["8x8/2x2"]
    data = run(args)
    xhalo_probe.save(args.out, "bulk", data, markdown(data))
    return 0


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env python3
"""Where an x halo's cost comes from: hand-written float kernels side by side.

The H200's copies written as stencils (``results/h200-limit/halo-axes/``) pay nothing
for a radius-1 halo along y or z and 5.4 points of the copy for one along x, and the
vector technique's x halo more (its copy with an x halo lost to scalar loads). The
template reads a vector's x neighbours as the aligned vectors either side and composes
them (three vector loads per row). Each kernel here reads rows of ``NX`` floats and
writes ``w0*in[x-1] + w1*in[x] + w2*in[x+1]`` (the row's ends clamped), as far as the
kernel goes, against the float4 copy of the same arrays:

- ``copy4``: the float4 copy (the yardstick);
- ``vec3``: a float4 per work-item, the vectors either side loaded and composed, the
  template's way (3 vector loads per output vector);
- ``vec3x2``: two adjacent float4 per work-item, their neighbours shared (4 loads per
  2 output vectors);
- ``scalar3``: a float per work-item, three scalar loads (the stream technique's
  ``VX 1``);
- ``shfl``: a float4 per work-item, the neighbours' lanes from the adjacent work-items
  of the warp through NVIDIA's ``shfl.sync`` (inline PTX), a scalar load only at a
  warp's two ends (one vector load per output vector); NVIDIA only, skipped where it
  does not build;
- ``local4``: a float4 per work-item, the work-group's row segment staged in local
  memory with one element either side;
- ``vec3i``, ``copy4i``: ``vec3`` and ``copy4`` with the interior boundary's writes:
  each row's first and last element not written (the rim vectors' other lanes stored
  one by one, as the template stores them), so each row's first and last 32-byte
  sectors are written in part;
- ``vec3m``: ``vec3i`` with the rim vectors merged with the destination's old value
  (read back) and stored whole;
- ``copy4p0``, ``copy4p2k``, ``copy4p8k``: ``copy4i`` whose rim vectors' destination
  sectors are first prefetched into L2 (NVIDIA's ``prefetch.global.L2``, inline PTX):
  by the work-item that writes them, before its load (``p0``), or by the work-item
  2,048 or 8,192 rows before (``p2k``, ``p8k``), so that the partial write finds its
  sector in L2 rather than waiting for the memory; ``vec3ip0`` is ``vec3i`` with the
  first; NVIDIA only;
- ``copy4q0``: ``copy4p0`` with OpenCL's own ``prefetch`` (what a device makes of it);
- ``copy4m``: ``copy4i`` with the rim vectors merged with the destination's old value
  (read back, as ``vec3m``) and stored whole; ``copy4pm``, ``vec3pm``: ``copy4m`` and
  ``vec3m`` with the destination's rim vector prefetched into L2 by the work-item
  before its loads, so that the read back finds it there (NVIDIA only);
- ``copy4e``: ``copy4i`` whose rim vectors are loaded and their lanes stored with an
  L2 eviction policy of ``evict_last`` (NVIDIA's ``createpolicy`` and
  ``L2::cache_hint``, inline PTX), so that the kept sectors may stay in L2 from one
  launch to the next and a partial write find its sector there; ``copy4es`` the same
  with the stores' hint only; NVIDIA only;
- ``copy4h``: ``copy4i`` with the work-items' vectors shifted by half a row, so that a
  work-group writes the end of one row and the start of the next (the two kept sectors,
  adjacent in memory, written by one work-group at once);
- ``heat7``, ``lap13``, ``box27``: 3D stencils (7-point star, radius-2 star, 27-point
  box), a float4 per work-item in the plainest style (each neighbour row loaded by
  index, no blocks): what the template's blocks are measured against.

Every kernel's output is checked against numpy's before it is timed; the kernels run in
alternating rounds (drift hits all alike), each round's time the median of ``--reps``
launches' event times, the reported time the median over rounds. With ``--swap`` the
copies are timed a second time (``name~``) on two other arrays whose roles alternate
from launch to launch, as a time-stepping application's do.

    python3 benchmarks/xhalo_probe.py OUT --device NVIDIA --size 512 --rounds 7
"""

from __future__ import annotations

import argparse
import functools
import json
import statistics
import sys
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

W = (0.25, 0.5, 0.125)  # w0, w1, w2: distinct, so a misplaced neighbour shows

PRELUDE = r"""
#pragma OPENCL FP_CONTRACT OFF
#define W0 0.25f
#define W1 0.5f
#define W2 0.125f
"""

SOURCE = r"""
/* NXV vectors per row; v: the vector index in the array, xv its index in the row */
__kernel void copy4(__global const float4 *restrict s, __global float4 *restrict d) {
    const int v = get_global_id(0);
    d[v] = s[v];
}
__kernel void vec3(__global const float4 *restrict s, __global float4 *restrict d) {
    const int v = get_global_id(0), xv = v % NXV;
    const float4 c = s[v];
    const float4 l = s[xv > 0 ? v - 1 : v], r = s[xv < NXV - 1 ? v + 1 : v];
    const float lw = xv > 0 ? l.w : c.x, rx = xv < NXV - 1 ? r.x : c.w;
    d[v] = W0 * (float4)(lw, c.xyz) + W1 * c + W2 * (float4)(c.yzw, rx);
}
/* the interior boundary: the row's first and last element not written (vec3i: the
   rim vectors' other lanes stored one by one, as the template stores them; vec3m: the
   rim vectors merged with the destination's old value and stored whole) */
#define VEC3_BODY                                                                    \
    const int v = get_global_id(0), xv = v % NXV;                                    \
    const float4 c = s[v];                                                           \
    const float4 l = s[xv > 0 ? v - 1 : v], r = s[xv < NXV - 1 ? v + 1 : v];         \
    const float4 o = W0 * (float4)(l.w, c.xyz) + W1 * c + W2 * (float4)(c.yzw, r.x);
/* vector v of row position xv stored, the row's first and last element left */
#define STORE_KEEPING_RIM(o)                                                         \
    __global float *e = (__global float *)(d + v);                                   \
    if (xv == 0) {                                                                   \
        e[1] = (o).y; e[2] = (o).z; e[3] = (o).w;                                    \
    } else if (xv == NXV - 1) {                                                      \
        e[0] = (o).x; e[1] = (o).y; e[2] = (o).z;                                    \
    } else {                                                                         \
        d[v] = (o);                                                                  \
    }
__kernel void vec3i(__global const float4 *restrict s, __global float4 *restrict d) {
    VEC3_BODY
    STORE_KEEPING_RIM(o)
}
__kernel void vec3m(__global const float4 *restrict s, __global float4 *restrict d) {
    VEC3_BODY
    float4 w = o;
    if (xv == 0 || xv == NXV - 1) {
        const float4 old = d[v];
        if (xv == 0) w.x = old.x;
        if (xv == NXV - 1) w.w = old.w;
    }
    d[v] = w;
}
__kernel void copy4i(__global const float4 *restrict s, __global float4 *restrict d) {
    const int v = get_global_id(0), xv = v % NXV;
    const float4 c = s[v];
    STORE_KEEPING_RIM(c)
}
/* copy4i with the work-items' vectors shifted by half a row: a work-group writes the
   end of one row and the start of the next, whose kept sectors are adjacent */
__kernel void copy4h(__global const float4 *restrict s, __global float4 *restrict d) {
    const int v = (int)((get_global_id(0) + NXV / 2) % ((size_t)NXV * NY * NZ)), xv = v % NXV;
    const float4 c = s[v];
    STORE_KEEPING_RIM(c)
}
__kernel void vec3x2(__global const float4 *restrict s, __global float4 *restrict d) {
    const int v = 2 * get_global_id(0), xv = v % NXV;
    const float4 a = s[v], b = s[v + 1];
    const float4 l = s[xv > 0 ? v - 1 : v], r = s[xv + 2 < NXV ? v + 2 : v + 1];
    const float lw = xv > 0 ? l.w : a.x, rx = xv + 2 < NXV ? r.x : b.w;
    d[v] = W0 * (float4)(lw, a.xyz) + W1 * a + W2 * (float4)(a.yzw, b.x);
    d[v + 1] = W0 * (float4)(a.w, b.xyz) + W1 * b + W2 * (float4)(b.yzw, rx);
}
__kernel void scalar3(__global const float *restrict s, __global float *restrict d) {
    const int i = get_global_id(0), x = i % (4 * NXV);
    const float l = s[x > 0 ? i - 1 : i], r = s[x < 4 * NXV - 1 ? i + 1 : i];
    d[i] = W0 * l + W1 * s[i] + W2 * r;
}
__kernel void local4(__global const float4 *restrict s, __global float4 *restrict d) {
    __local float seg[4 * LW + 2];
    const int v = get_global_id(0), xv = v % NXV, lid = get_local_id(0);
    const float4 c = s[v];
    vstore4(c, 0, seg + 1 + 4 * lid);
    __global const float *e = (__global const float *)s;
    if (lid == 0) seg[0] = xv > 0 ? e[4 * v - 1] : c.x;
    if (lid == LW - 1) seg[4 * LW + 1] = xv < NXV - 1 ? e[4 * v + 4] : c.w;
    barrier(CLK_LOCAL_MEM_FENCE);
    const float lw = xv > 0 ? seg[4 * lid] : c.x, rx = xv < NXV - 1 ? seg[4 * lid + 5] : c.w;
    d[v] = W0 * (float4)(lw, c.xyz) + W1 * c + W2 * (float4)(c.yzw, rx);
}
"""

# 3D stencils a float4 per work-item, in the plainest style: the row vectors either
# side loaded and composed, each neighbour row's vectors loaded by index (the rows and
# planes clamped at the edges, the row's ends by a clamped window)
STENCILS3D = r"""
#define ROW(z, y) ((min(max((z), 0), NZ - 1) * NY + min(max((y), 0), NY - 1)) * NXV)
/* the 12 elements x-4 .. x+7 around vector xv of row r, the row's ends clamped */
#define WINDOW(r)                                                                    \
    const float4 c_##r = s[(r) + xv];                                                \
    const float4 l_##r = xv > 0 ? s[(r) + xv - 1] : (float4)(c_##r.x);               \
    const float4 r_##r = xv < NXV - 1 ? s[(r) + xv + 1] : (float4)(c_##r.w);
#define SH(r, k) /* the vector at x + k, -4 < k < 4 */                               \
    ((k) == 0 ? c_##r : (k) == -1 ? (float4)(l_##r.w, c_##r.xyz)                    \
     : (k) == 1 ? (float4)(c_##r.yzw, r_##r.x) : (k) == -2 ? (float4)(l_##r.zw, c_##r.xy) \
     : (float4)(c_##r.zw, r_##r.xy))
__kernel void heat7(__global const float4 *restrict s, __global float4 *restrict d) {
    const int v = get_global_id(0), xv = v % NXV, q = v / NXV, y = q % NY, z = q / NY;
    const int r0 = ROW(z, y);
    WINDOW(r0)
    const float4 n = s[ROW(z, y - 1) + xv], so = s[ROW(z, y + 1) + xv];
    const float4 b = s[ROW(z - 1, y) + xv], t = s[ROW(z + 1, y) + xv];
    d[v] = 0.4f * c_r0 + 0.1f * (SH(r0, -1) + SH(r0, 1) + n + so + b + t);
}
__kernel void lap13(__global const float4 *restrict s, __global float4 *restrict d) {
    const int v = get_global_id(0), xv = v % NXV, q = v / NXV, y = q % NY, z = q / NY;
    const int r0 = ROW(z, y);
    WINDOW(r0)
    const float4 n1 = s[ROW(z, y - 1) + xv] + s[ROW(z, y + 1) + xv];
    const float4 n2 = s[ROW(z, y - 2) + xv] + s[ROW(z, y + 2) + xv];
    const float4 z1 = s[ROW(z - 1, y) + xv] + s[ROW(z + 1, y) + xv];
    const float4 z2 = s[ROW(z - 2, y) + xv] + s[ROW(z + 2, y) + xv];
    d[v] = 0.25f * c_r0 + 0.125f * (SH(r0, -1) + SH(r0, 1) + n1 + z1)
         - 0.0625f * (SH(r0, -2) + SH(r0, 2) + n2 + z2);
}
__kernel void box27(__global const float4 *restrict s, __global float4 *restrict d) {
    const int v = get_global_id(0), xv = v % NXV, q = v / NXV, y = q % NY, z = q / NY;
    float4 acc = (float4)(0.0f);
    for (int dz = -1; dz <= 1; ++dz)
        for (int dy = -1; dy <= 1; ++dy) {
            const int rr = ROW(z + dz, y + dy);
            WINDOW(rr)
            acc += SH(rr, -1) + c_rr + SH(rr, 1);
        }
    d[v] = acc * (1.0f / 27.0f);
}
"""

SHFL = r"""
static inline float shfl_up1(float x) {
    uint r;
    asm volatile("shfl.sync.up.b32 %0, %1, 1, 0, -1;" : "=r"(r) : "r"(as_uint(x)));
    return as_float(r);
}
static inline float shfl_down1(float x) {
    uint r;
    asm volatile("shfl.sync.down.b32 %0, %1, 1, 31, -1;" : "=r"(r) : "r"(as_uint(x)));
    return as_float(r);
}
__kernel void shfl(__global const float4 *restrict s, __global float4 *restrict d) {
    const int v = get_global_id(0), xv = v % NXV, lane = get_local_id(0) & 31;
    const float4 c = s[v];
    float lw = shfl_up1(c.w), rx = shfl_down1(c.x);
    if (lane == 0) lw = xv > 0 ? ((__global const float *)s)[4 * v - 1] : c.x;
    if (lane == 31) rx = xv < NXV - 1 ? ((__global const float *)s)[4 * v + 4] : c.w;
    if (xv == 0) lw = c.x;
    if (xv == NXV - 1) rx = c.w;
    d[v] = W0 * (float4)(lw, c.xyz) + W1 * c + W2 * (float4)(c.yzw, rx);
}
"""

# the interior copy whose rim sectors are prefetched into L2 AHEAD rows before they are
# written (NVIDIA's inline PTX), and the same with OpenCL's prefetch
PREFETCHED = r"""
#define PREFETCHED(name, AHEAD, PF)                                                  \
__kernel void name(__global const float4 *restrict s, __global float4 *restrict d) { \
    const int v = get_global_id(0), xv = v % NXV;                                    \
    const int ahead = v + (AHEAD) * NXV;                                             \
    if ((xv == 0 || xv == NXV - 1) && ahead < NXV * NY * NZ) PF(d + ahead);          \
    const float4 c = s[v];                                                           \
    STORE_KEEPING_RIM(c)                                                             \
}
#define OCL_PREFETCH(p) prefetch((p), 1)
PREFETCHED(copy4q0, 0, OCL_PREFETCH)
/* the rim vector merged with the destination's old value and stored whole, the
   destination's vector prefetched first by PF (NO_PREFETCH: none) */
#define MERGE_RIM(o)                                                                 \
    float4 w = (o);                                                                  \
    if (xv == 0 || xv == NXV - 1) {                                                  \
        const float4 old = d[v];                                                     \
        if (xv == 0) w.x = old.x;                                                    \
        if (xv == NXV - 1) w.w = old.w;                                              \
    }                                                                                \
    d[v] = w;
#define NO_PREFETCH(p)
#define MERGED_COPY(name, PF)                                                        \
__kernel void name(__global const float4 *restrict s, __global float4 *restrict d) { \
    const int v = get_global_id(0), xv = v % NXV;                                    \
    if (xv == 0 || xv == NXV - 1) PF(d + v);                                         \
    const float4 c = s[v];                                                           \
    MERGE_RIM(c)                                                                     \
}
MERGED_COPY(copy4m, NO_PREFETCH)
"""
NV_PREFETCH = r"""
static inline void l2_prefetch(__global const float4 *p) {
    asm volatile("prefetch.global.L2 [%0];" : : "l"(p));
}
PREFETCHED(copy4p0, 0, l2_prefetch)
PREFETCHED(copy4p2k, 2048, l2_prefetch)
PREFETCHED(copy4p8k, 8192, l2_prefetch)
MERGED_COPY(copy4pm, l2_prefetch)
__kernel void vec3pm(__global const float4 *restrict s, __global float4 *restrict d) {
    if (get_global_id(0) % NXV == 0 || get_global_id(0) % NXV == NXV - 1)
        l2_prefetch(d + get_global_id(0));
    VEC3_BODY
    MERGE_RIM(o)
}
__kernel void vec3ip0(__global const float4 *restrict s, __global float4 *restrict d) {
    if (get_global_id(0) % NXV == 0 || get_global_id(0) % NXV == NXV - 1)
        l2_prefetch(d + get_global_id(0));
    VEC3_BODY
    STORE_KEEPING_RIM(o)
}
"""
# the rim's loads and partial stores with an L2 eviction policy of evict_last
NV_EVICT = r"""
static inline ulong policy_last(void) {
    ulong p;
    asm volatile("createpolicy.fractional.L2::evict_last.b64 %0, 1.0;" : "=l"(p));
    return p;
}
static inline void store_last(__global float *a, float v, ulong p) {
    asm volatile("st.global.L2::cache_hint.f32 [%0], %1, %2;" : : "l"(a), "f"(v), "l"(p)
                 : "memory");
}
static inline float4 load_last(__global const float4 *a, ulong p) {
    float x, y, z, w;
    asm volatile("ld.global.L2::cache_hint.v4.f32 {%0, %1, %2, %3}, [%4], %5;"
                 : "=f"(x), "=f"(y), "=f"(z), "=f"(w) : "l"(a), "l"(p));
    return (float4)(x, y, z, w);
}
#define EVICT_LAST_COPY(name, LOAD)                                                  \
__kernel void name(__global const float4 *restrict s, __global float4 *restrict d) { \
    const int v = get_global_id(0), xv = v % NXV;                                    \
    if (xv == 0 || xv == NXV - 1) {                                                  \
        const ulong p = policy_last();                                               \
        const float4 c = LOAD;                                                       \
        __global float *e = (__global float *)(d + v);                               \
        if (xv == 0) {                                                               \
            store_last(e + 1, c.y, p); store_last(e + 2, c.z, p); store_last(e + 3, c.w, p); \
        } else {                                                                     \
            store_last(e, c.x, p); store_last(e + 1, c.y, p); store_last(e + 2, c.z, p); \
        }                                                                            \
    } else {                                                                         \
        d[v] = s[v];                                                                 \
    }                                                                                \
}
EVICT_LAST_COPY(copy4e, load_last(s + v, p))
EVICT_LAST_COPY(copy4es, s[v])
"""
EVICT_KERNELS = ("copy4e", "copy4es")
PREFETCH_KERNELS = ("copy4p0", "copy4p2k", "copy4p8k", "vec3ip0", "copy4pm", "vec3pm")

# kernel: (elements per work-item, needs NVIDIA's inline PTX)
KERNELS = {
    "copy4": (4, False),
    "vec3": (4, False),
    "vec3i": (4, False),
    "vec3m": (4, False),
    "copy4i": (4, False),
    "vec3x2": (8, False),
    "scalar3": (1, False),
    "shfl": (4, True),
    "local4": (4, False),
    "copy4p0": (4, True),
    "copy4p2k": (4, True),
    "copy4p8k": (4, True),
    "vec3ip0": (4, True),
    "copy4q0": (4, False),
    "copy4m": (4, False),
    "copy4pm": (4, True),
    "vec3pm": (4, True),
    "copy4h": (4, False),
    "copy4e": (4, True),
    "copy4es": (4, True),
    "heat7": (4, False),
    "lap13": (4, False),
    "box27": (4, False),
}


# the row's ends not written; the copies among them
COPIES = (
    "copy4i",
    "copy4p0",
    "copy4p2k",
    "copy4p8k",
    "copy4q0",
    "copy4m",
    "copy4pm",
    "copy4e",
    "copy4es",
    "copy4h",
)
INTERIOR = ("vec3i", "vec3m", "vec3ip0", "vec3pm", *COPIES)


def reference(a: np.ndarray, nx: int) -> np.ndarray:
    """The x stencil on rows of nx floats, the row's ends clamped."""
    rows = a.reshape(-1, nx)
    left = np.concatenate([rows[:, :1], rows[:, :-1]], axis=1)
    right = np.concatenate([rows[:, 1:], rows[:, -1:]], axis=1)
    out = np.float32(W[0]) * left + np.float32(W[1]) * rows + np.float32(W[2]) * right
    return out.astype(np.float32).reshape(-1)


def reference3d(name: str, a: np.ndarray, n: int) -> np.ndarray:
    """heat7, lap13 or box27 on the n³ array, every edge clamped (float64, for a
    comparison within rounding: the kernels sum in their own order)."""
    g = np.pad(a.reshape(n, n, n).astype(np.float64), 2, mode="edge")

    def at(dz: int, dy: int, dx: int) -> np.ndarray:
        return g[2 + dz : 2 + dz + n, 2 + dy : 2 + dy + n, 2 + dx : 2 + dx + n]

    axes = [(1, 0, 0), (0, 1, 0), (0, 0, 1)]
    if name == "heat7":
        out = 0.4 * at(0, 0, 0)
        for k in (1, -1):
            out = out + sum(0.1 * at(*(k * c for c in ax)) for ax in axes)
    elif name == "lap13":
        out = 0.25 * at(0, 0, 0)
        for k, w in ((1, 0.125), (-1, 0.125), (2, -0.0625), (-2, -0.0625)):
            out = out + sum(w * at(*(k * c for c in ax)) for ax in axes)
    else:
        out = sum(at(dz, dy, dx) for dz in (-1, 0, 1) for dy in (-1, 0, 1) for dx in (-1, 0, 1))
        out = out / 27.0
    return np.asarray(out, dtype=np.float64).reshape(-1)


def pick_device(name: str) -> Any:
    import pyopencl as cl

    for platform in cl.get_platforms():
        for device in platform.get_devices():
            if name.lower() in f"{platform.name} {device.name}".lower():
                return device
    raise SystemExit(f"xhalo_probe: no OpenCL device matches {name!r}")


def open_device(name: str) -> tuple[Any, Any, Any]:
    """The device whose platform and name hold ``name``, a context on it and a queue
    that profiles (every probe's timing reads its events)."""
    import pyopencl as cl

    device = pick_device(name)
    context = cl.Context([device])
    queue = cl.CommandQueue(context, properties=cl.command_queue_properties.PROFILING_ENABLE)
    return device, context, queue


def probe_parser(
    doc: str | None,
    *,
    out_help: str | None = None,
    size_help: str | None = None,
    rounds: int = 7,
    reps: int = 10,
) -> argparse.ArgumentParser:
    """The options every probe takes: OUT, ``--device``, ``--size``, ``--rounds`` (the
    alternating rounds) and ``--reps`` (launches per round); a probe adds its own."""
    p = argparse.ArgumentParser(description=(doc or "").strip().splitlines()[0])
    p.add_argument("out", type=Path, help=out_help)
    p.add_argument("--device", default="NVIDIA", help="platform or device name part")
    p.add_argument("--size", type=int, default=512, help=size_help or "cube side")
    p.add_argument("--rounds", type=int, default=rounds, help="alternating rounds")
    p.add_argument("--reps", type=int, default=reps, help="launches per round")
    return p


def save(out: Path, stem: str, data: Mapping[str, Any], text: str) -> None:
    """A probe's results: ``OUT/STEM.json`` (every number) and ``OUT/STEM.md`` (its
    table, ``text``), the folder made first; the table printed too."""
    out.mkdir(parents=True, exist_ok=True)
    (out / f"{stem}.json").write_text(json.dumps(data, indent=1) + "\n")
    (out / f"{stem}.md").write_text(text)
    print(text, flush=True)


def alternating_rounds(
    launches: Mapping[str, Callable[[], Any]],
    rounds: int,
    reps: int,
    before: Callable[[], None] | None = None,
    warmup: int = 0,
) -> dict[str, list[float]]:
    """Each launch's event times in seconds: in every round, ``reps`` launches of each in
    turn (``before`` each one's turn, then ``warmup`` launches untimed), their median;
    ``rounds`` rounds, so that drift hits every launch alike. The probes' (and their
    copy's) timing."""
    out: dict[str, list[float]] = {k: [] for k in launches}
    for _ in range(rounds):
        for label, go in launches.items():
            if before is not None:
                before()
            for _ in range(warmup):
                go().wait()
            times = []
            for _ in range(reps):
                ev = go()
                ev.wait()
                times.append((ev.profile.end - ev.profile.start) * 1e-9)
            out[label].append(statistics.median(times))
    return out


def build(context: Any, nx: int, lw: int, nvidia: bool, wanted: Sequence[str]) -> dict[str, Any]:
    """The wanted kernels that build: name -> kernel (those with inline PTX only with
    NVIDIA's compiler)."""
    import pyopencl as cl

    opts = [f"-DNXV={nx // 4}", f"-DLW={lw}", f"-DNY={nx}", f"-DNZ={nx}"]
    built = {}
    program = cl.Program(context, PRELUDE + SOURCE + PREFETCHED + STENCILS3D).build(options=opts)
    for name in wanted:
        if not KERNELS[name][1]:
            built[name] = getattr(program, name)
    ptx = {
        "shfl": PRELUDE + SHFL,
        **{k: PRELUDE + SOURCE + PREFETCHED + NV_PREFETCH for k in PREFETCH_KERNELS},
        **{k: PRELUDE + NV_EVICT for k in EVICT_KERNELS},
    }
    for name in [k for k in wanted if KERNELS[k][1] and nvidia]:
        try:
            built[name] = getattr(cl.Program(context, ptx[name]).build(options=opts), name)
        except cl.RuntimeError as exc:  # inline PTX refused: say so, time the rest
            print(f"xhalo_probe: {name} did not build: {str(exc)[:300]}", file=sys.stderr)
    return built


def launch(queue: Any, kernel: Any, name: str, n: int, lw: int, src: Any, dst: Any) -> Any:
    per = KERNELS[name][0]
    return kernel(queue, (n // per,), (lw,), src, dst)


def swapping(
    queue: Any, kernel: Any, name: str, n: int, lw: int, pair: Sequence[Any]
) -> Callable[[], Any]:
    """A launch of the kernel from one array of the pair into the other, the roles
    swapped at every call."""
    turn = [0]

    def go() -> Any:
        a, b = pair[turn[0]], pair[1 - turn[0]]
        turn[0] = 1 - turn[0]
        return launch(queue, kernel, name, n, lw, a, b)

    return go


def run(args: argparse.Namespace) -> dict[str, Any]:
    import pyopencl as cl

    device, context, queue = open_device(args.device)
    nvidia = "NVIDIA" in device.platform.name.upper()
    nx, n = args.size, args.size**3
    host = np.random.default_rng(7).random(n, dtype=np.float32)
    mf = cl.mem_flags
    src = cl.Buffer(context, mf.READ_ONLY | mf.COPY_HOST_PTR, hostbuf=host)
    dst = cl.Buffer(context, mf.READ_WRITE, size=host.nbytes)
    wanted = args.kernels or list(KERNELS)
    kernels = build(context, nx, args.lw, nvidia, ["copy4", *[k for k in wanted if k != "copy4"]])
    want = reference(host, nx)
    out = np.empty_like(host)
    checked = {}
    sentinel = np.full_like(host, -1.0)
    for name, kernel in kernels.items():
        cl.enqueue_copy(queue, dst, sentinel).wait()
        launch(queue, kernel, name, n, args.lw, src, dst).wait()
        cl.enqueue_copy(queue, out, dst).wait()
        if name in INTERIOR:  # the rim keeps the destination's value
            expect = (host if name in COPIES else want).reshape(-1, nx).copy()
            expect[:, 0] = expect[:, -1] = -1.0
            expect = expect.reshape(-1)
            checked[name] = bool(np.array_equal(out, expect))
        elif name in ("heat7", "lap13", "box27"):
            expect = reference3d(name, host, nx)
            checked[name] = bool(np.allclose(out, expect, rtol=1e-5, atol=1e-6))
        else:
            expect = host if name == "copy4" else want
            checked[name] = bool(np.array_equal(out, expect))
        if not checked[name]:
            bad = int(np.flatnonzero(out != expect)[0])
            print(f"xhalo_probe: {name} differs first at {bad}", file=sys.stderr)
    timed = [k for k in kernels if checked[k]]
    go: dict[str, Callable[[], Any]] = {
        k: functools.partial(launch, queue, kernels[k], k, n, args.lw, src, dst) for k in timed
    }
    if args.swap:  # the copies again, on two arrays whose roles alternate
        pair = [cl.Buffer(context, mf.READ_WRITE | mf.COPY_HOST_PTR, hostbuf=host) for _ in "ab"]
        for k in [k for k in timed if k == "copy4" or k in COPIES]:
            go[f"{k}~"] = swapping(queue, kernels[k], k, n, args.lw, pair)
    rounds = alternating_rounds(go, args.rounds, args.reps)
    rows = []
    for name in go:
        t = statistics.median(rounds[name])
        copy = statistics.median(rounds["copy4~" if name.endswith("~") else "copy4"])
        rows.append(
            {
                "kernel": name,
                "median_s": t,
                "gbs": 2 * host.nbytes / t / 1e9,
                "of_copy": copy / t,
                "rounds_s": rounds[name],
            }
        )
    return {
        "device": device.name,
        "size": nx,
        "work_group": args.lw,
        "rounds": args.rounds,
        "reps": args.reps,
        "verified": checked,
        "rows": rows,
    }


def markdown(data: dict[str, Any]) -> str:
    lines = [
        f"# An x halo on {data['device']}: {data['size']}³ floats, rows of {data['size']}",
        "",
        f"Work-groups of {data['work_group']}; medians of {data['rounds']} alternating "
        f"rounds of {data['reps']} launches each. Verified against numpy: "
        + ", ".join(f"{k} {'yes' if v else 'NO'}" for k, v in data["verified"].items())
        + ".",
        "",
        "| kernel | time | GB/s | of copy |",
        "| --- | ---: | ---: | ---: |",
    ]
    for r in data["rows"]:
        lines.append(
            f"| {r['kernel']} | {r['median_s'] * 1e3:.4f} ms | {r['gbs']:.0f} | "
            f"{100 * r['of_copy']:.1f} % |"
        )
    return "\n".join(lines) + "\n"


def main(argv: Sequence[str] | None = None) -> int:
    p = probe_parser(
        __doc__,
        out_help="folder for xhalo.md and xhalo.json",
        size_help="N of the N³ floats (N %% 64 == 0)",
    )
    p.add_argument("--lw", type=int, default=128, help="work-group size (a multiple of 32)")
    p.add_argument("--kernels", nargs="+", choices=list(KERNELS), help="these only (and copy4)")
    p.add_argument(
        "--swap",
        action="store_true",
        help="time the copies again with the arrays' roles alternating",
    )
    args = p.parse_args(argv)
    if args.size % 64 or args.lw % 32:
        p.error("--size must be a multiple of 64 and --lw a multiple of 32")
    data = run(args)
    save(args.out, "xhalo", data, markdown(data))
    return 0 if all(data["verified"].values()) else 1


if __name__ == "__main__":
    sys.exit(main())

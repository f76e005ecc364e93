#!/usr/bin/env python3
"""Whether the order work-groups take their blocks in moves the H200's L2 link.

The H200's counters (``results/h200-limit/ncu/``) put its one-step stencils 7–15 %
behind the float4 copy with the minimum DRAM traffic, and the busiest unit on every
kernel's path, the copy's included, the link between the L2's two partitions (93–96 %
of the time). An SM's read of memory that the other partition holds crosses it. The
stencils send 1.7–2.5 M more sectors across than the copy: a halo row that two
work-groups read crosses once more when the two run on SMs of different partitions.
Hardware places work-groups on SMs in no order a kernel can see, but a kernel can read
its SM (NVIDIA's ``%smid``, inline PTX) and take its blocks from a queue of that SM's
or that partition's, so that blocks sharing halo rows run on one side.

This probe measures that, on the package's own kernels (the template rendered for a
real stencil at a configuration, e.g. the defaults' winners). Each kernel's body is
kept as it is, made a function of its block (its three group ids); a new kernel around
it takes its block number from counters (an atomic per work-group) and runs it.
Which SMs are on which side is measured first: an atomic runs in the L2 slice that
holds its address, so each SM times a chain of atomics on the same lines, and SMs
whose fast lines agree are one side (``sides`` in the output). The variants
(``variants``):

- ``std``: the package's kernel, as ``gtune run`` times it;
- ``dyn``: one counter, blocks in the hardware's own order (x, y, z): the cost of the
  queue alone;
- ``ypart``: a counter per side, each side half of every slab's rows (y), slab after
  slab; ``yrand`` the same with the SMs split by a hash of their number (a control);
- suffixes: the counters zeroed by the host before each launch (``h``) or by the last
  work-group to finish (``e``) rather than the last to take its block; two blocks per
  work-group (``2h``); ``ypartg`` with the counters as program-scope variables, and
  ``std20`` the package's kernel, built with ``-cl-std=CL2.0``;
- ``pfPD`` (``pf0``, ``pf264``, ``pf528``): no queue, each work-group first prefetching
  into L2 (NVIDIA's ``prefetch.global.L2``, OpenCL's ``prefetch`` elsewhere) the input
  box of the block PD blocks ahead in the hardware's order (``pf0``: its own), then
  running its own block.

Every variant's output is compared with ``std``'s bit for bit before it is timed; the
variants and the float4 copy run in alternating rounds, each round the median of
``--reps`` launches' event times, the reported time the median over rounds.

    python3 benchmarks/partition_probe.py OUT --device NVIDIA \\
        --config 'box27:WX=32,WY=2,...' --config 'heat3d:...'

NVIDIA only for everything but ``std`` and ``dyn`` (``%smid``); on another device the
SM is 0 throughout, which checks the scheduling's bookkeeping (tests run it on PoCL).
"""

from __future__ import annotations

import argparse
import functools
import json
import re
import statistics
import sys
import tempfile
import zlib
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

HEAD = "__kernel __attribute__((reqd_work_group_size(WX, WY, WZ)))\nvoid KERNEL_NAME(KERNEL_ARGS)"

SLOTS = 512  # the side table's entries: one per SM (any %smid below 512)
LATENCY_LINES = 256
LINE = 1056  # ints between the timed lines: 4 KiB + 128 B
ZERO = np.zeros(1, dtype=np.int32)
CL20 = "-cl-std=CL2.0"  # the counters' fill pattern, alive while queued

SCHED = r"""
inline int smid_(void)
{
#if SMID_ASM
    uint s;
    asm volatile("mov.u32 %0, %%smid;" : "=r"(s));
    return (int)(s % SLOTS);
#else
    return 0;
#endif
}

#if SCHED >= 3
__constant uchar side_of_[SLOTS] = {@SIDES@};
#endif

/* The block number (x fastest, then y, then z) of side p's j-th block, -1 past its
   last. SCHED 1: one queue, every block in the hardware's order; 3: a queue per side,
   each side half the z range; 4: a queue per side, each side half of every slab's
   rows (y), slab after slab in z. */
inline int block_of_(int p, int j)
{
    const int n0 = NG0, n1 = NG1, n2 = NG2;
#if SCHED == 1
    return j < n0 * n1 * n2 ? j : -1;
#elif SCHED == 3
    const int halfn = n0 * n1 * n2 / 2;
    return j < halfn ? p * halfn + j : -1;
#else
    const int hy = n1 / 2, per = n0 * hy;
    if (j >= per * n2)
        return -1;
    const int z = j / per, k = j % per;
    return (z * n1 + p * hy + k / n0) * n0 + k % n0;
#endif
}

#if GLOBALQ /* the counters as program-scope variables (OpenCL C 2.0), not an argument */
__global volatile int gq_[3] = {0, 0, 0};
#define QB gq_
#define QC0 0
#define QC1 1
#define QDONE 2
#else
#define QB q
#define QC0 CNT0
#define QC1 CNT1
#define QDONE DONE
#endif

__kernel __attribute__((reqd_work_group_size(WX, WY, WZ)))
void sched_(KERNEL_ARGS, __global volatile int *q)
{
    /* PER blocks per work-group (the hardware's launch: 1), their numbers from a queue.
       The counters are zeroed for the next launch by (RESET) 0: the last work-group to
       take its blocks, 1: the host, before each launch, 2: the last to finish */
    __local int block_;
    const int n0 = NG0, n1 = NG1;
    const bool lead = get_local_id(0) == 0 && get_local_id(1) == 0 && get_local_id(2) == 0;
#if SCHED == 1
    const int p = 0;
#else
    const int p = side_of_[smid_()];
#endif
    /* each side's counter on a line its own L2 partition holds (CNT0, CNT1) */
    __global volatile int *mine = QB + (p ? QC1 : QC0);
#if RESET == 0
    int started = 0;
#endif
    if (lead) {
        int t = block_of_(p, atomic_add(mine, PER));
#if SCHED != 1
        if (t < 0) /* this side's blocks all taken: the other side's */
            t = block_of_(p ^ 1, atomic_add(QB + (p ? QC0 : QC1), PER));
#endif
        block_ = t;
#if RESET == 0
        /* counted once its block is taken; its value is waited for at the end */
        started = atomic_inc(QB + QDONE + (t >= (1 << 30)));
#endif
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    const int t0 = block_;
    if (t0 < 0)
        return; /* no block left: a counter not zeroed (the check then fails) */
#if PER == 1
    body_(CALL_ARGS, t0 % n0, (t0 / n0) % n1, t0 / (n0 * n1));
#else
    for (int i = 0; i < PER; ++i) { /* the side's next PER blocks, in its order */
        const int t = t0 + i; /* a side's blocks: consecutive numbers within a slab's half */
        body_(CALL_ARGS, t % n0, (t / n0) % n1, t / (n0 * n1));
    }
#endif
#if RESET == 2
    const int started = lead ? atomic_inc(QB + QDONE) : 0; /* its blocks done */
#endif
#if RESET != 1
    if (lead && started == NG0 * NG1 * NG2 / PER - 1) {
        /* the last work-group to take (0) or finish (2) its blocks: every other one
           has its own, so the next launch starts from zero */
        QB[QC0] = 0;
        QB[QC1] = 0;
        QB[QDONE] = 0;
    }
#endif
}
"""

PREF = r"""
#if PREF /* each work-group first prefetches into L2 the input box of the block PD
            blocks ahead in the hardware's order (its own with PD 0), then runs its own */
#if SMID_ASM
#define PREFETCH_L2(p) asm volatile("prefetch.global.L2 [%0];" ::"l"(p))
#else
#define PREFETCH_L2(p) prefetch((p), 1)
#endif
#define LINE_ELEMS (128 / (int)sizeof(ELEM))
__kernel __attribute__((reqd_work_group_size(WX, WY, WZ)))
void pref_(KERNEL_ARGS, __global volatile int *q)
{
    const int n0 = NG0, n1 = NG1, n2 = NG2;
    const int t = ((int)get_group_id(2) * n1 + (int)get_group_id(1)) * n0 +
                  (int)get_group_id(0) + PD;
    if (t < n0 * n1 * n2) {
        const int tx = t % n0, ty = (t / n0) % n1, tz = t / (n0 * n1);
        const int x0 = max(tx * (NX / n0) - RX, 0) / LINE_ELEMS * LINE_ELEMS;
        const int x1 = min((tx + 1) * (NX / n0) + RX, NX);
        const int y0 = max(ty * (NY / n1) - RY, 0), y1 = min((ty + 1) * (NY / n1) + RY, NY);
        const int z0 = max(tz * (NZ / n2) - RZ, 0), z1 = min((tz + 1) * (NZ / n2) + RZ, NZ);
        const int nl = (x1 - x0 + LINE_ELEMS - 1) / LINE_ELEMS, ny = y1 - y0;
        const int lid = ((int)get_local_id(2) * WY + (int)get_local_id(1)) * WX +
                        (int)get_local_id(0);
        for (int i = lid; i < nl * ny * (z1 - z0); i += WX * WY * WZ) {
            const int x = x0 + (i % nl) * LINE_ELEMS, y = y0 + (i / nl) % ny;
            PREFETCH_L2(SRC + SIDX(z0 + i / (nl * ny), y, x));
        }
    }
    body_(CALL_ARGS, (int)get_group_id(0), (int)get_group_id(1), (int)get_group_id(2));
}
#endif
"""

LATENCY = r"""
/* Each work-group's first work-item times a chain of atomics on LINES lines (one int
   each, lines 4 KiB + 128 B apart), each atomic's address depending on the one before. */
__kernel void latency_(__global int *lines, __global long *cycles, __global int *sms)
{
    if (get_local_id(0) != 0)
        return;
    const int g = (int)get_group_id(0);
    uint s;
    asm volatile("mov.u32 %0, %%smid;" : "=r"(s));
    sms[g] = (int)s;
    int dep = 0;
    for (int rep = 0; rep < 2; ++rep) {
        for (int i = 0; i < LINES; ++i) {
            long t0, t1;
            asm volatile("mov.u64 %0, %%clock64;" : "=l"(t0) : "r"(dep) : "memory");
            dep = atomic_add(&lines[i * LINE + (dep >> 30)], 1);
            asm volatile("mov.u64 %0, %%clock64;" : "=l"(t1) : "r"(dep) : "memory");
            if (rep == 1)
                cycles[g * LINES + i] = t1 - t0;
        }
    }
}
"""

PROGRAM_SCOPE = r"""
__global int pc_[4] = {0, 0, 0, 0};
__kernel void pc_probe_(__global int *o)
{
    o[get_global_id(0)] = atomic_inc(&pc_[0]);
}
"""


def program_scope(context: Any, queue: Any) -> dict[str, str]:
    """Whether the compiler takes a program-scope ``__global`` counter (OpenCL C 2.0's
    program-scope variables), per ``-cl-std``, and what two launches read from it."""
    import pyopencl as cl

    out: dict[str, str] = {}
    o = cl.Buffer(context, cl.mem_flags.READ_WRITE, size=4)
    for std in ("CL2.0", "CL3.0"):
        try:
            k = cl.Program(context, PROGRAM_SCOPE).build(options=[f"-cl-std={std}"]).pc_probe_
            seen = []
            for _ in range(2):
                k(queue, (1,), (1,), o).wait()
                v = np.empty(1, dtype=np.int32)
                cl.enqueue_copy(queue, v, o).wait()
                seen.append(int(v[0]))
            out[std] = f"built; launches read {seen}"
        except cl.Error as exc:
            out[std] = f"refused: {str(exc)[:200]}"
    return out


COPY4 = r"""
__kernel void copy4_(__global const float4 *restrict a, __global float4 *restrict b)
{
    const size_t i = get_global_id(0);
    b[i] = a[i];
}
"""


def body_source(source: str) -> str:
    """``source`` (the rendered template) with its kernel made ``body_``, a function of
    its block (its three group ids)."""
    at = source.rfind(HEAD)
    if at < 0:
        raise SystemExit("partition_probe: the template's vector kernel was not found")
    body = source[at + len(HEAD) :]
    for d in range(3):
        body = body.replace(f"get_group_id({d})", f"g{d}_")
    head = "inline void body_(KERNEL_ARGS, const int g0_, const int g1_, const int g2_)"
    return source[:at] + head + body


def scheduled_source(source: str) -> str:
    """``body_source`` with the scheduling kernels appended."""
    return body_source(source) + SCHED + PREF


def call_args(kernel: Any) -> str:
    return ", ".join(a.name for a in kernel.arguments)


def sides_from(cycles: np.ndarray, sms: np.ndarray) -> tuple[dict[int, int], dict[str, Any]]:
    """Each SM's side, from its atomics' latencies: a line is near an SM when its time
    is below that SM's median; SMs whose near lines agree with SM min's are side 0."""
    per_sm: dict[int, np.ndarray] = {}
    for g, s in enumerate(sms):
        per_sm.setdefault(int(s), cycles[g])
    ids = sorted(per_sm)
    near = np.array([per_sm[s] < np.median(per_sm[s]) for s in ids], dtype=float)
    ref = near[0]
    agree = (near == ref).mean(axis=1)
    side = {s: int(a < 0.5) for s, a in zip(ids, agree, strict=True)}
    med = {s: float(np.median(per_sm[s])) for s in ids}
    fast = {s: float(np.mean(np.sort(per_sm[s])[: LATENCY_LINES // 2])) for s in ids}
    slow = {s: float(np.mean(np.sort(per_sm[s])[LATENCY_LINES // 2 :])) for s in ids}
    info = {
        "sms": len(ids),
        "side_counts": [sum(1 for v in side.values() if v == k) for k in (0, 1)],
        "agreement": {str(s): round(float(a), 3) for s, a in zip(ids, agree, strict=True)},
        "median_cycles": {str(s): med[s] for s in ids},
        "near_mean": {str(s): round(fast[s], 1) for s in ids},
        "far_mean": {str(s): round(slow[s], 1) for s in ids},
        "side": {str(s): v for s, v in side.items()},
    }
    return side, info


def near_lines(cycles: np.ndarray, sms: np.ndarray, side: Mapping[int, int]) -> list[int]:
    """A line each side's SMs reach faster than the other side's (its L2 partition's),
    as (side 0's, side 1's), then a third line for the finished count."""
    first: dict[int, int] = {}
    for g, sm in enumerate(sms):
        first.setdefault(int(sm), g)
    rows = {k: [first[sm] for sm in first if side[sm] == k] for k in (0, 1)}
    gap = cycles[rows[0]].mean(axis=0) - cycles[rows[1]].mean(axis=0)
    a, b = int(np.argmin(gap)), int(np.argmax(gap))
    c = next(i for i in range(LATENCY_LINES) if i not in (a, b))
    return [a * LINE, b * LINE, c * LINE]


def measure_sides(
    context: Any, queue: Any, device: Any
) -> tuple[dict[int, int], dict[str, Any], Any, list[int]]:
    import pyopencl as cl

    prog = cl.Program(context, LATENCY).build(
        options=[f"-DLINES={LATENCY_LINES}", f"-DLINE={LINE}"]
    )
    groups = 8 * device.max_compute_units
    mf = cl.mem_flags
    lines = cl.Buffer(context, mf.READ_WRITE, size=LATENCY_LINES * LINE * 4)
    cl.enqueue_fill_buffer(queue, lines, np.int32(0), 0, LATENCY_LINES * LINE * 4)
    cycles = cl.Buffer(context, mf.READ_WRITE, size=groups * LATENCY_LINES * 8)
    sms = cl.Buffer(context, mf.READ_WRITE, size=groups * 4)
    prog.latency_(queue, (groups * 32,), (32,), lines, cycles, sms).wait()
    c = np.empty((groups, LATENCY_LINES), dtype=np.int64)
    s = np.empty(groups, dtype=np.int32)
    cl.enqueue_copy(queue, c, cycles)
    cl.enqueue_copy(queue, s, sms).wait()
    side, info = sides_from(c, s)
    offsets = near_lines(c, s, side) if min(info["side_counts"]) else [0, LINE, 2 * LINE]
    info["counter_lines"] = [o // LINE for o in offsets]
    cl.enqueue_fill_buffer(queue, lines, np.int32(0), 0, LATENCY_LINES * LINE * 4).wait()
    return side, info, lines, offsets


def side_table(side: Mapping[int, int]) -> str:
    return ",".join(str(side.get(s, 0)) for s in range(SLOTS))


def hashed_sides() -> dict[int, int]:
    """The SMs split by a hash of their number: the control for the measured split."""
    return {s: zlib.crc32(bytes([s % 256, s // 256])) & 1 for s in range(SLOTS)}


def variants(side: Mapping[int, int] | None) -> dict[str, list[str]]:
    """Each variant's extra build options (``std``: the package's kernel). ``dyn``: one
    queue in the hardware's order; ``ypart``: a queue per side, each side half of every
    slab's rows, with the measured sides (all SMs one side where none was measured),
    ``yrand`` with a hash's. The counters are zeroed by the last work-group to take its
    block; a suffix ``h``: by the host before each launch (outside the kernel's time),
    ``e``: by the last work-group to finish; ``2h``: two blocks per work-group;
    ``ypartg``: ``yparte`` with program-scope counters (``-cl-std=CL2.0``), ``std20``
    the package's kernel built with that option."""
    rand = side_table(hashed_sides())
    measured = side_table(side or {})
    one, two = "-DPER=1", "-DPER=2"
    start, host, end = "-DRESET=0", "-DRESET=1", "-DRESET=2"
    return {
        "std": [],
        "dyn": ["-DSCHED=1", one, start],
        "dynh": ["-DSCHED=1", one, host],
        "dyne": ["-DSCHED=1", one, end],
        "ypart": ["-DSCHED=4", one, start, f"@SIDES@={measured}"],
        "yparth": ["-DSCHED=4", one, host, f"@SIDES@={measured}"],
        "yparte": ["-DSCHED=4", one, end, f"@SIDES@={measured}"],
        "yrandh": ["-DSCHED=4", one, host, f"@SIDES@={rand}"],
        "yrande": ["-DSCHED=4", one, end, f"@SIDES@={rand}"],
        "ypart2h": ["-DSCHED=4", two, host, f"@SIDES@={measured}"],
        # as a template would hold them: the counters program-scope variables, which
        # need OpenCL C 2.0 (and the package's kernel built so, to see what that costs)
        "std20": [CL20],
        "ypartg": ["-DSCHED=4", one, end, "-DGLOBALQ=1", CL20, f"@SIDES@={measured}"],
        # no queue: the hardware's order, each work-group first prefetching into L2
        # the input of the block PD ahead (pf0: its own), NVIDIA's prefetch.global.L2
        **{
            f"pf{d}": ["-DPREF=1", f"-DPD={d}", "-DSCHED=1", "-DPER=1", "-DRESET=1"]
            for d in (0, 264, 528)
        },
    }


def chosen(all_: Mapping[str, list[str]], names: str) -> dict[str, list[str]]:
    """The variants named in ``names`` (comma-separated; empty: every one), ``std`` always
    (every other variant's output is checked against it)."""
    wanted = {n.strip() for n in names.split(",") if n.strip()}
    unknown = wanted - set(all_)
    if unknown:
        raise SystemExit(f"partition_probe: no variant {', '.join(sorted(unknown))}")
    return {k: v for k, v in all_.items() if not wanted or k == "std" or k in wanted}


def scheduled(
    queue: Any,
    kernel: Any,
    grid: Sequence[int],
    loc: Sequence[int],
    args: Sequence[Any],
    resets: Sequence[int],
) -> Any:
    """One launch of a scheduled variant, its counters zeroed first where the host
    resets them (``resets``: their offsets); returns the kernel's event."""
    import pyopencl as cl

    for off in resets:
        cl.enqueue_copy(queue, args[-1], ZERO, dst_offset=off * 4)
    return kernel(queue, tuple(grid), tuple(loc), *args)


def load(name: str, size: int) -> Any:
    import template_ab

    from gtune.description import load_kernel

    work = Path(tempfile.mkdtemp(prefix="partition_probe_"))
    kernel = load_kernel(template_ab.render_real(name, work, None))
    return kernel.with_sizes({k: size for k in ("NX", "NY", "NZ") if k in kernel.sizes})


def build_launches(
    context: Any,
    queue: Any,
    kernel: Any,
    full: Mapping[str, int],
    base: list[str],
    buffers: tuple[Any, Any, Any],
    variants_: Mapping[str, list[str]],
    offsets: list[int],
) -> tuple[dict[str, Any], dict[str, str]]:
    """Each variant that builds: a launch (returning its event) and its ptxas registers."""
    import pyopencl as cl

    glob, loc = kernel.launch_sizes(full)
    src, dst, q = buffers
    sched_src = scheduled_source(kernel.source).replace("CALL_ARGS", call_args(kernel))
    launches: dict[str, Any] = {}
    registers: dict[str, str] = {}
    for label, extra in variants_.items():
        try:
            if label in ("std", "std20"):
                prog = cl.Program(context, kernel.source).build(options=base + extra)
                k = prog.stencil
                launches[label] = lambda k=k: k(queue, glob, loc, src, dst)
            else:
                table = [e.split("=", 1)[1] for e in extra if e.startswith("@SIDES@=")]
                text = sched_src.replace("@SIDES@", table[0] if table else "0")
                opts = base + [e for e in extra if not e.startswith("@SIDES@=")]
                prog = cl.Program(context, text).build(options=opts)
                if "-DPREF=1" in extra:  # the hardware's grid, no counters to zero
                    launches[label] = functools.partial(
                        scheduled, queue, prog.pref_, glob, loc, (src, dst, q), []
                    )
                else:
                    per = 2 if "-DPER=2" in extra else 1
                    grid = (glob[0], glob[1], glob[2] // per)
                    resets = offsets if "-DRESET=1" in extra else []
                    launches[label] = functools.partial(
                        scheduled, queue, prog.sched_, grid, loc, (src, dst, q), resets
                    )
            log = prog.get_build_info(context.devices[0], cl.program_build_info.LOG)
            registers[label] = ";".join(re.findall(r"Used \d+ registers[^\n]*", log))
        except cl.RuntimeError as exc:
            why = str(exc)[:400]
            print(f"partition_probe: {kernel.name} {label} did not build: {why}", file=sys.stderr)
    return launches, registers


def outputs(queue: Any, go: Any, dst: Any, host: np.ndarray, zero: Any | None) -> np.ndarray:
    """The destination after one launch from the initial data, the counters zeroed
    first by ``zero`` (None: as the launch before left them)."""
    import pyopencl as cl

    cl.enqueue_copy(queue, dst, host).wait()
    if zero is not None:
        zero()
    go().wait()
    out = np.empty_like(host)
    cl.enqueue_copy(queue, out, dst).wait()
    return out


def checked_rounds(
    launches: Mapping[str, Callable[[], Any]],
    same: Mapping[str, bool],
    still_right: Callable[[Callable[[], Any]], bool],
    copy: Callable[[], Any],
    args: argparse.Namespace,
    before: Callable[[], None] | None = None,
) -> tuple[dict[str, bool], list[dict[str, Any]]]:
    """The launches whose output was right (``same``) and the float4 copy, timed in
    ``args.rounds`` alternating rounds of ``args.reps``; each checked again after the
    timing (``still_right``). Returns the checks and a row per timed launch: its median,
    its share of the copy's time and its ratio to ``std``'s."""
    import xhalo_probe

    timed = {k: v for k, v in launches.items() if same[k]}
    timed["copy4"] = copy
    rounds = xhalo_probe.alternating_rounds(timed, args.rounds, args.reps, before=before)
    checks = dict(same)
    for label in [k for k in timed if k != "copy4"]:  # after the timing, still right
        checks[label] = checks[label] and still_right(timed[label])
    t_copy = statistics.median(rounds["copy4"])
    t_std = statistics.median(rounds["std"]) if "std" in rounds else float("nan")
    rows = [
        {
            "variant": label,
            "median_s": statistics.median(r),
            "of_copy": t_copy / statistics.median(r),
            "vs_std": statistics.median(r) / t_std,
            "rounds_s": r,
        }
        for label, r in rounds.items()
    ]
    return checks, rows


def run_kernel(
    context: Any,
    queue: Any,
    name: str,
    config: Mapping[str, int],
    args: argparse.Namespace,
    side: Mapping[int, int] | None,
    nvidia: bool,
    counters: tuple[Any, list[int]],
) -> dict[str, Any]:
    import pyopencl as cl

    kernel = load(name, args.size)
    full = kernel.with_defaults(config)
    glob, loc = kernel.launch_sizes(full)
    q, offsets = counters
    base = [*kernel.defines(full), f"-DSLOTS={SLOTS}"]
    base += [f"-D{k}={v}" for k, v in zip(("CNT0", "CNT1", "DONE"), offsets, strict=True)]
    groups = [g // w for g, w in zip(glob, loc, strict=True)]
    base += [f"-DNG{d}={groups[d]}" for d in range(3)]
    base += [f"-DSMID_ASM={int(nvidia)}", *(["-cl-nv-verbose"] if nvidia else [])]
    n = int(np.prod(kernel.arguments[0].shape_for(kernel.env(full))))
    host = np.random.default_rng(11).random(n, dtype=np.float32)
    mf = cl.mem_flags
    src = cl.Buffer(context, mf.READ_ONLY | mf.COPY_HOST_PTR, hostbuf=host)
    dst = cl.Buffer(context, mf.READ_WRITE | mf.COPY_HOST_PTR, hostbuf=host)
    launches, registers = build_launches(
        context,
        queue,
        kernel,
        full,
        base,
        (src, dst, q),
        chosen(variants(side), args.variants),
        offsets,
    )

    def zero() -> None:  # between variants: one that the host resets leaves them set
        for off in offsets:
            cl.enqueue_copy(queue, q, ZERO, dst_offset=off * 4)

    # twice: the second launch meets the counters as the first left them
    outs = {
        k: [outputs(queue, go, dst, host, z) for z in (zero, None)] for k, go in launches.items()
    }
    want = outs["std"][0]
    same = {k: all(np.array_equal(o, want) for o in v) for k, v in outs.items()}
    copy = cl.Program(context, COPY4).build().copy4_
    same, rows = checked_rounds(
        launches,
        same,
        lambda go: bool(np.array_equal(outputs(queue, go, dst, host, zero), want)),
        lambda: copy(queue, (n // 4,), (128,), src, dst),
        args,
        zero,
    )
    return {
        "kernel": name,
        "config": dict(full),
        "same_as_std": same,
        "registers": registers,
        "rows": rows,
    }


def markdown(data: Mapping[str, Any]) -> str:
    lines = [f"# Block order and the L2 link on {data['device']}", ""]
    sides = data.get("sides")
    if sides:
        lines.append(
            f"SMs seen: {sides['sms']}; measured sides: {sides['side_counts'][0]} and "
            f"{sides['side_counts'][1]} SMs."
        )
        lines.append("")
    for k in data["kernels"]:
        lines += [f"## {k['kernel']}", "", f"`{json.dumps(k['config'])}`", ""]
        lines.append("Registers: " + "; ".join(f"{a} {b}" for a, b in k["registers"].items()))
        lines += ["", *checks_and_times(k), ""]
    return "\n".join(lines)


def checks_and_times(kernel: Mapping[str, Any]) -> list[str]:
    """A kernel's checks against ``std`` and its table of times (Markdown lines)."""
    checks = ", ".join(f"{a} {'yes' if b else 'NO'}" for a, b in kernel["same_as_std"].items())
    lines = [f"Same bits as std: {checks}", ""]
    lines += ["| variant | time | of copy | vs std |", "| --- | ---: | ---: | ---: |"]
    for r in kernel["rows"]:
        t, share = r["median_s"] * 1e6, 100 * r["of_copy"]
        lines.append(f"| {r['variant']} | {t:.1f} µs | {share:.1f} % | {r['vs_std']:.3f} |")
    return lines


def main(argv: Sequence[str] | None = None) -> int:
    import pyopencl as cl
    import xhalo_probe

    from gtune.commands._common import parse_config

    p = xhalo_probe.probe_parser(__doc__, rounds=5, reps=20)
    p.add_argument("--config", action="append", default=[], metavar="KERNEL:N=V,...")
    p.add_argument(
        "--variants", default="", metavar="A,B,...", help="only these variants (std always)"
    )
    args = p.parse_args(argv)
    device, context, queue = xhalo_probe.open_device(args.device)
    nvidia = "NVIDIA" in device.platform.name.upper()
    data: dict[str, Any] = {"device": device.name, "size": args.size, "kernels": []}
    side = None
    if nvidia:
        side, data["sides"], buf, offsets = measure_sides(context, queue, device)
        shown = ("sms", "side_counts", "counter_lines")
        print(json.dumps({k: data["sides"][k] for k in shown}), flush=True)
        data["program_scope"] = program_scope(context, queue)
        print(json.dumps(data["program_scope"]), flush=True)
    else:
        buf = cl.Buffer(context, cl.mem_flags.READ_WRITE, size=3 * LINE * 4)
        cl.enqueue_fill_buffer(queue, buf, np.int32(0), 0, 3 * LINE * 4).wait()
        offsets = [0, LINE, 2 * LINE]
    args.out.mkdir(parents=True, exist_ok=True)
    for spec in args.config:
        name, _, rest = spec.partition(":")
        config = parse_config(rest) if rest else {}
        data["kernels"].append(
            run_kernel(context, queue, name, config, args, side, nvidia, (buf, offsets))
        )
        (args.out / "partition.json").write_text(json.dumps(data, indent=1) + "\n")
        (args.out / "partition.md").write_text(markdown(data))
        print(markdown({**data, "kernels": data["kernels"][-1:]}), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env python3
"""Which L2 partition holds each line of a buffer, and whether a copy that keeps its
reads on its own SM's partition beats the float4 copy (NVIDIA, issue 49).

The H200's counters (``results/h200-limit/ncu/``) put the link between the L2's two
partitions at 93–96 % busy in every one-step kernel, the float4 copy included: about
half of the copy's sectors cross it, since an SM on one side reads and writes memory
that the other side's partition holds. ``partition_probe.py`` placed blocks that share
halo rows on one side; this probe asks the larger question: is the link what holds the
copy itself? If it is, a copy whose SMs read only lines their own partition holds runs
faster than the float4 copy, and so could every stencil.

1. **Sides** of the SMs, as ``partition_probe.py`` measures them (a chain of atomics
   per SM on the same lines; an atomic runs in the slice that holds its line).
2. **Homes**: every 128-byte line of the copy's input and output is timed by an atomic
   from a work-group that knows its SM's side, after a first atomic has brought the line
   into L2; a near line (below the midpoint of the latencies' quartiles) is held by that
   side, a far one by the other.
   ``homes`` in the output: how the homes follow the address (a linear hash of the
   offset's bits over GF(2) within each 2 MiB, and how often a 2 MiB piece is that
   pattern or its complement), and how often the input's and output's lines at the
   same offset share a home.
3. **Copies**, each checked bit for bit against the input, then timed in alternating
   rounds (median of ``--reps`` launches per round, median over rounds):
   - ``copy4``: the float4 copy (one float4 per work-item, the hardware's launch);
   - ``dyn``: persistent work-groups (8 per SM of 256) taking batches of lines from one
     list of every line in order (an atomic counter): the cost of the queue;
   - ``part``: a list per side (the lines whose input line that side holds), each
     work-group taking from its SM's side's list, then the other's;
   - ``wpart``: the same with lists by the output's homes (the writes on their side);
   - ``rand``: ``part``'s lists, the SMs split by a hash of their number (the control:
     the same code and traffic, the reads' sides at random);
   - ``local``: a permuted copy, each side's work-groups copying lines its partition
     holds to lines its partition holds (the k-th of each), so that neither reads nor
     writes cross the link; ``far`` the same pairs on the other side (both cross);
     ``prand`` the same pairs with the hash's sides. Checked against the permutation.

    python3 benchmarks/home_probe.py OUT --device NVIDIA --size 512 --rounds 7 --reps 10
"""

from __future__ import annotations

import json
import statistics
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

LINE_BYTES = 128
PAGE_LINES = (2 << 20) // LINE_BYTES  # lines in 2 MiB
BATCH = 64  # lines a work-group takes at once (8 KiB)
GROUP = 256
PERMUTED = ("local", "far", "prand")
PER_SM = 8

HOME = r"""
/* Two atomics per line, the second timed (the first brings the line into L2, so the
   time is the L2's, near or far, not the DRAM's): work-group g times lines g, g + G,
   ... of the buffer (its first work-item only), each atomic's address depending on the
   one before. */
__kernel void home_(__global int *buf, const int lines, __global ushort *cycles,
                    __global int *sms)
{
    if (get_local_id(0) != 0)
        return;
    const int g = (int)get_group_id(0), G = (int)get_num_groups(0);
    uint s;
    asm volatile("mov.u32 %0, %%smid;" : "=r"(s));
    sms[g] = (int)s;
    int dep = 0;
    for (int i = g; i < lines; i += G) {
        long t0, t1;
        dep = atomic_add(&buf[(size_t)i * 32 + (dep >> 30)], 1);
        asm volatile("mov.u64 %0, %%clock64;" : "=l"(t0) : "r"(dep) : "memory");
        dep = atomic_add(&buf[(size_t)i * 32 + (dep >> 30)], 1);
        asm volatile("mov.u64 %0, %%clock64;" : "=l"(t1) : "r"(dep) : "memory");
        cycles[i] = (ushort)min(t1 - t0, (long)65535);
    }
}
"""

TAKEN = r"""
/* Persistent work-groups: each takes BATCH lines at a time from its SM's side's list
   (then the other side's), and copies them (8 float4 per 128-byte line). @NAME@'s list
   entries are @ENTRY@: the line, read from @SRC@ and written to @DST@. */
__kernel __attribute__((reqd_work_group_size(GROUP, 1, 1)))
void @NAME@(__global const float4 *restrict a, __global float4 *restrict b,
            __global const @ENTRY@ *restrict list0, __global const @ENTRY@ *restrict list1,
            const int n0, const int n1, __global volatile int *q)
{
    __local int start_, which_;
    const int lid = (int)get_local_id(0);
    uint sm;
    asm volatile("mov.u32 %0, %%smid;" : "=r"(sm));
    const int p = side_of_[sm % 512];
    for (;;) {
        if (lid == 0) {
            int s = p;
            int t = atomic_add(&q[s * 32], BATCH);
            if (t >= (s ? n1 : n0)) {
                s ^= 1;
                t = atomic_add(&q[s * 32], BATCH);
            }
            start_ = t;
            which_ = s;
        }
        barrier(CLK_LOCAL_MEM_FENCE);
        const int t = start_, s = which_;
        barrier(CLK_LOCAL_MEM_FENCE);
        const int n = s ? n1 : n0;
        if (t >= n)
            break;
        __global const @ENTRY@ *L = s ? list1 : list0;
        for (int k = lid; k < BATCH * 8; k += GROUP) {
            const int j = t + k / 8;
            if (j < n) {
                const @ENTRY@ e = L[j];
                b[(size_t)(@DST@) * 8 + (size_t)(k % 8)] = a[(size_t)(@SRC@) * 8 + (size_t)(k % 8)];
            }
        }
    }
}
"""


def taken(name: str, entry: str, src: str, dst: str) -> str:
    """:data:`TAKEN` as the kernel ``name`` whose list entries are ``entry``."""
    text = TAKEN
    for key, value in (("@NAME@", name), ("@ENTRY@", entry), ("@SRC@", src), ("@DST@", dst)):
        text = text.replace(key, value)
    return text


COPIES = (
    r"""
__constant uchar side_of_[512] = {@SIDES@};

__kernel void copy4_(__global const float4 *restrict a, __global float4 *restrict b)
{
    const size_t i = get_global_id(0);
    b[i] = a[i];
}
"""
    # lcopy_: a list of lines, each copied to itself; pcopy_: a list of pairs (source
    # line, destination line), a permuted copy whose reads and writes both have sides
    + taken("lcopy_", "int", "e", "e")
    + taken("pcopy_", "int2", "e.x", "e.y")
)


def pair_lists(home_a: np.ndarray, home_b: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per side s, (source, destination) line pairs with both lines held by s (the k-th
    of the input's side-s lines to the k-th of the output's), the few left over paired
    across and appended to side 0's list."""
    la = [np.nonzero(home_a == s)[0] for s in (0, 1)]
    lb = [np.nonzero(home_b == s)[0] for s in (0, 1)]
    m = [min(len(la[s]), len(lb[s])) for s in (0, 1)]
    pairs = [np.stack([la[s][: m[s]], lb[s][: m[s]]], axis=1) for s in (0, 1)]
    rest_a = np.concatenate([la[0][m[0] :], la[1][m[1] :]])
    rest_b = np.concatenate([lb[0][m[0] :], lb[1][m[1] :]])
    rest = np.stack([rest_a, rest_b], axis=1)
    return (np.concatenate([pairs[0], rest]).astype(np.int32), pairs[1].astype(np.int32))


def line_homes(
    context: Any, queue: Any, buf: Any, lines: int, side: dict[int, int], groups: int
) -> tuple[np.ndarray, dict[str, Any]]:
    """Each line's home side (0, 1) from one timed atomic, and the latencies' split."""
    import pyopencl as cl

    prog = cl.Program(context, HOME).build()
    mf = cl.mem_flags
    cycles = cl.Buffer(context, mf.READ_WRITE, size=lines * 2)
    sms = cl.Buffer(context, mf.READ_WRITE, size=groups * 4)
    prog.home_(queue, (groups * 32,), (32,), buf, np.int32(lines), cycles, sms).wait()
    c = np.empty(lines, dtype=np.uint16)
    s = np.empty(groups, dtype=np.int32)
    cl.enqueue_copy(queue, c, cycles)
    cl.enqueue_copy(queue, s, sms).wait()
    lo, hi = np.percentile(c, [25, 75])
    mid = (float(lo) + float(hi)) / 2
    sm_side = np.array([side.get(int(x), 0) for x in s], dtype=np.uint8)
    own = sm_side[np.arange(lines) % groups]
    near = c < mid
    homes = np.where(near, own, 1 - own).astype(np.uint8)
    info = {
        "lines": lines,
        "cycles_p25_p75": [float(lo), float(hi)],
        "midpoint": mid,
        "near_share": round(float(near.mean()), 4),
        "ambiguous_share": round(float((np.abs(c.astype(float) - mid) < 30).mean()), 4),
        "home1_share": round(float(homes.mean()), 4),
    }
    return homes, info


def gf2_fit(bits: np.ndarray, y: np.ndarray) -> tuple[list[int], int, float]:
    """A mask m and constant c with y = parity(bits & m) ^ c over as many rows as
    Gaussian elimination over GF(2) fits exactly; returns (mask bits, c, agreement)."""
    rows = np.concatenate([bits, np.ones((len(bits), 1), dtype=np.uint8)], axis=1)
    a = np.concatenate([rows, y[:, None]], axis=1).astype(np.uint8)
    n = rows.shape[1]
    piv_rows: list[int] = []
    r = 0
    for col in range(n):
        hit = np.nonzero(a[r:, col])[0]
        if len(hit) == 0:
            continue
        k = r + int(hit[0])
        a[[r, k]] = a[[k, r]]
        others = np.nonzero(a[:, col])[0]
        others = others[others != r]
        a[others] ^= a[r]
        piv_rows.append(col)
        r += 1
        if r == len(a):
            break
    sol = np.zeros(n, dtype=np.uint8)
    for i, col in enumerate(piv_rows):
        sol[col] = a[i, -1]
    pred = (rows @ sol) % 2
    return [int(b) for b in np.nonzero(sol[:-1])[0]], int(sol[-1]), float((pred == y).mean())


def describe_homes(homes: np.ndarray) -> dict[str, Any]:
    """How the homes follow the offset: a GF(2) fit of the first 2 MiB on the line
    offset's bits (7 = the line's first bit), and each 2 MiB's agreement with it."""
    n = min(len(homes), PAGE_LINES)
    idx = np.arange(n)
    nbits = max(1, int(n - 1).bit_length())
    bits = ((idx[:, None] >> np.arange(nbits)) & 1).astype(np.uint8)
    mask, const, fit = gf2_fit(bits, homes[:n])
    out: dict[str, Any] = {
        "fit_first_2MiB": round(fit, 4),
        "mask_address_bits": [b + 7 for b in mask],
        "constant": const,
    }
    pages = len(homes) // PAGE_LINES
    if pages:
        ref = homes[:PAGE_LINES]
        agree = [
            float((homes[p * PAGE_LINES : (p + 1) * PAGE_LINES] == ref).mean())
            for p in range(pages)
        ]
        out["pages"] = pages
        out["pages_same_or_complement"] = round(
            float(np.mean([max(a, 1 - a) > 0.98 for a in agree])), 4
        )
        out["page_agreement_sample"] = [round(a, 3) for a in agree[:16]]
    for run in (1, 2, 4, 8, 16, 32):
        m = len(homes) // run * run
        blocks = homes[:m].reshape(-1, run)
        out[f"uniform_runs_of_{run}"] = round(float((blocks.min(1) == blocks.max(1)).mean()), 4)
    return out


SMID = 'asm volatile("mov.u32 %0, %%smid;" : "=r"(sm));'


def measure_homes(
    context: Any, queue: Any, device: Any, side: dict[int, int], bufs: dict[str, Any], n: int
) -> tuple[dict[str, np.ndarray], dict[str, Any]]:
    """Each buffer's lines' homes (``bufs``: name to buffer of ``n`` floats) and their
    statistics, the buffers zeroed first and left changed (atomics)."""
    import pyopencl as cl

    homes, info = {}, {}
    for name, buf in bufs.items():
        cl.enqueue_fill_buffer(queue, buf, np.int32(0), 0, n * 4)
        # one timing work-group per SM: little load on the L2
        h, about = line_homes(
            context, queue, buf, n * 4 // LINE_BYTES, side, device.max_compute_units
        )
        about.update(describe_homes(h))
        homes[name], info[name] = h, about
        print(name, json.dumps(about), flush=True)
    same = float((homes["input"] == homes["output"]).mean())
    info["input_output_same_home"] = round(same, 4)
    return homes, info


def copy_launches(
    context: Any,
    queue: Any,
    tables: dict[str, str],
    homes: dict[str, np.ndarray],
    ab: tuple[Any, Any],
    n: int,
    groups: int,
    smid: str = SMID,
    source: str = COPIES,
) -> tuple[dict[str, Any], np.ndarray]:
    """Each copy of the module's list (a launch returning its event) and the permuted
    copies' map of destination line to source line. ``tables``: ``part`` and ``rand``,
    the sides' tables; ``smid`` reads the SM (another device: a constant); ``source``
    the kernels (:data:`COPIES`)."""
    import pyopencl as cl

    a_buf, b_buf = ab
    lines = n * 4 // LINE_BYTES
    mf = cl.mem_flags

    def dev(v: np.ndarray) -> Any:
        return cl.Buffer(context, mf.READ_ONLY | mf.COPY_HOST_PTR, hostbuf=v)

    lbufs = {}
    for k, h in (("in", "input"), ("out", "output")):
        one, other = (np.nonzero(homes[h] == s)[0].astype(np.int32) for s in (0, 1))
        lbufs[k] = (dev(one), dev(other), len(one), len(other))
    every = np.arange(lines, dtype=np.int32)
    lbufs["all"] = (dev(every), dev(every), lines, 0)
    p0, p1 = pair_lists(homes["input"], homes["output"])
    lbufs["pairs"] = (dev(p0), dev(p1), len(p0), len(p1))
    lbufs["swapped"] = (dev(p1), dev(p0), len(p1), len(p0))
    perm = np.empty(lines, dtype=np.int64)  # destination line -> source line
    both = np.concatenate([p0, p1])
    perm[both[:, 1]] = both[:, 0]
    q = cl.Buffer(context, mf.READ_WRITE, size=256)
    kernels = {}
    for label, table in tables.items():
        src = source.replace("@SIDES@", table).replace(SMID, smid)
        prog = cl.Program(context, src).build(options=[f"-DBATCH={BATCH}", f"-DGROUP={GROUP}"])
        kernels[label] = cl.Kernel(prog, "lcopy_")
        kernels["copy4"] = cl.Kernel(prog, "copy4_")
        kernels["p" + label] = cl.Kernel(prog, "pcopy_")
    zero = np.zeros(64, dtype=np.int32)

    def lcopy(label: str, lists: str) -> Any:
        l0, l1, n0, n1 = lbufs[lists]
        cl.enqueue_copy(queue, q, zero)
        return kernels[label](
            queue,
            (groups * GROUP,),
            (GROUP,),
            a_buf,
            b_buf,
            l0,
            l1,
            np.int32(n0),
            np.int32(n1),
            q,
        )

    launches = {
        "copy4": lambda: kernels["copy4"](queue, (n // 4,), (128,), a_buf, b_buf),
        "dyn": lambda: lcopy("part", "all"),
        "part": lambda: lcopy("part", "in"),
        "wpart": lambda: lcopy("part", "out"),
        "rand": lambda: lcopy("rand", "in"),
        "local": lambda: lcopy("ppart", "pairs"),
        "far": lambda: lcopy("ppart", "swapped"),
        "prand": lambda: lcopy("prand", "pairs"),
    }
    return launches, perm


def check_copies(
    queue: Any, launches: dict[str, Any], host: np.ndarray, b_buf: Any, perm: np.ndarray
) -> dict[str, bool]:
    """Each copy's output, bit for bit: the input, or its lines permuted by ``perm``."""
    import pyopencl as cl

    n = len(host)
    out = np.empty(n, dtype=np.float32)
    checks = {}
    for label, launch in launches.items():
        cl.enqueue_fill_buffer(queue, b_buf, np.int32(-1), 0, n * 4)
        launch().wait()
        cl.enqueue_copy(queue, out, b_buf).wait()
        want = host.reshape(len(perm), -1)[perm].reshape(-1) if label in PERMUTED else host
        checks[label] = bool(np.array_equal(out.view(np.int32), want.view(np.int32)))
    return checks


def main(argv: list[str] | None = None) -> int:
    import pyopencl as cl
    import xhalo_probe
    from partition_probe import hashed_sides, measure_sides, side_table

    args = xhalo_probe.probe_parser(__doc__, size_help="cube side: the copy's floats").parse_args(
        argv
    )
    device, context, queue = xhalo_probe.open_device(args.device)
    if "NVIDIA" not in device.platform.name.upper():
        raise SystemExit("home_probe: NVIDIA only (%smid, %clock64)")
    args.out.mkdir(parents=True, exist_ok=True)

    def save() -> None:  # after each stage, so that a run cut short keeps what it measured
        (args.out / "homes.json").write_text(json.dumps(data, indent=1) + "\n")

    t0 = time.time()
    side, sides_info, _buf, _off = measure_sides(context, queue, device)
    data: dict[str, Any] = {
        "device": device.name,
        "size": args.size,
        "sides": {k: sides_info[k] for k in ("sms", "side_counts")},
    }
    n = args.size**3
    ab = tuple(cl.Buffer(context, cl.mem_flags.READ_WRITE, size=n * 4) for _ in range(2))
    homes, data["homes"] = measure_homes(
        context, queue, device, side, {"input": ab[0], "output": ab[1]}, n
    )
    print(f"homes measured in {time.time() - t0:.1f} s", flush=True)
    save()
    host = np.random.default_rng(1).random(n, dtype=np.float32)
    cl.enqueue_copy(queue, ab[0], host).wait()
    tables = {"part": side_table(side), "rand": side_table(hashed_sides())}
    groups = PER_SM * device.max_compute_units
    launches, perm = copy_launches(context, queue, tables, homes, ab, n, groups)
    data["checks"] = checks = check_copies(queue, launches, host, ab[1], perm)
    print("checks", checks, flush=True)
    wrong = [k for k, ok in checks.items() if not ok]
    if wrong:
        save()
        raise SystemExit(f"home_probe: wrong output from {', '.join(wrong)}")
    times = xhalo_probe.alternating_rounds(launches, args.rounds, args.reps, warmup=1)
    gb = 2 * n * 4 / 1e9
    data["times_us"] = {k: round(statistics.median(v) * 1e6, 2) for k, v in times.items()}
    data["rounds_us"] = {k: [round(x * 1e6, 2) for x in v] for k, v in times.items()}
    base = statistics.median(times["copy4"])
    data["vs_copy4"] = {k: round(statistics.median(v) / base, 4) for k, v in times.items()}
    data["gbs"] = {k: round(gb / statistics.median(v), 1) for k, v in times.items()}
    save()
    print(json.dumps({k: data[k] for k in ("times_us", "vs_copy4", "gbs")}), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())

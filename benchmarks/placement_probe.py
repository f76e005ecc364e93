#!/usr/bin/env python3
"""Whether a kernel can know, without a queue, which L2 side each work-group runs on.

``results/h200-limit/partition/`` found that blocks sharing halo rows cross the link
between the H200's two L2 partitions less when they run on SMs of one side (3.5–9 %
on box27 and laplacian4 in the same code), but the queue that sent each work-group a
block of its side (an atomic at its start) cost more than that everywhere but on
laplacian4. The hardware hands out work-groups in the order of their numbers; if the
SM that work-group ``i`` lands on, or at least its side, is the same from launch to
launch, or repeats from one wave of resident work-groups to the next, a table made
once can send each work-group number a block of its side with no atomic.

This probe asks that of the package's own kernels (the template rendered for a real
stencil at a configuration, its body made a function of its block as
``partition_probe`` makes it):

1. **Placement.** ``--record`` launches of the kernel in the hardware's order, each
   work-group's lead work-item storing its SM (``%smid``) and the global timer at its
   start and end. From them: how many work-groups are resident at once (``W``); how
   often work-group ``i`` lands on the same SM, and on the same side, as in the first
   launch; and how often on the side of work-group ``i mod W`` of the first wave.
2. **Tables.** Each variant is the same kernel taking its block from a table
   (``perm[i]``, one load by every work-item, the same address): ``pid`` the identity
   (the load's cost alone); ``plaunch`` the sides of the first recorded launch;
   ``pwave`` the sides of its first wave, repeated every ``W`` numbers; ``prand``
   random sides (the control: the same code and table, no knowledge). The numbers a
   side is predicted to get take that side's blocks in ``partition_probe``'s ``ypart``
   order (half of every slab's rows, slab after slab), overflowing into the other
   side's next block where a side is predicted more numbers than it has blocks.
   With ``--delay D``, ``delayD`` waits D cycles (NVIDIA's ``%clock64``) before its
   block: what a wait alone costs. With ``--loop K``, ``loopK`` launches N/K
   work-groups, each running blocks g, g + N/K, … in turn: fewer launches, no queue.
3. **Timing.** Every variant's output is compared with the package kernel's (``std``)
   bit for bit before it is timed and again after; the variants and the float4 copy
   run in alternating rounds.

NVIDIA only for the sides and ``%smid``; elsewhere every work-group is SM 0 (one side),
which checks the tables' bookkeeping (tests run it on PoCL).

    python3 benchmarks/placement_probe.py OUT --device NVIDIA --size 512 \\
        --config 'box27:WX=32,WY=2,...' --config 'laplacian4:...'
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

import partition_probe

PLACE = r"""
inline int place_smid_(void)
{
#if SMID_ASM
    uint s;
    asm volatile("mov.u32 %0, %%smid;" : "=r"(s));
    return (int)s;
#else
    return 0;
#endif
}

inline long place_clock_(void)
{
#if SMID_ASM
    ulong t;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
    return (long)t;
#else
    return 0;
#endif
}

/* Work-group g (the hardware's number: x fastest, then y, then z) runs block perm[g]
   (PERM 1) or block g, after DELAY cycles (NVIDIA); with RECORD its lead stores its SM
   and the times it starts and ends. With LOOP, LOOP work-groups run every block. */
__kernel __attribute__((reqd_work_group_size(WX, WY, WZ)))
void place_(KERNEL_ARGS, __global const int *perm, __global long *rec)
{
    const int n0 = NG0, n1 = NG1;
    const int g = ((int)get_group_id(2) * n1 + (int)get_group_id(1)) * n0 + (int)get_group_id(0);
#if RECORD
    const bool lead = get_local_id(0) == 0 && get_local_id(1) == 0 && get_local_id(2) == 0;
    if (lead) {
        rec[3 * g] = place_smid_();
        rec[3 * g + 1] = place_clock_();
    }
#endif
#if LOOP /* LOOP work-groups, each running blocks g, g + LOOP, ... in turn */
    for (int t = g; t < n0 * n1 * NG2; t += LOOP)
        body_(CALL_ARGS, t % n0, (t / n0) % n1, t / (n0 * n1));
#else
#if DELAY /* the work-group waits DELAY cycles before its block (NVIDIA's clock) */
#if SMID_ASM
    long c0, c1;
    asm volatile("mov.u64 %0, %%clock64;" : "=l"(c0));
    do {
        asm volatile("mov.u64 %0, %%clock64;" : "=l"(c1));
    } while (c1 - c0 < DELAY);
#endif
#endif
#if PERM
    const int t = perm[g];
#else
    const int t = g;
#endif
    body_(CALL_ARGS, t % n0, (t / n0) % n1, t / (n0 * n1));
#endif
#if RECORD
    if (lead)
        rec[3 * g + 2] = place_clock_();
#endif
}
"""


def ypart_order(groups: Sequence[int]) -> tuple[list[int], list[int]]:
    """Each side's blocks in ``partition_probe``'s ``ypart`` order: side p takes half of
    every slab's rows (y), slab after slab (z), x fastest."""
    n0, n1, n2 = groups
    hy = n1 // 2
    sides: tuple[list[int], list[int]] = ([], [])
    for z in range(n2):
        for p in (0, 1):
            rows = range(p * hy, hy if p == 0 else n1)
            sides[p].extend((z * n1 + y) * n0 + x for y in rows for x in range(n0))
    return sides


def table(predicted: np.ndarray, groups: Sequence[int]) -> np.ndarray:
    """``perm``: work-group i's block. The numbers predicted on side p take side p's
    blocks in order; once a side's blocks are all given, its numbers take the other
    side's next. A permutation of every block whatever the prediction."""
    lists = ypart_order(groups)
    at = [0, 0]
    perm = np.empty(len(predicted), dtype=np.int32)
    for i, p in enumerate(predicted.tolist()):
        side = p if at[p] < len(lists[p]) else 1 - p
        perm[i] = lists[side][at[side]]
        at[side] += 1
    return perm


def resident(starts: np.ndarray, ends: np.ndarray) -> int:
    """The most work-groups running at once, from their start and end times."""
    events = sorted([(int(t), 1) for t in starts] + [(int(t), -1) for t in ends])
    now = most = 0
    for _, step in events:
        now += step
        most = max(most, now)
    return most


def placement_stats(
    records: Sequence[np.ndarray], side: Mapping[int, int]
) -> tuple[dict[str, Any], np.ndarray, np.ndarray]:
    """What the recorded launches say: resident work-groups ``W``; the share of
    work-group numbers on the same SM and side as in the first launch; the share on the
    side of number ``i mod W`` in the first launch's first wave, wave by wave. Returns
    the statistics and the two predictions (the first launch's sides, its first wave's
    repeated)."""
    first = records[0]
    sms = first[:, 0].astype(int)
    n = len(sms)
    sides = np.array([side.get(int(s), 0) for s in sms], dtype=np.int8)
    w = max(1, min(resident(r[:, 1], r[:, 2]) for r in records))
    wave = np.resize(sides[:w], n)
    later = []
    for r in records[1:]:
        s = r[:, 0].astype(int)
        later_sides = np.array([side.get(int(v), 0) for v in s], dtype=np.int8)
        later.append(
            {
                "same_sm": round(float(np.mean(s == sms)), 4),
                "same_side": round(float(np.mean(later_sides == sides)), 4),
                "wave_side": round(float(np.mean(later_sides == wave)), 4),
            }
        )
    waves = -(-n // w)
    by_wave = [
        round(float(np.mean(sides[k * w : (k + 1) * w] == wave[k * w : (k + 1) * w])), 3)
        for k in range(waves)
    ]
    stats = {
        "groups": n,
        "resident": w,
        "sms_seen": len(set(sms.tolist())),
        "side_counts": [int(np.sum(sides == 0)), int(np.sum(sides == 1))],
        "first_wave_side_counts": [int(np.sum(sides[:w] == 0)), int(np.sum(sides[:w] == 1))],
        "later_launches": later,
        "same_sm_one_wave_later": round(float(np.mean(sms[w:] == sms[:-w])), 4) if n > w else None,
        "wave_side_by_wave": by_wave,
        "span_us": round(float(first[:, 2].max() - first[:, 1].min()) / 1000, 1),
    }
    return stats, sides, wave


def build(
    context: Any, kernel: Any, base: list[str], extra: Mapping[int, int], delay: int
) -> tuple[Any, Any, dict[str, Any], str]:
    """The package's kernel (``std``), the placement kernel with a table and without
    records, and with records and no table; the looping kernels (``loopK``: ``extra[K]``
    work-groups, K blocks each) and the waiting one (``delayD``, with ``delay`` D > 0);
    then the table kernel's ptxas line."""
    import re

    import pyopencl as cl

    text = (partition_probe.body_source(kernel.source) + PLACE).replace(
        "CALL_ARGS", partition_probe.call_args(kernel)
    )
    std = cl.Program(context, kernel.source).build(options=base).stencil

    def kernel_with(*options: str) -> Any:
        return cl.Program(context, text).build(options=[*base, *options])

    perm = kernel_with("-DPERM=1", "-DRECORD=0", "-DLOOP=0", "-DDELAY=0")
    rec = kernel_with("-DPERM=0", "-DRECORD=1", "-DLOOP=0", "-DDELAY=0")
    others = {
        f"loop{k}": kernel_with("-DPERM=0", "-DRECORD=0", f"-DLOOP={loops}", "-DDELAY=0").place_
        for k, loops in extra.items()
    }
    if delay:
        opts = ("-DPERM=0", "-DRECORD=0", "-DLOOP=0", f"-DDELAY={delay}")
        others[f"delay{delay}"] = kernel_with(*opts).place_
    log = perm.get_build_info(context.devices[0], cl.program_build_info.LOG)
    regs = ";".join(re.findall(r"Used \d+ registers[^\n]*", log))
    return std, (perm.place_, rec.place_), others, regs


def record(queue: Any, kernel: Any, glob: Any, loc: Any, bufs: Any, n: int) -> np.ndarray:
    """One recorded launch: per work-group (SM, start, end), the times in ns."""
    import pyopencl as cl

    src, dst, perm, rec = bufs
    kernel(queue, glob, loc, src, dst, perm, rec).wait()
    out = np.empty((n, 3), dtype=np.int64)
    cl.enqueue_copy(queue, out, rec).wait()
    return out


def run_kernel(
    context: Any,
    queue: Any,
    name: str,
    config: Mapping[str, int],
    args: argparse.Namespace,
    side: Mapping[int, int],
    nvidia: bool,
) -> dict[str, Any]:
    import pyopencl as cl

    kernel = partition_probe.load(name, args.size)
    full = kernel.with_defaults(config)
    glob, loc = kernel.launch_sizes(full)
    groups = [g // w for g, w in zip(glob, loc, strict=True)]
    n = int(np.prod(groups))
    base = [*kernel.defines(full), *[f"-DNG{d}={groups[d]}" for d in range(3)]]
    base += [f"-DSMID_ASM={int(nvidia)}", *(["-cl-nv-verbose"] if nvidia else [])]
    size = int(np.prod(kernel.arguments[0].shape_for(kernel.env(full))))
    host = np.random.default_rng(11).random(size, dtype=np.float32)
    mf = cl.mem_flags
    src = cl.Buffer(context, mf.READ_ONLY | mf.COPY_HOST_PTR, hostbuf=host)
    dst = cl.Buffer(context, mf.READ_WRITE | mf.COPY_HOST_PTR, hostbuf=host)
    rec = cl.Buffer(context, mf.READ_WRITE, size=n * 3 * 8)
    loops = {k: n // k for k in args.loop if n % k == 0}
    for k in sorted(set(args.loop) - set(loops)):
        print(
            f"placement_probe: {name}: {k} does not divide {n} blocks; no loop{k}", file=sys.stderr
        )
    std, (place, recorder), others, regs = build(context, kernel, base, loops, args.delay)
    ident = np.arange(n, dtype=np.int32)
    idbuf = cl.Buffer(context, mf.READ_ONLY | mf.COPY_HOST_PTR, hostbuf=ident)
    records = [
        record(queue, recorder, glob, loc, (src, dst, idbuf, rec), n) for _ in range(args.record)
    ]
    stats, launch_sides, wave_sides = placement_stats(records, side)
    rng = np.random.default_rng(5)
    predictions = {
        "pid": None,
        "plaunch": launch_sides,
        "pwave": wave_sides,
        "prand": rng.integers(0, 2, n).astype(np.int8),
    }
    launches: dict[str, Any] = {"std": lambda: std(queue, glob, loc, src, dst)}
    loop_labels = {f"loop{k}" for k in loops}
    for label, pred in predictions.items():
        perm = ident if pred is None else table(pred, groups)
        buf = cl.Buffer(context, mf.READ_ONLY | mf.COPY_HOST_PTR, hostbuf=perm)
        launches[label] = lambda b=buf: place(queue, glob, loc, src, dst, b, rec)
    for label, k in others.items():
        grid = (loops[int(label[4:])] * loc[0], loc[1], loc[2]) if label in loop_labels else glob
        launches[label] = lambda k=k, grid=grid: k(queue, grid, loc, src, dst, idbuf, rec)

    def output(go: Any) -> np.ndarray:
        return partition_probe.outputs(queue, go, dst, host, None)

    want = output(launches["std"])
    same = {k: bool(np.array_equal(output(go), want)) for k, go in launches.items()}
    copy = cl.Program(context, partition_probe.COPY4).build().copy4_
    same, rows = partition_probe.checked_rounds(
        launches,
        same,
        lambda go: bool(np.array_equal(output(go), want)),
        lambda: copy(queue, (size // 4,), (128,), src, dst),
        args,
    )
    return {
        "kernel": name,
        "config": dict(full),
        "placement": stats,
        "registers": regs,
        "same_as_std": same,
        "rows": rows,
        "records": records,
    }


def markdown(data: Mapping[str, Any]) -> str:
    lines = [f"# Work-group placement and L2 sides on {data['device']}", ""]
    sides = data.get("sides")
    if sides:
        a, b = sides["side_counts"]
        lines += [f"Measured sides: {a} and {b} SMs.", ""]
    for k in data["kernels"]:
        s = k["placement"]
        lines += [f"## {k['kernel']}", "", f"`{json.dumps(k['config'])}`", ""]
        lines.append(
            f"{s['groups']} work-groups, {s['resident']} resident at once, {s['sms_seen']} SMs "
            f"seen, the first launch {s['span_us']} µs from first start to last end; "
            f"ptxas (table kernel): {k['registers'] or '-'}."
        )
        lines.append("")
        for j, later in enumerate(s["later_launches"], start=2):
            lines.append(
                f"- launch {j} against the first: same SM {100 * later['same_sm']:.1f} %, "
                f"same side {100 * later['same_side']:.1f} %, side of the first wave's "
                f"number i mod W {100 * later['wave_side']:.1f} %"
            )
        if s["same_sm_one_wave_later"] is not None:
            lines.append(
                f"- in the first launch, work-group i on the SM of i - W: "
                f"{100 * s['same_sm_one_wave_later']:.1f} %"
            )
        waves = s["wave_side_by_wave"]
        shown = ", ".join(f"{100 * v:.0f}" for v in waves[:40]) + (", …" if len(waves) > 40 else "")
        lines += [f"- the first launch, wave by wave, on the first wave's side (%): {shown}", ""]
        lines += [*partition_probe.checks_and_times(k), ""]
    return "\n".join(lines)


def save(out: Path, data: Mapping[str, Any]) -> None:
    """``placement.json`` (without the records), ``placement.md``, and the records of
    every kernel's launches as ``records.npz`` (SM, start, end per work-group)."""
    kept = [{k: v for k, v in kern.items() if k != "records"} for kern in data["kernels"]]
    (out / "placement.json").write_text(json.dumps({**data, "kernels": kept}, indent=1) + "\n")
    (out / "placement.md").write_text(markdown(data))
    arrays = {
        f"k{i}_{kern['kernel']}_launch{j}": r
        for i, kern in enumerate(data["kernels"])
        for j, r in enumerate(kern["records"])
    }
    np.savez_compressed(out / "records.npz", **arrays)  # type: ignore[arg-type]


def main(argv: Sequence[str] | None = None) -> int:
    import xhalo_probe

    from gtune.commands._common import parse_config

    p = xhalo_probe.probe_parser(__doc__, rounds=7, reps=20)
    p.add_argument("--config", action="append", default=[], metavar="KERNEL:N=V,...")
    p.add_argument("--record", type=int, default=5, help="recorded launches (at least 2)")
    p.add_argument(
        "--loop",
        type=int,
        action="append",
        default=[],
        metavar="K",
        help="also time the blocks run K a work-group by N/K work-groups (K dividing N)",
    )
    p.add_argument(
        "--delay", type=int, default=0, metavar="D", help="also time a wait of D cycles first"
    )
    args = p.parse_args(argv)
    if args.record < 2:
        raise SystemExit("placement_probe: --record needs at least 2 launches")
    device, context, queue = xhalo_probe.open_device(args.device)
    nvidia = "NVIDIA" in device.platform.name.upper()
    data: dict[str, Any] = {"device": device.name, "size": args.size, "kernels": []}
    side: dict[int, int] = {}
    if nvidia:
        side, data["sides"], _, _ = partition_probe.measure_sides(context, queue, device)
        print(json.dumps({k: data["sides"][k] for k in ("sms", "side_counts")}), flush=True)
    args.out.mkdir(parents=True, exist_ok=True)
    for spec in args.config:
        name, _, rest = spec.partition(":")
        config = parse_config(rest) if rest else {}
        data["kernels"].append(run_kernel(context, queue, name, config, args, side, nvidia))
        save(args.out, data)
        print(markdown({**data, "kernels": data["kernels"][-1:]}), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())

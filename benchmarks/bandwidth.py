"""Bandwidth of tuned 3D stencils against an OpenCL copy kernel, per data-loading technique.

In one run, on one device: the bandwidth of a copy kernel (each array read once and
written once; its work-group size and vector width tuned exhaustively), then, for the
real 3D stencils (heat3d, box27, laplacian4) and a spread of the garvey104 3D kernels
(star and dense, radius 1-5), every data-loading technique of the description tuned
with a spec through ``gtune.tune(technique=...)`` under a small budget.
Each technique's winner is re-measured (all winners of a kernel in one interleaved
batch, by a fresh evaluator), and the copy kernel again at the end; the copy bandwidth
is the better of its two measurements. Bandwidth counts every array read once and
written once, as for the copy.

Writes into OUT: ``bandwidth.json`` (everything), ``bandwidth.csv`` (one row per
kernel and technique), ``bandwidth.png`` (fraction of copy bandwidth per kernel and
technique) and ``bandwidth.md`` (tables; the geometric mean over the real 3D stencils
with their best technique, against the 90% target).

    python3 benchmarks/bandwidth.py OUT [--size 512] [--device 0:0] [--quick]
        [--kernels heat3d box27 star_3d_xyz_r3 ...] [--budget 40] [--spec focused]

``--spec focused`` (the default) is the hybrid heuristic's grouping (a step for the
work-group tile, one for merging, one for the z-chunk) confined to sensible ranges so
that a small budget is spent where the winners are; ``--spec hybrid`` (or any shipped
spec or file) uses that spec as is. ``--quick``: fewer kernels, a smaller budget.
"""

from __future__ import annotations

import argparse
import csv
import json
import math
import os
import platform
import sys
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from gtune.api import tune
from gtune.budget import Budget
from gtune.description import load_kernel
from gtune.device import DeviceLimits
from gtune.kernel import TunableKernel
from gtune.measure import OpenCLEvaluator, Result, select_device
from gtune.stencils import StencilShape, generate
from gtune.tuning import TuningSession

ROOT = Path(__file__).resolve().parents[1]
REAL_3D = ("heat3d", "box27", "laplacian4")
GARVEY = tuple(
    [StencilShape("star", 3, "xyz", r) for r in (1, 2, 3, 4, 5)]
    + [StencilShape("dense", 3, "xyz", r) for r in (1, 2, 3)]
)
QUICK_GARVEY = ("star_3d_xyz_r1", "star_3d_xyz_r4", "dense_3d_xyz_r1")
TARGET = 0.90

COPY_CL = """\
/* Copy: every element read once and written once, VX floats per work-item. */
#ifndef VX
#define VX 1
#endif
#define CAT_(a, b) a##b
#define CAT(a, b) CAT_(a, b)
__kernel __attribute__((reqd_work_group_size(WX, 1, 1)))
void copy(__global const float *restrict src, __global float *restrict dst)
{
    const size_t i = get_global_id(0);
#if VX == 1
    dst[i] = src[i];
#else
    CAT(vstore, VX)(CAT(vload, VX)(i, src), i, dst);
#endif
}
"""

RIM_COPY_CL = """\
/* Copy that keeps each row's rim: every element read once, and written once except a
   row's first and last RIMX, which keep the output's contents, as an interior stencil
   of radius RIMX along x keeps them. A vector at a row's end stores its other lanes
   one by one from the vector loaded, as the stencil template stores them. */
#define RIMX {rim}
#ifndef VX
#define VX 1
#endif
#define CAT_(a, b) a##b
#define CAT(a, b) CAT_(a, b)
#define KEPT(l) (x + (l) < RIMX || x + (l) >= NX - RIMX)
#define LANE(l, value) if (!KEPT(l)) dst[i * VX + (l)] = (value);
__kernel __attribute__((reqd_work_group_size(WX, 1, 1)))
void copy(__global const float *restrict src, __global float *restrict dst)
{{
    const size_t i = get_global_id(0);
    const int x = (int)((i * VX) % NX);
#if VX == 1
    const float v = src[i];
    LANE(0, v)
#else
    const CAT(float, VX) v = CAT(vload, VX)(i, src);
    if (!KEPT(0) && !KEPT(VX - 1)) {{
        CAT(vstore, VX)(v, i, dst);
        return;
    }}
    LANE(0, v.s0) LANE(1, v.s1)
#if VX == 4
    LANE(2, v.s2) LANE(3, v.s3)
#endif
#endif
}}
"""

SMOKE_WORK_GROUPS = (256,)
"""The copy's work-group in a smoke run (``onestep.py --small``): its default; the
three vector widths are searched at it."""

COPY_YAML = """\
kernel: copy
source: copy.cl
doc: The bandwidth yardstick; the reference is the one-point stencil of weight 1.
problem: {NX: 64, NY: 64, NZ: 64}
arguments:
  - {name: src, role: input, shape: [NZ, NY, NX], init: random}
  - {name: dst, role: output, shape: [NZ, NY, NX], init: zeros}
parameters:
  WX: {pow2: [32, 1024], default: 256}
  VX: {values: [1, 2, 4], default: 1}
constraints:
  - (NX*NY*NZ / VX) % WX == 0
launch:
  global: [NX*NY*NZ / VX]
  local: [WX]
reference:
  python: gtune.stencils.reference:weighted_sum
  args: {input: src, output: dst, offsets: [[0, 0, 0]], weights: [1.0]}
"""

# The hybrid heuristic's groups (seed 001 section 6.2.3) within the ranges where the
# winners of bandwidth-bound 3D stencils lie on GPUs, so a small budget suffices: the
# z-chunk first (streaming only; a single point for the other techniques), the
# work-group tile, merging, then the z-chunk again around the new tile.
FOCUSED_SPEC = """\
name: bandwidth-focused
doc: Hybrid grouping (tile, merging, z-chunk) confined to coalesced, mid-sized tiles.
repeat: 1
optional: {WY: 1, WZ: 1, BX: 1, CX: 1, CY: 1, CZ: 1, VX: 1, ZC: 1}
start: {WX: 64, WY: 4, WZ: 1, BX: 1, CX: 1, CY: 1, CZ: 1}
where: ["WX >= 32", "WX*WY*WZ >= 64", "WX*WY*WZ <= 512", "CX <= 2", "CZ <= 8"]
steps:
  - name: z-chunk
    tune: {ZC: "8:64:*2"}
  - name: tile
    tune: {WX: "32:256:*2", WY: "1:8:*2", WZ: "1:4:*2"}
  - name: merging
    tune: {BX: "1:4:*2", VX: "*", CX: "1:2:*2", CY: "1:4:*2", CZ: "1:8:*2"}
  - name: z-chunk around the tile
    tune: {ZC: "4:128:*2"}
"""


def log(*parts: object) -> None:
    print(*parts, flush=True)


class Capture:
    """Evaluator factory for a tuning session that keeps the real evaluator, so the
    winners can be re-measured by it (past the session's result store)."""

    def __init__(self, runs: int) -> None:
        self.runs = runs
        self.inner: OpenCLEvaluator | None = None

    def __call__(self, kernel: TunableKernel, device: DeviceLimits) -> OpenCLEvaluator:
        self.inner = OpenCLEvaluator(kernel, device, runs=self.runs)
        return self.inner


def copy_kernel(
    work: Path, sizes: Mapping[str, int], work_groups: Sequence[int] | None = None, rim: int = 0
) -> TunableKernel:
    """The copy kernel (written into ``work``) at ``sizes`` (2D: NZ = 1). Its space is
    every power-of-two work-group from 32 to 1024 with each vector width; with
    ``work_groups`` (a smoke test's: ``SMOKE_WORK_GROUPS``), only those work-groups,
    each vector width still searched (every configuration is a kernel build). With
    ``rim``, the copy that keeps each row's first and last ``rim`` elements
    (``RIM_COPY_CL``: the writes of an interior stencil of that radius along x), its
    reference the identity with those elements left as the output began (zeros)."""
    work.mkdir(parents=True, exist_ok=True)
    stem = f"copy_rim{rim}" if rim else "copy"
    (work / f"{stem}.cl").write_text(RIM_COPY_CL.format(rim=rim) if rim else COPY_CL)
    text = COPY_YAML.replace("source: copy.cl", f"source: {stem}.cl")
    if rim:
        offsets = f"offsets: [[{-rim}, 0, 0], [0, 0, 0], [{rim}, 0, 0]], weights: [0.0, 1.0, 0.0]"
        text = text.replace("offsets: [[0, 0, 0]], weights: [1.0]", offsets)
    if work_groups:
        wx = f"  WX: {{values: {list(work_groups)}, default: {work_groups[0]}}}\n"
        text = text.replace("  WX: {pow2: [32, 1024], default: 256}\n", wx)
    (work / f"{stem}.yaml").write_text(text)
    full = {"NX": sizes["NX"], "NY": sizes["NY"], "NZ": sizes.get("NZ", 1)}
    return load_kernel(work / f"{stem}.yaml", sizes=full)


def real_kernel(name: str, sizes: Mapping[str, int]) -> TunableKernel:
    """A real stencil of stencils/ by name (its description, as ``gtune run
    stencils/NAME.cl`` reads it), or a NAME.stencil.yaml definition by path."""
    path = Path(name) if name.endswith(".stencil.yaml") else ROOT / "stencils" / f"{name}.yaml"
    return load_kernel(path, sizes=sizes)


def copy_bandwidth(
    kernel: TunableKernel, device: DeviceLimits, runs: int, store: str | None = None
) -> dict[str, Any]:
    """The copy kernel tuned exhaustively (work-group, vector width 1, 2 or 4)."""
    report = tune(
        kernel, device=device, strategy="exhaustive", runs=runs, confirm=None, store=store
    )
    best = report.best_result
    per_vx: dict[int, tuple[float, dict[str, int]]] = {}  # the best of each vector width
    for run in report.runs:
        for e in run.outcome.trace if run.outcome is not None else []:
            vx = int(e.config.get("VX", 1))
            if e.result.ok and (vx not in per_vx or e.result.median_s < per_vx[vx][0]):
                per_vx[vx] = (e.result.median_s, dict(e.config))
    return {
        "config": report.best_config,
        "time_s": best.median_s if best is not None else None,
        "gbs": report.gbs(),
        "evaluations": report.evaluations,
        "wall_s": report.wall_s,
        "by_vx": {
            vx: {"config": cfg, "time_s": t, "gbs": report.gbs(t)}
            for vx, (t, cfg) in sorted(per_vx.items())
        },
    }


def tune_stencil(
    kernel: TunableKernel,
    device: DeviceLimits,
    spec: str,
    budget: int,
    runs: int,
    techniques: Sequence[str] | None,
) -> dict[str, Any]:
    """Every technique tuned with one session; winners re-measured together."""
    started = time.monotonic()
    capture = Capture(runs)
    out: dict[str, Any] = {"techniques": {}, "bytes_moved": kernel.bytes_moved()}
    winners: dict[str, dict[str, int]] = {}
    with TuningSession(kernel, device, runs=runs, evaluator_factory=capture) as session:
        out["space_size"] = session.space.size()
        for name in techniques or list(kernel.techniques):
            if name not in kernel.techniques:
                continue
            t0 = time.monotonic()
            report = tune(
                kernel,
                device=device,
                spec=spec,
                technique=name,
                budget=Budget(evaluations=budget),
                session=session,
                confirm=None,
            )
            best = report.best_result
            entry: dict[str, Any] = {
                "config": report.best_config,
                "tuned_s": best.median_s if best is not None else None,
                "evaluations": report.evaluations,
                "space_size": report.runs[0].space_size if report.runs else 0,
                "wall_s": time.monotonic() - t0,
                "notes": list(report.notes),
            }
            out["techniques"][name] = entry
            if report.best_config is not None:
                winners[name] = dict(report.best_config)
            shown = f"{entry['tuned_s'] * 1e3:.3f} ms" if entry["tuned_s"] else "nothing ran"
            log(f"    {name:7s} {shown}  ({report.evaluations} configs, {entry['wall_s']:.1f} s)")
        if winners and capture.inner is not None:
            names = list(winners)
            results: list[Result] = list(capture.inner.evaluate_batch([winners[n] for n in names]))
            for n, r in zip(names, results, strict=True):
                entry = out["techniques"][n]
                entry["remeasured_s"] = r.median_s if r.ok else None
                entry["remeasured_status"] = r.status.value
                entry["times_s"] = list(r.times_s)
    out["wall_s"] = time.monotonic() - started
    return out


def alternate(
    device: DeviceLimits, runs: Sequence[tuple[str, TunableKernel, Mapping[str, int]]], rounds: int
) -> dict[str, float]:
    """Median over ``rounds`` of each configuration's median, measured one after
    another in each round (drift hits all alike); outputs are not checked again."""
    import statistics
    from dataclasses import replace

    from gtune.exceptions import GtuneError
    from gtune.kernel import Reference

    made: dict[int, OpenCLEvaluator] = {}  # one evaluator per kernel
    evaluators = []
    for name, k, cfg in runs:
        if id(k) not in made:
            quiet = replace(k, reference=Reference("none"))
            made[id(k)] = OpenCLEvaluator(quiet, device, verify=False, compile_workers=0)
        evaluators.append((name, made[id(k)], dict(cfg)))
    times: dict[str, list[float]] = {name: [] for name, _, _ in runs}
    try:
        for _ in range(rounds):
            for name, ev, cfg in evaluators:
                r = ev.evaluate(cfg)
                if not r.ok:
                    raise GtuneError(f"{name} failed at {cfg}: {r.status.value} {r.message[:200]}")
                times[name].append(r.median_s)
    finally:
        for ev in made.values():
            ev.close()
    return {name: statistics.median(ts) for name, ts in times.items()}


def fraction_table(
    results: Mapping[str, Any], copy_gbs: float, techniques: Sequence[str]
) -> list[dict[str, Any]]:
    rows = []
    for kname, k in results.items():
        for t in techniques:
            e = k["techniques"].get(t)
            if e is None:
                continue
            s = e.get("remeasured_s") or e.get("tuned_s")
            gbs = k["bytes_moved"] / s / 1e9 if s else None
            e["gbs"] = gbs
            e["fraction_of_copy"] = gbs / copy_gbs if gbs and copy_gbs else None
            rows.append(
                {
                    "kernel": kname,
                    "technique": t,
                    "tuned_s": e.get("tuned_s"),
                    "remeasured_s": e.get("remeasured_s"),
                    "gbs": gbs,
                    "fraction_of_copy": e["fraction_of_copy"],
                    "evaluations": e.get("evaluations"),
                    "config": json.dumps(e.get("config"), sort_keys=False),
                }
            )
    return rows


def geomean(values: Sequence[float]) -> float | None:
    vals = [v for v in values if v and v > 0]
    return math.exp(sum(math.log(v) for v in vals) / len(vals)) if vals else None


def plot(path: Path, results: Mapping[str, Any], techniques: Sequence[str], title: str) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    kernels = list(results)
    width = 0.8 / max(1, len(techniques))
    fig, ax = plt.subplots(figsize=(max(8.0, 1.1 * len(kernels) + 2), 4.8))
    for i, t in enumerate(techniques):
        ys = [
            (results[k]["techniques"].get(t) or {}).get("fraction_of_copy") or 0.0 for k in kernels
        ]
        xs = [j + (i - (len(techniques) - 1) / 2) * width for j in range(len(kernels))]
        ax.bar(xs, ys, width, label=t)
    ax.axhline(TARGET, color="black", linestyle="--", linewidth=1, label=f"{TARGET:.0%} target")
    ax.set_xticks(range(len(kernels)))
    ax.set_xticklabels(kernels, rotation=30, ha="right")
    ax.set_ylabel("fraction of copy bandwidth")
    ax.set_title(title)
    ax.legend(ncol=min(6, len(techniques) + 1), fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=130)
    plt.close(fig)


def summary(data: Mapping[str, Any], techniques: Sequence[str]) -> str:
    results = data["kernels"]
    copy = data["copy"]
    copies = ", ".join(f"{c['gbs']:.0f}" for c in copy if c.get("gbs"))
    lines = [
        "# Tuned 3D stencils against copy bandwidth",
        "",
        f"Device: {data['device']}; size {data['size']}³ (float32; a definition in its "
        f"own dtype); spec `{data['spec']}`, "
        f"budget {data['budget']} configurations per technique; wall time "
        f"{data['wall_s']:.0f} s.",
        "",
        f"Copy kernel: {data['copy_gbs']:.0f} GB/s (best of {copies} GB/s, measured first "
        f"and last; configuration {copy[0]['config']}).",
        "",
        "Fraction of copy bandwidth of each technique's re-measured winner (each array read "
        "once and written once):",
        "",
        "| kernel | " + " | ".join(techniques) + " | best |",
        "|---|" + "---:|" * (len(techniques) + 1),
    ]
    for kname, k in results.items():
        cells = []
        best_t, best_f = None, 0.0
        for t in techniques:
            f = (k["techniques"].get(t) or {}).get("fraction_of_copy")
            cells.append(f"{f:.0%}" if f else "-")
            if f and f > best_f:
                best_t, best_f = t, f
        k["best_technique"], k["best_fraction"] = best_t, best_f or None
        lines.append(f"| {kname} | " + " | ".join(cells) + f" | {best_f:.0%} ({best_t}) |")
    real = [results[n]["best_fraction"] for n in REAL_3D if n in results]
    g = geomean([f for f in real if f])
    lines += [""]
    if g is not None:
        verdict = "meets" if g >= TARGET else "misses"
        lines.append(
            f"**Real 3D stencils ({', '.join(n for n in REAL_3D if n in results)}), best "
            f"technique each: geometric mean {g:.1%} of copy bandwidth — {verdict} the "
            f"{TARGET:.0%} target.**"
        )
    per_t = []
    for t in techniques:
        gt = geomean(
            [
                (results[n]["techniques"].get(t) or {}).get("fraction_of_copy") or 0.0
                for n in REAL_3D
                if n in results
            ]
        )
        per_t.append(f"{t} {gt:.0%}" if gt else f"{t} -")
    lines += ["", "Geometric mean over the real 3D stencils per technique: " + ", ".join(per_t)]
    lines += ["", "Winning configurations:", ""]
    for kname, k in results.items():
        bt = k.get("best_technique")
        if bt:
            lines.append(f"- {kname} ({bt}): `{k['techniques'][bt]['config']}`")
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("outdir", type=Path)
    parser.add_argument("--size", type=int, default=512, help="cube side (default 512)")
    parser.add_argument("--device", help="P:D, identity or name (default: the first GPU)")
    parser.add_argument(
        "--kernels",
        nargs="+",
        help="real stencils and garvey104 3D kernels by name (default: heat3d box27 "
        "laplacian4, star r1-r5, dense r1-r3), or paths of 3D NAME.stencil.yaml definitions",
    )
    parser.add_argument("--techniques", nargs="+", help="default: every technique")
    parser.add_argument("--budget", type=int, help="configurations per technique (40)")
    parser.add_argument("--spec", default="focused", help="focused (default), or a spec")
    parser.add_argument("--runs", type=int, default=5, help="timed runs per configuration")
    parser.add_argument("--quick", action="store_true", help="fewer kernels, budget 12")
    args = parser.parse_args(argv)

    started = time.monotonic()
    out: Path = args.outdir
    work = out / "kernels"
    work.mkdir(parents=True, exist_ok=True)
    budget = args.budget or (12 if args.quick else 40)
    n = args.size
    sizes = {"NX": n, "NY": n, "NZ": n}
    spec = args.spec
    if spec == "focused":
        spec_path = out / "bandwidth-focused.yaml"
        spec_path.write_text(FOCUSED_SPEC)
        spec = str(spec_path)

    garvey_by_name = {s.name: s for s in GARVEY}
    wanted = args.kernels or (
        list(REAL_3D) + (list(QUICK_GARVEY) if args.quick else [s.name for s in GARVEY])
    )
    kernels: dict[str, TunableKernel] = {}
    shapes = []
    for name in wanted:
        if name in REAL_3D or name.endswith(".stencil.yaml"):
            continue
        shape = garvey_by_name.get(name)
        if shape is None:
            try:
                pattern, dims, orient, r = name.split("_")
                shape = StencilShape(pattern, int(dims[0]), orient, int(r[1:]))
            except ValueError:
                parser.error(f"unknown kernel {name!r}: a real 3D stencil or e.g. star_3d_xyz_r2")
        shapes.append(shape)
    generated = (
        {g.stencil.name: g for g in generate(shapes, work, size=(n, n, n))} if shapes else {}
    )
    for name in wanted:
        if name in REAL_3D:
            kernels[name] = real_kernel(name, sizes)
        elif name.endswith(".stencil.yaml"):  # a 3D stencil definition, by path
            kernels[Path(name).name.removesuffix(".yaml")] = real_kernel(name, sizes)
        else:
            kernels[name] = load_kernel(generated[name].description)

    device = select_device(args.device)
    log(f"device: {device.name}; size {n}^3; spec {spec}; budget {budget} per technique")
    copier = copy_kernel(work, sizes)
    copies = [copy_bandwidth(copier, device, args.runs)]
    log(f"copy: {copies[0]['gbs']:.1f} GB/s {copies[0]['config']}")

    results: dict[str, Any] = {}
    techniques: list[str] = []
    for name, kernel in kernels.items():
        log(f"{name}:")
        results[name] = tune_stencil(kernel, device, spec, budget, args.runs, args.techniques)
        for t in results[name]["techniques"]:
            if t not in techniques:
                techniques.append(t)
    copies.append(copy_bandwidth(copier, device, args.runs))
    log(f"copy again: {copies[1]['gbs']:.1f} GB/s {copies[1]['config']}")
    copy_gbs = max(c["gbs"] or 0.0 for c in copies)
    rows = fraction_table(results, copy_gbs, techniques)

    data: dict[str, Any] = {
        "device": device.name,
        "device_identity": device.identity,
        "driver": device.driver_version,
        "size": n,
        "spec": args.spec,
        "budget": budget,
        "runs": args.runs,
        "host": platform.node(),
        "cpus": os.cpu_count(),
        "copy": copies,
        "copy_gbs": copy_gbs,
        "techniques": techniques,
        "kernels": results,
    }
    data["wall_s"] = time.monotonic() - started
    md = summary(data, techniques)  # also fills best_technique / best_fraction
    (out / "bandwidth.md").write_text(md)
    (out / "bandwidth.json").write_text(json.dumps(data, indent=1, default=str))
    with open(out / "bandwidth.csv", "w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=list(rows[0]) if rows else ["kernel"])
        writer.writeheader()
        writer.writerows(rows)
    plot(
        out / "bandwidth.png",
        results,
        techniques,
        f"{device.name}, {n}³: tuned winners as a fraction of copy bandwidth",
    )
    log(md)
    log(f"wall time {data['wall_s']:.0f} s; results in {out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

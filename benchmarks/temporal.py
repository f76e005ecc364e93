"""One-step and multi-step (temporal blocking) stencils against an OpenCL copy kernel.

In one run, on one device: the copy kernel's bandwidth (as in benchmarks/bandwidth.py),
then for each stencil definition (default: the real heat3d at N³ and jacobi2d at M²):

- **one step**: the definition as written, every one-step data-loading technique tuned
  with the focused spec of benchmarks/bandwidth.py;
- **multi-step**: the same definition with ``steps: S``, temporal blocking (TB time
  steps per launch, S/TB launches, buffers swapped between launches; 2D: streaming
  along y (technique ``temporal``) and merged tiles (``temporal-tile``), 3D: streaming
  along z with TB time levels, merged plane tiles (``temporal``), and for z-star
  stencils the same with the z-neighbours in registers (``temporal-zreg``)) tuned with the
  shipped ``temporal`` spec (what ``gtune run`` searches them with: TB jointly with
  the block, then the work-group, the chunk and TB again around the block found),
  verified against the reference's loop of S single steps.

Times of multi-step kernels are per step; effective bandwidth is the bytes of one step
(each array read once, written once) over the time per step, so a multi-step kernel
may exceed the copy kernel. The copy is measured again at the end; the better of its
two measurements is the yardstick.

Writes into OUT: ``temporal.json`` (everything), ``temporal.csv`` (one row per kernel
and technique), ``temporal.md`` (tables: fraction of copy per kernel, one step and
multi-step, against the multi-step target :data:`TARGET_MULTI`) and ``temporal.png``, after every
kernel (marked partial until the last), so a run cut short keeps what it measured.
``suite:NAME`` names a kernel of the garvey104 suite (``suite:star_3d_xyz_r1``).

    python3 benchmarks/temporal.py OUT [--size 512] [--size2d 8192] [--steps 8]
        [--device 0:0] [--kernels heat3d jacobi2d path/x.stencil.yaml suite:NAME ...]
        [--budget 40] [--temporal-budget 150] [--quick]

``--budget``: configurations per one-step technique; ``--temporal-budget``: per
temporal technique (the spec's two rounds end within it). ``--quick``: a budget of 12
configurations per technique (the temporal ones too) and only the one-step techniques
the predictor usually picks (global, vec, stream).
"""

from __future__ import annotations

import argparse
import csv
import dataclasses
import json
import os
import platform
import sys
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

import bandwidth as bw

from gtune.exceptions import GtuneError, InputError
from gtune.kernel import TunableKernel
from gtune.measure import select_device
from gtune.stencils.definition import StencilDefinition, load_definition
from gtune.stencils.render import definition_kernel_of

ROOT = Path(__file__).resolve().parents[1]
DEFAULT_KERNELS = ("heat3d", "jacobi2d")
TARGET_MULTI = 1.7
"""The multi-step target: effective bandwidth per step over the copy's, for heat3d 512³
and jacobi2d 8192² at 8 steps (1.5 on the H100, 1.7 since the H200, whose copy runs 40 %
faster)."""

TEMPORAL_SPEC = "temporal"
"""The shipped spec (specs/temporal.yaml) that `gtune run` searches the temporal
techniques with by default: TB tuned jointly with the block first."""
TEMPORAL_BUDGET = 150  # configurations per temporal technique


def definition(name: str) -> StencilDefinition:
    """A real stencil by name, a ``NAME.stencil.yaml`` path, or ``suite:NAME``: a kernel
    of the garvey104 suite as ``gtune train`` renders it (its weights from seed 0)."""
    if name.startswith("suite:"):
        from gtune.stencils.generate import suite, synthetic

        shapes = {s.name: s for s in suite("garvey104")}
        wanted = name.removeprefix("suite:")
        if wanted not in shapes:
            raise InputError(f"no suite kernel {wanted!r} in garvey104", source="--kernels")
        return synthetic(shapes[wanted]).definition
    path = (
        Path(name) if name.endswith(".stencil.yaml") else ROOT / "stencils" / f"{name}.stencil.yaml"
    )
    return load_definition(path)


def entry_rows(
    kname: str, mode: str, result: Mapping[str, Any], copy_gbs: float
) -> list[dict[str, Any]]:
    rows = []
    for tech, e in result["techniques"].items():
        s = e.get("remeasured_s") or e.get("tuned_s")
        gbs = result["bytes_moved"] / s / 1e9 if s else None
        e["gbs"] = gbs
        e["fraction_of_copy"] = gbs / copy_gbs if gbs and copy_gbs else None
        rows.append(
            {
                "kernel": kname,
                "mode": mode,
                "technique": tech,
                "time_per_step_s": s,
                "gbs": gbs,
                "fraction_of_copy": e["fraction_of_copy"],
                "status": e.get("remeasured_status", ""),
                "evaluations": e.get("evaluations"),
                "config": json.dumps(e.get("config")),
            }
        )
    return rows


def best_of(result: Mapping[str, Any]) -> tuple[str | None, float | None]:
    best: tuple[str | None, float | None] = (None, None)
    for tech, e in result["techniques"].items():
        f = e.get("fraction_of_copy")
        if f and (best[1] is None or f > best[1]):
            best = (tech, f)
    return best


def plot(path: Path, data: Mapping[str, Any]) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    names = list(data["kernels"])
    one = [best_of(data["kernels"][k]["one_step"])[1] or 0.0 for k in names]
    multi = [best_of(data["kernels"][k]["multi_step"])[1] or 0.0 for k in names]
    fig, ax = plt.subplots(figsize=(max(6.0, 1.6 * len(names) + 2), 4.5))
    xs = range(len(names))
    ax.bar([x - 0.2 for x in xs], one, 0.4, label="one step (best technique)")
    ax.bar([x + 0.2 for x in xs], multi, 0.4, label=f"{data['steps']} steps, temporal")
    ax.axhline(1.0, color="black", linewidth=1, label="copy")
    ax.axhline(
        TARGET_MULTI, color="black", linestyle="--", linewidth=1, label=f"{TARGET_MULTI}x target"
    )
    ax.set_xticks(list(xs))
    ax.set_xticklabels(names)
    ax.set_ylabel("effective bandwidth / copy bandwidth")
    ax.set_title(f"{data['device']}: one step and temporal blocking against copy")
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=130)
    plt.close(fig)


def shape(cfg: Mapping[str, int]) -> str:
    """A temporal configuration in brief: TB, the block (work-group times merging), the
    streaming chunk, and temporal tiles' rows per work-item. (With TB > 1, BX is 1 but
    for temporal-zreg's vectors, where each work-item's block point is BX wide.)"""
    wide = cfg.get("BX", 1) if cfg.get("TB", 1) > 1 else 1
    block = [cfg.get("WX", 1) * wide * cfg.get("CX", 1), cfg.get("WY", 1) * cfg.get("CY", 1)]
    if "WZ" in cfg and not cfg.get("STREAM"):
        block.append(cfg["WZ"] * cfg.get("CZ", 1))
    text = f"TB={cfg.get('TB')} block {'x'.join(str(v) for v in block)}"
    if cfg.get("STREAM"):
        text += f" ZC={cfg.get('ZC')}"
    if cfg.get("TR", 1) > 1:  # temporal tiles' rows per work-item
        text += f" TR={cfg['TR']}"
    if wide > 1:
        text += f" VX={cfg.get('VX')}"
    return text + f" wg {cfg.get('WX')}x{cfg.get('WY')}"


def summary(data: Mapping[str, Any]) -> str:
    lines = [
        f"# Temporal blocking against copy on {data['device']}",
        "",
        f"Copy: {data['copy_gbs']:.1f} GB/s (the better of two measurements, "
        f"{data['size']}³ floats). Multi-step: {data['steps']} steps, times per step, "
        "effective bandwidth = bytes of one step / time per step.",
        "",
        "| kernel | size | one step: best technique | of copy | multi-step: config | of copy | "
        "speedup per step |",
        "|---|---|---|---|---|---|---|",
    ]
    for name, k in data["kernels"].items():
        t1, f1 = best_of(k["one_step"])
        tm, fm = best_of(k["multi_step"])
        cfg = (k["multi_step"]["techniques"].get(tm or "", {}) or {}).get("config")
        tb = shape(cfg) if cfg else "-"
        speed = f"{fm / f1:.2f}x" if f1 and fm else "-"
        lines.append(
            f"| {name} | {k['size']} | {t1 or '-'} | {f'{f1:.1%}' if f1 else '-'} | "
            f"{tm or '-'} {tb} | {f'{fm:.1%}' if fm else '-'} | {speed} |"
        )
    lines += ["", f"Target: multi-step ≥ {TARGET_MULTI}x copy for heat3d and jacobi2d."]
    if data.get("partial"):
        lines += [
            "",
            "**Partial:** written after the kernels above; the run had more to measure "
            "and the copy's second measurement (at the end) is missing.",
        ]
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("outdir", type=Path)
    parser.add_argument("--size", type=int, default=512, help="3D cube side (default 512)")
    parser.add_argument("--size2d", type=int, default=8192, help="2D square side (default 8192)")
    parser.add_argument("--steps", type=int, default=8, help="time steps (default 8)")
    parser.add_argument("--device", help="P:D, identity or name (default: the first GPU)")
    parser.add_argument(
        "--kernels",
        nargs="+",
        help="real stencils by name, NAME.stencil.yaml paths or suite:NAME (garvey104)",
    )
    parser.add_argument("--budget", type=int, help="configurations per technique (40)")
    parser.add_argument(
        "--temporal-budget",
        type=int,
        help=f"configurations per temporal technique ({TEMPORAL_BUDGET})",
    )
    parser.add_argument("--runs", type=int, default=5, help="timed runs per configuration")
    parser.add_argument("--quick", action="store_true", help="budget 12, fewer techniques")
    args = parser.parse_args(argv)
    if args.steps < 2:
        parser.error("--steps must be at least 2")

    started = time.monotonic()
    out: Path = args.outdir
    work = out / "kernels"
    work.mkdir(parents=True, exist_ok=True)
    budget = args.budget or (12 if args.quick else 40)
    focused = out / "bandwidth-focused.yaml"
    focused.write_text(bw.FOCUSED_SPEC)
    multi_budget = args.temporal_budget or (budget if args.quick else TEMPORAL_BUDGET)
    one_step_techniques = ["global", "vec", "stream"] if args.quick else None

    names = list(args.kernels or DEFAULT_KERNELS)
    try:  # every name known before anything is measured
        definitions = [definition(name) for name in names]
    except GtuneError as e:
        parser.error(str(e))
    device = select_device(args.device)
    n, m = args.size, args.size2d
    log = bw.log
    log(
        f"device: {device.name}; {n}³ / {m}²; {args.steps} steps; budget {budget}, "
        f"temporal {multi_budget} ({TEMPORAL_SPEC} spec)"
    )
    copy_kernel = bw.copy_kernel(work, {"NX": n, "NY": n, "NZ": n})
    copies = [bw.copy_bandwidth(copy_kernel, device, args.runs)]
    log(f"copy: {copies[0]['gbs']:.1f} GB/s {copies[0]['config']}")

    base: dict[str, Any] = {
        "device": device.name,
        "device_identity": device.identity,
        "driver": device.driver_version,
        "size": n,
        "size2d": m,
        "steps": args.steps,
        "budget": budget,
        "temporal_budget": multi_budget,
        "temporal_spec": TEMPORAL_SPEC,
        "runs": args.runs,
        "host": platform.node(),
        "cpus": os.cpu_count(),
    }
    results: dict[str, Any] = {}
    for d in definitions:
        sizes = {"NX": n, "NY": n, "NZ": n} if d.dims == 3 else {"NX": m, "NY": m}
        one: TunableKernel = definition_kernel_of(d, sizes)
        multi: TunableKernel = definition_kernel_of(dataclasses.replace(d, steps=args.steps), sizes)
        log(f"{d.name} ({'x'.join(str(v) for v in sizes.values())}), one step:")
        r1 = bw.tune_stencil(one, device, str(focused), budget, args.runs, one_step_techniques)
        log(f"{d.name}, {args.steps} steps:")
        # 3D: streaming along z (temporal, and temporal-zreg, the z-neighbours in
        # registers, for z-star stencils); 2D: streaming along y and tiles (temporal-tile)
        multi_techniques = (
            [t for t in ("temporal", "temporal-zreg") if t in multi.techniques]
            if d.dims == 3
            else ["temporal", "temporal-tile"]
        )
        rm = bw.tune_stencil(
            multi, device, TEMPORAL_SPEC, multi_budget, args.runs, multi_techniques
        )
        results[d.name] = {
            "size": "x".join(str(v) for v in sizes.values()),
            "one_step": r1,
            "multi_step": rm,
        }
        if len(results) < len(definitions):  # what is measured survives a cut-short run
            write(out, base, results, copies, time.monotonic() - started, partial=True)
    copies.append(bw.copy_bandwidth(copy_kernel, device, args.runs))
    log(f"copy again: {copies[1]['gbs']:.1f} GB/s {copies[1]['config']}")
    md = write(out, base, results, copies, time.monotonic() - started, partial=False)
    log(md)
    log(f"wall time {time.monotonic() - started:.0f} s; results in {out}")
    return 0


def write(
    out: Path,
    base: Mapping[str, Any],
    results: Mapping[str, Any],
    copies: list[dict[str, Any]],
    wall_s: float,
    *,
    partial: bool,
) -> str:
    """temporal.json, .csv, .md and .png for the kernels measured so far, against the best
    copy measurement so far; ``partial``: more kernels were to follow (the copy's second
    measurement, at the end, not yet made). Returns the markdown."""
    copy_gbs = max(c["gbs"] or 0.0 for c in copies)
    rows: list[dict[str, Any]] = []
    for name, k in results.items():
        rows += entry_rows(name, "one_step", k["one_step"], copy_gbs)
        rows += entry_rows(name, "multi_step", k["multi_step"], copy_gbs)
    data: dict[str, Any] = {
        **base,
        "copy": copies,
        "copy_gbs": copy_gbs,
        "kernels": results,
        "partial": partial,
        "wall_s": wall_s,
    }
    md = summary(data)
    (out / "temporal.md").write_text(md)
    # whole or not at all: a reader (or a kill) never sees half a file
    tmp = out / "temporal.json.tmp"
    tmp.write_text(json.dumps(data, indent=1, default=str))
    tmp.replace(out / "temporal.json")
    with open(out / "temporal.csv", "w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=list(rows[0]) if rows else ["kernel"])
        writer.writeheader()
        writer.writerows(rows)
    plot(out / "temporal.png", data)
    return md


if __name__ == "__main__":
    raise SystemExit(main())

"""Split real stencils across a CPU and a GPU at once (seed 002 §2.2, Table 3, Figs 5-7).

For each stencil and size: each device's best configuration (from a result store kept
in OUTDIR, else a short hybrid search of ``--budget`` evaluations), its time alone,
the optimal and adjusted split factors, Algorithm 1, the measured split (kernels and
end to end) verified against the fastest device alone, and a sweep of split factors
around the computed one. Stencils: heat3d (memory-bound) and a compute-heavier kernel
of the paper's suite (a 3D star of radius 4 at arithmetic intensity 2).

Writes into OUTDIR: ``split-<kernel>-<size>.json`` (every report column),
``split-<kernel>-<size>.png`` (the sweep), ``split.csv`` (one row per split) and
``split.md`` (a summary table).

    python3 benchmarks/split.py OUTDIR                     # GPU host: cpu,gpu at 256^3, 512^3
    python3 benchmarks/split.py OUTDIR --devices '0:0@0/2,0:0@1/2' --sizes 32 --budget 4
"""

from __future__ import annotations

import argparse
import csv
import json
import logging
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from gtune.description import load_kernel
from gtune.kernel import TunableKernel
from gtune.split import SplitReport, split_kernel
from gtune.stencils import StencilShape, generate
from gtune.stencils.generate import garvey104
from gtune.store import SQLiteStore

ROOT = Path(__file__).resolve().parents[1]
HEAVY = StencilShape("star", 3, "xyz", 4)


def heavy_kernel(directory: Path, size: int) -> Path:
    """The compute-heavier kernel: a garvey104 3D star of radius 4, intensity 2."""
    shape = next((s for s in garvey104() if s == HEAVY), HEAVY)
    made = generate([shape], directory, intensity=2, size=(size, size, size))
    return made[0].source


def row(report: SplitReport, wall_s: float) -> dict[str, Any]:
    d = report.to_dict()
    out: dict[str, Any] = {
        "kernel": Path(report.kernel_label).stem,
        "size": "x".join(str(v) for v in report.sizes.values()),
        "dim": report.dim,
        "halo": report.halo,
        "balance": report.balance,
    }
    for i, dev in enumerate(d["devices"]):
        p = f"dev{i}_"
        out[p + "name"] = dev["label"]
        out[p + "config"] = ",".join(f"{k}={v}" for k, v in dev["config"].items())
        out[p + "config_source"] = dev["config_source"]
        out[p + "tuned_s"] = dev["tuned_s"]
        out[p + "block"] = dev["block"]
        out[p + "alone_kernel_s"] = dev["alone_kernel_s"]
        out[p + "alone_end_to_end_s"] = dev["alone_end_to_end_s"]
        out[p + "optimal"] = dev["optimal"]
        out[p + "adjusted"] = dev["adjusted"]
        out[p + "split_kernel_s"] = dev["split_kernel_s"]
    for key in (
        "theoretical_s",
        "theoretical_adjusted_s",
        "ran_split",
        "split_kernel_s",
        "split_end_to_end_s",
        "overhead_s",
        "overhead_end_to_end_s",
        "speedup_kernel",
        "speedup_end_to_end",
        "verified",
        "recommendation",
    ):
        out[key] = d[key]
    out["decision"] = d["decision"]["reason"]
    out["predicted_end_to_end_s"] = d["decision"]["predicted_s"]
    out["overlap"] = d["partition"]["overlap"]
    out["residue"] = d["partition"]["residue"]
    out["wall_s"] = wall_s
    return out


def ms(x: Any) -> str:
    return f"{x * 1e3:.3f}" if isinstance(x, int | float) else "-"


def main() -> int:
    logging.basicConfig(format="   %(message)s")  # the splitter's stages, as it goes
    logging.getLogger("gtune.split").setLevel(logging.INFO)
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("out", type=Path)
    ap.add_argument("--devices", default="cpu,gpu", help="devices, CPU first (default cpu,gpu)")
    ap.add_argument("--sizes", default="256,512", help="cube edges (default 256,512)")
    ap.add_argument("--budget", type=int, default=30, help="tuning evaluations per device")
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--sweep-points", type=int, default=9)
    ap.add_argument("--kernels", default="heat3d,heavy", help="heat3d and/or heavy")
    args = ap.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    store = SQLiteStore(args.out / "split-store.db")
    rows = []
    try:
        for size in [int(s) for s in args.sizes.split(",")]:
            for name in args.kernels.split(","):
                if name == "heat3d":
                    kernel: TunableKernel = load_kernel(
                        ROOT / "stencils" / "heat3d.cl", {"NX": size, "NY": size, "NZ": size}
                    )
                else:
                    kernel = load_kernel(heavy_kernel(args.out / f"kernels-{size}", size))
                stem = Path(kernel.label).stem
                tag = f"{stem}-{size}"
                print(f"== {tag}", file=sys.stderr, flush=True)
                started = time.monotonic()
                report = split_kernel(
                    kernel,
                    args.devices,
                    source="auto",
                    store=store,
                    budget=args.budget,
                    runs=args.runs,
                    force=True,
                    sweep=True,
                    sweep_points=args.sweep_points,
                )
                wall = time.monotonic() - started
                (args.out / f"split-{tag}.json").write_text(json.dumps(report.to_dict(), indent=2))
                report.plot_sweep(args.out / f"split-{tag}.png")
                rows.append(row(report, wall))
                print(f"   {rows[-1]['recommendation']}", file=sys.stderr, flush=True)
    finally:
        store.close()
    if not rows:
        return 1
    keys = list(dict.fromkeys(k for r in rows for k in r))
    with open(args.out / "split.csv", "w", newline="") as fh:
        w = csv.DictWriter(fh, fieldnames=keys)
        w.writeheader()
        w.writerows(rows)
    lines = [
        "| kernel | size | dev0 alone ms | dev1 alone ms | optimal (dev0, dev1) | adjusted | "
        "Alg. 1 ms | split kernels ms | split e2e ms | best alone e2e ms | verified |",
        "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |",
    ]
    for r in rows:
        best_e2e = min(
            v for k, v in r.items() if k.endswith("alone_end_to_end_s") and v is not None
        )
        lines.append(
            f"| {r['kernel']} | {r['size']} | {ms(r.get('dev0_alone_kernel_s'))} | "
            f"{ms(r.get('dev1_alone_kernel_s'))} | "
            f"({r.get('dev0_optimal', 0):.3f}, {r.get('dev1_optimal', 0):.3f}) | "
            f"({r.get('dev0_adjusted', 0):.3f}, {r.get('dev1_adjusted', 0):.3f}) | "
            f"{ms(r['theoretical_s'])} | {ms(r['split_kernel_s'])} | "
            f"{ms(r['split_end_to_end_s'])} | {ms(best_e2e)} | {r['verified']} |"
        )
    lines += ["", *[f"- {r['kernel']} {r['size']}: {r['recommendation']}" for r in rows]]
    (args.out / "split.md").write_text("\n".join(lines) + "\n")
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    sys.exit(main())

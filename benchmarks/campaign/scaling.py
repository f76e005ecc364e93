"""Campaign throughput: configurations per second with 1 and 2 workers.

    python3 benchmarks/campaign/scaling.py OUT --mode gpus   # 1 vs 2 GPUs (e.g. 0:0, 0:1)
    python3 benchmarks/campaign/scaling.py OUT --mode pocl   # 1 vs 2 workers on the CPU
    python3 benchmarks/campaign/scaling.py OUT --mode mixed  # one campaign, GPU + CPU at once

Each setting runs the same campaign from an empty store (so everything is measured)
and records tasks, configurations measured, wall time and configurations per second
in OUT/scaling.json, plus a bar plot.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from gtune.campaign import parse_campaign, run_campaign


def campaign(devices: list[str], names: list[str], size: str, budget: int, workers: int) -> object:
    return parse_campaign(
        {
            "name": "scaling",
            "kernels": [{"suite": "garvey104", "names": names}],
            "sizes": [size],
            "devices": devices,
            "strategies": ["hybrid"],
            "technique": "global",
            "budget": budget,
            "compile_workers": workers,
        },
        source="scaling",
        base_dir=Path.cwd(),
    )


def measure(label: str, spec: object, out: Path, workers_per_device: int) -> dict[str, object]:
    t0 = time.monotonic()
    result = run_campaign(spec, out, workers_per_device=workers_per_device)  # type: ignore[arg-type]
    wall = time.monotonic() - t0
    measured = sum(int(s.get("measured") or 0) for s in result.summaries)
    row = {
        "setting": label,
        "tasks": len(result.summaries),
        "failed": len(result.failed),
        "measured": measured,
        "wall_s": wall,
        "configs_per_s": measured / wall if wall > 0 else None,
        "per_device": {},
    }
    per: dict[str, int] = {}
    for s in result.summaries:
        per[str(s["device"])] = per.get(str(s["device"]), 0) + int(s.get("measured") or 0)
    row["per_device"] = per
    print(json.dumps(row), flush=True)
    return row


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("out", type=Path)
    ap.add_argument("--mode", choices=("gpus", "pocl", "mixed"), required=True)
    ap.add_argument(
        "--devices",
        default="",
        help="selectors: gpus mode: ONE,KIND (default 0:0,NVIDIA); else the devices",
    )
    ap.add_argument(
        "--kernels", default="star_3d_xyz_r1,dense_3d_xyz_r1,star_2d_xy_r2,diamond_3d_xyz_r2"
    )
    ap.add_argument("--size", default="256x256x256")
    ap.add_argument("--budget", type=int, default=150)
    ap.add_argument("--compile-workers", type=int, default=6)
    args = ap.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    names = [k for k in args.kernels.split(",") if k]
    devices = [d for d in args.devices.split(",") if d]
    rows = []
    if args.mode == "gpus":
        # the same tasks (kernels on one kind of GPU), run by one worker on one GPU,
        # then by one worker per GPU of that kind
        one, kind = devices[:2] if len(devices) >= 2 else ("0:0", "NVIDIA")
        rows.append(
            measure(
                "1 GPU worker",
                campaign([one], names, args.size, args.budget, args.compile_workers),
                args.out / "one",
                1,
            )
        )
        rows.append(
            measure(
                "2 GPU workers",
                campaign([kind], names, args.size, args.budget, args.compile_workers),
                args.out / "two",
                1,
            )
        )
    elif args.mode == "pocl":
        devs = devices or ["Portable"]
        spec = campaign(devs[:1], names, args.size, args.budget, args.compile_workers)
        rows.append(measure("1 worker", spec, args.out / "one", 1))
        rows.append(measure("2 workers", spec, args.out / "two", 2))
    else:
        devs = devices or ["NVIDIA", "Portable"]
        rows.append(
            measure(
                "GPU + CPU",
                campaign(devs, names, args.size, args.budget, args.compile_workers),
                args.out / "mixed",
                1,
            )
        )
    (args.out / "scaling.json").write_text(json.dumps(rows, indent=2))
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(5, 3.5))
    ax.bar([str(r["setting"]) for r in rows], [float(r["configs_per_s"] or 0) for r in rows])
    ax.set_ylabel("configurations / s")
    ax.set_title(f"campaign throughput ({args.mode})")
    fig.tight_layout()
    fig.savefig(args.out / "scaling.png", dpi=120)
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""What a kernel's start costs when tuning kernels one after another, with and without
reused workers (gtune.measure.pool), in one process:

    python3 benchmarks/campaign/start_cost.py OUT [--size 64x64x32] [--budget 6]

Runs the same kernels three times, each from an empty store: without reuse (warming
the driver's own caches), with reuse, and without again; writes each pass's wall time,
configurations per second and summed time split to OUT/start_cost.json.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))


def main() -> int:
    from gtune.api import tune
    from gtune.measure import select_device
    from gtune.measure.pool import reuse_workers
    from gtune.training.train import suite_kernels
    from gtune.tuning.techniques import OracleTechniquePolicy

    ap = argparse.ArgumentParser()
    ap.add_argument("out", type=Path)
    ap.add_argument(
        "--kernels", default="star_3d_xyz_r1,dense_1d_x_r1,dense_2d_xy_r1,star_2d_xy_r1"
    )
    ap.add_argument("--size", default="64x64x32")
    ap.add_argument("--budget", type=int, default=6, help="each technique's search")
    ap.add_argument("--techniques", default="global,vec,local")
    ap.add_argument("--device", default=None)
    args = ap.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    a, b, c = (int(v) for v in args.size.split("x"))
    kernels = suite_kernels(
        args.out / "kernels", [(a, b, c)], names=args.kernels.split(","), real=False
    )
    techniques = tuple(args.techniques.split(","))
    device = select_device(args.device)
    passes = []
    for i, reuse in enumerate((False, True, False)):
        ctx = reuse_workers() if reuse else contextlib.nullcontext()
        store = args.out / f"pass-{i}.db"
        store.unlink(missing_ok=True)
        split: dict[str, float] = {}
        measured, per_kernel = 0, []
        t0 = time.monotonic()
        with ctx:
            for k in kernels:
                report = tune(
                    str(k.path),
                    sizes=k.sizes,
                    device=device,
                    technique=OracleTechniquePolicy(name="all", note="", only=techniques),
                    budget=str(args.budget * len(techniques)),
                    store=str(store),
                    confirm=None,
                    compile_workers=1,
                )
                measured += report.measured
                per_kernel.append({"kernel": k.name, **report.time.to_dict()})
                for key, value in report.time.to_dict().items():
                    split[key] = split.get(key, 0.0) + value
        wall = time.monotonic() - t0
        row = {
            "pass": i,
            "reuse_workers": reuse,
            "kernels": len(kernels),
            "measured": measured,
            "wall_s": wall,
            "configs_per_s": measured / wall,
            "time": split,
            "per_kernel": per_kernel,
        }
        print(json.dumps({k: v for k, v in row.items() if k != "per_kernel"}), flush=True)
        passes.append(row)
    (args.out / "start_cost.json").write_text(
        json.dumps({"device": device.name, "argv": sys.argv[1:], "passes": passes}, indent=2) + "\n"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

"""Load-predictor collection throughput: configurations per second, and where time goes.

    # one GPU against all GPUs of the host (a selector matching each, one worker each):
    python3 benchmarks/campaign/collect_throughput.py OUT --setting '0:0*1' --setting 'NVIDIA*1'
    # one GPU, one worker against two sharing it (the device lock keeps their timings apart):
    python3 benchmarks/campaign/collect_throughput.py OUT --setting '0:0*1' --setting '0:0*2' \
        --kernels star_2d_xy_r2,star_3d_xyz_r2 --budget 60
    # the CPU through PoCL, one and two workers:
    python3 benchmarks/campaign/collect_throughput.py OUT --setting 'Portable*1' \
        --setting 'Portable*2' --size 32x32x32 --budget 6

Every setting labels the same kernels (each technique's search a campaign piece, see
gtune.training.cluster) from an empty store, so everything is measured. After them
runs the baseline the issue compares with: direct tuning runs (as ``gtune run``: each
kernel on its own, its techniques the same budget each, nothing kept between kernels)
on the first setting's device. OUT/collect_throughput.json gets, per setting, configurations
measured, wall time, configurations per second overall and per worker, and the summed
time breakdown (compile, run, verify, space, start, store, overhead). Each setting
and the baseline start with an empty space cache (GTUNE_CACHE), and NVIDIA's compile
cache is private to each evaluator's workers (gtune.measure), so no setting reuses
another's work.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))


def main() -> int:
    from gtune.api import tune
    from gtune.measure import select_device
    from gtune.training.cluster import collect_on_cluster
    from gtune.training.train import suite_kernels, time_line
    from gtune.tuning.techniques import OracleTechniquePolicy

    ap = argparse.ArgumentParser()
    ap.add_argument("out", type=Path)
    ap.add_argument("--setting", action="append", required=True, help="SELECTOR*WORKERS")
    ap.add_argument("--kernels", default="star_3d*,dense_3d*,star_2d_xy_r*")
    ap.add_argument("--size", default="256x256x256")
    ap.add_argument("--budget", default="100", help="each technique's search")
    ap.add_argument("--techniques", default="global,vec,stream")
    args = ap.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    size = tuple(int(v) for v in args.size.split("x"))
    assert len(size) == 3
    kernels = suite_kernels(args.out / "kernels", [size], names=args.kernels.split(","), real=False)
    techniques = [t for t in args.techniques.split(",") if t]
    rows: list[dict[str, object]] = []
    for i, setting in enumerate(args.setting):
        selector, _, n = setting.partition("*")
        device = select_device(selector or None)
        work = args.out / f"setting-{i}"
        # every setting solves its spaces itself: none finds another's in the cache
        os.environ["GTUNE_CACHE"] = str((work / "space-cache").resolve())
        t0 = time.monotonic()
        run = collect_on_cluster(
            kernels,
            device,
            selector=selector,
            heuristic="hybrid",
            store_url=str((work / "store.db").resolve()),
            dataset_path=work / "dataset.csv",
            work_dir=work / "collect",
            budget=args.budget,
            techniques=techniques,
            workers_per_device=int(n or 1),
        )
        wall = time.monotonic() - t0
        pieces = [
            json.loads(line)
            for line in (work / "collect" / "tasks.jsonl").read_text().splitlines()
            if line.strip()
        ]
        workers = sorted({str(p["worker"]) for p in pieces})
        row = {
            "setting": setting,
            "device": device.name,
            "kernels": len(run.done),
            "searches": len(pieces),
            "workers": len(workers),
            "measured": run.measured,
            "wall_s": wall,
            "configs_per_s": run.measured / wall if wall > 0 else None,
            "configs_per_s_per_worker": run.measured / wall / max(1, len(workers)),
            "time": run.time,
            "summary": time_line(run),
        }
        print(json.dumps(row), flush=True)
        rows.append(row)
    # the baseline: direct runs (as `gtune run`, one process each kernel) of every kernel
    device = select_device(args.setting[0].partition("*")[0] or None)
    per_technique = args.budget
    whole = str(int(per_technique) * len(techniques)) if per_technique.isdigit() else None
    os.environ["GTUNE_CACHE"] = str((args.out / "direct-space-cache").resolve())
    measured, t0, split = 0, time.monotonic(), {}
    for k in kernels:
        report = tune(
            str(k.path),
            sizes=k.sizes,
            device=device,
            technique=OracleTechniquePolicy(name="all", note="", only=tuple(techniques)),
            budget=whole or per_technique,
            store=str((args.out / "direct.db").resolve()),
            confirm=None,
        )
        measured += report.measured
        for key, value in report.time.to_dict().items():
            split[key] = split.get(key, 0.0) + value
    wall = time.monotonic() - t0
    direct = {
        "setting": "direct runs, one process per kernel",
        "device": device.name,
        "kernels": len(kernels),
        "measured": measured,
        "wall_s": wall,
        "configs_per_s": measured / wall if wall > 0 else None,
        "time": split,
    }
    print(json.dumps(direct), flush=True)
    (args.out / "collect_throughput.json").write_text(
        json.dumps({"settings": rows, "direct": direct, "argv": sys.argv[1:]}, indent=2) + "\n"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

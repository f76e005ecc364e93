"""Does a tuning reproduce? The same tuning repeated from empty stores.

    python3 benchmarks/repeat/repeatability.py OUT [--kernel stencils/heat3d.cl]
        [--size 256x256x256] [--repeats 5] [--budget 150] [--device 0:0]

Runs ``gtune.tune`` ``--repeats`` times, each from an empty store (nothing reused),
recording each run's confirmed best, its confidence interval, the default's time and
the speedup with its interval. Then re-measures every run's best and the default
side by side, interleaved over several rounds in one evaluator, and checks whether the
runs' bests agree within their stated confidence: the spread of the re-measured bests
and whether each run's reported interval covers its best's re-measured median.

Writes OUT/repeatability.json, OUT/repeatability.md and OUT/repeatability.png.
"""

from __future__ import annotations

import argparse
import json
import math
import statistics
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

import gtune
from gtune.description import load_kernel
from gtune.kernel import canonical_config
from gtune.measure import select_device
from gtune.measure.stats import median_interval


def _confirmed(report: Any) -> dict[str, Any]:
    c = report.confirmation
    out: dict[str, Any] = {"best_config": None}
    if c is None or c.best is None:
        return out
    best, default = c.best, c.default
    out["best_config"] = dict(best.config)
    out["best_s"] = best.median_s
    out["best_interval"] = list(best.interval(c.confidence))
    if default is not None and default.ok:
        out["default_s"] = default.median_s
        out["default_interval"] = list(default.interval(c.confidence))
    out["speedup"] = c.speedup
    out["speedup_interval"] = list(c.speedup_interval) if c.speedup_interval else None
    out["significant"] = c.significant
    out["verdict"] = c.verdict
    return out


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("out", type=Path)
    ap.add_argument("--kernel", default="stencils/heat3d.cl")
    ap.add_argument("--size", default=None)
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--budget", default="150")
    ap.add_argument("--technique", default="auto")
    ap.add_argument("--device", default=None)
    ap.add_argument("--rounds", type=int, default=7)
    args = ap.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    device = select_device(args.device)
    kernel = load_kernel(args.kernel)
    if args.size:
        names = list(kernel.sizes)
        kernel = kernel.with_sizes(
            dict(zip(names, (int(v) for v in args.size.split("x")), strict=False))
        )
    runs: list[dict[str, Any]] = []
    for i in range(args.repeats):
        t0 = time.monotonic()
        report = gtune.tune(
            kernel,
            device=device,
            strategy="hybrid",
            technique=args.technique,
            budget=args.budget,
            store="sqlite://",  # in memory: every run starts empty
        )
        row = {
            "run": i + 1,
            "wall_s": time.monotonic() - t0,
            "evaluations": report.evaluations,
            "notes": list(report.notes),
            **_confirmed(report),
        }
        runs.append(row)
        print(json.dumps(row, default=str), flush=True)
    # one side-by-side round over every run's best and the default
    from gtune.measure.opencl_evaluator import OpenCLEvaluator

    default = kernel.default_config()
    configs: dict[str, dict[str, int]] = {}
    if default is not None:
        configs["default"] = dict(default)
    for r in runs:
        if r["best_config"]:
            configs.setdefault(canonical_config(r["best_config"]), r["best_config"])
    times: dict[str, list[float]] = {k: [] for k in configs}
    with OpenCLEvaluator(kernel, device, compile_workers=0) as ev:
        keys = list(configs)
        for rnd in range(args.rounds):
            for k in keys[rnd % len(keys) :] + keys[: rnd % len(keys)]:
                res = ev.evaluate(configs[k])
                if res.ok:
                    times[k] += list(res.times_s)
    final = {
        k: {
            "median_s": statistics.median(v) if v else None,
            "interval": list(median_interval(v)) if v else None,
            "config": configs[k],
        }
        for k, v in times.items()
    }
    bests = [
        final[canonical_config(r["best_config"])]["median_s"] for r in runs if r["best_config"]
    ]
    bests = [b for b in bests if b]
    covered = 0
    for r in runs:
        if not r["best_config"] or "best_interval" not in r:
            continue
        m = final[canonical_config(r["best_config"])]["median_s"]
        lo, hi = r["best_interval"]
        covered += int(m is not None and lo * 0.97 <= m <= hi * 1.03)
    speedups = [r["speedup"] for r in runs if r.get("speedup")]
    summary = {
        "device": device.name,
        "kernel": args.kernel,
        "sizes": dict(kernel.sizes),
        "repeats": args.repeats,
        "budget": args.budget,
        "distinct_bests": len(
            {canonical_config(r["best_config"]) for r in runs if r["best_config"]}
        ),
        "remeasured_best_spread": (max(bests) / min(bests) - 1.0) if bests else None,
        "reported_speedups": speedups,
        "speedup_spread": (max(speedups) / min(speedups) - 1.0) if speedups else None,
        "intervals_covering_remeasure": covered,
        "final_round": final,
        "runs": runs,
    }
    (args.out / "repeatability.json").write_text(json.dumps(summary, indent=2, default=str))
    lines = [
        f"# Repeatability: {args.kernel} on {device.name}",
        "",
        f"{args.repeats} runs of `gtune.tune(..., budget={args.budget})`, "
        "each from an empty store.",
        "",
        "| run | best config | confirmed best µs (interval) | speedup (interval) | verdict "
        "| re-measured µs |",
        "|---|---|---|---|---|---|",
    ]
    for r in runs:
        if not r["best_config"]:
            lines.append(f"| {r['run']} | - | - | - | - | - |")
            continue
        m = final[canonical_config(r["best_config"])]["median_s"]
        iv = r.get("best_interval") or [math.nan, math.nan]
        si = r.get("speedup_interval") or [math.nan, math.nan]
        lines.append(
            f"| {r['run']} | {canonical_config(r['best_config'])} | {r['best_s'] * 1e6:.1f} "
            f"({iv[0] * 1e6:.1f}-{iv[1] * 1e6:.1f}) | {r.get('speedup') or math.nan:.2f} "
            f"({si[0]:.2f}-{si[1]:.2f}) | {r.get('verdict', '')} | {(m or math.nan) * 1e6:.1f} |"
        )
    lines += [
        "",
        f"Distinct bests: {summary['distinct_bests']}; spread of their re-measured medians: "
        f"{(summary['remeasured_best_spread'] or 0) * 100:.1f} %; reported speedups "
        f"{', '.join(f'{s:.2f}' for s in speedups)}; intervals covering the re-measured "
        f"median (±3 %): {covered}/{len(runs)}.",
    ]
    (args.out / "repeatability.md").write_text("\n".join(lines) + "\n")
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(7, 3.8))
    labels = list(final)
    data = [[t * 1e6 for t in times[k]] for k in labels]
    ax.boxplot(data, showfliers=True)
    ax.set_xticks(range(1, len(labels) + 1))
    ax.set_xticklabels(
        ["default" if k == "default" else f"best {i}" for i, k in enumerate(labels)], rotation=30
    )
    ax.set_ylabel("kernel time (µs), final interleaved round")
    ax.set_title(f"{Path(args.kernel).stem} on {device.name}: {args.repeats} tunings")
    fig.tight_layout()
    fig.savefig(args.out / "repeatability.png", dpi=120)
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    sys.exit(main())

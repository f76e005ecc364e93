"""Does a final work-group-and-merge reshape close the gap to expert search?

    python3 benchmarks/compare/shape_steps.py OUT [--device 0:0] [--size 256x256x256]
        [--kernel NAME ...] [--specs hybrid,PATH.yaml,...] [--technique global]
        [--rounds 7] [--max-minutes 9] [--budget N] [--no-expert]
    python3 benchmarks/compare/shape_steps.py OUT --report-only

Section 16 of the report found, offline, that the hybrid heuristic loses to expert
search where the y group takes the whole merge factor before z is tuned, and that a
step redistributing the work-group shape and the merge shape together would recover
most of the gap. This runs, in one process on one device, the shipped ``hybrid`` spec,
its variants (``benchmarks/compare/specs/``) and expert search on garvey104 kernels
with one data-loading technique, then re-measures every strategy's best and the
default side by side (interleaved over ``--rounds`` rounds in one evaluator), so the
comparison does not depend on when each search happened to measure its best.

The same script compares any specs under one technique and one budget: with
``--technique stream --budget 100 --no-expert`` it measured the streaming steps of the
shipped hybrid against the spec before them (``benchmarks/compare/specs/``); the report
is then relative to the first spec. ``--kernel`` also takes the shipped stencils
(``heat3d``, ``box27``, ...), run at ``--size``. ``--report-only`` rebuilds the report.

Writes OUT/shape_steps.jsonl (one line per kernel, appended as each finishes),
OUT/shape_steps.md and OUT/shape_steps.png. The searches share OUT/shape.db: a rerun
after ``--max-minutes`` continues where it stopped without re-measuring.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

HERE = Path(__file__).resolve().parent
KERNELS = [
    "dense_1d_z_r3",
    "star_3d_xyz_r1",
    "star_2d_yz_r2",
    "diamond_3d_xyz_r2",
    "diamond_2d_xz_r2",
    "nocorners_3d_xyz_r1",
    "nocorners_2d_xy_r2",
    "thumbtack_3d_x_r1",
    "thumbtack_3d_z_r2",
    "dense_3d_xyz_r1",
]
SPECS = f"hybrid,{HERE / 'specs' / 'hybrid-alternate.yaml'},{HERE / 'specs' / 'hybrid-joint.yaml'}"


def _label(spec: str) -> str:
    return Path(spec).stem if spec.endswith(".yaml") else spec


def main() -> int:
    ap = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    ap.add_argument("out", type=Path)
    ap.add_argument("--device", default=None)
    ap.add_argument("--size", default="256x256x256")
    ap.add_argument("--kernel", action="append", default=[], metavar="NAME")
    ap.add_argument("--specs", default=SPECS, help="comma-separated spec names or paths")
    ap.add_argument("--technique", default="global")
    ap.add_argument("--rounds", type=int, default=7)
    ap.add_argument("--max-minutes", type=float, default=9.0)
    ap.add_argument("--no-expert", action="store_true", help="leave expert search out")
    ap.add_argument("--budget", type=int, default=None, help="evaluations per search")
    ap.add_argument("--report-only", action="store_true", help="rebuild the report from OUT")
    args = ap.parse_args()
    os.environ.setdefault("POCL_KERNEL_CACHE", "0")
    started = time.monotonic()
    deadline = started + 60 * args.max_minutes

    import gtune
    from gtune.description import load_kernel
    from gtune.kernel import canonical_config
    from gtune.measure import select_device
    from gtune.measure.opencl_evaluator import OpenCLEvaluator
    from gtune.measure.stats import median_interval
    from gtune.stencils.generate import generate, parse_size, suite

    out: Path = args.out
    if args.report_only:
        saved = (out / "shape_steps.jsonl").read_text().splitlines()
        write_report([json.loads(x) for x in saved if x.strip()], out)
        return 0
    out.mkdir(parents=True, exist_ok=True)
    done = set()
    lines = out / "shape_steps.jsonl"
    if lines.exists():
        done = {json.loads(x)["kernel"] for x in lines.read_text().splitlines() if x.strip()}
    specs = [s.strip() for s in args.specs.split(",") if s.strip()]
    strategies: list[tuple[str, dict[str, Any]]] = [(_label(s), {"spec": s}) for s in specs]
    if not args.no_expert:
        strategies.append(("expert", {"strategy": "expert"}))
    device = select_device(args.device)
    status = 0
    with tempfile.TemporaryDirectory(prefix="garvey104-") as tmp:
        generate(suite("garvey104"), Path(tmp), size=parse_size(args.size))
        for name in args.kernel or KERNELS:
            if name in done:
                continue
            if time.monotonic() > deadline:
                status = 3
                break
            path = Path(tmp) / f"{name}.cl"
            if path.exists():
                kernel = load_kernel(path)
            else:  # a shipped stencil (heat3d, box27, ...) at the same size
                kernel = load_kernel(HERE.parents[1] / "stencils" / f"{name}.cl")
                extents = [int(v) for v in args.size.split("x")]
                kernel = kernel.with_sizes(dict(zip(kernel.sizes, extents, strict=False)))
            row: dict[str, Any] = {"kernel": name, "device": device.name, "strategies": {}}
            bests: dict[str, dict[str, int]] = {}
            for label, how in strategies:
                t0 = time.monotonic()
                report = gtune.tune(
                    kernel,
                    device=device,
                    technique=args.technique,
                    store=out / "shape.db",
                    confirm=None,
                    budget=args.budget if how.get("spec") else None,
                    **how,
                )
                cfg = report.search_config
                row["strategies"][label] = {
                    "evaluations": report.evaluations,
                    "measured_now": report.measured,
                    "compile_s": report.compile_s,
                    "search_s": report.search_s if math.isfinite(report.search_s) else None,
                    "config": dict(cfg) if cfg else None,
                    "wall_s": round(time.monotonic() - t0, 2),
                }
                if cfg:
                    bests[label] = dict(cfg)
                print(f"{name} {label}: {row['strategies'][label]}", flush=True)
            # the side-by-side round: every best and the default, interleaved
            configs: dict[str, dict[str, int]] = {}
            default = kernel.default_config()
            if default is not None:
                configs["default"] = dict(default)
            for cfg in bests.values():
                configs.setdefault(canonical_config(cfg), cfg)
            times: dict[str, list[float]] = {k: [] for k in configs}
            with OpenCLEvaluator(kernel, device, compile_workers=0) as ev:
                keys = list(configs)
                for rnd in range(args.rounds):
                    for k in keys[rnd % len(keys) :] + keys[: rnd % len(keys)]:
                        res = ev.evaluate(configs[k])
                        if res.ok:
                            times[k] += list(res.times_s)
            for label, cfg in bests.items():
                t = times[canonical_config(cfg)]
                entry = row["strategies"][label]
                entry["remeasured_s"] = statistics.median(t) if t else None
                entry["remeasured_interval"] = list(median_interval(t)) if t else None
            d = times.get("default", [])
            row["default_s"] = statistics.median(d) if d else None
            with open(lines, "a") as fh:
                fh.write(json.dumps(row) + "\n")
            print(f"done: {name}", flush=True)
    rows = [json.loads(x) for x in lines.read_text().splitlines() if x.strip()]
    write_report(rows, out)
    print(json.dumps({"kernels": len(rows), "wall_s": round(time.monotonic() - started, 1)}))
    return status


def write_report(rows: list[dict[str, Any]], out: Path) -> None:
    """The markdown table (re-measured time relative to expert, evaluations) and a plot."""
    if not rows:
        return
    labels = list(rows[0]["strategies"])
    ref = "expert" if "expert" in labels else labels[0]
    md = [
        f"# Shape steps against expert search ({rows[0]['device']})"
        if ref == "expert"
        else f"# Heuristic specs side by side, relative to {ref} ({rows[0]['device']})",
        "",
        "Re-measured side by side: each strategy's best, time relative to "
        f"{ref}'s best (below 1 is faster); evaluations in brackets.",
        "",
        "| kernel | " + " | ".join(labels) + " |",
        "|---|" + "---:|" * len(labels),
    ]
    ratios: dict[str, list[float]] = {k: [] for k in labels}
    evals: dict[str, list[int]] = {k: [] for k in labels}
    wins: dict[str, int] = dict.fromkeys(labels, 0)
    for r in rows:
        s = r["strategies"]
        base = s.get(ref, {}).get("remeasured_s")
        cells = []
        best_here = min(
            (v["remeasured_s"] for v in s.values() if v.get("remeasured_s")), default=None
        )
        for k in labels:
            v = s.get(k, {})
            t = v.get("remeasured_s")
            evals[k].append(int(v.get("evaluations", 0)))
            if t and base:
                ratios[k].append(t / base)
                cells.append(f"{t / base:.3f} ({v['evaluations']})")
            else:
                cells.append(f"— ({v.get('evaluations', 0)})")
            if t and best_here and t <= best_here * 1.005:
                wins[k] += 1
        md.append(f"| {r['kernel']} | " + " | ".join(cells) + " |")
    geo = {
        k: math.exp(sum(math.log(x) for x in v) / len(v)) if v else float("nan")
        for k, v in ratios.items()
    }
    md.append(
        "| **geometric mean** | "
        + " | ".join(f"**{geo[k]:.3f}** ({sum(evals[k]) / len(evals[k]):.0f})" for k in labels)
        + " |"
    )
    md += [
        "",
        "Within 0.5 % of the kernel's fastest re-measured best: "
        + ", ".join(f"{k} {wins[k]}" for k in labels)
        + f" (of {len(rows)}).",
        "",
    ]
    (out / "shape_steps.md").write_text("\n".join(md))
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return
    fig, ax = plt.subplots(figsize=(10, 4))
    width = 0.8 / len(labels)
    for i, k in enumerate(labels):
        ys = [
            (r["strategies"].get(k, {}).get("remeasured_s") or math.nan)
            / (r["strategies"].get(ref, {}).get("remeasured_s") or math.nan)
            for r in rows
        ]
        ax.bar([j + i * width for j in range(len(rows))], ys, width, label=k)
    ax.axhline(1.0, color="black", linewidth=0.8)
    ax.set_xticks([j + 0.4 - width / 2 for j in range(len(rows))])
    ax.set_xticklabels([r["kernel"] for r in rows], rotation=30, ha="right", fontsize=8)
    ax.set_ylabel(f"time / {ref}'s best (re-measured)")
    ax.set_ylim(0.85, 1.15)
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(out / "shape_steps.png", dpi=120)


if __name__ == "__main__":
    sys.exit(main())

"""Bundled builds in a real ``gtune run``: the same configurations tuned with bundling
off, on, and off again, each run a fresh process with a fresh store:

    python3 benchmarks/campaign/bundle_ab.py OUT [--device NVIDIA]
        [--kernel stencils/heat3d.cl --size 256x256x256] [--configs 200] [--bundle K]

Each run is ``gtune run --strategy random --technique whole`` with the same seed, so
all three measure the same configurations. For each: the configurations per second of
wall time, and the CPU seconds per configuration of the whole run (``gtune`` and every
worker process it started and reaped: compile helpers, the measuring worker). Then,
per configuration measured ok in two runs, the ratio of its median kernel time: "on /
off" against "off again / off" (the device's own noise): a configuration built in a
bundle runs as fast as built alone when the two spreads agree.

``--bundle K`` sets ``GTUNE_BUNDLE`` for the "on" run (default: the device's own
default, 8 on NVIDIA). Writes OUT/bundle_ab.json and OUT/bundle_ab.md.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]


def _run(out: Path, label: str, args: argparse.Namespace, bundle: str | None) -> dict[str, Any]:
    env = {k: v for k, v in os.environ.items() if k != "GTUNE_BUNDLE"}
    if bundle is not None:
        env["GTUNE_BUNDLE"] = bundle
    report = out / f"{label}.json"
    cmd = [sys.executable, "-m", "gtune", "--db", str(out / f"{label}.db"), "run"]
    cmd += [args.kernel, "--size", args.size, "--strategy", "random", "--technique", "whole"]
    cmd += ["--option", f"n={args.configs}", "--budget", str(args.configs), "--no-confirm"]
    cmd += ["--json", str(report)] + (["--device", args.device] if args.device else [])
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    began = time.monotonic()
    proc = subprocess.run(cmd, capture_output=True, text=True, env=env, cwd=ROOT)
    wall = time.monotonic() - began
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if proc.returncode != 0:
        raise SystemExit(f"{label}: gtune run failed:\n{proc.stderr[-3000:]}")
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    data = json.loads(report.read_text())
    trace = [e for r in data["runs"] for e in r["outcome"]["trace"]]
    n = len(trace)
    return {
        "run": label,
        "bundle": bundle or "default",
        "configs": n,
        "wall_s": wall,
        "configs_per_s": n / wall,
        "cpu_s": cpu,
        "cpu_per_config_s": cpu / n if n else float("nan"),
        "bundled": sum(1 for e in trace if (e.get("extra") or {}).get("bundle", 1) > 1),
        "medians": {
            json.dumps(e["config"], sort_keys=True): e["median_s"]
            for e in trace
            if e["status"] == "ok" and e.get("median_s")
        },
    }


def _ratios(a: dict[str, Any], b: dict[str, Any]) -> dict[str, float]:
    """Per configuration ok in both: b's median over a's; their median and spread."""
    common = sorted(set(a["medians"]) & set(b["medians"]))
    r = sorted(b["medians"][k] / a["medians"][k] for k in common)
    if not r:
        return {"configs": 0}
    q = statistics.quantiles(r, n=10) if len(r) > 1 else [r[0]] * 9
    return {"configs": len(r), "median": statistics.median(r), "p10": q[0], "p90": q[-1]}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("out", type=Path)
    ap.add_argument("--device", default=None)
    ap.add_argument("--kernel", default="stencils/heat3d.cl")
    ap.add_argument("--size", default="256x256x256")
    ap.add_argument("--configs", type=int, default=200)
    ap.add_argument("--bundle", default=None, help="GTUNE_BUNDLE for the run with bundles")
    args = ap.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    runs = [
        _run(args.out, "off", args, "1"),
        _run(args.out, "on", args, args.bundle),
        _run(args.out, "off-again", args, "1"),
    ]
    noise = _ratios(runs[0], runs[2])
    bundled = _ratios(runs[0], runs[1])
    record = {"kernel": args.kernel, "size": args.size, "runs": runs, "noise": noise}
    record["bundled_vs_alone"] = bundled
    (args.out / "bundle_ab.json").write_text(json.dumps(record, indent=1) + "\n")
    lines = [
        f"# Bundled builds in gtune run: {args.kernel} at {args.size}",
        "",
        "| run | GTUNE_BUNDLE | configs | bundled | wall (s) | configs/s | CPU per config (s) |",
        "| --- | --- | ---: | ---: | ---: | ---: | ---: |",
        *(
            f"| {r['run']} | {r['bundle']} | {r['configs']} | {r['bundled']} | "
            f"{r['wall_s']:.1f} | {r['configs_per_s']:.2f} | {r['cpu_per_config_s']:.3f} |"
            for r in runs
        ),
        "",
        "Kernel time per configuration (median), ratio to the first run's:",
        "",
        "| compared | configs | median | p10 | p90 |",
        "| --- | ---: | ---: | ---: | ---: |",
        *(
            f"| {name} | {q['configs']} | {q.get('median', float('nan')):.3f} | "
            f"{q.get('p10', float('nan')):.3f} | {q.get('p90', float('nan')):.3f} |"
            for name, q in (("on / off", bundled), ("off again / off", noise))
        ),
        "",
    ]
    (args.out / "bundle_ab.md").write_text("\n".join(lines))
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

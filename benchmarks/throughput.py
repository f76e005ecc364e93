"""Tuning throughput: configurations measured per second, compile and verification included.

Measures the same list of configurations of a stencil twice in one run — built in the
measuring worker only (``--compile-workers 0``) and with compile workers overlapping the
device — and writes JSON plus a markdown summary. Every configuration is compiled from
source (fresh driver caches), run once to warm up and three times timed, and verified.

    python benchmarks/throughput.py OUTDIR [--kernel stencils/heat3d.cl] [--size 256x256x256]
        [--device D] [--count 150] [--workers 0,15]
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from gtune.commands._common import parse_size  # noqa: E402
from gtune.description import load_kernel  # noqa: E402
from gtune.kernel import TunableKernel, domain_values  # noqa: E402
from gtune.measure import select_device  # noqa: E402
from gtune.measure.opencl_evaluator import OpenCLEvaluator  # noqa: E402


def configurations(
    kernel: TunableKernel, limits: dict[str, int], count: int
) -> list[dict[str, int]]:
    """A reproducible sample of configurations satisfying the kernel's constraints."""
    domains = domain_values(kernel)
    rng = random.Random(7)
    seen: set[tuple[int, ...]] = set()
    out: list[dict[str, int]] = []
    tries = 0
    while len(out) < count and tries < 200_000:
        tries += 1
        cfg = {name: rng.choice(values) for name, values in domains.items()}
        key = tuple(cfg.values())
        if key in seen:
            continue
        seen.add(key)
        env = {**kernel.sizes, **limits, **cfg}
        if not all(c.evaluate(env) for c in kernel.constraints):
            continue
        glob, loc = kernel.launch_sizes(cfg)
        if loc is not None and (
            any(g % x for g, x in zip(glob, loc, strict=True))
            or eval_product(loc) > limits["MAX_WORK_GROUP_SIZE"]
        ):
            continue
        out.append(cfg)
    return out


def eval_product(values: tuple[int, ...]) -> int:
    p = 1
    for v in values:
        p *= v
    return p


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("out", type=Path)
    ap.add_argument("--kernel", default=str(ROOT / "stencils" / "heat3d.cl"))
    ap.add_argument("--size", default="256x256x256")
    ap.add_argument("--device")
    ap.add_argument("--count", type=int, default=150)
    ap.add_argument("--workers", default=f"0,{max(1, (os.cpu_count() or 2) - 1)}")
    args = ap.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    os.environ.setdefault("POCL_KERNEL_CACHE", "0")

    kernel = load_kernel(args.kernel)
    kernel = kernel.with_sizes(parse_size(args.size, kernel) or {})
    device = select_device(args.device)
    configs = configurations(kernel, device.limit_values(), args.count)
    print(f"{kernel.name} {dict(kernel.sizes)} on {device.name}: {len(configs)} configurations")
    runs = []
    for workers in [int(w) for w in args.workers.split(",")]:
        setup_start = time.perf_counter()
        ev = OpenCLEvaluator(kernel, device, compile_workers=workers)
        if workers:
            ev._start_compilers(min(workers, len(configs)))
        setup_s = time.perf_counter() - setup_start
        start = time.perf_counter()
        results = list(ev.evaluate_batch(configs))
        wall = time.perf_counter() - start
        ev.close()
        statuses: dict[str, int] = {}
        for r in results:
            statuses[r.status.value] = statuses.get(r.status.value, 0) + 1
        ok = [r for r in results if r.ok]
        run = {
            "compile_workers": workers,
            "configs": len(results),
            "setup_s": setup_s,
            "wall_s": wall,
            "configs_per_s": len(results) / wall,
            "statuses": statuses,
            "compile_s_median": statistics.median(r.compile_s for r in ok) if ok else None,
            "load_s_median": statistics.median(float(r.extra.get("load_s", 0.0)) for r in ok)
            if ok
            else None,
            "worker_s_median": statistics.median(float(r.extra.get("worker_s", 0.0)) for r in ok)
            if ok
            else None,
            "run_s_median": statistics.median(r.median_s for r in ok) if ok else None,
            "best_s": min((r.median_s for r in ok), default=None),
        }
        runs.append(run)
        print(json.dumps(run))
    data = {
        "kernel": kernel.name,
        "sizes": dict(kernel.sizes),
        "device": device.to_dict(),
        "runs": runs,
    }
    (args.out / "throughput.json").write_text(json.dumps(data, indent=1))
    size = "x".join(map(str, kernel.sizes.values()))
    lines = [
        f"# Tuning throughput: {kernel.name} {size} on {device.name}",
        "",
        "| compile workers | configs | wall s | configs/s | median compile s | median load s "
        "| median worker s | statuses |",
        "| --- | --- | --- | --- | --- | --- | --- | --- |",
    ]
    for r in runs:
        lines.append(
            f"| {r['compile_workers']} | {r['configs']} | {r['wall_s']:.2f} "
            f"| {r['configs_per_s']:.1f} "
            f"| {r['compile_s_median'] or 0:.3f} | {r['load_s_median'] or 0:.3f} "
            f"| {r['worker_s_median'] or 0:.3f} | {r['statuses']} |"
        )
    (args.out / "throughput.md").write_text("\n".join(lines) + "\n")
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""gtune against Kernel Tuner, side by side in one run, on the same kernels and space.

    python3 benchmarks/kt/side_by_side.py OUT [--kernels heat3d,box27] [--size 256]
        [--evals 200] [--device 0:0] [--kt-strategies random_sample,genetic_algorithm,...]

For each template kernel: gtune's valid space on the device (MiniZinc, the same
constraints) is handed to Kernel Tuner as its restriction, restricted to what Kernel
Tuner can launch (buffers, not images). Then, in this process, one after another:
gtune's hybrid heuristic (technique chosen by the load predictor when a model fits the
device, else the oracle), and each Kernel Tuner strategy with the same evaluation
budget, both verifying outputs against the same numpy reference. Every evaluation is
timestamped, giving best-so-far curves against evaluations and against wall time.
Finally the best configuration each tool found is re-measured by gtune's evaluator,
interleaved, so the reported best times come from one measurement procedure.

Writes OUT/side_by_side.json (every curve), OUT/summary.csv, OUT/summary.md and
convergence PNGs per kernel. Kernel Tuner is used from its installed wheel, never
copied into gtune.
"""

from __future__ import annotations

import argparse
import csv
import json
import math
import statistics
import sys
import time
from datetime import datetime
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

import numpy as np

from gtune.kernel import TunableKernel, load_kernel
from gtune.measure import select_device
from gtune.measure.problem import initial_arrays, python_reference, scalar_values
from gtune.measure.result import Result
from gtune.space import solve_space
from gtune.store import SQLiteStore
from gtune.tuning import tune_kernel

ROOT = Path(__file__).resolve().parents[2]
KT_STRATEGIES = "random_sample,genetic_algorithm,bayes_opt,simulated_annealing"


class Curve:
    """Best-so-far against evaluations and wall time, as a tuner produced them."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.start = time.monotonic()
        self.points: list[tuple[int, float, float]] = []  # (evaluation, seconds, best_s)
        self.best = math.inf
        self.best_config: dict[str, int] | None = None

    def add(self, seconds: float, value: float, config: dict[str, int] | None) -> None:
        if value < self.best:
            self.best = value
            self.best_config = config
        self.points.append((len(self.points) + 1, seconds, self.best))

    def to_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "best_s": self.best if math.isfinite(self.best) else None,
            "best_config": self.best_config,
            "points": self.points,
        }


class _GtuneProgress:
    def __init__(self, curve: Curve) -> None:
        self.curve = curve

    def run_started(self, label: str, total: int | None) -> None:
        return None

    def batch_started(self, step: str, size: int) -> None:
        return None

    def result(self, result: Result, fresh: bool, best_s: float) -> None:
        value = result.median_s if result.ok else math.inf
        self.curve.add(time.monotonic() - self.curve.start, value, dict(result.config))


def kt_space(
    kernel: TunableKernel, device: Any
) -> tuple[dict[str, list[int]], set[tuple[int, ...]]]:
    build = solve_space(kernel, device)
    space = build.space if hasattr(build, "space") else build
    names = kernel.parameter_names
    valid: set[tuple[int, ...]] = set()
    values: dict[str, set[int]] = {n: set() for n in names}
    for cfg in space.enumerate():
        if cfg.get("IMAGE", 0) != 0 or cfg.get("STREAM", 0) != 0:
            continue  # Kernel Tuner passes buffers, not images; streaming launches differ
        valid.add(tuple(int(cfg[n]) for n in names))
        for n in names:
            values[n].add(int(cfg[n]))
    return {n: sorted(v) for n, v in values.items()}, valid


def run_kt(
    kernel: TunableKernel,
    device: Any,
    strategy: str,
    evals: int,
    params: dict[str, list[int]],
    valid: set[tuple[int, ...]],
    arrays: dict[str, np.ndarray],
    refs: dict[str, np.ndarray],
    atol: float,
) -> Curve:
    import kernel_tuner

    names = kernel.parameter_names
    curve = Curve(f"kt:{strategy}")
    args: list[Any] = []
    answer: list[Any] = []
    scalars = scalar_values(kernel)
    for a in kernel.arguments:
        if a.kind == "buffer":
            args.append(arrays[a.name].copy())
            answer.append(refs.get(a.name))
        else:
            dtype = np.dtype(a.dtype)
            args.append(dtype.type(scalars[a.name]))
            answer.append(None)
    sizes = dict(kernel.sizes)
    problem = tuple(sizes.get(n, 1) for n in ("NX", "NY", "NZ"))

    def allowed(p: dict[str, int]) -> bool:
        return tuple(int(p[n]) for n in names) in valid

    options: dict[str, Any] = {"max_fevals": evals}
    if strategy == "random_sample":
        options = {"max_fevals": evals}
    results, _env = kernel_tuner.tune_kernel(
        kernel.name,
        kernel.source,
        problem,
        args,
        params,
        grid_div_x=["WX", "BX", "CX"],
        grid_div_y=["WY", "CY"],
        grid_div_z=["WZ", "CZ"],
        block_size_names=["WX", "WY", "WZ"],
        restrictions=allowed,
        answer=answer,
        atol=atol,
        lang="OpenCL",
        platform=device.platform_index,
        device=device.device_index,
        # with explicit defines Kernel Tuner defines nothing else: add every parameter
        defines={**sizes, **{n: (lambda p, n=n: p[n]) for n in names}},
        strategy=strategy,
        strategy_options=options,
        quiet=True,
        verbose=False,
        cache=None,
    )
    t0: float | None = None
    for r in results:
        ts = datetime.fromisoformat(str(r["timestamp"]).replace("Z", "+00:00")).timestamp()
        t0 = ts if t0 is None else min(t0, ts)
    for r in sorted(results, key=lambda r: str(r["timestamp"])):
        ts = datetime.fromisoformat(str(r["timestamp"]).replace("Z", "+00:00")).timestamp()
        t = r.get("time")
        value = float(t) / 1000.0 if isinstance(t, int | float) else math.inf
        curve.add(ts - (t0 or ts), value, {n: int(r[n]) for n in names})
    return curve


def run_gtune(
    kernel: TunableKernel, device: Any, out: Path, evals: int
) -> tuple[Curve, dict[str, Any]]:
    from gtune.heuristics import Budget

    curve = Curve("gtune:hybrid")
    store = SQLiteStore(out / f"gtune-{kernel.name}-{time.time_ns()}.db")
    try:
        report = tune_kernel(
            kernel,
            device,
            strategy="hybrid",
            technique="auto",
            budget=Budget(evaluations=evals),
            store=store,
            progress=_GtuneProgress(curve),
        )
    finally:
        store.close()
    return curve, {"notes": list(report.notes), "technique": report.technique_choice}


def remeasure(
    kernel: TunableKernel, device: Any, configs: dict[str, dict[str, int]], rounds: int = 5
) -> dict[str, list[float]]:
    from gtune.measure.opencl_evaluator import OpenCLEvaluator

    times: dict[str, list[float]] = {k: [] for k in configs}
    with OpenCLEvaluator(kernel, device, compile_workers=0) as ev:
        for _ in range(rounds):
            for name, cfg in configs.items():
                r = ev.evaluate(cfg)
                if r.ok:
                    times[name] += list(r.times_s)
    return times


def score(curve: Curve, baseline: Curve, best_known: float, horizon: float) -> float | None:
    """Mean over time of (baseline - strategy) / (baseline - best known), in [.., 1]."""
    if not curve.points or not baseline.points:
        return None

    def at(c: Curve, t: float) -> float:
        best = math.inf
        for _, s, b in c.points:
            if s <= t:
                best = b
        return best

    vals = []
    for k in range(1, 101):
        t = horizon * k / 100
        b, s = at(baseline, t), at(curve, t)
        if not (math.isfinite(b) and math.isfinite(s)) or b <= best_known:
            continue
        vals.append((b - s) / (b - best_known))
    return statistics.fmean(vals) if vals else None


def time_to(curve: Curve, target: float) -> float | None:
    for _, s, b in curve.points:
        if b <= target:
            return s
    return None


def evals_to(curve: Curve, target: float) -> int | None:
    for e, _, b in curve.points:
        if b <= target:
            return e
    return None


def plot(kernel: str, curves: list[Curve], out: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, 2, figsize=(11, 4))
    for c in curves:
        pts = [(e, s, b) for e, s, b in c.points if math.isfinite(b)]
        if not pts:
            continue
        axes[0].step([p[0] for p in pts], [p[2] * 1e6 for p in pts], where="post", label=c.name)
        axes[1].step([p[1] for p in pts], [p[2] * 1e6 for p in pts], where="post", label=c.name)
    axes[0].set_xlabel("evaluations")
    axes[1].set_xlabel("wall time (s)")
    for ax in axes:
        ax.set_ylabel("best kernel time so far (µs)")
        ax.set_yscale("log")
        ax.legend(fontsize=7)
    fig.suptitle(f"{kernel}: gtune vs Kernel Tuner")
    fig.tight_layout()
    fig.savefig(out / f"convergence_{kernel}.png", dpi=120)
    plt.close(fig)


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("out", type=Path)
    ap.add_argument("--kernels", default="heat3d,box27")
    ap.add_argument("--size", type=int, default=256)
    ap.add_argument("--evals", type=int, default=200)
    ap.add_argument("--device", default=None)
    ap.add_argument("--kt-strategies", default=KT_STRATEGIES)
    args = ap.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    device = select_device(args.device)
    doc: dict[str, Any] = {
        "device": device.name,
        "evals": args.evals,
        "size": args.size,
        "kernels": {},
    }
    rows = []
    for name in [k for k in args.kernels.split(",") if k]:
        path = ROOT / "stencils" / f"{name}.cl"
        kernel = load_kernel(path)
        dims = len(kernel.sizes)
        kernel = kernel.with_sizes({n: args.size for n in list(kernel.sizes)[:dims]})
        params, valid = kt_space(kernel, device)
        arrays = initial_arrays(kernel)
        refs = python_reference(kernel, arrays) if kernel.reference.kind == "python" else {}
        atol = 1e-4 * max((float(np.max(np.abs(r))) for r in refs.values()), default=1.0)
        curves: list[Curve] = []
        g_curve, g_info = run_gtune(kernel, device, args.out, args.evals)
        curves.append(g_curve)
        print(
            f"{name}: gtune best {g_curve.best * 1e6:.1f} µs in {len(g_curve.points)} evals",
            flush=True,
        )
        for strategy in [s for s in args.kt_strategies.split(",") if s]:
            try:
                c = run_kt(kernel, device, strategy, args.evals, params, valid, arrays, refs, atol)
            except Exception as exc:  # a Kernel Tuner strategy that fails is reported, not fatal
                print(f"{name}: kt {strategy} failed: {type(exc).__name__}: {exc}", flush=True)
                continue
            curves.append(c)
            print(
                f"{name}: {c.name} best {c.best * 1e6:.1f} µs in {len(c.points)} evals", flush=True
            )
        finals = {c.name: c.best_config for c in curves if c.best_config}
        confirmed = remeasure(kernel, device, finals)
        best_known = min(c.best for c in curves)
        baseline = next((c for c in curves if c.name == "kt:random_sample"), curves[-1])
        horizon = max(c.points[-1][1] for c in curves if c.points)
        for c in curves:
            conf = confirmed.get(c.name) or []
            rows.append(
                {
                    "kernel": name,
                    "tuner": c.name,
                    "evaluations": len(c.points),
                    "best_reported_s": c.best,
                    "best_remeasured_s": statistics.median(conf) if conf else None,
                    "wall_s": c.points[-1][1] if c.points else None,
                    "time_to_95_s": time_to(c, best_known / 0.95),
                    "evals_to_95": evals_to(c, best_known / 0.95),
                    "score": score(c, baseline, best_known, horizon),
                    "best_config": json.dumps(c.best_config),
                }
            )
        doc["kernels"][name] = {
            "curves": [c.to_dict() for c in curves],
            "remeasured": confirmed,
            "gtune": g_info,
            "space": len(valid),
        }
        plot(name, curves, args.out)
        (args.out / "side_by_side.json").write_text(json.dumps(doc, default=str))
    with (args.out / "summary.csv").open("w", newline="") as fh:
        w = csv.DictWriter(fh, fieldnames=list(rows[0]))
        w.writeheader()
        w.writerows(rows)
    lines = [
        "| kernel | tuner | evals | best (re-measured) µs | wall s | t→95% s | score |",
        "|---|---|---|---|---|---|---|",
    ]
    for r in rows:

        def f(v: Any, scale: float = 1.0, fmt: str = ".1f") -> str:
            return (
                "-"
                if v is None or (isinstance(v, float) and not math.isfinite(v))
                else format(v * scale, fmt)
            )

        best = f(r["best_remeasured_s"], 1e6)
        lines.append(
            f"| {r['kernel']} | {r['tuner']} | {r['evaluations']} | {best} | "
            f"{f(r['wall_s'])} | {f(r['time_to_95_s'])} | {f(r['score'], 1.0, '.2f')} |"
        )
    (args.out / "summary.md").write_text("\n".join(lines) + "\n")
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    sys.exit(main())

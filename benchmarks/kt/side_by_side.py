"""gtune against Kernel Tuner, side by side in one run, on the same kernels and space.

    python3 benchmarks/kt/side_by_side.py OUT [--kernels heat3d,box27] [--size 256]
        [--evals 200] [--device 0:0] [--kt-strategies random_sample,genetic_algorithm,...]
    python3 benchmarks/kt/side_by_side.py OUT --report-only

The space. Both tools search the same one: the kernel's parameters and constraints plus
the device's limits (the constraints gtune's MiniZinc model solves), given to Kernel
Tuner as restriction strings with the problem sizes and device limits written in, so its
own constraint solver prunes as gtune's does. Images are taken out of both (Kernel Tuner
passes buffers): the kernel is re-described with ``IMAGE`` fixed to 0 and without the
image technique. Streaming stays in: its launch divides z by the z-chunk, which Kernel
Tuner expresses with ``grid_div_z``. The run checks that Kernel Tuner's space is
gtune's, configuration for configuration, and records both sizes.

The run. For each kernel, in this process, one after another: gtune's hybrid heuristic
(the data-loading technique from the load predictor where a model fits the device, else
every technique) with a budget of ``--evals`` configurations, then each Kernel Tuner
strategy with ``max_fevals=--evals``; both verify every output against the same numpy
reference. Every evaluation is recorded with its wall time since the tool was called
(setup, space construction and compilation included). Then the best configuration each
tool found is re-measured by gtune's evaluator, interleaved over several rounds, so the
final comparison comes from one measurement procedure.

Resumable: ``OUT/side_by_side.json`` is written after every tool of every kernel, and a
second call skips what it holds. ``--report-only`` rebuilds the report from it offline.

The analysis (``gtune.convergence``): best-so-far curves against evaluations and wall
time; the random baseline *calculated* from Kernel Tuner's random sample (the expected
best of k draws, so one lucky random run does not decide anything); evaluations and
seconds to reach 95 % of the best known time; and the methodology score
``(baseline - tuner) / (baseline - best known)`` averaged over the tuning time.

Writes OUT/side_by_side.json, OUT/summary.csv, OUT/summary.md and
OUT/convergence_<kernel>.png. Kernel Tuner is used from its installed wheel, never
copied into gtune.
"""

from __future__ import annotations

import argparse
import copy
import csv
import json
import math
import os
import re
import statistics
import sys
import time
from datetime import datetime
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

import numpy as np

import gtune
from gtune.convergence import RandomBaseline, Trace, summary
from gtune.description import from_dict, load_kernel
from gtune.kernel import TunableKernel, domain_values
from gtune.tuning.events import ConfirmStarted, ResultMeasured, TuningEvent

ROOT = Path(__file__).resolve().parents[2]
KT_STRATEGIES = "random_sample,genetic_algorithm,bayes_opt,simulated_annealing"
BASELINE = "kt:random_sample"


# -- the shared space ------------------------------------------------------------------
def without_images(kernel: TunableKernel) -> TunableKernel:
    """The kernel re-described with IMAGE fixed to 0 and no image technique."""
    data = kernel.to_dict()
    raw = copy.deepcopy(dict(data["raw"]))
    params = raw.get("parameters") or {}
    if "IMAGE" in params:
        params["IMAGE"] = {"values": [0], "default": 0, "doc": "images off: buffers only"}
    techniques = raw.get("techniques") or {}
    techniques.pop("image", None)
    data["raw"] = raw
    return from_dict(data)


def restriction_strings(kernel: TunableKernel, device: Any) -> list[str]:
    """gtune's constraints (kernel, platform) as Python text over tunable parameters only."""
    from gtune.space.model import build_model

    model = build_model(kernel, device)
    env = model.env
    out = []
    for c in model.constraints:
        text = c.expr.text
        for name in sorted(env, key=len, reverse=True):
            text = re.sub(rf"\b{re.escape(name)}\b", str(int(env[name])), text)
        # every operand is a positive integer: gtune's / is integer division
        text = re.sub(r"(?<!/)/(?!/)", "//", text)
        text = re.sub(r"\((\d+)\)", r"\1", text)  # "(64)" reads as a call to Kernel Tuner
        out.append(text)
    return out


def gtune_space(kernel: TunableKernel, device: Any) -> set[tuple[int, ...]]:
    from gtune.space import solve_space

    build = solve_space(kernel, device)
    space = build.space if hasattr(build, "space") else build
    names = kernel.parameter_names
    return {tuple(int(cfg[n]) for n in names) for cfg in space.enumerate()}


def kt_params(kernel: TunableKernel) -> dict[str, list[int]]:
    return {n: sorted(int(v) for v in vals) for n, vals in domain_values(kernel).items()}


def kt_space(
    kernel: TunableKernel, restrictions: list[str], max_threads: int
) -> set[tuple[int, ...]]:
    from kernel_tuner.searchspace import Searchspace

    names = kernel.parameter_names
    ss = Searchspace(
        kt_params(kernel), restrictions, max_threads, block_size_names=["WX", "WY", "WZ"]
    )
    keys = list(kt_params(kernel))
    return {tuple(int(cfg[keys.index(n)]) for n in names) for cfg in ss.list}


# -- the tools ---------------------------------------------------------------------------
class _Recorder:
    """gtune observer: every configuration of the search (not the confirmation round)."""

    def __init__(self, trace: Trace, start: float) -> None:
        self.trace, self.start, self.searching = trace, start, True

    def on_event(self, event: TuningEvent) -> None:
        if isinstance(event, ConfirmStarted):
            self.searching = False
        elif isinstance(event, ResultMeasured) and self.searching:
            r = event.result
            self.trace.add(
                time.monotonic() - self.start, r.median_s if r.ok else math.inf, dict(r.config)
            )


def run_gtune(
    kernel: TunableKernel, device: Any, out: Path, evals: int
) -> tuple[Trace, dict[str, Any]]:
    trace = Trace("gtune:hybrid")
    start = time.monotonic()
    report = gtune.tune(
        kernel,
        device=device,
        strategy="hybrid",
        technique="auto",
        budget=evals,
        store=out / f"gtune-{kernel.name}-{time.time_ns()}.db",
        observer=_Recorder(trace, start),
    )
    info = {
        "notes": list(report.notes),
        "technique": str(getattr(report, "technique_choice", "")),
        "wall_s": time.monotonic() - start,
    }
    return trace, info


def run_kt(
    kernel: TunableKernel,
    device: Any,
    strategy: str,
    evals: int,
    restrictions: list[str],
    arrays: dict[str, np.ndarray],
    refs: dict[str, np.ndarray],
    atol: float,
) -> Trace:
    import kernel_tuner

    from gtune.measure.problem import scalar_values

    names = kernel.parameter_names
    args: list[Any] = []
    answer: list[Any] = []
    scalars = scalar_values(kernel)
    for a in kernel.arguments:
        if a.kind == "buffer":
            args.append(arrays[a.name].copy())
            answer.append(refs.get(a.name))
        else:
            args.append(np.dtype(a.dtype).type(scalars[a.name]))
            answer.append(None)
    sizes = dict(kernel.sizes)
    problem = tuple(sizes.get(n, 1) for n in ("NX", "NY", "NZ"))
    started = time.time()
    results, _env = kernel_tuner.tune_kernel(
        kernel.name,
        kernel.source,
        problem,
        args,
        kt_params(kernel),
        grid_div_x=["WX", "BX", "CX"],
        grid_div_y=["WY", "CY"],
        grid_div_z=["WZ", "CZ", "ZC"] if "ZC" in names else ["WZ", "CZ"],
        block_size_names=["WX", "WY", "WZ"],
        restrictions=restrictions,
        answer=answer,
        atol=atol,
        lang="OpenCL",
        platform=device.platform_index,
        device=device.device_index,
        # with explicit defines Kernel Tuner defines nothing else: add every parameter
        defines={**sizes, **{n: (lambda p, n=n: p[n]) for n in names}},
        strategy=strategy,
        strategy_options={"max_fevals": evals},
        quiet=True,
        verbose=False,
        cache=None,
    )
    trace = Trace(f"kt:{strategy}")
    for r in sorted(results, key=lambda r: str(r["timestamp"])):
        ts = datetime.fromisoformat(str(r["timestamp"])).timestamp()
        t = r.get("time")
        value = float(t) / 1000.0 if isinstance(t, int | float) else math.inf
        trace.add(max(0.0, ts - started), value, {n: int(r[n]) for n in names})
    return trace


def remeasure(
    kernel: TunableKernel, device: Any, configs: dict[str, dict[str, int]], rounds: int
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


# -- the report ----------------------------------------------------------------------------
def plot(kernel: str, traces: list[Trace], baseline: RandomBaseline | None, out: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, 2, figsize=(11, 4))
    for t in traces:
        pts = [(e, s, b) for e, s, b in t.best_so_far() if math.isfinite(b)]
        if not pts:
            continue
        axes[0].step([p[0] for p in pts], [p[2] * 1e6 for p in pts], where="post", label=t.name)
        axes[1].step([p[1] for p in pts], [p[2] * 1e6 for p in pts], where="post", label=t.name)
    if baseline is not None:
        ks = list(range(1, baseline.size + 1))
        axes[0].plot(
            ks,
            [baseline.after_evaluations(k) * 1e6 for k in ks],
            "k--",
            lw=1,
            label="random (calculated)",
        )
        axes[1].plot(
            [k * baseline.seconds_per_evaluation for k in ks],
            [baseline.after_evaluations(k) * 1e6 for k in ks],
            "k--",
            lw=1,
            label="random (calculated)",
        )
    axes[0].set_xlabel("evaluations")
    axes[1].set_xlabel("wall time (s)")
    for ax in axes:
        ax.set_ylabel("best kernel time so far (µs)")
        ax.set_yscale("log")
        ax.legend(fontsize=7)
    fig.suptitle(f"{kernel}: gtune and Kernel Tuner, each tool's own timing")
    fig.tight_layout()
    fig.savefig(out / f"convergence_{kernel}.png", dpi=120)
    plt.close(fig)


def _fmt(v: Any, scale: float = 1.0, spec: str = ".1f") -> str:
    if v is None or (isinstance(v, float) and not math.isfinite(v)):
        return "-"
    return format(v * scale, spec)


def report(doc: dict[str, Any], out: Path) -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = []
    for name, entry in doc["kernels"].items():
        traces = [Trace.from_dict(t) for t in entry.get("traces", {}).values()]
        if not traces:
            continue
        base_trace = next((t for t in traces if t.name == BASELINE), None)
        baseline = RandomBaseline.from_trace(base_trace) if base_trace else None
        remeasured = entry.get("remeasured") or {}
        plot(name, traces, baseline, out)
        if baseline is None:
            continue
        medians = {k: statistics.median(v) for k, v in remeasured.items() if v}
        for row in summary(traces, baseline):
            row["kernel"] = name
            row["best_remeasured_s"] = medians.get(row["tuner"])
            fastest = min(medians.values()) if medians else None
            row["remeasured_vs_fastest"] = (
                medians[row["tuner"]] / fastest if fastest and row["tuner"] in medians else None
            )
            rows.append(row)
    if not rows:
        return rows
    fields = ["kernel", "tuner"] + [k for k in rows[0] if k not in ("kernel", "tuner")]
    with (out / "summary.csv").open("w", newline="") as fh:
        w = csv.DictWriter(fh, fieldnames=fields)
        w.writeheader()
        w.writerows(rows)
    lines = [
        f"# gtune and Kernel Tuner side by side on {doc['device']}",
        "",
        f"Problem size {doc['size']} per dimension, {doc['evals']} evaluations per tool.",
        "",
        "| kernel | tuner | evals | best µs (own timing) | best µs (re-measured) | "
        "vs fastest | wall s | evals to 95 % | s to 95 % | score (time) | score (evals) |",
        "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for r in rows:
        lines.append(
            f"| {r['kernel']} | {r['tuner']} | {r['evaluations']} | {_fmt(r['best_s'], 1e6)} | "
            f"{_fmt(r['best_remeasured_s'], 1e6)} | {_fmt(r['remeasured_vs_fastest'], 1, '.3f')} | "
            f"{_fmt(r['wall_s'])} | {_fmt(r['evaluations_to_target'], 1, 'd')} | "
            f"{_fmt(r['seconds_to_target'])} | {_fmt(r['score_time'], 1, '.2f')} | "
            f"{_fmt(r['score_evaluations'], 1, '.2f')} |"
        )
    tuners = sorted({r["tuner"] for r in rows})
    lines += [
        "",
        "Mean over kernels:",
        "",
        "| tuner | score (time) | score (evals) | re-measured vs fastest (geomean) |",
        "|---|---:|---:|---:|",
    ]
    for tuner in tuners:
        mine = [r for r in rows if r["tuner"] == tuner]
        st = [r["score_time"] for r in mine if r["score_time"] is not None]
        se = [r["score_evaluations"] for r in mine if r["score_evaluations"] is not None]
        rv = [r["remeasured_vs_fastest"] for r in mine if r["remeasured_vs_fastest"]]
        lines.append(
            f"| {tuner} | {_fmt(statistics.fmean(st) if st else None, 1, '.2f')} | "
            f"{_fmt(statistics.fmean(se) if se else None, 1, '.2f')} | "
            f"{_fmt(statistics.geometric_mean(rv) if rv else None, 1, '.3f')} |"
        )
    spaces = ", ".join(
        f"{k}: {v.get('space')} configurations (Kernel Tuner's: {v.get('kt_space')})"
        for k, v in doc["kernels"].items()
    )
    lines += ["", f"Spaces: {spaces}.", ""]
    (out / "summary.md").write_text("\n".join(lines))
    print("\n".join(lines), flush=True)
    return rows


# -- driver ----------------------------------------------------------------------------------
def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("out", type=Path)
    ap.add_argument("--kernels", default="heat3d,box27")
    ap.add_argument("--size", type=int, default=256)
    ap.add_argument("--evals", type=int, default=200)
    ap.add_argument("--device", default=None)
    ap.add_argument("--kt-strategies", default=KT_STRATEGIES)
    ap.add_argument("--rounds", type=int, default=5, help="re-measurement rounds")
    ap.add_argument("--report-only", action="store_true")
    args = ap.parse_args()
    # Honest compile times: PoCL's on-disk kernel cache would serve builds of earlier
    # runs (both tools' workers inherit this; NVIDIA's cache is private per evaluator).
    os.environ.setdefault("POCL_KERNEL_CACHE", "0")
    args.out.mkdir(parents=True, exist_ok=True)
    state = args.out / "side_by_side.json"
    doc: dict[str, Any] = json.loads(state.read_text()) if state.exists() else {}
    if args.report_only:
        report(doc, args.out)
        return 0
    from gtune.measure import select_device
    from gtune.measure.problem import initial_arrays, python_reference, tolerances

    device = select_device(args.device)
    if doc and (
        doc.get("device") != device.name
        or doc.get("evals") != args.evals
        or doc.get("size") != args.size
    ):
        sys.exit(f"{state}: holds a run with other settings; use another OUT")
    doc.update(device=device.name, evals=args.evals, size=args.size)
    doc.setdefault("kernels", {})

    def save() -> None:
        tmp = state.with_suffix(".tmp")
        tmp.write_text(json.dumps(doc))
        tmp.replace(state)

    for name in [k for k in args.kernels.split(",") if k]:
        kernel = load_kernel(ROOT / "stencils" / f"{name}.cl")
        dims = len(kernel.sizes)
        kernel = without_images(
            kernel.with_sizes({n: args.size for n in list(kernel.sizes)[:dims]})
        )
        entry = doc["kernels"].setdefault(name, {"traces": {}})
        restrictions = restriction_strings(kernel, device)
        if "space" not in entry:
            ours = gtune_space(kernel, device)
            theirs = kt_space(kernel, restrictions, device.max_work_group_size)
            entry.update(space=len(ours), kt_space=len(theirs), same_space=ours == theirs)
            if ours != theirs:
                print(f"{name}: the spaces differ: gtune {len(ours)}, Kernel Tuner {len(theirs)}")
            save()
        arrays = initial_arrays(kernel)
        refs = python_reference(kernel, arrays) if kernel.reference.kind == "python" else {}
        # Kernel Tuner compares with numpy.allclose: an absolute tolerance at gtune's
        # relative one, scaled to the reference's magnitude
        scale = max((float(np.max(np.abs(r))) for r in refs.values()), default=1.0)
        atol = tolerances(kernel, refs)[0] * scale if refs else 1e-6
        if "gtune:hybrid" not in entry["traces"]:
            trace, info = run_gtune(kernel, device, args.out, args.evals)
            entry["traces"][trace.name] = trace.to_dict()
            entry["gtune"] = info
            save()
            print(
                f"{name}: gtune best {trace.best * 1e6:.1f} µs in {len(trace.observations)} "
                f"evaluations, {trace.wall_s:.1f} s",
                flush=True,
            )
        for strategy in [s for s in args.kt_strategies.split(",") if s]:
            if f"kt:{strategy}" in entry["traces"]:
                continue
            try:
                trace = run_kt(
                    kernel, device, strategy, args.evals, restrictions, arrays, refs, atol
                )
            except Exception as exc:  # a Kernel Tuner strategy that fails is reported, not fatal
                entry.setdefault("failed", {})[strategy] = f"{type(exc).__name__}: {exc}"
                save()
                print(f"{name}: kt {strategy} failed: {type(exc).__name__}: {exc}", flush=True)
                continue
            entry["traces"][trace.name] = trace.to_dict()
            save()
            print(
                f"{name}: {trace.name} best {trace.best * 1e6:.1f} µs in "
                f"{len(trace.observations)} evaluations, {trace.wall_s:.1f} s",
                flush=True,
            )
        if "remeasured" not in entry:
            finals = {}
            for t in (Trace.from_dict(x) for x in entry["traces"].values()):
                if t.best_config:
                    finals[t.name] = dict(t.best_config)
            entry["remeasured"] = remeasure(kernel, device, finals, args.rounds)
            save()
    report(doc, args.out)
    return 0


if __name__ == "__main__":
    sys.exit(main())

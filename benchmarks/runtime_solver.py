"""A heat3d solver at a size never tuned: default, online tuning and offline-tuned, side by side.

The measurement issue 50 asks for (``gtune.runtime``, docs/runtime.md). On one device,
with ``examples/heat_solver.py``'s solver loop (the heat3d stencil, buffers swapped
after each step, each step's kernel time from its profiling event):

1. ``default``: the solver with the kernel's default configuration (no tuned results),
   for ``--steps`` steps; without ``--steps``, as many as make ``--minutes`` (5.5) of
   it, from a calibration of 20 steps.
2. ``online``: the same steps with online tuning on (``tune_missing=--budget``, an
   empty store): tuning runs in the background while the solver steps with the
   default, then switches. Its wall time includes the tuning.
3. ``offline``: the size tuned beforehand with ``gtune.tune`` (``--offline-budget``;
   its time recorded apart), then the same steps from that store (choice ``tuned``).
4. ``compare``: the configurations of the three, re-measured side by side in
   alternating rounds (``--rounds`` of ``--round-steps`` steps each, interleaved), so
   that "after the switch within 5 % of offline" is measured in one sitting.

The criteria of the issue: the online run's wall time under half the default run's,
and the online configuration's step time within 5 % of the offline one's (in 4).

Each phase writes ``OUT/PHASE.json`` and is skipped when that file exists (a command
limit of 10 minutes: run the phases one at a time with ``--phases``); ``OUT/report.md``
is written from whatever phases are done. Builds are not served from NVIDIA's
compiled-kernel cache (``CUDA_CACHE_DISABLE=1``), so tuning time is honest.

    python benchmarks/runtime_solver.py OUT [--size 512x512x384] [--budget 120s]
        [--offline-budget 300s] [--minutes 5.5 | --steps N] [--device 0:0]
        [--phases default,online,offline,compare] [--quick]

``--quick``: a tiny size, few steps and budgets (PoCL: checks that it runs).
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import math
import os
import platform
import statistics
import sys
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
os.environ.setdefault("CUDA_CACHE_DISABLE", "1")

import numpy as np  # noqa: E402
import pyopencl as cl  # noqa: E402

import gtune.runtime  # noqa: E402
from gtune.api import tune  # noqa: E402
from gtune.description import load_kernel  # noqa: E402
from gtune.runtime.opencl import Launch, Programs, device_limits  # noqa: E402
from gtune.tuned import tuned_kernel  # noqa: E402

KERNEL = ROOT / "stencils" / "heat3d.cl"
PHASES = ("default", "online", "offline", "compare")


def _solver() -> Any:
    spec = importlib.util.spec_from_file_location(
        "heat_solver", ROOT / "examples" / "heat_solver.py"
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["heat_solver"] = module
    spec.loader.exec_module(module)
    return module


SOLVER = _solver()


def context(selector: str | None) -> Any:
    platforms = cl.get_platforms()
    if selector:
        p, d = (int(x) for x in selector.split(":"))
        return cl.Context([platforms[p].get_devices()[d]])
    for plat in platforms:
        gpus = [d for d in plat.get_devices() if d.type & cl.device_type.GPU]
        if gpus:
            return cl.Context([gpus[0]])
    return cl.Context([platforms[0].get_devices()[0]])


def run_summary(run: Any, step: Any, sizes: Mapping[str, int]) -> dict[str, Any]:
    phases = [
        {
            "choice": p.choice,
            "configuration": p.configuration,
            "first_step": p.first_step,
            "steps": p.steps,
            "per_step_s": p.per_step_s,
        }
        for p in run.phases
    ]
    return {
        "sizes": dict(sizes),
        "steps": sum(p["steps"] for p in phases),
        "wall_s": run.wall_s,
        "phases": phases,
        "tuning": step.tuning,
        "tuning_message": step.tuning_message,
        "final_configuration": step.configuration,
        "final_choice": step.choice,
    }


def steps_for(ctx: Any, sizes: Mapping[str, int], args: argparse.Namespace) -> int:
    if args.steps:
        return int(args.steps)
    with gtune.runtime.open_tuned(kernel=KERNEL) as lib:
        calib = SOLVER.solve(ctx, lib, dict(sizes), 20, False)
    per_step = calib.wall_s / 20
    return max(20, math.ceil(args.minutes * 60 / per_step))


def phase_default(ctx: Any, sizes: Mapping[str, int], steps: int, out: Path) -> dict[str, Any]:
    with gtune.runtime.open_tuned(kernel=KERNEL) as lib:
        run = SOLVER.solve(ctx, lib, dict(sizes), steps, False)
        return run_summary(run, lib.kernel_for(ctx, sizes), sizes)


def phase_online(
    ctx: Any, sizes: Mapping[str, int], steps: int, out: Path, budget: str
) -> dict[str, Any]:
    store = out / "online.db"
    if store.exists():
        store.unlink()  # a size never tuned: an empty store
    with gtune.runtime.open_tuned(kernel=KERNEL, tune_missing=budget, store=store) as lib:
        run = SOLVER.solve(ctx, lib, dict(sizes), steps, False)
        step = lib.kernel_for(ctx, sizes)
        data = run_summary(run, step, sizes)
    data["budget"] = budget
    switched = [p for p in data["phases"] if p["choice"] == "tuned"]
    data["switch_step"] = switched[0]["first_step"] if switched else None
    return data


def phase_offline(
    ctx: Any, sizes: Mapping[str, int], steps: int, out: Path, budget: str
) -> dict[str, Any]:
    store = out / "offline.db"
    kernel = load_kernel(KERNEL, dict(sizes))
    started = time.perf_counter()
    report = tune(kernel, device=device_limits(ctx.devices[0]), budget=budget, store=store)
    tuning_s = time.perf_counter() - started
    with gtune.runtime.open_tuned(store, kernel=KERNEL) as lib:
        run = SOLVER.solve(ctx, lib, dict(sizes), steps, False)
        data = run_summary(run, lib.kernel_for(ctx, sizes), sizes)
    data.update(budget=budget, tuning_s=tuning_s, tuned_config=report.best_config)
    data["confirmed_speedup"] = report.speedup
    return data


def phase_compare(
    ctx: Any, sizes: Mapping[str, int], done: Mapping[str, Any], rounds: int, per_round: int
) -> dict[str, Any]:
    """The three configurations in alternating rounds on the same buffers."""
    configs = {
        name: done[name]["final_configuration"]
        for name in ("default", "online", "offline")
        if name in done
    }
    kernel = load_kernel(KERNEL, dict(sizes))
    queue = cl.CommandQueue(ctx, properties=cl.command_queue_properties.PROFILING_ENABLE)
    host = SOLVER.initial(dict(sizes))
    flags = cl.mem_flags.READ_WRITE | cl.mem_flags.COPY_HOST_PTR
    a, b = cl.Buffer(ctx, flags, hostbuf=host), cl.Buffer(ctx, flags, hostbuf=host)
    launches = {}
    programs = Programs()
    for name, config in configs.items():
        tuned = tuned_kernel(kernel, kernel.with_defaults(config), full_template=True)
        program = programs.get(ctx, ctx.devices[0], tuned.source, tuned.compile_options(sizes))
        launches[name] = Launch(tuned, program, sizes)
    times: dict[str, list[float]] = {name: [] for name in launches}
    for _ in range(rounds):
        for name, launch in launches.items():
            total = 0.0
            for _ in range(per_round):
                event = launch(queue, (a, b))
                event.wait()
                total += (event.profile.end - event.profile.start) * 1e-9
                a, b = b, a
            times[name].append(total / per_round)
    medians = {name: statistics.median(t) for name, t in times.items()}
    out: dict[str, Any] = {"configurations": configs, "round_per_step_s": times}
    out["median_per_step_s"] = medians
    if "online" in medians and "offline" in medians:
        out["online_over_offline"] = medians["online"] / medians["offline"]
    return out


def report(done: Mapping[str, Any], out: Path) -> str:
    lines = ["# heat3d solver at a size never tuned: default, online, offline", ""]
    meta = done.get("meta", {})
    lines.append(
        f"Device: {meta.get('device', '?')}; size {meta.get('size', '?')}; "
        f"{meta.get('steps', '?')} steps; online budget {meta.get('budget', '?')}."
    )
    lines += [
        "",
        "| run | wall s | steps by configuration | final per step (µs) |",
        "|---|---|---|---|",
    ]
    for name in ("default", "online", "offline"):
        if name not in done:
            continue
        d = done[name]
        parts = ", ".join(
            f"{p['choice']} {p['steps']} @ {p['per_step_s'] * 1e6:.1f} µs" for p in d["phases"]
        )
        last = d["phases"][-1]["per_step_s"] * 1e6 if d["phases"] else float("nan")
        lines.append(f"| {name} | {d['wall_s']:.1f} | {parts} | {last:.1f} |")
    if "default" in done and "online" in done:
        ratio = done["online"]["wall_s"] / done["default"]["wall_s"]
        lines += ["", f"Online over default wall time: {ratio:.3f} (target < 0.5)."]
        lines.append(
            f"Online tuning: {done['online']['tuning']}; {done['online']['tuning_message']}"
        )
    if "offline" in done:
        lines.append(
            f"Offline tuning took {done['offline']['tuning_s']:.1f} s (not in its wall time)."
        )
    if "compare" in done:
        c = done["compare"]
        med = ", ".join(f"{k} {v * 1e6:.1f} µs" for k, v in c["median_per_step_s"].items())
        lines += ["", f"Side by side, median per step over alternating rounds: {med}."]
        if "online_over_offline" in c:
            lines.append(
                f"Online over offline per step: {c['online_over_offline']:.3f} (target <= 1.05)."
            )
    text = "\n".join(lines) + "\n"
    (out / "report.md").write_text(text)
    return text


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("out", type=Path)
    p.add_argument("--size", default="512x512x384")
    p.add_argument("--steps", type=int, help="steps of each run (default: from --minutes)")
    p.add_argument("--minutes", type=float, default=5.5, help="the default run's length")
    p.add_argument("--budget", default="120s", help="online tuning budget")
    p.add_argument("--offline-budget", default="300s", help="offline tuning budget")
    p.add_argument("--device", help="P:D (default: the first GPU)")
    p.add_argument("--phases", default=",".join(PHASES))
    p.add_argument("--rounds", type=int, default=7)
    p.add_argument("--round-steps", type=int, default=50)
    p.add_argument("--quick", action="store_true", help="tiny: checks that it runs (PoCL)")
    args = p.parse_args(argv)
    if args.quick:
        args.size, args.steps, args.budget, args.offline_budget = "32x32x16", 60, "6", "6"
        args.rounds, args.round_steps = 2, 5
    return args


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    out: Path = args.out
    out.mkdir(parents=True, exist_ok=True)
    nx, ny, nz = (int(v) for v in args.size.lower().split("x"))
    sizes = {"NX": nx, "NY": ny, "NZ": nz}
    ctx = context(args.device)
    done: dict[str, Any] = {}
    for name in (*PHASES, "meta"):
        path = out / f"{name}.json"
        if path.exists():
            done[name] = json.loads(path.read_text())
    if "meta" not in done:
        limits = device_limits(ctx.devices[0])
        done["meta"] = {
            "device": f"{limits.name} ({limits.identity}, driver {limits.driver_version})",
            "size": args.size, "steps": steps_for(ctx, sizes, args), "budget": args.budget,
            "host": platform.node(), "started": time.strftime("%Y-%m-%d %H:%M:%S"),
        }  # fmt: skip
        (out / "meta.json").write_text(json.dumps(done["meta"], indent=1) + "\n")
    steps = int(done["meta"]["steps"])
    for name in args.phases.split(","):
        if name in done:
            continue
        print(f"phase {name}: {steps} steps at {args.size}", file=sys.stderr, flush=True)
        if name == "default":
            done[name] = phase_default(ctx, sizes, steps, out)
        elif name == "online":
            done[name] = phase_online(ctx, sizes, steps, out, args.budget)
        elif name == "offline":
            done[name] = phase_offline(ctx, sizes, steps, out, args.offline_budget)
        elif name == "compare":
            done[name] = phase_compare(ctx, sizes, done, args.rounds, args.round_steps)
        (out / f"{name}.json").write_text(json.dumps(done[name], indent=1, default=str) + "\n")
    print(report(done, out))
    return 0


if __name__ == "__main__":
    np.seterr(all="ignore")
    sys.exit(main())

"""A heat3d solver at a size never tuned: default, online tuning and offline-tuned, side by side.

The measurement issue 50 asks for (``gtune.runtime``, docs/runtime.md). On one device,
with ``examples/heat_solver.py``'s solver loop (the heat3d stencil, buffers swapped
after each step, each step's kernel time from its profiling event), in four phases
that fit two commands of under 9 minutes each (benchmarks/results/runtime/README.md):

1. ``default``: the solver with the kernel's default configuration (no tuned results)
   until ``--minutes`` (5.1) of wall time have passed; its step count is then the
   step count of every run (or ``--steps`` fixes it, for a quick check).
2. ``online``: the same steps with online tuning on (``tune_missing=--budget``, an
   empty store): tuning runs in the background while the solver steps with the
   default, then switches. Its wall time includes the tuning. It is stopped once it
   has run ``--online-cap`` (0.55) times the default run's wall time: past half, the
   criterion has failed, and the report says so with the steps it did.
3. ``offline``: the size tuned beforehand with ``gtune.tune`` (``--offline-budget``,
   300 s, into its own store), its tuning time recorded; the runtime opened on that
   store must choose it (``tuned``).
4. ``compare``: the configurations of the three re-measured side by side in
   alternating rounds (``--rounds`` of ``--round-steps`` steps each, interleaved, each
   configuration first in turn, after a round to warm up; one process, one device),
   so that "after the switch within 5 % of offline" is measured in one sitting. It
   also says how the default's step time here compares with the default run's
   (phases run by another command, perhaps on another machine).

The criteria of the issue: the default run at least 5 minutes, the online run's wall
time under half the default run's (1 and 2 run in the same command, on the same
machine), and the online configuration's step time within 5 % of the offline one's (4).

Each phase writes ``OUT/PHASE.json`` when it is done and is skipped when that file
exists, so a rerun resumes. ``--deadline S`` starts a phase only if its expected length
ends within S seconds of the script's start (the rest is left for the next command,
exit status 0), so a command under ``timeout`` writes what it finished.
``OUT/report.md`` is written from whatever phases are done. Builds are not served from
NVIDIA's compiled-kernel cache (``CUDA_CACHE_DISABLE=1``), so tuning time is honest.

    python benchmarks/runtime_solver.py OUT --phases default,online --deadline 530
    python benchmarks/runtime_solver.py OUT --phases offline,compare --deadline 530
        [--size 512x512x384] [--budget 45s] [--offline-budget 300s] [--minutes 5.1]
        [--device 0:0] [--quick]

``--quick``: a tiny size, a few seconds of default and small budgets (PoCL: checks that
every phase runs and the report is written).
"""

from __future__ import annotations

import argparse
import dataclasses
import importlib.util
import json
import logging
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
from gtune.budget import Budget  # noqa: E402
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


def where(ctx: Any) -> dict[str, str]:
    """The host and device a phase ran on (the report checks phases compared share them)."""
    limits = device_limits(ctx.devices[0])
    return {"host": platform.node(), "device_identity": limits.identity}


def solve(
    ctx: Any,
    lib: gtune.runtime.TunedLibrary,
    sizes: Mapping[str, int],
    *,
    steps: int | None = None,
    min_s: float = 0.0,
    max_s: float = math.inf,
    wait: bool = False,
) -> tuple[Any, Any, bool]:
    """``examples/heat_solver.py``'s loop, for ``steps`` steps, or (``steps`` None) until
    ``min_s`` seconds have passed and one step at least has run; stopped early,
    unfinished, once ``max_s`` have. The
    clock starts before the kernel is asked for (its build, online tuning's start).
    With ``wait`` (``--quick``), the last step waits for online tuning to decide.
    Returns the run, the kernel and whether it finished."""
    queue = cl.CommandQueue(ctx, properties=cl.command_queue_properties.PROFILING_ENABLE)
    host = SOLVER.initial(dict(sizes))
    flags = cl.mem_flags.READ_WRITE | cl.mem_flags.COPY_HOST_PTR
    a, b = cl.Buffer(ctx, flags, hostbuf=host), cl.Buffer(ctx, flags, hostbuf=host)
    run, finished, i = SOLVER.Run(), True, 0
    start = time.perf_counter()
    step = lib.kernel_for(ctx, dict(sizes))
    while steps is None or i < steps:
        elapsed = time.perf_counter() - start
        if steps is None and i > 0 and elapsed >= min_s:
            break  # at least one step: a slow build may take all of min_s
        if elapsed >= max_s:
            finished = False
            break
        if wait and steps is not None and i == steps - 1:
            step.wait_tuning()
        run.step(step, queue, a, b, i)
        a, b = b, a
        i += 1
    queue.finish()
    run.wall_s = time.perf_counter() - start
    return run, step, finished


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
        **tuning_summary(step.tuning_report),
    }


def tuning_summary(report: Any) -> dict[str, Any]:
    """Online tuning's report, where it answered: its time breakdown, each technique's
    search (configurations measured, why it stopped) and its notes."""
    if report is None:
        return {}
    runs = [
        {"technique": r.technique, "measured": r.measured,
         "stop_reason": r.outcome.stop_reason if r.outcome is not None else None}
        for r in report.runs
    ]  # fmt: skip
    return {"tuning_report": {"wall_s": report.wall_s, "time": dataclasses.asdict(report.time),
                              "runs": runs, "notes": list(report.notes)}}  # fmt: skip


def phase_default(
    ctx: Any, sizes: Mapping[str, int], args: argparse.Namespace, done: Mapping[str, Any]
) -> dict[str, Any]:
    """The default configuration for ``--minutes`` of wall time (or ``--steps``)."""
    with gtune.runtime.open_tuned(kernel=KERNEL) as lib:
        run, step, _ = solve(ctx, lib, sizes, steps=args.steps, min_s=args.minutes * 60)
        data = run_summary(run, step, sizes)
    data["minutes_asked"] = args.minutes
    return data


def phase_online(
    ctx: Any, sizes: Mapping[str, int], args: argparse.Namespace, done: Mapping[str, Any]
) -> dict[str, Any]:
    """The default run's steps with online tuning on, from an empty store, stopped at
    ``--online-cap`` times the default run's wall time."""
    store = args.out / "online.db"
    for path in args.out.glob("online.db*"):
        path.unlink()  # a size never tuned: an empty store
    cap = args.online_cap * done["default"]["wall_s"]
    log = logging.FileHandler(args.out / "online.log", mode="w")  # what the tuner said
    log.setFormatter(logging.Formatter("%(relativeCreated)8.0f ms %(name)s: %(message)s"))
    logger = logging.getLogger("gtune")
    level = logger.level
    logger.addHandler(log)
    logger.setLevel(logging.INFO)
    try:
        with gtune.runtime.open_tuned(kernel=KERNEL, tune_missing=args.budget, store=store) as lib:
            run, step, finished = solve(
                ctx, lib, sizes, steps=done["default"]["steps"], max_s=cap, wait=args.quick
            )
            data = run_summary(run, step, sizes)
    finally:  # the phases after this one log as before
        logger.removeHandler(log)
        logger.setLevel(level)
        log.close()
    data.update(budget=args.budget, finished=finished, cap_s=cap)
    switched = [p for p in data["phases"] if p["choice"] == "tuned"]
    data["switch_step"] = switched[0]["first_step"] if switched else None
    return data


def phase_offline(
    ctx: Any, sizes: Mapping[str, int], args: argparse.Namespace, done: Mapping[str, Any]
) -> dict[str, Any]:
    """The size tuned beforehand into its own store; the runtime must then choose it."""
    store = args.out / "offline.db"
    for path in args.out.glob("offline.db*"):
        path.unlink()
    kernel = load_kernel(KERNEL, dict(sizes))
    started = time.perf_counter()
    report = tune(kernel, device=device_limits(ctx.devices[0]), budget=args.offline_budget,
                  store=store)  # fmt: skip
    tuning_s = time.perf_counter() - started
    with gtune.runtime.open_tuned(store, kernel=KERNEL) as lib:
        step = lib.kernel_for(ctx, dict(sizes))
        chosen = {"final_choice": step.choice, "final_configuration": step.configuration}
    return {
        "sizes": dict(sizes), "budget": args.offline_budget, "tuning_s": tuning_s,
        "tuned_config": report.best_config, "confirmed_speedup": report.speedup, **chosen,
    }  # fmt: skip


def phase_compare(
    ctx: Any, sizes: Mapping[str, int], args: argparse.Namespace, done: Mapping[str, Any]
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
    names = list(launches)
    for r in range(-1, args.rounds):  # round -1 warms up and is not kept
        for name in names[r % len(names) :] + names[: r % len(names)]:  # each first in turn
            total = 0.0
            for _ in range(args.round_steps):
                event = launches[name](queue, (a, b))
                event.wait()
                total += (event.profile.end - event.profile.start) * 1e-9
                a, b = b, a
            if r >= 0:
                times[name].append(total / args.round_steps)
    medians = {name: statistics.median(t) for name, t in times.items()}
    out: dict[str, Any] = {"configurations": configs, "round_per_step_s": times}
    out["median_per_step_s"] = medians
    if "online" in medians and "offline" in medians:
        out["online_over_offline"] = medians["online"] / medians["offline"]
    if "default" in medians:  # the default run's own step time, against this sitting's
        out["default_run_over_here"] = (
            done["default"]["phases"][0]["per_step_s"] / medians["default"]
        )
    return out


PHASE_RUNS = {
    "default": phase_default,
    "online": phase_online,
    "offline": phase_offline,
    "compare": phase_compare,
}
NEEDS = {"online": ("default",), "compare": ("default", "online", "offline")}


def expected_s(name: str, args: argparse.Namespace, done: Mapping[str, Any]) -> float:
    """How long phase ``name`` may take (an upper bound, for ``--deadline``)."""
    if name == "default":
        return float(args.minutes) * 60 + 30 if args.steps is None else 0.0
    if name == "online":
        return float(args.online_cap * done["default"]["wall_s"]) + 15  # + closing, 5 s
    if name == "offline":
        wall = Budget.parse(args.offline_budget, "--offline-budget").wall_seconds
        return math.inf if wall is None else wall * 1.25 + 60  # a count: length unknown
    default = float(done["default"]["phases"][0]["per_step_s"])
    return 3 * (int(args.rounds) + 1) * int(args.round_steps) * default * 1.5 + 30


def report(done: Mapping[str, Any], out: Path) -> str:
    lines = ["# heat3d solver at a size never tuned: default, online, offline", ""]
    meta = done.get("meta", {})
    lines.append(
        f"Device: {meta.get('device', '?')}; size {meta.get('size', '?')}; online budget "
        f"{meta.get('budget', '?')}; offline budget {meta.get('offline_budget', '?')}."
    )
    lines += ["", "| run | host | wall s | steps by configuration |", "|---|---|---|---|"]
    for name in ("default", "online"):
        if name in done:
            d = done[name]
            parts = ", ".join(
                f"{p['choice']} {p['steps']} @ {p['per_step_s'] * 1e6:.1f} µs" for p in d["phases"]
            )
            stopped = "" if d.get("finished", True) else " (stopped at the cap)"
            lines.append(
                f"| {name} | {d.get('host', '?')} | {d['wall_s']:.1f} | {parts}{stopped} |"
            )
    lines.append("")
    lines += _verdicts(done)
    text = "\n".join(lines) + "\n"
    (out / "report.md").write_text(text)
    return text


def _verdicts(done: Mapping[str, Any]) -> list[str]:
    """The issue's three criteria, each with the numbers it rests on."""
    lines = []
    if "default" in done:
        wall = done["default"]["wall_s"]
        lines.append(
            f"- Default run: {wall:.1f} s ({'at least' if wall >= 300 else 'UNDER'} 5 minutes)."
        )
    if "default" in done and "online" in done:
        d, o = done["default"], done["online"]
        ratio = o["wall_s"] / d["wall_s"]
        same = d.get("host") == o.get("host") and d.get("device_identity") == o.get(
            "device_identity"
        )
        if o.get("finished", True):
            verdict = "met" if ratio < 0.5 else "NOT met"
            lines.append(f"- Online over default wall time: {ratio:.3f} (target < 0.5: {verdict}).")
        else:
            lines.append(
                f"- Online run stopped at {o['wall_s']:.1f} s ({ratio:.3f} of the default's) "
                f"after {o['steps']} of {d['steps']} steps: target < 0.5 NOT met."
            )
        lines.append(f"  Same host and device as the default run: {'yes' if same else 'NO'}.")
        lines.append(f"  Online tuning: {o['tuning']}; {o['tuning_message']}")
    if "offline" in done:
        off = done["offline"]
        lines.append(
            f"- Offline tuning ({off['budget']}) took {off['tuning_s']:.1f} s (in no run's wall "
            f"time); the runtime chose it as `{off['final_choice']}`."
        )
    if "compare" in done:
        c = done["compare"]
        med = ", ".join(f"{k} {v * 1e6:.1f} µs" for k, v in c["median_per_step_s"].items())
        lines.append(f"- Side by side, median per step over alternating rounds: {med}.")
        if "online_over_offline" in c:
            r = c["online_over_offline"]
            verdict = "met" if r <= 1.05 else "NOT met"
            lines.append(f"  Online over offline per step: {r:.3f} (target <= 1.05: {verdict}).")
        if "default_run_over_here" in c:
            lines.append(
                f"  The default run's step time over the default's here: "
                f"{c['default_run_over_here']:.3f} (1: the two sittings' devices agree)."
            )
    return lines


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("out", type=Path)
    p.add_argument("--size", default="512x512x384")
    p.add_argument("--minutes", type=float, default=5.1, help="the default run's wall time")
    p.add_argument("--steps", type=int, help="steps of every run instead (a quick check)")
    p.add_argument("--budget", default="45s", help="online tuning budget")
    p.add_argument(
        "--online-cap", type=float, default=0.55, help="online stopped at this x default"
    )
    p.add_argument("--offline-budget", default="300s", help="offline tuning budget")
    p.add_argument("--device", help="P:D (default: the first GPU)")
    p.add_argument("--phases", default=",".join(PHASES))
    p.add_argument("--deadline", type=float, help="start no phase that would end after S s")
    p.add_argument("--rounds", type=int, default=7)
    p.add_argument("--round-steps", type=int, default=200)
    p.add_argument("--quick", action="store_true", help="tiny: checks that it runs (PoCL)")
    args = p.parse_args(argv)
    if args.quick:
        args.size, args.minutes, args.budget, args.offline_budget = "32x32x16", 0.05, "6", "10s"
        args.online_cap, args.rounds, args.round_steps = 60.0, 2, 5
    unknown = set(args.phases.split(",")) - set(PHASES)
    if unknown:
        p.error(f"--phases: no phase {', '.join(sorted(unknown))} (phases: {', '.join(PHASES)})")
    return args


def load_done(out: Path) -> dict[str, Any]:
    done: dict[str, Any] = {}
    for name in (*PHASES, "meta"):
        path = out / f"{name}.json"
        if path.exists():
            done[name] = json.loads(path.read_text())
    return done


def main(argv: Sequence[str] | None = None) -> int:
    started = time.perf_counter()
    args = parse_args(argv)
    out: Path = args.out
    out.mkdir(parents=True, exist_ok=True)
    nx, ny, nz = (int(v) for v in args.size.lower().split("x"))
    sizes = {"NX": nx, "NY": ny, "NZ": nz}
    ctx = context(args.device)
    done = load_done(out)
    if "meta" not in done:
        limits = device_limits(ctx.devices[0])
        done["meta"] = {
            "device": f"{limits.name} ({limits.identity}, driver {limits.driver_version})",
            "size": args.size, "budget": args.budget, "offline_budget": args.offline_budget,
            "started": time.strftime("%Y-%m-%d %H:%M:%S"),
        }  # fmt: skip
        (out / "meta.json").write_text(json.dumps(done["meta"], indent=1) + "\n")
    if done["meta"]["size"] != args.size:
        print(f"{out}: holds a run at {done['meta']['size']}, not {args.size}", file=sys.stderr)
        return 2
    left = []
    for name in args.phases.split(","):
        if name in done:
            continue
        missing = [n for n in NEEDS.get(name, ()) if n not in done]
        if missing:
            left.append(f"{name} (needs {', '.join(missing)})")
            continue
        ends = time.perf_counter() - started + expected_s(name, args, done)
        if args.deadline is not None and ends > args.deadline:
            if math.isinf(ends):
                left.append(f"{name} (a budget in configurations: no length to fit --deadline)")
            else:
                left.append(
                    f"{name} (would end at {ends:.0f} s, past --deadline {args.deadline:g})"
                )
            continue
        print(f"phase {name} at {args.size}", file=sys.stderr, flush=True)
        done[name] = {**PHASE_RUNS[name](ctx, sizes, args, done), **where(ctx)}
        (out / f"{name}.json").write_text(json.dumps(done[name], indent=1, default=str) + "\n")
    print(report(done, out))
    if left:
        print("left for the next command: " + "; ".join(left), file=sys.stderr)
    return 0


if __name__ == "__main__":
    np.seterr(all="ignore")
    sys.exit(main())

"""Load-predictor collection throughput: configurations per second, and where time goes.

Scaling over the GPUs of one host, in one invocation with a wall-clock limit (each
setting a process of its own driving the first N GPUs the selector matches, named by
their own selectors, ``0:0,0:1``: one group of workers per GPU; or, with
``--visible-env CUDA_VISIBLE_DEVICES``, seeing only those N GPUs):

    python3 benchmarks/campaign/collect_throughput.py OUT --gpus 1,4,2 --limit 540
    # on PoCL, N "GPUs" simulated as N times the workers on the one CPU device:
    python3 benchmarks/campaign/collect_throughput.py OUT --gpus 1,2 --selector Portable \
        --one-device --kernels star_3d_xyz_r1,dense_1d_x_r1 --size 16x16x16 --budget 3

Every setting collects the same kernels (each technique's search a campaign piece,
see gtune.training.cluster) from an empty store and an empty space cache, with the
same workers per GPU and compile helpers per worker (as a local cluster gives them:
gtune.campaign.schedule.helpers_per_worker of the host's physical cores); the host's
build slots (gtune.measure.buildslots) bound what all of a setting's helpers build at
once, so a setting on fewer GPUs builds with fewer helpers waiting. Every worker's
OpenCL processes start before the first piece; configurations per second are counted
over the *searching* time, from the first piece to the last piece's end, and the start
is reported beside it. After the settings, the baseline the issue compares with: a
direct run (as ``gtune run``: each kernel on its own, its workers started for it) on
one GPU alone (``--direct-gpus N``: on N GPUs at once), for at most ``--direct-s``
seconds. Each phase stops by itself before the limit (a cut phase says so);
OUT/scaling.json, OUT/scaling.md and OUT/scaling.png are written after every phase, so
a run cut short keeps what it did.

A campaign too large for the limit (``--kernels suite``: the whole suite at one shape)
runs with ``--window-s S``: the N-GPU setting searches for S/N seconds, so that every
setting does about the same amount of work if it scales; what each measured is counted
in its store up to its window's end. The windows cut the longest-first order at
different places, so the settings measure different mixes of configurations (a
setting on one GPU spends more of its window on the few longest searches): beside the
count, each configuration is weighed by the cost model's seconds for its technique on
its stencil (``work``), and the speed-up of work per second is the one to trust there.

    python3 benchmarks/campaign/collect_throughput.py OUT --gpus 1,4,2 --limit 545 \
        --kernels suite --budget 100 --window-s 200

Before the phases, the scheduler's own cost model forecasts the speed-ups (the pieces'
model lengths on the schedule's rules; no start costs), written beside the measurement.

The older form, settings run one after another in this process:

    python3 benchmarks/campaign/collect_throughput.py OUT --setting '0:0*1' --setting 'NVIDIA*1'
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

SAMPLE = (
    # 26 suite kernels at one shape: every pattern, radii 1-3, 1D/2D/3D extents (the
    # 2D-in-xy ones stream slowly, dense 3D r2's vector loads build slowly: the long
    # pieces the schedule has to start first)
    "dense_1d_x_r1,dense_1d_y_r2,dense_1d_z_r2,dense_2d_xy_r1,dense_2d_xz_r1,dense_2d_yz_r2,"
    "dense_3d_xyz_r1,dense_3d_xyz_r2,star_2d_xy_r1,star_2d_xy_r2,star_2d_xz_r2,star_2d_yz_r3,"
    "star_3d_xyz_r1,star_3d_xyz_r2,star_3d_xyz_r3,star_3d_xyz_r4,thumbtack_3d_x_r1,"
    "thumbtack_3d_y_r2,thumbtack_3d_z_r3,diamond_2d_xz_r2,diamond_2d_yz_r3,diamond_3d_xyz_r2,"
    "diamond_3d_xyz_r3,nocorners_2d_xz_r2,nocorners_2d_yz_r3,nocorners_3d_xyz_r1"
)


def _size(text: str) -> tuple[int, int, int]:
    size = tuple(int(v) for v in text.split("x"))
    if len(size) != 3:
        raise SystemExit(f"--size: expected NXxNYxNZ, got {text!r}")
    return size


def _stored(store: Path) -> int:
    """Results in a phase's store: every configuration measured there."""
    from gtune.store import open_store

    if not store.exists():
        return 0
    s = open_store(str(store))
    try:
        return int(s.count())
    finally:
        s.close()


def _stop_at(when: float) -> Any:
    """A cancel token cancelled at ``when`` (time.time())."""
    from gtune.tuning.events import CancelToken

    token = CancelToken()
    timer = threading.Timer(max(0.0, when - time.time()), token.cancel)
    timer.daemon = True
    timer.start()
    return token


# ---------------------------------------------------------------- one setting (child)


def _stop_when_searching(started: Path, window: float, token: Any, give_up: float) -> None:
    """Cancel ``token`` ``window`` seconds after the campaign starts searching (its
    ``cluster.json`` says when: every worker started, the first piece handed out)."""
    while time.time() < give_up and not token.cancelled:
        data = _read(started)
        if data is not None and data.get("searching_from"):
            left = float(data["searching_from"]) + window - time.time()
            timer = threading.Timer(max(0.0, left), token.cancel)
            timer.daemon = True
            timer.start()
            return
        time.sleep(0.2)


def _measured_between(store: Path, start: float, end: float) -> tuple[int, list[Any]]:
    """Results written to ``store`` from ``start`` to ``end`` (time.time()): their
    count and the rows (for the work they stand for)."""
    from gtune.store import open_store

    if not store.exists():
        return 0, []
    s = open_store(str(store))
    try:
        rows = [r for r in s.rows(history=True) if start <= r.created <= end]
    finally:
        s.close()
    return len(rows), rows


def _work(rows: list[Any], kernels: list[Any]) -> float:
    """What ``rows`` stand for in the scheduler's model-seconds: each configuration its
    technique's gtune.campaign.schedule.seconds_per_config on its stencil. Settings
    that measure different mixes (a time window cuts each setting elsewhere in the
    longest-first order) compare by this rather than by their counts alone."""
    from gtune.campaign.schedule import seconds_per_config
    from gtune.description import load_kernel
    from gtune.loadpredict.features import traits_of
    from gtune.tuning.techniques import technique_of

    loaded: dict[str, tuple[Any, Any]] = {}
    by_name = {k.name: k for k in kernels}
    total = 0.0
    for r in rows:
        name = str(r.kernel_name).split(":")[0]
        if name not in loaded:
            item = by_name.get(name)
            if item is None:
                loaded[name] = (None, None)
            else:
                kernel = load_kernel(item.path, item.sizes)
                loaded[name] = (kernel, traits_of(kernel))
        kernel, traits = loaded[name]
        tech = technique_of(kernel, r.result.config) if kernel is not None else None
        total += seconds_per_config(tech, traits)
    return total


def child_setting(args: argparse.Namespace) -> int:
    """One setting: the collection on every device the selector matches here."""
    from gtune.campaign.runner import matching, physical_devices
    from gtune.device import DeviceLimits
    from gtune.training.cluster import collect_on_cluster
    from gtune.training.train import suite_kernels, time_line

    out: Path = args.out
    out.mkdir(parents=True, exist_ok=True)
    kernels = suite_kernels(
        Path(args.store_dir) / "kernels",
        [_size(args.size)],
        names=_names(args.kernels),
        real=False,
    )
    devices = matching(args.selector, physical_devices())
    if not devices:
        raise SystemExit(f"no OpenCL device matches {args.selector!r}")
    device = DeviceLimits.from_dict(devices[0])
    store = Path(args.store_dir) / "store.db"
    token = _stop_at(args.stop_at)
    started_json = out / "collect" / "cluster.json"
    window = args.window_s / max(1, int(args.gpus)) if args.window_s else None
    if window:  # this setting searches its share of the window: window / GPUs
        threading.Thread(
            target=_stop_when_searching,
            args=(started_json, window, token, args.stop_at),
            daemon=True,
        ).start()
    t0, started_at = time.monotonic(), time.time()
    run = collect_on_cluster(
        kernels,
        device,
        selector=args.selector,
        heuristic="hybrid",
        store_url=str(store.resolve()),
        dataset_path=out / "dataset.csv",
        work_dir=out / "collect",
        budget=args.budget,
        techniques=[t for t in args.techniques.split(",") if t],
        compile_workers=args.compile_workers,
        workers_per_device=args.workers_per_device,
        cancel=token,
    )
    cut_at = time.time()
    wall = time.monotonic() - t0
    ledger = out / "collect" / "tasks.jsonl"
    pieces = (
        [json.loads(x) for x in ledger.read_text().splitlines() if x.strip()]
        if ledger.exists()
        else []
    )
    stored = _stored(store)
    span = (
        max(float(p["ended_at"]) for p in pieces) - min(float(p["started_at"]) for p in pieces)
        if pieces and all("started_at" in p for p in pieces)
        else None
    )
    began = _read(started_json) or {}
    searching_from = float(began.get("searching_from") or started_at)
    # the searching time: from the first piece to the window's end (a cut setting) or
    # to the last piece's end (a setting that finished everything)
    if token.cancelled:
        end = min(cut_at, searching_from + window) if window else cut_at
    else:
        end = max((float(p["ended_at"]) for p in pieces), default=cut_at)
    searched, rows = _measured_between(store, searching_from, end)
    search_s = max(1e-9, end - searching_from)
    work = _work(rows, kernels)
    row = {
        "gpus": args.gpus,
        "devices": len(devices),
        "device": device.name,
        # every worker started (those that finished no piece in a window included)
        "workers": len(began.get("started") or []) or len({str(p.get("worker")) for p in pieces}),
        "workers_per_device": args.workers_per_device,
        "compile_workers": args.compile_workers,
        "kernels": len(kernels),
        "labelled": len(run.done),
        "pieces": len(pieces),
        "cut": token.cancelled,
        "window_s": window,
        "measured": stored,
        "pieces_measured": run.measured,
        "wall_s": wall,
        # the cluster's start and every worker's OpenCL processes, before any search
        "start_s": began.get("start_s"),
        "warm_s": began.get("warm_s"),
        "cores": began.get("cores"),
        "build_slots": began.get("build_slots"),
        "helpers": sorted({int(w["helpers"]) for w in (began.get("workers") or {}).values()}),
        "worker_starts": [
            {k: w.get(k) for k in ("worker", "start_s", "helpers", "error")}
            for w in began.get("started") or []
        ],
        "start_delay_s": (min(float(p["started_at"]) for p in pieces) - started_at)
        if pieces and all("started_at" in p for p in pieces)
        else None,
        "span_s": span,
        "search_s": search_s,
        "searched": searched,
        "configs_per_s": stored / wall if wall > 0 else None,
        "configs_per_s_span": stored / span if span else None,
        # the headline: configurations per second of searching (start excluded)
        "configs_per_s_search": searched / search_s,
        "work_s": work,  # the same configurations in the cost model's seconds
        "work_per_s": work / search_s,
        "build_wait_s": sum(
            float((p.get("pool") or {}).get("build_wait_s") or 0.0)
            for p in _last_per_worker(pieces)
        ),
        "longest_piece_s": max((float(p["wall_s"]) for p in pieces), default=None),
        "summed_piece_s": sum(float(p["wall_s"]) for p in pieces),
        "time": run.time,
        "summary": time_line(run),
    }
    (out / "setting.json").write_text(json.dumps(row, indent=2) + "\n")
    print(json.dumps({k: v for k, v in row.items() if k != "time"}), flush=True)
    return 0


def _last_per_worker(pieces: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Each worker's last piece (its pool's counts are the worker's totals so far)."""
    last: dict[str, dict[str, Any]] = {}
    for p in sorted(pieces, key=lambda p: float(p.get("ended_at") or 0.0)):
        last[str(p.get("worker"))] = p
    return list(last.values())


def _names(text: str) -> list[str] | None:
    """``--kernels``: names or patterns; ``suite``: every suite kernel."""
    return None if text == "suite" else text.split(",")


def child_direct(args: argparse.Namespace) -> int:
    """Direct runs (as ``gtune run``) of this process's kernels on the one device here."""
    from gtune.api import tune
    from gtune.training.train import suite_kernels
    from gtune.tuning.techniques import OracleTechniquePolicy

    out: Path = args.out
    out.mkdir(parents=True, exist_ok=True)
    kernels = suite_kernels(
        Path(args.store_dir) / "kernels",
        [_size(args.size)],
        names=_names(args.kernels),
        real=False,
    )
    techniques = tuple(t for t in args.techniques.split(",") if t)
    whole = str(int(args.budget) * len(techniques)) if args.budget.isdigit() else args.budget
    store = Path(args.store_dir) / "direct.db"
    token = _stop_at(args.stop_at)
    t0, done = time.monotonic(), []
    split: dict[str, float] = {}
    for k in kernels:
        if token.cancelled:
            break
        report = tune(
            str(k.path),
            sizes=k.sizes,
            device=args.selector or None,
            technique=OracleTechniquePolicy(name="all", note="", only=techniques),
            budget=whole,
            store=str(store.resolve()),
            confirm=None,
            cancel=token,
        )
        if not token.cancelled:
            done.append(k.name)
        for key, value in report.time.to_dict().items():
            split[key] = split.get(key, 0.0) + value
    wall = time.monotonic() - t0
    stored = _stored(store)
    row = {
        "gpu": args.gpus,
        "kernels": [k.name for k in kernels],
        "finished": done,
        "cut": token.cancelled,
        "measured": stored,
        "wall_s": wall,
        "configs_per_s": stored / wall if wall > 0 else None,
        "time": split,
    }
    (out / "direct.json").write_text(json.dumps(row, indent=2) + "\n")
    print(json.dumps({k: v for k, v in row.items() if k != "time"}), flush=True)
    return 0


# ---------------------------------------------------------------- the parent


def _child_env(args: argparse.Namespace, visible: list[int], cache: Path) -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), env.get("PYTHONPATH", "")]))
    env["GTUNE_CACHE"] = str(cache)  # every phase solves its spaces itself
    if args.build_slots is not None:
        env["GTUNE_BUILD_SLOTS"] = str(args.build_slots)  # the local cluster's override
    if args.visible_env and not args.one_device:
        # the host's own list, when it has one, is what the indices count in
        given = [x for x in os.environ.get(args.visible_env, "").split(",") if x.strip()]
        env[args.visible_env] = ",".join(given[i] if i < len(given) else str(i) for i in visible)
    return env


def _spawn(argv: list[str], env: dict[str, str], log: Path) -> subprocess.Popen[bytes]:
    fh = log.open("wb")
    return subprocess.Popen(
        [sys.executable, str(Path(__file__).resolve()), *argv],
        env=env,
        stdout=fh,
        stderr=subprocess.STDOUT,
        start_new_session=True,  # its own group: stopped as a whole if it overruns
    )


def _wait(proc: subprocess.Popen[bytes], until: float) -> int | None:
    """The child's exit status, or None after it was stopped at ``until``."""
    try:
        return proc.wait(timeout=max(1.0, until - time.time()))
    except subprocess.TimeoutExpired:
        pass
    for sig in (signal.SIGTERM, signal.SIGKILL):
        try:
            os.killpg(proc.pid, sig)
            proc.wait(timeout=10)
            break
        except ProcessLookupError:
            break
        except subprocess.TimeoutExpired:
            continue
    return None


def host_plan(args: argparse.Namespace) -> dict[str, Any]:
    """The host's GPUs and each GPU's workers and helpers, the same in every setting."""
    from gtune.campaign.host import host_cores
    from gtune.campaign.runner import host_gpus, matching, physical_devices
    from gtune.campaign.schedule import (
        build_slots,
        device_share,
        device_workers,
        helpers_per_worker,
    )

    machine = physical_devices()
    found = matching(args.selector, machine)
    if not found:
        names = "; ".join(f"{d.get('selector')} {d.get('name')}" for d in machine)
        raise SystemExit(f"no OpenCL device matches {args.selector!r}; devices: {names}")
    from gtune.measure.buildslots import BUILD_SLOTS_ENV

    topology = host_cores()
    cores = topology.physical  # what the campaign budgets: physical cores
    gpus = max(1, host_gpus(machine))
    share = device_share(cores, gpus, gpus)
    kind = str(found[0].get("type", ""))
    per = args.workers_per_gpu or device_workers(kind, 1, share)
    # as a local cluster gives them (gtune.campaign.runner.worker_specs): the same in
    # every setting; the build slots bound what all of a setting's helpers build
    helpers = args.compile_workers or helpers_per_worker(cores, gpus, per)
    try:  # the cards as the driver names them, where it can
        smi = subprocess.run(["nvidia-smi", "-L"], capture_output=True, text=True, timeout=30)
        cards = smi.stdout.splitlines()
    except (OSError, subprocess.TimeoutExpired):
        cards = []
    return {
        "cards": cards,
        "devices": [f"{d.get('selector')} {d.get('name')}" for d in found],
        "selectors": [str(d.get("selector")) for d in found],
        "host_gpus": gpus,
        "cores": cores,
        "topology": topology.to_dict(),
        "cores_per_gpu": share,
        "workers_per_gpu": per,
        "compile_workers": helpers,
        "build_slots": {n: build_slots(cores, n) for n in range(1, gpus + 1)},
        "build_slots_given": os.environ.get(BUILD_SLOTS_ENV) or None,
    }


def kernel_names(args: argparse.Namespace) -> list[str]:
    """The kernels ``--kernels`` names, in the suite's order (``suite``: all of them)."""
    from gtune.training.train import suite_kernels

    if args.kernels != "suite":
        return [k for k in args.kernels.split(",") if k]
    with tempfile.TemporaryDirectory(prefix="gtune-names-") as tmp:
        return [k.name for k in suite_kernels(Path(tmp), [_size(args.size)], real=False)]


def scaling(args: argparse.Namespace) -> int:
    t_start = time.time()
    deadline = t_start + args.limit
    out: Path = args.out
    out.mkdir(parents=True, exist_ok=True)
    host = host_plan(args)
    counts = [int(n) for n in args.gpus.split(",") if n]
    if not args.one_device and max(counts) > len(host["devices"]):
        raise SystemExit(f"--gpus {args.gpus}: only {len(host['devices'])} devices match")
    scratch = Path(tempfile.mkdtemp(prefix="gtune-scaling-"))
    stores = out / "stores" if args.keep_stores else scratch
    result: dict[str, Any] = {
        "argv": sys.argv[1:],
        "host": host,
        "kernels": kernel_names(args),
        "size": args.size,
        "budget": args.budget,
        "techniques": args.techniques.split(","),
        "settings": [],
        "direct": [],
        "notes": [],
    }

    def save() -> None:
        (out / "scaling.json").write_text(json.dumps(result, indent=2) + "\n")
        write_markdown(out / "scaling.md", result)
        write_plot(out / "scaling.png", result)

    common = [
        "--kernels",
        args.kernels,
        "--size",
        args.size,
        "--budget",
        args.budget,
        "--techniques",
        args.techniques,
    ]

    def selector(gpus: list[int]) -> list[str]:
        """The devices a phase drives: its GPUs' own selectors (``0:0,0:1``), or the
        selector as given where a variable shows the phase only its GPUs."""
        if args.one_device or args.visible_env:
            return ["--selector", args.selector]
        return ["--selector", ",".join(host["selectors"][g] for g in gpus)]

    try:
        result["model"] = predicted(args, counts, host["workers_per_gpu"], scratch / "model")
    except Exception as exc:  # a forecast only: the measurement goes on without it
        result["notes"].append(f"no forecast: {type(exc).__name__}: {exc}")
    # the first phase should not pay for a cold file cache (imports, the driver's
    # libraries) more than the others: load them once, unmeasured
    warm = "import distributed, gtune.api, gtune.training.cluster, gtune.measure as m"
    try:
        subprocess.run(
            [sys.executable, "-c", warm + "; m.list_devices()"],
            env=_child_env(args, [0], scratch / "warm"),
            timeout=120,
            check=False,
        )
    except subprocess.TimeoutExpired:
        result["notes"].append("loading the libraries once before the phases took over 120 s")
    phases: list[int | str] = [*counts, "direct"] if args.direct_s > 0 else list(counts)
    for i, phase in enumerate(phases):
        # what the phases after this one need at least, kept back from this one
        later = sum(args.min_phase_s for _ in phases[i + 1 :])
        stop = deadline - later - args.grace_s
        if stop - time.time() < args.min_phase_s / 2:
            result["notes"].append(f"phase {phase} not run: the limit left too little time")
            save()
            continue
        if phase == "direct":
            n = 1 if args.one_device else max(1, min(args.direct_gpus, max(counts)))
            stop = min(stop, time.time() + args.direct_s)
            names = kernel_names(args)
            procs = []
            for g in range(n):
                mine = names[g::n]
                if not mine:
                    continue
                work = out / f"direct-gpu{g}"
                (stores / f"direct-gpu{g}").mkdir(parents=True, exist_ok=True)
                argv = [
                    "--child",
                    "direct",
                    str(work),
                    *common,
                    "--kernels",
                    ",".join(mine),
                    *selector([g]),
                    "--gpus",
                    str(g),
                    "--stop-at",
                    str(stop),
                    "--store-dir",
                    str(stores / f"direct-gpu{g}"),
                ]
                env = _child_env(args, [g], scratch / f"cache-direct-{g}")
                procs.append((g, work, _spawn(argv, env, out / f"direct-gpu{g}.log")))
            for g, work, proc in procs:
                rc = _wait(proc, stop + args.grace_s)
                row = _read(work / "direct.json")
                if row is None:
                    result["notes"].append(f"direct run on GPU {g} left no result (exit {rc})")
                else:
                    result["direct"].append(row)
            save()
            continue
        n = int(phase)
        work = out / f"gpus-{n}"
        (stores / f"gpus-{n}").mkdir(parents=True, exist_ok=True)
        per = host["workers_per_gpu"] * (n if args.one_device else 1)
        argv = [
            "--child",
            "setting",
            str(work),
            *common,
            *selector(list(range(n))),
            "--gpus",
            str(n),
            "--stop-at",
            str(stop),
            "--store-dir",
            str(stores / f"gpus-{n}"),
            "--workers-per-device",
            str(per),
            "--compile-workers",
            str(host["compile_workers"]),
            "--window-s",
            str(args.window_s),
        ]
        env = _child_env(args, list(range(n)), scratch / f"cache-{n}")
        rc = _wait(_spawn(argv, env, out / f"gpus-{n}.log"), stop + args.grace_s)
        row = _read(work / "setting.json")
        if row is None:
            result["notes"].append(f"{n} GPU(s) left no result (exit {rc}); see gpus-{n}.log")
        else:
            result["settings"].append(row)
            if not args.one_device and int(row["devices"]) != n:
                result["notes"].append(f"the {n}-GPU setting ran on {row['devices']} devices")
        save()
    result["wall_s"] = time.time() - t_start
    save()
    import shutil

    shutil.rmtree(scratch, ignore_errors=True)  # space caches, rendered kernels, stores
    print((out / "scaling.md").read_text())
    return 0


def predicted(
    args: argparse.Namespace, counts: list[int], per_gpu: int, work: Path
) -> dict[str, Any]:
    """What the scheduler's own cost model expects, before anything runs: each piece
    its configurations times gtune.campaign.schedule.seconds_per_config (seconds on an
    H100 with one worker and eight helpers), scheduled by gtune.campaign.schedule's
    rules on ``per_gpu`` workers per GPU. A forecast to hold the measurement against."""
    from gtune.campaign.schedule import plan, seconds_per_config, simulate
    from gtune.campaign.spec import CampaignTask
    from gtune.description import load_kernel
    from gtune.loadpredict.features import traits_of
    from gtune.training.train import suite_kernels

    kernels = suite_kernels(work, [_size(args.size)], names=_names(args.kernels), real=False)
    techniques = [t for t in args.techniques.split(",") if t]
    tasks, traits = [], {}
    for k in kernels:
        kernel = load_kernel(k.path, k.sizes)
        traits[k.name] = traits_of(kernel)
        tasks += [
            CampaignTask(
                kernel=str(k.path),
                label=k.name,
                sizes=tuple(k.sizes.items()),
                device="",
                strategy="hybrid",
                technique=t,
                budget=args.budget,
                confirm=False,
            )
            for t in techniques
            if t in kernel.techniques
        ]
    pieces = plan(
        tasks, lambda t: [], rate_of=lambda t: seconds_per_config(t.technique, traits[t.label])
    )
    cost = {p.key: p.cost for p in pieces}
    one = simulate(pieces, lambda p: cost[p.key], per_gpu).makespan
    rows = []
    for n in counts:
        sim = simulate(pieces, lambda p: cost[p.key], per_gpu * n)
        rows.append(
            {
                "gpus": n,
                "makespan": sim.makespan,
                "speedup": one / sim.makespan if sim.makespan else None,
            }
        )
    return {
        "summed_piece_s": sum(cost.values()),
        "longest_piece_s": max(cost.values()),
        "longest_piece": max(pieces, key=lambda p: p.cost).key,
        "settings": rows,
    }


def _read(path: Path) -> dict[str, Any] | None:
    try:
        data: dict[str, Any] = json.loads(path.read_text())
        return data
    except (OSError, json.JSONDecodeError):
        return None


def _fmt(v: Any, spec: str = ".1f") -> str:
    return "-" if v is None else format(v, spec)


def _x(v: float | None) -> str:
    return "-" if v is None else f"{v:.2f}x"


RATES = ("configs_per_s", "configs_per_s_span", "configs_per_s_search", "work_per_s")


def speedups(result: dict[str, Any]) -> dict[int, dict[str, float | None]]:
    """Each setting's rates (configurations per second over its wall time, its span,
    its searching time; model-seconds of work per second) over the one-GPU setting's."""
    rows = {int(r["gpus"]): r for r in result["settings"]}
    one = rows.get(1)
    out: dict[int, dict[str, float | None]] = {}
    for n, r in rows.items():
        out[n] = {}
        for key in RATES:
            base = one.get(key) if one else None
            out[n][key] = r[key] / base if base and r.get(key) else None
    return out


def direct_rate(result: dict[str, Any]) -> float | None:
    """Configurations per second of a direct run on one GPU (the mean over GPUs)."""
    rates = [float(d["configs_per_s"] or 0) for d in result["direct"]]
    return sum(rates) / len(rates) if rates and sum(rates) > 0 else None


def write_markdown(path: Path, result: dict[str, Any]) -> None:
    host = result["host"]
    ups = speedups(result)
    topo = host.get("topology") or {}
    kernels = result["kernels"]
    lines = [
        f"Collection campaign: {len(kernels)} suite kernels at {result['size']}, "
        f"techniques {', '.join(result['techniques'])}, {result['budget']} configurations "
        "each (hybrid heuristic).",
        f"Host: {topo.get('logical', '?')} CPUs, {host['cores']} physical cores "
        f"({topo.get('source', '?')}), {host['host_gpus']} GPUs; each GPU "
        f"{host['workers_per_gpu']} workers x {host['compile_workers']} compile helpers; "
        "build slots (all workers' builds at once) "
        + ", ".join(f"{v} on {k} GPU(s)" for k, v in (host.get("build_slots") or {}).items())
        + (f" (given: {host['build_slots_given']})" if host.get("build_slots_given") else "")
        + ".",
        "",
        "Searching: from the first piece (every worker started) to the last piece's end, or "
        "to the end of the setting's window; start: the cluster and every worker's OpenCL "
        "processes, before it. Work: the configurations in the cost model's seconds "
        "(settings cut by a window measure different mixes).",
        "",
        "| GPUs | workers | start (s) | searching (s) | configurations | configurations/s "
        "| speed-up | per GPU | work speed-up | wall (s) | configurations/s (wall) "
        "| speed-up (wall) | longest piece (s) | build-slot wait (s) | cut |",
        "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- "
        "| --- |",
    ]
    for r in result["settings"]:
        n = int(r["gpus"])
        u = ups.get(n, {})
        search = r.get("configs_per_s_search")
        per = search / n if search else None
        lines.append(
            f"| {n} | {r['workers']} | {_fmt(r.get('start_s'))} | {_fmt(r.get('search_s'))} | "
            f"{r.get('searched', r['measured'])} | {_fmt(search)} | "
            f"{_x(u.get('configs_per_s_search'))} | {_fmt(per)} | {_x(u.get('work_per_s'))} | "
            f"{_fmt(r['wall_s'])} | {_fmt(r['configs_per_s'])} | "
            f"{_x(u.get('configs_per_s'))} | {_fmt(r['longest_piece_s'])} | "
            f"{_fmt(r.get('build_wait_s'))} | {'yes' if r['cut'] else 'no'} |"
        )
    if result["direct"]:
        lines += [
            "",
            "Direct runs (as `gtune run`: each kernel on its own, its workers started for "
            "it; one process per GPU):",
            "",
            "| GPU | kernels finished | configurations | wall (s) | configurations/s | cut |",
            "| --- | --- | --- | --- | --- | --- |",
        ]
        for d in result["direct"]:
            lines.append(
                f"| {d['gpu']} | {len(d['finished'])} of {len(d['kernels'])} | "
                f"{d['measured']} | {_fmt(d['wall_s'])} | {_fmt(d['configs_per_s'])} | "
                f"{'yes' if d['cut'] else 'no'} |"
            )
        direct = direct_rate(result)
        if direct:
            ratios = [
                (int(r["gpus"]), float(r.get("configs_per_s_search") or 0) / int(r["gpus"]))
                for r in sorted(result["settings"], key=lambda r: int(r["gpus"]))
            ]
            per_gpu = ", ".join(f"{v / direct:.2f}x on {n} GPU(s)" for n, v in ratios)
            lines += ["", f"Campaign per GPU (searching) over a direct run: {per_gpu}."]
    model = result.get("model")
    if model:
        forecast = ", ".join(f"{_x(r['speedup'])} on {r['gpus']} GPU(s)" for r in model["settings"])
        lines += [
            "",
            f"The scheduler's cost model expected: {forecast} (schedule only, no start "
            f"costs; longest piece {model['longest_piece']}, "
            f"{_fmt(model['longest_piece_s'])} model-seconds of "
            f"{_fmt(model['summed_piece_s'])}).",
        ]
    if host.get("cards"):
        lines += ["", "Cards: " + "; ".join(host["cards"])]
    for note in result["notes"]:
        lines.append(f"\nNote: {note}")
    path.write_text("\n".join(lines) + "\n")


def write_plot(path: Path, result: dict[str, Any]) -> None:
    if not result["settings"]:
        return
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    rows = sorted(result["settings"], key=lambda r: int(r["gpus"]))
    fig, (ax, bx) = plt.subplots(1, 2, figsize=(9, 3.6))
    n = [int(r["gpus"]) for r in rows]
    rate = [float(r.get("configs_per_s_search") or 0) for r in rows]
    one = next((rate[i] for i, r in enumerate(rows) if int(r["gpus"]) == 1), None)
    ax.plot(n, rate, "o-", label="campaign (searching)")
    wall = [float(r["configs_per_s"] or 0) for r in rows]
    ax.plot(n, wall, "s--", label="campaign (wall, start included)")
    if one:
        ax.plot(n, [one * k for k in n], ":", color="grey", label="linear from 1 GPU")
    ax.set_xlabel("GPUs")
    ax.set_ylabel("configurations / s")
    ax.set_xticks(n)
    ax.legend(fontsize=8)
    per = [r / k for r, k in zip(rate, n, strict=True)]
    bx.bar([f"{k} GPU" for k in n], per, label="campaign, per GPU")
    direct = direct_rate(result)
    if direct:
        bx.axhline(direct, color="red", ls="--", label="direct run on one GPU")
    bx.set_ylabel("configurations / s per GPU")
    bx.legend(fontsize=8)
    fig.suptitle(f"collection campaign, {len(result['kernels'])} kernels at {result['size']}")
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


# ---------------------------------------------------------------- the older settings form


def settings(args: argparse.Namespace) -> int:
    from gtune.api import tune
    from gtune.measure import select_device
    from gtune.training.cluster import collect_on_cluster
    from gtune.training.train import suite_kernels, time_line
    from gtune.tuning.techniques import OracleTechniquePolicy

    args.out.mkdir(parents=True, exist_ok=True)
    size = _size(args.size)
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
    measured, t0, split = 0, time.monotonic(), dict[str, float]()
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


def parser() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("out", type=Path)
    ap.add_argument("--gpus", help="scaling: GPU counts, run in this order (e.g. 1,4,2)")
    ap.add_argument("--setting", action="append", help="older form: SELECTOR*WORKERS")
    ap.add_argument(
        "--kernels",
        default=None,
        help="suite kernels (patterns), or 'suite' for all of them; default: a sample",
    )
    ap.add_argument("--size", default="256x256x256")
    ap.add_argument("--budget", default="50", help="each technique's search")
    ap.add_argument("--techniques", default="global,vec,stream")
    ap.add_argument("--selector", default="NVIDIA", help="scaling: the GPUs' device selector")
    ap.add_argument(
        "--visible-env",
        default="",
        help="scaling: a variable that shows a setting its first N GPUs (e.g. "
        "CUDA_VISIBLE_DEVICES); default: the GPUs' own selectors (0:0,0:1,...)",
    )
    ap.add_argument(
        "--one-device",
        action="store_true",
        help="scaling on one device (PoCL): N GPUs simulated as N times the workers",
    )
    ap.add_argument("--limit", type=float, default=540.0, help="scaling: seconds for all")
    ap.add_argument("--direct-s", type=float, default=60.0, help="the direct runs' seconds")
    ap.add_argument(
        "--direct-gpus",
        type=int,
        default=1,
        help="direct runs on this many GPUs at once (default 1: one direct run alone "
        "on the host, the issue's 'a direct gtune run')",
    )
    ap.add_argument(
        "--window-s",
        type=float,
        default=0.0,
        help="each N-GPU setting searches for at most this / N seconds after its "
        "workers started (a campaign larger than the limit: --kernels suite); 0: "
        "every setting runs to the end",
    )
    ap.add_argument(
        "--build-slots",
        type=int,
        default=None,
        help="the host's build slots for every setting (GTUNE_BUILD_SLOTS; 0: no "
        "limit); default: from the host's physical cores",
    )
    ap.add_argument("--min-phase-s", type=float, default=45.0, help="kept for each later phase")
    ap.add_argument("--grace-s", type=float, default=15.0, help="a phase's time to stop")
    ap.add_argument("--workers-per-gpu", type=int, default=None)
    ap.add_argument("--compile-workers", type=int, default=None)
    ap.add_argument("--keep-stores", action="store_true", help="stores under OUT/stores")
    # a phase's own process (the parent starts it)
    ap.add_argument("--child", choices=("setting", "direct"), help=argparse.SUPPRESS)
    ap.add_argument("--stop-at", type=float, default=0.0, help=argparse.SUPPRESS)
    ap.add_argument("--store-dir", default="", help=argparse.SUPPRESS)
    ap.add_argument("--workers-per-device", type=int, default=None, help=argparse.SUPPRESS)
    return ap


def main(argv: list[str] | None = None) -> int:
    args = parser().parse_args(argv)
    if args.kernels is None:
        args.kernels = SAMPLE if args.gpus or args.child else "star_3d*,dense_3d*,star_2d_xy_r*"
    if args.budget == "50" and args.setting:
        args.budget = "100"  # the older form's default
    if args.child == "setting":
        return child_setting(args)
    if args.child == "direct":
        return child_direct(args)
    if args.gpus:
        return scaling(args)
    if args.setting:
        return settings(args)
    raise SystemExit("give --gpus (scaling over GPUs) or --setting (the older form)")


if __name__ == "__main__":
    raise SystemExit(main())

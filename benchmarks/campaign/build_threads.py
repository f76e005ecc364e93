"""What starting OpenCL processes and building kernels cost on one device, and whether
compile helpers could be threads of one process instead of processes of their own:

    python3 benchmarks/campaign/build_threads.py OUT [--device NVIDIA]
        [--kernel stencils/heat3d.cl --size 256x256x256] [--starts 1,8,32]
        [--ways procs:1,procs:8,threads:8] [--builds 48]

A campaign worker's compile helpers are processes, each with its own driver context
(gtune.measure.pool); on a host of several GPUs, starting them all took longer the more
there were (issue 29's record: 11 s for 18 processes, 28 s for 72). Two measurements,
side by side in one run:

* **start**: N compile helpers (gtune's own worker processes) started at once, as a
  campaign worker starts its pool; the seconds until all answered, and each one's.
* **builds**: the same number of distinct configurations of one kernel built by P
  helper processes, or by T threads of one process sharing one context (gtune's own
  ``Compiler``: pyopencl releases the interpreter lock while the driver builds); each
  way builds its own sample, with the driver's binary cache off. ``cache:P`` builds its
  sample twice with the cache on: what a configuration built again costs.
  ``multi:P:K`` builds K configurations in one program, as gtune's compile workers
  bundle them (gtune.measure.bundle: each copy of the source renamed by macros, its
  parameters defined in the source): what one build's fixed cost is.
* **CPU**: the seconds of processor time the builders used (user and system, every
  thread), beside their wall time: whether one build keeps more than one core busy.

Writes OUT/build_threads.json and OUT/build_threads.md.
"""

from __future__ import annotations

import argparse
import json
import os
import queue
import resource
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

NO_CACHE = {"CUDA_CACHE_DISABLE": "1"}  # every build compiles; no way reuses another's


def _start(device: Any, n: int) -> dict[str, Any]:
    """N compile helpers started at once: when each answered, then all stopped."""
    from gtune.measure.opencl_evaluator import Worker

    setup = {"device": device.to_dict(), "build_lock_s": None}
    workers = [Worker("compile", ("compiler", dict(setup)), NO_CACHE) for _ in range(n)]
    began = time.monotonic()
    for w in workers:
        w.launch()
    ready = []
    for w in workers:
        w.receive(300.0)
        ready.append(time.monotonic() - began)
    for w in workers:
        w.stop()
    return {"processes": n, "all_s": max(ready), "ready_s": sorted(ready)}


def _jobs(kernel: Any, configs: list[dict[str, int]]) -> list[tuple[str, list[str]]]:
    return [(kernel.source, kernel.defines(c)) for c in configs]


def _bundled_jobs(
    kernel: Any, configs: list[dict[str, int]], k: int
) -> list[tuple[str, list[str]]]:
    """Programs of ``k`` configurations each, made as gtune's compile workers make them
    (gtune.measure.bundle: every copy of the source gets its -D values as #defines and
    its own names, and every macro is undefined after it)."""
    from gtune.measure.bundle import bundle

    jobs = []
    for start in range(0, len(configs), k):
        group = configs[start : start + k]
        made = bundle(kernel.source, kernel.name, [kernel.defines(c) for c in group])
        if isinstance(made, str):
            raise SystemExit(f"{kernel.label} cannot be bundled: {made}")
        jobs.append((made.source, made.options))
    return jobs


def _cpu_s(pids: list[int]) -> float:
    """User and system seconds of these processes so far (every thread)."""
    tick = os.sysconf("SC_CLK_TCK")
    total = 0.0
    for pid in pids:
        try:
            fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        total += (int(fields[11]) + int(fields[12])) / tick
    return total


def _by_processes(
    device: Any,
    jobs: list[tuple[str, list[str]]],
    p: int,
    env: dict[str, str] | None = None,
    way: str = "",
    per_job: int = 1,
) -> dict[str, Any]:
    """``jobs`` built by ``p`` helper processes (started first, not timed), each taking
    the next job as it frees up; a job holds ``per_job`` configurations."""
    from gtune.measure.opencl_evaluator import Worker

    setup = {"device": device.to_dict(), "build_lock_s": None}
    workers = [Worker("compile", ("compiler", dict(setup)), env or NO_CACHE) for _ in range(p)]
    for w in workers:
        w.launch()
    for w in workers:
        w.receive(300.0)
    todo: queue.Queue[tuple[str, list[str]]] = queue.Queue()
    for j in jobs:
        todo.put(j)
    compile_s: list[float] = []
    failed: list[str] = []

    def drain(w: Any) -> None:
        while True:
            try:
                source, options = todo.get_nowait()
            except queue.Empty:
                return
            built = w.call("build", {"source": source, "options": options}, 600.0)
            compile_s.append(float(built["compile_s"]))
            if built["status"] != "ok":
                failed.append(str(built["log"])[:200])

    pids = [w.process.pid for w in workers if w.process is not None]
    cpu0 = _cpu_s(pids)
    began = time.monotonic()
    threads = [threading.Thread(target=drain, args=(w,)) for w in workers]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    wall = time.monotonic() - began
    cpu = _cpu_s(pids) - cpu0
    for w in workers:
        w.stop()
    return _summary(way or f"procs:{p}", wall, compile_s, failed, len(jobs) * per_job, cpu, per_job)


def _cached(
    device: Any, jobs: list[tuple[str, list[str]]], p: int, folder: Path
) -> list[dict[str, Any]]:
    """``jobs`` built twice by ``p`` helper processes sharing the driver's binary cache
    (a new folder): what the cache saves when the same configuration is built again."""
    env = {"CUDA_CACHE_DISABLE": "0", "CUDA_CACHE_PATH": str(folder)}
    return [
        _by_processes(device, jobs, p, env, f"cache:{p} first"),
        _by_processes(device, jobs, p, env, f"cache:{p} again"),
    ]


def _by_threads(device: Any, jobs: list[tuple[str, list[str]]], t: int) -> dict[str, Any]:
    """``jobs`` built by ``t`` threads of one child process sharing one context."""
    payload = json.dumps({"device": device.to_dict(), "jobs": jobs, "threads": t})
    env = {**os.environ, **NO_CACHE, "PYTHONSAFEPATH": "1"}
    proc = subprocess.run(
        [sys.executable, str(Path(__file__).resolve()), "--child"],
        input=payload,
        capture_output=True,
        text=True,
        timeout=1800,
        env=env,
    )
    if proc.returncode != 0:
        raise SystemExit(f"the threads' process failed: {proc.stderr[-2000:]}")
    out = json.loads(proc.stdout.strip().splitlines()[-1])
    return _summary(
        f"threads:{t}", out["wall_s"], out["compile_s"], out["failed"], len(jobs), out["cpu_s"]
    )


def _child() -> None:
    """The threads' process: one Compiler (one context), ``threads`` threads building."""
    from concurrent.futures import ThreadPoolExecutor

    from gtune.device import DeviceLimits
    from gtune.measure._opencl import Compiler

    given = json.loads(sys.stdin.read())
    compiler = Compiler(DeviceLimits.from_dict(given["device"]), None)
    compiler.slots = None  # this process alone: no host-wide build slots
    jobs = [(s, list(o)) for s, o in given["jobs"]]
    usage = resource.getrusage(resource.RUSAGE_SELF)
    cpu0 = usage.ru_utime + usage.ru_stime
    began = time.monotonic()
    with ThreadPoolExecutor(max_workers=int(given["threads"])) as pool:
        built = list(pool.map(lambda j: compiler.build_binary(*j), jobs))
    wall = time.monotonic() - began
    usage = resource.getrusage(resource.RUSAGE_SELF)
    print(
        json.dumps(
            {
                "wall_s": wall,
                "cpu_s": usage.ru_utime + usage.ru_stime - cpu0,
                "compile_s": [b.compile_s for b in built],
                "failed": [b.log[:200] for b in built if b.status.value != "ok"],
            }
        )
    )


def _summary(
    way: str,
    wall: float,
    compile_s: list[float],
    failed: list[str],
    n: int,
    cpu_s: float,
    per_job: int = 1,
) -> dict[str, Any]:
    """``n`` configurations built; ``compile_s`` per build (a build holds ``per_job``)."""
    mean = sum(compile_s) / len(compile_s) / per_job if compile_s else float("nan")
    return {
        "way": way,
        "builds": n,
        "wall_s": wall,
        "builds_per_s": n / wall if wall > 0 else float("nan"),
        "mean_compile_s": mean,
        "cpu_s": cpu_s,
        "cpu_per_build_s": cpu_s / n if n else float("nan"),
        "failed": len(failed),
        "first_failure": failed[0] if failed else "",
    }


def main() -> int:
    if "--child" in sys.argv:
        _child()
        return 0
    from gtune.description import load_kernel
    from gtune.measure import select_device
    from gtune.space import solve_space

    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("out", type=Path)
    ap.add_argument("--device", default=None)
    ap.add_argument("--kernel", default="stencils/heat3d.cl")
    ap.add_argument("--size", default="256x256x256")
    ap.add_argument("--starts", default="1,8,32", help="helper processes started at once")
    ap.add_argument(
        "--ways",
        default="procs:1,procs:8,threads:8",
        help="procs:P, threads:T, cache:P (built twice with the driver's cache on), or "
        "multi:P:K (P processes building programs of K configurations)",
    )
    ap.add_argument("--builds", type=int, default=48, help="configurations built per way")
    args = ap.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    device = select_device(args.device)
    names = ("NX", "NY", "NZ")
    sizes = dict(zip(names, (int(v) for v in args.size.split("x")), strict=False))
    kernel = load_kernel(args.kernel, sizes)
    ways = [w.split(":") for w in args.ways.split(",")]
    space = solve_space(kernel, device).space
    sample = space.sample(args.builds * len(ways), seed=1)
    record: dict[str, Any] = {
        "device": device.name,
        "kernel": args.kernel,
        "size": args.size,
        "cpus": os.cpu_count(),
        "start": [],
        "builds": [],
    }
    for n in (int(v) for v in args.starts.split(",") if v):
        record["start"].append(_start(device, n))
        print(f"start {n}: {record['start'][-1]['all_s']:.2f} s", flush=True)
    for i, (kind, count, *per) in enumerate(ways):
        configs = sample[i * args.builds : (i + 1) * args.builds]
        jobs = _jobs(kernel, configs)
        if kind == "multi":
            k = int(per[0]) if per else 4
            multi = _bundled_jobs(kernel, configs, k)
            got = [_by_processes(device, multi, int(count), way=f"multi:{count}:{k}", per_job=k)]
        elif kind == "cache":
            got = _cached(device, jobs, int(count), args.out / f"driver-cache-{i}")
        elif kind == "procs":
            got = [_by_processes(device, jobs, int(count))]
        else:
            got = [_by_threads(device, jobs, int(count))]
        for b in got:
            record["builds"].append(b)
            print(f"{b['way']}: {b['builds_per_s']:.2f} builds/s", flush=True)
    (args.out / "build_threads.json").write_text(json.dumps(record, indent=1) + "\n")
    lines = [
        f"# Starting compile helpers and building on {device.name}",
        "",
        f"Kernel {args.kernel} at {args.size}; host CPUs {record['cpus']}; "
        "the driver's binary cache off.",
        "",
        "| helpers started at once | all answered (s) | first (s) |",
        "| ---: | ---: | ---: |",
        *(
            f"| {s['processes']} | {s['all_s']:.2f} | {s['ready_s'][0]:.2f} |"
            for s in record["start"]
        ),
        "",
        "Mean build: the seconds one configuration's build took (a program of K "
        "configurations: its time over K). CPU: processor seconds of the builders (user "
        "and system, every thread) per configuration.",
        "",
        "| way | builds | wall (s) | builds/s | mean build (s) | CPU per build (s) | failed |",
        "| --- | ---: | ---: | ---: | ---: | ---: | ---: |",
        *(
            f"| {b['way']} | {b['builds']} | {b['wall_s']:.2f} | {b['builds_per_s']:.2f} "
            f"| {b['mean_compile_s']:.3f} | {b['cpu_per_build_s']:.3f} | {b['failed']} |"
            for b in record["builds"]
        ),
        "",
    ]
    (args.out / "build_threads.md").write_text("\n".join(lines))
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

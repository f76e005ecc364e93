"""Fixed configurations of a multi-step stencil side by side with the copy kernel.

No search: a list of explicit configurations of one stencil definition with ``steps``
(a file, below) is verified once each against the reference's loop of single steps,
then measured side by side with the copy kernel, one after another in each of several
rounds (drift hits all alike; the median of the rounds' medians is kept). For A/B
comparisons of template variants and for the candidates a search should find: the
first configuration is the baseline the others are compared with.

The configurations file (YAML)::

    kernel: heat3d            # a real stencil by name, or a NAME.stencil.yaml path
    size: 512                 # cube side (3D) or square side (2D)
    steps: 8
    configs:
      - name: main's winner   # any label
        config: {STREAM: 1, ZREG: 1, TB: 2, WX: 32, WY: 16, CX: 2, ZC: 256}
      - name: capped
        config: {...}
        options: [-cl-nv-maxrregcount=64]   # build options of this configuration alone
      - name: no halo
        config: {...}
        probe: true     # wrong by design (a probe's template): timed all the same

Each configuration is laid over the kernel's default; one that breaks the
description's constraints at this device (a probe beyond the register bound, say)
still runs, marked ``outside the space``. A configuration marked ``probe`` is a
measurement of a template built to be wrong (a cost left out, to bound what removing
it could gain): its verification still runs and its status says ``wrong_result``, and
it is timed all the same, marked ``probe`` (never a result). Times are per step;
effective bandwidth is the bytes of one step over the time per step, as in
``temporal.py``.

Writes into OUT: ``configs.json`` (everything), ``configs.csv`` and ``configs.md``
(one row per configuration: verified or not, time per step, effective bandwidth, its
fraction of copy, speed against the baseline), first with the verifying session's
times (so a run cut short keeps them; ``side_by_side`` false), then with the rounds'.

    python3 benchmarks/temporal_configs.py OUT CONFIGS.yaml [--device NVIDIA]
        [--size 512] [--rounds 5] [--runs 5] [--template CANDIDATE.patch] [--ptxas]

``--ptxas`` (NVIDIA): each configuration is also built with ``-cl-nv-verbose`` and its
registers and spill bytes, as ptxas reports them, go into its row (``regs`` in the
table's shape column).

``--template`` renders every configuration from a candidate template: a candidate
that only adds configurations (values the package's template refuses) is then measured
beside the package's own configurations, which it renders as the package does.
"""

from __future__ import annotations

import argparse
import csv
import dataclasses
import json
import platform
import sys
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import yaml

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

import bandwidth as bw
from candidate import read_variant
from template_ab import rendering_from
from temporal import TARGET_MULTI, definition, shape

from gtune.kernel import TunableKernel
from gtune.measure import OpenCLEvaluator, select_device
from gtune.stencils.render import definition_kernel_of


def read_configs(path: Path) -> dict[str, Any]:
    """The configurations file: kernel, size, steps and the named configurations."""
    data = yaml.safe_load(path.read_text())
    if not isinstance(data, dict) or not isinstance(data.get("configs"), list):
        raise SystemExit(f"{path}: expected a mapping with a 'configs' list")
    names = set()
    for i, entry in enumerate(data["configs"]):
        if not isinstance(entry, dict) or not isinstance(entry.get("config"), dict):
            raise SystemExit(f"{path}: configs[{i}] needs a 'config' mapping")
        entry.setdefault("name", f"config {i}")
        opts = entry.setdefault("options", [])
        if not isinstance(opts, list) or not all(isinstance(o, str) for o in opts):
            raise SystemExit(f"{path}: configs[{i}]: 'options' must be a list of strings")
        if entry["name"] in names:
            raise SystemExit(f"{path}: configs[{i}]: the name {entry['name']!r} is used twice")
        names.add(entry["name"])
    return data


def full_config(
    kernel: TunableKernel, change: Mapping[str, int], candidate: bool = False
) -> dict[str, int]:
    """``change`` laid over the kernel's default. A parameter the kernel lacks is an
    error, but with a candidate template (``candidate``), whose own parameters the
    package's kernel does not declare: they reach the build as its other values do."""
    default = kernel.default_config()
    assert default is not None
    unknown = set(change) - set(default)
    if unknown and not candidate:
        raise SystemExit(f"parameters not in the kernel: {sorted(unknown)}")
    return {**default, **{k: int(v) for k, v in change.items()}}


def table(rows: Sequence[Mapping[str, Any]], copy_gbs: float, head: str) -> str:
    lines = [
        head,
        "",
        "| configuration | shape | verified | ms per step | GB/s | of copy | vs baseline |",
        "|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        t, gbs, frac, speed = (
            r.get(k) for k in ("time_per_step_s", "gbs", "fraction_of_copy", "speedup")
        )
        name = r["name"] + (" (outside the space)" if r["broken"] else "")
        name += " (probe: wrong by design)" if r.get("probe") else ""
        regs = r.get("ptxas") or {}
        spills = regs.get("spill_stores", 0) + regs.get("spill_loads", 0)
        shown = r["shape"] + (f", {regs['registers']} regs" if "registers" in regs else "")
        shown += f", {spills} B spilled" if spills else ""
        cells = [
            f"{t * 1e3:.4f}" if t else "-",
            f"{gbs:.0f}" if gbs else "-",
            f"{frac:.1%}" if frac else "-",
            f"{speed:.3f}x" if speed else "-",
        ]
        lines.append(f"| {name} | {shown} | {r['status']} | " + " | ".join(cells) + " |")
    lines += [
        "",
        f"Copy: {copy_gbs:.1f} GB/s, measured in the same rounds. Target: "
        f"{TARGET_MULTI}x copy per step.",
    ]
    return "\n".join(lines) + "\n"


def fill(
    rows: Sequence[dict[str, Any]], times: Mapping[str, float], step_bytes: int, copy_gbs: float
) -> None:
    """Each row's time per step (from ``times``, by name), effective bandwidth, fraction
    of copy and speed against the first row."""
    base = times.get(rows[0]["name"]) if rows else None
    for r in rows:
        s = times.get(r["name"])
        r["time_per_step_s"] = s
        r["gbs"] = step_bytes / s / 1e9 if s else None
        r["fraction_of_copy"] = r["gbs"] / copy_gbs if r["gbs"] and copy_gbs else None
        r["speedup"] = base / s if base and s else None


def write(out: Path, data: Mapping[str, Any], md: str) -> str:
    """configs.json, configs.csv and configs.md into ``out``; returns the table."""
    rows = data["configs"]
    (out / "configs.md").write_text(md)
    (out / "configs.json").write_text(json.dumps(data, indent=1, default=str))
    with open(out / "configs.csv", "w", newline="") as f:
        fields = ["name", "shape", "status", "time_per_step_s", "gbs", "fraction_of_copy"]
        writer = csv.DictWriter(f, fieldnames=[*fields, "speedup", "outside", "config"])
        writer.writeheader()
        for r in rows:
            writer.writerow(
                {
                    **{k: r.get(k) for k in fields},
                    "speedup": r.get("speedup"),
                    "outside": bool(r["broken"]),
                    "config": json.dumps(r["config"]),
                }
            )
    return md


def verify(
    kernels: Mapping[tuple[str, ...], TunableKernel],
    rows: Sequence[Mapping[str, Any]],
    device: Any,
    runs: int,
) -> list[Any]:
    """Each row's result, verified once (every output against the reference's single
    steps), one evaluator per set of build options; in the rows' order."""
    results: dict[int, Any] = {}
    for opts, k in kernels.items():
        mine = [i for i, r in enumerate(rows) if tuple(r["options"]) == opts]
        if not mine:
            continue
        evaluator = OpenCLEvaluator(k, device, runs=runs)
        try:
            batch = evaluator.evaluate_batch([rows[i]["config"] for i in mine])
            results.update(zip(mine, batch, strict=True))
        finally:
            evaluator.close()
    return [results[i] for i in range(len(rows))]


def ptxas(
    kernels: Mapping[tuple[str, ...], TunableKernel], rows: Sequence[dict[str, Any]], name: str
) -> None:
    """Each row's registers and spill bytes as NVIDIA's ptxas reports them (``ptxas``)."""
    from h200_ptx import cl_device, device_ptx, ptxas_info

    cl_dev = cl_device(name)
    for r in rows:
        _, log = device_ptx(kernels[tuple(r["options"])], r["config"], cl_dev)
        r["ptxas"] = ptxas_info(log)
        bw.log(f"  {r['name']}: {r['ptxas']}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("outdir", type=Path)
    parser.add_argument("configs", type=Path, help="the configurations file (YAML)")
    parser.add_argument("--device", help="P:D, identity or name (default: the first GPU)")
    parser.add_argument("--size", type=int, help="cube or square side (the file's, else 512)")
    parser.add_argument("--rounds", type=int, default=5, help="side-by-side rounds (5)")
    parser.add_argument("--runs", type=int, default=5, help="timed runs per measurement (5)")
    parser.add_argument(
        "--template",
        type=Path,
        help="render every configuration from this candidate template (a "
        "benchmarks/candidates/*.patch, or a whole stencil.cl) instead of the package's",
    )
    parser.add_argument(
        "--ptxas",
        action="store_true",
        help="NVIDIA: record each configuration's registers and spills (-cl-nv-verbose)",
    )
    args = parser.parse_args(argv)

    started = time.monotonic()
    spec = read_configs(args.configs)
    out: Path = args.outdir
    work = out / "kernels"
    work.mkdir(parents=True, exist_ok=True)
    device = select_device(args.device)
    limits = device.limit_values()
    n = args.size or int(spec.get("size", 512))
    d = definition(str(spec.get("kernel", "heat3d")))
    steps = int(spec.get("steps", 8))
    sizes = {"NX": n, "NY": n, "NZ": n} if d.dims == 3 else {"NX": n, "NY": n}
    template = read_variant(args.template) if args.template else None
    with rendering_from(template):
        kernel = definition_kernel_of(dataclasses.replace(d, steps=steps), sizes)
    log = bw.log
    log(f"device: {device.name}; {d.name} {'x'.join(map(str, sizes.values()))}, {steps} steps")

    copy_kernel = bw.copy_kernel(work, {"NX": n, "NY": n, "NZ": n if d.dims == 3 else 1})
    copy = bw.copy_bandwidth(copy_kernel, device, args.runs)
    log(f"copy (tuned): {copy['gbs']:.1f} GB/s {copy['config']}")

    rows: list[dict[str, Any]] = []
    kernels: dict[tuple[str, ...], TunableKernel] = {(): kernel}  # by extra build options
    nvidia = "nvidia" in f"{device.platform} {device.vendor}".lower()
    for entry in spec["configs"]:
        opts = tuple(o for o in entry["options"] if nvidia or not o.startswith("-cl-nv-"))
        if len(opts) < len(entry["options"]):  # PoCL's smoke tests: NVIDIA's options refused
            log(f"  {entry['name']}: NVIDIA's options dropped on {device.name}")
        if opts not in kernels:  # a register cap, say: gtune's builds apply it (regcap)
            kernels[opts] = dataclasses.replace(kernel, build_options=kernel.build_options + opts)
        cfg = full_config(kernel, entry["config"], template is not None)
        env = {**kernel.env(cfg), **limits}
        broken = [c.text for c in kernel.constraints if not c.evaluate(env)]
        layout = "".join(f" {p}={cfg[p]}" for p in ("ZREG", "ZU", "ZE", "ZY") if cfg.get(p))
        layout += "".join(f" {o}" for o in opts)
        row = {"name": entry["name"], "config": cfg, "shape": shape(cfg) + layout}
        row["probe"] = bool(entry.get("probe", False))
        rows.append({**row, "broken": broken, "options": list(opts)})
    if args.ptxas and nvidia:
        ptxas(kernels, rows, device.name)
    results = verify(kernels, rows, device, args.runs)
    for r, res in zip(rows, results, strict=True):
        r["status"] = res.status.value
        r["verified_s"] = res.median_s if res.ok else None
        if not res.ok:
            r["message"] = res.message[:500]
        log(
            f"  {r['name']}: {r['status']}"
            + (f" {res.median_s * 1e3:.4f} ms/step" if res.ok else f" {res.message[:200]}")
            + (" (outside the space)" if r["broken"] else "")
        )
    info = {
        "device": device.name,
        "device_identity": device.identity,
        "driver": device.driver_version,
        "host": platform.node(),
        "kernel": d.name,
        "size": "x".join(map(str, sizes.values())),
        "steps": steps,
        "rounds": args.rounds,
        "runs": args.runs,
        "configs_file": str(args.configs),
        "template": str(args.template) if args.template else "the package's",
        "copy": copy,
    }
    ok = [r for r in rows if r["status"] == "ok"]
    timed = ok + [r for r in rows if r["probe"] and r["status"] == "wrong_result"]
    # the verifying session's times first (one after another, against the tuned copy),
    # written at once: a run cut short keeps them
    fill(rows, {r["name"]: r["verified_s"] for r in ok}, kernel.bytes_moved(), copy["gbs"])
    head = f"# {d.name} {info['size']}, {steps} steps: fixed configurations against copy on "
    head += f"{device.name}\n\n"
    md = write(
        out,
        {**info, "side_by_side": False, "copy_gbs": copy["gbs"], "configs": rows},
        table(
            rows,
            copy["gbs"],
            head + "Times of the verifying session (one after "
            "another), against the tuned copy; side-by-side rounds not run yet.",
        ),
    )
    runs: list[tuple[str, TunableKernel, Mapping[str, int]]] = [
        ("copy", copy_kernel, copy["config"])
    ]
    runs += [(r["name"], kernels[tuple(r["options"])], r["config"]) for r in timed]
    times = bw.alternate(device, runs, args.rounds)
    copy_s = times.pop("copy")
    copy_gbs = copy_kernel.bytes_moved() / copy_s / 1e9
    fill(rows, times, kernel.bytes_moved(), copy_gbs)
    data = {
        **info,
        "side_by_side": True,
        "copy_side_by_side_s": copy_s,
        "copy_gbs": copy_gbs,
        "configs": rows,
        "wall_s": time.monotonic() - started,
    }
    md = write(
        out,
        data,
        table(
            rows,
            copy_gbs,
            head + f"Medians of {args.rounds} side-by-side "
            "rounds with the copy kernel; the first configuration is the "
            "baseline.",
        ),
    )
    log(md)
    log(f"wall time {data['wall_s']:.0f} s; results in {out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

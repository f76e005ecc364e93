"""Check the stencil template on real devices: every data-loading technique, several
patterns, a problem of 256^3 (by default), through the real OpenCL evaluator.

For each device (all found, or ``--device``), each stencil and each technique, a sample
of valid configurations (the default-like one first, then random ones) is built,
launched, timed and verified. Writes ``stencil_check.json`` (every result) and
``stencil_check.md`` (a table of status counts and best times) into OUTDIR.

    python benchmarks/stencil_check.py OUTDIR [--device 0:0] [--size 256] [--samples 4]
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import tempfile
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from gtune.description import load_kernel
from gtune.kernel import TunableKernel
from gtune.measure import OpenCLEvaluator, Status, list_devices
from gtune.stencils import StencilShape, generate

SHAPES = [
    StencilShape("star", 3, "xyz", 1),
    StencilShape("star", 3, "xyz", 4),
    StencilShape("dense", 3, "xyz", 1),
    StencilShape("diamond", 2, "xz", 3),
    StencilShape("thumbtack", 3, "z", 2),
    StencilShape("no-corners", 3, "xyz", 2),
    StencilShape("dense", 1, "y", 5),
]
TECHNIQUES = ("global", "vec", "local", "image", "stream")


def pow2s(hi: int) -> list[int]:
    out, v = [], 1
    while v <= hi:
        out.append(v)
        v *= 2
    return out


def valid(kernel: TunableKernel, cfg: Mapping[str, int], limits: Mapping[str, int]) -> bool:
    env = {**kernel.env(cfg), **limits}
    group = cfg["WX"] * cfg["WY"] * cfg["WZ"]
    sizes_ok = (
        group <= limits["MAX_WORK_GROUP_SIZE"]
        and cfg["WX"] <= limits["MAX_WORK_ITEM_SIZE_0"]
        and cfg["WY"] <= limits["MAX_WORK_ITEM_SIZE_1"]
        and cfg["WZ"] <= limits["MAX_WORK_ITEM_SIZE_2"]
    )
    return sizes_ok and all(bool(c.evaluate(env)) for c in kernel.constraints)


def sample(
    kernel: TunableKernel, technique: str, limits: Mapping[str, int], n: int, rng: random.Random
) -> list[dict[str, int]]:
    """The naive default adapted to the technique, then random valid configurations."""
    default = dict(kernel.default_config() or {})
    first = {**default, "LOCAL": int(technique == "local"), "IMAGE": int(technique == "image")}
    stream = technique == "stream"
    if "STREAM" in default:
        first.update(STREAM=int(stream), ZC=16 if stream else 1)
    if technique == "vec":
        first.update(VX=4, BX=4, WX=max(1, default["WX"] // 4))
    out = [first] if valid(kernel, first, limits) else []
    nx, ny, nz = (kernel.sizes[k] for k in ("NX", "NY", "NZ"))
    tries = 0
    while len(out) < n and tries < 20000:
        tries += 1
        vx = rng.choice([2, 4, 8, 16]) if technique == "vec" else 1
        cfg = {
            "WX": rng.choice(pow2s(min(nx, 1024))),
            "WY": rng.choice(pow2s(min(ny, 64))),
            "WZ": rng.choice(pow2s(min(nz, 16))),
            "BX": vx,
            "VX": vx,
            "CX": rng.choice(pow2s(8)),
            "CY": rng.choice(pow2s(32)),
            "CZ": rng.choice(pow2s(32)),
            "LOCAL": first["LOCAL"],
            "IMAGE": first["IMAGE"],
        }
        if "STREAM" in default:
            cfg["STREAM"], cfg["ZC"] = int(stream), rng.choice(pow2s(64)) if stream else 1
            if stream:
                cfg.update(WZ=1, CZ=1, BX=rng.choice([1, 2, 4]))
        if cfg not in out and valid(kernel, cfg, limits):
            out.append(cfg)
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("outdir", type=Path)
    parser.add_argument("--device", help="one device (P:D, identity or name); default: all")
    parser.add_argument("--size", type=int, default=256, help="cube side (default 256)")
    parser.add_argument("--samples", type=int, default=4, help="configurations per technique")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--timeout", type=float, default=60.0, help="seconds per configuration")
    args = parser.parse_args(argv)
    args.outdir.mkdir(parents=True, exist_ok=True)
    devices = list_devices()
    if args.device:
        from gtune.measure import select_device

        devices = [select_device(args.device)]
    rng = random.Random(args.seed)
    rows: list[dict[str, Any]] = []
    with tempfile.TemporaryDirectory() as tmp:
        generated = generate(SHAPES, Path(tmp), seed=args.seed, size=(args.size,) * 3)
        for device in devices:
            limits = device.limit_values()
            for g in generated:
                kernel = load_kernel(g.description)
                started = time.perf_counter()
                evaluator = OpenCLEvaluator(kernel, device, runs=3, timeout_s=args.timeout)
                try:
                    for technique in TECHNIQUES:
                        for cfg in sample(kernel, technique, limits, args.samples, rng):
                            result = evaluator.evaluate(cfg)
                            row = {
                                "device": device.name,
                                "device_id": device.identity,
                                "stencil": g.stencil.name,
                                "points": len(g.stencil.offsets),
                                "size": args.size,
                                "technique": technique,
                                **result.to_dict(),
                            }
                            rows.append(row)
                            t = f"{result.median_s * 1e3:9.3f} ms" if result.ok else ""
                            print(
                                f"{device.name[:24]:<24} {g.stencil.name:<22} {technique:<6} "
                                f"{result.status.value:<13} {t} {json.dumps(cfg)}",
                                flush=True,
                            )
                finally:
                    evaluator.close()
                print(f"  ({time.perf_counter() - started:.1f} s)", flush=True)
    (args.outdir / "stencil_check.json").write_text(json.dumps(rows, indent=1, default=str))
    (args.outdir / "stencil_check.md").write_text(markdown(rows))
    bad = [r for r in rows if r["status"] not in (Status.OK.value, Status.LAUNCH_FAILED.value)]
    print(f"{len(rows)} configurations, {len(bad)} neither ok nor refused by the driver")
    return 1 if bad else 0


def markdown(rows: list[dict[str, Any]]) -> str:
    """Per device, stencil and technique: status counts and the best median time."""
    lines = [
        "| device | stencil | technique | ok | other statuses | best median (ms) | GB/s |",
        "|---|---|---|---|---|---|---|",
    ]
    keys = sorted({(r["device"], r["stencil"], r["technique"]) for r in rows})
    for device, stencil, technique in keys:
        group = [
            r
            for r in rows
            if (r["device"], r["stencil"], r["technique"]) == (device, stencil, technique)
        ]
        ok = [r for r in group if r["status"] == Status.OK.value]
        others: dict[str, int] = {}
        for r in group:
            if r["status"] != Status.OK.value:
                others[r["status"]] = others.get(r["status"], 0) + 1
        best = min((sorted(r["times_s"])[len(r["times_s"]) // 2] for r in ok), default=None)
        gbs = ""
        if best:
            size = group[0]["size"]
            gbs = f"{2 * 4 * size**3 / best / 1e9:.0f}"
        lines.append(
            f"| {device} | {stencil} | {technique} | {len(ok)}/{len(group)} | "
            f"{', '.join(f'{k}: {v}' for k, v in sorted(others.items())) or '-'} | "
            f"{'' if best is None else f'{best * 1e3:.3f}'} | {gbs} |"
        )
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env python3
"""The A/B of whole rim vectors (``RIM=1``) for the clamp boundary, on one definition.

The candidate ``clamp_rim`` (issue 48) is the package's code now: the vector technique's
whole-vector path (``RIM=1``), with row blocks (``BY``, ``BZ``), the interior path
(``RIN``) and separable weights summed row by row (``SEP``), serves clamp kernels
(benchmarks/results/lift/clamp_rim/README.md). This script repeats the A/B that kept
it, both sides rendered from the package's template (``--variant``: a candidate template,
a ``.patch`` or ``.cl``, for the second side instead).

    python3 benchmarks/candidates/clamp_rim.py ab OUT --kernel DEF.stencil.yaml \\
        --package N=V,... --candidate N=V,... [--copy] [--variant PATCH] ...

``ab`` times the package's configurations of one definition (``--package``, e.g. its
winner before the change: 2D streaming) and the rim vectors' (``--candidate``, ``RIM=1``)
in the same alternating rounds (bandwidth.alternate), each verified on the device first
(a configuration that fails is reported and left out), and writes
``OUT/clamp_rim_ab.json`` and ``.md``: each configuration's time, its fraction of the
float4 copy's bandwidth (``--copy``), and its ratio to the package side's best.
"""

from __future__ import annotations

import argparse
import importlib
import json
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))


def _table(rows: list[dict[str, Any]]) -> list[str]:
    lines = [
        "| template | configuration | time | of copy | / package's best |",
        "|---|---|---:|---:|---:|",
    ]
    for r in rows:
        cfg = " ".join(f"{k}={v}" for k, v in r["config"].items() if k not in ("IMAGE", "LOCAL"))
        if "time_s" not in r:
            lines.append(f"| {r['side']} | {cfg} | failed: {r['failure']} | | |")
            continue
        share = f"{r['of_copy'] * 100:.1f} %" if "of_copy" in r else ""
        lines.append(
            f"| {r['side']} | {cfg} | {r['time_s'] * 1e6:.1f} µs | {share} | {r['ratio']:.3f} |"
        )
    return lines


def ab(argv: Sequence[str]) -> int:
    """The package's configurations against the candidate's, one definition, on a device."""
    from gtune.commands._common import parse_config
    from gtune.measure import select_device

    ap = argparse.ArgumentParser(prog="clamp_rim.py ab", description=ab.__doc__)
    ap.add_argument("outdir", type=Path)
    ap.add_argument(
        "--variant", type=Path, help="a candidate template (.patch or .cl) for the second side"
    )
    ap.add_argument("--kernel", required=True, help="a NAME.stencil.yaml definition")
    ap.add_argument("--package", action="append", default=[], metavar="N=V,...")
    ap.add_argument("--candidate", action="append", default=[], metavar="N=V,...")
    ap.add_argument("--device", default="NVIDIA")
    ap.add_argument("--size", type=int, default=512, help="3D cube side (2D: 16x this)")
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--copy", action="store_true", help="time the float4 copy alongside")
    args = ap.parse_args(argv)
    bw: Any = importlib.import_module("bandwidth")  # benchmarks/, on sys.path above
    template_ab: Any = importlib.import_module("template_ab")
    read_variant = importlib.import_module("candidate").read_variant
    device = select_device(args.device)
    args.outdir.mkdir(parents=True, exist_ok=True)
    work = args.outdir / "rendered"
    variant = None if args.variant is None else read_variant(args.variant)
    name, ka, kb = template_ab.load_both(args.kernel, work, variant, args.size)
    sides = [("package", ka, args.package), ("candidate", kb, args.candidate)]
    rows: list[dict[str, Any]] = []
    runs = []
    for side, kernel, texts in sides:
        configs = [kernel.with_defaults(parse_config(t)) for t in texts]
        for i, (cfg, failure) in enumerate(
            zip(configs, template_ab.verify(kernel, device, configs), strict=True)
        ):
            row: dict[str, Any] = {"side": side, "key": f"{side}#{i}", "config": cfg}
            if failure is not None:
                bw.log(f"{name}: {side} {cfg} fails: {failure}")
                row["failure"] = failure
            else:
                runs.append((row["key"], kernel, cfg))
            rows.append(row)
    bw.log(f"{name}: {len(runs)} configurations verified")
    copy = None
    if args.copy:
        n = args.size
        copy = bw.copy_kernel(work / "copy", {"NX": n, "NY": n, "NZ": n})
        runs.append(("copy", copy, template_ab.COPY_CONFIG))
    times = bw.alternate(device, runs, args.rounds)
    timed = [r for r in rows if r["key"] in times]
    for r in timed:
        r["time_s"] = times[r["key"]]
    best = min((r["time_s"] for r in timed if r["side"] == "package"), default=None)
    summary: dict[str, Any] = {"device": device.name, "kernel": name, "rounds": args.rounds}
    if copy is not None:
        copy_gbs = copy.bytes_moved() / times["copy"] / 1e9
        summary["copy"] = {"time_s": times["copy"], "gbs": copy_gbs}
        for r in timed:
            r["of_copy"] = ka.bytes_moved() / r["time_s"] / 1e9 / copy_gbs
    for r in timed:
        if best is not None:
            r["ratio"] = r["time_s"] / best
    summary["rows"] = rows
    (args.outdir / "clamp_rim_ab.json").write_text(json.dumps(summary, indent=1))
    against = "its rim vectors (RIM=1)" if args.variant is None else str(args.variant)
    lines = [f"# {name}: the package's configurations against {against} on {device.name}", ""]
    lines.append(f"Medians of {args.rounds} alternating rounds, {ka.sizes}.")
    if copy is not None:
        c = summary["copy"]
        lines.append(
            f"Float4 copy in the same rounds: {c['time_s'] * 1e3:.3f} ms, {c['gbs']:.0f} GB/s."
        )
    lines += ["", *_table(rows)]
    (args.outdir / "clamp_rim_ab.md").write_text("\n".join(lines) + "\n")
    bw.log("\n".join(lines))
    return 0


def main(argv: Sequence[str]) -> int:
    """``ab ARGS``: :func:`ab`."""
    if argv and argv[0] == "ab":
        return ab(argv[1:])
    print("clamp_rim: give ab, then its arguments", file=sys.stderr)
    return 2


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))

"""``gtune space``: how far device limits and kernel constraints prune the space."""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path
from typing import Any

from gtune.commands._common import fmt_seconds, writable_dir
from gtune.commands._plain import add_plain_arguments, open_tunable
from gtune.device import DeviceLimits
from gtune.exceptions import InputError
from gtune.inputs import MAX_YAML_BYTES, read_text
from gtune.outfiles import write_text
from gtune.space.build import solve_space
from gtune.space.model import device_dzn, model_mzn
from gtune.space.report import constraint_cuts

HELP = "size of a kernel's tuning space before and after pruning, per device"


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("kernel", help="kernel.cl with its description, or the description .yaml")
    where = p.add_mutually_exclusive_group()
    where.add_argument("--device", metavar="D", help="P:D index or name substring")
    where.add_argument("--all-devices", action="store_true", help="every OpenCL device")
    where.add_argument(
        "--limits", metavar="FILE", help="device limits as JSON (`gtune devices --json`)"
    )
    p.add_argument("--size", metavar="NXxNYxNZ", help="problem size (default: the description's)")
    p.add_argument("--emit-mzn", metavar="DIR", help="write the MiniZinc model and device data")
    p.add_argument("--force", action="store_true", help="replace --emit-mzn files that exist")
    p.add_argument(
        "--no-min-groups",
        action="store_true",
        help="allow fewer work-groups than compute units",
    )
    p.add_argument(
        "--technique",
        metavar="NAME",
        help="one data-loading technique's configurations, solved alone (its rules in the model)",
    )
    p.add_argument("--no-cache", action="store_true", help="solve again, ignoring cached spaces")
    p.add_argument("--top", type=int, default=5, metavar="N", help="constraints shown (5)")
    p.add_argument("--json", action="store_true", help="machine-readable output")
    add_plain_arguments(p)


def _devices(args: argparse.Namespace) -> list[DeviceLimits]:
    if args.limits:
        text = read_text(args.limits, limit=MAX_YAML_BYTES, what="device limits file")
        try:
            data = json.loads(text)
        except (json.JSONDecodeError, RecursionError) as exc:
            raise InputError(f"cannot read device limits: {exc}", source=args.limits) from None
        if isinstance(data, dict) and isinstance(data.get("devices"), list):
            data = data["devices"]  # the whole output of `gtune devices --json`
        items = data if isinstance(data, list) else [data]
        try:
            return [DeviceLimits.from_dict(d) for d in items]
        except (TypeError, ValueError, AttributeError) as exc:
            raise InputError(f"not device limits: {exc}", source=args.limits) from None
    from gtune.measure import list_devices, select_device

    return list_devices() if args.all_devices else [select_device(args.device)]


def run(args: argparse.Namespace) -> int:
    kernel = open_tunable(args)
    if args.emit_mzn:
        writable_dir(args.emit_mzn, "--emit-mzn")
    reports: list[dict[str, Any]] = []
    written: set[Path] = set()  # files this run wrote may be written again
    for device in _devices(args):
        start = time.perf_counter()
        built = solve_space(
            kernel,
            device,
            min_groups=not args.no_min_groups,
            use_cache=not args.no_cache,
            technique=args.technique,
        )
        seconds = time.perf_counter() - start
        total = built.model.size_unpruned()
        cuts = constraint_cuts(built.model)[: max(0, args.top)]
        reports.append(
            {
                "kernel": kernel.name,
                "description": kernel.label,
                "sizes": dict(kernel.sizes),
                "device": device.name,
                "device_identity": device.identity,
                "technique": args.technique or "",
                "unpruned": total,
                "pruned": built.space.size(),
                "seconds": seconds,
                "from_cache": built.info.from_cache,
                "cuts": [{"constraint": c.constraint.name, "rejects": c.rejected} for c in cuts],
            }
        )
        if args.emit_mzn:
            _emit(
                Path(args.emit_mzn),
                f"{kernel.name}.{args.technique}" if args.technique else kernel.name,
                built.model,
                device,
                force=args.force,
                written=written,
            )
    if args.json:
        print(json.dumps(reports, indent=2))
        return 0
    for r in reports:
        size = "x".join(str(v) for v in r["sizes"].values())
        kept = r["pruned"] / r["unpruned"] if r["unpruned"] else 0.0
        how = "from cache" if r["from_cache"] else "solved"
        which = f" [{r['technique']}]" if r["technique"] else ""
        print(f"{r['kernel']} {size} on {r['device']}{which}")
        print(f"  unpruned   {r['unpruned']:>14,}")
        print(f"  pruned     {r['pruned']:>14,}  ({kept:.3%} kept)")
        print(f"  time       {fmt_seconds(r['seconds']):>14}  ({how})")
        if r["cuts"]:
            print("  constraints that cut most (domain points each rejects alone):")
        for c in r["cuts"]:
            n = "?" if c["rejects"] is None else f"{c['rejects']:,}"
            print(f"    {n:>14}  {c['constraint']}")
    if args.emit_mzn:
        print(
            f"MiniZinc files in {args.emit_mzn}: minizinc --solver gecode -a MODEL.mzn DEVICE.dzn"
        )
    return 0


def _emit(
    directory: Path,
    name: str,
    model: Any,
    device: DeviceLimits,
    *,
    force: bool,
    written: set[Path],
) -> None:
    files = {
        directory / f"{name}.mzn": model_mzn(model),
        directory / f"{device.identity}.dzn": device_dzn(model.limits, device.name),
    }
    for path, text in files.items():
        write_text(path, text, force=force or path in written)
        written.add(path)

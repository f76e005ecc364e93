"""Record real measurements of every configuration of a small tuning space.

The recording (``tests/data/recording_<name>.json``) lets the search tests replay real
timings without a device: ``ReplayEvaluator.from_json`` reads its ``results``. Keep the
space small (a few hundred configurations) so that recording on PoCL takes minutes::

    python benchmarks/compare/record.py stencils/heat3d.cl --size 16x16x8 \
        --technique global --technique local --where "CY <= 2" --where "CZ <= 2" \
        --name heat3d_small

``--dry-run`` prints the size of the space without measuring.
"""

from __future__ import annotations

import argparse
import json
import platform
import sys
import time
from datetime import UTC, datetime
from pathlib import Path

import numpy as np

from gtune.description import load_kernel
from gtune.device import DeviceLimits
from gtune.exceptions import GtuneError
from gtune.expr import Expr
from gtune.kernel import TunableKernel
from gtune.measure import OpenCLEvaluator, select_device
from gtune.space import EnumeratedSpace, solve_space

ROOT = Path(__file__).resolve().parents[2]


def parse_size(text: str) -> dict[str, int]:
    names = ("NX", "NY", "NZ")
    parts = [int(p) for p in text.lower().split("x")]
    return dict(zip(names, parts, strict=False))


def build(
    args: argparse.Namespace,
) -> tuple[TunableKernel, DeviceLimits, EnumeratedSpace, list[EnumeratedSpace]]:
    kernel = load_kernel(args.kernel, parse_size(args.size) if args.size else None)
    device = select_device(args.device)
    space = solve_space(kernel, device, remember_refusals=False).space
    where = [Expr(w, "--where") for w in args.where]
    if where:
        space = space.restrict(where, label="recording")
    parts = []
    for name in args.technique or list(kernel.techniques):
        if name not in kernel.techniques:
            raise GtuneError(
                f"kernel has no technique {name!r}; it has {', '.join(kernel.techniques)}"
            )
        parts.append(space.restrict(list(kernel.techniques[name]), label=name))
    return kernel, device, space, parts


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("kernel", help="kernel .cl (with its .yaml description)")
    parser.add_argument("--size", help="problem size, e.g. 16x16x8")
    parser.add_argument(
        "--device", help="OpenCL device selector (default: the first GPU, else CPU)"
    )
    parser.add_argument("--technique", action="append", help="data-loading technique to include")
    parser.add_argument("--where", action="append", default=[], help="extra constraint")
    parser.add_argument("--name", help="recording name (default: the kernel's)")
    parser.add_argument("--runs", type=int, default=3, help="timed runs per configuration")
    parser.add_argument("--out", help="output file (default: tests/data/recording_<name>.json)")
    parser.add_argument("--dry-run", action="store_true", help="print the space size and stop")
    args = parser.parse_args(argv)
    try:
        kernel, device, space, parts = build(args)
    except GtuneError as exc:
        print(f"record: error: {exc.render()}", file=sys.stderr)
        return 2
    configs = []
    seen = set()
    for part in parts:
        for c in part.enumerate():
            key = tuple(sorted(c.items()))
            if key not in seen:
                seen.add(key)
                configs.append(c)
    print(f"{len(configs)} configurations ({', '.join(f'{p.label}: {p.size()}' for p in parts)})")
    if args.dry_run:
        return 0
    name = args.name or Path(args.kernel).stem
    out = Path(args.out) if args.out else ROOT / "tests" / "data" / f"recording_{name}.json"
    start = time.monotonic()
    results = []
    with OpenCLEvaluator(kernel, device, runs=args.runs) as evaluator:
        for i, result in enumerate(evaluator.evaluate_batch(configs), 1):
            results.append(result.to_dict())
            if i % 25 == 0 or i == len(configs):
                print(
                    f"  {i}/{len(configs)} measured, {time.monotonic() - start:.0f} s", flush=True
                )
    data = {
        "kernel": {
            "name": kernel.name,
            "description": str(Path(kernel.description_path).resolve().relative_to(ROOT))
            if kernel.description_path
            else "",
            "identity": kernel.identity(),
            "sizes": dict(kernel.sizes),
        },
        "device": device.to_dict(),
        "space": {
            "parameters": space.parameters,
            "domains": space.domains,
            "techniques": [p.label for p in parts],
            "where": list(args.where),
            "size": len(configs),
        },
        "measurement": {"runs": args.runs, "warmup": 1},
        "recorded": datetime.now(UTC).isoformat(timespec="seconds"),
        "host": platform.node(),
        "results": results,
    }
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(data, indent=1, default=_json_default) + "\n")
    ok = sum(1 for r in results if r["status"] == "ok")
    print(f"wrote {out} ({ok} ok of {len(results)}) in {time.monotonic() - start:.0f} s")
    return 0


def _json_default(value: object) -> object:
    if isinstance(value, np.integer):
        return int(value)
    if isinstance(value, tuple):
        return list(value)
    raise TypeError(f"cannot write {type(value).__name__} as JSON")


if __name__ == "__main__":
    sys.exit(main())

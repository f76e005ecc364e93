"""Solving large spaces cold: the real stencils' whole spaces at 512³ on the H100's limits.

Each kernel's model (every technique, as ``gtune run`` solves it) is solved with the
cache off, ``--repeat`` times, and the time is split as :class:`SolveInfo` splits it:
MiniZinc flattening, Gecode's enumeration (its printing included) and reading the
output. A digest of the sorted rows shows that two versions of gtune found the same
space. Run from the repository root:

    .venv/bin/python benchmarks/space/bench_large.py OUT.json [--kernels box27 heat3d]
        [--size 512] [--repeat 2]

To compare two versions side by side, run this script with ``PYTHONPATH`` set to the
other checkout for one of them (``benchmarks/results/space/large/run.sh``): the JSON
names the gtune it imported.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import platform
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tests" / "space"))

from space_helpers import h100_limits  # noqa: E402

import gtune  # noqa: E402
from gtune.description import load_kernel  # noqa: E402
from gtune.space.model import build_model, split_for_solver  # noqa: E402
from gtune.space.solve import solve  # noqa: E402

KERNELS = ["box27", "heat3d", "laplacian4"]


def digest(rows: np.ndarray) -> str:
    """SHA-256 of the rows sorted, as int64: equal for equal spaces."""
    ordered = rows[np.lexsort(rows.T[::-1])].astype(np.int64)
    return hashlib.sha256(np.ascontiguousarray(ordered).tobytes()).hexdigest()[:16]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("out", type=Path, help="JSON file to write")
    parser.add_argument("--kernels", nargs="+", default=KERNELS, help="stencils/NAME.yaml")
    parser.add_argument("--size", type=int, default=512, help="cube side (default 512)")
    parser.add_argument("--repeat", type=int, default=2)
    args = parser.parse_args(argv)
    device = h100_limits()
    n = args.size
    results = []
    for name in args.kernels:
        kernel = load_kernel(ROOT / "stencils" / f"{name}.yaml", {"NX": n, "NY": n, "NZ": n})
        model, _ = split_for_solver(build_model(kernel, device))
        for r in range(args.repeat):
            start = time.perf_counter()
            rows, info = solve(model, use_cache=False)
            wall = time.perf_counter() - start
            results.append(
                {
                    "kernel": name,
                    "repeat": r,
                    "rows": len(rows),
                    "parameters": len(model.parameters),
                    "digest": digest(rows),
                    "wall_s": round(wall, 3),
                    "compile_s": round(info.seconds_compile, 3),
                    "search_s": round(info.seconds_search, 3),
                    "parse_s": round(info.seconds_parse, 3),
                    "parts": getattr(info, "parts", info.workers),  # before the pool: equal
                    "workers": info.workers,
                }
            )
            print(json.dumps(results[-1]), flush=True)
    out = {
        "gtune": str(Path(gtune.__file__).resolve().parent),
        "size": n,
        "device": device.name,
        "cpus": os.cpu_count(),
        "machine": platform.node(),
        "results": results,
    }
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(out, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

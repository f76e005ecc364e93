# ruff: noqa: SIM300  (parameter names are upper case, like the papers)
"""Space construction and queries: gtune (MiniZinc) against Kernel Tuner and pyATF.

The stencil space of tests/space/data/stencil3d.yaml at 256^3 with the H100's limits
(DESIGN.md) and this machine's PoCL limits. Run from the repository root:

    .venv/bin/python benchmarks/space/bench_space.py [--skip-python-package] [--out DIR]

Needs the ``bench`` extra (kernel_tuner, pyatf); a tool that is not installed is left out
and the JSON says so. Every OpenCL device found is measured with its real limits beside
the H100 limits from DESIGN.md. Writes space_bench.json and space_bench.png into
``--out`` (default: benchmarks/results/space).
"""

from __future__ import annotations

import argparse
import ast
import json
import os
import platform
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tests" / "space"))

from space_helpers import DATA, h100_limits  # noqa: E402

from gtune.description import load_kernel  # noqa: E402
from gtune.device import DeviceLimits  # noqa: E402
from gtune.space import build_model, solve_space  # noqa: E402
from gtune.space.solve import solve  # noqa: E402

OUT = ROOT / "benchmarks" / "results" / "space"
GROUPS = [["WX", "WY", "WZ"], ["WX", "CX"], ["WY", "CY"], ["WZ", "CZ"], ["BX", "VX"]]


def timed(fn: Any) -> tuple[Any, float]:
    t = time.perf_counter()
    out = fn()
    return out, time.perf_counter() - t


def python_constraints(model: Any) -> list[str]:
    """The model's constraints as Python text for Kernel Tuner: sizes and limits as
    numbers, integer division explicit (Kernel Tuner evaluates them as Python)."""
    env = model.env

    class Rewrite(ast.NodeTransformer):
        def visit_Name(self, node: ast.Name) -> ast.expr:
            return ast.Constant(env[node.id]) if node.id in env else node

        def visit_BinOp(self, node: ast.BinOp) -> ast.expr:
            self.generic_visit(node)
            if isinstance(node.op, ast.Div):
                node.op = ast.FloorDiv()
            return node

    out = []
    for c in model.constraints:
        tree = Rewrite().visit(ast.parse(c.expr.text, mode="eval"))
        out.append(ast.unparse(tree))
    return out


def gtune_side(kernel: Any, device: DeviceLimits, python_package: bool) -> dict[str, Any]:
    res: dict[str, Any] = {}
    with tempfile.TemporaryDirectory() as cache:
        os.environ["GTUNE_CACHE"] = cache
        cold, t_cold = timed(lambda: solve_space(kernel, device, use_cache=True))
        res["cold_s"] = t_cold
        res["cold_breakdown"] = {
            "compile_s": cold.info.seconds_compile,
            "search_s": cold.info.seconds_search,
            "parse_s": cold.info.seconds_parse,
            "workers": cold.info.workers,
        }
        warm_times = []
        for _ in range(5):
            warm, t_warm = timed(lambda: solve_space(kernel, device, use_cache=True))
            warm_times.append(t_warm)
        res["warm_s"] = statistics.median(warm_times)
        assert warm.info.from_cache
        space = warm.space
        res["size_unpruned"] = space.size_unpruned()
        res["size"] = space.size()
        _, res["enumerate_all_s"] = timed(lambda: list(space.enumerate()))
        lat = {}
        for group in GROUPS:
            times = []
            for base in space.sample(100, seed=1):
                fixed = {k: v for k, v in base.items() if k not in group}
                _, t = timed(lambda fixed=fixed, group=group: space.subspace(fixed, group))
                times.append(t)
            lat["+".join(group)] = {"median_s": statistics.median(times), "max_s": max(times)}
        res["group_query"] = lat
        if python_package:
            model = build_model(kernel, device)
            rows, t = timed(lambda: solve(model, use_cache=False, method="python")[0])
            res["minizinc_python_package_s"] = t
            assert len(rows) == res["size"]
    return res


def kernel_tuner_side(kernel: Any, device: DeviceLimits, model: Any) -> dict[str, Any]:
    from kernel_tuner.searchspace import Searchspace

    params = {p: list(v) for p, v in model.domains.items()}
    restrictions = python_constraints(model)
    ss, t = timed(
        lambda: Searchspace(
            params, restrictions, device.max_work_group_size, block_size_names=["WX", "WY", "WZ"]
        )
    )
    rows = np.array(ss.list, dtype=np.int64)
    times = []
    names = list(params)
    for i in np.random.default_rng(1).choice(len(rows), 100, replace=False):
        base = rows[i]
        free = [names.index(p) for p in ["WX", "WY", "WZ"]]
        keep = [j for j in range(len(names)) if j not in free]

        def query(base: Any = base, keep: list[int] = keep) -> list[Any]:
            return [c for c in ss.list if all(c[j] == base[j] for j in keep)]

        _, tq = timed(query)
        times.append(tq)
    return {
        "build_s": t,
        "size": ss.size,
        "group_query_WX+WY+WZ_median_s": statistics.median(times),
        "group_query_note": "Kernel Tuner has no sub-space query; a list filter in Python",
    }


def pyatf_side(kernel: Any, device: DeviceLimits) -> dict[str, Any]:
    from pyatf import TP, Set
    from pyatf.search_space import SearchSpace

    nx, ny, nz = (kernel.sizes[k] for k in ("NX", "NY", "NZ"))
    mwg, cu, lm = device.max_work_group_size, device.compute_units, device.local_mem_size
    w0, w1, w2 = device.max_work_item_sizes
    img_ok = device.image_support and nx <= device.image3d_max[0] and ny <= device.image3d_max[1]
    img_ok = img_ok and nz <= device.image3d_max[2]

    def pow2(hi: int) -> Any:
        return Set(*[1 << i for i in range(hi.bit_length()) if 1 << i <= hi])

    tps = [
        TP("LOCAL", Set(0, 1)),
        TP("IMAGE", Set(0, 1), lambda IMAGE, LOCAL: LOCAL + IMAGE <= 1 and (IMAGE == 0 or img_ok)),
        TP("VX", pow2(16), lambda VX, LOCAL, IMAGE: VX == 1 or (LOCAL == 0 and IMAGE == 0)),
        TP("BX", pow2(16), lambda BX, VX: VX <= BX and BX == VX),
        TP("CX", pow2(nx), lambda CX, BX: nx % (BX * CX) == 0 and nx // (BX * CX) >= 1),
        TP(
            "WX",
            pow2(nx),
            lambda WX, BX, CX: WX * BX * CX <= nx and WX <= w0 and (nx // (BX * CX)) % WX == 0,
        ),
        TP("CY", pow2(ny), lambda CY: ny % CY == 0),
        TP(
            "WY",
            pow2(ny),
            lambda WY, CY, WX: (
                WY * CY <= ny and WY <= w1 and (ny // CY) % WY == 0 and WX * WY <= mwg
            ),
        ),
        TP("CZ", pow2(nz), lambda CZ: nz % CZ == 0),
        TP(
            "WZ",
            pow2(nz),
            lambda WZ, CZ, WX, WY, BX, CX, CY, LOCAL: (
                WZ * CZ <= nz
                and WZ <= w2
                and (nz // CZ) % WZ == 0
                and WX * WY * WZ <= mwg
                and (nx // (BX * CX) // WX) * (ny // CY // WY) * (nz // CZ // WZ) >= cu
                and LOCAL * (WX * BX * CX + 2) * (WY * CY + 2) * (WZ * CZ + 2) * 4 <= lm
            ),
        ),
    ]
    ss, t = timed(lambda: SearchSpace(*tps, verbosity=0))
    return {"build_s": t, "size": ss.constrained_size}


def plot(results: dict[str, Any], path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    devices = list(results["devices"])
    labels = ["gtune cold", "gtune warm", "Kernel Tuner", "pyATF"]
    fig, ax = plt.subplots(figsize=(8, 4))
    width = 0.2
    for k, label in enumerate(labels):
        vals = []
        for d in devices:
            r = results["devices"][d]
            vals.append(
                {
                    "gtune cold": r["gtune"]["cold_s"],
                    "gtune warm": r["gtune"]["warm_s"],
                    "Kernel Tuner": r.get("kernel_tuner", {}).get("build_s", np.nan),
                    "pyATF": r.get("pyatf", {}).get("build_s", np.nan),
                }[label]
            )
        ax.bar(np.arange(len(devices)) + (k - 1.5) * width, vals, width, label=label)
    ax.axhline(1.0, color="k", ls="--", lw=1, label="target 1 s")
    ax.set_yscale("log")
    ax.set_xticks(np.arange(len(devices)), devices)
    ax.set_ylabel("seconds to the full pruned space")
    ax.set_title(f"stencil space 256³: construction time ({results['machine']['cpus']} CPU cores)")
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=120)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--skip-python-package", action="store_true")
    ap.add_argument("--skip-others", action="store_true")
    ap.add_argument("--out", type=Path, default=OUT)
    args = ap.parse_args()
    kernel = load_kernel(DATA / "stencil3d.yaml")
    devices = {"H100 (DESIGN.md limits)": h100_limits()}
    try:
        from gtune.measure import list_devices

        for found in list_devices():
            devices[f"{found.platform.split()[0]} ({found.name})"] = found
    except Exception as exc:  # no OpenCL here: record why
        print(f"no OpenCL device: {exc}", file=sys.stderr)
    results: dict[str, Any] = {
        "machine": {"cpus": os.cpu_count(), "python": platform.python_version()},
        "problem": dict(kernel.sizes),
        "devices": {},
    }
    for name, device in devices.items():
        print(f"== {name}", file=sys.stderr)
        r: dict[str, Any] = {"limits": device.limit_values()}
        r["gtune"] = gtune_side(kernel, device, not args.skip_python_package)
        print(json.dumps(r["gtune"], indent=1), file=sys.stderr)
        if not args.skip_others:
            model = build_model(kernel, device)
            sides = {
                "kernel_tuner": lambda d=device, m=model: kernel_tuner_side(kernel, d, m),
                "pyatf": lambda d=device: pyatf_side(kernel, d),
            }
            for tool, side in sides.items():
                try:
                    r[tool] = side()
                except ImportError as exc:
                    r[tool] = {"skipped": f"not installed here: {exc}"}
                print(json.dumps(r[tool], indent=1), file=sys.stderr)
        results["devices"][name] = r
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "space_bench.json").write_text(json.dumps(results, indent=2))
    plot(results, args.out / "space_bench.png")


if __name__ == "__main__":
    main()

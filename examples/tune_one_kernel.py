"""Tune one stencil from Python, with the command line's progress display.

    python examples/tune_one_kernel.py                     # heat3d at 64x64x64, 60 s
    python examples/tune_one_kernel.py --size 16x16x16 --budget 8

Prints the best configuration, its confirmed time and the speedup over the kernel's
default, and writes the run's convergence plot. Results go to the same store as
``gtune run`` (``$GTUNE_DB``, else ./gtune-results.db), so running it again answers at
once.
"""

from __future__ import annotations

import argparse
from pathlib import Path

import gtune
from gtune.report import convergence_png

HERE = Path(__file__).resolve().parent


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--kernel", default=str(HERE.parent / "stencils" / "heat3d.cl"))
    parser.add_argument("--size", default="64x64x64", help="NXxNYxNZ")
    parser.add_argument("--budget", default="60s", help="configurations (30) or time (60s)")
    parser.add_argument("--plot", default="convergence.png")
    args = parser.parse_args()

    nx, ny, nz = (int(v) for v in args.size.split("x"))
    report = gtune.tune(
        args.kernel,
        sizes={"NX": nx, "NY": ny, "NZ": nz},
        budget=args.budget,
        technique="global",  # one data-loading technique keeps the example short
        observer=gtune.ProgressBar(),
    )
    print("best configuration:", report.best_config)
    print(f"best time: {report.best_s * 1e6:.2f} µs")
    if report.speedup is not None:
        verdict = "significant" if report.significant else "within the noise"
        print(f"speedup over the default: {report.speedup:.2f}x ({verdict})")
    print("plot:", convergence_png(report, args.plot))


if __name__ == "__main__":
    main()

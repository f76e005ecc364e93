"""A small campaign in this process: a 3D and a 2D stencil, two strategies, one store.

    python examples/campaign_2d_and_3d.py --size 64x64x64 --budget 20

One text size serves both kernels (the 2D one takes the first two numbers). Every task
is checked before anything is measured, consecutive tasks on a kernel share its space
and workers, and everything measured lands in one store, so a configuration measured by
one strategy is not measured again for the other.
"""

from __future__ import annotations

import argparse
from pathlib import Path

import gtune

STENCILS = Path(__file__).resolve().parent.parent / "stencils"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--size", default="64x64x64")
    parser.add_argument("--budget", default="20")
    parser.add_argument("--store", default="campaign-example.db")
    args = parser.parse_args()

    tasks = gtune.Campaign.grid(
        [str(STENCILS / "heat3d.cl"), str(STENCILS / "jacobi2d.cl")],
        sizes=[args.size],
        strategies=["hybrid", "random"],
        technique="global",
        budget=args.budget,
    )
    with gtune.Campaign(tasks, store=args.store) as campaign:
        result = campaign.run(observer=gtune.ProgressBar())
    print(f"{'task':40} {'best':>12} {'speedup':>8} {'configs':>8}")
    for task, report in result.reports:
        speedup = f"{report.speedup:.2f}x" if report.speedup is not None else "-"
        print(f"{task.name:40} {report.best_s * 1e6:10.2f} µs {speedup:>8} {report.evaluations:>8}")


if __name__ == "__main__":
    main()

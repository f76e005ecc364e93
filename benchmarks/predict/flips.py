"""How often a load-predictor label flips when the same kernels are labelled again.

Usage: python benchmarks/predict/flips.py FIRST.csv SECOND.csv

Both CSVs are datasets written by ``gtune train`` (columns ``kernel``, ``label`` and
``time:<technique>``). For every kernel-shape in both, prints the two labels, the best
time per technique in each run, and what the second run's label costs in the first
run's times (1.000 when it is the same technique or an exact tie). The closing line
counts the flips and the largest cost of a flip, which says whether a flipped label is
a near-tie (noise the penalty-weighted accuracy forgives) or a real disagreement.
"""

from __future__ import annotations

import csv
import sys
from pathlib import Path


def _load(path: Path) -> dict[str, dict[str, str]]:
    with path.open(newline="") as handle:
        return {row["kernel"]: row for row in csv.DictReader(handle)}


def main(argv: list[str]) -> int:
    if len(argv) != 2:
        print(__doc__.strip().splitlines()[2], file=sys.stderr)
        return 2
    first, second = (_load(Path(a)) for a in argv)
    techniques = sorted(k[5:] for k in next(iter(first.values())) if k.startswith("time:"))
    flips, shared, worst = 0, 0, 1.0
    for kernel in sorted(first.keys() & second.keys()):
        a, b = first[kernel], second[kernel]
        times_a = {t: float(a[f"time:{t}"]) for t in techniques}
        times_b = {t: float(b[f"time:{t}"]) for t in techniques}
        cost = times_a[b["label"]] / times_a[a["label"]]
        flipped = a["label"] != b["label"]
        shared += 1
        flips += flipped
        if flipped:
            worst = max(worst, cost)
        cells = " ".join(f"{t} {times_a[t] * 1e6:7.1f}/{times_b[t] * 1e6:7.1f}" for t in techniques)
        mark = "FLIP" if flipped else "    "
        print(f"{kernel:34s} {a['label']:7s} {b['label']:7s} {mark} {cells} µs  cost {cost:.3f}")
    print(f"{flips} of {shared} labels flipped; the worst flip costs {worst:.3f}x")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

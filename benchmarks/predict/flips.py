"""How often a load-predictor label flips when the same kernels are labelled again.

Usage: python benchmarks/predict/flips.py FIRST.csv SECOND [SECOND ...]

FIRST is a dataset written by ``gtune train`` (columns ``kernel``, ``label`` and
``time:<technique>``). Each SECOND is another such dataset or an ``auto_vs_all.py``
report (``auto_vs_all.json``: its ``all`` arm's winning technique and time, every
technique searched); a later SECOND replaces an earlier one's row of the same kernel.
For every kernel-shape in FIRST and the SECONDs, prints the two labels, the best time
per technique in each collection (``-`` where the second did not record it), and what
the second label costs in the first collection's times (1.000 when it is the same
technique or an exact tie; ``n/a`` when the first did not search it). A row found
unchanged in both (the same identity and times: copied from one dataset into the
other) is no second collection and is left out. The closing line counts the flips
and the largest cost of a flip, which says whether a flipped label is a near-tie
(noise the penalty-weighted accuracy forgives) or a real disagreement.
"""

from __future__ import annotations

import csv
import json
import math
import sys
from pathlib import Path

Row = dict[str, str]


def _load(path: Path) -> dict[str, Row]:
    if path.suffix == ".json":
        report = json.loads(path.read_text())
        return {
            kernel: {
                "label": e["all"]["technique"],
                f"time:{e['all']['technique']}": str(e["all"]["tuned_s"]),
            }
            for kernel, e in report.items()
            if isinstance(e, dict) and isinstance(e.get("all"), dict)
        }
    with path.open(newline="") as handle:
        return {row["kernel"]: row for row in csv.DictReader(handle)}


def _times(row: Row, techniques: list[str]) -> dict[str, float]:
    return {t: float(row[f"time:{t}"]) for t in techniques if row.get(f"time:{t}")}


def _copied(a: Row, b: Row, techniques: list[str]) -> bool:
    return (
        bool(a.get("identity"))
        and a.get("identity") == b.get("identity")
        and _times(a, techniques) == _times(b, techniques)
    )


def main(argv: list[str]) -> int:
    if len(argv) < 2:
        print(__doc__.strip().splitlines()[2], file=sys.stderr)
        return 2
    try:
        first = _load(Path(argv[0]))
        second: dict[str, Row] = {}
        for arg in argv[1:]:
            second.update(_load(Path(arg)))
    except (OSError, ValueError, KeyError, TypeError) as exc:
        print(f"flips: cannot read the collections: {exc}", file=sys.stderr)
        return 2
    techniques = sorted(k[5:] for k in next(iter(first.values())) if k.startswith("time:"))
    flips, shared, copied, worst = 0, 0, 0, 1.0
    for kernel in sorted(first.keys() & second.keys()):
        a, b = first[kernel], second[kernel]
        if _copied(a, b, techniques):
            copied += 1
            continue
        times_a, times_b = _times(a, techniques), _times(b, techniques)
        cost = times_a.get(b["label"], math.inf) / times_a[a["label"]]
        flipped = a["label"] != b["label"]
        shared += 1
        flips += flipped
        if flipped:
            worst = max(worst, cost)
        cells = " ".join(
            f"{t} {times_a[t] * 1e6:7.1f}/"
            + (f"{times_b[t] * 1e6:7.1f}" if t in times_b else "      -")
            for t in techniques
        )
        mark = "FLIP" if flipped else "    "
        costs = f"{cost:.3f}" if math.isfinite(cost) else "n/a"
        print(f"{kernel:34s} {a['label']:7s} {b['label']:7s} {mark} {cells} µs  cost {costs}")
    print(f"{flips} of {shared} labels flipped; the worst flip costs {worst:.3f}x")
    if copied:
        print(f"({copied} rows unchanged in both, copied rather than collected again, left out)")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

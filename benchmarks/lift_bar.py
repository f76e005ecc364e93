#!/usr/bin/env python3
"""Issue 48's bar, kernel by kernel: a merged lift corpus result against its bound classes.

Reads a ``lift_corpus.py`` result (``lift_corpus.json``) and ``bound.py``'s classes
(``--json`` output) and writes one Markdown table, a row per kernel: its elements, the
budget it was searched at, lifted over plain, the lifted and plain kernels' shares of
the copy, the bound class, and the verdict against the bar (at least ``--copy`` of the
copy and ``--speedup`` over the plain kernel; the bar binds memory-bound kernels). A
speed-up that would need more than the copy (the plain kernel already above
copy / speed-up) is said so. Then the counts.

    python3 benchmarks/lift_bar.py benchmarks/results/lift/h200-all/lift_corpus.json \
        benchmarks/results/lift/h200-all/bound.json > bar.md
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import Counter
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any


def verdict(k: Mapping[str, Any], copy: float, speedup: float) -> str:
    """The bar's verdict on one kernel's row."""
    share, plain = float(k["fraction_of_copy"]), float(k["plain_fraction_of_copy"])
    over = float(k["lifted_over_plain"])
    missed = []
    if share < copy:
        missed.append("copy not met")
    if over < speedup:
        need = plain * speedup
        beyond = " (beyond the copy)" if need > 1.0 else ""
        missed.append(f"{speedup:g}× not met: needs {need:.1%} of the copy{beyond}")
    return "; ".join(missed) or "met"


def table(
    kernels: Mapping[str, Any], classes: Mapping[str, Any], copy: float, speedup: float
) -> tuple[list[str], Counter[str]]:
    """The table's lines and the counts (by class, and met per class)."""
    lines = [
        "| kernel | elements | budget | lifted / plain | of copy | plain, of copy | bound | bar |",
        "| --- | --- | ---: | ---: | ---: | ---: | --- | --- |",
    ]
    counts: Counter[str] = Counter()
    for name, k in kernels.items():
        if "error" in k:
            lines.append(f"| {name} | | | | | | | not measured: {k['error']} |")
            counts["not measured"] += 1
            continue
        cls = str(classes.get(name, {}).get("class", "—"))
        said = verdict(k, copy, speedup)
        counts[cls] += 1
        counts[f"{cls} met"] += said == "met"
        budget = k.get("budget")
        cells = [
            f"{name} {k['size']}",
            str(k.get("elements") or k.get("dtype")),
            "to its end" if not budget else str(budget),
            f"{float(k['lifted_over_plain']):.2f}×",
            f"{float(k['fraction_of_copy']):.1%}",
            f"{float(k['plain_fraction_of_copy']):.1%}",
            cls if cls == "memory" else f"**{cls}**",
            said if said == "met" else f"**{said}**",
        ]
        lines.append("| " + " | ".join(cells) + " |")
    return lines, counts


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    ap.add_argument("corpus", type=Path, help="lift_corpus.json (a run or a merge)")
    ap.add_argument("bound", type=Path, help="bound.py --json output for the same kernels")
    ap.add_argument("--copy", type=float, default=0.85, help="share of the copy (0.85)")
    ap.add_argument("--speedup", type=float, default=1.3, help="over plain tuning (1.3)")
    args = ap.parse_args(argv)
    try:
        kernels = json.loads(args.corpus.read_text())["kernels"]
        classes = json.loads(args.bound.read_text())["kernels"]
    except (OSError, ValueError, KeyError) as e:
        print(f"lift_bar: {e}", file=sys.stderr)
        return 2
    lines, counts = table(kernels, classes, args.copy, args.speedup)
    print("\n".join(lines))
    print()
    for cls in sorted(c for c in counts if not c.endswith(" met") and c != "not measured"):
        print(f"- {cls}: {counts[cls]} kernels, {counts[cls + ' met']} meet the bar")
    if counts["not measured"]:
        print(f"- not measured: {counts['not measured']}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

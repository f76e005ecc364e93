"""How far the load predictor's confidence can be trusted, on kernels held out by family.

    python benchmarks/predict/calibration.py TRACES.json DATASET.csv OUT.md

Issue 46 asks for a pick that knows when it does not know: the runner-up scouted when
it is close in the model's view. This measures whether the model's view says so. For
each family held out (``regret.py``'s families: the suite's patterns, the real
stencils, the lifted corpus), the forest is fitted on the others and gives each
held-out kernel the probability ``p`` of its first choice. Reported:

- **reliability**: kernels binned by ``p``; in each bin, how often the first choice is
  the best technique (calibrated: about ``p``), and how often it costs more than 2 %
  and 5 % against the best (the misses a user would feel); the Brier score of the
  first choice against the best-or-not outcome.
- **a scout gated by confidence**: the first choice alone when ``p >= t``, else the
  runner-up scouted as ``gtune run`` does (``even-est-20%``, at least ``SCOUT_MIN``
  configurations), for several ``t``; ``t`` above 1 is ``gtune run``'s policy (always
  scout), ``t`` 0 the first choice alone. Regret and search seconds against all
  techniques' complete searches, replayed on the recorded traces as ``regret.py`` does.
"""

from __future__ import annotations

import argparse
import itertools
import math
import sys
from dataclasses import dataclass
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from regret import (  # noqa: E402
    Fold,
    Outcome,
    Traces,
    family,
    hedge_estimated,
    load_traces,
    searched,
)

from gtune.loadpredict.dataset import Dataset, TrainingRow  # noqa: E402

BINS = (0.0, 0.7, 0.9, 0.99, 1.0001)
GATES = (0.0, 0.8, 0.9, 0.95, 0.99, 1.01)
SHARE = 0.2


@dataclass
class Held:
    """A held-out kernel: its first choice's probability, what the first choice alone
    costs against the best technique, and each gate's (regret, search seconds over
    all's, search seconds)."""

    kernel: str
    p: float
    cost: float
    gates: dict[float, tuple[float, float, float]]
    all_s: float


def held_out(rows: list[TrainingRow], traces: dict[str, Traces]) -> list[Held]:
    """Each kernel's first choice, its probability and the outcome of each gate, with
    its family held out of the model."""
    out: list[Held] = []
    rows = [r for r in rows if r.kernel in traces]
    for held in sorted({family(r.kernel) for r in rows}):
        fold = Fold([r for r in rows if family(r.kernel) != held], traces)
        for row in (r for r in rows if family(r.kernel) == held):
            tr = traces[row.kernel]
            ranked = fold.rank(row, list(tr))
            (first, p), (second, _) = ranked[0], ranked[1]
            ref_best, ref_cost, _ = searched(tr, sorted(tr))
            gates: dict[float, Outcome] = {}
            for t in GATES:
                gates[t] = (
                    searched(tr, [first])
                    if p >= t
                    else hedge_estimated(tr, first, second, SHARE, fold)
                )
            out.append(
                Held(
                    row.kernel,
                    p,
                    tr[first].best() / ref_best,  # the first choice alone
                    {t: (b / ref_best, c / ref_cost, c) for t, (b, c, _) in gates.items()},
                    ref_cost,
                )
            )
    return out


def reliability(entries: list[Held]) -> list[str]:
    lines = [
        "| first choice's p | kernels | mean p | first choice best | costs > 2 % | costs > 5 % |",
        "| --- | ---: | ---: | ---: | ---: | ---: |",
    ]
    for lo, hi in itertools.pairwise(BINS):
        inside = [e for e in entries if lo <= e.p < hi]
        if not inside:
            continue
        ps = [e.p for e in inside]
        costs = [e.cost for e in inside]
        label = f"{lo:.2f}–{min(hi, 1.0):.2f}"
        lines.append(
            f"| {label} | {len(inside)} | {np.mean(ps):.3f} "
            f"| {np.mean([c <= 1.0 + 1e-12 for c in costs]):.0%} "
            f"| {sum(c > 1.02 for c in costs)} | {sum(c > 1.05 for c in costs)} |"
        )
    brier = np.mean([(e.p - (e.cost <= 1.0 + 1e-12)) ** 2 for e in entries])
    lines += ["", f"Brier score of the first choice (best or not): {brier:.4f}."]
    return lines


def gated(entries: list[Held]) -> list[str]:
    lines = [
        "| scout the runner-up when p < | kernels scouted | geomean regret | worst "
        "| kernels > 1.05 | search seconds vs all |",
        "| --- | ---: | ---: | ---: | ---: | ---: |",
    ]
    for t in GATES:
        res = [e.gates[t] for e in entries]
        regrets = [r[0] for r in res]
        seconds = sum(r[2] for r in res) / sum(e.all_s for e in entries)
        scouted = sum(e.p < t for e in entries)
        name = "always (gtune run)" if t > 1 else ("never" if t == 0 else f"{t:.2f}")
        lines.append(
            f"| {name} | {scouted} | {math.exp(float(np.mean(np.log(regrets)))):.4f} "
            f"| {max(regrets):.3f} | {sum(r > 1.05 for r in regrets)} | {seconds:.0%} |"
        )
    return lines


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("traces", type=Path)
    p.add_argument("dataset", type=Path)
    p.add_argument("out", type=Path)
    args = p.parse_args(argv)
    traces = load_traces(args.traces)
    rows = Dataset.read_csv(args.dataset).usable().rows
    entries = held_out(rows, traces)
    misses = sorted((e for e in entries if e.cost > 1.05), key=lambda e: -e.p)
    md = [
        f"# The load predictor's confidence on held-out kernels ({len(entries)} kernels)",
        "",
        f"`python benchmarks/predict/calibration.py {args.traces} {args.dataset} {args.out}`",
        "(families held out as in `regret.md`).",
        "",
        "## Reliability",
        "",
        *reliability(entries),
        "",
        "## The first choice's misses above 5 %, most confident first",
        "",
        "| kernel | p | first choice alone: time over the best |",
        "| --- | ---: | ---: |",
        *[f"| {e.kernel} | {e.p:.2f} | {e.cost:.3f} |" for e in misses],
        "",
        "## A scout gated by the model's confidence",
        "",
        *gated(entries),
        "",
    ]
    args.out.write_text("\n".join(md))
    print("\n".join(md))
    return 0


if __name__ == "__main__":
    sys.exit(main())

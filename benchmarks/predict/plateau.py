"""Would a search that stops on a plateau be shorter at no loss? Replayed on the traces.

    python benchmarks/predict/plateau.py TRACES.json OUT.md

TRACES.json (``traces.py``) holds every technique's complete search of each kernel in
the order the hybrid spec measured it. A plateau stop ends a search at the first
configuration n (at least ``nmin``) whose best so far is not ``eps`` better than the
best ``frac * n`` configurations before. For each technique and rule: the geometric
mean and worst regret (best at the stop over the complete search's best), how many
kernels lose more than 2 %, and the share of the complete searches' seconds spent.
"""

from __future__ import annotations

import argparse
import math
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

from regret import Trace, load_traces

RULES = [(0.25, 0.005, 60), (0.33, 0.005, 60), (0.5, 0.005, 60), (0.33, 0.01, 100)]
RULES += [(0.5, 0.002, 100), (0.4, 0.003, 150)]


def stop_at(tr: Trace, frac: float, eps: float, nmin: int) -> int:
    """How many configurations the plateau rule lets the search measure."""
    best, history = math.inf, []
    for i, t in enumerate(tr.times):
        best = min(best, t)
        history.append(best)
        n = i + 1
        k = max(1, int(frac * n))
        if n >= nmin and n - 1 - k >= 0 and history[-1] > history[-1 - k] * (1 - eps):
            return n
    return len(tr.times)


def table(traces: dict[str, dict[str, Trace]]) -> str:
    lines = [
        f"# Plateau stops replayed on {len(traces)} kernels' complete searches",
        "",
        "| technique | stop: no `eps` gain in the last `frac` of `n >= nmin` | geomean regret "
        "| worst | kernels > 1.02 | seconds vs complete |",
        "| --- | --- | ---: | ---: | ---: | ---: |",
    ]
    for tech in ("vec", "stream", "global"):
        for frac, eps, nmin in RULES:
            regrets, costs, fulls = [], [], []
            for trs in traces.values():
                tr = trs.get(tech)
                if tr is None or not tr.times:
                    continue
                n = stop_at(tr, frac, eps, nmin)
                regrets.append(tr.best(n) / tr.best())
                costs.append(tr.cost(n))
                fulls.append(tr.cost())
            g = math.exp(float(np.mean(np.log(regrets))))
            lines.append(
                f"| {tech} | frac {frac}, eps {eps}, nmin {nmin} | {g:.4f} | {max(regrets):.3f} "
                f"| {sum(r > 1.02 for r in regrets)} | {100 * sum(costs) / sum(fulls):.0f} % |"
            )
    return "\n".join(lines) + "\n"


def main(argv: list[str]) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("traces", type=Path)
    p.add_argument("out", type=Path)
    args = p.parse_args(argv)
    text = table(load_traces(args.traces))
    args.out.write_text(text)
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

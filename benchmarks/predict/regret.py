"""Technique policies judged by regret on kernels held out by family, offline.

    python benchmarks/predict/regret.py TRACES.json DATASET.csv OUT_DIR [--k 30,60,100]

TRACES.json (``traces.py``) holds every technique's complete search of each kernel in
the order it measured; DATASET.csv the kernels' features and labels. For each way of
holding kernels out (by family: the suite's patterns, the real stencils and the
lifted corpus each a family; by array dimensionality) a model is fitted on the other
families and each held-out kernel is "tuned" by replaying its traces under each
policy:

- ``all``: every technique searched to its end (``--technique all``): the reference.
- ``always-T``: one technique, whatever the kernel; ``majority``: the training
  families' most frequent label.
- ``model``: the forest's first choice, searched alone.
- ``model-two``: the policy before issue 46 (the two most likely when p < 0.6).
- ``hedge-K``: the first choice searched to its end, and the runner-up (the model's
  second; with one class, the training families' runner-up) scouted for its first K
  configurations; when the scout's best already beats the first choice's, the
  runner-up is searched to its end too. ``race-K``: both scouted K, the leader
  continues alone.
- ``even-X``: the runner-up scouted for X of its own complete search, continued when
  it leads the first choice at X of the first's; ``even-est-X`` (what ``gtune run``
  does): the same with the runner-up's length estimated from the training kernels'
  ratio of the two techniques' search lengths, and never fewer than ``SCOUT_MIN``
  configurations (``even-est-X-nofloor``: without that floor; ``even-est-X-floor30``:
  with the floor of 30 it had before; ``even-own-X``: the runner-up's length from its
  own training searches, which a scout run beside the first choice would know);
  ``first-length-X``: the scout as the
  driver ran it before (X of the *first choice's* length); ``projected-X``: continued
  when the scout's best times the gain the training kernels' searches of that
  technique still made after X beats the first choice's final best.

Regret: the policy's best time over ``all``'s; cost: the seconds its searches took
(each configuration's compile share and timed runs, as recorded) over ``all``'s. A
replay is exact: a search cut after K configurations measured the first K of the
complete search (the hybrid spec proposes the same whatever the budget).
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from gtune.loadpredict.dataset import Dataset, TrainingRow
from gtune.loadpredict.model import TechniqueForest
from gtune.tuning.techniques import SCOUT_MIN

REAL = {"heat3d", "box27", "laplacian4", "jacobi2d", "blur5", "hotspot"}


def family(kernel: str) -> str:
    """The family a kernel is held out with: lifted, real, or the suite's pattern."""
    base = kernel.split("@")[0]
    if base.startswith("lifted_"):
        return "lifted"
    if base in REAL:
        return "real"
    return base.split("_")[0]


def dims(row: TrainingRow) -> str:
    return "2D arrays" if row.traits.log2_nz == 0 else "3D arrays"


@dataclass
class Trace:
    times: list[float]  # seconds, inf where the configuration failed
    costs: list[float]  # seconds

    def best(self, k: int | None = None) -> float:
        head = self.times if k is None else self.times[:k]
        return min(head, default=math.inf)

    def cost(self, k: int | None = None) -> float:
        return sum(self.costs if k is None else self.costs[:k])


Traces = dict[str, Trace]
Outcome = tuple[float, float, str]  # best seconds, cost seconds, what was searched


def load_traces(path: Path) -> dict[str, Traces]:
    data = json.loads(path.read_text())
    out: dict[str, Traces] = {}
    for kernel, entry in data["kernels"].items():
        out[kernel] = {
            t: Trace(
                [math.inf if m is None else m * 1e-6 for m in v["median_us"]],
                [c * 1e-3 for c in v["cost_ms"]],
            )
            for t, v in entry["techniques"].items()
        }
    return out


def searched(tr: Traces, picks: Sequence[str]) -> Outcome:
    return (
        min(tr[t].best() for t in picks),
        sum(tr[t].cost() for t in picks),
        "+".join(picks),
    )


def hedge(tr: Traces, first: str, second: str, k: int) -> Outcome:
    """First choice to its end; the runner-up scouted K, continued if it leads."""
    a, b = tr[first], tr[second]
    if b.best(k) < a.best():
        return min(a.best(), b.best()), a.cost() + b.cost(), f"{first}+{second}"
    return a.best(), a.cost() + b.cost(k), f"{first}+{second}[{k}]"


def hedge_share(tr: Traces, first: str, second: str, share: float) -> Outcome:
    """:func:`hedge` with the runner-up scouted for a share of its complete search's
    configurations (a search knows how many its spec proposes)."""
    return hedge(tr, first, second, max(1, round(share * len(tr[second].times))))


def hedge_even(tr: Traces, first: str, second: str, share: float) -> Outcome:
    """The first choice to its end; the runner-up scouted for ``share`` of its search
    and continued when it leads the first choice at the same share of the first's
    search (two searches compared at equal progress, not a scout against a finished
    search: a technique whose spec takes longer to reach its best is not penalised)."""
    a, b = tr[first], tr[second]
    ka = max(1, round(share * len(a.times)))
    kb = max(1, round(share * len(b.times)))
    if b.best(kb) < a.best(ka):
        return min(a.best(), b.best()), a.cost() + b.cost(), f"{first}+{second}"
    return a.best(), a.cost() + b.cost(kb), f"{first}+{second}[{kb}]"


def hedge_first_length(tr: Traces, first: str, second: str, share: float) -> Outcome:
    """:func:`hedge_even` as the driver ran it before: the runner-up scouted for
    ``share`` of the *first choice's* search length (its own is not known before it
    ends), so a runner-up with a shorter search is compared further into its search."""
    a, b = tr[first], tr[second]
    ka = max(1, round(share * len(a.times)))
    if b.best(ka) < a.best(ka):
        return min(a.best(), b.best()), a.cost() + b.cost(), f"{first}+{second}"
    return a.best(), a.cost() + b.cost(ka), f"{first}+{second}[{ka}]"


def hedge_estimated(
    tr: Traces, first: str, second: str, share: float, f: Fold, least: int = SCOUT_MIN
) -> Outcome:
    """:func:`hedge_even` with the runner-up's search length estimated as the driver
    can: the first choice's length times the training kernels' median ratio of the
    two techniques' complete search lengths; never fewer than ``least`` configurations
    (the driver's ``SCOUT_MIN``)."""
    a, b = tr[first], tr[second]
    ka = max(1, round(share * len(a.times)))
    kb = max(least, round(share * len(a.times) * f.length_ratio(first, second)))
    if b.best(kb) < a.best(ka):
        return min(a.best(), b.best()), a.cost() + b.cost(), f"{first}+{second}"
    return a.best(), a.cost() + b.cost(kb), f"{first}+{second}[{kb}]"


def hedge_estimated_nofloor(tr: Traces, first: str, second: str, share: float, f: Fold) -> Outcome:
    """:func:`hedge_estimated` as the driver ran it before ``SCOUT_MIN``."""
    return hedge_estimated(tr, first, second, share, f, least=1)


def hedge_estimated_floor30(tr: Traces, first: str, second: str, share: float, f: Fold) -> Outcome:
    """:func:`hedge_estimated` with the floor of 30 configurations the driver had
    before ``SCOUT_MIN`` became 60."""
    return hedge_estimated(tr, first, second, share, f, least=30)


def hedge_own_length(
    tr: Traces, first: str, second: str, share: float, f: Fold, least: int = SCOUT_MIN
) -> Outcome:
    """:func:`hedge_estimated` with the runner-up's length estimated from its own complete
    searches of the training kernels (their median), not from the first choice's
    length: known before the first choice's search ends, so the scout could run beside
    it (the two sharing the compile workers) and be compared at equal progress once
    both end."""
    a, b = tr[first], tr[second]
    lens = [len(t[second].times) for t in f.traces if second in t]
    expected = float(np.median(lens)) if lens else float(len(a.times))
    ka = max(1, round(share * len(a.times)))
    kb = max(least, round(share * expected))
    if b.best(kb) < a.best(ka):
        return min(a.best(), b.best()), a.cost() + b.cost(), f"{first}+{second}"
    return a.best(), a.cost() + b.cost(kb), f"{first}+{second}[{kb}]"


def projected(tr: Traces, first: str, second: str, share: float, f: Fold) -> Outcome:
    """The first choice to its end; the runner-up scouted for ``share`` of its
    (estimated) search and continued when its best so far, times what the training
    kernels' searches of that technique still gained after that share, beats the first
    choice's final best."""
    a, b = tr[first], tr[second]
    kb = max(1, round(share * len(a.times) * f.length_ratio(first, second)))
    if b.best(kb) * f.gain(second, share) < a.best():
        return min(a.best(), b.best()), a.cost() + b.cost(), f"{first}+{second}"
    return a.best(), a.cost() + b.cost(kb), f"{first}+{second}[{kb}]"


def race(tr: Traces, first: str, second: str, k: int) -> Outcome:
    """Both scouted K; the leader continues alone."""
    a, b = tr[first], tr[second]
    lead, other = (first, second) if a.best(k) <= b.best(k) else (second, first)
    return tr[lead].best(), tr[lead].cost() + tr[other].cost(k), f"{lead}+{other}[{k}]"


class Fold:
    """A model and its fallbacks, fitted on the training families."""

    def __init__(self, train: list[TrainingRow], traces: dict[str, Traces] | None = None) -> None:
        self.traces = [traces[r.kernel] for r in train if traces and r.kernel in traces]
        self.labels = Counter(r.label for r in train)
        self.majority = self.labels.most_common(1)[0][0]
        # runner-up when the model knows one class: the technique closest to the best
        # on the training kernels (geometric mean of time over the best)
        ratios: dict[str, list[float]] = {}
        for r in train:
            for t, s in r.times.items():
                if math.isfinite(s):
                    ratios.setdefault(t, []).append(math.log(s / r.best_s))
        self.by_ratio = sorted(ratios, key=lambda t: float(np.mean(ratios[t])))
        self.model = TechniqueForest().fit(
            np.array([r.vector(False) for r in train]), np.array([r.label for r in train])
        )

    def length_ratio(self, first: str, second: str) -> float:
        """Median over the training kernels of ``second``'s complete search length over
        ``first``'s."""
        ratios = [
            len(t[second].times) / len(t[first].times)
            for t in self.traces
            if first in t and second in t and t[first].times
        ]
        return float(np.median(ratios)) if ratios else 1.0

    def gain(self, technique: str, share: float) -> float:
        """Median over the training kernels of ``technique``'s final best over its best
        after ``share`` of its search (1: nothing gained after it)."""
        gains = []
        for t in self.traces:
            if technique in t and t[technique].times:
                tr = t[technique]
                at = tr.best(max(1, round(share * len(tr.times))))
                if math.isfinite(at) and math.isfinite(tr.best()):
                    gains.append(tr.best() / at)
        return float(np.median(gains)) if gains else 1.0

    def rank(self, row: TrainingRow, techniques: Sequence[str]) -> list[tuple[str, float]]:
        proba = self.model.predict_proba(np.array([row.vector(False)]))[0]
        known = {str(c): float(p) for c, p in zip(self.model.classes_, proba, strict=True)}
        order = sorted(techniques, key=lambda t: (-known.get(t, 0.0), self.by_ratio.index(t)))
        return [(t, known.get(t, 0.0)) for t in order]


def policies(ks: Sequence[int]) -> dict[str, Callable[[Traces, TrainingRow, Fold], Outcome]]:
    out: dict[str, Callable[[Traces, TrainingRow, Fold], Outcome]] = {
        "all": lambda tr, row, f: searched(tr, sorted(tr)),
        "majority": lambda tr, row, f: searched(tr, [f.majority]),
        "model": lambda tr, row, f: searched(tr, [f.rank(row, list(tr))[0][0]]),
        "model-two": lambda tr, row, f: _model_two(tr, row, f),
    }
    for t in ("vec", "stream", "global"):
        out[f"always-{t}"] = lambda tr, row, f, t=t: searched(tr, [t])
    for share in (0.1, 0.2, 0.3):
        out[f"hedge-{share:.0%}"] = lambda tr, row, f, share=share: _ranked(
            hedge_share, tr, row, f, share
        )
    for share in (0.1, 0.15, 0.2, 0.3):
        out[f"even-{share:.0%}"] = lambda tr, row, f, share=share: _ranked(
            hedge_even, tr, row, f, share
        )
    for share in (0.1, 0.2, 0.3):
        out[f"first-length-{share:.0%}"] = lambda tr, row, f, share=share: _ranked(
            hedge_first_length, tr, row, f, share
        )
        out[f"even-est-{share:.0%}"] = lambda tr, row, f, share=share: _ranked_fold(
            hedge_estimated, tr, row, f, share
        )
        out[f"even-est-{share:.0%}-nofloor"] = lambda tr, row, f, share=share: _ranked_fold(
            hedge_estimated_nofloor, tr, row, f, share
        )
        out[f"even-est-{share:.0%}-floor30"] = lambda tr, row, f, share=share: _ranked_fold(
            hedge_estimated_floor30, tr, row, f, share
        )
        out[f"even-own-{share:.0%}"] = lambda tr, row, f, share=share: _ranked_fold(
            hedge_own_length, tr, row, f, share
        )
        out[f"projected-{share:.0%}"] = lambda tr, row, f, share=share: _ranked_fold(
            projected, tr, row, f, share
        )
    for k in ks:
        out[f"hedge-{k}"] = lambda tr, row, f, k=k: _ranked(hedge, tr, row, f, k)
        out[f"race-{k}"] = lambda tr, row, f, k=k: _ranked(race, tr, row, f, k)
    return out


def _model_two(tr: Traces, row: TrainingRow, f: Fold) -> Outcome:
    ranked = f.rank(row, list(tr))
    picks = [ranked[0][0]] if ranked[0][1] >= 0.6 else [t for t, _ in ranked[:2]]
    return searched(tr, picks)


def _ranked(
    how: Callable[[Traces, str, str, Any], Outcome], tr: Traces, row: TrainingRow, f: Fold, k: Any
) -> Outcome:
    ranked = f.rank(row, list(tr))
    return how(tr, ranked[0][0], ranked[1][0], k)


def _ranked_fold(
    how: Callable[[Traces, str, str, float, Fold], Outcome],
    tr: Traces,
    row: TrainingRow,
    f: Fold,
    share: float,
) -> Outcome:
    ranked = f.rank(row, list(tr))
    return how(tr, ranked[0][0], ranked[1][0], share, f)


def evaluate(
    rows: list[TrainingRow],
    traces: dict[str, Traces],
    group: Callable[[TrainingRow], str],
    ks: Sequence[int],
) -> dict[str, Any]:
    rows = [r for r in rows if r.kernel in traces]
    per: dict[str, list[dict[str, Any]]] = {}
    for held in sorted({group(r) for r in rows}):
        train = [r for r in rows if group(r) != held]
        if not train:
            continue
        fold = Fold(train, traces)
        for row in (r for r in rows if group(r) == held):
            tr = traces[row.kernel]
            ref_best, ref_cost, _ = searched(tr, sorted(tr))
            for name, policy in policies(ks).items():
                best, cost, what = policy(tr, row, fold)
                per.setdefault(name, []).append(
                    {
                        "kernel": row.kernel,
                        "held_out": held,
                        "label": row.label,
                        "searched": what,
                        "regret": best / ref_best,
                        "cost": cost / ref_cost,
                        "cost_s": cost,
                        "all_s": ref_cost,
                    }
                )
    return {name: summary(entries) | {"kernels": entries} for name, entries in per.items()}


def summary(entries: list[dict[str, Any]]) -> dict[str, Any]:
    regrets = [e["regret"] for e in entries]
    return {
        "geomean_regret": math.exp(float(np.mean(np.log(regrets)))),
        "max_regret": max(regrets),
        "worst": max(entries, key=lambda e: e["regret"])["kernel"],
        "over_1_05": sum(r > 1.05 for r in regrets),
        "accuracy": float(np.mean([e["regret"] <= 1.0 + 1e-12 for e in entries])),
        "cost_share": sum(e["cost_s"] for e in entries) / sum(e["all_s"] for e in entries),
        "max_cost": max(e["cost"] for e in entries),
    }


def table(result: dict[str, Any], title: str) -> str:
    lines = [
        f"### {title}",
        "",
        "| policy | geomean regret | max regret (kernel) | kernels > 1.05 | best found "
        "| time vs all (sum) | max time vs all |",
        "| --- | ---: | --- | ---: | ---: | ---: | ---: |",
    ]
    for name, s in result.items():
        lines.append(
            f"| {name} | {s['geomean_regret']:.4f} | {s['max_regret']:.3f} ({s['worst']}) "
            f"| {s['over_1_05']} | {s['accuracy']:.0%} | {s['cost_share']:.0%} "
            f"| {s['max_cost']:.0%} |"
        )
    return "\n".join(lines) + "\n"


def main(argv: list[str]) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("traces", type=Path)
    p.add_argument("dataset", type=Path)
    p.add_argument("out", type=Path)
    p.add_argument("--k", default="30,60,100")
    args = p.parse_args(argv)
    ks = [int(v) for v in args.k.split(",")]
    traces = load_traces(args.traces)
    rows = Dataset.read_csv(args.dataset).usable().rows
    args.out.mkdir(parents=True, exist_ok=True)
    results = {
        "by family (suite patterns, real, lifted)": evaluate(
            rows, traces, lambda r: family(r.kernel), ks
        ),
        "by array dimensionality": evaluate(rows, traces, dims, ks),
    }
    md = [f"# Technique policies on held-out kernels ({len(traces)} kernels)", ""]
    md += [table(res, title) for title, res in results.items()]
    (args.out / "regret.md").write_text("\n".join(md))
    # per-kernel entries of the shipped policy and the baselines it is judged against;
    # the others' summaries only (regret.md has them all)
    keep = {"all", "always-vec", "model", "even-20%", "even-est-20%", "even-est-20%-nofloor"}
    keep.add("even-est-20%-floor30")
    keep.add("even-own-20%")
    keep.add("first-length-20%")
    slim = {
        title: {
            n: v if n in keep else {k: x for k, x in v.items() if k != "kernels"}
            for n, v in res.items()
        }
        for title, res in results.items()
    }
    (args.out / "regret.json").write_text(json.dumps(slim, indent=1) + "\n")
    print("\n".join(md))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

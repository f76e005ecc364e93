"""Evaluation of load-predictor datasets, offline: leave-one-out and its baselines.

    python3 benchmarks/predict/validate.py OUT DATASET.csv [DATASET.csv ...]
        [--against MODEL.model.json] [--seeds N]

For each dataset written by ``gtune train`` (recorded measurements; no device needed),
with the forest a shipped model uses, a prediction being the most probable technique
the kernel has (as ``gtune run`` chooses):

- seed 001's two accuracies (§8.2) by leave-one-out, beside the majority baseline
  (always the technique that wins most kernels) and the baseline of a model that sees
  only device features (on one device that is the majority: it cannot tell kernels
  apart; across devices it is ``cross_device.py``'s model with device features);
- the same on the decisive kernels, whose runner-up technique is more than 5 % slower
  than the best (from the dataset's per-technique times): where a choice matters;
- the confusion matrix, impurity importances and permutation importances measured on
  the held-out kernels (each feature's value replaced by every other kernel's in turn);
- with ``--seeds N``: the leave-one-out for forest seeds 0..N-1 (how much of a
  difference is the forest's draw);
- with ``--against MODEL``: that trained model judged on the kernels of each dataset of
  its device it never saw, beside the dataset's own leave-one-out on the same kernels;
- with ``--nested DATASET``: that dataset's nested leave-one-out, the forest's setting
  (class weights, leaf size; and, in a second variant, the majority constant as one
  more candidate) chosen by leave-one-out inside each outer fold, so the score never
  saw the kernel it judges.
  Each candidate's inner predictions are cached in ``OUT/nested-picks/`` (keyed by the
  dataset's content, the setting and scikit-learn's version); ``--jobs N`` computes
  candidates in N processes.

Writes OUT/evaluation.json and OUT/evaluation.md (with the command that made them).
"""

from __future__ import annotations

import argparse
import gzip
import hashlib
import json
import math
import shlex
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from gtune.exceptions import InputError
from gtune.loadpredict import Dataset, ModelCard, TechniqueForest
from gtune.loadpredict.model import sklearn_version
from gtune.training import (
    DECISIVE_MARGIN,
    MAJORITY,
    CrossValidation,
    NestedCrossValidation,
    grouped_importances,
    held_out_of,
    leave_one_out,
    nested_from_picks,
    pair_picks,
)

# Candidates of the nested leave-one-out, in order of preference on ties (the shipped
# setting first): forest parameters, or None for the majority constant.
NESTED_FORESTS: dict[str, dict[str, Any]] = {
    "balanced, leaf 1": {"class_weight": "balanced", "min_samples_leaf": 1},
    "unweighted, leaf 1": {"class_weight": None, "min_samples_leaf": 1},
    "balanced, leaf 3": {"class_weight": "balanced", "min_samples_leaf": 3},
    "unweighted, leaf 3": {"class_weight": None, "min_samples_leaf": 3},
}


def _f(x: float, digits: int = 3) -> str:
    return "-" if math.isnan(x) else f"{x:.{digits}f}"


def _pct(x: float) -> str:
    return "-" if not math.isfinite(x) else f"{x:.1%}"


def _score_row(name: str, cv: CrossValidation, majority: bool = False) -> str:
    d = cv.decisive()
    if majority:
        return (
            f"| {name} | {_f(cv.majority_absolute, 2)} | {_f(cv.majority_penalty_weighted)} "
            f"| {_f(d.majority_absolute, 2)} | {_f(d.majority_penalty_weighted)} |"
        )
    return (
        f"| {name} | {_f(cv.absolute, 2)} | {_f(cv.penalty_weighted)} "
        f"| {_f(d.absolute, 2)} | {_f(d.penalty_weighted)} |"
    )


def _meaning(cv: CrossValidation) -> list[str]:
    """What penalty-weighted accuracy says on this dataset, in its own numbers."""
    losers = [
        (p, c) for p, c in zip(cv.predictions, cv.majority_choices, strict=True) if c != p.label
    ]
    n = len(cv.predictions)
    if not losers:
        return [f"Always answering {cv.majority} is right on every kernel: nothing to learn."]
    mean_loss = sum(1.0 - p.penalties.get(c, 0.0) for p, c in losers) / len(losers)
    worst = max(1.0 - p.penalties.get(c, 0.0) for p, c in losers)
    d = cv.decisive()
    missed = [
        _name(p.kernel)
        for p, c in zip(d.predictions, d.majority_choices, strict=True)
        if c != p.label
    ]
    return [
        f"{cv.majority} wins {cv.majority_share:.0%} of the {n} kernels. Always answering it "
        f"is wrong on {len(losers)} kernels and loses {mean_loss:.1%} of their speed on "
        f"average (at worst {worst:.1%}), so its penalty-weighted accuracy is "
        f"1 − {len(losers)}/{n} × {mean_loss:.3f} = {cv.majority_penalty_weighted:.3f}. "
        "Penalty-weighted accuracy is the mean fraction of the oracle's speed kept; when "
        "one technique wins most kernels and the others lose by little, any answer that "
        "picks it by default scores near 1, and the whole range between a constant and a "
        f"perfect model is {1 - cv.majority_penalty_weighted:.3f}. A model earns its keep "
        f"only on the kernels where a wrong technique costs something: the "
        f"{len(d.predictions)} decisive kernels (runner-up more than "
        f"{DECISIVE_MARGIN:.0%} slower), where the columns on the right compare it with "
        "the constant. Of the decisive kernels the majority misses "
        f"{len(missed)}{': ' + ', '.join(missed) if missed else ''}; a model can only "
        "gain there, and loses wherever it leaves the majority on the others.",
    ]


def _confusion(cv: CrossValidation) -> list[str]:
    t = cv.techniques
    out = [
        "| best \\ predicted | " + " | ".join(t) + " |",
        "|---|" + "---:|" * len(t),
    ]
    for name, row in zip(t, cv.confusion, strict=True):
        out.append(f"| {name} | " + " | ".join(str(v) for v in row) + " |")
    return out


def _importances(cv: CrossValidation, data: Dataset) -> list[str]:
    impurity = grouped_importances(cv.importances)
    X = data.usable().X()
    names = data.feature_names()
    constant = {n.split("=", 1)[0] for k, n in enumerate(names) if len(set(X[:, k])) == 1}
    # one-hot groups are constant only if every column is
    varying = {n.split("=", 1)[0] for k, n in enumerate(names) if len(set(X[:, k])) > 1}
    constant -= varying
    out = [
        "| feature | impurity (full fit) | permutation: absolute lost | permutation: "
        "penalty-weighted lost |",
        "|---|---:|---:|---:|",
    ]
    for name in sorted(impurity, key=lambda g: (-cv.permutation.get(g, (0, 0))[1], g)):
        a, w = cv.permutation.get(name, (math.nan, math.nan))
        note = " (constant here)" if name in constant else ""
        out.append(f"| {name}{note} | {impurity[name]:.3f} | {_f(a)} | {_f(w, 4)} |")
    return out


def _name(kernel: str) -> str:
    """A prediction's kernel name without the device it carries."""
    return kernel.rsplit("@", 1)[0]


def _kernels(cv: CrossValidation) -> list[str]:
    out = [
        "| kernel | best | runner-up slower by | predicted | penalty | majority | penalty |",
        "|---|---|---:|---|---:|---|---:|",
    ]
    for p, c in zip(cv.predictions, cv.majority_choices, strict=True):
        if p.predicted == p.label and c == p.label:
            continue
        out.append(
            f"| {_name(p.kernel)} | {p.label} | "
            f"{_pct(p.margin)} | {p.predicted} | {p.penalty:.3f} | {c} | "
            f"{p.penalties.get(c, 0.0):.3f} |"
        )
    return out


def _seeds(data: Dataset, n: int) -> tuple[dict[str, Any], list[str]]:
    runs = []
    for seed in range(n):
        cv = leave_one_out(data, estimator=TechniqueForest(random_state=seed))
        d = cv.decisive()
        runs.append(
            {
                "seed": seed,
                "absolute_accuracy": cv.absolute,
                "penalty_weighted_accuracy": cv.penalty_weighted,
                "decisive_absolute_accuracy": d.absolute,
                "decisive_penalty_weighted_accuracy": d.penalty_weighted,
            }
        )
    keys = list(runs[0])[1:]
    span = {k: (min(r[k] for r in runs), max(r[k] for r in runs)) for k in keys}
    line = (
        f"Forest seeds 0–{n - 1}: absolute {span[keys[0]][0]:.2f}–{span[keys[0]][1]:.2f}, "
        f"penalty-weighted {span[keys[1]][0]:.3f}–{span[keys[1]][1]:.3f}; on the decisive "
        f"kernels absolute {span[keys[2]][0]:.2f}–{span[keys[2]][1]:.2f}, penalty-weighted "
        f"{span[keys[3]][0]:.3f}–{span[keys[3]][1]:.3f}. A difference smaller than this "
        "spread is the forest's draw, not the data."
    )
    return {"runs": runs, "span": span}, [line]


def _against(
    card: ModelCard, data: Dataset, cv: CrossValidation
) -> tuple[dict[str, Any], list[str]]:
    old = held_out_of(card, data)
    same = cv.only(p.kernel for p in old.predictions)
    trained = card.cv.get("kernels", "?")
    assert card.path is not None
    own = {
        r.kernel.split("@", 1)[0] for r in Dataset.read_csv(card.path.parent / card.dataset).rows
    }
    judged = {p.kernel for p in old.predictions}
    twins = sorted(
        r.kernel
        for r in data.rows
        if f"{r.kernel}@{r.device}" not in judged and r.kernel.split("@", 1)[0] not in own
    )
    rows = [
        (f"`{card.name}` as shipped ({trained} kernels), on the kernels it never saw", old),
        ("this dataset's leave-one-out, the same kernels", same),
        ("this dataset's leave-one-out, every kernel", cv),
    ]
    md = [
        f"Model card `{card.path}` (trained on {trained} kernels, "
        f"{', '.join(card.sizes) or '?'}), fitted as `gtune run` loads it, predicts the "
        f"{len(old.predictions)} kernels of this dataset whose features no row of its own "
        "dataset has"
        + (
            f" ({', '.join(twins)}: other names, but the same features as one of its "
            "training kernels, so it answers them from memory)."
            if twins
            else "."
        ),
        "",
        "| model | kernels | absolute | penalty-weighted | decisive kernels | decisive "
        "absolute | decisive penalty-weighted | majority on them (abs / PW) |",
        "|---|---:|---:|---:|---:|---:|---:|---|",
    ]
    doc: dict[str, Any] = {"card": str(card.path), "trained_kernels": trained}
    for (name, x), key in zip(rows, ("model", "loo_same_kernels", "loo_all"), strict=True):
        d = x.decisive()
        md.append(
            f"| {name} | {len(x.predictions)} | {_f(x.absolute, 2)} | "
            f"{_f(x.penalty_weighted)} | {len(d.predictions)} | {_f(d.absolute, 2)} | "
            f"{_f(d.penalty_weighted)} | {_f(x.majority_absolute, 2)} / "
            f"{_f(x.majority_penalty_weighted)} |"
        )
        doc[key] = {**x.scores(), "decisive": d.scores()}
    doc["model_predictions"] = {p.kernel: p.predicted for p in old.predictions}
    good = cv.penalty_weighted >= old.penalty_weighted and (
        same.penalty_weighted >= old.penalty_weighted
    )
    doc["at_least_as_good"] = good
    md += [
        "",
        "Verdict (penalty-weighted accuracy on held-out kernels): the model trained on "
        f"this dataset is {'at least as good as' if good else 'worse than'} `{card.name}` "
        f"as shipped ({_f(cv.penalty_weighted)} over every kernel by leave-one-out and "
        f"{_f(same.penalty_weighted)} on the {len(same.predictions)} kernels the shipped "
        f"model never saw, against its {_f(old.penalty_weighted)} there).",
    ]
    return doc, md


def _picks_of(job: tuple[str, str, dict[str, Any] | None, Path]) -> list[list[str]]:
    """One candidate's pair picks, from the cache file or computed (and cached)."""
    name, csv, params, cache = job
    if cache.is_file():
        cached: list[list[str]] = json.loads(gzip.decompress(cache.read_bytes()))["picks"]
        return cached
    data = Dataset.read_csv(Path(csv)).usable()
    est = None if params is None else TechniqueForest(**params)
    started = time.monotonic()

    def progress(done: int, total: int) -> None:
        if done % 200 == 0 or done == total:
            spent = time.monotonic() - started
            print(
                f"  nested {Path(csv).name} [{name}]: {done}/{total} fits, {spent:.0f} s",
                file=sys.stderr,
                flush=True,
            )

    picks = pair_picks(data, est, progress=progress)
    cache.parent.mkdir(parents=True, exist_ok=True)
    doc = {"candidate": name, "params": params, "picks": picks}
    cache.write_bytes(gzip.compress((json.dumps(doc) + "\n").encode(), mtime=0))
    return picks


def _nested(
    path: Path, data: Dataset, out: Path, jobs: int, settings: int
) -> tuple[dict[str, NestedCrossValidation], dict[str, Any]]:
    """Nested leave-one-out over the forest settings, and over them plus the majority."""
    digest = hashlib.sha256(path.read_bytes()).hexdigest()[:12]
    specs: dict[str, dict[str, Any] | None] = {
        name: {**TechniqueForest().get_params(), **params}
        for name, params in list(NESTED_FORESTS.items())[:settings]
    }
    specs[MAJORITY] = None
    work = []
    for name, params in specs.items():
        key = json.dumps([digest, params, sklearn_version()], sort_keys=True)
        tag = hashlib.sha256(key.encode()).hexdigest()[:12]
        work.append((name, str(path), params, out / "nested-picks" / f"{path.stem}-{tag}.json.gz"))
    if jobs > 1:
        from concurrent.futures import ProcessPoolExecutor

        with ProcessPoolExecutor(max_workers=jobs) as pool:
            results = list(pool.map(_picks_of, work))
    else:
        results = [_picks_of(w) for w in work]
    picks = {name: r for (name, *_), r in zip(work, results, strict=True)}
    forests = {k: v for k, v in picks.items() if k != MAJORITY}
    out_cv = {
        "forest settings": nested_from_picks(data, forests),
        "forest settings and the majority": nested_from_picks(data, picks),
    }
    doc = {
        "candidates": {k: v for k, v in specs.items()},
        **{k: v.to_dict() for k, v in out_cv.items()},
    }
    return out_cv, doc


def _nested_lines(nested: dict[str, NestedCrossValidation]) -> list[str]:
    first = next(iter(nested.values()))
    n = len(first.nested.predictions)
    nd = len(first.nested.decisive().predictions)
    out = [
        "Nested leave-one-out: for each held-out kernel, every candidate setting is scored "
        "by leave-one-out over the other kernels alone (penalty-weighted accuracy, then "
        "absolute, then the order below breaking ties); the winner, trained on every "
        "kernel but the held-out one, predicts it. The nested rows estimate what choosing "
        "the setting and then training achieves on a kernel the choice never saw; the "
        "plain rows are each setting's ordinary leave-one-out (the best of them chosen on "
        "the same kernels it is judged on, so optimistic).",
        "",
        f"| | all {n} kernels: absolute | penalty-weighted | {nd} decisive: absolute | "
        "penalty-weighted | settings chosen in the outer folds |",
        "|---|---:|---:|---:|---:|---|",
    ]
    for label, cv in nested.items():
        d = cv.nested.decisive()
        counts = ", ".join(f"{c} {k}" for c, k in cv.chosen_counts().items())
        out.append(
            f"| nested, {label} | {_f(cv.nested.absolute, 2)} | "
            f"{_f(cv.nested.penalty_weighted)} | {_f(d.absolute, 2)} | "
            f"{_f(d.penalty_weighted)} | {counts} |"
        )
    last = list(nested.values())[-1]
    chosen = last.chosen_counts()
    top = max(chosen, key=lambda c: chosen[c])
    shipped = TechniqueForest().get_params()
    same = [
        name
        for name, params in NESTED_FORESTS.items()
        if name in last.plain and all(shipped[k] == v for k, v in params.items())
    ]
    verdict = [
        "",
        f"Most often chosen: {top} ({chosen[top]} of {n} folds). The nested estimate "
        f"({_f(last.nested.penalty_weighted)} penalty-weighted) against the majority "
        f"constant's {_f(last.nested.majority_penalty_weighted)}"
        + (
            f"; the forest as shipped ({same[0]}) scores {_f(last.plain[same[0]].absolute, 2)}"
            f" / {_f(last.plain[same[0]].penalty_weighted)} by plain leave-one-out."
            if same
            else "."
        ),
    ]
    weight = sum(
        k
        for c, k in chosen.items()
        if NESTED_FORESTS.get(c, {}).get("class_weight", "-") == shipped["class_weight"]
    )
    leaf = sum(
        k
        for c, k in chosen.items()
        if NESTED_FORESTS.get(c, {}).get("min_samples_leaf", "-") == shipped["min_samples_leaf"]
    )
    verdict[-1] += (
        f" The training default's class weighting ({shipped['class_weight']}) was chosen in "
        f"{weight} of {n} folds, its leaf size ({shipped['min_samples_leaf']}) in {leaf}."
    )
    for name, one in last.plain.items():
        d = one.decisive()
        out.append(
            f"| plain LOO, {name} | {_f(one.absolute, 2)} | {_f(one.penalty_weighted)} | "
            f"{_f(d.absolute, 2)} | {_f(d.penalty_weighted)} | - |"
        )
    return out + verdict


def main() -> int:
    ap = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    ap.add_argument("out", type=Path)
    ap.add_argument("datasets", nargs="+", type=Path)
    ap.add_argument("--against", type=Path, action="append", default=[], metavar="CARD")
    ap.add_argument("--seeds", type=int, default=1, help="forest seeds to repeat LOO with")
    ap.add_argument(
        "--nested",
        type=Path,
        action="append",
        default=[],
        metavar="DATASET",
        help="nested leave-one-out of this dataset (one of DATASETS; repeatable; see above)",
    )
    ap.add_argument("--jobs", type=int, default=1, help="processes for --nested (1)")
    ap.add_argument(
        "--nested-settings",
        type=int,
        default=len(NESTED_FORESTS),
        metavar="N",
        help=f"the first N forest settings of the nested grid ({len(NESTED_FORESTS)})",
    )
    args = ap.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    cards = [ModelCard.read(p) for p in args.against]
    command = "python3 benchmarks/predict/validate.py " + shlex.join(sys.argv[1:])
    doc: dict[str, Any] = {
        "command": command,
        "sklearn": sklearn_version(),
        "decisive_margin": DECISIVE_MARGIN,
        "datasets": {},
    }
    head = [
        "# Load predictor: leave-one-out evaluation (offline)",
        "",
        f"`{command}`",
        "",
        f"scikit-learn {sklearn_version()}; forest as shipped "
        f"({TechniqueForest().get_params()}). A prediction is the most probable technique "
        "the kernel has (as `gtune run` chooses); the majority baseline falls back the "
        "same way. *Decisive* kernels: the runner-up technique is more than "
        f"{DECISIVE_MARGIN:.0%} slower than the best (from the dataset's per-technique "
        "times). *Device features only*: on one device a model that sees only the device "
        "cannot tell kernels apart and answers the majority, so that baseline is the "
        "majority row; across devices it is `cross_device.py`'s model with device "
        "features (`benchmarks/results/predict/cross-device/`).",
        "",
        "| dataset | kernels | majority (share) | LOO absolute | LOO penalty-weighted | "
        "majority absolute | majority penalty-weighted | decisive kernels | decisive: "
        "LOO abs / PW | decisive: majority abs / PW |",
        "|---|---:|---|---:|---:|---:|---:|---:|---|---|",
    ]
    body: list[str] = []
    for path in args.datasets:
        data = Dataset.read_csv(path).usable()
        cv = leave_one_out(data, permutation=True)
        d = cv.decisive()
        entry: dict[str, Any] = {"path": str(path), **cv.to_dict()}
        entry["impurity_importances_grouped"] = grouped_importances(cv.importances)
        head.append(
            f"| {path.parent.name}/{path.name} | {len(cv.predictions)} | {cv.majority} "
            f"({cv.majority_share:.0%}) | {_f(cv.absolute, 2)} | {_f(cv.penalty_weighted)} | "
            f"{_f(cv.majority_absolute, 2)} | {_f(cv.majority_penalty_weighted)} | "
            f"{len(d.predictions)} | {_f(d.absolute, 2)} / {_f(d.penalty_weighted)} | "
            f"{_f(d.majority_absolute, 2)} / {_f(d.majority_penalty_weighted)} |"
        )
        body += [
            "",
            f"## {path.parent.name}/{path.name}",
            "",
            f"Device {cv.device}, heuristic {cv.heuristic}, techniques "
            f"{', '.join(cv.techniques)}; {len(cv.predictions)} kernels, "
            f"{len(d.predictions)} decisive.",
            "",
            f"| | all {len(cv.predictions)} kernels: absolute | penalty-weighted | "
            f"{len(d.predictions)} decisive kernels: absolute | penalty-weighted |",
            "|---|---:|---:|---:|---:|",
            _score_row("forest, leave-one-out", cv),
            _score_row(f"majority ({cv.majority})", cv, majority=True),
            _score_row("device features only (= majority on one device)", cv, majority=True),
            "",
            *_meaning(cv),
        ]
        if args.seeds > 1:
            entry["seeds"], lines = _seeds(data, args.seeds)
            body += ["", *lines]
        if path.resolve() in {p.resolve() for p in args.nested}:
            nested, entry["nested"] = _nested(path, data, args.out, args.jobs, args.nested_settings)
            body += ["", *_nested_lines(nested)]
        body += [
            "",
            "Confusion matrix (leave-one-out):",
            "",
            *_confusion(cv),
            "",
            "Feature importances: impurity of the forest fitted on every kernel (one-hot "
            "columns summed), and permutation importance measured on the held-out kernels: "
            "the accuracy lost when the held-out kernel's feature takes each other "
            "kernel's value in turn (negative: the feature's value misleads).",
            "",
            *_importances(cv, data),
            "",
            "Kernels the forest or the majority gets wrong (the rest both get right):",
            "",
            *_kernels(cv),
        ]
        for card in cards:
            if card.device.get("identity") not in {r.device for r in data.rows}:
                continue
            try:
                entry.setdefault("against", {})[card.name], lines = _against(card, data, cv)
            except InputError as exc:  # the model saw every kernel of this dataset
                entry.setdefault("against", {})[card.name] = {"skipped": exc.message}
                lines = [f"Not judged: {exc.message}."]
            body += ["", f"### Against `{card.name}`", "", *lines]
        doc["datasets"][f"{path.parent.name}/{path.name}"] = entry
    md = [*head, *body]
    (args.out / "evaluation.json").write_text(json.dumps(doc, indent=1) + "\n")
    (args.out / "evaluation.md").write_text("\n".join(md) + "\n")
    print("\n".join(md))
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main())
    except InputError as exc:
        print(f"validate.py: {exc}", file=sys.stderr)
        sys.exit(2)

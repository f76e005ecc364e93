"""Refit a model card on its (grown) dataset: ship a load-predictor model (issue 26).

A model card (``gtune/data/models/*.model.json``) names its dataset, a CSV beside it;
loading the model fits the card's estimator on that CSV. When the dataset grows
(``table3_labels.py``, another ``collect.sh`` call), the card's stated cross-validation
must be re-computed from the new rows, as ``gtune train`` computes it:

    python benchmarks/predict/refit_card.py \\
        gtune/data/models/nvidia-h100-80gb-hbm3-hybrid.model.json \\
        --dataset benchmarks/results/predict/h100-table3-deeper/nvidia-h100-80gb-hbm3-hybrid.csv

copies the dataset beside the card (under the card's own dataset name), runs the
leave-one-out of the card's estimator over the rows of the card's device and
heuristic, and writes the card with those scores and a new ``trained`` time. The test
``test_shipped_cards_state_the_cross_validation_of_their_datasets`` checks that a
shipped card and its CSV agree. No device is needed (a minute on two cores for about
100 kernels).
"""

from __future__ import annotations

import argparse
import dataclasses
import datetime as dt
import shutil
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from gtune.exceptions import InputError  # noqa: E402
from gtune.loadpredict import Dataset  # noqa: E402
from gtune.loadpredict.model import TechniqueForest  # noqa: E402
from gtune.loadpredict.models import ModelCard  # noqa: E402
from gtune.training.train import card_scores  # noqa: E402
from gtune.training.validation import leave_one_out  # noqa: E402


def refit(card_path: Path, dataset: Path | None) -> ModelCard:
    card = ModelCard.read(card_path)
    target = card_path.parent / card.dataset
    if dataset is not None and dataset.resolve() != target.resolve():
        shutil.copyfile(dataset, target)
    rows = [
        r
        for r in Dataset.read_csv(target).usable().rows
        if r.device == card.device.get("identity") and r.heuristic == card.heuristic
    ]
    if len(rows) < 2:
        raise InputError(
            f"{len(rows)} usable rows of the card's device and heuristic: "
            "too few to cross-validate",
            source=target,
        )
    cv = leave_one_out(Dataset(rows), estimator=TechniqueForest(**card.estimator))
    now = dt.datetime.now(dt.UTC).isoformat(timespec="seconds")
    new = dataclasses.replace(card, cv=card_scores(cv), trained=now)
    new.write(card_path.parent)
    return new


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("card", type=Path, help="the model card (.model.json) to refit")
    ap.add_argument("--dataset", type=Path, help="copy this CSV beside the card first")
    args = ap.parse_args(argv)
    try:
        card = refit(args.card, args.dataset)
    except (InputError, OSError) as exc:
        print(f"refit_card: {exc}", file=sys.stderr)
        return 2
    cv = card.cv
    keys = (
        "kernels",
        "absolute_accuracy",
        "penalty_weighted_accuracy",
        "majority_penalty_weighted_accuracy",
    )
    print(f"{args.card}: " + ", ".join(f"{k} {cv[k]}" for k in keys if k in cv))
    return 0


if __name__ == "__main__":
    sys.exit(main())

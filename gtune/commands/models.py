"""``gtune models``: the load-predictor models installed, and what each was trained on."""

from __future__ import annotations

import argparse
import json

from rich.console import Console
from rich.table import Table

from gtune.loadpredict.models import installed_models, shipped_model_dir, user_model_dir

HELP = "list installed load-predictor models (device, heuristic, kernels, accuracy)"


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--json", action="store_true", help="machine-readable output")


def run(args: argparse.Namespace) -> int:
    cards = installed_models()
    if args.json:
        rows = []
        for c in cards:
            d = c.to_dict()
            d["path"] = str(c.path)
            rows.append(d)
        print(json.dumps(rows, indent=2))
        return 0
    table = Table(title="load-predictor models")
    for col in (
        "name",
        "heuristic",
        "device",
        "type",
        "kernels",
        "abs. acc.",
        "penalty-w.",
        "where",
    ):
        table.add_column(col)
    for c in cards:
        cv = c.cv
        where = "user" if c.path is not None and c.path.parent == user_model_dir() else "shipped"
        table.add_row(
            c.name,
            c.heuristic,
            str(c.device.get("name", "?")),
            str(c.device.get("type", "?")),
            str(cv.get("kernels", "?")),
            f"{cv['absolute_accuracy']:.2f}" if "absolute_accuracy" in cv else "-",
            f"{cv['penalty_weighted_accuracy']:.3f}" if "penalty_weighted_accuracy" in cv else "-",
            where,
        )
    console = Console()
    console.print(table)
    if not cards:
        console.print(
            f"no models: none shipped in {shipped_model_dir()} or trained into "
            f"{user_model_dir()}; `gtune train` builds one"
        )
    return 0

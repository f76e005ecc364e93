"""``gtune models``: the load-predictor models installed, and what each was trained on."""

from __future__ import annotations

import argparse
import json
from typing import Any

from rich.console import Console, Group
from rich.padding import Padding
from rich.table import Table
from rich.text import Text

from gtune.escape import terminal
from gtune.exceptions import GtuneError
from gtune.loadpredict.dataset import Dataset
from gtune.loadpredict.models import (
    ModelCard,
    installed_models,
    shipped_model_dir,
    user_model_dir,
)
from gtune.tuning.techniques import SCOUT_MIN

HELP = "list installed load-predictor models (device, heuristic, kernels, accuracy)"


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--json", action="store_true", help="machine-readable output")


def _num(cv: dict[str, Any], key: str, digits: int) -> str:
    value = cv.get(key)
    return f"{value:.{digits}f}" if isinstance(value, int | float) else "-"


def _majority(cv: dict[str, Any]) -> str:
    name = cv.get("majority_technique")
    if not name:
        return "-"
    return f"{name} ({_num(cv, 'majority_penalty_weighted_accuracy', 3)})"


def _decisive(cv: dict[str, Any]) -> str:
    d = cv.get("decisive")
    if not isinstance(d, dict) or "kernels" not in d:
        return "-"
    return (
        f"{_num(d, 'penalty_weighted_accuracy', 3)} / "
        f"{_num(d, 'majority_penalty_weighted_accuracy', 3)} ({d['kernels']} kernels)"
    )


def _margin(cards: list[ModelCard]) -> float:
    from gtune.training import DECISIVE_MARGIN

    for c in cards:
        if isinstance(c.cv.get("decisive_margin"), int | float):
            return float(c.cv["decisive_margin"])
    return DECISIVE_MARGIN


def _unidentified(card: ModelCard) -> tuple[int, int] | None:
    """How many of the card's dataset rows record no kernel identity, of how many (None:
    every row records one, or the dataset cannot be read: loading the model says why)."""
    if card.path is None:
        return None
    try:
        rows = Dataset.read_csv(card.path.parent / card.dataset).rows
    except GtuneError:
        return None
    missing = sum(1 for r in rows if not r.identity)
    return (missing, len(rows)) if missing else None


def _where(c: ModelCard) -> str:
    return "user" if c.path is not None and c.path.parent == user_model_dir() else "shipped"


def _notes(c: ModelCard) -> list[str]:
    """The card's warnings and what ``--technique auto`` does with it."""
    notes = []
    if c.cut_short():
        notes.append(
            "[yellow]warning[/]: labels from searches cut short rank techniques by how fast "
            "each search starts, not by what each reaches (a technique with a larger space "
            "needs more configurations to reach its best); relabel with `gtune train` "
            "without --budget"
        )
    if c.scout_share > 0:
        notes.append(
            f"--technique auto searches the first choice and scouts the runner-up for "
            f"{c.scout_share:.0%} of its search, at least {SCOUT_MIN} configurations "
            "(docs/predictor.md)"
        )
    older = _unidentified(c)
    if older:
        notes.append(
            f"{older[0]} of its {older[1]} rows do not name the kernel version they were "
            "labelled on (labelled before gtune recorded it): a template change since may "
            "have made them stale; `gtune train --relabel-changed` labels them again"
        )
    return notes


def _card_block(c: ModelCard) -> Group:
    """One model as a titled block of fields: readable in any terminal width (a table
    of eleven columns is not, in 80)."""
    cv = c.cv
    grid = Table.grid(padding=(0, 2))
    grid.add_column(style="bold", no_wrap=True)
    grid.add_column(overflow="fold")
    device = f"{c.device.get('name', '?')} ({c.device.get('type', '?')})"
    sizes = ", ".join(c.sizes) or "?"
    fields = {
        "device": f"{device}; heuristic {c.heuristic}",
        "trained on": f"{cv.get('kernels', '?')} kernels at {sizes}",
        "accuracy": f"{_num(cv, 'absolute_accuracy', 2)} absolute, "
        f"{_num(cv, 'penalty_weighted_accuracy', 3)} penalty-weighted (PW)",
        "majority (PW)": _majority(cv),
        "decisive: PW / majority": _decisive(cv),
        "labels": c.label_search(),
        "dataset": c.dataset + (f"; {c.source}" if c.source else ""),
    }
    for key, value in fields.items():  # a user's card is data: no markup, no control
        grid.add_row(key, Text(terminal(value)))
    for note in _notes(c):
        grid.add_row("note", note)
    title = Text.assemble((terminal(c.name), "bold cyan"), f"  ({_where(c)})")
    return Group(title, Padding(grid, (0, 0, 0, 2)), Text(""))


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
    console = Console()
    for c in cards:
        console.print(_card_block(c))
    if cards:
        console.print(
            "leave-one-out accuracies (seed 001 §8.2); majority: always its most frequent "
            "winner; decisive: the kernels whose runner-up technique is more than "
            f"{_margin(cards):.0%} slower (docs/predictor.md)"
        )
    if not cards:
        console.print(
            f"no models: none shipped in {shipped_model_dir()} or trained into "
            f"{user_model_dir()}; `gtune train` builds one"
        )
    return 0

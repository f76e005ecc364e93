"""Whether a refitted model changes the technique choice of held-out kernels.

    python benchmarks/predict/picks.py OLD.csv [NEW.csv] [--kernels FILE@SIZE ...]

An auto arm of ``auto_vs_all.py --holdout`` is measured with the shipped model refitted
without the kernel's family. When the shipped dataset grows, the arms measured before
stand for the new model only where it makes the same choice: the same first technique,
the same runner-up scouted, and a scout of about the same length (the share of the
runner-up's search is fixed; its length is estimated from the training kernels). This
prints, for each held-out kernel (default: ``heldout_kernels.txt``), the choice of the
model fitted on OLD and on NEW (default: the shipped dataset, ``gtune/data/models``),
each without the kernel's family, exactly as ``gtune run --technique auto`` makes it
(``choose_techniques``). No device is needed: the H200's models take no device
features. Exit status 1 when a choice differs, 0 when every one is the same.
"""

from __future__ import annotations

import argparse
import csv
import json
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from auto_vs_all import family_of, load, row_family  # noqa: E402

from gtune.device import DeviceLimits  # noqa: E402
from gtune.loadpredict.models import ModelCard, shipped_model_dir  # noqa: E402
from gtune.loadpredict.policy import TechniqueChoice, choose_techniques  # noqa: E402

HERE = Path(__file__).resolve().parent
MODEL = "nvidia-h200-hybrid"


def held_out_card(dataset: Path, family: str, work: Path) -> ModelCard:
    """The shipped card, fitted on ``dataset`` less ``family``'s rows (in ``work``)."""
    card = ModelCard.read(shipped_model_dir() / f"{MODEL}.model.json")
    with dataset.open(newline="") as f:
        rows = list(csv.DictReader(f))
    folder = work / family
    folder.mkdir(parents=True, exist_ok=True)
    with (folder / card.dataset).open("w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(r for r in rows if row_family(r["kernel"]) != family)
    return ModelCard.read(card.write(folder))


def described(choice: TechniqueChoice) -> str:
    first = f"{choice.predicted} (p={choice.probability:.2f})"
    if choice.scout is None:
        return f"{first}, searched: {'+'.join(choice.techniques)}"
    length = f"{choice.scout_length:.2f}" if choice.scout_length is not None else "?"
    return f"{first}, scout {choice.scout} ({choice.scout_share:.0%}, length {length})"


def same(a: TechniqueChoice, b: TechniqueChoice, tolerance: float = 0.15) -> bool:
    """The same techniques, first choice and scout; scout lengths within ``tolerance``."""
    if (a.techniques, a.predicted, a.scout) != (b.techniques, b.predicted, b.scout):
        return False
    if a.scout_length is None or b.scout_length is None:
        return a.scout_length == b.scout_length
    return abs(a.scout_length - b.scout_length) <= tolerance * a.scout_length


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("old", type=Path)
    p.add_argument("new", type=Path, nargs="?", default=shipped_model_dir() / f"{MODEL}.csv")
    p.add_argument("--kernels", nargs="+")
    args = p.parse_args(argv)
    specs = args.kernels or [
        line.strip()
        for line in (HERE / "heldout_kernels.txt").read_text().splitlines()
        if line.strip() and not line.startswith("#")
    ]
    facts = json.loads((ROOT / "benchmarks" / "replay" / "h100.device.json").read_text())
    device = DeviceLimits.from_dict(facts)  # any GPU: the model takes no device features
    differ = 0
    print(f"| kernel | {args.old.name} (old) | {args.new.name} (new) | same |")
    print("| --- | --- | --- | --- |")
    with tempfile.TemporaryDirectory() as tmp:
        for spec in specs:
            name, kernel = load(spec)
            family = family_of(spec)
            old = choose_techniques(
                kernel, device, "hybrid", card=held_out_card(args.old, family, Path(tmp) / "o")
            )
            new = choose_techniques(
                kernel, device, "hybrid", card=held_out_card(args.new, family, Path(tmp) / "n")
            )
            alike = same(old, new)
            differ += not alike
            print(f"| {name} | {described(old)} | {described(new)} | {'yes' if alike else 'NO'} |")
    print(f"\n{len(specs) - differ} of {len(specs)} choices the same.")
    return 1 if differ else 0


if __name__ == "__main__":
    sys.exit(main())

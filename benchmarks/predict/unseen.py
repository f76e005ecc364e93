"""How the shipped model chose for kernels it had not seen: the rows a labelling call
added, judged with the model fitted on the dataset before them.

    python benchmarks/predict/unseen.py OLD.csv [NEW.csv] [--corpus DIR]

For each kernel of NEW (default: the shipped dataset) that OLD lacks, the choice
``gtune run --technique auto`` makes with the shipped card fitted on OLD
(``choose_techniques``: the first technique and the runner-up it scouts), and the
first choice's regret: the best time of its complete search over the best of every
technique's (both from NEW's labels, which are complete searches). The lifted corpus's
definitions are read from ``--corpus`` (default ``benchmarks/predict/corpus``); a
kernel ``NAME@SIZE`` is ``lifted_NAME.stencil.yaml`` there at SIZE. No device is
needed. Prints a Markdown table and the geometric mean of the regrets.
"""

from __future__ import annotations

import argparse
import csv
import json
import math
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from auto_vs_all import load  # noqa: E402
from picks import MODEL, described, held_out_card  # noqa: E402

from gtune.device import DeviceLimits  # noqa: E402
from gtune.loadpredict.models import shipped_model_dir  # noqa: E402
from gtune.loadpredict.policy import choose_techniques  # noqa: E402

TECHNIQUES = ("global", "stream", "vec")


def rows_of(path: Path) -> dict[str, dict[str, str]]:
    with path.open(newline="") as f:
        return {r["kernel"]: r for r in csv.DictReader(f)}


def spec_of(kernel: str, corpus: Path) -> str:
    name, size = kernel.split("@")
    dims = size.split("x")
    return f"{corpus / f'{name}.stencil.yaml'}@{'x'.join(dims + ['1'] * (3 - len(dims)))}"


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=(__doc__ or "").split("\n")[0])
    p.add_argument("old", type=Path)
    p.add_argument("new", type=Path, nargs="?", default=shipped_model_dir() / f"{MODEL}.csv")
    p.add_argument("--corpus", type=Path, default=HERE / "corpus")
    args = p.parse_args(argv)
    old, new = rows_of(args.old), rows_of(args.new)
    added = [k for k in new if k not in old]
    if not added:
        print("unseen: NEW holds no kernel that OLD lacks", file=sys.stderr)
        return 2
    facts = json.loads((HERE.parent / "replay" / "h100.device.json").read_text())
    device = DeviceLimits.from_dict(facts)  # any GPU: the model takes no device features
    print("| kernel | label | global, stream, vec (µs) | choice (fitted on OLD) | regret |")
    print("| --- | --- | --- | --- | ---: |")
    regrets = []
    with tempfile.TemporaryDirectory() as tmp:
        card = held_out_card(args.old, "(none)", Path(tmp))  # every OLD row
        for kernel in added:
            row = new[kernel]
            times = {t: float(row[f"time:{t}"]) for t in TECHNIQUES}
            _, tk = load(spec_of(kernel, args.corpus))
            choice = choose_techniques(tk, device, "hybrid", card=card)
            regret = times[choice.predicted] / min(times.values())
            regrets.append(regret)
            shown = ", ".join(f"{times[t] * 1e6:.1f}" for t in TECHNIQUES)
            print(f"| {kernel} | {row['label']} | {shown} | {described(choice)} | {regret:.3f} |")
    geo = math.exp(sum(math.log(r) for r in regrets) / len(regrets))
    wrong = sum(r > 1 for r in regrets)
    print(
        f"\n{len(added)} kernels; first choice not the label: {wrong}; regret geometric mean "
        f"{geo:.4f}, worst {max(regrets):.3f}."
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())

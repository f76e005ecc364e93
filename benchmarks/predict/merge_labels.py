"""Merge labelling datasets into one: the union, the newest row per kernel.

    python benchmarks/predict/merge_labels.py OUT.csv BASE.csv PART [PART ...]

BASE and each PART are ``gtune train`` datasets (CSV), or a labelling part as a device
call brings it back (``OUT/c/A``: a folder whose ``collect.tar.gz`` holds
``NAME-hybrid.csv``). Rows are merged in the order given (``Dataset.merged``): a
kernel's row in a later part replaces an earlier one. OUT may be BASE. Prints the rows
before and after and the kernels that are new; exit status 2 with one message for a
part that holds no dataset.
"""

from __future__ import annotations

import argparse
import sys
import tarfile
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from gtune.exceptions import InputError  # noqa: E402
from gtune.loadpredict import Dataset  # noqa: E402


def read_part(path: Path, work: Path) -> Dataset:
    """A dataset CSV, or the ``NAME-hybrid.csv`` in a part folder's ``collect.tar.gz``."""
    if path.is_dir():
        packed = path / "collect.tar.gz"
        if not packed.is_file():
            raise InputError("no collect.tar.gz in this folder", source=path)
        with tarfile.open(packed) as tar:
            names = [m for m in tar.getmembers() if m.isfile() and m.name.endswith("-hybrid.csv")]
            if not names:
                raise InputError("collect.tar.gz holds no NAME-hybrid.csv", source=path)
            target = work / path.name
            target.mkdir(parents=True, exist_ok=True)
            tar.extract(names[0], target, filter="data")
            path = target / names[0].name
    if not path.is_file():
        raise InputError("no such dataset", source=path)
    return Dataset.read_csv(path)


def merge(out: Path, base: Path, parts: list[Path]) -> tuple[int, int, list[str]]:
    """Write the merged dataset to ``out``: (rows before, rows after, new kernels)."""
    with tempfile.TemporaryDirectory() as tmp:
        merged = read_part(base, Path(tmp) / "base")
        before = {r.kernel for r in merged.rows}
        for i, part in enumerate(parts):
            merged = merged.merged(read_part(part, Path(tmp) / str(i)).rows)
    merged.write_csv(out)
    new = sorted({r.kernel for r in merged.rows} - before)
    return len(before), len(merged.rows), new


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("out", type=Path)
    ap.add_argument("base", type=Path)
    ap.add_argument("parts", type=Path, nargs="+")
    args = ap.parse_args(argv)
    try:
        before, after, new = merge(args.out, args.base, args.parts)
    except (InputError, OSError, tarfile.TarError) as exc:
        print(f"merge_labels: {exc}", file=sys.stderr)
        return 2
    print(f"{args.out}: {before} rows before, {after} after; new: {', '.join(new) or 'none'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

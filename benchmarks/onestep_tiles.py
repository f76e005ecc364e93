"""Best recorded time per tile height of a streaming kernel (issue 27's analysis).

Reads a result store (a ``onestep.db.gz`` or ``.db`` of ``benchmarks/onestep.py``, or any
gtune store) and prints, for one kernel's verified stream configurations at one size,
the best time per tile height (WY*CY rows) and per tile width (WX*BX*CX): whether
taller or wider tiles, which re-read fewer halo rows per output, are faster.

    python3 benchmarks/onestep_tiles.py STORE KERNEL [--size 512x512x512]
"""

from __future__ import annotations

import argparse
import gzip
import shutil
import sys
import tempfile
from collections import defaultdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from gtune.store import StoredRow, open_store


def stored_rows(store: Path, kernel: str) -> list[StoredRow]:
    """Every row of ``kernel`` (its name, as the store names it) in a recorded store: a
    ``.db`` or, unpacked to a temporary copy first, a ``.db.gz``."""
    with tempfile.TemporaryDirectory() as tmp:
        db = Path(tmp) / "store.db"
        if store.suffix == ".gz":
            with gzip.open(store, "rb") as src, db.open("wb") as dst:
                shutil.copyfileobj(src, dst)
        else:
            shutil.copyfile(store, db)
        s = open_store(db, readonly=True)
        try:
            return list(s.rows(kernel=kernel))
        finally:
            s.close()


def best_by_tile(store: Path, kernel: str, size: str) -> dict[str, dict[int, tuple[float, int]]]:
    """{"height"|"width": {rows or columns: (best seconds, configurations)}}."""
    rows = stored_rows(store, kernel)
    out: dict[str, dict[int, tuple[float, int]]] = {"height": {}, "width": {}}
    times: dict[str, dict[int, list[float]]] = {
        "height": defaultdict(list),
        "width": defaultdict(list),
    }
    for r in rows:
        c = r.result.config
        if not r.result.ok or c.get("STREAM") != 1:
            continue
        if "x".join(str(v) for v in dict(r.problem).values()) != size:
            continue
        times["height"][c["WY"] * c.get("CY", 1)].append(r.result.objective)
        times["width"][c["WX"] * c.get("BX", 1) * c.get("CX", 1)].append(r.result.objective)
    for axis, by in times.items():
        out[axis] = {k: (min(v), len(v)) for k, v in sorted(by.items())}
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("store", type=Path)
    ap.add_argument("kernel")
    ap.add_argument("--size", default="512x512x512")
    args = ap.parse_args(argv)
    tables = best_by_tile(args.store, args.kernel, args.size)
    if not tables["height"]:
        print(f"no verified stream configuration of {args.kernel} at {args.size} in {args.store}")
        return 1
    for axis, label in (("height", "rows (WY*CY)"), ("width", "columns (WX*BX*CX)")):
        print(f"\n{args.kernel} at {args.size}, stream, best per tile {label}:\n")
        print("| tile | best ms | configurations |\n| ---: | ---: | ---: |")
        for k, (t, n) in tables[axis].items():
            print(f"| {k} | {t * 1e3:.4f} | {n} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())

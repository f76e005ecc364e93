"""Raw result stores some tests replay: recorded H100 measurements.

Raw stores left the tree with release 0.2.0 (benchmarks/README.md, "Raw data"); the few
that tests replay are kept small under ``tests/data/stores/``. :func:`raw` finds one by
its benchmark path: the file itself when a benchmark run (or ``git show``) put it back,
else the test copy; a store kept in neither (the 20 MB Table 3 archive) skips the test
with the command that brings it back.
"""

from __future__ import annotations

from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
STORES = ROOT / "tests" / "data" / "stores"
RAW_COMMIT = "4cbf31c"

COPIES = {
    "benchmarks/results/lift/budget300-2d-final/lift.db.gz": "h100-lift-2d-budget300.db.gz",
    "benchmarks/results/lift/budget300-x2/2d/lift.db.gz": "h100-lift-2d-budget300-x2.db.gz",
    "benchmarks/results/lift/budget300-x2/3d/lift.db.gz": "h100-lift-3d-budget300.db.gz",
    "benchmarks/results/onestep/h100-relabelled/onestep.db.gz": "h100-onestep-relabelled.db.gz",
    "benchmarks/results/onestep/h100-sep3d/onestep.db.gz": "h100-onestep-sep3d.db.gz",
    "benchmarks/results/onestep/prefetch2/recorded.db.gz": "h100-onestep-prefetch2.db.gz",
}


def raw(path: Path | str) -> Path:
    """The raw store recorded at ``path`` (a path under the project root)."""
    full = Path(path) if Path(path).is_absolute() else ROOT / path
    if full.is_file():
        return full
    rel = full.relative_to(ROOT).as_posix()
    copy = COPIES.get(rel)
    if copy is not None and (STORES / copy).is_file():
        return STORES / copy
    pytest.skip(f"raw data not in the tree: `git show {RAW_COMMIT}:{rel} > {rel}` brings it back")

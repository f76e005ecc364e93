"""Each technique's complete search of each labelled kernel, in the order it measured,
from a labelling store: the data the technique policies are judged on offline.

    python benchmarks/predict/traces.py STORE.db[,STORE.db...] DATASET.csv OUT.json [GROUPS_FILE]

For every row of DATASET (``gtune train``'s CSV) the store's results of that kernel
(its identity) are read in the order they were stored, which is the order its
searches measured them (one search at a time, each resumed search replaying its
start), and split by technique (``technique_of``). OUT holds, per kernel and
technique, the median time of each configuration in order (``null``: it failed) and
the seconds it cost (its share of compile time plus its timed runs), rounded to
microseconds and milliseconds: replaying a search cut after ``k`` configurations is
then exact (the hybrid spec proposes the same configurations whatever the budget; a
budget only cuts its batches) and so is its cost. Kernels are loaded as ``gtune train``
loads them (the suite's by name, files from GROUPS_FILE, default
``benchmarks/predict/complete_groups.txt``) to tell their techniques apart.

Several stores, comma-separated (one process per GPU, each with its own store, all
started from one): each kernel's results are read from the store holding the most of
them (the others hold none of its search, or the same start copied).
"""

from __future__ import annotations

import json
import sqlite3
import sys
import tempfile
from pathlib import Path
from typing import Any

from gtune.description import load_kernel
from gtune.loadpredict.dataset import Dataset
from gtune.training.train import TrainingKernel, kernels_from_paths, suite_kernels
from gtune.tuning.techniques import technique_of

HERE = Path(__file__).resolve().parent


def training_kernels(groups_file: Path, work: Path) -> dict[str, TrainingKernel]:
    """Every kernel the groups file names, by the name its dataset row has."""
    out: dict[str, TrainingKernel] = {}
    for line in groups_file.read_text().splitlines():
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        size_text, *files = line.split()
        size = tuple(int(v) for v in size_text.split("x"))
        assert len(size) == 3
        if files and files[0].startswith("suite:"):
            found = suite_kernels(work / size_text, [size], real=False)
            for k in found:
                # a single size: suite rows are named without it, as gtune train names them
                out.setdefault(k.name, k)
                out[f"{k.name}@{size_text}"] = k
        else:
            for k in kernels_from_paths(files, [size]):
                out[k.name] = k
    return out


def _store_of(dbs: list[sqlite3.Connection], identity: str) -> sqlite3.Connection:
    """Of ``dbs``, the one holding the most results of ``identity`` (the first of equals)."""
    query = "SELECT COUNT(*) FROM results WHERE kernel_id LIKE ?"
    counts = [db.execute(query, (identity + "%",)).fetchone()[0] for db in dbs]
    return dbs[counts.index(max(counts))]


def traces(stores: list[Path], dataset: Path, groups_file: Path) -> dict[str, Any]:
    rows = Dataset.read_csv(dataset).rows
    dbs = [sqlite3.connect(store) for store in stores]
    names = ", ".join(store.name for store in stores)
    out: dict[str, Any] = {"source": f"{names} and {dataset.name}", "kernels": {}}
    with tempfile.TemporaryDirectory() as tmp:
        kernels = training_kernels(groups_file, Path(tmp))
        for row in rows:
            item = kernels.get(row.kernel)
            if item is None or not row.identity:
                print(f"traces: {row.kernel}: not in the groups file; left out", file=sys.stderr)
                continue
            kernel = load_kernel(item.path, item.sizes)
            per: dict[str, dict[str, list[Any]]] = {}
            found = _store_of(dbs, row.identity).execute(
                "SELECT config, status, median_s, compile_s, times FROM results "
                "WHERE kernel_id LIKE ? ORDER BY id",
                (row.identity + "%",),
            )
            for config, status, median_s, compile_s, times in found:
                if status == "pruned":
                    continue
                tech = technique_of(kernel, json.loads(config))
                if tech is None or tech not in row.times:
                    continue
                t = per.setdefault(tech, {"median_us": [], "cost_ms": []})
                ok = status == "ok" and median_s is not None
                t["median_us"].append(round(median_s * 1e6, 3) if ok else None)
                t["cost_ms"].append(round((compile_s + sum(json.loads(times))) * 1e3, 1))
            out["kernels"][row.kernel] = {"label": row.label, "techniques": per}
    return out


def main(argv: list[str]) -> int:
    if len(argv) not in (3, 4):
        print(__doc__, file=sys.stderr)
        return 2
    groups = Path(argv[3]) if len(argv) == 4 else HERE / "complete_groups.txt"
    data = traces([Path(s) for s in argv[0].split(",")], Path(argv[1]), groups)
    Path(argv[2]).write_text(json.dumps(data, separators=(",", ":")) + "\n")
    n = len(data["kernels"])
    print(f"traces: {n} kernels written to {argv[2]}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

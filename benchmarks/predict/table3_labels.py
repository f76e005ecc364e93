"""Labels of the load predictor from Table 3's stores (issue 26).

Table 3 at scale tunes each kernel with four strategies into one result store: the
hybrid with prediction, the hybrid oracle (the hybrid spec over every technique, no
budget), expert search and random sampling. Every configuration's search-time median is
in the store. A collection label (``gtune train``, ``benchmarks/predict/collect.sh``)
is the technique whose best search-time median is lowest, each of global, vec and
stream searched by the hybrid spec with 100 configurations, no confirmation round. This
script makes rows of the same kind from the stores: per technique (``technique_of`` of
each configuration, the collection's three techniques only) the lowest search-time
median among every configuration the store holds (the oracle's searches and the others'
measurements, hundreds to thousands per technique), labelled by the lowest.

    python benchmarks/predict/table3_labels.py \\
        benchmarks/results/compare/table3-scale/stores.tar.xz \\
        gtune/data/models/nvidia-h100-80gb-hbm3-hybrid.csv \\
        benchmarks/results/predict/h100-table3

writes ``table3-rows.csv`` (the 20 kernels' rows), ``nvidia-h100-80gb-hbm3-hybrid.csv``
(the dataset with the rows of kernels it lacks added; rows it has are kept as collected,
or, with ``--deeper``, replaced by the store's row: the deeper search's label) and
``labels.md`` (each row, and for kernels in both, the collection's label beside
the store's).

Versions. A store's results name the kernel they measured (``kernel_id``, the
kernel's identity); a template change makes another version of the kernel. A store
recorded across a change counts only its newest version's results, and its row
records that version (``labels.md`` says whether it is the kernel as generated now).
With ``--deeper``, a kernel in both is merged by version: of one version, each
technique's best of the two (the deeper search and the collection's measure the same
kernel); of two, the collected row (the collection ran after Table 3's stores were
recorded, so it measured a version at least as new); a collected row without its
version recorded, the store's (deeper) row.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import math
import sqlite3
import sys
import tarfile
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from gtune.description import load_kernel  # noqa: E402
from gtune.loadpredict.dataset import IDENTITY_LEN, Dataset, TrainingRow  # noqa: E402
from gtune.loadpredict.features import traits_of  # noqa: E402
from gtune.stencils.generate import generate, parse_size, suite  # noqa: E402
from gtune.tuning.techniques import technique_of  # noqa: E402

TECHNIQUES = ("global", "vec", "stream")  # the collection's (collect.sh)
SIZE = "256x256x256"


def store_files(source: Path, into: Path) -> list[Path]:
    if source.is_dir():
        return sorted(source.glob("*.db"))
    with tarfile.open(source) as tar:
        tar.extractall(into, filter="data")
    return sorted(into.rglob("*.db"))


def best_per_technique(db: Path, kernel: Any) -> tuple[dict[str, float], dict[str, int], str, str]:
    """Per technique the lowest search-time median and how many configurations ran; the
    store's device identity; the version these are results of (the kernel's identity
    when it measured them, "" for several) — the newest version in the store, whose
    results alone count when it has several (a store recorded across a template change)."""
    con = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    try:
        rows = con.execute(
            "SELECT device, config, median_s, kernel_id FROM results WHERE status = 'ok' "
            "ORDER BY created"
        ).fetchall()
    finally:
        con.close()
    times = {t: math.inf for t in TECHNIQUES}
    counts = {t: 0 for t in TECHNIQUES}
    devices = {r[0] for r in rows}
    if len(devices) != 1:
        raise SystemExit(f"{db}: results of {len(devices)} devices, want one")
    versions = {_version(r[3]) for r in rows}
    newest = _version(rows[-1][3]) if rows else ""
    counted = [r for r in rows if _version(r[3]) == newest] if len(versions) > 1 else rows
    for _, config, median, _ in counted:
        tech = technique_of(kernel, json.loads(config))
        if tech in times and median is not None:
            counts[tech] += 1
            times[tech] = min(times[tech], float(median))
    return times, counts, next(iter(devices)), newest


def _version(kernel_id: object) -> str:
    """The kernel's identity a stored result names (its ``kernel_id``: the identity, and
    after a colon what the store adds), shortened as training rows record it."""
    return str(kernel_id).split(":")[0][:IDENTITY_LEN]


def by_version(store: TrainingRow, collected: TrainingRow) -> tuple[TrainingRow, str]:
    """The row ``--deeper`` keeps for a kernel in both, and how it was chosen ("": the
    collected row stays): of one version, each technique's best of the two; of two, the
    collected row (the collection ran after Table 3's stores were recorded, so it
    measured a version at least as new); a collected row without its version gives way
    to the store's."""
    if store.identity and store.identity == collected.identity:
        times = {
            t: min(store.times.get(t, math.inf), collected.times.get(t, math.inf))
            for t in sorted(set(store.times) | set(collected.times))
        }
        configs = {
            t: store.configs.get(t, 0) + collected.configs.get(t, 0)
            for t in sorted(set(store.configs) | set(collected.configs))
        }
        return dataclasses.replace(store, times=times, configs=configs), "merged"
    if collected.identity:
        return collected, ""
    return store, "replaced"


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("stores", type=Path, help="stores.tar.xz or a folder of <kernel>.db")
    ap.add_argument("dataset", type=Path, help="the H100 dataset CSV to extend")
    ap.add_argument("out", type=Path)
    ap.add_argument(
        "--deeper",
        action="store_true",
        help="replace the rows of kernels the dataset has by the stores' (deeper searches)",
    )
    args = ap.parse_args(argv)
    dataset = Dataset.read_csv(args.dataset)
    by_name = {r.kernel: r for r in dataset.rows}
    h100 = [r for r in dataset.rows if r.device_traits is not None]
    if not h100:
        raise SystemExit(f"{args.dataset}: no row with device features")
    device_traits = h100[0].device_traits
    new: list[TrainingRow] = []
    replaced: dict[str, TrainingRow] = {}
    lines = [
        "| kernel | label | global µs (configs) | vec µs (configs) | stream µs (configs) "
        "| runner-up slower by | version | in the dataset as |",
        "|---|---|---:|---:|---:|---:|---|---|",
    ]
    with tempfile.TemporaryDirectory() as tmp:
        dbs = store_files(args.stores, Path(tmp) / "stores")
        names = [p.stem for p in dbs]
        shapes = [k for k in suite("garvey104") if k.name in set(names)]
        generate(shapes, Path(tmp) / "k", size=parse_size(SIZE))
        for db in dbs:
            kernel = load_kernel(Path(tmp) / "k" / f"{db.stem}.cl")
            times, counts, device, ident = best_per_technique(db, kernel)
            name = f"{db.stem}@{SIZE}"
            current = ident == kernel.identity()[:IDENTITY_LEN]
            row = TrainingRow(
                name,
                device,
                "hybrid",
                traits_of(kernel),
                times,
                device_traits,
                counts,
                identity=ident,
            )
            have = by_name.get(name)
            same = ""
            if have is not None:
                if have.traits.vector() != row.traits.vector():
                    raise SystemExit(f"{name}: features differ from the dataset's row")
                if not have.identity:
                    version = ", version not recorded"
                else:
                    version = "" if have.identity == ident else ", another version"
                same = f"{have.label} (collected{version})"
                if args.deeper:
                    row, how = by_version(row, have)
                    if how:
                        replaced[name] = row
                    same += f", {how or 'kept: the store measured another version'}"
            else:
                new.append(row)
            ranked = sorted(v for v in row.times.values() if math.isfinite(v))
            margin = ranked[1] / ranked[0] - 1.0 if len(ranked) > 1 else math.inf
            lines.append(
                f"| {name} | {row.label} | "
                + " | ".join(
                    f"{row.times.get(t, math.inf) * 1e6:.1f} ({row.configs.get(t, 0)})"
                    for t in TECHNIQUES
                )
                + f" | {margin:.1%} | {'current' if current else 'older'} | {same or '-'} |"
            )
    args.out.mkdir(parents=True, exist_ok=True)
    Dataset(new).write_csv(args.out / "table3-rows.csv")
    kept = [replaced.get(r.kernel, r) for r in dataset.rows]
    grown = Dataset(kept).merged(new)
    grown.write_csv(args.out / args.dataset.name)
    (args.out / "labels.md").write_text(
        "# Load-predictor labels from Table 3's stores (one H100, 256³)\n\n"
        + "\n".join(lines)
        + f"\n\n{len(new)} rows added to {len(dataset)}: {len(grown)} kernels"
        + (
            f"; {len(replaced)} collected rows replaced by or merged with the stores'"
            if replaced
            else ""
        )
        + ".\n"
    )
    print("\n".join(lines))
    print(f"{len(new)} rows added to {len(dataset)}: {len(grown)} kernels")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

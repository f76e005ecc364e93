"""What separates the fastest configurations from the rest, from recorded H100 stores.

For each case (a kernel at one size in a gzip'd store under benchmarks/results/), every
successful measurement is read; *fast* are those within ``--within`` of the best
recorded. Per parameter, the table gives for each value: how many fast and how many
other configurations have it, and the best time among all with it (the marginal best:
how close a search can get while holding that value). The technique of a configuration
is read from its flags (LOCAL, IMAGE, STREAM, and BX == VX > 1 for vec).

    python3 benchmarks/onestep_regions.py OUT.md [--within 0.05] [--copy-gbs 2989]

No device: every number is a recorded one. ``--copy-gbs`` (the float4 copy of
benchmarks/results/bandwidth/, 512³) turns 512³ times into fractions of copy.
"""

from __future__ import annotations

import argparse
import gzip
import json
import shutil
import sqlite3
import sys
import tempfile
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "benchmarks" / "results"
PARAMS = ("technique", "WX", "WY", "WZ", "BX", "VX", "CX", "CY", "CZ", "ZC")


@dataclass(frozen=True)
class Case:
    name: str
    store: str  # under benchmarks/results
    kernel_id: str  # prefix
    size: int  # cube side
    note: str
    radius: int = 1


CASES = (
    Case(
        "box27",
        "lift/budget300-x2/3d/lift.db.gz",
        "30681fe03a85c235f502",
        512,
        "lifted box27 (the same 27-point box), hybrid at budget 300, stream (predicted)",
    ),
    Case(
        "box27",
        "predict/h100-scale/labels.db.gz",
        "6ef56a74a6a8367e801d",
        256,
        "gtune train labels: hybrid, 100 configurations per technique",
    ),
    Case(
        "laplacian4",
        "predict/h100-scale/labels.db.gz",
        "8875ff393a9d480d42dc",
        256,
        "gtune train labels: hybrid, 100 configurations per technique",
        radius=2,
    ),
    Case(
        "dense_3d_xyz_r1 (box27's shape)",
        "compare-predicted/seven-kernels/results.db.gz",
        "46ec80921b9d0194a521",
        256,
        "gtune compare: hybrid (predicted stream), expert search over the whole space "
        "(2,364 configurations) and random (500): the widest coverage recorded",
    ),
    Case(
        "heat3d",
        "predict/h100-scale/labels.db.gz",
        "3f1e04ec31a478e24fce",
        256,
        "gtune train labels (for comparison: the 7-point star)",
    ),
)


def technique(cfg: Mapping[str, int]) -> str:
    if cfg.get("STREAM"):
        return "stream"
    if cfg.get("LOCAL"):
        return "local"
    if cfg.get("IMAGE"):
        return "image"
    if cfg.get("VX", 1) > 1:
        return "vec"
    return "global"


def rows(case: Case, tmp: Path) -> list[tuple[float, dict[str, int | str]]]:
    db = tmp / case.store.replace("/", "_").removesuffix(".gz")
    if not db.exists():
        with gzip.open(RESULTS / case.store, "rb") as src, db.open("wb") as dst:
            shutil.copyfileobj(src, dst)
    con = sqlite3.connect(db)
    try:
        found = con.execute(
            "select median_s, config, problem from results where status = 'ok' and "
            "kernel_id like ?",
            (case.kernel_id + "%",),
        ).fetchall()
    finally:
        con.close()
    out: list[tuple[float, dict[str, int | str]]] = []
    for median, config, problem in found:
        if json.loads(problem).get("NX") != case.size:
            continue
        cfg: dict[str, int | str] = dict(json.loads(config))
        cfg["technique"] = technique(json.loads(config))
        out.append((float(median), cfg))
    return out


def region_table(
    found: Sequence[tuple[float, dict[str, int | str]]], within: float
) -> Iterator[str]:
    best = min(s for s, _ in found)
    fast = [c for s, c in found if s <= best * (1 + within)]
    rest = [c for s, c in found if s > best * (1 + within)]
    yield f"{len(found)} configurations, best {best * 1e6:.1f} µs; {len(fast)} within {within:.0%}."
    yield ""
    yield "| parameter | value: fast / others / best time with it (of the best) |"
    yield "|---|---|"
    for p in PARAMS:
        values = sorted({c.get(p, 1) for _, c in found}, key=lambda v: (str(type(v)), v))
        if len(values) < 2:
            continue
        cells = []
        for v in values:
            nf = sum(1 for c in fast if c.get(p, 1) == v)
            nr = sum(1 for c in rest if c.get(p, 1) == v)
            bv = min(s for s, c in found if c.get(p, 1) == v)
            cells.append(f"{v}: {nf}/{nr}/{bv * 1e6:.0f} µs ({best / bv:.0%})")
        yield f"| {p} | " + "; ".join(cells) + " |"


BINS = (1.1, 1.2, 1.35, 1.5, 1.75, 2.0, 3.0, float("inf"))


def loads_per_output(cfg: Mapping[str, int | str], r: int) -> float:
    """Streaming: input elements a work-group loads per output, from the tile with its
    x/y halo ((SX+2R)(SY+2R) / SX SY) and the chunk with its z halo ((ZC+2R) / ZC)."""
    sx = int(cfg.get("WX", 1)) * int(cfg.get("BX", 1)) * int(cfg.get("CX", 1))
    sy = int(cfg.get("WY", 1)) * int(cfg.get("CY", 1))
    zc = int(cfg.get("ZC", 1))
    return (sx + 2 * r) * (sy + 2 * r) / (sx * sy) * (zc + 2 * r) / zc


def loads_table(found: Sequence[tuple[float, dict[str, int | str]]], r: int) -> Iterator[str]:
    stream = [(s, loads_per_output(c, r)) for s, c in found if c["technique"] == "stream"]
    if len(stream) < 10:
        return
    best = min(s for s, _ in found)
    yield "Streaming: input loads per output (tile and chunk halos) against the best time:"
    yield ""
    yield "| loads per output | configurations | best time (of the best) |"
    yield "|---|---:|---|"
    lo = 1.0
    for hi in BINS:
        inside = [s for s, a in stream if lo <= a < hi]
        if inside:
            b = min(inside)
            yield f"| {lo:.2f}-{hi:.2f} | {len(inside)} | {b * 1e6:.1f} µs ({best / b:.0%}) |"
        lo = hi
    yield ""


def top(found: Sequence[tuple[float, dict[str, int | str]]], n: int) -> Iterator[str]:
    yield "| µs | technique | WX | WY | WZ | BX | VX | CX | CY | CZ | ZC |"
    yield "|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|"
    for s, c in sorted(found, key=lambda sc: sc[0])[:n]:
        yield f"| {s * 1e6:.1f} | " + " | ".join(str(c.get(p, 1)) for p in PARAMS) + " |"


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    ap.add_argument("out", type=Path)
    ap.add_argument("--within", type=float, default=0.05)
    ap.add_argument("--copy-gbs", type=float, default=2989.0)
    ap.add_argument("--top", type=int, default=8)
    args = ap.parse_args(argv)
    lines = [
        "# Fast regions of recorded H100 stores",
        "",
        f"`python3 benchmarks/onestep_regions.py {' '.join(sys.argv[1:])}`",
    ]
    with tempfile.TemporaryDirectory(prefix="gtune-regions-") as tmp:
        for case in CASES:
            found = rows(case, Path(tmp))
            if not found:
                continue
            n = case.size
            best = min(s for s, _ in found)
            frac = ""
            if n == 512:
                copy_s = 2 * 4 * n**3 / (args.copy_gbs * 1e9)
                frac = f"; best {copy_s / best:.1%} of a {args.copy_gbs:.0f} GB/s copy"
            lines += [
                "",
                f"## {case.name} {n}³ ({case.store}{frac})",
                "",
                case.note + ".",
                "",
                *region_table(found, args.within),
                "",
                *loads_table(found, case.radius),
                f"Fastest {args.top}:",
                "",
                *top(found, args.top),
            ]
            per_tech: dict[str, float] = {}
            for s, c in found:
                t = str(c["technique"])
                per_tech[t] = min(per_tech.get(t, s), s)
            if len(per_tech) > 1:
                lines += [
                    "",
                    "Best per technique: "
                    + ", ".join(
                        f"{t} {s * 1e6:.1f} µs ({best / s:.0%})"
                        for t, s in sorted(per_tech.items(), key=lambda ts: ts[1])
                    ),
                ]
    args.out.write_text("\n".join(lines) + "\n")
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

"""One table and one plot over several recorded ``benchmarks/temporal.py`` runs: for each
kernel its best one step and best multi-step kernel against the copy kernel of its own
run, and where the multi-step kernel's time goes.

Offline: reads the runs' ``temporal.json`` (no device). For each multi-step winner the
script works out, from its configuration and the stencil's radius, what temporal
blocking costs and what it can gain:

- **DRAM per step**: the bytes a launch moves (its block's input with the halo of TB
  radii per side, including the z-chunk's overlap, and its output) over the TB steps it
  advances, as a fraction of one step's bytes (input read once, output written once).
  Halo reads are counted as DRAM reads, so this is an upper bound (neighbouring blocks
  may serve them from L2);
- **ceiling**: the copy kernel's bandwidth over that fraction, the most the kernel could
  reach were it bound by DRAM alone;
- **recompute**: point-steps computed per output point-step (level s of TB computes the
  block widened by TB - s radii, as the template's temporal techniques do);
- **of ceiling**: the measured multi-step bandwidth over the ceiling. Far below 1: the
  kernel is bound by its instructions (recomputed halo, scalar loads, local memory),
  not by DRAM;
- **local reads**: the stencil's terms read from local memory per output point-step
  (every term of the primary field; with the z-neighbours in registers, ``ZREG``, only
  those on the centre plane), times the recompute: the per-point work the temporal
  kernels add where a one-step kernel reads through registers and the L1 cache.

Assumes one output array per step, every other array an input of the same size (the
stepped field, and fixed fields such as hotspot's power) read once per launch with the
block's halo; the script refuses a run whose bytes are not a whole number of arrays.

    python3 benchmarks/temporal_report.py OUT RUN_DIR_OR_JSON ...

Writes ``OUT/summary.md``, ``OUT/summary.csv`` and ``OUT/summary.png``.
"""

from __future__ import annotations

import argparse
import csv
import json
import math
import sys
from collections.abc import Mapping
from dataclasses import asdict, dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from temporal import best_of, definition, shape

from gtune.exceptions import GtuneError, InputError
from gtune.stencils.definition import StencilDefinition


@dataclass(frozen=True)
class Row:
    kernel: str
    run: str
    size: str
    points: int
    radius: str
    copy_gbs: float
    one_step_technique: str
    one_step_of_copy: float
    multi_technique: str
    multi_config: str
    multi_of_copy: float
    speedup_per_step: float
    dram_per_step: float
    ceiling_of_copy: float
    recompute: float
    of_ceiling: float
    local_reads: float


def _definition(name: str) -> StencilDefinition:
    try:
        return definition(name)
    except (GtuneError, OSError):
        return definition(f"suite:{name}")


def geometry(
    cfg: Mapping[str, int],
    extent: tuple[int, ...],
    radius: tuple[int, int, int],
    inputs: int = 1,
) -> tuple[float, float]:
    """(DRAM per step as a fraction of one step's bytes, recomputed point-steps per
    output point-step) of a temporal configuration (TB > 1) whose launches read
    ``inputs`` arrays and write one."""
    tb = cfg["TB"]
    rx, ry, rz = radius
    nx, ny = extent[0], extent[1]
    bx = min(cfg.get("WX", 1) * cfg.get("CX", 1), nx)
    dims3 = len(extent) == 3
    stream = cfg.get("STREAM", 0) == 1
    if dims3:
        by = min(cfg.get("WY", 1) * cfg.get("CY", 1), ny)
        if stream:  # a chunk of ZC planes walked with TB radii of z halo on each side
            bz, reach_z = cfg.get("ZC", 1), rz
        else:
            bz, reach_z = min(cfg.get("WZ", 1) * cfg.get("CZ", 1), extent[2]), rz
        sides = [(bx, rx), (by, ry), (bz, reach_z)]
    elif stream:  # 2D streaming along y: WY*ZC rows per work-group
        sides = [(bx, rx), (cfg.get("WY", 1) * cfg.get("ZC", 1), ry)]
    else:
        sides = [(bx, rx), (min(cfg.get("WY", 1) * cfg.get("CY", 1), ny), ry)]

    def widened(k: int) -> float:
        return math.prod((b + 2 * k * r) / b for b, r in sides)

    loads = widened(tb)
    dram = (inputs * loads + 1.0) / ((inputs + 1.0) * tb)
    recompute = sum(widened(tb - s) for s in range(1, tb + 1)) / tb
    return dram, recompute


def config_text(cfg: Mapping[str, int]) -> str:
    """:func:`temporal.shape` (TB, the block, the chunk, the work-group), with the
    z-neighbours' layout where it applies."""
    return shape(cfg) + (f" ZREG={cfg['ZREG']}" if cfg.get("ZREG") else "")


def rows_of(path: Path) -> list[Row]:
    jpath = path / "temporal.json" if path.is_dir() else path
    try:
        data = json.loads(jpath.read_text())
    except (OSError, json.JSONDecodeError) as exc:
        raise InputError(f"cannot read a temporal.py result: {exc}", source=str(jpath)) from exc
    copy_gbs = float(data["copy_gbs"])
    out: list[Row] = []
    for name, k in data["kernels"].items():
        d = _definition(name)
        extent = tuple(int(v) for v in str(k["size"]).split("x"))
        points = len(d.terms_of(d.primary_field))
        one_tech, one_f = best_of(k["one_step"])  # fractions of its run's copy
        multi = k.get("multi_step")
        if not multi:
            continue
        field_bytes = math.prod(extent) * (8 if d.dtype == "float64" else 4)
        arrays = multi["bytes_moved"] / field_bytes
        if arrays < 2 or abs(arrays - round(arrays)) > 1e-9:
            raise InputError(
                f"{name}: {multi['bytes_moved']} bytes per step is not a whole number of "
                f"arrays of {field_bytes} bytes (one output and at least one input); the "
                "geometry assumes it",
                source=str(jpath),
            )
        tech, f = best_of(multi)
        if tech is None or f is None:
            continue
        cfg = dict(multi["techniques"][tech]["config"])
        dram, recompute = geometry(cfg, extent, d.radius, inputs=round(arrays) - 1)
        ceiling = 1.0 / dram
        terms = d.terms_of(d.primary_field)
        if cfg.get("ZREG"):  # the z-neighbours in registers: the centre plane's terms
            terms = tuple(t for t in terms if len(extent) < 3 or t.offset[2] == 0)
        out.append(
            Row(
                kernel=name,
                run=str(jpath.parent),
                size=str(k["size"]),
                points=points,
                radius="/".join(str(r) for r in d.radius[: len(extent)]),
                copy_gbs=copy_gbs,
                one_step_technique=one_tech or "",
                one_step_of_copy=math.nan if one_f is None else one_f,
                multi_technique=tech,
                multi_config=config_text(cfg),
                multi_of_copy=f,
                speedup_per_step=f / one_f if one_f else math.nan,
                dram_per_step=dram,
                ceiling_of_copy=ceiling,
                recompute=recompute,
                of_ceiling=f / ceiling,
                local_reads=len(terms) * recompute,
            )
        )
    return out


def pct(v: float) -> str:
    return "–" if math.isnan(v) else f"{100 * v:.1f} %"


def write_md(out: Path, rows: list[Row]) -> None:
    lines = [
        "# One step and multi-step against copy: summary over recorded runs",
        "",
        "Each kernel against the copy kernel of its own run. One step: the best one-step "
        "technique of that run's search; multi-step: the best temporal kernel, time per step. "
        "DRAM/step, ceiling, recompute and of-ceiling: `benchmarks/temporal_report.py`'s "
        "docstring.",
        "",
        "| kernel | size | points, radius | one step | multi-step winner | multi-step "
        "| speed-up per step | DRAM / step | ceiling | recompute | of ceiling | local reads |",
        "|---|---|---|---:|---|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for r in rows:
        lines.append(
            f"| {r.kernel} | {r.size} | {r.points}, {r.radius} | {pct(r.one_step_of_copy)} "
            f"({r.one_step_technique}) | {r.multi_technique}: {r.multi_config} "
            f"| {pct(r.multi_of_copy)} | {r.speedup_per_step:.2f}× | {r.dram_per_step:.2f} "
            f"| {pct(r.ceiling_of_copy)} | {r.recompute:.2f} | {pct(r.of_ceiling)} "
            f"| {r.local_reads:.1f} |"
        )
    (out / "summary.md").write_text("\n".join(lines) + "\n")


def write_csv(out: Path, rows: list[Row]) -> None:
    with (out / "summary.csv").open("w", newline="") as fh:
        w = csv.DictWriter(fh, fieldnames=list(asdict(rows[0])))
        w.writeheader()
        for r in rows:
            w.writerow(asdict(r))


def write_png(out: Path, rows: list[Row]) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, (ax, ax2) = plt.subplots(
        1, 2, figsize=(max(8.0, 0.75 * len(rows) + 2) + 5, 4.8), width_ratios=[2.2, 1]
    )
    xs = range(len(rows))
    w = 0.38
    ax.bar([x - w / 2 for x in xs], [100 * r.one_step_of_copy for r in rows], w, label="one step")
    ax.bar([x + w / 2 for x in xs], [100 * r.multi_of_copy for r in rows], w, label="multi-step")
    ax.scatter(
        [x + w / 2 for x in xs],
        [100 * r.ceiling_of_copy for r in rows],
        marker="_",
        s=200,
        color="black",
        label="multi-step DRAM ceiling",
        zorder=3,
    )
    ax.axhline(100, color="grey", lw=0.8)
    ax.axhline(150, color="grey", lw=0.8, ls="--")
    ax.set_xticks(list(xs), [r.kernel for r in rows], rotation=45, ha="right", fontsize=8)
    ax.set_ylabel("% of copy bandwidth (per step)")
    top = max(max(r.multi_of_copy, r.ceiling_of_copy) for r in rows)
    ax.set_ylim(0, 100 * top * 1.18)
    ax.legend(fontsize=8, loc="upper left", ncol=3)
    ax.set_title("One step and temporal blocking against copy")
    for r in rows:
        ax2.scatter(r.local_reads, r.speedup_per_step, color="C1")
        ax2.annotate(r.kernel, (r.local_reads, r.speedup_per_step), fontsize=6)
    ax2.axhline(1.0, color="grey", lw=0.8)
    ax2.set_xlabel("local-memory reads per output point-step")
    ax2.set_ylabel("multi-step over one step, per step")
    ax2.set_title("Where the time goes")
    fig.tight_layout()
    fig.savefig(out / "summary.png", dpi=120)
    plt.close(fig)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("out", type=Path)
    ap.add_argument("runs", type=Path, nargs="+", help="temporal.py output dirs or json files")
    args = ap.parse_args(argv)
    try:
        rows: list[Row] = []
        for run in args.runs:
            rows += rows_of(run)
        if not rows:
            raise InputError("no multi-step result in the runs given", source="runs")
    except GtuneError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    args.out.mkdir(parents=True, exist_ok=True)
    write_md(args.out, rows)
    write_csv(args.out, rows)
    write_png(args.out, rows)
    print((args.out / "summary.md").read_text())
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

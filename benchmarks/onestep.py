"""One step at the bandwidth limit: the real stencils tuned with ``gtune run``'s defaults
against a float4 copy kernel in one run (issue 49's one-step target on the H200: a
geometric mean of 93 % of the copy, none below 88 %; issue 27's on the H100 was 95 / 90).

For each kernel (default: heat3d, box27, laplacian4 at 512³ and jacobi2d at 8192²),
the library call ``gtune run`` makes with its defaults: :func:`gtune.tune` with the
hybrid spec, the technique the load predictor picks for the device (a shipped model
under gtune/data/models), no budget (the spec runs to its end), adaptive timing and the
confirmation round. With ``--all-techniques``, every technique of the kernel (or those
of ``--techniques``) is also searched alone with the same spec and budget (or
``--technique-budget``; the store is shared, so the predicted technique's search is
served from it), which tells whether the defaults or the template's space is the limit.
A kernel whose definition steps in time (``steps``, e.g. 8: times and fractions per
step) is judged against issue 49's multi-step target instead, 1.7x the copy each.

Then, in one batch, the copy kernel (tuned exhaustively at each kernel size; float4
among its vector widths) and every winner are re-measured side by side in alternating
rounds (``--rounds``, medians). Bandwidth counts every array read once and written
once, as for the copy; each kernel is compared with the copy of its own size.

Writes into OUT: ``onestep.json`` (everything), ``onestep.md`` (per kernel: the
technique chosen, the configuration, time, GB/s, fraction of copy, configurations and
seconds spent; the geometric mean against the 93 % / 88 % targets) and ``onestep.png``.
Every measurement goes to ``OUT/onestep.db``, and after each tuning ``onestep.tuned.json``
holds what the tunings found, so a run cut short (a time limit) resumes where it stopped
when started again with the same OUT: the tunings done are skipped, a cut search is
served by the store, and the copy and the side-by-side rounds run again. So does a later
``--all-techniques`` run into the same OUT (the defaults' tunings are kept).

    python3 benchmarks/onestep.py OUT [--device 0:0] [--kernels heat3d box27 ...]
        [--budget N|Ns] [--all-techniques [--techniques global stream ...]
        [--technique-budget N|Ns]] [--rounds 5] [--size 512] [--size2d 8192] [--small]

``--rim-copy``: each kernel that keeps its rim (the interior boundary, ``rim: keep``,
radius R > 0 along x) is also compared with a copy that keeps each row's first and last
R elements (``bandwidth.RIM_COPY_CL``), tuned exhaustively as the copy is and
re-measured in the same rounds: the yardstick of a kernel that must leave those points
as they were, since each row's first and last 32-byte sectors are then written in part
and the memory reads them first (``benchmarks/results/h200-limit/x-rim/``). It is
reported beside the copy (*of rim copy*), never in place of it: the targets stay the
copy's.

``--small``: 32³ and 64², the copy at one work-group (a smoke test on PoCL).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import sys
import tempfile
import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

import bandwidth as bw

from gtune.api import as_budget, tune
from gtune.device import DeviceLimits
from gtune.exceptions import GtuneError
from gtune.features import kernel_features
from gtune.kernel import TunableKernel
from gtune.measure import select_device
from gtune.stencils.definition import RIM_KEEP, is_definition_path, load_definition
from gtune.tuning import TuningReport
from gtune.tuning.techniques import technique_of

DEFAULT_KERNELS = ("heat3d", "box27", "laplacian4", "jacobi2d")
TARGET_MEAN = 0.93  # geometric mean over the kernels, of copy bandwidth (issue 49)
TARGET_EACH = 0.88  # no kernel below
TARGET_STEPS = 1.7  # a time-stepping kernel (`steps`), per step, each (issue 49)
TUNED = "onestep.tuned.json"  # what the tunings found, kept for a later run
log = bw.log
# notes of every run, left out of onestep.md (onestep.json keeps them)
QUIET_NOTES = ("tunes only parameters this kernel lacks", "tied one to one")


def size_text(sizes: Mapping[str, int]) -> str:
    return "x".join(str(v) for v in sizes.values())


def kernel_sizes(kernel: TunableKernel, n3: int, n2: int) -> dict[str, int]:
    """The benchmark size of a kernel: n3 cubed in 3D, n2 squared in 2D."""
    return {"NX": n3, "NY": n3, "NZ": n3} if "NZ" in kernel.sizes else {"NX": n2, "NY": n2}


def load(name: str, n3: int, n2: int) -> tuple[str, TunableKernel]:
    """A kernel by name (stencils/NAME.yaml) or NAME.stencil.yaml path, at its size."""
    small = bw.real_kernel(name, {})
    label = Path(name).name.removesuffix(".stencil.yaml") if name.endswith(".yaml") else name
    return label, small.with_sizes(kernel_sizes(small, n3, n2))


def kept_rim(name: str, kernel: TunableKernel) -> int:
    """The radius along x of the rim ``kernel`` keeps: its definition's (the
    NAME.stencil.yaml path, or stencils/NAME.stencil.yaml beside a real stencil's
    description) when that keeps its rim (the interior boundary, ``rim: keep``); 0 for
    a kernel with another boundary or rim, or without a definition."""
    path = Path(name) if is_definition_path(name) else bw.ROOT / "stencils" / f"{name}.stencil.yaml"
    if not path.is_file():
        return 0
    definition = load_definition(path)
    if definition.boundary != "interior" or definition.rim != RIM_KEEP:
        return 0
    return int(kernel_features(kernel).extent[0])


def rim_key(size: str, rim: int) -> str:
    return f"{size} rim {rim}"


def summarize(report: TuningReport, kernel: TunableKernel, wall_s: float) -> dict[str, Any]:
    """What a tuning found and what it cost."""
    best = report.best_result
    return {
        "searched": [r.technique for r in report.runs],
        "technique": technique_of(kernel, report.best_config),
        "config": report.best_config,
        "tuned_s": best.median_s if best is not None else None,
        "tuned_gbs": report.gbs(),
        "evaluations": report.evaluations,
        "measured": report.measured,
        "reused": report.reused,
        "wall_s": wall_s,
        "notes": list(report.notes),
    }


def tune_kernel(
    kernel: TunableKernel,
    device: DeviceLimits,
    store: str,
    budget: str | None,
    techniques: Sequence[str] | None,
    technique_budget: str | None,
    done: Mapping[str, Any] | None,
    save: Callable[[dict[str, Any]], None],
) -> dict[str, Any]:
    """``gtune run``'s defaults (``budget``: None, as there), then each technique of
    ``techniques`` (empty: every one; None: none) alone under ``technique_budget``. A
    tuning recorded in ``done`` (an earlier run into the same folder) at the same budget
    is kept; ``save`` is given the entry after each tuning."""
    entry: dict[str, Any] = dict(done or {})
    entry.setdefault("size", size_text(kernel.sizes))
    entry.setdefault("bytes_moved", kernel.bytes_moved())
    entry.setdefault("steps", kernel.step_count)
    if (entry.get("defaults") or {}).get("budget", "-") != budget:
        t0 = time.monotonic()
        report = tune(kernel, device=device, budget=as_budget(budget), store=store)
        entry["defaults"] = summarize(report, kernel, time.monotonic() - t0) | {"budget": budget}
        d = entry["defaults"]
        log(
            f"  defaults: searched {d['searched']}, best {d['technique']} "
            f"{(d['tuned_s'] or 0) * 1e3:.3f} ms {d['config']} "
            f"({d['evaluations']} configs, {d['wall_s']:.0f} s)"
        )
        save(entry)
    if techniques is None:
        return entry
    per = entry.setdefault("techniques", {})
    for name in kernel.techniques:
        if techniques and name not in techniques:
            continue
        if (per.get(name) or {}).get("budget", "-") == technique_budget:
            continue
        t0 = time.monotonic()
        report = tune(
            kernel,
            device=device,
            technique=name,
            budget=as_budget(technique_budget),
            store=store,
            confirm=None,
        )
        per[name] = summarize(report, kernel, time.monotonic() - t0) | {"budget": technique_budget}
        e = per[name]
        shown = f"{e['tuned_s'] * 1e3:.3f} ms" if e["tuned_s"] else "nothing ran"
        log(f"  {name:8s} {shown} ({e['evaluations']} configs, {e['wall_s']:.0f} s)")
        save(entry)
    return entry


def best_technique(entry: Mapping[str, Any]) -> tuple[str, dict[str, Any]] | None:
    """The per-technique search with the fastest tuned time."""
    ok = [(t, e) for t, e in (entry.get("techniques") or {}).items() if e.get("tuned_s")]
    return min(ok, key=lambda te: te[1]["tuned_s"]) if ok else None


def remeasure(
    device: DeviceLimits,
    kernels: Mapping[str, TunableKernel],
    results: dict[str, Any],
    copies: Mapping[str, tuple[TunableKernel, dict[str, int], dict[str, int] | None]],
    rounds: int,
    rim_copies: Mapping[str, tuple[TunableKernel, dict[str, int]]] | None = None,
) -> dict[str, float]:
    """Copies (the best, and the best with scalar loads, VX = 1) and winners side by
    side, alternating; fills each entry's time, GB/s and fraction of the copy of its
    size (and of the scalar copy: the template's winners load scalars). With
    ``rim_copies`` (by :func:`rim_key`), those too, and each entry whose ``rim`` has one
    gets its fraction of that rim copy."""
    runs: list[tuple[str, TunableKernel, Mapping[str, int]]] = []
    for size, (k, cfg, scalar) in copies.items():
        runs.append((f"copy {size}", k, cfg))
        if scalar is not None and scalar != cfg:
            runs.append((f"scalar copy {size}", k, scalar))
    for key, (k, cfg) in (rim_copies or {}).items():
        runs.append((f"copy {key}", k, cfg))
    for name, entry in results.items():
        if entry["defaults"].get("config"):
            runs.append((f"{name} defaults", kernels[name], entry["defaults"]["config"]))
        bt = best_technique(entry)
        if bt is not None and bt[1]["config"] != entry["defaults"].get("config"):
            runs.append((f"{name} best technique", kernels[name], bt[1]["config"]))
    times = bw.alternate(device, runs, rounds)
    for name, entry in results.items():
        size = entry["size"]
        copy_bytes = copies[size][0].bytes_moved()  # a kernel of several fields moves more
        scalar_s = times.get(f"scalar copy {size}", times[f"copy {size}"])
        copy_s = min(times[f"copy {size}"], scalar_s)  # the yardstick: the faster copy
        entry["copy_s"] = copy_s
        entry["copy_gbs"] = copy_gbs = copy_bytes / copy_s / 1e9
        entry["scalar_copy_gbs"] = scalar_gbs = copy_bytes / scalar_s / 1e9
        rim_s = times.get(f"copy {rim_key(size, entry.get('rim', 0))}")
        rim_gbs = None
        if rim_s is not None:
            entry["rim_copy_s"] = rim_s
            entry["rim_copy_gbs"] = rim_gbs = copy_bytes / rim_s / 1e9
        for which, e in (("defaults", entry["defaults"]), ("best technique", None)):
            if e is None:
                bt = best_technique(entry)
                if bt is None:
                    continue
                e = entry["best_technique"] = {"technique": bt[0], **bt[1]}
            s = times.get(f"{name} {which}")
            if s is None and which == "best technique":  # the defaults' winner
                s = times.get(f"{name} defaults")
            if s is None:
                continue
            e["time_s"] = s
            e["gbs"] = entry["bytes_moved"] / s / 1e9
            e["fraction_of_copy"] = e["gbs"] / copy_gbs
            e["fraction_of_scalar_copy"] = e["gbs"] / scalar_gbs
            if rim_gbs is not None:
                e["fraction_of_rim_copy"] = e["gbs"] / rim_gbs
    return times


def verdict(results: Mapping[str, Any], key: str = "defaults") -> dict[str, Any]:
    """One-step kernels against the mean and each target; time-stepping kernels (``steps``
    in their definition) each against ``TARGET_STEPS`` per step. ``meets``: every kernel
    measured and every target that applies met."""

    def fractions(multi: bool) -> list[float | None]:
        return [
            (r.get(key) or {}).get("fraction_of_copy")
            for r in results.values()
            if r.get(key) and (r.get("steps", 1) > 1) == multi
        ]

    one, multi = fractions(False), fractions(True)
    vals = [f for f in one if f]
    g = bw.geomean(vals)
    lowest = min(vals) if vals else None
    stepped = [f for f in multi if f]
    steps_lowest = min(stepped) if stepped else None
    # each one-step kernel against its rim copy where it has one, else the copy
    own = [
        e.get("fraction_of_rim_copy") or e.get("fraction_of_copy")
        for r in results.values()
        if (e := r.get(key)) and r.get("steps", 1) == 1
    ]
    has_rim = any((r.get(key) or {}).get("fraction_of_rim_copy") for r in results.values())
    own_vals = [f for f in own if f] if has_rim else []
    return {
        "geomean": g,
        "lowest": lowest,
        "rim_geomean": bw.geomean(own_vals) if own_vals else None,
        "rim_lowest": min(own_vals) if own_vals else None,
        "steps_lowest": steps_lowest,
        "meets": bool(
            len(vals) + len(stepped) == len(results)
            and (not vals or ((g or 0.0) >= TARGET_MEAN and (lowest or 0.0) >= TARGET_EACH))
            and (not stepped or (steps_lowest or 0.0) >= TARGET_STEPS)
        ),
    }


def pct(v: float | None) -> str:
    return f"{v:.1%}" if v else "-"


def gbs_text(v: float | None) -> str:
    return f"{v:.0f}" if v else "-"


def stepped(data: Mapping[str, Any]) -> bool:
    """Whether any kernel of the run steps in time (times and fractions are per step)."""
    return any(r.get("steps", 1) > 1 for r in data["kernels"].values())


def verdict_line(v: Mapping[str, Any]) -> str:
    parts = []
    if v.get("geomean") is not None:
        parts.append(
            f"one step: geometric mean {pct(v['geomean'])} of copy (target ≥ "
            f"{TARGET_MEAN:.0%}), lowest {pct(v['lowest'])} (target ≥ {TARGET_EACH:.0%})"
        )
    if v.get("steps_lowest") is not None:
        parts.append(
            f"time-stepping kernels: lowest {pct(v['steps_lowest'])} of copy per step "
            f"(target ≥ {TARGET_STEPS:.0%} each)"
        )
    shown = "; ".join(parts) or "nothing measured"
    line = f"**{shown[0].upper() + shown[1:]}: {'meets' if v['meets'] else 'misses'} the target.**"
    if v.get("rim_geomean") is not None:
        line += (
            f" Against each kernel's rim copy (the copy where it keeps no rim): geometric "
            f"mean {pct(v['rim_geomean'])}, lowest {pct(v['rim_lowest'])}."
        )
    return line


def summary(data: Mapping[str, Any]) -> str:
    results = data["kernels"]
    lines = [
        f"# {'Against' if stepped(data) else 'One step against'} copy on {data['device']}",
        "",
        f"`gtune run`'s defaults (hybrid spec, technique from the load predictor, budget "
        f"{data['budget'] or 'none'}, adaptive timing, confirmation round); winners and the "
        f"copy kernel re-measured side by side, medians of {data['rounds']} alternating "
        f"rounds; every array read once and written once. Wall time {data['wall_s']:.0f} s.",
        "",
        "Copy kernel (tuned exhaustively, work-group and vector width; *scalar copy*: the "
        "best with VX = 1, as the template's winners load; both re-measured with the "
        "winners, and the faster is the yardstick, *copy GB/s*): "
        + "; ".join(
            f"{size}: {c['gbs']:.0f} GB/s tuned, {c['config']} (by VX: "
            + ", ".join(f"{vx}: {v['gbs']:.0f}" for vx, v in c["by_vx"].items() if v["gbs"])
            + ")"
            for size, c in data["copy"].items()
        ),
    ]
    rims = data.get("rim_copy") or {}
    if rims:
        lines += [
            "",
            "Rim copies (`--rim-copy`: each row's first and last R elements kept, as an "
            "interior stencil of radius R along x keeps them; tuned and re-measured as the "
            "copy is): "
            + "; ".join(
                f"{key}: {c['gbs']:.0f} GB/s tuned, {c['config']}" for key, c in rims.items()
            ),
        ]
    rim_head, rim_rule = (" rim copy GB/s | of rim copy |", "---:|---:|") if rims else ("", "")
    lines += [
        "",
        "| kernel | size | searched | winner | time | GB/s | copy GB/s | of copy | "
        f"of scalar copy |{rim_head} configs | tuning s |",
        f"|---|---|---|---|---:|---:|---:|---:|---:|{rim_rule}---:|---:|",
    ]
    for name, r in results.items():
        d = r["defaults"]
        rim_cells = (
            f" {gbs_text(r.get('rim_copy_gbs'))} | {pct(d.get('fraction_of_rim_copy'))} |"
            if rims
            else ""
        )
        lines.append(
            f"| {name} | {r['size']} | {', '.join(str(t) for t in d['searched'])} | "
            f"{d['technique']} | {(d.get('time_s') or 0) * 1e3:.3f} ms | "
            f"{d.get('gbs') or 0:.0f} | {r.get('copy_gbs') or 0:.0f} | "
            f"{pct(d.get('fraction_of_copy'))} | {pct(d.get('fraction_of_scalar_copy'))} |"
            f"{rim_cells} {d['evaluations']} | {d['wall_s']:.0f} |"
        )
    lines += ["", verdict_line(data["verdict"])]
    if any(r.get("techniques") for r in results.values()):
        techs: list[str] = []
        for r in results.values():
            techs += [t for t in r.get("techniques", {}) if t not in techs]
        lines += [
            "",
            f"Each technique searched alone, hybrid spec, budget "
            f"{data['technique_budget'] or 'none'} (tuned times; the best one re-measured "
            "in the batch above):",
            "",
            "| kernel | " + " | ".join(techs) + " | best, re-measured | configs (all) | s (all) |",
            "|---|" + "---:|" * (len(techs) + 3),
        ]
        for name, r in results.items():
            per = r.get("techniques", {})
            cells = [
                f"{per[t]['tuned_s'] * 1e3:.3f} ms" if per.get(t, {}).get("tuned_s") else "-"
                for t in techs
            ]
            b = r.get("best_technique") or {}
            lines.append(
                f"| {name} | "
                + " | ".join(cells)
                + f" | {b.get('technique', '-')} {pct(b.get('fraction_of_copy'))} | "
                f"{sum(e['evaluations'] for e in per.values())} | "
                f"{sum(e['wall_s'] for e in per.values()):.0f} |"
            )
        vb = data.get("verdict_best_technique") or {}
        lines += [
            "",
            f"Best technique each: geometric mean {pct(vb.get('geomean'))}, lowest "
            f"{pct(vb.get('lowest'))}.",
        ]
    lines += ["", "Configurations (defaults):", ""]
    for name, r in results.items():
        lines.append(f"- {name}: `{r['defaults']['config']}`")
        for note in r["defaults"].get("notes", []):
            if not any(quiet in note for quiet in QUIET_NOTES):
                lines.append(f"  - note: {note}")
    return "\n".join(lines) + "\n"


def plot(path: Path, data: Mapping[str, Any]) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    names = list(data["kernels"])
    xs = list(range(len(names)))
    fig, ax = plt.subplots(figsize=(max(6.0, 1.5 * len(names) + 2), 4.5))
    ks = data["kernels"]
    dflt = [ks[n]["defaults"].get("fraction_of_copy") or 0.0 for n in names]
    best = [(ks[n].get("best_technique") or {}).get("fraction_of_copy") or 0.0 for n in names]
    width = 0.4 if any(best) else 0.6
    ax.bar([x - (0.2 if any(best) else 0) for x in xs], dflt, width, label="gtune run defaults")
    if any(best):
        ax.bar([x + 0.2 for x in xs], best, width, label="best technique, searched alone")
    rim = [ks[n]["defaults"].get("fraction_of_rim_copy") for n in names]
    if any(rim):
        ax.scatter(
            [x - (0.2 if any(best) else 0) for x, f in zip(xs, rim, strict=True) if f],
            [f for f in rim if f],
            marker="_",
            s=400,
            color="tab:orange",
            zorder=3,
            label="gtune run defaults, of the rim copy",
        )
    if any(ks[n].get("steps", 1) == 1 for n in names):
        mean = f"{TARGET_MEAN:.0%} (mean)"
        ax.axhline(TARGET_MEAN, color="black", linestyle="--", linewidth=1, label=mean)
        each = f"{TARGET_EACH:.0%} (each)"
        ax.axhline(TARGET_EACH, color="grey", linestyle=":", linewidth=1, label=each)
    if stepped(data):
        ax.axhline(
            TARGET_STEPS,
            color="tab:red",
            linestyle="--",
            linewidth=1,
            label=f"{TARGET_STEPS:.0%} (per step)",
        )
    ax.set_xticks(xs)
    ax.set_xticklabels([f"{n}\n{ks[n]['size']}" for n in names])
    ax.set_ylim(0, max([1.05, *dflt, *best, *(f for f in rim if f)]))
    ax.set_ylabel("fraction of copy bandwidth")
    what = (
        "against copy (per step), same run" if stepped(data) else "one step against copy, same run"
    )
    ax.set_title(f"{data['device']}: {what}")
    ax.legend(fontsize=8, loc="lower right")
    fig.tight_layout()
    fig.savefig(path, dpi=130)
    plt.close(fig)


def measure_copies(
    device: DeviceLimits,
    kernels: Mapping[str, TunableKernel],
    results: dict[str, Any],
    store: str,
    rounds: int,
    small: bool,
) -> tuple[dict[str, Any], dict[str, Any], dict[str, float]]:
    """The copy of each kernel's size and the rim copy of each kernel's kept rim (its
    entry's ``rim``), tuned exhaustively (``small``: at one work-group), then
    :func:`remeasure`'d with the winners: the copies, the rim copies and the times."""
    wgs = bw.SMOKE_WORK_GROUPS if small else None  # a smoke test: 3 builds a copy
    copies: dict[str, Any] = {}
    rim_copies: dict[str, Any] = {}
    rim_runs: dict[str, tuple[TunableKernel, dict[str, int]]] = {}
    copy_runs: dict[str, tuple[TunableKernel, dict[str, int], dict[str, int] | None]] = {}
    with tempfile.TemporaryDirectory(prefix="gtune-onestep-") as tmp:  # OUT: results only
        for kernel in kernels.values():
            size = size_text(kernel.sizes)
            if size in copies:
                continue
            copier = bw.copy_kernel(Path(tmp) / size, kernel.sizes, wgs)
            copies[size] = c = bw.copy_bandwidth(copier, device, runs=5, store=store)
            scalar = (c["by_vx"].get(1) or {}).get("config")
            copy_runs[size] = (copier, dict(c["config"]), scalar)
            widths = ", ".join(
                f"VX {vx} {v['gbs']:.0f}" for vx, v in c["by_vx"].items() if v["gbs"]
            )
            log(f"copy {size}: {c['gbs']:.0f} GB/s {c['config']} ({widths})")
        for name, kernel in kernels.items():
            rim = results[name]["rim"]
            key = rim_key(size_text(kernel.sizes), rim)
            if not rim or key in rim_copies:
                continue
            copier = bw.copy_kernel(Path(tmp) / key.replace(" ", "-"), kernel.sizes, wgs, rim=rim)
            rim_copies[key] = c = bw.copy_bandwidth(copier, device, runs=5, store=store)
            rim_runs[key] = (copier, dict(c["config"]))
            log(f"copy {key}: {c['gbs']:.0f} GB/s {c['config']}")
        log(f"re-measuring {len(results)} kernels and the copies, {rounds} alternating rounds")
        times = remeasure(device, kernels, results, copy_runs, rounds, rim_runs)
    return copies, rim_copies, times


def make_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("outdir", type=Path)
    parser.add_argument("--device", help="P:D, identity or name (default: the first GPU)")
    parser.add_argument(
        "--kernels",
        nargs="+",
        help="real stencils by name or NAME.stencil.yaml paths "
        f"(default: {' '.join(DEFAULT_KERNELS)})",
    )
    parser.add_argument(
        "--budget", help="configurations or wall time per tuning (default: none, as gtune run)"
    )
    parser.add_argument(
        "--all-techniques",
        action="store_true",
        help="also search every technique alone (with --budget, or --technique-budget)",
    )
    parser.add_argument(
        "--techniques", nargs="+", help="with --all-techniques: only these techniques"
    )
    parser.add_argument(
        "--technique-budget",
        help="with --all-techniques: the budget of each technique's search (default: --budget)",
    )
    parser.add_argument("--rounds", type=int, default=5, help="alternating re-measurements")
    parser.add_argument("--size", type=int, default=512, help="3D cube side (default 512)")
    parser.add_argument("--size2d", type=int, default=8192, help="2D square side (default 8192)")
    parser.add_argument(
        "--small",
        action="store_true",
        help="32³ and 64², the copy at one work-group (PoCL smoke test)",
    )
    parser.add_argument(
        "--rim-copy",
        action="store_true",
        help="also compare each kernel that keeps its rim with a copy that keeps the same rim",
    )
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = make_parser()
    args = parser.parse_args(argv)
    n3, n2 = (32, 64) if args.small else (args.size, args.size2d)
    for text, flag in ((args.budget, "--budget"), (args.technique_budget, "--technique-budget")):
        if text:
            try:
                as_budget(text)
            except GtuneError as exc:
                parser.error(f"{flag}: {exc}")
    technique_budget = args.technique_budget or args.budget
    techniques = (args.techniques or []) if args.all_techniques else None

    started = time.monotonic()
    out: Path = args.outdir
    out.mkdir(parents=True, exist_ok=True)
    store = str(out / "onestep.db")
    names = {}  # label -> the name given (a definition's path)
    kernels = {}
    for given in args.kernels or DEFAULT_KERNELS:
        label, kernel = load(given, n3, n2)
        names[label], kernels[label] = given, kernel
    known = {t for k in kernels.values() for t in k.techniques}
    unknown = sorted(set(args.techniques or []) - known)
    if unknown:
        parser.error(f"--techniques: no kernel has {', '.join(unknown)} ({', '.join(known)})")
    tuned_path = out / TUNED
    tuned: dict[str, Any] = (
        json.loads(tuned_path.read_text()) if tuned_path.exists() else {"kernels": {}}
    )
    device = select_device(args.device)
    log(
        f"device: {device.name}; kernels {', '.join(kernels)}; budget {args.budget or 'none'}"
        f"{'; every technique too' if args.all_techniques else ''}"
    )

    results: dict[str, Any] = {}
    for name, kernel in kernels.items():
        log(f"{name} ({size_text(kernel.sizes)}):")
        done = tuned["kernels"].get(name)
        if done and done.get("size") != size_text(kernel.sizes):
            done = None  # tuned at another size: tuned again

        def save(entry: dict[str, Any], name: str = name) -> None:
            tuned["kernels"][name] = entry
            tuned_path.write_text(json.dumps(tuned, indent=1, default=str))

        results[name] = tune_kernel(
            kernel,
            device,
            store,
            args.budget,
            techniques,
            technique_budget,
            done,
            save,
        )
        results[name]["rim"] = kept_rim(names[name], kernel) if args.rim_copy else 0

    copies, rim_copies, times = measure_copies(
        device, kernels, results, store, args.rounds, args.small
    )

    data: dict[str, Any] = {
        "device": device.name,
        "device_identity": device.identity,
        "driver": device.driver_version,
        "budget": args.budget,
        "rounds": args.rounds,
        "all_techniques": args.all_techniques,
        "technique_budget": technique_budget if args.all_techniques else None,
        "host": platform.node(),
        "cpus": os.cpu_count(),
        "copy": copies,
        "rim_copy": rim_copies,
        "times_s": times,
        "kernels": results,
        "verdict": verdict(results),
        "verdict_best_technique": verdict(results, "best_technique"),
        "wall_s": time.monotonic() - started,
    }
    md = summary(data)
    (out / "onestep.md").write_text(md)
    (out / "onestep.json").write_text(json.dumps(data, indent=1, default=str))
    plot(out / "onestep.png", data)
    log(md)
    log(f"wall time {data['wall_s']:.0f} s; results in {out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

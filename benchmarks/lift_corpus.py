"""The plain-kernel corpus, lifted and tuned in the template, against the same kernels tuned
as plain kernels (work-group only) with the same budget, and against a float4 copy.

For each kernel of ``stencils/plain/manifest.yaml`` that lifts: ``gtune lift`` at the
manifest's small size (on the benchmark device), then at the GPU size (``bench``):

* *plain*: the original kernel tuned as a plain kernel (its work-group size; hybrid
  strategy, ``--budget`` configurations; ``--budget 0``: no budget, each search to the
  end of its spec, as ``gtune run`` does by default);
* *lifted*: the lifted definition rendered in the template and tuned with ``gtune run``'s
  defaults (hybrid strategy, the load predictor's technique where a model fits the
  device), the same budget, verified against the original kernel's output;
* the original at its shipped launch, the plain winner and the lifted winner re-measured
  alternately (``--rounds`` rounds, medians), and the copy kernel (float4 among its
  vector widths, tuned exhaustively) measured at the start and the end of the run, the
  better counted. Bandwidth counts every array read once and written once.

A kernel the host launches once per plane (``plane_index: k=z`` in the manifest) is
lifted and verified with every plane launched; its *plain* kernel (and the original)
is tuned and timed at the middle plane (``k`` = NZ // 2 in its flags: the flag's
``k=0`` is a boundary plane an interior stencil does not write) and its times
multiplied by the number of planes (``"plain_times_per": "plane x NZ"`` in the
result). That omits the gaps between the host loop's launches, so it favours the
plain kernel: the lifted-over-plain ratio is conservative.

The kernels marked ``expect: refuse`` are lifted too and must be refused.

Writes into OUT: ``lift_corpus.json`` (everything), ``lift_corpus.md`` (tables: time,
bandwidth, fraction of copy, speedups, geometric means against the 1.3x and 85 % targets)
and ``definitions/`` (the lifted definitions).

    python3 benchmarks/lift_corpus.py OUT [--device 0:0] [--budget 60] [--rounds 3]
        [--kernels star7 hotspot3d ...] [--small] [--technique auto|all|NAME]

``--small`` runs at the manifest's small sizes (a smoke test on PoCL).
``GTUNE_CORPUS=DIR`` reads the kernels and ``manifest.yaml`` from DIR instead (the same
form; ``lift_export_check.py`` follows it).

A run cut short (a time limit) leaves ``lift_corpus.partial.json`` (every finished
kernel) and ``run.log`` (the copy measurements). Runs split across several commands
combine into one report, copy taken per size as the best any run measured:

    python3 benchmarks/lift_corpus.py OUT --merge RUN_DIR [RUN_DIR ...]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import re
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

import yaml
from bandwidth import alternate, copy_bandwidth, copy_kernel, geomean

from gtune.api import tune
from gtune.budget import Budget
from gtune.commands._plain import add_plain_arguments, open_tunable
from gtune.description import load_kernel
from gtune.device import DeviceLimits
from gtune.exceptions import GtuneError
from gtune.kernel import TunableKernel
from gtune.measure import select_device
from gtune.measure.lifting import against_original, lift_kernel
from gtune.stencils.definition import StencilDefinition, load_definition
from gtune.tuning.report import TuningReport

ROOT = Path(__file__).resolve().parents[1]
PLAIN = Path(os.environ.get("GTUNE_CORPUS") or ROOT / "stencils" / "plain")
"""The corpus: its ``manifest.yaml`` and sources (``GTUNE_CORPUS=DIR``: another folder
of kernels with a manifest in the same form, e.g. kernels kept outside the tree)."""
SPEEDUP_TARGET = 1.3
COPY_TARGET = 0.85


def log(*parts: object) -> None:
    print(*parts, flush=True)


def sizes_of(text: str) -> dict[str, int]:
    return dict(zip(("NX", "NY", "NZ"), (int(v) for v in text.split("x")), strict=False))


def plain(entry: Mapping[str, Any], size: str) -> TunableKernel:
    """The corpus kernel as ``gtune run`` reads it from its flags."""
    parser = argparse.ArgumentParser(add_help=False)
    add_plain_arguments(parser)
    args = parser.parse_args(list(entry["flags"]))
    args.kernel = str(PLAIN / entry["source"])
    args.size = size
    return open_tunable(args)


def plane_bench(entry: Mapping[str, Any], size: str) -> tuple[list[str], int] | None:
    """For a kernel launched once per plane (the manifest's ``plane_index``, ``k=z``):
    its flags with the plane index at the middle plane (``--scalar k=NZ//2``, replacing
    the flag's value or added) and the number of planes at ``size``; None for a kernel
    that writes every point in one launch."""
    text = entry.get("plane_index")
    if text is None:
        return None
    name, _, axis = str(text).partition("=")
    planes = sizes_of(size)["N" + axis.upper()]
    flags = [str(f) for f in entry["flags"]]
    middle = f"{name}={planes // 2}"
    for i, flag in enumerate(flags):
        if flag == "--scalar" and i + 1 < len(flags) and flags[i + 1].split("=")[0] == name:
            return [*flags[: i + 1], middle, *flags[i + 2 :]], planes
        if flag.startswith("--scalar=") and flag[len("--scalar=") :].split("=")[0] == name:
            return [*flags[:i], f"--scalar={middle}", *flags[i + 1 :]], planes
    return [*flags, "--scalar", middle], planes


def per_sweep(times: Mapping[str, float], planes: int) -> dict[str, float]:
    """``alternate``'s times with the plain kernel's arms (``original`` and ``plain``,
    timed at one plane) multiplied by ``planes``: the whole sweep of the host loop,
    without the gaps between its launches."""
    return {k: v * planes if k in ("original", "plain") else v for k, v in times.items()}


def lift_entry(
    entry: Mapping[str, Any], device: DeviceLimits, definition_path: Path
) -> tuple[StencilDefinition, float, int]:
    """``gtune lift`` of a manifest entry at its small size, written to
    ``definition_path``: the definition, the seconds it took and its launches."""
    t0 = time.monotonic()
    defn, launches = lift_kernel(
        plain(entry, entry["size"]),
        device=device,
        output=definition_path,
        flags=entry["flags"],
        plane_index=entry.get("plane_index"),
        fixed=entry.get("fixed", ()),
    )
    definition_path.write_text(defn.to_yaml())
    lift_s = time.monotonic() - t0
    log(
        f"  lifted in {lift_s:.1f} s ({launches} launches): {len(defn.terms)} terms, "
        f"{defn.boundary}, {defn.dtype}"
    )
    return defn, lift_s, launches


def tune_lifted(
    definition_path: Path,
    size: str,
    original: TunableKernel,
    device: DeviceLimits,
    budget: Budget | None,
    store: str | None,
    technique: str,
    compile_workers: int | None = None,
) -> tuple[TunableKernel, TuningReport, float, float]:
    """The lifted definition's template at ``size``, verified against the original's
    own output, and its tuning, with the seconds of each."""
    with tempfile.TemporaryDirectory(prefix="gtune-lift-bench-") as tmp:
        template = load_kernel(definition_path, sizes_of(size))
        t0 = time.monotonic()
        checked = against_original(
            template, load_definition(definition_path), original, device, Path(tmp)
        )
        verify_s = time.monotonic() - t0
        t0 = time.monotonic()
        lifted_report = tune(
            checked,
            device=device,
            budget=budget,
            confirm=None,
            store=store,
            technique=technique,
            compile_workers=compile_workers,
        )
        lifted_s = time.monotonic() - t0
    log(
        f"  lifted: {lifted_report.best_config} {lifted_report.best_s * 1e3:.3f} ms "
        f"({lifted_report.evaluations} configs, {lifted_s:.0f} s; its reference, the "
        f"original's output, {verify_s:.0f} s)"
    )
    return template, lifted_report, verify_s, lifted_s


def bench_kernel(
    name: str,
    entry: Mapping[str, Any],
    device: DeviceLimits,
    out: Path,
    budget: int,
    rounds: int,
    small: bool,
    store: str | None = None,
    technique: str = "auto",
    compile_workers: int | None = None,
) -> dict[str, Any]:
    started = time.monotonic()
    size = entry["size"] if small else entry["bench"]
    definition_path = out / "definitions" / f"{name}.stencil.yaml"
    defn, lift_s, launches = lift_entry(entry, device, definition_path)
    original = plain(entry, size)  # verification launches every plane itself
    planes = plane_bench(entry, size)
    # a plane kernel is tuned and timed at its middle plane, its times x NZ
    bench = original if planes is None else plain({**entry, "flags": planes[0]}, size)
    the_budget = Budget(evaluations=budget) if budget > 0 else None

    t0 = time.monotonic()
    shipped = original.default_config() or {}
    if bench.parameters:
        plain_report = tune(
            bench,
            device=device,
            budget=the_budget,
            confirm=None,
            store=store,
            compile_workers=compile_workers,
        )
        plain_config, plain_evaluations = plain_report.best_config, plain_report.evaluations
        plain_note = f"{plain_report.best_s * 1e3:.3f} ms"
    else:  # its launch and every macro fixed (Rodinia's 16x16 tiles): nothing to tune
        plain_config, plain_evaluations = shipped, 0
        plain_note = "nothing to tune (its launch and macros are fixed): its shipped launch"
    plain_s = time.monotonic() - t0
    log(
        f"  plain: {plain_config} {plain_note}"
        f"{'' if planes is None else ' a plane (the middle)'} "
        f"({plain_evaluations} configs, {plain_s:.0f} s)"
    )

    template, lifted_report, verify_s, lifted_s = tune_lifted(
        definition_path, size, original, device, the_budget, store, technique, compile_workers
    )
    if plain_config is None or lifted_report.best_config is None:
        raise GtuneError(f"{name}: a tuning found nothing that runs")
    t0 = time.monotonic()
    times = alternate(
        device,
        [
            ("original", bench, shipped),
            ("plain", bench, plain_config),
            ("lifted", template, lifted_report.best_config),
        ],
        rounds,
    )
    remeasure_s = time.monotonic() - t0
    log(f"  re-measured side by side ({rounds} rounds) in {remeasure_s:.0f} s")
    # the template's times are per step; one launch of the original is all its steps
    times["lifted"] *= template.step_count
    if planes is not None:
        times = per_sweep(times, planes[1])
    bytes_moved = original.bytes_moved()
    extra = {}
    if planes is not None:
        axis = str(entry["plane_index"]).partition("=")[2].upper()
        extra = {"plain_times_per": f"plane x N{axis}", "planes": planes[1]}
    return {
        **extra,
        "size": size,
        "dtype": defn.dtype,
        "elements": elements_of(defn),
        "terms": len(defn.terms),
        "boundary": defn.boundary,
        "lift_s": lift_s,
        "lift_launches": launches,
        "bytes_moved": bytes_moved,
        "shipped_config": shipped,
        "plain_config": plain_config,
        "lifted_config": lifted_report.best_config,
        "lifted_technique": lifted_report.technique_choice,
        "plain_evaluations": plain_evaluations,
        "lifted_evaluations": lifted_report.evaluations,
        "plain_tuning_s": plain_s,
        "lifted_tuning_s": lifted_s,
        "verify_s": verify_s,
        "remeasure_s": remeasure_s,
        "times_s": times,
        "gbs": {k: bytes_moved / v / 1e9 for k, v in times.items()},
        "lifted_over_plain": times["plain"] / times["lifted"],
        "lifted_over_original": times["original"] / times["lifted"],
        "unverified": [
            str(e.result.extra["unverified"])
            for run in lifted_report.runs
            if run.outcome is not None
            for e in run.outcome.trace
            if e.result.extra.get("unverified")
        ][:1],
        "wall_s": time.monotonic() - started,
    }


def copy_gbs(device: DeviceLimits, sizes: Mapping[str, int], work: Path) -> dict[str, Any]:
    """The copy's best bandwidth at ``sizes``; a size the copy kernel cannot run (no
    work-group divides its elements: 8194x8194) is a row of its own (``gbs`` None), not
    the end of the run."""
    try:
        return copy_bandwidth(copy_kernel(work, sizes), device, runs=5)
    except GtuneError as exc:
        log(f"copy at {sizes}: not measured: {exc.render().splitlines()[0]}")
        return {"gbs": None, "config": None, "error": exc.render().splitlines()[0]}


def gbs_text(copy: Mapping[str, Any]) -> str:
    """A copy measurement for the log: its GB/s, or why there is none."""
    if copy.get("gbs") is None:
        return f"not measured ({copy.get('error', 'no result')})"
    return f"{copy['gbs']:.0f} GB/s"


def percent(fraction: float | None) -> str:
    return "no copy" if fraction is None else f"{fraction * 100:.1f} %"


def set_fractions(
    k: dict[str, Any], best_copy: Mapping[str, Mapping[str, Any]], same_bytes: bool = True
) -> None:
    """A kernel's shares of the copy at its size (and of the copy of its bytes), where
    that copy was measured."""
    copy = best_copy.get(k["size"], {}).get("gbs")
    k["copy_gbs"] = copy
    if copy:
        k["fraction_of_copy"] = k["gbs"]["lifted"] / copy
        k["plain_fraction_of_copy"] = k["gbs"]["plain"] / copy
    same = best_copy.get(k.get("same_bytes_copy", ""), {}).get("gbs")
    if same_bytes and same:
        k["fraction_of_same_bytes_copy"] = k["gbs"]["lifted"] / same


def same_bytes_cell(k: Mapping[str, Any]) -> str:
    """The share of the same-bytes copy, where it is another copy than the size's."""
    if "fraction_of_same_bytes_copy" not in k:
        return "not measured"
    if k["same_bytes_copy"] == k["size"]:
        return "(the same copy)"
    return f"{k['fraction_of_same_bytes_copy'] * 100:.1f} % ({k['same_bytes_copy']})"


def budget_words(budget: int | None) -> str:
    """The budget as the report states it (0: none, every search to its spec's end)."""
    if not budget:
        return "No budget: every search to the end of its spec (`gtune run`'s default)"
    return f"Budget {budget} configurations per tuning"


def kernel_budgets(data: Mapping[str, Any]) -> set[int]:
    """The budgets the report's kernels were tuned with (a merge of runs may mix them;
    a kernel without its own took the report's)."""
    return {
        int(k.get("budget", data["budget"]) or 0)
        for k in data["kernels"].values()
        if "error" not in k
    }


def summary(data: Mapping[str, Any]) -> str:
    mixed = len(kernel_budgets(data)) > 1
    words = (
        "Budgets differ by kernel (the budget column; 0: every search to the end of its spec)"
        if mixed
        else budget_words(data["budget"])
    )
    lines = [
        f"# Lifted corpus kernels on {data['device']}",
        "",
        f"{words} (plain: work-group only; lifted: "
        f"the template); times: medians of {data['rounds']} alternating round(s). Copy: "
        "the float4 copy kernel's best bandwidth per size (start and end of the run).",
        "",
        "| kernel | size | dtype | original (shipped) | plain tuned | lifted tuned | "
        "lifted / plain | lifted / original | lifted GB/s | of copy | of copy, same bytes |"
        + (" budget |" if mixed else ""),
        "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |"
        + (" ---: |" if mixed else ""),
    ]
    for name, k in data["kernels"].items():
        if "error" in k:
            lines.append(
                f"| {name} | | | error: {k['error']} | | | | | | | |" + (" |" if mixed else "")
            )
            continue
        t = k["times_s"]
        budget = f" {k.get('budget', data['budget']) or 0} |" if mixed else ""
        lines.append(
            f"| {name} | {k['size']} | {k.get('elements') or k['dtype']} | "
            f"{t['original'] * 1e3:.3f} ms | "
            f"{t['plain'] * 1e3:.3f} ms | {t['lifted'] * 1e3:.3f} ms | "
            f"{k['lifted_over_plain']:.2f}x | {k['lifted_over_original']:.2f}x | "
            f"{k['gbs']['lifted']:.0f} | {percent(k.get('fraction_of_copy'))} | "
            f"{same_bytes_cell(k)} |{budget}"
        )
    swept = [n for n, k in data["kernels"].items() if k.get("plain_times_per")]
    if swept:
        lines += [
            "",
            f"Launched once per plane ({', '.join(swept)}): original and plain timed at the "
            "middle plane, times x the number of planes (without the host loop's gaps "
            "between launches: this favours the plain kernel).",
        ]
    ok = [k for k in data["kernels"].values() if "error" not in k and k.get("fraction_of_copy")]
    g_speed = geomean([k["lifted_over_plain"] for k in ok])
    g_copy = geomean([k["fraction_of_copy"] for k in ok])
    lines += [
        "",
        f"Geometric mean, lifted over plain: {g_speed:.2f}x (target {SPEEDUP_TARGET}x); "
        f"fraction of copy: {g_copy * 100:.1f} % (target {COPY_TARGET * 100:.0f} %); "
        f"lowest fraction: {min(k['fraction_of_copy'] for k in ok) * 100:.1f} %."
        if ok and g_speed and g_copy
        else "No kernel completed.",
        "",
        "## Refused (must be)",
        "",
    ]
    for name, why in data["refused"].items():
        lines.append(f"- {name}: {why}")
    lines += ["", "## Copy bandwidth", ""]
    for size, c in data["copy"].items():
        lines.append(f"- {size}: {c['gbs']:.0f} GB/s {c['config']}")
    return "\n".join(lines) + "\n"


def same_bytes_size(size: str, bytes_moved: float) -> str:
    """The float copy that moves the kernel's bytes (its input and output), at the
    kernel's row length: a uint8 8192x8192 image (128 MB in and out) is the copy of a
    float 8192x2048 array, not of the 512 MB of a float 8192x8192 one. A copy that
    short pays its launch and tail on fewer bytes, so it is the fair 100 % for a kernel
    of small elements. The kernel's own size where the bytes do not divide evenly."""
    dims = [int(v) for v in size.split("x")]
    floats = int(bytes_moved) // 8  # one array's floats: a copy reads and writes one each
    row = dims[0] * (dims[1] if len(dims) == 3 else 1)
    if floats <= 0 or floats % row or int(bytes_moved) % 8:
        return size
    rest = floats // row
    return "x".join(str(v) for v in ([*dims[:2], rest] if len(dims) == 3 else [dims[0], rest]))


def elements_of(defn: StencilDefinition) -> str:
    """The fields' and the output's element types (``uint8 -> int16``), or the dtype."""
    fields = defn.storage or defn.dtype
    return fields if defn.out_storage == fields else f"{fields} -> {defn.out_storage}"


def merge(out: Path, runs: Sequence[Path]) -> dict[str, Any]:
    """One report from several (possibly cut short) runs' results."""
    kernels: dict[str, Any] = {}
    copies: dict[str, list[dict[str, Any]]] = {}
    refused: dict[str, str] = {}
    meta: dict[str, Any] = {}
    for run in runs:
        whole = run / "lift_corpus.json"
        if whole.exists():
            data = json.loads(whole.read_text())
            for k in data["kernels"].values():
                k.setdefault("budget", data.get("budget"))
            kernels.update(data["kernels"])
            for size, measured in data["copy_all"].items():
                copies.setdefault(size, []).extend(measured)
            refused.update(data.get("refused", {}))
            meta = {k: data.get(k) for k in ("device", "device_identity", "driver", "budget")}
            meta["rounds"] = data["rounds"]
            continue
        partial = json.loads((run / "lift_corpus.partial.json").read_text())
        for name, k in partial.items():  # runs from before "elements" was recorded
            written = run / "definitions" / f"{name}.stencil.yaml"
            if "error" not in k and "elements" not in k and written.exists():
                k["elements"] = elements_of(load_definition(written))
        run_budget = None
        for line in (run / "run.log").read_text().splitlines():
            m = re.match(r"copy (\S+)(?: again)?: (\d+) GB/s", line)
            if m:
                copies.setdefault(m[1], []).append({"gbs": float(m[2]), "config": None})
            m = re.match(r"device: (.*); budget (\d+)", line)
            if m:
                meta.setdefault("device", m[1])
                meta.setdefault("budget", int(m[2]))
                run_budget = int(m[2])
        for k in partial.values():
            k.setdefault("budget", run_budget)
        kernels.update(partial)
    best_copy = {s: max(c, key=lambda c: c["gbs"] or 0.0) for s, c in copies.items()}
    for k in kernels.values():
        if "error" not in k and k["size"] in best_copy:
            set_fractions(k, best_copy, same_bytes=False)
    data = {
        "device": meta.get("device"),
        "budget": meta.get("budget"),
        "rounds": meta.get("rounds", 3),
        "copy": best_copy,
        "copy_all": copies,
        "kernels": kernels,
        "refused": refused,
        "merged_from": [str(r) for r in runs],
    }
    out.mkdir(parents=True, exist_ok=True)
    (out / "lift_corpus.json").write_text(json.dumps(data, indent=1, default=str))
    (out / "lift_corpus.md").write_text(summary(data))
    return data


def job_command(args: argparse.Namespace, k: int, names: Sequence[str], workers: int) -> list[str]:
    """The command line of job ``k``: this script on ``names`` into ``OUT/jobK``, one job,
    ``workers`` build processes, the rest of the options as given."""
    cmd = [sys.executable, str(Path(__file__).resolve()), str(args.outdir / f"job{k}")]
    cmd += ["--kernels", *names, "--budget", str(args.budget), "--rounds", str(args.rounds)]
    cmd += ["--technique", args.technique, "--compile-workers", str(workers)]
    if args.device:
        cmd += ["--device", args.device]
    if args.small:
        cmd.append("--small")
    if args.store:
        cmd += ["--store", f"{args.store}.job{k}"]
    return cmd


def run_jobs(args: argparse.Namespace, names: Sequence[str]) -> int:
    """``names`` dealt round-robin to ``--jobs`` processes of this script on the one
    device, then their results merged into OUT. Each job measures its own copies and
    keeps ``lift_corpus.partial.json`` after every kernel; their timed runs (the
    searches' and the side-by-side rounds') take turns under the device lock, so a
    kernel's times are its own while the other jobs build. Ctrl-C or a SIGTERM (a
    ``timeout`` around the run) stops every job and merges what they finished."""
    jobs = min(args.jobs, len(names))
    workers = args.compile_workers or max(1, ((os.cpu_count() or 2) - 1) // jobs)
    running: list[tuple[int, subprocess.Popen[bytes]]] = []
    previous = signal.signal(signal.SIGTERM, signal.default_int_handler)
    try:
        for k in range(jobs):
            part = list(names[k::jobs])
            folder = args.outdir / f"job{k}"
            folder.mkdir(parents=True, exist_ok=True)
            with (folder / "run.log").open("wb") as logf:
                proc = subprocess.Popen(
                    job_command(args, k, part, workers), stdout=logf, stderr=subprocess.STDOUT
                )
            running.append((k, proc))
            log(f"job {k}: {' '.join(part)} ({workers} build workers; {folder / 'run.log'})")
        codes = [proc.wait() for _, proc in running]
    except KeyboardInterrupt:
        log("stopping the jobs; merging what they finished")
        for _, proc in running:
            proc.terminate()  # a job keeps the kernels it finished, not one it was cut in
        codes = [proc.wait() for _, proc in running] + [130]
    finally:
        signal.signal(signal.SIGTERM, previous)
    for (k, _), code in zip(running, codes, strict=False):
        log(f"job {k}: exit status {code}")
    folders = [args.outdir / f"job{k}" for k, _ in running]
    done = [
        f
        for f in folders
        if (f / "lift_corpus.json").exists() or (f / "lift_corpus.partial.json").exists()
    ]
    if not done:
        print("lift_corpus: no job finished a kernel", file=sys.stderr)
        return 2
    log(summary(merge(args.outdir, done)))
    return 0 if all(c == 0 for c in codes) else 1


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("outdir", type=Path)
    parser.add_argument("--device", help="P:D, identity or name (default: the first GPU)")
    parser.add_argument("--kernels", nargs="+", help="manifest names (default: all)")
    parser.add_argument(
        "--budget",
        type=int,
        default=60,
        help="configurations per tuning; 0: none, every search to its spec's end "
        "(gtune run's default)",
    )
    parser.add_argument("--rounds", type=int, default=3, help="alternating re-measurements")
    parser.add_argument("--small", action="store_true", help="the manifest's small sizes")
    parser.add_argument(
        "--store", help="keep every measured configuration in this store (default: none kept)"
    )
    parser.add_argument(
        "--technique",
        default="auto",
        help="the lifted kernels' technique, as gtune run --technique: auto (the load "
        "predictor's choice, default), all, or a name (stream, global, ...); a kernel "
        "without that technique is an error in its row",
    )
    parser.add_argument(
        "--merge", nargs="+", type=Path, metavar="RUN_DIR", help="combine these runs' results"
    )
    parser.add_argument(
        "--jobs",
        type=int,
        default=1,
        help="kernels tuned at once on the one device, each job its own process and "
        "OUT/jobK folder (their timed runs take turns under the device lock; the builds "
        "share the cores), merged into OUT at the end (default 1)",
    )
    parser.add_argument(
        "--compile-workers",
        type=int,
        help="build processes per tuning (default: every core but one, shared among the jobs)",
    )
    args = parser.parse_args(argv)
    if args.jobs < 1:
        parser.error("--jobs: at least 1")
    return args


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    if args.merge:
        log(summary(merge(args.outdir, args.merge)))
        return 0
    started = time.monotonic()
    out: Path = args.outdir
    manifest = yaml.safe_load((PLAIN / "manifest.yaml").read_text())["kernels"]
    names = args.kernels or list(manifest)
    unknown = [n for n in names if n not in manifest]
    if unknown:
        print(
            f"lift_corpus: not in {PLAIN / 'manifest.yaml'}: {', '.join(unknown)}", file=sys.stderr
        )
        return 2
    if args.jobs > 1:
        return run_jobs(args, names)
    (out / "definitions").mkdir(parents=True, exist_ok=True)
    device = select_device(args.device)
    log(f"device: {device.name}; budget {args.budget}")
    work = out / "copy"
    work.mkdir(exist_ok=True)

    refused: dict[str, str] = {}
    lifted_names = []
    for name in names:
        entry = manifest[name]
        if entry.get("expect") != "refuse":
            lifted_names.append(name)
            continue
        try:
            lift_kernel(
                plain(entry, entry["size"]),
                device=device,
                output=out / "definitions" / f"{name}.stencil.yaml",
            )
            refused[name] = "NOT REFUSED (a definition was found)"
        except GtuneError as exc:
            refused[name] = exc.render()
        log(f"{name}: {refused[name]}")

    size_key = "size" if args.small else "bench"
    copy_sizes = {manifest[n][size_key] for n in lifted_names}
    copies: dict[str, list[dict[str, Any]]] = {}
    for s in sorted(copy_sizes):
        copies[s] = [copy_gbs(device, sizes_of(s), work)]
        log(f"copy {s}: {gbs_text(copies[s][0])}")

    kernels: dict[str, Any] = {}
    for name in lifted_names:
        log(f"{name}:")
        try:
            kernels[name] = bench_kernel(
                name,
                manifest[name],
                device,
                out,
                args.budget,
                args.rounds,
                args.small,
                args.store,
                args.technique,
                args.compile_workers,
            )
        except GtuneError as exc:
            kernels[name] = {"error": exc.render()}
            log(f"  error: {exc.render()}")
        (out / "lift_corpus.partial.json").write_text(json.dumps(kernels, indent=1, default=str))
    for s in sorted(copy_sizes):
        copies[s].append(copy_gbs(device, sizes_of(s), work))
        log(f"copy {s} again: {gbs_text(copies[s][1])}")
    for k in kernels.values():
        if "error" not in k:
            k["same_bytes_copy"] = same_bytes_size(k["size"], k["bytes_moved"])
    for s in sorted({k["same_bytes_copy"] for k in kernels.values() if "error" not in k}):
        if s not in copies:
            copies[s] = [copy_gbs(device, sizes_of(s), work)]
            log(f"copy {s} (the bytes of a kernel of smaller elements): {gbs_text(copies[s][0])}")
    best_copy = {s: max(copies[s], key=lambda c: c["gbs"] or 0.0) for s in copies}
    for k in kernels.values():
        if "error" not in k:
            set_fractions(k, best_copy)
    data = {
        "device": device.name,
        "device_identity": device.identity,
        "driver": device.driver_version,
        "host": platform.node(),
        "budget": args.budget,
        "rounds": args.rounds,
        "technique": args.technique,
        "copy": best_copy,
        "copy_all": copies,
        "kernels": kernels,
        "refused": refused,
        "command": " ".join(sys.argv),
    }
    data["wall_s"] = time.monotonic() - started
    (out / "lift_corpus.json").write_text(json.dumps(data, indent=1, default=str))
    (out / "lift_corpus.md").write_text(summary(data))
    (out / "lift_corpus.partial.json").unlink(missing_ok=True)
    log(summary(data))
    return 0


if __name__ == "__main__":
    sys.exit(main())

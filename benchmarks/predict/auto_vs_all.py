"""``gtune run``'s defaults against ``--technique all``, side by side on one device, in
wall time and in the speed of what each found (issue 46's done-when).

For each kernel (a definition file at a size), two tunings from empty stores, in
alternating order from kernel to kernel: the defaults (``technique="auto"``: the
shipped model's pick, scouting its runner-up; no budget; the default compile workers)
and every technique searched to the end (``technique="all"``). Each tuning's wall time
counts everything ``gtune run`` does (space, start-up, search, confirmation). Then both
winners are re-measured side by side on one device in alternating rounds
(``--rounds``): the regret is auto's time over all's.

    python benchmarks/predict/auto_vs_all.py OUT [--kernels FILE@SIZE ...] [--rounds 5]
        [--device NVIDIA] [--deadline SECONDS] [--share K/N] [--small]
    python benchmarks/predict/auto_vs_all.py OUT --list [--small]
    python benchmarks/predict/auto_vs_all.py OUT --report

Default kernels: the real stencils and the lifted corpus at 512^3 and 8192^2, the
kernels of ``complete_groups.txt``'s first two groups. Each kernel has its own file,
``OUT/kernels/NAME.json``, written after each tuning and after its re-measurement, so
any number of processes (one per GPU, ``--share K/N``; ``auto_vs_all_gpus.sh``) and any
number of device commands share one OUT: a kernel whose arms are done is skipped, a
tuning cut short is run again from an empty store (its wall time must be whole).
``--deadline``: a tuning starts only when the longest of its arm so far would end
within that many seconds (the re-measurements of the kernels whose arms are done still
run). ``--report`` writes ``OUT/auto_vs_all.md`` and
``OUT/auto_vs_all.json`` from every kernel file. ``--small``: 32^3 and 64^2 (a smoke
test on PoCL).

``--arms all``: only the reference arm now (its searches do not depend on the
technique policy, so they may be measured before a change to it). ``--holdout``: the
auto arm of each kernel uses the device's shipped model refitted without the kernel's
family (the real stencils, ``stencils/``; the lifted corpus,
``benchmarks/predict/corpus/``; any other folder is a family of its own), written under
``OUT/models/FAMILY/`` and installed for that tuning alone (``GTUNE_MODELS``): the
kernels are held out from the model that picks their technique.
"""

from __future__ import annotations

import argparse
import contextlib
import csv
import dataclasses
import json
import math
import os
import platform
import re
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parents[1]))
sys.path.insert(0, str(HERE.parent))

import bandwidth as bw  # noqa: E402

from gtune.api import tune  # noqa: E402
from gtune.description import load_kernel  # noqa: E402
from gtune.kernel import TunableKernel  # noqa: E402
from gtune.loadpredict.models import find_model  # noqa: E402
from gtune.measure import select_device  # noqa: E402
from gtune.measure.opencl_evaluator import default_compile_workers  # noqa: E402
from gtune.tuning.techniques import technique_of  # noqa: E402

ARMS = ("auto", "all")


def default_kernels(small: bool) -> list[str]:
    out = []
    for line in (HERE / "complete_groups.txt").read_text().splitlines():
        if not line.strip() or line.startswith("#"):
            continue
        size, *files = line.split()
        if files[0].startswith("suite:"):
            continue
        if small:
            size = "32x32x32" if size.count("x") == 2 and not size.endswith("x1") else "64x64x1"
        out += [f"{f}@{size}" for f in files]
    return out


def load(spec: str) -> tuple[str, TunableKernel]:
    path, size = spec.rsplit("@", 1)
    values = [int(v) for v in size.split("x")]
    kernel = load_kernel(Path(path))
    sizes = dict(zip(kernel.sizes, values, strict=False))
    name = Path(path).name.split(".")[0] + "@" + "x".join(str(v) for v in sizes.values())
    return name, load_kernel(Path(path), sizes)


def tuned(kernel: TunableKernel, device: Any, technique: str) -> dict[str, Any]:
    """One tuning as a user's first: an empty store and an empty space cache (the
    tuning space of a 512^3 kernel takes seconds to solve, and the arm that ran second
    would otherwise find it solved)."""
    with tempfile.TemporaryDirectory() as tmp, environ("GTUNE_CACHE", f"{tmp}/cache"):
        t0 = time.monotonic()
        report = tune(kernel, device=device, technique=technique, store=f"{tmp}/s.db")
        wall = time.monotonic() - t0
    best = report.best_result
    return {
        "wall_s": wall,
        "searched": [r.technique for r in report.runs],
        "technique": technique_of(kernel, report.best_config),
        "config": report.best_config,
        "tuned_s": best.median_s if best is not None else None,
        "evaluations": report.evaluations,
        "time": dataclasses.asdict(report.time),
        "notes": list(report.notes),
        "host": platform.node(),
        "device": device.name,
        "space_cache": "empty",
        "compile_workers": default_compile_workers(),
        "gpu": os.environ.get("CUDA_VISIBLE_DEVICES", ""),
    }


FAMILIES = {"stencils": "real", "corpus": "lifted"}


def family_of(spec: str) -> str:
    """The family a kernel is held out with: the folder its definition lies in."""
    folder = Path(spec.rsplit("@", 1)[0]).parent.name
    return FAMILIES.get(folder, folder)


SUITE = re.compile(r"^(dense|diamond|star|nocorners|thumbtack)_[123]d_[xyz]+_r\d+$")


def row_family(name: str) -> str | None:
    """The family of a dataset row's kernel (``heat3d@512x512x512``); ``None``: the
    suite's kernels (``star_3d_xyz_r1``, at 256^3 written without a size, at other
    sizes with it), in no held-out family."""
    stem = name.split("@")[0]
    if "@" not in name or SUITE.match(stem):
        return None
    return "lifted" if stem.startswith("lifted_") else "real"


def holdout_model(out: Path, family: str, device: Any) -> Path:
    """The device's shipped model refitted without ``family``'s rows, in its own folder
    (``OUT/models/FAMILY``); its card says which rows were left out."""
    folder = out / "models" / family
    card = find_model(device, "hybrid")
    if card is None or card.path is None:
        raise SystemExit(f"--holdout: no model fits {device.name}")
    source = card.path.parent / card.dataset
    with source.open(newline="") as f:
        rows = list(csv.DictReader(f))
    kept = [r for r in rows if row_family(r["kernel"]) != family]
    folder.mkdir(parents=True, exist_ok=True)
    with (folder / card.dataset).open("w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(kept)
    card.source = (
        f"{card.name} without the {family} family: {len(rows) - len(kept)} of {len(rows)} "
        f"rows left out (benchmarks/predict/auto_vs_all.py --holdout)"
    )
    card.cv = {}
    card.write(folder)
    return folder


@contextlib.contextmanager
def environ(name: str, value: str | None) -> Iterator[None]:
    """The environment variable ``name`` set to ``value`` for the block (left as it is
    with ``None``)."""
    if value is None:
        yield
        return
    before = os.environ.get(name)
    os.environ[name] = value
    try:
        yield
    finally:
        if before is None:
            del os.environ[name]
        else:
            os.environ[name] = before


def kernel_file(out: Path, name: str) -> Path:
    return out / "kernels" / (name.replace("@", "_at_") + ".json")


def read_entry(path: Path) -> dict[str, Any]:
    return json.loads(path.read_text()) if path.exists() else {}


def write_entry(path: Path, entry: dict[str, Any]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps(entry, indent=1) + "\n")
    tmp.replace(path)  # whole or not at all: a process killed mid-write leaves the old


def retire(out: Path, arm: str, suffix: str) -> list[str]:
    """Keep each kernel file's ``arm`` and its ``remeasured`` pair as ``ARM_SUFFIX`` and
    ``remeasured_SUFFIX``, so that the next run measures that arm again (after a change
    of the policy or the model) and re-measures the pair; the names of the kernels
    retired. An arm retired under that suffix before is refused, never overwritten."""
    if arm not in ARMS or not suffix.isidentifier():
        raise SystemExit(
            f"auto_vs_all: --retire {arm}:{suffix}: ARM is one of {ARMS}, SUFFIX a word"
        )
    done = []
    for path in sorted(out.glob("kernels/*.json")):
        entry = read_entry(path)
        if arm not in entry:
            continue
        for key in (arm, "remeasured"):
            if f"{key}_{suffix}" in entry:
                raise SystemExit(f"auto_vs_all: {path}: {key}_{suffix} exists already")
        entry[f"{arm}_{suffix}"] = entry.pop(arm)
        if "remeasured" in entry:
            entry[f"remeasured_{suffix}"] = entry.pop("remeasured")
        write_entry(path, entry)
        done.append(path.stem)
    return done


def longest(out: Path, mode: str) -> float:
    """The longest wall time of ``mode``'s tunings so far in ``out`` (0: none yet)."""
    walls = [read_entry(f).get(mode, {}).get("wall_s", 0.0) for f in out.glob("kernels/*.json")]
    return max(walls, default=0.0)


def tune_arms(
    out: Path,
    kernels: dict[str, TunableKernel],
    device: Any,
    until: float,
    models: dict[str, Path] | None = None,
    arms: tuple[str, ...] = ARMS,
) -> None:
    """Each kernel's missing arms, in alternating order. A tuning starts only when the
    longest of its arm so far would end before ``until`` (a ``time.monotonic()``).
    ``models``: the model folder each kernel's auto arm uses (``--holdout``)."""
    for i, (name, kernel) in enumerate(kernels.items()):
        path = kernel_file(out, name)
        entry = read_entry(path)
        for mode in ARMS if i % 2 == 0 else ARMS[::-1]:
            if mode in entry or mode not in arms:
                continue
            if time.monotonic() + longest(out, mode) > until:
                print(f"{name} {mode}: not started (deadline)", file=sys.stderr, flush=True)
                return
            folder = (models or {}).get(name) if mode == "auto" else None
            with environ("GTUNE_MODELS", str(folder) if folder is not None else None):
                entry[mode] = tuned(kernel, device, mode)
            if folder is not None:
                entry[mode]["models"] = str(folder.relative_to(out))
            entry.pop("remeasured", None)  # a new winner: measure the pair again
            write_entry(path, entry)
            e = entry[mode]
            print(
                f"{name} {mode}: {e['technique']} {e['tuned_s']} in {e['wall_s']:.0f} s",
                file=sys.stderr,
                flush=True,
            )


def remeasure(out: Path, kernels: dict[str, TunableKernel], device: Any, rounds: int) -> None:
    """Both winners of each kernel whose arms are done and not yet re-measured, side by
    side in alternating rounds on ``device``."""
    for name, kernel in kernels.items():
        path = kernel_file(out, name)
        entry = read_entry(path)
        if "remeasured" in entry or not all(entry.get(m, {}).get("config") for m in ARMS):
            continue
        runs = [(m, kernel, entry[m]["config"]) for m in ARMS]
        times = bw.alternate(device, runs, rounds)
        entry["remeasured"] = {
            "auto_s": times["auto"],
            "all_s": times["all"],
            "rounds": rounds,
            "device": device.name,
            "host": platform.node(),
            "gpu": os.environ.get("CUDA_VISIBLE_DEVICES", ""),
        }
        write_entry(path, entry)
        print(f"{name}: regret {times['auto'] / times['all']:.3f}", file=sys.stderr, flush=True)


def share(out: Path, specs: list[str], which: str) -> dict[str, TunableKernel]:
    """The ``K/N`` share of the kernels whose pair is not yet re-measured, dealt round
    robin in the given order (every process of one start reads the same files, so the
    shares are disjoint)."""
    k, n = (int(v) for v in which.split("/"))
    loaded = [load(s) for s in specs]
    todo = [
        (name, kl) for name, kl in loaded if "remeasured" not in read_entry(kernel_file(out, name))
    ]
    return dict(todo[k - 1 :: n])


def geomean(values: list[float]) -> float:
    return math.exp(sum(math.log(v) for v in values) / len(values))


def report(out: Path) -> list[str]:
    """The table of every kernel file under ``out`` that has both arms re-measured."""
    lines = [
        "# `gtune run` defaults against `--technique all`",
        "",
        "Regret: auto's winner over all's, re-measured side by side on one device; wall "
        "time: each tuning from an empty store (and an empty space cache where the "
        "kernel's file says `space_cache: empty`), everything `gtune run` does.",
        "",
        "| kernel | auto: searched → technique, time | all: technique, time | regret "
        "| wall: auto / all |",
        "| --- | --- | --- | ---: | ---: |",
    ]
    rows: dict[str, Any] = {}
    regrets, walls = [], []
    for path in sorted((out / "kernels").glob("*.json")):
        entry = read_entry(path)
        if "remeasured" not in entry:
            continue
        name = path.stem.replace("_at_", "@")
        a, b, m = entry["auto"], entry["all"], entry["remeasured"]
        regret, wall = m["auto_s"] / m["all_s"], a["wall_s"] / b["wall_s"]
        regrets.append(regret)
        walls.append(wall)
        rows[name] = {"regret": regret, "wall_share": wall, **entry}
        lines.append(
            f"| {name} | {'+'.join(str(t) for t in a['searched'])} → {a['technique']}, "
            f"{m['auto_s'] * 1e6:.1f} µs | {b['technique']}, {m['all_s'] * 1e6:.1f} µs "
            f"| {regret:.3f} | {a['wall_s']:.0f} / {b['wall_s']:.0f} s ({wall:.0%}) |"
        )
    if regrets:
        lines += [
            "",
            f"{len(regrets)} kernels. Regret: geometric mean {geomean(regrets):.4f}, worst "
            f"{max(regrets):.3f} ({sum(r > 1.05 for r in regrets)} above 1.05); wall time "
            f"auto / all: geometric mean {geomean(walls):.0%}, total "
            f"{sum(r['auto']['wall_s'] for r in rows.values()):.0f} / "
            f"{sum(r['all']['wall_s'] for r in rows.values()):.0f} s.",
        ]
    held = sorted({r["auto"]["models"] for r in rows.values() if "models" in r["auto"]})
    if held:
        lines += [
            "",
            "auto picked with the shipped model refitted without the kernel's family "
            f"(`--holdout`): {', '.join(f'`{h}`' for h in held)}.",
        ]
    (out / "auto_vs_all.json").write_text(json.dumps(rows, indent=1) + "\n")
    (out / "auto_vs_all.md").write_text("\n".join(lines) + "\n")
    return lines


def main(argv: list[str]) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("out", type=Path)
    p.add_argument("--kernels", nargs="+")
    p.add_argument("--rounds", type=int, default=5)
    p.add_argument("--device", default="")
    p.add_argument("--deadline", type=float, default=math.inf)
    p.add_argument("--small", action="store_true")
    p.add_argument(
        "--share",
        default="1/1",
        metavar="K/N",
        help="the K-th of N shares of the kernels not yet done (one process per GPU)",
    )
    p.add_argument(
        "--holdout",
        action="store_true",
        help="auto picks with the shipped model refitted without the kernel's family",
    )
    p.add_argument(
        "--arms",
        default=",".join(ARMS),
        help="the arms to tune now (default: both; `all`: the reference alone)",
    )
    p.add_argument("--list", action="store_true", help="print the default kernels")
    p.add_argument("--report", action="store_true", help="only write the report")
    p.add_argument(
        "--retire",
        metavar="ARM:SUFFIX",
        help="keep every kernel file's ARM (and its re-measured pair) as ARM_SUFFIX, "
        "to be measured again, and stop",
    )
    args = p.parse_args(argv)
    if args.retire:
        arm, _, suffix = args.retire.partition(":")
        names = retire(args.out, arm, suffix)
        print(f"retired {arm} as {arm}_{suffix} in {len(names)} kernel files")
        return 0
    until = time.monotonic() + args.deadline
    if args.list:
        print("\n".join(default_kernels(args.small)))
        return 0
    args.out.mkdir(parents=True, exist_ok=True)
    if not args.report:
        device = select_device(args.device)
        specs = args.kernels or default_kernels(args.small)
        kernels = share(args.out, specs, args.share)
        models = None
        if args.holdout:
            folders = {f: holdout_model(args.out, f, device) for f in map(family_of, specs)}
            models = {load(s)[0]: folders[family_of(s)] for s in specs}
        tune_arms(args.out, kernels, device, until, models, tuple(args.arms.split(",")))
        remeasure(args.out, kernels, device, args.rounds)
    print("\n".join(report(args.out)))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

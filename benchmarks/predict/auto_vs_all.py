"""``gtune run``'s defaults against ``--technique all``, side by side on one device, in
wall time and in the speed of what each found (issue 46's done-when).

For each kernel (a definition file at a size), two tunings from empty stores, in
alternating order from kernel to kernel: the defaults (``technique="auto"``: the
shipped model's pick, scouting its runner-up; no budget) and every technique searched
to the end (``technique="all"``). Each tuning's wall time counts everything ``gtune
run`` does (space, start-up, search, confirmation). Then both winners are re-measured
side by side in alternating rounds (``--rounds``): the regret is auto's time over all's.

    python benchmarks/predict/auto_vs_all.py OUT [--kernels FILE@SIZE ...] [--rounds 5]
        [--device NVIDIA] [--small]

Default kernels: the real stencils and the lifted corpus at 512^3 and 8192^2, the
kernels of ``complete_groups.txt``'s first two groups. Writes OUT/auto_vs_all.json
after each tuning (a run cut short resumes: finished tunings are kept) and
OUT/auto_vs_all.md. ``--small``: 32^3 and 64^2 (a smoke test on PoCL).
"""

from __future__ import annotations

import argparse
import json
import math
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parents[1]))
sys.path.insert(0, str(HERE.parent))

import bandwidth as bw  # noqa: E402

from gtune.api import tune  # noqa: E402
from gtune.description import load_kernel  # noqa: E402
from gtune.kernel import TunableKernel  # noqa: E402
from gtune.measure import select_device  # noqa: E402
from gtune.tuning.techniques import technique_of  # noqa: E402


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
    with tempfile.TemporaryDirectory() as tmp:
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
        "notes": list(report.notes),
    }


def main(argv: list[str]) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("out", type=Path)
    p.add_argument("--kernels", nargs="+")
    p.add_argument("--rounds", type=int, default=5)
    p.add_argument("--device", default="")
    p.add_argument("--small", action="store_true")
    args = p.parse_args(argv)
    args.out.mkdir(parents=True, exist_ok=True)
    state_path = args.out / "auto_vs_all.json"
    state: dict[str, Any] = json.loads(state_path.read_text()) if state_path.exists() else {}
    device = select_device(args.device)
    kernels = dict(load(k) for k in (args.kernels or default_kernels(args.small)))
    for i, (name, kernel) in enumerate(kernels.items()):
        entry = state.setdefault(name, {})
        order = ("auto", "all") if i % 2 == 0 else ("all", "auto")
        for mode in order:
            if mode not in entry:
                entry[mode] = tuned(kernel, device, mode)
                state_path.write_text(json.dumps(state, indent=1) + "\n")
                e = entry[mode]
                print(
                    f"{name} {mode}: {e['technique']} {e['tuned_s']} in {e['wall_s']:.0f} s",
                    file=sys.stderr,
                )
    runs = []
    for name, entry in state.items():
        for mode in ("auto", "all"):
            if entry.get(mode, {}).get("config"):
                runs.append((f"{name} {mode}", kernels[name], entry[mode]["config"]))
    times = bw.alternate(device, runs, args.rounds)
    lines = [
        f"# `gtune run` defaults against `--technique all` ({device.name})",
        "",
        "| kernel | auto: technique, time | all: technique, time | regret | wall: auto / all |",
        "| --- | --- | --- | ---: | ---: |",
    ]
    regrets, walls = [], []
    for name, entry in state.items():
        a, b = entry["auto"], entry["all"]
        ta, tb = times.get(f"{name} auto"), times.get(f"{name} all")
        if not ta or not tb:
            continue
        entry["remeasured"] = {"auto_s": ta, "all_s": tb}
        regret = ta / tb
        regrets.append(regret)
        walls.append(a["wall_s"] / b["wall_s"])
        lines.append(
            f"| {name} | {a['technique']}, {ta * 1e6:.1f} µs | {b['technique']}, "
            f"{tb * 1e6:.1f} µs | {regret:.3f} | {a['wall_s']:.0f} / {b['wall_s']:.0f} s |"
        )
    if regrets:
        geo = math.exp(sum(math.log(r) for r in regrets) / len(regrets))
        lines += [
            "",
            f"Regret: geometric mean {geo:.4f}, worst {max(regrets):.3f}; "
            f"wall time auto / all: geometric mean "
            f"{math.exp(sum(math.log(w) for w in walls) / len(walls)):.2f}.",
        ]
    state_path.write_text(json.dumps(state, indent=1) + "\n")
    (args.out / "auto_vs_all.md").write_text("\n".join(lines) + "\n")
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

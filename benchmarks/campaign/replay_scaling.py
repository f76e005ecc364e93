"""Campaign scaling on recorded search times: the scheduler's rules, replayed.

A campaign's speed on N GPUs of one host is bounded by how well its pieces fill N
workers: with searches of very unequal length, the last long one leaves the other GPUs
idle. This replays gtune's own scheduling rules (gtune.campaign.schedule: streamed,
longest expected first, kernel affinity) on the wall times of searches measured for real
on one GPU (a campaign's ``tasks.jsonl``), for 1, 2 and 4 workers:

* *configurations*: pieces ranked by expected configurations alone (the scheduler before
  it knew what a technique's builds cost);
* *as planned*: ranked by the scheduler's cost model, configurations times
  gtune.campaign.schedule.seconds_per_config of the piece's technique on its stencil
  (the suite kernel of the recorded label, rendered at the recorded size);
* *true lengths*: the same rules told each piece's real length (what a perfect cost
  model would give: the bound on what better ordering can win).

It assumes each GPU runs a search as fast as the one GPU did (the host's cores suffice
for every GPU's compile helpers; check with `compile work` in the recorded times), so it
is a model of the schedule, not a measurement of several GPUs.

    python3 benchmarks/campaign/replay_scaling.py TASKS.jsonl [--workers 1 2 4] [--json OUT]
"""

from __future__ import annotations

import argparse
import json
import sys
from dataclasses import replace
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from gtune.campaign.schedule import (
    Piece,
    expected_configs,
    group_of,
    seconds_per_config,
    simulate,
)
from gtune.campaign.spec import CampaignTask


def rated(pieces: list[Piece], work: Path) -> list[Piece]:
    """``pieces`` with the scheduler's cost: their suite kernels' traits, rendered."""
    from gtune.description import load_kernel
    from gtune.loadpredict.features import traits_of
    from gtune.training.train import suite_kernels

    out = []
    for p in pieces:
        sizes = dict(p.task.sizes)
        size = (sizes.get("NX", 1), sizes.get("NY", 1), sizes.get("NZ", 1))
        (k,) = suite_kernels(work, [size], names=[p.task.label], real=False)
        traits = traits_of(load_kernel(k.path, k.sizes))
        out.append(replace(p, cost=p.cost * seconds_per_config(p.task.technique, traits)))
    return out


def pieces_of(path: Path) -> tuple[list[Piece], dict[str, float], dict[str, int]]:
    pieces: list[Piece] = []
    wall: dict[str, float] = {}
    measured: dict[str, int] = {}
    for line in path.read_text().splitlines():
        if not line.strip():
            continue
        row = json.loads(line)
        t = dict(row["task"])
        t["sizes"] = tuple(tuple(s) for s in t["sizes"])
        task = CampaignTask(**t)
        p = Piece(task, task.key, group_of(task), expected_configs(task.budget), True)
        pieces.append(p)
        wall[p.key] = float(row["wall_s"])
        measured[p.key] = int(row["measured"])
    return pieces, wall, measured


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("tasks", type=Path)
    ap.add_argument("--workers", type=int, nargs="+", default=[1, 2, 4])
    ap.add_argument("--json", type=Path)
    args = ap.parse_args()
    pieces, wall, measured = pieces_of(args.tasks)
    configs = sum(measured.values())
    truth = [replace(p, cost=wall[p.key]) for p in pieces]
    import tempfile

    with tempfile.TemporaryDirectory() as tmp:
        model = rated(pieces, Path(tmp))
    rows = []
    for n in args.workers:
        orders = (("configurations", pieces), ("as planned", model), ("true lengths", truth))
        for name, ps in orders:
            sim = simulate(ps, lambda p: wall[p.key], n)
            rows.append(
                {
                    "workers": n,
                    "order": name,
                    "makespan_s": sim.makespan,
                    "configs_per_s": configs / sim.makespan,
                    "utilisation": sim.utilisation,
                }
            )
    one = {r["order"]: r["makespan_s"] for r in rows if r["workers"] == 1}
    print(
        f"{len(pieces)} searches, {configs} configurations, longest "
        f"{max(wall.values()):.1f} s of {sum(wall.values()):.1f} s"
    )
    print("| workers | order | makespan | configurations/s | speed-up | utilisation |")
    print("| --- | --- | --- | --- | --- | --- |")
    for r in rows:
        r["speedup"] = one.get(str(r["order"]), float("nan")) / float(r["makespan_s"])
        print(
            f"| {r['workers']} | {r['order']} | {r['makespan_s']:.1f} s | "
            f"{r['configs_per_s']:.1f} | {r['speedup']:.2f}x | {r['utilisation']:.0%} |"
        )
    if args.json:
        args.json.write_text(json.dumps({"tasks": str(args.tasks), "rows": rows}, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

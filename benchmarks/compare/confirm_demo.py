"""Search against side-by-side re-measurement on one kernel (issue 26, Table 3).

Measures the winners a Table 3 row re-measured (read from a kernel record, or given)
the way a search does (each alone, once) and the way the side-by-side round does
(interleaved rounds), ``--repeats`` times, and reports per configuration: the search-style
medians, each round's median and run count, the pooled median the table used before
and the balanced median the confirmation round uses now. On a device where some rounds
are disturbed, the pooled median follows the disturbed rounds (they take the most
runs); the balanced median stays with the quiet ones and with the search.

    python benchmarks/compare/confirm_demo.py $OUT/demo --kernel dense_1d_y_r4 \\
        --record benchmarks/results/compare/table3-scale/records.tar.gz --deadline 150
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tarfile
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from gtune.description import load_kernel  # noqa: E402
from gtune.measure import OpenCLEvaluator, select_device  # noqa: E402
from gtune.stencils.generate import generate, parse_size, suite  # noqa: E402
from gtune.tuning.confirm import ConfirmPolicy, side_by_side  # noqa: E402


def winners_of(record_path: Path, kernel: str) -> dict[str, dict[str, int]]:
    """Each strategy's best configuration in ``kernel``'s record."""
    name = f"records/{kernel}.json"
    if record_path.is_dir():
        record = json.loads((record_path / f"{kernel}.json").read_text())
    else:
        with tarfile.open(record_path) as tar:
            f = tar.extractfile(name)
            assert f is not None, f"{name} not in {record_path}"
            record = json.load(f)
    return {c["strategy"]: dict(c["best_config"]) for c in record["cells"] if c.get("best_config")}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("out", type=Path)
    ap.add_argument("--kernel", default="dense_1d_y_r4")
    ap.add_argument("--size", default="256x256x256")
    ap.add_argument("--record", type=Path, required=True)
    ap.add_argument("--repeats", type=int, default=20)
    ap.add_argument("--deadline", type=float, default=150.0, help="seconds for the repeats")
    ap.add_argument("--device", default=None)
    args = ap.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    started = time.monotonic()
    wins = winners_of(args.record, args.kernel)
    distinct: dict[str, dict[str, int]] = {}
    for cfg in wins.values():
        distinct.setdefault(json.dumps(cfg, sort_keys=True), cfg)
    configs = list(distinct.values())
    label = {
        json.dumps(c, sort_keys=True): "/".join(s for s, w in wins.items() if w == c)
        for c in configs
    }
    device = select_device(args.device)
    repeats: list[dict[str, Any]] = []
    with tempfile.TemporaryDirectory() as tmp:
        shapes = [k for k in suite("garvey104") if k.name == args.kernel]
        generate(shapes, Path(tmp), size=parse_size(args.size))
        kernel = load_kernel(Path(tmp) / f"{args.kernel}.cl")
        from gtune.result import Result, Status

        with OpenCLEvaluator(kernel, device) as ev:
            for rep in range(args.repeats):
                if time.monotonic() - started > args.deadline:
                    break
                # as a search measures: each alone, in turn
                alone = {json.dumps(c, sort_keys=True): ev.evaluate(c) for c in configs}
                # as the side-by-side round measures: interleaved rounds
                fake = {k: Result(c, Status.OK, 0.0, (1.0,)) for k, c in distinct.items()}
                out, _ = side_by_side(fake, ev, ConfirmPolicy(rounds=3))
                row: dict[str, Any] = {"repeat": rep, "rounds": out.rounds_done, "notes": out.notes}
                for e in out.entries:
                    k = json.dumps(e.config, sort_keys=True)
                    if not (e.ok and alone[k].ok):
                        row[label[k]] = {"failed": e.message or alone[k].message}
                        continue
                    row[label[k]] = {
                        "search_style_s": alone[k].median_s,
                        "round_medians_s": e.round_medians_s,
                        "round_sizes": e.round_sizes,
                        "pooled_s": statistics.median(e.times_s) if e.times_s else None,
                        "balanced_s": e.median_s,
                    }
                repeats.append(row)
                print(
                    f"repeat {rep}: "
                    + "; ".join(
                        f"{label[json.dumps(e.config, sort_keys=True)]} search "
                        f"{alone[json.dumps(e.config, sort_keys=True)].median_s * 1e6:.1f} pooled "
                        f"{statistics.median(e.times_s) * 1e6:.1f} balanced {e.median_s * 1e6:.1f} "
                        f"rounds {'/'.join(str(n) for n in e.round_sizes)}"
                        for e in out.entries
                        if e.ok and alone[json.dumps(e.config, sort_keys=True)].ok
                    ),
                    flush=True,
                )
    doc = {"kernel": args.kernel, "size": args.size, "device": device.name, "repeats": repeats}
    (args.out / "confirm_demo.json").write_text(json.dumps(doc, indent=1) + "\n")
    # summary: per configuration, over repeats, the worst pooled and balanced error
    # against the search-style median
    print("summary (ratio to the search-style median; max over repeats):")
    for lab in label.values():
        rows = [r[lab] for r in repeats if "pooled_s" in r.get(lab, {})]
        if not rows:
            continue
        pooled = max(r["pooled_s"] / r["search_style_s"] for r in rows)
        balanced = max(r["balanced_s"] / r["search_style_s"] for r in rows)
        print(
            f"  {lab}: pooled up to {pooled:.2f}x, balanced up to {balanced:.2f}x "
            f"({len(rows)} repeats)"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

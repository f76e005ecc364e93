"""What TLS costs a local campaign: the same small real campaign on a local cluster that
speaks TLS with its own temporary credentials (gtune's default) and on one that speaks
plain TCP, alternated:

    python3 benchmarks/campaign/tls_cost.py OUT [--repeats 3] [--kernel stencils/heat3d.cl]
        [--size 16x16x16] [--budget 6] [--round-trips 200]

Per run: the seconds until the workers are ready (cluster start, credentials made,
OpenCL workers started: the campaign's ``start_s``), the whole campaign's wall time,
and the mean round trip of ``--round-trips`` tiny Dask tasks submitted one after the
other on a cluster of the same kind (the scheduler messages TLS wraps); and, alone, the
median milliseconds of making one cluster's credentials. Every run starts from an
empty output folder and store, so every run measures the same work.

Writes OUT/tls_cost.json and OUT/tls_cost.csv.
"""

from __future__ import annotations

import argparse
import csv
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from gtune.campaign import parse_campaign, run_campaign, runner  # noqa: E402


def campaign(kernel: str, size: str, budget: int, tls: bool) -> dict[str, float]:
    runner.LOCAL_TLS = tls
    spec = parse_campaign(
        {
            "name": "tls-cost",
            "kernels": [kernel],
            "sizes": [size],
            "strategies": ["hybrid", "random"],
            "technique": "global",
            "budget": budget,
            "compile_workers": 0,
        },
        source="tls_cost",
        base_dir=ROOT,
    )
    with tempfile.TemporaryDirectory(prefix="gtune-tls-") as tmp:  # an empty store each run
        began = time.monotonic()
        result = run_campaign(spec, Path(tmp) / "c", workers_per_device=1)
        wall = time.monotonic() - began
    if not result.complete:
        raise SystemExit(f"the campaign failed: {result.failed}")
    return {"start_s": result.start_s, "wall_s": wall}


def round_trips(n: int, tls: bool) -> dict[str, float]:
    from distributed import Client

    runner.LOCAL_TLS = tls
    machine = [{"selector": "0:0", "identity": "bench", "name": "bench", "type": "CPU"}]
    began = time.monotonic()
    cluster = runner.local_cluster([""], 1, machine=machine)
    try:
        with Client(cluster) as client:
            client.wait_for_workers(1, timeout=120)
            ready = time.monotonic() - began
            client.submit(abs, -1, pure=False).result()  # connections open
            t0 = time.monotonic()
            for i in range(n):
                client.submit(abs, -i, pure=False).result()
            per = (time.monotonic() - t0) / n
    finally:
        cluster.close(timeout=20)
    return {"cluster_ready_s": ready, "round_trip_ms": per * 1000}


def credentials_ms(n: int = 10) -> float:
    """The median milliseconds of making one cluster's credentials (an RSA-2048 key and
    a self-signed certificate: Dask's ``Security.temporary()``)."""
    from distributed import Security

    times = []
    for _ in range(n):
        t0 = time.monotonic()
        Security.temporary()
        times.append((time.monotonic() - t0) * 1000)
    return statistics.median(times)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("out", type=Path)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--kernel", default=str(ROOT / "stencils" / "heat3d.cl"))
    ap.add_argument("--size", default="16x16x16")
    ap.add_argument("--budget", type=int, default=6)
    ap.add_argument("--round-trips", type=int, default=200)
    args = ap.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    runs: list[dict[str, Any]] = []
    for rep in range(args.repeats):
        for tls in (True, False) if rep % 2 == 0 else (False, True):
            row: dict[str, Any] = {"repeat": rep, "tls": tls}
            row.update(campaign(args.kernel, args.size, args.budget, tls))
            row.update(round_trips(args.round_trips, tls))
            runs.append(row)
            print(json.dumps(row), flush=True)
    runner.LOCAL_TLS = True
    summary: dict[str, Any] = {}
    for tls in (True, False):
        mine = [r for r in runs if r["tls"] is tls]
        summary["tls" if tls else "plain"] = {
            k: statistics.median(r[k] for r in mine)
            for k in ("start_s", "wall_s", "cluster_ready_s", "round_trip_ms")
        }
    summary["tls_minus_plain"] = {
        k: summary["tls"][k] - summary["plain"][k] for k in summary["tls"]
    }
    summary["credentials_ms"] = credentials_ms()
    doc = {"command": sys.argv, "settings": vars(args) | {"out": str(args.out)}, "runs": runs}
    doc["median"] = summary
    (args.out / "tls_cost.json").write_text(json.dumps(doc, indent=2) + "\n")
    with (args.out / "tls_cost.csv").open("w", newline="") as fh:
        writer = csv.DictWriter(fh, fieldnames=list(runs[0]))
        writer.writeheader()
        writer.writerows(runs)
    print(json.dumps(summary, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())

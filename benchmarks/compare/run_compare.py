"""Table 3 on this machine: the heuristics against expert and random search on garvey104
kernels, sharded over GPUs, resumable across sessions.

Generates the paper's 104 synthetic kernels (``gtune stencils generate --suite
garvey104``) into a temporary directory and compares strategies on each kernel through
the library (``gtune.comparison.compare_kernel``, as ``gtune compare`` does) at 256³:
by default the hybrid heuristic with the load predictor's technique (``hybrid``), the
hybrid over every technique (``oracle``), expert search and random sampling of 1,000
(the baseline), every search without a budget (as the paper; ``gtune compare`` does the
same); each kernel's winners are re-measured side by side and the tables rank by those
times. A kernel's whole row (every strategy, then the side-by-side round) completes
before the next kernel starts::

    python benchmarks/compare/run_compare.py OUT [--gpus N | --shards N [--device SEL]]
        [--kernels-file benchmarks/compare/table3_kernels.txt | --kernel NAME ... |
         --kernels 12] [--deadline S] [--resume DIR|ARCHIVE ...] [--random-n 1000]

``--gpus N`` runs N shard processes, shard ``i`` on GPU ``i``
(``CUDA_VISIBLE_DEVICES=i``, its own device lock folder); ``--shards N`` runs N shard
processes on one device (``--device``): on a GPU, one kernel's builds overlap another's
measurements, the device lock keeping their timings apart (a smoke test on PoCL).
Several shards split the host's cores between their compile processes. Kernels are dealt to the
shards round robin in the list's order. Each kernel tunes into its own result store
(``STATE/stores/<kernel>.db``), so a kernel stopped by the deadline continues, in a
later session and on any shard, from what it measured; a completed kernel leaves its
row as a record (``STATE/records/<kernel>.json``) and is skipped by later runs on the
same kind of device. Shards stop measuring at ``--deadline`` seconds after the start;
then the rows of every record of this device (earlier sessions' included, from
``--resume``) are merged into ``OUT/table3.{json,md}`` and ``OUT/speedups.png``
(speedups over random and over expert search, configurations and seconds of each
strategy, geometric means, and issue 26's target: the hybrid with prediction at least
1.05x expert search's speedup over random with at most 25 % of its configurations).
The state is packed for the next session: ``OUT/records.tar.gz`` (every record, and
the shards' logs), ``OUT/partial.tar.gz`` (the stores of kernels begun but not
finished: what ``--resume`` needs to continue them) and ``OUT/stores.tar.gz`` (the
stores of the kernels completed now: every measurement behind the rows). ``--resume``
takes those archives, or a folder holding ``records/`` and ``stores/`` (``.db`` or
``.db.gz``). ``--merge-only`` merges what ``--resume`` and the state hold, measuring
nothing (no device needed).
"""

from __future__ import annotations

import argparse
import gzip
import hashlib
import json
import math
import os
import platform
import re
import signal
import subprocess
import sys
import tarfile
import tempfile
import threading
import time
from collections import defaultdict
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

STRATEGIES = "hybrid,oracle,expert,random"
KERNELS_FILE = Path(__file__).with_name("table3_kernels.txt")
TARGET_SPEEDUP = 1.05  # hybrid's speedup over random / expert's, geometric means
TARGET_CONFIGS = 0.25  # hybrid's configurations / expert's, means per kernel
PACK_LIMIT = 15 * 2**20  # one file back from the device host is at most 16 MiB


# -------------------------------------------------------------------------------------
# Which kernels, in which order, on which shard


def pick(names: list[str], n: int) -> list[str]:
    """``n`` kernels spread over patterns (round robin), and within a pattern evenly
    over its kernels sorted by dimensionality, radius and orientation."""
    by_pattern: dict[str, list[str]] = defaultdict(list)
    for name in sorted(names):
        by_pattern[name.split("_")[0]].append(name)

    def key(name: str) -> tuple[str, int, str]:
        _, dims, orient, radius = name.split("_")
        return dims, int(radius.lstrip("r")), orient

    patterns = sorted(by_pattern)
    counts = dict.fromkeys(patterns, 0)
    for i in range(min(n, len(names))):
        while True:
            p = patterns[i % len(patterns)]
            if counts[p] < len(by_pattern[p]):
                counts[p] += 1
                break
            i += 1
    chosen: list[str] = []
    for p in patterns:
        members = sorted(by_pattern[p], key=key)
        k = counts[p]
        chosen += [members[int((j + 0.5) * len(members) / k)] for j in range(k)]
    return chosen


def read_kernel_list(path: Path) -> list[str]:
    """Kernel names, one a line, in order; ``#`` starts a comment."""
    names = []
    for line in path.read_text().splitlines():
        name = line.split("#", 1)[0].strip()
        if name:
            names.append(name)
    return names


def traits(name: str) -> dict[str, str]:
    """A garvey104 name's pattern, dimensionality, orientation and radius."""
    pattern, dims, orientation, radius = name.split("_")
    return {"pattern": pattern, "dims": dims, "orientation": orientation, "radius": radius}


def coverage(names: Sequence[str]) -> dict[str, set[str]]:
    """The patterns, dimensionalities, orientations and radii ``names`` cover."""
    out: dict[str, set[str]] = defaultdict(set)
    for n in names:
        for k, v in traits(n).items():
            out[k].add(v)
    return dict(out)


def deal(pending: Sequence[str], shards: int) -> list[list[str]]:
    """Kernels dealt round robin in order: shard ``i`` takes ``pending[i::shards]``, so
    the first kernels of the list run first, side by side."""
    return [list(pending[i::shards]) for i in range(shards)]


# -------------------------------------------------------------------------------------
# Records: one kernel's completed row


def slim_report(report: Mapping[str, Any]) -> dict[str, Any]:
    """A tuning report without its search traces (the store holds every measurement):
    per technique searched, what it found and what it cost."""
    out = {k: v for k, v in report.items() if k not in ("runs", "default_result")}
    runs = []
    for run in report.get("runs") or []:
        o = run.get("outcome") or {}
        runs.append(
            {
                "technique": run.get("technique"),
                "space_size": run.get("space_size"),
                "measured": run.get("measured"),
                "reused": run.get("reused"),
                "note": run.get("note"),
                "best_technique": run.get("best_technique"),
                "evaluations": o.get("evaluations"),
                "best_s": o.get("best_s"),
                "best_config": o.get("best_config"),
                "stop_reason": o.get("stop_reason"),
            }
        )
    out["runs"] = runs
    return out


def model_fingerprint(card: Any) -> dict[str, Any] | None:
    """The load-predictor model a run used (None: no model fits the device, so the
    hybrid with prediction searched every technique, as the oracle)."""
    if card is None:
        return None
    digest = ""
    if card.path is not None:
        data = card.path.parent / card.dataset
        if data.is_file():
            digest = hashlib.sha256(data.read_bytes()).hexdigest()[:12]
    return {
        "name": card.name,
        "trained": card.trained,
        "estimator": card.estimator,
        "dataset_sha256": digest,
        "kernels": card.cv.get("kernels"),
    }


def model_kernels(card: Any) -> set[str]:
    """``kernel@NXxNYxNZ`` of every row of the model's dataset."""
    if card is None or card.path is None:
        return set()
    data = card.path.parent / card.dataset
    if not data.is_file():
        return set()
    lines = data.read_text().splitlines()[1:]
    return {line.split(",", 1)[0] for line in lines if line}


def prediction_text(note: str) -> str:
    """The hybrid's technique choice, short: ``stream (p=0.83)``, ``global or vec
    (p=0.55)``, or ``every technique`` (no model, or no features)."""
    m = re.match(r"predicted (\w+) \(p=([0-9.]+)", note)
    if m:
        return f"{m[1]} (p={m[2]})"
    m = re.search(r"unsure \(p=([0-9.]+).*two most likely, (\w+) and (\w+)", note)
    if m:
        return f"{m[2]} or {m[3]} (p={m[1]})"
    return "every technique" if note else ""


def write_record(state: Path, record: Mapping[str, Any]) -> Path:
    folder = state / "records"
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{record['kernel']}.json"
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps(record, indent=1, default=str) + "\n")
    tmp.replace(path)
    return path


def read_records(folder: Path) -> list[dict[str, Any]]:
    out = []
    for path in sorted(folder.glob("*.json")) + sorted(folder.glob("*.json.gz")):
        raw = path.read_bytes()
        out.append(json.loads(gzip.decompress(raw) if path.suffix == ".gz" else raw))
    return out


# -------------------------------------------------------------------------------------
# The merge: Table 3 from records (pure)


def _geomean(values: Sequence[float]) -> float | None:
    logs = [math.log(v) for v in values if math.isfinite(v) and v > 0]
    return math.exp(sum(logs) / len(logs)) if logs else None


def cell_time(cell: Mapping[str, Any]) -> float:
    """The time a strategy is ranked by: re-measured side by side, else its search's."""
    for key in ("remeasured_s", "best_s"):
        v = cell.get(key)
        if v is not None and math.isfinite(float(v)) and float(v) > 0:
            return float(v)
    return math.inf


def kernel_row(record: Mapping[str, Any], strategies: Sequence[str]) -> dict[str, Any]:
    """One kernel's row: per strategy its time, speedup over random and over expert
    search, configurations and seconds; the hybrid's configurations as a share of
    expert search's."""
    cells = {c["strategy"]: c for c in record["cells"]}
    t_random = cell_time(cells["random"]) if "random" in cells else math.inf
    t_expert = cell_time(cells["expert"]) if "expert" in cells else math.inf
    per: dict[str, Any] = {}
    for s in strategies:
        c = cells.get(s)
        if c is None:
            continue
        t = cell_time(c)
        ok = math.isfinite(t)
        per[s] = {
            "time_s": t if ok else None,
            "search_best_s": c.get("best_s"),
            "over_random": t_random / t if ok and math.isfinite(t_random) else None,
            "over_expert": t_expert / t if ok and math.isfinite(t_expert) else None,
            "configs": int(c["evaluations"]),
            "compile_s": float(c["compile_s"]),
            "run_s": float(c["run_s"]),
            "wall_s": float(c.get("wall_s") or 0.0),
            "technique": c.get("technique"),
            "best_config": c.get("best_config"),
        }
    times = {s: v["time_s"] for s, v in per.items() if v["time_s"] is not None}
    best = min(times.values()) if times else None
    share = None
    if "hybrid" in per and "expert" in per and per["expert"]["configs"]:
        share = per["hybrid"]["configs"] / per["expert"]["configs"]
    return {
        "kernel": record["kernel"],
        **traits(record["kernel"]),
        "in_model_dataset": record.get("in_model_dataset"),
        "prediction": record.get("prediction", ""),
        "strategies": per,
        "winners": sorted(s for s, t in times.items() if t == best),
        "hybrid_configs_share_of_expert": share,
        "remeasured_side_by_side": record.get("confirmation") is not None,
        "shard": record.get("shard"),
        "wall_s": record.get("wall_s"),
    }


def summary(rows: Sequence[Mapping[str, Any]], strategies: Sequence[str]) -> dict[str, Any]:
    """Geometric means over kernels of each strategy's speedup over random and over
    expert search, mean configurations and seconds per kernel, the best count, and the
    target check (kernels where both hybrid and expert have times)."""
    out: dict[str, Any] = {"kernels": len(rows), "strategies": {}}
    for s in strategies:
        mine = [r["strategies"][s] for r in rows if s in r["strategies"]]
        n = len(mine) or 1
        out["strategies"][s] = {
            "kernels": len(mine),
            "over_random": _geomean([m["over_random"] for m in mine if m["over_random"]]),
            "over_expert": _geomean([m["over_expert"] for m in mine if m["over_expert"]]),
            "configs": sum(m["configs"] for m in mine) / n,
            "compile_s": sum(m["compile_s"] for m in mine) / n,
            "run_s": sum(m["run_s"] for m in mine) / n,
            "wall_s": sum(m["wall_s"] for m in mine) / n,
            "best_count": sum(1 for r in rows if s in r["winners"]),
        }
    out["target"] = target_check(rows)
    return out


def target_check(rows: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """Issue 26's target: the hybrid with prediction at least ``TARGET_SPEEDUP`` times
    expert search's speedup over random (geometric means over the same kernels) with
    at most ``TARGET_CONFIGS`` of its configurations (means per kernel)."""
    both = [
        r
        for r in rows
        if all(
            s in r["strategies"] and r["strategies"][s]["over_random"] for s in ("hybrid", "expert")
        )
    ]
    if not both:
        return {"kernels": 0, "met": None}
    h = _geomean([r["strategies"]["hybrid"]["over_random"] for r in both])
    e = _geomean([r["strategies"]["expert"]["over_random"] for r in both])
    hc = sum(r["strategies"]["hybrid"]["configs"] for r in both) / len(both)
    ec = sum(r["strategies"]["expert"]["configs"] for r in both) / len(both)
    assert h is not None and e is not None
    ratio = h / e
    share = hc / ec if ec else math.inf
    return {
        "kernels": len(both),
        "hybrid_over_random": h,
        "expert_over_random": e,
        "speedup_ratio": ratio,
        "hybrid_configs": hc,
        "expert_configs": ec,
        "configs_share": share,
        "speedup_target": TARGET_SPEEDUP,
        "configs_target": TARGET_CONFIGS,
        "met": ratio >= TARGET_SPEEDUP and share <= TARGET_CONFIGS,
    }


def merge(
    records: Sequence[Mapping[str, Any]], strategies: Sequence[str], device: str | None = None
) -> dict[str, Any]:
    """Table 3 from kernel records of one device (``device``: its name; default the
    device with the most records). Records of other devices are listed, not mixed."""
    by_device: dict[str, list[Mapping[str, Any]]] = defaultdict(list)
    for r in records:
        by_device[str(r.get("device"))].append(r)
    chosen = device or max(by_device, key=lambda d: (len(by_device[d]), d), default="")
    mine = sorted(by_device.get(chosen, []), key=lambda r: r.get("order", 0))
    rows = [kernel_row(r, strategies) for r in mine]
    notes = [
        f"records of {d} ({len(v)} kernels) left out: one device per table"
        for d, v in sorted(by_device.items())
        if d != chosen
    ]
    models = sorted({json.dumps(r.get("model"), sort_keys=True) for r in mine})
    if len(models) > 1:
        notes.append(
            "the kernels were tuned with different predictor models: "
            + "; ".join(models)
            + " (see each record's model)"
        )
    if any(r.get("model") is None for r in mine):
        notes.append(
            "no load-predictor model fitted the device for some kernels: there the hybrid "
            "with prediction searched every technique, as the oracle"
        )
    doc = {
        "device": chosen,
        "strategies": list(strategies),
        "rows": rows,
        "summary": summary(rows, strategies),
        "held_out": summary([r for r in rows if r["in_model_dataset"] is False], strategies),
        "in_model_dataset": summary([r for r in rows if r["in_model_dataset"]], strategies),
        "models": [json.loads(m) for m in models],
        "notes": notes,
    }
    return doc


def _x(v: float | None, digits: int = 3) -> str:
    return "-" if v is None else f"{v:.{digits}f}"


def _us(v: float | None) -> str:
    return "-" if v is None else f"{v * 1e6:.2f}"


def markdown(doc: Mapping[str, Any], title: str = "Table 3") -> str:
    """The merged table as Markdown: summary, target, per-kernel rows."""
    strategies = doc["strategies"]
    lines = [f"# {title} on {doc['device']}", ""]
    for label, key in (
        ("every kernel", "summary"),
        ("kernels held out of the model's dataset", "held_out"),
        ("kernels in the model's dataset (in-sample prediction)", "in_model_dataset"),
    ):
        s = doc[key]
        if not s["kernels"]:
            continue
        lines += [
            f"## {label} ({s['kernels']})",
            "",
            "| strategy | speedup over random | speedup over expert | configs | compile s "
            "| run s | wall s | best count |",
            "|---|---:|---:|---:|---:|---:|---:|---:|",
        ]
        for name, v in s["strategies"].items():
            lines.append(
                f"| {name} | {_x(v['over_random'])} | {_x(v['over_expert'])} | "
                f"{v['configs']:.1f} | {v['compile_s']:.1f} | {v['run_s']:.3f} | "
                f"{v['wall_s']:.1f} | {v['best_count']} |"
            )
        t = s["target"]
        if t["kernels"]:
            verdict = "met" if t["met"] else "not met"
            lines += [
                "",
                f"Target (hybrid with prediction >= {t['speedup_target']:.2f}x expert "
                f"search's speedup over random at <= {t['configs_target']:.0%} of its "
                f"configurations): **{verdict}**: {t['hybrid_over_random']:.3f} / "
                f"{t['expert_over_random']:.3f} = {t['speedup_ratio']:.3f}x at "
                f"{t['hybrid_configs']:.0f} / {t['expert_configs']:.0f} = "
                f"{t['configs_share']:.1%} of the configurations ({t['kernels']} kernels).",
            ]
        lines.append("")
    lines += [
        "## per kernel",
        "",
        "Times in µs (re-measured side by side where the row says so); ×rand: speedup "
        "over random, ×exp: over expert search; configs and seconds (compile + run of "
        "the configurations each strategy used, served by the store or measured).",
        "",
        "| kernel | model data | prediction | "
        + " | ".join(f"{s} µs (×rand, ×exp, configs, s)" for s in strategies)
        + " | hybrid configs / expert | winners |",
        "|---|---|---|" + "---:|" * len(strategies) + "---:|---|",
    ]
    for r in doc["rows"]:
        cells = []
        for s in strategies:
            v = r["strategies"].get(s)
            if v is None:
                cells.append("-")
                continue
            cells.append(
                f"{_us(v['time_s'])} ({_x(v['over_random'])}, {_x(v['over_expert'])}, "
                f"{v['configs']}, {v['compile_s'] + v['run_s']:.0f})"
            )
        share = r["hybrid_configs_share_of_expert"]
        model = {True: "in", False: "held out", None: "?"}[r["in_model_dataset"]]
        lines.append(
            f"| {r['kernel']} | {model} | {r['prediction'] or '-'} | "
            + " | ".join(cells)
            + f" | {'-' if share is None else f'{share:.1%}'} | {', '.join(r['winners'])} |"
        )
    if doc["notes"]:
        lines += ["", *[f"- {n}" for n in doc["notes"]]]
    return "\n".join(lines) + "\n"


def write_tables(out: Path, doc: Mapping[str, Any], records: Sequence[Mapping[str, Any]]) -> None:
    """``table3.json``, ``table3.md`` and ``speedups.png`` (speedups over random)."""
    from gtune.report import CompareCell, speedups_png

    out.mkdir(parents=True, exist_ok=True)
    (out / "table3.json").write_text(json.dumps(doc, indent=1, default=str) + "\n")
    (out / "table3.md").write_text(markdown(doc))
    kept = {r["kernel"] for r in doc["rows"]}
    cells = [
        CompareCell.from_dict(c)
        for r in records
        if r["kernel"] in kept and str(r.get("device")) == doc["device"]
        for c in r["cells"]
    ]
    if cells:
        speedups_png(cells, doc["strategies"], out / "speedups.png", title=str(doc["device"]))


# -------------------------------------------------------------------------------------
# Resume and pack


def seed_state(state: Path, sources: Sequence[Path]) -> None:
    """Copy records and stores from earlier sessions (folders or packed archives) into
    ``state``; a record or store already there is kept."""
    (state / "records").mkdir(parents=True, exist_ok=True)
    (state / "stores").mkdir(parents=True, exist_ok=True)
    for src in sources:
        if src.is_file():
            with tempfile.TemporaryDirectory() as tmp, tarfile.open(src) as tar:
                tar.extractall(tmp, filter="data")
                seed_state(state, [Path(tmp)])
            continue
        for rec in [*src.glob("records/*.json"), *src.glob("records/*.json.gz")]:
            name = rec.name.removesuffix(".gz")
            dest = state / "records" / name
            if not dest.exists():
                raw = rec.read_bytes()
                dest.write_bytes(gzip.decompress(raw) if rec.suffix == ".gz" else raw)
        for db in [*src.glob("stores/*.db"), *src.glob("stores/*.db.gz")]:
            dest = state / "stores" / db.name.removesuffix(".gz")
            if not dest.exists():
                raw = db.read_bytes()
                dest.write_bytes(gzip.decompress(raw) if db.suffix == ".gz" else raw)


def _tar(path: Path, base: Path, members: Sequence[Path]) -> Path | None:
    if not members:
        return None
    with tarfile.open(path, "w:gz") as tar:
        for m in members:
            tar.add(m, arcname=str(m.relative_to(base)))
    return path


def pack(state: Path, out: Path, started: Sequence[str], device: str) -> list[Path]:
    """Pack for the next session (files of at most 16 MiB, few): every record and
    the logs; the stores of kernels begun and not finished (what a later session
    continues from); the stores of the kernels ``started`` now and finished (split when
    large)."""
    records = read_records(state / "records")
    done = {r["kernel"] for r in records if str(r.get("device")) == device}
    written = []
    recs = sorted((state / "records").glob("*.json")) + sorted(state.glob("shard-*.log"))
    p = _tar(out / "records.tar.gz", state, recs)
    written += [p] if p else []
    stores = sorted((state / "stores").glob("*.db"))
    # every kernel begun and not finished, this session's or an earlier one's
    partial = [s for s in stores if s.stem not in done]
    p = _tar(out / "partial.tar.gz", state, partial)
    written += [p] if p else []
    now = set(started)
    finished = [s for s in stores if s.stem in done and s.stem in now]
    groups: list[list[Path]] = [[]]
    size = 0
    for s in finished:
        n = s.stat().st_size // 4  # a store compresses about four-fold
        if groups[-1] and size + n > PACK_LIMIT:
            groups.append([])
            size = 0
        groups[-1].append(s)
        size += n
    for i, g in enumerate(groups):
        name = "stores.tar.gz" if i == 0 else f"stores-{i}.tar.gz"
        p = _tar(out / name, state, g)
        written += [p] if p else []
    return written


# -------------------------------------------------------------------------------------
# One shard: its kernels one after another, each into its own store


def _compare(
    args: argparse.Namespace,
    state: Path,
    name: str,
    folder: Path,
    device: Any,
    strategies: Sequence[str],
    token: Any,
) -> Any:
    """One kernel's row, tuned into the kernel's own store."""
    from gtune import Campaign
    from gtune.api import DEFAULT_CONFIRM
    from gtune.comparison import compare_kernel

    with Campaign(
        store=state / "stores" / f"{name}.db",
        timeout_s=args.timeout,
        compile_workers=args.compile_workers,
    ) as campaign:
        campaign.sessions.remember(device)
        return compare_kernel(
            campaign,
            folder / f"{name}.cl",
            device,
            strategies,
            name=name,
            budget=args.budget or "none",
            options={"random": {"n": args.random_n}},
            confirm=None if args.no_confirm else DEFAULT_CONFIRM,
            cancel=token,
        )


def run_shard(args: argparse.Namespace, names: Sequence[str]) -> int:
    """Tune ``names`` in order until done or the deadline; a record per kernel done."""
    from gtune import CancelToken
    from gtune.exceptions import GtuneError
    from gtune.loadpredict.models import find_model
    from gtune.measure import list_devices, select_device
    from gtune.stencils.generate import generate, parse_size, suite

    state: Path = args.state
    (state / "stores").mkdir(parents=True, exist_ok=True)
    strategies = [s.strip() for s in args.strategies.split(",") if s.strip()]
    token = CancelToken()
    left = args.deadline_at - time.time()
    if left <= 0:
        return 3
    timer = threading.Timer(left, token.cancel, args=("time limit",))
    timer.daemon = True
    timer.start()
    status = 0
    with tempfile.TemporaryDirectory(prefix="garvey104-") as tmp:
        try:
            wanted = set(names)
            shapes = [k for k in suite("garvey104") if k.name in wanted]
            generate(shapes, Path(tmp), size=parse_size(args.size))
            device = select_device(args.device)
            if args.gpu_index is not None and not args.device:
                gpus = [d for d in list_devices() if d.type.upper() == "GPU"]
                if len(gpus) > 1:
                    # CUDA_VISIBLE_DEVICES not honoured by this OpenCL: pick by index
                    device = gpus[args.gpu_index % len(gpus)]
                    print(f"note: {len(gpus)} GPUs visible; took {device.selector}", flush=True)
        except GtuneError as exc:
            print(f"error: {exc.render()}", file=sys.stderr)
            return 2
        card = find_model(device, "hybrid")
        fingerprint = model_fingerprint(card)
        trained = model_kernels(card)
        if card is None:
            print(
                f"note: no load-predictor model fits {device.name}: the hybrid with "
                "prediction searches every technique (as the oracle)",
                flush=True,
            )
        size = "x".join(str(v) for v in parse_size(args.size))
        for name in names:
            if token.cancelled:
                status = 3
                break
            t0 = time.monotonic()
            print(f"[shard {args.shard}] {name}: start", flush=True)
            try:
                one = _compare(args, state, name, Path(tmp), device, strategies, token)
            except GtuneError as exc:
                print(f"[shard {args.shard}] {name}: error: {exc.render()}", flush=True)
                status = 2
                continue  # the next kernel may run
            if not one.complete:
                print(f"[shard {args.shard}] {name}: stopped ({token.reason})", flush=True)
                status = 3
                break
            hybrid = one.reports.get("hybrid")
            record = {
                "kernel": name,
                "order": args.order.get(name, 0),
                "shard": args.shard,
                "device": device.name,
                "device_identity": device.identity,
                "host": platform.node(),
                "size": size,
                "strategies": strategies,
                "random_n": args.random_n,
                "budget": args.budget or "none",
                "model": fingerprint,
                "in_model_dataset": (f"{name}@{size}" in trained) if card else None,
                "prediction": prediction_text(hybrid.notes[0] if hybrid and hybrid.notes else ""),
                "prediction_note": hybrid.notes[0] if hybrid and hybrid.notes else "",
                "cells": [c.to_dict() for c in one.cells],
                "confirmation": one.confirmation.to_dict() if one.confirmation else None,
                "reports": {s: slim_report(r.to_dict()) for s, r in one.reports.items()},
                "wall_s": round(time.monotonic() - t0, 2),
                "finished": datetime.now(UTC).isoformat(timespec="seconds"),
            }
            write_record(state, record)
            print(f"[shard {args.shard}] {name}: done in {record['wall_s']:.0f} s", flush=True)
    timer.cancel()
    return status


# -------------------------------------------------------------------------------------
# The driver


def _device_name(selector: str | None) -> tuple[str, str]:
    from gtune.measure import select_device

    d = select_device(selector)
    return d.name, d.identity


def _shard_command(args: argparse.Namespace, i: int, n: int, names: Sequence[str]) -> list[str]:
    cmd = [
        sys.executable,
        str(Path(__file__).resolve()),
        str(args.outdir),
        "--shard",
        str(i),
        "--state",
        str(args.state),
        "--deadline-at",
        repr(args.deadline_at),
        "--size",
        args.size,
        "--strategies",
        args.strategies,
        "--random-n",
        str(args.random_n),
        "--timeout",
        repr(args.timeout),
        "--order-json",
        json.dumps(args.order),
    ]
    for name in names:
        cmd += ["--kernel", name]
    if args.device:
        cmd += ["--device", args.device]
    if args.budget:
        cmd += ["--budget", args.budget]
    if args.no_confirm:
        cmd.append("--no-confirm")
    if args.compile_workers is not None:
        cmd += ["--compile-workers", str(args.compile_workers)]
    if args.gpus:
        cmd += ["--gpu-index", str(i)]
    return cmd


def run_parallel(args: argparse.Namespace, plan: Sequence[str], n: int, gpus: bool) -> int:
    """Shard processes over the pending kernels, then merge and pack."""
    state: Path = args.state
    records = read_records(state / "records")
    if args.merge_only:
        device = args.device_name or None
        return finish(args, records, device, [], 0)
    name, identity = _device_name(None if gpus else args.device)
    done = {r["kernel"] for r in records if r.get("device") == name}
    pending = [k for k in plan if k not in done]
    print(
        f"device {name}: {len(done)} of {len(plan)} kernels done before; "
        f"{len(pending)} pending; {n} shard(s)",
        flush=True,
    )
    shards = deal(pending, n)
    procs = []
    for i, names in enumerate(shards):
        if not names:
            continue
        env = dict(os.environ)
        if gpus:
            env["CUDA_VISIBLE_DEVICES"] = str(i)
            # the lock is per device: each GPU its own, as each shard sees "its" 0:0
            env["GTUNE_LOCK_DIR"] = str(state / f"locks-{i}")
        log = open(state / f"shard-{i}.log", "a")  # noqa: SIM115 (closed below)
        print(f"shard {i}: {', '.join(names)}", flush=True)
        procs.append(
            (
                i,
                subprocess.Popen(
                    _shard_command(args, i, n, names),
                    env=env,
                    stdout=log,
                    stderr=subprocess.STDOUT,
                    start_new_session=True,
                ),
                log,
                names,
            )
        )

    def stop(signum: int, frame: object) -> None:
        # killed from outside (``timeout``): the shards go too (they run in their own
        # process groups, so nothing else would end them)
        for _, proc, _, _ in procs:
            if proc.poll() is None:
                os.killpg(proc.pid, signal.SIGKILL)
        raise SystemExit(128 + signum)

    signal.signal(signal.SIGTERM, stop)
    statuses = {}
    for i, proc, log, _ in procs:
        grace = max(5.0, args.deadline_at + args.grace - time.time())
        try:
            statuses[i] = proc.wait(timeout=grace)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGTERM)
            try:
                statuses[i] = proc.wait(timeout=5)
            except subprocess.TimeoutExpired:
                os.killpg(proc.pid, signal.SIGKILL)
                statuses[i] = proc.wait()
            print(f"shard {i}: ended past the deadline (killed)", flush=True)
        log.close()
    for i, *_ in procs:
        text = (state / f"shard-{i}.log").read_text(errors="replace")
        print(f"--- shard {i} (exit {statuses[i]}) ---\n" + "\n".join(text.splitlines()[-12:]))
    started = [k for _, _, _, names in procs for k in names]
    records = read_records(state / "records")
    finished = {r["kernel"] for r in records if r.get("device") == name}
    status = 0 if all(k in finished for k in plan) else 3
    if any(s not in (0, 3) for s in statuses.values()):
        status = 1
    return finish(args, records, name, started, status, identity)


def finish(
    args: argparse.Namespace,
    records: Sequence[Mapping[str, Any]],
    device: str | None,
    started: Sequence[str],
    status: int,
    identity: str = "",
) -> int:
    strategies = [s.strip() for s in args.strategies.split(",") if s.strip()]
    out: Path = args.outdir
    doc = merge(records, strategies, device)
    doc["command"] = " ".join(sys.argv)
    run = {
        "when": datetime.now(UTC).isoformat(timespec="seconds"),
        "host": platform.node(),
        "device": device,
        "device_identity": identity,
        "kernels_in_table": len(doc["rows"]),
        "assigned_now": list(started),
        "exit_status": status,
        "wall_s": round(time.time() - args.started_at, 1),
    }
    doc["run"] = run
    write_tables(out, doc, records)
    packed = []
    if started and doc["device"]:
        packed = pack(args.state, out, started, str(doc["device"]))
    run["packed"] = [p.name for p in packed]
    print(markdown(doc).split("## per kernel")[0])
    print(json.dumps(run, indent=1))
    return status


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("outdir", type=Path)
    parser.add_argument("--device", help="OpenCL device (default: the first GPU)")
    parser.add_argument("--kernels", type=int, default=12, help="how many kernels (12)")
    parser.add_argument(
        "--kernel",
        action="append",
        default=[],
        metavar="NAME",
        help="a garvey104 kernel by name (repeatable); replaces the automatic choice",
    )
    parser.add_argument(
        "--kernels-file",
        type=Path,
        help=f"kernel names in order, one a line (Table 3 at scale: {KERNELS_FILE.name})",
    )
    parser.add_argument("--size", default="256x256x256", help="problem size (256x256x256)")
    parser.add_argument(
        "--random-n", type=int, default=1000, help="random sample size (1000, the paper's)"
    )
    parser.add_argument("--strategies", default=STRATEGIES, help=f"default {STRATEGIES}")
    parser.add_argument("--budget", help="budget per strategy and kernel (none, as the paper)")
    parser.add_argument("--timeout", type=float, default=60.0, help="seconds per configuration")
    parser.add_argument(
        "--no-confirm",
        action="store_true",
        help="rank by the searches' own bests (default: each kernel's winners are "
        "re-measured side by side)",
    )
    parser.add_argument("--gpus", type=int, help="shards, one per GPU (CUDA_VISIBLE_DEVICES=i)")
    parser.add_argument("--shards", type=int, help="shards on one device (--device)")
    parser.add_argument(
        "--compile-workers",
        type=int,
        help="compile processes per shard (default with several shards: cores / shards - "
        "1, at most 15; else gtune's default)",
    )
    parser.add_argument(
        "--deadline",
        type=float,
        default=480.0,
        metavar="S",
        help="shards stop measuring S seconds after the start (480)",
    )
    parser.add_argument(
        "--grace",
        type=float,
        default=20.0,
        help="seconds a shard may take past the deadline before it is killed (20)",
    )
    parser.add_argument("--state", type=Path, help="working state (default OUT/state)")
    parser.add_argument(
        "--resume",
        type=Path,
        action="append",
        default=[],
        metavar="DIR|ARCHIVE",
        help="records and stores of earlier sessions (repeatable)",
    )
    parser.add_argument("--merge-only", action="store_true", help="merge; measure nothing")
    parser.add_argument("--device-name", help="with --merge-only: the device to tabulate")
    # internal: one shard
    parser.add_argument("--shard", type=int, help=argparse.SUPPRESS)
    parser.add_argument("--deadline-at", type=float, help=argparse.SUPPRESS)
    parser.add_argument("--order-json", default="{}", help=argparse.SUPPRESS)
    parser.add_argument("--gpu-index", type=int, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    args.started_at = time.time()
    args.state = args.state or args.outdir / "state"
    args.order = json.loads(args.order_json)
    # Honest compile times: no driver cache reused across runs (NVIDIA's is private to
    # each evaluator already).
    os.environ.setdefault("POCL_KERNEL_CACHE", "0")
    if args.shard is not None:
        return run_shard(args, args.kernel)
    if args.kernels_file is not None:
        try:
            plan = read_kernel_list(args.kernels_file)
        except OSError as exc:
            print(f"error: {args.kernels_file}: {exc.strerror}", file=sys.stderr)
            return 2
    else:
        plan = list(args.kernel)
    from gtune.stencils.generate import suite

    names = sorted(k.name for k in suite("garvey104"))
    unknown = [k for k in plan if k not in names]
    if unknown:
        where = f" in {args.kernels_file}" if args.kernels_file else ""
        print(
            f"error: unknown kernel {unknown[0]!r}{where}; garvey104 has e.g. {names[0]}",
            file=sys.stderr,
        )
        return 2
    plan = plan or pick(names, args.kernels)
    args.order = {k: i for i, k in enumerate(plan)}
    args.outdir.mkdir(parents=True, exist_ok=True)
    seed_state(args.state, args.resume)
    n = args.gpus or args.shards or 1
    if n > 1 and args.compile_workers is None:  # the shards share the host's cores
        args.compile_workers = max(1, min(15, (os.cpu_count() or 2) // n - 1))
    args.deadline_at = args.started_at + args.deadline
    return run_parallel(args, plan, n, gpus=bool(args.gpus))


if __name__ == "__main__":
    sys.exit(main())

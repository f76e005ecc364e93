"""Two hybrid specs replayed on Table 3's result stores (issue 26, item 4).

For every Table 3 row (a record of ``run_compare.py`` and the kernel's result store)
each spec of ``--specs`` runs as ``compare_kernel``'s hybrid task does (budget none, no
confirmation round, :func:`loo_table3.replay_hybrid`) on two technique sets: the
recorded hybrid's own (``recorded``) and expert search's winning technique alone
(``expert's``: where the right technique still loses to expert search). Every
configuration is answered by :class:`gtune.measure.ReplayEvaluator` from the store
(``unrecorded="fail"``): a configuration the store lacks costs an evaluation, is
counted as a miss and never becomes the best, so no time is invented. A kernel whose
replay of some spec asked for a configuration the store lacks is **inconclusive** for
that comparison: the missing configuration might have been faster.

This is a replay of recorded measurements, not a new GPU run; times are search-time
medians from the store.

    python benchmarks/compare/spec_steps.py OUT \\
        --records benchmarks/results/compare/table3-scale/records.tar.gz \\
        --stores benchmarks/results/compare/table3-scale/stores.tar.xz \\
        --specs hybrid,benchmarks/compare/specs/hybrid-final-xy.yaml

writes ``OUT/spec_steps.json`` and ``OUT/spec_steps.md``. With ``--export TECHNIQUE``
it writes instead, per ``--kernel``, ``OUT/<kernel>.<technique>.json.gz``: the store's
results of that technique (the kernel identity that finished the row), as
``tests/heuristics/test_replay_h100_tile.py`` replays them.
"""

from __future__ import annotations

import argparse
import gzip
import json
import math
import sys
import tempfile
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from loo_table3 import DEVICE, replay_hybrid, store_results, unpack

from gtune.api import as_kernel
from gtune.device import DeviceLimits
from gtune.exceptions import GtuneError, InputError
from gtune.space import solve_space
from gtune.tuning.techniques import technique_of

NOISE = 0.005
"""Relative difference under which two search-time medians are a tie."""


def _spec_arg(spec: str) -> str | Path:
    return Path(spec) if spec.endswith((".yaml", ".yml")) else spec


def label(spec: str) -> str:
    return Path(spec).stem if spec.endswith((".yaml", ".yml")) else spec


def kernel_rows(
    name: str,
    record: Mapping[str, Any],
    kernels: Path,
    store: Path,
    device: DeviceLimits,
    specs: Sequence[str],
) -> dict[str, Any]:
    """The kernel's replays: ``{technique set: {spec label: replay}}``."""
    kernel = as_kernel(str(kernels / f"{name}.cl"), None)
    results = store_results(store, record["device_identity"])
    space = solve_space(kernel, device).space
    cells = {c["strategy"]: c for c in record["cells"]}
    sets = {
        "recorded": [r["technique"] for r in record["reports"]["hybrid"]["runs"]],
        "expert's": [str(cells["expert"]["technique"])],
    }
    best_stored = min((r.objective for r in results if r.ok), default=None)
    out: dict[str, Any] = {
        "kernel": name,
        "stored": len(results),
        "store_best_s": best_stored,
        "expert": {
            "technique": cells["expert"].get("technique"),
            "best_s": cells["expert"].get("best_s"),
            "configs": int(cells["expert"]["evaluations"]),
            "best_config": cells["expert"].get("best_config"),
        },
        "replays": {},
    }
    for key, techniques in sets.items():
        out["replays"][key] = {"techniques": techniques}
        for spec in specs:
            r = replay_hybrid(
                kernel,
                device,
                results,
                techniques,
                space=space,
                spec=None if spec == "hybrid" else _spec_arg(spec),
            )
            out["replays"][key][label(spec)] = {
                "best_s": r.best_s,
                "best_config": r.best_config,
                "configs": r.configs,
                "misses": len(r.unrecorded),
                "bound_s": r.bound_s,
                "missed_configs": r.unrecorded[:20],
                "steps": [s for run in r.runs for s in run["steps"]],
            }
    return out


def export(
    name: str, record: Mapping[str, Any], kernels: Path, store: Path, technique: str, out: Path
) -> Path:
    """The store's results of ``technique`` for one kernel, as gzipped JSON."""
    kernel = as_kernel(str(kernels / f"{name}.cl"), None)
    results = [
        r
        for r in store_results(store, record["device_identity"])
        if technique_of(kernel, r.config) == technique
    ]
    out.mkdir(parents=True, exist_ok=True)
    path = out / f"{name}.{technique}.json.gz"
    doc: dict[str, Any] = {
        "kernel": name,
        "size": record["size"],
        "technique": technique,
        "source": "benchmarks/results/compare/table3-scale/stores.tar.xz",
        # what a replay reads: the configuration, its status and times
        "results": [
            {
                k: v
                for k, v in r.to_dict().items()
                if k in ("config", "status", "compile_s", "times_s")
            }
            for r in results
        ],
    }
    with gzip.open(path, "wt") as f:
        json.dump(doc, f, separators=(",", ":"))
    return path


def verdict(a: Mapping[str, Any], b: Mapping[str, Any]) -> str:
    """``b`` against ``a`` (the shipped spec, which must replay without a miss).

    Without a miss the replays' bests decide. With misses in ``b`` only its bound does
    (per technique, the best recorded time asked up to the end of the step that asked
    for its first miss: the device run asks the same until then, and its best never
    gets slower): ``b`` does not lose where the bound is
    within noise of ``a``'s best, wins where it is faster by more than noise; anything
    else is inconclusive (a miss might have led anywhere, so ``b``'s best is no time).
    """
    if a["misses"] or a["best_s"] is None:
        return "inconclusive"
    if not b["misses"]:
        if b["best_s"] is None:
            return "no best"
        ratio = a["best_s"] / b["best_s"]
        return "wins" if ratio > 1 + NOISE else "loses" if ratio < 1 - NOISE else "tie"
    if b["bound_s"] is None:
        return "inconclusive"
    ratio = a["best_s"] / b["bound_s"]
    return (
        "wins (bound)"
        if ratio > 1 + NOISE
        else "tie (bound)"
        if ratio >= 1 - NOISE
        else "inconclusive"
    )


def judged(a: Mapping[str, Any], b: Mapping[str, Any]) -> float | None:
    """``a``'s best over ``b``'s (its bound where ``b`` missed): a lower bound on the
    speedup, or None where the kernel is inconclusive."""
    v = verdict(a, b)
    if v in ("inconclusive", "no best"):
        return None
    return float(a["best_s"] / (b["bound_s"] if b["misses"] else b["best_s"]))


def _us(v: float | None) -> str:
    return "-" if v is None else f"{v * 1e6:.2f}"


def summary(rows: Sequence[Mapping[str, Any]], base: str, new: str, key: str) -> dict[str, Any]:
    got = [(r["replays"][key][base], r["replays"][key][new], r) for r in rows]
    ratios = [x for x in (judged(a, b) for a, b, _ in got) if x is not None]
    counts: dict[str, int] = {}
    for a, b, _ in got:
        v = verdict(a, b)
        counts[v] = counts.get(v, 0) + 1
    expert = sum(r["expert"]["configs"] for _, _, r in got)
    return {
        "kernels": len(got),
        "without_a_miss": sum(1 for a, b, _ in got if not a["misses"] and not b["misses"]),
        "judged": len(ratios),
        "verdicts": counts,
        "speedup_judged": math.exp(sum(map(math.log, ratios)) / len(ratios)) if ratios else None,
        "worst_judged": min(ratios, default=None),
        "configs": {
            base: sum(a["configs"] for a, _, _ in got),
            new: sum(b["configs"] for _, b, _ in got),
            "expert": expert,
        },
        "misses": {
            base: sum(a["misses"] for a, _, _ in got),
            new: sum(b["misses"] for _, b, _ in got),
        },
        "kernels_with_misses": {
            base: sum(1 for a, _, _ in got if a["misses"]),
            new: sum(1 for _, b, _ in got if b["misses"]),
        },
    }


def markdown(doc: Mapping[str, Any]) -> str:
    base, new = doc["specs"]
    lines = [
        f"# `{new}` against `{base}`, replayed on Table 3's stores",
        "",
        "A replay of recorded H100 measurements (search-time medians), not a new GPU run. "
        "misses: configurations a spec asked for that the store lacks (answered as not run, "
        "never a time). bound: per technique, the best recorded time the spec asked for "
        "up to the end of the step that asked for its first miss (a step's batch is fixed "
        "before it is measured); the device run asks the same until then and its best "
        "never gets slower, so its best is at most the bound. verdict: from the bests "
        "where neither spec missed, "
        f"else from the bound (`(bound)`); a ratio within {NOISE:.1%} is a tie; "
        "inconclusive where the bound is slower than the shipped spec's best.",
        "",
        f"    {doc['command']}",
        "",
    ]
    for key, title in (
        ("expert's", "expert's winning technique"),
        ("recorded", "the recorded hybrid's techniques"),
    ):
        s = doc["summary"][key]
        cfg = s["configs"]
        lines += [
            f"## On {title}",
            "",
            f"{s['kernels']} kernels: {s['without_a_miss']} replayed without a miss, "
            f"{s['judged']} judged; verdicts "
            + ", ".join(f"{k} {v}" for k, v in sorted(s["verdicts"].items()))
            + f". Geometric-mean speedup of `{new}` over `{base}` on the judged kernels "
            f"(a lower bound where judged by the bound): {s['speedup_judged'] or 0:.4f} "
            f"(worst {s['worst_judged'] or 0:.4f}). Configurations: {base} {cfg[base]} "
            f"({cfg[base] / cfg['expert']:.1%} of expert's {cfg['expert']}), {new} "
            f"{cfg[new]} ({cfg[new] / cfg['expert']:.1%}). Misses: {base} "
            f"{s['misses'][base]} (on {s['kernels_with_misses'][base]} kernels), {new} "
            f"{s['misses'][new]} (on {s['kernels_with_misses'][new]} kernels).",
            "",
            f"| kernel | techniques | {base} µs (configs, misses) | {new} µs (configs, "
            f"misses) | {new} bound µs | {base} / {new} (bound) | verdict | "
            "expert µs (technique, configs) |",
            "|---|---|---:|---:|---:|---:|---|---:|",
        ]
        for r in doc["rows"]:
            rep = r["replays"][key]
            a, b = rep[base], rep[new]
            ratio = judged(a, b)
            e = r["expert"]
            lines.append(
                f"| {r['kernel']} | {'/'.join(rep['techniques'])} | {_us(a['best_s'])} "
                f"({a['configs']}, {a['misses']}) | {_us(b['best_s'])}"
                f"{'' if not b['misses'] else '†'} ({b['configs']}, {b['misses']}) | "
                f"{_us(b['bound_s'])} | {'-' if ratio is None else f'{ratio:.4f}'} | "
                f"{verdict(a, b)} | {_us(e['best_s'])} ({e['technique']}, {e['configs']}) |"
            )
        lines += ["", "† found with misses: not a time the spec is known to reach.", ""]
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("out", type=Path)
    ap.add_argument("--records", type=Path, required=True, help="records.tar.gz or a folder")
    ap.add_argument("--stores", type=Path, required=True, help="stores.tar.xz or a folder")
    ap.add_argument("--specs", default="hybrid", help="two specs: shipped name or .yaml")
    ap.add_argument("--device", type=Path, default=DEVICE, help="the H100's limits (JSON)")
    ap.add_argument("--kernel", action="append", default=[], help="only these rows")
    ap.add_argument("--export", metavar="TECHNIQUE", help="write the stores' results instead")
    args = ap.parse_args(argv)
    specs = [s.strip() for s in args.specs.split(",") if s.strip()]
    from gtune.stencils.generate import generate, parse_size, suite

    try:
        if len(specs) != 2 and not args.export:
            raise InputError(
                "give two specs: the shipped one, then the changed one", source="--specs"
            )
        device = DeviceLimits.from_dict(json.loads(args.device.read_text()))
        with tempfile.TemporaryDirectory(prefix="spec-steps-") as tmp:
            work = Path(tmp)
            records = unpack(args.records, work / "records", ".json")
            stores = unpack(args.stores, work / "stores", ".db")
            names = [
                n for n in sorted(records) if n in stores and (not args.kernel or n in args.kernel)
            ]
            loaded = {n: json.loads(records[n].read_text()) for n in names}
            sizes = {rec.get("size") for rec in loaded.values()}
            if len(sizes) != 1:
                raise InputError(
                    f"records of several sizes {sorted(map(str, sizes))}", source=args.records
                )
            generate(
                [k for k in suite("garvey104") if k.name in set(names)],
                work / "kernels",
                size=parse_size(str(sizes.pop())),
            )
            if args.export:
                for n in names:
                    print(export(n, loaded[n], work / "kernels", stores[n], args.export, args.out))
                return 0
            rows = []
            for n in names:
                rows.append(kernel_rows(n, loaded[n], work / "kernels", stores[n], device, specs))
                rep = rows[-1]["replays"]
                for k in rep:
                    got = [rep[k][label(x)] for x in specs]
                    shown = [f"{_us(g['best_s'])} ({g['configs']}, {g['misses']})" for g in got]
                    print(n, k, *shown, flush=True)
    except (GtuneError, OSError, ValueError) as exc:
        msg = exc.render() if isinstance(exc, GtuneError) else str(exc)
        print(f"error: {msg}", file=sys.stderr)
        return 2
    base, new = label(specs[0]), label(specs[1])
    doc: dict[str, Any] = {
        "command": " ".join(["python", *(sys.argv if argv is None else ["spec_steps.py", *argv])]),
        "what": "replay of recorded measurements (no GPU run)",
        "specs": [base, new],
        "summary": {k: summary(rows, base, new, k) for k in ("expert's", "recorded")},
        "rows": rows,
    }
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "spec_steps.json").write_text(json.dumps(doc, indent=1) + "\n")
    (args.out / "spec_steps.md").write_text(markdown(doc))
    for k, s in doc["summary"].items():
        print(k, json.dumps(s))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

"""Table 3's hybrid with prediction under a leave-one-out model, replayed (issue 26).

For each Table 3 row (a record of ``run_compare.py`` and the kernel's result store), the
shipped H100 model's estimator (its card: same features, same hyperparameters, trained
by :meth:`gtune.loadpredict.models.ModelCard.load`, as ``gtune run`` does) is trained
on the dataset **without any row of that kernel** (every shape of it), its technique
set taken as ``gtune run`` takes it (:func:`gtune.loadpredict.policy.choose_techniques`:
the prediction when p >= the card's confidence, else the two most likely), and the
hybrid with prediction is reconstructed by running the hybrid spec on those techniques
(:func:`gtune.tuning.driver.run_tuning`, budget none, no confirmation round: the
``hybrid`` task of ``gtune.comparison.compare_kernel``) against the kernel's store
through :class:`gtune.measure.ReplayEvaluator`. A configuration the store lacks is
answered as not run (``unrecorded="fail"``: it costs an evaluation, never becomes the
best) and counted, never invented. The recorded hybrid's own technique set is replayed
the same way, as a check that the replay retraces the device run.

This is a replay of recorded measurements, not a new GPU run. The reconstructed winner
is ranked by its side-by-side re-measured time where the row re-measured that very
configuration (some strategy's winner), else by its search-time median; random's and
expert search's times are the row's (re-measured side by side), as ``table3.json``.

    python benchmarks/compare/loo_table3.py OUT \\
        --records benchmarks/results/compare/table3-scale/records.tar.gz \\
        --stores benchmarks/results/compare/table3-scale/stores.tar.xz \\
        --dataset benchmarks/results/compare/table3-loo/labels/nvidia-h100-80gb-hbm3-hybrid.csv \
        --spec benchmarks/compare/specs/hybrid-before-tile.yaml

writes ``OUT/loo.json`` and ``OUT/loo.md``. ``--spec`` names the hybrid spec the
records were tuned with: Table 3 at scale ran before the shipped hybrid gained its tile
steps, and a replay retraces a recorded search only with the spec that made it.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
import tarfile
import tempfile
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from run_compare import cell_time  # noqa: E402  (how table3.json ranks a strategy)

from gtune.api import as_kernel  # noqa: E402
from gtune.budget import Budget  # noqa: E402
from gtune.device import DeviceLimits  # noqa: E402
from gtune.exceptions import GtuneError, InputError  # noqa: E402
from gtune.kernel import TunableKernel, canonical_config  # noqa: E402
from gtune.loadpredict.dataset import Dataset  # noqa: E402
from gtune.loadpredict.models import ModelCard, shipped_model_dir  # noqa: E402
from gtune.loadpredict.policy import choose_techniques  # noqa: E402
from gtune.measure import ReplayEvaluator, Result, completed  # noqa: E402
from gtune.space import EnumeratedSpace, solve_space  # noqa: E402
from gtune.store import open_store  # noqa: E402
from gtune.tuning.driver import run_tuning  # noqa: E402
from gtune.tuning.session import TuningSession  # noqa: E402
from gtune.tuning.techniques import AUTO, TechniqueChoice, technique_of  # noqa: E402

DEVICE = ROOT / "benchmarks" / "replay" / "h100.device.json"
CARD = shipped_model_dir() / "nvidia-h100-80gb-hbm3-hybrid.model.json"
HEURISTIC = "hybrid"


# -------------------------------------------------------------------------------------
# Inputs


def unpack(source: Path, into: Path, suffix: str) -> dict[str, Path]:
    """``<stem>: path`` of the ``*suffix`` files of a folder or an archive."""
    if source.is_dir():
        found = sorted(source.rglob(f"*{suffix}"))
    else:
        into.mkdir(parents=True, exist_ok=True)
        with tarfile.open(source) as tar:
            tar.extractall(into, filter="data")
        found = sorted(into.rglob(f"*{suffix}"))
    return {p.name.removesuffix(suffix): p for p in found}


def store_results(path: Path, device: str) -> list[Result]:
    """The store's results for ``device`` under the kernel identity that finished the
    row (the last one written: a kernel resumed after its source changed has an older
    identity too, whose results that run was never served)."""
    store = open_store(path, readonly=True)
    try:
        rows = sorted(store.rows(device=device), key=lambda r: r.row_id)
    finally:
        store.close()
    if not rows:
        return []
    last = rows[-1].kernel_id
    return [r.result for r in rows if r.kernel_id == last]


def without_kernel(data: Dataset, kernel: str) -> Dataset:
    """The dataset without any row of ``kernel`` (every shape: ``kernel@size``)."""
    return Dataset([r for r in data.rows if r.kernel.split("@")[0] != kernel])


def loo_card(card: ModelCard, data: Dataset, kernel: str, folder: Path) -> ModelCard:
    """``card`` (same estimator, features, confidence) over ``data`` less ``kernel``."""
    folder.mkdir(parents=True, exist_ok=True)
    without_kernel(data, kernel).write_csv(folder / card.dataset)
    copy = ModelCard.read(card.path) if card.path else card
    copy.write(folder)  # sets copy.path: the estimator is trained from folder's dataset
    return copy


# -------------------------------------------------------------------------------------
# The replay


@dataclass(frozen=True)
class ChosenTechniques:
    """A technique policy that answers a choice made beforehand (the LOO model's)."""

    choice: TechniqueChoice
    name: str = AUTO

    def choose(self, kernel: TunableKernel, device: DeviceLimits | None) -> TechniqueChoice:
        return self.choice


@dataclass
class Replay:
    techniques: list[str]
    best_s: float | None
    best_config: dict[str, int] | None
    best_technique: str | None
    configs: int
    unrecorded: list[dict[str, int]]
    runs: list[dict[str, Any]] = field(default_factory=list)
    asked: set[str] = field(default_factory=set)  # canonical configs the search asked for
    # the best recorded time asked for up to the end of the step that asked for each
    # technique's first unrecorded configuration (the step's batch is fixed before it is
    # measured): until then the device run asks what the replay asks, and a search's
    # best never gets slower, so the device run's best is at most this
    bound_s: float | None = None

    def to_dict(self) -> dict[str, Any]:
        return {
            "techniques": self.techniques,
            "best_s": self.best_s,
            "best_config": self.best_config,
            "best_technique": self.best_technique,
            "configs": self.configs,
            "unrecorded": len(self.unrecorded),
            "unrecorded_configs": self.unrecorded[:20],
            "bound_s": self.bound_s,
            "runs": self.runs,
        }


def replay_hybrid(
    kernel: TunableKernel,
    device: DeviceLimits,
    results: Sequence[Result],
    techniques: Sequence[str],
    source: str = "store",
    space: EnumeratedSpace | None = None,
    spec: str | Path | None = None,
) -> Replay:
    """The hybrid spec on ``techniques`` (budget none, no confirmation), as
    ``compare_kernel``'s hybrid task, every configuration served by ``results``
    (``space``: the kernel's space on ``device``, solved once by the caller; ``spec``:
    another spec file in place of the shipped hybrid)."""
    made: list[ReplayEvaluator] = []
    # a store recorded before the kernel gained a parameter ran it at its default
    results = [completed(r, kernel.default_config() or {}) for r in results]

    def factory(k: TunableKernel, d: DeviceLimits) -> ReplayEvaluator:
        made.append(ReplayEvaluator(results, source=source, unrecorded="fail"))
        return made[-1]

    policy = ChosenTechniques(TechniqueChoice(tuple(techniques)))
    with TuningSession(kernel, device, evaluator_factory=factory, space=space) as session:
        report = run_tuning(
            session,
            strategy=HEURISTIC,
            spec=spec,
            technique=policy,
            budget=Budget.parse("none"),
            confirm_policy=None,
        )
    unrecorded = [c for e in made for c in e.unrecorded_calls]
    times = {canonical_config(r.config): r.objective for r in results}
    calls = [c for e in made for c in e.calls]
    batches = [
        [st.evaluated for st in run.outcome.steps] if run.outcome else [] for run in report.runs
    ]
    if sum(map(sum, batches)) == len(calls):
        start, bounds = 0, []
        for sizes in batches:
            bounds.append(before_first_miss(calls[start : start + sum(sizes)], times, sizes))
            start += sum(sizes)
    else:  # the steps do not account for the calls: the plain prefix, one batch each
        bounds = [before_first_miss(calls, times, [1] * len(calls))]
    runs = []
    for run in report.runs:
        out = run.outcome
        runs.append(
            {
                "technique": run.technique,
                "configs": out.evaluations if out else 0,
                "best_s": out.best_result.objective if out and out.best_result else None,
                "best_config": dict(out.best_config) if out and out.best_config else None,
                "steps": [
                    [s.step, s.round, s.candidates, s.evaluated, s.best_s, s.improved]
                    for s in (out.steps if out else [])
                ],
            }
        )
    best = report.best_s if report.best_s is not None and math.isfinite(report.best_s) else None
    where: str | None = next(
        (
            str(r.technique)
            for r in report.runs
            if r.outcome
            and r.outcome.best_config
            and dict(r.outcome.best_config) == report.best_config
        ),
        None,
    )
    return Replay(
        list(techniques),
        best,
        dict(report.best_config) if report.best_config else None,
        where,
        report.evaluations,
        unrecorded,
        runs,
        {canonical_config(c) for e in made for c in e.calls},
        min((b for b in bounds if b is not None), default=None),
    )


def before_first_miss(
    calls: Sequence[Mapping[str, int]], times: Mapping[str, float], batches: Sequence[int]
) -> float | None:
    """The best finite time of ``calls`` (in the order asked, in batches of ``batches``
    configurations: one step each) up to the end of the batch that holds the first
    configuration ``times`` (canonical config -> recorded objective) lacks."""
    best: float | None = None
    start = 0
    for size in batches:
        missed = False
        for c in calls[start : start + size]:
            t = times.get(canonical_config(c))
            if t is None:
                missed = True
            elif math.isfinite(t) and (best is None or t < best):
                best = t
        start += size
        if missed:
            break
    return best


def versus_expert(
    kernel: TunableKernel,
    results: Sequence[Result],
    hybrid: Replay,
    expert: Mapping[str, Any],
) -> dict[str, Any] | None:
    """Where the hybrid stops short of expert search's winner: that winner's technique,
    the parameters in which it differs from the hybrid's best, whether the hybrid's
    search ever asked for it, and its search-time median in the store."""
    theirs = expert.get("best_config")
    if not theirs or not hybrid.best_config:
        return None
    key = canonical_config(theirs)
    median = next((r.objective for r in results if canonical_config(r.config) == key), None)
    return {
        "expert_technique": technique_of(kernel, theirs),
        "hybrid_technique": technique_of(kernel, hybrid.best_config),
        "differs": {
            k: [hybrid.best_config.get(k), v]
            for k, v in theirs.items()
            if hybrid.best_config.get(k) != v
        },
        "asked_by_hybrid": key in hybrid.asked,
        "expert_best_search_s": median,
    }


# -------------------------------------------------------------------------------------
# Times and speedups, as table3.json


def remeasured(record: Mapping[str, Any]) -> dict[str, float]:
    """Configurations the row re-measured side by side: canonical config -> time."""
    out: dict[str, float] = {}
    for c in record["cells"]:
        v = c.get("remeasured_s")
        if c.get("best_config") and v is not None and math.isfinite(float(v)):
            out[canonical_config(c["best_config"])] = float(v)
    return out


def ranked_time(
    config: Mapping[str, int] | None, search_s: float | None, side_by_side: Mapping[str, float]
) -> tuple[float | None, str]:
    """The time the reconstructed winner is ranked by, and which time it is."""
    if config is None or search_s is None:
        return None, "none"
    key = canonical_config(config)
    if key in side_by_side:
        return side_by_side[key], "side by side"
    return search_s, "search-time median"


def geomean(values: Sequence[float | None]) -> float | None:
    logs = [math.log(v) for v in values if v is not None and math.isfinite(v) and v > 0]
    return math.exp(sum(logs) / len(logs)) if logs else None


def summarize(rows: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """Geometric-mean speedups over random and over expert, mean configurations, and
    issue 26's target (hybrid's speedup over random / expert's; configs share)."""
    out: dict[str, Any] = {"kernels": len(rows)}
    for who in ("old", "loo", "oracle", "expert"):
        cells = [r[who] for r in rows]
        out[who] = {
            "over_random": geomean([c["over_random"] for c in cells]),
            "over_expert": geomean([c["over_expert"] for c in cells]),
            "configs": sum(c["configs"] for c in cells) / max(1, len(cells)),
        }
    e = out["expert"]
    for who in ("old", "loo", "oracle"):
        s = out[who]
        s["ratio_to_expert"] = (
            s["over_random"] / e["over_random"] if s["over_random"] and e["over_random"] else None
        )
        s["configs_share"] = s["configs"] / e["configs"] if e["configs"] else None
    return out


# -------------------------------------------------------------------------------------
# One row


def prediction_of(choice: Any) -> str:
    if choice.probability is None:
        return "every technique"
    return f"{' or '.join(choice.techniques)} (p={choice.probability:.2f})"


def kernel_row(
    record: Mapping[str, Any],
    kernel: TunableKernel,
    device: DeviceLimits,
    results: Sequence[Result],
    card: ModelCard,
    space: EnumeratedSpace | None = None,
    spec: str | Path | None = None,
) -> dict[str, Any]:
    """The row's old and leave-one-out hybrids, replayed on ``results`` (``space``:
    the kernel's on ``device``, solved here when not given; ``spec``: the hybrid spec
    the row was recorded with, when it is not the shipped one)."""
    cells = {c["strategy"]: c for c in record["cells"]}
    t_random, t_expert = cell_time(cells["random"]), cell_time(cells["expert"])
    side = remeasured(record)
    old_techs = [r["technique"] for r in record["reports"]["hybrid"]["runs"]]
    if space is None:
        space = solve_space(kernel, device).space
    old_replay = replay_hybrid(kernel, device, results, old_techs, space=space, spec=spec)
    choice = choose_techniques(kernel, device, HEURISTIC, card=card)
    loo = replay_hybrid(kernel, device, results, choice.techniques, space=space, spec=spec)
    t_loo, kind = ranked_time(loo.best_config, loo.best_s, side)
    h = cells["hybrid"]

    def speed(t: float | None) -> dict[str, float | None]:
        ok = t is not None and math.isfinite(t) and t > 0
        return {
            "over_random": t_random / t if ok and t else None,
            "over_expert": t_expert / t if ok and t else None,
        }

    t_old = cell_time(h)
    return {
        "kernel": record["kernel"],
        "in_old_model_dataset": record.get("in_model_dataset"),
        "old": {
            "prediction": record.get("prediction", ""),
            "techniques": old_techs,
            "time_s": t_old,
            "time_kind": "side by side" if h.get("remeasured_s") else "search-time median",
            "search_best_s": h.get("best_s"),
            "configs": int(h["evaluations"]),
            "best_config": h.get("best_config"),
            **speed(t_old),
            "replay": {
                "best_s": old_replay.best_s,
                "configs": old_replay.configs,
                "unrecorded": len(old_replay.unrecorded),
                "retraced": old_replay.configs == int(h["evaluations"])
                and old_replay.best_s == h.get("best_s"),
            },
        },
        "loo": {
            "prediction": prediction_of(choice),
            "note": choice.note,
            "techniques": list(choice.techniques),
            "time_s": t_loo,
            "time_kind": kind,
            "same_as_old": list(choice.techniques) == old_techs,
            **speed(t_loo),
            **loo.to_dict(),
            "versus_expert": versus_expert(kernel, results, loo, cells["expert"]),
        },
        "oracle": {
            "time_s": cell_time(cells["oracle"]),
            "configs": int(cells["oracle"]["evaluations"]),
            "technique": cells["oracle"].get("technique"),
            "best_config": cells["oracle"].get("best_config"),
            "runs": record["reports"]["oracle"]["runs"],
            **speed(cell_time(cells["oracle"])),
        },
        "expert": {
            "time_s": t_expert,
            "configs": int(cells["expert"]["evaluations"]),
            "technique": cells["expert"].get("technique"),
            "best_config": cells["expert"].get("best_config"),
            **speed(t_expert),
        },
        "random": {"time_s": t_random, "configs": int(cells["random"]["evaluations"])},
    }


# -------------------------------------------------------------------------------------
# Tables


def _x(v: float | None) -> str:
    return "-" if v is None else f"{v:.3f}"


def _us(v: float | None) -> str:
    return "-" if v is None else f"{v * 1e6:.2f}"


def markdown(doc: Mapping[str, Any]) -> str:
    lines = [
        "# Table 3's hybrid with prediction under a leave-one-out H100 model (replayed)",
        "",
        "A replay of the measurements recorded by Table 3 at scale (one H100, 256³), not a "
        "new GPU run. LOO: the shipped estimator trained without any row of the kernel. "
        "Winners the row did not re-measure side by side are ranked by their search-time "
        "median (marked *).",
        "",
    ]
    for title, key in (
        ("every kernel", "summary"),
        ("kernels held out of the old model's dataset", "held_out"),
    ):
        s = doc[key]
        lines += [
            f"## {title} ({s['kernels']})",
            "",
            "| strategy | speedup over random | over expert | configs | x expert's "
            "speedup | configs / expert's |",
            "|---|---:|---:|---:|---:|---:|",
        ]
        for who, label in (
            ("old", "hybrid, old prediction (recorded)"),
            ("loo", "hybrid, LOO prediction (replayed)"),
            ("oracle", "hybrid oracle"),
            ("expert", "expert search"),
        ):
            c = s[who]
            lines.append(
                f"| {label} | {_x(c['over_random'])} | {_x(c['over_expert'])} | "
                f"{c['configs']:.1f} | {_x(c.get('ratio_to_expert'))} | "
                f"{(c.get('configs_share') or 1.0):.1%} |"
            )
        lines.append("")
    lines += [
        "## per kernel",
        "",
        "Times in µs. old: the recorded hybrid (re-measured side by side); replay: its "
        "techniques replayed on the store (search-time best, configs: must equal the "
        "record's). LOO: the replayed hybrid on the LOO model's techniques.",
        "",
        "| kernel | old model data | old prediction | old µs (×rand, ×exp, configs) | "
        "replay of old | LOO prediction | LOO µs (×rand, ×exp, configs) | LOO search best "
        "µs | unrecorded | oracle µs (technique) | expert µs (technique) |",
        "|---|---|---|---:|---|---|---:|---:|---:|---:|---:|",
    ]
    for r in doc["rows"]:
        o, lo = r["old"], r["loo"]
        star = "" if lo["time_kind"] == "side by side" else "*"
        rep = o["replay"]
        lines.append(
            f"| {r['kernel']} | {'in' if r['in_old_model_dataset'] else 'held out'} | "
            f"{o['prediction']} | {_us(o['time_s'])} ({_x(o['over_random'])}, "
            f"{_x(o['over_expert'])}, {o['configs']}) | "
            f"{'same' if rep['retraced'] else 'DIFFERS'} ({_us(rep['best_s'])}, "
            f"{rep['configs']}) | {lo['prediction']} | {_us(lo['time_s'])}{star} "
            f"({_x(lo['over_random'])}, {_x(lo['over_expert'])}, {lo['configs']}) | "
            f"{_us(lo['best_s'])} | {lo['unrecorded']} | "
            f"{_us(r['oracle']['time_s'])} ({r['oracle']['technique']}) | "
            f"{_us(r['expert']['time_s'])} ({r['expert']['technique']}) |"
        )
    return "\n".join(lines) + "\n"


# -------------------------------------------------------------------------------------


def run(
    records: Mapping[str, Path],
    stores: Mapping[str, Path],
    data: Dataset,
    card: ModelCard,
    device: DeviceLimits,
    kernels_dir: Path,
    work: Path,
    only: Sequence[str] = (),
    spec: str | Path | None = None,
) -> dict[str, Any]:
    """Every record with a store: its row (``kernels_dir`` holds ``<kernel>.cl``;
    ``spec``: the hybrid spec the records were made with, if not the shipped one)."""
    unknown = sorted(set(only) - set(records))
    if unknown:
        raise InputError(f"no record of {', '.join(unknown)}", source="--kernel")
    rows = []
    for name in sorted(records):
        if only and name not in only:
            continue
        record = json.loads(records[name].read_text())
        if name not in stores:
            raise InputError(f"no store {name}.db among the stores", source=records[name])
        kernel = as_kernel(str(kernels_dir / f"{name}.cl"), None)
        results = store_results(stores[name], record["device_identity"])
        held = loo_card(card, data, name, work / "models" / name)
        rows.append(kernel_row(record, kernel, device, results, held, spec=spec))
        r = rows[-1]
        print(
            f"{name}: old {r['old']['prediction']} {_x(r['old']['over_expert'])} x expert; "
            f"LOO {r['loo']['prediction']} {_x(r['loo']['over_expert'])} "
            f"({r['loo']['time_kind']}), replay of old "
            f"{'retraced' if r['old']['replay']['retraced'] else 'DIFFERS'}",
            flush=True,
        )
    return {
        "rows": rows,
        "summary": summarize(rows),
        "held_out": summarize([r for r in rows if r["in_old_model_dataset"] is False]),
        "changed_prediction": summarize([r for r in rows if not r["loo"]["same_as_old"]]),
    }


def _read_inputs(args: argparse.Namespace) -> tuple[DeviceLimits, ModelCard, Dataset]:
    for path in (args.records, args.stores, args.dataset, args.card, args.device):
        if not path.exists():
            raise InputError("no such file or folder", source=path)
    try:
        device = DeviceLimits.from_dict(json.loads(args.device.read_text()))
    except (OSError, ValueError, TypeError) as exc:
        raise InputError(f"cannot read the device's limits: {exc}", source=args.device) from None
    return device, ModelCard.read(args.card), Dataset.read_csv(args.dataset)


def replay_all(args: argparse.Namespace) -> dict[str, Any]:
    """Every row of ``args.records``: unpack, render the kernels, replay."""
    from gtune.stencils.generate import generate, parse_size, suite

    device, card, data = _read_inputs(args)
    with tempfile.TemporaryDirectory(prefix="loo-table3-") as tmp:
        work = Path(tmp)
        try:
            records = unpack(args.records, work / "records", ".json")
            stores = unpack(args.stores, work / "stores", ".db")
            sizes = {json.loads(p.read_text()).get("size") for p in records.values()}
        except (OSError, tarfile.TarError, ValueError) as exc:
            raise InputError(f"cannot read the records or stores: {exc}") from None
        if not records:
            raise InputError("no record (<kernel>.json) found", source=args.records)
        if len(sizes) != 1 or None in sizes:
            raise InputError(
                f"records of several sizes {sorted(map(str, sizes))}", source=args.records
            )
        generate(
            [k for k in suite("garvey104") if k.name in set(records)],
            work / "kernels",
            size=parse_size(str(sizes.pop())),
        )
        rows = run(
            records, stores, data, card, device, work / "kernels", work, args.kernel, args.spec
        )
    return {"card": card.to_dict(), **rows}


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("out", type=Path)
    ap.add_argument("--records", type=Path, required=True, help="records.tar.gz or a folder")
    ap.add_argument("--stores", type=Path, required=True, help="stores.tar.xz or a folder")
    ap.add_argument("--dataset", type=Path, required=True, help="the H100 dataset CSV")
    ap.add_argument("--card", type=Path, default=CARD, help="the model card (estimator)")
    ap.add_argument("--device", type=Path, default=DEVICE, help="the H100's limits (JSON)")
    ap.add_argument("--kernel", action="append", default=[], help="only these rows")
    ap.add_argument(
        "--spec",
        type=Path,
        default=None,
        help="the hybrid spec the records were made with, when not the shipped one "
        "(Table 3 at scale: benchmarks/compare/specs/hybrid-before-tile.yaml)",
    )
    args = ap.parse_args(argv)
    try:
        doc = replay_all(args)
    except GtuneError as exc:
        print(f"error: {exc.render()}", file=sys.stderr)
        return 2
    doc = {
        "command": " ".join(["python", *sys.argv]) if argv is None else None,
        "what": "replay of recorded measurements (no GPU run); see loo.md",
        "dataset": str(args.dataset),
        "spec": str(args.spec) if args.spec else "hybrid (shipped)",
        **doc,
    }
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "loo.json").write_text(json.dumps(doc, indent=1) + "\n")
    (args.out / "loo.md").write_text(markdown(doc))
    s = doc["summary"]
    for who in ("old", "loo", "oracle"):
        print(
            f"{who}: {_x(s[who]['ratio_to_expert'])} x expert's speedup over random at "
            f"{(s[who]['configs_share'] or 0):.1%} of its configurations"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

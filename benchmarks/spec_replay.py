"""Heuristic specs replayed on recorded H100 measurements: what a small budget reaches.

    python3 benchmarks/spec_replay.py OUT [--specs hybrid,benchmarks/compare/specs/X.yaml]
        [--budgets 60,none] [--dims 2 3] [--cases jacobi2d ...] [--reach 0.97]

Each case is one kernel at one size under one data-loading technique with its recorded
H100 measurements (a gzip'd gtune store committed under ``benchmarks/results/``). Its
space is solved here for the H100's limits (``replay/h100.device.json``), as
``gtune run`` would there, and every spec is run on it through the driver's own loop
(:func:`gtune.heuristics.search.drive`, the kernel's default measured first and the
search started from it, as ``gtune run`` does), under each budget (``none``: the spec
runs until it stops by itself, the default of ``gtune run``).

Honest replay: a configuration the search asks for that was never measured on the
H100 cannot be answered. It is answered as *not run* (``ReplayEvaluator(unrecorded=
"fail")``): it costs one evaluation of the budget, as it would on the device, but can
never become the best. So a reach is a lower bound of what the GPU would give along the
same path (an unrecorded configuration might have been faster and led elsewhere), and
every row says how many configurations the search asked for were recorded
(*coverage*). The reference, *best recorded*, is the fastest configuration of the
technique in the whole recording (every search ever run into that store), not the
optimum of the space.

Writes OUT/spec_replay.json (every search: best, evaluations, unrecorded, trace of
step sizes) and OUT/spec_replay.md (the table).
"""

from __future__ import annotations

import argparse
import dataclasses
import gzip
import json
import math
import shutil
import statistics
import sys
import tempfile
import time
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from gtune.budget import Budget
from gtune.description import load_kernel
from gtune.device import DeviceLimits
from gtune.heuristics import SearchProblem, get_strategy
from gtune.heuristics.search import Seeded, drive, nearest_config
from gtune.kernel import TunableKernel
from gtune.measure import ReplayEvaluator, Result
from gtune.space import EnumeratedSpace, solve_space
from gtune.space.build import technique_space
from gtune.store import open_store
from gtune.store.ranking import confirmation

ROOT = Path(__file__).resolve().parents[1]
HERE = Path(__file__).resolve().parent
DEVICE = HERE / "replay" / "h100.device.json"
RESULTS = ROOT / "benchmarks" / "results"
SCALE = RESULTS / "predict" / "h100-scale" / "labels.db.gz"
LIFT = RESULTS / "lift" / "budget300-x2"
MERGE = RESULTS / "onestep" / "h100-merge-shape" / "h100.db.gz"
RIM = RESULTS / "onestep" / "h100-sep3d" / "onestep.db.gz"


@dataclass(frozen=True)
class Case:
    """One kernel, one size, one technique, and where its H100 measurements are."""

    name: str
    dims: int
    store: Path
    kernel: str  # kernel name or identity prefix in the store
    source: str  # "suite:NAME" (rendered as gtune train does) or a definition/kernel path
    sizes: Mapping[str, int]
    technique: str
    note: str = ""

    @property
    def label(self) -> str:
        size = "x".join(str(v) for v in self.sizes.values())
        return f"{self.name} {size} [{self.technique}]"


# The suite kernels of benchmarks/results/predict/h100-scale (gtune train on the H100,
# hybrid, 100 configurations per technique). Their store identities were matched to the
# names by each kernel's best time in the labelled dataset beside the store.
_SCALE_2D = {"jacobi2d": "3ac461f98669216b5d5e", "blur5": "cc4cfd0c9c0c52c0fc4e"}
_SCALE_3D = {
    "heat3d": "3f1e04ec31a478e24fce",
    "box27": "6ef56a74a6a8367e801d",
    "laplacian4": "8875ff393a9d480d42dc",
    "star_3d_xyz_r1": "ff0bc3b89a35b900bfb4",
    "dense_3d_xyz_r1": "46ec80921b9d0194a521",
    "nocorners_3d_xyz_r1": "4374f0cde348e38f06e7",
    "nocorners_3d_xyz_r2": "2d2b507ba98d07a2752f",
    "diamond_3d_xyz_r2": "d8989dbf98ad8f52a351",
    "thumbtack_3d_x_r1": "1fedb172d192f682bd55",
    "thumbtack_3d_z_r2": "7fd3b7420a920908e8cc",
    "star_2d_xy_r1": "3545d30c673dfa8027c3",
    "dense_2d_xy_r1": "2ea056ad958df74ceb5b",
    "diamond_2d_xz_r3": "1b602024930e4256974e",
    "nocorners_2d_xy_r2": "3dff1d16a9d447bd346a",
    "dense_1d_x_r1": "92e141da2377778a4b96",
    "dense_1d_z_r1": "5b1ba02058ae8c66cb8e",
}


def default_cases() -> list[Case]:
    cases: list[Case] = []
    for name, kid in _SCALE_2D.items():
        for tech in ("global", "vec"):
            cases.append(Case(name, 2, SCALE, kid, f"suite:{name}", {"NX": 4096, "NY": 4096}, tech))
    s3 = {"NX": 256, "NY": 256, "NZ": 256}
    for name, kid in _SCALE_3D.items():
        for tech in ("global", "vec", "stream"):
            cases.append(Case(name, 3, SCALE, kid, f"suite:{name}", s3, tech))
    return lift_cases() + onestep_cases() + rim_cases() + cases


def rim_cases() -> list[Case]:
    """heat3d and box27 at 512³ under the vec technique of
    benchmarks/results/onestep/h100-sep3d: gtune run's defaults on the H100 (the predictor
    chose vec), once the template had RIM (whole rim vectors), BY/BZ (rows merged in y
    and z) and, for separable stencils, SEP (weights axis by axis), and the hybrid spec
    its rim step tuning them with the vector width."""
    s3 = {"NX": 512, "NY": 512, "NZ": 512}
    return [
        Case(n, 3, RIM, f"{n}:stencil", f"stencils/{n}.yaml", s3, "vec", "rim")
        for n in ("heat3d", "box27")
    ]


def onestep_cases() -> list[Case]:
    """heat3d and laplacian4 at 512³ (global, the load predictor's choice) of
    benchmarks/results/onestep/h100-merge-shape: benchmarks/onestep.py on the H100 with
    the hybrid spec before its merge shape step and with it, one store (the run before
    the step last, so its times answer the configurations both runs measured)."""
    s3 = {"NX": 512, "NY": 512, "NZ": 512}
    return [
        Case(name, 3, MERGE, f"{name}:stencil", f"stencils/{name}.yaml", s3, "global", "onestep")
        for name in ("heat3d", "laplacian4")
    ]


def lift_cases() -> list[Case]:
    """The lifted corpus kernels of benchmarks/results/lift/budget300-x2 (lift_corpus.py
    on the H100, 300 configurations, store kept), under each technique searched there."""
    out: list[Case] = []
    for dims, name, kernel, techniques in LIFTED:
        folder = LIFT / f"{dims}d"
        definition = folder / "definitions" / f"{name}.stencil.yaml"
        sizes = {"NX": 8192, "NY": 8192} if dims == 2 else {"NX": 512, "NY": 512, "NZ": 512}
        for tech in techniques:
            out.append(
                Case(
                    name,
                    dims,
                    folder / "lift.db.gz",
                    kernel,
                    str(definition.relative_to(ROOT)),
                    sizes,
                    tech,
                    "lifted",
                )
            )
    return out


# (dims, definition, kernel name in the store, techniques the run searched)
LIFTED = [
    (2, "jacobi2d", "jacobi2d:jacobi2d_step", ("global",)),
    (2, "conv2d", "conv2d", ("global",)),
    (2, "blur_clamp", "blur_clamp", ("global",)),
    (3, "star7", "star7", ("global", "stream")),
    (3, "hotspot3d", "hotspot3d", ("global", "stream")),
    (3, "heat_alpha", "heat_alpha", ("global", "stream")),
    (3, "box27", "box27", ("stream",)),
]


# ---------------------------------------------------------------------------------


@dataclass
class Prepared:
    case: Case
    kernel: TunableKernel
    space: EnumeratedSpace
    results: list[Result]
    best_recorded: Result | None
    recorded_in_space: int
    notes: list[str] = field(default_factory=list)


def unpacked(path: Path, tmp: Path) -> Path:
    where = path.relative_to(RESULTS) if path.is_relative_to(RESULTS) else Path(path.name)
    out = tmp / "_".join(where.with_suffix("").parts)
    if not out.exists():
        with gzip.open(path, "rb") as src, out.open("wb") as dst:
            shutil.copyfileobj(src, dst)
    return out


def kernel_of(case: Case, tmp: Path) -> TunableKernel:
    if case.source.startswith("suite:"):
        from gtune.training.train import suite_kernels

        name = case.source.removeprefix("suite:")
        # rendered once; the size is the case's (a kernel's source does not depend on it)
        items = suite_kernels(tmp / "suite", [(64, 64, 64)], names=[name])
        item = next(i for i in items if i.name == name)
        return load_kernel(item.path, dict(case.sizes))
    return load_kernel(ROOT / case.source, dict(case.sizes))


def recorded(
    case: Case, tmp: Path, params: Sequence[str], default: Mapping[str, int] | None = None
) -> list[Result]:
    """The case's recorded results in the space's parameters. A result recorded before the
    space gained a parameter (2D stores from before 2D streaming lack STREAM and ZC) takes
    the kernel's default value for it: the value the older space had implicitly; one
    that does not fit the technique's space is then left out as invalid by the caller."""
    store = open_store(unpacked(case.store, tmp), readonly=True)
    wanted = set(params)
    results: list[Result] = []
    try:
        for r in store.rows(kernel=case.kernel):
            if dict(r.problem) != dict(case.sizes) or confirmation(r) is not None:
                continue  # another size, or a confirmation round's re-measurement
            config = dict(r.result.config)
            missing = wanted - set(config)
            if missing and default is not None and missing <= set(default):
                config.update({k: default[k] for k in missing})
                results.append(dataclasses.replace(r.result, config=config))
            elif set(config) == wanted:
                results.append(r.result)
    finally:
        store.close()
    return results


def prepare(case: Case, device: DeviceLimits, tmp: Path) -> Prepared:
    kernel = kernel_of(case, tmp)
    space = technique_space(solve_space(kernel, device).space, kernel, case.technique)
    results = recorded(case, tmp, space.parameters, kernel.default_config())
    inside = [r for r in results if space.is_valid(dict(r.config)) is None]
    ok = [r for r in inside if r.ok]
    best = min(ok, key=lambda r: r.objective) if ok else None
    return Prepared(case, kernel, space, results, best, len(inside))


@dataclass
class Replayed:
    spec: str
    budget: str
    best: Result | None
    evaluations: int
    unrecorded: int
    within_at: int | None  # evaluations until the best was within --reach of best recorded
    steps: list[tuple[str, int, int, int]]  # (step, round, candidates, evaluated)
    stop: str

    @property
    def coverage(self) -> float:
        return 1.0 - self.unrecorded / self.evaluations if self.evaluations else 1.0


def replay(p: Prepared, spec: str, budget: Budget | None, reach: float) -> Replayed:
    evaluator = ReplayEvaluator(p.results, source=str(p.case.store), unrecorded="fail")
    strategy = get_strategy("grouped", {"spec": spec})
    options = strategy.configure(None)
    problem = SearchProblem.from_kernel(p.kernel)
    searcher: Any = strategy.searcher(p.space, problem, options)
    default = p.kernel.default_config()
    start = nearest_config(p.space, default) if default else None
    if start is not None:
        searcher = Seeded(searcher, start)
    outcome = drive(searcher, evaluator, strategy=spec, budget=budget, space=p.space)
    target = p.best_recorded.objective / reach if p.best_recorded else math.inf
    within = None
    best = math.inf
    for e in outcome.trace:
        best = min(best, e.result.objective)
        if best <= target:
            within = e.index + 1
            break
    return Replayed(
        spec=spec,
        budget="none" if budget is None else str(budget.evaluations),
        best=outcome.best_result,
        evaluations=outcome.evaluations,
        unrecorded=len(evaluator.unrecorded_calls),
        within_at=within,
        steps=[(s.step, s.round, s.candidates, s.evaluated) for s in outcome.steps],
        stop=outcome.stop_reason,
    )


def spec_label(spec: str) -> str:
    return Path(spec).stem if spec.endswith(".yaml") else spec


def reach_of(p: Prepared, r: Replayed) -> float | None:
    if p.best_recorded is None or r.best is None:
        return None
    return p.best_recorded.objective / r.best.objective


def geomean(values: Sequence[float]) -> float | None:
    vals = [v for v in values if v > 0]
    return math.exp(statistics.fmean(math.log(v) for v in vals)) if vals else None


def table(
    prepared: Sequence[Prepared],
    runs: Mapping[str, Sequence[Replayed]],
    specs: Sequence[str],
    budgets: Sequence[str],
    reach: float,
) -> Iterator[str]:
    cols = [(spec_label(s), b) for b in budgets for s in specs]
    yield (
        "| kernel | dims | recorded | best recorded | "
        + " | ".join(f"{s} @{b}" for s, b in cols)
        + " |"
    )
    yield "| --- | --- | --- | --- | " + " | ".join("---" for _ in cols) + " |"
    for p in prepared:
        cells = []
        for s, b in cols:
            r = next(x for x in runs[p.case.label] if spec_label(x.spec) == s and x.budget == b)
            v = reach_of(p, r)
            shown = "–" if v is None else f"{100 * v:.1f} %"
            cells.append(f"{shown} ({r.evaluations}, {100 * r.coverage:.0f} %)")
        best = p.best_recorded
        yield (
            f"| {p.case.label} | {p.case.dims} | {p.recorded_in_space} | "
            + ("–" if best is None else f"{best.objective * 1e6:.1f} µs")
            + " | "
            + " | ".join(cells)
            + " |"
        )
    yield ""
    yield (
        "Each cell: the replayed search's best as a fraction of the best recorded (time of "
        "best recorded / time found), then (configurations measured, share of them recorded)."
    )
    yield ""
    yield (
        f"| dims | technique | spec | budget | geometric mean reach | within {reach:.0%} "
        "| worst | coverage |"
    )
    yield "| --- | --- | --- | --- | --- | --- | --- | --- |"
    groups = sorted({(p.case.dims, p.case.technique) for p in prepared})
    for dims, tech in groups:
        for b in budgets:
            for s in specs:
                vals = []
                asked = unrecorded = 0
                for p in prepared:
                    if (p.case.dims, p.case.technique) != (dims, tech):
                        continue
                    r = next(
                        x
                        for x in runs[p.case.label]
                        if spec_label(x.spec) == spec_label(s) and x.budget == b
                    )
                    v = reach_of(p, r)
                    vals.append(0.0 if v is None else v)
                    asked += r.evaluations
                    unrecorded += r.unrecorded
                g = geomean(vals)
                ok = sum(1 for v in vals if v >= reach)
                cover = 1.0 - unrecorded / asked if asked else 1.0
                yield (
                    f"| {dims}D | {tech} | {spec_label(s)} | {b} | "
                    + ("–" if g is None else f"{100 * g:.1f} %")
                    + f" | {ok} of {len(vals)} | {100 * min(vals):.1f} % | {100 * cover:.0f} % |"
                )


def export(cases: Sequence[Case], device: DeviceLimits, label: str, path: Path) -> int:
    """One case as a self-contained recording for the replay tests."""
    case = next((c for c in cases if c.label == label), None)
    if case is None:
        print(f"no case {label!r}; cases: {', '.join(c.label for c in cases)}")
        return 2
    with tempfile.TemporaryDirectory(prefix="gtune-replay-") as tmp_name:
        p = prepare(case, device, Path(tmp_name))
    params = list(p.space.parameters)
    rows = [[int(c[q]) for q in params] for c in p.space.enumerate()]
    results = [
        {"config": dict(r.config), "status": r.status.value, "times_s": list(r.times_s)}
        for r in p.results
        if p.space.is_valid(dict(r.config)) is None
    ]
    data: dict[str, Any] = {
        "what": (
            f"{case.label}: H100 measurements from {case.store.relative_to(ROOT)} "
            f"(kernel {case.kernel}) and the valid configurations of the {case.technique} "
            f"technique on the H100's limits ({DEVICE.relative_to(ROOT)}); written by "
            f"benchmarks/spec_replay.py --export"
        ),
        "kernel": {"source": case.source, "sizes": dict(case.sizes), "dims": case.dims},
        "device": device.name,
        "technique": case.technique,
        "default": p.kernel.default_config(),
        "space": {"parameters": params, "rows": rows},
        "results": results,
    }
    path.write_text(json.dumps(data, separators=(",", ":")) + "\n")
    print(f"{path}: {len(rows)} configurations, {len(results)} results")
    return 0


def main() -> int:
    ap = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    ap.add_argument("out", type=Path)
    ap.add_argument("--specs", default="hybrid", help="comma-separated spec names or paths")
    ap.add_argument("--budgets", default="60,none", help="evaluations per search, or none")
    ap.add_argument("--dims", type=int, nargs="*", default=[2, 3])
    ap.add_argument("--cases", nargs="*", default=[], help="kernel names (default: all)")
    ap.add_argument("--reach", type=float, default=0.97, help="'within' threshold")
    ap.add_argument(
        "--export",
        nargs=2,
        metavar=("LABEL", "JSON"),
        help="write one case (its label as printed) as a test recording: the space's valid "
        "configurations, the kernel's default and every recorded result; then stop",
    )
    args = ap.parse_args()
    specs = [s.strip() for s in args.specs.split(",") if s.strip()]
    budgets = [b.strip() for b in args.budgets.split(",") if b.strip()]
    device = DeviceLimits.from_dict(json.loads(DEVICE.read_text()))
    cases = [
        c
        for c in default_cases()
        if c.dims in args.dims and (not args.cases or c.name in args.cases)
    ]
    if args.export:
        return export(cases, device, args.export[0], Path(args.export[1]))
    args.out.mkdir(parents=True, exist_ok=True)
    prepared: list[Prepared] = []
    runs: dict[str, list[Replayed]] = {}
    started = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="gtune-replay-") as tmp_name:
        tmp = Path(tmp_name)
        for case in cases:
            p = prepare(case, device, tmp)
            if p.best_recorded is None:
                print(f"{case.label}: nothing recorded in this technique's space; left out")
                continue
            prepared.append(p)
            runs[case.label] = []
            for spec in specs:
                for b in budgets:
                    budget = None if b == "none" else Budget(evaluations=int(b))
                    r = replay(p, spec, budget, args.reach)
                    runs[case.label].append(r)
                    v = reach_of(p, r)
                    print(
                        f"{case.label}: {spec_label(spec)} @{b}: "
                        + ("–" if v is None else f"{100 * v:.1f} %")
                        + f" of best recorded ({r.evaluations} measured, "
                        f"{r.unrecorded} unrecorded; within {args.reach:.0%} after "
                        f"{r.within_at})",
                        flush=True,
                    )
    lines = [
        "# Heuristic specs replayed on recorded H100 measurements",
        "",
        f"`python3 benchmarks/spec_replay.py {' '.join(sys.argv[1:])}` "
        f"({time.monotonic() - started:.0f} s, no device: every time is a recorded one).",
        "",
        *table(prepared, runs, specs, budgets, args.reach),
    ]
    (args.out / "spec_replay.md").write_text("\n".join(lines) + "\n")
    data = {
        "specs": specs,
        "budgets": budgets,
        "reach": args.reach,
        "cases": [
            {
                "label": p.case.label,
                "dims": p.case.dims,
                "store": str(p.case.store.relative_to(ROOT)),
                "kernel": p.case.kernel,
                "technique": p.case.technique,
                "recorded": p.recorded_in_space,
                "space": p.space.size(),
                "best_recorded": {
                    "config": dict(p.best_recorded.config),
                    "s": p.best_recorded.objective,
                }
                if p.best_recorded
                else None,
                "runs": [
                    {
                        "spec": r.spec,
                        "budget": r.budget,
                        "best": {"config": dict(r.best.config), "s": r.best.objective}
                        if r.best
                        else None,
                        "reach": reach_of(p, r),
                        "evaluations": r.evaluations,
                        "unrecorded": r.unrecorded,
                        "within_at": r.within_at,
                        "stop": r.stop,
                        "steps": r.steps,
                    }
                    for r in runs[p.case.label]
                ],
            }
            for p in prepared
        ],
    }
    (args.out / "spec_replay.json").write_text(json.dumps(data, indent=1) + "\n")
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

"""Collecting training data and fitting a model for one device and heuristic.

For each kernel (and problem size) the heuristic runs once per data-loading technique;
each technique's best time goes into a row, labelled with the technique that won. Every
configuration lands in the result store first, so an interrupted collection (a time
limit, Ctrl-C, a lost machine) resumes where it stopped: a second call re-reads what is
stored and measures only what is new. Collection can be split into pieces by
``max_seconds``; the dataset CSV grows with every finished kernel.
"""

from __future__ import annotations

import datetime as _dt
import math
import re
import threading
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from gtune.api import tune
from gtune.budget import Budget
from gtune.description import load_kernel
from gtune.device import DeviceLimits
from gtune.exceptions import InputError
from gtune.kernel import TunableKernel
from gtune.loadpredict.dataset import (
    IDENTITY_LEN,
    Dataset,
    TrainingRow,
    close_call,
    deepened_row,
    row_from_runs,
)
from gtune.loadpredict.features import DeviceTraits, StencilTraits, traits_of
from gtune.loadpredict.models import ModelCard, device_card, new_forest
from gtune.measure.pool import reusing_workers
from gtune.store import ResultStore
from gtune.training.validation import DECISIVE_MARGIN, CrossValidation, leave_one_out
from gtune.tuning import ALL, TuningReport
from gtune.tuning.events import CancelToken
from gtune.tuning.techniques import OracleTechniquePolicy

if TYPE_CHECKING:
    from gtune.loadpredict.model import TechniqueForest


def _sklearn_version() -> str:
    from gtune.loadpredict.model import sklearn_version  # scikit-learn, on first use

    return sklearn_version()


@dataclass(frozen=True)
class TrainingKernel:
    """One kernel at one problem size to label."""

    name: str
    path: Path
    sizes: dict[str, int]


@dataclass
class TrainingRun:
    """What :func:`collect` did."""

    dataset: Dataset
    done: list[str] = field(default_factory=list)  # labelled now (or found labelled)
    left: list[str] = field(default_factory=list)  # not reached within the time limit
    skipped: list[tuple[str, str]] = field(default_factory=list)  # (kernel, why)
    deepened: list[str] = field(default_factory=list)  # close calls searched deeper now
    # rows labelled again: their kernel changed since (``relabel_changed``)
    relabelled: list[str] = field(default_factory=list)
    measured: int = 0  # configurations measured now
    time: dict[str, float] = field(default_factory=dict)  # where the time went, summed

    def add_time(self, breakdown: Mapping[str, float], measured: int) -> None:
        """One search's time breakdown (``TimeBreakdown.to_dict()``) into the totals."""
        self.measured += measured
        for key, value in breakdown.items():
            self.time[key] = self.time.get(key, 0.0) + float(value or 0.0)

    @property
    def complete(self) -> bool:
        return not self.left


Progress = Callable[[int, int, TrainingKernel, TrainingRow | None], None]


@reusing_workers  # one measure worker and one set of compile workers for every kernel
def labelable_kernel(
    item: TrainingKernel, techniques: Sequence[str]
) -> tuple[TunableKernel, StencilTraits, list[str]] | str:
    """``item`` loaded, its stencil traits and the techniques a label is chosen among
    (``techniques``, or all of the kernel's), or why it cannot be labelled."""
    kernel = load_kernel(item.path, item.sizes)
    try:
        traits = traits_of(kernel)
    except InputError as exc:
        return exc.message
    searched = [t for t in kernel.techniques if not techniques or t in techniques]
    if len(searched) < 2:
        return "fewer than two data-loading techniques to search"
    return kernel, traits, searched


def model_name(device_name: str, heuristic: str) -> str:
    """A model's default name (and its dataset's, ``NAME.csv``): the device's name in
    lower case, runs of other characters as one ``-``, at most 40 characters, then the
    heuristic."""
    slug = "-".join(filter(None, re.split(r"[^a-z0-9]+", device_name.lower())))[:40]
    return f"{slug}-{heuristic}"


def labelled(dataset: Dataset, device: str, heuristic: str) -> dict[str, TrainingRow]:
    """The rows of ``dataset`` for ``device`` (identity) and ``heuristic``, by kernel."""
    return {r.kernel: r for r in dataset.rows if r.device == device and r.heuristic == heuristic}


def same_kernel(row: TrainingRow, kernel: TunableKernel) -> bool:
    """Whether ``row`` was labelled on ``kernel`` as it is now (same identity: the
    template, the generator, the description and size unchanged since)."""
    return bool(row.identity) and row.identity == kernel.identity()[:IDENTITY_LEN]


def needs_row(
    item: TrainingKernel,
    old: TrainingRow | None,
    techniques: Sequence[str],
    relabel_changed: bool,
    run: TrainingRun,
) -> tuple[TunableKernel, StencilTraits, list[str]] | None:
    """``item`` loaded (:func:`labelable_kernel`) when it needs a row now: it has none
    (``old``), or, with ``relabel_changed``, one of another version of it
    (:func:`same_kernel`); else None, and ``run`` says so (done: its row stands;
    skipped: it cannot be labelled)."""
    if old is not None and not relabel_changed:
        run.done.append(item.name)
        return None
    labelable = labelable_kernel(item, techniques)
    if isinstance(labelable, str):
        if old is not None:  # its row stays
            run.done.append(item.name)
        else:
            run.skipped.append((item.name, labelable))
        return None
    if old is not None and same_kernel(old, labelable[0]):
        run.done.append(item.name)
        return None
    return labelable


def cheapest_first(
    kernels: Sequence[TrainingKernel], techniques: Sequence[str], skip: Callable[[str], bool]
) -> list[TrainingKernel]:
    """``kernels`` with the cheapest to label first (each technique's expected seconds
    per configuration on its stencil, :func:`gtune.campaign.schedule.seconds_per_config`,
    summed over the techniques searched); those ``skip`` names (labelled already) and
    those that cannot be labelled come first, where they cost nothing."""
    from gtune.campaign.schedule import seconds_per_config

    def cost(item: TrainingKernel) -> float:
        if skip(item.name):
            return -1.0
        try:
            labelable = labelable_kernel(item, techniques)
        except InputError:
            return -1.0  # the labelling loop reports it
        if isinstance(labelable, str):
            return -1.0
        _, traits, searched = labelable
        return sum(seconds_per_config(t, traits) for t in searched)

    costs = {id(item): cost(item) for item in kernels}
    return sorted(kernels, key=lambda item: costs[id(item)])


def collect(
    kernels: Sequence[TrainingKernel],
    device: DeviceLimits,
    *,
    heuristic: str,
    store: ResultStore,
    dataset_path: Path,
    budget: Budget | None = None,
    max_seconds: float | None = None,
    compile_workers: int | None = None,
    progress: Progress | None = None,
    techniques: Sequence[str] = (),
    deepen: Deepen | None = None,
    order: str = "longest",
    relabel_changed: bool = False,
) -> TrainingRun:
    """Label ``kernels`` on ``device``; append each row to ``dataset_path`` as it is made.

    ``relabel_changed``: a kernel with a row is labelled again when the row is of
    another version of it (:func:`same_kernel`: its identity differs, or the row has
    none); the new row replaces the old.

    ``order``: ``"cheapest"`` labels the cheapest kernels first (:func:`cheapest_first`:
    the most rows before ``max_seconds``); otherwise in the order given.

    ``techniques``: search only these (default: every technique of each kernel); the
    others are never labels, and their times in the dataset are missing. ``deepen``:
    once every kernel is labelled, the close calls among them are searched deeper
    (:class:`Deepen`), rows labelled earlier too.
    """
    dataset = Dataset.read_csv(dataset_path) if dataset_path.exists() else Dataset([])
    have = labelled(dataset, device.identity, heuristic)
    if order == "cheapest":
        kernels = cheapest_first(
            kernels, techniques, lambda name: name in have and not relabel_changed
        )
    run = TrainingRun(dataset)
    # ``max_seconds`` also stops a search under way: its configurations stay in the
    # store (the next call's search is served them), but no row comes of a search cut short
    limit = CancelToken()
    timer = None
    if max_seconds is not None:
        timer = threading.Timer(max_seconds, limit.cancel, kwargs={"reason": "time limit"})
        timer.daemon = True
        timer.start()
    labeller = _Labeller(
        run, device, heuristic, store, dataset_path, compile_workers, progress, limit
    )
    try:
        cut = labeller.label(kernels, have, techniques, relabel_changed, budget)
        if cut or deepen is None or run.left:
            return run
        labeller.deepen(deepen, kernels)
        return run
    finally:
        if timer is not None:
            timer.cancel()


@dataclass
class _Labeller:
    """:func:`collect`'s two passes: each kernel labelled, then the close calls deepened."""

    run: TrainingRun
    device: DeviceLimits
    heuristic: str
    store: ResultStore
    dataset_path: Path
    compile_workers: int | None
    progress: Progress | None
    limit: CancelToken

    def _tune(
        self, kernel: TunableKernel, only: Sequence[str], budget: Budget | None
    ) -> TuningReport:
        """Tune ``only`` these techniques, each with the same budget (no scouting)."""
        return tune(
            kernel,
            device=self.device,
            strategy=self.heuristic,
            technique=OracleTechniquePolicy(name=ALL, note="", only=tuple(only), equal=True),
            budget=_per_technique(budget, len(only)),
            store=self.store,
            compile_workers=self.compile_workers,
            confirm=None,
            cancel=self.limit,
        )

    def label(
        self,
        kernels: Sequence[TrainingKernel],
        have: Mapping[str, Any],
        techniques: Sequence[str],
        relabel_changed: bool,
        budget: Budget | None,
    ) -> bool:
        """Label each kernel without a row (or with an outdated one); True where a
        search was cut short by the time limit."""
        run = self.run
        dev_traits = DeviceTraits.of(self.device)
        for i, item in enumerate(kernels):
            old = have.get(item.name)
            if old is not None and not relabel_changed:
                run.done.append(item.name)
                continue
            if self.limit.cancelled:
                run.left.extend(k.name for k in kernels[i:] if k.name not in run.done)
                break
            loaded = needs_row(item, old, techniques, relabel_changed, run)
            if loaded is None:
                continue
            kernel, traits, searched = loaded
            report = self._tune(kernel, searched, budget)
            run.add_time(report.time.to_dict(), report.measured)
            if self.limit.cancelled:
                run.left.extend(k.name for k in kernels[i:] if k.name not in run.done)
                return True
            runs = [r.to_dict() for r in report.runs]
            row = row_from_runs(
                item.name,
                self.device.identity,
                self.heuristic,
                traits,
                runs,
                dev_traits,
                identity=kernel.identity(),
            )
            if not any(math.isfinite(s) for s in row.times.values()):
                run.skipped.append((item.name, "no technique produced a valid configuration"))
            else:
                run.dataset = run.dataset.merged([row])
                run.dataset.write_csv(self.dataset_path)
                if old is not None:
                    run.relabelled.append(item.name)
            run.done.append(item.name)
            if self.progress is not None:
                self.progress(i + 1, len(kernels), item, row)
        return False

    def deepen(self, deepen: Deepen, kernels: Sequence[TrainingKernel]) -> None:
        """Search the close calls among the rows deeper (:class:`Deepen`)."""
        run = self.run
        calls = deepen.calls(run.dataset, kernels, self.device.identity, self.heuristic)
        for i, (item, old, pair) in enumerate(calls):
            if self.limit.cancelled:
                run.left.extend(c[0].name for c in calls[i:])
                break
            labelable = labelable_kernel(item, pair)
            if isinstance(labelable, str):  # it was labelled: it loads
                run.skipped.append((item.name, labelable))
                continue
            report = self._tune(labelable[0], pair, Budget(evaluations=deepen.evaluations))
            run.add_time(report.time.to_dict(), report.measured)
            if self.limit.cancelled:
                run.left.extend(c[0].name for c in calls[i:])
                return
            row = deepened_row(old, [r.to_dict() for r in report.runs], deepen.evaluations)
            run.dataset = run.dataset.merged([row])
            run.dataset.write_csv(self.dataset_path)
            run.deepened.append(item.name)
            if self.progress is not None:
                self.progress(i + 1, len(calls), item, row)


DEEPEN_MARGIN = 0.10
"""A close call, searched deeper with ``--deepen``: the runner-up under 10 % slower."""


@dataclass(frozen=True)
class Deepen:
    """Close calls searched deeper: a row whose two fastest techniques lie within
    ``margin`` of each other (:func:`~gtune.loadpredict.dataset.close_call`) has those
    two searched again to ``evaluations`` configurations each (the first search's
    configurations come from the store). A budget cut short ranks such pairs by which
    search finds its best sooner: a 3D star's global technique, say, needs more
    configurations than its stream technique to reach its best."""

    evaluations: int
    margin: float = DEEPEN_MARGIN

    def calls(
        self,
        dataset: Dataset,
        kernels: Sequence[TrainingKernel],
        identity: str,
        heuristic: str,
    ) -> list[tuple[TrainingKernel, TrainingRow, tuple[str, str]]]:
        """The rows of ``kernels`` on ``identity`` to search deeper, with their pairs."""
        rows = {(r.kernel, r.device, r.heuristic): r for r in dataset.rows}
        out = []
        for item in kernels:
            row = rows.get((item.name, identity, heuristic))
            if row is None or row.deepened >= self.evaluations:
                continue
            pair = close_call(row, self.margin)
            if pair is not None and min(row.configs.get(t, 0) for t in pair) < self.evaluations:
                out.append((item, row, pair))
        return out


def time_line(run: TrainingRun) -> str:
    """Configurations per second and where the searches' time went."""
    t = run.time
    wall = t.get("wall_s", 0.0)
    rate = f" ({run.measured / wall:.1f}/s of search time)" if wall > 0 else ""
    parts = ("compile", "run", "verify", "space", "startup", "store", "wait", "other")
    split = ", ".join(f"{k} {t.get(k + '_s', 0.0):.1f}" for k in parts)
    return f"{run.measured} configurations measured in {wall:.1f} s{rate}: {split} s"


def _per_technique(budget: Budget | None, techniques: int) -> Budget | None:
    """A budget for each technique's search, as one budget the techniques share."""
    if budget is None:
        return None
    return Budget(
        evaluations=None if budget.evaluations is None else budget.evaluations * techniques,
        seconds=None if budget.seconds is None else budget.seconds * techniques,
        wall_seconds=None if budget.wall_seconds is None else budget.wall_seconds * techniques,
    )


def fit_model(
    dataset: Dataset,
    *,
    name: str,
    heuristic: str,
    device: DeviceLimits,
    out_dir: Path,
    dataset_file: str,
    estimator: TechniqueForest | None = None,
    sizes: Sequence[str] = (),
    labels: Mapping[str, Any] | None = None,
) -> tuple[ModelCard, CrossValidation | None]:
    """Cross-validate (leave-one-out) and write the model card beside the dataset.
    ``labels``: how the labels' searches ran (:attr:`ModelCard.labels`)."""
    rows = [
        r for r in dataset.usable().rows if r.device == device.identity and r.heuristic == heuristic
    ]
    if not rows:
        raise InputError(
            f"no labelled kernels for {heuristic} on {device.name} in the dataset",
            source=str(out_dir / dataset_file),
        )
    est = estimator if estimator is not None else new_forest()
    cv = leave_one_out(Dataset(rows), estimator=est) if len(rows) >= 2 else None
    card = ModelCard(
        name=name,
        heuristic=heuristic,
        device=device_card(device),
        dataset=dataset_file,
        estimator=est.get_params(),
        trained=_dt.datetime.now(_dt.UTC).isoformat(timespec="seconds"),
        sizes=list(sizes),
        cv=card_scores(cv) if cv is not None else {"kernels": len(rows)},
        labels=dict(labels or {}),
    )
    card.write(out_dir)
    return card, cv


def card_scores(cv: CrossValidation) -> dict[str, Any]:
    """What a model card states of its leave-one-out: the two accuracies, the majority
    baseline's, and both on the decisive kernels (runner-up more than
    ``DECISIVE_MARGIN`` slower), where a model earns its keep."""
    decisive = cv.decisive()
    return {
        "kernels": len(cv.predictions),
        "absolute_accuracy": cv.absolute,
        "penalty_weighted_accuracy": cv.penalty_weighted,
        "majority_technique": cv.majority,
        "majority_share": cv.majority_share,
        "majority_penalty_weighted_accuracy": cv.majority_penalty_weighted,
        "decisive_margin": DECISIVE_MARGIN,
        "decisive": {k: v for k, v in decisive.scores().items() if not _nan(v)},
        # a forest's leave-one-out depends on scikit-learn's version
        "sklearn": _sklearn_version(),
        # each fold's prediction (kernel@device -> technique): the scores above follow
        # from them, and a sample of folds re-fitted checks them (the test of the cards)
        "predictions": {p.kernel: p.predicted for p in cv.predictions},
    }


def _nan(value: object) -> bool:
    return isinstance(value, float) and math.isnan(value)


def suite_kernels(
    directory: Path,
    sizes: Sequence[tuple[int, int, int]],
    *,
    names: Sequence[str] | None = None,
    real: bool = True,
    suite: str = "garvey104",
    size_in_name: bool = False,
) -> list[TrainingKernel]:
    """Render the suite (and the real weighted-sum stencils) into ``directory``.

    ``names`` filters by kernel name (shell-style patterns); each kernel appears once per
    size, named ``kernel@NXxNYxNZ`` when several sizes are given or ``size_in_name``
    (a dataset grown one size per call: otherwise a second size's kernels would take
    the first one's names, and a kernel labelled at one size would be skipped at the
    other). 2D-array stencils get the 2D size of :func:`size_2d`.
    """
    import fnmatch

    from gtune.stencils.generate import generate
    from gtune.stencils.generate import suite as suite_shapes
    from gtune.stencils.real import REAL
    from gtune.stencils.render import sizes_for, write_stencil

    directory.mkdir(parents=True, exist_ok=True)
    # every kernel of the suite by name, in the collection's order; only those ``names``
    # keeps are rendered (a whole suite is some 100 kernels to write)
    shapes = {shape.name: shape for shape in suite_shapes(suite)}
    stencils = {s.name: s for s in (make() for make in REAL.values())} if real else {}
    array_dims = {**dict.fromkeys(shapes, 3), **{n: s.array_dims for n, s in stencils.items()}}
    order = _spread(list(array_dims))
    if names:
        wanted = list(names)
        unknown = [w for w in wanted if not any(fnmatch.fnmatch(n, w) for n in order)]
        if unknown:
            raise InputError(f"no kernel matches {', '.join(unknown)}", source="names")
        order = [n for n in order if any(fnmatch.fnmatch(n, w) for w in wanted)]
    paths: list[tuple[str, Path, int]] = []
    for name in order:
        if name in shapes:
            (g,) = generate([shapes[name]], directory)
            path = g.source
        else:
            stencil = stencils[name]
            sizes_64 = sizes_for(array_dims[name], (64, 64, 64))
            path, _ = write_stencil(stencil, directory, sizes_64)
        paths.append((name, path, array_dims[name]))
    out: list[TrainingKernel] = []
    for size in sizes:
        tag = "x".join(map(str, size))
        for name, path, dims in paths:
            if dims == 3:
                s = {"NX": size[0], "NY": size[1], "NZ": size[2]}
            else:
                nx, ny = size_2d(size)
                s = {"NX": nx, "NY": ny}
            label = f"{name}@{tag}" if len(sizes) > 1 or size_in_name else name
            out.append(TrainingKernel(label, path, s))
    return out


def size_2d(size: tuple[int, int, int]) -> tuple[int, int]:
    """The 2D size a 2D-array stencil is labelled at for a 3D training size.

    A cube gives a square with as many points, rounded to a power of two (256³ →
    4096²). A flat size (NZ < NX) gives a wide rectangle, eight rows of x per z plane
    folded into x: 1024×1024×32 → 8192×1024. The two shapes differ, so a 2D stencil is
    labelled at two problem shapes as a 3D one is (a square for both would repeat one
    measurement under two names).
    """
    nx, ny, nz = size
    if nz < nx:
        return nx * 8, ny
    side = 2 ** round(math.log2(math.sqrt(nx * ny * nz)))
    return side, side


def _spread(names: list[str]) -> list[str]:
    """Round robin over patterns, small radii first: a collection cut short by a time
    limit still covers every pattern, dimensionality and radius."""
    groups: dict[str, list[str]] = {}
    for n in names:
        groups.setdefault(n.split("_")[0], []).append(n)
    for members in groups.values():
        members.sort(key=lambda n: (_radius(n), n))
    out: list[str] = []
    while any(groups.values()):
        for key in sorted(groups):
            if groups[key]:
                out.append(groups[key].pop(0))
    return out


def _radius(name: str) -> int:
    tail = name.rsplit("_r", 1)
    return int(tail[1]) if len(tail) == 2 and tail[1].isdigit() else 0


def kernels_from_paths(
    paths: Sequence[str], sizes: Sequence[tuple[int, int, int]]
) -> list[TrainingKernel]:
    """User kernels (with descriptions), at their own size or each of ``sizes``."""
    out: list[TrainingKernel] = []
    for p in paths:
        path = Path(p)
        kernel: TunableKernel = load_kernel(path)
        stem = path.name.split(".")[0]  # heat3d.stencil.yaml and heat3d.yaml: heat3d
        if not sizes:
            out.append(TrainingKernel(stem, path, dict(kernel.sizes)))
            continue
        for size in sizes:
            names = list(kernel.sizes)
            s = dict(zip(names, size, strict=False))
            tag = "x".join(map(str, size[: len(names)]))
            # the size is part of the name, as the suite's rows are (kernel@NXxNYxNZ):
            # rows of one kernel collected at different sizes never replace each other
            out.append(TrainingKernel(f"{stem}@{tag}", path, s))
    return out

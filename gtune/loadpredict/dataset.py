"""Training data: per kernel, the best time each technique reached under one heuristic.

A row is one kernel on one device under one heuristic; its label is the technique with
the lowest best time. Rows are written as CSV (one column per feature, one
``time:TECHNIQUE`` column per technique) so a dataset is readable, diffable and
extendable by hand.
"""

from __future__ import annotations

import csv
import io
import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import numpy as np

from gtune.exceptions import InputError
from gtune.loadpredict.features import DeviceTraits, StencilTraits
from gtune.outfiles import write_text

TIME_PREFIX = "time:"
DEEPENED = "deepened"
IDENTITY = "identity"
IDENTITY_LEN = 16  # hex digits of the kernel's identity a row keeps


@dataclass(frozen=True)
class TrainingRow:
    kernel: str
    device: str  # device identity
    heuristic: str
    traits: StencilTraits
    times: Mapping[str, float]  # technique -> best seconds (inf: nothing valid)
    device_traits: DeviceTraits | None = None
    configs: Mapping[str, int] = field(default_factory=dict)  # technique -> evaluations
    # a close call searched deeper: each of its two leading techniques' evaluations
    # then (0: not searched deeper; see ``close_call``)
    deepened: int = 0
    # the labelled kernel's identity (TunableKernel.identity(), its first IDENTITY_LEN
    # hex digits: source, headers, description, size); it changes when the template or
    # the generator changes what the kernel is, so a row of another version can be told
    # apart ("": not recorded, rows labelled before gtune recorded it)
    identity: str = ""

    @property
    def label(self) -> str:
        finite = {t: s for t, s in self.times.items() if math.isfinite(s)}
        if not finite:
            raise InputError(f"kernel {self.kernel}: no technique produced a valid result")
        return min(sorted(finite), key=lambda t: finite[t])

    @property
    def available(self) -> tuple[str, ...]:
        """The techniques the kernel has: those searched (evaluations recorded), else
        those with a time on record (older datasets)."""
        searched = tuple(t for t in self.times if self.configs.get(t, 0) > 0)
        if searched:
            return searched
        return tuple(t for t, s in self.times.items() if math.isfinite(s)) or tuple(self.times)

    @property
    def best_s(self) -> float:
        return min(self.times.values())

    def vector(self, with_device: bool) -> list[float]:
        v = self.traits.vector()
        if with_device:
            if self.device_traits is None:
                raise InputError(f"kernel {self.kernel}: no device features in the dataset")
            v += self.device_traits.vector()
        return v


@dataclass
class Dataset:
    rows: list[TrainingRow]

    @property
    def techniques(self) -> list[str]:
        names: set[str] = set()
        for r in self.rows:
            names.update(r.times)
        return sorted(names)

    def usable(self) -> Dataset:
        """Rows where at least one technique produced a valid result."""
        return Dataset([r for r in self.rows if any(math.isfinite(s) for s in r.times.values())])

    def X(self, with_device: bool = False) -> np.ndarray:
        return np.array([r.vector(with_device) for r in self.rows], dtype=float)

    def y(self) -> np.ndarray:
        return np.array([r.label for r in self.rows])

    def feature_names(self, with_device: bool = False) -> list[str]:
        names = StencilTraits.vector_names()
        return names + DeviceTraits.names() if with_device else names

    def __len__(self) -> int:
        return len(self.rows)

    def merged(self, other: Iterable[TrainingRow]) -> Dataset:
        """This dataset with ``other``'s rows replacing any for the same kernel/device."""
        keep = {(r.kernel, r.device, r.heuristic): r for r in self.rows}
        for r in other:
            keep[(r.kernel, r.device, r.heuristic)] = r
        return Dataset(list(keep.values()))

    # -- CSV --------------------------------------------------------------------
    def write_csv(self, path: str | Path) -> None:
        techniques = self.techniques
        trait_names = StencilTraits.names()
        dev_names = [n.removeprefix("device_") for n in DeviceTraits.names()]
        header = (
            ["kernel", "device", "heuristic", "label"]
            + trait_names
            + [f"device_{n}" for n in dev_names]
            + [TIME_PREFIX + t for t in techniques]
            + [f"configs:{t}" for t in techniques]
        )
        # the column only where some row was searched deeper: older files stay as they are
        deepened = any(r.deepened for r in self.rows)
        if deepened:
            header.append(DEEPENED)
        identity = any(r.identity for r in self.rows)
        if identity:
            header.append(IDENTITY)
        fh = io.StringIO(newline="")
        w = csv.writer(fh)
        w.writerow(header)
        for r in sorted(self.rows, key=lambda r: (r.device, r.heuristic, r.kernel)):
            dt = r.device_traits.to_dict() if r.device_traits else {}
            w.writerow(
                [r.kernel, r.device, r.heuristic, r.label]
                + [r.traits.to_dict()[n] for n in trait_names]
                + [dt.get(n, "") for n in dev_names]
                + [_fmt(r.times.get(t, math.inf)) for t in techniques]
                + [r.configs.get(t, "") for t in techniques]
                + ([r.deepened or ""] if deepened else [])
                + ([r.identity] if identity else [])
            )
        # rewritten as rows come in: whole or not at all, never through a link
        write_text(path, fh.getvalue(), force=True)

    @classmethod
    def read_csv(cls, path: str | Path) -> Dataset:
        p = Path(path)
        try:
            with p.open(newline="") as fh:
                rows = list(csv.DictReader(fh))
        except (OSError, UnicodeDecodeError, csv.Error) as exc:
            raise InputError(f"cannot read dataset: {exc}", source=p) from None
        out: list[TrainingRow] = []
        for i, raw in enumerate(rows, start=2):
            try:
                out.append(_row(raw))
            except (KeyError, ValueError, TypeError, InputError) as exc:
                raise InputError(f"line {i}: {exc}", source=p) from None
        return cls(out)


def _fmt(x: float) -> str:
    return "inf" if not math.isfinite(x) else repr(float(x))


def _row(raw: Mapping[str, Any]) -> TrainingRow:
    traits = StencilTraits.from_dict(raw)
    dev_raw = {n.removeprefix("device_"): raw.get(n, "") for n in DeviceTraits.names()}
    device_traits = (
        DeviceTraits.from_dict({k: float(v) for k, v in dev_raw.items()})
        if all(str(v).strip() for v in dev_raw.values())
        else None
    )
    times = {
        k.removeprefix(TIME_PREFIX): float(v)
        for k, v in raw.items()
        if k.startswith(TIME_PREFIX) and str(v).strip()
    }
    configs = {
        k.removeprefix("configs:"): int(v)
        for k, v in raw.items()
        if k.startswith("configs:") and str(v).strip()
    }
    return TrainingRow(
        kernel=str(raw["kernel"]),
        device=str(raw["device"]),
        heuristic=str(raw["heuristic"]),
        traits=traits,
        times=times,
        device_traits=device_traits,
        configs=configs,
        deepened=int(str(raw.get(DEEPENED) or "").strip() or 0),
        identity=str(raw.get(IDENTITY) or "").strip(),
    )


def close_call(row: TrainingRow, margin: float) -> tuple[str, str] | None:
    """The two fastest techniques of ``row`` when the second is less than ``margin``
    slower than the first (0.1: 10 %), else None. A search cut short at a budget can
    rank such a pair wrongly: the deeper technique's best needs more configurations."""
    finite = sorted((s, t) for t, s in row.times.items() if math.isfinite(s) and s > 0)
    if len(finite) < 2 or finite[1][0] / finite[0][0] - 1.0 >= margin:
        return None
    return finite[0][1], finite[1][1]


def deepened_row(
    row: TrainingRow, runs: Sequence[Mapping[str, Any]], evaluations: int
) -> TrainingRow:
    """``row`` with the deeper searches' ``runs`` (``row_from_runs``'s input) of some of
    its techniques: each keeps the better of its two bests and the deeper count."""
    deeper = row_from_runs(row.kernel, row.device, row.heuristic, row.traits, runs)
    times = dict(row.times)
    configs = dict(row.configs)
    for t, s in deeper.times.items():
        times[t] = min(s, times.get(t, math.inf))
        configs[t] = max(deeper.configs.get(t, 0), configs.get(t, 0))
    return replace(row, times=times, configs=configs, deepened=evaluations)


def row_from_runs(
    kernel: str,
    device: str,
    heuristic: str,
    traits: StencilTraits,
    runs: Sequence[Mapping[str, Any]],
    device_traits: DeviceTraits | None = None,
    identity: str = "",
) -> TrainingRow:
    """A row from a tuning report's per-technique runs (``TuningReport.to_dict()["runs"]``);
    ``identity``: the kernel's (:data:`IDENTITY_LEN` digits are kept)."""
    times: dict[str, float] = {}
    configs: dict[str, int] = {}
    for run in runs:
        tech = run.get("technique")
        if not tech:
            continue
        outcome = run.get("outcome") or {}
        best = outcome.get("best_s")
        times[str(tech)] = float(best) if best is not None else math.inf
        trace = outcome.get("evaluations")
        if trace is None:
            trace = int(run.get("measured", 0)) + int(run.get("reused", 0))
        configs[str(tech)] = int(trace)
    return TrainingRow(
        kernel,
        device,
        heuristic,
        traits,
        times,
        device_traits,
        configs,
        identity=identity[:IDENTITY_LEN],
    )

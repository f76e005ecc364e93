"""gtune.tune end to end on the real default OpenCL device (PoCL in CI), small problems."""

from __future__ import annotations

import math
from pathlib import Path

import pytest

from gtune.api import tune
from gtune.budget import Budget
from gtune.description import load_kernel
from gtune.device import DeviceLimits
from gtune.exceptions import InputError
from gtune.kernel import TunableKernel
from gtune.measure import OpenCLEvaluator, select_device
from gtune.measure.evaluator import Evaluator
from gtune.plain import plain_kernel
from gtune.store import SQLiteStore
from gtune.tuning import (
    ResultMeasured,
    TuningEvent,
    TuningInterrupted,
    TuningSession,
    technique_of,
    techniques_to_run,
)
from gtune.tuning.budget import share
from tests.conftest import DATA, ROOT

HEAT = ROOT / "stencils" / "heat3d.cl"


@pytest.fixture(scope="module")
def device() -> DeviceLimits:
    return select_device(None)


def _heat(sizes: dict[str, int] | None = None) -> TunableKernel:
    return load_kernel(HEAT, sizes or {"NX": 16, "NY": 8, "NZ": 8})


def test_techniques_to_run_and_errors():
    k = _heat()
    assert techniques_to_run(k, "auto") == list(k.techniques)
    assert techniques_to_run(k, "whole") == [None]
    assert techniques_to_run(k, "local") == ["local"]
    with pytest.raises(InputError, match="unknown technique 'texture'"):
        techniques_to_run(k, "texture")
    plain = plain_kernel(DATA / "plain_blur.cl", sizes=[32, 16], scalars={"scale": "0.1"})
    assert techniques_to_run(plain, "auto") == [None]
    with pytest.raises(InputError, match="defines no data-loading techniques"):
        techniques_to_run(plain, "global")


def test_technique_of_classifies_configurations():
    k = _heat()
    base = dict(k.default_config() or {})
    assert technique_of(k, base) == "global"
    assert technique_of(k, {**base, "LOCAL": 1}) == "local"
    assert technique_of(k, {**base, "VX": 4, "BX": 4}) == "vec"
    assert technique_of(k, None) is None


def test_budget_is_shared_by_the_remaining_runs():
    b = Budget(evaluations=10)
    first = share(b, 4, 0, 0.0)
    assert first is not None and first.evaluations == 2
    # a run that used less leaves more for the others
    later = share(b, 2, 3, 0.0)
    assert later is not None and later.evaluations == 3
    assert share(None, 3, 0, 0.0) is None


@pytest.mark.opencl
@pytest.mark.usefixtures("shared_workers")  # (own workers: the tests below)
def test_tune_resumes_from_the_store(tmp_path: Path, device: DeviceLimits):
    db = tmp_path / "r.db"
    with SQLiteStore(db) as store:
        first = tune(
            _heat(), device=device, technique="global", budget=Budget(evaluations=6), store=store
        )
    best = first.best_result
    assert best is not None and best.ok
    assert 0 < first.evaluations <= 6
    assert first.measured >= first.evaluations  # plus the default, unless searched
    assert first.best_s <= first.default_s
    assert first.technique_choice == "global"
    assert first.gbs() == pytest.approx(first.bytes_moved / first.best_s / 1e9)
    speedup = first.speedup
    assert speedup is not None and speedup >= 1.0
    assert first.compile_s == pytest.approx(
        sum(e.result.compile_s for r in first.runs if r.outcome for e in r.outcome.trace)
    )
    with SQLiteStore(db) as store:
        again = tune(
            _heat(), device=device, technique="global", budget=Budget(evaluations=6), store=store
        )
    assert again.measured == 0 and again.reused == first.measured + first.reused
    assert again.search_config == first.search_config
    assert again.search_s == first.search_s
    # the answer comes from the confirmation round: the default measured like the others
    assert first.confirmed and first.confirmation is not None
    default = first.confirmation.default
    assert default is not None and default.rounds == first.confirmation.rounds_done
    assert first.default_s == default.median_s


@pytest.mark.opencl
def test_auto_tries_every_technique_with_one_evaluator(tmp_path: Path, device: DeviceLimits):
    made: list[Evaluator] = []

    def factory(kernel: TunableKernel, dev: DeviceLimits) -> Evaluator:
        ev = OpenCLEvaluator(kernel, dev, compile_workers=1)
        made.append(ev)
        return ev

    kernel = _heat()
    with TuningSession(kernel, device, evaluator_factory=factory) as session:
        store = tmp_path / "r.db"
        auto = tune(
            kernel,
            device=device,
            technique="all",
            budget=Budget(evaluations=8),
            session=session,
            store=store,
        )
        rand = tune(
            kernel,
            device=device,
            strategy="random",
            technique="whole",
            strategy_options={"n": 4},
            session=session,
            confirm=None,
            store=store,
        )
    assert len(made) == 1, "the session's evaluator is shared by every search"
    assert [r.technique for r in auto.runs] == list(kernel.techniques)
    assert auto.evaluations <= 8
    found = [r.best_s for r in auto.runs if math.isfinite(r.best_s)]
    assert auto.search_s == min(found)
    assert rand.evaluations == 4 and rand.default_result is None
    assert [r.technique for r in rand.runs] == [None]
    assert rand.technique_choice in kernel.techniques


@pytest.mark.opencl
@pytest.mark.usefixtures("shared_workers")  # (own workers: the tests below)
def test_invalid_default_is_reported(tmp_path: Path, device: DeviceLimits):
    # the default WX=16 does not fit NX=8
    kernel = _heat({"NX": 8, "NY": 4, "NZ": 4})
    report = tune(
        kernel,
        device=device,
        strategy="random",
        technique="global",
        strategy_options={"n": 3},
        store=tmp_path / "r.db",
    )
    assert report.default_result is None
    assert "not valid on this device" in report.default_note
    assert report.speedup is None
    assert report.best_result is not None


class _StopAfter:
    """A display that presses Ctrl-C after a few results."""

    def __init__(self, n: int) -> None:
        self.n = n
        self.seen = 0

    def on_event(self, event: TuningEvent) -> None:
        if not isinstance(event, ResultMeasured):
            return
        self.seen += 1
        if self.seen >= self.n:
            raise KeyboardInterrupt


@pytest.mark.opencl
def test_interrupt_keeps_partial_report_and_store(tmp_path: Path, device: DeviceLimits):
    db = tmp_path / "r.db"
    kernel = _heat()
    with SQLiteStore(db) as store, pytest.raises(TuningInterrupted) as stop:
        tune(
            kernel,
            device=device,
            strategy="random",
            technique="global",
            strategy_options={"n": 8},
            store=store,
            observer=_StopAfter(4),
            confirm=None,
        )
    partial = stop.value.report
    assert partial.interrupted and partial.measured == 4
    assert partial.runs and partial.runs[0].note == "interrupted"
    assert len(partial.runs[0].outcome.trace if partial.runs[0].outcome else []) == 3
    with SQLiteStore(db) as store:
        done = tune(
            kernel,
            device=device,
            strategy="random",
            technique="global",
            strategy_options={"n": 8},
            store=store,
            confirm=None,
        )
    assert done.reused == 4 and done.measured == 4 and done.evaluations == 8

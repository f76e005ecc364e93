"""The library API: events, cancellation, budgets, policies and campaigns."""

from __future__ import annotations

import functools
import json
import math
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

import gtune
from gtune.budget import Budget
from gtune.device import DeviceLimits
from gtune.exceptions import InputError
from gtune.measure import select_device
from gtune.measure.result import Result, Status
from gtune.tuning import (
    BatchStarted,
    CancelToken,
    FixedTechniquePolicy,
    OracleTechniquePolicy,
    ResultMeasured,
    RunFinished,
    RunStarted,
    SearchStarted,
    TimeBreakdown,
    TuningEvent,
    TuningSession,
)
from tests.conftest import ROOT
from tests.heuristics.conftest import Recorded

HEAT = ROOT / "stencils" / "heat3d.cl"


class Recorder:
    """Keeps every event; cancels the run after ``stop_after`` results, if given."""

    def __init__(self, token: CancelToken | None = None, stop_after: int = 0) -> None:
        self.events: list[TuningEvent] = []
        self.token = token
        self.stop_after = stop_after

    def on_event(self, event: TuningEvent) -> None:
        self.events.append(event)
        seen = sum(1 for e in self.events if isinstance(e, ResultMeasured))
        if self.token is not None and self.stop_after and seen >= self.stop_after:
            self.token.cancel()


def test_events_tell_the_whole_run(replay_session: TuningSession):
    watch = Recorder()
    report = gtune.tune(
        replay_session.kernel,
        session=replay_session,
        technique="global",
        budget=8,
        observer=watch,
        confirm=None,
    )
    kinds = [type(e) for e in watch.events]
    assert kinds[0] is RunStarted and kinds[1] is SearchStarted and kinds[-1] is RunFinished
    assert BatchStarted in kinds
    results = [e for e in watch.events if isinstance(e, ResultMeasured)]
    assert len(results) == report.measured + report.reused
    finished = watch.events[-1]
    assert isinstance(finished, RunFinished) and finished.report is report
    assert report.evaluations <= 8 and report.confirmation is None and report.default_result is None


def test_cancel_token_stops_between_configurations(replay_session: TuningSession):
    token = CancelToken()
    report = gtune.tune(
        replay_session.kernel,
        session=replay_session,
        strategy="random",
        technique="global",
        strategy_options={"n": 20},
        observer=Recorder(token, stop_after=5),
        cancel=token,
    )
    assert report.interrupted and report.measured == 5
    (run,) = report.runs
    assert run.outcome is not None and len(run.outcome.trace) == 5
    assert run.outcome.stop_reason == "cancelled"
    assert report.confirmation is None, "a cancelled run is not confirmed"


def test_a_spent_wall_budget_hands_out_nothing(replay_session: TuningSession):
    report = gtune.tune(
        replay_session.kernel,
        session=replay_session,
        technique="global",
        budget=Budget(wall_seconds=1e-9),
    )
    assert report.measured == 0
    assert any("wall time" in n for n in report.notes)
    assert any("no time for the confirmation round" in n for n in report.notes)


def test_budget_text_and_strategy_options_are_checked(replay_session: TuningSession):
    with pytest.raises(InputError, match="budget"):
        gtune.tune(replay_session.kernel, session=replay_session, budget="soon")
    with pytest.raises(InputError, match="no option 'colour'"):
        gtune.tune(
            replay_session.kernel,
            session=replay_session,
            strategy="random",
            strategy_options={"colour": "red"},
        )
    report = gtune.tune(
        replay_session.kernel,
        session=replay_session,
        strategy="random",
        technique="global",
        strategy_options={"n": "4", "seed": "2"},  # text, as --option gives it
        confirm=None,
    )
    assert report.evaluations == 4


def test_technique_policies(recorded: Recorded):
    kernel = recorded.kernel
    oracle = OracleTechniquePolicy().choose(kernel, None)
    assert oracle.techniques == tuple(kernel.techniques) and oracle.note
    assert FixedTechniquePolicy("local").choose(kernel, None).techniques == ("local",)
    assert FixedTechniquePolicy(None).choose(kernel, None).techniques == (None,)
    with pytest.raises(InputError, match="unknown technique"):
        FixedTechniquePolicy("texture").choose(kernel, None)


@given(
    wall=st.floats(0.0, 100.0),
    parts=st.lists(
        st.tuples(st.floats(0, 5), st.floats(0, 1), st.floats(0, 1), st.floats(0, 1)),
        max_size=20,
    ),
    fixed=st.tuples(st.floats(0, 30), st.floats(0, 30), st.floats(0, 30)),
)
def test_time_breakdown_sums_to_the_wall_time(
    wall: float,
    parts: list[tuple[float, float, float, float]],
    fixed: tuple[float, float, float],
):
    t = TimeBreakdown()
    for compile_s, run_s, verify_s, warmup_s in parts:
        # waiting for the device (another process measured): as long as the warm-up here
        extra = {"verify_s": verify_s, "warmup_s": warmup_s, "wait_s": warmup_s, "timing": "odd"}
        t.add(Result({"X": 1}, Status.OK, compile_s=compile_s, times_s=(run_s,), extra=extra))
    t.space_s, t.startup_s, t.store_s = fixed  # solving, starting workers, the store
    t.close(wall)
    total = t.compile_s + t.run_s + t.verify_s + t.overhead_s
    assert math.isclose(total, wall, rel_tol=1e-9, abs_tol=1e-9)
    assert min(t.to_dict().values()) >= 0
    overhead = t.space_s + t.startup_s + t.store_s + t.wait_s + t.other_s  # the overhead's parts
    assert math.isclose(overhead, t.overhead_s, rel_tol=1e-9, abs_tol=1e-9)
    if sum(fixed) + sum(p[3] for p in parts) <= t.overhead_s:  # room for all: as measured
        assert (t.space_s, t.startup_s, t.store_s) == fixed
        assert math.isclose(t.wait_s, sum(p[3] for p in parts), rel_tol=1e-9, abs_tol=1e-9)


def test_task_is_plain_data_and_round_trips_through_json(recorded: Recorded):
    tasks = gtune.Campaign.grid(
        [str(HEAT), recorded.kernel.to_dict()],
        sizes=[{"NX": 16, "NY": 8, "NZ": 8}],
        strategies=["hybrid", "random"],
        budget="30",
        options={"random": {"n": 5}},
    )
    assert len(tasks) == 4
    for task in tasks:
        again = gtune.TuningTask.from_dict(json.loads(json.dumps(task.to_dict())))
        assert again == task
    assert dict(tasks[1].options) == {"n": 5} and tasks[0].options == ()


@pytest.mark.opencl
def test_campaign_shares_one_session_per_kernel(tmp_path: Path):
    device: DeviceLimits = select_device(None)
    tasks = gtune.Campaign.grid(
        [str(HEAT)],
        sizes=[{"NX": 16, "NY": 8, "NZ": 8}],
        devices=[device.selector],
        strategies=["random", "exhaustive"],
        technique="global",
        options={"random": {"n": 3}},
        budget="4",
        confirm=False,
    )
    with gtune.Campaign(tasks, store=tmp_path / "r.db", compile_workers=1) as campaign:
        result = campaign.run()
        assert len(campaign.sessions._sessions) == 1
    assert result.complete and [t.strategy for t, _ in result.reports] == ["random", "exhaustive"]
    for _, report in result.reports:
        assert 0 < report.evaluations <= 4 and report.best_result is not None


@pytest.mark.opencl
def test_compare_kernel_ranks_by_winners_measured_together(tmp_path: Path):
    from gtune.comparison import compare_kernel

    device: DeviceLimits = select_device(None)
    with gtune.Campaign(store=tmp_path / "r.db", compile_workers=1) as campaign:
        run = functools.partial(
            compare_kernel,
            campaign,
            HEAT,
            device,
            ["random", "exhaustive"],
            sizes={"NX": 16, "NY": 8, "NZ": 8},
            technique="global",
            options={"random": {"n": 3}},
            budget="4",
        )
        one = run()
        assert one.complete and one.name == "heat3d" and campaign.sessions._sessions == {}
        conf = one.confirmation
        # three rounds, and up to two more where a configuration's rounds disagreed
        assert conf is not None
        assert 3 <= conf.rounds_done <= 3 + gtune.ConfirmPolicy().extra_rounds
        assert (conf.rounds_done > 3) == any("rounds disagreed" in n for n in conf.notes)
        timed = {json.dumps(e.config, sort_keys=True): e for e in conf.entries}
        for c in one.cells:
            search = one.reports[c.strategy].search_result
            assert search is not None and c.best_s == search.median_s
            entry = timed[json.dumps(search.config, sort_keys=True)]
            assert c.remeasured_s == entry.median_s and c.time_s == c.remeasured_s
        assert len(conf.entries) in (1, 2)  # each distinct winner once

        plain = run(confirm=None)
        assert plain.complete and plain.confirmation is None
        assert all(c.remeasured_s is None and c.time_s == c.best_s for c in plain.cells)
        assert all(r.measured == 0 for r in plain.reports.values()), "served by the store"

        token = gtune.CancelToken()
        token.cancel()
        stopped = run(cancel=token)
        assert not stopped.complete and stopped.cells == []

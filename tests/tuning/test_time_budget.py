"""Wall-time budgets shared by the techniques, and the default budget of a run whose
technique no model predicts."""

from __future__ import annotations

import time
from collections.abc import Iterator, Mapping, Sequence

import pytest

import gtune
from gtune.budget import Budget
from gtune.device import DeviceLimits
from gtune.exceptions import InputError
from gtune.kernel import canonical_config
from gtune.measure.evaluator import Evaluator
from gtune.measure.result import Result
from gtune.tuning import TuningSession
from gtune.tuning.budget import CONFIRM_RESERVE, LEAD_FACTOR, SCOUT_SHARE
from gtune.tuning.driver import UNPREDICTED_BUDGET
from gtune.tuning.techniques import OracleTechniquePolicy, technique_of
from tests.heuristics.conftest import Recorded


def test_budget_none_means_no_limit() -> None:
    assert Budget.parse("none").unlimited and Budget.parse("unlimited") == Budget()
    with pytest.raises(InputError, match="or none"):
        Budget.parse("soon")


@pytest.fixture
def unseen_cpu(recorded: Recorded) -> Iterator[TuningSession]:
    """The recording, as if measured on a CPU no installed model was trained on."""
    device = DeviceLimits.from_dict({**recorded.data["device"], "name": "a CPU never seen"})
    with TuningSession(
        recorded.kernel,
        device,
        space=recorded.space(),
        evaluator_factory=lambda kernel, dev: recorded.replay(),
    ) as session:
        yield session


def test_a_run_no_model_predicts_gets_the_default_budget(unseen_cpu: TuningSession) -> None:
    # no installed load-predictor model fits the device: every technique is searched,
    # and without a budget the run is bounded
    replay_session = unseen_cpu
    report = gtune.tune(replay_session.kernel, session=replay_session, confirm=None)
    assert any("no load-predictor model" in n for n in report.notes)
    assert len([r for r in report.runs if r.outcome is not None]) > 1
    bound = f"bounded to {UNPREDICTED_BUDGET.wall_seconds:g} s"
    assert any(bound in n for n in report.notes)
    for given in ("none", "50"):  # any budget given, "none" included, is kept
        again = gtune.tune(
            replay_session.kernel, session=replay_session, budget=given, confirm=None
        )
        assert not any(bound in n for n in again.notes)
    named = gtune.tune(replay_session.kernel, session=replay_session, technique="all", confirm=None)
    assert not any(bound in n for n in named.notes)  # asked for every technique


class _Paced:
    """The recording replayed at the pace of a slow device (``seconds`` a configuration)."""

    def __init__(self, inner: Evaluator, seconds: float) -> None:
        self.inner = inner
        self.seconds = seconds

    def evaluate(self, config: Mapping[str, int]) -> Result:
        time.sleep(self.seconds)
        return self.inner.evaluate(config)

    def evaluate_batch(self, configs: Sequence[Mapping[str, int]]) -> Iterator[Result]:
        for c in configs:
            yield self.evaluate(c)

    def close(self) -> None:
        self.inner.close()


def _paced_session(recorded: Recorded, seconds: float = 0.05) -> TuningSession:
    return TuningSession(
        recorded.kernel,
        DeviceLimits.from_dict(recorded.data["device"]),
        space=recorded.space(),
        evaluator_factory=lambda kernel, dev: _Paced(recorded.replay(), seconds),
    )


def test_a_wall_time_budget_is_shared_by_the_techniques(recorded: Recorded) -> None:
    with _paced_session(recorded) as session:
        report = gtune.tune(
            recorded.kernel, session=session, technique="all", budget="2s", confirm=None
        )
    searched = [r for r in report.runs if r.outcome is not None]
    assert len(searched) >= 2
    # every technique scouted within its part of the scouting time, so each got time
    assert all(r.outcome is not None and r.outcome.evaluations > 0 for r in searched)
    search_s = 2.0 * (1 - CONFIRM_RESERVE)
    scouting = search_s * SCOUT_SHARE
    later = searched[1:]
    for run in later:  # (the first search's start-up counts against its part)
        assert run.outcome is not None
        if run not in _continued(report):
            assert run.outcome.wall_s <= scouting / len(searched) + 0.2
    assert report.wall_s < 2.0 + 0.5


def _continued(report: gtune.TuningReport) -> list[object]:
    """The searches that went on after scouting (the note names them)."""
    note = next((n for n in report.notes if "were scouted" in n or "was scouted" in n), "")
    names = note.partition("went to the fastest (")[2].partition(":")[0].split(", ")
    return [r for r in report.runs if r.technique in names]


def test_after_scouting_the_rest_goes_to_the_leading_technique(recorded: Recorded) -> None:
    # in the recording (PoCL), the local technique's best is ten times the global's:
    # after the scouting part, the time left goes to global alone
    best: dict[str | None, float] = {}
    for r in recorded.results:
        name = technique_of(recorded.kernel, r.config)
        if r.ok:
            best[name] = min(best.get(name, r.median_s), r.median_s)
    assert best["local"] > LEAD_FACTOR * best["global"]
    with _paced_session(recorded, 0.1) as session:
        report = gtune.tune(
            recorded.kernel, session=session, technique="all", budget="3s", confirm=None
        )
        # the same run again on the same store: what the store serves is counted once,
        # though the continued search is served it a second time
        again = gtune.tune(
            recorded.kernel, session=session, technique="all", budget="3s", confirm=None
        )
    assert again.reused >= report.measured
    assert again.measured + again.reused == again.evaluations
    for run in again.runs:
        assert run.measured + run.reused == (run.outcome.evaluations if run.outcome else 0)
    runs = {r.technique: r for r in report.runs}
    glob, local = runs["global"], runs["local"]
    assert glob.outcome is not None and local.outcome is not None
    assert _continued(report) == [glob]
    assert any("not to local" in n for n in report.notes)
    # global measured in both parts, local only while scouting (its part: 40 % of the
    # search time, shared by two); how many each part holds depends on the host's load
    assert glob.measured > local.measured
    assert local.outcome.wall_s <= 3.0 * (1 - CONFIRM_RESERVE) * SCOUT_SHARE / 2 + 0.2
    # the continued search replayed its scouting from the store: neither measured
    # twice nor counted as served by the store, and each configuration once in its trace
    keys = [canonical_config(e.config) for e in glob.outcome.trace]
    assert len(keys) == len(set(keys)) == glob.measured
    assert report.reused == 0 and glob.reused == 0
    assert report.measured == report.evaluations
    elapsed = [e.elapsed_s for e in glob.outcome.trace]
    assert elapsed == sorted(elapsed)  # one time line across both parts
    assert glob.outcome.best_s == min(e.result.median_s for e in glob.outcome.trace if e.result.ok)
    assert report.wall_s < 3.0 + 0.5


def test_no_scouting_without_a_wall_time_budget_or_with_one_technique(
    recorded: Recorded,
) -> None:
    with _paced_session(recorded, 0.0) as session:
        counted = gtune.tune(
            recorded.kernel, session=session, technique="all", budget="40", confirm=None
        )
        alone = gtune.tune(
            recorded.kernel, session=session, technique="global", budget="1s", confirm=None
        )
    for report in (counted, alone):
        assert not _continued(report)
        assert not any("scouted" in n for n in report.notes)


def test_labelling_techniques_gives_each_an_equal_part(recorded: Recorded) -> None:
    # gtune train compares the techniques: a wall-time budget is shared equally
    policy = OracleTechniquePolicy(name="all", note="", equal=True)
    with _paced_session(recorded, 0.1) as session:
        report = gtune.tune(
            recorded.kernel, session=session, technique=policy, budget="3s", confirm=None
        )
    searched = [r for r in report.runs if r.outcome is not None]
    assert len(searched) == 2 and not _continued(report)
    assert not any("scouted" in n for n in report.notes)
    part = 3.0 * (1 - CONFIRM_RESERVE) / 2
    walls = []
    for run in searched:
        assert run.outcome is not None
        assert run.outcome.wall_s <= part + 0.2
        # paced at 0.1 s a configuration: each measured for the time it had (what the
        # run spent before its first search, more on a busy machine, is not shared out)
        assert run.outcome.evaluations >= 0.5 * run.outcome.wall_s / 0.1
        walls.append(run.outcome.wall_s)
    # equal parts of the time left: neither search had much more than the other
    assert max(walls) <= 1.5 * min(walls) + 0.2
    assert sum(walls) >= 0.5 * 2 * part - report.runs[0].started_s


def test_starting_the_workers_does_not_eat_the_first_search_s_part(recorded: Recorded) -> None:
    def slow_start(kernel: object, dev: object) -> Evaluator:
        time.sleep(0.6)  # workers and data on the device, as on a slow CPU
        return _Paced(recorded.replay(), 0.05)

    with TuningSession(
        recorded.kernel,
        DeviceLimits.from_dict(recorded.data["device"]),
        space=recorded.space(),
        evaluator_factory=slow_start,
    ) as session:
        report = gtune.tune(
            recorded.kernel, session=session, technique="all", budget="3s", confirm=None
        )
        startup = session.startup_s
        assert startup >= 0.6
    runs = {r.technique: r for r in report.runs}
    first, second = runs["global"], runs["local"]
    assert first.outcome is not None and second.outcome is not None
    # the scouting part of each: 3 s x 85 % x 40 % / 2 = 0.51 s, shorter than the start;
    # the first search still had its part after it, and measured in it (at 0.05 s a
    # configuration; a busy machine adds its own time to each, so judged by the time)
    assert second.started_s - first.started_s - startup >= 0.51 - 0.1
    scouted = [e for e in first.outcome.trace if first.started_s + e.elapsed_s <= second.started_s]
    assert len(scouted) >= 3
    # nor the later searches' parts: local (not continued) still scouted its part's worth
    assert _continued(report) == [first]
    assert second.outcome.evaluations >= 3

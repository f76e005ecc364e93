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
from gtune.measure.evaluator import Evaluator
from gtune.measure.result import Result
from gtune.tuning import TuningSession
from gtune.tuning.budget import CONFIRM_RESERVE
from gtune.tuning.driver import UNPREDICTED_BUDGET
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


def test_a_wall_time_budget_is_shared_by_the_techniques(recorded: Recorded) -> None:
    device = DeviceLimits.from_dict(recorded.data["device"])
    with TuningSession(
        recorded.kernel,
        device,
        space=recorded.space(),
        evaluator_factory=lambda kernel, dev: _Paced(recorded.replay(), 0.05),
    ) as session:
        report = gtune.tune(
            recorded.kernel, session=session, technique="all", budget="2s", confirm=None
        )
    searched = [r for r in report.runs if r.outcome is not None]
    assert len(searched) >= 2
    # the first search stopped at its share, so the later ones got time too
    assert searched[0].outcome is not None
    first = searched[0].outcome
    assert first.stop_reason in (
        "its share of the budget of 2 s of wall time used",
        "the time left has no room for another configuration",
    )
    share = 2.0 * (1 - CONFIRM_RESERVE) / len(searched)
    assert first.wall_s <= share + 0.2
    assert all(r.outcome is not None and r.outcome.evaluations > 0 for r in searched)
    assert report.wall_s < 2.0 + 0.5

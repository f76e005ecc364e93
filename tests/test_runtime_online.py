"""The online tuner's answers for jobs it never ran: the application closed first."""

from __future__ import annotations

from pathlib import Path

from gtune.budget import Budget
from gtune.description import load_kernel
from gtune.runtime.online import Done, OnlineTuner
from gtune.tuning.report import TuningReport
from tests.conftest import ROOT
from tests.space.space_helpers import h100_limits

Answer = tuple[TuningReport | None, str, bool]


def _tuner(tmp_path: Path) -> OnlineTuner:
    kernel = load_kernel(ROOT / "stencils" / "heat3d.yaml", {"NX": 32, "NY": 32, "NZ": 32})
    return OnlineTuner(kernel, Budget(evaluations=4), tmp_path / "store.db")


def _recorder(answers: list[Answer]) -> Done:
    def done(report: TuningReport | None, message: str, *, stopped: bool = False) -> None:
        answers.append((report, message, stopped))

    return done


def test_a_job_submitted_after_closing_is_answered_stopped_at_once(tmp_path: Path) -> None:
    tuner = _tuner(tmp_path)
    tuner.close()
    answers: list[Answer] = []
    tuner.submit(h100_limits(), {"NX": 64, "NY": 64, "NZ": 64}, _recorder(answers))
    assert answers == [
        (None, "online tuning at 64x64x64 not started: the application is closing", True)
    ]


def test_a_job_still_queued_when_the_application_closes_is_answered_stopped(
    tmp_path: Path,
) -> None:
    """The race of a close that comes before the tuner's thread takes the job: the
    thread is held off here, so the job is still in the queue when the close comes."""
    tuner = _tuner(tmp_path)
    answers: list[Answer] = []
    tuner._thread = object()  # type: ignore[assignment]  # submit starts no thread
    tuner.submit(h100_limits(), {"NX": 64, "NY": 64, "NZ": 64}, _recorder(answers))
    tuner._thread = None
    tuner.close()
    tuner._loop()  # the thread's loop, run here: the job, then the close's end mark
    assert [(r, stopped) for r, _, stopped in answers] == [(None, True)]
    assert "not started: the application is closing" in answers[0][1]


def test_an_answer_that_fails_after_closing_does_not_reach_the_application(
    tmp_path: Path,
) -> None:
    tuner = _tuner(tmp_path)
    tuner.close()
    calls: list[str] = []

    def failing(report: TuningReport | None, message: str, *, stopped: bool = False) -> None:
        calls.append(message)
        raise RuntimeError("the application's callback failed")

    tuner.submit(h100_limits(), {"NX": 64, "NY": 64, "NZ": 64}, failing)  # raises nothing
    assert len(calls) == 1 and "not started" in calls[0]

"""What a library user sees: the public progress bar, gtune's logging, campaign checks,
the default store."""

from __future__ import annotations

import io
import itertools
import logging
import re
from pathlib import Path

import pytest
from rich.console import Console

import gtune
from gtune.exceptions import InputError
from gtune.tuning import ResultMeasured, TuningEvent, TuningSession
from tests.conftest import ROOT

HEAT = str(ROOT / "stencils" / "heat3d.cl")
JACOBI = str(ROOT / "stencils" / "jacobi2d.cl")


def _plain(text: str) -> str:
    return re.sub(r"\x1b\[[0-9;?]*[A-Za-z]", "", text)


class _Count:
    def __init__(self) -> None:
        self.results = 0

    def on_event(self, event: TuningEvent) -> None:
        self.results += isinstance(event, ResultMeasured)


@pytest.mark.parametrize("width", [80, 120])
def test_progress_bar_is_a_public_observer_readable_at_80_columns(
    replay_session: TuningSession, width: int
) -> None:
    out = io.StringIO()
    bar = gtune.ProgressBar(Console(file=out, width=width, force_terminal=True))
    count = _Count()

    class Both:
        def on_event(self, event: TuningEvent) -> None:
            bar.on_event(event)
            count.on_event(event)

    report = gtune.tune(
        replay_session.kernel,
        session=replay_session,
        strategy="random",
        technique="global",
        budget=6,
        observer=Both(),
        confirm=None,
    )
    lines = [ln for ln in _plain(out.getvalue()).splitlines() if ln.strip()]
    final = lines[-1]
    assert len(final) <= width
    # the search's name, its count and the best time all survive a narrow terminal
    assert final.startswith("random")
    assert f"{count.results}/{count.results}" in final
    assert "best" in final and report.evaluations == count.results
    assert ("━" in final) == (width >= gtune.progress.WIDE)  # the bar only where room is


def test_runs_log_to_the_gtune_logger(
    replay_session: TuningSession, caplog: pytest.LogCaptureFixture
) -> None:
    count = _Count()
    with caplog.at_level(logging.DEBUG, logger="gtune"):
        report = gtune.tune(
            replay_session.kernel,
            session=replay_session,
            strategy="random",
            technique="global",
            budget=5,
            observer=count,
            confirm=None,
        )
    mine = [r for r in caplog.records if r.name == "gtune.tuning"]
    info = [r.getMessage() for r in mine if r.levelno == logging.INFO]
    assert info[0].startswith("tuning ") and "random" in info[0]
    assert any(m.startswith("search random [global]") for m in info)
    assert info[-1].startswith("finished ") and f"{report.evaluations} configurations" in info[-1]
    per_config = [r for r in mine if r.levelno == logging.DEBUG and "WX" in r.getMessage()]
    assert len(per_config) == count.results == report.evaluations
    # a library that is not configured prints nothing: gtune only has a NullHandler
    assert any(isinstance(h, logging.NullHandler) for h in logging.getLogger("gtune").handlers)


def test_grid_checks_2d_and_3d_kernels_before_anything_runs() -> None:
    # one text size serves both: the 2D kernel takes the first two numbers
    tasks = gtune.Campaign.grid([HEAT, JACOBI], sizes=["32x16x8"], strategies=["random"])
    assert [dict(t.sizes) for t in tasks] == [
        {"NX": 32, "NY": 16, "NZ": 8},
        {"NX": 32, "NY": 16},
    ]
    # a mapping that names a size the 2D kernel lacks fails here, not after tasks ran
    with pytest.raises(InputError, match=r"jacobi2d .*unknown problem size name 'NZ'"):
        gtune.Campaign.grid([HEAT, JACOBI], sizes=[{"NX": 32, "NY": 16, "NZ": 8}])
    with pytest.raises(InputError, match="task heat3d no-such-strategy: unknown strategy"):
        gtune.Campaign.grid([HEAT], strategies=["no-such-strategy"])
    with pytest.raises(InputError, match="budget"):
        gtune.Campaign.grid([HEAT], budget="soon")
    with pytest.raises(InputError, match="bad size"):
        gtune.Campaign.grid([HEAT], sizes=["32xlarge"])


def test_run_checks_tasks_built_by_hand_before_the_first(tmp_path: Path) -> None:
    good = gtune.TuningTask(kernel=HEAT, sizes=(("NX", 16),), strategy="random")
    bad = gtune.TuningTask(kernel=JACOBI, sizes=(("NZ", 8),), strategy="random")
    with (
        gtune.Campaign([good, bad], store=tmp_path / "r.db") as campaign,
        pytest.raises(InputError, match="NZ"),
    ):
        campaign.run()
    assert not (tmp_path / "r.db").exists() or _rows(tmp_path / "r.db") == 0


def _rows(db: Path) -> int:
    import sqlite3

    with sqlite3.connect(db) as con:
        return int(con.execute("SELECT COUNT(*) FROM results").fetchone()[0])


def test_library_default_store_is_the_command_lines(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("GTUNE_DB", str(tmp_path / "shared.db"))
    with gtune.Campaign() as campaign:
        assert isinstance(campaign.store, gtune.SQLiteStore)
    assert (tmp_path / "shared.db").exists()
    monkeypatch.delenv("GTUNE_DB")
    monkeypatch.chdir(tmp_path)
    with gtune.Campaign():
        pass
    assert (tmp_path / "gtune-results.db").exists()


def test_convergence_traces_and_plot_follow_the_run(
    replay_session: TuningSession, tmp_path: Path
) -> None:
    from gtune.report import convergence_png, convergence_traces

    report = gtune.tune(
        replay_session.kernel, session=replay_session, technique="all", budget=24, confirm=None
    )
    searched = [r for r in report.runs if r.outcome is not None and r.outcome.trace]
    traces = convergence_traces(report)
    assert [t.name for t in traces] == [r.technique for r in searched]
    for trace, run in zip(traces, searched, strict=True):
        assert run.outcome is not None
        assert len(trace.observations) == run.outcome.evaluations
        best = [b for _, _, b in trace.best_so_far()]
        assert all(a >= b for a, b in itertools.pairwise(best))
        assert best[-1] == pytest.approx(run.best_s)
        secs = [o.elapsed_s for o in trace.observations]
        assert secs == sorted(secs) and secs[0] >= run.started_s
    # the searches follow one another on the run's clock
    starts = [r.started_s for r in searched]
    assert starts == sorted(starts)
    png = convergence_png(report, tmp_path / "c.png")
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_time_breakdown_splits_overhead_and_states_one_compile_total(
    replay_session: TuningSession,
) -> None:
    from gtune.report import run_summary_rows

    report = gtune.tune(
        replay_session.kernel, session=replay_session, technique="global", budget=6, confirm=None
    )
    t = report.time
    assert t.overhead_s == pytest.approx(t.space_s + t.startup_s + t.other_s)
    assert min(t.space_s, t.startup_s, t.other_s) >= 0
    assert t.wall_s == pytest.approx(t.compile_s + t.run_s + t.verify_s + t.overhead_s)
    rows = dict(run_summary_rows(report))
    assert rows["compile time"].startswith(f"{t.compile_total_s:.2f} s")
    assert "compil" not in rows["wall time"].replace("compile ", "")  # no second total
    if t.overhead_s > 0:
        assert "solving the space" in rows["overhead"]


def test_the_progress_count_never_passes_its_total() -> None:
    """The confirmation round foresees configurations x rounds; its extra rounds (while
    the rounds disagree) raise the total instead of counting past it ("15/12")."""
    from gtune.result import Result, Status
    from gtune.tuning.events import ConfirmStarted, ResultMeasured, RunStarted

    out = io.StringIO()
    bar = gtune.ProgressBar(Console(file=out, width=120, force_terminal=True))
    bar.on_event(RunStarted("k", "d", "hybrid", (None,)))
    bar.on_event(ConfirmStarted(3, 3))
    result = Result({"WX": 1}, Status.OK, times_s=(1e-3,))
    for _ in range(15):
        bar.on_event(ResultMeasured(result, True, 1e-3))
    bar._stop()
    text = _plain(out.getvalue())
    assert "15/15" in text and "/9" not in text.splitlines()[-1]

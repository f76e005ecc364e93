"""Report formatting over plain data: no OpenCL, no store."""

from __future__ import annotations

import csv
import io
import math
from pathlib import Path

import pytest
from rich.console import Console

from gtune.heuristics import TraceEntry, TuningOutcome
from gtune.measure.result import Result, Status
from gtune.report import (
    CompareCell,
    compare_csv,
    compare_markdown,
    compare_table,
    geomean,
    per_kernel_csv,
    per_kernel_markdown,
    per_kernel_speedups,
    run_summary_rows,
    run_summary_table,
    seconds_text,
    speedups_png,
    strategy_rows,
    technique_table,
)
from gtune.tuning import TechniqueRun, TuningReport


def _cells() -> list[CompareCell]:
    # kernel a: hybrid twice as fast as random; kernel b: both find the same time;
    # kernel c: hybrid found nothing that ran.
    return [
        CompareCell("a", "random", 4.0e-3, 10, 2.0, 0.1),
        CompareCell("a", "hybrid", 2.0e-3, 20, 1.0, 0.2),
        CompareCell("b", "random", 1.0e-3, 10, 3.0, 0.3),
        CompareCell("b", "hybrid", 1.0e-3, 30, 2.0, 0.1),
        CompareCell("c", "random", 5.0e-3, 10, 1.0, 0.2),
        CompareCell("c", "hybrid", math.inf, 6, 0.5, 0.0),
    ]


def test_geomean():
    assert geomean([2.0, 8.0]) == pytest.approx(4.0)
    assert geomean([]) is None
    assert geomean([math.inf, 3.0]) == pytest.approx(3.0)


def test_strategy_rows_follow_table3_definitions():
    rows = {r.strategy: r for r in strategy_rows(_cells(), ["hybrid", "random"])}
    assert [r.strategy for r in strategy_rows(_cells(), ["hybrid", "random"])] == [
        "hybrid",
        "random",
    ]
    assert rows["random"].speedup == pytest.approx(1.0)
    assert rows["random"].kernels == 3
    # the kernel where hybrid found nothing is left out of its geometric mean
    assert rows["hybrid"].kernels == 2
    assert rows["hybrid"].speedup == pytest.approx(math.sqrt(2.0 * 1.0))
    assert rows["hybrid"].configs == pytest.approx((20 + 30 + 6) / 3)
    assert rows["hybrid"].compile_s == pytest.approx((1.0 + 2.0 + 0.5) / 3)
    assert rows["random"].run_s == pytest.approx((0.1 + 0.3 + 0.2) / 3)
    # a tie (kernel b) counts for both
    assert rows["hybrid"].best_count == 2
    assert rows["random"].best_count == 2


def test_per_kernel_speedups():
    sp = per_kernel_speedups(_cells())
    assert sp["hybrid"] == {"a": pytest.approx(2.0), "b": pytest.approx(1.0)}
    assert set(sp["random"].values()) == {1.0}


def test_markdown_and_csv_agree():
    rows = strategy_rows(_cells(), ["random", "hybrid"])
    md = compare_markdown(rows, ["a note"])
    assert md.splitlines()[0].startswith("| strategy |")
    assert "| hybrid | 1.414 | 2 |" in md and "- a note" in md
    parsed = list(csv.DictReader(io.StringIO(compare_csv(rows))))
    assert [r["strategy"] for r in parsed] == ["random", "hybrid"]
    assert float(parsed[1]["speedup"]) == pytest.approx(math.sqrt(2.0))
    assert int(parsed[0]["best_count"]) == 2


def test_per_kernel_csv_round_trip():
    cells = _cells()
    parsed = list(csv.DictReader(io.StringIO(per_kernel_csv(cells))))
    assert len(parsed) == len(cells)
    a_hybrid = next(r for r in parsed if r["kernel"] == "a" and r["strategy"] == "hybrid")
    assert float(a_hybrid["speedup"]) == pytest.approx(2.0)
    c_hybrid = next(r for r in parsed if r["kernel"] == "c" and r["strategy"] == "hybrid")
    assert c_hybrid["best_s"] == "" and c_hybrid["speedup"] == ""


def test_cell_dict_round_trip():
    for c in _cells():
        assert CompareCell.from_dict(c.to_dict()) == c


def test_speedups_png(tmp_path: Path):
    out = speedups_png(_cells(), ["random", "hybrid"], tmp_path / "s.png", title="t")
    assert out.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_compare_table_renders():
    console = Console(width=120, record=True)
    console.print(compare_table(strategy_rows(_cells(), ["random", "hybrid"]), title="x"))
    text = console.export_text()
    assert "hybrid" in text and "1.414" in text


def _result(config: dict[str, int], t: float, status: Status = Status.OK) -> Result:
    times = (t, t, t) if status is Status.OK else ()
    return Result(config, status, compile_s=0.5, times_s=times)


def _report(default_s: float | None, found_s: float) -> TuningReport:
    best = _result({"WX": 8, "WY": 2}, found_s)
    failed = _result({"WX": 64, "WY": 64}, 0.0, Status.LAUNCH_FAILED)
    trace = [TraceEntry(0, dict(best.config), best, "x", 0)]
    trace.append(TraceEntry(1, dict(failed.config), failed, "x", 0))
    outcome = TuningOutcome("hybrid", dict(best.config), best, trace, [], [], "done", 1.0)
    report = TuningReport(
        kernel="k",
        kernel_label="k.yaml",
        sizes={"NX": 64, "NY": 64},
        device="dev",
        device_identity="dev-1",
        strategy="hybrid",
        technique="global",
        runs=[TechniqueRun("global", 100, outcome, measured=2, best_technique="global")],
        bytes_moved=2 * 64 * 64 * 4,
        points=64 * 64,
        flops_per_point=10.0,
        space_size=100,
        parameters=["WY", "WX"],
    )
    if default_s is not None:
        report.default_config = {"WX": 16, "WY": 1}
        report.default_result = _result({"WX": 16, "WY": 1}, default_s)
    return report


def test_tuning_report_metrics():
    r = _report(4e-6, 2e-6)
    assert r.speedup == pytest.approx(2.0)
    assert r.gbs() == pytest.approx(2 * 64 * 64 * 4 / 2e-6 / 1e9)
    assert r.gflops() == pytest.approx(10.0 * 64 * 64 / 2e-6 / 1e9)
    assert r.evaluations == 2 and r.compile_s == pytest.approx(1.0)
    assert list(r.best_config or {}) == ["WY", "WX"]  # the description's order
    d = r.to_dict()
    assert d["speedup_over_default"] == pytest.approx(2.0)
    assert d["technique_choice"] == "global"
    assert len(d["runs"][0]["outcome"]["trace"]) == 2


def test_run_summary_without_default():
    r = _report(None, 2e-6)
    r.default_note = "the description gives no default configuration"
    rows = dict(run_summary_rows(r))
    assert rows["speedup over default"] == "-"
    assert rows["default configuration"] == r.default_note
    console = Console(width=160, record=True)
    console.print(run_summary_table(r))
    console.print(technique_table(r))
    text = console.export_text()
    assert "WY=2 WX=8" in text and "global" in text


def test_seconds_text():
    assert seconds_text(2.5e-6) == "2.50 µs"
    assert seconds_text(0.0125) == "12.500 ms"
    assert seconds_text(math.inf) == "-"


def test_per_kernel_markdown_bolds_each_kernels_fastest():
    cells = [*_cells(), CompareCell("a", "expert", 9.0e-3, 5, 1.0, 0.1, remeasured_s=2.0e-3)]
    md = per_kernel_markdown(cells, ["random", "hybrid", "expert"]).splitlines()
    assert md[0] == "| kernel | random | hybrid | expert |"
    rows = {line.split(" | ")[0].lstrip("| "): line for line in md[2:]}
    assert set(rows) == {"a", "b", "c"}
    # a: hybrid's search best and expert's re-measured time tie at 2 ms
    assert rows["a"].count("**2.000 ms**") == 2 and "4.000 ms (10)" in rows["a"]
    assert rows["b"].count("**1.000 ms**") == 2  # the same time: a tie
    assert "| - |" in rows["c"] and "**5.000 ms** (10)" in rows["c"]


def test_speedups_png_draws_few_kernels_as_bars(tmp_path: Path):
    from gtune.report import FEW_KERNELS

    few = _cells()
    assert len({c.kernel for c in few}) < FEW_KERNELS
    many = [
        CompareCell(f"k{i}", s, t * (1 + i / 10), 10, 1.0, 0.1)
        for i in range(FEW_KERNELS + 2)
        for s, t in (("random", 4e-3), ("hybrid", 2e-3))
    ]
    import matplotlib.image as mpimg

    bars = speedups_png(few, ["random", "hybrid"], tmp_path / "few.png")
    hist = speedups_png(many, ["random", "hybrid"], tmp_path / "many.png")
    # the bar chart is one panel scaled to the kernels; the histograms one panel a strategy
    assert mpimg.imread(bars).shape != mpimg.imread(hist).shape


def test_summary_counts_failures_and_says_when_most_failed():
    r = _report(4e-6, 2e-6)  # one ok, one launch_failed: not most
    rows = dict(run_summary_rows(r))
    assert rows["outcomes"] == "1 launch_failed, 1 ok"
    assert "GB/s if every array is read or written whole once" in rows["bandwidth"]
    outcome = r.runs[0].outcome
    assert outcome is not None
    for i, status in enumerate([Status.WRONG_RESULT, Status.WRONG_RESULT]):
        bad = Result({"WX": 2 + i, "WY": 1}, status, message="3 output elements differ")
        outcome.trace.append(TraceEntry(2 + i, dict(bad.config), bad, "x", 0))
    assert r.status_counts == {"wrong_result": 2, "launch_failed": 1, "ok": 1}
    assert r.failed == 3 and r.mostly_failed
    rows = dict(run_summary_rows(r))
    assert rows["outcomes"].startswith("2 wrong_result, 1 launch_failed, 1 ok (most failed")
    assert r.to_dict()["statuses"] == {"wrong_result": 2, "launch_failed": 1, "ok": 1}

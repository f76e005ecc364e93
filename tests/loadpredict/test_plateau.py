"""benchmarks/predict/plateau.py's stop on made-up traces: a search whose gain comes late
(a plateau, then a step, as vec's rim step) is cut before it; a steady one is not."""

from __future__ import annotations

from pathlib import Path

from tests.conftest import load_script

ROOT = Path(__file__).resolve().parents[2]
plateau = load_script(ROOT / "benchmarks" / "predict" / "plateau.py")
regret = load_script(ROOT / "benchmarks" / "predict" / "regret.py")


def trace(times: list[float]) -> object:
    return regret.Trace(times, [1.0] * len(times))


def test_a_late_step_is_cut_off_by_the_plateau_stop() -> None:
    times = [2.0 - 0.5 * i / 59 for i in range(60)] + [1.5] * 100 + [1.0] + [1.2] * 20
    n = plateau.stop_at(trace(times), 0.33, 0.005, 60)
    assert 60 < n < 160  # stopped on the plateau, before the step at 160
    assert trace(times).best(n) == 1.5 and trace(times).best() == 1.0


def test_a_steady_search_runs_to_its_end() -> None:
    times = [2.0 * 0.99**i for i in range(200)]
    assert plateau.stop_at(trace(times), 0.33, 0.005, 60) == 200


def test_the_table_names_every_technique(tmp_path: Path) -> None:
    traces = {
        "k": {t: trace([2.0 - 0.01 * i for i in range(80)]) for t in ("vec", "stream", "global")}
    }
    text = plateau.table(traces)
    assert text.count("| vec |") == len(plateau.RULES) and "| global |" in text

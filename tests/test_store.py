from __future__ import annotations

from pathlib import Path

import pytest

from gtune.exceptions import RecordingMissing
from gtune.measure import ReplayEvaluator, Result, Status, StoredEvaluator
from gtune.store import SQLiteStore


def _result(wx: int, t: float, status: Status = Status.OK) -> Result:
    return Result(
        {"WX": wx},
        status,
        compile_s=0.1,
        times_s=(t, t * 1.1, t * 0.9) if status is Status.OK else (),
    )


def test_store_round_trip_and_no_duplicates(tmp_path: Path):
    with SQLiteStore(tmp_path / "r.db") as store:
        assert store.add(
            _result(1, 2e-3), device="d", kernel_id="k", kernel_name="heat", problem={"NX": 8}
        )
        assert not store.add(_result(1, 9.0), device="d", kernel_id="k")  # same key: ignored
        assert store.add(_result(1, 3e-3), device="other", kernel_id="k")
        got = store.results(device="d", kernel_id="k")
        assert len(got) == 1 and got[0].times_s == pytest.approx((2e-3, 2.2e-3, 1.8e-3))
        rows = list(store.rows(kernel="heat"))
        assert rows[0].problem == {"NX": 8} and rows[0].result.status is Status.OK
    with SQLiteStore(tmp_path / "r.db") as again:  # persisted
        assert again.count() == 2


def test_stored_evaluator_measures_each_configuration_once(tmp_path: Path):
    recording = ReplayEvaluator([_result(w, w * 1e-3) for w in (1, 2, 4, 8)])
    with SQLiteStore(tmp_path / "r.db") as store:
        ev = StoredEvaluator(recording, store, device="d", kernel_id="k")
        first = list(ev.evaluate_batch([{"WX": 1}, {"WX": 2}, {"WX": 1}]))
        assert [r.config["WX"] for r in first] == [1, 2, 1]
        assert ev.measured == 2 and ev.reused == 1
        # a new evaluator over the same store (a resumed run) re-measures nothing
        ev2 = StoredEvaluator(recording, store, device="d", kernel_id="k")
        ev2.evaluate({"WX": 2})
        list(ev2.evaluate_batch([{"WX": 4}, {"WX": 1}]))
        assert ev2.measured == 1 and ev2.reused == 2
        assert [c["WX"] for c in recording.calls] == [1, 2, 4]


def test_replay_refuses_unrecorded_configurations():
    replay = ReplayEvaluator([_result(1, 1e-3)], source="rec.json")
    assert replay.evaluate({"WX": 1}).median_s == pytest.approx(1e-3)
    with pytest.raises(
        RecordingMissing, match=r"rec.json: configuration \{\"WX\":2\} was never measured"
    ):
        replay.evaluate({"WX": 2})


def test_replay_reads_exported_json(tmp_path: Path):
    import json

    path = tmp_path / "rec.json"
    path.write_text(
        json.dumps(
            {"results": [_result(4, 5e-4).to_dict(), _result(8, 0, Status.LAUNCH_FAILED).to_dict()]}
        )
    )
    replay = ReplayEvaluator.from_json(path)
    assert len(replay) == 2
    assert replay.evaluate({"WX": 8}).status is Status.LAUNCH_FAILED

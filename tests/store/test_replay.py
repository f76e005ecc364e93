"""The replay evaluator that the store tests put behind a StoredEvaluator."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from gtune.exceptions import RecordingMissing
from gtune.measure import ReplayEvaluator
from gtune.result import Status
from gtune.testing.store import result


def test_replay_refuses_unrecorded_configurations() -> None:
    replay = ReplayEvaluator([result(1, 1e-3)], source="rec.json")
    assert replay.evaluate({"WX": 1, "WY": 1}).median_s == pytest.approx(1e-3)
    with pytest.raises(RecordingMissing, match=r"rec.json: configuration .* was never measured"):
        replay.evaluate({"WX": 2, "WY": 1})


def test_replay_reads_exported_json(tmp_path: Path) -> None:
    path = tmp_path / "rec.json"
    rows = [result(4, 5e-4).to_dict(), result(8, status=Status.LAUNCH_FAILED).to_dict()]
    path.write_text(json.dumps({"results": rows}))
    replay = ReplayEvaluator.from_json(path)
    assert len(replay) == 2
    assert replay.evaluate({"WX": 8, "WY": 1}).status is Status.LAUNCH_FAILED


def test_replay_can_answer_unrecorded_configurations_as_not_run() -> None:
    """A search replayed on a partial recording spends its budget on what was never
    measured, as on the device, but never takes it as its best."""
    replay = ReplayEvaluator([result(1, 1e-3)], source="rec.json", unrecorded="fail")
    missing = replay.evaluate({"WX": 2, "WY": 1})
    assert missing.status is Status.CRASHED and not missing.ok
    assert missing.message == "not recorded"
    assert replay.unrecorded_calls == [{"WX": 2, "WY": 1}]
    assert replay.evaluate({"WX": 1, "WY": 1}).ok
    assert replay.unrecorded_calls == [{"WX": 2, "WY": 1}]
    assert len(replay.calls) == 2


def test_replay_unrecorded_mode_is_checked() -> None:
    from gtune.exceptions import InputError

    with pytest.raises(InputError, match="unrecorded must be 'raise' or 'fail'"):
        ReplayEvaluator([], unrecorded="skip")  # type: ignore[arg-type]


def test_replay_reads_a_recording_made_before_a_parameter_existed() -> None:
    """A recorded configuration without a parameter the kernel has now ran with it at
    its default: served as that configuration, and as no other value of it."""
    old = result(1, 1e-3)  # {"WX": 1, "WY": 1}, recorded before RIM
    replay = ReplayEvaluator([old], unrecorded="fail", defaults={"WX": 16, "WY": 4, "RIM": 0})
    served = replay.evaluate({"WX": 1, "WY": 1, "RIM": 0})
    assert served.ok and served.config == {"WX": 1, "WY": 1, "RIM": 0}
    assert not replay.evaluate({"WX": 1, "WY": 1, "RIM": 1}).ok  # not recorded
    assert replay.configs() == [{"WX": 1, "WY": 1, "RIM": 0}]
    # without defaults the recording is read as it was written
    assert not ReplayEvaluator([old], unrecorded="fail").evaluate({"WX": 1, "WY": 1, "RIM": 0}).ok

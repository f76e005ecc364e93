"""Scratch folders of a killed process do not pile up; waits end when a stop is asked."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from gtune import processes
from gtune.processes import Stopped, scratch_dir, wait_stoppable


def test_scratch_folders_of_ended_processes_are_removed(tmp_path: Path) -> None:
    ended = subprocess.Popen([sys.executable, "-c", "pass"])
    ended.wait()
    stale = tmp_path / f"gtune-problem-{ended.pid}-abc"
    (stale / "inner").mkdir(parents=True)
    (stale / "inner" / "a.npy").write_bytes(b"x")
    alive = tmp_path / f"gtune-problem-{os.getpid()}-def"
    alive.mkdir()
    other_kind = tmp_path / f"gtune-space-{ended.pid}-ghi"
    other_kind.mkdir()
    with scratch_dir("problem", str(tmp_path)) as made:
        assert Path(made).name.startswith(f"gtune-problem-{os.getpid()}-")
        assert not stale.exists() and alive.exists() and other_kind.exists()
    assert not Path(made).exists()


def test_a_wait_gives_up_after_the_grace_once_a_stop_is_asked(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(processes, "STOP_GRACE_S", 0.3)
    assert wait_stoppable(lambda s: True, 10) is True
    assert wait_stoppable(lambda s: time.sleep(s) or False, 0.2) is False
    processes.request_stop()
    try:
        started = time.monotonic()
        with pytest.raises(Stopped):
            wait_stoppable(lambda s: time.sleep(s) or False, 60)
        assert time.monotonic() - started < 2
    finally:
        processes.clear_stop()

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
        assert time.monotonic() - started < 10  # the grace, not the 60 s wait
    finally:
        processes.clear_stop()


@pytest.mark.opencl
def test_a_worker_that_cannot_start_says_why(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, data_dir: Path
) -> None:
    """The worker's own last words (here: a full disk, said by a site hook that runs only
    in measuring workers) are in the message."""
    from gtune.description import load_kernel
    from gtune.exceptions import EnvironmentProblem
    from gtune.measure.opencl_evaluator import OpenCLEvaluator

    hook = tmp_path / "site"
    hook.mkdir()
    (hook / "sitecustomize.py").write_text(
        "import os, sys\n"
        "if 'gtune-problem-' in os.environ.get('CUDA_CACHE_PATH', ''):\n"
        "    sys.stderr.write('OSError: [Errno 28] No space left on device\\n')\n"
        "    sys.stderr.flush()\n"
        "    os._exit(1)\n"
    )
    monkeypatch.setenv("PYTHONPATH", f"{hook}{os.pathsep}{os.environ.get('PYTHONPATH', '')}")
    with pytest.raises(EnvironmentProblem, match="No space left on device") as err:
        OpenCLEvaluator(load_kernel(data_dir / "naive7.cl"), compile_workers=0)
    assert "exited with status 1" in err.value.render()


class _Stop(Exception):
    pass


def test_a_stop_signal_while_a_child_starts_is_raised_once_it_is_held() -> None:
    """A stop signal's handler (as the command line's) that comes inside stops_deferred
    raises at the section's end, after the child started there is known to the caller,
    who ends it; outside a section the handler raises at once."""
    import signal

    def raise_stop() -> None:
        raise _Stop()

    def handler(signum: int, frame: object) -> None:
        if not processes.defer_stop(raise_stop):
            raise_stop()

    previous = signal.signal(signal.SIGUSR1, handler)
    started: list[subprocess.Popen[bytes]] = []
    try:
        with pytest.raises(_Stop):
            try:
                with processes.stops_deferred():
                    started.append(
                        subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
                    )
                    os.kill(os.getpid(), signal.SIGUSR1)
                    time.sleep(0.05)  # the handler has run: nothing raised yet
                    started.append(started[0])  # this line ran
            finally:
                for p in started[:1]:
                    p.kill()
                    p.wait(timeout=10)
        assert len(started) == 2 and started[0].returncode is not None
        with pytest.raises(_Stop):  # outside a section: at once
            os.kill(os.getpid(), signal.SIGUSR1)
            time.sleep(5)
    finally:
        signal.signal(signal.SIGUSR1, previous)


def test_a_section_off_the_main_thread_defers_nothing() -> None:
    """A handler runs on the main thread: a section another thread opened must not
    keep its stop (it would be raised in that thread, or never)."""
    import threading

    opened = threading.Event()
    leave = threading.Event()

    def section() -> None:
        with processes.stops_deferred():
            opened.set()
            leave.wait(10)

    t = threading.Thread(target=section)
    t.start()
    try:
        assert opened.wait(10)
        assert processes.defer_stop(lambda: None) is False
    finally:
        leave.set()
        t.join(10)

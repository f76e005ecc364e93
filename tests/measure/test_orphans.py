"""Workers die with gtune, however gtune ends, even while a kernel hangs."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.conftest import ROOT
from tests.procs import alive, children, cmdline

# every test here waits on a kernel that hangs (spinning one core, not all of them)
pytestmark = [pytest.mark.opencl, pytest.mark.usefixtures("one_pocl_thread")]


def _hanging_gtune(kernel: Path, db: Path) -> tuple[subprocess.Popen[bytes], list[int]]:
    """``gtune measure`` on a kernel that never returns, once its worker is running it."""
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    cmd = [sys.executable, "-m", "gtune", "--db", str(db), "measure", str(kernel)]
    proc = subprocess.Popen(
        [*cmd, "--config", "WX=8,WY=4,WZ=1", "--timeout", "300"],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    deadline = time.monotonic() + 120
    workers: list[int] = []
    while time.monotonic() < deadline and proc.poll() is None:
        # the short-lived ``--devices`` worker lists the devices and exits; wait for a measurer
        workers = [
            c
            for c in children(proc.pid)
            if "gtune.measure._worker" in (cmd := cmdline(c)) and "--devices" not in cmd
        ]
        if workers:
            break
        time.sleep(0.2)
    if not workers:
        proc.kill()
        proc.wait()
        pytest.fail("gtune started no worker")
    time.sleep(3.0)  # let the worker reach the hanging launch
    return proc, workers


def _stop(
    proc: subprocess.Popen[bytes], workers: list[int], signals: list[signal.Signals]
) -> tuple[int, float, list[int]]:
    """Send ``signals`` to gtune; return its exit status, how long it took to end after
    them and the workers still alive 15 s later (they are killed before returning)."""
    try:
        for sig in signals:
            proc.send_signal(sig)
        started = time.monotonic()
        status = proc.wait(timeout=60)
        took = time.monotonic() - started
        deadline = time.monotonic() + 15
        while time.monotonic() < deadline and any(alive(w) for w in workers):
            time.sleep(0.1)
        survivors = [w for w in workers if alive(w)]
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        for w in workers:  # never leave a spinning worker behind, even when failing
            if alive(w) and "gtune.measure._worker" in cmdline(w):
                os.kill(w, signal.SIGKILL)
    return status, took, survivors


# SIGTERM stands for SIGHUP too: the command line handles both with one handler
# (gtune.commands._common.STOP_SIGNALS), and gtune's workers outlive neither a handled
# signal (SIGTERM, SIGINT) nor an unhandled one (SIGKILL).
@pytest.mark.parametrize(
    "sig", [signal.SIGTERM, signal.SIGKILL, signal.SIGINT], ids=lambda s: s.name
)
def test_no_worker_survives_gtune(kernel_copy, tmp_path, sig):
    kernel = kernel_copy("naive7", lambda t: t + "build_options: [-DHANG]\n")
    proc, workers = _hanging_gtune(kernel, tmp_path / "r.db")
    assert all(alive(w) for w in workers)
    _, _, survivors = _stop(proc, workers, [sig])
    assert survivors == [], f"workers {survivors} outlived gtune ({sig.name})"


def test_second_ctrl_c_ends_gtune_at_once(kernel_copy, tmp_path):
    """Ctrl-C twice: the second one does not wait for cleanup, and no worker survives."""
    kernel = kernel_copy("naive7", lambda t: t + "build_options: [-DHANG]\n")
    proc, workers = _hanging_gtune(kernel, tmp_path / "r.db")
    status, took, survivors = _stop(proc, workers, [signal.SIGINT, signal.SIGINT])
    assert status == 130
    assert took < 20, f"gtune took {took:.1f} s to end after two Ctrl-C"
    assert survivors == []

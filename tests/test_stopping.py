"""gtune stops when asked, whatever it is waiting for: a reference that loops, a kernel
that hangs; a reference that exits or returns nonsense is an error with a message."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from gtune.description import TRUST_ENV
from tests.conftest import DATA, ROOT, run_gtune
from tests.procs import alive, cmdline, descendants

pytestmark = pytest.mark.opencl


def _naive7(folder: Path, reference: str | None = None, option: str | None = None) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    for f in DATA.glob("naive7*"):
        shutil.copy(f, folder / f.name)
    if reference is not None:
        (folder / "naive7_ref.py").write_text(reference)
    if option is not None:
        with open(folder / "naive7.yaml", "a") as fh:
            fh.write(f"build_options: [{option}]\n")
    return folder / "naive7.cl"


def _stop_when(
    args: list[str], child: str, sig: signal.Signals, tmp_path: Path
) -> tuple[int, float, list[int]]:
    """Start gtune, wait until a child whose command line holds ``child`` runs (not the
    device query; and a moment more), send ``sig``; the exit status, seconds to exit, and
    the children."""
    env = dict(os.environ, PYTHONPATH=str(ROOT), **{TRUST_ENV: str(tmp_path)})
    cmd = [sys.executable, "-m", "gtune", "--db", str(tmp_path / "r.db"), *args]
    proc = subprocess.Popen(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    deadline = time.monotonic() + 120
    seen: list[int] = []
    while time.monotonic() < deadline and proc.poll() is None and not seen:
        lines = {p: cmdline(p) for p in descendants(proc.pid)}
        seen = [p for p, c in lines.items() if child in c and "--devices" not in c]
        time.sleep(0.2)
    assert seen, f"no {child} started: {proc.stderr.read().decode() if proc.stderr else ''}"
    time.sleep(2.0)
    children = descendants(proc.pid)
    proc.send_signal(sig)
    sent = time.monotonic()
    try:
        proc.wait(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
    return proc.returncode, time.monotonic() - sent, children


LOOP = "def reference(arrays, sizes, scalars):\n    while True:\n        pass\n"


@pytest.mark.parametrize(("sig", "status"), [(signal.SIGINT, 130), (signal.SIGTERM, 2)])
def test_a_reference_that_loops_stops_with_the_run(
    tmp_path: Path, sig: signal.Signals, status: int
) -> None:
    kernel = _naive7(tmp_path / "k", LOOP)
    code, took, children = _stop_when(
        ["run", str(kernel)], "gtune.measure._reference", sig, tmp_path
    )
    assert code == status
    assert took < 10, f"took {took:.1f} s to stop"
    time.sleep(0.5)
    assert not [c for c in children if alive(c)], "a child outlived gtune"


@pytest.mark.usefixtures("one_pocl_thread")  # the hanging kernel spins one core
def test_ctrl_c_does_not_wait_for_a_hanging_kernel(tmp_path: Path) -> None:
    kernel = _naive7(tmp_path / "k", option="-DHANG")
    code, took, children = _stop_when(
        ["run", str(kernel), "--timeout", "300", "--budget", "5"],
        "gtune.measure._worker",
        signal.SIGINT,
        tmp_path,
    )
    assert code == 130
    assert took < 15, f"took {took:.1f} s to stop"
    time.sleep(0.5)
    assert not [c for c in children if alive(c)], "a worker outlived gtune"


@pytest.mark.parametrize(
    ("body", "needle"),
    [
        ("import sys\n    sys.exit(0)", "exited with status 0 without returning"),
        ("import os\n    os._exit(5)", "exited with status 5"),
        ("return {'out': 'not numbers'}", "not an array of numbers"),
        ("return {'out': [['a'] * 32] * 16}", "not an array of numbers"),
    ],
)
def test_a_reference_that_exits_or_returns_nonsense_is_an_error(
    tmp_path: Path, body: str, needle: str
) -> None:
    kernel = _naive7(tmp_path / "k", f"def reference(arrays, sizes, scalars):\n    {body}\n")
    done = run_gtune(
        "measure", str(kernel), db=tmp_path / "r.db", env_extra={TRUST_ENV: str(tmp_path)}
    )
    assert done.returncode == 2, done.stderr
    assert needle in done.stderr and "reference" in done.stderr
    assert "Traceback" not in done.stderr


_CTRL_C_WHILE_LOADING = """
import os, signal, sys
import gtune.__main__ as entry

def ctrl_c_once_noted(signum, handler, _install=signal.signal):
    previous = _install(signum, handler)
    signal.signal = _install
    os.kill(os.getpid(), signal.SIGINT)  # a Ctrl-C the moment gtune notes them
    return previous

signal.signal = ctrl_c_once_noted
sys.argv = ["gtune", *sys.argv[1:]]
sys.exit(entry.main())
"""


@pytest.mark.parametrize(("command", "status"), [("run", 130), ("campaign", 2)])
def test_ctrl_c_while_the_command_line_loads(command: str, status: int, tmp_path: Path) -> None:
    """A Ctrl-C while gtune loads its command line and reads the options (half a second
    before any work) stops it as one a moment later does: its exit status, one message,
    no KeyboardInterrupt traceback, nothing started."""
    heat = str(ROOT / "stencils" / "heat3d.cl")
    args = {
        "run": ["--db", str(tmp_path / "r.db"), "run", heat, "--size", "16x16x16"],
        "campaign": ["campaign", "--kernels", heat, "--sizes", "16x16x16"],
    }[command]
    args += ["--out", str(tmp_path / "out")] if command == "campaign" else []
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    done = subprocess.run(
        [sys.executable, "-c", _CTRL_C_WHILE_LOADING, *args],
        capture_output=True,
        text=True,
        timeout=120,
        env=env,
    )
    assert done.returncode == status, done.stderr
    assert "interrupted" in done.stderr
    assert "Traceback" not in done.stderr and "KeyboardInterrupt" not in done.stderr
    assert not (tmp_path / "out").exists() and not (tmp_path / "r.db").exists()

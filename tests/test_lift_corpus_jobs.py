"""``benchmarks/lift_corpus.py --jobs``: kernels dealt to several processes on one
device, their results merged; a SIGTERM keeps every kernel a job finished (real PoCL)."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.conftest import ROOT

pytestmark = pytest.mark.opencl

SCRIPT = ROOT / "benchmarks" / "lift_corpus.py"
SMALL = ["--small", "--budget", "3", "--rounds", "1", "--device", "pthread"]


def _run(out: Path, *args: str, timeout: float = 240) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, str(SCRIPT), str(out), *args],
        capture_output=True,
        text=True,
        timeout=timeout,
        cwd=ROOT,
    )


@pytest.mark.bench
def test_two_jobs_each_tune_their_share_and_the_report_holds_both(tmp_path: Path) -> None:
    out = tmp_path / "out"
    proc = _run(out, *SMALL, "--jobs", "2", "--kernels", "jacobi2d", "mean3_macro")
    assert proc.returncode == 0, proc.stderr
    assert "job 0: jacobi2d (" in proc.stdout and "job 1: mean3_macro (" in proc.stdout
    data = json.loads((out / "lift_corpus.json").read_text())
    assert sorted(data["kernels"]) == ["jacobi2d", "mean3_macro"]
    assert all("error" not in k and k["fraction_of_copy"] > 0 for k in data["kernels"].values())
    assert data["merged_from"] == [str(out / "job0"), str(out / "job1")]
    # each job ran its own kernel only, in its own folder
    assert "jacobi2d:" in (out / "job0" / "run.log").read_text()
    assert "mean3_macro:" not in (out / "job0" / "run.log").read_text()
    assert "mean3_macro:" in (out / "job1" / "run.log").read_text()


def test_an_unknown_kernel_is_refused_before_any_job_starts(tmp_path: Path) -> None:
    out = tmp_path / "out"
    proc = _run(out, *SMALL, "--jobs", "2", "--kernels", "jacobi2d", "no_such_kernel")
    assert proc.returncode == 2
    assert "manifest.yaml: no_such_kernel" in proc.stderr
    assert not (out / "job0").exists()


@pytest.mark.bench
def test_a_sigterm_stops_the_jobs_and_merges_what_they_finished(tmp_path: Path) -> None:
    out = tmp_path / "out"
    kernels = [  # five each: the jobs are stopped after their first
        *("jacobi2d", "mean3_macro", "star7", "heat_alpha", "pitch_laplace", "gauss_mask"),
        *("heat_dx", "sobel_x", "zero_rim", "wave2d"),
    ]
    proc = subprocess.Popen(
        [sys.executable, str(SCRIPT), str(out), *SMALL, "--jobs", "2", "--kernels", *kernels],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        cwd=ROOT,
    )
    partial = [out / f"job{k}" / "lift_corpus.partial.json" for k in (0, 1)]
    deadline = time.monotonic() + 180
    while not all(p.exists() for p in partial):  # each job has finished a kernel
        assert proc.poll() is None and time.monotonic() < deadline, proc.communicate()
        time.sleep(0.2)
    proc.send_signal(signal.SIGTERM)
    stdout, stderr = proc.communicate(timeout=120)
    assert proc.returncode == 1, stderr  # stopped, not finished
    assert "stopping the jobs; merging what they finished" in stdout
    data = json.loads((out / "lift_corpus.json").read_text())
    finished = set()
    for p in partial:
        finished |= set(json.loads(p.read_text()) if p.exists() else {})
    finished |= {
        name
        for k in (0, 1)
        if (out / f"job{k}" / "lift_corpus.json").exists()
        for name in json.loads((out / f"job{k}" / "lift_corpus.json").read_text())["kernels"]
    }
    assert set(data["kernels"]) == finished
    assert 2 <= len(finished) < len(kernels)

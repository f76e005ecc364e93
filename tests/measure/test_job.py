"""Measurement jobs as plain data: JSON round trips, and a fresh process runs one alone."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from gtune.exceptions import InputError
from gtune.kernel import load_kernel
from gtune.measure.job import MeasureJob, MeasureOutcome
from gtune.measure.result import Status
from gtune.measure.stats import TimingPolicy
from tests.conftest import DATA, ROOT


def _naive_job(tmp_path: Path) -> MeasureJob:
    for f in DATA.glob("naive7*"):
        shutil.copy(f, tmp_path / f.name)
    kernel = load_kernel(tmp_path / "naive7.cl", {"NX": 16, "NY": 8, "NZ": 8})
    config = dict(kernel.default_config() or {})
    return MeasureJob.for_kernel(
        kernel, config, "0:0", timing=TimingPolicy(min_runs=2, max_runs=4), seed=7
    )


def test_job_round_trips_through_json(tmp_path: Path) -> None:
    job = _naive_job(tmp_path)
    again = MeasureJob.from_json(job.to_json())
    assert again == job and again.key == job.key
    assert set(job.files) == {"naive7.cl", "naive7_ref.py"}
    heat = load_kernel(ROOT / "stencils" / "heat3d.cl", {"NX": 16, "NY": 8, "NZ": 8})
    hjob = MeasureJob.for_kernel(heat, dict(heat.default_config() or {}), "0:0")
    assert MeasureJob.from_json(hjob.to_json()) == hjob
    assert hjob.trust_modules == ("gtune.stencils.reference",)


def test_malformed_jobs_are_one_clear_error() -> None:
    for text in ("not json", "{}", json.dumps({"version": 99})):
        with pytest.raises(InputError):
            MeasureJob.from_json(text)
    bad = json.loads(
        MeasureJob.for_kernel(
            load_kernel(ROOT / "stencils" / "heat3d.cl", {"NX": 16, "NY": 8, "NZ": 8}), {}, "0:0"
        ).to_json()
    )
    bad["files"] = {"../evil.cl": "AAAA"}
    with pytest.raises(InputError):
        MeasureJob.from_dict(bad).kernel(Path("/nonexistent"))


@pytest.mark.opencl
def test_a_fresh_process_measures_a_job_from_its_json_alone(tmp_path: Path) -> None:
    src = tmp_path / "src"
    src.mkdir()
    job = _naive_job(src)
    shutil.rmtree(src)  # the description's folder is gone: the job carries what it needs
    work = tmp_path / "elsewhere"
    work.mkdir()
    (work / "job.json").write_text(job.to_json())
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    proc = subprocess.run(
        [sys.executable, "-m", "gtune.measure.job", "job.json"],
        cwd=work,
        capture_output=True,
        text=True,
        timeout=300,
        env=env,
    )
    assert proc.returncode == 0, proc.stderr
    outcome = MeasureOutcome.from_json(proc.stdout)
    assert outcome.job == job.key
    result = outcome.as_result
    assert result.status is Status.OK, result.message
    assert 2 <= len(result.times_s) <= 4
    assert result.config == job.config

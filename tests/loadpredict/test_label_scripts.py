"""The labelling scripts refuse a carried dataset `gtune train` would not read, before
any device time is spent (benchmarks/predict/label_state.sh, shared by both)."""

from __future__ import annotations

import os
import subprocess
import sys
import tarfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PREDICT = ROOT / "benchmarks" / "predict"


def _state(tmp_path: Path) -> tuple[Path, Path]:
    """A STATE whose part A holds a dataset under a name `gtune train` ignores, and a
    groups file."""
    state = tmp_path / "state"
    (state / "A").mkdir(parents=True)
    (state / "A" / "datasetA.csv").write_text("kernel,device,heuristic,label\n")
    groups = tmp_path / "groups.txt"
    groups.write_text("16x16x16 suite:star_3d_xyz_r1\n")
    return state, groups


@pytest.mark.parametrize("script", ["collect_two_gpus.sh", "avsa_then_labels.sh"])
def test_a_wrongly_named_dataset_is_refused_before_anything_runs(
    tmp_path: Path, script: str
) -> None:
    state, groups = _state(tmp_path)
    out = tmp_path / "out"
    if script == "collect_two_gpus.sh":
        args = [str(out), "pthread", "60", str(groups), str(groups), str(state)]
    else:
        avsa = tmp_path / "avsa"
        (avsa / "kernels").mkdir(parents=True)
        args = [str(out), "pthread", "60", str(avsa), str(groups), str(groups), str(state)]
    proc = subprocess.run(
        ["bash", str(PREDICT / script), *args],
        capture_output=True,
        text=True,
        timeout=60,
        cwd=ROOT,
    )
    assert proc.returncode == 2, proc.stderr
    assert "datasetA.csv: gtune train reads only NAME-hybrid.csv" in proc.stderr
    assert script in proc.stderr
    # nothing was labelled or measured
    assert not (out / "A.log").exists() and not (out / "avsa0.log").exists()


def test_collect_stops_at_the_first_group_gtune_train_refuses(tmp_path: Path) -> None:
    """A refusal (exit status 2) would meet every later group again: the script stops
    there, packs what it has and says why, instead of spending its call on refusals."""
    groups = tmp_path / "groups.txt"
    groups.write_text("16x16x16 suite:star_3d_xyz_r1\n16x16x16 suite:star_3d_xyz_r2\n")
    out = tmp_path / "out"
    proc = subprocess.run(
        ["bash", str(PREDICT / "collect_complete.sh"), str(out), "pthread", "60", str(groups)],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=ROOT,
        env={
            **os.environ,
            "PATH": f"{Path(sys.executable).parent}:{os.environ['PATH']}",
            "TRAIN_ARGS": "--no-such-option",
            "RESERVE": "0",
        },
    )
    assert proc.returncode == 2, proc.stderr
    assert "gtune train refused the 16x16x16 group" in proc.stderr
    with tarfile.open(out / "collect.tar.gz") as tar:
        member = tar.extractfile("./collect.log")
        assert member is not None
        log = member.read().decode()
    # the second group never started
    assert log.count("train exit status 2") == 1
    assert log.count("== 16x16x16") == 1


def _train_args(part: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    script = f". {PREDICT / 'label_state.sh'} && train_args {part} 16"
    return subprocess.run(
        ["bash", "-c", script], capture_output=True, text=True, timeout=60, env=env
    )


def test_parts_label_three_searches_at_once_unless_told_otherwise() -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("TRAIN_ARGS")}
    env["PATH"] = f"{Path(sys.executable).parent}:{env['PATH']}"
    assert _train_args("A", env).stdout.split() == [
        "--workers-per-device",
        "3",
        "--compile-workers",
        "7",
    ]
    env["TRAIN_ARGS_B"] = "--compile-workers 15"
    assert _train_args("B", env).stdout.split() == ["--compile-workers", "15"]


def test_without_cryptography_a_part_labels_one_search_at_a_time(tmp_path: Path) -> None:
    """Dask's TLS credentials need cryptography (the GPU host's bundle may lack it): the
    part falls back to one search at a time, and says so, before any device time."""
    shadow = tmp_path / "cryptography"
    shadow.mkdir()
    (shadow / "__init__.py").write_text("raise ImportError('not installed')\n")
    env = {k: v for k, v in os.environ.items() if not k.startswith("TRAIN_ARGS")}
    env["PATH"] = f"{Path(sys.executable).parent}:{env['PATH']}"
    env["PYTHONPATH"] = f"{tmp_path}:{env.get('PYTHONPATH', '')}"
    proc = _train_args("A", env)
    assert proc.stdout.split() == ["--compile-workers", "15"]
    assert "one search at a time" in proc.stderr


@pytest.mark.parametrize(("gpus", "expected"), [("1", "0 0 lock0 lock0"), ("2", "0 1 lock0 lock1")])
def test_slots_share_the_one_gpu_and_its_lock(tmp_path: Path, gpus: str, expected: str) -> None:
    """On one GPU both labelling parts and both arms run on GPU 0 under one device lock
    (their timed runs take turns); on two each slot has its own GPU and lock."""
    script = (
        f". {PREDICT / 'label_state.sh'}; "
        'echo "$(gpu_of 0) $(gpu_of 1) $(basename "$(lock_of 0)" | sed s/gtune-//)'
        ' $(basename "$(lock_of 1)" | sed s/gtune-//)"'
    )
    proc = subprocess.run(
        ["bash", "-c", script],
        capture_output=True,
        text=True,
        timeout=30,
        env={**os.environ, "GPUS": gpus, "LOCK_ROOT": str(tmp_path)},
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.split() == expected.split()

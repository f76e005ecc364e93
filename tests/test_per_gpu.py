"""benchmarks/per_gpu.sh: one-GPU device scripts spread over the GPUs of one call, each
in its own folder with its own GPU and device lock, packed one archive a command."""

from __future__ import annotations

import os
import subprocess
import tarfile
from pathlib import Path

from tests.conftest import ROOT

SCRIPT = ROOT / "benchmarks" / "per_gpu.sh"
RECORD = 'echo "$CUDA_VISIBLE_DEVICES $GTUNE_LOCK_DIR" > "$OUT/seen"; '


def run(out: Path, *args: str, gpus: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "GPUS": gpus}
    return subprocess.run(
        ["bash", str(SCRIPT), str(out), *args],
        capture_output=True,
        text=True,
        env=env,
        timeout=60,
        check=False,
    )


def seen(out: Path, name: str) -> list[str]:
    with tarfile.open(out / f"{name}.tar.gz") as tar:
        member = tar.extractfile(f"{name}/seen")
        assert member is not None
        return member.read().decode().split()


def test_commands_go_round_the_gpus_each_with_its_own_folder_and_lock(tmp_path: Path) -> None:
    out = tmp_path / "out"
    done = run(out, f"a={RECORD}", f"b={RECORD}exit 3", f"c={RECORD}sleep 0.2", gpus="2")
    assert done.returncode == 0, done.stderr
    gpu = {n: seen(out, n) for n in "abc"}
    assert [gpu[n][0] for n in "abc"] == ["0", "1", "0"]  # command K on GPU K mod 2
    assert gpu["a"][1] == gpu["c"][1] != gpu["b"][1]  # one lock folder per GPU
    rc = (out / "rc.txt").read_text()
    assert "a (GPU 0): exit status 0" in rc and "b (GPU 1): exit status 3" in rc
    assert sorted(p.name for p in out.iterdir()) == ["a.tar.gz", "b.tar.gz", "c.tar.gz", "rc.txt"]


def test_one_gpu_runs_them_one_after_the_other(tmp_path: Path) -> None:
    out = tmp_path / "out"
    order = 'echo "$1" >> "%s"; ' % (tmp_path / "order")
    done = run(
        out,
        "first=" + order.replace("$1", "first") + "sleep 0.3",
        "second=" + order.replace("$1", "second"),
        gpus="1",
    )
    assert done.returncode == 0, done.stderr
    assert (tmp_path / "order").read_text().split() == ["first", "second"]


def test_bad_arguments_are_refused_before_anything_runs(tmp_path: Path) -> None:
    for args in (["no command"], ["bad name=true"], ["a=true", "a=true"]):
        done = run(tmp_path / "out", *args, gpus="2")
        assert done.returncode == 2 and "per_gpu:" in done.stderr, args
    assert not (tmp_path / "out").exists()

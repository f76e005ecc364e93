"""A write stopped by the file size limit (``ulimit -f``: EFBIG, or SQLite's I/O error)
is one message that names the limit (gtune/cli.py)."""

from __future__ import annotations

import os
import resource
import subprocess
import sys
from pathlib import Path

import pytest

from gtune.result import Result, Status
from gtune.store import open_store
from tests.conftest import ROOT


def _limited(limit: int):  # type: ignore[no-untyped-def]
    def set_limit() -> None:
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))

    return set_limit


def _gtune(args: list[str], limit: int, stdout: object) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "gtune", *args],
        env=dict(os.environ, PYTHONPATH=str(ROOT)),
        stdout=stdout,  # type: ignore[arg-type]
        stderr=subprocess.PIPE,
        text=True,
        timeout=300,
        preexec_fn=_limited(limit),
    )


def test_output_past_the_limit_names_it(tmp_path: Path) -> None:
    db = tmp_path / "r.db"
    with open_store(db) as store:
        for wx in range(1, 60):
            result = Result({"WX": wx, "WY": 4}, Status.OK, 0.05, (1e-4, 1.1e-4, 1.2e-4))
            store.add(result, device="dev", kernel_id="k", kernel_name="heat3d", problem={"NX": 64})
    with open(tmp_path / "out.json", "w") as out:
        done = _gtune(["--db", str(db), "results", "--format", "json"], 2048, out)
    assert done.returncode == 2, done.stderr
    assert "ulimit -f" in done.stderr and "2,048 bytes" in done.stderr
    assert "Traceback" not in done.stderr


@pytest.mark.opencl
def test_a_store_past_the_limit_names_it(tmp_path: Path) -> None:
    heat = str(ROOT / "stencils" / "heat3d.cl")
    args = ["--db", str(tmp_path / "r.db"), "measure", heat, "--size", "16x8x8"]
    done = _gtune(args, 16 * 1024, subprocess.PIPE)
    assert done.returncode == 2, done.stderr
    assert "ulimit -f" in done.stderr and "Traceback" not in done.stderr

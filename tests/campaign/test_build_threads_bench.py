"""benchmarks/campaign/build_threads.py on PoCL: helpers started at once, and the same
kernel's configurations built by helper processes, by threads of one process, and
several to a program (every copy renamed: the program must build)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

pytestmark = [pytest.mark.opencl, pytest.mark.slow, pytest.mark.bench]


def test_starts_and_both_ways_of_building_are_recorded(tmp_path: Path) -> None:
    script = ROOT / "benchmarks" / "campaign" / "build_threads.py"
    ways = "procs:1,threads:2,cache:1,multi:1:2"
    proc = subprocess.run(
        [
            sys.executable,
            str(script),
            str(tmp_path),
            "--size",
            "32x32x32",
            "--starts",
            "1,2",
            "--ways",
            ways,
            "--builds",
            "2",
        ],
        capture_output=True,
        text=True,
        timeout=240,
        cwd=ROOT,
    )
    assert proc.returncode == 0, proc.stderr
    record = json.loads((tmp_path / "build_threads.json").read_text())
    assert [s["processes"] for s in record["start"]] == [1, 2]
    assert all(len(s["ready_s"]) == s["processes"] and s["all_s"] > 0 for s in record["start"])
    # cache:1 builds its sample twice, the second time with the driver's cache filled
    assert [b["way"] for b in record["builds"]] == [
        "procs:1",
        "threads:2",
        "cache:1 first",
        "cache:1 again",
        "multi:1:2",
    ]
    for b in record["builds"]:
        assert b["builds"] == 2 and b["failed"] == 0 and b["builds_per_s"] > 0
        assert b["mean_compile_s"] > 0 and b["cpu_per_build_s"] > 0
    assert "| threads:2 | 2 |" in (tmp_path / "build_threads.md").read_text()

"""benchmarks/campaign/bundle_ab.py on PoCL: three real ``gtune run``s of the same
configurations (bundles off, on, off again), each one's CPU per configuration and the
kernel-time ratios between them."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

pytestmark = [pytest.mark.opencl, pytest.mark.slow, pytest.mark.bench]


def test_three_runs_of_the_same_configurations_are_compared(tmp_path: Path) -> None:
    script = ROOT / "benchmarks" / "campaign" / "bundle_ab.py"
    args = [str(tmp_path), "--size", "32x32x32", "--configs", "3", "--bundle", "3"]
    proc = subprocess.run(
        [sys.executable, str(script), *args],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=ROOT,
    )
    assert proc.returncode == 0, proc.stderr
    record = json.loads((tmp_path / "bundle_ab.json").read_text())
    assert [r["run"] for r in record["runs"]] == ["off", "on", "off-again"]
    assert [r["bundle"] for r in record["runs"]] == ["1", "3", "1"]
    for r in record["runs"]:
        assert r["configs"] == 3 and r["cpu_per_config_s"] > 0 and r["configs_per_s"] > 0
    # the same seed: the same configurations, each compared with itself
    assert record["bundled_vs_alone"]["configs"] == record["noise"]["configs"] == 3
    assert "| on / off | 3 |" in (tmp_path / "bundle_ab.md").read_text()

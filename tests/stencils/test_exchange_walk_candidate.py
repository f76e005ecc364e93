"""Issue 49's halo-exchange probe (``benchmarks/exchange_probe.py`` and
``exchange_walk.cl``, measured and lost: benchmarks/results/h200-limit/temporal-8/
exchange/): heat3d's multi-step walk whose work-groups hand each other their levels'
edges through a global buffer instead of recomputing a halo. Its work-groups wait for
each other, so PoCL must run all of them at once: each test runs the probe in a
process of its own with as many PoCL threads as work-groups. Every configuration must
give numpy's bits for 8 steps, none may give up waiting; a probe built to be wrong
(no exchange) must be reported wrong, and a kernel that cannot get its edges must give
up rather than hang.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

pytestmark = pytest.mark.candidate  # a probe of issue 49: run with --candidates

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "benchmarks" / "exchange_probe.py"


def _probe(tmp_path: Path, variants: list[str], threads: int = 16) -> dict[str, Any]:
    env = {**os.environ, "POCL_MAX_PTHREAD_COUNT": str(threads)}
    cmd = [sys.executable, str(SCRIPT), str(tmp_path), "--device", "pthread", "--size", "32"]
    cmd += ["--rounds", "1", "--reps", "1"]
    for v in variants:
        cmd += ["--variant", v]
    subprocess.run(cmd, check=True, env=env, timeout=600, capture_output=True)
    rows: dict[str, Any] = json.loads((tmp_path / "exchange.json").read_text())["rows"]
    return rows


def test_every_exchange_protocol_gives_numpys_bits(tmp_path: Path) -> None:
    variants = [
        "TB=4,WX=4,WY=16,D=2",  # 4 work-groups; the edges loaded after the levels
        "TB=4,WX=2,WY=8,D=2,PF=1",  # 16 work-groups; loads held across the levels
        "TB=4,WX=2,WY=8,D=3,PF=2",  # copied into local memory, skew 3
        "TB=2,WX=4,WY=8,D=2,PF=2,R=3",  # a short ring of slots
    ]
    rows = _probe(tmp_path, variants)
    for v in variants:
        row = rows[f"exchange {v}"]
        assert row["first"]["bitwise"], (v, row)
        assert row["after"]["bad"] == 0, (v, row)
        assert not row["gave_up"], (v, row)
        assert row["per_step_s"] > 0


def test_the_probe_without_exchange_is_wrong(tmp_path: Path) -> None:
    rows = _probe(tmp_path, ["TB=4,WX=4,WY=16,D=2,NOX=1"])
    row = rows["exchange TB=4,WX=4,WY=16,D=2,NOX=1"]
    assert row["first"]["bad"] > 0  # the blocks' edges computed from zeros
    assert not row["first"]["bitwise"]


def test_a_wait_that_cannot_end_gives_up(tmp_path: Path) -> None:
    # four work-groups on one PoCL thread: the others never run while the first waits
    # for its edges, so the first must give up after SPIN_MAX loads and say so
    rows = _probe(tmp_path, ["TB=2,WX=4,WY=16,D=2,SPIN_MAX=2000"], threads=1)
    row = rows["exchange TB=2,WX=4,WY=16,D=2,SPIN_MAX=2000"]
    assert row["gave_up"]
    assert row["first"]["bad"] > 0

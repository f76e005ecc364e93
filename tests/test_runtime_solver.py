"""``benchmarks/runtime_solver.py --quick`` on PoCL, as the two GPU commands of
benchmarks/results/runtime/README.md run it: default and online in one, offline and
compare in the next (resumed from the first's files), a phase that would end past
``--deadline`` left for a later command, and the report naming every criterion."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = [pytest.mark.opencl, pytest.mark.slow]

ROOT = Path(__file__).resolve().parent.parent
SCRIPT = ROOT / "benchmarks" / "runtime_solver.py"


def _run(out: Path, *options: str) -> subprocess.CompletedProcess[str]:
    done = subprocess.run(
        [sys.executable, str(SCRIPT), str(out), "--quick", *options],
        capture_output=True, text=True, timeout=600,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr[-3000:]
    return done


def test_the_measurement_in_two_commands_resumed(tmp_path: Path) -> None:
    out = tmp_path / "runtime"
    _run(out, "--phases", "default,online", "--deadline", "520")
    default = json.loads((out / "default.json").read_text())
    online = json.loads((out / "online.json").read_text())
    assert default["wall_s"] >= 0.05 * 60  # --quick's --minutes: time-based, not steps
    assert online["steps"] == default["steps"] > 0 and online["finished"]
    assert online["host"] == default["host"]
    assert online["tuning"] in ("switched", "kept")  # --quick waits for the decision
    assert not (out / "offline.json").exists()
    # a phase that cannot end before the deadline is left, and nothing else is run
    left = _run(out, "--phases", "offline,compare", "--deadline", "1")
    assert "left for the next command: offline (would end at" in left.stderr
    assert "compare (needs offline)" in left.stderr and not (out / "offline.json").exists()
    # the next command: a copy of the first's files, as $OUT is emptied between commands
    again = tmp_path / "again"
    again.mkdir()
    for name in ("meta.json", "default.json", "online.json"):
        (again / name).write_text((out / name).read_text())
    done = _run(again, "--phases", "offline,compare", "--deadline", "520")
    offline = json.loads((again / "offline.json").read_text())
    compare = json.loads((again / "compare.json").read_text())
    assert offline["final_choice"] == "tuned"
    assert set(compare["median_per_step_s"]) == {"default", "online", "offline"}
    assert compare["configurations"]["online"] == online["final_configuration"]
    assert all(len(t) == 2 for t in compare["round_per_step_s"].values())  # --quick: 2 rounds
    report = (again / "report.md").read_text()
    assert report == done.stdout.rstrip("\n") + "\n"
    for criterion in (
        "- Default run:",
        "- Online over default wall time:",
        "Same host and device as the default run: yes",
        "Online over offline per step:",
        "The default run's step time over the default's here:",
    ):
        assert criterion in report, criterion

"""``gtune run`` end to end on the real default OpenCL device: a run, and one stopped by
Ctrl-C, in subprocesses; the rest (the refusals of bad input, a plain kernel, the
strategy's options, a run answered from the store) in-process, through
:func:`gtune.cli.main`."""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.conftest import DATA, ROOT, run_gtune
from tests.inprocess import Cli

pytestmark = pytest.mark.opencl

HEAT = str(ROOT / "stencils" / "heat3d.cl")


def _one_error(proc: subprocess.CompletedProcess[str]) -> str:
    """The single error line of a failed command (and no traceback)."""
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert "Traceback" not in proc.stderr
    lines = [ln for ln in proc.stderr.splitlines() if ln.strip()]
    assert lines and lines[0].startswith("gtune: error: "), proc.stderr
    assert len([ln for ln in lines if ln.startswith("gtune: error")]) == 1
    return proc.stderr


def test_run_heat3d_then_resume(tmp_path: Path, gtune_here: Cli):
    """The run a process of its own (its workers started, its time broken down); the
    same command again, answered from the store, in the test's process."""
    db, out1, out2 = tmp_path / "r.db", tmp_path / "a.json", tmp_path / "b.json"
    args = ["run", HEAT, "--size", "16x8x8", "--technique", "global", "--budget", "10"]
    first = run_gtune(*args, "--json", str(out1), db=db)
    assert first.returncode == 0, first.stderr
    assert "best configuration" in first.stdout and "speedup over default" in first.stdout
    data = json.loads(out1.read_text())
    assert data["best_s"] is not None and data["default_s"] is not None
    assert data["best_s"] <= data["default_s"]
    assert data["speedup_over_default"] >= 1.0
    assert 0 < data["evaluations"] <= 10
    assert data["technique"] == "global" and data["technique_choice"] == "global"
    assert data["gbs"] == pytest.approx(data["bytes_moved"] / data["best_s"] / 1e9)
    (run,) = data["runs"]
    trace = run["outcome"]["trace"]
    assert len(trace) == data["evaluations"]
    assert min(e["median_s"] for e in trace if e["status"] == "ok") == data["search_best_s"]
    with sqlite3.connect(db) as con:
        ids = [row[0] for row in con.execute("SELECT kernel_id FROM results")]
    # the search's results, and the confirmation round's under an identity of their own
    searched = [i for i in ids if not i.endswith("/confirmed")]
    assert len(searched) == data["measured"]
    assert len(ids) - len(searched) == len(data["confirmation"]["entries"])

    second = gtune_here(*args, "--json", str(out2), db=db)
    assert second.returncode == 0, second.stderr
    again = json.loads(out2.read_text())
    assert again["measured"] == 0, "a repeated run measures nothing new"
    assert again["reused"] == data["measured"] + data["reused"]
    assert again["search_best_config"] == data["search_best_config"]
    # the answer comes from the confirmation round, in which the default is re-measured
    conf = data["confirmation"]
    assert data["confirmed"] and conf["rounds"] >= 1
    assert data["best_config"] == conf["best_config"]
    assert any(e["default"] for e in conf["entries"])
    assert isinstance(data["speedup_significant"], bool)
    assert "confirmation round" in first.stdout
    # the wall time is broken down into parts that sum to it
    t = data["time"]
    parts = t["compile_s"] + t["run_s"] + t["verify_s"] + t["overhead_s"]
    assert parts == pytest.approx(t["wall_s"])
    assert min(t["compile_s"], t["run_s"], t["verify_s"], t["overhead_s"]) >= 0
    overhead = ("space_s", "startup_s", "store_s", "wait_s", "other_s")
    assert sum(t[k] for k in overhead) == pytest.approx(t["overhead_s"])
    assert t["startup_s"] > 0 and t["store_s"] > 0  # workers started, results stored


@pytest.mark.usefixtures("shared_workers")
def test_run_plain_kernel(tmp_path: Path, gtune_here: Cli):
    out = tmp_path / "p.json"
    proc = gtune_here(
        "run",
        str(DATA / "plain_blur.cl"),
        "--size",
        "64x32",
        "--param",
        "ROWS=1,2,4",
        "--global",
        "NX,NY/ROWS",
        "--scalar",
        "scale=0.111",
        "--budget",
        "30",
        "--json",
        str(out),
        db=tmp_path / "r.db",
    )
    assert proc.returncode == 0, proc.stderr
    data = json.loads(out.read_text())
    assert set(data["best_config"]) == {"WX", "WY", "ROWS"}
    assert data["best_config"]["ROWS"] in (1, 2, 4)
    # --param macros are tuned: the default strategy adapts to the kernel's parameters
    assert data["strategy"] == "generic"
    steps = {s["step"] for s in data["runs"][0]["outcome"]["steps"]}
    assert "ROWS" in steps and "work-group x" in steps
    assert any("generic strategy" in n for n in data["notes"])
    assert data["technique"] == "" and [r["technique"] for r in data["runs"]] == [None]
    assert data["default_note"] and data["speedup_over_default"] is None
    assert 0 < data["evaluations"] <= 30


def test_bad_inputs_exit_2_with_one_message(tmp_path: Path, capsys: pytest.CaptureFixture[str]):
    from gtune.cli import main

    def run_gtune(*args: str, db: Path) -> subprocess.CompletedProcess[str]:
        """The command line in-process (what the program runs), as a finished process."""
        code = main(["--db", str(db), *args])
        out, err = capsys.readouterr()
        return subprocess.CompletedProcess(args, code, out, err)

    db = tmp_path / "r.db"
    err = _one_error(run_gtune("run", HEAT, "--size", "16x8x8", "--spec", "nosuch", db=db))
    assert "nosuch" in err and "shipped specs" in err

    spec = tmp_path / "bad.yaml"
    spec.write_text("name: bad\nstepz: 1\nsteps:\n  - tune: {WX: '1:NX:*2'}\n")
    err = _one_error(run_gtune("run", HEAT, "--size", "16x8x8", "--spec", str(spec), db=db))
    assert str(spec) in err and "stepz" in err

    err = _one_error(run_gtune("run", HEAT, "--size", "16x8x8", "--technique", "tex", db=db))
    assert "unknown technique 'tex'" in err and "global" in err

    err = _one_error(run_gtune("run", str(DATA / "plain_blur.cl"), db=db))
    assert "plain_blur.cl" in err and "--size" in err

    err = _one_error(run_gtune("run", HEAT, "--size", "1x1x1", db=db))
    assert "heat3d.yaml" in err and "no configuration satisfies" in err

    err = _one_error(run_gtune("run", HEAT, "--param", "ROWS=1,2", db=db))
    assert "--param" in err and "description" in err

    err = _one_error(run_gtune("run", HEAT, "--size", "16x8x8", "--budget", "-3", db=db))
    assert "--budget" in err

    err = _one_error(run_gtune("run", HEAT, "--size", "16x8x8", "--option", "nosuch=1", db=db))
    assert "nosuch" in err and "hybrid" in err

    err = _one_error(
        run_gtune("run", HEAT, "--size", "16x8x8", "--strategy", "random", "--option", "n=x", db=db)
    )
    assert "'n'" in err and "int" in err
    assert not db.exists() or sqlite3.connect(db).execute(
        "SELECT COUNT(*) FROM results"
    ).fetchone() == (0,), "nothing is measured before the input is checked"


@pytest.mark.skipif(sys.platform == "win32", reason="POSIX signals")
def test_ctrl_c_stops_cleanly_keeping_every_result(tmp_path: Path):
    db, out = tmp_path / "r.db", tmp_path / "r.json"
    cmd = [sys.executable, "-m", "gtune", "--db", str(db), "run", HEAT, "--size", "16x8x8"]
    cmd += ["--technique", "global", "--strategy", "random", "--budget", "300"]
    env = dict(os.environ, PYTHONPATH=str(ROOT), COLUMNS="200")
    proc = subprocess.Popen(
        [*cmd, "--json", str(out)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    )
    try:
        deadline = time.monotonic() + 60
        stored = 0
        while time.monotonic() < deadline and stored < 4:
            time.sleep(0.3)
            if db.exists():
                try:
                    with sqlite3.connect(db) as con:
                        stored = con.execute("SELECT COUNT(*) FROM results").fetchone()[0]
                except sqlite3.OperationalError:
                    stored = 0
        assert stored >= 4, "the run measured something before the interrupt"
        proc.send_signal(signal.SIGINT)
        stdout, stderr = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 130, stderr
    assert "Traceback" not in stderr
    assert "interrupted" in stdout and "best configuration" in stdout
    assert "run the same command again" in stderr
    data = json.loads(out.read_text())
    assert data["interrupted"] is True
    with sqlite3.connect(db) as con:
        stored = con.execute("SELECT COUNT(*) FROM results").fetchone()[0]
    assert stored == data["measured"]


@pytest.mark.usefixtures("shared_workers")
def test_run_passes_strategy_options(tmp_path: Path, gtune_here: Cli):
    out = tmp_path / "o.json"
    args = ["run", HEAT, "--size", "16x8x8", "--technique", "global", "--strategy", "random"]
    # without the confirmation round (the default measured beside the best): only the
    # search reads the options
    proc = gtune_here(
        *args, "--option", "n=3", "--option", "seed=5", "--no-confirm", "--json", str(out)
    )
    assert proc.returncode == 0, proc.stderr
    data = json.loads(out.read_text())
    assert data["evaluations"] == 3 and data["strategy"] == "random"

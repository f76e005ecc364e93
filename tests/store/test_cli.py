"""The store through the command line: URLs, re-measuring, refusals before work starts."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from gtune.result import Status
from gtune.store import open_store
from tests.conftest import DATA, ROOT, run_gtune
from tests.store.helpers import result

HEAT = str(ROOT / "stencils" / "heat3d.cl")
NAIVE = str(DATA / "naive7.cl")


def _one_error(proc: subprocess.CompletedProcess[str]) -> str:
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert "Traceback" not in proc.stderr
    lines = [ln for ln in proc.stderr.splitlines() if ln.startswith("gtune: error")]
    assert len(lines) == 1, proc.stderr
    return lines[0]


@pytest.mark.opencl
def test_run_and_results_on_postgresql(pg_url: str, tmp_path: Path):
    out = tmp_path / "run.json"
    args = ["run", HEAT, "--size", "16x8x8", "--technique", "global", "--budget", "8"]
    first = run_gtune(*args, "--json", str(out), db=pg_url)  # type: ignore[arg-type]
    assert first.returncode == 0, first.stderr
    report = json.loads(out.read_text())
    assert report["measured"] > 0 and report["best_config"]
    listed = run_gtune("results", "--format", "json", db=pg_url)  # type: ignore[arg-type]
    assert listed.returncode == 0, listed.stderr
    rows = json.loads(listed.stdout)["results"]
    assert len(rows) == report["measured"]
    assert len({(r["kernel"], r["kernel_id"]) for r in rows}) == 1
    assert report["search_best_config"] in [r["config"] for r in rows]
    again = run_gtune(*args, "--json", str(out), db=pg_url)  # type: ignore[arg-type]
    assert again.returncode == 0, again.stderr
    assert json.loads(out.read_text())["measured"] == 0


@pytest.mark.opencl
def test_measure_remeasure_appends_a_row(tmp_path: Path):
    db = tmp_path / "r.db"
    first = run_gtune("measure", NAIVE, "--json", db=db)
    assert first.returncode == 0, first.stderr
    served = run_gtune("measure", NAIVE, "--json", db=db)
    assert json.loads(served.stdout)["from_store"] is True
    again = run_gtune("measure", NAIVE, "--json", "--remeasure", "ok", db=db)
    assert again.returncode == 0, again.stderr
    assert json.loads(again.stdout)["from_store"] is False
    history = run_gtune("results", "--history", "--format", "json", db=db)
    assert len(json.loads(history.stdout)["results"]) == 2
    current = run_gtune("results", "--format", "json", db=db)
    assert len(json.loads(current.stdout)["results"]) == 1


@pytest.mark.opencl
def test_db_under_a_file_is_refused_before_measuring(tmp_path: Path):
    (tmp_path / "file").write_text("x")
    line = _one_error(run_gtune("measure", NAIVE, db=tmp_path / "file" / "r.db"))
    assert str(tmp_path / "file" / "r.db") in line and "cannot create the folder" in line


def test_bad_remeasure_status(tmp_path: Path):
    line = _one_error(run_gtune("run", HEAT, "--remeasure", "timeout,melted", db=tmp_path / "r"))
    assert "--remeasure" in line and "melted" in line


def test_results_of_a_garbage_store(tmp_path: Path):
    db = tmp_path / "r.db"
    db.write_bytes(b"\x00garbage" * 500)
    line = _one_error(run_gtune("results", db=db))
    assert str(db) in line and "not a database" in line


def test_results_of_an_unreachable_server(tmp_path: Path):
    url = f"postgresql:///nothing?host={tmp_path}"
    line = _one_error(run_gtune("results", db=url))  # type: ignore[arg-type]
    assert "cannot connect" in line and str(tmp_path) in line


def test_results_of_a_missing_store_lists_nothing(tmp_path: Path):
    proc = run_gtune("results", "--format", "json", db=tmp_path / "none.db")
    assert proc.returncode == 0 and json.loads(proc.stdout) == {"results": []}
    assert not (tmp_path / "none.db").exists()
    _one_error(run_gtune("results", "--best", "0", db=tmp_path / "none.db"))


def test_results_into_a_closed_pipe(tmp_path: Path):
    db = tmp_path / "r.db"
    with open_store(db) as store:
        for wx in range(1, 3000):
            store.add(result(wx, status=Status.OK), device="d", kernel_id="k", kernel_name="x")
    cmd = [sys.executable, "-m", "gtune", "--db", str(db), "results", "--format", "csv"]
    env = {"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"}
    with subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env) as proc:
        assert proc.stdout is not None and proc.stderr is not None
        proc.stdout.readline()
        proc.stdout.close()  # like `| head -1`
        err = proc.stderr.read().decode()
        assert proc.wait(timeout=60) == 0, err
    assert "Traceback" not in err and "BrokenPipe" not in err

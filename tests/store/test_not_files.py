"""Store paths that are not files: refused before anything opens them; a store file
deleted or replaced under a running gtune is noticed and reported (issue 45)."""

from __future__ import annotations

import os
import sqlite3
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from gtune.store import StoreError, open_store
from gtune.testing.store import result
from tests.conftest import DATA, ROOT, run_gtune

NAIVE = str(DATA / "naive7.yaml")


def _error_line(proc: subprocess.CompletedProcess[str]) -> str:
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert "Traceback" not in proc.stderr
    lines = [ln for ln in proc.stderr.splitlines() if ln.startswith("gtune: error")]
    assert len(lines) == 1, proc.stderr
    return lines[0]


@pytest.mark.parametrize("readonly", [False, True], ids=["write", "read"])
def test_a_fifo_is_refused_at_once(tmp_path: Path, readonly: bool) -> None:
    fifo = tmp_path / "store.db"
    os.mkfifo(fifo)
    began = time.monotonic()
    with pytest.raises(StoreError, match="FIFO") as err:
        open_store(str(fifo), readonly=readonly)
    assert time.monotonic() - began < 5
    assert str(fifo) in err.value.render()


def test_a_folder_and_a_device_are_refused_by_kind(tmp_path: Path) -> None:
    with pytest.raises(StoreError, match="is a folder") as err:
        open_store(str(tmp_path))
    assert "disk I/O" not in err.value.render()
    with pytest.raises(StoreError, match="character device"):
        open_store("/dev/null", readonly=True)


def test_a_fifo_beside_the_store_as_its_log_is_refused(tmp_path: Path) -> None:
    os.mkfifo(tmp_path / "r.db-wal")
    with pytest.raises(StoreError, match="FIFO") as err:
        open_store(str(tmp_path / "r.db"))
    assert "r.db-wal" in err.value.render()


def test_a_new_file_in_a_folder_and_a_symlinked_store_are_accepted(tmp_path: Path) -> None:
    store = open_store(str(tmp_path / "new.db"))
    store.add(result(4), device="d", kernel_id="k")
    store.close()
    (tmp_path / "link.db").symlink_to(tmp_path / "new.db")
    with open_store(str(tmp_path / "link.db")) as again:
        assert len(again.results()) == 1


@pytest.mark.parametrize("how", ["deleted", "replaced"])
def test_a_store_file_gone_mid_run_is_reported_with_what_went(tmp_path: Path, how: str) -> None:
    db = tmp_path / "r.db"
    with open_store(str(db)) as before:  # a row from before this process's run
        before.add(result(1), device="d", kernel_id="k")
    store = open_store(str(db))
    store.add(result(2), device="d", kernel_id="k")
    store.add(result(4), device="d", kernel_id="k")
    for f in tmp_path.glob("r.db*"):
        f.unlink()
    if how == "replaced":
        sqlite3.connect(db).execute("CREATE TABLE x (y)").connection.close()
    with pytest.raises(StoreError, match="deleted or replaced") as err:
        store.add(result(8), device="d", kernel_id="k")
    assert "the 2 result(s)" in err.value.render()  # this run's two, not the older row
    store.close()


def test_a_fifo_store_on_the_command_line_exits_2_at_once(tmp_path: Path) -> None:
    fifo = tmp_path / "fifo.db"
    os.mkfifo(fifo)
    began = time.monotonic()
    line = _error_line(run_gtune("results", db=fifo, timeout=60))
    assert "FIFO" in line and str(fifo) in line
    assert time.monotonic() - began < 30


@pytest.mark.opencl
def test_a_store_deleted_during_a_run_ends_it_with_status_2(tmp_path: Path) -> None:
    db = tmp_path / "store.db"
    cmd = [sys.executable, "-m", "gtune", "--db", str(db), "run", NAIVE]
    cmd += ["--size", "NX=32,NY=16,NZ=8", "--budget", "300", "--timeout", "20"]
    env = dict(os.environ, PYTHONPATH=str(ROOT), GTUNE_CACHE=str(tmp_path / "cache"))
    proc = subprocess.Popen(
        cmd, cwd=tmp_path, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    deadline = time.monotonic() + 120
    rows = 0
    while time.monotonic() < deadline and proc.poll() is None and rows < 2:
        time.sleep(0.2)
        try:
            with sqlite3.connect(f"{db.as_uri()}?mode=ro", uri=True) as con:
                rows = con.execute("SELECT COUNT(*) FROM results").fetchone()[0]
        except sqlite3.Error:
            continue
    assert rows >= 2 and proc.poll() is None, "the run ended before its store was deleted"
    for f in tmp_path.glob("store.db*"):
        f.unlink()
    out, err = proc.communicate(timeout=180)
    proc_done = subprocess.CompletedProcess(cmd, proc.returncode, out, err)
    line = _error_line(proc_done)
    assert "deleted or replaced" in line and str(db) in line


def test_add_many_writes_a_batch_as_add_does_on_both_backends(store: Any) -> None:
    """The batched write of import-kt (SQLite and the throw-away PostgreSQL)."""
    batch = [result(wx) for wx in (1, 2, 4, 8)]
    assert store.add_many(batch, device="d", kernel_id="k", kernel_name="n", problem={"NX": 8}) == 4
    assert store.add_many([], device="d", kernel_id="k") == 0
    got = {r.config["WX"]: r for r in store.results(device="d", kernel_id="k")}
    assert sorted(got) == [1, 2, 4, 8]
    assert all(got[wx].times_s == r.times_s for wx, r in zip((1, 2, 4, 8), batch, strict=True))
    rows = list(store.rows(device="d"))
    assert {tuple(r.problem.items()) for r in rows} == {(("NX", 8),)}

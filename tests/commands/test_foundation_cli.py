"""The foundation commands end to end on the real OpenCL device: in subprocesses where
the process is what is tested (the device listing, a sweep killed, no OpenCL platform),
the others in-process, through gtune.cli.main (tests.inprocess)."""

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

from tests.conftest import ROOT, run_gtune
from tests.inprocess import Cli

pytestmark = pytest.mark.opencl


def test_devices_json_schema():
    proc = run_gtune("devices", "--json")
    assert proc.returncode == 0, proc.stderr
    data = json.loads(proc.stdout)
    assert data["devices"], "at least one device"
    ids = [d["identity"] for d in data["devices"]]
    assert data["default"] in ids and len(set(ids)) == len(ids)
    for d in data["devices"]:
        for key, kind in [
            ("name", str),
            ("platform", str),
            ("type", str),
            ("vendor", str),
            ("driver_version", str),
            ("opencl_c_version", str),
            ("compute_units", int),
            ("max_work_group_size", int),
            ("max_work_item_sizes", list),
            ("local_mem_size", int),
            ("max_mem_alloc_size", int),
            ("global_mem_size", int),
            ("image_support", bool),
            ("image2d_max", list),
            ("image3d_max", list),
            ("preferred_vector_width_float", int),
            ("native_vector_width_float", int),
            ("extensions", list),
            ("selector", str),
        ]:
            assert isinstance(d[key], kind), key
        assert d["compute_units"] > 0 and d["max_work_group_size"] >= 1


def test_devices_table():
    proc = run_gtune("devices")
    assert proc.returncode == 0 and "max work-group" in proc.stdout


@pytest.mark.usefixtures("shared_workers")
def test_measure_default_and_results_export(tmp_path: Path, data_dir: Path, gtune_here: Cli):
    """(In the test's process: ``gtune measure`` as a process is the sweep killed below.)"""
    db = tmp_path / "r.db"
    proc = gtune_here("measure", str(data_dir / "naive7.cl"), db=db)
    assert proc.returncode == 0, proc.stderr
    assert "ok" in proc.stdout and "GB/s" in proc.stdout
    again = gtune_here("measure", str(data_dir / "naive7.cl"), "--json", db=db)
    assert json.loads(again.stdout)["from_store"] is True
    csv_out = gtune_here("results", "--format", "csv", db=db).stdout.splitlines()
    assert csv_out[0].startswith("device,kernel") and len(csv_out) == 2
    exported = json.loads(gtune_here("results", "--format", "json", db=db).stdout)
    assert exported["results"][0]["config"] == {"WX": 8, "WY": 4, "WZ": 1}


def test_build_error_is_one_message_with_log(tmp_path: Path, kernel_copy, gtune_here):
    path = kernel_copy("naive7", lambda t: t + "build_options: [-DBROKEN]\n")
    proc = gtune_here("measure", str(path), db=tmp_path / "r.db")
    assert proc.returncode == 2
    assert "does not compile" in proc.stderr and "build log" in proc.stderr
    assert "Traceback" not in proc.stderr


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["measure", "missing.cl"], "missing.cl: file not found"),
        (["measure", "tests/data/naive7.cl", "--config", "WQ=3"], "unknown parameter 'WQ'"),
        (["measure", "tests/data/naive7.cl", "--size", "12y4"], "bad size"),
        (
            ["measure", "tests/data/naive7.cl", "--device", "no-such-device"],
            "no OpenCL device matches",
        ),
    ],
)
def test_bad_input_exits_2_without_traceback(
    tmp_path: Path, args, message, gtune_here, monkeypatch
):
    monkeypatch.chdir(ROOT)
    proc = gtune_here(*args, db=tmp_path / "r.db")
    assert proc.returncode == 2, proc.stderr
    assert message in proc.stderr and "Traceback" not in proc.stderr


def _rows(db: Path) -> list[tuple[str, str]]:
    """The stored rows; none while the file exists but the schema is not written yet."""
    with sqlite3.connect(db) as c:
        try:
            return c.execute("SELECT config, status FROM results").fetchall()
        except sqlite3.OperationalError as exc:
            if "no such table" not in str(exc):
                raise
            return []


@pytest.mark.usefixtures("shared_workers")
def test_kill_9_mid_run_then_resume(tmp_path: Path, data_dir: Path, gtune_here: Cli):
    """kill -9 during a sweep, then the same command: no loss, no duplicates, no
    re-measuring. (The sweep killed is a process of its own; the same command again,
    which only reads the store and measures the rest, runs in the test's process.)"""
    db = tmp_path / "r.db"
    sweep = [
        "measure",
        str(data_dir / "naive7.cl"),
        "--sweep",
        "WX=1,2,4,8",
        "--sweep",
        "WY=1,2,4",
        "--sweep",
        "WZ=1,2",
    ]  # 24 configurations, each a build of its own (its work-group size)
    cmd = [sys.executable, "-m", "gtune", "--db", str(db), *sweep]
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    proc = subprocess.Popen(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.time() + 120
    while time.time() < deadline:
        time.sleep(0.2)
        if db.exists() and len(_rows(db)) >= 5:
            break
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    before = _rows(db)
    assert 5 <= len(before) < 24, "the sweep must be killed mid-way"
    second = gtune_here(*sweep, db=db)
    assert second.returncode == 0, second.stderr
    after = _rows(db)
    assert len(after) == 24 and len({c for c, _ in after}) == 24
    assert set(before) <= set(after)
    assert f"({24 - len(before)} measured now, {len(before)} from the store)" in second.stdout


def test_no_opencl_platform_says_how_to_install(tmp_path: Path, data_dir: Path):
    """An ICD loader with no vendors behaves like a machine without OpenCL drivers."""
    empty = tmp_path / "vendors"
    empty.mkdir()
    for args in (["devices"], ["measure", str(data_dir / "naive7.cl")]):
        proc = run_gtune(*args, db=tmp_path / "r.db", env_extra={"OCL_ICD_VENDORS": str(empty)})
        assert proc.returncode == 2, proc.stderr
        assert "no OpenCL platform" in proc.stderr and "pocl-opencl-icd" in proc.stderr
        assert "Traceback" not in proc.stderr

"""The store through the command line: URLs, re-measuring, refusals before work starts."""

from __future__ import annotations

import csv
import json
import subprocess
import sys
from pathlib import Path

import pytest

from gtune.result import Result, Status
from gtune.store import open_store
from gtune.testing.store import result
from tests.conftest import DATA, ROOT
from tests.inprocess import Cli

HEAT = str(ROOT / "stencils" / "heat3d.cl")
NAIVE = str(DATA / "naive7.cl")


def _one_error(proc: subprocess.CompletedProcess[str]) -> str:
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert "Traceback" not in proc.stderr
    lines = [ln for ln in proc.stderr.splitlines() if ln.startswith("gtune: error")]
    assert len(lines) == 1, proc.stderr
    return lines[0]


@pytest.mark.opencl
@pytest.mark.usefixtures("shared_workers")
def test_run_and_results_on_postgresql(pg_url: str, tmp_path: Path, gtune_here: Cli):
    out = tmp_path / "run.json"
    args = ["run", HEAT, "--size", "16x8x8", "--technique", "global", "--budget", "4"]
    first = gtune_here(*args, "--json", str(out), db=pg_url)
    assert first.returncode == 0, first.stderr
    report = json.loads(out.read_text())
    assert report["measured"] > 0 and report["best_config"]
    listed = gtune_here("results", "--format", "json", db=pg_url)
    assert listed.returncode == 0, listed.stderr
    rows = json.loads(listed.stdout)["results"]
    # the search's results, and beside them the confirmation round's
    assert len([r for r in rows if not r["confirmed"]]) == report["measured"]
    assert [r["config"] for r in rows if "best" in r["confirmed"]] == [report["best_config"]]
    assert any("default" in r["confirmed"] for r in rows)
    assert len({(r["kernel"], r["kernel_id"].removesuffix("/confirmed")) for r in rows}) == 1
    assert report["search_best_config"] in [r["config"] for r in rows]
    # the first run's JSON is kept unless --force (gtune.outfiles)
    kept = gtune_here(*args, "--json", str(out), db=pg_url)
    assert kept.returncode == 2 and "--force" in kept.stderr
    again = gtune_here(*args, "--json", str(out), "--force", db=pg_url)
    assert again.returncode == 0, again.stderr
    assert json.loads(out.read_text())["measured"] == 0


@pytest.mark.opencl
@pytest.mark.usefixtures("shared_workers")
def test_measure_remeasure_appends_a_row(tmp_path: Path, gtune_here: Cli):
    db = tmp_path / "r.db"
    first = gtune_here("measure", NAIVE, "--json", db=db)
    assert first.returncode == 0, first.stderr
    served = gtune_here("measure", NAIVE, "--json", db=db)
    assert json.loads(served.stdout)["from_store"] is True
    again = gtune_here("measure", NAIVE, "--json", "--remeasure", "ok", db=db)
    assert again.returncode == 0, again.stderr
    assert json.loads(again.stdout)["from_store"] is False
    history = gtune_here("results", "--history", "--format", "json", db=db)
    assert len(json.loads(history.stdout)["results"]) == 2
    current = gtune_here("results", "--format", "json", db=db)
    assert len(json.loads(current.stdout)["results"]) == 1


@pytest.mark.opencl
def test_db_under_a_file_is_refused_before_measuring(gtune_here: Cli, tmp_path: Path):
    (tmp_path / "file").write_text("x")
    line = _one_error(gtune_here("measure", NAIVE, db=tmp_path / "file" / "r.db"))
    assert str(tmp_path / "file" / "r.db") in line and "cannot create the folder" in line


def test_bad_remeasure_status(gtune_here: Cli, tmp_path: Path):
    line = _one_error(gtune_here("run", HEAT, "--remeasure", "timeout,melted", db=tmp_path / "r"))
    assert "--remeasure" in line and "melted" in line


def test_results_of_a_garbage_store(gtune_here: Cli, tmp_path: Path):
    db = tmp_path / "r.db"
    db.write_bytes(b"\x00garbage" * 500)
    line = _one_error(gtune_here("results", db=db))
    assert str(db) in line and "not a database" in line


def test_results_of_an_unreachable_server(gtune_here: Cli, tmp_path: Path):
    url = f"postgresql:///nothing?host={tmp_path}"
    line = _one_error(gtune_here("results", db=url))
    assert "cannot connect" in line and str(tmp_path) in line


def test_results_of_a_missing_store_is_an_empty_selection(gtune_here: Cli, tmp_path: Path):
    line = _one_error(gtune_here("results", "--format", "json", db=tmp_path / "none.db"))
    assert "holds no results" in line and str(tmp_path / "none.db") in line
    assert not (tmp_path / "none.db").exists()
    _one_error(gtune_here("results", "--best", "0", db=tmp_path / "none.db"))


def _named_store(db: Path) -> None:
    """Two template kernels (both functions are ``stencil``) and a plain one."""
    with open_store(db) as store:
        for wx, name, kid, size in (
            (8, "heat3d:stencil", "k-heat", {"NX": 32, "NY": 32, "NZ": 32}),
            (16, "heat3d:stencil", "k-heat", {"NX": 32, "NY": 32, "NZ": 32}),
            (4, "jacobi2d:stencil", "k-jac", {"NX": 128, "NY": 128}),
        ):
            store.add(result(wx), device="dev-1", kernel_id=kid, kernel_name=name, problem=size)
        plain = Result({"BS": 64}, Status.OK, 0.1, (2e-3,))
        store.add(plain, device="dev-1", kernel_id="k-life", kernel_name="life", problem={"N": 9})


def test_results_tell_kernels_apart_by_file_and_size(gtune_here: Cli, tmp_path: Path):
    db = tmp_path / "r.db"
    _named_store(db)
    table = gtune_here("results", db=db)
    assert table.returncode == 0, table.stderr
    assert "heat3d:stencil" in table.stdout and "32x32x32" in table.stdout
    assert "jacobi2d:stencil" in table.stdout and "128x128" in table.stdout
    listed = json.loads(gtune_here("results", "-k", "jacobi2d", "--format", "json", db=db).stdout)
    assert [(r["kernel"], r["size"]) for r in listed["results"]] == [
        ("jacobi2d:stencil", "128x128")
    ]
    rows = list(csv.reader(gtune_here("results", "--format", "csv", db=db).stdout.splitlines()))
    header = rows[0]
    assert header[:4] == ["device", "kernel", "kernel_id", "size"]
    assert "config" not in header and {"WX", "WY", "BS"} <= set(header)
    by_kernel = {r[1]: dict(zip(header, r, strict=True)) for r in rows[1:]}
    assert by_kernel["life"]["BS"] == "64" and by_kernel["life"]["WX"] == ""
    assert by_kernel["life"]["size"] == "N=9"
    assert by_kernel["jacobi2d:stencil"]["WX"] == "4"


@pytest.mark.parametrize("command", ["results", "export"])
def test_an_empty_selection_exits_non_zero_naming_what_is_stored(
    gtune_here: Cli, tmp_path: Path, command: str
):
    db = tmp_path / "r.db"
    _named_store(db)
    line = _one_error(gtune_here(command, "-k", "star_3d_xyz_r1", db=db))
    assert "--kernel star_3d_xyz_r1" in line and "heat3d:stencil (32x32x32)" in line
    line = _one_error(gtune_here(command, "-d", "nowhere", db=db))
    assert "--device nowhere" in line


def test_best_is_the_confirmed_best_with_the_default_beside_it(gtune_here: Cli, tmp_path: Path):
    """A search row faster by luck does not displace what the confirmation round chose."""
    db = tmp_path / "r.db"
    mark = {"round": "r1", "rounds": 3}
    with open_store(db) as store:
        kw = {"device": "dev-1", "kernel_id": "k-heat", "kernel_name": "heat3d:stencil"}
        store.add(result(2, 0.5e-3), **kw)  # the search's lucky fastest, not confirmed
        store.add(result(8, 1e-3), **kw)
        kw["kernel_id"] = "k-heat/confirmed"
        store.add(result(8, 0.9e-3, confirmation={**mark, "best": True, "default": False}), **kw)
        store.add(result(4, 2e-3, confirmation={**mark, "best": False, "default": True}), **kw)
    best = json.loads(gtune_here("results", "--best", "1", "--format", "json", db=db).stdout)
    assert [(r["config"]["WX"], r["confirmed"]) for r in best["results"]] == [(8, "best")]
    two = json.loads(gtune_here("results", "--best", "2", "--format", "json", db=db).stdout)
    assert [r["config"]["WX"] for r in two["results"]] == [8, 4]
    table = gtune_here("results", "--best", "1", db=db).stdout
    assert "default configuration took" in table and "2.22x faster" in table


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

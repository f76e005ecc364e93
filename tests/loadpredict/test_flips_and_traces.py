"""benchmarks/predict/flips.py (labels collected twice) and traces.py's choice among
several labelling stores, on small made-up collections."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest

from tests.conftest import load_script

ROOT = Path(__file__).resolve().parents[2]
flips = load_script(ROOT / "benchmarks" / "predict" / "flips.py")
traces = load_script(ROOT / "benchmarks" / "predict" / "traces.py")

HEADER = "kernel,label,time:stream,time:vec,identity\n"


def test_flips_counts_second_collections_and_leaves_copied_rows_out(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    first = tmp_path / "first.csv"
    first.write_text(
        HEADER
        + "copied,vec,2e-6,1e-6,aaaa\n"  # the same row in the second: no second collection
        + "again,vec,1.1e-6,1e-6,bbbb\n"  # collected again, the label flips to stream
        + "held,stream,1e-6,3e-6,cccc\n"  # collected again by auto_vs_all's all arm
    )
    second = tmp_path / "second.csv"
    second.write_text(
        HEADER + "copied,vec,2e-6,1e-6,aaaa\nagain,stream,1e-6,1.2e-6,dddd\nnew,vec,2e-6,1e-6,e\n"
    )
    report = tmp_path / "auto_vs_all.json"
    report.write_text(json.dumps({"held": {"all": {"technique": "stream", "tuned_s": 1.05e-6}}}))
    assert flips.main([str(first), str(second), str(report)]) == 0
    out = capsys.readouterr().out.splitlines()
    kernels = [line.split()[0] for line in out[:-2]]
    assert kernels == ["again", "held"]
    # the flip costs stream's time over vec's in the first collection: 1.1
    assert out[-2] == "1 of 2 labels flipped; the worst flip costs 1.100x"
    assert out[-1].startswith("(1 rows unchanged in both")
    assert "vec     3.0/      -" in out[1]  # the all arm recorded only its winner's time


def test_flips_says_what_it_cannot_read(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    first = tmp_path / "first.csv"
    first.write_text(HEADER + "k,vec,2e-6,1e-6,a\n")
    assert flips.main([str(first), str(tmp_path / "missing.csv")]) == 2
    assert "missing.csv" in capsys.readouterr().err


def _store(path: Path, kernel_ids: list[str]) -> sqlite3.Connection:
    db = sqlite3.connect(path)
    db.execute("CREATE TABLE results (id INTEGER PRIMARY KEY AUTOINCREMENT, kernel_id TEXT)")
    db.executemany("INSERT INTO results (kernel_id) VALUES (?)", [(k,) for k in kernel_ids])
    db.commit()
    return db


def test_traces_reads_each_kernel_from_the_store_holding_most_of_its_results(
    tmp_path: Path,
) -> None:
    # a: the store both started from (k1 partly searched); b grew k1 to its end; c holds k2
    a = _store(tmp_path / "a.db", ["k1full"] * 2)
    b = _store(tmp_path / "b.db", ["k1full"] * 5)
    c = _store(tmp_path / "c.db", ["k1full"] * 2 + ["k2full"] * 3)
    dbs = [a, b, c]
    assert traces._store_of(dbs, "k1") is b
    assert traces._store_of(dbs, "k2") is c
    assert traces._store_of([a, c], "k1") is a  # equal counts: the first named

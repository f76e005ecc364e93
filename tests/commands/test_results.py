"""``gtune results`` (gtune/commands/results.py): readable at 80 columns, ``--wide`` for
one column per parameter, and names from the store never reach a terminal or a
spreadsheet as code."""

from __future__ import annotations

import csv
import io
import os
import subprocess
import sys
from pathlib import Path

from gtune.result import Result, Status
from gtune.store import open_store
from tests.conftest import ROOT

DEVICE = "pthread-skylake-avx512-amd-epyc-a9ece627"
CONFIG = {"WX": 64, "WY": 4, "WZ": 1, "CX": 1, "CY": 2, "CZ": 1, "MERGE_DIM": 0, "TECHNIQUE": 3}
HOSTILE = "=cmd|' -C calc'!A0\x1b]0;pwned\x07\x1b[31m"


def _store(db: Path, *, hostile: bool = False) -> None:
    with open_store(db) as store:
        for i, wx in enumerate((64, 32, 128)):
            times = (1.2e-4 * (i + 1), 1.3e-4 * (i + 1), 1.25e-4 * (i + 1))
            store.add(
                Result({**CONFIG, "WX": wx}, Status.OK, 0.07, times),
                device=DEVICE,
                kernel_id="k-heat",
                kernel_name="heat3d:stencil",
                problem={"NX": 512, "NY": 512, "NZ": 512},
            )
        if hostile:
            store.add(
                Result({"WX": 8}, Status.BUILD_FAILED, 0.05, (), message=HOSTILE),
                device=f"dev{HOSTILE}",
                kernel_id="k-bad",
                kernel_name=HOSTILE,
                problem={"NX": 64},
            )


def _results(db: Path, *args: str) -> str:
    env = dict(os.environ, PYTHONPATH=str(ROOT), COLUMNS="80")
    command = [sys.executable, "-m", "gtune", "--db", str(db), "results", *args]
    done = subprocess.run(command, env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_the_table_fits_80_columns_with_the_configuration_in_one_column(tmp_path: Path) -> None:
    db = tmp_path / "r.db"
    _store(db)
    out = _results(db)
    lines = out.splitlines()
    assert max(len(line.rstrip()) for line in lines) <= 80
    # shared by every row: said once, above the table
    title = out.split("configuration")[0].replace("\n", " ")
    assert "heat3d:stencil" in title and "512x512x512" in title and DEVICE in title
    rows = [ln for ln in lines if "µs" in ln]
    assert len(rows) == 3 and all("WX=" in ln and "WY=4" in ln for ln in rows)
    header = next(ln for ln in lines if "configuration" in ln)
    assert "WY" not in header.replace("configuration", "")  # no column per parameter


def test_wide_gives_one_column_per_parameter(tmp_path: Path) -> None:
    db = tmp_path / "r.db"
    _store(db)
    out = _results(db, "--wide")
    header = next(ln for ln in out.splitlines() if "MERGE_DIM" in ln)
    cells = [c.strip() for c in header.split("┃") if c.strip()]
    assert cells[:3] == ["kernel", "size", "device"] and set(cells[3 : 3 + len(CONFIG)]) == set(
        CONFIG
    )
    assert "compile" in cells and len(out.splitlines()[1]) > 80


def test_names_from_the_store_reach_neither_terminal_nor_spreadsheet_as_code(
    tmp_path: Path,
) -> None:
    db = tmp_path / "r.db"
    _store(db, hostile=True)
    for args in ((), ("--wide",), ("--format", "csv")):
        out = _results(db, *args)
        assert "\x1b" not in out and "\x07" not in out
        assert "\\x1b" in out.replace("\n", "")  # shown, escaped
    rows = list(csv.reader(io.StringIO(_results(db, "--format", "csv"))))
    header, body = rows[0], rows[1:]
    bad = dict(zip(header, next(r for r in body if r[header.index("kernel_id")] == "k-bad"),
                   strict=True))  # fmt: skip
    assert bad["kernel"].startswith("'=cmd") and bad["message"].startswith("'=cmd")
    assert not any(cell.startswith(("=", "+", "-", "@")) for row in body for cell in row)

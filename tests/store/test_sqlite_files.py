"""An empty file given as a SQLite store is named, never taken silently."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest

from gtune.store import open_store
from tests.conftest import run_gtune


def test_an_empty_store_file_is_named_when_opened(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    empty = tmp_path / "cut.db"
    empty.write_bytes(b"")
    with caplog.at_level(logging.WARNING, logger="gtune.store"):
        store = open_store(empty)
    store.close()
    assert any(
        "cut.db is an empty file" in r.getMessage() and "created in it" in r.getMessage()
        for r in caplog.records
    )
    assert empty.stat().st_size > 0  # it is a store now
    caplog.clear()
    with caplog.at_level(logging.WARNING, logger="gtune.store"):
        open_store(empty).close()
    assert not caplog.records  # a store with its tables is not empty


def test_the_command_line_says_so(tmp_path: Path) -> None:
    empty = tmp_path / "cut.db"
    empty.write_bytes(b"")
    done = run_gtune("results", db=empty)
    assert done.returncode == 2
    assert "cut.db is an empty file: it holds no results" in done.stderr
    assert "Traceback" not in done.stderr

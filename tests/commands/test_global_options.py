"""gtune's own options (``--db``, ``-v``…) go before the command; given after it, as
a newcomer and the docs once wrote them, the refusal says where they go. And a store
that is not where gtune looks says where it looks."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.conftest import ROOT
from tests.inprocess import Cli

HEAT = str(ROOT / "stencils" / "heat3d.cl")


@pytest.fixture
def run_gtune(tmp_path: Path, gtune_here: Cli, monkeypatch: pytest.MonkeyPatch) -> Cli:
    """The command line in this process (argparse's refusals as a process's status 2),
    in the test's own folder."""
    monkeypatch.chdir(tmp_path)
    return gtune_here


@pytest.mark.parametrize(
    ("args", "option"),
    [
        (["run", HEAT, "--size", "16x16x16", "--db", "x.db"], "--db"),
        (["results", "--db=x.db"], "--db"),
        (["results", "-vv"], "-vv"),
        (["train", "--suite", "garvey104", "--debug"], "--debug"),
    ],
)
def test_a_global_option_after_the_command_says_where_it_goes(
    args: list[str], option: str, tmp_path: Path, run_gtune: Cli
) -> None:
    done = run_gtune(*args)
    assert done.returncode == 2
    assert "Traceback" not in done.stderr
    assert f"{option} is an option of gtune itself: give it before the command" in done.stderr
    assert not (tmp_path / "x.db").exists()  # refused before anything ran


def test_an_unknown_option_is_refused_as_before(run_gtune: Cli) -> None:
    done = run_gtune("results", "--bogus")
    assert done.returncode == 2
    assert "unrecognized arguments: --bogus" in done.stderr
    assert "option of gtune itself" not in done.stderr


def test_the_same_option_before_the_command_works(tmp_path: Path, run_gtune: Cli) -> None:
    done = run_gtune("--db", str(tmp_path / "x.db"), "results")
    assert "unrecognized" not in done.stderr
    assert "holds no results yet" in done.stderr  # the store was read: --db was taken


def test_an_absent_store_says_where_gtune_looks(
    tmp_path: Path, run_gtune: Cli, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``gtune results`` in another folder than the one tuned in (a newcomer's slip):
    the store file is not there, and the hint says where gtune looks; an existing,
    empty store gets no such hint."""
    monkeypatch.delenv("GTUNE_DB", raising=False)  # the default itself: ./gtune-results.db
    absent = run_gtune("results")
    assert absent.returncode == 2 and "Traceback" not in absent.stderr
    assert "gtune-results.db: holds no results yet" in absent.stderr
    assert "hint: no such file" in absent.stderr and "$GTUNE_DB" in absent.stderr
    assert not (tmp_path / "gtune-results.db").exists()  # looking created nothing

    from gtune.store import SQLiteStore

    SQLiteStore(tmp_path / "empty.db").close()
    empty = run_gtune("--db", str(tmp_path / "empty.db"), "results")
    assert empty.returncode == 2 and "holds no results yet" in empty.stderr
    assert "no such file" not in empty.stderr

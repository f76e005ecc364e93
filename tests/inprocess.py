"""The command line in the test's own process: ``gtune.cli.main`` (what ``python -m
gtune`` runs), with its output and exit status as ``tests.conftest.run_gtune`` gives
them, but no interpreter to start and no gtune to import for each call (about a second
of a two-core CI machine each). For the tests of what a command says and refuses;
those of the program as a process (signals, exit on a closed pipe, an environment read
at start-up) keep ``run_gtune``."""

from __future__ import annotations

import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest

Cli = Callable[..., subprocess.CompletedProcess[str]]


def gtune_in_process(capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> Cli:
    """A ``run_gtune`` (``*args``, ``db=``, ``env_extra=``) calling ``main`` here."""
    from gtune.cli import main

    monkeypatch.setenv("COLUMNS", "200")  # as run_gtune: the console's lines unbroken

    def run(
        *args: str, db: Path | str | None = None, env_extra: dict[str, str] | None = None
    ) -> subprocess.CompletedProcess[str]:
        capsys.readouterr()  # what the test printed before is not the command's
        with monkeypatch.context() as env:
            for name, value in (env_extra or {}).items():
                env.setenv(name, value)
            code = main([*(["--db", str(db)] if db is not None else []), *args])
        out, err = capsys.readouterr()
        return subprocess.CompletedProcess(list(args), code, out, err)

    return run

"""The command line in the test's own process: ``gtune.cli.main`` (what ``python -m
gtune`` runs), with its output and exit status as ``tests.conftest.run_gtune`` gives
them, but no interpreter to start and no gtune to import for each call (about a second
of a two-core CI machine each). For the tests of what a command says and refuses,
through the fixture ``gtune_here`` (``tests/conftest.py``); those of the program as a
process (signals, exit on a closed pipe, an environment read at start-up) keep
``run_gtune``."""

from __future__ import annotations

import subprocess
import sys
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
            try:
                code = main([*(["--db", str(db)] if db is not None else []), *args])
            except SystemExit as stop:  # argparse's refusals: the status a process exits with
                code = _exit_status(stop)
        out, err = capsys.readouterr()
        return subprocess.CompletedProcess(list(args), code, out, err)

    return run


def _exit_status(stop: SystemExit) -> int:
    """The exit status of a process ended by ``stop`` (a message: printed, status 1)."""
    if stop.code is None or isinstance(stop.code, int):
        return int(stop.code or 0)
    print(stop.code, file=sys.stderr)
    return 1

"""Run one fuzz case through the real command line and classify what happened.

``fast`` runs :func:`gtune.cli.main` in this process with captured output and a wall-clock
alarm; ``long`` (``GTUNE_FUZZ=long``) runs ``python -m gtune`` in a subprocess under a
memory limit and a timeout. Either way a case passes when gtune worked (exit 0) or
refused the input with exit 2 and a message naming it: never a traceback, a hang or a
resource blow-up.
"""

from __future__ import annotations

import contextlib
import io
import os
import signal
import subprocess
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
LONG = os.environ.get("GTUNE_FUZZ", "").lower() == "long"
CASE_SECONDS = 60.0 if LONG else 20.0
MEMORY_BYTES = 2 * 1024**3
NO_DEVICE = "__no_such_device__"


class CaseTimeout(BaseException):
    """Raised by the alarm: not an Exception, so gtune's own handlers let it through."""


@dataclass
class Outcome:
    argv: list[str]
    code: int | None
    out: str
    err: str
    seconds: float
    kind: str  # "ok", "refused", "traceback", "hang", "memory", "unclear", "bad-status"

    def explain(self) -> str:
        shown = " ".join(map(repr, self.argv))
        return f"{self.kind}: gtune {shown} -> {self.code}\n{self.err[-3000:]}"


def run_case(argv: Sequence[str], names: Sequence[str], cwd: Path) -> Outcome:
    argv = [str(a) for a in argv]
    if LONG:
        code, out, err, seconds, kind = _subprocess(argv, cwd)
    else:
        code, out, err, seconds, kind = _in_process(argv, cwd)
    if kind == "":
        kind = classify(code, err, names)
    return Outcome(argv, code, out, err, seconds, kind)


def classify(code: int | None, err: str, names: Sequence[str]) -> str:
    if "Traceback (most recent call last)" in err:
        return "traceback"
    if "MemoryError" in err:
        return "memory"
    if code == 0:
        return "ok"
    if code != 2:
        return "bad-status"
    lines = [line for line in err.splitlines() if "error" in line]
    if not lines:
        return "unclear"
    if names and not any(n and n in err for n in names):
        return "unclear"
    return "refused"


def _in_process(argv: list[str], cwd: Path) -> tuple[int | None, str, str, float, str]:
    from gtune.cli import main

    out, err = io.StringIO(), io.StringIO()

    def alarm(signum: int, frame: object) -> None:
        raise CaseTimeout()

    previous = signal.signal(signal.SIGALRM, alarm)
    signal.setitimer(signal.ITIMER_REAL, CASE_SECONDS)
    start = time.monotonic()
    kind = ""
    code: int | None = None
    try:
        with (
            contextlib.chdir(cwd),
            contextlib.redirect_stdout(out),
            contextlib.redirect_stderr(err),
        ):
            try:
                code = main(argv)
            except SystemExit as exc:  # argparse
                code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 2)
    except CaseTimeout:
        kind = "hang"
    except MemoryError:
        kind = "memory"
    except Exception:
        import traceback

        err.write(traceback.format_exc())
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)
    return code, out.getvalue(), err.getvalue(), time.monotonic() - start, kind


_LIMITED = (
    "import resource, sys; "
    f"resource.setrlimit(resource.RLIMIT_AS, ({MEMORY_BYTES}, {MEMORY_BYTES})); "
    "from gtune.cli import main; sys.exit(main(sys.argv[1:]))"
)


def _subprocess(argv: list[str], cwd: Path) -> tuple[int | None, str, str, float, str]:
    env = dict(os.environ, PYTHONPATH=str(ROOT), COLUMNS="120")
    start = time.monotonic()
    try:
        done = subprocess.run(
            [sys.executable, "-c", _LIMITED, *argv],
            cwd=cwd,
            env=env,
            capture_output=True,
            timeout=CASE_SECONDS,
            errors="backslashreplace",
        )
    except subprocess.TimeoutExpired as exc:
        err = exc.stderr.decode(errors="replace") if isinstance(exc.stderr, bytes) else ""
        return None, "", err or "", time.monotonic() - start, "hang"
    kind = "memory" if done.returncode < 0 and "MemoryError" in done.stderr else ""
    return done.returncode, done.stdout, done.stderr, time.monotonic() - start, kind

"""Run one fuzz case through the real command line and classify what happened.

Each case runs ``python -m gtune`` in a subprocess under an address-space limit, a CPU-time
limit and a wall-clock timeout; ``fast`` (the default, for CI) runs a few cases per test,
``long`` (``GTUNE_FUZZ=long``) many more. A case passes when gtune worked (exit 0) or
refused the input with exit 2 and a message naming it: never a traceback, a hang or a
resource blow-up.
"""

from __future__ import annotations

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
CASE_SECONDS = (
    180.0 if LONG else 120.0
)  # a first space solve on a loaded 2-core machine takes ~30 s
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
    code, out, err, seconds, kind = _subprocess(argv, cwd)
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


_LIMITED = (
    "import resource, sys; "
    f"resource.setrlimit(resource.RLIMIT_AS, ({MEMORY_BYTES}, {MEMORY_BYTES})); "
    f"resource.setrlimit(resource.RLIMIT_CPU, ({int(CASE_SECONDS) + 5}, {int(CASE_SECONDS) + 5})); "
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
    kind = ""
    if done.returncode < 0:  # killed: the CPU limit (SIGXCPU) or the kernel's OOM killer
        kind = "hang" if done.returncode == -signal.SIGXCPU else "memory"
    return done.returncode, done.stdout, done.stderr, time.monotonic() - start, kind

"""A stop request ends gtune within a bounded time, whatever cleanup does."""

from __future__ import annotations

import os
import subprocess
import sys
import time

from tests.conftest import ROOT


def _python(code: str) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    return subprocess.run(
        [sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=60
    )


def test_stalled_cleanup_is_ended_by_the_deadline() -> None:
    code = (
        "import time\n"
        "from gtune.commands._common import arm_exit_deadline\n"
        "arm_exit_deadline(130, 'interrupted', seconds=0.5)\n"
        "arm_exit_deadline(2, 'again', seconds=60)  # armed once: ignored\n"
        "time.sleep(30)  # a cleanup that never finishes\n"
    )
    started = time.monotonic()
    done = _python(code)
    assert done.returncode == 130
    assert time.monotonic() - started < 20
    assert "interrupted: cleanup did not finish within 0.5 s" in done.stderr
    assert "result store" in done.stderr


def test_in_process_main_cancels_the_deadline() -> None:
    code = (
        "import time\n"
        "from gtune.commands import _common\n"
        "from gtune.cli import main\n"
        "_common.arm_exit_deadline(3, 'armed', seconds=1.0)\n"
        "status = main(['results', '--best', '-1'])\n"
        "assert not _common._deadline\n"
        "time.sleep(2.0)  # past the deadline: the process is still here\n"
        "print('alive', status)\n"
    )
    done = _python(code)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["alive", "2"]

"""Starting gtune's own Python processes: workers, device queries, helpers.

Every Python process gtune starts runs this package, and nothing from the directory
gtune was started in: ``python -m`` would put the working directory first on the
child's ``sys.path`` (a ``numpy.py`` lying there would run in every worker), so
children start with ``-P`` and ``PYTHONSAFEPATH=1`` (passed on to their own
children), and empty ``PYTHONPATH`` entries (which Python reads as the working
directory; ``PYTHONPATH=$PYTHONPATH:/x`` with an unset variable makes one) are
dropped. The rest of ``PYTHONPATH`` is kept: the folder above this package comes
first, then whatever the user put there.

:func:`spawn_worker` starts a worker that talks to its parent over a socket and dies
with it (``gtune.measure._worker.guard_parent``); the measuring, compiling and split
workers all start through it.
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import threading
from collections.abc import Mapping
from multiprocessing.connection import Connection
from pathlib import Path

PACKAGE_PARENT = str(Path(__file__).resolve().parents[2])


def child_env(extra: Mapping[str, str] | None = None) -> dict[str, str]:
    """The environment of a Python child: this one, ``extra``, this package first on
    ``PYTHONPATH``, no empty ``PYTHONPATH`` entry, and ``PYTHONSAFEPATH`` set."""
    env = dict(os.environ)
    env.update(extra or {})
    entries = [PACKAGE_PARENT, *env.get("PYTHONPATH", "").split(os.pathsep)]
    env["PYTHONPATH"] = os.pathsep.join(dict.fromkeys(e for e in entries if e))
    env["PYTHONSAFEPATH"] = "1"
    return env


def python_command(module: str, *args: str) -> list[str]:
    """The command line running ``python -m module args`` without the working
    directory on ``sys.path``."""
    return [sys.executable, "-P", "-m", module, *args]


def spawn_worker(
    module: str,
    *,
    env: Mapping[str, str] | None = None,
    log_path: Path | None = None,
) -> tuple[subprocess.Popen[bytes], Connection]:
    """Start ``python -m module FD PARENT_PID main|thread`` in a session of its own (so
    Ctrl-C reaches only the parent) and return it with the parent's end of its socket.

    The worker calls ``guard_parent`` with those arguments: the parent-death signal
    follows the thread that started the process, so a worker started off the main
    thread asks for none and relies on its watchdog."""
    ours, theirs = socket.socketpair()
    starter = "main" if threading.current_thread() is threading.main_thread() else "thread"
    log = open(log_path, "ab") if log_path else None  # noqa: SIM115
    try:
        process = subprocess.Popen(
            python_command(module, str(theirs.fileno()), str(os.getpid()), starter),
            pass_fds=[theirs.fileno()],
            env=child_env(env),
            start_new_session=True,
            stdout=log,
            stderr=log,
        )
    except BaseException:
        ours.close()
        raise
    finally:
        theirs.close()
        if log is not None:
            log.close()
    return process, Connection(ours.detach())

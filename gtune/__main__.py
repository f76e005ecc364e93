"""``python -m gtune`` and the ``gtune`` command.

A Ctrl-C while the command line loads (about half a second) would otherwise end it
with a KeyboardInterrupt traceback: until the command line takes signals over, one is
only noted here, and the command line then stops as for a Ctrl-C after it.

Both ways in (``python -m gtune`` and the console script) import the package first,
whose ``__init__`` takes the working directory and empty ``PYTHONPATH`` entries off
``sys.path`` before anything else is imported (docs/robustness.md, security model).
"""

import contextlib
import signal
import sys


def main() -> int:
    early: list[int] = []
    with contextlib.suppress(ValueError):  # not the main thread: signals are not ours
        signal.signal(signal.SIGINT, lambda signum, frame: early.append(signum))
    from gtune.cli import main as cli_main

    return cli_main(early_interrupts=early)


if __name__ == "__main__":
    sys.exit(main())

"""The ``gtune`` command line.

Each subcommand lives in ``gtune/commands/<name>.py`` and exposes ``HELP``,
``add_arguments(parser)`` and ``run(args) -> int``. Errors derived from
:class:`~gtune.exceptions.GtuneError` become one message and exit status 2; tracebacks
only with ``--debug``.
"""

from __future__ import annotations

import argparse
import importlib
import sys
import traceback
from collections.abc import Sequence

from gtune.exceptions import GtuneError

COMMANDS = ("devices", "measure", "results", "stencils", "space", "run", "compare", "describe")


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="gtune",
        description="Autotune OpenCL stencil kernels on the devices you have.",
    )
    parser.add_argument("--debug", action="store_true", help="show tracebacks on errors")
    parser.add_argument(
        "--db",
        metavar="FILE",
        help="result store (SQLite); default $GTUNE_DB or ./gtune-results.db",
    )
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name in COMMANDS:
        try:
            module = importlib.import_module(f"gtune.commands.{name}")
        except ModuleNotFoundError as exc:
            if exc.name == f"gtune.commands.{name}":
                continue
            raise
        p = sub.add_parser(name, help=module.HELP, description=module.HELP)
        module.add_arguments(p)
        p.set_defaults(_run=module.run)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if not getattr(args, "_run", None):
        parser.print_help()
        return 2
    try:
        return int(args._run(args))
    except GtuneError as exc:
        if args.debug:
            traceback.print_exc()
        print(f"gtune: error: {exc.render()}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print(
            "gtune: interrupted; every result measured so far is in the result store "
            "(run the same command again to resume)",
            file=sys.stderr,
        )
        return 130


if __name__ == "__main__":
    sys.exit(main())

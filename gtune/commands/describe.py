"""``gtune describe``: print the description gtune infers for a plain kernel, as YAML."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from gtune.commands._plain import add_plain_arguments, is_plain, open_tunable
from gtune.exceptions import InputError
from gtune.outfiles import check_target, write_text
from gtune.plain import description_yaml

HELP = "print the description inferred for a plain .cl as YAML (save it beside it to edit)"


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("kernel", help="a plain kernel.cl (no description beside it)")
    p.add_argument("--size", metavar="NXxNYxNZ", help="problem size, e.g. 256x256")
    p.add_argument(
        "--output",
        "-o",
        metavar="FILE",
        help="write the description here (paths in it relative to this file) instead of "
        "printing it",
    )
    p.add_argument("--force", action="store_true", help="replace the --output file if it exists")
    add_plain_arguments(p)


def run(args: argparse.Namespace) -> int:
    if not is_plain(args.kernel):
        raise InputError(
            "this kernel already has a description beside it (or is not a .cl file)",
            source=args.kernel,
        )
    if args.output:
        check_target(args.output, force=args.force)
    kernel = open_tunable(args)
    if args.output:
        out = Path(args.output)
        write_text(out, description_yaml(kernel, out.resolve().parent), force=args.force)
        return 0
    sys.stdout.write(description_yaml(kernel))
    return 0

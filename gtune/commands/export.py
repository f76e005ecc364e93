"""``gtune export``: stored results in the T4 tuning-results schema."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from gtune.campaign.formats import export_t4
from gtune.commands._common import open_store
from gtune.exceptions import InputError

HELP = "export stored results in the T4 tuning-results schema (Kernel Tuner / KTT tools)"


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--format", choices=("t4",), default="t4", help="output schema (t4)")
    p.add_argument("--kernel", "-k", help="kernel name or identity prefix")
    p.add_argument("--device", "-d", help="device identity (prefix)")
    p.add_argument("--out", "-o", metavar="FILE", help="write here instead of standard output")


def run(args: argparse.Namespace) -> int:
    if args.out:
        out = Path(args.out)
        if out.is_dir():
            raise InputError("is a directory", source=f"--out {out}")
        if not out.parent.exists():
            raise InputError("its folder does not exist", source=f"--out {out}")
    store = open_store(args)
    try:
        rows = list(store.rows(device=args.device, kernel=args.kernel))
    finally:
        store.close()
    doc = export_t4(rows)
    text = json.dumps(doc, indent=1) + "\n"
    if args.out:
        Path(args.out).write_text(text)
        print(f"{len(rows)} results written to {args.out}", file=sys.stderr)
    else:
        sys.stdout.write(text)
    return 0

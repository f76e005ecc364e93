"""``gtune import-kt``: a Kernel Tuner cache file into the result store."""

from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path

from gtune.campaign.formats import import_kt, read_kt_cache
from gtune.commands._common import open_kernel, open_store

HELP = "import a Kernel Tuner cache file into the store, keyed by a gtune kernel description"


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("cache", help="Kernel Tuner cache file (JSON)")
    p.add_argument(
        "--kernel",
        required=True,
        help="the gtune kernel (.cl with its description) whose parameters the cache tunes",
    )
    p.add_argument("--size", metavar="NXxNYxNZ", help="problem size the cache was measured at")
    p.add_argument(
        "--device-identity",
        metavar="ID",
        help="store key of the device (default: derived from the cache's device_name)",
    )


def run(args: argparse.Namespace) -> int:
    path = Path(args.cache)
    kernel = open_kernel(args.kernel, args.size)
    data = read_kt_cache(path)
    device = args.device_identity or "kt-" + "-".join(
        filter(None, re.split(r"[^a-z0-9]+", str(data.get("device_name", "unknown")).lower()))
    )
    store = open_store(args)
    try:
        added, kept = import_kt(path, kernel, store, device)
    finally:
        store.close()
    print(
        f"{added} results imported for {kernel.name} on {device} ({kept} already stored)",
        file=sys.stderr,
    )
    return 0

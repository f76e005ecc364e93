"""``gtune import-kt``: a Kernel Tuner cache file into the result store."""

from __future__ import annotations

import argparse
import re
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from gtune.campaign.formats import import_kt, read_kt_cache
from gtune.commands._common import open_kernel, open_store
from gtune.device import name_slug
from gtune.exceptions import GtuneError, InputError
from gtune.result import ResultStore

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
        help="store key of the device (`gtune devices` lists them; default: the device of "
        "this machine or of the store whose name is the cache's device_name)",
    )


def run(args: argparse.Namespace) -> int:
    path = Path(args.cache)
    kernel = open_kernel(args.kernel, args.size)
    data = read_kt_cache(path)
    store = open_store(args)
    try:
        device, note = args.device_identity, ""
        if not device:
            device, note = device_identity(data, store, str(path))
        added, kept = import_kt(path, kernel, store, device)
    finally:
        store.close()
    print(
        f"{added} results imported for {kernel.store_name} on {device} ({kept} already stored)",
        file=sys.stderr,
    )
    if note:
        print(f"gtune: note: {note}", file=sys.stderr)
    return 0


def device_identity(data: Mapping[str, Any], store: ResultStore, source: str) -> tuple[str, str]:
    """The identity to import under: the device of this machine whose name is the cache's
    ``device_name`` (so a later ``gtune run`` there starts from these results), else a
    device of the store with that name, else ``kt-NAME`` with a note on how to choose."""
    name = str(data.get("device_name") or "").strip()
    matches: dict[str, str] = {}
    if name:
        try:
            from gtune.measure import list_devices

            for d in list_devices():
                if d.name.strip() == name:
                    matches[d.identity] = f"{d.identity} ({d.platform})"
        except GtuneError:
            pass  # no OpenCL here: the store may still know the device
        if not matches:
            slug = name_slug(name)
            for row in store.rows():
                if re.sub(r"-[0-9a-f]{8}$", "", row.device) == slug:
                    matches[row.device] = row.device
    if len(matches) == 1:
        return next(iter(matches)), ""
    if len(matches) > 1:
        raise InputError(
            f"device_name {name!r} matches several devices: {'; '.join(matches.values())}",
            source=source,
            hint="choose one with --device-identity ID",
        )
    fallback = "kt-" + (name_slug(name) or "unknown")
    return fallback, (
        f"no device of this machine or of the store is named {name!r}; the results are "
        f"stored under {fallback} and warm-start no run. To use them on a device, import "
        "again with --device-identity ID (`gtune devices` lists the identities)"
    )

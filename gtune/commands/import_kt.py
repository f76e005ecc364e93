"""``gtune import-kt``: a Kernel Tuner cache file into the result store."""

from __future__ import annotations

import argparse
import contextlib
import re
import sys
import time
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import Any

from gtune.campaign.formats import import_kt, read_kt_cache
from gtune.commands._common import open_kernel, open_store
from gtune.device import name_slug
from gtune.escape import terminal
from gtune.exceptions import GtuneError, InputError
from gtune.result import ResultStore

PROGRESS_LINE_S = 10.0  # seconds between progress lines when standard error is no terminal

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
    data = read_kt_cache(path)  # a FIFO, device or folder is refused before it is opened
    store = open_store(args)
    try:
        device, note = args.device_identity, ""
        if not device:
            device, note = device_identity(data, store, str(path))
        space = device_space(kernel, device)
        with _progress() as show:
            report = import_kt(path, kernel, store, device, space=space, progress=show, data=data)
    finally:
        store.close()
    refused = report.refused
    if refused.total and not (report.added or report.kept):
        raise InputError(
            f"every entry was refused: {'; '.join(refused.lines())}",
            source=path,
            hint=f"the entries must be configurations of {kernel.label} at size "
            f"{'x'.join(str(v) for v in kernel.sizes.values())} (--kernel, --size)",
        )
    checked = "" if report.limits else " (device limits unchecked: not a device of this machine)"
    print(
        f"{report.added} results imported for {kernel.store_name} on {device} "
        f"({report.kept} already stored, {refused.total} refused){checked}",
        file=sys.stderr,
    )
    if refused.total:
        print(
            f"gtune: warning: {refused.total} of {report.entries} cache entries refused, "
            "not imported:",
            file=sys.stderr,
        )
        for line in refused.lines():
            print(f"  {terminal(line)}", file=sys.stderr)
    if note:
        print(f"gtune: note: {note}", file=sys.stderr)
    return 0


def device_space(kernel: Any, identity: str) -> Any | None:
    """The space of ``kernel`` on the device of this machine whose identity is
    ``identity`` (its rules check every entry), or None: no such device here."""
    from gtune.measure import list_devices
    from gtune.space import build_space

    try:
        devices = [d for d in list_devices() if d.identity == identity]
    except GtuneError:
        return None
    # min_groups is a search heuristic (too few work-groups to fill the device), no rule
    return build_space(kernel, devices[0], min_groups=False) if devices else None


@contextlib.contextmanager
def _progress() -> Iterator[Callable[[str, int, int], None] | None]:
    """A progress bar on a terminal's standard error; elsewhere (a log) a line every
    :data:`PROGRESS_LINE_S` seconds."""
    if not sys.stderr.isatty():
        last = [time.monotonic()]

        def line(phase: str, done: int, total: int) -> None:
            if time.monotonic() - last[0] >= PROGRESS_LINE_S and done < total:
                last[0] = time.monotonic()
                print(f"gtune: import-kt: {phase} {done:,} of {total:,}", file=sys.stderr)

        yield line
        return
    from rich.console import Console
    from rich.progress import Progress

    with Progress(console=Console(stderr=True), transient=True) as bar:
        tasks: dict[str, Any] = {}

        def show(phase: str, done: int, total: int) -> None:
            if phase not in tasks:
                tasks[phase] = bar.add_task(f"import-kt: {phase}", total=total)
            bar.update(tasks[phase], completed=done, total=total)

        yield show


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

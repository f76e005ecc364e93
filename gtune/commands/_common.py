"""Helpers shared by the subcommands: option parsing and output."""

from __future__ import annotations

import argparse
import re

from gtune.exceptions import InputError
from gtune.kernel import TunableKernel, load_kernel
from gtune.result import ResultStore, Status
from gtune.store import open_store as open_store_url


def parse_size(text: str | None, kernel: TunableKernel | None = None) -> dict[str, int] | None:
    """``256x256x256`` (in the order of the kernel's problem names) or ``NX=256,NY=64``."""
    if not text:
        return None
    if "=" in text:
        out: dict[str, int] = {}
        for part in text.split(","):
            name, _, value = part.partition("=")
            if not value.strip().isdigit():
                raise InputError(f"bad size {part!r}; expected NAME=integer", source="--size")
            out[name.strip()] = int(value)
        return out
    if not re.fullmatch(r"\d+(x\d+)*", text):
        raise InputError(
            f"bad size {text!r}; expected e.g. 256x256x256 or NX=256,NY=128", source="--size"
        )
    values = [int(v) for v in text.split("x")]
    if any(v <= 0 for v in values):
        raise InputError(f"sizes must be positive, got {text!r}", source="--size")
    names = list(kernel.sizes) if kernel is not None else ["NX", "NY", "NZ"]
    if len(values) > len(names):
        raise InputError(
            f"{len(values)} sizes given but the kernel has {len(names)} ({', '.join(names)})",
            source="--size",
        )
    return dict(zip(names, values, strict=False))


def parse_config(text: str) -> dict[str, int]:
    """``WX=32,WY=4`` into a configuration."""
    out: dict[str, int] = {}
    for part in filter(None, text.split(",")):
        name, _, value = part.partition("=")
        try:
            out[name.strip()] = int(value)
        except ValueError:
            raise InputError(
                f"bad setting {part!r}; expected NAME=integer", source="--config"
            ) from None
    return out


def open_kernel(path: str, size: str | None) -> TunableKernel:
    kernel = load_kernel(path)
    sizes = parse_size(size, kernel)
    return kernel.with_sizes(sizes) if sizes else kernel


def open_store(args: argparse.Namespace, *, readonly: bool = False) -> ResultStore:
    """The store named by ``--db`` (a path or URL), else ``$GTUNE_DB`` or the default.

    Opened before any work starts, so a store that cannot be written or reached is
    reported at once."""
    return open_store_url(getattr(args, "db", None), readonly=readonly)


REMEASURE_HELP = (
    "measure again stored configurations of these statuses instead of serving them: "
    f"{', '.join(s.value for s in Status)} or all (e.g. timeout,crashed)"
)


def parse_remeasure(text: str | None) -> frozenset[Status]:
    """``timeout,crashed`` (or ``all``) into the statuses to re-measure."""
    if text is None:
        return frozenset()
    names = [n.strip().lower() for n in text.split(",") if n.strip()]
    if not names:
        raise InputError("no status given; e.g. timeout,crashed or all", source="--remeasure")
    if "all" in names:
        return frozenset(Status)
    known = {s.value: s for s in Status}
    for name in names:
        if name not in known:
            raise InputError(
                f"unknown status {name!r}; expected {', '.join(known)} or all",
                source="--remeasure",
            )
    return frozenset(known[n] for n in names)


def fmt_seconds(s: float) -> str:
    if s == float("inf"):
        return "-"
    if s < 1e-3:
        return f"{s * 1e6:.1f} µs"
    if s < 1:
        return f"{s * 1e3:.3f} ms"
    return f"{s:.2f} s"

"""Helpers shared by the subcommands: option parsing and output."""

from __future__ import annotations

import argparse
import re

from gtune.exceptions import InputError
from gtune.kernel import TunableKernel, load_kernel
from gtune.store import SQLiteStore


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


def open_store(args: argparse.Namespace) -> SQLiteStore:
    return SQLiteStore(getattr(args, "db", None))


def fmt_seconds(s: float) -> str:
    if s == float("inf"):
        return "-"
    if s < 1e-3:
        return f"{s * 1e6:.1f} µs"
    if s < 1:
        return f"{s * 1e3:.3f} ms"
    return f"{s:.2f} s"

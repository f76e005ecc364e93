"""Command-line options for plain kernels (a ``.cl`` with no description beside it).

Shared by ``gtune run``, ``gtune measure`` and ``gtune describe``: each flag's value is
checked here, and errors name the flag.
"""

from __future__ import annotations

import argparse
import os
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from gtune import escape
from gtune.commands._common import parse_config, parse_size
from gtune.description import load_kernel
from gtune.exceptions import InputError
from gtune.kernel import TunableKernel

_FLAGS = (
    ("--param", "param"),
    ("--global", "global_size"),
    ("--scalar", "scalar"),
    ("--kernel-name", "kernel_name"),
    ("--default", "default"),
    ("--array", "array"),
    ("--define", "define"),
    ("--reference", "reference"),
    ("--local", "local_size"),
    ("--role", "role"),
    ("--constraint", "constraint"),
    ("-I", "include"),
)


def add_plain_arguments(p: argparse.ArgumentParser) -> None:
    plain = p.add_argument_group("plain kernels (a .cl with no description beside it)")
    plain.add_argument(
        "--param",
        action="append",
        default=[],
        metavar="NAME=V1,V2,...|NAME=EXPR",
        help="a compile-time macro to tune, with its values, or tied to other parameters "
        "(block_size_x=WX) (repeatable)",
    )
    plain.add_argument(
        "--global",
        dest="global_size",
        metavar="EXPR,...",
        help="global size per launch dimension, x first, e.g. NX,NY/ROWS or "
        "(NX+WX-1)/WX*WX,NY (default: the problem size); fewer dimensions than the data "
        "for kernels that loop over the rest",
    )
    plain.add_argument(
        "--scalar",
        action="append",
        default=[],
        metavar="NAME=VALUE",
        help="value (an expression of the sizes) of a scalar kernel argument (repeatable)",
    )
    plain.add_argument("--kernel-name", help="the __kernel function, when the file has several")
    plain.add_argument(
        "--default",
        metavar="NAME=V,...",
        help="the kernel's shipped configuration, e.g. WX=16,WY=16: speedups are reported "
        "over it, and it is the reference (default: the kernel's reqd_work_group_size)",
    )
    plain.add_argument(
        "--array",
        action="append",
        default=[],
        metavar="NAME=[TYPE:]SHAPE",
        help="an array's shape, x first, e.g. in=NX+2,NY+2 for a padded input or c=9 "
        "(default: the problem size); NAME=TYPE:SHAPE, e.g. srcptr=float32:NX,NY, for a "
        "buffer holding elements of another type than its pointer's (a uchar * addressed "
        "in bytes) (repeatable)",
    )
    plain.add_argument(
        "--define",
        action="append",
        default=[],
        metavar="NAME=VALUE",
        help="a fixed macro for every build, e.g. DATA_TYPE=float or "
        "'SQR(x)=((x)*(x))' (repeatable)",
    )
    plain.add_argument(
        "--local",
        dest="local_size",
        metavar="EXPR,...",
        help="local size per launch dimension, e.g. WX,WX for square work-groups "
        "(default: WX,WY,WZ); a work-group name it does not use is not tuned",
    )
    plain.add_argument(
        "--role",
        action="append",
        default=[],
        metavar="NAME=input|output|inout",
        help="an array's role, where the kernel body says otherwise (repeatable)",
    )
    plain.add_argument(
        "--constraint",
        action="append",
        default=[],
        metavar="EXPR",
        help="a rule every configuration must satisfy, e.g. 'WX * ROWS <= 256' (repeatable)",
    )
    plain.add_argument(
        "-I",
        dest="include",
        action="append",
        default=[],
        metavar="DIR",
        help="a folder searched for #include files after the kernel's own (repeatable)",
    )
    plain.add_argument(
        "--reference",
        metavar="FILE.py:FUNCTION",
        help="a numpy reference (docs/description.md) instead of the default "
        "configuration's output",
    )


def note_lines(kernel: TunableKernel) -> list[str]:
    """What plain mode guessed, one line each (``inferred: ...``; warnings as
    ``warning: ...``), as ``gtune run`` and ``gtune measure`` print them first."""
    return [n if n.startswith("warning: ") else f"inferred: {n}" for n in kernel.inferred]


def is_plain(path: str) -> bool:
    """A ``.cl`` with no description beside it is tuned from the command line's facts."""
    p = Path(path)
    return p.suffix == ".cl" and not any(p.with_suffix(s).exists() for s in (".yaml", ".yml"))


def open_tunable(args: argparse.Namespace) -> TunableKernel:
    """The kernel: from its description, or inferred for a plain ``.cl``."""
    given = [flag for flag, dest in _FLAGS if getattr(args, dest, None)]
    escape.check_file_name(args.kernel, "kernel's file name")
    if not Path(args.kernel).exists():
        raise InputError("file not found", source=args.kernel)
    if not is_plain(args.kernel):
        if given:
            raise InputError(
                f"{given[0]} applies only to a plain .cl without a description; "
                "this kernel has one (edit it instead)",
                source=args.kernel,
            )
        kernel = load_kernel(args.kernel)
        sizes = parse_size(args.size, kernel, whole=True)
        return kernel.with_sizes(sizes) if sizes else kernel
    from gtune.plain import plain_kernel

    if not args.size:
        raise InputError(
            "a plain kernel (no description beside it) needs the problem size: "
            "give --size, e.g. --size 1024x1024",
            source=args.kernel,
        )
    sizes = parse_size(args.size) or {}
    if list(sizes) != ["NX", "NY", "NZ"][: len(sizes)]:
        raise InputError(
            "a plain kernel's sizes are NX, NY, NZ in that order (e.g. 64x64x8)", source="--size"
        )
    default = getattr(args, "default", None)
    return plain_kernel(
        args.kernel,
        sizes=list(sizes.values()),
        kernel_name=args.kernel_name,
        params=parse_params(args.param),
        global_size=split_exprs(args.global_size, "--global") if args.global_size else None,
        scalars=parse_pairs(args.scalar, "--scalar"),
        default=_parse_default(default) if default else None,
        arrays={
            k: split_exprs(v, f"--array {k}")
            for k, v in parse_pairs(getattr(args, "array", []), "--array").items()
        },
        defines=parse_pairs(getattr(args, "define", []), "--define", macros=True),
        reference=getattr(args, "reference", None),
        local_size=split_exprs(args.local_size, "--local")
        if getattr(args, "local_size", None)
        else None,
        roles=parse_pairs(getattr(args, "role", []), "--role"),
        constraints=list(getattr(args, "constraint", [])),
        include_dirs=list(getattr(args, "include", [])),
    )


def _parse_default(text: str) -> dict[str, int]:
    try:
        return parse_config(text)
    except InputError as exc:
        raise InputError(exc.message, source="--default") from None


def split_exprs(text: str, option: str) -> list[str]:
    """``a,b,c`` into expressions, splitting only on commas outside parentheses."""
    parts, depth, cur = [], 0, ""
    for ch in text:
        depth += ch == "("
        depth -= ch == ")"
        if ch == "," and depth == 0:
            parts.append(cur.strip())
            cur = ""
        else:
            cur += ch
    parts.append(cur.strip())
    if not all(parts):
        raise InputError(f"empty expression in {text!r}", source=option)
    return parts


def parse_params(items: list[str]) -> dict[str, list[int] | str]:
    """``NAME=1,2,4`` (values to tune) or ``NAME=EXPR`` (tied to other parameters)."""
    out: dict[str, list[int] | str] = {}
    for item in items:
        name, sep, values = item.partition("=")
        name, values = name.strip(), values.strip()
        if not sep or not name.isidentifier() or not values:
            raise InputError(
                f"bad --param {item!r}; expected NAME=1,2,4 or NAME=EXPR", source="--param"
            )
        if name in out:
            raise InputError(f"{name} given twice", source="--param")
        if re.fullmatch(r"-?\d+(\s*,\s*-?\d+)*\s*,?", values):
            out[name] = [int(v) for v in values.split(",") if v.strip()]
        else:
            out[name] = values
    return out


def parse_pairs(items: list[str], option: str, *, macros: bool = False) -> dict[str, str]:
    """``NAME=VALUE`` items (with ``macros``, also function-like ``NAME(a,b)=VALUE``, and
    an empty value, ``NAME=``: a macro that expands to nothing, as ``-D NAME=`` does)."""
    out: dict[str, str] = {}
    for item in items:
        name, sep, value = item.partition("=")
        ok_name = name.strip().isidentifier() or (
            macros and re.fullmatch(r"\s*[A-Za-z_]\w*\([\w\s,]*\)\s*", name) is not None
        )
        if not sep or not ok_name or not (value.strip() or macros):
            raise InputError(f"bad {option} {item!r}; expected NAME=VALUE", source=option)
        if name.strip() in out:
            raise InputError(f"{name.strip()} given twice", source=option)
        out[name.strip()] = value.strip()
    return out


ORIGINAL_FLAGS = (
    "--param",
    "--global",
    "--scalar",
    "--kernel-name",
    "--default",
    "--array",
    "--define",
    "--local",
    "--role",
    "--constraint",
    "-I",
)
"""The plain-kernel flags a definition's ``original.flags`` may hold: facts about the
launch and the macros, never ``--reference`` (code) or a folder outside the
definition's own (docs/robustness.md, security model)."""


def original_kernel(definition: Any, sizes: Mapping[str, int]) -> TunableKernel:
    """The original kernel of a lifted definition (its ``original:``: source, kernel and
    plain flags, as ``gtune lift`` recorded them) at ``sizes``.

    A definition is data: its flags are read against :data:`ORIGINAL_FLAGS` only, and
    its source and ``-I`` folders must lie in the definition's folder (or below it),
    as a description's ``source`` must, or in a folder the user trusts."""
    where = definition.source
    orig = definition.original
    source, flags = orig.get("source"), orig.get("flags", [])
    if not isinstance(source, str) or not source:
        raise InputError("original.source: expected the original kernel's file", source=where)
    if not isinstance(flags, list) or not all(isinstance(f, str) for f in flags):
        raise InputError("original.flags: expected a list of plain-kernel flags", source=where)
    folder = Path(where).parent
    args = _original_flags(flags, where)
    args.kernel = str(_inside(folder, source, "original.source", where))
    args.include = [str(_inside(folder, d, "original.flags: -I", where)) for d in args.include]
    args.size = "x".join(str(sizes[n]) for n in ("NX", "NY", "NZ") if n in sizes)
    kernel = open_tunable(args)
    if kernel.name != orig.get("kernel", kernel.name):
        raise InputError(
            f"original.kernel: {orig['kernel']} is not the kernel {source} holds "
            f"({kernel.name}); add --kernel-name to original.flags",
            source=where,
        )
    return kernel


def _original_flags(flags: list[str], where: str) -> argparse.Namespace:
    """``original.flags`` parsed: only :data:`ORIGINAL_FLAGS`, spelled out in full."""
    parser = argparse.ArgumentParser(
        prog="original.flags", add_help=False, exit_on_error=False, allow_abbrev=False
    )
    add_plain_arguments(parser)
    try:
        args, extra = parser.parse_known_args(flags)
    except argparse.ArgumentError as exc:
        raise InputError(f"original.flags: {exc}", source=where) from None
    if extra:
        raise InputError(
            f"original.flags: not a plain-kernel flag: {escape.visible(extra[0])}", source=where
        )
    for flag, dest in _FLAGS:
        if getattr(args, dest, None) and flag not in ORIGINAL_FLAGS:
            raise InputError(
                f"original.flags: {flag} is not allowed in a definition: a definition is "
                "data, and a Python reference is code that would run with your "
                "permissions (a lifted definition needs none: the original's output is "
                f"its reference); allowed: {', '.join(ORIGINAL_FLAGS)}",
                source=where,
            )
    return args


def definition_flags(flags: list[str], kernel: str, output: str | Path) -> list[str]:
    """The plain flags ``gtune lift`` records in ``output``'s ``original:``, with each
    ``-I`` folder relative to the definition (as ``original_kernel`` reads it). The
    kernel and its ``-I`` folders must be where the definition may name them (its
    folder or below, or a trusted folder): refused before anything runs otherwise."""
    folder = Path(output).resolve().parent
    where = str(output)
    _inside(folder, os.path.relpath(Path(kernel).resolve(), folder), "original.source", where)
    out: list[str] = []
    pairs = iter(flags)
    for flag in pairs:
        out.append(flag)
        if flag == "-I":
            full = Path(next(pairs)).resolve()
            _inside(folder, os.path.relpath(full, folder), "original.flags: -I", where)
            inside = full.is_relative_to(folder)
            out.append(str(full.relative_to(folder)) if inside else str(full))
    return out


def _inside(folder: Path, name: str, key: str, where: str) -> Path:
    """``name`` (relative to ``folder``) if it lies in ``folder`` or below it, or in a
    folder the user trusts (gtune's own ``stencils/``, ``--trust-module DIR``,
    ``$GTUNE_TRUST_MODULES``)."""
    from gtune.description import TRUST_ENV, file_trusted, trusted_modules

    escape.check_file_name(name, f"{key} path")
    full = (folder / name).resolve()
    if not full.is_relative_to(folder.resolve()) and not file_trusted(full, trusted_modules()):
        raise InputError(
            f"{key}: {name!r} lies outside the definition's folder; a definition may only "
            "name files and folders beside it or below it. Move the definition beside its "
            f"original kernel, or, if you trust that folder, allow it with --trust-module "
            f"{full.parent if full.is_file() else full} (also ${TRUST_ENV})",
            source=where,
        )
    return full

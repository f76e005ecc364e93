"""Tuning a plain ``.cl`` with no description: infer what the signature tells.

The kernel's arguments come from its signature: ``__global const T*`` is an input array,
``__global T*`` an output array (both with the problem's element count), a scalar takes
its value from ``--scalar NAME=V`` or, when its name matches a problem size (``nx`` or
``NX``), that size. The work-group size is tuned (``WX``, ``WY``, ``WZ`` for as many
dimensions as the problem has), plus any compile-time macros given as ``--param``. The
global size is the problem size unless ``--global`` says otherwise. Since there is no
reference, the output of the first configuration (every parameter at its first value)
is taken as correct.

The result is an ordinary description, validated like a hand-written one.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from gtune.exceptions import InputError
from gtune.kernel import TunableKernel, parse_description

_CTYPES = {
    "float": "float32",
    "double": "float64",
    "int": "int32",
    "uint": "uint32",
    "unsigned int": "uint32",
    "long": "int64",
    "short": "int16",
    "ushort": "uint16",
    "char": "int8",
    "uchar": "uint8",
    "unsigned char": "uint8",
}
_KERNEL_RE = re.compile(
    r"(?:__kernel|kernel)\s+(?:__attribute__\s*\(\(.*?\)\)\s*)?void\s+"
    r"(?:__attribute__\s*\(\(.*?\)\)\s*)?(\w+)\s*\(([^)]*)\)",
    re.S,
)
_SIZE_NAMES = ("NX", "NY", "NZ")


def _strip_comments(source: str) -> str:
    source = re.sub(r"/\*.*?\*/", " ", source, flags=re.S)
    return re.sub(r"//[^\n]*", " ", source)


def kernel_signatures(source: str) -> dict[str, list[str]]:
    """Kernel function names and their raw parameter declarations."""
    found = {}
    for m in _KERNEL_RE.finditer(_strip_comments(source)):
        params = [p.strip() for p in m.group(2).split(",") if p.strip()]
        found[m.group(1)] = params
    return found


def _parse_param(decl: str, where: str) -> dict[str, Any]:
    words = decl.replace("*", " * ").split()
    name = words[-1]
    if not name.isidentifier():
        raise InputError(f"cannot read the kernel parameter {decl!r}", source=where)
    is_pointer = "*" in words
    qualifiers = {"__global", "global", "const", "__const", "restrict", "__restrict", "volatile"}
    type_words = [w for w in words[:-1] if w not in qualifiers and w != "*"]
    ctype = " ".join(type_words)
    if is_pointer:
        if not ({"__global", "global"} & set(words)):
            raise InputError(
                f"parameter {name!r} is a {words[0]} pointer; only __global arrays can be "
                "inferred (write a description for local or constant buffers)",
                source=where,
            )
        base = re.sub(r"\d+$", "", ctype)
        if base not in _CTYPES or base != ctype:
            raise InputError(
                f"parameter {name!r}: element type {ctype!r} is not supported for inference "
                f"(supported: {', '.join(sorted(_CTYPES))})",
                source=where,
            )
        const = "const" in words or "__const" in words
        return {"name": name, "kind": "buffer", "dtype": _CTYPES[base], "const": const}
    if ctype not in _CTYPES and ctype not in ("size_t", "unsigned long", "ulong"):
        raise InputError(
            f"parameter {name!r} has type {ctype!r}; images and structs need a description",
            source=where,
        )
    dtype = _CTYPES.get(ctype, "uint64")
    return {"name": name, "kind": "scalar", "dtype": dtype}


def plain_kernel(
    path: str | Path,
    *,
    sizes: Sequence[int],
    kernel_name: str | None = None,
    params: Mapping[str, Sequence[int]] | None = None,
    global_size: Sequence[str] | None = None,
    scalars: Mapping[str, str] | None = None,
    max_wg: int = 1024,
) -> TunableKernel:
    """A :class:`TunableKernel` for a bare OpenCL file, from the command line's facts."""
    p = Path(path)
    where = str(p)
    try:
        source = p.read_text()
    except OSError as exc:
        raise InputError(f"cannot read: {exc.strerror}", source=p) from None
    sigs = kernel_signatures(source)
    if not sigs:
        raise InputError("no __kernel function found", source=where)
    if kernel_name is None:
        if len(sigs) > 1:
            raise InputError(
                f"several kernels ({', '.join(sigs)}); choose one with --kernel-name", source=where
            )
        kernel_name = next(iter(sigs))
    if kernel_name not in sigs:
        raise InputError(f"no kernel {kernel_name!r}; found {', '.join(sigs)}", source=where)
    if not 1 <= len(sizes) <= 3:
        raise InputError("give the problem size with --size, e.g. 1024x1024", source=where)
    size_names = _SIZE_NAMES[: len(sizes)]
    problem = dict(zip(size_names, sizes, strict=True))
    shape = list(reversed(size_names))  # x fastest
    scalars = dict(scalars or {})
    arguments: list[dict[str, Any]] = []
    first_input: str | None = None
    for decl in sigs[kernel_name]:
        info = _parse_param(decl, where)
        if info["kind"] == "buffer":
            role = "input" if info["const"] else "output"
            arg = {"name": info["name"], "dtype": info["dtype"], "role": role, "shape": shape}
            if role == "input":
                first_input = first_input or info["name"]
                arg["init"] = "random"
            else:
                arg["init"] = f"copy:{first_input}" if first_input else "zeros"
            arguments.append(arg)
            continue
        name = info["name"]
        if name in scalars:
            value = scalars.pop(name)
        elif name.upper() in problem:
            value = name.upper()
        elif name.lower() in ("n", "size", "count", "len", "length"):
            value = " * ".join(size_names)
        else:
            raise InputError(
                f"no value for the scalar parameter {name!r}: give --scalar {name}=VALUE",
                source=where,
            )
        arguments.append({"name": name, "kind": "scalar", "dtype": info["dtype"], "value": value})
    if scalars:
        raise InputError(f"--scalar names unknown parameter {next(iter(scalars))!r}", source=where)

    wg_names = ["WX", "WY", "WZ"][: len(sizes)]
    parameters: dict[str, Any] = {
        n: {"pow2": [1, f"min({s}, {max_wg})"]} for n, s in zip(wg_names, size_names, strict=True)
    }
    for name, values in (params or {}).items():
        if name in parameters or name in problem:
            raise InputError(f"--param {name} clashes with a built-in name", source=where)
        parameters[name] = {"values": list(values)}
    glob = list(global_size) if global_size else list(size_names)
    if len(glob) != len(sizes):
        raise InputError(
            f"--global has {len(glob)} dimensions but the problem has {len(sizes)}", source=where
        )
    first = {n: 1 for n in wg_names}
    first.update({n: int(v[0]) for n, v in (params or {}).items()})
    raw: dict[str, Any] = {
        "kernel": kernel_name,
        "source": p.name,
        "problem": problem,
        "arguments": arguments,
        "parameters": parameters,
        "constraints": [" * ".join(wg_names) + " <= MAX_WORK_GROUP_SIZE"],
        "launch": {"global": glob, "local": wg_names},
        "reference": {"config": first},
    }
    return parse_description(raw, source=source, label=where, source_path=str(p.resolve()))

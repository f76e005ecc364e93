"""Tuning a plain ``.cl`` with no description: infer what the kernel itself tells.

The source is run through a real C preprocessor (``cpp``) with the ``-D`` values the
compiler will see, so macros and typedefs resolve as they do on the device. The kernel's
body then says which ``__global`` arrays it reads, writes or both (``const`` is not
trusted: kernels written elsewhere seldom use it); ``__constant`` arrays are inputs. Every
array starts as random data. Scalars get a value only where their name leaves no doubt
(``nx`` is ``NX``) or from ``--scalar``. The work-group size (``WX``, ``WY``, ``WZ`` for
the launch's dimensions) is tuned with any ``--param`` macros; ``--param NAME=EXPR`` ties
a macro to other parameters instead. Unless a Python reference is given, the output of
the default configuration is taken as correct.

Every guess is recorded as a human-readable note in the description's ``inferred`` list;
the result is an ordinary description, validated like a hand-written one.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from fractions import Fraction
from pathlib import Path
from typing import Any

import numpy as np

from gtune.clsource import (
    FunctionDecl,
    KernelDecl,
    Param,
    array_uses,
    find_functions,
    find_kernels,
    match_bracket,
    parse_param,
    pointer_to_const,
    preprocess,
    split_top,
    strip_comments,
    struct_fields,
    typedefs,
)
from gtune.description import parse_description
from gtune.device import LIMIT_NAMES
from gtune.exceptions import ExpressionError, InputError
from gtune.expr import Expr, substitute
from gtune.kernel import DTYPES, TunableKernel

_CTYPES = {
    "float": "float32",
    "double": "float64",
    "int": "int32",
    "signed int": "int32",
    "uint": "uint32",
    "unsigned int": "uint32",
    "unsigned": "uint32",
    "long": "int64",
    "ulong": "uint64",
    "unsigned long": "uint64",
    "short": "int16",
    "ushort": "uint16",
    "unsigned short": "uint16",
    "char": "int8",
    "uchar": "uint8",
    "unsigned char": "uint8",
    "size_t": "uint64",
}
_SIZE_NAMES = ("NX", "NY", "NZ")
_WG_NAMES = ("WX", "WY", "WZ")
# Scalar names that can only mean one problem size (compared case-insensitively).
_SIZE_ALIASES = {
    "NX": (
        *("nx", "n_x", "width", "dimx", "dim_x", "sizex", "size_x"),
        *("cols", "ncols", "n_cols", "num_cols", "columns", "image_width", "img_width"),
    ),
    "NY": (
        *("ny", "n_y", "height", "dimy", "dim_y", "sizey", "size_y"),
        *("rows", "nrows", "n_rows", "num_rows", "image_height", "img_height"),
    ),
    "NZ": ("nz", "n_z", "depth", "dimz", "dim_z", "sizez", "size_z"),
}
_Fields = list[tuple[str, str]]  # a struct's fields: (C type, name), in order
# ... and, when the problem has one dimension only, the names of its length.
_LENGTH_ALIASES = ("n", "len", "length", "size", "count", "nelements", "n_elements", "num_elements")


# ---------------------------------------------------------------------------------
# The description


VECTOR_LANES = (2, 4, 8, 16)
"""The OpenCL vector widths an array's pointer may have (a 3-vector takes the room of
four, so its arrays are not plain arrays of its element type)."""


def vector_type(ctype: str) -> tuple[str, int]:
    """``float4`` -> (``float``, 4); a scalar type -> (itself, 1); a 3-vector or another
    width stays as it is (refused by :func:`_dtype`)."""
    m = re.fullmatch(r"([a-z]+)(\d+)", ctype)
    if m and m.group(1) in _CTYPES and int(m.group(2)) in VECTOR_LANES:
        return m.group(1), int(m.group(2))
    return ctype, 1


def _dtype(ctype: str, what: str, where: str) -> str:
    if ctype in _CTYPES:
        return _CTYPES[ctype]
    base = re.sub(r"\d+$", "", ctype)
    if base != ctype and base in _CTYPES:
        arrays = "an array's pointer may be a vector of 2, 4, 8 or 16"
        raise InputError(
            f"{what} has the vector type {ctype!r}; {arrays} (a 3-vector is padded to four: "
            "describe its array in a description), a scalar a vector of 2, 3, 4, 8 or 16 "
            "(--scalar NAME=A,B: its lanes)",
            source=where,
        )
    macro = re.fullmatch(r"[A-Z_][A-Z0-9_]*", ctype) is not None  # DATA_TYPE, REAL
    if macro:  # (the hint says what it likely is)
        instead = "images need a description"
    elif re.fullmatch(r"image\w*_t|sampler_t", ctype):
        instead = (
            "images need a description (gtune run, docs/description.md); gtune lift reads "
            "no images: lift a copy of the kernel that reads a __global array instead"
        )
    else:
        instead = (
            "a struct cannot be passed (neither by lift nor by a description: a kernel's "
            "arguments are arrays and scalars): lift a copy of the kernel that takes one "
            "scalar argument per field, of the field's type (grid.dt -> grid_dt)"
        )
    raise InputError(
        f"{what} has type {ctype!r}, which plain mode cannot infer "
        f"(supported: {', '.join(sorted(_CTYPES))}); {instead}",
        source=where,
        hint=f"a macro the host defines at build time? give it: --define {ctype}=float"
        if macro
        else "",
    )


def _expr(text: str, option: str, known: set[str]) -> Expr:
    e = Expr(text, option)
    e.check_names(known)
    return e


def _shape_text(exprs: Sequence[str]) -> list[str]:
    """x-first command-line order to the description's C order (slowest first)."""
    return [str(e).strip() for e in reversed(exprs)]


def array_view(exprs: Sequence[str], where: str) -> tuple[str, list[str]]:
    """``--array NAME=TYPE:SHAPE`` (x first): the element type the buffer holds where
    its pointer's C type is not it (``float32:NX,NY``: OpenCV's ``uchar *srcptr``
    holding floats addressed in bytes), and the shape, in those elements; ``("",
    exprs)`` without a type. TYPE is a description's dtype (``float32``, ``uint8``) or
    its OpenCL C name (``float``, ``uchar``)."""
    m = re.fullmatch(r"\s*([A-Za-z_]\w*)\s*:(.*)", exprs[0], re.S) if exprs else None
    if m is None:
        return "", list(exprs)
    name, first = m.group(1), m.group(2).strip()
    dtype = name if name in DTYPES else _CTYPES.get(name)
    if dtype is None or not first:
        raise InputError(
            f"expected TYPE:SHAPE, the element type the buffer holds and its shape in "
            f"those elements (float32:NX,NY), TYPE one of {', '.join(DTYPES)} or its "
            f"OpenCL C name (float, uchar, ...); got {','.join(exprs)!r}",
            source=where,
        )
    return dtype, [first, *exprs[1:]]


def _view_note(name: str, ctype: str, dtype: str) -> str:
    """How plain mode reads a pointer given another element type (``--array
    srcptr=float32:...``): the same bytes, the shape in the given elements."""
    base, lanes = vector_type(ctype)
    ratio = Fraction(np.dtype(dtype).itemsize, np.dtype(_CTYPES[base]).itemsize * lanes)
    per = (
        f"{ratio} {ctype}s per {dtype} element (a step or offset in {ctype}s is {ratio} "
        "times one in elements)"
        if ratio >= 1
        else f"{1 / ratio} {dtype} elements per {ctype}"
    )
    return (
        f"{name}: a {ctype} pointer: the array is given in {dtype} elements (--array "
        f"{name}={dtype}:...), its shape counts them; the kernel addresses the same bytes "
        f"as {ctype}s, {per}"
    )


def _attribute_sizes(attributes: str) -> list[str] | None:
    m = re.search(r"reqd_work_group_size\s*\(", attributes)
    if not m:
        return None
    end = match_bracket(attributes, m.end() - 1, "(", ")")
    return split_top(attributes[m.end() : end - 1])


def plain_kernel(
    path: str | Path,
    *,
    sizes: Sequence[int],
    kernel_name: str | None = None,
    params: Mapping[str, Sequence[int] | str] | None = None,
    global_size: Sequence[str] | None = None,
    scalars: Mapping[str, str] | None = None,
    max_wg: int = 1024,
    default: Mapping[str, int] | None = None,
    arrays: Mapping[str, Sequence[str]] | None = None,
    defines: Mapping[str, str] | None = None,
    reference: str | None = None,
    local_size: Sequence[str] | None = None,
    roles: Mapping[str, str] | None = None,
    constraints: Sequence[str] | None = None,
    include_dirs: Sequence[str | Path] = (),
) -> TunableKernel:
    """A :class:`TunableKernel` for a bare OpenCL file, from the command line's facts.

    ``params`` maps a macro to its tunable values, or to an expression of the sizes and
    other parameters that it must equal (``{"block_size_x": "WX"}``). ``global_size`` is
    per launch dimension (fewer than the problem's dimensions for kernels that loop over
    the rest). ``default`` is the shipped configuration (speedups are reported over it;
    it is also the reference unless ``reference`` names ``file.py:function``). ``arrays``
    gives an array's shape, x first (``{"in": ["NX+2", "NY+2"]}``); ``defines`` fixed
    macros (``{"DATA_TYPE": "float"}``, function-like ``{"SQR(x)": "((x)*(x))"}``).

    The work-group size is tuned as ``WX``/``WY``/``WZ``; ``local_size`` (or
    ``params={"WY": "WX"}``) gives the local size per dimension as expressions instead
    (``["WX", "WX"]``: square groups), and a work-group name no longer used is not tuned.
    ``roles`` overrides the inferred role of an array (``{"aux": "input"}``);
    ``constraints`` are extra expressions every configuration must satisfy;
    ``include_dirs`` are searched for ``#include`` files after the kernel's own folder.
    """
    p = Path(path)
    where = str(p)
    try:
        source = p.read_text()
    except (OSError, UnicodeDecodeError) as exc:
        raise InputError(f"cannot read: {getattr(exc, 'strerror', exc)}", source=p) from None
    if not 1 <= len(sizes) <= 3:
        raise InputError(
            f"{where}: give the problem size, 1 to 3 dimensions (1024x1024)", source="sizes"
        )
    notes: list[str] = []
    t = _tuning(
        sizes,
        params=params,
        global_size=global_size,
        local_size=local_size,
        defines=defines,
        constraints=constraints,
        default=default,
    )
    include = _include_folders(p, include_dirs)
    kernel_name, decl, raw_decls = _find_kernel(source, t, include, kernel_name, where)
    fixed_wg = _fixed_work_group(decl, raw_decls.get(kernel_name), t, notes)
    decl, types, helpers, structs = _reference_reading(
        source, t, include, kernel_name, where, notes
    )
    arguments = _arguments(
        decl,
        types,
        helpers,
        t,
        structs=structs,
        scalars=scalars,
        roles=roles,
        arrays=arrays,
        where=where,
        notes=notes,
    )
    parameters = _parameters(t, fixed_wg, max_wg, notes, reference_given=bool(reference))
    _launch_notes(t, notes)
    raw = _raw_description(p.name, source, t, kernel_name, arguments, parameters, include)
    trusted = _reference(raw, reference, t, notes)
    if global_size is None:
        notes.append(f"global size: {', '.join(t.glob)} (one work-item per point)")
    raw["inferred"] = notes
    return parse_description(
        raw,
        source=source,
        label=where,
        source_path=str(p.resolve()),
        base_dir=p.resolve().parent,  # a reference file lies beside the kernel
        trust_modules=trusted,
    )


def _raw_description(
    file_name: str,
    source: str,
    t: _Tuning,
    kernel_name: str,
    arguments: list[Any],
    parameters: dict[str, Any],
    include: Sequence[Path],
) -> dict[str, Any]:
    """The description's data: the launch's work-group limit and the given constraints,
    tied macros as defines, fixed macros and include folders as build options."""
    raw: dict[str, Any] = {
        "kernel": kernel_name,
        "source": file_name,
        "problem": t.problem,
        "arguments": arguments,
        "parameters": parameters,
        "constraints": [
            " * ".join(e if e.isidentifier() or e.isdigit() else f"({e})" for e in t.local)
            + " <= MAX_WORK_GROUP_SIZE",
            *t.extra_constraints,
        ],
        "launch": {"global": t.glob, "local": t.local},
    }
    if t.ties:
        raw["defines"] = {n: e.text for n, e in t.tie_exprs.items()}
    options = [f"-D{k}={v}" for k, v in t.extra_defines.items()]
    if re.search(r"(?m)^\s*#\s*include\b", strip_comments(source)):
        # the compiler gets the source as text: headers are found where cpp found them
        options += [f"-I{d}" for d in include]
    if options:
        raw["build_options"] = options
    return raw


@dataclass
class _Tuning:
    """What the options say about the launch and the tuned parameters, checked."""

    problem: dict[str, int]
    size_names: list[str]
    glob: list[str]  # global size per launch dimension, tied work-group names replaced
    local: list[str]  # local size per launch dimension, likewise
    all_wg: list[str]  # WX, WY, WZ up to the launch's dimensions
    wg_names: list[str]  # the work-group names that are tuned
    wg_values: dict[str, list[int]]  # params WX=16,32: the work-group values to try
    tunable: dict[str, list[int]]
    ties: dict[str, str]
    wg_ties: dict[str, str]
    tie_exprs: dict[str, Expr]
    extra_defines: dict[str, str]
    extra_constraints: list[str]
    default: dict[str, int]

    def first_config(self) -> dict[str, int]:
        """The default (or first) values: the first reading of the kernel, and its
        reference unless a reference function is given."""
        cfg = {n: self.default.get(n, self.wg_values.get(n, [1])[0]) for n in self.wg_names}
        cfg.update({n: self.default.get(n, v[0]) for n, v in self.tunable.items()})
        return cfg

    def all_defines(self, cfg: Mapping[str, int]) -> dict[str, Any]:
        env: dict[str, int | float | bool] = {**self.problem, **cfg}
        out: dict[str, Any] = {**self.problem, **cfg}
        out.update({n: e.evaluate_int(env) for n, e in self.tie_exprs.items()})
        out.update(self.extra_defines)
        return out

    def given_defines(self) -> dict[str, Any]:
        """Only what the user fixed: the kernel's own macro defaults show through."""
        env: dict[str, int | float | bool] = {**self.problem, **self.default}
        out: dict[str, Any] = dict(env)
        out.update(
            {n: e.evaluate_int(env) for n, e in self.tie_exprs.items() if e.names <= set(env)}
        )
        out.update(self.extra_defines)
        return out


def _tuning(
    sizes: Sequence[int],
    *,
    params: Mapping[str, Sequence[int] | str] | None,
    global_size: Sequence[str] | None,
    local_size: Sequence[str] | None,
    defines: Mapping[str, str] | None,
    constraints: Sequence[str] | None,
    default: Mapping[str, int] | None,
) -> _Tuning:
    """Launch dimensions, tuned and tied parameters, fixed macros, constraints and the
    default configuration, each checked against the others."""
    size_names = list(_SIZE_NAMES[: len(sizes)])
    problem = dict(zip(size_names, (int(s) for s in sizes), strict=True))
    glob = [g.strip() for g in global_size] if global_size else list(size_names)
    if not 1 <= len(glob) <= len(sizes):
        raise InputError(
            f"{len(glob)} dimensions given but the problem has {len(sizes)}; "
            "the launch may have fewer dimensions than the data, not more",
            source="global_size",
        )
    all_wg = list(_WG_NAMES[: len(glob)])
    tunable, ties, wg_values = _split_params(params or {}, problem, all_wg)
    local = _local_sizes(local_size, glob, all_wg, ties)
    mentioned: set[str] = set()
    for text, option in [
        *((t, f"params[{n}]") for n, t in ties.items()),
        *((e, "local_size") for e in local),
        *((g, "global_size") for g in glob),
        *((c, "constraints") for c in constraints or ()),
    ]:
        mentioned |= Expr(text, option).names
    # a work-group name is tuned where the local size is itself, or another uses it
    wg_names = [
        n for k, n in enumerate(all_wg) if local[k] == n or (n in mentioned and n not in ties)
    ]
    wg_ties = {n: local[k] for k, n in enumerate(all_wg) if n not in wg_names}
    ties = {**wg_ties, **{n: t for n, t in ties.items() if n not in all_wg}}
    known = set(problem) | set(wg_names) | set(tunable)
    for k, text in enumerate(local):
        _expr(text, "local_size" if local_size is not None else f"params[{all_wg[k]}]", known)
    tie_exprs = _tie_expressions(ties, wg_ties, known)
    for g in glob:
        _expr(g, "global_size", known | set(wg_ties))
    glob = [
        substitute(Expr(g, "global_size"), {w: tie_exprs[w] for w in wg_ties}).text for g in glob
    ]
    local = [
        substitute(Expr(t, "local_size"), {w: tie_exprs[w] for w in wg_ties}).text for t in local
    ]
    extra_defines = {n: _define_value(n, v) for n, v in (defines or {}).items()}
    extra_constraints: list[str] = []
    for c in constraints or ():
        checked = _expr(c, "constraints", known | set(ties) | set(LIMIT_NAMES))
        extra_constraints.append(substitute(checked, tie_exprs).text)
    # the default configuration (also the reference)
    chosen = dict(default or {})
    unknown = sorted(set(chosen) - set(wg_names) - set(tunable))
    if unknown:
        raise InputError(
            f"unknown parameter {unknown[0]!r}; tuned here: {', '.join(wg_names + list(tunable))}",
            source="default",
        )
    return _Tuning(
        problem=problem,
        size_names=size_names,
        glob=glob,
        local=local,
        all_wg=all_wg,
        wg_names=wg_names,
        wg_values=wg_values,
        tunable=tunable,
        ties=ties,
        wg_ties=wg_ties,
        tie_exprs=tie_exprs,
        extra_defines=extra_defines,
        extra_constraints=extra_constraints,
        default=chosen,
    )


def _split_params(
    params: Mapping[str, Sequence[int] | str], problem: Mapping[str, int], all_wg: list[str]
) -> tuple[dict[str, list[int]], dict[str, str], dict[str, list[int]]]:
    """``params`` as tuned macros, tied macros (an expression) and work-group values."""
    tunable: dict[str, list[int]] = {}
    ties: dict[str, str] = {}
    wg_values: dict[str, list[int]] = {}
    for name, values in params.items():
        if name in problem or name in _WG_NAMES[len(all_wg) :]:
            raise InputError(f"{name} clashes with a built-in name", source=f"params[{name}]")
        if name in all_wg and not isinstance(values, str):
            if not values or min(values) < 1:
                raise InputError("give positive work-group sizes", source=f"params[{name}]")
            wg_values[name] = sorted({int(v) for v in values})
        elif isinstance(values, str):
            ties[name] = values
        else:
            if not values:
                raise InputError("give at least one value", source=f"params[{name}]")
            tunable[name] = [int(v) for v in values]
    return tunable, ties, wg_values


def _local_sizes(
    local_size: Sequence[str] | None, glob: list[str], all_wg: list[str], ties: Mapping[str, str]
) -> list[str]:
    """The local size per launch dimension: WX, WY, WZ unless tied or given."""
    local = list(all_wg)
    if local_size is not None:
        if len(local_size) != len(glob):
            raise InputError(
                f"{len(local_size)} local sizes for a {len(glob)}-dimensional launch",
                source="local_size",
            )
        local = [str(e).strip() for e in local_size]
    for k, n in enumerate(all_wg):
        if n in ties:
            if local_size is not None:
                raise InputError(
                    f"{n} is tied here and also set by the local size; give it once",
                    source=f"params[{n}]",
                )
            local[k] = ties[n]
    return local


def _tie_expressions(
    ties: Mapping[str, str], wg_ties: Mapping[str, str], known: set[str]
) -> dict[str, Expr]:
    """Each tied macro's expression, tied work-group names replaced by theirs; refused
    where one still uses another tied macro."""
    tie_exprs = {n: _expr(t, f"params[{n}]", known | set(ties) - {n}) for n, t in ties.items()}
    tie_exprs = {
        n: substitute(e, {w: tie_exprs[w] for w in wg_ties if w != n}) for n, e in tie_exprs.items()
    }
    for n, e in tie_exprs.items():
        if e.names & set(ties):
            raise InputError(
                f"{n}={e.text}: a tied macro may use sizes and tuned parameters, not another "
                "tied macro",
                source=f"params[{n}]",
            )
    return tie_exprs


def _include_folders(p: Path, include_dirs: Sequence[str | Path]) -> list[Path]:
    """The kernel's own folder, then the extra folders searched for ``#include``."""
    include = [p.resolve().parent]
    for d in include_dirs:
        if not Path(d).is_dir():
            raise InputError(f"include directory {str(d)!r} not found", source="include_dirs")
        include.append(Path(d).resolve())
    return include


def _find_kernel(
    source: str, t: _Tuning, include: list[Path], kernel_name: str | None, where: str
) -> tuple[str, KernelDecl, dict[str, KernelDecl]]:
    """The kernel function as the user's macros leave it (and as written, for its
    attributes before macros)."""
    raw_decls = find_kernels(strip_comments(source))
    text = preprocess(source, t.given_defines(), include_dirs=include, where=where)
    decls = find_kernels(text)
    if not decls:
        raise InputError("no __kernel function found", source=where)
    if kernel_name is None:
        if len(decls) > 1:
            raise InputError(
                f"{where}: several kernels ({', '.join(decls)}); choose one",
                source="kernel_name",
            )
        kernel_name = next(iter(decls))
    if kernel_name not in decls:
        raise InputError(f"no kernel {kernel_name!r}; found {', '.join(decls)}", source=where)
    return kernel_name, decls[kernel_name], raw_decls


def _fixed_work_group(
    decl: KernelDecl, raw_decl: KernelDecl | None, t: _Tuning, notes: list[str]
) -> dict[str, int]:
    """The work-group a kernel's ``reqd_work_group_size`` fixes (none where it follows
    the tuned parameters); its values also give the default work-group."""
    fixed_wg: dict[str, int] = {}
    attr = _attribute_sizes(decl.attributes)
    raw_attr = _attribute_sizes(raw_decl.attributes) if raw_decl is not None else None
    if attr is None:
        return fixed_wg
    req: list[int] = []
    for a in attr:
        try:
            req.append(Expr(a.rstrip("uU"), "reqd_work_group_size").evaluate_int({}))
        except ExpressionError:
            return fixed_wg
    if len(req) != 3:
        return fixed_wg
    raw_names: set[str] = set()
    for a in raw_attr or []:
        raw_names |= set(re.findall(r"[A-Za-z_]\w*", a))
    tied = bool(raw_names & (set(t.wg_names) | set(t.tie_exprs) | set(t.tunable)))
    shown = ", ".join(str(v) for v in req)
    for n, v in zip(t.all_wg, req, strict=False):
        if n not in t.wg_names:
            continue
        if n in t.default and t.default[n] != v and not tied:
            raise InputError(
                f"{n}={t.default[n]} but the kernel requires reqd_work_group_size({shown})",
                source="default",
            )
        t.default.setdefault(n, v)
        if not tied:
            fixed_wg[n] = v
    if tied:
        notes.append(
            f"work-group: the kernel's reqd_work_group_size({shown}) follows the tuned "
            f"parameters; its values give the default {_cfg_text(t.default, t.wg_names)}"
        )
    else:
        notes.append(
            f"work-group: fixed at {shown} by the kernel's reqd_work_group_size "
            "(tie its macros to WX/WY/WZ with --param to tune it)"
        )
    return fixed_wg


def _reference_reading(
    source: str, t: _Tuning, include: list[Path], kernel_name: str, where: str, notes: list[str]
) -> tuple[KernelDecl, dict[str, str], dict[str, FunctionDecl], dict[str, _Fields]]:
    """The body as the compiler sees it for the reference configuration: the kernel,
    its typedefs, helper functions and structs (:func:`struct_fields`); the headers it
    includes and the macros it redefines are noted."""
    overridden: list[tuple[str, int]] = []
    headers: list[str] = []
    text = preprocess(
        source,
        t.all_defines(t.first_config()),
        include_dirs=include,
        where=where,
        redefined=overridden,
        headers=headers,
    )
    for header in dict.fromkeys(headers):
        # recorded with a digest, so stored results are not served after a header changes
        try:
            digest = hashlib.sha256(Path(header).read_bytes()).hexdigest()[:12]
        except OSError:
            continue
        notes.append(f"header: {header} (sha256 {digest})")
    read = [source]
    for header in dict.fromkeys(headers):
        with contextlib.suppress(OSError):
            read.append(Path(header).read_text(errors="replace"))
    for name in [*t.tunable, *(n for n in t.ties if n not in t.all_wg)]:
        if not any(re.search(rf"\b{re.escape(name)}\b", text) for text in read):
            cost = ", and tuning it costs budget" if name in t.tunable else ""
            notes.append(
                f"warning: --param {name}: the kernel's source never names {name} (a "
                f"misspelt macro?): it changes nothing{cost}"
            )
    for name, line in overridden:
        given = (
            f"--define {name}"
            if name in t.extra_defines
            else f"--param {name}"
            if name in t.tunable or name in t.ties or name in t.wg_names
            else f"the size {name}"
        )
        notes.append(
            f"warning: the kernel's own #define {name} (line {line}) overrides {given}: the "
            f"value gtune passes has no effect (guard it with #ifndef {name} ... #endif)"
        )
    decls = find_kernels(text)
    if kernel_name not in decls:
        first = t.first_config()
        raise InputError(
            f"kernel {kernel_name!r} disappears with the configuration "
            f"{_cfg_text(first, list(first))} (#if on a parameter?)",
            source=where,
        )
    decl = decls[kernel_name]
    helpers = {n: f for n, f in find_functions(text).items() if n != kernel_name}
    types = typedefs(text)
    return decl, types, helpers, struct_fields(text, types)


def _arguments(
    decl: KernelDecl,
    types: Mapping[str, str],
    helpers: Mapping[str, FunctionDecl],
    t: _Tuning,
    *,
    scalars: Mapping[str, str] | None,
    roles: Mapping[str, str] | None,
    arrays: Mapping[str, Sequence[str]] | None,
    where: str,
    notes: list[str],
    structs: Mapping[str, _Fields] | None = None,
) -> list[dict[str, Any]]:
    """The kernel's arguments: each array's role (from the body, or ``roles``), element
    type and shape (the problem size, or ``arrays``); each scalar's value (``scalars``,
    or the size it is named like)."""
    given_scalars = dict(scalars or {})
    given_roles = dict(roles or {})
    for name, role in given_roles.items():
        if role not in ("input", "output", "inout"):
            raise InputError(f"{role!r}: a role is input, output or inout", source=f"roles[{name}]")
    array_shapes = {k: list(v) for k, v in (arrays or {}).items()}
    data_shape = list(reversed(t.size_names))  # C order: x fastest
    arguments: list[dict[str, Any]] = []
    for d in decl.params:
        info = parse_param(d, types, where)
        name = info.name
        is_struct = info.ctype in (structs or {}) or info.ctype.startswith("struct ")
        if is_struct and (not info.pointer or info.space == "constant"):
            # a struct of parameters (by value, or one __constant struct); a __global
            # array of structs is data, refused below for its element type
            fields = (structs or {}).get(info.ctype)
            raise InputError(_struct_refusal(info, d, fields), source=where)
        if info.pointer and info.space in ("global", "constant"):
            arguments.append(
                _array_argument(
                    info,
                    parse_param(d, {}, where).ctype,
                    pointer_to_const(d),
                    decl,
                    helpers,
                    t,
                    given_roles,
                    array_shapes,
                    data_shape,
                    where,
                    notes,
                )
            )
            continue
        if info.pointer and info.space == "local":
            arguments.append(_local_argument(info, t, array_shapes, where, notes))
            continue
        if info.pointer:
            raise InputError(_pointer_refusal(name, info.space), source=where)
        arguments.append(_scalar_argument(info, given_scalars, t, where, notes))
    if given_scalars:
        raise InputError(
            f"the kernel has no scalar parameter {next(iter(given_scalars))!r}", source="scalars"
        )
    if given_roles:
        raise InputError(
            f"the kernel has no array parameter {next(iter(given_roles))!r}", source="roles"
        )
    if array_shapes:
        raise InputError(
            f"the kernel has no array parameter {next(iter(array_shapes))!r}", source="arrays"
        )
    if not any(a.get("role") in ("output", "inout") for a in arguments):
        notes.append("no array is written by the kernel: there is nothing to verify")
    return arguments


def _scalar_argument(
    info: Param, given_scalars: dict[str, str], t: _Tuning, where: str, notes: list[str]
) -> dict[str, Any]:
    """One scalar parameter and its value: from ``--scalar`` (taken out of
    ``given_scalars``), else the size it is named like. A vector (``uint2 dims``, as the
    AMD APP SDK's samples pass sizes) takes its lanes from ``--scalar dims=NX,NY``."""
    name = info.name
    m = re.fullmatch(r"([a-z]+?)(2|3|4|8|16)", info.ctype)
    if m and m.group(1) in _CTYPES:
        return _vector_argument(info, m.group(1), int(m.group(2)), given_scalars, t, where, notes)
    dtype = _dtype(info.ctype, f"scalar {name!r}", where)
    if name in given_scalars:
        value = given_scalars.pop(name)
        _expr(value, f"scalars[{name}]", set(t.problem))
        if dtype.startswith("float") and "/" in value:
            notes.append(f"{name}: {value} is evaluated in floating point (a float argument)")
    else:
        matches = [s for s in t.size_names if name.lower() in _SIZE_ALIASES[s]]
        if t.size_names == ["NX"] and name.lower() in _LENGTH_ALIASES:
            matches = ["NX"]  # a 1D problem's length: nothing else it could name
        if len(matches) != 1:
            raise InputError(
                f"no value for the scalar parameter {name!r} ({info.ctype}) of {where}: "
                f"give one, an expression of {', '.join(t.size_names)}",
                source=f"scalars[{name}]",
            )
        value = matches[0]
        notes.append(f"{name}: scalar = {value} (named like that size)")
    return {"name": name, "kind": "scalar", "dtype": dtype, "value": value}


def _vector_argument(
    info: Param,
    base: str,
    lanes: int,
    given_scalars: dict[str, str],
    t: _Tuning,
    where: str,
    notes: list[str],
) -> dict[str, Any]:
    """A scalar of a vector type: ``--scalar dims=NX,NY`` gives its lanes (x first), each
    an expression of the sizes; passed as the OpenCL vector (``uint2``: 8 bytes)."""
    name, dtype = info.name, _CTYPES[base]
    example = ",".join((t.size_names * 16)[:lanes])
    if name not in given_scalars:
        raise InputError(
            f"no value for the scalar parameter {name!r} ({info.ctype}) of {where}: give "
            f"its {lanes} lanes, each an expression of {', '.join(t.size_names)} "
            f"(--scalar {name}={example})",
            source=f"scalars[{name}]",
        )
    values = [v.strip() for v in split_top(given_scalars.pop(name))]
    if len(values) != lanes:
        raise InputError(
            f"{name} is a {info.ctype}: give its {lanes} lanes, x first, separated by commas "
            f"(--scalar {name}={example}); got {len(values)}",
            source=f"scalars[{name}]",
        )
    for v in values:
        _expr(v, f"scalars[{name}]", set(t.problem))
    notes.append(f"{name}: a {info.ctype}: lanes {', '.join(values)} (from --scalar)")
    return {"name": name, "kind": "scalar", "dtype": dtype, "value": values}


def _struct_refusal(info: Param, decl: str, fields: Sequence[tuple[str, str]] | None) -> str:
    """Why a struct parameter (``const grid_t grid``, ``constant grid_t *grid``) is
    refused, with its fields and their types, and the copy of the kernel that lifts:
    one scalar argument per field (``grid.dt`` -> ``grid_dt``)."""
    name, ctype = info.name, info.ctype
    how = "a pointer to a struct" if info.pointer else "a struct passed by value"
    use = f"{name}->" if info.pointer else f"{name}."
    if not fields:
        shown = f"{ctype} (its definition is not in the source plain mode read)"
        params = f"one scalar per field (float {name}_dt, int {name}_ni, ...)"
        example, size_example = f"{name}_dt", f"{name}_ni"
    else:
        groups: list[tuple[str, list[str]]] = []
        for ftype, fname in fields:
            if groups and groups[-1][0] == ftype:
                groups[-1][1].append(fname)
            else:
                groups.append((ftype, [fname]))
        shown = f"{ctype} {{ " + " ".join(f"{ft} {', '.join(fs)};" for ft, fs in groups) + " }"
        params = ", ".join(f"{ft} {name}_{fn}" for ft, fn in fields)
        example = f"{name}_{fields[0][1]}"
        ints = [fn for ft, fn in fields if ft in _CTYPES and "int" in _CTYPES[ft]]
        size_example = f"{name}_{ints[0]}" if ints else f"{name}_n"
    others = [f"{fn} ({ft})" for ft, fn in fields or () if ft not in _CTYPES]
    unfit = (
        f"; the fields {', '.join(others)} have no scalar form (an array field: pass it as "
        "its own __global array)"
        if others
        else ""
    )
    first = (fields or [("", "dt")])[0][1]
    return (
        f"parameter {name!r} is {how}, {shown}; gtune passes no structs (neither lift nor "
        "a description: a kernel's arguments are arrays and scalars): lift a copy of the "
        f"kernel that takes one scalar per field, {params}, in place of {decl.strip()!r}, "
        f"with {example} for {use}{first} in its body (each field alike){unfit}; then give "
        f"each field its value: --scalar {example}=..., a field that is a size an "
        f"expression of the sizes (--scalar {size_example}=NX)"
    )


def _pointer_refusal(name: str, space: str) -> str:
    """Why a pointer argument that is no __global, __constant or __local buffer is
    refused."""
    return (
        f"parameter {name!r} is a {space} pointer; plain mode handles __global and "
        "__constant arrays and __local buffers"
    )


def _local_argument(
    info: Param, t: _Tuning, array_shapes: dict[str, list[str]], where: str, notes: list[str]
) -> dict[str, Any]:
    """A ``__local`` pointer parameter: a buffer the host sizes per launch
    (``clSetKernelArg(k, i, bytes, NULL)``), its length in elements from ``--array
    NAME=EXPR``, an expression of the sizes and the launch's parameters (taken out of
    ``array_shapes``; tied macros are replaced by what they are tied to)."""
    name = info.name
    base, lanes = vector_type(info.ctype)
    dtype = _dtype(base, f"__local buffer {name!r}", where)
    if name not in array_shapes:
        tile = "*".join(f"({w}+2)" for w in t.all_wg) if len(t.all_wg) > 1 else "WX+2"
        raise InputError(
            f"parameter {name!r} is a __local buffer the host sizes: give its length in "
            f"elements with --array {name}=EXPR (e.g. --array {name}={tile})",
            source=where,
        )
    known = set(t.problem) | set(t.wg_names) | set(t.tunable) | set(t.ties)
    shape = [
        substitute(_expr(e, f"arrays[{name}]", known), t.tie_exprs).text
        for e in _shape_text(array_shapes.pop(name))
    ]
    counted = f"{base}s, {lanes} per {info.ctype}" if lanes > 1 else f"{dtype} elements"
    notes.append(
        f"{name}: a __local buffer the host sizes per launch: {' * '.join(shape)} "
        f"{counted} (from --array), no data"
    )
    return {"name": name, "kind": "local", "dtype": dtype, "shape": shape}


def _array_argument(
    info: Param,
    raw_type: str,
    const: bool,
    decl: KernelDecl,
    helpers: Mapping[str, FunctionDecl],
    t: _Tuning,
    given_roles: dict[str, str],
    array_shapes: dict[str, list[str]],
    data_shape: list[str],
    where: str,
    notes: list[str],
) -> dict[str, Any]:
    """One __global or __constant array: its role, element type and shape (the given
    role and shape are taken out of ``given_roles`` and ``array_shapes``). ``const``: a
    pointer to const data (``__global const float *``), which can only be read."""
    name = info.name
    base, lanes = vector_type(info.ctype)
    dtype = _dtype(base, f"array {name!r}", where)
    if raw_type != info.ctype:
        notes.append(f"{name}: element type {raw_type} is {info.ctype} ({dtype})")
    view, given_shape = array_view(array_shapes.pop(name, []), f"arrays[{name}]")
    pointer = info.ctype if view and view != dtype else ""
    if pointer:  # a buffer of other elements addressed through this pointer (bytes)
        notes.append(_view_note(name, info.ctype, view))
        dtype = view
    elif lanes > 1:
        notes.append(
            f"{name}: a {info.ctype} pointer: the array is given in {base}s, {lanes} per "
            f"{info.ctype} (its shape counts {base}s; the kernel's index runs to a {lanes}th "
            "of it along x)"
        )
    use = array_uses(decl.body, name, helpers)
    if info.space == "constant":
        role = "input"
        why = "a __constant array"
    elif const and use.written:  # nothing is written through it, whatever the text says
        role, why = "input", "a pointer to const data: only read"
    elif use.written and use.read:
        role, why = "inout", "read and written (" + "; ".join(use.evidence) + ")"
    elif use.written:
        role, why = "output", "written (" + "; ".join(use.evidence) + ")"
    elif use.read:
        role, why = "input", "only read"
    else:
        role, why = "input", "never used in the kernel body"
    if name in given_roles:
        chosen = given_roles.pop(name)
        if info.space == "constant" and chosen != "input":
            raise InputError(
                f"{name} is a __constant array: it can only be an input",
                source=f"roles[{name}]",
            )
        if chosen != role:
            why = f"from --role (inferred {role}: {why})"
        role = chosen
    if given_shape:
        shape = _shape_text(given_shape)
        for s in shape:
            _expr(s, f"arrays[{name}]", set(t.problem))
        shape_note = f"shape [{', '.join(shape)}] from --array"
    elif info.space == "constant" and use.constant_indices:
        shape = [str((max(use.constant_indices) + 1) * lanes)]
        shape_note = f"{shape[0]} elements (the largest constant index it reads, +1)"
    elif info.space == "constant":
        raise InputError(
            f"__constant array {name!r} of {where}: cannot tell its length; give its shape",
            source=f"arrays[{name}]",
        )
    else:
        shape = data_shape
        shape_note = f"shape [{', '.join(shape)}] (the problem size; --array {name}=... to change)"
    verified = " (compared with the reference)" if role != "input" else ""
    notes.append(f"{name}: {role}{verified}: {why}; random {dtype} data; {shape_note}")
    out = {"name": name, "dtype": dtype, "role": role, "shape": shape, "init": "random"}
    return {**out, "pointer": pointer} if pointer else out


def _parameters(
    t: _Tuning,
    fixed_wg: Mapping[str, int],
    max_wg: int,
    notes: list[str],
    reference_given: bool = False,
) -> dict[str, Any]:
    """The description's ``parameters``: work-group sizes (powers of two up to the size
    and ``max_wg``, the given values, or fixed), the tuned macros, and the default."""
    parameters: dict[str, Any] = {}
    problem, default = t.problem, t.default
    for n, s in zip(t.all_wg, t.size_names, strict=False):
        if n not in t.wg_names:
            continue
        if n in fixed_wg:
            parameters[n] = {"values": [fixed_wg[n]], "default": fixed_wg[n]}
            continue
        spec: dict[str, Any] = {"pow2": [1, f"min({s}, {max_wg})"]}
        want = default.get(n)
        if n in t.wg_values:
            spec = {"values": sorted({*t.wg_values[n], *([want] if want is not None else [])})}
        elif want is not None and (want & (want - 1) or want > min(problem[s], max_wg)):
            v, pow2 = 1, []
            while v <= min(problem[s], max_wg):
                pow2.append(v)
                v *= 2
            spec = {"values": sorted({*pow2, want})}
        parameters[n] = spec
    for n, values in t.tunable.items():
        parameters[n] = {"values": list(values)}
    first = t.first_config()
    if default:
        for n, v in first.items():
            parameters[n]["default"] = v
        missing = [n for n in first if n not in default]
        if missing:
            notes.append(
                "default: " + _cfg_text(first, list(first)) + f" ({', '.join(missing)} at "
                "their first value)"
            )
    elif any(len(spec.get("values", [0, 0])) > 1 for spec in parameters.values()):
        wg = [n for n in t.wg_names if n in first]
        one_wide = ": a 1-wide work-group" if wg and all(first[n] == 1 for n in wg) else ""
        also = "" if reference_given else ", which is also the reference"
        notes.append(
            "warning: no --default: speedups are reported over "
            f"{_cfg_text(first, list(first))} (every parameter at its first value"
            f"{one_wide}){also}; give the kernel's shipped launch with --default"
        )
    return parameters


def _launch_notes(t: _Tuning, notes: list[str]) -> None:
    """Warn where the default configuration cannot launch; name the tied macros."""
    env0: dict[str, int | float | bool] = {**t.problem, **t.first_config()}
    for k, (g, loc) in enumerate(zip(t.glob, t.local, strict=True)):
        g_val, l_val = (
            Expr(g, "global_size").evaluate_int(env0),
            Expr(loc, "local_size").evaluate_int(env0),
        )
        if g_val < l_val:
            notes.append(
                f"warning: the global size {g} = {g_val} in dimension {'xyz'[k]} is smaller than "
                f"the default work-group's {loc} = {l_val}: that configuration cannot launch "
                "(a larger --size, or a smaller --default)"
            )
    if t.ties:
        notes.append(
            "tied macros: " + ", ".join(f"{n} = {e}" for n, e in t.ties.items()) + " in every "
            "configuration"
        )


def _reference(
    raw: dict[str, Any], reference: str | None, t: _Tuning, notes: list[str]
) -> list[str]:
    """The description's ``reference``: a numpy function (``file.py:function``, trusted
    to run since it was named), else the default configuration's output. Returns what
    the description must trust."""
    trusted: list[str] = []
    if reference:
        file, sep, func = reference.rpartition(":")
        if not sep or not file or not func.isidentifier():
            raise InputError(f"expected file.py:function, got {reference!r}", source="reference")
        if file.endswith(".py"):
            ref_path = Path(file).resolve()
            if not ref_path.exists():
                raise InputError(f"reference file {file!r} not found", source="reference")
            file = str(ref_path)
            trusted.append(file)  # named on the command line: trusted to run
        raw["reference"] = {"python": f"{file}:{func}"}
        notes.append(f"reference: {reference} (numpy)")
    else:
        cfg = t.first_config()
        raw["reference"] = {"config": cfg}
        which = "default" if t.default else "first"
        notes.append(
            f"reference: the output of the {which} configuration "
            f"{_cfg_text(cfg, list(cfg))} is taken as correct"
            if cfg
            else "reference: none (its one configuration's output is all there is: give "
            "--reference file.py:function to verify it)"
        )
    return trusted


_MACRO_NAME = re.compile(r"[A-Za-z_]\w*(\(\s*(?:[A-Za-z_]\w*(?:\s*,\s*[A-Za-z_]\w*)*)?\s*\))?")
_WORD = re.compile(r"[\w.]")
_MERGING = set("+-&|<>=!*/%^#:")


def _define_value(name: str, value: str) -> str:
    """The value of a fixed macro (``defines``) as one compiler option can carry it.

    Compilers split build options on spaces, so spaces that separate nothing (around
    brackets, commas, most operators) are dropped; a space that keeps two words or two
    operator characters apart (``unsigned int``, ``x - -y``) cannot be dropped, and is
    refused with advice."""
    if not _MACRO_NAME.fullmatch(name):
        raise InputError(
            f"bad macro name {name!r}; expected NAME or NAME(a, b)", source=f"defines[{name}]"
        )
    out: list[str] = []
    text = value.strip()
    i = 0
    while i < len(text):
        ch = text[i]
        if ch.isspace():
            j = i
            while j < len(text) and text[j].isspace():
                j += 1
            before, after = (out[-1] if out else ""), text[j] if j < len(text) else ""
            words = _WORD.match(before) and _WORD.match(after)
            ops = before in _MERGING and after in _MERGING
            if words or ops:
                left = re.search(r"\S+$", text[:i])
                right = re.match(r"\S+", text[j:])
                shown = f"{left[0] if left else ''} {right[0] if right else ''}"
                raise InputError(
                    f"{name}={value!r}: a compiler option cannot hold the space in "
                    f"{shown!r}; rewrite the value without it (brackets where operators "
                    "meet: x-(-1)), or use a typedef or #define in the kernel",
                    source=f"defines[{name}]",
                )
            i = j
            continue
        if ch in "\"'":
            raise InputError(
                "quotes cannot be passed as a compiler option", source=f"defines[{name}]"
            )
        out.append(ch)
        i += 1
    return "".join(out)


def _cfg_text(cfg: Mapping[str, int], names: Sequence[str]) -> str:
    return ", ".join(f"{n}={cfg[n]}" for n in names if n in cfg)


def description_yaml(kernel: TunableKernel, directory: str | Path | None = None) -> str:
    """The kernel's description as YAML to edit; paths relative to ``directory``
    (where the file will be saved: beside the kernel unless told)."""
    import yaml

    raw = dict(kernel.raw)
    base = Path(directory) if directory is not None else Path(kernel.source_path).parent
    if kernel.source_path:
        raw["source"] = os.path.relpath(kernel.source_path, base)
    ref = raw.get("reference")
    if isinstance(ref, dict) and "python" in ref:
        file, _, func = str(ref["python"]).rpartition(":")
        if file.endswith(".py"):
            raw["reference"] = {**ref, "python": f"{os.path.relpath(file, base)}:{func}"}
    order = [
        "kernel",
        "source",
        "problem",
        "arguments",
        "parameters",
        "defines",
        "constraints",
        "launch",
        "reference",
        "build_options",
        "inferred",
    ]
    ordered = {k: raw[k] for k in order if k in raw}
    ordered.update({k: v for k, v in raw.items() if k not in ordered})

    class Dumper(yaml.SafeDumper):
        def ignore_aliases(self, data: Any) -> bool:
            return True

    notes = ordered.pop("inferred", None)
    header = (
        f"# Description of {kernel.name}, inferred by gtune from {Path(kernel.source_path).name}.\n"
        "# Edit it, save it beside the kernel (kernel.yaml) and gtune uses it instead of\n"
        "# guessing; `inferred` lists what was guessed (docs/description.md).\n"
    )
    text = yaml.dump(ordered, Dumper=Dumper, sort_keys=False, default_flow_style=None, width=100)
    if notes:
        text += yaml.dump({"inferred": notes}, Dumper=Dumper, default_flow_style=False, width=100)
    return header + text

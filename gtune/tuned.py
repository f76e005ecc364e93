"""What an application takes from a tuning run: the tuned kernel.

:func:`tuned_kernel` turns a kernel and its best configuration into a
:class:`TunedKernel`: the kernel's source with every tuned parameter fixed by a
``#define`` at its top, the macros still given at build time (the problem size, and
derived macros that depend on it) and the global and local launch sizes, all as
formulas of the problem size (``NX``, ``NY``, ``NZ`` stay symbolic; the tuned values are
substituted and folded), the argument list in the kernel's own order, and the problem
sizes the configuration is valid for. It is written as JSON (:meth:`TunedKernel.to_json`,
read back with :meth:`TunedKernel.load`) and as a C header (:meth:`TunedKernel.header`).

Formulas are integer expressions in gtune's expression language, which for what they
use (``+ - * / %``, parentheses, ``min``/``max``) reads as C does: ``/`` between integers
truncates. :meth:`TunedKernel.build_options` and :meth:`TunedKernel.launch_sizes`
evaluate them for a problem size; the header spells them as C macros.
"""

from __future__ import annotations

import ast
import copy
import json
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from gtune.device import name_slug
from gtune.escape import c_comment, c_string, printf_text
from gtune.exceptions import ExpressionError, GtuneError, InputError
from gtune.expr import Expr, parse, parse_ast
from gtune.kernel import TunableKernel
from gtune.outfiles import check_targets, write_text
from gtune.specialise import cpp_difference, specialise_source

FORMAT_VERSION = 1
_ITEMSIZE = {"float64": 8, "int64": 8, "uint64": 8, "int16": 2, "uint16": 2, "int8": 1, "uint8": 1}


@dataclass(frozen=True)
class TunedKernel:
    """A kernel with its tuned configuration fixed, ready to build and launch."""

    kernel: str  # the OpenCL function name
    name: str  # the kernel's name in the store (file and function)
    source: str
    configuration: dict[str, int]
    size_names: tuple[str, ...]
    defines: dict[str, str]  # macros passed at build time: name -> formula
    build_options: tuple[str, ...]  # fixed compiler options
    global_size: tuple[str, ...]
    local_size: tuple[str, ...] | None
    arguments: tuple[dict[str, Any], ...]
    valid_when: tuple[str, ...]  # conditions on the problem size (and device limits)
    tuned_size: dict[str, int]
    device: str = ""
    device_identity: str = ""
    time_s: float | None = None
    confirmed: bool = False
    default_configuration: dict[str, int] | None = None
    default_time_s: float | None = None
    notes: tuple[str, ...] = field(default=())

    # -- what an application evaluates ------------------------------------------------
    def _sizes(self, sizes: Mapping[str, int] | None) -> dict[str, int]:
        given = dict(self.tuned_size if sizes is None else sizes)
        missing = [n for n in self.size_names if n not in given]
        if missing:
            raise InputError(f"problem size {', '.join(missing)} not given", source=self.name)
        return {n: int(given[n]) for n in self.size_names}

    def compile_options(self, sizes: Mapping[str, int] | None = None) -> list[str]:
        """Compiler options for ``sizes`` (default: the size it was tuned at)."""
        env = self._sizes(sizes)
        opts = [f"-D{k}={parse(v).evaluate_int(env)}" for k, v in self.defines.items()]
        return opts + list(self.build_options)

    def launch_sizes(
        self, sizes: Mapping[str, int] | None = None
    ) -> tuple[tuple[int, ...], tuple[int, ...] | None]:
        """Global and local size for ``sizes`` (default: the size it was tuned at)."""
        env = self._sizes(sizes)
        glob = tuple(parse(e).evaluate_int(env) for e in self.global_size)
        loc = (
            None
            if self.local_size is None
            else tuple(parse(e).evaluate_int(env) for e in self.local_size)
        )
        return glob, loc

    def evaluate(self, formula: str, sizes: Mapping[str, int] | None = None) -> int | float:
        """One of this kernel's formulas (a shape, a scalar's value) for ``sizes``."""
        value = parse(formula).evaluate(self._sizes(sizes))
        return value if isinstance(value, float) else int(value)

    def local_bytes(
        self, argument: Mapping[str, Any], sizes: Mapping[str, int] | None = None
    ) -> int:
        """The bytes a ``local`` argument (one of :attr:`arguments`) takes for ``sizes``:
        what the host passes it, ``clSetKernelArg(kernel, i, bytes, NULL)``."""
        elements = 1
        for e in argument["shape"]:
            elements *= int(self.evaluate(str(e), sizes))
        return elements * _ITEMSIZE.get(str(argument["dtype"]), 4)

    def violations(self, sizes: Mapping[str, int] | None = None) -> list[str]:
        """The conditions of :attr:`valid_when` that ``sizes`` breaks (those naming only
        the problem size; device limits are not known here)."""
        env = self._sizes(sizes)
        out = []
        for cond in self.valid_when:
            expr = parse(cond)
            if expr.names <= set(env) and not expr.evaluate(env):
                out.append(cond)
        return out

    # -- files --------------------------------------------------------------------------
    def to_dict(self) -> dict[str, Any]:
        data = asdict(self)
        data["format"] = "gtune-tuned-kernel"
        data["format_version"] = FORMAT_VERSION
        data["size_names"] = list(self.size_names)
        data["global_size"] = list(self.global_size)
        data["local_size"] = None if self.local_size is None else list(self.local_size)
        data["build_options"] = list(self.build_options)
        data["arguments"] = [dict(a) for a in self.arguments]
        data["valid_when"] = list(self.valid_when)
        data["notes"] = list(self.notes)
        return data

    def to_json(self) -> str:
        return json.dumps(self.to_dict(), indent=1) + "\n"

    @classmethod
    def from_dict(cls, data: Mapping[str, Any], source: str = "") -> TunedKernel:
        if data.get("format") != "gtune-tuned-kernel":
            raise InputError("not a tuned kernel written by `gtune export`", source=source)
        if int(data.get("format_version", 0)) > FORMAT_VERSION:
            raise InputError("written by a newer gtune", source=source)
        try:
            local = data["local_size"]
            return cls(
                kernel=str(data["kernel"]),
                name=str(data["name"]),
                source=str(data["source"]),
                configuration={str(k): int(v) for k, v in data["configuration"].items()},
                size_names=tuple(str(n) for n in data["size_names"]),
                defines={str(k): str(v) for k, v in data["defines"].items()},
                build_options=tuple(str(o) for o in data["build_options"]),
                global_size=tuple(str(e) for e in data["global_size"]),
                local_size=None if local is None else tuple(str(e) for e in local),
                arguments=tuple(dict(a) for a in data["arguments"]),
                valid_when=tuple(str(c) for c in data["valid_when"]),
                tuned_size={str(k): int(v) for k, v in data["tuned_size"].items()},
                device=str(data.get("device") or ""),
                device_identity=str(data.get("device_identity") or ""),
                time_s=data.get("time_s"),
                confirmed=bool(data.get("confirmed")),
                default_configuration=data.get("default_configuration"),
                default_time_s=data.get("default_time_s"),
                notes=tuple(str(n) for n in data.get("notes") or ()),
            )
        except (KeyError, TypeError, ValueError, AttributeError) as exc:
            raise InputError(f"malformed tuned kernel: {exc!r}", source=source) from None

    @classmethod
    def load(cls, path: str | Path) -> TunedKernel:
        """A tuned kernel from the JSON file ``gtune export`` wrote."""
        p = Path(path)
        data = read_json_object(p, "a tuned kernel", "not a tuned kernel written by `gtune export`")
        return cls.from_dict(data, str(p))

    def header(self) -> str:
        """A C header: the source as a string, its kernel name, the tuned values, and
        the build options and launch sizes as macros of the problem size."""
        prefix = _c_name(self.name).upper()
        params = ", ".join(self.size_names)
        lines = [
            f"/* {c_comment(self.name)}: tuned by gtune for "
            f"{c_comment(self.device or 'its device')}. */",
            "/* Generated by `gtune export`; the same data as the .json beside it. */",
            f"#ifndef {prefix}_TUNED_H",
            f"#define {prefix}_TUNED_H",
            "",
            f"#define {prefix}_KERNEL_NAME {c_string(self.kernel)}",
        ]
        for k, v in self.configuration.items():
            lines.append(f"#define {prefix}_{_c_name(k).upper()} {v}")
        lines.append("")
        lines.append(f"/* Build options: printf format and arguments, in this order ({params}). */")
        fmt = " ".join(f"-D{k}=%ld" for k in self.defines)
        fmt = " ".join([fmt, *(printf_text(o) for o in self.build_options)]).strip()
        lines.append(f"#define {prefix}_BUILD_OPTIONS_FORMAT {c_string(fmt)}")
        args = ", ".join(f"(long)({_c_expr(v)})" for v in self.defines.values())
        lines.append(f"#define {prefix}_BUILD_OPTIONS_ARGS({params}) {args}")
        lines.append("")
        lines.append(f"#define {prefix}_WORK_DIM {len(self.global_size)}")
        for i, e in enumerate(self.global_size):
            lines.append(f"#define {prefix}_GLOBAL_{i}({params}) ((size_t)({_c_expr(e)}))")
        for i, e in enumerate(self.local_size or ()):
            lines.append(f"#define {prefix}_LOCAL_{i}({params}) ((size_t)({_c_expr(e)}))")
        for i, a in enumerate(self.arguments):
            if a.get("kind") == "local":  # clSetKernelArg(kernel, i, bytes, NULL)
                count = " * ".join(_c_expr(str(e)) for e in a["shape"])
                size = _ITEMSIZE.get(str(a["dtype"]), 4)
                lines.append(
                    f"#define {prefix}_ARG_{i}_LOCAL_BYTES({params}) ((size_t)({count}) * {size})"
                )
        if self.valid_when:
            lines.append("")
            lines.append(
                "/* Valid for problem sizes where (device limits as OpenCL reports them): */"
            )
            for c in self.valid_when:
                lines.append(f"/*   {c_comment(c)} */")
        lines.append("")
        lines.append("/* Arguments, in order: */")
        for a in self.arguments:
            text = ", ".join(
                f"{k}={v}" for k, v in a.items() if k != "name" and v not in (None, "")
            )
            lines.append(f"/*   {c_comment(str(a['name']))}: {c_comment(text)} */")
        lines.append("")
        lines.append(f"static const char {prefix.lower()}_source[] =")
        for line in self.source.splitlines():
            lines.append(f"    {c_string(line + chr(10))}")
        lines.append("    ;")
        lines.append("")
        lines.append(f"#endif /* {prefix}_TUNED_H */")
        return "\n".join(lines) + "\n"


# -- building one ------------------------------------------------------------------------


def tuned_kernel(
    kernel: TunableKernel,
    config: Mapping[str, int],
    *,
    device: str = "",
    device_identity: str = "",
    time_s: float | None = None,
    confirmed: bool = False,
    default_config: Mapping[str, int] | None = None,
    default_time_s: float | None = None,
    full_template: bool = False,
) -> TunedKernel:
    """``kernel`` with ``config`` fixed. Its name and arguments are the description's:
    a kernel rendered with the user's name and argument list keeps them. The source is
    specialised to the configuration (:mod:`gtune.specialise`: only the code it runs,
    checked against the whole source by the C preprocessor); with ``full_template``, or
    where that check fails, the whole source with the configuration's ``#define``s."""
    values = _checked_values(kernel, config)
    baked, defines = _fixed_macros(kernel, values)
    global_size = tuple(specialise(e, baked) for e in kernel.launch.global_size)
    local_size = (
        None
        if kernel.launch.local_size is None
        else tuple(specialise(e, baked) for e in kernel.launch.local_size)
    )
    launch = f"global [{', '.join(global_size)}], local [{', '.join(local_size or ('any',))}]"
    source, notes = _source(kernel, baked, defines, device, launch, full_template)
    return TunedKernel(
        kernel=kernel.name,
        name=kernel.store_name,
        source=source,
        notes=notes,
        configuration=values,
        size_names=tuple(kernel.sizes),
        defines=defines,
        build_options=tuple(kernel.build_options),
        global_size=global_size,
        local_size=local_size,
        arguments=_arguments(kernel, values, baked),
        valid_when=_valid_when(kernel, baked, global_size, local_size),
        tuned_size=dict(kernel.sizes),
        device=device,
        device_identity=device_identity,
        time_s=time_s,
        confirmed=confirmed,
        default_configuration=None if default_config is None else dict(default_config),
        default_time_s=default_time_s,
    )


def _checked_values(kernel: TunableKernel, config: Mapping[str, int]) -> dict[str, int]:
    """``config`` as integers, every parameter of the kernel given and no other."""
    unknown = sorted(set(config) - set(kernel.parameter_names))
    missing = [p for p in kernel.parameter_names if p not in config]
    if unknown or missing:
        raise InputError(
            "the configuration does not match the kernel's parameters"
            + (f" (unknown {', '.join(unknown)})" if unknown else "")
            + (f" (missing {', '.join(missing)})" if missing else ""),
            source=kernel.label,
        )
    return {k: int(config[k]) for k in kernel.parameter_names}


def _fixed_macros(
    kernel: TunableKernel, values: Mapping[str, int]
) -> tuple[dict[str, int], dict[str, str]]:
    """The macros fixed in the source (the configuration and derived macros that fold
    to a number) and those still passed at build time (sizes, derived formulas)."""
    baked: dict[str, int] = dict(values)
    defines: dict[str, str] = {n: n for n in kernel.sizes}
    for name, expr in kernel.derived:
        text = specialise(expr, baked)
        folded = _constant(text)
        if folded is None:
            defines[name] = text
        else:
            baked[name] = folded
    return baked, defines


def _valid_when(
    kernel: TunableKernel,
    baked: Mapping[str, int],
    global_size: tuple[str, ...],
    local_size: tuple[str, ...] | None,
) -> tuple[str, ...]:
    """The kernel's constraints left open by the configuration (on the problem size and
    device limits), and whole work-groups; a broken constraint is an error."""
    valid: list[str] = []
    for c in kernel.constraints:
        text = specialise(c, baked)
        if _constant(text) is None:
            valid.append(text)
        elif not _constant(text):
            raise InputError(
                f"the configuration breaks the kernel's constraint {c}", source=kernel.label
            )
    for g, loc in zip(global_size, local_size or (), strict=False):
        # OpenCL 1.2 launches whole work-groups only
        whole = specialise(parse(f"({g}) % ({loc}) == 0"), {})
        if _constant(whole) is None and whole not in valid:
            valid.append(whole)
    return tuple(valid)


def _arguments(
    kernel: TunableKernel, values: Mapping[str, int], baked: Mapping[str, int]
) -> tuple[dict[str, Any], ...]:
    """The arguments in order, shapes and values as formulas of the problem size."""
    arguments = []
    for a in kernel.arguments:
        kind = "image" if a.kind == "buffer" and kernel.uses_image(a, values) else a.kind
        entry: dict[str, Any] = {"name": a.name, "kind": kind, "dtype": a.dtype}
        if a.kind == "buffer":
            entry["role"] = a.role
            entry["shape"] = [specialise(e, baked) for e in a.shape]
            entry["init"] = a.init
        elif a.kind == "local":  # a __local buffer: its elements at this configuration
            entry["shape"] = [specialise(e, baked) for e in a.shape]
        elif a.value is not None:
            entry["value"] = specialise(a.value, baked)
        elif a.lanes:  # a vector scalar (uint2 dims): its lanes' values
            entry["value"] = [specialise(e, baked) for e in a.lanes]
        arguments.append(entry)
    return tuple(arguments)


def _source(
    kernel: TunableKernel,
    baked: Mapping[str, int],
    defines: Mapping[str, str],
    device: str,
    launch: str,
    full_template: bool,
) -> tuple[str, tuple[str, ...]]:
    """The source with its banner (configuration, build, launch) and the fixed macros,
    specialised unless ``full_template``; and notes on why it is not, where it is not."""
    shown = ", ".join(f"{k}={v}" for k, v in baked.items())
    build = " ".join([*(f"-D{k}=<{v}>" for k, v in defines.items()), *kernel.build_options])
    where = f" on {device}" if device else ""
    lines = [
        f" * {c_comment(kernel.store_name)}, tuned by gtune{c_comment(where)}.",
        f" * Tuned configuration: {shown}.",
        f" * Build with: {c_comment(build) or '(no options)'}",
        f" * Launch: {c_comment(launch)}.",
    ]
    fixed = "".join(f"#define {k} {v}\n" for k, v in baked.items())
    source, notes = fixed + "\n" + kernel.source, tuple[str, ...]()
    if not full_template:
        source, notes = _specialised(source, kernel, defines)
        if not notes:
            lines.append(" * Specialised: only the code this configuration runs (gtune export")
            lines.append(" * --full-template writes the whole source).")
    return "/*\n" + "\n".join(lines) + "\n */\n" + source, notes


def _specialised(
    source: str, kernel: TunableKernel, defines: Mapping[str, str]
) -> tuple[str, tuple[str, ...]]:
    """``source`` specialised to the configuration its ``#define``s fix, if the C
    preprocessor makes the same tokens of both at the tuned size; else ``source`` as it
    is, with a note saying why."""
    sizes = dict(kernel.sizes)
    values = {k: parse(v).evaluate_int(sizes) for k, v in defines.items()}
    try:
        short = specialise_source(source, {}, defines, kernel.build_options)
        differs = cpp_difference(source, short, values, kernel.build_options)
    except GtuneError as exc:
        return source, (
            f"the whole source written: its specialised form was not checked ({exc.message})",
        )
    if differs is not None:
        return source, (
            "the whole source written: its specialised form differs after the C "
            f"preprocessor ({differs})",
        )
    return short, ()


# -- formulas ----------------------------------------------------------------------------


def specialise(expr: Expr, values: Mapping[str, int]) -> str:
    """``expr`` with ``values`` substituted and every constant part folded, as text:
    ``NX / (BX*CX)`` with BX=4, CX=1 becomes ``NX / 4``."""
    node = _fold(_substitute(expr.tree, values))
    return ast.unparse(node)


def _constant(text: str) -> int | None:
    try:
        value = ast.literal_eval(parse_ast(text))
    except (ValueError, SyntaxError):
        return None
    if isinstance(value, bool):
        return int(value)
    return value if isinstance(value, int) else None


class _Substitute(ast.NodeTransformer):
    def __init__(self, values: Mapping[str, int]) -> None:
        self.values = values

    def visit_Name(self, node: ast.Name) -> ast.expr:
        if node.id in self.values:
            return ast.Constant(int(self.values[node.id]))
        return node


def _substitute(tree: ast.expr, values: Mapping[str, int]) -> ast.expr:
    out = _Substitute(values).visit(copy.deepcopy(tree))
    if not isinstance(out, ast.expr):  # pragma: no cover - a transformer keeps the kind
        raise TypeError("substitution did not give an expression")
    return out


def _is_const(node: ast.AST) -> bool:
    return isinstance(node, ast.Constant) and isinstance(node.value, int | float | bool)


def _evaluated(node: ast.expr) -> ast.expr:
    """A name-free node as one constant, by gtune's own semantics (C-like ``/``)."""
    try:
        value = parse(ast.unparse(node)).evaluate({})
    except ExpressionError:
        return node
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    return ast.Constant(value)


def _fold(node: ast.expr) -> ast.expr:
    if isinstance(node, ast.BinOp):
        left, right = _fold(node.left), _fold(node.right)
        out = ast.BinOp(left, node.op, right)
        if _is_const(left) and _is_const(right):
            return _evaluated(out)
        one = isinstance(right, ast.Constant) and right.value == 1
        zero = isinstance(right, ast.Constant) and right.value == 0
        if isinstance(node.op, ast.Mult | ast.Div | ast.FloorDiv) and one:
            return left
        if isinstance(node.op, ast.Mod) and one:
            return ast.Constant(0)
        if isinstance(node.op, ast.Mult) and isinstance(left, ast.Constant) and left.value == 1:
            return right
        if isinstance(node.op, ast.Add | ast.Sub) and zero:
            return left
        if isinstance(node.op, ast.Add) and isinstance(left, ast.Constant) and left.value == 0:
            return right
        return out
    if isinstance(node, ast.UnaryOp):
        operand = _fold(node.operand)
        out_u = ast.UnaryOp(node.op, operand)
        return _evaluated(out_u) if _is_const(operand) else out_u
    if isinstance(node, ast.BoolOp):
        values = [_fold(v) for v in node.values]
        is_and = isinstance(node.op, ast.And)
        kept: list[ast.expr] = []
        for v in values:
            if _is_const(v):
                truth = bool(v.value)  # type: ignore[attr-defined]
                if truth != is_and:  # a false term of `and`, a true term of `or`
                    return ast.Constant(not is_and)
                continue
            kept.append(v)
        if not kept:
            return ast.Constant(is_and)
        return kept[0] if len(kept) == 1 else ast.BoolOp(node.op, kept)
    if isinstance(node, ast.Compare):
        left = _fold(node.left)
        comps = [_fold(c) for c in node.comparators]
        out_c = ast.Compare(left, node.ops, comps)
        if _is_const(left) and all(_is_const(c) for c in comps):
            return _evaluated(out_c)
        return out_c
    if isinstance(node, ast.IfExp):
        test = _fold(node.test)
        if _is_const(test):
            return _fold(node.body if test.value else node.orelse)  # type: ignore[attr-defined]
        return ast.IfExp(test, _fold(node.body), _fold(node.orelse))
    if isinstance(node, ast.Call):
        args = [_fold(a) for a in node.args]
        out_f = ast.Call(node.func, args, [])
        return _evaluated(out_f) if all(_is_const(a) for a in args) else out_f
    return node


# -- C -----------------------------------------------------------------------------------

_C_BINARY = {
    ast.Add: "+",
    ast.Sub: "-",
    ast.Mult: "*",
    ast.Div: "/",
    ast.FloorDiv: "/",
    ast.Mod: "%",
}
_C_COMPARE = {ast.Eq: "==", ast.NotEq: "!=", ast.Lt: "<", ast.LtE: "<=", ast.Gt: ">", ast.GtE: ">="}


def _c_expr(text: str) -> str:
    """A formula as a C expression over macro parameters (integer arithmetic)."""
    return _c(parse_ast(text).body)


def _c(node: ast.expr) -> str:
    if isinstance(node, ast.Constant):
        return str(int(node.value)) if isinstance(node.value, bool) else repr(node.value)
    if isinstance(node, ast.Name):
        return f"({node.id})"
    if isinstance(node, ast.BinOp) and type(node.op) in _C_BINARY:
        return f"({_c(node.left)} {_C_BINARY[type(node.op)]} {_c(node.right)})"
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        return f"(-{_c(node.operand)})"
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not):
        return f"(!{_c(node.operand)})"
    if isinstance(node, ast.BoolOp):
        op = " && " if isinstance(node.op, ast.And) else " || "
        return "(" + op.join(_c(v) for v in node.values) + ")"
    if isinstance(node, ast.Compare):
        parts = []
        left = node.left
        for cmp, right in zip(node.ops, node.comparators, strict=True):
            parts.append(f"({_c(left)} {_C_COMPARE[type(cmp)]} {_c(right)})")
            left = right
        return "(" + " && ".join(parts) + ")"
    if isinstance(node, ast.IfExp):
        return f"({_c(node.test)} ? {_c(node.body)} : {_c(node.orelse)})"
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name):
        args = [_c(a) for a in node.args]
        if node.func.id in ("min", "max") and args:
            acc = args[0]
            for a in args[1:]:
                sign = "<" if node.func.id == "min" else ">"
                acc = f"({acc} {sign} {a} ? {acc} : {a})"
            return acc
        if node.func.id == "abs" and len(args) == 1:
            return f"({args[0]} < 0 ? -{args[0]} : {args[0]})"
    raise InputError(f"the formula {ast.unparse(node)} has no C form in the header")


def _c_name(text: str) -> str:
    out = "".join(c if c.isalnum() else "_" for c in text)
    return out if out and not out[0].isdigit() else "k_" + out


def write_tuned(
    tuned: TunedKernel, folder: Path, stem: str | None = None, *, force: bool = False
) -> list[Path]:
    """Write ``STEM.cl``, ``STEM.json`` and ``STEM.h`` into ``folder`` (``STEM``: the
    kernel's file name by default); returns their paths. Files that exist are kept
    (an error) unless ``force``; links are never written through (:mod:`gtune.outfiles`)."""
    base = stem or _c_name(tuned.name.partition(":")[0])
    paths = [folder / f"{base}.cl", folder / f"{base}.json", folder / f"{base}.h"]
    check_targets(paths, force=force)
    texts = [tuned.source, tuned.to_json(), tuned.header()]
    for path, text in zip(paths, texts, strict=True):
        write_text(path, text, force=force)
    return paths


# -- many sizes and devices: the bundle ---------------------------------------------------

BUNDLE_FORMAT = "gtune-tuned-bundle"
BUNDLE_FORMAT_VERSION = 1
SELECT_HOW = ("exact", "nearest", "default")


@dataclass(frozen=True)
class BundleConfiguration:
    """One distinct configuration of a bundle: what building and launching it needs."""

    index: int
    configuration: dict[str, int]
    source_file: str  # beside the bundle's JSON
    defines: dict[str, str]  # macros passed at build time: name -> formula
    global_size: tuple[str, ...]
    local_size: tuple[str, ...] | None
    valid_when: tuple[str, ...]
    size_checks: tuple[str, ...]  # the conditions of valid_when naming only the size
    arguments: tuple[dict[str, Any], ...]
    notes: tuple[str, ...] = ()


@dataclass(frozen=True)
class BundleEntry:
    """One tuned (device, size): its best configuration and its time there."""

    device: str  # the name part of the identity (a slug of the OpenCL device name)
    device_identity: str
    sizes: dict[str, int]
    config_index: int
    median_s: float | None = None
    confirmed: bool = False
    default_median_s: float | None = None


@dataclass(frozen=True)
class BundleChoice:
    """What :meth:`TunedBundle.select` chose for a device and size, and how."""

    how: str  # "exact", "nearest" or "default"
    configuration: BundleConfiguration
    entry: BundleEntry | None  # None for the default
    legal: bool  # the configuration's size checks hold for the size
    sizes: dict[str, int]
    global_size: tuple[int, ...]
    local_size: tuple[int, ...] | None
    build_options: tuple[str, ...]


def device_slug(identity: str) -> str:
    """The name part of a device identity (``nvidia-h200-1a2b3c4d`` -> ``nvidia-h200``)."""
    head, dash, tail = identity.rpartition("-")
    is_hash = len(tail) == 8 and all(c in "0123456789abcdef" for c in tail)
    return head if dash and is_hash else identity


def size_distance(asked: Mapping[str, int], tuned: Mapping[str, int]) -> float:
    """How far apart two sizes are: the sum over the dimensions of max/min (each term 1
    for an equal extent). The C lookup computes the same, in the same order."""
    total = 0.0
    for name, a in asked.items():
        b = int(tuned[name])
        total += max(a, b) / min(a, b)
    return total


@dataclass(frozen=True)
class TunedBundle:
    """Every tuned (device, size) of one kernel (``gtune export --sizes``): read it with
    :func:`read_bundle`, choose with :meth:`select`. docs/export.md gives the format."""

    kernel: str  # the OpenCL function name
    name: str  # the kernel's name in the store
    size_names: tuple[str, ...]
    build_options: tuple[str, ...]
    arguments: tuple[dict[str, Any], ...]
    configurations: tuple[BundleConfiguration, ...]
    entries: tuple[BundleEntry, ...]
    default_index: int | None
    folder: Path | None = None  # where the sources are (read_bundle: the JSON's folder)

    # -- choosing ---------------------------------------------------------------------
    def _env(self, sizes: Mapping[str, int]) -> dict[str, int]:
        missing = [n for n in self.size_names if n not in sizes]
        if missing:
            raise InputError(f"problem size {', '.join(missing)} not given", source=self.name)
        env = {n: int(sizes[n]) for n in self.size_names}
        bad = [f"{k}={v}" for k, v in env.items() if v < 1]
        if bad:
            raise InputError(f"problem size {', '.join(bad)} is not positive", source=self.name)
        return env

    def legal(self, index: int, sizes: Mapping[str, int]) -> bool:
        """Whether configuration ``index`` meets its size checks at ``sizes``."""
        env = self._env(sizes)
        return all(parse(c).evaluate(env) for c in self.configurations[index].size_checks)

    def on_device(self, device: str) -> list[BundleEntry]:
        """The entries tuned on ``device``: its identity, or its OpenCL name (made a slug
        as identities are) equal to the entry's ``device``."""
        slug = name_slug(device)
        return [e for e in self.entries if device == e.device_identity or slug == e.device]

    def select(self, device: str, sizes: Mapping[str, int]) -> BundleChoice:
        """The configuration for ``device`` (identity or OpenCL device name) at ``sizes``:
        the entry of exactly this size on this device; else the nearest size
        (:func:`size_distance`) on this device whose configuration is legal here; else
        the default. No default and nothing tuned here is an error."""
        env = self._env(sizes)
        mine = self.on_device(device)
        for e in mine:
            if e.sizes == env:
                return self._choice("exact", e.config_index, e, env)
        best: BundleEntry | None = None
        best_d = 0.0
        for e in mine:
            if self.legal(e.config_index, env):
                d = size_distance(env, e.sizes)
                if best is None or d < best_d:
                    best, best_d = e, d
        if best is not None:
            return self._choice("nearest", best.config_index, best, env)
        if self.default_index is None:
            raise InputError(
                f"nothing tuned on {device} fits {env}, and the kernel has no default "
                "configuration",
                source=self.name,
            )
        return self._choice("default", self.default_index, None, env)

    def _choice(
        self, how: str, index: int, entry: BundleEntry | None, env: dict[str, int]
    ) -> BundleChoice:
        tuned = self.tuned(index, env, with_source=False)
        glob, loc = tuned.launch_sizes(env)
        return BundleChoice(
            how=how,
            configuration=self.configurations[index],
            entry=entry,
            legal=self.legal(index, env),
            sizes=env,
            global_size=glob,
            local_size=loc,
            build_options=tuple(tuned.compile_options(env)),
        )

    # -- one configuration as a tuned kernel ----------------------------------------------
    def source(self, index: int) -> str:
        """Configuration ``index``'s source, read from beside the bundle."""
        folder = self.folder or Path(".")
        path = folder / self.configurations[index].source_file
        try:
            return path.read_text()
        except OSError as exc:
            raise InputError(f"cannot read the bundle's source: {exc}", source=path) from None

    def tuned(
        self, index: int, sizes: Mapping[str, int] | None = None, *, with_source: bool = True
    ) -> TunedKernel:
        """Configuration ``index`` as a :class:`TunedKernel` (its ``tuned_size``:
        ``sizes``, else the first entry's of that configuration)."""
        c = self.configurations[index]
        at = [e for e in self.entries if e.config_index == index]
        size = dict(sizes) if sizes is not None else dict(at[0].sizes) if at else {}
        return TunedKernel(
            kernel=self.kernel,
            name=self.name,
            source=self.source(index) if with_source else "",
            configuration=dict(c.configuration),
            size_names=self.size_names,
            defines=dict(c.defines),
            build_options=self.build_options,
            global_size=c.global_size,
            local_size=c.local_size,
            arguments=c.arguments,
            valid_when=c.valid_when,
            tuned_size=size,
            device=at[0].device if at else "",
            device_identity=at[0].device_identity if at else "",
            time_s=at[0].median_s if at else None,
            confirmed=at[0].confirmed if at else False,
            notes=c.notes,
        )

    # -- files ----------------------------------------------------------------------------
    def to_dict(self) -> dict[str, Any]:
        configs = []
        for c in self.configurations:
            data = asdict(c)
            for key in ("global_size", "local_size", "valid_when", "size_checks", "notes"):
                data[key] = None if data[key] is None else list(data[key])
            data["arguments"] = [dict(a) for a in c.arguments]
            configs.append(data)
        default = None
        if self.default_index is not None:
            d = self.configurations[self.default_index]
            default = {
                "config_index": d.index,
                "config": dict(d.configuration),
                "source_file": d.source_file,
            }
        return {
            "format": BUNDLE_FORMAT,
            "format_version": BUNDLE_FORMAT_VERSION,
            "kernel": self.kernel,
            "name": self.name,
            "size_names": list(self.size_names),
            "build_options": list(self.build_options),
            "arguments": [dict(a) for a in self.arguments],
            "configurations": configs,
            "entries": [self._entry_dict(e) for e in self.entries],
            "default": default,
        }

    def _entry_dict(self, e: BundleEntry) -> dict[str, Any]:
        c = self.configurations[e.config_index]
        tuned = self.tuned(e.config_index, e.sizes, with_source=False)
        glob, loc = tuned.launch_sizes(e.sizes)
        return {
            "device": e.device,
            "device_identity": e.device_identity,
            "sizes": dict(e.sizes),
            "config_index": e.config_index,
            "config": dict(c.configuration),
            "source_file": c.source_file,
            "global_size": list(c.global_size),
            "local_size": None if c.local_size is None else list(c.local_size),
            "global_values": list(glob),
            "local_values": None if loc is None else list(loc),
            "median_s": e.median_s,
            "confirmed": e.confirmed,
            "default_median_s": e.default_median_s,
        }

    def to_json(self) -> str:
        return json.dumps(self.to_dict(), indent=1) + "\n"

    @classmethod
    def from_dict(
        cls, data: Mapping[str, Any], source: str = "", folder: Path | None = None
    ) -> TunedBundle:
        if data.get("format") != BUNDLE_FORMAT:
            raise InputError("not a bundle written by `gtune export --sizes`", source=source)
        if int(data.get("format_version", 0)) > BUNDLE_FORMAT_VERSION:
            raise InputError("written by a newer gtune", source=source)
        try:
            configs = tuple(_bundle_configuration(c) for c in data["configurations"])
            entries = tuple(_bundle_entry(e) for e in data["entries"])
            default = data.get("default")
            bundle = cls(
                kernel=str(data["kernel"]),
                name=str(data["name"]),
                size_names=tuple(str(n) for n in data["size_names"]),
                build_options=tuple(str(o) for o in data["build_options"]),
                arguments=tuple(dict(a) for a in data["arguments"]),
                configurations=configs,
                entries=entries,
                default_index=None if default is None else int(default["config_index"]),
                folder=folder,
            )
        except (KeyError, TypeError, ValueError, AttributeError) as exc:
            raise InputError(f"malformed bundle: {exc!r}", source=source) from None
        bundle.check(source)
        return bundle

    def check(self, source: str = "") -> None:
        """Indexes in range, every entry of a size this kernel has; else an error."""
        n = len(self.configurations)
        if any(c.index != i for i, c in enumerate(self.configurations)):
            raise InputError("malformed bundle: configurations out of order", source=source)
        bad = [e.config_index for e in self.entries if not 0 <= e.config_index < n]
        if self.default_index is not None and not 0 <= self.default_index < n:
            bad.append(self.default_index)
        if bad:
            raise InputError(f"malformed bundle: no configuration {bad[0]}", source=source)
        for e in self.entries:
            if set(e.sizes) != set(self.size_names):
                raise InputError(
                    f"malformed bundle: an entry's size {e.sizes} does not name "
                    f"{', '.join(self.size_names)}",
                    source=source,
                )
        for c in self.configurations:
            if Path(c.source_file).name != c.source_file or not c.source_file:
                raise InputError(
                    f"malformed bundle: source file {c.source_file!r} is not a plain file "
                    "name beside the bundle",
                    source=source,
                )


def _bundle_configuration(c: Mapping[str, Any]) -> BundleConfiguration:
    local = c["local_size"]
    return BundleConfiguration(
        index=int(c["index"]),
        configuration={str(k): int(v) for k, v in c["configuration"].items()},
        source_file=str(c["source_file"]),
        defines={str(k): str(v) for k, v in c["defines"].items()},
        global_size=tuple(str(e) for e in c["global_size"]),
        local_size=None if local is None else tuple(str(e) for e in local),
        valid_when=tuple(str(v) for v in c["valid_when"]),
        size_checks=tuple(str(v) for v in c["size_checks"]),
        arguments=tuple(dict(a) for a in c["arguments"]),
        notes=tuple(str(n) for n in c.get("notes") or ()),
    )


def _bundle_entry(e: Mapping[str, Any]) -> BundleEntry:
    def seconds(key: str) -> float | None:
        v = e.get(key)
        return None if v is None else float(v)

    return BundleEntry(
        device=str(e["device"]),
        device_identity=str(e["device_identity"]),
        sizes={str(k): int(v) for k, v in e["sizes"].items()},
        config_index=int(e["config_index"]),
        median_s=seconds("median_s"),
        confirmed=bool(e.get("confirmed")),
        default_median_s=seconds("default_median_s"),
    )


def read_bundle(path: str | Path) -> TunedBundle:
    """The bundle ``gtune export --sizes`` wrote (its JSON); the sources are read from
    the same folder when asked for (:meth:`TunedBundle.source`)."""
    p = Path(path)
    data = read_json_object(p, "a bundle", "not a bundle written by `gtune export --sizes`")
    return TunedBundle.from_dict(data, str(p), p.parent)


def read_json_object(path: Path, what: str, not_one: str) -> dict[str, Any]:
    """The JSON object in ``path``; one clear error naming the file when it cannot be
    read (``cannot read WHAT: ...``) or holds no object (``not_one``)."""
    try:
        data = json.loads(path.read_text())
    except (OSError, ValueError) as exc:
        raise InputError(f"cannot read {what}: {exc}", source=path) from None
    if not isinstance(data, dict):
        raise InputError(not_one, source=path)
    return data


def size_checks(tuned: TunedKernel) -> tuple[str, ...]:
    """The conditions of ``tuned.valid_when`` that name only the problem size."""
    names = set(tuned.size_names)
    return tuple(c for c in tuned.valid_when if parse(c).names <= names)


def tuned_bundle(
    tuned: Sequence[TunedKernel], default: TunedKernel | None, stem: str
) -> tuple[TunedBundle, dict[str, str]]:
    """A bundle of ``tuned`` (one per device and size, each with its device identity,
    tuned size and times) and the kernel's ``default``; and the sources to write beside
    it, by file name (``STEM_configN.cl``, one per distinct configuration)."""
    if not tuned:
        raise InputError("a bundle needs at least one tuned kernel", source=stem)
    first = tuned[0]
    seen = [(t.device_identity, tuple(sorted(t.tuned_size.items()))) for t in tuned]
    twice = next((key for n, key in enumerate(seen) if key in seen[:n]), None)
    if twice is not None:
        raise InputError(
            f"{first.name} is given twice for {twice[0]} at {dict(twice[1])}", source=stem
        )
    kinds: list[TunedKernel] = []
    index: dict[tuple[tuple[str, int], ...], int] = {}
    for t in [*tuned, *([default] if default is not None else [])]:
        if t.name != first.name or t.size_names != first.size_names:
            raise InputError(f"{t.name} is another kernel than {first.name}", source=stem)
        key = tuple(sorted(t.configuration.items()))
        if key not in index:
            index[key] = len(kinds)
            kinds.append(t)
    configs = tuple(
        BundleConfiguration(
            index=i,
            configuration=dict(t.configuration),
            source_file=f"{stem}_config{i}.cl",
            defines=dict(t.defines),
            global_size=t.global_size,
            local_size=t.local_size,
            valid_when=t.valid_when,
            size_checks=size_checks(t),
            arguments=t.arguments,
            notes=t.notes,
        )
        for i, t in enumerate(kinds)
    )
    entries = sorted(
        (
            BundleEntry(
                device=device_slug(t.device_identity),
                device_identity=t.device_identity,
                sizes=dict(t.tuned_size),
                config_index=index[tuple(sorted(t.configuration.items()))],
                median_s=t.time_s,
                confirmed=t.confirmed,
                default_median_s=t.default_time_s,
            )
            for t in tuned
        ),
        key=lambda e: (e.device_identity, [e.sizes[n] for n in first.size_names]),
    )
    bundle = TunedBundle(
        kernel=first.kernel,
        name=first.name,
        size_names=first.size_names,
        build_options=first.build_options,
        arguments=(default or first).arguments,
        configurations=configs,
        entries=tuple(entries),
        default_index=None
        if default is None
        else index[tuple(sorted(default.configuration.items()))],
    )
    return bundle, {c.source_file: kinds[c.index].source for c in configs}


# -- the bundle in C ----------------------------------------------------------------------

C_BUILD_OPTIONS = 1024  # gtune_choice.build_options: room for every value a long takes

_C_CHOICE = """\
#ifndef GTUNE_CHOICE_DEFINED
#define GTUNE_CHOICE_DEFINED
#define GTUNE_CHOICE_VERSION 2 /* the layout below: every bundle included must agree */
#if defined(__GNUC__) || defined(__clang__)
#define GTUNE_MAYBE_UNUSED __attribute__((unused))
#else
#define GTUNE_MAYBE_UNUSED
#endif
/* How gtune_select chose: exact size, nearest legal size on the device, the default. */
enum { GTUNE_NONE = -1, GTUNE_EXACT = 0, GTUNE_NEAREST = 1, GTUNE_DEFAULT = 2 };
typedef struct {
    int how;                     /* GTUNE_EXACT, GTUNE_NEAREST, GTUNE_DEFAULT; GTUNE_NONE:
                                    a size not positive, or nothing fits and no default */
    int config;                  /* the configuration's index in the bundle (-1: none) */
    int entry;                   /* the bundle entry chosen (-1: the default, or none) */
    int legal;                   /* the configuration's size checks hold at this size */
    const char *kernel_name;     /* the __kernel function */
    const char *source_file;     /* its .cl, beside the header */
    const char *device_identity; /* where the entry was tuned ("" for the default) */
    double median_s;             /* its time there (0 for the default) */
    int n_values;
    const char *const *param_names;
    const long *values;          /* the configuration, in param_names' order */
    unsigned work_dim;
    int has_local;               /* 0: let OpenCL choose the work-group (local NULL) */
    size_t global_size[3];
    size_t local_size[3];
    char build_options[1024];    /* -D options for this size, then the fixed ones (the
                                    header is refused at export if they could not fit) */
} gtune_choice;

/* A device name as gtune makes the name part of an identity: lower case, every run
   of characters other than the ASCII letters and digits one '-' (none at the start),
   at most 32 characters. ASCII by itself, whatever the C locale: a name with letters
   beyond ASCII (as gtune's Python side keeps them) matches only by its identity. */
static GTUNE_MAYBE_UNUSED void gtune_device_slug(const char *name, char out[33]) {
    size_t n = 0;
    int dash = 0;
    for (; *name != '\\0' && n < 32; name++) {
        char ch = *name;
        if (ch >= 'A' && ch <= 'Z') ch = (char)(ch - 'A' + 'a');
        if (!((ch >= 'a' && ch <= 'z') || (ch >= '0' && ch <= '9'))) {
            dash = 1;
            continue;
        }
        if (dash && n > 0) {
            out[n++] = '-';
            if (n == 32) break;
        }
        dash = 0;
        out[n++] = ch;
    }
    out[n] = '\\0';
}
#elif GTUNE_CHOICE_VERSION != 2
#error "bundles of different gtune versions in one file: export them again with one gtune"
#endif
"""


def _bundle_config_c(bundle: TunedBundle, c: BundleConfiguration, p: str, params: str) -> list[str]:
    """The C functions of one configuration: its size checks, and its launch sizes and
    build options at a size."""
    unused = " ".join(f"(void){n};" for n in _c_size_params(bundle))
    checks = " && ".join(_c_expr(x) for x in c.size_checks) or "1"
    lines = [
        f"static GTUNE_MAYBE_UNUSED int {p}_legal_{c.index}({params}) {{",
        f"    {unused}",
        f"    return {checks};",
        "}",
        f"static GTUNE_MAYBE_UNUSED void {p}_launch_{c.index}({params}, gtune_choice *c) {{",
        f"    {unused}",
        f"    c->work_dim = {len(c.global_size)};",
    ]
    for i, e in enumerate(c.global_size):
        lines.append(f"    c->global_size[{i}] = (size_t)({_c_expr(e)});")
    for i, e in enumerate(c.local_size or ()):
        lines.append(f"    c->local_size[{i}] = (size_t)({_c_expr(e)});")
    lines.append(f"    c->has_local = {int(c.local_size is not None)};")
    fmt = " ".join(f"-D{k}=%ld" for k in c.defines)
    fmt = " ".join([fmt, *(printf_text(o) for o in bundle.build_options)]).strip()
    args = "".join(f", (long)({_c_expr(v)})" for v in c.defines.values())
    longest = len(fmt.replace("%%", "%")) + len(c.defines) * (len(str(-(2**63))) - len("%ld"))
    if longest >= C_BUILD_OPTIONS:
        raise InputError(
            f"configuration {c.index}'s build options may take {longest} characters, over "
            f"the C header's {C_BUILD_OPTIONS - 1}",
            source=bundle.name,
        )
    lines.append(f"    snprintf(c->build_options, sizeof c->build_options, {c_string(fmt)}{args});")
    lines.append("}")
    return lines


def _c_size_params(bundle: TunedBundle) -> list[str]:
    """The C parameter names of the size: the kernel's names, padded to three."""
    names = list(bundle.size_names)
    return names + [f"gtune_unused_{i}" for i in range(len(names), 3)]


def _bundle_tables_c(bundle: TunedBundle, p: str) -> list[str]:
    params = list(bundle.configurations[0].configuration)
    n = len(bundle.configurations)
    lines = [f"#define {p.upper()}_N_CONFIGS {n}", f"#define {p.upper()}_N_PARAMS {len(params)}"]
    names = ", ".join(c_string(x) for x in params) or "0"
    lines.append(f"static const char *const {p}_param_names[] = {{{names}}};")
    lines.append(f"static const long {p}_values[{n}][{max(len(params), 1)}] = {{")
    for c in bundle.configurations:
        values = ", ".join(str(c.configuration.get(x, 0)) for x in params) or "0"
        lines.append(f"    {{{values}}},")
    lines.append("};")
    files = ", ".join(c_string(c.source_file) for c in bundle.configurations)
    lines.append(f"static const char *const {p}_sources[{n}] = {{{files}}};")
    lines.append(f"static int (*const {p}_legal[{n}])(long, long, long) = {{")
    lines.append("    " + ", ".join(f"{p}_legal_{c.index}" for c in bundle.configurations))
    lines.append("};")
    lines.append(f"static void (*const {p}_launch[{n}])(long, long, long, gtune_choice *) = {{")
    lines.append("    " + ", ".join(f"{p}_launch_{c.index}" for c in bundle.configurations))
    lines.append("};")
    lines.append(f"#define {p.upper()}_N_ENTRIES {len(bundle.entries)}")
    lines.append(
        f"static const struct {{ const char *device; const char *identity; long size[3]; "
        f"int config; double median_s; }} {p}_entries[{max(len(bundle.entries), 1)}] = {{"
    )
    for e in bundle.entries:
        size = [e.sizes[x] for x in bundle.size_names] + [1] * (3 - len(bundle.size_names))
        lines.append(
            f"    {{{c_string(e.device)}, {c_string(e.device_identity)}, "
            f"{{{', '.join(f'{v}L' for v in size)}}}, {e.config_index}, "
            f"{e.median_s if e.median_s is not None else 0.0!r}}},"
        )
    if not bundle.entries:
        lines.append('    {"", "", {0, 0, 0}, -1, 0.0},')
    lines.append("};")
    lines.append(
        f"#define {p.upper()}_DEFAULT_CONFIG "
        f"{-1 if bundle.default_index is None else bundle.default_index}"
    )
    return lines


_C_USAGE = """\
/* Use (C99 or C++; one header per kernel, any number of files may include it):
 *
 *     char name[256];
 *     clGetDeviceInfo(device, CL_DEVICE_NAME, sizeof name, name, NULL);
 *     gtune_choice c = gtune_select(name, nx, ny, nz);  (sizes the kernel lacks: 1)
 *     if (c.how == GTUNE_NONE) ...  a size not positive, or nothing fits and no default
 *     if (!c.legal) ...             the default at a size its size checks refuse
 *     build c.source_file (beside this header) with c.build_options, kernel
 *     c.kernel_name; launch it with c.work_dim, c.global_size and
 *     (c.has_local ? c.local_size : NULL).
 *
 * The device: its CL_DEVICE_NAME as the driver reports it (case, spaces and
 * punctuation do not matter: "NVIDIA H200" and "nvidia-h200" are one device), or a
 * gtune device identity ("nvidia-h200-1a2b3c4d"). A name matches every identity of
 * that name in the bundle (the same GPU under other drivers); NULL or a device never
 * tuned gets the default. Neither the device's limits nor its driver are checked:
 * on a device never tuned, compare the product of c.local_size with its
 * CL_DEVICE_MAX_WORK_GROUP_SIZE. Sizes and formulas are evaluated in long.
 *
 * gtune_select keeps no state and allocates nothing (its answer is returned by value,
 * the strings in it are static), so any thread may call it at any time. With several
 * bundles in one file, call each by its own name, @P@_select: gtune_select then
 * names none of them (a call of it does not build), unless the application defines
 * it (#define gtune_select @P@_select before the includes). */
"""

_C_SELECT = """\
/* The configuration for a device (its CL_DEVICE_NAME, or a gtune device identity) at
   a problem size: the entry of exactly this size on this device; else the entry of the
   nearest size on this device (least sum over the dimensions of max/min; of equals,
   the first in the table) whose configuration's size checks hold at this size; else
   the default configuration. The launch sizes and build options are evaluated for
   this size. Reentrant: no state, no allocation. */
static GTUNE_MAYBE_UNUSED gtune_choice @P@_select(const char *device_name, long nx, long ny,
                                                  long nz) {
    gtune_choice c;
    long asked[3];
    char slug[33];
    int i, d, best = -1, k = -1;
    double best_d = 0.0;
    memset(&c, 0, sizeof c);
    c.how = GTUNE_NONE;
    c.config = -1;
    c.entry = -1;
    c.kernel_name = @KERNEL@;
    c.source_file = "";
    c.device_identity = "";
    asked[0] = nx;
    asked[1] = ny;
    asked[2] = nz;
    for (d = @DIMS@; d < 3; d++) asked[d] = 1; /* the kernel has @DIMS@ size(s) */
    if (asked[0] < 1 || asked[1] < 1 || asked[2] < 1) return c;
    gtune_device_slug(device_name ? device_name : "", slug);
    for (i = 0; i < @PU@_N_ENTRIES; i++) {
        int mine = device_name != NULL && (strcmp(device_name, @P@_entries[i].identity) == 0 ||
                                           strcmp(slug, @P@_entries[i].device) == 0);
        if (mine && @P@_entries[i].config >= 0) {
            const long *s = @P@_entries[i].size;
            if (s[0] == asked[0] && s[1] == asked[1] && s[2] == asked[2]) {
                best = i;
                c.how = GTUNE_EXACT;
                break;
            }
            if (@P@_legal[@P@_entries[i].config](asked[0], asked[1], asked[2])) {
                double dist = 0.0;
                for (d = 0; d < @DIMS@; d++) {
                    double a = (double)asked[d], b = (double)s[d];
                    dist += a > b ? a / b : b / a;
                }
                if (best < 0 || dist < best_d) {
                    best = i;
                    best_d = dist;
                    c.how = GTUNE_NEAREST;
                }
            }
        }
    }
    if (best >= 0) {
        k = @P@_entries[best].config;
        c.entry = best;
        c.device_identity = @P@_entries[best].identity;
        c.median_s = @P@_entries[best].median_s;
    } else if (@PU@_DEFAULT_CONFIG >= 0) {
        k = @PU@_DEFAULT_CONFIG;
        c.how = GTUNE_DEFAULT;
    } else {
        return c;
    }
    c.config = k;
    c.legal = @P@_legal[k](asked[0], asked[1], asked[2]);
    c.source_file = @P@_sources[k];
    c.n_values = @PU@_N_PARAMS;
    c.param_names = @P@_param_names;
    c.values = @P@_values[k];
    @P@_launch[k](asked[0], asked[1], asked[2], &c);
    return c;
}
"""


def bundle_header(bundle: TunedBundle) -> str:
    """The bundle as a C header: the configurations, the entries, and
    ``gtune_select(device_name, nx, ny, nz)`` choosing as :meth:`TunedBundle.select`."""
    if len(bundle.size_names) > 3:
        raise InputError(
            f"the C lookup takes at most three sizes; {bundle.name} has "
            f"{len(bundle.size_names)} ({', '.join(bundle.size_names)})",
            source=bundle.name,
        )
    p = _c_name(bundle.name).lower()
    guard = f"{p.upper()}_BUNDLE_H"
    params = ", ".join(f"long {n}" for n in _c_size_params(bundle))
    lines = [
        f"/* {c_comment(bundle.name)}: every tuned (device, size) of `gtune export --sizes`,",
        " * and gtune_select to choose one at run time. The same data as the .json beside",
        " * it; the sources are the .cl files beside it (docs/export.md). */",
        *_C_USAGE.replace("@P@", p).splitlines(),
        f"#ifndef {guard}",
        f"#define {guard}",
        "",
        "#include <stddef.h>",
        "#include <stdio.h>",
        "#include <string.h>",
        "",
        _C_CHOICE,
        f"/* Problem size: {', '.join(bundle.size_names)} (gtune_select's nx, ny, nz). */",
        "/* Checked at a size, per configuration (device limits are not):",
    ]
    for c in bundle.configurations:
        checks = ", ".join(c.size_checks) or "nothing"
        lines.append(f" *   config {c.index}: {c_comment(checks)}")
    lines.append(" */")
    lines.append("/* Arguments, in order (a configuration's own list in the JSON says where it")
    lines.append(" * reads an input through an image): */")
    for a in bundle.arguments:
        text = ", ".join(f"{k}={v}" for k, v in a.items() if k != "name" and v not in (None, ""))
        lines.append(f"/*   {c_comment(str(a['name']))}: {c_comment(text)} */")
    for c in bundle.configurations:
        lines.extend(_bundle_config_c(bundle, c, p, params))
    lines.append("")
    lines.extend(_bundle_tables_c(bundle, p))
    lines.append("")
    select = _C_SELECT.replace("@PU@", p.upper()).replace("@P@", p)
    select = select.replace("@KERNEL@", c_string(bundle.kernel))
    lines.append(select.replace("@DIMS@", str(len(bundle.size_names))))
    lines += [
        "#if !defined(gtune_select)",
        f"#define gtune_select {p}_select",
        "#define GTUNE_SELECT_BY_BUNDLE 1",
        "#elif defined(GTUNE_SELECT_BY_BUNDLE)",
        "/* a second bundle in this file: gtune_select would silently be the first's */",
        "#undef gtune_select",
        "#define gtune_select gtune_select_names_several_bundles_call_each_PREFIX_select",
        "#endif /* else the application's own #define gtune_select stands */",
    ]
    lines.append("")
    lines.append(f"#endif /* {guard} */")
    return "\n".join(lines) + "\n"


def write_bundle(
    bundle: TunedBundle, sources: Mapping[str, str], folder: Path, stem: str, *, force: bool
) -> list[Path]:
    """Write ``STEM_bundle.json``, ``STEM_bundle.h`` and the sources into ``folder``;
    all are checked before any is written (:mod:`gtune.outfiles`). Returns their paths."""
    texts = {f"{stem}_bundle.json": bundle.to_json(), f"{stem}_bundle.h": bundle_header(bundle)}
    texts.update(sources)
    paths = check_targets([folder / name for name in texts], force=force)
    for path, text in zip(paths, texts.values(), strict=True):
        write_text(path, text, force=force)
    return paths


__all__ = [
    "BUNDLE_FORMAT",
    "BundleChoice",
    "BundleConfiguration",
    "BundleEntry",
    "TunedBundle",
    "TunedKernel",
    "bundle_header",
    "device_slug",
    "read_bundle",
    "read_json_object",
    "size_checks",
    "size_distance",
    "specialise",
    "tuned_bundle",
    "tuned_kernel",
    "write_bundle",
    "write_tuned",
]

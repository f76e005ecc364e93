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
from collections.abc import Mapping
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from gtune.escape import c_comment, c_string, printf_text
from gtune.exceptions import ExpressionError, GtuneError, InputError
from gtune.expr import Expr, parse
from gtune.kernel import TunableKernel
from gtune.outfiles import check_targets, write_text
from gtune.specialise import cpp_difference, specialise_source

FORMAT_VERSION = 1


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
        try:
            data = json.loads(p.read_text())
        except (OSError, ValueError) as exc:
            raise InputError(f"cannot read a tuned kernel: {exc}", source=p) from None
        if not isinstance(data, dict):
            raise InputError("not a tuned kernel written by `gtune export`", source=p)
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
        elif a.value is not None:
            entry["value"] = specialise(a.value, baked)
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
        value = ast.literal_eval(text)
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
    return _c(ast.parse(text, mode="eval").body)


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


__all__ = ["TunedKernel", "specialise", "tuned_kernel", "write_tuned"]

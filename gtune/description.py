"""Kernel descriptions (``kernel.yaml``, ``docs/description.md``) read into a
:class:`~gtune.kernel.TunableKernel`, and the trust rules they are read under.

A description is data: its source must lie beside it, every key and expression is
checked (errors name the file and the key), and a Python reference runs only when it
is gtune's own, a ``.py`` file beside the description, or a function of a trusted
module (:func:`trusted_modules`: ``$GTUNE_TRUST_MODULES`` and what the caller adds).
:func:`from_dict` rebuilds a kernel from :meth:`TunableKernel.to_dict` in a worker
process or on another machine.
"""

from __future__ import annotations

import hashlib
import importlib.util
import math
import os
import warnings
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

from gtune.clsource import kernel_signatures
from gtune.escape import check_file_name
from gtune.exceptions import ExpressionError, InputError
from gtune.expr import Expr, parse_ast
from gtune.includes import headers_digest, kernel_include_option
from gtune.inputs import MAX_SOURCE_BYTES, read_text, read_yaml_file
from gtune.kernel import (
    DTYPES,
    INITS,
    MAX_SIZE,
    POINTER_TYPE,
    Argument,
    Domain,
    Launch,
    Parameter,
    Reference,
    Steps,
    TunableKernel,
)

MAX_LIST_ITEMS = 10_000
"""Most items an explicit list in a description may hold."""

TRUST_ENV = "GTUNE_TRUST_MODULES"
"""Comma-separated modules whose functions a description may name as its reference, and
reference files (or folders of them) that may run: a path is an entry holding a ``/``
or ending in ``.py``."""
BUILTIN_TRUSTED_MODULES = ("gtune.stencils.reference",)
_GTUNE_ROOT = Path(__file__).resolve().parents[1]
BUILTIN_TRUSTED_FOLDERS = (_GTUNE_ROOT / "stencils", Path(__file__).resolve().parent)
"""Reference files that come with gtune (its ``stencils/`` folder and the package)."""


class ReferenceCodeNotice(UserWarning):
    """A description's Python reference is code that runs: said once per reference file."""


def from_dict(data: Mapping[str, Any]) -> TunableKernel:
    trusted = data.get("trusted_module")
    kernel = parse_description(
        data["raw"],
        source=data["source"],
        label=data["description_path"] or data["source_path"],
        source_path=data["source_path"],
        base_dir=(
            Path(data["description_path"]).parent
            if data["description_path"]
            else Path(data["source_path"]).parent
            if data["source_path"]
            else None
        ),
        trust_modules=[trusted] if trusted else (),
    )
    if "build_options" in data:
        kernel = replace(kernel, build_options=tuple(str(o) for o in data["build_options"]))
    return kernel.with_sizes(data["sizes"])


def is_path_entry(entry: str) -> bool:
    """Whether a trust entry names a file or folder (not a module)."""
    return os.sep in entry or "/" in entry or entry.endswith(".py")


def file_trusted(path: Path, trusted: Sequence[str]) -> bool:
    """Whether the reference file ``path`` may run: it comes with gtune, or it or a
    folder above it is a path entry of ``trusted``."""
    full = path.resolve()
    folders = [*BUILTIN_TRUSTED_FOLDERS]
    folders += [Path(e).expanduser().resolve() for e in trusted if is_path_entry(e)]
    return any(full == f or full.is_relative_to(f) for f in folders)


def _reference_module(reference: Reference) -> str:
    if reference.kind != "python":
        return ""
    module = reference.target.rpartition(":")[0]
    return "" if module.endswith(".py") else module


# ---------------------------------------------------------------------------------
# Loading


def load_kernel(
    path: str | Path,
    sizes: Mapping[str, int] | None = None,
    *,
    trust_modules: Iterable[str] = (),
) -> TunableKernel:
    """Load ``kernel.cl`` with its description, or a description naming its source.

    A description is data: its ``source`` must lie in the description's folder (or be
    the ``path`` given here), and a Python reference must be a ``.py`` file beside it or
    a function of a trusted module (:func:`trusted_modules`; ``trust_modules`` adds more).
    """
    p = Path(path)
    check_file_name(p, "kernel's file name")
    if not p.exists():
        raise InputError("file not found", source=p)
    if p.is_dir():
        raise InputError("is a directory; give kernel.cl or its description .yaml", source=p)
    if p.name.endswith(".stencil.yaml"):  # a stencil definition: rendered, not read
        from gtune.stencils.render import definition_kernel

        kernel: TunableKernel = definition_kernel(p)
        return kernel.with_sizes(sizes) if sizes else kernel
    if p.suffix in (".yaml", ".yml"):
        desc_path = p
    else:
        candidates = [p.with_suffix(".yaml"), p.with_suffix(".yml")]
        found = [c for c in candidates if c.exists()]
        if not found:
            raise InputError(
                f"no kernel description found beside the kernel (looked for {candidates[0].name})",
                source=p,
                hint="write a description (docs/description.md) or tune it as a plain kernel "
                "with `gtune run` options",
            )
        desc_path = found[0]
    raw = read_yaml(desc_path)
    if not isinstance(raw, dict):
        raise InputError("a kernel description must be a mapping", source=desc_path)
    src_name = raw.get("source", desc_path.with_suffix(".cl").name)
    where = f"{desc_path}: source"
    if not isinstance(src_name, str) or not src_name.strip():
        raise InputError(f"must be the kernel source's file name, got {src_name!r}", source=where)
    folder = desc_path.parent.resolve()
    src_path = (desc_path.parent / src_name).resolve()
    given = p.resolve() if p.suffix not in (".yaml", ".yml") else None
    if not src_path.is_relative_to(folder) and src_path != given:
        raise InputError(
            f"kernel source {src_name!r} lies outside the description's folder; a description "
            "may only name a source beside it (or give the source's path on the command line)",
            source=where,
        )
    if not src_path.exists():
        raise InputError(f"kernel source {src_name!r} not found", source=where)
    try:
        source = read_text(src_path, limit=MAX_SOURCE_BYTES, what="kernel source")
    except InputError as exc:
        raise InputError(f"{src_name!r}: {exc.message}", source=where) from None
    kernel = parse_description(
        raw,
        source=source,
        label=str(desc_path),
        source_path=str(src_path),
        base_dir=desc_path.parent,
        trust_modules=trust_modules,
    )
    _check_argument_count(kernel, str(desc_path))
    _notice_python_reference(kernel)
    return kernel.with_sizes(sizes) if sizes else kernel


def _check_argument_count(kernel: TunableKernel, where: str) -> None:
    """The description lists as many arguments as the kernel function takes (read from
    the source where no macro can change the signature)."""
    if "#define" in kernel.source or "#include" in kernel.source:
        return  # the signature may come from macros: the driver's check stands
    try:
        params = kernel_signatures(kernel.source).get(kernel.name)
    except (InputError, ValueError, IndexError, RecursionError):
        return
    if params is not None and len(params) != len(kernel.arguments):
        raise InputError(
            f"kernel {kernel.name} takes {len(params)} argument(s) in "
            f"{Path(kernel.source_path).name}, the description lists "
            f"{len(kernel.arguments)}",
            source=f"{where}: arguments",
        )


def read_yaml(path: Path) -> Any:
    """A YAML file through the safe loader, within size, depth and alias limits."""
    return read_yaml_file(path)


def trusted_modules(extra: Iterable[str] = ()) -> tuple[str, ...]:
    """Modules whose functions may serve as references, and reference files that may
    run: gtune's own, those listed in ``$GTUNE_TRUST_MODULES`` (comma-separated) and
    ``extra``. A module trusts its submodules, a folder the files below it."""
    env = os.environ.get(TRUST_ENV, "")
    listed = [n.strip() for n in env.replace(";", ",").split(",") if n.strip()]
    return (*BUILTIN_TRUSTED_MODULES, *listed, *(str(e) for e in extra))


_NOTICED: set[str] = set()


def _notice_python_reference(kernel: TunableKernel) -> None:
    """Say once per process and reference that the description runs Python code."""
    ref = kernel.reference
    if ref.kind != "python" or _reference_module(ref) in BUILTIN_TRUSTED_MODULES:
        return
    key = ref.target.rpartition(":")[0]
    if key in _NOTICED:
        return
    _NOTICED.add(key)
    warnings.warn(
        f"{kernel.label}: the reference {key} is Python code and runs with your permissions; "
        "tune descriptions only from sources you trust",
        ReferenceCodeNotice,
        stacklevel=3,
    )


_TOP_KEYS = {
    "kernel",
    "source",
    "problem",
    "arguments",
    "parameters",
    "constraints",
    "launch",
    "reference",
    "techniques",
    "features",
    "flops_per_point",
    "build_options",
    "defines",
    "inferred",
    "doc",
    "steps",
}


def parse_description(
    raw: Mapping[str, Any],
    *,
    source: str,
    label: str,
    source_path: str = "",
    base_dir: Path | None = None,
    trust_modules: Iterable[str] = (),
) -> TunableKernel:
    """Validate a description mapping; every error names ``label`` and the key."""
    try:
        return _parse_description(
            raw,
            source=source,
            label=label,
            source_path=source_path,
            base_dir=base_dir,
            trust_modules=trust_modules,
        )
    except RecursionError:
        raise InputError("an expression is nested too deeply to read", source=label) from None
    except ExpressionError as exc:
        if exc.source and exc.source.startswith(label):
            raise
        where = f"{label}: {exc.source}" if exc.source else label
        raise ExpressionError(exc.message, source=where, hint=exc.hint) from None


def _parse_description(
    raw: Mapping[str, Any],
    *,
    source: str,
    label: str,
    source_path: str,
    base_dir: Path | None,
    trust_modules: Iterable[str],
) -> TunableKernel:
    """The body of :func:`parse_description`."""

    def err(key: str, message: str) -> InputError:
        return InputError(message, source=f"{label}: {key}")

    name = _check_top_level(raw, label, err)
    sizes = _parse_problem(raw["problem"], err)
    params = _parse_parameters(raw.get("parameters") or {}, err)
    _check_parameters(params, sizes, err)
    pnames = {p.name for p in params}
    known = pnames | set(sizes)
    args = _parse_arguments(raw["arguments"], err, known)
    _check_local_sizes(args, sizes, params, err)
    constraints = _parse_constraints(raw.get("constraints") or [], err, known, label)
    derived = _parse_defines(raw.get("defines"), err, known)
    launch = _parse_launch(raw["launch"], err, known)
    steps = _parse_steps(raw.get("steps"), err, known, args)
    reference = _parse_reference(
        raw.get("reference"), err, pnames, base_dir, trusted_modules(trust_modules)
    )
    techniques = _parse_techniques(raw.get("techniques") or {}, err, known, label)
    features = raw.get("features") or {}
    if not isinstance(features, dict):
        raise err("features", "must be a mapping of feature names to values")
    flops = raw.get("flops_per_point", features.get("flops_per_point", 0))
    if (
        isinstance(flops, bool)
        or not isinstance(flops, int | float)
        or not math.isfinite(flops)
        or flops < 0
    ):
        raise err("flops_per_point", f"must be a non-negative number, got {flops!r}")
    own = {*sizes, *pnames, *(n for n, _ in derived)}
    opts = _parse_build_options(raw.get("build_options") or [], err, own)
    folder = Path(source_path).parent if source_path else base_dir
    options = [*kernel_include_option(folder, source), *(str(o) for o in opts)]
    return TunableKernel(
        name=name,
        source=source,
        sizes=sizes,
        arguments=tuple(args),
        parameters=tuple(params),
        constraints=tuple(constraints),
        launch=launch,
        reference=reference,
        techniques=techniques,
        features=dict(features),
        flops_per_point=float(flops),
        build_options=tuple(options),
        derived=derived,
        steps=steps,
        source_path=source_path,
        description_path=label if label.endswith((".yaml", ".yml")) else "",
        raw=dict(raw),
        headers_digest=headers_digest(source, folder, options),
    )


def _check_top_level(raw: Any, label: str, err: Any) -> str:
    """Only known keys, the required ones present; returns the kernel's name."""
    if not isinstance(raw, Mapping):
        raise InputError("a kernel description must be a mapping", source=label)
    unknown = set(raw) - _TOP_KEYS
    if unknown:
        first = sorted(unknown, key=str)[0]
        raise err(str(first), f"unknown key; allowed: {', '.join(sorted(_TOP_KEYS))}")
    for key in ("kernel", "problem", "arguments", "launch"):
        if key not in raw:
            raise err(key, "missing required key")
    name = raw["kernel"]
    if not isinstance(name, str) or not name.isidentifier():
        raise err("kernel", f"must be the kernel function's name, got {name!r}")
    return name


def _parse_problem(problem: Any, err: Any) -> dict[str, int]:
    if not isinstance(problem, dict) or not problem:
        raise err("problem", "must map size names to integers, e.g. {NX: 256, NY: 256}")
    sizes: dict[str, int] = {}
    for k, v in problem.items():
        if not isinstance(k, str) or not (k.isidentifier() and k.isascii()):
            raise err(f"problem.{k}", "size names must be ASCII identifiers such as NX")
        if not isinstance(v, int) or isinstance(v, bool) or not 0 < v <= MAX_SIZE:
            raise err(f"problem.{k}", f"must be a positive integer up to {MAX_SIZE}, got {v!r}")
        sizes[k] = v
    return sizes


def _check_parameters(params: Sequence[Parameter], sizes: Mapping[str, int], err: Any) -> None:
    """Parameters named apart from sizes, domains of sizes only, defaults inside them."""
    clash = {p.name for p in params} & set(sizes)
    if clash:
        raise err("parameters", f"{sorted(clash)[0]!r} is both a parameter and a size")
    for p in params:
        bad = sorted(p.domain.names() - set(sizes))
        if bad:
            raise err(
                f"parameters.{p.name}",
                f"domain may only use problem sizes ({', '.join(sizes)}); got {bad[0]!r} "
                "(express dependencies between parameters as constraints)",
            )
    for p in params:
        if p.default is None:
            continue
        try:
            allowed = p.domain.values(dict(sizes))
        except (InputError, ExpressionError):
            continue  # reported where the space is built
        if p.default not in allowed:
            shown = ", ".join(str(v) for v in allowed[:8]) + (", ..." if len(allowed) > 8 else "")
            raise err(
                f"parameters.{p.name}.default",
                f"{p.default} is outside the domain at the problem size ({shown or 'empty'})",
            )


def _parse_constraints(craw: Any, err: Any, known: set[str], label: str) -> list[Expr]:
    if not isinstance(craw, list):
        raise err("constraints", "must be a list of expressions")
    from gtune.device import LIMIT_NAMES

    _check_length(craw, "constraints", err)
    constraints: list[Expr] = []
    for i, c in enumerate(craw):
        e = Expr(_expr_text(c, f"constraints[{i}]", err), source=f"{label}: constraints[{i}]")
        e.check_names(known | set(LIMIT_NAMES) | {"LOCAL_MEM_BYTES"})
        constraints.append(e)
    return constraints


def _parse_techniques(
    traw: Any, err: Any, known: set[str], label: str
) -> dict[str, tuple[Expr, ...]]:
    if not isinstance(traw, dict):
        raise err("techniques", "must map technique names to lists of constraints")
    techniques: dict[str, tuple[Expr, ...]] = {}
    for tname, tcons in traw.items():
        items = tcons if isinstance(tcons, list) else [tcons]
        _check_length(items, f"techniques.{tname}", err)
        exprs = tuple(
            Expr(_expr_text(c, f"techniques.{tname}", err), source=f"{label}: techniques.{tname}")
            for c in items
        )
        for e in exprs:
            e.check_names(known)
        techniques[str(tname)] = exprs
    return techniques


def _parse_build_options(opts: Any, err: Any, own: set[str]) -> list[str | int | float]:
    """Compiler options, none of them redefining a macro gtune defines itself."""
    if isinstance(opts, str):
        opts = opts.split()
    if not isinstance(opts, list) or not all(isinstance(o, str | int | float) for o in opts):
        raise err("build_options", "must be a list of compiler options (strings)")
    for i, opt in enumerate(str(o) for o in opts):
        # the driver splits options at spaces: each piece is an option of its own
        for piece in opt.split():
            if piece.startswith("-D"):
                macro = piece[2:].partition("=")[0]
                if macro in own:
                    raise err(
                        f"build_options[{i}]",
                        f"{piece!r} would redefine {macro}, which gtune defines itself "
                        "(the problem size, a parameter or a defines: entry)",
                    )
    return opts


def _parse_parameters(raw: Any, err: Any) -> list[Parameter]:
    if not isinstance(raw, dict):
        raise err("parameters", "must map parameter names to domains")
    _check_length(raw, "parameters", err)
    out: list[Parameter] = []
    for name, spec in raw.items():
        key = f"parameters.{name}"
        if not isinstance(name, str) or not (name.isidentifier() and name.isascii()):
            raise err(key, "parameter names must be identifiers of ASCII letters, digits and '_'")
        src = f"{key}"
        default = None
        doc = ""
        if isinstance(spec, list):
            _check_length(spec, key, err)
            domain = Domain("values", items=tuple(Expr(_expr_text(v, key, err), src) for v in spec))
        elif isinstance(spec, dict):
            spec = dict(spec)
            default = spec.pop("default", None)
            doc = str(spec.pop("doc", ""))
            kinds = [k for k in ("pow2", "range", "values") if k in spec]
            if len(kinds) != 1 or set(spec) - {kinds[0]} if kinds else True:
                raise err(
                    key, "give exactly one of pow2: [lo, hi], range: [lo, hi, step], values: [...]"
                )
            kind = kinds[0]
            val = spec[kind]
            if not isinstance(val, list) or not val:
                raise err(f"{key}.{kind}", "must be a non-empty list")
            _check_length(val, f"{key}.{kind}", err)
            if kind == "values":
                domain = Domain(
                    "values", items=tuple(Expr(_expr_text(v, key, err), src) for v in val)
                )
            else:
                if len(val) not in ((2,) if kind == "pow2" else (2, 3)):
                    raise err(
                        f"{key}.{kind}", f"expected [lo, hi{', step' if kind == 'range' else ''}]"
                    )
                exprs = [Expr(_expr_text(v, f"{key}.{kind}", err), src) for v in val]
                domain = Domain(
                    kind,  # type: ignore[arg-type]
                    lo=exprs[0],
                    hi=exprs[1],
                    step=exprs[2] if len(exprs) > 2 else None,
                )
        else:
            domain = Domain("values", items=(Expr(_expr_text(spec, key, err), src),))
        if default is not None and (
            not isinstance(default, int) or isinstance(default, bool) or abs(default) > MAX_SIZE
        ):
            raise err(f"{key}.default", f"must be an integer, got {default!r}")
        out.append(Parameter(str(name), domain, default, doc))
    return out


def _vector_scalar(
    a: Mapping[str, Any], key: str, dtype: str, err: Any, known: set[str]
) -> Argument:
    """A scalar of an OpenCL vector type (``uint2 dims``): ``value`` lists its lanes'
    values (2, 3, 4, 8 or 16), each an expression of the sizes."""
    values = a["value"]
    if len(values) not in (2, 3, 4, 8, 16):
        raise err(f"{key}.value", f"a vector has 2, 3, 4, 8 or 16 lanes, got {len(values)}")
    lanes: list[Expr] = []
    for k, v in enumerate(values):
        text = _expr_text(v, f"{key}.value[{k}]", err)
        if dtype.startswith("float"):
            text = _float_literals(text, key)
        lane = Expr(text, key)
        lane.check_names(known)
        lanes.append(lane)
    return Argument(a["name"], "scalar", dtype, "input", lanes=tuple(lanes))


def _parse_arguments(raw: Any, err: Any, known: set[str]) -> list[Argument]:
    if not isinstance(raw, list) or not raw:
        raise err("arguments", "must be a list of arguments in signature order")
    _check_length(raw, "arguments", err)
    out: list[Argument] = []
    seen: set[str] = set()
    for i, a in enumerate(raw):
        key = f"arguments[{i}]"
        if not isinstance(a, dict) or "name" not in a:
            raise err(key, "each argument needs at least a name")
        allowed = {"name", "kind", "dtype", "role", "shape", "init", "value", "image_when"}
        allowed |= {"pointer"}  # (a buffer's pointer type, where not its dtype's)
        extra = set(a) - allowed
        if extra:
            raise err(
                f"{key}.{sorted(extra, key=str)[0]}",
                f"unknown key; allowed: {', '.join(sorted(allowed))}",
            )
        name = a["name"]
        if not isinstance(name, str) or not name.isidentifier():
            raise err(f"{key}.name", f"must be the argument's name (an identifier), got {name!r}")
        if name in seen:
            raise err(key, f"duplicate argument {name!r}")
        seen.add(name)
        kind = a.get("kind", "scalar" if "value" in a else "buffer")
        if not isinstance(kind, str) or kind not in ("buffer", "scalar", "local"):
            raise err(f"{key}.kind", f"must be buffer, scalar or local, got {kind!r}")
        dtype = a.get("dtype", "float32")
        if not isinstance(dtype, str) or dtype not in DTYPES:
            raise err(f"{key}.dtype", f"unknown dtype {dtype!r}; allowed: {', '.join(DTYPES)}")
        src = f"{key}"
        if kind == "local":
            out.append(_local_argument(a, key, dtype, err, known))
            continue
        if kind == "scalar":
            if "value" not in a:
                raise err(f"{key}.value", "a scalar argument needs a value")
            if isinstance(a["value"], list):  # a vector (uint2 dims): its lanes
                out.append(_vector_scalar(a, key, dtype, err, known))
                continue
            text = _expr_text(a["value"], f"{key}.value", err)
            if dtype.startswith("float"):  # 1/36 is a fraction here, not integer division
                text = _float_literals(text, src)
            value = Expr(text, src)
            value.check_names(known)
            out.append(Argument(name, "scalar", dtype, "input", value=value))
            continue
        role = a.get("role", "input")
        if not isinstance(role, str) or role not in ("input", "output", "inout"):
            raise err(f"{key}.role", f"must be input, output or inout, got {role!r}")
        shape = a.get("shape")
        if not isinstance(shape, list) or not shape:
            raise err(f"{key}.shape", "a buffer needs a shape, e.g. [NZ, NY, NX]")
        if len(shape) > 8:
            raise err(f"{key}.shape", "at most 8 dimensions")
        shape_exprs = tuple(Expr(_expr_text(s, f"{key}.shape", err), src) for s in shape)
        for e in shape_exprs:
            e.check_names(known)
        init = a.get("init", "random" if role != "output" else "zeros")
        if not isinstance(init, str) or (
            init not in INITS and not init.startswith(("copy:", "values:"))
        ):
            raise err(
                f"{key}.init",
                f"unknown init {init!r}; allowed: {', '.join(INITS)}, copy:<arg>, "
                "values:<v0>,<v1>,...",
            )
        if init.startswith("values:"):
            init = _init_values(init, f"{key}.init", err)
        image_when = None
        if "image_when" in a:
            image_when = Expr(_expr_text(a["image_when"], f"{key}.image_when", err), src)
            image_when.check_names(known)
            if role != "input":
                raise err(f"{key}.image_when", "only input arrays can be images")
        pointer = a.get("pointer", "")
        if pointer and (not isinstance(pointer, str) or not POINTER_TYPE.fullmatch(pointer)):
            raise err(
                f"{key}.pointer",
                f"expected the OpenCL C type of the kernel's pointer (uchar, uint, ...), "
                f"got {pointer!r}",
            )
        out.append(
            Argument(name, "buffer", dtype, role, shape_exprs, init, None, image_when, pointer)  # type: ignore[arg-type]
        )
    buffers = {a.name for a in out if a.kind == "buffer"}
    for a in out:
        if a.init.startswith("copy:") and a.init[5:] not in buffers:
            raise err("arguments", f"{a.name}: init copies unknown argument {a.init[5:]!r}")
    return out


_LOCAL_KEYS = ("name", "kind", "dtype", "shape")


def _local_argument(
    a: Mapping[str, Any], key: str, dtype: str, err: Any, known: set[str]
) -> Argument:
    """``{name: sh, kind: local, dtype: float32, shape: ["(WX+2)*(WY+2)"]}``: a __local
    buffer the host sizes per launch, ``shape`` its elements (their product) as
    expressions of the sizes and the parameters; it holds no data."""
    extra = sorted((k for k in a if k not in _LOCAL_KEYS), key=str)
    if extra:
        raise err(
            f"{key}.{extra[0]}",
            f"a local argument holds no data (no role, init, value or image); its keys: "
            f"{', '.join(_LOCAL_KEYS)}",
        )
    shape = a.get("shape")
    if not isinstance(shape, list) or not shape:
        raise err(
            f"{key}.shape",
            "a local argument needs its size in elements, an expression of the sizes and "
            'the parameters, e.g. ["(WX+2)*(WY+2)"]',
        )
    if len(shape) > 8:
        raise err(f"{key}.shape", "at most 8 dimensions")
    exprs = tuple(Expr(_expr_text(s, f"{key}.shape", err), f"{key}.shape") for s in shape)
    for e in exprs:
        e.check_names(known)
    return Argument(str(a["name"]), "local", dtype, "input", exprs)


def _check_local_sizes(
    args: Sequence[Argument], sizes: Mapping[str, int], params: Sequence[Parameter], err: Any
) -> None:
    """Every local argument has at least one element at the problem size, with every
    parameter at its default where each has one (else where its expression reads the
    sizes only): a size of 0 would be refused by the driver at every launch."""
    env: dict[str, int] = dict(sizes)
    if all(p.default is not None for p in params):
        env.update({p.name: int(p.default) for p in params if p.default is not None})
    for i, a in enumerate(args):
        if a.kind != "local" or not all(e.names <= env.keys() for e in a.shape):
            continue
        try:
            count = math.prod(a.shape_for(env))
        except ExpressionError as exc:
            raise err(f"arguments[{i}].shape", exc.message) from None
        if count < 1:
            reads = set().union(*(e.names for e in a.shape)) - set(sizes)
            at = "at the problem size" + (" and the default configuration" if reads else "")
            raise err(
                f"arguments[{i}].shape",
                f"local argument {a.name} has {count} elements {at}; it needs at least one",
            )


def _parse_launch(raw: Any, err: Any, known: set[str]) -> Launch:
    if not isinstance(raw, dict) or "global" not in raw:
        raise err("launch", "needs global: [...] and usually local: [...]")
    extra = set(raw) - {"global", "local", "local_memory_bytes"}
    if extra:
        raise err(
            f"launch.{sorted(extra, key=str)[0]}",
            "unknown key; allowed: global, local, local_memory_bytes",
        )

    def dims(key: str) -> tuple[Expr, ...]:
        val = raw[key]
        if not isinstance(val, list) or not 1 <= len(val) <= 3:
            raise err(f"launch.{key}", "must be a list of 1 to 3 expressions")
        exprs = tuple(Expr(_expr_text(v, f"launch.{key}", err), f"launch.{key}") for v in val)
        if key == "global":  # (N + W - 1) / W * W: a multiple of W by construction
            exprs = tuple(_round_up_form(e) for e in exprs)
        for e in exprs:
            e.check_names(known)
        return exprs

    glob = dims("global")
    loc = dims("local") if raw.get("local") is not None else None
    if loc is not None and len(loc) != len(glob):
        raise err("launch.local", "must have as many dimensions as launch.global")
    lmb = None
    if raw.get("local_memory_bytes") is not None:
        lmb = Expr(
            _expr_text(raw["local_memory_bytes"], "launch.local_memory_bytes", err),
            "launch.local_memory_bytes",
        )
        lmb.check_names(known)
    return Launch(glob, loc, lmb)


def _parse_steps(raw: Any, err: Any, known: set[str], args: Sequence[Argument]) -> Steps | None:
    """``steps: {count: 8, per_launch: TB, swap: [src, dst]}``."""
    if raw is None:
        return None
    keys = {"count", "per_launch", "swap"}
    if not isinstance(raw, dict) or set(raw) - keys or "count" not in raw or "swap" not in raw:
        raise err("steps", "must be {count: N, per_launch: EXPR, swap: [INPUT, OUTPUT]}")
    count = raw["count"]
    if isinstance(count, bool) or not isinstance(count, int) or count < 1:
        raise err("steps.count", f"must be a positive whole number of steps, got {count!r}")
    per = Expr(_expr_text(raw.get("per_launch", 1), "steps.per_launch", err), "steps.per_launch")
    per.check_names(known)
    swap = raw["swap"]
    buffers = {a.name: a for a in args if a.kind == "buffer"}
    if (
        not isinstance(swap, list)
        or len(swap) != 2
        or not all(isinstance(n, str) and n in buffers for n in swap)
    ):
        raise err("steps.swap", f"must name two buffer arguments [input, output], got {swap!r}")
    a, b = buffers[swap[0]], buffers[swap[1]]
    if a.role != "input" or b.role != "output" or a.dtype != b.dtype:
        raise err(
            "steps.swap",
            f"{a.name} must be an input and {b.name} an output of the same element type",
        )
    return Steps(int(count), per, a.name, b.name)


def _parse_defines(raw: Any, err: Any, known: set[str]) -> tuple[tuple[str, Expr], ...]:
    """Macros tied to parameters (``block_size_x: WX``), passed as ``-D`` per configuration."""
    if raw is None:
        return ()
    if not isinstance(raw, dict):
        raise err("defines", "must map macro names to expressions of sizes and parameters")
    out: list[tuple[str, Expr]] = []
    for name, text in raw.items():
        if not str(name).isidentifier() or str(name) in known:
            raise err(f"defines.{name}", "must be a new identifier (not a size or parameter)")
        e = Expr(_expr_text(text, f"defines.{name}", err), f"defines.{name}")
        e.check_names(known)
        out.append((str(name), e))
    return tuple(out)


def _float_literals(text: str, source: str) -> str:
    """``text`` with integer literals written as floats, so it evaluates as C would for a
    ``float`` argument initialised from a fraction."""
    import ast

    try:
        tree = parse_ast(text.strip())
    except SyntaxError:
        return text  # Expr reports the syntax error with its position

    class Floats(ast.NodeTransformer):
        def visit_Constant(self, node: ast.Constant) -> ast.Constant:
            if isinstance(node.value, int) and not isinstance(node.value, bool):
                return ast.copy_location(ast.Constant(float(node.value)), node)
            return node

    return ast.unparse(Floats().visit(tree))


def _round_up_form(expr: Expr) -> Expr:
    """Rewrite ``(N + W - 1) / W * W`` as ``N + (W - N % W) % W``: the same value, with no
    division whose remainder the space would have to require to be zero."""
    import ast

    tree = parse_ast(expr.text.strip())

    def same(a: ast.AST, b: ast.AST) -> bool:
        return ast.dump(a) == ast.dump(b)

    def match(node: ast.expr) -> tuple[ast.expr, ast.expr] | None:
        if not (isinstance(node, ast.BinOp) and isinstance(node.op, ast.Mult)):
            return None
        for quotient, w in ((node.left, node.right), (node.right, node.left)):
            if not (
                isinstance(quotient, ast.BinOp) and isinstance(quotient.op, ast.Div | ast.FloorDiv)
            ):
                continue
            if not same(quotient.right, w):
                continue
            top = quotient.left  # N + W - 1, as (N + W) - 1
            if not (
                isinstance(top, ast.BinOp)
                and isinstance(top.op, ast.Sub)
                and isinstance(top.right, ast.Constant)
                and top.right.value == 1
                and isinstance(top.left, ast.BinOp)
                and isinstance(top.left.op, ast.Add)
            ):
                continue
            if same(top.left.right, w):
                return top.left.left, w
            if same(top.left.left, w):
                return top.left.right, w
        return None

    class RoundUp(ast.NodeTransformer):
        def visit_BinOp(self, node: ast.BinOp) -> ast.AST:
            found = match(node)
            if found is None:
                return self.generic_visit(node)
            n, w = (ast.unparse(x) for x in found)
            return parse_ast(f"({n}) + (({w}) - ({n}) % ({w})) % ({w})").body

    text = ast.unparse(RoundUp().visit(tree))
    return expr if text == ast.unparse(parse_ast(expr.text.strip())) else Expr(text, expr.source)


_REFERENCE_KEYS = ("python", "config", "none", "args", "rtol", "atol")


def _parse_reference(
    raw: Any,
    err: Any,
    pnames: set[str],
    base_dir: Path | None,
    trusted: Sequence[str],
) -> Reference:
    if raw is None:
        return Reference("none")
    if not isinstance(raw, dict):
        raise err("reference", "must be a mapping: {python: file.py:function} or {config: {...}}")
    extra = [k for k in raw if k not in _REFERENCE_KEYS]
    if extra:
        raise err(f"reference.{extra[0]}", f"unknown key; allowed: {', '.join(_REFERENCE_KEYS)}")
    rtol = _tolerance(raw.get("rtol"), "reference.rtol", err)
    atol = _tolerance(raw.get("atol"), "reference.atol", err)
    if "python" in raw:
        target = raw["python"]
        if not isinstance(target, str) or ":" not in target:
            raise err("reference.python", f"expected file.py:function, got {target!r}")
        file, _, func = target.rpartition(":")
        file = file.strip()
        if not func.isidentifier():
            raise err("reference.python", f"{func!r} is not a function name")
        args = raw.get("args") or {}
        if not isinstance(args, dict) or not all(
            isinstance(k, str) and k.isidentifier() for k in args
        ):
            raise err("reference.args", "must map keyword argument names to values")
        digest = hashlib.sha256()
        if file.endswith(".py"):
            if base_dir is None:
                raise err(
                    "reference.python",
                    "a reference file needs the description's folder; load the description "
                    "from its file",
                )
            folder = base_dir.resolve()
            full = (base_dir / file).resolve()
            if not full.is_relative_to(folder):
                raise err(
                    "reference.python",
                    f"reference file {file!r} lies outside the description's folder; a "
                    "reference must be a .py file beside the description",
                )
            if not full.exists():
                raise err("reference.python", f"reference file {file!r} not found")
            if not file_trusted(full, trusted):
                raise err(
                    "reference.python",
                    f"reference file {file!r} is Python code that would run with your "
                    "permissions, and it is not trusted; if you trust it, allow it with "
                    f"--trust-module {full} (or its folder; also ${TRUST_ENV})",
                )
            digest.update(_file_bytes(full, "reference.python", err))
            target = f"{full}:{func}"
        else:
            if not all(part.isidentifier() for part in file.split(".")):
                raise err(
                    "reference.python",
                    f"expected file.py:function or package.module:function, got {target!r}",
                )
            if not any(file == t or file.startswith(t + ".") for t in trusted):
                raise err(
                    "reference.python",
                    f"module {file!r} is not trusted as a reference: a Python reference is "
                    "code that runs. Put a .py file beside the description, or allow the "
                    f"module with --trust-module {file} (or ${TRUST_ENV})",
                )
            digest.update(_module_bytes(file, err))
            target = f"{file}:{func}"
        for name, value in sorted(args.items()):
            digest.update(f"{name}=".encode())
            if isinstance(value, str) and base_dir is not None:
                data = (base_dir / value).resolve()
                if data.is_file() and data.is_relative_to(base_dir.resolve()):
                    digest.update(_file_bytes(data, f"reference.args.{name}", err))
        return Reference(
            "python", target=target, args=args, rtol=rtol, atol=atol, digest=digest.hexdigest()
        )
    if "config" in raw:
        cfg = raw["config"]
        if not isinstance(cfg, dict):
            raise err("reference.config", "must map parameter names to values")
        config: dict[str, int] = {}
        for k, v in cfg.items():
            if k not in pnames:
                raise err(f"reference.config.{k}", f"unknown parameter {k!r}")
            if isinstance(v, bool) or not isinstance(v, int) or abs(v) > MAX_SIZE:
                raise err(f"reference.config.{k}", f"must be an integer, got {v!r}")
            config[str(k)] = v
        return Reference("config", config=config, rtol=rtol, atol=atol)
    if raw.get("none") is True or raw == {}:
        return Reference("none")
    raise err("reference", "give python: file.py:function or config: {...}")


def _tolerance(value: Any, key: str, err: Any) -> float | None:
    if value is None:
        return None
    if (
        isinstance(value, bool)
        or not isinstance(value, int | float)
        or not math.isfinite(value)
        or value < 0
    ):
        raise err(key, f"must be a non-negative number such as 1e-5, got {value!r}")
    return float(value)


def _file_bytes(path: Path, key: str, err: Any) -> bytes:
    try:
        with open(path, "rb") as fh:
            return fh.read()
    except OSError as exc:
        raise err(key, f"cannot read {path}: {exc.strerror or exc}") from None


def _module_bytes(module: str, err: Any) -> bytes:
    """The source of a trusted reference module, for the identity (not executed here
    beyond importing its parent packages)."""
    try:
        spec = importlib.util.find_spec(module)
    except (ImportError, ValueError) as exc:
        raise err("reference.python", f"cannot find module {module!r}: {exc}") from None
    if spec is None:
        raise err("reference.python", f"cannot find module {module!r}")
    origin = spec.origin
    if origin and os.path.isfile(origin):
        return _file_bytes(Path(origin), "reference.python", err)
    return module.encode()


def _expr_text(value: Any, key: str, err: Any) -> str:
    """An expression given in YAML: a string or a number (never a list, mapping, null)."""
    if isinstance(value, str | int | float):
        return str(value)
    raise err(key, f"expected an expression or a number, got {value!r}")


def _check_length(items: Any, key: str, err: Any) -> None:
    if isinstance(items, list | dict) and len(items) > MAX_LIST_ITEMS:
        raise err(key, f"{len(items):,} items; at most {MAX_LIST_ITEMS:,} are allowed")


def _init_values(init: str, key: str, err: Any) -> str:
    """``values:0.25,-1,0.5``: an array's contents, every one a finite number."""
    texts = init[len("values:") :].split(",")
    try:
        values = [float(t) for t in texts]
    except ValueError:
        raise err(key, f"values: expects numbers separated by commas, got {init[:80]!r}") from None
    if not all(math.isfinite(v) for v in values):
        raise err(key, "values: expects finite numbers")
    return init

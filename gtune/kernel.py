"""Tunable kernels: an OpenCL source plus its description (``kernel.yaml``).

The description says what gtune needs to tune and verify a kernel: the kernel function,
its arguments, the problem size, the tunable parameters and their domains, the kernel's
own constraints, launch geometry, static stencil features and how to get a reference
output. See ``docs/description.md`` for the format.

Everything here is plain data (no OpenCL): a :class:`TunableKernel` travels to worker
processes and, later, to other machines as a dictionary.
"""

from __future__ import annotations

import hashlib
import json
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Literal

import yaml

from gtune.exceptions import InputError
from gtune.expr import Expr, Value

Config = dict[str, int]
ArgKind = Literal["buffer", "scalar"]
Role = Literal["input", "output", "inout"]

DTYPES = (
    "float32",
    "float64",
    "int32",
    "uint32",
    "int64",
    "uint64",
    "uint8",
    "int8",
    "int16",
    "uint16",
)
INITS = ("random", "zeros", "ones", "arange", "random_int", "random_bits")


@dataclass(frozen=True)
class Domain:
    """The values one parameter may take, possibly depending on the problem size.

    ``kind`` is ``pow2`` (powers of two in [lo, hi]), ``range`` (lo, lo+step, ... <= hi)
    or ``values`` (an explicit list).
    """

    kind: Literal["pow2", "range", "values"]
    lo: Expr | None = None
    hi: Expr | None = None
    step: Expr | None = None
    items: tuple[Expr, ...] = ()

    def values(self, env: Mapping[str, Value]) -> list[int]:
        if self.kind == "values":
            return sorted({e.evaluate_int(env) for e in self.items})
        assert self.lo is not None and self.hi is not None
        lo, hi = self.lo.evaluate_int(env), self.hi.evaluate_int(env)
        if self.kind == "pow2":
            start = 1 << max(0, math.ceil(math.log2(max(lo, 1))))
            out = []
            v = start
            while v <= hi:
                out.append(v)
                v *= 2
            return out
        step = self.step.evaluate_int(env) if self.step is not None else 1
        if step <= 0:
            raise InputError(f"range step must be positive, got {step}")
        return list(range(lo, hi + 1, step))

    def names(self) -> frozenset[str]:
        exprs = [e for e in (self.lo, self.hi, self.step) if e is not None] + list(self.items)
        return frozenset().union(*(e.names for e in exprs)) if exprs else frozenset()


@dataclass(frozen=True)
class Parameter:
    name: str
    domain: Domain
    default: int | None = None
    doc: str = ""


@dataclass(frozen=True)
class Argument:
    """A kernel argument, in signature order."""

    name: str
    kind: ArgKind
    dtype: str
    role: Role = "input"
    shape: tuple[Expr, ...] = ()
    init: str = "random"
    value: Expr | None = None
    image_when: Expr | None = None

    def shape_for(self, env: Mapping[str, Value]) -> tuple[int, ...]:
        return tuple(e.evaluate_int(env) for e in self.shape)


@dataclass(frozen=True)
class Launch:
    global_size: tuple[Expr, ...]
    local_size: tuple[Expr, ...] | None
    local_memory_bytes: Expr | None = None

    def sizes(self, env: Mapping[str, Value]) -> tuple[tuple[int, ...], tuple[int, ...] | None]:
        glob = tuple(e.evaluate_int(env) for e in self.global_size)
        loc = (
            None if self.local_size is None else tuple(e.evaluate_int(env) for e in self.local_size)
        )
        return glob, loc


@dataclass(frozen=True)
class Reference:
    """How to obtain the correct output.

    ``python``: ``file.py:function`` beside the description, or ``package.module:function``
    importable; the function receives a dict of initial arrays (numpy, by argument name,
    outputs included with their initial contents), a dict of sizes and a dict of scalar
    values, plus ``args`` as keyword arguments, and returns a dict of output arrays.
    ``config``: the output of this configuration is taken as correct. ``none``: outputs
    are not verified.
    """

    kind: Literal["python", "config", "none"]
    target: str = ""
    config: Mapping[str, int] = field(default_factory=dict)
    args: Mapping[str, Any] = field(default_factory=dict)
    rtol: float | None = None
    atol: float | None = None


@dataclass(frozen=True)
class TunableKernel:
    name: str
    source: str
    sizes: Mapping[str, int]
    arguments: tuple[Argument, ...]
    parameters: tuple[Parameter, ...]
    constraints: tuple[Expr, ...]
    launch: Launch
    reference: Reference
    techniques: Mapping[str, tuple[Expr, ...]] = field(default_factory=dict)
    features: Mapping[str, Any] = field(default_factory=dict)
    flops_per_point: float = 0.0
    build_options: tuple[str, ...] = ()
    derived: tuple[tuple[str, Expr], ...] = ()
    source_path: str = ""
    description_path: str = ""
    raw: Mapping[str, Any] = field(default_factory=dict, repr=False, compare=False)

    # -- names --------------------------------------------------------------------
    @property
    def parameter_names(self) -> list[str]:
        return [p.name for p in self.parameters]

    def parameter(self, name: str) -> Parameter:
        for p in self.parameters:
            if p.name == name:
                return p
        raise KeyError(name)

    @property
    def label(self) -> str:
        return self.description_path or self.source_path or self.name

    def default_config(self) -> Config | None:
        if all(p.default is not None for p in self.parameters):
            return {p.name: int(p.default) for p in self.parameters if p.default is not None}
        return None

    # -- per-configuration geometry -------------------------------------------------
    def env(self, config: Mapping[str, int]) -> dict[str, Value]:
        env: dict[str, Value] = dict(self.sizes)
        env.update(config)
        return env

    def launch_sizes(
        self, config: Mapping[str, int]
    ) -> tuple[tuple[int, ...], tuple[int, ...] | None]:
        return self.launch.sizes(self.env(config))

    def uses_image(self, arg: Argument, config: Mapping[str, int]) -> bool:
        return arg.image_when is not None and bool(arg.image_when.evaluate(self.env(config)))

    def defines(self, config: Mapping[str, int]) -> list[str]:
        """Compiler options: every size, parameter and derived macro as ``-DNAME=value``."""
        opts = [f"-D{k}={v}" for k, v in self.sizes.items()]
        opts += [f"-D{k}={config[k]}" for k in sorted(config)]
        env = self.env(config)
        opts += [f"-D{k}={e.evaluate_int(env)}" for k, e in self.derived]
        return opts + list(self.build_options)

    @property
    def inferred(self) -> list[str]:
        """What plain mode guessed about this kernel (shown to the user before tuning)."""
        notes = self.raw.get("inferred") or []
        return [str(n) for n in notes] if isinstance(notes, list) else [str(notes)]

    # -- metrics ------------------------------------------------------------------
    def bytes_moved(self) -> int:
        """Bytes of every array read once and written once: the bandwidth yardstick."""
        total = 0
        env = dict(self.sizes)
        for a in self.arguments:
            if a.kind == "buffer":
                n = math.prod(a.shape_for(env))
                total += n * _itemsize(a.dtype) * (2 if a.role == "inout" else 1)
        return total

    def points(self) -> int:
        """Output elements computed per launch (for GFLOP/s)."""
        env = dict(self.sizes)
        outs = [a for a in self.arguments if a.kind == "buffer" and a.role != "input"]
        return max((math.prod(a.shape_for(env)) for a in outs), default=0)

    # -- identity -----------------------------------------------------------------
    def identity(self) -> str:
        """Hash of the source, the description and the problem size: a store key."""
        h = hashlib.sha256()
        h.update(self.source.encode())
        h.update(json.dumps(self.raw, sort_keys=True, default=str).encode())
        h.update(json.dumps(dict(self.sizes), sort_keys=True).encode())
        return h.hexdigest()[:20]

    def with_sizes(self, sizes: Mapping[str, int]) -> TunableKernel:
        unknown = set(sizes) - set(self.sizes)
        if unknown:
            raise InputError(
                f"unknown problem size name {sorted(unknown)[0]!r}; "
                f"the kernel's sizes are {', '.join(self.sizes)}",
                source=self.label,
            )
        merged = dict(self.sizes)
        merged.update({k: int(v) for k, v in sizes.items()})
        return replace(self, sizes=merged)

    def to_dict(self) -> dict[str, Any]:
        """Plain data from which :func:`from_dict` rebuilds the kernel elsewhere."""
        return {
            "raw": dict(self.raw),
            "source": self.source,
            "sizes": dict(self.sizes),
            "source_path": self.source_path,
            "description_path": self.description_path,
        }


def from_dict(data: Mapping[str, Any]) -> TunableKernel:
    kernel = parse_description(
        data["raw"],
        source=data["source"],
        label=data["description_path"] or data["source_path"],
        source_path=data["source_path"],
        base_dir=Path(data["description_path"]).parent if data["description_path"] else None,
    )
    return kernel.with_sizes(data["sizes"])


def _itemsize(dtype: str) -> int:
    sizes = {"float64": 8, "int64": 8, "uint64": 8, "int16": 2, "uint16": 2, "int8": 1, "uint8": 1}
    return sizes.get(dtype, 4)


# ---------------------------------------------------------------------------------
# Loading


def load_kernel(path: str | Path, sizes: Mapping[str, int] | None = None) -> TunableKernel:
    """Load ``kernel.cl`` with its description, or a description naming its source."""
    p = Path(path)
    if not p.exists():
        raise InputError("file not found", source=p)
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
    src_path = (desc_path.parent / str(src_name)).resolve()
    if not src_path.exists():
        raise InputError(f"kernel source {src_name!r} not found", source=f"{desc_path}: source")
    kernel = parse_description(
        raw,
        source=src_path.read_text(),
        label=str(desc_path),
        source_path=str(src_path),
        base_dir=desc_path.parent,
    )
    return kernel.with_sizes(sizes) if sizes else kernel


def read_yaml(path: Path) -> Any:
    try:
        with open(path) as fh:
            return yaml.safe_load(fh)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f"{path}:{mark.line + 1}" if mark is not None else str(path)
        raise InputError(f"malformed YAML: {getattr(exc, 'problem', exc)}", source=where) from None
    except OSError as exc:
        raise InputError(f"cannot read: {exc.strerror}", source=path) from None


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
}


def parse_description(
    raw: Mapping[str, Any],
    *,
    source: str,
    label: str,
    source_path: str = "",
    base_dir: Path | None = None,
) -> TunableKernel:
    """Validate a description mapping; every error names ``label`` and the key."""

    def err(key: str, message: str) -> InputError:
        return InputError(message, source=f"{label}: {key}")

    unknown = set(raw) - _TOP_KEYS
    if unknown:
        raise err(sorted(unknown)[0], f"unknown key; allowed: {', '.join(sorted(_TOP_KEYS))}")
    for key in ("kernel", "problem", "arguments", "launch"):
        if key not in raw:
            raise err(key, "missing required key")
    name = raw["kernel"]
    if not isinstance(name, str) or not name.isidentifier():
        raise err("kernel", f"must be the kernel function's name, got {name!r}")

    problem = raw["problem"]
    if not isinstance(problem, dict) or not problem:
        raise err("problem", "must map size names to integers, e.g. {NX: 256, NY: 256}")
    sizes: dict[str, int] = {}
    for k, v in problem.items():
        if not str(k).isidentifier() or not isinstance(v, int) or isinstance(v, bool) or v <= 0:
            raise err(f"problem.{k}", f"must be a positive integer, got {v!r}")
        sizes[str(k)] = v

    params = _parse_parameters(raw.get("parameters") or {}, err)
    pnames = {p.name for p in params}
    clash = pnames & set(sizes)
    if clash:
        raise err("parameters", f"{sorted(clash)[0]!r} is both a parameter and a size")
    known = pnames | set(sizes)
    for p in params:
        bad = sorted(p.domain.names() - set(sizes))
        if bad:
            raise err(
                f"parameters.{p.name}",
                f"domain may only use problem sizes ({', '.join(sizes)}); got {bad[0]!r} "
                "(express dependencies between parameters as constraints)",
            )

    args = _parse_arguments(raw["arguments"], err, known)
    constraints: list[Expr] = []
    craw = raw.get("constraints") or []
    if not isinstance(craw, list):
        raise err("constraints", "must be a list of expressions")
    from gtune.device import LIMIT_NAMES

    for i, c in enumerate(craw):
        e = Expr(str(c), source=f"{label}: constraints[{i}]")
        e.check_names(known | set(LIMIT_NAMES) | {"LOCAL_MEM_BYTES"})
        constraints.append(e)

    derived = _parse_defines(raw.get("defines"), err, known)
    launch = _parse_launch(raw["launch"], err, known)
    reference = _parse_reference(raw.get("reference"), err, pnames, base_dir)

    techniques: dict[str, tuple[Expr, ...]] = {}
    traw = raw.get("techniques") or {}
    if not isinstance(traw, dict):
        raise err("techniques", "must map technique names to lists of constraints")
    for tname, tcons in traw.items():
        items = tcons if isinstance(tcons, list) else [tcons]
        exprs = tuple(Expr(str(c), source=f"{label}: techniques.{tname}") for c in items)
        for e in exprs:
            e.check_names(known)
        techniques[str(tname)] = exprs

    features = raw.get("features") or {}
    if not isinstance(features, dict):
        raise err("features", "must be a mapping of feature names to values")
    flops = raw.get("flops_per_point", features.get("flops_per_point", 0))
    if not isinstance(flops, int | float):
        raise err("flops_per_point", f"must be a number, got {flops!r}")
    opts = raw.get("build_options") or []
    if isinstance(opts, str):
        opts = opts.split()
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
        build_options=tuple(str(o) for o in opts),
        derived=derived,
        source_path=source_path,
        description_path=label if label.endswith((".yaml", ".yml")) else "",
        raw=dict(raw),
    )


def _parse_parameters(raw: Any, err: Any) -> list[Parameter]:
    if not isinstance(raw, dict):
        raise err("parameters", "must map parameter names to domains")
    out: list[Parameter] = []
    for name, spec in raw.items():
        key = f"parameters.{name}"
        if not str(name).isidentifier():
            raise err(key, "parameter names must be identifiers")
        src = f"{key}"
        default = None
        doc = ""
        if isinstance(spec, list):
            domain = Domain("values", items=tuple(Expr(str(v), src) for v in spec))
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
            if kind == "values":
                domain = Domain("values", items=tuple(Expr(str(v), src) for v in val))
            else:
                if len(val) not in ((2,) if kind == "pow2" else (2, 3)):
                    raise err(
                        f"{key}.{kind}", f"expected [lo, hi{', step' if kind == 'range' else ''}]"
                    )
                exprs = [Expr(str(v), src) for v in val]
                domain = Domain(
                    kind,  # type: ignore[arg-type]
                    lo=exprs[0],
                    hi=exprs[1],
                    step=exprs[2] if len(exprs) > 2 else None,
                )
        else:
            domain = Domain("values", items=(Expr(str(spec), src),))
        if default is not None and (not isinstance(default, int) or isinstance(default, bool)):
            raise err(f"{key}.default", f"must be an integer, got {default!r}")
        out.append(Parameter(str(name), domain, default, doc))
    return out


def _parse_arguments(raw: Any, err: Any, known: set[str]) -> list[Argument]:
    if not isinstance(raw, list) or not raw:
        raise err("arguments", "must be a list of arguments in signature order")
    out: list[Argument] = []
    seen: set[str] = set()
    for i, a in enumerate(raw):
        key = f"arguments[{i}]"
        if not isinstance(a, dict) or "name" not in a:
            raise err(key, "each argument needs at least a name")
        allowed = {"name", "kind", "dtype", "role", "shape", "init", "value", "image_when"}
        extra = set(a) - allowed
        if extra:
            raise err(
                f"{key}.{sorted(extra)[0]}", f"unknown key; allowed: {', '.join(sorted(allowed))}"
            )
        name = str(a["name"])
        if name in seen:
            raise err(key, f"duplicate argument {name!r}")
        seen.add(name)
        kind = a.get("kind", "scalar" if "value" in a else "buffer")
        if kind not in ("buffer", "scalar"):
            raise err(f"{key}.kind", f"must be buffer or scalar, got {kind!r}")
        dtype = str(a.get("dtype", "float32"))
        if dtype not in DTYPES:
            raise err(f"{key}.dtype", f"unknown dtype {dtype!r}; allowed: {', '.join(DTYPES)}")
        src = f"{key}"
        if kind == "scalar":
            if "value" not in a:
                raise err(f"{key}.value", "a scalar argument needs a value")
            text = str(a["value"])
            if dtype.startswith("float"):  # 1/36 is a fraction here, not integer division
                text = _float_literals(text, src)
            value = Expr(text, src)
            value.check_names(known)
            out.append(Argument(name, "scalar", dtype, "input", value=value))
            continue
        role = a.get("role", "input")
        if role not in ("input", "output", "inout"):
            raise err(f"{key}.role", f"must be input, output or inout, got {role!r}")
        shape = a.get("shape")
        if not isinstance(shape, list) or not shape:
            raise err(f"{key}.shape", "a buffer needs a shape, e.g. [NZ, NY, NX]")
        shape_exprs = tuple(Expr(str(s), src) for s in shape)
        for e in shape_exprs:
            e.check_names(known)
        init = str(a.get("init", "random" if role != "output" else "zeros"))
        if init not in INITS and not init.startswith("copy:"):
            raise err(
                f"{key}.init", f"unknown init {init!r}; allowed: {', '.join(INITS)}, copy:<arg>"
            )
        image_when = None
        if "image_when" in a:
            image_when = Expr(str(a["image_when"]), src)
            image_when.check_names(known)
            if role != "input":
                raise err(f"{key}.image_when", "only input arrays can be images")
        out.append(Argument(name, "buffer", dtype, role, shape_exprs, init, None, image_when))
    for a in out:
        if a.init.startswith("copy:") and a.init[5:] not in seen:
            raise err("arguments", f"{a.name}: init copies unknown argument {a.init[5:]!r}")
    return out


def _parse_launch(raw: Any, err: Any, known: set[str]) -> Launch:
    if not isinstance(raw, dict) or "global" not in raw:
        raise err("launch", "needs global: [...] and usually local: [...]")
    extra = set(raw) - {"global", "local", "local_memory_bytes"}
    if extra:
        raise err(
            f"launch.{sorted(extra)[0]}", "unknown key; allowed: global, local, local_memory_bytes"
        )

    def dims(key: str) -> tuple[Expr, ...]:
        val = raw[key]
        if not isinstance(val, list) or not 1 <= len(val) <= 3:
            raise err(f"launch.{key}", "must be a list of 1 to 3 expressions")
        exprs = tuple(Expr(str(v), f"launch.{key}") for v in val)
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
        lmb = Expr(str(raw["local_memory_bytes"]), "launch.local_memory_bytes")
        lmb.check_names(known)
    return Launch(glob, loc, lmb)


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
        e = Expr(str(text), f"defines.{name}")
        e.check_names(known)
        out.append((str(name), e))
    return tuple(out)


def _float_literals(text: str, source: str) -> str:
    """``text`` with integer literals written as floats, so it evaluates as C would for a
    ``float`` argument initialised from a fraction."""
    import ast

    try:
        tree = ast.parse(text.strip(), mode="eval")
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

    tree = ast.parse(expr.text.strip(), mode="eval")

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
            return ast.parse(f"({n}) + (({w}) - ({n}) % ({w})) % ({w})", mode="eval").body

    text = ast.unparse(RoundUp().visit(tree))
    return (
        expr
        if text == ast.unparse(ast.parse(expr.text.strip(), mode="eval"))
        else Expr(text, expr.source)
    )


def _parse_reference(raw: Any, err: Any, pnames: set[str], base_dir: Path | None) -> Reference:
    if raw is None:
        return Reference("none")
    if not isinstance(raw, dict):
        raise err("reference", "must be a mapping: {python: file.py:function} or {config: {...}}")
    rtol = raw.get("rtol")
    atol = raw.get("atol")
    if "python" in raw:
        target = str(raw["python"])
        if ":" not in target:
            raise err("reference.python", f"expected file.py:function, got {target!r}")
        file = target.split(":", 1)[0]
        args = raw.get("args") or {}
        if not isinstance(args, dict):
            raise err("reference.args", "must be a mapping of keyword arguments")
        if file.endswith(".py") and base_dir is not None:
            full = (base_dir / file).resolve()
            if not full.exists():
                raise err("reference.python", f"reference file {file!r} not found")
            target = f"{full}:{target.split(':', 1)[1]}"
        return Reference("python", target=target, args=args, rtol=rtol, atol=atol)
    if "config" in raw:
        cfg = raw["config"]
        if not isinstance(cfg, dict):
            raise err("reference.config", "must map parameter names to values")
        bad = set(cfg) - pnames
        if bad:
            raise err("reference.config", f"unknown parameter {sorted(bad)[0]!r}")
        return Reference(
            "config", config={str(k): int(v) for k, v in cfg.items()}, rtol=rtol, atol=atol
        )
    if raw.get("none") is True or raw == {}:
        return Reference("none")
    raise err("reference", "give python: file.py:function or config: {...}")


def canonical_config(config: Mapping[str, int]) -> str:
    """The configuration as stable JSON text: a store key."""
    return json.dumps({k: int(config[k]) for k in sorted(config)}, separators=(",", ":"))


def domain_values(kernel: TunableKernel) -> dict[str, list[int]]:
    """Every parameter's unpruned values (domains that depend on other parameters use
    their widest reading: those dependencies belong in constraints)."""
    env: dict[str, Value] = dict(kernel.sizes)
    out: dict[str, list[int]] = {}
    for p in kernel.parameters:
        try:
            out[p.name] = p.domain.values(env)
        except Exception as exc:
            raise InputError(
                f"domain of {p.name} cannot be evaluated from the problem size: {exc}",
                source=kernel.label,
            ) from None
        if not out[p.name]:
            raise InputError(
                f"domain of {p.name} is empty", source=f"{kernel.label}: parameters.{p.name}"
            )
    return out


def sequence_str(values: Sequence[int]) -> str:
    return "x".join(str(v) for v in values)

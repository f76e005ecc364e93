"""From a kernel description and a device to named constraints and a MiniZinc model.

The platform rules follow the OpenCL standard (seed 002, section 2.1): a work-group no
larger than the device allows, in total and per dimension; a global size that is a
positive whole multiple of the local size; at least one work-group per compute unit
(optional); local memory within the device's; image arguments within the image limits
and only on devices with images. The kernel's own constraints and the parameter domains
complete the model. Every rule has a name, shared by the MiniZinc text and by Python.
"""

from __future__ import annotations

import ast
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from gtune.device import LIMIT_NAMES, DeviceLimits
from gtune.escape import mzn_comment, mzn_string
from gtune.exceptions import ExpressionError, GtuneError, InputError, UnsatisfiableSpace
from gtune.expr import Expr, Value, parse_ast, substitute
from gtune.kernel import TunableKernel, domain_values
from gtune.space.constraints import NamedConstraint

LOCAL_MEM_BYTES = "LOCAL_MEM_BYTES"

# Words MiniZinc reserves; a user name equal to one is written with a prefix.
_MZN_RESERVED = frozenset(
    [
        "ann",
        "annotation",
        "any",
        "array",
        "bool",
        "case",
        "constraint",
        "default",
        "diff",
        "div",
        "else",
        "elseif",
        "endif",
        "enum",
        "false",
        "float",
        "function",
        "if",
        "in",
        "include",
        "int",
        "intersect",
        "let",
        "list",
        "maximize",
        "minimize",
        "mod",
        "not",
        "of",
        "op",
        "opt",
        "output",
        "par",
        "predicate",
        "record",
        "satisfy",
        "set",
        "solve",
        "string",
        "subset",
        "superset",
        "symdiff",
        "test",
        "then",
        "true",
        "tuple",
        "type",
        "union",
        "var",
        "where",
        "xor",
    ]
)


def mzn_name(name: str) -> str:
    """A user name as a MiniZinc identifier (reserved words and leading '_' avoided)."""
    return f"gt_{name}" if name in _MZN_RESERVED or name.startswith("_") else name


@dataclass(frozen=True)
class SpaceModel:
    """Everything that decides a space: domains, sizes, limits and named constraints."""

    kernel_name: str
    kernel_label: str
    parameters: list[str]
    domains: dict[str, list[int]]
    sizes: dict[str, int]
    limits: dict[str, int]
    constraints: list[NamedConstraint]
    device_name: str = ""
    work_group_size: Expr | None = None
    options: dict[str, bool] = field(default_factory=dict)

    @property
    def env(self) -> dict[str, Value]:
        """Constant names the constraints may read: problem sizes and device limits."""
        out: dict[str, Value] = dict(self.limits)
        out.update(self.sizes)
        return out

    def size_unpruned(self) -> int:
        return math.prod(len(v) for v in self.domains.values())

    def involved(self, names: Sequence[str]) -> list[NamedConstraint]:
        """The constraints that read any of ``names``."""
        wanted = set(names)
        return [c for c in self.constraints if c.expr.names & wanted]


def build_model(
    kernel: TunableKernel,
    device: DeviceLimits,
    *,
    min_groups: bool = True,
    extra: Sequence[NamedConstraint] = (),
) -> SpaceModel:
    """The named constraints of ``kernel`` on ``device`` (unknown names rejected)."""
    domains = domain_values(kernel)
    limits = device.limit_values()
    params = kernel.parameter_names
    known = set(params) | set(kernel.sizes) | set(LIMIT_NAMES)
    local_bytes = _local_bytes(kernel)
    rules: list[NamedConstraint] = []
    rules += _platform_rules(kernel, local_bytes, min_groups)
    for i, c in enumerate(kernel.constraints):
        expr = substitute(c, {LOCAL_MEM_BYTES: local_bytes})
        rules.append(NamedConstraint(f"constraints[{i}]: {c.text}", expr, "kernel"))
    rules += list(extra)
    env: dict[str, Value] = {**limits, **kernel.sizes}
    kept: list[NamedConstraint] = []
    for rule in rules:
        try:
            rule.expr.check_names(known)
            rule.expr.check_defined(env)
            fixed = rule.expr.names <= env.keys()
            value = rule.expr.evaluate(env) if fixed else None
        except ExpressionError as exc:
            raise ExpressionError(
                f"constraint {rule.name!r}: {exc.message}", source=kernel.label
            ) from None
        if fixed and not value:
            shown = ", ".join(f"{n}={env[n]}" for n in sorted(rule.expr.names))
            raise UnsatisfiableSpace(
                f"constraint {rule.name!r} is always false"
                + (f" ({shown}, on device {device.name!r})" if shown else "")
                + (f": {rule.doc}: {rule.expr.text}" if rule.origin == "platform" else ""),
                source=kernel.label,
                hint=(
                    "the kernel computes in double precision (float64) and the device has no "
                    "cl_khr_fp64: choose a device with doubles or a float32 stencil"
                    if "DOUBLE_SUPPORT" in rule.expr.names
                    else "a rounded-up global size is written (N + D - 1) / D * D"
                    if rule.name.startswith("global_size_integral")
                    else ""
                ),
            )
        if fixed and rule.origin != "platform":
            continue  # always true: nothing for the solver to decide
        kept.append(rule)
    rules = kept
    wg = None
    if kernel.launch.local_size is not None:
        wg = _product(kernel.launch.local_size, "launch.local")
    return SpaceModel(
        kernel_name=kernel.name,
        kernel_label=kernel.label,
        parameters=params,
        domains=domains,
        sizes=dict(kernel.sizes),
        limits=limits,
        constraints=rules,
        device_name=device.name,
        work_group_size=wg,
        options={"min_groups": min_groups},
    )


def _platform_rules(
    kernel: TunableKernel, local_bytes: Expr, min_groups: bool
) -> list[NamedConstraint]:
    glob = kernel.launch.global_size
    loc = kernel.launch.local_size
    rules: list[NamedConstraint] = []

    def add(name: str, text: str, doc: str) -> None:
        rules.append(NamedConstraint(name, Expr(text, f"{kernel.label}: launch"), "platform", doc))

    for d, g in enumerate(glob):
        for k, (num, den) in enumerate(_divisions(g)):
            suffix = f"[{d}]" if k == 0 else f"[{d}.{k}]"
            add(
                f"global_size_integral{suffix}",
                f"({num}) % ({den}) == 0",
                f"global size {d} ({g.text}) must be a whole number",
            )
        add(f"global_size_positive[{d}]", f"({g.text}) >= 1", f"global size {d} must be >= 1")
    if loc is not None:
        for d, (g, lsz) in enumerate(zip(glob, loc, strict=True)):
            add(f"local_size_positive[{d}]", f"({lsz.text}) >= 1", "local sizes must be >= 1")
            add(
                f"work_item_size[{d}]",
                f"({lsz.text}) <= MAX_WORK_ITEM_SIZE_{d}",
                f"CL_DEVICE_MAX_WORK_ITEM_SIZES[{d}]",
            )
            add(
                f"global_multiple_of_local[{d}]",
                f"({g.text}) % ({lsz.text}) == 0",
                "the global size must be a multiple of the local size",
            )
        wg = _product(loc, "launch.local")
        add("work_group_size", f"{wg.text} <= MAX_WORK_GROUP_SIZE", "CL_DEVICE_MAX_WORK_GROUP_SIZE")
        if min_groups:
            groups = " * ".join(
                f"(({g.text}) / ({lsz.text}))" for g, lsz in zip(glob, loc, strict=True)
            )
            if kernel.steps is None:
                add(
                    "min_work_groups",
                    f"{groups} >= COMPUTE_UNITS",
                    "at least one work-group per compute unit (turn off with --no-min-groups)",
                )
            else:
                # a time-stepping kernel: 31/32 of the units (one each below 32), for
                # its temporal blocking's walk of the whole z range saves more than a
                # few idle units give (heat3d, 8 steps: 128 work-groups on the H200's
                # 132 SMs, 2.4 % faster than 256 that recompute planes at chunk ends)
                add(
                    "min_work_groups",
                    f"({groups}) * 32 >= COMPUTE_UNITS * 31",
                    "work-groups for at least 31/32 of the compute units, the kernel "
                    "time-stepping (turn off with --no-min-groups)",
                )
    # a kernel's own __local arrays may take what the device gives those; with __local
    # arguments, all of it what the driver reports
    if any(arg.kind == "local" for arg in kernel.arguments):
        add("local_memory", f"({local_bytes.text}) <= LOCAL_MEM_SIZE", "CL_DEVICE_LOCAL_MEM_SIZE")
    else:
        add(
            "local_memory",
            f"({local_bytes.text}) <= LOCAL_MEM_STATIC",
            "the local memory a kernel's own __local arrays may take (measured; else "
            "CL_DEVICE_LOCAL_MEM_SIZE)",
        )
    if kernel.launch.local_memory_bytes is not None:
        add(
            "local_memory_not_negative",
            f"({local_bytes.text}) >= 0",
            "launch.local_memory_bytes must not be negative",
        )
    for arg in kernel.arguments:
        if arg.kind == "local":
            add(
                f"local_argument_positive[{arg.name}]",
                " * ".join(f"({e.text})" for e in arg.shape) + " >= 1",
                f"the local argument {arg.name} has at least one element",
            )
        if arg.image_when is None:
            continue
        when = arg.image_when.text
        add(
            f"image_support[{arg.name}]",
            f"not ({when}) or IMAGE_SUPPORT == 1",
            "images need CL_DEVICE_IMAGE_SUPPORT",
        )
        bounds = _image_bounds(arg.shape, kernel.label, arg.name)
        add(
            f"image_size[{arg.name}]",
            f"not ({when}) or ({bounds})",
            "the image must fit the device's image limits",
        )
    return rules


def _local_bytes(kernel: TunableKernel) -> Expr:
    """The local memory one work-group takes: ``launch.local_memory_bytes`` plus every
    ``local`` argument's bytes (the __local buffers the host sizes per launch)."""
    base = kernel.launch.local_memory_bytes or Expr("0", "launch.local_memory_bytes")
    locals_ = [
        " * ".join([*(f"({e.text})" for e in arg.shape), str(arg.itemsize)])
        for arg in kernel.arguments
        if arg.kind == "local"
    ]
    if not locals_:
        return base
    return Expr(" + ".join([f"({base.text})", *locals_]), "launch.local_memory_bytes")


def _image_bounds(shape: Sequence[Expr], label: str, name: str) -> str:
    """Shape (slowest to fastest dimension) against the 2D or 3D image limits."""
    dims = [f"({e.text})" for e in reversed(shape)]  # width first
    if len(dims) == 1:
        limits = ["IMAGE2D_MAX_WIDTH"]
    elif len(dims) == 2:
        limits = ["IMAGE2D_MAX_WIDTH", "IMAGE2D_MAX_HEIGHT"]
    elif len(dims) == 3:
        limits = ["IMAGE3D_MAX_WIDTH", "IMAGE3D_MAX_HEIGHT", "IMAGE3D_MAX_DEPTH"]
    else:
        raise InputError(f"argument {name}: an image has 1 to 3 dimensions", source=label)
    return " and ".join(f"{d} <= {lim}" for d, lim in zip(dims, limits, strict=True))


def _product(exprs: Sequence[Expr], source: str) -> Expr:
    return Expr(" * ".join(f"({e.text})" for e in exprs), source)


def _divisions(expr: Expr) -> list[tuple[str, str]]:
    """Numerator and denominator text of every integer division in ``expr`` that must be
    exact: a division rounded up on purpose, ``(N + D - 1) / D``, need not be."""
    tree = parse_ast(expr.text.strip()).body
    return [
        (ast.unparse(n.left), ast.unparse(n.right))
        for n in ast.walk(tree)
        if isinstance(n, ast.BinOp)
        and isinstance(n.op, ast.Div | ast.FloorDiv)
        and not _ceil_division(n)
    ]


def _ceil_division(node: ast.BinOp) -> bool:
    """Whether ``node`` is ``(N + D - 1) / D`` (or ``(D + N - 1) / D``,
    ``(N + (D - 1)) / D``, or for a number D, ``(N + 13) / 14``): the number of D-sized
    pieces that cover N."""
    den = ast.dump(node.right)
    top = node.left
    if not isinstance(top, ast.BinOp):
        return False

    def is_one(x: ast.expr) -> bool:
        return isinstance(x, ast.Constant) and x.value == 1

    if isinstance(top.op, ast.Sub) and is_one(top.right) and isinstance(top.left, ast.BinOp):
        add = top.left
        return isinstance(add.op, ast.Add) and den in (ast.dump(add.left), ast.dump(add.right))
    if isinstance(top.op, ast.Add):
        for part in (top.left, top.right):
            if (
                isinstance(part, ast.BinOp)
                and isinstance(part.op, ast.Sub)
                and is_one(part.right)
                and ast.dump(part.left) == den
            ):
                return True
        # numbers written out: (N + 13) / 14, as launch code often has them
        d = node.right
        if isinstance(d, ast.Constant) and type(d.value) is int and d.value > 0:
            return any(
                isinstance(part, ast.Constant) and part.value == d.value - 1
                for part in (top.left, top.right)
            )
    return _covers(node)


def _covers(node: ast.BinOp) -> bool:
    """Whether ``A / D`` is ``(N + D - 1) / D`` in another spelling, such as
    ``(NY + WX - 3) / (WX - 2)``: ``A - D + 1`` does not change with the names in ``D``
    (checked at sampled values; an expression gtune cannot evaluate is no cover)."""
    import random

    den_names = {n.id for n in ast.walk(node.right) if isinstance(n, ast.Name)}
    if not den_names:
        return False
    try:
        rest = Expr(f"({ast.unparse(node.left)}) - ({ast.unparse(node.right)}) + 1", "cover")
        others = rest.names - den_names
        rng = random.Random(0)
        for _ in range(4):
            env: dict[str, Value] = {n: rng.randint(64, 4096) for n in sorted(others)}
            seen = {
                rest.evaluate({**env, **{n: rng.randint(3, 64) for n in sorted(den_names)}})
                for _ in range(4)
            }
            if len(seen) != 1:
                return False
    except (GtuneError, ArithmeticError, ValueError, TypeError):
        return False
    return True


# -- MiniZinc text -------------------------------------------------------------------


def model_mzn(model: SpaceModel, *, output: bool = True) -> str:
    """The model: device limits declared (values in the device's .dzn), sizes, domains,
    every named constraint, and an output of one line of integers per solution."""
    lines = [
        f"% gtune tuning space of kernel {mzn_comment(model.kernel_name)} "
        f"({mzn_comment(model.kernel_label)})",
        "% Solve with: minizinc --solver gecode -O2 --all-solutions MODEL.mzn DEVICE.dzn",
        "",
        "% device limits (values in the device's .dzn file)",
    ]
    lines += [f"int: {mzn_name(n)};" for n in LIMIT_NAMES]
    lines += ["", "% problem size"]
    lines += [f"int: {mzn_name(n)} = {v};" for n, v in model.sizes.items()]
    lines += ["", "% tunable parameters and their domains"]
    for p in model.parameters:
        values = ", ".join(str(v) for v in model.domains[p])
        lines.append(f"var {{{values}}}: {mzn_name(p)};")
    for origin, title in (("platform", "OpenCL platform rules"), ("kernel", "kernel constraints")):
        rules = [c for c in model.constraints if c.origin == origin]
        if rules:
            lines += ["", f"% {title}"]
        lines += [_constraint_line(c) for c in rules]
    others = [c for c in model.constraints if c.origin not in ("platform", "kernel")]
    if others:
        lines += ["", "% further restrictions"]
        lines += [_constraint_line(c) for c in others]
    order = ", ".join(mzn_name(p) for p in model.parameters)
    lines += ["", f"solve :: int_search([{order}], input_order, indomain_min) satisfy;"]
    if output:
        shown = ' ++ " " ++ '.join(f"show({mzn_name(p)})" for p in model.parameters)
        lines.append(f'output [{shown} ++ "\\n"];')
    return "\n".join(lines) + "\n"


def _constraint_line(c: NamedConstraint) -> str:
    try:
        body = c.expr.to_minizinc_bool(mzn_name)
    except ExpressionError as exc:
        raise ExpressionError(
            f"constraint {c.name!r}: {exc.message}", source=c.expr.source
        ) from None
    return f"constraint :: {mzn_string(c.name)} {body};"


def device_dzn(limits: Mapping[str, int], device_name: str = "") -> str:
    """The device's limits as a MiniZinc data file (one per device, seed 002)."""
    head = [f"% OpenCL device limits: {mzn_comment(device_name)}"] if device_name else []
    return "\n".join(head + [f"{mzn_name(n)} = {int(limits[n])};" for n in LIMIT_NAMES]) + "\n"


# Gecode's FlatZinc integers are 32-bit: a constraint whose intermediate values can
# exceed that range (a local-memory product over a CPU's 4096-wide work-item limits,
# say) cannot be handed to it. Such constraints are applied after enumeration instead,
# with the same vectorised evaluator the space's queries use.
SOLVER_INT_MAX = 2**31 - 1


def _interval(node: ast.expr, bounds: Mapping[str, tuple[float, float]]) -> tuple[float, float]:
    """Bounds of ``node``'s value over the domains (wide when not known)."""
    wide = (-math.inf, math.inf)
    if isinstance(node, ast.Constant):
        if isinstance(node.value, bool):
            return (float(node.value), float(node.value))
        if isinstance(node.value, int | float):
            return (float(node.value), float(node.value))
        return wide
    if isinstance(node, ast.Name):
        return bounds.get(node.id, wide)
    if isinstance(node, ast.UnaryOp):
        lo, hi = _interval(node.operand, bounds)
        if isinstance(node.op, ast.USub):
            return (-hi, -lo)
        if isinstance(node.op, ast.Not):
            return (0.0, 1.0)
        return (lo, hi)
    if isinstance(node, ast.BoolOp | ast.Compare):
        children = node.values if isinstance(node, ast.BoolOp) else [node.left, *node.comparators]
        for child in children:
            lo, hi = _interval(child, bounds)
            if max(abs(lo), abs(hi)) > SOLVER_INT_MAX:
                return wide
        return (0.0, 1.0)
    if isinstance(node, ast.IfExp):
        a, b = _interval(node.body, bounds), _interval(node.orelse, bounds)
        _interval(node.test, bounds)
        return (min(a[0], b[0]), max(a[1], b[1]))
    if isinstance(node, ast.BinOp):
        a, b = _interval(node.left, bounds), _interval(node.right, bounds)
        if isinstance(node.op, ast.Add):
            return (a[0] + b[0], a[1] + b[1])
        if isinstance(node.op, ast.Sub):
            return (a[0] - b[1], a[1] - b[0])
        if isinstance(node.op, ast.Mult):
            with_inf = [x * y for x in a for y in b if not (x == 0 or y == 0)] or [0.0]
            products = [*with_inf, 0.0] if 0 in a or 0 in b else with_inf
            return (min(products), max(products))
        if isinstance(node.op, ast.Div | ast.FloorDiv | ast.Mod):
            m = max(abs(a[0]), abs(a[1]))
            return (-m, m)
        return wide
    if isinstance(node, ast.Call):
        args = [_interval(x, bounds) for x in node.args]
        if not args:
            return wide
        return (min(x[0] for x in args), max(x[1] for x in args))
    return wide


def fits_solver(expr: Expr, model: SpaceModel) -> bool:
    """Whether every intermediate value of ``expr`` stays within Gecode's integers."""
    bounds: dict[str, tuple[float, float]] = {
        n: (float(v), float(v)) for n, v in model.env.items() if isinstance(v, int | float)
    }
    for p, values in model.domains.items():
        if values:
            bounds[p] = (float(min(values)), float(max(values)))
    try:
        tree = parse_ast(expr.text.strip()).body
    except SyntaxError:
        return True
    worst = [0.0]

    def visit(node: ast.AST) -> None:
        if isinstance(node, ast.expr):
            lo, hi = _interval(node, bounds)
            worst[0] = max(worst[0], abs(lo), abs(hi))
        for child in ast.iter_child_nodes(node):
            visit(child)

    visit(tree)
    return worst[0] <= SOLVER_INT_MAX


def split_for_solver(model: SpaceModel) -> tuple[SpaceModel, list[NamedConstraint]]:
    """The model Gecode can take, and the constraints to apply after enumeration."""
    kept: list[NamedConstraint] = []
    after: list[NamedConstraint] = []
    for c in model.constraints:
        (kept if fits_solver(c.expr, model) else after).append(c)
    if not after:
        return model, []
    from dataclasses import replace

    return replace(model, constraints=kept), after

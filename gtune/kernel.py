"""Tunable kernels: the model of an OpenCL source plus its description.

:class:`TunableKernel` holds what gtune needs to tune and verify a kernel: the kernel
function, its arguments, the problem size, the tunable parameters and their domains,
the kernel's own constraints, launch geometry, static stencil features and how to get
a reference output. Reading a description (``kernel.yaml``, ``docs/description.md``)
and its trust rules live in :mod:`gtune.description`.

Everything here is plain data (no OpenCL): a :class:`TunableKernel` travels to worker
processes and, later, to other machines as a dictionary.
"""

from __future__ import annotations

import hashlib
import json
import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Literal

from gtune.exceptions import ExpressionError, InputError
from gtune.expr import Expr, Value

Config = dict[str, int]
ArgKind = Literal["buffer", "scalar", "local"]
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

MAX_DOMAIN_VALUES = 100_000
"""Most values one parameter's domain may hold (a range of a billion would never finish)."""
MAX_SIZE = 2**31 - 1
"""Largest problem size and parameter value: kernels see them as ``int`` macros."""


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
            return _bounded(sorted({e.evaluate_int(env) for e in self.items}))
        if self.lo is None or self.hi is None:
            raise InputError(f"a {self.kind} domain needs both bounds")
        lo, hi = self.lo.evaluate_int(env), self.hi.evaluate_int(env)
        if self.kind == "pow2":
            out = []
            v = 1
            while v < lo:
                v *= 2
                if v > MAX_SIZE:
                    break
            while v <= hi and v <= MAX_SIZE:
                out.append(v)
                v *= 2
            return _bounded(out)
        step = self.step.evaluate_int(env) if self.step is not None else 1
        if step <= 0:
            raise InputError(f"range step must be positive, got {step}")
        if hi >= lo and (hi - lo) // step + 1 > MAX_DOMAIN_VALUES:
            raise InputError(
                f"range {lo}..{hi} step {step} holds {(hi - lo) // step + 1:,} values; "
                f"a domain may hold at most {MAX_DOMAIN_VALUES:,} (use pow2 or a coarser step)"
            )
        return _bounded(list(range(lo, hi + 1, step)))

    def names(self) -> frozenset[str]:
        exprs = [e for e in (self.lo, self.hi, self.step) if e is not None] + list(self.items)
        return frozenset().union(*(e.names for e in exprs)) if exprs else frozenset()


def _bounded(values: list[int]) -> list[int]:
    for v in values:
        if abs(v) > MAX_SIZE:
            raise InputError(f"value {v} is out of range (at most {MAX_SIZE} in magnitude)")
    return values


@dataclass(frozen=True)
class Parameter:
    name: str
    domain: Domain
    default: int | None = None
    doc: str = ""


POINTER_TYPE = re.compile(r"(u?(char|short|int|long)|float|double)(2|4|8|16)?")
"""A buffer's ``pointer`` (its pointer's type in the kernel where the buffer holds
elements of another): an OpenCL C element type, or a vector of one."""


@dataclass(frozen=True)
class Argument:
    """A kernel argument, in signature order: a ``buffer`` (an array of ``shape``), a
    ``scalar`` (``value``), or a ``local`` buffer (a ``__local`` pointer the host sizes
    per launch and passes no data for: ``shape`` is its elements, expressions of the
    sizes and the parameters, since a tile follows the work-group)."""

    name: str
    kind: ArgKind
    dtype: str
    role: Role = "input"
    shape: tuple[Expr, ...] = ()
    init: str = "random"
    value: Expr | None = None
    image_when: Expr | None = None
    # a buffer's pointer type in the kernel where it is not ``dtype``'s (``uchar``: the
    # buffer holds ``dtype`` elements the kernel addresses in bytes, as OpenCV's do)
    pointer: str = ""
    # a scalar of a vector type (``uint2 dims``): its lanes' values (``value`` is None)
    lanes: tuple[Expr, ...] = ()

    def shape_for(self, env: Mapping[str, Value]) -> tuple[int, ...]:
        return tuple(e.evaluate_int(env) for e in self.shape)

    @property
    def itemsize(self) -> int:
        """Bytes per element."""
        return _itemsize(self.dtype)

    def local_bytes(self, env: Mapping[str, Value]) -> int:
        """A ``local`` argument's size in bytes at ``env`` (sizes and a configuration):
        its elements (the product of its shape) times its element's size."""
        return math.prod(self.shape_for(env)) * self.itemsize


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
class Steps:
    """Time stepping: the application runs ``count`` steps; one launch advances
    ``per_launch`` of them (an expression of the parameters, such as ``TB``), so a
    measurement is ``count / per_launch`` launches. Launch k + 1 reads what launch k
    wrote: the buffers ``input`` and ``output`` swap between launches (ping-pong), and
    the output after the last launch is verified. Times are reported per step."""

    count: int
    per_launch: Expr
    input: str
    output: str

    def launches(self, env: Mapping[str, Value]) -> int:
        per = self.per_launch.evaluate_int(env)
        if per < 1 or self.count % per:
            raise ValueError(f"{self.count} steps are not a whole number of launches of {per}")
        return self.count // per


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
    digest: str = field(default="", compare=False)
    """Hash of the reference's code and the data files it names: part of the identity."""


@dataclass(frozen=True)
class TunableKernel:
    """A kernel with its description: the OpenCL source, the tunable parameters and
    their domains, constraints, techniques, problem sizes, launch geometry, the default
    configuration and the reference to verify against. Made by
    :func:`~gtune.description.load_kernel`; ``with_sizes`` gives the same kernel at
    another problem size."""

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
    steps: Steps | None = None
    source_path: str = ""
    description_path: str = ""
    raw: Mapping[str, Any] = field(default_factory=dict, repr=False, compare=False)
    headers_digest: str = ""  # the headers the source includes (gtune.includes)

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

    @property
    def store_name(self) -> str:
        """The kernel's name in the result store: its file (definition, description or
        source) without suffixes, with ``:function`` where the OpenCL function is named
        otherwise. Template kernels all call their function ``stencil``; their files
        tell them apart."""
        path = self.description_path or self.source_path
        if not path:
            return self.name
        stem = Path(path).name
        for suffix in (".yaml", ".yml", ".cl"):
            if stem.endswith(suffix):
                stem = stem[: -len(suffix)]
                break
        stem = stem.removesuffix(".stencil") or self.name
        return stem if stem == self.name else f"{stem}:{self.name}"

    @property
    def temporal_techniques(self) -> list[str]:
        """The techniques that advance several time steps per launch: those whose
        constraints require ``TB > 1`` (the stencil template's ``temporal``,
        ``temporal-tile`` and ``temporal-zreg``)."""
        return [
            name
            for name, rules in self.techniques.items()
            if any(r.text.replace(" ", "") == "TB>1" for r in rules)
        ]

    def default_config(self) -> Config | None:
        if all(p.default is not None for p in self.parameters):
            return {p.name: int(p.default) for p in self.parameters if p.default is not None}
        return None

    def with_defaults(self, config: Mapping[str, int]) -> Config:
        """``config`` with every parameter it lacks at its default, where one is given (a
        configuration written before the kernel gained the parameter)."""
        missing = {
            p.name: int(p.default)
            for p in self.parameters
            if p.name not in config and p.default is not None
        }
        return {**missing, **config}

    def outside_domain(self, config: Mapping[str, int]) -> list[str]:
        """``NAME=value`` of every value of ``config`` outside its parameter's domain
        (domains may depend on the problem size and on other parameters)."""
        env = self.env(config)
        bad: list[str] = []
        for p in self.parameters:
            if p.name not in config:
                continue
            try:
                allowed = p.domain.values(env)
            except (InputError, ExpressionError, KeyError):
                continue  # a domain that cannot be evaluated here is the space's to report
            if config[p.name] not in allowed:
                bad.append(f"{p.name}={config[p.name]}")
        return bad

    # -- per-configuration geometry -------------------------------------------------
    def env(self, config: Mapping[str, int]) -> dict[str, Value]:
        env: dict[str, Value] = dict(self.sizes)
        env.update(config)
        return env

    def launch_sizes(
        self, config: Mapping[str, int]
    ) -> tuple[tuple[int, ...], tuple[int, ...] | None]:
        return self.launch.sizes(self.env(config))

    def launches(self, config: Mapping[str, int]) -> int:
        """Launches of one measurement: 1, or the steps over the steps per launch."""
        return 1 if self.steps is None else self.steps.launches(self.env(config))

    @property
    def step_count(self) -> int:
        """Time steps of one measurement (times and bandwidths are per step)."""
        return 1 if self.steps is None else self.steps.count

    def local_arguments(self, config: Mapping[str, int]) -> dict[str, int]:
        """Every ``local`` argument's size in bytes at ``config``: the ``__local`` buffers
        the host sizes per launch (``clSetKernelArg(k, i, bytes, NULL)``)."""
        env = self.env(config)
        return {a.name: a.local_bytes(env) for a in self.arguments if a.kind == "local"}

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
        """A store key: the hash of everything a result depends on besides the device.

        The source, the headers it includes (their contents), the description (build
        options included), the problem size and the reference's code and data: fixing a
        wrong reference or changing a header changes the identity, so results measured
        with the old one are not served again.
        """
        h = hashlib.sha256()
        h.update(self.source.encode("utf-8", "surrogatepass"))
        h.update(json.dumps(self.raw, sort_keys=True, default=str).encode())
        h.update(json.dumps(dict(self.sizes), sort_keys=True).encode())
        if self.reference.digest:
            h.update(b"reference:" + self.reference.digest.encode())
        if self.headers_digest:
            h.update(b"headers:" + self.headers_digest.encode())
        return h.hexdigest()[:20]

    def with_sizes(self, sizes: Mapping[str, int]) -> TunableKernel:
        unknown = set(sizes) - set(self.sizes)
        if unknown:
            raise InputError(
                f"unknown problem size name {sorted(unknown)[0]!r}; "
                f"the kernel's sizes are {', '.join(self.sizes)}",
                source=self.label,
            )
        for k, v in sizes.items():
            if isinstance(v, bool) or not isinstance(v, int) or not 0 < v <= MAX_SIZE:
                raise InputError(
                    f"problem size {k}={v!r} must be an integer from 1 to {MAX_SIZE}",
                    source=self.label,
                )
        merged = dict(self.sizes)
        merged.update({k: int(v) for k, v in sizes.items()})
        return replace(self, sizes=merged)

    def to_dict(self) -> dict[str, Any]:
        """Plain data from which :func:`gtune.description.from_dict` rebuilds the kernel
        elsewhere."""
        return {
            "raw": dict(self.raw),
            "source": self.source,
            "sizes": dict(self.sizes),
            "source_path": self.source_path,
            "description_path": self.description_path,
            "trusted_module": _reference_trust(self.reference),
            # as built here: options given in memory (dataclasses.replace) travel too
            "build_options": list(self.build_options),
        }


def _reference_trust(reference: Reference) -> str:
    """What a rebuilt kernel must trust to run its reference (module or file)."""
    if reference.kind != "python":
        return ""
    return reference.target.rpartition(":")[0]


def _itemsize(dtype: str) -> int:
    sizes = {"float64": 8, "int64": 8, "uint64": 8, "int16": 2, "uint16": 2, "int8": 1, "uint8": 1}
    return sizes.get(dtype, 4)


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
        except (InputError, ArithmeticError, ValueError) as exc:
            cause = exc.message if isinstance(exc, InputError) else str(exc)
            raise InputError(
                f"domain of {p.name} cannot be evaluated from the problem size: {cause}",
                source=f"{kernel.label}: parameters.{p.name}",
            ) from None
        if not out[p.name]:
            raise InputError(
                f"domain of {p.name} is empty", source=f"{kernel.label}: parameters.{p.name}"
            )
    return out


def scalar_values(kernel: TunableKernel) -> dict[str, int | float]:
    """Every scalar argument's value at the kernel's problem size, typed as the kernel
    takes it (float or int); a vector scalar's lanes by :func:`lane_names`."""
    import numpy as np  # only where values are needed: the kernel model stays light

    env = dict(kernel.sizes)
    out: dict[str, int | float] = {}
    for arg in kernel.arguments:
        if arg.kind != "scalar":
            continue
        exprs = arg.lanes or ((arg.value,) if arg.value is not None else ())
        names = lane_names(arg.name, len(arg.lanes)) if arg.lanes else [arg.name]
        for name, e in zip(names, exprs, strict=True):
            value = e.evaluate(env)
            out[name] = float(value) if np.dtype(arg.dtype).kind == "f" else int(value)
    return out


def lane_names(name: str, lanes: int) -> list[str]:
    """The names of a vector scalar's lanes, as OpenCL C names them: ``dims.x``,
    ``dims.y`` (up to 4 lanes), else ``dims.s0`` ... ``dims.sf``."""
    if lanes <= 4:
        return [f"{name}.{c}" for c in "xyzw"[:lanes]]
    return [f"{name}.s{k:x}" for k in range(lanes)]


def sequence_str(values: Sequence[int]) -> str:
    return "x".join(str(v) for v in values)

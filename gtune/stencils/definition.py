"""Stencil definitions: the linear stencil a user writes in ``NAME.stencil.yaml``.

A definition says what a stencil computes, never how: dimensions and element type, the
input fields and the output, the update as a sum of ``coefficient * field[offset]`` terms
plus a constant, the boundary handling and, optionally, the kernel interface the rendered
kernel must present. ``gtune.stencils.render`` turns it into the optimizing template and a
description; :meth:`StencilDefinition.reference` is its numpy reference. The format is
documented in ``docs/stencils.md``.

Everything is validated up front; every error names the file and the key path
(``heat.stencil.yaml: terms[3].offset: expected 3 integers for dims 3, got [1, 0]``).
Coefficient expressions are products of numbers and names, read by a small parser here,
never by ``eval``.
"""

from __future__ import annotations

import difflib
import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from fractions import Fraction
from pathlib import Path
from typing import Any, Literal

import numpy as np
import yaml

from gtune.escape import check_file_name
from gtune.exceptions import ExpressionError, InputError
from gtune.expr import Expr
from gtune.inputs import load_yaml, read_text
from gtune.kernel import POINTER_TYPE

SUFFIX = ".stencil.yaml"
DTYPES = ("float32", "float64")
BOUNDARIES = ("interior", "clamp", "zero", "wrap", "reflect", "symmetric")
MAPPED_BOUNDARIES = {"wrap": 1, "reflect": 2, "symmetric": 3}
"""The boundaries that write every point and read a neighbour beyond an edge at the
point they map it to (the template's ``BORDER``): ``wrap`` the other edge's (periodic),
``reflect`` mirrored about the edge point (-1 reads 1: OpenCV's ``BORDER_REFLECT_101``,
numpy's ``reflect``), ``symmetric`` mirrored with the edge repeated (-1 reads 0:
``BORDER_REFLECT``, numpy's ``symmetric``)."""
PAD_MODES = {"clamp": "edge", "zero": "constant", **{b: b for b in MAPPED_BOUNDARIES}}
"""numpy.pad's mode for each boundary that writes every point."""
RIM_KEEP, RIM_COPY = "keep", "copy"
"""``rim``: the interior boundary's rim keeps the output's prior contents, or takes the
primary field's value at the point; a number writes that constant."""
BAND_RADIUS, BAND_REACH = "radius", "reach"
BANDS = (BAND_RADIUS, BAND_REACH)
"""``band``: the points the interior boundary writes per axis. ``radius``: at least the
radius (the largest |offset|) from each edge, the same on both sides; ``reach``: every
point whose taps all lie inside the array, ``[max(-min offset, 0), N - max(max offset,
0))``, as one-sided (upwind, forward-difference) codes write."""
MAX_STEPS = 1_000_000
"""Most time steps a definition may ask for."""
MAX_OFFSET = 16
"""Largest |offset| along an axis: the template's halo grows with it."""
MAX_PAD = 64
"""Largest pad along an axis of a padded field."""

Offset = tuple[int, int, int]
ArgKind = Literal["field", "output", "coefficient", "size", "ignored", "weights", "local"]
MAX_WEIGHTS = 4096
"""Most entries of a weights array."""

_IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")
_ENTRY = re.compile(r"([A-Za-z_][A-Za-z0-9_]*)\[(\d+)\]\Z")  # coeff[7]: a weights entry
_DECIMAL = re.compile(r"[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?\Z")
_RATIONAL = re.compile(r"([+-]?\d+)\s*/\s*(\d+)\Z")
_CTYPE = {"float32": "float", "float64": "double"}
_NP: dict[str, type[np.floating[Any]]] = {"float32": np.float32, "float64": np.float64}
SIZE_TYPES = ("int", "uint", "long", "ulong")
IGNORED_TYPES = (*SIZE_TYPES, "short", "ushort", "char", "uchar", "float", "double")

_TOP = (
    "name",
    "doc",
    "dims",
    "dtype",
    "boundary",
    "rim",
    "band",
    "fields",
    "output",
    "inplace",
    "coefficients",
    "terms",
    "constant",
    "values",
    "steps",
    "storage",
    "output_storage",
    "convert",
    "pad",
    "weights",
    "weights_fixed",
    "kernel",
    "original",
)
_TERM_KEYS = ("field", "offset", "coefficient")
_KERNEL_KEYS = ("name", "arguments")
_ARG_KEYS = ("name", "type", "size", "unit", "ignored", "value", "local", "shape", "pointer")


@dataclass(frozen=True)
class Coefficient:
    """``factor * prod(names) / prod(divisors)``: a number, a run-time scalar, or a
    product and quotient of those (``step/Cap``, ``dt*alpha/(dx*dx)``; a name repeated
    is a power).

    ``names`` and ``divisors`` are sorted, so equal expressions compare equal.
    """

    factor: float = 1.0
    names: tuple[str, ...] = ()
    divisors: tuple[str, ...] = ()

    @property
    def is_number(self) -> bool:
        return not self.names and not self.divisors

    @property
    def is_zero(self) -> bool:
        return self.factor == 0.0

    @property
    def scalars(self) -> tuple[str, ...]:
        """Every name it reads, numerator and denominator."""
        return self.names + self.divisors

    def value(self, values: Mapping[str, float]) -> float:
        """The coefficient's value in double precision."""
        out = float(self.factor)
        for n in self.names:
            out *= float(values[n])
        for n in self.divisors:
            out /= float(values[n])
        return out

    def typed_value(self, values: Mapping[str, float], dtype: str) -> np.floating[Any]:
        """The value as the kernel computes it: in ``dtype``, factor first, then each
        name in order, then divided by the product of the divisors (the order
        :meth:`render` writes)."""
        t = _NP[dtype]
        if not self.names:
            out = t(self.factor)
        else:
            out = t(values[self.names[0]]) if self.factor == 1.0 else t(self.factor)
            rest = self.names[1:] if self.factor == 1.0 else self.names
            for n in rest:
                out = t(out * t(values[n]))
        if self.divisors:
            den = t(values[self.divisors[0]])
            for n in self.divisors[1:]:
                den = t(den * t(values[n]))
            out = t(out / den)
        return out

    def render(self, rename: Mapping[str, str] | None = None, dtype: str | None = None) -> str:
        """An OpenCL expression: ``((REAL)0.5*cc)``, ``(cc)``, ``((REAL)0.25)``,
        ``(dt*alpha/(dx*dx))``.

        With ``dtype`` a number alone is a typed literal (``0.25f`` for float32, ``0.25``
        for float64), as the template's constant weights have always been written.
        """
        names = [_renamed(n, rename or {}) for n in self.names]
        divisors = [_renamed(n, rename or {}) for n in self.divisors]
        if not names and not divisors:
            if dtype is not None:
                return literal(self.factor, dtype)
            return f"((REAL){_number(self.factor)})"
        if not names:
            head = f"(REAL){_number(self.factor)}"
        elif self.factor == 1.0:
            head = "*".join(names)
        else:
            head = f"(REAL){_number(self.factor)}*" + "*".join(names)
        if divisors:
            head += "/(" + "*".join(divisors) + ")"
        return f"({head})"

    def text(self) -> float | int | str:
        """The definition-file form: a YAML number, ``"0.5*cc"`` or ``"dt/(dx*dx)"``."""
        if self.is_number:
            return _yaml_number(self.factor)
        if not self.names:
            head = _number(self.factor).removesuffix(".0")
        elif self.factor == 1.0:
            head = "*".join(self.names)
        else:
            head = f"{_number(self.factor)}*" + "*".join(self.names)
        if len(self.divisors) == 1:
            head += "/" + self.divisors[0]
        elif self.divisors:
            head += "/(" + "*".join(self.divisors) + ")"
        return head

    def __str__(self) -> str:
        return str(self.text())


def _renamed(name: str, rename: Mapping[str, str]) -> str:
    """A factor's C name: ``coeff[7]`` with its array renamed."""
    entry = _ENTRY.match(name)
    if name in rename:  # a fixed weight: its value
        return rename[name]
    if entry:
        return f"{rename.get(entry.group(1), entry.group(1))}[{entry.group(2)}]"
    return rename.get(name, name)


def weight_entries(weights: Mapping[str, Sequence[float]]) -> dict[str, float]:
    """``{"coeff[0]": w0, ...}``: every entry of weights arrays, by its factor name."""
    return {f"{n}[{i}]": float(v) for n, vs in weights.items() for i, v in enumerate(vs)}


def literal(value: float, dtype: str) -> str:
    """A typed OpenCL literal that holds ``value`` rounded to ``dtype``."""
    text = _number(value)
    return f"{text}f" if dtype == "float32" else text


def _number(value: float) -> str:
    text = repr(float(value))
    if "e" not in text and "." not in text and "n" not in text:
        text += ".0"
    return text


def _yaml_number(value: float) -> float | int:
    v = float(value)
    if v.is_integer() and abs(v) < 2**53:
        return int(v)
    return v


@dataclass(frozen=True)
class Term:
    """``coefficient * field[p + offset]``; ``offset`` is ``(dx, dy, dz)``, x fastest."""

    field: str
    offset: Offset
    coefficient: Coefficient

    @property
    def is_centre(self) -> bool:
        return self.offset == (0, 0, 0)


@dataclass(frozen=True)
class KernelArg:
    """One argument of the rendered kernel, in order.

    ``kind``: a ``field`` (input buffer), the ``output`` buffer, a run-time
    ``coefficient``, an integer ``size`` (``axis`` x/y/z: its value is NX/NY/NZ, divided
    by ``unit``: a kernel of float4 pointers takes its row width in float4s, unit 4), an
    ``ignored`` scalar (accepted and unused; ``value`` is what gtune passes) or a
    ``local`` buffer (``__local type *``, accepted and unused: the original's tile the
    host sizes per launch; ``shape`` is its elements, expressions of the sizes and the
    template's work-group sizes ``WX``, ``WY``, ``WZ``, what gtune passes). ``type``
    is the OpenCL C type (a local buffer's: its element type). ``pointer``: a field's
    or the output's pointer type in the original where the buffer holds elements of
    another (``uchar``: addressed in bytes); the tuned kernel declares it so.
    """

    name: str
    kind: ArgKind  # "weights": an array of weights (terms read its entries, coeff[7])
    type: str
    axis: str | None = None  # a vector of sizes (uint2): its lanes' axes, "x,y"
    value: float | int | tuple[float | int, ...] | None = None  # a vector's: its lanes
    unit: int = 1
    shape: tuple[str, ...] = ()
    pointer: str = ""

    @property
    def size_value(self) -> str | list[str]:
        """A size argument's value: an expression of the problem size (a vector of
        sizes, ``uint2 dims`` with ``size: [x, y]``: one per lane)."""
        sizes = [{"x": "NX", "y": "NY", "z": "NZ"}[a] for a in (self.axis or "x").split(",")]
        values = [n if self.unit == 1 else f"{n} / {self.unit}" for n in sizes]
        return values if "," in (self.axis or "") else values[0]


@dataclass(frozen=True)
class StencilDefinition:
    """A linear stencil: ``out[p] = constant + sum(c_k * field_k[p + offset_k])``."""

    name: str
    doc: str
    dims: int
    dtype: str
    boundary: str
    fields: tuple[str, ...]
    output: str
    coefficients: tuple[str, ...]
    terms: tuple[Term, ...]
    constant: Coefficient
    values: dict[str, float]
    kernel_name: str
    arguments: tuple[KernelArg, ...]
    original: dict[str, Any] | None = None
    source: str = field(default="", compare=False)
    steps: int = 1
    """Time steps the application runs: step k + 1 reads step k's output as its primary
    field (the other fields stay fixed)."""
    pads: dict[str, Offset] = field(default_factory=dict)
    """Padded fields: the field is stored with this many extra points (x, y, z) on
    each side of every axis, and ``field[p + offset]`` reads the stored array at
    ``p + pad + offset`` (a convolution's input padded by the filter's half-width)."""
    weights: dict[str, tuple[float, ...]] = field(default_factory=dict)
    """Weights arrays, each with the values the definition's own reference uses: the
    kernel takes each as an argument and its terms read its entries (``coeff[7]``)."""
    weights_fixed: bool = False
    """The weights are these values: the rendered kernel bakes them in as numbers (it
    still takes the arrays, and ignores them)."""
    storage: str = ""
    """Integer elements (``uint8`` ...): the fields' and the output's element type; the
    arithmetic stays in ``dtype`` and each result is stored through ``convert``
    (:mod:`gtune.stencils.elements`). Empty: the elements are ``dtype``."""
    convert: str = ""
    output_storage: str = ""
    """The output's own element type where it differs from the fields' (``storage``):
    another integer type (``int16`` gradients of ``uint8`` pixels), stored through
    ``convert``, or ``dtype`` itself (float results, no conversion). Empty: the output's
    elements are the fields'."""
    rim: str = RIM_KEEP
    """With the interior boundary, what the rim (the points closer to an edge than the
    radius) holds: ``keep`` (the output's prior contents), ``copy`` (the primary field's
    value at the point) or a number's text (that constant)."""
    band: str = BAND_RADIUS
    """With the interior boundary, which points are written per axis (:data:`BANDS`):
    ``radius`` (the same margin, the radius, on both sides) or ``reach`` (each side's
    margin is how far the offsets reach that way: a one-sided stencil writes up to the
    edge it does not read beyond)."""
    inplace: bool = False
    """The output is one of the fields, updated in place (``hz = hz - 0.7*(...)``): read
    at the point written only, one argument of the kernel, one step per launch."""

    @property
    def out_storage(self) -> str:
        """The output's element type (numpy name): ``output_storage``, else the fields'."""
        return self.output_storage or self.storage or self.dtype

    @property
    def out_integer(self) -> bool:
        """The output's elements are integers: each result stored through ``convert``."""
        return self.out_storage != self.dtype

    def stored(self, acc: np.ndarray) -> np.ndarray:
        """``acc`` (in ``dtype``) as the kernel stores it in the output."""
        if not self.out_integer:
            return acc
        from gtune.stencils.elements import to_storage

        return to_storage(acc, self.out_storage, self.convert)

    @property
    def rim_constant(self) -> float | None:
        """The constant the rim is written with, or None (``keep`` or ``copy``)."""
        return None if self.rim in (RIM_KEEP, RIM_COPY) else float(self.rim)

    # -- shape ------------------------------------------------------------------------
    @property
    def radius(self) -> tuple[int, int, int]:
        """Radius per axis (x, y, z) over the terms of every field."""
        return (
            max(abs(t.offset[0]) for t in self.terms),
            max(abs(t.offset[1]) for t in self.terms),
            max(abs(t.offset[2]) for t in self.terms),
        )

    @property
    def margins(self) -> tuple[Offset, Offset]:
        """The interior's margins (x, y, z): how many points below and above along each
        axis are not written (:attr:`band`); with ``radius`` both are the radius."""
        if self.band == BAND_REACH:
            return reach_of([t.offset for t in self.terms])
        return self.radius, self.radius

    @property
    def primary_field(self) -> str:
        """The first field with a non-centre offset (the first field if none has one):
        the field the data-loading techniques optimise."""
        for f in self.fields:
            if any(t.field == f and not t.is_centre for t in self.terms):
                return f
        return self.fields[0]

    def terms_of(self, name: str) -> tuple[Term, ...]:
        return tuple(t for t in self.terms if t.field == name)

    @property
    def secondary_fields(self) -> tuple[str, ...]:
        return tuple(f for f in self.fields if f != self.primary_field)

    @property
    def shape_names(self) -> tuple[str, ...]:
        """Array shape as size names, slowest axis first."""
        return ("NZ", "NY", "NX") if self.dims == 3 else ("NY", "NX")

    def pad_of(self, name: str) -> Offset:
        """The pad (x, y, z) around field ``name``; (0, 0, 0) for an unpadded one."""
        return self.pads.get(name, (0, 0, 0))

    def field_shape_names(self, name: str) -> list[str]:
        """The stored shape of field ``name`` as expressions, slowest axis first
        (``["NY+6", "NX+6"]`` for a pad of 3)."""
        pad = list(reversed(self.pad_of(name)[: self.dims]))
        return [n if p == 0 else f"{n}+{2 * p}" for n, p in zip(self.shape_names, pad, strict=True)]

    @property
    def ctype(self) -> str:
        return _CTYPE[self.dtype]

    @property
    def itemsize(self) -> int:
        return 8 if self.dtype == "float64" else 4

    # -- semantics ----------------------------------------------------------------------
    def all_values(
        self,
        values: Mapping[str, float] | None = None,
        arrays: Mapping[str, np.ndarray] | None = None,
    ) -> dict[str, float]:
        """The value of every factor name: the coefficients' (``values``, else the
        definition's) and the weights arrays' entries (from ``arrays`` where it holds
        them, else the definition's)."""
        out = weight_entries(self.weights)
        for n in self.weights:
            if arrays is not None and n in arrays:
                out.update(weight_entries({n: np.asarray(arrays[n]).ravel().tolist()}))
        out.update(self.values if values is None else values)
        return out

    def reference(
        self,
        inputs: Mapping[str, np.ndarray],
        out_initial: np.ndarray,
        values: Mapping[str, float] | None = None,
    ) -> np.ndarray:
        """The output the kernel must produce, computed in the element type.

        Terms accumulate in file order from zero, then the constant is added. With
        ``interior``, points closer to an edge than the radius (with ``band: reach``,
        than the offsets reach towards it) keep ``out_initial``; with
        ``clamp``, every point is written and neighbour indices are clamped per axis; with
        ``zero``, every point is written and a neighbour beyond an edge reads 0; with
        ``wrap``, ``reflect`` or ``symmetric`` (:data:`MAPPED_BOUNDARIES`), every point is
        written and a neighbour beyond an edge reads the point numpy.pad's mode of that
        name gives it.
        """
        vals = self.all_values(values, inputs)
        t = _NP[self.dtype]
        out = np.array(out_initial, dtype=t, copy=True)
        if out.ndim != self.dims:
            raise ValueError(f"{self.name}: output has {out.ndim} dimensions, expected {self.dims}")
        out3 = out if self.dims == 3 else out[np.newaxis]
        nz, ny, nx = out3.shape
        rx, ry, rz = self.radius
        (bx, by, bz), (ax, ay, az) = self.margins  # the interior's margins below, above
        clamp = self.boundary != "interior"  # every point written (clamp, zero)
        sources: dict[str, np.ndarray] = {}
        shifts: dict[str, tuple[int, int, int]] = {}
        for f in self.fields:
            a = np.asarray(inputs[f]).astype(t, copy=False)
            px, py, pz = self.pad_of(f)
            stored = tuple(
                n + 2 * p for n, p in zip(out.shape, (pz, py, px)[3 - self.dims :], strict=True)
            )
            if a.shape != stored:
                raise ValueError(f"{self.name}: field {f} has shape {a.shape}, not {stored}")
            a3 = a if self.dims == 3 else a[np.newaxis]
            shifts[f] = (pz, py, px)
            if (
                f not in self.pads
                and clamp
                and any(not term.is_centre for term in self.terms_of(f))
            ):
                # a padded field's pad holds its neighbours beyond the edge: never clamped
                width = ((rz, rz), (ry, ry), (rx, rx))
                if any(r >= n for r, n in zip((rz, ry, rx), a3.shape, strict=True)):
                    raise ValueError(
                        f"{self.name}: the {self.boundary} boundary needs each axis longer "
                        f"than the radius; the field {f} has shape {a.shape}"
                    )
                a3 = np.pad(a3, width, mode=PAD_MODES[self.boundary])  # type: ignore[call-overload]
                shifts[f] = (rz, ry, rx)
            sources[f] = a3
        if clamp:
            lo, hi = (0, 0, 0), (nz, ny, nx)
        else:
            lo, hi = (bz, by, bx), (nz - az, ny - ay, nx - ax)
            if any(b <= a for a, b in zip(lo, hi, strict=True)):
                kept = np.array(out_initial, dtype=self.out_storage) if self.storage else out
                return self._write_rim(kept, inputs, lo, hi)
        z0, z1 = lo[0], hi[0]
        if self.storage:  # integer elements: stored as the kernel converts them
            acc = self._sum(sources, shifts, vals, lo, hi)
            kept = np.array(out_initial, dtype=self.out_storage, copy=True)  # exact, unwritten
            (kept if self.dims == 3 else kept[np.newaxis])[z0:z1, lo[1] : hi[1], lo[2] : hi[2]] = (
                self.stored(acc)
            )
            return self._write_rim(kept, inputs, lo, hi)
        # summed in place: no second array of the output's size
        self._sum(sources, shifts, vals, lo, hi, into=out3[z0:z1, lo[1] : hi[1], lo[2] : hi[2]])
        return self._write_rim(out, inputs, lo, hi)

    def _sum(
        self,
        sources: Mapping[str, np.ndarray],
        shifts: Mapping[str, tuple[int, int, int]],
        vals: Mapping[str, float],
        lo: tuple[int, int, int],
        hi: tuple[int, int, int],
        into: np.ndarray | None = None,
    ) -> np.ndarray:
        """The terms' sum (and the constant) over the points ``[lo, hi)``, in the
        element type: from zero, term by term in file order, block by block on every
        core (:func:`gtune.stencils.reference.in_blocks`: the same bits as one pass);
        written into ``into`` (of the points' shape and the element type) if given."""
        from gtune.stencils.reference import fma32, in_blocks

        t = _NP[self.dtype]
        # integer elements are compared exactly: each term added as the kernel's
        # contracted acc += w * v computes it (one rounding), in float32
        fused = bool(self.storage) and t == np.float32
        coefs = [term.coefficient.typed_value(vals, self.dtype) for term in self.terms]
        constant = self.constant.typed_value(vals, self.dtype)
        shape = (hi[0] - lo[0], hi[1] - lo[1], hi[2] - lo[2])
        acc = np.empty(shape, dtype=t) if into is None else into
        if acc.shape != shape or acc.dtype != t:
            raise ValueError(f"{self.name}: the sum needs {shape} {t}, got {acc.shape} {acc.dtype}")

        def block(zs: slice, ys: slice) -> None:
            part = acc[zs, ys]
            part.fill(0)
            tmp = np.empty_like(part)
            z0, y0 = lo[0] + zs.start, lo[1] + ys.start
            z1, y1 = lo[0] + zs.stop, lo[1] + ys.stop
            for term, c in zip(self.terms, coefs, strict=True):
                dx, dy, dz = term.offset
                sz, sy, sx = shifts[term.field]
                v = sources[term.field][
                    z0 + dz + sz : z1 + dz + sz,
                    y0 + dy + sy : y1 + dy + sy,
                    lo[2] + dx + sx : hi[2] + dx + sx,
                ]
                if fused:
                    fma32(c, v, part, out=part)
                else:
                    np.multiply(v, c, out=tmp)
                    np.add(part, tmp, out=part)
            if not self.constant.is_zero:
                np.add(part, constant, out=part)

        in_blocks(shape, block)
        return acc

    def _write_rim(
        self,
        out: np.ndarray,
        inputs: Mapping[str, np.ndarray],
        lo: tuple[int, int, int],
        hi: tuple[int, int, int],
    ) -> np.ndarray:
        """``out`` with its rim (outside ``[lo, hi)``, z first) written as :attr:`rim`
        says: a copy of the primary field (its stored elements) or the constant."""
        if self.rim == RIM_KEEP:
            return out
        out3 = out if self.dims == 3 else out[np.newaxis]
        rim = np.ones(out3.shape, bool)
        rim[tuple(slice(a, max(a, b)) for a, b in zip(lo, hi, strict=True))] = False
        constant = self.rim_constant
        if constant is not None:
            if self.storage:
                out3[rim] = self.stored(np.full(1, constant, _NP[self.dtype]))[0]
            else:
                out3[rim] = _NP[self.dtype](constant)
            return out
        a = np.asarray(inputs[self.primary_field])
        a3 = a if self.dims == 3 else a[np.newaxis]
        px, py, pz = self.pad_of(self.primary_field)
        nz, ny, nx = out3.shape
        out3[rim] = a3[pz : pz + nz, py : py + ny, px : px + nx][rim].astype(out.dtype)
        return out

    def reference_steps(
        self,
        inputs: Mapping[str, np.ndarray],
        out_initial: np.ndarray,
        values: Mapping[str, float] | None = None,
    ) -> np.ndarray:
        """The output after :attr:`steps` time steps, run as the kernel runs them: two
        buffers, the primary field's and the output's, alternate; step k + 1 reads the
        buffer step k wrote as its primary field and writes the other one (with the
        interior boundary, that buffer's points near the edge keep their contents).
        The other fields stay fixed. One step is :meth:`reference`."""
        primary = self.primary_field
        fields = dict(inputs)
        read = np.asarray(inputs[primary])
        write = np.asarray(out_initial)
        for _ in range(self.steps):
            fields[primary] = read
            out = self.reference(fields, write, values)
            read, write = out, read
        return read

    def tolerance(self, max_abs_input: float, values: Mapping[str, float] | None = None) -> float:
        """Absolute tolerance for comparing a kernel's output with :meth:`reference`
        (after :attr:`steps` steps): the sum of |coefficient| times the largest |input|
        plus |constant|, times a few ulps of the element type per term (a kernel may
        fuse or reorder a little); over several steps, the bound of every step's values
        (the primary field's terms scale the previous step's bound) and the sum of the
        steps' tolerances (a step also carries the previous one's error forward,
        scaled by the primary field's coefficients)."""
        if self.storage:  # integer elements: bit for bit
            return 0.0
        vals = self.all_values(values)
        eps = float(np.finfo(_NP[self.dtype]).eps) * 4 * (len(self.terms) + 1)
        primary = self.primary_field
        gain = sum(abs(t.coefficient.value(vals)) for t in self.terms_of(primary))
        rest = sum(abs(t.coefficient.value(vals)) for t in self.terms if t.field != primary)
        bound, error = max_abs_input, 0.0
        for _ in range(self.steps):
            scale = gain * bound + rest * max_abs_input + abs(self.constant.value(vals))
            error = gain * error + max(scale, 1e-30) * eps
            bound = max(bound, scale)
        return error

    # -- writing ------------------------------------------------------------------------
    def to_dict(self) -> dict[str, Any]:
        """Plain data in the definition-file form (round-trips through
        :func:`parse_definition`)."""
        data: dict[str, Any] = {"name": self.name}
        if self.doc:
            data["doc"] = self.doc
        data.update(
            {
                "dims": self.dims,
                "dtype": self.dtype,
                "boundary": self.boundary,
                **({"rim": _rim_data(self.rim)} if self.rim != RIM_KEEP else {}),
                **({"band": self.band} if self.band != BAND_RADIUS else {}),
                "fields": list(self.fields),
                "output": self.output,
                **({"inplace": True} if self.inplace else {}),
            }
        )
        if self.pads:
            data["pad"] = {f: list(p[: self.dims]) for f, p in self.pads.items()}
        if self.coefficients:
            data["coefficients"] = list(self.coefficients)
        if self.weights:
            data["weights"] = {n: [_yaml_number(v) for v in vs] for n, vs in self.weights.items()}
        if self.weights_fixed:
            data["weights_fixed"] = True
        if self.storage:
            data["storage"] = self.storage
            if self.output_storage:
                data["output_storage"] = self.output_storage
            if self.out_integer:
                data["convert"] = self.convert
        terms: list[dict[str, Any]] = []
        for t in self.terms:
            item: dict[str, Any] = {"field": t.field}
            if not t.is_centre:
                item["offset"] = list(t.offset[: self.dims])
            item["coefficient"] = t.coefficient.text()
            terms.append(item)
        data["terms"] = terms
        if not self.constant.is_zero:
            data["constant"] = self.constant.text()
        if self.values:
            data["values"] = {k: _yaml_number(v) for k, v in self.values.items()}
        kernel: dict[str, Any] = {}
        if self.kernel_name != self.name:
            kernel["name"] = self.kernel_name
        if self.arguments != default_arguments(
            self.fields, self.output, self.coefficients, self.dtype, tuple(self.weights)
        ):
            kernel["arguments"] = [_arg_data(a) for a in self.arguments]
        if kernel:
            data["kernel"] = kernel
        if self.steps != 1:
            data["steps"] = self.steps
        if self.original is not None:
            data["original"] = self.original
        return data

    def to_yaml(self) -> str:
        """The definition as YAML (round-trips through :func:`load_definition`)."""
        return yaml.dump(self.to_dict(), Dumper=_Dumper, sort_keys=False, width=100)


def _rim_data(rim: str) -> str | float | int:
    return rim if rim == RIM_COPY else _yaml_number(float(rim))


def _arg_data(a: KernelArg) -> str | dict[str, Any]:
    if a.pointer:  # a field or the output the original addresses through another type
        return {"name": a.name, "pointer": a.pointer}
    if a.kind in ("field", "output", "coefficient", "weights"):
        return a.name
    if a.kind == "size":
        axis = a.axis.split(",") if a.axis and "," in a.axis else a.axis
        data: dict[str, Any] = {"name": a.name, "type": a.type, "size": axis}
        if a.unit != 1:
            data["unit"] = a.unit
        return data
    if a.kind == "local":
        return {"name": a.name, "type": a.type, "local": True, "shape": list(a.shape)}
    value = list(a.value) if isinstance(a.value, tuple) else a.value
    return {"name": a.name, "type": a.type, "ignored": True, "value": value}


class _Dumper(yaml.SafeDumper):
    """Definitions as people write them: terms and short lists on one line."""

    def ignore_aliases(self, data: Any) -> bool:
        return True


def _represent_list(dumper: yaml.SafeDumper, data: list[Any]) -> yaml.Node:
    flat = all(not isinstance(v, dict | list) for v in data)
    return dumper.represent_sequence("tag:yaml.org,2002:seq", data, flow_style=flat)


def _represent_dict(dumper: yaml.SafeDumper, data: dict[str, Any]) -> yaml.Node:
    short = all(
        not isinstance(v, dict) and (not isinstance(v, list) or len(v) <= 3) for v in data.values()
    )
    flat = short and sum(len(str(k)) + len(str(v)) + 4 for k, v in data.items()) <= 90
    return dumper.represent_mapping("tag:yaml.org,2002:map", data, flow_style=flat)


_Dumper.add_representer(list, _represent_list)
_Dumper.add_representer(dict, _represent_dict)


def default_arguments(
    fields: Sequence[str],
    output: str,
    coefficients: Sequence[str],
    dtype: str,
    weights: Sequence[str] = (),
) -> tuple[KernelArg, ...]:
    """Fields, then the output, then the coefficients, then the weights arrays (a
    field updated in place, the output, is listed once: as the output)."""
    return tuple(
        [_named_arg(f, "field", dtype) for f in fields if f != output]
        + [_named_arg(output, "output", dtype)]
        + [_named_arg(c, "coefficient", dtype) for c in coefficients]
        + [_named_arg(w, "weights", dtype) for w in weights]
    )


def _named_arg(name: str, kind: ArgKind, dtype: str) -> KernelArg:
    ctype = _CTYPE[dtype]
    if kind == "field":
        return KernelArg(name, "field", f"__global const {ctype}*")
    if kind == "output":
        return KernelArg(name, "output", f"__global {ctype}*")
    if kind == "weights":
        return KernelArg(name, "weights", f"__constant {ctype}*")
    return KernelArg(name, "coefficient", ctype)


# ---------------------------------------------------------------------------------------
# Reading


def load_definition(path: str | Path) -> StencilDefinition:
    """Read and validate ``NAME.stencil.yaml``; errors name the file and the key."""
    p = Path(path)
    check_file_name(p, "stencil definition's file name")
    data = load_yaml(read_text(p, what="stencil definition"), str(p))
    return parse_definition(data, str(p))


def is_definition_path(path: str | Path) -> bool:
    return str(path).endswith(SUFFIX)


def default_name(source: str) -> str:
    base = Path(source).name
    for suffix in (SUFFIX, ".yaml", ".yml"):
        if base.endswith(suffix):
            return base[: -len(suffix)]
    return base


class _Err:
    def __init__(self, source: str) -> None:
        self.source = source

    def __call__(self, key: str, message: str) -> InputError:
        return InputError(f"{key}: {message}" if key else message, source=self.source)


def _suggest(word: str, known: Sequence[str]) -> str:
    close = difflib.get_close_matches(word, known, n=1, cutoff=0.5)
    return f" (did you mean {close[0]}?)" if close else f" (known keys: {', '.join(known)})"


def _check_keys(data: Mapping[Any, Any], known: Sequence[str], where: str, err: _Err) -> None:
    for k in data:
        if k not in known:
            key = f"{where}.{k}" if where else str(k)
            raise err(key, f"unknown key{_suggest(str(k), known)}")


def _ident(value: Any, key: str, err: _Err, what: str = "a name") -> str:
    if not isinstance(value, str) or not _IDENT.match(value):
        raise err(
            key, f"expected {what} (letters, digits, _; not starting with a digit), got {value!r}"
        )
    return value


def _names(value: Any, key: str, err: _Err, *, empty: bool) -> tuple[str, ...]:
    if value is None and empty:
        return ()
    if not isinstance(value, list):
        raise err(key, f"expected a list of names, got {value!r}")
    if not value and not empty:
        raise err(key, "expected at least one name")
    out: list[str] = []
    for i, v in enumerate(value):
        name = _ident(v, f"{key}[{i}]", err)
        if name in out:
            raise err(f"{key}[{i}]", f"{name} is listed twice")
        out.append(name)
    return tuple(out)


MAX_NUMBER_DIGITS = 40
"""Most digits a number in a definition is written with (1.5e300 writes a large one)."""


def _digits_checked(text: str, key: str, err: _Err) -> str:
    """``text``, unless it writes a number with more than :data:`MAX_NUMBER_DIGITS`
    digits (Python's own limit, 4,300, would end in a traceback; no stencil needs
    more than a double holds)."""
    digits = sum(c.isdigit() for c in text)
    if digits > MAX_NUMBER_DIGITS:
        raise err(
            key,
            f"a number written with {digits} digits; at most {MAX_NUMBER_DIGITS} "
            "(write large or small numbers as 1.5e300 or 2.5e-8)",
        )
    return text


def _number_value(value: Any, key: str, err: _Err) -> float:
    if isinstance(value, bool):
        raise err(key, f"expected a number, got {value!r}")
    if isinstance(value, int) and abs(value) >= 10**MAX_NUMBER_DIGITS:
        raise err(
            key, f"a whole number of more than {MAX_NUMBER_DIGITS} digits; write it as 1.5e300"
        )
    if isinstance(value, int | float):
        v = float(value)
    elif isinstance(value, str):
        parsed = _parse_number(_digits_checked(value.strip(), key, err))
        if parsed is None:
            raise err(key, f"expected a number, got {value!r}")
        v = parsed
    else:
        raise err(key, f"expected a number, got {value!r}")
    if not math.isfinite(v):
        raise err(key, f"expected a finite number, got {value!r}")
    return v


def _parse_number(text: str) -> float | None:
    if _DECIMAL.match(text):
        return float(text)
    m = _RATIONAL.match(text)
    if m:
        den = int(m.group(2))
        if den == 0:
            return None
        return float(Fraction(int(m.group(1)), den))
    return None


def parse_coefficient(
    value: Any, key: str, known: Sequence[str], source: str = "<definition>"
) -> Coefficient:
    """A number, a name from ``known``, a product ``"0.5*cc"`` or a factor list."""
    return _coefficient(value, key, known, _Err(source))


def _coefficient(value: Any, key: str, known: Sequence[str], err: _Err) -> Coefficient:
    if isinstance(value, bool) or value is None:
        raise err(key, f"expected a number, a coefficient name or a product, got {value!r}")
    if isinstance(value, int | float):
        return Coefficient(_number_value(value, key, err), ())
    below: list[str] = []
    if isinstance(value, str):
        factors, below = _quotient(value, key, err)
    elif isinstance(value, list) and value:
        factors = list(value)
    else:
        raise err(key, f"expected a number, a coefficient name or a product, got {value!r}")
    # the numbers as written, multiplied and divided exactly, rounded once at the end:
    # "7/10" is the double nearest 0.7, as "0.7" is
    factor = Fraction(1)
    names: list[str] = []
    divisors: list[str] = []
    for text in below:
        if _named(text):  # a name, or a weights entry (coeff[7])
            divisors.append(_known(text, key, known, err))
            continue
        number = _parse_number(_digits_checked(text, key, err))
        if number is None or number == 0.0 or not math.isfinite(number):
            raise err(key, f"{value!r} divides by {text!r}, not by a nonzero number or a name")
        factor /= _exact(text, number)
    for f in factors:
        if isinstance(f, str):
            text = f.strip()
            if text.startswith("-") and _named(text[1:].strip()):
                factor, text = -factor, text[1:].strip()
            if _named(text):
                names.append(_known(text, key, known, err))
                continue
            number = _parse_number(_digits_checked(text, key, err))
            if number is None or not math.isfinite(number):
                raise err(
                    key,
                    f"{value!r} is not a product or quotient of numbers and coefficient names "
                    "(only * and / between factors, parentheses around a divisor product; "
                    "no +, -, calls)",
                )
            factor *= _exact(text, number)
        else:
            factor *= Fraction(_number_value(f, key, err))
    try:
        rounded = float(factor)
    except OverflowError:
        rounded = math.inf
    if not math.isfinite(rounded):
        raise err(key, f"{value!r} overflows")
    return Coefficient(rounded, tuple(sorted(names)), tuple(sorted(divisors)))


def _exact(text: str, number: float) -> Fraction:
    """The number ``text`` writes (``0.7`` is 7/10, ``1/12`` one twelfth), exactly;
    ``number``, the double it reads as, where its exponent lies beyond a double's
    (``0e999999999`` would take 10**999999999)."""
    exponent = re.search(r"[eE]([+-]?\d+)\Z", text)
    if exponent is None or abs(int(exponent.group(1))) <= 400:
        try:
            return Fraction(text.replace(" ", ""))
        except (ValueError, ZeroDivisionError):
            pass
    return Fraction(number)


def _known(name: str, key: str, known: Sequence[str], err: _Err) -> str:
    if name not in known:
        hint = difflib.get_close_matches(name, known, n=1, cutoff=0.5)
        more = f" (did you mean {hint[0]}?)" if hint else ""
        raise err(key, f"unknown coefficient {name!r}{more}; declare it under coefficients")
    return name


def _quotient(value: str, key: str, err: _Err) -> tuple[list[str], list[str]]:
    """The factors above and below the line of ``"a*b/c"``, ``"dt*alpha/(dx*dx)"``,
    ``"1/12"`` (C's order: ``a/b*c`` is ``(a/b)*c``); a parenthesised group holds a
    product only."""
    parts, depth, cur = [], 0, ""
    for ch in value:
        depth += {"(": 1, ")": -1}.get(ch, 0)
        if depth < 0 or depth > 1:
            break
        if ch == "/" and depth == 0:
            parts.append(cur)
            cur = ""
        else:
            cur += ch
    parts.append(cur)
    bad = f"{value!r} is not a product or quotient of numbers and coefficient names"

    def product(text: str) -> tuple[list[str], bool]:
        text = text.strip()
        grouped = text.startswith("(") and text.endswith(")")
        inner = text[1:-1] if grouped else text
        if depth != 0 or "(" in inner or ")" in inner or not inner.strip():
            raise err(key, f"{bad} (only * and / between factors; parentheses around a product)")
        return [f.strip() for f in inner.split("*")], grouped

    above, _ = product(parts[0])
    below: list[str] = []
    for part in parts[1:]:
        factors, grouped = product(part)
        if grouped:
            below += factors
        else:
            below.append(factors[0])
            above += factors[1:]
    return above, below


def _named(text: str) -> bool:
    """A coefficient's name, or a weights array's entry (``coeff[7]``)."""
    return bool(_IDENT.match(text) or _ENTRY.match(text))


def _offset(value: Any, key: str, dims: int, err: _Err) -> Offset:
    if value is None:
        return (0, 0, 0)
    if (
        not isinstance(value, list)
        or len(value) != dims
        or any(isinstance(v, bool) or not isinstance(v, int) for v in value)
    ):
        raise err(key, f"expected {dims} integers for dims {dims}, got {value!r}")
    if any(abs(v) > MAX_OFFSET for v in value):
        raise err(key, f"offsets reach at most {MAX_OFFSET} along an axis, got {value!r}")
    dx, dy = int(value[0]), int(value[1])
    dz = int(value[2]) if dims == 3 else 0
    return (dx, dy, dz)


def parse_definition(data: Any, source: str) -> StencilDefinition:
    """Validate plain data (a parsed ``.stencil.yaml``) into a definition."""
    err = _Err(source)
    if not isinstance(data, dict):
        raise err("", "a stencil definition must be a mapping")
    _check_keys(data, _TOP, "", err)
    for required in ("dims", "fields", "output", "terms"):
        if required not in data:
            raise err(required, "missing (required)")
    name = _ident(data.get("name", default_name(source)), "name", err)
    doc = data.get("doc", "")
    if not isinstance(doc, str):
        raise err("doc", f"expected text, got {doc!r}")
    dims = data["dims"]
    if isinstance(dims, bool) or dims not in (2, 3):
        raise err("dims", f"expected 2 or 3, got {dims!r}")
    dtype = data.get("dtype", "float32")
    if dtype not in DTYPES:
        raise err("dtype", f"expected one of {', '.join(DTYPES)}, got {dtype!r}")
    boundary = data.get("boundary", "interior")
    if boundary not in BOUNDARIES:
        raise err("boundary", f"expected one of {', '.join(BOUNDARIES)}, got {boundary!r}")
    rim = _rim(data.get("rim", RIM_KEEP), str(boundary), err)
    band = _band(data.get("band", BAND_RADIUS), str(boundary), rim, err)
    fields = _names(data["fields"], "fields", err, empty=False)
    output = _ident(data["output"], "output", err)
    inplace = data.get("inplace", False)
    if not isinstance(inplace, bool):
        raise err("inplace", f"expected true or false, got {inplace!r}")
    if output in fields and not inplace:
        raise err(
            "output",
            f"{output} is also an input field; the output is a distinct buffer (or, for a "
            "field updated in place and read only at the point written, say inplace: true)",
        )
    coefficients = _names(data.get("coefficients"), "coefficients", err, empty=True)
    for i, c in enumerate(coefficients):
        if c in fields or c == output:
            raise err(f"coefficients[{i}]", f"{c} is also a field; a name is one or the other")

    weights = _weights(data.get("weights"), (*fields, output, *coefficients), err)
    known = (*coefficients, *weight_entries(weights))
    terms = _terms(data["terms"], fields, output, dims, known, err)
    constant = _coefficient(data.get("constant", 0), "constant", known, err)
    values = _values(data.get("values", {}), coefficients, err)
    kernel_name, arguments = _kernel(
        data.get("kernel"), name, dims, dtype, fields, output, coefficients, err, tuple(weights)
    )
    steps = data.get("steps", 1)
    if isinstance(steps, bool) or not isinstance(steps, int) or not 1 <= steps <= MAX_STEPS:
        raise err(
            "steps", f"expected a whole number of time steps from 1 to {MAX_STEPS}, got {steps!r}"
        )
    original = data.get("original")
    if original is not None and not isinstance(original, dict):
        raise err("original", f"expected a mapping, got {original!r}")
    pads = _pads(data.get("pad"), fields, terms, dims, str(boundary), err)
    if steps != 1 and pads:
        raise err(
            "pad", "a definition of several steps reads each step's output as its field: no pad"
        )
    definition = StencilDefinition(
        name=name,
        doc=doc,
        dims=int(dims),
        dtype=str(dtype),
        boundary=str(boundary),
        fields=fields,
        output=output,
        coefficients=coefficients,
        terms=tuple(terms),
        constant=constant,
        values=values,
        kernel_name=kernel_name,
        arguments=arguments,
        original=dict(original) if original is not None else None,
        source=source,
        steps=int(steps),
        pads=pads,
        weights=weights,
        weights_fixed=_weights_fixed(data.get("weights_fixed", False), weights, err),
        **_elements(data, str(dtype), int(steps), err),
        rim=rim,
        band=band,
        inplace=inplace,
    )
    if inplace:
        _check_inplace(definition, data["terms"], err)
    return definition


def _check_inplace(d: StencilDefinition, raw_terms: Sequence[Any], err: _Err) -> None:
    """``inplace: true``: the output is a field the kernel overwrites, each work-item
    reading its own point before writing it. Read at a neighbour, the result would
    depend on the order the work-items run in; a step reading another step's output
    (``steps``) or a tile of it (the primary field) would read overwritten points."""
    out = d.output
    if out not in d.fields:
        raise err(
            "inplace",
            f"the output {out} is not a field: an update in place names the field it "
            f"overwrites as the output (fields: {', '.join(d.fields)})",
        )
    for i, raw in enumerate(raw_terms):
        if raw["field"] == out and any(raw.get("offset") or ()):
            raise err(
                f"terms[{i}].offset",
                f"{out} is updated in place: it is read at the point written only (no "
                "offset); read at a neighbour, the result depends on the order the "
                "work-items run in",
            )
    if d.primary_field == out:
        raise err(
            "fields",
            f"{out}, updated in place, would be the stencil's primary field (the first "
            "field read at an offset, else the first): "
            + ("list another field first" if len(d.fields) > 1 else "it reads no other field"),
        )
    why = {
        "steps": "an update in place is one step per launch (steps: 1)" if d.steps != 1 else "",
        "storage": "an update in place holds float elements" if d.storage else "",
        "pad": f"{out} is updated in place: it has no pad" if out in d.pads else "",
    }
    for key, text in why.items():
        if text:
            raise err(key, text)
    if any(a.name == out and a.pointer for a in d.arguments):
        raise err("kernel.arguments", f"{out} is updated in place: it has no pointer type")


def _band(value: Any, boundary: str, rim: str, err: _Err) -> str:
    """``band``: radius or reach; reach only with the interior boundary, its rim kept."""
    if value not in BANDS:
        raise err("band", f"expected one of {', '.join(BANDS)}, got {value!r}")
    if value == BAND_REACH and boundary != "interior":
        raise err(
            "band",
            f"the {boundary} boundary writes every point: a band of points is written "
            "only with boundary: interior",
        )
    if value == BAND_REACH and rim != RIM_KEEP:
        raise err(
            "band", "band: reach keeps its rim (rim: keep); a written rim is as wide as the radius"
        )
    return str(value)


def reach_of(offsets: Sequence[Sequence[int]]) -> tuple[Offset, Offset]:
    """How far ``offsets`` (x, y, z) reach below and above the point along each axis
    (0 where none reaches that way): the margins of the points whose taps all lie inside
    the array, ``[below, N - above)`` per axis."""
    below = tuple(max([0, *(-int(o[a]) for o in offsets)]) for a in range(3))
    above = tuple(max([0, *(int(o[a]) for o in offsets)]) for a in range(3))
    return (below[0], below[1], below[2]), (above[0], above[1], above[2])


def _rim(value: Any, boundary: str, err: _Err) -> str:
    """``rim``: keep, copy or a number; other than keep only with the interior boundary."""
    if value in (RIM_KEEP, RIM_COPY):
        rim = str(value)
    else:
        if isinstance(value, bool) or not isinstance(value, int | float):
            raise err("rim", f"expected keep, copy or a number, got {value!r}")
        if not math.isfinite(float(value)):
            raise err("rim", f"expected a finite number, got {value!r}")
        rim = _number(float(value))
    if rim != RIM_KEEP and boundary != "interior":
        raise err(
            "rim",
            f"the {boundary} boundary writes every point from its neighbours: a rim of "
            "its own is written only with boundary: interior",
        )
    return rim


def _elements(data: Mapping[str, Any], dtype: str, steps: int, err: _Err) -> dict[str, str]:
    """``storage``, ``output_storage`` and ``convert``: integer elements, the output's own
    element type, and how a result becomes an integer element."""
    from gtune.stencils.elements import CONVERSIONS, STORAGE_TYPES

    storage, convert = data.get("storage"), data.get("convert")
    output_storage = data.get("output_storage")
    if storage is None or storage == dtype:
        if output_storage is not None and output_storage != dtype:
            raise err(
                "output_storage",
                "an output element type of its own is for a definition with integer "
                "elements (storage:)",
            )
        if convert is not None:
            raise err("convert", "only a definition with integer elements (storage:) converts")
        return {}
    if storage not in STORAGE_TYPES:
        raise err(
            "storage",
            f"expected an integer element type ({', '.join(STORAGE_TYPES)}), got {storage!r}",
        )
    out: dict[str, str] = {"storage": str(storage)}
    target = storage
    if output_storage is not None and output_storage != storage:
        if output_storage not in STORAGE_TYPES and output_storage != dtype:
            raise err(
                "output_storage",
                f"expected the output's element type: an integer type "
                f"({', '.join(STORAGE_TYPES)}) or the arithmetic's {dtype}, got "
                f"{output_storage!r}",
            )
        out["output_storage"] = target = str(output_storage)
    if target == dtype:  # float results: stored as computed
        if convert is not None:
            raise err("convert", f"the output holds {dtype}, the arithmetic's: nothing converts")
    elif convert not in CONVERSIONS:
        raise err(
            "convert",
            f"expected how a result becomes a {target} ({', '.join(CONVERSIONS)}), got {convert!r}",
        )
    else:
        out["convert"] = str(convert)
    if steps != 1:
        raise err("steps", "a definition with integer elements takes one step")
    return out


def _weights_fixed(raw: Any, weights: Mapping[str, Any], err: _Err) -> bool:
    if not isinstance(raw, bool):
        raise err("weights_fixed", f"expected true or false, got {raw!r}")
    if raw and not weights:
        raise err("weights_fixed", "there are no weights arrays (weights:) to fix")
    return raw


def _weights(raw: Any, taken: Sequence[str], err: _Err) -> dict[str, tuple[float, ...]]:
    """``weights: {coeff: [w0, w1, ...]}``: arrays of weights the kernel takes as
    arguments, with the values the definition's own reference uses."""
    if raw is None:
        return {}
    if not isinstance(raw, dict):
        raise err("weights", f"expected a mapping of array names to lists of numbers, got {raw!r}")
    out: dict[str, tuple[float, ...]] = {}
    for name, values in raw.items():
        key = f"weights.{name}"
        _ident(name, key, err, "an array name")
        if name in taken:
            raise err(key, f"{name} is also a field, the output or a coefficient")
        if not isinstance(values, list) or not 1 <= len(values) <= MAX_WEIGHTS:
            raise err(key, f"expected a list of 1 to {MAX_WEIGHTS} numbers, got {values!r}")
        out[str(name)] = tuple(_number_value(v, f"{key}[{i}]", err) for i, v in enumerate(values))
    return out


def _pads(
    raw: Any, fields: tuple[str, ...], terms: Sequence[Term], dims: int, boundary: str, err: _Err
) -> dict[str, Offset]:
    """``pad: {field: [px, py(, pz)]}``: the points stored beyond each edge of a field."""
    if raw is None:
        return {}
    if not isinstance(raw, dict):
        raise err("pad", f"expected a mapping of field names to {dims} integers, got {raw!r}")
    pads: dict[str, Offset] = {}
    for name, value in raw.items():
        key = f"pad.{name}"
        if name not in fields:
            raise err(key, f"{name!r} is not a field (fields: {', '.join(fields)})")
        if (
            not isinstance(value, list)
            or len(value) != dims
            or any(isinstance(v, bool) or not isinstance(v, int) for v in value)
            or any(not 0 <= v <= MAX_PAD for v in value)
        ):
            raise err(key, f"expected {dims} integers from 0 to {MAX_PAD} (x first), got {value!r}")
        pad = (int(value[0]), int(value[1]), int(value[2]) if dims == 3 else 0)
        reach = tuple(max(abs(t.offset[d]) for t in terms if t.field == name) for d in range(3))
        if boundary in ("zero", *MAPPED_BOUNDARIES) and any(pad):
            raise err(
                key,
                "a padded field holds its neighbours beyond the edge in its pad, but with the "
                f"{boundary} boundary they "
                + ("read 0" if boundary == "zero" else "are the points it maps them to")
                + ": pad with clamp, or drop the pad",
            )
        if boundary == "clamp" and any(p < r for p, r in zip(pad, reach, strict=True)):
            raise err(
                key,
                f"{list(pad[:dims])} is less than the reach of {name}'s terms "
                f"{list(reach[:dims])}: with the clamp boundary every point is written, and a "
                "padded field's neighbours beyond the edge lie in its pad",
            )
        if any(pad):
            pads[str(name)] = pad
    return pads


def _terms(
    raw_terms: Any,
    fields: tuple[str, ...],
    output: str,
    dims: int,
    coefficients: tuple[str, ...],
    err: _Err,
) -> list[Term]:
    """The terms, numeric repeats of a slot summed; every field read by one."""
    if not isinstance(raw_terms, list) or not raw_terms:
        raise err("terms", "expected a non-empty list of terms")
    terms: list[Term] = []
    seen: dict[tuple[str, Offset], int] = {}
    for i, raw in enumerate(raw_terms):
        key = f"terms[{i}]"
        if not isinstance(raw, dict):
            raise err(key, f"expected a mapping with field, offset, coefficient; got {raw!r}")
        _check_keys(raw, _TERM_KEYS, key, err)
        if "field" not in raw:
            raise err(f"{key}.field", "missing (required)")
        fname = raw["field"]
        if fname not in fields:
            hint = "; the output is not read" if fname == output else ""
            raise err(
                f"{key}.field",
                f"{fname!r} is not a field (fields: {', '.join(fields)}){hint}",
            )
        offset = _offset(raw.get("offset"), f"{key}.offset", dims, err)
        coef = _coefficient(raw.get("coefficient", 1), f"{key}.coefficient", coefficients, err)
        at = seen.get((fname, offset))
        if at is not None and terms[at].coefficient.is_number and coef.is_number:
            prev = terms[at]
            terms[at] = Term(fname, offset, Coefficient(prev.coefficient.factor + coef.factor))
            continue
        # A repeat with a named coefficient stays a term of its own: a centre weight such
        # as 1 - 6*alpha is the sum of the terms 1*u and -6*alpha*u.
        seen[(fname, offset)] = len(terms)
        terms.append(Term(fname, offset, coef))
    for i, f in enumerate(fields):
        if not any(t.field == f for t in terms):
            raise err(f"fields[{i}]", f"{f} is read by no term")
    return terms


def _values(raw_values: Any, coefficients: tuple[str, ...], err: _Err) -> dict[str, float]:
    """A value for every coefficient, and for nothing else."""
    if raw_values is None:
        raw_values = {}
    if not isinstance(raw_values, dict):
        raise err("values", f"expected a mapping of coefficient values, got {raw_values!r}")
    values: dict[str, float] = {}
    for k, v in raw_values.items():
        if k not in coefficients:
            raise err(f"values.{k}", f"not a coefficient{_suggest(str(k), coefficients)}")
        values[str(k)] = _number_value(v, f"values.{k}", err)
    for c in coefficients:
        if c not in values:
            raise err("values", f"{c} needs a value (every coefficient is given one to tune with)")
    return values


def _kernel(
    raw: Any,
    name: str,
    dims: int,
    dtype: str,
    fields: tuple[str, ...],
    output: str,
    coefficients: tuple[str, ...],
    err: _Err,
    weights: tuple[str, ...] = (),
) -> tuple[str, tuple[KernelArg, ...]]:
    default = default_arguments(fields, output, coefficients, dtype, weights)
    if raw is None:
        return name, default
    if not isinstance(raw, dict):
        raise err("kernel", f"expected a mapping with name and arguments, got {raw!r}")
    _check_keys(raw, _KERNEL_KEYS, "kernel", err)
    kernel_name = _ident(raw.get("name", name), "kernel.name", err)
    if "arguments" not in raw:
        return kernel_name, default
    items = raw["arguments"]
    if not isinstance(items, list) or not items:
        raise err("kernel.arguments", "expected a non-empty list of arguments")
    by_name = {a.name: a for a in default}
    out: list[KernelArg] = []
    used: set[str] = set()
    axes = ("x", "y", "z")[:dims]
    for i, item in enumerate(items):
        key = f"kernel.arguments[{i}]"
        if isinstance(item, str):
            if item not in by_name:
                raise err(
                    key,
                    f"{item!r} is not a field, the output or a coefficient; give extra "
                    "arguments as {name: ..., type: int, size: x} or {name: ..., type: ..., "
                    "ignored: true, value: ...}",
                )
            arg = by_name[item]
        elif isinstance(item, dict):
            arg = _extra_arg(item, key, axes, by_name, err)
        else:
            raise err(key, f"expected a name or a mapping, got {item!r}")
        if arg.name in used:
            raise err(key, f"{arg.name} is listed twice")
        used.add(arg.name)
        out.append(arg)
    missing = [a.name for a in default if a.name not in used]
    if missing:
        raise err(
            "kernel.arguments",
            f"missing {', '.join(missing)} (every field, the output "
            "and every coefficient is an argument)",
        )
    return kernel_name, tuple(out)


def _extra_arg(
    item: Mapping[str, Any],
    key: str,
    axes: Sequence[str],
    by_name: Mapping[str, KernelArg],
    err: _Err,
) -> KernelArg:
    """One extra argument of ``kernel.arguments``: a size, an ignored scalar or a local
    buffer (``{name: sh, type: float, local: true, shape: ["(WX+2)*(WY+2)"]}``)."""
    _check_keys(item, _ARG_KEYS, key, err)
    aname = _ident(item.get("name"), f"{key}.name", err)
    if "pointer" in item:
        return _pointer_arg(item, key, by_name.get(aname), err)
    if aname in by_name:
        raise err(
            f"{key}.name",
            f"{aname} is a field, output or coefficient: list it by name alone",
        )
    kinds = [k for k in ("size", "ignored", "local") if k in item and item[k] is not False]
    if len(kinds) > 1:
        raise err(key, f"an argument is one of a size, ignored or local, not {' and '.join(kinds)}")
    if "size" in item:
        return _size_arg(item, key, aname, axes, err)
    if item.get("local") is True:
        return _local_arg(item, key, aname, len(axes), err)
    if item.get("ignored") is not True:
        raise err(
            key,
            "an extra argument needs size: x|y|z, ignored: true or local: true (a __local "
            "buffer, with its shape)",
        )
    atype = item.get("type")
    base, lanes = vector_of(atype)
    if base not in IGNORED_TYPES:
        raise err(
            f"{key}.type",
            f"expected one of {', '.join(IGNORED_TYPES)} (or a vector of one: uint2), "
            f"got {atype!r}",
        )
    if "shape" in item:
        raise err(f"{key}.shape", "only a local buffer has a shape")
    given = item.get("value", [0] * lanes if lanes > 1 else 0)
    if lanes > 1 and (not isinstance(given, list) or len(given) != lanes):
        raise err(f"{key}.value", f"a {atype} takes a list of {lanes} values, got {given!r}")
    values: list[float | int] = []
    for k, one in enumerate(given if lanes > 1 else [given]):
        v = _number_value(one, f"{key}.value" + (f"[{k}]" if lanes > 1 else ""), err)
        if base not in ("float", "double") and not v.is_integer():
            raise err(f"{key}.value", f"expected an integer for {atype}, got {v}")
        values.append(v if base in ("float", "double") else int(v))
    value = tuple(values) if lanes > 1 else values[0]
    return KernelArg(aname, "ignored", str(atype), None, value)


def vector_of(ctype: Any) -> tuple[Any, int]:
    """``uint2`` -> (``uint``, 2): an OpenCL vector type's element type and lanes (2, 3,
    4, 8, 16); any other value -> (itself, 1)."""
    m = re.fullmatch(r"([a-z]+?)(2|3|4|8|16)", ctype) if isinstance(ctype, str) else None
    return (m.group(1), int(m.group(2))) if m else (ctype, 1)


def _pointer_arg(item: Mapping[str, Any], key: str, arg: KernelArg | None, err: _Err) -> KernelArg:
    """``{name: srcptr, pointer: uchar}``: a field or the output whose buffer the
    original declares with another pointer type (OpenCV's ``uchar *srcptr`` holding
    floats, addressed in bytes); the tuned kernel declares it so and reads it as the
    definition's elements."""
    if arg is None or arg.kind not in ("field", "output"):
        raise err(f"{key}.pointer", "only a field or the output has a pointer type")
    extra = sorted(k for k in item if k not in ("name", "pointer"))
    if extra:
        raise err(f"{key}.{extra[0]}", "a field's or the output's entry has a name and a pointer")
    pointer = item["pointer"]
    if not isinstance(pointer, str) or not POINTER_TYPE.fullmatch(pointer):
        raise err(
            f"{key}.pointer",
            f"expected an OpenCL C type (uchar, uint, float, ...), got {pointer!r}",
        )
    return replace(arg, pointer=pointer)


def _size_arg(
    item: Mapping[str, Any], key: str, aname: str, axes: Sequence[str], err: _Err
) -> KernelArg:
    """``{name: nx, type: int, size: x}``: passed the problem size along an axis;
    ``{name: dims, type: uint2, size: [x, y]}``: a vector of sizes, one axis a lane."""
    atype = item.get("type", "int")
    base, lanes = vector_of(atype)
    if base not in SIZE_TYPES:
        raise err(
            f"{key}.type",
            f"a size argument is one of {', '.join(SIZE_TYPES)} (or a vector of one: "
            f"uint2), got {atype!r}",
        )
    given = item["size"]
    if lanes > 1 and (not isinstance(given, list) or len(given) != lanes):
        raise err(f"{key}.size", f"a {atype} takes a list of {lanes} axes ([x, y]), got {given!r}")
    for one in given if lanes > 1 else [given]:
        if one not in axes:
            raise err(f"{key}.size", f"expected one of {', '.join(axes)}, got {one!r}")
    axis = ",".join(given) if lanes > 1 else given
    if "value" in item:
        raise err(f"{key}.value", "a size argument's value is the problem size")
    if "shape" in item:
        raise err(f"{key}.shape", "only a local buffer has a shape")
    unit = item.get("unit", 1)
    if isinstance(unit, bool) or not isinstance(unit, int) or unit < 1:
        raise err(
            f"{key}.unit",
            "expected a positive integer (the size counted in units of that many "
            f"elements, e.g. 4 for float4 rows), got {unit!r}",
        )
    return KernelArg(aname, "size", str(atype), str(axis), None, unit)


def _local_arg(item: Mapping[str, Any], key: str, aname: str, dims: int, err: _Err) -> KernelArg:
    """``{name: sh, type: float, local: true, shape: ["(WX+2)*(WY+2)"]}``: a __local
    buffer the kernel takes and does not use (the original's tile, which its host sizes
    per launch); ``shape`` is its elements, expressions of the problem size and the
    template's work-group sizes (gtune passes that many when it measures)."""
    atype = item.get("type", "float")
    if atype not in IGNORED_TYPES:
        raise err(f"{key}.type", f"expected one of {', '.join(IGNORED_TYPES)}, got {atype!r}")
    for extra in ("value", "unit"):
        if extra in item:
            raise err(f"{key}.{extra}", "a local buffer has a type and a shape")
    shape = item.get("shape")
    known = {*("NX", "NY", "NZ")[:dims], *("WX", "WY", "WZ")[:dims]}
    if not isinstance(shape, list) or not shape or len(shape) > 8:
        raise err(
            f"{key}.shape",
            "a local buffer needs its elements as a list of 1 to 8 expressions of "
            f'{", ".join(sorted(known))}, e.g. ["(WX+2)*(WY+2)"]',
        )
    texts: list[str] = []
    for text in shape:
        if isinstance(text, bool) or not isinstance(text, str | int):
            raise err(f"{key}.shape", f"expected an expression, got {text!r}")
        try:
            Expr(str(text), f"{key}.shape").check_names(known)
        except ExpressionError as exc:
            raise err(f"{key}.shape", exc.message) from None
        texts.append(str(text))
    return KernelArg(aname, "local", str(atype), shape=tuple(texts))


# ---------------------------------------------------------------------------------------
# Building definitions in code


def from_weights(
    name: str,
    offsets: Sequence[Sequence[int]],
    weights: Sequence[float],
    *,
    dims: int = 3,
    dtype: str = "float32",
    boundary: str = "interior",
    doc: str = "",
    field_name: str = "src",
    output: str = "dst",
) -> StencilDefinition:
    """A single-field stencil with constant weights (the generated suite's form)."""
    data = {
        "name": name,
        "doc": doc,
        "dims": dims,
        "dtype": dtype,
        "boundary": boundary,
        "fields": [field_name],
        "output": output,
        "terms": [
            {"field": field_name, "offset": [int(v) for v in o][:dims], "coefficient": float(w)}
            for o, w in zip(offsets, weights, strict=True)
        ],
    }
    return parse_definition(data, f"<stencil {name}>")

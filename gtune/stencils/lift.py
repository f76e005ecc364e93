"""Lifting a plain kernel: recover the linear stencil it computes by running it.

A black-box method, so it works for kernels gtune cannot parse, and it never guesses from
names. The kernel runs with chosen inputs through a :data:`Probe` (this module runs
nothing itself: :mod:`gtune.measure.lifting` probes in a measurement worker, like any
job):

1. all inputs zero, twice, with two random initial outputs: which points it writes (the
   rest must keep what the output held), and the constant term; then random inputs
   ``a``, ``b`` and ``a + b`` (uniform, and 0/1): the kernel is linear;
2. an impulse (a single 1) in each input field at the centre: the offsets and weights;
3. impulses of every field at once, on a lattice far enough apart that their responses
   do not overlap, with each float scalar doubled in turn (which coefficients it is a
   factor of) and then with the relevant scalars set to zero or their base value in
   every combination: each coefficient as a sum of products of scalars (a Moebius
   inversion over the subsets of the scalars it depends on);
4. checks that may refuse: a lattice of impulses over the whole array (the response is
   the same everywhere: shift invariance, and the boundary), and random inputs at the
   user's and at random scalar values, which the definition must reproduce everywhere,
   boundary included, to the element type's precision; an integer argument that is not
   a size must not change the output.

A kernel that is not such a stencil -- a min/max, a Game of Life, data-dependent branches,
a product of inputs, a division by a scalar -- is refused with one message naming the
file and the reason, never written as a wrong definition.
"""

from __future__ import annotations

import itertools
import math
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from fractions import Fraction
from pathlib import Path
from typing import Any

import numpy as np

from gtune.clsource import match_bracket, strip_comments
from gtune.exceptions import GtuneError, InputError
from gtune.expr import Expr, substitute
from gtune.kernel import POINTER_TYPE, TunableKernel, lane_names, scalar_values
from gtune.stencils.definition import (
    BAND_RADIUS,
    BAND_REACH,
    MAPPED_BOUNDARIES,
    RIM_COPY,
    RIM_KEEP,
    Coefficient,
    StencilDefinition,
    parse_definition,
    weight_entries,
)
from gtune.stencils.definition import MAX_PAD as MAX_PAD
from gtune.stencils.elements import STORAGE_TYPES
from gtune.stencils.lift_steps import as_steps, not_steps, steps_hint

#: A probe: one launch with these input fields (by name; a field not given is zero; a
#: padded field in its stored shape) and weights arrays, this initial output and these
#: scalar values (by name, every scalar); returns the output. For an update in place
#: (``Interface.inplace``) the one buffer is that field's array (the initial output is
#: not passed to the kernel).
Probe = Callable[[Mapping[str, np.ndarray], np.ndarray, Mapping[str, float | int]], np.ndarray]

_NP: dict[str, type[np.floating[Any]]] = {"float32": np.float32, "float64": np.float64}
_SIZE_TYPES = {"int32": "int", "uint32": "uint", "int64": "long", "uint64": "ulong"}
_INT_TYPES = {**_SIZE_TYPES, "int16": "short", "uint16": "ushort", "int8": "char", "uint8": "uchar"}
_AXES = ("x", "y", "z")
#: Most scalars one coefficient may depend on (2**n probe launches).
MAX_INTERACTING = 6
#: Largest |offset| along an axis a definition accepts.
MAX_OFFSET = 16
#: Most entries of a weights array lift probes (one launch or two each).
MAX_WEIGHT_ENTRIES = 1024
#: Powers a scalar may enter a weight with (``dt/(dx*dx)``: -2).
EXPONENTS = (-2, -1, 0, 1, 2)
#: Most monomials one weight may be a sum of, when scalars divide.
MAX_MONOMIALS = 32
_SCALES = (0.5, 0.75, 1.25, 1.5, 2.0, 0.625)  # one scalar's values, times its base
_FIT = 1e4  # a fitted term below this many ulps of the weights is noise
_SNAP = 256  # a fit agrees with a fresh measurement within this many ulps of it
_ROUNDING = 16  # a fitted factor is snapped to a simple number within this many ulps
_ABOVE = 2.0**10  # an impulse raises the smallest weight this far above a constant term
_ELEMENTS = f"a definition holds float32/float64 or integer elements ({', '.join(STORAGE_TYPES)})"
Slot = tuple[str, tuple[int, ...]]  # (field, offset in array axis order); ("", ()) = constant
CONSTANT: Slot = ("", ())


# why a kernel that writes every point differs from the stencil near the edges only
EDGE_MISMATCH = (
    "its output matches neither clamped neighbours, zero padding, wrapped (periodic) or "
    "mirrored neighbours (reflect, symmetric) nor an untouched border (a boundary that "
    "differs from axis to axis, and pixels of vector elements, uchar4 or float4 RGBA, "
    "clamped whole, cannot be expressed)"
)


def other_boundaries(radius: Sequence[int], shape: Sequence[int]) -> list[str]:
    """The boundaries beside clamp that write every point, in the order lift tries them:
    zero, then those that map a tap beyond an edge inside (each axis longer than its
    radius; ``radius`` and ``shape`` per axis in the same order)."""
    fits = all(r < n for r, n in zip(radius, shape, strict=True))
    return ["zero", *(MAPPED_BOUNDARIES if fits else ())]


def matching_boundary(
    definition: StencilDefinition,
    radius: Sequence[int],
    shape: Sequence[int],
    matches: Callable[[StencilDefinition], bool],
) -> str | None:
    """The boundary of ``other_boundaries`` under which the kernel's output ``matches``
    the clamped ``definition`` with that boundary instead (the first, in their order);
    None where the clamped definition matches already, or no other boundary does."""
    if matches(definition):
        return None
    for boundary in other_boundaries(radius, shape):
        if matches(replace(definition, boundary=boundary)):
            return boundary
    return None


class NotAStencil(InputError):
    """The kernel is not a linear stencil a definition can express (exit status 2)."""

    why = ""  # the reason alone, without the kernel's name


class PartialWrite(NotAStencil):
    """What the kernel writes at its launch is a box off the centre, or no box: also
    what a launch with its dimensions in the wrong order writes (``get_global_id(0)``
    indexing rows, at a size that is not square)."""


class LaunchFailed(NotAStencil):
    """A probe launch did not run (a work-group size that does not divide the global
    size, say): also what a launch with its dimensions in the wrong order can do."""


@dataclass(frozen=True)
class ScalarArg:
    name: str
    dtype: str  # numpy name
    value: float | int  # the user's value (from the plain flags)
    axis: str | None = None  # an integer size argument: x, y or z
    unit: int = 1  # ... counted in units of this many elements (NX / 4: 4)
    entry_of: str = ""  # an entry of a weights array (name "coeff[7]"): the array's name
    # an integer argument that is a padded field's pitch, its row (or plane) length at
    # every size (in_pitch = NX+2): what it is, for the definition's doc; the tuned
    # kernel reads the field's rows that far apart and ignores the argument
    pitch: str = ""
    lane_of: str = ""  # a lane of a vector scalar (name "dims.x"): the vector's name


@dataclass(frozen=True)
class Interface:
    """What lifting needs of the kernel: its arrays and scalars, in signature order."""

    label: str  # the kernel file, for messages
    kernel_name: str
    shape: tuple[int, ...]  # C order (slowest first)
    dtype: str  # float32 or float64
    fields: tuple[str, ...]
    output: str
    order: tuple[str, ...]  # every argument, in signature order
    scalars: tuple[ScalarArg, ...]
    pads: Mapping[str, tuple[int, ...]] = field(default_factory=dict)  # C order
    weights: Mapping[str, int] = field(default_factory=dict)  # weights arrays: length
    weight_types: Mapping[str, str] = field(default_factory=dict)  # ... their elements
    plane: tuple[str, str, str] | None = None  # (scalar, its C type, axis): a plane a launch
    out_dtype: str = ""  # the output's element type where it differs from the fields'
    # integer arguments that change what the kernel computes (a filter's size), held at
    # the user's value: the definition is the kernel at that value (``--fixed``)
    held: frozenset[str] = frozenset()
    # __local buffers the host sizes (kept in the tuned kernel's signature, unused): the
    # C element type and the elements, in the sizes and the template's WX, WY, WZ
    locals: Mapping[str, tuple[str, tuple[str, ...]]] = field(default_factory=dict)
    # fields and the output the kernel addresses through another pointer type (a uchar *
    # holding floats, --array srcptr=float32:NX,NY): that C type, kept in the tuned kernel
    pointers: Mapping[str, str] = field(default_factory=dict)
    # the output where it is also a field, updated in place (hz = hz - 0.7*(...)): the
    # probe's buffer is that field's array, and the initial output is not passed
    inplace: str = ""

    @property
    def output_dtype(self) -> str:
        """The output's element type (numpy name)."""
        return self.out_dtype or self.dtype

    @property
    def dims(self) -> int:
        return len(self.shape)

    def field_shape(self, name: str) -> tuple[int, ...]:
        """The stored shape of input field ``name``: the problem's plus its pad."""
        pad = self.pads.get(name, (0,) * self.dims)
        return tuple(n + 2 * p for n, p in zip(self.shape, pad, strict=True))

    @property
    def float_scalars(self) -> tuple[ScalarArg, ...]:
        return tuple(s for s in self.scalars if s.dtype.startswith("float"))

    def refuse(self, why: str, kind: type[NotAStencil] = NotAStencil) -> NotAStencil:
        refusal = kind(
            f"kernel {self.kernel_name} is not a linear stencil that a definition can "
            f"express: {why}",
            source=self.label,
        )
        refusal.why = why
        return refusal


def interface(
    kernel: TunableKernel, label: str | None = None, plane_index: str | None = None
) -> Interface:
    """The arrays and scalars of a plain kernel's description, checked for lifting;
    ``plane_index`` (``"k=z"``): see :func:`_plane`."""
    where = label or kernel.source_path or kernel.label
    sizes = dict(kernel.sizes)

    def refuse(why: str) -> InputError:
        return InputError(f"cannot lift kernel {kernel.name}: {why}", source=where)

    data_shape = tuple(sizes[n] for n in ("NZ", "NY", "NX") if n in sizes)
    if len(data_shape) not in (2, 3):
        raise refuse(f"a definition is 2D or 3D; the problem size has {len(data_shape)} dims")
    plane = _plane(kernel, plane_index, len(data_shape), where) if plane_index else None
    values = scalar_values(kernel)
    found = _Arrays()
    given: dict[str, ScalarArg] = {}
    vectors: dict[str, list[ScalarArg]] = {}  # a vector scalar's lanes (uint2 dims)
    tiles: dict[str, tuple[str, tuple[str, ...]]] = {}
    inout: list[Any] = []  # read and written: an update in place, if it is the only output
    for arg in kernel.arguments:
        if plane is not None and arg.name == plane[0]:
            continue
        if arg.kind == "scalar" and arg.lanes:  # each lane a scalar: a size, or held
            vectors[arg.name] = [
                replace(
                    _scalar_arg(replace(arg, name=n, value=e), values[n], sizes, refuse),
                    lane_of=arg.name,
                )
                for n, e in zip(lane_names(arg.name, len(arg.lanes)), arg.lanes, strict=True)
            ]
        elif arg.kind == "scalar":
            given[arg.name] = _scalar_arg(arg, values[arg.name], sizes, refuse)
        elif arg.kind == "local":
            tiles[arg.name] = _local_tile(kernel, arg, len(data_shape))
        elif arg.role == "inout":
            inout.append(arg)
        else:
            _array_arg(arg, sizes, data_shape, found, refuse, kernel)
    inplace = _in_place(kernel, inout, sizes, data_shape, found, where) if inout else ""
    if len(found.outputs) != 1:
        raise refuse(
            f"a stencil writes one output array; this kernel writes {len(found.outputs)}"
            + (f" ({', '.join(found.outputs)})" if found.outputs else "")
        )
    if not found.fields:
        raise refuse("it reads no input array")
    dtype, out_dtype = _element_types(found.dtypes, found.out_dtypes.pop(), refuse)
    scalars: list[ScalarArg] = []  # in signature order, a weights array's entries in its place
    for arg in kernel.arguments:
        if arg.name in given:
            scalars.append(_as_pitch(given[arg.name], arg, found, sizes))
        elif arg.name in vectors:
            scalars += vectors[arg.name]
        elif arg.name in found.weights:
            n, wtype = found.weights[arg.name], found.weight_types[arg.name]
            scalars += _weight_entries(arg.name, wtype, n, dtype, refuse)
    return Interface(
        label=where,
        kernel_name=kernel.name,
        shape=data_shape,
        dtype=dtype,
        out_dtype=out_dtype,
        fields=tuple(found.fields),
        output=found.outputs[0],
        order=tuple(a.name for a in kernel.arguments),
        scalars=tuple(scalars),
        pads=found.pads,
        weights=found.weights,
        weight_types=found.weight_types,
        plane=plane,
        locals=tiles,
        pointers={n: p for n, (p, _) in found.views.items()},
        inplace=inplace,
    )


def _in_place(
    kernel: TunableKernel,
    inout: Sequence[Any],
    sizes: Mapping[str, int],
    data_shape: tuple[int, ...],
    found: _Arrays,
    where: str,
) -> str:
    """The array plain mode found read and written (``hz[i] = hz[i] - ...``), lifted as
    an update in place where it is the kernel's only output: the output, and the last
    of the fields (never the primary one). Whether it is read at the point written only
    the probes tell (:meth:`_Lifter.in_place`)."""
    arg = inout[0]
    if len(inout) > 1 or found.outputs:
        raise _inout_refusal(kernel, arg.name, where)

    def refuse(why: str) -> InputError:
        return InputError(f"cannot lift kernel {kernel.name}: {why}", source=where)

    if arg.dtype not in _NP or arg.pointer:
        raise refuse(
            f"array {arg.name} is read and written, an update in place, and holds "
            f"{arg.pointer or arg.dtype}: an update in place is lifted for float32 or float64 "
            "elements addressed as such"
        )
    _array_arg(replace(arg, role="output"), sizes, data_shape, found, refuse)
    if not found.fields:
        raise refuse(
            f"array {arg.name} is read and written, an update in place, and it reads no "
            "other array; an update in place is lifted where the kernel reads another "
            "field too"
        )
    found.fields.append(arg.name)
    found.dtypes.add(arg.dtype)
    return str(arg.name)


def _local_tile(kernel: TunableKernel, arg: Any, dims: int) -> tuple[str, tuple[str, ...]]:
    """A __local buffer of the original (``--array sh=(WX+2)*(WY+2)``): its C element
    type, and its elements as the tuned kernel's host computes them -- from the launch's
    local size, dimension by dimension: the original's work-group parameter of dimension
    k (its local size there) becomes the template's (WX, WY, WZ), any other parameter
    its shipped value."""
    config = shipped_config(kernel)
    rename: dict[str, Expr] = {}
    for k, e in enumerate((kernel.launch.local_size or ())[:dims]):
        text = e.text.strip()
        if text in config and text not in rename:
            rename[text] = Expr(("WX", "WY", "WZ")[k])
    rename.update({n: Expr(str(v)) for n, v in config.items() if n not in rename})
    ctype = _INT_TYPES.get(arg.dtype) or ("double" if arg.dtype == "float64" else "float")
    return ctype, tuple(substitute(e, rename).text for e in arg.shape)


@dataclass
class _Arrays:
    """The arrays :func:`interface` found, by kind."""

    fields: list[str] = field(default_factory=list)
    outputs: list[str] = field(default_factory=list)
    dtypes: set[str] = field(default_factory=set)  # the fields' element types
    out_dtypes: set[str] = field(default_factory=set)
    pads: dict[str, tuple[int, ...]] = field(default_factory=dict)
    weights: dict[str, int] = field(default_factory=dict)  # weights arrays: length
    weight_types: dict[str, str] = field(default_factory=dict)  # ... and element type
    # fields and the output given another element type than their pointer's
    # (--array srcptr=float32:...): the pointer's C type, and its units per element
    views: dict[str, tuple[str, Fraction]] = field(default_factory=dict)


_C_BYTES = {"char": 1, "short": 2, "int": 4, "long": 8, "float": 4, "double": 8}


def _units_per_element(pointer: str, dtype: str) -> Fraction:
    """How many of the pointer's C type (``uchar``) one element (``float32``) takes: 4
    (a step given in bytes is 4 times one in elements); 1/4 for uchars read through a
    ``uint *``."""
    m = POINTER_TYPE.fullmatch(pointer)
    assert m is not None  # (checked where the description is read)
    size = _C_BYTES[m.group(2) or m.group(1)] * int(m.group(3) or 1)
    return Fraction(np.dtype(dtype).itemsize, size)


def _scalar_arg(
    arg: Any, value: float | int, sizes: Mapping[str, int], refuse: Callable[[str], InputError]
) -> ScalarArg:
    """A scalar argument: a size (``--scalar nx=NX``, ``w4=NX/4``) or another number."""
    axis, unit = None, 1
    text = str(arg.value.text).strip() if arg.value is not None else ""
    size = re.fullmatch(r"(NX|NY|NZ)(?:\s*/\s*([1-9]\d*))?", text)
    if arg.dtype in _SIZE_TYPES and size:
        axis = _AXES[("NX", "NY", "NZ").index(size.group(1))]
        unit = int(size.group(2) or 1)
        if sizes[size.group(1)] % unit:
            raise refuse(
                f"size argument {arg.name} = {text} does not divide the size "
                f"{size.group(1)}={sizes[size.group(1)]}; lift at a size it divides"
            )
    elif arg.dtype not in _INT_TYPES and not arg.dtype.startswith("float"):
        raise refuse(f"scalar {arg.name} has the type {arg.dtype}")
    return ScalarArg(arg.name, arg.dtype, value, axis, unit)


def _inout_refusal(kernel: TunableKernel, name: str, where: str) -> InputError:
    """An array plain mode found read and written: the refusal names what it read as a
    read and a write (plain mode's note), and the flag that says otherwise."""
    pattern = rf"{re.escape(name)}: inout\b.*?: read and written \((.*)\); random"
    said = next((m[1] for n in kernel.inferred if (m := re.match(pattern, n))), None)
    hint = (
        f"if the kernel only writes {name} (what looks like a read is not one), say so: "
        f"--role {name}=output (or --role {name}=input if it only reads it)"
    )
    if _read_where_written(kernel.source, name):  # an update in place: not an output only
        written = [a.name for a in kernel.arguments if a.kind == "buffer" and a.role != "input"]
        hint = (
            f"{name} is read at the index it writes, an update in place, which lifts "
            f"where it is the kernel's only output array (this kernel writes "
            f"{', '.join(written)})"
        )
    return InputError(
        f"cannot lift kernel {kernel.name}: array {name} is read and written"
        + (f" ({said})" if said else "")
        + "; a stencil reads its fields and writes a distinct output",
        source=where,
        hint=hint,
    )


def _read_where_written(source: str, name: str) -> bool:
    """Whether ``source`` reads array ``name`` at an index it writes: ``u[i] += ...``,
    ``u[i]++``, or ``u[i] = ... u[i] ...`` (the same index, as written)."""
    text = strip_comments(source)
    written: set[str] = set()
    read: set[str] = set()
    for m in re.finditer(rf"(?<![\w.]){re.escape(name)}\s*\[", text):
        close = match_bracket(text, m.end() - 1, "[", "]")
        index = re.sub(r"\s+", "", text[m.end() : close - 1])
        op = re.match(r"\s*(<<=|>>=|[-+*/%&|^]=|=(?!=)|\+\+|--)", text[close:])
        if op and op.group(1) == "=":
            written.add(index)
        elif op or text[: m.start()].rstrip().endswith(("++", "--")):
            return True
        else:
            read.add(index)
    return bool(written & read)


def _array_arg(
    arg: Any,
    sizes: Mapping[str, int],
    data_shape: tuple[int, ...],
    found: _Arrays,
    refuse: Callable[[str], InputError],
    kernel: TunableKernel | None = None,
) -> None:
    """One array argument (an input or the output: an array read and written is
    :func:`_in_place`'s): a field (padded or not), the output or a weights array. An
    output padded like a field is refused with the flags that lift the kernel (those of
    ``kernel``'s launch rewritten: :func:`_haloed_output`)."""
    shape = arg.shape_for(sizes)
    if arg.dtype not in _NP and arg.dtype not in STORAGE_TYPES:
        what = "weights array" if arg.role == "input" and len(shape) == 1 else "array"
        raise refuse(f"{what} {arg.name} holds {arg.dtype}; {_ELEMENTS}")
    if arg.role == "input" and len(shape) == 1:  # a filter, its entries probed as scalars
        found.weights[arg.name] = shape[0]
        found.weight_types[arg.name] = arg.dtype
        return
    if arg.pointer:  # (the shape counts elements of dtype, not of the pointer's type)
        found.views[arg.name] = (arg.pointer, _units_per_element(arg.pointer, arg.dtype))
    pad = _pad(arg, sizes, refuse) if arg.role == "input" else None
    if pad:
        found.pads[arg.name] = pad
    elif shape != data_shape:
        halo = _pad(arg, sizes, refuse) if arg.role == "output" and kernel else None
        haloed = _haloed_output(kernel, arg, halo, sizes) if halo and kernel else None
        if haloed:
            raise refuse(haloed)
        k = _size_multiple(arg, len(shape) - 1, _sizes_about(sizes)) if len(shape) > 1 else 0
        if k and not arg.pointer and len(shape) == len(data_shape):
            x = arg.shape[-1].text.strip()
            raise refuse(_bytes_hint(arg.name, x, "NX", k, len(shape)))
        raise refuse(_shape_refusal(arg.name, arg.role, shape, data_shape))
    if arg.role == "input":
        found.dtypes.add(arg.dtype)
        found.fields.append(arg.name)
    else:
        found.out_dtypes.add(arg.dtype)
        found.outputs.append(arg.name)


def _haloed_output(
    kernel: TunableKernel, arg: Any, halo: tuple[int, ...], sizes: Mapping[str, int]
) -> str | None:
    """Why an output of the problem's size plus a halo (SHOC's Stencil2D: ``data`` and
    ``newData`` both ``NX+2,NY+2``, the interior written) is refused, and the flags that
    lift it: the whole haloed array as the problem, each size less its halo in the
    launch, the scalars and the other arrays' lengths (the boundary comes out interior).
    None where no input has its shape (no halo alike: not that style)."""
    names = [n for n in ("NX", "NY", "NZ") if n in sizes]
    by_name = dict(zip(reversed(names), halo, strict=True))  # (halo is C order)
    less = {n: Expr(f"{n}-{2 * p}", "size") for n, p in by_name.items() if p}
    shape = arg.shape_for(sizes)

    def text(e: Expr) -> str:
        return re.sub(r"\s+", "", substitute(e, less).text)

    alike = [
        a.name
        for a in kernel.arguments
        if a.kind == "buffer" and a.role == "input" and a.name != arg.name
        if a.shape and a.shape_for(sizes) == shape
    ]
    if not alike:
        return None
    flags = [
        "--size " + "x".join(str(sizes[n] + 2 * by_name[n]) for n in names),
        '--global "' + ",".join(text(e) for e in kernel.launch.global_size) + '"',
    ]
    for a in kernel.arguments:
        exprs = (a.lanes or (a.value,)) if a.kind == "scalar" else tuple(reversed(a.shape))
        if a.name in (*alike, arg.name) or not any(e and e.names & set(less) for e in exprs):
            continue
        option = "--scalar" if a.kind == "scalar" else "--array"
        value = ",".join(text(e) for e in exprs if e)
        flags.append(f"{option} {a.name}=" + (f'"{value}"' if "(" in value else value))
    same = f", as {' and '.join(alike)} {'is' if len(alike) == 1 else 'are'}"
    pads = ", ".join(f"{n}{2 * by_name[n]:+d}" for n in names if by_name[n])
    dropped = " ".join(f"--array {n}=..." for n in [*alike, arg.name])
    return (
        f"array {arg.name}, the output, has the shape {list(shape)}, the problem's padded "
        f"by a halo ({pads}){same}; a definition's output is an array of the problem's "
        "shape. A kernel that writes the interior of a haloed array lifts with the whole "
        "haloed array as the problem (its boundary comes out interior, the halo as its "
        f"rim): {' '.join(flags)}, without {dropped} (each size less its halo, "
        + ", ".join(f"{n} -> {less[n].text}" for n in names if n in less)
        + ", in the launch, the scalars and the other arrays)"
    )


def _shape_refusal(
    name: str, role: str, shape: tuple[int, ...], data_shape: tuple[int, ...]
) -> str:
    """Why an array's shape is not one a definition takes, and the --array that is."""
    have = f"array {name} has the shape {list(shape)}, not the problem's {list(data_shape)}"
    sizes = ",".join(("NX", "NY", "NZ")[: len(data_shape)])
    if role == "output":
        return (
            f"{have}: a definition's output is an array of the problem's shape "
            f"(--array {name}={sizes}, or no --array)"
        )
    padded = ",".join(f"{n}+6" for n in ("NX", "NY", "NZ")[: len(data_shape)])
    why = (
        f"{have}: a definition's field is an array of the problem's shape, or of the "
        f"problem's padded alike on both sides of each axis (--array {name}={padded} for "
        "a pad of 3)"
    )
    if (
        len(shape) > 1
        and 0 < math.prod(shape) <= MAX_WEIGHT_ENTRIES
        and math.prod(shape) < math.prod(data_shape)
    ):
        why += (
            f"; if {name} is a filter (a weights array), a weights array is one-dimensional: "
            f"--array {name}={math.prod(shape)}"
        )
    return why


def _sizes_about(sizes: Mapping[str, int]) -> list[dict[str, int]]:
    """The problem size, then sizes about it, each axis moved by steps of its own (an
    expression of the sizes is checked at each: a pad or a pitch constant at one size
    only, an alignment, is not one)."""
    names = [n for n in ("NX", "NY", "NZ") if n in sizes]
    out = [dict(sizes)]
    for step in (1, 2, 3, 5, 8, 13, 16, 31, 64, 100, 1000):
        out.append({**sizes, **{n: sizes[n] + step * (k + 1) + k for k, n in enumerate(names)}})
    return out


def _pad(
    arg: Any, sizes: Mapping[str, int], refuse: Callable[[str], InputError]
) -> tuple[int, ...] | None:
    """The pad of input array ``arg`` around the problem (C order), or None: the same
    number of extra points before and after each axis, some axis padded, the same at
    the lift size and at every size about it (:func:`_sizes_about`). A shape whose
    extra points change with the size (a pitch aligned to 16) is refused."""
    extras: list[tuple[dict[str, int], tuple[int, ...]]] = []
    for env in _sizes_about(sizes):
        data = tuple(env[n] for n in ("NZ", "NY", "NX") if n in env)
        try:
            shape = arg.shape_for(env)
        except GtuneError:
            continue  # (an expression undefined at that size)
        if len(shape) != len(data):
            return None
        extras.append((env, tuple(a - b for a, b in zip(shape, data, strict=True))))
    if not extras:
        return None
    first_env, first = extras[0]
    if min(first) < 0:  # smaller than the problem along an axis: no pad at all
        return None
    for env, extra in extras[1:]:
        if extra == first:
            continue
        d = next(d for d in range(len(first)) if extra[d] != first[d])
        axis = ("NZ", "NY", "NX")[3 - len(first) + d]
        at = "x".join(str(env[n]) for n in ("NX", "NY", "NZ") if n in env)
        lift_at = "x".join(str(first_env[n]) for n in ("NX", "NY", "NZ") if n in first_env)
        k = _size_multiple(arg, d, [e for e, _ in extras])
        if k and not arg.pointer:  # 4*NX: a byte-addressed buffer of other elements?
            raise refuse(_bytes_hint(arg.name, arg.shape[d].text.strip(), axis, k, len(first)))
        why = (
            "a padded pitch that depends on alignment is not supported"
            if arg.shape[d].names & {"NX", "NY", "NZ"}
            else "a fixed length does not follow the problem's size"
        )
        padded = ",".join(f"{n}+2" for n in ("NX", "NY", "NZ")[: len(first)])
        raise refuse(
            f"the shape of {arg.name}, {arg.shape[d].text.strip()}, is not the size plus a "
            f"constant pad ({axis}{first[d]:+d} at {lift_at}, {axis}{extra[d]:+d} at {at}): "
            f"{why}; a definition's padded field is the size plus the same pad on both "
            f"sides at every size (--array {arg.name}={padded} for a pad of 1, its row "
            "pitch NX+2)"
        )
    if any(e < 0 or e % 2 or e > 2 * MAX_PAD for e in first) or not any(first):
        return None
    return tuple(e // 2 for e in first)


def _size_multiple(arg: Any, d: int, envs: Sequence[Mapping[str, int]]) -> int:
    """k where ``arg``'s shape along C axis ``d`` is k times the size there at every
    size of ``envs`` (``4*NX``), k > 1; else 0."""
    axis = ("NZ", "NY", "NX")[3 - len(arg.shape) + d]
    try:
        ks = {Fraction(arg.shape[d].evaluate_int(e), e[axis]) for e in envs}
    except GtuneError:
        return 0
    k = ks.pop() if len(ks) == 1 else Fraction(0)
    return int(k) if k.denominator == 1 and k > 1 else 0


def _bytes_hint(name: str, text: str, axis: str, k: int, dims: int) -> str:
    """Why a shape k times the size (``--array srcptr=4*NX,NY``) is refused: most likely
    a buffer of k-byte elements addressed in bytes (OpenCV's ``uchar *srcptr`` with a
    step in bytes), which ``--array NAME=TYPE:SHAPE`` says."""
    dtype = {2: "uint16", 4: "float32", 8: "float64"}.get(k, "TYPE")
    sizes = ",".join(("NX", "NY", "NZ")[:dims])
    return (
        f"the shape of {name}, {text}, is {k} times the size {axis}: is {name} a buffer "
        f"of {k}-byte elements the kernel addresses "
        "in bytes (a uchar * with its step and offset in bytes, as OpenCV's filters take "
        "their images)? lift takes the pointer's type as the element type; give the element "
        f"type and the shape in elements: --array {name}={dtype}:{sizes} (a step in bytes "
        f"is then --scalar STEP={k}*NX)"
    )


def _stored(env: Mapping[str, int], pad: tuple[int, ...], plane: bool) -> int:
    """A padded field's stored row length (``plane``: its plane size) at sizes ``env``."""
    row = env["NX"] + 2 * pad[-1]
    return row * (env["NY"] + 2 * pad[-2]) if plane else row


def pitch_doc(face: Interface) -> str:
    """What a definition's doc says of the pitches it ignores (``in_pitch``: in's padded
    row, NX+2): the tuned kernel reads the field's rows that far apart."""
    return " ".join(
        f"Its argument {s.name} is {s.pitch} (as --scalar gives it): the tuned kernel "
        f"ignores {s.name} and assumes exactly that; pass no other value."
        for s in face.scalars
        if s.pitch
    )


def _as_pitch(s: ScalarArg, arg: Any, found: _Arrays, sizes: Mapping[str, int]) -> ScalarArg:
    """``s`` marked as a pitch where it is one: an integer argument that is no size
    whose value (``--scalar in_pitch=NX+2``) equals, at every size about the lift size,
    the stored row length (or, in 3D, plane size) of a padded field, or of an array
    given another element type than its pointer's, counted in the pointer's units
    (``--scalar src_step=4*NX``: a row of floats in bytes). The tuned kernel reads that
    array's rows so far apart and ignores the argument."""
    if s.axis is not None or s.dtype not in _INT_TYPES or arg.value is None:
        return s
    if not arg.value.names & {"NX", "NY", "NZ"}:
        return s
    dims = sum(n in sizes for n in ("NX", "NY", "NZ"))
    found_as: dict[str, list[str]] = {}  # what it is -> the arrays it is that of
    for name in dict.fromkeys([*found.pads, *found.views]):
        pad = found.pads.get(name, (0,) * dims)
        pointer, units = found.views.get(name, ("", Fraction(1)))
        for plane in (False, True)[: len(pad) - 1]:
            try:
                same = all(
                    arg.value.evaluate_int(e) == _stored(e, pad, plane) * units
                    for e in _sizes_about(sizes)
                )
            except GtuneError:
                same = False
            if same:
                what = ("padded " if any(pad) else "") + ("plane size" if plane else "row length")
                unit = f" in {pointer}s" if pointer else ""
                unit = " in bytes" if pointer in ("char", "uchar") else unit
                found_as.setdefault(f"{what}{{}}{unit}", []).append(name)
    for what, names in found_as.items():  # (src_step: srcptr's, and dstptr's alike)
        text = arg.value.text.strip()
        return replace(s, pitch=f"the {what.format(' of ' + ' and '.join(names))}, {text}")
    return s


def _element_types(
    inputs: set[str], output: str, refuse: Callable[[str], InputError]
) -> tuple[str, str]:
    """The fields' element type and the output's where it differs (else ``""``): one
    type for every input; another for the output only with integer inputs (``uchar``
    pixels into ``short`` or ``float``)."""
    if len(inputs) != 1:
        raise refuse(f"its input arrays mix element types ({', '.join(sorted(inputs))})")
    dtype = inputs.pop()
    if output == dtype:
        return dtype, ""
    if dtype not in STORAGE_TYPES:
        raise refuse(
            f"it reads {dtype} and writes {output}: an output of another element type "
            "is lifted for integer inputs (uchar pixels to short or float, say) only"
        )
    if output in _NP and output != "float32":
        raise refuse(
            f"it reads {dtype} and writes {output}: a float output of integer inputs "
            "is lifted as float32 only"
        )
    return dtype, output


def plane_index_candidates(kernel: TunableKernel) -> list[str]:
    """The integer arguments that are no size (``--scalar n=NX``): those that may be the
    index of the plane one launch writes."""
    return [
        a.name
        for a in kernel.arguments
        if a.kind == "scalar"
        and not a.lanes
        and a.dtype in _INT_TYPES
        and not re.fullmatch(
            r"(NX|NY|NZ)(\s*/\s*\d+)?", str(a.value.text).strip() if a.value is not None else ""
        )
    ]


def _plane(kernel: TunableKernel, text: str, dims: int, where: str) -> tuple[str, str, str]:
    """``--plane-index k=z``: (scalar, C type, axis), checked against the kernel. The
    integer scalar ``k`` is the index of the plane along z that one launch writes (a
    kernel launched once per plane, as C loop nests are ported); it is no scalar of the
    stencil, and each probe launches every plane."""
    m = re.fullmatch(r"\s*([A-Za-z_]\w*)\s*=\s*([xyz])\s*", text)
    if m is None:
        raise InputError(
            f"expected SCALAR=AXIS (k=z: the integer argument k is the index of the plane "
            f"along z one launch writes), got {text!r}",
            source="--plane-index",
        )
    name, axis = m.group(1), m.group(2)
    arg = next((a for a in kernel.arguments if a.name == name), None)
    if arg is None or arg.kind != "scalar" or arg.dtype not in _INT_TYPES:
        raise InputError(
            f"kernel {kernel.name} has no integer argument {name} (the plane index)",
            source="--plane-index",
        )
    if _AXES.index(axis) >= dims:
        raise InputError(f"the problem is {dims}D: it has no axis {axis}", source="--plane-index")
    return name, _INT_TYPES[arg.dtype], axis


def with_weights(face: Interface, weights: Mapping[str, Sequence[float]]) -> Interface:
    """``face`` with these values for its weights arrays (the user's filter): what the
    definition records and the checks run at (the probes use values of their own)."""
    for name, values in weights.items():
        if name not in face.weights:
            known = ", ".join(face.weights) or "none"
            raise InputError(
                f"{name} is not a weights array of kernel {face.kernel_name} ({known})",
                source="--weights",
            )
        if len(values) != face.weights[name]:
            raise InputError(
                f"{name}: {len(values)} values for an array of {face.weights[name]}",
                source="--weights",
            )
        wtype = face.weight_types.get(name, face.dtype)
        if wtype not in _NP and not all(float(v).is_integer() for v in values):
            odd = next(v for v in values if not float(v).is_integer())
            raise InputError(
                f"{name} is an array of {_INT_TYPES[wtype]}: its values are whole numbers, "
                f"got {odd:g}",
                source="--weights",
            )
    scalars = tuple(
        replace(s, value=float(weights[s.entry_of][int(s.name.rsplit("[", 1)[1][:-1])]))
        if s.entry_of in weights
        else s
        for s in face.scalars
    )
    return replace(face, scalars=scalars)


def with_held(face: Interface, names: Sequence[str]) -> Interface:
    """``face`` with these arguments held at their given values (``--fixed``): each may
    change what the kernel computes (a filter's size; with integer elements, a float
    scale or offset, OpenCV's ``alpha`` and ``delta``, whose weights a definition of
    integer elements cannot take at run time), and the definition is the kernel at that
    value."""
    by_name = {s.name: s for s in face.scalars}
    lanes = [s.name for s in face.scalars if s.lane_of in names]  # a vector's name: its lanes
    names = [*(n for n in names if n not in {s.lane_of for s in face.scalars}), *lanes]
    for name in names:
        s = by_name.get(name)
        if s is None or s.entry_of:
            known = ", ".join(n for n, a in by_name.items() if not a.entry_of) or "none"
            raise InputError(
                f"{name} is not a scalar argument of kernel {face.kernel_name} ({known})",
                source="--fixed",
            )
        if s.axis is not None or (s.dtype.startswith("float") and face.dtype in _NP):
            kind = (
                "a size"
                if s.axis is not None
                else "a float scalar of a float kernel (a weight, which the definition "
                "keeps as a coefficient)"
            )
            raise InputError(
                f"{name} is {kind}; --fixed holds an integer argument that is no size, or "
                "a float argument of a kernel of integer elements",
                source="--fixed",
            )
    return replace(face, held=face.held | frozenset(names))


def _weight_entries(
    name: str, wtype: str, n: int, dtype: str, refuse: Callable[[str], InputError]
) -> list[ScalarArg]:
    """A weights array's entries, each probed like a scalar (``filter[7]``): an array of
    ``wtype`` elements for fields of ``dtype``. Float fields take weights of their own
    type (the tuned kernel reads them as such); integer fields (computed in float32)
    take float32 or integer weights."""
    if not 1 <= n <= MAX_WEIGHT_ENTRIES:
        raise refuse(
            f"weights array {name} has {n} entries; lift probes at most {MAX_WEIGHT_ENTRIES}"
        )
    if dtype in _NP and wtype != dtype:
        raise refuse(
            f"the weights array {name} holds {wtype} and its fields {dtype}: with float "
            f"fields a weights array holds their type (its entries are probed with fractions; "
            "an integer weights array is lifted with integer fields, uchar pixels, only)"
        )
    if dtype not in _NP and wtype == "float64":
        raise refuse(
            f"the weights array {name} holds float64: with integer elements a definition "
            "computes in float32, so its weights arrays hold float32 or integers"
        )
    made_up = _weight_values(n, integer=dtype not in _NP, whole=wtype not in _NP)
    return [ScalarArg(f"{name}[{i}]", wtype, v, entry_of=name) for i, v in enumerate(made_up)]


def _weight_values(n: int, integer: bool = False, whole: bool = False) -> list[float]:
    """The weights a lifted definition records for an array of ``n`` when the user gives
    none (``--weights``): distinct, of both signs, exact in binary; for integer fields
    (an unsigned output clamps a negative response to 0, hiding it) small positive
    fractions, and whole numbers in an integer array."""
    if whole:
        return [float(1 + i % 8) for i in range(n)]
    if integer:
        return [(1 + i % 8) / 16.0 for i in range(n)]
    return [(1 if i % 2 == 0 else -1) * (0.5 + (i % 32) / 64.0) for i in range(n)]


# ---------------------------------------------------------------------------------
# Numbers


def _base_values(n: int) -> list[float]:
    """Distinct scalar values exact in binary (products and doublings stay exact)."""
    first = [1.25, 0.75, 1.375, 0.625, 1.125, 0.875, 1.5, 0.5625, 1.1875, 0.8125]
    out = first[:n]
    k = 0
    while len(out) < n:
        out.append(1.0 + (2 * k + 1) / 64.0)
        k += 1
    return out


def nice_number(x: float, tol: float) -> float:
    """The simplest number within ``tol`` of ``x``: a small fraction, else the shortest
    decimal (a kernel's ``0.2f`` reads back as 0.2 plus rounding)."""
    if abs(x) <= tol:
        return 0.0
    for den in range(1, 65):
        num = round(x * den)
        if num != 0 and abs(num / den - x) <= tol:
            return num / den
    for digits in range(1, 18):
        v = float(f"{x:.{digits}g}")
        if abs(v - x) <= tol:
            return v
    return float(x)


def _number_text(x: float) -> str:
    frac = Fraction(x).limit_denominator(64)
    if float(frac) == x and frac.denominator > 1 and frac.denominator not in (2, 4, 5, 8):
        return f"{frac.numerator}/{frac.denominator}"
    if float(x).is_integer():
        return str(int(x))
    return repr(float(x))


def _monomial_value(m: _Monomial, values: Mapping[str, float | int]) -> float:
    out = m.factor * math.prod(float(values[n]) for n in m.names)
    return out / math.prod(float(values[n]) for n in m.divisors)


def _rim_value(rim: str) -> str | float:
    """The definition file's ``rim``: copy, or the constant as a number."""
    return rim if rim == RIM_COPY else float(rim)


def _coefficient_text(
    k: float, names: Sequence[str], divisors: Sequence[str] = ()
) -> int | float | str:
    if divisors:
        return Coefficient(k, tuple(sorted(names)), tuple(sorted(divisors))).text()
    if not names:
        text = _number_text(k)
        if "/" in text:
            return text
        return int(text) if re.fullmatch(r"-?\d+", text) else float(text)
    if k == 1.0:
        return "*".join(names)
    if k == -1.0:
        return "-" + "*".join(names)
    return _number_text(k) + "*" + "*".join(names)


@dataclass
class _Monomial:
    factor: float
    names: tuple[str, ...]  # a name repeated is a power
    divisors: tuple[str, ...] = ()  # names it is divided by (repeated: a power)


def _sum_text(monomials: Sequence[_Monomial]) -> str:
    """``1 - 6*dt*nu``: a sum of products as a person writes it."""
    text = ""
    for m in monomials:
        part = str(_coefficient_text(m.factor, m.names, m.divisors))
        if not text:
            text = part
        elif part.startswith("-"):
            text += " - " + part[1:]
        else:
            text += " + " + part
    return text


# ---------------------------------------------------------------------------------
# The probing


def rim_of(radius: Sequence[int], shape: Sequence[int]) -> np.ndarray:
    """The points of an array of ``shape`` within ``radius`` of an edge (True there)."""
    rim = np.ones(tuple(shape), bool)
    rim[tuple(slice(r, n - r) for r, n in zip(radius, shape, strict=True))] = False
    return rim


def primary_view(
    face: Interface, offsets: Mapping[str, Sequence[tuple[int, ...]]]
) -> tuple[str, tuple[slice, ...]]:
    """The primary field (the first read off the centre, else the first) and the slices
    of its array over the output's points (its pad skipped)."""
    moved = [f for f in face.fields if any(any(o) for o in offsets[f])]
    primary = (moved or list(face.fields))[0]
    pad = face.pads.get(primary, (0,) * face.dims)
    return primary, tuple(slice(p, p + n) for p, n in zip(pad, face.shape, strict=True))


@dataclass
class Lifted:
    """What probing found (before it becomes a definition)."""

    boundary: str
    radius: tuple[int, ...]  # per array axis (C order)
    terms: dict[Slot, list[_Monomial]]
    constant: list[_Monomial]
    coefficients: tuple[str, ...]  # float scalars that are factors, signature order
    rim: str = RIM_KEEP  # the interior boundary's rim: kept, a copy or a constant
    band: str = BAND_RADIUS  # the interior's points: the radius or (one-sided) the reach


class _Lifter:
    def __init__(self, face: Interface, probe: Probe, seed: int) -> None:
        self.face = face
        self._probe = probe
        self.rng = np.random.default_rng(seed)
        self.t = _NP[face.dtype]
        self.eps = float(np.finfo(self.t).eps)
        self.launches = 0
        floats = face.float_scalars
        self.base: dict[str, float | int] = {s.name: s.value for s in face.scalars}
        self.base.update(
            {s.name: v for s, v in zip(floats, _base_values(len(floats)), strict=True)}
        )
        self.user: dict[str, float | int] = {s.name: s.value for s in face.scalars}
        self.entries = {s.name for s in face.scalars if s.entry_of}

    # -- running ------------------------------------------------------------------
    def run(
        self,
        inputs: Mapping[str, np.ndarray],
        out_init: np.ndarray,
        scalars: Mapping[str, float | int],
    ) -> np.ndarray:
        full = {
            f: inputs.get(f, np.zeros(self.face.field_shape(f), self.t)) for f in self.face.fields
        }
        if self.face.weights:  # the entries of weights arrays travel as the arrays
            for w, n in self.face.weights.items():
                full[w] = np.array([scalars[f"{w}[{i}]"] for i in range(n)], self.t)
            scalars = {k: v for k, v in scalars.items() if k not in self.entries}
        self.launches += 1
        out = np.asarray(self._probe(full, out_init, scalars))
        if out.shape != self.face.shape:
            raise GtuneError(f"a probe returned the shape {out.shape}, not {self.face.shape}")
        return out

    def random(self, wide: bool = False, kind: str = "uniform", name: str = "") -> np.ndarray:
        """Uniform in [-1, 1); ``wide``: times 10**[-3, 3); ``kind="bits"``: 0 or 1; in
        the stored shape of field ``name`` (default: the output's)."""
        shape = self.face.field_shape(name) if name else self.face.shape
        if kind == "bits":
            return self.rng.integers(0, 2, shape).astype(self.t)
        a = self.rng.uniform(-1.0, 1.0, shape)
        if wide:
            a *= 10.0 ** self.rng.uniform(-3.0, 3.0, shape)
        return a.astype(self.t)

    def impulses(self, points: Sequence[tuple[int, ...]], name: str = "") -> np.ndarray:
        """Ones at these points of the problem (of field ``name``: at the point plus
        its pad)."""
        pad = self.face.pads.get(name, (0,) * self.face.dims)
        a = np.zeros(self.face.field_shape(name) if name else self.face.shape, self.t)
        for p in points:
            a[tuple(v + q for v, q in zip(p, pad, strict=True))] = 1.0
        return a

    def refuse(self, why: str, kind: type[NotAStencil] = NotAStencil) -> NotAStencil:
        return self.face.refuse(why, kind)

    def where(self, p: Sequence[int]) -> str:
        """A point as the user writes it: x first."""
        return (
            "(" + ", ".join(f"{a}={int(v)}" for a, v in zip(_AXES, reversed(p), strict=False)) + ")"
        )

    def offset_text(self, field_name: str, off: Sequence[int]) -> str:
        return f"{field_name}[{', '.join(str(int(v)) for v in reversed(off))}]"

    # -- 0. an update in place --------------------------------------------------------
    def in_place(self) -> None:
        """An update in place (``face.inplace``, the output that is also a field, one
        buffer): the points it writes, from two launches on random inputs (a point
        written takes another value, one left keeps its own). From here on a launch
        returns the kernel's output at those points and the initial output elsewhere,
        as an out-of-place kernel's, and the method reads it as one. A kernel whose
        output does not depend on what the array held (plain mode took a write for a
        read) is read as an out-of-place kernel of that output."""
        name, raw = self.face.inplace, self._probe
        written = np.zeros(self.face.shape, bool)
        runs = []
        for _ in range(2):
            inputs = {f: self.random(name=f) for f in self.face.fields}
            runs.append((inputs, self.run(inputs, inputs[name], self.base)))
            written |= ~(runs[-1][1] == inputs[name])
        if not written.any():
            raise self.refuse(f"it leaves {name} as it was, on random inputs too (writes nothing)")
        inputs, out = runs[0]
        other = {**inputs, name: self.random(name=name)}
        if np.array_equal(self.run(other, other[name], self.base)[written], out[written]):
            self.face = replace(
                self.face, fields=tuple(f for f in self.face.fields if f != name), inplace=""
            )
            self._probe = lambda inputs, out_init, scalars: raw(
                {**inputs, name: out_init}, out_init, scalars
            )
            return
        self._probe = lambda inputs, out_init, scalars: np.where(
            written, raw(inputs, out_init, scalars), out_init
        )

    def read_in_place(self, points: Sequence[tuple[int, ...]], centre: tuple[int, ...]) -> None:
        """An impulse in the field updated in place changes ``points``: the point
        written alone, or a refusal (its neighbours' values, old or already updated,
        depend on the order the work-items run in)."""
        moved = [p for p in points if p != centre]
        if moved:
            off = tuple(c - v for c, v in zip(centre, moved[0], strict=True))
            name = self.face.inplace
            raise self.refuse(
                f"it updates {name} in place and reads it at {self.offset_text(name, off)}, "
                "not only at the point it writes: each work-item would read points others "
                "may have updated already, so the result depends on the order they run in; "
                f"an update in place reads {name} at the point it writes only (write the "
                "update into another array)"
            )

    # -- 1. what it writes ----------------------------------------------------------
    def written_region(self) -> None:
        if self.face.inplace:
            self.in_place()
        face = self.face
        self.r1, r2 = self.random(), self.random()
        self.zero_out = self.run({}, self.r1, self.base)
        o2 = self.run({}, r2, self.base)
        untouched = (self.zero_out == self.r1) & (o2 == r2)
        written = ~untouched
        if not written.any():
            raise self.nothing_written()
        if not np.isfinite(self.zero_out[written]).all():
            raise self.refuse("with every input zero it writes NaN or infinity")
        depends = written & ~(self.zero_out == o2)
        if depends.any():
            p = tuple(np.argwhere(depends)[0])
            raise self.refuse(
                f"what it writes depends on what {face.output} held before the launch (at "
                f"{self.where(p)}): it reads its output"
            )
        idx = np.argwhere(written)
        lo, hi = idx.min(axis=0), idx.max(axis=0) + 1
        box = np.zeros_like(written)
        box[tuple(slice(int(a), int(b)) for a, b in zip(lo, hi, strict=True))] = True
        if not np.array_equal(box, written):
            p = tuple(np.argwhere(box & ~written)[0])
            raise self.refuse(
                f"the points it writes are not a box (e.g. {self.where(p)} is skipped): "
                "neither the interior nor every point",
                PartialWrite,
            )
        shape = np.array(face.shape)
        self.off_centre: NotAStencil | None = None
        if not np.array_equal(lo, shape - hi):  # one-sided (band: reach), once the offsets
            axis = _AXES[face.dims - 1 - int(np.argmax(lo != shape - hi))]  # are known
            self.off_centre = self.refuse(
                f"it writes an off-centre band along {axis} ({self._band(lo, hi)}); a definition "
                "writes every point, the interior or (a one-sided stencil) the points whose "
                "taps all lie inside the array",
                PartialWrite,
            )
        self.lo, self.hi = tuple(int(v) for v in lo), tuple(int(v) for v in hi)
        self.written = written
        values = self.zero_out[written]
        if not (values == values.flat[0]).all():
            p = tuple(np.argwhere(written & (self.zero_out != values.flat[0]))[0])
            raise self.refuse(
                "with every input zero its output differs from point to point (e.g. at "
                f"{self.where(p)}): it depends on the position, not only on the neighbours"
            )

    def nothing_written(self) -> NotAStencil:
        """The refusal of a kernel that, every input zero, leaves its output as it was:
        it writes nothing, or (random inputs change the output) it adds to what the
        output held, an update in place (``--role hz=output`` given for an array it
        reads and writes)."""
        out_name = self.face.output
        inputs = {f: self.random(name=f) for f in self.face.fields}
        if np.array_equal(self.run(inputs, self.r1, self.base), self.r1, equal_nan=True):
            return self.refuse(f"it leaves its output {out_name} as it was (writes nothing)")
        return self.refuse(
            f"with every input zero it leaves its output {out_name} as it was, but random "
            f"inputs change it: it adds to what {out_name} held ({out_name} = {out_name} + "
            f"...), an update in place; lift it with {out_name} read and written, as plain "
            f"mode reads it (--role {out_name}=inout, not output)"
        )

    def _band(self, lo: np.ndarray, hi: np.ndarray) -> str:
        return ", ".join(
            f"{a} {int(lo[d])}..{int(hi[d]) - 1}"
            for d, a in zip(reversed(range(self.face.dims)), _AXES, strict=False)
        )

    # -- 1b. linearity ----------------------------------------------------------------
    def linearity(self) -> None:
        """out(a + b) = out(a) + out(b) - out(0) for random a, b (at the base scalars):
        uniform values, then 0/1 values (which a rule on counts, like Life's, reacts to)."""
        face = self.face
        z = self.zero_out.astype(np.float64)
        for kind in ("uniform", "bits"):
            x = {f: self.random(kind=kind, name=f) for f in face.fields}
            y = {f: self.random(kind=kind, name=f) for f in face.fields}
            xy = {f: (x[f] + y[f]).astype(self.t) for f in face.fields}
            ox, oy, oxy = (self.run(v, self.r1, self.base).astype(np.float64) for v in (x, y, xy))
            if not (np.isfinite(ox).all() and np.isfinite(oy).all() and np.isfinite(oxy).all()):
                raise self.refuse("with random inputs it writes NaN or infinity")
            scale = sum(float(np.max(np.abs(a))) for a in (ox, oy, oxy, z))
            off = ~(np.abs(oxy - (ox + oy - z)) <= 256 * self.eps * scale)
            if off.any():
                p = tuple(np.argwhere(off)[0])
                raise self.refuse(
                    "it is not linear in its inputs: out(a + b) differs from out(a) + out(b) "
                    f"- out(0) at {int(off.sum())} of {off.size} points (e.g. {self.where(p)}; "
                    f"{'random' if kind == 'uniform' else 'random 0/1'} inputs): min/max, "
                    "products of inputs, thresholds or data-dependent branches"
                    + (
                        " (an input array that holds weights is a weights array when its "
                        "--array shape is its length: --array filter=25)"
                        if len(face.fields) > 1
                        else ""
                    )
                )

    # -- 2. the footprint of each field -----------------------------------------------
    def footprints_checked(self) -> None:
        """:meth:`linearity`, then :meth:`footprints`; a kernel that writes an off-centre
        band and fails either is refused for its band, as before one-sided stencils
        lifted (a launch with its dimensions in the wrong order writes one too)."""
        try:
            if self.face.inplace:  # its own reads first: order-dependent ones look nonlinear
                centre = tuple(n // 2 for n in self.face.shape)
                out = self.run(
                    {self.face.inplace: self.impulses([centre], self.face.inplace)},
                    self.r1,
                    self.base,
                )
                changed = [tuple(int(v) for v in p) for p in np.argwhere(out != self.zero_out)]
                self.read_in_place(changed, centre)
            self.linearity()
            self.footprints()
        except PartialWrite:
            raise
        except InputError as e:
            if self.off_centre is None:
                raise
            raise self.off_centre from e

    def footprints(self) -> None:
        face = self.face
        centre = tuple(n // 2 for n in face.shape)
        self.offsets: dict[str, list[tuple[int, ...]]] = {}
        for f in sorted(face.fields, key=lambda f: f != face.inplace):  # in place: first
            out = self.run({f: self.impulses([centre], f)}, self.r1, self.base)
            changed = ~(out == self.zero_out)
            outside = changed & ~self.written
            if outside.any():
                p = tuple(np.argwhere(outside)[0])
                raise self.refuse(
                    f"an impulse in {f} changes {self.where(p)}, a point it does not write "
                    "when every input is zero: the points it writes depend on the data"
                )
            points = [tuple(int(v) for v in p) for p in np.argwhere(changed)]
            if not points:
                moved = [
                    self.run({f: self.random(kind=k, name=f)}, self.r1, self.base)
                    for k in ("uniform", "bits")
                ]
                if any(not np.array_equal(m, self.zero_out) for m in moved):
                    raise self.refuse(
                        f"an impulse in {f} changes nothing but random values in it do: a "
                        "threshold or rule, not a weighted sum"
                    )
                raise self.refuse(
                    f"its output does not depend on {f}; every field of a definition is read"
                )
            if f == face.inplace:
                self.read_in_place(points, centre)
            for p in points:
                for d in range(face.dims):
                    if p[d] != centre[d] and p[d] in (self.lo[d], self.hi[d] - 1):
                        raise InputError(
                            f"cannot lift kernel {face.kernel_name}: an impulse in {f} at the "
                            f"centre reaches the edge of the {self._shape_text()} array; lift "
                            f"with a larger --size (a stencil reaches {MAX_OFFSET} points at "
                            "most; a response that runs to the edge at every size is a "
                            "recursive filter or a scan, not a stencil)",
                            source=face.label,
                        )
            offs = sorted({tuple(c - v for c, v in zip(centre, p, strict=True)) for p in points})
            big = [o for o in offs if max(abs(v) for v in o) > MAX_OFFSET]
            if big:
                raise self.refuse(
                    f"it reads {self.offset_text(f, big[0])}, beyond the largest offset a "
                    f"definition holds ({MAX_OFFSET})"
                )
            self.offsets[f] = offs
        self.radius = tuple(
            max(abs(o[d]) for offs in self.offsets.values() for o in offs) for d in range(face.dims)
        )
        margin = self.lo
        self.unless_steps: NotAStencil | None = None
        self.band = BAND_RADIUS
        if self.off_centre is not None:
            self.one_sided(self.off_centre)
            return
        if all(m == 0 for m in margin):
            self.boundary = "clamp"
        elif tuple(margin) == self.radius:
            self.boundary = "interior"
        else:
            rad = ", ".join(
                f"{a} {self.radius[d]}"
                for d, a in zip(reversed(range(face.dims)), _AXES, strict=False)
            )
            refusal = self.refuse(
                f"it writes {self._band(np.array(self.lo), np.array(self.hi))} but its stencil "
                f"reaches {rad}: a definition writes every point (clamp) or exactly the points "
                "at least the radius from each edge (interior)"
            )
            ratios = {
                r // m if m and r % m == 0 else 0
                for r, m in zip(self.radius, margin, strict=True)
                if r or m
            }
            if len(ratios) != 1 or min(ratios) < 2 or len(face.fields) > 1:
                raise refusal
            # k steps with a fixed rim (each writes the points at least its radius, the
            # margin, from the edges): the probes go on; refused unless as_steps finds them
            self.boundary, self.unless_steps = "interior", refusal
        self.rim = RIM_KEEP
        if self.boundary == "clamp":  # out = in, or a constant, on a rim it writes apart?
            self.written_rim()

    def one_sided(self, refusal: NotAStencil) -> None:
        """A kernel that writes an off-centre band: the interior with ``band: reach`` if
        the band is exactly the points whose taps all lie inside the array (a one-sided,
        upwind or forward-difference stencil writing up to the edge it does not read
        beyond), else ``refusal`` with where its taps lie inside."""
        face = self.face
        offsets = [o for offs in self.offsets.values() for o in offs]
        below = tuple(max([0, *(-o[d] for o in offsets)]) for d in range(face.dims))
        above = tuple(max([0, *(o[d] for o in offsets)]) for d in range(face.dims))
        top = tuple(n - h for n, h in zip(face.shape, self.hi, strict=True))
        if face.pads:  # a padded input's pad holds its neighbours: written everywhere
            raise refusal
        if self.lo != below or top != above:
            inside = np.array(face.shape) - np.array(above)
            raise self.refuse(
                f"{refusal.why.split(';')[0]}, not the points whose taps all lie inside the "
                f"array ({self._band(np.array(below), inside)}): a definition writes every "
                "point, the interior or (a one-sided stencil) those points",
                PartialWrite,
            )
        self.boundary, self.band, self.rim = "interior", BAND_REACH, RIM_KEEP

    def written_rim(self) -> None:
        """A kernel that writes every point, on its rim (as wide as the radius) a copy of
        the primary field or a constant and the stencil inside (``out = in`` or ``out =
        0`` at the edges, as exercises write it): the interior boundary with ``rim: copy``
        or ``rim: <constant>``, the probes that follow confined to the interior (the
        checks test the rim too)."""
        face = self.face
        if not any(self.radius):
            return
        rim = rim_of(self.radius, face.shape)
        if not rim.any() or rim.all():
            return
        primary, at = primary_view(face, self.offsets)
        copies, constant = True, True
        for _ in range(2):
            inputs = {f: self.random(name=f) for f in face.fields}
            out = self.run(inputs, self.r1, self.base)
            copies &= bool(np.array_equal(out[rim], inputs[primary][at][rim]))
            constant &= bool(np.array_equal(out[rim], self.zero_out[rim]))
        if copies:
            self.rim = RIM_COPY
        elif constant and float(self.zero_out[rim][0]) == float(self.zero_out[~rim].flat[0]):
            self.rim = repr(float(self.zero_out[rim][0]))
        else:
            return
        self.boundary = "interior"
        self.lo = tuple(self.radius)
        self.hi = tuple(n - r for n, r in zip(face.shape, self.radius, strict=True))
        self.written = ~rim

    def rim_refusal(self) -> NotAStencil | None:
        """A kernel that writes every point, the stencil inside and on the rim (as wide as
        the radius) a copy of an input or a constant that :meth:`written_rim` cannot
        express (a copy of another field than the primary one, a constant other than the
        one written inside): the refusal that says so, or None."""
        face = self.face
        if not any(self.radius) or any(self.lo):
            return None
        rim = rim_of(self.radius, face.shape)
        inputs = {f: self.random(name=f) for f in face.fields}
        out = self.run(inputs, self.r1, self.base)
        copied = [
            f
            for f in face.fields
            if face.field_shape(f) == face.shape and np.array_equal(out[rim], inputs[f][rim])
        ]
        if copied:
            what = f"a copy of {copied[0]}"
        elif np.array_equal(out[rim], self.zero_out[rim]):
            what = f"the constant {float(self.zero_out[rim][0]):g}"
        else:
            return None
        wide = ", ".join(
            f"{a} {self.radius[d]}" for d, a in zip(reversed(range(face.dims)), _AXES, strict=False)
        )
        return self.refuse(
            f"it writes {what} on its rim ({wide} wide) and the stencil inside; a definition "
            "reads clamped neighbours at the edges (clamp), leaves the rim as it was "
            "(interior) or writes there a copy of its primary field or the constant it "
            "writes inside with every input zero (rim): let the kernel skip the rim (write "
            "it apart) or clamp its reads"
        )

    def other_boundary(self, definition: StencilDefinition) -> bool:
        """Whether a kernel that writes every point reads beyond the edges otherwise than
        ``definition`` clamps: 0 there (zero padding, taps beyond the edge skipped), or
        the point the wrap, reflect or symmetric boundary maps a tap to. Its output on
        random inputs misses the clamped reference and matches that boundary's; then the
        boundary becomes the definition's (the checks that follow test it everywhere)."""
        if definition.boundary != "clamp" or not any(self.radius) or definition.pads:
            return False
        names = (*definition.coefficients, *weight_entries(definition.weights))
        vals = {n: float(self.user[n]) for n in names}
        inputs = {f: self.random(name=f) for f in self.face.fields}
        out = self.run(inputs, self.r1, self.user).astype(np.float64)
        tol = definition.tolerance(1.0, vals)

        def matches(d: StencilDefinition) -> bool:
            ref = d.reference(dict(inputs), self.r1, vals).astype(np.float64)
            return bool((np.abs(out - ref) <= tol).all())

        boundary = matching_boundary(definition, self.radius, self.face.shape, matches)
        if boundary is None:
            return False
        self.boundary = boundary
        return True

    def _shape_text(self) -> str:
        return "x".join(str(n) for n in reversed(self.face.shape))

    # -- 3. coefficients as functions of the scalars -----------------------------------
    def slots(self) -> list[Slot]:
        return [(f, o) for f in self.face.fields for o in self.offsets[f]] + [CONSTANT]

    def _cells(self) -> list[tuple[int, ...]] | None:
        """Impulse positions, one per field plus a blank one, whose responses neither
        overlap nor reach the edge of the written region, nor read a tap beyond an edge
        of the array (at least twice the radius inside: a mirrored boundary reads an
        impulse one point inside again beyond the edge); None if they do not fit."""
        axes = []
        for d in range(self.face.dims):
            r = self.radius[d]
            start = max(self.lo[d] + r, 2 * r)
            stop = min(self.hi[d] - r, self.face.shape[d] - 2 * r)
            axes.append(range(start, stop, 2 * r + 2))
        cells = list(itertools.islice(itertools.product(*axes), len(self.face.fields) + 1))
        return cells if len(cells) == len(self.face.fields) + 1 else None

    def slot_values(
        self, scalars: Mapping[str, float | int], height: Mapping[str, float] | None = None
    ) -> dict[Slot, float]:
        """Every coefficient and the constant at these scalar values; ``height``: each
        field's impulse, a power of two (the responses are divided by it, exactly)."""
        face = self.face
        cells = self._cells()
        values: dict[Slot, float] = {}
        h = {f: (height or {}).get(f, 1.0) for f in face.fields}
        if cells is not None:
            inputs = {
                f: self.impulses([c], f) * self.t(h[f])
                for f, c in zip(face.fields, cells, strict=False)
            }
            out = self.run(inputs, self.r1, scalars).astype(np.float64)
            const = float(out[cells[-1]])
            values[CONSTANT] = const
            for f, c in zip(face.fields, cells, strict=False):
                for o in self.offsets[f]:
                    p = tuple(ci - oi for ci, oi in zip(c, o, strict=True))
                    values[(f, o)] = (float(out[p]) - const) / h[f]
        else:
            zero = self.run({}, self.r1, scalars).astype(np.float64)
            centre = tuple(n // 2 for n in face.shape)
            const = float(zero[centre])
            values[CONSTANT] = const
            for f in face.fields:
                out = self.run({f: self.impulses([centre], f) * self.t(h[f])}, self.r1, scalars)
                out = out.astype(np.float64)
                for o in self.offsets[f]:
                    p = tuple(ci - oi for ci, oi in zip(centre, o, strict=True))
                    values[(f, o)] = (float(out[p]) - const) / h[f]
        bad = [s for s, v in values.items() if not math.isfinite(v)]
        if bad:
            changed = {k: v for k, v in scalars.items() if v != self.base.get(k)}
            shown = ", ".join(f"{k}={v:g}" for k, v in changed.items()) or "its base values"
            raise self.refuse(
                f"with {shown} it writes NaN or infinity: a scalar divides, or enters "
                "otherwise than as a factor"
            )
        return values

    def noise(self, *values: float) -> float:
        return 64 * self.eps * (sum(abs(v) for v in values) + 1e-30)

    def relevance(self) -> None:
        """The weights at the base values, and which scalars each one depends on (each
        float scalar doubled in turn). Where the kernel adds a constant term, the
        impulses are raised above it first (:meth:`_heights`)."""
        slots = self.slots()
        first = self.slot_values(self.base)
        self.heights = self._heights(first)
        base = first
        if any(h != 1.0 for h in self.heights.values()):
            base = self.slot_values(self.base, self.heights)
        self.base_values = base
        # the base probe must agree with the footprints found one field at a time
        for f in self.face.fields:
            for o in self.offsets[f]:
                if base[(f, o)] == 0.0:
                    raise self.rim_refusal() or self.refuse(
                        f"the weight of {self.offset_text(f, o)} changes with the position of "
                        "the impulse: not shift-invariant"
                    )
        relevant: dict[Slot, set[str]] = {s: set() for s in slots}
        for s in self.face.float_scalars:
            doubled = dict(self.base)
            doubled[s.name] = 2 * float(self.base[s.name])
            vals = self.slot_values(doubled, self.heights)
            for slot in slots:
                h = self._height(slot)  # the constant's rounding, at the impulse's height
                around = (base[slot], vals[slot], base[CONSTANT] / h, vals[CONSTANT] / h)
                if abs(vals[slot] - base[slot]) > self.noise(*around):
                    relevant[slot].add(s.name)
        self.relevant = relevant

    def coefficients(self) -> None:
        """Each weight as a sum of products of scalars, each scalar at most to the first
        power: a Moebius inversion over the scalars set to zero or their base value."""
        slots = self.slots()
        relevant = self.relevant
        order = [s.name for s in self.face.float_scalars]
        cache: dict[frozenset[str], dict[Slot, float]] = {}

        def at(subset: frozenset[str]) -> dict[Slot, float]:
            if subset not in cache:
                scalars = dict(self.base)
                for name in order:
                    if name not in subset:
                        scalars[name] = 0.0
                cache[subset] = self.slot_values(scalars, self.heights)
            return cache[subset]

        self.monomials: dict[Slot, list[_Monomial]] = {}
        for slot in slots:
            names = [n for n in order if n in relevant[slot]]
            if len(names) > MAX_INTERACTING:
                raise self.refuse(
                    f"{self._slot_text(slot)} depends on {len(names)} scalars "
                    f"({', '.join(names)}); at most {MAX_INTERACTING} can be told apart"
                )
            terms: list[_Monomial] = []
            for k in range(len(names) + 1):
                for subset in itertools.combinations(names, k):
                    total, scale = 0.0, 0.0
                    for j in range(len(subset) + 1):
                        for sub in itertools.combinations(subset, j):
                            v = at(frozenset(sub))[slot]
                            c = at(frozenset(sub))[CONSTANT]
                            total += (-1) ** (len(subset) - j) * v
                            scale += abs(v) + abs(c) / self._height(slot)
                    prod = math.prod(float(self.base[n]) for n in subset)
                    # zero below the noise; snapped to a simple number within rounding
                    if abs(total) <= self.noise(scale):
                        continue
                    factor = nice_number(total / prod, 4 * self.eps * scale / prod)
                    if factor != 0.0:
                        terms.append(_Monomial(factor, tuple(subset)))
            if slot != CONSTANT and not terms:
                raise self.refuse(
                    f"the weight of {self._slot_text(slot)} vanishes when the scalars are "
                    "taken apart: it is not a sum of products of scalars"
                )
            self.monomials[slot] = terms
        self._used()

    def _used(self) -> None:
        """The scalars the weights use, in signature order, of the element type."""
        order = [s.name for s in self.face.float_scalars]
        used = {n for ms in self.monomials.values() for m in ms for n in m.names + m.divisors}
        self.used = tuple(n for n in order if n in used)
        for s in self.face.float_scalars:
            if s.name in used and s.dtype != self.face.dtype:
                raise self.refuse(
                    f"scalar {s.name} is a {s.dtype} factor of the weights but the arrays hold "
                    f"{self.face.dtype}; a definition's coefficients have the element type"
                )

    # -- 3b. quotients and powers: monomials with integer exponents -------------------
    def laurent(self) -> None:
        """Each weight as a sum of monomials ``k * prod(s**e)`` with integer exponents
        in -2..2 (``step/Cap``, ``dt*alpha/(dx*dx)``, ``1 - 4*c*c``): which exponents
        each scalar enters with (that scalar alone at six values), then the factors of
        every candidate monomial by least squares at random values, snapped to simple
        numbers and checked at fresh values. The impulses are raised above a constant
        term (:meth:`_heights`), whose rounding would otherwise drown the weights."""
        slots = self.slots()
        names = [
            s.name
            for s in self.face.float_scalars
            if any(s.name in r for r in self.relevant.values())
        ]

        def measure(scalars: Mapping[str, float | int]) -> dict[Slot, float]:
            return self.slot_values(scalars, self.heights)

        exps: dict[Slot, dict[str, list[int]]] = {slot: {} for slot in slots}
        grid = np.array([[t**e for e in EXPONENTS] for t in (1.0, *_SCALES)])
        base = self.base_values
        for name in names:
            b = float(self.base[name])
            vals = [base] + [measure({**self.base, name: b * t}) for t in _SCALES]
            for slot in slots:
                if name not in self.relevant[slot]:
                    continue
                y = np.array([v[slot] for v in vals])
                a = np.linalg.lstsq(grid, y, rcond=None)[0]
                # noise: the weight's own rounding and the constant's, at its impulse
                floor = max(float(np.max(np.abs(a))), max(self._noise(slot, v) for v in vals))
                keep = [
                    e
                    for e, ai in zip(EXPONENTS, a, strict=True)
                    if abs(ai) > _FIT * self.eps * floor
                ]
                exps[slot][name] = keep
        # counted before they are listed: a weight of nine scalars has 5**9 candidates
        most = max(math.prod(len(v) for v in e.values()) for e in exps.values())
        if most > MAX_MONOMIALS:
            raise self.refuse(
                f"a weight would be a sum of {most} monomials of the scalars; at most "
                f"{MAX_MONOMIALS} are told apart"
            )
        candidates = {
            slot: [dict(zip(e, c, strict=True)) for c in itertools.product(*e.values())]
            for slot, e in exps.items()
        }
        points = [self._random_scalars(names) for _ in range(most + 4)]
        measured = [measure(p) for p in points]
        self.monomials = {}
        for slot in slots:
            self.monomials[slot] = self._fit(slot, candidates[slot], points, measured)
        for wide in (False, True):
            fresh = self._random_scalars(names, wide)
            got = measure(fresh)
            for slot in slots:
                want = sum(_monomial_value(m, fresh) for m in self.monomials[slot])
                if abs(got[slot] - want) > _SNAP * self.eps * (self._noise(slot, got) + abs(want)):
                    raise self.refuse(
                        f"{self._slot_text(slot)} is not a sum of products of scalars with "
                        f"integer powers from -2 to 2 (at fresh values it is {got[slot]:.7g}, "
                        f"the fit gives {want:.7g})"
                    )
        self._used()

    def _heights(self, base: Mapping[Slot, float]) -> dict[str, float]:
        """Each field's impulse height: 1, or where the kernel adds a constant term
        (Rodinia HotSpot's literal ``amb_temp = 80.0f``) the power of two that puts the
        field's smallest weight at the base values (``base``) ``_ABOVE`` times above it.
        The output at an impulse is rounded relative to the constant plus the weight, so
        a weight measured at height 1 below a large constant keeps the constant's
        rounding, and the fit's small terms and snapped factors go astray (``-1.9999``);
        at a height h the response is h times the weight, divided by h exactly."""
        const = abs(base[CONSTANT])
        top = float(np.finfo(self.t).max) * 2.0**-40  # far from overflowing
        heights: dict[str, float] = {}
        for f in self.face.fields:
            weights = [abs(base[(f, o)]) for o in self.offsets[f]]
            if const == 0.0 or not weights or min(weights) == 0.0:
                heights[f] = 1.0
                continue
            k = max(0, math.ceil(math.log2(_ABOVE * const / min(weights))))
            while k > 0 and 2.0**k * max(weights) > top:
                k -= 1
            heights[f] = 2.0**k
        return heights

    def _height(self, slot: Slot) -> float:
        """The impulse height a slot is measured at (the constant's: 1)."""
        return self.heights.get(slot[0], 1.0)

    def _noise(self, slot: Slot, measured: Mapping[Slot, float]) -> float:
        """The magnitude one measured weight is rounded relative to: the weight, and the
        constant term divided by its field's impulse height (the constant: itself)."""
        if slot == CONSTANT:
            return abs(measured[CONSTANT])
        return abs(measured[slot]) + abs(measured[CONSTANT]) / self._height(slot)

    def _random_scalars(self, names: Sequence[str], wide: bool = False) -> dict[str, float | int]:
        """The base values with ``names`` each scaled by a random k/16 in [0.5, 2]
        (``wide``: in [0.25, 0.5] or [2, 4], outside the fit's range)."""
        out = dict(self.base)
        for n in names:
            k = int(self.rng.integers(8, 33))
            if wide:
                k = int(self.rng.choice([self.rng.integers(4, 8), self.rng.integers(33, 65)]))
            out[n] = float(self.base[n]) * k / 16.0
        return out

    def _fit(
        self,
        slot: Slot,
        candidates: Sequence[Mapping[str, int]],
        points: Sequence[Mapping[str, float | int]],
        measured: Sequence[Mapping[Slot, float]],
    ) -> list[_Monomial]:
        """The monomials of one weight: a least-squares fit over every candidate, then
        again over those well above the noise (a small system, well conditioned). Each
        factor is snapped to a simple number within its rounding: the measurements'
        (:meth:`_noise`, a constant term's included) carried through the fit."""
        y = np.array([m[slot] for m in measured])
        noise = np.array([self._noise(slot, m) for m in measured])
        if not noise.any():
            return []
        kept = list(candidates)
        for floor in (math.sqrt(self.eps), _FIT * self.eps):
            if not kept:
                return []
            rows = np.array(
                [[math.prod(float(p[n]) ** e for n, e in c.items()) for c in kept] for p in points]
            )
            k = np.linalg.lstsq(rows, y, rcond=None)[0]
            # how far each factor may be off: every measurement off by its rounding
            err = np.abs(np.linalg.pinv(rows)) @ noise
            size = [
                abs(float(ki)) * math.prod(abs(float(self.base[n])) ** e for n, e in c.items())
                for c, ki in zip(kept, k, strict=True)
            ]
            top = max(size)
            pairs = [
                (c, float(ki), float(ei))
                for c, ki, ei, z in zip(kept, k, err, size, strict=True)
                if z > floor * top
            ]
            kept = [c for c, _, _ in pairs]
        out: list[_Monomial] = []
        for c, ki, ei in pairs:
            factor = nice_number(ki, _ROUNDING * self.eps * (abs(ki) + ei))
            if factor == 0.0:  # no larger than its rounding
                continue
            names = tuple(sorted(n for n, e in c.items() for _ in range(max(e, 0))))
            divisors = tuple(sorted(n for n, e in c.items() for _ in range(max(-e, 0))))
            out.append(_Monomial(factor, names, divisors))
        return out

    def _slot_text(self, slot: Slot) -> str:
        if slot == CONSTANT:
            return "the constant term"
        return f"the weight of {self.offset_text(slot[0], slot[1])}"

    def lifted(self) -> Lifted:
        return Lifted(
            rim=self.rim,
            band=self.band,
            boundary=self.boundary,
            radius=self.radius,
            terms={s: m for s, m in self.monomials.items() if s != CONSTANT},
            constant=self.monomials[CONSTANT],
            coefficients=self.used,
        )

    # -- 4. the checks ---------------------------------------------------------------
    def check(self, definition: StencilDefinition) -> None:
        face = self.face
        names = (*definition.coefficients, *weight_entries(definition.weights))
        values = {n: float(self.user[n]) for n in names}
        base = {n: float(self.base[n]) for n in names}

        def compare(
            inputs: Mapping[str, np.ndarray],
            scalars: Mapping[str, float | int],
            vals: Mapping[str, float],
        ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
            out = self.run(inputs, self.r1, scalars)
            ref = definition.reference(dict(inputs), self.r1, vals)
            big = max((float(np.max(np.abs(a))) for a in inputs.values()), default=0.0)
            tol = definition.tolerance(big, vals)
            bad = ~(np.abs(out.astype(np.float64) - ref.astype(np.float64)) <= tol)
            return out, ref, bad

        # shift invariance and the boundary: impulses over the whole array
        steps = [2 * r + 2 for r in self.radius]
        for f in face.fields:
            for phase in (0, 1):
                grid = tuple(slice(phase * (s // 2), None, s) for s in steps)
                inputs = {g: np.zeros(face.field_shape(g), self.t) for g in face.fields}
                inputs[f][grid] = 1.0
                _, _, bad = compare(inputs, self.base, base)
                if bad.any():
                    p = tuple(np.argwhere(bad)[0])
                    near_edge = any(
                        p[d] < self.radius[d] or p[d] >= face.shape[d] - self.radius[d]
                        for d in range(face.dims)
                    )
                    if near_edge and self.boundary != "interior":
                        raise self.rim_refusal() or self.refuse(
                            f"near the edges (e.g. at {self.where(p)}) {EDGE_MISMATCH}"
                        )
                    raise self.refuse(
                        f"impulses in {f} away from the centre give another response (e.g. at "
                        f"{self.where(p)}): not shift-invariant"
                    )
        # the definition reproduces the kernel everywhere
        settings: list[tuple[str, dict[str, float | int], dict[str, float]]] = [
            ("the given scalar values", dict(self.user), values)
        ]
        if face.float_scalars:
            rand = dict(self.user)
            for s in face.float_scalars:
                rand[s.name] = float(self.t(self.rng.uniform(0.5, 1.5) * self.rng.choice([-1, 1])))
            settings.append(("random scalar values", rand, {n: float(rand[n]) for n in names}))
        for what, scalars, vals in settings:
            for wide in (False, True):
                inputs = {f: self.random(wide, name=f) for f in face.fields}
                out, ref, bad = compare(inputs, scalars, vals)
                if bad.any():
                    p = tuple(np.argwhere(bad)[0])
                    raise self.refuse(
                        f"with random inputs and {what} the stencil found by impulses does not "
                        f"reproduce its output at {int(bad.sum())} of {bad.size} points (e.g. "
                        f"{self.where(p)}: {float(out[p]):.7g}, the definition gives "
                        f"{float(ref[p]):.7g}); data-dependent branches, nonlinear terms, or "
                        "a scalar that is not a factor of the weights?"
                    )
        # integer scalars other than sizes must not matter
        inputs = {f: self.random(name=f) for f in face.fields}
        plain = self.run(inputs, self.r1, self.user)
        for s in face.scalars:
            if s.axis is not None or s.dtype.startswith("float") or s.name in face.held or s.pitch:
                continue
            other = dict(self.user)
            other[s.name] = int(s.value) - 1 if int(s.value) > 1 else int(s.value) + 1
            try:
                changed = self.run(inputs, self.r1, other)
            except GtuneError:
                changed = None
            if changed is None or not np.array_equal(changed, plain, equal_nan=True):
                raise self.refuse(
                    f"the integer argument {s.name} (given {s.value}) changes the output; "
                    "an integer argument of a definition is a size (--scalar "
                    f"{s.name}=NX, NY or NZ, or NX/4 for a width in float4s), a padded "
                    "field's row pitch (NX+2 for --array in=NX+2,NY+2), unused, or "
                    f"held at its value (--fixed {s.name}: a filter's size; the tuned "
                    f"kernel then computes the stencil at {s.name} = {s.value} only)"
                )


# ---------------------------------------------------------------------------------
# From probes to a definition


def lift_probe(face: Interface, probe: Probe, *, seed: int = 1) -> tuple[Lifted, _Lifter]:
    """Probe a kernel and return what it computes (not yet checked)."""
    lifter = _Lifter(face, probe, seed)
    lifter.written_region()
    lifter.footprints_checked()
    lifter.relevance()
    lifter.coefficients()
    return lifter.lifted(), lifter


def definition_data(
    face: Interface,
    lifted: Lifted,
    *,
    name: str,
    doc: str = "",
    original: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """The definition file's data for what probing found."""
    dims = face.dims

    def xyz(off: Sequence[int]) -> list[int]:
        return [int(v) for v in reversed(off)]

    terms: list[dict[str, Any]] = []
    for (f, off), monomials in lifted.terms.items():
        for m in monomials:
            item: dict[str, Any] = {"field": f}
            if any(off):
                item["offset"] = xyz(off)[:dims]
            item["coefficient"] = _coefficient_text(m.factor, m.names, m.divisors)
            terms.append(item)
    data: dict[str, Any] = {"name": name}
    doc = " ".join(part for part in (doc, pitch_doc(face)) if part)
    if doc:
        data["doc"] = doc
    data.update(
        {
            "dims": dims,
            "dtype": face.dtype,
            "boundary": lifted.boundary,
            **({"rim": _rim_value(lifted.rim)} if lifted.rim != RIM_KEEP else {}),
            **({"band": lifted.band} if lifted.band != BAND_RADIUS else {}),
            "fields": list(face.fields),
            "output": face.output,
            **({"inplace": True} if face.inplace else {}),
        }
    )
    entries = {s.name: s for s in face.scalars if s.entry_of}
    scalars = [n for n in lifted.coefficients if n not in entries]
    if scalars:
        data["coefficients"] = scalars
    for w in face.weights:
        if not any(entries[n].entry_of == w for n in lifted.coefficients if n in entries):
            raise face.refuse(f"its output does not depend on the weights array {w}")
    if face.weights:  # the weights the probes used (the tuning draws random ones)
        data["weights"] = {
            w: [float(entries[f"{w}[{i}]"].value) for i in range(n)]
            for w, n in face.weights.items()
        }
    data["terms"] = terms
    if face.pads:  # a padded input (x first, like the offsets)
        data["pad"] = {f: xyz(p) for f, p in face.pads.items()}
    if len(lifted.constant) > 1:
        raise face.refuse(
            "its constant term is a sum of products of scalars ("
            + _sum_text(lifted.constant)
            + "); a definition's constant is one product"
        )
    if lifted.constant:
        m = lifted.constant[0]
        data["constant"] = _coefficient_text(m.factor, m.names, m.divisors)
    by_name = {s.name: s for s in face.scalars}
    if scalars:
        data["values"] = {n: float(by_name[n].value) for n in scalars}
    arguments: list[Any] = []
    for arg in face.order:
        s = by_name.get(arg)
        lanes = [v for v in face.scalars if v.lane_of == arg]
        if lanes:  # a vector scalar (uint2 dims): of sizes, else held at its value
            arguments.append(_vector_entry(arg, lanes))
        elif arg in face.locals:  # kept in its place, unused: the host still passes it
            ctype, shape = face.locals[arg]
            arguments.append({"name": arg, "type": ctype, "local": True, "shape": list(shape)})
        elif face.plane is not None and arg == face.plane[0]:  # one launch writes every plane
            arguments.append({"name": arg, "type": face.plane[1], "ignored": True, "value": 0})
        elif arg in face.pointers:  # the original's pointer type, kept in the tuned kernel
            arguments.append({"name": arg, "pointer": face.pointers[arg]})
        elif s is None or arg in lifted.coefficients:
            arguments.append(arg)
        elif s.axis is not None:
            sized: dict[str, Any] = {"name": arg, "type": _SIZE_TYPES[s.dtype], "size": s.axis}
            if s.unit != 1:
                sized["unit"] = s.unit
            arguments.append(sized)
        else:
            ctype = (
                ("float" if s.dtype == "float32" else "double")
                if s.dtype.startswith("float")
                else _INT_TYPES[s.dtype]
            )
            value: float | int = float(s.value) if s.dtype.startswith("float") else int(s.value)
            arguments.append({"name": arg, "type": ctype, "ignored": True, "value": value})
    data["kernel"] = {"name": face.kernel_name, "arguments": arguments}
    if original is not None:
        data["original"] = dict(original)
    return data


def _vector_entry(name: str, lanes: Sequence[ScalarArg]) -> dict[str, Any]:
    """A vector scalar's entry in ``kernel.arguments``: a vector of sizes where every
    lane is one (``{type: uint2, size: [x, y]}``), else ignored, passed its lifted value
    (its lanes are sizes, held with ``--fixed`` or shown to change nothing)."""
    first = lanes[0]
    if all(v.axis is not None and v.unit == first.unit for v in lanes):
        sized: dict[str, Any] = {
            "name": name,
            "type": f"{_SIZE_TYPES[first.dtype]}{len(lanes)}",
            "size": [v.axis for v in lanes],
        }
        return {**sized, "unit": first.unit} if first.unit != 1 else sized
    floats = first.dtype.startswith("float")
    ctype = (
        ("float" if first.dtype == "float32" else "double") if floats else _INT_TYPES[first.dtype]
    )
    value = [float(v.value) if floats else int(v.value) for v in lanes]
    return {"name": name, "type": f"{ctype}{len(lanes)}", "ignored": True, "value": value}


def build_definition(
    face: Interface, lifted: Lifted, *, name: str, source: str, **kw: Any
) -> StencilDefinition:
    data = definition_data(face, lifted, name=name, **kw)
    sums = [
        (slot, ms) for slot, ms in lifted.terms.items() if len(ms) > 1 and any(m.names for m in ms)
    ]
    try:
        definition = parse_definition(data, source)
    except InputError:
        if not sums:
            raise
        (f, off), ms = sums[0]
        shown = _sum_text(ms)
        raise face.refuse(
            f"the weight of {f}[{', '.join(str(v) for v in reversed(off))}] is {shown}, a sum "
            "of products of scalars; a definition's coefficient is one product"
        ) from None
    others = [f for f in definition.pads if f != definition.primary_field]
    if others:
        raise face.refuse(
            f"its input {others[0]} is padded but is not the stencil's primary field "
            f"({definition.primary_field}); the template pads only that one"
        )
    viewed = [f for f in definition.fields if f in face.pointers and f != definition.primary_field]
    if viewed:
        raise face.refuse(
            f"its input {viewed[0]} is given another element type than its pointer's but is "
            f"not the stencil's primary field ({definition.primary_field}); the template "
            "reads only that one and the output through another pointer type"
        )
    return definition


def lift_with(
    face: Interface,
    probe: Probe,
    *,
    name: str,
    source: str = "<lifted>",
    doc: str = "",
    original: Mapping[str, Any] | None = None,
    seed: int = 1,
) -> tuple[StencilDefinition, int]:
    """Probe, build the definition and check it: (definition, launches used).

    Weights are first read as sums of products of scalars (each to the first power);
    where that fails and a weight depends on a scalar, as sums of monomials with
    integer powers from -2 to 2 (a scalar that divides or enters squared)."""
    kw: dict[str, Any] = {"name": name, "source": source, "doc": doc, "original": original}
    if face.dtype in STORAGE_TYPES:  # integer elements: a staircase, not a linear map
        from gtune.stencils.lift_int import lift_integer

        return lift_integer(face, probe, seed=seed, **kw)
    lifter = _Lifter(face, probe, seed)
    lifter.written_region()
    face = lifter.face  # (an array taken for one updated in place that is an output only)
    lifter.footprints_checked()
    lifter.relevance()
    try:
        lifter.coefficients()
        definition = _bounded_and_checked(lifter, face, kw, source)
    except NotAStencil as first:
        if not any(lifter.relevant.values()):
            raise _with_steps_hint(lifter, first) from None
        try:
            lifter.laurent()
            definition = _bounded_and_checked(lifter, face, kw, source)
        except NotAStencil as second:
            why = first.why  # the same twice: the boundary, say (no reading of weights helps)
            if second.why != first.why:
                why = f"{first.why}; read with powers from -2 to 2: {second.why}"
            raise _with_steps_hint(lifter, face.refuse(why)) from None
    return definition, lifter.launches


def _bounded_and_checked(
    lifter: _Lifter, face: Interface, kw: dict[str, Any], source: str
) -> StencilDefinition:
    """The lifted definition with the boundary the kernel has (taps beyond the edge
    clamped, 0, or mapped by wrap, reflect or symmetric), as steps or checked. k
    clamped steps of a symmetric stencil read, as one stencil, what the symmetric
    boundary reads (each step's mirror image is even about the edge): then the steps,
    the kernel's own form, which temporal blocking serves too."""
    definition = build_definition(face, lifter.lifted(), **kw)
    if lifter.other_boundary(definition):  # taps beyond the edge read 0 or mapped
        clamped, definition = definition, build_definition(face, lifter.lifted(), **kw)
        if definition.boundary in MAPPED_BOUNDARIES:
            stepped = as_steps(clamped, lifter.run, lifter.random, source, lifter.user, lifter.rng)
            if stepped is not None:
                lifter.boundary = clamped.boundary
                return stepped
    return _stepped_or_checked(lifter, definition, source)


def _stepped_or_checked(
    lifter: _Lifter, definition: StencilDefinition, source: str
) -> StencilDefinition:
    """``definition`` as several steps per launch of a smaller stencil where it is one
    (``steps: k``), else checked as one step; a kernel that writes less than its
    stencil reaches is such steps or refused."""
    stepped = as_steps(definition, lifter.run, lifter.random, source, lifter.user, lifter.rng)
    if stepped is not None:  # one launch is several steps of a smaller stencil
        return stepped
    if lifter.unless_steps is not None:  # writes less than its reach: steps or nothing
        raise lifter.refuse(f"{lifter.unless_steps.why}; {not_steps(definition)}")
    lifter.check(definition)
    return definition


def _with_steps_hint(lifter: _Lifter, refusal: NotAStencil) -> NotAStencil:
    """``refusal``, with what keeps a launch that looks like several steps of a smaller
    stencil from lifting as such, and what lifts."""
    scalars = [s.name for s in lifter.face.float_scalars if not s.entry_of]
    hint = steps_hint(lifter.base_values, lifter.face.fields, scalars, lifter.eps)
    return lifter.refuse(f"{refusal.why}; {hint}", type(refusal)) if hint else refusal


# ---------------------------------------------------------------------------------
# A real kernel


def default_launch(kernel: TunableKernel) -> tuple[list[str], list[int] | None]:
    """The kernel's shipped launch: global sizes as expressions of the problem size,
    local sizes as numbers."""
    cfg = shipped_config(kernel)
    glob: list[str] = []
    for e in kernel.launch.global_size:
        text = str(e.text)
        for k, v in cfg.items():
            text = re.sub(rf"\b{re.escape(k)}\b", str(v), text)
        glob.append(text)
    _, loc = kernel.launch_sizes(cfg)
    return glob, list(loc) if loc is not None else None


# ---------------------------------------------------------------------------------
# Tuning a lifted definition: the original kernel is the reference and the baseline


def shipped_config(kernel: TunableKernel) -> dict[str, int]:
    """The configuration a plain kernel ships with: its default (``--default``), else
    every parameter at its first value (the reference plain mode takes)."""
    cfg = kernel.default_config()
    if cfg is None:
        cfg = {p.name: p.domain.values(dict(kernel.sizes))[0] for p in kernel.parameters}
    return cfg


def original_output_file(kernel: TunableKernel) -> Path | None:
    """The recorded original output a kernel from :func:`against_original` reads."""
    if kernel.reference.target != "gtune.stencils.reference:recorded_output":
        return None
    return Path(str(kernel.reference.args["file"]))

"""Render a stencil into the optimizing template and derive its description.

The template (package data ``gtune/data/templates/stencil.cl``) holds every
optimization of seed 001 Table 1 behind -D macros; rendering only writes the stencil:
its extent per axis, the element type, the boundary, the kernel's name and arguments, an
X-macro listing the primary field's offsets with their coefficients (compile-time
numbers or run-time scalar arguments), the other fields' terms and a constant. The
description carries the tunable parameters, their constraints, the launch geometry, the
data-loading techniques (seed 001 §6.1's four, plus streaming: along z through local
memory for 3D arrays, along y through registers for 2D arrays),
the static features and the numpy reference.

A stencil is a :class:`~gtune.stencils.definition.StencilDefinition` (what a user writes
in ``NAME.stencil.yaml``); :class:`WeightedStencil`, the generated suite's form, is one
with a single field, constant weights and the interior boundary, plus the synthetic
arithmetic intensity and the generator's features.
"""

from __future__ import annotations

import itertools
import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from importlib import resources
from pathlib import Path
from typing import Any

import numpy as np
import yaml

from gtune.exceptions import InputError
from gtune.features import from_offsets
from gtune.outfiles import check_targets, write_text
from gtune.stencils.definition import (
    BAND_RADIUS,
    MAPPED_BOUNDARIES,
    RIM_KEEP,
    Coefficient,
    KernelArg,
    StencilDefinition,
    from_weights,
    literal,
    load_definition,
    vector_of,
    weight_entries,
)

Offset = tuple[int, int, int]
TEMPLATE = "stencil.cl"
_MARKER = "/* STENCIL */"

# Most partial sums a streaming work-item keeps (its outputs per plane or row times the
# queue length 2*RZ+1 or 2*RY+1): beyond about this many registers a GPU kernel spills to
# memory.
STREAM_QUEUE_MAX = 128
# Most outputs per plane (3D) or row (2D) a streaming work-item computes (BX*CX*CY, or
# BX*CX): every one is unrolled, so NVIDIA's compiler took 8-40 s per configuration
# beyond 32 (2D stencils in 3D arrays, whose queue is one plane long), and no streaming
# configuration with more ever won in the H100 stores under benchmarks/results (55
# kernel-shapes).
STREAM_OUTS_MAX = 32
# The vector technique's outputs per work-item and block (BX * BY * BZ): the accumulators
# of every row of a block live at once, with the rows of input they share.
VEC_OUTS_MAX = 64
# Most input values a work-item of temporal streaming (TB > 1) holds in registers
# between issuing the next plane's (2D: rows') global loads and storing them into level
# 0's ring: the block's plane with its halo over the work-group, (SBX+2*TB*RX) *
# (SBY+2*TB*RY) / (WX*WY) in 3D, (SBX+2*TB*RX) / WX in 2D. The loads are unrolled, as
# one-step streaming's outputs are, so the same bound holds.
TEMPORAL_LOADS_MAX = 32

# Most 32-bit registers a work-group of temporal streaming with the z-neighbours in
# registers (ZREG = 1, 2) may fill with its queues and loads: a GPU compute unit's
# register file (65,536 on NVIDIA since Kepler, AMD's CDNA alike), one work-group per
# unit. A work-item of 1,024 gets at most 64 registers on NVIDIA; values beyond spill
# to memory (the kernel still runs: the measurement decides). Half the file (32,768)
# cut TB = 4 at heat3d's best blocks (64 x 32 on 512 work-items: 39,936), the depth
# whose DRAM traffic per step is half TB = 2's (benchmarks/results/temporal/
# zreg-analysis.md).
ZREG_GROUP_REGISTERS = 65536

TB_VALUES = (1, 2, 4, 8, 16)
"""Time steps per launch the temporal technique tries (those that divide the steps)."""
# Temporal tiles' rows per work-item (TR): on the H200, jacobi2d 8192^2 8 steps at TB 4
# went from 153 % of copy (TR 1) to 187 % (TR 4, 8), 180 % (TR 2)
# (benchmarks/results/h200-limit/tile-rows/)
TR_VALUES = (1, 2, 4, 8)

SIZE_3D = {"NX": 256, "NY": 256, "NZ": 256}
SIZE_2D = {"NX": 4096, "NY": 4096}
"""Default problem sizes of a definition (``--size`` overrides them)."""

_NUMPY_TYPE = {
    "int": "int32",
    "uint": "uint32",
    "long": "int64",
    "ulong": "uint64",
    "short": "int16",
    "ushort": "uint16",
    "char": "int8",
    "uchar": "uint8",
    "float": "float32",
    "double": "float64",
}


def template_source() -> str:
    """The template's text, found relative to the package (never the cwd)."""
    return (resources.files("gtune") / "data" / "templates" / TEMPLATE).read_text()


@dataclass(frozen=True)
class WeightedStencil:
    """``dst[p] = sum_k w_k * f(src[p + offset_k])`` over interior points ``p``.

    The generated suite's stencils: a :class:`StencilDefinition` with one field ``src``,
    output ``dst``, compile-time weights and the interior boundary (:attr:`definition`),
    plus the synthetic arithmetic ``intensity`` and the generator's ``features``.
    ``weights`` are float32-exact (multiples of 2**-12 for generated stencils) so the
    OpenCL literal and the numpy reference hold the same number. ``array_dims`` is 3
    (``[NZ, NY, NX]``) or 2 (``[NY, NX]``, offsets with ``dz == 0``).
    """

    name: str
    offsets: tuple[Offset, ...]
    weights: tuple[float, ...]
    intensity: int = 1
    array_dims: int = 3
    features: Mapping[str, Any] = field(default_factory=dict)
    doc: str = ""

    def __post_init__(self) -> None:
        if len(self.offsets) != len(self.weights) or not self.offsets:
            raise InputError(f"stencil {self.name}: need one weight per offset, at least one")
        if self.intensity not in (1, 2):
            raise InputError(f"arithmetic intensity must be 1 or 2, got {self.intensity}")
        if self.array_dims not in (2, 3):
            raise InputError(f"array_dims must be 2 or 3, got {self.array_dims}")
        if self.array_dims == 2 and any(o[2] for o in self.offsets):
            raise InputError(f"stencil {self.name}: a 2D array has no z offsets")

    @property
    def definition(self) -> StencilDefinition:
        """The stencil as a definition (kernel ``stencil(src, dst)``)."""
        d = from_weights(self.name, self.offsets, self.weights, dims=self.array_dims, doc=self.doc)
        return replace(d, kernel_name="stencil")

    @property
    def extent(self) -> tuple[int, int, int]:
        """Radius along x, y, z: the halo the kernel skips and local memory caches."""
        return (
            max(abs(o[0]) for o in self.offsets),
            max(abs(o[1]) for o in self.offsets),
            max(abs(o[2]) for o in self.offsets),
        )

    @property
    def flops_per_point(self) -> int:
        """One multiply and one add per element read, times the intensity (§8.3.8)."""
        return 2 * self.intensity * len(self.offsets)


Stencil = WeightedStencil | StencilDefinition


def _as_definition(stencil: Stencil) -> tuple[StencilDefinition, int]:
    if isinstance(stencil, WeightedStencil):
        return stencil.definition, stencil.intensity
    return stencil, 1


# ---------------------------------------------------------------------------------------
# Source

_OPENCL_WORDS = frozenset(
    re.split(
        r"\s+",
        """auto break case char const continue default do double else enum extern float for goto
    if inline int long register restrict return short signed sizeof static struct switch
    typedef union unsigned void volatile bool half uchar ushort uint ulong size_t ptrdiff_t
    intptr_t uintptr_t kernel __kernel global __global local __local constant __constant
    private __private read_only __read_only write_only __write_only read_write image2d_t
    image3d_t sampler_t event_t true false NULL min max clamp abs fabs mad fma sqrt exp log
    pow sin cos select dot vload2 vload4 vload8 vload16 vstore2 vstore4 vstore8 vstore16
    shuffle shuffle2 barrier get_global_id get_local_id get_group_id get_local_size
    get_global_size get_num_groups read_imagef write_imagef convert_float convert_int""",
    )
)


def c_names(d: StencilDefinition) -> dict[str, str]:
    """The C identifier of every kernel argument: its own name unless the template or
    OpenCL C uses it (then ``name_v``, made unique). Argument names in the description
    stay the user's; OpenCL binds arguments by position."""
    reserved = set(re.findall(r"[A-Za-z_][A-Za-z0-9_]*", template_source())) | _OPENCL_WORDS
    reserved -= {"src", "dst"}  # the template's own argument names, kept as they were
    taken = {a.name for a in d.arguments}
    out: dict[str, str] = {}
    for a in d.arguments:
        name = a.name
        if name in reserved:
            name = f"{a.name}_v"
            k = 2
            while name in reserved or name in taken:
                name = f"{a.name}_v{k}"
                k += 1
            taken.add(name)
        out[a.name] = name
    return out


def _kernel_args(d: StencilDefinition, names: Mapping[str, str]) -> list[str]:
    primary = d.primary_field
    args: list[str] = []
    for a in d.arguments:
        n = names[a.name]
        elem = "ELEM" if d.storage else "REAL"  # integer elements: arithmetic in REAL
        if a.kind == "field" and a.pointer:  # (the primary field: _pointer_lines)
            args.append("SRC_VIEW")
        elif a.kind == "field":
            args.append("SRC_ARG" if a.name == primary else f"__global const {elem} *restrict {n}")
        elif a.kind == "output" and a.pointer:  # the original's pointer type, DST a view of it
            args.append(f"__global {a.pointer} *restrict {n}")
        elif a.kind == "output":  # (integer elements: OUT_ELEM, the output's type)
            aliased = "" if d.inplace else "restrict "  # in place: DST is a field too
            args.append(f"__global {'OUT_ELEM' if d.storage else 'REAL'} *{aliased}DST")
        elif a.kind == "coefficient":
            args.append(f"const REAL {n}")
        elif a.kind == "weights":  # read at run time, as the original takes them
            args.append(f"__constant REAL *restrict {n}")
        elif a.kind == "local":  # the original's tile, which its host sizes: unused
            args.append(f"__local {a.type} *{n}")
        else:
            args.append(f"const {a.type} {n}")
    return args


def _pointer_lines(d: StencilDefinition, names: Mapping[str, str]) -> list[str]:
    """``SRC`` and ``DST``: the primary field's and the output's names, or, where the
    original declares the buffer with another pointer type (``uchar *srcptr`` holding
    floats, addressed in bytes), a view of it as the definition's elements; the kernel
    takes it with the original's type (``SRC_VIEW``), but as an image (IMAGE)."""
    args = {a.name: a for a in d.arguments}
    src, dst = names[d.primary_field], names[d.output]
    lines = [] if src == "src" or args[d.primary_field].pointer else [f"#define SRC {src}"]
    if args[d.primary_field].pointer:
        lines += [
            "#if IMAGE",
            f"#define SRC {src}",
            "#define SRC_VIEW SRC_ARG",
            "#else",
            f"#define SRC ((__global const ELEM *){src})",
            f"#define SRC_VIEW __global const {args[d.primary_field].pointer} *restrict {src}",
            "#endif",
        ]
    if args[d.output].pointer:
        lines.append(f"#define DST ((__global OUT_ELEM *){dst})")
    elif dst != "dst":
        lines.append(f"#define DST {dst}")
    return lines


def _pad_lines(d: StencilDefinition) -> list[str]:
    """The primary field's pad (``SRC_PAD_X`` ...); the template pads no other field."""
    others = [f for f in d.pads if f != d.primary_field]
    if others:
        raise InputError(
            f"pad.{others[0]}: only the stencil's primary field ({d.primary_field}, the "
            "first field read at an offset) may be padded",
            source=d.source or d.name,
        )
    if d.primary_field not in d.pads:
        return []
    px, py, pz = d.pad_of(d.primary_field)
    return [f"#define SRC_PAD_X {px}", f"#define SRC_PAD_Y {py}", f"#define SRC_PAD_Z {pz}"]


def _xmacro(name: str, items: Sequence[str]) -> list[str]:
    lines = [f"#define {name} \\"]
    return lines + [f"    {t} \\" for t in items[:-1]] + [f"    {items[-1]}"]


def _separable_lines(d: StencilDefinition, names: Mapping[str, str]) -> list[str]:
    """A separable stencil's factors (:func:`separable_factors`), which 2D streaming and
    the vector technique may sum axis by axis: ``SEP_X_TERMS(T)`` ... term by term, the
    common scalar factor on the last axis's weights. Nothing for another stencil."""
    factors = separable_factors(d)
    if factors is None:
        return []
    scale = separable_scale(d)
    terms: list[str] = []
    for i, (axis, factor) in enumerate(zip("XYZ", factors, strict=False)):
        by = scale if i == len(factors) - 1 else Coefficient()

        def weight(w: float, by: Coefficient = by) -> str:
            return replace(by, factor=w).render(names, d.dtype)

        terms += _xmacro(f"SEP_{axis}_TERMS(T)", [f"T({o}, {weight(w)})" for o, w in factor])
    return terms


def render_source(stencil: Stencil) -> str:
    """The template with the stencil's definitions at the marker."""
    d, intensity = _as_definition(stencil)
    names = c_names(d)
    if d.weights_fixed:  # the weights are numbers: each entry written as its value
        names.update({n: literal(v, d.dtype) for n, v in weight_entries(d.weights).items()})
    rx, ry, rz = d.radius
    primary = d.primary_field
    head = (
        f"/* stencil {d.name}: {len(d.terms)} points, extent x{rx} y{ry} z{rz}, "
        f"intensity {intensity} (generated by gtune) */"
    )
    extra_notes = []
    if len(d.fields) > 1:
        extra_notes.append(f"fields {', '.join(d.fields)} (primary {primary})")
    if d.dtype != "float32":
        extra_notes.append(d.dtype)
    if d.storage:  # integer elements: global, local, vec (and 2D streaming: element_techniques)
        more = " and stream" if integer_streams(d) else ""
        extra_notes.append(_elements_text(d) + f", tuned with global, local, vec{more}")
    if d.inplace:
        extra_notes.append(f"{d.output} updated in place")
    if d.boundary != "interior":
        extra_notes.append(f"{d.boundary} boundary")
    elif d.band != BAND_RADIUS:
        extra_notes.append(f"band {d.band}")
    if extra_notes:
        head = head[:-3] + "; " + "; ".join(extra_notes) + " */"
    lines = [
        head,
        f"#define RX {rx}",
        f"#define RY {ry}",
        f"#define RZ {rz}",
        f"#define QUEUE_Y {2 * ry + 1}",
        f"#define QUEUE_Z {2 * rz + 1}",
        f"#define INTENSITY {intensity}",
        f"#define ARRAY_DIMS {d.dims}",
    ]
    if d.dtype == "float64":
        lines += [
            "#pragma OPENCL EXTENSION cl_khr_fp64 : enable",
            "#define REAL double",
            "#define UREAL ulong",
        ]
    if d.storage:
        from gtune.stencils.elements import STORAGE_TYPES, store_macro, store_vector_macro

        real = "double" if d.dtype == "float64" else "float"
        lines += [  # (the template sets OUT_ELEM with ELEM: both, or neither)
            f"#define ELEM {STORAGE_TYPES[d.storage]}",
            f"#define OUT_ELEM {STORAGE_TYPES.get(d.out_storage, 'REAL')}",
        ]
        if d.out_integer:  # (a float output stores each result as computed)
            lines.append(store_macro(d.out_storage, d.convert, real))
            lines.append(store_vector_macro(d.out_storage, d.convert, real))
    if d.boundary != "interior":  # every point written (clamp, zero)
        lines.append("#define CLAMP 1")
    if d.boundary == "zero":  # a neighbour beyond an edge reads 0
        lines.append("#define ZERO 1")
    if d.boundary in MAPPED_BOUNDARIES:  # wrap, reflect, symmetric
        lines.append(f"#define BORDER {MAPPED_BOUNDARIES[d.boundary]}")
    if d.weights and not d.weights_fixed:  # weights read at run time: read once a work-item
        lines.append("#define WQ_HOIST 1")
    lines += _rim_lines(d)
    lines += _band_lines(d)
    lines += _pad_lines(d)
    if d.kernel_name != "stencil":
        lines.append(f"#define KERNEL_NAME {d.kernel_name}")
    lines += _pointer_lines(d, names)
    args = _kernel_args(d, names)
    if args != ["SRC_ARG", "__global REAL *restrict DST"]:
        lines += _xmacro("KERNEL_ARGS", [a + "," for a in args[:-1]] + [args[-1]])
    dtype = d.dtype
    main = [
        f"T({dx}, {dy}, {dz}, {t.coefficient.render(names, dtype)})"
        for t in d.terms_of(primary)
        for dx, dy, dz in [t.offset]
    ]
    lines += _xmacro("STENCIL_TERMS(T)", main)
    lines += _separable_lines(d, names)
    extra = [
        f"E({names[t.field]}, {t.offset[0]}, {t.offset[1]}, {t.offset[2]}, "
        f"{t.coefficient.render(names, dtype)})"
        for t in d.terms
        if t.field != primary
    ]
    if extra:
        lines += _xmacro("EXTRA_TERMS(E)", extra)
    if not d.constant.is_zero:
        lines.append(f"#define CONSTANT_TERM {d.constant.render(names, dtype)}")
    text = template_source()
    if _MARKER not in text:
        raise InputError(f"template {TEMPLATE} lacks the {_MARKER} marker")
    return text.replace(_MARKER, "\n".join(lines), 1)


# ---------------------------------------------------------------------------------------
# Description


def _parameters(
    dims3: bool,
    image: bool,
    image_doc: str,
    steps: int = 1,
    separable: bool = False,
    rim_vectors: bool = True,
) -> dict[str, Any]:
    def pow2(hi: str, default: int, doc: str) -> dict[str, Any]:
        return {"pow2": [1, hi], "default": default, "doc": doc}

    params: dict[str, Any] = {
        "WX": pow2("NX", 16, "work-group size in x"),
        "WY": pow2("NY", 4, "work-group size in y"),
    }
    if dims3:
        params["WZ"] = pow2("NZ", 1, "work-group size in z")
    params["BX"] = pow2("NX", 1, "block merging in x (adjacent outputs per work-item)")
    params["VX"] = {"values": [1, 2, 4, 8, 16], "default": 1, "doc": "vector width in x"}
    params["CX"] = pow2("NX", 1, "cyclic merging in x")
    params["CY"] = pow2("NY", 1, "cyclic merging in y")
    if dims3:
        params["CZ"] = pow2("NZ", 1, "cyclic merging in z")
    params["LOCAL"] = {"values": [0, 1], "default": 0, "doc": "cache input tiles in local memory"}
    if image:
        params["IMAGE"] = {"values": [0, 1], "default": 0, "doc": image_doc}
    if dims3:
        params["STREAM"] = {
            "values": [0, 1],
            "default": 0,
            "doc": "stream along z: each input plane loaded once, z-neighbours in registers",
        }
        params["ZC"] = pow2("NZ", 1, "chunk: output planes per work-item when streaming")
    else:
        params["STREAM"] = {
            "values": [0, 1],
            "default": 0,
            "doc": "stream along y: each input row loaded once, y-neighbours in registers"
            + (" (TB > 1: rings of rows in local memory)" if steps > 1 else ""),
        }
        params["ZC"] = pow2("NY", 1, "chunk: output rows per work-item when streaming")
    if separable:
        params["SEP"] = {
            "values": [0, 1],
            "default": 0,
            "doc": "a separable stencil's weights applied axis by axis: each input row's "
            "x-terms summed once (2D streaming: the row sum added to the y-queue; the "
            "vector technique with RIM: the row sums of a work-item's rows combined in y"
            + (", then z)" if dims3 else ")")
            + ("; temporal tiles with TR > 1 alike" if steps > 1 else ""),
        }
    if rim_vectors:
        params.update(_rim_parameters(dims3))
    if steps > 1 and dims3:
        params.update(_zreg_parameters())
    if steps > 1:
        params["TB"] = {
            "values": [t for t in TB_VALUES if steps % t == 0],
            "default": 1,
            "doc": "temporal blocking: time steps one launch advances",
        }
        params["TR"] = {
            "values": list(TR_VALUES),
            "default": 1,
            "doc": "temporal tiles (TB > 1, STREAM = 0): rows of a level's column each "
            "work-item computes at a time, the rows they share read once from local memory",
        }
    return params


def _rim_parameters(dims3: bool) -> dict[str, Any]:
    """The vector technique's whole rim vectors, interior path and row blocks (the
    interior and clamp boundaries)."""
    params: dict[str, Any] = {}
    params["RIM"] = {
        "values": [0, 1],
        "default": 0,
        "doc": "vector technique: every vector computed whole, those straddling a row's "
        "rim from reads clamped into the row, writing their interior lanes (0: such "
        "vectors lane by lane)",
    }
    params["RIN"] = {
        "values": [0, 1],
        "default": 0,
        "doc": "vector technique with RIM: a work-item whose rows and their neighbours "
        "lie inside reads them through one pointer per field plus constant row "
        "offsets, one at a y or z rim computes its rows one at a time (0: every row "
        "read clamped)",
    }
    params["BY"] = {
        "values": [1, 2, 4],
        "default": 1,
        "doc": "vector technique with RIM: adjacent rows in y per work-item (the rows "
        "of input they share loaded once)",
    }
    if dims3:
        params["BZ"] = {
            "values": [1, 2, 4],
            "default": 1,
            "doc": "vector technique with RIM: adjacent planes in z per work-item (the "
            "rows of input they share loaded once)",
        }
    return params


def _zreg_parameters() -> dict[str, Any]:
    """Temporal streaming along z with the z-neighbours in registers (3D, TB > 1)."""
    params: dict[str, Any] = {}
    params["ZREG"] = {
        "values": [0, 1, 2],
        "default": 0,
        "doc": "temporal streaming along z (TB > 1) with the z-neighbours in registers: "
        "local memory holds two planes, not the levels' rings (z-star stencils); 2: "
        "the block's points first, then the halo frame by frame, each level computing "
        "only its own region",
    }
    params["ZU"] = {
        "values": [0, 1],
        "default": 0,
        "doc": "ZREG = 2: the walk along z unrolled by the queue length, so the queues' "
        "shift is a renaming of registers (interior boundary)",
    }
    params["ZS"] = {
        "values": [0, 1],
        "default": 0,
        "doc": "ZREG = 2 with vectors (VX = BX = 4): every level's centre plane stored at "
        "the start of a plane step, one barrier per step (0: one per level; 1 takes two "
        "planes of local memory per level)",
    }
    return params


def _temporal_boundary(d: StencilDefinition) -> bool:
    """Whether temporal blocking computes ``d``'s levels: the interior boundary with its
    rim kept, or clamp (a level's neighbour beyond an edge is its edge point, in the
    tile); not zero, wrap, reflect or symmetric."""
    return d.boundary in ("interior", "clamp") and d.rim == RIM_KEEP


_SAMPLERS = {"interior": "clamp-to-edge", "clamp": "clamp-to-edge", "zero": "zero-border"}

NO_FP64_IMAGES = (
    "IMAGE == 0 (float64: OpenCL images hold no 64-bit floats, so the image technique "
    "cannot serve a double-precision stencil)"
)


@dataclass(frozen=True)
class _Geometry:
    """What a rendered stencil's constraints, techniques and launch are written from:
    its shape and element size, and the local-memory and register expressions of each
    technique (MiniZinc text over the parameters and the problem size)."""

    d: StencilDefinition
    image: bool  # the image technique is offered
    tile: str  # local memory of a work-group's block with its halo
    planes: str  # streaming's two planes of the x/y tile with its halo
    temporal_tile: str  # temporal blocking: two tiles with TB radii of halo
    temporal_rings: str  # temporal streaming: a ring of planes (rows) per level
    temporal_loads: str  # temporal streaming: the next plane's loads per work-item
    zreg_plane: str  # ZREG: two centre planes of the block in local memory
    zreg_registers: str  # ZREG: registers per work-item

    @property
    def dims3(self) -> bool:
        return self.d.dims == 3

    @property
    def fp64(self) -> bool:
        return self.d.dtype == "float64"

    @property
    def stepping(self) -> bool:
        return self.d.steps > 1

    @property
    def rim_vectors(self) -> bool:
        """Whether the vector technique's whole rim vectors (RIM), with the interior path
        (RIN), row blocks (BY, BZ) and SEP, apply: the interior and clamp boundaries (the
        zero boundary has none; the wrap, reflect and symmetric boundaries map each
        lane's neighbour as clamp clamps it)."""
        return self.d.boundary != "zero"

    @property
    def by(self) -> str:
        """Rows merged in y (BY): the vector technique's, with whole rim vectors."""
        return "BY*" if self.rim_vectors else ""

    @property
    def bz(self) -> str:
        return "BZ*" if self.rim_vectors and self.dims3 else ""

    @property
    def one_step(self) -> str:
        """The registers of one-step streaming (TB == 1); temporal streaming (TB > 1)
        keeps its levels in local memory instead."""
        return "TB > 1 or " if self.stepping else ""


def _geometry(d: StencilDefinition, image: bool) -> _Geometry:
    rx, ry, rz = d.radius
    dims3 = d.dims == 3
    size = d.itemsize
    # A block (WX*BX) x WY x WZ is at most the array (NX % (WX*BX*CX) == 0 and so on);
    # min() says so to the solver, whose integers would overflow on the product of the
    # domains' bounds.
    tile = f"{size} * (min(WX*BX, NX) + {2 * rx}) * (WY + {2 * ry})" + (
        f" * (WZ + {2 * rz})" if dims3 else ""
    )
    # Streaming holds two planes of the work-group's x/y tile with its halo.
    planes = f"{2 * size} * (min(WX*BX*CX, NX) + {2 * rx}) * (min(WY*CY, NY) + {2 * ry})"
    # Temporal blocking: two tiles of the work-group's block (its work-group size times
    # the merge factors) with a halo of TB radii per side.
    temporal_tile = f"{2 * size} * (min(WX*CX, NX) + 2*TB*{rx}) * (min(WY*CY, NY) + 2*TB*{ry})" + (
        f" * (min(WZ*CZ, NZ) + 2*TB*{rz})" if dims3 else ""
    )
    # Temporal streaming: per level below TB a ring of 2*RZ+1 planes of the block with a
    # halo of TB radii (3D), or of 2*RY+WY rows of the strip (2D, WY rows per iteration).
    temporal_rings = (
        f"TB * {(2 * rz + 1) * size} * (min(WX*CX, NX) + 2*TB*{rx}) * (min(WY*CY, NY) + 2*TB*{ry})"
        if dims3
        else f"TB * {size} * ({2 * ry} + min(WY, NY)) * (min(WX*CX, NX) + 2*TB*{rx})"
    )
    # Temporal streaming's registers: the next plane (rows) per work-item, rounded up.
    temporal_loads = (
        f"((min(WX*BX*CX, NX) + 2*TB*{rx}) * (min(WY*CY, NY) + 2*TB*{ry}) + WX*WY - 1) / (WX*WY)"
        if dims3
        else f"(min(WX*CX, NX) + 2*TB*{rx} + WX - 1) / WX"
    )
    # Temporal streaming with the z-neighbours in registers (ZREG = 1, 2): two centre
    # planes of the block with its halo in local memory, and per point a queue of 2*RZ+1
    # planes for each level below TB in registers (plus the next plane's load): at most
    # STREAM_QUEUE_MAX values per work-item and ZREG_GROUP_REGISTERS per work-group.
    # A work-item's points are the same number in both layouts: ZREG = 1 deals the
    # plane with its halo round robin (the temporal loads), ZREG = 2 gives each
    # work-item CX*CY points of the block and deals the halo round robin, and the
    # block is CX*CY passes of the work-group.
    # (ZREG = 2 stores the plane's rows at an odd pitch, PX + 1 for an even PX: a column
    # of the halo's side frames falls in distinct banks)
    # With vectors (ZREG = 2, VX = BX > 1) a work-item's block points are vectors of BX
    # points (its points per work-item the same count of values), the block starts on a
    # whole vector (the halo rounded up to vectors before it), the pitch is an odd
    # number of vectors, and ZS = 1 keeps two planes per level (2*TB in all).
    zreg_px = f"(min(WX*BX*CX, NX) + 2*TB*{rx})"
    vectors = f"((TB*{rx} + BX - 1) / BX * BX - TB*{rx} + {zreg_px} + BX - 1) / BX"
    zreg_pitch = (
        f"(BX * ({vectors} + 1 - ({vectors}) % 2) if ZREG == 2 and BX > 1 else "
        f"{zreg_px} + (1 - {zreg_px} % 2 if ZREG == 2 else 0))"
    )
    zreg_plane = f"{size} * (2 + ZS * (2*TB - 2)) * {zreg_pitch} * (min(WY*CY, NY) + 2*TB*{ry})"
    zreg_registers = f"{temporal_loads} * (TB*{2 * rz + 1} + 1)"
    return _Geometry(
        d,
        image,
        tile,
        planes,
        temporal_tile,
        temporal_rings,
        temporal_loads,
        zreg_plane,
        zreg_registers,
    )


def _shape_constraints(g: _Geometry) -> list[str]:
    """Blocks that tile the array, merge factors, local memory, and streaming's limits."""
    dims3 = g.dims3
    _, ry, rz = g.d.radius
    constraints = ["NX % (WX*BX*CX) == 0", f"NY % (WY*{g.by}CY) == 0"]
    if dims3:
        constraints.append(f"NZ % (WZ*{g.bz}CZ*ZC) == 0")
    constraints += [
        "VX <= BX",
        "BX % VX == 0",
        "BX == VX or STREAM == 1",
        "VX == 1 or LOCAL == 0",
        f"LOCAL == 0 or {g.tile} <= LOCAL_MEM_SIZE",
    ]
    if g.fp64:
        constraints.append("DOUBLE_SUPPORT == 1")
    if g.d.boundary in MAPPED_BOUNDARIES:  # a neighbour beyond an edge maps inside
        rx = g.d.radius[0]
        constraints += [f"NX > {rx}", f"NY > {ry}"] + ([f"NZ > {rz}"] if dims3 else [])
    one_step = g.one_step
    if dims3:
        constraints += [
            # 3D streaming's planes go through local memory value by value, but for
            # the vectors of temporal streaming with ZREG = 2 (_temporal_constraints)
            "STREAM == 0 or (LOCAL == 0 and WZ == 1 and CZ == 1 and "
            + ("(VX == 1 or (TB > 1 and ZREG == 2)))" if g.stepping else "VX == 1)"),
            "STREAM == 1 or ZC == 1",
            # a tile one work-item wide reads its planes column by column (never fast),
            # and PoCL hangs on it for work-groups four or more deep: left out
            "STREAM == 0 or WX >= 2",
            f"STREAM == 0 or {one_step}BX*CX*CY*{2 * rz + 1} <= {STREAM_QUEUE_MAX}",
            f"STREAM == 0 or {one_step}BX*CX*CY <= {STREAM_OUTS_MAX}",
            f"STREAM == 0 or {g.planes} <= LOCAL_MEM_SIZE",
        ]
    else:  # streaming along y: one step keeps its rows in registers, no local memory;
        # VX is the width of its aligned vector loads and stores (BX % VX == 0)
        constraints += [
            "STREAM == 0 or (LOCAL == 0 and CY == 1)",
            "STREAM == 1 or ZC == 1",
            f"STREAM == 0 or {one_step}BX*CX*{2 * ry + 1} <= {STREAM_QUEUE_MAX}",
            f"STREAM == 0 or {one_step}BX*CX <= {STREAM_OUTS_MAX}",
        ]
    return constraints


def _vector_and_image_constraints(g: _Geometry) -> list[str]:
    """Separable stencils, whole rim vectors and row blocks, and the image technique."""
    constraints: list[str] = []
    if separable_factors(g.d) is not None:  # 2D streaming, and whole rim vectors
        dims2 = ["STREAM == 1", "RIM == 1"]
        paths = (["RIM == 1"] if g.dims3 else dims2) if g.rim_vectors else ["STREAM == 1"]
        if g.stepping:  # launches of one step as above; of the temporal techniques,
            # tiles with rows per work-item (TR > 1 holds TB > 1 and STREAM == 0)
            paths = [f"(TB == 1 and ({' or '.join(paths)}))", "TR > 1"]
        constraints.append(" or ".join(["SEP == 0", *paths]))
        if _one_sided_rows(g.d):  # the vector technique's row sums read every row within
            # the radius, beyond the edge of a band written up to it: 2D streaming only
            constraints.append("SEP == 0 or STREAM == 1")
    if g.rim_vectors:  # whole rim vectors: the vector technique's choice only; so are row blocks
        constraints.append("RIM == 0 or (VX > 1 and STREAM == 0)")
        constraints.append("RIN == 0 or RIM == 1")  # the interior path: RIM's choice
        blocks = "BY*BZ" if g.dims3 else "BY"
        constraints += [f"{blocks} == 1 or RIM == 1", f"BX*{blocks} <= {VEC_OUTS_MAX}"]
    if g.image:
        limits = (
            "NX <= IMAGE3D_MAX_WIDTH and NY <= IMAGE3D_MAX_HEIGHT and NZ <= IMAGE3D_MAX_DEPTH"
            if g.dims3
            else "NX <= IMAGE2D_MAX_WIDTH and NY <= IMAGE2D_MAX_HEIGHT"
        )
        constraints += [
            "VX == 1 or IMAGE == 0",
            "LOCAL == 0 or IMAGE == 0",
            f"IMAGE == 0 or (IMAGE_SUPPORT == 1 and {limits})",
        ]
        constraints.append("STREAM == 0 or IMAGE == 0")
        if g.fp64:
            constraints.append("IMAGE == 0")
    return constraints


def _rim_lines(d: StencilDefinition) -> list[str]:
    """RIM_WRITE (and RIM_CONST): the interior boundary's rim written apart."""
    if d.rim == RIM_KEEP:
        return []
    constant = d.rim_constant
    if constant is None:  # each rim point a copy of the primary field's
        return ["#define RIM_WRITE 1"]
    return ["#define RIM_WRITE 2", f"#define RIM_CONST {literal(constant, d.dtype)}"]


def _one_sided_rows(d: StencilDefinition) -> bool:
    """Whether the interior is written closer to a y or z edge than the radius
    (``band: reach`` with a one-sided reach across rows or planes)."""
    if d.boundary != "interior" or d.band == BAND_RADIUS:
        return False
    below, above = d.margins
    return any(m != r for m, r in zip(below[1:] + above[1:], d.radius[1:] * 2, strict=True))


def _band_lines(d: StencilDefinition) -> list[str]:
    """RX_LO ... RZ_HI: the interior's margins below and above each axis where they
    differ from the radius (``band: reach``, a one-sided stencil)."""
    if d.boundary != "interior" or d.band == BAND_RADIUS:
        return []
    below, above = d.margins
    lines = []
    for axis, r, lo, hi in zip("XYZ", d.radius, below, above, strict=True):
        if lo != r:
            lines.append(f"#define R{axis}_LO {lo}")
        if hi != r:
            lines.append(f"#define R{axis}_HI {hi}")
    return lines


def _temporal_constraints(g: _Geometry) -> list[str]:
    """Temporal blocking's (TB time steps a launch): its local memory and registers."""
    d = g.d
    if not g.stepping:
        return []
    # merging (CX, CY, CZ) makes the temporal block larger than the work-group; a
    # work-item's points are single values, or with ZREG = 2 vectors of 4 (VX = BX: the
    # interior boundary, radius at most 4 in x; VX 2 lost on the H200)
    single = "VX == 1 and BX == 1"
    if _zreg_vectors(d):
        single = f"({single} or (STREAM == 1 and ZREG == 2 and VX == 4 and BX == 4))"
    constraints = [f"{d.steps} % TB == 0", f"TB == 1 or (LOCAL == 0 and {single})"]
    # rows per work-item of a temporal tile's level: at most the block's rows
    constraints.append("TR == 1 or (TB > 1 and STREAM == 0 and TR <= WY*CY)")
    if not _temporal_boundary(d):  # temporal blocking's levels clamp or keep the rim:
        constraints.append("TB == 1")  # never 0 or mapped beyond it, nor write it
    size = d.itemsize
    # the temporal techniques' arrays are the kernel's own (sized by its defines): they
    # may take what the device gives those (LOCAL_MEM_STATIC: on the H200 more than
    # the 48 KiB it reports, and TB 4 with one barrier per plane step needs 95 KiB at
    # heat3d's best block). The one-step techniques keep LOCAL_MEM_SIZE until their searches
    # are measured with larger tiles.
    if g.dims3:
        constraints += [
            f"TB == 1 or STREAM == 1 or {g.temporal_tile} <= LOCAL_MEM_STATIC",
            f"TB == 1 or STREAM == 0 or ZREG >= 1 or {g.temporal_rings} <= LOCAL_MEM_STATIC",
            f"TB == 1 or STREAM == 0 or {g.temporal_loads} <= {TEMPORAL_LOADS_MAX}",
            "ZREG == 0 or (TB > 1 and STREAM == 1)",
            "ZU == 0 or ZREG == 2",
            "ZS == 0 or (ZREG == 2 and VX > 1)",
            f"ZREG == 0 or {g.zreg_plane} <= LOCAL_MEM_STATIC",
            f"ZREG == 0 or {g.zreg_registers} <= {STREAM_QUEUE_MAX}",
            f"ZREG == 0 or {g.zreg_registers} * {max(1, size // 4)} * WX*WY"
            f" <= {ZREG_GROUP_REGISTERS}",
        ]
        if not _z_star(d):
            constraints += ["ZREG == 0", "ZU == 0", "ZS == 0"]
    else:
        constraints += [
            # temporal streaming walks whole chunks of WY*ZC rows
            "TB == 1 or STREAM == 0 or NY % (WY*ZC) == 0",
            f"TB == 1 or STREAM == 1 or {g.temporal_tile} <= LOCAL_MEM_STATIC",
            f"TB == 1 or STREAM == 0 or {g.temporal_rings} <= LOCAL_MEM_STATIC",
            f"TB == 1 or STREAM == 0 or {g.temporal_loads} <= {TEMPORAL_LOADS_MAX}",
        ]
    return constraints


def _techniques(g: _Geometry) -> dict[str, list[str]]:
    """Each data-loading technique as the parameter values that select it."""
    no_image = "IMAGE == 0" if g.image else None
    no_stream = "STREAM == 0"
    techniques: dict[str, list[str]] = {
        "global": [c for c in ("LOCAL == 0", no_image, "VX == 1", no_stream) if c],
        "vec": [c for c in ("VX > 1", "LOCAL == 0", no_image, no_stream) if c],
        "local": [c for c in ("LOCAL == 1", no_image, "VX == 1", no_stream) if c],
    }
    if g.image and not g.fp64:
        techniques["image"] = [c for c in ("IMAGE == 1", "LOCAL == 0", "VX == 1", no_stream) if c]
    # 2D streaming loads its row segments as vectors of VX (tuned); 3D streaming's planes
    # go through local memory value by value
    techniques["stream"] = [
        c for c in ("STREAM == 1", "LOCAL == 0", no_image, "VX == 1" if g.dims3 else None) if c
    ]
    if g.stepping:
        for cons in techniques.values():
            cons += ["TB == 1", "TR == 1"]
        if not _temporal_boundary(g.d):  # temporal blocking clamps or keeps the rim only
            return techniques
        # streaming (along z in 3D, along y in 2D) with TB time levels; tiles as an
        # alternative
        # temporal tiles alone compute several rows of a column per work-item (TR)
        techniques["temporal"] = ["TB > 1", "STREAM == 1", "LOCAL == 0", "VX == 1", "TR == 1"]
        techniques["temporal-tile"] = ["TB > 1", "STREAM == 0", "LOCAL == 0", "VX == 1"]
        if g.dims3:  # the z-walk's parameters belong to temporal-zreg (hybrid tunes none)
            techniques["temporal"] += ["ZREG == 0", "ZU == 0", "ZS == 0"]
            techniques["temporal-tile"] += ["ZREG == 0", "ZU == 0", "ZS == 0"]
            if _z_star(g.d):  # streaming, the z-neighbours in registers, one plane shared
                techniques["temporal-zreg"] = ["TB > 1", "STREAM == 1", "ZREG >= 1"]
                techniques["temporal-zreg"] += ["LOCAL == 0", "TR == 1"]
    if g.rim_vectors:  # whole rim vectors and row blocks belong to the vector technique (its
        # choice), so specs that tune neither (dims, opts, temporal) fit the kernel
        for name, cons in techniques.items():
            if name != "vec":
                cons += ["RIM == 0", "RIN == 0", "BY == 1"] + (["BZ == 1"] if g.dims3 else [])
    return techniques


def _launch(g: _Geometry) -> dict[str, Any]:
    """Global and local sizes and the local memory a work-group takes."""
    # 2D streaming: ZC rows per work-item; the chunk need not divide the rows (the
    # work-items past NY do nothing), the work-group still divides NY / CY. (Temporal
    # streaming's chunks divide NY: then this is NY / ZC, a work-group owning WY*ZC rows.)
    by, bz = g.by, g.bz
    global_size = ["NX / (BX*CX)"] + (
        [f"NY / ({by}CY)", f"NZ / ({bz}CZ*ZC)"]
        if g.dims3
        else [f"((NY / ({by}CY) + ZC - 1) / ZC + WY - 1) / WY * WY"]
    )
    return {
        "global": global_size,
        "local": ["WX", "WY"] + (["WZ"] if g.dims3 else []),
        "local_memory_bytes": _local_memory(
            g.tile,
            g.planes,
            g.temporal_tile,
            f"({g.temporal_rings} if ZREG == 0 else {g.zreg_plane})"
            if g.stepping and g.dims3
            else g.temporal_rings,
            g.dims3,
            g.stepping,
        ),
    }


ELEMENT_TECHNIQUES = (
    "{elements}: tuned with the global, local and vector techniques{stream}; the vector "
    "technique loads vectors of elements, converts them to the arithmetic's type, sums the "
    "terms lane by lane in the scalar code's order and stores each vector converted as one "
    "result is (bit for bit the global technique's results), without SEP (the weights axis "
    "by axis: another order of the sum, other roundings); the image technique holds images "
    "of the arithmetic's type, not integer elements{no_stream}"
)
ELEMENT_STREAM = (
    " and 2D streaming (each input row converted once as it is loaded, each output's terms "
    "summed row by row: the file lists them in y order, so the scalar code's order)"
)
ELEMENT_NO_STREAM_3D = "; streaming along z holds planes of the arithmetic's type"
ELEMENT_NO_STREAM_ORDER = (
    "; no streaming: it sums each output's terms row by row (in y order), and the file "
    "lists them in another order (the results would round differently)"
)


def integer_streams(d: StencilDefinition) -> bool:
    """Whether 2D streaming computes a definition of integer elements bit for bit: it
    sums each output's terms row by row (increasing y, each row's terms in file order),
    then the other fields' terms, so the file must list the primary field's terms in
    non-decreasing y and the other fields' after them (the reference's file order)."""
    if not d.storage or d.dims != 2:
        return False
    primary = d.primary_field
    last_dy: int | None = None
    others = False
    for t in d.terms:
        if t.field != primary:
            others = True
            continue
        if others or (last_dy is not None and t.offset[1] < last_dy):
            return False
        last_dy = t.offset[1]
    return True


def _element_doc(d: StencilDefinition) -> str:
    """ELEMENT_TECHNIQUES for ``d``: with streaming, or why not."""
    streams = integer_streams(d)
    why_not = ELEMENT_NO_STREAM_3D if d.dims == 3 else ELEMENT_NO_STREAM_ORDER
    return ELEMENT_TECHNIQUES.format(
        elements=_elements_text(d),
        stream=ELEMENT_STREAM if streams else "",
        no_stream="" if streams else why_not,
    )


PADDED_TECHNIQUES = (
    "a padded field: tuned with the global, local and vector techniques{stream}; the "
    "vector technique reads each padded row ({width} points) as whole vectors from its "
    "first stored point, so VX divides {width}; no image (its own rows, not the "
    "problem's), no temporal blocking (one step)"
)
PADDED_STREAM = " (and in 2D streaming, value by value: VX == 1)"
INPLACE_DOC = (
    "{name} is updated in place: the kernel's one argument {name} is a field and the "
    "output (no restrict), each work-item reading its points of {name} before writing "
    "them, as every one-step technique does (global, vec, local, image, stream); one "
    "step per launch, so no temporal blocking"
)


def _padded_row(d: StencilDefinition) -> str:
    """The stored row of the padded primary field: ``NX+4`` (``NX`` without an x pad)."""
    px = d.pad_of(d.primary_field)[0]
    return f"NX+{2 * px}" if px else "NX"


def _padded_constraints(d: StencilDefinition) -> list[str]:
    """A padded primary field: the global, local and vector techniques, the vector
    technique's rows starting on whole vectors (VX divides the padded row); floats in 2D
    also streaming, value by value."""
    if d.storage and not integer_streams(d):  # no streaming (ELEMENT_TECHNIQUES)
        return [f"({_padded_row(d)}) % VX == 0"]
    return [f"({_padded_row(d)}) % VX == 0"] + (
        ["STREAM == 0 or VX == 1"] if d.dims == 2 else ["STREAM == 0"]
    )


def _elements_text(d: StencilDefinition) -> str:
    """``uint8 elements`` or ``uint8 fields, output int16``."""
    if d.output_storage:
        return f"{d.storage} fields, output {d.out_storage}"
    return f"{d.storage} elements"


def describe(
    stencil: Stencil,
    sizes: Mapping[str, int],
    *,
    source: str,
    image: bool = True,
) -> dict[str, Any]:
    """The description (as plain data) of ``stencil`` rendered into ``source``."""
    d, _ = _as_definition(stencil)
    generated = isinstance(stencil, WeightedStencil)
    if d.steps > 1 or d.pads or d.storage or d.boundary in MAPPED_BOUNDARIES:
        image = False  # an image holds the initial field only: the steps swap buffers; a
        # padded field is read in its own rows (global, local, vec); an image holds no
        # integer elements (read_imagef); a sampler wraps and mirrors only normalised
        # coordinates
    g = _geometry(d, image)
    fp64 = g.fp64
    shape = list(d.shape_names)
    constraints = _shape_constraints(g) + _vector_and_image_constraints(g)
    constraints += _temporal_constraints(g)
    techniques = _techniques(g)
    if d.pads:  # padded fields: PADDED_TECHNIQUES
        constraints += _padded_constraints(d)
        streams = d.dims == 2 and (not d.storage or integer_streams(d))
        kept = ["global", "local", "vec"] + (["stream"] if streams else [])
        techniques = {k: v for k, v in techniques.items() if k in kept}
    if d.storage:  # integer elements: global, local, vec, 2D streaming (ELEMENT_TECHNIQUES)
        streams = integer_streams(d)
        constraints += ([] if streams else ["STREAM == 0"]) + (
            ["SEP == 0"] if separable_factors(d) else []
        )
        kept = ["global", "local", "vec"] + (["stream"] if streams else [])
        techniques = {k: v for k, v in techniques.items() if k in kept}
    if d.boundary in MAPPED_BOUNDARIES:
        image_doc = (
            f"never set: the {d.boundary} boundary (an image's sampler wraps and mirrors "
            "normalised coordinates only)"
        )
    elif generated:
        image_doc = "read the input as an image"
    else:
        image_doc = f"read {d.primary_field} as an image ({_SAMPLERS[d.boundary]} sampler)"
    if fp64:
        image_doc = "never set: " + NO_FP64_IMAGES
    description: dict[str, Any] = {"kernel": d.kernel_name, "source": source}
    doc = [d.doc] if d.doc else []
    if d.storage:  # the techniques left out, and why
        doc.append(_element_doc(d))
    if d.pads:
        stream = PADDED_STREAM if d.dims == 2 and (not d.storage or integer_streams(d)) else ""
        doc.append(PADDED_TECHNIQUES.format(width=_padded_row(d), stream=stream))
    if d.inplace:
        doc.append(INPLACE_DOC.format(name=d.output))
    if doc:
        description["doc"] = "\n".join(doc)
    if generated:
        assert isinstance(stencil, WeightedStencil)
        features, flops, arguments, reference = _generated_parts(stencil, shape, image)
    else:
        features, flops, arguments, reference = _definition_parts(d, shape, image and not fp64)
    separable = separable_factors(d) is not None
    description.update(
        {
            "problem": {k: int(v) for k, v in sizes.items()},
            "arguments": arguments,
            "parameters": _parameters(g.dims3, image, image_doc, d.steps, separable, g.rim_vectors),
            "constraints": constraints,
            "launch": _launch(g),
            "reference": reference,
            "techniques": techniques,
            "features": features,
            "flops_per_point": flops,
        }
    )
    if g.stepping:
        description["steps"] = {
            "count": d.steps,
            "per_launch": "TB",
            "swap": [d.primary_field, d.output],
        }
    return description


Factor = list[tuple[int, float]]


def separable_factors(d: StencilDefinition) -> tuple[Factor, ...] | None:
    """The primary field's weights as an outer product, one factor per axis of the
    array, or None: ``w(dx, dy) = u(dx) * v(dy)`` in 2D (a binomial or box blur),
    ``w(dx, dy, dz) = u(dx) * v(dy) * s(dz)`` in 3D (box27's binomial smoothing), each
    factor a list of (offset, weight).

    Only for definitions whose primary terms' coefficients are all numbers, or
    all a number times one common scalar expression S (``0.0625*gain``, ``w/h``,
    ``dt*alpha/(dx*dx)``: :func:`separable_scale`; the factors are then those of the
    numbers, and the kernel multiplies S into the last axis's weights), with entries of
    fixed weights arrays (``weights_fixed``) counted as numbers; 2D: in the plane; a
    radius on every axis, and more terms than the factors have (else nothing is saved).
    The factors come from the lines through the largest weight p (2D: both scaled by
    sqrt(|p|), so a binomial's are exact; 3D: u the x line, v and s the y and z lines
    over p) and must reproduce every weight of the bounding box (absent offsets are
    zero) to a few ulps of the element type. 2D streaming may then sum each row's
    x-terms once per output (``u``) and add that row sum to the y-queue (``v``):
    (2RX+1) + (2RY+1) multiply-adds per output instead of one per term. The vector
    technique (RIM = 1, SEP = 1) sums each input row's x-terms once for all of a
    work-item's rows and combines the row sums in y (and z): for box27 with BY = 2, BZ =
    4, 16.5 multiply-adds per output instead of 27. With ``steps``, temporal tiles
    (TB > 1, TR > 1) sum the x-terms of each of a work-item's TR rows and the 2RY rows
    around them once per level (3D: in each plane within RZ), and combine the row sums
    in y (3D: each plane's, then in z). The sums are rounded differently
    from the reference's term order (and S applied once, not to each term), within
    :meth:`StencilDefinition.tolerance`.
    """
    split = _numbers_and_scale(d)
    if split is None:
        return None
    numbers = split[0]
    dims = d.dims
    terms = d.terms_of(d.primary_field)
    if any(t.offset[a] != 0 for t in terms for a in range(dims, 3)):
        return None
    radii = d.radius[:dims]
    if 0 in radii:
        return None
    w: dict[tuple[int, ...], float] = {}
    for t, number in zip(terms, numbers, strict=True):
        key = t.offset[:dims]
        w[key] = w.get(key, 0.0) + number
    nonzero = [k for k, v in w.items() if v != 0.0]
    if len(nonzero) <= sum(2 * r + 1 for r in radii):
        return None
    centre = max(nonzero, key=lambda k: abs(w[k]))
    pivot = w[centre]
    axes = [range(-r, r + 1) for r in radii]
    lines = [
        {o: w.get((*centre[:a], o, *centre[a + 1 :]), 0.0) for o in axes[a]} for a in range(dims)
    ]
    if dims == 2:  # both factors share the pivot: a binomial's are exact
        scale = math.sqrt(abs(pivot))
        sign = 1.0 if pivot > 0 else -1.0
        factors = [
            {o: x / scale for o, x in lines[0].items()},
            {o: x / scale * sign for o, x in lines[1].items()},
        ]
    else:
        factors = [lines[0]] + [{o: x / pivot for o, x in line.items()} for line in lines[1:]]
    big = max(abs(x) for x in w.values())
    eps = 8 * float(np.finfo(np.float32 if d.dtype == "float32" else np.float64).eps)
    for key in itertools.product(*axes):
        product = math.prod(f[o] for f, o in zip(factors, key, strict=True))
        if abs(product - w.get(key, 0.0)) > eps * big:
            return None
    return tuple(
        [(o, f[o]) for o in axis if f[o] != 0.0] for f, axis in zip(factors, axes, strict=True)
    )


def separable_scale(d: StencilDefinition) -> Coefficient:
    """The scalar expression S (factor 1) that every primary term's coefficient is a
    number times, where :func:`separable_factors` finds the weights separable: ``gain``
    for ``0.0625*gain``, ``0.125*gain`` ..., ``(dt*alpha)/(dx*dx)`` for multiples of
    it; the number 1 when the coefficients are numbers (or entries of fixed weights)."""
    split = _numbers_and_scale(d)
    return Coefficient() if split is None else split[1]


def _numbers_and_scale(d: StencilDefinition) -> tuple[list[float], Coefficient] | None:
    """Each primary term's number and the scalar expression S (factor 1) common to all
    (``0.0625*gain`` is 0.0625 times ``gain``; an entry of a fixed weights array is its
    number), or None: no terms, or scalars that differ between terms (``0.25*a`` and
    ``0.5*b``: no common factor)."""
    terms = d.terms_of(d.primary_field)
    if not terms:
        return None
    fixed = weight_entries(d.weights) if d.weights_fixed else {}
    numbers: list[float] = []
    parts: set[tuple[tuple[str, ...], tuple[str, ...]]] = set()
    for t in terms:
        c = t.coefficient
        number = float(c.factor)
        for n in c.names:
            number *= fixed.get(n, 1.0)
        for n in c.divisors:
            if fixed.get(n) == 0.0:
                return None
            number /= fixed.get(n, 1.0)
        numbers.append(number)
        parts.add(
            (
                tuple(n for n in c.names if n not in fixed),
                tuple(n for n in c.divisors if n not in fixed),
            )
        )
    if len(parts) != 1:
        return None
    names, divisors = parts.pop()
    return numbers, Coefficient(1.0, names, divisors)


def _zreg_vectors(d: StencilDefinition) -> bool:
    """Whether temporal streaming with ZREG = 2 may hold vectors of 4 points (VX = BX =
    4): the interior boundary with its rim kept, a z-star of float elements whose x
    radius a vector's neighbours hold (the template's #errors say the same)."""
    return (
        d.dims == 3
        and d.boundary == "interior"
        and d.rim == RIM_KEEP
        and not d.storage
        and d.radius[0] <= 4
        and _z_star(d)
    )


def _z_star(d: StencilDefinition) -> bool:
    """Whether every term of the primary field off the centre plane lies on the z axis
    (dz != 0 only with dx = dy = 0): temporal streaming may then keep its z-neighbours in
    registers (ZREG = 1) and share only the centre plane."""
    return all(
        t.offset[2] == 0 or (t.offset[0] == 0 and t.offset[1] == 0)
        for t in d.terms_of(d.primary_field)
    )


def _local_memory(
    tile: str, planes: str, tiles: str, rings: str, dims3: bool, stepping: bool
) -> str:
    """``launch.local_memory_bytes``: the local-memory tile, the streamed planes, and
    for time-stepping kernels (TB > 1) the temporal tiles or (streaming) rings."""
    if not stepping:
        return f"LOCAL * {tile}" + (f" + STREAM * {planes}" if dims3 else "")
    more = "min(TB - 1, 1)"
    if not dims3:
        return f"LOCAL * {tile} + {more} * ((1 - STREAM) * {tiles} + STREAM * {rings})"
    return (
        f"LOCAL * {tile} + STREAM * (1 - {more}) * {planes}"
        f" + {more} * ((1 - STREAM) * {tiles} + STREAM * {rings})"
    )


def _generated_parts(
    stencil: WeightedStencil, shape: list[str], image: bool
) -> tuple[dict[str, Any], int, list[dict[str, Any]], dict[str, Any]]:
    rx, ry, rz = stencil.extent
    src_arg: dict[str, Any] = {
        "name": "src",
        "dtype": "float32",
        "role": "input",
        "shape": shape,
        "init": "random",
    }
    if image:
        src_arg["image_when"] = "IMAGE == 1"
    arguments = [
        src_arg,
        {"name": "dst", "dtype": "float32", "role": "output", "shape": shape, "init": "copy:src"},
    ]
    features = {
        "size": len(stencil.offsets),
        "radius": max(stencil.extent),
        "extent": [rx, ry, rz],
        "intensity": stencil.intensity,
        "flops_per_point": stencil.flops_per_point,
        **dict(stencil.features),
    }
    reference = {
        "python": "gtune.stencils.reference:weighted_sum",
        "args": {
            "input": "src",
            "output": "dst",
            "intensity": stencil.intensity,
            "offsets": [list(o) for o in stencil.offsets],
            "weights": [float(w) for w in stencil.weights],
        },
    }
    return features, stencil.flops_per_point, arguments, reference


def _definition_parts(
    d: StencilDefinition, shape: list[str], image: bool
) -> tuple[dict[str, Any], int, list[dict[str, Any]], dict[str, Any]]:
    primary = d.primary_field
    # A repeated offset (a centre weight written 1 - 6*alpha) is one point of the stencil.
    offsets = [list(o) for o in dict.fromkeys(t.offset for t in d.terms_of(primary))]
    arguments: list[dict[str, Any]] = []
    for a in d.arguments:
        arguments.append(_argument(d, a, shape, image and a.name == primary))
        if a.pointer:  # (the kernel declares it so: the buffer holds the elements still)
            arguments[-1]["pointer"] = a.pointer
    flops = 2 * len(d.terms) + (0 if d.constant.is_zero else 1)
    f = from_offsets(offsets, dtype=d.dtype)
    features: dict[str, Any] = {
        "size": f.size,
        "radius": f.radius,
        "extent": list(f.extent),
        "intensity": 1,
        "flops_per_point": flops,
        "pattern": "custom",
        "dims": f.dims,
        "orientation": f.orientation,
        "unique_dim": f.unique_dim,
        "density": f.density,
        "dtype": d.dtype,
        "fields": len(d.fields),
        "terms": len(d.terms),
        "boundary": d.boundary,
    }
    if d.steps > 1:
        features["steps"] = d.steps
    reference: dict[str, Any] = {
        "python": "gtune.stencils.reference:definition_sum",
        "args": {"definition": d.to_dict(), "offsets": offsets},
        # inputs are uniform in [0, 1): the tolerance follows from the coefficients
        "rtol": 0.0,
        "atol": float(f"{d.tolerance(1.0):.3g}"),
    }
    return features, flops, arguments, reference


def _argument(d: StencilDefinition, a: KernelArg, shape: list[str], image: bool) -> dict[str, Any]:
    if a.kind == "field":
        arg: dict[str, Any] = {
            "name": a.name,
            "dtype": d.storage or d.dtype,
            "role": "input",
            "shape": d.field_shape_names(a.name) if a.name in d.pads else shape,
            "init": "random",
        }
        if image:
            arg["image_when"] = "IMAGE == 1"
        return arg
    if a.kind == "output" and d.inplace:  # a field, updated in place: one buffer
        return {"name": a.name, "dtype": d.dtype, "role": "inout", "shape": shape, "init": "random"}
    if a.kind == "output":
        # interior: the output's prior contents are kept near the edge, so they are
        # random data distinct from every input (the reference receives them)
        init = "random" if d.boundary == "interior" else "zeros"
        if d.steps > 1:
            # the steps swap the primary field's buffer and the output's: both hold the
            # same points near the edge, which keep their values every step (interior)
            init = f"copy:{d.primary_field}"
        dtype = d.out_storage
        return {"name": a.name, "dtype": dtype, "role": "output", "shape": shape, "init": init}
    if a.kind == "coefficient":
        return {"name": a.name, "kind": "scalar", "dtype": d.dtype, "value": d.values[a.name]}
    if a.kind == "weights":  # the definition's weights (the reference reads the array)
        values = d.weights[a.name]
        init = "values:" + ",".join(repr(float(v)) for v in values)
        return {
            "name": a.name,
            "dtype": d.dtype,
            "role": "input",
            "shape": [str(len(values))],
            "init": init,
        }
    dtype = _NUMPY_TYPE[vector_of(a.type)[0]]  # a vector scalar (uint2): its lanes' type
    if a.kind == "size":
        return {"name": a.name, "kind": "scalar", "dtype": dtype, "value": a.size_value}
    if a.kind == "local":  # passed as the original's host passes it, at the template's WX...
        return {"name": a.name, "kind": "local", "dtype": dtype, "shape": list(a.shape)}
    value = list(a.value) if isinstance(a.value, tuple) else a.value
    return {"name": a.name, "kind": "scalar", "dtype": dtype, "value": value}


def default_sizes(d: StencilDefinition) -> dict[str, int]:
    return dict(SIZE_3D if d.dims == 3 else SIZE_2D)


def definition_description(
    d: StencilDefinition, sizes: Mapping[str, int] | None = None
) -> tuple[str, dict[str, Any]]:
    """The rendered source and the description of a definition."""
    return render_source(d), describe(d, sizes or default_sizes(d), source=f"{d.name}.cl")


def write_definition(
    d: StencilDefinition,
    directory: Path,
    sizes: Mapping[str, int] | None = None,
    *,
    force: bool = True,
) -> tuple[Path, Path]:
    """Write ``NAME.cl`` and ``NAME.yaml`` of a definition into ``directory`` (files
    there replaced only with ``force``; never through a link: :mod:`gtune.outfiles`)."""
    merged = {**default_sizes(d), **(sizes or {})}
    source, description = definition_description(d, merged)
    cl_path, yaml_path = check_targets(
        [directory / f"{d.name}.cl", directory / f"{d.name}.yaml"], force=force
    )
    write_text(cl_path, source, force=force)
    write_text(yaml_path, dump_description(description), force=force)
    return cl_path, yaml_path


def definition_kernel(path: str | Path) -> Any:
    """A ``NAME.stencil.yaml`` as a :class:`~gtune.kernel.TunableKernel`: the template
    rendered for it with its derived description (nothing is written to disk)."""
    p = Path(path)
    return definition_kernel_of(load_definition(p), label=str(p), base_dir=p.parent)


def definition_kernel_of(
    d: StencilDefinition,
    sizes: Mapping[str, int] | None = None,
    *,
    label: str = "",
    base_dir: Path | None = None,
) -> Any:
    """A definition (as data, e.g. one with ``steps`` set) as a
    :class:`~gtune.kernel.TunableKernel` at ``sizes`` (default: the definition's)."""
    from gtune.description import parse_description

    source, description = definition_description(d, {**default_sizes(d), **(sizes or {})})
    return parse_description(
        description,
        source=source,
        label=label or d.source or f"{d.name}.stencil.yaml",
        source_path="",
        base_dir=base_dir,
    )


class _Dumper(yaml.SafeDumper):
    """Readable descriptions: short scalar lists on one line, one offset per line,
    no anchors or aliases."""

    def ignore_aliases(self, data: Any) -> bool:
        return True


def _represent_list(dumper: yaml.SafeDumper, data: list[Any]) -> yaml.Node:
    scalars = all(not isinstance(v, dict | list) for v in data)
    short = sum(len(str(v)) + 2 for v in data) <= 60 or not any(isinstance(v, str) for v in data)
    return dumper.represent_sequence("tag:yaml.org,2002:seq", data, flow_style=scalars and short)


_Dumper.add_representer(list, _represent_list)


def dump_description(description: Mapping[str, Any]) -> str:
    return yaml.dump(dict(description), Dumper=_Dumper, sort_keys=False, width=120)


def write_stencil(
    stencil: WeightedStencil,
    directory: Path,
    sizes: Mapping[str, int],
    *,
    image: bool = True,
    force: bool = True,
) -> tuple[Path, Path]:
    """Write ``name.cl`` and ``name.yaml`` into ``directory``; return both paths (files
    there replaced only with ``force``; never through a link: :mod:`gtune.outfiles`)."""
    cl_path, yaml_path = check_targets(
        [directory / f"{stencil.name}.cl", directory / f"{stencil.name}.yaml"], force=force
    )
    write_text(cl_path, render_source(stencil), force=force)
    description = describe(stencil, sizes, source=cl_path.name, image=image)
    write_text(yaml_path, dump_description(description), force=force)
    return cl_path, yaml_path


def sizes_for(array_dims: int, size: Sequence[int]) -> dict[str, int]:
    """Problem sizes ``NX, NY[, NZ]`` from ``(NX, NY, NZ)``."""
    names = ("NX", "NY", "NZ")[:array_dims]
    return {n: int(v) for n, v in zip(names, size, strict=False)}

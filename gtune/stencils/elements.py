"""Integer elements: fields and an output of ``uchar``, ``char``, ``ushort``, ``short``,
``int`` or ``uint``, a stencil computed in floating point and converted back as the original does.

A definition with ``storage: uint8`` keeps its arithmetic in ``dtype`` (float32: the
weights, the sum) and stores each result through ``convert``, one of

- ``rtz``: towards zero (a C cast, ``convert_uchar``);
- ``rte``: to the nearest, ties to even (``convert_uchar_rte``);
- ``half_up``: ``+ 0.5`` then towards zero (``(uchar)(sum + 0.5f)``, the C idiom);

each with ``_sat`` for saturation to the type's range (``convert_uchar_sat_rte``). The
numpy reference (:func:`to_storage`) and the OpenCL expression (:func:`store_macro`)
compute the same thing bit for bit: the sum in ``dtype``, ``+ 0.5`` in ``dtype``, then the
rounding and the range.

``int`` and ``uint`` hold more values than float32 does exactly (2**24): a definition of
them is exact for sums within float32's whole numbers, and lift probes and checks them
within 2**20. A negative float converted to an unsigned type without ``_sat`` is
undefined in OpenCL C: lift refuses a kernel that stores one so (``to_storage`` clamps).
"""

from __future__ import annotations

from typing import Any

import numpy as np

#: numpy name -> OpenCL C type of an integer element.
STORAGE_TYPES = {
    "uint8": "uchar",
    "int8": "char",
    "uint16": "ushort",
    "int16": "short",
    "int32": "int",
    "uint32": "uint",
}
ROUNDINGS = ("rtz", "rte", "half_up")
CONVERSIONS = tuple(f"{r}{s}" for r in ROUNDINGS for s in ("", "_sat"))


def is_integer(storage: str) -> bool:
    return storage in STORAGE_TYPES


def limits(storage: str) -> tuple[int, int]:
    info = np.iinfo(np.dtype(storage))
    return int(info.min), int(info.max)


def to_storage(acc: np.ndarray, storage: str, convert: str) -> np.ndarray:
    """``acc`` (in the arithmetic's type) as the kernel stores it: rounded by ``convert``
    and, with ``_sat``, clamped to the type's range (NaN to 0, as OpenCL's ``_sat``). A
    value out of range without ``_sat`` is undefined in OpenCL C; it is clamped here."""
    t = acc.dtype.type
    rounding = convert.removesuffix("_sat")
    if rounding == "half_up":
        v = np.trunc((acc + t(0.5)).astype(t))
    elif rounding == "rte":
        v = np.rint(acc)
    else:
        v = np.trunc(acc)
    lo, hi = limits(storage)
    v = np.where(np.isnan(v), 0.0, v.astype(np.float64))  # int32's and uint32's ranges: in float64
    return np.clip(v, lo, hi).astype(np.dtype(storage))


def store_macro(storage: str, convert: str, real: str) -> str:
    """``#define STORE(v) ...``: the OpenCL conversion of a result ``v`` of type
    ``real`` (float or double) to the element type."""
    ctype = STORAGE_TYPES[storage]
    rounding = convert.removesuffix("_sat")
    sat = "_sat" if convert.endswith("_sat") else ""
    if rounding == "half_up":
        half = "0.5f" if real == "float" else "0.5"
        return f"#define STORE(v) convert_{ctype}{sat}((v) + {half})"
    mode = "_rte" if rounding == "rte" else ""
    return f"#define STORE(v) convert_{ctype}{sat}{mode}(v)"


def store_vector_macro(storage: str, convert: str, real: str) -> str:
    """``#define STORE_VECTOR(v) ...``: :func:`store_macro` for a vector ``v`` of ``VX``
    results (the vector technique), each lane converted as ``STORE`` converts a scalar:
    ``convert_uchar4_sat_rte(v)`` at ``VX`` 4. ``CAT`` is the template's (``VX > 1``)."""
    ctype = STORAGE_TYPES[storage]
    rounding = convert.removesuffix("_sat")
    suffix = ("_sat" if convert.endswith("_sat") else "") + ("_rte" if rounding == "rte" else "")
    name = f"CAT(convert_{ctype}, VX)"
    if suffix:
        name = f"CAT({name}, {suffix})"
    if rounding == "half_up":
        half = "0.5f" if real == "float" else "0.5"
        return f"#define STORE_VECTOR(v) {name}((v) + {half})"
    return f"#define STORE_VECTOR(v) {name}(v)"


def describe(storage: str, convert: str) -> dict[str, Any]:
    """The keys a definition file holds for integer elements."""
    return {"storage": storage, "convert": convert}

"""Numpy references for stencils rendered from the template.

Generated descriptions name ``gtune.stencils.reference:weighted_sum`` with the offsets
and weights in ``reference.args``, so a generated kernel needs no file but its ``.cl``
and ``.yaml``.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import numpy as np


def weighted_sum(
    arrays: Mapping[str, np.ndarray],
    sizes: Mapping[str, int],
    scalars: Mapping[str, float | int],
    *,
    input: str,
    output: str,
    offsets: Sequence[Sequence[int]],
    weights: Sequence[float],
    intensity: int = 1,
) -> dict[str, np.ndarray]:
    """``output`` = sum of ``w * f(input[p + offset])`` over the interior points ``p``.

    ``f`` is the identity for intensity 1 and ``(v + v) * v`` for intensity 2, as in
    the template. Boundary points (closer than the stencil's extent to an edge along
    some axis) keep the output's initial contents. Sums run in float32 in the
    template's term order so the comparison tolerance can stay tight.
    """
    src = np.asarray(arrays[input])
    out = np.array(arrays[output], copy=True)
    if len(offsets) != len(weights):
        raise ValueError(f"{len(offsets)} offsets but {len(weights)} weights")
    if src.ndim == 2:
        src3 = src[np.newaxis]
        out3 = out[np.newaxis]
    elif src.ndim == 3:
        src3, out3 = src, out
    else:
        raise ValueError(f"arrays must be 2D or 3D, got shape {src.shape}")
    nz, ny, nx = src3.shape
    rx = max(abs(int(o[0])) for o in offsets)
    ry = max(abs(int(o[1])) for o in offsets)
    rz = max(abs(int(o[2])) for o in offsets)
    if nx <= 2 * rx or ny <= 2 * ry or nz <= 2 * rz:
        return {output: out}
    src3 = src3.astype(np.float32, copy=False)
    terms = [
        ((int(o[0]), int(o[1]), int(o[2])), np.float32(w))
        for o, w in zip(offsets, weights, strict=True)
    ]

    def block(zs: slice, ys: slice) -> None:
        """Output planes ``zs``, rows ``ys`` (of the interior): every term over a
        block that stays in cache."""
        z0, z1, y0, y1 = zs.start + rz, zs.stop + rz, ys.start + ry, ys.stop + ry
        acc = np.zeros((z1 - z0, y1 - y0, nx - 2 * rx), dtype=np.float32)
        tmp = np.empty_like(acc)
        for (dx, dy, dz), w in terms:
            v = src3[z0 + dz : z1 + dz, y0 + dy : y1 + dy, rx + dx : nx - rx + dx]
            if intensity == 2:
                np.add(v, v, out=tmp)
                np.multiply(tmp, v, out=tmp)
                np.multiply(tmp, w, out=tmp)
            else:
                np.multiply(v, w, out=tmp)
            np.add(acc, tmp, out=acc)
        out3[z0:z1, y0:y1, rx : nx - rx] = acc

    in_blocks((nz - 2 * rz, ny - 2 * ry, nx - 2 * rx), block)
    return {output: out}


# Output points per block: the block's sums and a term's products stay in cache.
_BLOCK = 1 << 16


def fma32(w: np.float32, v: np.ndarray, acc: np.ndarray, out: np.ndarray) -> None:
    """``out = fma(w, v, acc)`` in float32, correctly rounded: ``acc + w * v`` rounded
    once, as a device computes it when it contracts the expression (OpenCL's default;
    PoCL and NVIDIA do), where numpy's float32 rounds the product and then the sum.

    In float64 the product is exact (24 + 24 bits), and the sum ``s`` rounded to float32
    is the fma's result except where ``s`` lies exactly halfway between two float32
    values (its bits below float32's precision are 1000...0, or it is in float32's
    subnormal range) and was itself rounded: only those points take
    :func:`_fma32_at_ties`, which asks on which side the exact sum lies."""
    p = v.astype(np.float64)
    p *= np.float64(w)
    s = p + acc  # float64: acc's float32 values are exact in it
    r = s.astype(np.float32)
    suspect = (s.view(np.uint64) & _BELOW_F32) == _HALF_F32
    small = np.abs(s) < _TINY_F32
    if small.any():
        suspect |= small & (s != 0)
    if suspect.any():
        at = np.nonzero(suspect)
        r[at] = _fma32_at_ties(p[at], np.asarray(acc)[at].astype(np.float64), s[at])
    out[...] = r


_BELOW_F32 = np.uint64((1 << 29) - 1)  # float64's mantissa bits that float32 lacks
_HALF_F32 = np.uint64(1 << 28)  # ... holding exactly half of float32's last place
_TINY_F32 = float(np.finfo(np.float32).tiny)  # below it float32 is subnormal


def _fma32_at_ties(p: np.ndarray, c: np.ndarray, s: np.ndarray) -> np.ndarray:
    """fma rounded to float32 where ``s = p + c`` (float64) may be a float32 tie: the
    sum's error is split off exactly (Knuth's TwoSum, ``s + e``); where ``s`` is exactly
    halfway and ``e`` says on which side the exact sum lies, the nearer float32 is
    taken instead of the even one."""
    b = s - p
    e = (p - (s - b)) + (c - b)
    r = s.astype(np.float32)
    back = r.astype(np.float64)
    toward = np.where(s > back, np.float32(np.inf), np.float32(-np.inf)).astype(np.float32)
    other = np.nextafter(r, toward)
    tie = (s != back) & ((back + other.astype(np.float64)) * 0.5 == s) & (e != 0)
    up = e > 0
    pick = np.where(up == (other > r), other, r)
    return np.where(tie, pick, r)


def blocks(shape: tuple[int, int, int], points: int | None = None) -> list[tuple[slice, slice]]:
    """``shape`` (planes, rows, columns) cut into blocks of about ``points`` points:
    whole planes where a plane is smaller, else runs of rows of one plane (a 2D
    array's single plane is cut too). Together the blocks cover every point once."""
    nz, ny, nx = shape
    points = _BLOCK if points is None else max(1, points)
    if nz <= 0 or ny <= 0 or nx <= 0:
        return []
    if ny * nx >= points:
        rows = max(1, points // nx)
        return [
            (slice(z, z + 1), slice(y, min(y + rows, ny)))
            for z in range(nz)
            for y in range(0, ny, rows)
        ]
    planes = max(1, points // (ny * nx))
    return [(slice(z, min(z + planes, nz)), slice(0, ny)) for z in range(0, nz, planes)]


def in_blocks(
    shape: tuple[int, int, int],
    block: Callable[[slice, slice], None],
    points: int | None = None,
) -> None:
    """``block(planes, rows)`` over :func:`blocks` of ``shape`` (``points`` each,
    default :data:`_BLOCK`), on every core: numpy
    releases the GIL in its loops. Each block computes its points exactly as the whole
    array would (the same operations in the same order), so the result is the same bits
    however it is cut."""
    parts = blocks(shape, points)
    if len(parts) <= 1:
        for zs, ys in parts:
            block(zs, ys)
        return
    with ThreadPoolExecutor(max_workers=min(len(parts), os.cpu_count() or 1)) as pool:
        list(pool.map(lambda part: block(*part), parts))


def definition_sum(
    arrays: Mapping[str, np.ndarray],
    sizes: Mapping[str, int],
    scalars: Mapping[str, float | int],
    *,
    definition: Mapping[str, Any],
    offsets: Sequence[Sequence[int]] = (),
) -> dict[str, np.ndarray]:
    """The reference of a stencil definition (``NAME.stencil.yaml``), given as plain data.

    Coefficients take the values the kernel receives as scalar arguments; the output's
    initial contents are those the kernel finds (kept near the edge with the interior
    boundary). With ``steps`` in the definition, the output after that many steps
    (:meth:`~gtune.stencils.definition.StencilDefinition.reference_steps`). ``offsets``
    (the primary field's, for the predictor's features) is unused.
    """
    from gtune.stencils.definition import parse_definition

    d = parse_definition(dict(definition), "reference.args.definition")
    values = {c: float(scalars[c]) for c in d.coefficients}
    # the fields, and the weights arrays the kernel receives (their entries are factors)
    inputs = {f: np.asarray(arrays[f]) for f in (*d.fields, *d.weights)}
    return {d.output: d.reference_steps(inputs, np.asarray(arrays[d.output]), values)}


def recorded_output(
    arrays: Mapping[str, np.ndarray],
    sizes: Mapping[str, int],
    scalars: Mapping[str, float | int],
    *,
    output: str,
    file: str,
) -> dict[str, np.ndarray]:
    """An output recorded earlier, from a ``.npy`` file: for a lifted definition, the
    original kernel's output on the same initial arrays (``gtune run`` records it)."""
    out = np.load(file)
    want = np.asarray(arrays[output])
    if out.shape != want.shape:
        raise ValueError(f"{file} holds the shape {out.shape}, not {want.shape}")
    return {output: out}

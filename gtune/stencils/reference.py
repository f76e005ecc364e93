"""Numpy references for stencils rendered from the template.

Generated descriptions name ``gtune.stencils.reference:weighted_sum`` with the offsets
and weights in ``reference.args``, so a generated kernel needs no file but its ``.cl``
and ``.yaml``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

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
    acc = np.zeros((nz - 2 * rz, ny - 2 * ry, nx - 2 * rx), dtype=np.float32)
    for (dx, dy, dz), w in zip(offsets, weights, strict=True):
        v = src3[
            rz + dz : nz - rz + dz,
            ry + dy : ny - ry + dy,
            rx + dx : nx - rx + dx,
        ].astype(np.float32)
        if intensity == 2:
            v = (v + v) * v
        acc += np.float32(w) * v
    out3[rz : nz - rz, ry : ny - ry, rx : nx - rx] = acc
    return {output: out}

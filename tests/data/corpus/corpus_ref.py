"""numpy references for corpus kernels (called as f(arrays, sizes, scalars))."""

from __future__ import annotations

import numpy as np


def weighted(arrays, sizes, scalars):
    src, w = arrays["src"], arrays["w"].astype(np.float32)
    dst = arrays["dst"].copy()
    c = src[1:-1, 1:-1]
    dst[1:-1, 1:-1] = (
        w[0] * c
        + w[1] * src[1:-1, :-2]
        + w[2] * src[1:-1, 2:]
        + w[3] * src[:-2, 1:-1]
        + w[4] * src[2:, 1:-1]
    )
    return {"dst": dst}


def blur_padded(arrays, sizes, scalars):
    src = arrays["in"].astype(np.float64)
    ny, nx = sizes["NY"], sizes["NX"]
    s = sum(src[dy : dy + ny, dx : dx + nx] for dy in range(3) for dx in range(3))
    return {"out": (s / 9.0).astype(np.float32)}


def box(arrays, sizes, scalars):
    a = arrays["a"]
    b = arrays["b"].copy()
    b[1:-1, 1:-1] = sum(
        a[1 + dy : a.shape[0] - 1 + dy, 1 + dx : a.shape[1] - 1 + dx]
        for dy in (-1, 0, 1)
        for dx in (-1, 0, 1)
    )
    return {"b": b}


def blur_rows(arrays, sizes, scalars):
    """blur_float4: the float4 rows are plain float rows of the problem's width."""
    a = arrays["in"].astype(np.float64)
    up = np.vstack([a[:1], a[:-1]])
    down = np.vstack([a[1:], a[-1:]])
    return {"out": (0.25 * up + 0.5 * a + 0.25 * down).astype(np.float32)}

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


def gradient(arrays, sizes, scalars):
    f, h = arrays["f"].astype(np.float64), scalars["inv2h"]
    gx, gy = arrays["gx"].copy(), arrays["gy"].copy()
    gx[1:-1, 1:-1] = (f[1:-1, 2:] - f[1:-1, :-2]) * h
    gy[1:-1, 1:-1] = (f[2:, 1:-1] - f[:-2, 1:-1]) * h
    return {"gx": gx, "gy": gy}


def blur_u8(arrays, sizes, scalars):
    src = np.pad(arrays["src"].astype(np.float32), 1, mode="edge")
    ny, nx = arrays["src"].shape
    acc = sum(src[dy : dy + ny, dx : dx + nx] for dy in range(3) for dx in range(3))
    rounded = np.floor(acc / np.float32(9.0) + np.float32(0.5))
    return {"dst": np.clip(rounded, 0, 255).astype(np.uint8)}


def hotspot(arrays, sizes, scalars):
    """One explicit step of Rodinia's hotspot: edge cells read themselves beyond the grid."""
    t = arrays["temp_src"].astype(np.float64)
    p = arrays["power"].astype(np.float64)
    s = {k: float(v) for k, v in scalars.items()}
    e = np.pad(t, 1, mode="edge")
    north, south, west, east = e[:-2, 1:-1], e[2:, 1:-1], e[1:-1, :-2], e[1:-1, 2:]
    out = t + s["step"] / s["Cap"] * (
        p
        + (south + north - 2 * t) / s["Ry"]
        + (east + west - 2 * t) / s["Rx"]
        + (80.0 - t) / s["Rz"]
    )
    return {"temp_dst": out.astype(np.float32)}

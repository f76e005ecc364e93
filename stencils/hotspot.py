"""Numpy reference for hotspot.cl: one thermal step; border cells keep their value."""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np


def reference(
    arrays: Mapping[str, np.ndarray],
    sizes: Mapping[str, int],
    scalars: Mapping[str, float | int],
) -> dict[str, np.ndarray]:
    t = arrays["temp"].astype(np.float32)
    p = arrays["power"].astype(np.float32)
    out = np.array(arrays["dst"], copy=True)
    cc, rx, ry, rz, amb = (np.float32(scalars[k]) for k in ("cc", "rx", "ry", "rz", "amb"))
    c = t[1:-1, 1:-1]
    two = np.float32(2)
    delta = cc * (
        p[1:-1, 1:-1]
        + (t[:-2, 1:-1] + t[2:, 1:-1] - two * c) * ry
        + (t[1:-1, 2:] + t[1:-1, :-2] - two * c) * rx
        + (amb - c) * rz
    )
    out[1:-1, 1:-1] = c + delta
    return {"dst": out}

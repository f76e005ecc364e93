import numpy as np


def reference(arrays, sizes, scalars):
    a = arrays["in"].astype(np.float64)
    out = arrays["out"].copy()
    c = scalars["c0"] * a[1:-1, 1:-1, 1:-1] + scalars["c1"] * (
        a[1:-1, 1:-1, :-2]
        + a[1:-1, 1:-1, 2:]
        + a[1:-1, :-2, 1:-1]
        + a[1:-1, 2:, 1:-1]
        + a[:-2, 1:-1, 1:-1]
        + a[2:, 1:-1, 1:-1]
    )
    out[1:-1, 1:-1, 1:-1] = c
    return {"out": out}

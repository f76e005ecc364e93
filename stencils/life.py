"""Numpy reference for life.cl: one generation; border cells keep their state."""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np


def reference(
    arrays: Mapping[str, np.ndarray],
    sizes: Mapping[str, int],
    scalars: Mapping[str, float | int],
) -> dict[str, np.ndarray]:
    board = arrays["src"].astype(np.int32)
    out = np.array(arrays["dst"], copy=True)
    neighbours = sum(
        board[1 + dy : board.shape[0] - 1 + dy, 1 + dx : board.shape[1] - 1 + dx]
        for dy in (-1, 0, 1)
        for dx in (-1, 0, 1)
        if (dx, dy) != (0, 0)
    )
    alive = board[1:-1, 1:-1] == 1
    out[1:-1, 1:-1] = ((neighbours == 3) | ((neighbours == 2) & alive)).astype(np.int32)
    return {"dst": out}

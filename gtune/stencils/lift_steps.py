"""Several time steps in one launch: a lifted stencil that is k applications of a
smaller one (a "pyramid" of steps in local memory, or steps recomputed per point).

The stencil a launch computes, ``C`` (number weights, one field), is a polynomial in
the shifts; if ``C = S**k`` for a stencil ``S`` of radius ``R / k``, the launch may be k
steps of ``S``. ``S`` is its k-th root, found term by term in decreasing lexicographic
order of the offsets (the top term's weight is the k-th root of ``C``'s top weight;
each next one is fixed by one coefficient of ``C``); then the definition with ``steps:
k`` must reproduce the kernel on random inputs (``reference_steps``: each step reads
the previous one's output, clamped at the edges or with a fixed rim), which decides
whether the launch really is k steps and not only their composite in the interior.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Mapping
from typing import Any

import numpy as np

from gtune.stencils.definition import StencilDefinition, parse_definition

Poly = dict[tuple[int, ...], float]


def _times(a: Mapping[tuple[int, ...], float], b: Mapping[tuple[int, ...], float]) -> Poly:
    out: Poly = {}
    for (oa, wa), (ob, wb) in itertools.product(a.items(), b.items()):
        key = tuple(x + y for x, y in zip(oa, ob, strict=True))
        out[key] = out.get(key, 0.0) + wa * wb
    return out


def power(s: Mapping[tuple[int, ...], float], k: int) -> Poly:
    out: Poly = dict(s)
    for _ in range(k - 1):
        out = _times(out, s)
    return out


def kth_root(c: Mapping[tuple[int, ...], float], k: int, eps: float) -> Poly | None:
    """A stencil ``s`` with ``s**k == c`` to ``eps`` relative to ``c``'s weights (weights
    snapped to simple numbers), or None. For even k the root whose top weight is
    positive."""
    from gtune.stencils.lift import nice_number

    dims = len(next(iter(c)))
    reach = [max(abs(o[d]) for o in c) for d in range(dims)]
    if any(r % k for r in reach) or not any(reach):
        return None
    radius = [r // k for r in reach]
    top = max(c)
    if any(v % k for v in top):
        return None
    m = tuple(v // k for v in top)
    if c[top] < 0 and k % 2 == 0:
        return None
    s: Poly = {m: math.copysign(abs(c[top]) ** (1.0 / k), c[top])}
    lead = k * s[m] ** (k - 1)
    box = itertools.product(*(range(-r, r + 1) for r in radius))
    for d in sorted((o for o in box if o < m), reverse=True):
        target = tuple((k - 1) * a + b for a, b in zip(m, d, strict=True))
        known = power(s, k).get(target, 0.0)
        w = (c.get(target, 0.0) - known) / lead
        if w != 0.0:
            s[d] = w
    scale = sum(abs(v) for v in c.values())
    s = {o: nice_number(w, 64 * eps * scale) for o, w in s.items()}
    s = {o: w for o, w in s.items() if w != 0.0}
    back = power(s, k)
    keys = set(back) | set(c)
    if any(abs(back.get(o, 0.0) - c.get(o, 0.0)) > 256 * eps * scale for o in keys):
        return None
    return s


def as_steps(
    definition: StencilDefinition, run: Any, random: Any, source: str
) -> StencilDefinition | None:
    """``definition`` as k steps of a smaller stencil, where the kernel (``run(inputs,
    out_initial)``) equals them on random inputs (``random(wide)``); else None."""
    if (
        len(definition.fields) != 1
        or not definition.constant.is_zero
        or definition.coefficients
        or definition.weights
        or definition.pads
        or any(not t.coefficient.is_number for t in definition.terms)
    ):
        return None
    dims = definition.dims
    c: Poly = {}
    for t in definition.terms:  # C order: slowest axis first
        key = tuple(reversed(t.offset[:dims]))
        c[key] = c.get(key, 0.0) + float(t.coefficient.factor)
    eps = float(np.finfo(np.float32 if definition.dtype == "float32" else np.float64).eps)
    most = max(max(abs(v) for v in o) for o in c)
    for k in range(most, 1, -1):
        root = kth_root(c, k, eps)
        if root is None:
            continue
        data = definition.to_dict()
        data["terms"] = [
            {"field": definition.fields[0], "offset": list(reversed(o)), "coefficient": w}
            for o, w in sorted(root.items())
        ]
        data["steps"] = k
        stepped = parse_definition(data, source)
        if _reproduces(stepped, run, random):
            return stepped
    return None


def _reproduces(stepped: StencilDefinition, run: Any, random: Any) -> bool:
    field = stepped.fields[0]
    for wide in (False, True):
        a = random(wide)
        out = np.asarray(run({field: a}, a.copy()))  # the output starts as a copy (steps)
        ref = stepped.reference_steps({field: a}, a.copy())
        tol = stepped.tolerance(float(np.max(np.abs(a))))
        if not (np.abs(out.astype(np.float64) - ref.astype(np.float64)) <= tol).all():
            return False
    return True

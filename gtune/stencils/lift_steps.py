"""Several time steps in one launch: a lifted stencil that is k applications of a
smaller one (a "pyramid" of steps in local memory, or steps recomputed per point).

The stencil a launch computes, ``C`` (one field), is a polynomial in the shifts; if
``C = S**k`` for a stencil ``S`` of radius ``R / k``, the launch may be k steps of
``S``. ``S`` is its k-th root, found term by term in decreasing lexicographic order of
the offsets (the top term's weight is the k-th root of ``C``'s top weight; each next one
is fixed by one coefficient of ``C``); then the definition with ``steps: k`` must
reproduce the kernel on random inputs (``reference_steps``: each step reads the previous
one's output, clamped at the edges or with a fixed rim), which decides whether the launch
really is k steps and not only their composite in the interior.

Weights that are products of scalars (``r``, ``-4*r``, ``step/(Cap*Rx)``) are monomials:
``C`` is then a polynomial in the shifts and the scalars together (a scalar's power one
more exponent of the key, a divisor's negative), whose k-th root is found the same way,
and the definition keeps its scalars: it is checked at the given values and at random
ones.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable, Mapping, Sequence

import numpy as np

from gtune.stencils.definition import Coefficient, StencilDefinition, parse_definition

Poly = dict[tuple[int, ...], float]
Run = Callable[[Mapping[str, np.ndarray], np.ndarray, Mapping[str, float | int]], np.ndarray]
Random = Callable[[bool], np.ndarray]


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


def kth_root(
    c: Mapping[tuple[int, ...], float], k: int, eps: float, spatial: int | None = None
) -> Poly | None:
    """A stencil ``s`` with ``s**k == c`` to ``eps`` relative to ``c``'s weights (weights
    snapped to simple numbers), or None. For even k the root whose top weight is
    positive.

    A key's first ``spatial`` entries (default: all) are the offset; any further ones
    are the exponents of scalars (a monomial ``-4*r`` of the weight at the centre is the
    key ``(0, 0, 1)``). Along every entry the extremes of ``c`` are k times those of
    ``s`` (the face of a power is the power of the face), so they must divide by k;
    some offset must be nonzero (a launch that moves nothing is no steps)."""
    from gtune.stencils.lift import nice_number

    dims = len(next(iter(c)))
    spatial = dims if spatial is None else spatial
    lo = [min(o[d] for o in c) for d in range(dims)]
    hi = [max(o[d] for o in c) for d in range(dims)]
    if any(v % k for v in (*lo, *hi)) or not any((*lo[:spatial], *hi[:spatial])):
        return None
    top = max(c)
    m = tuple(v // k for v in top)
    if c[top] < 0 and k % 2 == 0:
        return None
    s: Poly = {m: math.copysign(abs(c[top]) ** (1.0 / k), c[top])}
    lead = k * s[m] ** (k - 1)
    box = itertools.product(*(range(a // k, b // k + 1) for a, b in zip(lo, hi, strict=True)))
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


def steps_obstacle(definition: StencilDefinition) -> str:
    """Why ``definition`` cannot be read as several steps of a smaller stencil ("" where
    it may be)."""
    if len(definition.fields) != 1:
        return f"it reads {len(definition.fields)} fields; steps are lifted for one field"
    if not definition.constant.is_zero:
        return "it has a constant term; steps are lifted without one"
    if definition.weights:
        return "its weights come from an array; steps are lifted for numbers and scalars"
    if definition.pads:
        return "its input is padded; steps are lifted for an unpadded field"
    return ""


def _polynomial(definition: StencilDefinition) -> Poly:
    """The stencil as a polynomial in the shifts (C order) and the coefficients'
    exponents (in ``definition.coefficients``' order)."""
    dims = definition.dims
    c: Poly = {}
    for t in definition.terms:
        q = t.coefficient
        exps = tuple(q.names.count(n) - q.divisors.count(n) for n in definition.coefficients)
        key = tuple(reversed(t.offset[:dims])) + exps
        c[key] = c.get(key, 0.0) + float(q.factor)
    return {o: w for o, w in c.items() if w != 0.0}


def _term(key: tuple[int, ...], weight: float, definition: StencilDefinition) -> dict[str, object]:
    dims = definition.dims
    names = definition.coefficients
    exps = key[dims:]
    above = tuple(sorted(n for n, e in zip(names, exps, strict=True) for _ in range(max(e, 0))))
    below = tuple(sorted(n for n, e in zip(names, exps, strict=True) for _ in range(max(-e, 0))))
    return {
        "field": definition.fields[0],
        "offset": list(reversed(key[:dims])),
        "coefficient": Coefficient(weight, above, below).text(),
    }


def as_steps(
    definition: StencilDefinition,
    run: Run,
    random: Random,
    source: str,
    scalars: Mapping[str, float | int],
    rng: np.random.Generator,
) -> StencilDefinition | None:
    """``definition`` as k steps of a smaller stencil, where the kernel (``run(inputs,
    out_initial, scalars)``) equals them on random inputs (``random(wide)``), at the
    given ``scalars`` and, where the weights are products of scalars, at random values
    of those; else None."""
    if steps_obstacle(definition):
        return None
    c = _polynomial(definition)
    if not c:
        return None
    dims = definition.dims
    eps = float(np.finfo(np.float32 if definition.dtype == "float32" else np.float64).eps)
    most = max(max(abs(v) for v in o[:dims]) for o in c)
    for k in range(most, 1, -1):
        root = kth_root(c, k, eps, dims)
        if root is None:
            continue
        data = definition.to_dict()
        data["terms"] = [_term(o, w, definition) for o, w in sorted(root.items())]
        data["steps"] = k
        stepped = parse_definition(data, source)
        if _reproduces(stepped, run, random, _settings(stepped, scalars, rng)):
            return stepped
    return None


def _settings(
    definition: StencilDefinition, scalars: Mapping[str, float | int], rng: np.random.Generator
) -> list[dict[str, float | int]]:
    """The given scalar values and, where the weights read scalars, those scaled by a
    random k/16 in [0.5, 2] each (a value of 0 stays 0)."""
    out = [dict(scalars)]
    if definition.coefficients:
        other = dict(scalars)
        for n in definition.coefficients:
            scaled = float(scalars[n]) * int(rng.integers(8, 33)) / 16.0
            other[n] = float(np.dtype(definition.dtype).type(scaled))
        out.append(other)
    return out


def _reproduces(
    stepped: StencilDefinition,
    run: Run,
    random: Random,
    settings: Sequence[Mapping[str, float | int]],
) -> bool:
    field = stepped.fields[0]
    for scalars in settings:
        values = {n: float(scalars[n]) for n in stepped.coefficients}
        for wide in (False, True):
            a = random(wide)
            out = np.asarray(run({field: a}, a.copy(), scalars))  # the output starts as a copy
            ref = stepped.reference_steps({field: a}, a.copy(), values)
            tol = stepped.tolerance(float(np.max(np.abs(a))), values)
            if not (np.abs(out.astype(np.float64) - ref.astype(np.float64)) <= tol).all():
                return False
    return True


def not_steps(definition: StencilDefinition) -> str:
    """Why a kernel that writes less than its stencil reaches is no launch of several
    steps with a fixed rim either."""
    why = steps_obstacle(definition) or (
        "its weights are no k-th power of a smaller stencil whose k steps reproduce its "
        "output on random inputs"
    )
    return f"nor is it several time steps per launch with a fixed rim: {why}"


def steps_hint(
    values: Mapping[tuple[str, tuple[int, ...]], float],
    fields: Sequence[str],
    scalars: Sequence[str],
    eps: float,
) -> str:
    """Where a kernel that did not lift looks like k steps per launch (``values``, each
    weight at the probes' scalar values keyed by field and offset in C order, are the
    k-th power of a smaller stencil for one field): what keeps it from lifting as such,
    and what lifts; else ""."""
    for f in fields:
        c = {o: w for (g, o), w in values.items() if g == f and w != 0.0}
        if not c or not any(any(o) for o in c):
            continue
        for k in range(max(max(abs(v) for v in o) for o in c), 1, -1):
            root = kth_root(c, k, eps)
            if root is not None:
                return _hint(f, k, len(root), fields, scalars)
    return ""


def _hint(field: str, k: int, points: int, fields: Sequence[str], scalars: Sequence[str]) -> str:
    what = (
        f"one launch looks like {k} time steps of a {points}-point stencil (the weights of "
        f"{field} at the probes' values are its {_nth(k)} power)"
    )
    one = (
        "lift a version of the kernel that takes one step per launch (the tuned kernel's "
        "temporal blocking fuses steps again)"
    )
    many = f"{len(fields)} fields ({', '.join(fields)})"
    if scalars:
        from gtune.stencils.lift import EXPONENTS, MAX_MONOMIALS

        named = (
            f"the scalar {scalars[0]}"
            if len(scalars) == 1
            else f"{len(scalars)} scalars ({', '.join(scalars)})"
        )
        composed = (
            f"composed over {k} steps, weights of {named} become sums of more products, "
            f"or of higher powers, than lift reads (at most {MAX_MONOMIALS} products of "
            f"powers from {min(EXPONENTS)} to {max(EXPONENTS)} a weight)"
        )
        if len(fields) > 1:
            return (
                f"{what}: {composed}, and over {many} several steps per launch are not "
                f"lifted even with numbers for those scalars (one field only): {one}"
            )
        return (
            f"{what}: {composed}; with those scalars written as numbers in the kernel "
            f"(literals or --define macros) its steps are lifted from the numbers "
            f"(steps: {k}), or {one}"
        )
    if len(fields) > 1:
        return f"{what}, over {many}: several steps per launch are lifted for one field only; {one}"
    return f"{what}, but {k} steps of it do not reproduce its output on random inputs"


def _nth(k: int) -> str:
    return {2: "second", 3: "third"}.get(k, f"{k}th")

"""Lifting a kernel of integer elements (``uchar`` pixels, ``short`` samples ...): the
stencil computed in floating point and the original's conversion back, exactly.

Rounding makes such a kernel a staircase, not a linear map, so the float method of
:mod:`gtune.stencils.lift` does not apply. Instead, by running it through the same
:data:`~gtune.stencils.lift.Probe`:

1. all inputs zero, with two initial outputs that differ everywhere: the points it
   writes (every point, or the interior), which must be zero (no constant term);
2. an impulse of a large value at the centre of each field: the offsets it reads (and a
   large negative one for signed fields into an unsigned output, which clamps a
   negative weight's response to a positive impulse to 0);
3. impulses of every value 1 .. 255 (and -1 .. -128 for a signed type, and a few large
   ones for a wide type) on a lattice of cells whose responses do not overlap: for each
   offset, the staircase ``y(a) = R(w * a)``; for each rounding ``R`` (``rte``,
   ``half_up``, ``rtz``) the weights the staircase allows form an interval, whose
   simplest number is taken (``1/9``), and the staircase is computed again in float32
   under that rounding: it must be reproduced exactly (a probe that lands on a tie tells
   ``rte`` from ``half_up``);
4. saturation: where some input can drive the sum out of the type's range, an input
   that does: the output must be clamped (``_sat``), else it is refused (the result of
   an out-of-range conversion without ``_sat`` is undefined in OpenCL C);
5. the check: random inputs over the type's whole range, and 0/max patterns; the
   definition's reference must equal the kernel's output at every point, bit for bit.
   A scalar (other than a size) must not change the output: weights from run-time
   scalars with integer elements are not expressed yet.

A weights array the host fills (a ``float`` or fixed-point ``short`` mask) is probed at
values of its own, positive and simple: each entry set to 0 in turn tells which weights
read it (step 2), and each such weight is that entry times the simplest factor its
staircase allows (1; a power of two, as ``(s + 8) >> 4`` normalises; else the simplest
fraction); the check runs at the given values. An integer weights array is baked in
(``weights_fixed``): the template reads weights as float.

The output may hold another element type than the fields (``output_storage``): another
integer type, whose range the staircases, the roundings and the saturation are read in,
or float32, whose staircase has no steps (each value the float32 product, the weight
the simplest number that gives every probed value exactly; no rounding, no ``convert``).
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Mapping, Sequence
from dataclasses import replace
from fractions import Fraction
from typing import Any

import numpy as np

from gtune.exceptions import GtuneError, InputError
from gtune.stencils.definition import (
    BAND_RADIUS,
    BAND_REACH,
    RIM_COPY,
    RIM_KEEP,
    StencilDefinition,
    parse_definition,
)
from gtune.stencils.elements import STORAGE_TYPES, limits, to_storage
from gtune.stencils.lift import (
    EDGE_MISMATCH,
    MAX_OFFSET,
    Interface,
    Lifted,
    PartialWrite,
    Probe,
    Slot,
    _Monomial,
    _weight_values,
    definition_data,
    matching_boundary,
    primary_view,
    rim_of,
)

_ROUNDINGS = ("rte", "half_up", "rtz")
#: The largest magnitude a wide type's (int, uint) inputs are probed and checked at:
#: well within float32's exact whole numbers (2**24), so the sums of a few terms are.
WIDE = 2**20


def simplest(lo: Fraction, hi: Fraction) -> Fraction:
    """The simplest rational number in ``[lo, hi]`` (smallest denominator, then
    numerator): the Stern-Brocot descent."""
    if lo > hi:
        raise ValueError("empty interval")
    if lo <= 0 <= hi:
        return Fraction(0)
    if hi < 0:
        return -simplest(-hi, -lo)
    n = math.floor(lo)
    if n == lo:
        return Fraction(n)
    if n + 1 <= hi:
        return Fraction(n + 1)
    return n + 1 / simplest(1 / (hi - n), 1 / (lo - n))


def _pre_range(rounding: str, y: int) -> tuple[Fraction, Fraction]:
    """The values before rounding that round to ``y`` (closed; ties either way)."""
    half = Fraction(1, 2)
    if rounding == "rte":
        return y - half, y + half
    if rounding == "half_up":  # trunc(x + 0.5)
        if y > 0:
            return y - half, y + half
        if y == 0:
            return Fraction(-3, 2), half
        return y - Fraction(3, 2), y - half
    if y > 0:  # rtz
        return Fraction(y), Fraction(y + 1)
    if y == 0:
        return Fraction(-1), Fraction(1)
    return Fraction(y - 1), Fraction(y)


class _IntLifter:
    def __init__(self, face: Interface, probe: Probe, seed: int) -> None:
        self.face = face
        self._probe = probe
        self.rng = np.random.default_rng(seed)
        self.t = np.dtype(face.dtype)
        self.lo, self.hi = limits(face.dtype)
        # the output's elements: the fields' type, another integer type, or float32 (no
        # conversion: a staircase without steps, each value the float32 product)
        self.ot = np.dtype(face.output_dtype)
        self.out_float = self.ot.kind == "f"
        self.olo, self.ohi = (0, 0) if self.out_float else limits(face.output_dtype)
        self.given: dict[str, float | int] = {s.name: s.value for s in face.scalars}
        # the probes fill weights arrays with values of their own (positive, every entry
        # nonzero, so each weight is seen); the checks run at the given ones
        self.probing = {**self.given, **_probe_entries(face)}
        self.user = self.probing
        self.entries = {s.name for s in face.scalars if s.entry_of}
        self.uses: dict[Slot, str] = {}  # the entry of a weights array a weight is
        self.launches = 0

    def refuse(self, why: str, kind: Any = None) -> Exception:
        return self.face.refuse(why, kind) if kind else self.face.refuse(why)

    def run(
        self, inputs: Mapping[str, np.ndarray], out_init: np.ndarray, scalars: Any = None
    ) -> np.ndarray:
        face = self.face
        full = {f: inputs.get(f, np.zeros(face.field_shape(f), self.t)) for f in face.fields}
        values = self.user if scalars is None else scalars
        for w, n in face.weights.items():  # the entries of weights arrays travel as arrays
            full[w] = np.array(
                [values[f"{w}[{i}]"] for i in range(n)], face.weight_types.get(w, "float32")
            )
        self.launches += 1
        values = {k: v for k, v in values.items() if k not in self.entries}
        out = np.asarray(self._probe(full, out_init, values))
        if out.shape != face.shape:
            raise GtuneError(f"a probe returned the shape {out.shape}, not {face.shape}")
        return self.exact(out)

    def exact(self, out: np.ndarray) -> np.ndarray:
        """An output's values, compared exactly: int64, or float64 for float elements."""
        return out.astype(np.float64 if self.out_float else np.int64)

    def random_out(self, shape: Sequence[int]) -> Any:
        """An initial output: random values of the output's type."""
        if self.out_float:
            return (self.rng.integers(-4096, 4096, tuple(shape)) + 0.25).astype(self.ot)
        return self.rng.integers(self.olo, self.ohi + 1, tuple(shape)).astype(self.ot)

    def random(self, shape: Sequence[int], lo: int | None = None, hi: int | None = None) -> Any:
        a, b = self.lo if lo is None else lo, self.hi if hi is None else hi
        return self.rng.integers(a, b + 1, tuple(shape)).astype(self.t)

    # -- 1. what it writes --------------------------------------------------------------
    def written_region(self) -> None:
        shape = self.face.shape
        self.r1 = self.random_out(shape)
        if self.out_float:
            r2 = (self.r1 + 1).astype(self.ot)
        else:
            span = self.ohi - self.olo + 1
            r2 = ((self.r1.astype(np.int64) - self.olo + 1) % span + self.olo).astype(self.ot)
        o1, o2 = self.run({}, self.r1), self.run({}, r2)
        written = ~((o1 == self.r1) & (o2 == r2))
        if not written.any():
            raise self.refuse(f"it leaves its output {self.face.output} as it was")
        if (written & (o1 != o2)).any():
            raise self.refuse("what it writes depends on what its output held: it reads it")
        idx = np.argwhere(written)
        lo, hi = idx.min(axis=0), idx.max(axis=0) + 1
        box = np.zeros_like(written)
        box[tuple(slice(int(a), int(b)) for a, b in zip(lo, hi, strict=True))] = True
        self.off_centre: Exception | None = None
        if not np.array_equal(box, written):
            raise self.refuse(
                "the points it writes are not every point nor a centred box", PartialWrite
            )
        if not np.array_equal(lo, np.array(shape) - hi):  # one-sided, once the offsets are known
            self.off_centre = self.refuse(
                "the points it writes are not every point, a centred box nor (a one-sided "
                "stencil) the points whose taps all lie inside the array",
                PartialWrite,
            )
        if (o1[written] != 0).any():
            raise self.refuse(
                f"with every input zero it writes {o1[written].flat[0]:g}: a constant term, "
                "which a definition of integer elements does not hold yet"
            )
        self.zero_out = o1
        self.margin = tuple(int(v) for v in lo)
        self.top = tuple(int(v) for v in hi)
        self.written = written

    # -- 2. the offsets -------------------------------------------------------------------
    def footprints(self) -> None:
        face = self.face
        centre = tuple(n // 2 for n in face.shape)
        # signed fields into an unsigned output: a negative weight's response to a
        # positive impulse is clamped to 0, so a negative impulse is tried too
        unsigned_out = not self.out_float and self.olo == 0
        bigs = [min(self.hi, 4095)] + (
            [max(self.lo, -4096)] if self.lo < 0 and unsigned_out else []
        )
        self.offsets: dict[str, list[tuple[int, ...]]] = {}
        for f in face.fields:
            pad = face.pads.get(f, (0,) * face.dims)
            changed = np.zeros(face.shape, bool)
            for big in bigs:
                a = np.zeros(face.field_shape(f), self.t)
                a[tuple(c + p for c, p in zip(centre, pad, strict=True))] = big
                changed |= self.run({f: a}, self.r1) != self.zero_out
            if (changed & ~self.written).any():
                raise self.refuse(f"an impulse in {f} changes a point it does not write")
            offs = sorted(
                {
                    tuple(c - int(v) for c, v in zip(centre, p, strict=True))
                    for p in np.argwhere(changed)
                }
            )
            if not offs:
                raise self.refuse(f"its output does not depend on {f} (or every weight is tiny)")
            if any(max(abs(v) for v in o) > MAX_OFFSET for o in offs):
                raise self.refuse(f"it reads {f} beyond the largest offset ({MAX_OFFSET})")
            self.offsets[f] = offs
        self.radius = tuple(
            max(abs(o[d]) for offs in self.offsets.values() for o in offs) for d in range(face.dims)
        )
        self.rim, self.band = RIM_KEEP, BAND_RADIUS
        if self.off_centre is not None:  # the interior with band: reach, or refused
            offsets = [o for offs in self.offsets.values() for o in offs]
            below = tuple(max([0, *(-o[d] for o in offsets)]) for d in range(face.dims))
            above = tuple(max([0, *(o[d] for o in offsets)]) for d in range(face.dims))
            top = tuple(n - t for n, t in zip(face.shape, self.top, strict=True))
            if face.pads or self.margin != below or top != above:
                raise self.off_centre
            self.boundary, self.band = "interior", BAND_REACH
        elif all(m == 0 for m in self.margin):
            self.boundary = "clamp"
            self.written_rim()
        elif self.margin == self.radius:
            self.boundary = "interior"
        else:
            raise self.refuse(
                "the band it writes is neither every point (clamp) nor the points at least "
                "the radius from each edge (interior)"
            )

    def written_rim(self) -> None:
        """Every point written, on a rim as wide as the radius a copy of the primary field
        (the first read off the centre) or 0 (the constant written inside), on two random
        inputs: the interior boundary with ``rim: copy`` or ``rim: 0``, the probes that
        follow confined to the interior (the check tests the rim too)."""
        face = self.face
        rim = rim_of(self.radius, face.shape)
        if not any(self.radius) or rim.all():
            return
        primary, at = primary_view(face, self.offsets)
        copies, zero = True, True
        for _ in range(2):
            inputs = {f: self.random(face.field_shape(f)) for f in face.fields}
            out = self.run(inputs, self.r1)
            copies &= bool(np.array_equal(out[rim], inputs[primary][at][rim]))
            zero &= not out[rim].any()
        if not (copies or zero):
            return
        self.rim = RIM_COPY if copies else "0.0"
        self.boundary = "interior"
        self.margin = tuple(self.radius)
        self.top = tuple(n - r for n, r in zip(face.shape, self.radius, strict=True))
        self.written = ~rim

    # -- 3. the staircases ----------------------------------------------------------------
    def amplitudes(self) -> list[int]:
        amps = list(range(1, min(self.hi, 255) + 1))
        # wide types: a few large values, within float32's exact integers
        amps += [v for v in (300, 1000, 4095, 40000, min(self.hi, WIDE)) if 255 < v <= self.hi]
        if self.lo < 0:
            amps += list(range(-1, max(self.lo, -128) - 1, -1))
        return sorted(set(amps))

    def staircases(self) -> dict[Slot, list[tuple[int, int | float]]]:
        face = self.face
        # (at least twice the radius inside the array: a mirrored boundary reads an
        # impulse one point inside again beyond the edge)
        axes = [
            range(
                max(self.margin[d] + self.radius[d], 2 * self.radius[d]),
                min(self.top[d] - self.radius[d], face.shape[d] - 2 * self.radius[d]),
                2 * self.radius[d] + 2,
            )
            for d in range(face.dims)
        ]
        cells = list(itertools.product(*axes))
        if not cells:
            raise self.refuse("the array is too small for its stencil; lift with a larger --size")
        amps = self.amplitudes()
        samples: dict[Slot, list[tuple[int, int | float]]] = {
            (f, o): [] for f in face.fields for o in self.offsets[f]
        }
        for f in face.fields:
            pad = face.pads.get(f, (0,) * face.dims)
            for start in range(0, len(amps), len(cells)):
                chunk = amps[start : start + len(cells)]
                a = np.zeros(face.field_shape(f), self.t)
                for c, v in zip(cells, chunk, strict=False):
                    a[tuple(ci + p for ci, p in zip(c, pad, strict=True))] = v
                out = self.run({f: a}, self.r1)
                for c, v in zip(cells, chunk, strict=False):
                    for o in self.offsets[f]:
                        p = tuple(ci - oi for ci, oi in zip(c, o, strict=True))
                        samples[(f, o)].append((v, out[p].item()))
        return samples

    def weights_under(
        self, rounding: str, samples: Mapping[Slot, list[tuple[int, int | float]]]
    ) -> dict[Slot, Fraction] | None:
        """The simplest weights that reproduce every staircase under ``rounding`` (the
        float32 product, saturated ends clamped; ``""``: a float output, the product
        itself), or None."""
        out: dict[Slot, Fraction] = {}
        for slot, pairs in samples.items():
            lo, hi = Fraction(-(10**9)), Fraction(10**9)
            for a, y in pairs:
                if not self.out_float and y in (self.olo, self.ohi):
                    continue  # clamped: no bound on both sides
                p0, p1 = _float_range(y) if self.out_float else _pre_range(rounding, int(y))
                w0, w1 = (p0 / a, p1 / a) if a > 0 else (p1 / a, p0 / a)
                lo, hi = max(lo, w0), min(hi, w1)
            if lo > hi:
                return None
            w = self.entry_weight(slot, lo, hi)
            amps = np.array([a for a, _ in pairs], np.float32)
            want = self.exact(np.array([y for _, y in pairs]))
            pre = (np.float32(float(w)) * amps).astype(np.float32)
            if not self.out_float:
                pre = to_storage(pre, self.face.output_dtype, rounding + "_sat")
            if not np.array_equal(self.exact(pre), want):
                return None
            out[slot] = w
        return out

    # -- 2b. weights arrays ---------------------------------------------------------------
    def entry_uses(self) -> None:
        """Which entry of a weights array each weight is (times a number): each entry set
        to 0 in turn, the offsets whose response to a large impulse changes read it. A
        weight that changes with two entries (a product, a sum of them) is refused."""
        face = self.face
        if not face.weights:
            return
        centre = tuple(n // 2 for n in face.shape)
        big = min(self.hi, 4095)
        for f in face.fields:
            pad = face.pads.get(f, (0,) * face.dims)
            a = np.zeros(face.field_shape(f), self.t)
            a[tuple(c + p for c, p in zip(centre, pad, strict=True))] = big
            base = self.run({f: a}, self.r1)
            for entry in sorted(self.entries, key=_entry_order):
                out = self.run({f: a}, self.r1, {**self.probing, entry: 0})
                for o in self.offsets[f]:
                    p = tuple(c - oi for c, oi in zip(centre, o, strict=True))
                    if out[p] == base[p]:
                        continue
                    if (f, o) in self.uses:
                        raise self.refuse(
                            f"the weight of {f}[{', '.join(str(v) for v in reversed(o))}] "
                            f"changes with {self.uses[(f, o)]} and with {entry}: with integer "
                            "elements a weight is one entry of a weights array times a "
                            "number, not a product or sum of entries"
                        )
                    self.uses[(f, o)] = entry

    def entry_weight(self, slot: Slot, lo: Fraction, hi: Fraction) -> Fraction:
        """A weight in ``[lo, hi]`` as a person writes it: where it reads an entry of a
        weights array (probed at ``v``), ``v`` times the simplest factor (1, a power of
        two as a shift normalises, else the simplest fraction); else a number."""
        entry = self.uses.get(slot)
        if entry is None:
            return _nice(lo, hi)
        v = Fraction(float(self.probing[entry]))  # positive
        return v * _factor(lo / v, hi / v)

    def entry_factor(self, slot: Slot, w: Fraction) -> tuple[float, tuple[str, ...]]:
        """A weight as a monomial: (factor, (entry,)) where it reads an entry of a weights
        array, else (w, ())."""
        entry = self.uses.get(slot)
        if entry is None:
            return float(w), ()
        return float(w / Fraction(float(self.probing[entry]))), (entry,)


def _entry_order(name: str) -> tuple[str, int]:
    """``mask[10]`` after ``mask[9]``."""
    array, _, index = name.rpartition("[")
    return array, int(index[:-1])


def _probe_entries(face: Interface) -> dict[str, float]:
    """The values the probes fill weights arrays with: positive (an unsigned output
    clamps a negative response to 0, hiding it), simple, whole numbers in an integer
    array."""
    out: dict[str, float] = {}
    for w, n in face.weights.items():
        whole = np.dtype(face.weight_types.get(w, "float32")).kind in "iu"
        for i, v in enumerate(_weight_values(n, integer=True, whole=whole)):
            out[f"{w}[{i}]"] = v
    return out


def _factor(lo: Fraction, hi: Fraction) -> Fraction:
    """The simplest number in ``[lo, hi]`` for the factor of a weights array's entry:
    1, a power of two (a shift, ``(s + 8) >> 4``), else the simplest; negated where the
    interval is negative."""
    if lo <= 0 <= hi:
        return Fraction(0)
    if hi < 0:
        return -_factor(-hi, -lo)
    for k in [*range(0, 25), *range(-1, -9, -1)]:
        f = Fraction(1, 2**k) if k >= 0 else Fraction(2**-k)
        if lo <= f <= hi:
            return f
    return _nice(lo, hi)


def _float_range(y: float) -> tuple[Fraction, Fraction]:
    """The values that round to the float32 ``y`` (closed; ties either way)."""
    f = np.float32(y)
    below = np.nextafter(f, np.float32(-np.inf))
    above = np.nextafter(f, np.float32(np.inf))
    mid = Fraction(float(f))
    return (mid + Fraction(float(below))) / 2, (mid + Fraction(float(above))) / 2


def _nice(lo: Fraction, hi: Fraction) -> Fraction:
    """A number in ``[lo, hi]`` as a person writes it: the simplest fraction with a small
    denominator, else the shortest decimal, else the simplest fraction."""
    w = simplest(lo, hi)
    if w.denominator <= 64:
        return w
    for digits in range(1, 8):
        v = Fraction(round(float((lo + hi) / 2), digits))
        if lo <= v <= hi:
            return v
    return w


def lift_integer(
    face: Interface,
    probe: Probe,
    *,
    name: str,
    source: str = "<lifted>",
    doc: str = "",
    original: Mapping[str, Any] | None = None,
    seed: int = 1,
) -> tuple[StencilDefinition, int]:
    """Probe a kernel of integer elements and return its checked definition and the
    launches it took (see the module's docstring)."""
    lifter = _IntLifter(face, probe, seed)
    lifter.written_region()
    try:
        _scalars_change_nothing(lifter)
        lifter.footprints()
    except InputError:  # an off-centre band is refused for its band, as before one-sided
        if lifter.off_centre is None:  # stencils lifted
            raise
        raise lifter.off_centre from None
    lifter.entry_uses()
    samples = lifter.staircases()
    roundings = ("",) if lifter.out_float else _ROUNDINGS  # a float output: no rounding
    candidates = [(r, w) for r in roundings if (w := lifter.weights_under(r, samples))]
    if not candidates:
        _wraps(lifter, samples)
        raise lifter.refuse(
            "no rounding (to nearest even, + 0.5 then towards zero, towards zero) of a "
            "weighted sum reproduces its response to single values: not a stencil of "
            "weights and a conversion, or one that divides where a definition multiplies "
            "(sum / 6 lands on ties that sum * (1/6) misses)"
        )
    first: Exception | None = None
    for rounding, weights in candidates:
        lifter.user = lifter.probing  # (the weights found at the probes' values)
        sat = _saturation(lifter, weights)
        lifter.user = lifter.given  # the definition is checked at the given ones
        definition = _definition(face, lifter, weights, rounding + sat, name, source, doc, original)
        definition = _other_boundary(lifter, definition)
        try:
            _check(lifter, definition)
        except GtuneError as exc:
            first = first or exc
            continue
        return definition, lifter.launches
    assert first is not None
    raise first


def _saturation(lifter: _IntLifter, weights: Mapping[Slot, Fraction]) -> str:
    """``_sat`` where an input can drive the sum out of range and the kernel clamps
    it (refused where it does not), and where no input can (the two agree)."""
    face = lifter.face
    if lifter.out_float:  # float results: stored as computed
        return ""
    centre = tuple(n // 2 for n in face.shape)
    # int, uint: inputs within float32's exact whole numbers, as the check's (beyond them
    # a definition is not exact anyway); a sum beyond the range is then not probed
    lo, hi = lifter.lo, lifter.hi
    if lifter.t.itemsize >= 4:
        lo, hi = max(lo, -WIDE), min(hi, WIDE)
    for sign in (1, -1):
        inputs = {f: np.zeros(face.field_shape(f), lifter.t) for f in face.fields}
        total = Fraction(0)
        for (f, o), w in weights.items():
            v = hi if w * sign > 0 else lo
            pad = face.pads.get(f, (0,) * face.dims)
            inputs[f][tuple(c + oi + p for c, oi, p in zip(centre, o, pad, strict=True))] = v
            total += w * v
        if lifter.olo <= total <= lifter.ohi:
            continue
        got = int(lifter.run(inputs, lifter.r1)[centre])
        clamped = lifter.ohi if total > lifter.ohi else lifter.olo
        if got == clamped:
            continue
        wrapped = _wrapped(total, lifter.olo, lifter.ohi)
        if total < 0 and lifter.olo == 0:  # a negative float converted to an unsigned type
            ctype = STORAGE_TYPES.get(face.output_dtype, face.output_dtype)
            raise lifter.refuse(
                f"a negative sum ({float(total):g}: it has negative weights) is stored as "
                f"{got}, not clamped to 0: a conversion of a negative float to {ctype} without "
                f"saturation is undefined in OpenCL C; clamp it (convert_{ctype}_sat) to lift it"
            )
        if got in wrapped:
            raise lifter.refuse(
                f"a sum of {float(total):g} is stored as {got} (wrapped modulo "
                f"{lifter.ohi - lifter.olo + 1}), not clamped to the range of "
                f"{face.output_dtype}: a conversion without saturation (undefined in OpenCL C)"
            )
        shown = " or ".join(str(v) for v in wrapped)
        raise lifter.refuse(
            f"its response to one value at a time is a weighted sum, but with every input "
            f"at the extreme its weight drives up (a sum of {float(total):g}) it stores "
            f"{got}, neither clamped to {clamped} nor wrapped to {shown}: not a linear "
            "stencil on integers (a nonlinear kernel: abs, hypot, min/max, a threshold?)"
        )
    return "_sat"


def _wraps(lifter: _IntLifter, samples: Mapping[Slot, list[tuple[int, int | float]]]) -> None:
    """Refuse, naming the cause, a staircase that rises and falls as the value grows: a sum out of
    the output's range stored without saturation (undefined in OpenCL C), as a negative
    weight's response stored as an unsigned type wraps (``(uint)(sum + 0.5f)``)."""
    if lifter.out_float:
        return
    for (f, o), pairs in samples.items():
        ups = sorted((a, int(y)) for a, y in pairs if a > 0)
        fall = next(((p, q) for p, q in itertools.pairwise(ups) if q[1] < p[1]), None)
        if fall is None or not any(q[1] > p[1] for p, q in itertools.pairwise(ups)):
            continue  # (a staircase that only falls: a negative weight)
        (a0, y0), (a1, y1) = fall
        ctype = STORAGE_TYPES[lifter.face.output_dtype]
        negative = lifter.olo == 0 and y0 > lifter.ohi // 2
        raise lifter.refuse(
            f"the weight of {f}[{', '.join(str(v) for v in reversed(o))}] stores {y0} for "
            f"the value {a0} and {y1} for {a1}: its sum leaves the range of {ctype} and "
            "wraps, a conversion without saturation (undefined in OpenCL C)"
            + (
                f"; a negative weight's sum converted to {ctype} (a negative float to an "
                f"unsigned type): clamp it (convert_{ctype}_sat) to lift it"
                if negative
                else ""
            )
        )


def _wrapped(total: Fraction, lo: int, hi: int) -> list[int]:
    """What a conversion without saturation stores for ``total``: the sum rounded
    down or up (any rounding), modulo the output type's span."""
    span = hi - lo + 1
    rounded = sorted({math.floor(total), math.ceil(total)})
    return sorted({(v - lo) % span + lo for v in rounded})


def _definition(
    face: Interface,
    lifter: _IntLifter,
    weights: Mapping[Slot, Fraction],
    convert: str,
    name: str,
    source: str,
    doc: str,
    original: Mapping[str, Any] | None,
) -> StencilDefinition:
    lifted = Lifted(
        rim=lifter.rim,
        band=lifter.band,
        boundary=lifter.boundary,
        radius=lifter.radius,
        terms={
            slot: [_Monomial(*lifter.entry_factor(slot, w))] for slot, w in weights.items() if w
        },
        constant=[],
        coefficients=tuple(sorted(set(lifter.uses.values()), key=_entry_order)),
    )
    whole = [w for w, t in face.weight_types.items() if np.dtype(t).kind in "iu"]
    if whole:  # (the template reads a weights array as float: an integer one is baked in)
        doc += (
            f" The weights array {whole[0]} holds {STORAGE_TYPES[face.weight_types[whole[0]]]}, "
            "which the tuned kernel cannot read (it reads weights as float): its values under "
            "weights: are baked in (weights_fixed)."
        )
    data = definition_data(face, lifted, name=name, doc=doc.strip(), original=original)
    if whole:
        data["weights_fixed"] = True
    data["dtype"] = "float32"
    data["storage"] = face.dtype
    if face.out_dtype:  # the output's elements of their own type
        data["output_storage"] = face.out_dtype
    if convert:  # (a float output: none)
        data["convert"] = convert
    return parse_definition(data, source)


def _other_boundary(lifter: _IntLifter, definition: StencilDefinition) -> StencilDefinition:
    """``definition`` with the boundary the kernel has where it writes every point and
    reads 0 beyond the edges (taps outside skipped) or the point the wrap, reflect or
    symmetric boundary maps a tap to: on random inputs its output misses the clamped
    definition's, bit for bit, and equals that boundary's. Else as given."""
    if definition.boundary != "clamp" or not any(lifter.radius) or definition.pads:
        return definition
    face = lifter.face
    inputs = {f: lifter.random(face.field_shape(f), max(lifter.lo, 0), 9) for f in face.fields}
    out = lifter.run(inputs, lifter.r1)

    def matches(d: StencilDefinition) -> bool:
        return bool((out == lifter.exact(d.reference(inputs, lifter.r1))).all())

    boundary = matching_boundary(definition, lifter.radius, face.shape, matches)
    if boundary is None:
        return definition
    lifter.boundary = boundary
    return replace(definition, boundary=boundary)


def _check(lifter: _IntLifter, definition: StencilDefinition) -> None:
    """Bit for bit against the kernel on random inputs (the whole range, small values,
    0/max patterns), and scalars other than sizes change nothing."""
    face = lifter.face
    trials: list[dict[str, np.ndarray]] = []
    # a wide type's values within float32's exact integers (beyond them the sum's order,
    # which a definition does not fix, changes the last bit)
    wide = (max(lifter.lo, -WIDE), min(lifter.hi, WIDE))
    for lo, hi in (wide, (0, 9)):
        trials.append({f: lifter.random(face.field_shape(f), lo, hi) for f in face.fields})
    trials.append(
        {
            f: (lifter.rng.integers(0, 2, face.field_shape(f)) * wide[1]).astype(lifter.t)
            for f in face.fields
        }
    )
    for inputs in trials:
        out = lifter.run(inputs, lifter.r1)
        ref = lifter.exact(definition.reference(inputs, lifter.r1))
        bad = out != ref
        if bad.any():
            p = tuple(int(v) for v in np.argwhere(bad)[0])
            inner = tuple(slice(r, n - r) for r, n in zip(lifter.radius, bad.shape, strict=True))
            if lifter.boundary != "interior" and any(lifter.radius) and not bad[inner].any():
                raise lifter.refuse(f"near the edges (e.g. at {p[::-1]}) {EDGE_MISMATCH}")
            by_one = not lifter.out_float and bool((np.abs(out[bad] - ref[bad]) == 1).all())
            how = f"rounding {definition.convert}" if definition.out_integer else "no rounding"
            raise lifter.refuse(
                f"with random inputs its output differs from the definition's at "
                f"{int(bad.sum())} of {bad.size} points (e.g. at {p[::-1]}: {out[p]:g}, the "
                f"definition gives {ref[p]:g}; weights and {how} from single values): "
                "not bit for bit"
                + (
                    " (by one, where a quotient is a whole number or a tie: the kernel divides "
                    "its exact sum, s / 9 in integers or sum / 6.0f, and a definition adds "
                    "weighted terms in float32, which lands beside it)"
                    if by_one
                    else ""
                )
            )


def _scalars_change_nothing(lifter: _IntLifter) -> None:
    """A scalar argument other than a size must not change the output."""
    face = lifter.face
    inputs = {f: lifter.random(face.field_shape(f)) for f in face.fields}
    plain = lifter.run(inputs, lifter.r1)
    for s in face.scalars:
        if s.axis is not None or s.name in face.held or s.entry_of or s.pitch:
            continue
        other = dict(lifter.user)
        if s.dtype.startswith("float"):
            other[s.name] = 2 * float(s.value) + 1
        else:
            other[s.name] = int(s.value) - 1 if int(s.value) > 1 else int(s.value) + 1
        if not np.array_equal(lifter.run(inputs, lifter.r1, other), plain):
            raise lifter.refuse(
                f"the argument {s.name} changes the output: with integer elements, weights "
                "from run-time scalars are not expressed yet (an integer argument must be a "
                f"size, unused, or held at its value: --fixed {s.name})"
            )

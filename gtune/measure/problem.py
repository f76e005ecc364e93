"""Problem data and reference outputs, prepared once on the host with numpy.

Arrays are written as ``.npy`` files into a directory that worker processes read, so a
restarted worker (after a hang or crash) reloads them without regenerating anything.
"""

from __future__ import annotations

import importlib
import importlib.util
import math
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

from gtune.exceptions import InputError
from gtune.kernel import TunableKernel, scalar_values


def initial_arrays(kernel: TunableKernel, seed: int = 1234) -> dict[str, np.ndarray]:
    """The initial contents of every buffer argument, reproducible from ``seed``."""
    env = dict(kernel.sizes)
    rng = np.random.default_rng(seed)
    arrays: dict[str, np.ndarray] = {}
    for arg in kernel.arguments:
        if arg.kind != "buffer":
            continue
        shape = arg.shape_for(env)
        if any(s <= 0 for s in shape):
            raise InputError(f"argument {arg.name} has shape {shape}", source=kernel.label)
        dtype = np.dtype(arg.dtype)
        init = arg.init
        if init.startswith("copy:"):
            src = arrays.get(init[5:])
            if src is None:
                raise InputError(
                    f"argument {arg.name} copies {init[5:]!r}, which must come earlier",
                    source=kernel.label,
                )
            if src.size != math.prod(shape):
                raise InputError(
                    f"argument {arg.name} copies {init[5:]!r} of another size", source=kernel.label
                )
            arrays[arg.name] = src.reshape(shape).astype(dtype, copy=True)
        elif init.startswith("values:"):  # given contents (a stencil's weights)
            values = np.array([float(v) for v in init[len("values:") :].split(",")])
            if values.size != math.prod(shape):
                raise InputError(
                    f"argument {arg.name} lists {values.size} values for its "
                    f"{math.prod(shape)} elements",
                    source=kernel.label,
                )
            arrays[arg.name] = values.reshape(shape).astype(dtype)
        elif init == "zeros":
            arrays[arg.name] = np.zeros(shape, dtype)
        elif init == "ones":
            arrays[arg.name] = np.ones(shape, dtype)
        elif init == "arange":
            arrays[arg.name] = np.arange(math.prod(shape), dtype=dtype).reshape(shape)
        elif init == "random_bits":
            arrays[arg.name] = rng.integers(0, 2, size=shape).astype(dtype)
        elif init == "random_int" or (init == "random" and dtype.kind in "iu"):
            arrays[arg.name] = rng.integers(0, 100, size=shape).astype(dtype)
        else:
            arrays[arg.name] = _uniform(rng, shape, dtype)
    return arrays


# Values drawn at a time by _uniform: 64 MiB of doubles.
_DRAW = 1 << 23


def _uniform(rng: np.random.Generator, shape: tuple[int, ...], dtype: np.dtype[Any]) -> np.ndarray:
    """``rng.random(shape).astype(dtype)``, the same values, drawn a slice at a time
    into the array: a large array of float32 never has a float64 twice its size beside
    it (512^3: 1 GiB less to allocate and touch)."""
    out = np.empty(shape, dtype)
    flat = out.reshape(-1)
    for start in range(0, flat.size, _DRAW):
        stop = min(start + _DRAW, flat.size)
        flat[start:stop] = rng.random(stop - start, dtype=np.float64)
    return out


def _load_function(kernel: TunableKernel) -> Callable[..., Any]:
    target = kernel.reference.target
    where = f"{kernel.label}: reference.python"
    module_name, _, func_name = target.rpartition(":")
    try:
        if module_name.endswith(".py"):
            spec = importlib.util.spec_from_file_location(
                f"gtune_ref_{abs(hash(module_name))}", module_name
            )
            if spec is None or spec.loader is None:
                raise ImportError(f"cannot load {module_name}")
            module = importlib.util.module_from_spec(spec)
            spec.loader.exec_module(module)
        else:
            module = importlib.import_module(module_name)
    except Exception as exc:
        raise InputError(f"cannot import reference {module_name!r}: {exc}", source=where) from None
    func = getattr(module, func_name, None)
    if not callable(func):
        raise InputError(f"{module_name!r} has no function {func_name!r}", source=where)
    return func  # type: ignore[no-any-return]


def python_reference(
    kernel: TunableKernel, arrays: dict[str, np.ndarray], *, copy: bool = True
) -> dict[str, np.ndarray]:
    """Run the description's numpy reference on copies of the initial arrays (on the
    arrays themselves with ``copy=False``, where nothing reads them after)."""
    func = _load_function(kernel)
    where = f"{kernel.label}: reference.python"
    copies = {k: v.copy() for k, v in arrays.items()} if copy else dict(arrays)
    try:
        produced = func(
            copies, dict(kernel.sizes), scalar_values(kernel), **dict(kernel.reference.args)
        )
    except Exception as exc:
        raise InputError(
            f"reference function failed: {type(exc).__name__}: {exc}", source=where
        ) from None
    if not isinstance(produced, dict):
        raise InputError("reference function must return a dict of output arrays", source=where)
    outputs = {a.name: a for a in kernel.arguments if a.kind == "buffer" and a.role != "input"}
    refs: dict[str, np.ndarray] = {}
    for name, value in produced.items():
        if name not in outputs:
            raise InputError(
                f"reference returned {name!r}, which is not an output argument", source=where
            )
        want = arrays[name]
        try:
            arr = np.asarray(value)
            if arr.dtype.kind not in "biuf":
                raise TypeError(f"{arr.dtype} values")
            if arr.shape != want.shape:
                raise InputError(
                    f"reference output {name!r} has shape {arr.shape}, expected {want.shape}",
                    source=where,
                )
            refs[name] = arr.astype(want.dtype)
        except (TypeError, ValueError, OverflowError) as exc:
            raise InputError(
                f"reference output {name!r} is not an array of numbers ({exc})", source=where
            ) from None
    return refs


MAX_TOLERANCE_TERMS = 1000
"""Most terms per output point a default tolerance allows for: a 9×9×9 box, nearly."""
DEFAULT_TERMS = 27


def summed_terms(kernel: TunableKernel) -> int:
    """Terms summed per output point, for the default tolerance.

    Counted from the offsets the reference itself sums where the description gives them
    (generated and shipped stencils); else the description's ``features.size`` (27 when
    it gives none), which is typed in, not computed: it is held within
    [1, :data:`MAX_TOLERANCE_TERMS`], so that no number written there widens the
    tolerance until a wrong kernel passes."""
    offsets = kernel.reference.args.get("offsets") if kernel.reference.kind == "python" else None
    count: float
    if isinstance(offsets, list) and offsets:
        try:
            count = len({tuple(int(v) for v in o) for o in offsets})
            count *= max(1, int(kernel.reference.args.get("intensity", 1)))
        except (TypeError, ValueError, OverflowError):
            count = DEFAULT_TERMS
    else:
        given = kernel.features.get("size", kernel.features.get("points", DEFAULT_TERMS))
        ok = isinstance(given, int | float) and not isinstance(given, bool)
        count = float(given) if ok and math.isfinite(given) else DEFAULT_TERMS
    return int(min(max(count, 1), MAX_TOLERANCE_TERMS))


def tolerances(kernel: TunableKernel, refs: dict[str, np.ndarray]) -> tuple[float, float]:
    """(rtol, atol) for verification: from the data type, the reference's magnitude and
    the number of terms summed per point (:func:`summed_terms`), so reordered float sums
    still pass; the description's ``reference: {rtol, atol}`` override them."""
    ref = kernel.reference
    terms = float(summed_terms(kernel))
    if any(np.dtype(r.dtype).kind in "iub" for r in refs.values()) and refs:
        return (ref.rtol or 0.0, ref.atol or 0.0)
    is_double = any(r.dtype == np.float64 for r in refs.values())
    eps = 1e-15 if is_double else 6e-8
    scale = max((float(np.max(np.abs(r))) for r in refs.values() if r.size), default=1.0) or 1.0
    rtol = ref.rtol if ref.rtol is not None else max(1e-4, 8 * eps * terms)
    atol = ref.atol if ref.atol is not None else 16 * eps * terms * scale
    return float(rtol), float(atol)


def write_problem(
    kernel: TunableKernel,
    directory: Path,
    *,
    problems: list[str] | None = None,
    seed: int = 1234,
    reference: bool = True,
) -> dict[str, np.ndarray]:
    """Write initial arrays (and the python reference's outputs when there is one,
    computed in a process of its own: :mod:`gtune.measure._reference`; ``reference``
    False: not computed, for a caller that replaces the inputs it would read).

    Reasons why checking against the reference could not fail (the verification guard,
    :mod:`gtune.measure.guard`) are appended to ``problems`` when it is given.
    """
    arrays = initial_arrays(kernel, seed)
    for name, arr in arrays.items():
        np.save(directory / f"{name}.npy", arr)
    refs: dict[str, np.ndarray] = {}
    if kernel.reference.kind == "python" and reference:
        from gtune.measure._reference import run_reference

        refs = run_reference(kernel, directory)  # in a process of its own
        if problems is not None:
            from gtune.measure.guard import reference_problems

            # a hand-written reference may leave much of an array alone on purpose
            problems += reference_problems(arrays, refs, unchanged_limit=1.0)
    return refs

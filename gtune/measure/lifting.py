"""Lifting's run-time half: the probes run in a measurement worker, the original
kernel's output as the reference of its lifted definition, and the original timed
against the tuned kernel.

:mod:`gtune.stencils.lift` holds the method (what to probe, how to read the answers,
the definition it writes) and runs nothing; this module gives it a kernel that runs.
"""

from __future__ import annotations

import hashlib
import math
import os
import re
import statistics
import tempfile
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import numpy as np

from gtune.exceptions import GtuneError, InputError
from gtune.kernel import Reference, TunableKernel
from gtune.measure.opencl_evaluator import OpenCLEvaluator
from gtune.measure.problem import initial_arrays
from gtune.stencils.definition import SUFFIX, StencilDefinition, default_name
from gtune.stencils.lift import (
    Interface,
    LaunchFailed,
    default_launch,
    interface,
    lift_with,
    shipped_config,
    with_held,
    with_weights,
)


def lift_kernel(
    kernel: TunableKernel,
    *,
    device: Any = None,
    output: str | Path,
    flags: Sequence[str] = (),
    timeout_s: float = 60.0,
    seed: int = 1,
    plane_index: str | None = None,
    weights: Mapping[str, Sequence[float]] | None = None,
    fixed: Sequence[str] = (),
) -> tuple[StencilDefinition, int]:
    """Lift a plain kernel (its description from the plain flags) on ``device``.

    ``plane_index`` (``"k=z"``): the kernel writes one plane per launch, the plane's
    index in its integer argument ``k``; every probe launches it once per plane, and
    ``original.plane_index`` records it (so the original runs so again). ``weights``:
    the values of weights arrays (a filter) the definition records and is checked at.
    ``fixed``: integer arguments that change what the kernel computes (a filter's size),
    held at their given values; ``original.fixed`` records them, and the definition is
    the kernel at those values.

    Returns the checked definition (``original:`` records the source relative to
    ``output``'s folder, the kernel, the flags and the shipped launch) and the number of
    launches it took; refuses with :class:`NotAStencil` (an :class:`InputError`).
    """
    out = Path(output)
    if not out.name.endswith(SUFFIX):
        raise InputError(f"a definition's file name ends in {SUFFIX}", source=out)
    name = default_name(str(out))
    if not re.fullmatch(r"[A-Za-z_]\w*", name):
        raise InputError(
            f"the name {name!r} (the file name without {SUFFIX}) must be letters, digits and _",
            source=out,
        )
    src = Path(kernel.source_path)
    face = interface(kernel, str(src), plane_index)
    if weights:
        face = with_weights(face, weights)
    if fixed:
        face = with_held(face, fixed)
    config = shipped_config(kernel)
    glob, loc = default_launch(kernel)
    original: dict[str, Any] = {
        "source": os.path.relpath(src.resolve(), out.resolve().parent),
        "kernel": kernel.name,
        "flags": list(flags),
        "size": [int(kernel.sizes[n]) for n in ("NX", "NY", "NZ") if n in kernel.sizes],
        "global": glob,
    }
    if loc is not None:
        original["local"] = loc
    if face.plane is not None:
        original["plane_index"] = f"{face.plane[0]}={face.plane[2]}"
    if face.held:
        original["fixed"] = {s.name: int(s.value) for s in face.scalars if s.name in face.held}
    doc = (
        f"Lifted by gtune from {src.name} (kernel {kernel.name}) by running it at "
        f"{'x'.join(str(v) for v in original['size'])}."
    )
    plane = None
    if face.plane is not None:
        plane = (face.plane[0], int(face.shape[face.dims - 1 - "xyz".index(face.plane[2])]))
    evaluator = OpenCLEvaluator(
        kernel, device, verify=False, compile_workers=0, timeout_s=timeout_s
    )
    try:

        def probe(
            inputs: Mapping[str, np.ndarray],
            out_init: np.ndarray,
            scalars: Mapping[str, float | int],
        ) -> np.ndarray:
            # an update in place: one buffer, the field's array (lift masks what it
            # does not write with the initial output itself)
            arrays = dict(inputs) if face.inplace else {**inputs, face.output: out_init}
            try:
                outputs = run_planes(evaluator, config, arrays, scalars, plane)
            except GtuneError as exc:
                raise launch_refusal(face, kernel, exc.message) from None
            return outputs[face.output]

        return lift_with(
            face, probe, name=name, source=str(out), doc=doc, original=original, seed=seed
        )
    finally:
        evaluator.close()


_OVERRIDE = re.compile(r"warning: the kernel's own #define (\w+) \(line \d+\) overrides (.+?): ")


def launch_refusal(face: Interface, kernel: TunableKernel, message: str) -> LaunchFailed:
    """Why a probe launch failed, as a refusal. A launch that wrote outside its arrays
    (a guard zone changed) says that first: it says nothing of the stencil. Where plain
    mode warned that the kernel's own ``#define`` overrides a size gtune passes
    (``#define image_width 4096``), that is named as the likely cause, with the
    warning's fix."""
    names: list[str] = []
    for note in kernel.inferred:
        m = _OVERRIDE.match(note)
        if m is None:
            continue
        name, given = m.groups()
        option = f"-D{name}="
        values = [str(o)[len(option) :] for o in kernel.build_options if str(o).startswith(option)]
        if given.startswith("the size") or any(re.search(r"\bN[XYZ]\b", v) for v in values):
            names.append(name)
    hint = ""
    if names:
        many = len(names) > 1
        hint = (
            f"likely cause: the kernel's own #define {', '.join(names)} "
            f"override{'' if many else 's'} the size{'s' if many else ''} gtune passes, so it "
            f"runs at its own size, not the probe's: guard {'each' if many else 'it'} with "
            f"#ifndef {names[0]} ... #endif"
        )
    if "past the end of" in message or "before the start of" in message:
        why = f"a probe launch went out of bounds: {message}"
    else:
        why = f"a probe launch failed: {message}"
    # not "not a linear stencil": a launch that did not run shows nothing of the stencil
    text = f"cannot lift kernel {face.kernel_name}: {why}"
    if not hint and why.startswith("a probe launch failed"):
        text = face.refuse(why).message
    refusal = LaunchFailed(text, source=face.label, hint=hint)
    refusal.why = why
    return refusal


def run_planes(
    evaluator: OpenCLEvaluator,
    config: Mapping[str, int],
    arrays: Mapping[str, np.ndarray],
    scalars: Mapping[str, float | int] | None,
    plane: tuple[str, int] | None,
) -> dict[str, np.ndarray]:
    """One launch, or, for a kernel that writes one plane per launch (``plane``: its
    index argument and the number of planes), one launch per plane in order, on the
    same buffers: one sweep in the worker (see :meth:`OpenCLEvaluator.run_once`), the
    arrays in and the outputs back once, the evaluator's time limit for the whole."""
    return evaluator.run_once(config, arrays, scalars, sweep=plane)


def plane_of(definition: StencilDefinition, sizes: Mapping[str, int]) -> tuple[str, int] | None:
    """A lifted definition's ``original.plane_index`` (``"k=z"``) as (argument, number of
    planes at ``sizes``); None for an original that writes every point in one launch."""
    text = (definition.original or {}).get("plane_index")
    if text is None:
        return None
    m = re.fullmatch(r"([A-Za-z_]\w*)=([xyz])", str(text))
    if m is None:
        raise InputError(
            f"original.plane_index: expected SCALAR=AXIS (k=z), got {text!r}",
            source=definition.source or definition.name,
        )
    return m.group(1), int(sizes["N" + m.group(2).upper()])


def against_original(
    kernel: TunableKernel,
    definition: StencilDefinition,
    original: TunableKernel,
    device: Any,
    directory: Path | None = None,
    *,
    seed: int = 1234,
    timeout_s: float = 60.0,
) -> TunableKernel:
    """``kernel`` (the template rendered for a lifted ``definition``) verified against
    the original kernel's output instead of the definition's numpy reference.

    The original runs once at its shipped launch on the very arrays the tuning evaluator
    generates for ``kernel`` (same argument names, same ``seed``), with the definition's
    coefficient values; its output, saved in ``directory`` (default: the temporary
    folder) under a name made of its own hash, becomes the reference
    (:func:`original_output_file` names the file, to delete after tuning). The
    definition's own reference must agree with it first: an edited definition, or an
    original that computes something else at this size, is an error naming the file.
    """
    where = definition.source or kernel.label
    arrays = initial_arrays(kernel, seed)
    buffers = [a for a in original.arguments if a.kind == "buffer"]
    missing = [a.name for a in buffers if a.name not in arrays]
    if missing:
        raise InputError(
            f"original: the original kernel's array {missing[0]} is not an argument of the "
            "definition's kernel",
            source=where,
        )
    _shapes_agree(kernel, definition, original, arrays, where)
    values = {c: float(definition.values[c]) for c in definition.coefficients}
    evaluator = OpenCLEvaluator(
        original, device, verify=False, compile_workers=0, timeout_s=timeout_s
    )
    try:
        outputs = run_planes(
            evaluator,
            shipped_config(original),
            {a.name: arrays[a.name] for a in buffers},
            values,
            plane_of(definition, kernel.sizes),
        )
    except GtuneError as exc:
        raise InputError(
            f"original: the original kernel {original.name} did not run: {exc.message}",
            source=where,
        ) from exc  # (its causes, a worker's traceback among them, show with --debug)
    finally:
        evaluator.close()
    out = outputs[definition.output]
    inputs = {f: arrays[f] for f in definition.fields}
    weights = {w: arrays[w] for w in definition.weights}  # random, as the tuning's
    # one launch of the original is the definition's steps (several: a pyramid of steps)
    ref = definition.reference_steps({**inputs, **weights}, arrays[definition.output], values)
    big = max(float(np.max(np.abs(a))) for a in inputs.values())
    bad = ~(np.abs(out.astype(np.float64) - ref.astype(np.float64)) <= definition.tolerance(big))
    if bad.any():
        size = "x".join(str(kernel.sizes[n]) for n in ("NX", "NY", "NZ") if n in kernel.sizes)
        raise InputError(
            f"the original kernel {original.name} does not compute this definition at {size}: "
            f"{int(bad.sum())} of {bad.size} points differ (edited terms or values, or an "
            "original whose stencil depends on the size?); lift it again",
            source=where,
        )
    folder = (directory or Path(tempfile.gettempdir())).resolve()
    digest = hashlib.sha256(np.ascontiguousarray(out).tobytes()).hexdigest()[:20]
    path = folder / f"gtune-original-{original.name}-{digest}.npy"
    partial = folder / f".{path.name}.{os.getpid()}"
    with open(partial, "wb") as f:
        np.save(f, out)
    os.replace(partial, path)
    # Only the reference's source changes: the kernel keeps its identity (the
    # definition's), so its results are those of the definition -- `gtune export`,
    # `gtune results` and a plain `gtune run` of it find them -- and the same run again
    # is served by the result store.
    reference = Reference(
        "python",
        target="gtune.stencils.reference:recorded_output",
        args={"output": definition.output, "file": str(path)},
        rtol=kernel.reference.rtol,
        atol=kernel.reference.atol,
        digest=kernel.reference.digest,
    )
    return replace(kernel, reference=reference)


def _shapes_agree(
    kernel: TunableKernel,
    definition: StencilDefinition,
    original: TunableKernel,
    arrays: Mapping[str, np.ndarray],
    where: str,
) -> None:
    """The original takes each array in the shape the definition's kernel makes it at
    this size; else an error naming the definition (a pad that changes with the size,
    ``(NX+2+15)/16*16``, is the definition's pad at the lifting size only)."""
    for arg in original.arguments:
        if arg.kind != "buffer":
            continue
        want = arg.shape_for(dict(original.sizes))
        got = tuple(arrays[arg.name].shape)
        if want == got:  # (the worker takes an array in its shape only)
            continue
        size = "x".join(str(kernel.sizes[n]) for n in ("NX", "NY", "NZ") if n in kernel.sizes)
        flags = [str(f) for f in (definition.original or {}).get("flags", [])]
        given = [f for f in flags if f.startswith(f"{arg.name}=")]
        how = f" (--array {given[0]})" if given else ""
        pad = definition.pads.get(arg.name)
        padded = f", padded by {list(pad[: definition.dims])}" if pad else ""
        raise InputError(
            f"original: at {size} the original kernel {original.name} takes its array "
            f"{arg.name} as {_shape_text(want)}{how}, the definition's kernel as "
            f"{_shape_text(got)}{padded}: the definition does not describe the original's "
            "arrays at this size (a pad that changes with the size?); lift it again at this "
            "size, or give the original arrays whose pad is the same at every size",
            source=where,
        )


def launch_text(kernel: TunableKernel, config: Mapping[str, int]) -> str:
    """A kernel's launch at ``config`` in words: ``global 32x24, local 16x16`` (x first;
    without a local size where the driver picks it)."""
    glob, loc = kernel.launch_sizes(config)
    text = f"global {'x'.join(str(n) for n in glob)}"
    return text if loc is None else f"{text}, local {'x'.join(str(n) for n in loc)}"


def _shape_text(shape: Sequence[int]) -> str:
    """An array's shape as the flags write it: x first."""
    return "x".join(str(n) for n in reversed(shape))


@dataclass(frozen=True)
class OriginalComparison:
    """The tuned kernel against the original at its shipped launch, measured
    alternately in the same run."""

    original: str  # the original kernel's name
    original_config: dict[str, int]
    tuned_config: dict[str, int]
    original_s: float  # median over rounds of each round's median
    tuned_s: float
    rounds: int
    # the original's launch at that configuration: "global 32x24, local 16x16"
    original_launch: str = ""

    @property
    def speedup(self) -> float:
        return self.original_s / self.tuned_s if self.tuned_s > 0 else math.inf

    def to_dict(self) -> dict[str, Any]:
        return {
            "original": self.original,
            "original_config": self.original_config,
            "original_launch": self.original_launch,
            "tuned_config": self.tuned_config,
            "original_s": self.original_s,
            "tuned_s": self.tuned_s,
            "rounds": self.rounds,
            "speedup": self.speedup,
        }


def compare_with_original(
    kernel: TunableKernel,
    config: Mapping[str, int],
    original: TunableKernel,
    device: Any,
    *,
    timing: Any = None,
    rounds: int = 3,
    timeout_s: float = 60.0,
) -> OriginalComparison:
    """Time ``config`` of ``kernel`` and the original at its shipped launch, one after
    the other for ``rounds`` rounds (drift hits both alike); outputs are not checked
    again here (tuning verified them)."""
    cfg = shipped_config(original)
    quiet = replace(kernel, reference=Reference("none"))
    times: dict[str, list[float]] = {"original": [], "tuned": []}
    evaluators = {
        "original": (
            OpenCLEvaluator(
                original,
                device,
                verify=False,
                compile_workers=0,
                timing=timing,
                timeout_s=timeout_s,
            ),
            cfg,
        ),
        "tuned": (
            OpenCLEvaluator(
                quiet,
                device,
                verify=False,
                compile_workers=0,
                timing=timing,
                timeout_s=timeout_s,
            ),
            dict(config),
        ),
    }
    try:
        for _ in range(rounds):
            for which, (evaluator, c) in evaluators.items():
                result = evaluator.evaluate(c)
                if not result.ok:
                    name = original.name if which == "original" else kernel.name
                    raise GtuneError(
                        f"the {which} kernel {name} failed at {c}: {result.status.value}: "
                        f"{result.message[:300]}"
                    )
                times[which].append(result.median_s)
    finally:
        for evaluator, _ in evaluators.values():
            evaluator.close()
    return OriginalComparison(
        original=original.name,
        original_config=dict(cfg),
        original_launch=launch_text(original, cfg),
        tuned_config=dict(config),
        original_s=statistics.median(times["original"]),
        # one launch of the original is all the definition's steps; the tuned time is
        # per step
        tuned_s=statistics.median(times["tuned"]) * kernel.step_count,
        rounds=rounds,
    )

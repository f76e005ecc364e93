#!/usr/bin/env python3
"""A candidate stencil template computes exactly what the package's computes: bit by bit.

``benchmarks/template_ab.py`` verifies both renderings against the numpy reference
within its tolerance; a candidate meant to replace the template's code must do more:
give the same bits. Each kernel (a real stencil by name or a ``NAME.stencil.yaml``
path) is rendered from the package's template and from ``--variant``; each
configuration runs once in both on the same random input, with every output element
first set to the same sentinel (so the points a kernel leaves alone, the interior
boundary's rim, are compared too), and the outputs are compared as raw bits
(``--variant-set N=V,...``: the variant's configurations with these values, a new
value of a template parameter against the package's code, e.g. ``RIN=2`` against
``RIN=0``). The configurations: ``--config KERNEL:N=V,...`` (a parameter
left out: its default) or, by default, a grid of small vec tiles (``RIM=1``, ``BX =
VX`` 2 and 4, rows merged in y and z, cyclic merging in z, ``SEP`` where the kernel
has it, ``RIN`` 0 and 1 where the kernel has it) whose blocks straddle every edge at
``--size``; a configuration the package's
rendering cannot run is skipped, said so.

    python3 benchmarks/template_exact.py --variant benchmarks/candidates/X.patch \\
        --kernels heat3d box27 laplacian4 jacobi2d --size 64 --device pthread

``--tolerance``: a configuration whose outputs differ in bits passes when they agree
within the kernel's verification tolerance (the rim left as it was, bit for bit), for a
candidate that sums in another order; each says which it was.

Exit status 0 when every configuration run gives the same bits (or agrees within
tolerance), 1 when one does not, 2 on bad input.
"""

from __future__ import annotations

import argparse
import itertools
import math
import sys
import tempfile
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

import onestep
from candidate import read_variant
from template_ab import render_real, rendering_from

from gtune.commands._common import parse_config
from gtune.description import load_kernel
from gtune.exceptions import GtuneError
from gtune.kernel import TunableKernel
from gtune.measure import run_plain
from gtune.stencils.real import REAL

SENTINEL = -7.25


def grid(kernel: TunableKernel) -> Iterator[dict[str, int]]:
    """Small vec tiles with whole rim vectors, rows merged and blocks cycled."""
    three = "BZ" in kernel.parameter_names and kernel.sizes.get("NZ", 1) > 1
    seps = [0, 1] if "SEP" in kernel.parameter_names else [0]
    base = {"RIM": 1, "LOCAL": 0, "IMAGE": 0, "STREAM": 0, "ZC": 1, "CX": 1, "CY": 1}
    for vx, by, bz, cz, sep in itertools.product(
        (2, 4), (1, 2), (1, 2, 4) if three else (1,), (1, 2) if three else (1,), seps
    ):
        if not three and by == 1 and vx == 2:
            continue
        cfg = {**base, "WX": 8, "WY": 2, "BX": vx, "VX": vx, "BY": by, "SEP": sep}
        if three:
            cfg |= {"WZ": 1, "BZ": bz, "CZ": cz}
        else:
            cfg |= {"CY": 2}
        for rin in (0, 1) if "RIN" in kernel.parameter_names else (0,):
            yield {k: v for k, v in (cfg | {"RIN": rin}).items() if k in kernel.parameter_names}


def inputs(kernel: TunableKernel, seed: int, sentinel: float = SENTINEL) -> dict[str, np.ndarray]:
    """Every buffer: inputs random (floats normal, integers over their type's whole
    range), outputs ``sentinel``."""
    rng = np.random.default_rng(seed)
    env = dict(kernel.sizes)
    arrays: dict[str, np.ndarray] = {}
    for a in kernel.arguments:
        if a.kind != "buffer":
            continue
        dtype, shape = np.dtype(a.dtype), a.shape_for(env)
        if a.role != "input":
            arrays[a.name] = np.full(shape, sentinel, dtype=dtype)
        elif dtype.kind in "iu":
            info = np.iinfo(dtype)
            arrays[a.name] = rng.integers(info.min, info.max, shape, dtype=dtype, endpoint=True)
        else:
            arrays[a.name] = rng.standard_normal(shape).astype(dtype)
    return arrays


def same_bits(a: np.ndarray, b: np.ndarray) -> bool:
    return a.shape == b.shape and a.tobytes() == b.tobytes()


def close_enough(kernel: TunableKernel, a: np.ndarray, b: np.ndarray) -> tuple[bool, float]:
    """Whether ``b`` is ``a`` within the kernel's verification tolerance (``|b - a| <=
    atol + rtol |a|``, the reference's rtol and atol, else the evaluator's defaults),
    every element ``a`` left at the sentinel left so in ``b`` too; and the largest
    ``|b - a|``."""
    if a.shape != b.shape or a.dtype != b.dtype:
        return False, math.inf
    if a.dtype.kind in "iu":
        return same_bits(a, b), 0.0 if same_bits(a, b) else math.inf
    rtol = kernel.reference.rtol if kernel.reference.rtol is not None else 1e-4
    atol = kernel.reference.atol if kernel.reference.atol is not None else 1e-6
    left = a == SENTINEL
    if not np.array_equal(left, b == SENTINEL):
        return False, math.inf
    diff = np.abs(b.astype(np.float64) - a.astype(np.float64))
    worst = float(diff.max()) if diff.size else 0.0
    return bool(np.all(diff <= atol + rtol * np.abs(a.astype(np.float64)))), worst


def check(
    name: str,
    variant: str,
    size: int,
    configs: Sequence[Mapping[str, int]],
    device: str,
    vset: Mapping[str, int] | None = None,
    tolerance: bool = False,
) -> tuple[int, int, int]:
    """(configurations equal, different, skipped) for one kernel; ``tolerance``: equal
    within the kernel's verification tolerance where not bit for bit."""
    with tempfile.TemporaryDirectory() as tmp:
        if name.endswith(".stencil.yaml"):  # a definition, rendered as it loads
            ka = load_kernel(name)
            with rendering_from(variant):
                kb = load_kernel(name)
        else:
            ka = load_kernel(render_real(name, Path(tmp) / "package", None))
            kb = load_kernel(render_real(name, Path(tmp) / "variant", variant))
        sizes = onestep.kernel_sizes(ka, size, 16 * size)
        ka, kb = ka.with_sizes(sizes), kb.with_sizes(sizes)
        arrays = inputs(ka, seed=size)
        equal = different = skipped = 0
        for cfg in configs or list(grid(ka)):
            full = ka.with_defaults(cfg)
            try:
                out_a = run_plain(ka, arrays, full, device=device)
            except GtuneError as e:
                print(f"{name}: skipped {full}: the package's rendering fails ({e})")
                skipped += 1
                continue
            out_b = run_plain(kb, arrays, {**full, **(vset or {})}, device=device)
            bad = [n for n in out_a if not same_bits(out_a[n], out_b[n])]
            text = " ".join(f"{k}={v}" for k, v in full.items())
            close = [close_enough(ka, out_a[n], out_b[n]) for n in bad] if tolerance else []
            if bad and not (close and all(ok for ok, _ in close)):
                different += 1
                print(f"{name}: DIFFERENT ({', '.join(bad)}) at {text}")
            elif bad:
                equal += 1
                worst = max(w for _, w in close)
                print(f"{name}: within tolerance (largest difference {worst:.3g}) at {text}")
            else:
                equal += 1
                print(f"{name}: same bits at {text}")
        return equal, different, skipped


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument(
        "--variant",
        type=Path,
        required=True,
        help="the candidate: a stencil.cl, or a .patch of the package's (candidate.py)",
    )
    ap.add_argument(
        "--kernels",
        nargs="+",
        default=["heat3d", "box27", "laplacian4", "jacobi2d"],
        help="real stencils by name or NAME.stencil.yaml paths",
    )
    ap.add_argument("--config", action="append", default=[], metavar="KERNEL:N=V,...")
    ap.add_argument("--size", type=int, default=64, help="3D cube side (2D: 16x this)")
    ap.add_argument("--device", default="pthread")
    ap.add_argument(
        "--variant-set",
        default="",
        metavar="N=V,...",
        help="the variant's configurations with these values (e.g. RIN=2)",
    )
    ap.add_argument(
        "--tolerance",
        action="store_true",
        help="a configuration whose outputs differ in bits passes within the kernel's "
        "verification tolerance (a candidate that sums in another order)",
    )
    args = ap.parse_args(argv)
    if not args.variant.is_file():
        print(f"template_exact: {args.variant}: no such file", file=sys.stderr)
        return 2
    unknown = [
        k
        for k in args.kernels
        if k not in REAL and not (k.endswith(".stencil.yaml") and Path(k).is_file())
    ]
    if unknown:
        print(
            f"template_exact: not a real stencil nor a .stencil.yaml file: {', '.join(unknown)}",
            file=sys.stderr,
        )
        return 2
    variant = read_variant(args.variant)
    vset = parse_config(args.variant_set) if args.variant_set else {}
    totals = [0, 0, 0]
    for name in args.kernels:
        configs = [
            parse_config(c.split(":", 1)[1]) for c in args.config if c.startswith(name + ":")
        ]
        counts = check(name, variant, args.size, configs, args.device, vset, args.tolerance)
        for i, n in enumerate(counts):
            totals[i] += n
    same = "same bits or within tolerance" if args.tolerance else "same bits"
    print(f"{same}: {totals[0]}, different: {totals[1]}, skipped: {totals[2]}")
    return 1 if totals[1] else 0


if __name__ == "__main__":
    raise SystemExit(main())

#!/usr/bin/env python3
"""A candidate stencil template against the package's, configuration by configuration.

Each kernel, a real stencil by name (``gtune/stencils/real.py``) or a stencil definition
by its ``NAME.stencil.yaml`` path, is rendered twice: once from the package's template
and once from ``--variant`` (a whole ``stencil.cl``). The same configurations of both
are measured side by side in alternating rounds, so drift hits both alike. The
configurations are the ``--top`` fastest of each kernel in a recorded store
(``--store``, e.g. an ``onestep.py`` run's ``onestep.db``) plus any given with
``--config KERNEL:N=V,...`` (a parameter left out: its default). Both renderings are
verified once per configuration first: a configuration the package's rendering cannot
run (another size, another device) is skipped, and a variant that fails or computes
something else where the package's rendering verifies stops the run, untimed.

``--variant-set N=V,...`` gives the variant's configurations these values (the variant
template, without ``--variant``, the package's own): two configurations of one template
side by side, a template parameter off and on (``--variant-set RIN=1``).
``--variant-option OPT`` (repeatable) builds the variant with this compiler option
besides the kernel's own: one template built two ways, e.g. NVIDIA's register cap
(``--variant-option=-cl-nv-maxrregcount=64``).

    python3 benchmarks/template_ab.py OUT --variant candidate.cl --store onestep.db \\
        --kernels heat3d box27 --top 8 --device NVIDIA
    python3 benchmarks/template_ab.py OUT --variant-set RIN=1 --config ... --device NVIDIA

Writes ``OUT/template_ab.json`` and ``OUT/template_ab.md``.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import statistics
import sys
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

import bandwidth as bw
import onestep
from candidate import read_variant
from onestep_tiles import stored_rows

from gtune.commands._common import parse_config
from gtune.description import load_kernel
from gtune.exceptions import GtuneError
from gtune.kernel import TunableKernel
from gtune.measure import OpenCLEvaluator, select_device
from gtune.stencils import render
from gtune.stencils.real import REAL
from gtune.stencils.render import sizes_for, write_stencil

COPY_CONFIG = {"WX": 512, "VX": 4}  # the float4 copy, as onestep.py's tuning finds it


@contextlib.contextmanager
def rendering_from(template: str | None) -> Iterator[None]:
    """Stencils rendered inside come from ``template`` (text of a whole stencil.cl), or
    the package's template when None."""
    original = render.template_source
    if template is not None:
        render.template_source = lambda: template  # type: ignore[assignment]
    try:
        yield
    finally:
        render.template_source = original  # type: ignore[assignment]


def render_real(name: str, directory: Path, template: str | None) -> Path:
    """Write the real stencil ``name`` into ``directory``, from ``template`` or the
    package's; returns its description's path."""
    stencil = REAL[name]()
    with rendering_from(template):
        written = write_stencil(stencil, directory, sizes_for(stencil.array_dims, (64, 64, 64)))
    return next(p for p in written if p.suffix == ".yaml")


def load_both(
    name: str, work: Path, variant: str | None, size: int
) -> tuple[str, TunableKernel, TunableKernel]:
    """A real stencil by name, or a NAME.stencil.yaml definition by path, loaded from
    the package's template and from ``variant`` (None: the package's) at
    ``onestep.py``'s sizes (``size`` cubed, 2D: ``16 * size`` squared): (its name,
    package, variant)."""
    if name.endswith(".stencil.yaml"):
        ka = load_kernel(name)
        with rendering_from(variant):
            kb = load_kernel(name)
        label = Path(name).name.removesuffix(".stencil.yaml")
    else:
        ka = load_kernel(render_real(name, work / "package", None))
        kb = load_kernel(render_real(name, work / "variant", variant))
        label = name
    sizes = onestep.kernel_sizes(ka, size, 16 * size)
    return label, ka.with_sizes(sizes), kb.with_sizes(sizes)


def stored_configs(store: Path, kernel: str, top: int) -> list[dict[str, int]]:
    """The ``top`` fastest distinct verified configurations of ``kernel`` (its name, as
    the store names it) in a recorded store (``.db`` or ``.db.gz``)."""
    best: dict[str, tuple[float, dict[str, int]]] = {}
    for row in stored_rows(store, kernel):
        r = row.result
        if not r.ok:
            continue
        key = json.dumps(dict(sorted(r.config.items())))
        if key not in best or r.objective < best[key][0]:
            best[key] = (r.objective, dict(r.config))
    return [cfg for _, cfg in sorted(best.values(), key=lambda tc: tc[0])[:top]]


def verify(
    kernel: TunableKernel, device: Any, configs: Sequence[Mapping[str, int]]
) -> list[str | None]:
    """Each configuration's failure on the device (None: it verified), one evaluator so
    the reference is computed once."""
    ev = OpenCLEvaluator(kernel, device, runs=1, compile_workers=0)
    failures: list[str | None] = []
    try:
        for cfg in configs:
            r = ev.evaluate(dict(cfg))
            failures.append(None if r.ok else f"{r.status.value}: {r.message[:200]}")
    finally:
        ev.close()
    return failures


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("outdir", type=Path)
    ap.add_argument(
        "--variant",
        type=Path,
        help="the candidate: a stencil.cl, or a .patch of the package's (candidate.py); "
        "left out: the package's template (with --variant-set)",
    )
    ap.add_argument(
        "--variant-set",
        default="",
        metavar="N=V,...",
        help="the variant's configurations: each configuration with these values",
    )
    ap.add_argument(
        "--variant-option",
        action="append",
        default=[],
        metavar="OPT",
        help="a compiler option the variant is built with besides the kernel's own "
        "(repeatable; write it --variant-option=-cl-...)",
    )
    ap.add_argument(
        "--kernels",
        nargs="+",
        default=["heat3d", "box27"],
        help="real stencils by name or NAME.stencil.yaml paths",
    )
    ap.add_argument("--store", type=Path, help="a recorded store to take configurations from")
    ap.add_argument("--top", type=int, default=8)
    ap.add_argument("--config", action="append", default=[], metavar="KERNEL:N=V,...")
    ap.add_argument("--device", default="NVIDIA")
    ap.add_argument("--size", type=int, default=512, help="3D cube side (2D: 16x this)")
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument(
        "--copy",
        action="store_true",
        help="time the float4 copy kernel (WX 512, VX 4) in the same rounds, and give every "
        "time as a fraction of its bandwidth",
    )
    args = ap.parse_args(argv)
    if args.variant is None and not args.variant_set and not args.variant_option:
        ap.error("give --variant, --variant-set or --variant-option")
    vset = parse_config(args.variant_set) if args.variant_set else {}

    device = select_device(args.device)
    variant = read_variant(args.variant) if args.variant is not None else None
    args.outdir.mkdir(parents=True, exist_ok=True)
    work = args.outdir / "rendered"
    runs: list[tuple[str, TunableKernel, Mapping[str, int]]] = []
    kernels: dict[str, TunableKernel] = {}
    rows: list[dict[str, Any]] = []
    for spec in args.kernels:
        name, ka, kb = load_both(spec, work, variant, args.size)
        if args.variant_option:
            kb = replace(kb, build_options=kb.build_options + tuple(args.variant_option))
        kernels[name] = ka
        configs = stored_configs(args.store, name, args.top) if args.store else []
        configs += [
            parse_config(c.split(":", 1)[1]) for c in args.config if c.startswith(name + ":")
        ]
        # a parameter a configuration lacks (recorded or written before the kernel gained
        # it) at its default
        configs = [ka.with_defaults(c) for c in configs]
        kept = []
        vconfigs = [{**c, **vset} for c in configs]
        for cfg, fa, fb in zip(
            configs, verify(ka, device, configs), verify(kb, device, vconfigs), strict=True
        ):
            if fa is not None:  # not a configuration of this size and device: skipped
                bw.log(f"{name}: skipped {cfg}: the package's rendering fails ({fa})")
            elif fb is not None:  # the candidate computes something else, or fails
                raise GtuneError(f"{name}: the variant fails at {cfg}: {fb}")
            else:
                kept.append(cfg)
        configs = kept
        for i, cfg in enumerate(configs):
            key = f"{name}#{i}"
            runs += [(f"{key}/package", ka, cfg), (f"{key}/variant", kb, {**cfg, **vset})]
            rows.append({"kernel": name, "key": key, "config": cfg})
        bw.log(f"{name}: {len(configs)} configurations, both renderings verified")
    copy: TunableKernel | None = None
    if args.copy:
        n = args.size
        copy = bw.copy_kernel(work / "copy", {"NX": n, "NY": n, "NZ": n})
        runs.append(("copy", copy, COPY_CONFIG))
    times = bw.alternate(device, runs, args.rounds)
    for row in rows:
        row["package_s"] = times[f"{row['key']}/package"]
        row["variant_s"] = times[f"{row['key']}/variant"]
        row["ratio"] = row["variant_s"] / row["package_s"]
    summary: dict[str, Any] = {"device": device.name, "rounds": args.rounds, "rows": rows}
    if vset:
        summary["variant_set"] = vset
    if args.variant_option:
        summary["variant_options"] = list(args.variant_option)
    if copy is not None:
        # a kernel moves its own bytes (fields, sizes); the copy's bandwidth is the yardstick
        copy_gbs = copy.bytes_moved() / times["copy"] / 1e9
        summary["copy"] = {"config": COPY_CONFIG, "time_s": times["copy"], "gbs": copy_gbs}
        for row in rows:
            moved = kernels[row["kernel"]].bytes_moved()
            for side in ("package", "variant"):
                row[f"{side}_of_copy"] = moved / row[f"{side}_s"] / 1e9 / copy_gbs
    for name in kernels:
        mine = [r for r in rows if r["kernel"] == name]
        if mine:
            summary[name] = {
                "best_package_s": min(r["package_s"] for r in mine),
                "best_variant_s": min(r["variant_s"] for r in mine),
                "median_ratio": statistics.median(r["ratio"] for r in mine),
            }
    (args.outdir / "template_ab.json").write_text(json.dumps(summary, indent=1))
    lines = [
        f"# Template A/B on {device.name}",
        "",
        f"Medians of {args.rounds} alternating rounds; ratio = variant / package time.",
        "",
    ]
    if vset:
        lines += [
            "Variant: "
            + ("the package's template" if variant is None else str(args.variant))
            + " with "
            + ", ".join(f"{k}={v}" for k, v in vset.items())
            + " in every configuration.",
            "",
        ]
    if args.variant_option:
        lines += [
            "Variant built with the compiler options "
            + " ".join(f"`{o}`" for o in args.variant_option)
            + " besides the kernel's own"
            + ("" if variant is None else f" (template {args.variant})")
            + ".",
            "",
        ]
    if copy is not None:
        c = summary["copy"]
        lines += [
            f"Copy kernel in the same rounds ({COPY_CONFIG}): {c['time_s'] * 1e3:.3f} ms, "
            f"{c['gbs']:.0f} GB/s; (x %): the time as a fraction of its bandwidth.",
            "",
        ]
    lines += [
        "| kernel | configuration | package | variant | ratio |",
        "|---|---|---:|---:|---:|",
    ]

    def shown(r: Mapping[str, Any], side: str) -> str:
        text = f"{r[side + '_s'] * 1e3:.3f} ms"
        if side + "_of_copy" in r:
            text += f" ({r[side + '_of_copy'] * 100:.1f} %)"
        return text

    for r in rows:
        text = " ".join(f"{k}={v}" for k, v in r["config"].items() if k not in ("IMAGE", "LOCAL"))
        lines.append(
            f"| {r['kernel']} | {text} | {shown(r, 'package')} "
            f"| {shown(r, 'variant')} | {r['ratio']:.3f} |"
        )
    lines.append("")
    for name in kernels:
        if name in summary:
            s = summary[name]
            lines.append(
                f"- {name}: best package {s['best_package_s'] * 1e3:.3f} ms, best variant "
                f"{s['best_variant_s'] * 1e3:.3f} ms, median ratio {s['median_ratio']:.3f}"
            )
    (args.outdir / "template_ab.md").write_text("\n".join(lines) + "\n")
    bw.log("\n".join(lines))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

"""``gtune export``: what the store holds, for an application or for other tools.

Two formats. ``kernel`` (the default when a kernel file is given): the kernel's best
configuration as an application takes it -- the source with the tuned parameters fixed,
build options and launch sizes as formulas of the problem size, the argument list -- as
``NAME_tuned.cl``, ``NAME_tuned.json`` and ``NAME_tuned.h``. ``t4``: stored results in
the T4 tuning-results schema (Kernel Tuner / KTT tools), one results file per kernel
(and size and device) plus ``metadata.json`` when writing into a folder.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from gtune.campaign.formats import export_t4, export_t4_metadata, t4_file_name
from gtune.commands._common import (
    fmt_seconds,
    open_store,
    parse_size,
    selected_rows,
    size_text,
)
from gtune.commands._plain import add_plain_arguments, is_plain, open_tunable
from gtune.exceptions import InputError
from gtune.kernel import TunableKernel
from gtune.outfiles import check_targets, write_text
from gtune.result import ResultStore, StoredRow
from gtune.store.ranking import confirmation, confirmed_default, groups, ranked
from gtune.tuned import TunedKernel, tuned_bundle, tuned_kernel, write_bundle, write_tuned

if TYPE_CHECKING:
    from gtune.stencils.definition import StencilDefinition

HELP = (
    "write a kernel's best configuration for an application (source, JSON, C header), "
    "or stored results in the T4 schema"
)


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "kernel_file",
        nargs="?",
        metavar="KERNEL",
        help="the kernel whose best configuration to export (kernel.cl with its description, "
        "or a plain .cl with the flags `gtune run` was given)",
    )
    p.add_argument("--size", metavar="NXxNYxNZ", help="the problem size it was tuned at")
    p.add_argument(
        "--sizes",
        metavar="all|NXxNYxNZ,...",
        help="kernel: a bundle of every tuned (device, size) of the kernel (all: every size "
        "the store holds; or a list): NAME_bundle.json, NAME_bundle.h with gtune_select(), "
        "and one .cl per configuration (docs/export.md)",
    )
    p.add_argument(
        "--format",
        choices=("kernel", "t4"),
        help="kernel: the tuned kernel for an application (default with KERNEL); "
        "t4: results in the T4 schema (default without KERNEL)",
    )
    p.add_argument(
        "--kernel",
        "-k",
        help="t4: only this kernel (file name, full name, function name or identity prefix)",
    )
    p.add_argument("--device", "-d", help="device identity (prefix)")
    p.add_argument(
        "--out",
        "-o",
        metavar="PATH",
        help="kernel: the folder to write into (default: the current one); t4: a .json file, "
        "or a folder for one results file per kernel plus metadata.json (default: standard "
        "output)",
    )
    p.add_argument(
        "--full-template",
        action="store_true",
        help="kernel: write the whole source with the configuration's #defines at its top "
        "(default: the source specialised to the configuration: only the code it runs, its "
        "preprocessor conditionals resolved)",
    )
    p.add_argument(
        "--force",
        action="store_true",
        help="replace output files that exist (default: keep them and stop)",
    )
    add_plain_arguments(p)


def run(args: argparse.Namespace) -> int:
    fmt = args.format or ("kernel" if args.kernel_file else "t4")
    if fmt == "kernel":
        if not args.kernel_file:
            raise InputError(
                "the kernel format needs the kernel file, e.g. gtune export "
                "stencils/heat3d.cl --size 64x64x64",
                source="--format kernel",
            )
        if args.kernel:
            raise InputError(
                "give the kernel as a file (KERNEL) for the kernel format; --kernel selects "
                "results for --format t4",
                source="--kernel",
            )
        if args.sizes is not None:
            return _export_bundle(args)
        return _export_kernel(args)
    if args.sizes is not None:
        raise InputError("--sizes writes a bundle of the kernel format", source="--sizes")
    return _export_t4(args)


# -- the tuned kernel ------------------------------------------------------------------


def _open(args: argparse.Namespace) -> TunableKernel:
    view = argparse.Namespace(**vars(args))
    view.kernel = args.kernel_file
    return open_tunable(view)


def best_for(
    kernel: TunableKernel, rows: list[StoredRow], device: str | None, where: str
) -> tuple[StoredRow, StoredRow | None]:
    """The best stored row of ``kernel`` (one device) and its confirmed default."""
    by_device = groups(rows)
    if len(by_device) > 1:
        listing = ", ".join(sorted(d for d, _ in by_device))
        raise InputError(
            f"{kernel.store_name} was tuned on several devices ({listing}); choose one with "
            "--device",
            source=where,
        )
    group = next(iter(by_device.values()))
    best = ranked(group)
    if not best:
        raise InputError(
            f"no stored configuration of {kernel.store_name} at {size_text(kernel.sizes)} "
            f"ran correctly on {group[0].device}",
            source=where,
        )
    return best[0], confirmed_default(group)


def _export_kernel(args: argparse.Namespace) -> int:
    kernel = _open(args)
    folder = Path(args.out or ".")
    if folder.exists() and not folder.is_dir():
        raise InputError("the kernel format writes into a folder; this is a file", source=folder)
    best, default = _stored_best(args, kernel)
    tuned = tuned_kernel(
        kernel,
        best.result.config,
        device=best.device,
        device_identity=best.device,
        time_s=best.result.median_s,
        confirmed=confirmation(best) is not None,
        default_config=None if default is None else dict(default.result.config),
        default_time_s=(
            default.result.median_s if default is not None and default.result.ok else None
        ),
        full_template=args.full_template,
    )
    notes = _lifted_notes(args.kernel_file, tuned)
    if notes:
        tuned = dataclasses.replace(tuned, notes=(*tuned.notes, *notes))
    stem = _stem(kernel) + "_tuned"
    target = (folder / f"{stem}.cl").resolve()
    if kernel.source_path and target == Path(kernel.source_path).resolve():
        raise InputError("would overwrite the kernel's own source", source=target)
    paths = write_tuned(tuned, folder, stem, force=args.force)
    print(_summary(tuned, paths), file=sys.stderr)
    return 0


def _lifted_notes(path: str, tuned: TunedKernel) -> list[str]:
    """For a definition lifted from a plain kernel: what its host code must know (a
    per-plane loop replaced, several steps per launch, arguments held); empty for any
    other kernel."""
    from gtune.stencils.definition import is_definition_path, load_definition

    if not is_definition_path(path):
        return []
    definition = load_definition(path)
    if definition.original is None:
        return []
    notes = (
        _plane_note(definition),
        _steps_note(definition, tuned),
        _fixed_note(definition),
        _local_note(definition),
    )
    return [n for n in notes if n]


def _plane_note(definition: StencilDefinition) -> str:
    """For a kernel launched once per plane, how to replace the host's loop."""
    original = definition.original or {}
    index = original.get("plane_index")
    if not index:
        return ""
    name, _, axis = str(index).partition("=")
    count = {"x": "nx", "y": "ny", "z": "nz"}.get(axis, "n")
    return (
        f"the original {original.get('kernel', definition.kernel_name)} "
        f"writes one plane along {axis} per launch (the host loops {name} over the "
        f"planes); this kernel writes every plane in one launch: replace the loop "
        f"`for ({name} = 0; {name} < {count}; {name}++) launch(..., {name})` by one launch "
        f"at the global and local sizes given here (its argument {name} is ignored)"
    )


def _fixed_note(definition: StencilDefinition) -> str:
    """For integer arguments held (``--fixed``: a filter's size), that the kernel
    computes the stencil at those values only."""
    original = definition.original or {}
    fixed = original.get("fixed") or {}
    if not isinstance(fixed, dict) or not fixed:
        return ""
    held = ", ".join(f"{n} = {v}" for n, v in fixed.items())
    return (
        f"the original {original.get('kernel', definition.kernel_name)} "
        f"was lifted at {held} (--fixed): this kernel computes that stencil and ignores "
        f"{', '.join(fixed)}; call it only with {held}"
    )


def _local_note(definition: StencilDefinition) -> str:
    """For __local buffers the original takes (its tile, sized by its host): kept in
    their places in this kernel's signature, and unused."""
    tiles = [a for a in definition.arguments if a.kind == "local"]
    if not tiles:
        return ""
    original = (definition.original or {}).get("kernel", definition.kernel_name)
    names = ", ".join(a.name for a in tiles)
    sizes = "; ".join(f"{a.name}: {' * '.join(a.shape)} {a.type}s" for a in tiles)
    one = len(tiles) == 1
    return (
        f"the original {original}'s __local argument{'' if one else 's'} {names} "
        f"{'keeps its place' if one else 'keep their places'} in this kernel's argument "
        f"list, unused: the host may go on passing {'it' if one else 'them'} as it does "
        f"(clSetKernelArg with a size and NULL); gtune measured with {sizes} at the tuned "
        "work-group (WX, WY, WZ: its local size)"
    )


def _steps_note(d: StencilDefinition, tuned: TunedKernel) -> str:
    """For a kernel whose launch is several time steps, how many launches of the tuned
    kernel replace one of the original."""
    if d.original is None or d.steps == 1:
        return ""
    per = int(tuned.configuration.get("TB", 1))
    return (
        f"one launch of the original {d.original.get('kernel', d.kernel_name)} is {d.steps} "
        f"time steps; this kernel advances {per} per launch: launch it {d.steps // per} "
        f"times, swapping {d.primary_field} and {d.output} between launches (each launch "
        f"reads the previous one's {d.output})"
    )


def _stem(kernel: TunableKernel) -> str:
    stem = "".join(c if c.isalnum() else "_" for c in kernel.store_name.partition(":")[0])
    return stem or "kernel"


def _stored_best(
    args: argparse.Namespace, kernel: TunableKernel
) -> tuple[StoredRow, StoredRow | None]:
    """The kernel's best stored row on the chosen device, or an error saying why there is
    none: another device, another size, or another version of the source."""
    store = open_store(args, readonly=True)
    try:
        rows = list(store.rows(device=args.device, kernel=kernel.identity()))
        if not rows:
            raise _no_results(args, kernel, store)
    finally:
        store.close()
    return best_for(kernel, rows, args.device, store.location)


def _no_results(args: argparse.Namespace, kernel: TunableKernel, store: ResultStore) -> InputError:
    here = size_text(kernel.sizes)
    hint = f"tune it first: gtune run {args.kernel_file} --size {here}"
    if args.device:
        # the kernel tuned on other devices only: this very kernel (same source, size and
        # description), else any version of it; the device is what differs
        tuned_on = sorted({r.device for r in store.rows(kernel=kernel.identity())})
        tuned_on = tuned_on or sorted({r.device for r in store.rows(kernel=kernel.store_name)})
        if tuned_on and not any(d.startswith(args.device) for d in tuned_on):
            return InputError(
                f"no results for {kernel.store_name} on a device matching --device "
                f"{args.device}: it was tuned on {', '.join(tuned_on)}",
                source=store.location,
                hint="give one of those (or a prefix of it) to --device, or " + hint,
            )
    same_device = store.rows(device=args.device, kernel=kernel.store_name)
    others = sorted({size_text(r.problem) for r in same_device})
    if here in others:
        # same name, size and device, another identity: the source it was tuned with differs
        at = (
            f" (its results at {here} are of another version of its source: the "
            "kernel, its template or gtune changed since it was tuned)"
        )
    elif others:
        at = f" (it has results at {', '.join(others)}: give --size)"
    else:
        at = ""
    return InputError(
        f"no results for {kernel.store_name} at {here}"
        + (f" on {args.device}" if args.device else "")
        + f" in the store{at}",
        source=store.location,
        hint=hint,
    )


def _summary(tuned: TunedKernel, paths: list[Path]) -> str:
    config = " ".join(f"{k}={v}" for k, v in tuned.configuration.items())
    line = f"{tuned.name} at {size_text(tuned.tuned_size)} on {tuned.device_identity}: {config}"
    if tuned.time_s is not None:
        line += f", {fmt_seconds(tuned.time_s)}"
        line += " (confirmed)" if tuned.confirmed else " (not confirmed: --no-confirm run)"
    if tuned.default_configuration == tuned.configuration:
        line += "; the default configuration was the fastest"
    elif tuned.default_time_s and tuned.time_s:
        line += f", {tuned.default_time_s / tuned.time_s:.2f}x faster than the default"
    notes = "".join(f"\n  note: {n}" for n in tuned.notes)  # e.g. why the whole source
    return line + notes + "\n  written: " + ", ".join(str(p) for p in paths)


# -- the bundle ----------------------------------------------------------------------


def _export_bundle(args: argparse.Namespace) -> int:
    plain = is_plain(args.kernel_file)
    if args.size and not plain:
        raise InputError(
            "give the sizes with --sizes (or --size alone for one size)", source="--size"
        )
    if args.full_template:
        raise InputError("a bundle writes specialised sources", source="--full-template")
    first = _wanted_sizes(args, None)
    view = argparse.Namespace(**vars(args))
    if plain and not args.size:
        if not first:
            raise InputError(
                "a plain kernel (no description beside it) opens at a size: give --size "
                "(any one of its tuned sizes) with --sizes all, or list the sizes",
                source="--sizes",
            )
        view.size = size_text(first[0])
    kernel = _open(view)
    wanted = _wanted_sizes(args, kernel)
    folder = Path(args.out or ".")
    if folder.exists() and not folder.is_dir():
        raise InputError("the kernel format writes into a folder; this is a file", source=folder)
    store = open_store(args, readonly=True)
    try:
        tuned, skipped = _bundle_members(args, kernel, store, wanted)
    finally:
        store.close()
    default_config = kernel.default_config()
    default = None if default_config is None else tuned_kernel(kernel, default_config)
    stem = _stem(kernel)
    bundle, sources = tuned_bundle(tuned, default, stem)
    paths = write_bundle(bundle, sources, folder, stem, force=args.force)
    devices = sorted({e.device_identity for e in bundle.entries})
    lines = [
        f"{bundle.name}: {len(bundle.entries)} tuned (device, size) on {len(devices)} "
        f"device(s), {len(bundle.configurations)} configuration(s)"
    ]
    lines += [f"  note: {s}" for s in skipped]
    lines.append("  written: " + ", ".join(str(p) for p in paths))
    print("\n".join(lines), file=sys.stderr)
    return 0


def _wanted_sizes(args: argparse.Namespace, kernel: TunableKernel | None) -> list[dict[str, int]]:
    """The sizes --sizes lists (none for ``all``)."""
    text = str(args.sizes).strip()
    if text == "all":
        return []
    if not text:
        raise InputError("empty; give all or sizes such as 64x64x64,128x128x128", source="--sizes")
    out = []
    for part in text.split(","):
        try:
            size = parse_size(part.strip(), kernel)
        except InputError as exc:
            raise InputError(exc.message, source="--sizes") from None
        if size and size not in out:
            out.append(size)
    return out


def _bundle_members(
    args: argparse.Namespace,
    kernel: TunableKernel,
    store: ResultStore,
    wanted: list[dict[str, int]],
) -> tuple[list[TunedKernel], list[str]]:
    """The best configuration of each (device, size) of ``kernel`` in the store, as
    tuned kernels; and notes on sizes whose results are of another version."""
    held: dict[str, dict[str, int]] = {}
    for r in store.rows(device=args.device, kernel=kernel.store_name):
        if r.kernel_name == kernel.store_name and set(r.problem) == set(kernel.sizes):
            held.setdefault(size_text(r.problem), dict(r.problem))
    sizes = wanted or list(held.values())
    missing = [size_text(s) for s in wanted if size_text(s) not in held]
    if missing:
        raise InputError(
            f"no results for {kernel.store_name} at {', '.join(missing)}"
            + (f" on {args.device}" if args.device else "")
            + f"; the store has {', '.join(held) or 'none of it'}",
            source=store.location,
            hint=f"tune it first: gtune run {args.kernel_file} --size {missing[0]}",
        )
    tuned: list[TunedKernel] = []
    skipped: list[str] = []
    for size in sizes:
        at = kernel.with_sizes(size)
        rows = list(store.rows(device=args.device, kernel=at.identity()))
        if not rows:
            skipped.append(
                f"{size_text(size)} left out: its results are of another version of the "
                "kernel's source or description"
            )
            continue
        for group in groups(rows).values():
            best = ranked(group)
            if best:
                tuned.append(_member(at, best[0], confirmed_default(group)))
    if not tuned:
        raise InputError(
            f"no configuration of {kernel.store_name} in the store ran correctly at "
            "these sizes (with this version of its source)",
            source=store.location,
        )
    return tuned, skipped


def _member(kernel: TunableKernel, best: StoredRow, default: StoredRow | None) -> TunedKernel:
    return tuned_kernel(
        kernel,
        best.result.config,
        device_identity=best.device,
        time_s=best.result.median_s,
        confirmed=confirmation(best) is not None,
        default_time_s=(
            default.result.median_s if default is not None and default.result.ok else None
        ),
    )


# -- T4 -------------------------------------------------------------------------------


def _export_t4(args: argparse.Namespace) -> int:
    kernel_filter = args.kernel
    if args.kernel_file:
        kernel_filter = _open(args).identity()
    out = Path(args.out) if args.out else None
    as_folder = out is not None and (out.is_dir() or out.suffix != ".json")
    if out is not None and not as_folder and not out.parent.exists():
        raise InputError("its folder does not exist", source=f"--out {out}")
    store = open_store(args, readonly=True)
    try:
        rows = selected_rows(store, kernel=kernel_filter, device=args.device)
    finally:
        store.close()
    by_group = groups(rows)
    if out is None or not as_folder:
        if len(by_group) > 1:
            names = "; ".join(
                f"{g[0].kernel_name} ({size_text(g[0].problem)}) on {g[0].device}"
                for g in by_group.values()
            )
            bare = args.format is None  # no KERNEL: T4 by default, perhaps unawares
            raise InputError(
                f"the selection holds {len(by_group)} kernels, sizes or devices ({names}); "
                "a T4 results file holds one kernel at one size on one device",
                source="--out" if out is not None else "gtune export",
                hint="give a folder to --out (one results file per kernel, size and device, "
                "plus metadata.json), or select one: --kernel or the kernel's file with "
                "--size, and --device"
                + (
                    "; without KERNEL, gtune export writes stored results in the T4 schema "
                    "(gtune export KERNEL --size ... writes the tuned kernel)"
                    if bare
                    else ""
                ),
            )
        text = json.dumps(export_t4(rows), indent=1) + "\n"
        if out is None:
            sys.stdout.write(text)
        else:
            write_text(out, text, force=args.force)
            print(f"{len(rows)} results written to {out}", file=sys.stderr)
        return 0
    files = {key: t4_file_name(group) for key, group in by_group.items()}
    check_targets([out / f for f in [*files.values(), "metadata.json"]], force=args.force)
    for key, group in by_group.items():
        text = json.dumps(export_t4(group), indent=1) + "\n"
        write_text(out / files[key], text, force=args.force)
    meta = export_t4_metadata(by_group, files)
    write_text(out / "metadata.json", json.dumps(meta, indent=1) + "\n", force=args.force)
    print(
        f"{len(rows)} results written to {out}: {len(by_group)} results file(s), one per "
        "kernel, size and device, and metadata.json",
        file=sys.stderr,
    )
    return 0

"""``gtune lift``: recover the stencil a plain kernel computes, by running it, as a
stencil definition (``NAME.stencil.yaml``) that ``gtune run`` tunes in the template."""

from __future__ import annotations

import argparse
import re
import sys
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from gtune.commands._plain import (
    add_plain_arguments,
    definition_flags,
    is_plain,
    note_lines,
    open_tunable,
)
from gtune.exceptions import InputError
from gtune.inputs import read_text
from gtune.outfiles import check_target, write_text

if TYPE_CHECKING:
    from gtune.stencils.lift import NotAStencil

HELP = (
    "recover the linear stencil of a plain .cl by running it (impulses, random inputs) "
    "and write it as NAME.stencil.yaml; refuses kernels that are not linear stencils"
)


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("kernel", help="a plain kernel.cl (no description beside it)")
    p.add_argument(
        "--size",
        metavar="NXxNYxNZ",
        help="problem size to probe at, e.g. 64x64x32 (small is enough: a few times the "
        "stencil's reach, and what the shipped launch accepts)",
    )
    p.add_argument(
        "--output",
        "-o",
        required=True,
        metavar="NAME.stencil.yaml",
        help="the definition to write (NAME becomes the stencil's name)",
    )
    p.add_argument("--force", action="store_true", help="replace the --output file if it exists")
    p.add_argument("--device", "-d", help="device: P:D index, identity or name substring")
    p.add_argument(
        "--timeout", type=float, default=60.0, help="seconds before a probe launch is abandoned"
    )
    p.add_argument(
        "--plane-index",
        metavar="SCALAR=AXIS",
        help="the kernel writes one plane per launch and its integer argument SCALAR is "
        "the plane's index along AXIS (k=z: the host loops k over the planes); lifted as "
        "a 3D stencil, the tuned kernel writes every plane in one launch",
    )
    p.add_argument(
        "--weights",
        action="append",
        default=[],
        metavar="NAME=V0,V1,...|NAME=@FILE",
        help="the values of a weights array (a __constant filter): recorded in the "
        "definition, so the tuning and the check against the original use them (a file "
        "holds numbers separated by commas or spaces) (repeatable)",
    )
    p.add_argument(
        "--fixed",
        action="append",
        default=[],
        metavar="SCALAR",
        help="an integer argument that changes what the kernel computes (a filter's "
        "size): held at its --scalar value; the definition is the kernel at that value, "
        "and the tuned kernel computes it for that value only (repeatable)",
    )
    p.add_argument(
        "--weights-fixed",
        action="store_true",
        help="the weights arrays (a __constant filter) hold the values the definition "
        "records (edit them under weights:): the tuned kernel bakes them in as numbers",
    )
    add_plain_arguments(p)


def given_weights(args: argparse.Namespace) -> dict[str, list[float]]:
    """``--weights NAME=V0,V1,...`` or ``NAME=@FILE``: each array's values."""
    out: dict[str, list[float]] = {}
    for item in getattr(args, "weights", []):
        name, sep, text = item.partition("=")
        if not sep or not name.strip():
            raise InputError(
                f"expected NAME=V0,V1,... or NAME=@FILE, got {item!r}", source="--weights"
            )
        where = "--weights"
        if text.startswith("@"):
            where = text[1:]
            text = read_text(Path(where), what="weights file")
        try:
            out[name.strip()] = [float(v) for v in re.split(r"[\s,]+", text.strip()) if v]
        except ValueError:
            raise InputError(
                f"{name.strip()}: expected numbers, got {text[:60]!r}", source=where
            ) from None
    return out


def recorded_flags(args: argparse.Namespace) -> list[str]:
    """The plain-kernel flags given (every one ``add_plain_arguments`` defines), in a form
    ``gtune run`` can give the original kernel again."""
    if args.reference:
        raise InputError(
            "lifting compares the kernel with what it finds; a --reference is not used",
            source="--reference",
        )
    parser = argparse.ArgumentParser(add_help=False)
    add_plain_arguments(parser)
    flags: list[str] = []
    for action in parser._actions:
        value = getattr(args, action.dest, None)
        if not action.option_strings or value is None or value == action.default:
            continue
        option = action.option_strings[0]
        if isinstance(value, list):
            for item in value:
                flags += [option, str(item)]
        elif value is True:
            flags.append(option)
        else:
            flags += [option, str(value)]
    return flags


def _lift_transposed(
    args: argparse.Namespace, kernel: Any, partial: NotAStencil, device: Any, out: Path
) -> tuple[Any, int]:
    """A kernel whose ``get_global_id(0)`` indexes its slowest axis (``u[i*nx + j]``
    with ``i = get_global_id(0)``, as C loops are often ported) writes an off-centre box
    at the default launch ``--global NX,NY`` unless the size is square, or does not
    launch at all (a work-group ``--default WX=4,WY=16`` made for rows x columns).
    Without ``--global``, the launch with its dimensions reversed is tried (``NY,NX``;
    ``NZ,NY,NX``) and, if the stencil is lifted that way, recorded in the definition's
    flags. Otherwise the first refusal stands (an off-centre box with the hint)."""
    from gtune.measure.lifting import lift_kernel
    from gtune.stencils.lift import LaunchFailed

    sizes = [n for n in ("NX", "NY", "NZ") if n in kernel.sizes]
    if args.global_size or len(sizes) < 2:
        raise partial
    given, turned = ",".join(sizes), ",".join(reversed(sizes))
    hint = f"if get_global_id(0) indexes the slowest axis (rows), give --global {turned}"
    args.global_size = turned
    try:
        found = lift_kernel(
            open_tunable(args),
            device=device,
            output=out,
            flags=definition_flags(recorded_flags(args), args.kernel, out),
            timeout_s=args.timeout,
            weights=given_weights(args),
            fixed=args.fixed,
            plane_index=args.plane_index,
        )
    except InputError:
        if isinstance(partial, LaunchFailed):
            raise partial from None
        raise InputError(partial.message, source=partial.source, hint=hint) from None
    why = partial.why.split(";")[0]  # (a PartialWrite: what it writes, then the rule)
    print(
        f"note: launched --global {given}, {why}; launched --global {turned} "
        "(get_global_id(0) indexing the slowest axis) it is a stencil: lifted that way, "
        "and the definition's flags say so",
        file=sys.stderr,
    )
    return found


def _lift_planes(
    args: argparse.Namespace, kernel: Any, device: Any, out: Path
) -> tuple[Any, int] | None:
    """A kernel that writes nothing or one plane at its launch, with an integer argument
    that is no size: perhaps the index of the plane one launch writes (the host loops
    over the planes). Each such argument is tried as the index along the slowest axis;
    the first that lifts is used, with a note. None if none does."""
    from gtune.measure.lifting import lift_kernel
    from gtune.stencils.lift import plane_index_candidates

    sizes = [n for n in ("NX", "NY", "NZ") if n in kernel.sizes]
    axis = "xyz"[len(sizes) - 1]
    for name in plane_index_candidates(kernel):
        try:
            found = lift_kernel(
                kernel,
                device=device,
                output=out,
                flags=definition_flags(recorded_flags(args), args.kernel, out),
                timeout_s=args.timeout,
                weights=given_weights(args),
                fixed=args.fixed,
                plane_index=f"{name}={axis}",
            )
        except InputError:
            continue
        print(
            f"note: one launch writes one plane along {axis}, the plane given by {name}: "
            f"lifted as --plane-index {name}={axis} (the host loops {name} over the planes; "
            "the tuned kernel writes every plane in one launch)",
            file=sys.stderr,
        )
        return found
    return None


def _lifted(
    args: argparse.Namespace, kernel: Any, device: Any, out: Path, flags: list[str]
) -> tuple[Any, int]:
    """The kernel lifted at its launch; where that is refused, as one plane per launch,
    then with the launch's dimensions reversed. The attempts share one measuring worker
    (gtune.measure.pool): each after the first starts no interpreter and no driver
    context, about a second of a two-core machine each."""
    from gtune.measure.lifting import lift_kernel
    from gtune.measure.pool import reuse_workers
    from gtune.stencils.lift import LaunchFailed, NotAStencil, PartialWrite

    with reuse_workers():
        try:
            return lift_kernel(
                kernel,
                device=device,
                output=out,
                flags=flags,
                timeout_s=args.timeout,
                weights=given_weights(args),
                fixed=args.fixed,
                plane_index=args.plane_index,
            )
        except NotAStencil as refusal:
            found = None if args.plane_index else _lift_planes(args, kernel, device, out)
            if found is not None:
                return found
            if isinstance(refusal, PartialWrite | LaunchFailed):
                return _lift_transposed(args, kernel, refusal, device, out)
            raise


def run(args: argparse.Namespace) -> int:
    from gtune.measure import select_device

    if not is_plain(args.kernel):
        raise InputError(
            "lift reads a plain .cl (a kernel with a description beside it is tuned as it is)",
            source=args.kernel,
        )
    out = check_target(args.output, force=args.force)  # before the probes, not after
    # the definition names its original and -I folders where it may (docs/lift.md)
    flags = definition_flags(recorded_flags(args), args.kernel, out)
    kernel = open_tunable(args)
    for line in note_lines(kernel):  # plain mode's warnings (its guesses: gtune describe)
        # and how it reads a pointer to vectors (uchar4 pixels: the sizes count uchars)
        if line.startswith("warning: ") or " pointer: the array is given in " in line:
            print(line, file=sys.stderr)
    device = select_device(args.device)
    definition, launches = _lifted(args, kernel, device, out, flags)
    if args.weights_fixed:
        if not definition.weights:
            raise InputError("the kernel takes no weights array to fix", source="--weights-fixed")
        definition = replace(definition, weights_fixed=True)
    write_text(out, definition.to_yaml(), force=args.force)
    terms = len(definition.terms)
    elements = definition.dtype
    if definition.storage:  # integer elements: the conversion found, bit for bit
        stored = f"{definition.convert}, " if definition.out_integer else ""
        into = f" into {definition.out_storage}" if definition.output_storage else ""
        elements = f"{definition.storage}{into} ({stored}sums in {definition.dtype})"
    coefs = ", ".join(definition.coefficients) or "none"
    coefs += "".join(f", weights {w}[{len(v)}]" for w, v in definition.weights.items())
    coefs += "".join(
        f", {f} padded by {list(p[: definition.dims])}" for f, p in definition.pads.items()
    )
    boundary = definition.boundary
    if definition.rim != "keep":  # the interior's rim written: a copy or a constant
        boundary += f", rim {definition.rim}"
    if definition.band != "radius":  # one-sided: written where its taps lie inside
        boundary += f", band {definition.band}"
    fields = ", ".join(definition.fields)
    if definition.inplace:  # one buffer: the field the kernel overwrites is the output
        fields += f" ({definition.output} updated in place)"
    print(
        f"{out}: {definition.name}: {definition.dims}D {elements}, {terms} terms, "
        f"fields {fields}, coefficients {coefs}, boundary "
        f"{boundary} (checked against {launches} launches of {kernel.name})",
        file=sys.stderr,
    )
    for name, value in (definition.original or {}).get("fixed", {}).items():
        print(
            f"note: {name} held at {value} (--fixed): the definition is {kernel.name} at "
            f"{name} = {value}, and the tuned kernel ignores {name}: it computes the "
            f"stencil at {name} = {value} whatever value is passed",
            file=sys.stderr,
        )
    if definition.steps > 1:
        print(
            f"note: one launch of {kernel.name} is {definition.steps} time steps of this "
            f"{terms}-point stencil (checked on random inputs): the definition has steps: "
            f"{definition.steps}, so gtune's temporal techniques compete with it",
            file=sys.stderr,
        )
    return 0

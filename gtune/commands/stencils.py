"""``gtune stencils``: generate synthetic stencil kernels from the optimizing template."""

from __future__ import annotations

import argparse
import sys
from collections import Counter
from pathlib import Path

from gtune.exceptions import InputError
from gtune.stencils.generate import (
    DEFAULT_SIZE,
    SUITES,
    Generated,
    generate,
    parse_size,
    suite,
)
from gtune.stencils.patterns import ORIENTATIONS, PATTERNS, StencilShape, parse_orientation

HELP = (
    "generate synthetic stencil kernels (a suite, or one pattern) with their descriptions, "
    "or render a stencil definition"
)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    sub = parser.add_subparsers(dest="stencils_command", metavar="ACTION")
    gen = sub.add_parser(
        "generate",
        help="write kernel.cl + kernel.yaml pairs into DIR",
        description="Write each stencil as NAME.cl (the optimizing template with the "
        "stencil's offsets and weights) and NAME.yaml (its description). Give --suite, "
        "or --pattern with --dims/--orientation/--radius.",
    )
    gen.add_argument("directory", metavar="DIR", type=Path, help="output directory")
    gen.add_argument("--suite", choices=SUITES, help="a predefined suite (garvey104: Table 2)")
    gen.add_argument("--pattern", choices=PATTERNS, help="one stencil of this pattern")
    gen.add_argument("--dims", type=int, choices=(1, 2, 3), help="dimensionality (default 3)")
    orientations = sorted({o for v in ORIENTATIONS.values() for o in v})
    gen.add_argument(
        "--orientation",
        choices=orientations,
        help="axes the stencil spans (x|y|z for 1D, xy|xz|yz for 2D, xyz for 3D; "
        "a thumbtack's spike axis)",
    )
    gen.add_argument("--radius", type=int, default=None, help="radius 0-5 (default 1)")
    gen.add_argument("--seed", type=int, default=0, help="seed of the random weights")
    gen.add_argument(
        "--intensity",
        type=int,
        choices=(1, 2),
        default=1,
        help="adds and multiplies per element read (seed 001 §8.3.8)",
    )
    gen.add_argument(
        "--size",
        default="x".join(map(str, DEFAULT_SIZE)),
        help="problem size NXxNYxNZ written into the descriptions (default %(default)s)",
    )

    ren = sub.add_parser(
        "render",
        help="write a stencil definition's kernel NAME.cl and description NAME.yaml into DIR",
        description="Render NAME.stencil.yaml into the optimizing template: NAME.cl and its "
        "derived description NAME.yaml (parameters, constraints, launch, reference, kernel "
        "name and arguments). `gtune run NAME.stencil.yaml` does this in memory; render "
        "to read or keep the files.",
    )
    ren.add_argument("definition", type=Path, help="NAME.stencil.yaml")
    ren.add_argument("directory", metavar="DIR", type=Path, help="output directory")
    ren.add_argument("--size", help="problem size written into the description, e.g. 256x256x256")
    for sub_parser in (gen, ren):
        sub_parser.add_argument(
            "--force", action="store_true", help="replace NAME.cl and NAME.yaml files in DIR"
        )


def run(args: argparse.Namespace) -> int:
    command = getattr(args, "stencils_command", None)
    if command == "render":
        return _render(args)
    if command != "generate":
        raise InputError(
            "say what to do: gtune stencils generate DIR [...] or gtune stencils render "
            "NAME.stencil.yaml DIR"
        )
    return _generate(args)


def _render(args: argparse.Namespace) -> int:
    from gtune.commands._common import parse_size as parse_problem_size
    from gtune.commands._common import writable_dir
    from gtune.stencils.definition import SUFFIX, load_definition
    from gtune.stencils.render import write_definition

    path: Path = args.definition
    if not path.name.endswith(SUFFIX):
        raise InputError(f"a stencil definition's name ends in {SUFFIX}", source=path)
    definition = load_definition(path)
    sizes = parse_problem_size(args.size)
    if sizes is not None:
        names = ["NX", "NY", "NZ"][: definition.dims]
        unknown = sorted(set(sizes) - set(names))
        if unknown or len(sizes) > definition.dims:
            raise InputError(
                f"a {definition.dims}D stencil's sizes are {', '.join(names)}", source="--size"
            )
    directory = writable_dir(args.directory, "DIR")
    cl_path, yaml_path = write_definition(definition, directory, sizes, force=args.force)
    print(f"wrote {cl_path} and {yaml_path}")
    return 0


def _shapes(args: argparse.Namespace) -> list[StencilShape]:
    single = [args.pattern, args.dims, args.orientation, args.radius]
    if args.suite:
        if any(v is not None for v in single):
            raise InputError(
                "--suite cannot be combined with --pattern/--dims/--orientation/--radius"
            )
        return suite(args.suite)
    if args.pattern is None:
        raise InputError("give --suite NAME or --pattern P (with --dims, --orientation, --radius)")
    dims = args.dims if args.dims is not None else 3
    radius = args.radius if args.radius is not None else 1
    return [
        StencilShape(
            args.pattern, dims, parse_orientation(args.pattern, dims, args.orientation), radius
        )
    ]


def _generate(args: argparse.Namespace) -> int:
    shapes = _shapes(args)
    size = parse_size(args.size)
    directory: Path = args.directory
    if directory.exists() and not directory.is_dir():
        raise InputError("exists and is not a directory", source=directory)

    def progress(i: int, n: int, g: Generated) -> None:
        print(
            f"[{i:>3}/{n}] {g.stencil.name:<28} {len(g.stencil.offsets):>5} points", file=sys.stderr
        )

    generated = generate(
        shapes,
        directory,
        seed=args.seed,
        intensity=args.intensity,
        size=size,
        progress=progress,
        force=args.force,
    )
    by_pattern = Counter(str(g.stencil.features["pattern"]) for g in generated)
    summary = ", ".join(f"{n} {p}" for p, n in sorted(by_pattern.items()))
    print(
        f"wrote {len(generated)} kernels ({summary}) at size {'x'.join(map(str, size))} "
        f"into {directory}"
    )
    return 0

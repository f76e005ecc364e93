"""Plain kernels for the lift tests: one written in the test, or a corpus kernel opened
from the command line's flags, as ``gtune lift`` opens it."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

import yaml

from gtune.commands._plain import add_plain_arguments, open_tunable
from gtune.kernel import TunableKernel
from gtune.plain import plain_kernel
from tests.conftest import ROOT
from tests.inprocess import Cli

PLAIN = ROOT / "stencils" / "plain"


def plain_from_text(tmp_path: Path, source: str, size: list[int], **kw: Any) -> TunableKernel:
    """The plain kernel of ``source`` (written to ``tmp_path/k.cl``) at ``size``."""
    path = tmp_path / "k.cl"
    path.write_text(source)
    return plain_kernel(path, sizes=size, **kw)


def open_corpus(source: str, size: str, *flags: str) -> TunableKernel:
    """``stencils/plain/SOURCE`` at ``size`` (``32x24``) with ``gtune lift``'s flags."""
    parser = argparse.ArgumentParser()
    add_plain_arguments(parser)
    args = parser.parse_args(list(flags))
    args.kernel, args.size = str(PLAIN / source), size
    return open_tunable(args)


def lift_run_export(name: str, tmp_path: Path, gtune_here: Cli) -> tuple[Path, Path]:
    """``name`` from the corpus (its manifest flags and ``fixed``) lifted at its small
    size, tuned briefly at 64x32 (verified against the original), exported at 64x32: the
    definition and the exported ``NAME_tuned.json``."""
    entry = yaml.safe_load((ROOT / "stencils/plain/manifest.yaml").read_text())["kernels"][name]
    out = tmp_path / f"{name}.stencil.yaml"
    plain = str(ROOT / "stencils/plain" / entry["source"])
    fixed = [f for n in entry.get("fixed", ()) for f in ("--fixed", n)]
    done = gtune_here(
        "lift", plain, "--size", entry["size"], *entry["flags"], *fixed, "-o", str(out)
    )
    assert done.returncode == 0, done.stderr
    db = tmp_path / "r.db"
    ran = gtune_here("run", str(out), "--size", "64x32", "--budget", "2", db=db)
    assert ran.returncode == 0, ran.stderr
    assert "wrong_result" not in ran.stdout
    exported = gtune_here("export", str(out), "--size", "64x32", "-o", str(tmp_path / "t"), db=db)
    assert exported.returncode == 0, exported.stderr
    return out, tmp_path / "t" / f"{name}_tuned.json"

"""Plain kernels for the lift tests: one written in the test, or a corpus kernel opened
from the command line's flags, as ``gtune lift`` opens it."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from gtune.commands._plain import add_plain_arguments, open_tunable
from gtune.kernel import TunableKernel
from gtune.plain import plain_kernel
from tests.conftest import ROOT

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

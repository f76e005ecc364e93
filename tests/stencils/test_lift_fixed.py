"""Lifting a kernel whose filter size is an integer argument (``for (i = 0; i < fw;
i++)``): refused unless the argument is held at its value (``--fixed fw``); then the
definition is the kernel at that value, records it, and the export says the tuned
kernel computes that stencil only."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from gtune.commands._plain import open_tunable
from gtune.commands.export import _fixed_note
from gtune.exceptions import InputError
from gtune.stencils.definition import load_definition
from gtune.stencils.lift import interface, with_held
from tests.conftest import ROOT
from tests.inprocess import Cli

PLAIN = ROOT / "stencils" / "plain"
ENTRY = yaml.safe_load((PLAIN / "manifest.yaml").read_text())["kernels"]["convolution_sized"]


def _lift(gtune_here: Cli, out: Path, *extra: str) -> Any:
    args = ["lift", str(PLAIN / ENTRY["source"]), "--size", ENTRY["size"], *ENTRY["flags"]]
    return gtune_here(*args, *extra, "-o", str(out))


@pytest.mark.opencl
def test_a_filter_size_argument_is_refused_naming_fixed(tmp_path: Path, gtune_here: Cli) -> None:
    done = _lift(gtune_here, tmp_path / "c.stencil.yaml")
    assert done.returncode == 2
    assert "the integer argument fw (given 3) changes the output" in done.stderr
    assert "--fixed fw" in done.stderr and "Traceback" not in done.stderr
    assert not (tmp_path / "c.stencil.yaml").exists()


@pytest.mark.opencl
def test_held_at_its_value_it_lifts_and_says_so(tmp_path: Path, gtune_here: Cli) -> None:
    out = tmp_path / "c.stencil.yaml"
    done = _lift(gtune_here, out, "--fixed", "fw")
    assert done.returncode == 0, done.stderr
    assert "fw held at 3 (--fixed)" in done.stderr
    said = " ".join(done.stderr.split())
    assert "the tuned kernel ignores fw: it computes the stencil at fw = 3 whatever" in said
    defn = load_definition(out)
    assert defn.original is not None and defn.original["fixed"] == {"fw": 3}
    # a 3x3 filter read from the first 9 entries of filter[25], the input padded by 2
    assert len(defn.terms) == 9 and list(defn.weights) == ["filter"]
    assert defn.pads["input"][:2] == (2, 2)
    fw = next(a for a in defn.arguments if a.name == "fw")
    assert fw.kind == "ignored" and fw.value == 3  # kept in the signature, ignored
    note = _fixed_note(defn)
    assert "lifted at fw = 3" in note and "call it only with fw = 3" in note


def _sized_interface() -> Any:
    import argparse

    from gtune.commands._plain import add_plain_arguments

    parser = argparse.ArgumentParser()
    add_plain_arguments(parser)
    args = parser.parse_args(list(ENTRY["flags"]))
    args.kernel, args.size = str(PLAIN / ENTRY["source"]), ENTRY["size"]
    return interface(open_tunable(args))


@pytest.mark.parametrize(
    ("name", "why"),
    [("nope", "nope is not a scalar argument"), ("width", "width is a size")],
)
def test_only_an_integer_argument_that_is_no_size_is_held(name: str, why: str) -> None:
    face = _sized_interface()
    with pytest.raises(InputError, match=why) as info:
        with_held(face, [name])
    assert info.value.source == "--fixed"
    assert with_held(face, ["fw"]).held == frozenset({"fw"})

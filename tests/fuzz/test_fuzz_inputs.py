"""Fuzzing: mutated descriptions, specs and command lines never crash gtune.

Every case runs the command line for real (see ``harness.py``) on paths that stop before
anything is measured: ``gtune space`` with recorded device limits, ``gtune run`` and
``gtune compare`` with a device that does not exist (so a valid input ends in one clean
refusal naming ``--device``), ``gtune results`` on a scratch store, ``--help``.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from tests.fuzz.conftest import PROFILE
from tests.fuzz.harness import NO_DEVICE, ROOT, run_case
from tests.fuzz.strategies import (
    DEFINITIONS,
    DESCRIPTIONS,
    HOSTILE_TEXT,
    SPEC_FILES,
    STENCILS,
    encoded,
    load,
    mutated_tree,
)

LIMITS = ROOT / "benchmarks" / "results" / "foundation" / "devices.json"
PLAIN = ROOT / "tests" / "data" / "plain_blur.cl"
GOOD = ("ok", "refused")


@pytest.fixture(autouse=True, scope="module")
def scratch_cache() -> Iterator[None]:
    """Spaces solved while fuzzing go to a scratch cache, not the user's."""
    with tempfile.TemporaryDirectory() as tmp:
        before = os.environ.get("GTUNE_CACHE")
        os.environ["GTUNE_CACHE"] = tmp
        yield
        if before is None:
            os.environ.pop("GTUNE_CACHE", None)
        else:
            os.environ["GTUNE_CACHE"] = before


def _stage(directory: Path, description: Path) -> None:
    for f in STENCILS.glob(description.stem + ".*"):
        shutil.copy(f, directory / f.name)


@PROFILE
@given(data=st.data())
def test_mutated_descriptions(data: st.DataObject) -> None:
    desc = data.draw(st.sampled_from(DESCRIPTIONS), label="description")
    tree = load(desc)
    names = [*tree["problem"], *tree.get("parameters", {})]
    raw = data.draw(encoded(data.draw(mutated_tree(tree, names), label="mutated")))
    size = ",".join(f"{k}=8" for k in tree["problem"])
    with tempfile.TemporaryDirectory() as tmp:
        where = Path(tmp)
        _stage(where, desc)
        (where / desc.name).write_bytes(raw)
        argv = ["space", desc.name, "--limits", str(LIMITS), "--size", size, "--no-min-groups"]
        outcome = run_case(argv, [desc.name, "--size"], where)
    assert outcome.kind in GOOD, outcome.explain()


@PROFILE
@given(data=st.data())
def test_mutated_definitions(data: st.DataObject) -> None:
    """A damaged stencil definition is refused in one message, never a traceback."""
    path = data.draw(st.sampled_from(DEFINITIONS), label="definition")
    tree = load(path)
    names = ["NX", "NY", "NZ", *tree.get("coefficients", []), *tree["fields"], tree["output"]]
    raw = data.draw(encoded(data.draw(mutated_tree(tree, names), label="mutated")))
    size = "NX=8,NY=8" + (",NZ=8" if tree["dims"] == 3 else "")
    with tempfile.TemporaryDirectory() as tmp:
        where = Path(tmp)
        (where / path.name).write_bytes(raw)
        argv = ["space", path.name, "--limits", str(LIMITS), "--size", size, "--no-min-groups"]
        outcome = run_case(argv, [path.name, "--size"], where)
    assert outcome.kind in GOOD, outcome.explain()


@PROFILE
@given(data=st.data())
def test_mutated_specs(data: st.DataObject) -> None:
    spec = data.draw(st.sampled_from(SPEC_FILES), label="spec")
    tree = load(spec)
    names = ["NX", "NY", "NZ", "WX", "WY", "WZ", "CX", "BX", "best.WX"]
    raw = data.draw(encoded(data.draw(mutated_tree(tree, names), label="mutated")))
    with tempfile.TemporaryDirectory() as tmp:
        where = Path(tmp)
        (where / "fuzzed.yaml").write_bytes(raw)
        argv = [
            "run",
            str(STENCILS / "heat3d.yaml"),
            "--spec",
            "fuzzed.yaml",
            "--size",
            "NX=8,NY=8,NZ=8",
            "--device",
            NO_DEVICE,
        ]
        outcome = run_case(argv, ["fuzzed.yaml", "--device", "--spec", "OpenCL"], where)
    assert outcome.kind == "refused", outcome.explain()


VALUES = st.one_of(
    st.sampled_from(
        [
            *HOSTILE_TEXT,
            "8x8x8",
            "NX=8,NY=8,NZ=8",
            "NX=²",
            "NX=0",
            "NX=-1",
            "0x4",
            "99999999999999999999",
            "1e400",
            "inf",
            "-inf",
            "nans",
            "10s",
            "-5m",
            "3",
            "file.txt",
            "file.txt/below",
            "folder",
            "/dev/null",
            "/proc",
            "missing/deeper/out.json",
            "\udcff",
            "a" * 300,
        ]
    ),
    st.text(max_size=8),
)

OPTIONS: dict[str, list[str]] = {
    "space": ["--size", "--limits", "--emit-mzn", "--top", "--all-devices", "--no-cache", "--json"],
    "run": [
        "--size",
        "--spec",
        "--strategy",
        "--technique",
        "--budget",
        "--runs",
        "--timeout",
        "--json",
        "--param",
        "--global",
        "--scalar",
        "--kernel-name",
        "--option",
        "--no-confirm",
    ],
    "compare": [
        "--strategies",
        "--technique",
        "--size",
        "--out",
        "--random-n",
        "--budget",
        "--runs",
        "--timeout",
        "--max-minutes",
        "--compile-workers",
        "--option",
        "--no-confirm",
        "--random-unpruned",
    ],
    "results": ["--kernel", "--device", "--format", "--best"],
    "lift": [
        "--size",
        "--output",
        "--scalar",
        "--global",
        "--default",
        "--kernel-name",
        "--param",
        "--timeout",
    ],
}
FLAGS = {"--all-devices", "--no-cache", "--json@space", "--random-unpruned", "--no-confirm"}
KERNELS = ["heat3d.yaml", "heat3d.cl", "plain_blur.cl", "", "missing.cl", "folder", "/dev/null"]


@pytest.mark.slow
@PROFILE
@given(data=st.data())
def test_mutated_command_lines(data: st.DataObject) -> None:
    command = data.draw(st.sampled_from(sorted(OPTIONS)), label="command")
    argv: list[str] = ["--db", data.draw(st.sampled_from(["store.db", "file.txt/x.db", "folder"]))]
    argv.append(command)
    if command in ("space", "run", "compare", "lift"):
        argv.append(data.draw(st.sampled_from(KERNELS), label="kernel"))
    for option in data.draw(st.lists(st.sampled_from(OPTIONS[command]), max_size=4)):
        argv.append(option)
        if option in FLAGS or f"{option}@{command}" in FLAGS:
            continue
        argv.append(data.draw(VALUES))
    if command in ("run", "compare", "lift"):
        argv += ["--device", NO_DEVICE]
    if command == "space" and "--limits" not in argv and "--all-devices" not in argv:
        argv += ["--limits", str(LIMITS)]
    parts = [p for a in argv for p in a.split("/") if p]
    names = [*argv, *parts, "OpenCL", "kernel"]
    with tempfile.TemporaryDirectory() as tmp:
        where = Path(tmp)
        _stage(where, STENCILS / "heat3d.yaml")
        shutil.copy(PLAIN, where / PLAIN.name)
        (where / "file.txt").write_text("not yaml: [\n")
        (where / "folder").mkdir()
        outcome = run_case(argv, names, where)
    assert outcome.kind in GOOD, outcome.explain()


@pytest.mark.parametrize("command", [None, "space", "run", "compare", "results", "devices"])
def test_help(command: str | None, tmp_path: Path) -> None:
    argv = ["--help"] if command is None else [command, "--help"]
    outcome = run_case(argv, [], tmp_path)
    assert outcome.kind == "ok", outcome.explain()

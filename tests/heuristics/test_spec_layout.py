"""The shipped specs are the top-level ``specs/`` folder, and the package finds exactly them."""

from __future__ import annotations

from pathlib import Path

from gtune.heuristics import load_spec, shipped_specs
from gtune.heuristics.spec import SPEC_ALIASES, _specs_root

ROOT = Path(__file__).resolve().parents[2]
SPECS = ROOT / "specs"


def test_every_yaml_in_specs_is_shipped_and_nothing_else() -> None:
    on_disk = {p.stem for p in SPECS.glob("*.yaml")}
    assert on_disk, "specs/ must hold the shipped specs"
    names = set(shipped_specs())
    assert names == on_disk | {a for a, t in SPEC_ALIASES.items() if t in on_disk}


def test_package_data_is_the_top_level_folder() -> None:
    """What an installed gtune reads (package data) is byte for byte the repository's specs/."""
    root = _specs_root()
    packaged = {e.name: e.read_bytes() for e in root.iterdir() if e.name.endswith(".yaml")}
    assert packaged == {p.name: p.read_bytes() for p in SPECS.glob("*.yaml")}


def test_shipped_specs_load_by_name_and_alias() -> None:
    for name in shipped_specs():
        spec = load_spec(name)
        assert spec.steps, name
    assert load_spec("dims").name == load_spec("group-by-dimension").name


def test_examples_are_valid_specs_but_not_shipped() -> None:
    examples = sorted((SPECS / "examples").glob("*.yaml"))
    assert examples
    for path in examples:
        spec = load_spec(str(path))
        assert spec.steps and path.stem not in shipped_specs()

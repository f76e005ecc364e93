"""Spec files: the value forms, the shipped specs, and every message a bad spec gets."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest
import yaml

from gtune.budget import Budget
from gtune.exceptions import InputError
from gtune.heuristics import load_spec, parse_spec, shipped_specs
from gtune.heuristics.spec import RangeValues, SampleValues, best_name, parse_values

PARAMS = ["WX", "WY", "WZ", "BX", "CX", "CY", "CZ", "VX", "LOCAL", "IMAGE"]
SIZES = {"NX": 64, "NY": 16, "NZ": 8}


def spec_from(text: str, source: str = "specs/test.yaml"):  # type: ignore[no-untyped-def]
    return parse_spec(yaml.safe_load(textwrap.dedent(text)), source)


def values(text: object, env: dict[str, int], seed: int = 0) -> list[int] | None:
    got = parse_values(text, "t").values(env, seed)
    return None if got is None else sorted(got)


def test_multiplicative_and_additive_ranges() -> None:
    assert values("1:NX:*2", SIZES) == [1, 2, 4, 8, 16, 32, 64]
    assert values("2:20:*3", {}) == [2, 6, 18]
    assert values("1:5", {}) == [1, 2, 3, 4, 5]
    assert values("1:16:+4", {}) == [1, 5, 9, 13]
    assert values("8:4:*2", {}) == []


def test_range_bound_reads_the_point() -> None:
    # CX: 1:NX/WX:*2 depends on the candidate's own WX (integer division).
    assert values("1:NX/WX:*2", {**SIZES, "WX": 16}) == [1, 2, 4]
    assert values("1:NX/WX:*2", {**SIZES, "WX": 64}) == [1]


def test_constants_lists_expressions_and_best() -> None:
    assert values(4, {}) == [4]
    assert values([1, "NZ", "NY/2"], SIZES) == [1, 8]
    assert values("*", {}) is None
    env = {**SIZES, best_name("WX"): 16}
    assert values("best.WX*2", env) == [32]
    assert values("best.WX/2:best.WX*2:*2", env) == [8, 16, 32]


def test_sample_is_reproducible_and_distinct() -> None:
    spec = parse_values("sample(3, 1:1024:*2)", "steps[0].tune.WX")
    assert isinstance(spec, SampleValues)
    population = set(RangeValues.sequence(spec.range, {}))
    first = spec.values({}, seed=7)
    assert first is not None and len(first) == 3 and first <= population
    assert spec.values({}, seed=7) == first
    draws = {spec.values({}, seed=s) for s in range(20)}
    assert len(draws) > 1  # the seed matters
    assert values("sample(50, 1:8:*2)", {}) == [1, 2, 4, 8]  # fewer values than asked


def test_shipped_specs_parse_and_bind() -> None:
    names = shipped_specs()
    for name in ("hybrid", "group-by-dimension", "group-by-optimization", "hybrid-restricted"):
        assert name in names
    assert names["dims"] == names["group-by-dimension"]
    assert names["opts"] == names["group-by-optimization"]
    for name in names:
        spec = load_spec(name)
        bound = spec.bind(PARAMS, SIZES)
        repeat = 1 if name == "temporal" else 2  # temporal: two rounds (specs/temporal.yaml)
        assert spec.repeat == repeat and spec.rounds == repeat + 1
        # BY and BZ are optional: heat3d-like kernels lack them, and they are dropped.
        tuned = {p for step in bound.steps for p in step.tune}
        assert tuned <= set(PARAMS) and {"WX", "WY", "WZ"} <= tuned
        assert bound.absent.keys() >= {"BY", "BZ"} - set(PARAMS)


def test_absent_optional_parameter_reads_as_its_value_as_best_too() -> None:
    """A step's where may read best.PARAM of an optional parameter the kernel lacks."""
    raw = "optional: {VX: 1}\nsteps: [{tune: {WX: '1:NX:*2'}, where: ['best.VX == VX']}]"
    bound = parse_spec(yaml.safe_load(raw), "opt.yaml").bind(["WX"], {"NX": 64})
    assert bound.constants[best_name("VX")] == 1 == bound.constants["VX"]
    with pytest.raises(InputError, match=r"best\.QX"):
        bad = raw.replace("best.VX", "best.QX")
        parse_spec(yaml.safe_load(bad), "opt.yaml").bind(["WX"], {"NX": 64})


def test_two_dimensional_kernel_drops_z() -> None:
    bound = load_spec("hybrid").bind(["WX", "WY", "CX", "CY"], {"NX": 64, "NY": 64})
    # x vectors keeps CX (its where: the current point without streaming)
    # chunk for the tile keeps WY (its where: the current point without streaming)
    assert [s.label for s in bound.steps] == [
        "x",
        "x merge",
        "x vectors",
        "y",
        "chunk for the tile",
        "merge shape",
        "work-group shape",
        "tile shape",
    ]
    assert bound.dropped_steps == (
        "chunk",
        "separable",
        "z",
        "rim",
        "time steps per launch",
        "rows shape",
        "vector shape",
    )
    assert bound.constants["WZ"] == 1


def test_hybrid_rim_step() -> None:
    """The vector technique's rim vectors (RIM) are tuned once the merge factors in z are
    known, both values, with the vector width, the row blocks, (separable stencils)
    SEP and the interior path (RIN); a kernel without RIM (zero boundary, plain
    kernels) drops the step although it has VX, and one without the blocks or SEP tunes
    the rest."""
    names = ["WX", "WY", "WZ", "BX", "CX", "CY", "CZ", "VX", "ZC", "STREAM", "RIM"]
    sizes = {"NX": 64, "NY": 64, "NZ": 64}
    bound = load_spec("hybrid").bind([*names, "BY", "BZ", "SEP", "RIN"], sizes)
    labels = [s.label for s in bound.steps]
    assert labels.index("z") < labels.index("rim") < labels.index("merge shape")
    step = bound.steps[labels.index("rim")]
    assert list(step.tune) == ["RIM", "VX", "BY", "BZ", "SEP", "RIN"]
    assert step.needs == ("RIM",)
    for name in step.tune:  # "*": every value the space allows
        assert step.tune[name].values(sizes, 0) is None
    plain = load_spec("hybrid").bind(names, sizes)
    assert list(plain.steps[[s.label for s in plain.steps].index("rim")].tune) == ["RIM", "VX"]
    without = load_spec("hybrid").bind(names[:-1], sizes)
    assert "rim" in without.dropped_steps and "VX" in without.parameters


def test_hybrid_vector_shape_step_joins_laplacian4s_two_ends() -> None:
    """The last step moves the vector width with the work-group's and the merges'
    shapes, each at its size: from one end of laplacian4's default runs on the H200
    (WX 64 WY 1 WZ 4, VX 2, CX 2) the other (WX 32 WY 4 WZ 2, VX 4, CZ 2) is one of its
    candidates. Without whole rim vectors (RIM 0) or with streaming only the current
    point is; a kernel without RIM drops the step."""
    names = ["WX", "WY", "WZ", "BX", "CX", "CY", "CZ", "VX", "ZC", "STREAM", "RIM"]
    sizes = {"NX": 512, "NY": 512, "NZ": 512}
    bound = load_spec("hybrid").bind([*names, "BY", "BZ"], sizes)
    step = bound.steps[-1]
    assert step.label == "vector shape" and step.needs == ("RIM",)
    start = {"WX": 64, "WY": 1, "WZ": 4, "VX": 2, "CX": 2, "CY": 1, "CZ": 1}
    other = {"WX": 32, "WY": 4, "WZ": 2, "VX": 4, "CX": 1, "CY": 1, "CZ": 2}
    env = {**bound.constants, **{best_name(p): v for p, v in start.items()}}
    for name, value in other.items():
        allowed = step.tune[name].values({**env, **other}, 0)
        assert allowed is None or value in allowed, name
    assert 8 not in (step.tune["VX"].values(env, 0) or ())  # within a factor 2
    for expr in step.keep_product:
        assert expr.evaluate({**env, **other}) == expr.evaluate({**env, **start})

    def holds(point: dict[str, int]) -> bool:
        return all(bool(w.evaluate({**env, **point})) for w in step.where)

    assert holds({**other, "RIM": 1, "STREAM": 0})
    assert not holds({**other, "RIM": 0, "STREAM": 0})
    assert not holds({**other, "RIM": 1, "STREAM": 1})
    assert holds({**start, "RIM": 0, "STREAM": 1})  # the current point, measured once
    assert "vector shape" in load_spec("hybrid").bind(names[:-1], sizes).dropped_steps


def test_a_step_needs_known_parameters(tmp_path: Path) -> None:
    """``needs:`` names parameters; one neither the kernel's nor optional is an error
    naming the step's key, and a malformed value too."""
    spec = tmp_path / "s.yaml"
    spec.write_text("name: s\nsteps:\n  - needs: [Q]\n    tune: {WX: '1:NX:*2'}\n")
    with pytest.raises(InputError, match="unknown parameter 'Q'") as err:
        load_spec(spec).bind(["WX"], {"NX": 64})
    assert "steps[0].needs" in str(err.value.source)
    spec.write_text("name: s\nsteps:\n  - needs: RIM\n    tune: {WX: '1:NX:*2'}\n")
    with pytest.raises(InputError, match="list of parameter names"):
        load_spec(spec)


@pytest.mark.parametrize("name", ["hybrid", "hybrid-restricted", "dims", "opts"])
def test_time_steps_per_launch_step(name: str) -> None:
    """Every shipped spec tunes TB (temporal blocking) once the tile is known; kernels
    without TB drop the step."""
    names = ["WX", "WY", "CX", "CY", "TB"]
    bound = load_spec(name).bind(names, {"NX": 64, "NY": 64})
    labels = [s.label for s in bound.steps]
    assert "time steps per launch" in labels
    assert labels.index("time steps per launch") > labels.index("x" if "x" in labels else labels[0])
    step = bound.steps[labels.index("time steps per launch")]
    assert list(step.tune) == ["TB"]
    assert (
        "time steps per launch"
        in load_spec(name).bind(names[:-1], {"NX": 64, "NY": 64}).dropped_steps
    )


def test_hybrid_streaming_steps() -> None:
    """The chunk is first kept short (tile still unknown), then searched in full."""
    names = ["WX", "WY", "WZ", "BX", "CX", "CY", "CZ", "VX", "ZC"]
    bound = load_spec("hybrid").bind(names, {"NX": 256, "NY": 256, "NZ": 256})
    labels = [s.label for s in bound.steps]
    assert labels.index("chunk") < labels.index("x") < labels.index("x merge")
    assert labels.index("y") < labels.index("chunk for the tile") < labels.index("z")
    steps = {s.label: s for s in bound.steps}
    first, tile = steps["chunk"].tune["ZC"], steps["chunk for the tile"].tune["ZC"]
    # values beyond the kernel's ZC domain (a short NZ) are never valid configurations
    assert sorted(first.values({"NZ": 256}, 0) or ()) == [1, 2, 4, 8]
    assert tile.values({"NZ": 256}, 0) is None  # "*": every value the space allows
    # the x group keeps BX tied to VX; the merge step alone trades BX for CX
    assert [str(w) for w in steps["x"].where] and list(steps["x merge"].tune) == ["BX", "CX"]


def test_dims_reads_how_many_problem_sizes() -> None:
    spec = spec_from('steps: [{tune: {WX: "1:(4 if DIMS == 2 else 64):*2"}}]')
    two = spec.bind(["WX", "WY"], {"NX": 64, "NY": 64})
    three = spec.bind(["WX", "WY"], SIZES)
    assert two.constants["DIMS"] == 2 and three.constants["DIMS"] == 3
    bounded = "1:(4 if DIMS == 2 else 64):*2"
    assert values(bounded, dict(two.constants)) == [1, 2, 4]
    assert values(bounded, dict(three.constants)) == [1, 2, 4, 8, 16, 32, 64]
    with pytest.raises(InputError, match="'DIMS' is both a parameter and the problem's"):
        spec.bind(["WX", "DIMS"], SIZES)


def _merge_bounds(sizes: dict[str, int], wx: int, wy: int) -> tuple[int, int]:
    """The largest CX of hybrid's x group and CY of its y group at WX, WY (BX = BY = 1)."""
    names = ["WX", "WY", "BX", "CX", "CY", "VX"] + (["WZ", "CZ", "ZC"] if "NZ" in sizes else [])
    bound = load_spec("hybrid").bind(names, sizes)
    steps = {s.label: s for s in bound.steps}
    env = {**bound.constants, "WX": wx, "WY": wy, "BX": 1, "BY": 1}
    cx = steps["x"].tune["CX"].values(env, 0) or ()
    cy = steps["y"].tune["CY"].values(env, 0) or ()
    return max(cx), max(cy)


def test_hybrid_bounds_merging_on_2d_arrays_only() -> None:
    """2D rows are long: merging up to the whole row made hybrid's x group 90 candidates
    at 8192^2, more than a budget of 60 (benchmarks/results/spec_replay). 3D arrays keep
    the whole-row range, which streaming at 512^3 uses."""
    assert _merge_bounds({"NX": 8192, "NY": 8192}, 1, 1) == (16, 32)
    assert _merge_bounds({"NX": 8192, "NY": 8192}, 1024, 1024) == (8, 8)
    assert _merge_bounds({"NX": 512, "NY": 512, "NZ": 512}, 16, 1) == (32, 512)
    assert _merge_bounds({"NX": 256, "NY": 256, "NZ": 256}, 1, 1) == (256, 256)


@pytest.mark.parametrize("name", ["hybrid", "hybrid-restricted", "dims", "opts"])
def test_two_dimensional_streaming_keeps_the_chunk(name: str) -> None:
    """A 2D kernel with streaming along y (ZC over NY) tunes its chunk: the chunk steps
    name no size the 2D kernel lacks (NZ)."""
    names = ["WX", "WY", "BX", "VX", "CX", "CY", "STREAM", "ZC"]
    bound = load_spec(name).bind(names, {"NX": 64, "NY": 64})
    labels = [s.label for s in bound.steps]
    assert "chunk" in labels and "chunk" not in bound.dropped_steps
    # the chunk alone; for the tile, the chunk with the work-group's height
    steps = {s.label: list(s.tune) for s in bound.steps if "chunk" in s.label}
    assert steps["chunk"] == ["ZC"]
    for label, tuned in steps.items():
        assert tuned == ["ZC"] or (label == "chunk for the tile" and tuned == ["ZC", "WY"])


def test_optional_as_list_and_start_expressions() -> None:
    spec = spec_from(
        """
        optional: [BY]
        start: {WX: "min(NX, 32)", CX: "NX/WX"}
        steps: [{tune: {WX: "1:NX:*2", BY: "1:4:*2"}}]
        """
    )
    bound = spec.bind(PARAMS, SIZES)
    assert bound.start_values() == {"WX": 32, "CX": 2}
    assert list(bound.steps[0].tune) == ["WX"]
    assert spec.name == "test"


def test_budget_parsing() -> None:
    assert Budget.parse("500") == Budget(evaluations=500)
    assert Budget.parse("90s") == Budget(wall_seconds=90.0)
    assert Budget.parse("2m") == Budget(wall_seconds=120.0)
    for bad in ("0", "-3", "ten", "5x", "0s"):
        with pytest.raises(InputError, match=r"^budget: expected a positive number"):
            Budget.parse(bad)
    spec = spec_from("budget: {evaluations: 40, seconds: 2.5}\nsteps: [{tune: {WX: 1}}]")
    assert spec.budget == Budget(evaluations=40, seconds=2.5)


BAD_SPECS = [
    ("[1, 2]", "specs/bad.yaml", "must be a mapping with name: and steps:"),
    ("name: x", "specs/bad.yaml: steps", "missing required key"),
    ("steps: []", "specs/bad.yaml: steps", "must be a non-empty list"),
    ("stepz: []\nsteps: [{tune: {WX: 1}}]", "specs/bad.yaml: stepz", "unknown key; allowed:"),
    ("repeat: -1\nsteps: [{tune: {WX: 1}}]", "specs/bad.yaml: repeat", "at least 0"),
    ("repeat: two\nsteps: [{tune: {WX: 1}}]", "specs/bad.yaml: repeat", "must be an integer"),
    ("steps: [{tune: {WX: 1}, keep: [WX]}]", "specs/bad.yaml: steps[0].keep", "unknown key"),
    ("steps: [{tune: {}}]", "specs/bad.yaml: steps[0].tune", "must map the parameters"),
    ("steps: [WX]", "specs/bad.yaml: steps[0]", "each step must be a mapping"),
    (
        "steps: [{tune: {WX: '1:NX:/2'}}]",
        "specs/bad.yaml: steps[0].tune.WX",
        "must start with + or *",
    ),
    ("steps: [{tune: {WX: '1:2:3:4'}}]", "specs/bad.yaml: steps[0].tune.WX", "malformed range"),
    ("steps: [{tune: {WX: 'sample(3)'}}]", "specs/bad.yaml: steps[0].tune.WX", "malformed sample"),
    (
        "steps: [{tune: {WX: 'sample(3, 4)'}}]",
        "specs/bad.yaml: steps[0].tune.WX",
        "sample() draws from a range",
    ),
    ("steps: [{tune: {WX: 'NX +* 2'}}]", "specs/bad.yaml: steps[0].tune.WX", "cannot parse"),
    ("steps: [{tune: {WX: 'open(1)'}}]", "specs/bad.yaml: steps[0].tune.WX", "unknown function"),
    ("steps: [{tune: {WX: []}}]", "specs/bad.yaml: steps[0].tune.WX", "empty list"),
    ("steps: [{tune: {WX: true}}]", "specs/bad.yaml: steps[0].tune.WX", "expected a value"),
    ("steps: [{tune: {WX: 1}, rounds: 2}]", "specs/bad.yaml: steps[0].rounds", "must be one of"),
    (
        "start: {WX: best.WX}\nsteps: [{tune: {WX: 1}}]",
        "specs/bad.yaml: start.WX",
        "cannot refer to best.",
    ),
    (
        "where: ['WX <= best.WX']\nsteps: [{tune: {WX: 1}}]",
        "specs/bad.yaml: where[0]",
        "cannot refer to best.",
    ),
    (
        "budget: {evaluations: 0}\nsteps: [{tune: {WX: 1}}]",
        "specs/bad.yaml: budget.evaluations",
        "at least 1",
    ),
    (
        "budget: {time: 3}\nsteps: [{tune: {WX: 1}}]",
        "specs/bad.yaml: budget.time",
        "unknown key",
    ),
    (
        "budget: {seconds: -1}\nsteps: [{tune: {WX: 1}}]",
        "specs/bad.yaml: budget.seconds",
        "positive number of seconds",
    ),
    ("optional: {BY: one}\nsteps: [{tune: {WX: 1}}]", "specs/bad.yaml: optional.BY", "integer"),
    ("steps: [{tune: {2X: 1}}]", "specs/bad.yaml: steps[0].tune.2X", "identifiers"),
]


@pytest.mark.parametrize(("text", "source", "message"), BAD_SPECS)
def test_bad_spec_messages(text: str, source: str, message: str) -> None:
    with pytest.raises(InputError) as err:
        parse_spec(yaml.safe_load(text), "specs/bad.yaml")
    assert err.value.source == source
    assert message in err.value.message


BAD_BINDINGS = [
    (
        "steps: [{tune: {WX: 1}}, {tune: {WY: 1}}, {tune: {QX: '1:NX:*2'}}]",
        "specs/bad.yaml: steps[2].tune.QX",
        "unknown parameter 'QX'; the kernel's parameters are WX, WY",
    ),
    (
        "steps: [{tune: {WX: 1, CX: '1:NX/WQ:*2'}}]",
        "specs/bad.yaml: steps[0].tune.CX",
        "unknown name 'WQ' in '1:NX/WQ:*2'",
    ),
    (
        "steps: [{tune: {WX: 'best.QQ'}}]",
        "specs/bad.yaml: steps[0].tune.WX",
        "unknown name 'best.QQ'",
    ),
    (
        "steps: [{tune: {WX: 1}, keep_product: ['WX*WW']}]",
        "specs/bad.yaml: steps[0].keep_product[0]",
        "unknown name 'WW'",
    ),
    (
        "steps: [{tune: {WX: 1}, where: ['WX < MX']}]",
        "specs/bad.yaml: steps[0].where[0]",
        "unknown name 'MX'",
    ),
    ("start: {ZZ: 1}\nsteps: [{tune: {WX: 1}}]", "specs/bad.yaml: start.ZZ", "unknown parameter"),
    (
        "start: {WX: WY}\nsteps: [{tune: {WX: 1}}]",
        "specs/bad.yaml: start.WX",
        "unknown name 'WY'",
    ),
    ("where: ['QX > 1']\nsteps: [{tune: {WX: 1}}]", "specs/bad.yaml: where[0]", "unknown name"),
    (
        "optional: {BY: 1}\nsteps: [{tune: {BY: '1:4:*2'}}]",
        "specs/bad.yaml",
        "none of the spec's steps tunes a parameter this kernel has",
    ),
]


@pytest.mark.parametrize(("text", "source", "message"), BAD_BINDINGS)
def test_bad_names_are_reported_against_the_kernel(text: str, source: str, message: str) -> None:
    spec = parse_spec(yaml.safe_load(text), "specs/bad.yaml")
    with pytest.raises(InputError) as err:
        spec.bind(PARAMS, SIZES)
    assert err.value.source == source
    assert message in err.value.message


def test_unknown_parameter_hint_mentions_optional() -> None:
    spec = spec_from("steps: [{tune: {BY: 1}}]")
    with pytest.raises(InputError) as err:
        spec.bind(PARAMS, SIZES)
    assert "optional:" in err.value.hint


def test_spec_files_by_path_and_errors(tmp_path) -> None:  # type: ignore[no-untyped-def]
    good = tmp_path / "mine.yaml"
    good.write_text("steps:\n  - tune: {WX: '1:NX:*2'}\n")
    spec = load_spec(good)
    assert spec.name == "mine" and spec.source == str(good)
    with pytest.raises(InputError, match=r"not a shipped spec; shipped specs: .*hybrid"):
        load_spec(tmp_path / "missing.yaml")
    broken = tmp_path / "broken.yaml"
    broken.write_text("steps:\n  - tune: {WX: [1, 2}\n")
    with pytest.raises(InputError) as err:
        load_spec(broken)
    assert err.value.source is not None and err.value.source.startswith(f"{broken}:")
    assert "malformed YAML" in err.value.message

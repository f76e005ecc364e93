"""The MiniZinc side: model, real solver, agreement with Python, errors, refusals."""

from __future__ import annotations

import itertools
import math
import subprocess
from dataclasses import replace
from typing import Any

import numpy as np
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st
from space_helpers import h100_limits, stencil

from gtune.device import DeviceLimits
from gtune.exceptions import (
    EnvironmentProblem,
    ExpressionError,
    InputError,
    UnsatisfiableSpace,
)
from gtune.expr import Expr
from gtune.space import NamedConstraint
from gtune.space.build import solve_space, technique_space
from gtune.space.model import build_model, device_dzn, model_mzn
from gtune.space.solve import model_key, model_texts, solve
from gtune.space.vector import holds
from gtune.store import open_store

pytestmark = pytest.mark.minizinc


def grid(domains: dict[str, list[int]]) -> np.ndarray:
    return np.array(list(itertools.product(*domains.values())), dtype=np.int64)


def as_set(rows: np.ndarray) -> set[tuple[int, ...]]:
    return {tuple(r) for r in rows.tolist()}


def test_minizinc_numpy_and_python_agree_on_every_point() -> None:
    """The whole unpruned grid: MiniZinc's solutions == numpy mask; Expr names a
    violated rule exactly for the points MiniZinc rejects (sampled)."""
    device = h100_limits(compute_units=4, local_mem_size=4096, max_work_group_size=64)
    kernel = stencil(8)
    built = solve_space(kernel, device)
    model, space = built.model, built.space
    everything = grid(model.domains)
    env: dict[str, object] = dict(model.env)
    for i, p in enumerate(model.parameters):
        env[p] = everything[:, i]
    mask = np.ones(len(everything), dtype=bool)
    for c in model.constraints:
        mask &= holds(c.expr, env, len(everything))
    assert as_set(everything[mask]) == as_set(space.array)
    assert 0 < space.size() < len(everything)
    rng = np.random.default_rng(0)
    for i in rng.choice(len(everything), 3000, replace=False):
        config = dict(zip(model.parameters, everything[i].tolist(), strict=True))
        violation = space.is_valid(config)
        assert (violation is None) == bool(mask[i])
        if violation is not None:
            rule = next(c for c in model.constraints if c.name == violation.constraint)
            assert not rule.holds({**model.env, **config})


def test_python_package_and_direct_gecode_give_the_same_space(h100: DeviceLimits) -> None:
    model = build_model(stencil(8), h100, min_groups=False)
    fast, info = solve(model, use_cache=False, method="fzn", workers=2)
    slow, _ = solve(model, use_cache=False, method="python")
    assert info.workers == 2 and info.parts > 2  # more parts than processes: a pool
    assert len(fast) == len(slow) > 0
    assert as_set(fast) == as_set(slow)


def test_platform_rules_hold_in_every_solution(h100: DeviceLimits) -> None:
    kernel = stencil(64)
    space = solve_space(kernel, h100).space
    for config in space.sample(500, seed=1):
        glob, loc = kernel.launch_sizes(config)
        assert loc is not None
        assert np.prod(loc) <= h100.max_work_group_size
        assert all(lo <= m for lo, m in zip(loc, h100.max_work_item_sizes, strict=True))
        assert all(g % lo == 0 for g, lo in zip(glob, loc, strict=True))
        assert np.prod([g // lo for g, lo in zip(glob, loc, strict=True)]) >= 132
        assert config["LOCAL"] + config["IMAGE"] <= 1


def test_min_groups_can_be_turned_off(h100: DeviceLimits) -> None:
    kernel = stencil(32)
    on = solve_space(kernel, h100).space
    off = solve_space(kernel, h100, min_groups=False).space
    assert on.size() < off.size()
    assert as_set(on.array) <= as_set(off.array)
    lonely = next(c for c in off.enumerate() if on.is_valid(c) is not None)
    violation = on.is_valid(lonely)
    assert violation is not None and violation.constraint == "min_work_groups"


def test_images_follow_device_support_and_limits() -> None:
    kernel = stencil(32)
    none = solve_space(kernel, h100_limits(image_support=False)).space
    assert none.size() > 0 and not (none.array[:, kernel.parameter_names.index("IMAGE")] == 1).any()
    cfg = {**none.sample(1)[0], "IMAGE": 1, "LOCAL": 0, "VX": 1, "BX": 1}
    v = none.is_valid(cfg)
    assert v is not None and v.constraint == "image_support[src]"
    small = solve_space(kernel, h100_limits(image3d_max=(16, 16, 16))).space
    v = small.is_valid(cfg)
    assert v is not None and v.constraint == "image_size[src]"


def test_local_memory_rule_uses_the_launch_formula(h100: DeviceLimits) -> None:
    kernel = stencil(64)
    space = solve_space(kernel, h100, min_groups=False).space
    lm = kernel.launch.local_memory_bytes
    assert lm is not None
    local = space.restrict([Expr("LOCAL == 1")])
    assert local.size() > 0
    assert all(lm.evaluate(kernel.env(c)) <= h100.local_mem_size for c in local.enumerate())
    big = dict(WX=32, WY=8, WZ=4, BX=1, CX=2, CY=4, CZ=2, VX=1, LOCAL=1, IMAGE=0)
    assert lm.evaluate(kernel.env(big)) > h100.local_mem_size
    v = space.is_valid(big)
    assert v is not None and v.constraint == "local_memory"


def test_techniques_restrict_the_space(h100: DeviceLimits) -> None:
    kernel = stencil(32)
    space = solve_space(kernel, h100).space
    parts = [technique_space(space, kernel, t).size() for t in kernel.techniques]
    assert sum(parts) == space.size()


def test_a_technique_solved_alone_is_the_technique_cut_from_the_whole(
    h100: DeviceLimits,
) -> None:
    """``solve_space(technique=)`` hands the technique's rules to the solver: the same
    configurations as restricting the whole space, refused with the same names."""
    kernel = stencil(32)
    whole = solve_space(kernel, h100, use_cache=False).space
    for technique in kernel.techniques:
        cut = technique_space(whole, kernel, technique)
        alone = solve_space(kernel, h100, technique=technique, use_cache=False).space
        assert alone.size() == cut.size() > 0
        assert as_set(alone.array) == as_set(cut.array)
        assert alone.label.endswith(f"[{technique}]")
        outside = next(c for c in whole.enumerate() if cut.is_valid(c) is not None)
        refused = alone.is_valid(outside)
        assert refused is not None
        assert refused.constraint.startswith(f"techniques.{technique}: ")
    with pytest.raises(InputError, match="unknown technique 'nope'"):
        solve_space(kernel, h100, technique="nope")


def test_the_cache_key_is_the_space_not_the_names(h100: DeviceLimits) -> None:
    """Comment lines (the kernel's name and file, the device's name) leave the solve
    cache's key as it is; a domain, a constraint or a limit changes it."""
    kernel = stencil(16)
    model = build_model(kernel, h100)
    renamed = replace(model, kernel_name="other", kernel_label="/elsewhere/other.yaml")
    assert model_texts(renamed) != model_texts(model)
    assert model_key(renamed) == model_key(model)
    assert model_key(replace(model, device_name="another board")) == model_key(model)
    narrower = replace(model, domains={**model.domains, "WX": model.domains["WX"][:-1]})
    assert model_key(narrower) != model_key(model)
    stricter = replace(model, constraints=model.constraints[:-1])
    assert model_key(stricter) != model_key(model)
    smaller = build_model(kernel, replace(h100, local_mem_size=h100.local_mem_size // 2))
    assert model_key(smaller) != model_key(model)


def test_emitted_files_solve_with_the_binary(h100: DeviceLimits, tmp_path) -> None:  # type: ignore[no-untyped-def]
    model = build_model(stencil(16), h100)
    (tmp_path / "m.mzn").write_text(model_mzn(model))
    (tmp_path / "d.dzn").write_text(device_dzn(model.limits, h100.name))
    out = subprocess.run(
        ["minizinc", "--solver", "gecode", "-O2", "-a", "m.mzn", "d.dzn"],
        cwd=tmp_path, capture_output=True, text=True, check=True,
    )  # fmt: skip
    rows = [ln.split() for ln in out.stdout.splitlines() if ln and ln[0].isdigit()]
    ours, _ = solve(model, use_cache=False)
    assert as_set(np.array(rows, dtype=np.int64)) == as_set(ours)


def test_cached_space_is_identical(h100: DeviceLimits) -> None:
    kernel = stencil(32)
    first = solve_space(kernel, h100)
    second = solve_space(kernel, h100)
    assert not first.info.from_cache and second.info.from_cache
    assert np.array_equal(first.space.array, second.space.array)
    other = solve_space(kernel, h100_limits(max_work_group_size=64))
    assert not other.info.from_cache and other.space.size() < first.space.size()


def test_refusals_persist_per_device(h100: DeviceLimits) -> None:
    kernel = stencil(32)
    store = open_store("sqlite://")
    space = solve_space(kernel, h100, store=store).space
    victim = space.sample(1, seed=5)[0]
    space.exclude(victim, "CL_OUT_OF_RESOURCES")
    again = solve_space(kernel, h100, store=store).space
    assert again.size() == space.size()
    v = again.is_valid(victim)
    assert v is not None and "CL_OUT_OF_RESOURCES" in str(v)
    elsewhere = solve_space(kernel, h100_limits(name="another GPU"), store=store).space
    assert elsewhere.is_valid(victim) is None


def test_unsatisfiable_space_names_the_conflict(h100: DeviceLimits) -> None:
    extra = [NamedConstraint("wide", Expr("WX * WY * WZ >= 2048"), "extra")]
    with pytest.raises(UnsatisfiableSpace) as err:
        solve_space(stencil(256), h100, extra=extra)
    text = err.value.render()
    assert "wide: WX * WY * WZ >= 2048" in text
    assert "work_group_size" in text
    assert "MAX_WORK_GROUP_SIZE=1024" in text
    assert "stencil3d.yaml" in text


def test_unknown_name_in_a_constraint_is_named(h100: DeviceLimits) -> None:
    extra = [NamedConstraint("typo", Expr("WX <= MAX_WORKGROUP"), "extra")]
    with pytest.raises(ExpressionError, match=r"'typo'.*MAX_WORKGROUP"):
        build_model(stencil(16), h100, extra=extra)


def test_failing_minizinc_is_reported(h100: DeviceLimits, tmp_path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    fake = tmp_path / "bin" / "minizinc"
    fake.parent.mkdir()
    fake.write_text("#!/bin/sh\necho 'Error: type error in model' >&2\nexit 1\n")
    fake.chmod(0o755)
    monkeypatch.setenv("PATH", str(fake.parent))
    model = build_model(stencil(16), h100)
    with pytest.raises(EnvironmentProblem, match=rf"(?s){fake}.*type error"):
        solve(model, use_cache=False, method="fzn")


def test_constraints_beyond_solver_integers_are_applied_after_enumeration() -> None:
    """A CPU's 4096-wide work-item limits make the local-memory product exceed
    Gecode's 32-bit integers: the space still comes out, equal to the full grid
    filtered by every constraint."""
    device = h100_limits(
        max_work_item_sizes=(4096, 4096, 4096),
        max_work_group_size=4096,
        local_mem_size=2 * 1024 * 1024,
    )
    kernel = stencil(512)
    built = solve_space(kernel, device, use_cache=False)
    model, space = built.model, built.space
    from gtune.space.model import fits_solver

    assert not all(fits_solver(c.expr, model) for c in model.constraints)
    rows = space.array
    env: dict[str, object] = dict(model.env)
    for i, p in enumerate(model.parameters):
        env[p] = rows[:, i]
    for c in model.constraints:
        assert holds(c.expr, env, len(rows)).all(), c.name
    assert space.size() > 0


def test_negative_local_memory_is_cut_by_a_named_rule(h100: DeviceLimits) -> None:
    from dataclasses import replace

    kernel = stencil(16)
    minus = Expr(f"({kernel.launch.local_memory_bytes.text}) - 1", "launch.local_memory_bytes")
    odd = replace(kernel, launch=replace(kernel.launch, local_memory_bytes=minus))
    model = build_model(odd, h100)
    assert "local_memory_not_negative" in [c.name for c in model.constraints]
    space = solve_space(odd, h100, use_cache=False).space
    for config in itertools.islice(space.enumerate(), 2000):
        assert int(minus.evaluate({**odd.sizes, **config})) >= 0
    assert space.size() < solve_space(kernel, h100, use_cache=False).space.size()


# ---------------------------------------------------------------------------------
# The packed rows Gecode prints (RowCode) and their parsing


@st.composite
def _coded_variables(draw: st.DrawFn) -> tuple[list[str], dict[str, list[int]], dict[str, str]]:
    """Parameters with random domains (negative values, one value), some of them one
    FlatZinc variable (as MiniZinc merges equal variables) or a literal."""
    n = draw(st.integers(1, 6))
    parameters = [f"P{i}" for i in range(n)]
    domains: dict[str, list[int]] = {}
    sources: dict[str, str] = {}
    for i, p in enumerate(parameters):
        domains[p] = sorted(draw(st.sets(st.integers(-40, 600), min_size=1, max_size=5)))
        kind = draw(st.sampled_from(["own", "own", "literal", "shared"]))
        if kind == "literal":
            sources[p] = str(domains[p][0])
        elif kind == "shared" and i > 0 and not _literal(sources[parameters[i - 1]]):
            sources[p] = sources[parameters[i - 1]]
            domains[p] = domains[parameters[i - 1]]
        else:
            sources[p] = f"V{i}"
    return parameters, domains, sources


def _literal(source: str) -> bool:
    return source.lstrip("-").isdigit()


@settings(max_examples=25, deadline=None)
@given(case=_coded_variables(), limit=st.sampled_from([5, 12, 64, 1 << 30]))
def test_gecode_prints_every_row_once_through_the_packed_code(
    case: tuple[list[str], dict[str, list[int]], dict[str, str]], limit: int, tmp_path_factory: Any
) -> None:
    """Real Gecode on FlatZinc with no constraint: the decoded rows are the product of the
    variables' domains, each once, whatever the codes' size limit (small limits pack
    the variables into several codes)."""
    from gtune.space.solve import (
        RowCode,
        _before_solve,
        _gecode_binary,
        _insert_declaration,
        parse_rows,
    )

    parameters, domains, sources = case
    # each FlatZinc variable's values: those of the (first) parameter it stands for
    variables = {s: domains[p] for p, s in reversed(sources.items()) if not _literal(s)}
    code = RowCode.of(parameters, domains, sources, limit=limit)
    assert all(math.prod(len(code.domains[v]) for v in group) <= limit for group in code.groups)
    declared = "".join(f"var {{{','.join(map(str, d))}}}: {v};\n" for v, d in variables.items())
    declarations, constraints = code.flatzinc()
    fzn = _insert_declaration("% packed rows\n" + declared + "solve satisfy;\n", declarations)
    fzn = _before_solve(fzn, constraints)
    path = tmp_path_factory.mktemp("fzn") / "m.fzn"
    path.write_text(fzn)
    gecode = _gecode_binary()
    assert gecode is not None
    out = subprocess.run([gecode, "-a", str(path)], capture_output=True, check=True).stdout
    rows = code.decode(parse_rows(out, len(code.groups)), gecode)
    want = set()
    for values in itertools.product(*variables.values()):
        at = dict(zip(variables, values, strict=True))
        want.add(tuple(int(s) if _literal(s) else at[s] for s in sources.values()))
    assert len(rows) == len(as_set(rows)) == len(want)
    assert as_set(rows) == want


@settings(max_examples=100, deadline=None)
@given(
    st.integers(1, 6).flatmap(
        lambda w: st.lists(
            st.lists(st.integers(-(2**31), 2**31 - 1), min_size=w, max_size=w), max_size=30
        )
    )
)
def test_parse_rows_reads_back_every_row_gecode_prints(rows: list[list[int]]) -> None:
    from gtune.space.solve import parse_rows

    assume(rows)
    width = len(rows[0])
    text = b"".join(
        b"gtune_row = array1d(1..%d, [%s]);\n----------\n"
        % (width, ", ".join(str(v) for v in row).encode())
        for row in rows
    )
    assert parse_rows(text + b"==========\n", width).tolist() == rows


def test_parse_rows_reads_negative_values_and_refuses_ragged_output() -> None:
    from gtune.space.solve import parse_rows

    text = b"".join(
        b"gtune_row = array1d(1..3, [%d, %d, %d]);\n----------\n" % row
        for row in [(0, -5, 12), (7, 3, -100), (1, 1, 1)]
    )
    rows = parse_rows(text + b"==========\n", 3)
    assert rows.tolist() == [[0, -5, 12], [7, 3, -100], [1, 1, 1]]
    assert parse_rows(b"=====UNSATISFIABLE=====\n", 3).shape == (0, 3)
    ragged = text + b"gtune_row = array1d(1..3, [4, 5]);\n----------\n==========\n"
    with pytest.raises(EnvironmentProblem, match="rows of different lengths"):
        parse_rows(ragged, 3)
    with pytest.raises(EnvironmentProblem, match="before enumerating every solution"):
        parse_rows(text, 3)  # stopped early: no end marker


def test_a_time_stepping_kernel_may_leave_one_unit_in_32_idle(h100: DeviceLimits) -> None:
    """heat3d with 8 steps at 512³: its fastest kernel on the H200 (64 x 32 blocks
    walking the whole z range) has 128 work-groups, which pass on 132 compute units
    (31/32 of them) but not on 133; a one-step kernel still needs one per unit."""
    import dataclasses

    from gtune.stencils.definition import load_definition
    from gtune.stencils.render import definition_kernel_of
    from tests.conftest import ROOT

    d = load_definition(ROOT / "stencils" / "heat3d.stencil.yaml")
    sizes = {"NX": 512, "NY": 512, "NZ": 512}
    stepping = definition_kernel_of(dataclasses.replace(d, steps=8), sizes)
    rules = {
        name: next(c for c in build_model(k, h100).constraints if c.name == "min_work_groups")
        for name, k in (("stepping", stepping), ("one step", stencil(64)))
    }
    assert rules["one step"].expr.text.endswith(">= COMPUTE_UNITS")
    winner = {**(stepping.default_config() or {}), "STREAM": 1, "ZREG": 2, "ZU": 1, "TB": 4}
    winner |= {"VX": 4, "BX": 4, "WX": 16, "WY": 32, "CX": 1, "CY": 1, "ZC": 512, "ZS": 1}
    glob, loc = stepping.launch_sizes(winner)
    assert loc is not None and math.prod(g // w for g, w in zip(glob, loc, strict=True)) == 128
    env = stepping.env(winner)
    assert rules["stepping"].expr.evaluate({**env, "COMPUTE_UNITS": 132})
    assert not rules["stepping"].expr.evaluate({**env, "COMPUTE_UNITS": 133})

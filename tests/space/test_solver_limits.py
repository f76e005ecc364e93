"""The solver under a timeout, a broken ``minizinc``, and constant constraints."""

from __future__ import annotations

from pathlib import Path

import pytest
from space_helpers import stencil

from gtune.device import DeviceLimits
from gtune.exceptions import (
    EnvironmentProblem,
    ExpressionError,
    GtuneError,
    InputError,
    UnsatisfiableSpace,
)
from gtune.expr import Expr
from gtune.space.build import solve_space
from gtune.space.constraints import NamedConstraint
from gtune.space.model import build_model, model_mzn

pytestmark = pytest.mark.minizinc

VERSION = "MiniZinc to FlatZinc converter, version 2.6.4"


def _fake_minizinc(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, body: str) -> Path:
    fake = tmp_path / "bin" / "minizinc"
    fake.parent.mkdir()
    fake.write_text("#!/bin/sh\n" + body)
    fake.chmod(0o755)
    monkeypatch.setenv("PATH", f"{fake.parent}:/usr/bin:/bin")
    return fake


def test_minizinc_printing_garbage_is_an_environment_problem(
    h100: DeviceLimits, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    fake = _fake_minizinc(tmp_path, monkeypatch, "echo '@@ \\x01 garbage'\n")
    with pytest.raises(EnvironmentProblem, match=rf"{fake} does not behave like MiniZinc"):
        solve_space(stencil(16), h100, use_cache=False)


def test_minizinc_failing_on_a_sound_model_is_an_environment_problem(
    h100: DeviceLimits, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    body = f'[ "$1" = --version ] && {{ echo "{VERSION}"; exit 0; }}\necho boom >&2\nexit 3\n'
    fake = _fake_minizinc(tmp_path, monkeypatch, body)
    with pytest.raises(EnvironmentProblem, match=rf"(?s){fake} failed.*boom") as err:
        solve_space(stencil(16), h100, use_cache=False)
    assert "Traceback" not in err.value.render()


def test_solver_timeout_names_kernel_device_and_the_setting(
    h100: DeviceLimits, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    body = f'[ "$1" = --version ] && {{ echo "{VERSION}"; exit 0; }}\nexec sleep 30\n'
    _fake_minizinc(tmp_path, monkeypatch, body)
    with pytest.raises(GtuneError) as err:
        solve_space(stencil(16), h100, use_cache=False, timeout=0.5)
    text = err.value.render()
    assert "took longer than 0.5 s" in text
    assert "stencil3d.yaml" in text and h100.name in text
    assert "GTUNE_SOLVE_TIMEOUT" in text


@pytest.mark.parametrize("value", ["abc", "-1", "nan", "0"])
def test_bad_timeout_setting_is_named(
    h100: DeviceLimits, monkeypatch: pytest.MonkeyPatch, value: str
) -> None:
    monkeypatch.setenv("GTUNE_SOLVE_TIMEOUT", value)
    with pytest.raises(InputError, match="GTUNE_SOLVE_TIMEOUT"):
        solve_space(stencil(16), h100, use_cache=False)


@pytest.mark.parametrize("text", ["True", "1", "NX > 0", "MAX_WORK_GROUP_SIZE >= 1", "7 % 3"])
def test_constant_true_constraints_are_dropped(h100: DeviceLimits, text: str) -> None:
    plain = solve_space(stencil(16), h100, use_cache=False)
    extra = [NamedConstraint(f"extra: {text}", Expr(text), "extra")]
    built = solve_space(stencil(16), h100, extra=extra, use_cache=False)
    assert built.space.size() == plain.space.size()
    assert all(c.name != f"extra: {text}" for c in built.model.constraints)


@pytest.mark.parametrize("text", ["False", "0", "NX < 0", "not True", "16 - NX"])
def test_constant_false_constraints_are_named(h100: DeviceLimits, text: str) -> None:
    extra = [NamedConstraint(f"extra: {text}", Expr(text), "extra")]
    with pytest.raises(UnsatisfiableSpace, match="is always false") as err:
        build_model(stencil(16), h100, extra=extra)
    assert f"extra: {text}" in err.value.render()
    assert "stencil3d.yaml" in err.value.render()


def test_division_by_zero_in_a_constraint_is_named_not_unsatisfiable(h100: DeviceLimits) -> None:
    extra = [NamedConstraint("halo", Expr("WX % (NX - 16) == 0"), "extra")]
    with pytest.raises(ExpressionError, match=r"'halo'.*modulo by zero \(WX % \(NX - 16\)\)"):
        build_model(stencil(16), h100, extra=extra)


def test_a_number_as_a_constraint_means_not_zero(h100: DeviceLimits) -> None:
    extra = [NamedConstraint("nonzero", Expr("WX - 16"), "extra")]
    built = solve_space(stencil(16), h100, extra=extra, use_cache=False)
    assert "(WX - 16) != 0" in model_mzn(built.model)
    assert built.space.size() > 0
    assert all(config["WX"] != 16 for config in built.space.enumerate())

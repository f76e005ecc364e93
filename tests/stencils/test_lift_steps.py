"""Several time steps in one launch: the k-th root of a lifted stencil, and lifting a
kernel whose launch is k steps of a smaller stencil as a definition with ``steps: k``."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gtune.stencils.definition import parse_definition
from gtune.stencils.lift import Interface, ScalarArg, lift_with
from gtune.stencils.lift_steps import kth_root, power
from tests.inprocess import Cli

# evaluators share the session's worker processes (tests/conftest.py)
pytestmark = pytest.mark.usefixtures("shared_workers")

EPS32 = float(np.finfo(np.float32).eps)


@st.composite
def roots(draw: Any) -> tuple[dict[tuple[int, ...], float], int]:
    dims = draw(st.sampled_from([2, 3]))
    box = [(a, b, c)[:dims] for a in (-1, 0, 1) for b in (-1, 0, 1) for c in (-1, 0, 1)]
    box = sorted(set(box))
    chosen = draw(st.lists(st.sampled_from(box), min_size=2, max_size=7, unique=True))
    s = {o: draw(st.integers(1, 15)) / 16 * draw(st.sampled_from([1, -1])) for o in chosen}
    return s, draw(st.integers(2, 3))


@settings(max_examples=40, deadline=None)
@given(roots())
def test_the_kth_root_of_a_power_is_found(case: tuple[dict[tuple[int, ...], float], int]) -> None:
    s, k = case  # two offsets at least: one of them reaches a neighbour
    c = power(s, k)
    root = kth_root(c, k, EPS32)
    assert root is not None
    back = power(root, k)
    for o in set(back) | set(c):
        assert back.get(o, 0.0) == pytest.approx(c.get(o, 0.0), abs=1e-9)


def test_a_stencil_that_is_no_power_has_no_root() -> None:
    c = {(0, -2): 0.25, (0, 0): 0.5, (0, 2): 0.3}
    assert kth_root(c, 2, EPS32) is None


def _steps_definition(steps: int, boundary: str) -> Any:
    data = {
        "name": "k",
        "dims": 2,
        "dtype": "float32",
        "boundary": boundary,
        "fields": ["u"],
        "output": "v",
        "steps": steps,
        "terms": [
            {"field": "u", "coefficient": 0.5},
            *(
                {"field": "u", "offset": o, "coefficient": 0.125}
                for o in ([1, 0], [-1, 0], [0, 1], [0, -1])
            ),
        ],
    }
    return parse_definition(data, "k.stencil.yaml")


def _face(shape: tuple[int, int] = (24, 28)) -> Interface:
    sizes = (ScalarArg("nx", "int32", shape[1], "x"), ScalarArg("ny", "int32", shape[0], "y"))
    return Interface("numpy.cl", "k", shape, "float32", ("u",), "v", ("u", "v", "nx", "ny"), sizes)


@pytest.mark.parametrize("steps", [2, 3])
def test_a_launch_of_several_clamped_steps_lifts_with_steps(steps: int) -> None:
    kernel = _steps_definition(steps, "clamp")

    def probe(inputs: Any, out: np.ndarray, scalars: Any) -> np.ndarray:
        return np.asarray(kernel.reference_steps(dict(inputs), out))

    got, _ = lift_with(_face(), probe, name="k")
    assert got.steps == steps
    assert sorted((t.offset, t.coefficient.factor) for t in got.terms) == sorted(
        (t.offset, t.coefficient.factor) for t in kernel.terms
    )


def test_the_composite_of_steps_that_clamps_once_stays_one_step() -> None:
    """A 5x5 kernel whose weights are the square of a 3x3 stencil, but clamped once at
    the edges (a blur, not two steps): lifted as one step of the 5x5 stencil."""
    two = _steps_definition(2, "clamp")
    square = power({tuple(reversed(t.offset[:2])): t.coefficient.factor for t in two.terms}, 2)
    data = two.to_dict()
    data["steps"] = 1
    data["terms"] = [
        {"field": "u", "offset": list(reversed(o)), "coefficient": w} for o, w in square.items()
    ]
    once = parse_definition(data, "k.stencil.yaml")

    def probe(inputs: Any, out: np.ndarray, scalars: Any) -> np.ndarray:
        return np.asarray(once.reference(dict(inputs), out))

    got, _ = lift_with(_face(), probe, name="k")
    assert got.steps == 1 and len(got.terms) == len(square)


@pytest.mark.opencl
@pytest.mark.slow
def test_several_steps_per_launch_lift_tune_and_export(tmp_path: Any, gtune_here: Cli) -> None:
    """The corpus kernel of two steps per launch: lifted with steps: 2 (the command
    says so), tuned against its original, and exported with the launches that replace
    one of the original; the example checks it against the original on fresh data."""

    import yaml

    from tests.conftest import ROOT, run_tuned_example

    entry = yaml.safe_load((ROOT / "stencils/plain/manifest.yaml").read_text())["kernels"][
        "smooth_2steps"
    ]
    out = tmp_path / "two.stencil.yaml"
    plain = str(ROOT / "stencils/plain" / entry["source"])
    done = gtune_here("lift", plain, "--size", entry["size"], *entry["flags"], "-o", str(out))
    assert done.returncode == 0, done.stderr
    assert "is 2 time steps of this 5-point stencil" in done.stderr
    db = tmp_path / "r.db"
    ran = gtune_here("run", str(out), "--size", "64x32", "--budget", "4", db=db)
    assert ran.returncode == 0, ran.stderr
    assert "over the original" in ran.stdout + ran.stderr
    exported = gtune_here("export", str(out), "--size", "64x32", "-o", str(tmp_path / "t"), db=db)
    assert exported.returncode == 0, exported.stderr
    assert "time steps" in exported.stderr
    tuned = tmp_path / "t" / "two_tuned.json"
    for extra in ([], ["--size", "128x64"]):
        check = run_tuned_example(tuned, "--original", str(out), *extra)
        assert check.returncode == 0, check.stdout + check.stderr
        assert "v: max |tuned - original|" in check.stdout and "(ok)" in check.stdout

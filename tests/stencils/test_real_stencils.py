"""The real stencils in ``stencils/``: in sync with the generator, and verified."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from gtune.description import load_kernel
from gtune.measure import OpenCLEvaluator, Status
from gtune.stencils.real import REAL, write_real

# the rest of the suite builds PoCL kernels unoptimised (tests/conftest.py); the real
# stencils are built as a user's are
pytestmark = pytest.mark.usefixtures("pocl_optimised")

STENCILS = Path(__file__).resolve().parents[2] / "stencils"
ALL = sorted(p.stem for p in STENCILS.glob("*.yaml"))
# the rendered descriptions (NAME.yaml); their definitions (NAME.stencil.yaml) render the
# same template code (test_rendered_stencils_are_up_to_date) under the user's kernel and
# array names, and test_definition_opencl verifies them in every technique
DESCRIPTIONS = [n for n in ALL if not n.endswith(".stencil")]


def test_every_required_stencil_is_there() -> None:
    assert {"heat3d", "box27", "laplacian4", "jacobi2d", "blur5", "life", "hotspot"} <= set(ALL)


def test_rendered_stencils_are_up_to_date(tmp_path: Path) -> None:
    """``stencils/*.cl|yaml`` rendered from the template equal a fresh rendering."""
    for path in write_real(tmp_path):
        assert path.read_text() == (STENCILS / path.name).read_text(), (
            f"{path.name} is stale: rewrite with gtune.stencils.real.write_real"
        )
    assert set(REAL) <= set(ALL)


def _small(name: str) -> dict[str, int]:
    sizes = load_kernel(STENCILS / f"{name}.yaml").sizes
    return {n: 32 if n == "NX" else 16 for n in sizes}


@pytest.mark.opencl
@pytest.mark.usefixtures("shared_workers")
@pytest.mark.parametrize("name", DESCRIPTIONS)
def test_default_and_one_tuned_config_verify(name: str) -> None:
    kernel = load_kernel(STENCILS / f"{name}.yaml", sizes=_small(name))
    default = kernel.default_config()
    assert default is not None, "every real stencil needs defaults"
    assert kernel.parameters, "every real stencil needs tunable parameters"
    configs = [default, {**default, "WX": 8, "WY": 2, "CX": 2, "CY": 2}]
    if "LOCAL" in default:
        configs.append({**configs[1], "LOCAL": 1})
    if "STREAM" in default:
        stream = {**configs[1], "STREAM": 1, "ZC": 4, "BX": 2, "WY": 1}
        if "NZ" not in kernel.sizes:  # streaming along y walks the rows itself: CY = 1
            stream["CY"] = 1
        configs.append(stream)
    assert os.environ.get("POCL_EXTRA_BUILD_FLAGS") != "-cl-opt-disable"
    evaluator = OpenCLEvaluator(kernel, runs=1)
    try:
        for cfg in configs:
            result = evaluator.evaluate(cfg)
            assert result.status is Status.OK, (name, cfg, result.message)
    finally:
        evaluator.close()

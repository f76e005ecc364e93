"""benchmarks/spec_replay.py reads recorded H100 stores written by older spaces: a result
recorded before the space gained a parameter takes the kernel's default for it."""

from __future__ import annotations

import dataclasses
import importlib.util
import sys
from pathlib import Path
from typing import Any

from tests.rawdata import raw

ROOT = Path(__file__).resolve().parents[2]


def _script() -> Any:
    """benchmarks/spec_replay.py as a module (benchmarks/ is not a package)."""
    spec = importlib.util.spec_from_file_location(
        "spec_replay", ROOT / "benchmarks" / "spec_replay.py"
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["spec_replay"] = module  # dataclasses look their module up
    spec.loader.exec_module(module)
    return module


spec_replay = _script()


def test_results_from_before_2d_streaming_take_the_kernels_default(tmp_path: Path) -> None:
    case = next(
        c
        for c in spec_replay.default_cases()
        if c.name == "jacobi2d" and c.technique == "global" and c.sizes.get("NX") == 8192
    )
    # the recorded store, where the tests keep it (tests/rawdata.py)
    case = dataclasses.replace(case, store=raw(case.store))
    kernel = spec_replay.kernel_of(case, tmp_path)
    params = kernel.parameter_names
    default = kernel.default_config()
    assert default is not None and {"STREAM", "ZC"} <= set(params)
    # the store predates 2D streaming: its configurations have neither STREAM nor ZC
    assert spec_replay.recorded(case, tmp_path, params) == []
    results = spec_replay.recorded(case, tmp_path, params, default)
    assert len(results) > 100
    for r in results:
        assert set(r.config) == set(params)
        assert r.config["STREAM"] == default["STREAM"] and r.config["ZC"] == default["ZC"]
    # every other value is the one recorded: the fastest result is a real measurement
    best = min((r for r in results if r.ok), key=lambda r: r.objective)
    assert 100e-6 < best.objective < 1e-3

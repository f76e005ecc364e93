"""``benchmarks/bound.py``'s arithmetic: the DRAM, issue and pipe floors of a made-up
kernel and its class (pure: no compiler, no device)."""

from __future__ import annotations

import pytest

from tests.conftest import ROOT, load_script

bound = load_script(ROOT / "benchmarks" / "bound.py")
SECOND = 132 * 1.98e9  # outputs whose one clock per output per SM takes a second


def test_store_conversion_calls_count_one_cvt_a_lane() -> None:
    counts = {"fma.rn.f32": 9, "st.param.v4.f32": 1, "ld.param.v4.b8": 1, "ld.param.u64": 2}
    assert bound.nvidia_counts(counts) == {
        "fma.rn.f32": 9,
        bound.STORE_CVT: 4,
        "ld.param.u64": 2,
    }


def test_clocks_by_pipe_and_float64_at_half_rate() -> None:
    counts = {"fma.rn.f32": 8, "fma.rn.f64": 4, "add.s32": 4, bound.STORE_CVT: 4, "mov.u32": 4}
    c = bound.clocks(counts, 4)
    assert c["float"] == pytest.approx(2 / 128)
    assert c["double"] == pytest.approx(1 / 64)
    assert c["integer"] == pytest.approx(1 / 64)
    assert c["conversion"] == pytest.approx(1 / 16)
    assert c["issue"] == pytest.approx(24 / 4 / 128)


def test_floors_of_a_made_up_kernel() -> None:
    clocks = {"float": 0.1, "double": 0.0, "integer": 0.2, "conversion": 0.0, "issue": 0.25}
    # 2000 GB at a 4000 GB/s copy: half a second of DRAM
    f = bound.floors(clocks, round(SECOND), 2000e9, 4000.0)
    assert f["dram_s"] == pytest.approx(0.5)
    assert f["issue_s"] == pytest.approx(0.25)
    assert (f["pipe"], f["pipe_s"]) == ("integer", pytest.approx(0.2))
    assert bound.classify(f, 1.5) == "memory"  # 0.5 >= 1.5 x 0.25
    assert bound.classify(f, 2.5) == "mixed"
    assert bound.classify({**f, "dram_s": 0.22}, 1.5) == "issue"
    assert bound.classify({**f, "dram_s": 0.18, "issue_s": 0.1}, 1.5) == "integer"


def test_the_issue_floor_is_instructions_over_the_schedulers_lanes() -> None:
    # 20 instructions an output, 8192^2 outputs: 20 x 67.1 M / (132 x 128 x 1.98 GHz)
    clocks = {"float": 0.0, "double": 0.0, "integer": 0.0, "conversion": 0.0, "issue": 20 / 128}
    f = bound.floors(clocks, 8192 * 8192, 1.0, 1.0)
    assert f["issue_s"] == pytest.approx(20 * 8192**2 / (132 * 4 * 32 * 1.98e9))
    assert f["issue_s"] * 1e6 == pytest.approx(40.1, abs=0.05)

"""``OpenCLEvaluator.run_once``'s sweep: a kernel the host launches once per plane
(``stencils/plain/heat_planes.cl``) run plane by plane in one call to its worker, the
arrays in and the outputs back once; and ``benchmarks/lift_corpus.py``'s plain arm of
such a kernel timed at its middle plane, its times multiplied by the planes."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest
import yaml

from gtune.exceptions import GtuneError
from tests.conftest import ROOT, load_script

MANIFEST = yaml.safe_load((ROOT / "stencils" / "plain" / "manifest.yaml").read_text())["kernels"]
ENTRY = MANIFEST["heat_planes"]
corpus = load_script(ROOT / "benchmarks" / "lift_corpus.py")


@pytest.fixture(scope="module")
def device() -> Any:
    from gtune.measure import select_device

    return select_device(None)


def _evaluator(size: str, device: Any) -> tuple[Any, Any]:
    from gtune.measure.opencl_evaluator import OpenCLEvaluator

    kernel = corpus.plain(ENTRY, size)
    return kernel, OpenCLEvaluator(kernel, device, verify=False, compile_workers=0)


def _heat(inp: np.ndarray, out: np.ndarray) -> np.ndarray:
    """heat_planes.cl's every plane in numpy: the interior written, the rest kept."""
    c0, c1 = np.float32(0.4), np.float32(0.1)
    expected = out.copy()
    mid = inp[1:-1, 1:-1, 1:-1]
    around = (
        inp[1:-1, 1:-1, :-2]
        + inp[1:-1, 1:-1, 2:]
        + inp[1:-1, :-2, 1:-1]
        + inp[1:-1, 2:, 1:-1]
        + inp[:-2, 1:-1, 1:-1]
        + inp[2:, 1:-1, 1:-1]
    )
    expected[1:-1, 1:-1, 1:-1] = c0 * mid + c1 * around
    return expected


@pytest.mark.opencl
@pytest.mark.parametrize("size", [ENTRY["size"], "64x48x40"])
def test_a_sweep_computes_what_one_launch_per_plane_does(size: str, device: Any) -> None:
    from gtune.stencils.lift import shipped_config

    kernel, evaluator = _evaluator(size, device)
    nx, ny, nz = (int(v) for v in size.split("x"))
    rng = np.random.default_rng(48)
    arrays = {  # `out` random too: the planes a launch leaves alone keep it
        "in": rng.random((nz, ny, nx), dtype=np.float32),
        "out": rng.random((nz, ny, nx), dtype=np.float32),
    }
    config = shipped_config(kernel)
    try:
        looped: dict[str, np.ndarray] = {}
        for k in range(nz):  # what lifting did before: one call to the worker a plane
            looped = evaluator.run_once(config, arrays if k == 0 else {}, {"k": k})
        swept = evaluator.run_once(config, arrays, sweep=("k", nz))
        again = evaluator.run_once(config, arrays, {"k": 0}, sweep=("k", nz))
    finally:
        evaluator.close()
    assert set(swept) == set(looped) == {"out"}
    assert np.array_equal(swept["out"], looped["out"])
    assert np.array_equal(again["out"], swept["out"])  # the sweep sets k, whatever given
    np.testing.assert_allclose(swept["out"], _heat(arrays["in"], arrays["out"]), rtol=1e-5)


@pytest.mark.opencl
@pytest.mark.parametrize(
    ("sweep", "why"),
    [
        (("kk", 12), r"cannot sweep 'kk': .* no integer scalar .* \(it has: nx, ny, nz, k\)"),
        (("c0", 12), "cannot sweep 'c0'"),  # a float argument is no plane index
        (("k", 0), "needs at least one launch"),
    ],
)
def test_a_sweep_of_no_plane_index_is_an_error(
    sweep: tuple[str, int], why: str, device: Any
) -> None:
    _, evaluator = _evaluator(ENTRY["size"], device)
    try:
        with pytest.raises(GtuneError, match=why):
            evaluator.run_once({"WX": 8, "WY": 4}, {}, sweep=sweep)
        swept = evaluator.run_once({"WX": 8, "WY": 4}, {}, sweep=("k", 12))  # still runs
    finally:
        evaluator.close()
    assert swept["out"].shape == (12, 20, 24)


@pytest.mark.opencl
def test_a_launch_failure_in_a_sweep_says_at_which_plane(device: Any) -> None:
    _, evaluator = _evaluator(ENTRY["size"], device)
    try:
        with pytest.raises(GtuneError, match="launch_failed") as caught:
            evaluator.run_once({"WX": 7, "WY": 3}, {}, sweep=("k", 12))  # 7 does not divide 24
    finally:
        evaluator.close()
    assert "INVALID_WORK_GROUP_SIZE (launch 1 of 12, k=0)" in caught.value.message


@pytest.mark.opencl
def test_against_original_runs_the_planes_in_one_round_trip(
    device: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Verifying a lifted plane kernel against its original at 96x96x96 asks its worker
    to run once (it asked once per plane, each answer every written array)."""
    from gtune.description import load_kernel
    from gtune.measure.lifting import against_original, lift_kernel
    from gtune.measure.opencl_evaluator import Worker
    from gtune.stencils.definition import load_definition

    out = tmp_path / "heat_planes.stencil.yaml"
    defn, _ = lift_kernel(
        corpus.plain(ENTRY, ENTRY["size"]),
        device=device,
        output=out,
        flags=ENTRY["flags"],
        plane_index=ENTRY["plane_index"],
    )
    out.write_text(defn.to_yaml())
    verbs: list[str] = []
    call = Worker.call

    def counted(self: Worker, verb: str, payload: Any, timeout_s: float) -> Any:
        verbs.append(verb)
        return call(self, verb, payload, timeout_s)

    monkeypatch.setattr(Worker, "call", counted)  # a spy: the real worker answers
    size = "96x96x96"
    checked = against_original(
        load_kernel(out, corpus.sizes_of(size)),
        load_definition(out),
        corpus.plain(ENTRY, size),
        device,
        tmp_path,
    )
    assert verbs.count("run") == 1, verbs
    recorded = np.load(str(checked.reference.args["file"]))
    assert recorded.shape == (96, 96, 96)
    assert np.count_nonzero(recorded[1:-1, 1:-1, 1:-1]) > 0  # every interior plane written


def test_the_plain_arm_of_a_plane_kernel_runs_at_the_middle_plane() -> None:
    flags, planes = corpus.plane_bench(ENTRY, "512x512x256")
    assert planes == 256
    i = flags.index("k=128")
    assert flags[i - 1] == "--scalar" and "k=0" not in flags
    assert [f for f in flags if f != "k=128"] == [f for f in ENTRY["flags"] if f != "k=0"]
    other = MANIFEST["jacobi3d_planes"]  # its index is kk
    flags, planes = corpus.plane_bench(other, other["bench"])
    assert planes == 256 and "kk=128" in flags and "kk=0" not in flags
    assert corpus.plane_bench(MANIFEST["star7"], "64x64x64") is None


@pytest.mark.parametrize(
    ("flags", "expected"),
    [
        (["--scalar=k=0", "--scalar", "c0=0.4"], ["--scalar=k=5", "--scalar", "c0=0.4"]),
        (["--scalar", "c0=0.4"], ["--scalar", "c0=0.4", "--scalar", "k=5"]),  # added
        (["--scalar", "kk=0", "--scalar", "k=3"], ["--scalar", "kk=0", "--scalar", "k=5"]),
    ],
)
def test_the_middle_plane_replaces_the_flag_or_is_added(
    flags: list[str], expected: list[str]
) -> None:
    assert corpus.plane_bench({"plane_index": "k=z", "flags": flags}, "8x8x10") == (
        expected,
        10,
    )


def test_a_plane_kernels_times_are_per_sweep() -> None:
    times = {"original": 2e-6, "plain": 1e-6, "lifted": 3e-4}
    swept = corpus.per_sweep(times, 512)
    assert swept == pytest.approx({"original": 1.024e-3, "plain": 5.12e-4, "lifted": 3e-4})
    assert times["plain"] == 1e-6  # the measured times are kept as they were

"""Verification per array and guard zones, for real on OpenCL: an array whose check
cannot fail no longer switches off the others, and reads and writes past an array's
end are caught, naming the array."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from gtune.measure import OpenCLEvaluator, Status
from gtune.plain import plain_kernel

pytestmark = [pytest.mark.opencl, pytest.mark.usefixtures("shared_workers")]

CORPUS = Path(__file__).parents[1] / "data" / "corpus"
SMOOTH: dict[str, Any] = {
    "sizes": [64, 8],
    "params": {"VW": [1, 2, 4]},
    "global_size": ["NX / VW", "NY"],
    "scalars": {"debug": "0"},
}


def _evaluate(name: str, configs: list[dict[str, int]], **kwargs: Any) -> tuple[Any, list[Any]]:
    kernel = plain_kernel(CORPUS / name, **kwargs)
    with OpenCLEvaluator(kernel, None, runs=1, compile_workers=0) as ev:
        results = [ev.evaluate(c) for c in configs]
        return ev, results


@pytest.mark.parametrize("name", ["smooth_vec.cl", "smooth_vec_wrong.cl"])
def test_an_unwritten_array_leaves_the_others_verified(name: str):
    configs = [{"WX": 4, "WY": 2, "VW": vw} for vw in (1, 2, 4)]
    ev, results = _evaluate(name, configs, **SMOOTH)
    # dbg is written only when debug != 0, and in (handed to a helper) is never
    # changed: neither can be checked, but out still is
    assert ev.unverified is None
    text = ev.verification
    assert text.startswith("verified against the reference configuration's output")
    assert ": out;" in text and "not checked:" in text and "dbg, left as initialised" in text
    assert all(r.extra["verification"] == text for r in results)
    statuses = [r.status for r in results]
    if name == "smooth_vec.cl":
        assert statuses == [Status.OK] * 3
    else:  # the vector-width-4 variant stores a wrong lane
        assert statuses == [Status.OK, Status.OK, Status.WRONG_RESULT]
        assert "differ from the reference" in results[2].message


def test_an_input_read_past_its_end_is_caught():
    # the padded blur without --array in=NX+2,NY+2: every row reads past its end
    ev, results = _evaluate(
        "blur_padded.cl", [{"WX": 8, "WY": 2}, {"WX": 1, "WY": 1}], sizes=[32, 16]
    )
    assert ev.unverified is not None and "reads past the end" in ev.unverified
    assert "'in'" in ev.unverified
    for r in results:
        assert r.status is Status.WRONG_RESULT
        assert "reads past the end (or before the start) of 'in'" in r.message
    # with its true shape it verifies
    ev, results = _evaluate(
        "blur_padded.cl", [{"WX": 8, "WY": 2}], sizes=[32, 16], arrays={"in": ["NX+2", "NY+2"]}
    )
    assert ev.unverified is None and results[0].status is Status.OK


def test_a_read_past_the_end_shows_as_nan_against_a_numpy_reference(tmp_path: Path):
    ref = tmp_path / "ref.py"
    ref.write_text(
        "import numpy as np\n"
        "def shift(arrays, sizes, scalars):\n"
        "    out = arrays['out'].copy()\n"
        "    out[:-1] = arrays['in'][1:]\n"
        "    out[-1] = 0.0\n"
        "    return {'out': out}\n"
    )
    # a kernel reading in[i + 1] for every i: the last one reads the guard zone (NaN)
    src = tmp_path / "shift_all.cl"
    src.write_text(
        "__kernel void shift(__global const float* in, __global float* out, int n) {\n"
        "    int i = get_global_id(0);\n"
        "    if (i < n) out[i] = i == n - 1 ? 0.0f * in[i + 1] : in[i + 1];\n"
        "}\n"
    )
    kernel = plain_kernel(src, sizes=[256], scalars={"n": "NX"}, reference=f"{ref}:shift")
    with OpenCLEvaluator(kernel, None, runs=1, compile_workers=0) as ev:
        result = ev.evaluate({"WX": 16})
        assert ev.verification == "verified against the numpy reference shift(): out"
    assert result.status is Status.WRONG_RESULT
    assert "NaN where the reference has none (1 in 'out')" in result.message


def test_a_write_past_the_end_is_caught_naming_the_array():
    ev, results = _evaluate(
        "shift_wrong.cl", [{"WX": 16}, {"WX": 64}], sizes=[256], scalars={"n": "NX"}
    )
    assert ev.unverified is not None and "writes past the end of 'out'" in ev.unverified
    for r in results:
        assert r.status is Status.WRONG_RESULT
        assert r.message.startswith("writes past the end of 'out'")
    ev, results = _evaluate("shift.cl", [{"WX": 16}], sizes=[256], scalars={"n": "NX"})
    assert ev.unverified is None and results[0].status is Status.OK


def test_a_run_where_nothing_ran_correctly_says_why():
    from gtune import tune
    from gtune.budget import Budget

    kernel = plain_kernel(CORPUS / "shift_wrong.cl", sizes=[256], scalars={"n": "NX"})
    from gtune.measure import select_device

    report = tune(
        kernel, device=select_device(None), budget=Budget.parse("4"), compile_workers=0, runs=1
    )
    assert report.best_result is None
    assert report.status_counts == {"wrong_result": report.evaluations}
    note = next(n for n in report.notes if n.startswith("no configuration ran correctly"))
    assert f"({report.evaluations} wrong_result)" in note
    assert "the first: wrong_result: writes past the end of 'out'" in note
    assert not any("likelier fault" in n for n in report.notes)  # the kernel's, named


def test_a_reference_every_configuration_disagrees_with_is_suspected(tmp_path: Path):
    from gtune import tune
    from gtune.budget import Budget
    from gtune.measure import select_device

    # a correct 5-point Jacobi sweep against a reference that only copies its input
    (tmp_path / "copy_ref.py").write_text(
        "def copy(arrays, sizes, scalars):\n    return {'out': arrays['in'].copy()}\n"
    )
    source = tmp_path / "jacobi.cl"
    source.write_text((CORPUS / "jacobi_nonconst.cl").read_text())
    kernel = plain_kernel(source, sizes=[32, 16], reference=f"{tmp_path}/copy_ref.py:copy")
    report = tune(
        kernel, device=select_device(None), budget=Budget.parse("3"), compile_workers=0, runs=1
    )
    assert report.status_counts == {"wrong_result": report.evaluations} and report.evaluations > 1
    assert any("the reference is the likelier fault" in n for n in report.notes)


def test_run_plain_runs_once_on_given_inputs():
    import numpy as np

    from gtune.exceptions import GtuneError
    from gtune.measure import run_plain

    kernel = plain_kernel(CORPUS / "shift.cl", sizes=[64], scalars={"n": "NX"})
    given = np.arange(64, dtype=np.float32)
    out = run_plain(kernel, {"in": given, "out": np.full(64, -1.0)}, {"WX": 8})
    assert np.array_equal(out["in"], given)
    assert np.array_equal(out["out"][:-1], given[1:]) and out["out"][-1] == -1.0
    with pytest.raises(GtuneError, match="writes past the end of 'out'"):
        run_plain(plain_kernel(CORPUS / "shift_wrong.cl", sizes=[64], scalars={"n": "NX"}), {})
    with pytest.raises(GtuneError, match="has shape"):
        run_plain(kernel, {"in": np.zeros(3)})

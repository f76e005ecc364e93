"""Real OpenCL runs on the default device (PoCL in CI): every status is provoked for real."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from gtune.description import load_kernel
from gtune.measure import OpenCLEvaluator, Status
from gtune.measure.opencl_evaluator import default_compile_workers
from gtune.processes import usable_cores

# The tests of statuses and outputs share the module's worker processes
# (``shared_workers``: a fresh interpreter, pyopencl and a driver context each
# otherwise); the tests of starting, restarting and pipelining workers make their own.
pytestmark = pytest.mark.opencl

GOOD = {"WX": 8, "WY": 4, "WZ": 1}


def _kernel(kernel_copy, option: str | None = None, reference: str | None = None):
    def edit(text: str) -> str:
        if option:
            text += f"build_options: [{option}]\n"
        if reference:
            text = text.replace('reference: {python: "naive7_ref.py:reference"}', reference)
        return text

    return load_kernel(kernel_copy("naive7", edit))


def _watching_reference(folder, fail: bool) -> str:
    """A reference that notes, on its first run, the measuring workers its parent (the
    evaluator's process) has started by then."""
    from tests.conftest import DATA

    plain = (DATA / "naive7_ref.py").read_text().replace("def reference(", "def plain(")
    (folder / "watching_ref.py").write_text(
        plain + "import os\n"
        "from pathlib import Path\n"
        "def reference(arrays, sizes, scalars):\n"
        "    out = plain(arrays, sizes, scalars)\n"
        f"    seen = Path({str(folder / 'seen')!r})\n"
        "    if not seen.exists():  # the first run (the guard may run it again)\n"
        "        workers = []\n"
        "        for proc in Path('/proc').iterdir():\n"
        "            try:\n"
        "                ppid = int((proc / 'stat').read_text().rsplit(')', 1)[1].split()[1])\n"
        "                cmd = (proc / 'cmdline').read_bytes()\n"
        "            except (OSError, ValueError, IndexError):\n"
        "                continue\n"
        "            if ppid == os.getppid() and b'gtune.measure._worker' in cmd:\n"
        "                workers.append(proc.name)\n"
        "        seen.write_text(' '.join(workers))\n"
        + ("    raise RuntimeError('the reference fails')\n" if fail else "")
        + "    return out\n"
    )
    return 'reference: {python: "watching_ref.py:reference"}'


def _workers_of_this_process() -> list[int]:
    import os

    from tests.procs import alive, cmdline, descendants

    return [
        pid
        for pid in descendants(os.getpid())
        if "gtune.measure._worker" in cmdline(pid) and alive(pid)
    ]


def test_the_measuring_worker_starts_while_the_reference_runs(kernel_copy, tmp_path):
    """The worker (a fresh interpreter loading the OpenCL driver) is started before the
    reference computes the expected outputs, not after; it still measures and
    verifies, and a failing reference leaves no worker behind. (The workers this
    process holds already, the session's shared ones, are not the evaluator's.)"""
    from gtune.exceptions import GtuneError

    shared = {str(pid) for pid in _workers_of_this_process()}
    kernel = _kernel(kernel_copy, reference=_watching_reference(tmp_path, fail=False))
    with OpenCLEvaluator(kernel, compile_workers=0) as ev:
        seen = set((tmp_path / "seen").read_text().split()) - shared
        assert seen == {str(ev._measure.process.pid)}
        assert ev.evaluate(GOOD).status is Status.OK
        assert ev.evaluate({**GOOD, "WY": 2}).status is Status.OK
    assert {str(pid) for pid in _workers_of_this_process()} <= shared

    (tmp_path / "seen").unlink()
    failing = _kernel(kernel_copy, reference=_watching_reference(tmp_path, fail=True))
    with pytest.raises(GtuneError, match="the reference fails"):
        OpenCLEvaluator(failing, compile_workers=0)
    assert set((tmp_path / "seen").read_text().split()) - shared  # a worker was started
    assert {str(pid) for pid in _workers_of_this_process()} <= shared


@pytest.mark.usefixtures("shared_workers")
def test_ok_is_timed_and_verified(data_dir):
    kernel = load_kernel(data_dir / "naive7.cl")
    with OpenCLEvaluator(kernel, runs=3, compile_workers=0) as ev:
        r = ev.evaluate(GOOD)
        out = ev.output("out")
    assert r.status is Status.OK, r.message
    assert len(r.times_s) == 3 and all(t > 0 for t in r.times_s)
    assert r.compile_s > 0
    assert r.min_s <= r.median_s <= max(r.times_s)
    # the output really is the stencil: compare independently of the evaluator
    from gtune.measure.problem import initial_arrays, scalar_values
    from tests.data.naive7_ref import reference

    arrays = initial_arrays(kernel)
    want = reference(arrays, dict(kernel.sizes), scalar_values(kernel))["out"]
    np.testing.assert_allclose(out, want, rtol=1e-5, atol=1e-6)


@pytest.mark.usefixtures("shared_workers")
def test_build_failure_keeps_the_log(kernel_copy):
    """A configuration that does not build (the kernel as such does) is build_failed."""
    cl = kernel_copy("naive7")
    cl.write_text("#if WX == 4\n#error no WX of 4\n#endif\n" + cl.read_text())
    with OpenCLEvaluator(load_kernel(cl), compile_workers=0) as ev:
        assert ev.evaluate(GOOD).ok
        r = ev.evaluate({**GOOD, "WX": 4})
    assert r.status is Status.BUILD_FAILED
    assert r.error_code == -11
    assert "error" in r.message.lower()


@pytest.mark.usefixtures("shared_workers")
def test_invalid_work_group_is_launch_failed(data_dir):
    with OpenCLEvaluator(load_kernel(data_dir / "naive7.cl"), compile_workers=0) as ev:
        r = ev.evaluate({"WX": 8, "WY": 4, "WZ": 3})  # 8 is not a multiple of 3
    assert r.status is Status.LAUNCH_FAILED
    assert r.error_code == -54


@pytest.mark.usefixtures("shared_workers")
def test_wrong_kernel_is_wrong_result(kernel_copy):
    with OpenCLEvaluator(_kernel(kernel_copy, "-DWRONG"), compile_workers=0) as ev:
        r = ev.evaluate(GOOD)
    assert r.status is Status.WRONG_RESULT
    assert r.max_error is not None and r.max_error > 1e-3
    assert len(r.times_s) >= 3  # timing is kept even for wrong results


@pytest.mark.usefixtures("shared_workers")
def test_a_reference_the_worker_lacks_leaves_results_unverified(kernel_copy):
    """A compared array whose reference output never reached the measuring worker: the
    worker cannot compare it, so its results say they are unverified (a wrong kernel
    then passes, and says why), never verified."""
    with OpenCLEvaluator(_kernel(kernel_copy, "-DWRONG"), compile_workers=0) as ev:
        assert ev.verify and not ev.unverified
        for ref in ev.data_dir.glob("ref_*.npy"):
            ref.unlink()
        ev._apply_checks(ev.checks, "the numpy reference")
        r = ev.evaluate(GOOD)
    assert r.status is Status.OK, r.message
    assert "no reference output of out reached the measuring worker" in str(
        r.extra.get("unverified")
    ), r.extra


@pytest.mark.parametrize("compile_workers", [0, 1], ids=["measuring worker", "compile worker"])
def test_options_given_in_memory_reach_the_build(data_dir, compile_workers):
    """A kernel whose build options were changed in memory (dataclasses.replace, as
    benchmarks/template_ab.py builds a variant) is built with them by whichever process
    builds: the measuring worker rebuilds the kernel from plain data."""
    kernel = load_kernel(data_dir / "naive7.cl")
    wrong = dataclasses.replace(kernel, build_options=(*kernel.build_options, "-DWRONG"))
    with OpenCLEvaluator(wrong, compile_workers=compile_workers) as ev:
        assert ev.evaluate(GOOD).status is Status.WRONG_RESULT
    with OpenCLEvaluator(kernel, compile_workers=compile_workers) as ev:
        assert ev.evaluate(GOOD).status is Status.OK


@pytest.mark.usefixtures("shared_workers")
def test_reference_from_a_configuration(kernel_copy):
    kernel = _kernel(kernel_copy, reference="reference: {config: {WX: 1, WY: 1, WZ: 1}}")
    with OpenCLEvaluator(kernel, compile_workers=0) as ev:
        assert ev.evaluate(GOOD).status is Status.OK


def test_hang_times_out_and_evaluation_goes_on(kernel_copy, data_dir):
    kernel = _kernel(kernel_copy, "-DHANG")
    with OpenCLEvaluator(kernel, compile_workers=0, timeout_s=4) as ev:
        r = ev.evaluate(GOOD)
        assert r.status is Status.TIMEOUT
        assert ev.restarts == 1
        # the restarted worker still measures (a launch error, then a timeout again)
        assert ev.evaluate({"WX": 8, "WY": 4, "WZ": 3}).status is Status.LAUNCH_FAILED


def test_crash_is_recorded_and_worker_restarted(kernel_copy):
    with OpenCLEvaluator(_kernel(kernel_copy, "-DCRASH"), compile_workers=0, timeout_s=20) as ev:
        r = ev.evaluate(GOOD)
        assert r.status is Status.CRASHED, r
        assert ev.restarts == 1
        assert ev.evaluate({"WX": 8, "WY": 4, "WZ": 3}).status is Status.LAUNCH_FAILED


def test_pipelined_batch_matches_one_by_one(data_dir):
    kernel = load_kernel(data_dir / "naive7.cl")
    configs = [{"WX": x, "WY": y, "WZ": 1} for x in (2, 8, 32) for y in (1, 3, 4)]
    with OpenCLEvaluator(kernel, compile_workers=2) as ev:
        batch = list(ev.evaluate_batch(configs))
    assert [r.config for r in batch] == configs
    expected = [Status.LAUNCH_FAILED if c["WY"] == 3 else Status.OK for c in configs]
    assert [r.status for r in batch] == expected
    assert all(r.compile_s > 0 for r in batch if r.ok)


class _Watched(OpenCLEvaluator):
    """The real evaluator, noting for each configuration it times whether a compile
    worker was building at that moment."""

    building_while_timed: list[bool]

    def _call_measure(self, payload):  # type: ignore[no-untyped-def]
        self.building_while_timed.append(any(w.task is not None for w in self._compilers))
        return super()._call_measure(payload)


@pytest.mark.parametrize("alone", [True, False])
def test_measure_alone_times_no_configuration_during_a_build(data_dir, alone):
    """On a CPU device a build would take cores from the kernel being timed: measuring
    alone (the default there) times a configuration only while no build runs."""
    kernel = load_kernel(data_dir / "naive7.cl")
    configs = [{"WX": x, "WY": y, "WZ": 1} for x in (2, 8, 32) for y in (1, 2)]
    with _Watched(kernel, compile_workers=1, measure_alone=alone) as ev:
        ev.building_while_timed = []
        batch = list(ev.evaluate_batch(configs))
    assert [r.config for r in batch] == configs and all(r.ok for r in batch)
    assert len(ev.building_while_timed) == len(configs)
    # one compile worker builds the next configuration while this one is timed, unless
    # measuring alone
    assert any(ev.building_while_timed) is not alone


def test_measure_alone_is_the_default_on_cpu_devices(data_dir):
    with OpenCLEvaluator(load_kernel(data_dir / "naive7.cl"), compile_workers=0) as ev:
        assert ev.measure_alone == ("CPU" in ev.device.type.upper())


@pytest.mark.parametrize("alone", [True, False])
def test_a_single_compile_worker_measured_alone_is_left_out(data_dir, alone):
    """Measuring alone, one compile worker's builds overlap nothing: by default the
    measuring worker builds itself then (no binary fetched and handed over); a number
    asked for is kept, and with measure_alone off the helpers run as before."""
    kernel = load_kernel(data_dir / "naive7.cl")
    with OpenCLEvaluator(kernel, measure_alone=alone) as ev:
        helpers = default_compile_workers()
        assert ev.compile_workers == (0 if alone and helpers < 2 else helpers)
        configs = [{"WX": x, "WY": 1, "WZ": 1} for x in (4, 16)]
        batch = list(ev.evaluate_batch(configs))
        assert [r.config for r in batch] == configs and all(r.ok for r in batch)
        assert all(r.compile_s > 0 for r in batch)
    with OpenCLEvaluator(kernel, compile_workers=1, measure_alone=alone) as ev:
        assert ev.compile_workers == 1


def test_abandoned_batch_leaves_no_stale_builds(data_dir):
    """A batch closed early (budget, Ctrl-C) must not hand its in-flight builds to the
    next batch: each binary carries its work-group size (reqd_work_group_size), so a
    stale one would fail to launch under another configuration."""
    kernel = load_kernel(data_dir / "naive7.cl")
    first = [{"WX": x, "WY": y, "WZ": 1} for x in (1, 2, 4) for y in (1, 2)]
    second = [{"WX": x, "WY": y, "WZ": 2} for x in (8, 16) for y in (1, 2)]
    with OpenCLEvaluator(kernel, compile_workers=2) as ev:
        batch = ev.evaluate_batch(first)
        assert next(batch).status is Status.OK
        batch.close()  # abandoned with builds in flight
        results = list(ev.evaluate_batch(second))
    assert [r.config for r in results] == second
    assert all(r.status is Status.OK for r in results), [r.message for r in results]


def test_parent_never_imports_pyopencl(data_dir, tmp_path):
    """A pipelined batch (compile workers) leaves pyopencl out of the parent process."""
    import json
    import os
    import subprocess
    import sys

    from gtune.measure import select_device
    from tests.conftest import ROOT

    script = f"""
import json, sys
from gtune.device import DeviceLimits
from gtune.description import load_kernel
from gtune.measure.opencl_evaluator import OpenCLEvaluator
device = DeviceLimits.from_dict(json.loads(sys.argv[1]))
kernel = load_kernel({str(data_dir / "naive7.cl")!r})
configs = [{{"WX": x, "WY": 4, "WZ": 1}} for x in (2, 4, 8)]
with OpenCLEvaluator(kernel, device, runs=3, compile_workers=2) as ev:
    statuses = [r.status.value for r in ev.evaluate_batch(configs)]
print(json.dumps({{"statuses": statuses, "pyopencl": "pyopencl" in sys.modules}}))
"""
    device = json.dumps(select_device().to_dict())
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    proc = subprocess.run(
        [sys.executable, "-c", script, device], capture_output=True, text=True, env=env, timeout=120
    )
    assert proc.returncode == 0, proc.stderr
    out = json.loads(proc.stdout.strip().splitlines()[-1])
    assert out["statuses"] == ["ok", "ok", "ok"]
    assert out["pyopencl"] is False


DOUBLE_CL = """
#pragma OPENCL EXTENSION cl_khr_fp64 : enable
__kernel __attribute__((reqd_work_group_size(WX, 1, 1)))
void smooth(__global const double* in, __global double* out) {
    const int x = get_global_id(0);
    if (x < 1 || x >= NX - 1) return;
    out[x] = 0.25 * in[x - 1] + 0.5 * in[x] + 0.25 * in[x + 1];
#if defined(OFF) && WX > 1
    if (x == NX / 2) out[x] += OFF;  /* one element off by OFF, not in the reference */
#endif
}
"""

DOUBLE_YAML = """
kernel: smooth
problem: {NX: 4096}
arguments:
  - {name: in, role: input, shape: [NX], dtype: float64}
  - {name: out, role: output, shape: [NX], dtype: float64, init: "copy:in"}
parameters:
  WX: {pow2: [1, 64], default: 1}
launch: {global: [NX], local: [WX]}
reference: {config: {WX: 1}}
"""


def _double(tmp_path, off: str | None):
    (tmp_path / "smooth.cl").write_text(DOUBLE_CL)
    extra = f"build_options: [-DOFF={off}]\n" if off else ""
    (tmp_path / "smooth.yaml").write_text(DOUBLE_YAML + extra)
    return load_kernel(tmp_path / "smooth.cl")


@pytest.mark.usefixtures("shared_workers")
@pytest.mark.parametrize(
    ("off", "status"),
    [(None, Status.OK), ("1e-13", Status.OK), ("1e-3", Status.WRONG_RESULT)],
)
def test_float64_outputs_verified_on_the_device(tmp_path, off, status):
    """float64 outputs are compared in double precision (on the device where it has
    doubles): one element off by 1e-3 is caught, one off by 1e-13 is within tolerance."""
    with OpenCLEvaluator(_double(tmp_path, off), compile_workers=0) as ev:
        r = ev.evaluate({"WX": 32})
    assert r.status is status, r.message
    if status is Status.WRONG_RESULT:
        assert r.max_error is not None and 5e-4 < r.max_error < 2e-3


def test_compile_helpers_follow_the_cores_this_process_may_use() -> None:
    """Pinned to fewer cores (taskset, one tuning per GPU on half a host), the default
    compile helpers are those cores less one, not the machine's."""
    import subprocess
    import sys

    assert default_compile_workers() == max(0, min(usable_cores() - 1, 16))
    code = (
        "import os; os.sched_setaffinity(0, {0});"
        "import gtune.measure.opencl_evaluator as e, gtune.processes as p;"
        "print(p.usable_cores(), e.default_compile_workers())"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["1", "0"]

"""Devices are queried in a worker process: the parent never loads pyopencl, and a
driver that crashes while listing its devices gives one clear error."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from dataclasses import replace
from pathlib import Path

import pytest

from gtune.device import choose_device
from gtune.exceptions import EnvironmentProblem, InputError
from gtune.measure import _query, list_devices, select_device
from tests.conftest import ROOT


def _run_script(script: str, timeout: float) -> dict[str, object]:
    """Run ``script`` in a fresh interpreter; its last line of output, as JSON."""
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    proc = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, env=env, timeout=timeout
    )
    assert proc.returncode == 0, proc.stderr
    out: dict[str, object] = json.loads(proc.stdout.strip().splitlines()[-1])
    return out


def test_listing_devices_does_not_load_pyopencl_here() -> None:
    script = (
        "import json, sys\n"
        "from gtune.measure import list_devices, select_device\n"
        "names = [d.name for d in list_devices()]\n"
        "select_device(None)\n"
        "print(json.dumps({'n': len(names), 'pyopencl': 'pyopencl' in sys.modules}))\n"
    )
    out = _run_script(script, timeout=120)
    assert out["n"] >= 1 and out["pyopencl"] is False


@pytest.mark.opencl  # a real tuning run: kernels built and run on the device
def test_a_whole_tuning_run_never_loads_pyopencl_in_the_parent(data_dir: Path) -> None:
    script = (
        "import json, sys\n"
        "import gtune\n"
        f"report = gtune.tune({str(data_dir / 'naive7.cl')!r}, budget=4, strategy='generic', store='sqlite://')\n"
        "print(json.dumps({'measured': report.measured, 'pyopencl': 'pyopencl' in sys.modules}))\n"
    )
    out = _run_script(script, timeout=300)
    assert out["measured"] >= 1 and out["pyopencl"] is False


def test_a_driver_that_crashes_while_listing_is_one_clear_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # a hostile environment, not a stand-in: the worker's import of pyopencl crashes it
    (tmp_path / "pyopencl.py").write_text(
        "import os, signal\nos.kill(os.getpid(), signal.SIGSEGV)\n"
    )
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join([str(tmp_path), str(ROOT)]))
    with pytest.raises(EnvironmentProblem) as err:
        _query()
    assert "SIGSEGV" in err.value.message and "crashed" in err.value.hint


def test_the_worker_reports_gtune_errors_with_their_class(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    empty = tmp_path / "vendors"
    empty.mkdir()
    monkeypatch.setenv("OCL_ICD_VENDORS", str(empty))
    with pytest.raises(EnvironmentProblem) as err:
        _query()
    assert err.value.hint  # says how to install a driver


def test_choosing_by_index_identity_name_platform_alias_and_type() -> None:
    real = list_devices()[0]
    gpu = replace(
        real,
        name="Some GPU 9000",
        platform="Vendor CL",
        type="GPU",
        platform_index=1,
        device_index=0,
    )
    devices = [real, gpu]
    assert choose_device(devices, None) is gpu  # the first GPU by default
    assert choose_device(devices, real.selector) is real
    assert choose_device(devices, "9000") is gpu
    assert choose_device(devices, "gpu") is gpu
    if "portable computing language" in real.platform.lower():
        assert choose_device(devices, "pocl") is real
        assert choose_device(devices, "PoCL") is real
    with pytest.raises(InputError, match="no OpenCL device matches 'nothing'"):
        choose_device(devices, "nothing")
    with pytest.raises(InputError):
        choose_device([], None)
    assert select_device(real.selector) == real

"""The device lock: searches in several processes share a device, never timing on it at
once (gtune.measure.devlock). Real processes; the OpenCL tests run on PoCL."""

from __future__ import annotations

import itertools
import json
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from gtune.device import DeviceLimits
from gtune.exceptions import EnvironmentProblem
from gtune.measure.devlock import LOCK_DIR_ENV, LOCK_LOG_ENV, DeviceLock, lock_dir, lock_name
from tests.conftest import DATA, ROOT
from tests.space.space_helpers import h100_limits


def _limits(name: str = "NVIDIA H100", pi: int = 0, di: int = 0) -> DeviceLimits:
    return h100_limits(name=name, platform_index=pi, device_index=di)


# -- pure ---------------------------------------------------------------------------


def test_two_identical_gpus_have_two_locks_and_one_gpu_one() -> None:
    a, b = _limits(di=0), _limits(di=1)
    assert a.identity == b.identity  # same model, same driver: the selector tells them apart
    names = {lock_name(d.identity, d.selector, "node1") for d in (a, b)}
    assert len(names) == 2
    assert lock_name(a.identity, a.selector, "node1") == lock_name(a.identity, "0:0", "node1")
    # another host (a cache folder on a shared file system) has its own GPUs
    assert lock_name(a.identity, a.selector, "node2") not in names
    # another model at the same index is another device
    other = _limits("NVIDIA H200")
    assert lock_name(other.identity, other.selector, "node1") not in names
    for name in names:
        assert "/" not in name and ":" not in name and name.endswith(".lock")
        assert a.identity in name


def test_lock_folder_is_given_or_per_user(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv(LOCK_DIR_ENV, str(tmp_path / "given"))
    assert lock_dir() == tmp_path / "given"
    monkeypatch.delenv(LOCK_DIR_ENV)
    monkeypatch.setenv("XDG_RUNTIME_DIR", str(tmp_path))
    assert lock_dir() == tmp_path / "gtune"
    monkeypatch.setenv("XDG_RUNTIME_DIR", str(tmp_path / "absent"))
    monkeypatch.setenv("GTUNE_CACHE", str(tmp_path / "cache"))
    assert lock_dir() == tmp_path / "cache" / "locks"


# -- real processes, no OpenCL --------------------------------------------------------

HOLDER = """
import signal, sys, time
from pathlib import Path
# Ctrl-C as at a terminal, also where the test runs with SIGINT ignored (a background job)
signal.signal(signal.SIGINT, signal.default_int_handler)
from gtune.measure.devlock import DeviceLock
from tests.measure.test_devlock import _limits
lock = DeviceLock(_limits(), Path(sys.argv[1]))
with lock.{mode}() as _:
    print("held", flush=True)
    time.sleep(float(sys.argv[2]))
"""


def _holder(folder: Path, seconds: float, mode: str = "exclusive") -> subprocess.Popen[str]:
    proc = subprocess.Popen(
        [sys.executable, "-c", HOLDER.format(mode=mode), str(folder), str(seconds)],
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        stdout=subprocess.PIPE,
        text=True,
    )
    assert proc.stdout is not None and proc.stdout.readline().strip() == "held"
    return proc


def test_a_killed_holder_leaves_nothing_locked_and_a_wait_times_out(tmp_path: Path) -> None:
    holder = _holder(tmp_path, 60)
    lock = DeviceLock(_limits(), tmp_path)
    try:
        assert lock.busy()
        waits: list[bool] = []
        start = time.monotonic()
        with (
            pytest.raises(EnvironmentProblem, match="measured by another process"),
            lock.exclusive(0.3, waits.append),
        ):
            pass
        assert 0.25 < time.monotonic() - start < 5
        assert waits == [True]  # told it waits; never that it holds
        # a build (shared) does not start while a measurement holds the device
        with lock.shared(0.2) as held:
            assert not held
        os.kill(holder.pid, signal.SIGKILL)  # the holder dies holding the device
        holder.wait(10)
        start = time.monotonic()
        with lock.exclusive(5.0) as waited:
            assert waited < 1.0
        assert time.monotonic() - start < 1.0
        assert not lock.busy()
    finally:
        holder.kill()
        lock.close()


def test_ctrl_c_of_a_holder_and_kill_of_a_waiter_leave_nothing_locked(tmp_path: Path) -> None:
    holder = _holder(tmp_path, 60)
    waiter = subprocess.Popen(  # blocks on the lock: never prints
        [sys.executable, "-c", HOLDER.format(mode="exclusive"), str(tmp_path), "60"],
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        stdout=subprocess.PIPE,
        text=True,
    )
    lock = DeviceLock(_limits(), tmp_path)
    try:
        time.sleep(1.0)
        assert waiter.poll() is None and lock.busy()
        os.kill(waiter.pid, signal.SIGKILL)  # killed while waiting
        waiter.wait(10)
        holder.send_signal(signal.SIGINT)  # Ctrl-C while holding
        assert holder.wait(10) != 0
        with lock.exclusive(2.0) as waited:
            assert waited < 1.0
    finally:
        holder.kill()
        waiter.kill()
        lock.close()


def test_builds_share_the_device_but_not_with_a_measurement(tmp_path: Path) -> None:
    builder = _holder(tmp_path, 60, "shared")
    lock = DeviceLock(_limits(), tmp_path)
    try:
        with lock.shared(1.0) as held:  # builds side by side
            assert held
        with pytest.raises(EnvironmentProblem), lock.exclusive(0.3):  # no timing meanwhile
            pass
        builder.send_signal(signal.SIGTERM)
        builder.wait(10)
        with lock.exclusive(2.0) as waited:
            assert waited < 1.0
    finally:
        builder.kill()
        lock.close()


def test_a_waiting_measurement_gets_the_device_the_moment_it_is_free(tmp_path: Path) -> None:
    holder = _holder(tmp_path, 1.0)
    lock = DeviceLock(_limits(), tmp_path)
    waits: list[bool] = []
    try:
        with lock.exclusive(30.0, waits.append) as waited:
            assert 0.5 < waited < 10.0
            assert holder.poll() is not None or holder.wait(5) == 0
        assert waits == [True, False]
    finally:
        holder.kill()
        lock.close()


# -- real OpenCL (PoCL) ------------------------------------------------------------------

SEARCH = """
import json, sys
from gtune.description import load_kernel
from gtune.measure import OpenCLEvaluator
kernel = load_kernel(sys.argv[1])
configs = [{"WX": x, "WY": y, "WZ": 1} for x in (4, 8, 16) for y in (1, 2, 4)]
with OpenCLEvaluator(kernel, runs=20, compile_workers=int(sys.argv[2])) as ev:
    results = list(ev.evaluate_batch(configs))
print(json.dumps([
    {"status": r.status.value, "wait_s": r.extra.get("wait_s"), "message": r.message[:300]}
    for r in results
]))
"""


def _intervals(log: Path) -> dict[int, list[tuple[float, float]]]:
    held: dict[int, list[tuple[float, float]]] = {}
    for line in log.read_text().splitlines():
        pid, enter, leave = line.split()
        held.setdefault(int(pid), []).append((float(enter), float(leave)))
    return held


def _disjoint(held: dict[int, list[tuple[float, float]]]) -> None:
    spans = sorted((a, b, pid) for pid, ab in held.items() for a, b in ab)
    for (_, end, pid), (start, _, other) in itertools.pairwise(spans):
        assert end <= start, f"process {pid} and {other} timed on the device at once"


@pytest.mark.opencl
@pytest.mark.slow
def test_two_searches_on_one_device_never_time_at_once(tmp_path: Path) -> None:
    log = tmp_path / "held.log"
    env = {
        **os.environ,
        "PYTHONPATH": str(ROOT),
        LOCK_DIR_ENV: str(tmp_path / "locks"),
        LOCK_LOG_ENV: str(log),
    }
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", SEARCH, str(DATA / "naive7.cl"), str(helpers)],
            cwd=ROOT,
            env=env,
            stdout=subprocess.PIPE,
            text=True,
        )
        for helpers in (0, 1)
    ]
    outs = [json.loads(p.communicate(timeout=600)[0]) for p in procs]
    assert all(p.returncode == 0 for p in procs)
    for results in outs:
        assert [r["status"] for r in results] == ["ok"] * 9, results  # with the messages
        assert all(isinstance(r["wait_s"], float) and r["wait_s"] >= 0 for r in results)
    # they did share the device: one waited for the other at least once, and said so
    assert sum(r["wait_s"] for results in outs for r in results) > 0
    held = _intervals(log)
    assert len(held) == 2  # each search's measuring worker (pids of their own)
    assert sum(len(v) for v in held.values()) >= 2 * 9  # settle + every measurement
    _disjoint(held)


def _device_holder(folder: Path, device: DeviceLimits, seconds: float) -> subprocess.Popen[str]:
    """Another process holding ``device`` for ``seconds`` (as a measurement would)."""
    proc = subprocess.Popen(
        [sys.executable, "-c", DEVICE_HOLDER, str(folder), json.dumps(device.to_dict())],
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(ROOT), "HOLD_S": str(seconds)},
        stdout=subprocess.PIPE,
        text=True,
    )
    assert proc.stdout is not None and proc.stdout.readline().strip() == "held"
    return proc


@pytest.mark.opencl
@pytest.mark.slow
def test_waiting_for_the_device_is_reported_and_not_counted_in_the_time_limit(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from gtune.description import load_kernel
    from gtune.measure import OpenCLEvaluator, Status

    monkeypatch.setenv(LOCK_DIR_ENV, str(tmp_path))
    kernel = load_kernel(DATA / "naive7.cl")
    config = {"WX": 8, "WY": 4, "WZ": 1}
    with OpenCLEvaluator(kernel, runs=3, compile_workers=0, timeout_s=4.0) as ev:
        first = ev.evaluate(config)
        assert first.ok and first.extra["wait_s"] < 1.0
        # another process holds the device for longer than the 4 s time limit
        holder = _device_holder(tmp_path, ev.device, 6.0)
        try:
            r = ev.evaluate(config)
        finally:
            holder.kill()
            holder.wait(10)
        assert r.status is Status.OK, r.message
        assert r.extra["wait_s"] > 4.0  # waited beyond the time limit, and no timeout
        assert ev.restarts == 0
        assert max(r.times_s) < 1.0  # the wait is not in the measured times
        assert r.extra["worker_s"] >= r.extra["wait_s"]
    # a wait beyond lock_wait_s is one clear error; a killed holder leaves nothing locked
    # (the new worker's build waits for its share of the held device no longer than
    # lock_wait_s either, then builds unlocked: with the default timeout_s a quarter of
    # it, 15 s, would otherwise pass before the error)
    with OpenCLEvaluator(kernel, runs=3, compile_workers=0, lock_wait_s=0.5) as ev:
        holder = _device_holder(tmp_path, ev.device, 60.0)
        try:
            began = time.monotonic()
            with pytest.raises(EnvironmentProblem, match="measured by another process"):
                ev.evaluate(config)
            assert time.monotonic() - began < 12.0  # not the build's 15 s, then the wait
            os.kill(holder.pid, signal.SIGKILL)
            holder.wait(10)
            again = ev.evaluate(config)
        finally:
            holder.kill()
        assert again.ok and again.extra["wait_s"] < 0.5


DEVICE_HOLDER = """
import json, os, sys, time
from pathlib import Path
from gtune.device import DeviceLimits
from gtune.measure.devlock import DeviceLock
lock = DeviceLock(DeviceLimits.from_dict(json.loads(sys.argv[2])), Path(sys.argv[1]))
with lock.exclusive():
    print("held", flush=True)
    time.sleep(float(os.environ.get("HOLD_S", "600")))
"""


def test_holder_script_is_valid_python() -> None:
    for script in (HOLDER.format(mode="exclusive"), SEARCH, DEVICE_HOLDER):
        compile(textwrap.dedent(script), "<script>", "exec")

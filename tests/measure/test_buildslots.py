"""Build slots: the compile helpers of every worker of a host share one budget
(gtune.measure.buildslots). Real processes and real file locks; no OpenCL."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path

import pytest

from gtune.measure.buildslots import BUILD_SLOTS_ENV, BuildSlots, host_slots, slots_from_env
from tests.conftest import ROOT

HOLDER = textwrap.dedent(
    """
    import json, os, sys, time
    from pathlib import Path
    from gtune.measure.buildslots import BuildSlots

    slots = BuildSlots(int(sys.argv[1]), Path(sys.argv[2]))
    log = open(sys.argv[3], "a")
    for _ in range(int(sys.argv[4])):
        with slots.held():
            enter = time.time()
            time.sleep(0.03)  # a build
            leave = time.time()
        log.write(json.dumps([os.getpid(), enter, leave]) + "\\n")
        log.flush()
    """
)


def _most_at_once(spans: list[tuple[float, float]]) -> int:
    events = sorted([(a, 1) for a, _ in spans] + [(b, -1) for _, b in spans])
    now = most = 0
    for _, step in events:
        now += step
        most = max(most, now)
    return most


def test_processes_never_build_more_at_once_than_the_slots(tmp_path: Path) -> None:
    log = tmp_path / "holds.jsonl"
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", HOLDER, "2", str(tmp_path), str(log), "10"], env=env
        )
        for _ in range(5)
    ]
    assert all(p.wait(timeout=120) == 0 for p in procs)
    rows = [json.loads(line) for line in log.read_text().splitlines()]
    assert len(rows) == 5 * 10 and len({r[0] for r in rows}) == 5
    # five processes wanting to build, two slots: two at a time, never three
    assert _most_at_once([(r[1], r[2]) for r in rows]) == 2


def test_a_slot_left_by_one_worker_is_taken_by_another_at_once(tmp_path: Path) -> None:
    slots = BuildSlots(1, tmp_path)
    other = BuildSlots(1, tmp_path)  # another process's view: its own descriptors
    got: list[float] = []

    def wait_for_it() -> None:
        with other.held() as waited:
            got.append(waited)

    with slots.held() as waited:
        assert waited < 0.5
        t = threading.Thread(target=wait_for_it)
        t.start()
        time.sleep(0.2)
        assert not got  # all slots taken: it waits
    t.join(5)
    assert got and 0.15 < got[0] < 1.0  # and builds as soon as the slot is free
    assert other.waits == 1 and other.waited_s == pytest.approx(got[0])
    slots.close()
    other.close()


def test_the_count_comes_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(BUILD_SLOTS_ENV, raising=False)
    assert slots_from_env() == 0 and host_slots() is None
    for text in ("0", "", "many", "-3", "²"):
        monkeypatch.setenv(BUILD_SLOTS_ENV, text)
        assert slots_from_env() == 0 and host_slots() is None
    monkeypatch.setenv(BUILD_SLOTS_ENV, "12")
    slots = host_slots()
    assert slots is not None and slots.count == 12
    with pytest.raises(ValueError):
        BuildSlots(0)


def test_a_build_that_waited_too_long_goes_ahead_without_a_slot(tmp_path: Path) -> None:
    slots = BuildSlots(1, tmp_path)
    other = BuildSlots(1, tmp_path)
    with slots.held(), other.held(max_wait_s=0.2) as waited:
        # the parent's time limit for the build runs: it is not spent waiting
        assert 0.2 <= waited < 1.0 and other.unslotted == 1
    with other.held(max_wait_s=0.2) as waited:  # free again: slotted at once
        assert waited < 0.2 and other.unslotted == 1

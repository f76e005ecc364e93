"""Campaigns on a real Dask LocalCluster with worker processes, on the default device."""

from __future__ import annotations

import json
import os
import shutil
import signal
import sqlite3
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from gtune.campaign import parse_campaign, run_campaign
from gtune.tuning import CampaignStarted, TaskFinished, TuningEvent
from tests.conftest import ROOT
from tests.inprocess import Cli

pytestmark = [pytest.mark.opencl, pytest.mark.dask, pytest.mark.slow]

HEAT = str(ROOT / "stencils" / "heat3d.cl")


SUITE = {"suite": "garvey104", "names": ["star_3d_xyz_r1", "dense_1d_x_r1"]}


def _spec(tmp_path: Path, budget: int = 6, kernels: list[Any] | None = None) -> Any:
    """Each kernel (default: heat3d and two suite kernels) with two strategies."""
    return parse_campaign(
        {
            "name": "t",
            "kernels": kernels or [HEAT, SUITE],
            "sizes": ["16x16x16"],
            "strategies": ["hybrid", "random"],
            "technique": "global",
            "budget": budget,
            "compile_workers": 0,
            "retries": 3,
        },
        source="t.yaml",
        base_dir=tmp_path,
    )


def _rows(db: Path) -> list[tuple[str, str, str]]:
    """The searches' rows (a confirmation round re-measures on purpose, under the
    kernel's identity + /confirmed)."""
    with sqlite3.connect(db) as con:
        rows = list(con.execute("SELECT device, kernel_id, config FROM results"))
    return [r for r in rows if not r[1].endswith("/confirmed")]


def _searching(keys: Any) -> bool:
    """Whether a worker's processing tasks include a search (not only its warm-up)."""
    return any(not str(k).startswith("gtune-warm") for k in keys)


def _warming(keys: Any) -> bool:
    return any(str(k).startswith("gtune-warm") for k in keys)


def _kill_one_worker(
    when: Callable[[Any], bool], killed: list[int], settle_s: float = 0.0, poll_s: float = 0.2
) -> Callable[[Any], None]:
    """A campaign's cluster hook: a thread that SIGKILLs the first worker whose running
    task keys satisfy ``when`` (``settle_s`` after seeing it), once, within 120 s; its
    pid goes into ``killed``."""

    def hook(client: Any) -> None:
        def work() -> None:
            deadline = time.monotonic() + 120
            while time.monotonic() < deadline and not killed:
                busy = [w for w, keys in client.processing().items() if when(keys)]
                if busy:
                    time.sleep(settle_s)
                    for pid in client.run(os.getpid, workers=busy[:1]).values():
                        os.kill(pid, signal.SIGKILL)
                        killed.append(pid)
                time.sleep(poll_s)

        threading.Thread(target=work, daemon=True).start()

    return hook


def test_killed_worker_task_is_retried_nothing_lost_and_rerun_measures_nothing(
    tmp_path: Path,
) -> None:
    """Two tasks (a kernel file, two strategies) on two workers side by side, one of
    them killed mid-search. (Suite kernels in campaigns: the tests below.)"""
    spec = _spec(tmp_path, kernels=[HEAT])
    out = tmp_path / "c"
    killed: list[int] = []
    killer = _kill_one_worker(_searching, killed, settle_s=1.0)  # it measures something first
    result = run_campaign(spec, out, workers_per_device=2, cluster_hook=killer)
    assert killed, "no worker was busy to be killed"
    assert result.complete, result.failed
    assert len(result.summaries) == 2
    rows = _rows(out / "campaign.db")
    assert len(rows) == len(set(rows))  # nothing stored twice
    assert all(s["best_s"] for s in result.summaries)

    # the same campaign again: every task already finished, nothing runs
    again = run_campaign(spec, out, workers_per_device=2)
    assert again.skipped == 2 and len(again.summaries) == 2
    # forced: every task runs again, every configuration comes from the store
    forced = run_campaign(spec, out, workers_per_device=1, force=True)
    assert forced.complete
    assert sum(s["measured"] for s in forced.summaries) == 0
    assert _rows(out / "campaign.db") == rows


def test_a_worker_killed_while_starting_does_not_hold_up_the_campaign(tmp_path: Path) -> None:
    """A worker killed during its warm-up (starting its OpenCL processes): the warm-up
    bound to it is given up as soon as it is gone (not after WARM_TIMEOUT_S), its nanny's
    new worker takes pieces, and the campaign completes."""
    from gtune.campaign import runner

    spec = parse_campaign(
        {
            "name": "w",
            "kernels": [HEAT],
            "sizes": ["16x16x16"],
            "strategies": ["hybrid"],
            "technique": "global",
            "budget": 6,
            "compile_workers": 2,  # a warm-up of three processes: time to be caught in it
            "retries": 3,
        },
        source="w.yaml",
        base_dir=tmp_path,
    )
    killed: list[int] = []
    killer = _kill_one_worker(_warming, killed, poll_s=0.02)
    started = time.monotonic()
    result = run_campaign(spec, tmp_path / "c", workers_per_device=2, cluster_hook=killer)
    assert killed, "no worker was caught warming up"
    assert result.complete, result.failed
    assert time.monotonic() - started < runner.WARM_TIMEOUT_S / 2
    started_workers = json.loads((tmp_path / "c" / "cluster.json").read_text())["started"]
    assert any(s.get("error") for s in started_workers), started_workers  # the killed one


def test_campaign_command_writes_report_and_resumes(tmp_path: Path, gtune_here: Cli) -> None:
    heat = tmp_path / "heat3d.cl"  # a copy, edited below
    for name in Path(HEAT).parent.glob("heat3d.*"):
        shutil.copy(name, tmp_path / name.name)
    camp = tmp_path / "c.yaml"
    camp.write_text(
        f"name: cli\nkernels: [{heat}]\nsizes: [16x16x16]\nstrategies: [hybrid]\n"
        "technique: global\nbudget: 3\ncompile_workers: 0\n"
    )
    out = tmp_path / "out"
    first = gtune_here("campaign", str(camp), "--out", str(out))
    assert first.returncode == 0, first.stderr
    for name in ("campaign.csv", "campaign.json", "campaign.md", "campaign.png", "tasks.jsonl"):
        assert (out / name).exists()
    second = gtune_here("campaign", str(camp), "--out", str(out))
    assert second.returncode == 0 and "1 already finished" in second.stderr
    # the kernel edited since: its finished task searched another version, and runs again
    heat.write_text(heat.read_text() + "\n// edited\n")
    third = gtune_here("campaign", str(camp), "--out", str(out))
    assert third.returncode == 0 and "0 already finished" in third.stderr, third.stderr
    entries = [json.loads(line) for line in (out / "tasks.jsonl").read_text().splitlines()]
    assert len(entries) == 2 and entries[0]["kernel_identity"] != entries[1]["kernel_identity"]
    bad = gtune_here("campaign", "--suite", "garvey104:nothing*", "--out", str(out))
    assert bad.returncode == 2 and "Traceback" not in bad.stderr


def test_workers_share_a_postgresql_store(tmp_path: Path, pg_url: str) -> None:
    """Two workers search one kernel at once (two strategies: the same default and
    first configurations) on one PostgreSQL store."""
    spec = _spec(tmp_path, kernels=[HEAT])
    out = tmp_path / "pg"
    first = run_campaign(spec, out, store=pg_url, workers_per_device=2)
    assert first.complete and len(first.summaries) == 2
    assert len({s["worker"] for s in first.summaries}) == 2  # side by side
    from gtune.store import open_store

    with open_store(pg_url) as store:
        rows = [
            (r.device, r.kernel_id, str(sorted(r.result.config.items())))
            for r in store.rows()
            if not r.kernel_id.endswith("/confirmed")
        ]
    assert rows and len(rows) == len(set(rows))  # two workers, nothing measured twice
    again = run_campaign(spec, out, store=pg_url, workers_per_device=1, force=True)
    assert again.complete and sum(s["measured"] for s in again.summaries) == 0


def test_workers_start_their_processes_first_and_never_time_on_the_device_at_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Two Dask workers on the one PoCL device, each with a compile helper, a split
    campaign (technique pieces) of two suite kernels.

    The measure worker and compile helper of every Dask worker start side by side
    before any search, off the searches' clock; what the campaign started on (cores,
    build slots, each worker's start) is recorded beside its ledger. The device lock
    keeps the workers' timed sections apart (recorded inside the lock by every
    measuring process) and the results are those of a lone worker: verified, nothing
    failed. The technique pieces spread over the workers, each keeps its kernel's
    session for the next piece, and the tasks themselves are then served from the
    store; the progress comes as events of the one Observer interface. (One campaign
    checks all three: each needs several workers.)"""
    from gtune.measure.devlock import LOCK_DIR_ENV, LOCK_LOG_ENV
    from gtune.store import open_store
    from tests.measure.test_devlock import _disjoint, _intervals

    log = tmp_path / "held.log"
    monkeypatch.setenv(LOCK_DIR_ENV, str(tmp_path / "locks"))
    monkeypatch.setenv(LOCK_LOG_ENV, str(log))
    spec = parse_campaign(
        {
            "name": "warm",
            "kernels": [{"suite": "garvey104", "names": ["star_3d_xyz_r1", "dense_1d_x_r1"]}],
            "sizes": ["16x16x16"],
            "strategies": ["hybrid"],
            "technique": "all",
            "budget": 15,
            "compile_workers": 1,
        },
        source="t.yaml",
        base_dir=tmp_path,
    )
    out = tmp_path / "c"
    events: list[TuningEvent] = []

    class Collect:
        def on_event(self, event: TuningEvent) -> None:
            events.append(event)

    result = run_campaign(spec, out, workers_per_device=2, observer=Collect())
    assert result.complete, result.failed
    assert 0 < result.start_s < result.wall_s
    started = json.loads((out / "cluster.json").read_text())
    assert started["cores"]["physical"] >= 1 and started["cores"]["source"] in ("sysfs", "logical")
    assert started["build_slots"] >= 1 and len(started["workers"]) == 2
    assert len(started["started"]) == 2
    assert all(s["error"] is None and s["helpers"] == 1 for s in started["started"])
    assert started["start_s"] == pytest.approx(result.start_s)
    pieces = [json.loads(line) for line in (out / "pieces.jsonl").read_text().splitlines()]
    assert pieces and all(p["pool"] is not None for p in pieces)
    # every worker was started before the first piece, and no piece started a process:
    # each measure worker was handed its kernels running, its one helper kept
    assert max(s["ended_at"] for s in started["started"]) <= min(p["started_at"] for p in pieces)
    assert all(p["pool"]["started"] == 0 and p["pool"]["reused"] >= 1 for p in pieces)
    assert all(p["pool"]["compile_workers"] == 1 for p in pieces)
    # the helpers took the host's build slots (waits summed, none negative)
    assert all(p["pool"]["build_wait_s"] >= 0 for p in pieces)

    # the device shared: both workers measured, never at once, every result verified
    assert len({p["worker"] for p in pieces}) == 2
    with open_store(str(out / "campaign.db")) as store:
        statuses = [r.result.status.value for r in store.rows()]
    assert statuses and set(statuses) <= {"ok", "build_failed", "launch_failed"}
    assert "ok" in statuses
    for s in [*result.summaries, *pieces]:
        assert s["best_s"] > 0 and "wait_s" in s["time"]
    held = _intervals(log)
    assert len(held) >= 2  # the two workers' measuring processes
    _disjoint(held)

    # split: one row per campaign task, as unsplit, its progress as events
    assert len(result.summaries) == 2
    assert events[0] == CampaignStarted(total=2, skipped=0, devices=("",))
    finished = [e for e in events if isinstance(e, TaskFinished)]
    assert sorted(e.label for e in finished) == sorted(s["label"] for s in result.summaries)
    assert all(e.summary is not None and e.error == "" for e in finished)
    assert len(pieces) == sum(len(s["runs"]) for s in result.summaries) >= 6
    assert all(p["task"]["confirm"] is False and len(p["runs"]) == 1 for p in pieces)
    # a worker's next piece of the same kernel started nothing and solved nothing
    assert any(p["time"]["startup_s"] == 0 and p["time"]["space_s"] < 0.01 for p in pieces)
    for s in result.summaries:
        # the task's own searches came from the store; it reports what its pieces measured
        assert s["split"]["pieces"] == len(s["runs"]) and s["split"]["measured"] > 0
        assert s["measured"] - s["split"]["measured"] <= s["evaluations"] // 2
        assert s["measured"] + s["reused"] >= s["evaluations"]
        assert {r["technique"] for r in s["runs"]} == {
            p["task"]["technique"] for p in pieces if p["label"] == s["label"]
        }
    rows = _rows(out / "campaign.db")
    assert len(rows) == len(set(rows))  # nothing measured twice


def test_a_device_whose_every_worker_is_gone_fails_its_tasks_instead_of_waiting(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The campaign's only worker (no nanny to restart it) is killed mid-search: its
    device's pieces are given up as failed once no worker has offered the device for
    ``STRANDED_S``, and the campaign ends, instead of waiting for a worker forever."""
    import subprocess
    import sys

    from distributed import LocalCluster

    from gtune.campaign import runner

    monkeypatch.setattr(runner, "STRANDED_S", 3.0)
    spec = _spec(tmp_path, budget=200)
    scheduler = LocalCluster(
        n_workers=0, processes=False, protocol="tcp://", host="127.0.0.1", dashboard_address=None
    )
    worker = None
    try:
        resource = runner.resource_name(spec.devices[0] if spec.devices else "")
        worker = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "distributed.cli.dask_worker",
                scheduler.scheduler_address,
                "--no-nanny",
                "--nthreads",
                "1",
                "--resources",
                f"{resource}=1",
            ],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            env={**os.environ, "PYTHONPATH": str(ROOT)},
        )
        killed: list[int] = []

        def killer(client: Any) -> None:
            def work() -> None:
                deadline = time.monotonic() + 120
                while time.monotonic() < deadline and not killed:
                    running = [k for ks in client.processing().values() for k in ks]
                    if any("warm" not in str(k) for k in running):
                        time.sleep(1.0)  # mid-search
                        worker.kill()
                        killed.append(worker.pid)
                    time.sleep(0.2)

            threading.Thread(target=work, daemon=True).start()

        started = time.monotonic()
        result = run_campaign(
            spec, tmp_path / "c", scheduler=scheduler.scheduler_address, cluster_hook=killer
        )
        assert killed, "the worker never ran a piece"
        assert time.monotonic() - started < 150
        assert not result.complete and len(result.failed) + len(result.summaries) == 6
        assert result.failed and all("no Dask worker offered" in why for _, why in result.failed)
    finally:
        if worker is not None:
            worker.kill()
            worker.wait(10)
        scheduler.close(timeout=20)

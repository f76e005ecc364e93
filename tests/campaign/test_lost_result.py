"""A piece that ended on a worker that then died before its result was fetched, on a
real Dask LocalCluster: a piece is bound to its worker, so Dask would compute the lost
result again there, never; the campaign's driver queues the piece again instead of
waiting for ever (a CI run hung 285 s there once)."""

from __future__ import annotations

import os
import signal
import time
from pathlib import Path
from typing import Any

import pytest

from gtune.campaign import runner
from gtune.campaign.schedule import Piece, group_of
from gtune.campaign.spec import expand
from gtune.tuning import CancelToken, NullObserver
from tests.campaign.test_dask import HEAT, _spec

pytestmark = [pytest.mark.dask, pytest.mark.opencl]


def _one_piece(tmp_path: Path) -> Piece:
    spec = _spec(tmp_path, budget=3, kernels=[HEAT])
    task = expand(spec, tmp_path)[0]
    return Piece(task=task, parent=task.key, group=group_of(task), cost=1.0, final=True)


def test_a_result_lost_with_its_worker_is_queued_again_not_waited_for(tmp_path: Path) -> None:
    from distributed import Client

    cluster = runner.local_cluster([""], 1)
    client = Client(cluster)
    try:
        piece = _one_piece(tmp_path)
        store = f"sqlite:///{tmp_path / 'store.db'}"
        stream = runner._Stream(client, [piece], store, retries=2)
        stream.hand_out(stream.workers())
        (fut,) = stream.running
        deadline = time.monotonic() + 120
        while fut.status != "finished" and time.monotonic() < deadline:
            time.sleep(0.05)
        assert fut.status == "finished", fut.status
        worker = stream.worker_of(fut)
        pid = client.run(os.getpid, workers=[worker])[worker]
        os.kill(pid, signal.SIGKILL)  # the result, never fetched, dies with it
        while worker in stream.workers() and time.monotonic() < deadline:
            time.sleep(0.05)
        run = runner._Run([piece.task], tmp_path, "t", NullObserver(), CancelToken())
        started = time.monotonic()
        with pytest.raises(runner._ResultLost):
            runner._fetch(run, stream, fut)
        assert time.monotonic() - started < 30
        assert fut not in stream.running and stream.lost[piece.key] == 1
        assert not run.failed  # queued again (retries left), not given up
        assert not stream.finished  # the piece waits in its queue for a worker
    finally:
        client.close(timeout=20)
        cluster.close(timeout=20)


def test_a_result_whose_worker_lives_is_fetched(tmp_path: Path) -> None:
    from distributed import Client

    cluster = runner.local_cluster([""], 1)
    client = Client(cluster)
    try:
        piece = _one_piece(tmp_path)
        stream = runner._Stream(client, [piece], f"sqlite:///{tmp_path / 's.db'}", retries=2)
        stream.hand_out(stream.workers())
        (fut,) = stream.running
        run = runner._Run([piece.task], tmp_path, "t", NullObserver(), CancelToken())
        summary: Any = runner._fetch(run, stream, fut)
        assert summary["evaluations"] >= 1 and fut in stream.running
    finally:
        client.close(timeout=20)
        cluster.close(timeout=20)


def test_the_driver_sees_every_connected_worker_whatever_the_clients_cache_holds(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # the client's own periodic refresh caches an identity that lists no worker, and
    # Client.scheduler_info() answers from that cache when its query fails (distributed
    # logs it at debug): a driver turn that read it queued every running piece again
    from distributed import Client

    cluster = runner.local_cluster([""], 2)
    client = Client(cluster)
    try:
        client.wait_for_workers(2, timeout=60)
        client.sync(client._update_scheduler_info)  # the periodic refresh: no worker
        assert not client._scheduler_identity.get("workers")

        async def lost(**_: Any) -> None:  # a query that failed: the cache left as it is
            return None

        monkeypatch.setattr(client, "_update_scheduler_info", lost)
        stream = runner._Stream(client, [_one_piece(tmp_path)], "", retries=2)
        first = stream.workers()
        assert len(first) == 2 and all(first.values())  # each advertises its device

        def busy(_: Any) -> dict[str, Any]:
            raise OSError("the scheduler did not answer")

        # a query of its own that fails: the last answer stands for this turn
        monkeypatch.setattr(runner, "_scheduler_workers", busy)
        assert stream.workers() == first
    finally:
        client.close(timeout=20)
        cluster.close(timeout=20)  # (left open, its two workers ran to the session's end)

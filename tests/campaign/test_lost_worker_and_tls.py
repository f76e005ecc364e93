"""Issue 45 on a real Dask LocalCluster: a campaign whose only worker is killed still
finishes every task (pieces are queued again, not left bound to a dead address); a
local cluster speaks TLS with credentials of its own, so a plain ``tcp://`` client or a
``tls://`` client without them cannot connect and run code; campaigns beyond the cap
are refused before any task is made."""

from __future__ import annotations

import gc
import os
import time
from pathlib import Path
from typing import Any

import pytest

from gtune.campaign import parse_campaign, run_campaign
from gtune.campaign.spec import MAX_TASKS, expand
from gtune.exceptions import InputError
from tests.campaign.test_dask import HEAT, _kill_one_worker, _rows, _searching, _spec

pytestmark = [pytest.mark.dask]

MACHINE = [
    {
        "selector": "0:0",
        "identity": "cpu-test-00000000",
        "name": "test CPU",
        "platform": "test",
        "type": "CPU",
    }
]


@pytest.mark.opencl
@pytest.mark.slow
def test_a_campaign_whose_only_worker_is_killed_finishes_every_task(tmp_path: Path) -> None:
    spec = _spec(tmp_path, kernels=[HEAT])  # two tasks: one searching, one queued behind it
    out = tmp_path / "c"
    killed: list[int] = []
    killer = _kill_one_worker(_searching, killed, settle_s=1.0)
    started = time.monotonic()
    result = run_campaign(spec, out, workers_per_device=1, cluster_hook=killer)
    assert killed, "the worker was never busy to be killed"
    assert result.complete, result.failed
    assert len(result.summaries) == 2 and all(s["best_s"] for s in result.summaries)
    assert time.monotonic() - started < 600
    rows = _rows(out / "campaign.db")
    assert len(rows) == len(set(rows))  # the piece run again measured nothing twice


@pytest.fixture
def cluster() -> Any:
    from gtune.campaign.runner import local_cluster

    c = local_cluster([""], 1, machine=MACHINE)
    try:
        yield c
    finally:
        c.close(timeout=20)


def _planted(path: Path) -> None:
    path.write_text(str(os.getpid()))


def test_a_local_cluster_takes_only_its_own_clients(cluster: Any, tmp_path: Path) -> None:
    from distributed import Client, Security

    address = cluster.scheduler_address
    assert address.startswith("tls://127.0.0.1:"), address
    # the campaign's own client (the cluster's credentials) runs code there
    with Client(cluster) as own:
        assert own.submit(sum, [1, 2], pure=False).result(timeout=60) == 3
    flag = tmp_path / "ran"
    strangers: list[tuple[str, Any]] = [
        ("tcp://" + address.removeprefix("tls://"), None),  # a plain client
        (address, Security()),  # tls:// without credentials
        (address, Security.temporary()),  # tls:// with credentials of its own
    ]
    for target, security in strangers:
        with pytest.raises((OSError, TimeoutError, TypeError)):
            stranger = Client(target, timeout=3, security=security)
            try:  # never reached: were it, the code would run in the cluster
                stranger.submit(_planted, flag, pure=False).result(timeout=10)
            finally:
                stranger.close()
        # the refused client is garbage now: closed here, its __del__ cannot run inside
        # the next one's start, where it waits for the loop runner's lock that start
        # holds (a hang seen once in CI under load)
        gc.collect()
    assert not flag.exists()
    with Client(cluster) as own:  # the strangers left the cluster as it was
        assert own.submit(sum, [2, 3], pure=False).result(timeout=60) == 5


def test_a_campaign_beyond_the_cap_is_refused_before_its_tasks_exist(tmp_path: Path) -> None:
    sizes = [f"{8 * (i + 1)}x16x16" for i in range(200)]
    strategies = [f"s{i}" for i in range(MAX_TASKS // 200 + 1)]
    spec = parse_campaign(
        {"name": "huge", "kernels": [HEAT], "sizes": sizes, "strategies": strategies},
        source="huge.yaml",
        base_dir=tmp_path,
    )
    began = time.monotonic()
    with pytest.raises(InputError, match=f"at most {MAX_TASKS:,}") as err:
        expand(spec, tmp_path / "k")
    assert "huge" in err.value.render() and "split it" in err.value.render()
    assert time.monotonic() - began < 30


@pytest.mark.opencl
def test_a_running_campaigns_scheduler_refuses_strangers(tmp_path: Path) -> None:
    """The same, through a campaign: while it runs, clients without its credentials
    are refused, and the campaign finishes as if nothing had happened."""
    from distributed import Client, Security

    spec = _spec(tmp_path, budget=2, kernels=[HEAT])
    flag = tmp_path / "ran"
    refused: list[str] = []

    def stranger(client: Any) -> None:
        address = client.scheduler.address
        assert address.startswith("tls://127.0.0.1:")
        for target, security in (
            ("tcp://" + address.removeprefix("tls://"), None),
            (address, Security.temporary()),
        ):
            try:
                other = Client(target, timeout=3, security=security)
            except (OSError, TimeoutError, TypeError):
                refused.append(target)
                continue
            try:
                other.submit(_planted, flag, pure=False).result(timeout=10)
            finally:
                other.close()

    result = run_campaign(spec, tmp_path / "c", workers_per_device=1, cluster_hook=stranger)
    assert len(refused) == 2 and not flag.exists()
    assert result.complete, result.failed

"""The contract every result store backend keeps (:class:`gtune.result.ResultStore`).

Subclass :class:`StoreContract` and provide a ``store_url`` fixture: the URL of a fresh,
empty store of the backend (:func:`gtune.store.open_store` opens it). The suite checks
reading back, filters and kernel names, the append-only history, batch lookups, claims
(expiry; dead, zombie and stopped holders; only the holder writes), refusals,
:class:`~gtune.measure.StoredEvaluator` over the store, and several processes sharing
it. The helpers here are importable by the worker
processes the suite starts.
"""

from __future__ import annotations

import json
import multiprocessing
import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Callable, Generator, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any, cast

import pytest

from gtune.exceptions import GtuneError
from gtune.measure import ReplayEvaluator, StoredEvaluator
from gtune.processes import child_env
from gtune.result import Result, ResultStore, Status, config_key
from gtune.space.refusals import RefusalStore
from gtune.store import open_store


def result(wx: int, t: float = 1e-3, status: Status = Status.OK, **extra: Any) -> Result:
    return Result(
        {"WX": wx, "WY": 1},
        status,
        compile_s=0.25,
        times_s=(t, t * 1.5, t * 0.5) if status is Status.OK else (),
        message="" if status is Status.OK else f"{status.value} here",
        error_code=-54 if status is Status.LAUNCH_FAILED else None,
        max_error=1e-7 if status is Status.OK else None,
        extra=extra,
    )


class Counting(ReplayEvaluator):
    """A replay evaluator that takes a little time per configuration and logs each one
    it is asked for to a file (shared by processes)."""

    def __init__(self, results: list[Result], log: Path, delay_s: float) -> None:
        super().__init__(results)
        self.log = log
        self.delay_s = delay_s

    def evaluate(self, config: Mapping[str, int]) -> Result:
        time.sleep(self.delay_s)
        with self.log.open("a") as f:
            f.write(json.dumps(dict(config), sort_keys=True) + "\n")
        return super().evaluate(config)

    def evaluate_batch(self, configs: Sequence[Mapping[str, int]]) -> Iterator[Result]:
        for c in configs:
            yield self.evaluate(c)


def tune_process(url: str, log: str, order: list[int], batch: int, delay_s: float) -> int:
    """One 'tuning process': batches of configurations through a StoredEvaluator on
    the shared store. Returns how many it measured itself."""
    recording = [result(w, w * 1e-4) for w in range(1, 41)]
    store = open_store(url)
    try:
        ev = StoredEvaluator(
            Counting(recording, Path(log), delay_s),
            store,
            device="dev",
            kernel_id="kid",
            kernel_name="k",
            poll_s=0.02,
        )
        configs = [{"WX": w, "WY": 1} for w in order]
        for i in range(0, len(configs), batch):
            got = list(ev.evaluate_batch(configs[i : i + batch]))
            if [r.config["WX"] for r in got] != order[i : i + batch]:
                raise AssertionError("results out of order")
        return ev.measured
    finally:
        store.close()


def open_together(urls: list[str], barrier: Any, wx: int) -> int:
    """A process that, in step with the others (``barrier``), opens each store in
    ``urls`` (creating it) and adds one result. Returns how many it added."""
    added = 0
    for url in urls:
        barrier.wait(timeout=60)
        with open_store(url) as store:
            store.add(result(wx), device="dev", kernel_id="kid", kernel_name="k")
            added += 1
    return added


def _add(store: ResultStore, wx: int, status: Status = Status.OK, **kw: object) -> None:
    store.add(
        result(wx, status=status),
        device=str(kw.get("device", "gpu-1")),
        kernel_id=str(kw.get("kernel_id", "kid-a")),
        kernel_name=str(kw.get("kernel_name", "heat")),
        problem={"NX": 64},
    )


def _recording() -> ReplayEvaluator:
    return ReplayEvaluator(
        [result(1), result(2, status=Status.TIMEOUT), result(3, status=Status.CRASHED)]
    )


def _evaluator(store: ResultStore, inner: ReplayEvaluator, **kw: Any) -> StoredEvaluator:
    return StoredEvaluator(inner, store, device="dev", kernel_id="kid", **kw)


CONFIGS = [{"WX": w, "WY": 1} for w in (1, 2, 3)]


def _state(pid: int) -> str:
    """A process's state letter from ``/proc`` (Linux): ``Z`` zombie, ``T`` stopped."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return ""


def _until(check: Callable[[], bool], what: str) -> None:
    deadline = time.monotonic() + 30
    while not check():
        assert time.monotonic() < deadline, what
        time.sleep(0.02)


class StoreContract:
    """The tests every backend passes; needs a ``store_url`` fixture."""

    @pytest.fixture
    def store(self, store_url: str) -> Iterator[ResultStore]:
        s = open_store(store_url)
        try:
            yield s
        finally:
            s.close()

    def test_add_and_read_back_every_field(self, store: ResultStore) -> None:
        r = result(4, 2e-3, extra_note="x")
        assert store.add(
            r, device="gpu-1", kernel_id="kid-a", kernel_name="heat", problem={"NX": 8}
        )
        (row,) = store.rows()
        assert row.result == r
        assert (row.device, row.kernel_id, row.kernel_name) == ("gpu-1", "kid-a", "heat")
        assert row.problem == {"NX": 8} and row.row_id > 0 and row.created > 0
        assert row.to_dict()["median_s"] == pytest.approx(2e-3)
        assert store.results(device="gpu-1", kernel_id="kid-a") == [r]
        assert store.count() == 1

    def test_filters(self, store: ResultStore) -> None:
        _add(store, 1)
        _add(store, 2, device="gpu-2")
        _add(store, 3, kernel_id="kid-b", kernel_name="box")
        assert len(store.results()) == 3
        assert [r.config["WX"] for r in store.results(device="gpu-2")] == [2]
        assert [r.config["WX"] for r in store.results(kernel_id="kid-b")] == [3]
        assert [r.result.config["WX"] for r in store.rows(device="gpu")] == [1, 2, 3]
        assert [r.result.config["WX"] for r in store.rows(device="gpu-1")] == [1, 3]
        assert [r.result.config["WX"] for r in store.rows(kernel="box")] == [3]
        assert [r.result.config["WX"] for r in store.rows(kernel="kid-")] == [1, 2, 3]
        assert list(store.rows(kernel="nothing")) == []

    def test_kernel_names_match_by_file_function_or_full_name(self, store: ResultStore) -> None:
        _add(store, 1, kernel_id="k1", kernel_name="star_3d_xyz_r1:stencil")
        _add(store, 2, kernel_id="k2", kernel_name="heat3d:stencil")
        _add(store, 3, kernel_id="k3", kernel_name="starx3dxxyzxr1")
        _add(store, 4, kernel_id="k4", kernel_name="life")

        def wx(name: str) -> list[int]:
            return [r.result.config["WX"] for r in store.rows(kernel=name)]

        assert wx("star_3d_xyz_r1") == [1]  # "_" is no wildcard
        assert wx("heat3d:stencil") == [2]
        assert wx("stencil") == [1, 2]
        assert wx("life") == [4]
        assert wx("heat") == []  # names are whole words, not prefixes
        assert wx("k%") == []  # "%" is no wildcard either

    def test_append_only_latest_wins(self, store_url: str) -> None:
        store = open_store(store_url)
        _add(store, 1, Status.TIMEOUT)
        _add(store, 2)
        _add(store, 1)  # re-measured: now ok
        assert store.count() == 3
        current = {r.config["WX"]: r.status for r in store.results(device="gpu-1")}
        assert current == {1: Status.OK, 2: Status.OK}
        history = [(r.result.config["WX"], r.result.status) for r in store.rows(history=True)]
        assert history == [(1, Status.TIMEOUT), (2, Status.OK), (1, Status.OK)]
        assert len(list(store.rows())) == 2
        store.close()
        with open_store(store_url) as again:
            assert again.count() == 3
            assert again.last_row_id() >= 3

    def test_batch_lookup(self, store: ResultStore) -> None:
        for wx in range(1, 501):
            _add(store, wx, Status.TIMEOUT if wx == 7 else Status.OK)
        _add(store, 7)
        keys = [config_key({"WX": w, "WY": 1}) for w in range(0, 520)]
        got = store.latest("gpu-1", "kid-a", keys)
        assert len(got) == 500 and config_key({"WX": 0, "WY": 1}) not in got
        assert got[config_key({"WX": 7, "WY": 1})].result.status is Status.OK
        assert store.latest("gpu-2", "kid-a", keys) == {}

    def test_claims(self, store: ResultStore) -> None:
        keys = ["a", "b", "c"]
        assert store.claim("d", "k", keys, "host/1/x", 60) == set(keys)
        assert store.claim("d", "k", ["b", "c", "e"], "host/2/y", 60) == {"e"}
        assert store.claimed("d", "k", ["a", "b", "e", "z"]) == {
            "a": "host/1/x",
            "b": "host/1/x",
            "e": "host/2/y",
        }
        assert store.claim("d2", "k", ["a"], "host/2/y", 60) == {"a"}  # another device
        store.release("d", "k", ["b"], "host/1/x")
        store.release("d", "k", ["c"], "host/2/y")  # not its claim: no effect
        assert store.claim("d", "k", ["b", "c"], "host/2/y", 60) == {"b"}
        store.renew("d", "k", "host/1/x", 60)
        assert store.claim("d", "k", ["a", "b"], "host/1/x", 60) == {"a"}  # its own again

    def test_expired_claim_is_taken_over(self, store: ResultStore) -> None:
        assert store.claim("d", "k", ["a"], "host/1/x", 0.05) == {"a"}
        time.sleep(0.1)
        assert store.claimed("d", "k", ["a"]) == {}
        assert store.claim("d", "k", ["a"], "host/2/y", 60) == {"a"}

    def test_claim_of_a_dead_process_is_taken_over(self, store: ResultStore) -> None:
        child = subprocess.Popen([sys.executable, "-c", "pass"])
        child.wait()
        dead = f"{socket.gethostname()}/{child.pid}/x"
        alive = f"{socket.gethostname()}/{os.getpid()}/y"
        assert store.claim("d", "k", ["a", "b"], dead, 600) == {"a", "b"}
        assert store.claimed("d", "k", ["a"]) == {}
        assert store.claim("d", "k", ["a"], alive, 600) == {"a"}
        assert store.claimed("d", "k", ["a", "b"]) == {"a": alive}

    def test_claims_of_a_zombie_or_a_stopped_process_are_taken_over(
        self, store: ResultStore
    ) -> None:
        if not Path("/proc/self/stat").exists():
            pytest.skip("needs /proc to see a process's state")
        host = socket.gethostname()
        zombie = subprocess.Popen([sys.executable, "-c", "pass"])  # ended, not reaped yet
        stopped = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
        try:
            os.kill(stopped.pid, signal.SIGSTOP)
            _until(lambda: _state(zombie.pid) == "Z", "the child did not become a zombie")
            _until(lambda: _state(stopped.pid) == "T", "the child did not stop")
            for pid, key in ((zombie.pid, "a"), (stopped.pid, "b")):
                owner = f"{host}/{pid}/x"
                assert store.claim("d", "k", [key], owner, 600) == {key}
                assert store.claimed("d", "k", [key]) == {}
                assert store.claim("d", "k", [key], f"{host}/{os.getpid()}/y", 600) == {key}
        finally:
            stopped.kill()
            stopped.wait()
            zombie.wait()

    def test_only_the_claims_holder_writes_its_result(self, store: ResultStore) -> None:
        r = result(4)
        key = config_key(r.config)
        kw: dict[str, Any] = {"device": "d", "kernel_id": "k", "kernel_name": "heat"}
        assert store.claim("d", "k", [key], "host/1/x", 0.05) == {key}
        time.sleep(0.1)
        assert store.claim("d", "k", [key], "host/2/y", 600) == {key}  # taken over
        assert store.add(r, **kw, owner="host/1/x") is False
        assert store.count() == 0
        assert store.add(r, **kw, owner="host/2/y") is True
        assert store.claimed("d", "k", [key]) == {}
        assert store.add(r, **kw, owner="host/1/x") is False  # no claim at all: not its
        assert store.count() == 1

    def test_refusals_are_derived_from_results(self, store: ResultStore) -> None:
        _add(store, 1, Status.LAUNCH_FAILED)
        _add(store, 2, Status.BUILD_FAILED)
        _add(store, 3, Status.TIMEOUT)
        _add(store, 4, Status.LAUNCH_FAILED, device="gpu-2")
        _add(store, 2)  # measured fine later: no longer refused
        refused = store.refusals("gpu-1", "kid-a")
        assert refused == [({"WX": 1, "WY": 1}, "launch_failed: launch_failed here")]
        book = RefusalStore("gpu-1", store)
        assert book.rows("kid-a", ["WY", "WX"]) == {(1, 1): "launch_failed: launch_failed here"}
        assert book.rows("kid-a", ["WX"]) == {}  # other parameters: skipped
        book.add("kid-a", {"WX": 1, "WY": 1}, "again")  # already refused: nothing written
        book.add("kid-a", {"WX": 9, "WY": 1}, "too many registers")
        assert store.count() == 6
        assert ({"WX": 9, "WY": 1}, "launch_failed: too many registers") in book.load("kid-a")

    def test_stored_evaluator_measures_once_and_serves_repeats(self, store: ResultStore) -> None:
        inner = _recording()
        ev = _evaluator(store, inner)
        got = list(ev.evaluate_batch([*CONFIGS, CONFIGS[0]]))
        assert [r.config["WX"] for r in got] == [1, 2, 3, 1]
        assert (ev.measured, ev.reused) == (3, 1)
        again = _evaluator(store, inner)
        list(again.evaluate_batch(CONFIGS))
        assert (again.measured, again.reused) == (0, 3)
        assert len(inner.calls) == 3

    def test_results_are_looked_up_per_batch(self, store: ResultStore) -> None:
        inner_a, inner_b = _recording(), _recording()
        a, b = _evaluator(store, inner_a), _evaluator(store, inner_b)  # both exist before
        a.evaluate(CONFIGS[0])
        assert b.evaluate(CONFIGS[0]).ok and b.reused == 1 and inner_b.calls == []

    def test_remeasure_statuses(self, store: ResultStore) -> None:
        list(_evaluator(store, _recording()).evaluate_batch(CONFIGS))
        inner = _recording()
        ev = _evaluator(store, inner, remeasure={Status.TIMEOUT, Status.CRASHED})
        list(ev.evaluate_batch(CONFIGS))
        assert sorted(c["WX"] for c in inner.calls) == [2, 3]
        list(ev.evaluate_batch(CONFIGS))  # each re-measured once per run, not per batch
        assert len(inner.calls) == 2
        assert store.count() == 5
        everything = _recording()
        list(_evaluator(store, everything, remeasure=set(Status)).evaluate_batch(CONFIGS))
        assert len(everything.calls) == 3

    def test_timeout_rows_remember_their_timeout(self, store: ResultStore) -> None:
        short = _recording()
        list(_evaluator(store, short, timeout_s=1.0).evaluate_batch(CONFIGS))
        stored = {r.config["WX"]: r for r in store.results()}
        assert stored[2].extra["timeout_s"] == 1.0 and "timeout_s" not in stored[1].extra
        same = _recording()
        list(_evaluator(store, same, timeout_s=1.0).evaluate_batch(CONFIGS))
        assert same.calls == []
        longer = _recording()
        list(_evaluator(store, longer, timeout_s=5.0).evaluate_batch(CONFIGS))
        assert longer.calls == [{"WX": 2, "WY": 1}]

    def test_interrupted_batch_releases_its_claims(self, store: ResultStore) -> None:
        ev = _evaluator(store, _recording())
        batch = cast(Generator[Result, None, None], ev.evaluate_batch(CONFIGS))
        next(batch)
        batch.close()  # a search stopping early
        assert store.claimed("dev", "kid", [config_key(c) for c in CONFIGS]) == {}

    def test_two_processes_measure_each_configuration_once(
        self, store_url: str, tmp_path: Path
    ) -> None:
        """Two processes tune the same configurations (in different orders and batch sizes)
        against one store: every configuration is measured by exactly one of them."""
        log = tmp_path / "measured.log"
        forward = list(range(1, 41))
        backward = forward[::-1]
        ctx = multiprocessing.get_context("spawn")
        with ctx.Pool(2) as pool:
            jobs = [
                pool.apply_async(tune_process, (store_url, str(log), forward, 8, 0.02)),
                pool.apply_async(tune_process, (store_url, str(log), backward, 5, 0.02)),
            ]
            counts = [j.get(timeout=120) for j in jobs]
        measured = [json.loads(line)["WX"] for line in log.read_text().splitlines()]
        assert sorted(measured) == forward, "each configuration measured exactly once"
        assert sum(counts) == 40 and min(counts) > 0, counts
        with open_store(store_url) as store:
            assert store.count() == 40
            assert (
                store.claimed("dev", "kid", [config_key({"WX": w, "WY": 1}) for w in forward]) == {}
            )

    def test_a_stopped_process_measures_nothing_twice(self, store_url: str, tmp_path: Path) -> None:
        """A process holding claims is stopped (SIGSTOP): another takes its claims over
        at once instead of waiting out the lease; when the first continues it checks its
        claims before measuring and before writing, so no configuration is stored twice."""
        if not Path("/proc/self/stat").exists():
            pytest.skip("needs /proc to see a process's state")
        log = tmp_path / "measured.log"
        env = child_env()  # this gtune first on the path

        def start(delay: float) -> subprocess.Popen[str]:
            code = (
                "from gtune.testing.store import tune_process; "
                f"print(tune_process({store_url!r}, {str(log)!r}, list(range(1, 41)), 40, {delay}))"
            )
            return subprocess.Popen(
                [sys.executable, "-c", code], env=env, stdout=subprocess.PIPE, text=True
            )

        first = start(0.8)
        try:
            _until(lambda: log.exists() and len(log.read_text().splitlines()) >= 2, "no progress")
            # stopped while it measures: well after the writes that follow a measurement
            # (a SQLite writer stopped inside its write would hold the file's lock: that
            # is SQLite's, and nothing gtune can take over)
            time.sleep(0.4)
            first.send_signal(signal.SIGSTOP)
            _until(lambda: _state(first.pid) == "T", "the process did not stop")
            started = time.monotonic()
            second = start(0.01)
            out, _ = second.communicate(timeout=120)
            assert second.returncode == 0
            assert time.monotonic() - started < 60, "the second waited for the stopped one"
            assert int(out) >= 30  # it measured what the stopped one had claimed
            first.send_signal(signal.SIGCONT)
            out, _ = first.communicate(timeout=120)
            assert first.returncode == 0
        finally:
            if first.poll() is None:
                first.kill()
        with open_store(store_url) as store:
            rows = [(r.device, r.kernel_id, config_key(r.result.config)) for r in store.rows()]
            assert store.count() == 40 and len(set(rows)) == 40, "a configuration stored twice"
            keys = [config_key({"WX": w, "WY": 1}) for w in range(1, 41)]
            assert store.claimed("dev", "kid", keys) == {}
        # at most the one it was measuring when it stopped was measured by both
        assert len(log.read_text().splitlines()) <= 41

    def test_processes_opening_a_new_store_together(self, store_url: str) -> None:
        """Processes create and open a store at the same moment, again and again (on SQLite
        each switches the new file to write-ahead logging): none fails, nothing is lost."""
        rounds, procs = 15, 4
        urls = [store_url] if store_url.startswith("postgresql") else []
        if not urls:
            base = store_url.removesuffix(".db")
            urls = [f"{base}-{k}.db" for k in range(rounds)]
        ctx = multiprocessing.get_context("spawn")
        with ctx.Manager() as manager, ctx.Pool(procs) as pool:
            barrier = manager.Barrier(procs)
            added = pool.starmap(open_together, [(urls, barrier, w) for w in range(1, procs + 1)])
        assert added == [len(urls)] * procs
        for url in urls:
            with open_store(url) as store:
                assert store.count() == procs

    def test_errors_name_the_store(self, store_url: str) -> None:
        store = open_store(store_url, readonly=True)
        with store, pytest.raises(GtuneError, match="read-only"):
            _add(store, 1)


__all__ = ["CONFIGS", "Counting", "StoreContract", "open_together", "result", "tune_process"]

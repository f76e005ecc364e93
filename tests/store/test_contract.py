"""One contract for every result store backend: SQLite and a real PostgreSQL server."""

from __future__ import annotations

import json
import multiprocessing
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from gtune.exceptions import EnvironmentProblem, GtuneError, InputError
from gtune.measure import ReplayEvaluator, StoredEvaluator
from gtune.result import ResultStore, Status, config_key
from gtune.space.refusals import RefusalStore
from gtune.store import SCHEMA_VERSION, StoreError, open_store
from tests.store.helpers import open_together, raw_execute, result, tune_process


def _add(store: ResultStore, wx: int, status: Status = Status.OK, **kw: object) -> None:
    store.add(
        result(wx, status=status),
        device=str(kw.get("device", "gpu-1")),
        kernel_id=str(kw.get("kernel_id", "kid-a")),
        kernel_name=str(kw.get("kernel_name", "heat")),
        problem={"NX": 64},
    )


def test_add_and_read_back_every_field(store: ResultStore):
    r = result(4, 2e-3, extra_note="x")
    assert store.add(r, device="gpu-1", kernel_id="kid-a", kernel_name="heat", problem={"NX": 8})
    (row,) = store.rows()
    assert row.result == r
    assert (row.device, row.kernel_id, row.kernel_name) == ("gpu-1", "kid-a", "heat")
    assert row.problem == {"NX": 8} and row.row_id > 0 and row.created > 0
    assert row.to_dict()["median_s"] == pytest.approx(2e-3)
    assert store.results(device="gpu-1", kernel_id="kid-a") == [r]
    assert store.count() == 1


def test_filters(store: ResultStore):
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


def test_append_only_latest_wins(store_url: str):
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


def test_batch_lookup(store: ResultStore):
    for wx in range(1, 501):
        _add(store, wx, Status.TIMEOUT if wx == 7 else Status.OK)
    _add(store, 7)
    keys = [config_key({"WX": w, "WY": 1}) for w in range(0, 520)]
    got = store.latest("gpu-1", "kid-a", keys)
    assert len(got) == 500 and config_key({"WX": 0, "WY": 1}) not in got
    assert got[config_key({"WX": 7, "WY": 1})].result.status is Status.OK
    assert store.latest("gpu-2", "kid-a", keys) == {}


def test_claims(store: ResultStore):
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


def test_expired_claim_is_taken_over(store: ResultStore):
    assert store.claim("d", "k", ["a"], "host/1/x", 0.05) == {"a"}
    time.sleep(0.1)
    assert store.claimed("d", "k", ["a"]) == {}
    assert store.claim("d", "k", ["a"], "host/2/y", 60) == {"a"}


def test_claim_of_a_dead_process_is_taken_over(store: ResultStore):
    child = subprocess.Popen([sys.executable, "-c", "pass"])
    child.wait()
    dead = f"{socket.gethostname()}/{child.pid}/x"
    alive = f"{socket.gethostname()}/{os.getpid()}/y"
    assert store.claim("d", "k", ["a", "b"], dead, 600) == {"a", "b"}
    assert store.claimed("d", "k", ["a"]) == {}
    assert store.claim("d", "k", ["a"], alive, 600) == {"a"}
    assert store.claimed("d", "k", ["a", "b"]) == {"a": alive}


def _state(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return ""


def _until(check: Callable[[], bool], what: str) -> None:
    deadline = time.monotonic() + 30
    while not check():
        assert time.monotonic() < deadline, what
        time.sleep(0.02)


def test_claims_of_a_zombie_or_a_stopped_process_are_taken_over(store: ResultStore):
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


def test_only_the_claims_holder_writes_its_result(store: ResultStore):
    r = result(4)
    key = config_key(r.config)
    kw = {"device": "d", "kernel_id": "k", "kernel_name": "heat"}
    assert store.claim("d", "k", [key], "host/1/x", 0.05) == {key}
    time.sleep(0.1)
    assert store.claim("d", "k", [key], "host/2/y", 600) == {key}  # taken over
    assert store.add(r, **kw, owner="host/1/x") is False
    assert store.count() == 0
    assert store.add(r, **kw, owner="host/2/y") is True
    assert store.claimed("d", "k", [key]) == {}
    assert store.add(r, **kw, owner="host/1/x") is False  # no claim at all: not its to write
    assert store.count() == 1


def test_refusals_are_derived_from_results(store: ResultStore):
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


def test_schema_version(store_url: str):
    with open_store(store_url) as store:
        assert store.schema_version() == SCHEMA_VERSION
    raw_execute(store_url, "UPDATE meta SET value = '99' WHERE key = 'version'")
    with pytest.raises(StoreError, match=r"newer gtune.*schema version 99") as err:
        open_store(store_url)
    assert err.value.source is not None and "password" not in err.value.render()


def test_malformed_row_is_one_clear_error(store: ResultStore, store_url: str):
    _add(store, 1)
    _add(store, 2)
    two = config_key({"WX": 2, "WY": 1})
    raw_execute(store_url, "UPDATE results SET times = 'not json' WHERE config = ?", [two])
    with pytest.raises(StoreError, match=r"row \d+ is malformed") as err:
        list(store.rows())
    assert err.value.source == store.location
    raw_execute(store_url, "UPDATE results SET times = '[]', status = 'melted'")
    with pytest.raises(StoreError, match="malformed"):
        store.results()


def test_readonly_postgresql_session_is_refused_at_open(pg_url: str):
    with open_store(pg_url) as store:
        _add(store, 1)
    ro_url = pg_url + "%20-cdefault_transaction_read_only%3Don"
    with pytest.raises(StoreError, match=r"cannot write the result store.*read-only"):
        open_store(ro_url)
    with open_store(ro_url, readonly=True) as ro:
        assert len(ro.results()) == 1


def _as_unprivileged(work: Callable[[], str]) -> str:
    """``work()`` run by a user without root's licence to write anything (a forked
    child that drops to ``nobody`` when we are root); returns what it returned."""
    if os.geteuid() != 0:
        return work()
    import pwd

    user = pwd.getpwnam("nobody")
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:  # pragma: no cover - the child
        os.close(read)
        try:
            os.setgroups([])
            os.setgid(user.pw_gid)
            os.setuid(user.pw_uid)
            out = work()
        except BaseException as exc:
            out = f"CRASH {exc!r}"
        os.write(write, out.encode())
        os._exit(0)
    os.close(write)
    with os.fdopen(read) as f:
        out = f.read()
    os.waitpid(pid, 0)
    return out


def _try_open(url: str, readonly: bool = False) -> str:
    try:
        with open_store(url, readonly=readonly) as store:
            return f"OPEN {len(store.results())}"
    except GtuneError as exc:
        return f"ERROR {exc.render()}"


@pytest.fixture
def shared_dir() -> Iterator[Path]:
    """A folder an unprivileged user can reach (pytest's own are private to root)."""
    path = Path(tempfile.mkdtemp(prefix="gtune-store-"))
    path.chmod(0o755)
    yield path
    for p in [path, *path.rglob("*")]:
        p.chmod(0o755 if p.is_dir() else 0o644)
    shutil.rmtree(path)


def test_readonly_sqlite_files_are_refused_at_open(shared_dir: Path):
    db = shared_dir / "store" / "r.db"
    with open_store(db) as store:
        _add(store, 1)
    for f in db.parent.iterdir():
        f.chmod(0o444)
    out = _as_unprivileged(lambda: _try_open(str(db)))
    assert out.startswith(f"ERROR {db}: cannot write the result store"), out
    assert _as_unprivileged(lambda: _try_open(str(db), readonly=True)) == "OPEN 1"
    # a read-only folder: neither a new store nor the write-ahead log can be made there
    db.parent.chmod(0o555)
    new = db.parent / "new.db"
    out = _as_unprivileged(lambda: _try_open(str(new)))
    assert out.startswith(f"ERROR {new}: cannot "), out
    for f in db.parent.iterdir():
        f.chmod(0o644)
    out = _as_unprivileged(lambda: _try_open(str(db)))
    assert out.startswith(f"ERROR {db}: cannot "), out


def test_unreachable_postgresql_is_an_environment_problem(tmp_path: Path):
    url = f"postgresql://gtune:secret@/postgres?host={tmp_path}&connect_timeout=2"
    with pytest.raises(EnvironmentProblem, match="cannot connect") as err:
        open_store(url)
    assert "secret" not in err.value.render() and "***" in err.value.render()


def test_sqlite_path_under_a_file_is_refused(tmp_path: Path):
    (tmp_path / "plain").write_text("x")
    with pytest.raises(StoreError, match="cannot create the folder") as err:
        open_store(str(tmp_path / "plain" / "r.db"))
    assert str(tmp_path / "plain" / "r.db") in err.value.render()


def test_sqlite_garbage_file_is_one_clear_error(tmp_path: Path):
    db = tmp_path / "r.db"
    db.write_bytes(b"this is no database" * 100)
    with pytest.raises(StoreError, match="file is not a database") as err:
        open_store(db)
    assert str(db) in err.value.render()


@pytest.mark.parametrize(
    "url", ["mysql://x/y", "sqlite:relative.db", "   "], ids=["scheme", "sqlite", "empty"]
)
def test_bad_urls(url: str):
    with pytest.raises(InputError):
        open_store(url)


def test_url_forms(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    monkeypatch.chdir(tmp_path)
    for url, path in [
        ("plain.db", tmp_path / "plain.db"),
        ("sqlite:///rel.db", tmp_path / "rel.db"),
        (f"sqlite:///{tmp_path}/abs.db", tmp_path / "abs.db"),
    ]:
        open_store(url).close()
        assert path.exists(), url
    monkeypatch.setenv("GTUNE_DB", str(tmp_path / "env.db"))
    open_store(None).close()
    assert (tmp_path / "env.db").exists()
    with open_store("sqlite://") as mem:
        assert mem.count() == 0


def test_version_1_store_is_migrated(tmp_path: Path):
    """The first store kept one row per configuration; it becomes append-only."""
    import sqlite3

    db = tmp_path / "old.db"
    with sqlite3.connect(db) as con:
        con.executescript(V1_SCHEMA)
        con.execute(
            "INSERT INTO results (device, kernel_id, kernel_name, problem, config, status,"
            " compile_s, times, median_s, message, error_code, max_error, extra, created)"
            " VALUES ('d', 'k', 'heat', '{}', '{\"WX\":1,\"WY\":1}', 'timeout', 0, '[]', NULL, '',"
            " NULL, NULL, '{}', 1.0)"
        )
    with open_store(db, readonly=True) as ro:
        assert ro.schema_version() == 1 and len(ro.results()) == 1
    with open_store(db) as store:
        assert store.schema_version() == SCHEMA_VERSION
        store.add(result(1), device="d", kernel_id="k")  # UNIQUE is gone
        assert [r.result.status for r in store.rows(history=True)] == [Status.TIMEOUT, Status.OK]
        assert store.results()[0].status is Status.OK


V1_SCHEMA = """
CREATE TABLE results (
    id INTEGER PRIMARY KEY AUTOINCREMENT, device TEXT NOT NULL, kernel_id TEXT NOT NULL,
    kernel_name TEXT NOT NULL, problem TEXT NOT NULL, config TEXT NOT NULL,
    status TEXT NOT NULL, compile_s REAL NOT NULL, times TEXT NOT NULL, median_s REAL,
    message TEXT NOT NULL, error_code INTEGER, max_error REAL, extra TEXT NOT NULL,
    created REAL NOT NULL, UNIQUE (device, kernel_id, config));
CREATE INDEX results_kernel ON results (kernel_name, device);
"""


# -- StoredEvaluator over each backend --------------------------------------------


def _recording() -> ReplayEvaluator:
    return ReplayEvaluator(
        [result(1), result(2, status=Status.TIMEOUT), result(3, status=Status.CRASHED)]
    )


def _evaluator(store: ResultStore, inner: ReplayEvaluator, **kw: object) -> StoredEvaluator:
    return StoredEvaluator(inner, store, device="dev", kernel_id="kid", **kw)  # type: ignore[arg-type]


CONFIGS = [{"WX": w, "WY": 1} for w in (1, 2, 3)]


def test_stored_evaluator_measures_once_and_serves_repeats(store: ResultStore):
    inner = _recording()
    ev = _evaluator(store, inner)
    got = list(ev.evaluate_batch([*CONFIGS, CONFIGS[0]]))
    assert [r.config["WX"] for r in got] == [1, 2, 3, 1]
    assert (ev.measured, ev.reused) == (3, 1)
    again = _evaluator(store, inner)
    list(again.evaluate_batch(CONFIGS))
    assert (again.measured, again.reused) == (0, 3)
    assert len(inner.calls) == 3


def test_results_are_looked_up_per_batch(store: ResultStore):
    inner_a, inner_b = _recording(), _recording()
    a, b = _evaluator(store, inner_a), _evaluator(store, inner_b)  # both exist before
    a.evaluate(CONFIGS[0])
    assert b.evaluate(CONFIGS[0]).ok and b.reused == 1 and inner_b.calls == []


def test_remeasure_statuses(store: ResultStore):
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


def test_timeout_rows_remember_their_timeout(store: ResultStore):
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


def test_interrupted_batch_releases_its_claims(store: ResultStore):
    ev = _evaluator(store, _recording())
    batch = ev.evaluate_batch(CONFIGS)
    next(batch)
    batch.close()  # a search stopping early
    assert store.claimed("dev", "kid", [config_key(c) for c in CONFIGS]) == {}


def test_two_processes_measure_each_configuration_once(store_url: str, tmp_path: Path):
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
        assert store.claimed("dev", "kid", [config_key({"WX": w, "WY": 1}) for w in forward]) == {}


def test_a_stopped_process_measures_nothing_twice(store_url: str, tmp_path: Path):
    """A process holding claims is stopped (SIGSTOP): another takes its claims over at
    once instead of waiting out the lease; when the first continues it checks its claims
    before measuring and before writing, so no configuration is stored twice."""
    log = tmp_path / "measured.log"
    env = dict(os.environ, PYTHONPATH=str(Path(__file__).parents[2]))

    def start(delay: float) -> subprocess.Popen[str]:
        code = (
            "from tests.store.helpers import tune_process; "
            f"print(tune_process({store_url!r}, {str(log)!r}, list(range(1, 41)), 40, {delay}))"
        )
        return subprocess.Popen(
            [sys.executable, "-c", code], env=env, stdout=subprocess.PIPE, text=True
        )

    first = start(0.8)
    try:
        _until(lambda: log.exists() and len(log.read_text().splitlines()) >= 2, "no progress")
        # stopped while it measures: well after the writes that follow a measurement (a
        # SQLite writer stopped inside its write would hold the file's lock: that is
        # SQLite's, and nothing gtune can take over)
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


def test_processes_opening_a_new_store_together(store_url: str):
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


def test_errors_name_the_store(store_url: str):
    store = open_store(store_url, readonly=True)
    with store, pytest.raises(GtuneError, match="read-only"):
        _add(store, 1)


def test_a_postgresql_restart_does_not_stop_a_run() -> None:
    """The server goes away for a few seconds (a restart): every operation meanwhile
    waits for it and goes on, on a new connection; nothing is lost or doubled."""
    import threading

    from tests.store.conftest import Cluster, pg_binary

    if pg_binary("pg_ctl") is None:
        pytest.skip("needs PostgreSQL's pg_ctl")
    cluster = Cluster()
    try:
        store = open_store(cluster.url)
        owner = f"{socket.gethostname()}/{os.getpid()}/r"
        keys = [config_key({"WX": w, "WY": 1}) for w in range(1, 21)]
        assert store.claim("dev", "kid", keys, owner, 600) == set(keys)
        restart = threading.Thread(target=cluster.restart, args=(2.5,))
        restart.start()
        for w in range(1, 21):  # one result every 0.25 s, across the restart
            assert store.add(result(w), device="dev", kernel_id="kid", owner=owner)
            time.sleep(0.25)
        restart.join()
        assert store.count() == 20
        assert len(store.latest("dev", "kid", keys)) == 20
        assert store.claimed("dev", "kid", keys) == {}
        store.close()
    finally:
        cluster.stop()

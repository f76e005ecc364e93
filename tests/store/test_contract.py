"""The store contract (:class:`gtune.testing.StoreContract`, shipped in the package) on
each backend: SQLite and a real PostgreSQL server; then what is particular to each:
schema versions and damaged rows (written behind gtune's back), read-only stores, URLs."""

from __future__ import annotations

import os
import shutil
import socket
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from gtune.exceptions import EnvironmentProblem, GtuneError, InputError
from gtune.result import ResultStore, Status, config_key
from gtune.store import SCHEMA_VERSION, StoreError, open_store
from gtune.testing.store import StoreContract, result
from tests.store.helpers import raw_execute


def _add(store: ResultStore, wx: int, status: Status = Status.OK, **kw: object) -> None:
    store.add(
        result(wx, status=status),
        device=str(kw.get("device", "gpu-1")),
        kernel_id=str(kw.get("kernel_id", "kid-a")),
        kernel_name=str(kw.get("kernel_name", "heat")),
        problem={"NX": 64},
    )


class TestStoreContract(StoreContract):
    """Every backend of ``store_url`` (tests/store/conftest.py): SQLite, PostgreSQL."""


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


# -- PostgreSQL going away ---------------------------------------------------------


@pytest.mark.postgres  # starts a PostgreSQL server of its own: the postgres tier
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

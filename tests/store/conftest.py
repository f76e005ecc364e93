"""Store fixtures: a throw-away PostgreSQL cluster for the session, one fresh schema per
test, and a store of each backend.

The cluster is Debian's ``postgresql`` binaries (``./bootstrap.sh`` installs them), run
with ``initdb`` and ``pg_ctl`` in a temporary folder, listening only on a Unix socket in
that folder. PostgreSQL refuses to run as root: as root, the server runs as the
``postgres`` user (or ``nobody``). Where no server can be started (no binaries, no
psycopg, initdb or pg_ctl failing) the PostgreSQL tests are skipped with the reason;
``GTUNE_REQUIRE_POSTGRES=1`` (CI) makes that a failure, ``GTUNE_NO_POSTGRES=1`` skips
them without trying. They are the ``postgres`` tier (tests/conftest.py).
"""

from __future__ import annotations

import glob
import os
import pwd
import shutil
import subprocess
import tempfile
import uuid
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import NoReturn

import pytest

from gtune.result import ResultStore
from gtune.store import open_store

BACKENDS = ("sqlite", "postgresql")


def pg_binary(name: str) -> str | None:
    found = shutil.which(name)
    if found:
        return found
    candidates = sorted(glob.glob(f"/usr/lib/postgresql/*/bin/{name}"))
    return candidates[-1] if candidates else None


def unprivileged_user() -> str:
    """A user to run what refuses to run as root (PostgreSQL, permission checks)."""
    for name in ("postgres", "nobody"):
        try:
            pwd.getpwnam(name)
            return name
        except KeyError:
            continue
    raise RuntimeError("no unprivileged user (postgres or nobody) on this machine")


def as_user(cmd: Sequence[str]) -> list[str]:
    """``cmd``, run as an unprivileged user when we are root."""
    if os.geteuid() != 0:
        return list(cmd)
    return ["runuser", "-u", unprivileged_user(), "--", *cmd]


class Cluster:
    def __init__(self) -> None:
        initdb, pg_ctl = pg_binary("initdb"), pg_binary("pg_ctl")
        if not initdb or not pg_ctl:
            raise FileNotFoundError("initdb/pg_ctl")
        self.pg_ctl = pg_ctl
        self.dir = Path(tempfile.mkdtemp(prefix="gtune-pg-"))
        self.data = self.dir / "data"
        if os.geteuid() == 0:
            user = pwd.getpwnam(unprivileged_user())
            os.chown(self.dir, user.pw_uid, user.pw_gid)
        os.chmod(self.dir, 0o755)
        env = dict(os.environ, LC_ALL="C")
        subprocess.run(
            as_user(
                [initdb, "-D", str(self.data), "-U", "postgres", "--auth=trust", "-E", "UTF8", "-N"]
            ),
            check=True,
            capture_output=True,
            env=env,
        )
        options = f"-k {self.dir} -c listen_addresses= -F -c max_connections=50"
        start = [pg_ctl, "-D", str(self.data), "-o", options, "-l", str(self.dir / "log")]
        self.start_cmd = as_user([*start, "-w", "start"])
        self.env = env
        subprocess.run(self.start_cmd, check=True, capture_output=True, env=env)
        self.url = f"postgresql:///postgres?host={self.dir}&user=postgres"

    def restart(self, down_s: float) -> None:
        """Stop the server, wait ``down_s`` seconds, start it again."""
        import time

        subprocess.run(
            as_user([self.pg_ctl, "-D", str(self.data), "-m", "fast", "-w", "stop"]),
            check=True,
            capture_output=True,
        )
        time.sleep(down_s)
        subprocess.run(self.start_cmd, check=True, capture_output=True, env=self.env)

    def stop(self) -> None:
        subprocess.run(
            as_user([self.pg_ctl, "-D", str(self.data), "-m", "fast", "-w", "stop"]),
            capture_output=True,
        )
        shutil.rmtree(self.dir, ignore_errors=True)


def _no_server(reason: str) -> NoReturn:
    """Skip, naming why no server could be started; fail instead where one is required
    (``GTUNE_REQUIRE_POSTGRES=1``, set by CI, where ./bootstrap.sh installs PostgreSQL)."""
    if os.environ.get("GTUNE_REQUIRE_POSTGRES") == "1":
        pytest.fail(f"{reason} (GTUNE_REQUIRE_POSTGRES=1 requires a server)", pytrace=False)
    pytest.skip(reason)


@pytest.fixture(scope="session")
def pg_cluster() -> Iterator[Cluster]:
    if os.environ.get("GTUNE_NO_POSTGRES") == "1":
        pytest.skip("PostgreSQL tests skipped (GTUNE_NO_POSTGRES=1)")
    if pg_binary("initdb") is None or pg_binary("pg_ctl") is None:
        _no_server(
            "no PostgreSQL server can be started: initdb/pg_ctl not found on PATH or in "
            "/usr/lib/postgresql/*/bin (./bootstrap.sh installs Debian's postgresql package)"
        )
    try:
        import psycopg  # noqa: F401
    except ImportError:
        _no_server("no PostgreSQL client: psycopg is not installed (pip install -e '.[dev]')")
    try:
        cluster = Cluster()
    except (subprocess.CalledProcessError, OSError, RuntimeError) as exc:
        detail = getattr(exc, "stderr", None) or exc
        _no_server(f"no PostgreSQL server could be started: {detail!r}")
    try:
        yield cluster
    finally:
        cluster.stop()


@pytest.fixture
def pg_url(pg_cluster: Cluster) -> str:
    """A URL to an empty schema of the session's cluster (a fresh store per test)."""
    import psycopg

    schema = f"t_{uuid.uuid4().hex[:12]}"
    with psycopg.connect(pg_cluster.url, autocommit=True) as con:
        con.execute(f"CREATE SCHEMA {schema}")
    return f"{pg_cluster.url}&options=-csearch_path%3D{schema}"


@pytest.fixture(params=BACKENDS)
def store_url(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    """A fresh store's URL on each backend."""
    if request.param == "postgresql":
        return str(request.getfixturevalue("pg_url"))
    return f"sqlite:///{tmp_path / 'results.db'}"


@pytest.fixture
def store(store_url: str) -> Iterator[ResultStore]:
    s = open_store(store_url)
    try:
        yield s
    finally:
        s.close()

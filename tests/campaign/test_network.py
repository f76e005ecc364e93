"""What a campaign exposes on the network: a local cluster on loopback only, no
dashboard unless asked for, TLS to a remote scheduler, and a scheduler that never
answers does not hang a campaign."""

from __future__ import annotations

import contextlib
import gc
import socket
import subprocess
import threading
import time
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

import psutil
import pytest

from gtune.campaign import CancelToken, SchedulerTls, local_cluster, parse_campaign, run_campaign
from gtune.campaign.runner import _connect, _security
from gtune.exceptions import EnvironmentProblem, InputError
from tests.conftest import ROOT

pytestmark = [pytest.mark.slow]

MACHINE = [{"selector": "0:0", "name": "cpu", "type": "CPU", "platform": "p", "identity": "x"}]


def _listening(skip: set[tuple[int, str, int]]) -> set[tuple[int, str, int]]:
    """Listening TCP sockets of this process and its children, as the OS lists them."""
    me = psutil.Process()
    found: set[tuple[int, str, int]] = set()
    for proc in [me, *me.children(recursive=True)]:
        try:
            conns = proc.net_connections("inet")
        except psutil.Error:
            continue
        for c in conns:
            if c.status == psutil.CONN_LISTEN:
                found.add((proc.pid, c.laddr.ip, c.laddr.port))
    return found - skip


def _get(url: str) -> int:
    try:
        with urllib.request.urlopen(url, timeout=5) as reply:
            return int(reply.status)
    except urllib.error.HTTPError as exc:
        return exc.code


def test_local_cluster_listens_on_loopback_only_and_serves_no_dashboard() -> None:
    before = _listening(set())
    cluster = local_cluster(["0:0"], machine=MACHINE)
    try:
        # TLS with the cluster's own credentials (test_lost_worker_and_tls.py)
        assert cluster.scheduler_address.startswith("tls://127.0.0.1:")
        workers = cluster.scheduler_info["workers"]
        assert workers and all(a.startswith("tls://127.0.0.1:") for a in workers)
        opened = _listening(before)
        # the scheduler, its HTTP server, the worker and the worker's HTTP server
        assert len(opened) >= 3, opened
        assert {ip for _, ip, _ in opened} == {"127.0.0.1"}, opened
        http = cluster.scheduler.http_server
        base = f"http://127.0.0.1:{http.port}"
        assert http.address == "127.0.0.1"
        assert _get(base + "/health") == 200
        for page in ("/status", "/info/main/workers.html", "/json/identity.json"):
            assert _get(base + page) == 404, page
    finally:
        cluster.close(timeout=20)


def test_a_dashboard_asked_for_is_served_on_loopback() -> None:
    cluster = local_cluster(["0:0"], machine=MACHINE, dashboard=True)
    try:
        link = cluster.dashboard_link
        assert link.startswith("http://127.0.0.1:"), link
        assert _get(link) == 200
        assert cluster.scheduler.http_server.address == "127.0.0.1"
    finally:
        cluster.close(timeout=20)


def _spec(tmp_path: Path) -> Any:
    return parse_campaign(
        {"name": "n", "kernels": [str(ROOT / "stencils" / "heat3d.cl")], "sizes": ["8x8x8"]},
        source="n.yaml",
        base_dir=tmp_path,
    )


@pytest.fixture
def silent_server() -> Any:
    """A TCP server that accepts connections and never says a word."""
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(8)
    held: list[socket.socket] = []

    def accept() -> None:
        while True:
            try:
                conn, _ = server.accept()
            except OSError:
                return
            held.append(conn)

    threading.Thread(target=accept, daemon=True).start()
    yield f"tcp://127.0.0.1:{server.getsockname()[1]}"
    server.close()
    for conn in held:
        conn.close()


def test_a_scheduler_that_never_answers_is_given_up_on(tmp_path: Path, silent_server: str) -> None:
    started = time.monotonic()
    with pytest.raises(EnvironmentProblem, match="did not answer"):
        run_campaign(_spec(tmp_path), tmp_path / "c", scheduler=silent_server, connect_timeout=1)
    assert time.monotonic() - started < 30


def test_cancel_while_connecting_returns_at_once(tmp_path: Path, silent_server: str) -> None:
    token = CancelToken()
    threading.Timer(1.0, token.cancel).start()
    started = time.monotonic()
    result = run_campaign(
        _spec(tmp_path), tmp_path / "c", scheduler=silent_server, cancel=token, connect_timeout=60
    )
    assert result.cancelled and not result.summaries
    assert time.monotonic() - started < 10


def test_tls_options_are_checked_before_connecting(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="needs certificates"):
        _security("tls://127.0.0.1:1", None)
    with pytest.raises(InputError, match="no such file"):
        _security("tls://127.0.0.1:1", SchedulerTls(str(tmp_path / "ca.pem"), "c.pem"))
    (tmp_path / "ca.pem").write_text("x")
    (tmp_path / "c.pem").write_text("x")
    with pytest.raises(InputError, match="not tls://"):
        _security(
            "tcp://127.0.0.1:1", SchedulerTls(str(tmp_path / "ca.pem"), str(tmp_path / "c.pem"))
        )


def _openssl(*args: str, cwd: Path) -> None:
    subprocess.run(["openssl", *args], cwd=cwd, check=True, capture_output=True, timeout=60)


def _certificates(d: Path) -> None:
    """A certificate authority, and a certificate it signed for 127.0.0.1."""
    _openssl(
        "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", "ca.key", "-out", "ca.pem",
        "-days", "2", "-subj", "/CN=gtune test CA", cwd=d,
    )  # fmt: skip
    _openssl(
        "req", "-newkey", "rsa:2048", "-nodes", "-keyout", "node.key", "-out", "node.csr",
        "-subj", "/CN=127.0.0.1", cwd=d,
    )  # fmt: skip
    (d / "ext.cnf").write_text("subjectAltName=IP:127.0.0.1,DNS:localhost\n")
    _openssl(
        "x509", "-req", "-in", "node.csr", "-CA", "ca.pem", "-CAkey", "ca.key",
        "-CAcreateserial", "-out", "node.pem", "-days", "2", "-extfile", "ext.cnf", cwd=d,
    )  # fmt: skip


@pytest.mark.skipif(
    subprocess.run(["which", "openssl"], capture_output=True).returncode != 0,
    reason="needs the openssl command to make certificates",
)
def test_a_tls_scheduler_is_reached_with_certificates_and_refused_without(
    tmp_path: Path,
) -> None:
    from distributed import LocalCluster, Security

    _certificates(tmp_path)
    ca, cert, key = (str(tmp_path / n) for n in ("ca.pem", "node.pem", "node.key"))
    server_security = Security(
        tls_ca_file=ca,
        tls_scheduler_cert=cert,
        tls_scheduler_key=key,
        tls_worker_cert=cert,
        tls_worker_key=key,
        tls_client_cert=cert,
        tls_client_key=key,
        require_encryption=True,
    )
    cluster = LocalCluster(
        n_workers=0,
        processes=False,
        protocol="tls://",
        host="127.0.0.1",
        security=server_security,
        dashboard_address=None,
    )
    try:
        address = cluster.scheduler_address
        assert address.startswith("tls://127.0.0.1:")
        tls = SchedulerTls(ca, cert, key)
        client = _connect(address, _security(address, tls), CancelToken(), 20)
        try:
            assert client.scheduler_info()["address"] == address
        finally:
            client.close()
        # a plain (unencrypted) client is not let in, and leaves no client behind: one
        # collected later could close itself inside another client's start and hang
        # there (distributed's LoopRunner holds a class-wide lock while it starts)
        from distributed import Client

        def clients() -> int:
            return sum(isinstance(o, Client) for o in gc.get_objects())

        del client
        gc.collect()
        before = clients()
        plain = "tcp://" + address.removeprefix("tls://")
        with pytest.raises(EnvironmentProblem):
            _connect(plain, _security(plain, None), CancelToken(), 5)
        assert clients() <= before
    finally:
        cluster.close(timeout=20)


@pytest.mark.parametrize(
    ("extra", "needle"),
    [
        (["--strategies", "no-such-strategy"], "no-such-strategy"),
        (["--store", "mysql://db/x"], "mysql"),
    ],
)
def test_a_campaign_mistake_is_named_before_any_cluster_starts(
    tmp_path: Path, extra: list[str], needle: str
) -> None:
    from tests.conftest import run_gtune

    heat = str(ROOT / "stencils" / "heat3d.cl")
    started = time.monotonic()
    done = run_gtune(
        "campaign", "--kernels", heat, "--sizes", "8x8x8", "--out", str(tmp_path / "c"), *extra
    )
    assert done.returncode == 2, done.stderr
    assert needle in done.stderr and "Traceback" not in done.stderr
    assert time.monotonic() - started < 20


def _campaign_at_a_terminal(tmp_path: Path) -> subprocess.Popen[str]:
    """``gtune campaign`` on heat3d in a process group of its own, as a terminal runs it:
    work for far longer than the Ctrl-C waits (a campaign of 60 configurations at 16^3
    finished in 6 s on a fast day, and a Ctrl-C at 5 s then met it exiting)."""
    import os
    import sys

    heat = str(ROOT / "stencils" / "heat3d.cl")
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    cmd = [sys.executable, "-m", "gtune", "campaign", "--kernels", heat, "--sizes", "32x32x32"]
    return subprocess.Popen(
        [*cmd, "--budget", "2000", "--out", str(tmp_path / "c")],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )


def _ctrl_c_stops_it(proc: subprocess.Popen[str]) -> None:
    """SIGINT to the whole process group, as a terminal's Ctrl-C sends it: exit 2, one
    message, no traceback."""
    import os
    import signal

    os.killpg(proc.pid, signal.SIGINT)
    _, err = proc.communicate(timeout=120)
    assert proc.returncode == 2, err
    assert "Traceback" not in err and "KeyboardInterrupt" not in err, err
    assert "interrupted" in err


@pytest.mark.opencl
@pytest.mark.parametrize("after", [1.0, 5.0])
def test_ctrl_c_at_the_terminal_stops_a_campaign_without_a_traceback(
    tmp_path: Path, after: float
) -> None:
    """SIGINT to the whole process group, as a terminal's Ctrl-C sends it (a Ctrl-C
    while the command line loads: tests/commands/test_cli_logging.py)."""
    proc = _campaign_at_a_terminal(tmp_path)
    time.sleep(after)
    _ctrl_c_stops_it(proc)


@pytest.mark.opencl
def test_ctrl_c_while_the_local_cluster_starts_stops_the_campaign(tmp_path: Path) -> None:
    """While the local cluster starts, gtune ignores SIGINT (its processes inherit
    that); a Ctrl-C then is still seen, by the sentinel process, and stops the campaign
    once the cluster is up: exit 2, no traceback, nothing run."""
    proc = _campaign_at_a_terminal(tmp_path)
    # the sentinel appears just before SIGINT is ignored; the cluster then takes seconds
    deadline = time.monotonic() + 60
    sentinel = None
    while sentinel is None and time.monotonic() < deadline and proc.poll() is None:
        for child in psutil.Process(proc.pid).children():
            with contextlib.suppress(psutil.Error):
                if "time.sleep(86400)" in " ".join(child.cmdline()):
                    sentinel = child
        time.sleep(0.05)
    assert sentinel is not None, "no sentinel process while the cluster started"
    time.sleep(0.3)
    _ctrl_c_stops_it(proc)
    assert not sentinel.is_running() or sentinel.status() == psutil.STATUS_ZOMBIE


@pytest.mark.parametrize("command", ["campaign", "train"])
def test_both_commands_take_the_scheduler_tls_flags(
    command: str,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """`gtune campaign` and `gtune train --scheduler` share the TLS flags and their checks:
    certificates without a scheduler, half a pair, and a missing file are refused before
    anything connects (exit 2, the flag or file named). In-process (gtune.cli.main, what
    the program runs, as tests/test_hardening.py does): each refusal is the command
    line's own, with no interpreter to start."""
    from gtune.cli import main

    monkeypatch.chdir(tmp_path)  # where a campaign's folder would go (campaign-n)
    spec = tmp_path / "n.yaml"
    spec.write_text(f"name: n\nkernels: [{ROOT / 'stencils' / 'heat3d.cl'}]\nsizes: [8x8x8]\n")
    target = (
        [str(spec)]
        if command == "campaign"
        else ["--suite", "garvey104", "--kernels", "star_3d_xyz_r1", "--out", str(tmp_path)]
    )

    def gtune(*args: str) -> tuple[int, str]:
        code = main(["--db", str(tmp_path / "s.db"), command, *target, *args])
        return code, capsys.readouterr().err

    code, err = gtune("--tls-cert", "c.pem")
    assert code == 2, err
    assert "--tls-cert" in err and "remote scheduler" in err
    code, err = gtune("--scheduler", "tls://127.0.0.1:1", "--tls-cert", "c.pem")
    assert code == 2 and "both --tls-ca-file and --tls-cert" in err
    code, err = gtune(
        "--scheduler", "tls://127.0.0.1:1",
        "--tls-ca-file", str(tmp_path / "ca.pem"), "--tls-cert", str(tmp_path / "c.pem"),
    )  # fmt: skip
    assert code == 2, err
    assert "ca.pem" in err and "Traceback" not in err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["n.yaml"]  # nothing written

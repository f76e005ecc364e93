from __future__ import annotations

import contextlib
import fnmatch
import json
import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

# numpy's OpenBLAS starts a thread per core when imported, about 75 ms of CPU in each
# of the suite's 1,300 Python processes (measure workers, references, commands); none
# of them needs BLAS threads. Set before numpy is imported here; children inherit it.
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

from gtune.description import TRUST_ENV
from tests.inprocess import Cli, gtune_in_process

DATA = Path(__file__).parent / "data"
ROOT = Path(__file__).parent.parent

# The test tiers. Bare ``python -m pytest`` runs the fast tier: pure tests and tests that
# replay recorded measurements, less those marked ``slow``. The real tiers run real
# parts: OpenCL kernels on PoCL, the MiniZinc binary, a throw-away PostgreSQL server, a
# Dask LocalCluster. They (and the slow tests) run
# with ``--all-tiers`` (``./bootstrap.sh test`` and CI pass it), with ``-m`` naming
# markers, or when test files or folders are named on the command line.
REAL_TIERS = ("opencl", "minizinc", "postgres", "dask")
# Tests of a candidate template (a patch under benchmarks/candidates/, not the package's
# code, decided by a device A/B): they run when asked for (``--candidates``, ``-m
# candidate``, or their files named), not with the tiers, so CI tests what ships.
CANDIDATE = "candidate"
# End-to-end runs of a benchmark script (benchmarks/: the tools behind the committed
# measurements, not the package): minutes of a two-core machine that CI spends on what
# ships. They run when asked for (``--bench``, ``-m bench``, or their files named), as
# before a device call that uses the script; each script keeps its cheap checks (bad
# input, parsing, replays) in CI.
BENCH = "bench"
# Fixtures that bring a real part with them: a test using one is in that tier.
FIXTURE_TIERS = {"pg_cluster": "postgres", "pg_url": "postgres"}
# Parametrized fixtures whose value picks a real part (the store backends).
PARAM_TIERS = {("store_url", "postgresql"): "postgres"}


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--all-tiers",
        action="store_true",
        help="run every test tier: fast, plus OpenCL (PoCL), MiniZinc, PostgreSQL and Dask",
    )
    parser.addoption(
        "--candidates",
        action="store_true",
        help="also run the tests of the candidate templates (benchmarks/candidates/)",
    )
    parser.addoption(
        "--bench",
        action="store_true",
        help="also run the end-to-end runs of the benchmark scripts (benchmarks/)",
    )
    parser.addoption(
        "--shard",
        metavar="K/N",
        help="run the K-th (1..N) of N disjoint shares of the selected tests, whole files "
        "each, of about equal expected time (./bootstrap.sh test runs N at once with "
        "GTUNE_TEST_JOBS=N)",
    )
    parser.addoption(
        "--record-durations",
        metavar="FILE",
        help="add each test file's seconds in this run to FILE (JSON), which --shard "
        "reads to share files out; several processes may write to it at once",
    )


POCL_FLAGS = "POCL_EXTRA_BUILD_FLAGS"
UNOPTIMISED = "-cl-opt-disable"


# What a test run may add to the checkout's top folder: the caches of its tools.
CHECKOUT_CACHES = frozenset({".hypothesis", ".pytest_cache", "__pycache__"})
_checkout_before = pytest.StashKey[dict[str, float]]()


def _checkout_top() -> dict[str, float]:
    """The checkout's top entries and their modification times."""
    return {p.name: p.stat().st_mtime for p in ROOT.iterdir() if p.name not in CHECKOUT_CACHES}


def _checkout_written(before: dict[str, float]) -> list[str]:
    """Top entries a test run added to the checkout, and stores named as the default
    it wrote to there (a test that removes ``$GTUNE_DB`` and tunes in the checkout, a
    campaign without ``--out`` run there: ./campaign-NAME/): tests write under their
    temporary folders only."""
    after = _checkout_top()
    added = sorted(set(after) - set(before))
    stores = sorted(
        n
        for n in set(after) & set(before)
        if n.startswith("gtune-results.db") and after[n] != before[n]
    )
    return added + [f"{n} (written)" for n in stores]


@pytest.fixture(autouse=True)
def _a_default_store_of_its_own(
    tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A test that tunes or runs a command without a store of its own gets the default
    store (``$GTUNE_DB``) in a temporary folder of its own, not ./gtune-results.db
    wherever the suite runs; a test of the default itself removes the variable."""
    if "GTUNE_DB" not in os.environ:
        store = tmp_path_factory.mktemp("default-store") / "gtune-results.db"
        monkeypatch.setenv("GTUNE_DB", str(store))


def pytest_configure(config: pytest.Config) -> None:
    config.stash[_checkout_before] = _checkout_top()
    # PoCL builds the suite's kernels without LLVM's optimiser. A new machine (CI's)
    # starts with PoCL's kernel cache empty and builds several thousand kernels, which
    # an optimised build makes 2.6 times as long; the kernels are the same OpenCL C on
    # the same PoCL, built and run for real. Tests of the real stencils build with the
    # optimiser (``pocl_optimised``); GTUNE_TEST_POCL_OPTIMISE=1 builds every kernel so.
    if os.environ.get("GTUNE_TEST_POCL_OPTIMISE") != "1":
        os.environ.setdefault(POCL_FLAGS, UNOPTIMISED)


@pytest.fixture(scope="module")
def pocl_optimised() -> Iterator[None]:
    """The module's kernels are built with PoCL's optimiser (its worker processes
    start inside the module, with this environment)."""
    before = os.environ.get(POCL_FLAGS)
    if before == UNOPTIMISED:
        del os.environ[POCL_FLAGS]
    yield
    if before == UNOPTIMISED:
        os.environ[POCL_FLAGS] = before


def _fast_tier_only(config: pytest.Config) -> bool:
    return not (
        config.getoption("--all-tiers") or config.option.markexpr or config.option.file_or_dir
    )


def _candidates_asked(config: pytest.Config) -> bool:
    return bool(
        config.getoption("--candidates")
        or CANDIDATE in (config.option.markexpr or "")
        or any("candidate" in str(f) for f in config.option.file_or_dir or ())
    )


def _bench_asked(config: pytest.Config) -> bool:
    """``--bench``, ``-m bench``, or a test file (not a folder) named."""
    return bool(
        config.getoption("--bench")
        or BENCH in (config.option.markexpr or "")
        or any(".py" in str(f) for f in config.option.file_or_dir or ())
    )


def _leave_out(config: pytest.Config, items: list[pytest.Item], marker: str) -> None:
    """Deselect the tests with ``marker``."""
    out = [i.get_closest_marker(marker) is not None for i in items]
    if any(out):
        config.hook.pytest_deselected(items=[i for i, o in zip(items, out, strict=True) if o])
        items[:] = [i for i, o in zip(items, out, strict=True) if not o]


def _mark_tiers(item: pytest.Item) -> None:
    names = set(getattr(item, "fixturenames", ()))
    for fixture, tier in FIXTURE_TIERS.items():
        if fixture in names:
            item.add_marker(tier)
    callspec = getattr(item, "callspec", None)
    if callspec is not None:
        for (fixture, value), tier in PARAM_TIERS.items():
            if callspec.params.get(fixture) == value:
                item.add_marker(tier)


DURATIONS = Path(__file__).parent / "durations.json"
"""Each test file's seconds, recorded with ``--record-durations`` in a run as CI runs
it (a new machine: PoCL's kernel cache empty), for ``--shard`` to share files out."""


def _recorded_durations() -> dict[str, float]:
    try:
        files = json.loads(DURATIONS.read_text())["files"]
        return {str(k): float(v) for k, v in files.items()}
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        return {}


def _expected_s(item: pytest.Item) -> float:
    """A rough guess of a test's time, to share tests out (see ``--shard``)."""
    if item.get_closest_marker("slow"):
        return 12.0
    if any(item.get_closest_marker(t) for t in REAL_TIERS):
        return 3.0
    return 0.2


def _shard_of(config: pytest.Config) -> tuple[int, int] | None:
    """``--shard K/N`` as (K, N), or None."""
    text = config.getoption("--shard")
    if not text:
        return None
    try:
        k, n = (int(v) for v in str(text).split("/"))
    except ValueError:
        raise pytest.UsageError(f"--shard takes K/N, got {text!r}") from None
    if not 1 <= k <= n:
        raise pytest.UsageError(f"--shard K/N needs 1 <= K <= N, got {text!r}")
    return k, n


def _share_out(files: dict[str, float], k: int, n: int) -> set[str]:
    """The files of the K-th of N shares: the longest first to the share with the least
    so far (ties by name: every shard process decides alike)."""
    loads = [0.0] * n
    mine: set[str] = set()
    for name, load in sorted(files.items(), key=lambda f: (-f[1], f[0])):
        i = loads.index(min(loads))
        loads[i] += load
        if i == k - 1:
            mine.add(name)
    return mine


_PLAN = pytest.StashKey[tuple[set[str], set[str]] | None]()


def _test_files(config: pytest.Config, args: list[str]) -> set[str]:
    """The test modules under ``args`` (files or folders) as pytest finds them: the
    ``python_files`` patterns, folders of ``norecursedirs`` left out; rootdir-relative."""
    patterns = config.getini("python_files")
    skip = config.getini("norecursedirs")
    found: set[str] = set()
    for arg in args:
        top = Path(arg).resolve()
        if top.is_file():
            found.add(top.relative_to(config.rootpath).as_posix())
            continue
        for folder, dirs, names in os.walk(top):
            dirs[:] = sorted(d for d in dirs if not any(fnmatch.fnmatch(d, p) for p in skip))
            for name in names:
                if any(fnmatch.fnmatch(name, p) for p in patterns):
                    path = Path(folder, name)
                    found.add(path.relative_to(config.rootpath).as_posix())
    return found


def _collected_share(config: pytest.Config) -> tuple[set[str], set[str]] | None:
    """(the test files under the command line's paths, those this ``--shard`` process
    collects), decided before collection from their recorded seconds, so that it
    imports (and rewrites the asserts of) a third of the modules, not all of them: some
    ten seconds of CPU a process. None (collect every file, share out the items, see
    ``_shard``) where a path names a test (``::``) or a test file has no recorded
    seconds: one ``--record-durations`` has not seen yet is shared out by its markers."""
    if _PLAN in config.stash:
        return config.stash[_PLAN]
    plan: tuple[set[str], set[str]] | None = None
    shard = _shard_of(config)
    args = [str(a) for a in config.args]
    if shard is not None and args and not any("::" in a for a in args):
        found = _test_files(config, args)
        recorded = _recorded_durations()
        if found and all(f in recorded for f in found if not _candidate_file(f)):
            plan = found, _share_out({f: recorded.get(f, 0.0) for f in found}, *shard)
    config.stash[_PLAN] = plan
    return plan


def _candidate_file(name: str) -> bool:
    """A candidate template's tests (``tests/stencils/test_*_candidate.py``): never
    recorded, as CI leaves them out; shared out at no cost, collected by one share."""
    return name.endswith("_candidate.py")


def pytest_ignore_collect(collection_path: Path, config: pytest.Config) -> bool | None:
    """Under ``--shard``, the test files of the other shares are not collected."""
    plan = _collected_share(config)
    if plan is None:
        return None
    try:
        name = collection_path.resolve().relative_to(config.rootpath).as_posix()
    except ValueError:
        return None
    found, mine = plan
    return True if name in found and name not in mine else None


def _shard(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Keep the ``--shard K/N`` share of ``items``: whole files (their module fixtures
    stay shared), the longest first to the shard with the least so far. Every shard
    process collects the same items, so the shares are disjoint and cover them all.
    (Where the files were shared out before collection, ``_collected_share``, this
    process collected its own alone, and those named on the command line.)"""
    shard = _shard_of(config)
    if shard is None:
        return
    plan = _collected_share(config)
    if plan is not None:  # (pytest collects a file named on the command line regardless)
        mine = plan[1]
    else:
        guessed: dict[str, float] = {}
        for item in items:
            name = item.nodeid.split("::")[0]
            guessed[name] = guessed.get(name, 0.0) + _expected_s(item)
        recorded = _recorded_durations()  # a file's recorded time where it has one
        files = {n: recorded.get(n, g) for n, g in guessed.items()}
        mine = _share_out(files, *shard)
    keep = [i.nodeid.split("::")[0] in mine for i in items]
    config.hook.pytest_deselected(items=[i for i, m in zip(items, keep, strict=True) if not m])
    items[:] = [i for i, m in zip(items, keep, strict=True) if m]


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    for item in items:
        _mark_tiers(item)
    if not _candidates_asked(config):
        _leave_out(config, items, CANDIDATE)
    if not _bench_asked(config):
        _leave_out(config, items, BENCH)
    if _fast_tier_only(config):
        real = [any(i.get_closest_marker(t) for t in (*REAL_TIERS, "slow")) for i in items]
        if any(real):
            config.hook.pytest_deselected(items=[i for i, r in zip(items, real, strict=True) if r])
            items[:] = [i for i, r in zip(items, real, strict=True) if not r]
    _shard(config, items)


_seconds: dict[str, float] = {}


def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    name = report.nodeid.split("::")[0]
    _seconds[name] = _seconds.get(name, 0.0) + report.duration


def _show_processes(config: pytest.Config, nodeid: str, seconds: float) -> None:
    """Print this host's processes and the device locks' holders: what a hung test
    waits on is often another process (pytest-timeout prints only this one's stacks)."""
    try:
        ps = subprocess.run(
            [
                "ps",
                "--ppid",
                "2",
                "-p",
                "2",
                "--deselect",
                "-o",
                "pid,ppid,stat,etime,args",
                "--forest",
            ],
            capture_output=True,
            text=True,
            timeout=10,
        ).stdout
        ps = "\n".join(line[:240] for line in ps.splitlines())  # (kernel threads left out)
        locks = Path("/proc/locks").read_text()
    except (OSError, subprocess.SubprocessError) as exc:
        ps, locks = f"(cannot list processes: {exc})", ""
    text = f"\n{nodeid} still running after {seconds:.0f} s; processes:\n{ps}\nfile locks:\n{locks}"
    capman = config.pluginmanager.getplugin("capturemanager")
    with capman.global_and_fixture_disabled() if capman is not None else contextlib.nullcontext():
        sys.stderr.write(text)
        sys.stderr.flush()


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item: pytest.Item, nextitem: pytest.Item | None) -> Iterator[None]:
    """Shortly before pytest-timeout stops a hung test, the processes it may wait on."""
    import threading

    limit = float(item.config.getini("timeout") or 0)
    timer = None
    if limit > 30:
        timer = threading.Timer(limit - 15, _show_processes, (item.config, item.nodeid, limit - 15))
        timer.daemon = True
        timer.start()
    try:
        yield
    finally:
        if timer is not None:
            timer.cancel()


EXIT_GRACE_S = 120.0
"""How long pytest may take to exit after its last test (joining threads and child
processes left behind) before the watchdog prints every thread's stack and ends it."""


def _exit_watchdog() -> None:
    import faulthandler
    import threading
    import time

    def watch() -> None:
        time.sleep(EXIT_GRACE_S)
        sys.stderr.write(f"\ntests: pytest had not exited {EXIT_GRACE_S:.0f} s after its report\n")
        faulthandler.dump_traceback(all_threads=True)
        sys.stderr.flush()
        os._exit(3)

    threading.Thread(target=watch, name="exit-watchdog", daemon=True).start()


def pytest_unconfigure(config: pytest.Config) -> None:
    """Whatever a test left behind, the run ends: a hang after the report shows its
    stack and fails instead of stalling CI."""
    _exit_watchdog()


def pytest_sessionfinish(session: pytest.Session) -> None:
    written = _checkout_written(session.config.stash[_checkout_before])
    if written:
        print(f"\ntests wrote into the checkout {ROOT}: {', '.join(written)}", file=sys.stderr)
        session.exitstatus = pytest.ExitCode.TESTS_FAILED
    target = session.config.getoption("--record-durations")
    if not target or not _seconds:
        return
    import fcntl

    path = Path(target)
    with open(path.with_suffix(path.suffix + ".lock"), "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # the other shards write to it too
        try:
            files = json.loads(path.read_text())["files"]
        except (OSError, ValueError, KeyError):
            files = {}
        files.update({n: round(s, 1) for n, s in _seconds.items()})
        text = json.dumps({"files": dict(sorted(files.items()))}, indent=1) + "\n"
        path.write_text(text)


def pytest_report_header(config: pytest.Config) -> str:
    if _fast_tier_only(config):
        return (
            "gtune: fast tier only (deselected: " + ", ".join((*REAL_TIERS, "slow")) + "); "
            "--all-tiers or ./bootstrap.sh test runs every tier"
        )
    return "gtune: every tier selected (" + ", ".join(("fast", *REAL_TIERS)) + ")"


@pytest.fixture(scope="session", autouse=True)
def trusted_test_references(tmp_path_factory: pytest.TempPathFactory):
    """The tests' own Python references run: those in tests/data and their copies in
    the session's temporary folders (a reference file runs only when trusted)."""
    before = os.environ.get(TRUST_ENV)
    trusted = [str(DATA), str(tmp_path_factory.getbasetemp().resolve())]
    os.environ[TRUST_ENV] = ",".join(filter(None, [before, *trusted]))
    yield
    if before is None:
        os.environ.pop(TRUST_ENV, None)
    else:
        os.environ[TRUST_ENV] = before


#: What a worker process reads from its environment when it starts: the pools of
#: ``shared_workers`` are kept per value of these (``pocl_optimised``'s modules, say).
WORKER_ENV = (POCL_FLAGS, "POCL_MAX_PTHREAD_COUNT", "POCL_DEVICES", "OCL_ICD_VENDORS")


@pytest.fixture(scope="session")
def _session_worker_pools() -> Iterator[dict[tuple[str | None, ...], dict[str, Any]]]:
    by_env: dict[tuple[str | None, ...], dict[str, Any]] = {}
    yield by_env
    for pools in by_env.values():
        for pool in pools.values():
            pool.close()


@pytest.fixture
def _worker_pools(
    _session_worker_pools: dict[tuple[str | None, ...], dict[str, Any]],
) -> dict[str, Any]:
    """The pools for the environment workers start in now, kept for the whole session:
    a worker process (an interpreter, pyopencl, a driver context, and PoCL's kernel
    library, which PoCL loads into each process that builds: about 1.5 s of CPU in
    all) serves every module's tests, not one module's."""
    env = tuple(os.environ.get(k) for k in WORKER_ENV)
    return _session_worker_pools.setdefault(env, {})


def _own_references_in_process(monkeypatch: pytest.MonkeyPatch) -> None:
    """gtune's own numpy references (``gtune.…`` targets: a stencil definition's, a
    generated kernel's) computed in the test's process, not in one of their own (a fresh
    interpreter importing numpy and gtune, about 0.45 s of CPU an evaluator): the same
    function on the same arrays gives the same outputs. A reference from a file (the
    author's code) still runs in its process; tests of that process (test_stopping,
    test_opencl_evaluator's watched references) make their evaluators without this."""
    from gtune.measure import _reference

    in_own_process = _reference.run_reference

    def run_reference(kernel: Any, directory: Path) -> Any:
        if kernel.reference.kind != "python" or not kernel.reference.target.startswith("gtune."):
            return in_own_process(kernel, directory)
        return _reference.write_references(kernel, directory)

    monkeypatch.setattr(_reference, "run_reference", run_reference)


@pytest.fixture
def shared_workers(
    _worker_pools: dict[str, Any], monkeypatch: pytest.MonkeyPatch
) -> Iterator[None]:
    """Inside the test, OpenCL evaluators share worker processes with the session's other
    tests that use this (``reuse_workers``, as a campaign worker shares them; commands
    run in the test's process too, ``gtune_here``): each
    evaluator after the first skips starting a worker (a fresh interpreter, pyopencl, a
    driver context), and gtune's own numpy references run in the test's process
    (``_own_references_in_process``). For tests that check kernels' results; tests of
    starting workers, of tuning and of the commands make their evaluators without it."""
    from gtune.measure.pool import reuse_workers

    _own_references_in_process(monkeypatch)
    with reuse_workers(_worker_pools):
        yield


@pytest.fixture
def one_pocl_thread(monkeypatch: pytest.MonkeyPatch) -> None:
    """PoCL runs kernels on one thread in the processes the test starts (its pthread
    device, one compute unit): a kernel made to hang (``-DHANG``) spins one core while
    the test waits for a timeout or a signal, not every core of the machine. For tests
    whose gtune runs in a process of its own: the device's identity counts its compute
    units, and one listed in the test's process before (two units) is not the device
    its workers then find ("no longer present")."""
    monkeypatch.setenv("POCL_MAX_PTHREAD_COUNT", "1")


@pytest.fixture
def gtune_here(capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> Cli:
    """The command line in the test's own process (``tests/inprocess.py``): called as
    ``run_gtune`` is, with the test's ``capsys`` and ``monkeypatch``."""
    return gtune_in_process(capsys, monkeypatch)


@pytest.fixture
def data_dir() -> Path:
    return DATA


@pytest.fixture
def kernel_copy(tmp_path: Path):
    """Copy a test kernel (cl + yaml + reference) into tmp_path, with YAML edits."""

    def make(name: str = "naive7", edit=None) -> Path:
        for f in DATA.glob(f"{name}*"):
            shutil.copy(f, tmp_path / f.name)
        desc = tmp_path / f"{name}.yaml"
        if edit is not None:
            desc.write_text(edit(desc.read_text()))
        return tmp_path / f"{name}.cl"

    return make


def load_script(path: Path, name: str | None = None) -> Any:  # a module
    """A script outside the package (``benchmarks/…``) imported as a module, registered
    under ``name`` (default: its file name's stem) so that its dataclasses resolve."""
    import importlib.util

    name = name or path.stem
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


def run_gtune(
    *args: str,
    db: Path | None = None,
    timeout: float = 300,
    env_extra: dict[str, str] | None = None,
    **kw,
) -> subprocess.CompletedProcess[str]:
    cmd = [sys.executable, "-m", "gtune"]
    if db is not None:
        cmd += ["--db", str(db)]
    env = dict(os.environ, PYTHONPATH=str(ROOT), COLUMNS="200", **(env_extra or {}))
    return subprocess.run(
        cmd + list(args), capture_output=True, text=True, timeout=timeout, env=env, **kw
    )


def run_tuned_example(tuned: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """``examples/use_tuned_kernel.py`` on an exported ``NAME_tuned.json`` (with
    ``--original KERNEL`` and ``--size`` among ``args`` where a test compares), as a user
    runs it: the repository on the path, the first OpenCL platform unless told."""
    example = ROOT / "examples" / "use_tuned_kernel.py"
    env = dict(os.environ, PYTHONPATH=str(ROOT), PYOPENCL_CTX=os.environ.get("PYOPENCL_CTX", "0"))
    return subprocess.run(
        [sys.executable, str(example), str(tuned), *args],
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
    )

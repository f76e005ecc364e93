"""Real measurements: the parent side of the isolated OpenCL workers.

This module never imports pyopencl; it drives worker processes that do. A
configuration that hangs is killed after ``timeout_s`` and recorded as ``timeout``; a
worker that dies is recorded as ``crashed``; either way the worker is restarted and
evaluation goes on. With ``compile_workers > 0``, :meth:`evaluate_batch` builds upcoming
configurations in separate processes while the device measures the current one.
"""

from __future__ import annotations

import contextlib
import logging
import math
import os
import re
import subprocess
import time
from collections import deque
from collections.abc import Iterator, Mapping, Sequence
from multiprocessing.connection import Connection, wait
from pathlib import Path
from typing import Any

import numpy as np

from gtune.device import DeviceLimits
from gtune.exceptions import BuildError, EnvironmentProblem, GtuneError, InputError
from gtune.kernel import TunableKernel
from gtune.measure._worker import HOLDING, RAISED, WAITING
from gtune.measure.bundle import scan
from gtune.measure.evaluator import EvaluatorBase
from gtune.measure.guard import (
    ArrayCheck,
    array_checks,
    describe_checks,
    failed_reference,
    tolerance_problems,
    transposed_launch_hint,
)
from gtune.measure.problem import tolerances, write_problem
from gtune.measure.result import Result, Status
from gtune.measure.stats import TimingPolicy
from gtune.processes import (
    Stopped,
    scratch_dir,
    spawn_worker,
    stop_overdue,
    usable_cores,
    wait_stoppable,
)

MAX_RUNS = 100_000
"""Most timed runs of one configuration."""

log = logging.getLogger("gtune.measure")

# OpenCL error codes (cl.h) of a kernel that cannot build whatever its configuration.
CL_INVALID_BUILD_OPTIONS = -43
CL_INVALID_KERNEL_NAME = -46


def check_fits(kernel: TunableKernel, device: DeviceLimits) -> None:
    """Every array fits one allocation on ``device``, and all of them its memory: said
    before anything is allocated (on the host, too), naming the argument and the size."""
    env = dict(kernel.sizes)
    total = 0
    sizes = ", ".join(f"{k}={v}" for k, v in kernel.sizes.items())
    for arg in kernel.arguments:
        if arg.kind != "buffer":
            continue
        n = int(np.prod(arg.shape_for(env), dtype=object)) * np.dtype(arg.dtype).itemsize
        total += n
        if device.max_mem_alloc_size and n > device.max_mem_alloc_size:
            raise InputError(
                f"array {arg.name!r} needs {n / 2**20:,.0f} MiB at the problem size {sizes}; "
                f"{device.name} allocates at most {device.max_mem_alloc_size / 2**20:,.0f} MiB "
                "at once",
                source=f"{kernel.label}: arguments",
                hint="choose a smaller problem size (--size)",
            )
    if device.global_mem_size and total > device.global_mem_size:
        raise InputError(
            f"the arrays need {total / 2**20:,.0f} MiB at the problem size {sizes}; "
            f"{device.name} has {device.global_mem_size / 2**20:,.0f} MiB",
            source=f"{kernel.label}: arguments",
            hint="choose a smaller problem size (--size)",
        )


class WorkerTimeout(Exception):
    pass


class WorkerDied(Exception):
    pass


class WorkerRaised(WorkerDied):
    """The worker's own Python code raised an exception while handling a request (a
    host-side check such as an array of the wrong shape, or a bug): no crash of the
    kernel, and the worker lives on. ``str()`` is one line, ``"ValueError: ..."``;
    ``trace`` is the worker's traceback (see :class:`WorkerTraceback`)."""

    def __init__(self, kind: str, message: str, trace: str = "") -> None:
        lines = message.strip().splitlines() or [""]
        self.kind = kind
        self.message = lines[0] + (" ..." if len(lines) > 1 else "")
        self.trace = trace
        super().__init__(f"{kind}: {self.message}")


class WorkerTraceback(Exception):
    """The worker's traceback, as the cause of the error it led to: the command line
    prints an error's causes with ``--debug`` only."""


class Worker:
    """One spawned worker process and its pipe."""

    module = "gtune.measure._worker"  # what the process runs

    def __init__(
        self, role: str, setup: tuple[str, dict[str, Any]], env: dict[str, str] | None = None
    ) -> None:
        self.role = role
        self.setup = setup
        self.env = env or {}
        self.log_path: Path | None = None  # the worker's stderr (driver chatter) goes here
        self.process: Any = None
        self.conn: Connection | None = None
        self.busy_since: float | None = None
        self.task: Any = None
        self.wait_limit_s: float | None = None  # see receive()

    def start(self, timeout_s: float) -> None:
        self.launch()
        self.receive(timeout_s)

    def launch(self) -> None:
        """Start the process and send its set-up; :meth:`receive` collects the answer."""
        self.spawn()
        self.send(*self.setup)

    def spawn(self) -> None:
        """Start the process only: it loads the OpenCL driver's Python side and waits for
        its set-up (sent by :meth:`call`; see :meth:`OpenCLEvaluator._start_measure`)."""
        self.process, self.conn = spawn_worker(self.module, env=self.env, log_path=self.log_path)

    def send(self, verb: str, payload: Any) -> None:
        assert self.conn is not None
        self.conn.send((verb, payload))
        self.busy_since = time.monotonic()

    def receive(self, timeout_s: float) -> Any:
        """The answer to the last verb, within ``timeout_s`` seconds; time a measuring
        worker waits for the device (while another process measures on it: it says
        so, see gtune.measure.devlock) is not counted: the limit starts again once it
        holds the device. It waits at most ``wait_limit_s`` (then it answers with an
        error itself; a worker silent for a minute beyond that is timed out)."""
        assert self.conn is not None
        deadline = time.monotonic() + timeout_s
        try:
            while True:
                left = deadline - time.monotonic()
                if not wait_stoppable(self.conn.poll, max(0.0, left)):
                    raise WorkerTimeout()
                status, payload = self.conn.recv()
                if status == WAITING:
                    limit = self.wait_limit_s
                    deadline = math.inf if limit is None else time.monotonic() + limit + 60.0
                elif status == HOLDING:
                    deadline = time.monotonic() + timeout_s
                else:
                    break
        except (EOFError, ConnectionError, OSError):
            raise WorkerDied(self._exit_text()) from None
        finally:
            self.busy_since = None
        if status == "gtune_error":
            raise payload
        if status == RAISED:
            raised = WorkerRaised(
                str(payload.get("type", "Exception")),
                str(payload.get("message", "")),
                str(payload.get("traceback", "")),
            )
            log.debug("the %s worker raised %s:\n%s", self.role, raised, raised.trace)  # -vv
            raise raised
        if status == "error":
            raise WorkerDied(str(payload))
        return payload

    def call(self, verb: str, payload: Any, timeout_s: float) -> Any:
        self.send(verb, payload)
        return self.receive(timeout_s)

    def _exit_text(self) -> str:
        if self.process is None:
            return "worker not started"
        try:
            code = self.process.wait(timeout=1.0)
        except subprocess.TimeoutExpired:
            code = None
        if code is not None and code < 0:
            return f"worker killed by signal {-code}"
        return f"worker exited with status {code}"

    def kill(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.kill()
            self.process.wait(timeout=5.0)
        if self.conn is not None:
            self.conn.close()
        self.process = None
        self.conn = None
        self.busy_since = None
        self.task = None

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None and self.conn is not None:
            with contextlib.suppress(WorkerTimeout, WorkerDied, GtuneError, Stopped):
                self.call("stop", None, timeout_s=2.0)
        self.kill()


_DRIVER_FILE = re.compile(r"(?m)(?:(?<=\s)|^)(?:<kernel>|<source>|input|[^\s:]*\.cl)(?=:\d+)")


def user_build_log(log: str, source_path: str) -> str:
    """A build log naming the user's file where the driver named its own temporary copy
    (line and column numbers are those of the user's file)."""
    return _DRIVER_FILE.sub(lambda m: source_path, log) if source_path else log


def build_problem(
    kernel: TunableKernel, config: Mapping[str, int], code: int | None, log: str
) -> GtuneError:
    """The error for a kernel that does not build as such (whatever its configuration)."""
    where = kernel.source_path or kernel.label
    log = user_build_log(log, kernel.source_path)
    options = " ".join(kernel.build_options)
    if code == CL_INVALID_BUILD_OPTIONS:
        return InputError(
            f"the OpenCL compiler refuses the build options {options or '(none)'}: "
            f"{log.strip() or 'invalid build options'}",
            source=f"{kernel.description_path}: build_options"
            if kernel.description_path
            else "build options",
        )
    if code == CL_INVALID_KERNEL_NAME:
        return InputError(f"no kernel named {kernel.name!r} in the program", source=where)
    located = re.search(re.escape(kernel.source_path) + r":(\d+):", log)
    if kernel.source_path and located:
        where = f"{where}:{located[1]}"  # the first error's line
    settings = " ".join(f"{k}={v}" for k, v in config.items())
    return BuildError(
        f"kernel {kernel.name} does not compile (with {settings}; error {code})",
        source=where,
        log=log,
    )


def _given_array(kernel: TunableKernel, name: str, given: np.ndarray) -> np.ndarray:
    """``given`` as the initial contents of buffer argument ``name``, checked against
    its shape and converted to its element type."""
    args = {a.name: a for a in kernel.arguments if a.kind == "buffer"}
    if name not in args:
        raise InputError(f"the kernel has no array argument {name!r}", source=kernel.label)
    shape = tuple(args[name].shape_for(dict(kernel.sizes)))
    arr = np.asarray(given)
    if arr.shape != shape and arr.size == int(np.prod(shape)):
        arr = arr.reshape(shape)
    if arr.shape != shape:
        raise InputError(
            f"array {name!r} has shape {arr.shape}; the kernel's is {shape}", source=kernel.label
        )
    return np.ascontiguousarray(arr.astype(args[name].dtype))


BUNDLE = 8
"""Most configurations built as one program by default, where bundles are built."""


def default_bundle(device: DeviceLimits, builds_here: bool = False) -> int:
    """Most configurations built as one program (gtune.measure.bundle):
    ``$GTUNE_BUNDLE`` if set (1: never bundled), else :data:`BUNDLE` on NVIDIA's
    platform, where a build has a large fixed cost, and where the measuring worker
    builds what it measures (``builds_here``: a CPU device measured alone). There PoCL
    spends some 0.2 s of a build's 0.3 s of CPU reading OpenCL C's declarations before
    the kernel's source, once per program: 8 heat3d configurations built singly took
    2.6 s, as one program 0.7 s. Else 1: PoCL's compile workers hand over binaries,
    which it compiles further for each program fetched."""
    given = os.environ.get("GTUNE_BUNDLE", "").strip()
    if given:
        try:
            value = int(given)
        except ValueError:
            value = 0
        if value < 1:
            raise InputError(
                f"GTUNE_BUNDLE must be a whole number of at least 1, got {given!r}",
                source="GTUNE_BUNDLE",
            )
        return value
    return BUNDLE if builds_here or "NVIDIA" in device.platform.upper() else 1


MAX_COMPILE_WORKERS = 16
"""On NVIDIA a search is bound by its builds (90 % of a complete search's time on the
GPU host): with the host's 16 cores, 15 helpers labelled 26-35 configurations/s
(``benchmarks/results/predict/h200-complete``). More than 16 processes per kernel
is left to ``--compile-workers``."""


def default_compile_workers() -> int:
    """The compile helpers of one evaluator: every usable core but the measuring one's."""
    return max(0, min(usable_cores() - 1, MAX_COMPILE_WORKERS))


class OpenCLEvaluator(EvaluatorBase):
    """Measure configurations of ``kernel`` on one OpenCL device, for real.

    Each configuration is built with its parameters as ``-D`` defines, run once to warm
    up, then timed with profiling events until ``timing`` says its median is known well
    enough (or exactly ``runs`` times when only ``runs`` is given; with neither, the
    default :class:`~gtune.measure.stats.TimingPolicy`), and its outputs compared on the
    device with the reference. Every run time is kept in ``Result.times_s`` and
    ``Result.extra["timing"]`` says whether the median converged. Before the first
    configuration the device is warmed up (a configuration run until its times stop
    falling, discarded), so the configurations measured first are not slower.

    Compile workers build upcoming configurations while the device measures. On a CPU
    device the two would share the same cores and a kernel timed during a build would
    run slower, so there (``measure_alone``, the default for CPU devices) builds still
    run side by side in the workers, but never while a configuration is timed; where
    that leaves a single compile worker (two cores), its builds would overlap nothing,
    and by default the measuring worker builds itself.

    Where a batch holds more configurations than compile workers, each worker builds
    several consecutive ones as one program (a bundle, :mod:`gtune.measure.bundle`;
    at most ``max_bundle``: 8 on NVIDIA's platform, where a build has a large fixed
    cost, 1 elsewhere, ``$GTUNE_BUNDLE`` overrides). Each result is as if built alone,
    but for its ``compile_s`` (the bundle's build time over its size) and
    ``extra["bundle"]`` (the bundle's size).

    Other processes may measure on the same device (two searches sharing a GPU): the
    device lock (:mod:`gtune.measure.devlock`) lets only one of them time at a time;
    waiting for it is in each result's ``extra["wait_s"]``, never in its times, and
    not in ``timeout_s`` (``lock_wait_s`` bounds it: default ten times ``timeout_s``,
    at least ten minutes). On a CPU device (``measure_alone``) builds hold the lock
    shared, so no other process builds while this one times either.
    """

    def __init__(
        self,
        kernel: TunableKernel,
        device: str | DeviceLimits | None = None,
        *,
        runs: int | None = None,
        timeout_s: float = 60.0,
        compile_workers: int | None = None,
        verify: bool = True,
        timing: TimingPolicy | None = None,
        seed: int = 1234,
        measure_alone: bool | None = None,
        arrays: Mapping[str, np.ndarray] | None = None,
        lock_wait_s: float | None = None,
        max_bundle: int | None = None,
    ) -> None:
        """``arrays`` replaces the initial contents of those buffer arguments (by name;
        the others start as the description says); results are then checked only
        against a configuration reference, which runs on them too. ``max_bundle``: most
        configurations a compile worker builds as one program (default:
        :func:`default_bundle`)."""
        from gtune.measure import select_device
        from gtune.measure.pool import pool_for

        if runs is not None and not 1 <= runs <= MAX_RUNS:
            raise InputError(
                f"timed runs must be from 1 to {MAX_RUNS:,}, got {runs}", source="runs"
            )
        self.kernel = kernel
        self.device = device if isinstance(device, DeviceLimits) else select_device(device)
        check_fits(kernel, self.device)
        #: Worker processes shared with earlier evaluators (see gtune.measure.pool).
        self._pool = pool_for(self.device)
        self._settings(runs, timeout_s, compile_workers, verify, timing, measure_alone)
        self._limits(timeout_s, lock_wait_s, max_bundle)
        self._scratch()
        refs, early = self._write_problem(seed, arrays)
        #: Why results cannot be called verified (no check could fail), or None.
        self.unverified: str | None = None
        #: What each result was verified against, per array (see gtune.measure.guard).
        self.verification: str | None = None
        self.checks: list[ArrayCheck] = []
        #: Why a wrong result may be wrong beyond the comparison (the reference's own
        #: reads past an array), added to wrong results' messages.
        self._wrong_note = ""
        self.rtol, self.atol = tolerances(kernel, refs)
        self._take_measure_worker(early)
        self._compilers: list[Worker] = self._pool.compilers if self._pool is not None else []
        self.restarts = 0
        self._start_measure()
        try:
            self._check_build()
        except GtuneError:
            self.close()
            raise
        self._verification_setup(refs)

    # -- construction, in steps -----------------------------------------------------
    def _settings(
        self,
        runs: int | None,
        timeout_s: float,
        compile_workers: int | None,
        verify: bool,
        timing: TimingPolicy | None,
        measure_alone: bool | None,
    ) -> None:
        """How each configuration is timed and verified, and who builds it."""
        #: Seconds spent starting compile workers (they start on the first batch).
        self.compilers_start_s = 0.0
        #: Seconds the compile workers waited for the host's build slots (summed).
        self.build_wait_s = 0.0
        if timing is None:
            timing = TimingPolicy(runs, runs) if runs is not None else TimingPolicy()
        #: The timing rule every configuration is measured with.
        self.timing = timing
        self.runs = timing.min_runs
        #: Configurations timed, and those whose median did not converge (noisy device).
        self.timed = 0
        self.unconverged = 0
        self._settled = self._pool is not None and self._pool.warm
        self._settle_tries = 0
        self.timeout_s = timeout_s
        self.verify = verify and self.kernel.reference.kind != "none"
        self.compile_workers = (
            default_compile_workers() if compile_workers is None else compile_workers
        )
        #: Whether no build runs while a configuration is timed (see the class docs).
        self.measure_alone = (
            "CPU" in self.device.type.upper() if measure_alone is None else measure_alone
        )
        if compile_workers is None and self.measure_alone and self.compile_workers < 2:
            # Measured alone, a single helper's builds overlap nothing: the measuring
            # worker builds each configuration itself, and no binary is fetched and
            # handed over (fetching PoCL's takes a further compile, some 0.15 s each).
            self.compile_workers = 0

    def _limits(self, timeout_s: float, lock_wait_s: float | None, max_bundle: int | None) -> None:
        """Bundles, and how long the device lock and a build's share of it are waited for."""
        #: Most configurations built as one program (1: each alone); see _pipeline.
        if max_bundle is None:
            max_bundle = default_bundle(self.device, builds_here=self.compile_workers <= 0)
        self.max_bundle = max_bundle
        #: How long a measurement waits for the device while another process measures.
        self.lock_wait_s = max(600.0, 10 * timeout_s) if lock_wait_s is None else lock_wait_s
        # builds on a CPU device hold the lock shared, waiting at most this long for it
        # (never longer than a measurement waits for the device)
        build_wait = min(max(1.0, timeout_s / 4), self.lock_wait_s)
        self._build_lock_s = build_wait if self.measure_alone else None
        self._compile_setup = {"device": self.device.to_dict(), "build_lock_s": self._build_lock_s}

    def _scratch(self) -> None:
        """The problem's folder, and the workers' environment and log folder."""
        self._tmp = scratch_dir("problem")
        self.data_dir = Path(self._tmp.name)
        # NVIDIA's driver finishes compilation (PTX to machine code) when a binary is
        # loaded. A cache private to this evaluator lets the measuring worker reuse what
        # the compile workers finished, while nothing from earlier runs is reused: compile
        # times stay honest (the on-disk cache in ~/.nv stays untouched). PoCL's own
        # cache is left alone; benchmarks of tuning time set POCL_KERNEL_CACHE=0.
        if self._pool is not None:
            self._worker_env = dict(self._pool.env)
            self._log_dir = self._pool.dir
        else:
            (self.data_dir / "driver-cache").mkdir()
            self._worker_env = {
                "CUDA_CACHE_DISABLE": "0",
                "CUDA_CACHE_PATH": str(self.data_dir / "driver-cache"),
            }
            self._log_dir = self.data_dir

    def _write_problem(
        self, seed: int, arrays: Mapping[str, np.ndarray] | None
    ) -> tuple[dict[str, Any], Worker | None]:
        """The problem data and reference outputs written (the given ``arrays`` in place
        of theirs), while a measuring worker starts where no pool lends one: the
        references by name, and that worker."""
        kernel = self.kernel
        early = None
        if self._pool is None:
            # the measuring worker starts (a fresh interpreter loading the OpenCL
            # driver) while the problem is written and the reference computes it
            early = Worker("measure", ("setup", {}), self._worker_env)
            early.log_path = self._log_dir / "measure.log"
            with contextlib.suppress(OSError):  # it is started again, and fails there
                early.spawn()
        # given arrays: the python reference would compute from other inputs than those
        # run, so it is not computed (and nothing is checked against it)
        replaced = bool(arrays) and kernel.reference.kind == "python"
        try:
            refs = write_problem(kernel, self.data_dir, seed=seed, reference=not replaced)
            for name, given in (arrays or {}).items():
                np.save(self.data_dir / f"{name}.npy", _given_array(kernel, name, given))
        except BaseException:
            if early is not None:
                early.kill()
            raise
        if replaced:
            self.verify = False
        return refs, early

    def _take_measure_worker(self, early: Worker | None) -> None:
        """The measuring worker: the pool's, the one started early, or a new one."""
        setup: tuple[str, dict[str, Any]] = (
            "setup",
            {
                "device": self.device.to_dict(),
                "kernel": self.kernel.to_dict(),
                "data_dir": str(self.data_dir),
                "lock_wait_s": self.lock_wait_s,
                "build_lock_s": self._build_lock_s,
            },
        )
        lent = self._pool.take_measure() if self._pool is not None else early
        if lent is not None:
            lent.setup = setup  # the running worker is handed this kernel instead
            self._measure = lent
        else:
            self._measure = Worker("measure", setup, self._worker_env)
            self._measure.log_path = self._log_dir / "measure.log"
        self._measure.wait_limit_s = self.lock_wait_s

    def _verification_setup(self, refs: Mapping[str, Any]) -> None:
        """What each configuration's output is checked against: a reference
        configuration's run, or the numpy reference's arrays."""
        kernel = self.kernel
        if self.verify and kernel.reference.kind == "config":
            self._reference_from_config()
        elif self.verify:
            # a hand-written reference may leave much of an array alone on purpose
            target = kernel.reference.target.rpartition(":")[2]
            initial = self._initial(list(refs))
            checks = array_checks(initial, refs, unchanged_limit=1.0)
            checks = self._tolerance_checked(checks, initial, refs)
            against = f"the numpy reference {target}()"
            if target == "recorded_output":  # a lifted definition's: its original's output
                against = "the original kernel's output (recorded at its shipped launch)"
            self._apply_checks(checks, against)

    # -- workers ------------------------------------------------------------------
    def _start_measure(self) -> None:
        w = self._measure
        if w.process is not None and w.process.poll() is None:
            try:  # a running worker (a pool's, or one started early): only the set-up
                w.call(*w.setup, timeout_s=max(self.timeout_s, 120.0))
                return
            except (WorkerTimeout, WorkerDied):
                w.kill()
        try:
            self._measure.start(timeout_s=max(self.timeout_s, 120.0))
        except (WorkerTimeout, WorkerDied) as exc:
            self._measure.kill()
            why = str(exc) or "it did not answer"
            log = self._measure.log_path
            with contextlib.suppress(OSError):  # what the worker said (a full disk, ...)
                text = log.read_text(errors="replace") if log is not None else ""
                said = [ln for ln in text.splitlines() if ln.strip()]
                if said:
                    why += ": " + " / ".join(said[-2:])[-400:]
            raise EnvironmentProblem(
                f"cannot start an OpenCL worker on {self.device.name}: {why}",
                hint="the last words are the worker's own; a full disk or a broken driver stops it",
            ) from None

    def _restart_measure(self) -> None:
        self._measure.kill()
        self.restarts += 1
        self._settled = False  # a fresh process: warm up again
        self._start_measure()

    def _compiler(self, i: int) -> Worker:
        self._start_compilers(i + 1)
        return self._compilers[i]

    def _start_compilers(self, n: int) -> None:
        """Start compile workers side by side (each start creates a driver context)."""
        while len(self._compilers) < n:
            self._compilers.append(
                Worker("compile", ("compiler", dict(self._compile_setup)), self._worker_env)
            )
        for i, w in enumerate(self._compilers):
            if w.process is None:
                w.log_path = self._log_dir / f"compile-{i}.log"
        starting = [w for w in self._compilers[:n] if w.process is None]
        began = time.monotonic()
        for w in starting:
            w.launch()
        for w in starting:
            try:
                w.receive(max(self.timeout_s, 120.0))
            except (WorkerTimeout, WorkerDied) as exc:
                w.kill()
                raise EnvironmentProblem(f"cannot start a compile worker: {exc}") from None
        if starting:
            self.compilers_start_s += time.monotonic() - began

    def _check_build(self) -> None:
        """Fail once, early, when the kernel as such does not build: the reference or
        default configuration is built first. Later configurations that fail to build
        are recorded as ``build_failed`` as usual."""
        kernel = self.kernel
        cfg = dict(kernel.reference.config) if kernel.reference.kind == "config" else None
        cfg = cfg or kernel.default_config()
        if not cfg:
            return
        try:
            answer = self._measure.call(
                "check",
                {"source": kernel.source, "options": kernel.defines(cfg), "name": kernel.name},
                timeout_s=max(self.timeout_s, 120.0),
            )
        except (WorkerTimeout, WorkerDied):
            self._restart_measure()  # measuring will say what goes wrong
            return
        if not answer["ok"]:
            raise build_problem(kernel, cfg, answer["code"], str(answer["log"]))

    def _initial(self, names: list[str]) -> dict[str, np.ndarray]:
        return {n: np.load(self.data_dir / f"{n}.npy") for n in names}

    def _run_reference(self) -> tuple[Result, dict[str, np.ndarray]]:
        """Run the reference configuration once, unverified; its written arrays."""
        cfg = dict(self.kernel.reference.config)
        result = self._call_measure_checked(
            {"config": cfg, "timing": TimingPolicy(1, 1).to_dict(), "verify": False}
        )
        outs: dict[str, np.ndarray] = {}
        if result.ok:
            for arg in self.kernel.arguments:
                if arg.kind == "buffer" and arg.role != "input":
                    outs[arg.name] = self.output(arg.name)
        return result, outs

    def _guards(self, pattern: str | None = None, names: list[str] | None = None) -> list[str]:
        answer: list[str] = self._measure.call(
            "guards", {"pattern": pattern, "names": names}, timeout_s=self.timeout_s
        )
        return answer

    def _reference_from_config(self) -> None:
        cfg = dict(self.kernel.reference.config)
        result, refs = self._run_reference()
        if not result.ok:
            self.unverified = failed_reference(result.status.value, result.message)
            self.verify = False
            return
        reads_past = self._probe_reads_past(refs)
        for name, out in refs.items():
            np.save(self.data_dir / f"ref_{name}.npy", out)
        initial = self._initial(list(refs))
        checks = array_checks(initial, refs, reads_past=reads_past)
        if (
            self.kernel.inferred
            and [e.text for e in self.kernel.launch.global_size]
            == [
                "NX",
                "NY",
                "NZ",
            ][: len(self.kernel.launch.global_size)]
        ):
            # a plain kernel at the default launch: say so if it looks transposed
            checks = [
                ArrayCheck(c.name, c.compared, c.sound, f"{c.why} ({hint})")
                if c.why and (hint := transposed_launch_hint(initial[c.name], refs[c.name]))
                else c
                for c in checks
            ]
        self.rtol, self.atol = tolerances(
            self.kernel, {c.name: refs[c.name] for c in checks if c.compared} or refs
        )
        checks = self._tolerance_checked(checks, initial, refs)
        shown = " ".join(f"{k}={v}" for k, v in cfg.items())
        which = "default" if cfg == (self.kernel.default_config() or {}) else "reference"
        self._apply_checks(checks, f"the {which} configuration's output ({shown})")

    def _tolerance_checked(
        self,
        checks: list[ArrayCheck],
        initial: Mapping[str, np.ndarray],
        refs: Mapping[str, np.ndarray],
    ) -> list[ArrayCheck]:
        """``checks`` with every sound check whose tolerance (``rtol``/``atol``) would
        accept the array as initialised (a configuration that computes nothing) made
        weak: compared still, but not sound."""
        out = []
        for c in checks:
            problems = (
                tolerance_problems(
                    {c.name: initial[c.name]}, {c.name: refs[c.name]}, self.rtol, self.atol
                )
                if c.sound and c.name in initial
                else []
            )
            out.append(ArrayCheck(c.name, c.compared, False, problems[0]) if problems else c)
        return out

    def _probe_reads_past(self, refs: Mapping[str, np.ndarray]) -> dict[str, str]:
        """Whether the reference configuration reads the guard zones around the arrays
        (past the end or before the start of one): it runs again with other guard
        contents, and if an output changes, once per array to name the one read past.
        Maps each output that changed to the finding."""
        if not refs:
            return {}

        def changed_outputs() -> list[str]:
            result, outs = self._run_reference()
            if not result.ok:
                return []
            return [
                n
                for n, ref in refs.items()
                if not np.array_equal(ref, outs[n], equal_nan=ref.dtype.kind == "f")
            ]

        self._guards("other")
        changed = changed_outputs()
        self._guards("nan")
        if not changed:
            return {}
        buffers = [a.name for a in self.kernel.arguments if a.kind == "buffer"]
        culprits = []
        if len(buffers) > 1:
            for name in buffers:
                self._guards("other", [name])
                if changed_outputs():
                    culprits.append(name)
                self._guards("nan", [name])
        else:
            culprits = buffers
        arrays = ", ".join(repr(n) for n in culprits) or "an array"
        finding = (
            f"the reference configuration reads past the end (or before the start) of "
            f"{arrays}: its output {', '.join(repr(n) for n in changed)} changes with the "
            "contents of the guard zones around the arrays (give an array's true shape with "
            "--array, or fix the kernel)"
        )
        self._wrong_note = finding
        return {n: finding for n in changed}

    def _apply_checks(self, checks: list[ArrayCheck], against: str, reload: bool = True) -> None:
        """Compare only the arrays whose check can fail; name what is verified against
        what; call results unverified when no array's check is sound."""
        for c in checks:
            if not c.compared:
                (self.data_dir / f"ref_{c.name}.npy").unlink(missing_ok=True)
        self.checks = checks
        self.verify = any(c.compared for c in checks)
        self.verification = describe_checks(checks, against)
        if not any(c.sound for c in checks):
            reasons = [c.why for c in checks if c.why]
            self.unverified = "; ".join(reasons) or (
                "no array is written by the kernel, so there is nothing to compare"
            )
        if reload:
            loaded = self._measure.call("reload_refs", None, timeout_s=self.timeout_s)
            missing = [c.name for c in checks if c.compared and c.name not in loaded]
            if missing:  # never claim a comparison the worker cannot make
                self.unverified = (
                    f"no reference output of {', '.join(missing)} reached the measuring "
                    "worker, so its results were not compared"
                )

    # -- measuring ----------------------------------------------------------------
    def _call_measure(self, payload: dict[str, Any]) -> Result:
        return self._mark(self._call_measure_checked(payload))

    def _mark(self, result: Result) -> Result:
        """Say what ``result`` was verified against, and whether its check could have
        failed at all (see gtune.measure.guard)."""
        extra = dict(result.extra)
        message = result.message
        itself = self.verify and not self.unverified and self._is_reference(result.config)
        if self.verification and self.verify and not itself:
            extra["verification"] = self.verification
        if self.unverified:
            extra["unverified"] = self.unverified
        elif itself:
            extra["unverified"] = (
                "it is the reference configuration: the others are compared with its "
                "output, so its own comparison cannot fail"
            )
        if result.status is Status.WRONG_RESULT and self._wrong_note:
            message = f"{message}; {self._wrong_note}" if message else self._wrong_note
        if extra == result.extra and message == result.message:
            return result
        return Result.from_dict({**result.to_dict(), "message": message, "extra": extra})

    def _is_reference(self, config: Mapping[str, int]) -> bool:
        """Whether ``config`` launches as the configuration the reference was run with."""
        if self.kernel.reference.kind != "config":
            return False
        base = self.kernel.default_config() or {}
        return {**base, **self.kernel.reference.config} == {**base, **config}

    def _call_measure_checked(self, payload: dict[str, Any]) -> Result:
        cfg = payload["config"]
        payload = {
            "timing": self.timing.to_dict(),
            "rtol": self.rtol,
            "atol": self.atol,
            "verify": self.verify,
            **payload,
        }
        try:
            self._settle(cfg)
            data = self._measure.call("measure", payload, timeout_s=self.timeout_s)
        except WorkerTimeout:
            self._restart_measure()
            return Result(
                cfg,
                Status.TIMEOUT,
                message=f"no answer within {self.timeout_s:g} s; worker restarted",
            )
        except WorkerDied as exc:
            self._restart_measure()
            return Result(cfg, Status.CRASHED, message=f"{exc}; worker restarted")
        result = Result.from_dict(data)
        timing = result.extra.get("timing")
        if isinstance(timing, Mapping) and isinstance(timing.get("converged"), bool):
            self.timed += 1
            self.unconverged += 0 if timing["converged"] else 1
        return result

    def _settle(self, config: Mapping[str, int]) -> None:
        """Warm the device up once, on the first configuration that launches."""
        if self._settled or self._settle_tries >= 3:
            return
        self._settle_tries += 1
        launches = self._measure.call("settle", {"config": dict(config)}, self.timeout_s)
        self._settled = bool(launches)

    def evaluate(self, config: Mapping[str, int]) -> Result:
        return self._call_measure({"config": dict(config)})

    def evaluate_batch(self, configs: Sequence[Mapping[str, int]]) -> Iterator[Result]:
        if len(configs) <= 1 or (self.compile_workers <= 0 and self.max_bundle <= 1):
            for c in configs:
                yield self.evaluate(c)
            return
        if self.compile_workers <= 0:
            yield from self._bundled_here(list(configs))
            return
        yield from self._pipelined(list(configs))

    def _bundled_here(self, configs: list[Mapping[str, int]]) -> Iterator[Result]:
        """No compile workers: the measuring worker builds each run of up to
        ``max_bundle`` consecutive configurations as one program, then times them one by
        one from it. A bundle that does not build is built again one configuration at a
        time (so a failure keeps its own log); if each of them then builds, the source
        holds something the renaming misses, and bundling stops."""
        self._check_bundleable()
        i = 0
        while i < len(configs):
            group = configs[i : i + max(1, min(self.max_bundle, len(configs) - i))]
            i += len(group)
            names, share = self._build_here(group) if len(group) > 1 else ([], 0.0)
            restarts = self.restarts
            failed = False
            for j, c in enumerate(group):
                if names and self.restarts == restarts:  # the bundle's worker still runs
                    payload = {"config": dict(c), "kernel_name": names[j], "compile_s": share}
                    yield self._call_measure({**payload, "bundle": len(group), "bundled": True})
                    continue
                result = self.evaluate(c)
                failed = failed or result.status is Status.BUILD_FAILED
                yield result
            if len(group) > 1 and not names and not failed:
                self._stop_bundling("a bundle did not build while each of its configurations did")

    def _build_here(self, group: list[Mapping[str, int]]) -> tuple[list[str], float]:
        """``group`` built as one program in the measuring worker: its kernels' names and
        each configuration's share of the build's time (no names: it did not build)."""
        options = [self.kernel.defines(dict(c)) for c in group]
        payload = {"name": self.kernel.name, "options": options}
        try:
            answer = self._measure.call("bundle", payload, self.timeout_s * len(group))
        except (WorkerTimeout, WorkerDied) as exc:
            self._restart_measure()
            self._stop_bundling(f"a bundle's build lost its worker ({exc})")
            return [], 0.0
        if answer["why"]:
            self._stop_bundling(f"the source cannot be bundled: {answer['why']}")
        names = list(answer["names"])
        return names, float(answer["compile_s"]) / len(group) if names else 0.0

    def _pipelined(self, configs: list[Mapping[str, int]]) -> Iterator[Result]:
        """Compile ahead in worker processes; measure in order on the device."""
        n_workers = min(self.compile_workers, len(configs))
        self._start_compilers(n_workers)
        try:
            yield from self._pipeline(configs, n_workers)
        finally:
            self._drain_compilers()

    def _drain_compilers(self) -> None:
        """Collect builds still in flight when a batch is abandoned (closed early).

        Otherwise the next batch would read a stale build as the answer for one of its
        own configurations.
        """
        for w in self._compilers:
            if w.task is None:
                continue
            try:  # a build takes well under a second; don't hold up Ctrl-C for a stuck one
                w.receive(min(self.timeout_s, 5.0))
            except (WorkerTimeout, WorkerDied, GtuneError):
                w.kill()
            w.task = None

    def _bundle_size(self, remaining: int, n_workers: int) -> int:
        """How many of the ``remaining`` configurations the next build takes: one while
        there are no more than helpers (a small batch is never held up by bundling),
        else the share of each helper, at most ``max_bundle``."""
        return max(1, min(self.max_bundle, math.ceil(remaining / n_workers)))

    def _check_bundleable(self) -> None:
        """Stop bundling where the kernel's source cannot be bundled at all."""
        if self.max_bundle > 1:
            why = scan(self.kernel.source, self.kernel.name).why
            if why:
                self._stop_bundling(f"the source cannot be bundled: {why}")

    def _stop_bundling(self, why: str) -> None:
        if self.max_bundle > 1:
            log.info(
                "%s: builds one configuration per program from now on (%s)", self.kernel.label, why
            )
        self.max_bundle = 1

    def _pipeline(self, configs: list[Mapping[str, int]], n_workers: int) -> Iterator[Result]:
        """Build ahead in the compile workers, measure in order. Where there are more
        configurations left than workers, a worker builds several consecutive ones as
        one program (a bundle, gtune.measure.bundle): the fixed cost of a build is paid
        once. A bundle that crashes its worker or overruns its time (``timeout_s`` per
        configuration) is built again one configuration at a time."""
        if len(configs) > n_workers:
            self._check_bundleable()
        pending = deque(range(len(configs)))
        alone: set[int] = set()  # configurations built singly from now on
        ready: dict[int, Any] = {}
        next_i = 0
        while next_i < len(configs):
            busy_now = any(w.task is not None for w in self._compilers[:n_workers])
            # measuring alone: time the next configuration only once no build runs, and
            # start no build while one is ready to be timed
            hand_out = not self.measure_alone or next_i not in ready
            for wi in range(n_workers if hand_out else 0):
                w = self._compiler(wi)
                if w.task is None and pending and len(ready) < 2 * n_workers * self.max_bundle:
                    self._send_build(w, configs, pending, alone, n_workers)
            if next_i in ready and not (self.measure_alone and busy_now):
                built = ready.pop(next_i)
                cfg = dict(configs[next_i])
                next_i += 1
                yield self._measure_built(built, cfg)
                continue
            busy = [w for w in self._compilers[:n_workers] if w.task is not None]
            conns = [w.conn for w in busy if w.conn is not None]
            wait(conns, timeout=0.5)
            if stop_overdue():
                raise Stopped()
            self._collect_builds(busy, configs, ready, pending, alone)

    def _send_build(
        self,
        w: Worker,
        configs: list[Mapping[str, int]],
        pending: deque[int],
        alone: set[int],
        n_workers: int,
    ) -> None:
        """Hand an idle compile worker the next configuration, or a bundle of the next
        ones (none of them to be built alone)."""
        k = self._bundle_size(len(pending), n_workers)
        group = [pending.popleft()]
        while k > 1 and len(group) < k and pending and not alone & {group[0], pending[0]}:
            group.append(pending.popleft())
        w.task = group
        options = [self.kernel.defines(dict(configs[i])) for i in group]
        if len(group) == 1:
            w.send("build", {"source": self.kernel.source, "options": options[0]})
        else:
            w.send(
                "build_bundle",
                {"source": self.kernel.source, "name": self.kernel.name, "options": options},
            )

    def _measure_built(self, built: Any, cfg: dict[str, int]) -> Result:
        """The result of a configuration whose build is done: its build's failure, or
        its binary measured."""
        if isinstance(built, Result):
            return self._mark(built)
        if built["status"] != Status.OK.value:
            return Result(
                cfg,
                Status(built["status"]),
                float(built["compile_s"]),
                message=str(built["log"])[-4000:],
                error_code=built["code"],
            )
        payload = {"config": cfg, "binary": built["binary"], "compile_s": built["compile_s"]}
        if built.get("bundle", 1) > 1:
            payload.update(kernel_name=built["kernel"], bundle=built["bundle"])
        return self._call_measure(payload)

    def _collect_builds(
        self,
        busy: list[Worker],
        configs: list[Mapping[str, int]],
        ready: dict[int, Any],
        pending: deque[int],
        alone: set[int],
    ) -> None:
        """Builds that finished into ``ready``; a worker that died or overran is killed,
        its configuration a crash or timeout (a bundle's built again one by one)."""
        now = time.monotonic()
        for w in busy:
            group = list(w.task)
            if w.conn is not None and w.conn.poll():
                try:
                    answer = w.receive(0)
                    waited = float(answer.get("wait_s") or 0.0)
                    self.build_wait_s += waited
                    if self._pool is not None:
                        self._pool.build_wait_s += waited
                    if len(group) == 1:
                        ready[group[0]] = answer
                    else:
                        ready.update(self._unbundled(group, answer))
                except WorkerDied as exc:
                    w.kill()
                    if len(group) == 1:
                        ready[group[0]] = Result(
                            dict(configs[group[0]]), Status.CRASHED, message=f"compiler {exc}"
                        )
                    else:  # which configuration did it? each is built alone
                        pending.extendleft(reversed(group))
                        alone.update(group)
                w.task = None
            elif w.busy_since is not None and now - w.busy_since > self.timeout_s * len(group):
                w.kill()
                if len(group) == 1:
                    ready[group[0]] = Result(
                        dict(configs[group[0]]),
                        Status.TIMEOUT,
                        message=f"build took over {self.timeout_s:g} s; compiler restarted",
                    )
                else:
                    pending.extendleft(reversed(group))
                    alone.update(group)

    def _unbundled(self, group: list[int], answer: Mapping[str, Any]) -> dict[int, Any]:
        """Each configuration's build from a bundle's answer (as a single build's, with
        the bundle's binary and the kernel's name in it). A bundle that did not build
        while each of its configurations built alone stops bundling: the source holds
        something the renaming does not handle."""
        if answer["why"]:
            self._stop_bundling(f"the source cannot be bundled: {answer['why']}")
        elif answer["binary"] is None and all(
            c["status"] == Status.OK.value for c in answer["configs"]
        ):
            self._stop_bundling("a bundle did not build while each of its configurations did")
        out = {}
        bundled = answer["binary"] is not None
        for i, c in zip(group, answer["configs"], strict=True):
            out[i] = {
                **c,
                "binary": answer["binary"] if bundled else c["binary"],
                "bundle": len(group) if bundled else 1,
            }
        return out

    def run_once(
        self,
        config: Mapping[str, int],
        arrays: Mapping[str, np.ndarray],
        scalars: Mapping[str, float | int] | None = None,
        sweep: tuple[str, int] | None = None,
    ) -> dict[str, np.ndarray]:
        """Launch ``config`` once with these buffer contents (by argument name; others
        keep theirs) and scalar values, and return every written buffer afterwards.

        ``sweep`` (an integer scalar argument's name and a count): launch it ``count``
        times instead, in order, that argument 0, 1, ..., count - 1, on the same buffers
        (a kernel the host launches once per plane); the arrays go in once and the
        written buffers come back once, after the last launch, in one call to the
        worker. The evaluator's ``timeout_s`` bounds the whole call, a sweep's launches
        together (a kernel whose every launch takes a while needs a longer one).

        Nothing is timed or verified: this probes what a kernel computes. A build or
        launch failure (a sweep's says at which value of its argument), a crash or a
        hang raises :class:`GtuneError` saying which (the worker is restarted for the
        next call); so does a ``sweep`` of an argument that is no integer scalar.
        """
        if sweep is not None:
            self._check_sweep(sweep)
        payload = {
            "config": dict(config),
            "arrays": {k: np.asarray(v) for k, v in arrays.items()},
            "scalars": dict(scalars or {}),
            "sweep": None if sweep is None else (str(sweep[0]), int(sweep[1])),
        }
        what = "" if sweep is None else f" ({sweep[1]} launches, {sweep[0]} = 0 .. {sweep[1] - 1})"
        try:
            answer = self._measure.call("run", payload, timeout_s=self.timeout_s)
        except WorkerTimeout:
            self._restart_measure()
            raise GtuneError(
                f"the kernel gave no answer within {self.timeout_s:g} s{what}"
            ) from None
        except WorkerRaised as exc:  # gtune's side, not the kernel: the worker lives on
            raise GtuneError(
                f"the host side of the launch failed in gtune's worker: {exc}{what} (not a "
                "crash of the kernel; --debug shows the worker's traceback)"
            ) from WorkerTraceback(exc.trace)
        except WorkerDied as exc:
            self._restart_measure()
            raise GtuneError(f"the kernel crashed its worker ({exc}){what}") from None
        if answer["status"] != Status.OK.value:
            raise GtuneError(f"the kernel did not run ({answer['status']}): {answer['message']}")
        outputs: dict[str, np.ndarray] = answer["outputs"]
        return outputs

    def _check_sweep(self, sweep: tuple[str, int]) -> None:
        """A :meth:`run_once` sweep names an integer scalar argument and a count of at
        least 1."""
        name, count = sweep
        scalars = {a.name: a for a in self.kernel.arguments if a.kind == "scalar"}
        arg = scalars.get(name)
        if arg is None or np.dtype(arg.dtype).kind not in "iu":
            have = ", ".join(n for n, a in scalars.items() if np.dtype(a.dtype).kind in "iu")
            raise GtuneError(
                f"cannot sweep {name!r}: the kernel {self.kernel.name} has no integer scalar "
                f"argument of that name (it has: {have or 'none'})"
            )
        if int(count) < 1:
            raise GtuneError(f"a sweep of {name!r} needs at least one launch, got {count}")

    def output(self, name: str) -> np.ndarray:
        """The current contents of an output argument (after the last measurement)."""
        out: np.ndarray = self._measure.call("output", {"name": name}, timeout_s=self.timeout_s)
        return out

    def close(self) -> None:
        if self._pool is not None:  # the workers go back to the pool, still running
            self._drain_compilers()
            alive = self._measure.process is not None and self._measure.process.poll() is None
            if alive:
                self._pool.give_back(self._measure)
            self._tmp.cleanup()
            return
        for w in self._compilers:
            w.stop()
        self._compilers.clear()
        self._measure.stop()
        self._tmp.cleanup()

    def __del__(self) -> None:
        if getattr(self, "_pool", None) is not None:
            return  # the pool's workers outlive this evaluator
        try:
            for w in self._compilers:
                w.kill()
            self._measure.kill()
        except Exception:
            pass

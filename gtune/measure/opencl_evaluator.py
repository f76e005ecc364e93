"""Real measurements: the parent side of the isolated OpenCL workers.

This module never imports pyopencl; it drives worker processes that do. A
configuration that hangs is killed after ``timeout_s`` and recorded as ``timeout``; a
worker that dies is recorded as ``crashed``; either way the worker is restarted and
evaluation goes on. With ``compile_workers > 0``, :meth:`evaluate_batch` builds upcoming
configurations in separate processes while the device measures the current one.
"""

from __future__ import annotations

import contextlib
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
from gtune.measure.evaluator import EvaluatorBase
from gtune.measure.guard import failed_reference, reference_problems, tolerance_problems
from gtune.measure.problem import tolerances, write_problem
from gtune.measure.result import Result, Status
from gtune.measure.stats import TimingPolicy
from gtune.processes import Stopped, scratch_dir, spawn_worker, stop_overdue, wait_stoppable

MAX_RUNS = 100_000
"""Most timed runs of one configuration."""

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

    def start(self, timeout_s: float) -> None:
        self.launch()
        self.receive(timeout_s)

    def launch(self) -> None:
        """Start the process and send its set-up; :meth:`receive` collects the answer."""
        self.process, self.conn = spawn_worker(self.module, env=self.env, log_path=self.log_path)
        self.send(*self.setup)

    def send(self, verb: str, payload: Any) -> None:
        assert self.conn is not None
        self.conn.send((verb, payload))
        self.busy_since = time.monotonic()

    def receive(self, timeout_s: float) -> Any:
        assert self.conn is not None
        try:
            if not wait_stoppable(self.conn.poll, timeout_s):
                raise WorkerTimeout()
            status, payload = self.conn.recv()
        except (EOFError, ConnectionError, OSError):
            raise WorkerDied(self._exit_text()) from None
        finally:
            self.busy_since = None
        if status == "gtune_error":
            raise payload
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


def default_compile_workers() -> int:
    cores = os.cpu_count() or 1
    return max(0, min(cores - 1, 8))


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
    run side by side in the workers, but never while a configuration is timed.
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
    ) -> None:
        from gtune.measure import select_device

        if runs is not None and not 1 <= runs <= MAX_RUNS:
            raise InputError(
                f"timed runs must be from 1 to {MAX_RUNS:,}, got {runs}", source="runs"
            )
        self.kernel = kernel
        self.device = device if isinstance(device, DeviceLimits) else select_device(device)
        check_fits(kernel, self.device)
        if timing is None:
            timing = TimingPolicy(runs, runs) if runs is not None else TimingPolicy()
        #: The timing rule every configuration is measured with.
        self.timing = timing
        self.runs = timing.min_runs
        #: Configurations timed, and those whose median did not converge (noisy device).
        self.timed = 0
        self.unconverged = 0
        self._settled = False
        self._settle_tries = 0
        self.timeout_s = timeout_s
        self.verify = verify and kernel.reference.kind != "none"
        self.compile_workers = (
            default_compile_workers() if compile_workers is None else compile_workers
        )
        #: Whether no build runs while a configuration is timed (see the class docs).
        self.measure_alone = (
            "CPU" in self.device.type.upper() if measure_alone is None else measure_alone
        )
        self._tmp = scratch_dir("problem")
        self.data_dir = Path(self._tmp.name)
        # NVIDIA's driver finishes compilation (PTX to machine code) when a binary is
        # loaded. A cache private to this evaluator lets the measuring worker reuse what
        # the compile workers finished, while nothing from earlier runs is reused: compile
        # times stay honest (the on-disk cache in ~/.nv stays untouched). PoCL's own
        # cache is left alone; benchmarks of tuning time set POCL_KERNEL_CACHE=0.
        (self.data_dir / "driver-cache").mkdir()
        self._worker_env = {
            "CUDA_CACHE_DISABLE": "0",
            "CUDA_CACHE_PATH": str(self.data_dir / "driver-cache"),
        }
        problems: list[str] = []
        refs = write_problem(kernel, self.data_dir, problems=problems, seed=seed)
        self.rtol, self.atol = tolerances(kernel, refs)
        initial = {n: np.load(self.data_dir / f"{n}.npy", mmap_mode="r") for n in refs}
        problems += tolerance_problems(initial, refs, self.rtol, self.atol)
        #: Why results cannot be called verified (the reference could not fail), or None.
        self.unverified: str | None = "; ".join(problems) or None
        self._measure = Worker(
            "measure",
            (
                "setup",
                {
                    "device": self.device.to_dict(),
                    "kernel": kernel.to_dict(),
                    "data_dir": str(self.data_dir),
                },
            ),
            self._worker_env,
        )
        self._measure.log_path = self.data_dir / "measure.log"
        self._compilers: list[Worker] = []
        self.restarts = 0
        self._start_measure()
        try:
            self._check_build()
        except GtuneError:
            self.close()
            raise
        if self.verify and kernel.reference.kind == "config":
            self._reference_from_config()

    # -- workers ------------------------------------------------------------------
    def _start_measure(self) -> None:
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
                Worker("compile", ("compiler", {"device": self.device.to_dict()}), self._worker_env)
            )
        for i, w in enumerate(self._compilers):
            w.log_path = self.data_dir / f"compile-{i}.log"
        starting = [w for w in self._compilers[:n] if w.process is None]
        for w in starting:
            w.launch()
        for w in starting:
            try:
                w.receive(max(self.timeout_s, 120.0))
            except (WorkerTimeout, WorkerDied) as exc:
                w.kill()
                raise EnvironmentProblem(f"cannot start a compile worker: {exc}") from None

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

    def _reference_from_config(self) -> None:
        cfg = dict(self.kernel.reference.config)
        result = self._call_measure(
            {"config": cfg, "timing": TimingPolicy(1, 1).to_dict(), "verify": False}
        )
        if not result.ok:
            self.unverified = failed_reference(result.status.value, result.message)
            return
        refs, initial = {}, {}
        for arg in self.kernel.arguments:
            if arg.kind == "buffer" and arg.role != "input":
                out = self._measure.call("output", {"name": arg.name}, timeout_s=self.timeout_s)
                np.save(self.data_dir / f"ref_{arg.name}.npy", out)
                refs[arg.name] = out
                initial[arg.name] = np.load(self.data_dir / f"{arg.name}.npy")
        self.rtol, self.atol = tolerances(self.kernel, refs)
        problems = reference_problems(initial, refs)
        problems += tolerance_problems(initial, refs, self.rtol, self.atol)
        self.unverified = "; ".join(problems) or None
        self._measure.call("reload_refs", None, timeout_s=self.timeout_s)

    # -- measuring ----------------------------------------------------------------
    def _call_measure(self, payload: dict[str, Any]) -> Result:
        if getattr(self, "unverified", None):
            return self._unverified(self._call_measure_checked({**payload, "verify": False}))
        return self._call_measure_checked(payload)

    def _unverified(self, result: Result) -> Result:
        """Mark a result whose check could not have failed (see gtune.measure.guard)."""
        return Result.from_dict(
            {**result.to_dict(), "extra": {**result.extra, "unverified": self.unverified}}
        )

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
        if self.compile_workers <= 0 or len(configs) <= 1:
            for c in configs:
                yield self.evaluate(c)
            return
        yield from self._pipelined(list(configs))

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

    def _pipeline(self, configs: list[Mapping[str, int]], n_workers: int) -> Iterator[Result]:
        pending = deque(range(len(configs)))
        ready: dict[int, Any] = {}
        next_i = 0
        while next_i < len(configs):
            busy_now = any(w.task is not None for w in self._compilers[:n_workers])
            # measuring alone: time the next configuration only once no build runs, and
            # start no build while one is ready to be timed
            hand_out = not self.measure_alone or next_i not in ready
            for wi in range(n_workers if hand_out else 0):
                w = self._compiler(wi)
                if w.task is None and pending and len(ready) < 2 * n_workers:
                    i = pending.popleft()
                    cfg = dict(configs[i])
                    w.task = i
                    w.send(
                        "build", {"source": self.kernel.source, "options": self.kernel.defines(cfg)}
                    )
            if next_i in ready and not (self.measure_alone and busy_now):
                built = ready.pop(next_i)
                cfg = dict(configs[next_i])
                next_i += 1
                if isinstance(built, Result):
                    yield self._unverified(built) if self.unverified else built
                elif built["status"] != Status.OK.value:
                    yield Result(
                        cfg,
                        Status(built["status"]),
                        float(built["compile_s"]),
                        message=str(built["log"])[-4000:],
                        error_code=built["code"],
                    )
                else:
                    yield self._call_measure(
                        {"config": cfg, "binary": built["binary"], "compile_s": built["compile_s"]}
                    )
                continue
            busy = [w for w in self._compilers[:n_workers] if w.task is not None]
            conns = [w.conn for w in busy if w.conn is not None]
            wait(conns, timeout=0.5)
            if stop_overdue():
                raise Stopped()
            now = time.monotonic()
            for w in busy:
                i = w.task
                cfg = dict(configs[i])
                if w.conn is not None and w.conn.poll():
                    try:
                        ready[i] = w.receive(0)
                    except WorkerDied as exc:
                        w.kill()
                        ready[i] = Result(cfg, Status.CRASHED, message=f"compiler {exc}")
                    w.task = None
                elif w.busy_since is not None and now - w.busy_since > self.timeout_s:
                    w.kill()
                    ready[i] = Result(
                        cfg,
                        Status.TIMEOUT,
                        message=f"build took over {self.timeout_s:g} s; compiler restarted",
                    )

    def output(self, name: str) -> np.ndarray:
        """The current contents of an output argument (after the last measurement)."""
        out: np.ndarray = self._measure.call("output", {"name": name}, timeout_s=self.timeout_s)
        return out

    def close(self) -> None:
        for w in self._compilers:
            w.stop()
        self._compilers.clear()
        self._measure.stop()
        self._tmp.cleanup()

    def __del__(self) -> None:
        try:
            for w in self._compilers:
                w.kill()
            self._measure.kill()
        except Exception:
            pass

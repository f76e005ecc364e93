"""The runtime's entry point: tuned results opened once, kernels handed out per device
and problem size (:class:`TunedLibrary`, :func:`open_tuned`), each a
:class:`RuntimeKernel` an application calls like the original kernel."""

from __future__ import annotations

import logging
import threading
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from gtune.budget import Budget
from gtune.device import DeviceLimits
from gtune.exceptions import GtuneError, InputError
from gtune.kernel import TunableKernel
from gtune.runtime.choose import DEFAULT, NEAREST, TUNED, Choice, choose
from gtune.runtime.online import OnlineTuner
from gtune.runtime.opencl import Launch, Programs, context_device, device_limits
from gtune.runtime.sources import TunedEntry, is_store, read_sources
from gtune.store import default_url
from gtune.tuned import tuned_kernel
from gtune.tuning.report import TuningReport

LOG = logging.getLogger("gtune.runtime")


class RuntimeKernel:
    """A kernel with its configuration chosen for one device and problem size; call it
    as ``k(queue, *arguments)`` with the original kernel's arguments, in its order.

    ``choice`` says which configuration runs: ``tuned`` (tuned for this device and
    size), ``nearest`` (tuned for the nearest size on this device, legal here) or
    ``default`` (the kernel's default); ``configuration``, ``tuned_size`` and ``reason``
    say more. With online tuning, ``tuning`` is ``running``, then ``switched`` (calls
    now run the configuration tuned here, ``choice`` becomes ``tuned``), ``kept`` (the
    confirmation round found nothing faster than the configuration running: the default,
    or the nearest-size fallback, which the search then starts from and the round
    measures in the default's place), ``stopped`` (closed before its confirmation
    round) or ``failed``.
    """

    def __init__(
        self,
        library: TunedLibrary,
        context: Any,
        device: Any,
        limits: DeviceLimits,
        sizes: Mapping[str, int],
        choice: Choice,
    ) -> None:
        self.library = library
        self.context = context
        self.device = device
        self.limits = limits
        self.sizes = dict(sizes)
        self.tuning = ""
        self.tuning_message = ""
        self.tuning_report: TuningReport | None = None  # online tuning's, once it answers
        self.history: list[tuple[str, dict[str, int]]] = []
        self._settled = threading.Event()
        self._choice = choice
        self._launch = self._prepare(choice)
        self._note(choice)

    # -- what runs --------------------------------------------------------------------
    @property
    def choice(self) -> str:
        return self._choice.kind

    @property
    def configuration(self) -> dict[str, int]:
        return dict(self._choice.configuration)

    @property
    def tuned_size(self) -> dict[str, int] | None:
        size = self._choice.tuned_size
        return None if size is None else dict(size)

    @property
    def reason(self) -> str:
        return self._choice.reason

    @property
    def global_size(self) -> tuple[int, ...]:
        return self._launch.global_size

    @property
    def local_size(self) -> tuple[int, ...] | None:
        return self._launch.local_size

    def __call__(self, queue: Any, *args: Any, wait_for: Any = None) -> Any:
        """Launch on ``queue`` (of this kernel's context); returns the event."""
        return self._launch(queue, args, wait_for)

    def wait_tuning(self, timeout: float | None = None) -> bool:
        """Wait until online tuning has decided (switched, kept or failed); True if it
        has. The application never needs this: calls go on with the fallback meanwhile."""
        return self._settled.wait(timeout)

    # -- inside -------------------------------------------------------------------------
    def _prepare(self, choice: Choice) -> Launch:
        tuned = choice.tuned
        program = self.library.programs.get(
            self.context, self.device, tuned.source, tuned.compile_options(self.sizes)
        )
        return Launch(tuned, program, self.sizes)

    def _note(self, choice: Choice) -> None:
        self.history.append((choice.kind, dict(choice.configuration)))
        config = " ".join(f"{k}={v}" for k, v in choice.configuration.items())
        LOG.info(
            "%s at %s on %s: %s configuration (%s): %s",
            self.library.label, _size_text(self.sizes), self.limits.name, choice.kind,
            choice.reason, config,
        )  # fmt: skip

    def _start_tuning(self, tuner: OnlineTuner) -> None:
        """Tune here in the background; a nearest-size fallback is the search's start
        and the confirmation round's baseline (in place of the default)."""
        self.tuning = "running"
        baseline = self.configuration if self.choice == NEAREST else None
        tuner.submit(self.limits, self.sizes, self._tuned, baseline=baseline)

    def _tuned(self, report: TuningReport | None, message: str, *, stopped: bool = False) -> None:
        """The online tuner's answer (in its thread): switch when the confirmation round
        found a configuration faster than the baseline (the default, or the nearest-size
        fallback that ran meanwhile) beyond the noise. ``stopped``: the application
        closed before the job ran, which is no failure."""
        self.tuning_report = report
        message += _early_stops(report)
        try:
            if stopped:
                self.tuning, self.tuning_message = "stopped", message
                return
            self._decide(report, message)
        except GtuneError as exc:
            self.tuning, self.tuning_message = "failed", f"{message}; {exc.render()}"
            LOG.warning("%s: %s", self.library.label, self.tuning_message)
        except Exception as exc:  # in the tuner's thread: logged, never raised
            self.tuning, self.tuning_message = "failed", f"{message}; {exc!r}"
            LOG.exception("%s: %s", self.library.label, self.tuning_message)
        finally:
            self._settled.set()

    def _decide(self, report: TuningReport | None, message: str) -> None:
        best = None if report is None else report.best_config
        result = None if report is None else report.best_result
        if report is not None and report.interrupted and not report.confirmed:
            # stopped (the application closing), measured or not yet: not a failure
            self.tuning, self.tuning_message = "stopped", f"{message}; stopped before confirming"
            return
        if report is None or best is None or result is None or not result.ok:
            self.tuning, self.tuning_message = "failed", message
            return
        kernel = self.library.require_kernel()
        faster = bool(report.confirmed and report.significant and not report.best_from_default)
        baseline = "the default" if self.choice == DEFAULT else "the fallback"
        speed = f"{report.speedup:.2f}x {baseline}" if report.speedup else "speedup unknown"
        if not faster:
            self.tuning = "kept"
            self.tuning_message = f"{message}; nothing confirmed faster than {baseline} ({speed})"
            LOG.info("%s: %s", self.library.label, self.tuning_message)
            return
        config = kernel.with_defaults(best)
        tuned = tuned_kernel(
            kernel.with_sizes(self.sizes), config, device_identity=self.limits.identity,
            time_s=result.median_s, confirmed=True, full_template=True,
        )  # fmt: skip
        entry = TunedEntry(
            self.limits.identity, dict(self.sizes), config, "online tuning",
            time_s=result.median_s, confirmed=True, tuned=tuned,
        )  # fmt: skip
        choice = Choice(TUNED, config, tuned, entry, f"tuned online, {speed}")
        launch = self._prepare(choice)  # built here, in the tuner's thread
        self._launch, self._choice = launch, choice
        self.library.add(entry)
        self.tuning, self.tuning_message = "switched", f"{message}; {speed}"
        self._note(choice)


def _early_stops(report: TuningReport | None) -> str:
    """Why searches of ``report`` stopped before their end ("" if none did): an online
    search cut short is the first thing to look at when the switch gains too little."""
    if report is None:
        return ""
    cut = [
        f"{run.technique or 'the search'} after {run.measured}: {run.outcome.stop_reason}"
        for run in report.runs
        if run.outcome is not None and run.outcome.stop_reason != "search finished"
    ]
    return f" (stopped early: {'; '.join(cut)})" if cut else ""


class TunedLibrary:
    """Tuned results opened for an application: hands out :class:`RuntimeKernel`\\ s.

    ``sources``: export JSON files (``gtune export``), bundles (``gtune export
    --sizes``), folders of them, or result store URLs (a ``.db`` file, ``sqlite://…``,
    ``postgresql://…``), merged. ``kernel``: the kernel (a path with its description, or
    a :class:`TunableKernel`), needed for stores, the default configuration and online
    tuning. ``tune_missing``: a budget (a number of configurations, or seconds as
    ``"30s"``) to tune, in the background, each device and size with no tuned result;
    the results go to ``store`` (default: the first store among ``sources``, else the
    one ``gtune run`` uses: ``$GTUNE_DB`` or ``./gtune-results.db``).
    """

    def __init__(
        self,
        *sources: str | Path,
        kernel: TunableKernel | str | Path | None = None,
        tune_missing: Budget | int | str | None = None,
        store: str | Path | None = None,
        shutdown_s: float = 5.0,
        tune_options: Mapping[str, object] | None = None,
    ) -> None:
        self.kernel = _as_kernel(kernel)
        self.entries = read_sources(sources, self.kernel)
        self.label = self.kernel.store_name if self.kernel is not None else _label(self.entries)
        self.programs = Programs()
        self._kernels: dict[tuple[int, str, tuple[tuple[str, int], ...]], RuntimeKernel] = {}
        self._lock = threading.Lock()
        self.tuner: OnlineTuner | None = None
        if tune_missing is not None:
            if self.kernel is None:
                raise InputError(
                    "online tuning needs the kernel (kernel=...)", source="tune_missing"
                )
            if self.kernel.reference.kind == "none":
                raise InputError(
                    "online tuning switches only to configurations verified against the "
                    "kernel's reference, and this kernel has none (reference: none)",
                    source=self.kernel.label,
                )
            from gtune.api import as_budget

            budget = as_budget(tune_missing)
            assert budget is not None
            where = store or next((s for s in sources if is_store(s)), None) or default_url()
            self.tuner = OnlineTuner(
                self.kernel, budget, where, shutdown_s=shutdown_s, tune_options=tune_options
            )

    def require_kernel(self) -> TunableKernel:
        if self.kernel is None:
            raise InputError("this needs the kernel (kernel=...)", source=self.label)
        return self.kernel

    def add(self, entry: TunedEntry) -> None:
        with self._lock:
            self.entries = [e for e in self.entries if (e.device_identity, e.size_key)
                            != (entry.device_identity, entry.size_key)] + [entry]  # fmt: skip

    def kernel_for(
        self, context: Any, sizes: Mapping[str, int] | Sequence[int], *, device: Any = None
    ) -> RuntimeKernel:
        """The kernel for ``context``'s device (or ``device`` of it) at ``sizes`` (a
        mapping ``{"NX": 64, ...}``, or the values in the kernel's order): chosen once,
        then the same object for the same device and size."""
        cl_device = context_device(context, device)
        limits = device_limits(cl_device)
        named = self._named(sizes)
        key = (int(context.int_ptr), limits.identity, tuple(sorted(named.items())))
        with self._lock:
            found = self._kernels.get(key)
            entries = list(self.entries)
        if found is not None:
            return found
        choice = choose(entries, limits, named, self.kernel, self.label)
        made = RuntimeKernel(self, context, cl_device, limits, named, choice)
        with self._lock:
            found = self._kernels.setdefault(key, made)
        if found is made and choice.kind in (NEAREST, DEFAULT) and self.tuner is not None:
            made._start_tuning(self.tuner)
        return found

    def _named(self, sizes: Mapping[str, int] | Sequence[int]) -> dict[str, int]:
        if isinstance(sizes, Mapping):
            return {str(k): int(v) for k, v in sizes.items()}
        names = (
            list(self.kernel.sizes)
            if self.kernel is not None
            else list(self.entries[0].sizes)
            if self.entries
            else []
        )
        if len(names) != len(sizes):
            raise InputError(
                f"{len(sizes)} sizes given for {len(names)} size names ({', '.join(names)})",
                source=self.label,
            )
        return {n: int(v) for n, v in zip(names, sizes, strict=True)}

    def close(self, timeout: float | None = None) -> None:
        """Stop online tuning (what it measured stays in the store)."""
        if self.tuner is not None:
            self.tuner.close(timeout)

    def __enter__(self) -> TunedLibrary:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def open_tuned(
    *sources: str | Path,
    kernel: TunableKernel | str | Path | None = None,
    tune_missing: Budget | int | str | None = None,
    store: str | Path | None = None,
    shutdown_s: float = 5.0,
    tune_options: Mapping[str, object] | None = None,
) -> TunedLibrary:
    """Open tuned results for an application (see :class:`TunedLibrary`)."""
    return TunedLibrary(
        *sources, kernel=kernel, tune_missing=tune_missing, store=store,
        shutdown_s=shutdown_s, tune_options=tune_options,
    )  # fmt: skip


def _as_kernel(kernel: TunableKernel | str | Path | None) -> TunableKernel | None:
    if kernel is None or isinstance(kernel, TunableKernel):
        return kernel
    from gtune.description import load_kernel

    return load_kernel(kernel)


def _label(entries: Sequence[TunedEntry]) -> str:
    names = sorted({e.tuned.name for e in entries if e.tuned is not None})
    return names[0] if names else "tuned kernel"


def _size_text(sizes: Mapping[str, int]) -> str:
    return "x".join(str(v) for v in sizes.values())


__all__ = ["RuntimeKernel", "TunedLibrary", "open_tuned"]

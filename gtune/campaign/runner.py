"""Running a campaign on Dask.distributed.

Local by default: a cluster of one worker process per OpenCL device (each worker's
evaluator starts its own compile helpers beside it), or an existing cluster through
its scheduler address. Every worker advertises the devices it drives as Dask
resources (``gtune-<device slug>``), so each task runs where its device is. Workers
write every result to the campaign's shared store as it is measured; the client
writes each finished task's summary to ``tasks.jsonl`` in the campaign's folder, so a
rerun skips finished tasks and re-running an unfinished task only measures what the
store lacks. A worker that dies mid-task is restarted by its nanny and the task queued
again (up to ``retries`` times) for a worker with that device. Local clusters speak TLS
with credentials made for them, so only the campaign's own processes connect.
"""

from __future__ import annotations

import contextlib
import gc
import json
import logging
import math
import os
import re
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

from gtune.api import CampaignResult, TuningTask
from gtune.campaign.host import host_cores
from gtune.campaign.schedule import (
    COMPILE_WORKERS_ENV,
    Piece,
    Queue,
    build_slots,
    compile_budget,
    device_share,
    device_workers,
    helpers_per_worker,
    plan,
    seconds_per_config,
)
from gtune.campaign.spec import CampaignSpec, CampaignTask, check_task_count, expand
from gtune.campaign.task import (
    BOUND_DEVICE,
    BOUND_LIMITS,
    PROGRESS_TOPIC,
    execute_task,
    warm_worker,
)
from gtune.exceptions import EnvironmentProblem, GtuneError, InputError
from gtune.measure.buildslots import BUILD_SLOTS_ENV, slots_from_env
from gtune.tuning.events import (
    CampaignStarted,
    CancelToken,
    NullObserver,
    Observer,
    TaskFinished,
    TaskProgress,
)

log = logging.getLogger("gtune.campaign")


def _quiet_workers() -> dict[str, str]:
    """Set in each local worker process before it starts. Dask's own lines stay off the
    terminal: a task's failure is in the campaign's report, with its message, and what a
    worker logs while the cluster shuts down (a heartbeat to a scheduler already gone) is
    noise. gtune's debug logging (``-vv``) lets Dask's errors through."""
    debug = logging.getLogger("gtune").isEnabledFor(logging.DEBUG)
    return {"DASK_LOGGING__DISTRIBUTED": "error" if debug else "critical"}


def resource_name(selector: str) -> str:
    """The Dask resource a worker driving device ``selector`` advertises."""
    slug = re.sub(r"[^a-z0-9]+", "-", (selector or "default").lower()).strip("-")
    return f"gtune-{slug or 'default'}"


def _finished(task: CampaignTask, summary: dict[str, Any] | None, error: str = "") -> TaskFinished:
    return TaskFinished(
        key=task.key,
        label=task.label,
        size=task.size_text,
        strategy=task.strategy,
        device=task.device or "",
        summary=summary,
        error=error,
    )


def read_done(path: Path) -> dict[str, dict[str, Any]]:
    done: dict[str, dict[str, Any]] = {}
    if not path.exists():
        return done
    for i, line in enumerate(path.read_text().splitlines(), start=1):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
            done[str(row["key"])] = row
        except (json.JSONDecodeError, KeyError, TypeError):
            raise InputError(f"line {i} is not a task summary", source=path) from None
    return done


def _store_url(spec: CampaignSpec, out_dir: Path, override: str | None) -> str:
    url = override or spec.store
    if url is None:
        return str((out_dir / "campaign.db").resolve())
    if "://" not in url and not os.path.isabs(url):
        return str((Path(spec.base_dir) / url).resolve())
    return url


def physical_devices() -> list[dict[str, Any]]:
    """The OpenCL devices of this machine, listed by a child process (``gtune devices
    --json``) so that the campaign's own process never loads an OpenCL driver."""
    import subprocess

    from gtune.processes import child_env, python_command

    try:
        proc = subprocess.run(
            python_command("gtune", "devices", "--json"),
            env=child_env(),
            start_new_session=True,  # Ctrl-C at the terminal is gtune's to handle
            capture_output=True,
            text=True,
            timeout=120,
        )
        devices: list[dict[str, Any]] = json.loads(proc.stdout)["devices"]
    except (OSError, subprocess.TimeoutExpired, json.JSONDecodeError, KeyError, TypeError):
        raise EnvironmentProblem("cannot list this machine's OpenCL devices") from None
    return devices


def matching(selector: str, devices: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """Every device a selector names (as ``--device`` does, but all of them); selectors
    joined by commas (``0:0,0:1``) name every device any of them names, in order: the
    workers of all of them share the tasks, as those of one selector matching several
    identical GPUs do."""
    if "," in selector:
        found: dict[str, dict[str, Any]] = {}
        for part in selector.split(","):
            if not part.strip():
                continue
            for d in matching(part.strip(), devices):
                found.setdefault(str(d.get("selector")), d)
        return list(found.values())
    if not selector:
        gpus = [d for d in devices if "GPU" in str(d.get("type", ""))]
        return (gpus or list(devices))[:1]
    exact = [d for d in devices if selector in (d.get("selector"), d.get("identity"))]
    if exact:
        return exact
    low = selector.lower()
    return [
        d
        for d in devices
        if low in str(d.get("name", "")).lower()
        or low in str(d.get("platform", "")).lower()
        or low == str(d.get("type", "")).lower()
    ]


def host_gpus(devices: Sequence[dict[str, Any]]) -> int:
    """How many GPUs (or other accelerators) of ``devices`` (a machine's list) there are."""
    return sum(1 for d in devices if "CPU" not in str(d.get("type", "")).upper())


LOOPBACK = "127.0.0.1"
LOCAL_TLS = True
"""Whether local clusters speak TLS (:func:`local_security`): always, in gtune; only
benchmarks/campaign/tls_cost.py turns it off, to measure what TLS costs."""
DASHBOARD_PORT = 8787


def worker_specs(
    devices: Sequence[str],
    workers_per_device: int | None,
    found: Sequence[dict[str, Any]],
    cores: int,
    *,
    slots: int | None = None,
) -> dict[str, dict[str, Any]]:
    """The local cluster's workers (name -> Dask worker options, without their class):
    for each physical device a selector names, its workers, bound to it, advertising
    the selector, each told its compile helpers (``GTUNE_COMPILE_WORKERS``), the
    host's build slots (``GTUNE_BUILD_SLOTS``: ``slots``, default
    :func:`gtune.campaign.schedule.build_slots` of the host's physical ``cores`` and
    the devices used; 0: no limit) and the device's limits as ``found`` lists them (so
    its first task does not list the devices again).

    A GPU's workers each get :func:`gtune.campaign.schedule.helpers_per_worker`
    helpers: the same whichever of the host's GPUs are used, more than an equal split
    of the slots, so that the searches still running build in the slots of those that
    have ended. A CPU device's worker builds on the cores it measures on: its share of
    the cores, split as :func:`gtune.campaign.schedule.compile_budget` says."""
    workers: dict[str, dict[str, Any]] = {}
    chosen: list[tuple[str, dict[str, Any]]] = []
    for d in dict.fromkeys(devices):
        targets = matching(d, found)
        if not targets:
            names = "; ".join(f"{x.get('selector')} {x.get('name')}" for x in found)
            raise InputError(f"no OpenCL device matches {d!r}; devices: {names}", source="devices")
        chosen += [(d, t) for t in targets]
    # each device gets its share of the host's cores (split over all the host's GPUs,
    # used or not), its workers and their compile helpers sharing that share
    physical = len({str(t.get("selector")) for _, t in chosen})
    host_devices = max(physical, host_gpus(found))
    share = device_share(cores, physical, host_gpus(found))
    budget = build_slots(cores, physical) if slots is None else max(0, slots)
    for d, target in chosen:
        kind = str(target.get("type", ""))
        per_device = workers_per_device or device_workers(kind, 1, share)
        if "CPU" in kind.upper():
            helpers = compile_budget(per_device, share)
        else:
            helpers = helpers_per_worker(cores, host_devices, per_device)
        for k in range(per_device):
            name = f"{resource_name(d)}-{target.get('selector')}-{k}"
            workers[name] = {
                "options": {
                    "host": LOOPBACK,
                    "dashboard": False,
                    "dashboard_address": f"{LOOPBACK}:0",
                    "nthreads": 1,
                    "resources": {resource_name(d): 1},
                    "name": name,
                    "memory_limit": 0,
                    "env": {
                        "DASK_LOGGING__DISTRIBUTED": "error",
                        BOUND_DEVICE: str(target.get("selector")),
                        BOUND_LIMITS: json.dumps(target),
                        COMPILE_WORKERS_ENV: str(helpers),
                        BUILD_SLOTS_ENV: str(budget),
                    },
                },
            }
    return workers


def local_cluster(
    devices: Sequence[str],
    workers_per_device: int | None = None,
    machine: Sequence[dict[str, Any]] | None = None,
    *,
    dashboard: bool = False,
    layout: dict[str, Any] | None = None,
) -> Any:  # distributed.SpecCluster
    """One worker process (one thread) per physical device a selector names, bound to
    that device and advertising the selector: a selector naming two identical GPUs
    gets two workers, one per GPU, sharing its tasks. ``workers_per_device`` workers
    share each device (their timings kept apart by the device lock); None: as
    :func:`gtune.campaign.schedule.device_workers` decides from the device's type and
    its share of the host's cores (:func:`gtune.campaign.schedule.device_share`: the
    cores split over all the host's GPUs, used or not), which also sets each worker's
    compile helpers (:func:`worker_specs`). Cores are the host's physical cores
    (:func:`gtune.campaign.host.host_cores`); ``GTUNE_BUILD_SLOTS`` set here overrides
    the host's build slots (0: no limit). ``layout``, if given, is filled with what was
    chosen: the host's cores, the build slots, each worker's device and helpers.

    Everything listens on the loopback interface only, and speaks TLS with credentials
    made for this cluster (:func:`local_security`): whoever reaches a Dask scheduler
    runs code in the process that holds it (docs/robustness.md, security model). The
    scheduler's HTTP server serves only ``/health`` unless ``dashboard``
    asks for the Dask dashboard (then on 127.0.0.1:8787, or another free port)."""
    try:
        import dask
        from distributed import Nanny, Scheduler, SpecCluster
    except ImportError:
        raise EnvironmentProblem("campaigns need Dask: pip install 'dask[distributed]'") from None
    found = list(machine) if machine is not None else physical_devices()
    cores = host_cores()
    slots = slots_from_env() if os.environ.get(BUILD_SLOTS_ENV, "").strip() else None
    workers = worker_specs(devices, workers_per_device, found, cores.physical, slots=slots)
    if layout is not None:
        env = [w["options"]["env"] for w in workers.values()]
        layout.update(
            cores=cores.to_dict(),
            build_slots=int(env[0][BUILD_SLOTS_ENV]) if env else 0,
            workers={
                name: {
                    "device": w["options"]["env"][BOUND_DEVICE],
                    "helpers": int(w["options"]["env"][COMPILE_WORKERS_ENV]),
                }
                for name, w in workers.items()
            },
        )
    security, protocol = (local_security(), "tls://") if LOCAL_TLS else (None, "tcp://")
    for w in workers.values():
        w["cls"] = Nanny
        w["options"].update(security=security, protocol=protocol)
    # Dask's nanny starts each worker as ``python -c ...`` (multiprocessing's spawn),
    # which would put the working directory first on the worker's sys.path.
    os.environ["PYTHONSAFEPATH"] = "1"
    port = DASHBOARD_PORT if dashboard else 0
    scheduler = {
        "cls": Scheduler,
        "options": {
            "host": LOOPBACK,
            "dashboard": dashboard,
            # Dask starts an HTTP server whatever ``dashboard`` says; without an
            # address it listens on every interface (port 8787), so name one.
            "dashboard_address": f"{LOOPBACK}:{port}",
            "security": security,
            "protocol": protocol,
        },
    }
    routes = dask.config.get("distributed.scheduler.http.routes", default=[])
    # Dask reads its logging set-up when a worker process imports it, before the
    # nanny's ``env`` is applied: only variables set before the spawn keep the
    # workers' INFO lines off the terminal.
    with dask.config.set(
        {
            "distributed.scheduler.http.routes": routes
            if dashboard
            else ["distributed.http.health"],
            "distributed.nanny.pre-spawn-environ": {**_quiet_workers(), "PYTHONSAFEPATH": "1"},
        }
    ):
        return SpecCluster(
            scheduler=scheduler,
            workers=workers,
            silence_logs=logging.CRITICAL,
            security=security,
        )


def local_security() -> Any:  # distributed.Security
    """Credentials made for one local cluster: a key and self-signed certificate held in
    memory (Dask's ``Security.temporary()``), given to the scheduler, the nannies, their
    workers and gtune's client only, never written to disk or passed on a command line.
    Every connection is TLS with both ends presenting that certificate, so no other
    process, of this user or another, can connect to the cluster and run code in it."""
    from distributed import Security

    try:
        return Security.temporary()
    except ImportError:
        raise EnvironmentProblem(
            "a local campaign cluster needs the cryptography package for its TLS "
            "credentials: pip install cryptography"
        ) from None


def run_campaign(
    spec: CampaignSpec,
    out_dir: Path,
    *,
    scheduler: str | None = None,
    store: str | None = None,
    workers_per_device: int | None = None,
    force: bool = False,
    observer: Observer | None = None,
    cancel: CancelToken | None = None,
    cluster_hook: Callable[[Any], None] | None = None,
    tls: SchedulerTls | None = None,
    dashboard: bool = False,
    connect_timeout: float = 30.0,
) -> CampaignResult:
    """Run every task of ``spec`` not yet finished; return the summaries of all.

    ``scheduler`` names an existing Dask scheduler (``tcp://`` or ``tls://``); without
    it a local cluster listening on loopback only runs the tasks (``dashboard`` adds
    the Dask dashboard there). ``tls`` gives the certificates for a ``tls://``
    scheduler; without them Dask's own configuration (``distributed.comm.tls``) is
    used. Certificates that are missing or do not fit the scheduler's address are
    refused before anything is written."""
    if scheduler is not None:
        check_scheduler(scheduler, tls)
    out_dir.mkdir(parents=True, exist_ok=True)
    return run_tasks(
        expand(spec, out_dir / "kernels"),
        out_dir,
        store_url=_store_url(spec, out_dir, store),
        scheduler=scheduler,
        workers_per_device=workers_per_device,
        retries=spec.retries,
        force=force,
        observer=observer,
        cancel=cancel,
        cluster_hook=cluster_hook,
        devices=list(dict.fromkeys(spec.devices)),
        name=spec.name,
        tls=tls,
        dashboard=dashboard,
        connect_timeout=connect_timeout,
    )


def run_tasks(
    tasks: Sequence[CampaignTask],
    out_dir: Path,
    *,
    store_url: str,
    scheduler: str | None = None,
    workers_per_device: int | None = None,
    retries: int = 2,
    force: bool = False,
    observer: Observer | None = None,
    cancel: CancelToken | None = None,
    cluster_hook: Callable[[Any], None] | None = None,
    devices: Sequence[str] | None = None,
    name: str = "campaign",
    tls: SchedulerTls | None = None,
    dashboard: bool = False,
    connect_timeout: float = 30.0,
    rate_of: Callable[[CampaignTask], float] | None = None,
    order: str = "longest",
    redo: Collection[str] = (),
) -> CampaignResult:
    """Run ``tasks`` not yet in ``out_dir/tasks.jsonl`` on Dask workers (a local cluster
    listening on loopback only, or the scheduler at ``scheduler``: ``tcp://`` or
    ``tls://``, with ``tls``'s certificates or Dask's own configuration), split and
    streamed as gtune.campaign.schedule says; every summary is appended to the ledger
    as it comes. ``dashboard`` adds the Dask dashboard to a local cluster. ``rate_of``
    gives a piece's seconds per configuration (default: its technique on its kernel's
    stencil traits, :func:`gtune.campaign.schedule.seconds_per_config`); ``order``:
    the longest pieces first, or the cheapest kernels' (:data:`~gtune.campaign.schedule.ORDERS`);
    ``redo``: keys of tasks to run again although the ledger has them; an entry that
    searched another version of its kernel is run again too (:func:`stale_entries`).

    The steps: the tasks left (:func:`_tasks_left`), the cluster and its client
    (:func:`_open_client`), the workers started (:func:`_start_workers`), the pieces
    planned and streamed to the workers (:func:`_drive`)."""
    if scheduler is not None:
        check_scheduler(scheduler, tls)  # refused before the folder or the ledger is written
    run = _Run(
        tasks,
        out_dir,
        name,
        observer if observer is not None else NullObserver(),
        cancel if cancel is not None else CancelToken(),
    )
    out_dir.mkdir(parents=True, exist_ok=True)
    check_task_count(len(tasks), name)
    ledger = out_dir / "tasks.jsonl"
    done = _tasks_left(run, ledger, force, redo)
    shown = devices if devices is not None else list(dict.fromkeys(t.device or "" for t in tasks))
    run.show.on_event(CampaignStarted(len(tasks), len(done), tuple(shown)))
    log.info(
        "campaign %s: %d tasks, %d already finished; store %s",
        name,
        len(tasks),
        len(done),
        store_url,
    )
    if not run.todo:
        return run.result()
    _check_before_start([t.strategy for t in run.todo], store_url, name)
    # the kernels' stencil traits (for the order pieces go in) are read while the
    # cluster starts: loading the kernels and the feature code takes a second or two
    shapes = _Shapes(run.todo if rate_of is None else ())
    layout: dict[str, Any] = {}
    opened = _open_client(
        run, scheduler, tls, connect_timeout, workers_per_device, dashboard, layout
    )
    if opened is None:  # cancelled while starting or connecting
        return run.result(cancelled=True)
    cluster, client = opened
    try:
        if cluster_hook is not None:
            cluster_hook(client)
        _check_resources(client, run.todo)
        _start_workers(run, client, layout)
        if run.token.cancelled:
            return run.result(cancelled=True)
        _follow_progress(client, run.show)
        shapes.wait()
        pieces = plan(run.todo, shapes.techniques_of, rate_of=rate_of or shapes.rate, order=order)
        _drive(run, _Stream(client, pieces, store_url, retries), ledger)
    finally:
        with contextlib.suppress(Exception):
            client.close(timeout=10)
        if cluster is not None:
            with contextlib.suppress(Exception):
                cluster.close(timeout=10)
    return run.result()


@dataclass
class _Run:
    """One call of :func:`run_tasks`: where it reports, and what it has gathered."""

    tasks: Sequence[CampaignTask]
    out_dir: Path
    name: str
    show: Observer
    token: CancelToken
    started: float = field(default_factory=time.monotonic)
    todo: list[CampaignTask] = field(default_factory=list)
    summaries: list[dict[str, Any]] = field(default_factory=list)
    failed: list[tuple[TuningTask, str]] = field(default_factory=list)
    start_s: float = 0.0

    def result(self, *, cancelled: bool = False) -> CampaignResult:
        return CampaignResult(
            summaries=self.summaries,
            failed=self.failed,
            skipped=len(self.tasks) - len(self.todo),
            out_dir=self.out_dir,
            wall_s=time.monotonic() - self.started,
            cancelled=cancelled or self.token.cancelled,
            start_s=self.start_s,
        )

    def fail(self, task: CampaignTask, text: str) -> None:
        self.failed.append((task, text))
        self.show.on_event(_finished(task, None, text))


def _tasks_left(
    run: _Run, ledger: Path, force: bool, redo: Collection[str]
) -> dict[str, dict[str, Any]]:
    """Fill ``run.todo`` (the tasks to run) and ``run.summaries`` (those of the tasks
    the ledger has); the ledger's entries kept. An entry of ``redo`` or of a kernel that
    changed since (:func:`stale_entries`) is run again."""
    done = {} if force else read_done(ledger)
    if done:
        stale = set(redo) | stale_entries(run.tasks, done)
        if stale:
            log.info(
                "campaign %s: %d finished tasks' kernels changed since; run again",
                run.name,
                len(stale),
            )
        done = {k: v for k, v in done.items() if k not in stale}
    run.todo = [t for t in run.tasks if t.key not in done]
    run.summaries = [done[t.key] for t in run.tasks if t.key in done]
    return {t.key: done[t.key] for t in run.tasks if t.key in done}


def _open_client(
    run: _Run,
    scheduler: str | None,
    tls: SchedulerTls | None,
    connect_timeout: float,
    workers_per_device: int | None,
    dashboard: bool,
    layout: dict[str, Any],
) -> tuple[Any, Any] | None:
    """(cluster or None, client): a client of ``scheduler``, or a local cluster started
    for the tasks and its client; None when cancelled meanwhile."""
    try:
        if scheduler:
            client = _connect(scheduler, _security(scheduler, tls), run.token, connect_timeout)
            return None if client is None else (None, client)
        cluster, client = _start_local(
            [t.device or "" for t in run.todo], workers_per_device, dashboard, run.token, layout
        )
        return None if client is None else (cluster, client)
    except OSError as exc:
        raise EnvironmentProblem(
            f"cannot reach the Dask scheduler: {exc}", hint="check --scheduler"
        ) from None


def _start_workers(run: _Run, client: Any, layout: dict[str, Any]) -> None:
    """Every worker's OpenCL processes started side by side, before any search; what
    they said written to ``cluster.json``."""
    warmed = time.monotonic()
    warm = _warm_workers(client, run.todo, len(layout.get("workers") or {}), run.token)
    run.start_s = time.monotonic() - run.started
    warm_s = time.monotonic() - warmed
    _write_start(run.out_dir / "cluster.json", layout, warm, run.start_s, warm_s)
    log.info(
        "campaign %s: %d workers started in %.1f s (%.1f s starting OpenCL workers)",
        run.name,
        len(warm),
        run.start_s,
        warm_s,
    )


def _follow_progress(client: Any, show: Observer) -> None:
    """Workers' progress messages (configurations measured so far) to ``show``."""

    def on_event(event: tuple[float, dict[str, Any]]) -> None:
        msg = event[1]
        with contextlib.suppress(Exception):
            show.on_event(
                TaskProgress(
                    str(msg["task"]),
                    str(msg["device"]),
                    int(msg["configs"]),
                    int(msg["measured"]),
                )
            )

    client.subscribe_topic(PROGRESS_TOPIC, on_event)


def _drive(run: _Run, stream: _Stream, ledger: Path) -> None:
    """Hand pieces to free workers until every one has ended (or the run is cancelled):
    pieces of a worker that died go back in the queue, a device no worker offers any
    more is given up after :data:`STRANDED_S`, each ended piece is settled."""
    with ledger.open("a") as fh, (run.out_dir / "pieces.jsonl").open("a") as pieces_fh:
        while not run.token.cancelled:
            workers = stream.workers()  # one scheduler query per turn, for all
            for piece, text in stream.requeue_lost(workers):
                log.error("campaign %s: task %s: %s", run.name, piece.key, text)
                if piece.final:
                    run.fail(piece.task, text)
            stream.hand_out(workers)
            for res, lost in stream.stranded(time.monotonic(), STRANDED_S, workers):
                text = (
                    f"no Dask worker offered {res} for {STRANDED_S:.0f} s (every worker "
                    "driving it died or left); its pieces were given up"
                )
                log.error("campaign %s: %s", run.name, text)
                for task in dict.fromkeys(p.task for p in lost if p.final):
                    run.fail(task, text)
            if stream.finished:
                return
            fut = stream.next_done(0.5)
            if fut is not None:
                _settle(run, stream, fut, fh, pieces_fh)
        stream.cancel()


class _ResultLost(Exception):
    """A piece ended, but its result died with its worker before it was fetched."""


FETCH_WAIT_S = 2.0
"""How long one wait for an ended piece's result lasts before its worker is looked for."""


def _fetch(run: _Run, stream: _Stream, fut: Any) -> Any:
    """An ended piece's result. A piece is bound to the worker it was handed to, so a
    result that worker held when it died would be computed again there, never: the
    wait would never end. So the result is waited for while that worker is connected;
    once it is gone the piece is queued again (or given up past its retries) and
    :class:`_ResultLost` raised."""
    while True:
        try:
            return fut.result(timeout=FETCH_WAIT_S)
        except TimeoutError:
            if fut.status == "error":  # the piece itself raised a TimeoutError
                raise
            if run.token.cancelled:  # the campaign stops: every piece is cancelled
                raise _ResultLost() from None
            if stream.worker_of(fut) in stream.workers():
                continue
        given_up = stream.requeue(fut)
        if given_up is not None and given_up[0].final:
            run.fail(given_up[0].task, given_up[1])
        raise _ResultLost()


def _settle(run: _Run, stream: _Stream, fut: Any, fh: IO[str], pieces_fh: IO[str]) -> None:
    """An ended piece: its summary appended to the ledger (a split task's pieces to
    ``pieces.jsonl``), or its failure reported (a campaign task's only)."""
    try:
        summary = _fetch(run, stream, fut)
    except _ResultLost:
        return
    except Exception as exc:  # GtuneError; a task that died on every retry (KilledWorker...)
        piece = stream.settle(fut)
        text = exc.render() if isinstance(exc, GtuneError) else f"{type(exc).__name__}: {exc}"
        log.warning("task %s failed: %s", piece.key, text)
        if piece.final:
            run.fail(piece.task, text)
        return
    piece = stream.settle(fut)
    summary = stream.ran(piece, summary)
    if not piece.final:
        pieces_fh.write(json.dumps(summary, default=_json_default) + "\n")
        pieces_fh.flush()
        return
    fh.write(json.dumps(summary, default=_json_default) + "\n")
    fh.flush()
    run.summaries.append(summary)
    log.info("task %s finished: %s configurations", piece.key, summary.get("evaluations"))
    run.show.on_event(_finished(piece.task, summary))


STRANDED_S = 180.0
"""How long a device's pieces wait with no worker offering it (a local cluster's nanny
restarts a dead worker in seconds) before the campaign gives them up as failed."""
WARM_TIMEOUT_S = 300.0  # the longest the workers' OpenCL processes are waited for
JOIN_TIMEOUT_S = 60.0  # the longest a local cluster's workers are waited for


def _warm_workers(
    client: Any, tasks: Sequence[CampaignTask], expected: int, token: CancelToken
) -> list[dict[str, Any]]:
    """Start every worker's OpenCL processes (:func:`gtune.campaign.task.warm_worker`)
    at once, before the first piece; what each said. ``expected``: the workers of a
    local cluster, waited for first (0: those connected now)."""
    from distributed import wait

    if expected:
        with contextlib.suppress(Exception):  # the tasks run on those that came
            client.wait_for_workers(expected, timeout=JOIN_TIMEOUT_S)
    selector: dict[str, str] = {}
    helpers: dict[str, int | None] = {}
    for t in tasks:
        res = resource_name(t.device or "")
        selector.setdefault(res, t.device or "")
        if t.compile_workers is not None:
            helpers[res] = max(helpers.get(res) or 0, t.compile_workers)
    futures = []
    target: dict[Any, str] = {}  # each warm-up's worker
    for addr, resources in sorted(_worker_resources(client).items()):
        mine = next((r for r in resources if r in selector), None)
        if mine is None:
            continue
        futures.append(
            client.submit(
                warm_worker,
                selector[mine],
                helpers.get(mine),
                key=f"gtune-warm-{addr}",
                resources={mine: 1},
                workers=[addr],
                allow_other_workers=False,
                pure=False,
            )
        )
        target[futures[-1]] = addr
    deadline = time.monotonic() + WARM_TIMEOUT_S
    pending = list(futures)
    gone: dict[Any, str] = {}
    while pending and not token.cancelled and time.monotonic() < deadline:
        with contextlib.suppress(Exception):  # (distributed's own TimeoutError)
            wait(pending, timeout=0.5)
        pending = [f for f in pending if not f.done()]
        if pending:
            # a warm-up bound to a worker that died (its nanny starts another, at another
            # address) would never run: given up at once, not at WARM_TIMEOUT_S
            try:
                alive = set(_worker_resources(client))
            except OSError:  # the scheduler busy: looked at again next turn
                continue
            for f in pending:
                if target[f] not in alive:
                    gone[f] = target[f]
            pending = [f for f in pending if f not in gone]
    if pending or gone:
        client.cancel(pending + list(gone))
    out: list[dict[str, Any]] = []
    for f in futures:
        if f in gone:
            out.append({"worker": gone[f], "error": "the worker died while starting"})
        elif f.done():
            try:
                out.append(f.result())
            except Exception as exc:  # a worker that died while starting: its nanny restarts it
                out.append({"error": f"{type(exc).__name__}: {exc}"})
    return out


def _write_start(
    path: Path,
    layout: dict[str, Any],
    warm: Sequence[dict[str, Any]],
    start_s: float,
    warm_s: float,
) -> None:
    """What the campaign started on: the host's cores and build slots (a local
    cluster), each worker's start, and the time before the first piece."""
    data = {
        **layout,
        "cores": layout.get("cores") or host_cores().to_dict(),
        "start_s": start_s,
        "warm_s": warm_s,
        "searching_from": time.time(),  # the first piece is handed out now
        "started": list(warm),
    }
    with contextlib.suppress(OSError):
        path.write_text(json.dumps(data, indent=2, default=_json_default) + "\n")


def _scheduler_workers(client: Any) -> dict[str, Any]:
    """Every connected worker's identity, asked of the scheduler now; OSError when the
    scheduler does not answer. Not ``Client.scheduler_info()``: that answers from the
    client's cached identity, which the client's own periodic refresh replaces with one
    listing no worker (it asks for ``n_workers=0``) and which a failed query leaves as
    it was. A driver turn that read such an answer took every worker for gone and
    queued every running piece again (a loaded CI run measured its pieces twice)."""
    kwargs = {"n_workers": -1} if _accepts_n_workers(client) else {}
    info = client.sync(client.scheduler.identity, **kwargs)
    return dict(info.get("workers", {}) or {})


def _worker_resources(client: Any) -> dict[str, dict[str, float]]:
    """Each connected worker's resources (:func:`_scheduler_workers`)."""
    return {
        addr: dict(w.get("resources", {}) or {}) for addr, w in _scheduler_workers(client).items()
    }


@dataclass(frozen=True)
class SchedulerTls:
    """Dask TLS credentials for a ``tls://`` scheduler: the certificate authority that
    signed the scheduler's certificate, and this client's certificate and key (``key``
    may be inside ``cert``)."""

    ca_file: str
    cert: str
    key: str | None = None


def check_scheduler(scheduler: str, tls: SchedulerTls | None) -> None:
    """What connecting to ``scheduler`` with ``tls`` would refuse, refused now, before
    anything is written or connected: a ``tls://`` scheduler without certificates, a
    certificate file that is not there, certificates for an address that is not
    ``tls://`` (:class:`~gtune.exceptions.InputError`, naming the file or address)."""
    _security(scheduler, tls)


def _security(scheduler: str, tls: SchedulerTls | None) -> Any:  # distributed.Security
    from distributed import Security

    secure = scheduler.startswith("tls://")
    if tls is None:
        security = Security()  # Dask's configuration: distributed.comm.tls.*
        if secure and not (
            getattr(security, "tls_ca_file", None) and getattr(security, "tls_client_cert", None)
        ):
            raise InputError(
                "a tls:// scheduler needs certificates: give --tls-ca-file and --tls-cert "
                "(and --tls-key), or set distributed.comm.tls in Dask's configuration",
                source=scheduler,
            )
        return security
    for what, path in (("CA file", tls.ca_file), ("certificate", tls.cert), ("key", tls.key)):
        if path is not None and not Path(path).is_file():
            raise InputError(f"TLS {what}: no such file", source=path)
    if not secure:
        raise InputError(
            "TLS certificates were given but the scheduler address is not tls://",
            source=scheduler,
        )
    return Security(
        tls_ca_file=tls.ca_file,
        tls_client_cert=tls.cert,
        tls_client_key=tls.key,
        require_encryption=True,
    )


def _connect(scheduler: str, security: Any, token: CancelToken, timeout: float) -> Any:
    """A client of ``scheduler``, or None when ``token`` is cancelled first.

    Dask's own connect timeout does not cover a peer that accepts the connection and
    never answers the handshake, so the client is made on a helper thread and given
    up on after ``timeout`` seconds (or at once on cancel)."""
    from distributed import Client

    made: list[Any] = []
    error: list[BaseException] = []

    def connect() -> None:
        try:
            made.append(Client(scheduler, timeout=timeout, security=security))
        except BaseException as exc:  # handed to the waiting thread
            error.append(exc)

    helper = threading.Thread(target=connect, name="gtune-dask-connect", daemon=True)
    helper.start()
    deadline = time.monotonic() + timeout + 5.0
    while helper.is_alive() and time.monotonic() < deadline and not token.cancelled:
        helper.join(0.2)
    if made:
        if token.cancelled:
            with contextlib.suppress(Exception):
                made[0].close(timeout=5)
            return None
        return made[0]
    if token.cancelled:
        return None
    if error:
        exc = error.pop()
        if isinstance(exc, GtuneError):
            raise exc
        what = f"{type(exc).__name__}: {exc}"
        # the refused client, held by the exception's frames, is closed now: collected
        # later, its __del__ could run inside another client's start in this process,
        # which holds the class-wide lock its close() waits for (distributed's
        # LoopRunner), and hang there
        del exc
        gc.collect()
        raise EnvironmentProblem(
            f"cannot reach the Dask scheduler {scheduler}: {what}",
            hint="check --scheduler (and --tls-* for a tls:// scheduler)",
        )
    raise EnvironmentProblem(
        f"the Dask scheduler {scheduler} did not answer within {timeout:.0f} s",
        hint="check --scheduler: is a Dask scheduler listening there?",
    )


def _start_local(
    devices: list[str],
    workers_per_device: int | None,
    dashboard: bool,
    token: CancelToken,
    layout: dict[str, Any] | None = None,
) -> tuple[Any, Any]:
    """A local cluster and its client; (None, None) when cancelled while starting.

    Ctrl-C at a terminal reaches every process of its group: the cluster's processes are
    started with SIGINT ignored (which they inherit, and Python keeps), so that only
    gtune decides what it means. While they start, gtune ignores it too; a sentinel
    process of the same group, which Ctrl-C ends, tells afterwards whether one came
    (:func:`_interrupt_sentinel`), so a Ctrl-C in the seconds the cluster takes to start
    stops the campaign as one after it does."""
    import signal

    from distributed import Client

    machine = physical_devices()  # its own session: Ctrl-C meanwhile is gtune's
    if token.cancelled:
        return None, None
    cluster = None
    previous: Any = None
    sentinel = None
    if threading.current_thread() is threading.main_thread():  # else signals are not ours
        sentinel = _interrupt_sentinel()
        previous = signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        cluster = local_cluster(
            devices, workers_per_device, machine, dashboard=dashboard, layout=layout
        )
        client = Client(cluster)
    except GtuneError:
        raise
    except Exception as exc:
        if cluster is not None:
            with contextlib.suppress(Exception):
                cluster.close(timeout=10)
        if token.cancelled:
            return None, None
        raise EnvironmentProblem(
            f"the local Dask cluster did not start: {type(exc).__name__}: {exc}"
        ) from None
    finally:
        if previous is not None:
            signal.signal(signal.SIGINT, previous)
        if sentinel is not None and _interrupted(sentinel):
            token.cancel()
    if token.cancelled:
        with contextlib.suppress(Exception):
            client.close(timeout=10)
            cluster.close(timeout=10)
        return None, None
    return cluster, client


def _interrupt_sentinel() -> subprocess.Popen[bytes] | None:
    """A process in gtune's process group that sleeps with SIGINT's default action, so
    that a terminal's Ctrl-C ends it while gtune itself ignores SIGINT (None if it
    cannot be started: a Ctrl-C meanwhile then goes unseen, as before). Started before
    gtune ignores SIGINT: a handler is reset to the default in the new program, and a
    SIGINT ignored already (a background job) is inherited, so it never ends by it. Its
    first statement sets the default action again (Python's own handler would unwind a
    KeyboardInterrupt first, for milliseconds): the kernel then ends it the moment the
    signal is sent, by SIGINT, which its exit status tells (:func:`_interrupted`)."""
    code = "import signal,time;signal.signal(signal.SIGINT,signal.SIG_DFL);time.sleep(86400)"
    try:
        return subprocess.Popen(
            [sys.executable, "-S", "-c", code],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
    except OSError:
        return None


def _interrupted(sentinel: subprocess.Popen[bytes]) -> bool:
    """Whether ``sentinel`` was ended by SIGINT (a Ctrl-C: nothing else sends it one);
    it is stopped either way. Its exit status decides, not whether it has exited yet: a
    Ctrl-C just before this check has already doomed it, and the SIGKILL sent here then
    changes neither that nor its status."""
    import signal

    if sentinel.poll() is None:
        with contextlib.suppress(OSError):
            sentinel.send_signal(signal.SIGKILL)
    with contextlib.suppress(subprocess.TimeoutExpired):
        sentinel.wait(timeout=5)
    return sentinel.returncode == -signal.SIGINT


def _check_before_start(strategies: Sequence[str], store_url: str, campaign: str) -> None:
    """What every task needs and the client can check: the strategies exist and the
    store opens. A mistake there is one message before any cluster starts, not a
    failure of every task after it."""
    from gtune.heuristics import get_strategy
    from gtune.store import open_store
    from gtune.tuning.strategy import GENERIC

    for name in dict.fromkeys(strategies):
        if name != GENERIC:
            try:
                get_strategy(name)
            except GtuneError as exc:
                raise InputError(exc.message, source=f"{campaign}: strategies") from None
    open_store(store_url).close()


_Kernels = dict[tuple[str, tuple[tuple[str, int], ...]], Any]


def _kernel_of(task: CampaignTask, loaded: _Kernels) -> Any:  # TunableKernel
    from gtune.api import as_kernel
    from gtune.description import load_kernel

    key = (repr(task.kernel), tuple(task.sizes))
    if key not in loaded:
        if isinstance(task.kernel, str):
            loaded[key] = load_kernel(task.kernel, dict(task.sizes) or None)
        else:
            loaded[key] = as_kernel(task.kernel, dict(task.sizes))
    return loaded[key]


def stale_entries(tasks: Sequence[CampaignTask], done: Mapping[str, Mapping[str, Any]]) -> set[str]:
    """Keys of ``tasks`` whose ledger entry in ``done`` searched another version of the
    task's kernel (the entry's ``kernel_identity`` is not the kernel's identity now: its
    file, headers, description or the generator changed since). Entries that record no
    identity (older ledgers), and kernels that no longer load (the task says why when
    it runs), stand."""
    identities: dict[tuple[str, tuple[tuple[str, int], ...]], str | None] = {}
    out: set[str] = set()
    for task in tasks:
        then = (done.get(task.key) or {}).get("kernel_identity")
        if not then:
            continue
        key = (repr(task.kernel), tuple(task.sizes))
        if key not in identities:  # each kernel and size loaded once, none kept
            try:
                identities[key] = _kernel_of(task, {}).identity()
            except Exception:  # whatever stops it loading, the entry stands
                identities[key] = None
        now = identities[key]
        if now is not None and now != then:
            out.add(task.key)
    return out


class _Shapes:
    """The stencil traits and techniques of the tasks' kernels, read on a helper thread:
    a piece's expected seconds per configuration is its technique on its stencil's shape
    (a kernel gtune reads no stencil shape from, or cannot load, is rated as a small
    one). Neither depends on the problem size: each kernel is loaded once (with its
    first task's size), and only what was read of it is kept, not the kernel, so that a
    campaign of many kernels and sizes holds little."""

    def __init__(self, tasks: Sequence[CampaignTask] = ()) -> None:
        self.traits: dict[str, Any] = {}
        self.techniques: dict[str, list[str]] = {}
        self._tasks = list(tasks)
        self._thread = threading.Thread(target=self._read, name="gtune-shapes", daemon=True)
        self._thread.start()

    def _read(self) -> None:
        from gtune.loadpredict.features import traits_of

        for task in self._tasks:
            key = repr(task.kernel)
            if key in self.traits:
                continue
            try:
                kernel = _kernel_of(task, {})
            except Exception:  # the task itself says what is wrong with its kernel
                self.traits[key] = None
                continue
            self.techniques[key] = list(kernel.techniques)
            try:
                self.traits[key] = traits_of(kernel)
            except Exception:
                self.traits[key] = None

    def wait(self) -> None:
        """Return once every kernel was read."""
        self._thread.join()

    def techniques_of(self, task: CampaignTask) -> list[str]:
        """The techniques of ``task``'s kernel (one not read yet, or that failed to
        load, is loaded now: its error is the campaign's)."""
        key = repr(task.kernel)
        if key not in self.techniques:
            self.techniques[key] = list(_kernel_of(task, {}).techniques)
        return self.techniques[key]

    def rate(self, task: CampaignTask) -> float:
        return seconds_per_config(task.technique, self.traits.get(repr(task.kernel)))


class _Stream:
    """Pieces handed to workers one at a time as they free up (gtune.campaign.schedule):
    each free worker gets the longest ready piece its devices can run, preferring one
    of the kernel it ran last; nothing waits on a worker's own queue, so at most one
    piece per worker slot is in flight, whatever the campaign's size.

    A piece runs on the worker it was handed to and nowhere else (Dask would keep a
    piece bound to a dead worker's address waiting forever, ``no-worker``, and may run
    a loosely bound one on a worker without its device): when that worker dies or
    leaves, the piece goes back in the queue (:meth:`requeue_lost`) for the worker its
    nanny starts or another with the device."""

    def __init__(self, client: Any, pieces: Sequence[Piece], store_url: str, retries: int) -> None:
        from distributed import as_completed

        self.client = client
        self.store_url = store_url
        self.retries = retries
        self._workers: dict[str, dict[str, float]] = {}  # the connected ones, last asked
        self.queues: dict[str, Queue] = {}
        for res in dict.fromkeys(resource_name(p.task.device or "") for p in pieces):
            self.queues[res] = Queue.of(
                p for p in pieces if resource_name(p.task.device or "") == res
            )
        self.running: dict[Any, tuple[Piece, str]] = {}  # future -> (piece, worker)
        self.last_group: dict[str, str] = {}  # worker -> group of its last piece
        self.split: dict[str, list[dict[str, Any]]] = {}  # task key -> its pieces' summaries
        self.pending = as_completed([], with_results=False)
        self._unoffered: dict[str, float] = {}  # device -> since when no worker offers it
        self.lost: dict[str, int] = {}  # piece key -> times its worker died under it

    @property
    def finished(self) -> bool:
        return not self.running and not any(len(q) for q in self.queues.values())

    def workers(self) -> dict[str, dict[str, float]]:
        """The connected workers' resources (one scheduler query): what
        :meth:`hand_out` and :meth:`stranded` of the same loop turn both read."""
        try:
            self._workers = _worker_resources(self.client)
        except OSError as exc:  # the scheduler busy: the last answer stands this turn
            log.debug("the scheduler did not say which workers are connected: %s", exc)
        return self._workers

    def hand_out(self, workers: Mapping[str, Mapping[str, float]]) -> None:
        if not any(q.ready for q in self.queues.values()):
            return
        busy: dict[str, int] = {}
        for _, worker in self.running.values():
            busy[worker] = busy.get(worker, 0) + 1
        for addr, resources in sorted(workers.items()):
            for res, amount in resources.items():
                queue = self.queues.get(res)
                while queue is not None and queue.ready and busy.get(addr, 0) < max(1, amount):
                    elsewhere = {p.group for p, w in self.running.values() if w != addr}
                    piece = queue.take(self.last_group.get(addr), elsewhere)
                    assert piece is not None
                    self._submit(piece, addr, res)
                    busy[addr] = busy.get(addr, 0) + 1

    def _submit(self, piece: Piece, worker: str, res: str) -> None:
        again = self.lost.get(piece.key, 0)
        fut = self.client.submit(
            execute_task,
            piece.task.to_dict(),
            self.store_url,
            key=f"gtune-{piece.key}" + (f"-again{again}" if again else ""),
            resources={res: 1},
            workers=[worker],
            allow_other_workers=False,  # if it dies: requeue_lost
            retries=self.retries,
            pure=False,
        )
        self.running[fut] = (piece, worker)
        self.last_group[worker] = piece.group
        self.pending.add(fut)

    def requeue_lost(self, workers: Mapping[str, Mapping[str, float]]) -> list[tuple[Piece, str]]:
        """Pieces handed to a worker that is not among ``workers`` (the connected ones)
        and not ended: their futures cancelled, the pieces queued again (what they stored
        is served when they run again). A piece whose worker died under it more than
        ``retries`` times is given up instead: returned with why."""
        out: list[tuple[Piece, str]] = []
        for fut, (_, worker) in list(self.running.items()):
            if worker in workers or fut.done():
                continue
            given_up = self.requeue(fut)
            if given_up is not None:
                out.append(given_up)
        return out

    def requeue(self, fut: Any) -> tuple[Piece, str] | None:
        """The piece of ``fut``, whose worker is gone, queued again (its future
        cancelled); given up instead, and returned with why, past ``retries``."""
        piece, worker = self.running.pop(fut)
        self.client.cancel([fut])
        self.lost[piece.key] = times = self.lost.get(piece.key, 0) + 1
        queue = self.queues[resource_name(piece.task.device or "")]
        if times > self.retries:
            queue.done(piece.key)
            return piece, f"its Dask worker died or left {times} times while running it"
        log.warning("task %s: its worker %s is gone; queued again", piece.key, worker)
        queue.push(piece)
        return None

    def worker_of(self, fut: Any) -> str:
        return self.running[fut][1]

    def next_done(self, timeout: float) -> Any:
        deadline = time.monotonic() + timeout
        while True:
            if self.pending.has_ready():
                fut = next(self.pending)
                if fut in self.running:  # not one given up or queued again meanwhile
                    return fut
                continue
            if time.monotonic() >= deadline:
                return None
            time.sleep(0.02)

    def settle(self, fut: Any) -> Piece:
        """A future ended (well or not): pieces waiting on it may become ready."""
        piece, _ = self.running.pop(fut)
        self.queues[resource_name(piece.task.device or "")].done(piece.key)
        return piece

    def ran(self, piece: Piece, summary: dict[str, Any]) -> dict[str, Any]:
        """Note where ``piece`` ran; a split task's summary gets its pieces' counts (what
        the pieces measured, its own searches were served: as an unsplit run reports)."""
        worker = str(summary.get("worker") or "")
        if worker:
            self.last_group[worker] = piece.group
        if not piece.final:
            self.split.setdefault(piece.parent, []).append(summary)
            return summary
        parts = self.split.pop(piece.key, [])
        if not parts:
            return summary
        measured = sum(int(p.get("measured") or 0) for p in parts)
        own = int(summary.get("measured") or 0)
        return {
            **summary,
            "measured": own + measured,
            "reused": max(0, int(summary.get("reused") or 0) - measured),
            "split": {
                "pieces": len(parts),
                "measured": measured,
                "wall_s": sum(float(p.get("wall_s") or 0.0) for p in parts),
            },
        }

    def cancel(self) -> None:
        self.client.cancel(list(self.running))

    def stranded(
        self, now: float, after_s: float, workers: Mapping[str, Mapping[str, float]]
    ) -> list[tuple[str, list[Piece]]]:
        """The devices with work left that none of ``workers`` (the connected ones) has
        offered for ``after_s`` seconds (every worker driving it died or left, and none
        came back): their pieces, taken out of the stream (running ones cancelled)."""
        offered = {r for resources in workers.values() for r in resources}
        out: list[tuple[str, list[Piece]]] = []
        for res, queue in self.queues.items():
            running = [
                f for f, (p, _) in self.running.items() if resource_name(p.task.device or "") == res
            ]
            if res in offered or not (len(queue) or running):
                self._unoffered.pop(res, None)
                continue
            since = self._unoffered.setdefault(res, now)
            if now - since < after_s:
                continue
            pieces = [self.running.pop(f)[0] for f in running]
            self.client.cancel(running)
            out.append((res, pieces + queue.drain()))
            del self._unoffered[res]
        return out


def _json_default(value: Any) -> Any:
    if isinstance(value, float) and not math.isfinite(value):
        return None
    return str(value)


def _check_resources(client: Any, tasks: Sequence[CampaignTask]) -> None:
    """Every task's device must be advertised by at least one worker (or wait for one)."""
    deadline = time.monotonic() + 60
    needed = {resource_name(t.device or "") for t in tasks}
    while True:
        have: set[str] = set()
        with contextlib.suppress(OSError):  # the scheduler busy: asked again
            for resources in _worker_resources(client).values():
                have.update(resources)
        missing = needed - have
        if not missing:
            return
        if time.monotonic() > deadline:
            raise EnvironmentProblem(
                "no Dask worker advertises "
                + ", ".join(sorted(missing))
                + "; start workers with e.g. `dask worker ADDR --nthreads 1 --resources "
                + f"{sorted(missing)[0]}=1` (see docs/campaigns.md)"
            )
        time.sleep(0.5)


def _accepts_n_workers(client: Any) -> bool:
    import inspect

    try:
        return "n_workers" in inspect.signature(client.scheduler_info).parameters
    except (TypeError, ValueError):
        return False

"""Which piece of work runs next, and where: the campaign's scheduling, as pure logic.

A campaign task that searches every technique (``technique: all``, the oracle, a
load-predictor collection) is split into *pieces*: one search per technique, each a
task of its own that any worker with the device can run, with no confirmation round.
The task itself runs last, once its pieces are done: its searches are then served from
the shared store (the same searches ask for the same configurations) and it only
confirms the best, so its summary is what an unsplit run would have written.

Pieces are handed out by the client one at a time, as workers free up (streamed, never
queued on a worker in advance), the longest expected first (longest-processing-time
list scheduling: the long ones start early and short ones fill the gaps at the end).
A piece's expected length is its configurations times :func:`seconds_per_config`, the
time one configuration of its technique takes on a stencil of its shape: a search waits
mostly for the compiler, and what the compiler is given grows with the loads per point
(quadratically for vector loads) and, for streaming a stencil with no z extent through
a 3D array, with its points (one search there takes 20 times a 3D one).
Among pieces about as long as the longest, a worker gets one of the kernel it ran last,
so it reuses that kernel's open session (space, evaluator, data on the device).

That order gives the least time for the whole campaign. A campaign cut by a time limit
(a load-predictor collection continued session by session) wants something else: the
most finished kernels when the limit comes. ``order="cheapest"`` ranks the kernels by
their expected total (all their pieces): a worker goes on with its kernel's pieces
(longest first) until that kernel is done, and a free worker starts the cheapest kernel
no other worker is on, so kernels finish from the cheapest, each kernel's session
opened once.

:func:`simulate` runs the same rules on made-up durations, so that the effect of the
order on the time all workers take can be checked without a device.
"""

from __future__ import annotations

import heapq
import itertools
import math
from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

from gtune.budget import Budget
from gtune.campaign.spec import CampaignTask
from gtune.tuning.techniques import ALL, technique_for

if TYPE_CHECKING:  # the load predictor's package is heavy to import; only its type here
    from gtune.loadpredict.features import StencilTraits

TIE = 0.9  # pieces at least this share of the longest ready one count as "as long"
ORDERS = ("longest", "cheapest")  # what :func:`plan` hands out first
DEFAULT_EVALUATIONS = 200.0  # what a search without a count budget is assumed to take


COMPILE_WORKERS_ENV = "GTUNE_COMPILE_WORKERS"  # a worker's compile helpers (set per worker)
MAX_COMPILE_WORKERS = 8
RESERVED_CORES = 2  # the campaign's client and the Dask scheduler


def compile_budget(device_workers: int, cores: int) -> int:
    """Compile helpers per device worker so that all of a host's device workers together
    use its cores: one core each for the device workers themselves, the rest shared
    (at least one helper each, at most eight)."""
    workers = max(1, device_workers)
    return max(1, min(MAX_COMPILE_WORKERS, (cores - workers) // workers))


LEND = 2  # a worker's helpers: this many times its equal share of the build slots


def build_slots(cores: int, devices_used: int) -> int:
    """Builds the host runs at once, all its device workers together
    (gtune.measure.buildslots): its physical ``cores`` less :data:`RESERVED_CORES`
    (the client, the Dask scheduler) and one for each device in use (its workers'
    measuring, which takes turns on the device); on a host too small for that, the
    cores less one for each device, at least one."""
    used = max(1, devices_used)
    spare = cores - RESERVED_CORES - used
    return spare if spare >= 1 else max(1, cores - used)


def helpers_per_worker(cores: int, host_devices: int, workers_per_device: int) -> int:
    """Compile helpers per device worker, the same whichever of the host's devices a
    campaign uses: :data:`LEND` times its equal share of the build slots all the
    host's devices have (:func:`build_slots`), at most :data:`MAX_COMPILE_WORKERS`.
    More helpers than slots: the slots bound what all of them build at once, so the
    workers still searching use the slots of those that have finished."""
    workers = max(1, host_devices) * max(1, workers_per_device)
    slots = build_slots(cores, max(1, host_devices))
    return max(1, min(MAX_COMPILE_WORKERS, -(-LEND * slots // workers)))


def device_share(cores: int, devices_used: int, host_devices: int = 0) -> int:
    """The cores one device's workers and their compile helpers may use: the host's
    cores (less :data:`RESERVED_CORES`) split evenly over the host's GPUs, whether the
    campaign uses all of them or not (``host_devices``: how many the host has; 0: as
    many as are used). A campaign on one GPU of a four-GPU host so gets the helpers
    each GPU gets when all four run, and its speed per GPU is the same as theirs."""
    usable = max(1, cores - RESERVED_CORES) if cores > 2 * RESERVED_CORES else max(1, cores)
    return max(1, usable // max(1, devices_used, host_devices))


def device_workers(device_type: str, devices: int, cores: int) -> int:
    """Worker processes per device of a local cluster by default: two per GPU (or other
    accelerator) when the host's cores give each of them at least two compile helpers
    (:func:`compile_budget`), else one. A search spends most of its time waiting for
    its builds, so two searches per GPU keep it busier; the device lock
    (gtune.measure.devlock) keeps their timings apart. A CPU device measures on the
    cores that build: one worker."""
    if "CPU" in device_type.upper():
        return 1
    return 2 if compile_budget(2 * max(1, devices), cores) >= 2 else 1


# Seconds one configuration of a technique's search takes, by what the compiler is
# given (fitted to the H100 searches recorded in
# benchmarks/results/campaign/h100x2-cut/: 100 configurations each of star 2D/3D r1-r5
# and dense 3D r1-r2 at 256^3, 8 compile helpers). Only the order they give matters.
RATE_BASE = 0.05  # any technique: launch, timing, check, a small kernel's build
RATE_PER_POINT = 0.0007  # each load per point adds to the build
VEC_RATE_BASE = 0.025
VEC_RATE_PER_POINT2 = 4e-5  # vector loads: unrolled per point and per lane
PLANE_STREAM_RATE_PER_POINT = 0.055  # streaming a stencil with no z extent through 3D


def seconds_per_config(technique: str | None, traits: StencilTraits | None) -> float:
    """Expected seconds for one configuration of ``technique`` on a stencil with
    ``traits`` (None: a kernel of unknown shape, rated as a small one)."""
    if traits is None:
        return RATE_BASE
    points = max(1, traits.points)
    if technique == "vec":
        return VEC_RATE_BASE + VEC_RATE_PER_POINT2 * points * points
    if technique == "stream" and traits.radius_z == 0 and traits.log2_nz > 0:
        return PLANE_STREAM_RATE_PER_POINT * points
    return RATE_BASE + RATE_PER_POINT * points


@dataclass(frozen=True)
class Piece:
    """A unit of work for one worker: a task, or one technique's search of a task."""

    task: CampaignTask
    parent: str  # key of the campaign task this belongs to
    group: str  # pieces of one group share a kernel session on a worker
    cost: float  # expected length: configurations x seconds each (only the order matters)
    final: bool  # the campaign task itself (its summary goes into the ledger)
    after: tuple[str, ...] = ()  # keys of the pieces that must finish first
    rank: int = 0  # lower ranks are handed out first (``order="cheapest"``: the kernel's)

    @property
    def key(self) -> str:
        return self.task.key


def group_of(task: CampaignTask) -> str:
    """Kernel × size × device: what a worker's open session serves."""
    sizes = ",".join(f"{k}={v}" for k, v in task.sizes)
    return f"{task.kernel}|{sizes}|{task.device}|{task.timeout_s:g}|{task.compile_workers}"


def expected_configs(budget: str | None) -> float:
    """How many configurations a search with ``budget`` is expected to measure."""
    if not budget:
        return DEFAULT_EVALUATIONS
    b = Budget.parse(budget, source="budget")
    if b.evaluations is not None:
        return float(b.evaluations)
    return DEFAULT_EVALUATIONS


def split_budget(budget: str | None, parts: int) -> str | None:
    """One technique's share of a task's count budget (wall-time budgets don't split)."""
    if not budget or parts <= 1:
        return budget
    b = Budget.parse(budget, source="budget")
    if b.evaluations is None:
        return budget
    return str(max(1, b.evaluations // parts))


def splittable(task: CampaignTask) -> bool:
    """Whether the task searches every technique with a budget that splits evenly."""
    if technique_for(task.strategy, task.technique) != ALL:
        return False
    if not task.budget:
        return True
    return Budget.parse(task.budget, source="budget").evaluations is not None


def plan(
    tasks: Sequence[CampaignTask],
    techniques_of: Callable[[CampaignTask], Sequence[str]],
    *,
    weight_of: Callable[[CampaignTask], float] | None = None,
    rate_of: Callable[[CampaignTask], float] | None = None,
    order: str = "longest",
) -> list[Piece]:
    """Every piece of ``tasks``; ``techniques_of`` names a task's techniques (loading
    its kernel), ``weight_of`` scales a task's cost (e.g. by its problem size),
    ``rate_of`` gives a piece's seconds per configuration from its task (its technique
    set: see :func:`seconds_per_config`); without it every configuration counts alike.
    ``order``: one of :data:`ORDERS` (see the module's docs)."""
    if order not in ORDERS:
        raise ValueError(f"unknown order {order!r}; expected one of {', '.join(ORDERS)}")
    out: list[Piece] = []

    def cost(task: CampaignTask, weight: float) -> float:
        rate = rate_of(task) if rate_of is not None else 1.0
        return weight * rate * expected_configs(task.budget)

    for task in tasks:
        group = group_of(task)
        weight = weight_of(task) if weight_of is not None else 1.0
        names = list(techniques_of(task)) if splittable(task) else []
        if len(names) < 2:
            out.append(Piece(task, task.key, group, cost(task, weight), True))
            continue
        part = split_budget(task.budget, len(names))
        pieces = [
            Piece(
                split,
                task.key,
                group,
                cost(split, weight),
                False,
            )
            for split in (
                replace(task, technique=name, budget=part, confirm=False) for name in names
            )
        ]
        out += pieces
        # the task itself: served from the store, then its confirmation round
        final = Piece(task, task.key, group, 0.0, True, tuple(p.key for p in pieces))
        out.append(final)
    return ranked(out) if order == "cheapest" else out


def ranked(pieces: Sequence[Piece]) -> list[Piece]:
    """``pieces`` ranked by their kernel's (group's) expected total, the cheapest 0;
    kernels of equal total keep the order they came in."""
    total: dict[str, float] = {}
    for p in pieces:
        total[p.group] = total.get(p.group, 0.0) + p.cost
    rank = {g: i for i, g in enumerate(sorted(total, key=lambda g: total[g]))}
    return [replace(p, rank=rank[p.group]) for p in pieces]


@dataclass
class Queue:
    """Pieces not yet handed out: ready ones by rank, then length; the others waiting on
    theirs."""

    _ready: list[tuple[int, float, int, Piece]] = field(default_factory=list)
    _waiting: dict[str, tuple[Piece, set[str]]] = field(default_factory=dict)
    _order: itertools.count[int] = field(default_factory=itertools.count)

    @classmethod
    def of(cls, pieces: Iterable[Piece]) -> Queue:
        q = cls()
        for p in pieces:
            if p.after:
                q._waiting[p.key] = (p, set(p.after))
            else:
                q.push(p)
        return q

    def push(self, piece: Piece) -> None:
        heapq.heappush(self._ready, (piece.rank, -piece.cost, next(self._order), piece))

    def done(self, key: str) -> None:
        """Piece ``key`` finished (or failed): pieces waiting on it may become ready."""
        for wkey, (piece, deps) in list(self._waiting.items()):
            deps.discard(key)
            if not deps:
                del self._waiting[wkey]
                self.push(piece)

    def __len__(self) -> int:
        return len(self._ready) + len(self._waiting)

    def drain(self) -> list[Piece]:
        """Every piece not yet handed out, ready or waiting; the queue is then empty."""
        pieces = [e[-1] for e in sorted(self._ready)] + [p for p, _ in self._waiting.values()]
        self._ready.clear()
        self._waiting.clear()
        return pieces

    @property
    def ready(self) -> int:
        return len(self._ready)

    def take(self, last_group: str | None = None, elsewhere: Collection[str] = ()) -> Piece | None:
        """The longest ready piece of the lowest rank. Among those about as long (with
        ranked kernels, among all, the cheapest first): one of ``last_group`` (the
        worker's open session), else one of a kernel no other worker is on (``elsewhere``:
        the groups running there), so that workers start on different kernels and each
        kernel's space is solved once; the pieces of one kernel spread over several
        workers only when nothing else is left."""
        if not self._ready:
            return None
        top, neg_longest = self._ready[0][0], self._ready[0][1]
        # ranked kernels (``order="cheapest"``): a worker finishes its own kernel, else
        # starts the cheapest kernel no other worker is on, so each kernel's session opens
        # once and kernels finish one per worker at a time: every ready piece is a
        # candidate, in (rank, length, order) order. Unranked: those about as long as the
        # longest, in the order they came. One pass finds the first candidate of each
        # preference (O(n): no sort of the queue per piece taken).
        ranked = any(entry[0] != top for entry in self._ready)
        floor = TIE * -neg_longest
        own: tuple[Any, int] | None = None
        free: tuple[Any, int] | None = None
        for i, entry in enumerate(self._ready):
            rank, neg, o, piece = entry
            if ranked:
                order: Any = entry[:3]
            elif rank == top and -neg >= floor:
                order = o
            else:
                continue
            if piece.group == last_group:
                if own is None or order < own[0]:
                    own = (order, i)
            elif piece.group not in elsewhere and (free is None or order < free[0]):
                free = (order, i)
        chosen = own if own is not None else free
        if chosen is None:
            return heapq.heappop(self._ready)[3]
        i = chosen[1]
        piece = self._ready[i][3]
        self._ready[i] = self._ready[-1]
        self._ready.pop()
        heapq.heapify(self._ready)
        return piece


@dataclass(frozen=True)
class Simulated:
    """What :func:`simulate` found: when everything ended, each worker's busy time, and
    when each piece ended (by key)."""

    makespan: float
    busy: tuple[float, ...]
    ends: Mapping[str, float] = field(default_factory=dict)

    def finished_groups(self, pieces: Iterable[Piece], by: float) -> int:
        """How many groups (kernels) of ``pieces`` had every piece ended by time ``by``."""
        last: dict[str, float] = {}
        for p in pieces:
            last[p.group] = max(last.get(p.group, 0.0), self.ends.get(p.key, math.inf))
        return sum(1 for t in last.values() if t <= by)

    @property
    def utilisation(self) -> float:
        """Busy time over workers × makespan (1.0: no worker ever idle)."""
        if self.makespan <= 0:
            return 1.0
        return sum(self.busy) / (len(self.busy) * self.makespan)


def simulate(
    pieces: Sequence[Piece],
    duration: Callable[[Piece], float],
    workers: int,
    *,
    longest_first: bool = True,
) -> Simulated:
    """Run the scheduling rules on ``workers`` identical workers with made-up durations
    (``longest_first=False``: in the given order, as submitting everything at once)."""
    # arrival order: with equal costs the queue keeps the order pieces were given in
    queue = Queue.of(pieces if longest_first else (replace(p, cost=0.0) for p in pieces))
    clock: list[tuple[float, int, str | None]] = [(0.0, w, None) for w in range(workers)]
    heapq.heapify(clock)
    busy = [0.0] * workers
    running: list[tuple[float, str]] = []
    group_of_key = {p.key: p.group for p in pieces}
    ends: dict[str, float] = {}
    end = 0.0
    while len(queue) or running:
        now, w, last = heapq.heappop(clock)
        # pieces that ended by now release the ones waiting on them
        for t, key in sorted(r for r in running if r[0] <= now):
            queue.done(key)
            running.remove((t, key))
        piece = queue.take(last, {group_of_key[k] for _, k in running})
        if piece is None:
            if not running:
                break
            nxt = min(t for t, _ in running)  # idle until the next piece ends
            heapq.heappush(clock, (max(nxt, now), w, last))
            continue
        d = duration(piece)
        busy[w] += d
        running.append((now + d, piece.key))
        ends[piece.key] = now + d
        end = max(end, now + d)
        heapq.heappush(clock, (now + d, w, piece.group))
    return Simulated(end, tuple(busy), ends)


__all__ = [
    "COMPILE_WORKERS_ENV",
    "LEND",
    "MAX_COMPILE_WORKERS",
    "Piece",
    "Queue",
    "Simulated",
    "build_slots",
    "compile_budget",
    "device_share",
    "device_workers",
    "expected_configs",
    "group_of",
    "helpers_per_worker",
    "plan",
    "seconds_per_config",
    "simulate",
    "split_budget",
    "splittable",
]

"""The search driver: one tuning run on a session, from request to report.

1. Resolve the strategy (adapted to the kernel's parameters) and the techniques to
   search (the technique policy); every mistake in the request is found here, before
   anything is measured.
2. Run one search per technique through the session's stored evaluator, sharing the
   budget, telling the observer, checking the cancel token and the clock between
   configurations.
3. Re-measure the best candidates and the default in the confirmation round.
4. Assemble the report: the answer, the notes, the time breakdown.
"""

from __future__ import annotations

import functools
import logging
import math
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from gtune.budget import Budget
from gtune.exceptions import UnsatisfiableSpace
from gtune.heuristics import (
    Batch,
    HeuristicSpec,
    Searcher,
    SearchProblem,
    Seeded,
    TraceEntry,
    TuningOutcome,
    drive,
    nearest_config,
)
from gtune.kernel import canonical_config
from gtune.measure.result import Result
from gtune.space import EnumeratedSpace, technique_space
from gtune.store import owner_id
from gtune.store.ranking import CONFIRMATION, confirmed_id
from gtune.tuning.budget import LEAD_FACTOR, SCOUT_SHARE, SPARE_ROUNDS, Clock, share
from gtune.tuning.confirm import Confirmation, ConfirmPolicy, confirm, pick_candidates
from gtune.tuning.events import (
    BatchStarted,
    CancelToken,
    Confirmed,
    ConfirmStarted,
    LoggedObserver,
    Observer,
    ResultMeasured,
    RunFinished,
    RunStarted,
    SearchStarted,
)
from gtune.tuning.report import TechniqueRun, TuningInterrupted, TuningReport
from gtune.tuning.session import TuningSession
from gtune.tuning.strategy import ResolvedStrategy, resolve_strategy
from gtune.tuning.techniques import (
    TechniqueChoice,
    TechniquePolicy,
    technique_of,
    technique_policy,
)

log = logging.getLogger("gtune.tuning")

UNPREDICTED_BUDGET = Budget(wall_seconds=90.0)
"""The budget of a run given none whose technique no model predicts: every technique is
searched then, which on a small CPU takes several minutes without a limit; with this
the first run of a newcomer (the README's quickstart) ends within about two minutes."""


@dataclass
class _Plan:
    technique: str | None
    space: EnumeratedSpace
    searcher: Searcher | None
    note: str = ""
    fresh: Callable[[], Searcher] | None = None  # the same search again, from its start


def _converged(result: Result) -> bool | None:
    """What the measurement said about its timing's convergence (None: not said)."""
    timing = result.extra.get("timing") if isinstance(result.extra, Mapping) else None
    if isinstance(timing, Mapping) and isinstance(timing.get("converged"), bool):
        return bool(timing["converged"])
    return None


class _Run:
    """The mutable state of one run, touched only by the thread that tunes."""

    def __init__(
        self, session: TuningSession, report: TuningReport, observer: Observer, clock: Clock
    ) -> None:
        self.session = session
        self.report = report
        self.observer = observer
        self.clock = clock
        self.best_s = math.inf
        self.trace: list[TraceEntry] = []
        self.current: TechniqueRun | None = None  # the search under way
        #: Configurations this run's searches were given (measured or served), and how
        #: many of them the store served again to a search that continued (a replay is
        #: neither a measurement nor a reuse); ``replaying`` while one continues.
        self.seen: set[str] = set()
        self.replayed = 0
        self.replaying = False
        #: Where the current search started: the session's counts, replays, and seconds.
        self.counts0: tuple[int, int, int] = (0, 0, 0)
        self.began = 0.0

    def on_result(self, result: Result, fresh: bool) -> None:
        key = canonical_config(result.config)
        if not fresh and self.replaying and key in self.seen:
            self.replayed += 1
        self.seen.add(key)
        if fresh:
            self.clock.measured()
            self.count(result)
        if result.ok and result.median_s < self.best_s:
            self.best_s = result.median_s
        self.observer.on_event(ResultMeasured(result, fresh, self.best_s))

    def count(self, result: Result) -> None:
        self.report.time.add(result)
        converged = _converged(result)
        if converged is not None:
            self.report.timed += 1
            self.report.unconverged += 0 if converged else 1

    def on_confirm_result(self, result: Result) -> None:
        self.clock.measured()
        self.count(result)
        self.observer.on_event(ResultMeasured(result, True, math.inf))

    def on_entry(self, entry: TraceEntry, best: Result | None) -> None:
        self.trace.append(entry)

    def on_batch(self, batch: Batch, size: int) -> None:
        self.clock.start_pacing()
        self.observer.on_event(BatchStarted(batch.step, size))


def run_tuning(
    session: TuningSession,
    *,
    strategy: str = "hybrid",
    spec: str | Path | HeuristicSpec | None = None,
    technique: str | TechniquePolicy = "auto",
    budget: Budget | None = None,
    options: Mapping[str, Any] | None = None,
    confirm_policy: ConfirmPolicy | None = None,
    observer: Observer | None = None,
    cancel: CancelToken | None = None,
    started: float | None = None,
    seed_default: bool = True,
) -> TuningReport:
    """Tune the session's kernel; see :func:`gtune.tune` for the parameters.

    ``seed_default``: every search (but exhaustive ones) first measures the kernel's
    default configuration (the nearest valid one in a technique's space) and the
    grouped searches start from it.

    A KeyboardInterrupt raises :class:`TuningInterrupted` carrying the partial report;
    a cancelled token ends the run normally with ``report.interrupted`` set.
    """
    t0 = time.monotonic() if started is None else started
    show: Observer = LoggedObserver(observer)
    token = cancel if cancel is not None else CancelToken()
    kernel, device = session.kernel, session.device
    resolved = resolve_strategy(kernel, strategy, spec, options)
    policy = technique_policy(technique, resolved.label)
    choice = policy.choose(kernel, device)
    space_from, startup0, store0 = time.monotonic(), session.startup_s, session.store_s
    session.start_early()  # the workers start and the data is written while it solves
    space = session.space
    space_s = time.monotonic() - space_from
    plans = _plans(session, space, choice, resolved, seed_default)
    report = _new_report(session, space, resolved, policy)
    report.notes += [n for n in (resolved.note, choice.note) if n]
    report.time.space_s = space_s
    budget = _run_budget(budget, resolved, choice, plans, report)
    clock = Clock(budget.wall_seconds if budget is not None else None, t0)
    clock.exclude = lambda: session.startup_s - startup0  # the pace leaves start-up out
    state = _Run(session, report, show, clock)
    measured0, reused0 = session.counts()
    show.on_event(RunStarted(kernel.name, device.name, resolved.label, choice.techniques))
    session.listener = state.on_result
    try:
        _search_all(
            state, plans, resolved.label, budget, token, t0, equal=choice.equal, startup0=startup0
        )
        if choice.scout is not None and not token.cancelled:
            _scout_runner_up(state, space, choice, resolved, seed_default, budget, token, t0)
        report.interrupted = token.cancelled
        if confirm_policy is not None and not token.cancelled:
            _confirm(state, confirm_policy, token)
        elif token.cancelled:
            report.notes.append("cancelled: the best found so far is not confirmed")
    except KeyboardInterrupt:
        _keep_interrupted_search(state, resolved.label, t0)
        report.interrupted = True
        _finish(report, session, measured0, reused0 + state.replayed, t0, startup0, store0)
        show.on_event(RunFinished(report))
        raise TuningInterrupted(report) from None
    finally:
        session.listener = None
    _finish(report, session, measured0, reused0 + state.replayed, t0, startup0, store0)
    show.on_event(RunFinished(report))
    return report


def _plans(
    session: TuningSession,
    space: EnumeratedSpace,
    choice: TechniqueChoice,
    resolved: ResolvedStrategy,
    seed_default: bool,
) -> list[_Plan]:
    """One search per technique chosen: its space and searcher (seeded with the
    default configuration's nearest valid one), or why it has none."""
    kernel = session.kernel
    problem = SearchProblem.from_kernel(kernel)
    plans: list[_Plan] = []
    default = kernel.default_config() if seed_default else None
    for name in choice.techniques:
        sub = space if name is None else technique_space(space, kernel, name)
        if sub.size() == 0:
            plans.append(_Plan(name, sub, None, "no valid configuration on this device"))
            continue
        start = nearest_config(sub, default) if default and resolved.plugin.seeded else None
        fresh = functools.partial(
            _searcher, resolved.plugin, sub, problem, resolved.options_for(name), start
        )
        plans.append(_Plan(name, sub, fresh(), fresh=fresh))
    if all(p.searcher is None for p in plans):
        raise UnsatisfiableSpace(
            f"technique {choice.techniques[0]} has no valid configuration on {session.device.name}",
            source=kernel.label,
        )
    return plans


def _new_report(
    session: TuningSession,
    space: EnumeratedSpace,
    resolved: ResolvedStrategy,
    policy: TechniquePolicy,
) -> TuningReport:
    """The run's report before any search: the kernel, device, strategy and space."""
    kernel, device = session.kernel, session.device
    return TuningReport(
        kernel=kernel.name,
        kernel_label=kernel.label,
        sizes=dict(kernel.sizes),
        device=device.name,
        device_identity=device.identity,
        strategy=resolved.label,
        technique=policy.name if kernel.techniques else "",
        runs=[],
        bytes_moved=kernel.bytes_moved(),
        points=kernel.points(),
        flops_per_point=kernel.flops_per_point,
        space_size=space.size(),
        parameters=list(kernel.parameter_names),
        steps=kernel.step_count,
    )


def _run_budget(
    budget: Budget | None,
    resolved: ResolvedStrategy,
    choice: TechniqueChoice,
    plans: list[_Plan],
    report: TuningReport,
) -> Budget | None:
    """The run's budget: the one given, else the strategy's own (a spec's), else a
    bound when no model predicts the technique; a budget too short is noted."""
    if budget is None or budget.unlimited:  # a spec's own budget still holds
        budget = resolved.plugin.default_budget(resolved.options) or budget
    if budget is None and choice.unpredicted:
        budget = UNPREDICTED_BUDGET
        report.notes.append(
            f"no budget given and every technique searched (no load-predictor model fits "
            f"this device): the run was bounded to {UNPREDICTED_BUDGET.wall_seconds:g} s; "
            "a budget of none searches without a limit"
        )
    short = _budget_too_short(plans, budget)
    if short:
        log.warning("%s", short)
        report.notes.append(short)
    return budget


def _search_all(
    state: _Run,
    plans: list[_Plan],
    strategy: str,
    budget: Budget | None,
    token: CancelToken,
    t0: float,
    *,
    equal: bool = False,
    startup0: float = 0.0,
) -> None:
    """Each technique's search in turn, sharing the budget; a technique without a
    space is noted and skipped. Several searches sharing a wall-time budget alone scout
    first, each an equal part of ``SCOUT_SHARE`` of the search time (which begins once
    the workers run: the start-up since ``startup0`` moves its end); the rest goes to
    those that lead (:func:`_continue_leaders`). ``equal``: no scouting, each search
    an equal part of the time left. Stops after the search during which ``token`` is
    cancelled; the searches' notes follow in the report."""
    session, report, clock = state.session, state.report, state.clock
    spent_evals, spent_s = 0, 0.0
    to_go = sum(1 for p in plans if p.searcher is not None)
    scouting = _scouts(budget, to_go) and not equal
    scout_end = clock.search_deadline
    if scouting:
        scout_end = time.monotonic() + SCOUT_SHARE * max(0.0, clock.left(scout_end))
    searched: list[tuple[_Plan, TechniqueRun]] = []
    for plan in plans:
        if plan.searcher is None:
            report.runs.append(TechniqueRun(plan.technique, 0, None, note=plan.note))
            report.notes.append(f"technique {plan.technique}: {plan.note}; skipped")
            continue
        part = share(budget, to_go, spent_evals, spent_s)
        # a wall-time budget: this search gets an equal part of the time left (one
        # that ends early leaves its rest to the next), so every technique is searched;
        # while scouting, an equal part of the scouting time
        until = scout_end
        if scouting:  # scouting begins once the workers run: the start-up moves its end
            until += session.startup_s - startup0
        if math.isfinite(until):
            until = time.monotonic() + max(0.0, until - time.monotonic()) / to_go
        to_go -= 1
        current = state.current = TechniqueRun(
            plan.technique, plan.space.size(), None, started_s=time.monotonic() - t0
        )
        outcome = _search(state, plan, plan.searcher, part, until, strategy, token, t0)
        report.runs.append(current)
        searched.append((plan, current))
        state.current = None
        spent_evals += outcome.evaluations
        spent_s += outcome.compile_s + outcome.run_s
        if token.cancelled:
            break
    if scouting and not token.cancelled:
        _continue_leaders(state, searched, strategy, token, t0)
    for plan, run in searched:
        if run.outcome is None:
            continue
        where = f"technique {plan.technique}: " if plan.technique else ""
        report.notes += [where + note for note in run.outcome.notes]
        if run.outcome.stop_reason != "search finished":
            report.notes.append(where + run.outcome.stop_reason)


def _search(
    state: _Run,
    plan: _Plan,
    searcher: Searcher,
    part: Budget | None,
    until: float,
    strategy: str,
    token: CancelToken,
    t0: float,
    more: str = "",
) -> TuningOutcome:
    """Drive one search of ``plan`` until ``until``; its outcome goes into
    ``state.current`` (merged with what an earlier search of the same technique found)."""
    current = state.current
    assert current is not None
    session, clock = state.session, state.clock
    total = searcher.expected_evaluations()
    if part is not None and part.evaluations is not None:
        total = part.evaluations if total is None else min(total, part.evaluations)
    label = strategy + ("" if plan.technique is None else f" [{plan.technique}]")
    state.observer.on_event(SearchStarted(label + more, plan.technique, total))
    clock.segment()
    state.trace = []
    state.best_s = current.best_s
    m0, r0, again0 = state.counts0 = (*session.counts(), state.replayed)
    began = state.began = time.monotonic() - t0
    state.replaying = current.outcome is not None
    starting = session.startup_s

    def deadline() -> float:
        """``until``, later by the start-up this search paid (starting the workers
        is the run's cost, not its part's), never past the searches' deadline."""
        return min(until + session.startup_s - starting, clock.search_deadline)

    outcome = drive(
        searcher,
        session.evaluator,
        strategy=strategy,
        budget=part,
        space=plan.space,
        on_result=state.on_entry,
        stop=lambda: _why_stop(token, clock, deadline()),
        room=lambda: clock.room_for(deadline()),
        on_batch=state.on_batch,
    )
    m1, r1 = session.counts()
    if outcome.stop_reason.startswith("the time left") and clock.last_room is not None:
        left, pace = clock.last_room
        outcome = replace(
            outcome,
            stop_reason=f"{outcome.stop_reason} ({left:.1f} s left, {pace:.3g} s per "
            "configuration so far)",
        )
    if current.outcome is not None:
        outcome = _merged(current.outcome, outcome, began - current.started_s)
    current.outcome = outcome
    current.measured += m1 - m0
    current.reused += (r1 - r0) - (state.replayed - again0)
    current.best_technique = plan.technique or technique_of(session.kernel, outcome.best_config)
    return outcome


def _continue_leaders(
    state: _Run,
    searched: list[tuple[_Plan, TechniqueRun]],
    strategy: str,
    token: CancelToken,
    t0: float,
) -> None:
    """After scouting: the searches that lead continue, each an equal part of the
    search time left, from their start again (the store replays what they measured)."""
    report, clock = state.report, state.clock
    leaders = _leaders([run for _, run in searched])
    if leaders:
        report.notes.append(_scouting_note(leaders, searched, clock))
    for k, run in enumerate(leaders):
        plan = next(p for p, r in searched if r is run)
        if plan.fresh is None or clock.left(clock.search_deadline) <= 0:
            break
        until = time.monotonic() + clock.left(clock.search_deadline) / (len(leaders) - k)
        state.current = run
        _search(state, plan, plan.fresh(), None, until, strategy, token, t0, " (continued)")
        state.current = None
        if token.cancelled:
            break


def _scout_runner_up(
    state: _Run,
    space: EnumeratedSpace,
    choice: TechniqueChoice,
    resolved: ResolvedStrategy,
    seed_default: bool,
    budget: Budget | None,
    token: CancelToken,
    t0: float,
) -> None:
    """The technique policy's hedge: once the first choice is searched, its runner-up
    is searched for ``choice.scout_share`` of its search (at least ``choice.scout_min``
    configurations, :data:`gtune.tuning.techniques.SCOUT_MIN`) and, when its best so far
    beats the first choice's best at the same share of the first choice's search (two
    searches compared at equal progress), continued to its end. Runs only without a
    budget (a budget is the user's to share), and says what it did."""
    report = state.report
    scout, share_ = choice.scout, choice.scout_share
    first = next((r for r in report.runs if r.outcome is not None), None)
    if scout is None or first is None or first.outcome is None:
        return
    if budget is not None and not budget.unlimited:
        report.notes.append(f"not scouting {scout}: the budget goes to {first.technique}")
        return
    (plan,) = _plans(
        state.session, space, replace(choice, techniques=(scout,)), resolved, seed_default
    )
    if plan.searcher is None or plan.fresh is None:
        report.notes.append(f"not scouting {scout}: {plan.note}")
        return
    done = [e for e in first.outcome.trace if e.result.status.value != "pruned"]
    ka = max(1, round(share_ * len(done)))
    bar = min((e.result.objective for e in done[:ka] if e.result.ok), default=math.inf)
    expected, how_long = _scout_length(plan.searcher, len(done), first.technique, choice)
    kb = max(choice.scout_min, round(share_ * expected))
    run = state.current = TechniqueRun(
        scout, plan.space.size(), None, started_s=time.monotonic() - t0
    )
    scouted = _search(
        state,
        plan,
        plan.searcher,
        Budget(evaluations=kb),
        math.inf,
        resolved.label,
        token,
        t0,
        " (scouting)",
    )
    report.runs.append(run)
    lead = scouted.best_s < bar
    measured = sum(1 for e in scouted.trace if e.result.status.value != "pruned")
    whole = scouted.stop_reason == "search finished"  # within its scout: nothing to continue
    floor = f", at least {kb}" if kb == choice.scout_min > 1 else ""
    note = (
        f"scouted {scout} for {measured} configurations ({share_:.0%} of its search"
        f"{how_long}{floor}{': the whole search' if whole else ''}): its best, "
        f"{_us(scouted.best_s)}, {'led' if lead else 'did not lead'} {first.technique}'s "
        f"{_us(bar)} after {ka} configurations ({share_:.0%} of its search)"
    )
    if lead and not whole and not token.cancelled:
        _search(
            state, plan, plan.fresh(), None, math.inf, resolved.label, token, t0, " (continued)"
        )
        note += f": {scout} was searched to its end"
    state.current = None
    report.notes.append(note)


def _scout_length(
    searcher: Searcher, first_length: int, first: str | None, choice: TechniqueChoice
) -> tuple[float, str]:
    """How many configurations the runner-up's whole search holds, and how that is
    known (for the note): its searcher's count when it has one; else the first
    choice's length times the model's ratio of the two techniques' search lengths;
    else the first choice's length."""
    expected = searcher.expected_evaluations()
    if expected:
        return expected, ""
    if choice.scout_length is not None:
        return first_length * choice.scout_length, (
            f", {first_length * choice.scout_length:.0f} configurations: "
            f"{choice.scout_length:.2f} of {first}'s, as in the model's data"
        )
    return first_length, f", taken as long as {first}'s"


def _us(seconds: float) -> str:
    return f"{seconds * 1e6:.1f} µs" if math.isfinite(seconds) else "nothing valid"


def _keep_interrupted_search(state: _Run, strategy: str, t0: float) -> None:
    """The search a KeyboardInterrupt stopped, with what it measured, in the report
    (a continued search: merged with what it found before)."""
    current = state.current
    if current is None:
        return
    partial = _partial(strategy, state.trace, time.monotonic() - t0)
    m0, r0, again0 = state.counts0
    m1, r1 = state.session.counts()
    current.measured += m1 - m0
    current.reused += (r1 - r0) - (state.replayed - again0)
    if current.outcome is not None:
        partial = _merged(current.outcome, partial, state.began - current.started_s)
    current.outcome = partial
    current.note = "interrupted"
    current.best_technique = current.technique or technique_of(
        state.session.kernel, current.outcome.best_config
    )
    if current not in state.report.runs:
        state.report.runs.append(current)


def _searcher(
    plugin: Any,
    space: EnumeratedSpace,
    problem: SearchProblem,
    options: Mapping[str, Any],
    start: Mapping[str, int] | None,
) -> Searcher:
    """A new searcher of ``plugin`` on ``space``, seeded with ``start`` when given."""
    searcher: Searcher = plugin.searcher(space, problem, options)
    return Seeded(searcher, start) if start else searcher


def _scouts(budget: Budget | None, searches: int) -> bool:
    """Whether the searches scout first: several of them share a wall-time budget (and
    nothing else bounds them)."""
    return (
        searches > 1
        and budget is not None
        and budget.wall_seconds is not None
        and budget.evaluations is None
        and budget.seconds is None
    )


def _leaders(runs: list[TechniqueRun]) -> list[TechniqueRun]:
    """The searches worth continuing after scouting, fastest first: those whose best is
    within ``LEAD_FACTOR`` of the fastest and that stopped before their search finished."""
    found = [r for r in runs if r.outcome is not None and math.isfinite(r.best_s)]
    if not found:
        return []
    best = min(r.best_s for r in found)
    close = sorted((r for r in found if r.best_s <= LEAD_FACTOR * best), key=lambda r: r.best_s)
    return [
        r for r in close if r.outcome is not None and r.outcome.stop_reason != "search finished"
    ]


def _scouting_note(
    leaders: list[TechniqueRun], searched: list[tuple[_Plan, TechniqueRun]], clock: Clock
) -> str:
    names = ", ".join(str(r.technique) for r in leaders)
    dropped = [str(r.technique) for _, r in searched if r not in leaders]
    return (
        f"every technique was scouted in the first {SCOUT_SHARE:.0%} of the search time; "
        f"the rest ({clock.left(clock.search_deadline):.0f} s) went to the fastest "
        f"({names}: within {LEAD_FACTOR:g}x of the best scouted)"
        + (f", not to {', '.join(dropped)}" if dropped else "")
    )


def _merged(first: TuningOutcome, then: TuningOutcome, offset_s: float) -> TuningOutcome:
    """One search's outcome from an earlier part (``first``) and the same search run
    again from its start (``then``, ``offset_s`` seconds after ``first`` began), which
    replayed ``first``'s configurations from the store and went on: the configurations
    ``first`` measured keep their entries, the new ones follow."""
    seen = {canonical_config(e.config) for e in first.trace}
    trace = list(first.trace)
    for e in then.trace:
        key = canonical_config(e.config)
        if key not in seen:
            seen.add(key)
            trace.append(replace(e, index=len(trace), elapsed_s=e.elapsed_s + offset_s))
    best = first.best_result
    if then.best_result is not None and (
        best is None or then.best_result.objective < best.objective
    ):
        best = then.best_result
    return TuningOutcome(
        strategy=then.strategy,
        best_config=dict(best.config) if best is not None else None,
        best_result=best,
        trace=trace,
        steps=then.steps,
        notes=list(dict.fromkeys([*first.notes, *then.notes])),
        stop_reason=then.stop_reason,
        wall_s=offset_s + then.wall_s,
    )


def _budget_too_short(plans: list[_Plan], budget: Budget | None) -> str:
    """A warning when an evaluation budget, shared by the techniques, leaves a search
    too few evaluations to finish its first group (after the default it starts from):
    such a search cannot move past its starting point, and comparing techniques or
    strategies on it says little."""
    if budget is None or budget.evaluations is None:
        return ""
    searching = [p for p in plans if p.searcher is not None]
    need: dict[str | None, int] = {}
    for plan in searching:
        first = getattr(plan.searcher, "first_step_size", None)
        size = first() if callable(first) else None
        if size is not None:
            need[plan.technique] = size + int(isinstance(plan.searcher, Seeded))
    each = budget.evaluations // max(1, len(searching))
    short = [t for t, n in need.items() if n > each]
    if not short:
        return ""
    names = ", ".join(t or "whole space" for t in short)
    wanted = max(need.values()) * len(searching)
    if len(searching) == 1:
        return (
            f"a budget of {budget.evaluations} evaluations is too few to finish the search's "
            f"first group ({names}: {need[short[0]]} needed); give a budget of at least "
            f"{wanted} evaluations"
        )
    return (
        f"a budget of {budget.evaluations} evaluations leaves each of the {len(searching)} "
        f"searches about {each}, too few to finish its first group ({names}: "
        f"{max(need[t] for t in short)} needed); give a budget of at least "
        f"{wanted} evaluations, or one technique"
    )


def _why_stop(token: CancelToken, clock: Clock, until: float = math.inf) -> str:
    if token.cancelled:
        return token.reason or "cancelled"
    if clock.wall_seconds is not None and clock.left(clock.search_deadline) <= 0:
        return f"budget of {clock.wall_seconds:g} s of wall time used"
    if clock.wall_seconds is not None and time.monotonic() >= until:
        return f"its share of the budget of {clock.wall_seconds:g} s of wall time used"
    return ""


def _confirm(state: _Run, policy: ConfirmPolicy, token: CancelToken) -> None:
    """The confirmation round; sets the report's default and confirmation."""
    report, session, kernel = state.report, state.session, state.session.kernel
    default = kernel.default_config()
    if default is None:
        report.default_note = "the description gives no default configuration"
    else:
        report.default_config = dict(default)
        violation = session.space.is_valid(default)
        if violation is not None:
            report.default_note = (
                f"the default configuration is not valid on this device: {violation}"
            )
            default = None
    found = [e.result for run in report.runs if run.outcome is not None for e in run.outcome.trace]
    candidates = pick_candidates(found, policy.candidates)
    if not candidates and default is None:
        return
    configs = {canonical_config(r.config) for r in candidates}
    if default is not None:
        configs.add(canonical_config(default))  # measured once, if also a candidate
    n = len(configs)
    state.observer.on_event(ConfirmStarted(n, policy.rounds))
    clock = state.clock
    clock.start_pacing()
    clock.segment()
    if clock.wall_seconds is not None and not policy.spare_rounds:
        # the budget keeps a reserve for this round: what it has room for is measured
        policy = replace(policy, spare_rounds=SPARE_ROUNDS)
    outcome = confirm(
        candidates,
        default,
        session.raw,
        policy,
        cancel=token,
        room=lambda: clock.room_for(clock.deadline),
        on_measured=state.on_confirm_result,
        searched=found,
    )
    report.confirmation = outcome
    report.notes += outcome.notes
    _store_confirmation(session, outcome)
    entry = outcome.default
    if entry is not None and entry.rounds:
        report.default_result = entry.result()
        if not entry.ok:
            first = entry.message.splitlines()[0][:200] if entry.message.strip() else ""
            report.default_note = f"the default configuration did not run: {entry.status.value}"
            report.default_note += f" ({first})" if first else ""
    if outcome.rounds_done == 0:
        report.confirmation = None if outcome.best is None else outcome
    report.interrupted = report.interrupted or token.cancelled
    state.observer.on_event(Confirmed(outcome))


def _store_confirmation(session: TuningSession, outcome: Confirmation) -> None:
    """Write each configuration the round measured, its times pooled, to the store, so
    ``gtune results --best`` and ``gtune export`` name the best this run reports and
    can show the default's time beside it (:mod:`gtune.store.ranking`). They go under
    their own identity, so a repeated run is served what its searches measured."""
    if outcome.rounds_done == 0:
        return
    best = outcome.best
    round_id = owner_id()
    kernel = session.kernel
    for entry in outcome.entries:
        if not entry.rounds:
            continue
        result = entry.result()
        mark = {
            "round": round_id,
            "best": entry is best,
            "default": entry.is_default,
            "rounds": entry.rounds,
        }
        session.store.add(
            replace(result, extra={**dict(result.extra), CONFIRMATION: mark}),
            device=session.device.identity,
            kernel_id=confirmed_id(kernel.identity()),
            kernel_name=kernel.store_name,
            problem=dict(kernel.sizes),
        )


def _partial(label: str, trace: list[TraceEntry], wall_s: float) -> TuningOutcome:
    best: Result | None = None
    for e in trace:
        if e.result.ok and (best is None or e.result.median_s < best.median_s):
            best = e.result
    return TuningOutcome(
        strategy=label,
        best_config=dict(best.config) if best else None,
        best_result=best,
        trace=list(trace),
        steps=[],
        notes=[],
        stop_reason="interrupted",
        wall_s=wall_s,
    )


def _finish(
    report: TuningReport,
    session: TuningSession,
    measured0: int,
    reused0: int,
    started: float,
    startup0: float,
    store0: float = 0.0,
) -> None:
    m, r = session.counts()
    report.measured, report.reused = m - measured0, r - reused0
    report.wall_s = time.monotonic() - started
    report.time.startup_s = session.startup_s - startup0
    report.time.store_s = session.store_s - store0
    report.time.close(report.wall_s)
    if report.confirmation is not None and report.confirmation.best is not None:
        report.notes.append(f"confirmation round: {report.confirmation.verdict}")
    elif report.best_from_default:
        report.notes.append(
            "the default configuration was faster than every configuration the search "
            "measured; it is reported as the best"
        )
    if report.noisy:
        report.notes.append(
            f"noisy device: the timings of {report.unconverged} of {report.timed} "
            "configurations did not converge to the stated precision; treat small "
            "differences between configurations with caution"
        )
    counts = report.status_counts
    what = ", ".join(f"{n} {s}" for s, n in counts.items()) or "nothing measured"
    if report.search_result is None and not report.interrupted:
        report.notes.append(f"no configuration ran correctly ({what})" + _first_failure(report))
        messages = [
            e.result.message
            for run in report.runs
            for e in (run.outcome.trace if run.outcome is not None else [])
        ]
        if (
            session.kernel.reference.kind == "python"
            and set(counts) == {"wrong_result"}
            and counts["wrong_result"] > 1
            and not any("past the end" in m or "outside" in m for m in messages)
        ):
            report.notes.append(
                "every configuration's output differs from the reference: if the kernel is "
                "right, the reference is the likelier fault (its formula, or the arrays' "
                "shapes, orientation or boundary)"
            )
    elif report.mostly_failed:
        total = sum(counts.values())
        report.notes.append(
            f"most configurations failed ({report.failed} of {total}: {what}); the best comes "
            f"from the {total - report.failed} that ran correctly" + _first_failure(report)
        )


def _first_failure(report: TuningReport) -> str:
    """The message of the first failed configuration, as ``: message`` (or "")."""
    for run in report.runs:
        for e in run.outcome.trace if run.outcome is not None else []:
            msg = e.result.message.strip()
            if not e.result.ok and msg:
                first = msg.splitlines()[0]
                short = first if len(first) <= 300 else first[:297] + "..."
                return f"; the first: {e.result.status.value}: {short}"
    return ""


__all__ = ["run_tuning"]

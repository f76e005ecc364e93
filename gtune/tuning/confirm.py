"""The confirmation round: the best candidates and the default, re-measured side by side.

A search compares configurations measured minutes apart, each a few runs, on a device
whose speed drifts (other work, clocks, caches): its best is partly luck. So at the end
of a run the best few distinct configurations and the default configuration are measured
again on the raw evaluator (the store's cached results are bypassed), in the same process
and conditions, interleaved round-robin over several rounds (each round starts at a
different configuration, so none is always first or last). The reported best and the
speedup come from these times, with a distribution-free confidence interval of each
median (:mod:`gtune.measure.stats`); a best whose interval overlaps the default's is
reported as no significant speedup. The default is measured exactly like the others.

Each round weighs the same. A configuration's runs within one round are not independent
samples: a burst of other work or a clock drop slows a whole round, and the timing rule
then takes more runs there (up to its ``max_runs``), because they spread. Pooled as they
came, such a round outvotes the quiet ones (on an H100, a round of 25 runs at 82 µs
against two of 3 runs at 52 µs gave a median of 79 µs). So the statistics use a balanced
sample: from every round as many runs as the round with the fewest, the ones nearest that
round's median; and while the rounds' medians of some configuration disagree by more than
``ConfirmPolicy.agreement``, up to ``ConfirmPolicy.extra_rounds`` more rounds are measured,
so that quiet rounds are the majority.

The speedup's significance and interval are paired by round where there are rounds
enough for the confidence asked (six at 95 %): each round's median of the default over
the best's, one ratio per round, and the distribution-free interval of those ratios'
median. A burst that slows a whole round slows both configurations of it, so pairing
takes it out (on a loaded two-core machine a 1.75x speedup measured over nine rounds
overlapped the default's pooled interval, while the best led in every round). With fewer
rounds the pooled balanced samples' intervals decide, as the rounds alone cannot reach
the confidence.
"""

from __future__ import annotations

import math
import statistics
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from gtune.exceptions import InputError
from gtune.kernel import Config, canonical_config
from gtune.measure.evaluator import Evaluator
from gtune.measure.result import Result, Status
from gtune.measure.stats import faster_beyond_noise, interval_coverage, median_interval
from gtune.tuning.events import CancelToken


@dataclass(frozen=True)
class ConfirmPolicy:
    """How many candidates (besides the default) and how many interleaved rounds.

    ``spare_rounds`` more rounds follow while the time left has room for them (only
    when a time limit is known: a wall-time budget's reserve for this round): more
    rounds make the medians robust to a burst of other work on the machine. Then up to
    ``extra_rounds`` more while some configuration's round medians lie more than
    ``agreement`` (a fraction of the lowest) apart, where the time left, if known,
    holds them.
    """

    candidates: int = 3
    rounds: int = 3
    confidence: float = 0.95
    spare_rounds: int = 0
    #: more rounds (at most this many) while a configuration's rounds disagree
    extra_rounds: int = 2
    #: rounds agree when their medians lie within this fraction of the lowest
    agreement: float = 0.05

    def __post_init__(self) -> None:
        if self.candidates < 1:
            raise InputError(
                f"the confirmation round needs at least 1 candidate, got {self.candidates}",
                source="confirm",
            )
        if self.spare_rounds < 0:
            raise InputError(
                f"spare confirmation rounds cannot be negative, got {self.spare_rounds}",
                source="confirm",
            )
        if self.extra_rounds < 0:
            raise InputError(
                f"extra confirmation rounds cannot be negative, got {self.extra_rounds}",
                source="confirm",
            )
        if not (self.agreement > 0.0 and math.isfinite(self.agreement)):
            raise InputError(
                f"the rounds' agreement must be a positive fraction, got {self.agreement}",
                source="confirm",
            )
        if self.rounds < 1:
            raise InputError(
                f"the confirmation round needs at least 1 round, got {self.rounds}",
                source="confirm",
            )
        if not 0.0 < self.confidence < 1.0:
            raise InputError(
                f"confidence must be between 0 and 1, got {self.confidence}", source="confirm"
            )


@dataclass
class ConfirmedConfig:
    """One configuration of the confirmation round and every time it was measured."""

    config: Config
    is_default: bool = False
    search_s: float | None = None  # its median in the search, if the search measured it
    times_s: list[float] = field(default_factory=list)  # every run, round after round
    round_sizes: list[int] = field(default_factory=list)  # how many of times_s each round
    status: Status = Status.OK
    message: str = ""
    rounds: int = 0
    unverified: str = ""  # why the measurements could not be checked, if they could not
    compile_s: float = 0.0  # the first round's build time

    @property
    def ok(self) -> bool:
        return self.status is Status.OK and bool(self.times_s)

    def by_round(self) -> list[list[float]]:
        """``times_s`` split into its rounds (one piece when the rounds are unknown)."""
        if not self.round_sizes or sum(self.round_sizes) != len(self.times_s):
            return [list(self.times_s)] if self.times_s else []
        out: list[list[float]] = []
        at = 0
        for n in self.round_sizes:
            if n:
                out.append(list(self.times_s[at : at + n]))
            at += n
        return out

    @property
    def round_medians_s(self) -> list[float]:
        return [statistics.median(r) for r in self.by_round()]

    @property
    def sample(self) -> list[float]:
        """The balanced sample the statistics use: from each round as many runs as the
        round with the fewest, those nearest the round's median (see the module's
        docstring)."""
        rounds = self.by_round()
        if len(rounds) < 2:
            return list(self.times_s)
        k = min(len(r) for r in rounds)
        out: list[float] = []
        for r in rounds:
            mid = statistics.median(r)
            out.extend(sorted(sorted(r, key=lambda t: (abs(t - mid), t))[:k]))
        return out

    @property
    def spread(self) -> float:
        """How far the rounds' medians disagree: the highest over the lowest, minus one."""
        meds = self.round_medians_s
        if len(meds) < 2 or min(meds) <= 0.0:
            return 0.0
        return max(meds) / min(meds) - 1.0

    @property
    def median_s(self) -> float:
        sample = self.sample
        return statistics.median(sample) if sample else math.inf

    def interval(self, confidence: float) -> tuple[float, float]:
        return median_interval(self.sample, confidence)

    def result(self) -> Result:
        """The balanced sample (:attr:`sample`) as one :class:`Result` (what reports
        show as a time)."""
        return Result(
            config=dict(self.config),
            status=self.status,
            compile_s=self.compile_s,
            times_s=tuple(self.sample),
            message=self.message,
            extra={
                "confirmation_rounds": self.rounds,
                "round_sizes": list(self.round_sizes),
                **({"unverified": self.unverified} if self.unverified else {}),
            },
        )

    def to_dict(self, confidence: float) -> dict[str, Any]:
        lo, hi = self.interval(confidence)
        return {
            "config": dict(self.config),
            "default": self.is_default,
            "status": self.status.value,
            "message": self.message,
            "rounds": self.rounds,
            "median_s": self.median_s if self.ok else None,
            "interval_s": [lo, hi] if self.ok else None,
            "search_s": self.search_s,
            "times_s": list(self.times_s),
            "round_sizes": list(self.round_sizes),
            "round_medians_s": self.round_medians_s,
        }


@dataclass
class Confirmation:
    """What the confirmation round measured, and what it concludes."""

    entries: list[ConfirmedConfig]
    confidence: float
    rounds_done: int = 0
    wall_s: float = 0.0
    notes: list[str] = field(default_factory=list)

    @property
    def default(self) -> ConfirmedConfig | None:
        return next((e for e in self.entries if e.is_default), None)

    @property
    def best(self) -> ConfirmedConfig | None:
        """The fastest configuration that ran correctly in every round it was given."""
        ok = [e for e in self.entries if e.ok]
        return min(ok, key=lambda e: e.median_s) if ok else None

    @property
    def best_is_default(self) -> bool:
        best = self.best
        return best is not None and best.is_default

    @property
    def speedup(self) -> float | None:
        """The default's median over the best's; None without both."""
        best, default = self.best, self.default
        if best is None or default is None or not default.ok:
            return None
        return default.median_s / best.median_s if best.median_s > 0 else None

    @property
    def round_speedups(self) -> list[float] | None:
        """The default's median over the best's, round by round, where the two were
        measured in the same rounds and those are enough for the confidence asked
        (see the module's docstring); None otherwise."""
        best, default = self.best, self.default
        if best is None or default is None or not default.ok or best.is_default:
            return None
        b_rounds, d_rounds = best.round_medians_s, default.round_medians_s
        n = len(b_rounds)
        if n != len(d_rounds) or n != best.rounds or n != default.rounds:
            return None
        if interval_coverage(n, self.confidence) < self.confidence - 1e-9:
            return None
        if min(b_rounds) <= 0.0:
            return None
        return [d / b for d, b in zip(d_rounds, b_rounds, strict=True)]

    @property
    def speedup_interval(self) -> tuple[float, float] | None:
        """The speedup's interval: of the round-by-round speedups' median where the
        rounds pair (:attr:`round_speedups`), else a conservative one from the two
        medians' intervals."""
        best, default = self.best, self.default
        if best is None or default is None or not default.ok:
            return None
        paired = self.round_speedups
        if paired is not None:
            return median_interval(paired, self.confidence)
        b_lo, b_hi = best.interval(self.confidence)
        d_lo, d_hi = default.interval(self.confidence)
        if b_lo <= 0 or b_hi <= 0:
            return None
        return (d_lo / b_hi, d_hi / b_lo)

    @property
    def coverage(self) -> float:
        """The coverage the best's and the default's intervals actually have (the lower
        of the two): the requested confidence, or less when there were too few runs
        (one round of three runs gives a min-max interval of 75 %)."""
        paired = self.round_speedups
        if paired is not None:
            return interval_coverage(len(paired), self.confidence)
        got = [
            interval_coverage(len(e.sample), self.confidence)
            for e in (self.best, self.default)
            if e is not None and e.ok
        ]
        return min(got) if got else 0.0

    @property
    def coverage_text(self) -> str:
        """``95 % confidence``, or what was obtained when it falls short of that."""
        got = self.coverage
        if got >= self.confidence - 1e-9:
            return f"{self.confidence:.0%} confidence"
        return (
            f"{got:.0%} confidence: too few runs for {self.confidence:.0%}, more "
            "confirmation rounds give more"
        )

    @property
    def significant(self) -> bool:
        """Whether the best beats the default beyond the noise."""
        best, default = self.best, self.default
        if best is None or default is None or not default.ok or best.is_default:
            return False
        paired = self.round_speedups
        if paired is not None:
            return median_interval(paired, self.confidence)[0] > 1.0
        return faster_beyond_noise(best.sample, default.sample, self.confidence)

    @property
    def verdict(self) -> str:
        """One line for the summary."""
        default, sp = self.default, self.speedup
        if self.best is None:
            return "no configuration ran correctly in the confirmation round"
        if default is None or not default.ok or sp is None:
            return "no default configuration to compare with"
        if self.best_is_default:
            return "the default configuration was the fastest"
        interval = self.speedup_interval
        span = f" ({interval[0]:.2f}-{interval[1]:.2f}x)" if interval else ""
        if self.significant:
            return f"{sp:.2f}x faster than the default{span}, {self.coverage_text}"
        return (
            f"no significant speedup: {sp:.2f}x{span} does not beat the default beyond the "
            f"noise ({self.coverage_text})"
        )

    def to_dict(self) -> dict[str, Any]:
        best = self.best
        interval = self.speedup_interval
        return {
            "rounds": self.rounds_done,
            "confidence": self.confidence,
            "coverage": self.coverage,
            "wall_s": self.wall_s,
            "best_config": dict(best.config) if best else None,
            "best_is_default": self.best_is_default,
            "speedup": self.speedup,
            "speedup_interval": list(interval) if interval else None,
            "round_speedups": self.round_speedups,
            "significant": self.significant,
            "verdict": self.verdict,
            "notes": list(self.notes),
            "entries": [e.to_dict(self.confidence) for e in self.entries],
        }


def pick_candidates(results: Sequence[Result], n: int) -> list[Result]:
    """The ``n`` fastest distinct configurations that ran correctly."""
    seen: set[str] = set()
    out: list[Result] = []
    for r in sorted((r for r in results if r.ok), key=lambda r: r.objective):
        key = canonical_config(r.config)
        if key not in seen:
            seen.add(key)
            out.append(r)
        if len(out) >= n:
            break
    return out


def confirm(
    candidates: Sequence[Result],
    default: Config | None,
    evaluator: Evaluator,
    policy: ConfirmPolicy,
    *,
    cancel: CancelToken | None = None,
    room: Callable[[], int | None] | None = None,
    on_measured: Callable[[Result], None] | None = None,
    searched: Sequence[Result] = (),
) -> Confirmation:
    """Re-measure ``candidates`` and ``default`` interleaved for ``policy.rounds`` rounds.

    ``searched``: the search's results, where the default's time in the search is read
    when it is no candidate (a candidate's is its own).

    ``room()`` says how many more configurations fit in the time left (None: no limit);
    ``policy.spare_rounds`` more rounds are measured while it has room for a whole one,
    then up to ``policy.extra_rounds`` more while some configuration's round medians
    disagree by more than ``policy.agreement`` (and the time left, if known, holds them).
    ``cancel`` is checked between configurations. A configuration that fails in a round
    (timeout, wrong result, ...) is dropped from later rounds and from the answer.
    """
    started = time.monotonic()
    entries: list[ConfirmedConfig] = []
    index: dict[str, ConfirmedConfig] = {}
    if default is not None:
        key = canonical_config(default)
        search_s = next(
            (r.median_s for r in searched if r.ok and canonical_config(r.config) == key), None
        )
        entries.append(ConfirmedConfig(dict(default), is_default=True, search_s=search_s))
        index[key] = entries[-1]
    for r in candidates:
        key = canonical_config(r.config)
        if key in index:
            index[key].search_s = r.median_s
            continue
        entries.append(ConfirmedConfig(dict(r.config), search_s=r.median_s))
        index[key] = entries[-1]
    out = Confirmation(entries, policy.confidence)
    planned = policy.rounds + policy.spare_rounds
    extra = 0
    rnd = 0
    while True:
        live = [e for e in entries if e.status is Status.OK]
        if not live:
            break
        shift = rnd % len(live)
        order = live[shift:] + live[:shift]
        limit = room() if room is not None else None
        if rnd >= planned or (rnd >= policy.rounds and (limit is None or limit < len(order))):
            # the planned rounds are done (spare rounds only where the time left is known
            # to hold them): more only while some configuration's rounds disagree
            split = [e for e in live if e.spread > policy.agreement]
            if not split or extra >= policy.extra_rounds:
                break
            if limit is not None and limit < len(order):
                out.notes.append("the budget left no time for more rounds where they disagreed")
                break
            extra += 1
            if extra == 1:
                worst = max(split, key=lambda e: e.spread)
                out.notes.append(
                    f"the rounds disagreed (medians up to {worst.spread:.0%} apart): "
                    "more rounds measured"
                )
        if limit is not None and limit < len(order):
            if rnd == 0:
                out.notes.append("the budget left no time for the confirmation round")
            else:
                out.notes.append(f"the budget allowed {rnd} confirmation round(s)")
            break
        done = _round(order, evaluator, cancel, on_measured)
        if done < len(order):
            out.notes.append("the confirmation round was cancelled")
            break
        out.rounds_done += 1
        rnd += 1
    out.wall_s = time.monotonic() - started
    return out


def _round(
    order: Sequence[ConfirmedConfig],
    evaluator: Evaluator,
    cancel: CancelToken | None,
    on_measured: Callable[[Result], None] | None,
) -> int:
    """One pass over ``order``; the number of configurations measured."""
    if cancel is not None and cancel.cancelled:
        return 0
    results = evaluator.evaluate_batch([e.config for e in order])
    done = 0
    try:
        for entry, result in zip(order, results, strict=False):
            done += 1
            entry.rounds += 1
            if entry.rounds == 1:
                entry.compile_s = result.compile_s
            if on_measured is not None:
                on_measured(result)
            if result.extra.get("unverified"):
                entry.unverified = str(result.extra["unverified"])
            if result.ok:
                entry.times_s.extend(result.times_s)
                entry.round_sizes.append(len(result.times_s))
            else:
                entry.status, entry.message = result.status, result.message
            if cancel is not None and cancel.cancelled and done < len(order):
                break
    finally:
        close = getattr(results, "close", None)
        if close is not None:
            close()
    return done


def side_by_side(
    winners: Mapping[str, Result | None],
    evaluator: Evaluator,
    policy: ConfirmPolicy,
    *,
    cancel: CancelToken | None = None,
    on_start: Callable[[int], None] | None = None,
    on_measured: Callable[[Result], None] | None = None,
) -> tuple[Confirmation, dict[str, ConfirmedConfig]]:
    """Re-measure the winners of several searches (by name) interleaved, as
    :func:`confirm` does; each distinct configuration once, however many searches found
    it (``on_start`` is told how many, before any is measured). Returns the round and,
    per name whose search found something, its entry."""
    found = [r for r in winners.values() if r is not None and r.ok]
    distinct = {canonical_config(r.config): r for r in found}
    if on_start is not None:
        on_start(len(distinct))
    outcome = confirm(
        list(distinct.values()),
        None,
        evaluator,
        replace(policy, candidates=max(1, len(distinct)), spare_rounds=0),
        cancel=cancel,
        on_measured=on_measured,
    )
    by_key = {canonical_config(e.config): e for e in outcome.entries}
    mine = {
        name: by_key[canonical_config(r.config)]
        for name, r in winners.items()
        if r is not None and canonical_config(r.config) in by_key
    }
    return outcome, mine


__all__ = [
    "ConfirmPolicy",
    "Confirmation",
    "ConfirmedConfig",
    "confirm",
    "pick_candidates",
    "side_by_side",
]

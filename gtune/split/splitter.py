"""Split one kernel across devices: configurations, times alone, plan, run, verify.

:func:`split_kernel` follows seed 002 §2.2: each device's best configuration (from the
store or tuned), its time alone, the split factors (eq. 4) adjusted to whole
work-groups of each device's own size (eq. 5-9), the theoretical time (Algorithm 1),
a decision with transfers and launches counted, the concurrent run and its
verification against the fastest device's output alone.
"""

from __future__ import annotations

import itertools
import logging
import re
from collections.abc import Mapping, Sequence
from typing import Any

from gtune.device import DeviceLimits
from gtune.exceptions import InputError
from gtune.kernel import TunableKernel
from gtune.split.execute import DeviceRef, Executor, RunTimes
from gtune.split.geometry import Slab, SplitAxis, block_of, halo_of, slab_for, split_axis
from gtune.split.plan import (
    DeviceCost,
    Partition,
    decide,
    factors_with_first,
    partition,
    split_factors,
    sweep_factors,
    theoretical_time,
)
from gtune.split.report import DeviceEntry, SplitReport, SweepPoint
from gtune.split.tuned import Tuned, best_config
from gtune.store import ResultStore

log = logging.getLogger("gtune.split")

BALANCES = ("kernel", "end-to-end")
_PART = re.compile(r"^(?P<sel>.+)@(?P<k>\d+)/(?P<n>\d+)$")


def parse_devices(text: str | Sequence[str] | None) -> list[DeviceRef]:
    """Devices as ``SEL,SEL,...``: each a ``gtune devices`` selector (``P:D``, identity or
    name), optionally ``SEL@K/N`` for part K (from 0) of an equal partition of that
    device into N sub-devices. The same device may be named twice: each entry gets its
    own worker, context and queue. Default: every device."""
    from gtune.measure import list_devices, select_device

    if text is None or text == "" or text == []:
        return [DeviceRef(d) for d in list_devices()]
    items = [s.strip() for s in text.split(",")] if isinstance(text, str) else list(text)
    refs = []
    for item in items:
        if not item:
            raise InputError("empty device selector", source="devices")
        m = _PART.match(item)
        part = None
        if m:
            item = m.group("sel")
            part = (int(m.group("k")), int(m.group("n")))
            if part[1] < 1 or part[0] >= part[1]:
                raise InputError(
                    f"part {part[0]} of {part[1]}: K must be below N", source="devices"
                )
        try:
            limits = select_device(item)
        except InputError as exc:
            raise InputError(exc.message, source="devices", hint=exc.hint) from None
        refs.append(DeviceRef(limits, part))
    return refs


def _slabs(part: Partition, axis: SplitAxis, halo: int) -> list[Slab]:
    return [
        slab_for(s.device, s.own_start, s.own_stop, axis.size, halo, s.block) for s in part.active
    ]


def split_kernel(
    kernel: TunableKernel,
    devices: str | Sequence[str | DeviceRef | DeviceLimits] | None = None,
    *,
    dim: str | None = None,
    halo: int | None = None,
    configs: Mapping[int, Mapping[str, int]] | None = None,
    source: str = "auto",
    store: ResultStore | None = None,
    budget: int = 60,
    strategy: str = "hybrid",
    balance: str = "kernel",
    runs: int = 5,
    force: bool = False,
    sweep: bool = False,
    sweep_points: int = 9,
    sweep_width: float = 0.2,
    timeout_s: float = 120.0,
) -> SplitReport:
    """Split ``kernel`` across ``devices`` along ``dim`` and measure it.

    ``configs`` maps a device's position to its configuration (else ``source`` says
    where it comes from: see :func:`gtune.split.tuned.best_config`). ``balance``:
    ``kernel`` (eq. 4 on kernel times, as the paper) or ``end-to-end`` (on times with
    transfers). The split runs when it is predicted to beat the fastest device alone,
    or always with ``force``; ``sweep`` also measures split factors around the computed
    one. Each stage is logged at INFO on the ``gtune.split`` logger.
    """
    say = log.info
    if balance not in BALANCES:
        raise InputError(
            f"unknown balance {balance!r}; use {' or '.join(BALANCES)}", source="balance"
        )
    if runs < 1:
        raise InputError(f"runs must be at least 1, got {runs}", source="runs")
    refs = _refs(devices)
    if not refs:
        raise InputError("no device to split onto", source="devices")
    tuned = _configurations(
        kernel, refs, configs, source=source, store=store, budget=budget, strategy=strategy
    )
    cfgs = [t.config for t in tuned]
    axis, blocks, h = _geometry(kernel, cfgs, dim, halo)
    with Executor(kernel, refs, axis, timeout_s=timeout_s) as ex:
        alone_out, costs, entries = _alone(ex, refs, tuned, blocks, axis.size, runs)
        report, slabs, optimal = _plan(
            kernel, refs, axis, blocks, h, costs, entries, balance=balance, runs=runs
        )
        fastest = report.decision.fastest
        for i, (a, b) in enumerate(itertools.pairwise(alone_out)):
            bad, _ = ex.compare(b, a)
            if bad:
                report.notes.append(
                    f"{refs[i + 1].label} alone differs from {refs[i].label} alone in "
                    f"{bad} elements"
                )
        for i, out in enumerate(alone_out):
            if i != fastest:
                ex.discard(out)
        _run_split(ex, refs, cfgs, slabs, runs, report, force, reference=alone_out[fastest])
        if sweep and len(refs) > 1:
            kernel_times = [c.kernel_s for c in costs]
            for k, f in enumerate(sweep_factors(optimal[0], sweep_points, sweep_width)):
                say(f"sweep: {refs[0].label} share {f:.3f}")
                report.sweep.append(
                    _sweep_point(
                        ex,
                        cfgs,
                        axis,
                        blocks,
                        h,
                        optimal,
                        kernel_times,
                        f,
                        runs,
                        output=f"sweep{k}",
                        reference=alone_out[fastest],
                    )
                )
    return report


def _configurations(
    kernel: TunableKernel,
    refs: Sequence[DeviceRef],
    configs: Mapping[int, Mapping[str, int]] | None,
    *,
    source: str,
    store: ResultStore | None,
    budget: int,
    strategy: str,
) -> list[Tuned]:
    """Step 1: each device's configuration (given, or one search per physical device)."""
    tuned: list[Tuned] = []
    by_identity: dict[str, Tuned] = {}
    for i, ref in enumerate(refs):
        given = configs.get(i) if configs is not None else None
        key = ref.limits.identity
        if given is None and key in by_identity:
            tuned.append(by_identity[key])
            continue
        log.info(f"configuration for {ref.label} ({'given' if given is not None else source})")
        t = best_config(
            kernel,
            ref.limits,
            source=source,
            store=store,
            budget=budget,
            strategy=strategy,
            given=given,
        )
        tuned.append(t)
        if given is None:
            by_identity[key] = t
    return tuned


def _geometry(
    kernel: TunableKernel, cfgs: Sequence[Mapping[str, int]], dim: str | None, halo: int | None
) -> tuple[SplitAxis, list[int], int]:
    """Step 2: the split dimension, each device's work-group extent along it, the halo."""
    axis = split_axis(kernel, cfgs[0], dim)
    for c in cfgs[1:]:
        other = split_axis(kernel, c, dim)
        if other.size_name != axis.size_name:
            raise InputError(
                "the devices' configurations disagree on the split dimension's size",
                source=kernel.label,
            )
    return axis, [block_of(kernel, c, axis) for c in cfgs], halo_of(kernel, axis, halo)


def _alone(
    ex: Executor,
    refs: Sequence[DeviceRef],
    tuned: Sequence[Tuned],
    blocks: Sequence[int],
    n: int,
    runs: int,
) -> tuple[list[dict[str, str]], list[DeviceCost], list[DeviceEntry]]:
    """Step 3: each device alone on the whole problem, data moved in and out: its
    output, its costs and its report entry."""
    cfgs = [t.config for t in tuned]
    alone_out: list[dict[str, str]] = []
    costs: list[DeviceCost] = []
    entries: list[DeviceEntry] = []
    for i, ref in enumerate(refs):
        log.info(f"{ref.label} alone")
        out = ex.new_output(f"alone{i}")
        whole = Slab(i, 0, n, 0, n, blocks[i])
        ex.setup([whole], cfgs, out)
        rt = ex.measure([whole], runs)
        alone_out.append(out)
        cost = DeviceCost(
            kernel_s=rt.device_median(i, "kernel_s"),
            upload_s=rt.device_median(i, "upload_s"),
            download_s=rt.device_median(i, "download_s"),
            end_to_end_s=RunTimes.median(rt.end_to_end_s),
        )
        costs.append(cost)
        entries.append(
            DeviceEntry(
                label=ref.label,
                name=ref.limits.name,
                identity=ref.limits.identity,
                part=ref.part,
                config=dict(cfgs[i]),
                config_source=tuned[i].source,
                tuned_s=tuned[i].time_s,
                block=blocks[i],
                alone_kernel_s=cost.kernel_s,
                alone_end_to_end_s=cost.end_to_end_s,
                alone_upload_s=cost.upload_s,
                alone_download_s=cost.download_s,
            )
        )
    return alone_out, costs, entries


def _plan(
    kernel: TunableKernel,
    refs: Sequence[DeviceRef],
    axis: SplitAxis,
    blocks: Sequence[int],
    h: int,
    costs: Sequence[DeviceCost],
    entries: list[DeviceEntry],
    *,
    balance: str,
    runs: int,
) -> tuple[SplitReport, list[Slab], list[float]]:
    """Step 4: the plan (eq. 4-9, Algorithm 1) and the decision, as the report; each
    device's slab, and the optimal split factors."""
    n = axis.size
    basis = [c.kernel_s if balance == "kernel" else c.end_to_end_s for c in costs]
    kernel_times = [c.kernel_s for c in costs]
    optimal = split_factors(basis)
    plan = partition(n, list(blocks), optimal)
    slabs = _slabs(plan, axis, h)
    by_device = {s.device: s for s in slabs}
    for share, entry in zip(plan.shares, entries, strict=True):
        entry.optimal = share.factor
        entry.adjusted = share.adjusted
        entry.computed = share.computed_factor
        slab = by_device.get(share.device)
        entry.slab = slab.to_dict() if slab is not None else None
    parts = [
        (
            (by_device[i].length / n, by_device[i].length / n, by_device[i].owned / n)
            if i in by_device
            else (0.0, 0.0, 0.0)
        )
        for i in range(len(refs))
    ]
    decision = decide(list(costs), parts, [r.label for r in refs])
    report = SplitReport(
        kernel=kernel.name,
        kernel_label=kernel.label,
        sizes=dict(kernel.sizes),
        dim=axis.letter,
        size_name=axis.size_name,
        halo=h,
        balance=balance,
        runs=runs,
        devices=entries,
        partition=plan,
        theoretical_s=theoretical_time(optimal, kernel_times),
        theoretical_adjusted_s=theoretical_time(
            [s.computed_factor for s in plan.shares], kernel_times
        ),
        decision=decision,
    )
    if balance == "end-to-end":
        report.notes.append("split factors from end-to-end times alone (transfers included)")
    return report, slabs, optimal


def _run_split(
    ex: Executor,
    refs: Sequence[DeviceRef],
    cfgs: Sequence[dict[str, int]],
    slabs: Sequence[Slab],
    runs: int,
    report: SplitReport,
    force: bool,
    *,
    reference: dict[str, str],
) -> None:
    """Step 5: the split itself, when it can win (or when forced), verified against
    the fastest device's output alone (``reference``)."""
    decision = report.decision
    entries = report.devices
    if decision.split or (force and len(slabs) > 1):
        if not decision.split:
            report.notes.append("split run although not predicted to win (forced)")
        log.info("split: " + ", ".join(f"{refs[s.device].label} {s.owned} rows" for s in slabs))
        out = ex.new_output("split")
        ex.setup(slabs, cfgs, out)
        rt = ex.measure(slabs, runs)
        report.ran_split = True
        report.split_kernel_s = RunTimes.median(rt.kernel_s)
        report.split_end_to_end_s = RunTimes.median(rt.end_to_end_s)
        report.split_times = rt.to_dict()
        for s in slabs:
            entries[s.device].split_kernel_s = rt.device_median(s.device, "kernel_s")
            entries[s.device].split_end_to_end_s = rt.device_median(s.device, "end_to_end_s")
        report.mismatches, report.max_error = ex.compare(out, reference)
        report.verified = report.mismatches == 0
        ex.discard(out)
    elif len(slabs) > 1:
        report.notes.append(f"{decision.reason}; ran on {refs[decision.fastest].label} alone")
    else:
        report.notes.append(decision.reason)


def _sweep_point(
    ex: Executor,
    cfgs: Sequence[dict[str, int]],
    axis: SplitAxis,
    blocks: Sequence[int],
    h: int,
    optimal: Sequence[float],
    kernel_times: Sequence[float],
    f: float,
    runs: int,
    *,
    output: str,
    reference: dict[str, str],
) -> SweepPoint:
    """Step 6, one point: the split with the first device's share ``f`` (Figures 6-7),
    measured and verified against ``reference``."""
    centre = optimal[0]
    factors = factors_with_first(f, optimal) if f != centre else list(optimal)
    point_plan = partition(axis.size, list(blocks), factors)
    point_slabs = _slabs(point_plan, axis, h)
    theo = theoretical_time([s.computed_factor for s in point_plan.shares], kernel_times)
    point = SweepPoint(
        first_share=f,
        adjusted=[s.adjusted for s in point_plan.shares],
        theoretical_s=theo,
        kernel_s=None,
        end_to_end_s=None,
        verified=None,
        computed=f == centre,
    )
    out = ex.new_output(output)
    ex.setup(point_slabs, cfgs, out)
    rt = ex.measure(point_slabs, runs)
    point.kernel_s = RunTimes.median(rt.kernel_s)
    point.end_to_end_s = RunTimes.median(rt.end_to_end_s)
    point.verified = ex.compare(out, reference)[0] == 0
    ex.discard(out)
    return point


def _refs(devices: str | Sequence[str | DeviceRef | DeviceLimits] | None) -> list[DeviceRef]:
    if devices is None or isinstance(devices, str):
        return parse_devices(devices)
    refs: list[DeviceRef] = []
    for d in devices:
        if isinstance(d, DeviceRef):
            refs.append(d)
        elif isinstance(d, DeviceLimits):
            refs.append(DeviceRef(d))
        else:
            refs.extend(parse_devices(str(d)))
    return refs


def describe(report: SplitReport) -> dict[str, Any]:
    """The report as plain data (what ``--json`` prints)."""
    return report.to_dict()


__all__ = ["BALANCES", "parse_devices", "split_kernel"]

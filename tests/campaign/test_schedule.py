"""Campaign scheduling as pure logic: splitting, longest first, a simulated cluster."""

from __future__ import annotations

import math
import random
from dataclasses import replace

import pytest

from gtune.campaign.runner import worker_specs
from gtune.campaign.schedule import (
    COMPILE_WORKERS_ENV,
    MAX_COMPILE_WORKERS,
    Piece,
    Queue,
    build_slots,
    compile_budget,
    device_share,
    device_workers,
    helpers_per_worker,
    plan,
    seconds_per_config,
    simulate,
    split_budget,
    splittable,
)
from gtune.campaign.spec import CampaignTask
from gtune.campaign.task import BOUND_DEVICE, BOUND_LIMITS, _bound_limits
from gtune.loadpredict.features import StencilTraits
from gtune.measure.buildslots import BUILD_SLOTS_ENV
from tests.space.space_helpers import h100_limits

TECHS = ("global", "vec", "local", "image", "stream")


def _task(
    label: str, technique: str = "all", budget: str | None = "300", **kw: object
) -> CampaignTask:
    return CampaignTask(
        kernel=f"/k/{label}.yaml",
        label=label,
        sizes=(("NX", 64),),
        device="",
        strategy=str(kw.pop("strategy", "hybrid")),
        technique=technique,
        budget=budget,
    )


def test_a_task_over_every_technique_splits_into_one_piece_each_then_itself() -> None:
    task = _task("a")
    pieces = plan([task], lambda t: TECHS)
    parts, final = pieces[:-1], pieces[-1]
    assert [p.task.technique for p in parts] == list(TECHS)
    assert all(not p.task.confirm and p.task.budget == "60" and not p.final for p in parts)
    assert final.final and final.task == task and set(final.after) == {p.key for p in parts}
    assert len({p.key for p in pieces}) == len(pieces)  # every piece its own key
    assert {p.group for p in pieces} == {pieces[0].group}  # one kernel session serves all


def test_what_does_not_split_stays_one_piece() -> None:
    one_technique = _task("b", technique="global")
    wall_time = _task("c", budget="90s")
    baseline = _task("d", strategy="random")  # searches the whole space at once
    assert not splittable(one_technique) and not splittable(baseline)
    assert not splittable(wall_time)
    pieces = plan([one_technique, wall_time, baseline], lambda t: TECHS)
    assert [p.final for p in pieces] == [True, True, True]
    assert plan([_task("e")], lambda t: ("global",))[0].task.technique == "all"


def test_whole_task_keys_do_not_change_and_pieces_have_their_own() -> None:
    task = _task("a")
    assert "confirm" not in task.to_dict() and CampaignTask.from_dict(task.to_dict()) == task
    piece = plan([task], lambda t: TECHS)[0].task
    assert piece.key != task.key and CampaignTask.from_dict(piece.to_dict()) == piece


def test_split_budget_shares_counts_only() -> None:
    assert split_budget("300", 3) == "100" and split_budget("2", 5) == "1"
    assert split_budget("90s", 3) == "90s" and split_budget(None, 3) is None


def test_queue_hands_out_longest_first_and_releases_the_final_after_its_pieces() -> None:
    tasks = [_task("short", budget="30"), _task("long", budget="3000")]
    q = Queue.of(plan(tasks, lambda t: TECHS[:2]))
    first = q.take()
    assert first is not None and first.task.label == "long"
    order = [first]
    while (p := q.take()) is not None:
        order.append(p)
    assert all(not p.final for p in order)  # finals wait for their pieces
    for p in order:
        q.done(p.key)
    finals = [q.take(), q.take()]
    assert all(f is not None and f.final for f in finals) and q.take() is None


def test_a_worker_keeps_its_kernel_among_pieces_about_as_long() -> None:
    pieces = plan([_task("a"), _task("b")], lambda t: TECHS)
    q = Queue.of(pieces)
    a_group = pieces[0].group
    b = next(p for p in pieces if p.task.label == "b")
    picked = q.take(last_group=b.group)
    assert picked is not None and picked.group == b.group != a_group


def test_free_workers_start_on_kernels_no_other_worker_is_on() -> None:
    """Each kernel's space is solved by one worker, and its pieces follow each other
    there (one session), while other kernels are left; the pieces of one kernel spread
    only when nothing else is."""
    pieces = plan([_task("a"), _task("b"), _task("c")], lambda t: TECHS)
    q = Queue.of(pieces)
    first = q.take()
    assert first is not None
    second = q.take(None, {first.group})
    third = q.take(None, {first.group, second.group} if second else ())
    assert second is not None and third is not None
    assert len({first.group, second.group, third.group}) == 3
    again = q.take(first.group, {second.group, third.group})
    assert again is not None and again.group == first.group


def test_compile_helpers_share_the_hosts_cores() -> None:
    assert compile_budget(1, 16) == 8  # capped
    assert compile_budget(2, 16) == 7 and compile_budget(4, 16) == 3
    assert compile_budget(8, 16) == 1 and compile_budget(1, 2) == 1 and compile_budget(4, 2) == 1


def test_two_workers_share_a_gpu_when_the_cores_allow() -> None:
    # a search waits mostly for its builds: two per GPU, each with >= 2 compile helpers
    assert device_workers("GPU", 1, 16) == 2 and compile_budget(2, 16) == 7
    assert device_workers("GPU", 2, 32) == 2 and compile_budget(4, 32) == 7
    assert device_workers("GPU", 8, 128) == 2 and compile_budget(16, 128) == 7
    assert device_workers("ACCELERATOR", 1, 16) == 2
    assert device_workers("GPU", 4, 16) == 1  # 8 workers would get one helper each
    assert device_workers("GPU", 1, 2) == 1
    # a CPU device measures on the cores that build: one worker whatever the cores
    assert device_workers("CPU", 1, 64) == 1


def _campaign(seed: int) -> tuple[list[Piece], dict[str, float]]:
    """A training campaign: kernels of unequal length (budgets alike, run times not),
    every technique searched; durations drawn around each piece's expected cost."""
    rng = random.Random(seed)
    tasks = [_task(f"k{i}", budget=str(rng.choice([150, 300, 300, 600, 1500]))) for i in range(40)]
    pieces = plan(tasks, lambda t: TECHS[:3])
    duration = {p.key: (p.cost * rng.uniform(0.8, 1.2) if not p.final else 1.0) for p in pieces}
    return pieces, duration


def test_simulated_cluster_longest_first_keeps_every_worker_busy() -> None:
    for seed in range(5):
        pieces, duration = _campaign(seed)
        total = sum(duration.values())
        for workers in (1, 2, 4, 8):
            lpt = simulate(pieces, lambda p, d=duration: d[p.key], workers)
            fifo = simulate(pieces, lambda p, d=duration: d[p.key], workers, longest_first=False)
            ideal = total / workers
            assert abs(sum(lpt.busy) - total) < 1e-6 * total  # every piece ran once
            # longest first ends within a few percent of perfect balance
            assert lpt.makespan <= ideal * 1.05 + max(duration.values()) * 0.01
            assert lpt.utilisation >= 0.95
            assert lpt.makespan <= fifo.makespan + 1e-9
            if workers == 1:
                assert abs(lpt.makespan - total) < 1e-6 * total


def test_simulated_scaling_of_whole_kernels_is_worse_than_of_pieces() -> None:
    """Splitting by technique matters when a few kernels are much longer than the rest:
    whole, one of them bounds the campaign; in pieces it spreads over the workers."""
    tasks = [_task("huge", budget="30000")] + [_task(f"s{i}", budget="300") for i in range(20)]
    split = plan(tasks, lambda t: TECHS)
    whole = plan(tasks, lambda t: ())  # as if nothing could split
    for workers in (4, 8):
        t_split = simulate(split, lambda p: p.cost, workers).makespan
        t_whole = simulate(whole, lambda p: p.cost, workers).makespan
        assert t_whole >= 30000 and t_split < 0.5 * t_whole


def _traits(points: int, rz: int = 1, nz: int = 256) -> StencilTraits:
    return StencilTraits(
        points=points,
        dims=3 if rz else 2,
        density=1.0,
        unique_dim="none",
        radius_x=1,
        radius_y=1,
        radius_z=rz,
        pattern="star",
        intensity=1.0,
        itemsize=4,
        log2_nx=8.0,
        log2_ny=8.0,
        log2_nz=math.log2(nz),
    )


def test_a_configurations_cost_knows_what_its_technique_gives_the_compiler() -> None:
    small, dense = _traits(7), _traits(125)
    # vector loads build per point and lane: a dense stencil's vec search is the long one
    assert seconds_per_config("vec", dense) > 3 * seconds_per_config("global", dense)
    assert seconds_per_config("vec", small) <= seconds_per_config("global", small)
    # streaming a stencil without z extent through a 3D array builds slowly; with z
    # extent (or in a 2D array, nothing to stream along z) it costs what others do
    plane = _traits(9, rz=0)
    assert seconds_per_config("stream", plane) > 5 * seconds_per_config("stream", _traits(9))
    flat = _traits(9, rz=0, nz=1)
    assert seconds_per_config("stream", flat) == seconds_per_config("global", flat)
    # more loads per point never cost less, whatever the technique
    for tech in ("global", "vec", "stream", "local", None):
        rates = [seconds_per_config(tech, _traits(p)) for p in (1, 7, 27, 125)]
        assert rates == sorted(rates)
    assert seconds_per_config("vec", None) == seconds_per_config("global", None) > 0


def _training(rng: random.Random) -> tuple[list[CampaignTask], dict[str, StencilTraits]]:
    """A load-predictor collection: one task per kernel and technique, equal budgets,
    kernels of every size, some stencils without z extent."""
    tasks, traits = [], {}
    for i in range(26):
        label = f"k{i}"
        points = rng.choice([5, 7, 9, 13, 19, 27, 125])
        # the suite's stencils without z extent are its 1D/2D ones: few points
        traits[label] = _traits(points, rz=rng.choice([0, 1, 1]) if points <= 13 else 1)
        tasks += [_task(label, technique=t, budget="60") for t in ("global", "vec", "stream")]
    return tasks, traits


def test_longest_first_by_compile_cost_starts_the_long_searches_first() -> None:
    rng = random.Random(3)
    tasks, traits = _training(rng)
    pieces = plan(
        tasks,
        lambda t: TECHS,
        rate_of=lambda t: seconds_per_config(t.technique, traits[t.label]),
    )
    q = Queue.of(pieces)
    taken = [q.take() for _ in range(len(pieces))]
    costs = [p.cost for p in taken if p is not None]
    longest = max(pieces, key=lambda p: p.cost)
    assert costs[0] == longest.cost and costs[-1] == min(p.cost for p in pieces)
    # each piece's cost is its configurations times its technique's rate on its stencil
    assert longest.cost == 60 * seconds_per_config(
        longest.task.technique, traits[longest.task.label]
    )
    assert longest.task.technique in ("vec", "stream")


def test_simulated_collection_on_four_gpus_ranked_by_compile_cost_ends_near_the_bound() -> None:
    """Searches as long as their builds (rate x configurations, with noise): ranked by
    compile cost the schedule ends within a few percent of max(total / workers, longest
    search); ranked by configurations alone (every search alike) it can end much later."""
    for seed in range(5):
        rng = random.Random(seed)
        tasks, traits = _training(rng)

        def rate(t: CampaignTask, traits: dict[str, StencilTraits] = traits) -> float:
            return seconds_per_config(t.technique, traits[t.label])

        by_cost = plan(tasks, lambda t: TECHS, rate_of=rate)
        by_count = plan(tasks, lambda t: TECHS)
        true = {p.key: p.cost * rng.uniform(0.8, 1.25) for p in by_cost}
        total, longest = sum(true.values()), max(true.values())
        for workers in (2, 4, 8):
            bound = max(total / workers, longest)
            ranked = simulate(by_cost, lambda p, d=true: d[p.key], workers)
            naive = simulate(by_count, lambda p, d=true: d[p.key], workers)
            assert ranked.makespan <= bound * 1.05, (seed, workers)
            assert ranked.makespan <= naive.makespan * 1.02


def test_cheapest_order_hands_out_each_kernel_whole_from_the_cheapest() -> None:
    """order="cheapest": the kernels (groups) come out by their expected total, each
    kernel's pieces together and longest first within it; "longest" stays as it was."""
    rng = random.Random(5)
    tasks, traits = _training(rng)

    def rate(t: CampaignTask) -> float:
        return seconds_per_config(t.technique, traits[t.label])

    pieces = plan(tasks, lambda t: TECHS, rate_of=rate, order="cheapest")
    longest = plan(tasks, lambda t: TECHS, rate_of=rate)
    assert [replace(p, rank=0) for p in pieces] == longest  # only the ranks differ
    total: dict[str, float] = {}
    for p in pieces:
        total[p.group] = total.get(p.group, 0.0) + p.cost
    q = Queue.of(pieces)
    taken = [p for p in (q.take() for _ in pieces) if p is not None]
    assert len(taken) == len(pieces)
    groups = list(dict.fromkeys(p.group for p in taken))
    assert [total[g] for g in groups] == sorted(total.values())  # cheapest kernel first
    runs = [p.group for p in taken]
    assert all(runs.index(g) + 3 == len(runs) - runs[::-1].index(g) for g in groups)
    for g in groups:  # within a kernel, its longest search first
        costs = [p.cost for p in taken if p.group == g]
        assert costs == sorted(costs, reverse=True)
    with pytest.raises(ValueError, match="unknown order"):
        plan(tasks, lambda t: TECHS, order="shortest")
    # workers: the first takes the cheapest kernel, the second the next cheapest (no
    # session opened twice), and each goes on with its own kernel until it is done
    q = Queue.of(pieces)
    first = q.take()
    assert first is not None and first.group == groups[0]
    second = q.take(None, {first.group})
    assert second is not None and second.group == groups[1]
    for _ in range(2):
        mine = q.take(first.group, {second.group})
        assert mine is not None and mine.group == groups[0]
    after = q.take(first.group, {second.group})  # its kernel done: the next free one
    assert after is not None and after.group == groups[2]


def test_a_time_limit_cuts_fewer_kernels_short_with_the_cheapest_first() -> None:
    """A collection cut by a limit: the cheapest kernels first finish more kernels (rows)
    by the limit than the longest searches first, on every seed; both end all of them."""
    better = 0
    for seed in range(6):
        rng = random.Random(seed)
        tasks, traits = _training(rng)

        def rate(t: CampaignTask, traits: dict[str, StencilTraits] = traits) -> float:
            return seconds_per_config(t.technique, traits[t.label])

        cheap = plan(tasks, lambda t: TECHS, rate_of=rate, order="cheapest")
        lpt = plan(tasks, lambda t: TECHS, rate_of=rate)
        true = {p.key: p.cost * rng.uniform(0.8, 1.25) for p in cheap}
        kernels = len({p.group for p in cheap})
        for workers in (2, 4):
            a = simulate(cheap, lambda p, d=true: d[p.key], workers)
            b = simulate(lpt, lambda p, d=true: d[p.key], workers)
            assert a.finished_groups(cheap, a.makespan) == kernels
            assert b.finished_groups(lpt, b.makespan) == kernels
            limit = 0.3 * b.makespan
            rows_cheap = a.finished_groups(cheap, limit)
            rows_lpt = b.finished_groups(lpt, limit)
            assert rows_cheap >= rows_lpt, (seed, workers)
            better += rows_cheap > rows_lpt
    assert better >= 6


def test_each_gpu_gets_its_share_of_the_host_whether_the_campaign_uses_all_or_one() -> None:
    # 64 cores, 4 GPUs: 62 after the client and scheduler, 15 a GPU
    assert device_share(64, 4, 4) == 15 and device_share(64, 1, 4) == 15
    assert device_share(64, 2, 4) == 15
    assert device_share(64, 1) == 62  # a host of one GPU (or a count not known)
    assert device_share(2, 1) == 2 and device_share(2, 2) == 1  # small hosts: no reserve
    # two workers per GPU, six helpers each: 4 x 2 x (1 + 6) = 56 of 64 cores
    assert device_workers("GPU", 1, 15) == 2 and compile_budget(2, 15) == 6


def test_build_slots_leave_the_client_and_each_gpus_measuring_a_core() -> None:
    assert build_slots(32, 4) == 26 and build_slots(32, 1) == 29 and build_slots(64, 4) == 58
    assert build_slots(2, 1) == 1 and build_slots(4, 2) == 2 and build_slots(1, 1) == 1
    # helpers: LEND x the equal share of the slots all the host's GPUs have, capped
    assert helpers_per_worker(32, 4, 2) == 7  # ceil(2 x 26 / 8)
    assert helpers_per_worker(64, 4, 2) == MAX_COMPILE_WORKERS
    assert helpers_per_worker(16, 8, 2) == 1 and helpers_per_worker(2, 1, 1) == 2
    for cores in (4, 8, 16, 32, 64, 128):
        for gpus in (1, 2, 4, 8):
            slots = build_slots(cores, gpus)
            per = helpers_per_worker(cores, gpus, 2)
            assert 1 <= slots < cores and 1 <= per <= MAX_COMPILE_WORKERS
            # every worker of the host together may ask for at least the slots (up to
            # the cap): none is left unused while some search still builds
            assert 2 * gpus * per >= min(slots, 2 * gpus * MAX_COMPILE_WORKERS)


FOUR_GPUS = [
    {"selector": f"0:{i}", "name": "gpu", "type": "GPU", "platform": "NVIDIA CUDA"}
    for i in range(4)
] + [{"selector": "1:0", "name": "cpu", "type": "CPU", "platform": "Portable Computing Language"}]


def test_local_workers_get_the_same_helpers_on_one_gpu_as_on_all_four() -> None:
    # 32 physical cores (64 hyperthreads), four GPUs: 26 build slots on all four
    one = worker_specs(["0:0"], None, FOUR_GPUS, 32)
    four = worker_specs(["NVIDIA"], None, FOUR_GPUS, 32)
    assert len(one) == 2 and len(four) == 8  # two workers per GPU
    helpers = {w["options"]["env"][COMPILE_WORKERS_ENV] for w in [*one.values(), *four.values()]}
    assert helpers == {"7"}  # twice an equal split of 26 slots over 8 workers, rounded up
    # the slots bound the builds of the GPUs in use: all four share 26, one has 29
    assert {w["options"]["env"][BUILD_SLOTS_ENV] for w in four.values()} == {"26"}
    assert {w["options"]["env"][BUILD_SLOTS_ENV] for w in one.values()} == {"29"}
    # 8 x 7 helpers on 26 slots: no more builds at once than the cores, yet a GPU
    # whose searches ended leaves its slots to the others
    assert 8 * 7 > 26 >= 2 * 7
    # a count given overrides the host's (0: builds not limited)
    assert {
        w["options"]["env"][BUILD_SLOTS_ENV]
        for w in worker_specs(["NVIDIA"], None, FOUR_GPUS, 32, slots=0).values()
    } == {"0"}
    bound = sorted(w["options"]["env"][BOUND_DEVICE] for w in four.values())
    assert bound == sorted([f"0:{i}" for i in range(4)] * 2)  # each GPU driven by two
    assert {r for w in four.values() for r in w["options"]["resources"]} == {"gtune-nvidia"}
    # a CPU device measures on the cores that build: one worker
    assert len(worker_specs(["Portable"], None, FOUR_GPUS, 64)) == 1
    assert len(worker_specs(["0:1"], 3, FOUR_GPUS, 64)) == 3


def test_a_local_worker_is_given_its_devices_limits_and_starts_no_query(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    gpu = h100_limits(name="gpu", platform_index=0, device_index=2)
    listed = {**gpu.to_dict(), "selector": "0:2"}
    (spec, *_) = worker_specs(["0:2"], 1, [listed], 16).values()
    env = spec["options"]["env"]
    monkeypatch.setenv(BOUND_LIMITS, env[BOUND_LIMITS])
    assert _bound_limits(env[BOUND_DEVICE]) == gpu
    # limits listed for another device, or none: the worker lists the devices itself
    assert _bound_limits("0:1") is None
    monkeypatch.setenv(BOUND_LIMITS, "{")
    assert _bound_limits("0:2") is None


def test_selectors_joined_by_commas_name_each_of_their_devices_once() -> None:
    from gtune.campaign.runner import matching

    two = matching("0:0,0:1", FOUR_GPUS)
    assert [d["selector"] for d in two] == ["0:0", "0:1"]
    assert [d["selector"] for d in matching("0:2, 0:2,NVIDIA", FOUR_GPUS)] == [
        "0:2",
        "0:0",
        "0:1",
        "0:3",
    ]
    assert matching("0:9,nothing", FOUR_GPUS) == []
    # the workers of all of them advertise one resource and share the tasks
    specs = worker_specs(["0:0,0:1"], None, FOUR_GPUS, 64)
    assert len(specs) == 4
    assert {r for w in specs.values() for r in w["options"]["resources"]} == {"gtune-0-0-0-1"}
    assert {w["options"]["env"][COMPILE_WORKERS_ENV] for w in specs.values()} == {"8"}

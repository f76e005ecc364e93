"""Campaign scheduling as pure logic: splitting, longest first, a simulated cluster."""

from __future__ import annotations

import random

from gtune.campaign.schedule import (
    Piece,
    Queue,
    compile_budget,
    device_workers,
    plan,
    simulate,
    split_budget,
    splittable,
)
from gtune.campaign.spec import CampaignTask

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

"""The technique forest as a scikit-learn estimator, and the paper's accuracies."""

from __future__ import annotations

import math
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn.base import clone
from sklearn.utils.estimator_checks import check_estimator

from gtune.loadpredict import (
    Dataset,
    DeviceTraits,
    StencilTraits,
    TechniqueForest,
    TrainingRow,
)
from gtune.training import leave_one_out, penalties


def test_passes_scikit_learn_estimator_checks() -> None:
    results = check_estimator(TechniqueForest(n_estimators=10), on_fail=None)
    failed = [
        (r["check_name"], str(r["exception"])[:200]) for r in results if r["status"] == "failed"
    ]
    assert results and not failed


def test_init_stores_parameters_only_and_fit_returns_self() -> None:
    est = TechniqueForest(n_estimators=7, random_state=3)
    assert est.get_params()["n_estimators"] == 7
    assert not hasattr(est, "classes_")
    X = np.array([[0.0], [1.0], [0.1], [0.9]])
    y = np.array(["a", "b", "a", "b"])
    assert est.fit(X, y) is est
    assert list(est.classes_) == ["a", "b"]
    assert clone(est).get_params() == est.get_params()


def test_same_seed_same_predictions() -> None:
    rng = np.random.default_rng(0)
    X = rng.random((40, 5))
    y = np.where(X[:, 0] + 0.3 * rng.random(40) > 0.6, "local", "global")
    a = TechniqueForest(random_state=5).fit(X, y).predict_proba(X)
    b = TechniqueForest(random_state=5).fit(X, y).predict_proba(X)
    assert np.array_equal(a, b)


def test_one_class_predicts_that_class() -> None:
    X = np.array([[1.0, 2.0], [3.0, 4.0]])
    est = TechniqueForest().fit(X, np.array(["global", "global"]))
    assert list(est.predict(X)) == ["global", "global"]
    assert est.predict_proba(X).shape == (2, 1)


def _traits(radius: int, pattern: str = "star") -> StencilTraits:
    return StencilTraits(
        points=6 * radius + 1,
        dims=3,
        density=0.3,
        unique_dim="none",
        radius_x=radius,
        radius_y=radius,
        radius_z=radius,
        pattern=pattern,
        intensity=1.0,
        itemsize=4,
        log2_nx=8.0,
        log2_ny=8.0,
        log2_nz=8.0,
    )


def _row(name: str, radius: int, times: dict[str, float]) -> TrainingRow:
    return TrainingRow(name, "dev-1", "hybrid", _traits(radius), times)


def test_penalty_is_oracle_over_the_technique() -> None:
    row = _row("k", 1, {"global": 2.0, "local": 1.0, "image": math.inf})
    assert row.label == "local"
    assert penalties(row) == {"global": 0.5, "local": 1.0, "image": 0.0}


def test_leave_one_out_learns_a_rule_of_the_radius() -> None:
    # small radii: global wins; large radii: local wins -- a rule the forest can learn.
    rows = []
    for i in range(24):
        radius = 1 + i % 5
        fast, slow = 1.0, 1.0 + radius
        times = {"global": fast, "local": slow} if radius <= 2 else {"global": slow, "local": fast}
        rows.append(_row(f"k{i}", radius, times))
    cv = leave_one_out(Dataset(rows), estimator=TechniqueForest(n_estimators=50))
    assert cv.absolute == 1.0
    assert cv.penalty_weighted == 1.0
    assert sum(map(sum, cv.confusion)) == len(rows)
    assert max(cv.importances, key=lambda k: cv.importances[k]).startswith(("radius", "points"))
    # the majority baseline is wrong on the minority and pays for it
    assert cv.majority == "local" and cv.majority_penalty_weighted < 1.0


def test_penalty_weighted_counts_what_a_mistake_costs() -> None:
    # every kernel the same features, labels split: the model must miss some; a miss
    # where the techniques are close costs little.
    rows = [_row(f"a{i}", 2, {"global": 1.0, "local": 1.01}) for i in range(6)]
    rows += [_row(f"b{i}", 2, {"global": 1.02, "local": 1.0}) for i in range(3)]
    cv = leave_one_out(Dataset(rows), estimator=TechniqueForest(n_estimators=20))
    assert cv.absolute < 1.0
    assert 0.97 < cv.penalty_weighted <= 1.0


def _searched(name: str, radius: int, times: dict[str, float]) -> TrainingRow:
    """A row whose finite-time techniques were searched (100 evaluations each)."""
    searched = {t: 100 for t, s in times.items() if math.isfinite(s)}
    return TrainingRow(name, "dev-1", "hybrid", _traits(radius), times, configs=searched)


def test_leave_one_out_predicts_only_techniques_the_kernel_has() -> None:
    # Stream wins every 3D kernel; a 2D kernel (no stream) looks like them, so the
    # forest's first answer for it is stream. `gtune run` would search the best technique
    # the kernel has, and so does leave-one-out: global, right, at no penalty.
    rows = [_searched(f"k{i}", 1, {"global": 2.0, "stream": 1.0}) for i in range(5)]
    rows += [_searched(f"wide{i}", 4, {"global": 1.0, "stream": 2.0}) for i in range(3)]
    flat = _searched("flat", 1, {"global": 1.0, "vec": 3.0, "stream": math.inf})
    assert flat.available == ("global", "vec")
    cv = leave_one_out(Dataset([*rows, flat]), estimator=TechniqueForest(n_estimators=20))
    pred = {p.kernel.split("@")[0]: p for p in cv.predictions}
    assert pred["flat"].predicted == "global" and pred["flat"].penalty == 1.0
    # the majority baseline falls back the same way: stream where it exists, else global
    assert cv.majority == "stream" and cv.ranking == ("stream", "global")
    assert pred["flat"].penalties["stream"] == 0.0
    assert cv.majority_penalty_weighted == pytest.approx((5 * 1.0 + 3 * 0.5 + 1.0) / 9)
    # a forest that knows none of the kernel's techniques leaves gtune run to the oracle
    alone = leave_one_out(Dataset([*rows[:5], flat]), estimator=TechniqueForest(n_estimators=5))
    assert {p.kernel.split("@")[0]: p.predicted for p in alone.predictions}["flat"] == "global"


def test_too_few_kernels_is_an_input_error() -> None:
    from gtune.exceptions import InputError

    with pytest.raises(InputError):
        leave_one_out(Dataset([_row("only", 1, {"global": 1.0, "local": 2.0})]))


finite = st.floats(min_value=1e-6, max_value=10.0, allow_nan=False)


@settings(max_examples=30, deadline=None)
@given(st.lists(st.tuples(st.integers(1, 5), finite, finite), min_size=1, max_size=8))
def test_csv_round_trip(
    tmp_path_factory: pytest.TempPathFactory, specs: list[tuple[int, float, float]]
) -> None:
    rows = [_row(f"k{i}", r, {"global": g, "local": loc}) for i, (r, g, loc) in enumerate(specs)]
    path = tmp_path_factory.mktemp("csv") / "d.csv"
    Dataset(rows).write_csv(path)
    back = Dataset.read_csv(path)
    assert {r.kernel: (r.traits, dict(r.times)) for r in back.rows} == {
        r.kernel: (r.traits, dict(r.times)) for r in rows
    }


def test_malformed_csv_names_file_and_line(tmp_path) -> None:
    from gtune.exceptions import InputError

    path = tmp_path / "d.csv"
    Dataset([_row("k", 1, {"global": 1.0, "local": 2.0})]).write_csv(path)
    text = path.read_text().splitlines()
    text[1] = text[1].replace(",star,", ",star,").replace(",3,", ",three,", 1)
    path.write_text("\n".join(text) + "\n")
    with pytest.raises(InputError) as err:
        Dataset.read_csv(path)
    assert "line 2" in str(err.value) and str(path) in str(err.value)


def _device(gpu: bool, units: int) -> DeviceTraits:
    return DeviceTraits(
        is_gpu=int(gpu),
        compute_units=units,
        log2_local_mem=16.0 if gpu else 19.0,
        log2_max_work_group=10.0 if gpu else 12.0,
        clock_mhz=1800 if gpu else 2400,
        log2_global_mem=36.0 if gpu else 33.0,
        image_support=1,
    )


def _device_rows(dev: str, traits: DeviceTraits, n: int) -> list[TrainingRow]:
    # on GPUs global wins, on CPUs vec wins: a rule only the device features carry
    rows = []
    for i in range(n):
        times = {"global": 1.0, "vec": 1.5} if traits.is_gpu else {"global": 1.5, "vec": 1.0}
        rows.append(TrainingRow(f"k{i}", dev, "hybrid", _traits(1 + i % 4), times, traits))
    return rows


def test_held_out_device_is_predicted_from_device_features() -> None:
    from gtune.training import held_out_devices

    rows = _device_rows("gpu-a", _device(True, 132), 8)
    rows += _device_rows("gpu-b", _device(True, 108), 8)
    rows += _device_rows("cpu", _device(False, 16), 8)
    rows += _device_rows("cpu-b", _device(False, 64), 8)
    est = TechniqueForest(n_estimators=30)
    with_dev = held_out_devices(Dataset(rows), estimator=est, with_device=True)
    assert set(with_dev) == {"gpu-a", "gpu-b", "cpu", "cpu-b"}
    assert with_dev["gpu-b"].absolute == 1.0 and with_dev["cpu"].absolute == 1.0
    assert all(p.kernel.endswith("@gpu-b") for p in with_dev["gpu-b"].predictions)
    # without device features the held-out device gets the others' majority, or worse
    blind = held_out_devices(Dataset(rows), estimator=est, with_device=False)
    assert min(cv.absolute for cv in blind.values()) < 1.0
    assert sum(map(sum, blind["cpu"].confusion)) == 8


def test_held_out_device_never_predicts_a_missing_technique() -> None:
    from gtune.training import held_out_devices

    # the GPU rows teach image (mostly) and vec; the CPU has no images
    gpu = [
        TrainingRow(f"g{i}", "gpu", "hybrid", _traits(i), {"image": 1.0 + (i == 3), "vec": 1.5})
        for i in range(1, 5)
    ]
    cpu = [
        TrainingRow(f"c{i}", "cpu", "hybrid", _traits(1), {"global": 1.0, "vec": 2.0})
        for i in range(4)
    ]
    cvs = held_out_devices(Dataset(gpu + cpu), with_device=False)
    assert {p.predicted for p in cvs["cpu"].predictions} == {"vec"}
    assert cvs["cpu"].penalty_weighted == 0.5
    assert cvs["cpu"].majority == "image"


def test_held_out_device_needs_two_devices() -> None:
    from gtune.exceptions import InputError
    from gtune.training import held_out_devices

    with pytest.raises(InputError, match="2 devices"):
        held_out_devices(Dataset(_device_rows("gpu", _device(True, 1), 3)))


def _radius_rule(n: int = 20) -> list[TrainingRow]:
    """Small radii: global wins by 2x; large: local wins; radius 3: a near-tie."""
    rows = []
    for i in range(n):
        radius = 1 + i % 5
        if radius == 3:
            times = {"global": 1.0, "local": 1.01}
        elif radius <= 2:
            times = {"global": 1.0, "local": 2.0}
        else:
            times = {"global": 2.0, "local": 1.0}
        rows.append(_row(f"k{i:02d}", radius, times))
    return rows


def test_margin_and_decisive_kernels_leave_near_ties_out() -> None:
    cv = leave_one_out(Dataset(_radius_rule()), estimator=TechniqueForest(n_estimators=20))
    margins = {p.kernel.split("@")[0]: p.margin for p in cv.predictions}
    assert margins["k00"] == pytest.approx(1.0)  # radius 1: runner-up 2x slower
    assert margins["k02"] == pytest.approx(0.01)  # radius 3: 1 % slower
    decisive = cv.decisive()
    assert len(decisive.predictions) == 16  # every radius but 3
    assert sum(map(sum, decisive.confusion)) == 16
    assert all(p.margin > 0.05 for p in decisive.predictions)
    # a forest that learned the rule is right where it matters; the majority is not
    assert decisive.absolute == 1.0 and decisive.penalty_weighted == 1.0
    assert decisive.majority_penalty_weighted < 1.0
    scores = cv.scores()
    assert scores["kernels"] == 20
    assert scores["majority_absolute_accuracy"] == pytest.approx(cv.majority_absolute)
    only = cv.only(["k00@dev-1", "k01@dev-1"])
    assert [p.kernel for p in only.predictions] == ["k00@dev-1", "k01@dev-1"]
    assert math.isinf(_searched("x", 1, {"global": 1.0, "stream": math.inf}).times["stream"])
    single = leave_one_out(
        Dataset([*_radius_rule(6), _searched("x", 1, {"global": 1.0, "stream": math.inf})]),
        estimator=TechniqueForest(n_estimators=5),
    )
    assert math.isinf({p.kernel: p.margin for p in single.predictions}["x@dev-1"])


def test_permutation_importance_finds_the_feature_that_decides() -> None:
    import dataclasses

    # only radius_x differs between kernels, and it decides the label
    rows = [
        dataclasses.replace(r, traits=dataclasses.replace(_traits(1), radius_x=r.traits.radius_x))
        for r in _radius_rule()
    ]
    cv = leave_one_out(Dataset(rows), estimator=TechniqueForest(n_estimators=30), permutation=True)
    lost = {name: w for name, (_, w) in cv.permutation.items()}
    assert cv.absolute == 1.0
    assert lost["radius_x"] > 0.1
    # the one-hot pattern and the shape are the same for every kernel: they cannot matter
    assert lost["pattern"] == 0.0 and lost["log2_nx"] == 0.0 and lost["points"] == 0.0
    assert "pattern=star" not in cv.permutation  # one-hot columns are one feature
    assert cv.to_dict()["permutation_importances"]["pattern"]["penalty_weighted"] == 0.0


def test_leave_one_out_does_not_depend_on_the_order_rows_came_in() -> None:
    rows = _radius_rule()
    rows[0] = _row("k00", 3, {"global": 1.0, "local": 1.3})  # something to get wrong
    a = leave_one_out(Dataset(rows), estimator=TechniqueForest(n_estimators=10))
    b = leave_one_out(Dataset(rows[::-1]), estimator=TechniqueForest(n_estimators=10))
    assert a.to_dict() == b.to_dict()


def test_a_trained_model_is_judged_on_the_kernels_it_never_saw(tmp_path) -> None:
    from gtune.loadpredict import ModelCard
    from gtune.training import held_out_of

    seen = _radius_rule(10)
    Dataset(seen).write_csv(tmp_path / "m.csv")
    card = ModelCard(
        name="m",
        heuristic="hybrid",
        device={"identity": "dev-1", "vendor": "v", "name": "n", "type": "GPU"},
        dataset="m.csv",
        estimator={"n_estimators": 20},
    )
    card.write(tmp_path)
    # a renamed twin of a training kernel (same features) counts as seen
    twin = _row("twin", 1, {"global": 1.0, "local": 2.0})
    wide = _row("wide", 7, {"global": 3.0, "local": 1.0})
    other = TrainingRow("elsewhere", "dev-2", "hybrid", _traits(8), {"global": 1.0, "local": 2.0})
    cv = held_out_of(ModelCard.read(tmp_path / "m.model.json"), Dataset([*seen, twin, wide, other]))
    assert [p.kernel for p in cv.predictions] == ["wide@dev-1"]
    assert cv.predictions[0].predicted == "local" and cv.absolute == 1.0
    assert cv.majority == "global"  # the model's own training majority
    from gtune.exceptions import InputError

    with pytest.raises(InputError, match="never saw"):
        held_out_of(ModelCard.read(tmp_path / "m.model.json"), Dataset(seen))


def test_2d_stencils_get_two_distinct_training_shapes(tmp_path: Path) -> None:
    from gtune.training.train import size_2d, suite_kernels

    assert size_2d((256, 256, 256)) == (4096, 4096)
    assert size_2d((1024, 1024, 32)) == (8192, 1024)
    kernels = suite_kernels(
        tmp_path, [(256, 256, 256), (1024, 1024, 32)], names=["jacobi2d", "heat3d"]
    )
    problems = {k.name: k.sizes for k in kernels}
    assert problems["jacobi2d@256x256x256"] != problems["jacobi2d@1024x1024x32"]
    assert problems["jacobi2d@1024x1024x32"] == {"NX": 8192, "NY": 1024}
    assert problems["heat3d@1024x1024x32"] == {"NX": 1024, "NY": 1024, "NZ": 32}
    # one size names the kernel alone, unless the size is asked for in the name (a
    # dataset grown one size per call keeps the flat rows apart from the 256^3 ones)
    flat = [(1024, 1024, 32)]
    alone = suite_kernels(tmp_path, flat, names=["heat3d"])
    named = suite_kernels(tmp_path, flat, names=["heat3d"], size_in_name=True)
    assert [k.name for k in alone] == ["heat3d"]
    assert [k.name for k in named] == ["heat3d@1024x1024x32"]
    assert named[0].sizes == alone[0].sizes == {"NX": 1024, "NY": 1024, "NZ": 32}


def test_a_time_limited_collection_labels_the_cheapest_kernels_first(tmp_path: Path) -> None:
    """Under --max-minutes the kernels go cheapest first (each technique's expected build
    cost on its stencil, summed), labelled ones and unlabelable ones first of all."""
    import argparse

    from gtune.campaign.schedule import seconds_per_config
    from gtune.commands.train import _order
    from gtune.training.train import cheapest_first, labelable_kernel, suite_kernels

    names = ["dense_3d_xyz_r2", "star_3d_xyz_r1", "dense_1d_x_r1", "star_2d_xy_r3"]
    kernels = suite_kernels(tmp_path, [(64, 64, 64)], names=names, real=False)
    techniques = ["global", "vec", "stream"]

    def cost(name: str) -> float:
        item = next(k for k in kernels if k.name == name)
        got = labelable_kernel(item, techniques)
        assert not isinstance(got, str)
        return sum(seconds_per_config(t, got[1]) for t in got[2])

    ordered = [k.name for k in cheapest_first(kernels, techniques, lambda n: False)]
    assert sorted(ordered) == sorted(k.name for k in kernels)
    assert [cost(n) for n in ordered] == sorted(cost(n) for n in ordered)
    assert ordered[-1].startswith("dense_3d_xyz_r2")  # 125 points: the dearest
    done = ordered[-1]
    assert cheapest_first(kernels, techniques, lambda n: n == done)[0].name == done
    ns = argparse.Namespace
    assert _order(ns(order=None, max_minutes=8.0)) == "cheapest"
    assert _order(ns(order=None, max_minutes=None)) == "longest"
    assert _order(ns(order="longest", max_minutes=8.0)) == "longest"


# Nested leave-one-out


def test_pair_picks_are_the_leave_one_out_on_the_diagonal_and_fits_without_both() -> None:
    from gtune.training import pair_picks

    rows = _radius_rule(8)
    est = TechniqueForest(n_estimators=10)
    picks = pair_picks(Dataset(list(reversed(rows))), est)  # row order does not matter
    cv = leave_one_out(Dataset(rows), estimator=est)
    assert [picks[i][i] for i in range(len(rows))] == [p.predicted for p in cv.predictions]
    # picks[1][4]: kernel 4 predicted by the forest fitted without kernels 1 and 4
    data = Dataset(rows)
    keep = [k for k in range(len(rows)) if k not in (1, 4)]
    model = clone(est).fit(data.X()[keep], data.y()[keep])
    proba = model.predict_proba(data.X()[4:5])[0]
    expected = str(model.classes_[int(np.argmax(proba))])
    assert picks[1][4] == expected
    constant = pair_picks(data, None)
    assert all(p in ("global", "local") for row in constant for p in row)


def test_nested_chooses_inside_each_fold_by_the_other_kernels() -> None:
    from gtune.training import nested_from_picks

    # four kernels; "right" always answers the label; "flaky" answers it only for
    # kernel 0 and when kernel 0 is held out also for every other kernel
    rows = [
        _row("k0", 1, {"global": 1.0, "local": 2.0}),
        _row("k1", 1, {"global": 1.0, "local": 1.25}),
        _row("k2", 4, {"global": 2.0, "local": 1.0}),
        _row("k3", 4, {"global": 1.6, "local": 1.0}),
    ]
    labels = [r.label for r in rows]
    other = {"global": "local", "local": "global"}
    right = [list(labels) for _ in rows]
    flaky = [
        [labels[j] if i == 0 or j == 0 else other[labels[j]] for j in range(4)] for i in range(4)
    ]
    nested = nested_from_picks(Dataset(rows), {"flaky": flaky, "right": right})
    assert nested.chosen == ["flaky", "right", "right", "right"]  # fold 0: a tie, order wins
    assert [p.predicted for p in nested.nested.predictions] == labels
    assert nested.nested.penalty_weighted == 1.0
    # inner scores of fold 1 (kernel 1 held out): flaky right on k0 only
    pw, ab = nested.inner[1]["flaky"]
    assert ab == pytest.approx(1 / 3) and pw == pytest.approx((1 + 0.5 + 1 / 1.6) / 3)
    # the plain rows are each candidate's ordinary leave-one-out (the diagonals)
    assert nested.plain["flaky"].absolute == pytest.approx(1 / 4)
    assert nested.to_dict()["chosen_counts"] == {"flaky": 1, "right": 3}


def test_nested_needs_three_kernels() -> None:
    from gtune.exceptions import InputError
    from gtune.training import nested_from_picks

    rows = [
        _row("a", 1, {"global": 1.0, "local": 2.0}),
        _row("b", 2, {"global": 2.0, "local": 1.0}),
    ]
    with pytest.raises(InputError):
        nested_from_picks(Dataset(rows), {"x": [["global"] * 2] * 2})


def test_close_call_is_the_two_fastest_within_the_margin() -> None:
    from gtune.loadpredict.dataset import close_call

    row = _row("k", 1, {"global": 1.08, "stream": 1.0, "vec": 1.5})
    assert close_call(row, 0.10) == ("stream", "global")
    assert close_call(row, 0.08) is None  # 8 % slower is not under 8 %
    assert close_call(_row("k", 1, {"global": 1.0, "stream": math.inf}), 10.0) is None
    assert close_call(_row("k", 1, {"global": 1.0}), 10.0) is None


def test_a_deeper_search_keeps_each_techniques_better_best_and_its_count() -> None:
    from gtune.loadpredict.dataset import deepened_row

    row = replace(
        _row("k", 3, {"global": 1.04, "stream": 1.0, "vec": 2.0}),
        configs={"global": 100, "stream": 100, "vec": 100},
    )
    runs = [
        {"technique": "global", "outcome": {"best_s": 0.85, "evaluations": 400}},
        {"technique": "stream", "outcome": {"best_s": 1.02, "evaluations": 230}},
    ]
    deeper = deepened_row(row, runs, 400)
    # global's deeper best overturns the label; stream keeps its first, better best
    assert deeper.times == {"global": 0.85, "stream": 1.0, "vec": 2.0}
    assert deeper.configs == {"global": 400, "stream": 230, "vec": 100}
    assert deeper.label == "global" and row.label == "stream" and deeper.deepened == 400


def test_the_deepened_column_is_written_only_where_a_row_was_deepened(tmp_path: Path) -> None:
    rows = [
        _row("a", 1, {"global": 1.0, "local": 1.05}),
        _row("b", 2, {"global": 2.0, "local": 9.0}),
    ]
    plain = tmp_path / "plain.csv"
    Dataset(rows).write_csv(plain)
    assert "deepened" not in plain.read_text().splitlines()[0]  # older files unchanged
    deeper = tmp_path / "deeper.csv"
    Dataset([replace(rows[0], deepened=300), rows[1]]).write_csv(deeper)
    key = {"key": lambda r: r.kernel}
    assert sorted(Dataset.read_csv(deeper).rows, **key) == [replace(rows[0], deepened=300), rows[1]]
    assert sorted(Dataset.read_csv(plain).rows, **key) == rows


def test_deepen_picks_close_calls_not_deepened_as_far_yet() -> None:
    from gtune.training.train import Deepen, TrainingKernel

    def row(name: str, times: dict[str, float], deepened: int = 0) -> TrainingRow:
        return replace(_row(name, 1, times), configs={t: 100 for t in times}, deepened=deepened)

    data = Dataset(
        [
            row("close", {"global": 1.0, "stream": 1.05}),
            row("far", {"global": 1.0, "stream": 1.5}),
            row("done", {"global": 1.0, "stream": 1.01}, deepened=400),
            row("shallower", {"global": 1.0, "stream": 1.01}, deepened=200),
        ]
    )
    kernels = [
        TrainingKernel(n, Path(f"{n}.cl"), {}) for n in ("close", "far", "done", "shallower", "new")
    ]
    calls = Deepen(400).calls(data, kernels, "dev-1", "hybrid")
    assert [(item.name, pair) for item, _, pair in calls] == [
        ("close", ("global", "stream")),
        ("shallower", ("global", "stream")),
    ]
    assert Deepen(400, margin=0.6).calls(data, kernels, "dev-2", "hybrid") == []
    assert [
        i.name for i, _, _ in Deepen(400, margin=0.6).calls(data, kernels, "dev-1", "hybrid")
    ] == [
        "close",
        "far",
        "shallower",
    ]
    # a first search as deep as the deeper one has nothing to add
    assert Deepen(100).calls(data, kernels, "dev-1", "hybrid") == []

"""Table 3 at scale (benchmarks/compare/run_compare.py): the kernel list, the merge's
arithmetic, resuming and packing (pure), and shards to merge end to end on PoCL."""

from __future__ import annotations

import importlib.util
import json
import math
import os
import subprocess
import sys
import tarfile
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from gtune.loadpredict.dataset import Dataset, TrainingRow
from gtune.loadpredict.features import StencilTraits
from gtune.loadpredict.models import shipped_model_dir
from gtune.stencils.generate import suite
from tests.conftest import load_script
from tests.rawdata import raw

ROOT = Path(__file__).resolve().parents[1]
SCRIPT = ROOT / "benchmarks" / "compare" / "run_compare.py"


rc = load_script(SCRIPT)


# ------------------------------------------------------------------ the kernel list


def test_kernel_list_covers_the_suite_as_stated() -> None:
    names = rc.read_kernel_list(rc.KERNELS_FILE)
    suite_names = {k.name for k in suite("garvey104")}
    assert len(names) >= 40 and len(set(names)) == len(names)
    assert set(names) <= suite_names
    full = rc.coverage(sorted(suite_names))
    assert rc.coverage(names) == full
    # one 4-GPU run (about 12 kernels) already covers every value of each trait
    assert rc.coverage(names[:12]) == full
    assert full["radius"] == {f"r{i}" for i in range(6)} and len(full["orientation"]) == 7


def test_kernel_list_holds_every_kernel_the_shipped_model_never_saw() -> None:
    csv = shipped_model_dir() / "nvidia-h100-80gb-hbm3-hybrid.csv"
    trained = {line.split("@", 1)[0] for line in csv.read_text().splitlines()[1:] if line}
    held_out = {k.name for k in suite("garvey104")} - trained
    names = rc.read_kernel_list(rc.KERNELS_FILE)
    assert held_out and held_out <= set(names)
    # the 3D stencils of more than 100 points (builds of seconds) come last
    heavy = {"dense_3d_xyz_r2", "dense_3d_xyz_r3", "dense_3d_xyz_r4", "dense_3d_xyz_r5"}
    heavy |= {"diamond_3d_xyz_r5", "nocorners_3d_xyz_r4", "nocorners_3d_xyz_r5"}
    assert set(names[-len(heavy) :]) == heavy


def test_deal_is_round_robin_in_order() -> None:
    assert rc.deal(list("abcdefg"), 3) == [["a", "d", "g"], ["b", "e"], ["c", "f"]]
    assert rc.deal(["a"], 4) == [["a"], [], [], []]


def test_prediction_text() -> None:
    assert rc.prediction_text("predicted stream (p=0.83, model m)") == "stream (p=0.83)"
    note = "model m unsure (p=0.55 < 0.60): searched its two most likely, vec and global"
    assert rc.prediction_text(note) == "vec or global (p=0.55)"
    assert rc.prediction_text("no load-predictor model for hybrid on X") == "every technique"


# ------------------------------------------------------------------ merge arithmetic


def _cell(strategy: str, t: float, configs: int, remeasured: float | None = None) -> dict[str, Any]:
    return {
        "kernel": "",
        "strategy": strategy,
        "best_s": t,
        "remeasured_s": remeasured,
        "evaluations": configs,
        "compile_s": configs * 0.1,
        "run_s": configs * 0.001,
        "wall_s": 1.0,
    }


def _record(name: str, times: dict[str, tuple[float, int]], **extra: Any) -> dict[str, Any]:
    cells = [_cell(s, t, n) for s, (t, n) in times.items()]
    for c in cells:
        c["kernel"] = name
    return {"kernel": name, "device": "GPU-A", "cells": cells, "in_model_dataset": False, **extra}


def test_row_speedups_are_over_random_and_over_expert() -> None:
    rec = _record(
        "star_3d_xyz_r4",
        {"hybrid": (75e-6, 200), "expert": (80e-6, 1000), "random": (100e-6, 1000)},
    )
    row = rc.kernel_row(rec, ["hybrid", "expert", "random"])
    h = row["strategies"]["hybrid"]
    assert h["over_random"] == pytest.approx(100 / 75)
    assert h["over_expert"] == pytest.approx(80 / 75)
    assert row["strategies"]["random"]["over_random"] == pytest.approx(1.0)
    assert row["hybrid_configs_share_of_expert"] == pytest.approx(0.2)
    assert row["winners"] == ["hybrid"]
    assert (row["pattern"], row["dims"], row["orientation"], row["radius"]) == (
        "star",
        "3d",
        "xyz",
        "r4",
    )


def test_row_ranks_by_the_side_by_side_time() -> None:
    rec = _record("dense_1d_x_r0", {"hybrid": (50e-6, 10), "random": (60e-6, 100)})
    rec["cells"][0]["remeasured_s"] = 70e-6  # slower when measured beside the others
    rec["cells"][1]["remeasured_s"] = 56e-6
    row = rc.kernel_row(rec, ["hybrid", "random"])
    assert row["strategies"]["hybrid"]["over_random"] == pytest.approx(56 / 70)
    assert row["winners"] == ["random"]


def test_geometric_means_and_the_target() -> None:
    strategies = ["hybrid", "expert", "random"]
    a = _record("a_3d_x_r1", {"hybrid": (50.0, 100), "expert": (60.0, 1000), "random": (100.0, 1)})
    b = _record("b_3d_x_r1", {"hybrid": (80.0, 300), "expert": (50.0, 1000), "random": (100.0, 1)})
    rows = [rc.kernel_row(r, strategies) for r in (a, b)]
    s = rc.summary(rows, strategies)
    hybrid = math.sqrt((100 / 50) * (100 / 80))
    expert = math.sqrt((100 / 60) * (100 / 50))
    assert s["strategies"]["hybrid"]["over_random"] == pytest.approx(hybrid)
    assert s["strategies"]["expert"]["over_random"] == pytest.approx(expert)
    assert s["strategies"]["hybrid"]["over_expert"] == pytest.approx(math.sqrt(60 / 50 * 50 / 80))
    assert s["strategies"]["hybrid"]["configs"] == pytest.approx(200)
    assert s["strategies"]["hybrid"]["best_count"] == 1
    t = s["target"]
    assert t["speedup_ratio"] == pytest.approx(hybrid / expert)
    assert t["configs_share"] == pytest.approx(0.2)
    assert t["met"] is False  # 0.91x: slower than expert at a fifth of the configurations
    # faster by 6 % on both kernels at the same cost: met
    for r in (a, b):
        r["cells"][0]["best_s"] = r["cells"][1]["best_s"] / 1.06
    rows = [rc.kernel_row(r, strategies) for r in (a, b)]
    t = rc.target_check(rows)
    assert t["speedup_ratio"] == pytest.approx(1.06) and t["met"] is True
    # ... but not with more than a quarter of expert's configurations
    a["cells"][0]["evaluations"] = 900
    assert rc.target_check([rc.kernel_row(r, strategies) for r in (a, b)])["met"] is False


def test_merge_keeps_one_device_and_splits_held_out_kernels() -> None:
    strategies = ["hybrid", "expert", "random"]
    times = {"hybrid": (1.0, 10), "expert": (1.0, 100), "random": (2.0, 1000)}
    recs = [
        _record("a_3d_x_r1", times, order=1, in_model_dataset=True),
        _record("b_3d_x_r1", times, order=0),
        {**_record("c_3d_x_r1", times), "device": "GPU-B"},
    ]
    doc = rc.merge(recs, strategies)
    assert doc["device"] == "GPU-A"
    assert [r["kernel"] for r in doc["rows"]] == ["b_3d_x_r1", "a_3d_x_r1"]  # list order
    assert doc["held_out"]["kernels"] == 1 and doc["in_model_dataset"]["kernels"] == 1
    assert any("GPU-B" in n for n in doc["notes"])
    assert rc.merge(recs, strategies, "GPU-B")["summary"]["kernels"] == 1
    text = rc.markdown(doc)
    assert "| b_3d_x_r1 | held out |" in text and "**not met**: 2.000 / 2.000" in text
    empty = rc.merge([], strategies)
    assert empty["rows"] == [] and empty["summary"]["target"]["met"] is None


# ------------------------------------------------------------------ resume and pack


def test_pack_then_resume_round_trip(tmp_path: Path) -> None:
    state = tmp_path / "state"
    (state / "stores").mkdir(parents=True)
    rec = _record("a_3d_x_r1", {"hybrid": (1.0, 1), "random": (1.0, 1)})
    rc.write_record(state, rec)
    for name in ("a_3d_x_r1", "b_3d_x_r1", "old_3d_x_r1"):  # old: an earlier session's
        (state / "stores" / f"{name}.db").write_bytes(name.encode() * 100)
    (state / "shard-0.log").write_text("log\n")
    out = tmp_path / "out"
    out.mkdir()
    packed = rc.pack(state, out, ["a_3d_x_r1", "b_3d_x_r1", "never_3d_x_r1"], "GPU-A")
    assert sorted(p.name for p in packed) == ["partial.tar.gz", "records.tar.gz", "stores.tar.gz"]
    with tarfile.open(out / "partial.tar.gz") as tar:
        # begun, not finished, now or before
        assert tar.getnames() == ["stores/b_3d_x_r1.db", "stores/old_3d_x_r1.db"]
    with tarfile.open(out / "stores.tar.gz") as tar:
        assert tar.getnames() == ["stores/a_3d_x_r1.db"]
    # a later session starts from the archives
    later = tmp_path / "later"
    rc.seed_state(later, [out / "records.tar.gz", out / "partial.tar.gz"])
    assert [r["kernel"] for r in rc.read_records(later / "records")] == ["a_3d_x_r1"]
    assert (later / "stores" / "b_3d_x_r1.db").read_bytes() == b"b_3d_x_r1" * 100
    # or from a committed folder with compressed stores; what is there already is kept
    import gzip

    folder = tmp_path / "committed"
    (folder / "stores").mkdir(parents=True)
    (folder / "stores" / "c_3d_x_r1.db.gz").write_bytes(gzip.compress(b"c"))
    (folder / "stores" / "b_3d_x_r1.db.gz").write_bytes(gzip.compress(b"other"))
    rc.seed_state(later, [folder])
    assert (later / "stores" / "c_3d_x_r1.db").read_bytes() == b"c"
    assert (later / "stores" / "b_3d_x_r1.db").read_bytes() == b"b_3d_x_r1" * 100


def test_unknown_kernel_in_the_list_is_refused(tmp_path: Path) -> None:
    bad = tmp_path / "k.txt"
    bad.write_text("star_3d_xyz_r1\nstar_9d_q_r1  # no such kernel\n")
    proc = subprocess.run(
        [sys.executable, str(SCRIPT), str(tmp_path / "out"), "--kernels-file", str(bad)],
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        timeout=120,
    )
    assert proc.returncode == 2
    assert "star_9d_q_r1" in proc.stderr and str(bad) in proc.stderr
    assert "Traceback" not in proc.stderr


# ------------------------------------------------------------------ end to end on PoCL


@pytest.mark.bench
@pytest.mark.opencl
@pytest.mark.slow
def test_two_shards_then_merge_on_pocl(tmp_path: Path) -> None:
    out = tmp_path / "t3"
    tiny = ["--size", "16x16x8", "--budget", "2", "--random-n", "2"]
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    cmd = [sys.executable, str(SCRIPT), str(out), "--shards", "2", "--deadline", "240"]
    cmd += ["--kernel", "star_2d_xy_r1", "--kernel", "dense_1d_x_r1", *tiny]
    proc = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=600)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    doc = json.loads((out / "table3.json").read_text())
    assert [r["kernel"] for r in doc["rows"]] == ["star_2d_xy_r1", "dense_1d_x_r1"]
    assert {r["shard"] for r in doc["rows"]} == {0, 1}  # one kernel on each shard
    for row in doc["rows"]:
        assert set(row["strategies"]) == {"hybrid", "oracle", "expert", "random"}
        assert row["remeasured_side_by_side"]
        assert row["strategies"]["random"]["over_random"] == pytest.approx(1.0)
    assert (out / "table3.md").read_text().startswith("# Table 3 on ")
    assert (out / "speedups.png").stat().st_size > 0
    with tarfile.open(out / "records.tar.gz") as tar:
        names = tar.getnames()
    assert "records/star_2d_xy_r1.json" in names and "shard-1.log" in names
    # a later session with the same list measures nothing and merges the same rows
    # (in this process: no interpreter to start for it)
    again = tmp_path / "again"
    resume = ["--merge-only", "--resume", str(out / "records.tar.gz")]
    assert rc.main([str(again), *resume, *tiny]) == 0
    merged = json.loads((again / "table3.json").read_text())
    assert merged["rows"] == doc["rows"]


def _rounds_module() -> ModuleType:
    path = SCRIPT.with_name("rounds.py")
    sys.path.insert(0, str(path.parent))
    spec = importlib.util.spec_from_file_location("compare_rounds", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_rounds_split_replays_the_timing_rule() -> None:
    from gtune.measure.stats import TimingPolicy

    rounds = _rounds_module()
    policy = TimingPolicy()
    quiet = [1e-5, 1e-5, 1e-5]
    noisy = [1e-5, 2e-5] * 12 + [1.5e-5]  # never converges: capped at max_runs
    assert rounds.split_rounds(quiet + noisy + quiet, policy) == [3, policy.max_runs, 3]
    assert rounds.split_rounds([1e-5, 1e-5], policy) is None  # not a whole measurement


def test_rounds_rerank_uses_the_balanced_median() -> None:
    from gtune.measure.stats import TimingPolicy

    rounds = _rounds_module()
    quiet, slow = [1.0e-5, 1.01e-5, 0.99e-5], [2.0e-5, 1.5e-5] * 12 + [1.7e-5]
    cfg = {"WX": 8}
    record = {
        "kernel": "k",
        "cells": [{"strategy": "hybrid", "best_config": cfg, "best_s": 1.0e-5}],
        "confirmation": {"entries": [{"config": cfg, "times_s": quiet + quiet + slow}]},
    }
    new, lines = rounds.rerank(record, TimingPolicy())
    cell = new["cells"][0]
    assert cell["round_sizes"] == [3, 3, 25]
    assert cell["remeasured_s"] <= max(quiet) and len(lines) == 1


@pytest.mark.slow
def test_table3_labels_reproduce_the_committed_rows(tmp_path: Path) -> None:
    """The load-predictor rows made from Table 3's stores are what the script makes now,
    and the kernels also in the collection keep their collected rows."""
    results = ROOT / "benchmarks" / "results"
    stores = raw(results / "compare" / "table3-scale" / "stores.tar.xz")  # 20 MB, out of tree
    committed = results / "predict" / "h100-table3"
    before = results / "predict" / "h100-scale" / "nvidia-h100-80gb-hbm3-hybrid.csv"
    done = subprocess.run(
        [sys.executable, str(ROOT / "benchmarks" / "predict" / "table3_labels.py"),
         str(stores), str(before), str(tmp_path)],
        capture_output=True, text=True, env={**os.environ, "PYTHONPATH": str(ROOT)},
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert (tmp_path / "table3-rows.csv").read_text() == (committed / "table3-rows.csv").read_text()
    grown = (tmp_path / before.name).read_text().splitlines()
    old = before.read_text().splitlines()
    added = len((committed / "table3-rows.csv").read_text().splitlines()) - 1
    assert added > 0 and set(old) <= set(grown) and len(grown) == len(old) + added


@pytest.mark.slow
def test_table3_labels_deeper_make_the_shipped_dataset(tmp_path: Path) -> None:
    """With ``--deeper`` the stores' rows replace the collected rows of the kernels in
    both, and the result is the dataset the shipped H100 model is fitted on."""
    results = ROOT / "benchmarks" / "results"
    stores = raw(results / "compare" / "table3-scale" / "stores.tar.xz")  # 20 MB, out of tree
    before = results / "predict" / "h100-scale" / "nvidia-h100-80gb-hbm3-hybrid.csv"
    shipped = ROOT / "gtune" / "data" / "models" / before.name
    done = subprocess.run(
        [sys.executable, str(ROOT / "benchmarks" / "predict" / "table3_labels.py"),
         str(stores), str(before), str(tmp_path), "--deeper"],
        capture_output=True, text=True, env={**os.environ, "PYTHONPATH": str(ROOT)},
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    grown = (tmp_path / before.name).read_text()
    assert grown == shipped.read_text()
    old = {line.split(",")[0]: line for line in before.read_text().splitlines()[1:]}
    new = {line.split(",")[0]: line for line in grown.splitlines()[1:]}
    replaced = [k for k in old if new[k] != old[k]]
    added = len((tmp_path / "table3-rows.csv").read_text().splitlines()) - 1
    assert len(new) == len(old) + added and replaced, "no collected row was replaced"
    assert (
        f"{len(replaced)} collected rows replaced by or merged with"
        in (tmp_path / "labels.md").read_text()
    )
    # a collected row of the kernel as it is now is never replaced by an older version's
    rows = {r.kernel: r for r in Dataset.read_csv(tmp_path / before.name).rows}
    collected = {r.kernel: r for r in Dataset.read_csv(before).rows}
    for name in replaced:
        assert rows[name].identity or not collected[name].identity, name


def _row(times: dict[str, float], identity: str, configs: int = 100) -> Any:
    traits = StencilTraits(7, 3, 7 / 27, "none", 1, 1, 1, "star", 1.0, 4, 8.0, 8.0, 8.0)
    return TrainingRow(
        "k@256x256x256", "dev", "hybrid", traits, times, None,
        {t: configs for t in times}, identity=identity,
    )  # fmt: skip


def test_table3_rows_merge_by_kernel_version() -> None:
    """``--deeper``: of one version each technique's best of the two searches; of two
    versions the collected row (the collection ran after the stores were recorded); a
    collected row without its version gives way to the store's."""
    t3 = load_script(ROOT / "benchmarks" / "predict" / "table3_labels.py")
    store = _row({"global": 2.0, "vec": 3.0, "stream": 1.5}, "aa", 900)
    collected = _row({"global": 1.8, "vec": 1.0, "stream": 1.6}, "aa")
    merged, how = t3.by_version(store, collected)
    assert how == "merged" and merged.label == "vec"
    assert dict(merged.times) == {"global": 1.8, "stream": 1.5, "vec": 1.0}
    assert merged.configs["vec"] == 1000 and merged.identity == "aa"
    older_store = _row({"global": 2.0, "vec": 3.0, "stream": 0.5}, "", 900)
    kept, how = t3.by_version(older_store, collected)
    assert how == "" and kept is collected
    newer = _row({"global": 1.0, "vec": 3.0, "stream": 1.6}, "bb")
    row, how = t3.by_version(store, newer)
    assert how == "" and row is newer
    stale = _row(dict(newer.times), "")
    row, how = t3.by_version(store, stale)
    assert how == "replaced" and row is store
    row, how = t3.by_version(older_store, stale)
    assert how == "replaced" and row is older_store

"""benchmarks/compare/loo_table3.py: the leave-one-out model leaves every shape of the
kernel out, the replay retraces a search on a store made here and reports (never
invents) a configuration the store lacks, and the speedups follow table3.json's rule."""

from __future__ import annotations

import json
import math
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from gtune.api import as_kernel
from gtune.device import DeviceLimits
from gtune.kernel import TunableKernel, canonical_config
from gtune.loadpredict.dataset import Dataset
from gtune.loadpredict.models import ModelCard
from gtune.loadpredict.policy import choose_techniques
from gtune.measure import Result, Status
from gtune.space import EnumeratedSpace, solve_space, technique_space
from gtune.stencils.generate import generate, parse_size, suite
from gtune.store import open_store
from tests.conftest import load_script

ROOT = Path(__file__).resolve().parents[1]
SCRIPT = ROOT / "benchmarks" / "compare" / "loo_table3.py"
KERNEL = "star_3d_xyz_r1"


lt = load_script(SCRIPT)


@pytest.fixture(scope="module")
def device() -> DeviceLimits:
    return DeviceLimits.from_dict(json.loads(lt.DEVICE.read_text()))


@pytest.fixture(scope="module")
def kernel(tmp_path_factory: pytest.TempPathFactory) -> TunableKernel:
    folder = tmp_path_factory.mktemp("k")
    # at 32^3: technique spaces of hundreds of configurations, not thousands (every
    # recording and replay below goes over a whole one)
    generate([k for k in suite("garvey104") if k.name == KERNEL], folder, size=parse_size("32"))
    return as_kernel(str(folder / f"{KERNEL}.cl"), None)


@pytest.fixture(scope="module")
def space(kernel: TunableKernel, device: DeviceLimits) -> EnumeratedSpace:
    return solve_space(kernel, device).space


def _recording(kernel: TunableKernel, space: EnumeratedSpace, technique: str) -> list[Result]:
    """A made-up store: every configuration of ``technique`` with a time that depends
    on its parameters (a smooth bowl, so the search has somewhere to go)."""
    out = []
    for config in technique_space(space, kernel, technique).enumerate():
        t = 5e-5 * (1.0 + sum((math.log2(max(1, v)) - 2.0) ** 2 for v in config.values()) / 50)
        out.append(Result(dict(config), Status.OK, times_s=(t, t, t)))
    return out


def _record(replayed: Any, technique: str, expert: Result) -> dict[str, Any]:
    """A row as run_compare writes it, its hybrid the search ``replayed`` made, expert
    search's winner ``expert``."""
    t = replayed.best_s

    def cell(name: str, factor: float, remeasure: bool = True) -> dict[str, Any]:
        return {
            "strategy": name,
            "best_s": t * factor,
            "remeasured_s": t * factor * 1.01 if remeasure else None,
            "evaluations": replayed.configs if name == "hybrid" else 1000,
            "best_config": {"hybrid": replayed.best_config, "expert": expert.config}.get(
                name, {"X": 1}
            ),
            "technique": technique,
        }

    return {
        "kernel": KERNEL,
        "device_identity": "h100",
        "in_model_dataset": False,
        "prediction": f"{technique} (p=0.90)",
        "cells": [
            cell("hybrid", 1.0),
            cell("oracle", 0.9),
            cell("expert", 0.95),
            cell("random", 1.1),
        ],
        "reports": {
            "hybrid": {"runs": [{"technique": technique}]},
            "oracle": {"runs": []},
        },
    }


def test_replay_retraces_and_reports_what_the_store_lacks(
    kernel: TunableKernel, device: DeviceLimits, space: EnumeratedSpace
) -> None:
    results = _recording(kernel, space, "stream")
    first = lt.replay_hybrid(kernel, device, results, ["stream"], space=space)
    assert first.unrecorded == [] and first.best_config is not None
    assert first.best_s == min(r.objective for r in results if r.config == first.best_config)
    assert first.configs == first.runs[0]["configs"] > 1
    again = lt.replay_hybrid(kernel, device, results, ["stream"], space=space)
    assert (again.best_config, again.configs) == (first.best_config, first.configs)
    # the store without the winner (and any configuration that tied with it): asked
    # for, reported, never the best
    lacking = [r for r in results if r.config != first.best_config and r.objective > first.best_s]
    gap = lt.replay_hybrid(kernel, device, lacking, ["stream"], space=space)
    assert canonical_config(first.best_config) in {canonical_config(c) for c in gap.unrecorded}
    assert gap.best_config != first.best_config
    assert gap.best_s is not None and gap.best_s > first.best_s
    # the bound: without a miss the best; with one, what was asked up to the end of the
    # step that asked for it, so never faster than what the replay found
    assert first.bound_s == first.best_s
    assert gap.bound_s is not None and gap.bound_s >= gap.best_s


def test_bound_stops_at_the_end_of_the_step_with_the_first_miss() -> None:
    times = {canonical_config({"A": a}): float(a) for a in (1, 3, 4, 5, 6)}
    calls = [{"A": a} for a in (6, 5, 2, 4, 3, 1)]
    # steps of 1, 3 and 2 configurations; A 2 is missing in the second step, whose
    # other configurations (5, 4) the device measures too; A 3 and 1 come after it
    assert lt.before_first_miss(calls, times, [1, 3, 2]) == 4.0
    assert lt.before_first_miss(calls, times, [1] * 6) == 5.0
    assert lt.before_first_miss(calls[:2], times, [2]) == 5.0
    assert lt.before_first_miss([{"A": 2}], times, [1]) is None


def test_loo_card_leaves_every_shape_of_the_kernel_out(tmp_path: Path) -> None:
    card = ModelCard.read(lt.CARD)
    assert card.path is not None
    data = Dataset.read_csv(card.path.parent / card.dataset)
    mine = [r for r in data.rows if r.kernel.startswith(f"{KERNEL}@")]
    assert mine
    other = Dataset([*data.rows, *(replace(r, kernel=f"{KERNEL}@64x64x64") for r in mine)])
    held = lt.loo_card(card, other, KERNEL, tmp_path / "m")
    assert held.path is not None and held.path.parent == tmp_path / "m"
    kept = Dataset.read_csv(tmp_path / "m" / card.dataset)
    assert not [r for r in kept.rows if r.kernel.split("@")[0] == KERNEL]
    assert len(kept) == len(data) - len(mine)
    assert (held.estimator, held.confidence) == (card.estimator, card.confidence)


def test_row_ranks_by_side_by_side_time_only_for_a_remeasured_winner(
    kernel: TunableKernel, device: DeviceLimits, space: EnumeratedSpace, tmp_path: Path
) -> None:
    card = ModelCard.read(lt.CARD)
    assert card.path is not None
    held = lt.loo_card(card, Dataset.read_csv(card.path.parent / card.dataset), KERNEL, tmp_path)
    chosen = choose_techniques(kernel, device, "hybrid", card=held).techniques
    assert chosen and set(chosen) <= set(kernel.techniques)
    old = next(t for t in kernel.techniques if t not in chosen)  # the old model chose another
    results = [r for t in {old, *chosen} for r in _recording(kernel, space, t)]
    replayed = lt.replay_hybrid(kernel, device, results, [old], space=space)
    fastest = min(results, key=lambda r: r.objective)
    record = _record(replayed, old, fastest)
    row = lt.kernel_row(record, kernel, device, results, held, space)
    cells = {c["strategy"]: c for c in record["cells"]}
    assert row["old"]["replay"]["retraced"] and row["old"]["replay"]["unrecorded"] == 0
    assert row["old"]["over_random"] == pytest.approx(
        cells["random"]["remeasured_s"] / cells["hybrid"]["remeasured_s"]
    )
    loo = row["loo"]
    assert loo["techniques"] == list(chosen) and not loo["same_as_old"]
    assert loo["unrecorded"] == 0 and loo["best_s"] is not None
    # its winner was re-measured by no strategy of the row: its search-time median
    assert (loo["time_kind"], loo["time_s"]) == ("search-time median", loo["best_s"])
    gap = loo["versus_expert"]
    assert gap["expert_best_search_s"] == fastest.objective
    assert (gap["differs"] == {}) == (loo["best_config"] == fastest.config)
    assert gap["expert_technique"] in kernel.techniques
    assert loo["over_expert"] == pytest.approx(cells["expert"]["remeasured_s"] / loo["best_s"])
    s = lt.summarize([row, row])
    assert s["loo"]["over_random"] == pytest.approx(loo["over_random"])
    assert s["loo"]["ratio_to_expert"] == pytest.approx(
        loo["over_random"] / row["expert"]["over_random"]
    )
    assert s["loo"]["configs_share"] == pytest.approx(loo["configs"] / 1000)
    assert "LOO prediction" in lt.markdown({"summary": s, "held_out": s, "rows": [row]})


def test_ranked_time_prefers_the_side_by_side_time_of_that_configuration() -> None:
    side = {canonical_config({"A": 1}): 2.0}
    assert lt.ranked_time({"A": 1}, 1.5, side) == (2.0, "side by side")
    assert lt.ranked_time({"A": 2}, 1.5, side) == (1.5, "search-time median")
    assert lt.ranked_time(None, None, side) == (None, "none")


def _write_inputs(
    tmp: Path, kernel: TunableKernel, device: DeviceLimits, space: EnumeratedSpace
) -> tuple[Path, Path, list[Result]]:
    """A records folder and a stores folder as run_compare leaves them, for one kernel:
    its store holds what the hybrid asks for on stream and on the leave-one-out model's
    techniques, under the kernel's identity, and a stale identity (an earlier source)
    whose times must not be served."""
    card = ModelCard.read(lt.CARD)
    assert card.path is not None
    held = lt.loo_card(card, Dataset.read_csv(card.path.parent / card.dataset), KERNEL, tmp / "m")
    chosen = choose_techniques(kernel, device, "hybrid", card=held).techniques
    full = [r for t in {"stream", *chosen} for r in _recording(kernel, space, t)]
    asked: set[str] = set()
    for techniques in (["stream"], chosen):
        asked |= lt.replay_hybrid(kernel, device, full, techniques, space=space).asked
    results = [r for r in full if canonical_config(r.config) in asked]
    (tmp / "stores").mkdir()
    (tmp / "records").mkdir()
    store = open_store(tmp / "stores" / f"{KERNEL}.db")
    try:
        for r in results:
            stale = replace(r, times_s=(1e-6, 1e-6, 1e-6))
            store.add(stale, device=device.identity, kernel_id="stale", problem=kernel.sizes)
        for r in results:
            store.add(r, device=device.identity, kernel_id="current", problem=kernel.sizes)
    finally:
        store.close()
    replayed = lt.replay_hybrid(kernel, device, results, ["stream"], space=space)
    record = _record(replayed, "stream", min(results, key=lambda r: r.objective))
    record["device_identity"] = device.identity
    record["size"] = "x".join(str(v) for v in kernel.sizes.values())
    (tmp / "records" / f"{KERNEL}.json").write_text(json.dumps(record))
    return tmp / "records", tmp / "stores", results


def test_main_replays_a_row_end_to_end_and_refuses_bad_input(
    kernel: TunableKernel,
    device: DeviceLimits,
    space: EnumeratedSpace,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    records, stores, results = _write_inputs(tmp_path, kernel, device, space)
    assert len(lt.store_results(stores / f"{KERNEL}.db", device.identity)) == len(results)
    card = ModelCard.read(lt.CARD)
    assert card.path is not None
    args = ["--records", str(records), "--stores", str(stores)]
    args += ["--dataset", str(card.path.parent / card.dataset)]
    assert lt.main([str(tmp_path / "out"), *args]) == 0
    doc = json.loads((tmp_path / "out" / "loo.json").read_text())
    (row,) = doc["rows"]
    assert row["old"]["replay"]["retraced"] and row["loo"]["unrecorded"] == 0
    assert row["loo"]["best_s"] >= min(r.objective for r in results)  # never a stale time
    assert doc["summary"]["kernels"] == 1 and doc["held_out"]["kernels"] == 1
    assert (tmp_path / "out" / "loo.md").read_text().count(KERNEL) == 1
    # a kernel without a record, and a record without a store: one message, status 2
    assert lt.main([str(tmp_path / "o2"), *args, "--kernel", "nosuch"]) == 2
    assert "nosuch" in capsys.readouterr().err
    (stores / f"{KERNEL}.db").unlink()
    assert lt.main([str(tmp_path / "o3"), *args]) == 2
    err = capsys.readouterr().err
    assert f"{KERNEL}.db" in err and "Traceback" not in err

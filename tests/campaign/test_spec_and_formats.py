"""Campaign files, task expansion, T4 export and Kernel Tuner cache import (pure)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from gtune.campaign import CampaignTask, expand, parse_campaign
from gtune.campaign.formats import export_t4, import_kt, kt_results
from gtune.exceptions import InputError
from gtune.kernel import load_kernel
from gtune.measure.result import Result, Status
from gtune.store import SQLiteStore
from tests.conftest import ROOT

HEAT = str(ROOT / "stencils" / "heat3d.cl")


def test_expansion_is_the_full_product_in_a_stable_order(tmp_path: Path) -> None:
    spec = parse_campaign(
        {
            "kernels": [HEAT, {"suite": "garvey104", "names": ["star_3d*", "dense_1d_x_r1"]}],
            "sizes": ["16x16x16", "32x16x8"],
            "devices": ["0:0", "cpu"],
            "strategies": ["hybrid", "random"],
        },
        source="c.yaml",
        base_dir=tmp_path,
    )
    tasks = expand(spec, tmp_path / "k")
    kernels = {t.label for t in tasks}
    assert "heat3d" in kernels and "dense_1d_x_r1" in kernels
    assert len(tasks) == len(kernels) * 2 * 2 * 2
    assert len({t.key for t in tasks}) == len(tasks)
    assert [t.key for t in expand(spec, tmp_path / "k")] == [t.key for t in tasks]
    one = tasks[0]
    assert CampaignTask.from_dict(json.loads(json.dumps(one.to_dict()))) == one


@pytest.mark.parametrize(
    "raw, needle",
    [
        ([], "mapping"),
        ({"kernels": []}, "kernels"),
        ({"kernels": [HEAT], "colour": 1}, "colour"),
        ({"kernels": [HEAT], "sizes": ["big"]}, "bad size"),
        ({"kernels": [HEAT], "budget": "nans"}, "budget"),
        ({"kernels": [HEAT], "timeout": "nan"}, "timeout"),
        ({"kernels": [HEAT], "retries": -1}, "retries"),
        ({"kernels": [{"suite": "garvey104", "bogus": 1}]}, "bogus"),
        ({"kernels": [{"other": 1}]}, "expected"),
        ({"kernels": [HEAT], "name": "../../escape"}, "name"),
        ({"kernels": [HEAT], "name": "a/b"}, "name"),
        ({"kernels": [HEAT], "name": ".hidden"}, "name"),
    ],
)
def test_bad_campaigns_name_the_key(raw: object, needle: str, tmp_path: Path) -> None:
    with pytest.raises(InputError) as err:
        parse_campaign(raw, source="c.yaml", base_dir=tmp_path)
    assert needle in str(err.value) and "c.yaml" in str(err.value)


def test_unknown_suite_names_and_missing_files_are_clear(tmp_path: Path) -> None:
    for kernels in ([{"suite": "garvey104", "names": ["nope*"]}], ["missing.cl"]):
        spec = parse_campaign({"kernels": kernels}, source="c.yaml", base_dir=tmp_path)
        with pytest.raises(InputError):
            expand(spec, tmp_path / "k")


def _stored(tmp_path: Path) -> SQLiteStore:
    store = SQLiteStore(tmp_path / "s.db")
    cfg = {
        "WX": 16,
        "WY": 4,
        "WZ": 1,
        "BX": 1,
        "VX": 1,
        "CX": 1,
        "CY": 1,
        "CZ": 1,
        "LOCAL": 0,
        "IMAGE": 0,
    }
    results = [
        Result(
            cfg, Status.OK, 0.2, (1e-4, 1.1e-4, 1.2e-4), extra={"verify_s": 0.01, "worker_s": 0.5}
        ),
        Result({**cfg, "WX": 32}, Status.BUILD_FAILED, 0.1, message="log"),
        Result({**cfg, "WX": 64}, Status.TIMEOUT),
        Result({**cfg, "WX": 128}, Status.WRONG_RESULT, 0.1, (1e-4,)),
    ]
    for r in results:
        store.add(r, device="dev", kernel_id="kid", kernel_name="stencil", problem={"NX": 16})
    return store


def test_t4_export_classifies_every_status(tmp_path: Path) -> None:
    store = _stored(tmp_path)
    doc = export_t4(store.rows())
    assert doc["schema_version"] == "1.0.0"
    got = {r["configuration"]["WX"]: r for r in doc["results"]}
    assert got[16]["invalidity"] == "correct" and got[16]["correctness"] == 1
    assert got[16]["times"]["runtimes"] == [1e-4, 1.1e-4, 1.2e-4]
    assert got[16]["times"]["validation"] == 0.01
    assert got[32]["invalidity"] == "compile"
    assert got[64]["invalidity"] == "timeout"
    assert got[128]["invalidity"] == "correctness" and got[128]["correctness"] == 0
    for r in doc["results"]:
        assert {"configuration", "times", "invalidity", "correctness"} <= set(r)


def _kt_cache(kernel_params: dict[str, int]) -> dict[str, object]:
    keys = list(kernel_params)
    ok = {
        **kernel_params,
        "time": 0.25,
        "times": [0.24, 0.25, 0.26],
        "compile_time": 80.0,
        "verification_time": 1.0,
        "benchmark_time": 1.0,
        "strategy_time": 0.5,
        "framework_time": 2.0,
        "timestamp": "2026-01-01T00:00:00Z",
    }
    bad = {
        **kernel_params,
        "WX": 32,
        "time": "CompilationFailedConfig",
        "compile_time": 10.0,
        "verification_time": 0,
        "benchmark_time": 0,
        "strategy_time": 0,
        "framework_time": 0,
        "timestamp": "2026-01-01T00:00:00Z",
    }
    return {
        "schema_version": "1.1.0",
        "device_name": "NVIDIA H100 80GB HBM3",
        "kernel_name": "stencil",
        "problem_size": [16, 16, 16],
        "tune_params_keys": keys,
        "tune_params": {k: [v] for k, v in kernel_params.items()},
        "objective": "time",
        "cache": {"a": ok, "b": bad},
    }


def test_kernel_tuner_cache_imports_with_units_and_statuses(tmp_path: Path) -> None:
    kernel = load_kernel(HEAT, {"NX": 16, "NY": 16, "NZ": 16})
    params = dict(kernel.default_config() or {})
    path = tmp_path / "kt.json"
    path.write_text(json.dumps(_kt_cache(params)))
    store = SQLiteStore(tmp_path / "s.db")
    assert import_kt(path, kernel, store, "kt-h100") == (2, 0)
    assert import_kt(path, kernel, store, "kt-h100") == (0, 2)
    by_wx = {r.config["WX"]: r for r in store.results(device="kt-h100")}
    ok = by_wx[params["WX"]]
    assert ok.status is Status.OK and ok.times_s == pytest.approx((2.4e-4, 2.5e-4, 2.6e-4))
    assert ok.compile_s == pytest.approx(0.08)
    assert by_wx[32].status is Status.BUILD_FAILED


def test_kernel_tuner_cache_with_foreign_parameters_is_refused(tmp_path: Path) -> None:
    kernel = load_kernel(HEAT)
    data = _kt_cache({"block_size_x": 16})
    with pytest.raises(InputError) as err:
        kt_results(data, kernel, "kt.json")
    assert "block_size_x" in str(err.value)


def test_a_selector_names_every_matching_device() -> None:
    from gtune.campaign.runner import matching

    devices = [
        {
            "selector": "0:0",
            "identity": "h200-a",
            "name": "NVIDIA H200",
            "platform": "NVIDIA CUDA",
            "type": "GPU",
        },
        {
            "selector": "0:1",
            "identity": "h200-a",
            "name": "NVIDIA H200",
            "platform": "NVIDIA CUDA",
            "type": "GPU",
        },
        {
            "selector": "1:0",
            "identity": "cpu-x",
            "name": "cpu-skylake",
            "platform": "Portable Computing Language",
            "type": "CPU",
        },
    ]
    assert [d["selector"] for d in matching("NVIDIA", devices)] == ["0:0", "0:1"]
    assert [d["selector"] for d in matching("0:1", devices)] == ["0:1"]
    assert [d["selector"] for d in matching("portable", devices)] == ["1:0"]
    assert [d["selector"] for d in matching("cpu", devices)] == ["1:0"]
    assert [d["selector"] for d in matching("", devices)] == ["0:0"]
    assert matching("AMD", devices) == []

"""Campaign files, task expansion, T4 export and Kernel Tuner cache import (pure)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from gtune.campaign import CampaignTask, expand, parse_campaign
from gtune.campaign.formats import check_kt_cache, export_t4, import_kt
from gtune.description import load_kernel
from gtune.exceptions import InputError
from gtune.measure.result import Result, Status
from gtune.store import SQLiteStore
from tests.conftest import ROOT
from tests.inprocess import Cli

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


def _stored(tmp_path: Path, path: Path | None = None) -> SQLiteStore:
    store = SQLiteStore(path or tmp_path / "s.db")
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


# What Kernel Tuner's own T4 writer puts under "times" (kernel_tuner/file_utils.py), in
# milliseconds, and the invalidity classes of the T4 results schema 1.0.0.
KT_TIMES = {"compilation", "benchmark", "framework", "search_algorithm", "validation", "runtimes"}
T4_INVALIDITY = {"timeout", "compile", "runtime", "correctness", "constraints", "correct"}


def _check_t4_results(doc: dict[str, object]) -> None:
    """The T4 results schema 1.0.0 (required keys and types), plus the keys and units
    Kernel Tuner writes and the metadata.timeunit the methodology tools read."""
    assert isinstance(doc["schema_version"], str) and doc["schema_version"].count(".") == 2
    meta = doc["metadata"]
    assert isinstance(meta, dict) and meta["timeunit"] == "milliseconds"
    results = doc["results"]
    assert isinstance(results, list) and results
    for r in results:
        assert {"configuration", "times", "invalidity", "correctness"} <= set(r)
        assert isinstance(r["configuration"], dict) and isinstance(r["timestamp"], str)
        assert set(r["times"]) == KT_TIMES and "compilation_time" not in r["times"]
        assert all(isinstance(v, int | float) for k, v in r["times"].items() if k != "runtimes")
        assert r["invalidity"] in T4_INVALIDITY and r["correctness"] in (0, 1)
        assert r["objectives"] == ["time"]
        for m in r["measurements"]:
            assert isinstance(m["name"], str) and m["unit"] == "ms"


def test_t4_export_classifies_every_status(tmp_path: Path) -> None:
    store = _stored(tmp_path)
    doc = export_t4(store.rows())
    _check_t4_results(doc)
    assert doc["schema_version"] == "1.0.0"
    got = {r["configuration"]["WX"]: r for r in doc["results"]}
    assert got[16]["invalidity"] == "correct" and got[16]["correctness"] == 1
    assert got[16]["times"]["runtimes"] == pytest.approx([0.1, 0.11, 0.12])
    assert got[16]["times"]["compilation"] == pytest.approx(200.0)
    assert got[16]["times"]["validation"] == pytest.approx(10.0)
    assert got[16]["measurements"] == [{"name": "time", "value": pytest.approx(0.11), "unit": "ms"}]
    assert got[32]["invalidity"] == "compile"
    assert got[64]["invalidity"] == "timeout"
    assert got[128]["invalidity"] == "correctness" and got[128]["correctness"] == 0


def test_t4_export_of_several_kernels_is_one_file_per_kernel_and_metadata(
    tmp_path: Path, gtune_here: Cli
) -> None:
    db = tmp_path / "s.db"
    store = _stored(tmp_path, db)
    other = Result({"WX": 8}, Status.OK, 0.1, (2e-4,))
    store.add(other, device="dev", kernel_id="kid2", kernel_name="jacobi2d:stencil",
              problem={"NX": 64, "NY": 32})  # fmt: skip
    store.close()
    mixed = gtune_here("export", db=db)
    assert mixed.returncode == 2 and "2 kernels" in mixed.stderr and "--out" in mixed.stderr
    out = tmp_path / "t4"
    assert gtune_here("export", "-o", str(out), db=db).returncode == 0
    meta = json.loads((out / "metadata.json").read_text())
    assert meta["schema_version"] == "1.0.0"
    assert {"hardware", "environment"} <= set(meta["metadata"])
    assert isinstance(meta["metadata"]["environment"]["requirements"], list)
    files = {m["kernel"]: m["file"] for m in meta["metadata"]["results"]}
    assert set(files) == {"stencil", "jacobi2d:stencil"}
    assert sorted(p.name for p in out.iterdir()) == sorted([*files.values(), "metadata.json"])
    for name, file in files.items():
        doc = json.loads((out / file).read_text())
        _check_t4_results(doc)
        assert doc["metadata"]["kernel"] == name
    one = gtune_here("export", "-k", "jacobi2d", "-o", str(tmp_path / "j.json"), db=db)
    assert one.returncode == 0, one.stderr
    assert len(json.loads((tmp_path / "j.json").read_text())["results"]) == 1


def test_t4_export_of_one_kernel_at_several_sizes_says_how_to_pick_one(
    tmp_path: Path, gtune_here: Cli
) -> None:
    """A kernel tuned at two sizes is two T4 results files: a bare ``gtune export`` (a
    newcomer after a tuned kernel) and ``-k`` alone are refused with how to pick one,
    and the kernel's file with ``--size`` picks it."""
    db = tmp_path / "s.db"
    store = SQLiteStore(db)
    for n in (16, 32):
        kernel = load_kernel(HEAT, {"NX": n, "NY": n, "NZ": n})
        config = kernel.default_config()
        assert config is not None
        result = Result(config, Status.OK, 0.1, (1e-4, 1.1e-4, 1.2e-4))
        store.add(result, device="dev", kernel_id=kernel.identity(), kernel_name="heat3d:stencil",
                  problem=dict(kernel.sizes))  # fmt: skip
    store.close()
    bare = gtune_here("export", db=db)
    assert bare.returncode == 2 and "Traceback" not in bare.stderr
    assert "2 kernels, sizes or devices" in bare.stderr and "16x16x16" in bare.stderr
    assert "--size" in bare.stderr and "without KERNEL" in bare.stderr
    named = gtune_here(
        "export", "--format", "t4", "-k", "heat3d", "-o", str(tmp_path / "h.json"), db=db
    )
    assert named.returncode == 2 and "--size" in named.stderr
    assert "without KERNEL" not in named.stderr  # --format t4 was asked for
    one = tmp_path / "heat3d16.json"
    picked = gtune_here(
        "export", "--format", "t4", HEAT, "--size", "16x16x16", "-o", str(one), db=db
    )
    assert picked.returncode == 0, picked.stderr
    assert len(json.loads(one.read_text())["results"]) == 1


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
        "WX": 8,
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
        "cache": _keyed([ok, bad], keys),
    }


def _keyed(entries: list[dict[str, Any]], keys: list[str]) -> dict[str, dict[str, Any]]:
    """Entries under the keys Kernel Tuner gives them: their values joined by commas."""
    return {",".join(str(e[k]) for k in keys): e for e in entries}


def test_kernel_tuner_cache_imports_with_units_and_statuses(tmp_path: Path) -> None:
    kernel = load_kernel(HEAT, {"NX": 16, "NY": 16, "NZ": 16})
    params = dict(kernel.default_config() or {})
    path = tmp_path / "kt.json"
    path.write_text(json.dumps(_kt_cache(params)))
    store = SQLiteStore(tmp_path / "s.db")
    first = import_kt(path, kernel, store, "kt-h100")
    assert (first.added, first.kept, first.refused.total) == (2, 0, 0)
    again = import_kt(path, kernel, store, "kt-h100")
    assert (again.added, again.kept) == (0, 2)
    by_wx = {r.config["WX"]: r for r in store.results(device="kt-h100")}
    ok = by_wx[params["WX"]]
    assert ok.status is Status.OK and ok.times_s == pytest.approx((2.4e-4, 2.5e-4, 2.6e-4))
    assert ok.compile_s == pytest.approx(0.08)
    assert by_wx[8].status is Status.BUILD_FAILED


def test_kernel_tuner_15_cache_with_error_entries_imports_them_as_failed(tmp_path: Path) -> None:
    """Kernel Tuner 1.4 and later mark a failed configuration with ``__error__`` and
    write no ``time``."""
    kernel = load_kernel(HEAT, {"NX": 16, "NY": 16, "NZ": 16})
    params = dict(kernel.default_config() or {})
    data = _kt_cache(params)
    cache = data["cache"]
    assert isinstance(cache, dict)
    keys = list(params)
    ok, bad = cache.values()
    failed = {k: v for k, v in bad.items() if k != "time"}
    entries = [
        ok,
        {**failed, "__error__": "CompilationFailedConfig"},
        {**failed, "WX": 4, "__error__": "RuntimeFailedConfig", "compile_time": None},
        {**failed, "WX": 2, "__error__": "InvalidConfig"},
    ]
    data["cache"] = _keyed(entries, keys)
    results, refused = check_kt_cache(data, kernel, "kt.json")
    got = {r.config["WX"]: r for r in results}
    assert refused.total == 0
    assert got[8].status is Status.BUILD_FAILED and got[8].compile_s == pytest.approx(0.01)
    assert got[4].status is Status.LAUNCH_FAILED and got[2].status is Status.PRUNED
    assert got[params["WX"]].ok
    data["cache"] = _keyed([*entries, {**failed, "WX": 1, "__error__": "Melted"}], keys)
    results, refused = check_kt_cache(data, kernel, "kt.json")
    assert len(results) == 4 and refused.counts == {"unknown Kernel Tuner errors": 1}
    assert "__error__='Melted'" in refused.lines()[0]


def test_kernel_tuner_import_lands_under_a_stored_device_of_that_name(tmp_path: Path) -> None:
    from gtune.commands.import_kt import device_identity

    store = _stored(tmp_path)
    store.add(
        Result({"WX": 4}, Status.OK, 0.1, (1e-4,)),
        device="nvidia-h100-80gb-hbm3-0123abcd",
        kernel_id="kid",
        kernel_name="stencil",
    )
    data = {"device_name": "NVIDIA H100 80GB HBM3", "cache": {}}
    # no OpenCL device of this machine has that name: the store's device is taken
    assert device_identity(data, store, "kt.json") == ("nvidia-h100-80gb-hbm3-0123abcd", "")
    ident, note = device_identity({"device_name": "Some GPU 9000"}, store, "kt.json")
    assert ident == "kt-some-gpu-9000" and "--device-identity" in note


def test_kernel_tuner_cache_with_foreign_parameters_is_refused(tmp_path: Path) -> None:
    kernel = load_kernel(HEAT)
    data = _kt_cache({"block_size_x": 16})
    with pytest.raises(InputError) as err:
        check_kt_cache(data, kernel, "kt.json")
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


def test_one_vocabulary_for_tasks_results_and_cancelling() -> None:
    """A campaign task is a TuningTask; the Dask campaign and gtune.Campaign share one
    CampaignResult and one CancelToken; the older entry point is gone."""
    import gtune
    import gtune.campaign
    import gtune.tuning

    task = CampaignTask(kernel="k.cl", label="k", sizes=(("NX", 8),), device="", strategy="x")
    assert isinstance(task, gtune.TuningTask)
    assert task.size_text == "8" and task.name == "k"
    assert gtune.campaign.CampaignResult is gtune.CampaignResult
    assert gtune.campaign.CancelToken is gtune.CancelToken
    assert not hasattr(gtune.tuning, "tune_kernel")
    cancelled = gtune.CampaignResult(cancelled=True)
    assert not cancelled.complete and gtune.CampaignResult().complete
    failed = gtune.CampaignResult(failed=[(task, "lost")])
    assert not failed.complete
    # the key (a rerun's way to skip finished tasks) covers only the ledger's fields
    assert set(task.to_dict()) == {
        "kernel",
        "label",
        "sizes",
        "device",
        "strategy",
        "technique",
        "budget",
        "timeout_s",
        "compile_workers",
    }


def _kernel_tuner_t4() -> Any:
    """Kernel Tuner's own T4 module (its schemas and writer), or skip with the reason."""
    pytest.importorskip("jsonschema", reason="jsonschema is not installed")
    return pytest.importorskip(
        "kernel_tuner.file_utils", reason="Kernel Tuner (its T4 schemas) is not installed"
    )


def test_t4_export_validates_against_kernel_tuners_schemas(tmp_path: Path, gtune_here: Cli) -> None:
    import jsonschema

    kt = _kernel_tuner_t4()
    db = tmp_path / "s.db"
    store = _stored(tmp_path, db)
    other = Result({"WX": 8}, Status.OK, 0.1, (2e-4,))
    store.add(other, device="dev", kernel_id="kid2", kernel_name="jacobi2d:stencil",
              problem={"NX": 64, "NY": 32})  # fmt: skip
    store.close()
    out = tmp_path / "t4"
    assert gtune_here("export", "-o", str(out), db=db).returncode == 0
    _, results_schema = kt.output_file_schema("results")
    _, metadata_schema = kt.output_file_schema("metadata")
    jsonschema.validate(json.loads((out / "metadata.json").read_text()), metadata_schema)
    files = sorted(p for p in out.iterdir() if p.name != "metadata.json")
    assert len(files) == 2
    for file in files:
        jsonschema.validate(json.loads(file.read_text()), results_schema)


def test_t4_export_uses_the_keys_and_units_of_kernel_tuners_writer(tmp_path: Path) -> None:
    kt = _kernel_tuner_t4()
    ours = export_t4(_stored(tmp_path).rows())
    # One configuration as Kernel Tuner's tune_kernel returns it (times in milliseconds).
    theirs = kt.get_t4_results(
        [
            {
                "WX": 16,
                "time": 0.11,
                "times": [0.1, 0.11, 0.12],
                "compile_time": 200.0,
                "benchmark_time": 0.33,
                "framework_time": 1.0,
                "strategy_time": 0.5,
                "verification_time": 10.0,
                "timestamp": "2026-11-25 12:00:00",
            }
        ],
        {"WX": [16, 32]},
    )
    assert ours["metadata"]["timeunit"] == theirs["metadata"]["timeunit"]
    assert ours["schema_version"] == theirs["schema_version"]
    mine = next(r for r in ours["results"] if r["configuration"]["WX"] == 16)
    kt_result = theirs["results"][0]
    assert set(kt_result) <= set(mine)
    assert set(mine["times"]) == set(kt_result["times"])
    assert mine["objectives"] == kt_result["objectives"]
    kt_units = {m["name"]: m["unit"] for m in kt_result["measurements"]}
    assert {m["name"]: m["unit"] for m in mine["measurements"]} == {"time": kt_units["time"]}
    # The same measured run gives the same numbers in both writers' units.
    assert mine["times"]["runtimes"] == pytest.approx(kt_result["times"]["runtimes"])
    assert mine["times"]["compilation"] == pytest.approx(kt_result["times"]["compilation"])

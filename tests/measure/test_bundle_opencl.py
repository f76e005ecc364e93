"""Bundled builds on a real device (PoCL here), built by compile workers (off there
unless asked for) or by the measuring worker itself (on by default: a CPU device measured
alone): with ``GTUNE_BUNDLE`` forcing bundles of 3 or 4, tuning finds the same statuses
for the same configurations as with every configuration built alone; a configuration
that does not build is attributed alone; a source the renaming does not handle is built
singly."""

from __future__ import annotations

import dataclasses
import logging
from pathlib import Path
from typing import Any

import pytest

import gtune
from gtune.budget import Budget
from gtune.description import load_kernel
from gtune.exceptions import InputError
from gtune.measure import OpenCLEvaluator, Status, select_device
from gtune.measure.opencl_evaluator import default_bundle
from gtune.plain import plain_kernel
from gtune.tuning import TuningReport

pytestmark = pytest.mark.opencl

ROOT = Path(__file__).resolve().parents[2]
SMALL = {"NX": 32, "NY": 32, "NZ": 32}


def _heat3d() -> Any:
    return load_kernel(ROOT / "stencils" / "heat3d.cl", SMALL)


def _same_extra_keys(bundled: dict[str, Any], single: dict[str, Any]) -> bool:
    return set(bundled) - {"bundle"} == set(single) - {"bundle"}


def _tune(
    kernel: Any, bundle: str, monkeypatch: pytest.MonkeyPatch, compile_workers: int = 2
) -> TuningReport:
    monkeypatch.setenv("GTUNE_BUNDLE", bundle)
    return gtune.tune(
        kernel,
        device=select_device(None),
        strategy="random",
        technique="whole",  # one search: its configurations come as one batch
        strategy_options={"n": 8, "seed": 3},  # two bundles of 4
        budget=Budget.parse("8"),
        store="sqlite://",
        confirm=None,
        runs=1,
        compile_workers=compile_workers,
        seed_default=False,
    )


def _outcome(report: TuningReport) -> tuple[list[Any], list[Any]]:
    results = [e.result for run in report.runs for e in run.outcome.trace]
    seen = sorted((sorted(r.config.items()), r.status.value) for r in results)
    return seen, results


@pytest.mark.parametrize(("which", "helpers"), [("template", 2), ("plain", 0)], ids=str)
def test_tuning_with_bundles_finds_what_single_builds_find(
    which: str, helpers: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A template's bundles built by compile workers, a plain kernel's by the measuring
    worker: the renaming does not depend on who builds, nor the builders on the source
    (both builders with the template: the tests of a failing build and of a renaming
    that misses, below)."""
    if which == "template":
        kernel = _heat3d()
    else:
        kernel = plain_kernel(ROOT / "tests/data/corpus/laplace_typedef.cl", sizes=[64, 32])
    alone = _tune(kernel, "1", monkeypatch, helpers)
    bundled = _tune(kernel, "4", monkeypatch, helpers)
    seen_alone, results_alone = _outcome(alone)
    seen_bundled, results_bundled = _outcome(bundled)
    assert len(seen_alone) >= 6  # more than the helpers: bundled
    assert seen_bundled == seen_alone
    assert bundled.verification == alone.verification
    assert not any("bundle" in r.extra for r in results_alone)
    assert any(r.extra.get("bundle", 1) > 1 for r in results_bundled)
    single = {k: v for k, v in results_alone[0].extra.items()}
    for r in results_bundled:
        assert _same_extra_keys(dict(r.extra), single), r.extra
        assert r.extra.get("verification") == single.get("verification")


@pytest.mark.parametrize("helpers", [1, 0], ids=["compile-worker", "measuring-worker"])
def test_a_configuration_that_does_not_build_fails_alone(
    helpers: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    kernel = _heat3d()
    default = kernel.default_config() or {}
    # LOCAL and IMAGE together hit the template's #error; the others build
    broken = {**default, "LOCAL": 1, "IMAGE": 1}
    configs = [
        {**default, "WX": 8},
        {**default, "WX": 4},
        broken,
        {**default, "WY": 2},
        {**default, "WY": 8},
        {**default, "WX": 32},
    ]
    monkeypatch.setenv("GTUNE_BUNDLE", "3")
    with OpenCLEvaluator(kernel, runs=1, compile_workers=helpers) as ev:  # bundles of 3, 3
        assert ev.max_bundle == 3
        results = list(ev.evaluate_batch(configs))
        assert ev.max_bundle == 3  # a configuration's own failure does not stop bundling
    assert [r.config for r in results] == configs
    statuses = [r.status for r in results]
    assert statuses == [Status.OK, Status.OK, Status.BUILD_FAILED, Status.OK, Status.OK, Status.OK]
    assert "LOCAL and IMAGE" in results[2].message
    # the failing bundle's others were built singly; the next bundle built whole
    assert [r.extra.get("bundle") for r in results] == [None, None, None, 3, 3, 3]


@pytest.mark.parametrize("helpers", [1, 0], ids=["compile-worker", "measuring-worker"])
def test_a_source_the_renaming_misses_is_built_singly(
    helpers: int,
    kernel_copy: Any,
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
) -> None:
    cl = kernel_copy("naive7")
    # a helper made by a macro: its name is out of the renaming's sight, so a bundle
    # defines it twice and does not build
    text = cl.read_text()
    cl.write_text("#define HELPER(n) float n(float v) { return v; }\nHELPER(same)\n" + text)
    monkeypatch.setenv("GTUNE_TRUST_MODULES", str(cl.parent))
    kernel = load_kernel(cl)
    configs = [{"WX": x, "WY": y, "WZ": 1} for x in (2, 8, 32) for y in (1, 4)]
    monkeypatch.setenv("GTUNE_BUNDLE", "3")
    with (
        caplog.at_level(logging.INFO, logger="gtune.measure"),
        OpenCLEvaluator(kernel, runs=1, compile_workers=helpers) as ev,
    ):
        results = list(ev.evaluate_batch(configs))
        results += list(ev.evaluate_batch(configs))
        assert ev.max_bundle == 1
    assert [r.status for r in results] == [Status.OK] * 12
    assert not any("bundle" in r.extra for r in results)
    notes = [r for r in caplog.records if "one configuration per program" in r.getMessage()]
    assert len(notes) == 1
    assert "did not build while each of its configurations did" in notes[0].getMessage()


def test_bundles_are_on_for_nvidia_and_chosen_by_the_environment(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    device = select_device(None)
    nvidia = dataclasses.replace(device, platform="NVIDIA CUDA")
    monkeypatch.delenv("GTUNE_BUNDLE", raising=False)
    assert default_bundle(nvidia) == 8
    pocl = dataclasses.replace(device, platform="Portable Computing Language")
    assert default_bundle(pocl) == 1  # its compile workers hand over binaries
    assert default_bundle(pocl, builds_here=True) == 8  # the measuring worker builds
    monkeypatch.setenv("GTUNE_BUNDLE", "1")
    assert default_bundle(nvidia) == 1
    monkeypatch.setenv("GTUNE_BUNDLE", "many")
    with pytest.raises(InputError, match="GTUNE_BUNDLE"):
        default_bundle(device)


def test_a_source_with_an_include_is_built_singly_and_says_so(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    kernel = plain_kernel(
        ROOT / "tests/data/corpus/tile_square.cl",
        sizes=[48, 44],
        params={"TS": "WX", "WPT": [1, 2, 4, 8]},
        local_size=["WX", "WX"],
        global_size=["NX", "(NY+WPT-1)/WPT"],
        default={"WX": 4, "WPT": 1},
    )
    # four configurations, more than one bundle's three; WX 4 with WPT 2 leaves 22 rows
    # of work-items, no whole work-group: what fails alone fails alike in the second pass
    configs = [{"WX": x, "WPT": w} for x, w in ((2, 1), (2, 2), (4, 1), (4, 2))]
    with OpenCLEvaluator(kernel, runs=1, compile_workers=1, max_bundle=1) as ev:
        expected = [r.status for r in ev.evaluate_batch(configs)]
    monkeypatch.setenv("GTUNE_BUNDLE", "3")
    with (
        caplog.at_level(logging.INFO, logger="gtune.measure"),
        OpenCLEvaluator(kernel, runs=1, compile_workers=1) as ev,
    ):
        results = list(ev.evaluate_batch(configs))
        assert ev.max_bundle == 1
    assert [r.status for r in results] == expected and Status.OK in expected
    assert not any("bundle" in r.extra for r in results)
    notes = [r.getMessage() for r in caplog.records if "per program" in r.getMessage()]
    assert len(notes) == 1 and "includes" in notes[0]


# The corpus kernels, less the deliberately wrong variants (``*_wrong.cl``): each is its
# correct twin with an expression changed (an index, a weight, a built-in's rounding),
# the same names, helpers, macros and types for the renaming to handle.
SOURCES = [
    p
    for folder in ("tests/data/corpus", "stencils/plain")
    for p in sorted((ROOT / folder).glob("*.cl"))
    if not p.stem.endswith("_wrong")
]


@pytest.mark.slow
def test_every_corpus_kernel_builds_as_a_bundle_where_its_copies_build_alone() -> None:
    """The renaming on a real compiler: two configurations (other sizes, other values of
    the macros each source tests) of every corpus kernel (``SOURCES``) and of two
    rendered stencil definitions build as one program wherever each builds alone.

    One build a source: the bundle; only where it fails does the worker build each
    configuration singly (as tuning does), and one of them must fail alone too. The
    builds fetch no binary (``binary`` False): whether they build is the question."""
    import re

    from gtune.measure.bundle import bundle
    from gtune.measure.opencl_evaluator import Worker

    device = select_device(None)
    worker = Worker("compile", ("compiler", {"device": device.to_dict(), "build_lock_s": None}))
    worker.start(120.0)
    jobs: list[tuple[str, str, list[list[str]]]] = []
    for path in SOURCES:
        text = path.read_text()
        found = re.search(r"\bvoid\s+(\w+)\s*\(", text)
        assert found is not None
        macros = sorted(
            set(re.findall(r"\b(WX|WY|WZ|TS|WPT|VW|block_size_x|block_size_y)\b", text))
        )
        options = [
            [f"-DNX={nx}", "-DNY=16", "-DNZ=8", *(f"-D{m}={v}" for m in macros)]
            for nx, v in ((32, 2), (64, 4))
        ]
        jobs.append((text, found.group(1), options))
    for definition in ("thermal3d_f64.stencil.yaml", "star2d_c.stencil.yaml"):
        kernel = load_kernel(ROOT / "tests/data/definitions" / definition)
        default = kernel.default_config() or {}
        other = {**default, "WX": 4 if default.get("WX") != 4 else 8}
        jobs.append((kernel.source, kernel.name, [kernel.defines(default), kernel.defines(other)]))
    bundled = 0
    try:
        for source, name, options in jobs:
            if isinstance(bundle(source, name, options), str):
                continue  # an #include: built singly, see test_bundle.py
            payload = {"source": source, "name": name, "options": options, "binary": False}
            made = worker.call("build_bundle", payload, 120.0)
            assert made["binary"] is None
            kernels = [c["kernel"] for c in made["configs"]]
            if kernels == [name, name]:
                # the bundle did not build, so the worker built each configuration
                # singly: allowed only where one of them does not build alone either
                alone = made["configs"]
                assert any(c["status"] != "ok" for c in alone), (name, alone[0]["log"][-2000:])
                continue
            assert kernels == [f"{name}__gtb0", f"{name}__gtb1"]
            assert all(c["status"] == "ok" for c in made["configs"])
            bundled += 1
    finally:
        worker.stop()
    assert bundled >= len(jobs) - 4  # the two that include a header, and a few that need more


def test_a_worker_lost_mid_bundle_measures_the_rest_singly(
    kernel_copy: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The measuring worker built a bundle and died on its first configuration: the
    bundle went with it, so the new worker builds and measures the next configuration
    alone (a crash again here), never calling it a build failure."""
    cl = kernel_copy("naive7", lambda text: text + "build_options: [-DCRASH]\n")
    monkeypatch.setenv("GTUNE_TRUST_MODULES", str(cl.parent))
    configs = [{"WX": 2, "WY": 1, "WZ": 1}, {"WX": 8, "WY": 4, "WZ": 1}]
    with OpenCLEvaluator(load_kernel(cl), compile_workers=0, timeout_s=20, max_bundle=2) as ev:
        results = list(ev.evaluate_batch(configs))
        assert ev.restarts == 2
    assert [r.status for r in results] == [Status.CRASHED, Status.CRASHED]

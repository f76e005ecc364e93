"""Features from descriptions, model cards, device matching and the oracle fallback."""

from __future__ import annotations

import dataclasses
import json
import math
from pathlib import Path

import pytest

from gtune.description import load_kernel
from gtune.device import DeviceLimits
from gtune.loadpredict import (
    Dataset,
    FeaturesUnavailable,
    ModelCard,
    StencilTraits,
    TrainingRow,
    choose_techniques,
    device_card,
    find_model,
    installed_models,
    traits_of,
)
from gtune.loadpredict.features import DeviceTraits
from gtune.stencils.generate import garvey104, generate
from tests.conftest import ROOT
from tests.space.space_helpers import small_gpu_limits


@pytest.fixture(scope="module")
def suite_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    d = tmp_path_factory.mktemp("suite")
    generate(garvey104(), d, size=(16, 16, 16))
    return d


def _device(name: str = "Test GPU", vendor: str = "Acme", kind: str = "GPU") -> DeviceLimits:
    return small_gpu_limits(name=name, vendor=vendor, type=kind)


def test_traits_of_every_suite_kernel_follow_its_shape(suite_dir: Path) -> None:
    shapes = {s.name: s for s in garvey104()}
    seen = 0
    for yml in sorted(suite_dir.glob("*.yaml")):
        kernel = load_kernel(yml)
        t = traits_of(kernel)
        shape = shapes[yml.stem]
        assert (t.radius_x, t.radius_y, t.radius_z) == (
            shape.extent.get("x", 0),
            shape.extent.get("y", 0),
            shape.extent.get("z", 0),
        )
        assert t.points == len(shape.offsets)
        box = (2 * t.radius_x + 1) * (2 * t.radius_y + 1) * (2 * t.radius_z + 1)
        assert t.density == pytest.approx(t.points / box, abs=1e-6)
        assert 1 <= t.dims <= 3 and t.log2_nx == 4.0
        assert len(t.vector()) == len(StencilTraits.vector_names())
        seen += 1
    assert seen == 104


def test_real_stencils_have_traits() -> None:
    heat = traits_of(load_kernel(ROOT / "stencils" / "heat3d.cl"))
    assert (heat.points, heat.dims, heat.pattern) == (7, 3, "star")
    jac = traits_of(load_kernel(ROOT / "stencils" / "jacobi2d.cl"))
    assert jac.dims == 2 and jac.radius_z == 0


def test_traits_derive_from_reference_offsets_when_features_are_missing(tmp_path: Path) -> None:
    import shutil

    import yaml

    for name in ("heat3d.cl", "heat3d.yaml"):
        shutil.copy(ROOT / "stencils" / name, tmp_path / name)
    raw = yaml.safe_load((tmp_path / "heat3d.yaml").read_text())
    given = traits_of(load_kernel(tmp_path / "heat3d.cl"))
    del raw["features"]
    (tmp_path / "heat3d.yaml").write_text(yaml.safe_dump(raw))
    derived = traits_of(load_kernel(tmp_path / "heat3d.cl"))
    assert (derived.points, derived.dims, derived.density) == (
        given.points,
        given.dims,
        given.density,
    )
    assert (derived.radius_x, derived.radius_y, derived.radius_z) == (1, 1, 1)
    assert derived.unique_dim == given.unique_dim


def test_plain_kernel_has_no_traits_and_says_why() -> None:
    from gtune.plain import plain_kernel

    kernel = plain_kernel(
        ROOT / "tests" / "data" / "plain_blur.cl", sizes=[64, 32], scalars={"scale": "0.1"}
    )
    with pytest.raises(FeaturesUnavailable) as err:
        traits_of(kernel)
    assert "features" in str(err.value)


def _install_model(directory: Path, device: DeviceLimits, label: str) -> ModelCard:
    """A model whose every kernel was won by ``label``."""
    heat = traits_of(load_kernel(ROOT / "stencils" / "heat3d.cl"))
    rows = [
        TrainingRow(
            f"k{i}",
            device.identity,
            "hybrid",
            heat,
            {
                "global": 1.0 if label == "global" else 2.0,
                "local": 1.0 if label == "local" else 2.0,
            },
            DeviceTraits.of(device),
        )
        for i in range(3)
    ]
    Dataset(rows).write_csv(directory / "m.csv")
    card = ModelCard(name="m", heuristic="hybrid", device=device_card(device), dataset="m.csv")
    card.write(directory)
    return card


def test_model_is_found_for_its_device_only(tmp_path, monkeypatch) -> None:
    monkeypatch.setenv("GTUNE_MODELS", str(tmp_path))
    dev = _device()
    _install_model(tmp_path, dev, "local")
    assert [c.name for c in installed_models() if c.path and c.path.parent == tmp_path] == ["m"]
    assert find_model(dev, "hybrid") is not None
    assert find_model(dev, "dims") is None
    assert find_model(_device(name="Other GPU"), "hybrid") is None


def test_confident_model_narrows_the_search_to_one_technique(tmp_path, monkeypatch) -> None:
    monkeypatch.setenv("GTUNE_MODELS", str(tmp_path))
    dev = _device()
    _install_model(tmp_path, dev, "local")
    kernel = load_kernel(ROOT / "stencils" / "heat3d.cl")
    choice = choose_techniques(kernel, dev, "hybrid")
    assert choice.techniques == ["local"] and choice.predicted == "local"
    assert "predicted local" in choice.note and not choice.oracle


def test_technique_new_for_2d_arrays_is_searched_besides_the_prediction(
    tmp_path, monkeypatch
) -> None:
    """Streaming is learned on 3D arrays only (2D training kernels had none): for a 2D
    kernel its probability is uninformed, so the prediction comes from the rest and
    streaming is searched besides it; a 3D kernel's prediction is unchanged."""
    monkeypatch.setenv("GTUNE_MODELS", str(tmp_path))
    dev = _device()
    heat = traits_of(load_kernel(ROOT / "stencils" / "heat3d.cl"))
    flat = load_kernel(ROOT / "tests" / "data" / "definitions" / "thermal2d.stencil.yaml")
    flat_traits = traits_of(flat)
    assert flat_traits.log2_nz == 0 and "stream" in flat.techniques
    rows = [
        TrainingRow(
            f"a{i}",
            dev.identity,
            "hybrid",
            heat,
            {"global": 2.0, "vec": 3.0, "stream": 1.0},
            DeviceTraits.of(dev),
            {"global": 5, "vec": 5, "stream": 5},
        )
        for i in range(3)
    ] + [
        TrainingRow(
            f"b{i}",
            dev.identity,
            "hybrid",
            flat_traits,
            {"global": 1.0, "vec": 2.0, "stream": math.inf},
            DeviceTraits.of(dev),
            {"global": 5, "vec": 5},
        )
        for i in range(3)
    ]
    Dataset(rows).write_csv(tmp_path / "m.csv")
    card = ModelCard(name="m", heuristic="hybrid", device=device_card(dev), dataset="m.csv")
    card.write(tmp_path)
    model = card.load()
    assert model.seen[2] == {"global", "vec"} and model.seen[3] == {"global", "vec", "stream"}
    assert model.unseen(flat_traits, list(flat.techniques)) == ["stream"]
    assert model.unseen(heat, ["global", "local", "stream"]) == []
    choice = choose_techniques(flat, dev, "hybrid")
    assert choice.predicted == "global" and choice.techniques == ["global", "stream"]
    assert "stream, which model m has not seen" in choice.note
    heat3d = choose_techniques(load_kernel(ROOT / "stencils" / "heat3d.cl"), dev, "hybrid")
    assert heat3d.predicted == "stream" and heat3d.techniques == ["stream"]


def test_no_model_falls_back_to_the_oracle_and_says_so(tmp_path, monkeypatch) -> None:
    monkeypatch.setenv("GTUNE_MODELS", str(tmp_path))
    kernel = load_kernel(ROOT / "stencils" / "heat3d.cl")
    choice = choose_techniques(kernel, _device(name="Unseen GPU"), "hybrid")
    assert choice.oracle and set(choice.techniques) == set(kernel.techniques)
    assert "no load-predictor model" in choice.note


def test_kernel_without_features_falls_back_to_the_oracle(tmp_path, monkeypatch) -> None:
    from gtune.plain import plain_kernel

    monkeypatch.setenv("GTUNE_MODELS", str(tmp_path))
    dev = _device()
    _install_model(tmp_path, dev, "local")
    kernel = load_kernel(ROOT / "stencils" / "heat3d.cl")
    no_features = dataclasses.replace(kernel, features={})
    assert choose_techniques(no_features, dev, "hybrid").predicted == "local"  # from offsets
    stripped = dataclasses.replace(
        no_features, reference=dataclasses.replace(kernel.reference, args={})
    )
    choice = choose_techniques(stripped, dev, "hybrid")
    assert choice.oracle and "features" in choice.note
    plain = plain_kernel(
        ROOT / "tests" / "data" / "plain_blur.cl", sizes=[64, 32], scalars={"scale": "0.1"}
    )
    assert choose_techniques(plain, dev, "hybrid").predicted is None


def test_malformed_card_is_one_clear_error(tmp_path) -> None:
    from gtune.exceptions import InputError

    bad = tmp_path / "x.model.json"
    bad.write_text(json.dumps({"name": "x"}))
    with pytest.raises(InputError) as err:
        ModelCard.read(bad)
    assert str(bad) in str(err.value)
    bad.write_text(json.dumps({"name": "x", "heuristic": "h", "device": {}, "dataset": "../etc"}))
    with pytest.raises(InputError):
        ModelCard.read(bad)


def test_shipped_models_load_and_describe_their_device() -> None:
    from gtune.loadpredict.models import shipped_model_dir

    for path in sorted(shipped_model_dir().glob("*.model.json")):
        card = ModelCard.read(path)
        model = card.load()
        assert {"vendor", "name", "type"} <= set(card.device)
        assert card.cv.get("kernels", 0) >= 2
        assert len(model.estimator.classes_) >= 1


def test_shipped_cards_state_the_cross_validation_of_their_datasets() -> None:
    """A shipped card's accuracies are what leave-one-out gives on its dataset today:
    they follow exactly from the per-kernel predictions the card states, and a sample of
    its folds (every kernel whose name hashes into it, about 8 per card), fitted again,
    predicts what the card says. (All 187 folds of the H100 card took 3 minutes of CI.)"""
    import hashlib

    from gtune.loadpredict.dataset import Dataset
    from gtune.loadpredict.model import TechniqueForest, sklearn_version
    from gtune.loadpredict.models import shipped_model_dir
    from gtune.training.validation import held_out_prediction, scores_of

    cards = [ModelCard.read(p) for p in sorted(shipped_model_dir().glob("*.model.json"))]
    assert cards
    for card in cards:
        assert card.path is not None
        data = Dataset.read_csv(card.path.parent / card.dataset)
        predicted = card.cv["predictions"]
        names = {f"{r.kernel}@{r.device}" for r in data.usable().rows}
        assert set(predicted) == names and card.cv["kernels"] == len(names)
        absolute, weighted = scores_of(data, predicted)
        assert absolute == pytest.approx(card.cv["absolute_accuracy"], abs=1e-12)
        assert weighted == pytest.approx(card.cv["penalty_weighted_accuracy"], abs=1e-12)
        sample = sorted(
            n for n in names if hashlib.sha256(n.encode()).digest()[0] < max(12, 2048 // len(names))
        )
        assert len(sample) >= 2, card.name
        refit = {
            n: held_out_prediction(data, n, estimator=TechniqueForest(**card.estimator)).predicted
            for n in sample
        }
        # A forest can fit differently under another scikit-learn; the card says which
        # one it was validated with. Under that version every fold is exact; under
        # another one (a newer wheel in CI) a few may drift, not the story.
        differ = [n for n in sample if refit[n] != predicted[n]]
        if card.cv.get("sklearn") == sklearn_version():
            assert differ == [], card.name
        else:
            assert len(differ) <= len(sample) // 4, (card.name, differ)


def test_models_lists_each_cards_dataset_and_accuracies(tmp_path, gtune_here) -> None:
    from gtune.loadpredict.models import shipped_model_dir

    shown = gtune_here("models", env_extra={"GTUNE_MODELS": str(tmp_path)})
    assert shown.returncode == 0, shown.stderr
    cards = [ModelCard.read(p) for p in sorted(shipped_model_dir().glob("*.model.json"))]
    blocks = {  # each model's block: its title line to the blank line after it
        b.split()[0]: " ".join(b.split()) for b in shown.stdout.split("\n\n") if b.strip()
    }
    for card in cards:
        cv = card.cv
        block = blocks[card.name]
        assert f"{cv['absolute_accuracy']:.2f} absolute" in block
        assert f"{cv['penalty_weighted_accuracy']:.3f} penalty-weighted" in block
        assert (
            f"{cv['majority_technique']} ({cv['majority_penalty_weighted_accuracy']:.3f})" in block
        )
        decisive = cv["decisive"]
        assert f"({decisive['kernels']} kernels)" in block
        assert f"dataset {card.dataset}; {' '.join(card.source.split())}" in block
        # rows that name no kernel version are counted (they may be stale)
        assert card.path is not None
        rows = Dataset.read_csv(card.path.parent / card.dataset).rows
        missing = sum(1 for r in rows if not r.identity)
        said = f"{missing} of its {len(rows)} rows do not name the kernel version"
        assert (said in block) == (missing > 0)

"""benchmarks/template_ab.py: configurations from a recorded store, renderings from two
templates, and one small run on PoCL with the copy kernel beside (the A/B timing itself
is a GPU benchmark)."""

from __future__ import annotations

import gzip
import json
import shutil
from pathlib import Path

import pytest

from gtune.description import load_kernel
from gtune.exceptions import GtuneError
from gtune.stencils.render import template_source
from gtune.store import open_store
from tests.conftest import load_script
from tests.rawdata import raw

ROOT = Path(__file__).resolve().parents[1]
STORE = ROOT / "benchmarks" / "results" / "onestep" / "prefetch2" / "recorded.db.gz"
ab = load_script(ROOT / "benchmarks" / "template_ab.py")


def test_stored_configs_are_the_fastest_distinct_verified_ones(tmp_path: Path) -> None:
    top = ab.stored_configs(raw(STORE), "heat3d", 5)
    assert len(top) == 5
    assert len({tuple(sorted(c.items())) for c in top}) == 5
    db = tmp_path / "s.db"
    with gzip.open(raw(STORE), "rb") as src, db.open("wb") as dst:
        shutil.copyfileobj(src, dst)
    store = open_store(db, readonly=True)
    try:
        ok = [r.result for r in store.rows(kernel="heat3d") if r.result.ok]
    finally:
        store.close()
    best: dict[tuple[tuple[str, int], ...], float] = {}
    for r in ok:
        key = tuple(sorted(r.config.items()))
        best[key] = min(best.get(key, float("inf")), r.objective)
    expected = sorted(best.values())[:5]
    got = [best[tuple(sorted(c.items()))] for c in top]
    assert got == expected


def test_the_variant_rendering_uses_the_variant_template(tmp_path: Path) -> None:
    marker = "/* template_ab test variant */"
    variant = marker + "\n" + template_source()
    pa = ab.render_real("heat3d", tmp_path / "package", None)
    pb = ab.render_real("heat3d", tmp_path / "variant", variant)
    a = (pa.parent / "heat3d.cl").read_text()
    b = (pb.parent / "heat3d.cl").read_text()
    assert marker not in a and marker in b
    assert template_source().startswith("/*") and marker not in template_source()
    ka, kb = load_kernel(pa), load_kernel(pb)
    assert [p.name for p in ka.parameters] == [p.name for p in kb.parameters]
    assert ka.source != kb.source


def test_parse_config() -> None:
    assert ab.parse_config("WX=32, WY=4,ZC=128") == {"WX": 32, "WY": 4, "ZC": 128}


@pytest.mark.opencl
def test_a_small_run_times_both_renderings_and_the_copy(tmp_path: Path) -> None:
    """Both renderings verified and timed, the copy kernel in the same rounds, each time
    also as a fraction of the copy's bandwidth; a configuration the size cannot take is
    skipped, not timed. The variant side runs each configuration with RIN=1 (the
    interior path, --variant-set), so the RIM=1 configuration verifies with it."""
    variant = tmp_path / "same.cl"
    variant.write_text(template_source())
    cfg = "WX=8,WY=4,WZ=1,BX=2,VX=2,CX=1,CY=1,CZ=2,LOCAL=0,IMAGE=0,STREAM=0,ZC=1"
    too_wide = "WX=64,WY=4,WZ=1,BX=4,VX=4,CX=1,CY=1,CZ=1,LOCAL=0,IMAGE=0,STREAM=0,ZC=1"
    args = [str(tmp_path / "out"), "--variant", str(variant), "--kernels", "heat3d"]
    args += ["--device", "pocl", "--size", "16", "--rounds", "1", "--copy"]
    args += ["--variant-set", "RIN=1"]
    args += ["--config", f"heat3d:{cfg},RIM=1", "--config", f"heat3d:{too_wide},RIM=0"]
    assert ab.main(args) == 0
    summary = json.loads((tmp_path / "out" / "template_ab.json").read_text())
    (row,) = summary["rows"]  # the 256-wide tile does not fit 16 columns: skipped
    assert row["config"]["RIM"] == 1 and row["config"]["RIN"] == 0
    assert summary["variant_set"] == {"RIN": 1}
    assert summary["copy"]["time_s"] > 0 and summary["copy"]["gbs"] > 0
    for side in ("package", "variant"):
        assert row[f"{side}_s"] > 0
        moved = 2 * 4 * 16**3  # heat3d reads and writes one float array
        assert row[f"{side}_of_copy"] == pytest.approx(
            moved / row[f"{side}_s"] / 1e9 / summary["copy"]["gbs"]
        )
    assert "Copy kernel in the same rounds" in (tmp_path / "out" / "template_ab.md").read_text()


def test_one_side_must_differ(capsys: pytest.CaptureFixture[str]) -> None:
    """Without --variant, --variant-set or --variant-option both sides would be the same
    kernel: a usage error (exit status 2) before any device is opened."""
    with pytest.raises(SystemExit) as exc:
        ab.main(["out", "--kernels", "heat3d", "--device", "nothing-such"])
    assert exc.value.code == 2
    assert "--variant, --variant-set or --variant-option" in capsys.readouterr().err


@pytest.mark.bench
@pytest.mark.opencl
def test_a_variant_option_reaches_the_variants_builds_alone(tmp_path: Path) -> None:
    """``--variant-option`` builds the variant with that compiler option: an option the
    device's compiler accepts runs both sides; one it refuses fails the variant alone
    (the package's rendering verified first: the compiler's refusal named), and the run
    stops, untimed."""
    cfg = "WX=8,WY=4,WZ=1,BX=2,VX=2,CX=1,CY=1,CZ=2,LOCAL=0,IMAGE=0,STREAM=0,ZC=1,RIM=0"
    base = ["--kernels", "heat3d", "--device", "pocl", "--size", "16", "--rounds", "1"]
    base += ["--config", f"heat3d:{cfg}"]
    assert ab.main([str(tmp_path / "ok"), "--variant-option=-cl-mad-enable", *base]) == 0
    summary = json.loads((tmp_path / "ok" / "template_ab.json").read_text())
    assert summary["variant_options"] == ["-cl-mad-enable"] and len(summary["rows"]) == 1
    assert "`-cl-mad-enable`" in (tmp_path / "ok" / "template_ab.md").read_text()
    with pytest.raises(GtuneError, match="refuses the build options -cl-no-such-option-at-all"):
        ab.main([str(tmp_path / "bad"), "--variant-option=-cl-no-such-option-at-all", *base])

"""benchmarks/template_ab.py: configurations from a recorded store, renderings from two
templates (no device; the A/B timing itself is a GPU benchmark)."""

from __future__ import annotations

import gzip
import shutil
from pathlib import Path

from gtune.description import load_kernel
from gtune.stencils.render import template_source
from gtune.store import open_store
from tests.conftest import load_script

ROOT = Path(__file__).resolve().parents[1]
STORE = ROOT / "benchmarks" / "results" / "onestep" / "prefetch2" / "recorded.db.gz"
ab = load_script(ROOT / "benchmarks" / "template_ab.py")


def test_stored_configs_are_the_fastest_distinct_verified_ones(tmp_path: Path) -> None:
    top = ab.stored_configs(STORE, "heat3d", 5)
    assert len(top) == 5
    assert len({tuple(sorted(c.items())) for c in top}) == 5
    db = tmp_path / "s.db"
    with gzip.open(STORE, "rb") as src, db.open("wb") as dst:
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

"""benchmarks/predict/corpus_defs.py: which manifest kernels become labels of the
one-step predictor, and the collect_complete.sh lines for the lifted corpus."""

from __future__ import annotations

from pathlib import Path

import yaml

from gtune.stencils.definition import load_definition
from tests.conftest import load_script

ROOT = Path(__file__).resolve().parents[2]
corpus_defs = load_script(ROOT / "benchmarks" / "predict" / "corpus_defs.py")
MANIFEST = yaml.safe_load((ROOT / "stencils" / "plain" / "manifest.yaml").read_text())["kernels"]


def test_refused_and_unbenched_kernels_are_left_out_with_their_reason() -> None:
    assert corpus_defs.why_not(MANIFEST["life"]) == "refused by lift (expected)"
    assert corpus_defs.why_not({"source": "x.cl", "flags": []}) == "no bench size"
    assert corpus_defs.why_not(MANIFEST["conv2d"]) is None


def test_a_kernel_in_the_corpus_is_kept_as_it_is(tmp_path: Path) -> None:
    path = tmp_path / "lifted_conv2d.stencil.yaml"
    path.write_text("not even yaml: [")
    said = corpus_defs.lift_one("conv2d", MANIFEST["conv2d"], tmp_path, device=None)
    assert said.startswith("kept") and path.read_text() == "not even yaml: ["


def test_the_groups_hold_each_definition_at_its_bench_size_and_2d_at_4096() -> None:
    lines = corpus_defs.groups(corpus_defs.CORPUS, MANIFEST)
    at = {line.split()[0]: line.split()[1:] for line in lines}
    files = sorted(corpus_defs.CORPUS.glob("lifted_*.stencil.yaml"))
    assert files and sum(len(v) for v in at.values()) > len(files)
    for path in files:
        name = path.name.removeprefix("lifted_").removesuffix(".stencil.yaml")
        rel = str(path.relative_to(ROOT))
        bench = str(MANIFEST[name]["bench"])
        assert rel in at[bench if bench.count("x") == 2 else bench + "x1"]
        assert (rel in at["4096x4096x1"]) == (load_definition(path).dims == 2)
    # every definition of the corpus is one the one-step labels can search: one step
    assert all(load_definition(p).steps == 1 for p in files)

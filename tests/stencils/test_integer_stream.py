"""2D streaming of integer elements (issue 48: 8-bit pixels are bound by their
conversions to float, and streaming converts each input row once per chunk instead of
once per output row that reads it).

Streaming sums each output's terms row by row, so the renderer offers it to a 2D
definition of integer elements only when the file lists the primary field's terms in y
order and the other fields' after them: then it is the scalar code's order, bit for
bit. Checked here: float kernels' code is what it was (the C preprocessor's output
against the template from before), the renderer's choice, and on PoCL every output
element's raw bits against the numpy reference and the global technique, for 8- and
16-bit fields, signed and unsigned, the clamp, zero and interior boundaries, a padded
field, a second field, 16-bit and float outputs, VX 1 to 16, cyclic merging and
chunks; a definition out of y order is refused streaming with its reason.
"""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import pytest

from gtune.description import load_kernel
from gtune.stencils.definition import StencilDefinition, parse_definition
from gtune.stencils.real import REAL
from gtune.stencils.render import describe, integer_streams
from tests.inprocess import Cli
from tests.stencils.template_snapshot import beside_snapshot, cpp, older_definitions, sizes_of
from tests.stencils.test_int_words import _arrays, _evaluator, _outputs_of, allowed
from tests.stencils.test_integer_vec import _definition as integer_definition
from tests.stencils.test_integer_vec import _random_weights

ROOT = Path(__file__).resolve().parents[2]
BEFORE = ROOT / "tests" / "data" / "stencil_before_int_stream.cl.gz"
CORPUS = ROOT / "tests" / "data" / "definitions"


def _stream_configs(block: str) -> list[str]:
    """2D streaming's switches: value by value, vectors of 4 and 16, cyclic merging,
    separable weights; 3D streaming once (its code is not touched)."""
    if "#define ARRAY_DIMS 3" in block:
        return ["-DSTREAM=1 -DZC=4"]
    configs = ["-DSTREAM=1 -DZC=4 -DBX=2", "-DSTREAM=1 -DZC=8 -DVX=4 -DBX=8 -DCX=2"]
    configs.append("-DSTREAM=1 -DZC=2 -DVX=16 -DBX=16")
    if "SEP_X_TERMS" in block:
        configs.append("-DSTREAM=1 -DZC=4 -DVX=4 -DBX=4 -DSEP=1")
    return configs


@pytest.mark.skipif(shutil.which("cpp") is None, reason="needs the C preprocessor")
def test_float_kernels_stream_with_the_code_before(tmp_path: Path) -> None:
    """Every real stencil and the corpus's definitions (clamp, zero, rims, float64,
    separable, padded), with streaming's switches, preprocess to the text of the
    template before integer elements streamed."""
    stencils: list[Any] = [REAL[n]() for n in sorted(REAL)]
    stencils += older_definitions(CORPUS)
    checked = 0
    for block, new, old in beside_snapshot(BEFORE, stencils):
        for cfg in _stream_configs(block):
            flags = sizes_of(block) + cfg.split()
            want = cpp(old, flags, tmp_path)
            if want[0] != 0:  # a switch this stencil refuses (a padded field's VX > 1)
                assert cpp(new, flags, tmp_path)[0] != 0, (block[:80], cfg)
                continue
            assert cpp(new, flags, tmp_path) == want, (block[:80], cfg)
            checked += 1
    assert checked > len(stencils)  # every stencil, and the 2D ones several times


def _sorted_terms(dims: int, fields: list[str]) -> list[dict[str, Any]]:
    """A 3x3 of random weights (no product exact) and a sharpening point two to the
    right, listed in y order; a second field's terms after them."""
    terms = _random_weights(dims, -0.2, 0.3)
    terms.append({"field": "src", "offset": [2, 0, 0][:dims], "coefficient": "-1/8"})
    terms.sort(key=lambda t: t.get("offset", [0, 0, 0])[1])  # stable: x order kept
    if "mask" in fields:
        terms += [
            {"field": "mask", "offset": [0, -1, 0][:dims], "coefficient": "1/8"},
            {"field": "mask", "coefficient": "-1/4"},
        ]
    return terms


# name: (storage, output storage, convert, boundary, more keys)
CASES: dict[str, tuple[str, str | None, str | None, str, dict[str, Any]]] = {
    "u8-clamp": ("uint8", None, "rte_sat", "clamp", {}),
    "s8-interior": ("int8", None, "half_up_sat", "interior", {}),
    "u16-zero": ("uint16", None, "rtz_sat", "zero", {}),
    "s16-2fields": ("int16", None, "rte_sat", "interior", {"mask": True}),
    "u8-s16": ("uint8", "int16", "rtz_sat", "clamp", {}),
    "s8-f32": ("int8", "float32", None, "interior", {}),
    "u8-padded": ("uint8", None, "rte_sat", "clamp", {"pad": {"src": [2, 2]}}),
}


def _definition(case: str, terms: list[dict[str, Any]] | None = None) -> StencilDefinition:
    storage, output, convert, boundary, more = CASES[case]
    fields = ["src", "mask"] if more.get("mask") else ["src"]
    extra = {k: v for k, v in more.items() if k != "mask"} | {"fields": fields}
    terms = terms if terms is not None else _sorted_terms(2, fields)
    return integer_definition(2, terms, storage, convert, boundary, output, **extra)


def test_the_renderer_streams_integer_elements_listed_in_y_order() -> None:
    sizes = {"NX": 128, "NY": 32}
    ordered = _definition("u8-clamp")
    assert integer_streams(ordered)
    d = describe(ordered, sizes, source="k.cl")
    assert "stream" in d["techniques"] and "STREAM == 0" not in d["constraints"]
    assert "2D streaming" in d["doc"]
    # the same terms out of y order (the centre row first), or a second field's term
    # before the primary field's last: no streaming, and the doc says why
    terms = _sorted_terms(2, ["src"])
    shuffled = [terms[3], *terms[:3], *terms[4:]]
    assert [t["offset"][1] for t in shuffled][:2] == [0, -1]
    for d2 in (
        _definition("u8-clamp", shuffled),
        _definition("s16-2fields", [_sorted_terms(2, ["src", "mask"])[-1], *terms]),
    ):
        assert not integer_streams(d2)
        desc = describe(d2, sizes, source="k.cl")
        assert "stream" not in desc["techniques"] and "STREAM == 0" in desc["constraints"]
        assert "lists them in another order" in desc["doc"]
    # 3D: streaming along z holds planes of REAL (not offered, whatever the order)
    three = parse_definition(
        {**ordered.to_dict(), "dims": 3, "terms": _random_weights(3, -0.2, 0.3)}, "k3.yaml"
    )
    assert not integer_streams(three)
    assert "streaming along z" in describe(three, {**sizes, "NZ": 8}, source="k.cl")["doc"]


def _stream_cases(kernel: Any) -> list[dict[str, int]]:
    """Streaming configurations the kernel's space allows: value by value, vectors of
    4, 8 (with cyclic merging) and 16, chunks of 1 to 8 rows."""
    changes = [
        {"STREAM": 1, "ZC": 4, "VX": 1, "BX": 1, "WX": 8},
        {"STREAM": 1, "ZC": 1, "VX": 1, "BX": 4, "WX": 4},
        {"STREAM": 1, "ZC": 8, "VX": 4, "BX": 8, "WX": 4},
        {"STREAM": 1, "ZC": 2, "VX": 8, "BX": 8, "WX": 4, "CX": 2},
        {"STREAM": 1, "ZC": 4, "VX": 16, "BX": 16, "WX": 2},
    ]
    return list(allowed(kernel, changes))


@pytest.mark.opencl
@pytest.mark.usefixtures("shared_workers")
@pytest.mark.parametrize("case", sorted(CASES))
def test_streamed_integer_kernels_give_the_reference_bits(case: str, tmp_path: Path) -> None:
    path = tmp_path / "k.stencil.yaml"
    definition = _definition(case)
    path.write_text(definition.to_yaml())
    kernel = load_kernel(path).with_sizes({"NX": 128, "NY": 24})
    arrays = _arrays(kernel, seed=len(case))
    out = definition.output
    want = definition.reference({f: arrays[f] for f in definition.fields}, arrays[out])
    configs = _stream_cases(kernel)
    assert len(configs) >= (2 if "padded" in case else 4), configs
    # every vector width in every case; value by value in one of its two shapes, the
    # cases by turns (both where vectors are refused: a padded field). The one-step
    # kernels without streaming: test_integer_vec.py
    values = [c for c in configs if c["VX"] == 1]
    if values and len(values) < len(configs):
        values = [values[sorted(CASES).index(case) % len(values)]]
    with _evaluator(kernel, arrays) as ev:  # each configuration from the same arrays
        for cfg in [*values, *(c for c in configs if c["VX"] > 1)]:
            got = _outputs_of(ev, cfg)[out]
            assert got.dtype == want.dtype
            assert got.tobytes() == want.tobytes(), (case, cfg)


@pytest.mark.opencl
def test_streaming_out_of_y_order_is_caught_by_the_verification(
    tmp_path: Path, gtune_here: Cli
) -> None:
    """Why the renderer refuses it: measured by hand, streaming integer terms listed out
    of y order (the centre row's first term first) rounds some outputs differently, and
    the bit-for-bit verification says so (wrong_result, never a time); measure notes
    that the configuration is outside the tuning space."""
    terms = _sorted_terms(2, ["src"])
    path = tmp_path / "k.stencil.yaml"
    path.write_text(_definition("u8-clamp", [terms[3], *terms[:3], *terms[4:]]).to_yaml())
    done = gtune_here(
        "--db", str(tmp_path / "r.db"), "measure", str(path), "--size", "64x16",
        "--config", "STREAM=1,ZC=4,VX=1,BX=1,WX=8", "--json",
    )  # fmt: skip
    assert done.returncode != 0 and "Traceback" not in done.stderr
    assert "wrong_result" in done.stdout and "differ from the reference" in done.stdout
    # measure says the configuration is outside the tuning space, and why
    assert "outside the tuning space" in done.stderr and "`STREAM == 0` fails" in done.stderr
    inside = gtune_here(
        "--db", str(tmp_path / "r.db"), "measure", str(path), "--size", "64x16",
        "--config", "STREAM=0,VX=4,BX=4,WX=8", "--json",
    )  # fmt: skip
    assert inside.returncode == 0 and "outside the tuning space" not in inside.stderr

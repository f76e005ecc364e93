"""Padded fields: a definition's field stored with a pad around the problem (a
convolution's input padded by the filter's half-width), its numpy reference, and the
template reading it at the pad's offset on real OpenCL (PoCL in CI)."""

from __future__ import annotations

import itertools
import json
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import yaml

from gtune.exceptions import InputError
from gtune.kernel import TunableKernel
from gtune.measure import OpenCLEvaluator, Status, select_device
from gtune.measure.problem import initial_arrays
from gtune.stencils.definition import load_definition, parse_definition
from gtune.stencils.render import definition_kernel_of
from tests.conftest import ROOT, run_tuned_example
from tests.inprocess import Cli


def _conv(dims: int, radius: int, boundary: str, pad: int, **extra: Any) -> dict[str, Any]:
    rng = np.random.default_rng(radius * 10 + dims)
    terms = [
        {"field": "src", "offset": list(o), "coefficient": round(float(rng.uniform(-1, 1)), 3)}
        for o in itertools.product(range(-radius, radius + 1), repeat=dims)
        if dims == 2 or abs(o[2]) <= 1
    ]
    return {
        "dims": dims,
        "boundary": boundary,
        "fields": ["src"],
        "output": "dst",
        "terms": terms,
        "pad": {"src": [pad] * dims},
        **extra,
    }


def test_a_padded_field_reads_at_the_pad() -> None:
    d = parse_definition(_conv(2, 2, "clamp", 2), "c.stencil.yaml")
    assert d.pad_of("src") == (2, 2, 0) and d.field_shape_names("src") == ["NY+4", "NX+4"]
    rng = np.random.default_rng(1)
    src = rng.uniform(-1, 1, (14, 20))
    got = d.reference({"src": src}, np.zeros((10, 16)))
    want = np.zeros((10, 16))
    for t in d.terms:
        dx, dy, _ = t.offset
        want += t.coefficient.factor * src[2 + dy : 12 + dy, 2 + dx : 18 + dx]
    np.testing.assert_allclose(got, want, atol=1e-5)
    assert parse_definition(d.to_dict(), "again.stencil.yaml") == d  # round trip
    with pytest.raises(ValueError, match="shape"):
        d.reference({"src": src[:-1]}, np.zeros((10, 16)))


@pytest.mark.parametrize(
    ("change", "why"),
    [
        ({"pad": {"src": [1, 1]}}, r"less than the reach of src's terms \[2, 2\]"),
        ({"pad": {"u": [2, 2]}}, "'u' is not a field"),
        ({"pad": {"src": [2]}}, "expected 2 integers"),
        ({"pad": {"src": [2, 100]}}, "from 0 to 64"),
        ({"steps": 4}, "several steps"),
    ],
)
def test_a_pad_a_definition_cannot_hold_is_refused(change: dict[str, Any], why: str) -> None:
    with pytest.raises(InputError, match=why) as info:
        parse_definition({**_conv(2, 2, "clamp", 2), **change}, "c.stencil.yaml")
    assert "c.stencil.yaml" in str(info.value)


def test_only_the_primary_field_may_be_padded() -> None:
    data = _conv(2, 1, "interior", 1)
    data["fields"] = ["src", "power"]
    data["terms"].append({"field": "power", "coefficient": 0.5})
    data["pad"] = {"power": [1, 1]}
    d = parse_definition(data, "two.stencil.yaml")
    with pytest.raises(InputError, match="only the stencil's primary field"):
        definition_kernel_of(d, {"NX": 16, "NY": 8})


def _configs(kernel: TunableKernel, limits: dict[str, int]) -> list[dict[str, int]]:
    default = kernel.default_config()
    assert default is not None
    changes: list[dict[str, int]] = [{}, {"LOCAL": 1, "WX": 8}, {"CX": 2, "WX": 4}]
    changes += [{"LOCAL": 1, "CY": 2}]
    if "stream" in kernel.techniques:  # 2D streaming: rows in registers, blocks in x
        changes += [{"STREAM": 1, "ZC": 4, "BX": 2, "WX": 8, "WY": 2}, {"STREAM": 1, "CX": 2}]
    out = []
    for change in changes:
        cfg = {**default, **change}
        env = {**kernel.env(cfg), **limits}
        assert all(c.evaluate(env) for c in kernel.constraints), (cfg, kernel.constraints)
        out.append(cfg)
    return out


def _configs_and_firsts(
    kernel: TunableKernel, limits: dict[str, int]
) -> list[tuple[dict[str, int], bool]]:
    """``_configs``, each with whether it is the first of its technique (global, local,
    streaming): where a wrong kernel is run, once a technique."""
    seen: set[tuple[int, int]] = set()
    out = []
    for cfg in _configs(kernel, limits):
        path = (cfg.get("LOCAL", 0), cfg.get("STREAM", 0))
        out.append((cfg, path not in seen))
        seen.add(path)
    return out


@pytest.mark.opencl
@pytest.mark.usefixtures("shared_workers")
# A pad as wide as the reach (2D interior, 3D clamp) and wider (2D clamp, 3D interior),
# each boundary in 2D and 3D. (2D clamp with a pad as wide as its reach, left out, reads
# the pad as 2D interior does and clamps its rows as 2D clamp with the wider pad.)
@pytest.mark.parametrize(
    ("dims", "boundary", "pad"),
    [(2, "interior", 3), (2, "clamp", 4), (3, "clamp", 1), (3, "interior", 2)],
)
def test_the_template_reads_a_padded_field(dims: int, boundary: str, pad: int) -> None:
    radius = 3 if dims == 2 else 1
    d = parse_definition(_conv(dims, radius, boundary, pad), "c.stencil.yaml")
    sizes = {"NX": 32, "NY": 16} if dims == 2 else {"NX": 32, "NY": 16, "NZ": 8}
    kernel = definition_kernel_of(d, sizes)
    want = {"global", "local", "vec"} | ({"stream"} if dims == 2 else set())
    assert set(kernel.techniques) == want  # vec: test_padded_vec.py
    limits = select_device(None).limit_values()
    bad = replace(
        kernel, source=kernel.source.replace("#define SRC_PAD_X", "#define SRC_PAD_X 0 //")
    )
    with OpenCLEvaluator(kernel, runs=1) as ev, OpenCLEvaluator(bad, runs=1) as wrong:
        for cfg, first in _configs_and_firsts(kernel, limits):
            result = ev.evaluate(cfg)
            assert result.status is Status.OK, (cfg, result.message)
            if first:  # the pad matters
                assert wrong.evaluate(cfg).status is not Status.OK, cfg


def _weighted(radius: int, pad: int, boundary: str = "clamp") -> dict[str, Any]:
    """A 2D convolution whose (2r+1)^2 weights come in the array ``coeff`` (row-major)."""
    side = 2 * radius + 1
    rng = np.random.default_rng(side)
    terms = [
        {
            "field": "src",
            "offset": [dx, dy],
            "coefficient": f"coeff[{(dy + radius) * side + dx + radius}]",
        }
        for dy in range(-radius, radius + 1)
        for dx in range(-radius, radius + 1)
    ]
    return {
        "dims": 2,
        "boundary": boundary,
        "fields": ["src"],
        "output": "dst",
        "terms": terms,
        "pad": {"src": [pad, pad]},
        "weights": {"coeff": [round(float(v), 3) for v in rng.uniform(-1, 1, side * side)]},
    }


def test_weights_in_an_array_are_read_from_it() -> None:
    d = parse_definition(_weighted(1, 1), "w.stencil.yaml")
    assert [a.kind for a in d.arguments] == ["field", "output", "weights"]
    rng = np.random.default_rng(3)
    src = rng.uniform(-1, 1, (10, 14))
    coeff = rng.uniform(-1, 1, 9)
    got = d.reference({"src": src, "coeff": coeff}, np.zeros((8, 12)))
    want = sum(
        coeff[(dy + 1) * 3 + dx + 1] * src[1 + dy : 9 + dy, 1 + dx : 13 + dx]
        for dy in (-1, 0, 1)
        for dx in (-1, 0, 1)
    )
    np.testing.assert_allclose(got, want, atol=1e-5)
    # without the array, the definition's own values
    own = d.reference({"src": src}, np.zeros((8, 12)))
    assert not np.allclose(own, got)
    # the tuning runs with the definition's weights
    kernel = definition_kernel_of(d, {"NX": 16, "NY": 8})
    assert np.allclose(initial_arrays(kernel)["coeff"], d.weights["coeff"])
    assert parse_definition(d.to_dict(), "again.stencil.yaml") == d
    fixed = parse_definition({**_weighted(1, 1), "weights_fixed": True}, "f.stencil.yaml")
    assert fixed.to_dict()["weights_fixed"] is True
    with pytest.raises(InputError, match="no weights arrays"):
        parse_definition({**_conv(2, 1, "clamp", 1), "weights_fixed": True}, "c.stencil.yaml")
    bad = _weighted(1, 1)
    bad["terms"][0]["coefficient"] = "coeff[9]"
    with pytest.raises(InputError, match="unknown coefficient 'coeff\\[9\\]'"):
        parse_definition(bad, "w.stencil.yaml")


@pytest.mark.opencl
@pytest.mark.usefixtures("shared_workers")
@pytest.mark.parametrize(
    ("boundary", "fixed"), [("clamp", False), ("interior", False), ("clamp", True)]
)
def test_the_template_reads_weights_from_their_array(boundary: str, fixed: bool) -> None:
    data = _weighted(2, 2, boundary)
    if fixed:  # the weights baked in as numbers; the kernel still takes the array
        data["weights_fixed"] = True
    d = parse_definition(data, "w.stencil.yaml")
    kernel = definition_kernel_of(d, {"NX": 32, "NY": 16})
    assert "__constant REAL *restrict coeff" in kernel.source
    terms = kernel.source.split("#define STENCIL_TERMS")[1].split("\n\n")[0]
    assert ("coeff[" in terms) is not fixed
    limits = select_device(None).limit_values()
    # the same kernel reading the filter transposed (or a weight changed) is caught
    first = f"{d.weights['coeff'][1]}f" if fixed else "coeff[1])"
    bad = replace(
        kernel, source=kernel.source.replace(first, "0.125f" if fixed else "coeff[5])", 1)
    )
    assert bad.source != kernel.source
    with OpenCLEvaluator(kernel, runs=1) as ev, OpenCLEvaluator(bad, runs=1) as wrong:
        for cfg, first in _configs_and_firsts(kernel, limits):
            result = ev.evaluate(cfg)
            assert result.status is Status.OK, (cfg, result.message)
            if first:
                assert wrong.evaluate(cfg).status is Status.WRONG_RESULT, cfg


def test_an_arrays_given_values_are_checked() -> None:
    from gtune.description import parse_description
    from gtune.stencils.render import definition_description

    d = parse_definition(_weighted(1, 1), "w.stencil.yaml")
    source, description = definition_description(d, {"NX": 16, "NY": 8})
    coeff = next(a for a in description["arguments"] if a["name"] == "coeff")
    coeff["init"] = "values:1,x"
    with pytest.raises(InputError, match="values: expects numbers"):
        parse_description(description, source=source, label="w.yaml", source_path="")
    coeff["init"] = "values:1,2"
    kernel = parse_description(description, source=source, label="w.yaml", source_path="")
    with pytest.raises(InputError, match="lists 2 values for its 9 elements"):
        initial_arrays(kernel)


def _example(tuned: Path, original: Path, *extra: str) -> str:
    done = run_tuned_example(tuned, "--original", str(original), *extra)
    return done.stdout + done.stderr


@pytest.mark.opencl
@pytest.mark.slow
@pytest.mark.parametrize("fixed", [False, True])
@pytest.mark.usefixtures("shared_workers")
def test_padded_convolution_with_a_filter_array_lift_run_export(
    tmp_path: Path, fixed: bool, gtune_here: Cli
) -> None:
    """The corpus convolution (padded input, __constant filter) from the command line:
    lift from flags, tune against the original, export, and the exported kernel against
    the original on fresh data (at a second size too with the filter taken at run time)
    and on other weights (with --weights-fixed the tuned kernel holds the recorded ones)."""
    entry = yaml.safe_load((ROOT / "stencils" / "plain" / "manifest.yaml").read_text())
    flags = entry["kernels"]["convolution"]["flags"]
    out = tmp_path / "conv.stencil.yaml"
    source = ROOT / "stencils" / "plain" / "convolution.cl"
    more = ["--weights-fixed"] if fixed else []
    filt = [round(0.04 * (k % 7) - 0.1, 2) for k in range(25)]  # the user's filter, in a file
    if fixed:
        (tmp_path / "filter.txt").write_text(" ".join(map(str, filt)))
        more += ["--weights", f"filter=@{tmp_path / 'filter.txt'}"]
    done = gtune_here("lift", str(source), "--size", "32x32", *flags, *more, "-o", str(out))
    assert done.returncode == 0, done.stderr
    assert "weights filter[25], input padded by [2, 2]" in done.stderr
    d = load_definition(out)
    assert d.pads == {"input": (2, 2, 0)} and list(d.weights) == ["filter"]
    assert d.weights_fixed is fixed
    if fixed:
        assert d.weights["filter"] == tuple(filt)
    assert [a.name for a in d.arguments] == ["output", "input", "filter", "width", "height"]
    db = tmp_path / "r.db"
    ran = gtune_here("run", str(out), "--size", "64x32", "--budget", "2", db=db)
    assert ran.returncode == 0, ran.stderr
    assert "over the original" in ran.stdout + ran.stderr
    exported = gtune_here("export", str(out), "--size", "64x32", "-o", str(tmp_path / "t"), db=db)
    assert exported.returncode == 0, exported.stderr
    tuned = tmp_path / "t" / "conv_tuned.json"
    # (the second size once: the exported kernel's sizes do not depend on --weights-fixed)
    for extra in ([], ["--size", "96x64"])[: 1 if fixed else 2]:
        said = _example(tuned, out, *extra)
        assert "output: max |tuned - original| = 0 (ok)" in said, said
    # other weights at run time: the exported kernel reads its filter argument
    data = json.loads(tuned.read_text())
    for arg in data["arguments"]:
        if arg["name"] == "filter":
            arg["init"] = "random"
    other = tmp_path / "t" / "other.json"
    other.write_text(json.dumps(data))
    said = _example(other, out)
    assert ("(ok)" in said) is not fixed, said


def _face(weights: list[float], pad: int) -> Any:
    from gtune.stencils.lift import Interface, ScalarArg

    return Interface(
        label="sep.cl",
        kernel_name="sep",
        shape=(16, 20),
        dtype="float32",
        fields=("src",),
        output="dst",
        order=("src", "dst", "w"),
        scalars=tuple(
            ScalarArg(f"w[{i}]", "float32", v, entry_of="w") for i, v in enumerate(weights)
        ),
        pads={"src": (pad, pad)},
        weights={"w": len(weights)},
    )


def test_lift_finds_which_entry_multiplies_which_offset() -> None:
    """A numpy kernel: a 3x3 filter from a 1D array of 3, applied separably
    (w[i] * w[j]) to an input padded by 1, and a 3x3 array read transposed."""
    from gtune.stencils.lift import lift_with

    def separable(inputs: Any, out0: np.ndarray, scalars: Any) -> np.ndarray:
        src, w = inputs["src"], inputs["w"]
        ny, nx = out0.shape
        return sum(w[i] * w[j] * src[i : i + ny, j : j + nx] for i in range(3) for j in range(3))

    d, _ = lift_with(_face([0.5, -0.75, 1.25], 1), separable, name="sep")
    assert d.pads == {"src": (1, 1, 0)} and d.weights == {"w": (0.5, -0.75, 1.25)}
    got = {t.offset[:2]: str(t.coefficient) for t in d.terms}
    assert got[(-1, -1)] == "w[0]*w[0]" and got[(1, 0)] == "w[1]*w[2]"

    def transposed(inputs: Any, out0: np.ndarray, scalars: Any) -> np.ndarray:
        src, w = inputs["src"], inputs["w"]
        ny, nx = out0.shape
        return sum(w[j * 3 + i] * src[i : i + ny, j : j + nx] for i in range(3) for j in range(3))

    d, _ = lift_with(_face([0.5 + k / 8 for k in range(9)], 1), transposed, name="t")
    got = {t.offset[:2]: str(t.coefficient) for t in d.terms}
    assert got[(1, -1)] == "w[6]" and got[(-1, 1)] == "w[2]"  # (dx, dy) = (j-1, i-1)


def test_weights_read_as_a_field_get_the_hint() -> None:
    """A filter given the problem's shape (no --array w=9) is a field: the kernel is then
    a product of inputs, refused with the hint to give the array its length."""
    from gtune.stencils.lift import Interface, NotAStencil, lift_with

    face = Interface(
        label="conv.cl",
        kernel_name="conv",
        shape=(16, 20),
        dtype="float32",
        fields=("src", "w"),
        output="dst",
        order=("src", "w", "dst"),
        scalars=(),
    )

    def conv(inputs: Any, out0: np.ndarray, scalars: Any) -> np.ndarray:
        src, w = inputs["src"], inputs["w"].ravel()
        return sum(w[k] * np.roll(src, k, axis=1) for k in range(3))

    with pytest.raises(NotAStencil, match="--array filter=25"):
        lift_with(face, conv, name="conv")

"""Stencil definitions: parsing, validation messages, YAML round trip, numpy reference."""

from __future__ import annotations

import itertools
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import yaml

from gtune.exceptions import InputError
from gtune.stencils.definition import (
    Coefficient,
    StencilDefinition,
    from_weights,
    load_definition,
    parse_coefficient,
    parse_definition,
    reach_of,
)

HOTSPOT = """
name: hotspot
doc: One step of a thermal simulation.
dims: 2
dtype: float32
boundary: clamp
fields: [temp, power]
output: dst
coefficients: [cc, rx, ry, amb]
terms:
  - {field: temp, offset: [0, 0], coefficient: cc}
  - {field: temp, offset: [1, 0], coefficient: rx}
  - {field: temp, offset: [-1, 0], coefficient: rx}
  - {field: temp, offset: [0, 1], coefficient: ry}
  - {field: temp, offset: [0, -1], coefficient: ry}
  - {field: power, coefficient: "0.5*cc"}
constant: "amb*2"
values: {cc: 0.5, rx: 0.25, ry: 0.25, amb: 0.3}
kernel:
  name: calc_temp
  arguments:
    - power
    - temp
    - dst
    - {name: nx, type: int, size: x}
    - {name: ny, type: int, size: y}
    - {name: steps, type: int, ignored: true, value: 1}
    - cc
    - rx
    - ry
    - amb
"""


def parse(text: str, source: str = "t.stencil.yaml") -> StencilDefinition:
    return parse_definition(yaml.safe_load(text), source)


def test_hotspot_example_parses() -> None:
    d = parse(HOTSPOT)
    assert d.name == "hotspot" and d.dims == 2 and d.boundary == "clamp"
    assert d.radius == (1, 1, 0)
    assert d.primary_field == "temp"
    assert d.secondary_fields == ("power",)
    assert d.terms[5].coefficient == Coefficient(0.5, ("cc",))
    assert d.terms[1].offset == (1, 0, 0)
    assert d.constant == Coefficient(2.0, ("amb",))
    assert d.kernel_name == "calc_temp"
    kinds = [(a.name, a.kind) for a in d.arguments]
    assert kinds[:4] == [("power", "field"), ("temp", "field"), ("dst", "output"), ("nx", "size")]
    assert d.arguments[3].axis == "x" and d.arguments[5].value == 1
    assert d.arguments[5].kind == "ignored"


def test_a_size_argument_in_units_of_vectors() -> None:
    """``unit: 4``: the argument is the size along its axis in float4s (NX / 4); it
    round-trips, and the rendered description passes NX / 4."""
    from gtune.stencils.render import describe

    text = HOTSPOT.replace(
        "{name: nx, type: int, size: x}", "{name: nx, type: int, size: x, unit: 4}"
    )
    d = parse(text)
    nx = d.arguments[3]
    assert (nx.kind, nx.axis, nx.unit, nx.size_value) == ("size", "x", 4, "NX / 4")
    assert parse_definition(yaml.safe_load(d.to_yaml()), "again.stencil.yaml") == d
    assert d.arguments[4].size_value == "NY"
    described = {
        a["name"]: a for a in describe(d, {"NX": 64, "NY": 32}, source="h.cl")["arguments"]
    }
    assert described["nx"]["value"] == "NX / 4" and described["ny"]["value"] == "NY"


def test_defaults() -> None:
    d = parse(
        "dims: 3\nfields: [u]\noutput: v\nterms: [{field: u, offset: [0, 0, 1]}]",
        "dir/heat.stencil.yaml",
    )
    assert d.name == "heat" and d.dtype == "float32" and d.boundary == "interior"
    assert d.kernel_name == "heat"
    assert [a.name for a in d.arguments] == ["u", "v"]
    assert d.terms[0].coefficient == Coefficient(1.0, ())
    assert d.constant.is_zero


@pytest.mark.parametrize(
    ("text", "factor", "names"),
    [
        (0.25, 0.25, ()),
        ("1/8", 0.125, ()),
        ("-3/4", -0.75, ()),
        ("0.5*cc", 0.5, ("cc",)),
        ("dt*cc*2", 2.0, ("cc", "dt")),
        ([0.5, "dt"], 0.5, ("dt",)),
        ("-cc", -1.0, ("cc",)),
        ("1e-3 * dt", 1e-3, ("dt",)),
    ],
)
def test_coefficients(text: Any, factor: float, names: tuple[str, ...]) -> None:
    c = parse_coefficient(text, "k", ["cc", "dt"])
    assert c.factor == pytest.approx(factor) and c.names == names


@pytest.mark.parametrize("text", ["cc+1", "sin(cc)", "1/0", "", "2**3", True, None, "nan"])
def test_bad_coefficients(text: Any) -> None:
    with pytest.raises(InputError, match="k"):
        parse_coefficient(text, "k", ["cc"])


def test_coefficient_render() -> None:
    assert Coefficient(0.5, ("cc",)).render() == "((REAL)0.5*cc)"
    assert Coefficient(1.0, ("cc", "dt")).render() == "(cc*dt)"
    assert Coefficient(0.25).render() == "((REAL)0.25)"
    assert Coefficient(0.25).render(dtype="float32") == "0.25f"
    assert Coefficient(2.0).render(dtype="float64") == "2.0"
    assert Coefficient(1.0, ("p",)).render({"p": "p_"}) == "(p_)"
    assert Coefficient(0.5, ("cc", "dt")).value({"cc": 2.0, "dt": 3.0}) == 3.0


ERRORS = [
    ("terms[0].offset: [1, 0]", "terms[0].offset: expected 3 integers for dims 3, got [1, 0]"),
    ("terms[0].coef: 1", "terms[0].coef: unknown key (did you mean coefficient?)"),
    ("dim: 3", "dim: unknown key (did you mean dims?)"),
    ("dims: 4", "dims: expected 2 or 3"),
    ("dtype: float16", "dtype: expected one of float32, float64"),
    ("boundary: mirror", "boundary: expected one of interior, clamp, zero, wrap, reflect"),
    (
        "terms[0].coefficient: c1",
        "terms[0].coefficient: unknown coefficient 'c1' (did you mean c0?)",
    ),
    ("coefficients: [c0, u]", "coefficients[1]: u is also a field"),
    ("output: u", "output: u is also an input field"),
    ("terms[1].field: v", "terms[1].field: 'v' is not a field"),
    ("values: {}", "values: c0 needs a value"),
    ("values.c9: 1", "values.c9: not a coefficient"),
    ("terms[0].offset: [0, 0, 99]", "terms[0].offset: offsets reach at most"),
    ("fields: [u, w]", "fields[1]: w is read by no term"),
    ("kernel.arguments: [u]", "kernel.arguments: missing v, c0"),
    ("kernel.arguments: [u, v, c0, zz]", "kernel.arguments[3]: 'zz' is not a field"),
    (
        "kernel.arguments: [u, v, c0, {name: n, size: w}]",
        "kernel.arguments[3].size: expected one of x, y, z",
    ),
    (
        "kernel.arguments: [u, v, c0, {name: n, size: x, unit: 0}]",
        "kernel.arguments[3].unit: expected a positive integer",
    ),
    (
        "kernel.arguments: [u, v, c0, {name: n, size: x, unit: four}]",
        "kernel.arguments[3].unit: expected a positive integer",
    ),
    ("kernel.nam: k", "kernel.nam: unknown key (did you mean name?)"),
    ("name: 9x", "name: expected a name"),
]

BASE = {
    "dims": 3,
    "fields": ["u"],
    "output": "v",
    "coefficients": ["c0"],
    "values": {"c0": 0.5},
    "terms": [
        {"field": "u", "offset": [0, 0, 0], "coefficient": "c0"},
        {"field": "u", "offset": [1, 0, 0], "coefficient": 0.25},
    ],
}


def _edit(data: dict[str, Any], path: str, value: Any) -> None:
    keys: list[Any] = []
    for part in path.split("."):
        if "[" in part:
            name, idx = part[:-1].split("[")
            keys += [name, int(idx)]
        else:
            keys.append(part)
    node: Any = data
    for k in keys[:-1]:
        if isinstance(node, dict) and k not in node:
            node[k] = {}
        node = node[k]
    node[keys[-1]] = value


@pytest.mark.parametrize(("edit", "message"), ERRORS)
def test_errors_name_file_and_key(edit: str, message: str) -> None:
    import copy

    data = copy.deepcopy(BASE)
    path, _, value = edit.partition(": ")
    _edit(data, path, yaml.safe_load(value))
    with pytest.raises(InputError) as info:
        parse_definition(data, "heat.stencil.yaml")
    assert str(info.value).startswith("heat.stencil.yaml: ")
    assert message in str(info.value)


def test_missing_required_keys() -> None:
    with pytest.raises(InputError, match=r"x\.stencil\.yaml: terms: missing"):
        parse_definition({"dims": 2, "fields": ["a"], "output": "b"}, "x.stencil.yaml")
    with pytest.raises(InputError, match="must be a mapping"):
        parse_definition([1], "x.stencil.yaml")


def test_duplicates_merge_numbers_and_keep_named_terms() -> None:
    data: dict[str, Any] = {
        "dims": 2,
        "fields": ["u"],
        "output": "v",
        "coefficients": ["c"],
        "values": {"c": 1.0},
        "terms": [
            {"field": "u", "offset": [1, 0], "coefficient": 0.25},
            {"field": "u", "offset": [1, 0], "coefficient": 0.5},
        ],
    }
    d = parse_definition(data, "d.stencil.yaml")
    assert len(d.terms) == 1 and d.terms[0].coefficient.factor == 0.75
    # u + c*(... - 6u): the centre weight 1 - 6c is a number term plus a named one.
    data["terms"].append({"field": "u", "offset": [1, 0], "coefficient": "-6*c"})
    d = parse_definition(data, "d.stencil.yaml")
    assert [t.offset for t in d.terms] == [(1, 0, 0), (1, 0, 0)]
    u = np.arange(12.0, dtype=np.float32).reshape(3, 4)
    out = d.reference({"u": u}, np.zeros_like(u), {"c": 0.5})
    assert out[1, 1] == np.float32(0.75 * u[1, 2] - 3.0 * u[1, 2])


def test_yaml_round_trip(tmp_path: Path) -> None:
    d = parse(HOTSPOT)
    path = tmp_path / "hotspot.stencil.yaml"
    path.write_text(d.to_yaml())
    again = load_definition(path)
    assert again == d
    lifted = parse(HOTSPOT + "original: {source: h.cl, kernel: calc_temp, local: [16, 16]}\n")
    assert lifted.original == {"source": "h.cl", "kernel": "calc_temp", "local": [16, 16]}
    path.write_text(lifted.to_yaml())
    assert load_definition(path) == lifted
    plain = parse(
        "dims: 2\nfields: [a]\noutput: b\nterms: [{field: a, offset: [1, 0]}]", "p.stencil.yaml"
    )
    path.write_text(plain.to_yaml())
    assert load_definition(path) == plain


def test_load_definition_errors(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="not found"):
        load_definition(tmp_path / "none.stencil.yaml")
    bad = tmp_path / "bad.stencil.yaml"
    bad.write_text("dims: [\n")
    with pytest.raises(InputError, match=r"bad\.stencil\.yaml"):
        load_definition(bad)


# ---------------------------------------------------------------------------------------
# the reference against a direct loop


def edge(boundary: str, i: int, n: int) -> int:
    """Where index ``i`` of an axis of ``n`` points is read (zero: clamped, then read as
    0 by the caller)."""
    if 0 <= i < n:
        return i
    if boundary == "wrap":
        return i % n
    if boundary == "reflect":  # about the edge point: -1 reads 1
        return -i if i < 0 else 2 * n - 2 - i
    if boundary == "symmetric":  # the edge repeated: -1 reads 0
        return -1 - i if i < 0 else 2 * n - 1 - i
    return min(max(i, 0), n - 1)


def loop_reference(
    d: StencilDefinition,
    inputs: dict[str, np.ndarray],
    out0: np.ndarray,
) -> np.ndarray:
    """Point by point, in the element type: the semantics written out plainly."""
    t = np.float32 if d.dtype == "float32" else np.float64
    out = out0.astype(t).copy()
    shape = out.shape if d.dims == 3 else (1, *out.shape)
    nz, ny, nx = shape
    rx, ry, rz = d.radius
    arrays = {k: (v if d.dims == 3 else v[np.newaxis]).astype(t) for k, v in inputs.items()}
    o3 = out if d.dims == 3 else out[np.newaxis]
    for z, y, x in itertools.product(range(nz), range(ny), range(nx)):
        inside = rz <= z < nz - rz and ry <= y < ny - ry and rx <= x < nx - rx
        if d.boundary == "interior" and not inside:
            continue
        acc = t(0)
        for term in d.terms:
            dx, dy, dz = term.offset
            zz, yy, xx = (
                edge(d.boundary, i, n) for i, n in ((z + dz, nz), (y + dy, ny), (x + dx, nx))
            )
            c = term.coefficient.typed_value(d.values, d.dtype)
            v = arrays[term.field][zz, yy, xx]
            if d.boundary == "zero" and (zz, yy, xx) != (z + dz, y + dy, x + dx):
                v = t(0)  # beyond an edge: 0
            acc = t(acc + t(c * v))
        if not d.constant.is_zero:
            acc = t(acc + d.constant.typed_value(d.values, d.dtype))
        o3[z, y, x] = acc
    return out


def random_definition(
    rng: np.random.Generator, dims: int, dtype: str, boundary: str
) -> StencilDefinition:
    radius = int(rng.integers(1, 4))
    offsets: set[tuple[int, ...]] = set()
    while len(offsets) < int(rng.integers(2, 8)):
        offsets.add(tuple(int(v) for v in rng.integers(-radius, radius + 1, size=dims)))
    terms: list[dict[str, Any]] = []
    for o in sorted(offsets):
        coef: Any = float(rng.uniform(-1, 1))
        if rng.random() < 0.3:
            coef = f"{coef}*a"
        terms.append({"field": "u", "offset": list(o), "coefficient": coef})
    terms.append({"field": "p", "coefficient": "b"})
    return parse_definition(
        {
            "dims": dims,
            "dtype": dtype,
            "boundary": boundary,
            "fields": ["u", "p"],
            "output": "out",
            "coefficients": ["a", "b"],
            "values": {"a": float(rng.uniform(0.5, 2)), "b": float(rng.uniform(-1, 1))},
            "terms": terms,
            "constant": "0.5*a",
        },
        "r.stencil.yaml",
    )


@pytest.mark.parametrize("dims", [2, 3])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("boundary", ["interior", "clamp", "zero", "wrap", "reflect", "symmetric"])
def test_reference_matches_a_direct_loop(dims: int, dtype: str, boundary: str) -> None:
    rng = np.random.default_rng(dims * 100 + len(dtype) * 10 + len(boundary))
    for _ in range(3):
        d = random_definition(rng, dims, dtype, boundary)
        shape = (7, 9, 11) if dims == 3 else (9, 13)
        inputs = {f: rng.random(shape) for f in d.fields}
        out0 = rng.random(shape)
        got = d.reference(inputs, out0)
        want = loop_reference(d, inputs, out0)
        assert got.dtype == np.dtype(dtype)
        np.testing.assert_array_equal(got, want)


def test_zero_reads_zero_beyond_the_edge_and_takes_no_pad() -> None:
    """1D in x: ``out[x] = u[x-1] + u[x+1]``, the taps beyond the edge 0; a pad is refused
    with the zero boundary (the pad would hold the neighbours)."""
    data: dict[str, Any] = {
        "dims": 2,
        "boundary": "zero",
        "fields": ["u"],
        "output": "v",
        "terms": [{"field": "u", "offset": [-1, 0]}, {"field": "u", "offset": [1, 0]}],
    }
    d = parse_definition(data, "z.stencil.yaml")
    u = np.arange(1, 7, dtype=np.float32).reshape(1, 6)
    got = d.reference({"u": u}, np.full((1, 6), -7, np.float32))
    np.testing.assert_array_equal(got, [[2, 4, 6, 8, 10, 5]])
    with pytest.raises(InputError, match=r"pad\.u: .*zero boundary they read 0"):
        parse_definition({**data, "pad": {"u": [1, 0]}}, "z.stencil.yaml")


def test_interior_keeps_the_prior_output() -> None:
    d = from_weights("s", [(0, 0, 0), (2, 0, 0)], [1.0, 1.0], dims=2)
    u = np.arange(30, dtype=np.float32).reshape(5, 6)
    out0 = np.full((5, 6), -7, dtype=np.float32)
    got = d.reference({"src": u}, out0)
    assert (got[:, :2] == -7).all() and (got[:, 4:] == -7).all()
    np.testing.assert_array_equal(got[:, 2:4], u[:, 2:4] + u[:, 4:6])
    assert d.radius == (2, 0, 0)


@pytest.mark.parametrize("rim", ["copy", -2.5])
def test_a_written_rim_is_a_copy_or_a_constant(rim: str | float) -> None:
    """``rim: copy`` writes the rim with the primary field's values, ``rim: <number>``
    with the constant; the interior is the stencil's either way, and the definition
    round-trips through YAML."""
    data: dict[str, Any] = {
        "dims": 2,
        "rim": rim,
        "fields": ["u", "w"],
        "output": "v",
        "terms": [
            {"field": "u", "offset": [-1, 0]},
            {"field": "u", "offset": [0, 1]},
            {"field": "w", "coefficient": 2},
        ],
    }
    d = parse_definition(data, "r.stencil.yaml")
    assert parse_definition(yaml.safe_load(d.to_yaml()), "again.stencil.yaml") == d
    u = np.arange(20, dtype=np.float32).reshape(4, 5)
    w = np.full((4, 5), 0.5, np.float32)
    got = d.reference({"u": u, "w": w}, np.full((4, 5), -7, np.float32))
    inner = (slice(1, 3), slice(1, 4))
    np.testing.assert_array_equal(got[inner], u[1:3, :3] + u[2:4, 1:4] + 1)
    edge = np.ones((4, 5), bool)
    edge[inner] = False
    want = u[edge] if rim == "copy" else np.full(int(edge.sum()), rim, np.float32)
    np.testing.assert_array_equal(got[edge], want)


def test_a_written_rim_covers_an_array_narrower_than_the_stencil() -> None:
    """An array no wider than twice the radius has no interior: every point is rim."""
    d = parse_definition(
        {
            "dims": 2,
            "rim": "copy",
            "fields": ["u"],
            "output": "v",
            "terms": [{"field": "u", "offset": [-2, 0]}, {"field": "u", "offset": [2, 0]}],
        },
        "r.stencil.yaml",
    )
    u = np.arange(8, dtype=np.float32).reshape(2, 4)
    np.testing.assert_array_equal(d.reference({"u": u}, np.zeros((2, 4), np.float32)), u)


@pytest.mark.parametrize(
    ("change", "why"),
    [
        ({"boundary": "clamp"}, "rim: the clamp boundary .* only with boundary: interior"),
        ({"boundary": "zero"}, "rim: the zero boundary"),
        ({"rim": "mirror"}, "rim: expected keep, copy or a number, got 'mirror'"),
        ({"rim": True}, "rim: expected keep, copy or a number"),
        ({"rim": float("nan")}, "rim: expected a finite number"),
    ],
)
def test_a_rim_is_refused_saying_why(change: dict[str, Any], why: str) -> None:
    data: dict[str, Any] = {
        "dims": 2,
        "rim": "copy",
        "fields": ["u"],
        "output": "v",
        "terms": [{"field": "u", "offset": [-1, 0]}],
        **change,
    }
    with pytest.raises(InputError, match=why):
        parse_definition(data, "r.stencil.yaml")


def test_reach_is_each_sides_largest_offset() -> None:
    """The margins of ``band: reach``: how far the offsets reach below and above each
    axis (x, y, z), 0 on a side none reaches; symmetric offsets give the radius."""
    assert reach_of([(-1, 0, 0), (0, 0, 0)]) == ((1, 0, 0), (0, 0, 0))
    assert reach_of([(0, 0, 0), (0, 1, 0), (0, 2, 0), (1, 0, 0)]) == ((0, 0, 0), (1, 2, 0))
    assert reach_of([(-2, 0, 0), (0, 1, -1), (1, 0, 0)]) == ((2, 0, 1), (1, 1, 0))
    assert reach_of([(1, 1, 0), (2, 3, 0)]) == ((0, 0, 0), (2, 3, 0))  # never the centre
    star = [(-1, 0, 0), (1, 0, 0), (0, -2, 0), (0, 2, 0)]
    assert reach_of(star) == ((1, 2, 0), (1, 2, 0))


UPWIND = {
    "dims": 2,
    "fields": ["u"],
    "output": "v",
    "terms": [{"field": "u", "offset": [-1, 0], "coefficient": 0.3}, {"field": "u"}],
}


def test_band_reach_writes_up_to_the_edge_it_does_not_read_beyond() -> None:
    """``band: reach`` writes every point whose taps lie inside the array: for taps at
    x-1 and x, columns 1 .. NX-1 of every row; the default (radius) keeps the last
    column too, as every definition before the band did; the band round-trips."""
    reach = parse_definition({**UPWIND, "band": "reach"}, "u.stencil.yaml")
    radius = parse_definition(UPWIND, "u.stencil.yaml")
    assert reach.margins == ((1, 0, 0), (0, 0, 0)) and radius.margins == ((1, 0, 0),) * 2
    u = np.random.default_rng(3).uniform(-1, 1, (6, 9)).astype(np.float32)
    init = np.full(u.shape, 7.0, np.float32)
    want = init.copy()
    want[:, 1:] = 0.3 * u[:, :-1] + u[:, 1:]
    assert np.allclose(reach.reference({"u": u}, init), want, rtol=0, atol=1e-6)
    kept = radius.reference({"u": u}, init)
    assert (kept[:, -1] == 7.0).all() and np.allclose(kept[:, :-1], want[:, :-1], atol=1e-6)
    assert reach.to_dict()["band"] == "reach" and "band" not in radius.to_dict()
    assert parse_definition(reach.to_dict(), "again.stencil.yaml") == reach


@pytest.mark.parametrize(
    ("change", "why"),
    [
        ({"band": "tight"}, "band: expected one of radius, reach"),
        ({"band": "reach", "boundary": "clamp"}, "band: the clamp boundary writes every point"),
        ({"band": "reach", "rim": "copy"}, r"band: band: reach keeps its rim \(rim: keep\)"),
    ],
)
def test_a_band_is_refused_saying_why(change: dict[str, Any], why: str) -> None:
    with pytest.raises(InputError, match=why):
        parse_definition({**UPWIND, **change}, "b.stencil.yaml")


def test_tolerance_scales_with_dtype_and_terms() -> None:
    d = parse(HOTSPOT)
    t32 = d.tolerance(1.0)
    d64 = parse(HOTSPOT.replace("float32", "float64"))
    assert 0 < d64.tolerance(1.0) < t32 < 1e-4


@pytest.mark.parametrize(
    ("boundary", "want"),
    [
        ("wrap", [8, 4, 6, 8, 10, 6]),  # -1 reads 6, 6 reads 1
        ("reflect", [4, 4, 6, 8, 10, 10]),  # -1 reads 2, 6 reads 5
        ("symmetric", [3, 4, 6, 8, 10, 11]),  # -1 reads 1, 6 reads 6
    ],
)
def test_mapped_boundaries_read_beyond_the_edge_where_numpy_pad_does(
    boundary: str, want: list[int]
) -> None:
    """1D in x: ``out[x] = u[x-1] + u[x+1]`` over u = 1..6; a pad is refused (the
    boundary, not a pad, says what lies beyond the edge), and an axis no longer than the
    radius is refused when the reference runs."""
    data: dict[str, Any] = {
        "dims": 2,
        "boundary": boundary,
        "fields": ["u"],
        "output": "v",
        "terms": [{"field": "u", "offset": [-1, 0]}, {"field": "u", "offset": [1, 0]}],
    }
    d = parse_definition(data, "m.stencil.yaml")
    u = np.arange(1, 7, dtype=np.float32).reshape(1, 6)
    got = d.reference({"u": u}, np.full((1, 6), -7, np.float32))
    np.testing.assert_array_equal(got, [want])
    with pytest.raises(InputError, match=rf"pad\.u: .*{boundary} boundary they are the points"):
        parse_definition({**data, "pad": {"u": [1, 0]}}, "m.stencil.yaml")
    with pytest.raises(ValueError, match="longer than the radius"):
        d.reference({"u": u[:, :1]}, np.zeros((1, 1), np.float32))

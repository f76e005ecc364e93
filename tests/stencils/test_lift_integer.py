"""Integer elements: the definition keys, the conversions, and lifting a kernel of
integer elements on numpy kernels (fast; the corpus's OpenCL kernels are lifted in
test_lift.py and verified bit for bit against their originals)."""

from __future__ import annotations

from fractions import Fraction
from typing import Any

import numpy as np
import pytest
import yaml

from gtune.exceptions import InputError
from gtune.stencils.definition import parse_definition
from gtune.stencils.elements import store_macro, to_storage
from gtune.stencils.lift import Interface, NotAStencil, ScalarArg, lift_with
from gtune.stencils.lift_int import simplest
from tests.inprocess import Cli

# evaluators share the session's worker processes (tests/conftest.py)
pytestmark = pytest.mark.usefixtures("shared_workers")

BINOMIAL = [
    {"field": "src", "offset": [dx, dy], "coefficient": f"{(2 - abs(dx)) * (2 - abs(dy))}/16"}
    for dy in (-1, 0, 1)
    for dx in (-1, 0, 1)
]
SHARPEN = [
    {"field": "src", "coefficient": 1.5},
    *(
        {"field": "src", "offset": o, "coefficient": -0.125}
        for o in ([1, 0], [-1, 0], [0, 1], [0, -1])
    ),
]


def _definition(storage: str, convert: str, terms: Any, boundary: str = "clamp") -> Any:
    data = {
        "name": "k",
        "dims": 2,
        "dtype": "float32",
        "boundary": boundary,
        "fields": ["src"],
        "output": "dst",
        "storage": storage,
        "convert": convert,
        "terms": terms,
    }
    return parse_definition(data, "k.stencil.yaml")


def _face(storage: str, shape: tuple[int, int] = (20, 24)) -> Interface:
    sizes = (ScalarArg("nx", "int32", shape[1], "x"), ScalarArg("ny", "int32", shape[0], "y"))
    return Interface(
        "numpy.cl", "k", shape, storage, ("src",), "dst", ("src", "dst", "nx", "ny"), sizes
    )


def _probe(defn: Any) -> Any:
    def probe(inputs: Any, out: np.ndarray, scalars: Any) -> np.ndarray:
        return np.asarray(defn.reference(dict(inputs), out))

    return probe


def test_simplest_number_in_an_interval() -> None:
    assert simplest(Fraction(105, 1000), Fraction(115, 1000)) == Fraction(1, 9)
    assert simplest(Fraction(1, 10), Fraction(1, 8)) == Fraction(1, 8)
    assert simplest(Fraction(-5, 4), Fraction(-3, 4)) == -1
    assert simplest(Fraction(-1, 3), Fraction(1, 3)) == 0
    assert simplest(Fraction(3, 16), Fraction(3, 16)) == Fraction(3, 16)


def test_conversions_round_as_opencl_does() -> None:
    acc = np.array([-1.5, -0.5, 0.5, 1.5, 2.5, 2.7, 300.0, np.nan], np.float32)
    assert to_storage(acc, "int8", "rte_sat").tolist() == [-2, 0, 0, 2, 2, 3, 127, 0]
    assert to_storage(acc, "int8", "half_up_sat").tolist() == [-1, 0, 1, 2, 3, 3, 127, 0]
    assert to_storage(acc, "uint8", "rtz_sat").tolist() == [0, 0, 0, 1, 2, 2, 255, 0]
    assert store_macro("uint8", "rte_sat", "float") == "#define STORE(v) convert_uchar_sat_rte(v)"
    assert store_macro("int16", "half_up", "float") == "#define STORE(v) convert_short((v) + 0.5f)"
    assert store_macro("int32", "rtz_sat", "double") == "#define STORE(v) convert_int_sat(v)"


@pytest.mark.parametrize(
    ("storage", "convert", "terms"),
    [
        ("uint8", "rte_sat", BINOMIAL),
        ("uint8", "half_up_sat", BINOMIAL),
        ("uint16", "rtz_sat", BINOMIAL),
        ("int8", "half_up_sat", SHARPEN),
        ("int16", "rte_sat", SHARPEN),
        ("int16", "rtz_sat", SHARPEN),
        ("int32", "half_up_sat", BINOMIAL),
    ],
)
def test_lifting_finds_the_weights_and_the_rounding(storage: str, convert: str, terms: Any) -> None:
    """Single values that land on ties and negative sums tell the roundings apart; the
    lifted definition equals the kernel bit for bit."""
    kernel = _definition(storage, convert, terms)
    got, launches = lift_with(_face(storage), _probe(kernel), name="k")
    assert got.storage == storage and got.convert == convert
    assert sorted((t.offset, t.coefficient.factor) for t in got.terms) == sorted(
        (t.offset, t.coefficient.factor) for t in kernel.terms
    )
    assert 5 <= launches <= 40
    again = parse_definition(yaml.safe_load(got.to_yaml()), "k.stencil.yaml")
    assert again == got


@pytest.mark.parametrize(
    ("storage", "convert", "terms"), [("uint8", "rte_sat", BINOMIAL), ("int16", "rtz_sat", SHARPEN)]
)
def test_zero_padding_of_integer_elements_lifts_to_the_zero_boundary(
    storage: str, convert: str, terms: Any
) -> None:
    """A uchar blur (or a sharpen of shorts) whose taps beyond the edge are skipped:
    ``boundary: zero``, bit for bit."""
    kernel = _definition(storage, convert, terms, "zero")
    got, _ = lift_with(_face(storage), _probe(kernel), name="k")
    assert got.boundary == "zero" and got.convert == convert
    assert sorted((t.offset, t.coefficient.factor) for t in got.terms) == sorted(
        (t.offset, t.coefficient.factor) for t in kernel.terms
    )


def test_an_overflow_that_wraps_is_refused() -> None:
    kernel = _definition("uint8", "rtz_sat", SHARPEN, "interior")

    def wraps(inputs: Any, out: np.ndarray, scalars: Any) -> np.ndarray:
        res = out.copy()
        a = inputs["src"].astype(np.float32)
        v = 1.5 * a[1:-1, 1:-1] - 0.125 * (a[1:-1, 2:] + a[1:-1, :-2] + a[2:, 1:-1] + a[:-2, 1:-1])
        res[1:-1, 1:-1] = np.trunc(v).astype(np.int64).astype(np.uint8)  # modulo 256
        return res

    assert kernel.storage == "uint8"
    with pytest.raises(NotAStencil, match=r"without saturation|no rounding|bit for bit"):
        lift_with(_face("uint8"), wraps, name="k")


def test_a_max_filter_on_pixels_is_refused() -> None:
    def maxf(inputs: Any, out: np.ndarray, scalars: Any) -> np.ndarray:
        res = out.copy()
        a = inputs["src"]
        res[1:-1, 1:-1] = np.maximum.reduce([a[1:-1, 1:-1], a[1:-1, 2:], a[2:, 1:-1]])
        return res

    with pytest.raises(NotAStencil, match=r"no rounding|bit for bit"):
        lift_with(_face("uint8"), maxf, name="k")


@pytest.mark.parametrize(
    ("change", "why"),
    [
        ({"storage": "uint9"}, "expected an integer element type"),
        ({"convert": "round"}, "expected how a result becomes a uint8"),
        ({"steps": 3}, "one step"),
        ({"storage": "float32"}, "only a definition with integer elements"),
    ],
)
def test_bad_integer_keys_are_errors(change: dict[str, Any], why: str) -> None:
    data = _definition("uint8", "rte_sat", BINOMIAL).to_dict()
    data.update(change)
    with pytest.raises(InputError, match=why):
        parse_definition(data, "k.stencil.yaml")


@pytest.mark.opencl
@pytest.mark.slow
@pytest.mark.parametrize("name", ["blur_u8", "binomial_u16", "laplace_u8_f32"])
def test_integer_kernel_to_drop_in_tuned_kernel_bit_for_bit(
    name: str, tmp_path: Any, gtune_here: Cli
) -> None:
    """lift -> run (verified exactly against the original) -> export -> the example,
    which checks the exported kernel against the original bit for bit, at the tuned
    size (blur_u8 at a larger one too: a size other than the tuned one is served alike
    whatever the element type)."""

    from tests.conftest import run_tuned_example
    from tests.stencils.plain_helpers import lift_run_export

    out, tuned = lift_run_export(name, tmp_path, gtune_here)
    for extra in ([], ["--size", "256x128"])[: 2 if name == "blur_u8" else 1]:
        check = run_tuned_example(tuned, "--original", str(out), *extra)
        assert check.returncode == 0, check.stdout + check.stderr
        assert "max |tuned - original| = 0 (ok)" in check.stdout


@pytest.mark.parametrize(("storage", "rim"), [("uint8", "copy"), ("int16", 0)])
def test_an_integer_kernel_with_a_written_rim_lifts_to_it(storage: str, rim: Any) -> None:
    """The stencil inside and, on the rim, a copy of the input (or 0): the interior
    boundary with ``rim: copy`` (or ``rim: 0``), whose reference equals the kernel bit for
    bit on fresh inputs."""
    terms = [
        {"field": "src", "offset": [-1, 0], "coefficient": 0.5},
        {"field": "src", "offset": [1, 1], "coefficient": 0.25},
    ]
    data = {**_definition(storage, "rte_sat", terms, "interior").to_dict(), "rim": rim}
    want = parse_definition(data, "k.stencil.yaml")
    got, _ = lift_with(_face(storage), _probe(want), name="k")
    assert (got.boundary, got.rim, got.convert) == ("interior", want.rim, "rte_sat")
    rng = np.random.default_rng(11)
    src = rng.integers(0, 100, (20, 24)).astype(storage)
    out = rng.integers(0, 100, (20, 24)).astype(storage)
    np.testing.assert_array_equal(
        got.reference({"src": src}, out), want.reference({"src": src}, out)
    )


def test_a_one_sided_integer_kernel_lifts_with_band_reach() -> None:
    """Pixels averaged with their left and lower neighbours (taps x-1, y+1), written
    where every tap lies inside: the interior boundary with ``band: reach``, bit for bit;
    one column short of that band it is refused for its band."""
    terms = [
        {"field": "src", "offset": [-1, 0], "coefficient": 0.5},
        {"field": "src", "offset": [0, 1], "coefficient": 0.25},
        {"field": "src", "coefficient": 0.25},
    ]
    data = {**_definition("uint8", "rte_sat", terms, "interior").to_dict(), "band": "reach"}
    want = parse_definition(data, "k.stencil.yaml")
    got, _ = lift_with(_face("uint8"), _probe(want), name="k")
    assert (got.boundary, got.band, got.margins) == ("interior", "reach", want.margins)
    rng = np.random.default_rng(12)
    src = rng.integers(0, 256, (20, 24)).astype(np.uint8)
    out = rng.integers(0, 256, (20, 24)).astype(np.uint8)
    np.testing.assert_array_equal(
        got.reference({"src": src}, out), want.reference({"src": src}, out)
    )

    def short(inputs: Any, out: np.ndarray, scalars: Any) -> np.ndarray:
        res = np.asarray(want.reference(dict(inputs), out)).copy()
        res[:, 1] = out[:, 1]  # the first column it may write, left as it was
        return res

    with pytest.raises(NotAStencil, match="the points whose taps all lie inside the array"):
        lift_with(_face("uint8"), short, name="k")


@pytest.mark.opencl
@pytest.mark.parametrize("name", ["gauss_u8_rte"])  # (blur_u8: its drop-in test above)
def test_integer_kernel_tuned_with_the_vector_technique_against_its_original(
    name: str, tmp_path: Any, gtune_here: Cli
) -> None:
    """A lifted corpus kernel of uchar pixels tuned with ``--technique vec``: every
    configuration measured (vectors of 2 to 16 uchars among them) verified exactly
    against the original kernel's output."""
    import json

    from tests.conftest import ROOT

    entry = yaml.safe_load((ROOT / "stencils/plain/manifest.yaml").read_text())["kernels"][name]
    out = tmp_path / f"{name}.stencil.yaml"
    plain = str(ROOT / "stencils/plain" / entry["source"])
    done = gtune_here("lift", plain, "--size", entry["size"], *entry["flags"], "-o", str(out))
    assert done.returncode == 0, done.stderr
    report = tmp_path / "report.json"
    args = ["--size", "128x32", "--budget", "6", "--technique", "vec", "--runs", "1"]
    ran = gtune_here("run", str(out), *args, "--json", str(report), db=tmp_path / "r.db")
    assert ran.returncode == 0, ran.stderr
    assert "output of the original kernel" in ran.stderr
    data = json.loads(report.read_text())
    assert data["unverified"] is None
    results = [e for r in data["runs"] for e in r["outcome"]["trace"]]
    assert results and all(r["status"] == "ok" for r in results), results
    assert any(r["config"]["VX"] > 1 for r in results)

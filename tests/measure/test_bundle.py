"""Bundled builds' source (gtune.measure.bundle), pure: what each copy of a bundle
means is what the source means built alone with its options. The C preprocessor
(``cpp``) expands both; with every copy's names given back their own, the bundle's
tokens are those of the single builds one after the other."""

from __future__ import annotations

import random
import re
import shutil
import subprocess
from collections.abc import Sequence
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gtune.measure.bundle import SUFFIX, Bundle, bundle, scan

ROOT = Path(__file__).resolve().parents[2]
CORPUS = sorted(
    [
        *ROOT.glob("tests/data/corpus/*.cl"),
        *ROOT.glob("stencils/plain/*.cl"),
    ]
)
_KERNEL = re.compile(
    r"\b(?:__kernel|kernel)\b(?:\s+__attribute__\s*\(\(.*?\)\))?\s+void\s+(\w+)", re.S
)
_TOKEN = re.compile(r'"(?:\\.|[^"\\])*"|[A-Za-z_]\w*|\d[\w.]*|\S')
CPP = shutil.which("cpp")
needs_cpp = pytest.mark.skipif(CPP is None, reason="no C preprocessor (cpp) here")


def _expand(source: str, options: Sequence[str] = ()) -> list[str] | None:
    """The tokens ``source`` preprocesses to with ``options`` (None: an #error)."""
    assert CPP is not None
    defines = [o for o in options if o.startswith("-D")]  # the OpenCL ones are cpp's too
    proc = subprocess.run(
        [CPP, "-P", "-w", "-undef", *defines, "-"],
        input=source,
        capture_output=True,
        text=True,
        timeout=60,
    )
    if proc.returncode != 0:
        return None
    return _TOKEN.findall(proc.stdout)


def _same_as_single_builds(source: str, name: str, configs: list[list[str]]) -> None:
    singles = [_expand(source, c) for c in configs]
    assert singles[0] is not None, "the first configuration preprocesses"
    configs = [c for c, s in zip(configs, singles, strict=True) if s is not None]
    made = bundle(source, name, configs)
    assert isinstance(made, Bundle), made
    assert made.names == [f"{name}{SUFFIX}{i}" for i in range(len(configs))]
    tokens = _expand(made.source, made.options)
    assert tokens is not None
    copies = []
    for tok in tokens:
        m = re.fullmatch(r"(\w+)" + SUFFIX + r"(\d+)", tok)
        copies.append(int(m.group(2)) if m else None)
    # each copy's names carry its own index, in order
    seen = [c for c in copies if c is not None]
    assert seen == sorted(seen) and set(seen) == set(range(len(configs)))
    back = [re.sub(SUFFIX + r"\d+$", "", t) for t in tokens]
    assert back == [t for s in singles if s is not None for t in s]


def _name(source: str) -> str:
    m = _KERNEL.search(source)
    assert m, "no kernel"
    return m.group(1)


def _corpus_configs(source: str, rng: random.Random, k: int) -> list[list[str]]:
    """``k`` option lists: the sizes and some of what the source tests with #if/#ifdef
    (a macro one copy defines and the next leaves to the source's own default)."""
    macros = sorted(
        set(re.findall(r"#\s*(?:if|ifdef|ifndef|elif)\b[^\n]*?\b([A-Z][A-Z0-9_]*)", source))
    )
    out = []
    for i in range(k):
        share = (1.0, 0.0)[i] if i < 2 else 0.5  # the first all of them, the second none
        opts = [f"-DNX={rng.choice((32, 64))}", f"-DNY={rng.choice((16, 32))}", "-DNZ=8"]
        opts += [
            f"-D{m}={rng.choice((1, 2, 4))}"
            for m in macros
            if m not in ("NX", "NY", "NZ") and rng.random() < share
        ]
        opts += ["-cl-mad-enable"]
        out.append(opts)
    return out


@needs_cpp
@pytest.mark.parametrize("path", CORPUS, ids=lambda p: p.name)
@settings(max_examples=3, deadline=None)
@given(k=st.integers(2, 4), seed=st.integers(0, 1000))
def test_corpus_copies_mean_their_single_builds(path: Path, k: int, seed: int) -> None:
    source = path.read_text()
    if "#include" in source:
        assert isinstance(bundle(source, _name(source), [[]]), str)
        return
    _same_as_single_builds(source, _name(source), _corpus_configs(source, random.Random(seed), k))


DEFINITIONS = sorted((ROOT / "tests" / "data" / "definitions").glob("*.stencil.yaml"))


def _template(name: str) -> tuple[str, str, list[dict[str, int]], object]:
    from gtune.description import load_kernel

    path = ROOT / "stencils" / f"{name}.cl"
    kernel = load_kernel(path if path.exists() else ROOT / "tests/data/definitions" / name)
    small = {"NX": 32, "NY": 32, "NZ": 16}
    kernel = kernel.with_sizes({k: small.get(k, v) for k, v in kernel.sizes.items()})
    return kernel.source, kernel.name, [], kernel


@needs_cpp
@pytest.mark.parametrize(
    "stencil", ["heat3d", "jacobi2d", "box27", "hotspot", "life", *(d.name for d in DEFINITIONS)]
)
@settings(max_examples=3, deadline=None)
@given(seed=st.integers(0, 10_000))
def test_template_copies_mean_their_single_builds(stencil: str, seed: int) -> None:
    source, name, _, kernel = _template(stencil)
    rng = random.Random(seed)
    default = kernel.default_config() or {}  # type: ignore[attr-defined]
    configs = [kernel.defines(default)]  # type: ignore[attr-defined]
    for _ in range(rng.randint(1, 3)):
        cfg = dict(default)
        for p in kernel.parameters:  # type: ignore[attr-defined]
            values = p.domain.values(dict(kernel.sizes))  # type: ignore[attr-defined]
            if values and rng.random() < 0.5:
                cfg[p.name] = rng.choice(values)
        configs.append(kernel.defines(cfg))  # type: ignore[attr-defined]
    _same_as_single_builds(source, name, configs)


def test_names_of_every_kind_are_renamed() -> None:
    source = """
#ifndef GUARD_H
#define GUARD_H
#define SCALE 2
typedef float real_t;
typedef struct { real_t a; } pair_t;
struct point { int x, y; };
union bits { float f; uint u; };
enum colour { RED, GREEN = 2, BLUE };
__constant float weights[3] = {1.0f, 2.0f, 3.0f};
__constant sampler_t smp = CLK_NORMALIZED_COORDS_FALSE;
static inline real_t twice(real_t v) { return SCALE * v; }
float helper(float);
__kernel __attribute__((reqd_work_group_size(8, 1, 1)))
void k(__global float* out) { out[0] = twice(weights[0]) + helper(1.0f) + RED; }
__kernel void other(__global float* out) { struct point p; out[0] = p.x; }
float helper(float v) { return v; }
#endif
"""
    found = scan(source, "k")
    assert not found.why
    assert found.names == {
        "real_t", "pair_t", "point", "bits", "colour", "RED", "GREEN", "BLUE",
        "weights", "smp", "twice", "helper", "k", "other",
    }  # fmt: skip
    assert {"GUARD_H", "SCALE"} <= found.macros
    made = bundle(source, "k", [["-DN=1"], ["-DN=2"]])
    assert isinstance(made, Bundle)
    # the include guard and every other macro are undone after each copy
    assert made.source.count("#undef GUARD_H") == 2
    assert made.source.count("#undef N\n") == 2


@pytest.mark.parametrize(
    ("source", "options", "why"),
    [
        ('#include "h.h"\n__kernel void k() {}', [[]], "includes"),
        ("#pragma once\n__kernel void k() {}", [[]], "pragma once"),
        ("__kernel void k() {}", [["-cl-fast-relaxed-math"], []], "differ"),
        ("__kernel void k() {}", [["-UX"]], "undefines"),
        ("__kernel void k() {}\nfloat helper(void);", [["-Dhelper=1"]], "declares"),
        ("__kernel void k() { int a__gtb0; }", [[]], SUFFIX),
        ("#define k kk\n__kernel void k() {}", [[]], "macro"),
        ("float lo(float);\n__kernel void k(float2 v) { v.lo = lo(v.hi); }", [[]], "vector"),
    ],
)
def test_what_cannot_be_bundled_says_why(source: str, options: list[list[str]], why: str) -> None:
    made = bundle(source, "k", options)
    assert isinstance(made, str) and why in made


def test_common_options_are_kept_and_defines_become_source() -> None:
    made = bundle(
        "__kernel void k() {}", "k", [["-D", "A=1", "-DB", "-I", "x"], ["-DA=2", "-DB", "-I", "x"]]
    )
    assert isinstance(made, Bundle)
    assert made.options == ["-I", "x"]
    assert "#define A 1" in made.source and "#define A 2" in made.source
    assert "#define B 1" in made.source


@needs_cpp
def test_function_like_and_empty_defines_mean_what_the_option_means() -> None:
    source = "__kernel void k(__global float* o) { o[0] = SQR(3.0f) EMPTY; }"
    options = ["-DSQR(x)=((x)*(x))", "-DEMPTY="]
    _same_as_single_builds(source, "k", [options, ["-DSQR(y)=(y)", "-DEMPTY=+1.0f"]])

"""The exported kernel specialised to its configuration: conditionals resolved as C
resolves them, undecidable ones kept, unused macros and orphaned comments dropped, and
the real C preprocessor seeing the same tokens as in the whole source."""

from __future__ import annotations

import time
from dataclasses import replace

import pytest

from gtune.description import load_kernel
from gtune.specialise import cpp_difference, specialise_source
from gtune.stencils.definition import load_definition
from gtune.stencils.render import definition_kernel_of
from gtune.tuned import tuned_kernel
from tests.conftest import ROOT

SOURCE = """\
/* the size fixes the index type */
#if N > 100
typedef long idx_t;
#else
typedef int idx_t;
#endif
#define B A /* evaluated when used: A is defined below */
#define A 3
/* a comment on an unused macro goes with it */
#define UNUSED 7
#ifndef W
#define W 16
#endif
#if B == 3 && !defined(MISSING)
int three = W;
#elif N
int other;
#else /* a comment that runs on
         over two lines */
int none;
#endif
#if T > 1
int stepped;
#elif N > 2
int size_dependent;
#else
int one_step;
#endif
#ifdef __OPENCL_VERSION__
int maybe_predefined;
#endif
"""


def test_conditionals_resolve_as_c_does_and_undecidable_ones_stay() -> None:
    out = specialise_source(SOURCE, {"W": 32, "T": 1}, build_time=["N"])
    assert "int three = W;" in out and "int other" not in out and "int none" not in out
    assert "over two lines" not in out  # the #else's own comment went with it
    # the size is not known: its conditionals stay, an #elif opening what is left
    assert "#if N > 100" in out and "typedef long idx_t;" in out
    assert "#if N > 2\nint size_dependent;\n#else\nint one_step;\n#endif" in out
    assert "int stepped" not in out
    # a name an OpenCL compiler may predefine is not assumed undefined
    assert "#ifdef __OPENCL_VERSION__" in out
    # W's default and the unused macro (with its comment) are gone, and so are A and B:
    # only a decided conditional used them (B == 3 held: B read A's later definition)
    assert "#define W 16" not in out and "UNUSED" not in out and "unused macro" not in out
    assert "#define B" not in out and "#define A" not in out
    assert "\n\n\n" not in out


def test_a_define_inside_an_undecided_branch_makes_its_name_unknown() -> None:
    text = "#if N > 1\n#define K 1\n#endif\n#ifdef K\nint k;\n#endif\nint x = K;\n"
    out = specialise_source(text, {}, build_time=["N"])
    assert "#ifdef K\nint k;\n#endif" in out


def test_pasted_names_are_kept() -> None:
    text = (
        "#define CAT_(a, b) a##b\n#define CAT(a, b) CAT_(a, b)\n"
        "#define LANES2(v) v.s0 v.s1\n#define LANES4(v) LANES2(v) v.s2 v.s3\n"
        "#define LANES8(v) LANES4(v)\n#define STORE(v) CAT(LANES, VX)(v)\nSTORE(x)\n"
    )
    out = specialise_source(text, {"VX": 4})
    assert "#define LANES4" in out and "#define LANES2" in out
    assert cpp_difference(text, out, {"VX": 4}) is None


HEAT = ROOT / "stencils" / "heat3d.cl"
TECHNIQUES = {
    "global": {},
    "vec": {"VX": 4, "BX": 4, "WX": 4},
    "vec-rim": {"VX": 4, "BX": 4, "RIM": 1, "BY": 2},
    "local": {"LOCAL": 1, "WX": 8, "WY": 2, "WZ": 2},
    "stream": {"STREAM": 1, "WX": 8, "ZC": 4, "BX": 2, "CY": 2},
    "cyclic": {"CX": 2, "CY": 2, "CZ": 2, "WX": 4},
    "image": {"IMAGE": 1},
}


@pytest.mark.parametrize("technique", sorted(TECHNIQUES))
def test_every_heat3d_technique_is_specialised_and_checked(technique: str) -> None:
    kernel = load_kernel(HEAT, {"NX": 32, "NY": 16, "NZ": 16})
    config = {**(kernel.default_config() or {}), **TECHNIQUES[technique]}
    tuned = tuned_kernel(kernel, config)
    full = tuned_kernel(kernel, config, full_template=True)
    assert not tuned.notes  # the C preprocessor saw the same tokens
    lines = tuned.source.splitlines()
    # (vec-rim: 219 lines, with the element type's vector macros VIN and VOUT and the
    # six lines of the coefficients' macros; the hoist itself, for run-time weights
    # arrays, is not heat3d's: WQ_HOIST 0)
    assert len(lines) < (220 if technique in ("stream", "vec-rim") else 200)
    assert len(full.source.splitlines()) > 1500
    assert "gtune optimizing stencil template" not in tuned.source
    assert not any(line.startswith(("#ifndef WX", "#error")) for line in lines)
    # the header carries the short source
    assert tuned.header().count("\\n") == len(lines)


@pytest.mark.parametrize("tb", [2, 4])
@pytest.mark.parametrize("stream", [0, 1])
def test_temporal_kernels_are_specialised_and_checked(tb: int, stream: int) -> None:
    d = replace(load_definition(ROOT / "stencils" / "jacobi2d.stencil.yaml"), steps=4)
    kernel = definition_kernel_of(d, {"NX": 64, "NY": 32})
    change = {"STREAM": 1, "WX": 8, "WY": 1, "ZC": 4} if stream else {"WX": 8, "WY": 2}
    config = {**(kernel.default_config() or {}), **change, "TB": tb}
    tuned = tuned_kernel(kernel, config)
    assert not tuned.notes and "TB" in tuned.source
    assert len(tuned.source.splitlines()) < 300


def test_a_difference_after_the_preprocessor_is_reported() -> None:
    assert cpp_difference("int a = X;\n", "int a = 2;\n", {"X": 1}) is not None
    assert cpp_difference("int a = X;\n", "int a = X;\n", {"X": 1}) is None


def test_a_files_own_header_comment_stays() -> None:
    """A plain kernel's header comment describes the kernel, even where the conditional
    below it goes (REAL given at build time)."""
    text = (
        "#define WX 256\n\n/*\n * A 7-point stencil. REAL is float unless -DREAL=double.\n */\n"
        "#ifndef REAL\n#define REAL float\n#endif\n\n__kernel void k(__global REAL *a) {}\n"
    )
    out = specialise_source(text, {}, build_options=["-DREAL=double"])
    assert "A 7-point stencil" in out and "#ifndef REAL" not in out
    assert cpp_difference(text, out, {}, ["-DREAL=double"]) is None


def test_nested_macros_cost_no_more_than_flat_ones() -> None:
    """Each macro evaluated once per #if: 40 levels each naming the next twice (2**40
    expansions unshared) decide at once; a macro naming itself is left undecided."""
    nested = [f"#define M{i} (M{i + 1} + M{i + 1})" for i in range(40)] + ["#define M40 1"]
    text = "\n".join([*nested, "#if M0 > 0", "int yes;", "#endif", ""])
    started = time.monotonic()
    assert "int yes;" in specialise_source(text, {})
    assert time.monotonic() - started < 5
    loop = "#define A (A + 1)\n#if A > 0\nint maybe;\n#endif\n"
    assert "#if A > 0" in specialise_source(loop, {})


@pytest.mark.parametrize("vectors", [0, 1])
def test_temporal_zreg_kernels_are_specialised_and_checked(vectors: int) -> None:
    """heat3d's walk with the z-neighbours in registers, scalar and with vectors of 4
    points and one barrier per plane step (ZS): specialised, checked against the whole
    template by the C preprocessor, and readable (the vectors' macros stay)."""
    d = replace(load_definition(ROOT / "stencils" / "heat3d.stencil.yaml"), steps=8)
    kernel = definition_kernel_of(d, {"NX": 64, "NY": 64, "NZ": 64})
    change = (
        {"VX": 4, "BX": 4, "WX": 8, "WY": 8, "CY": 1, "ZS": 1}
        if vectors
        else {"WX": 16, "WY": 8, "CY": 2, "ZU": 1}
    )
    config = {**(kernel.default_config() or {}), "STREAM": 1, "ZREG": 2, "TB": 2, "ZC": 16}
    tuned = tuned_kernel(kernel, {**config, **change})
    assert not tuned.notes
    assert ("__local VT centre_v" in tuned.source) == bool(vectors)
    assert len(tuned.source.splitlines()) < (480 if vectors else 340)

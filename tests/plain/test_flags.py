"""Plain-kernel flags for other tuners' kernels: tied work-group sizes, roles,
constraints, includes, function-like macros, ceil division, warnings, and helper
functions read through their parameters."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from gtune.clsource import array_uses, find_functions
from gtune.exceptions import InputError
from gtune.expr import Expr
from gtune.kernel import domain_values
from gtune.plain import plain_kernel
from gtune.space.model import _divisions
from tests.inprocess import Cli

CORPUS = Path(__file__).parents[1] / "data" / "corpus"
TILE = {
    "sizes": [48, 40],
    "params": {"TS": "WX", "WPT": [1, 2, 4]},
    "local_size": ["WX", "WX"],
    "global_size": ["NX", "(NY+WPT-1)/WPT"],
    "default": {"WX": 8, "WPT": 1},
}


@pytest.mark.parametrize(
    "square",
    [
        {"local_size": ["WX", "WX"]},
        {"params": {"TS": "WX", "WPT": [1, 2, 4], "WY": "WX"}, "local_size": None},
    ],
)
def test_square_work_groups_tune_one_parameter(square):
    kernel = plain_kernel(CORPUS / "tile_square.cl", **{**TILE, **square})
    assert kernel.parameter_names == ["WX", "WPT"]
    assert domain_values(kernel)["WX"] == [1, 2, 4, 8, 16, 32]
    assert kernel.launch_sizes({"WX": 4, "WPT": 4}) == ((48, 10), (4, 4))
    defines = kernel.defines({"WX": 4, "WPT": 4})
    assert "-DWY=4" in defines and "-DTS=4" in defines
    assert any(o.startswith("-I") and o.endswith("corpus") for o in defines)  # header beside
    assert kernel.raw["constraints"][0] == "WX * WX <= MAX_WORK_GROUP_SIZE"
    roles = {a.name: a.role for a in kernel.arguments if a.kind == "buffer"}
    assert roles == {"in": "input", "out": "output"}  # in: read through a const helper


def test_ceil_division_in_a_global_size_demands_no_exact_division():
    assert _divisions(Expr("(6+WPTX-1)/WPTX", "x")) == []
    assert _divisions(Expr("(NY + (WPT - 1)) / WPT", "x")) == []
    assert _divisions(Expr("NY / WPT", "x")) == [("NY", "WPT")]
    assert _divisions(Expr("(NY + WPT - 1) / WX", "x")) == [("NY + WPT - 1", "WX")]
    # numbers written out, as launch code has them (a Rodinia-style halo'd block)
    assert _divisions(Expr("(NX + 13) / 14 * 16", "x")) == []
    assert _divisions(Expr("(13 + NX) / 14", "x")) == []
    assert _divisions(Expr("(NX + 12) / 14", "x")) == [("NX + 12", "14")]
    # N + D - 1 in any spelling (Rodinia's tile of WX less its halo)
    assert _divisions(Expr("(NY + WX - 3) / (WX - 2) * WX", "x")) == []
    assert _divisions(Expr("(NY + 2 * WX - 1) / (2 * WX)", "x")) == []
    assert _divisions(Expr("(NY + 2) / (WX - 2)", "x")) == [("NY + 2", "WX - 2")]
    assert _divisions(Expr("(NY * WX) / (WX - 2)", "x")) == [("NY * WX", "WX - 2")]


def test_roles_and_constraints_from_flags():
    kernel = plain_kernel(
        CORPUS / "smooth_vec.cl",
        sizes=[64, 8],
        params={"VW": [1, 2, 4]},
        global_size=["NX / VW", "NY"],
        scalars={"debug": "0"},
        roles={"dbg": "input"},
        constraints=["WX * VW <= 64", "WY <= 2"],
    )
    assert {a.name: a.role for a in kernel.arguments if a.kind == "buffer"}["dbg"] == "input"
    assert any(n.startswith("dbg: input: from --role (inferred output") for n in kernel.inferred)
    assert [c.text for c in kernel.constraints][-2:] == ["WX * VW <= 64", "WY <= 2"]
    with pytest.raises(InputError, match="input, output or inout"):
        plain_kernel(CORPUS / "shift.cl", sizes=[64], scalars={"n": "NX"}, roles={"out": "x"})
    with pytest.raises(InputError, match="no array parameter 'zz'"):
        plain_kernel(CORPUS / "shift.cl", sizes=[64], scalars={"n": "NX"}, roles={"zz": "input"})
    with pytest.raises(InputError) as info:
        plain_kernel(CORPUS / "shift.cl", sizes=[64], scalars={"n": "NX"}, constraints=["Q < 2"])
    assert info.value.source == "constraints"


def test_function_like_defines_and_includes(tmp_path: Path):
    headers = tmp_path / "headers"
    headers.mkdir()
    (headers / "ops.h").write_text("#define TWICE(v) (2 * (v))\n")
    src = tmp_path / "k.cl"
    src.write_text(
        '#include "ops.h"\n'
        "__kernel void k(__global const float* a, __global float* b) {\n"
        "    int i = get_global_id(0);\n"
        "    b[i] = TWICE(SQR(a[i]));\n"
        "}\n"
    )
    kernel = plain_kernel(
        src, sizes=[64], defines={"SQR(x)": "( (x) * (x) )"}, include_dirs=[headers]
    )
    assert "-DSQR(x)=((x)*(x))" in kernel.build_options
    assert f"-I{headers.resolve()}" in kernel.build_options
    with pytest.raises(InputError, match="cannot hold the space"):
        plain_kernel(src, sizes=[64], defines={"T": "unsigned int"}, include_dirs=[headers])
    with pytest.raises(InputError, match="cannot hold the space"):
        plain_kernel(src, sizes=[64], defines={"N": "x - -1"}, include_dirs=[headers])
    with pytest.raises(InputError, match="preprocessor"):
        plain_kernel(src, sizes=[64], defines={"SQR(x)": "x"})  # ops.h not found


def test_an_empty_define_is_a_macro_that_expands_to_nothing(tmp_path: Path):
    """``-D convertToDstT=`` (OpenCV's host, for no conversion): --define takes an empty
    value; --scalar, --array and --role still need one."""
    from gtune.commands._plain import parse_pairs

    pairs = ["convertToDstT=", "T=float", "CONV(x)= "]
    assert parse_pairs(pairs, "--define", macros=True) == {
        "convertToDstT": "",
        "T": "float",
        "CONV(x)": "",
    }
    for option in ("--scalar", "--array", "--role"):
        with pytest.raises(InputError, match=f"bad {option} 'n='; expected NAME=VALUE"):
            parse_pairs(["n="], option)
    with pytest.raises(InputError, match="bad --define 'X'"):
        parse_pairs(["X"], "--define", macros=True)
    src = tmp_path / "k.cl"
    src.write_text(
        "__kernel void k(__global const float* a, __global float* b) {\n"
        "    int i = get_global_id(0);\n"
        "    b[i] = convertToDstT(2.0f * a[i]);\n"
        "}\n"
    )
    kernel = plain_kernel(src, sizes=[64], defines={"convertToDstT": ""})
    assert "-DconvertToDstT=" in kernel.build_options
    assert {a.name: a.role for a in kernel.arguments} == {"a": "input", "b": "output"}


def test_warnings(tmp_path: Path):
    src = tmp_path / "k.cl"
    src.write_text(
        "#define BLOCK 8\n"
        "__kernel void k(__global const float* a, __global float* b) {\n"
        "    int i = get_global_id(0);\n"
        "    b[i] = a[i] * BLOCK;\n"
        "}\n"
    )
    kernel = plain_kernel(src, sizes=[8], params={"BLOCK": [4, 8]}, default={"WX": 16})
    warnings = [n for n in kernel.inferred if n.startswith("warning: ")]
    assert any("#define BLOCK (line 1) overrides --param BLOCK" in w for w in warnings)
    assert any("smaller than the default work-group's WX = 16" in w for w in warnings)
    assert not any("no --default" in w for w in warnings)
    quiet = plain_kernel(CORPUS / "shift.cl", sizes=[64], scalars={"n": "NX"})
    assert [n for n in quiet.inferred if n.startswith("warning: ")] == [
        "warning: no --default: speedups are reported over WX=1 (every parameter at its "
        "first value: a 1-wide work-group), which is also the reference; give the kernel's "
        "shipped launch with --default"
    ]
    # with a numpy reference the first configuration is not the reference; with nothing
    # to tune there is nothing to be faster than
    given = plain_kernel(
        CORPUS / "shift.cl",
        sizes=[64],
        scalars={"n": "NX"},
        reference=f"{CORPUS}/corpus_ref.py:box",
    )
    assert [n for n in given.inferred if n.startswith("warning: ")] == [
        "warning: no --default: speedups are reported over WX=1 (every parameter at its "
        "first value: a 1-wide work-group); give the kernel's shipped launch with --default"
    ]
    misspelt = plain_kernel(
        CORPUS / "blur_block.cl",
        sizes=[128, 8],
        params={"block_sizex": "WX", "block_size_y": "WY", "ROWS": [1, 2]},
    )
    assert [n for n in misspelt.inferred if "never names" in n] == [
        "warning: --param ROWS: the kernel's source never names ROWS (a misspelt macro?): "
        "it changes nothing, and tuning it costs budget",
        "warning: --param block_sizex: the kernel's source never names block_sizex (a "
        "misspelt macro?): it changes nothing",
    ]
    fixed = plain_kernel(CORPUS / "shift.cl", sizes=[64], scalars={"n": "NX"}, local_size=["16"])
    assert not [n for n in fixed.inferred if n.startswith("warning: ")]


def test_helper_functions_are_read_through_their_parameters():
    text = """
    float get(const __global float* p, int i) { return p[i]; }
    void put(__global float* q, int i, float v) { q[i] = v; }
    void both(__global float* r, int i) { r[i] += 1.0f; }
    void relay(__global float* s, int i) { put(s, i, 1.0f); }
    __kernel void k(__global float* a, __global float* b, __global float* c,
                    __global float* d) {
        int i = get_global_id(0);
        put(b, i, get(a, i));
        both(c, i);
        relay(d, i);
    }
    """
    functions = find_functions(text)
    assert set(functions) == {"get", "put", "both", "relay", "k"}
    body = functions["k"].body
    uses = {n: array_uses(body, n, functions) for n in "abcd"}
    assert uses["a"].read and not uses["a"].written
    assert uses["b"].written and not uses["b"].read
    assert uses["c"].read and uses["c"].written
    assert uses["d"].written and not uses["d"].read


@pytest.mark.opencl
def test_space_and_measure_take_the_plain_flags(tmp_path: Path, gtune_here: Cli):
    flags = [
        "--size",
        "48x44",
        "--param",
        "TS=WX",
        "--local",
        "WX,WX",
        "--param",
        "WPT=1,2,4,8",
        "--global",
        "NX,(NY+WPT-1)/WPT",
        "--default",
        "WX=4,WPT=1",
    ]
    kernel = str(CORPUS / "tile_square.cl")
    proc = gtune_here("space", kernel, *flags, "--json", "--no-min-groups")
    assert proc.returncode == 0, proc.stderr
    # square groups dividing both global sizes; WPT=8 does not divide NY=44 and stays
    expected = [
        (wx, wpt)
        for wx in (1, 2, 4, 8, 16, 32)
        for wpt in (1, 2, 4, 8)
        if 48 % wx == 0 and (44 + wpt - 1) // wpt % wx == 0
    ]
    assert (2, 8) in expected
    assert json.loads(proc.stdout)[0]["pruned"] == len(expected)
    proc = gtune_here(
        "measure", kernel, *flags, "--config", "WX=2,WPT=8", "--json", db=tmp_path / "r.db"
    )
    assert proc.returncode == 0, proc.stderr
    data = json.loads(proc.stdout)
    assert data["status"] == "ok" and data["extra"]["verification"].endswith(": out")
    bad = gtune_here("space", kernel, "--size", "48x40", "--role", "out=sideways")
    assert bad.returncode == 2 and "--role" in bad.stderr and "Traceback" not in bad.stderr


def test_work_group_values_from_param():
    kernel = plain_kernel(
        CORPUS / "shift.cl", sizes=[256], scalars={"n": "NX"}, params={"WX": [32, 64, 16]}
    )
    assert domain_values(kernel)["WX"] == [16, 32, 64]
    assert kernel.reference.config == {"WX": 16}
    with pytest.raises(InputError, match="positive work-group sizes"):
        plain_kernel(CORPUS / "shift.cl", sizes=[256], scalars={"n": "NX"}, params={"WX": [0]})


def test_headers_are_named_and_change_the_identity(tmp_path: Path):
    (tmp_path / "k.cl").write_text((CORPUS / "tile_square.cl").read_text())
    header = tmp_path / "tile_common.h"
    header.write_text((CORPUS / "tile_common.h").read_text())
    flags = {**TILE}
    first = plain_kernel(tmp_path / "k.cl", **flags)
    assert any(n.startswith(f"header: {tmp_path}/tile_common.h (sha256 ") for n in first.inferred)
    header.write_text(header.read_text() + "// changed\n")
    assert plain_kernel(tmp_path / "k.cl", **flags).identity() != first.identity()


@pytest.mark.opencl
def test_a_fixed_launch_is_one_configuration(tmp_path: Path, gtune_here: Cli):
    """Work-group sizes given as numbers leave nothing to tune: the space is that one
    configuration, ``run`` says so (exit 2, pointing at ``measure``), and ``measure``
    times it without calling it verified: it is its own reference."""
    kernel = str(CORPUS / "jacobi_nonconst.cl")
    flags = ["--size", "32x16", "--local", "8,4", "--scalar", "nx=NX", "--scalar", "ny=NY"]
    space = gtune_here("space", kernel, *flags, "--json")
    assert space.returncode == 0, space.stderr
    assert json.loads(space.stdout)[0]["pruned"] == 1
    tuned = gtune_here("run", kernel, *flags, "--budget", "3", db=tmp_path / "r.db")
    assert tuned.returncode == 2, tuned.stderr
    assert "no parameter to tune" in tuned.stderr and "gtune measure" in tuned.stderr
    assert "Traceback" not in tuned.stderr
    measured = gtune_here("measure", kernel, *flags, "--json", db=tmp_path / "r.db")
    assert measured.returncode == 0, measured.stderr
    result = json.loads(measured.stdout)
    assert result["status"] == "ok"
    assert "it is the reference configuration" in result["extra"]["unverified"]
    assert "verification" not in result["extra"]

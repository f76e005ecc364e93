"""Plain kernels: preprocessing, body analysis, inference and the command-line flags."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from gtune.cli import main
from gtune.clsource import (
    Param,
    array_uses,
    find_kernels,
    kernel_signatures,
    parse_param,
    pointer_to_const,
    preprocess,
    typedefs,
)
from gtune.description import load_kernel
from gtune.exceptions import ExpressionError, InputError
from gtune.kernel import Expr, domain_values
from gtune.plain import plain_kernel

CORPUS = Path(__file__).parents[1] / "data" / "corpus"


def test_signature_inference(data_dir: Path):
    k = plain_kernel(
        data_dir / "plain_blur.cl",
        sizes=[64, 32],
        params={"ROWS": [1, 2, 4]},
        global_size=["NX", "NY / ROWS"],
        scalars={"scale": "0.111"},
    )
    assert k.name == "blur"
    kinds = {a.name: (a.kind, a.role, a.dtype) for a in k.arguments}
    assert kinds["in"] == ("buffer", "input", "float32")
    assert kinds["out"] == ("buffer", "output", "float32")
    assert kinds["nx"][0] == "scalar" and kinds["scale"][2] == "float32"
    assert all(a.init == "random" for a in k.arguments if a.kind == "buffer")
    assert k.sizes == {"NX": 64, "NY": 32}
    assert domain_values(k) == {
        "WX": [1, 2, 4, 8, 16, 32, 64],
        "WY": [1, 2, 4, 8, 16, 32],
        "ROWS": [1, 2, 4],
    }
    assert k.launch_sizes({"WX": 8, "WY": 2, "ROWS": 4}) == ((64, 8), (8, 2))
    assert k.reference.kind == "config" and k.reference.config == {"WX": 1, "WY": 1, "ROWS": 1}
    assert any(note.startswith("nx: scalar = NX") for note in k.inferred)


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"sizes": [64, 32]}, "no value for the scalar parameter 'scale'"),
        (
            {"sizes": [64, 32], "scalars": {"scale": "1", "bogus": "2"}},
            "no scalar parameter 'bogus'",
        ),
        ({"sizes": [64, 32], "scalars": {"scale": "1"}, "kernel_name": "nope"}, "no kernel 'nope'"),
        ({"sizes": [64], "scalars": {"scale": "1"}, "global_size": ["NX", "NY"]}, "not more"),
        ({"sizes": [64, 32], "scalars": {"scale": "1"}, "params": {"NX": [1]}}, "clashes"),
        ({"sizes": [64, 32], "scalars": {"scale": "1"}, "default": {"Q": 1}}, "unknown parameter"),
        ({"sizes": [64, 32], "scalars": {"scale": "1"}, "arrays": {"zz": ["NX"]}}, "no array"),
    ],
)
def test_bad_plain_input(data_dir: Path, kwargs, message):
    with pytest.raises(InputError, match=message):
        plain_kernel(data_dir / "plain_blur.cl", **kwargs)


@pytest.mark.parametrize(
    ("kwargs", "source"),
    [
        ({"scalars": {"scale": "1 +"}}, "scalars[scale]"),
        ({"scalars": {"scale": "QQ"}}, "scalars[scale]"),
        ({"scalars": {"scale": "1"}, "global_size": ["NX", "NY / Q"]}, "global_size"),
        ({"scalars": {"scale": "1"}, "params": {"B": "WX +"}}, "params[B]"),
        ({"scalars": {"scale": "1"}, "arrays": {"in": ["NX + Z"]}}, "arrays[in]"),
    ],
)
def test_errors_name_the_parameter(data_dir: Path, kwargs, source):
    """The library names plain_kernel's parameter (the command line names its flag)."""
    with pytest.raises(ExpressionError) as info:
        plain_kernel(data_dir / "plain_blur.cl", sizes=[64, 32], **kwargs)
    assert info.value.source == source


def test_signatures_ignore_comments_and_attributes():
    src = """
    // __kernel void commented(int a) {}
    __kernel __attribute__((reqd_work_group_size(8, 8, 1))) void a(__global float* x) {}
    kernel void b(__global const int* y, uint n) {}
    """
    assert kernel_signatures(src) == {
        "a": ["__global float* x"],
        "b": ["__global const int* y", "uint n"],
    }


def test_preprocessor_resolves_macros_typedefs_and_defines():
    src = """
    #ifndef DATA_TYPE
    #define DATA_TYPE double
    #endif
    typedef DATA_TYPE real;
    typedef real elem_t;
    #define STORE(p, i, v) p[i] = (v)
    #if __OPENCL_VERSION__ >= 120 && BS > 8
    __kernel void k(__global elem_t* a, __global const elem_t* b) { STORE(a, 0, b[0]); }
    #endif
    """
    text = preprocess(src, {"DATA_TYPE": "float", "BS": 16})
    assert typedefs(text) == {"real": "float", "elem_t": "float"}
    decl = find_kernels(text)["k"]
    assert array_uses(decl.body, "a").written and not array_uses(decl.body, "a").read
    assert array_uses(decl.body, "b").read and not array_uses(decl.body, "b").written
    assert find_kernels(preprocess(src, {"BS": 4})) == {}


def test_preprocessor_errors_name_the_file(tmp_path: Path):
    with pytest.raises(InputError, match="preprocessor") as info:
        preprocess("#error stop here\n", {}, where="k.cl")
    assert "k.cl" in info.value.render() and "stop here" in info.value.render()


@pytest.mark.parametrize(
    ("body", "read", "written"),
    [
        ("a[i] = 1;", False, True),
        ("a[i] += 1;", True, True),
        ("a[idx[i]] = b;", False, True),
        ("a[i]++;", True, True),
        ("--a[i];", True, True),
        ("x = a[i] * 2;", True, False),
        ("if (a[i] == 2) x = 1;", True, False),
        ("a[i].x = 1;", False, True),
        ("vstore4(v, 0, a);", False, True),
        ("v = vload4(0, a + 4);", True, False),
        ("atomic_add(&a[0], 1);", True, True),
        ("atomic_inc(a);", True, True),
        ("*a = 3;", False, True),
        ("*(a + i) = 3;", False, True),
        ("x = *(a + i);", True, False),
        ("__global float* p = a + off; p[0] = 1;", False, True),
        ("__global float* restrict p = &a[off]; x = p[1];", True, False),
        ("helper(a, i);", True, True),
        ("x = b[i];", False, False),
        ("ab[i] = 1; x.a = 2;", False, False),
        # the pointer moved, then indexed (NVIDIA SDK style): the move reads nothing
        ("a += y * pitch + x0; a[i] = s;", False, True),
        ("a -= 4; a[0] = s;", False, True),
        ("a++; --a; ++a; a--; *a = s;", False, True),
        ("a = a + off; a[i] = s;", False, True),
        ("a = off + a; x = a[i];", True, False),
        ("for (a = a + w; i < n; a += w) a[0] = s;", False, True),
        ("*a++ = s;", False, True),
        ("x = *a++;", True, False),
        ("a += 2; a[i] += s;", True, True),
        ("a = f(a); a[i] = s;", True, True),  # handed to a function: it may read it
        ("x = a + 1;", True, False),  # another pointer made from it, not followed
    ],
)
def test_array_uses(body: str, read: bool, written: bool):
    use = array_uses(body, "a")
    assert (use.read, use.written) == (read, written), use.evidence


@pytest.mark.parametrize(
    ("decl", "name", "ctype", "pointer", "space", "const"),
    [
        ("__local float l_Data[16 + 128 + 8]", "l_Data", "float", True, "local", False),
        ("__global const float src[]", "src", "float", True, "global", True),
        ("__constant float c_Taps[3]", "c_Taps", "float", True, "constant", True),
        ("float w[3][3]", "w", "float", True, "private", False),
        ("__global float *restrict dst", "dst", "float", True, "global", False),
        ("__global float * const p", "p", "float", True, "global", False),
        ("const int n", "n", "int", False, "private", False),
    ],
)
def test_parse_param_takes_an_array_declarator_as_a_pointer(
    decl: str, name: str, ctype: str, pointer: bool, space: str, const: bool
):
    assert parse_param(decl, {}, "k.cl") == Param(name, ctype, pointer, space)
    assert pointer_to_const(decl) is const
    with pytest.raises(InputError, match="cannot read the kernel parameter"):
        parse_param("__global float (*rows)[4]", {}, "k.cl")  # a pointer to arrays


def test_constant_array_length_from_constant_indices():
    assert array_uses("s = c[0] * x + c[4] * y + c[2u];", "c").constant_indices == [0, 4, 2]
    assert array_uses("s = c[k];", "c").constant_indices is None


def test_scalars_need_names_that_leave_no_doubt(tmp_path: Path):
    src = tmp_path / "k.cl"
    src.write_text("__kernel void k(__global float* a, int n) { a[get_global_id(0)] = n; }\n")
    with pytest.raises(InputError, match="no value for the scalar parameter 'n'") as info:
        plain_kernel(src, sizes=[16, 16])
    assert info.value.source == "scalars[n]"
    k = plain_kernel(src, sizes=[16, 16], scalars={"n": "NX * NY"})
    assert next(a for a in k.arguments if a.name == "n").value == Expr("NX * NY", "arguments[1]")
    # a 1D problem's length has nothing else to name
    k = plain_kernel(src, sizes=[64])
    assert next(a for a in k.arguments if a.name == "n").value == Expr("NX", "arguments[1]")
    src.write_text(
        "__kernel void k(__global float* a, int nRows, const int cols) "
        "{ a[get_global_id(1) * cols + get_global_id(0)] = nRows; }\n"
    )
    k = plain_kernel(src, sizes=[32, 8])
    values = {a.name: a.value.text for a in k.arguments if a.kind == "scalar" and a.value}
    assert values == {"nRows": "NY", "cols": "NX"}


def test_float_scalars_are_fractions(tmp_path: Path):
    from gtune.kernel import scalar_values

    src = tmp_path / "k.cl"
    src.write_text(
        "__kernel void k(__global float* a, float alpha, int k) "
        "{ a[get_global_id(0)] = alpha * k; }\n"
    )
    kernel = plain_kernel(src, sizes=[8], scalars={"alpha": "1/36", "k": "7/2"})
    values = scalar_values(kernel)
    assert values["alpha"] == pytest.approx(1 / 36)
    assert values["k"] == 3  # an int argument keeps C's integer division
    assert any("floating point" in note for note in kernel.inferred)


def test_tied_macros_follow_the_work_group():
    k = plain_kernel(
        CORPUS / "blur_block.cl",
        sizes=[64, 16],
        params={"block_size_x": "WX", "block_size_y": "WY"},
    )
    assert k.default_config() == {"WX": 16, "WY": 1}, "reqd_work_group_size gives the default"
    assert k.reference.config == {"WX": 16, "WY": 1}
    opts = k.defines({"WX": 32, "WY": 2})
    assert "-Dblock_size_x=32" in opts and "-Dblock_size_y=2" in opts
    assert "block_size_x" not in k.parameter_names


def test_literal_reqd_work_group_size_fixes_the_work_group(tmp_path: Path):
    src = tmp_path / "k.cl"
    src.write_text(
        "__kernel __attribute__((reqd_work_group_size(8, 2, 1)))\n"
        "void k(__global float* a) { a[get_global_id(0)] = 1.0f; }\n"
    )
    k = plain_kernel(src, sizes=[64, 64])
    assert domain_values(k) == {"WX": [8], "WY": [2]}
    assert k.default_config() == {"WX": 8, "WY": 2}
    with pytest.raises(InputError, match="reqd_work_group_size"):
        plain_kernel(src, sizes=[64, 64], default={"WX": 16})


def test_default_outside_powers_of_two_joins_the_domain(data_dir: Path):
    k = plain_kernel(
        data_dir / "plain_blur.cl", sizes=[48, 32], scalars={"scale": "1"}, default={"WX": 24}
    )
    assert 24 in domain_values(k)["WX"] and k.default_config() == {"WX": 24, "WY": 1}
    assert any("WY at their first value" in n for n in k.inferred)


def test_round_up_global_and_fewer_launch_dimensions():
    k = plain_kernel(
        CORPUS / "heat_march.cl",
        sizes=[30, 20, 8],
        global_size=["(NX + WX - 1) / WX * WX", "NY"],
        scalars={"alpha": "0.1"},
    )
    assert k.parameter_names == ["WX", "WY"]
    assert [a.shape_for(k.sizes) for a in k.arguments if a.kind == "buffer"] == [(8, 20, 30)] * 2
    assert k.launch_sizes({"WX": 16, "WY": 4}) == ((32, 20), (16, 4))


@given(st.integers(1, 5000), st.integers(1, 1024))
def test_round_up_form_keeps_the_value_without_division(n: int, w: int):
    from gtune.description import _round_up_form

    e = _round_up_form(Expr("(N + W - 1) / W * W"))
    assert "/" not in e.text
    assert e.evaluate_int({"N": n, "W": w}) == (n + w - 1) // w * w


def test_padded_and_constant_arrays():
    k = plain_kernel(CORPUS / "blur_padded.cl", sizes=[32, 16], arrays={"in": ["NX+2", "NY+2"]})
    shapes = {a.name: a.shape_for(k.sizes) for a in k.arguments if a.kind == "buffer"}
    assert shapes == {"in": (18, 34), "out": (16, 32)}
    k = plain_kernel(CORPUS / "weights_constant.cl", sizes=[32, 16])
    w = next(a for a in k.arguments if a.name == "w")
    assert (w.role, w.shape_for(k.sizes)) == ("input", (5,))


def test_describe_round_trips(tmp_path: Path, capsys):
    for f in ("blur_block.cl", "corpus_ref.py"):
        (tmp_path / f).write_text((CORPUS / f).read_text())
    kernel_flags = ["--size", "64x16", "--param", "block_size_x=WX", "--param", "block_size_y=WY"]
    assert (
        main(["describe", str(tmp_path / "blur_block.cl"), *kernel_flags, "--default", "WX=8"]) == 0
    )
    text = capsys.readouterr().out
    assert "inferred:" in text and "defines:" in text
    inferred = plain_kernel(
        tmp_path / "blur_block.cl",
        sizes=[64, 16],
        params={"block_size_x": "WX", "block_size_y": "WY"},
        default={"WX": 8},
    )
    (tmp_path / "blur_block.yaml").write_text(text)
    loaded = load_kernel(tmp_path / "blur_block.cl")
    for attr in ("name", "sizes", "arguments", "parameters", "launch", "reference"):
        assert getattr(loaded, attr) == getattr(inferred, attr), attr
    assert [c.text for c in loaded.constraints] == [c.text for c in inferred.constraints]
    assert loaded.derived == inferred.derived and loaded.inferred == inferred.inferred
    assert loaded.defines({"WX": 8, "WY": 2}) == inferred.defines({"WX": 8, "WY": 2})


def test_describe_errors_name_the_flag(data_dir: Path, capsys):
    blur = str(data_dir / "plain_blur.cl")
    assert main(["describe", blur, "--size", "64x32", "--scalar", "scale=1 +"]) == 2
    assert "--scalar scale: cannot parse expression '1 +'" in capsys.readouterr().err
    assert (
        main(["describe", blur, "--size", "64x32", "--scalar", "scale=1", "--global", "NX,NY/Q"])
        == 2
    )
    assert "--global" in capsys.readouterr().err
    assert (
        main(["describe", blur, "--size", "64x32", "--scalar", "scale=1", "--default", "WX=a"]) == 2
    )
    assert "--default" in capsys.readouterr().err


def test_vector_pointers_are_arrays_of_their_element_type(tmp_path: Path):
    """A float4 pointer is an array of floats (its shape counts floats); a __constant
    float4 array read at constant indices holds four floats per index; a 3-vector
    (padded to four) and a vector scalar without its lanes are refused with the reason."""
    k = plain_kernel(
        CORPUS / "blur_float4.cl",
        sizes=[64, 16],
        global_size=["NX / 4", "NY"],
        scalars={"w4": "NX / 4", "h": "NY"},
    )
    arrays = {a.name: (a.role, a.dtype, a.shape_for(k.sizes)) for a in k.arguments if a.shape}
    assert arrays == {"in": ("input", "float32", (16, 64)), "out": ("output", "float32", (16, 64))}
    assert any("a float4 pointer: the array is given in floats" in n for n in k.inferred)
    src = tmp_path / "w.cl"
    src.write_text(
        "__kernel void k(__constant double2 *w, __global const double *a, __global double *b)"
        " { int i = get_global_id(0); b[i] = w[0].x * a[i] + w[2].y; }"
    )
    k = plain_kernel(src, sizes=[32])
    w = next(a for a in k.arguments if a.name == "w")
    assert (w.dtype, w.shape_for(k.sizes)) == ("float64", (6,))
    for decl, why in [
        ("__global const float3 *a, __global float *b", "3-vector"),
        ("__global const float *a, __global float *b, const float2 s", "give its 2 lanes"),
    ]:
        src.write_text(f"__kernel void k({decl}) {{ int i = get_global_id(0); b[i] = a[i]; }}")
        with pytest.raises(InputError, match=why):
            plain_kernel(src, sizes=[32])

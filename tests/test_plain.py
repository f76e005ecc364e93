from pathlib import Path

import pytest

from gtune.exceptions import InputError
from gtune.kernel import domain_values
from gtune.plain import kernel_signatures, plain_kernel


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
    assert k.sizes == {"NX": 64, "NY": 32}
    assert domain_values(k) == {
        "WX": [1, 2, 4, 8, 16, 32, 64],
        "WY": [1, 2, 4, 8, 16, 32],
        "ROWS": [1, 2, 4],
    }
    assert k.launch_sizes({"WX": 8, "WY": 2, "ROWS": 4}) == ((64, 8), (8, 2))
    assert k.reference.kind == "config" and k.reference.config == {"WX": 1, "WY": 1, "ROWS": 1}


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"sizes": [64, 32]}, "no value for the scalar parameter 'scale'"),
        ({"sizes": [64, 32], "scalars": {"scale": "1", "bogus": "2"}}, "unknown parameter 'bogus'"),
        ({"sizes": [64, 32], "scalars": {"scale": "1"}, "kernel_name": "nope"}, "no kernel 'nope'"),
        ({"sizes": [64, 32], "scalars": {"scale": "1"}, "global_size": ["NX"]}, "--global has 1"),
        ({"sizes": [64, 32], "scalars": {"scale": "1"}, "params": {"WX": [1]}}, "clashes"),
    ],
)
def test_bad_plain_input(data_dir: Path, kwargs, message):
    with pytest.raises(InputError, match=message):
        plain_kernel(data_dir / "plain_blur.cl", **kwargs)


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


@pytest.mark.opencl
def test_plain_kernel_measures_for_real(data_dir: Path):
    from gtune.measure import OpenCLEvaluator, Status

    k = plain_kernel(
        data_dir / "plain_blur.cl",
        sizes=[64, 32],
        params={"ROWS": [1, 2, 4]},
        global_size=["NX", "NY / ROWS"],
        scalars={"scale": "0.111"},
    )
    with OpenCLEvaluator(k, compile_workers=0) as ev:
        assert ev.evaluate({"WX": 16, "WY": 2, "ROWS": 4}).status is Status.OK
        assert ev.evaluate({"WX": 16, "WY": 4, "ROWS": 2}).status is Status.OK

"""Lifting kernels written as real projects write them, where lift first failed: an
NVIDIA SDK row convolution that moves its pointers before indexing them (``d_Dst +=
baseY * pitch + baseX; d_Dst[i] = s;``: the output is written, not read), parameters
declared as arrays (``__global const float d_Src[]``, ``__local float l_Data[N]``) with
a macro the host defines empty (``-D convertToDstT=``); and what lift and run say where
a kernel cannot be lifted as it is (an array read and written, a probe launch out of
bounds from a hard-coded size macro) or the tuned kernel is slower than the original.
The corpus kernels are ``stencils/plain/conv_rows_moved_ptr.cl`` and
``conv_cols_array_params.cl``."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml
from rich.console import Console

from gtune.exceptions import InputError
from gtune.stencils.definition import load_definition
from gtune.stencils.lift import LaunchFailed, interface
from tests.inprocess import Cli
from tests.stencils.plain_helpers import PLAIN, open_corpus, plain_from_text

MANIFEST = yaml.safe_load((PLAIN / "manifest.yaml").read_text())["kernels"]
ROWS = MANIFEST["conv_rows_moved_ptr"]
COLS = MANIFEST["conv_cols_array_params"]
OOB = (
    "the kernel did not run (wrong_result): writes past the end of 'out' (8 bytes of its "
    "guard zone changed)"
)


# ---------------------------------------------------------------------------------
# Plain mode and the lifting interface (the preprocessor, no OpenCL)


def test_a_moved_output_pointer_is_an_output() -> None:
    kernel = open_corpus(ROWS["source"], ROWS["size"], *ROWS["flags"])
    roles = {a.name: a.role for a in kernel.arguments if a.kind == "buffer"}
    assert roles == {"d_Dst": "output", "d_Src": "input", "c_Kernel": "input"}
    face = interface(kernel)
    assert (face.fields, face.output, face.weights) == (("d_Src",), "d_Dst", {"c_Kernel": 5})


def test_parameters_declared_as_arrays_are_pointers() -> None:
    kernel = open_corpus(COLS["source"], COLS["size"], *COLS["flags"])
    kinds = {a.name: (a.kind, a.role, a.dtype) for a in kernel.arguments}
    assert kinds == {
        "d_Dst": ("buffer", "output", "float32"),
        "d_Src": ("buffer", "input", "float32"),
        "c_Taps": ("buffer", "input", "float32"),
        "l_Data": ("local", "input", "float32"),
        "imageW": ("scalar", "input", "int32"),
        "imageH": ("scalar", "input", "int32"),
    }
    taps = next(a for a in kernel.arguments if a.name == "c_Taps")
    assert taps.shape_for(kernel.sizes) == (3,)  # its constant indices, + 1
    assert "-DconvertToDstT=" in kernel.build_options
    assert interface(kernel).locals == {"l_Data": ("float", ("WX * (WY + 2)",))}


def test_an_array_read_and_written_is_refused_naming_the_reads_and_role(tmp_path: Path) -> None:
    source = (
        "__kernel void k(__global float *u, __global const float *v, __global float *w)"
        " { int i = get_global_id(0); u[i] = v[i]; w[i] = 0.5f * u[i + 1]; }"
    )
    kernel = plain_from_text(tmp_path, source, [16, 8])
    with pytest.raises(InputError) as info:
        interface(kernel)
    assert info.value.render() == (
        f"{tmp_path / 'k.cl'}: cannot lift kernel k: array u is read and written "
        "(u[...] =; reads u[...]); "
        "a stencil reads its fields and writes a distinct output\n"
        "  hint: if the kernel only writes u (what looks like a read is not one), say so: "
        "--role u=output (or --role u=input if it only reads it)"
    )


def test_an_update_in_place_beside_another_output_is_refused_with_why(tmp_path: Path) -> None:
    source = (
        "__kernel void k(__global float *u, __global const float *v, __global float *w)"
        " { int i = get_global_id(0); u[i] += 0.5f * v[i]; w[i] = v[i]; }"
    )
    kernel = plain_from_text(tmp_path, source, [16, 8])
    with pytest.raises(InputError) as info:
        interface(kernel)
    text = info.value.render()
    assert "array u is read and written (u[...] +=)" in text
    assert "u is read at the index it writes, an update in place, which lifts where it is " in text
    assert "the kernel's only output array (this kernel writes u, w)" in text
    assert "--role" not in text


HARD_CODED = """
#define WIDTH 64
__kernel void k(__global const float *in, __global float *out)
{
    const int x = get_global_id(0), y = get_global_id(1);
    out[y * WIDTH + x] = 0.5f * in[y * WIDTH + x];
}
"""


def test_a_probe_out_of_bounds_names_a_hard_coded_size_macro(tmp_path: Path) -> None:
    from gtune.measure.lifting import launch_refusal

    kernel = plain_from_text(tmp_path, HARD_CODED, [16, 8], defines={"WIDTH": "NX"})
    assert any("own #define WIDTH (line 2) overrides --define WIDTH" in n for n in kernel.inferred)
    refusal = launch_refusal(interface(kernel), kernel, OOB)
    assert isinstance(refusal, LaunchFailed)
    assert refusal.message == f"cannot lift kernel k: a probe launch went out of bounds: {OOB}"
    assert refusal.hint == (
        "likely cause: the kernel's own #define WIDTH overrides the size gtune passes, so it "
        "runs at its own size, not the probe's: guard it with #ifndef WIDTH ... #endif"
    )
    crashed = launch_refusal(interface(kernel), kernel, "the kernel crashed its worker")
    assert crashed.message.startswith("cannot lift kernel k: a probe launch failed: the kernel")
    assert crashed.hint.startswith("likely cause: the kernel's own #define WIDTH")
    # a macro that is no size (--define WIDTH=64): out of bounds, but no likely cause
    plain = plain_from_text(tmp_path, HARD_CODED, [16, 8], defines={"WIDTH": "64"})
    assert launch_refusal(interface(plain), plain, OOB).hint == ""
    other = launch_refusal(interface(plain), plain, "CL_INVALID_WORK_GROUP_SIZE")
    assert "is not a linear stencil that a definition can express: a probe launch failed" in (
        other.message
    )


def test_a_tuned_kernel_slower_than_the_original_says_keep_the_original() -> None:
    from gtune.commands.run import show_original
    from gtune.measure.lifting import OriginalComparison

    for tuned_s, keep in ((1e-5, False), (2.5e-5, True)):
        console = Console(record=True, width=300)
        show_original(OriginalComparison("conv", {"WX": 16}, {}, 2e-5, tuned_s, 3), console)
        text = console.export_text()
        assert "over the original (measured alternately, 3 rounds)" in text
        said = "the original is faster; keep it (the tuned kernel should not replace it)"
        assert (said in text) is keep, text


# ---------------------------------------------------------------------------------
# On OpenCL (PoCL)


@pytest.fixture(scope="module")
def device() -> Any:
    from gtune.measure import select_device

    return select_device(None)


@pytest.mark.opencl
def test_nvidia_style_row_convolution_lifts_and_runs(tmp_path: Path, gtune_here: Cli) -> None:
    """lift (no --role needed) -> run, verified against the original's output."""
    out = tmp_path / "rows.stencil.yaml"
    source = str(PLAIN / ROWS["source"])
    done = gtune_here("lift", source, "--size", ROWS["size"], *ROWS["flags"], "-o", str(out))
    assert done.returncode == 0, done.stderr
    defn = load_definition(out)
    assert defn.boundary == "zero" and list(defn.weights) == ["c_Kernel"]
    assert sorted(t.offset[0] for t in defn.terms) == [-2, -1, 0, 1, 2]
    assert (defn.fields, defn.output) == (("d_Src",), "d_Dst")
    ran = gtune_here(
        "run", str(out), "--size", "64x8", "--budget", "1", "--runs", "3", db=tmp_path / "r.db"
    )
    assert ran.returncode == 0, ran.stderr
    said = " ".join((ran.stdout + ran.stderr).replace("│", " ").split())
    assert "verified against the original kernel's output (recorded at its shipped" in said
    assert "numpy reference" not in said and "over the original" in said


@pytest.mark.opencl
@pytest.mark.usefixtures("shared_workers")
def test_array_parameters_lift_with_an_empty_macro(device: Any, tmp_path: Path) -> None:
    from gtune.measure.lifting import lift_kernel

    kernel = open_corpus(COLS["source"], COLS["size"], *COLS["flags"])
    out = tmp_path / "cols.stencil.yaml"
    defn, _ = lift_kernel(kernel, device=device, output=out, flags=list(COLS["flags"]))
    assert defn.boundary == "clamp" and list(defn.weights) == ["c_Taps"]
    assert sorted(t.offset[1] for t in defn.terms) == [-1, 0, 1]
    assert defn.arguments[3].kind == "local" and defn.arguments[3].shape == ("WX * (WY + 2)",)
    assert defn.original is not None and "convertToDstT=" in defn.original["flags"]

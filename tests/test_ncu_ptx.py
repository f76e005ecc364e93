"""benchmarks/ncu_ptx.py's text work: the PTX's entry and offsets, the cache-hint
rewrites, ncu's units and its summary table (the CUDA launches themselves need an
NVIDIA GPU: benchmarks/results/h200-limit/ncu/)."""

from __future__ import annotations

import csv
import ctypes
import gzip
import json
import re
from pathlib import Path

import pytest

from tests.conftest import load_script

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "benchmarks" / "results" / "h200-limit" / "ncu"
ncu = load_script(ROOT / "benchmarks" / "ncu_ptx.py")

# The head of NVIDIA's PTX for copy3d (the package's template, 3D grid), as its OpenCL
# compiler wrote it on the H200, and a load and a store of its body.
PTX = """\
.version 9.0
.target sm_90, texmode_independent
.address_size 64

\t// .globl\tcopy3d

.entry copy3d(
\t.param .u64 .ptr .global .align 4 copy3d_param_0,
\t.param .u64 .ptr .global .align 4 copy3d_param_1
)
.reqntid 64, 4, 2
{
\tld.param.u64 \t%rd8, [copy3d_param_0];
\tmov.u32 \t%r11, %ctaid.x;
\tmov.b32 \t%r12, %envreg0;
\tadd.s32 \t%r13, %r12, %r11;
\tmov.b32 \t%r15, %envreg1;
\tmov.b32 \t%r1, %envreg3;
\tld.global.nc.v4.f32 \t{%f1, %f2, %f3, %f4}, [%rd3];
\tld.global.nc.f32 \t%f5, [%rd4];
\tst.global.v4.f32 \t[%rd5], {%f1, %f2, %f3, %f4};
\tst.global.f32 \t[%rd6], %f5;
}
"""


def test_the_entry_and_its_parameters_are_read() -> None:
    assert ncu.entry_params(PTX) == ("copy3d", ["u64", "u64"])
    with pytest.raises(ncu.CudaError, match=r"no \.entry"):
        ncu.entry_params(".version 9.0\n")


def test_the_launch_offsets_read_as_zero() -> None:
    text = ncu.offsets_zeroed(PTX)
    assert "%envreg" not in text
    assert "mov.b32 \t%r12, 0;" in text and "mov.b32 \t%r1, 0;" in text
    assert text.count("\n") == PTX.count("\n")  # nothing else moved
    with pytest.raises(ncu.CudaError, match="environment register"):
        ncu.offsets_zeroed("add.s32 %r1, %envreg2, 1;")


@pytest.mark.parametrize("name", sorted(ncu.PTX_VARIANTS))
def test_each_rewrite_touches_only_the_global_accesses(name: str) -> None:
    text = ncu.rewrite(PTX, name)
    ops = re.findall(r"\b(?:ld|st)\.global[\w.:]*", text)
    assert len(ops) == 4
    loads, stores = ops[:2], ops[2:]
    l1 = {"l1-last": "evict_last", "l1-first": "evict_first", "l1-none": "no_allocate"}
    if "l2" in name:
        size = "256B" if "256" in name else "128B"
        assert loads == [f"ld.global.nc.L2::{size}.v4.f32", f"ld.global.nc.L2::{size}.f32"]
    elif name in l1:
        hint = f"L1::{l1[name]}"
        assert loads == [f"ld.global.nc.{hint}.v4.f32", f"ld.global.nc.{hint}.f32"]
    elif name == "ld-cg":
        assert loads == ["ld.global.cg.nc.v4.f32", "ld.global.cg.nc.f32"]
    else:
        assert loads == ["ld.global.nc.v4.f32", "ld.global.nc.f32"]
    if "st-cs" in name:
        assert stores == ["st.global.cs.v4.f32", "st.global.cs.f32"]
    else:
        assert stores == ["st.global.v4.f32", "st.global.f32"]
    rest = [line for line in text.splitlines() if ".global" not in line]
    assert rest == [line for line in PTX.splitlines() if ".global" not in line]


def test_units_convert_by_their_prefixes() -> None:
    assert ncu.convert(536.954368, "Mbyte", "Mbyte") == 536.954368
    assert ncu.convert(2.5, "Gbyte", "Mbyte") == pytest.approx(2500.0)
    assert ncu.convert(16777216.0, "sector", "Msector") == pytest.approx(16.777216)
    assert ncu.convert(252.064, "us", "us") == 252.064
    assert ncu.convert(0.252, "ms", "us") == pytest.approx(252.0)
    assert ncu.convert(25165824.0, "inst", "Minst") == pytest.approx(25.165824)
    assert ncu.convert(86.6, "%", "%") == 86.6
    with pytest.raises(ValueError):
        ncu.convert(1.0, "Mbyte", "Msector")


def test_the_summary_reads_the_recorded_counters(tmp_path: Path) -> None:
    raw = tmp_path / "raw.csv"
    raw.write_bytes(gzip.decompress((RESULTS / "winners" / "raw.csv.gz").read_bytes()))
    checked = json.loads((RESULTS / "winners" / "check.json").read_text())
    table = ncu.summary(raw, checked)
    with raw.open(newline="") as f:
        rows = list(csv.reader(f))
    head, units, data = rows[0], rows[1], rows[2:]
    time = head.index("gpu__time_duration.sum")
    assert units[time] == "us"
    line = next(t for t in table.splitlines() if t.startswith("| time µs |"))
    cells = [c.strip() for c in line.strip("|").split("|")[1:]]
    assert len(cells) == len(checked) == len(data)
    for cell, row in zip(cells, data, strict=True):
        assert float(cell) == pytest.approx(float(row[time]), rel=5e-3)
    for r in checked:
        assert f"- {r['index']}: {r['case']}" in table
    with pytest.raises(SystemExit, match="profiled launches"):
        ncu.summary(raw, checked[:-1] if len(checked) > 1 else checked * 2)


def _cuda_driver_here() -> bool:
    try:
        ctypes.CDLL("libcuda.so.1")
    except OSError:
        return False
    return True


@pytest.mark.skipif(_cuda_driver_here(), reason="a CUDA driver is here: nothing to refuse")
def test_without_a_cuda_driver_it_says_so_and_exits_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert ncu.main([str(tmp_path), "--device", "pthread", "--copy", "--size", "32"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("ncu_ptx: no CUDA driver here") and "Traceback" not in err
    assert not (tmp_path / "check.json").exists()


def test_the_cluster_launch_structures_have_cudas_layout() -> None:
    """CUlaunchAttribute (its value after 8 bytes, 72 in all) and CUlaunchConfig (the
    stream at byte 32, the attribute count at 48, 56 in all), as cuda.h lays them out
    on a 64-bit host."""
    assert ctypes.sizeof(ncu._Attribute) == 72 and ncu._Attribute.value.offset == 8
    assert ctypes.sizeof(ncu._LaunchConfig) == 56
    assert ncu._LaunchConfig.hStream.offset == 32 and ncu._LaunchConfig.numAttrs.offset == 48
    attr = ncu._Attribute(id=ncu.CLUSTER_DIMENSION)
    attr.value.clusterDim = ncu._Dim3(1, 2, 1)
    assert bytes(attr)[8:20] == (1).to_bytes(4, "little") + (2).to_bytes(4, "little") + (
        1
    ).to_bytes(4, "little")


def test_clusters_that_do_not_divide_the_grid_are_refused_before_any_launch() -> None:
    import onestep

    kernel = onestep.load("heat3d", 64, 1024)[1]
    case = ncu.Case("heat3d", kernel, {"WX": 32, "WY": 4, "VX": 1, "BX": 1})
    # 64 / 32 = 2 work-groups along x, 16 along y, 64 along z: clusters of 3 along z refused
    with pytest.raises(ncu.CudaError, match="do not divide the grid"):
        ncu.CudaSide(case, PTX, cuda=None, cluster=[1, 1, 3])


@pytest.mark.parametrize(
    ("option", "bad"),
    [("--cluster", b) for b in ["1,2", "0,1,1", "a,b,c", "2,2,4", "1,2,1,1"]]
    + [("--smem", b) for b in ["0", "228", "-4", "60K", "1.5"]],
)
def test_a_malformed_cluster_or_shared_memory_size_is_refused_by_name(
    option: str, bad: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as exit_:
        ncu.main([str(tmp_path), option, bad])
    assert exit_.value.code == 2
    err = capsys.readouterr().err
    assert f"{option}: {bad!r}" in err and "Traceback" not in err


def test_good_cluster_and_shared_memory_sizes_are_read() -> None:
    assert ncu.cluster_dims("1,4,2") == (1, 4, 2)
    assert ncu.smem_bytes("60") == 60 * 1024 and ncu.smem_bytes("227") == 227 * 1024


def test_the_table_shows_each_launchs_blocks_an_sm_beside_its_time() -> None:
    row = {
        "index": 0,
        "case": "box27 WX=32",
        "differs": [],
        "opencl_s": 2.95e-4,
        "cuda_s": 2.9e-4,
        "registers": 128,
        "resident": 4,
        "variants": {
            "ld-cg": {"s": 2.9e-4 * 1.02, "resident": 4},
            "smem-60K": {"s": 3.19e-4, "resident": 3},
            "smem-120K": {"error": "cuLaunchKernel: error 1 (invalid argument)"},
        },
    }
    table = ncu.check_table([row], "NVIDIA H200")
    line = next(t for t in table.splitlines() if t.startswith("| 0 |"))
    cells = [c.strip() for c in line.strip("|").split("|")]
    assert cells[5] == "128 (4/SM)"
    assert cells[6] == "0.2958 (1.020)"  # a rewrite: no residency, the code differs
    assert cells[7] == "0.3190 (1.100), 3/SM"
    assert cells[8].startswith("left out: cuLaunchKernel")
    assert "| smem-60K |" in table and "blocks an SM holds at once" in table

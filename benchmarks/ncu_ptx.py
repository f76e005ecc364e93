#!/usr/bin/env python3
"""Hardware counters for gtune's OpenCL kernels on an NVIDIA GPU, through their PTX.

Nsight Compute (``ncu``) profiles CUDA launches only. NVIDIA's OpenCL returns a
program's PTX as its binary, so each configuration here is built by the device's
OpenCL compiler (the package's template, the kernel's own build options), and the
same PTX is then loaded with the CUDA driver API (``libcuda``, through ctypes) and
launched on the same data with the same grid (its reads of the OpenCL launch's global
and group offsets, environment registers a CUDA launch leaves unset, replaced by 0:
gtune launches without an offset). Before a configuration is profiled its
CUDA launch is checked against its OpenCL launch: every output buffer equal **bit for
bit**, and the two launches' times side by side (CUDA events against OpenCL's
profiling events, medians of ``--reps`` launches). A configuration whose launches
differ is reported and not profiled.

Two modes, one per process:

- ``check`` (default): build, compare, time; writes ``OUT/check.json`` and
  ``OUT/check.md`` and the PTX of each configuration (``OUT/ptx/*.ptx``).
- ``profile``: run under ``ncu``, launches each checked configuration's PTX (from
  ``OUT/ptx``) ``--launches`` times through CUDA alone (ncu profiles what its own
  options select).

    python3 benchmarks/ncu_ptx.py OUT --device NVIDIA --size 512 --copy \\
        --config heat3d:WX=64,WY=4,... --config box27:...
    ncu --clock-control none --set full --export OUT/prof \\
        python3 benchmarks/ncu_ptx.py OUT --mode profile --device NVIDIA --size 512 ...
    python3 benchmarks/ncu_ptx.py OUT --summary OUT/raw.csv   # the table, from
        # ncu --import OUT/prof.ncu-rep --page raw --csv > OUT/raw.csv

``--cluster X,Y,Z`` (check mode) times each PTX a third way: launched through CUDA in
thread-block clusters of those dimensions (``cuLaunchKernelEx``), whose blocks the
hardware runs at once on the SMs of one GPC, so that neighbouring blocks share where
they run; its outputs too are compared bit for bit. OpenCL has no such launch: this
measures what that placement would be worth.

``--smem KIB`` (check mode) times each PTX launched with that much dynamic shared
memory a block, which the kernel never touches: the same code with fewer blocks
resident an SM (the table shows how many, from ``cuOccupancyMaxActiveBlocksPerMultiprocessor``).
Meant to show what residency is worth apart from the registers that set it; but the
L1 shrinks as the shared memory grows, so it measures L1's room for loads in flight
as well (``results/h200-limit/ncu/residency/``).

One launch is what is compared and profiled: for a kernel with time steps, one launch
of its TB steps (a measurement is S/TB of them). Configurations with a local size,
whose arguments are buffers and scalars (no local-memory arguments, no images), are
supported; anything else is reported with its reason.
"""

from __future__ import annotations

import argparse
import csv
import ctypes
import json
import re
import statistics
import sys
import tempfile
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

import bandwidth as bw
import onestep
from candidate import read_variant
from template_ab import rendering_from

from gtune.commands._common import parse_config
from gtune.kernel import TunableKernel
from gtune.measure.problem import initial_arrays

COPY_CONFIG = {"WX": 128, "VX": 4}  # onestep.py's tuned float4 copy at 512³ on the H200

# The counters summarised (ncu's raw names, and the unit each is shown in); the raw CSV
# keeps every one ncu measured.
METRICS = {
    "time µs": ("gpu__time_duration.sum", "us"),
    "DRAM active %": ("dram__cycles_active.avg.pct_of_peak_sustained_elapsed", "%"),
    "DRAM read MB": ("dram__bytes_read.sum", "Mbyte"),
    "DRAM write MB": ("dram__bytes_write.sum", "Mbyte"),
    "ECC RMW sectors k": ("lts__t_sectors_data_ecc.sum", "ksector"),
    "L2 reads from L1, M sectors": ("lts__t_sectors_srcunit_tex_op_read.sum", "Msector"),
    "L2 read hit %": ("lts__t_sector_op_read_hit_rate.pct", "%"),
    "L2 % peak": ("lts__throughput.avg.pct_of_peak_sustained_elapsed", "%"),
    # the link between the L2's two partitions: lts__throughput's busiest part on the H200
    "L2 fabric active %": (
        "lts__ltcfabric2ltc_cycles_active.avg.pct_of_peak_sustained_elapsed",
        "%",
    ),
    "L2 sectors via fabric, M": ("lts__t_sectors_srcunit_ltcfabric.sum", "Msector"),
    "L1 % peak": ("l1tex__throughput.avg.pct_of_peak_sustained_active", "%"),
    "issue active %": ("smsp__issue_active.avg.pct_of_peak_sustained_active", "%"),
    "warps active %": ("sm__warps_active.avg.pct_of_peak_sustained_active", "%"),
    "registers": ("launch__registers_per_thread", ""),
    "warp instr. M": ("smsp__inst_executed.sum", "Minst"),
    "stall long sb": (
        "smsp__average_warps_issue_stalled_long_scoreboard_per_issue_active.ratio",
        "",
    ),
    "stall barrier": ("smsp__average_warps_issue_stalled_barrier_per_issue_active.ratio", ""),
    "stall short sb": (
        "smsp__average_warps_issue_stalled_short_scoreboard_per_issue_active.ratio",
        "",
    ),
    "shared bank conflicts M": ("l1tex__data_bank_conflicts_pipe_lsu_mem_shared.sum", "M"),
}

# Scale prefixes of ncu's units, for converting a value to the unit METRICS shows.
_PREFIX = {
    "": 1.0,
    "k": 1e3,
    "K": 1e3,
    "M": 1e6,
    "G": 1e9,
    "T": 1e12,
    "m": 1e-3,
    "u": 1e-6,
    "n": 1e-9,
}


def convert(value: float, unit: str, wanted: str) -> float:
    """``value`` in ncu's ``unit`` (``Mbyte``, ``us``, ``sector``, ``%``, ...) expressed in
    ``wanted``: both a prefix and the same base (``""`` and ``M``: counts)."""
    if unit == wanted or wanted in ("%", ""):
        return value
    bases = ("byte", "sector", "inst", "s", "")
    for base in bases:
        if unit.endswith(base) and wanted.endswith(base):
            have, want = unit[: len(unit) - len(base)], wanted[: len(wanted) - len(base)]
            if have in _PREFIX and want in _PREFIX:
                return value * _PREFIX[have] / _PREFIX[want]
    raise ValueError(f"cannot convert {unit!r} to {wanted!r}")


class _Dim3(ctypes.Structure):
    _fields_ = [("x", ctypes.c_uint), ("y", ctypes.c_uint), ("z", ctypes.c_uint)]


class _AttributeValue(ctypes.Union):
    _fields_ = [("pad", ctypes.c_char * 64), ("clusterDim", _Dim3)]


class _Attribute(ctypes.Structure):  # CUlaunchAttribute
    _fields_ = [("id", ctypes.c_int), ("pad", ctypes.c_char * 4), ("value", _AttributeValue)]


class _LaunchConfig(ctypes.Structure):  # CUlaunchConfig
    _fields_ = [
        ("grid", ctypes.c_uint * 3),
        ("block", ctypes.c_uint * 3),
        ("sharedMemBytes", ctypes.c_uint),
        ("hStream", ctypes.c_void_p),
        ("attrs", ctypes.POINTER(_Attribute)),
        ("numAttrs", ctypes.c_uint),
    ]


CLUSTER_DIMENSION = 4  # CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION


class CudaError(RuntimeError):
    pass


# PTX rewrites timed beside the PTX as built (``--ptx-variant``): cache hints that
# OpenCL C cannot express. The rewritten kernel must give the same bits.
_LOADS = r"\bld\.global(\.nc)?\.(v[24]\.)?"
# each global load's L2 miss fetches 256 (128) bytes, not the 32-byte sector alone
_PREFETCH = {size: (_LOADS, rf"ld.global\1.L2::{size}B.\2") for size in (128, 256)}
# stores evict first (streaming): the outputs leave L2 room for the inputs' halos
_EVICT_FIRST = (r"\bst\.global\.", r"st.global.cs.")
# each global load's line kept in L1 by its eviction priority (the halo rows that the
# block's other warps read again), or not kept at all
_L1 = {
    name: (_LOADS, rf"ld.global\1.L1::{name}.\2")
    for name in ("evict_last", "evict_first", "no_allocate")
}
# loads cached in L2 only (``.cg``): what L1's reuse is worth
_L2_ONLY = (_LOADS, r"ld.global.cg\1.\2")
PTX_VARIANTS = {
    "l2-256": [_PREFETCH[256]],
    "l2-128": [_PREFETCH[128]],
    "st-cs": [_EVICT_FIRST],
    "l2-256+st-cs": [_PREFETCH[256], _EVICT_FIRST],
    "l1-last": [_L1["evict_last"]],
    "l1-first": [_L1["evict_first"]],
    "l1-none": [_L1["no_allocate"]],
    "ld-cg": [_L2_ONLY],
}


def rewrite(ptx: str, variant: str) -> str:
    for pattern, repl in PTX_VARIANTS[variant]:
        ptx = re.sub(pattern, repl, ptx)
    return ptx


class Cuda:
    """The few CUDA driver calls a PTX launch needs (primary context of device 0)."""

    def __init__(self) -> None:
        try:
            self.lib = ctypes.CDLL("libcuda.so.1")
        except OSError as exc:
            raise CudaError(f"no CUDA driver here ({exc}): ncu_ptx needs an NVIDIA GPU") from exc
        self.call("cuInit", 0)
        dev = ctypes.c_int()
        self.call("cuDeviceGet", ctypes.byref(dev), 0)
        self.ctx = ctypes.c_void_p()
        self.call("cuDevicePrimaryCtxRetain", ctypes.byref(self.ctx), dev)
        self.call("cuCtxSetCurrent", self.ctx)

    def call(self, name: str, *args: Any) -> None:
        fn = getattr(self.lib, name)
        rc = fn(*args)
        if rc != 0:
            text = ctypes.c_char_p()
            self.lib.cuGetErrorString(rc, ctypes.byref(text))
            raise CudaError(f"{name}: error {rc} ({(text.value or b'?').decode()})")

    def load(self, ptx: str, entry: str) -> tuple[ctypes.c_void_p, int]:
        """The kernel ``entry`` of ``ptx``, and its registers per thread."""
        mod = ctypes.c_void_p()
        self.call("cuModuleLoadData", ctypes.byref(mod), ctypes.c_char_p(ptx.encode() + b"\0"))
        fn = ctypes.c_void_p()
        self.call("cuModuleGetFunction", ctypes.byref(fn), mod, entry.encode())
        regs = ctypes.c_int()
        self.call("cuFuncGetAttribute", ctypes.byref(regs), 4, fn)  # NUM_REGS
        return fn, regs.value

    def resident(self, fn: ctypes.c_void_p, threads: int, smem: int) -> int:
        """How many blocks of ``threads`` with ``smem`` bytes of dynamic shared memory an
        SM holds at once (``smem`` above 48 KiB is allowed for ``fn`` first)."""
        if smem > 48 * 1024:  # CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES
            self.call("cuFuncSetAttribute", fn, 8, ctypes.c_int(smem))
        n = ctypes.c_int()
        self.call(
            "cuOccupancyMaxActiveBlocksPerMultiprocessor",
            ctypes.byref(n),
            fn,
            ctypes.c_int(threads),
            ctypes.c_size_t(smem),
        )
        return n.value

    def upload(self, arr: np.ndarray) -> ctypes.c_uint64:
        ptr = ctypes.c_uint64()
        self.call("cuMemAlloc_v2", ctypes.byref(ptr), ctypes.c_size_t(arr.nbytes))
        host = np.ascontiguousarray(arr)
        self.call("cuMemcpyHtoD_v2", ptr, host.ctypes.data_as(ctypes.c_void_p), arr.nbytes)
        return ptr

    def download(self, ptr: ctypes.c_uint64, like: np.ndarray) -> np.ndarray:
        out = np.empty_like(like)
        self.call("cuMemcpyDtoH_v2", out.ctypes.data_as(ctypes.c_void_p), ptr, like.nbytes)
        return out

    def free(self, ptr: ctypes.c_uint64) -> None:
        self.call("cuMemFree_v2", ptr)

    def launch(
        self,
        fn: ctypes.c_void_p,
        grid: Sequence[int],
        block: Sequence[int],
        params: list[Any],
        cluster: Sequence[int] | None = None,
        smem: int = 0,
    ) -> float:
        """One launch, synchronised: its time by CUDA events (s). With ``cluster``, the
        blocks are launched in thread-block clusters of those dimensions
        (``cuLaunchKernelEx``): each cluster's blocks run at once on one GPC. ``smem``:
        bytes of dynamic shared memory each block holds (and the kernel never uses)."""
        holders = (ctypes.c_void_p * len(params))(
            *[ctypes.cast(ctypes.byref(p), ctypes.c_void_p) for p in params]
        )
        start, stop = ctypes.c_void_p(), ctypes.c_void_p()
        self.call("cuEventCreate", ctypes.byref(start), 0)
        self.call("cuEventCreate", ctypes.byref(stop), 0)
        self.call("cuEventRecord", start, None)
        g = list(grid) + [1] * (3 - len(grid))
        b = list(block) + [1] * (3 - len(block))
        if cluster is None:
            self.call("cuLaunchKernel", fn, *g, *b, smem, None, holders, None)
        else:
            attr = _Attribute(id=CLUSTER_DIMENSION)
            attr.value.clusterDim = _Dim3(*cluster)
            config = _LaunchConfig(
                (ctypes.c_uint * 3)(*g),
                (ctypes.c_uint * 3)(*b),
                smem,
                None,
                ctypes.pointer(attr),
                1,
            )
            self.call("cuLaunchKernelEx", ctypes.byref(config), fn, holders, None)
        self.call("cuEventRecord", stop, None)
        self.call("cuEventSynchronize", stop)
        ms = ctypes.c_float()
        self.call("cuEventElapsedTime", ctypes.byref(ms), start, stop)
        self.call("cuEventDestroy_v2", start)
        self.call("cuEventDestroy_v2", stop)
        return ms.value * 1e-3


@dataclass
class Case:
    label: str
    kernel: TunableKernel
    config: dict[str, int]


def offsets_zeroed(ptx: str) -> str:
    """``ptx`` with its reads of the OpenCL launch's offsets replaced by 0. NVIDIA's
    OpenCL reads the global offset (``%envreg3``-``5``) and the group offset
    (``%envreg0``-``2``) from environment registers that a CUDA launch does not set;
    gtune launches with no offset."""
    ptx = re.sub(r"(mov\.b32\s+%r\d+,\s*)%envreg\d+;", r"\g<1>0;", ptx)
    if "%envreg" in ptx:
        raise CudaError("the PTX reads an environment register other than by mov.b32")
    return ptx


def entry_params(ptx: str) -> tuple[str, list[str]]:
    """The PTX's one kernel: its name and its parameters' types (``u64`` etc.)."""
    found = re.search(r"\.entry\s+(\w+)\s*\(([^)]*)\)", ptx, re.S)
    if found is None:
        raise CudaError("no .entry in the PTX")
    types = re.findall(r"\.param\s+\.(\w+)", found.group(2))
    return found.group(1), types


def cases(args: argparse.Namespace) -> list[Case]:
    out: list[Case] = []
    work = Path(tempfile.mkdtemp(prefix="ncu_ptx_"))
    if args.copy:
        sizes = {"NX": args.size, "NY": args.size, "NZ": args.size}
        out.append(Case("copy", bw.copy_kernel(work / "copy", sizes), dict(COPY_CONFIG)))
    loaded: dict[str, TunableKernel] = {}
    template = read_variant(args.template) if args.template else None
    for spec in args.config:
        name, _, values = spec.partition(":")
        if name not in loaded:
            with rendering_from(template):
                loaded[name] = onestep.load(name, args.size, 16 * args.size)[1]
        label = Path(name).name.removesuffix(".stencil.yaml")
        out.append(Case(f"{label} {values}", loaded[name], parse_config(values)))
    return out


def scalar(dtype: str, value: Any) -> Any:
    kinds = {
        "float32": ctypes.c_float,
        "float64": ctypes.c_double,
        "int32": ctypes.c_int32,
        "uint32": ctypes.c_uint32,
        "int64": ctypes.c_int64,
        "uint64": ctypes.c_uint64,
    }
    if dtype not in kinds:
        raise CudaError(f"scalar argument of type {dtype}")
    return kinds[dtype](value)


class CudaSide:
    """One configuration's PTX launched through CUDA on its kernel's initial data."""

    def __init__(
        self,
        case: Case,
        ptx: str,
        cuda: Cuda,
        cluster: Sequence[int] | None = None,
        smem: int = 0,
    ) -> None:
        kernel, cfg = case.kernel, case.kernel.with_defaults(case.config)
        glob, loc = kernel.launch_sizes(cfg)
        if loc is None:
            raise CudaError("no local size")
        self.glob, self.loc = glob, loc
        self.grid = [g // max(1, c) for g, c in zip(glob, loc, strict=True)]
        self.block = list(loc)
        self.cluster = None if cluster is None else list(cluster)
        if self.cluster is not None:
            grid3 = self.grid + [1] * (3 - len(self.grid))
            if any(g % c for g, c in zip(grid3, self.cluster, strict=True)):
                raise CudaError(f"clusters of {self.cluster} do not divide the grid {grid3}")
        self.ptx = ptx
        ptx = offsets_zeroed(ptx)
        self.entry, types = entry_params(ptx)
        if len(types) != len(kernel.arguments):
            raise CudaError(f"PTX has {len(types)} parameters, the kernel {len(kernel.arguments)}")
        self.fn, self.registers = cuda.load(ptx, self.entry)
        self.smem = smem
        self.resident = cuda.resident(self.fn, int(np.prod(self.block)), smem)
        self.cuda = cuda
        self.arrays = initial_arrays(kernel)
        env = dict(kernel.sizes)
        self.scalars: list[Any] = []  # (the OpenCL side's values)
        self.params: list[Any] = []
        self.buffers: dict[str, ctypes.c_uint64] = {}
        for arg in kernel.arguments:
            if arg.kind == "scalar":
                assert arg.value is not None
                value = np.dtype(arg.dtype).type(arg.value.evaluate(env))
                self.scalars.append(value)
                self.params.append(scalar(arg.dtype, value))
            elif arg.kind == "buffer" and not kernel.uses_image(arg, cfg):
                self.buffers[arg.name] = cuda.upload(self.arrays[arg.name])
                self.params.append(self.buffers[arg.name])
            else:
                raise CudaError(f"argument {arg.name} ({arg.kind}) is not supported")

    def run(self) -> float:
        return self.cuda.launch(
            self.fn, self.grid, self.block, self.params, self.cluster, self.smem
        )

    def output(self, name: str) -> np.ndarray:
        return self.cuda.download(self.buffers[name], self.arrays[name])

    def close(self) -> None:
        for ptr in self.buffers.values():
            self.cuda.free(ptr)


class Pair:
    """One configuration built once by the OpenCL driver, launched through OpenCL and,
    as its PTX, through CUDA."""

    def __init__(self, case: Case, device: Any, cuda: Cuda) -> None:
        import pyopencl as cl

        from gtune.measure._opencl import build_program

        kernel, cfg = case.kernel, case.kernel.with_defaults(case.config)
        self.context = cl.Context([device])
        self.queue = cl.CommandQueue(
            self.context, device, properties=cl.command_queue_properties.PROFILING_ENABLE
        )
        program = build_program(
            cl.Program(self.context, kernel.source), self.context, device, kernel.defines(cfg)
        )
        ptx = bytes(program.get_info(cl.program_info.BINARIES)[0]).decode(errors="replace")
        self.cu = CudaSide(case, ptx, cuda)
        self.kernel = cl.Kernel(program, self.cu.entry)
        mf = cl.mem_flags
        self.buffers = {
            name: cl.Buffer(self.context, mf.READ_WRITE | mf.COPY_HOST_PTR, hostbuf=arr)
            for name, arr in self.cu.arrays.items()
        }
        scalars = iter(self.cu.scalars)
        self.kernel.set_args(
            *(
                next(scalars) if arg.kind == "scalar" else self.buffers[arg.name]
                for arg in kernel.arguments
            )
        )

    def run_cl(self) -> float:
        import pyopencl as cl

        event = cl.enqueue_nd_range_kernel(self.queue, self.kernel, self.cu.glob, self.cu.loc)
        event.wait()
        return float(event.profile.end - event.profile.start) * 1e-9

    def differing(self) -> list[str]:
        """The buffers whose CUDA and OpenCL contents differ after one launch of each
        from the same initial data."""
        import pyopencl as cl

        self.run_cl()
        self.cu.run()
        bad = []
        for name, buf in self.buffers.items():
            mine = np.empty_like(self.cu.arrays[name])
            cl.enqueue_copy(self.queue, mine, buf).wait()
            if mine.tobytes() != self.cu.output(name).tobytes():
                bad.append(name)
        return bad


def variant_sides(
    pair: Pair,
    case: Case,
    cuda: Cuda,
    variants: Sequence[str],
    clusters: Sequence[tuple[int, int, int]] = (),
    smems: Sequence[int] = (),
) -> dict[str, CudaSide | str]:
    """Each PTX variant of ``pair``'s kernel, the PTX as built launched in each of
    ``clusters`` (``cluster-XxYxZ``), and launched with each of ``smems`` bytes of
    dynamic shared memory a block (``smem-NK``: fewer blocks resident an SM, the code
    the same), launched once from the initial data and compared with the PTX as built
    (launched once too): the side, or why it is left out (its build or launch failed or
    its outputs differ)."""
    sides: dict[str, CudaSide | str] = {}
    launches: list[tuple[str, str | None, tuple[int, int, int] | None, int]] = [
        (name, name, None, 0) for name in variants
    ]
    launches += [(f"cluster-{'x'.join(map(str, c))}", None, c, 0) for c in clusters]
    launches += [(f"smem-{b // 1024}K", None, None, b) for b in smems]
    for name, variant, cluster, smem in launches:
        try:
            ptx = pair.cu.ptx if variant is None else rewrite(pair.cu.ptx, variant)
            side = CudaSide(case, ptx, cuda, cluster=cluster, smem=smem)
        except CudaError as exc:
            sides[name] = str(exc)[:300]
            continue
        side.run()
        differs = [
            n for n in side.buffers if side.output(n).tobytes() != pair.cu.output(n).tobytes()
        ]
        sides[name] = side if not differs else "outputs differ: " + ", ".join(differs)
    return sides


def check(args: argparse.Namespace, device: Any) -> list[dict[str, Any]]:
    cuda = Cuda()
    rows: list[dict[str, Any]] = []
    (args.outdir / "ptx").mkdir(parents=True, exist_ok=True)
    for i, case in enumerate(cases(args)):
        row: dict[str, Any] = {"case": case.label, "index": i}
        try:
            pair = Pair(case, device, cuda)
        except (CudaError, RuntimeError) as exc:
            row["error"] = str(exc)[:500]
            rows.append(row)
            print(f"{case.label}: {row['error']}", flush=True)
            continue
        (args.outdir / "ptx" / f"{i:02d}.ptx").write_text(pair.cu.ptx)
        row["differs"] = pair.differing()
        row["registers"], row["resident"] = pair.cu.registers, pair.cu.resident
        row["grid"], row["block"] = pair.cu.grid, pair.cu.block
        sides = variant_sides(pair, case, cuda, args.ptx_variant, args.cluster, args.smem)
        timed: dict[str, list[float]] = {"opencl": [], "cuda": []}
        timed.update({v: [] for v, side in sides.items() if isinstance(side, CudaSide)})
        for _ in range(args.reps):  # alternating, so drift hits all alike
            timed["opencl"].append(pair.run_cl())
            timed["cuda"].append(pair.cu.run())
            for v, side in sides.items():
                if isinstance(side, CudaSide):
                    timed[v].append(side.run())
        row["opencl_s"], row["cuda_s"] = (
            statistics.median(timed["opencl"]),
            statistics.median(timed["cuda"]),
        )
        row["variants"] = {
            v: {"s": statistics.median(timed[v]), "resident": side.resident}
            if isinstance(side, CudaSide)
            else {"error": side}
            for v, side in sides.items()
        }
        for side in [pair.cu, *sides.values()]:
            if isinstance(side, CudaSide):
                side.close()
        rows.append(row)
        print(
            f"{case.label}: equal={not row['differs']} opencl {row['opencl_s'] * 1e3:.4f} ms "
            f"cuda {row['cuda_s'] * 1e3:.4f} ms regs {row['registers']} {row['variants']}",
            flush=True,
        )
    return rows


def check_table(rows: Sequence[Mapping[str, Any]], device: str) -> str:
    variants = list(next((r["variants"] for r in rows if "variants" in r), {}))
    lines = [
        f"# OpenCL and CUDA launches of the same PTX on {device}",
        "",
        "Each configuration's PTX (NVIDIA's OpenCL compiler) launched through OpenCL and",
        "through the CUDA driver on the same initial data: outputs compared bit for bit,",
        "times the medians of alternating launches.",
        "",
        "PTX variants (columns after the CUDA time): the PTX rewritten (`PTX_VARIANTS`),",
        "its outputs equal to the PTX as built, bit for bit, else left out; its time and",
        "ratio to the CUDA launch of the PTX as built; `smem-NK` is the PTX as built",
        "launched with N KiB of dynamic shared memory a block, which it never uses, and",
        "also shows the blocks an SM holds at once (`registers` shows them as built).",
        "",
        "| # | configuration | outputs equal | OpenCL ms | CUDA ms | registers |"
        + "".join(f" {v} |" for v in variants),
        "| --- | --- | --- | ---: | ---: | ---: |" + " ---: |" * len(variants),
    ]
    for r in rows:
        if "error" in r:
            lines.append(f"| {r['index']} | {r['case']} | not run: {r['error']} | | | |")
            continue
        equal = "yes" if not r["differs"] else "**no**: " + ", ".join(r["differs"])
        resident = f" ({r['resident']}/SM)" if "resident" in r else ""
        lines.append(
            f"| {r['index']} | {r['case']} | {equal} | {r['opencl_s'] * 1e3:.4f} | "
            f"{r['cuda_s'] * 1e3:.4f} | {r['registers']}{resident} |"
            + "".join(f" {variant_cell(r, v)} |" for v in variants)
        )
    return "\n".join(lines) + "\n"


def variant_cell(row: Mapping[str, Any], variant: str) -> str:
    got = row.get("variants", {}).get(variant, {"error": "not run"})
    if "error" in got:
        return f"left out: {got['error']}"
    cell = f"{got['s'] * 1e3:.4f} ({got['s'] / row['cuda_s']:.3f})"
    return cell + (f", {got['resident']}/SM" if variant.startswith("smem-") else "")


def profile(args: argparse.Namespace) -> None:
    """Each checked configuration's PTX (as ``check`` wrote it) launched through CUDA
    alone: no OpenCL in the profiled process."""
    checked = json.loads((args.outdir / "check.json").read_text())
    good = {r["index"] for r in checked if "error" not in r and not r["differs"]}
    cuda = Cuda()
    for i, case in enumerate(cases(args)):
        if i not in good:
            continue
        side = CudaSide(case, (args.outdir / "ptx" / f"{i:02d}.ptx").read_text(), cuda)
        for _ in range(args.launches):
            side.run()
        side.close()
        print(f"profiled {i}: {case.label}", flush=True)


def summary(raw: Path, checked: Sequence[Mapping[str, Any]]) -> str:
    """The table of ``METRICS`` from ncu's raw CSV (``--page raw --csv``: a header row,
    a units row, one row per profiled launch in launch order). With ``--launches`` N
    each checked configuration has N rows; the last is shown."""
    with raw.open(newline="") as f:
        reader = csv.reader(f)
        head = next(reader)
        units = next(reader)
        rows = [dict(zip(head, r, strict=False)) for r in reader]
    unit_of = dict(zip(head, units, strict=False))
    good = [r for r in checked if "error" not in r and not r["differs"]]
    if not good or len(rows) % len(good):
        raise SystemExit(f"{raw}: {len(rows)} profiled launches for {len(good)} configurations")
    per = len(rows) // len(good)
    names = list(METRICS)
    lines = [
        "| metric | " + " | ".join(f"{r['index']}" for r in good) + " |",
        "| --- |" + " ---: |" * len(good),
    ]
    for name in names:
        metric, wanted = METRICS[name]
        cells = []
        for k in range(len(good)):
            text = rows[(k + 1) * per - 1].get(metric, "").replace(",", "")
            try:
                value = convert(float(text), unit_of.get(metric, ""), wanted)
            except ValueError:
                cells.append("—")
                continue
            cells.append(f"{value:.3g}" if abs(value) < 1000 else f"{value:.0f}")
        lines.append(f"| {name} | " + " | ".join(cells) + " |")
    legend = "\n".join(f"- {r['index']}: {r['case']}" for r in good)
    return legend + "\n\n" + "\n".join(lines) + "\n"


def smem_bytes(text: str) -> int:
    """``--smem``'s value: KiB of dynamic shared memory a block, 1 to 227 (the most a
    block of an H100 or H200 may ask for), as bytes."""
    if not text.isdigit() or not 1 <= int(text) <= 227:
        raise argparse.ArgumentTypeError(f"{text!r}: KiB from 1 to 227")
    return int(text) * 1024


def cluster_dims(text: str) -> tuple[int, int, int]:
    """``--cluster``'s value: three whole numbers from 1 to 8, at most 8 blocks in all
    (the portable cluster size)."""
    parts = text.split(",")
    if len(parts) != 3 or not all(p.isdigit() and 1 <= int(p) <= 8 for p in parts):
        raise argparse.ArgumentTypeError(f"{text!r}: three whole numbers X,Y,Z from 1 to 8")
    x, y, z = (int(p) for p in parts)
    if x * y * z > 8:
        raise argparse.ArgumentTypeError(f"{text!r}: at most 8 blocks a cluster")
    return x, y, z


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("outdir", type=Path)
    ap.add_argument("--mode", choices=["check", "profile"], default="check")
    ap.add_argument("--config", action="append", default=[], help="KERNEL:N=V,...")
    ap.add_argument("--copy", action="store_true", help="the float4 copy first")
    ap.add_argument("--device", default="NVIDIA")
    ap.add_argument("--size", type=int, default=512, help="3D cube side (2D: 16x this)")
    ap.add_argument("--reps", type=int, default=9)
    ap.add_argument("--launches", type=int, default=1, help="CUDA launches per configuration")
    ap.add_argument(
        "--ptx-variant",
        action="append",
        default=[],
        choices=sorted(PTX_VARIANTS),
        help="check mode: time this rewrite of each PTX too (repeatable)",
    )
    ap.add_argument(
        "--cluster",
        action="append",
        default=[],
        metavar="X,Y,Z",
        type=cluster_dims,
        help="check mode: time each PTX launched in thread-block clusters of these "
        "dimensions too (cuLaunchKernelEx; repeatable; where they divide the grid)",
    )
    ap.add_argument(
        "--smem",
        action="append",
        default=[],
        metavar="KIB",
        type=smem_bytes,
        help="check mode: time each PTX launched with this much dynamic shared memory a "
        "block too (KiB, 1-227; repeatable): fewer blocks an SM, the same code",
    )
    ap.add_argument("--summary", type=Path, help="ncu's raw CSV: write OUT/ncu.md and stop")
    ap.add_argument(
        "--template",
        type=Path,
        help="render the kernels from this candidate template (benchmarks/candidates/"
        "*.patch or a whole stencil.cl), in the check and the profile alike",
    )
    args = ap.parse_args(argv)
    args.outdir.mkdir(parents=True, exist_ok=True)
    if args.summary is not None:
        checked = json.loads((args.outdir / "check.json").read_text())
        (args.outdir / "ncu.md").write_text(summary(args.summary, checked))
        return 0
    try:
        if args.mode == "profile":
            profile(args)
            return 0
        from h200_ptx import cl_device

        device = cl_device(args.device)
        rows = check(args, device)
    except CudaError as exc:
        print(f"ncu_ptx: {exc}", file=sys.stderr)
        return 2
    (args.outdir / "check.json").write_text(json.dumps(rows, indent=1))
    (args.outdir / "check.md").write_text(check_table(rows, str(device.name)))
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""The OpenCL backend: with ``gtune/runtime/opencl.py``, the only module of gtune that
imports pyopencl.

It queries devices, builds programs with ``-D`` defines, uploads problem data once,
launches with profiling events, verifies outputs on the device and classifies
failures by OpenCL error code into :class:`~gtune.measure.result.Status`.

Everything here runs inside worker processes (see ``_worker.py``) except device
listing, which is harmless in the parent. The runtime, which runs in the application's
own process, shares two functions: :func:`build_program` and :func:`limits_of`.
"""

from __future__ import annotations

import contextlib
import hashlib
import statistics
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pyopencl as cl
from pyopencl import cltypes

from gtune.device import TUNING_EXTENSIONS, DeviceLimits, choose_device, same_device
from gtune.exceptions import EnvironmentProblem, InputError
from gtune.kernel import Argument, TunableKernel, lane_names
from gtune.measure.buildslots import host_slots
from gtune.measure.bundle import bundle
from gtune.measure.devlock import DeviceLock
from gtune.measure.regcap import register_cap, with_maxnreg
from gtune.measure.result import Result, Status
from gtune.measure.staticlocal import CEILING, SOURCE, largest_fitting
from gtune.measure.stats import TimingPolicy, relative_halfwidth

# OpenCL error codes (cl.h). Classification uses these numbers, never message text.
CL_OUT_OF_RESOURCES = -5
CL_OUT_OF_HOST_MEMORY = -6
CL_MEM_OBJECT_ALLOCATION_FAILURE = -4
CL_BUILD_PROGRAM_FAILURE = -11
CL_INVALID_BINARY = -42
CL_INVALID_BUILD_OPTIONS = -43
CL_INVALID_PROGRAM_EXECUTABLE = -45
CL_INVALID_KERNEL_NAME = -46
CL_INVALID_ARG_SIZE = -51
CL_INVALID_KERNEL_ARGS = -52
CL_INVALID_WORK_DIMENSION = -53
CL_INVALID_WORK_GROUP_SIZE = -54
CL_INVALID_WORK_ITEM_SIZE = -55
CL_INVALID_GLOBAL_OFFSET = -56
CL_INVALID_IMAGE_SIZE = -40
CL_IMAGE_FORMAT_NOT_SUPPORTED = -10
CL_INVALID_GLOBAL_WORK_SIZE = -63

BUILD_CODES = {CL_BUILD_PROGRAM_FAILURE, CL_INVALID_BUILD_OPTIONS, CL_INVALID_BINARY}
LAUNCH_CODES = {
    CL_OUT_OF_RESOURCES,
    CL_OUT_OF_HOST_MEMORY,
    CL_MEM_OBJECT_ALLOCATION_FAILURE,
    CL_INVALID_ARG_SIZE,
    CL_INVALID_KERNEL_ARGS,
    CL_INVALID_WORK_DIMENSION,
    CL_INVALID_WORK_GROUP_SIZE,
    CL_INVALID_WORK_ITEM_SIZE,
    CL_INVALID_GLOBAL_OFFSET,
    CL_INVALID_GLOBAL_WORK_SIZE,
    CL_INVALID_IMAGE_SIZE,
    CL_IMAGE_FORMAT_NOT_SUPPORTED,
    CL_INVALID_PROGRAM_EXECUTABLE,
}

_NO_PLATFORM_HINT = (
    "install an OpenCL driver: on Debian/Ubuntu `apt-get install pocl-opencl-icd "
    "ocl-icd-libopencl1` gives a CPU device; GPU vendors ship their own"
)


def vector_scalar(dtype: str, values: Sequence[int | float]) -> Any:
    """A vector scalar's value as ``clSetKernelArg`` takes it: pyopencl's vector type of
    ``dtype`` (``uint2``: 8 bytes; a 3-vector takes 4 lanes' room)."""
    vec = cltypes.vec_types[(np.dtype(dtype), len(values))]
    return np.array(tuple(values), dtype=vec)


def error_code(exc: BaseException) -> int | None:
    code = getattr(exc, "code", None)
    if isinstance(code, int):
        return code
    if exc.args and hasattr(exc.args[0], "code"):
        inner = exc.args[0].code
        if callable(inner):
            inner = inner()
        return int(inner) if isinstance(inner, int) else None
    return None


def _platforms() -> list[Any]:
    try:
        return list(cl.get_platforms())
    except cl.Error as exc:
        # -1001 is CL_PLATFORM_NOT_FOUND_KHR from the ICD loader.
        raise EnvironmentProblem(
            f"no OpenCL platform found (error {error_code(exc)})", hint=_NO_PLATFORM_HINT
        ) from None


def limits_of(
    platform: Any, device: Any, pi: int, di: int, *, static_local: bool = True
) -> DeviceLimits:
    """The limits and identity of ``device`` (platform ``pi``, device ``di``), as the
    store records them; ``static_local`` False leaves ``local_mem_static`` unmeasured
    (0), for a process that only looks for a device by its identity."""

    def get(attr: str, default: Any) -> Any:
        try:
            return getattr(device, attr)
        except (cl.Error, AttributeError):
            return default

    exts = tuple(sorted(set(str(get("extensions", "")).split())))
    return DeviceLimits(
        platform=str(platform.name).strip(),
        name=str(device.name).strip(),
        vendor=str(device.vendor).strip(),
        type=_device_type(int(device.type)),
        driver_version=str(device.driver_version).strip(),
        opencl_version=str(device.version).strip(),
        opencl_c_version=str(get("opencl_c_version", "")).strip(),
        compute_units=int(device.max_compute_units),
        max_work_group_size=int(device.max_work_group_size),
        max_work_item_sizes=tuple(int(x) for x in device.max_work_item_sizes),
        local_mem_size=int(device.local_mem_size),
        local_mem_type={1: "LOCAL", 2: "GLOBAL"}.get(int(get("local_mem_type", 1)), "NONE"),
        max_mem_alloc_size=int(device.max_mem_alloc_size),
        global_mem_size=int(device.global_mem_size),
        max_clock_mhz=int(get("max_clock_frequency", 0)),
        image_support=bool(device.image_support),
        image2d_max=(int(get("image2d_max_width", 0)), int(get("image2d_max_height", 0))),
        image3d_max=(
            int(get("image3d_max_width", 0)),
            int(get("image3d_max_height", 0)),
            int(get("image3d_max_depth", 0)),
        ),
        preferred_vector_width_float=int(get("preferred_vector_width_float", 1)),
        native_vector_width_float=int(get("native_vector_width_float", 1)),
        extensions=tuple(e for e in exts if e in TUNING_EXTENSIONS),
        local_mem_static=static_local_limit(device) if static_local else 0,
        platform_index=pi,
        device_index=di,
    )


_static_local: dict[tuple[str, str, str], int] = {}


def launches_with(context: Any, queue: Any, nbytes: int) -> bool:
    """Whether a kernel whose own ``__local`` array takes ``nbytes`` builds, launches
    and reads back every element right on the context's device."""
    n = nbytes // 4
    try:
        kernel = cl.Program(context, SOURCE).build(options=[f"-DN={n}"]).static_local_
        out = cl.Buffer(context, cl.mem_flags.READ_WRITE, size=4)
        cl.enqueue_fill_buffer(queue, out, np.zeros(1, np.int32), 0, 4)
        kernel(queue, (64,), (64,), out)
        got = np.zeros(1, np.int32)
        cl.enqueue_copy(queue, got, out).wait()
    except cl.Error:
        return False
    return int(got[0]) == n


def static_local_measured(device: Any) -> bool:
    """Whether ``device``'s ``LOCAL_MEM_STATIC`` is measured (NVIDIA's GPUs) rather
    than its driver's ``local_mem_size``."""
    return "NVIDIA" in str(device.platform.name).upper() and bool(
        int(device.type) & cl.device_type.GPU
    )


def static_local_limit(device: Any, ceiling: int = CEILING) -> int:
    """The most local memory a kernel's own arrays may take on ``device`` (bytes, at
    least its ``local_mem_size``), measured once per process
    (``gtune.measure.staticlocal``); 0 where it is not measured."""
    if not static_local_measured(device):
        return 0
    key = (str(device.platform.name), str(device.name), str(device.driver_version))
    if key not in _static_local:
        reported = int(device.local_mem_size)
        context = cl.Context([device])
        queue = cl.CommandQueue(context)
        _static_local[key] = largest_fitting(
            reported, max(reported, ceiling), lambda n: launches_with(context, queue, n)
        )
    return _static_local[key]


def _device_type(bits: int) -> str:
    names = [(1 << 1, "CPU"), (1 << 2, "GPU"), (1 << 3, "ACCELERATOR"), (1 << 4, "CUSTOM")]
    found = [name for bit, name in names if bits & bit]
    return " | ".join(found) or "DEFAULT"


def list_devices() -> list[DeviceLimits]:
    """Every OpenCL device on every platform, with what matters for tuning."""
    out = []
    for pi, platform in enumerate(_platforms()):
        try:
            devices = platform.get_devices()
        except cl.Error:
            continue
        for di, device in enumerate(devices):
            out.append(limits_of(platform, device, pi, di))
    if not out:
        raise EnvironmentProblem(
            "OpenCL platforms exist but expose no device", hint=_NO_PLATFORM_HINT
        )
    return out


def select_device(selector: str | None = None) -> DeviceLimits:
    """Pick a device by ``P:D`` index, identity, or name/type substring (in this process)."""
    return choose_device(list_devices(), selector)


def _cl_device(limits: DeviceLimits) -> Any:
    """The device ``limits`` describes: of its identity, the one at its index (two
    identical GPUs share an identity; each worker bound to one must open that one)."""
    listed: list[DeviceLimits] = []
    devices: list[Any] = []
    for pi, platform in enumerate(_platforms()):
        for di, device in enumerate(platform.get_devices()):
            listed.append(limits_of(platform, device, pi, di, static_local=False))
            devices.append(device)
    i = same_device(listed, limits)
    if i is None:
        raise EnvironmentProblem(f"device {limits.name} ({limits.identity}) is no longer present")
    return devices[i]


# ---------------------------------------------------------------------------------
# Building


@dataclass
class Built:
    status: Status
    compile_s: float
    log: str
    binary: bytes | None = None
    code: int | None = None
    wait_s: float = 0.0  # waited for a build slot first


@dataclass
class BuiltBundle:
    """Configurations built together (see :meth:`Compiler.build_bundle`): ``binary`` is
    the bundle's program, one for all of them (None when they were built singly, each
    with its own ``Built.binary``); configuration ``i``'s kernel is ``names[i]``."""

    built: list[Built]
    names: list[str]
    binary: bytes | None = None
    why: str = ""  # why the source could not be bundled (then built singly)
    wait_s: float = 0.0


class Compiler:
    """Builds programs for one device; also used alone in compile workers."""

    def __init__(
        self, limits: DeviceLimits, build_lock_s: float | None = None, *, context: Any = None
    ) -> None:
        """``build_lock_s``: builds hold the device lock shared (a CPU device, where a
        build would slow down a kernel timed on the same cores), waiting at most that
        long for it before building unlocked; None: builds take no lock. ``context``: a
        driver context on the device to build in (default: a new one)."""
        self.limits = limits
        if context is None:
            self.device = _cl_device(limits)
            self.context = cl.Context([self.device])
        else:
            self.device = context.devices[0]
            self.context = context
        self.lock = DeviceLock(limits)
        self.build_lock_s = build_lock_s
        #: The host's build slots, taken by :meth:`build_binary` (compile workers).
        self.slots = host_slots()

    def build(self, source: str, options: list[str]) -> tuple[Any, Built]:
        if self.build_lock_s is None:
            return self._build(source, options)
        with self.lock.shared(self.build_lock_s):
            return self._build(source, options)

    def _build(self, source: str, options: list[str]) -> tuple[Any, Built]:
        start = time.perf_counter()
        program: Any = None
        try:
            program = cl.Program(self.context, source)
            program = build_program(program, self.context, self.device, options)
        except ValueError as exc:  # a register cap that is not a number
            return None, Built(Status.BUILD_FAILED, 0.0, str(exc), None, CL_INVALID_BUILD_OPTIONS)
        except cl.Error as exc:
            elapsed = time.perf_counter() - start
            log = _build_log(program, self.device) or str(exc)
            code = error_code(exc)
            status = Status.BUILD_FAILED if code in BUILD_CODES or code is None else Status.CRASHED
            return None, Built(status, elapsed, log, None, code)
        elapsed = time.perf_counter() - start
        return program, Built(Status.OK, elapsed, _build_log(program, self.device))

    def check(self, source: str, options: list[str], name: str) -> dict[str, Any]:
        """Whether ``source`` builds with ``options`` and holds kernel ``name``: plain
        data (``ok``, the OpenCL error ``code``, the build ``log``)."""
        program, built = self.build(source, options)
        if program is None:
            return {"ok": False, "code": built.code, "log": built.log}
        try:
            cl.Kernel(program, name)
        except (cl.Error, AttributeError) as exc:
            code = error_code(exc) if isinstance(exc, cl.Error) else None
            return {"ok": False, "code": code or CL_INVALID_KERNEL_NAME, "log": str(exc)}
        return {"ok": True, "code": None, "log": built.log}

    def build_binary(self, source: str, options: list[str]) -> Built:
        """Build and finalise (create the kernels, which makes drivers that compile
        lazily do so now), then hand back the binary. A compile worker of a host with
        build slots (gtune.measure.buildslots) holds one while it builds; the time
        waited for it is in ``wait_s``, not in ``compile_s``."""
        if self.slots is None:
            return self._locked_build_binary(source, options)
        with self.slots.held() as waited:
            built = self._locked_build_binary(source, options)
        built.wait_s = waited
        return built

    def build_bundle(
        self, source: str, name: str, options: list[list[str]], *, binary: bool = True
    ) -> BuiltBundle:
        """Build the configurations of kernel ``name`` given by ``options`` (one option
        list each) as one program (gtune.measure.bundle), holding one build slot.
        ``binary`` False: only whether each builds (no kernels made, no binary fetched;
        on PoCL half the work), ``binary`` None throughout.

        Each configuration's ``compile_s`` is the bundle's build time over their number:
        the fixed cost of a build shared out. Where the bundle does not build (one
        configuration's ``#error``, a source the renaming does not handle) each is built
        singly, so a failure has its own log and the others still succeed; each then
        also carries its share of the failed bundle's time. A source that cannot be
        bundled at all is built singly, and ``why`` says why."""
        if self.slots is None:
            return self._build_bundle(source, name, options, binary)
        with self.slots.held() as waited:
            built = self._build_bundle(source, name, options, binary)
        built.wait_s = waited
        return built

    def _build_bundle(
        self, source: str, name: str, options: list[list[str]], binary: bool
    ) -> BuiltBundle:
        build = self._locked_build_binary if binary else self._built_only
        made = bundle(source, name, options)
        if isinstance(made, str):
            singles = [build(source, o) for o in options]
            return BuiltBundle(singles, [name] * len(options), why=made)
        whole = build(made.source, made.options)
        share = whole.compile_s / len(options)
        if whole.status is Status.OK:
            each = [Built(Status.OK, share, whole.log) for _ in options]
            return BuiltBundle(each, made.names, whole.binary)
        singles = [build(source, o) for o in options]
        for b in singles:
            b.compile_s += share
        return BuiltBundle(singles, [name] * len(options))

    def _built_only(self, source: str, options: list[str]) -> Built:
        return self.build(source, options)[1]

    def _locked_build_binary(self, source: str, options: list[str]) -> Built:
        if self.build_lock_s is None:
            return self._build_binary(source, options)
        with self.lock.shared(self.build_lock_s):
            return self._build_binary(source, options)

    def _build_binary(self, source: str, options: list[str]) -> Built:
        program, built = self._build(source, options)
        if program is not None:
            start = time.perf_counter()
            try:
                for knl in program.all_kernels():
                    knl.get_work_group_info(cl.kernel_work_group_info.WORK_GROUP_SIZE, self.device)
            except cl.Error:
                pass  # reported when the measuring worker builds it
            built.compile_s += time.perf_counter() - start
            built.binary = bytes(program.binaries[0])
        return built


def build_program(program: Any, context: Any, device: Any, options: list[str]) -> Any:
    """Build ``program`` (made from source) for ``device`` with ``options``; where they
    ask for a register cap (``-cl-nv-maxrregcount=N``) on NVIDIA's platform, which its
    compiler takes and ignores, the cap is applied through the PTX (gtune.measure.regcap):
    the program built from the capped PTX is returned. Raises cl.Error as a build does,
    ValueError for a cap that is not a number."""
    cap, rest = register_cap(options)
    if cap is None or "NVIDIA" not in device.platform.name:
        program.build(options=options, devices=[device])
        return program
    program.build(options=rest, devices=[device])
    capped = with_maxnreg(bytes(program.get_info(cl.program_info.BINARIES)[0]), cap)
    again = cl.Program(context, [device], [capped])
    again.build(options=rest, devices=[device])
    return again


def _build_log(program: Any, device: Any) -> str:
    try:
        return str(program.get_build_info(device, cl.program_build_info.LOG)).strip()
    except cl.Error:
        return ""


# ---------------------------------------------------------------------------------
# Problem data on the device


_IMAGE_CHANNEL = {
    "float32": "FLOAT",
    "int32": "SIGNED_INT32",
    "uint32": "UNSIGNED_INT32",
    "int16": "SIGNED_INT16",
    "uint16": "UNSIGNED_INT16",
    "int8": "SIGNED_INT8",
    "uint8": "UNSIGNED_INT8",
}

# One comparison for each floating type: |out - ref| <= atol + rtol * |ref| per element.
_VERIFY_REAL = """
__kernel void gtune_verify_{T}(__global const {T}* out, __global const {T}* ref,
                               const uint n, const {T} rtol, const {T} atol,
                               __global uint* bad) {{
    uint i = get_global_id(0);
    if (i >= n) return;
    {T} o = out[i], r = ref[i];
    if (!(fabs(o - r) <= atol + rtol * fabs(r))) atomic_inc(bad);
}}
"""

_VERIFY_SOURCE = (
    _VERIFY_REAL.format(T="float")
    + """
__kernel void gtune_verify_bytes(__global const uchar* out, __global const uchar* ref,
                                 const uint n, const float rtol, const float atol,
                                 __global uint* bad) {
    uint i = get_global_id(0);
    if (i >= n) return;
    if (out[i] != ref[i]) atomic_inc(bad);
}
"""
)

# Built only where the device has double precision (cl_khr_fp64); elsewhere float64
# outputs are compared on the host, which reads every output back (seconds for a large
# array, on every configuration).
_VERIFY_DOUBLE_SOURCE = "#pragma OPENCL EXTENSION cl_khr_fp64 : enable\n" + _VERIFY_REAL.format(
    T="double"
)


class LocalArgumentError(ValueError):
    """A configuration's ``local`` arguments cannot be passed (no element, or more than
    the device's local memory); ``code`` is the OpenCL error a driver would give."""

    def __init__(self, message: str, code: int) -> None:
        super().__init__(message)
        self.code = code


_verify_cache: list[Any] = []  # [context, float program, double program or None]


def _verify_programs(context: Any, limits: DeviceLimits) -> tuple[Any, Any]:
    """The verification kernels' programs, built once per driver context: a worker
    that keeps its context from kernel to kernel (``shared_workers``, campaigns)
    builds them once, not once per session."""
    if not _verify_cache or _verify_cache[0] is not context:
        single = cl.Program(context, _VERIFY_SOURCE).build()
        double = None
        if limits.has_extension("cl_khr_fp64"):
            double = cl.Program(context, _VERIFY_DOUBLE_SOURCE).build()
        _verify_cache[:] = [context, single, double]
    return _verify_cache[1], _verify_cache[2]


class Session(Compiler):
    """One device, one kernel, one problem: data uploaded once, configurations measured.

    ``data_dir`` holds ``<arg>.npy`` initial arrays and ``ref_<arg>.npy`` reference
    outputs written by the parent, so a restarted worker reloads them cheaply.
    """

    def __init__(
        self,
        limits: DeviceLimits,
        kernel: TunableKernel,
        data_dir: Path,
        *,
        build_lock_s: float | None = None,
        lock_wait_s: float | None = None,
        notify: Callable[[bool], None] | None = None,
        context: Any = None,
    ) -> None:
        """``lock_wait_s``: how long a measurement waits for the device while another
        process measures on it (None: as long as it takes); ``notify(True)`` is called
        when it starts waiting, ``notify(False)`` when it holds the device after a wait
        (the worker tells its parent, whose time limit then starts). ``context``: the
        driver context of an earlier kernel's session on the device (see Compiler)."""
        super().__init__(limits, build_lock_s, context=context)
        self.lock_wait_s = lock_wait_s
        self.notify = notify
        self.unreported_wait_s = 0.0  # waits of settle and run_once, told with a measure
        props = cl.command_queue_properties.PROFILING_ENABLE
        self.queue = cl.CommandQueue(self.context, self.device, properties=props)
        self.kernel = kernel
        self.data_dir = data_dir
        mf = cl.mem_flags
        self.host: dict[str, np.ndarray] = {}
        self.buffers: dict[str, Any] = {}
        self.pristine: dict[str, Any] = {}
        self.images: dict[str, Any] = {}
        self.refs: dict[str, Any] = {}
        env = dict(kernel.sizes)
        self.scalars: dict[str, Any] = {}
        # Each array lies inside a larger buffer, between two guard zones (see
        # guard_bytes): the kernel gets the array's own region as a sub-buffer.
        self.guarded: dict[str, tuple[Any, int]] = {}  # name -> (whole buffer, guard bytes)
        self.guard_fill: dict[str, str] = {}  # name -> the pattern its guards hold now
        align = max(1, int(self.device.mem_base_addr_align) // 8)
        for arg in kernel.arguments:
            if arg.kind == "scalar":
                self.scalars[arg.name] = _scalar(arg, env)
                continue
            if arg.kind == "local":  # sized per configuration, no data: see _local_args
                continue
            arr = np.load(data_dir / f"{arg.name}.npy")
            self.host[arg.name] = arr
            guard = guard_bytes(arr, align)
            if arr.nbytes + 2 * guard + align > int(self.device.max_mem_alloc_size):
                guard = 0  # no room for guard zones: the array alone, unguarded
            whole = cl.Buffer(self.context, mf.READ_WRITE, guard * 2 + _round_up(arr.nbytes, align))
            self.guarded[arg.name] = (whole, guard)
            self.buffers[arg.name] = whole.get_sub_region(guard, arr.nbytes)
            cl.enqueue_copy(self.queue, self.buffers[arg.name], arr)
            self.fill_guards(GUARD_FILLS[0], [arg.name])
            steps = kernel.steps
            if arg.role != "input" or (steps is not None and arg.name == steps.input):
                self.pristine[arg.name] = cl.Buffer(
                    self.context, mf.READ_ONLY | mf.COPY_HOST_PTR, hostbuf=arr
                )
        verify_program, double_program = _verify_programs(self.context, self.limits)
        self.verify_float = cl.Kernel(verify_program, "gtune_verify_float")
        self.verify_bytes = cl.Kernel(verify_program, "gtune_verify_bytes")
        self.verify_double: Any = None
        if double_program is not None:
            self.verify_double = cl.Kernel(double_program, "gtune_verify_double")
        self.bad_count = cl.Buffer(self.context, mf.READ_WRITE, 4)
        self._run_kernels: dict[tuple[str, ...], Any] = {}  # run_once's built program
        self._loaded: dict[bytes, Any] = {}  # the binaries loaded last (by hash): programs
        self._bundled: Any = None  # the program build_here made last, or None
        self.load_references()

    def _zones(self, name: str) -> list[tuple[str, int, int]]:
        """(where, byte offset, size) of the two guard zones around array ``name``."""
        whole, guard = self.guarded[name]
        tail = guard + self.host[name].nbytes
        return [("before the start of", 0, guard), ("past the end of", tail, whole.size - tail)]

    def fill_guards(self, pattern: str, names: list[str] | None = None) -> None:
        """Fill the guard zones of ``names`` (every array: None) with ``pattern``
        (one of :data:`GUARD_FILLS`)."""
        for name in self.guarded if names is None else names:
            whole, _ = self.guarded[name]
            for _, offset, size in self._zones(name):
                if size == 0:
                    continue
                fill = guard_pattern(self.host[name].dtype, size, pattern)
                cl.enqueue_copy(self.queue, whole, fill, dst_offset=offset)
            self.guard_fill[name] = pattern
        self.queue.finish()

    def check_guards(self) -> list[str]:
        """Arrays whose guard zones changed (a write before or past the array), as
        messages naming the array; changed zones are filled again."""
        problems: list[str] = []
        for name, (whole, _) in self.guarded.items():
            dirty = False
            for where, offset, size in self._zones(name):
                if size == 0:
                    continue
                want = guard_pattern(self.host[name].dtype, size, self.guard_fill[name])
                got = np.empty(size, np.uint8)
                cl.enqueue_copy(self.queue, got, whole, src_offset=offset)
                changed = int(np.count_nonzero(got != want))
                if changed:
                    dirty = True
                    problems.append(
                        f"writes {where} {name!r} ({changed} bytes of its guard zone changed)"
                    )
            if dirty:
                self.fill_guards(self.guard_fill[name], [name])
        return problems

    def guards(self, pattern: str | None = None, names: list[str] | None = None) -> list[str]:
        """The worker's ``guards`` verb: check the guard zones (and fill them again),
        then fill them with ``pattern`` if given."""
        problems = self.check_guards()
        if pattern is not None:
            self.fill_guards(pattern, names)
        return problems

    def load_references(self) -> None:
        mf = cl.mem_flags
        self.refs = {}
        for arg in self.kernel.arguments:
            path = self.data_dir / f"ref_{arg.name}.npy"
            if arg.kind == "buffer" and arg.role != "input" and path.exists():
                ref = np.load(path)
                self.refs[arg.name] = cl.Buffer(
                    self.context, mf.READ_ONLY | mf.COPY_HOST_PTR, hostbuf=ref
                )

    def _image(self, arg: Argument) -> Any:
        if arg.name not in self.images:
            arr = self.host[arg.name]
            if arr.ndim not in (2, 3):
                raise ValueError(f"argument {arg.name}: images need 2D or 3D arrays")
            channel = getattr(cl.channel_type, _IMAGE_CHANNEL[arg.dtype])
            fmt = cl.ImageFormat(cl.channel_order.R, channel)
            mf = cl.mem_flags
            self.images[arg.name] = cl.Image(
                self.context,
                mf.READ_ONLY | mf.COPY_HOST_PTR,  # type: ignore[arg-type]
                fmt,
                shape=tuple(reversed(arr.shape)),
                hostbuf=np.ascontiguousarray(arr),
            )
        return self.images[arg.name]

    def _restore_outputs(self, only_inout: bool = False) -> None:
        """Restore the outputs' initial contents (only the in-place ones: ``only_inout``;
        a time-stepping kernel's swapped buffers always, every run starts at step 0)."""
        stepping = self.kernel.steps is not None
        for arg in self.kernel.arguments:
            if arg.name in self.pristine and (arg.role == "inout" or stepping or not only_inout):
                cl.enqueue_copy(self.queue, self.buffers[arg.name], self.pristine[arg.name])

    def _launch_steps(
        self, knl: Any, args: list[Any], launches: int, glob: Any, loc: Any
    ) -> tuple[float, float]:
        """Run the launches of one measurement, swapping the time-stepping buffers
        between launches; leave the result in the output buffer. Returns the device
        seconds of all launches and their wall-clock seconds."""
        steps = self.kernel.steps
        swapped = list(args)
        if steps is not None:
            names = [a.name for a in self.kernel.arguments]
            i, o = names.index(steps.input), names.index(steps.output)
            swapped[i], swapped[o] = args[o], args[i]
        device = 0.0
        start = time.perf_counter()
        for k in range(launches):
            if launches > 1:
                knl.set_args(*(swapped if k % 2 else args))
            event = cl.enqueue_nd_range_kernel(self.queue, knl, glob, loc)
            event.wait()
            device += (event.profile.end - event.profile.start) * 1e-9
        wall = time.perf_counter() - start
        if launches > 1:
            knl.set_args(*args)
        if steps is not None and launches % 2 == 0:  # the last launch wrote the input's buffer
            cl.enqueue_copy(self.queue, self.buffers[steps.output], self.buffers[steps.input])
            self.queue.finish()
        return device, wall

    def build_here(self, name: str, options: list[list[str]]) -> dict[str, Any]:
        """Build the configurations of kernel ``name`` given by ``options`` as one
        program (a bundle, gtune.measure.bundle) in this session, kept for
        :meth:`measure` with ``bundled=True`` until the next call: a worker that builds
        what it measures (a CPU device measured alone) pays a build's fixed cost once for
        them. Plain data back: the kernels' ``names`` (empty where none was built), the
        build's ``compile_s``, and ``why`` the source cannot be bundled or the failed
        build's ``log``."""
        self._bundled = None
        made = bundle(self.kernel.source, name, options)
        if isinstance(made, str):
            return {"names": [], "compile_s": 0.0, "why": made, "log": ""}
        program, built = self.build(made.source, made.options)
        if program is None:
            return {"names": [], "compile_s": built.compile_s, "why": "", "log": built.log[-4000:]}
        self._bundled = program
        return {"names": made.names, "compile_s": built.compile_s, "why": "", "log": ""}

    def _program(
        self, options: list[str], binary: bytes | None, compile_s: float | None, bundled: bool
    ) -> tuple[Any, Built]:
        """The program a configuration is measured from: built here from the kernel's
        source, loaded from a compile worker's ``binary``, or (``bundled``) the last
        :meth:`build_here`'s; with its build (``compile_s`` where it was built before)."""
        if bundled:
            if self._bundled is None:
                return None, Built(Status.BUILD_FAILED, 0.0, "no bundle was built for it")
            return self._bundled, Built(Status.OK, compile_s or 0.0, "")
        if binary is None:
            return self.build(self.kernel.source, options)
        key = hashlib.blake2b(binary, digest_size=16).digest()
        try:
            program = self._loaded.get(key)
            if program is None:
                program = cl.Program(self.context, [self.device], [binary])
                program.build(options=options)
                self._loaded = {**dict(list(self._loaded.items())[-1:]), key: program}
        except cl.Error as exc:
            return None, Built(
                Status.BUILD_FAILED, compile_s or 0.0, str(exc)[:2000], code=error_code(exc)
            )
        return program, Built(Status.OK, compile_s or 0.0, "")

    def measure(
        self,
        config: Mapping[str, int],
        runs: int | None = None,
        binary: bytes | None = None,
        compile_s: float | None = None,
        rtol: float = 1e-4,
        atol: float = 1e-5,
        verify: bool = True,
        timing: Mapping[str, Any] | None = None,
        kernel_name: str | None = None,
        bundle: int = 1,
        bundled: bool = False,
    ) -> Result:
        """Build, warm up, time and verify one configuration.

        ``timing`` (a :class:`~gtune.measure.stats.TimingPolicy` as a dict) decides how
        many timed runs; ``runs`` alone means exactly that many. The first launch's
        excess over a normal run (drivers such as PoCL finish building then) counts as
        compile time.

        ``binary`` built by a compile worker holds the kernel as ``kernel_name`` (a
        bundle of ``bundle`` configurations, see gtune.measure.bundle: its
        configurations share that binary, and the program loaded last is kept, so a
        bundle is loaded once); ``bundled``: the kernel ``kernel_name`` of the program
        :meth:`build_here` made last. The result notes ``extra["bundle"]``.
        """
        policy = _policy(runs, timing)
        cfg = dict(config)
        options = self.kernel.defines(cfg)
        extra: dict[str, Any] = {}
        # Build, load the binary a compile worker made, or take the bundle built here.
        start = time.perf_counter()
        program, built = self._program(options, binary, compile_s, bundled)
        if binary is not None and program is not None:
            extra["load_s"] = time.perf_counter() - start
        if program is None:
            return Result(
                cfg, built.status, built.compile_s, message=built.log[-4000:], error_code=built.code
            )
        if bundle > 1:
            extra["bundle"] = bundle
        try:
            knl = cl.Kernel(program, kernel_name or self.kernel.name)
        except (cl.Error, AttributeError) as exc:
            return Result(
                cfg,
                Status.BUILD_FAILED,
                built.compile_s,
                message=f"kernel {kernel_name or self.kernel.name!r} not found in the program: "
                f"{exc}",
                error_code=error_code(exc) if isinstance(exc, cl.Error) else CL_INVALID_KERNEL_NAME,
            )
        try:
            extra["kernel_work_group_size"] = int(
                knl.get_work_group_info(cl.kernel_work_group_info.WORK_GROUP_SIZE, self.device)
            )
            extra["kernel_local_mem_bytes"] = int(
                knl.get_work_group_info(cl.kernel_work_group_info.LOCAL_MEM_SIZE, self.device)
            )
        except cl.Error:
            pass
        with self.alone() as waited:
            extra["wait_s"] = waited + self.unreported_wait_s
            self.unreported_wait_s = 0.0
            return self._timed(knl, cfg, policy, built, extra, rtol, atol, verify)

    @contextlib.contextmanager
    def alone(self) -> Iterator[float]:
        """Hold the device alone (the device lock): yields the seconds waited for it."""
        with self.lock.exclusive(self.lock_wait_s, self.notify) as waited:
            yield waited

    def _timed(
        self,
        knl: Any,
        cfg: dict[str, int],
        policy: TimingPolicy,
        built: Built,
        extra: dict[str, Any],
        rtol: float,
        atol: float,
        verify: bool,
    ) -> Result:
        """Warm up, time and verify one built configuration (the device held alone)."""
        glob, loc = self.kernel.launch_sizes(cfg)
        times: list[float] = []
        try:
            local = self._local_args(cfg, int(extra.get("kernel_local_mem_bytes", 0)))
        except LocalArgumentError as exc:
            return Result(
                cfg,
                Status.LAUNCH_FAILED,
                built.compile_s,
                message=str(exc),
                error_code=exc.code,
                extra=extra,
            )
        try:
            args = self._launch_args(cfg, local)
            knl.set_args(*args)
            self._restore_outputs()
            # time stepping: every run is all the launches of the steps; times per step
            launches = self.kernel.launches(cfg)
            per_step = 1.0 / self.kernel.step_count
            _, first_wall = self._launch_steps(knl, args, launches, glob, loc)  # warm-up
            walls: list[float] = []
            while not policy.enough(times):
                self._restore_outputs(only_inout=True)
                device, wall = self._launch_steps(knl, args, launches, glob, loc)
                walls.append(wall)
                times.append(device * per_step)
            self.queue.finish()
            if launches > 1:
                extra["launches"] = launches
            # what the first launch took beyond a normal one was the driver building
            late_compile = max(0.0, first_wall - statistics.median(walls))
            built.compile_s += late_compile
            extra["launch_compile_s"] = late_compile
            extra["warmup_s"] = first_wall - late_compile
            extra["timing"] = {
                "converged": policy.converged(times),
                "halfwidth": relative_halfwidth(times, policy.confidence),
                "runs": len(times),
            }
        except cl.Error as exc:
            code = error_code(exc)
            status = Status.LAUNCH_FAILED if code in LAUNCH_CODES else Status.CRASHED
            return Result(
                cfg, status, built.compile_s, message=str(exc)[:2000], error_code=code, extra=extra
            )
        except ValueError as exc:  # pyopencl argument checks before any enqueue
            return Result(
                cfg, Status.LAUNCH_FAILED, built.compile_s, message=str(exc)[:2000], extra=extra
            )
        stray = self.check_guards()
        if stray:
            return Result(
                cfg,
                Status.WRONG_RESULT,
                built.compile_s,
                tuple(times),
                message="; ".join(stray),
                extra={**extra, "out_of_bounds": stray},
            )
        if verify and self.refs:
            start = time.perf_counter()
            bad, max_error = self.verify(rtol, atol)
            extra["verify_s"] = time.perf_counter() - start
            if bad:
                return Result(
                    cfg,
                    Status.WRONG_RESULT,
                    built.compile_s,
                    tuple(times),
                    message=f"{bad} output elements differ from the reference" + self._nan_hint(),
                    max_error=max_error,
                    extra=extra,
                )
        return Result(cfg, Status.OK, built.compile_s, tuple(times), extra=extra)

    def _local_args(self, cfg: Mapping[str, int], own_bytes: int = 0) -> dict[str, Any]:
        """The ``local`` arguments at ``cfg`` as the driver takes them (``cl.LocalMemory``:
        a size, no data). :class:`LocalArgumentError` where one has no element, or where
        they and the kernel's own ``__local`` variables (``own_bytes``) exceed the
        device's local memory: one configuration's failure, said in words."""
        sizes = self.kernel.local_arguments(cfg)
        for name, nbytes in sizes.items():
            if nbytes < 1:
                raise LocalArgumentError(
                    f"the local argument {name} has {nbytes} bytes at this configuration; it "
                    "needs at least one element",
                    CL_INVALID_ARG_SIZE,
                )
        total, room = sum(sizes.values()) + own_bytes, int(self.limits.local_mem_size)
        if sizes and room and total > room:
            each = ", ".join(f"{n} {b:,} bytes" for n, b in sizes.items())
            own = f" and the kernel's own __local variables {own_bytes:,}" if own_bytes else ""
            what = (
                f"the local argument {next(iter(sizes))} takes"
                if len(sizes) == 1 and not own_bytes
                else f"the local arguments ({each}){own} take"
            )
            raise LocalArgumentError(
                f"{what} {total:,} bytes at this configuration, more than the device's "
                f"{room:,} bytes of local memory",
                CL_OUT_OF_RESOURCES,
            )
        return {name: cl.LocalMemory(nbytes) for name, nbytes in sizes.items()}

    def _launch_args(self, cfg: Mapping[str, int], local: Mapping[str, Any]) -> list[Any]:
        """The kernel's arguments at ``cfg``, in order: scalars, images, buffers and the
        ``local`` arguments (``local``: from :meth:`_local_args`)."""
        args: list[Any] = []
        for arg in self.kernel.arguments:
            if arg.kind == "scalar":
                args.append(self.scalars[arg.name])
            elif arg.kind == "local":
                args.append(local[arg.name])
            elif self.kernel.uses_image(arg, cfg):
                args.append(self._image(arg))
            else:
                args.append(self.buffers[arg.name])
        return args

    def settle(self, config: Mapping[str, int], max_seconds: float = 1.0) -> int:
        """Run ``config`` until its run times stop falling (clocks up, caches and
        thread pools warm), so that the first configurations measured are not slower
        than later ones. Nothing is kept; returns the number of launches (0: it did not
        build or launch, and nothing was warmed)."""
        cfg = dict(config)
        program, _ = self.build(self.kernel.source, self.kernel.defines(cfg))
        if program is None:
            return 0
        glob, loc = self.kernel.launch_sizes(cfg)
        try:
            knl = cl.Kernel(program, self.kernel.name)
            knl.set_args(*self._launch_args(cfg, self._local_args(cfg)))
            times: list[float] = []
            with self.alone() as waited:
                self.unreported_wait_s += waited
                start = time.perf_counter()
                window = 5
                while time.perf_counter() - start < max_seconds and len(times) < 200:
                    event = cl.enqueue_nd_range_kernel(self.queue, knl, glob, loc)
                    event.wait()
                    times.append((event.profile.end - event.profile.start) * 1e-9)
                    if len(times) >= 3 * window:
                        last = statistics.median(times[-window:])
                        before = statistics.median(times[-2 * window : -window])
                        if last >= 0.97 * before:  # no longer getting faster
                            break
                self.queue.finish()
            self._restore_outputs()
        except (cl.Error, ValueError, AttributeError):
            return 0
        return len(times)

    def verify(self, rtol: float, atol: float) -> tuple[int, float | None]:
        """Count mismatching elements on the device; read back only on failure."""
        total_bad = 0
        worst: float | None = None
        for arg in self.kernel.arguments:
            if arg.name not in self.refs:
                continue
            host = self.host[arg.name]
            if host.dtype == np.float64 and self.verify_double is None:  # on the host
                out, ref = (
                    self.read_output(arg.name),
                    np.load(self.data_dir / f"ref_{arg.name}.npy"),
                )
                bad_mask = ~(np.abs(out - ref) <= atol + rtol * np.abs(ref))
                if bad_mask.any():
                    total_bad += int(bad_mask.sum())
                    worst = max(worst or 0.0, float(np.nanmax(np.abs(out - ref))))
                continue
            is_float = host.dtype in (np.float32, np.float64)
            n = host.size if is_float else host.nbytes
            cl.enqueue_fill_buffer(self.queue, self.bad_count, np.zeros(1, np.uint32), 0, 4)
            tol: type[np.floating[Any]] = np.float32
            knl = self.verify_float if is_float else self.verify_bytes
            if host.dtype == np.float64:
                knl, tol = self.verify_double, np.float64
            knl(
                self.queue,
                (_round_up(n, 256),),
                (256,),
                self.buffers[arg.name],
                self.refs[arg.name],
                np.uint32(n),
                tol(rtol),
                tol(atol),
                self.bad_count,
            )
            bad = np.zeros(1, np.uint32)
            cl.enqueue_copy(self.queue, bad, self.bad_count)
            if int(bad[0]):
                total_bad += int(bad[0])
                out = np.empty_like(host)
                ref = np.load(self.data_dir / f"ref_{arg.name}.npy")
                cl.enqueue_copy(self.queue, out, self.buffers[arg.name])
                diff = np.abs(out.astype(np.float64) - ref.astype(np.float64))
                finite = diff[np.isfinite(diff)]
                err = float(finite.max()) if finite.size == diff.size else float("inf")
                worst = err if worst is None else max(worst, err)
        return total_bad, worst

    def run_once(
        self,
        config: Mapping[str, int],
        arrays: Mapping[str, np.ndarray],
        scalars: Mapping[str, float | int] | None = None,
        sweep: tuple[str, int] | None = None,
    ) -> dict[str, Any]:
        """One launch of ``config`` with these contents (buffers by name; any not given
        keeps what it holds) and scalar values (any not given keeps its description
        value); returns every written buffer afterwards, or the failure as plain data (a
        write before or past an array, caught by its guard zones, included).

        ``sweep`` (a scalar argument's name and a count): ``count`` launches instead of
        one, in order, that argument 0, 1, ..., count - 1 (a kernel the host launches
        once per plane): on the same buffers (the arrays go in once), the device held
        alone throughout; the guard zones are checked and the outputs read once, after
        the last launch. A failed launch says at which value of the argument.

        Probing a kernel (``gtune lift``) is many launches of one configuration with
        other inputs: the program is built once and kept.
        """
        cfg = dict(config)
        options = self.kernel.defines(cfg)
        key = tuple(options)
        knl = self._run_kernels.get(key)
        if knl is None:
            program, built = self.build(self.kernel.source, options)
            if program is None:
                return {"status": built.status.value, "message": built.log[-4000:]}
            knl = cl.Kernel(program, self.kernel.name)
            self._run_kernels = {key: knl}
        glob, loc = self.kernel.launch_sizes(cfg)
        names = [a.name for a in self.kernel.arguments]
        if sweep is not None and sweep[0] not in self.scalars:
            raise InputError(
                f"sweep: the kernel {self.kernel.name} has no scalar argument {sweep[0]!r}",
                source=self.kernel.label,
            )
        try:
            local = self._local_args(cfg)
        except LocalArgumentError as exc:
            return {"status": Status.LAUNCH_FAILED.value, "message": str(exc)}
        at = ""
        try:
            knl.set_args(*self._run_args(arrays, scalars or {}, local))
            with self.alone() as waited:  # no timing is kept, but another's would suffer
                self.unreported_wait_s += waited
                if sweep is None:
                    cl.enqueue_nd_range_kernel(self.queue, knl, glob, loc).wait()
                else:
                    name, count = sweep
                    index = names.index(name)
                    kind = np.dtype(self.kernel.arguments[index].dtype).type
                    for value in range(count):
                        at = f" (launch {value + 1} of {count}, {name}={value})"
                        knl.set_arg(index, kind(value))
                        cl.enqueue_nd_range_kernel(self.queue, knl, glob, loc).wait()
                    at = ""
                self.queue.finish()
        except cl.Error as exc:
            code = error_code(exc)
            status = Status.LAUNCH_FAILED if code in LAUNCH_CODES else Status.CRASHED
            return {"status": status.value, "message": f"{str(exc)[:2000]}{at}"}
        stray = self.check_guards()
        if stray:
            return {"status": Status.WRONG_RESULT.value, "message": "; ".join(stray)}
        written = [
            a.name for a in self.kernel.arguments if a.kind == "buffer" and a.role != "input"
        ]
        return {"status": Status.OK.value, "outputs": {n: self.read_output(n) for n in written}}

    def _run_args(
        self,
        arrays: Mapping[str, np.ndarray],
        scalars: Mapping[str, float | int],
        local: Mapping[str, Any],
    ) -> list[Any]:
        """:meth:`run_once`'s kernel arguments: the scalars at the values given (else
        their description's), the buffers, those given filled with these contents, and
        the ``local`` arguments (``local``: from :meth:`_local_args`)."""
        args: list[Any] = []
        for arg in self.kernel.arguments:
            if arg.kind == "scalar" and arg.lanes:  # a vector: its lanes by name (dims.x)
                names = lane_names(arg.name, len(arg.lanes))
                lanes = [
                    scalars.get(n, v)
                    for n, v in zip(names, self.scalars[arg.name].item(), strict=True)
                ]
                args.append(vector_scalar(arg.dtype, lanes))
                continue
            if arg.kind == "scalar":
                value = scalars.get(arg.name)
                given = self.scalars[arg.name] if value is None else value
                args.append(np.dtype(arg.dtype).type(given))
                continue
            if arg.kind == "local":
                args.append(local[arg.name])
                continue
            if arg.name in arrays:
                host = np.ascontiguousarray(arrays[arg.name], dtype=self.host[arg.name].dtype)
                if host.shape != self.host[arg.name].shape:
                    raise ValueError(
                        f"{arg.name}: shape {host.shape}, expected {self.host[arg.name].shape}"
                    )
                cl.enqueue_copy(self.queue, self.buffers[arg.name], host)
            args.append(self.buffers[arg.name])
        return args

    def _nan_hint(self) -> str:
        """Where a wrong output holds NaN the reference has not: the kernel read a
        guard zone, i.e. past the end (or before the start) of an array."""
        found = []
        for name in self.refs:
            host = self.host[name]
            if host.dtype.kind != "f":
                continue
            out = self.read_output(name)
            ref = np.load(self.data_dir / f"ref_{name}.npy")
            n = int(np.count_nonzero(np.isnan(out) & ~np.isnan(ref)))
            if n:
                found.append(f"{n} in {name!r}")
        if not found:
            return ""
        return (
            f"; NaN where the reference has none ({', '.join(found)}): it reads past the end "
            "of an array (the guard zones around each array hold NaN)"
        )

    def read_output(self, name: str) -> np.ndarray:
        out = np.empty_like(self.host[name])
        cl.enqueue_copy(self.queue, out, self.buffers[name])
        return out


#: Guard-zone contents: the first (NaN for floating-point arrays, so a read past an
#: array shows in the output) is the usual one; the second tells whether an output
#: depends on a guard zone at all (integer arrays have no NaN).
GUARD_FILLS = ("nan", "other")


def _scalar(arg: Argument, env: Mapping[str, Any]) -> Any:
    """A scalar argument's value at sizes ``env`` as the kernel takes it: a numpy scalar
    of its type, or a vector (``uint2``) of its lanes."""
    if arg.lanes:
        return vector_scalar(arg.dtype, [e.evaluate(env) for e in arg.lanes])
    assert arg.value is not None
    return np.dtype(arg.dtype).type(arg.value.evaluate(env))


def guard_bytes(arr: np.ndarray, align: int) -> int:
    """The size of the guard zone on each side of ``arr``: one slice along its slowest
    dimension (a row or plane read past the end stays inside), at least 4 KiB and at
    most 4 MiB, a multiple of the device's base-address alignment."""
    slab = arr.nbytes // arr.shape[0] if arr.ndim > 1 and arr.shape[0] else arr.nbytes
    return _round_up(min(max(slab, 4096), 4 << 20), align)


def guard_pattern(dtype: np.dtype[Any], nbytes: int, pattern: str) -> np.ndarray:
    """``nbytes`` bytes of the guard pattern ``pattern`` for an array of ``dtype``."""
    dt = np.dtype(dtype)
    if pattern == "nan" and dt.kind == "f":
        count = -(-nbytes // dt.itemsize)
        values = np.full(count, np.nan, dt).view(np.uint8)
        return np.ascontiguousarray(values[:nbytes])
    byte = 0xA5 if pattern == "nan" else 0x5A
    return np.full(nbytes, byte, np.uint8)


def _policy(runs: int | None, timing: Mapping[str, Any] | None) -> TimingPolicy:
    """The timing rule of one measurement: ``timing`` if given, else exactly ``runs``."""
    if timing is not None:
        return TimingPolicy(**timing)
    if runs is not None:
        return TimingPolicy(min_runs=runs, max_runs=runs)
    return TimingPolicy()


def _round_up(n: int, m: int) -> int:
    return (n + m - 1) // m * m


# =================================================================================
# Work splitting (gtune.split): one device's slab of a kernel split across devices.
# Driven by ``python -m gtune.split._worker``; nothing above depends on this section.


def split_device(limits: DeviceLimits, part: tuple[int, int] | None = None) -> Any:
    """The OpenCL device for ``limits``, or part ``k`` of ``n`` of an equal partition of
    its compute units (``clCreateSubDevices``) when ``part`` is ``(k, n)``."""
    device = _cl_device(limits)
    if part is None:
        return device
    k, n = part
    units = int(device.max_compute_units)
    if n < 1 or not 0 <= k < n or units < n:
        raise InputError(
            f"cannot make part {k} of {n} of {limits.name} ({units} compute units)",
            source="devices",
        )
    try:
        subs = device.create_sub_devices([cl.device_partition_property.EQUALLY, units // n])
    except (cl.Error, AttributeError) as exc:
        raise EnvironmentProblem(
            f"{limits.name} cannot be partitioned into sub-devices: {exc}"
        ) from None
    if len(subs) <= k:
        raise InputError(
            f"{limits.name} gave {len(subs)} sub-devices, part {k} asked for", source="devices"
        )
    return subs[k]


class SlabRunner:
    """One device, one (sub-)problem, one configuration: upload, run, download, timed.

    The program is built for the sub-problem's sizes; buffers are allocated once; each
    :meth:`run` moves the slab's data to the device and the owned rows back, as a user
    with the data in host memory would.
    """

    def __init__(
        self,
        limits: DeviceLimits,
        part: tuple[int, int] | None,
        kernel: TunableKernel,
        config: Mapping[str, int],
    ) -> None:
        from gtune.exceptions import BuildError

        self.device = split_device(limits, part)
        self.context = cl.Context([self.device])
        props = cl.command_queue_properties.PROFILING_ENABLE
        self.queue = cl.CommandQueue(self.context, self.device, properties=props)
        self.kernel = kernel
        self.config = dict(config)
        program = cl.Program(self.context, kernel.source)
        try:
            program = build_program(program, self.context, self.device, kernel.defines(config))
        except (cl.Error, ValueError) as exc:
            raise BuildError(
                f"configuration {self.config} does not build for the sub-problem "
                f"{dict(kernel.sizes)}",
                source=kernel.label,
                log=_build_log(program, self.device) or str(exc),
            ) from None
        self.knl = cl.Kernel(program, kernel.name)
        env = dict(kernel.sizes)
        mf = cl.mem_flags
        self.buffers: dict[str, Any] = {}
        self.images: dict[str, bool] = {}
        self.scalars: dict[str, Any] = {}
        for arg in kernel.arguments:
            if arg.kind == "scalar":
                if arg.value is not None or arg.lanes:
                    self.scalars[arg.name] = _scalar(arg, env)
                continue
            if arg.kind == "local":  # a size, no data
                self.scalars[arg.name] = cl.LocalMemory(arg.local_bytes(kernel.env(self.config)))
                continue
            self.images[arg.name] = kernel.uses_image(arg, self.config)
            if not self.images[arg.name]:
                nbytes = int(np.prod(arg.shape_for(env))) * np.dtype(arg.dtype).itemsize
                self.buffers[arg.name] = cl.Buffer(self.context, mf.READ_WRITE, nbytes)
        self.glob, self.loc = kernel.launch_sizes(self.config)

    def _image(self, host: np.ndarray, dtype: str) -> Any:
        channel = getattr(cl.channel_type, _IMAGE_CHANNEL[dtype])
        fmt = cl.ImageFormat(cl.channel_order.R, channel)
        return cl.Image(
            self.context,
            cl.mem_flags.READ_ONLY | cl.mem_flags.COPY_HOST_PTR,  # type: ignore[arg-type]
            fmt,
            shape=tuple(reversed(host.shape)),
            hostbuf=np.ascontiguousarray(host),
        )

    def run(
        self,
        uploads: Mapping[str, np.ndarray],
        downloads: Mapping[str, tuple[np.ndarray, int]],
    ) -> dict[str, float]:
        """Upload ``uploads`` (whole buffers), launch, and fill each host array of
        ``downloads`` from its buffer at the byte offset given. Times are
        ``time.perf_counter`` stamps (one clock for every process) and the kernel's
        profiled seconds."""
        t_start = time.perf_counter()
        args: list[Any] = []
        images: list[Any] = []
        moved_up = 0
        for arg in self.kernel.arguments:
            if arg.kind in ("scalar", "local"):
                args.append(self.scalars[arg.name])
                continue
            host = uploads[arg.name]
            moved_up += host.nbytes
            if self.images[arg.name]:
                images.append(self._image(host, arg.dtype))
                args.append(images[-1])
            else:
                cl.enqueue_copy(self.queue, self.buffers[arg.name], np.ascontiguousarray(host))
                args.append(self.buffers[arg.name])
        self.queue.finish()
        t_uploaded = time.perf_counter()
        self.knl.set_args(*args)
        event = cl.enqueue_nd_range_kernel(self.queue, self.knl, self.glob, self.loc)
        event.wait()
        t_computed = time.perf_counter()
        moved_down = 0
        for name, (host, offset) in downloads.items():
            cl.enqueue_copy(
                self.queue, host, self.buffers[name], src_offset=offset, is_blocking=False
            )
            moved_down += host.nbytes
        self.queue.finish()
        t_end = time.perf_counter()
        return {
            "t_start": t_start,
            "t_uploaded": t_uploaded,
            "t_computed": t_computed,
            "t_end": t_end,
            "kernel_s": (event.profile.end - event.profile.start) * 1e-9,
            "upload_bytes": float(moved_up),
            "download_bytes": float(moved_down),
        }

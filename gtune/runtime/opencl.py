"""The runtime's OpenCL: pyopencl in the application's own process, on purpose.

Everywhere else gtune loads pyopencl only in its measuring worker processes
(``gtune/measure/_opencl.py``). The runtime is the exception: it runs inside the user's
application and builds and launches kernels in the user's own context and queue. This
module and ``gtune/measure/_opencl.py`` are the only ones that import pyopencl
(``tests/test_architecture.py`` checks it).
"""

from __future__ import annotations

import math
import threading
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import pyopencl as cl

from gtune.device import DeviceLimits
from gtune.exceptions import BuildError, InputError
from gtune.measure._opencl import build_program
from gtune.tuned import TunedKernel


def context_device(context: Any, device: Any = None) -> Any:
    """The device of ``context`` the kernel runs on: ``device``, else its only one
    (a context of several devices needs ``device``)."""
    devices = list(context.devices)
    if device is not None:
        if device not in devices:
            raise InputError("the device is not one of the context's", source="device")
        return device
    if len(devices) != 1:
        names = ", ".join(str(d.name).strip() for d in devices)
        raise InputError(
            f"the context holds {len(devices)} devices ({names}): give device=", source="context"
        )
    return devices[0]


def device_limits(device: Any) -> DeviceLimits:
    """What gtune knows about ``device``: the same limits and identity its measuring
    workers record in the store."""
    from gtune.measure._opencl import limits_of

    for pi, platform in enumerate(cl.get_platforms()):
        try:
            listed = platform.get_devices()
        except cl.Error:
            continue
        for di, d in enumerate(listed):
            if d == device:
                return limits_of(platform, d, pi, di)
    return limits_of(device.platform, device, 0, 0)


class Programs:
    """Programs built once per (context, device, source, build options): a problem size
    and a configuration decide both, so this is a cache per (device, configuration,
    size). Thread-safe: the online tuner builds a switch's program in its own thread."""

    def __init__(self) -> None:
        self._built: dict[tuple[int, int, str, tuple[str, ...]], Any] = {}
        self._lock = threading.Lock()
        self.builds = 0

    def get(self, context: Any, device: Any, source: str, options: Sequence[str]) -> Any:
        key = (context.int_ptr, device.int_ptr, source, tuple(options))
        with self._lock:
            program = self._built.get(key)
        if program is not None:
            return program
        try:  # as gtune's workers build it: a register cap through the PTX on NVIDIA's
            program = build_program(cl.Program(context, source), context, device, list(options))
        except (cl.Error, ValueError) as exc:
            raise BuildError(f"the tuned kernel does not build: {exc}") from None
        with self._lock:
            self._built.setdefault(key, program)
            self.builds += 1
            return self._built[key]


class Launch:
    """One configuration ready to launch: its kernel object, launch sizes and argument
    conversion (scalars to their types; an input the configuration reads as an image
    copied from the buffer the application passes; a ``local`` argument given as None,
    a ``cl.LocalMemory`` of the size the configuration needs)."""

    def __init__(self, tuned: TunedKernel, program: Any, sizes: Mapping[str, int]) -> None:
        self.tuned = tuned
        self.kernel = cl.Kernel(program, tuned.kernel)
        self.global_size, self.local_size = tuned.launch_sizes(sizes)
        self.sizes = dict(sizes)
        self.arguments = tuned.arguments
        self._images: dict[int, Any] = {}

    def __call__(self, queue: Any, args: Sequence[Any], wait_for: Any = None) -> Any:
        if len(args) != len(self.arguments):
            names = ", ".join(str(a["name"]) for a in self.arguments)
            raise InputError(
                f"{self.tuned.kernel} takes {len(self.arguments)} arguments ({names}), "
                f"got {len(args)}",
                source=self.tuned.name,
            )
        converted = []
        events = list(wait_for or ())
        for i, (spec, value) in enumerate(zip(self.arguments, args, strict=True)):
            if spec["kind"] == "scalar":
                converted.append(np.dtype(spec["dtype"]).type(value))
            elif spec["kind"] == "local" and value is None:
                # a __local buffer: the size the configuration needs (its work-group)
                converted.append(cl.LocalMemory(self.tuned.local_bytes(spec, self.sizes)))
            elif spec["kind"] == "image" and isinstance(value, cl.Buffer):
                image = self._image(queue.context, i, spec)
                shape = tuple(image.shape)
                copy = cl.enqueue_copy(  # type: ignore[call-overload]  # the stubs lack offset
                    queue, image, value, offset=0, origin=(0,) * len(shape), region=shape,
                    wait_for=wait_for,
                )  # fmt: skip
                events.append(copy)
                converted.append(image)
            else:
                converted.append(value)
        return self.kernel(
            queue, self.global_size, self.local_size, *converted, wait_for=events or None
        )

    def _image(self, context: Any, i: int, spec: Mapping[str, Any]) -> Any:
        if i not in self._images:
            shape = [int(self.tuned.evaluate(e, self.sizes)) for e in spec["shape"]]
            dtype = np.dtype(spec["dtype"])
            channel = cl.channel_type.FLOAT if dtype == np.float32 else None
            if channel is None or not 1 <= len(shape) <= 3 or math.prod(shape) == 0:
                raise InputError(
                    f"argument {spec['name']}: an image of {spec['dtype']} is not supported",
                    source=self.tuned.name,
                )
            fmt = cl.ImageFormat(cl.channel_order.R, channel)
            self._images[i] = cl.create_image(
                context, cl.mem_flags.READ_ONLY, fmt, shape=tuple(shape[::-1])
            )
        return self._images[i]


__all__ = ["Launch", "Programs", "context_device", "device_limits"]

"""``gtune devices``: the OpenCL devices and the limits that matter for tuning."""

from __future__ import annotations

import argparse
import json

from rich.console import Console
from rich.table import Table

from gtune.device import DeviceLimits

HELP = "list OpenCL platforms and devices with their tuning-relevant limits"


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--json", action="store_true", help="machine-readable output")


def _local(d: DeviceLimits) -> str:
    """The local memory as reported, and what a kernel's own arrays may take where that
    was measured to be more."""
    text = f"{_kib(d.local_mem_size)} ({d.local_mem_type})"
    if d.local_mem_static > d.local_mem_size:
        text += f"; {_kib(d.local_mem_static)} for a kernel's own __local arrays (measured)"
    return text


def _kib(n: int) -> str:
    if n < 1 << 20:
        return f"{n // 1024} KiB"
    return f"{n / (1 << 20):.0f} MiB" if n < 1 << 30 else f"{n / (1 << 30):.1f} GiB"


def run(args: argparse.Namespace) -> int:
    from gtune.measure import list_devices, select_device

    devices = list_devices()
    default = select_device(None)
    if args.json:
        payload = {
            "default": default.identity,
            "devices": [d.to_dict() for d in devices],
        }
        print(json.dumps(payload, indent=2))
        return 0
    console = Console()
    for d in devices:
        mark = " (default)" if d.identity == default.identity else ""
        t = Table(title=f"[{d.selector}] {d.name}{mark}", show_header=False, title_justify="left")
        t.add_column(style="bold")
        t.add_column()
        rows = [
            ("identity", d.identity),
            ("platform", d.platform),
            ("type / vendor", f"{d.type} / {d.vendor}"),
            ("driver", d.driver_version),
            ("OpenCL", f"{d.opencl_version}; {d.opencl_c_version}"),
            ("compute units", str(d.compute_units)),
            ("max work-group", f"{d.max_work_group_size}  per dim {list(d.max_work_item_sizes)}"),
            ("local memory", _local(d)),
            ("global memory", f"{_kib(d.global_mem_size)}, max alloc {_kib(d.max_mem_alloc_size)}"),
            (
                "images",
                f"yes, 2D {d.image2d_max}, 3D {d.image3d_max}" if d.image_support else "no",
            ),
            (
                "float vectors",
                f"preferred {d.preferred_vector_width_float}, native {d.native_vector_width_float}",
            ),
            ("extensions", ", ".join(d.extensions) or "-"),
        ]
        for k, v in rows:
            t.add_row(k, v)
        console.print(t)
    return 0

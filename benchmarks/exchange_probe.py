#!/usr/bin/env python3
"""heat3d's multi-step walk with its halo exchanged between work-groups (issue 49).

``temporal-zreg`` at TB 4 recomputes a ring of halo points per level around its block,
and that halo holds it at 142 % of the copy for 8 steps of heat3d 512³; without it (a
probe, wrong by design) the same walk runs at 196 % (``results/h200-limit/temporal-8/
halo/``). ``exchange_walk.cl`` computes no halo: every block of the plane is a
work-group of the one launch, all resident at once, and each hands its levels' edges
to its neighbours through a global buffer, with a progress flag per work-group (the
kernel's comment has the protocol). This script builds it at the configurations asked
for, checks every output against numpy's steps, and times it in alternating rounds
with the float4 copy and, where asked, the package's own kernel at a configuration.

    python3 benchmarks/exchange_probe.py OUT --device NVIDIA --size 512 \\
        --variant TB=4,WX=16,WY=32,D=2 --package 'STREAM=1,ZREG=2,...'

A launch needs all of its NBX * NBY work-groups running at once: on a GPU at most one
per compute unit (the probe refuses more); on PoCL, whose work-groups run on its
threads, no more than its threads (``POCL_MAX_PTHREAD_COUNT``). A wait that does not
end gives up after ``SPIN_MAX`` polls and marks the run wrong, so it never hangs.
"""

from __future__ import annotations

import argparse
import json
import re
import statistics
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

SOURCE = Path(__file__).with_name("exchange_walk.cl")


def registers_of(log: str) -> str:
    """ptxas's registers and spills from NVIDIA's build log (empty elsewhere)."""
    found = re.findall(r"Used \d+ registers[^\n]*|\d+ bytes spill stores[^\n]*", log)
    return "; ".join(found)


def heat_steps(u: Any, steps: int) -> Any:
    """``steps`` steps of heat3d (interior boundary: the outer layer keeps its value),
    the terms summed in the template's order."""
    a = u.copy()
    for _ in range(steps):
        b = a.copy()
        c = a[1:-1, 1:-1, 1:-1]
        acc = np.float32(0.125) * a[:-2, 1:-1, 1:-1]
        acc = acc + np.float32(0.125) * a[1:-1, :-2, 1:-1]
        acc = acc + np.float32(0.125) * a[1:-1, 1:-1, :-2]
        acc = acc + np.float32(0.25) * c
        acc = acc + np.float32(0.125) * a[1:-1, 1:-1, 2:]
        acc = acc + np.float32(0.125) * a[1:-1, 2:, 1:-1]
        acc = acc + np.float32(0.125) * a[2:, 1:-1, 1:-1]
        b[1:-1, 1:-1, 1:-1] = acc
        a = b
    return a


def parse(text: str) -> dict[str, int]:
    out = {}
    for part in text.split(","):
        k, _, v = part.partition("=")
        out[k.strip()] = int(v)
    return out


class Exchange:
    """One configuration of the exchange walk, built: ``run`` does ``steps`` steps from
    ``src`` (its result in ``src`` again where the launches are even)."""

    def __init__(
        self, context: Any, queue: Any, size: int, cfg: Mapping[str, int], nvidia: bool
    ) -> None:
        import pyopencl as cl

        self.queue, self.cfg = queue, dict(cfg)
        wx, wy, tb, d = cfg["WX"], cfg["WY"], cfg["TB"], cfg.get("D", 2)
        if size % (4 * wx) or size % wy:
            raise ValueError(f"{size} is not a multiple of the block {4 * wx}x{wy}")
        self.nbx, self.nby, self.tb = size // (4 * wx), size // wy, tb
        r = cfg.get("R", 8)
        defines = {
            "NX": size, "NY": size, "NZ": size, "WX": wx, "WY": wy, "TB": tb, "D": d,
            "R": r, "NBX": self.nbx, "NBY": self.nby, "PF": cfg.get("PF", 0),
            "PROBE_NOWAIT": cfg.get("NOWAIT", 0), "PROBE_NOX": cfg.get("NOX", 0),
            "UNROLL": cfg.get("UNROLL", 0), "CPA": cfg.get("CPA", 0),
            "SPIN_MAX": cfg.get("SPIN_MAX", 1 << (22 if nvidia else 30)),
        }  # fmt: skip
        opts = [f"-D{k}={v}" for k, v in defines.items()]
        opts += ["-cl-nv-verbose"] if nvidia else []
        prog = cl.Program(context, SOURCE.read_text()).build(options=opts)
        log = prog.get_build_info(context.devices[0], cl.program_build_info.LOG)
        self.registers = registers_of(log)
        self.ptx = prog.binaries[0] if nvidia else b""  # NVIDIA's binary is its PTX
        self.knl = prog.exchange_walk
        nb = self.nbx * self.nby
        edge = max(4 * wx, wy + 1) // 2 * 2
        mf = cl.mem_flags
        xbytes = r * max(tb - 1, 1) * nb * 4 * edge * 2 * 4
        self.xbuf = cl.Buffer(context, mf.READ_WRITE, size=xbytes)
        cl.enqueue_fill_buffer(queue, self.xbuf, np.zeros(1, np.uint32), 0, xbytes)
        self.err = cl.Buffer(context, mf.READ_WRITE, size=4)
        cl.enqueue_fill_buffer(queue, self.err, np.zeros(1, np.int32), 0, 4).wait()
        self.base = 0
        self.stride = size + tb * d + 2

    def groups(self) -> int:
        return self.nbx * self.nby

    def run(self, a: Any, b: Any, steps: int) -> float:
        """``steps`` steps, ``a`` to ``b`` and back; the device seconds of all launches."""
        import pyopencl as cl

        glob = (self.nbx * self.cfg["WX"], self.nby * self.cfg["WY"], 1)
        loc = (self.cfg["WX"], self.cfg["WY"], 1)
        total = 0.0
        for k in range(steps // self.tb):
            self.base += self.stride
            src, dst = (a, b) if k % 2 == 0 else (b, a)
            ev = self.knl(
                self.queue, glob, loc, src, dst, self.xbuf, np.int32(self.base), self.err,
            )  # fmt: skip
            ev.wait()
            total += (ev.profile.end - ev.profile.start) * 1e-9
        del cl
        return total

    def gave_up(self) -> bool:
        import pyopencl as cl

        e = np.zeros(1, np.int32)
        cl.enqueue_copy(self.queue, e, self.err).wait()
        return bool(e[0])


class Package:
    """The package's kernel for heat3d with ``steps`` at one configuration."""

    def __init__(self, context: Any, queue: Any, size: int, steps: int, cfg: Mapping[str, int]):
        import dataclasses

        import pyopencl as cl
        from temporal import definition

        from gtune.stencils.render import definition_kernel_of

        d = dataclasses.replace(definition("heat3d"), steps=steps)
        k = definition_kernel_of(d).with_sizes({"NX": size, "NY": size, "NZ": size})
        full = k.with_defaults(dict(cfg))
        self.queue, self.tb = queue, int(full["TB"])
        self.glob, self.loc = k.launch_sizes(full)
        opts = (
            [*k.defines(full), "-cl-nv-verbose"]
            if "NVIDIA" in str(context.devices[0].platform.name).upper()
            else list(k.defines(full))
        )
        prog = cl.Program(context, k.source).build(options=opts)
        log = prog.get_build_info(context.devices[0], cl.program_build_info.LOG)
        self.registers = registers_of(log)
        self.knl = getattr(prog, k.name)  # the definition's name (KERNEL_NAME)
        self.cfg = dict(full)

    def run(self, a: Any, b: Any, steps: int) -> float:
        total = 0.0
        for k in range(steps // self.tb):
            src, dst = (a, b) if k % 2 == 0 else (b, a)
            ev = self.knl(self.queue, self.glob, self.loc, src, dst)
            ev.wait()
            total += (ev.profile.end - ev.profile.start) * 1e-9
        return total


def result_of(
    queue: Any, runner: Any, host: np.ndarray, bufs: tuple[Any, Any], steps: int
) -> np.ndarray:
    import pyopencl as cl

    a, b = bufs
    cl.enqueue_copy(queue, a, host)
    cl.enqueue_copy(queue, b, host).wait()
    runner.run(a, b, steps)
    out = np.empty_like(host)
    launches = steps // runner.tb
    cl.enqueue_copy(queue, out, b if launches % 2 else a).wait()
    return out


def check(out: np.ndarray, want: np.ndarray) -> dict[str, Any]:
    diff = np.abs(out.astype(np.float64) - want)
    bad = int(np.count_nonzero(~(diff <= 1e-5 + 1e-4 * np.abs(want))))
    return {"bad": bad, "max_abs": float(diff.max()), "bitwise": bool(np.array_equal(out, want))}


def is_probe(label: str) -> bool:
    """A configuration wrong by design (NOX, NOWAIT): timed all the same, never a result."""
    cfg = parse(label.removeprefix("exchange ")) if label.startswith("exchange ") else {}
    return bool(cfg.get("NOX") or cfg.get("NOWAIT"))


def runners_for(
    args: argparse.Namespace, device: Any, context: Any, queue: Any, rows: dict[str, Any]
) -> dict[str, Any]:
    """The package's configurations and the exchange's that build and fit (a launch
    with more work-groups than a GPU's compute units could wait for ever): label ->
    runner; the others' errors into ``rows``."""
    import pyopencl as cl

    nvidia = "NVIDIA" in device.platform.name.upper()
    runners: dict[str, Any] = {}
    for text in args.package:
        runners[f"package {text}"] = Package(context, queue, args.size, args.steps, parse(text))
    for text in args.variant:
        label = f"exchange {text}"
        try:
            ex = Exchange(context, queue, args.size, parse(text), nvidia)
        except (cl.RuntimeError, ValueError) as exc:
            rows[label] = {"error": str(exc)[:600]}
            print(f"{label}: {str(exc)[:600]}", file=sys.stderr, flush=True)
            continue
        cus = device.max_compute_units
        if nvidia and ex.groups() > cus:
            rows[label] = {"error": f"{ex.groups()} work-groups > {cus} units"}
            continue
        runners[label] = ex
    return runners


def side_by_side(
    timed: dict[str, Any], copy: Any, queue: Any, bufs: tuple[Any, Any], args: argparse.Namespace
) -> dict[str, list[float]]:
    """Each runner's seconds per step and the float4 copy's, in alternating rounds
    (each round the median of ``args.reps`` runs)."""
    a, b = bufs
    n = args.size**3
    times: dict[str, list[float]] = {k: [] for k in [*timed, "copy4"]}
    for _ in range(args.rounds):
        for label, r in timed.items():
            times[label].append(
                statistics.median(r.run(a, b, args.steps) / args.steps for _ in range(args.reps))
            )
        one = []
        for _ in range(args.reps * 4):
            ev = copy(queue, (n // 4,), (128,), a, b)
            ev.wait()
            one.append((ev.profile.end - ev.profile.start) * 1e-9)
        times["copy4"].append(statistics.median(one))
    return times


def markdown(data: dict[str, Any]) -> str:
    lines = [f"# heat3d {data['size']}³, {data['steps']} steps, on {data['device']}", ""]
    lines += [f"float4 copy: {data['copy4_s'] * 1e6:.1f} µs", ""]
    lines += [
        "| kernel | registers | right | µs per step | of copy |",
        "| --- | --- | --- | ---: | ---: |",
    ]
    for label, row in data["rows"].items():
        if "error" in row:
            lines.append(f"| {label} | - | {row['error'][:80]} | - | - |")
            continue
        ok = row.get("after", row["first"])["bad"] == 0 and not row.get("gave_up")
        t = row.get("per_step_s")
        cells = f"{t * 1e6:.1f} | {100 * row['of_copy']:.1f} %" if t else "- | -"
        right = ("yes" if ok else "NO") + (" (probe: wrong by design)" if is_probe(label) else "")
        lines.append(f"| {label} | {row['registers']} | {right} | {cells} |")
    return "\n".join(lines) + "\n"


def main(argv: Sequence[str] | None = None) -> int:
    import pyopencl as cl
    import xhalo_probe
    from partition_probe import COPY4  # the float4 copy the other probes time

    p = xhalo_probe.probe_parser(__doc__, rounds=5, reps=5)
    p.add_argument("--steps", type=int, default=8)
    p.add_argument("--variant", action="append", default=[], metavar="TB=4,WX=16,WY=32,D=2")
    p.add_argument("--package", action="append", default=[], metavar="N=V,...")
    args = p.parse_args(argv)
    device, context, queue = xhalo_probe.open_device(args.device)
    host = np.random.default_rng(7).random(args.size**3, dtype=np.float32)
    want = heat_steps(host.reshape((args.size,) * 3), args.steps).reshape(-1)
    a = cl.Buffer(context, cl.mem_flags.READ_WRITE, size=host.nbytes)
    b = cl.Buffer(context, cl.mem_flags.READ_WRITE, size=host.nbytes)
    rows: dict[str, Any] = {}
    data: dict[str, Any] = {"device": device.name, "size": args.size, "steps": args.steps}
    data["rows"] = rows
    runners = runners_for(args, device, context, queue, rows)
    args.out.mkdir(parents=True, exist_ok=True)
    for label, r in runners.items():
        out = result_of(queue, r, host, (a, b), args.steps)
        rows[label] = {"registers": r.registers, "first": check(out, want)}
        if isinstance(r, Exchange):
            rows[label]["gave_up"] = r.gave_up()
            if r.ptx:
                name = re.sub(r"[^A-Za-z0-9]+", "_", label.removeprefix("exchange "))
                (args.out / f"{name}.ptx").write_bytes(r.ptx)
        print(label, json.dumps(rows[label]), flush=True)
    timed = {k: v for k, v in runners.items() if rows[k]["first"]["bad"] == 0 or is_probe(k)}
    copy = cl.Program(context, COPY4).build().copy4_
    times = side_by_side(timed, copy, queue, (a, b), args)
    data["copy4_s"] = t_copy = statistics.median(times["copy4"])
    for label, r in timed.items():  # after the timing, still right
        out = result_of(queue, r, host, (a, b), args.steps)
        t = statistics.median(times[label])
        rows[label].update(
            after=check(out, want), per_step_s=t, of_copy=t_copy / t, rounds_s=times[label]
        )
        if isinstance(r, Exchange):
            rows[label]["gave_up"] = r.gave_up()
    xhalo_probe.save(args.out, "exchange", data, markdown(data))
    return 0


if __name__ == "__main__":
    sys.exit(main())

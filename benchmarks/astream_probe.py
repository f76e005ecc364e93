#!/usr/bin/env python3
"""Whether loads that hold no registers let a 3D stencil keep the H200's memory busy.

The H200's one-step winners (``results/h200-limit/ncu/``) move the minimum DRAM bytes
and still leave the DRAM idle 23–28 % of the time on box27 and laplacian4 (13 % on the
copy), with twice the copy's L2 reads (their halos, through L1). The package's stream
technique halves the extra L2 reads but is bound by issuing its scalar local-memory
reads (61 instructions per output). This probe asks what a z-walk that stages each
input plane in local memory with asynchronous copies does instead:

- a work-group owns a tile of ``4*WX`` by ``WY*CY`` points of every plane in a chunk of
  ``ZC`` planes; its work-items copy each plane of the tile, with one vector either side
  in x and ``R`` rows either side in y, into a ring of ``D + 2`` planes of local memory,
  ``D`` planes ahead of the plane they compute (NVIDIA's ``cp.async.cg``, inline PTX:
  the copies hold no registers while they fly; elsewhere plain copies);
- each work-item reads its float4 column's rows from the plane once (the vector and
  its neighbours either side) and adds each row's terms into ``2R + 1`` accumulators,
  one per output plane the input plane reaches (the rows' x-sums computed once for every
  proportional profile, so a separable box costs a sum per row, not a term per point);
- after a plane, the output ``R`` planes behind is complete and stored (the interior
  boundary's rim left as it was, as the package leaves it).

The stencils are the package's own definitions (``stencils/NAME.stencil.yaml``); each
probe kernel's output is compared with the package's kernel at the given configuration
(``--config``) within float rounding, its kept rim bit for bit, and everything runs in
alternating rounds with the float4 copy: each round the median of ``--reps`` launches'
event times, the reported time the median over rounds. ``copyR`` kernels (R = 1, 2)
copy the centre point through the same walk, with an R halo loaded: the walk's own
bound. Options beside the shape (``WX``, ``WY``, ``CY``, ``ZC``, ``D``): ``CPA=0`` plain
copies through registers; ``BAR=1`` NVIDIA's ``bar.sync`` without OpenCL's fence; and,
wrong by design and timed all the same, ``NOST=1`` no stores and ``WHOLE=1`` the rim
vectors stored whole. Results: ``results/h200-limit/astream/``.

    python3 benchmarks/astream_probe.py OUT --device NVIDIA --size 512 \\
        --config 'box27:WX=32,...' --variant box27:WX=32,WY=8,CY=1,ZC=64,D=3
"""

from __future__ import annotations

import argparse
import statistics
import sys
from collections.abc import Mapping, Sequence
from fractions import Fraction
from pathlib import Path
from typing import Any

import numpy as np
import yaml

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

ROOT = Path(__file__).resolve().parents[1]
Term = tuple[int, int, int, Fraction]  # dx, dy, dz, weight

PRELUDE = r"""
#if CPA
#define STR_(x) #x
#define STR(x) STR_(x)
#define CP16(l, g) \
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16;" ::"l"(l), "l"(g) : "memory")
#define COMMIT() asm volatile("cp.async.commit_group;" ::: "memory")
#define WAITG() asm volatile("cp.async.wait_group " STR(D) ";" ::: "memory")
#else
#define CP16(l, g) (*(l) = *(g))
#define COMMIT()
#define WAITG()
#endif
#define S (D + 2)           /* the ring's planes */
#define TY (WY * CY)        /* the tile's rows */
#define PY (TY + 2 * R)     /* rows staged per plane */
#define PV (WX + 2)         /* float4 per staged row: one either side */
#define PLANE (PY * PV)
#define NP (ZC + 2 * R)     /* planes a work-group reads */
#define NXV (NX / 4)
#ifndef NOST
#define NOST 0 /* 1: no stores (a probe, wrong by design: times the walk's reads) */
#endif
#ifndef BAR
#define BAR 0 /* 1: NVIDIA's bar.sync for the barrier (inline PTX) */
#endif
#ifndef WHOLE
#define WHOLE 0 /* 1: the rim vectors stored whole (wrong by design: the rim's cost) */
#endif
"""

KERNEL = r"""
__kernel __attribute__((reqd_work_group_size(WX, WY, 1)))
void astream(__global const float4 *restrict in, __global float *restrict out)
{
    __local float4 ring[S * PLANE];
    const int lx = get_local_id(0), ly = get_local_id(1), lid = ly * WX + lx;
    const int xv0 = (int)get_group_id(0) * WX - 1;
    const int y0 = (int)get_group_id(1) * TY - R;
    const int z0 = (int)get_group_id(2) * ZC - R;
    const int x = 4 * (xv0 + 1 + lx);
#define LOAD(p)                                                                       \
    {                                                                                 \
        const int q_ = z0 + (p);                                                      \
        __local float4 *sl_ = ring + ((p) % S) * PLANE;                               \
        if ((p) < NP && q_ >= 0 && q_ < NZ)                                           \
            for (int i_ = lid; i_ < PLANE; i_ += WX * WY) {                           \
                const int y_ = y0 + i_ / PV, xv_ = xv0 + i_ % PV;                     \
                if (y_ >= 0 && y_ < NY && xv_ >= 0 && xv_ < NXV)                      \
                    CP16(sl_ + i_, in + ((size_t)q_ * NY + y_) * NXV + xv_);          \
            }                                                                         \
        COMMIT();                                                                     \
    }
    for (int p = 0; p < D; ++p)
        LOAD(p);
@DECLS@
    for (int p = 0; p < NP; ++p) {
        LOAD(p + D);
        WAITG();
#if BAR && CPA
        asm volatile("bar.sync 0;" ::: "memory"); /* the barrier alone, no fence */
#else
        barrier(CLK_LOCAL_MEM_FENCE);
#endif
        const __local float4 *pl = ring + (p % S) * PLANE + ly * CY * PV + lx + 1;
@BODY@
        const int z = z0 + p - R;
        if (p >= 2 * R && z >= R && z < NZ - R && !NOST) {
@STORES@
        }
@SHIFT@
    }
}
"""


def load_terms(name: str) -> list[Term]:
    """The definition's terms as (dx, dy, dz, weight); ``copyR`` a centre copy."""
    if name.startswith("copy"):
        return [(0, 0, 0, Fraction(1))]
    data = yaml.safe_load((ROOT / "stencils" / f"{name}.stencil.yaml").read_text())
    return [(*t["offset"], Fraction(t["coefficient"])) for t in data["terms"]]


def radius(name: str, terms: Sequence[Term]) -> int:
    if name.startswith("copy"):
        return int(name.removeprefix("copy").removeprefix("R") or 1)
    return max(max(abs(t[0]), abs(t[1]), abs(t[2])) for t in terms)


LANES = "xyzw"


def shifted(dx: int, row: str) -> str:
    """The float4 of the row's points at x + dx for the work-item's four x."""
    parts = []
    for j in range(4):
        k = j + dx
        src = f"l{row}" if k < 0 else (f"r{row}" if k > 3 else f"c{row}")
        parts.append(f"{src}.{LANES[k % 4]}")
    return "(float4)(" + ", ".join(parts) + ")" if dx else f"c{row}"


def profiles(terms: Sequence[Term]) -> dict[tuple[int, int], dict[int, Fraction]]:
    """(dy, dz) -> {dx: weight}."""
    out: dict[tuple[int, int], dict[int, Fraction]] = {}
    for dx, dy, dz, w in terms:
        out.setdefault((dy, dz), {})[dx] = w
    return out


def normal(profile: Mapping[int, Fraction]) -> tuple[tuple[tuple[int, Fraction], ...], Fraction]:
    """A profile as (its shape scaled to a first weight of 1, that weight)."""
    items = sorted((dx, w) for dx, w in profile.items() if w)
    m = items[0][1]
    return tuple((dx, w / m) for dx, w in items), m


def lit(w: Fraction) -> str:
    return repr(float(w)) + "f"


def lanes(a: str, which: range) -> str:
    """Stores of the accumulator's lanes ``which``, one by one (the kept rim's vector)."""
    return " ".join(f"o[{j}] = {a}.{LANES[j]};" for j in which)


def generate(name: str, cy: int) -> str:
    """The body, declarations, stores and shift of the probe kernel for ``name``."""
    terms = load_terms(name)
    r = radius(name, terms)
    prof = profiles(terms)
    acc = [[f"a{c}_{k}" for k in range(2 * r + 1)] for c in range(cy)]
    decls = [f"    float4 {a} = (float4)(0.0f);" for row in acc for a in row]
    body: list[str] = []
    for t in range(cy + 2 * r):  # the staged row t of the work-item's window
        uses = []  # (output row c, dz, shape, multiplier)
        for c in range(cy):
            dy = t - c - r
            for (pdy, dz), p in prof.items():
                if pdy == dy:
                    shape, m = normal(p)
                    uses.append((c, dz, shape, m))
        if not uses:
            continue
        shapes = list(dict.fromkeys(u[2] for u in uses))
        dxs = {dx for s in shapes for dx, _ in s}
        body.append(f"        const float4 c{t} = pl[{t} * PV];")
        if min(dxs) < 0:
            body.append(f"        const float4 l{t} = pl[{t} * PV - 1];")
        if max(dxs) > 0:
            body.append(f"        const float4 r{t} = pl[{t} * PV + 1];")
        for i, s in enumerate(shapes):
            expr = " + ".join(
                (f"{lit(w)} * " if w != 1 else "") + shifted(dx, str(t)) for dx, w in s
            )
            body.append(f"        const float4 s{t}_{i} = {expr};")
        for c, dz, shape, m in uses:
            a = acc[c][r - dz]
            body.append(f"        {a} = fma((float4)({lit(m)}), s{t}_{shapes.index(shape)}, {a});")
    stores = []
    for c in range(cy):
        a = acc[c][0]
        stores += [
            f"            {{ const int y = (int)get_group_id(1) * TY + ly * CY + {c};",
            "              if (y >= R && y < NY - R) {",
            "                __global float *o = out + ((size_t)z * NY + y) * NX + x;",
            f"                if (WHOLE) *(__global float4 *)o = {a};",
            f"                else if (x == 0) {{ {lanes(a, range(r, 4))} }}",
            f"                else if (x == NX - 4) {{ {lanes(a, range(4 - r))} }}",
            f"                else *(__global float4 *)o = {a}; }} }}",
        ]
    shift = []
    for row in acc:
        shift += [f"        {row[k]} = {row[k + 1]};" for k in range(2 * r)]
        shift.append(f"        {row[-1]} = (float4)(0.0f);")
    return PRELUDE + KERNEL.replace("@DECLS@", "\n".join(decls)).replace(
        "@BODY@", "\n".join(body)
    ).replace("@STORES@", "\n".join(stores)).replace("@SHIFT@", "\n".join(shift))


def parse(spec: str) -> tuple[str, dict[str, int]]:
    name, _, rest = spec.partition(":")
    return name, {k: int(v) for k, v in (e.split("=") for e in rest.split(",") if e)}


def probe_launch(
    context: Any,
    queue: Any,
    name: str,
    cfg: Mapping[str, int],
    n: int,
    nvidia: bool,
    bufs: tuple[Any, Any],
) -> tuple[Any, str]:
    """A launch of the probe kernel (returning its event) and ptxas's registers line."""
    import re

    import pyopencl as cl

    r = radius(name, load_terms(name))
    source = generate(name, cfg.get("CY", 1))
    defs = {"NX": n, "NY": n, "NZ": n, "R": r, "CPA": int(nvidia), **cfg}
    defs.setdefault("CY", 1)
    opts = [f"-D{k}={v}" for k, v in defs.items()] + (["-cl-nv-verbose"] if nvidia else [])
    prog = cl.Program(context, source).build(options=opts)
    log = prog.get_build_info(context.devices[0], cl.program_build_info.LOG)
    regs = ";".join(re.findall(r"Used \d+ registers[^\n]*", log))
    k = prog.astream
    wx, wy, zc = cfg["WX"], cfg["WY"], cfg["ZC"]
    glob = (n // 4, n // defs["CY"], n // zc)  # one work-group: WX x WY x 1
    return (lambda: k(queue, glob, (wx, wy, 1), *bufs)), regs


def package_launch(
    context: Any, queue: Any, name: str, config: Mapping[str, int], n: int, bufs: tuple[Any, Any]
) -> tuple[Any, dict[str, int]]:
    import partition_probe
    import pyopencl as cl

    kernel = partition_probe.load(name, n)
    full = kernel.with_defaults(config)
    glob, loc = kernel.launch_sizes(full)
    prog = cl.Program(context, kernel.source).build(options=list(kernel.defines(full)))
    k = prog.stencil
    return (lambda: k(queue, glob, loc, *bufs)), dict(full)


def after(queue: Any, go: Any, dst: Any, init: np.ndarray) -> np.ndarray:
    import pyopencl as cl

    cl.enqueue_copy(queue, dst, init).wait()
    go().wait()
    out = np.empty_like(init)
    cl.enqueue_copy(queue, out, dst).wait()
    return out


def agrees(got: np.ndarray, want: np.ndarray, init: np.ndarray, r: int, n: int) -> bool:
    """Within float rounding in the interior; the rim exactly as it was."""
    g, w, i0 = (a.reshape(n, n, n) for a in (got, want, init))
    inner = (slice(r, n - r),) * 3
    rim = np.ones((n, n, n), dtype=bool)
    rim[inner] = False
    return bool(np.allclose(g[inner], w[inner], rtol=1e-5, atol=1e-6)) and bool(
        np.array_equal(g[rim], i0[rim])
    )


def run(args: argparse.Namespace) -> dict[str, Any]:
    import partition_probe
    import pyopencl as cl
    import xhalo_probe

    device, context, queue = xhalo_probe.open_device(args.device)
    nvidia = "NVIDIA" in device.platform.name.upper()
    n = args.size
    rng = np.random.default_rng(7)
    host = rng.random(n**3, dtype=np.float32)
    init = rng.random(n**3, dtype=np.float32)  # the output's rim, kept
    mf = cl.mem_flags
    src = cl.Buffer(context, mf.READ_ONLY | mf.COPY_HOST_PTR, hostbuf=host)
    dst = cl.Buffer(context, mf.READ_WRITE | mf.COPY_HOST_PTR, hostbuf=init)
    launches: dict[str, Any] = {}
    info: dict[str, Any] = {}
    want: dict[str, np.ndarray] = {}
    for spec in args.config:
        name, cfg = parse(spec)
        go, full = package_launch(context, queue, name, cfg, n, (src, dst))
        label = f"{name} package"
        launches[label], info[label] = go, {"config": full}
        want[name] = after(queue, go, dst, init)
    for spec in args.variant:
        name, cfg = parse(spec)
        label = f"{name} astream " + ",".join(f"{k}={v}" for k, v in cfg.items())
        try:
            go, regs = probe_launch(context, queue, name, cfg, n, nvidia, (src, dst))
        except cl.RuntimeError as exc:
            print(f"astream_probe: {label} did not build: {str(exc)[:600]}", file=sys.stderr)
            continue
        got = after(queue, go, dst, init)
        if name.startswith("copy"):
            ref = host
        elif name in want:
            ref = want[name]
        else:
            raise SystemExit(f"astream_probe: {name} needs a --config to check against")
        r = radius(name, load_terms(name))
        ok = agrees(got, ref, init, r, n)
        info[label] = {"config": cfg, "registers": regs, "right": ok}
        print(f"{label}: registers {regs}; right {ok}", flush=True)
        if ok or cfg.get("NOST") or cfg.get("WHOLE"):
            launches[label] = go
    copy = cl.Program(context, partition_probe.COPY4).build().copy4_
    launches["copy4"] = lambda: copy(queue, (n**3 // 4,), (128,), src, dst)
    rounds = xhalo_probe.alternating_rounds(launches, args.rounds, args.reps)
    t_copy = statistics.median(rounds["copy4"])
    rows = [
        {
            "kernel": label,
            "median_s": statistics.median(r),
            "of_copy": t_copy / statistics.median(r),
            "rounds_s": r,
            **info.get(label, {}),
        }
        for label, r in rounds.items()
    ]
    wrong = [  # checked and wrong (the probes wrong by design are not checked)
        {"kernel": label, **v}
        for label, v in info.items()
        if not v.get("right", True) and not (v["config"].get("NOST") or v["config"].get("WHOLE"))
    ]
    return {"device": device.name, "size": n, "rows": rows, "wrong": wrong}


def markdown(data: Mapping[str, Any]) -> str:
    lines = [f"# Asynchronous plane copies on {data['device']}, {data['size']}³", ""]
    lines += ["| kernel | time | of copy | registers |", "| --- | ---: | ---: | --- |"]
    for r in data["rows"]:
        t, share = r["median_s"] * 1e6, 100 * r["of_copy"]
        lines.append(f"| {r['kernel']} | {t:.1f} µs | {share:.1f} % | {r.get('registers', '')} |")
    return "\n".join(lines) + "\n"


def main(argv: Sequence[str] | None = None) -> int:
    import xhalo_probe

    p = xhalo_probe.probe_parser(__doc__, rounds=5, reps=20)
    p.add_argument("--config", action="append", default=[], metavar="KERNEL:N=V,...")
    p.add_argument("--variant", action="append", default=[], metavar="KERNEL:WX=..,WY=..,")
    p.add_argument("--source", metavar="KERNEL:CY", help="print a probe kernel's source")
    args = p.parse_args(argv)
    if args.source:
        name, _, cy = args.source.partition(":")
        print(generate(name, int(cy or 1)))
        return 0
    data = run(args)
    xhalo_probe.save(args.out, "astream", data, markdown(data))
    wrong = [r["kernel"] for r in data["wrong"]]
    if wrong:
        print("astream_probe: wrong results: " + ", ".join(wrong), file=sys.stderr)
    return 1 if wrong else 0


if __name__ == "__main__":
    sys.exit(main())

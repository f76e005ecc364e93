"""The vec technique before and after its row loads (issue 27), side by side with copy.

One run, one device, in at most a few minutes: for laplacian4, heat3d and box27 (512³
by default) the template's vec technique as it is (aligned vector loads of each row at
the work-item's vector index plus a constant, each vector loaded once) and as it was
on main before
(element-aligned ``vloadn`` per term, a pair and a shuffle per shifted term, ``vstoren``),
the latter rebuilt from today's source by putting the old macros back (``OLD_VEC``). The
configurations:

- ``base``: the kernel's winner of ``gtune run``'s defaults on the H100 before the change
  (benchmarks/results/onestep/h100-sep: global for heat3d and laplacian4, stream for
  box27), the same code in both templates;
- ``vec ...``: a fixed sweep of vec configurations in both templates (``main`` and
  ``new``);
- ``search``: the hybrid spec's search of the vec technique (new template) under a short
  time budget (``--search``), as ``gtune run`` searches it.

Every configuration of the new template is verified against the kernel's reference (the
search's evaluator serves the sweep: one reference per kernel); main's are run without
verifying again (its code, measured before). Then all of them and the copy
kernel (tuned exhaustively: work-group and vector width; its best and its best scalar,
VX = 1) are re-measured side by side in alternating rounds (medians). Bandwidth counts
every array read once and written once.

Each kernel's configurations are re-measured with the copy as soon as they are known, so
a run cut short keeps every kernel it finished. Writes into OUT: ``ab.json`` (after each
phase) and ``ab.md`` (per kernel: every configuration's time, GB/s, fraction of copy).

    python3 benchmarks/vec_ab.py OUT [--size 512] [--device 0:0] [--kernels laplacian4 ...]
        [--search 40s] [--rounds 3] [--small]

``--small``: 32³, no search by default (a smoke test on PoCL).
"""

from __future__ import annotations

import argparse
import json
import platform
import sys
import time
from collections.abc import Mapping
from dataclasses import replace
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

import bandwidth as bw

from gtune.api import as_budget, tune
from gtune.kernel import TunableKernel
from gtune.measure import OpenCLEvaluator, select_device
from gtune.tuning import TuningSession

log = bw.log
KERNELS = ("laplacian4", "heat3d", "box27")

# The winners of `gtune run`'s defaults on the H100 at 512³ before the change
# (benchmarks/results/onestep/h100-sep/onestep.md).
BASE: dict[str, dict[str, int]] = {
    "heat3d": {"WX": 256, "WY": 2, "WZ": 2, "BX": 1, "VX": 1, "CX": 2, "CY": 4, "CZ": 2},
    "box27": {"WX": 64, "WY": 2, "WZ": 1, "BX": 1, "VX": 1, "CX": 8, "CY": 2, "CZ": 1}
    | {"STREAM": 1, "ZC": 128},
    "laplacian4": {"WX": 256, "WY": 2, "WZ": 1, "BX": 1, "VX": 1, "CX": 1, "CY": 2, "CZ": 8},
}

# The fixed sweep: (VX, WX, WY, CX, CY, CZ, ZC); BX = VX, WZ = 1.
SWEEP = (
    (4, 64, 2, 1, 1, 4, 1),
    (4, 128, 1, 1, 4, 1, 1),
    (2, 128, 2, 1, 2, 2, 1),
)

NEW_VEC_START = (
    "/* VX consecutive inputs starting at x + dx on row (zz, yy); x is a multiple of VX and"
)
NEW_VEC_END = "#define VECTOR_EXTRA(f, dx, dy, dz, w) VREAD_TERM(f, dx, dy, dz, w)\n"
NEW_STORE = "((__global VT *)(DST + IDX(z, y, 0)))[xv] = acc;"
OLD_STORE = "VSTORE(acc, x / VX, DST + IDX(z, y, 0));"
# main's vector macros (before the row loads), verbatim
OLD_VEC = """\
#define VUT CAT(UREAL, VX)
#define VLOAD CAT(vload, VX)
#define VSTORE CAT(vstore, VX)
#if VX == 2
#define IOTA ((VUT)(0, 1))
#elif VX == 4
#define IOTA ((VUT)(0, 1, 2, 3))
#elif VX == 8
#define IOTA ((VUT)(0, 1, 2, 3, 4, 5, 6, 7))
#else
#define IOTA ((VUT)(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15))
#endif
/* VX consecutive inputs starting at x + dx on row (zz, yy); x is a multiple of VX.
   Aligned offsets are one vector load; the others are two aligned loads and a
   composition (the shift is a compile-time constant). */
#define SHIFT(dx) ((((dx) % VX) + VX) % VX)
#define VREADP(p, zz, yy, dx)                                                            \\
    (SHIFT(dx) == 0                                                                      \\
         ? VLOAD((x + (dx)) / VX, (p) + IDX(zz, yy, 0))                                  \\
         : shuffle2(VLOAD((x + (dx)) / VX, (p) + IDX(zz, yy, 0)),                        \\
                    VLOAD((x + (dx)) / VX + 1, (p) + IDX(zz, yy, 0)),                    \\
                    IOTA + (UREAL)SHIFT(dx)))
#define VREAD(zz, yy, dx) VREADP(SRC, zz, yy, dx)
#define VECTOR_TERM(dx, dy, dz, w)                                                       \\
    {                                                                                    \\
        const VT v_ = VREAD(CLZ(z + (dz)), CLY(y + (dy)), dx);                           \\
        acc += (w) * F(v_);                                                              \\
    }
#define VECTOR_EXTRA(f, dx, dy, dz, w)                                                   \\
    {                                                                                    \\
        const VT v_ = VREADP(f, CLZ(z + (dz)), CLY(y + (dy)), dx);                       \\
        acc += (w) * F(v_);                                                              \\
    }
"""


def main_source(source: str) -> str:
    """``source`` with main's vector macros and stores put back."""
    a = source.index(NEW_VEC_START)
    b = source.index(NEW_VEC_END) + len(NEW_VEC_END)
    head = source[:a].replace("#define VLOAD CAT(vload, VX)\n#define VSTORE CAT(vstore, VX)\n", "")
    return head + OLD_VEC + source[b:].replace(NEW_STORE, OLD_STORE)


def config_of(kernel: TunableKernel, change: Mapping[str, int]) -> dict[str, int]:
    default = kernel.default_config()
    assert default is not None
    base = {"WZ": 1, "CZ": 1, "LOCAL": 0, "IMAGE": 0, "STREAM": 0, "ZC": 1, "BX": 1, "VX": 1}
    return {**default, **base, **change}


def sweep(kernel: TunableKernel, small: bool) -> dict[str, dict[str, int]]:
    """The fixed vec configurations valid for ``kernel`` (labels to configurations)."""
    n = kernel.sizes
    out: dict[str, dict[str, int]] = {}
    for vx, wx, wy, cx, cy, cz, zc in SWEEP:
        if small:
            wx, wy = min(wx, 4), min(wy, 2)
            cy, cz, zc = min(cy, 2), min(cz, 2), min(zc, 4)
        cfg = config_of(kernel, {"VX": vx, "BX": vx, "WX": wx, "WY": wy, "CX": cx})
        cfg |= {"CY": cy, "CZ": cz, "ZC": zc}
        env = kernel.env(cfg) | {"LOCAL_MEM_SIZE": 48 * 1024, "MAX_WORK_GROUP_SIZE": 1024}
        if all(c.evaluate(env) for c in kernel.constraints) and n["NX"] % (wx * vx * cx) == 0:
            out[f"vec VX{vx} WX{wx} WY{wy} CX{cx} CY{cy} CZ{cz} ZC{zc}"] = cfg
    return out


def statuses(ev: OpenCLEvaluator, configs: Mapping[str, Mapping[str, int]]) -> dict[str, str]:
    """Each configuration run once by ``ev`` (verifying or not): its status."""
    names = list(configs)
    results = ev.evaluate_batch([dict(configs[n]) for n in names])
    return {
        n: r.status.value + ("" if r.ok else f": {r.message[:160]}")
        for n, r in zip(names, results, strict=True)
    }


def table(data: Mapping[str, Any]) -> str:
    lines = [
        "# vec technique before and after its row loads, side by side with copy",
        "",
        f"Device: {data['device']}; {data['size']}; wall time {data.get('wall_s', 0):.0f} s; "
        f"medians of {data['rounds']} alternating rounds.",
        "",
        f"Copy: {data.get('copy_gbs', 0):.0f} GB/s ({data.get('copy_config')}); scalar copy "
        f"{data.get('scalar_copy_gbs', 0):.0f} GB/s.",
        "",
    ]
    for name, k in data["kernels"].items():
        lines += [
            f"## {name}",
            "",
            f"Copy in the same rounds: {k.get('copy_gbs', 0):.0f} GB/s (scalar "
            f"{k.get('scalar_copy_gbs', 0):.0f} GB/s).",
            "",
            "| configuration | template | verified | ms | GB/s | of copy |",
        ]
        lines += ["|---|---|---|---:|---:|---:|"]
        rows = sorted(k["runs"].items(), key=lambda kv: kv[1].get("time_s") or 1e9)
        for label, r in rows:
            t = r.get("time_s")
            cells = [f"{t * 1e3:.3f}", f"{r['gbs']:.0f}", f"{r['of_copy']:.1%}"] if t else ["-"] * 3
            lines.append(
                f"| {label} | {r['template']} | {r.get('status', '-')} | "
                + " | ".join(cells)
                + " |"
            )
        s = k.get("search")
        if s:
            lines += [
                "",
                f"Search (vec, new template, {s['budget']}): {s['evaluations']} "
                f"configurations, best `{s['config']}`.",
            ]
        lines.append("")
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("outdir", type=Path)
    parser.add_argument("--device", help="P:D, identity or name (default: the first GPU)")
    parser.add_argument("--size", type=int, default=512, help="cube side (default 512)")
    parser.add_argument("--kernels", nargs="+", default=list(KERNELS))
    parser.add_argument("--search", default=None, help="vec search budget (40s; --small: none)")
    parser.add_argument("--rounds", type=int, default=3, help="alternating re-measurements")
    parser.add_argument("--small", action="store_true", help="32³ (PoCL smoke test)")
    args = parser.parse_args(argv)
    started = time.monotonic()
    out: Path = args.outdir
    out.mkdir(parents=True, exist_ok=True)
    n = 32 if args.small else args.size
    search = args.search if args.search is not None else (None if args.small else "40s")
    device = select_device(args.device)
    data: dict[str, Any] = {
        "device": device.name,
        "host": platform.node(),
        "size": f"{n}x{n}x{n}",
        "rounds": args.rounds,
        "kernels": {},
    }

    def save() -> None:
        data["wall_s"] = time.monotonic() - started
        (out / "ab.json").write_text(json.dumps(data, indent=1, default=str))
        (out / "ab.md").write_text(table(data))

    sizes = {"NX": n, "NY": n, "NZ": n}
    copy = bw.copy_kernel(out / "copy", sizes)
    c = bw.copy_bandwidth(copy, device, runs=5, store=str(out / "copy.db"))
    scalar = (c["by_vx"].get(1) or {}).get("config")
    data["copy_config"] = c["config"]
    log(f"copy {c['gbs']:.0f} GB/s {c['config']}")
    save()
    copies: list[tuple[str, TunableKernel, Mapping[str, int]]] = [("copy", copy, c["config"])]
    if scalar and scalar != c["config"]:
        copies.append(("scalar copy", copy, scalar))
    for name in args.kernels:
        runs = list(copies)  # this kernel's configurations, side by side with the copies
        labels: dict[str, tuple[str, str]] = {}  # run name -> (kernel, label)
        new = bw.real_kernel(name, {}).with_sizes(sizes)
        old = replace(new, source=main_source(new.source))
        entry: dict[str, Any] = {"runs": {}}
        data["kernels"][name] = entry
        fixed = sweep(new, args.small)
        base = config_of(new, BASE[name]) if not args.small else None
        capture = bw.Capture(runs=5)
        with TuningSession(new, device, runs=5, evaluator_factory=capture) as session:
            if search:  # first, so that its evaluator (and reference) serves the sweep
                t0 = time.monotonic()
                report = tune(
                    new,
                    device=device,
                    technique="vec",
                    budget=as_budget(search),
                    session=session,
                    confirm=None,
                )
                entry["search"] = {
                    "budget": search,
                    "config": report.best_config,
                    "evaluations": report.evaluations,
                    "wall_s": time.monotonic() - t0,
                }
                if report.best_config is not None:
                    fixed["search winner"] = dict(report.best_config)
                log(f"  {name} search: {report.best_config} ({report.evaluations} configs)")
            ev = capture.inner if capture.inner is not None else OpenCLEvaluator(new, device)
            status = statuses(ev, ({"base": base} if base else {}) | fixed)
            if capture.inner is None:
                ev.close()
        for label, st in status.items():
            cfg = base if label == "base" else fixed[label]
            assert cfg is not None  # "base" is run only where there is one
            key = label if label in ("base", "search winner") else f"{label} [new]"
            entry["runs"][key] = {"template": "new", "config": cfg, "status": st}
            if st == "ok":
                runs.append((f"{name}: {key}", new, cfg))
                labels[f"{name}: {key}"] = (name, key)
            log(f"  {name} {key}: {st}")
        # main's code, as measured before: run, not verified again
        before = {k: v for k, v in fixed.items() if k != "search winner"}
        ev = OpenCLEvaluator(old, device, verify=False)
        try:
            status = statuses(ev, before)
        finally:
            ev.close()
        for label, st in status.items():
            key = f"{label} [main]"
            entry["runs"][key] = {"template": "main", "config": before[label], "status": st}
            if st == "ok":
                runs.append((f"{name}: {key}", old, before[label]))
                labels[f"{name}: {key}"] = (name, key)
        save()
        times = bw.alternate(device, runs, args.rounds)
        copy_s = min(times["copy"], times.get("scalar copy", times["copy"]))
        entry["copy_gbs"] = copy.bytes_moved() / copy_s / 1e9
        entry["scalar_copy_gbs"] = copy.bytes_moved() / times.get("scalar copy", copy_s) / 1e9
        data["copy_gbs"] = max(data.get("copy_gbs", 0.0), entry["copy_gbs"])
        data["scalar_copy_gbs"] = max(data.get("scalar_copy_gbs", 0.0), entry["scalar_copy_gbs"])
        for run, (kname, key) in labels.items():
            r = data["kernels"][kname]["runs"][key]
            r["time_s"] = times[run]
            r["gbs"] = new.bytes_moved() / times[run] / 1e9
            r["of_copy"] = r["gbs"] / entry["copy_gbs"]
        save()
    log((out / "ab.md").read_text())
    return 0


if __name__ == "__main__":
    sys.exit(main())

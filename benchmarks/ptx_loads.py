"""Loads and arithmetic per output of the template's one-step kernels, read from PTX.

Renders heat3d, laplacian4 and box27 (512³) into the template, compiles each
configuration to NVIDIA PTX with clang's OpenCL front end (``-target
nvptx64-nvidia-nvcl -O3``: LLVM, as NVIDIA's OpenCL compiler is, though not the same
one) and counts the instructions of one iteration: the whole kernel for a work-item of
one output block (global, vec), one plane of the walk for the streaming kernels (their
plane loop kept rolled, ``unroll 1``; the prologue's first plane counts once more).
Counts are static: a kernel's rim path (lane by lane, clamped) is in them too, so the
table shows the wide loads (the vector path's) apart from the scalar ones. Per output:
divided by the outputs of one iteration (VX, 1).

With ``--main``, the vec rows come from main's template as it was before the row loads
(rebuilt as benchmarks/vec_ab.py rebuilds it): clang calls ``vloadn``/``shuffle2`` as
library functions there (it has no OpenCL builtins library), so those rows show the
calls, not what a vendor's library makes of them.

    python3 benchmarks/ptx_loads.py [OUT.md] [--clang clang-15] [--main]
"""

from __future__ import annotations

import argparse
import re
import shutil
import subprocess
import sys
import tempfile
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

import bandwidth as bw

KERNELS = ("heat3d", "laplacian4", "box27")
SIZE = {"NX": 512, "NY": 512, "NZ": 512}
BASE = {"WZ": 1, "CX": 1, "CY": 1, "CZ": 1, "LOCAL": 0, "IMAGE": 0, "STREAM": 0, "ZC": 1}
CONFIGS = {
    "global (scalar)": ({"WX": 256, "WY": 1, "BX": 1, "VX": 1}, 1),
    "vec VX4": ({"WX": 64, "WY": 2, "BX": 4, "VX": 4}, 4),
    "stream (per plane)": ({"WX": 32, "WY": 4, "BX": 1, "VX": 1, "STREAM": 1, "ZC": 16}, 1),
}
ROLLED = '_Pragma("unroll 1")'
WALK = "    for (int t = 0; t < ZC + 2 * RZ; ++t) {"
PATTERN = re.compile(
    r"^\s+(ld\.global|st\.global|ld\.shared|st\.shared|fma\.rn|add\.f|mul\.f|call)[.\w]*",
    re.M,
)


def rolled(source: str) -> str:
    """The streaming walk kept rolled: the static count is one plane's."""
    return source.replace("\n" + WALK, "\n" + ROLLED + "\n" + WALK)


def count(clang: str, source: str, defines: list[str]) -> Counter[str]:
    with tempfile.TemporaryDirectory() as tmp:
        cl, ptx = Path(tmp) / "k.cl", Path(tmp) / "k.ptx"
        cl.write_text(source)
        cmd = [clang, "-cl-std=CL1.2", "-target", "nvptx64-nvidia-nvcl", "-O3", "-S"]
        cmd += ["-Xclang", "-finclude-default-header", "-o", str(ptx), str(cl), *defines]
        subprocess.run(cmd, check=True, capture_output=True, text=True)
        text = ptx.read_text()
    c: Counter[str] = Counter()
    for m in PATTERN.finditer(text):
        full = m.group(0).strip()
        kind = m.group(1)
        if kind == "call":
            continue
        wide = ".v4" in full or ".v2" in full
        c[kind + (" (vector)" if wide else "")] += 1
    # calls other than the work-item functions (library vloadn, shuffle2)
    c["calls"] = sum(
        1 for f in re.findall(r"call\.uni[^\n]*\n\s*(\w+)", text) if not f.startswith("_Z1")
    )
    return c


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("out", nargs="?", type=Path)
    parser.add_argument("--clang", default=shutil.which("clang-15") or "clang")
    parser.add_argument("--main", action="store_true", help="vec rows from main's template too")
    args = parser.parse_args(argv)
    cols = [
        "ld.global (vector)",
        "ld.global",
        "ld.shared",
        "st.shared",
        "fma.rn",
        "st.global (vector)",
        "st.global",
        "calls",
    ]
    lines = [
        "| kernel | configuration | outputs | "
        + " | ".join(cols)
        + " | per output: global loads | local reads |",
        "|---|---|---:|" + "---:|" * (len(cols) + 2),
    ]
    for name in KERNELS:
        kernel = bw.real_kernel(name, {}).with_sizes(SIZE)
        variants = [("", kernel.source)]
        if args.main:
            import vec_ab

            variants.append((" [main]", vec_ab.main_source(kernel.source)))
        for label, (change, outs) in CONFIGS.items():
            for tag, source in variants:
                if tag and change.get("VX", 1) == 1:
                    continue
                cfg = {**(kernel.default_config() or {}), **BASE, **change}
                defines = [o for o in kernel.defines(cfg) if o.startswith("-D")]
                c = count(args.clang, rolled(source), defines)
                vec = change.get("VX", 1)
                wide = c["ld.global (vector)"] * (2 if vec == 8 else 1)
                # the vector path's loads if any (the scalar ones are its rim), else the
                # scalar global loads
                loads = wide / outs if wide else c["ld.global"] / outs
                cells = [str(c[k]) for k in cols]
                lines.append(
                    f"| {name} | {label}{tag} | {outs} | "
                    + " | ".join(cells)
                    + f" | {loads:.2f} | {c['ld.shared'] / outs:.2f} |"
                )
    text = "\n".join(lines) + "\n"
    if args.out:
        args.out.write_text(text)
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())

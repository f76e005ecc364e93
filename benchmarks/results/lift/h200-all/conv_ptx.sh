#!/bin/bash
# Issue 48: where the 5x5 convolutions' instructions go at their H200 winners
# (benchmarks/results/lift/h200-all/lift_corpus.json's lifted_config), from clang's
# PTX (benchmarks/ptx_breakdown.py: the middle work-item's executed instructions per
# output; an estimate, not NVIDIA's PTX nor SASS), in the template from before the
# hoist of the primary field's coefficients (issue 48: commit 6859453's, taken from
# git) and in the package's, which reads them once a work-item, with jacobi2d (96.9 %
# of the copy) and convolution_sized (3x3, 91.6 %) beside them. No GPU: clang-15, the
# venv and the repository's history.
#   PATH=$PWD/.venv/bin:$PATH bash benchmarks/results/lift/h200-all/conv_ptx.sh OUT
# Writes OUT/defs/ (the definitions, lifted as stencils/plain/manifest.yaml lifts
# them), OUT/before.cl, OUT/{before,package}-NAME.md (ptx_breakdown's tables) and
# prints the summary.
set -eu
out=${1:?OUT}
mkdir -p "$out/defs"
git show 6859453:gtune/data/templates/stencil.cl > "$out/before.cl"
lift() { # lift NAME SOURCE SIZE FLAGS...
  local n=$1 src=$2 size=$3
  shift 3
  python3 -m gtune lift stencils/plain/$src --size "$size" "$@" -o "$out/defs/$n.stencil.yaml" \
    --force > "$out/defs/$n.log" 2>&1
}
lift convolution convolution.cl 32x32 --array input=NX+4,NY+4 --array filter=25 \
  --scalar width=NX --scalar height=NY --default WX=16,WY=16
lift conv_padded_mask conv_padded_mask.cl 32x24 --array padded=NX+4,NY+4 --array mask=25 \
  --scalar W=NX --scalar H=NY --default WX=16,WY=8
lift tile_local tile_local.cl 48x32 --default WX=16,WY=16 --scalar gain=1.5
lift blur_clamp blur_clamp.cl 32x16 --default WX=16,WY=16
lift jacobi2d jacobi2d.cl 32x32 --scalar n=NX --define DATA_TYPE=float --default WX=32,WY=8
lift convolution_sized convolution_sized.cl 32x32 --array input=NX+4,NY+4 --array filter=25 \
  --scalar fw=3 --fixed fw --scalar width=NX --scalar height=NY --default WX=16,WY=16
# the H200 winners (lift_corpus.json, h200-all)
declare -A cfg=(
  [convolution]=WX=32,WY=4,BX=4,VX=4,CX=1,CY=2,LOCAL=0,STREAM=0,ZC=1
  [conv_padded_mask]=WX=32,WY=8,BX=4,VX=1,CX=2,CY=1,LOCAL=0,STREAM=1,ZC=128
  [tile_local]=WX=32,WY=2,BX=4,VX=2,CX=1,CY=1,LOCAL=0,IMAGE=0,STREAM=1,ZC=128
  [blur_clamp]=WX=64,WY=4,BX=16,VX=16,CX=1,CY=1,LOCAL=0,IMAGE=0,STREAM=1,ZC=64,SEP=1
  [jacobi2d]=WX=128,WY=2,BX=4,VX=4,CX=1,CY=1,LOCAL=0,IMAGE=0,STREAM=0,ZC=1,RIM=1,RIN=0,BY=4
  [convolution_sized]=WX=16,WY=8,BX=4,VX=4,CX=1,CY=1,LOCAL=0,STREAM=0,ZC=1
)
names=(convolution conv_padded_mask tile_local blur_clamp convolution_sized jacobi2d)
for n in "${names[@]}"; do
  python3 benchmarks/ptx_breakdown.py "$out/defs/$n.stencil.yaml" --config "${cfg[$n]}" \
    --top 200 > "$out/package-$n.md"
  python3 benchmarks/ptx_breakdown.py "$out/defs/$n.stencil.yaml" --config "${cfg[$n]}" \
    --top 200 --template "$out/before.cl" > "$out/before-$n.md"
done
python3 - "$out" "${names[@]}" <<'PY'
import re, sys
from pathlib import Path
out, names = Path(sys.argv[1]), sys.argv[2:]
print("| kernel | template | outputs / item | instr. | fma | weight loads | global loads "
      "| integer | other | issue clk / SM |")
print("| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
for n in names:
    for t in ("before", "package"):
        text = (out / f"{t}-{n}.md").read_text()
        outs = int(re.search(r"^(\d+) outputs", text, re.M).group(1))
        total = float(re.search(r"([\d.]+) instructions / output", text).group(1))
        issue = float(re.search(r"issue ([\d.]+)", text).group(1))
        ops = {m[0]: float(m[1]) for m in re.findall(r"^\| `([^`]+)` \| ([\d.]+) \|", text, re.M)}
        fma = sum(v for k, v in ops.items() if k.startswith(("fma.", "mul.rn.f", "add.rn.f", "add.f", "mul.f")))
        const = sum(v for k, v in ops.items() if k.startswith("ld.const"))
        glob = sum(v for k, v in ops.items() if k.startswith("ld.global"))
        intg = sum(v for k, v in ops.items() if not k.startswith(("fma.", "ld.", "st.", "mov.", "bra", "ret", ".", "call"))
                   and not k.split(".")[-1] in ("f32", "f64"))
        other = total - fma - const - glob - intg
        print(f"| {n} | {t} | {outs} | {total:.2f} | {fma:.2f} | {const:.2f} | {glob:.2f} "
              f"| {intg:.2f} | {other:.2f} | {issue:.3f} |")
PY

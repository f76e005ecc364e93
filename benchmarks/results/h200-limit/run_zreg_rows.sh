#!/bin/bash
# Issue 49: the zreg-rows candidate (benchmarks/candidates/zreg_rows.patch: ZY, heat3d's
# temporal-zreg with ZREG=2 gives a work-item's CY block points adjacent rows of one
# column, so their y-neighbours inside it come from registers, not local memory)
# against the package on heat3d 512³, 8 steps: the H200's recorded TB 2 winners
# (temporal-8/: 145.7-145.9 % of copy) and taller columns, and TB 4's best (call 12:
# 105 %), each as the package runs it and with ZY=1 (template_ab.py --variant
# --variant-set ZY=1), the float4 copy in the same alternating rounds; then the PTX
# counts per point and step (ptx_tile.py: NVIDIA's compiler and ptxas's registers).
# clang's PTX at the winners' shapes: local loads per point and step 4.01 -> 3.01
# (CX 2, CY 2), 4.12 -> 2.58 (CY 4), 2.51 at CY 8.
#
# From the project root on the GPU host (about 3 minutes; under 4):
#   source .gpu-bundle/env.sh .gpu-bundle && OUT=$OUT bash benchmarks/results/h200-limit/run_zreg_rows.sh
# Smoke test on PoCL (32³; the venv's python):
#   PATH=$PWD/.venv/bin:$PATH OUT=/tmp/smoke ROUNDS=1 SCALE=10 \
#     bash benchmarks/results/h200-limit/run_zreg_rows.sh pthread 32
#
# Writes $OUT/zy/ (template_ab.md, .json), $OUT/ptx.md, logs, packed at the end into
# $OUT/zreg_rows.tar.gz beside $OUT/rc.txt. CANDIDATE (default zreg_rows) and PARAM
# (default ZY) name another candidate of the same walk and its 0/1 parameter
# (run_zreg_planes.sh: zreg_planes, ZP); the folder is then the parameter in lower case.
set -u
here=$(dirname "$0")
dev=${1:-NVIDIA}
size=${2:-512}
rounds=${ROUNDS:-5}
budget=${BUDGET:-230}
scale=${SCALE:-1}
start=$(date +%s)
mkdir -p "$OUT"
def=$here/heat3d-8.stencil.yaml
candidate=${CANDIDATE:-zreg_rows}
param=${PARAM:-ZY}
tag=$(tr '[:upper:]' '[:lower:]' <<< "$param")
patch=benchmarks/candidates/$candidate.patch

. benchmarks/step_budget.sh # left N: the seconds a step may take

k=heat3d-8
t="STREAM=1,ZREG=2,LOCAL=0,VX=1,BX=1,BY=1,BZ=1,RIM=0,RIN=0,WZ=1,CZ=1"
# ZC 32 at small sizes (the smoke test's 32³), the search's 256 on the GPU
zc=$((size >= 256 ? 256 : size))
configs=(
  --config "$k:$t,TB=2,ZU=0,ZC=$zc,WX=32,WY=16,CX=2,CY=2"
  --config "$k:$t,TB=2,ZU=1,ZC=$zc,WX=64,WY=8,CX=1,CY=4"
  --config "$k:$t,TB=2,ZU=1,ZC=$zc,WX=32,WY=8,CX=2,CY=4"
  --config "$k:$t,TB=2,ZU=1,ZC=$zc,WX=64,WY=4,CX=1,CY=8"
  --config "$k:$t,TB=4,ZU=1,ZC=32,WX=64,WY=8,CX=1,CY=4"
)
if [ "$size" -lt 64 ]; then # 32³: blocks of 32 x 16 (the configurations' x halved)
  configs=("${configs[@]//WX=64/WX=32}")
  configs=("${configs[@]//WX=32,WY=16,CX=2/WX=16,WY=16,CX=2}")
  configs=("${configs[@]//WX=32,WY=8,CX=2/WX=16,WY=8,CX=2}")
fi

timeout "$(left 170)" python3 benchmarks/template_ab.py "$OUT/$tag" \
  --variant "$patch" --variant-set "$param=1" \
  --kernels "$def" --device "$dev" --size "$size" --rounds "$rounds" --copy \
  "${configs[@]}" > "$OUT/$tag.log" 2>&1
echo "$tag rc=$? at $(($(date +%s) - start)) s" >> "$OUT/rc.txt"
rm -rf "$OUT/$tag/rendered"

ptx() { # ptx_tile.py's counts of the configurations with PARAM 0 and 1, from NVIDIA's
  # compiler with ptxas's registers on the GPU host, else clang's
  local c args=() on=()
  for c in "${configs[@]}"; do
    [ "$c" = --config ] || args+=(--config "${c#*:},$param=0" --config "${c#*:},$param=1")
  done
  case "$dev" in *NVIDIA* | *nvidia*) on=(--device "$dev") ;; esac
  timeout "$(left 40)" python3 benchmarks/ptx_tile.py --kernel stencils/heat3d.stencil.yaml \
    --size "$size" --steps 8 ${on[@]+"${on[@]}"} \
    --template "$patch" "${args[@]}"
}
ptx > "$OUT/ptx.md" 2>&1
echo "ptx rc=$? at $(($(date +%s) - start)) s" >> "$OUT/rc.txt"
echo "done at $(($(date +%s) - start)) s" >> "$OUT/rc.txt"
pack "$candidate" # the device tool brings back at most 8 files: all but rc.txt in one

#!/bin/bash
# Issue 49: the zreg-planes candidate (benchmarks/candidates/zreg_planes.patch: ZP,
# heat3d's temporal-zreg with ZREG=2 reads and writes a work-item's block points through
# one pointer per plane, constant offsets of its first point, and tests a plane's place
# in the array once per plane, not once per point) against the package on heat3d 512³,
# 8 steps: the H200's recorded TB 2 winners (temporal-8/: 145.7-151.2 % of copy),
# taller columns and TB 4's best, each as the package runs it and with ZP=1
# (template_ab.py --variant --variant-set ZP=1), the float4 copy in the same alternating
# rounds; then the PTX counts per point and step (ptx_tile.py: NVIDIA's compiler and
# ptxas's registers). clang's PTX at the winners' shapes: integer instructions per
# point and step 6.28 -> 3.65 (work-group 64x8, CY 4), 8.04 -> 3.65 (32x16, CX 2 CY 2);
# all 29.55 -> 26.65 and 31.30 -> 26.65.
#
# From the project root on the GPU host (about 3 minutes; under 4):
#   source .gpu-bundle/env.sh .gpu-bundle && OUT=$OUT bash benchmarks/results/h200-limit/run_zreg_planes.sh
# Smoke test on PoCL (32³; the venv's python):
#   PATH=$PWD/.venv/bin:$PATH OUT=/tmp/smoke ROUNDS=1 SCALE=10 \
#     bash benchmarks/results/h200-limit/run_zreg_planes.sh pthread 32
#
# Writes $OUT/zp/ (template_ab.md, .json), $OUT/ptx.md, logs, packed at the end into
# $OUT/zreg_planes.tar.gz beside $OUT/rc.txt.
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

timeout "$(left 170)" python3 benchmarks/template_ab.py "$OUT/zp" \
  --variant benchmarks/candidates/zreg_planes.patch --variant-set ZP=1 \
  --kernels "$def" --device "$dev" --size "$size" --rounds "$rounds" --copy \
  "${configs[@]}" > "$OUT/zp.log" 2>&1
echo "zp rc=$? at $(($(date +%s) - start)) s" >> "$OUT/rc.txt"
rm -rf "$OUT/zp/rendered"

ptx() { # ptx_tile.py's counts of the configurations with ZP=0 and ZP=1, from NVIDIA's
  # compiler with ptxas's registers on the GPU host, else clang's
  local c args=() on=()
  for c in "${configs[@]}"; do
    [ "$c" = --config ] || args+=(--config "${c#*:},ZP=0" --config "${c#*:},ZP=1")
  done
  case "$dev" in *NVIDIA* | *nvidia*) on=(--device "$dev") ;; esac
  timeout "$(left 40)" python3 benchmarks/ptx_tile.py --kernel stencils/heat3d.stencil.yaml \
    --size "$size" --steps 8 ${on[@]+"${on[@]}"} \
    --template benchmarks/candidates/zreg_planes.patch "${args[@]}"
}
ptx > "$OUT/ptx.md" 2>&1
echo "ptx rc=$? at $(($(date +%s) - start)) s" >> "$OUT/rc.txt"
echo "done at $(($(date +%s) - start)) s" >> "$OUT/rc.txt"
pack zreg_planes # the device tool brings back at most 8 files: all but rc.txt in one

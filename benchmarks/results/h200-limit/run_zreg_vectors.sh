#!/bin/bash
# Issue 49: the zreg-vectors candidate (benchmarks/candidates/zreg_vectors.patch: VX = BX
# = 2, 4 in temporal-zreg with ZREG=2, each block point of a work-item a vector of VX
# adjacent points, loaded, queued, shared in local memory and stored whole) against the
# package's recorded winners on heat3d 512³, 8 steps: the fixed configurations of
# benchmarks/temporal_configs/heat3d-zreg-vectors.yaml (package TB 2 and TB 4 winners,
# vector blocks at TB 2 and 4), each verified against 8 single steps, then 5 rounds
# side by side with the float4 copy; then the PTX counts per point and step
# (ptx_tile.py: NVIDIA's compiler and ptxas's registers) of the main shapes.
#
# From the project root on the GPU host (about 4 minutes; under 5):
#   source .gpu-bundle/env.sh .gpu-bundle && OUT=$OUT bash benchmarks/results/h200-limit/run_zreg_vectors.sh
# Smoke test on PoCL (64³; the venv's python):
#   PATH=$PWD/.venv/bin:$PATH OUT=/tmp/smoke ROUNDS=1 SCALE=10 \
#     bash benchmarks/results/h200-limit/run_zreg_vectors.sh pthread 64
#
# Writes $OUT/zv/ (configs.md, .csv, .json), $OUT/ptx.md, logs, packed at the end into
# $OUT/zreg_vectors.tar.gz beside $OUT/rc.txt.
set -u
dev=${1:-NVIDIA}
size=${2:-512}
rounds=${ROUNDS:-5}
budget=${BUDGET:-290}
scale=${SCALE:-1}
start=$(date +%s)
mkdir -p "$OUT"
patch=benchmarks/candidates/zreg_vectors.patch
. benchmarks/step_budget.sh # left N: the seconds a step may take

configs=benchmarks/temporal_configs/heat3d-zreg-vectors.yaml
if [ "$size" -lt 512 ]; then # the smoke test: chunks that fit (ZC 256, 512 -> a quarter, half)
  sed -e "s/ZC: 256/ZC: $((size / 4))/" -e "s/ZC: 512/ZC: $((size / 2))/" "$configs" > "$OUT/configs.yaml"
  configs=$OUT/configs.yaml
fi
timeout "$(left 230)" python3 benchmarks/temporal_configs.py "$OUT/zv" "$configs" --template "$patch" \
  --device "$dev" --size "$size" --rounds "$rounds" > "$OUT/zv.log" 2>&1
echo "zv rc=$? at $(($(date +%s) - start)) s" >> "$OUT/rc.txt"
rm -rf "$OUT/zv/kernels"

ptx() { # ptx_tile.py's counts: NVIDIA's compiler with ptxas's registers on the GPU
  # host, else clang's
  local t="STREAM=1,ZREG=2,LOCAL=0,RIM=0,RIN=0,WZ=1,CZ=1,ZU=1" on=()
  case "$dev" in *NVIDIA* | *nvidia*) on=(--device "$dev") ;; esac
  timeout "$(left 50)" python3 benchmarks/ptx_tile.py --kernel stencils/heat3d.stencil.yaml \
    --size "$size" --steps 8 ${on[@]+"${on[@]}"} --template "$patch" \
    --config "$t,TB=2,ZC=256,WX=64,WY=8,CX=1,CY=4" \
    --config "$t,TB=2,ZC=256,VX=4,BX=4,WX=16,WY=32,CY=1" \
    --config "$t,TB=2,ZC=256,VX=4,BX=4,WX=16,WY=16,CY=2" \
    --config "$t,TB=2,ZC=256,VX=4,BX=4,WX=16,WY=32,CY=2" \
    --config "$t,TB=2,ZC=256,VX=2,BX=2,WX=32,WY=16,CY=2" \
    --config "$t,TB=4,ZC=32,WX=64,WY=8,CX=1,CY=4" \
    --config "$t,TB=4,ZC=256,VX=4,BX=4,WX=16,WY=32,CY=1"
}
ptx > "$OUT/ptx.md" 2>&1
echo "ptx rc=$? at $(($(date +%s) - start)) s" >> "$OUT/rc.txt"
echo "done at $(($(date +%s) - start)) s" >> "$OUT/rc.txt"
pack zreg_vectors # the device tool brings back at most 8 files: all but rc.txt in one

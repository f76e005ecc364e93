#!/bin/bash
# The interior fast path (no test per block, blocks unrolled: ../fast-path/) on top of
# RIM=1 (candidate.cl.gz; RIM=0 is main's code) against main's template with RIM=1:
# box27 and heat3d at 512^3 in vec tiles one row high that merge rows (CY) and planes
# (CZ), so that neighbouring blocks share rows; the float4 copy in the same rounds.
#   OUT=... bash benchmarks/results/onestep/fast-rim/run.sh [DEVICE] [SIZE]
set -u
dev=${1:-NVIDIA}; size=${2:-512}
here=benchmarks/results/onestep/fast-rim
base="WZ=1,CX=1,LOCAL=0,IMAGE=0,STREAM=0,ZC=1,RIM=1"
grid=()
for wx in 64 128; do for cy in 4 8; do for cz in 2 4 8; do
  grid+=("WX=$wx,WY=1,BX=4,VX=4,CY=$cy,CZ=$cz")
done; done; done
grid+=("WX=128,WY=1,BX=2,VX=2,CY=4,CZ=4" "WX=64,WY=2,BX=4,VX=4,CY=4,CZ=4" "WX=64,WY=8,BX=4,VX=4,CY=1,CZ=2")
args=()
for k in box27 heat3d; do
  for g in "${grid[@]}"; do args+=(--config "$k:$base,$g"); done
done
python3 benchmarks/template_ab.py "$OUT/ab" --variant <(gunzip -c $here/candidate.cl.gz) \
  --kernels box27 heat3d --device "$dev" --size "$size" --rounds 3 --copy "${args[@]}"

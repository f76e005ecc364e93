#!/bin/bash
# The interior fast path (candidate.cl) against main's template, heat3d, box27 and
# laplacian4 at 512^3, in the vec/global region laplacian4's search found (BX 2, VX 2,
# CZ 8) and around it, each kernel's stream winner as a control, and the float4 copy in
# the same rounds. Run from the project root on the GPU host:
#   OUT=... bash benchmarks/results/onestep/fast-path/run.sh [DEVICE] [SIZE]
set -u
dev=${1:-NVIDIA}; size=${2:-512}
here=benchmarks/results/onestep/fast-path
base="WZ=1,CX=1,CY=1,LOCAL=0,IMAGE=0,STREAM=0,ZC=1"
grid=(
  "WX=32,WY=8,BX=2,VX=2,CZ=8" "WX=64,WY=8,BX=2,VX=2,CZ=8" "WX=64,WY=4,BX=2,VX=2,CZ=8"
  "WX=32,WY=8,BX=2,VX=2,CZ=4" "WX=32,WY=8,BX=2,VX=2,CZ=16" "WX=32,WY=8,BX=4,VX=4,CZ=8"
  "WX=64,WY=4,BX=4,VX=4,CZ=4" "WX=32,WY=8,BX=1,VX=1,CZ=8" "WX=64,WY=4,BX=1,VX=1,CZ=16"
  "WX=32,WY=4,BX=4,VX=4,CZ=16" "WX=16,WY=16,BX=4,VX=4,CZ=8" "WX=64,WY=8,BX=2,VX=2,CZ=2"
)
args=()
for k in heat3d box27 laplacian4; do
  for g in "${grid[@]}"; do args+=(--config "$k:$base,$g"); done
done
args+=(--config "heat3d:WX=128,WY=4,WZ=2,BX=1,VX=1,CX=4,CY=2,CZ=2,LOCAL=0,IMAGE=0,STREAM=0,ZC=1")
args+=(--config "heat3d:WX=16,WY=4,WZ=1,BX=1,VX=1,CX=32,CY=1,CZ=1,LOCAL=0,IMAGE=0,STREAM=1,ZC=128")
args+=(--config "box27:WX=32,WY=4,WZ=1,BX=1,VX=1,CX=16,CY=1,CZ=1,LOCAL=0,IMAGE=0,STREAM=1,ZC=128")
python3 benchmarks/template_ab.py "$OUT/ab" --variant <(gunzip -c $here/stencil.cl.gz) --kernels heat3d box27 laplacian4 \
  --device "$dev" --size "$size" --rounds 3 --copy "${args[@]}"

#!/bin/bash
# Vectors that straddle a row's rim computed whole (candidate.cl, interior boundary)
# against main's template: heat3d, laplacian4 and box27 at 512^3 in the vec region
# laplacian4's search found (BX 2, VX 2, CZ 8) and around it, jacobi2d at 8192^2, the
# float4 copy in the same rounds. From the project root on the GPU host:
#   OUT=... [CANDIDATE=candidate-v2] bash benchmarks/results/onestep/vec-edges/run.sh [DEVICE] [SIZE]
set -u
dev=${1:-NVIDIA}; size=${2:-512}
here=benchmarks/results/onestep/vec-edges
cand=${CANDIDATE:-candidate}  # candidate (V1, adopted as RIM=1), candidate-v2 or candidate-v4
out=$OUT/ab${CANDIDATE:+-${CANDIDATE#candidate-}}
base="WZ=1,CX=1,CY=1,LOCAL=0,IMAGE=0,STREAM=0,ZC=1"
grid=(
  "WX=32,WY=8,BX=2,VX=2,CZ=8" "WX=64,WY=8,BX=2,VX=2,CZ=8" "WX=64,WY=4,BX=2,VX=2,CZ=8"
  "WX=32,WY=8,BX=2,VX=2,CZ=4" "WX=32,WY=8,BX=2,VX=2,CZ=16" "WX=32,WY=8,BX=4,VX=4,CZ=8"
  "WX=64,WY=4,BX=4,VX=4,CZ=4" "WX=64,WY=8,BX=2,VX=2,CZ=2" "WX=128,WY=4,BX=2,VX=2,CZ=8"
  "WX=32,WY=16,BX=2,VX=2,CZ=8" "WX=16,WY=16,BX=2,VX=2,CZ=8" "WX=64,WY=4,BX=4,VX=4,CZ=8"
)
args=()
for k in heat3d laplacian4; do
  for g in "${grid[@]}"; do args+=(--config "$k:$base,$g"); done
done
for g in "${grid[@]:0:3}"; do args+=(--config "box27:$base,$g"); done
args+=(--config "heat3d:WX=8,WY=8,WZ=4,BX=4,VX=4,CX=2,CY=1,CZ=1,LOCAL=0,IMAGE=0,STREAM=0,ZC=1")
args+=(--config "heat3d:WX=16,WY=4,WZ=1,BX=1,VX=1,CX=32,CY=1,CZ=1,LOCAL=0,IMAGE=0,STREAM=1,ZC=128")
for g in "WX=64,WY=4,BX=4,VX=4" "WX=64,WY=8,BX=4,VX=4" "WX=128,WY=4,BX=4,VX=4" "WX=64,WY=4,BX=2,VX=2" "WX=32,WY=8,BX=8,VX=8"; do
  args+=(--config "jacobi2d:$g,CX=1,CY=1,LOCAL=0,IMAGE=0,STREAM=0,ZC=1")
done
python3 benchmarks/template_ab.py "$out" --variant <(gunzip -c $here/$cand.cl.gz) \
  --kernels heat3d laplacian4 box27 jacobi2d --device "$dev" --size "$size" --rounds 3 --copy "${args[@]}"

#!/usr/bin/env bash
# The one-step winners' PTX with L1 hints on every global load (issue 49): one device
# call on nvidia-h200, from the project root:
#   source .gpu-bundle/env.sh .gpu-bundle && bash benchmarks/results/h200-limit/ncu/l1-hints/call.sh
set -u
H8=benchmarks/results/h200-limit/heat3d-8.stencil.yaml
OUT=$OUT PROFILE=0 REPS=15 ONLY=1 CHECK_S=420 VARIANTS="ld-cg l1-last l1-first l1-none" \
  bash benchmarks/results/h200-limit/ncu/run_ncu.sh \
  --config "heat3d:WX=32,WY=8,WZ=2,BX=4,VX=4,CY=2,CZ=2,RIM=1" \
  --config "heat3d:WX=32,WY=4,WZ=2,BX=4,VX=4,CZ=2,BY=2,BZ=2,RIM=1" \
  --config "box27:WX=32,WY=2,WZ=2,BX=4,VX=4,BY=4,BZ=4,SEP=1,RIM=1,RIN=1" \
  --config "box27:WX=64,WY=2,BX=4,VX=4,CZ=2,BY=2,BZ=2,SEP=1,RIM=1,RIN=1" \
  --config "laplacian4:WX=32,WY=4,WZ=2,BX=4,VX=4,CZ=2,BY=2,BZ=2,RIM=1" \
  --config "$H8:WX=16,WY=32,BX=4,VX=4,STREAM=1,ZC=512,ZREG=2,ZU=1,ZS=1,TB=4"

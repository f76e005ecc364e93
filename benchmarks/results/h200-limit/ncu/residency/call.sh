#!/usr/bin/env bash
# The one-step winners' PTX launched with dynamic shared memory they never use, so that
# fewer blocks are resident an SM at the same code (issue 49): one device call on
# nvidia-h200, from the project root:
#   source .gpu-bundle/env.sh .gpu-bundle && bash benchmarks/results/h200-limit/ncu/residency/call.sh
# 18-227 KiB a block: at most 12, 8, 6, 5, 4, 3, 2, 1 blocks an SM (228 KiB an SM,
# 1 KiB of each block's reserved); the registers cap each kernel below that.
set -u
S=()
for k in 18 27 37 44 56 75 113 227; do S+=(--smem "$k"); done
OUT=$OUT PROFILE=0 REPS=15 ONLY=1 CHECK_S=400 VARIANTS="ld-cg" \
  bash benchmarks/results/h200-limit/ncu/run_ncu.sh "${S[@]}" \
  --config "heat3d:WX=64,WY=4,WZ=2,BX=4,VX=4,CY=2,CZ=2,RIM=1" \
  --config "box27:WX=32,WY=2,WZ=2,BX=4,VX=4,BY=4,BZ=4,SEP=1,RIM=1,RIN=1" \
  --config "box27:WX=64,WY=2,BX=4,VX=4,CZ=2,BY=2,BZ=2,SEP=1,RIM=1,RIN=1" \
  --config "laplacian4:WX=32,WY=4,WZ=2,BX=4,VX=4,CZ=2,BY=2,BZ=2,RIM=1"

#!/bin/bash
# Issue 49, one step: blocks of more planes at 32 registers. laplacian4's and heat3d's
# winners run at 32 registers (ptxas), 2,048 resident work-items per SM; their blocks of
# 2-4 planes (BZ 2, BZ 4, BY 2) load fewer vectors per output but took 34-64 registers
# (1,024-1,536 resident work-items) and were slower. run_maxreg.sh with these
# configurations and CAPS 32 and 40: each block as the package builds it and with
# `-cl-nv-maxrregcount=N`, the two winners too (capped at 32 they should not move: the
# control), the float4 copy in the same rounds, then ptxas's registers and spills each
# way (README.md, "Blocks of more planes at 32 registers").
#
# From the project root on one H200 (about 5 minutes, BUDGET 450 s):
#   source .gpu-bundle/env.sh .gpu-bundle && OUT=$OUT timeout 500 bash benchmarks/results/h200-limit/run_maxreg_blocks.sh
# Smoke test on PoCL (256^3; no register cap there, so an option it takes stands in):
#   PATH=$PWD/.venv/bin:$PATH OUT=/tmp/smoke ROUNDS=1 SCALE=10 BUDGET=2000 CAPS=1 \
#     OPTION=-cl-mad-enable bash benchmarks/results/h200-limit/run_maxreg_blocks.sh pthread 256
#
# ptxas's registers (WGs of the block's size per SM) and times as measured at 512^3 on
# the H200 (zwalk/, row_base/, h200/, h200-rin/, maxreg/):
BLOCKS=(
  # the winner: 32 (4 of 512), 0.297-0.300 ms
  laplacian4:BX=4,BY=1,BZ=1,CX=1,CY=2,CZ=2,RIM=1,RIN=1,VX=4,WX=32,WY=4,WZ=4
  # BZ 2, RIN 0: 34 (3 of 512), 0.304-0.305 ms
  laplacian4:BX=4,BY=1,BZ=2,CX=1,CY=1,CZ=4,RIM=1,RIN=0,VX=4,WX=32,WY=16,WZ=1
  # BZ 2, RIN 1: 50 (2 of 512), 0.315-0.316 ms
  laplacian4:BX=4,BY=1,BZ=2,CX=1,CY=1,CZ=4,RIM=1,RIN=1,VX=4,WX=32,WY=16,WZ=1
  # BZ 4, RIN 1: 44 (2 of 512), 0.318 ms
  laplacian4:BX=4,BY=1,BZ=4,CX=1,CY=1,CZ=2,RIM=1,RIN=1,VX=4,WX=32,WY=16,WZ=1
  # BY 2 BZ 2, RIN 0: 53 (2 of 512), 0.314-0.316 ms
  laplacian4:BX=4,BY=2,BZ=2,CX=1,CY=1,CZ=2,RIM=1,RIN=0,VX=4,WX=32,WY=16,WZ=1
  # the winner: 32 (4 of 512), 0.280-0.281 ms
  heat3d:BX=4,BY=1,BZ=1,CX=1,CY=1,CZ=4,RIM=1,RIN=1,VX=4,WX=64,WY=8,WZ=1
  # BY 2 BZ 2, RIN 0: 43 (5 of 256), 0.280 ms
  heat3d:BX=4,BY=2,BZ=2,CX=1,CY=1,CZ=2,RIM=1,RIN=0,VX=4,WX=32,WY=4,WZ=2
  # BY 2 BZ 2, RIN 0: 40 (3 of 512), 0.283-0.284 ms
  heat3d:BX=4,BY=2,BZ=2,CX=1,CY=1,CZ=2,RIM=1,RIN=0,VX=4,WX=64,WY=4,WZ=2
  # BY 2 BZ 4, RIN 0: 64 (8 of 128), 0.289-0.291 ms
  heat3d:BX=4,BY=2,BZ=4,CX=1,CY=1,CZ=1,RIM=1,RIN=0,VX=4,WX=64,WY=2,WZ=1
)
CONFIGS="${BLOCKS[*]}" CAPS=${CAPS:-32 40} BUDGET=${BUDGET:-450} STEP=${STEP:-200} \
  exec bash "$(dirname "$0")/run_maxreg.sh" "$@"

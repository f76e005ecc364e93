#!/bin/bash
# One step against copy with block merging in y and z (BY, BZ) in the vector technique
# (RIM=1) and the hybrid spec's rim step tuning RIM, BY and BZ: gtune run's defaults for
# the four real stencils and the vec technique searched alone (hybrid, no budget), the
# winners and the float4 copy re-measured side by side; then box27's vec kernel over a
# grid of blocks. From the project root on the GPU host:
#   OUT=... bash benchmarks/results/onestep/blocks/run.sh
set -u
timeout 400 python3 benchmarks/onestep.py "$OUT/onestep" --device NVIDIA --all-techniques --techniques vec
echo "rc onestep=$?"
timeout 150 python3 -m gtune --db "$OUT/sweep.db" measure stencils/box27.yaml --device NVIDIA \
  --size 512x512x512 --config "VX=4,BX=4,RIM=1,CX=1,CY=1,CZ=1" --runs 20 \
  --sweep WX=32,64 --sweep WY=4,8 --sweep BY=1,2,4 --sweep BZ=1,2,4 > "$OUT/sweep.txt" 2>&1
echo "rc sweep=$?"

#!/bin/bash
# A separable stencil's weights applied axis by axis in the vector technique (SEP=1 with
# RIM=1): box27's vec kernel over SEP x blocks, then gtune run's defaults for the four
# real stencils against the float4 copy (the hybrid spec's rim step tuning RIM, VX, BY,
# BZ and SEP). From the project root on the GPU host:
#   OUT=... bash benchmarks/results/onestep/h100-sep3d/run.sh
set -u
timeout 100 python3 -m gtune --db "$OUT/sweep.db" measure stencils/box27.yaml --device NVIDIA \
  --size 512x512x512 --config "VX=4,BX=4,RIM=1,WX=32,WY=4,CX=1,CY=1,CZ=1" --runs 20 \
  --sweep SEP=0,1 --sweep BY=1,2,4 --sweep BZ=1,2,4 > "$OUT/sweep-box27.txt" 2>&1
echo "rc sweep box27=$?"
timeout 290 python3 benchmarks/onestep.py "$OUT/onestep" --device NVIDIA
echo "rc onestep=$?"
# at most 8 files come back from the GPU host: one archive
tar czf /tmp/sep.tar.gz -C "$OUT" . && rm -rf "${OUT:?}"/* && mv /tmp/sep.tar.gz "$OUT"/

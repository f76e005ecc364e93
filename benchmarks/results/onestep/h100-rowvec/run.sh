#!/bin/bash
# One step against copy with the vector technique's row vectors (BX / VX adjacent
# vectors per row with RIM=1) and the hybrid spec's rim step tuning RIM, VX, BX, BY and
# BZ: gtune run's defaults for the four real stencils against the float4 copy; then
# box27's and laplacian4's vec kernels over grids of row vectors and blocks. From the
# project root on the GPU host:
#   OUT=... bash benchmarks/results/onestep/h100-rowvec/run.sh
set -u
timeout 330 python3 benchmarks/onestep.py "$OUT/onestep" --device NVIDIA
echo "rc onestep=$?"
timeout 110 python3 -m gtune --db "$OUT/sweep.db" measure stencils/box27.yaml --device NVIDIA \
  --size 512x512x512 --config "VX=4,RIM=1,WY=4,CX=1,CY=1,CZ=1" --runs 20 \
  --sweep WX=32,64 --sweep BX=4,8,16 --sweep BY=1,2,4 --sweep BZ=1,2,4 > "$OUT/sweep-box27.txt" 2>&1
echo "rc sweep box27=$?"
timeout 90 python3 -m gtune --db "$OUT/sweep.db" measure stencils/laplacian4.yaml --device NVIDIA \
  --size 512x512x512 --config "RIM=1,WX=32,WY=4,WZ=2,CX=1,CY=1" --runs 20 \
  --sweep VX=2,4 --sweep BX=4,8 --sweep BY=1,2 --sweep BZ=1,2 --sweep CZ=1,2 > "$OUT/sweep-laplacian4.txt" 2>&1
echo "rc sweep laplacian4=$?"
# at most 8 files come back from the GPU host: one archive
tar czf /tmp/rowvec.tar.gz -C "$OUT" . && rm -rf "${OUT:?}"/* && mv /tmp/rowvec.tar.gz "$OUT"/

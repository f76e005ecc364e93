#!/bin/bash
# One step against copy with 3D streaming through the cache (STREAM=1, VX > 1: each
# plane's rows loaded as vectors into registers, no local memory) in the template and
# the hybrid spec's x vectors step open to 3D streaming: gtune run's defaults for the
# four real stencils, and the stream technique searched alone (hybrid, no budget)
# beside them. From the project root on the GPU host:
#   OUT=... bash benchmarks/results/onestep/zstream/run.sh
set -u
timeout 550 python3 benchmarks/onestep.py "$OUT/onestep" --device NVIDIA --all-techniques --techniques stream
echo "rc=$?"

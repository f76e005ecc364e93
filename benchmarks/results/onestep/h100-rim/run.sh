#!/bin/bash
# One step against copy with the RIM parameter in the template and the hybrid spec's rim
# step: gtune run's defaults for the four real stencils, and the vec technique searched
# alone (hybrid, no budget) beside them. From the project root on the GPU host:
#   OUT=... bash benchmarks/results/onestep/h100-rim/run.sh
set -u
timeout 540 python3 benchmarks/onestep.py "$OUT/onestep" --device NVIDIA --all-techniques --techniques vec
echo "rc=$?"

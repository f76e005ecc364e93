#!/bin/bash
# gtune run's defaults for the four real stencils against the float4 copy, at main after
# the RIM commit (refitted H100 card). From the project root on the GPU host:
#   OUT=... bash benchmarks/results/onestep/h100-rim/run-final.sh
set -u
timeout 330 python3 benchmarks/onestep.py "$OUT/final" --device NVIDIA
echo "rc=$?"
